/*
 * device_after.c - evrt_device_launch_host_func, the call the ACL layer's
 * aclrtFree and the Python package's graph drops make for each deferred
 * release (issue 23, item 4).
 *
 * Two shapes: nothing pending (the function runs on the caller's thread)
 * and behind a busy stream (a host function blocked on a futex holds
 * device 0; each sample queues `iters` releases behind it, then opens it
 * and lets them drain off the clock).  The second is the one the first
 * design paid for quadratically: call k waited on the k-1 hidden streams
 * before it.  Baseline: malloc + free of an item-sized block, the floor of
 * queueing anything.
 */
#include "bench.h"

#include "evrt.h"

#include <stdlib.h>

static double base_malloc_free(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    void *p = malloc(192);
    __asm__ __volatile__("" ::"r"(p) : "memory");
    free(p);
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static atomic_long released;
static void release(void *p) {
  (void)p;
  atomic_fetch_add_explicit(&released, 1, memory_order_relaxed);
}

static double evrt_idle(void *ctx, long iters) {
  (void)ctx;
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, release, NULL));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static atomic_uint gate, gate_nw;
static void block_until_open(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
}

static double evrt_busy(void *ctx, long iters) {
  evrt_stream_t s = ctx;
  atomic_store(&gate, 0);
  BENCH_CHECK(evrt_launch_host_func(s, block_until_open, NULL));
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, release, NULL));
  double r = (double)(bench_now_ns() - t0) / (double)iters;
  bench_post(&gate, 1, &gate_nw, 0);
  BENCH_CHECK(evrt_device_synchronize(0)); /* the releases drain */
  return r;
}

int scenario_device_after(void) {
  evrt_stream_t s;
  BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
  bench_title("device_after",
              "evrt_device_launch_host_func (a deferred release)");
  struct bench_case cs[] = {
      {.name = "evrt release, nothing pending", .fn = evrt_idle},
      {.name = "evrt release behind a busy stream", .fn = evrt_busy,
       .ctx = s, .max_iters = 200000},
      {.name = "malloc_free", .fn = base_malloc_free},
  };
  bench_run(cs, 3, "ns");
  bench_compare("device_after", "nothing pending", &cs[0], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_compare("device_after", "behind a busy stream", &cs[1], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  BENCH_CHECK(evrt_stream_destroy(s));
  return 0;
}
