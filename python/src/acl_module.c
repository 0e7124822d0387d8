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

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

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

/* The two for acl_mdl.c (evrt_module.h). */
int evrtpy_acl_to_ptr(PyObject *o, void **out) { return to_ptr(o, out); }
PyObject *evrtpy_acl_ptr_ret(void *p, int ret) { return ptr_ret(p, ret); }

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
/* Copy n bytes at p, or fail (0) if any of them is not readable memory of
 * this process: the kernel copies (process_vm_readv on ourselves) and
 * answers EFAULT for a bogus pointer instead of a crash (issue 13 item 2).
 * Where that call is refused, the pages must at least be mapped. */
static int safe_copy(char *dst, const void *src, size_t n) {
  if (n == 0)
    return 1;
  if ((uintptr_t)src + n < (uintptr_t)src)
    return 0;
  struct iovec l = {dst, n}, r = {(void *)src, n};
  ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
  if (got == (ssize_t)n)
    return 1;
  if (got >= 0 || (errno != ENOSYS && errno != EPERM))
    return 0;
  long ps = sysconf(_SC_PAGESIZE);
  uintptr_t a = (uintptr_t)src & ~(uintptr_t)(ps - 1);
  size_t len = (uintptr_t)src + n - a;
  unsigned char vec[64];
  for (size_t off = 0; off < len; off += 64 * (size_t)ps) {
    size_t chunk = len - off < 64 * (size_t)ps ? len - off : 64 * (size_t)ps;
    if (mincore((void *)(a + off), chunk, vec) != 0)
      return 0; /* not mapped */
  }
  memcpy(dst, src, n);
  return 1;
}

static PyObject *u_ptr_to_bytes(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "O&n:ptr_to_bytes", to_ptr, &p, &n))
    return NULL;
  if (n < 0 || (!p && n > 0))
    return PyErr_Format(PyExc_ValueError, "invalid pointer or size");
  PyObject *b = PyBytes_FromStringAndSize(NULL, n);
  if (!b)
    return NULL;
  if (!safe_copy(PyBytes_AS_STRING(b), p, (size_t)n)) {
    Py_DECREF(b);
    return PyErr_Format(PyExc_ValueError,
                        "%zd bytes at %p are not readable memory of this "
                        "process",
                        n, p);
  }
  return b;
}

/* bytes_to_ptr(b) -> int: the address of the bytes object's buffer (valid
 * while b is alive; the memory must not be written). */
static PyObject *u_bytes_to_ptr(PyObject *m, PyObject *arg) {
  if (!PyBytes_Check(arg))
    return PyErr_Format(PyExc_TypeError, "bytes_to_ptr expects bytes, not "
                        "%.100s", Py_TYPE(arg)->tp_name);
  return PyLong_FromVoidPtr(PyBytes_AS_STRING(arg));
}

/* ------------------------------------ rt: failures, values, notifies,
 * interprocess memory, subscribed host functions, operator timeouts
 * (pyACL's conventions: outputs first, then ret; handles and pointers are
 * ints; keys are str) */

static int to_pids(PyObject *o, int32_t **out, size_t *n) {
  PyObject *seq = PySequence_Fast(o, "pids must be a sequence of ints");
  if (!seq)
    return 0;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
  int32_t *v = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *v);
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < k; i++) {
    long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    if (x == -1 && PyErr_Occurred()) {
      PyMem_Free(v);
      Py_DECREF(seq);
      return 0;
    }
    v[i] = (int32_t)x;
  }
  Py_DECREF(seq);
  *out = v;
  *n = (size_t)k;
  return 1;
}

static PyObject *exc_fn; /* set_exception_info_callback's callable */
static void exc_trampoline(aclrtExceptionInfo *info) {
  if (!evrtpy_trampoline_enter(0))
    return;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *fn = exc_fn;
  Py_XINCREF(fn);
  if (fn) {
    PyObject *r = PyObject_CallFunction(fn, "K",
                                        (unsigned long long)(uintptr_t)info);
    if (r)
      Py_DECREF(r);
    else
      PyErr_WriteUnraisable(fn);
    Py_DECREF(fn);
  }
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* set_exception_info_callback(fn or None) -> ret: fn(info) runs when a task
 * fails; info (an int) is valid only during the call. */
static PyObject *r_set_exception_info_callback(PyObject *m, PyObject *args) {
  PyObject *fn = Py_None;
  if (!PyArg_ParseTuple(args, "|O:set_exception_info_callback", &fn))
    return NULL;
  if (fn != Py_None && !PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError, "%.100s is not callable",
                        Py_TYPE(fn)->tp_name);
  PyObject *old = exc_fn;
  exc_fn = fn == Py_None ? NULL : (Py_INCREF(fn), fn);
  aclError r = aclrtSetExceptionInfoCallback(exc_fn ? exc_trampoline : NULL);
  Py_XDECREF(old);
  RET(r);
}
#pragma GCC diagnostic pop

#define INFO_GETTER(pyname, cfn)                                               \
  static PyObject *r_##pyname(PyObject *m, PyObject *args) {                   \
    void *info;                                                                \
    if (!PyArg_ParseTuple(args, "O&:" #pyname, to_ptr, &info))                 \
      return NULL;                                                             \
    return PyLong_FromUnsignedLong(cfn((const aclrtExceptionInfo *)info));     \
  }
INFO_GETTER(get_task_id_from_exception_info, aclrtGetTaskIdFromExceptionInfo)
INFO_GETTER(get_stream_id_from_exception_info, aclrtGetStreamIdFromExceptionInfo)
INFO_GETTER(get_thread_id_from_exception_info, aclrtGetThreadIdFromExceptionInfo)
INFO_GETTER(get_device_id_from_exception_info, aclrtGetDeviceIdFromExceptionInfo)
INFO_GETTER(get_error_code_from_exception_info,
            aclrtGetErrorCodeFromExceptionInfo)
#undef INFO_GETTER

static PyObject *r_get_args_from_exception_info(PyObject *m, PyObject *args) {
  void *info, *p = NULL;
  uint32_t len = 0;
  if (!PyArg_ParseTuple(args, "O&:get_args_from_exception_info", to_ptr, &info))
    return NULL;
  aclError r = aclrtGetArgsFromExceptionInfo(info, &p, &len);
  return Py_BuildValue("(NIi)", PyLong_FromVoidPtr(p), (unsigned)len, (int)r);
}

static PyObject *r_get_func_handle_from_exception_info(PyObject *m,
                                                       PyObject *args) {
  void *info;
  aclrtFuncHandle f = NULL;
  if (!PyArg_ParseTuple(args, "O&:get_func_handle_from_exception_info", to_ptr,
                        &info))
    return NULL;
  aclError r = aclrtGetFuncHandleFromExceptionInfo(info, &f);
  return ptr_ret(f, r);
}

static PyObject *r_get_thread_last_task_id(PyObject *m, PyObject *unused) {
  uint32_t id = 0;
  aclError r = aclrtGetThreadLastTaskId(&id);
  return Py_BuildValue("(Ii)", (unsigned)id, (int)r);
}

/* get_error_verbose(device) -> (dict, ret) */
static PyObject *r_get_error_verbose(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:get_error_verbose", &dev))
    return NULL;
  aclrtErrorInfo e;
  memset(&e, 0, sizeof e);
  aclError r = aclrtGetErrorVerbose(dev, &e);
  return Py_BuildValue("({s:i,s:i,s:i,s:i}i)", "tryRepair", (int)e.tryRepair,
                       "hasDetail", (int)e.hasDetail, "errorType",
                       (int)e.errorType, "aicoreErrType",
                       e.errorType == ACL_RT_ERROR_AICORE
                           ? (int)e.detail.aicoreErrType
                           : 0,
                       (int)r);
}

static PyObject *r_stream_abort(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:stream_abort", to_ptr, &s))
    return NULL;
  RET(aclrtStreamAbort(s));
}

static PyObject *r_stream_stop(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:stream_stop", to_ptr, &s))
    return NULL;
  RET(aclrtStreamStop(s));
}

/* (fn, args) tuples of reg_stream_state_callback, kept for good: a call in
 * progress may still use one that was replaced. */
static void state_trampoline(aclrtStream s, aclrtStreamState st, void *arg) {
  if (!evrtpy_trampoline_enter(0))
    return;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *t = arg;
  PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(t, 0), "KiO",
                                      (unsigned long long)(uintptr_t)s,
                                      (int)st, PyTuple_GET_ITEM(t, 1));
  if (r)
    Py_DECREF(r);
  else
    PyErr_WriteUnraisable(PyTuple_GET_ITEM(t, 0));
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
}

/* reg_stream_state_callback(name, fn or None, args) -> ret: fn(stream,
 * state, args) after a stream is created and before it is destroyed. */
static PyObject *r_reg_stream_state_callback(PyObject *m, PyObject *args) {
  const char *name;
  PyObject *fn, *a = Py_None;
  if (!PyArg_ParseTuple(args, "sO|O:reg_stream_state_callback", &name, &fn, &a))
    return NULL;
  if (fn == Py_None)
    RET(aclrtRegStreamStateCallback(name, NULL, NULL));
  if (!PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError, "%.100s is not callable",
                        Py_TYPE(fn)->tp_name);
  PyObject *t = PyTuple_Pack(2, fn, a);
  if (!t)
    return NULL;
  aclError r = aclrtRegStreamStateCallback(name, state_trampoline, t);
  if (r)
    Py_DECREF(t); /* else kept for good (see above) */
  RET(r);
}

static PyObject *r_subscribe_host_func(PyObject *m, PyObject *args) {
  unsigned long long tid;
  void *s;
  if (!PyArg_ParseTuple(args, "KO&:subscribe_host_func", &tid, to_ptr, &s))
    return NULL;
  RET(aclrtSubscribeHostFunc((uint64_t)tid, s));
}

static PyObject *r_unsubscribe_host_func(PyObject *m, PyObject *args) {
  unsigned long long tid;
  void *s;
  if (!PyArg_ParseTuple(args, "KO&:unsubscribe_host_func", &tid, to_ptr, &s))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtUnSubscribeHostFunc((uint64_t)tid, s);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_process_host_func(PyObject *m, PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:process_host_func", &t))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtProcessHostFunc(t);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *r_value_write(PyObject *m, PyObject *args) {
  void *p, *s;
  unsigned long long v;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&KIO&:value_write", to_ptr, &p, &v, &flag,
                        to_ptr, &s))
    return NULL;
  RET(aclrtValueWrite(p, (uint64_t)v, flag, s));
}

