/*
 * query_pending.c - evrt_event_query of a pending event.
 *
 * The event is recorded behind a host function that blocks on a futex (its
 * worker sleeps, so the measurement has both cores), and is queried until
 * the scenario ends.  Baseline: one acquire load of a shared word.
 */
#include "bench.h"

#include "evrt.h"

static atomic_uint word, gate, gate_nw;

static double base_acquire_load(void *ctx, long iters) {
  (void)ctx;
  unsigned sum = 0;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    sum += atomic_load_explicit(&word, memory_order_acquire);
  double r = (double)(bench_now_ns() - t0) / (double)iters;
  __asm__ __volatile__("" ::"r"(sum));
  return r;
}

static void block_until_open(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
}

static evrt_event_t pending;

static double evrt_query_pending(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    if (evrt_event_query(pending) != EVRT_NOT_READY)
      bench_die(__FILE__, __LINE__, "evrt_event_query (pending)", -1);
  return (double)(bench_now_ns() - t0) / (double)iters;
}

int scenario_query_pending(void) {
  evrt_stream_t s;
  BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
  BENCH_CHECK(evrt_event_create(&pending, EVRT_EVENT_DEFAULT));
  BENCH_CHECK(evrt_launch_host_func(s, block_until_open, NULL));
  BENCH_CHECK(evrt_event_record(pending, s));
  bench_title("query_pending", "evrt_event_query of a pending event");
  struct bench_case cs[] = {
      {.name = "evrt query (pending)", .fn = evrt_query_pending},
      {.name = "acquire_load", .fn = base_acquire_load},
  };
  bench_run(cs, 2, "ns");
  bench_compare("query_pending", NULL, &cs[0], &cs[1],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_post(&gate, 1, &gate_nw, 0);
  BENCH_CHECK(evrt_event_synchronize(pending));
  BENCH_CHECK(evrt_event_destroy(pending));
  BENCH_CHECK(evrt_stream_destroy(s));
  return 0;
}
