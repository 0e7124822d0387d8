/*
 * errors.c - the evrt exception types and the conversion of a failed evrt
 * call into a Python exception.
 */
#include "evrt_module.h"

#include <string.h>

PyObject *evrtpy_Error;
PyObject *evrtpy_NotSupportedError;

PyObject *evrtpy_raise(evrt_status_t st, const char *call) {
  /* Read the detail first: any later evrt call may overwrite it. */
  const char *detail =
      evrt_last_error() == st ? evrt_last_error_message() : NULL;
  const char *name = evrt_err_name(st);
  PyObject *cls =
      st == EVRT_ERROR_NOT_SUPPORTED ? evrtpy_NotSupportedError : evrtpy_Error;
  PyObject *msg;
  if (detail && strncmp(detail, name, strlen(name)) == 0)
    msg = PyUnicode_FromFormat("%s: %s", call, detail); /* names the status */
  else if (detail && *detail)
    msg = PyUnicode_FromFormat("%s: %s: %s (%s)", call, name, detail,
                               evrt_strerror(st));
  else
    msg = PyUnicode_FromFormat("%s: %s: %s", call, name, evrt_strerror(st));
  if (!msg)
    return NULL;
  PyObject *exc = PyObject_CallOneArg(cls, msg);
  Py_DECREF(msg);
  if (!exc)
    return NULL;
  PyObject *code = PyLong_FromLong((long)st);
  PyObject *name_o = PyUnicode_FromString(name);
  if (code && name_o && PyObject_SetAttrString(exc, "code", code) == 0 &&
      PyObject_SetAttrString(exc, "name", name_o) == 0)
    PyErr_SetObject(cls, exc);
  Py_XDECREF(code);
  Py_XDECREF(name_o);
  Py_DECREF(exc);
  return NULL;
}

int evrtpy_errors_init(PyObject *m) {
  evrtpy_Error = PyErr_NewExceptionWithDoc(
      "evrt.EvrtError",
      "An evrt call failed; .code is the evrt status, .name its name.",
      PyExc_RuntimeError, NULL);
  if (!evrtpy_Error)
    return -1;
  PyObject *bases = PyTuple_Pack(2, evrtpy_Error, PyExc_NotImplementedError);
  if (!bases)
    return -1;
  evrtpy_NotSupportedError = PyErr_NewExceptionWithDoc(
      "evrt.NotSupportedError",
      "The operation is not supported (EVRT_ERROR_NOT_SUPPORTED).", bases,
      NULL);
  Py_DECREF(bases);
  if (!evrtpy_NotSupportedError)
    return -1;
  Py_INCREF(evrtpy_Error);
  Py_INCREF(evrtpy_NotSupportedError);
  if (PyModule_AddObject(m, "EvrtError", evrtpy_Error) < 0 ||
      PyModule_AddObject(m, "NotSupportedError", evrtpy_NotSupportedError) < 0)
    return -1;
  return 0;
}