static PyObject *r_value_wait(PyObject *m, PyObject *args) {
  void *p, *s;
  unsigned long long v;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&KIO&:value_wait", to_ptr, &p, &v, &flag,
                        to_ptr, &s))
    return NULL;
  RET(aclrtValueWait(p, (uint64_t)v, flag, s));
}

static PyObject *r_create_notify(PyObject *m, PyObject *args) {
  unsigned long long flag = 0;
  if (!PyArg_ParseTuple(args, "|K:create_notify", &flag))
    return NULL;
  aclrtNotify n = NULL;
  aclError r = aclrtCreateNotify(&n, (uint64_t)flag);
  return ptr_ret(n, r);
}

static PyObject *r_destroy_notify(PyObject *m, PyObject *args) {
  void *n;
  if (!PyArg_ParseTuple(args, "O&:destroy_notify", to_ptr, &n))
    return NULL;
  RET(aclrtDestroyNotify(n));
}

static PyObject *r_record_notify(PyObject *m, PyObject *args) {
  void *n, *s;
  if (!PyArg_ParseTuple(args, "O&O&:record_notify", to_ptr, &n, to_ptr, &s))
    return NULL;
  RET(aclrtRecordNotify(n, s));
}

static PyObject *r_wait_and_reset_notify(PyObject *m, PyObject *args) {
  void *n, *s;
  unsigned timeout = 0;
  if (!PyArg_ParseTuple(args, "O&O&|I:wait_and_reset_notify", to_ptr, &n,
                        to_ptr, &s, &timeout))
    return NULL;
  RET(aclrtWaitAndResetNotify(n, s, timeout));
}

static PyObject *r_get_notify_id(PyObject *m, PyObject *args) {
  void *n;
  if (!PyArg_ParseTuple(args, "O&:get_notify_id", to_ptr, &n))
    return NULL;
  uint32_t id = 0;
  aclError r = aclrtGetNotifyId(n, &id);
  return Py_BuildValue("(Ii)", (unsigned)id, (int)r);
}

static PyObject *r_notify_batch_reset(PyObject *m, PyObject *args) {
  PyObject *list;
  if (!PyArg_ParseTuple(args, "O:notify_batch_reset", &list))
    return NULL;
  PyObject *seq = PySequence_Fast(list, "notifies must be a sequence");
  if (!seq)
    return NULL;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
  aclrtNotify *v = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *v);
  if (!v) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < k; i++)
    if (!to_ptr(PySequence_Fast_GET_ITEM(seq, i), &v[i])) {
      PyMem_Free(v);
      Py_DECREF(seq);
      return NULL;
    }
  Py_DECREF(seq);
  aclError r = aclrtNotifyBatchReset(k ? v : NULL, (size_t)k);
  PyMem_Free(v);
  RET(r);
}

static PyObject *key_ret(const char *key, aclError r) {
  return Py_BuildValue("(si)", r ? "" : key, (int)r);
}

static PyObject *r_notify_get_export_key(PyObject *m, PyObject *args) {
  void *n;
  unsigned long long flags = 0;
  if (!PyArg_ParseTuple(args, "O&|K:notify_get_export_key", to_ptr, &n,
                        &flags))
    return NULL;
  char key[65] = {0};
  aclError r = aclrtNotifyGetExportKey(n, key, sizeof key, (uint64_t)flags);
  return key_ret(key, r);
}

static PyObject *r_notify_set_import_pid(PyObject *m, PyObject *args) {
  void *n;
  PyObject *pl;
  if (!PyArg_ParseTuple(args, "O&O:notify_set_import_pid", to_ptr, &n, &pl))
    return NULL;
  int32_t *pids;
  size_t k;
  if (!to_pids(pl, &pids, &k))
    return NULL;
  aclError r = aclrtNotifySetImportPid(n, pids, k);
  PyMem_Free(pids);
  RET(r);
}

static PyObject *r_notify_import_by_key(PyObject *m, PyObject *args) {
  const char *key;
  unsigned long long flags = 0;
  if (!PyArg_ParseTuple(args, "s|K:notify_import_by_key", &key, &flags))
    return NULL;
  aclrtNotify n = NULL;
  aclError r = aclrtNotifyImportByKey(&n, key, (uint64_t)flags);
  return ptr_ret(n, r);
}

static PyObject *r_ipc_mem_get_export_key(PyObject *m, PyObject *args) {
  void *p;
  Py_ssize_t size;
  unsigned long long flags = 0;
  if (!PyArg_ParseTuple(args, "O&n|K:ipc_mem_get_export_key", to_ptr, &p,
                        &size, &flags))
    return NULL;
  char key[65] = {0};
  aclError r = size < 0 ? ACL_ERROR_INVALID_PARAM
                        : aclrtIpcMemGetExportKey(p, (size_t)size, key,
                                                  sizeof key, (uint64_t)flags);
  return key_ret(key, r);
}

static PyObject *r_ipc_mem_set_import_pid(PyObject *m, PyObject *args) {
  const char *key;
  PyObject *pl;
  if (!PyArg_ParseTuple(args, "sO:ipc_mem_set_import_pid", &key, &pl))
    return NULL;
  int32_t *pids;
  size_t k;
  if (!to_pids(pl, &pids, &k))
    return NULL;
  aclError r = aclrtIpcMemSetImportPid(key, pids, k);
  PyMem_Free(pids);
  RET(r);
}

static PyObject *r_ipc_mem_import_by_key(PyObject *m, PyObject *args) {
  const char *key;
  unsigned long long flags = 0;
  if (!PyArg_ParseTuple(args, "s|K:ipc_mem_import_by_key", &key, &flags))
    return NULL;
  void *p = NULL;
  aclError r = aclrtIpcMemImportByKey(&p, key, (uint64_t)flags);
  return ptr_ret(p, r);
}

static PyObject *r_ipc_mem_close(PyObject *m, PyObject *args) {
  const char *key;
  if (!PyArg_ParseTuple(args, "s:ipc_mem_close", &key))
    return NULL;
  RET(aclrtIpcMemClose(key));
}

static PyObject *r_set_op_execute_timeout(PyObject *m, PyObject *args) {
  unsigned t;
  if (!PyArg_ParseTuple(args, "I:set_op_execute_timeout", &t))
    return NULL;
  RET(aclrtSetOpExecuteTimeOut(t));
}

static PyObject *r_set_op_execute_timeout_v2(PyObject *m, PyObject *args) {
  unsigned long long t;
  if (!PyArg_ParseTuple(args, "K:set_op_execute_timeout_v2", &t))
    return NULL;
  uint64_t actual = 0;
  aclError r = aclrtSetOpExecuteTimeOutV2((uint64_t)t, &actual);
  return Py_BuildValue("(Ki)", (unsigned long long)actual, (int)r);
}

static PyObject *r_get_op_timeout_interval(PyObject *m, PyObject *unused) {
  uint64_t v = 0;
  aclError r = aclrtGetOpTimeOutInterval(&v);
  return Py_BuildValue("(Ki)", (unsigned long long)v, (int)r);
}

