/*
 * graph.c - stream capture and graphs for Python (docs/capture.md): the
 * native-style evrt.Graph / evrt.GraphExec objects and capture functions,
 * which evrt.cuda.CUDAGraph and evrt.cuda.graph (python/evrt/_graphs.py)
 * are built on, and what a capture needs from the rest of the extension:
 *
 * Kept callables.  A Python callable launched on a capturing stream
 * (Stream.launch, acl.rt.launch_host_func) becomes a graph node that runs
 * at every replay, so its item cannot be freed after one run as a launch's
 * is.  Its launcher hands it to the capture (evrtpy_capture_keep); the end
 * of the capture gives the list to the graph's owner (evrt.Graph, the model
 * of acl.mdl), which passes it on to every executable made from it.  When
 * an owner lets go of the list it does so after every piece of work then
 * enqueued on any device (evrtpy_release_after_work:
 * evrt_device_launch_host_func), so a replay in flight never runs a freed
 * item.  Kept callables are not counted as pending launches: the exit hook
 * does not wait for replays, and a replay after it does not enter Python
 * (evrtpy_trampoline_enter).
 *
 * Everything here runs with the GIL held, except release_run (a worker, or
 * the calling thread when nothing was pending), which takes it.
 */
#include "evrt_module.h"

#include <string.h>

/* ------------------------------------------------------- stream argument */

/* A stream argument: a Stream object, an int handle (0: the current
 * device's default stream) or None (the calling thread's current stream).
 * 0 or -1. */
static int stream_handle(PyObject *o, evrt_stream_t *h) {
  if (!o || o == Py_None) {
    int d;
    if (evrtpy_get_current(&d) < 0)
      return -1;
    *h = evrtpy_current_handle(d);
    return 0;
  }
  if (evrtpy_Stream_Check(o)) {
    *h = ((StreamObject *)o)->h;
    return 0;
  }
  if (PyLong_Check(o)) {
    void *p = PyLong_AsVoidPtr(o);
    if (!p && PyErr_Occurred())
      return -1;
    *h = (evrt_stream_t)p;
    return 0;
  }
  PyErr_Format(PyExc_TypeError,
               "stream must be a Stream, an int handle or None, not %.100s",
               Py_TYPE(o)->tp_name);
  return -1;
}

static int mode_arg(PyObject *o, evrt_capture_mode_t *m) {
  static const char *const names[] = {"global", "thread_local", "relaxed"};
  if (PyUnicode_Check(o)) {
    for (int i = 0; i < 3; i++)
      if (PyUnicode_CompareWithASCIIString(o, names[i]) == 0) {
        *m = (evrt_capture_mode_t)i;
        return 0;
      }
  } else if (PyLong_Check(o)) {
    long v = PyLong_AsLong(o);
    if (v >= 0 && v <= 2) {
      *m = (evrt_capture_mode_t)v;
      return 0;
    }
    if (v == -1 && PyErr_Occurred())
      return -1;
  }
  PyErr_Format(PyExc_ValueError,
               "capture mode must be 'global', 'thread_local' or 'relaxed' "
               "(or a CAPTURE_MODE_* int), not %R",
               o);
  return -1;
}

/* ------------------------------------------------------ kept callables */

/* Kept items of the captures in progress: {capture id: [capsule, ...]}. */
static PyObject *keeps;

int evrtpy_capture_id(evrt_stream_t h, uint64_t *id) {
  evrt_capture_status_t st = EVRT_CAPTURE_STATUS_NONE;
  if (evrt_stream_capture_info(h, &st, id) != EVRT_SUCCESS) {
    evrt_clear_last_error(); /* (the launch itself will report it) */
    return 0;
  }
  return st == EVRT_CAPTURE_STATUS_ACTIVE;
}

struct kept {
  void *item;
  void (*release)(void *item);
};

static void kept_capsule_free(PyObject *cap) {
  struct kept *k = PyCapsule_GetPointer(cap, "evrt.kept");
  if (k) {
    k->release(k->item);
    PyMem_RawFree(k);
  }
}

