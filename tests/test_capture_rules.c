/* Stream capture: CUDA's rules and every EVRT_ERROR_CAPTURE_* error, each
 * provoked by exactly its cause (docs/capture.md numbers the rules). */
#include "test.h"

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

static evrt_stream_t mk(void) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, 0, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}
static evrt_event_t ev(void) {
  evrt_event_t e = NULL;
  if (evrt_event_create(&e, 0) != EVRT_SUCCESS)
    abort();
  return e;
}
static evrt_capture_status_t status_of(evrt_stream_t s) {
  evrt_capture_status_t st = (evrt_capture_status_t)-1;
  evrt_stream_capture_status(s, &st);
  return st;
}
static void nop(void *p) { (void)p; }

/* End a capture expected to be invalidated: INVALIDATED, no graph, the
 * stream out of capture. */
#define END_INVALIDATED(s)                                                     \
  do {                                                                         \
    evrt_graph_t g_ = (evrt_graph_t)1;                                         \
    ASSERT_ST(evrt_stream_end_capture(s, &g_),                                 \
              EVRT_ERROR_CAPTURE_INVALIDATED);                                 \
    ASSERT(g_ == NULL);                                                        \
    ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_NONE);                         \
  } while (0)

TEST(rule_capture_status_and_id) {
  evrt_stream_t s = mk(), t = mk();
  evrt_capture_status_t cs;
  uint64_t id = 7, id2 = 9;
  ASSERT_OK(evrt_stream_capture_info(s, &cs, &id));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_NONE);
  ASSERT_EQ(id, 0);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_capture_info(s, &cs, &id));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT(id != 0);
  evrt_event_t e = ev();
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_stream_wait_event(t, e)); /* t joins: same capture id */
  ASSERT_OK(evrt_stream_capture_info(t, &cs, &id2));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT_EQ(id2, id);
  ASSERT_ST(evrt_stream_capture_status(s, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_stream_capture_info(s, NULL, NULL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_EQ(status_of(t), EVRT_CAPTURE_STATUS_NONE);
  ASSERT_OK(evrt_graph_destroy(g));
  /* a new capture has a new id */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_capture_info(s, NULL, &id2));
  ASSERT(id2 != id);
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(t);
}

TEST(bad_arguments_change_nothing) {
  evrt_stream_t s = mk();
  ASSERT_ST(evrt_stream_begin_capture(s, (evrt_capture_mode_t)3),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_NONE);
  ASSERT_ST(evrt_stream_begin_capture(
                (evrt_stream_t)(uintptr_t)0x12345673u, EVRT_CAPTURE_MODE_GLOBAL),
            EVRT_ERROR_INVALID_HANDLE);
  evrt_graph_t g;
  ASSERT_ST(evrt_stream_end_capture(s, &g), EVRT_ERROR_NOT_PERMITTED);
  evrt_capture_mode_t m = (evrt_capture_mode_t)5;
  ASSERT_ST(evrt_thread_exchange_capture_mode(&m), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_thread_exchange_capture_mode(NULL), EVRT_ERROR_INVALID_VALUE);
  /* external flags are for capturing streams only; unknown flags fail */
  evrt_event_t e = ev();
  ASSERT_ST(evrt_event_record_with_flags(e, s, EVRT_EVENT_RECORD_EXTERNAL),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_wait_event_with_flags(s, e, EVRT_EVENT_WAIT_EXTERNAL),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_event_record_with_flags(e, s, 2), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_wait_event_with_flags(s, e, 4),
            EVRT_ERROR_INVALID_VALUE);
  evrt_event_info_t info;
  info.struct_size = sizeof info;
  ASSERT_OK(evrt_event_get_info(e, &info));
  ASSERT_EQ(info.record_count, 0);
  /* the default flags are the plain calls */
  ASSERT_OK(evrt_event_record_with_flags(e, s, EVRT_EVENT_RECORD_DEFAULT));
  ASSERT_OK(evrt_stream_wait_event_with_flags(s, e, EVRT_EVENT_WAIT_DEFAULT));
  ASSERT_OK(evrt_stream_synchronize(s));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

TEST(unsupported_begin_on_a_capturing_stream) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED),
            EVRT_ERROR_CAPTURE_UNSUPPORTED);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE); /* nothing changed */
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s);
}

