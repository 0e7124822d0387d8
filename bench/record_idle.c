/*
 * record_idle.c - host cost of evrt_event_record on an idle stream.
 *
 * An idle stream has nothing pending, so the new generation is complete the
 * moment it is made: the record must not enqueue an item or wake a worker.
 * Baseline: one atomic fetch_add on a shared word, the least any call that
 * publishes something to other threads can cost.
 */
#include "bench.h"

#include "evrt.h"

static atomic_ulong counter;

static double base_fetch_add(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    atomic_fetch_add_explicit(&counter, 1, memory_order_seq_cst);
  return (double)(bench_now_ns() - t0) / (double)iters;
}

struct rec_ctx {
  evrt_stream_t s;
  evrt_event_t e;
};

static double rec_loop(void *ctx, long iters) {
  struct rec_ctx *c = ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_event_record(c->e, c->s));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

double evrt_case_record_idle(void *ctx, long iters) {
  static struct rec_ctx c;
  (void)ctx;
  if (!c.s) {
    BENCH_CHECK(evrt_stream_create(&c.s, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&c.e, EVRT_EVENT_DEFAULT));
  }
  return rec_loop(&c, iters);
}

int scenario_record_idle(void) {
  struct rec_ctx timing;
  BENCH_CHECK(evrt_stream_create(&timing.s, 0, 0, 0));
  BENCH_CHECK(evrt_event_create(&timing.e, EVRT_EVENT_TIMING));
  bench_title("record_idle", "evrt_event_record on an idle stream, host cost "
                             "per call");
  struct bench_case cs[] = {
      {.name = "evrt record (default event)", .fn = evrt_case_record_idle},
      {.name = "evrt record (timing event)", .fn = rec_loop, .ctx = &timing},
      {.name = "atomic_fetch_add", .fn = base_fetch_add},
  };
  bench_run(cs, 3, "ns");
  bench_compare("record_idle", "default", &cs[0], &cs[2],
                (struct bench_target){BT_ABS_LE, 50, "<= 50 ns median"}, NULL);
  bench_compare("record_idle", "timing", &cs[1], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  BENCH_CHECK(evrt_event_destroy(timing.e));
  BENCH_CHECK(evrt_stream_destroy(timing.s));
  return 0;
}
