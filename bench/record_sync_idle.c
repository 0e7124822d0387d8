/*
 * record_sync_idle.c - evrt_event_record then evrt_event_synchronize on an
 * idle stream.
 *
 * The generation is empty, so synchronize returns at once: no worker, no
 * wake-up, no system call.  Baseline: one spinning hand-off round trip
 * between two threads (the cheapest way another thread could have taken part
 * in the operation); the peers (PoCL: marker + clWaitForEvents) are measured
 * in the same shape by opencl_pocl.
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>

double evrt_case_record_sync_idle(void *ctx, long iters) {
  static evrt_stream_t s;
  static evrt_event_t e;
  (void)ctx;
  if (!s) {
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&e, EVRT_EVENT_DEFAULT));
  }
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_event_record(e, s));
    BENCH_CHECK(evrt_event_synchronize(e));
  }
  return (double)(bench_now_ns() - t0) / (double)iters;
}

static double stream_sync_idle(void *ctx, long iters) {
  static evrt_stream_t s;
  (void)ctx;
  if (!s)
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_stream_synchronize(s));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

/* Spinning round trip: the main thread posts n, the echo thread answers n. */
static struct {
  _Alignas(64) atomic_uint ping;
  _Alignas(64) atomic_uint pong;
  atomic_bool stop;
} rt;

static void *echo_main(void *arg) {
  (void)arg;
  unsigned last = 0;
  for (;;) {
    unsigned v;
    while ((v = atomic_load_explicit(&rt.ping, memory_order_acquire)) == last) {
      if (atomic_load_explicit(&rt.stop, memory_order_relaxed))
        return NULL;
      bench_relax();
    }
    last = v;
    atomic_store_explicit(&rt.pong, v, memory_order_release);
  }
}

/* One sample: start the echo thread, time the round trips, stop it.  The
 * echo thread spins only during its own samples: left running, it would
 * steal a core from evrt's samples on this 2-core machine. */
static double spin_roundtrip(void *ctx, long iters) {
  (void)ctx;
  pthread_t th;
  atomic_store(&rt.stop, false);
  atomic_store(&rt.ping, 0);
  atomic_store(&rt.pong, 0);
  pthread_create(&th, NULL, echo_main, NULL);
  unsigned v = 0;
  /* first exchange untimed: the thread is running */
  atomic_store_explicit(&rt.ping, ++v, memory_order_release);
  while (atomic_load_explicit(&rt.pong, memory_order_acquire) != v)
    bench_relax();
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++) {
    v++;
    atomic_store_explicit(&rt.ping, v, memory_order_release);
    while (atomic_load_explicit(&rt.pong, memory_order_acquire) != v)
      bench_relax();
  }
  double r = (double)(bench_now_ns() - t0) / (double)iters;
  atomic_store(&rt.stop, true);
  pthread_join(th, NULL);
  return r;
}

int scenario_record_sync_idle(void) {
  bench_title("record_sync_idle", "record + synchronize on an idle stream");
  struct bench_case cs[] = {
      {.name = "evrt record+synchronize", .fn = evrt_case_record_sync_idle},
      {.name = "evrt stream_synchronize (idle)", .fn = stream_sync_idle},
      {.name = "spin_roundtrip", .fn = spin_roundtrip},
  };
  bench_run(cs, 3, "ns");
  bench_compare("record_sync_idle", NULL, &cs[0], &cs[2],
                (struct bench_target){BT_ABS_LE, 1000, "<= 1 us"}, NULL);
  bench_compare_values("record_sync_idle", "vs HIP-CPU reference",
                       "evrt record+synchronize", cs[0].median,
                       "hipcpu_reference_45us", 45000.0,
                       (struct bench_target){BT_RATIO_LE, 1.0 / 25,
                                             ">= 25x ahead of HIP-CPU (45 us, "
                                             "peers-measured.md, not this run)"},
                       NULL);
  bench_note("PoCL in the same shape: opencl_pocl/record_sync_idle");
  return 0;
}
