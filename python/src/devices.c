/*
 * devices.c - device types, the evrt.device object (torch.device's
 * equivalent) and the reading of device arguments.
 *
 * A device argument may be an int, a str ("cuda:1"), a device object or
 * None, in every function that takes one, with torch's rules and messages:
 * torch.cuda's `_get_device_index` for evrt.cuda ("Expected a cuda device,
 * but got: cpu"), torch.xpu's for evrt.xpu, torch.accelerator's for
 * evrt.accelerator ("cpu doesn't match the current accelerator cuda.").
 * A bool is never a device (TypeError): evrt.Event(True) must not mean
 * device 1.
 */
#include "evrt_module.h"

#include <stdlib.h>
#include <string.h>

int evrtpy_accelerator = EVRTPY_EVRT;

/* The evrt type's name (torch's PrivateUse1 can be renamed; so can this). */
static char evrt_name[32] = "evrt";
/* How messages spell it where torch uses a display name rather than the
 * device string ("CUDA", "XPU"; OpenReg's module says "OpenReg"). */
static char evrt_display[32] = "evrt";

static const char *const type_names[EVRTPY_NTYPES] = {NULL, "cuda", "xpu",
                                                      "cpu", "meta"};
static const int type_ids[EVRTPY_NTYPES] = {20, 1, 12, 0, 14};

const char *evrtpy_type_display(int type) {
  if (type == EVRTPY_EVRT)
    return evrt_display;
  return type == EVRTPY_CUDA ? "CUDA"
         : type == EVRTPY_XPU ? "XPU"
                              : evrtpy_type_name(type);
}

const char *evrtpy_type_name(int type) {
  if (type == EVRTPY_EVRT)
    return evrt_name;
  return type > 0 && type < EVRTPY_NTYPES ? type_names[type] : "unknown";
}

int evrtpy_type_id(int type) {
  return type >= 0 && type < EVRTPY_NTYPES ? type_ids[type] : -1;
}

int evrtpy_type_of_id(long id) {
  for (int t = 0; t < EVRTPY_NTYPES; t++)
    if (type_ids[t] == id)
      return t;
  return -1;
}

static int type_of_name(const char *s, size_t n) {
  for (int t = 0; t < EVRTPY_NTYPES; t++) {
    const char *name = evrtpy_type_name(t);
    if (strlen(name) == n && strncmp(name, s, n) == 0)
      return t;
  }
  return -1;
}

/* ------------------------------------------------------------- devices */

int evrtpy_get_count(int *n) {
  evrt_status_t st = evrt_device_count(n);
  if (st) {
    evrtpy_raise(st, "evrt_device_count");
    return -1;
  }
  return 0;
}

int evrtpy_get_current(int *d) {
  evrt_status_t st = evrt_get_device(d);
  if (st) {
    evrtpy_raise(st, "evrt_get_device");
    return -1;
  }
  return 0;
}

int evrtpy_set_device(int d) {
  evrt_status_t st = evrt_set_device(d);
  if (st) {
    evrtpy_raise(st, "evrt_set_device");
    return -1;
  }
  return 0;
}

int evrtpy_range_error(int type, long index, int count) {
  /* torch.cuda's wording for the cuda type; torch.xpu's for xpu, which is
   * also OpenReg's, PyTorch's reference out-of-tree (PrivateUse1) backend:
   * evrt's own type is the PrivateUse1 one, so it says the same. */
  if (type != EVRTPY_CUDA)
    PyErr_Format(PyExc_RuntimeError,
                 "The device index is out of range. It must be in [0, %d), "
                 "but got %ld.",
                 count, index);
  else
    PyErr_Format(PyExc_RuntimeError,
                 "Device index value %ld is out of index range [0, %d).",
                 index, count);
  return -1;
}

/* ------------------------------------------------------- device object */

PyObject *evrtpy_device_new(int type, int index) {
  DeviceObject *d = PyObject_New(DeviceObject, &evrtpy_DeviceType);
  if (!d)
    return NULL;
  d->type = type;
  d->index = index;
  d->ctx = NULL;
  return (PyObject *)d;
}

