/* Synchronize-with-timeout calls: the documented timeout codes, -1 waits
 * forever, 0 and < -1 are rejected; wait timeouts are in seconds and
 * surface at the next synchronize. */
#include "acl_test.h"

static void *open_later(void *g) {
  sleep_ms(100);
  gate_open(g);
  return NULL;
}

TEST(event_sync_timeout) {
  aclrtStream s;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEvent(&e));
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtRecordEvent(e, s));
  uint64_t t0 = now_ns();
  ASSERT_ACL(aclrtSynchronizeEventWithTimeout(e, 50), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
  ASSERT(now_ns() - t0 >= 45000000u);
  ASSERT_ACL(aclrtSynchronizeEventWithTimeout(e, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSynchronizeEventWithTimeout(e, -2), ACL_ERROR_RT_PARAM_INVALID);
  pthread_t t;
  pthread_create(&t, NULL, open_later, &g);
  ASSERT_OK(aclrtSynchronizeEventWithTimeout(e, -1));
  ASSERT_EQ(atomic_load(&g.passed), 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(stream_sync_timeout) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(gate_on(s, &g));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, -5), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSynchronizeDeviceWithTimeout(50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  pthread_t t;
  pthread_create(&t, NULL, open_later, &g);
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, -1));
  pthread_join(t, NULL);
  ASSERT_OK(aclrtSynchronizeDeviceWithTimeout(1000));
  ASSERT_OK(aclrtDestroyStream(s));
}

/* aclrtStreamWaitEventWithTimeout counts seconds; a timed-out wait lets the
 * stream go on and the next synchronize reports it. */
TEST(stream_wait_timeout_seconds) {
  aclrtStream prod, w;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&prod));
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(gate_on(prod, &g));
  ASSERT_OK(aclrtRecordEvent(e, prod));
  ASSERT_ACL(aclrtStreamWaitEventWithTimeout(w, e, -1), ACL_ERROR_RT_PARAM_INVALID);
  uint64_t t0 = now_ns();
  ASSERT_OK(aclrtStreamWaitEventWithTimeout(w, e, 1));
  /* still waiting well before a second has passed */
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(w, 300), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_ACL(aclrtSynchronizeStream(w), ACL_ERROR_RT_WAIT_TIMEOUT);
  uint64_t dt = now_ns() - t0;
  ASSERT(dt >= 900000000u);
  ASSERT_OK(aclrtSynchronizeStream(w)); /* reported once */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(prod));
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w));
}

TEST(op_wait_timeout_applies_to_stream_wait) {
  aclrtStream prod, w;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&prod));
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(gate_on(prod, &g));
  ASSERT_OK(aclrtRecordEvent(e, prod));
  ASSERT_OK(aclrtSetOpWaitTimeout(1));
  ASSERT_OK(aclrtStreamWaitEvent(w, e));
  ASSERT_OK(aclrtSetOpWaitTimeout(0));
  ASSERT_ACL(aclrtSynchronizeStream(w), ACL_ERROR_RT_WAIT_TIMEOUT);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(prod));
  uint32_t ms = 0;
  ASSERT_OK(aclrtSetOpExecuteTimeOut(3));
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms));
  ASSERT_EQ(ms, 3000);
  uint64_t actual = 0, interval = 0;
  ASSERT_OK(aclrtSetOpExecuteTimeOutV2(2500000, &actual));
  ASSERT_EQ(actual, 2500000);
  ASSERT_OK(aclrtGetOpTimeOutInterval(&interval));
  ASSERT(interval > 0);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w));
}
