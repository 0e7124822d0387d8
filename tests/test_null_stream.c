/* A NULL stream is the calling thread's current device's default stream in
 * every stream-taking call of evrt.h (Conventions; one lookup,
 * evrt__stream_arg in src/core_stream.h).  Each call is made with NULL on
 * device 1 while that device's default stream is held by a gate: work it
 * enqueues must wait behind the gate (it went to that stream, not to device
 * 0's and not refused), and queries must answer for that stream.
 * null_stream_calls_all.sh checks that this file names every such call. */
#include "test.h"

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

static atomic_int gate_open;
static void gate(void *p) {
  (void)p;
  while (!atomic_load(&gate_open))
    sleep_ms(1);
}
static void mark(void *p) { atomic_store((atomic_int *)p, 1); }
static int32_t mark_status(void *p) {
  atomic_store((atomic_int *)p, 1);
  return 0;
}
static void nop(void *p) { (void)p; }

static evrt_stream_t def1; /* device 1's default stream, by its handle */

static void hold(void) {
  atomic_store(&gate_open, 0);
  if (evrt_launch_host_func(def1, gate, NULL))
    abort();
}
static void release(void) {
  atomic_store(&gate_open, 1);
  if (evrt_stream_synchronize(def1))
    abort();
}

TEST(enqueues_with_null_go_behind_the_current_devices_default_stream) {
  ASSERT_OK(evrt_set_device(1));
  ASSERT_OK(evrt_stream_default(1, &def1));
  static atomic_int m[4];
  static char src[64] = "source", dst[64];
  static uint64_t word;
  evrt_event_t e, fe;
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
  ASSERT_OK(evrt_event_create(&fe, EVRT_EVENT_DEFAULT));

  hold();
  for (int i = 0; i < 4; i++)
    atomic_store(&m[i], 0);
  memset(dst, 0, sizeof dst);
  word = 0;
  ASSERT_OK(evrt_launch_host_func(NULL, mark, &m[0]));
  ASSERT_OK(evrt_launch_host_func_labeled(NULL, mark, &m[1], "null"));
  ASSERT_OK(evrt_launch_host_func_status(NULL, mark_status, &m[2]));
  ASSERT_OK(evrt_memcpy_async(NULL, dst, src, sizeof src));
  ASSERT_OK(evrt_memset_async(NULL, dst + 32, 'z', 4));
  ASSERT_OK(evrt_stream_delay(NULL, 1000));
  ASSERT_OK(evrt_stream_write_value64(NULL, &word, 7, 0));
  ASSERT_OK(evrt_stream_wait_value64(NULL, &word, 7, EVRT_VALUE_WAIT_GEQ));
  ASSERT_OK(evrt_stream_wait_value64_timeout(NULL, &word, 7,
                                             EVRT_VALUE_WAIT_GEQ, -1));
  ASSERT_OK(evrt_event_record(e, NULL));
  ASSERT_OK(evrt_event_record_with_flags(fe, NULL, EVRT_EVENT_RECORD_DEFAULT));
  ASSERT_OK(evrt_stream_wait_event(NULL, e));
  ASSERT_OK(evrt_stream_wait_event_timeout(NULL, e, -1));
  ASSERT_OK(evrt_stream_wait_event_with_flags(NULL, e,
                                              EVRT_EVENT_WAIT_DEFAULT));
  ASSERT_OK(evrt_event_reset(fe, NULL));
  ASSERT_OK(evrt_launch_host_func(NULL, mark, &m[3]));
  /* nothing ran: it all waits behind the gate on device 1's stream */
  sleep_ms(20);
  ASSERT_EQ(evrt_stream_query(NULL), EVRT_NOT_READY);
  ASSERT_EQ(evrt_event_query(e), EVRT_NOT_READY);
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(atomic_load(&m[i]), 0);
  ASSERT_EQ(word, 0);
  ASSERT_EQ(dst[0], 0);
  /* device 0's default stream is not the one they went to */
  evrt_stream_t def0;
  ASSERT_OK(evrt_stream_default(0, &def0));
  ASSERT_OK(evrt_stream_synchronize(def0));
  release();
  ASSERT_OK(evrt_stream_synchronize(NULL));
  ASSERT_OK(evrt_stream_synchronize_timeout(NULL, -1));
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(atomic_load(&m[i]), 1);
  ASSERT_EQ(word, 7);
  ASSERT(strcmp(dst, "source") == 0);
  ASSERT_EQ(dst[32], 'z');
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_event_destroy(fe));
  ASSERT_OK(evrt_set_device(0));
}

