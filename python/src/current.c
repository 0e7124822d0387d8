/*
 * current.c - the calling thread's current streams, the cached default
 * streams, and the module functions of each device type (current_stream,
 * set_stream, synchronize, device_count, ...): evrt's, evrt.cuda's,
 * evrt.xpu's and evrt.accelerator's are the same C functions bound to a
 * FlavorObject that names the type.
 *
 * The current stream is per thread and per device, as in torch, and there
 * is one per device whatever the type the caller asks for it in: a stream
 * made current through evrt.cuda is current for evrt.accelerator too.  A
 * thread's state is a C thread-local (one load on the hot paths: record()
 * and current_stream() read it without any dictionary lookup): the native
 * handle per device (NULL: the default stream, which is also what the C API
 * reads NULL as), and per type the object returned for it.  A capsule in
 * the thread state's dict owns it: when Python clears the thread's state
 * (the thread ends), the capsule's destructor drops the objects.
 */
#include "evrt_module.h"

#include <stdlib.h>

struct tls {
  int n;            /* devices */
  int dead;         /* its capsule was destroyed on another thread */
  evrt_stream_t *h; /* [n]: current native stream, NULL: default */
  PyObject **obj;   /* [n * EVRTPY_NGPU]: the object per type, or NULL */
};

static _Thread_local struct tls *tls;

/* Default streams: [type][device] objects, made on first use and kept. */
static PyObject **defaults;
static int ndefaults;

static void tls_free_objects(struct tls *t) {
  for (int i = 0; i < t->n * EVRTPY_NGPU; i++)
    Py_CLEAR(t->obj[i]);
}

static void capsule_destructor(PyObject *cap) {
  struct tls *t = PyCapsule_GetPointer(cap, "evrt.current");
  if (!t)
    return;
  tls_free_objects(t);
  if (tls == t) {
    tls = NULL;
    PyMem_RawFree(t->h);
    PyMem_RawFree(t->obj);
    PyMem_RawFree(t);
  } else {
    /* Cleared from another thread (interpreter finalization): the owner
     * thread, if it still runs, finds it dead and makes a new one. */
    t->dead = 1;
  }
}

static int device_count(void) {
  int n = 0;
  return evrt_device_count(&n) == EVRT_SUCCESS ? n : 0;
}

static struct tls *tls_get(int create) {
  struct tls *t = tls;
  if (t && !t->dead)
    return t;
  if (!create)
    return NULL;
  int n = device_count();
  if (n <= 0) {
    int d;
    (void)evrtpy_get_count(&d); /* raises the library's error */
    return NULL;
  }
  t = PyMem_RawCalloc(1, sizeof *t);
  evrt_stream_t *h = PyMem_RawCalloc((size_t)n, sizeof *h);
  PyObject **obj = PyMem_RawCalloc((size_t)n * EVRTPY_NGPU, sizeof *obj);
  if (!t || !h || !obj) {
    PyMem_RawFree(t);
    PyMem_RawFree(h);
    PyMem_RawFree(obj);
    PyErr_NoMemory();
    return NULL;
  }
  t->n = n;
  t->h = h;
  t->obj = obj;
  PyObject *dict = PyThreadState_GetDict();
  PyObject *cap = dict ? PyCapsule_New(t, "evrt.current", capsule_destructor)
                       : NULL;
  tls = t;
  if (!cap || PyDict_SetItemString(dict, "evrt.current", cap) < 0) {
    if (cap)
      Py_DECREF(cap); /* frees t through the destructor */
    else {
      tls = NULL;
      PyMem_RawFree(h);
      PyMem_RawFree(obj);
      PyMem_RawFree(t);
    }
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "no thread state dict");
    return NULL;
  }
  Py_DECREF(cap); /* the dict owns it */
  return t;
}

evrt_stream_t evrtpy_current_handle(int device) {
  struct tls *t = tls;
  if (!t || t->dead || device >= t->n)
    return NULL;
  return t->h[device];
}

