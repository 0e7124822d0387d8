/*
 * pingpong_streams.c - streams A and B alternately wait on each other's
 * events, N round trips, one host wait at the end.
 *
 * The host holds A with a gate host function, enqueues the whole chain
 *   record(eA, A); wait(B, eA); record(eB, B); wait(A, eB)    (N times)
 * and opens the gate.  The gate takes t0 as it returns; the host takes t1
 * when synchronize on A returns.  One sample = (t1 - t0) / N.  Every hop
 * goes through the scheduler: a completion resumes the parked stream, a
 * worker takes it, passes its wait and completes it.
 *
 * Baselines: two threads through a futex word, N round trips:
 *   futex_pingpong       spin (evrt's default budget) then FUTEX_WAIT: the
 *                        floor while both sides are active;
 *   futex_pingpong_pure  FUTEX_WAIT at once;
 *   condvar_pingpong     pthread mutex + condition variable.
 * The partner thread lives for the whole scenario, like evrt's workers (a
 * thread created per sample tends to start on its creator's core, and two
 * spinners on one core turn the floor into a 30-60 us futex ping-pong);
 * between its samples it sleeps in FUTEX_WAIT, so it never spins while evrt
 * is measured.  During the baseline samples the two threads are pinned to
 * two different cores (the main thread's mask is restored after each
 * sample): the floor is the hand-off between two active cores, and left
 * unpinned on this loaded 2-core VM the pair often shares one core, which
 * measures the scheduler's time slice instead.
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>
#include <sched.h>

static _Alignas(64) atomic_uint gate;
static atomic_uint gate_nw;
static atomic_uint_least64_t gate_t0;

static void gate_fn(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
  atomic_store_explicit(&gate_t0, bench_now_ns(), memory_order_relaxed);
}

double evrt_case_pingpong(void *ctx, long iters) {
  static evrt_stream_t a, b;
  static evrt_event_t ea, eb;
  (void)ctx;
  if (!a) {
    BENCH_CHECK(evrt_stream_create(&a, 0, 0, 0));
    BENCH_CHECK(evrt_stream_create(&b, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&ea, EVRT_EVENT_DEFAULT));
    BENCH_CHECK(evrt_event_create(&eb, EVRT_EVENT_DEFAULT));
  }
  atomic_store(&gate, 0);
  BENCH_CHECK(evrt_launch_host_func(a, gate_fn, NULL));
  for (long i = 0; i < iters; i++) {
    BENCH_CHECK(evrt_event_record(ea, a));
    BENCH_CHECK(evrt_stream_wait_event(b, ea));
    BENCH_CHECK(evrt_event_record(eb, b));
    BENCH_CHECK(evrt_stream_wait_event(a, eb));
  }
  bench_post(&gate, 1, &gate_nw, 0);
  BENCH_CHECK(evrt_stream_synchronize(a));
  uint64_t t1 = bench_now_ns();
  return (double)(t1 - atomic_load_explicit(&gate_t0, memory_order_relaxed)) /
         (double)iters;
}

/* ---------------------------------------------------------- baselines */

enum { M_SPIN_FUTEX, M_PURE_FUTEX, M_CONDVAR };

