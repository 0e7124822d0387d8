/*
 * evrt_module.c - the evrt._evrt extension: torch-style event and stream base
 * types over the public evrt C API, plus the module-level device functions.
 *
 * The pure-Python package (evrt/__init__.py) subclasses _EventBase and
 * _StreamBase and adds what is easier in Python: default arguments that
 * depend on the per-thread current stream (kept in a threading.local), the
 * context managers and pickling.
 *
 * GIL rules:
 *  - Every call that may block (event/stream/device synchronize, query of an
 *    imported event, which may have to look at another process) runs with
 *    the GIL released.  Blocking waits are cut into slices of
 *    WAIT_SLICE_NS so that a pending signal (Ctrl-C) is seen between them.
 *  - Non-blocking calls (record, stream wait, enqueue) keep the GIL: they
 *    cost less than a release/re-acquire.
 *  - Host functions enqueued by Stream.launch run on evrt worker threads and
 *    take the GIL only for the duration of the Python call.
 *
 * Errors raised by a launched callable cannot propagate to anybody at the
 * moment they happen (the launching thread has moved on).  They are kept, in
 * order, in a process-wide list and raised by the next Stream.synchronize()
 * of the stream they ran on, or by evrt.synchronize() of that stream's
 * device, whichever comes first.  Errors that nobody collects are passed to
 * sys.unraisablehook at interpreter exit, so an error is never lost.
 */
#include "evrt_module.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

PyObject *evrtpy_Error;
PyObject *evrtpy_NotSupportedError;

/* Pending launch errors: a list of (device, stream_id, exception) tuples,
 * only touched with the GIL held. */
static PyObject *launch_errors;

/* Launched Python callables not yet finished, and those inside the
 * trampoline right now; the exit hook waits for both to drain before the
 * interpreter goes away.  Once py_exiting is set, trampolines no longer
 * touch Python (they would need a GIL that finalization has taken). */
static atomic_long launches_pending;
static atomic_long launches_inflight;
static atomic_int py_exiting;

#define WAIT_SLICE_NS (100 * 1000 * 1000LL)

static const char MSG_TIMING[] =
    "Both events must be created with argument 'enable_timing=True'.";
static const char MSG_RECORDED[] =
    "Both events must be recorded before calculating elapsed time.";
static const char MSG_COMPLETED[] =
    "Both events must be completed before calculating elapsed time.";

/* ----------------------------------------------------------------- errors */

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

/* ---------------------------------------------------------------- devices */

static int get_count(int *n) {
  evrt_status_t st = evrt_device_count(n);
  if (st) {
    evrtpy_raise(st, "evrt_device_count");
    return -1;
  }
  return 0;
}

static int get_current(int *d) {
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
static int parse_device(PyObject *o, int *out) {
  long v;
  if (o == NULL || o == Py_None)
    return get_current(out);
  if (PyUnicode_Check(o)) {
    const char *s = PyUnicode_AsUTF8(o);
    if (!s)
      return -1;
    if (strcmp(s, "evrt") == 0)
      return get_current(out);
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
    return get_current(out);
ranged:;
  int n;
  if (get_count(&n) < 0)
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

/* ------------------------------------------------------------ launch errors */

/* Take the pending launch errors that match (by device, or by stream id when
 * by_stream) and raise the first; more than one: the others go to
 * sys.unraisablehook, in order, before the first is raised.  Returns 0 if
 * there was none, -1 with the exception set. */
static int raise_launch_errors(int device, int by_stream, uint64_t stream_id) {
  if (!launch_errors || PyList_GET_SIZE(launch_errors) == 0)
    return 0;
  PyObject *keep = PyList_New(0);
  PyObject *mine = PyList_New(0);
  if (!keep || !mine) {
    Py_XDECREF(keep);
    Py_XDECREF(mine);
    return -1;
  }
  Py_ssize_t n = PyList_GET_SIZE(launch_errors);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PyList_GET_ITEM(launch_errors, i);
    int d = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
    uint64_t id = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 1));
    int match = by_stream ? id == stream_id : d == device;
    if (PyList_Append(match ? mine : keep, t) < 0) {
      Py_DECREF(keep);
      Py_DECREF(mine);
      return -1;
    }
  }
  Py_ssize_t m = PyList_GET_SIZE(mine);
  if (m == 0) {
    Py_DECREF(keep);
    Py_DECREF(mine);
    return 0;
  }
  Py_SETREF(launch_errors, keep);
  for (Py_ssize_t i = 1; i < m; i++) {
    PyObject *exc = PyTuple_GET_ITEM(PyList_GET_ITEM(mine, i), 2);
    Py_INCREF(exc);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    PyErr_WriteUnraisable(NULL);
  }
  PyObject *first = PyTuple_GET_ITEM(PyList_GET_ITEM(mine, 0), 2);
  Py_INCREF(first);
  Py_DECREF(mine);
  PyErr_SetObject((PyObject *)Py_TYPE(first), first);
  Py_DECREF(first);
  return -1;
}

