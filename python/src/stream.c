/*
 * stream.c - evrt.Stream, torch.Stream's equivalent, over evrt_stream_t;
 * the base of evrt.cuda.Stream and evrt.xpu.Stream.
 *
 * A stream object has a type (evrt, cuda or xpu: how it presents itself)
 * and either owns its native stream (created by Stream(); destroyed with the
 * object, queued work still runs) or is a view of one: a device's default
 * stream, a stream rebuilt from (stream_id, device_index, device_type), or
 * an ExternalStream made by C code.  A view of a stream that a Python object
 * owns keeps that object alive (the owners are found through a registry of
 * handles), so a rebuilt stream stays valid for as long as it is used.
 *
 * stream_id is the native handle, the integer the C API and evrt.acl.rt
 * take (one runtime per process); for a CUDA-type default stream it is 0,
 * CUDA's legacy stream, which the C API reads as the current device's
 * default stream.
 */
#include "evrt_module.h"

#include <stdio.h>
#include <string.h>

/* handle (int) -> weakref to the object that owns the native stream; only
 * touched with the GIL held. */
static PyObject *owners;

/* The lowest and highest priority (torch's priority_range(): (least,
 * greatest)).  evrt has two levels: 0 (normal) and any negative (high). */
#define PRIO_LEAST 0
#define PRIO_GREATEST -1

static int clamp_priority(long p) {
  return p > PRIO_LEAST ? PRIO_LEAST : p < PRIO_GREATEST ? PRIO_GREATEST : (int)p;
}

uint64_t evrtpy_stream_id(StreamObject *s) {
  if (s->is_default && s->type == EVRTPY_CUDA)
    return 0;
  return (uint64_t)(uintptr_t)s->h;
}

/* evrt.cuda.Stream and evrt.xpu.Stream: C subtypes, not Python subclasses,
 * so that their methods are their own (CPython 3.11 specializes a method
 * call only when the object's type is the method's own type: a Python
 * subclass pays the generic call, twice the cost of record() or query()). */
PyTypeObject evrtpy_CudaStreamType, evrtpy_XpuStreamType;

PyTypeObject *evrtpy_stream_class(int type) {
  return type == EVRTPY_CUDA  ? &evrtpy_CudaStreamType
         : type == EVRTPY_XPU ? &evrtpy_XpuStreamType
                              : &evrtpy_StreamType;
}

/* The type a class forces (evrt.cuda.Stream and its subclasses: cuda), or
 * -1 for evrt.Stream (and its Python subclasses). */
static int class_type(PyTypeObject *cls) {
  if (PyType_IsSubtype(cls, &evrtpy_CudaStreamType))
    return EVRTPY_CUDA;
  if (PyType_IsSubtype(cls, &evrtpy_XpuStreamType))
    return EVRTPY_XPU;
  return -1;
}

PyObject *evrtpy_stream_owner(evrt_stream_t h) {
  if (!owners || !h)
    return NULL;
  PyObject *key = PyLong_FromVoidPtr((void *)h);
  if (!key) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *ref = PyDict_GetItemWithError(owners, key);
  Py_DECREF(key);
  if (!ref) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *o = PyWeakref_GetObject(ref);
  if (!o || o == Py_None)
    return NULL;
  Py_INCREF(o);
  return o;
}

static int register_owner(StreamObject *s) {
  if (!owners && !(owners = PyDict_New()))
    return -1;
  PyObject *key = PyLong_FromVoidPtr((void *)s->h);
  PyObject *ref = key ? PyWeakref_NewRef((PyObject *)s, NULL) : NULL;
  int rc = ref ? PyDict_SetItem(owners, key, ref) : -1;
  Py_XDECREF(key);
  Py_XDECREF(ref);
  return rc;
}

static void unregister_owner(StreamObject *s) {
  if (!owners)
    return;
  PyObject *key = PyLong_FromVoidPtr((void *)s->h);
  if (key && PyDict_DelItem(owners, key) < 0)
    PyErr_Clear();
  Py_XDECREF(key);
}

