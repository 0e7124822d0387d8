/*
 * acl_rt_memory.c - evrt.acl.rt: memory (allocation, copies, fills,
 * queries).
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ----------------------------------------------------- rt: memory */

static PyObject *r_malloc(PyObject *m, PyObject *args) {
  Py_ssize_t size;
  int policy = ACL_MEM_MALLOC_HUGE_FIRST;
  if (!PyArg_ParseTuple(args, "n|i:malloc", &size, &policy))
    return NULL;
  if (size < 0)
    return ptr_ret(NULL, ACL_ERROR_INVALID_PARAM);
  void *p = NULL;
  aclError r = aclrtMalloc(&p, (size_t)size, (aclrtMemMallocPolicy)policy);
  return ptr_ret(p, r);
}

static PyObject *r_malloc_host(PyObject *m, PyObject *args) {
  Py_ssize_t size;
  if (!PyArg_ParseTuple(args, "n:malloc_host", &size))
    return NULL;
  if (size < 0)
    return ptr_ret(NULL, ACL_ERROR_INVALID_PARAM);
  void *p = NULL;
  aclError r = aclrtMallocHost(&p, (size_t)size);
  return ptr_ret(p, r);
}

static PyObject *r_free(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:free", to_ptr, &p))
    return NULL;
  RET(aclrtFree(p));
}

static PyObject *r_free_host(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:free_host", to_ptr, &p))
    return NULL;
  RET(aclrtFreeHost(p));
}

