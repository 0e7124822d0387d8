/*
 * acl_rt_vmm.c - evrt.acl.rt: virtual and physical memory.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* --------------------------------------- rt: virtual / physical memory */

/* The aclrtPhysicalMemProp dict of pyACL: "handleType", "allocationType",
 * "memAttr", "location": {"id", "type"}, "reserve". */
static int phys_prop(PyObject *d, aclrtPhysicalMemProp *p) {
  uint64_t ht, at, ma, rs;
  memset(p, 0, sizeof *p);
  if (!check_dict(d, "prop") || !dict_u64(d, "handleType", &ht) ||
      !dict_u64(d, "allocationType", &at) || !dict_u64(d, "memAttr", &ma) ||
      !dict_loc(d, "location", &p->location) || !dict_u64(d, "reserve", &rs))
    return 0;
  p->handleType = (aclrtMemHandleType)ht;
  p->allocationType = (aclrtMemAllocationType)at;
  p->memAttr = (aclrtMemAttr)ma;
  p->reserve = rs;
  return 1;
}

/* reserve_mem_address(size, alignment, expect_ptr, flags) -> (va, ret), and
 * reserve_mem_address_no_uc_memory with the same arguments: fmt is the
 * PyArg format (it names the function), fn the call. */
static PyObject *reserve_with(PyObject *args, const char *fmt,
                              aclError (*fn)(void **, size_t, size_t, void *,
                                             uint64_t)) {
  size_t size, align;
  void *expect;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, fmt, cv_size, &size, cv_size, &align, to_ptr,
                        &expect, cv_u64, &flags))
    return NULL;
  void *p = NULL;
  aclError r = fn(&p, size, align, expect, flags);
  return ptr_ret(p, r);
}

static PyObject *c_reserve_mem_address(PyObject *m, PyObject *args) {
  return reserve_with(args, "O&O&O&O&:reserve_mem_address",
                      aclrtReserveMemAddress);
}

static PyObject *c_reserve_mem_address_no_uc_memory(PyObject *m,
                                                    PyObject *args) {
  return reserve_with(args, "O&O&O&O&:reserve_mem_address_no_uc_memory",
                      aclrtReserveMemAddressNoUCMemory);
}

/* mem_retain_allocation_handle(va) -> (handle, ret): the physical
 * allocation mapped at va (free it with free_physical). */
static PyObject *c_mem_retain_allocation_handle(PyObject *m, PyObject *args) {
  void *va;
  if (!PyArg_ParseTuple(args, "O&:mem_retain_allocation_handle", to_ptr, &va))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMemRetainAllocationHandle(va, &h);
  return ptr_ret(h, r);
}

static PyObject *c_release_mem_address(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:release_mem_address", to_ptr, &p))
    return NULL;
  RET(aclrtReleaseMemAddress(p));
}

/* malloc_physical(size, prop, flags) -> (handle, ret) */
static PyObject *c_malloc_physical(PyObject *m, PyObject *args) {
  size_t size;
  PyObject *d;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&OO&:malloc_physical", cv_size, &size, &d,
                        cv_u64, &flags))
    return NULL;
  aclrtPhysicalMemProp prop;
  if (!phys_prop(d, &prop))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMallocPhysical(&h, size, &prop, flags);
  return ptr_ret(h, r);
}

static PyObject *c_free_physical(PyObject *m, PyObject *args) {
  void *h;
  if (!PyArg_ParseTuple(args, "O&:free_physical", to_ptr, &h))
    return NULL;
  RET(aclrtFreePhysical(h));
}

/* map_mem(virt, size, offset, handle, flags) -> ret, and mem_map_no_access
 * with the same arguments (fmt names the function, fn is the call). */
static PyObject *map_with(PyObject *args, const char *fmt,
                          aclError (*fn)(void *, size_t, size_t,
                                         aclrtDrvMemHandle, uint64_t)) {
  void *v, *h;
  size_t size, off;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, fmt, to_ptr, &v, cv_size, &size, cv_size, &off,
                        to_ptr, &h, cv_u64, &flags))
    return NULL;
  RET(fn(v, size, off, h, flags));
}

