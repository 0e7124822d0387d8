/*
 * event.c - evrt.Event, torch.Event's equivalent, over evrt_event_t; the
 * base of evrt.cuda.Event and evrt.xpu.Event.
 *
 * As in torch, the native event is created lazily: at the first record (on
 * the stream's device) or ipc_handle() (on the current device, or the
 * device given to the constructor).  Before that query() is True,
 * synchronize() and wait() do nothing and the handle (event_id) is 0.
 *
 * The rules and messages are torch's, per type: torch.cuda.Event's for the
 * cuda type and the generic evrt.Event, torch.xpu.Event's for xpu (its
 * elapsed_time checks run in another order and all raise RuntimeError), and
 * the generic torch.Event's for the generic class where they differ (its
 * device is a device object of its type, without an index until recorded).
 */
#include "evrt_module.h"

#include <stdio.h>
#include <string.h>

static const char MSG_TIMING[] =
    "Both events must be created with argument 'enable_timing=True'.";
static const char MSG_RECORDED[] =
    "Both events must be recorded before calculating elapsed time.";
static const char MSG_COMPLETED[] =
    "Both events must be completed before calculating elapsed time.";

/* evrt.cuda.Event and evrt.xpu.Event: C subtypes (see stream.c for why
 * not Python subclasses). */
PyTypeObject evrtpy_CudaEventType, evrtpy_XpuEventType;

PyTypeObject *evrtpy_event_class(int type) {
  return type == EVRTPY_CUDA  ? &evrtpy_CudaEventType
         : type == EVRTPY_XPU ? &evrtpy_XpuEventType
                              : &evrtpy_EventType;
}

/* The type a class forces (evrt.cuda.Event and its subclasses: cuda), or
 * -1 for evrt.Event (and its Python subclasses). */
static int forced_type(PyTypeObject *cls) {
  if (PyType_IsSubtype(cls, &evrtpy_CudaEventType))
    return EVRTPY_CUDA;
  if (PyType_IsSubtype(cls, &evrtpy_XpuEventType))
    return EVRTPY_XPU;
  return -1;
}

/* The generic class (evrt.Event and its Python subclasses): torch.Event's
 * behaviour where it differs from torch.cuda.Event's. */
static int is_generic(EventObject *e) { return forced_type(Py_TYPE(e)) < 0; }

PyObject *evrtpy_event_new(int type, unsigned flags) {
  PyTypeObject *cls = evrtpy_event_class(type);
  EventObject *e = (EventObject *)cls->tp_alloc(cls, 0);
  if (!e)
    return NULL;
  e->flags = flags;
  e->want_device = -1;
  e->type = (unsigned char)type;
  return (PyObject *)e;
}

/* evrt.Event(device=None, *, enable_timing=False, blocking=False,
 *            interprocess=False, external=False);
 * evrt.cuda.Event(enable_timing=False, blocking=False, interprocess=False,
 *                 external=False); evrt.xpu.Event(enable_timing=False,
 * blocking=False, interprocess=False). */