/* "type" or "type:N" -> type and index (-1 for none), torch's messages. */
static int parse_string(PyObject *str, int *type, int *index) {
  Py_ssize_t len;
  const char *s = PyUnicode_AsUTF8AndSize(str, &len);
  if (!s)
    return -1;
  const char *colon = memchr(s, ':', (size_t)len);
  size_t tn = colon ? (size_t)(colon - s) : (size_t)len;
  *index = -1;
  if (colon) {
    const char *p = colon + 1;
    char *end = NULL;
    long v = -1;
    if (*p >= '0' && *p <= '9' && (p[0] != '0' || p[1] == '\0'))
      v = strtol(p, &end, 10);
    if (v < 0 || v > 0xffff || !end || *end != '\0' ||
        end != s + len) {
      PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
      return -1;
    }
    *index = (int)v;
  }
  *type = type_of_name(s, tn);
  if (*type >= 0)
    return 0;
  /* "cuda0": a known type followed by junk */
  for (int t = 0; t < EVRTPY_NTYPES; t++) {
    const char *name = evrtpy_type_name(t);
    if (strncmp(s, name, strlen(name)) == 0) {
      PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
      return -1;
    }
  }
  PyErr_Format(PyExc_RuntimeError,
               "Expected one of cpu, cuda, xpu, meta, %s device type at start "
               "of device string: %s",
               evrt_name, s);
  return -1;
}

static PyObject *Device_new(PyTypeObject *cls, PyObject *args,
                            PyObject *kwds) {
  static char *kwlist[] = {"type", "index", NULL};
  PyObject *t = NULL, *i = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:device", kwlist, &t, &i))
    return NULL;
  int type, index = -1;
  if (PyBool_Check(t)) {
    return PyErr_Format(PyExc_TypeError,
                        "device(): a bool is not a device, got %R", t);
  } else if (evrtpy_Device_Check(t) && i == Py_None) {
    Py_INCREF(t);
    return t;
  } else if (t == Py_None) {
    /* evrt's own: the current accelerator, no index (a no-op context) */
    type = evrtpy_accelerator;
  } else if (PyLong_Check(t)) {
    long v = PyLong_AsLong(t);
    if (v == -1 && PyErr_Occurred())
      return NULL;
    if (v < 0)
      return PyErr_Format(PyExc_RuntimeError,
                          "Device index must not be negative");
    type = evrtpy_accelerator;
    index = (int)v;
  } else if (PyUnicode_Check(t)) {
    if (parse_string(t, &type, &index) < 0)
      return NULL;
  } else {
    return PyErr_Format(PyExc_TypeError,
                        "device(): argument 'type' must be str, int or "
                        "device, not %.100s",
                        Py_TYPE(t)->tp_name);
  }
  if (i != Py_None) {
    if (!PyLong_Check(i) || PyBool_Check(i))
      return PyErr_Format(PyExc_TypeError,
                          "device(): argument 'index' must be int, not "
                          "%.100s",
                          Py_TYPE(i)->tp_name);
    if (index >= 0 || !PyUnicode_Check(t))
      return PyErr_Format(PyExc_RuntimeError,
                          "type (string) must not include an index because "
                          "index was passed explicitly: %S",
                          t);
    long v = PyLong_AsLong(i);
    if (v == -1 && PyErr_Occurred())
      return NULL;
    if (v < 0)
      return PyErr_Format(PyExc_RuntimeError,
                          "Device index must not be negative");
    index = (int)v;
  }
  DeviceObject *d = (DeviceObject *)cls->tp_alloc(cls, 0);
  if (!d)
    return NULL;
  d->type = type;
  d->index = index;
  return (PyObject *)d;
}

static void Device_dealloc(DeviceObject *d) {
  Py_XDECREF(d->ctx);
  Py_TYPE(d)->tp_free((PyObject *)d);
}

static PyObject *Device_str(DeviceObject *d) {
  if (d->index < 0)
    return PyUnicode_FromString(evrtpy_type_name(d->type));
  return PyUnicode_FromFormat("%s:%d", evrtpy_type_name(d->type), d->index);
}

