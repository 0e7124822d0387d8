/* Failing tasks through ACL: the synchronize that reports 507035 (as CANN's
 * samples show) and clears it, ACL_STOP_ON_FAILURE, exception info
 * callbacks and their accessors, aclrtGetThreadLastTaskId,
 * aclrtGetErrorVerbose, aclrtStreamAbort / aclrtStreamStop, stream state
 * callbacks.  The failing "kernel" is an evrt host task returning 507035
 * (evrt.h: the one place these tests use the native API). */
#include "acl_test.h"

#include <evrt.h>

static atomic_int counter;
static void easy(void *p) {
  (void)p;
  atomic_fetch_add(&counter, 1);
}
static int32_t trap(void *p) {
  (void)p;
  return ACL_ERROR_RT_VECTOR_CORE_EXCEPTION;
}
static evrt_stream_t native(aclrtStream s) {
  if (!s)
    aclrtCtxGetCurrentDefaultStream(&s);
  return (evrt_stream_t)s;
}
static aclError error_op(aclrtStream s, void *arg) {
  return evrt_launch_host_func_status(native(s), trap, arg) ? ACL_ERROR_FAILURE
                                                            : ACL_SUCCESS;
}

TEST(a_failed_task_is_reported_once_by_synchronize) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  atomic_store(&counter, 0);
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(error_op(s, NULL));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(atomic_load(&counter), 2); /* continue on failure: both ran */
  /* reported, so cleared: the stream works on (CANN's samples) */
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, 10000));
  ASSERT_EQ(atomic_load(&counter), 3);
  /* the timeout variant reports it too */
  ASSERT_OK(error_op(s, NULL));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 10000),
             ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_OK(aclrtSynchronizeStream(s));
  /* a query reports without clearing; the synchronize then clears */
  ASSERT_OK(error_op(s, NULL));
  aclrtStreamStatus status;
  for (int i = 0; i < 10000; i++) {
    aclError r = aclrtStreamQuery(s, &status);
    if (r == ACL_ERROR_RT_VECTOR_CORE_EXCEPTION)
      break;
    ASSERT_OK(r);
    sleep_ms(1);
  }
  ASSERT_ACL(aclrtStreamQuery(s, &status), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_OK(aclrtStreamQuery(s, &status));
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(stop_on_failure_skips_the_later_tasks) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  atomic_store(&counter, 0);
  ASSERT_ACL(aclrtSetStreamFailureMode(s, 7), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(error_op(s, NULL));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&counter), 2);
  /* destroying a stream with a pending error is fine */
  ASSERT_OK(error_op(s, NULL));
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(events_and_the_device_report_the_failure) {
  aclrtStream s;
  aclrtEvent before, after;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEventExWithFlag(&before, ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtCreateEventExWithFlag(&after, ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtRecordEvent(before, s));
  ASSERT_OK(error_op(s, NULL));
  ASSERT_OK(aclrtRecordEvent(after, s));
  ASSERT_OK(aclrtSynchronizeEvent(before));
  ASSERT_ACL(aclrtSynchronizeEvent(after), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  /* an event synchronize does not clear it; the device's does */
  ASSERT_ACL(aclrtSynchronizeDevice(), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_OK(aclrtSynchronizeDevice());
  ASSERT_OK(aclrtSynchronizeEvent(after));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyEvent(before));
  ASSERT_OK(aclrtDestroyEvent(after));
  ASSERT_OK(aclrtDestroyStream(s));
}

static struct {
  atomic_int calls;
  uint32_t task, stream, thread, device, code;
  void *args;
  uint32_t args_len;
  aclrtFuncHandle func;
  aclError args_ret, func_ret;
  aclError sync_own;
} seen;
static aclrtStream cb_stream;
static void on_exception(aclrtExceptionInfo *info) {
  seen.task = aclrtGetTaskIdFromExceptionInfo(info);
  seen.stream = aclrtGetStreamIdFromExceptionInfo(info);
  seen.thread = aclrtGetThreadIdFromExceptionInfo(info);
  seen.device = aclrtGetDeviceIdFromExceptionInfo(info);
  seen.code = aclrtGetErrorCodeFromExceptionInfo(info);
  seen.args_ret = aclrtGetArgsFromExceptionInfo(info, &seen.args,
                                                &seen.args_len);
  seen.func_ret = aclrtGetFuncHandleFromExceptionInfo(info, &seen.func);
  /* as in a host task of the failed stream: refused, not a deadlock */
  seen.sync_own = aclrtSynchronizeStream(cb_stream);
  atomic_fetch_add(&seen.calls, 1);
}
static atomic_int other_calls;
static void on_exception2(aclrtExceptionInfo *info) {
  (void)info;
  atomic_fetch_add(&other_calls, 1);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(exception_callbacks_get_the_failed_task) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  cb_stream = s;
  atomic_store(&seen.calls, 0);
  atomic_store(&other_calls, 0);
  ASSERT_OK(aclrtSetExceptionInfoCallback(on_exception));
  ASSERT_OK(aclrtExceptionInfoCallbackRegister(on_exception2));
  ASSERT_OK(aclrtExceptionInfoCallbackRegister(on_exception2)); /* once */
  ASSERT_ACL(aclrtExceptionInfoCallbackRegister(NULL), ACL_ERROR_INVALID_PARAM);
  int arg = 7;
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(error_op(s, &arg));
  uint32_t last = 0;
  ASSERT_OK(aclrtGetThreadLastTaskId(&last));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(atomic_load(&seen.calls), 1);
  ASSERT_EQ(atomic_load(&other_calls), 1);
  int32_t sid = 0;
  ASSERT_OK(aclrtStreamGetId(s, &sid));
  ASSERT_EQ(seen.task, last);
  ASSERT_EQ(seen.stream, (uint32_t)sid);
  ASSERT_EQ(seen.device, 0);
  ASSERT_EQ(seen.code, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT(seen.thread != 0xFFFFFFFFu);
  ASSERT_OK(seen.args_ret);
  ASSERT(seen.args == &arg);
  ASSERT_OK(seen.func_ret);
  ASSERT(seen.func == (aclrtFuncHandle)(uintptr_t)trap);
  ASSERT_ACL(seen.sync_own, ACL_ERROR_RT_PARAM_INVALID);
  /* accessors on NULL */
  ASSERT_EQ(aclrtGetTaskIdFromExceptionInfo(NULL), 0xFFFFFFFFu);
  ASSERT_EQ(aclrtGetErrorCodeFromExceptionInfo(NULL), 0xFFFFFFFFu);
  void *a;
  uint32_t n;
  ASSERT_ACL(aclrtGetArgsFromExceptionInfo(NULL, &a, &n),
             ACL_ERROR_INVALID_PARAM);
  aclrtFuncHandle f;
  ASSERT_ACL(aclrtGetFuncHandleFromExceptionInfo(NULL, &f),
             ACL_ERROR_INVALID_PARAM);
  /* the device's error detail */
  aclrtErrorInfo ei;
  ASSERT_OK(aclrtGetErrorVerbose(0, &ei));
  ASSERT_EQ(ei.errorType, ACL_RT_ERROR_AICORE);
  ASSERT_EQ(ei.hasDetail, 1);
  ASSERT_EQ(ei.detail.aicoreErrType, ACL_RT_AICORE_ERROR_SW);
  ASSERT_ACL(aclrtGetErrorVerbose(0, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetErrorVerbose(99, &ei), ACL_ERROR_RT_INVALID_DEVICEID);
  /* off: no more calls */
  ASSERT_OK(aclrtSetExceptionInfoCallback(NULL));
  ASSERT_OK(aclrtExceptionInfoCallbackUnregister(on_exception2));
  ASSERT_OK(aclrtExceptionInfoCallbackUnregister(on_exception2)); /* no-op */
  ASSERT_OK(error_op(s, NULL));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(atomic_load(&seen.calls), 1);
  ASSERT_EQ(atomic_load(&other_calls), 1);
  ASSERT_ACL(aclrtGetThreadLastTaskId(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
}
#pragma GCC diagnostic pop

TEST(stream_abort_discards_queued_tasks) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  atomic_store(&counter, 0);
  ASSERT_OK(gate_on(s, &g));
  for (int i = 0; i < 50; i++)
    ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  ASSERT_OK(aclrtStreamAbort(s));
  gate_open(&g);
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_ABORT);
  ASSERT_EQ(atomic_load(&counter), 0);
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL)); /* usable at once */
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_ACL(aclrtStreamAbort(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtStreamStop(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtStreamStop(s));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtStreamAbort(s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtStreamStop(s), ACL_ERROR_RT_INVALID_HANDLE);
}

/* A kernel that a stop or an abort kills while it runs (CANN's
 * stream_with_failure_mode sample): it polls evrt_host_func_cancelled, as
 * a long stand-in kernel does, for at most 60 s. */
static atomic_int kentered;
static void polling_kernel(void *p) {
  (void)p;
  atomic_store(&kentered, 1);
  for (int i = 0; i < 60000 && !evrt_host_func_cancelled(); i++)
    sleep_ms(1);
}

TEST(stop_and_abort_kill_a_running_kernel) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  atomic_store(&counter, 0);
  /* stop: the running kernel ends with 507000, the queue runs */
  atomic_store(&kentered, 0);
  ASSERT_OK(aclrtLaunchHostFunc(s, polling_kernel, NULL));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  WAIT_UNTIL(atomic_load(&kentered), 30000);
  ASSERT_OK(aclrtStreamStop(s));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_INTERNAL_ERROR);
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_OK(aclrtSynchronizeStream(s)); /* reported once */
  /* abort: the running kernel ends with the AI core's exception 507035,
   * the queue is discarded */
  atomic_store(&kentered, 0);
  ASSERT_OK(aclrtLaunchHostFunc(s, polling_kernel, NULL));
  ASSERT_OK(aclrtLaunchHostFunc(s, easy, NULL));
  WAIT_UNTIL(atomic_load(&kentered), 30000);
  ASSERT_OK(aclrtStreamAbort(s));
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_OK(aclrtDestroyStream(s));
}

static struct {
  atomic_int created, destroyed;
  aclrtStream last;
  void *args;
} st_seen;
static void on_state(aclrtStream stm, aclrtStreamState state, void *args) {
  st_seen.last = stm;
  st_seen.args = args;
  if (state == ACL_RT_STREAM_STATE_CREATE_POST)
    atomic_fetch_add(&st_seen.created, 1);
  else if (state == ACL_RT_STREAM_STATE_DESTROY_PRE)
    atomic_fetch_add(&st_seen.destroyed, 1);
}

TEST(stream_state_callbacks) {
  int tag;
  ASSERT_ACL(aclrtRegStreamStateCallback(NULL, on_state, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtRegStreamStateCallback("t", on_state, &tag));
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_EQ(atomic_load(&st_seen.created), 1);
  ASSERT(st_seen.last == s && st_seen.args == &tag);
  ASSERT_OK(aclrtDestroyStreamForce(s));
  ASSERT_EQ(atomic_load(&st_seen.destroyed), 1);
  ASSERT_OK(aclrtRegStreamStateCallback("t", NULL, NULL));
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_EQ(atomic_load(&st_seen.created), 1);
  ASSERT_EQ(atomic_load(&st_seen.destroyed), 1);
  ASSERT_OK(aclrtRegStreamStateCallback("never", NULL, NULL));
}
