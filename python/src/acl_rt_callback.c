/*
 * acl_rt_callback.c - evrt.acl.rt: callbacks, host functions, reports.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* -------------------------------------------------- rt: callbacks */

/* process_report nesting on this thread, and the KeyboardInterrupt (or
 * SystemExit) a callback it ran raised, to be raised by it. */
static _Thread_local int report_depth;
static _Thread_local PyObject *report_exc;

static PyObject *fetch_exception(void) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  if (v && tb)
    PyException_SetTraceback(v, tb);
  Py_XDECREF(t);
  Py_XDECREF(tb);
  return v;
}

struct py_cb {
  PyObject *fn;
  PyObject *arg;
  int counted; /* in the exit hook's pending count (runs on a worker) */
};

static void py_cb_run(void *p) {
  struct py_cb *c = p;
  int counted = c->counted; /* c is freed before leave() */
  if (!evrtpy_trampoline_enter(counted))
    return; /* interpreter exiting: leak on purpose, no GIL to be had */
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *r = PyObject_CallOneArg(c->fn, c->arg);
  if (r)
    Py_DECREF(r);
  else if (report_depth > 0 && !report_exc &&
           (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt) ||
            PyErr_ExceptionMatches(PyExc_SystemExit)))
    /* Ctrl-C (or sys.exit) inside a callback run by process_report on this
     * thread: raised by process_report, not lost to the unraisable hook. */
    report_exc = fetch_exception();
  else
    PyErr_WriteUnraisable(c->fn);
  Py_DECREF(c->fn);
  Py_DECREF(c->arg);
  PyMem_RawFree(c);
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(counted);
}

static struct py_cb *py_cb_new(PyObject *fn, PyObject *arg, int counted) {
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "%.100s is not callable",
                 Py_TYPE(fn)->tp_name);
    return NULL;
  }
  struct py_cb *c = PyMem_RawMalloc(sizeof *c);
  if (!c) {
    PyErr_NoMemory();
    return NULL;
  }
  Py_INCREF(fn);
  Py_INCREF(arg);
  c->fn = fn;
  c->arg = arg;
  c->counted = counted;
  return c;
}

static void py_cb_drop(struct py_cb *c) {
  Py_DECREF(c->fn);
  Py_DECREF(c->arg);
  PyMem_RawFree(c);
}

/* launch_callback(fn, user_data, block_type, stream) -> ret: fn(user_data)
 * runs on the thread subscribed to stream, inside its process_report(). */
static PyObject *r_launch_callback(PyObject *m, PyObject *args) {
  PyObject *fn, *ud;
  int block;
  void *s;
  if (!PyArg_ParseTuple(args, "OOiO&:launch_callback", &fn, &ud, &block,
                        to_ptr, &s))
    return NULL;
  /* Not counted for the exit hook: it runs only when some thread calls
   * process_report, which may never happen. */
  struct py_cb *c = py_cb_new(fn, ud, 0);
  if (!c)
    return NULL;
  aclError r = aclrtLaunchCallback(py_cb_run, c, (aclrtCallbackBlockType)block,
                                   s);
  if (r)
    py_cb_drop(c);
  RET(r);
}

/* launch_host_func(stream, fn, args) -> ret: fn(args) on a worker thread. */
static PyObject *r_launch_host_func(PyObject *m, PyObject *args) {
  PyObject *fn, *a;
  void *s;
  if (!PyArg_ParseTuple(args, "O&OO:launch_host_func", to_ptr, &s, &fn, &a))
    return NULL;
  /* Into a capture: a task of the model, kept for every run (acl_mdl.c). */
  int kr = 0, k = PyCallable_Check(fn) ? evrtpy_acl_launch_kept(s, fn, a, &kr)
                                       : 0;
  if (k)
    return k < 0 ? NULL : PyLong_FromLong((long)kr);
  struct py_cb *c = py_cb_new(fn, a, 1);
  if (!c)
    return NULL;
  evrtpy_pending_add(1);
  aclError r = aclrtLaunchHostFunc(s, py_cb_run, c);
  if (r) {
    evrtpy_pending_add(-1);
    py_cb_drop(c);
  }
  RET(r);
}

