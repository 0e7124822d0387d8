/*
 * acl_rt_pool.c - evrt.acl.rt: stream-ordered memory pools
 * (acl/acl_rt_memory_soma.h) and managed memory.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 *
 * pyACL has none of these calls: they are named by its rule (the C name in
 * snake case without the aclrt prefix), and their C structs are dicts with
 * the C field names, as pyACL's own struct dicts are.  None of them blocks:
 * the pool frees and the prefetches are stream tasks.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

#include <acl/acl_rt_memory_soma.h>

/* ---------------------------------------------------------- rt: pools */

/* mem_pool_create(props) -> (pool, ret); props is the aclrtMemPoolProps
 * dict: {"allocType", "handleType", "location": {"id", "type"}, "maxSize",
 * "reserved": optional 32 bytes}. */
static PyObject *c_mem_pool_create(PyObject *m, PyObject *args) {
  PyObject *d;
  if (!PyArg_ParseTuple(args, "O:mem_pool_create", &d))
    return NULL;
  aclrtMemPoolProps p;
  uint64_t at, ht;
  memset(&p, 0, sizeof p);
  if (!check_dict(d, "props") || !dict_u64(d, "allocType", &at) ||
      !dict_u64(d, "handleType", &ht) ||
      !dict_loc(d, "location", &p.location) ||
      !dict_conv(d, "maxSize", conv_size, &p.maxSize) ||
      !dict_rsv(d, "reserved", p.reserved, sizeof p.reserved))
    return NULL;
  p.allocType = (aclrtMemAllocationType)at;
  p.handleType = (aclrtMemHandleType)ht;
  aclrtMemPool pool = NULL;
  aclError r = aclrtMemPoolCreate(&pool, &p);
  return ptr_ret(pool, r);
}

static PyObject *c_mem_pool_destroy(PyObject *m, PyObject *args) {
  void *pool;
  if (!PyArg_ParseTuple(args, "O&:mem_pool_destroy", to_ptr, &pool))
    return NULL;
  RET(aclrtMemPoolDestroy(pool));
}

/* An attribute's value: a uint32_t for the three reuse switches, a
 * uint64_t for the sizes and the threshold (the header's comments). */
union pool_value {
  uint32_t u32;
  uint64_t u64;
};

static int pool_attr_is_u32(int attr) {
  return attr >= ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
         attr <= ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

/* mem_pool_set_attr(pool, attr, value) -> ret */
static PyObject *c_mem_pool_set_attr(PyObject *m, PyObject *args) {
  void *pool;
  int attr;
  PyObject *v;
  if (!PyArg_ParseTuple(args, "O&iO:mem_pool_set_attr", to_ptr, &pool, &attr,
                        &v))
    return NULL;
  union pool_value val;
  memset(&val, 0, sizeof val);
  if (!(pool_attr_is_u32(attr) ? conv_u32(v, &val.u32) : cv_u64(v, &val.u64)))
    return NULL;
  RET(aclrtMemPoolSetAttr(pool, (aclrtMemPoolAttr)attr, &val));
}

/* mem_pool_get_attr(pool, attr) -> (value, ret) */
static PyObject *c_mem_pool_get_attr(PyObject *m, PyObject *args) {
  void *pool;
  int attr;
  if (!PyArg_ParseTuple(args, "O&i:mem_pool_get_attr", to_ptr, &pool, &attr))
    return NULL;
  union pool_value val;
  memset(&val, 0, sizeof val);
  aclError r = aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)attr, &val);
  return u64_ret(pool_attr_is_u32(attr) ? val.u32 : val.u64, r);
}

/* mem_pool_malloc_async(size, pool, stream) -> (ptr, ret) */
static PyObject *c_mem_pool_malloc_async(PyObject *m, PyObject *args) {
  size_t size;
  void *pool, *s;
  if (!PyArg_ParseTuple(args, "O&O&O&:mem_pool_malloc_async", cv_size, &size,
                        to_ptr, &pool, to_ptr, &s))
    return NULL;
  void *p = NULL;
  aclError r = aclrtMemPoolMallocAsync(&p, size, pool, s);
  return ptr_ret(p, r);
}

/* mem_pool_free_async(ptr, stream) -> ret */
static PyObject *c_mem_pool_free_async(PyObject *m, PyObject *args) {
  void *p, *s;
  if (!PyArg_ParseTuple(args, "O&O&:mem_pool_free_async", to_ptr, &p, to_ptr,
                        &s))
    return NULL;
  RET(aclrtMemPoolFreeAsync(p, s));
}

