/* Model task introspection (aclmdlRIGetStreams, aclmdlRIGetTasksByStream,
 * aclmdlRITaskGetType, aclmdlRITaskGetSeqId): the two-call protocol of
 * CANN's API reference, the streams and tasks of captured and built models,
 * and bad input (docs/acl.md).  CANN's model_ri/5_reusable_buffer_reset
 * lists a captured reset this way before it executes the model. */
#include "acl_test.h"

static void add1(void *p) { (*(int *)p)++; }

static aclrtStream mk(void) {
  aclrtStream s = NULL;
  if (aclrtCreateStream(&s) != ACL_SUCCESS)
    abort();
  return s;
}

/* The model's streams through the two calls. */
static uint32_t streams_of(aclmdlRI m, aclrtStream *out, uint32_t cap) {
  uint32_t n = 12345;
  if (aclmdlRIGetStreams(m, NULL, &n) != ACL_SUCCESS || n > cap)
    return UINT32_MAX;
  uint32_t listed = cap;
  if (aclmdlRIGetStreams(m, out, &listed) != ACL_SUCCESS || listed != n)
    return UINT32_MAX;
  return n;
}

TEST(a_captured_reset_lists_one_stream_with_its_task_then_executes) {
  aclrtStream s = mk();
  void *buf = NULL;
  ASSERT_OK(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtMemsetAsync(buf, 4096, 0xA5, 4096, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  aclmdlRI m = NULL;
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(aclrtMemsetAsync(buf, 4096, 0, 4096, s));
  ASSERT_OK(aclmdlRICaptureEnd(s, &m));

  aclrtStream ms[4] = {0};
  ASSERT_EQ(streams_of(m, ms, 4), 1);
  ASSERT(ms[0] != NULL && ms[0] != s); /* the model's own stream */
  uint32_t nt = 777;
  ASSERT_OK(aclmdlRIGetTasksByStream(ms[0], NULL, &nt));
  ASSERT_EQ(nt, 1);
  aclmdlRITask t[2] = {0};
  uint32_t listed = 2;
  ASSERT_OK(aclmdlRIGetTasksByStream(ms[0], t, &listed));
  ASSERT_EQ(listed, 1);
  ASSERT(t[0] != NULL && t[1] == NULL);
  aclmdlRITaskType type = (aclmdlRITaskType)-1;
  uint32_t seq = 99;
  ASSERT_OK(aclmdlRITaskGetType(t[0], &type));
  ASSERT_EQ(type, ACL_MODEL_RI_TASK_DEFAULT); /* a fill: not a kernel */
  ASSERT_OK(aclmdlRITaskGetSeqId(t[0], &seq));
  ASSERT_EQ(seq, 0);
  /* the listing changes nothing: the model still executes */
  ASSERT_OK(aclmdlRIExecuteAsync(m, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  unsigned char host[4096];
  ASSERT_OK(aclrtMemcpy(host, sizeof host, buf, 4096,
                        ACL_MEMCPY_DEVICE_TO_HOST));
  for (int i = 0; i < 4096; i++)
    ASSERT_EQ(host[i], 0);
  /* the same handles on a second listing */
  aclrtStream again[1] = {0};
  ASSERT_EQ(streams_of(m, again, 1), 1);
  ASSERT(again[0] == ms[0]);
  ASSERT_OK(aclmdlRIDestroy(m));
  /* gone with the model */
  ASSERT_ACL(aclmdlRIGetTasksByStream(ms[0], NULL, &nt),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRITaskGetType(t[0], &type), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtFree(buf));
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(a_fork_gives_a_stream_per_captured_stream_tasks_in_order) {
  aclrtStream s1 = mk(), s2 = mk();
  aclrtEvent e1, e2;
  ASSERT_OK(aclrtCreateEventExWithFlag(&e1, ACL_EVENT_SYNC));
  ASSERT_OK(aclrtCreateEventExWithFlag(&e2, ACL_EVENT_SYNC));
  static int a, b;
  aclmdlRI m = NULL;
  ASSERT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(aclrtLaunchHostFunc(s1, add1, &a));
  ASSERT_OK(aclrtRecordEvent(e1, s1));
  ASSERT_OK(aclrtStreamWaitEvent(s2, e1));
  ASSERT_OK(aclrtLaunchHostFunc(s2, add1, &b));
  ASSERT_OK(aclrtLaunchHostFunc(s2, add1, &b));
  ASSERT_OK(aclrtRecordEvent(e2, s2));
  ASSERT_OK(aclrtStreamWaitEvent(s1, e2));
  ASSERT_OK(aclrtLaunchHostFunc(s1, add1, &a));
  ASSERT_OK(aclmdlRICaptureEnd(s1, &m));

  aclrtStream ms[2];
  ASSERT_EQ(streams_of(m, ms, 2), 2);
  ASSERT(ms[0] != ms[1]);
  uint32_t want[2] = {2, 2}; /* s1: two host functions; s2: two */
  for (int k = 0; k < 2; k++) {
    aclmdlRITask t[8];
    uint32_t n = 8;
    ASSERT_OK(aclmdlRIGetTasksByStream(ms[k], t, &n));
    ASSERT_EQ(n, want[k]);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t seq = 99;
      aclmdlRITaskType type = (aclmdlRITaskType)-1;
      ASSERT_OK(aclmdlRITaskGetSeqId(t[i], &seq));
      ASSERT_EQ(seq, i);
      ASSERT_OK(aclmdlRITaskGetType(t[i], &type));
      ASSERT_EQ(type, ACL_MODEL_RI_TASK_DEFAULT);
    }
  }
  ASSERT_OK(aclmdlRIExecuteAsync(m, s1));
  ASSERT_OK(aclrtSynchronizeStream(s1));
  ASSERT_EQ(a, 2);
  ASSERT_EQ(b, 2);
  ASSERT_OK(aclmdlRIDestroy(m));
  aclrtDestroyEvent(e1);
  aclrtDestroyEvent(e2);
  aclrtDestroyStream(s1);
  aclrtDestroyStream(s2);
}

TEST(a_built_model_lists_its_bound_streams_tasks) {
  aclrtStream ls = NULL;
  ASSERT_OK(aclrtCreateStreamWithConfig(&ls, 0, ACL_STREAM_PERSISTENT));
  static int v;
  aclmdlRI m;
  ASSERT_OK(aclmdlRIBuildBegin(&m, 0));
  ASSERT_OK(aclmdlRIBindStream(m, ls, ACL_MODEL_STREAM_FLAG_HEAD));
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &v));
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &v));
  ASSERT_OK(aclrtLaunchHostFunc(ls, add1, &v));
  uint32_t n = 0;
  /* still being built: CANN's code for a model not ready */
  ASSERT_ACL(aclmdlRIGetStreams(m, NULL, &n), ACL_ERROR_RT_MODEL_CAPTURED);
  ASSERT_OK(aclmdlRIEndTask(m, ls));
  ASSERT_OK(aclmdlRIBuildEnd(m, NULL));
  aclrtStream ms[1];
  ASSERT_EQ(streams_of(m, ms, 1), 1);
  ASSERT_OK(aclmdlRIGetTasksByStream(ms[0], NULL, &n));
  ASSERT_EQ(n, 3);
  ASSERT_OK(aclmdlRIDestroy(m));
  aclrtDestroyStream(ls);
}

