/*
 * acl_rt_failure.c - evrt.acl.rt: failures, values, notifies,
 * interprocess memory, subscribed host functions, operator timeouts.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

/* ------------------------------------ rt: failures, values, notifies,
 * interprocess memory, subscribed host functions, operator timeouts
 * (pyACL's conventions: outputs first, then ret; handles and pointers are
 * ints; keys are str) */

/* to_pids (a list of pids as int32_t) is in acl_common.h. */

static PyObject *exc_fn; /* set_exception_info_callback's callable */

/* Calls *where(info) if it holds a callable.  Runs on the evrt worker that
 * ran the failed task, without the C layer's lock; the slot is read under
 * the GIL and may be emptied meanwhile (we hold our own reference). */
static void run_exc(PyObject **where, aclrtExceptionInfo *info) {
  if (!evrtpy_trampoline_enter(0))
    return;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *fn = *where;
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
static void exc_trampoline(aclrtExceptionInfo *info) { run_exc(&exc_fn, info); }

/* exception_info_callback_register / _unregister: the C layer keeps
 * function pointers (at most 16, a pointer registered twice once), so each
 * registered Python callable gets its own trampoline, slot i <-> exc_tr_i.
 * Slots change under the GIL; the C calls take only the layer's callback
 * lock, which a trampoline never holds while it waits for the GIL. */
#define EXC_SLOTS 16
static PyObject *exc_slots[EXC_SLOTS];
#define XT(i)                                                                  \
  static void exc_tr##i(aclrtExceptionInfo *info) {                            \
    run_exc(&exc_slots[i], info);                                              \
  }
XT(0) XT(1) XT(2) XT(3) XT(4) XT(5) XT(6) XT(7)
XT(8) XT(9) XT(10) XT(11) XT(12) XT(13) XT(14) XT(15)
#undef XT
static const aclrtExceptionInfoCallback exc_tr[EXC_SLOTS] = {
    exc_tr0, exc_tr1, exc_tr2,  exc_tr3,  exc_tr4,  exc_tr5,  exc_tr6,  exc_tr7,
    exc_tr8, exc_tr9, exc_tr10, exc_tr11, exc_tr12, exc_tr13, exc_tr14, exc_tr15};

/* The slot holding a callable equal to fn, or -1.  GIL held. */
static int exc_find(PyObject *fn) {
  for (int i = 0; i < EXC_SLOTS; i++) {
    if (!exc_slots[i])
      continue;
    int eq = PyObject_RichCompareBool(exc_slots[i], fn, Py_EQ);
    if (eq == 1)
      return i;
    if (eq < 0)
      PyErr_Clear(); /* a failing __eq__ counts as "not this one" */
  }
  return -1;
}

/* fn: a callable, or None for C's NULL (100000); else TypeError. */
static int exc_arg(PyObject *args, const char *name, PyObject **fn) {
  if (!PyArg_ParseTuple(args, "O", fn))
    return -1;
  if (*fn != Py_None && !PyCallable_Check(*fn)) {
    PyErr_Format(PyExc_TypeError, "%s: %.100s is not callable", name,
                 Py_TYPE(*fn)->tp_name);
    return -1;
  }
  return 0;
}

/* exception_info_callback_register(fn) -> ret: fn(info) runs, with the
 * other registered callbacks, when a task fails; a callable registered
 * already is not added again (0). */
static PyObject *r_exception_info_callback_register(PyObject *m,
                                                    PyObject *args) {
  PyObject *fn;
  if (exc_arg(args, "exception_info_callback_register", &fn))
    return NULL;
  if (fn == Py_None)
    RET(aclrtExceptionInfoCallbackRegister(NULL));
  if (exc_find(fn) >= 0)
    RET(ACL_SUCCESS);
  int i = 0;
  while (i < EXC_SLOTS && exc_slots[i])
    i++;
  if (i == EXC_SLOTS)
    RET(ACL_ERROR_RT_OVER_LIMIT); /* the C layer's own limit */
  Py_INCREF(fn);
  exc_slots[i] = fn; /* before the C call: a failure may run it at once */
  aclError r = aclrtExceptionInfoCallbackRegister(exc_tr[i]);
  if (r != ACL_SUCCESS) {
    exc_slots[i] = NULL;
    Py_DECREF(fn);
  }
  RET(r);
}

/* exception_info_callback_unregister(fn) -> ret: 0 also when fn is not
 * registered, as the C call. */
static PyObject *r_exception_info_callback_unregister(PyObject *m,
                                                      PyObject *args) {
  PyObject *fn;
  if (exc_arg(args, "exception_info_callback_unregister", &fn))
    return NULL;
  if (fn == Py_None)
    RET(aclrtExceptionInfoCallbackUnregister(NULL));
  int i = exc_find(fn);
  if (i < 0)
    RET(ACL_SUCCESS);
  aclError r = aclrtExceptionInfoCallbackUnregister(exc_tr[i]);
  if (r == ACL_SUCCESS) {
    PyObject *old = exc_slots[i];
    exc_slots[i] = NULL;
    Py_DECREF(old);
  }
  RET(r);
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

/* One int argument, ret only: set_op_wait_timeout(s),
 * set_op_execute_timeout_with_ms(ms), and get_last_error(level) /
 * peek_at_last_error(level) (acl.ACL_RT_THREAD_LEVEL; get clears the code,
 * peek leaves it). */
#define ONE_ARG_FN(pyname, fmt, ctype, cfn)                                    \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    ctype v;                                                                   \
    if (!PyArg_ParseTuple(args, fmt ":" #pyname, &v))                          \
      return NULL;                                                             \
    RET(cfn(v));                                                               \
  }
ONE_ARG_FN(set_op_wait_timeout, "I", unsigned, aclrtSetOpWaitTimeout)
ONE_ARG_FN(set_op_execute_timeout_with_ms, "I", unsigned,
           aclrtSetOpExecuteTimeOutWithMs)
ONE_ARG_FN(get_last_error, "i", int, aclrtGetLastError)
ONE_ARG_FN(peek_at_last_error, "i", int, aclrtPeekAtLastError)
#undef ONE_ARG_FN

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

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_failure_methods[] = {
    MV(set_exception_info_callback, r_set_exception_info_callback),
    MV(exception_info_callback_register, r_exception_info_callback_register),
    MV(exception_info_callback_unregister,
       r_exception_info_callback_unregister),
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
    MV(set_op_wait_timeout, c_set_op_wait_timeout),
    MV(set_op_execute_timeout_with_ms, c_set_op_execute_timeout_with_ms),
    MV(get_last_error, c_get_last_error),
    MV(peek_at_last_error, c_peek_at_last_error),
    M0(get_op_timeout_interval, r_get_op_timeout_interval),
    M0(get_op_execute_timeout, r_get_op_execute_timeout),
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