static PyObject *r_get_op_execute_timeout(PyObject *m, PyObject *unused) {
  uint32_t v = 0;
  aclError r = aclrtGetOpExecuteTimeout(&v);
  return Py_BuildValue("(Ii)", (unsigned)v, (int)r);
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
    /* failures, values, notifies, interprocess memory, host functions on a
     * subscribed thread, operator timeouts */
    MV(set_exception_info_callback, r_set_exception_info_callback),
    MV(get_task_id_from_exception_info, r_get_task_id_from_exception_info),
    MV(get_stream_id_from_exception_info, r_get_stream_id_from_exception_info),
    MV(get_thread_id_from_exception_info, r_get_thread_id_from_exception_info),
    MV(get_device_id_from_exception_info, r_get_device_id_from_exception_info),
    MV(get_error_code_from_exception_info,
       r_get_error_code_from_exception_info),
    MV(get_args_from_exception_info, r_get_args_from_exception_info),
    MV(get_func_handle_from_exception_info,
       r_get_func_handle_from_exception_info),
    M0(get_thread_last_task_id, r_get_thread_last_task_id),
    MV(get_error_verbose, r_get_error_verbose),
    MV(stream_abort, r_stream_abort),
    MV(stream_stop, r_stream_stop),
    MV(reg_stream_state_callback, r_reg_stream_state_callback),
    MV(subscribe_host_func, r_subscribe_host_func),
    MV(unsubscribe_host_func, r_unsubscribe_host_func),
    MV(process_host_func, r_process_host_func),
    MV(value_write, r_value_write),
    MV(value_wait, r_value_wait),
    MV(create_notify, r_create_notify),
    MV(destroy_notify, r_destroy_notify),
    MV(record_notify, r_record_notify),
    MV(wait_and_reset_notify, r_wait_and_reset_notify),
    MV(get_notify_id, r_get_notify_id),
    MV(notify_batch_reset, r_notify_batch_reset),
    MV(notify_get_export_key, r_notify_get_export_key),
    MV(notify_set_import_pid, r_notify_set_import_pid),
    MV(notify_import_by_key, r_notify_import_by_key),
    MV(ipc_mem_get_export_key, r_ipc_mem_get_export_key),
    MV(ipc_mem_set_import_pid, r_ipc_mem_set_import_pid),
    MV(ipc_mem_import_by_key, r_ipc_mem_import_by_key),
    MV(ipc_mem_close, r_ipc_mem_close),
    MV(set_op_execute_timeout, r_set_op_execute_timeout),
    MV(set_op_execute_timeout_v2, r_set_op_execute_timeout_v2),
    M0(get_op_timeout_interval, r_get_op_timeout_interval),
    M0(get_op_execute_timeout, r_get_op_execute_timeout),
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
    C(ACL_STREAM_WAIT_VALUE_GEQ), C(ACL_STREAM_WAIT_VALUE_EQ),
    C(ACL_STREAM_WAIT_VALUE_AND), C(ACL_STREAM_WAIT_VALUE_NOR),
    C(ACL_NOTIFY_DEFAULT), C(ACL_NOTIFY_DEVICE_USE_ONLY),
    C(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT),
    C(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    C(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT),
    C(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS),
    C(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT),
    C(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    C(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT),
    C(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS),
    C(ACL_RT_STREAM_STATE_CREATE_POST), C(ACL_RT_STREAM_STATE_DESTROY_PRE),
    C(ACL_RT_NO_ERROR), C(ACL_RT_ERROR_AICORE), C(ACL_RT_AICORE_ERROR_SW),
    C(ACL_ERROR_RT_VECTOR_CORE_EXCEPTION), C(ACL_ERROR_RT_AICORE_EXCEPTION),
    C(ACL_ERROR_RT_DEVICE_TASK_ABORT), C(ACL_ERROR_RT_NO_NOTIFY_RESOURCE),
    C(ACL_ERROR_RT_MEMORY_FREE),
    {NULL, 0}};
#undef C

/* =====================================================================
 * Issue 16 families (errors, acl_base.h, system / version / device, stream
 * queries, memory, built-in tasks, switches): the pyACL calls of these
 * families, with pyACL's names, argument orders and result tuples
 * (hicann/runtime python/pyACL: py_init_acl.cpp, rt/rt_device.cpp,
 * rt/rt_memory.cpp, rt/rt_stream.cpp, rt/rt_context.cpp,
 * rt/rt_allocator.cpp).  Structs are dicts with pyACL's keys.  Where pyACL
 * truncates or mangles a value, these keep the C value; each case is noted
 * at the function and in docs/python.md.  Their tables (cover_acl_methods,
 * cover_rt_methods, cover_constants) are added by evrtpy_acl_init.
 * ===================================================================== */

/* A size_t / uint64_t / int64_t argument (OverflowError when it does not
 * fit, TypeError when it is not an int). */
static int cv_size(PyObject *o, size_t *out) {
  size_t v = PyLong_AsSize_t(o);
  if (v == (size_t)-1 && PyErr_Occurred())
    return 0;
  *out = v;
  return 1;
}

static int cv_u64(PyObject *o, uint64_t *out) {
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred())
    return 0;
  *out = (uint64_t)v;
  return 1;
}

static int cv_i64(PyObject *o, int64_t *out) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred())
    return 0;
  *out = (int64_t)v;
  return 1;
}

/* d[key] as an unsigned 64-bit int: KeyError when missing. */
static int dict_u64(PyObject *d, const char *key, uint64_t *out) {
  PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
  if (!v) {
    PyErr_Format(PyExc_KeyError, "'%s' is missing", key);
    return 0;
  }
  return cv_u64(v, out);
}

static int check_dict(PyObject *d, const char *what) {
  if (PyDict_Check(d))
    return 1;
  PyErr_Format(PyExc_TypeError, "%s must be a dict, not %.100s", what,
               Py_TYPE(d)->tp_name);
  return 0;
}

/* Sets d[key] = v, stealing v; 0 on failure. */
static int dict_put(PyObject *d, const char *key, PyObject *v) {
  if (!v)
    return 0;
  int r = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return r == 0;
}

/* (value, ret) with an unsigned 64-bit / signed 64-bit value. */
static PyObject *u64_ret(uint64_t v, aclError r) {
  return Py_BuildValue("(Ki)", (unsigned long long)v, (int)r);
}
static PyObject *i64_ret(int64_t v, aclError r) {
  return Py_BuildValue("(Li)", (long long)v, (int)r);
}

/* ---------------------------------------------- acl.*: acl_base.h, system */

/* get_version() -> (major, minor, patch, ret) (aclrtGetVersion). */
static PyObject *c_get_version(PyObject *m, PyObject *unused) {
  int32_t a = 0, b = 0, c = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclError r = aclrtGetVersion(&a, &b, &c);
#pragma GCC diagnostic pop
  return Py_BuildValue("(iiii)", (int)a, (int)b, (int)c, (int)r);
}

/* get_soc_name() -> str, None when the name cannot be had. */
static PyObject *c_get_soc_name(PyObject *m, PyObject *unused) {
  const char *s = aclrtGetSocName();
  if (!s)
    Py_RETURN_NONE;
  return PyUnicode_FromString(s);
}

static PyObject *c_float16_to_float(PyObject *m, PyObject *args) {
  unsigned short v;
  if (!PyArg_ParseTuple(args, "H:float16_to_float", &v))
    return NULL;
  return PyFloat_FromDouble((double)aclFloat16ToFloat((aclFloat16)v));
}

static PyObject *c_float_to_float16(PyObject *m, PyObject *args) {
  float v;
  if (!PyArg_ParseTuple(args, "f:float_to_float16", &v))
    return NULL;
  return PyLong_FromLong((long)aclFloatToFloat16(v));
}

/* create_data_buffer(data, size) -> buffer (0 on failure: pyACL returns
 * the bare pointer, no ret). */
static PyObject *c_create_data_buffer(PyObject *m, PyObject *args) {
  void *data;
  size_t size;
  if (!PyArg_ParseTuple(args, "O&O&:create_data_buffer", to_ptr, &data,
                        cv_size, &size))
    return NULL;
  return PyLong_FromVoidPtr(aclCreateDataBuffer(data, size));
}

static PyObject *c_destroy_data_buffer(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:destroy_data_buffer", to_ptr, &b))
    return NULL;
  RET(aclDestroyDataBuffer((const aclDataBuffer *)b));
}

static PyObject *c_get_data_buffer_addr(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_addr", to_ptr, &b))
    return NULL;
  return PyLong_FromVoidPtr(aclGetDataBufferAddr((const aclDataBuffer *)b));
}

static PyObject *c_get_data_buffer_size(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_size", to_ptr, &b))
    return NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  uint32_t n = aclGetDataBufferSize((const aclDataBuffer *)b);
#pragma GCC diagnostic pop
  return PyLong_FromUnsignedLong((unsigned long)n);
}

static PyObject *c_get_data_buffer_size_v2(PyObject *m, PyObject *args) {
  void *b;
  if (!PyArg_ParseTuple(args, "O&:get_data_buffer_size_v2", to_ptr, &b))
    return NULL;
  return PyLong_FromSize_t(aclGetDataBufferSizeV2((const aclDataBuffer *)b));
}

static PyObject *c_update_data_buffer(PyObject *m, PyObject *args) {
  void *b, *data;
  size_t size;
  if (!PyArg_ParseTuple(args, "O&O&O&:update_data_buffer", to_ptr, &b,
                        to_ptr, &data, cv_size, &size))
    return NULL;
  RET(aclUpdateDataBuffer((aclDataBuffer *)b, data, size));
}

static PyObject *c_data_type_size(PyObject *m, PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:data_type_size", &t))
    return NULL;
  return PyLong_FromSize_t(aclDataTypeSize((aclDataType)t));
}

/* app_log(level, message) -> None */
static PyObject *c_app_log(PyObject *m, PyObject *args) {
  int level;
  const char *msg;
  if (!PyArg_ParseTuple(args, "is:app_log", &level, &msg))
    return NULL;
  aclAppLog((aclLogLevel)level, "app_log", "python", 0, "%s", msg);
  Py_RETURN_NONE;
}

