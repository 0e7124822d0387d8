/*
 * event_create_destroy.c - evrt_event_create + evrt_event_destroy.
 *
 * Events are created lazily (no backend resource until the first record) and
 * live in type-stable slots recycled through a lock-free free list.
 * Baseline: malloc + free of an object of the same order of size.
 */
#include "bench.h"

#include "evrt.h"

#include <stdlib.h>

static double base_malloc_free(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    void *p = malloc(128);
    /* keep the compiler from pairing the malloc with the free and
     * removing both */
    __asm__ __volatile__("" ::"r"(p) : "memory");
    free(p);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

double evrt_case_event_create_destroy(void *ctx, long iters) {
  (void)ctx;
  evrt_event_t e;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
    BENCH_CHECK(evrt_event_destroy(e));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double create_record_destroy(void *ctx, long iters) {
  static evrt_stream_t s;
  (void)ctx;
  if (!s)
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
  evrt_event_t e;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
    BENCH_CHECK(evrt_event_record(e, s));
    BENCH_CHECK(evrt_event_destroy(e));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

int scenario_event_create_destroy(void) {
  bench_title("event_create_destroy", "evrt_event_create + evrt_event_destroy");
  struct bench_case cs[] = {
      {.name = "evrt create+destroy", .fn = evrt_case_event_create_destroy},
      {.name = "evrt create+record(idle)+destroy", .fn = create_record_destroy},
      {.name = "malloc_free", .fn = base_malloc_free},
  };
  bench_run(cs, 3, "ns");
  bench_compare("event_create_destroy", NULL, &cs[0], &cs[2],
                (struct bench_target){BT_ABS_LE, 30, "<= 30 ns"}, NULL);
  bench_compare("event_create_destroy", "with record", &cs[1], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  return 0;
}
