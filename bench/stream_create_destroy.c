/*
 * stream_create_destroy.c - evrt_stream_create + evrt_stream_destroy.
 *
 * A stream is a slot in a type-stable table multiplexed on the worker pool:
 * no thread is created.  Baselines: malloc + free (the floor of creating any
 * object) and pthread_create + pthread_join (what a thread-per-stream design
 * pays).
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>
#include <stdlib.h>

static double base_malloc_free(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    void *p = malloc(512);
    __asm__ __volatile__("" ::"r"(p) : "memory");
    free(p);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static void *nothing(void *arg) { return arg; }

static double base_thread(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    pthread_t th;
    pthread_create(&th, NULL, nothing, NULL);
    pthread_join(th, NULL);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double evrt_stream_cd(void *ctx, long iters) {
  (void)ctx;
  evrt_stream_t s;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
    BENCH_CHECK(evrt_stream_destroy(s));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

int scenario_stream_create_destroy(void) {
  bench_title("stream_create_destroy",
              "evrt_stream_create + evrt_stream_destroy");
  struct bench_case cs[] = {
      {.name = "evrt stream create+destroy", .fn = evrt_stream_cd},
      {.name = "malloc_free", .fn = base_malloc_free},
      {.name = "thread_create_join", .fn = base_thread, .max_iters = 2000},
  };
  bench_run(cs, 3, "ns");
  bench_compare("stream_create_destroy", NULL, &cs[0], &cs[1],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_compare("stream_create_destroy", "vs thread per stream", &cs[0],
                &cs[2], (struct bench_target){BT_NONE, 0, NULL}, NULL);
  return 0;
}
