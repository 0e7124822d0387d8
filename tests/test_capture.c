/* Stream capture and graph replay: nodes instead of work, fork/join through
 * events, replay order, external events, labels, handles, Graphviz output.
 * The error rules are in test_capture_rules.c.  docs/capture.md. */
#include "test.h"

#define MS 1000000ull

static evrt_stream_t mk(void) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, 0, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}
static evrt_event_t ev(unsigned flags) {
  evrt_event_t e = NULL;
  if (evrt_event_create(&e, flags) != EVRT_SUCCESS)
    abort();
  return e;
}

static void bump(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

/* An order log shared by host functions. */
struct log {
  atomic_int n;
  int v[1 << 16];
};
struct entry {
  struct log *log;
  int value;
};
static void append(void *p) {
  struct entry *e = p;
  int i = atomic_fetch_add(&e->log->n, 1);
  e->log->v[i] = e->value;
}

TEST(captured_work_becomes_nodes_and_runs_only_when_launched) {
  evrt_stream_t s = mk();
  static atomic_int runs;
  atomic_store(&runs, 0);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  for (int i = 0; i < 5; i++)
    ASSERT_OK(evrt_launch_host_func(s, bump, &runs));
  evrt_capture_status_t cs;
  ASSERT_OK(evrt_stream_capture_status(s, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_ACTIVE);
  evrt_graph_t g = NULL;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT(g != NULL);
  ASSERT_OK(evrt_stream_capture_status(s, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_NONE);
  /* nothing ran during the capture, nor after it */
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&runs), 0);
  size_t n = 0;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 5);
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&runs), 5);
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&runs), 15);
  /* work enqueued after the capture runs normally again */
  ASSERT_OK(evrt_launch_host_func(s, bump, &runs));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&runs), 16);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(replay_keeps_stream_order_with_copies_fills_and_delays) {
  evrt_stream_t s = mk();
  static struct log log;
  static struct entry e[3];
  static unsigned char a[4096], b[4096];
  atomic_store(&log.n, 0);
  for (int i = 0; i < 3; i++)
    e[i] = (struct entry){&log, i};
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(s, append, &e[0]));
  ASSERT_OK(evrt_memset_async(s, a, 0x3c, sizeof a));
  ASSERT_OK(evrt_stream_delay(s, 5 * MS));
  ASSERT_OK(evrt_memcpy_async(s, b, a, sizeof b));
  ASSERT_OK(evrt_launch_host_func(s, append, &e[1]));
  ASSERT_OK(evrt_launch_host_func_labeled(s, append, &e[2], "last"));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  ASSERT_EQ(a[0], 0); /* the fill did not run at capture */
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_graph_destroy(g)); /* the executable graph is a copy */
  uint64_t t0 = now_ns();
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT(now_ns() - t0 >= 5 * MS);
  ASSERT_EQ(atomic_load(&log.n), 3);
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(log.v[i], i);
  ASSERT_EQ(b[0], 0x3c);
  ASSERT_EQ(b[4095], 0x3c);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* The gate: a host function the test opens. */
static atomic_int gate;
static void wait_gate(void *p) {
  (void)p;
  WAIT_UNTIL(atomic_load(&gate), 30000);
}

TEST(launch_runs_after_earlier_work_and_before_later_work) {
  evrt_stream_t s = mk(), cap = mk();
  static struct log log;
  static struct entry e[3];
  atomic_store(&log.n, 0);
  for (int i = 0; i < 3; i++)
    e[i] = (struct entry){&log, i};
  ASSERT_OK(evrt_stream_begin_capture(cap, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(cap, append, &e[1]));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(cap, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_launch_host_func(s, wait_gate, NULL));
  ASSERT_OK(evrt_launch_host_func(s, append, &e[0]));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_launch_host_func(s, append, &e[2]));
  ASSERT_ST(evrt_stream_query(s), EVRT_NOT_READY);
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&log.n), 0); /* the graph waits for the gate too */
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&log.n), 3);
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(log.v[i], i);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(cap));
}