static PyObject *Device_repr(DeviceObject *d) {
  if (d->index < 0)
    return PyUnicode_FromFormat("device(type='%s')",
                                evrtpy_type_name(d->type));
  return PyUnicode_FromFormat("device(type='%s', index=%d)",
                              evrtpy_type_name(d->type), d->index);
}

static PyObject *Device_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !evrtpy_Device_Check(a) ||
      !evrtpy_Device_Check(b))
    Py_RETURN_NOTIMPLEMENTED;
  DeviceObject *x = (DeviceObject *)a, *y = (DeviceObject *)b;
  int eq = x->type == y->type && x->index == y->index;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t Device_hash(DeviceObject *d) {
  Py_hash_t h = (Py_hash_t)(d->type * 1000003 + d->index + 2);
  return h == -1 ? -2 : h;
}

static PyObject *Device_get_type(DeviceObject *d, void *c) {
  return PyUnicode_FromString(evrtpy_type_name(d->type));
}

static PyObject *Device_get_index(DeviceObject *d, void *c) {
  if (d->index < 0)
    Py_RETURN_NONE;
  return PyLong_FromLong(d->index);
}

static PyObject *Device_reduce(DeviceObject *d, PyObject *unused) {
  if (d->index < 0)
    return Py_BuildValue("(O(s))", (PyObject *)Py_TYPE(d),
                         evrtpy_type_name(d->type));
  return Py_BuildValue("(O(si))", (PyObject *)Py_TYPE(d),
                       evrtpy_type_name(d->type), d->index);
}

/* with evrt.device(1): the current device for the block (evrt's own use of
 * the object; a device without an index, or of another kind, changes
 * nothing).  Nests: the previous devices are kept on a per-object stack. */
static PyObject *Device_enter(DeviceObject *d, PyObject *unused) {
  int prev = -1;
  if (d->index >= 0 && d->type < EVRTPY_NGPU) {
    int n;
    if (evrtpy_get_count(&n) < 0 || evrtpy_get_current(&prev) < 0)
      return NULL;
    if (d->index >= n)
      return evrtpy_range_error(d->type, d->index, n), NULL;
    if (prev != d->index && evrtpy_set_device(d->index) < 0)
      return NULL;
  }
  if (!d->ctx && !(d->ctx = PyList_New(0)))
    return NULL;
  PyObject *p = PyLong_FromLong(prev);
  if (!p || PyList_Append(d->ctx, p) < 0) {
    Py_XDECREF(p);
    return NULL;
  }
  Py_DECREF(p);
  Py_INCREF(d);
  return (PyObject *)d;
}

static PyObject *Device_exit(DeviceObject *d, PyObject *args) {
  Py_ssize_t n = d->ctx ? PyList_GET_SIZE(d->ctx) : 0;
  if (n == 0)
    return PyErr_Format(PyExc_RuntimeError, "device.__exit__ without __enter__");
  long prev = PyLong_AsLong(PyList_GET_ITEM(d->ctx, n - 1));
  if (PyList_SetSlice(d->ctx, n - 1, n, NULL) < 0)
    return NULL;
  if (prev >= 0 && evrtpy_set_device((int)prev) < 0)
    return NULL;
  Py_RETURN_FALSE;
}

static PyMethodDef Device_methods[] = {
    {"__reduce__", (PyCFunction)Device_reduce, METH_NOARGS, NULL},
    {"__enter__", (PyCFunction)Device_enter, METH_NOARGS,
     "Make this device (if it has an index) current for a with-block."},
    {"__exit__", (PyCFunction)Device_exit, METH_VARARGS,
     "Restore the device that was current before __enter__."},
    {NULL}};

static PyGetSetDef Device_getset[] = {
    {"type", (getter)Device_get_type, NULL,
     "The device type: 'evrt', 'cuda', 'xpu', 'cpu' or 'meta'.", NULL},
    {"index", (getter)Device_get_index, NULL,
     "The device index, or None when not given.", NULL},
    {NULL}};

