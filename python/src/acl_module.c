/*
 * acl_module.c - pyACL-style functions (evrt.acl, evrt.acl.rt, evrt.acl.util)
 * over evrt's ACL compatibility layer (include/acl/acl.h).
 *
 * pyACL conventions (reference/acl-streams-events.md section 4): handles
 * (streams, events, contexts, memory) are Python ints holding the C pointer,
 * 0 is NULL (the default stream); every function returns the aclError as
 * `ret` (int, 0 = success), after its outputs when it has any:
 * `event, ret = acl.rt.create_event()`, `ret = acl.rt.record_event(e, s)`.
 * Functions never raise for an ACL failure; they raise TypeError /
 * OverflowError for arguments of the wrong Python type, as pyACL does.
 *
 * Calls that may block (synchronize*, process_report) release the GIL.
 * Python callbacks (launch_callback, launch_host_func) take the GIL only
 * while they run; an exception they raise goes to sys.unraisablehook (ACL
 * has no channel to report it), and the references they hold are dropped
 * once they have run.
 */
#include "evrt_module.h"

#ifdef EVRTPY_HAVE_ACL

#include <acl/acl.h>

#include <string.h>

/* ------------------------------------------------------------- helpers */

/* A handle argument: an int (the pointer) or None (NULL). */
static int to_ptr(PyObject *o, void **out) {
  if (o == Py_None) {
    *out = NULL;
    return 1;
  }
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "handle must be an int, not %.100s",
                 Py_TYPE(o)->tp_name);
    return 0;
  }
  void *p = PyLong_AsVoidPtr(o);
  if (!p && PyErr_Occurred())
    return 0;
  *out = p;
  return 1;
}

static PyObject *ptr_ret(void *p, aclError ret) {
  PyObject *h = p ? PyLong_FromVoidPtr(p) : PyLong_FromLong(0);
  if (!h)
    return NULL;
  return Py_BuildValue("(Ni)", h, (int)ret);
}

#define RET(expr) return PyLong_FromLong((long)(expr))

/* ------------------------------------------------------------- Ctrl-C */

/* The blocking calls (synchronize_*) first wait for the work themselves,
 * interruptibly (wait.c: GIL released, signal handlers run every slice),
 * through the evrt handle behind the ACL one: aclrtStream and aclrtEvent
 * values are evrt handles (one runtime).  Then they make the ACL call, which
 * finds the work done and returns ACL's own code and error state; the
 * waiting left none (a failing handle ends it early and the ACL call reports
 * the failure).  Returns -1 with KeyboardInterrupt (or whatever a handler
 * raised) set, else 0 and *left_ms: the timeout left for the ACL call (-1
 * stays -1; a wait that used up its timeout leaves 1 ms, so that ACL
 * reports its own timeout). */
enum prewait_kind { PRE_STREAM, PRE_EVENT, PRE_DEVICE };

static int prewait(enum prewait_kind kind, void *h, int timeout_ms,
                   int *left_ms) {
  int64_t ns = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
  evrt_status_t st = EVRT_SUCCESS;
  int rc = 0;
  *left_ms = timeout_ms;
  if (kind == PRE_DEVICE) {
    int32_t dev = 0;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS)
      return 0;
    rc = evrtpy_device_wait((int)dev, ns, 0, &st);
  } else if (kind == PRE_STREAM) {
    if (!h && aclrtCtxGetCurrentDefaultStream(&h) != ACL_SUCCESS)
      return 0;
    rc = evrtpy_stream_wait((evrt_stream_t)h, ns, 1, &st);
  } else {
    rc = evrtpy_event_wait((evrt_event_t)h, ns, 1, &st);
  }
  if (rc < 0)
    return -1;
  if (st == EVRT_ERROR_TIMEOUT && timeout_ms > 0)
    *left_ms = 1;
  return 0;
}

/* ------------------------------------------------------------ acl.* */

static PyObject *a_init(PyObject *m, PyObject *args) {
  const char *path = NULL;
  if (!PyArg_ParseTuple(args, "|z:init", &path))
    return NULL;
  RET(aclInit(path));
}

