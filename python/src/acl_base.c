/*
 * acl_base.c - evrt.acl: acl_base.h (data buffers, types),
 * system, versions.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ---------------------------------------------- acl.*: acl_base.h, system */

/* get_version() -> (major, minor, patch, ret) (aclrtGetVersion). */
static PyObject *c_get_version(PyObject *m, PyObject *unused) {
  int32_t a = 0, b = 0, c = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclError r = aclrtGetVersion(&a, &b, &c);
#pragma GCC diagnostic pop
  return Py_BuildValue("(iiii)", (int)a, (int)b, (int)c, (int)r);
}

/* get_soc_name() -> str, None when the name cannot be had. */
static PyObject *c_get_soc_name(PyObject *m, PyObject *unused) {
  const char *s = aclrtGetSocName();
  if (!s)
    Py_RETURN_NONE;
  return PyUnicode_FromString(s);
}

static PyObject *c_float16_to_float(PyObject *m, PyObject *args) {
  unsigned short v;
  if (!PyArg_ParseTuple(args, "H:float16_to_float", &v))
    return NULL;
  return PyFloat_FromDouble((double)aclFloat16ToFloat((aclFloat16)v));
}

static PyObject *c_float_to_float16(PyObject *m, PyObject *args) {
  float v;
  if (!PyArg_ParseTuple(args, "f:float_to_float16", &v))
    return NULL;
  return PyLong_FromLong((long)aclFloatToFloat16(v));
}

/* create_data_buffer(data, size) -> buffer (0 on failure: pyACL returns
 * the bare pointer, no ret). */
static PyObject *c_create_data_buffer(PyObject *m, PyObject *args) {
  void *data;
  size_t size;
  if (!PyArg_ParseTuple(args, "O&O&:create_data_buffer", to_ptr, &data,
                        cv_size, &size))
    return NULL;
  return PyLong_FromVoidPtr(aclCreateDataBuffer(data, size));
}

static PyObject *c_destroy_data_buffer(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:destroy_data_buffer", to_ptr, &b))
    return NULL;
  RET(aclDestroyDataBuffer((const aclDataBuffer *)b));
}

static PyObject *c_get_data_buffer_addr(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_addr", to_ptr, &b))
    return NULL;
  return PyLong_FromVoidPtr(aclGetDataBufferAddr((const aclDataBuffer *)b));
}

static PyObject *c_get_data_buffer_size(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_size", to_ptr, &b))
    return NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  uint32_t n = aclGetDataBufferSize((const aclDataBuffer *)b);
#pragma GCC diagnostic pop
  return PyLong_FromUnsignedLong((unsigned long)n);
}

static PyObject *c_get_data_buffer_size_v2(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_size_v2", to_ptr, &b))
    return NULL;
  return PyLong_FromSize_t(aclGetDataBufferSizeV2((const aclDataBuffer *)b));
}

static PyObject *c_update_data_buffer(PyObject *m, PyObject *args) {
  void *b, *data;
  size_t size;
  if (!PyArg_ParseTuple(args, "O&O&O&:update_data_buffer", to_ptr, &b,
                        to_ptr, &data, cv_size, &size))
    return NULL;
  RET(aclUpdateDataBuffer((aclDataBuffer *)b, data, size));
}

static PyObject *c_data_type_size(PyObject *m, PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:data_type_size", &t))
    return NULL;
  return PyLong_FromSize_t(aclDataTypeSize((aclDataType)t));
}

/* app_log(level, message) -> None */
static PyObject *c_app_log(PyObject *m, PyObject *args) {
  int level;
  const char *msg;
  if (!PyArg_ParseTuple(args, "is:app_log", &level, &msg))
    return NULL;
  aclAppLog((aclLogLevel)level, "app_log", "python", 0, "%s", msg);
  Py_RETURN_NONE;
}