/* Device, priority, id and default-ness of s->h. */
static int stream_fill(StreamObject *s) {
  evrt_status_t st;
  evrt_stream_t def = NULL;
  if ((st = evrt_stream_get_device(s->h, &s->device)))
    return evrtpy_raise(st, "evrt_stream_get_device"), -1;
  if ((st = evrt_stream_get_priority(s->h, &s->priority)))
    return evrtpy_raise(st, "evrt_stream_get_priority"), -1;
  s->priority = clamp_priority(s->priority);
  if ((st = evrt_stream_get_id(s->h, &s->id)))
    return evrtpy_raise(st, "evrt_stream_get_id"), -1;
  if ((st = evrt_stream_default(s->device, &def)))
    return evrtpy_raise(st, "evrt_stream_default"), -1;
  s->is_default = def == s->h;
  return 0;
}

PyObject *evrtpy_stream_wrap(PyTypeObject *cls, int type, evrt_stream_t h,
                             PyObject *owner) {
  if (!cls)
    cls = evrtpy_stream_class(type);
  StreamObject *s = (StreamObject *)cls->tp_alloc(cls, 0);
  if (!s)
    return NULL;
  s->h = h;
  s->type = (unsigned char)type;
  if (stream_fill(s) < 0) {
    s->h = NULL;
    Py_DECREF(s);
    return NULL;
  }
  Py_XINCREF(owner);
  s->owner = owner;
  return (PyObject *)s;
}

/* The native stream a (stream_id, device_index) pair or an external handle
 * names: 0 is the device's default stream; anything else must be a live
 * stream of that device (device < 0: any device). */
static int resolve_handle(unsigned long long id, int device,
                          evrt_stream_t *out) {
  evrt_status_t st;
  if (id == 0) {
    if ((st = evrt_stream_default(device, out)))
      return evrtpy_raise(st, "evrt_stream_default"), -1;
    return 0;
  }
  evrt_stream_t h = (evrt_stream_t)(uintptr_t)id;
  int d = -1;
  if ((st = evrt_stream_get_device(h, &d)))
    return evrtpy_raise(st, "evrt_stream_get_device"), -1;
  if (device >= 0 && d != device) {
    PyErr_Format(PyExc_RuntimeError,
                 "stream %#llx belongs to device %d, not to device %d", id, d,
                 device);
    return -1;
  }
  *out = h;
  return 0;
}

