/*
 * acl_rt_stream.c - evrt.acl.rt: streams, switches and stream parameters.
 *
 * One ACL family of the pyACL-style module, split from acl_module.c (whose
 * top says the conventions: handles are ints, `ret` comes last, which calls
 * release the GIL); the helpers the families share are in acl_common.h.
 * evrtpy_acl_init adds this file's functions through the table at its end.
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

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

/* ------------------------------------ rt: stream configuration handles */

/* create_stream_config_handle() -> handle (0 on failure: a bare pointer, as
 * allocator_create_desc and create_data_buffer return theirs). */
static PyObject *c_create_stream_config_handle(PyObject *m, PyObject *unused) {
  return PyLong_FromVoidPtr(aclrtCreateStreamConfigHandle());
}

STREAM_FN(destroy_stream_config_handle, aclrtDestroyStreamConfigHandle, 0)

/* set_stream_config_opt(handle, attr, value) -> ret.  value is a Python
 * int, passed as the C type of the attribute (the size C checks):
 * WORK_ADDR_PTR a pointer (None is NULL), WORK_SIZE and FLAG a size_t,
 * PRIORITY a uint32_t; OverflowError when it does not fit.  An unknown
 * attribute gets an int64_t, which ACL refuses (100000). */
static PyObject *c_set_stream_config_opt(PyObject *m, PyObject *args) {
  void *h;
  int attr;
  PyObject *o;
  if (!PyArg_ParseTuple(args, "O&iO:set_stream_config_opt", to_ptr, &h, &attr,
                        &o))
    return NULL;
  union {
    void *p;
    size_t z;
    uint32_t u;
    int64_t i;
  } v;
  size_t size;
  int ok;
  switch (attr) {
  case ACL_RT_STREAM_WORK_ADDR_PTR:
    ok = to_ptr(o, &v.p), size = sizeof v.p;
    break;
  case ACL_RT_STREAM_WORK_SIZE:
  case ACL_RT_STREAM_FLAG:
    ok = cv_size(o, &v.z), size = sizeof v.z;
    break;
  case ACL_RT_STREAM_PRIORITY:
    ok = conv_u32(o, &v.u), size = sizeof v.u;
    break;
  default:
    ok = cv_i64(o, &v.i), size = sizeof v.i;
  }
  if (!ok)
    return NULL;
  RET(aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)attr, &v, size));
}

/* create_stream_v2(handle) -> (stream, ret); None: the default
 * configuration. */
static PyObject *c_create_stream_v2(PyObject *m, PyObject *args) {
  void *h;
  if (!PyArg_ParseTuple(args, "O&:create_stream_v2", to_ptr, &h))
    return NULL;
  aclrtStream s = NULL;
  aclError r = aclrtCreateStreamV2(&s, h);
  return ptr_ret(s, r);
}

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

/* stream_get_priority(stream) / stream_get_flags(stream) -> (value, ret):
 * what the stream was created with. */
#define STREAM_U32_FN(pyname, cfn)                                             \
  static PyObject *c_##pyname(PyObject *m, PyObject *args) {                   \
    void *s;                                                                   \
    if (!PyArg_ParseTuple(args, "O&:" #pyname, to_ptr, &s))                    \
      return NULL;                                                             \
    uint32_t v = 0;                                                            \
    aclError r = cfn(s, &v);                                                   \
    return Py_BuildValue("(Ii)", (unsigned)v, (int)r);                         \
  }
STREAM_U32_FN(stream_get_priority, aclrtStreamGetPriority)
STREAM_U32_FN(stream_get_flags, aclrtStreamGetFlags)
#undef STREAM_U32_FN

/* stream_wait_event_with_flag(stream, event, timeout_s, flag) -> ret. */
static PyObject *c_stream_wait_event_with_flag(PyObject *m, PyObject *args) {
  void *s, *e;
  unsigned t, flag;
  if (!PyArg_ParseTuple(args, "O&O&II:stream_wait_event_with_flag", to_ptr,
                        &s, to_ptr, &e, &t, &flag))
    return NULL;
  RET(aclrtStreamWaitEventWithFlag(s, e, t, flag));
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

/* Added to evrt.acl.rt by evrtpy_acl_init. */
PyMethodDef evrtpy_acl_rt_stream_methods[] = {
    M0(create_stream, r_create_stream),
    MV(create_stream_with_config, r_create_stream_with_config),
    M0(create_stream_config_handle, c_create_stream_config_handle),
    MV(destroy_stream_config_handle, r_destroy_stream_config_handle),
    MV(set_stream_config_opt, c_set_stream_config_opt),
    MV(create_stream_v2, c_create_stream_v2),
    MV(destroy_stream, r_destroy_stream),
    MV(destroy_stream_force, r_destroy_stream_force),
    MV(synchronize_stream, r_synchronize_stream),
    MV(synchronize_stream_with_timeout, r_synchronize_stream_with_timeout),
    MV(stream_query, r_stream_query),
    MV(stream_wait_event, r_stream_wait_event),
    MV(stream_wait_event_with_timeout, r_stream_wait_event_with_timeout),
    MV(stream_get_id, r_stream_get_id),
    MV(stream_get_priority, c_stream_get_priority),
    MV(stream_get_flags, c_stream_get_flags),
    MV(stream_wait_event_with_flag, c_stream_wait_event_with_flag),
    MV(set_stream_failure_mode, r_set_stream_failure_mode),
    M0(get_stream_available_num, r_get_stream_available_num),
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
    {NULL, NULL, 0, NULL}};

#endif /* EVRTPY_HAVE_ACL */
