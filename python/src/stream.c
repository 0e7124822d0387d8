/*
 * stream.c - evrt._evrt._StreamBase: a stream object over evrt_stream_t.
 */
#include "evrt_module.h"

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
  if (evrtpy_parse_device(dev_o, &dev) < 0)
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
  if (evrtpy_parse_device(arg, &dev) < 0)
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
  evrt_status_t st;
  if (evrtpy_stream_wait(self->h, -1, 1, &st) < 0)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_stream_synchronize");
  if (evrtpy_raise_launch_errors(self->device, 1, self->id) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* One launched callable.  The references are owned by the item and dropped
 * by the trampoline once the call is done. */
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
  if ((op != Py_EQ && op != Py_NE) || !evrtpy_Stream_Check(a) || !evrtpy_Stream_Check(b))
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
    {"launch", (PyCFunction)evrtpy_stream_launch, METH_VARARGS,
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

PyTypeObject evrtpy_StreamType = {
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