static int ull_arg(PyObject *o, const char *name, unsigned long long *v) {
  if (!PyLong_Check(o) || PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  *v = PyLong_AsUnsignedLongLongMask(o);
  return PyErr_Occurred() ? -1 : 0;
}

/* Stream(device=None, priority=0, *, stream_id=None, device_index=None,
 *        device_type=None, stream_ptr=None), and torch.Stream's
 * Stream(stream_id, device_index, device_type). */
static PyObject *Stream_new(PyTypeObject *cls, PyObject *args,
                            PyObject *kwds) {
  static char *kwlist[] = {"device",      "priority",    "stream_id",
                           "device_index", "device_type", "stream_ptr",
                           NULL};
  PyObject *dev_o = Py_None, *prio_o = NULL, *sid_o = Py_None,
           *di_o = Py_None, *dt_o = Py_None, *ptr_o = Py_None;
  if (PyTuple_GET_SIZE(args) == 3 && (!kwds || !PyDict_GET_SIZE(kwds) ||
                                      PyDict_GetItemString(kwds, "priority"))) {
    /* torch.Stream(stream_id, device_index, device_type) */
    sid_o = PyTuple_GET_ITEM(args, 0);
    di_o = PyTuple_GET_ITEM(args, 1);
    dt_o = PyTuple_GET_ITEM(args, 2);
    if (kwds)
      prio_o = PyDict_GetItemString(kwds, "priority");
  } else if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO$OOOO:Stream",
                                          kwlist, &dev_o, &prio_o, &sid_o,
                                          &di_o, &dt_o, &ptr_o)) {
    return NULL;
  }
  long prio = 0;
  if (prio_o) {
    if (PyBool_Check(prio_o) || !PyLong_Check(prio_o))
      return PyErr_Format(PyExc_TypeError, "priority must be an int, not "
                          "%.100s", Py_TYPE(prio_o)->tp_name);
    prio = PyLong_AsLong(prio_o);
    if (prio == -1 && PyErr_Occurred())
      return NULL;
  }
  int forced = class_type(cls);
  int type = forced >= 0 ? forced : evrtpy_accelerator;
  evrt_stream_t h = NULL;
  PyObject *owner = NULL;
  int owned = 0;
  if (sid_o != Py_None || di_o != Py_None || dt_o != Py_None) {
    /* a view of an existing stream, from its parts */
    unsigned long long sid = 0, di = 0, dt = 0;
    if ((sid_o != Py_None && ull_arg(sid_o, "stream_id", &sid) < 0) ||
        (di_o != Py_None && ull_arg(di_o, "device_index", &di) < 0) ||
        (dt_o != Py_None && ull_arg(dt_o, "device_type", &dt) < 0))
      return NULL;
    int t = dt_o == Py_None ? type : evrtpy_type_of_id((long)dt);
    if (t < 0 || t >= EVRTPY_NGPU)
      return PyErr_Format(PyExc_RuntimeError,
                          "Stream: unsupported device type %llu (evrt "
                          "streams are of type %d, 1 (cuda) or 12 (xpu))",
                          dt, evrtpy_type_id(EVRTPY_EVRT));
    if (forced < 0)
      type = t;
    int n;
    if (evrtpy_get_count(&n) < 0)
      return NULL;
    if (di >= (unsigned long long)n)
      return evrtpy_range_error(type, (long)di, n), NULL;
    if (resolve_handle(sid, (int)di, &h) < 0)
      return NULL;
    owner = evrtpy_stream_owner(h);
  } else if (ptr_o != Py_None) {
    /* ExternalStream(stream_ptr, device=None) */
    unsigned long long ptr;
    int d = -1;
    if (ull_arg(ptr_o, "stream_ptr", &ptr) < 0)
      return NULL;
    if (prio != 0)
      return PyErr_Format(PyExc_RuntimeError,
                          "Priority was explicitly set for a external stream");
    if (dev_o != Py_None &&
        evrtpy_device_arg(dev_o, type, EVRTPY_DEV_OPTIONAL |
                              (forced < 0 ? EVRTPY_DEV_ANY_GPU : 0),
                          &d, forced < 0 ? &type : NULL) < 0)
      return NULL;
    if (ptr == 0 && d < 0 && evrtpy_get_current(&d) < 0)
      return NULL;
    if (resolve_handle(ptr, d, &h) < 0)
      return NULL;
    owner = evrtpy_stream_owner(h);
  } else {
    /* a new stream */
    int d;
    if (evrtpy_device_arg(dev_o, type,
                          EVRTPY_DEV_OPTIONAL |
                              (forced < 0 ? EVRTPY_DEV_ANY_GPU : 0),
                          &d, forced < 0 ? &type : NULL) < 0)
      return NULL;
    evrt_status_t st = evrt_stream_create(&h, d, clamp_priority(prio), 0);
    if (st)
      return evrtpy_raise(st, "evrt_stream_create");
    owned = 1;
  }
  StreamObject *s = (StreamObject *)evrtpy_stream_wrap(cls, type, h, owner);
  Py_XDECREF(owner);
  if (!s) {
    if (owned)
      (void)evrt_stream_destroy(h);
    return NULL;
  }
  if (owned) {
    s->owned = 1;
    if (register_owner(s) < 0) {
      Py_DECREF(s); /* destroys it */
      return NULL;
    }
    EVRTPY_GPU_TRACE(s->type, EVRTPY_TRACE_STREAM_CREATION, 1,
                     evrtpy_stream_id(s), 0);
  }
  return (PyObject *)s;
}

