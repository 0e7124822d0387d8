/* The event behaviours the ACL documentation states, one TEST each. */
#include "acl_test.h"

static aclrtEventRecordedStatus rstatus(aclrtEvent e) {
  aclrtEventRecordedStatus s = (aclrtEventRecordedStatus)-1;
  aclrtQueryEventStatus(e, &s);
  return s;
}

/* aclrtRecordEvent is asynchronous and captures the tasks delivered to the
 * stream so far; later tasks are not part of it. */
TEST(record_is_async_and_captures_earlier_tasks) {
  aclrtStream s;
  aclrtEvent e;
  gate_t before, after;
  gate_init(&before);
  gate_init(&after);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEvent(&e));
  ASSERT_OK(gate_on(s, &before));
  ASSERT_OK(aclrtRecordEvent(e, s)); /* returns with the stream blocked */
  ASSERT_OK(gate_on(s, &after));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY);
  gate_open(&before);
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_EQ(atomic_load(&after.passed), 0); /* later task still blocked */
  aclrtStreamStatus ss;
  ASSERT_OK(aclrtStreamQuery(s, &ss));
  ASSERT_EQ(ss, ACL_STREAM_STATUS_NOT_READY);
  gate_open(&after);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtStreamQuery(s, &ss));
  ASSERT_EQ(ss, ACL_STREAM_STATUS_COMPLETE);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(s));
}

/* The default stream is NULL. */
TEST(record_on_default_stream_null) {
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(gate_on(NULL, &g));
  ASSERT_OK(aclrtRecordEvent(e, NULL));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_OK(aclrtDestroyEvent(e));
}

/* ExWithFlag events: each record overwrites the capture; a stream wait uses
 * the latest record at its call and is not affected by later records. */
TEST(exevent_rerecord_and_wait_binds_at_call) {
  aclrtStream s1, s2, s3;
  aclrtEvent e;
  gate_t a, b;
  gate_init(&a);
  gate_init(&b);
  ASSERT_OK(aclrtCreateStream(&s1));
  ASSERT_OK(aclrtCreateStream(&s2));
  ASSERT_OK(aclrtCreateStream(&s3));
  ASSERT_OK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(gate_on(s1, &a));
  ASSERT_OK(aclrtRecordEvent(e, s1));     /* record 1: behind gate a */
  ASSERT_OK(aclrtStreamWaitEvent(s2, e)); /* s2 waits for record 1 */
  ASSERT_OK(gate_on(s3, &b));
  ASSERT_OK(aclrtRecordEvent(e, s3));     /* record 2: behind gate b */
  gate_open(&a);
  /* s2 finishes although the latest record (2) is still pending */
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s2, 10000));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY); /* sees record 2 */
  gate_open(&b);
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
  /* recording again re-captures: the event is pending once more */
  gate_t c;
  gate_init(&c);
  ASSERT_OK(gate_on(s1, &c));
  ASSERT_OK(aclrtRecordEvent(e, s1));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY);
  gate_open(&c);
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtDestroyStream(s2));
  ASSERT_OK(aclrtDestroyStream(s3));
}

/* Before the first record: ExWithFlag -> COMPLETE; legacy -> NOT_READY (the
 * official sample 0_event_status prints 0).  Deprecated aclrtQueryEvent on a
 * never-recorded legacy event says COMPLETE; synchronize returns at once. */
TEST(status_before_first_record) {
  aclrtEvent ex, legacy, sync;
  ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtCreateEvent(&legacy));
  ASSERT_OK(aclrtCreateEventWithFlag(&sync, ACL_EVENT_SYNC));
  ASSERT_EQ(rstatus(ex), ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_EQ(rstatus(legacy), ACL_EVENT_RECORDED_STATUS_NOT_READY);
  ASSERT_EQ(rstatus(sync), ACL_EVENT_RECORDED_STATUS_NOT_READY);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
  ASSERT_OK(aclrtQueryEvent(legacy, &st));
  ASSERT_EQ(st, ACL_EVENT_STATUS_COMPLETE);
  ASSERT_ACL(aclrtQueryEvent(ex, &st), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
#pragma GCC diagnostic pop
  ASSERT_OK(aclrtSynchronizeEvent(ex));
  ASSERT_OK(aclrtSynchronizeEvent(legacy));
  ASSERT_OK(aclrtDestroyEvent(ex));
  ASSERT_OK(aclrtDestroyEvent(legacy));
  ASSERT_OK(aclrtDestroyEvent(sync));
}

struct rec_arg {
  aclrtEvent e;
  aclrtStream s;
  aclError r;
};
static void *record_thread(void *p) {
  struct rec_arg *a = p;
  aclrtContext ctx;
  a->r = aclrtSetDevice(0);
  (void)ctx;
  if (!a->r)
    a->r = aclrtRecordEvent(a->e, a->s);
  aclrtResetDevice(0);
  return NULL;
}

/* aclrtQueryEvent only sees records made by the calling thread;
 * aclrtQueryEventStatus sees records from any thread. */
TEST(query_event_same_thread_only) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  aclrtStream s;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEvent(&e));
  ASSERT_OK(gate_on(s, &g));
  struct rec_arg a = {e, s, -1};
  pthread_t t;
  pthread_create(&t, NULL, record_thread, &a);
  pthread_join(t, NULL);
  ASSERT_OK(a.r);
  aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
  ASSERT_OK(aclrtQueryEvent(e, &st));
  ASSERT_EQ(st, ACL_EVENT_STATUS_COMPLETE); /* not this thread's record */
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY); /* any thread */
  /* the same thread's record is seen */
  ASSERT_OK(aclrtRecordEvent(e, s));
  ASSERT_OK(aclrtQueryEvent(e, &st));
  ASSERT_EQ(st, ACL_EVENT_STATUS_NOT_READY);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(aclrtQueryEvent(e, &st));
  ASSERT_EQ(st, ACL_EVENT_STATUS_COMPLETE);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(s));