static PyObject *Event_new(PyTypeObject *cls, PyObject *args,
                           PyObject *kwds) {
  static char *kwlist[] = {"device",       "enable_timing", "blocking",
                           "interprocess", "external",      NULL};
  static char *cuda_kwlist[] = {"enable_timing", "blocking", "interprocess",
                                "external", NULL};
  /* its own list: with cuda_kwlist's four names for three specifiers,
   * every keyword call raised SystemError */
  static char *xpu_kwlist[] = {"enable_timing", "blocking", "interprocess",
                               NULL};
  PyObject *dev_o = Py_None;
  /* "b" (an integer 0..255, bool included), as torch's Event.cpp parses
   * them: "p" took any object by its truth, so enable_timing="yes" made a
   * timing event where torch raises TypeError */
  unsigned char timing = 0, blocking = 0, ipc = 0, external = 0;
  int forced = forced_type(cls);
  if (forced == EVRTPY_CUDA) {
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|bbbb:Event", cuda_kwlist,
                                     &timing, &blocking, &ipc, &external))
      return NULL;
  } else if (forced == EVRTPY_XPU) {
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|bbb:Event", xpu_kwlist,
                                     &timing, &blocking, &ipc))
      return NULL;
  } else if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$bbbb:Event", kwlist,
                                          &dev_o, &timing, &blocking, &ipc,
                                          &external)) {
    return NULL;
  }
  int type = forced >= 0 ? forced : evrtpy_accelerator;
  int dev = -1;
  if (dev_o != Py_None &&
      evrtpy_device_arg(dev_o, type,
                        EVRTPY_DEV_OPTIONAL | EVRTPY_DEV_NEG_OK |
                            EVRTPY_DEV_ANY_GPU,
                        &dev, &type) < 0)
    return NULL;
  /* An index given here only chooses where ipc_handle() creates a
   * never-recorded event: as in torch, the first record decides. */
  if (PyUnicode_Check(dev_o) && !strchr(PyUnicode_AsUTF8(dev_o), ':'))
    dev = -1;
  if (evrtpy_Device_Check(dev_o) && ((DeviceObject *)dev_o)->index < 0)
    dev = -1;
  EventObject *self = (EventObject *)cls->tp_alloc(cls, 0);
  if (!self)
    return NULL;
  /* No native event yet, and no validation: as in torch, a bad flag
   * combination (interprocess with timing) surfaces at the first record or
   * ipc_handle(). */
  self->flags = (timing ? EVRT_EVENT_TIMING : 0) |
                (blocking ? EVRT_EVENT_BLOCKING_SYNC : 0) |
                (ipc ? EVRT_EVENT_INTERPROCESS : 0);
  self->want_device = dev;
  self->type = (unsigned char)type;
  self->external = external != 0;
  return (PyObject *)self;
}

static void Event_dealloc(EventObject *self) {
  if (self->weakreflist)
    PyObject_ClearWeakRefs((PyObject *)self);
  /* Returns at once even with pending generations; waiters are unaffected.
   * A failure (library shut down) leaves nothing to free. */
  if (self->h) {
    EVRTPY_GPU_TRACE(self->type, EVRTPY_TRACE_EVENT_DELETION, 1,
                     (uint64_t)(uintptr_t)self->h, 0);
    (void)evrt_event_destroy(self->h);
  }
  self->h = NULL;
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int event_create(EventObject *self) {
  if (self->h)
    return 0;
  evrt_status_t st = evrt_event_create(&self->h, self->flags);
  if (st) {
    self->h = NULL;
    evrtpy_raise(st, "evrt_event_create");
    return -1;
  }
  return 0;
}

/* The native event's device, -1 if it has none yet. */
static int event_device(EventObject *self, int *dev) {
  *dev = -1;
  if (!self->h)
    return 0;
  evrt_status_t st = evrt_event_get_device(self->h, dev);
  if (st) {
    evrtpy_raise(st, "evrt_event_get_device");
    return -1;
  }
  return 0;
}

static int mismatch(EventObject *e, int ev_dev, int st_dev) {
  if (is_generic(e))
    PyErr_Format(PyExc_RuntimeError,
                 "Event device index %d does not match recording stream's "
                 "device index %d.",
                 ev_dev, st_dev);
  else
    PyErr_Format(PyExc_RuntimeError,
                 "Event device %d does not match recording stream's device "
                 "%d.",
                 ev_dev, st_dev);
  return -1;
}

int evrtpy_event_record_on(EventObject *self, evrt_stream_t h, int sdev) {
  int dev;
  /* An earlier record fixed the device: evrt checks it (a failing record
   * changes nothing) and the message is made from its status. */
  int created_here = !self->h;
  if (event_create(self) < 0)
    return -1;
  evrt_status_t st = evrtpy_record_maybe_external(self->h, h, self->external);
  if (st == EVRT_SUCCESS) {
    if (evrtpy_gpu_trace_on) {
      if (created_here)
        evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_CREATION, 1,
                              (uint64_t)(uintptr_t)self->h, 0);
      evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_RECORD, 2,
                            (uint64_t)(uintptr_t)self->h,
                            evrtpy_gpu_trace_stream(self->type, h));
    }
    return 0;
  }
  if (st == EVRT_ERROR_DEVICE_MISMATCH &&
      evrt_event_get_device(self->h, &dev) == EVRT_SUCCESS && dev >= 0)
    mismatch(self, dev, sdev);
  else
    evrtpy_raise(st, "evrt_event_record");
  if (created_here) { /* a failing call changes nothing */
    (void)evrt_event_destroy(self->h);
    self->h = NULL;
  }
  return -1;
}