TEST(unsupported_synchronize_or_query_of_a_capturing_stream_invalidates) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_INVALIDATED);
  /* further use of the stream fails until the capture ends */
  ASSERT_ST(evrt_launch_host_func(s, nop, NULL),
            EVRT_ERROR_CAPTURE_INVALIDATED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_query(s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 0),
            EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_query(s)); /* fine again */
  evrt_stream_destroy(s);
}

TEST(unsupported_device_synchronize_and_destroy_while_capturing) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  /* device 1 has no capture: fine (this thread is in global mode and the
   * capture is relaxed) */
  ASSERT_OK(evrt_device_synchronize(1));
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT_ST(evrt_device_synchronize(0), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_destroy(s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(captured_event_cannot_be_queried_synchronized_or_timed) {
  evrt_stream_t s = mk();
  evrt_event_t e = ev(), t;
  ASSERT_OK(evrt_event_create(&t, EVRT_EVENT_TIMING));
  const evrt_status_t E = EVRT_ERROR_CAPTURE_EVENT;
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_ST(evrt_event_query(e), E);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_INVALIDATED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_ST(evrt_event_synchronize(e), E);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(t, s));
  float ms;
  uint64_t ts;
  ASSERT_ST(evrt_event_elapsed_time(&ms, t, t), E);
  ASSERT_ST(evrt_event_timestamp(t, &ts), E);
  ASSERT_ST(evrt_event_wait_status(t), E);
  END_INVALIDATED(s);
  /* still captured after the capture ended, until recorded again */
  ASSERT_ST(evrt_event_query(e), E);
  evrt_stream_t o = mk();
  ASSERT_ST(evrt_stream_wait_event(o, e), E);
  ASSERT_ST(evrt_event_reset(e, o), E);
  ASSERT_OK(evrt_event_record(e, o));
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_OK(evrt_event_query(e));
  evrt_event_destroy(e);
  evrt_event_destroy(t);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

TEST(wait_on_a_never_recorded_event_is_an_empty_dependency) {
  evrt_stream_t s = mk();
  evrt_event_t e = ev();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_wait_event(s, e));
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  size_t n = 1;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 0);
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
}

TEST(isolation_wait_on_an_event_recorded_outside_unless_external) {
  evrt_stream_t s = mk(), o = mk();
  evrt_event_t e = ev();
  ASSERT_OK(evrt_event_record(e, o));
  ASSERT_OK(evrt_stream_synchronize(o)); /* complete: still isolation */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_wait_event(s, e), EVRT_ERROR_CAPTURE_ISOLATION);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_wait_event_with_flags(s, e, EVRT_EVENT_WAIT_EXTERNAL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  size_t n;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 1);
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

