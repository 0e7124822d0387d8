/*
 * acl_mdl.c - pyACL's model runtime instance calls (acl.mdl.ri_*) and the
 * label calls (acl.rt.*_label*) over the ACL layer's src/acl/acl_mdl.c
 * (docs/capture.md, docs/python.md).  pyACL's conventions: handles are
 * ints, every call returns the ACL code as `ret`, after its outputs; the
 * names are the C names in snake case without the family prefix
 * (aclmdlRICaptureBegin -> acl.mdl.ri_capture_begin).
 *
 * Kept callables.  A Python callable that acl.rt.launch_host_func puts on a
 * capturing stream (a model being captured, or a stream bound to a model
 * being built) is a task of the model and runs at every execution, so it
 * cannot be freed after one run as a plain launch's is: it is kept with the
 * capture (evrtpy_capture_keep, graph.c), and when the capture ends into a
 * model (ri_capture_end, ri_end_task) the kept items become the model's
 * (the `models` dict: model handle -> list).  ri_destroy lets go of them
 * after every piece of work then enqueued (evrtpy_release_after_work), so an
 * execution in flight never runs a freed callable.  A capture that ends
 * without a model (invalidated, unjoined) drops them the same way.
 *
 * Everything here runs with the GIL held, except kept_run (a worker), which
 * takes it, and the blocking ACL calls, which release it.
 */
#include "evrt_module.h"

#ifdef EVRTPY_HAVE_ACL

#include <acl/acl.h>

/* --------------------------------------------------------------- helpers */

#define mdl_ptr evrtpy_acl_to_ptr /* an int handle, or None (acl_module.c) */
#define handle_ret evrtpy_acl_ptr_ret

#define RET(expr) return PyLong_FromLong((long)(expr))

/* ------------------------------------------------------ kept callables */

struct kept_cb {
  PyObject *fn;
  PyObject *arg;
};

/* A task of a model: runs fn(arg) at each execution, frees nothing. */
static void kept_run(void *p) {
  struct kept_cb *k = p;
  if (!evrtpy_trampoline_enter(0))
    return; /* interpreter exiting: no GIL to be had */
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *r = PyObject_CallOneArg(k->fn, k->arg);
  if (r)
    Py_DECREF(r);
  else
    PyErr_WriteUnraisable(k->fn); /* as a plain launch_host_func's */
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
}

/* Called with the GIL (a capsule destructor, graph.c). */
static void kept_free(void *p) {
  struct kept_cb *k = p;
  Py_DECREF(k->fn);
  Py_DECREF(k->arg);
  PyMem_RawFree(k);
}

int evrtpy_acl_launch_kept(void *stream, PyObject *fn, PyObject *arg,
                           int *ret) {
  uint64_t id;
  if (!evrtpy_capture_id((evrt_stream_t)stream, &id))
    return 0;
  struct kept_cb *k = PyMem_RawMalloc(sizeof *k);
  if (!k) {
    PyErr_NoMemory();
    return -1;
  }
  Py_INCREF(fn);
  Py_INCREF(arg);
  k->fn = fn;
  k->arg = arg;
  /* Kept first: a capture that ends meanwhile makes this a plain task
   * that never frees its item (a leak, not a crash). */
  if (evrtpy_capture_keep(id, k, kept_free) < 0)
    return -1;
  *ret = aclrtLaunchHostFunc(stream, kept_run, k);
  return 1;
}

/* Model handle -> list of kept items. */
static PyObject *models;

/* Give the kept items of capture `id` to model m (when ok and m), or let
 * go of them, once that capture is over on stream s.  Errors here only
 * leak items, so they are cleared. */
static void settle(void *s, uint64_t id, void *m, int ok) {
  if (!id)
    return;
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
  uint64_t now = 0;
  if (evrt_stream_capture_info((evrt_stream_t)s, &cs, &now) ==
          EVRT_SUCCESS &&
      cs != EVRT_CAPTURE_STATUS_NONE && now == id)
    return; /* still capturing (a refused end) */
  evrt_clear_last_error();
  PyObject *list = evrtpy_capture_take(id);
  if (list && ok && m && (models || (models = PyDict_New()))) {
    PyObject *key = PyLong_FromVoidPtr(m);
    PyObject *old = key ? PyDict_GetItemWithError(models, key) : NULL;
    if (old) {
      Py_ssize_t n = PyList_GET_SIZE(old);
      if (PyList_SetSlice(old, n, n, list) == 0)
        Py_CLEAR(list); /* moved into the model's list */
    } else if (key && !PyErr_Occurred() &&
               PyDict_SetItem(models, key, list) == 0) {
      Py_CLEAR(list);
    }
    Py_XDECREF(key);
  }
  evrtpy_release_after_work(list); /* (NULL: nothing left to drop) */
  PyErr_Clear();
}