int evrtpy_capture_keep(uint64_t id, void *item, void (*release)(void *)) {
  struct kept *k = NULL;
  if ((!keeps && !(keeps = PyDict_New())) ||
      !(k = PyMem_RawMalloc(sizeof *k))) {
    if (!PyErr_Occurred())
      PyErr_NoMemory();
    release(item);
    return -1;
  }
  k->item = item;
  k->release = release;
  PyObject *cap = PyCapsule_New(k, "evrt.kept", kept_capsule_free);
  if (!cap) {
    PyMem_RawFree(k);
    release(item);
    return -1;
  }
  PyObject *key = PyLong_FromUnsignedLongLong(id);
  PyObject *list = key ? PyDict_GetItemWithError(keeps, key) : NULL;
  int r = -1;
  if (list) {
    r = PyList_Append(list, cap);
  } else if (key && !PyErr_Occurred() && (list = PyList_New(0))) {
    r = PyList_Append(list, cap) < 0 ? -1 : PyDict_SetItem(keeps, key, list);
    Py_DECREF(list);
  }
  Py_XDECREF(key);
  Py_DECREF(cap); /* the list's, or released now on failure */
  return r;
}

PyObject *evrtpy_capture_take(uint64_t id) {
  PyObject *key = PyLong_FromUnsignedLongLong(id);
  if (!key)
    return NULL;
  PyObject *list = keeps ? PyDict_GetItemWithError(keeps, key) : NULL;
  if (list) {
    Py_INCREF(list);
    if (PyDict_DelItem(keeps, key) < 0)
      Py_CLEAR(list);
  } else if (!PyErr_Occurred()) {
    list = PyList_New(0);
  }
  Py_DECREF(key);
  return list;
}

/* Drop a reference to a list of kept items, with the GIL. */
static void release_run(void *p) {
  if (!evrtpy_trampoline_enter(0))
    return; /* interpreter exiting: leaked on purpose */
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  Py_DECREF((PyObject *)p);
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
}

void evrtpy_release_after_work(PyObject *list) {
  if (!list)
    return;
  if (PyList_Check(list) && PyList_GET_SIZE(list) == 0) {
    Py_DECREF(list);
    return;
  }
  /* The reference goes to release_run; if even that cannot be arranged
   * (no memory) the items are leaked rather than freed under a replay. */
  if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, release_run, list) !=
      EVRT_SUCCESS)
    evrt_clear_last_error();
}

evrt_status_t evrtpy_capture_end(evrt_stream_t s, evrt_graph_t *g,
                                 PyObject **keep) {
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
  uint64_t id = 0;
  if (evrt_stream_capture_info(s, &cs, &id) != EVRT_SUCCESS)
    id = 0;
  evrt_status_t st = evrt_stream_end_capture(s, g);
  *keep = NULL;
  if (!id)
    return st;
  /* Over (ended, or failed and ended)?  Then its kept callables are the
   * graph's; without a graph nothing can run them: dropped at once. */
  evrt_capture_status_t cs2 = EVRT_CAPTURE_STATUS_NONE;
  uint64_t id2 = 0;
  /* (a successful call leaves the end's error detail as it is) */
  if (evrt_stream_capture_info(s, &cs2, &id2) == EVRT_SUCCESS &&
      cs2 != EVRT_CAPTURE_STATUS_NONE && id2 == id)
    goto out; /* still capturing (an unmatched or wrong-thread end) */
  PyObject *list = evrtpy_capture_take(id);
  if (st == EVRT_SUCCESS && list)
    *keep = list;
  else
    Py_XDECREF(list);
  PyErr_Clear(); /* (a failed take only leaks the items) */
out:
  return st;
}

/* ----------------------------------------------------- external events */

evrt_status_t evrtpy_record_maybe_external(evrt_event_t e, evrt_stream_t s,
                                           int external) {
  uint64_t id;
  if (external && evrtpy_capture_id(s, &id))
    return evrt_event_record_with_flags(e, s, EVRT_EVENT_RECORD_EXTERNAL);
  return evrt_event_record(e, s);
}