static void Stream_dealloc(StreamObject *self) {
  if (self->weakreflist)
    PyObject_ClearWeakRefs((PyObject *)self);
  if (self->owned && self->h) {
    PyObject *exc_t, *exc_v, *exc_tb;
    PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    unregister_owner(self);
    PyErr_Restore(exc_t, exc_v, exc_tb);
    /* Returns at once; queued work (launched callables included) still
     * runs.  An error (library shut down or forked) only means there is
     * nothing left to free. */
    (void)evrt_stream_destroy(self->h);
  }
  self->h = NULL;
  Py_CLEAR(self->owner);
  Py_CLEAR(self->ctx);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------- methods */

static PyObject *Stream_query(StreamObject *self, PyObject *unused) {
  evrt_status_t st = evrt_stream_query(self->h);
  if (st == EVRT_SUCCESS)
    Py_RETURN_TRUE;
  if (st == EVRT_NOT_READY)
    Py_RETURN_FALSE;
  return evrtpy_raise(st, "evrt_stream_query");
}

/* torch.Stream.is_capturing(): an invalidated capture that was not ended
 * yet still counts (the stream is in capture mode until end_capture), as
 * torch.cuda.is_current_stream_capturing says for the current stream. */
static PyObject *Stream_is_capturing(StreamObject *self, PyObject *unused) {
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
  evrt_status_t st = evrt_stream_capture_status(self->h, &cs);
  if (st)
    return evrtpy_raise(st, "evrt_stream_capture_status");
  return PyBool_FromLong(cs != EVRT_CAPTURE_STATUS_NONE);
}

static PyObject *Stream_synchronize(StreamObject *self, PyObject *unused) {
  evrt_status_t st;
  if (evrtpy_stream_wait(self->h, -1, 1, &st) < 0)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_stream_synchronize");
  EVRTPY_GPU_TRACE(self->type, EVRTPY_TRACE_STREAM_SYNCHRONIZATION, 1,
                   evrtpy_stream_id(self), 0);
  if (evrtpy_raise_launch_errors(self->device, 1, self->id) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *Stream_wait_event(StreamObject *self, PyObject *arg) {
  if (!evrtpy_Event_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "wait_event() expects an event, not %.100s",
                        Py_TYPE(arg)->tp_name);
  return evrtpy_event_wait_on((EventObject *)arg, self->h);
}

static PyObject *Stream_wait_stream(StreamObject *self, PyObject *arg) {
  if (!evrtpy_Stream_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "wait_stream() expects a stream, not %.100s",
                        Py_TYPE(arg)->tp_name);
  /* torch: self.wait_event(stream.record_event()), with an event that
   * nobody else sees, so made and dropped here. */
  evrt_event_t e = NULL;
  evrt_status_t st = evrt_event_create(&e, EVRT_EVENT_DEFAULT);
  if (st)
    return evrtpy_raise(st, "evrt_event_create");
  const char *call = "evrt_event_record";
  if (!(st = evrt_event_record(e, ((StreamObject *)arg)->h))) {
    call = "evrt_stream_wait_event";
    st = evrt_stream_wait_event(self->h, e);
  }
  if (!st && evrtpy_gpu_trace_on) { /* the event's life, as torch's */
    uint64_t ev = (uint64_t)(uintptr_t)e;
    evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_CREATION, 1, ev, 0);
    evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_RECORD, 2, ev,
                          evrtpy_stream_id((StreamObject *)arg));
    evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_WAIT, 2, ev,
                          evrtpy_stream_id(self));
    evrtpy_gpu_trace_fire(self->type, EVRTPY_TRACE_EVENT_DELETION, 1, ev, 0);
  }
  (void)evrt_event_destroy(e);
  if (st)
    return evrtpy_raise(st, call);
  Py_RETURN_NONE;
}

static PyObject *Stream_record_event(StreamObject *self, PyObject *const *args,
                                     Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *ev = Py_None;
  if (nargs > 1 || (kwnames && (PyTuple_GET_SIZE(kwnames) > 1 || nargs)))
    return PyErr_Format(PyExc_TypeError,
                        "record_event() takes at most 1 argument");
  if (nargs == 1)
    ev = args[0];
  else if (kwnames && PyTuple_GET_SIZE(kwnames) == 1) {
    if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                         "event") != 0)
      return PyErr_Format(PyExc_TypeError,
                          "record_event() got an unexpected keyword argument");
    ev = args[0];
  }
  if (ev == Py_None) {
    ev = evrtpy_event_new(self->type, EVRT_EVENT_DEFAULT);
    if (!ev)
      return NULL;
  } else if (!evrtpy_Event_Check(ev)) {
    return PyErr_Format(PyExc_TypeError,
                        "record_event() expects an event, not %.100s",
                        Py_TYPE(ev)->tp_name);
  } else {
    Py_INCREF(ev);
  }
  if (evrtpy_event_record_on((EventObject *)ev, self->h, self->device) < 0) {
    Py_DECREF(ev);
    return NULL;
  }
  return ev;
}

