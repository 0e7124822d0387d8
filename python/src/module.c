/*
 * module.c - the evrt._evrt extension's entry point: module functions that
 * belong to no object (device synchronize, trace, strerror) and PyInit.
 *
 * The types evrt.Stream, evrt.Event and evrt.device are C types; the
 * package's modules (evrt, evrt.cuda, evrt.xpu, evrt.accelerator) take
 * their module functions from _functions(type), the same C functions bound
 * to a device type, and evrt.cuda / evrt.xpu subclass Stream and Event in
 * Python for torch's signatures, reprs and extra names (cuda_stream, ...).
 *
 * Files of the extension:
 *   errors.c   the exception types, evrtpy_raise
 *   devices.c  device types, evrt.device, device arguments
 *   current.c  per-thread current streams, default streams, the module
 *              functions of each device type
 *   wait.c     blocking waits (GIL released, interruptible)
 *   stream.c   evrt.Stream
 *   event.c    evrt.Event
 *   launch.c   Stream.launch: Python callables on worker threads, their
 *              errors, the exit hook
 *   acl_module.c  the pyACL-style functions (evrt.acl), with one file per
 *              ACL family (acl_base.c, acl_util.c, acl_rt_*.c, acl_mdl.c)
 *   gputrace.c the GPU trace hooks (torch's _gpu_trace callbacks)
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
#include <string.h>

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

/* ------------------------------------------------------------ flavors */

static PyTypeObject FlavorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt._evrt._Flavor",
    .tp_basicsize = sizeof(FlavorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The device type the module functions bound to it work in.",
};

static int type_arg(PyObject *name, int *type) {
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  for (int t = 0; s && t < EVRTPY_NGPU; t++)
    if (strcmp(s, t == EVRTPY_EVRT ? "evrt" : evrtpy_type_name(t)) == 0) {
      *type = t;
      return 0;
    }
  if (!PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "unknown device type %R", name);
  return -1;
}

/* _functions(type, accelerator=False) -> {name: function}: the module
 * functions bound to a type ("evrt", "cuda", "xpu"); with accelerator=True,
 * to whatever type the current accelerator has at each call. */
static PyObject *m_functions(PyObject *m, PyObject *args) {
  PyObject *name;
  int accel = 0, type;
  if (!PyArg_ParseTuple(args, "O|p:_functions", &name, &accel) ||
      type_arg(name, &type) < 0)
    return NULL;
  FlavorObject *f = PyObject_New(FlavorObject, &FlavorType);
  if (!f)
    return NULL;
  f->type = type;
  f->accel = accel;
  PyObject *d = PyDict_New();
  PyObject *modname = PyUnicode_FromString(
      accel ? "evrt.accelerator"
            : type == EVRTPY_EVRT ? "evrt"
                                  : type == EVRTPY_CUDA ? "evrt.cuda"
                                                        : "evrt.xpu");
  for (PyMethodDef *def = evrtpy_flavor_methods; d && modname && def->ml_name;
       def++) {
    PyObject *fn = PyCFunction_NewEx(def, (PyObject *)f, modname);
    if (!fn || PyDict_SetItemString(d, def->ml_name, fn) < 0)
      Py_CLEAR(d);
    Py_XDECREF(fn);
  }
  Py_XDECREF(modname);
  Py_DECREF(f);
  return d;
}

/* A method that does nothing, the baseline of bench/python_overhead.py. */
static PyObject *noop(PyObject *self, PyObject *unused) { Py_RETURN_NONE; }

static PyMethodDef Noop_methods[] = {
    {"noop", noop, METH_NOARGS, "noop($self, /)\n--\n\nDo nothing."},
    {NULL}};

static PyTypeObject NoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt._evrt._Noop",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An object with a no-op C method (benchmark baseline).",
    .tp_methods = Noop_methods,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"_functions", m_functions, METH_VARARGS,
     "_functions($module, type, accelerator=False, /)\n--\n\n"
     "The module functions of a device type, as a dict."},
    {"library_path", m_library_path, METH_NOARGS,
     "library_path($module, /)\n--\n\n"
     "The path of the libevrt shared library this process runs (the one\n"
     "C extensions and ctypes users loading libevrt.so.0 share)."},
    {"_trace_start", m_trace_start, METH_O,
     "_trace_start($module, path, /)\n--\n\nevrt_trace_start(path)."},
    {"_trace_stop", m_trace_stop, METH_NOARGS,
     "_trace_stop($module, /)\n--\n\nevrt_trace_stop()."},
    {"strerror", m_strerror, METH_O,
     "strerror($module, code, /)\n--\n\n"
     "(name, message) of an evrt status code."},
    {NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "evrt._evrt",
    .m_doc = "C extension of the evrt package over the public evrt C API.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__evrt(void) {
  if (PyType_Ready(&evrtpy_DeviceType) < 0 ||
      evrtpy_stream_types_ready() < 0 || evrtpy_event_types_ready() < 0 ||
      PyType_Ready(&FlavorType) < 0 || PyType_Ready(&NoopType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  if (PyModule_AddFunctions(m, evrtpy_device_methods) < 0 ||
      PyModule_AddFunctions(m, evrtpy_launch_methods) < 0 ||
      PyModule_AddFunctions(m, evrtpy_check_methods) < 0 ||
      PyModule_AddFunctions(m, evrtpy_gputrace_methods) < 0 ||
      evrtpy_errors_init(m) < 0 || evrtpy_launch_init(m) < 0 ||
      evrtpy_graph_init(m) < 0)
    goto fail;
  Py_INCREF(&evrtpy_StreamType);
  Py_INCREF(&evrtpy_EventType);
  Py_INCREF(&evrtpy_DeviceType);
  Py_INCREF(&NoopType);
  Py_INCREF(&evrtpy_CudaStreamType);
  Py_INCREF(&evrtpy_CudaEventType);
  Py_INCREF(&evrtpy_XpuStreamType);
  Py_INCREF(&evrtpy_XpuEventType);
  if (PyModule_AddObject(m, "Stream", (PyObject *)&evrtpy_StreamType) < 0 ||
      PyModule_AddObject(m, "Event", (PyObject *)&evrtpy_EventType) < 0 ||
      PyModule_AddObject(m, "device", (PyObject *)&evrtpy_DeviceType) < 0 ||
      PyModule_AddObject(m, "_Noop", (PyObject *)&NoopType) < 0 ||
      PyModule_AddObject(m, "_CudaStream", (PyObject *)&evrtpy_CudaStreamType) <
          0 ||
      PyModule_AddObject(m, "_CudaEvent", (PyObject *)&evrtpy_CudaEventType) <
          0 ||
      PyModule_AddObject(m, "_XpuStream", (PyObject *)&evrtpy_XpuStreamType) <
          0 ||
      PyModule_AddObject(m, "_XpuEvent", (PyObject *)&evrtpy_XpuEventType) <
          0 ||
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