static PyObject *r_subscribe_report(PyObject *m, PyObject *args) {
  unsigned long long tid;
  void *s;
  if (!PyArg_ParseTuple(args, "KO&:subscribe_report", &tid, to_ptr, &s))
    return NULL;
  RET(aclrtSubscribeReport((uint64_t)tid, s));
}

static PyObject *r_unsubscribe_report(PyObject *m, PyObject *args) {
  unsigned long long tid;
  void *s;
  if (!PyArg_ParseTuple(args, "KO&:unsubscribe_report", &tid, to_ptr, &s))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtUnSubscribeReport((uint64_t)tid, s);
  Py_END_ALLOW_THREADS
  RET(r);
}

/* Error messages of this thread's failed ACL calls that process_report took
 * out of ACL's list before waiting in slices (see r_process_report);
 * acl.get_recent_err_msg() gives them back after the newer ones.  PyMem_Raw
 * memory, NULL if none. */
static _Thread_local char *carried_msgs;

/* Append msg (older than what is carried) to the carried messages. */
static void carry(const char *msg) {
  if (!msg || !*msg)
    return;
  size_t a = carried_msgs ? strlen(carried_msgs) : 0, b = strlen(msg);
  char *n = PyMem_RawRealloc(carried_msgs, a + b + 2);
  if (!n)
    return; /* out of memory: the message is dropped */
  if (a)
    n[a++] = '\n';
  memcpy(n + a, msg, b + 1);
  carried_msgs = n;
}

char *evrtpy_acl_take_carried_msgs(void) {
  char *s = carried_msgs;
  carried_msgs = NULL;
  return s;
}

/* process_report(timeout) -> ret.  A wait longer than one slice (-1:
 * forever) is made of aclrtProcessReport(slice) calls, with the signal
 * handlers run between them so that Ctrl-C ends it, and a KeyboardInterrupt
 * raised inside a callback it ran is raised here (not lost to the
 * unraisable hook).  A slice that ends without a report fails with ACL's
 * report timeout: its message and code are taken back out at once, so the
 * call leaves the error state as one aclrtProcessReport(timeout) would.
 * For that, the messages of earlier failures are taken out of ACL's list
 * first and carried over to the next get_recent_err_msg(). */
static PyObject *r_process_report(PyObject *m, PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:process_report", &t))
    return NULL;
  const int slice_ms = (int)(EVRTPY_WAIT_SLICE_NS / 1000000);
  int sliced = t == -1 || t > slice_ms;
  int left = t;
  aclError r;
  if (sliced)
    carry(aclGetRecentErrMsg());
  report_depth++;
  for (;;) {
    int slice = sliced && (left < 0 || left > slice_ms) ? slice_ms : left;
    Py_BEGIN_ALLOW_THREADS
    r = aclrtProcessReport(slice);
    Py_END_ALLOW_THREADS
    if (r != ACL_ERROR_RT_REPORT_TIMEOUT || slice == left || report_exc)
      break;
    /* A slice, not the call, timed out: leave no trace of it. */
    (void)aclGetRecentErrMsg();
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    if (left > 0)
      left -= slice;
    if (PyErr_CheckSignals() < 0)
      break;
  }
  report_depth--;
  if (report_exc) {
    PyObject *e = report_exc;
    report_exc = NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return NULL;
  }
  if (PyErr_Occurred())
    return NULL; /* a signal handler raised */
  RET(r);
}

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_callback_methods[] = {
    MV(launch_callback, r_launch_callback),
    MV(launch_host_func, r_launch_host_func),
    MV(subscribe_report, r_subscribe_report),
    MV(unsubscribe_report, r_unsubscribe_report),
    MV(process_report, r_process_report),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