evrt_status_t evrtpy_wait_maybe_external(evrt_stream_t s, evrt_event_t e,
                                         int external) {
  uint64_t id;
  if (external && evrtpy_capture_id(s, &id))
    return evrt_stream_wait_event_with_flags(s, e, EVRT_EVENT_WAIT_EXTERNAL);
  return evrt_stream_wait_event(s, e);
}

/* ---------------------------------------------------------- GraphExec */

typedef struct {
  PyObject_HEAD
  evrt_graph_exec_t h; /* NULL once destroyed */
  PyObject *keep;      /* the graph's kept callables (a list) */
} ExecObject;

static int exec_destroy(ExecObject *self) {
  if (!self->h)
    return 0;
  evrt_status_t st = evrt_graph_exec_destroy(self->h);
  self->h = NULL;
  evrtpy_release_after_work(self->keep);
  self->keep = NULL;
  if (st) {
    evrtpy_raise(st, "evrt_graph_exec_destroy");
    return -1;
  }
  return 0;
}

static void exec_dealloc(ExecObject *self) {
  if (exec_destroy(self) < 0)
    PyErr_WriteUnraisable((PyObject *)self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int exec_live(ExecObject *self) {
  if (self->h)
    return 0;
  PyErr_SetString(evrtpy_Error, "the executable graph was destroyed");
  return -1;
}

static PyObject *exec_launch(ExecObject *self, PyObject *args,
                             PyObject *kw) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *so = Py_None;
  evrt_stream_t s;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:launch", kwlist, &so) ||
      exec_live(self) < 0 || stream_handle(so, &s) < 0)
    return NULL;
  evrtpy_check_site(); /* EVRT_CHECK names the Python line (check.c) */
  evrt_status_t st = evrt_graph_launch(self->h, s);
  evrt_check_site(NULL);
  if (st)
    return evrtpy_raise(st, "evrt_graph_launch");
  Py_RETURN_NONE;
}

static PyObject *exec_destroy_m(ExecObject *self, PyObject *unused) {
  if (exec_destroy(self) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *exec_handle(ExecObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}

static PyMethodDef exec_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))exec_launch,
     METH_VARARGS | METH_KEYWORDS,
     "launch($self, /, stream=None)\n--\n\n"
     "Enqueue one run of the graph on stream (None: the current stream; an\n"
     "int: an evrt_stream_t handle).  Launches of one executable graph never\n"
     "overlap."},
    {"destroy", (PyCFunction)exec_destroy_m, METH_NOARGS,
     "destroy($self, /)\n--\n\n"
     "Destroy it now (launches in flight complete).  Also done when the\n"
     "object is collected."},
    {NULL}};

static PyGetSetDef exec_getset[] = {
    {"handle", (getter)exec_handle, NULL,
     "The evrt_graph_exec_t as an int (0 once destroyed).", NULL},
    {NULL}};

PyTypeObject evrtpy_GraphExecType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.GraphExec",
    .tp_basicsize = sizeof(ExecObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An executable graph (evrt_graph_exec_t), made by\n"
              "Graph.instantiate().",
    .tp_dealloc = (destructor)exec_dealloc,
    .tp_methods = exec_methods,
    .tp_getset = exec_getset,
};

/* -------------------------------------------------------------- Graph */

typedef struct {
  PyObject_HEAD
  evrt_graph_t h; /* NULL once destroyed */
  PyObject *keep; /* kept callables (a list) */
} GraphObject;

static int graph_destroy(GraphObject *self) {
  if (!self->h)
    return 0;
  evrt_status_t st = evrt_graph_destroy(self->h);
  self->h = NULL;
  evrtpy_release_after_work(self->keep);
  self->keep = NULL;
  if (st) {
    evrtpy_raise(st, "evrt_graph_destroy");
    return -1;
  }
  return 0;
}