static PyObject *a_finalize(PyObject *m, PyObject *unused) {
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclFinalize();
  Py_END_ALLOW_THREADS
  RET(r);
}

static char *take_carried_msgs(void);

static PyObject *a_get_recent_err_msg(PyObject *m, PyObject *unused) {
  const char *s = aclGetRecentErrMsg();
  char *older = take_carried_msgs(); /* see r_process_report */
  PyObject *res;
  if (!older) {
    if (!s)
      Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
  }
  if (s && *s)
    res = PyUnicode_FromFormat("%s\n%s", s, older);
  else
    res = PyUnicode_DecodeUTF8(older, (Py_ssize_t)strlen(older), "replace");
  PyMem_RawFree(older);
  return res;
}

/* ----------------------------------------------------- rt: devices */

static PyObject *r_set_device(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:set_device", &dev))
    return NULL;
  RET(aclrtSetDevice(dev));
}

static PyObject *r_reset_device(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device", &dev))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtResetDevice(dev);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_reset_device_force(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device_force", &dev))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtResetDeviceForce(dev);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_get_device(PyObject *m, PyObject *unused) {
  int32_t d = 0;
  aclError r = aclrtGetDevice(&d);
  return Py_BuildValue("(ii)", (int)d, (int)r);
}

static PyObject *r_get_device_count(PyObject *m, PyObject *unused) {
  uint32_t n = 0;
  aclError r = aclrtGetDeviceCount(&n);
  return Py_BuildValue("(Ii)", (unsigned)n, (int)r);
}

static PyObject *r_get_run_mode(PyObject *m, PyObject *unused) {
  aclrtRunMode mode = ACL_HOST;
  aclError r = aclrtGetRunMode(&mode);
  return Py_BuildValue("(ii)", (int)mode, (int)r);
}