PyObject *evrtpy_default_stream(int type, int device) {
  if (!defaults) {
    int n = device_count();
    if (n <= 0)
      return evrtpy_get_count(&n), NULL;
    defaults = PyMem_RawCalloc((size_t)n * EVRTPY_NGPU, sizeof *defaults);
    if (!defaults)
      return PyErr_NoMemory();
    ndefaults = n;
  }
  if (device < 0 || device >= ndefaults)
    return evrtpy_range_error(type, device, ndefaults), NULL;
  PyObject **slot = &defaults[device * EVRTPY_NGPU + type];
  if (!*slot) {
    evrt_stream_t h;
    evrt_status_t st = evrt_stream_default(device, &h);
    if (st)
      return evrtpy_raise(st, "evrt_stream_default");
    *slot = evrtpy_stream_wrap(NULL, type, h, NULL);
    if (!*slot)
      return NULL;
  }
  Py_INCREF(*slot);
  return *slot;
}

PyObject *evrtpy_current_stream(int type, int device) {
  struct tls *t = tls;
  if (!t || t->dead || device >= t->n)
    return evrtpy_default_stream(type, device);
  PyObject **slot = &t->obj[device * EVRTPY_NGPU + type];
  if (*slot) {
    Py_INCREF(*slot);
    return *slot;
  }
  evrt_stream_t h = t->h[device];
  if (!h)
    return evrtpy_default_stream(type, device);
  /* Current through another type: a view of it in this one. */
  PyObject *owner = evrtpy_stream_owner(h);
  PyObject *o = evrtpy_stream_wrap(NULL, type, h, owner);
  Py_XDECREF(owner);
  if (!o)
    return NULL;
  Py_INCREF(o);
  *slot = o;
  return o;
}

int evrtpy_set_stream(StreamObject *s) {
  struct tls *t = tls_get(1);
  if (!t)
    return -1;
  int d = s->device;
  if (d >= t->n)
    return evrtpy_range_error(s->type, d, t->n);
  for (int k = 0; k < EVRTPY_NGPU; k++)
    Py_CLEAR(t->obj[d * EVRTPY_NGPU + k]);
  t->h[d] = s->is_default ? NULL : s->h;
  Py_INCREF(s);
  t->obj[d * EVRTPY_NGPU + s->type] = (PyObject *)s;
  int cur;
  if (evrtpy_get_current(&cur) < 0)
    return -1;
  return cur == d ? 0 : evrtpy_set_device(d);
}

/* ---------------------------------------------------- module functions */

/* The type a call works in: the FlavorObject's, or for evrt.accelerator
 * the current accelerator's. */
static inline int self_type(PyObject *self) {
  FlavorObject *f = (FlavorObject *)self;
  return f->accel ? evrtpy_accelerator : f->type;
}

static inline int self_flags(PyObject *self) {
  FlavorObject *f = (FlavorObject *)self;
  if (f->accel)
    return EVRTPY_DEV_ACCEL;
  return f->type == EVRTPY_EVRT ? EVRTPY_DEV_ANY_GPU : 0;
}

/* One optional device argument (positional or device=...). */
static int one_device(const char *fn, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, PyObject **dev) {
  *dev = Py_None;
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nk > 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (%zd given)",
                 fn, nargs + nk);
    return -1;
  }
  if (nk && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                             "device") != 0) {
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument "
                 "'%U'", fn, PyTuple_GET_ITEM(kwnames, 0));
    return -1;
  }
  if (nargs + nk == 1)
    *dev = args[0];
  return 0;
}

static PyObject *f_current_stream(PyObject *self, PyObject *const *args,
                                  Py_ssize_t nargs, PyObject *kwnames) {
  int type = self_type(self), d;
  if (nargs == 0 && !kwnames) {
    /* the hot path: the current device's current stream */
    if (evrt_get_device(&d) != EVRT_SUCCESS && evrtpy_get_current(&d) < 0)
      return NULL;
    return evrtpy_current_stream(type, d);
  }
  PyObject *dev;
  if (one_device("current_stream", args, nargs, kwnames, &dev) < 0 ||
      evrtpy_device_arg(dev, type, EVRTPY_DEV_OPTIONAL | self_flags(self), &d,
                        &type) < 0)
    return NULL;
  return evrtpy_current_stream(type, d);
}

static PyObject *f_default_stream(PyObject *self, PyObject *const *args,
                                  Py_ssize_t nargs, PyObject *kwnames) {
  int type = self_type(self), d;
  PyObject *dev;
  if (one_device("default_stream", args, nargs, kwnames, &dev) < 0 ||
      evrtpy_device_arg(dev, type, EVRTPY_DEV_OPTIONAL | self_flags(self), &d,
                        &type) < 0)
    return NULL;
  return evrtpy_default_stream(type, d);
}