#pragma GCC diagnostic pop
}

/* aclrtQueryEventWaitStatus is complete only when every stream that waits on
 * the event has received it. */
TEST(wait_status_needs_every_waiter) {
  aclrtStream prod, w1, w2;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&prod));
  ASSERT_OK(aclrtCreateStream(&w1));
  ASSERT_OK(aclrtCreateStream(&w2));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  aclrtEventWaitStatus ws = ACL_EVENT_WAIT_STATUS_RESERVED;
  ASSERT_OK(aclrtQueryEventWaitStatus(e, &ws));
  ASSERT_EQ(ws, ACL_EVENT_WAIT_STATUS_COMPLETE); /* nobody waits yet */
  ASSERT_OK(aclrtRecordEvent(e, prod));
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(aclrtStreamWaitEvent(w1, e));
  ASSERT_OK(gate_on(w2, &g)); /* w2 cannot reach its wait yet */
  ASSERT_OK(aclrtStreamWaitEvent(w2, e));
  ASSERT_OK(aclrtSynchronizeStream(w1));
  ASSERT_OK(aclrtQueryEventWaitStatus(e, &ws));
  ASSERT_EQ(ws, ACL_EVENT_WAIT_STATUS_NOT_READY); /* w2 has not received it */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(w2));
  ASSERT_OK(aclrtQueryEventWaitStatus(e, &ws));
  ASSERT_EQ(ws, ACL_EVENT_WAIT_STATUS_COMPLETE);
  aclrtEvent ex;
  ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
  ASSERT_ACL(aclrtQueryEventWaitStatus(ex, &ws), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_OK(aclrtDestroyEvent(ex));
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w1));
  ASSERT_OK(aclrtDestroyStream(w2));
}

/* Waits before the first record: legacy SYNC waits for a future record,
 * legacy default is an error (107000), ExWithFlag is a no-op. */
TEST(wait_before_record_per_kind) {
  aclrtStream prod, w;
  aclrtEvent sync, dflt, ex;
  ASSERT_OK(aclrtCreateStream(&prod));
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtCreateEventWithFlag(&sync, ACL_EVENT_SYNC));
  ASSERT_OK(aclrtCreateEvent(&dflt));
  ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
  ASSERT_ACL(aclrtStreamWaitEvent(w, dflt), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtStreamWaitEvent(w, ex));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000)); /* no-op wait */
  ASSERT_OK(aclrtStreamWaitEvent(w, sync));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(w, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT); /* waits for a record */
  ASSERT_OK(aclrtRecordEvent(sync, prod));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  ASSERT_OK(aclrtDestroyEvent(sync));
  ASSERT_OK(aclrtDestroyEvent(dflt));
  ASSERT_OK(aclrtDestroyEvent(ex));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w));
}

/* aclrtResetEvent is an asynchronous stream task, valid only after a
 * record, and only for legacy events with a wait task. */
