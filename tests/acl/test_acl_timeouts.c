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
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w));
}

/* Issue 13 item 14: CANN's quantization (aclrtGetOpTimeOutInterval's doc)
 * as CANN's own bounded cross-stream sample checks it: effective timeout =
 * interval * N, N in [1, 254], requests rounded up, read back in ms.  Was:
 * a 1 us interval and requests kept as asked (1 s read back as 1000 ms,
 * where 254 intervals of 1 us are 254 us). */
static uint64_t align_us(uint64_t req, uint64_t interval) {
  uint64_t n = req / interval + (req % interval != 0);
  if (n > 254)
    n = 254;
  if (n < 1)
    n = 1;
  return n * interval;
}

TEST(op_execute_timeouts_follow_the_interval_quantization) {
  uint64_t interval = 0, actual = 0;
  uint32_t ms = 0;
  ASSERT_OK(aclrtGetOpTimeOutInterval(&interval));
  /* a realistic interval: 254 of them are the documented default, 1091 s */
  ASSERT(interval >= 100000);
  ASSERT_EQ(interval * 254 / 1000000, 1090);
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms));
  ASSERT_EQ(ms, (interval * 254 + 999) / 1000); /* default: the maximum */
  ASSERT_OK(aclrtSetOpExecuteTimeOut(1));
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms));
  ASSERT_EQ(ms, align_us(1000000, interval) / 1000);
  ASSERT_OK(aclrtSetOpExecuteTimeOutV2(interval + 1, &actual));
  ASSERT_EQ(actual, 2 * interval);
  ASSERT_OK(aclrtSetOpExecuteTimeOutV2(50, &actual));
  ASSERT_EQ(actual, interval); /* rounded up to one interval */
  ASSERT_OK(aclrtSetOpExecuteTimeOutV2(interval * 300, &actual));
  ASSERT_EQ(actual, interval * 254); /* capped */
  ASSERT_OK(aclrtSetOpExecuteTimeOutV2(0, &actual));
  ASSERT_EQ(actual, interval * 254); /* 0: the maximum */
  ASSERT_OK(aclrtSetOpExecuteTimeOutWithMs(2500));
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms));
  ASSERT_EQ(ms, align_us(2500000, interval) / 1000);
  ASSERT_OK(aclrtSetOpExecuteTimeOut(3));
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms));
  ASSERT_EQ(ms, align_us(3000000, interval) / 1000);
  ASSERT_ACL(aclrtSetOpExecuteTimeOutV2(5, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtGetOpExecuteTimeout(&ms)); /* unchanged by the bad call */
  ASSERT_EQ(ms, align_us(3000000, interval) / 1000);
  ASSERT_ACL(aclrtGetOpTimeOutInterval(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetOpExecuteTimeout(NULL), ACL_ERROR_INVALID_PARAM);
}
