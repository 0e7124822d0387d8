/* Wrong arguments get the documented ACL codes, and aclGetRecentErrMsg says
 * what was wrong (gets and clears). */
#include "acl_test.h"

TEST(null_out_pointers) {
  aclrtEvent e;
  ASSERT_OK(aclrtCreateEvent(&e));
  (void)aclGetRecentErrMsg();
  ASSERT_ACL(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtCreateEventWithFlag(NULL, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtCreateEventExWithFlag(NULL, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtQueryEventStatus(e, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtQueryEventWaitStatus(e, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtStreamQuery(NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetEventAvailNum(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtRecordEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  const char *m = aclGetRecentErrMsg();
  ASSERT(m != NULL);
  ASSERT(strstr(m, "aclrtMalloc") != NULL);        /* newest first */
  ASSERT(strstr(m, "aclrtCreateEvent") != NULL);   /* older ones kept */
  ASSERT(aclGetRecentErrMsg() == NULL);            /* cleared */
  ASSERT_OK(aclrtDestroyEvent(e));
}

TEST(destroyed_handles) {
  aclrtEvent e;
  aclrtStream s;
  ASSERT_OK(aclrtCreateEvent(&e));
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(s));
  aclrtEventRecordedStatus st;
  ASSERT_ACL(aclrtRecordEvent(e, NULL), ACL_ERROR_RT_INVALID_HANDLE);
  const char *m = aclGetRecentErrMsg();
  ASSERT(m && strstr(m, "aclrtRecordEvent"));
  ASSERT_ACL(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtDestroyEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtSynchronizeEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  aclrtEvent e2;
  ASSERT_OK(aclrtCreateEvent(&e2));
  ASSERT_ACL(aclrtRecordEvent(e2, s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtRecordEvent((aclrtEvent)(uintptr_t)0x1234, NULL),
             ACL_ERROR_RT_INVALID_HANDLE); /* forged */
  ASSERT_OK(aclrtDestroyEvent(e2));
  (void)aclGetRecentErrMsg();
}

TEST(last_error_get_and_peek) {
  (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
  ASSERT_EQ(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
  ASSERT_ACL(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
  (void)aclGetRecentErrMsg();
}

static void *no_context_thread(void *p) {
  aclError *r = p;
  aclrtEvent e;
  aclrtStream s;
  int32_t d;
  r[0] = aclrtCreateEvent(&e);
  r[1] = aclrtCreateStream(&s);
  r[2] = aclrtGetDevice(&d);
  const char *m = aclGetRecentErrMsg();
  r[3] = m && strstr(m, "aclrtSetDevice") ? 0 : 1;
  return NULL;
}

TEST(no_current_context) {
  aclError r[4] = {-1, -1, -1, -1};
  pthread_t t;
  pthread_create(&t, NULL, no_context_thread, r);
  pthread_join(t, NULL);
  ASSERT_EQ(r[0], ACL_ERROR_RT_CONTEXT_NULL);
  ASSERT_EQ(r[1], ACL_ERROR_RT_CONTEXT_NULL);
  ASSERT_EQ(r[2], ACL_ERROR_RT_CONTEXT_NULL);
  ASSERT_EQ(r[3], 0);
}

/* Needs EVRT_CPU_DEVICES=2 (set by CTest). */
TEST(event_of_another_device) {
  uint32_t n = 0;
  ASSERT_OK(aclrtGetDeviceCount(&n));
  if (n < 2) {
    printf("  (skipped: needs EVRT_CPU_DEVICES=2)\n");
    return;
  }
  ASSERT_ACL(aclrtSetDevice((int32_t)n), ACL_ERROR_RT_INVALID_DEVICEID);
  aclrtEvent e;
  ASSERT_OK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC)); /* device 0 */
  aclrtContext c1;
  ASSERT_OK(aclrtCreateContext(&c1, 1));
  aclrtStream s1;
  ASSERT_OK(aclrtCreateStream(&s1)); /* device 1 */
  ASSERT_ACL(aclrtRecordEvent(e, s1), ACL_ERROR_RT_PARAM_INVALID);
  const char *m = aclGetRecentErrMsg();
  ASSERT(m && strstr(m, "device"));
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtDestroyContext(c1));
  ASSERT_ACL(aclrtSetCurrentContext(c1), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_OK(aclrtSetDevice(0));
  ASSERT_OK(aclrtResetDevice(0));
  ASSERT_OK(aclrtRecordEvent(e, NULL));
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(aclrtDestroyEvent(e));
}

TEST(bad_values) {
  void *p = NULL;
  ASSERT_ACL(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMalloc(&p, 64, (aclrtMemMallocPolicy)99), ACL_ERROR_INVALID_PARAM);
  int x = 0, y = 0;
  ASSERT_ACL(aclrtFree(&x), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemcpy(&x, 2, &y, 4, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(&x, 4, &y, 4, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpyAsync(&x, 4, &y, 4, ACL_MEMCPY_HOST_TO_HOST, NULL),
             ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtSetStreamFailureMode(NULL, 7), ACL_ERROR_INVALID_PARAM);
  aclrtEvent e;
  ASSERT_OK(aclrtCreateEvent(&e));
  ASSERT_OK(aclrtRecordEvent(e, NULL));
  ASSERT_ACL(aclrtRecordEventWithFlag(e, NULL, 9), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtStreamWaitEventWithFlag(NULL, e, 0, 9), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(aclrtDestroyEvent(e));
  (void)aclGetRecentErrMsg();
}
