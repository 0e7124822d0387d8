/* DESIGN.md section 3, rules 1-7 and 9: one test (or more) per rule, each
 * provoking exactly the cause it is named for. */
#include "test.h"

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

#define MS 1000000ull

static evrt_stream_t mkstream(int dev) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, dev, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}
static evrt_event_t mkevent(unsigned flags) {
  evrt_event_t e = NULL;
  if (evrt_event_create(&e, flags) != EVRT_SUCCESS)
    abort();
  return e;
}
static void set_flag(void *p) { atomic_store((atomic_int *)p, 1); }
static void inc(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

TEST(rule1_rerecord_overwrites_latest_generation) {
  evrt_stream_t a = mkstream(0), b = mkstream(0);
  evrt_event_t e = mkevent(0);
  ASSERT_OK(evrt_stream_delay(a, 300 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_event_record(e, b)); /* b is idle: empty generation */
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_synchronize(e)); /* returns at once */
  ASSERT_ST(evrt_stream_query(a), EVRT_NOT_READY);
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.record_count, 2);
  ASSERT_EQ(info.state, EVRT_EVENT_STATE_COMPLETE);
  /* and a re-record onto pending work makes it pending again */
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_stream_query(a));
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
}

TEST(rule2_never_recorded_is_complete_and_empty) {
  evrt_stream_t s = mkstream(0);
  evrt_event_t e = mkevent(EVRT_EVENT_BLOCKING_SYNC);
  ASSERT_OK(evrt_event_query(e));
  uint64_t t0 = now_ns();
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT(now_ns() - t0 < 100 * MS);
  ASSERT_OK(evrt_stream_wait_event(s, e)); /* no-op */
  ASSERT_OK(evrt_stream_query(s));        /* nothing was enqueued */
  atomic_int ran = 0;
  ASSERT_OK(evrt_launch_host_func(s, set_flag, &ran));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT(atomic_load(&ran));
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.state, EVRT_EVENT_STATE_UNRECORDED);
  ASSERT_EQ(info.device, -1); /* lazy: no device until first record */
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

/* Wait binds to the generation of the call: a later record, a reset or a
 * destroy of the event do not release (or re-bind) the waiter. */
static void check_wait_keeps_generation(int what) {
  evrt_stream_t a = mkstream(0), b = mkstream(0), w = mkstream(0);
  evrt_event_t e = mkevent(0);
  atomic_int a_done = 0, w_ran = 0, order_ok = 0;
  ASSERT_OK(evrt_stream_delay(a, 200 * MS));
  ASSERT_OK(evrt_launch_host_func(a, set_flag, &a_done));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(w, e));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &w_ran));
  if (what == 0)
    ASSERT_OK(evrt_event_record(e, b)); /* complete generation now */
  else if (what == 1)
    ASSERT_OK(evrt_event_reset(e, b));
  else
    ASSERT_OK(evrt_event_destroy(e));
  sleep_ms(50);
  ASSERT(!atomic_load(&w_ran));
  ASSERT_ST(evrt_stream_query(w), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(w));
  order_ok = atomic_load(&a_done);
  ASSERT(atomic_load(&w_ran));
  ASSERT(order_ok); /* the waiter ran only after a's generation */
  if (what != 2)
    evrt_event_destroy(e);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
  evrt_stream_destroy(w);
}

TEST(rule3_rerecord_while_wait_pending_keeps_old_generation) {
  check_wait_keeps_generation(0);
}
TEST(rule3_reset_after_wait_keeps_old_generation) {
  check_wait_keeps_generation(1);
}
TEST(rule3_destroy_after_wait_keeps_old_generation) {
  check_wait_keeps_generation(2);
}