/* Fork/join: s0 -> {s1, s2} -> s0.  Each branch logs its own range; the
 * join node must come after every branch node, the fork node before. */
struct fj {
  struct log log;
  struct entry e[64];
};
static struct fj fj;

static evrt_graph_t capture_fork_join(evrt_stream_t s0, evrt_stream_t s1,
                                      evrt_stream_t s2) {
  evrt_event_t fork = ev(0), j1 = ev(0), j2 = ev(0);
  evrt_graph_t g = NULL;
  for (int i = 0; i < 64; i++)
    fj.e[i] = (struct entry){&fj.log, i};
  if (evrt_stream_begin_capture(s0, EVRT_CAPTURE_MODE_RELAXED))
    return NULL;
  evrt_launch_host_func(s0, append, &fj.e[0]);
  evrt_event_record(fork, s0);
  evrt_stream_wait_event(s1, fork);
  evrt_stream_wait_event(s2, fork);
  for (int i = 1; i <= 10; i++) {
    evrt_launch_host_func(s1, append, &fj.e[i]);
    evrt_launch_host_func(s2, append, &fj.e[10 + i]);
  }
  evrt_event_record(j1, s1);
  evrt_event_record(j2, s2);
  evrt_stream_wait_event(s0, j1);
  evrt_stream_wait_event(s0, j2);
  evrt_launch_host_func(s0, append, &fj.e[63]);
  evrt_stream_end_capture(s0, &g);
  evrt_event_destroy(fork);
  evrt_event_destroy(j1);
  evrt_event_destroy(j2);
  return g;
}

TEST(fork_and_join_through_events_order_the_replay) {
  evrt_stream_t s0 = mk(), s1 = mk(), s2 = mk();
  evrt_graph_t g = capture_fork_join(s0, s1, s2);
  ASSERT(g != NULL);
  size_t n;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 22);
  /* the forked streams left the capture with the origin */
  evrt_capture_status_t cs;
  ASSERT_OK(evrt_stream_capture_status(s1, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_NONE);
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  evrt_stream_t run = mk();
  for (int rep = 0; rep < 20; rep++) {
    atomic_store(&fj.log.n, 0);
    ASSERT_OK(evrt_graph_launch(x, run));
    ASSERT_OK(evrt_stream_synchronize(run));
    ASSERT_EQ(atomic_load(&fj.log.n), 22);
    ASSERT_EQ(fj.log.v[0], 0);
    ASSERT_EQ(fj.log.v[21], 63);
    int last1 = 0, last2 = 10;
    for (int i = 1; i < 21; i++) { /* each branch in its own order */
      int v = fj.log.v[i];
      if (v <= 10) {
        ASSERT_EQ(v, last1 + 1);
        last1 = v;
      } else {
        ASSERT_EQ(v, last2 + 1);
        last2 = v;
      }
    }
  }
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s0);
  evrt_stream_destroy(s1);
  evrt_stream_destroy(s2);
  evrt_stream_destroy(run);
}

/* Both branches of a fork run at once when replayed: each waits (bounded)
 * for the other to arrive. */
static atomic_int arrived;
static atomic_int met;
static void rendezvous(void *p) {
  (void)p;
  atomic_fetch_add(&arrived, 1);
  uint64_t dl = now_ns() + 10000 * MS;
  while (atomic_load(&arrived) < 2 && now_ns() < dl)
    sleep_ms(1);
  if (atomic_load(&arrived) >= 2)
    atomic_fetch_add(&met, 1);
}