/* get_cann_attribute_list() -> (list, num, ret) */
static PyObject *c_get_cann_attribute_list(PyObject *m, PyObject *unused) {
  const aclCannAttr *list = NULL;
  size_t num = 0;
  aclError r = aclGetCannAttributeList(&list, &num);
  PyObject *l = PyList_New(r || !list ? 0 : (Py_ssize_t)num);
  if (!l)
    return NULL;
  for (size_t i = 0; !r && list && i < num; i++) {
    PyObject *v = PyLong_FromLong((long)list[i]);
    if (!v) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  return Py_BuildValue("(Nni)", l, (Py_ssize_t)num, (int)r);
}

static PyObject *c_get_cann_attribute(PyObject *m, PyObject *args) {
  int a;
  if (!PyArg_ParseTuple(args, "i:get_cann_attribute", &a))
    return NULL;
  int32_t v = 0;
  aclError r = aclGetCannAttribute((aclCannAttr)a, &v);
  return Py_BuildValue("(ii)", (int)v, (int)r);
}

/* acl.get_device_capability(device_id, info) -> (value, ret)
 * (aclGetDeviceCapability). */
static PyObject *c_get_device_capability(PyObject *m, PyObject *args) {
  unsigned dev;
  int info;
  if (!PyArg_ParseTuple(args, "Ii:get_device_capability", &dev, &info))
    return NULL;
  int64_t v = 0;
  aclError r = aclGetDeviceCapability(dev, (aclDeviceInfo)info, &v);
  return i64_ret(v, r);
}

/* get_cann_version(name) -> (dict, ret) (aclsysGetCANNVersion) */
static PyObject *c_get_cann_version(PyObject *m, PyObject *args) {
  unsigned name;
  if (!PyArg_ParseTuple(args, "I:get_cann_version", &name))
    return NULL;
  aclCANNPackageVersion v;
  memset(&v, 0, sizeof v);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclError r = aclsysGetCANNVersion((aclCANNPackageName)name, &v);
#pragma GCC diagnostic pop
  PyObject *d = PyDict_New();
  if (!d || !dict_put(d, "version", PyUnicode_FromString(v.version)) ||
      !dict_put(d, "major_version", PyUnicode_FromString(v.majorVersion)) ||
      !dict_put(d, "minor_version", PyUnicode_FromString(v.minorVersion)) ||
      !dict_put(d, "release_version",
                PyUnicode_FromString(v.releaseVersion)) ||
      !dict_put(d, "patch_version", PyUnicode_FromString(v.patchVersion)) ||
      !dict_put(d, "reserved", PyUnicode_FromString(v.reserved))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

/* get_version_str(pkg_name) -> (str, ret) (aclsysGetVersionStr) */
static PyObject *c_get_version_str(PyObject *m, PyObject *args) {
  const char *pkg;
  if (!PyArg_ParseTuple(args, "s:get_version_str", &pkg))
    return NULL;
  char buf[ACL_PKG_VERSION_MAX_SIZE] = {0};
  aclError r = aclsysGetVersionStr((char *)pkg, buf);
  return Py_BuildValue("(si)", buf, (int)r);
}

/* get_version_num(pkg_name) -> (int, ret): aclsysGetVersionNum, which
 * pyACL does not wrap; named by its rule. */
static PyObject *c_get_version_num(PyObject *m, PyObject *args) {
  const char *pkg;
  if (!PyArg_ParseTuple(args, "s:get_version_num", &pkg))
    return NULL;
  int32_t n = 0;
  aclError r = aclsysGetVersionNum((char *)pkg, &n);
  return Py_BuildValue("(ii)", (int)n, (int)r);
}

/* ------------------------------------------------------ rt: devices */

static PyObject *c_set_device_sat_mode(PyObject *m, PyObject *args) {
  int mode;
  if (!PyArg_ParseTuple(args, "i:set_device_sat_mode", &mode))
    return NULL;
  RET(aclrtSetDeviceSatMode((aclrtFloatOverflowMode)mode));
}

static PyObject *c_get_device_sat_mode(PyObject *m, PyObject *unused) {
  aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_SATURATION;
  aclError r = aclrtGetDeviceSatMode(&mode);
  return Py_BuildValue("(ii)", (int)mode, (int)r);
}

static PyObject *c_get_device_utilization_rate(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:get_device_utilization_rate", &dev))
    return NULL;
  aclrtUtilizationInfo u;
  memset(&u, 0, sizeof u);
  aclError r = aclrtGetDeviceUtilizationRate(dev, &u);
  PyObject *d = PyDict_New();
  if (!d ||
      !dict_put(d, "cube_utilization", PyLong_FromLong(u.cubeUtilization)) ||
      !dict_put(d, "vector_utilization",
                PyLong_FromLong(u.vectorUtilization)) ||
      !dict_put(d, "aicpu_utilization", PyLong_FromLong(u.aicpuUtilization)) ||
      !dict_put(d, "memory_utilization",
                PyLong_FromLong(u.memoryUtilization)) ||
      !dict_put(d, "utilization_extend",
                PyLong_FromVoidPtr(u.utilizationExtend))) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_query_device_status(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:query_device_status", &dev))
    return NULL;
  aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_END;
  aclError r = aclrtQueryDeviceStatus(dev, &st);
  return Py_BuildValue("(Ii)", (unsigned)st, (int)r);
}

/* get_device_info(device_id, attr) -> (value, ret): the full int64_t
 * (pyACL passes it through an int). */
static PyObject *c_get_device_info(PyObject *m, PyObject *args) {
  unsigned dev, attr;
  if (!PyArg_ParseTuple(args, "II:get_device_info", &dev, &attr))
    return NULL;
  int64_t v = 0;
  aclError r = aclrtGetDeviceInfo(dev, (aclrtDevAttr)attr, &v);
  return i64_ret(v, r);
}

static PyObject *c_device_get_stream_priority_range(PyObject *m,
                                                    PyObject *unused) {
  int32_t least = 0, greatest = 0;
  aclError r = aclrtDeviceGetStreamPriorityRange(&least, &greatest);
  return Py_BuildValue("(iii)", (int)least, (int)greatest, (int)r);
}

/* rt.get_device_capability(device_id, feature) -> (value, ret)
 * (aclrtGetDeviceCapability). */
static PyObject *c_rt_get_device_capability(PyObject *m, PyObject *args) {
  int dev;
  unsigned feature;
  if (!PyArg_ParseTuple(args, "iI:get_device_capability", &dev, &feature))
    return NULL;
  int32_t v = 0;
  aclError r =
      aclrtGetDeviceCapability(dev, (aclrtDevFeatureType)feature, &v);
  return Py_BuildValue("(ii)", (int)v, (int)r);
}

static PyObject *c_get_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  unsigned type;
  if (!PyArg_ParseTuple(args, "iI:get_device_res_limit", &dev, &type))
    return NULL;
  uint32_t v = 0;
  aclError r = aclrtGetDeviceResLimit(dev, (aclrtDevResLimitType)type, &v);
  return Py_BuildValue("(Ii)", (unsigned)v, (int)r);
}

static PyObject *c_set_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  unsigned type, value;
  if (!PyArg_ParseTuple(args, "iII:set_device_res_limit", &dev, &type,
                        &value))
    return NULL;
  RET(aclrtSetDeviceResLimit(dev, (aclrtDevResLimitType)type, value));
}

static PyObject *c_reset_device_res_limit(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:reset_device_res_limit", &dev))
    return NULL;
  RET(aclrtResetDeviceResLimit(dev));
}

static PyObject *c_get_devices_topo(PyObject *m, PyObject *args) {
  unsigned dev, other;
  if (!PyArg_ParseTuple(args, "II:get_devices_topo", &dev, &other))
    return NULL;
  uint64_t v = 0;
  aclError r = aclrtGetDevicesTopo(dev, other, &v);
  return u64_ret(v, r);
}

#define ID_MAP_FN(pyname, cfn)                                                 \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    int in;                                                                    \
    if (!PyArg_ParseTuple(args, "i:" #pyname, &in))                            \
      return NULL;                                                             \
    int32_t out = 0;                                                           \
    aclError r = cfn(in, &out);                                                \
    return Py_BuildValue("(ii)", (int)out, (int)r);                            \
  }
ID_MAP_FN(get_logic_dev_id_by_user_dev_id, aclrtGetLogicDevIdByUserDevId)
ID_MAP_FN(get_user_dev_id_by_logic_dev_id, aclrtGetUserDevIdByLogicDevId)
ID_MAP_FN(get_logic_dev_id_by_phy_dev_id, aclrtGetLogicDevIdByPhyDevId)
ID_MAP_FN(get_phy_dev_id_by_logic_dev_id, aclrtGetPhyDevIdByLogicDevId)
#undef ID_MAP_FN

/* device_get_uuid(device_id) -> ({"bytes": [16 ints]}, ret) (0..255). */
static PyObject *c_device_get_uuid(PyObject *m, PyObject *args) {
  int dev;
  if (!PyArg_ParseTuple(args, "i:device_get_uuid", &dev))
    return NULL;
  aclrtUuid u;
  memset(&u, 0, sizeof u);
  aclError r = aclrtDeviceGetUuid(dev, &u);
  PyObject *l = PyList_New((Py_ssize_t)sizeof u.bytes);
  if (!l)
    return NULL;
  for (size_t i = 0; i < sizeof u.bytes; i++) {
    PyObject *v = PyLong_FromLong((long)(unsigned char)u.bytes[i]);
    if (!v) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  PyObject *d = PyDict_New();
  if (!d || !dict_put(d, "bytes", l)) {
    Py_XDECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_device_can_access_peer(PyObject *m, PyObject *args) {
  int dev, peer;
  if (!PyArg_ParseTuple(args, "ii:device_can_access_peer", &dev, &peer))
    return NULL;
  int32_t can = 0;
  aclError r = aclrtDeviceCanAccessPeer(&can, dev, peer);
  return Py_BuildValue("(ii)", (int)can, (int)r);
}

static PyObject *c_device_enable_peer_access(PyObject *m, PyObject *args) {
  int peer;
  unsigned flags;
  if (!PyArg_ParseTuple(args, "iI:device_enable_peer_access", &peer, &flags))
    return NULL;
  RET(aclrtDeviceEnablePeerAccess(peer, flags));
}

static PyObject *c_device_disable_peer_access(PyObject *m, PyObject *args) {
  int peer;
  if (!PyArg_ParseTuple(args, "i:device_disable_peer_access", &peer))
    return NULL;
  RET(aclrtDeviceDisablePeerAccess(peer));
}

static PyObject *c_device_peer_access_status(PyObject *m, PyObject *args) {
  int dev, peer;
  if (!PyArg_ParseTuple(args, "ii:device_peer_access_status", &dev, &peer))
    return NULL;
  int32_t st = 0;
  aclError r = aclrtDevicePeerAccessStatus(dev, peer, &st);
  return Py_BuildValue("(ii)", (int)st, (int)r);
}

static PyObject *c_get_mem_info(PyObject *m, PyObject *args) {
  int attr;
  if (!PyArg_ParseTuple(args, "i:get_mem_info", &attr))
    return NULL;
  size_t fr = 0, total = 0;
  aclError r = aclrtGetMemInfo((aclrtMemAttr)attr, &fr, &total);
  return Py_BuildValue("(nni)", (Py_ssize_t)fr, (Py_ssize_t)total, (int)r);
}

/* ----------------------------------- rt: streams, switches, parameters */

static PyObject *c_set_stream_overflow_switch(PyObject *m, PyObject *args) {
  void *s;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&I:set_stream_overflow_switch", to_ptr, &s,
                        &flag))
    return NULL;
  RET(aclrtSetStreamOverflowSwitch(s, flag));
}

static PyObject *c_get_stream_overflow_switch(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:get_stream_overflow_switch", to_ptr, &s))
    return NULL;
  uint32_t flag = 0;
  aclError r = aclrtGetStreamOverflowSwitch(s, &flag);
  return Py_BuildValue("(Ii)", (unsigned)flag, (int)r);
}

static PyObject *c_get_overflow_status(PyObject *m, PyObject *args) {
  void *addr, *s;
  size_t size;
  if (!PyArg_ParseTuple(args, "O&O&O&:get_overflow_status", to_ptr, &addr,
                        cv_size, &size, to_ptr, &s))
    return NULL;
  RET(aclrtGetOverflowStatus(addr, size, s));
}

static PyObject *c_reset_overflow_status(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:reset_overflow_status", to_ptr, &s))
    return NULL;
  RET(aclrtResetOverflowStatus(s));
}

#define SYS_OPT_SET(pyname, cfn)                                               \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    int opt;                                                                   \
    int64_t v;                                                                 \
    if (!PyArg_ParseTuple(args, "iO&:" #pyname, &opt, cv_i64, &v))             \
      return NULL;                                                             \
    RET(cfn((aclSysParamOpt)opt, v));                                          \
  }
#define SYS_OPT_GET(pyname, cfn)                                               \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    int opt;                                                                   \
    if (!PyArg_ParseTuple(args, "i:" #pyname, &opt))                           \
      return NULL;                                                             \
    int64_t v = 0;                                                             \
    aclError r = cfn((aclSysParamOpt)opt, &v);                                 \
    return i64_ret(v, r);                                                      \
  }
SYS_OPT_SET(ctx_set_sys_param_opt, aclrtCtxSetSysParamOpt)
SYS_OPT_GET(ctx_get_sys_param_opt, aclrtCtxGetSysParamOpt)
SYS_OPT_SET(set_sys_param_opt, aclrtSetSysParamOpt)
SYS_OPT_GET(get_sys_param_opt, aclrtGetSysParamOpt)
#undef SYS_OPT_SET
#undef SYS_OPT_GET

static PyObject *c_get_stream_res_limit(PyObject *m, PyObject *args) {
  void *s;
  int type;
  if (!PyArg_ParseTuple(args, "O&i:get_stream_res_limit", to_ptr, &s, &type))
    return NULL;
  uint32_t v = 0;
  aclError r = aclrtGetStreamResLimit(s, (aclrtDevResLimitType)type, &v);
  return Py_BuildValue("(Ii)", (unsigned)v, (int)r);
}

static PyObject *c_set_stream_res_limit(PyObject *m, PyObject *args) {
  void *s;
  int type;
  unsigned v;
  if (!PyArg_ParseTuple(args, "O&iI:set_stream_res_limit", to_ptr, &s, &type,
                        &v))
    return NULL;
  RET(aclrtSetStreamResLimit(s, (aclrtDevResLimitType)type, v));
}

#define STREAM_ONLY_FN(pyname, cfn)                                            \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *s;                                                                   \
    if (!PyArg_ParseTuple(args, "O&:" #pyname, to_ptr, &s))                    \
      return NULL;                                                             \
    RET(cfn(s));                                                               \
  }
STREAM_ONLY_FN(reset_stream_res_limit, aclrtResetStreamResLimit)
STREAM_ONLY_FN(use_stream_res_in_current_thread,
               aclrtUseStreamResInCurrentThread)
STREAM_ONLY_FN(unuse_stream_res_in_current_thread,
               aclrtUnuseStreamResInCurrentThread)
#undef STREAM_ONLY_FN

static PyObject *c_get_res_in_current_thread(PyObject *m, PyObject *args) {
  int type;
  if (!PyArg_ParseTuple(args, "i:get_res_in_current_thread", &type))
    return NULL;
  uint32_t v = 0;
  aclError r = aclrtGetResInCurrentThread((aclrtDevResLimitType)type, &v);
  return Py_BuildValue("(Ii)", (unsigned)v, (int)r);
}

/* reduce_async(dst, src, count, kind, data_type, stream, reserve) -> ret */
static PyObject *c_reduce_async(PyObject *m, PyObject *args) {
  void *dst, *src, *s, *reserve;
  uint64_t count;
  int kind, type;
  if (!PyArg_ParseTuple(args, "O&O&O&iiO&O&:reduce_async", to_ptr, &dst,
                        to_ptr, &src, cv_u64, &count, &kind, &type, to_ptr,
                        &s, to_ptr, &reserve))
    return NULL;
  RET(aclrtReduceAsync(dst, src, count, (aclrtReduceKind)kind,
                       (aclDataType)type, s, reserve));
}

/* ------------------------------------------------------- rt: memory */

#define MALLOC_POLICY_FN(pyname, cfn)                                          \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    size_t size;                                                               \
    int policy;                                                                \
    if (!PyArg_ParseTuple(args, "O&i:" #pyname, cv_size, &size, &policy))      \
      return NULL;                                                             \
    void *p = NULL;                                                            \
    aclError r = cfn(&p, size, (aclrtMemMallocPolicy)policy);                  \
    return ptr_ret(p, r);                                                      \
  }
MALLOC_POLICY_FN(malloc_cached, aclrtMallocCached)
MALLOC_POLICY_FN(malloc_align32, aclrtMallocAlign32)
#undef MALLOC_POLICY_FN

#define PTR_SIZE_FN(pyname, cfn)                                               \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *p;                                                                   \
    size_t size;                                                               \
    if (!PyArg_ParseTuple(args, "O&O&:" #pyname, to_ptr, &p, cv_size, &size))  \
      return NULL;                                                             \
    RET(cfn(p, size));                                                         \
  }
PTR_SIZE_FN(mem_flush, aclrtMemFlush)
PTR_SIZE_FN(mem_invalidate, aclrtMemInvalidate)
#undef PTR_SIZE_FN

/* memcpy2d(dst, dpitch, src, spitch, width, height, kind) -> ret */
static PyObject *c_memcpy2d(PyObject *m, PyObject *args) {
  void *dst, *src;
  size_t dp, sp, w, h;
  int kind;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&i:memcpy2d", to_ptr, &dst,
                        cv_size, &dp, to_ptr, &src, cv_size, &sp, cv_size,
                        &w, cv_size, &h, &kind))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy2d(dst, dp, src, sp, w, h, (aclrtMemcpyKind)kind);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *c_memcpy2d_async(PyObject *m, PyObject *args) {
  void *dst, *src, *s;
  size_t dp, sp, w, h;
  int kind;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&iO&:memcpy2d_async", to_ptr, &dst,
                        cv_size, &dp, to_ptr, &src, cv_size, &sp, cv_size,
                        &w, cv_size, &h, &kind, to_ptr, &s))
    return NULL;
  aclError r;
  /* Plain host memory makes the call wait (CANN's rule). */
  Py_BEGIN_ALLOW_THREADS
  r = aclrtMemcpy2dAsync(dst, dp, src, sp, w, h, (aclrtMemcpyKind)kind, s);
  Py_END_ALLOW_THREADS
  RET(r);
}

/* The aclrtMallocConfig dict of pyACL: {} for NULL, or {"numAttrs": n,
 * "attrs": [{"attr": a, "value": {"moduleId" | "deviceId" | "rsv": ...}}]}
 * ("vaFlag" too, the union member CANN added).  Fills cfg->attrs (caller
 * frees); returns 0 with an exception set on a malformed dict. */
static int malloc_cfg(PyObject *d, aclrtMallocConfig *cfg, int *is_null) {
  *is_null = 0;
  cfg->attrs = NULL;
  cfg->numAttrs = 0;
  if (!check_dict(d, "cfg"))
    return 0;
  if (PyDict_Size(d) == 0) {
    *is_null = 1;
    return 1;
  }
  uint64_t n;
  if (!dict_u64(d, "numAttrs", &n))
    return 0;
  PyObject *l = PyDict_GetItemString(d, "attrs");
  if (!l || !PyList_Check(l)) {
    PyErr_SetString(PyExc_KeyError, "'attrs' must be a list");
    return 0;
  }
  if ((uint64_t)PyList_GET_SIZE(l) != n) {
    PyErr_SetString(PyExc_KeyError,
                    "numAttrs does not match the length of attrs");
    return 0;
  }
  cfg->numAttrs = (size_t)n;
  cfg->attrs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *cfg->attrs);
  if (!cfg->attrs) {
    PyErr_NoMemory();
    return 0;
  }
  for (size_t i = 0; i < (size_t)n; i++) {
    PyObject *a = PyList_GET_ITEM(l, (Py_ssize_t)i);
    uint64_t kind, v;
    if (!check_dict(a, "attrs[i]") || !dict_u64(a, "attr", &kind))
      return 0;
    PyObject *val = PyDict_GetItemString(a, "value");
    if (!val || !check_dict(val, "attrs[i]['value']"))
      return 0;
    cfg->attrs[i].attr = (aclrtMallocAttrType)kind;
    if (PyDict_GetItemString(val, "moduleId")) {
      if (!dict_u64(val, "moduleId", &v))
        return 0;
      cfg->attrs[i].value.moduleId = (uint16_t)v;
    } else if (PyDict_GetItemString(val, "deviceId")) {
      if (!dict_u64(val, "deviceId", &v))
        return 0;
      cfg->attrs[i].value.deviceId = (uint32_t)v;
    } else if (PyDict_GetItemString(val, "vaFlag")) {
      if (!dict_u64(val, "vaFlag", &v))
        return 0;
      cfg->attrs[i].value.vaFlag = (uint32_t)v;
    } else if (PyDict_GetItemString(val, "rsv")) {
      PyObject *rsv = PyDict_GetItemString(val, "rsv");
      if (!PyList_Check(rsv)) {
        PyErr_SetString(PyExc_TypeError, "'rsv' must be a list");
        return 0;
      }
      Py_ssize_t k = PyList_GET_SIZE(rsv);
      for (Py_ssize_t j = 0; j < k && j < 8; j++) {
        if (!cv_u64(PyList_GET_ITEM(rsv, j), &v))
          return 0;
        cfg->attrs[i].value.rsv[j] = (uint8_t)v;
      }
    } else {
      PyErr_SetString(PyExc_KeyError,
                      "no valid key found in aclrtMallocAttrValue");
      return 0;
    }
  }
  return 1;
}

#define MALLOC_CFG_FN(pyname, cfn)                                             \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    size_t size;                                                               \
    int policy;                                                                \
    PyObject *d;                                                               \
    if (!PyArg_ParseTuple(args, "O&iO:" #pyname, cv_size, &size, &policy, &d)) \
      return NULL;                                                             \
    aclrtMallocConfig cfg;                                                     \
    int is_null;                                                               \
    if (!malloc_cfg(d, &cfg, &is_null)) {                                      \
      PyMem_Free(cfg.attrs);                                                   \
      return NULL;                                                             \
    }                                                                          \
    void *p = NULL;                                                            \
    aclError r = cfn(&p, size, (aclrtMemMallocPolicy)policy,                   \
                     is_null ? NULL : &cfg);                                   \
    PyMem_Free(cfg.attrs);                                                     \
    return ptr_ret(p, r);                                                      \
  }
MALLOC_CFG_FN(malloc_with_cfg, aclrtMallocWithCfg)
MALLOC_CFG_FN(malloc_for_task_scheduler, aclrtMallocForTaskScheduler)
#undef MALLOC_CFG_FN

/* malloc_host_with_cfg(size, cfg) -> (ptr, ret) */
static PyObject *c_malloc_host_with_cfg(PyObject *m, PyObject *args) {
  uint64_t size;
  PyObject *d;
  if (!PyArg_ParseTuple(args, "O&O:malloc_host_with_cfg", cv_u64, &size, &d))
    return NULL;
  aclrtMallocConfig cfg;
  int is_null;
  if (!malloc_cfg(d, &cfg, &is_null)) {
    PyMem_Free(cfg.attrs);
    return NULL;
  }
  void *p = NULL;
  aclError r = aclrtMallocHostWithCfg(&p, size, is_null ? NULL : &cfg);
  PyMem_Free(cfg.attrs);
  return ptr_ret(p, r);
}

/* pointer_get_attributes(ptr) -> ({"location": {"id", "type"},
 * "page_size", "rsv": [4 ints]}, ret) */
static PyObject *c_pointer_get_attributes(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:pointer_get_attributes", to_ptr, &p))
    return NULL;
  aclrtPtrAttributes a;
  memset(&a, 0, sizeof a);
  aclError r = aclrtPointerGetAttributes(p, &a);
  PyObject *loc = PyDict_New(), *d = PyDict_New(),
           *rsv = Py_BuildValue("[IIII]", a.rsv[0], a.rsv[1], a.rsv[2],
                                a.rsv[3]);
  if (!loc || !d || !rsv ||
      !dict_put(loc, "id", PyLong_FromUnsignedLong(a.location.id)) ||
      !dict_put(loc, "type", PyLong_FromUnsignedLong(a.location.type)) ||
      !dict_put(d, "page_size", PyLong_FromUnsignedLong(a.pageSize))) {
    Py_XDECREF(loc);
    Py_XDECREF(d);
    Py_XDECREF(rsv);
    return NULL;
  }
  if (!dict_put(d, "location", loc)) {
    Py_DECREF(d);
    Py_DECREF(rsv);
    return NULL;
  }
  if (!dict_put(d, "rsv", rsv)) {
    Py_DECREF(d);
    return NULL;
  }
  return Py_BuildValue("(Ni)", d, (int)r);
}

static PyObject *c_host_register(PyObject *m, PyObject *args) {
  void *p;
  uint64_t size;
  int type;
  if (!PyArg_ParseTuple(args, "O&O&i:host_register", to_ptr, &p, cv_u64,
                        &size, &type))
    return NULL;
  void *dev = NULL;
  aclError r = aclrtHostRegister(p, size, (aclrtHostRegisterType)type, &dev);
  return ptr_ret(dev, r);
}

static PyObject *c_host_register_v2(PyObject *m, PyObject *args) {
  void *p;
  uint64_t size;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&O&I:host_register_v2", to_ptr, &p, cv_u64,
                        &size, &flag))
    return NULL;
  RET(aclrtHostRegisterV2(p, size, flag));
}

static PyObject *c_host_get_device_pointer(PyObject *m, PyObject *args) {
  void *p;
  unsigned flag;
  if (!PyArg_ParseTuple(args, "O&I:host_get_device_pointer", to_ptr, &p,
                        &flag))
    return NULL;
  void *dev = NULL;
  aclError r = aclrtHostGetDevicePointer(p, &dev, flag);
  return ptr_ret(dev, r);
}

static PyObject *c_host_unregister(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:host_unregister", to_ptr, &p))
    return NULL;
  RET(aclrtHostUnregister(p));
}

static PyObject *c_get_memcpy_desc_size(PyObject *m, PyObject *args) {
  int kind;
  if (!PyArg_ParseTuple(args, "i:get_memcpy_desc_size", &kind))
    return NULL;
  size_t n = 0;
  aclError r = aclrtGetMemcpyDescSize((aclrtMemcpyKind)kind, &n);
  return Py_BuildValue("(ni)", (Py_ssize_t)n, (int)r);
}

/* set_memcpy_desc(desc, kind, src, dst, count, config) -> (desc, ret) */
static PyObject *c_set_memcpy_desc(PyObject *m, PyObject *args) {
  void *desc, *src, *dst, *config;
  int kind;
  size_t count;
  if (!PyArg_ParseTuple(args, "O&iO&O&O&O&:set_memcpy_desc", to_ptr, &desc,
                        &kind, to_ptr, &src, to_ptr, &dst, cv_size, &count,
                        to_ptr, &config))
    return NULL;
  aclError r =
      aclrtSetMemcpyDesc(desc, (aclrtMemcpyKind)kind, src, dst, count, config);
  return ptr_ret(desc, r);
}

static PyObject *c_memcpy_async_with_desc(PyObject *m, PyObject *args) {
  void *desc, *s;
  int kind;
  if (!PyArg_ParseTuple(args, "O&iO&:memcpy_async_with_desc", to_ptr, &desc,
                        &kind, to_ptr, &s))
    return NULL;
  RET(aclrtMemcpyAsyncWithDesc(desc, (aclrtMemcpyKind)kind, s));
}

/* --------------------------------------- rt: virtual / physical memory */

/* The aclrtPhysicalMemProp dict of pyACL: "handleType", "allocationType",
 * "memAttr", "location": {"id", "type"}, "reserve". */
static int phys_prop(PyObject *d, aclrtPhysicalMemProp *p) {
  uint64_t ht, at, ma, id, ty, rs;
  memset(p, 0, sizeof *p);
  if (!check_dict(d, "prop") || !dict_u64(d, "handleType", &ht) ||
      !dict_u64(d, "allocationType", &at) || !dict_u64(d, "memAttr", &ma))
    return 0;
  PyObject *loc = PyDict_GetItemString(d, "location");
  if (!loc) {
    PyErr_SetString(PyExc_KeyError, "'location' is missing");
    return 0;
  }
  if (!check_dict(loc, "prop['location']") || !dict_u64(loc, "id", &id) ||
      !dict_u64(loc, "type", &ty) || !dict_u64(d, "reserve", &rs))
    return 0;
  p->handleType = (aclrtMemHandleType)ht;
  p->allocationType = (aclrtMemAllocationType)at;
  p->memAttr = (aclrtMemAttr)ma;
  p->location.id = (uint32_t)id;
  p->location.type = (aclrtMemLocationType)ty;
  p->reserve = rs;
  return 1;
}

static PyObject *c_reserve_mem_address(PyObject *m, PyObject *args) {
  size_t size, align;
  void *expect;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&O&O&O&:reserve_mem_address", cv_size, &size,
                        cv_size, &align, to_ptr, &expect, cv_u64, &flags))
    return NULL;
  void *p = NULL;
  aclError r = aclrtReserveMemAddress(&p, size, align, expect, flags);
  return ptr_ret(p, r);
}

static PyObject *c_release_mem_address(PyObject *m, PyObject *args) {
  void *p;
  if (!PyArg_ParseTuple(args, "O&:release_mem_address", to_ptr, &p))
    return NULL;
  RET(aclrtReleaseMemAddress(p));
}

/* malloc_physical(size, prop, flags) -> (handle, ret) */
static PyObject *c_malloc_physical(PyObject *m, PyObject *args) {
  size_t size;
  PyObject *d;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&OO&:malloc_physical", cv_size, &size, &d,
                        cv_u64, &flags))
    return NULL;
  aclrtPhysicalMemProp prop;
  if (!phys_prop(d, &prop))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMallocPhysical(&h, size, &prop, flags);
  return ptr_ret(h, r);
}