static void graph_dealloc(GraphObject *self) {
  if (graph_destroy(self) < 0)
    PyErr_WriteUnraisable((PyObject *)self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int graph_live(GraphObject *self) {
  if (self->h)
    return 0;
  PyErr_SetString(evrtpy_Error, "the graph was destroyed");
  return -1;
}

static PyObject *graph_instantiate(GraphObject *self, PyObject *unused) {
  if (graph_live(self) < 0)
    return NULL;
  ExecObject *x = PyObject_New(ExecObject, &evrtpy_GraphExecType);
  if (!x)
    return NULL;
  x->keep = NULL;
  evrt_status_t st;
  Py_BEGIN_ALLOW_THREADS /* O(nodes) */
  st = evrt_graph_instantiate(&x->h, self->h);
  Py_END_ALLOW_THREADS
  if (st) {
    x->h = NULL;
    Py_DECREF(x);
    return evrtpy_raise(st, "evrt_graph_instantiate");
  }
  Py_INCREF(self->keep);
  x->keep = self->keep;
  return (PyObject *)x;
}

static PyObject *graph_dot(GraphObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&:debug_dot_print", PyUnicode_FSConverter,
                        &path))
    return NULL;
  if (graph_live(self) < 0) {
    Py_DECREF(path);
    return NULL;
  }
  evrt_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = evrt_graph_debug_dot_print(self->h, PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st)
    return evrtpy_raise(st, "evrt_graph_debug_dot_print");
  Py_RETURN_NONE;
}

static PyObject *graph_destroy_m(GraphObject *self, PyObject *unused) {
  if (graph_destroy(self) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *graph_nodes(GraphObject *self, void *c) {
  size_t n = 0;
  if (graph_live(self) < 0)
    return NULL;
  evrt_status_t st = evrt_graph_node_count(self->h, &n);
  if (st)
    return evrtpy_raise(st, "evrt_graph_node_count");
  return PyLong_FromSize_t(n);
}

static PyObject *graph_handle(GraphObject *self, void *c) {
  return PyLong_FromVoidPtr((void *)self->h);
}

static PyMethodDef graph_methods[] = {
    {"instantiate", (PyCFunction)graph_instantiate, METH_NOARGS,
     "instantiate($self, /)\n--\n\n"
     "An executable copy of the graph (GraphExec); the graph may be\n"
     "destroyed afterwards."},
    {"debug_dot_print", (PyCFunction)graph_dot, METH_VARARGS,
     "debug_dot_print($self, path, /)\n--\n\n"
     "Write the graph to path as Graphviz (dot)."},
    {"destroy", (PyCFunction)graph_destroy_m, METH_NOARGS,
     "destroy($self, /)\n--\n\n"
     "Destroy it now (its executable graphs stay usable).  Also done when\n"
     "the object is collected."},
    {NULL}};

static PyGetSetDef graph_getset[] = {
    {"node_count", (getter)graph_nodes, NULL, "The number of nodes.", NULL},
    {"handle", (getter)graph_handle, NULL,
     "The evrt_graph_t as an int (0 once destroyed).", NULL},
    {NULL}};

PyTypeObject evrtpy_GraphType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "evrt.Graph",
    .tp_basicsize = sizeof(GraphObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A graph made by stream capture (evrt_graph_t): see\n"
              "evrt.end_capture().",
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

/* ---------------------------------------------------- module functions */

static PyObject *m_begin(PyObject *m, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", "mode", NULL};
  PyObject *so = Py_None, *mo = NULL;
  evrt_stream_t s;
  evrt_capture_mode_t mode = EVRT_CAPTURE_MODE_GLOBAL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:begin_capture", kwlist, &so,
                                   &mo) ||
      stream_handle(so, &s) < 0 || (mo && mode_arg(mo, &mode) < 0))
    return NULL;
  evrt_status_t st = evrt_stream_begin_capture(s, mode);
  if (st)
    return evrtpy_raise(st, "evrt_stream_begin_capture");
  Py_RETURN_NONE;
}

static PyObject *m_end(PyObject *m, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *so = Py_None;
  evrt_stream_t s;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:end_capture", kwlist, &so) ||
      stream_handle(so, &s) < 0)
    return NULL;
  GraphObject *g = PyObject_New(GraphObject, &evrtpy_GraphType);
  if (!g)
    return NULL;
  g->h = NULL;
  g->keep = NULL;
  PyObject *keep = NULL;
  evrt_status_t st = evrtpy_capture_end(s, &g->h, &keep);
  if (st) {
    Py_XDECREF(keep);
    Py_DECREF(g);
    return evrtpy_raise(st, "evrt_stream_end_capture");
  }
  if (!keep && !(keep = PyList_New(0))) {
    Py_DECREF(g);
    return NULL;
  }
  g->keep = keep;
  return (PyObject *)g;
}