static PyObject *Stream_delay(StreamObject *self, PyObject *arg) {
  double ms = PyFloat_AsDouble(arg);
  if (ms == -1.0 && PyErr_Occurred())
    return NULL;
  if (!(ms >= 0.0) || ms > 1e12)
    return PyErr_Format(PyExc_ValueError,
                        "delay must be a non-negative number of ms, got %R",
                        arg);
  evrt_status_t st = evrt_stream_delay(self->h, (uint64_t)(ms * 1e6 + 0.5));
  if (st)
    return evrtpy_raise(st, "evrt_stream_delay");
  Py_RETURN_NONE;
}

static PyObject *Stream_priority_range(PyObject *unused, PyObject *noargs) {
  return Py_BuildValue("(ii)", PRIO_LEAST, PRIO_GREATEST);
}

/* ----------------------------------------------------- with-statement */

/* torch.Stream.__enter__: switch the current device to the stream's if it
 * differs, remember it and the stream's device's current stream, make the
 * stream current.  A per-object stack (a None entry when the stream is
 * already current) makes `with s, s:` and nesting restore exactly. */
PyObject *evrtpy_stream_enter(StreamObject *s) {
  int cur;
  if (evrtpy_get_current(&cur) < 0)
    return NULL;
  if (!s->ctx && !(s->ctx = PyList_New(0)))
    return NULL;
  PyObject *entry;
  if (cur == s->device && evrtpy_current_handle(s->device) ==
                              (s->is_default ? NULL : s->h)) {
    Py_INCREF(Py_None);
    entry = Py_None;
  } else {
    PyObject *prev = evrtpy_current_stream(s->type, s->device);
    if (!prev)
      return NULL;
    entry = Py_BuildValue("(iN)", cur, prev);
    if (!entry)
      return NULL;
  }
  if (PyList_Append(s->ctx, entry) < 0) {
    Py_DECREF(entry);
    return NULL;
  }
  int switch_now = entry != Py_None;
  Py_DECREF(entry);
  if (switch_now && evrtpy_set_stream(s) < 0) {
    Py_ssize_t n = PyList_GET_SIZE(s->ctx);
    (void)PyList_SetSlice(s->ctx, n - 1, n, NULL);
    return NULL;
  }
  Py_INCREF(s);
  return (PyObject *)s;
}

PyObject *evrtpy_stream_exit(StreamObject *s) {
  Py_ssize_t n = s->ctx ? PyList_GET_SIZE(s->ctx) : 0;
  if (n == 0)
    return PyErr_Format(PyExc_RuntimeError,
                        "Stream.__exit__ without a matching __enter__");
  PyObject *entry = PyList_GET_ITEM(s->ctx, n - 1);
  Py_INCREF(entry);
  if (PyList_SetSlice(s->ctx, n - 1, n, NULL) < 0) {
    Py_DECREF(entry);
    return NULL;
  }
  int rc = 0;
  if (entry != Py_None) {
    int prev_dev = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    rc = evrtpy_set_stream((StreamObject *)PyTuple_GET_ITEM(entry, 1));
    if (rc == 0 && prev_dev != s->device)
      rc = evrtpy_set_device(prev_dev);
  }
  Py_DECREF(entry);
  if (rc < 0)
    return NULL;
  Py_RETURN_FALSE;
}

static PyObject *Stream_enter(StreamObject *s, PyObject *unused) {
  return evrtpy_stream_enter(s);
}

static PyObject *Stream_exit(StreamObject *s, PyObject *args) {
  return evrtpy_stream_exit(s);
}

/* ---------------------------------------------- comparison and display */