static PyObject *c_free_physical(PyObject *m, PyObject *args) {
  void *h;
  if (!PyArg_ParseTuple(args, "O&:free_physical", to_ptr, &h))
    return NULL;
  RET(aclrtFreePhysical(h));
}

/* map_mem(virt, size, offset, handle, flags) -> ret */
static PyObject *c_map_mem(PyObject *m, PyObject *args) {
  void *v, *h;
  size_t size, off;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&O&O&O&O&:map_mem", to_ptr, &v, cv_size,
                        &size, cv_size, &off, to_ptr, &h, cv_u64, &flags))
    return NULL;
  RET(aclrtMapMem(v, size, off, h, flags));
}

static PyObject *c_unmap_mem(PyObject *m, PyObject *args) {
  void *v;
  if (!PyArg_ParseTuple(args, "O&:unmap_mem", to_ptr, &v))
    return NULL;
  RET(aclrtUnmapMem(v));
}

/* mem_export_to_shareable_handle(handle, handle_type, flags)
 *   -> (shareable_handle, ret) */
static PyObject *c_mem_export_to_shareable_handle(PyObject *m,
                                                  PyObject *args) {
  void *h;
  int type;
  uint64_t flags;
  if (!PyArg_ParseTuple(args, "O&iO&:mem_export_to_shareable_handle", to_ptr,
                        &h, &type, cv_u64, &flags))
    return NULL;
  uint64_t sh = 0;
  aclError r =
      aclrtMemExportToShareableHandle(h, (aclrtMemHandleType)type, flags, &sh);
  return u64_ret(sh, r);
}