/* --------------------------------------------------------- blocking waits */

/* Runs a blocking wait with the GIL released, in slices, checking for
 * signals in between (only the main thread gets them).  waitfn returns
 * EVRT_ERROR_TIMEOUT when the slice ran out. */
typedef evrt_status_t (*slice_wait_fn)(void *obj, int64_t timeout_ns);

static evrt_status_t wait_sliced(slice_wait_fn fn, void *obj, int *interrupted) {
  evrt_status_t st;
  *interrupted = 0;
  for (;;) {
    Py_BEGIN_ALLOW_THREADS
    st = fn(obj, WAIT_SLICE_NS);
    Py_END_ALLOW_THREADS
    if (st != EVRT_ERROR_TIMEOUT)
      return st;
    if (PyErr_CheckSignals() < 0) {
      *interrupted = 1;
      return st;
    }
  }
}

static evrt_status_t event_sync_slice(void *e, int64_t t) {
  return evrt_event_synchronize_timeout((evrt_event_t)e, t);
}

static evrt_status_t stream_sync_slice(void *s, int64_t t) {
  return evrt_stream_synchronize_timeout((evrt_stream_t)s, t);
}

/* ================================================================= Stream */

typedef struct {
  PyObject_HEAD
  evrt_stream_t h;
  int device;
  int priority;
  uint64_t id;
  int owned; /* created by us (destroyed with the object), not a default */
  PyObject *weakreflist;
} StreamObject;

static PyTypeObject StreamType;

#define Stream_Check(o) PyObject_TypeCheck((o), &StreamType)

static int stream_fill(StreamObject *s) {
  evrt_status_t st;
  if ((st = evrt_stream_get_device(s->h, &s->device)))
    return evrtpy_raise(st, "evrt_stream_get_device"), -1;
  if ((st = evrt_stream_get_priority(s->h, &s->priority)))
    return evrtpy_raise(st, "evrt_stream_get_priority"), -1;
  if ((st = evrt_stream_get_id(s->h, &s->id)))
    return evrtpy_raise(st, "evrt_stream_get_id"), -1;
  return 0;
}