TEST(forked_branches_run_concurrently_on_replay) {
  evrt_stream_t s0 = mk(), s1 = mk();
  evrt_event_t f = ev(0), j = ev(0);
  ASSERT_OK(evrt_stream_begin_capture(s0, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record(f, s0));
  ASSERT_OK(evrt_stream_wait_event(s1, f));
  ASSERT_OK(evrt_launch_host_func(s0, rendezvous, NULL));
  ASSERT_OK(evrt_launch_host_func(s1, rendezvous, NULL));
  ASSERT_OK(evrt_event_record(j, s1));
  ASSERT_OK(evrt_stream_wait_event(s0, j));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s0, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  atomic_store(&arrived, 0);
  atomic_store(&met, 0);
  ASSERT_OK(evrt_graph_launch(x, s0));
  ASSERT_OK(evrt_stream_synchronize(s0));
  ASSERT_EQ(atomic_load(&met), 2);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(f);
  evrt_event_destroy(j);
  evrt_stream_destroy(s0);
  evrt_stream_destroy(s1);
}

/* One executable graph never overlaps itself, even launched on two streams
 * (CUDA: each launch is ordered behind the previous launches of the same
 * executable graph); two instantiations of one graph may overlap. */
static atomic_int inside, overlap;
static void exclusive(void *p) {
  (void)p;
  if (atomic_fetch_add(&inside, 1) != 0)
    atomic_store(&overlap, 1);
  sleep_ms(1);
  atomic_fetch_sub(&inside, 1);
}

TEST(one_exec_never_overlaps_itself_two_execs_may) {
  evrt_stream_t c = mk(), a = mk(), b = mk();
  ASSERT_OK(evrt_stream_begin_capture(c, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(c, exclusive, NULL));
  ASSERT_OK(evrt_launch_host_func(c, exclusive, NULL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(c, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  atomic_store(&inside, 0);
  atomic_store(&overlap, 0);
  for (int i = 0; i < 20; i++) {
    ASSERT_OK(evrt_graph_launch(x, a));
    ASSERT_OK(evrt_graph_launch(x, b));
  }
  ASSERT_OK(evrt_stream_synchronize(a));
  ASSERT_OK(evrt_stream_synchronize(b));
  ASSERT_EQ(atomic_load(&overlap), 0);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));

  ASSERT_OK(evrt_stream_begin_capture(c, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(c, rendezvous, NULL));
  ASSERT_OK(evrt_stream_end_capture(c, &g));
  evrt_graph_exec_t x1, x2;
  ASSERT_OK(evrt_graph_instantiate(&x1, g));
  ASSERT_OK(evrt_graph_instantiate(&x2, g));
  atomic_store(&arrived, 0);
  atomic_store(&met, 0);
  ASSERT_OK(evrt_graph_launch(x1, a));
  ASSERT_OK(evrt_graph_launch(x2, b));
  ASSERT_OK(evrt_stream_synchronize(a));
  ASSERT_OK(evrt_stream_synchronize(b));
  ASSERT_EQ(atomic_load(&met), 2);
  ASSERT_OK(evrt_graph_exec_destroy(x1));
  ASSERT_OK(evrt_graph_exec_destroy(x2));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
  evrt_stream_destroy(c);
}

TEST(external_record_gives_per_replay_elapsed_times) {
  evrt_stream_t s = mk();
  evrt_event_t t0 = ev(EVRT_EVENT_TIMING), t1 = ev(EVRT_EVENT_TIMING);
  static uint64_t delay_ns = 3 * MS;
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_record_with_flags(t0, s, EVRT_EVENT_RECORD_EXTERNAL));
  ASSERT_OK(evrt_stream_delay(s, delay_ns));
  ASSERT_OK(evrt_event_record_with_flags(t1, s, EVRT_EVENT_RECORD_EXTERNAL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  /* an external record does not record the event at capture */
  evrt_event_info_t info;
  info.struct_size = sizeof info;
  ASSERT_OK(evrt_event_get_info(t1, &info));
  ASSERT_EQ(info.record_count, 0);
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  uint64_t prev_ts = 0;
  for (int rep = 0; rep < 3; rep++) {
    ASSERT_OK(evrt_graph_launch(x, s));
    ASSERT_OK(evrt_event_synchronize(t1));
    float ms = 0;
    ASSERT_OK(evrt_event_elapsed_time(&ms, t0, t1));
    ASSERT(ms >= 2.9f);
    uint64_t ts;
    ASSERT_OK(evrt_event_timestamp(t0, &ts));
    ASSERT(ts > prev_ts); /* recorded again by this replay */
    prev_ts = ts;
    ASSERT_OK(evrt_event_get_info(t1, &info));
    ASSERT_EQ(info.record_count, (uint64_t)rep + 1);
  }
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(t0);
  evrt_event_destroy(t1);
  evrt_stream_destroy(s);
}

TEST(external_record_is_waited_for_by_a_stream_after_the_launch) {
  /* CANN's model_sync_external scenario 2, natively. */
  evrt_stream_t gs = mk(), ext = mk();
  evrt_event_t e = ev(0);
  static struct log log;
  static struct entry en[2];
  atomic_store(&log.n, 0);
  en[0] = (struct entry){&log, 0};
  en[1] = (struct entry){&log, 1};
  ASSERT_OK(evrt_stream_begin_capture(gs, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(gs, wait_gate, NULL));
  ASSERT_OK(evrt_launch_host_func(gs, append, &en[0]));
  ASSERT_OK(evrt_event_record_with_flags(e, gs, EVRT_EVENT_RECORD_EXTERNAL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(gs, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_graph_launch(x, gs));
  /* the launch made the record: this wait binds to it */
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_wait_event(ext, e));
  ASSERT_OK(evrt_launch_host_func(ext, append, &en[1]));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&log.n), 0);
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(ext));
  ASSERT_EQ(atomic_load(&log.n), 2);
  ASSERT_EQ(log.v[0], 0);
  ASSERT_EQ(log.v[1], 1);
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_stream_synchronize(gs));
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(gs);
  evrt_stream_destroy(ext);
}

TEST(external_wait_waits_for_the_generation_current_at_launch) {
  /* scenarios 1 and 3: a stream's record, and another graph's record */
  evrt_stream_t g1s = mk(), g2s = mk(), ext = mk();
  evrt_event_t e = ev(0);
  static struct log log;
  static struct entry en[3];
  atomic_store(&log.n, 0);
  for (int i = 0; i < 3; i++)
    en[i] = (struct entry){&log, i};
  ASSERT_OK(evrt_stream_begin_capture(g1s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(g1s, wait_gate, NULL));
  ASSERT_OK(evrt_launch_host_func(g1s, append, &en[0]));
  ASSERT_OK(evrt_event_record_with_flags(e, g1s, EVRT_EVENT_RECORD_EXTERNAL));
  evrt_graph_t ga;
  ASSERT_OK(evrt_stream_end_capture(g1s, &ga));
  ASSERT_OK(evrt_stream_begin_capture(g2s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(
      evrt_stream_wait_event_with_flags(g2s, e, EVRT_EVENT_WAIT_EXTERNAL));
  ASSERT_OK(evrt_launch_host_func(g2s, append, &en[1]));
  evrt_graph_t gb;
  ASSERT_OK(evrt_stream_end_capture(g2s, &gb));
  evrt_graph_exec_t xa, xb;
  ASSERT_OK(evrt_graph_instantiate(&xa, ga));
  ASSERT_OK(evrt_graph_instantiate(&xb, gb));
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_graph_launch(xa, g1s));
  ASSERT_OK(evrt_graph_launch(xb, g2s));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&log.n), 0);
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(g2s));
  ASSERT_EQ(atomic_load(&log.n), 2);
  ASSERT_EQ(log.v[0], 0);
  ASSERT_EQ(log.v[1], 1);
  /* a record made on a stream before the launch: scenario 1 */
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_launch_host_func(ext, wait_gate, NULL));
  ASSERT_OK(evrt_launch_host_func(ext, append, &en[2]));
  ASSERT_OK(evrt_event_record(e, ext));
  ASSERT_OK(evrt_graph_launch(xb, g2s));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&log.n), 2);
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(g2s));
  ASSERT_EQ(atomic_load(&log.n), 4);
  ASSERT_EQ(log.v[2], 2);
  ASSERT_EQ(log.v[3], 1);
  ASSERT_OK(evrt_stream_synchronize(g1s));
  ASSERT_OK(evrt_graph_exec_destroy(xa));
  ASSERT_OK(evrt_graph_exec_destroy(xb));
  ASSERT_OK(evrt_graph_destroy(ga));
  ASSERT_OK(evrt_graph_destroy(gb));
  evrt_event_destroy(e);
  evrt_stream_destroy(g1s);
  evrt_stream_destroy(g2s);
  evrt_stream_destroy(ext);
}