static PyObject *c_device_get_bare_tgid(PyObject *m, PyObject *unused) {
  int32_t pid = 0;
  aclError r = aclrtDeviceGetBareTgid(&pid);
  return Py_BuildValue("(ii)", (int)pid, (int)r);
}

/* mem_set_pid_to_shareable_handle(shareable_handle, [pid, ...]) -> ret */
static PyObject *c_mem_set_pid_to_shareable_handle(PyObject *m,
                                                   PyObject *args) {
  uint64_t sh;
  PyObject *l;
  if (!PyArg_ParseTuple(args, "O&O!:mem_set_pid_to_shareable_handle", cv_u64,
                        &sh, &PyList_Type, &l))
    return NULL;
  Py_ssize_t n = PyList_GET_SIZE(l);
  int32_t *pids = PyMem_Calloc(n ? (size_t)n : 1, sizeof *pids);
  if (!pids)
    return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    long v = PyLong_AsLong(PyList_GET_ITEM(l, i));
    if (v == -1 && PyErr_Occurred()) {
      PyMem_Free(pids);
      return NULL;
    }
    pids[i] = (int32_t)v;
  }
  aclError r = aclrtMemSetPidToShareableHandle(sh, pids, (size_t)n);
  PyMem_Free(pids);
  RET(r);
}

