/* Model runtime instances (aclmdlRI*) and labels: capture, build, execute,
 * CANN's error codes for every capture rule (docs/capture.md, docs/acl.md).
 * Host functions stand in for kernels. */
#include "acl_test.h"

static void add1(void *p) { (*(int *)p)++; }
static void times2(void *p) { (*(int *)p) *= 2; }

static aclrtStream mk(void) {
  aclrtStream s = NULL;
  if (aclrtCreateStream(&s) != ACL_SUCCESS)
    abort();
  return s;
}
static aclrtEvent ev(void) {
  aclrtEvent e = NULL;
  if (aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC) != ACL_SUCCESS)
    abort();
  return e;
}
static aclmdlRICaptureStatus status_of(aclrtStream s) {
  aclmdlRICaptureStatus st = (aclmdlRICaptureStatus)-1;
  aclmdlRICaptureGetInfo(s, &st, NULL);
  return st;
}

TEST(capture_execute_async_many_times) {
  aclrtStream s = mk();
  static int v;
  v = 1;
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus st;
  aclmdlRI during = NULL, after = NULL;
  ASSERT_OK(aclmdlRICaptureGetInfo(s, &st, &during));
  ASSERT_EQ(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  ASSERT(during != NULL);
  ASSERT_OK(aclrtLaunchHostFunc(s, add1, &v));
  ASSERT_OK(aclrtLaunchHostFunc(s, times2, &v));
  ASSERT_OK(aclmdlRICaptureEnd(s, &after));
  ASSERT(after == during); /* GetInfo's model is the one End returns */
  ASSERT_EQ(v, 1);         /* nothing ran */
  ASSERT_EQ(status_of(s), ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(aclmdlRIExecuteAsync(after, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(v, ((1 + 1) * 2 + 1) * 2 * 2 + 2); /* ((v+1)*2) three times */
  ASSERT_OK(aclmdlRIExecute(after, -1));
  ASSERT_EQ(v, 46);
  uint32_t id;
  char name[16];
  ASSERT_OK(aclmdlRISetName(after, "m1"));
  ASSERT_OK(aclmdlRIGetName(after, sizeof name, name));
  ASSERT(strcmp(name, "m1") == 0);
  ASSERT_ACL(aclmdlRIGetName(after, 2, name), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclmdlRIGetId(after, &id));
  ASSERT_OK(aclmdlRIDestroy(after));
  ASSERT_ACL(aclmdlRIDestroy(after), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclmdlRIExecuteAsync(after, s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclmdlRIDestroy(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
}

/* CANN's developer guide, cross-stream capture: stream 2 joins through
 * event 1 and returns through event 2. */
TEST(cross_stream_capture_fork_and_join) {
  aclrtStream s1 = mk(), s2 = mk();
  aclrtEvent e1 = ev(), e2 = ev();
  static int a, b, out;
  ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(aclrtLaunchHostFunc(s1, add1, &a));
  ASSERT_OK(aclrtRecordEvent(e1, s1));
  ASSERT_OK(aclrtStreamWaitEvent(s2, e1));
  aclmdlRI m1 = NULL, m2 = NULL;
  ASSERT_OK(aclmdlRICaptureGetInfo(s2, NULL, &m2)); /* the same model */
  ASSERT_OK(aclmdlRICaptureGetInfo(s1, NULL, &m1));
  ASSERT(m1 == m2 && m1 != NULL);
  ASSERT_OK(aclrtLaunchHostFunc(s2, add1, &b));
  ASSERT_OK(aclrtRecordEvent(e2, s2));
  ASSERT_OK(aclrtStreamWaitEvent(s1, e2));
  ASSERT_OK(aclrtLaunchHostFunc(s1, add1, &out));
  aclmdlRI m;
  ASSERT_OK(aclmdlRICaptureEnd(s1, &m));
  for (int i = 0; i < 8; i++) {
    ASSERT_OK(aclmdlRIExecuteAsync(m, s1));
    ASSERT_OK(aclrtSynchronizeStream(s1));
    ASSERT_EQ(a, i + 1);
    ASSERT_EQ(b, i + 1);
    ASSERT_EQ(out, i + 1);
  }
  ASSERT_OK(aclmdlRIDestroy(m));
  aclrtDestroyEvent(e1);
  aclrtDestroyEvent(e2);
  aclrtDestroyStream(s1);
  aclrtDestroyStream(s2);
}

/* End a capture that a rule broke: 507903, the stream out of capture. */
#define END_INVALIDATED(s)                                                     \
  do {                                                                         \
    aclmdlRI mdl_ = NULL;                                                      \
    ASSERT_ACL(aclmdlRICaptureEnd(s, &mdl_),                                   \
               ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);                       \
    ASSERT_EQ(status_of(s), ACL_MODEL_RI_CAPTURE_STATUS_NONE);                 \
  } while (0)

TEST(capture_rule_errors_have_canns_codes) {
  aclrtStream s = mk(), o = mk();
  aclrtEvent e = ev(), f = ev();
  aclrtStreamStatus ss;
  aclrtEventRecordedStatus es;
  aclmdlRI m = NULL;
  ASSERT_ACL(aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)7),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
  ASSERT_ACL(aclmdlRICaptureGetInfo(s, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  aclrtStream def = NULL;
  ASSERT_OK(aclrtCtxGetCurrentDefaultStream(&def));
  ASSERT_ACL(aclmdlRICaptureBegin(def, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
             ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT);
  /* stream captured: synchronize, query, begin again, destroy */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_ACL(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
             ACL_ERROR_RT_STREAM_CAPTURED);
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
  END_INVALIDATED(s);
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_ACL(aclrtStreamQuery(s, &ss), ACL_ERROR_RT_STREAM_CAPTURED);
  END_INVALIDATED(s);
  /* event captured */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtRecordEvent(e, s));
  ASSERT_ACL(aclrtQueryEventStatus(e, &es), ACL_ERROR_RT_EVENT_CAPTURED);
  END_INVALIDATED(s);
  ASSERT_ACL(aclrtSynchronizeEvent(e), ACL_ERROR_RT_EVENT_CAPTURED);
  ASSERT_OK(aclrtRecordEvent(e, o)); /* recorded outside again: usable */
  ASSERT_OK(aclrtSynchronizeEvent(e));
  /* isolation: a wait on a record outside the capture (107024) */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_ACL(aclrtStreamWaitEvent(s, e), ACL_ERROR_RT_CAPTURE_DEPENDENCY);
  END_INVALIDATED(s);
  /* unjoined (107025) */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtRecordEvent(f, s));
  ASSERT_OK(aclrtStreamWaitEvent(o, f));
  static int x;
  ASSERT_OK(aclrtLaunchHostFunc(o, add1, &x));
  /* unmatched: the end on the joined stream (107036), invalidates */
  ASSERT_ACL(aclmdlRICaptureEnd(o, &m), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED);
  END_INVALIDATED(s);
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtRecordEvent(f, s));
  ASSERT_OK(aclrtStreamWaitEvent(o, f));
  ASSERT_OK(aclrtLaunchHostFunc(o, add1, &x));
  ASSERT_ACL(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_UNJOINED);
  ASSERT_EQ(status_of(o), ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  ASSERT_EQ(x, 0);
  /* external record and wait outside a capture (107029) */
  ASSERT_ACL(aclrtRecordEventWithFlag(e, s, ACL_EVENT_RECORD_EXTERNAL),
             ACL_ERROR_RT_STREAM_NOT_CAPTURED);
  ASSERT_ACL(aclrtStreamWaitEventWithFlag(s, e, 0, ACL_EVENT_WAIT_EXTERNAL),
             ACL_ERROR_RT_STREAM_NOT_CAPTURED);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyEvent(f));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStream(o));
}

TEST(merge_of_two_captures) {
  aclrtStream a = mk(), b = mk();
  aclrtEvent e = ev();
  ASSERT_OK(aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclmdlRICaptureBegin(b, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtRecordEvent(e, a));
  ASSERT_ACL(aclrtStreamWaitEvent(b, e), ACL_ERROR_RT_CAPTURE_DEPENDENCY);
  ASSERT_EQ(status_of(a), ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
  END_INVALIDATED(a);
  END_INVALIDATED(b);
  aclrtDestroyEvent(e);
  aclrtDestroyStream(a);
  aclrtDestroyStream(b);
}

struct end_arg {
  aclrtStream s;
  aclrtContext ctx;
  aclError r;
  aclmdlRI m;
};
static void *end_elsewhere(void *p) {
  struct end_arg *a = p;
  aclrtSetCurrentContext(a->ctx);
  a->r = aclmdlRICaptureEnd(a->s, &a->m);
  return NULL;
}

TEST(wrong_thread_and_capture_modes) {
  aclrtStream s = mk();
  aclrtContext ctx;
  ASSERT_OK(aclrtGetCurrentContext(&ctx));
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  struct end_arg a = {s, ctx, ACL_SUCCESS, NULL};
  pthread_t t;
  pthread_create(&t, NULL, end_elsewhere, &a);
  pthread_join(t, NULL);
  ASSERT_EQ(a.r, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
  ASSERT_EQ(status_of(s), ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  /* aclrtMemcpy is unsafe in a global capture (107030) ... */
  static char src[8] = "abcdefg", dst[8];
  ASSERT_ACL(aclrtMemcpy(dst, 8, src, 8, ACL_MEMCPY_HOST_TO_HOST),
             ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  END_INVALIDATED(s);
  /* ... unless this thread switches to relaxed (CANN's guide) */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  ASSERT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
  ASSERT_OK(aclrtMemcpy(dst, 8, src, 8, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT_OK(aclrtMemset(dst, 8, 0, 8));
  ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  ASSERT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
  ASSERT_ACL(aclrtMemset(dst, 8, 0, 8), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  END_INVALIDATED(s);
  /* a blocking copy (plain host memory) in a capture: 107041 */
  static char host[8], *devp;
  ASSERT_OK(aclrtMalloc((void **)&devp, 8, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtMemset(devp, 8, 0, 8)); /* (fresh memory is not zeroed) */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL(aclrtMemcpyAsync(devp, 8, host, 8, ACL_MEMCPY_HOST_TO_DEVICE, s),
             ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC);
  END_INVALIDATED(s);
  /* relaxed: captured as a node, no synchronize */
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  memcpy(host, "1234567", 8);
  ASSERT_OK(aclrtMemcpyAsync(devp, 8, host, 8, ACL_MEMCPY_HOST_TO_DEVICE, s));
  ASSERT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  aclmdlRI m;
  ASSERT_OK(aclmdlRICaptureEnd(s, &m));
  ASSERT(devp[0] == 0);
  ASSERT_OK(aclmdlRIExecuteAsync(m, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT(memcmp(devp, "1234567", 8) == 0);
  ASSERT_ACL(aclmdlRICaptureThreadExchangeMode(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclmdlRIDestroy(m));
  ASSERT_OK(aclrtFree(devp));
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(external_record_and_wait_between_two_models) {
  aclrtStream s1 = mk(), s2 = mk();
  aclrtEvent e = ev();
  static int a, b;
  ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtLaunchHostFunc(s1, add1, &a));
  ASSERT_OK(aclrtRecordEventWithFlag(e, s1, ACL_EVENT_RECORD_EXTERNAL));
  aclmdlRI m1, m2;
  ASSERT_OK(aclmdlRICaptureEnd(s1, &m1));
  ASSERT_OK(aclmdlRICaptureBegin(s2, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_OK(aclrtStreamWaitEventWithFlag(s2, e, 0, ACL_EVENT_WAIT_EXTERNAL));
  ASSERT_OK(aclrtLaunchHostFunc(s2, times2, &a));
  ASSERT_OK(aclrtLaunchHostFunc(s2, add1, &b));
  ASSERT_OK(aclmdlRICaptureEnd(s2, &m2));
  for (int i = 0; i < 5; i++) {
    a = 1;
    ASSERT_OK(aclmdlRIExecuteAsync(m1, s1));
    ASSERT_OK(aclmdlRIExecuteAsync(m2, s2));
    ASSERT_OK(aclrtSynchronizeStream(s2));
    ASSERT_EQ(a, 4); /* (1 + 1) * 2: model 2 waited for model 1 */
  }
  ASSERT_EQ(b, 5);
  ASSERT_OK(aclrtSynchronizeStream(s1));
  ASSERT_OK(aclmdlRIDestroy(m1));
  ASSERT_OK(aclmdlRIDestroy(m2));
  aclrtDestroyEvent(e);
  aclrtDestroyStream(s1);
  aclrtDestroyStream(s2);
}

static aclrtStream persistent(void) {
  aclrtStream s = NULL;
  if (aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT))
    abort();
  return s;
}

TEST(build_bind_end_task_execute) {
  aclrtStream ls = persistent(), plain = mk(), exe = mk();
  static int v;
  aclmdlRI m;
  ASSERT_ACL(aclmdlRIBuildBegin(&m, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRIBuildBegin(NULL, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclmdlRIBuildBegin(&m, 0));
  ASSERT_ACL(aclmdlRIBindStream(m, plain, ACL_MODEL_STREAM_FLAG_HEAD),
             ACL_ERROR_RT_PARAM_INVALID); /* not persistent */
  ASSERT_ACL(aclmdlRIBindStream(m, ls, 5), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_DEFAULT),
             ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_OK(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_HEAD));
  ASSERT_ACL(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_HEAD),
             ACL_ERROR_RT_STREAM_MODEL); /* bound already */
  ASSERT_ACL(aclmdlRIEndTask(m, plain), ACL_ERROR_RT_STREAM_MODEL);
  v = 3;
  ASSERT_OK(aclrtLaunchHostFunc(ls, times2, &v));
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &v));
  ASSERT_ACL(aclmdlRIBuildEnd(m, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRIExecuteAsync(m, exe), ACL_ERROR_RT_MODEL_CAPTURED);
  ASSERT_OK(aclmdlRIEndTask(m, ls));
  ASSERT_ACL(aclmdlRIBuildEnd(m, &v), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclmdlRIBuildEnd(m, NULL));
  ASSERT_EQ(v, 3); /* tasks on a bound stream are the model's */
  ASSERT_OK(aclmdlRIExecute(m, 10000));
  ASSERT_EQ(v, 7);
  ASSERT_OK(aclmdlRIExecuteAsync(m, exe));
  ASSERT_OK(aclrtSynchronizeStream(exe));
  ASSERT_EQ(v, 15);
  ASSERT_ACL(aclmdlRIExecute(m, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclmdlRIUnbindStream(m, ls));
  ASSERT_ACL(aclmdlRIUnbindStream(m, ls), ACL_ERROR_RT_STREAM_MODEL);
  ASSERT_OK(aclmdlRIDestroy(m));
  /* unbound, the stream runs its tasks again */
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &v));
  ASSERT_OK(aclrtSynchronizeStream(ls));
  ASSERT_EQ(v, 16);
  aclrtDestroyStream(ls);
  aclrtDestroyStream(plain);
  aclrtDestroyStream(exe);
}

TEST(labels_switch_by_index) {
  aclrtStream ls = persistent(), exe = mk();
  static uint32_t index;
  static int a, b;
  aclrtLabel l[2];
  aclrtLabelList list;
  aclmdlRI m;
  ASSERT_OK(aclmdlRIBuildBegin(&m, 0));
  ASSERT_OK(aclrtCreateLabel(&l[0]));
  ASSERT_OK(aclrtCreateLabel(&l[1]));
  ASSERT_ACL(aclrtSetLabel(l[0], exe), ACL_ERROR_RT_STREAM_MODEL);
  ASSERT_ACL(aclrtCreateLabelList(l, 0, &list), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtCreateLabelList(l, 2, &list));
  ASSERT_OK(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_HEAD));
  ASSERT_ACL(aclrtSwitchLabelByIndex(NULL, 2, list, ls),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSwitchLabelByIndex(&index, 2, list, ls));
  ASSERT_OK(aclrtSetLabel(l[0], ls));
  ASSERT_ACL(aclrtSetLabel(l[0], ls), ACL_ERROR_RT_INTERNAL_ERROR); /* once */
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &a));
  ASSERT_OK(aclrtSetLabel(l[1], ls));
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &b));
  ASSERT_OK(aclmdlRIEndTask(m, ls));
  ASSERT_OK(aclmdlRIBuildEnd(m, NULL));
  const uint32_t idx[3] = {0, 1, 9};
  const int want_a[3] = {1, 1, 1}, want_b[3] = {1, 2, 3};
  for (int k = 0; k < 3; k++) {
    index = idx[k]; /* device memory, read when the model runs */
    ASSERT_OK(aclmdlRIExecuteAsync(m, exe));
    ASSERT_OK(aclrtSynchronizeStream(exe));
    ASSERT_EQ(a, want_a[k]);
    ASSERT_EQ(b, want_b[k]);
  }
  ASSERT_OK(aclmdlRIUnbindStream(m, ls));
  ASSERT_OK(aclmdlRIDestroy(m));
  ASSERT_OK(aclrtDestroyLabelList(list));
  ASSERT_ACL(aclrtDestroyLabelList(list), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_OK(aclrtDestroyLabel(l[0]));
  ASSERT_OK(aclrtDestroyLabel(l[1]));
  ASSERT_ACL(aclrtDestroyLabel(l[1]), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtCreateLabelList(l, 1, &list), ACL_ERROR_RT_INVALID_HANDLE);
  aclrtDestroyStream(ls);
  aclrtDestroyStream(exe);
}

TEST(destroy_of_a_model_being_captured_or_built) {
  aclrtStream s = mk(), ls = persistent();
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  aclmdlRI m = NULL;
  ASSERT_OK(aclmdlRICaptureGetInfo(s, NULL, &m));
  ASSERT_ACL(aclmdlRIDestroy(m), ACL_ERROR_RT_MODEL_CAPTURED);
  ASSERT_OK(aclmdlRICaptureEnd(s, &m));
  ASSERT_OK(aclmdlRIDestroy(m));
  /* a model destroyed mid-build lets its bound stream go */
  ASSERT_OK(aclmdlRIBuildBegin(&m, 0));
  ASSERT_OK(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_HEAD));
  ASSERT_EQ(status_of(ls), ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  ASSERT_OK(aclmdlRIDestroy(m));
  ASSERT_EQ(status_of(ls), ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  aclrtDestroyStream(s);
  aclrtDestroyStream(ls);
}