PyObject *evrtpy_event_wait_on(EventObject *self, evrt_stream_t h) {
  /* Never created: an empty dependency, nothing to enqueue. */
  if (!self->h)
    Py_RETURN_NONE;
  evrt_status_t st = evrtpy_wait_maybe_external(h, self->h, self->external);
  if (st)
    return evrtpy_raise(st, "evrt_stream_wait_event");
  if (evrtpy_gpu_trace_on)
    evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_WAIT, 2,
                          (uint64_t)(uintptr_t)self->h,
                          evrtpy_gpu_trace_stream(self->type, h));
  Py_RETURN_NONE;
}

/* The (stream=None) argument of record and wait: the stream's handle and
 * device; None is the calling thread's current stream of the current
 * device.  0 or -1. */
static int stream_arg(const char *fn, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, evrt_stream_t *h, int *dev) {
  PyObject *s = NULL;
  if (nargs == 1 && !kwnames) {
    s = args[0];
  } else if (nargs || kwnames) {
    if (nargs > 1 || (kwnames && (nargs || PyTuple_GET_SIZE(kwnames) != 1)) ||
        (kwnames && PyUnicode_CompareWithASCIIString(
                        PyTuple_GET_ITEM(kwnames, 0), "stream") != 0)) {
      PyErr_Format(PyExc_TypeError,
                   "%s() takes one optional argument, stream", fn);
      return -1;
    }
    s = args[0];
  }
  if (!s || s == Py_None) {
    if (evrt_get_device(dev) != EVRT_SUCCESS)
      return evrtpy_get_current(dev);
    *h = evrtpy_current_handle(*dev); /* NULL: the default stream */
    return 0;
  }
  if (!evrtpy_Stream_Check(s)) {
    PyErr_Format(PyExc_TypeError, "%s() expects a stream, not %.100s", fn,
                 Py_TYPE(s)->tp_name);
    return -1;
  }
  *h = ((StreamObject *)s)->h;
  *dev = ((StreamObject *)s)->device;
  return 0;
}