TEST(reset_node_resets_the_event_each_replay) {
  evrt_stream_t s = mk(), o = mk();
  evrt_event_t e = ev(0);
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_event_reset(e, s)); /* never recorded: fine in a capture */
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  for (int rep = 0; rep < 2; rep++) {
    ASSERT_OK(evrt_event_record(e, o));
    ASSERT_OK(evrt_stream_synchronize(o));
    evrt_event_info_t info;
    info.struct_size = sizeof info;
    ASSERT_OK(evrt_event_get_info(e, &info));
    ASSERT_EQ(info.state, EVRT_EVENT_STATE_COMPLETE);
    ASSERT_OK(evrt_graph_launch(x, s));
    ASSERT_OK(evrt_stream_synchronize(s));
    ASSERT_OK(evrt_event_get_info(e, &info));
    ASSERT_EQ(info.state, EVRT_EVENT_STATE_UNRECORDED);
  }
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_event_destroy(e);
  evrt_stream_destroy(s);
  evrt_stream_destroy(o);
}

/* Labels: switch(index) label 0: a; label 1: b.  index 1 skips a. */
TEST(switch_by_index_jumps_to_its_label) {
  evrt_stream_t s = mk();
  static uint32_t index;
  static struct log log;
  static struct entry en[3];
  for (int i = 0; i < 3; i++)
    en[i] = (struct entry){&log, i};
  const uint64_t labels[2] = {100, 200};
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_capture_switch(s, &index, labels, 2));
  ASSERT_OK(evrt_stream_capture_label(s, 100));
  ASSERT_OK(evrt_launch_host_func(s, append, &en[0]));
  ASSERT_OK(evrt_stream_capture_label(s, 200));
  ASSERT_OK(evrt_launch_host_func(s, append, &en[1]));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  const uint32_t idx[3] = {1, 0, 7};
  const int want_n[3] = {1, 2, 1};
  for (int k = 0; k < 3; k++) {
    index = idx[k]; /* read when the graph runs */
    atomic_store(&log.n, 0);
    ASSERT_OK(evrt_graph_launch(x, s));
    ASSERT_OK(evrt_stream_synchronize(s));
    ASSERT_EQ(atomic_load(&log.n), want_n[k]);
    ASSERT_EQ(log.v[want_n[k] - 1], 1);
    if (want_n[k] == 2)
      ASSERT_EQ(log.v[0], 0);
  }
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s);
}

