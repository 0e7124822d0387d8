/*
 * devices.c - device arguments and the module's device functions
 * (device_count, current_device, set_device).
 */
#include "evrt_module.h"

#include <stdlib.h>
#include <string.h>

int evrtpy_get_count(int *n) {
  evrt_status_t st = evrt_device_count(n);
  if (st) {
    evrtpy_raise(st, "evrt_device_count");
    return -1;
  }
  return 0;
}

int evrtpy_get_current(int *d) {
  evrt_status_t st = evrt_get_device(d);
  if (st) {
    evrtpy_raise(st, "evrt_get_device");
    return -1;
  }
  return 0;
}

/* Device argument: None or a negative int = the current device; an int; or
 * the strings "evrt" / "evrt:N".  Out of range is a RuntimeError worded as
 * torch.accelerator words it. */
int evrtpy_parse_device(PyObject *o, int *out) {
  long v;
  if (o == NULL || o == Py_None)
    return evrtpy_get_current(out);
  if (PyUnicode_Check(o)) {
    const char *s = PyUnicode_AsUTF8(o);
    if (!s)
      return -1;
    if (strcmp(s, "evrt") == 0)
      return evrtpy_get_current(out);
    char *end = NULL;
    if (strncmp(s, "evrt:", 5) == 0 && s[5] >= '0' && s[5] <= '9') {
      v = strtol(s + 5, &end, 10);
      if (*end == '\0')
        goto ranged;
    }
    PyErr_Format(PyExc_ValueError, "Expected an evrt device, but got: %s", s);
    return -1;
  }
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "device must be None, an int or 'evrt:N', not %.100s",
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  v = PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred())
    return -1;
  if (v < 0)
    return evrtpy_get_current(out);
ranged:;
  int n;
  if (evrtpy_get_count(&n) < 0)
    return -1;
  if (v >= n) {
    PyErr_Format(PyExc_RuntimeError,
                 "Device index value %ld is out of index range [0, %d).", v,
                 n);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static PyObject *m_device_count(PyObject *m, PyObject *unused) {
  int n;
  if (evrtpy_get_count(&n) < 0)
    return NULL;
  return PyLong_FromLong(n);
}

static PyObject *m_current_device(PyObject *m, PyObject *unused) {
  int d;
  if (evrtpy_get_current(&d) < 0)
    return NULL;
  return PyLong_FromLong(d);
}

static PyObject *m_set_device(PyObject *m, PyObject *arg) {
  /* torch: a negative index is a no-op. */
  if (PyLong_Check(arg)) {
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
      return NULL;
    if (v < 0)
      Py_RETURN_NONE;
  }
  int d;
  if (evrtpy_parse_device(arg, &d) < 0)
    return NULL;
  evrt_status_t st = evrt_set_device(d);
  if (st)
    return evrtpy_raise(st, "evrt_set_device");
  Py_RETURN_NONE;
}

static PyObject *m_device_index(PyObject *m, PyObject *arg) {
  int d;
  if (evrtpy_parse_device(arg, &d) < 0)
    return NULL;
  return PyLong_FromLong(d);
}

PyMethodDef evrtpy_device_methods[] = {
    {"device_count", m_device_count, METH_NOARGS, "Number of devices."},
    {"current_device", m_current_device, METH_NOARGS,
     "The calling thread's current device."},
    {"set_device", m_set_device, METH_O,
     "Set the calling thread's current device (negative: no-op)."},
    {"_device_index", m_device_index, METH_O,
     "Resolve a device argument to an index (None: current device)."},
    {NULL}};