static PyObject *m_info(PyObject *m, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", NULL};
  PyObject *so = Py_None;
  evrt_stream_t s;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:capture_status", kwlist,
                                   &so) ||
      stream_handle(so, &s) < 0)
    return NULL;
  evrt_capture_status_t cs;
  uint64_t id;
  evrt_status_t st = evrt_stream_capture_info(s, &cs, &id);
  if (st)
    return evrtpy_raise(st, "evrt_stream_capture_info");
  static const char *const names[] = {"none", "active", "invalidated"};
  return Py_BuildValue("(sK)", names[cs], (unsigned long long)id);
}

static PyObject *m_exchange(PyObject *m, PyObject *arg) {
  static const char *const names[] = {"global", "thread_local", "relaxed"};
  evrt_capture_mode_t mode;
  if (mode_arg(arg, &mode) < 0)
    return NULL;
  evrt_status_t st = evrt_thread_exchange_capture_mode(&mode);
  if (st)
    return evrtpy_raise(st, "evrt_thread_exchange_capture_mode");
  return PyUnicode_FromString(names[mode]);
}

static PyMethodDef graph_module_methods[] = {
    {"begin_capture", (PyCFunction)(void (*)(void))m_begin,
     METH_VARARGS | METH_KEYWORDS,
     "begin_capture(stream=None, mode='global')\n--\n\n"
     "Begin capturing stream (None: the current stream): its work becomes\n"
     "the nodes of a graph instead of running.  mode: 'global',\n"
     "'thread_local' or 'relaxed' (docs/capture.md, rule C10)."},
    {"end_capture", (PyCFunction)(void (*)(void))m_end,
     METH_VARARGS | METH_KEYWORDS,
     "end_capture(stream=None)\n--\n\n"
     "End the capture begun on stream and return its Graph."},
    {"capture_status", (PyCFunction)(void (*)(void))m_info,
     METH_VARARGS | METH_KEYWORDS,
     "capture_status(stream=None)\n--\n\n"
     "(status, capture id) of stream: status 'none', 'active' or\n"
     "'invalidated'; the id is 0 when not capturing."},
    {"exchange_capture_mode", m_exchange, METH_O,
     "exchange_capture_mode(mode, /)\n--\n\n"
     "Set the calling thread's capture interaction mode and return the\n"
     "previous one ('global' by default)."},
    {NULL}};

int evrtpy_graph_init(PyObject *m) {
  if (PyType_Ready(&evrtpy_GraphType) < 0 ||
      PyType_Ready(&evrtpy_GraphExecType) < 0 ||
      PyModule_AddFunctions(m, graph_module_methods) < 0)
    return -1;
  Py_INCREF(&evrtpy_GraphType);
  if (PyModule_AddObject(m, "Graph", (PyObject *)&evrtpy_GraphType) < 0) {
    Py_DECREF(&evrtpy_GraphType);
    return -1;
  }
  Py_INCREF(&evrtpy_GraphExecType);
  if (PyModule_AddObject(m, "GraphExec", (PyObject *)&evrtpy_GraphExecType) <
      0) {
    Py_DECREF(&evrtpy_GraphExecType);
    return -1;
  }
  return 0;
}