static PyObject *r_synchronize_device(PyObject *m, PyObject *unused) {
  aclError r;
  int left;
  if (prewait(PRE_DEVICE, NULL, -1, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeDevice();
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_synchronize_device_with_timeout(PyObject *m,
                                                   PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:synchronize_device_with_timeout", &t))
    return NULL;
  aclError r;
  int left = t;
  if ((t > 0 || t == -1) && prewait(PRE_DEVICE, NULL, t, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeDeviceWithTimeout(left);
  Py_END_ALLOW_THREADS
  RET(r);
}

/* --------------------------------------------------- rt: contexts */

static PyObject *r_create_context(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:create_context", &dev))
    return NULL;
  aclrtContext c = NULL;
  aclError r = aclrtCreateContext(&c, dev);
  return ptr_ret(c, r);
}

static PyObject *r_destroy_context(PyObject *m, PyObject *args) {
  void *c;
  if (!PyArg_ParseTuple(args, "O&:destroy_context", to_ptr, &c))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtDestroyContext(c);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_set_context(PyObject *m, PyObject *args) {
  void *c;
  if (!PyArg_ParseTuple(args, "O&:set_context", to_ptr, &c))
    return NULL;
  RET(aclrtSetCurrentContext(c));
}

static PyObject *r_get_context(PyObject *m, PyObject *unused) {
  aclrtContext c = NULL;
  aclError r = aclrtGetCurrentContext(&c);
  return ptr_ret(c, r);
}

/* ---------------------------------------------------- rt: streams */

static PyObject *r_create_stream(PyObject *m, PyObject *unused) {
  aclrtStream s = NULL;
  aclError r = aclrtCreateStream(&s);
  return ptr_ret(s, r);
}

static PyObject *r_create_stream_with_config(PyObject *m, PyObject *args) {
  unsigned prio, flag;
  if (!PyArg_ParseTuple(args, "II:create_stream_with_config", &prio, &flag))
    return NULL;
  aclrtStream s = NULL;
  aclError r = aclrtCreateStreamWithConfig(&s, prio, flag);
  return ptr_ret(s, r);
}

#define STREAM_FN(pyname, cfn, release)                                        \
  static PyObject *r_##pyname(PyObject *m, PyObject *args) {                   \
    void *s;                                                                   \
    if (!PyArg_ParseTuple(args, "O&:" #pyname, to_ptr, &s))                    \
      return NULL;                                                             \
    aclError r;                                                                \
    if (release) {                                                             \
      Py_BEGIN_ALLOW_THREADS r = cfn(s);                                       \
      Py_END_ALLOW_THREADS                                                     \
    } else {                                                                   \
      r = cfn(s);                                                              \
    }                                                                          \
    RET(r);                                                                    \
  }

STREAM_FN(destroy_stream, aclrtDestroyStream, 0)
STREAM_FN(destroy_stream_force, aclrtDestroyStreamForce, 1)

static PyObject *r_synchronize_stream(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:synchronize_stream", to_ptr, &s))
    return NULL;
  int left;
  if (prewait(PRE_STREAM, s, -1, &left) < 0)
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeStream(s);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_synchronize_stream_with_timeout(PyObject *m,
                                                   PyObject *args) {
  void *s;
  int t;
  if (!PyArg_ParseTuple(args, "O&i:synchronize_stream_with_timeout", to_ptr,
                        &s, &t))
    return NULL;
  aclError r;
  int left = t;
  if ((t > 0 || t == -1) && prewait(PRE_STREAM, s, t, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeStreamWithTimeout(s, left);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_stream_query(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:stream_query", to_ptr, &s))
    return NULL;
  aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
  aclError r = aclrtStreamQuery(s, &st);
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *r_stream_wait_event(PyObject *m, PyObject *args) {
  void *s, *e;
  if (!PyArg_ParseTuple(args, "O&O&:stream_wait_event", to_ptr, &s, to_ptr,
                        &e))
    return NULL;
  RET(aclrtStreamWaitEvent(s, e));
}

static PyObject *r_stream_wait_event_with_timeout(PyObject *m,
                                                  PyObject *args) {
  void *s, *e;
  int t;
  if (!PyArg_ParseTuple(args, "O&O&i:stream_wait_event_with_timeout", to_ptr,
                        &s, to_ptr, &e, &t))
    return NULL;
  RET(aclrtStreamWaitEventWithTimeout(s, e, t));
}

static PyObject *r_stream_get_id(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:stream_get_id", to_ptr, &s))
    return NULL;
  int32_t id = 0;
  aclError r = aclrtStreamGetId(s, &id);
  return Py_BuildValue("(ii)", (int)id, (int)r);
}

static PyObject *r_set_stream_failure_mode(PyObject *m, PyObject *args) {
  void *s;
  unsigned long long mode;
  if (!PyArg_ParseTuple(args, "O&K:set_stream_failure_mode", to_ptr, &s,
                        &mode))
    return NULL;
  RET(aclrtSetStreamFailureMode(s, (uint64_t)mode));
}

static PyObject *r_get_stream_available_num(PyObject *m, PyObject *unused) {
  uint32_t n = 0;
  aclError r = aclrtGetStreamAvailableNum(&n);
  return Py_BuildValue("(Ii)", (unsigned)n, (int)r);
}

/* ----------------------------------------------------- rt: events */

static PyObject *r_create_event(PyObject *m, PyObject *unused) {
  aclrtEvent e = NULL;
  aclError r = aclrtCreateEvent(&e);
  return ptr_ret(e, r);
}

static PyObject *r_create_event_with_flag(PyObject *m, PyObject *args) {
  unsigned flag;
  if (!PyArg_ParseTuple(args, "I:create_event_with_flag", &flag))
    return NULL;
  aclrtEvent e = NULL;
  aclError r = aclrtCreateEventWithFlag(&e, flag);
  return ptr_ret(e, r);
}

static PyObject *r_create_event_ex_with_flag(PyObject *m, PyObject *args) {
  unsigned flag;
  if (!PyArg_ParseTuple(args, "I:create_event_ex_with_flag", &flag))
    return NULL;
  aclrtEvent e = NULL;
  aclError r = aclrtCreateEventExWithFlag(&e, flag);
  return ptr_ret(e, r);
}

static PyObject *r_destroy_event(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:destroy_event", to_ptr, &e))
    return NULL;
  RET(aclrtDestroyEvent(e));
}

static PyObject *r_record_event(PyObject *m, PyObject *args) {
  void *e, *s;
  if (!PyArg_ParseTuple(args, "O&O&:record_event", to_ptr, &e, to_ptr, &s))
    return NULL;
  RET(aclrtRecordEvent(e, s));
}

static PyObject *r_record_event_with_flag(PyObject *m, PyObject *args) {
  void *e, *s;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&O&I:record_event_with_flag", to_ptr, &e,
                        to_ptr, &s, &flag))
    return NULL;
  RET(aclrtRecordEventWithFlag(e, s, flag));
}

static PyObject *r_reset_event(PyObject *m, PyObject *args) {
  void *e, *s;
  if (!PyArg_ParseTuple(args, "O&O&:reset_event", to_ptr, &e, to_ptr, &s))
    return NULL;
  RET(aclrtResetEvent(e, s));
}

static PyObject *r_query_event(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:query_event", to_ptr, &e))
    return NULL;
  aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
  aclError r;
  /* pyACL still offers the deprecated call; so do we. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  /* An imported event may have to look at its exporter. */
  Py_BEGIN_ALLOW_THREADS
  r = aclrtQueryEvent(e, &st);
  Py_END_ALLOW_THREADS
#pragma GCC diagnostic pop
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *r_query_event_status(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:query_event_status", to_ptr, &e))
    return NULL;
  aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtQueryEventStatus(e, &st);
  Py_END_ALLOW_THREADS
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *r_query_event_wait_status(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:query_event_wait_status", to_ptr, &e))
    return NULL;
  aclrtEventWaitStatus st = ACL_EVENT_WAIT_STATUS_RESERVED;
  aclError r = aclrtQueryEventWaitStatus(e, &st);
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *r_synchronize_event(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:synchronize_event", to_ptr, &e))
    return NULL;
  aclError r;
  int left;
  if (prewait(PRE_EVENT, e, -1, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeEvent(e);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_synchronize_event_with_timeout(PyObject *m,
                                                  PyObject *args) {
  void *e;
  int t;
  if (!PyArg_ParseTuple(args, "O&i:synchronize_event_with_timeout", to_ptr,
                        &e, &t))
    return NULL;
  aclError r;
  int left = t;
  if ((t > 0 || t == -1) && prewait(PRE_EVENT, e, t, &left) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeEventWithTimeout(e, left);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_event_elapsed_time(PyObject *m, PyObject *args) {
  void *a, *b;
  if (!PyArg_ParseTuple(args, "O&O&:event_elapsed_time", to_ptr, &a, to_ptr,
                        &b))
    return NULL;
  float ms = 0.0f;
  aclError r = aclrtEventElapsedTime(&ms, a, b);
  return Py_BuildValue("(di)", (double)ms, (int)r);
}

static PyObject *r_event_get_timestamp(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:event_get_timestamp", to_ptr, &e))
    return NULL;
  uint64_t ts = 0;
  aclError r = aclrtEventGetTimestamp(e, &ts);
  return Py_BuildValue("(Ki)", (unsigned long long)ts, (int)r);
}

static PyObject *r_get_event_id(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:get_event_id", to_ptr, &e))
    return NULL;
  uint32_t id = 0;
  aclError r = aclrtGetEventId(e, &id);
  return Py_BuildValue("(Ii)", (unsigned)id, (int)r);
}

static PyObject *r_get_event_avail_num(PyObject *m, PyObject *unused) {
  uint32_t n = 0;
  aclError r = aclrtGetEventAvailNum(&n);
  return Py_BuildValue("(Ii)", (unsigned)n, (int)r);
}

static PyObject *r_ipc_get_event_handle(PyObject *m, PyObject *args) {
  void *e;
  if (!PyArg_ParseTuple(args, "O&:ipc_get_event_handle", to_ptr, &e))
    return NULL;
  aclrtIpcEventHandle h;
  memset(&h, 0, sizeof h);
  aclError r = aclrtIpcGetEventHandle(e, &h);
  if (r)
    return Py_BuildValue("(yi)", "", (int)r);
  return Py_BuildValue("(y#i)", h.reserved, (Py_ssize_t)sizeof h.reserved,
                       (int)r);
}

static PyObject *r_ipc_open_event_handle(PyObject *m, PyObject *args) {
  Py_buffer buf;
  if (!PyArg_ParseTuple(args, "y*:ipc_open_event_handle", &buf))
    return NULL;
  if (buf.len != (Py_ssize_t)ACL_IPC_EVENT_HANDLE_SIZE) {
    PyBuffer_Release(&buf);
    return ptr_ret(NULL, ACL_ERROR_INVALID_PARAM);
  }
  aclrtIpcEventHandle h;
  memcpy(h.reserved, buf.buf, sizeof h.reserved);
  PyBuffer_Release(&buf);
  aclrtEvent e = NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtIpcOpenEventHandle(h, &e);
  Py_END_ALLOW_THREADS
  return ptr_ret(e, r);
}

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

static char *take_carried_msgs(void) {
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

/* ----------------------------------------------------- rt: memory */

static PyObject *r_malloc(PyObject *m, PyObject *args) {
  Py_ssize_t size;
  int policy = ACL_MEM_MALLOC_HUGE_FIRST;
  if (!PyArg_ParseTuple(args, "n|i:malloc", &size, &policy))
    return NULL;
  if (size < 0)
    return ptr_ret(NULL, ACL_ERROR_INVALID_PARAM);
  void *p = NULL;
  aclError r = aclrtMalloc(&p, (size_t)size, (aclrtMemMallocPolicy)policy);
  return ptr_ret(p, r);
}

static PyObject *r_malloc_host(PyObject *m, PyObject *args) {
  Py_ssize_t size;
  if (!PyArg_ParseTuple(args, "n:malloc_host", &size))
    return NULL;
  if (size < 0)
    return ptr_ret(NULL, ACL_ERROR_INVALID_PARAM);
  void *p = NULL;
  aclError r = aclrtMallocHost(&p, (size_t)size);
  return ptr_ret(p, r);
}

static PyObject *r_free(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:free", to_ptr, &p))
    return NULL;
  RET(aclrtFree(p));
}

static PyObject *r_free_host(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:free_host", to_ptr, &p))
    return NULL;
  RET(aclrtFreeHost(p));
}

static PyObject *r_memcpy(PyObject *m, PyObject *args) {
  void *dst, *src;
  Py_ssize_t dmax, count;
  int kind;
  if (!PyArg_ParseTuple(args, "O&nO&ni:memcpy", to_ptr, &dst, &dmax, to_ptr,
                        &src, &count, &kind))
    return NULL;
  if (dmax < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy(dst, (size_t)dmax, src, (size_t)count,
                  (aclrtMemcpyKind)kind);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_memset(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t max, count;
  int value;
  if (!PyArg_ParseTuple(args, "O&nin:memset", to_ptr, &p, &max, &value,
                        &count))
    return NULL;
  if (max < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemset(p, (size_t)max, value, (size_t)count));
}

static PyObject *r_memcpy_async(PyObject *m, PyObject *args) {
  void *dst, *src, *s;
  Py_ssize_t dmax, count;
  int kind;
  if (!PyArg_ParseTuple(args, "O&nO&niO&:memcpy_async", to_ptr, &dst, &dmax,
                        to_ptr, &src, &count, &kind, to_ptr, &s))
    return NULL;
  if (dmax < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemcpyAsync(dst, (size_t)dmax, src, (size_t)count,
                       (aclrtMemcpyKind)kind, s));
}

static PyObject *r_memset_async(PyObject *m, PyObject *args) {
  void *p, *s;
  Py_ssize_t max, count;
  int value;
  if (!PyArg_ParseTuple(args, "O&ninO&:memset_async", to_ptr, &p, &max,
                        &value, &count, to_ptr, &s))
    return NULL;
  if (max < 0 || count < 0)
    RET(ACL_ERROR_INVALID_PARAM);
  RET(aclrtMemsetAsync(p, (size_t)max, value, (size_t)count, s));
}

/* ------------------------------------------------------- acl.util */

/* ptr_to_bytes(ptr, size) -> bytes: a copy of size bytes at ptr. */
static PyObject *u_ptr_to_bytes(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "O&n:ptr_to_bytes", to_ptr, &p, &n))
    return NULL;
  if (n < 0 || (!p && n > 0))
    return PyErr_Format(PyExc_ValueError, "invalid pointer or size");
  return PyBytes_FromStringAndSize(p ? (const char *)p : "", n);
}

/* bytes_to_ptr(b) -> int: the address of the bytes object's buffer (valid
 * while b is alive; the memory must not be written). */
static PyObject *u_bytes_to_ptr(PyObject *m, PyObject *arg) {
  if (!PyBytes_Check(arg))
    return PyErr_Format(PyExc_TypeError, "bytes_to_ptr expects bytes, not "
                        "%.100s", Py_TYPE(arg)->tp_name);
  return PyLong_FromVoidPtr(PyBytes_AS_STRING(arg));
}

/* --------------------------------------------------------- tables */

#define M0(name, fn) {#name, (PyCFunction)fn, METH_NOARGS, NULL}
#define MV(name, fn) {#name, (PyCFunction)fn, METH_VARARGS, NULL}

static PyMethodDef acl_methods[] = {
    MV(init, a_init),
    M0(finalize, a_finalize),
    M0(get_recent_err_msg, a_get_recent_err_msg),
    {NULL, NULL, 0, NULL}};

static PyMethodDef rt_methods[] = {
    MV(set_device, r_set_device),
    MV(reset_device, r_reset_device),
    MV(reset_device_force, r_reset_device_force),
    M0(get_device, r_get_device),
    M0(get_device_count, r_get_device_count),
    M0(get_run_mode, r_get_run_mode),
    M0(synchronize_device, r_synchronize_device),
    MV(synchronize_device_with_timeout, r_synchronize_device_with_timeout),
    MV(create_context, r_create_context),
    MV(destroy_context, r_destroy_context),
    MV(set_context, r_set_context),
    M0(get_context, r_get_context),
    M0(create_stream, r_create_stream),
    MV(create_stream_with_config, r_create_stream_with_config),
    MV(destroy_stream, r_destroy_stream),
    MV(destroy_stream_force, r_destroy_stream_force),
    MV(synchronize_stream, r_synchronize_stream),
    MV(synchronize_stream_with_timeout, r_synchronize_stream_with_timeout),
    MV(stream_query, r_stream_query),
    MV(stream_wait_event, r_stream_wait_event),
    MV(stream_wait_event_with_timeout, r_stream_wait_event_with_timeout),
    MV(stream_get_id, r_stream_get_id),
    MV(set_stream_failure_mode, r_set_stream_failure_mode),
    M0(get_stream_available_num, r_get_stream_available_num),
    M0(create_event, r_create_event),
    MV(create_event_with_flag, r_create_event_with_flag),
    MV(create_event_ex_with_flag, r_create_event_ex_with_flag),
    MV(destroy_event, r_destroy_event),
    MV(record_event, r_record_event),
    MV(record_event_with_flag, r_record_event_with_flag),
    MV(reset_event, r_reset_event),
    MV(query_event, r_query_event),
    MV(query_event_status, r_query_event_status),
    MV(query_event_wait_status, r_query_event_wait_status),
    MV(synchronize_event, r_synchronize_event),
    MV(synchronize_event_with_timeout, r_synchronize_event_with_timeout),
    MV(event_elapsed_time, r_event_elapsed_time),
    MV(event_get_timestamp, r_event_get_timestamp),
    MV(get_event_id, r_get_event_id),
    M0(get_event_avail_num, r_get_event_avail_num),
    MV(ipc_get_event_handle, r_ipc_get_event_handle),
    MV(ipc_open_event_handle, r_ipc_open_event_handle),
    MV(launch_callback, r_launch_callback),
    MV(launch_host_func, r_launch_host_func),
    MV(subscribe_report, r_subscribe_report),
    MV(unsubscribe_report, r_unsubscribe_report),
    MV(process_report, r_process_report),
    MV(malloc, r_malloc),
    MV(malloc_host, r_malloc_host),
    MV(free, r_free),
    MV(free_host, r_free_host),
    MV(memcpy, r_memcpy),
    MV(memset, r_memset),
    MV(memcpy_async, r_memcpy_async),
    MV(memset_async, r_memset_async),
    {NULL, NULL, 0, NULL}};

static PyMethodDef util_methods[] = {
    MV(ptr_to_bytes, u_ptr_to_bytes),
    {"bytes_to_ptr", (PyCFunction)u_bytes_to_ptr, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

/* Constants by their ACL names, with the values of the C headers. */
struct named { const char *name; long value; };
#define C(x) {#x, (long)(x)}
static const struct named acl_constants[] = {
    C(ACL_SUCCESS), C(ACL_ERROR_NONE), C(ACL_RT_SUCCESS),
    C(ACL_ERROR_INVALID_PARAM), C(ACL_ERROR_UNINITIALIZE),
    C(ACL_ERROR_REPEAT_INITIALIZE), C(ACL_ERROR_REPEAT_SUBSCRIBE),
    C(ACL_ERROR_STREAM_NOT_SUBSCRIBE), C(ACL_ERROR_THREAD_NOT_SUBSCRIBE),
    C(ACL_ERROR_WAIT_CALLBACK_TIMEOUT), C(ACL_ERROR_REPEAT_FINALIZE),
    C(ACL_ERROR_BAD_ALLOC), C(ACL_ERROR_API_NOT_SUPPORT),
    C(ACL_ERROR_INVALID_DEVICE), C(ACL_ERROR_INVALID_RESOURCE_HANDLE),
    C(ACL_ERROR_FEATURE_UNSUPPORTED), C(ACL_ERROR_INTERNAL_ERROR),
    C(ACL_ERROR_FAILURE), C(ACL_ERROR_RT_FAILURE),
    C(ACL_ERROR_RT_PARAM_INVALID), C(ACL_ERROR_RT_INVALID_DEVICEID),
    C(ACL_ERROR_RT_CONTEXT_NULL), C(ACL_ERROR_RT_STREAM_CONTEXT),
    C(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID),
    C(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL), C(ACL_ERROR_RT_STREAM_SUBSCRIBE),
    C(ACL_ERROR_RT_THREAD_SUBSCRIBE), C(ACL_ERROR_RT_STREAM_NO_CB_REG),
    C(ACL_ERROR_RT_INVALID_HANDLE), C(ACL_ERROR_RT_WAIT_TIMEOUT),
    C(ACL_ERROR_RT_TASK_TIMEOUT), C(ACL_ERROR_RT_STREAM_ABORT),
    C(ACL_ERROR_RT_STREAM_CAPTURED), C(ACL_ERROR_RT_EVENT_CAPTURED),
    C(ACL_ERROR_RT_FEATURE_NOT_SUPPORT), C(ACL_ERROR_RT_MEMORY_ALLOCATION),
    C(ACL_ERROR_RT_NO_DEVICE), C(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
    C(ACL_ERROR_RT_NO_EVENT_RESOURCE), C(ACL_ERROR_RT_NO_STREAM_RESOURCE),
    C(ACL_ERROR_RT_OVER_LIMIT), C(ACL_ERROR_RT_INTERNAL_ERROR),
    C(ACL_ERROR_RT_STREAM_TASK_FULL), C(ACL_ERROR_RT_STREAM_TASK_EMPTY),
    C(ACL_ERROR_RT_STREAM_NOT_COMPLETE), C(ACL_ERROR_RT_END_OF_SEQUENCE),
    C(ACL_ERROR_RT_EVENT_NOT_COMPLETE), C(ACL_ERROR_RT_REPORT_TIMEOUT),
    C(ACL_ERROR_RT_IPC_ERROR), C(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT),
    C(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
    C(ACL_EVENT_SYNC), C(ACL_EVENT_CAPTURE_STREAM_PROGRESS),
    C(ACL_EVENT_TIME_LINE), C(ACL_EVENT_DEVICE_USE_ONLY),
    C(ACL_EVENT_EXTERNAL), C(ACL_EVENT_IPC),
    C(ACL_EVENT_RECORD_DEFAULT), C(ACL_EVENT_RECORD_EXTERNAL),
    C(ACL_EVENT_WAIT_DEFAULT), C(ACL_EVENT_WAIT_EXTERNAL),
    C(ACL_STREAM_FAST_LAUNCH), C(ACL_STREAM_FAST_SYNC),
    C(ACL_STREAM_PERSISTENT), C(ACL_STREAM_HUGE), C(ACL_STREAM_CPU_SCHEDULE),
    C(ACL_STREAM_DEVICE_USE_ONLY), C(ACL_CONTINUE_ON_FAILURE),
    C(ACL_STOP_ON_FAILURE), C(ACL_IPC_EVENT_HANDLE_SIZE),
    C(ACL_DEVICE), C(ACL_HOST),
    C(ACL_EVENT_STATUS_COMPLETE), C(ACL_EVENT_STATUS_NOT_READY),
    C(ACL_EVENT_STATUS_RESERVED),
    C(ACL_EVENT_RECORDED_STATUS_NOT_READY),
    C(ACL_EVENT_RECORDED_STATUS_COMPLETE),
    C(ACL_EVENT_WAIT_STATUS_COMPLETE), C(ACL_EVENT_WAIT_STATUS_NOT_READY),
    C(ACL_EVENT_WAIT_STATUS_RESERVED),
    C(ACL_STREAM_STATUS_COMPLETE), C(ACL_STREAM_STATUS_NOT_READY),
    C(ACL_STREAM_STATUS_RESERVED),
    C(ACL_CALLBACK_NO_BLOCK), C(ACL_CALLBACK_BLOCK),
    C(ACL_MEMCPY_HOST_TO_HOST), C(ACL_MEMCPY_HOST_TO_DEVICE),
    C(ACL_MEMCPY_DEVICE_TO_HOST), C(ACL_MEMCPY_DEVICE_TO_DEVICE),
    C(ACL_MEMCPY_DEFAULT),
    C(ACL_MEM_MALLOC_HUGE_FIRST), C(ACL_MEM_MALLOC_HUGE_ONLY),
    C(ACL_MEM_MALLOC_NORMAL_ONLY),
    C(ACL_MAJOR_VERSION), C(ACL_MINOR_VERSION), C(ACL_PATCH_VERSION),
    {NULL, 0}};
#undef C

static struct PyModuleDef acl_def = {PyModuleDef_HEAD_INIT,
                                     .m_name = "evrt._evrt._acl",
                                     .m_size = -1,
                                     .m_methods = acl_methods};
static struct PyModuleDef rt_def = {PyModuleDef_HEAD_INIT,
                                    .m_name = "evrt._evrt._acl_rt",
                                    .m_size = -1,
                                    .m_methods = rt_methods};
static struct PyModuleDef util_def = {PyModuleDef_HEAD_INIT,
                                      .m_name = "evrt._evrt._acl_util",
                                      .m_size = -1,
                                      .m_methods = util_methods};

static int add_sub(PyObject *module, const char *attr, PyModuleDef *def,
                   PyObject **out) {
  PyObject *sub = PyModule_Create(def);
  if (!sub)
    return -1;
  if (PyModule_AddObject(module, attr, sub) < 0) {
    Py_DECREF(sub);
    return -1;
  }
  *out = sub; /* borrowed: owned by module */
  return 0;
}

int evrtpy_acl_init(PyObject *module) {
  PyObject *acl, *rt, *util;
  if (add_sub(module, "_acl", &acl_def, &acl) < 0 ||
      add_sub(module, "_acl_rt", &rt_def, &rt) < 0 ||
      add_sub(module, "_acl_util", &util_def, &util) < 0)
    return -1;
  for (const struct named *c = acl_constants; c->name; c++)
    if (PyModule_AddIntConstant(acl, c->name, c->value) < 0)
      return -1;
  return PyModule_AddIntConstant(module, "HAVE_ACL", 1);
}

#else /* !EVRTPY_HAVE_ACL */

/* Built without the ACL layer: evrt.acl reports that on import. */
int evrtpy_acl_init(PyObject *module) {
  return PyModule_AddIntConstant(module, "HAVE_ACL", 0);
}

#endif
