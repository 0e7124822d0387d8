/*
 * sync_wake.c - latency from a record executing on a stream to the host
 * thread returning from evrt_event_synchronize, in the default mode (the
 * host spins briefly) and with EVRT_EVENT_BLOCKING_SYNC (the host parks at
 * once), and the CPU a host thread burns while it waits.
 *
 * One operation: the host launches a host function F and records the event
 * behind it, sets `armed` and calls synchronize.  F waits for `armed`, holds
 * on for D ns (so that the host is really spinning, or really asleep, when
 * the record executes), takes t0 and returns; the record completes with F.
 * The host takes t1 on return: latency = t1 - t0.  Each sample is the median
 * of its operations.
 *
 * Baseline, same placement (two unpinned threads, the waker woken from a
 * parked idle loop like an evrt worker): a thread waits for `go`, waits for
 * `armed`, holds on D ns, takes t0 and stores a word; the main thread waits
 * on that word by spinning (spin_handoff) or in FUTEX_WAIT (futex_wake).
 *
 * The host arms only once F has started (F sets `started`), so in the spin
 * variant the host is surely inside synchronize's spin when the record
 * executes 300 ns later, whatever the worker's start-up latency was (that
 * latency belongs to launching, not to waking).  An operation is still
 * dropped when F saw `armed` more than 2 us late (a thread was preempted:
 * the host may have parked, which would measure a futex wake, not a spin).
 */
#include "bench.h"

#include "evrt.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define SPIN_HOLD_NS 300u    /* host is spinning: well within its budget */
#define PARK_HOLD_NS 50000u  /* host is asleep in the kernel by then */
#define LATE_NS 2000u        /* F started this long after armed: drop */
#define MAX_OPS 4096

struct shared {
  _Alignas(64) atomic_uint armed;
  atomic_uint started;
  atomic_uint_least64_t armed_t;
  atomic_uint_least64_t t0;
  atomic_uint late;
  uint64_t hold_ns;
};

struct evrt_ctx {
  evrt_stream_t s;
  evrt_event_t e;
  struct shared sh;
  long dropped, total;
  double lat[MAX_OPS];
};

static void hold_then_stamp(void *arg) {
  struct shared *sh = arg;
  atomic_store_explicit(&sh->started, 1, memory_order_release);
  /* acquire: pairs with the host's release store of armed */
  while (!atomic_load_explicit(&sh->armed, memory_order_acquire))
    bench_relax();
  uint64_t now = bench_now_ns();
  if (now - atomic_load_explicit(&sh->armed_t, memory_order_relaxed) > LATE_NS)
    atomic_store_explicit(&sh->late, 1, memory_order_relaxed);
  bench_spin_ns(sh->hold_ns);
  /* relaxed: published to the host by the stream's completion (release) */
  atomic_store_explicit(&sh->t0, bench_now_ns(), memory_order_relaxed);
}

/* Wait for F to start; yield soon: if the scheduler put F's thread on this
 * core, spinning here would keep it from running for a whole time slice. */
static void wait_started(struct shared *sh) {
  for (unsigned n = 0;
       !atomic_load_explicit(&sh->started, memory_order_acquire); n++) {
    if (n < 64)
      bench_relax();
    else
      sched_yield();
  }
}

static double median_or_zero(double *v, int n) {
  return n ? bench_median(v, n) : 0;
}

static double evrt_wake(void *ctx, long iters) {
  struct evrt_ctx *c = ctx;
  int n = 0;
  bool spin = c->sh.hold_ns == SPIN_HOLD_NS;
  if (iters > MAX_OPS)
    iters = MAX_OPS;
  for (long i = 0; i < iters; i++) {
    atomic_store_explicit(&c->sh.armed, 0, memory_order_relaxed);
    atomic_store_explicit(&c->sh.late, 0, memory_order_relaxed);
    atomic_store_explicit(&c->sh.started, 0, memory_order_relaxed);
    BENCH_CHECK(evrt_launch_host_func(c->s, hold_then_stamp, &c->sh));
    BENCH_CHECK(evrt_event_record(c->e, c->s));
    wait_started(&c->sh);
    atomic_store_explicit(&c->sh.armed_t, bench_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&c->sh.armed, 1, memory_order_release);
    BENCH_CHECK(evrt_event_synchronize(c->e));
    uint64_t t1 = bench_now_ns();
    c->total++;
    if (spin && atomic_load_explicit(&c->sh.late, memory_order_relaxed)) {
      c->dropped++;
      continue;
    }
    c->lat[n++] =
        (double)(t1 - atomic_load_explicit(&c->sh.t0, memory_order_relaxed));
  }
  return median_or_zero(c->lat, n);
}