PyTypeObject evrtpy_DeviceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.device",
    .tp_basicsize = sizeof(DeviceObject),
    .tp_dealloc = (destructor)Device_dealloc,
    .tp_repr = (reprfunc)Device_repr,
    .tp_str = (reprfunc)Device_str,
    .tp_hash = (hashfunc)Device_hash,
    .tp_richcompare = Device_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "device(type, index=None)\n--\n\n"
        "A device: a type and an optional index, like torch.device.\n\n"
        "device('evrt:1'), device('cuda', 1), device(1) (the current\n"
        "accelerator's type, 'evrt' unless evrt.accelerator.use() chose\n"
        "another).  str() gives back 'cuda:1'.  Accepted wherever a device\n"
        "index is.  As a context manager it makes its index the current\n"
        "device for the block.",
    .tp_methods = Device_methods,
    .tp_getset = Device_getset,
    .tp_new = Device_new,
};

/* --------------------------------------------------------- arguments */

/* ValueError for a device of the wrong type, in the words of the API. */
static int wrong_type(int type, int flags, PyObject *dev) {
  if (flags & EVRTPY_DEV_ACCEL) {
    PyObject *acc = evrtpy_device_new(evrtpy_accelerator, -1);
    if (acc) {
      PyErr_Format(PyExc_ValueError,
                   "%s doesn't match the current accelerator %S.",
                   evrtpy_type_name(((DeviceObject *)dev)->type), acc);
      Py_DECREF(acc);
    }
  } else if (type == EVRTPY_EVRT) {
    PyErr_Format(PyExc_ValueError, "Expected an %s device, but got: %S",
                 evrtpy_type_name(type), dev);
  } else {
    PyErr_Format(PyExc_ValueError, "Expected a %s device, but got: %S",
                 evrtpy_type_name(type), dev);
  }
  return -1;
}

int evrtpy_device_arg(PyObject *o, int type, int flags, int *index,
                      int *type_out) {
  long v;
  int t = type;
  if (o == NULL || o == Py_None) {
    if (!(flags & EVRTPY_DEV_OPTIONAL)) {
      PyErr_Format(PyExc_ValueError,
                   "Expected a device with a specified index or an integer, "
                   "but got:None");
      return -1;
    }
    if (type_out)
      *type_out = t;
    return evrtpy_get_current(index);
  }
  if (PyLong_CheckExact(o)) {
    v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
      return -1;
  } else if (PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError,
                 "a bool is not a device (got %R): pass a device index, a "
                 "device string or an evrt.device",
                 o);
    return -1;
  } else if (PyLong_Check(o)) {
    v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
      return -1;
  } else {
    PyObject *dev;
    if (PyUnicode_Check(o)) {
      int dt, di;
      if (parse_string(o, &dt, &di) < 0)
        return -1;
      dev = evrtpy_device_new(dt, di);
    } else if (evrtpy_Device_Check(o)) {
      Py_INCREF(o);
      dev = o;
    } else if (PyObject_HasAttrString(o, "idx") &&
               PyObject_HasAttrString(o, "prev_idx")) {
      /* a device context manager (evrt.cuda.device(1)): its index, as
       * torch's _get_device_index takes it */
      PyObject *idx = PyObject_GetAttrString(o, "idx");
      if (!idx)
        return -1;
      int rc = evrtpy_device_arg(idx, type, flags, index, type_out);
      Py_DECREF(idx);
      return rc;
    } else {
      PyErr_Format(PyExc_TypeError,
                   "device must be None, an int, a str or an evrt.device, "
                   "not %.100s",
                   Py_TYPE(o)->tp_name);
      return -1;
    }
    if (!dev)
      return -1;
    DeviceObject *d = (DeviceObject *)dev;
    int ok = d->type == type ||
             ((flags & EVRTPY_DEV_ANY_GPU) && d->type < EVRTPY_NGPU);
    if (!ok) {
      wrong_type(type, flags, dev);
      Py_DECREF(dev);
      return -1;
    }
    t = d->type;
    v = d->index;
    if (v < 0 && !(flags & EVRTPY_DEV_OPTIONAL)) {
      PyErr_Format(PyExc_ValueError,
                   "Expected a device with a specified index or an integer, "
                   "but got:%S",
                   dev);
      Py_DECREF(dev);
      return -1;
    }
    Py_DECREF(dev);
  }
  if (type_out)
    *type_out = t;
  if (v < 0) {
    if (flags & EVRTPY_DEV_NEG_OK) {
      *index = -1;
      return 0;
    }
    return evrtpy_get_current(index);
  }
  int n;
  if (evrtpy_get_count(&n) < 0)
    return -1;
  if (v >= n)
    return evrtpy_range_error(t, v, n);
  *index = (int)v;
  return 0;
}