TEST(rule3_wait_binds_at_call_not_at_execution) {
  /* The waiting stream is busy when the wait is enqueued; the event is
   * re-recorded onto a long delay before the waiter reaches the wait. */
  evrt_stream_t a = mkstream(0), w = mkstream(0);
  evrt_event_t e = mkevent(0);
  atomic_int ran = 0;
  ASSERT_OK(evrt_event_record(e, a)); /* empty generation: complete */
  ASSERT_OK(evrt_stream_delay(w, 50 * MS));
  ASSERT_OK(evrt_stream_wait_event(w, e));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &ran));
  ASSERT_OK(evrt_stream_delay(a, 2000 * MS));
  ASSERT_OK(evrt_event_record(e, a)); /* must not affect w */
  ASSERT_OK(evrt_stream_synchronize_timeout(w, 1000 * MS));
  ASSERT(atomic_load(&ran));
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
  evrt_stream_destroy(w);
}

TEST(rule3_cross_device_wait_allowed_wrong_device_record_rejected) {
  evrt_stream_t d0 = mkstream(0), d1 = mkstream(1);
  evrt_event_t e = mkevent(0);
  atomic_int first = 0, second = 0;
  ASSERT_OK(evrt_stream_delay(d0, 100 * MS));
  ASSERT_OK(evrt_launch_host_func(d0, set_flag, &first));
  ASSERT_OK(evrt_event_record(e, d0));
  int dev = -2;
  ASSERT_OK(evrt_event_get_device(e, &dev));
  ASSERT_EQ(dev, 0);
  ASSERT_OK(evrt_stream_wait_event(d1, e)); /* across devices: fine */
  ASSERT_OK(evrt_launch_host_func(d1, set_flag, &second));
  /* recording on a stream of device 1 is an error and changes nothing */
  evrt_event_info_t before = {.struct_size = sizeof before}, after = before;
  ASSERT_OK(evrt_event_get_info(e, &before));
  ASSERT_ST(evrt_event_record(e, d1), EVRT_ERROR_DEVICE_MISMATCH);
  ASSERT(strstr(evrt_last_error_message(), "device 0") != NULL);
  ASSERT(strstr(evrt_last_error_message(), "device 1") != NULL);
  ASSERT_OK(evrt_event_get_info(e, &after));
  ASSERT_EQ(after.record_count, before.record_count);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY); /* still the d0 record */
  ASSERT_OK(evrt_stream_synchronize(d1));
  ASSERT(atomic_load(&first) && atomic_load(&second));
  evrt_event_destroy(e);
  evrt_stream_destroy(d0);
  evrt_stream_destroy(d1);
}

TEST(rule4_waiting_streams_do_not_hold_workers) {
  /* Far more waiting streams than workers; an unrelated stream must still
   * run while they all wait. */
  enum { W = 64 };
  evrt_stream_t gate = mkstream(0), free_s = mkstream(0), ws[W];
  evrt_event_t e = mkevent(0);
  atomic_int count = 0, free_ran = 0;
  /* The gate outlasts the free stream's timeout by a wide margin: a loaded
   * sanitizer run must not see it open before the check below. */
  ASSERT_OK(evrt_stream_delay(gate, 1500 * MS));
  ASSERT_OK(evrt_event_record(e, gate));
  for (int i = 0; i < W; i++) {
    ws[i] = mkstream(0);
    ASSERT_OK(evrt_stream_wait_event(ws[i], e));
    ASSERT_OK(evrt_launch_host_func(ws[i], inc, &count));
  }
  ASSERT_OK(evrt_launch_host_func(free_s, set_flag, &free_ran));
  ASSERT_OK(evrt_stream_synchronize_timeout(free_s, 1000 * MS));
  ASSERT(atomic_load(&free_ran));
  ASSERT_EQ(atomic_load(&count), 0); /* the gate is still closed */
  for (int i = 0; i < W; i++) {
    ASSERT_OK(evrt_stream_synchronize(ws[i]));
    evrt_stream_destroy(ws[i]);
  }
  ASSERT_EQ(atomic_load(&count), W);
  evrt_event_destroy(e);
  evrt_stream_destroy(gate);
  evrt_stream_destroy(free_s);
}