/* The default-mode long wait runs on a thread of its own, started and
 * joined around each sample: evrt's spin budget adapts per host thread, and
 * waits that always end up parked shrink it, which would leave the main
 * thread's short waits (the spin variant) with no spin at all. */
struct on_thread {
  struct evrt_ctx *c;
  long iters;
  double r;
};
static void *on_thread_main(void *arg) {
  struct on_thread *o = arg;
  o->r = evrt_wake(o->c, o->iters);
  return NULL;
}
static double evrt_wake_own_thread(void *ctx, long iters) {
  struct on_thread o = {ctx, iters, 0};
  pthread_t th;
  pthread_create(&th, NULL, on_thread_main, &o);
  pthread_join(th, NULL);
  return o.r;
}

/* ---------------------------------------------------------- baseline */

static struct {
  _Alignas(64) atomic_uint go;
  atomic_uint go_nw;
  _Alignas(64) atomic_uint done;
  atomic_uint done_nw;
  struct shared sh;
  atomic_bool stop;
  double lat[MAX_OPS];
} B;

static void *waker_main(void *arg) {
  (void)arg;
  unsigned seen = 0;
  uint64_t spin = bench_spin_budget_ns();
  for (;;) {
    /* idle like an evrt worker: spin briefly, then park on the futex */
    seen = bench_wait_change(&B.go, seen, spin, &B.go_nw, 0);
    if (atomic_load_explicit(&B.stop, memory_order_relaxed))
      return NULL;
    hold_then_stamp(&B.sh);
    bench_post(&B.done, seen, &B.done_nw, 0);
  }
}

static double base_wake(void *ctx, long iters) {
  bool spin_wait = ctx != NULL;
  B.sh.hold_ns = spin_wait ? SPIN_HOLD_NS : PARK_HOLD_NS;
  int n = 0;
  if (iters > MAX_OPS)
    iters = MAX_OPS;
  for (long i = 0; i < iters; i++) {
    atomic_store_explicit(&B.sh.armed, 0, memory_order_relaxed);
    atomic_store_explicit(&B.sh.late, 0, memory_order_relaxed);
    unsigned v = atomic_load_explicit(&B.go, memory_order_relaxed) + 1;
    unsigned old = atomic_load_explicit(&B.done, memory_order_relaxed);
    atomic_store_explicit(&B.sh.started, 0, memory_order_relaxed);
    bench_post(&B.go, v, &B.go_nw, 0);
    wait_started(&B.sh);
    atomic_store_explicit(&B.sh.armed_t, bench_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&B.sh.armed, 1, memory_order_release);
    if (spin_wait) {
      while (atomic_load_explicit(&B.done, memory_order_acquire) == old)
        bench_relax();
    } else {
      bench_wait_change(&B.done, old, 0, &B.done_nw, 0);
    }
    uint64_t t1 = bench_now_ns();
    if (spin_wait && atomic_load_explicit(&B.sh.late, memory_order_relaxed))
      continue;
    B.lat[n++] =
        (double)(t1 - atomic_load_explicit(&B.sh.t0, memory_order_relaxed));
  }
  return median_or_zero(B.lat, n);
}

/* ------------------------------------------------------- CPU while waiting */

/* CPU time the host thread burns in one synchronize of an event recorded
 * behind a delay of wait_ns (a delay holds no worker and burns no CPU). */
static void cpu_of_sync(evrt_stream_t s, evrt_event_t e, uint64_t wait_ns,
                        double *cpu, double *wall) {
  BENCH_CHECK(evrt_stream_delay(s, wait_ns));
  BENCH_CHECK(evrt_event_record(e, s));
  uint64_t c0 = bench_thread_cpu_ns(), t0 = bench_now_ns();
  BENCH_CHECK(evrt_event_synchronize(e));
  *cpu = (double)(bench_thread_cpu_ns() - c0);
  *wall = (double)(bench_now_ns() - t0);
}