/* mem_pool_trim_to(pool, min_bytes_to_keep) -> ret */
static PyObject *c_mem_pool_trim_to(PyObject *m, PyObject *args) {
  void *pool;
  size_t keep;
  if (!PyArg_ParseTuple(args, "O&O&:mem_pool_trim_to", to_ptr, &pool, cv_size,
                        &keep))
    return NULL;
  RET(aclrtMemPoolTrimTo(pool, keep));
}

/* -------------------------------------------------- rt: managed memory */

/* mem_alloc_managed(size, flag) -> (ptr, ret); free it with free. */
static PyObject *c_mem_alloc_managed(PyObject *m, PyObject *args) {
  uint64_t size;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&I:mem_alloc_managed", cv_u64, &size, &flag))
    return NULL;
  void *p = NULL;
  aclError r = aclrtMemAllocManaged(&p, size, flag);
  return ptr_ret(p, r);
}

/* The aclrtMemManagedLocation dict: {"type", "id"} (id signed: CANN's
 * int32_t). */
static int conv_managed_loc(PyObject *o, void *slot) {
  aclrtMemManagedLocation *l = slot;
  uint64_t type;
  if (!check_dict(o, "location") || !dict_u64(o, "type", &type) ||
      !dict_conv(o, "id", conv_i32, &l->id))
    return 0;
  l->type = (aclrtMemManagedLocationType)type;
  return 1;
}

/* mem_managed_advise(ptr, size, advise, location) -> ret */
static PyObject *c_mem_managed_advise(PyObject *m, PyObject *args) {
  void *p;
  uint64_t size;
  int advise;
  aclrtMemManagedLocation loc;
  if (!PyArg_ParseTuple(args, "O&O&iO&:mem_managed_advise", to_ptr, &p,
                        cv_u64, &size, &advise, conv_managed_loc, &loc))
    return NULL;
  RET(aclrtMemManagedAdvise(p, size, (aclrtMemManagedAdviseType)advise, loc));
}

/* Every range attribute is one or more 32-bit values (a flag, a location
 * type, an id, or the accessed-by list); the data of one attribute comes
 * back as the list of its data_size // 4 values.  The buffer is zeroed and
 * at least 4 bytes, so that a data_size the call refuses still has one. */
static int32_t *attr_buffer(size_t data_size) {
  int32_t *b = PyMem_Calloc(data_size / 4 + 1, sizeof *b);
  if (!b)
    PyErr_NoMemory();
  return b;
}

