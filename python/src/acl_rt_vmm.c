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
  uint64_t ht, at, ma, id, ty, rs;
  memset(p, 0, sizeof *p);
  if (!check_dict(d, "prop") || !dict_u64(d, "handleType", &ht) ||
      !dict_u64(d, "allocationType", &at) || !dict_u64(d, "memAttr", &ma))
    return 0;
  PyObject *loc = PyDict_GetItemString(d, "location");
  if (!loc) {
    PyErr_SetString(PyExc_KeyError, "'location' is missing");
    return 0;
  }
  if (!check_dict(loc, "prop['location']") || !dict_u64(loc, "id", &id) ||
      !dict_u64(loc, "type", &ty) || !dict_u64(d, "reserve", &rs))
    return 0;
  p->handleType = (aclrtMemHandleType)ht;
  p->allocationType = (aclrtMemAllocationType)at;
  p->memAttr = (aclrtMemAttr)ma;
  p->location.id = (uint32_t)id;
  p->location.type = (aclrtMemLocationType)ty;
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

/* map_mem(virt, size, offset, handle, flags) -> ret */
static PyObject *c_map_mem(PyObject *m, PyObject *args) {
  void *v, *h;
  size_t size, off;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&:map_mem", to_ptr, &v, cv_size,
                        &size, cv_size, &off, to_ptr, &h, cv_u64, &flags))
    return NULL;
  RET(aclrtMapMem(v, size, off, h, flags));
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
  if (!PyArg_ParseTuple(args, "O&O!:mem_set_pid_to_shareable_handle", cv_u64,
                        &sh, &PyList_Type, &l))
    return NULL;
  Py_ssize_t n = PyList_GET_SIZE(l);
  int32_t *pids = PyMem_Calloc(n ? (size_t)n : 1, sizeof *pids);
  if (!pids)
    return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    long v = PyLong_AsLong(PyList_GET_ITEM(l, i));
    if (v == -1 && PyErr_Occurred()) {
      PyMem_Free(pids);
      return NULL;
    }
    pids[i] = (int32_t)v;
  }
  aclError r = aclrtMemSetPidToShareableHandle(sh, pids, (size_t)n);
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
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