TEST(switch_to_a_label_not_set_later_fails_instantiation) {
  evrt_stream_t s = mk();
  static uint32_t index;
  const uint64_t labels[1] = {7};
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_stream_capture_label(s, 7)); /* before: not a target */
  ASSERT_OK(evrt_stream_capture_switch(s, &index, labels, 1));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x = NULL;
  ASSERT_ST(evrt_graph_instantiate(&x, g), EVRT_ERROR_INVALID_VALUE);
  ASSERT(x == NULL);
  ASSERT_ST(evrt_stream_capture_label(s, 1), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_ST(evrt_stream_capture_switch(s, NULL, labels, 1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s);
}

TEST(graph_and_exec_handles_are_validated) {
  evrt_stream_t s = mk();
  atomic_int runs = 0;
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(s, bump, &runs));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  size_t n;
  ASSERT_ST(evrt_graph_node_count(NULL, &n), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_node_count(g, NULL), EVRT_ERROR_INVALID_VALUE);
  /* an exec handle is not a graph handle and vice versa */
  ASSERT_ST(evrt_graph_node_count((evrt_graph_t)x, &n),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_launch((evrt_graph_exec_t)g, s),
            EVRT_ERROR_INVALID_HANDLE);
  /* NULL is the current device's default stream (evrt.h) */
  ASSERT_OK(evrt_graph_launch(x, NULL));
  ASSERT_OK(evrt_stream_synchronize(NULL));
  ASSERT_EQ(atomic_load(&runs), 1);
  ASSERT_ST(evrt_graph_launch((evrt_graph_exec_t)s, s),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_instantiate(NULL, g), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_graph_destroy((evrt_graph_t)(uintptr_t)0x12345673u),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_ST(evrt_graph_exec_destroy(x), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_launch(x, s), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_OK(evrt_graph_destroy(g));
  ASSERT_ST(evrt_graph_destroy(g), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_graph_instantiate(&x, g), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_stream_end_capture(s, NULL), EVRT_ERROR_INVALID_VALUE);
  evrt_stream_destroy(s);
}

static atomic_int slow_runs;
static void slow(void *p) {
  (void)p;
  sleep_ms(2);
  atomic_fetch_add(&slow_runs, 1);
}

TEST(exec_destroyed_with_launches_in_flight_completes_them) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  ASSERT_OK(evrt_launch_host_func(s, slow, NULL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_graph_destroy(g));
  atomic_store(&slow_runs, 0);
  for (int i = 0; i < 10; i++)
    ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_graph_exec_destroy(x)); /* returns at once */
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&slow_runs), 10);
  evrt_stream_destroy(s);
}