struct cpu_probe {
  evrt_event_t e;
  uint64_t cpu_ns, wall_ns;
  uint64_t t_enqueue; /* before the delay was enqueued */
  evrt_status_t st;
};
static void *sync_and_measure(void *p) {
  struct cpu_probe *c = p;
  uint64_t c0 = thread_cpu_ns();
  c->st = evrt_event_synchronize(c->e);
  c->cpu_ns = thread_cpu_ns() - c0;
  /* From before the delay's enqueue, not from the thread's start: a loaded
   * machine may start the thread late, but the delay cannot end before
   * 200 ms after its enqueue. */
  c->wall_ns = now_ns() - c->t_enqueue;
  return NULL;
}

static void measure_sync_cpu(unsigned flags, struct cpu_probe *c) {
  evrt_stream_t s = mkstream(0);
  c->e = mkevent(flags);
  c->t_enqueue = now_ns();
  evrt_stream_delay(s, 200 * MS);
  evrt_event_record(c->e, s);
  pthread_t t;
  pthread_create(&t, NULL, sync_and_measure, c);
  pthread_join(t, NULL);
  evrt_event_destroy(c->e);
  evrt_stream_destroy(s);
}

TEST(rule5_blocking_sync_uses_no_cpu) {
  struct cpu_probe c;
  measure_sync_cpu(EVRT_EVENT_BLOCKING_SYNC, &c);
  ASSERT_OK(c.st);
  ASSERT(c.wall_ns >= 190 * MS);
  /* parked at once: well under 1% of the 200 ms wait (generous: 5 ms) */
  if (c.cpu_ns >= 5 * MS)
    FAIL_("blocking synchronize burned %.2f ms CPU over 200 ms",
          c.cpu_ns / 1e6);
}

TEST(rule5_default_sync_spins_only_briefly) {
  struct cpu_probe c;
  measure_sync_cpu(0, &c);
  ASSERT_OK(c.st);
  ASSERT(c.wall_ns >= 190 * MS);
  if (c.cpu_ns >= 20 * MS)
    FAIL_("default synchronize burned %.2f ms CPU over 200 ms",
          c.cpu_ns / 1e6);
}

TEST(rule5_timeouts_are_distinct_and_leave_state_intact) {
  evrt_stream_t s = mkstream(0);
  evrt_event_t e = mkevent(EVRT_EVENT_BLOCKING_SYNC);
  ASSERT_OK(evrt_stream_delay(s, 300 * MS));
  ASSERT_OK(evrt_event_record(e, s));
  uint64_t t0 = now_ns();
  ASSERT_ST(evrt_event_synchronize_timeout(e, 30 * MS), EVRT_ERROR_TIMEOUT);
  uint64_t waited = now_ns() - t0;
  ASSERT(waited >= 29 * MS && waited < 250 * MS);
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 10 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_event_synchronize_timeout(e, 5000 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 0));
  ASSERT_OK(evrt_event_synchronize_timeout(e, 0));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