TEST(reset_is_async_stream_task) {
  aclrtStream s;
  aclrtEvent e, ex, tl;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_ACL(aclrtResetEvent(e, s), ACL_ERROR_RT_PARAM_INVALID); /* no record */
  ASSERT_OK(aclrtRecordEvent(e, s));
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtResetEvent(e, s));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_COMPLETE); /* not run yet */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY); /* reset ran */
  ASSERT_OK(aclrtCreateEventExWithFlag(&ex, ACL_EVENT_SYNC));
  ASSERT_OK(aclrtRecordEvent(ex, s));
  ASSERT_ACL(aclrtResetEvent(ex, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_OK(aclrtCreateEventWithFlag(&tl, ACL_EVENT_TIME_LINE));
  ASSERT_OK(aclrtRecordEvent(tl, s));
  ASSERT_ACL(aclrtResetEvent(tl, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtStreamWaitEvent(s, tl), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyEvent(ex));
  ASSERT_OK(aclrtDestroyEvent(tl));
  ASSERT_OK(aclrtDestroyStream(s));
}

/* A legacy SYNC event is a flag its wait task reads when it runs (the
 * reference, section 5; CANN's aclrtResetEvent and aclrtStreamWaitEvent
 * pages): a wait enqueued behind a reset of the event on the same stream,
 * while the reset is still queued, runs after it and waits for the next
 * record (it bound to the earlier, completed record and passed before); a
 * wait enqueued before the reset passes on the record it found. */
TEST(wait_after_queued_reset_waits_for_next_record) {
  aclrtStream prod, w;
  aclrtEvent e;
  gate_t g1, g2;
  gate_init(&g1);
  gate_init(&g2);
  ASSERT_OK(aclrtCreateStream(&prod));
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(aclrtRecordEvent(e, prod));
  ASSERT_OK(aclrtSynchronizeEvent(e));
  /* reset, then wait: the wait needs the next record */
  ASSERT_OK(gate_on(w, &g1));
  ASSERT_OK(aclrtResetEvent(e, w));
  ASSERT_OK(aclrtStreamWaitEvent(w, e));
  gate_open(&g1);
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(w, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtRecordEvent(e, prod));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  /* wait, then reset: the wait passes on the completed record */
  ASSERT_OK(aclrtSynchronizeEvent(e));
  ASSERT_OK(gate_on(w, &g2));
  ASSERT_OK(aclrtStreamWaitEvent(w, e));
  ASSERT_OK(aclrtResetEvent(e, w));
  gate_open(&g2);
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 10000));
  ASSERT_EQ(rstatus(e), ACL_EVENT_RECORDED_STATUS_NOT_READY); /* reset ran */
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtDestroyStream(prod));
  ASSERT_OK(aclrtDestroyStream(w));
}

/* Flag validity (reference section 2.1). */
TEST(creation_flag_rules) {
  aclrtEvent e;
  ASSERT_ACL(aclrtCreateEventWithFlag(&e, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventExWithFlag(&e, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventWithFlag(&e, ACL_EVENT_IPC), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC | ACL_EVENT_SYNC),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventExWithFlag(&e, ACL_EVENT_EXTERNAL),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventExWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventWithFlag(&e, ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCreateEventWithFlag(&e, 0x80), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY));
  ASSERT_ACL(aclrtRecordEvent(e, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE |
                                             ACL_EVENT_CAPTURE_STREAM_PROGRESS));
  ASSERT_OK(aclrtDestroyEvent(e));
}

/* Elapsed time and timestamps. */
TEST(elapsed_time_and_timestamp) {
  aclrtStream s;
  aclrtEvent a, b;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtCreateEvent(&a));
  ASSERT_OK(aclrtCreateEventWithFlag(&b, ACL_EVENT_TIME_LINE));
  float ms = -1;
  ASSERT_ACL(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_INTERNAL_ERROR);
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtRecordEvent(a, s));
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtRecordEvent(b, s));
  ASSERT_ACL(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  sleep_ms(20);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtEventElapsedTime(&ms, a, b));
  ASSERT(ms >= 15.0f && ms < 10000.0f);
  uint64_t ta = 0, tb = 0;
  ASSERT_OK(aclrtEventGetTimestamp(a, &ta));
  ASSERT_OK(aclrtEventGetTimestamp(b, &tb));
  ASSERT(tb > ta && tb - ta >= 15000); /* microseconds */
  ASSERT_ACL(aclrtEventElapsedTime(NULL, a, b), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyEvent(a));
  ASSERT_OK(aclrtDestroyEvent(b));
  ASSERT_OK(aclrtDestroyStream(s));
}

/* Destroying a pending event does not block and does not break waiters. */
TEST(destroy_pending_event) {
  aclrtStream s1, s2;
  aclrtEvent e;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s1));
  ASSERT_OK(aclrtCreateStream(&s2));
  ASSERT_OK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(gate_on(s1, &g));
  ASSERT_OK(aclrtRecordEvent(e, s1));
  ASSERT_OK(aclrtStreamWaitEvent(s2, e));
  ASSERT_OK(aclrtDestroyEvent(e));
  aclrtEventRecordedStatus st;
  ASSERT_ACL(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_INVALID_HANDLE);
  aclrtStreamStatus ss;
  ASSERT_OK(aclrtStreamQuery(s2, &ss));
  ASSERT_EQ(ss, ACL_STREAM_STATUS_NOT_READY);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s2));
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtDestroyStream(s2));
}