static uint64_t capture_of(void *s) {
  uint64_t id = 0;
  return evrtpy_capture_id((evrt_stream_t)s, &id) ? id : 0;
}

/* ------------------------------------------------------------ acl.mdl */

static PyObject *m_capture_begin(PyObject *m, PyObject *args) {
  void *s;
  int mode;
  if (!PyArg_ParseTuple(args, "O&i:ri_capture_begin", mdl_ptr, &s, &mode))
    return NULL;
  RET(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)mode));
}

/* ri_capture_get_info(stream) -> (status, model_ri, ret) */
static PyObject *m_capture_get_info(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:ri_capture_get_info", mdl_ptr, &s))
    return NULL;
  aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  aclmdlRI ri = NULL;
  aclError r = aclmdlRICaptureGetInfo(s, &st, &ri);
  PyObject *h = ri ? PyLong_FromVoidPtr(ri) : PyLong_FromLong(0);
  return h ? Py_BuildValue("(iNi)", (int)st, h, (int)r) : NULL;
}

/* ri_capture_end(stream) -> (model_ri, ret) */
static PyObject *m_capture_end(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:ri_capture_end", mdl_ptr, &s))
    return NULL;
  uint64_t id = capture_of(s);
  aclmdlRI ri = NULL;
  aclError r = aclmdlRICaptureEnd(s, &ri);
  settle(s, id, ri, r == ACL_SUCCESS);
  return handle_ret(r == ACL_SUCCESS ? ri : NULL, r);
}

/* ri_capture_thread_exchange_mode(mode) -> (previous mode, ret) */
static PyObject *m_exchange(PyObject *m, PyObject *args) {
  int mode;
  if (!PyArg_ParseTuple(args, "i:ri_capture_thread_exchange_mode", &mode))
    return NULL;
  aclmdlRICaptureMode v = (aclmdlRICaptureMode)mode;
  aclError r = aclmdlRICaptureThreadExchangeMode(&v);
  return Py_BuildValue("(ii)", (int)v, (int)r);
}

static PyObject *m_execute_async(PyObject *m, PyObject *args) {
  void *ri, *s;
  if (!PyArg_ParseTuple(args, "O&O&:ri_execute_async", mdl_ptr, &ri, mdl_ptr,
                        &s))
    return NULL;
  RET(aclmdlRIExecuteAsync(ri, s));
}

/* ri_execute(model_ri, timeout_ms) -> ret; waits without the GIL (the
 * model's Python tasks need it). */