/* mem_import_from_shareable_handle(shareable_handle, device_id)
 *   -> (handle, ret) */
static PyObject *c_mem_import_from_shareable_handle(PyObject *m,
                                                    PyObject *args) {
  uint64_t sh;
  int dev;
  if (!PyArg_ParseTuple(args, "O&i:mem_import_from_shareable_handle", cv_u64,
                        &sh, &dev))
    return NULL;
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMemImportFromShareableHandle(sh, dev, &h);
  return ptr_ret(h, r);
}

/* mem_get_allocation_granularity(prop, option) -> (granularity, ret) */
static PyObject *c_mem_get_allocation_granularity(PyObject *m,
                                                  PyObject *args) {
  PyObject *d;
  int opt;
  if (!PyArg_ParseTuple(args, "Oi:mem_get_allocation_granularity", &d, &opt))
    return NULL;
  aclrtPhysicalMemProp prop;
  if (!phys_prop(d, &prop))
    return NULL;
  size_t g = 0;
  aclError r = aclrtMemGetAllocationGranularity(
      &prop, (aclrtMemGranularityOptions)opt, &g);
  return Py_BuildValue("(ni)", (Py_ssize_t)g, (int)r);
}

/* ------------------------------------------------- rt: allocator */

/* pyACL keeps one Python function per callback kind, the last one set
 * (whatever the descriptor); so do these.  The C callbacks call it with
 * the GIL held and return its int result as the pointer (pyACL's always
 * return NULL).  Only a C caller of aclrtAllocatorGetByStream runs them:
 * evrt has no operator that allocates workspace. */
static PyObject *cb_alloc, *cb_free, *cb_advise, *cb_addr;

static void *alloc_call(PyObject **slot, const char *fmt, ...) {
  void *out = NULL;
  if (!evrtpy_trampoline_enter(0))
    return NULL;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *fn = *slot;
  if (fn) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *a = Py_VaBuildValue(fmt, ap);
    va_end(ap);
    PyObject *r = a ? PyObject_CallObject(fn, a) : NULL;
    Py_XDECREF(a);
    if (!r) {
      PyErr_WriteUnraisable(fn);
    } else {
      if (r != Py_None) {
        out = PyLong_AsVoidPtr(r);
        if (PyErr_Occurred()) {
          PyErr_WriteUnraisable(fn);
          out = NULL;
        }
      }
      Py_DECREF(r);
    }
  }
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(0);
  return out;
}

static void *tr_alloc(aclrtAllocator a, size_t size) {
  return alloc_call(&cb_alloc, "(Nn)", PyLong_FromVoidPtr(a),
                    (Py_ssize_t)size);
}
static void tr_free(aclrtAllocator a, aclrtAllocatorBlock b) {
  (void)alloc_call(&cb_free, "(NN)", PyLong_FromVoidPtr(a),
                   PyLong_FromVoidPtr(b));
}
static void *tr_advise(aclrtAllocator a, size_t size, aclrtAllocatorAddr p) {
  return alloc_call(&cb_advise, "(NnN)", PyLong_FromVoidPtr(a),
                    (Py_ssize_t)size, PyLong_FromVoidPtr(p));
}
static void *tr_addr(aclrtAllocatorBlock b) {
  return alloc_call(&cb_addr, "(N)", PyLong_FromVoidPtr(b));
}

static PyObject *c_allocator_create_desc(PyObject *m, PyObject *unused) {
  return PyLong_FromVoidPtr(aclrtAllocatorCreateDesc());
}

static PyObject *c_allocator_destroy_desc(PyObject *m, PyObject *args) {
  void *d;
  if (!PyArg_ParseTuple(args, "O&:allocator_destroy_desc", to_ptr, &d))
    return NULL;
  RET(aclrtAllocatorDestroyDesc(d));
}

/* allocator_set_obj_to_desc(desc, allocator) -> ret: the allocator int is
 * the object (pyACL passes the address of its local copy instead). */
static PyObject *c_allocator_set_obj_to_desc(PyObject *m, PyObject *args) {
  void *d, *obj;
  if (!PyArg_ParseTuple(args, "O&O&:allocator_set_obj_to_desc", to_ptr, &d,
                        to_ptr, &obj))
    return NULL;
  RET(aclrtAllocatorSetObjToDesc(d, obj));
}

