/*
 * hostfunc_throughput.c - empty host functions through one stream and
 * through 64 streams: the host enqueues N of them (round robin over the
 * streams) and synchronizes; one sample = elapsed / N per item (enqueue and
 * execution overlap, as in a real producer).
 *
 * Baseline: an SPSC ring between two threads, the producer publishing each
 * item (function pointer + argument) with its own release store and the
 * consumer calling it: the floor of handing work items one by one to
 * another thread.  The consumer is started and joined around each sample.
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>
#include <stdio.h>

#define NSTREAMS 64

static void empty_fn(void *arg) { (void)arg; }

static double run_streams(evrt_stream_t *s, int ns, long iters) {
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    BENCH_CHECK(evrt_launch_host_func(s[i % ns], empty_fn, NULL));
  for (int k = 0; k < ns; k++)
    BENCH_CHECK(evrt_stream_synchronize(s[k]));
  return (double)(bench_now_ns() - t0) / (double)iters;
}

double evrt_case_hostfunc_one(void *ctx, long iters) {
  static evrt_stream_t s;
  (void)ctx;
  if (!s)
    BENCH_CHECK(evrt_stream_create(&s, 0, 0, 0));
  return run_streams(&s, 1, iters);
}

static double evrt_many(void *ctx, long iters) {
  static evrt_stream_t s[NSTREAMS];
  (void)ctx;
  if (!s[0])
    for (int k = 0; k < NSTREAMS; k++)
      BENCH_CHECK(evrt_stream_create(&s[k], 0, 0, 0));
  return run_streams(s, NSTREAMS, iters);
}

/* ------------------------------------------------------------ SPSC ring */

#define RING 1024
struct slot {
  void (*fn)(void *);
  void *arg;
};
static struct {
  struct slot slots[RING];
  _Alignas(64) atomic_ulong tail; /* written by the producer */
  _Alignas(64) atomic_ulong head; /* written by the consumer */
  long n;
  atomic_bool running;
} R;

static void *consumer(void *arg) {
  (void)arg;
  atomic_store_explicit(&R.running, true, memory_order_release);
  unsigned long h = 0;
  for (long done = 0; done < R.n;) {
    /* acquire: the slot's contents were written before the tail store */
    unsigned long t = atomic_load_explicit(&R.tail, memory_order_acquire);
    if (t == h) {
      bench_relax();
      continue;
    }
    for (; h != t; h++, done++) {
      struct slot *sl = &R.slots[h % RING];
      sl->fn(sl->arg);
      /* release: the producer may reuse the slot after it sees head */
      atomic_store_explicit(&R.head, h + 1, memory_order_release);
    }
  }
  return NULL;
}

static double base_spsc(void *ctx, long iters) {
  (void)ctx;
  R.n = iters;
  atomic_store(&R.tail, 0);
  atomic_store(&R.head, 0);
  atomic_store(&R.running, false);
  pthread_t th;
  pthread_create(&th, NULL, consumer, NULL);
  while (!atomic_load_explicit(&R.running, memory_order_acquire))
    bench_relax();
  uint64_t t0 = bench_now_ns();
  for (unsigned long i = 0; i < (unsigned long)iters; i++) {
    while (i - atomic_load_explicit(&R.head, memory_order_acquire) >= RING)
      bench_relax();
    R.slots[i % RING] = (struct slot){empty_fn, NULL};
    atomic_store_explicit(&R.tail, i + 1, memory_order_release);
  }
  while (atomic_load_explicit(&R.head, memory_order_acquire) !=
         (unsigned long)iters)
    bench_relax();
  uint64_t t1 = bench_now_ns();
  pthread_join(th, NULL);
  return (double)(t1 - t0) / (double)iters;
}

int scenario_hostfunc_throughput(void) {
  bench_title("hostfunc_throughput",
              "empty host functions, per item (enqueue + execute + sync)");
  struct bench_case cs[] = {
      {.name = "evrt host funcs, 1 stream", .fn = evrt_case_hostfunc_one},
      {.name = "evrt host funcs, 64 streams", .fn = evrt_many},
      {.name = "spsc_ring", .fn = base_spsc},
  };
  bench_run(cs, 3, "ns");
  for (int i = 0; i < 3; i++)
    bench_note("%-40s %8.2f M items/s", cs[i].name, 1e3 / cs[i].median);
  char extra[96];
  snprintf(extra, sizeof extra, ", \"items_per_s\": %.0f",
           1e9 / cs[0].median);
  bench_compare("hostfunc_throughput", "1 stream", &cs[0], &cs[2],
                (struct bench_target){BT_ABS_LE, 100,
                                      ">= 10 M items/s (<= 100 ns/item)"},
                extra);
  snprintf(extra, sizeof extra, ", \"items_per_s\": %.0f",
           1e9 / cs[1].median);
  bench_compare("hostfunc_throughput", "64 streams", &cs[1], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, extra);
  return 0;
}