TEST(merge_of_two_captures_invalidates_both) {
  evrt_stream_t a = mk(), b = mk();
  evrt_event_t e = ev();
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_begin_capture(b, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_ST(evrt_stream_wait_event(b, e), EVRT_ERROR_CAPTURE_MERGE);
  ASSERT_EQ(status_of(a), EVRT_CAPTURE_STATUS_INVALIDATED);
  ASSERT_EQ(status_of(b), EVRT_CAPTURE_STATUS_INVALIDATED);
  END_INVALIDATED(a);
  END_INVALIDATED(b);
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
}

TEST(unmatched_end_on_a_forked_stream_invalidates) {
  evrt_stream_t a = mk(), b = mk();
  evrt_event_t e = ev(), j = ev();
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  evrt_graph_t g = (evrt_graph_t)1;
  ASSERT_ST(evrt_stream_end_capture(b, &g), EVRT_ERROR_CAPTURE_UNMATCHED);
  ASSERT_EQ(status_of(b), EVRT_CAPTURE_STATUS_INVALIDATED);
  ASSERT_ST(evrt_event_record(j, b), EVRT_ERROR_CAPTURE_INVALIDATED);
  END_INVALIDATED(a);
  ASSERT_EQ(status_of(b), EVRT_CAPTURE_STATUS_NONE);
  evrt_event_destroy(e);
  evrt_event_destroy(j);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
}

TEST(unjoined_fork_fails_the_end_and_ends_the_capture) {
  evrt_stream_t a = mk(), b = mk();
  evrt_event_t e = ev(), j = ev();
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(a, nop, NULL));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_OK(evrt_launch_host_func(b, nop, NULL));
  evrt_graph_t g = (evrt_graph_t)1;
  ASSERT_ST(evrt_stream_end_capture(a, &g), EVRT_ERROR_CAPTURE_UNJOINED);
  ASSERT(g == NULL);
  ASSERT_EQ(status_of(a), EVRT_CAPTURE_STATUS_NONE);
  ASSERT_EQ(status_of(b), EVRT_CAPTURE_STATUS_NONE);
  /* joined, then more work on the fork: unjoined again (CANN's note) */
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_OK(evrt_launch_host_func(b, nop, NULL));
  ASSERT_OK(evrt_event_record(j, b));
  ASSERT_OK(evrt_stream_wait_event(a, j));
  ASSERT_OK(evrt_launch_host_func(b, nop, NULL));
  ASSERT_ST(evrt_stream_end_capture(a, &g), EVRT_ERROR_CAPTURE_UNJOINED);
  /* a fork that added nothing is joined */
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(a, nop, NULL));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_OK(evrt_stream_end_capture(a, &g));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_event_destroy(j);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
}

TEST(implicit_a_default_stream_takes_no_part_in_a_capture) {
  evrt_stream_t d, a = mk();
  ASSERT_OK(evrt_stream_default(0, &d));
  ASSERT_ST(evrt_stream_begin_capture(d, EVRT_CAPTURE_MODE_RELAXED),
            EVRT_ERROR_CAPTURE_IMPLICIT);
  /* NULL is the current device's default stream (evrt.h) */
  ASSERT_ST(evrt_stream_begin_capture(NULL, EVRT_CAPTURE_MODE_RELAXED),
            EVRT_ERROR_CAPTURE_IMPLICIT);
  ASSERT_EQ(status_of(d), EVRT_CAPTURE_STATUS_NONE);
  ASSERT_EQ(status_of(NULL), EVRT_CAPTURE_STATUS_NONE);
  evrt_event_t e = ev();
  ASSERT_OK(evrt_stream_begin_capture(a, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_ST(evrt_stream_wait_event(d, e), EVRT_ERROR_CAPTURE_IMPLICIT);
  ASSERT_EQ(status_of(d), EVRT_CAPTURE_STATUS_NONE);
  END_INVALIDATED(a);
  evrt_event_destroy(e);
  evrt_stream_destroy(a);
}

struct end_arg {
  evrt_stream_t s;
  evrt_status_t st;
  evrt_graph_t g;
};
static void *end_elsewhere(void *p) {
  struct end_arg *a = p;
  a->st = evrt_stream_end_capture(a->s, &a->g);
  return NULL;
}

TEST(wrong_thread_end_of_a_non_relaxed_capture) {
  evrt_stream_t s = mk();
  const evrt_capture_mode_t modes[2] = {EVRT_CAPTURE_MODE_GLOBAL,
                                        EVRT_CAPTURE_MODE_THREAD_LOCAL};
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(evrt_stream_begin_capture(s, modes[i]));
    struct end_arg a = {s, EVRT_SUCCESS, NULL};
    pthread_t t;
    pthread_create(&t, NULL, end_elsewhere, &a);
    pthread_join(t, NULL);
    ASSERT_EQ(a.st, EVRT_ERROR_CAPTURE_WRONG_THREAD);
    ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE); /* unchanged */
    evrt_graph_t g;
    ASSERT_OK(evrt_stream_end_capture(s, &g));
    ASSERT_OK(evrt_graph_destroy(g));
  }
  /* relaxed: any thread may end it */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  struct end_arg a = {s, EVRT_ERROR_INTERNAL, NULL};
  pthread_t t;
  pthread_create(&t, NULL, end_elsewhere, &a);
  pthread_join(t, NULL);
  ASSERT_EQ(a.st, EVRT_SUCCESS);
  ASSERT_OK(evrt_graph_destroy(a.g));
  evrt_stream_destroy(s);
}

