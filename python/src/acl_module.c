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

#define RET(expr) return PyLong_FromLong((long)(expr))

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

static PyObject *a_get_recent_err_msg(PyObject *m, PyObject *unused) {
  const char *s = aclGetRecentErrMsg();
  if (!s)
    Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
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
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeDeviceWithTimeout(t);
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
STREAM_FN(synchronize_stream, aclrtSynchronizeStream, 1)

static PyObject *r_synchronize_stream_with_timeout(PyObject *m,
                                                   PyObject *args) {
  void *s;
  int t;
  if (!PyArg_ParseTuple(args, "O&i:synchronize_stream_with_timeout", to_ptr,
                        &s, &t))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeStreamWithTimeout(s, t);
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
  Py_BEGIN_ALLOW_THREADS
  r = aclrtSynchronizeEventWithTimeout(e, t);
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

static PyObject *r_process_report(PyObject *m, PyObject *args) {
  int t;
  if (!PyArg_ParseTuple(args, "i:process_report", &t))
    return NULL;
  aclError r;
  /* The callback re-takes the GIL on this thread (PyGILState_Ensure: this
   * is a Python thread). */
  Py_BEGIN_ALLOW_THREADS
  r = aclrtProcessReport(t);
  Py_END_ALLOW_THREADS
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

static PyObject *r_device_get_bare_tgid(PyObject *m, PyObject *unused) {
  int32_t pid = 0;
  aclError r = aclrtDeviceGetBareTgid(&pid);
  return Py_BuildValue("(ii)", (int)pid, (int)r);
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
    M0(device_get_bare_tgid, r_device_get_bare_tgid),
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
