/* aclrtLaunchCallback + aclrtSubscribeReport + aclrtProcessReport, and
 * aclrtLaunchHostFunc. */
#include "acl_test.h"

static atomic_int stop_flag;
static atomic_int ran;
static atomic_ulong ran_on;

static void *report_loop(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_flag))
    aclrtProcessReport(20);
  return NULL;
}

static void cb(void *ud) {
  atomic_fetch_add(&ran, *(int *)ud);
  atomic_store(&ran_on, (unsigned long)pthread_self());
}

static gate_t cb_gate;
static void blocking_cb(void *ud) {
  (void)ud;
  gate_pass(&cb_gate);
}

static void host_fn(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

TEST(callback_runs_on_subscribed_thread) {
  aclrtStream s;
  pthread_t t;
  atomic_store(&stop_flag, 0);
  atomic_store(&ran, 0);
  ASSERT_OK(aclrtCreateStream(&s));
  int one = 1;
  ASSERT_ACL(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s),
             ACL_ERROR_RT_STREAM_NO_CB_REG);
  pthread_create(&t, NULL, report_loop, NULL);
  ASSERT_OK(aclrtSubscribeReport((uint64_t)t, s));
  ASSERT_ACL(aclrtSubscribeReport((uint64_t)t, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
  ASSERT_ACL(aclrtLaunchCallback(cb, &one, (aclrtCallbackBlockType)5, s),
             ACL_ERROR_INVALID_PARAM);
  for (int i = 0; i < 10; i++)
    ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&ran), 10); /* BLOCK: done when the stream is */
  ASSERT_EQ(atomic_load(&ran_on), (unsigned long)t);
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_NO_BLOCK, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  for (int i = 0; i < 2000 && atomic_load(&ran) < 11; i++)
    sleep_ms(1);
  ASSERT_EQ(atomic_load(&ran), 11);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, s));
  ASSERT_ACL(aclrtUnSubscribeReport((uint64_t)t, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(block_callback_blocks_later_tasks) {
  aclrtStream s;
  pthread_t t;
  atomic_store(&stop_flag, 0);
  gate_init(&cb_gate);
  ASSERT_OK(aclrtCreateStream(&s));
  pthread_create(&t, NULL, report_loop, NULL);
  ASSERT_OK(aclrtSubscribeReport((uint64_t)t, s));
  atomic_int after = 0;
  ASSERT_OK(aclrtLaunchCallback(blocking_cb, NULL, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &after));
  sleep_ms(50);
  ASSERT_EQ(atomic_load(&after), 0);
  gate_open(&cb_gate);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&after), 1);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, s));
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(process_report_errors) {
  ASSERT_ACL(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtSubscribeReport((uint64_t)pthread_self(), s));
  ASSERT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT);
  int one = 1;
  atomic_store(&ran, 0);
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_NO_BLOCK, s));
  ASSERT_OK(aclrtProcessReport(5000));
  ASSERT_EQ(atomic_load(&ran), 1);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)pthread_self(), s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(launch_host_func_in_order) {
  aclrtStream s;
  atomic_int n = 0;
  ASSERT_OK(aclrtCreateStream(&s));
  for (int i = 0; i < 100; i++)
    ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &n));
  ASSERT_ACL(aclrtLaunchHostFunc(s, NULL, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&n), 100);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}