static PyObject *Event_record(EventObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
  evrt_stream_t h = NULL;
  int dev = 0;
  if (stream_arg("record", args, nargs, kwnames, &h, &dev) < 0)
    return NULL;
  if (evrtpy_event_record_on(self, h, dev) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *Event_wait(EventObject *self, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames) {
  evrt_stream_t h = NULL;
  int dev = 0;
  if (stream_arg("wait", args, nargs, kwnames, &h, &dev) < 0)
    return NULL;
  return evrtpy_event_wait_on(self, h);
}

static PyObject *Event_query(EventObject *self, PyObject *unused) {
  if (!self->h)
    Py_RETURN_TRUE;
  evrt_status_t st;
  if (self->imported) {
    /* May have to look at the exporting process. */
    Py_BEGIN_ALLOW_THREADS
    st = evrt_event_query(self->h);
    Py_END_ALLOW_THREADS
  } else {
    st = evrt_event_query(self->h);
  }
  if (st == EVRT_SUCCESS)
    Py_RETURN_TRUE;
  if (st == EVRT_NOT_READY)
    Py_RETURN_FALSE;
  return evrtpy_raise(st, "evrt_event_query");
}

static PyObject *Event_synchronize(EventObject *self, PyObject *unused) {
  if (!self->h)
    Py_RETURN_NONE;
  evrt_status_t st;
  /* An imported event's poll may look at the exporting process: no poll
   * with the GIL held. */
  if (evrtpy_event_wait(self->h, -1, !self->imported, &st) < 0)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_event_synchronize");
  EVRTPY_GPU_TRACE(self->type, EVRTPY_TRACE_EVENT_SYNCHRONIZATION, 1,
                   (uint64_t)(uintptr_t)self->h, 0);
  Py_RETURN_NONE;
}

static const char *upper_type(int type) {
  return type == EVRTPY_CUDA ? "CUDA" : type == EVRTPY_XPU ? "XPU" : "EVRT";
}

static PyObject *Event_elapsed_time(EventObject *self, PyObject *arg) {
  if (!evrtpy_Event_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "elapsed_time() expects an event, not %.100s",
                        Py_TYPE(arg)->tp_name);
  EventObject *end = (EventObject *)arg;
  int timing = (self->flags & EVRT_EVENT_TIMING) &&
               (end->flags & EVRT_EVENT_TIMING);
  int xpu_rules = self->type == EVRTPY_XPU && !is_generic(self);
  if (xpu_rules) {
    /* torch.xpu.Event: recorded, completed, timing; all RuntimeError */
    if (!self->h || !end->h)
      return PyErr_Format(PyExc_RuntimeError, "%s", MSG_RECORDED);
    if (evrt_event_query(self->h) == EVRT_NOT_READY ||
        evrt_event_query(end->h) == EVRT_NOT_READY)
      return PyErr_Format(PyExc_RuntimeError, "%s", MSG_COMPLETED);
    if (!timing)
      return PyErr_Format(PyExc_RuntimeError, "%s", MSG_TIMING);
  } else {
    /* torch.Event first checks the types; then, as torch.cuda.Event:
     * timing, recorded, completed, and the backend (device). */
    if (self->type != end->type && is_generic(self))
      return PyErr_Format(PyExc_RuntimeError,
                          "Event device type %s does not match other's "
                          "device type %s.",
                          upper_type(self->type), upper_type(end->type));
    if (!timing)
      return PyErr_Format(PyExc_ValueError, "%s", MSG_TIMING);
    if (!self->h || !end->h)
      return PyErr_Format(PyExc_ValueError, "%s", MSG_RECORDED);
  }
  float ms = 0;
  evrt_status_t st = evrt_event_elapsed_time(&ms, self->h, end->h);
  switch (st) {
  case EVRT_SUCCESS:
    return PyFloat_FromDouble((double)ms);
  case EVRT_ERROR_TIMING_DISABLED:
    return PyErr_Format(xpu_rules ? PyExc_RuntimeError : PyExc_ValueError,
                        "%s", MSG_TIMING);
  case EVRT_ERROR_NOT_RECORDED:
    return PyErr_Format(xpu_rules ? PyExc_RuntimeError : PyExc_ValueError,
                        "%s", MSG_RECORDED);
  case EVRT_ERROR_NOT_COMPLETE:
    return PyErr_Format(PyExc_RuntimeError, "%s", MSG_COMPLETED);
  case EVRT_ERROR_DEVICE_MISMATCH: {
    int a = -1, b = -1;
    (void)evrt_event_get_device(self->h, &a);
    (void)evrt_event_get_device(end->h, &b);
    return PyErr_Format(PyExc_RuntimeError,
                        "Both events must be on the same device to calculate "
                        "elapsed time, but got devices %d and %d.",
                        a, b);
  }
  default:
    return evrtpy_raise(st, "evrt_event_elapsed_time");
  }
}

static PyObject *Event_ipc_handle(EventObject *self, PyObject *unused) {
  if (self->type == EVRTPY_XPU && !(self->flags & EVRT_EVENT_INTERPROCESS))
    return PyErr_Format(PyExc_RuntimeError,
                        "XPUEvent ipc_handle() requires the event to be "
                        "constructed with interprocess=True.");
  int created_here = !self->h;
  if (event_create(self) < 0)
    return NULL;
  /* Never recorded: evrt initializes the event on the calling thread's
   * current device, so switch to the device given at construction first. */
  int cur = -1, switched = 0;
  evrt_status_t st;
  if (created_here && self->want_device >= 0) {
    if (evrtpy_get_current(&cur) < 0)
      goto fail;
    if (cur != self->want_device) {
      if (evrtpy_set_device(self->want_device) < 0)
        goto fail;
      switched = 1;
    }
  }
  evrt_ipc_event_handle_t hd;
  memset(&hd, 0, sizeof hd);
  st = evrt_event_ipc_handle(self->h, &hd);
  if (st)
    evrtpy_raise(st, "evrt_event_ipc_handle");
  if (switched)
    (void)evrt_set_device(cur);
  if (st)
    goto fail;
  if (created_here)
    EVRTPY_GPU_TRACE(self->type, EVRTPY_TRACE_EVENT_CREATION, 1,
                     (uint64_t)(uintptr_t)self->h, 0);
  return PyBytes_FromStringAndSize((const char *)hd.reserved, sizeof hd);
fail:
  /* Leave the object as it was before the call. */
  if (created_here) {
    (void)evrt_event_destroy(self->h);
    self->h = NULL;
  }
  return NULL;
}

static const char *handle_type_name(int type) {
  return type == EVRTPY_CUDA  ? "cudaIpcEventHandle_t"
         : type == EVRTPY_XPU ? "XPU IPC event handle"
                              : "evrt_ipc_event_handle_t";
}

static PyObject *Event_from_ipc_handle(PyObject *cls_o, PyObject *args,
                                       PyObject *kwds) {
  static char *kwlist[] = {"device", "handle", NULL};
  PyTypeObject *cls = (PyTypeObject *)cls_o;
  PyObject *dev_o;
  Py_buffer buf;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oy*:from_ipc_handle", kwlist,
                                   &dev_o, &buf))
    return NULL;
  int forced = forced_type(cls);
  int type = forced >= 0 ? forced : evrtpy_accelerator;
  if (buf.len != EVRT_IPC_HANDLE_SIZE) {
    PyErr_Format(PyExc_RuntimeError,
                 "%s expects byte-like object of size %d, but got %zd",
                 handle_type_name(type), EVRT_IPC_HANDLE_SIZE, buf.len);
    PyBuffer_Release(&buf);
    return NULL;
  }
  int dev;
  /* A device of another kind: torch's message for the event's kind. */
  if (forced >= 0 && (PyUnicode_Check(dev_o) || evrtpy_Device_Check(dev_o))) {
    PyObject *d = PyObject_CallOneArg((PyObject *)&evrtpy_DeviceType, dev_o);
    if (!d) {
      PyBuffer_Release(&buf);
      return NULL;
    }
    int dt = ((DeviceObject *)d)->type;
    if (dt != forced) {
      PyErr_Format(PyExc_RuntimeError,
                   "Event can only be created on %s devices, but got device "
                   "type %s",
                   upper_type(forced), evrtpy_type_name(dt));
      Py_DECREF(d);
      PyBuffer_Release(&buf);
      return NULL;
    }
    Py_DECREF(d);
  }
  if (evrtpy_device_arg(dev_o, type,
                        EVRTPY_DEV_OPTIONAL |
                            (forced < 0 ? EVRTPY_DEV_ANY_GPU : 0),
                        &dev, forced < 0 ? &type : NULL) < 0) {
    PyBuffer_Release(&buf);
    return NULL;
  }
  evrt_ipc_event_handle_t hd;
  memcpy(hd.reserved, buf.buf, sizeof hd.reserved);
  PyBuffer_Release(&buf);
  evrt_event_t h = NULL;
  evrt_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = evrt_event_ipc_open(&h, &hd);
  Py_END_ALLOW_THREADS
  if (st)
    return evrtpy_raise(st, "evrt_event_ipc_open");
  evrt_event_info_t info = {.struct_size = sizeof info};
  if ((st = evrt_event_get_info(h, &info))) {
    evrtpy_raise(st, "evrt_event_get_info");
    (void)evrt_event_destroy(h);
    return NULL;
  }
  if (info.device >= 0 && info.device != dev) {
    (void)evrt_event_destroy(h);
    return PyErr_Format(PyExc_RuntimeError,
                        "The IPC handle is of an event on device %d, not on "
                        "device %d.",
                        info.device, dev);
  }
  EventObject *self = (EventObject *)cls->tp_alloc(cls, 0);
  if (!self) {
    (void)evrt_event_destroy(h);
    return NULL;
  }
  self->h = h;
  self->flags = info.flags;
  self->want_device = dev;
  self->type = (unsigned char)type;
  self->imported = 1;
  EVRTPY_GPU_TRACE(self->type, EVRTPY_TRACE_EVENT_CREATION, 1,
                   (uint64_t)(uintptr_t)h, 0);
  return (PyObject *)self;
}