static PyObject *r_memcpy(PyObject *m, PyObject *args) {
  void *dst, *src;
  Py_ssize_t dmax, count;
  int kind;
  if (!PyArg_ParseTuple(args, "O&nO&ni:memcpy", to_ptr, &dst, &dmax, to_ptr,
                        &src, &count, &kind))
    return NULL;
  if (dmax < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy(dst, (size_t)dmax, src, (size_t)count,
                  (aclrtMemcpyKind)kind);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_memset(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t max, count;
  int value;
  if (!PyArg_ParseTuple(args, "O&nin:memset", to_ptr, &p, &max, &value,
                        &count))
    return NULL;
  if (max < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemset(p, (size_t)max, value, (size_t)count));
}

static PyObject *r_memcpy_async(PyObject *m, PyObject *args) {
  void *dst, *src, *s;
  Py_ssize_t dmax, count;
  int kind;
  if (!PyArg_ParseTuple(args, "O&nO&niO&:memcpy_async", to_ptr, &dst, &dmax,
                        to_ptr, &src, &count, &kind, to_ptr, &s))
    return NULL;
  if (dmax < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemcpyAsync(dst, (size_t)dmax, src, (size_t)count,
                       (aclrtMemcpyKind)kind, s));
}

static PyObject *r_memset_async(PyObject *m, PyObject *args) {
  void *p, *s;
  Py_ssize_t max, count;
  int value;
  if (!PyArg_ParseTuple(args, "O&ninO&:memset_async", to_ptr, &p, &max,
                        &value, &count, to_ptr, &s))
    return NULL;
  if (max < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemsetAsync(p, (size_t)max, value, (size_t)count, s));
}

/* memset_d32(ptr, mem_size, value, count) and memset_d32_async(...,
 * stream) -> ret: count 32-bit words of value (not in pyACL; named by its
 * rule). */
static PyObject *c_memset_d32(PyObject *m, PyObject *args) {
  void *p;
  size_t size, count;
  unsigned value;
  if (!PyArg_ParseTuple(args, "O&O&IO&:memset_d32", to_ptr, &p, cv_size,
                        &size, &value, cv_size, &count))
    return NULL;
  RET(aclrtMemsetD32(p, size, value, count));
}

static PyObject *c_memset_d32_async(PyObject *m, PyObject *args) {
  void *p, *s;
  size_t size, count;
  unsigned value;
  if (!PyArg_ParseTuple(args, "O&O&IO&O&:memset_d32_async", to_ptr, &p,
                        cv_size, &size, &value, cv_size, &count, to_ptr, &s))
    return NULL;
  RET(aclrtMemsetD32Async(p, size, value, count, s));
}

/* ------------------------------------------------------- rt: memory */

#define MALLOC_POLICY_FN(pyname, cfn)                                          \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    size_t size;                                                               \
    int policy;                                                                \
    if (!PyArg_ParseTuple(args, "O&i:" #pyname, cv_size, &size, &policy))      \
      return NULL;                                                             \
    void *p = NULL;                                                            \
    aclError r = cfn(&p, size, (aclrtMemMallocPolicy)policy);                  \
    return ptr_ret(p, r);                                                      \
  }
MALLOC_POLICY_FN(malloc_cached, aclrtMallocCached)
MALLOC_POLICY_FN(malloc_align32, aclrtMallocAlign32)
#undef MALLOC_POLICY_FN

#define PTR_SIZE_FN(pyname, cfn)                                               \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *p;                                                                   \
    size_t size;                                                               \
    if (!PyArg_ParseTuple(args, "O&O&:" #pyname, to_ptr, &p, cv_size, &size))  \
      return NULL;                                                             \
    RET(cfn(p, size));                                                         \
  }
PTR_SIZE_FN(mem_flush, aclrtMemFlush)
PTR_SIZE_FN(mem_invalidate, aclrtMemInvalidate)
#undef PTR_SIZE_FN

/* memcpy2d(dst, dpitch, src, spitch, width, height, kind) -> ret */
static PyObject *c_memcpy2d(PyObject *m, PyObject *args) {
  void *dst, *src;
  size_t dp, sp, w, h;
  int kind;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&i:memcpy2d", to_ptr, &dst,
                        cv_size, &dp, to_ptr, &src, cv_size, &sp, cv_size,
                        &w, cv_size, &h, &kind))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy2d(dst, dp, src, sp, w, h, (aclrtMemcpyKind)kind);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *c_memcpy2d_async(PyObject *m, PyObject *args) {
  void *dst, *src, *s;
  size_t dp, sp, w, h;
  int kind;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&iO&:memcpy2d_async", to_ptr, &dst,
                        cv_size, &dp, to_ptr, &src, cv_size, &sp, cv_size,
                        &w, cv_size, &h, &kind, to_ptr, &s))
    return NULL;
  aclError r;
  /* Plain host memory makes the call wait (CANN's rule). */
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy2dAsync(dst, dp, src, sp, w, h, (aclrtMemcpyKind)kind, s);
  Py_END_ALLOW_THREADS
  RET(r);
}

/* The aclrtMallocConfig dict of pyACL: {} for NULL, or {"numAttrs": n,
 * "attrs": [{"attr": a, "value": {"moduleId" | "deviceId" | "rsv": ...}}]}
 * ("vaFlag" too, the union member CANN added).  Fills cfg->attrs (caller
 * frees); returns 0 with an exception set on a malformed dict. */
static int malloc_cfg(PyObject *d, aclrtMallocConfig *cfg, int *is_null) {
  *is_null = 0;
  cfg->attrs = NULL;
  cfg->numAttrs = 0;
  if (!check_dict(d, "cfg"))
    return 0;
  if (PyDict_Size(d) == 0) {
    *is_null = 1;
    return 1;
  }
  uint64_t n;
  if (!dict_u64(d, "numAttrs", &n))
    return 0;
  PyObject *l = PyDict_GetItemString(d, "attrs");
  if (!l || !PyList_Check(l)) {
    PyErr_SetString(PyExc_KeyError, "'attrs' must be a list");
    return 0;
  }
  if ((uint64_t)PyList_GET_SIZE(l) != n) {
    PyErr_SetString(PyExc_KeyError,
                    "numAttrs does not match the length of attrs");
    return 0;
  }
  cfg->numAttrs = (size_t)n;
  cfg->attrs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *cfg->attrs);
  if (!cfg->attrs) {
    PyErr_NoMemory();
    return 0;
  }
  for (size_t i = 0; i < (size_t)n; i++) {
    PyObject *a = PyList_GET_ITEM(l, (Py_ssize_t)i);
    uint64_t kind, v;
    if (!check_dict(a, "attrs[i]") || !dict_u64(a, "attr", &kind))
      return 0;
    PyObject *val = PyDict_GetItemString(a, "value");
    if (!val || !check_dict(val, "attrs[i]['value']"))
      return 0;
    cfg->attrs[i].attr = (aclrtMallocAttrType)kind;
    if (PyDict_GetItemString(val, "moduleId")) {
      if (!dict_u64(val, "moduleId", &v))
        return 0;
      cfg->attrs[i].value.moduleId = (uint16_t)v;
    } else if (PyDict_GetItemString(val, "deviceId")) {
      if (!dict_u64(val, "deviceId", &v))
        return 0;
      cfg->attrs[i].value.deviceId = (uint32_t)v;
    } else if (PyDict_GetItemString(val, "vaFlag")) {
      if (!dict_u64(val, "vaFlag", &v))
        return 0;
      cfg->attrs[i].value.vaFlag = (uint32_t)v;
    } else if (PyDict_GetItemString(val, "rsv")) {
      PyObject *rsv = PyDict_GetItemString(val, "rsv");
      if (!PyList_Check(rsv)) {
        PyErr_SetString(PyExc_TypeError, "'rsv' must be a list");
        return 0;
      }
      Py_ssize_t k = PyList_GET_SIZE(rsv);
      for (Py_ssize_t j = 0; j < k && j < 8; j++) {
        if (!cv_u64(PyList_GET_ITEM(rsv, j), &v))
          return 0;
        cfg->attrs[i].value.rsv[j] = (uint8_t)v;
      }
    } else {
      PyErr_SetString(PyExc_KeyError,
                      "no valid key found in aclrtMallocAttrValue");
      return 0;
    }
  }
  return 1;
}