TEST(rule6_elapsed_time_error_order) {
  evrt_stream_t s0 = mkstream(0), s1 = mkstream(1);
  evrt_event_t plain = mkevent(0), t_unrec = mkevent(EVRT_EVENT_TIMING),
               t_pend = mkevent(EVRT_EVENT_TIMING),
               t_done0 = mkevent(EVRT_EVENT_TIMING),
               t_done1 = mkevent(EVRT_EVENT_TIMING),
               t_pend1 = mkevent(EVRT_EVENT_TIMING);
  float ms = -1;
  ASSERT_OK(evrt_event_record(t_done0, s0));
  ASSERT_OK(evrt_event_record(t_done1, s1));
  ASSERT_OK(evrt_stream_delay(s0, 300 * MS));
  ASSERT_OK(evrt_event_record(t_pend, s0));
  ASSERT_OK(evrt_stream_delay(s1, 300 * MS));
  ASSERT_OK(evrt_event_record(t_pend1, s1));
  /* timing first: even an unrecorded partner does not matter */
  ASSERT_ST(evrt_event_elapsed_time(&ms, plain, t_unrec),
            EVRT_ERROR_TIMING_DISABLED);
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_done0, plain),
            EVRT_ERROR_TIMING_DISABLED);
  /* then recorded: before complete */
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_unrec, t_pend),
            EVRT_ERROR_NOT_RECORDED);
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_pend, t_unrec),
            EVRT_ERROR_NOT_RECORDED);
  /* then complete: before device */
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_done0, t_pend1),
            EVRT_ERROR_NOT_COMPLETE);
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_done0, t_pend),
            EVRT_ERROR_NOT_COMPLETE);
  /* then device */
  ASSERT_ST(evrt_event_elapsed_time(&ms, t_done0, t_done1),
            EVRT_ERROR_DEVICE_MISMATCH);
  ASSERT(ms == -1.0f); /* no error wrote the output */
  ASSERT_OK(evrt_event_synchronize(t_pend));
  ASSERT_OK(evrt_event_elapsed_time(&ms, t_done0, t_pend));
  ASSERT(ms >= 290.0f && ms < 5000.0f);
  uint64_t ts0 = 0, ts1 = 0;
  ASSERT_OK(evrt_event_timestamp(t_done0, &ts0));
  ASSERT_OK(evrt_event_timestamp(t_pend, &ts1));
  ASSERT(ts1 > ts0 && ts0 > 0);
  ASSERT_ST(evrt_event_timestamp(plain, &ts0), EVRT_ERROR_TIMING_DISABLED);
  ASSERT_ST(evrt_event_timestamp(t_unrec, &ts0), EVRT_ERROR_NOT_RECORDED);
  evrt_event_t all[] = {plain, t_unrec, t_pend, t_done0, t_done1, t_pend1};
  ASSERT_OK(evrt_stream_synchronize(s1));
  for (int i = 0; i < 6; i++)
    evrt_event_destroy(all[i]);
  evrt_stream_destroy(s0);
  evrt_stream_destroy(s1);
}

TEST(rule6_timestamp_taken_when_record_executes) {
  evrt_stream_t s = mkstream(0);
  evrt_event_t e = mkevent(EVRT_EVENT_TIMING);
  ASSERT_OK(evrt_stream_delay(s, 100 * MS));
  uint64_t t_call = now_ns();
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_event_synchronize(e));
  uint64_t t_after = now_ns(), ts = 0;
  ASSERT_OK(evrt_event_timestamp(e, &ts));
  ASSERT(ts >= t_call + 90 * MS); /* not at the call */
  ASSERT(ts <= t_after);
  /* microsecond resolution: two records around a short busy host function */
  evrt_event_t a = mkevent(EVRT_EVENT_TIMING), b = mkevent(EVRT_EVENT_TIMING);
  float ms = 0;
  ASSERT_OK(evrt_event_record(a, s));
  ASSERT_OK(evrt_stream_delay(s, 1 * MS));
  ASSERT_OK(evrt_event_record(b, s));
  ASSERT_OK(evrt_event_synchronize(b));
  ASSERT_OK(evrt_event_elapsed_time(&ms, a, b));
  ASSERT(ms >= 0.9f && ms < 1000.0f);
  ASSERT(ms != (float)(int)ms); /* not whole milliseconds */
  evrt_event_destroy(a);
  evrt_event_destroy(b);
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

TEST(rule7_destroy_while_pending_returns_at_once) {
  evrt_stream_t a = mkstream(0), w = mkstream(0);
  evrt_event_t e = mkevent(EVRT_EVENT_TIMING);
  atomic_int a_done = 0, w_ran = 0;
  ASSERT_OK(evrt_stream_delay(a, 200 * MS));
  ASSERT_OK(evrt_launch_host_func(a, set_flag, &a_done));
  ASSERT_OK(evrt_event_record(e, a)); /* pending record item */
  ASSERT_OK(evrt_stream_wait_event(w, e));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &w_ran));
  uint64_t t0 = now_ns();
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT(now_ns() - t0 < 50 * MS);
  ASSERT_ST(evrt_event_query(e), EVRT_ERROR_INVALID_HANDLE);
  /* a new event may take the slot while the old record item is pending */
  evrt_event_t e2 = mkevent(EVRT_EVENT_TIMING);
  ASSERT_OK(evrt_stream_synchronize(w));
  ASSERT(atomic_load(&a_done) && atomic_load(&w_ran));
  ASSERT_OK(evrt_event_query(e2));
  float ms;
  ASSERT_ST(evrt_event_elapsed_time(&ms, e2, e2), EVRT_ERROR_NOT_RECORDED);
  evrt_event_destroy(e2);
  evrt_stream_destroy(a);
  evrt_stream_destroy(w);
}