static PyObject *c_map_mem(PyObject *m, PyObject *args) {
  return map_with(args, "O&O&O&O&O&:map_mem", aclrtMapMem);
}

static PyObject *c_mem_map_no_access(PyObject *m, PyObject *args) {
  return map_with(args, "O&O&O&O&O&:mem_map_no_access", aclrtMemMapNoAccess);
}

static PyObject *c_unmap_mem(PyObject *m, PyObject *args) {
  void *v;
  if (!PyArg_ParseTuple(args, "O&:unmap_mem", to_ptr, &v))
    return NULL;
  RET(aclrtUnmapMem(v));
}

/* mem_export_to_shareable_handle(handle, handle_type, flags)
 *   -> (shareable_handle, ret) */
static PyObject *c_mem_export_to_shareable_handle(PyObject *m,
                                                  PyObject *args) {
  void *h;
  int type;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&iO&:mem_export_to_shareable_handle", to_ptr,
                        &h, &type, cv_u64, &flags))
    return NULL;
  uint64_t sh = 0;
  aclError r =
      aclrtMemExportToShareableHandle(h, (aclrtMemHandleType)type, flags, &sh);
  return u64_ret(sh, r);
}

static PyObject *c_device_get_bare_tgid(PyObject *m, PyObject *unused) {
  int32_t pid = 0;
  aclError r = aclrtDeviceGetBareTgid(&pid);
  return Py_BuildValue("(ii)", (int)pid, (int)r);
}

/* mem_set_pid_to_shareable_handle(shareable_handle, [pid, ...]) -> ret */
static PyObject *c_mem_set_pid_to_shareable_handle(PyObject *m,
                                                   PyObject *args) {
  uint64_t sh;
  PyObject *l;
  int32_t *pids;
  size_t n;
  if (!PyArg_ParseTuple(args, "O&O!:mem_set_pid_to_shareable_handle", cv_u64,
                        &sh, &PyList_Type, &l) ||
      !to_pids(l, &pids, &n))
    return NULL;
  aclError r = aclrtMemSetPidToShareableHandle(sh, pids, n);
  PyMem_Free(pids);
  RET(r);
}

/* mem_import_from_shareable_handle(shareable_handle, device_id)
 *   -> (handle, ret) */
static PyObject *c_mem_import_from_shareable_handle(PyObject *m,
                                                    PyObject *args) {
  uint64_t sh;
  int dev;
  if (!PyArg_ParseTuple(args, "O&i:mem_import_from_shareable_handle", cv_u64,
                        &sh, &dev))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMemImportFromShareableHandle(sh, dev, &h);
  return ptr_ret(h, r);
}

/* mem_get_allocation_granularity(prop, option) -> (granularity, ret) */
static PyObject *c_mem_get_allocation_granularity(PyObject *m,
                                                  PyObject *args) {
  PyObject *d;
  int opt;
  if (!PyArg_ParseTuple(args, "Oi:mem_get_allocation_granularity", &d, &opt))
    return NULL;
  aclrtPhysicalMemProp prop;
  if (!phys_prop(d, &prop))
    return NULL;
  size_t g = 0;
  aclError r = aclrtMemGetAllocationGranularity(
      &prop, (aclrtMemGranularityOptions)opt, &g);
  return Py_BuildValue("(ni)", (Py_ssize_t)g, (int)r);
}

/* ------------------------- rt: the newer virtual-memory calls (not in
 * pyACL; named by its rule, structs as dicts with the C field names) */

/* mem_get_allocation_properties_from_handle(handle) -> (prop, ret): prop
 * is the dict malloc_physical takes. */