static PyObject *Stream_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !evrtpy_Stream_Check(a) ||
      !evrtpy_Stream_Check(b)) {
    if ((op == Py_EQ || op == Py_NE))
      Py_RETURN_NOTIMPLEMENTED; /* identity: False / True */
    return PyErr_Format(PyExc_TypeError,
                        "'%s' is not supported between instances of "
                        "'%.100s' and '%.100s'",
                        op == Py_LT   ? "<"
                        : op == Py_LE ? "<="
                        : op == Py_GT ? ">"
                                      : ">=",
                        Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name);
  }
  StreamObject *x = (StreamObject *)a, *y = (StreamObject *)b;
  int eq = x->device == y->device && x->type == y->type &&
           evrtpy_stream_id(x) == evrtpy_stream_id(y);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t Stream_hash(StreamObject *self) {
  PyObject *t = Py_BuildValue("(iKi)", evrtpy_type_id(self->type),
                              (unsigned long long)evrtpy_stream_id(self),
                              self->device);
  if (!t)
    return -1;
  Py_hash_t h = PyObject_Hash(t);
  Py_DECREF(t);
  return h;
}

/* torch's reprs: torch.cuda.Stream's, torch.xpu.Stream's, torch.Stream's. */
static PyObject *Stream_repr(StreamObject *self) {
  unsigned long long id = (unsigned long long)evrtpy_stream_id(self);
  char hex[24]; /* PyUnicode_FromFormat has no %llx */
  snprintf(hex, sizeof hex, "%#llx", id);
  if (id == 0)
    snprintf(hex, sizeof hex, "0x0"); /* Python's "%#x" % 0 */
  switch (class_type(Py_TYPE(self))) {
  case EVRTPY_CUDA:
    return PyUnicode_FromFormat("<torch.cuda.Stream device=cuda:%d "
                                "cuda_stream=%s>",
                                self->device, hex);
  case EVRTPY_XPU:
    return PyUnicode_FromFormat("torch.xpu.Stream(device=xpu:%d "
                                "sycl_queue=%s)",
                                self->device, hex);
  default:
    return PyUnicode_FromFormat("torch.Stream device_type=%s, "
                                "device_index=%d, stream_id=%llu",
                                evrtpy_type_name(self->type), self->device,
                                id);
  }
}

static PyObject *Stream_get_device(StreamObject *self, void *c) {
  return evrtpy_device_new(self->type, self->device);
}
static PyObject *Stream_get_device_index(StreamObject *self, void *c) {
  return PyLong_FromLong(self->device);
}
static PyObject *Stream_get_device_type(StreamObject *self, void *c) {
  return PyLong_FromLong(evrtpy_type_id(self->type));
}
static PyObject *Stream_get_priority(StreamObject *self, void *c) {
  return PyLong_FromLong(self->priority);
}
static PyObject *Stream_get_stream_id(StreamObject *self, void *c) {
  return PyLong_FromUnsignedLongLong(evrtpy_stream_id(self));
}
static PyObject *Stream_get_handle(StreamObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}
static PyObject *Stream_get_is_default(StreamObject *self, void *c) {
  return PyBool_FromLong(self->is_default);
}

static PyMethodDef Stream_methods[] = {
    {"query", (PyCFunction)Stream_query, METH_NOARGS,
     "query($self, /)\n--\n\n"
     "True if all the work submitted to the stream has completed."},
    {"synchronize", (PyCFunction)Stream_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Wait until all the work submitted to the stream is done.\n\n"
     "The GIL is released while waiting and Ctrl-C interrupts the wait.\n"
     "Raises the first pending exception of a callable launched on it."},
    {"is_capturing", (PyCFunction)Stream_is_capturing, METH_NOARGS,
     "is_capturing($self, /)\n--\n\n"
     "True while the stream is capturing into a graph (also when the\n"
     "capture was invalidated and not ended yet)."},
    {"wait_event", (PyCFunction)Stream_wait_event, METH_O,
     "wait_event($self, event, /)\n--\n\n"
     "Make all future work submitted to the stream wait for an event.\n\n"
     "Returns at once; an event never recorded adds no dependency."},
    {"wait_stream", (PyCFunction)Stream_wait_stream, METH_O,
     "wait_stream($self, stream, /)\n--\n\n"
     "Make all future work submitted here wait for all the work submitted\n"
     "to `stream` so far (which may be on another device)."},
    {"record_event", (PyCFunction)(void (*)(void))Stream_record_event,
     METH_FASTCALL | METH_KEYWORDS,
     "record_event($self, /, event=None)\n--\n\n"
     "Record an event here (a new one of the stream's kind if None) and\n"
     "return it."},
    {"launch", (PyCFunction)evrtpy_stream_launch, METH_VARARGS,
     "launch($self, fn, /, *args)\n--\n\n"
     "Call fn(*args) in stream order on an evrt worker thread.\n\n"
     "An exception it raises is raised by the next synchronize() of this\n"
     "stream (or evrt.synchronize() of its device)."},
    {"delay", (PyCFunction)Stream_delay, METH_O,
     "delay($self, ms, /)\n--\n\n"
     "A timed wait of ms milliseconds in stream order; it uses no CPU and\n"
     "holds no thread."},
    {"__enter__", (PyCFunction)Stream_enter, METH_NOARGS,
     "Make the stream current (and its device the current device)."},
    {"__exit__", (PyCFunction)Stream_exit, METH_VARARGS,
     "Restore the stream and device that were current before __enter__."},
    {"priority_range", (PyCFunction)Stream_priority_range,
     METH_NOARGS | METH_STATIC,
     "priority_range()\n--\n\n"
     "(least, greatest) priority: (0, -1).  Lower numbers run first;\n"
     "priorities outside the range are clamped to it."},
    {NULL}};

