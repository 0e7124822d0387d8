/*
 * share_ext.c - a C extension of the tests, linked against libevrt like any
 * third-party extension would be: it takes and returns raw evrt handles as
 * ints.  test_share.py uses it to show that it and the evrt package share
 * one runtime (the same streams, events and handles).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <evrt.h>

static void *handle_arg(PyObject *o) { return PyLong_AsVoidPtr(o); }

static PyObject *library_path(PyObject *m, PyObject *unused) {
  Dl_info info;
  if (!dladdr((void *)evrt_version, &info) || !info.dli_fname)
    Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

static PyObject *stream_create(PyObject *m, PyObject *arg) {
  int dev = (int)PyLong_AsLong(arg);
  if (dev == -1 && PyErr_Occurred())
    return NULL;
  evrt_stream_t s = NULL;
  evrt_status_t st = evrt_stream_create(&s, dev, 0, 0);
  if (st)
    return PyErr_Format(PyExc_RuntimeError, "evrt_stream_create: %s",
                        evrt_err_name(st));
  return PyLong_FromVoidPtr(s);
}

static PyObject *stream_destroy(PyObject *m, PyObject *arg) {
  void *h = handle_arg(arg);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromLong(evrt_stream_destroy(h));
}

static PyObject *stream_delay(PyObject *m, PyObject *args) {
  PyObject *h;
  double ms;
  if (!PyArg_ParseTuple(args, "Od", &h, &ms))
    return NULL;
  void *s = handle_arg(h);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromLong(evrt_stream_delay(s, (uint64_t)(ms * 1e6)));
}

static PyObject *stream_query(PyObject *m, PyObject *arg) {
  void *h = handle_arg(arg);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromLong(evrt_stream_query(h));
}

static PyObject *event_query(PyObject *m, PyObject *arg) {
  void *h = handle_arg(arg);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromLong(evrt_event_query(h));
}

static PyObject *event_record(PyObject *m, PyObject *args) {
  PyObject *e, *s;
  if (!PyArg_ParseTuple(args, "OO", &e, &s))
    return NULL;
  void *eh = handle_arg(e), *sh = handle_arg(s);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromLong(evrt_event_record(eh, sh));
}

static PyMethodDef methods[] = {
    {"library_path", library_path, METH_NOARGS, NULL},
    {"stream_create", stream_create, METH_O, NULL},
    {"stream_destroy", stream_destroy, METH_O, NULL},
    {"stream_delay", stream_delay, METH_VARARGS, NULL},
    {"stream_query", stream_query, METH_O, NULL},
    {"event_query", event_query, METH_O, NULL},
    {"event_record", event_record, METH_VARARGS, NULL},
    {NULL}};

static struct PyModuleDef def = {PyModuleDef_HEAD_INIT,
                                 .m_name = "evrt_share_ext",
                                 .m_size = -1,
                                 .m_methods = methods};

PyMODINIT_FUNC PyInit_evrt_share_ext(void) { return PyModule_Create(&def); }