static PyObject *c_mem_get_allocation_properties_from_handle(PyObject *m,
                                                             PyObject *args) {
  void *h;
  if (!PyArg_ParseTuple(args, "O&:mem_get_allocation_properties_from_handle",
                        to_ptr, &h))
    return NULL;
  aclrtPhysicalMemProp p;
  memset(&p, 0, sizeof p);
  aclError r = aclrtMemGetAllocationPropertiesFromHandle(h, &p);
  PyObject *d = PyDict_New();
  if (!d ||
      !dict_put(d, "handleType", PyLong_FromLong((long)p.handleType)) ||
      !dict_put(d, "allocationType",
                PyLong_FromLong((long)p.allocationType)) ||
      !dict_put(d, "memAttr", PyLong_FromLong((long)p.memAttr)) ||
      !dict_put(d, "location", loc_dict(&p.location)) ||
      !dict_put(d, "reserve", PyLong_FromUnsignedLongLong(p.reserve))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

/* One aclrtMemAccessDesc: {"flags", "location": {"id", "type"}, "rsv":
 * optional 12 bytes}. */
static int conv_access_desc(PyObject *o, void *slot) {
  aclrtMemAccessDesc *a = slot;
  uint64_t flags;
  if (!check_dict(o, "desc[i]") || !dict_u64(o, "flags", &flags) ||
      !dict_loc(o, "location", &a->location) ||
      !dict_rsv(o, "rsv", a->rsv, sizeof a->rsv))
    return 0;
  a->flags = (aclrtMemAccessFlags)flags;
  return 1;
}

/* mem_set_access(va, size, [desc, ...]) -> ret (count is the list's
 * length) */
static PyObject *c_mem_set_access(PyObject *m, PyObject *args) {
  void *va, *desc;
  size_t size;
  PyObject *l;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "O&O&O:mem_set_access", to_ptr, &va, cv_size,
                        &size, &l) ||
      !seq_to_array(l, "desc must be a sequence of dicts",
                    sizeof(aclrtMemAccessDesc), conv_access_desc, &desc, &n))
    return NULL;
  aclError r = aclrtMemSetAccess(va, size, desc, (size_t)n);
  PyMem_Free(desc);
  RET(r);
}

/* mem_get_access(va, location) -> (flags, ret): the access of location
 * ({"id", "type"}) to the mapping at va. */
static PyObject *c_mem_get_access(PyObject *m, PyObject *args) {
  void *va;
  PyObject *d;
  aclrtMemLocation loc;
  if (!PyArg_ParseTuple(args, "O&O:mem_get_access", to_ptr, &va, &d) ||
      !to_loc(d, &loc))
    return NULL;
  uint64_t flags = 0;
  aclError r = aclrtMemGetAccess(va, &loc, &flags);
  return u64_ret(flags, r);
}

/* A shareable handle of the V2 calls: an int (the 64-bit handle of
 * ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) or bytes (the 128-byte fabric handle
 * of ACL_MEM_SHARE_HANDLE_TYPE_FABRIC), into a zeroed aclrtMemFabricHandle
 * (the larger of the two). */
static int to_shareable(PyObject *o, void *slot) {
  aclrtMemFabricHandle *fh = slot;
  memset(fh, 0, sizeof *fh);
  if (PyBytes_Check(o)) {
    Py_ssize_t n = PyBytes_GET_SIZE(o);
    if ((size_t)n > sizeof fh->data) {
      PyErr_Format(PyExc_ValueError, "a fabric handle has %zu bytes, not %zd",
                   sizeof fh->data, n);
      return 0;
    }
    memcpy(fh->data, PyBytes_AS_STRING(o), (size_t)n);
    return 1;
  }
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "a shareable handle is an int or bytes, not %.100s",
                 Py_TYPE(o)->tp_name);
    return 0;
  }
  uint64_t h;
  if (!cv_u64(o, &h))
    return 0;
  memcpy(fh->data, &h, sizeof h);
  return 1;
}

/* mem_export_to_shareable_handle_v2(handle, flags, share_type)
 *   -> (shareable_handle, ret): an int for ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
 * 128 bytes for ACL_MEM_SHARE_HANDLE_TYPE_FABRIC (0 when the call fails). */