/* Pickling (multiprocessing): the handle is taken first, so that the
 * device of a never-recorded event is known, as torch.multiprocessing's
 * reduction does; unpickling opens it with from_ipc_handle. */
static PyObject *Event_reduce(EventObject *self, PyObject *unused) {
  PyObject *handle = Event_ipc_handle(self, NULL);
  if (!handle)
    return NULL;
  int dev;
  if (event_device(self, &dev) < 0) {
    Py_DECREF(handle);
    return NULL;
  }
  PyObject *fn = PyObject_GetAttrString((PyObject *)Py_TYPE(self),
                                        "from_ipc_handle");
  PyObject *d = fn ? evrtpy_device_new(self->type, dev) : NULL;
  PyObject *r = d ? Py_BuildValue("(O(OO))", fn, d, handle) : NULL;
  Py_XDECREF(d);
  Py_XDECREF(fn);
  Py_DECREF(handle);
  return r;
}

/* torch's reprs: torch.cuda.Event's, torch.xpu.Event's, torch.Event's. */
static PyObject *Event_repr(EventObject *self) {
  unsigned long long id = (unsigned long long)(uintptr_t)self->h;
  char hex[24]; /* PyUnicode_FromFormat has no %llx */
  snprintf(hex, sizeof hex, "%#llx", id);
  switch (forced_type(Py_TYPE(self))) {
  case EVRTPY_CUDA:
    if (!id)
      return PyUnicode_FromString("<torch.cuda.Event uninitialized>");
    return PyUnicode_FromFormat("<torch.cuda.Event %s>", hex);
  case EVRTPY_XPU:
    if (!id)
      return PyUnicode_FromString("torch.xpu.Event(uninitialized)");
    return PyUnicode_FromFormat("torch.xpu.Event(sycl_event=%s)", hex);
  default: {
    int dev = -1;
    if (self->h && evrt_event_get_device(self->h, &dev) != EVRT_SUCCESS)
      dev = -1;
    return PyUnicode_FromFormat(
        "torch.Event device_type=%s, device_index=%d, event_flag=%d, "
        "event_id=%llu",
        evrtpy_type_name(self->type), dev,
        (self->flags & EVRT_EVENT_TIMING) ? 1 : 0, id);
  }
  }
}

