/*
 * gputrace.c - torch's GPU trace hooks (torch.cuda._gpu_trace,
 * torch.xpu._gpu_trace): once evrt._activate_gpu_trace() has run, the
 * stream and event calls of the package tell the Python callbacks
 * registered for their device type what they did, with the handles as that
 * type shows them (cuda_stream / sycl_queue, cuda_event / sycl_event).
 *
 * The dispatcher (evrt._gpu_trace._fire) is called as fire(type, what,
 * *args) with the GIL held, on the calling thread, after the call it
 * reports succeeded; it never raises into the caller (an exception is
 * reported to sys.unraisablehook), and the caller's pending exception, if
 * any (a dealloc during unwinding), is kept.
 *
 * Off (the default), each hook costs one load of evrtpy_gpu_trace_on and a
 * predictable branch.  Both globals are read and written with the GIL held
 * only, so they need no atomics.
 */
#include "evrt_module.h"

int evrtpy_gpu_trace_on;
static PyObject *fire; /* evrt._gpu_trace._fire; set once, kept */

static const char *const what_names[EVRTPY_TRACE_N] = {
    [EVRTPY_TRACE_EVENT_CREATION] = "event_creation",
    [EVRTPY_TRACE_EVENT_DELETION] = "event_deletion",
    [EVRTPY_TRACE_EVENT_RECORD] = "event_record",
    [EVRTPY_TRACE_EVENT_WAIT] = "event_wait",
    [EVRTPY_TRACE_EVENT_SYNCHRONIZATION] = "event_synchronization",
    [EVRTPY_TRACE_STREAM_CREATION] = "stream_creation",
    [EVRTPY_TRACE_STREAM_SYNCHRONIZATION] = "stream_synchronization",
    [EVRTPY_TRACE_DEVICE_SYNCHRONIZATION] = "device_synchronization",
};

void evrtpy_gpu_trace_fire(int type, int what, int nargs, uint64_t a,
                           uint64_t b) {
  if (!fire)
    return;
  PyObject *exc_t, *exc_v, *exc_tb;
  PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
  PyObject *r = NULL;
  switch (nargs) {
  case 0:
    r = PyObject_CallFunction(fire, "is", type, what_names[what]);
    break;
  case 1:
    r = PyObject_CallFunction(fire, "isK", type, what_names[what],
                              (unsigned long long)a);
    break;
  default:
    r = PyObject_CallFunction(fire, "isKK", type, what_names[what],
                              (unsigned long long)a, (unsigned long long)b);
    break;
  }
  if (!r)
    PyErr_WriteUnraisable(fire);
  Py_XDECREF(r);
  PyErr_Restore(exc_t, exc_v, exc_tb);
}

uint64_t evrtpy_gpu_trace_stream(int type, evrt_stream_t h) {
  /* NULL is the current device's default stream; a default stream shows as
   * its stream_id (0 for the cuda type, CUDA's legacy stream). */
  int device = -1;
  if ((h ? evrt_stream_get_device(h, &device) : evrt_get_device(&device)) !=
      EVRT_SUCCESS)
    return (uint64_t)(uintptr_t)h;
  PyObject *d = evrtpy_default_stream(type, device);
  if (!d) {
    PyErr_Clear();
    return (uint64_t)(uintptr_t)h;
  }
  StreamObject *ds = (StreamObject *)d;
  uint64_t v =
      (!h || h == ds->h) ? evrtpy_stream_id(ds) : (uint64_t)(uintptr_t)h;
  Py_DECREF(d);
  return v;
}

static PyObject *m_activate(PyObject *m, PyObject *fn) {
  if (!PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError,
                        "_activate_gpu_trace() expects a callable");
  if (!fire) {
    Py_INCREF(fn);
    fire = fn;
  }
  evrtpy_gpu_trace_on = 1;
  Py_RETURN_NONE;
}

PyMethodDef evrtpy_gputrace_methods[] = {
    {"_activate_gpu_trace", (PyCFunction)m_activate, METH_O,
     "_activate_gpu_trace($module, fire, /)\n--\n\n"
     "Turn the GPU trace hooks on for the process (evrt._gpu_trace)."},
    {NULL, NULL, 0, NULL},
};