TEST(rule9_reset_is_a_stream_item) {
  evrt_stream_t a = mkstream(0);
  evrt_event_t e = mkevent(0);
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_ST(evrt_event_reset(e, a), EVRT_ERROR_NOT_RECORDED);
  ASSERT_OK(evrt_stream_delay(a, 100 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_event_reset(e, a));
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.state, EVRT_EVENT_STATE_PENDING); /* not yet executed */
  ASSERT_OK(evrt_stream_synchronize(a));
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.state, EVRT_EVENT_STATE_UNRECORDED);
  ASSERT_OK(evrt_event_query(e));
  /* a record made after the reset call wins over the reset */
  ASSERT_OK(evrt_stream_delay(a, 50 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_event_reset(e, a));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_synchronize(a));
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.state, EVRT_EVENT_STATE_COMPLETE);
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
}

TEST(rule9_wait_status_with_several_waiting_streams) {
  evrt_stream_t a = mkstream(0), s1 = mkstream(0), s2 = mkstream(0),
                s3 = mkstream(0);
  evrt_event_t e = mkevent(0);
  ASSERT_OK(evrt_event_wait_status(e)); /* nobody waited */
  ASSERT_OK(evrt_stream_delay(a, 100 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(s1, e));
  ASSERT_OK(evrt_stream_delay(s2, 400 * MS)); /* s2 reaches its wait late */
  ASSERT_OK(evrt_stream_wait_event(s2, e));
  ASSERT_OK(evrt_stream_wait_event(s3, e));
  ASSERT_ST(evrt_event_wait_status(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(s1));
  ASSERT_OK(evrt_stream_synchronize(s3));
  ASSERT_ST(evrt_event_wait_status(e), EVRT_NOT_READY); /* s2 pending */
  ASSERT_OK(evrt_stream_synchronize(s2));
  ASSERT_OK(evrt_event_wait_status(e));
  /* a new generation with no waiter is complete at once */
  ASSERT_OK(evrt_stream_delay(a, 100 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_event_wait_status(e));
  ASSERT_OK(evrt_stream_wait_event(s1, e));
  ASSERT_ST(evrt_event_wait_status(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(s1));
  ASSERT_OK(evrt_event_wait_status(e));
  evrt_event_destroy(e);
  evrt_stream_t all[] = {a, s1, s2, s3};
  for (int i = 0; i < 4; i++)
    evrt_stream_destroy(all[i]);
}

TEST(rule9_event_limit_clear_error_and_release) {
  evrt_stream_t s = mkstream(1);
  uint32_t lim = 0, avail = 0;
  ASSERT_OK(evrt_device_get_event_limit(1, &lim));
  ASSERT_EQ(lim, 65535);
  ASSERT_OK(evrt_device_set_event_limit(1, 3));
  evrt_event_t e[4];
  for (int i = 0; i < 4; i++)
    e[i] = mkevent(0);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(evrt_event_record(e[i], s));
  ASSERT_OK(evrt_device_event_available(1, &avail));
  ASSERT_EQ(avail, 0);
  ASSERT_ST(evrt_event_record(e[3], s), EVRT_ERROR_EVENT_LIMIT);
  ASSERT(strstr(evrt_last_error_message(), "limit 3") != NULL);
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(e[3], &info));
  ASSERT_EQ(info.record_count, 0); /* unchanged */
  ASSERT_EQ(info.device, -1);
  ASSERT_OK(evrt_event_record(e[0], s)); /* re-record holds its resource */
  ASSERT_ST(evrt_device_set_event_limit(1, 2), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_event_destroy(e[1]));  /* destroy frees one */
  ASSERT_OK(evrt_event_record(e[3], s));
  ASSERT_OK(evrt_event_reset(e[2], s)); /* reset frees one when it runs */
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_device_event_available(1, &avail));
  ASSERT_EQ(avail, 1);
  evrt_event_t no_limit;
  ASSERT_OK(evrt_event_create(&no_limit, EVRT_EVENT_NO_LIMIT));
  ASSERT_OK(evrt_event_record(e[2], s)); /* takes the last one */
  ASSERT_OK(evrt_event_record(no_limit, s)); /* not counted */
  ASSERT_OK(evrt_device_event_available(0, &avail));
  ASSERT_EQ(avail, 65535); /* device 0 untouched */
  for (int i = 0; i < 4; i++)
    if (i != 1)
      evrt_event_destroy(e[i]);
  evrt_event_destroy(no_limit);
  ASSERT_OK(evrt_device_event_available(1, &avail));
  ASSERT_EQ(avail, 3);
  ASSERT_OK(evrt_device_set_event_limit(1, 65535));
  ASSERT_ST(evrt_device_set_event_limit(1, 0), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_device_set_event_limit(5, 10), EVRT_ERROR_INVALID_DEVICE);
  evrt_stream_destroy(s);
}

TEST(rule9_legacy_wait_next_record) {
  evrt_stream_t a = mkstream(0), w = mkstream(0);
  evrt_event_t e = mkevent(EVRT_EVENT_WAIT_NEXT_RECORD);
  atomic_int a_mark = 0, w_ran = 0;
  ASSERT_OK(evrt_stream_wait_event(w, e)); /* before any record: waits */
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &w_ran));
  sleep_ms(50);
  ASSERT(!atomic_load(&w_ran));
  ASSERT_ST(evrt_stream_query(w), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_delay(a, 50 * MS));
  ASSERT_OK(evrt_launch_host_func(a, set_flag, &a_mark));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_synchronize(w));
  ASSERT(atomic_load(&a_mark)); /* w passed only after the record's work */
  ASSERT(atomic_load(&w_ran));
  /* after a reset it waits for the next record again */
  ASSERT_OK(evrt_event_reset(e, a));
  ASSERT_OK(evrt_stream_synchronize(a));
  atomic_store(&w_ran, 0);
  ASSERT_OK(evrt_stream_wait_event(w, e));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &w_ran));
  sleep_ms(30);
  ASSERT(!atomic_load(&w_ran));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_synchronize(w));
  ASSERT(atomic_load(&w_ran));
  /* a destroy releases a waiter that can no longer be satisfied */
  ASSERT_OK(evrt_event_reset(e, a));
  ASSERT_OK(evrt_stream_synchronize(a));
  atomic_store(&w_ran, 0);
  ASSERT_OK(evrt_stream_wait_event(w, e));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &w_ran));
  sleep_ms(20);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_synchronize_timeout(w, 2000 * MS));
  ASSERT(atomic_load(&w_ran));
  evrt_stream_destroy(a);
  evrt_stream_destroy(w);
}

TEST(stream_wait_with_timeout_gives_up) {
  evrt_stream_t a = mkstream(0), w = mkstream(0);
  evrt_event_t e = mkevent(0);
  atomic_int ran = 0;
  ASSERT_OK(evrt_stream_delay(a, 2000 * MS));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event_timeout(w, e, 50 * MS));
  ASSERT_OK(evrt_launch_host_func(w, set_flag, &ran));
  ASSERT_OK(evrt_stream_synchronize_timeout(w, 1500 * MS));
  ASSERT(atomic_load(&ran));
  uint64_t fails = 0;
  ASSERT_OK(evrt_stream_wait_failures(w, &fails));
  ASSERT_EQ(fails, 1);
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
  evrt_stream_destroy(w);
}