static PyObject *f_set_stream(PyObject *self, PyObject *arg) {
  if (arg == Py_None)
    Py_RETURN_NONE; /* torch: a no-op */
  if (!evrtpy_Stream_Check(arg))
    return PyErr_Format(PyExc_TypeError,
                        "set_stream() expects a stream, not %.100s",
                        Py_TYPE(arg)->tp_name);
  StreamObject *s = (StreamObject *)arg;
  if (((FlavorObject *)self)->accel && s->type != evrtpy_accelerator) {
    PyObject *acc = evrtpy_device_new(evrtpy_accelerator, -1);
    if (acc)
      PyErr_Format(PyExc_ValueError,
                   "%s doesn't match the current accelerator %S.",
                   evrtpy_type_name(s->type), acc);
    Py_XDECREF(acc);
    return NULL;
  }
  if (evrtpy_set_stream(s) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *f_synchronize(PyObject *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
  int type = self_type(self), d;
  PyObject *dev;
  if (one_device("synchronize", args, nargs, kwnames, &dev) < 0 ||
      evrtpy_device_arg(dev, type, EVRTPY_DEV_OPTIONAL | self_flags(self), &d,
                        NULL) < 0)
    return NULL;
  evrt_status_t st;
  if (evrtpy_device_wait(d, -1, 0, &st) < 0)
    return NULL;
  if (st)
    return evrtpy_raise(st, "evrt_device_synchronize");
  EVRTPY_GPU_TRACE(type, EVRTPY_TRACE_DEVICE_SYNCHRONIZATION, 0, 0, 0);
  if (evrtpy_raise_launch_errors(d, 0, 0) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *f_device_count(PyObject *self, PyObject *unused) {
  int n;
  if (evrtpy_get_count(&n) < 0)
    return NULL;
  return PyLong_FromLong(n);
}

static PyObject *f_is_available(PyObject *self, PyObject *unused) {
  int n = 0;
  return PyBool_FromLong(evrt_device_count(&n) == EVRT_SUCCESS && n > 0);
}

/* init(): torch.cuda.init / torch.xpu.init (a backend module's init). */
static PyObject *f_init(PyObject *self, PyObject *unused) {
  evrt_status_t st = evrt_init();
  if (st == EVRT_ERROR_FORKED) {
    const char *name = evrtpy_type_display(self_type(self));
    return PyErr_Format(PyExc_RuntimeError,
                        "Cannot re-initialize %s in forked subprocess. To use "
                        "%s with multiprocessing, you must use the 'spawn' "
                        "start method",
                        name, name);
  }
  if (st)
    return evrtpy_raise(st, "evrt_init");
  Py_RETURN_NONE;
}

static PyObject *f_is_initialized(PyObject *self, PyObject *unused) {
  int on = 0;
  evrt_status_t st = evrt_is_initialized(&on);
  if (st)
    return evrtpy_raise(st, "evrt_is_initialized");
  return PyBool_FromLong(on);
}

static PyObject *f_current_device(PyObject *self, PyObject *unused) {
  int d;
  if (evrtpy_get_current(&d) < 0)
    return NULL;
  return PyLong_FromLong(d);
}

/* set_device(device): a negative index is a no-op (torch). */
static PyObject *f_set_device(PyObject *self, PyObject *arg) {
  int d, type = self_type(self);
  int flags = self_flags(self) | EVRTPY_DEV_NEG_OK;
  if (evrtpy_device_arg(arg, type, flags, &d, NULL) < 0)
    return NULL;
  if (d >= 0 && evrtpy_set_device(d) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* torch's _exchange_device(i): make i current, return the previous index;
 * a negative i is a no-op returning -1. */
static PyObject *f_exchange_device(PyObject *self, PyObject *arg) {
  int d, prev;
  if (evrtpy_device_arg(arg, self_type(self),
                        self_flags(self) | EVRTPY_DEV_NEG_OK, &d, NULL) < 0)
    return NULL;
  if (d < 0)
    return PyLong_FromLong(-1);
  if (evrtpy_get_current(&prev) < 0)
    return NULL;
  if (prev != d && evrtpy_set_device(d) < 0)
    return NULL;
  return PyLong_FromLong(prev);
}

static PyObject *f_get_stream_from_external(PyObject *self, PyObject *args,
                                            PyObject *kwds) {
  static char *kwlist[] = {"data_ptr", "device", NULL};
  PyObject *ptr, *dev = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:get_stream_from_external",
                                   kwlist, &ptr, &dev))
    return NULL;
  PyObject *kw = Py_BuildValue("{sOsO}", "stream_ptr", ptr, "device", dev);
  PyObject *noargs = PyTuple_New(0);
  PyObject *r = kw && noargs ? PyObject_Call((PyObject *)evrtpy_stream_class(
                                                 self_type(self)),
                                             noargs, kw)
                             : NULL;
  Py_XDECREF(kw);
  Py_XDECREF(noargs);
  return r;
}

static PyObject *f_ipc_collect(PyObject *self, PyObject *unused) {
  /* torch frees the CUDA memory of IPC tensors nobody uses any more; evrt
   * shares no memory between processes, and an interprocess event's
   * resources go with the event. */
  Py_RETURN_NONE;
}

/* Forget the calling thread's current streams: every device's is its
 * default stream again (tests reset the thread with it). */
static PyObject *f_reset_current_streams(PyObject *self, PyObject *unused) {
  struct tls *t = tls_get(0);
  if (t) {
    tls_free_objects(t);
    for (int d = 0; d < t->n; d++)
      t->h[d] = NULL;
  }
  Py_RETURN_NONE;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef evrtpy_flavor_methods[] = {
    {"current_stream", FASTKW(f_current_stream),
     "current_stream($self, device=None, /)\n--\n\n"
     "The calling thread's current stream of `device` (default: the current\n"
     "device): the device's default stream unless another was set."},
    {"default_stream", FASTKW(f_default_stream),
     "default_stream($self, device=None, /)\n--\n\n"
     "The default stream of `device` (default: the current device)."},
    {"set_stream", (PyCFunction)f_set_stream, METH_O,
     "set_stream($self, stream, /)\n--\n\n"
     "Make `stream` the calling thread's current stream of its device, and\n"
     "its device the current device.  None is a no-op."},
    {"synchronize", FASTKW(f_synchronize),
     "synchronize($self, device=None, /)\n--\n\n"
     "Wait for all the work of all the streams of `device` (default: the\n"
     "current device).  The GIL is released while waiting and Ctrl-C\n"
     "interrupts the wait.  Raises the first pending exception of a\n"
     "callable launched on a stream of that device."},
    {"device_count", (PyCFunction)f_device_count, METH_NOARGS,
     "device_count($self, /)\n--\n\nThe number of devices."},
    {"is_available", (PyCFunction)f_is_available, METH_NOARGS,
     "is_available($self, /)\n--\n\nTrue if there is at least one device."},
    {"init", (PyCFunction)f_init, METH_NOARGS,
     "init($self, /)\n--\n\n"
     "Initialize evrt now (it initializes on first use otherwise).  In a\n"
     "child forked after initialization: RuntimeError, as torch's."},
    {"is_initialized", (PyCFunction)f_is_initialized, METH_NOARGS,
     "is_initialized($self, /)\n--\n\n"
     "True if evrt is initialized and usable in this process (False in a\n"
     "child forked after initialization).  Does not initialize it."},
    {"current_device", (PyCFunction)f_current_device, METH_NOARGS,
     "current_device($self, /)\n--\n\n"
     "The index of the calling thread's current device."},
    {"set_device", (PyCFunction)f_set_device, METH_O,
     "set_device($self, device, /)\n--\n\n"
     "Set the calling thread's current device (a negative index is a\n"
     "no-op)."},
    {"_exchange_device", (PyCFunction)f_exchange_device, METH_O,
     "_exchange_device($self, device, /)\n--\n\n"
     "Make `device` current and return the previous index (negative: a\n"
     "no-op returning -1)."},
    {"get_stream_from_external",
     (PyCFunction)(void (*)(void))f_get_stream_from_external,
     METH_VARARGS | METH_KEYWORDS,
     "get_stream_from_external($self, data_ptr, device=None)\n--\n\n"
     "A stream object for a native stream handle made by C code (which\n"
     "keeps it alive)."},
    {"_reset_current_streams", (PyCFunction)f_reset_current_streams,
     METH_NOARGS,
     "_reset_current_streams($self, /)\n--\n\n"
     "Make every device's default stream current again on this thread."},
    {"ipc_collect", (PyCFunction)f_ipc_collect, METH_NOARGS,
     "ipc_collect($self, /)\n--\n\n"
     "torch.cuda.ipc_collect's equivalent: nothing to collect in evrt (no\n"
     "memory is shared between processes)."},
    {NULL}};
