/*
 * module.c - the evrt._evrt extension's entry point: module functions that
 * belong to no object (device synchronize, trace, strerror) and PyInit.
 *
 * The pure-Python package (evrt/__init__.py) subclasses _EventBase and
 * _StreamBase and adds what is easier in Python: default arguments that
 * depend on the per-thread current stream (kept in a threading.local), the
 * context managers and pickling.
 *
 * Files of the extension:
 *   errors.c   the exception types, evrtpy_raise
 *   devices.c  device arguments, device_count/current_device/set_device
 *   wait.c     blocking waits (GIL released, interruptible)
 *   stream.c   _StreamBase
 *   event.c    _EventBase
 *   launch.c   Stream.launch: Python callables on worker threads, their
 *              errors, the exit hook
 *   acl_module.c  the pyACL-style functions (evrt.acl)
 *
 * GIL rules:
 *  - Every call that may block (event/stream/device synchronize, query of an
 *    imported event, which may have to look at another process) runs with
 *    the GIL released.  Blocking waits are cut into slices (wait.c) so that
 *    a pending signal (Ctrl-C) is seen between them.
 *  - Non-blocking calls (record, stream wait, enqueue) keep the GIL: they
 *    cost less than a release/re-acquire.
 *  - Host functions enqueued by Stream.launch run on evrt worker threads and
 *    take the GIL only for the duration of the Python call.
 */
#include "evrt_module.h"

#include <dlfcn.h>

static PyObject *m_synchronize(PyObject *m, PyObject *args) {
  PyObject *dev_o = Py_None;
  int d;
  if (!PyArg_ParseTuple(args, "|O:synchronize", &dev_o))
    return NULL;
  if (evrtpy_parse_device(dev_o, &d) < 0)
    return NULL;
  evrt_status_t st;
  if (evrtpy_device_wait(d, -1, 0, &st) < 0)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_device_synchronize");
  if (evrtpy_raise_launch_errors(d, 0, 0) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *m_trace_start(PyObject *m, PyObject *arg) {
  PyObject *bytes;
  if (!PyUnicode_FSConverter(arg, &bytes))
    return NULL;
  evrt_status_t st = evrt_trace_start(PyBytes_AS_STRING(bytes));
  Py_DECREF(bytes);
  if (st)
    return evrtpy_raise(st, "evrt_trace_start");
  Py_RETURN_NONE;
}

static PyObject *m_trace_stop(PyObject *m, PyObject *unused) {
  evrt_status_t st;
  /* Flushing the trace file may take a while. */
  Py_BEGIN_ALLOW_THREADS
  st = evrt_trace_stop();
  Py_END_ALLOW_THREADS
  if (st)
    return evrtpy_raise(st, "evrt_trace_stop");
  Py_RETURN_NONE;
}
static PyObject *m_strerror(PyObject *m, PyObject *arg) {
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred())
    return NULL;
  return Py_BuildValue("(ss)", evrt_err_name((evrt_status_t)v),
                       evrt_strerror((evrt_status_t)v));
}

/* The file of the libevrt this process runs (one per process: a C
 * extension or a ctypes user that loads libevrt.so.0 gets this one). */
static PyObject *m_library_path(PyObject *m, PyObject *unused) {
  Dl_info info;
  if (!dladdr((void *)evrt_version, &info) || !info.dli_fname)
    Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

static PyMethodDef module_methods[] = {
    {"library_path", m_library_path, METH_NOARGS,
     "library_path() -> str: the libevrt shared library of this process."},
    {"synchronize", m_synchronize, METH_VARARGS,
     "synchronize(device=None): wait for all streams of the device."},
    {"_trace_start", m_trace_start, METH_O, "evrt_trace_start(path)."},
    {"_trace_stop", m_trace_stop, METH_NOARGS, "evrt_trace_stop()."},
    {"strerror", m_strerror, METH_O,
     "strerror(code) -> (name, message) of an evrt status."},
    {NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "evrt._evrt",
    .m_doc = "C extension of the evrt package over the public evrt C API.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__evrt(void) {
  if (PyType_Ready(&evrtpy_StreamType) < 0 ||
      PyType_Ready(&evrtpy_EventType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  if (PyModule_AddFunctions(m, evrtpy_device_methods) < 0 ||
      PyModule_AddFunctions(m, evrtpy_launch_methods) < 0 ||
      PyModule_AddFunctions(m, evrtpy_check_methods) < 0 ||
      evrtpy_errors_init(m) < 0 || evrtpy_launch_init(m) < 0)
    goto fail;
  Py_INCREF(&evrtpy_StreamType);
  Py_INCREF(&evrtpy_EventType);
  if (PyModule_AddObject(m, "_StreamBase", (PyObject *)&evrtpy_StreamType) <
          0 ||
      PyModule_AddObject(m, "_EventBase", (PyObject *)&evrtpy_EventType) < 0 ||
      PyModule_AddIntConstant(m, "IPC_HANDLE_SIZE", EVRT_IPC_HANDLE_SIZE) < 0 ||
      PyModule_AddStringConstant(m, "__version__", evrt_version_string()) <
          0 ||
      PyModule_AddIntConstant(m, "ERROR_NOT_SUPPORTED",
                              EVRT_ERROR_NOT_SUPPORTED) < 0)
    goto fail;
#define ADD_CODE(name, value, msg)                                             \
  if (PyModule_AddIntConstant(m, "EVRT_" #name, value) < 0)                    \
    goto fail;
  EVRT_ERRNO_MAP(ADD_CODE)
#undef ADD_CODE
  if (evrtpy_acl_init(m) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