static PyGetSetDef Stream_getset[] = {
    {"device", (getter)Stream_get_device, NULL,
     "The stream's device (an evrt.device).", NULL},
    {"device_index", (getter)Stream_get_device_index, NULL,
     "The stream's device index.", NULL},
    {"device_type", (getter)Stream_get_device_type, NULL,
     "torch's number for the stream's device type (20: evrt, 1: cuda, "
     "12: xpu).",
     NULL},
    {"priority", (getter)Stream_get_priority, NULL,
     "The stream's priority, within priority_range().", NULL},
    {"stream_id", (getter)Stream_get_stream_id, NULL,
     "The native handle (0 for a cuda-type default stream).", NULL},
    {"handle", (getter)Stream_get_handle, NULL,
     "The evrt_stream_t as an int (the real handle, never 0).", NULL},
    {"is_default", (getter)Stream_get_is_default, NULL,
     "True for a device's default stream.", NULL},
    {NULL}};

/* ctypes.c_void_p(v): the _as_parameter_ of the cuda and xpu kinds, so that
 * a stream or event is passed to a ctypes function as its handle. */
PyObject *evrtpy_c_void_p(unsigned long long v) {
  static PyObject *c_void_p;
  if (!c_void_p) {
    PyObject *ctypes = PyImport_ImportModule("ctypes");
    if (!ctypes)
      return NULL;
    c_void_p = PyObject_GetAttrString(ctypes, "c_void_p");
    Py_DECREF(ctypes);
    if (!c_void_p)
      return NULL;
  }
  PyObject *n = PyLong_FromUnsignedLongLong(v);
  PyObject *r = n ? PyObject_CallOneArg(c_void_p, n) : NULL;
  Py_XDECREF(n);
  return r;
}

static PyObject *Stream_as_parameter(StreamObject *self, void *c) {
  return evrtpy_c_void_p(evrtpy_stream_id(self));
}

static PyObject *Stream_cuda_stream_protocol(StreamObject *self,
                                             PyObject *unused) {
  return Py_BuildValue("(iK)", 0, (unsigned long long)evrtpy_stream_id(self));
}

static PyGetSetDef CudaStream_getset[] = {
    {"cuda_stream", (getter)Stream_get_stream_id, NULL,
     "The stream's handle as an int (0 for a device's default stream): the\n"
     "evrt_stream_t the C API and evrt.acl.rt take.",
     NULL},
    {"_as_parameter_", (getter)Stream_as_parameter, NULL,
     "ctypes.c_void_p(cuda_stream), for ctypes calls.", NULL},
    {NULL}};

static PyGetSetDef XpuStream_getset[] = {
    {"sycl_queue", (getter)Stream_get_stream_id, NULL,
     "The stream's handle as an int: the evrt_stream_t the C API takes.",
     NULL},
    {"_as_parameter_", (getter)Stream_as_parameter, NULL,
     "ctypes.c_void_p(sycl_queue), for ctypes calls.", NULL},
    {NULL}};