TEST(queries_and_settings_with_null_answer_for_that_stream) {
  ASSERT_OK(evrt_set_device(1));
  ASSERT_OK(evrt_stream_default(1, &def1));
  int dev = -1, prio = 99, prio1 = 98;
  uint64_t id = 0, id1 = 1, fails = 99;
  ASSERT_OK(evrt_stream_get_device(NULL, &dev));
  ASSERT_EQ(dev, 1);
  ASSERT_OK(evrt_stream_get_priority(NULL, &prio));
  ASSERT_OK(evrt_stream_get_priority(def1, &prio1));
  ASSERT_EQ(prio, prio1);
  ASSERT_OK(evrt_stream_get_id(NULL, &id));
  ASSERT_OK(evrt_stream_get_id(def1, &id1));
  ASSERT_EQ(id, id1);
  ASSERT_OK(evrt_stream_set_name(NULL, "default of 1"));
  ASSERT_OK(evrt_stream_wait_failures(NULL, &fails));
  ASSERT_EQ(fails, 0);
  /* failure state of device 1's default stream, through NULL */
  ASSERT_OK(evrt_stream_set_failure_mode(NULL, EVRT_FAILURE_CONTINUE));
  evrt_task_failure_t f;
  ASSERT_OK(evrt_stream_get_error(NULL, &f));
  ASSERT_EQ(f.status, EVRT_SUCCESS);
  ASSERT_OK(evrt_stream_clear_error(NULL, &f));
  hold();
  static atomic_int after;
  atomic_store(&after, 0);
  ASSERT_OK(evrt_launch_host_func(def1, mark, &after));
  ASSERT_OK(evrt_stream_stop(NULL)); /* the gate polls nothing: runs on */
  ASSERT_OK(evrt_stream_abort(NULL)); /* discards `after` */
  atomic_store(&gate_open, 1);
  ASSERT_ST(evrt_stream_synchronize(def1), EVRT_ERROR_ABORTED);
  ASSERT_EQ(atomic_load(&after), 0);
  ASSERT_OK(evrt_stream_get_error(NULL, &f)); /* the abort, on that stream */
  ASSERT_EQ(f.status, EVRT_ERROR_ABORTED);
  ASSERT_OK(evrt_stream_clear_error(def1, NULL));
  ASSERT_OK(evrt_stream_synchronize(def1));
  /* serving device 1's default stream from this thread */
  ASSERT_OK(evrt_thread_serve_begin(NULL, 1));
  evrt_thread_serve_end();
  /* capture: a default stream cannot capture (not an invalid handle) */
  ASSERT_ST(evrt_stream_begin_capture(NULL, EVRT_CAPTURE_MODE_RELAXED),
            EVRT_ERROR_CAPTURE_IMPLICIT);
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_ACTIVE;
  uint64_t cid = 5;
  ASSERT_OK(evrt_stream_capture_status(NULL, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_NONE);
  ASSERT_OK(evrt_stream_capture_info(NULL, &cs, &cid));
  ASSERT_EQ(cid, 0);
  evrt_graph_t g = NULL;
  uint32_t idx = 0;
  uint64_t label = 1;
  ASSERT(evrt_stream_end_capture(NULL, &g) != EVRT_ERROR_INVALID_HANDLE);
  ASSERT(evrt_stream_capture_label(NULL, 1) != EVRT_ERROR_INVALID_HANDLE);
  ASSERT(evrt_stream_capture_switch(NULL, &idx, &label, 1) !=
         EVRT_ERROR_INVALID_HANDLE);
  /* a graph launched on NULL runs on device 1's default stream */
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 1, 0, 0));
  static atomic_int replayed;
  atomic_store(&replayed, 0);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(s, mark, &replayed));
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  hold();
  ASSERT_OK(evrt_graph_launch(x, NULL));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&replayed), 0);
  release();
  ASSERT_EQ(atomic_load(&replayed), 1);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  ASSERT_OK(evrt_stream_destroy(s));
  /* the one documented exception */
  ASSERT_ST(evrt_stream_destroy(NULL), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_OK(evrt_launch_host_func(NULL, nop, NULL));
  ASSERT_OK(evrt_stream_synchronize(NULL));
  ASSERT_OK(evrt_set_device(0));
}
