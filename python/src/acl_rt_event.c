/*
 * acl_rt_event.c - evrt.acl.rt: events and their interprocess handles.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

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

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_event_methods[] = {
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
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
