/*
 * fanout_fanin.c - one event waited on by 1,000 streams, each recording an
 * event that the host then waits on (all 1,000 of them).
 *
 * Stream S0 is held by a gate host function; e0 is recorded behind it.  Each
 * of the 1,000 streams waits on e0 and records its own event.  The gate
 * takes t0 as it returns; the host synchronizes every event and takes t1.
 * One operation = t1 - t0 (the whole fan-out and fan-in).
 *
 * Baseline: the floor of the same dependency shape on this machine's two
 * cores: two threads (parked on a futex, like evrt's workers) are released
 * by one FUTEX_WAKE, each marks its half of 1,000 completion flags with a
 * release store, and the host spins until it has seen all of them.
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>

#define N BENCH_FANOUT_STREAMS

static _Alignas(64) atomic_uint gate;
static atomic_uint gate_nw;
static atomic_uint_least64_t gate_t0;

static void gate_fn(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
  atomic_store_explicit(&gate_t0, bench_now_ns(), memory_order_relaxed);
}

double evrt_case_fanout(void *ctx, long iters) {
  static evrt_stream_t s0, s[N];
  static evrt_event_t e0, e[N];
  (void)ctx;
  if (!s0) {
    BENCH_CHECK(evrt_stream_create(&s0, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&e0, EVRT_EVENT_DEFAULT));
    for (int i = 0; i < N; i++) {
      BENCH_CHECK(evrt_stream_create(&s[i], 0, 0, 0));
      BENCH_CHECK(evrt_event_create(&e[i], EVRT_EVENT_DEFAULT));
    }
  }
  double sum = 0;
  for (long k = 0; k < iters; k++) {
    atomic_store(&gate, 0);
    BENCH_CHECK(evrt_launch_host_func(s0, gate_fn, NULL));
    BENCH_CHECK(evrt_event_record(e0, s0));
    for (int i = 0; i < N; i++) {
      BENCH_CHECK(evrt_stream_wait_event(s[i], e0));
      BENCH_CHECK(evrt_event_record(e[i], s[i]));
    }
    bench_post(&gate, 1, &gate_nw, 0);
    for (int i = 0; i < N; i++)
      BENCH_CHECK(evrt_event_synchronize(e[i]));
    uint64_t t1 = bench_now_ns();
    sum += (double)(t1 - atomic_load_explicit(&gate_t0, memory_order_relaxed));
  }
  return sum / (double)iters;
}

/* ------------------------------------------------------------ baseline */

static struct {
  _Alignas(64) atomic_uint go;
  atomic_uint go_nw;
  _Alignas(64) atomic_uint flag[N];
  long n;
} F;

static void *half(void *arg) {
  int lo = (int)(intptr_t)arg * (N / 2), hi = lo + N / 2;
  unsigned seen = 0;
  for (long k = 0; k < F.n; k++) {
    seen = bench_wait_change(&F.go, seen, 0, &F.go_nw, 0);
    for (int i = lo; i < hi; i++)
      atomic_store_explicit(&F.flag[i], seen, memory_order_release);
  }
  return NULL;
}

static double base_fanout(void *ctx, long iters) {
  (void)ctx;
  F.n = iters;
  atomic_store(&F.go, 0);
  for (int i = 0; i < N; i++)
    atomic_store(&F.flag[i], 0);
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    pthread_create(&th[t], NULL, half, (void *)(intptr_t)t);
  double sum = 0;
  for (long k = 0; k < iters; k++) {
    /* let both threads reach their futex wait, as evrt's workers would be
     * parked or spinning when the gate opens */
    bench_spin_ns(20000);
    unsigned v = (unsigned)k + 1;
    uint64_t t0 = bench_now_ns();
    bench_post(&F.go, v, &F.go_nw, 0);
    for (int i = 0; i < N; i++)
      while (atomic_load_explicit(&F.flag[i], memory_order_acquire) != v)
        bench_relax();
    sum += (double)(bench_now_ns() - t0);
  }
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  return sum / (double)iters;
}

int scenario_fanout_fanin(void) {
  bench_title("fanout_fanin", "one event waited on by 1,000 streams, each "
                              "recording an event the host waits on");
  struct bench_case cs[] = {
      {.name = "evrt fanout_fanin (1000 streams)", .fn = evrt_case_fanout},
      {.name = "futex_fanout_2threads", .fn = base_fanout},
  };
  bench_run(cs, 2, "ns");
  bench_note("evrt: %.0f ns per dependent stream", cs[0].median / N);
  bench_compare("fanout_fanin", NULL, &cs[0], &cs[1],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  return 0;
}
