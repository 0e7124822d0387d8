/*
 * graph_replay.c - stream capture and graph replay (docs/capture.md).
 *
 * The work: empty host functions on 4 streams, in rounds; each round forks
 * the 3 side streams from stream 0 through an event and joins them back
 * through 3 events.  1,000 host functions in 10 rounds is the shape.
 *
 *   direct   the host enqueues that work (functions, records, waits) and
 *            synchronizes stream 0: ns per host function;
 *   replay   the same work captured once into a graph; a sample launches it
 *            and synchronizes: ns per host function.
 * Target: replay < half of direct per node.
 *
 *   launch cost: the host time of evrt_graph_launch alone (the call, not
 *   the run: each launch is synchronized outside the timed part), for the
 *   same shape with 10 nodes and with 10,000 nodes.  Target: the 10,000-node
 *   launch costs no more than 1.5x the 10-node one (no growth with nodes).
 */
#include "bench.h"

#include "evrt.h"

#include <stdio.h>

#define NS 4

static void empty_fn(void *arg) { (void)arg; }

struct shape {
  evrt_stream_t s[NS];
  evrt_event_t fork, join[NS];
  int nodes, rounds;
};

static void shape_init(struct shape *w, int nodes, int rounds) {
  w->nodes = nodes;
  w->rounds = rounds;
  for (int k = 0; k < NS; k++) {
    BENCH_CHECK(evrt_stream_create(&w->s[k], 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&w->join[k], 0));
  }
  BENCH_CHECK(evrt_event_create(&w->fork, 0));
}

/* Enqueue the work once (directly, or into a capture begun on s[0]). */
static void shape_enqueue(struct shape *w) {
  int left = w->nodes;
  for (int r = 0; r < w->rounds; r++) {
    int in_round = left / (w->rounds - r);
    left -= in_round;
    BENCH_CHECK(evrt_event_record(w->fork, w->s[0]));
    for (int k = 1; k < NS; k++)
      BENCH_CHECK(evrt_stream_wait_event(w->s[k], w->fork));
    for (int i = 0; i < in_round; i++)
      BENCH_CHECK(evrt_launch_host_func(w->s[i % NS], empty_fn, NULL));
    for (int k = 1; k < NS; k++) {
      BENCH_CHECK(evrt_event_record(w->join[k], w->s[k]));
      BENCH_CHECK(evrt_stream_wait_event(w->s[0], w->join[k]));
    }
  }
}

static evrt_graph_exec_t shape_capture(struct shape *w) {
  evrt_graph_t g;
  evrt_graph_exec_t x;
  BENCH_CHECK(evrt_stream_begin_capture(w->s[0], EVRT_CAPTURE_MODE_GLOBAL));
  shape_enqueue(w);
  BENCH_CHECK(evrt_stream_end_capture(w->s[0], &g));
  BENCH_CHECK(evrt_graph_instantiate(&x, g));
  BENCH_CHECK(evrt_graph_destroy(g));
  return x;
}

static struct shape W;         /* the 1,000-node shape */
static evrt_graph_exec_t X;    /* its graph */
static evrt_stream_t launch_s; /* where graphs are launched */

/* One operation = the whole work (W.nodes host functions, synchronized):
 * the table's figures are per 1,000 nodes, the notes per node. */
static double direct(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    shape_enqueue(&W);
    BENCH_CHECK(evrt_stream_synchronize(W.s[0]));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double replay(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_graph_launch(X, launch_s));
    BENCH_CHECK(evrt_stream_synchronize(launch_s));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

/* Host time inside evrt_graph_launch, 512 launches a sample (a fixed
 * count: calibration would time the runs, not the calls).  Each timed
 * launch follows an untimed run of one other small graph, so both cases
 * find the workers in the same state: timing launches back to back would
 * time the previous launch's run instead (a long one keeps the launch
 * stream's and the lanes' lines busy on the other core, or lets the
 * workers park), which has nothing to do with the call. */
struct launch_ctx {
  evrt_graph_exec_t x, warm;
};
static double launch_only(void *ctx, long iters) {
  struct launch_ctx *c = ctx;
  uint64_t in_launch = 0;
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_graph_launch(c->warm, launch_s));
    BENCH_CHECK(evrt_stream_synchronize(launch_s));
    uint64_t t0 = bench_now_ns();
    BENCH_CHECK(evrt_graph_launch(c->x, launch_s));
    in_launch += bench_now_ns() - t0;
    BENCH_CHECK(evrt_stream_synchronize(launch_s));
  }
  return (double)in_launch / (double)iters;
}

int scenario_graph_replay(void) {
  bench_title("graph_replay", "1,000 host functions on 4 streams, 10 "
                              "fork/join rounds (one run, synchronized)");
  BENCH_CHECK(evrt_stream_create(&launch_s, 0, 0, 0));
  shape_init(&W, 1000, 10);
  X = shape_capture(&W);
  struct bench_case cs[] = {
      {.name = "evrt graph replay", .fn = replay},
      {.name = "direct enqueue", .fn = direct},
  };
  bench_run(cs, 2, "ns");
  for (int i = 0; i < 2; i++)
    bench_note("%-40s %8.2f ns per node", cs[i].name, cs[i].median / W.nodes);
  bench_compare("graph_replay", "1000 nodes, 4 streams", &cs[0], &cs[1],
                (struct bench_target){BT_RATIO_LE, 0.5,
                                      "replay < half of direct per node"},
                NULL);

  bench_title("graph_launch_cost",
              "host time of one evrt_graph_launch call (4 streams)");
  struct shape small, big;
  shape_init(&small, 10, 1);
  shape_init(&big, 10000, 100);
  /* The warm-up graph is a third executable graph (of the small shape), so
   * that neither timed launch finds its own graph's lines freshly touched
   * by the warm-up: when the small graph warmed itself, only the 10-node
   * case had that advantage. */
  evrt_graph_exec_t xs = shape_capture(&small), xw = shape_capture(&small);
  struct launch_ctx lc_small = {xs, xw};
  struct launch_ctx lc_big = {shape_capture(&big), xw};
  struct bench_case lc[] = {
      {.name = "launch, 10,000 nodes",
       .fn = launch_only,
       .ctx = &lc_big,
       .iters = 512},
      {.name = "launch, 10 nodes",
       .fn = launch_only,
       .ctx = &lc_small,
       .iters = 512},
  };
  bench_run(lc, 2, "ns");
  bench_compare("graph_launch_cost", "10000 vs 10 nodes", &lc[0], &lc[1],
                (struct bench_target){BT_RATIO_LE, 1.5,
                                      "launch host cost does not grow with "
                                      "nodes (10,000 vs 10)"},
                NULL);
  return 0;
}