TEST(empty_capture_gives_an_empty_graph_that_launches) {
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_GLOBAL));
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  size_t n = 9;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 0);
  evrt_graph_exec_t x;
  ASSERT_OK(evrt_graph_instantiate(&x, g));
  ASSERT_OK(evrt_graph_launch(x, s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_graph_exec_destroy(x));
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s);
}

TEST(dot_print_writes_nodes_edges_and_a_cluster_per_stream) {
  evrt_stream_t s0 = mk(), s1 = mk(), s2 = mk();
  evrt_graph_t g = capture_fork_join(s0, s1, s2);
  ASSERT(g != NULL);
  char path[] = "/tmp/evrt-capture-dot-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  ASSERT_OK(evrt_graph_debug_dot_print(g, path));
  FILE *f = fopen(path, "r");
  ASSERT(f != NULL);
  char line[512];
  int nodes = 0, edges = 0, clusters = 0, digraph = 0;
  while (fgets(line, sizeof line, f)) {
    digraph += strncmp(line, "digraph", 7) == 0;
    clusters += strstr(line, "subgraph cluster_") != NULL;
    edges += strstr(line, " -> ") != NULL;
    nodes += strstr(line, "[shape=") != NULL;
  }
  fclose(f);
  unlink(path);
  ASSERT_EQ(digraph, 1);
  ASSERT_EQ(clusters, 3);
  ASSERT_EQ(nodes, 22);
  /* s0's first node -> 2 branch heads, 9 + 9 in-branch edges, and the
   * last node depends on s0's tail: the first node and both branch ends
   * (a wait adds to a stream's dependencies, as in CUDA) */
  ASSERT_EQ(edges, 23);
  ASSERT_ST(evrt_graph_debug_dot_print(g, "/nonexistent-dir/x.dot"),
            EVRT_ERROR_SYSTEM);
  ASSERT_ST(evrt_graph_debug_dot_print(g, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s0);
  evrt_stream_destroy(s1);
  evrt_stream_destroy(s2);
}

/* Several threads enqueue into one capturing stream, and several launch
 * one executable graph while another destroys it: counts add up, nothing
 * races (the sanitizer builds run this). */
struct par {
  evrt_stream_t s;
  evrt_graph_exec_t x;
  atomic_int *cnt;
};
static void *enqueue_many(void *p) {
  struct par *a = p;
  for (int i = 0; i < 200; i++)
    if (evrt_launch_host_func(a->s, bump, a->cnt))
      abort();
  return NULL;
}
static void *launch_many(void *p) {
  struct par *a = p;
  evrt_stream_t s = mk();
  for (int i = 0; i < 50; i++)
    if (evrt_graph_launch(a->x, s) != EVRT_SUCCESS)
      break; /* destroyed meanwhile */
  evrt_stream_synchronize(s);
  evrt_stream_destroy(s);
  return NULL;
}

TEST(concurrent_capture_and_launch) {
  static atomic_int cnt;
  atomic_store(&cnt, 0);
  evrt_stream_t s = mk();
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_RELAXED));
  pthread_t t[4];
  struct par a = {s, NULL, &cnt};
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, enqueue_many, &a);
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  size_t n;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 800);
  ASSERT_EQ(atomic_load(&cnt), 0);
  ASSERT_OK(evrt_graph_instantiate(&a.x, g));
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, launch_many, &a);
  sleep_ms(5);
  ASSERT_OK(evrt_graph_exec_destroy(a.x));
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  ASSERT_EQ(atomic_load(&cnt) % 800, 0);
  ASSERT_OK(evrt_graph_destroy(g));
  evrt_stream_destroy(s);
}