static PyObject *c_mem_export_to_shareable_handle_v2(PyObject *m,
                                                     PyObject *args) {
  void *h;
  uint64_t flags;
  int type;
  if (!PyArg_ParseTuple(args, "O&O&i:mem_export_to_shareable_handle_v2",
                        to_ptr, &h, cv_u64, &flags, &type))
    return NULL;
  aclrtMemFabricHandle fh;
  memset(&fh, 0, sizeof fh);
  aclError r = aclrtMemExportToShareableHandleV2(
      h, flags, (aclrtMemSharedHandleType)type, &fh);
  if (r == ACL_SUCCESS && type == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
    return Py_BuildValue("(y#i)", (const char *)fh.data,
                         (Py_ssize_t)sizeof fh.data, (int)r);
  uint64_t v;
  memcpy(&v, fh.data, sizeof v);
  return u64_ret(v, r);
}

/* mem_set_pid_to_shareable_handle_v2(shareable_handle, share_type,
 * [pid, ...]) -> ret */
static PyObject *c_mem_set_pid_to_shareable_handle_v2(PyObject *m,
                                                      PyObject *args) {
  aclrtMemFabricHandle fh;
  int type;
  PyObject *l;
  int32_t *pids;
  size_t n;
  if (!PyArg_ParseTuple(args, "O&iO!:mem_set_pid_to_shareable_handle_v2",
                        to_shareable, &fh, &type, &PyList_Type, &l) ||
      !to_pids(l, &pids, &n))
    return NULL;
  aclError r = aclrtMemSetPidToShareableHandleV2(
      &fh, (aclrtMemSharedHandleType)type, pids, n);
  PyMem_Free(pids);
  RET(r);
}

/* mem_import_from_shareable_handle_v2(shareable_handle, share_type, flags)
 *   -> (handle, ret) */
static PyObject *c_mem_import_from_shareable_handle_v2(PyObject *m,
                                                       PyObject *args) {
  aclrtMemFabricHandle fh;
  int type;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&iO&:mem_import_from_shareable_handle_v2",
                        to_shareable, &fh, &type, cv_u64, &flags))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMemImportFromShareableHandleV2(
      &fh, (aclrtMemSharedHandleType)type, flags, &h);
  return ptr_ret(h, r);
}

/* host_mem_map_capabilities(device_id, hac_type) -> (capability, ret):
 * acl.ACL_RT_HOST_MEM_MAP_SUPPORTED or _NOT_SUPPORTED. */
static PyObject *c_host_mem_map_capabilities(PyObject *m, PyObject *args) {
  unsigned dev;
  int hac;
  if (!PyArg_ParseTuple(args, "Ii:host_mem_map_capabilities", &dev, &hac))
    return NULL;
  aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
  aclError r = aclrtHostMemMapCapabilities(dev, (aclrtHacType)hac, &cap);
  return Py_BuildValue("(ii)", (int)cap, (int)r);
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_vmm_methods[] = {
    MV(reserve_mem_address, c_reserve_mem_address),
    MV(reserve_mem_address_no_uc_memory, c_reserve_mem_address_no_uc_memory),
    MV(mem_retain_allocation_handle, c_mem_retain_allocation_handle),
    MV(release_mem_address, c_release_mem_address),
    MV(malloc_physical, c_malloc_physical),
    MV(free_physical, c_free_physical),
    MV(map_mem, c_map_mem),
    MV(unmap_mem, c_unmap_mem),
    MV(mem_export_to_shareable_handle, c_mem_export_to_shareable_handle),
    M0(device_get_bare_tgid, c_device_get_bare_tgid),
    MV(mem_set_pid_to_shareable_handle, c_mem_set_pid_to_shareable_handle),
    MV(mem_import_from_shareable_handle, c_mem_import_from_shareable_handle),
    MV(mem_get_allocation_granularity, c_mem_get_allocation_granularity),
    MV(mem_map_no_access, c_mem_map_no_access),
    MV(mem_get_allocation_properties_from_handle,
       c_mem_get_allocation_properties_from_handle),
    MV(mem_set_access, c_mem_set_access),
    MV(mem_get_access, c_mem_get_access),
    MV(mem_export_to_shareable_handle_v2,
       c_mem_export_to_shareable_handle_v2),
    MV(mem_set_pid_to_shareable_handle_v2,
       c_mem_set_pid_to_shareable_handle_v2),
    MV(mem_import_from_shareable_handle_v2,
       c_mem_import_from_shareable_handle_v2),
    MV(host_mem_map_capabilities, c_host_mem_map_capabilities),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