/* Modes: which potentially unsafe calls (synchronizing objects outside the
 * capture) the beginner and other threads may make meanwhile. */
struct unsafe_arg {
  evrt_capture_mode_t mode; /* the other thread's interaction mode */
  evrt_stream_t other;      /* a stream outside the capture */
  evrt_status_t sync, call;
};
static void *other_thread(void *p) {
  struct unsafe_arg *a = p;
  evrt_capture_mode_t m = a->mode;
  evrt_thread_exchange_capture_mode(&m);
  a->sync = evrt_stream_synchronize(a->other);
  a->call = evrt_capture_unsafe_call();
  return NULL;
}
static evrt_status_t from_other(evrt_capture_mode_t mode, evrt_stream_t o,
                                evrt_status_t *call) {
  struct unsafe_arg a = {mode, o, EVRT_ERROR_INTERNAL, EVRT_ERROR_INTERNAL};
  pthread_t t;
  pthread_create(&t, NULL, other_thread, &a);
  pthread_join(t, NULL);
  *call = a.call;
  return a.sync;
}

TEST(modes_decide_which_unsafe_calls_other_threads_may_make) {
  evrt_stream_t s = mk(), o = mk();
  const evrt_status_t U = EVRT_ERROR_CAPTURE_UNSUPPORTED;
  evrt_status_t call;
  /* global capture: another thread in global mode may not; in
   * thread-local or relaxed mode it may */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(from_other(EVRT_CAPTURE_MODE_RELAXED, o, &call));
  ASSERT_OK(call);
  ASSERT_OK(from_other(EVRT_CAPTURE_MODE_THREAD_LOCAL, o, &call));
  ASSERT_OK(call);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT_ST(from_other(EVRT_CAPTURE_MODE_GLOBAL, o, &call), U);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_INVALIDATED);
  END_INVALIDATED(s);
  /* thread-local capture: other threads in global mode may */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_THREAD_LOCAL));
  ASSERT_OK(from_other(EVRT_CAPTURE_MODE_GLOBAL, o, &call));
  ASSERT_OK(call);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  /* ... but not the beginner, unless it turns relaxed */
  evrt_capture_mode_t m = EVRT_CAPTURE_MODE_RELAXED;
  ASSERT_OK(evrt_thread_exchange_capture_mode(&m));
  ASSERT_EQ(m, EVRT_CAPTURE_MODE_GLOBAL); /* the default */
  ASSERT_OK(evrt_stream_synchronize(o));
  ASSERT_OK(evrt_capture_unsafe_call());
  ASSERT_OK(evrt_thread_exchange_capture_mode(&m)); /* back to global */
  ASSERT_EQ(m, EVRT_CAPTURE_MODE_RELAXED);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT_ST(evrt_capture_unsafe_call(), U);
  END_INVALIDATED(s);
  /* relaxed capture: everyone may */
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(from_other(EVRT_CAPTURE_MODE_GLOBAL, o, &call));
  ASSERT_OK(call);
  ASSERT_OK(evrt_stream_synchronize(o));
  evrt_event_t e = ev();
  ASSERT_OK(evrt_event_record(e, o));
  ASSERT_OK(evrt_event_synchronize(e));
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_OK(evrt_graph_destroy(g));
  /* no capture: nothing is unsafe */
  ASSERT_OK(evrt_capture_unsafe_call());
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