static PyObject *m_execute(PyObject *m, PyObject *args) {
  void *ri;
  int timeout;
  if (!PyArg_ParseTuple(args, "O&i:ri_execute", mdl_ptr, &ri, &timeout))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclmdlRIExecute(ri, (int32_t)timeout);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *m_destroy(PyObject *m, PyObject *args) {
  void *ri;
  if (!PyArg_ParseTuple(args, "O&:ri_destroy", mdl_ptr, &ri))
    return NULL;
  aclError r = aclmdlRIDestroy(ri);
  if (r == ACL_SUCCESS && models && ri) {
    PyObject *key = PyLong_FromVoidPtr(ri);
    PyObject *list = key ? PyDict_GetItemWithError(models, key) : NULL;
    if (list) {
      Py_INCREF(list);
      if (PyDict_DelItem(models, key) < 0)
        PyErr_Clear();
      evrtpy_release_after_work(list);
    }
    Py_XDECREF(key);
    PyErr_Clear(); /* (a failed lookup only leaks the items) */
  }
  RET(r);
}

/* ri_build_begin(flag) -> (model_ri, ret) */
static PyObject *m_build_begin(PyObject *m, PyObject *args) {
  unsigned int flag;
  if (!PyArg_ParseTuple(args, "I:ri_build_begin", &flag))
    return NULL;
  aclmdlRI ri = NULL;
  aclError r = aclmdlRIBuildBegin(&ri, (uint32_t)flag);
  return handle_ret(r == ACL_SUCCESS ? ri : NULL, r);
}

static PyObject *m_bind_stream(PyObject *m, PyObject *args) {
  void *ri, *s;
  unsigned int flag;
  if (!PyArg_ParseTuple(args, "O&O&I:ri_bind_stream", mdl_ptr, &ri, mdl_ptr,
                        &s, &flag))
    return NULL;
  RET(aclmdlRIBindStream(ri, s, (uint32_t)flag));
}

/* The end of a bound stream's tasks ends its capture: its kept callables
 * become the model's. */
static PyObject *m_end_task(PyObject *m, PyObject *args) {
  void *ri, *s;
  if (!PyArg_ParseTuple(args, "O&O&:ri_end_task", mdl_ptr, &ri, mdl_ptr, &s))
    return NULL;
  uint64_t id = capture_of(s);
  aclError r = aclmdlRIEndTask(ri, s);
  settle(s, id, ri, r == ACL_SUCCESS);
  RET(r);
}

/* ri_build_end(model_ri, reserve=None) -> ret (reserve must be None/0). */
static PyObject *m_build_end(PyObject *m, PyObject *args) {
  void *ri, *reserve = NULL;
  if (!PyArg_ParseTuple(args, "O&|O&:ri_build_end", mdl_ptr, &ri, mdl_ptr,
                        &reserve))
    return NULL;
  RET(aclmdlRIBuildEnd(ri, reserve));
}

/* Unbinding a stream whose tasks were not ended ends its capture: what it
 * kept belongs to the model as EndTask's would (the layer decides whether
 * they run). */
static PyObject *m_unbind_stream(PyObject *m, PyObject *args) {
  void *ri, *s;
  if (!PyArg_ParseTuple(args, "O&O&:ri_unbind_stream", mdl_ptr, &ri, mdl_ptr,
                        &s))
    return NULL;
  uint64_t id = capture_of(s);
  aclError r = aclmdlRIUnbindStream(ri, s);
  settle(s, id, ri, r == ACL_SUCCESS);
  RET(r);
}

static PyObject *m_set_name(PyObject *m, PyObject *args) {
  void *ri;
  const char *name;
  if (!PyArg_ParseTuple(args, "O&s:ri_set_name", mdl_ptr, &ri, &name))
    return NULL;
  RET(aclmdlRISetName(ri, name));
}

/* ri_get_name(model_ri) -> (name, ret) */
static PyObject *m_get_name(PyObject *m, PyObject *args) {
  void *ri;
  if (!PyArg_ParseTuple(args, "O&:ri_get_name", mdl_ptr, &ri))
    return NULL;
  char buf[256] = "";
  aclError r = aclmdlRIGetName(ri, sizeof buf, buf);
  return Py_BuildValue("(si)", r == ACL_SUCCESS ? buf : "", (int)r);
}

/* ri_get_id(model_ri) -> (id, ret) */
static PyObject *m_get_id(PyObject *m, PyObject *args) {
  void *ri;
  if (!PyArg_ParseTuple(args, "O&:ri_get_id", mdl_ptr, &ri))
    return NULL;
  uint32_t id = 0;
  aclError r = aclmdlRIGetId(ri, &id);
  return Py_BuildValue("(Ii)", (unsigned)id, (int)r);
}

/* The two-call listing of aclmdlRIGetStreams / aclmdlRIGetTasksByStream as
 * one Python call: (list of int handles, ret). */
typedef aclError (*list_fn)(void *owner, void **out, uint32_t *n);
static aclError streams_fn(void *ri, void **out, uint32_t *n) {
  return aclmdlRIGetStreams(ri, (aclrtStream *)out, n);
}
static aclError tasks_fn(void *s, void **out, uint32_t *n) {
  return aclmdlRIGetTasksByStream(s, (aclmdlRITask *)out, n);
}
static PyObject *listing(void *owner, list_fn f) {
  uint32_t n = 0;
  aclError r = f(owner, NULL, &n);
  void **v = NULL;
  if (r == ACL_SUCCESS && n) {
    if (!(v = PyMem_Calloc(n, sizeof *v)))
      return PyErr_NoMemory();
    r = f(owner, v, &n);
  }
  PyObject *list = PyList_New(0);
  for (uint32_t i = 0; list && r == ACL_SUCCESS && i < n; i++) {
    PyObject *h = PyLong_FromVoidPtr(v[i]);
    if (!h || PyList_Append(list, h) < 0)
      Py_CLEAR(list);
    Py_XDECREF(h);
  }
  PyMem_Free(v);
  if (!list)
    return NULL;
  return Py_BuildValue("(Ni)", list, (int)r);
}

/* ri_get_streams(model_ri) -> ([stream, ...], ret) */
static PyObject *m_get_streams(PyObject *m, PyObject *args) {
  void *ri;
  if (!PyArg_ParseTuple(args, "O&:ri_get_streams", mdl_ptr, &ri))
    return NULL;
  return listing(ri, streams_fn);
}

/* ri_get_tasks_by_stream(stream) -> ([task, ...], ret) */
static PyObject *m_get_tasks(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:ri_get_tasks_by_stream", mdl_ptr, &s))
    return NULL;
  return listing(s, tasks_fn);
}

/* ri_task_get_type(task) -> (type, ret) */
static PyObject *m_task_type(PyObject *m, PyObject *args) {
  void *t;
  if (!PyArg_ParseTuple(args, "O&:ri_task_get_type", mdl_ptr, &t))
    return NULL;
  aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
  aclError r = aclmdlRITaskGetType(t, &type);
  return Py_BuildValue("(ii)", (int)type, (int)r);
}

/* ri_task_get_seq_id(task) -> (id, ret) */
static PyObject *m_task_seq(PyObject *m, PyObject *args) {
  void *t;
  if (!PyArg_ParseTuple(args, "O&:ri_task_get_seq_id", mdl_ptr, &t))
    return NULL;
  uint32_t id = 0;
  aclError r = aclmdlRITaskGetSeqId(t, &id);
  return Py_BuildValue("(Ii)", (unsigned)id, (int)r);
}

/* ------------------------------------------------------- acl.rt labels */

/* create_label() -> (label, ret) */
static PyObject *l_create(PyObject *m, PyObject *unused) {
  aclrtLabel l = NULL;
  aclError r = aclrtCreateLabel(&l);
  return handle_ret(r == ACL_SUCCESS ? l : NULL, r);
}

static PyObject *l_set(PyObject *m, PyObject *args) {
  void *l, *s;
  if (!PyArg_ParseTuple(args, "O&O&:set_label", mdl_ptr, &l, mdl_ptr, &s))
    return NULL;
  RET(aclrtSetLabel(l, s));
}

static PyObject *l_destroy(PyObject *m, PyObject *args) {
  void *l;
  if (!PyArg_ParseTuple(args, "O&:destroy_label", mdl_ptr, &l))
    return NULL;
  RET(aclrtDestroyLabel(l));
}

/* create_label_list(labels) -> (label_list, ret): labels is a list of
 * label handles (its length is the C call's num). */
static PyObject *l_create_list(PyObject *m, PyObject *args) {
  PyObject *seq;
  if (!PyArg_ParseTuple(args, "O:create_label_list", &seq))
    return NULL;
  PyObject *fast = PySequence_Fast(seq, "labels must be a sequence of ints");
  if (!fast)
    return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  aclrtLabel *v = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) {
    Py_DECREF(fast);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (!mdl_ptr(PySequence_Fast_GET_ITEM(fast, i), &v[i])) {
      PyMem_Free(v);
      Py_DECREF(fast);
      return NULL;
    }
  aclrtLabelList list = NULL;
  aclError r = aclrtCreateLabelList(v, (size_t)n, &list);
  PyMem_Free(v);
  Py_DECREF(fast);
  return handle_ret(r == ACL_SUCCESS ? list : NULL, r);
}

static PyObject *l_destroy_list(PyObject *m, PyObject *args) {
  void *l;
  if (!PyArg_ParseTuple(args, "O&:destroy_label_list", mdl_ptr, &l))
    return NULL;
  RET(aclrtDestroyLabelList(l));
}

/* switch_label_by_index(ptr, max_value, label_list, stream) -> ret: ptr is
 * device memory holding the uint32 index, read when the model runs. */
static PyObject *l_switch(PyObject *m, PyObject *args) {
  void *p, *list, *s;
  unsigned int max;
  if (!PyArg_ParseTuple(args, "O&IO&O&:switch_label_by_index", mdl_ptr, &p,
                        &max, mdl_ptr, &list, mdl_ptr, &s))
    return NULL;
  RET(aclrtSwitchLabelByIndex(p, (uint32_t)max, list, s));
}

/* --------------------------------------------------------------- tables */

#define MV(name, fn) {#name, (PyCFunction)fn, METH_VARARGS, NULL}

static PyMethodDef mdl_methods[] = {
    MV(ri_capture_begin, m_capture_begin),
    MV(ri_capture_get_info, m_capture_get_info),
    MV(ri_capture_end, m_capture_end),
    MV(ri_capture_thread_exchange_mode, m_exchange),
    MV(ri_execute_async, m_execute_async),
    MV(ri_execute, m_execute),
    MV(ri_destroy, m_destroy),
    MV(ri_build_begin, m_build_begin),
    MV(ri_bind_stream, m_bind_stream),
    MV(ri_end_task, m_end_task),
    MV(ri_build_end, m_build_end),
    MV(ri_unbind_stream, m_unbind_stream),
    MV(ri_set_name, m_set_name),
    MV(ri_get_name, m_get_name),
    MV(ri_get_id, m_get_id),
    MV(ri_get_streams, m_get_streams),
    MV(ri_get_tasks_by_stream, m_get_tasks),
    MV(ri_task_get_type, m_task_type),
    MV(ri_task_get_seq_id, m_task_seq),
    {NULL, NULL, 0, NULL}};

static PyMethodDef label_methods[] = {
    {"create_label", (PyCFunction)l_create, METH_NOARGS, NULL},
    MV(set_label, l_set),
    MV(destroy_label, l_destroy),
    MV(create_label_list, l_create_list),
    MV(destroy_label_list, l_destroy_list),
    MV(switch_label_by_index, l_switch),
    {NULL, NULL, 0, NULL}};

static const struct {
  const char *name;
  long value;
} mdl_constants[] = {
#define C(x) {#x, (long)(x)}
    C(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
    C(ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
    C(ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
    C(ACL_MODEL_RI_CAPTURE_STATUS_NONE),
    C(ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE),
    C(ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED),
    C(ACL_MODEL_STREAM_FLAG_HEAD), C(ACL_MODEL_STREAM_FLAG_DEFAULT),
    C(ACL_ERROR_RT_STREAM_MODEL), C(ACL_ERROR_RT_CAPTURE_DEPENDENCY),
    C(ACL_ERROR_RT_STREAM_UNJOINED), C(ACL_ERROR_RT_MODEL_CAPTURED),
    C(ACL_ERROR_RT_STREAM_NOT_CAPTURED),
    C(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT),
    C(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT),
    C(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED),
    C(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD),
    C(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED),
    C(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC),
    C(ACL_MODEL_RI_TASK_DEFAULT), C(ACL_MODEL_RI_TASK_KERNEL),
    C(ACL_MODEL_RI_TASK_EVENT_RECORD), C(ACL_MODEL_RI_TASK_EVENT_WAIT),
    C(ACL_MODEL_RI_TASK_EVENT_RESET), C(ACL_MODEL_RI_TASK_VALUE_WRITE),
    C(ACL_MODEL_RI_TASK_VALUE_WAIT),
#undef C
    {NULL, 0}};

static struct PyModuleDef mdl_def = {PyModuleDef_HEAD_INIT,
                                     .m_name = "evrt._evrt._acl_mdl",
                                     .m_size = -1,
                                     .m_methods = mdl_methods};

int evrtpy_acl_mdl_init(PyObject *module, PyObject *acl, PyObject *rt) {
  PyObject *sub = PyModule_Create(&mdl_def);
  if (!sub)
    return -1;
  if (PyModule_AddObject(module, "_acl_mdl", sub) < 0) {
    Py_DECREF(sub);
    return -1;
  }
  if (PyModule_AddFunctions(rt, label_methods) < 0)
    return -1;
  for (int i = 0; mdl_constants[i].name; i++)
    if (PyModule_AddIntConstant(acl, mdl_constants[i].name,
                                mdl_constants[i].value) < 0)
      return -1;
  return 0;
}

#endif /* EVRTPY_HAVE_ACL */