static PyObject *attr_list(const int32_t *b, size_t data_size) {
  PyObject *l = PyList_New((Py_ssize_t)(data_size / 4));
  for (size_t i = 0; l && i < data_size / 4; i++) {
    PyObject *v = PyLong_FromLong(b[i]);
    if (!v) {
      Py_CLEAR(l);
      break;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  return l;
}

/* mem_managed_get_attr(attribute, ptr, size, data_size=4) -> (data, ret) */
static PyObject *c_mem_managed_get_attr(PyObject *m, PyObject *args) {
  int attr;
  void *p;
  size_t size, data_size = 4;
  if (!PyArg_ParseTuple(args, "iO&O&|O&:mem_managed_get_attr", &attr, to_ptr,
                        &p, cv_size, &size, cv_size, &data_size))
    return NULL;
  int32_t *b = attr_buffer(data_size);
  if (!b)
    return NULL;
  aclError r = aclrtMemManagedGetAttr((aclrtMemManagedRangeAttribute)attr, p,
                                      size, b, data_size);
  PyObject *l = attr_list(b, data_size);
  PyMem_Free(b);
  return l ? Py_BuildValue("(Ni)", l, (int)r) : NULL;
}

/* The attributes travel as a uint32_t array (conv_u32). */
_Static_assert(sizeof(aclrtMemManagedRangeAttribute) == sizeof(uint32_t),
               "aclrtMemManagedRangeAttribute is 32 bits");

/* mem_managed_get_attrs([attribute, ...], ptr, size, [data_size, ...])
 *   -> ([data, ...], ret): one list of values per attribute. */
static PyObject *c_mem_managed_get_attrs(PyObject *m, PyObject *args) {
  PyObject *attrs_o, *sizes_o, *res = NULL;
  void *p, *attrs = NULL, *sizes = NULL;
  int32_t **data = NULL;
  size_t size;
  Py_ssize_t n = 0, k = 0, i;
  if (!PyArg_ParseTuple(args, "OO&O&O:mem_managed_get_attrs", &attrs_o,
                        to_ptr, &p, cv_size, &size, &sizes_o) ||
      !seq_to_array(attrs_o, "attributes must be a sequence of ints",
                    sizeof(uint32_t), conv_u32, &attrs, &n) ||
      !seq_to_array(sizes_o, "data_sizes must be a sequence of ints",
                    sizeof(size_t), conv_size, &sizes, &k) ||
      !same_len(n, k, "attributes and data_sizes"))
    goto out;
  data = PyMem_Calloc((size_t)n + 1, sizeof *data);
  if (!data) {
    PyErr_NoMemory();
    goto out;
  }
  for (i = 0; i < n; i++)
    if (!(data[i] = attr_buffer(((size_t *)sizes)[i])))
      break;
  if (i == n) {
    aclError r = aclrtMemManagedGetAttrs(
        (aclrtMemManagedRangeAttribute *)attrs, (size_t)n, p, size,
        (void **)data, sizes);
    PyObject *l = PyList_New(n);
    for (i = 0; l && i < n; i++) {
      PyObject *one = attr_list(data[i], ((size_t *)sizes)[i]);
      if (!one)
        Py_CLEAR(l);
      else
        PyList_SET_ITEM(l, i, one);
    }
    res = l ? Py_BuildValue("(Ni)", l, (int)r) : NULL;
  }
out:
  for (i = 0; data && i < n; i++)
    PyMem_Free(data[i]);
  PyMem_Free(data);
  PyMem_Free(attrs);
  PyMem_Free(sizes);
  return res;
}

/* mem_managed_prefetch_async(ptr, size, location, flags, stream) -> ret */
static PyObject *c_mem_managed_prefetch_async(PyObject *m, PyObject *args) {
  void *p, *s;
  size_t size;
  aclrtMemManagedLocation loc;
  unsigned flags;
  if (!PyArg_ParseTuple(args, "O&O&O&IO&:mem_managed_prefetch_async", to_ptr,
                        &p, cv_size, &size, conv_managed_loc, &loc, &flags,
                        to_ptr, &s))
    return NULL;
  RET(aclrtMemManagedPrefetchAsync(p, size, loc, flags, s));
}

/* mem_managed_prefetch_batch_async([ptr, ...], [size, ...], [location, ...],
 * [loc_idx, ...], flags, stream) -> ret: location k applies from copy
 * loc_idx[k] on; count and numPrefetchLocs are the lists' lengths. */
static PyObject *c_mem_managed_prefetch_batch_async(PyObject *m,
                                                    PyObject *args) {
  PyObject *po, *so, *lo, *io;
  void *s, *ptrs = NULL, *sizes = NULL, *locs = NULL, *idx = NULL;
  uint64_t flags;
  Py_ssize_t n, ns, nl, ni;
  PyObject *res = NULL;
  if (!PyArg_ParseTuple(args, "OOOOO&O&:mem_managed_prefetch_batch_async",
                        &po, &so, &lo, &io, cv_u64, &flags, to_ptr, &s))
    return NULL;
  if (seq_to_array(po, "ptrs must be a sequence of ints", sizeof(void *),
                   conv_ptr, &ptrs, &n) &&
      seq_to_array(so, "sizes must be a sequence of ints", sizeof(size_t),
                   conv_size, &sizes, &ns) &&
      seq_to_array(lo, "prefetch_locs must be a sequence of dicts",
                   sizeof(aclrtMemManagedLocation), conv_managed_loc, &locs,
                   &nl) &&
      seq_to_array(io, "prefetch_loc_idxs must be a sequence of ints",
                   sizeof(size_t), conv_size, &idx, &ni) &&
      same_len(n, ns, "ptrs and sizes") &&
      same_len(nl, ni, "prefetch_locs and prefetch_loc_idxs"))
    res = PyLong_FromLong((long)aclrtMemManagedPrefetchBatchAsync(
        (const void **)ptrs, sizes, (size_t)n, locs, idx, (size_t)nl, flags,
        s));
  PyMem_Free(ptrs);
  PyMem_Free(sizes);
  PyMem_Free(locs);
  PyMem_Free(idx);
  return res;
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_pool_methods[] = {
    MV(mem_pool_create, c_mem_pool_create),
    MV(mem_pool_destroy, c_mem_pool_destroy),
    MV(mem_pool_set_attr, c_mem_pool_set_attr),
    MV(mem_pool_get_attr, c_mem_pool_get_attr),
    MV(mem_pool_malloc_async, c_mem_pool_malloc_async),
    MV(mem_pool_free_async, c_mem_pool_free_async),
    MV(mem_pool_trim_to, c_mem_pool_trim_to),
    MV(mem_alloc_managed, c_mem_alloc_managed),
    MV(mem_managed_advise, c_mem_managed_advise),
    MV(mem_managed_get_attr, c_mem_managed_get_attr),
    MV(mem_managed_get_attrs, c_mem_managed_get_attrs),
    MV(mem_managed_prefetch_async, c_mem_managed_prefetch_async),
    MV(mem_managed_prefetch_batch_async, c_mem_managed_prefetch_batch_async),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