TEST(relaxed_mode_still_refuses_what_conflicts_with_capture) {
  evrt_stream_t s = mk();
  evrt_capture_mode_t m = EVRT_CAPTURE_MODE_RELAXED;
  ASSERT_OK(evrt_thread_exchange_capture_mode(&m));
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_thread_exchange_capture_mode(&m));
  evrt_stream_destroy(s);
}

TEST(interprocess_events_and_graph_launches_are_refused_in_capture) {
  evrt_stream_t s = mk(), o = mk();
  evrt_event_t ip;
  ASSERT_OK(evrt_event_create(&ip, EVRT_EVENT_INTERPROCESS));
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_event_record(ip, s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_stream_begin_capture(o, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(o, nop, NULL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(o, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_graph_launch(x, s), EVRT_ERROR_CAPTURE_UNSUPPORTED);
  END_INVALIDATED(s);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(ip);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

/* A launch of a destroyed, NULL or other-kind executable graph on a
 * capturing stream is INVALID_HANDLE and leaves the capture active (it was
 * CAPTURE_UNSUPPORTED and invalidated it: found by fuzz_native_all). */
TEST(bad_graph_launch_on_a_capturing_stream_changes_nothing) {
  evrt_stream_t s = mk(), o = mk();
  ASSERT_OK(evrt_stream_begin_capture(o, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(o, nop, NULL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(o, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_graph_exec_destroy(x));
  evrt_event_t e = ev();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_graph_launch(x, s), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_launch(NULL, s), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_launch((evrt_graph_exec_t)e, s),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_launch((evrt_graph_exec_t)g, s),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE);
  ASSERT_OK(evrt_launch_host_func(s, nop, NULL));
  evrt_graph_t g2;
  ASSERT_OK(evrt_stream_end_capture(s, &g2));
  size_t n = 0;
  ASSERT_OK(evrt_graph_node_count(g2, &n));
  ASSERT_EQ(n, 1);
  ASSERT_OK(evrt_graph_destroy(g2));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

TEST(record_in_capture_checks_the_event_device) {
  evrt_stream_t s = mk(), d1;
  ASSERT_OK(evrt_stream_create(&d1, 1, 0, 0));
  evrt_event_t e = ev();
  ASSERT_OK(evrt_event_record(e, d1)); /* the event belongs to device 1 */
  ASSERT_OK(evrt_stream_synchronize(d1));
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_event_record(e, s), EVRT_ERROR_DEVICE_MISMATCH);
  ASSERT_ST(evrt_event_record_with_flags(e, s, EVRT_EVENT_RECORD_EXTERNAL),
            EVRT_ERROR_DEVICE_MISMATCH);
  ASSERT_EQ(status_of(s), EVRT_CAPTURE_STATUS_ACTIVE); /* bad input only */
  ASSERT_OK(evrt_event_query(e)); /* unchanged: its device-1 record */
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(d1);
}

TEST(every_capture_error_has_a_name_and_a_message) {
  const evrt_status_t all[] = {
      EVRT_ERROR_CAPTURE_UNSUPPORTED, EVRT_ERROR_CAPTURE_INVALIDATED,
      EVRT_ERROR_CAPTURE_MERGE,       EVRT_ERROR_CAPTURE_UNMATCHED,
      EVRT_ERROR_CAPTURE_UNJOINED,    EVRT_ERROR_CAPTURE_ISOLATION,
      EVRT_ERROR_CAPTURE_IMPLICIT,    EVRT_ERROR_CAPTURE_WRONG_THREAD,
      EVRT_ERROR_CAPTURE_EVENT};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    ASSERT(strncmp(evrt_err_name(all[i]), "EVRT_ERROR_CAPTURE_", 19) == 0);
    ASSERT(strcmp(evrt_strerror(all[i]), "unknown evrt status") != 0);
  }
}