static PyObject *Event_get_device(EventObject *self, void *c) {
  int dev;
  if (event_device(self, &dev) < 0)
    return NULL;
  /* torch.cuda.Event / torch.xpu.Event: None until created; torch.Event: a
   * device of its type without an index. */
  if (dev < 0 && !is_generic(self))
    Py_RETURN_NONE;
  return evrtpy_device_new(self->type, dev);
}

static PyObject *Event_get_event_id(EventObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}

static PyObject *Event_get_flag(EventObject *self, void *c) {
  return PyBool_FromLong((self->flags & (unsigned)(uintptr_t)c) != 0);
}

static PyObject *Event_get_imported(EventObject *self, void *c) {
  return PyBool_FromLong(self->imported);
}

static PyObject *Event_get_external(EventObject *self, void *c) {
  return PyBool_FromLong(self->external);
}

static PyMethodDef Event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))Event_record,
     METH_FASTCALL | METH_KEYWORDS,
     "record($self, /, stream=None)\n--\n\n"
     "Record the event in a stream (default: the current stream).\n\n"
     "It captures all the work submitted to the stream so far.  The first\n"
     "record fixes the event's device; later ones must be on it."},
    {"wait", (PyCFunction)(void (*)(void))Event_wait,
     METH_FASTCALL | METH_KEYWORDS,
     "wait($self, /, stream=None)\n--\n\n"
     "Make all future work submitted to the stream (default: the current\n"
     "stream) wait for this event.  Streams of any device may wait."},
    {"query", (PyCFunction)Event_query, METH_NOARGS,
     "query($self, /)\n--\n\n"
     "True if all the work captured by the event has completed."},
    {"synchronize", (PyCFunction)Event_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Wait until all the work captured by the event is done.\n\n"
     "The GIL is released while waiting and Ctrl-C interrupts the wait."},
    {"elapsed_time", (PyCFunction)Event_elapsed_time, METH_O,
     "elapsed_time($self, end_event, /)\n--\n\n"
     "Milliseconds between this event's record and end_event's (both\n"
     "created with enable_timing=True, recorded and complete)."},
    {"ipc_handle", (PyCFunction)Event_ipc_handle, METH_NOARGS,
     "ipc_handle($self, /)\n--\n\n"
     "The 64-byte handle of an interprocess event for another process.\n\n"
     "If not recorded yet, the event is created on the current device (or\n"
     "the device given to the constructor)."},
    {"from_ipc_handle", (PyCFunction)(void (*)(void))Event_from_ipc_handle,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_ipc_handle($cls, /, device, handle)\n--\n\n"
     "Open an event that another process exported with ipc_handle()."},
    {"__reduce__", (PyCFunction)Event_reduce, METH_NOARGS,
     "Pickle an interprocess event as (device, ipc_handle())."},
    {NULL}};