int scenario_sync_wake(void) {
  static struct evrt_ctx spin_c, park_c, dpark_c;
  struct evrt_ctx *cs3[] = {&spin_c, &park_c, &dpark_c};
  unsigned flags[] = {EVRT_EVENT_DEFAULT, EVRT_EVENT_BLOCKING_SYNC,
                      EVRT_EVENT_DEFAULT};
  uint64_t holds[] = {SPIN_HOLD_NS, PARK_HOLD_NS, PARK_HOLD_NS};
  for (int i = 0; i < 3; i++) {
    BENCH_CHECK(evrt_stream_create(&cs3[i]->s, 0, 0, 0));
    BENCH_CHECK(evrt_event_create(&cs3[i]->e, flags[i]));
    cs3[i]->sh.hold_ns = holds[i];
  }
  pthread_t th;
  pthread_create(&th, NULL, waker_main, NULL);

  bench_title("sync_wake", "record executes on a stream -> host returns from "
                           "synchronize (median latency)");
  struct bench_case cs[] = {
      {.name = "evrt sync, default (spinning host)", .fn = evrt_wake,
       .ctx = &spin_c, .max_iters = MAX_OPS},
      {.name = "spin_handoff", .fn = base_wake, .ctx = &B,
       .max_iters = MAX_OPS},
      {.name = "evrt sync, blocking-sync (parked)", .fn = evrt_wake,
       .ctx = &park_c, .max_iters = MAX_OPS},
      {.name = "evrt sync, default, long wait (parked)",
       .fn = evrt_wake_own_thread,
       .ctx = &dpark_c, .max_iters = MAX_OPS},
      {.name = "futex_wake", .fn = base_wake, .ctx = NULL,
       .max_iters = MAX_OPS},
  };
  bench_run(cs, 5, "ns");
  if (spin_c.dropped)
    bench_note("spin variant: %ld of %ld operations dropped (a thread was "
               "preempted: the host may have parked)",
               spin_c.dropped, spin_c.total);
  bench_compare("sync_wake", "spin", &cs[0], &cs[1],
                (struct bench_target){BT_RATIO_LE, 2.0,
                                      "<= 2x the spin hand-off"},
                NULL);
  bench_compare("sync_wake", "blocking", &cs[2], &cs[4],
                (struct bench_target){BT_RATIO_LE, 1.2,
                                      "<= 1.2x the futex wake"},
                NULL);
  bench_compare("sync_wake", "default parked", &cs[3], &cs[4],
                (struct bench_target){BT_NONE, 0, NULL}, NULL);
  atomic_store(&B.stop, true);
  bench_post(&B.go, atomic_load(&B.go) + 1, &B.go_nw, 0);
  pthread_join(th, NULL);

  /* CPU burnt by a host thread waiting 50 ms in synchronize. */
  enum { WAIT_NS = 50000000 };
  double cpu[2][BENCH_MAX_REPS], wall[2][BENCH_MAX_REPS];
  int reps = bench_reps < BENCH_MAX_REPS ? bench_reps : BENCH_MAX_REPS;
  for (int r = 0; r < reps; r++) {
    cpu_of_sync(park_c.s, park_c.e, WAIT_NS, &cpu[0][r], &wall[0][r]);
    cpu_of_sync(spin_c.s, spin_c.e, WAIT_NS, &cpu[1][r], &wall[1][r]);
  }
  const char *names[2] = {"host CPU in 50 ms sync, blocking-sync",
                          "host CPU in 50 ms sync, default"};
  const char *variants[2] = {"blocking_cpu", "default_cpu"};
  const char *texts[2] = {"< 1% CPU", "spins only briefly: < 1% CPU"};
  for (int k = 0; k < 2; k++) {
    struct bench_case c = {.name = names[k], .nsamples = reps, .iters = 1};
    struct bench_case w = {.name = "wall_time", .nsamples = reps, .iters = 1};
    for (int r = 0; r < reps; r++) {
      c.s[r] = cpu[k][r];
      w.s[r] = wall[k][r];
    }
    bench_stats(&c);
    bench_stats(&w);
    bench_print_case(&c, "ns");
    bench_print_case(&w, "ns");
    bench_compare("sync_wake", variants[k], &c, &w,
                  (struct bench_target){BT_RATIO_LE, 0.01, texts[k]}, NULL);
  }
  for (int i = 0; i < 3; i++) {
    BENCH_CHECK(evrt_event_destroy(cs3[i]->e));
    BENCH_CHECK(evrt_stream_destroy(cs3[i]->s));
  }
  return 0;
}
