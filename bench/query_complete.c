/*
 * query_complete.c - evrt_event_query of a completed event.
 *
 * Query reads the event's generation under a seqlock and the source
 * stream's completion counter: loads only, no store to shared memory.
 * Baseline: one acquire load of a shared word (what a query must at least
 * do).
 */
#include "bench.h"

#include "evrt.h"

static atomic_uint word;

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

double evrt_case_query_complete(void *ctx, long iters) {
  static evrt_stream_t s;
  static evrt_event_t e;
  (void)ctx;
  if (!s) {
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
    BENCH_CHECK(evrt_event_record(e, s));
    BENCH_CHECK(evrt_event_synchronize(e));
  }
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_event_query(e));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double never_recorded(void *ctx, long iters) {
  static evrt_event_t e;
  (void)ctx;
  if (!e)
    BENCH_CHECK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_event_query(e));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

int scenario_query_complete(void) {
  bench_title("query_complete", "evrt_event_query of a completed event");
  struct bench_case cs[] = {
      {.name = "evrt query (complete)", .fn = evrt_case_query_complete},
      {.name = "evrt query (never recorded)", .fn = never_recorded},
      {.name = "acquire_load", .fn = base_acquire_load},
  };
  bench_run(cs, 3, "ns");
  bench_compare("query_complete", NULL, &cs[0], &cs[2],
                (struct bench_target){BT_ABS_LE, 10, "<= 10 ns"}, NULL);
  bench_compare("query_complete", "never recorded", &cs[1], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  return 0;
}