static struct {
  _Alignas(64) atomic_uint ping;
  atomic_uint ping_nw;
  _Alignas(64) atomic_uint pong;
  atomic_uint pong_nw;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  unsigned turn; /* condvar form: odd = partner's turn (under mu) */
  long n;
  int mode;
  uint64_t spin;
  _Alignas(64) atomic_uint cmd; /* bumped to start a sample */
  atomic_uint cmd_nw;
  atomic_bool stop;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void partner_sample(void) {
  if (P.mode == M_CONDVAR) {
    pthread_mutex_lock(&P.mu);
    for (long i = 0; i <= P.n; i++) {
      while (!(P.turn & 1))
        pthread_cond_wait(&P.cv, &P.mu);
      P.turn++;
      pthread_cond_signal(&P.cv);
    }
    pthread_mutex_unlock(&P.mu);
    return;
  }
  unsigned v = 0;
  for (long i = 0; i <= P.n; i++) {
    v = bench_wait_change(&P.ping, v, P.spin, &P.ping_nw, 0);
    bench_post(&P.pong, v, &P.pong_nw, 0);
  }
}

static void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % bench_ncpu(), &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *partner(void *arg) {
  (void)arg;
  unsigned seen = 0;
  pin_to(1);
  for (;;) {
    /* parked between samples: FUTEX_WAIT at once, no spinning */
    seen = bench_wait_change(&P.cmd, seen, 0, &P.cmd_nw, 0);
    if (atomic_load(&P.stop))
      return NULL;
    partner_sample();
  }
}

static double base_pingpong(void *ctx, long iters) {
  P.mode = (int)(intptr_t)ctx;
  P.n = iters;
  P.spin = P.mode == M_SPIN_FUTEX ? bench_spin_budget_ns() : 0;
  atomic_store(&P.ping, 0);
  atomic_store(&P.pong, 0);
  P.turn = 0;
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
  pin_to(0);
  /* seq_cst post: the parameters above are visible to the partner */
  bench_post(&P.cmd, atomic_load(&P.cmd) + 1, &P.cmd_nw, 0);
  uint64_t t0 = 0;
  if (P.mode == M_CONDVAR) {
    pthread_mutex_lock(&P.mu);
    for (long i = 0; i <= iters; i++) {
      if (i == 1)
        t0 = bench_now_ns(); /* round 0 only waits for the thread to start */
      P.turn++;
      pthread_cond_signal(&P.cv);
      while (P.turn & 1)
        pthread_cond_wait(&P.cv, &P.mu);
    }
    pthread_mutex_unlock(&P.mu);
  } else {
    for (long i = 0; i <= iters; i++) {
      if (i == 1)
        t0 = bench_now_ns();
      unsigned v = (unsigned)i + 1;
      bench_post(&P.ping, v, &P.ping_nw, 0);
      bench_wait_change(&P.pong, v - 1, P.spin, &P.pong_nw, 0);
    }
  }
  uint64_t t1 = bench_now_ns();
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  return (double)(t1 - t0) / (double)iters;
}

int scenario_pingpong_streams(void) {
  pthread_t th;
  pthread_create(&th, NULL, partner, NULL);
  bench_title("pingpong_streams",
              "A and B alternately wait on each other's events, per round "
              "trip (N round trips, one host wait)");
  struct bench_case cs[] = {
      {.name = "evrt pingpong_streams", .fn = evrt_case_pingpong,
       .max_iters = 200000},
      {.name = "futex_pingpong", .fn = base_pingpong,
       .ctx = (void *)(intptr_t)M_SPIN_FUTEX},
      {.name = "futex_pingpong_pure", .fn = base_pingpong,
       .ctx = (void *)(intptr_t)M_PURE_FUTEX},
      {.name = "condvar_pingpong", .fn = base_pingpong,
       .ctx = (void *)(intptr_t)M_CONDVAR},
  };
  bench_run(cs, 4, "ns");
  /* The spin-then-futex floor is bimodal on this shared VM: a repetition in
   * which another process takes a core degrades it into a futex ping-pong
   * (10-50 us), which would make any evrt figure look "within 2x".  The
   * target is therefore judged on the fastest repetition of each (both at
   * their least disturbed); the medians are printed beside it. */
  bench_compare_values("pingpong_streams", "fastest repetitions",
                       "evrt pingpong_streams (min)", cs[0].min,
                       "futex_pingpong (min)", cs[1].min,
                       (struct bench_target){BT_RATIO_LE, 2.0,
                                             "<= 2x futex_pingpong "
                                             "(spin-then-futex)"},
                       NULL);
  bench_compare("pingpong_streams", NULL, &cs[0], &cs[1],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_compare("pingpong_streams", "vs pure futex", &cs[0], &cs[2],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  bench_compare("pingpong_streams", "vs condvar", &cs[0], &cs[3],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  atomic_store(&P.stop, true);
  bench_post(&P.cmd, atomic_load(&P.cmd) + 1, &P.cmd_nw, 0);
  pthread_join(th, NULL);
  return 0;
}