TEST(bad_input_gets_canns_codes_and_writes_nothing) {
  aclrtStream s = mk();
  static int v;
  aclmdlRI m = NULL;
  ASSERT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(aclrtLaunchHostFunc(s, add1, &v));
  ASSERT_OK(aclrtLaunchHostFunc(s, add1, &v));
  ASSERT_OK(aclmdlRICaptureEnd(s, &m));
  uint32_t n = 0;
  aclrtStream ms[2] = {NULL, NULL};
  ASSERT_ACL(aclmdlRIGetStreams(m, ms, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRIGetStreams(NULL, NULL, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRIGetStreams((aclmdlRI)&n, NULL, &n),
             ACL_ERROR_RT_INVALID_HANDLE);
  n = 0; /* an array too small for the model's one stream */
  ASSERT_ACL(aclmdlRIGetStreams(m, ms, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT(ms[0] == NULL && n == 0);
  n = 2;
  ASSERT_OK(aclmdlRIGetStreams(m, ms, &n));
  ASSERT_EQ(n, 1);
  ASSERT(ms[1] == NULL);
  aclmdlRITask t[2] = {NULL, NULL};
  n = 1; /* too small for its two tasks */
  ASSERT_ACL(aclmdlRIGetTasksByStream(ms[0], t, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT(t[0] == NULL && n == 1);
  ASSERT_ACL(aclmdlRIGetTasksByStream(NULL, t, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRIGetTasksByStream(ms[0], t, NULL),
             ACL_ERROR_INVALID_PARAM);
  /* an ordinary stream, a pointer into a model stream's record */
  ASSERT_ACL(aclmdlRIGetTasksByStream(s, t, &n), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRIGetTasksByStream((char *)ms[0] + 1, t, &n),
             ACL_ERROR_RT_PARAM_INVALID);
  n = 2;
  ASSERT_OK(aclmdlRIGetTasksByStream(ms[0], t, &n));
  ASSERT_EQ(n, 2);
  aclmdlRITaskType type;
  uint32_t seq;
  ASSERT_ACL(aclmdlRITaskGetType(t[0], NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRITaskGetSeqId(NULL, &seq), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclmdlRITaskGetSeqId((char *)t[1] + 1, &seq),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclmdlRITaskGetType((aclmdlRITask)&n, &type),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclmdlRITaskGetSeqId(t[1], &seq));
  ASSERT_EQ(seq, 1);
  /* a model stream is no stream for the other calls */
  ASSERT(aclrtSynchronizeStream(ms[0]) != ACL_SUCCESS);
  ASSERT_OK(aclmdlRIDestroy(m));
  aclrtDestroyStream(s);
}