static PyObject *Stream_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
  static char *kwlist[] = {"device", "priority", NULL};
  PyObject *dev_o = Py_None;
  int priority = 0, dev;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Oi:Stream", kwlist, &dev_o,
                                   &priority))
    return NULL;
  if (parse_device(dev_o, &dev) < 0)
    return NULL;
  StreamObject *self = (StreamObject *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  evrt_status_t st = evrt_stream_create(&self->h, dev, priority, 0);
  if (st) {
    self->h = NULL;
    Py_DECREF(self);
    return evrtpy_raise(st, "evrt_stream_create");
  }
  self->owned = 1;
  if (stream_fill(self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

/* classmethod _default(device): a (non-owning) object for the default
 * stream of a device.  The Python layer caches one per device. */
static PyObject *Stream_default(PyObject *cls, PyObject *arg) {
  int dev;
  if (parse_device(arg, &dev) < 0)
    return NULL;
  PyTypeObject *type = (PyTypeObject *)cls;
  StreamObject *self = (StreamObject *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  evrt_status_t st = evrt_stream_default(dev, &self->h);
  if (st) {
    self->h = NULL;
    Py_DECREF(self);
    return evrtpy_raise(st, "evrt_stream_default");
  }
  if (stream_fill(self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void Stream_dealloc(StreamObject *self) {
  if (self->weakreflist)
    PyObject_ClearWeakRefs((PyObject *)self);
  /* Destroy returns at once; queued work (launched callables included)
   * still runs.  An error here (library shut down or forked) only means
   * there is nothing left to free. */
  if (self->owned && self->h)
    (void)evrt_stream_destroy(self->h);
  self->h = NULL;
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Stream_query(StreamObject *self, PyObject *unused) {
  evrt_status_t st = evrt_stream_query(self->h);
  if (st == EVRT_SUCCESS)
    Py_RETURN_TRUE;
  if (st == EVRT_NOT_READY)
    Py_RETURN_FALSE;
  return evrtpy_raise(st, "evrt_stream_query");
}

static PyObject *Stream_synchronize(StreamObject *self, PyObject *unused) {
  int intr;
  evrt_status_t st = wait_sliced(stream_sync_slice, self->h, &intr);
  if (intr)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_stream_synchronize");
  if (raise_launch_errors(self->device, 1, self->id) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* One launched callable.  The references are owned by the item and dropped
 * by the trampoline once the call is done. */
struct launch_item {
  PyObject *fn;
  PyObject *args;
  int device;
  uint64_t stream_id;
};

int evrtpy_trampoline_enter(int counted) {
  /* seq_cst with the exit hook: either it sees us in flight, or we see
   * py_exiting and stay away from the interpreter. */
  atomic_fetch_add(&launches_inflight, 1);
  if (atomic_load(&py_exiting)) {
    atomic_fetch_sub(&launches_inflight, 1);
    if (counted)
      atomic_fetch_sub(&launches_pending, 1);
    return 0;
  }
  return 1;
}

void evrtpy_trampoline_leave(int counted) {
  atomic_fetch_sub(&launches_inflight, 1);
  if (counted)
    atomic_fetch_sub(&launches_pending, 1);
}

void evrtpy_pending_add(long n) { atomic_fetch_add(&launches_pending, n); }

static PyInterpreterState *main_interp;
static _Thread_local PyThreadState *worker_ts;
/* Deletes a worker's thread state when the worker exits (the pool retires
 * idle extra workers), so that states do not pile up. */
static pthread_key_t worker_ts_key;

static void worker_ts_destructor(void *p) {
  PyThreadState *ts = p;
  if (!evrtpy_trampoline_enter(0))
    return; /* interpreter exiting: finalization frees every state */
  PyEval_RestoreThread(ts);
  PyThreadState_Clear(ts);
  PyThreadState_DeleteCurrent(); /* also releases the GIL */
  evrtpy_trampoline_leave(0);
}

void evrtpy_gil_take(evrtpy_gil_t *t) {
  if (!worker_ts && PyGILState_GetThisThreadState() == NULL) {
    worker_ts = PyThreadState_New(main_interp); /* no GIL needed (3.11 docs) */
    if (worker_ts && pthread_setspecific(worker_ts_key, worker_ts) != 0) {
      /* Without the destructor the state would leak at thread exit: use
       * PyGILState for this thread instead. */
      PyEval_RestoreThread(worker_ts);
      PyThreadState_Clear(worker_ts);
      PyThreadState_DeleteCurrent();
      worker_ts = NULL;
    }
  }
  if (worker_ts) {
    t->gilstate = 0;
    PyEval_RestoreThread(worker_ts);
  } else {
    t->gilstate = 1;
    t->g = PyGILState_Ensure();
  }
}

void evrtpy_gil_drop(evrtpy_gil_t *t) {
  if (t->gilstate)
    PyGILState_Release(t->g);
  else
    (void)PyEval_SaveThread();
}

static void launch_trampoline(void *p) {
  struct launch_item *L = p;
  /* Interpreter exiting: the references are leaked on purpose, releasing
   * them would need the GIL. */
  if (!evrtpy_trampoline_enter(1))
    return;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *r = PyObject_Call(L->fn, L->args, NULL);
  if (r) {
    Py_DECREF(r);
  } else {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
      PyException_SetTraceback(value, tb);
    PyObject *t = value ? Py_BuildValue("(iKO)", L->device,
                                        (unsigned long long)L->stream_id,
                                        value)
                        : NULL;
    if (!t || !launch_errors || PyList_Append(launch_errors, t) < 0) {
      /* Could not keep it: report it now rather than lose it. */
      PyErr_Clear();
      PyErr_Restore(type, value, tb);
      type = value = tb = NULL;
      PyErr_WriteUnraisable(L->fn);
    }
    Py_XDECREF(t);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  }
  Py_DECREF(L->fn);
  Py_DECREF(L->args);
  PyMem_RawFree(L);
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(1);
}

static PyObject *Stream_launch(StreamObject *self, PyObject *args) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n < 1)
    return PyErr_Format(PyExc_TypeError,
                        "launch() needs a callable as first argument");
  PyObject *fn = PyTuple_GET_ITEM(args, 0);
  if (!PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError, "launch(): %.100s is not callable",
                        Py_TYPE(fn)->tp_name);
  struct launch_item *L = PyMem_RawMalloc(sizeof *L);
  if (!L)
    return PyErr_NoMemory();
  L->args = PyTuple_GetSlice(args, 1, n);
  if (!L->args) {
    PyMem_RawFree(L);
    return NULL;
  }
  Py_INCREF(fn);
  L->fn = fn;
  L->device = self->device;
  L->stream_id = self->id;
  /* Label the trace slice with the callable's __name__ (at most 31 bytes
   * are kept, so not the longer __qualname__). */
  char label[32] = "py";
  PyObject *qn = PyObject_GetAttrString(fn, "__name__");
  if (qn && PyUnicode_Check(qn)) {
    const char *s = PyUnicode_AsUTF8(qn);
    if (s)
      snprintf(label, sizeof label, "%s", s);
  }
  Py_XDECREF(qn);
  PyErr_Clear();
  atomic_fetch_add(&launches_pending, 1);
  evrt_status_t st =
      evrt_launch_host_func_labeled(self->h, launch_trampoline, L, label);
  if (st) {
    atomic_fetch_sub(&launches_pending, 1);
    Py_DECREF(L->fn);
    Py_DECREF(L->args);
    PyMem_RawFree(L);
    return evrtpy_raise(st, "evrt_launch_host_func");
  }
  Py_RETURN_NONE;
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
  /* evrt: 0 is normal priority and any negative value is high (CUDA's
   * convention: (least, greatest) with least >= greatest). */
  return Py_BuildValue("(ii)", 0, -1);
}

static PyObject *Stream_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !Stream_Check(a) || !Stream_Check(b))
    Py_RETURN_NOTIMPLEMENTED;
  StreamObject *x = (StreamObject *)a, *y = (StreamObject *)b;
  int eq = x->device == y->device && x->id == y->id;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t Stream_hash(StreamObject *self) {
  PyObject *t = Py_BuildValue("(iK)", self->device,
                              (unsigned long long)self->id);
  if (!t)
    return -1;
  Py_hash_t h = PyObject_Hash(t);
  Py_DECREF(t);
  return h;
}

static PyObject *Stream_repr(StreamObject *self) {
  return PyUnicode_FromFormat("<evrt.Stream device=%d stream_id=%llu "
                              "priority=%d%s>",
                              self->device, (unsigned long long)self->id,
                              self->priority, self->owned ? "" : " default");
}

static PyObject *Stream_get_device(StreamObject *self, void *c) {
  return PyLong_FromLong(self->device);
}
static PyObject *Stream_get_priority(StreamObject *self, void *c) {
  return PyLong_FromLong(self->priority);
}
static PyObject *Stream_get_id(StreamObject *self, void *c) {
  return PyLong_FromUnsignedLongLong(self->id);
}
static PyObject *Stream_get_handle(StreamObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}
static PyObject *Stream_get_is_default(StreamObject *self, void *c) {
  return PyBool_FromLong(!self->owned);
}

static PyMethodDef Stream_methods[] = {
    {"query", (PyCFunction)Stream_query, METH_NOARGS,
     "True if all work submitted to the stream has completed."},
    {"synchronize", (PyCFunction)Stream_synchronize, METH_NOARGS,
     "Wait (GIL released) until all work submitted to the stream is done.\n"
     "Raises the first pending exception of a callable launched on it."},
    {"launch", (PyCFunction)Stream_launch, METH_VARARGS,
     "launch(fn, *args): call fn(*args) in stream order on a worker thread."},
    {"delay", (PyCFunction)Stream_delay, METH_O,
     "delay(ms): a timed task in stream order that uses no CPU."},
    {"_default", (PyCFunction)Stream_default, METH_O | METH_CLASS,
     "_default(device): the default stream of a device (internal)."},
    {"priority_range", (PyCFunction)Stream_priority_range,
     METH_NOARGS | METH_STATIC,
     "(least, greatest) priority: (0, -1)."},
    {NULL}};

static PyGetSetDef Stream_getset[] = {
    {"device", (getter)Stream_get_device, NULL, "device index (int)", NULL},
    {"priority", (getter)Stream_get_priority, NULL, "priority (int)", NULL},
    {"stream_id", (getter)Stream_get_id, NULL, "process-unique id", NULL},
    {"handle", (getter)Stream_get_handle, NULL,
     "the evrt_stream_t as an int", NULL},
    {"is_default", (getter)Stream_get_is_default, NULL,
     "True for a device's default stream", NULL},
    {NULL}};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt._evrt._StreamBase",
    .tp_basicsize = sizeof(StreamObject),
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_repr = (reprfunc)Stream_repr,
    .tp_hash = (hashfunc)Stream_hash,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Base of evrt.Stream: an in-order queue of work on a device.",
    .tp_richcompare = Stream_richcompare,
    .tp_weaklistoffset = offsetof(StreamObject, weakreflist),
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
    .tp_new = Stream_new,
};

/* ================================================================== Event */

typedef struct {
  PyObject_HEAD
  evrt_event_t h; /* NULL until the first record / ipc_handle (lazy) */
  unsigned flags;
  int want_device; /* device given at construction, -1 if none */
  int imported;
  PyObject *weakreflist;
} EventObject;

static PyTypeObject EventType;

#define Event_Check(o) PyObject_TypeCheck((o), &EventType)

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
  if (dev_o != Py_None && parse_device(dev_o, &dev) < 0)
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
  if (!Stream_Check(arg))
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
  if (!Stream_Check(arg))
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
  int intr;
  evrt_status_t st = wait_sliced(event_sync_slice, self->h, &intr);
  if (intr)
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
    if (get_current(&cur) < 0)
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
  if (parse_device(dev_o, &dev) < 0) {
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

static PyTypeObject EventType = {
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

/* ======================================================== module functions */

static PyObject *m_device_count(PyObject *m, PyObject *unused) {
  int n;
  if (get_count(&n) < 0)
    return NULL;
  return PyLong_FromLong(n);
}

static PyObject *m_current_device(PyObject *m, PyObject *unused) {
  int d;
  if (get_current(&d) < 0)
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
  if (parse_device(arg, &d) < 0)
    return NULL;
  evrt_status_t st = evrt_set_device(d);
  if (st)
    return evrtpy_raise(st, "evrt_set_device");
  Py_RETURN_NONE;
}

static PyObject *m_device_index(PyObject *m, PyObject *arg) {
  int d;
  if (parse_device(arg, &d) < 0)
    return NULL;
  return PyLong_FromLong(d);
}

static PyObject *m_synchronize(PyObject *m, PyObject *args) {
  PyObject *dev_o = Py_None;
  int d;
  if (!PyArg_ParseTuple(args, "|O:synchronize", &dev_o))
    return NULL;
  if (parse_device(dev_o, &d) < 0)
    return NULL;
  evrt_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = evrt_device_synchronize(d);
  Py_END_ALLOW_THREADS
  if (st)
    return evrtpy_raise(st, "evrt_device_synchronize");
  if (raise_launch_errors(d, 0, 0) < 0)
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

static PyObject *m_launches_pending(PyObject *m, PyObject *unused) {
  return PyLong_FromLong(atomic_load(&launches_pending));
}

/* Called by the package's atexit hook, before the interpreter finalizes.
 * Waits (GIL released, up to timeout seconds) for launched callables still
 * queued, then stops new trampolines from entering Python, waits for those
 * inside, and reports uncollected launch errors.  Returns True if
 * everything drained. */
static PyObject *m_at_exit(PyObject *m, PyObject *args) {
  double timeout = 10.0;
  if (!PyArg_ParseTuple(args, "|d:_at_exit", &timeout))
    return NULL;
  struct timespec t0, now, nap = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int drained = 1;
  Py_BEGIN_ALLOW_THREADS
  while (atomic_load(&launches_pending) > 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) +
            (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >
        timeout) {
      drained = 0;
      break;
    }
    nanosleep(&nap, NULL);
  }
  atomic_store(&py_exiting, 1);
  /* Those already past the py_exiting check need the GIL we do not hold
   * now; their Python call may be arbitrarily long, so this is bounded by
   * the same deadline. */
  while (atomic_load(&launches_inflight) > 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) +
            (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >
        timeout + 1.0) {
      drained = 0;
      break;
    }
    nanosleep(&nap, NULL);
  }
  Py_END_ALLOW_THREADS
  if (launch_errors) {
    Py_ssize_t n = PyList_GET_SIZE(launch_errors);
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *exc = PyTuple_GET_ITEM(PyList_GET_ITEM(launch_errors, i), 2);
      Py_INCREF(exc);
      PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
      Py_DECREF(exc);
      PyErr_WriteUnraisable(NULL);
    }
    if (PyList_SetSlice(launch_errors, 0, n, NULL) < 0)
      return NULL;
  }
  return PyBool_FromLong(drained);
}

static PyObject *m_strerror(PyObject *m, PyObject *arg) {
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred())
    return NULL;
  return Py_BuildValue("(ss)", evrt_err_name((evrt_status_t)v),
                       evrt_strerror((evrt_status_t)v));
}

static PyMethodDef module_methods[] = {
    {"device_count", m_device_count, METH_NOARGS, "Number of devices."},
    {"current_device", m_current_device, METH_NOARGS,
     "The calling thread's current device."},
    {"set_device", m_set_device, METH_O,
     "Set the calling thread's current device (negative: no-op)."},
    {"_device_index", m_device_index, METH_O,
     "Resolve a device argument to an index (None: current device)."},
    {"synchronize", m_synchronize, METH_VARARGS,
     "synchronize(device=None): wait for all streams of the device."},
    {"_trace_start", m_trace_start, METH_O, "evrt_trace_start(path)."},
    {"_trace_stop", m_trace_stop, METH_NOARGS, "evrt_trace_stop()."},
    {"_launches_pending", m_launches_pending, METH_NOARGS,
     "Launched callables not finished yet."},
    {"_at_exit", m_at_exit, METH_VARARGS, "Drain launches (internal)."},
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
  if (PyType_Ready(&StreamType) < 0 || PyType_Ready(&EventType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  evrtpy_Error = PyErr_NewExceptionWithDoc(
      "evrt.EvrtError",
      "An evrt call failed; .code is the evrt status, .name its name.",
      PyExc_RuntimeError, NULL);
  if (!evrtpy_Error)
    goto fail;
  PyObject *bases = PyTuple_Pack(2, evrtpy_Error, PyExc_NotImplementedError);
  if (!bases)
    goto fail;
  evrtpy_NotSupportedError = PyErr_NewExceptionWithDoc(
      "evrt.NotSupportedError",
      "The operation is not supported (EVRT_ERROR_NOT_SUPPORTED).", bases,
      NULL);
  Py_DECREF(bases);
  if (!evrtpy_NotSupportedError)
    goto fail;
  main_interp = PyInterpreterState_Get();
  if (pthread_key_create(&worker_ts_key, worker_ts_destructor) != 0) {
    PyErr_SetString(PyExc_OSError, "pthread_key_create failed");
    goto fail;
  }
  launch_errors = PyList_New(0);
  if (!launch_errors)
    goto fail;
  Py_INCREF(evrtpy_Error);
  Py_INCREF(evrtpy_NotSupportedError);
  Py_INCREF(&StreamType);
  Py_INCREF(&EventType);
  if (PyModule_AddObject(m, "EvrtError", evrtpy_Error) < 0 ||
      PyModule_AddObject(m, "NotSupportedError", evrtpy_NotSupportedError) <
          0 ||
      PyModule_AddObject(m, "_StreamBase", (PyObject *)&StreamType) < 0 ||
      PyModule_AddObject(m, "_EventBase", (PyObject *)&EventType) < 0 ||
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
