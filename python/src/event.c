/*
 * event.c - evrt._evrt._EventBase: a lazily created event over evrt_event_t,
 * with torch.cuda.Event's rules, messages and error types.
 */
#include "evrt_module.h"

#include <string.h>

static const char MSG_TIMING[] =
    "Both events must be created with argument 'enable_timing=True'.";
static const char MSG_RECORDED[] =
    "Both events must be recorded before calculating elapsed time.";
static const char MSG_COMPLETED[] =
    "Both events must be completed before calculating elapsed time.";

#define Event_Check(o) PyObject_TypeCheck((o), &evrtpy_EventType)

static PyObject *Event_new(PyTypeObject *type, PyObject *args,
                           PyObject *kwds) {
  static char *kwlist[] = {"device", "enable_timing", "blocking",
                           "interprocess", NULL};
  PyObject *dev_o = Py_None;
  int timing = 0, blocking = 0, ipc = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$ppp:Event", kwlist, &dev_o,
                                   &timing, &blocking, &ipc))
    return NULL;
  int dev = -1;
  if (dev_o != Py_None && evrtpy_parse_device(dev_o, &dev) < 0)
    return NULL;
  EventObject *self = (EventObject *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  /* No native event yet, and no validation: as in torch, a bad flag
   * combination (interprocess with timing) surfaces at the first record or
   * ipc_handle(). */
  self->flags = (timing ? EVRT_EVENT_TIMING : 0) |
                (blocking ? EVRT_EVENT_BLOCKING_SYNC : 0) |
                (ipc ? EVRT_EVENT_INTERPROCESS : 0);
  self->want_device = dev;
  return (PyObject *)self;
}