static PyGetSetDef Event_getset[] = {
    {"device", (getter)Event_get_device, NULL,
     "The event's device once created (cuda/xpu kinds: None before; the\n"
     "generic kind: a device of its type without an index before).",
     NULL},
    {"event_id", (getter)Event_get_event_id, NULL,
     "The native handle (the evrt_event_t the C API takes), 0 before the\n"
     "event is created.",
     NULL},
    {"handle", (getter)Event_get_event_id, NULL,
     "The evrt_event_t as an int, 0 before creation (= event_id).", NULL},
    {"enable_timing", (getter)Event_get_flag, NULL, "The timing flag.",
     (void *)(uintptr_t)EVRT_EVENT_TIMING},
    {"blocking", (getter)Event_get_flag, NULL,
     "The blocking flag: synchronize() parks the thread at once.",
     (void *)(uintptr_t)EVRT_EVENT_BLOCKING_SYNC},
    {"interprocess", (getter)Event_get_flag, NULL, "The interprocess flag.",
     (void *)(uintptr_t)EVRT_EVENT_INTERPROCESS},
    {"imported", (getter)Event_get_imported, NULL,
     "True if opened from an interprocess handle.", NULL},
    {"external", (getter)Event_get_external, NULL,
     "torch.cuda.Event's external flag: in a stream capture, record and\n"
     "wait make external event nodes (docs/capture.md).",
     NULL},
    {NULL}};

static PyObject *Event_as_parameter(EventObject *self, void *c) {
  return evrtpy_c_void_p((unsigned long long)(uintptr_t)self->h);
}

static PyGetSetDef CudaEvent_getset[] = {
    {"cuda_event", (getter)Event_get_event_id, NULL,
     "The event's handle as an int, 0 before the event is created: the\n"
     "evrt_event_t the C API takes.",
     NULL},
    {"_as_parameter_", (getter)Event_as_parameter, NULL,
     "ctypes.c_void_p(cuda_event), for ctypes calls.", NULL},
    {NULL}};