/* get_cann_attribute_list() -> (list, num, ret) */
static PyObject *c_get_cann_attribute_list(PyObject *m, PyObject *unused) {
  const aclCannAttr *list = NULL;
  size_t num = 0;
  aclError r = aclGetCannAttributeList(&list, &num);
  PyObject *l = PyList_New(r || !list ? 0 : (Py_ssize_t)num);
  if (!l)
    return NULL;
  for (size_t i = 0; !r && list && i < num; i++) {
    PyObject *v = PyLong_FromLong((long)list[i]);
    if (!v) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  return Py_BuildValue("(Nni)", l, (Py_ssize_t)num, (int)r);
}

static PyObject *c_get_cann_attribute(PyObject *m, PyObject *args) {
  int a;
  if (!PyArg_ParseTuple(args, "i:get_cann_attribute", &a))
    return NULL;
  int32_t v = 0;
  aclError r = aclGetCannAttribute((aclCannAttr)a, &v);
  return Py_BuildValue("(ii)", (int)v, (int)r);
}

/* acl.get_device_capability(device_id, info) -> (value, ret)
 * (aclGetDeviceCapability). */
static PyObject *c_get_device_capability(PyObject *m, PyObject *args) {
  unsigned dev;
  int info;
  if (!PyArg_ParseTuple(args, "Ii:get_device_capability", &dev, &info))
    return NULL;
  int64_t v = 0;
  aclError r = aclGetDeviceCapability(dev, (aclDeviceInfo)info, &v);
  return i64_ret(v, r);
}

/* get_cann_version(name) -> (dict, ret) (aclsysGetCANNVersion) */
static PyObject *c_get_cann_version(PyObject *m, PyObject *args) {
  unsigned name;
  if (!PyArg_ParseTuple(args, "I:get_cann_version", &name))
    return NULL;
  aclCANNPackageVersion v;
  memset(&v, 0, sizeof v);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclError r = aclsysGetCANNVersion((aclCANNPackageName)name, &v);
#pragma GCC diagnostic pop
  PyObject *d = PyDict_New();
  if (!d || !dict_put(d, "version", PyUnicode_FromString(v.version)) ||
      !dict_put(d, "major_version", PyUnicode_FromString(v.majorVersion)) ||
      !dict_put(d, "minor_version", PyUnicode_FromString(v.minorVersion)) ||
      !dict_put(d, "release_version",
                PyUnicode_FromString(v.releaseVersion)) ||
      !dict_put(d, "patch_version", PyUnicode_FromString(v.patchVersion)) ||
      !dict_put(d, "reserved", PyUnicode_FromString(v.reserved))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

/* get_version_str(pkg_name) -> (str, ret) (aclsysGetVersionStr) */
static PyObject *c_get_version_str(PyObject *m, PyObject *args) {
  const char *pkg;
  if (!PyArg_ParseTuple(args, "s:get_version_str", &pkg))
    return NULL;
  char buf[ACL_PKG_VERSION_MAX_SIZE] = {0};
  aclError r = aclsysGetVersionStr((char *)pkg, buf);
  return Py_BuildValue("(si)", buf, (int)r);
}

/* get_version_num(pkg_name) -> (int, ret): aclsysGetVersionNum, which
 * pyACL does not wrap; named by its rule. */
static PyObject *c_get_version_num(PyObject *m, PyObject *args) {
  const char *pkg;
  if (!PyArg_ParseTuple(args, "s:get_version_num", &pkg))
    return NULL;
  int32_t n = 0;
  aclError r = aclsysGetVersionNum((char *)pkg, &n);
  return Py_BuildValue("(ii)", (int)n, (int)r);
}

/* Added to evrt.acl by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_base_methods[] = {
    M0(get_version, c_get_version),
    M0(get_soc_name, c_get_soc_name),
    MV(float16_to_float, c_float16_to_float),
    MV(float_to_float16, c_float_to_float16),
    MV(create_data_buffer, c_create_data_buffer),
    MV(destroy_data_buffer, c_destroy_data_buffer),
    MV(get_data_buffer_addr, c_get_data_buffer_addr),
    MV(get_data_buffer_size, c_get_data_buffer_size),
    MV(get_data_buffer_size_v2, c_get_data_buffer_size_v2),
    MV(update_data_buffer, c_update_data_buffer),
    MV(data_type_size, c_data_type_size),
    MV(app_log, c_app_log),
    M0(get_cann_attribute_list, c_get_cann_attribute_list),
    MV(get_cann_attribute, c_get_cann_attribute),
    MV(get_device_capability, c_get_device_capability),
    MV(get_cann_version, c_get_cann_version),
    MV(get_version_str, c_get_version_str),
    MV(get_version_num, c_get_version_num),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