static void Event_dealloc(EventObject *self) {
  if (self->weakreflist)
    PyObject_ClearWeakRefs((PyObject *)self);
  /* Returns at once even with pending generations; waiters are unaffected.
   * A failure (library shut down) leaves nothing to free. */
  if (self->h)
    (void)evrt_event_destroy(self->h);
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

static int event_device(EventObject *self, int *dev) {
  if (!self->h) {
    *dev = self->want_device;
    return 0;
  }
  evrt_status_t st = evrt_event_get_device(self->h, dev);
  if (st) {
    evrtpy_raise(st, "evrt_event_get_device");
    return -1;
  }
  if (*dev < 0)
    *dev = self->want_device;
  return 0;
}

static PyObject *mismatch(int ev_dev, int st_dev) {
  return PyErr_Format(PyExc_RuntimeError,
                      "Event device %d does not match recording stream's "
                      "device %d.",
                      ev_dev, st_dev);
}

static PyObject *Event_record(EventObject *self, PyObject *arg) {
  if (!evrtpy_Stream_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "record() expects an evrt.Stream, not %.100s",
                        Py_TYPE(arg)->tp_name);
  StreamObject *s = (StreamObject *)arg;
  int dev;
  if (event_device(self, &dev) < 0)
    return NULL;
  /* An explicit device or an earlier record fixed the device: check it
   * before creating anything (a failing call changes nothing). */
  if (dev >= 0 && dev != s->device)
    return mismatch(dev, s->device);
  if (event_create(self) < 0)
    return NULL;
  evrt_status_t st = evrt_event_record(self->h, s->h);
  if (st == EVRT_ERROR_DEVICE_MISMATCH) {
    if (evrt_event_get_device(self->h, &dev) == EVRT_SUCCESS)
      return mismatch(dev, s->device);
  }
  if (st)
    return evrtpy_raise(st, "evrt_event_record");
  Py_RETURN_NONE;
}

static PyObject *Event_wait(EventObject *self, PyObject *arg) {
  if (!evrtpy_Stream_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "wait() expects an evrt.Stream, not %.100s",
                        Py_TYPE(arg)->tp_name);
  /* Never created: an empty dependency, nothing to enqueue. */
  if (!self->h)
    Py_RETURN_NONE;
  evrt_status_t st = evrt_stream_wait_event(((StreamObject *)arg)->h, self->h);
  if (st)
    return evrtpy_raise(st, "evrt_stream_wait_event");
  Py_RETURN_NONE;
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
  Py_RETURN_NONE;
}

static PyObject *Event_elapsed_time(EventObject *self, PyObject *arg) {
  if (!Event_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "elapsed_time() expects an evrt.Event, not %.100s",
                        Py_TYPE(arg)->tp_name);
  EventObject *end = (EventObject *)arg;
  /* torch's order: timing, recorded, completed, then the backend (device). */
  if (!(self->flags & EVRT_EVENT_TIMING) || !(end->flags & EVRT_EVENT_TIMING))
    return PyErr_Format(PyExc_ValueError, "%s", MSG_TIMING);
  if (!self->h || !end->h)
    return PyErr_Format(PyExc_ValueError, "%s", MSG_RECORDED);
  float ms = 0;
  evrt_status_t st = evrt_event_elapsed_time(&ms, self->h, end->h);
  switch (st) {
  case EVRT_SUCCESS:
    return PyFloat_FromDouble((double)ms);
  case EVRT_ERROR_TIMING_DISABLED:
    return PyErr_Format(PyExc_ValueError, "%s", MSG_TIMING);
  case EVRT_ERROR_NOT_RECORDED:
    return PyErr_Format(PyExc_ValueError, "%s", MSG_RECORDED);
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
  int created_here = !self->h;
  if (event_create(self) < 0)
    return NULL;
  /* Never recorded: evrt initializes the event on the calling thread's
   * current device, so switch to the device given at construction first. */
  int cur = -1, switched = 0;
  evrt_status_t st;
  if (self->want_device >= 0) {
    if (evrtpy_get_current(&cur) < 0)
      goto fail;
    if (cur != self->want_device) {
      if ((st = evrt_set_device(self->want_device))) {
        evrtpy_raise(st, "evrt_set_device");
        goto fail;
      }
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
  return PyBytes_FromStringAndSize((const char *)hd.reserved, sizeof hd);
fail:
  /* Leave the object as it was before the call. */
  if (created_here) {
    (void)evrt_event_destroy(self->h);
    self->h = NULL;
  }
  return NULL;
}

static PyObject *Event_from_ipc_handle(PyObject *cls, PyObject *args,
                                       PyObject *kwds) {
  static char *kwlist[] = {"device", "handle", NULL};
  PyObject *dev_o;
  Py_buffer buf;
  int dev;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oy*:from_ipc_handle", kwlist,
                                   &dev_o, &buf))
    return NULL;
  if (buf.len != EVRT_IPC_HANDLE_SIZE) {
    PyErr_Format(PyExc_RuntimeError,
                 "evrt_ipc_event_handle_t expects byte-like object of size "
                 "%d, but got %zd",
                 EVRT_IPC_HANDLE_SIZE, buf.len);
    PyBuffer_Release(&buf);
    return NULL;
  }
  if (evrtpy_parse_device(dev_o, &dev) < 0) {
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
  PyTypeObject *type = (PyTypeObject *)cls;
  EventObject *self = (EventObject *)type->tp_alloc(type, 0);
  if (!self) {
    (void)evrt_event_destroy(h);
    return NULL;
  }
  self->h = h;
  self->flags = info.flags;
  self->want_device = dev;
  self->imported = 1;
  return (PyObject *)self;
}

static PyObject *Event_repr(EventObject *self) {
  if (!self->h)
    return PyUnicode_FromString("<evrt.Event uninitialized>");
  return PyUnicode_FromFormat("<evrt.Event %p>", (void *)self->h);
}

static PyObject *Event_get_device(EventObject *self, void *c) {
  int dev;
  if (event_device(self, &dev) < 0)
    return NULL;
  if (dev < 0)
    Py_RETURN_NONE;
  return PyLong_FromLong(dev);
}

static PyObject *Event_get_event_id(EventObject *self, void *c) {
  if (!self->h)
    return PyLong_FromLong(0);
  uint64_t id;
  evrt_status_t st = evrt_event_get_id(self->h, &id);
  if (st)
    return evrtpy_raise(st, "evrt_event_get_id");
  return PyLong_FromUnsignedLongLong(id);
}

static PyObject *Event_get_handle(EventObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}

static PyObject *Event_get_flag(EventObject *self, void *c) {
  return PyBool_FromLong((self->flags & (unsigned)(uintptr_t)c) != 0);
}

static PyObject *Event_get_imported(EventObject *self, void *c) {
  return PyBool_FromLong(self->imported);
}

static PyMethodDef Event_methods[] = {
    {"record", (PyCFunction)Event_record, METH_O,
     "record(stream): capture all work submitted to stream so far."},
    {"wait", (PyCFunction)Event_wait, METH_O,
     "wait(stream): make future work on stream wait for this event."},
    {"query", (PyCFunction)Event_query, METH_NOARGS,
     "True if the work captured by the event has completed."},
    {"synchronize", (PyCFunction)Event_synchronize, METH_NOARGS,
     "Wait (GIL released) until the work captured by the event is done."},
    {"elapsed_time", (PyCFunction)Event_elapsed_time, METH_O,
     "elapsed_time(end_event): milliseconds from this event to end_event."},
    {"ipc_handle", (PyCFunction)Event_ipc_handle, METH_NOARGS,
     "The 64-byte interprocess handle of an interprocess event."},
    {"from_ipc_handle", (PyCFunction)(void (*)(void))Event_from_ipc_handle,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_ipc_handle(device, handle): open another process's event."},
    {NULL}};

static PyGetSetDef Event_getset[] = {
    {"device", (getter)Event_get_device, NULL,
     "device index, or None before the first record", NULL},
    {"event_id", (getter)Event_get_event_id, NULL,
     "process-unique id of the native event, 0 before creation", NULL},
    {"handle", (getter)Event_get_handle, NULL,
     "the evrt_event_t as an int, 0 before creation", NULL},
    {"enable_timing", (getter)Event_get_flag, NULL, "timing flag",
     (void *)(uintptr_t)EVRT_EVENT_TIMING},
    {"blocking", (getter)Event_get_flag, NULL, "blocking-sync flag",
     (void *)(uintptr_t)EVRT_EVENT_BLOCKING_SYNC},
    {"interprocess", (getter)Event_get_flag, NULL, "interprocess flag",
     (void *)(uintptr_t)EVRT_EVENT_INTERPROCESS},
    {"imported", (getter)Event_get_imported, NULL,
     "True if opened from an interprocess handle", NULL},
    {NULL}};

PyTypeObject evrtpy_EventType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt._evrt._EventBase",
    .tp_basicsize = sizeof(EventObject),
    .tp_dealloc = (destructor)Event_dealloc,
    .tp_repr = (reprfunc)Event_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Base of evrt.Event: a marker recorded into a stream.",
    .tp_weaklistoffset = offsetof(EventObject, weakreflist),
    .tp_methods = Event_methods,
    .tp_getset = Event_getset,
    .tp_new = Event_new,
};