#define MALLOC_CFG_FN(pyname, cfn)                                             \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    size_t size;                                                               \
    int policy;                                                                \
    PyObject *d;                                                               \
    if (!PyArg_ParseTuple(args, "O&iO:" #pyname, cv_size, &size, &policy, &d)) \
      return NULL;                                                             \
    aclrtMallocConfig cfg;                                                     \
    int is_null;                                                               \
    if (!malloc_cfg(d, &cfg, &is_null)) {                                      \
      PyMem_Free(cfg.attrs);                                                   \
      return NULL;                                                             \
    }                                                                          \
    void *p = NULL;                                                            \
    aclError r = cfn(&p, size, (aclrtMemMallocPolicy)policy,                   \
                     is_null ? NULL : &cfg);                                   \
    PyMem_Free(cfg.attrs);                                                     \
    return ptr_ret(p, r);                                                      \
  }
MALLOC_CFG_FN(malloc_with_cfg, aclrtMallocWithCfg)
MALLOC_CFG_FN(malloc_for_task_scheduler, aclrtMallocForTaskScheduler)
#undef MALLOC_CFG_FN

/* malloc_host_with_cfg(size, cfg) -> (ptr, ret) */
static PyObject *c_malloc_host_with_cfg(PyObject *m, PyObject *args) {
  uint64_t size;
  PyObject *d;
  if (!PyArg_ParseTuple(args, "O&O:malloc_host_with_cfg", cv_u64, &size, &d))
    return NULL;
  aclrtMallocConfig cfg;
  int is_null;
  if (!malloc_cfg(d, &cfg, &is_null)) {
    PyMem_Free(cfg.attrs);
    return NULL;
  }
  void *p = NULL;
  aclError r = aclrtMallocHostWithCfg(&p, size, is_null ? NULL : &cfg);
  PyMem_Free(cfg.attrs);
  return ptr_ret(p, r);
}

/* pointer_get_attributes(ptr) -> ({"location": {"id", "type"},
 * "page_size", "rsv": [4 ints]}, ret) */
static PyObject *c_pointer_get_attributes(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:pointer_get_attributes", to_ptr, &p))
    return NULL;
  aclrtPtrAttributes a;
  memset(&a, 0, sizeof a);
  aclError r = aclrtPointerGetAttributes(p, &a);
  PyObject *d = PyDict_New();
  if (!d || !dict_put(d, "location", loc_dict(&a.location)) ||
      !dict_put(d, "page_size", PyLong_FromUnsignedLong(a.pageSize)) ||
      !dict_put(d, "rsv", Py_BuildValue("[IIII]", a.rsv[0], a.rsv[1],
                                        a.rsv[2], a.rsv[3]))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_host_register(PyObject *m, PyObject *args) {
  void *p;
  uint64_t size;
  int type;
  if (!PyArg_ParseTuple(args, "O&O&i:host_register", to_ptr, &p, cv_u64,
                        &size, &type))
    return NULL;
  void *dev = NULL;
  aclError r = aclrtHostRegister(p, size, (aclrtHostRegisterType)type, &dev);
  return ptr_ret(dev, r);
}

static PyObject *c_host_register_v2(PyObject *m, PyObject *args) {
  void *p;
  uint64_t size;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&O&I:host_register_v2", to_ptr, &p, cv_u64,
                        &size, &flag))
    return NULL;
  RET(aclrtHostRegisterV2(p, size, flag));
}

static PyObject *c_host_get_device_pointer(PyObject *m, PyObject *args) {
  void *p;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&I:host_get_device_pointer", to_ptr, &p,
                        &flag))
    return NULL;
  void *dev = NULL;
  aclError r = aclrtHostGetDevicePointer(p, &dev, flag);
  return ptr_ret(dev, r);
}