#define NSTREAM_METHODS (sizeof Stream_methods / sizeof Stream_methods[0])
/* Stream_methods (its sentinel slot takes the first extra) and extras. */
static PyMethodDef CudaStream_methods[NSTREAM_METHODS + 1];
static PyMethodDef XpuStream_methods[NSTREAM_METHODS];

static const char CUDA_STREAM_DOC[] =
    "Stream(device=None, priority=0, **kwargs)\n--\n\n"
    "Wrapper around an evrt stream, as torch.cuda.Stream.\n\n"
    "A stream is a linear sequence of execution that belongs to a specific\n"
    "device, independent from other streams.  ``with s:`` makes it the\n"
    "current stream (and its device the current device).\n\n"
    "Args:\n"
    "    device (device or int, optional): the device on which to create\n"
    "        the stream; None (default) or a negative int: the current\n"
    "        device.\n"
    "    priority (int, optional): lower numbers run first; values outside\n"
    "        priority_range() are clamped to it.\n"
    "    stream_id, device_index, device_type (keywords): a view of an\n"
    "        existing stream (torch's way of rebuilding a stream).";

static const char XPU_STREAM_DOC[] =
    "Stream(device=None, priority=0, **kwargs)\n--\n\n"
    "Wrapper around an evrt stream, as torch.xpu.Stream.\n\n"
    "A stream is a linear sequence of execution that belongs to a specific\n"
    "device, independent from other streams.  ``with s:`` makes it the\n"
    "current stream (and its device the current device).\n\n"
    "Args:\n"
    "    device (device or int, optional): the device on which to create\n"
    "        the stream; None (default) or a negative int: the current\n"
    "        device.\n"
    "    priority (int, optional): lower numbers run first; values outside\n"
    "        priority_range() are clamped to it.";

PyTypeObject evrtpy_CudaStreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.cuda.Stream",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = CUDA_STREAM_DOC,
    .tp_methods = CudaStream_methods,
    .tp_getset = CudaStream_getset,
    .tp_base = &evrtpy_StreamType,
};

PyTypeObject evrtpy_XpuStreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.xpu.Stream",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = XPU_STREAM_DOC,
    .tp_methods = XpuStream_methods,
    .tp_getset = XpuStream_getset,
    .tp_base = &evrtpy_StreamType,
};

int evrtpy_stream_types_ready(void) {
  memcpy(CudaStream_methods, Stream_methods, sizeof Stream_methods);
  CudaStream_methods[NSTREAM_METHODS - 1] = (PyMethodDef){
      "__cuda_stream__", (PyCFunction)Stream_cuda_stream_protocol,
      METH_NOARGS,
      "__cuda_stream__($self, /)\n--\n\n"
      "The CUDA stream protocol: (version 0, the stream handle)."};
  memcpy(XpuStream_methods, Stream_methods, sizeof Stream_methods);
  return PyType_Ready(&evrtpy_StreamType) < 0 ||
                 PyType_Ready(&evrtpy_CudaStreamType) < 0 ||
                 PyType_Ready(&evrtpy_XpuStreamType) < 0
             ? -1
             : 0;
}

PyTypeObject evrtpy_StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.Stream",
    .tp_basicsize = sizeof(StreamObject),
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_repr = (reprfunc)Stream_repr,
    .tp_hash = (hashfunc)Stream_hash,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc =
        "Stream(device=None, *, priority=0)\n--\n\n"
        "An in-order queue of work on a device (torch.Stream's equivalent).\n\n"
        "Stream(device=None, *, priority=0) creates a stream on `device`\n"
        "(default: the current device of the current accelerator; a device\n"
        "of type 'cuda' or 'xpu' gives a stream of that type).\n"
        "Stream(stream_id=, device_index=, device_type=) is a view of an\n"
        "existing stream.  Streams are equal, and hash alike, when\n"
        "(stream_id, device_index, device_type) match.  `with s:` makes s\n"
        "the current stream (and its device the current device).",
    .tp_richcompare = Stream_richcompare,
    .tp_weaklistoffset = offsetof(StreamObject, weakreflist),
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
    .tp_new = Stream_new,
};