static PyGetSetDef XpuEvent_getset[] = {
    {"sycl_event", (getter)Event_get_event_id, NULL,
     "The event's handle as an int, 0 before the event is created.", NULL},
    {"_as_parameter_", (getter)Event_as_parameter, NULL,
     "ctypes.c_void_p(sycl_event), for ctypes calls.", NULL},
    {NULL}};

#define NEVENT_METHODS (sizeof Event_methods / sizeof Event_methods[0])
static PyMethodDef CudaEvent_methods[NEVENT_METHODS];
static PyMethodDef XpuEvent_methods[NEVENT_METHODS];

PyTypeObject evrtpy_CudaEventType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.cuda.Event",
    .tp_basicsize = sizeof(EventObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc =
        "Event(enable_timing=False, blocking=False, interprocess=False, "
        "external=False)\n--\n\n"
        "Wrapper around an evrt event, as torch.cuda.Event.\n\n"
        "The native event is created lazily at the first record() or\n"
        "ipc_handle().  After creation only streams of the same device may\n"
        "record it; streams of any device may wait on it.\n\n"
        "Args:\n"
        "    enable_timing (bool, optional): measure time (default: False).\n"
        "    blocking (bool, optional): synchronize() parks the thread at\n"
        "        once instead of spinning first.\n"
        "    interprocess (bool): shareable with other processes.\n"
        "    external (bool, optional): in a stream capture, record and\n"
        "        wait make external event nodes (evrt.cuda.graph).",
    .tp_methods = CudaEvent_methods,
    .tp_getset = CudaEvent_getset,
    .tp_base = &evrtpy_EventType,
    .tp_new = Event_new,
};

PyTypeObject evrtpy_XpuEventType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.xpu.Event",
    .tp_basicsize = sizeof(EventObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc =
        "Event(enable_timing=False, blocking=False, interprocess=False)\n"
        "--\n\n"
        "Wrapper around an evrt event, as torch.xpu.Event.\n\n"
        "The native event is created lazily at the first record().  After\n"
        "creation only streams of the same device may record it; streams of\n"
        "any device may wait on it.\n\n"
        "Args:\n"
        "    enable_timing (bool, optional): measure time (default: False).\n"
        "    blocking (bool, optional): synchronize() parks the thread at\n"
        "        once.  (torch.xpu is adding it.)\n"
        "    interprocess (bool, optional): shareable with other processes;\n"
        "        ipc_handle() requires it.  (torch.xpu is adding IPC.)",
    .tp_methods = XpuEvent_methods,
    .tp_getset = XpuEvent_getset,
    .tp_base = &evrtpy_EventType,
    .tp_new = Event_new,
};

int evrtpy_event_types_ready(void) {
  memcpy(CudaEvent_methods, Event_methods, sizeof Event_methods);
  memcpy(XpuEvent_methods, Event_methods, sizeof Event_methods);
  return PyType_Ready(&evrtpy_EventType) < 0 ||
                 PyType_Ready(&evrtpy_CudaEventType) < 0 ||
                 PyType_Ready(&evrtpy_XpuEventType) < 0
             ? -1
             : 0;
}

PyTypeObject evrtpy_EventType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.Event",
    .tp_basicsize = sizeof(EventObject),
    .tp_dealloc = (destructor)Event_dealloc,
    .tp_repr = (reprfunc)Event_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc =
        "Event(device=None, *, enable_timing=False, blocking=False, "
        "interprocess=False)\n--\n\n"
        "A marker recorded into a stream (torch.Event's equivalent).\n\n"
        "The native event is created lazily at the first record() (on the\n"
        "stream's device) or ipc_handle().  `device` chooses the event's\n"
        "type ('cuda:0' gives a cuda one; default: the current\n"
        "accelerator's) and the device ipc_handle() uses before a record.\n"
        "A bool is not a device: Event(True) is a TypeError.",
    .tp_weaklistoffset = offsetof(EventObject, weakreflist),
    .tp_methods = Event_methods,
    .tp_getset = Event_getset,
    .tp_new = Event_new,
};
