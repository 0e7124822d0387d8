/*
 * acl_rt_device.c - evrt.acl.rt: devices and contexts.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ----------------------------------------------------- rt: devices */

static PyObject *r_set_device(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:set_device", &dev))
    return NULL;
  RET(aclrtSetDevice(dev));
}

static PyObject *r_reset_device(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device", &dev))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtResetDevice(dev);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_reset_device_force(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device_force", &dev))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtResetDeviceForce(dev);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_get_device(PyObject *m, PyObject *unused) {
  int32_t d = 0;
  aclError r = aclrtGetDevice(&d);
  return Py_BuildValue("(ii)", (int)d, (int)r);
}

static PyObject *r_get_device_count(PyObject *m, PyObject *unused) {
  uint32_t n = 0;
  aclError r = aclrtGetDeviceCount(&n);
  return Py_BuildValue("(Ii)", (unsigned)n, (int)r);
}

static PyObject *r_get_run_mode(PyObject *m, PyObject *unused) {
  aclrtRunMode mode = ACL_HOST;
  aclError r = aclrtGetRunMode(&mode);
  return Py_BuildValue("(ii)", (int)mode, (int)r);
}

static PyObject *r_synchronize_device(PyObject *m, PyObject *unused) {
  aclError r;
  int left;
  if (prewait(PRE_DEVICE, NULL, -1, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeDevice();
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_synchronize_device_with_timeout(PyObject *m,
                                                   PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:synchronize_device_with_timeout", &t))
    return NULL;
  aclError r;
  int left = t;
  if ((t > 0 || t == -1) && prewait(PRE_DEVICE, NULL, t, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeDeviceWithTimeout(left);
  Py_END_ALLOW_THREADS
  RET(r);
}

/* --------------------------------------------------- rt: contexts */

static PyObject *r_create_context(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:create_context", &dev))
    return NULL;
  aclrtContext c = NULL;
  aclError r = aclrtCreateContext(&c, dev);
  return ptr_ret(c, r);
}

static PyObject *r_destroy_context(PyObject *m, PyObject *args) {
  void *c;
  if (!PyArg_ParseTuple(args, "O&:destroy_context", to_ptr, &c))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtDestroyContext(c);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_set_context(PyObject *m, PyObject *args) {
  void *c;
  if (!PyArg_ParseTuple(args, "O&:set_context", to_ptr, &c))
    return NULL;
  RET(aclrtSetCurrentContext(c));
}

static PyObject *r_get_context(PyObject *m, PyObject *unused) {
  aclrtContext c = NULL;
  aclError r = aclrtGetCurrentContext(&c);
  return ptr_ret(c, r);
}

/* ------------------------------------------------------ rt: devices */

static PyObject *c_set_device_sat_mode(PyObject *m, PyObject *args) {
  int mode;
  if (!PyArg_ParseTuple(args, "i:set_device_sat_mode", &mode))
    return NULL;
  RET(aclrtSetDeviceSatMode((aclrtFloatOverflowMode)mode));
}

static PyObject *c_get_device_sat_mode(PyObject *m, PyObject *unused) {
  aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_SATURATION;
  aclError r = aclrtGetDeviceSatMode(&mode);
  return Py_BuildValue("(ii)", (int)mode, (int)r);
}

static PyObject *c_get_device_utilization_rate(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:get_device_utilization_rate", &dev))
    return NULL;
  aclrtUtilizationInfo u;
  memset(&u, 0, sizeof u);
  aclError r = aclrtGetDeviceUtilizationRate(dev, &u);
  PyObject *d = PyDict_New();
  if (!d ||
      !dict_put(d, "cube_utilization", PyLong_FromLong(u.cubeUtilization)) ||
      !dict_put(d, "vector_utilization",
                PyLong_FromLong(u.vectorUtilization)) ||
      !dict_put(d, "aicpu_utilization", PyLong_FromLong(u.aicpuUtilization)) ||
      !dict_put(d, "memory_utilization",
                PyLong_FromLong(u.memoryUtilization)) ||
      !dict_put(d, "utilization_extend",
                PyLong_FromVoidPtr(u.utilizationExtend))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_query_device_status(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:query_device_status", &dev))
    return NULL;
  aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_END;
  aclError r = aclrtQueryDeviceStatus(dev, &st);
  return Py_BuildValue("(Ii)", (unsigned)st, (int)r);
}

/* get_device_info(device_id, attr) -> (value, ret): the full int64_t
 * (pyACL passes it through an int). */
static PyObject *c_get_device_info(PyObject *m, PyObject *args) {
  unsigned dev, attr;
  if (!PyArg_ParseTuple(args, "II:get_device_info", &dev, &attr))
    return NULL;
  int64_t v = 0;
  aclError r = aclrtGetDeviceInfo(dev, (aclrtDevAttr)attr, &v);
  return i64_ret(v, r);
}

static PyObject *c_device_get_stream_priority_range(PyObject *m,
                                                    PyObject *unused) {
  int32_t least = 0, greatest = 0;
  aclError r = aclrtDeviceGetStreamPriorityRange(&least, &greatest);
  return Py_BuildValue("(iii)", (int)least, (int)greatest, (int)r);
}

/* rt.get_device_capability(device_id, feature) -> (value, ret)
 * (aclrtGetDeviceCapability). */
static PyObject *c_rt_get_device_capability(PyObject *m, PyObject *args) {
  int dev;
  unsigned feature;
  if (!PyArg_ParseTuple(args, "iI:get_device_capability", &dev, &feature))
    return NULL;
  int32_t v = 0;
  aclError r =
      aclrtGetDeviceCapability(dev, (aclrtDevFeatureType)feature, &v);
  return Py_BuildValue("(ii)", (int)v, (int)r);
}

static PyObject *c_get_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  unsigned type;
  if (!PyArg_ParseTuple(args, "iI:get_device_res_limit", &dev, &type))
    return NULL;
  uint32_t v = 0;
  aclError r = aclrtGetDeviceResLimit(dev, (aclrtDevResLimitType)type, &v);
  return Py_BuildValue("(Ii)", (unsigned)v, (int)r);
}

static PyObject *c_set_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  unsigned type, value;
  if (!PyArg_ParseTuple(args, "iII:set_device_res_limit", &dev, &type,
                        &value))
    return NULL;
  RET(aclrtSetDeviceResLimit(dev, (aclrtDevResLimitType)type, value));
}

static PyObject *c_reset_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device_res_limit", &dev))
    return NULL;
  RET(aclrtResetDeviceResLimit(dev));
}

static PyObject *c_get_devices_topo(PyObject *m, PyObject *args) {
  unsigned dev, other;
  if (!PyArg_ParseTuple(args, "II:get_devices_topo", &dev, &other))
    return NULL;
  uint64_t v = 0;
  aclError r = aclrtGetDevicesTopo(dev, other, &v);
  return u64_ret(v, r);
}

#define ID_MAP_FN(pyname, cfn)                                                 \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    int in;                                                                    \
    if (!PyArg_ParseTuple(args, "i:" #pyname, &in))                            \
      return NULL;                                                             \
    int32_t out = 0;                                                           \
    aclError r = cfn(in, &out);                                                \
    return Py_BuildValue("(ii)", (int)out, (int)r);                            \
  }
ID_MAP_FN(get_logic_dev_id_by_user_dev_id, aclrtGetLogicDevIdByUserDevId)
ID_MAP_FN(get_user_dev_id_by_logic_dev_id, aclrtGetUserDevIdByLogicDevId)
ID_MAP_FN(get_logic_dev_id_by_phy_dev_id, aclrtGetLogicDevIdByPhyDevId)
ID_MAP_FN(get_phy_dev_id_by_logic_dev_id, aclrtGetPhyDevIdByLogicDevId)
ID_MAP_FN(get_user_dev_id_by_phy_dev_id, aclrtGetUserDevIdByPhyDevId)
ID_MAP_FN(get_phy_dev_id_by_user_dev_id, aclrtGetPhyDevIdByUserDevId)
#undef ID_MAP_FN

/* device_get_uuid(device_id) -> ({"bytes": [16 ints]}, ret) (0..255). */
static PyObject *c_device_get_uuid(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:device_get_uuid", &dev))
    return NULL;
  aclrtUuid u;
  memset(&u, 0, sizeof u);
  aclError r = aclrtDeviceGetUuid(dev, &u);
  PyObject *l = PyList_New((Py_ssize_t)sizeof u.bytes);
  if (!l)
    return NULL;
  for (size_t i = 0; i < sizeof u.bytes; i++) {
    PyObject *v = PyLong_FromLong((long)(unsigned char)u.bytes[i]);
    if (!v) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  PyObject *d = PyDict_New();
  if (!d || !dict_put(d, "bytes", l)) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_device_can_access_peer(PyObject *m, PyObject *args) {
  int dev, peer;
  if (!PyArg_ParseTuple(args, "ii:device_can_access_peer", &dev, &peer))
    return NULL;
  int32_t can = 0;
  aclError r = aclrtDeviceCanAccessPeer(&can, dev, peer);
  return Py_BuildValue("(ii)", (int)can, (int)r);
}

static PyObject *c_device_enable_peer_access(PyObject *m, PyObject *args) {
  int peer;
  unsigned flags;
  if (!PyArg_ParseTuple(args, "iI:device_enable_peer_access", &peer, &flags))
    return NULL;
  RET(aclrtDeviceEnablePeerAccess(peer, flags));
}

static PyObject *c_device_disable_peer_access(PyObject *m, PyObject *args) {
  int peer;
  if (!PyArg_ParseTuple(args, "i:device_disable_peer_access", &peer))
    return NULL;
  RET(aclrtDeviceDisablePeerAccess(peer));
}

static PyObject *c_device_peer_access_status(PyObject *m, PyObject *args) {
  int dev, peer;
  if (!PyArg_ParseTuple(args, "ii:device_peer_access_status", &dev, &peer))
    return NULL;
  int32_t st = 0;
  aclError r = aclrtDevicePeerAccessStatus(dev, peer, &st);
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *c_get_mem_info(PyObject *m, PyObject *args) {
  int attr;
  if (!PyArg_ParseTuple(args, "i:get_mem_info", &attr))
    return NULL;
  size_t fr = 0, total = 0;
  aclError r = aclrtGetMemInfo((aclrtMemAttr)attr, &fr, &total);
  return Py_BuildValue("(nni)", (Py_ssize_t)fr, (Py_ssize_t)total, (int)r);
}

/* get_primary_ctx_state(device_id) -> (active, ret): 1 while the device is
 * set.  CANN's flags output is reserved (it must be NULL), so there is
 * nothing to return for it. */
static PyObject *c_get_primary_ctx_state(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:get_primary_ctx_state", &dev))
    return NULL;
  int32_t active = 0;
  aclError r = aclrtGetPrimaryCtxState(dev, NULL, &active);
  return Py_BuildValue("(ii)", (int)active, (int)r);
}

/* device_get_host_atomic_capabilities(operations, device_id) ->
 * (capabilities, ret): operations is a sequence of
 * ACL_RT_ATOMIC_OPERATION_* (its length is the C call's count), the result
 * a list of ACL_RT_ATOMIC_CAPABILITY_* bit sets, one per operation (zeros
 * when the call fails: ACL leaves the output untouched). */
static PyObject *c_device_get_host_atomic_capabilities(PyObject *m,
                                                       PyObject *args) {
  PyObject *ops_o;
  int dev;
  if (!PyArg_ParseTuple(args, "Oi:device_get_host_atomic_capabilities",
                        &ops_o, &dev))
    return NULL;
  void *ops;
  Py_ssize_t n;
  if (!seq_to_array(ops_o, "operations must be a sequence of ints",
                    sizeof(uint32_t), conv_u32, &ops, &n))
    return NULL;
  uint32_t *caps = PyMem_Calloc((size_t)(n ? n : 1), sizeof *caps);
  if (!caps) {
    PyMem_Free(ops);
    return PyErr_NoMemory();
  }
  /* aclrtAtomicOperation is an enum of int size holding the given bits. */
  aclError r = aclrtDeviceGetHostAtomicCapabilities(
      caps, (const aclrtAtomicOperation *)ops, (uint32_t)n, dev);
  PyMem_Free(ops);
  PyObject *l = PyList_New(n);
  for (Py_ssize_t i = 0; l && i < n; i++) {
    PyObject *v = PyLong_FromUnsignedLong(caps[i]);
    if (!v) {
      Py_CLEAR(l);
      break;
    }
    PyList_SET_ITEM(l, i, v);
  }
  PyMem_Free(caps);
  if (!l)
    return NULL;
  return Py_BuildValue("(Ni)", l, (int)r);
}

/* ctx_get_current_default_stream() -> (stream, ret): the current context's
 * default stream as its handle value (0, NULL, names it too). */
static PyObject *c_ctx_get_current_default_stream(PyObject *m,
                                                  PyObject *unused) {
  /* aclrtStream * is void ** */
  return ptr_out_ret(aclrtCtxGetCurrentDefaultStream);
}

/* device_get_pci_bus_id(device_id) -> (str, ret) ("" on failure). */
static PyObject *c_device_get_pci_bus_id(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:device_get_pci_bus_id", &dev))
    return NULL;
  char buf[64] = "";
  aclError r = aclrtDeviceGetPCIBusId(dev, buf, (int32_t)sizeof buf);
  return Py_BuildValue("(si)", r == ACL_SUCCESS ? buf : "", (int)r);
}

/* device_get_by_pci_bus_id(str) -> (device_id, ret). */
static PyObject *c_device_get_by_pci_bus_id(PyObject *m, PyObject *args) {
  const char *bus;
  if (!PyArg_ParseTuple(args, "s:device_get_by_pci_bus_id", &bus))
    return NULL;
  int32_t dev = -1;
  aclError r = aclrtDeviceGetByPCIBusId(bus, &dev);
  return Py_BuildValue("(ii)", (int)dev, (int)r);
}

/* check_arch_compatibility(soc_version) -> (can_compatible, ret). */
static PyObject *c_check_arch_compatibility(PyObject *m, PyObject *args) {
  const char *soc;
  if (!PyArg_ParseTuple(args, "s:check_arch_compatibility", &soc))
    return NULL;
  int32_t can = 0;
  aclError r = aclrtCheckArchCompatibility(soc, &can);
  return Py_BuildValue("(ii)", (int)can, (int)r);
}

/* device_set_limit(limit, value) -> ret; device_get_limit(limit) ->
 * (value, ret): acl.ACL_RT_DEV_LIMIT_*, of the current device. */
static PyObject *c_device_set_limit(PyObject *m, PyObject *args) {
  int limit;
  PyObject *vo;
  if (!PyArg_ParseTuple(args, "iO:device_set_limit", &limit, &vo))
    return NULL;
  size_t v;
  if (!cv_size(vo, &v))
    return NULL;
  RET(aclrtDeviceSetLimit((aclrtDeviceLimit)limit, v));
}

static PyObject *c_device_get_limit(PyObject *m, PyObject *args) {
  int limit;
  if (!PyArg_ParseTuple(args, "i:device_get_limit", &limit))
    return NULL;
  size_t v = 0;
  aclError r = aclrtDeviceGetLimit((aclrtDeviceLimit)limit, &v);
  return u64_ret((uint64_t)v, r);
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_device_methods[] = {
    MV(set_device, r_set_device),
    MV(reset_device, r_reset_device),
    MV(reset_device_force, r_reset_device_force),
    M0(get_device, r_get_device),
    M0(get_device_count, r_get_device_count),
    M0(get_run_mode, r_get_run_mode),
    M0(synchronize_device, r_synchronize_device),
    MV(synchronize_device_with_timeout, r_synchronize_device_with_timeout),
    MV(create_context, r_create_context),
    MV(destroy_context, r_destroy_context),
    MV(set_context, r_set_context),
    M0(get_context, r_get_context),
    MV(set_device_sat_mode, c_set_device_sat_mode),
    M0(get_device_sat_mode, c_get_device_sat_mode),
    MV(get_device_utilization_rate, c_get_device_utilization_rate),
    MV(query_device_status, c_query_device_status),
    MV(get_device_info, c_get_device_info),
    M0(device_get_stream_priority_range, c_device_get_stream_priority_range),
    MV(get_device_capability, c_rt_get_device_capability),
    MV(get_device_res_limit, c_get_device_res_limit),
    MV(set_device_res_limit, c_set_device_res_limit),
    MV(reset_device_res_limit, c_reset_device_res_limit),
    MV(get_devices_topo, c_get_devices_topo),
    MV(get_logic_dev_id_by_user_dev_id, c_get_logic_dev_id_by_user_dev_id),
    MV(get_user_dev_id_by_logic_dev_id, c_get_user_dev_id_by_logic_dev_id),
    MV(get_logic_dev_id_by_phy_dev_id, c_get_logic_dev_id_by_phy_dev_id),
    MV(get_phy_dev_id_by_logic_dev_id, c_get_phy_dev_id_by_logic_dev_id),
    MV(device_get_uuid, c_device_get_uuid),
    MV(device_can_access_peer, c_device_can_access_peer),
    MV(device_enable_peer_access, c_device_enable_peer_access),
    MV(device_disable_peer_access, c_device_disable_peer_access),
    MV(device_peer_access_status, c_device_peer_access_status),
    MV(get_mem_info, c_get_mem_info),
    MV(get_primary_ctx_state, c_get_primary_ctx_state),
    MV(device_get_host_atomic_capabilities,
       c_device_get_host_atomic_capabilities),
    MV(get_user_dev_id_by_phy_dev_id, c_get_user_dev_id_by_phy_dev_id),
    MV(get_phy_dev_id_by_user_dev_id, c_get_phy_dev_id_by_user_dev_id),
    M0(ctx_get_current_default_stream, c_ctx_get_current_default_stream),
    MV(device_get_pci_bus_id, c_device_get_pci_bus_id),
    MV(device_get_by_pci_bus_id, c_device_get_by_pci_bus_id),
    MV(check_arch_compatibility, c_check_arch_compatibility),
    MV(device_set_limit, c_device_set_limit),
    MV(device_get_limit, c_device_get_limit),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