/* Executable graphs destroyed right after their one launch: the launch's
 * END, on the origin's lane, drops the last reference as soon as the last
 * forked lane has run, which can be while the worker that gave the lanes
 * their items is still in its loop (it read the freed graph; ThreadSanitizer
 * saw it under load).  Under the sanitizers any such access is a report;
 * here every launch must also have run all its nodes. */
TEST(exec_destroyed_while_its_launch_fills_the_lanes) {
  static atomic_int cnt;
  atomic_store(&cnt, 0);
  enum { SIDE = 3, ROUNDS = 200 };
  evrt_stream_t s = mk(), side[SIDE], L = mk();
  evrt_event_t fork = ev(0), join[SIDE];
  for (int k = 0; k < SIDE; k++) {
    side[k] = mk();
    join[k] = ev(0);
  }
  ASSERT_OK(evrt_stream_begin_capture(s, EVRT_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(evrt_launch_host_func(s, bump, &cnt));
  ASSERT_OK(evrt_event_record(fork, s));
  for (int k = 0; k < SIDE; k++) {
    ASSERT_OK(evrt_stream_wait_event(side[k], fork));
    ASSERT_OK(evrt_launch_host_func(side[k], bump, &cnt));
    ASSERT_OK(evrt_event_record(join[k], side[k]));
    ASSERT_OK(evrt_stream_wait_event(s, join[k]));
  }
  evrt_graph_t g;
  ASSERT_OK(evrt_stream_end_capture(s, &g));
  for (int r = 0; r < ROUNDS; r++) {
    evrt_graph_exec_t x;
    ASSERT_OK(evrt_graph_instantiate(&x, g));
    ASSERT_OK(evrt_graph_launch(x, L));
    ASSERT_OK(evrt_graph_exec_destroy(x));
  }
  ASSERT_OK(evrt_stream_synchronize(L));
  ASSERT_EQ(atomic_load(&cnt), ROUNDS * (1 + SIDE));
  ASSERT_OK(evrt_graph_destroy(g));
  for (int k = 0; k < SIDE; k++) {
    evrt_stream_destroy(side[k]);
    evrt_event_destroy(join[k]);
  }
  evrt_event_destroy(fork);
  evrt_stream_destroy(s);
  evrt_stream_destroy(L);
}

/* A random DAG over 4 streams (host functions, records, waits, forks and
 * joins), captured and replayed: every node runs after everything it
 * depends on.  The test keeps the dependencies itself, as the capture
 * rules define them (a node depends on its stream's tail; a wait adds the
 * event's tail), and checks the order each node ran in. */
#define RN 400
static atomic_int ticket;
static int ran_at[RN];
static void stamp(void *p) {
  ran_at[(intptr_t)p] = atomic_fetch_add(&ticket, 1);
}

TEST(random_dags_replay_in_dependency_order) {
  enum { S = 4, E = 6 };
  static uint8_t dep[RN][RN]; /* dep[i][j]: node i depends on node j */
  unsigned seed = 12345;
  for (int round = 0; round < 5; round++) {
    memset(dep, 0, sizeof dep);
    evrt_stream_t s[S];
    evrt_event_t e[E];
    for (int k = 0; k < S; k++)
      s[k] = mk();
    for (int k = 0; k < E; k++)
      e[k] = ev(0);
    /* tails as bitsets over nodes; in[k]: stream k joined the capture */
    static uint8_t tail[S][RN], etail[E][RN];
    memset(tail, 0, sizeof tail);
    memset(etail, 0, sizeof etail);
    int ein[E] = {0}, in[S] = {1, 0, 0, 0}, n = 0;
    ASSERT_OK(evrt_stream_begin_capture(s[0], EVRT_CAPTURE_MODE_RELAXED));
    while (n < RN - S) {
      seed = seed * 1103515245u + 12345u;
      int r = (int)(seed >> 16) % 10, k = (int)(seed >> 8) % S,
          x = (int)(seed >> 4) % E;
      if (!in[k])
        continue;
      if (r < 6) { /* a node */
        ASSERT_OK(evrt_launch_host_func(s[k], stamp, (void *)(intptr_t)n));
        for (int j = 0; j < n; j++)
          dep[n][j] = tail[k][j];
        memset(tail[k], 0, RN);
        tail[k][n++] = 1;
      } else if (r < 8) { /* record on k */
        ASSERT_OK(evrt_event_record(e[x], s[k]));
        memcpy(etail[x], tail[k], RN);
        ein[x] = 1;
      } else if (ein[x]) { /* some stream waits on x (may fork it in) */
        int w = (int)(seed >> 20) % S;
        ASSERT_OK(evrt_stream_wait_event(s[w], e[x]));
        for (int j = 0; j < RN; j++)
          tail[w][j] |= etail[x][j];
        in[w] = 1;
      }
    }
    /* join every stream back, then one last node on the origin */
    for (int k = 1; k < S; k++)
      if (in[k]) {
        ASSERT_OK(evrt_event_record(e[0], s[k]));
        ASSERT_OK(evrt_stream_wait_event(s[0], e[0]));
        for (int j = 0; j < RN; j++)
          tail[0][j] |= tail[k][j];
      }
    ASSERT_OK(evrt_launch_host_func(s[0], stamp, (void *)(intptr_t)n));
    for (int j = 0; j < n; j++)
      dep[n][j] = tail[0][j];
    n++;
    evrt_graph_t g;
    ASSERT_OK(evrt_stream_end_capture(s[0], &g));
    size_t cnt;
    ASSERT_OK(evrt_graph_node_count(g, &cnt));
    ASSERT_EQ(cnt, n);
    evrt_graph_exec_t xg;
    ASSERT_OK(evrt_graph_instantiate(&xg, g));
    for (int rep = 0; rep < 3; rep++) {
      atomic_store(&ticket, 0);
      for (int i = 0; i < n; i++)
        ran_at[i] = -1;
      ASSERT_OK(evrt_graph_launch(xg, s[1]));
      ASSERT_OK(evrt_stream_synchronize(s[1]));
      ASSERT_EQ(atomic_load(&ticket), n);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
          if (dep[i][j] && ran_at[j] > ran_at[i])
            FAIL_("round %d: node %d ran before its dependency %d", round, i,
                  j);
    }
    ASSERT_OK(evrt_graph_exec_destroy(xg));
    ASSERT_OK(evrt_graph_destroy(g));
    for (int k = 0; k < S; k++)
      evrt_stream_destroy(s[k]);
    for (int k = 0; k < E; k++)
      evrt_event_destroy(e[k]);
  }
}