/* --------------------------------------------------- module functions */

static PyObject *m_rename_device_type(PyObject *m, PyObject *args) {
  PyObject *arg, *disp = Py_None;
  if (!PyArg_ParseTuple(args, "O|O", &arg, &disp))
    return NULL;
  Py_ssize_t n, dn = 0;
  const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, &n)
                                       : NULL;
  if (!s) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "the name must be a str, not %.100s",
                   Py_TYPE(arg)->tp_name);
    return NULL;
  }
  const char *d = s;
  if (disp != Py_None) {
    d = PyUnicode_Check(disp) ? PyUnicode_AsUTF8AndSize(disp, &dn) : NULL;
    if (!d) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError,
                     "the display name must be a str or None, not %.100s",
                     Py_TYPE(disp)->tp_name);
      return NULL;
    }
    int dok = dn > 0 && (size_t)dn < sizeof evrt_display;
    for (Py_ssize_t i = 0; dok && i < dn; i++)
      dok = d[i] > ' ' && d[i] < 0x7f;
    if (!dok)
      return PyErr_Format(PyExc_ValueError,
                          "%R is not a usable display name (1 to %d "
                          "printable ASCII characters, no spaces)",
                          disp, (int)sizeof evrt_display - 1);
  } else {
    dn = n;
  }
  int ok = n > 0 && (size_t)n < sizeof evrt_name;
  for (Py_ssize_t i = 0; ok && i < n; i++)
    ok = (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' ||
         (i > 0 && s[i] >= '0' && s[i] <= '9');
  int other = type_of_name(s, (size_t)n);
  if (!ok || (other >= 0 && other != EVRTPY_EVRT))
    return PyErr_Format(PyExc_ValueError,
                        "%R is not a usable device type name (lower-case "
                        "letters, digits, '_', not a name in use)",
                        arg);
  /* Both checked before either changes: a refused call changes nothing. */
  memcpy(evrt_name, s, (size_t)n + 1);
  memcpy(evrt_display, d, (size_t)dn + 1);
  Py_RETURN_NONE;
}

static PyObject *m_use_accelerator(PyObject *m, PyObject *arg) {
  int type = -1, index;
  if (PyUnicode_Check(arg)) {
    if (parse_string(arg, &type, &index) < 0)
      return NULL;
  } else if (evrtpy_Device_Check(arg)) {
    type = ((DeviceObject *)arg)->type;
  }
  if (type < 0 || type >= EVRTPY_NGPU)
    return PyErr_Format(PyExc_ValueError,
                        "the accelerator must be '%s', 'cuda' or 'xpu', not "
                        "%R",
                        evrt_name, arg);
  evrtpy_accelerator = type;
  Py_RETURN_NONE;
}

static PyObject *m_accelerator_type(PyObject *m, PyObject *unused) {
  return PyUnicode_FromString(evrtpy_type_name(evrtpy_accelerator));
}

PyMethodDef evrtpy_device_methods[] = {
    {"_rename_device_type", m_rename_device_type, METH_VARARGS,
     "Rename the 'evrt' device type (torch's rename_privateuse1_backend)."},
    {"_use_accelerator", m_use_accelerator, METH_O,
     "Choose the current accelerator's type: 'evrt', 'cuda' or 'xpu'."},
    {"_accelerator_type", m_accelerator_type, METH_NOARGS,
     "The current accelerator's type name."},
    {NULL}};
