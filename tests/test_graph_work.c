/* Graphs and the other kinds of stream work: stream-ordered values become
 * nodes, host tasks that return a status are refused, and a launch that an
 * abort or a stopped stream discards skips its nodes but completes its
 * records and never lets a later launch overtake it.  docs/capture.md. */
#include "test.h"

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

struct log {
  atomic_int n;
  int v[256];
};
struct entry {
  struct log *log;
  int value;
};
static void append(void *p) {
  struct entry *e = p;
  int i = atomic_fetch_add(&e->log->n, 1);
  if (i < 256)
    e->log->v[i] = e->value;
}

static atomic_int gate;
static void wait_gate(void *p) {
  (void)p;
  WAIT_UNTIL(atomic_load(&gate), 30000);
}

/* Lane t waits for a value that lane s writes after its host function: the
 * value wait, not the fork, orders B after A, at every replay. */
TEST(value_waits_and_writes_become_nodes) {
  evrt_stream_t s = mk(), t = mk();
  evrt_event_t fork = ev(), join = ev();
  static uint64_t word;
  static struct log log;
  static struct entry a, b;
  a = (struct entry){&log, 'A'};
  b = (struct entry){&log, 'B'};
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(fork, s));
  ASSERT_OK(evrt_stream_wait_event(t, fork));
  /* EQ | RESET: passes on 1 and puts 0 back, ready for the next replay */
  ASSERT_OK(evrt_stream_wait_value64(
      t, &word, 1, EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_RESET));
  ASSERT_OK(evrt_launch_host_func(t, append, &b));
  ASSERT_OK(evrt_event_record(join, t));
  ASSERT_OK(evrt_launch_host_func(s, append, &a));
  ASSERT_OK(evrt_stream_write_value64(s, &word, 1, 0));
  ASSERT_OK(evrt_stream_wait_event(s, join));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  /* captured, not done: the word is untouched */
  ASSERT_EQ(__atomic_load_n(&word, __ATOMIC_SEQ_CST), 0);
  size_t n;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 4); /* value wait, B, A, value write */
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  for (int r = 0; r < 3; r++)
    ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&log.n), 6);
  for (int r = 0; r < 3; r++) {
    ASSERT_EQ(log.v[2 * r], 'A');
    ASSERT_EQ(log.v[2 * r + 1], 'B');
  }
  ASSERT_EQ(__atomic_load_n(&word, __ATOMIC_SEQ_CST), 0);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(fork);
  evrt_event_destroy(join);
  evrt_stream_destroy(s);
  evrt_stream_destroy(t);
}

static int32_t ok_task(void *p) {
  (void)p;
  return 0;
}

/* A failing task's error belongs to its stream; replayed, it would run on
 * a stream nobody synchronizes: refused. */
TEST(host_tasks_are_refused_and_invalidate) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_ST(evrt_launch_host_func_status(s, ok_task, NULL),
            EVRT_ERROR_CAPTURE_UNSUPPORTED);
  evrt_capture_status_t cs;
  ASSERT_OK(evrt_stream_capture_status(s, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_INVALIDATED);
  evrt_graph_t g = (evrt_graph_t)1;
  ASSERT_ST(evrt_stream_end_capture(s, &g), EVRT_ERROR_CAPTURE_INVALIDATED);
  ASSERT(g == NULL);
  /* outside a capture it is ordinary work again */
  ASSERT_OK(evrt_launch_host_func_status(s, ok_task, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  evrt_stream_destroy(s);
}

/* A graph: a host function appending `value`, then an external record. */
static evrt_graph_exec_t graph_of(struct entry *e, evrt_event_t rec) {
  evrt_stream_t c = mk();
  evrt_graph_t g;
  evrt_graph_exec_t x = NULL;
  if (evrt_stream_begin_capture(c, EVRT_CAPTURE_MODE_RELAXED) ||
      evrt_launch_host_func(c, append, e) ||
      (rec && evrt_event_record_with_flags(rec, c,
                                           EVRT_EVENT_RECORD_EXTERNAL)) ||
      evrt_stream_end_capture(c, &g) || evrt_graph_instantiate(&x, g) ||
      evrt_graph_destroy(g) || evrt_stream_destroy(c))
    abort();
  return x;
}

/* An aborted launch skips its nodes, its external record still completes
 * (a waiter is released), and the stream runs the next launch normally. */
TEST(an_aborted_launch_skips_its_nodes_and_completes_its_records) {
  evrt_stream_t s = mk(), w = mk();
  evrt_event_t rec = ev();
  static struct log log;
  static struct entry e;
  atomic_store(&log.n, 0);
  e = (struct entry){&log, 1};
  evrt_graph_exec_t x = graph_of(&e, rec);
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_launch_host_func(s, wait_gate, NULL));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_wait_event(w, rec)); /* on the launch's record */
  ASSERT_OK(evrt_stream_abort(s));
  atomic_store(&gate, 1);
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_ABORTED);
  ASSERT_OK(evrt_stream_synchronize(w)); /* released */
  ASSERT_EQ(atomic_load(&log.n), 0);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&log.n), 1);
  ASSERT_OK(evrt_event_query(rec));
  ASSERT_OK(evrt_graph_exec_destroy(x));
  evrt_event_destroy(rec);
  evrt_stream_destroy(s);
  evrt_stream_destroy(w);
}

/* Launches of one executable graph on two streams: the second is aborted
 * while the first still waits behind a gate.  The second must neither run
 * before the first nor stall the third. */
TEST(an_aborted_launch_never_overtakes_an_earlier_one) {
  evrt_stream_t s1 = mk(), s2 = mk();
  static struct log log;
  static struct entry e;
  atomic_store(&log.n, 0);
  e = (struct entry){&log, 7};
  evrt_graph_exec_t x = graph_of(&e, NULL);
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_launch_host_func(s1, wait_gate, NULL));
  ASSERT_OK(evrt_graph_launch(x, s1)); /* launch 0: behind the gate */
  ASSERT_OK(evrt_graph_launch(x, s2)); /* launch 1: waits for launch 0 */
  ASSERT_OK(evrt_stream_abort(s2));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&log.n), 0);
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(s1));
  ASSERT_ST(evrt_stream_synchronize(s2), EVRT_ERROR_ABORTED);
  ASSERT_OK(evrt_stream_clear_error(s2, NULL));
  ASSERT_OK(evrt_graph_launch(x, s2)); /* launch 2 */
  ASSERT_OK(evrt_stream_synchronize(s2));
  ASSERT_EQ(atomic_load(&log.n), 2); /* launches 0 and 2 */
  ASSERT_OK(evrt_graph_exec_destroy(x));
  evrt_stream_destroy(s1);
  evrt_stream_destroy(s2);
}

static int32_t fail_task(void *p) {
  (void)p;
  return 5;
}

/* In stop mode a failure before the launch discards it as it discards any
 * later task; cleared, the stream replays the graph again. */
TEST(a_stopped_stream_skips_a_launch) {
  evrt_stream_t s = mk();
  static struct log log;
  static struct entry e;
  atomic_store(&log.n, 0);
  e = (struct entry){&log, 3};
  evrt_graph_exec_t x = graph_of(&e, NULL);
  ASSERT_OK(evrt_stream_set_failure_mode(s, EVRT_FAILURE_STOP));
  ASSERT_OK(evrt_launch_host_func_status(s, fail_task, NULL));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_TASK_FAILED);
  ASSERT_EQ(atomic_load(&log.n), 0);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&log.n), 1);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  evrt_stream_destroy(s);
}