#define ALLOC_FUNC_SETTER(pyname, cfn, slot, tramp)                            \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *d;                                                                   \
    PyObject *fn;                                                              \
    if (!PyArg_ParseTuple(args, "O&O:" #pyname, to_ptr, &d, &fn))              \
      return NULL;                                                             \
    if (!PyCallable_Check(fn))                                                 \
      return PyErr_Format(PyExc_TypeError, "%.100s is not callable",          \
                          Py_TYPE(fn)->tp_name);                               \
    aclError r = cfn(d, tramp);                                                \
    if (r == ACL_SUCCESS) {                                                    \
      Py_INCREF(fn);                                                           \
      Py_XSETREF(slot, fn);                                                    \
    }                                                                          \
    RET(r);                                                                    \
  }
ALLOC_FUNC_SETTER(allocator_set_alloc_func_to_desc,
                  aclrtAllocatorSetAllocFuncToDesc, cb_alloc, tr_alloc)
ALLOC_FUNC_SETTER(allocator_set_free_func_to_desc,
                  aclrtAllocatorSetFreeFuncToDesc, cb_free, tr_free)
ALLOC_FUNC_SETTER(allocator_set_alloc_advise_func_to_desc,
                  aclrtAllocatorSetAllocAdviseFuncToDesc, cb_advise,
                  tr_advise)
ALLOC_FUNC_SETTER(allocator_set_get_addr_from_block_func_to_desc,
                  aclrtAllocatorSetGetAddrFromBlockFuncToDesc, cb_addr,
                  tr_addr)
#undef ALLOC_FUNC_SETTER

static PyObject *c_allocator_register(PyObject *m, PyObject *args) {
  void *s, *d;
  if (!PyArg_ParseTuple(args, "O&O&:allocator_register", to_ptr, &s, to_ptr,
                        &d))
    return NULL;
  RET(aclrtAllocatorRegister(s, d));
}

static PyObject *c_allocator_unregister(PyObject *m, PyObject *args) {
  void *s;
  if (!PyArg_ParseTuple(args, "O&:allocator_unregister", to_ptr, &s))
    return NULL;
  RET(aclrtAllocatorUnregister(s));
}

/* ------------------------------------------------------ their tables */

static PyMethodDef cover_acl_methods[] = {
    M0(get_version, c_get_version),
    M0(get_soc_name, c_get_soc_name),
    MV(float16_to_float, c_float16_to_float),
    MV(float_to_float16, c_float_to_float16),
    MV(create_data_buffer, c_create_data_buffer),
    MV(destroy_data_buffer, c_destroy_data_buffer),
    MV(get_data_buffer_addr, c_get_data_buffer_addr),
    MV(get_data_buffer_size, c_get_data_buffer_size),
    MV(get_data_buffer_size_v2, c_get_data_buffer_size_v2),
    MV(update_data_buffer, c_update_data_buffer),
    MV(data_type_size, c_data_type_size),
    MV(app_log, c_app_log),
    M0(get_cann_attribute_list, c_get_cann_attribute_list),
    MV(get_cann_attribute, c_get_cann_attribute),
    MV(get_device_capability, c_get_device_capability),
    MV(get_cann_version, c_get_cann_version),
    MV(get_version_str, c_get_version_str),
    MV(get_version_num, c_get_version_num),
    {NULL, NULL, 0, NULL}};

static PyMethodDef cover_rt_methods[] = {
    MV(set_device_sat_mode, c_set_device_sat_mode),
    M0(get_device_sat_mode, c_get_device_sat_mode),
    MV(get_device_utilization_rate, c_get_device_utilization_rate),
    MV(query_device_status, c_query_device_status),
    MV(get_device_info, c_get_device_info),
    M0(device_get_stream_priority_range, c_device_get_stream_priority_range),
    MV(get_device_capability, c_rt_get_device_capability),
    MV(get_device_res_limit, c_get_device_res_limit),
    MV(set_device_res_limit, c_set_device_res_limit),
    MV(reset_device_res_limit, c_reset_device_res_limit),
    MV(get_devices_topo, c_get_devices_topo),
    MV(get_logic_dev_id_by_user_dev_id, c_get_logic_dev_id_by_user_dev_id),
    MV(get_user_dev_id_by_logic_dev_id, c_get_user_dev_id_by_logic_dev_id),
    MV(get_logic_dev_id_by_phy_dev_id, c_get_logic_dev_id_by_phy_dev_id),
    MV(get_phy_dev_id_by_logic_dev_id, c_get_phy_dev_id_by_logic_dev_id),
    MV(device_get_uuid, c_device_get_uuid),
    MV(device_can_access_peer, c_device_can_access_peer),
    MV(device_enable_peer_access, c_device_enable_peer_access),
    MV(device_disable_peer_access, c_device_disable_peer_access),
    MV(device_peer_access_status, c_device_peer_access_status),
    MV(get_mem_info, c_get_mem_info),
    MV(set_stream_overflow_switch, c_set_stream_overflow_switch),
    MV(get_stream_overflow_switch, c_get_stream_overflow_switch),
    MV(get_overflow_status, c_get_overflow_status),
    MV(reset_overflow_status, c_reset_overflow_status),
    MV(ctx_set_sys_param_opt, c_ctx_set_sys_param_opt),
    MV(ctx_get_sys_param_opt, c_ctx_get_sys_param_opt),
    MV(set_sys_param_opt, c_set_sys_param_opt),
    MV(get_sys_param_opt, c_get_sys_param_opt),
    MV(get_stream_res_limit, c_get_stream_res_limit),
    MV(set_stream_res_limit, c_set_stream_res_limit),
    MV(reset_stream_res_limit, c_reset_stream_res_limit),
    MV(use_stream_res_in_current_thread, c_use_stream_res_in_current_thread),
    MV(unuse_stream_res_in_current_thread,
       c_unuse_stream_res_in_current_thread),
    MV(get_res_in_current_thread, c_get_res_in_current_thread),
    MV(reduce_async, c_reduce_async),
    MV(malloc_cached, c_malloc_cached),
    MV(malloc_align32, c_malloc_align32),
    MV(mem_flush, c_mem_flush),
    MV(mem_invalidate, c_mem_invalidate),
    MV(memcpy2d, c_memcpy2d),
    MV(memcpy2d_async, c_memcpy2d_async),
    MV(malloc_with_cfg, c_malloc_with_cfg),
    MV(malloc_for_task_scheduler, c_malloc_for_task_scheduler),
    MV(malloc_host_with_cfg, c_malloc_host_with_cfg),
    MV(pointer_get_attributes, c_pointer_get_attributes),
    MV(host_register, c_host_register),
    MV(host_register_v2, c_host_register_v2),
    MV(host_get_device_pointer, c_host_get_device_pointer),
    MV(host_unregister, c_host_unregister),
    MV(get_memcpy_desc_size, c_get_memcpy_desc_size),
    MV(set_memcpy_desc, c_set_memcpy_desc),
    MV(memcpy_async_with_desc, c_memcpy_async_with_desc),
    MV(reserve_mem_address, c_reserve_mem_address),
    MV(release_mem_address, c_release_mem_address),
    MV(malloc_physical, c_malloc_physical),
    MV(free_physical, c_free_physical),
    MV(map_mem, c_map_mem),
    MV(unmap_mem, c_unmap_mem),
    MV(mem_export_to_shareable_handle, c_mem_export_to_shareable_handle),
    M0(device_get_bare_tgid, c_device_get_bare_tgid),
    MV(mem_set_pid_to_shareable_handle, c_mem_set_pid_to_shareable_handle),
    MV(mem_import_from_shareable_handle, c_mem_import_from_shareable_handle),
    MV(mem_get_allocation_granularity, c_mem_get_allocation_granularity),
    M0(allocator_create_desc, c_allocator_create_desc),
    MV(allocator_destroy_desc, c_allocator_destroy_desc),
    MV(allocator_set_obj_to_desc, c_allocator_set_obj_to_desc),
    MV(allocator_set_alloc_func_to_desc, c_allocator_set_alloc_func_to_desc),
    MV(allocator_set_free_func_to_desc, c_allocator_set_free_func_to_desc),
    MV(allocator_set_alloc_advise_func_to_desc,
       c_allocator_set_alloc_advise_func_to_desc),
    MV(allocator_set_get_addr_from_block_func_to_desc,
       c_allocator_set_get_addr_from_block_func_to_desc),
    MV(allocator_register, c_allocator_register),
    MV(allocator_unregister, c_allocator_unregister),
    {NULL, NULL, 0, NULL}};

/* Their constants, by ACL name (added to acl.*). */
#define C(x) {#x, (long)(x)}
static const struct named cover_constants[] = {
    /* aclDataType */
    C(ACL_DT_UNDEFINED), C(ACL_FLOAT), C(ACL_FLOAT16), C(ACL_INT8),
    C(ACL_INT32), C(ACL_UINT8), C(ACL_INT16), C(ACL_UINT16), C(ACL_UINT32),
    C(ACL_INT64), C(ACL_UINT64), C(ACL_DOUBLE), C(ACL_BOOL), C(ACL_STRING),
    C(ACL_COMPLEX64), C(ACL_COMPLEX128), C(ACL_BF16), C(ACL_INT4),
    C(ACL_UINT1), C(ACL_COMPLEX32),
    /* aclFormat (common ones) */
    C(ACL_FORMAT_UNDEFINED), C(ACL_FORMAT_NCHW), C(ACL_FORMAT_NHWC),
    C(ACL_FORMAT_ND), C(ACL_FORMAT_NC1HWC0), C(ACL_FORMAT_FRACTAL_Z),
    C(ACL_FORMAT_FRACTAL_NZ),
    /* aclLogLevel */
    C(ACL_DEBUG), C(ACL_INFO), C(ACL_WARNING), C(ACL_ERROR),
    /* aclCannAttr, aclDeviceInfo */
    C(ACL_CANN_ATTR_UNDEFINED), C(ACL_CANN_ATTR_INF_NAN),
    C(ACL_CANN_ATTR_BF16), C(ACL_CANN_ATTR_JIT_COMPILE),
    C(ACL_DEVICE_INFO_UNDEFINED), C(ACL_DEVICE_INFO_AI_CORE_NUM),
    C(ACL_DEVICE_INFO_VECTOR_CORE_NUM), C(ACL_DEVICE_INFO_L2_SIZE),
    /* aclSysParamOpt */
    C(ACL_OPT_DETERMINISTIC), C(ACL_OPT_ENABLE_DEBUG_KERNEL),
    /* aclCANNPackageName */
    C(ACL_PKG_NAME_CANN), C(ACL_PKG_NAME_RUNTIME), C(ACL_PKG_NAME_DRIVER),
    /* aclrtMemAttr */
    C(ACL_DDR_MEM), C(ACL_HBM_MEM), C(ACL_DDR_MEM_HUGE),
    C(ACL_DDR_MEM_NORMAL), C(ACL_HBM_MEM_HUGE), C(ACL_HBM_MEM_NORMAL),
    /* aclrtDeviceStatus, overflow modes, reduce kinds, topology */
    C(ACL_RT_DEVICE_STATUS_NORMAL), C(ACL_RT_DEVICE_STATUS_ABNORMAL),
    C(ACL_RT_OVERFLOW_MODE_SATURATION), C(ACL_RT_OVERFLOW_MODE_INFNAN),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM), C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL),
    C(ACL_RT_DEVS_TOPOLOGY_HCCS),
    C(ACL_DEV_FEATURE_SUPPORT), C(ACL_DEV_FEATURE_NOT_SUPPORT),
    C(ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV),
    C(ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV),
    /* aclrtDevResLimitType */
    C(ACL_RT_DEV_RES_CUBE_CORE), C(ACL_RT_DEV_RES_VECTOR_CORE),
    /* memory: host registration, location types, VMM */
    C(ACL_HOST_REGISTER_MAPPED), C(ACL_HOST_REG_MAPPED),
    C(ACL_HOST_REG_PINNED), C(ACL_MEM_LOCATION_TYPE_HOST),
    C(ACL_MEM_LOCATION_TYPE_DEVICE), C(ACL_MEM_LOCATION_TYPE_UNREGISTERED),
    C(ACL_MEM_LOCATION_TYPE_MANAGED),
    C(ACL_RT_MEM_ATTR_RSV), C(ACL_RT_MEM_ATTR_MODULE_ID),
    C(ACL_RT_MEM_ATTR_DEVICE_ID),
    C(ACL_MEM_HANDLE_TYPE_NONE), C(ACL_MEM_ALLOCATION_TYPE_PINNED),
    C(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM),
    C(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED),
    C(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
    /* error codes of these families */
    C(ACL_ERROR_INVALID_FILE), C(ACL_ERROR_RT_PARAM_INVALID),
    C(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET),
    C(ACL_ERROR_RT_INVALID_MEMORY_TYPE),
    C(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    C(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED),
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
  /* Issue 16 families (their block above). */
  if (PyModule_AddFunctions(acl, cover_acl_methods) < 0 ||
      PyModule_AddFunctions(rt, cover_rt_methods) < 0)
    return -1;
  for (const struct named *c = cover_constants; c->name; c++)
    if (PyModule_AddIntConstant(acl, c->name, c->value) < 0)
      return -1;
  if (evrtpy_acl_mdl_init(module, acl, rt) < 0) /* acl.mdl (acl_mdl.c) */
    return -1;
  return PyModule_AddIntConstant(module, "HAVE_ACL", 1);
}

#else /* !EVRTPY_HAVE_ACL */

/* Built without the ACL layer: evrt.acl reports that on import. */
int evrtpy_acl_init(PyObject *module) {
  return PyModule_AddIntConstant(module, "HAVE_ACL", 0);
}

#endif