static PyObject *c_host_unregister(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:host_unregister", to_ptr, &p))
    return NULL;
  RET(aclrtHostUnregister(p));
}

static PyObject *c_get_memcpy_desc_size(PyObject *m, PyObject *args) {
  int kind;
  if (!PyArg_ParseTuple(args, "i:get_memcpy_desc_size", &kind))
    return NULL;
  size_t n = 0;
  aclError r = aclrtGetMemcpyDescSize((aclrtMemcpyKind)kind, &n);
  return Py_BuildValue("(ni)", (Py_ssize_t)n, (int)r);
}

/* set_memcpy_desc(desc, kind, src, dst, count, config) -> (desc, ret) */
static PyObject *c_set_memcpy_desc(PyObject *m, PyObject *args) {
  void *desc, *src, *dst, *config;
  int kind;
  size_t count;
  if (!PyArg_ParseTuple(args, "O&iO&O&O&O&:set_memcpy_desc", to_ptr, &desc,
                        &kind, to_ptr, &src, to_ptr, &dst, cv_size, &count,
                        to_ptr, &config))
    return NULL;
  aclError r =
      aclrtSetMemcpyDesc(desc, (aclrtMemcpyKind)kind, src, dst, count, config);
  return ptr_ret(desc, r);
}

static PyObject *c_memcpy_async_with_desc(PyObject *m, PyObject *args) {
  void *desc, *s;
  int kind;
  if (!PyArg_ParseTuple(args, "O&iO&:memcpy_async_with_desc", to_ptr, &desc,
                        &kind, to_ptr, &s))
    return NULL;
  RET(aclrtMemcpyAsyncWithDesc(desc, (aclrtMemcpyKind)kind, s));
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
/* free_with_dev_sync(ptr) / free_host_with_dev_sync(ptr) -> ret: they
 * synchronize the block's device first, so the GIL is released (a Python
 * host function queued there must be able to run). */
#define FREE_SYNC_FN(pyname, cfn)                                              \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *p;                                                                   \
    if (!PyArg_ParseTuple(args, "O&:" #pyname, to_ptr, &p))                    \
      return NULL;                                                             \
    aclError r;                                                                \
    Py_BEGIN_ALLOW_THREADS                                                     \
    r = cfn(p);                                                                \
    Py_END_ALLOW_THREADS                                                       \
    RET(r);                                                                    \
  }
FREE_SYNC_FN(free_with_dev_sync, aclrtFreeWithDevSync)
FREE_SYNC_FN(free_host_with_dev_sync, aclrtFreeHostWithDevSync)
#undef FREE_SYNC_FN

/* mem_get_address_range(ptr) -> (base, size, ret): the reserved range
 * holding ptr. */
static PyObject *c_mem_get_address_range(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:mem_get_address_range", to_ptr, &p))
    return NULL;
  void *base = NULL;
  size_t size = 0;
  aclError r = aclrtMemGetAddressRange(p, &base, &size);
  return Py_BuildValue("(Nni)", PyLong_FromVoidPtr(base), (Py_ssize_t)size,
                       (int)r);
}

/* check_mem_type(addr_list, mem_type, reserve=0) -> (check_result, ret):
 * addr_list is a sequence of addresses (its length is the C call's size),
 * mem_type a set of ACL_RT_MEM_TYPE_* bits; check_result is 1 when every
 * address is memory of one of those kinds. */
static PyObject *c_check_mem_type(PyObject *m, PyObject *args) {
  PyObject *addrs_o;
  unsigned mem_type, reserve = 0;
  if (!PyArg_ParseTuple(args, "OI|I:check_mem_type", &addrs_o, &mem_type,
                        &reserve))
    return NULL;
  void *addrs;
  Py_ssize_t n;
  if (!seq_to_array(addrs_o, "addr_list must be a sequence of ints",
                    sizeof(void *), conv_ptr, &addrs, &n))
    return NULL;
  if (n > (Py_ssize_t)UINT32_MAX) {
    PyMem_Free(addrs);
    PyErr_SetString(PyExc_OverflowError, "addr_list is too long");
    return NULL;
  }
  uint32_t result = 0;
  aclError r = aclrtCheckMemType((void **)addrs, (uint32_t)n, mem_type,
                                 &result, reserve);
  PyMem_Free(addrs);
  return Py_BuildValue("(Ii)", (unsigned)result, (int)r);
}

PyMethodDef evrtpy_acl_rt_memory_methods[] = {
    MV(malloc, r_malloc),
    MV(malloc_host, r_malloc_host),
    MV(free, r_free),
    MV(free_host, r_free_host),
    MV(memcpy, r_memcpy),
    MV(memset, r_memset),
    MV(memcpy_async, r_memcpy_async),
    MV(memset_async, r_memset_async),
    MV(memset_d32, c_memset_d32),
    MV(memset_d32_async, c_memset_d32_async),
    MV(malloc_cached, c_malloc_cached),
    MV(malloc_align32, c_malloc_align32),
    MV(mem_flush, c_mem_flush),
    MV(mem_invalidate, c_mem_invalidate),
    MV(memcpy2d, c_memcpy2d),
    MV(memcpy2d_async, c_memcpy2d_async),
    MV(malloc_with_cfg, c_malloc_with_cfg),
    MV(malloc_for_task_scheduler, c_malloc_for_task_scheduler),
    MV(malloc_host_with_cfg, c_malloc_host_with_cfg),
    MV(pointer_get_attributes, c_pointer_get_attributes),
    MV(host_register, c_host_register),
    MV(host_register_v2, c_host_register_v2),
    MV(host_get_device_pointer, c_host_get_device_pointer),
    MV(host_unregister, c_host_unregister),
    MV(get_memcpy_desc_size, c_get_memcpy_desc_size),
    MV(set_memcpy_desc, c_set_memcpy_desc),
    MV(memcpy_async_with_desc, c_memcpy_async_with_desc),
    MV(check_mem_type, c_check_mem_type),
    MV(mem_get_address_range, c_mem_get_address_range),
    MV(free_with_dev_sync, c_free_with_dev_sync),
    MV(free_host_with_dev_sync, c_free_host_with_dev_sync),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
