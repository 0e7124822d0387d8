/*
 * ipc_pingpong.c - round trips between two processes through two
 * interprocess events (issue 4), beside ping-pongs through a word in shared
 * memory between the same two processes.
 *
 * evrt shape (chained like pingpong_streams, one host wait at the end):
 * the parent holds its stream A with a gate host function, then builds N
 * round trips with the child:
 *   parent: record(Ep, A)          -> tells the child "k" (shared word)
 *   child:  wait(B, Ep'); record(Ec, B) -> tells the parent "k"
 *   parent: wait(A, Ec')
 * (Ep', Ec' are the imported events).  The shared words only order the
 * enqueue calls, which is what binds each wait to generation k; they are
 * untimed.  Then the gate opens (t0) and the N round trips run from stream
 * to stream across the processes; the parent synchronizes A (t1).  One
 * sample = (t1 - t0) / N.
 *
 * Baselines (a child forked per sample, words in MAP_SHARED memory, shared
 * futexes): shm_futex_pingpong (spin with evrt's budget, then FUTEX_WAIT)
 * and shm_futex_pingpong_pure (FUTEX_WAIT at once).
 *
 * A sample chains at most IPC_CHAIN round trips (see below); many samples
 * make a repetition's figure.
 *
 * While evrt_event_ipc_handle returns EVRT_ERROR_NOT_SUPPORTED the evrt row
 * prints a skip reason and the baselines are still measured.
 */
#include "bench.h"

#include "evrt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Round trips chained per evrt sample.  The interprocess ring holds 2048
 * pending generations per event (a record beyond that fails with
 * EVRT_ERROR_EVENT_LIMIT), so a chain built behind a closed gate stays below
 * that; long chains keep the start-up hop (both streams parked, woken by the
 * watcher thread) from dominating the per-round-trip figure. */
#define IPC_CHAIN 1024

struct shm {
  _Alignas(64) atomic_uint ping;
  atomic_uint ping_nw;
  _Alignas(64) atomic_uint pong;
  atomic_uint pong_nw;
  long n;
  uint64_t spin;
  /* evrt handshake */
  _Alignas(64) atomic_uint state; /* 0 start, 1 parent handle, 2 both, 9 stop */
  atomic_uint state_nw;
  _Alignas(64) atomic_uint p_k;
  atomic_uint p_nw;
  _Alignas(64) atomic_uint c_k;
  atomic_uint c_nw;
  evrt_ipc_event_handle_t hp, hc;
  atomic_int child_status;
};
static struct shm *M;

/* ------------------------------------------------------------ baselines */

static double base_shm(void *ctx, long iters) {
  M->spin = ctx ? bench_spin_budget_ns() : 0;
  M->n = iters;
  atomic_store(&M->ping, 0);
  atomic_store(&M->pong, 0);
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    unsigned v = 0;
    for (long i = 0; i <= M->n; i++) {
      v = bench_wait_change(&M->ping, v, M->spin, &M->ping_nw, 1);
      bench_post(&M->pong, v, &M->pong_nw, 1);
    }
    _exit(0);
  }
  uint64_t t0 = 0;
  for (long i = 0; i <= iters; i++) {
    if (i == 1)
      t0 = bench_now_ns(); /* round 0 waits for the child to start */
    unsigned v = (unsigned)i + 1;
    bench_post(&M->ping, v, &M->ping_nw, 1);
    bench_wait_change(&M->pong, v - 1, M->spin, &M->pong_nw, 1);
  }
  uint64_t t1 = bench_now_ns();
  waitpid(p, NULL, 0);
  return (double)(t1 - t0) / (double)iters;
}

/* ------------------------------------------------------------ evrt side */

static void child_main(void) {
  /* Forked before the parent touched evrt: this process initializes its
   * own library. */
  unsigned st = 0;
  while ((st = atomic_load(&M->state)) == 0)
    bench_wait_change(&M->state, 0, 0, &M->state_nw, 1);
  if (st == 9)
    _exit(0);
  evrt_event_t ec, ep;
  evrt_stream_t b;
  if (evrt_stream_create(&b, 0, 0, 0) ||
      evrt_event_create(&ec, EVRT_EVENT_INTERPROCESS) ||
      evrt_event_ipc_handle(ec, &M->hc) || evrt_event_ipc_open(&ep, &M->hp)) {
    atomic_store(&M->child_status, (int)evrt_last_error());
    bench_post(&M->state, 8, &M->state_nw, 1);
    _exit(1);
  }
  bench_post(&M->state, 2, &M->state_nw, 1);
  unsigned k = 0;
  for (;;) {
    unsigned nk = bench_wait_change(&M->p_k, k, bench_spin_budget_ns(),
                                    &M->p_nw, 1);
    if (atomic_load(&M->state) == 9)
      _exit(0);
    k = nk;
    if (evrt_stream_wait_event(b, ep) || evrt_event_record(ec, b)) {
      atomic_store(&M->child_status, (int)evrt_last_error());
      _exit(1);
    }
    bench_post(&M->c_k, k, &M->c_nw, 1);
  }
}

static struct {
  evrt_stream_t a;
  evrt_event_t ep, ec;
  unsigned k;
} E;

static atomic_uint gate, gate_nw;
static atomic_uint_least64_t gate_t0;
static void gate_fn(void *arg) {
  (void)arg;
  bench_wait_change(&gate, 0, 0, &gate_nw, 0);
  atomic_store_explicit(&gate_t0, bench_now_ns(), memory_order_relaxed);
}

/* One gated chain of n round trips; returns its timed nanoseconds. */
static double ipc_chain(long n) {
  atomic_store(&gate, 0);
  BENCH_CHECK(evrt_launch_host_func(E.a, gate_fn, NULL));
  for (long i = 0; i < n; i++) {
    BENCH_CHECK(evrt_event_record(E.ep, E.a));
    E.k++;
    bench_post(&M->p_k, E.k, &M->p_nw, 1);
    while (atomic_load(&M->c_k) != E.k)
      bench_wait_change(&M->c_k, E.k - 1, bench_spin_budget_ns(), &M->c_nw, 1);
    BENCH_CHECK(evrt_stream_wait_event(E.a, E.ec));
  }
  bench_post(&gate, 1, &gate_nw, 0);
  BENCH_CHECK(evrt_stream_synchronize(E.a));
  return (double)(bench_now_ns() -
                  atomic_load_explicit(&gate_t0, memory_order_relaxed));
}

static double evrt_ipc(void *ctx, long iters) {
  (void)ctx;
  double sum = 0;
  for (long done = 0; done < iters; done += IPC_CHAIN)
    sum += ipc_chain(iters - done < IPC_CHAIN ? iters - done : IPC_CHAIN);
  return sum / (double)iters;
}

int scenario_ipc_pingpong(void) {
  M = mmap(NULL, sizeof *M, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
           -1, 0);
  if (M == MAP_FAILED) {
    bench_skip("ipc_pingpong", "mmap of shared memory failed");
    return 1;
  }
  memset(M, 0, sizeof *M);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0)
    child_main();
  /* Now this process may initialize evrt. */
  char why[256] = "";
  evrt_status_t st = evrt_stream_create(&E.a, 0, 0, 0);
  if (!st)
    st = evrt_event_create(&E.ep, EVRT_EVENT_INTERPROCESS);
  if (!st)
    st = evrt_event_ipc_handle(E.ep, &M->hp);
  if (st) {
    snprintf(why, sizeof why, "evrt_event_ipc_handle: %s (%s)",
             evrt_err_name(st), evrt_last_error_message());
  } else {
    bench_post(&M->state, 1, &M->state_nw, 1);
    unsigned s;
    while ((s = atomic_load(&M->state)) == 1)
      bench_wait_change(&M->state, 1, 0, &M->state_nw, 1);
    if (s != 2) {
      snprintf(why, sizeof why, "the child could not open the events: %s",
               evrt_err_name((evrt_status_t)atomic_load(&M->child_status)));
    } else if ((st = evrt_event_ipc_open(&E.ec, &M->hc))) {
      snprintf(why, sizeof why, "evrt_event_ipc_open: %s (%s)",
               evrt_err_name(st), evrt_last_error_message());
    }
  }
  bench_title("ipc_pingpong", "round trip between two processes, per round "
                              "trip");
  struct bench_case cs[3];
  int n = 0;
  if (!why[0])
    cs[n++] = (struct bench_case){.name = "evrt ipc events (chained)",
                                  .fn = evrt_ipc};
  cs[n++] = (struct bench_case){.name = "shm_futex_pingpong", .fn = base_shm,
                                .ctx = (void *)1};
  cs[n++] = (struct bench_case){.name = "shm_futex_pingpong_pure",
                                .fn = base_shm, .ctx = NULL};
  bench_run(cs, n, "ns");
  if (why[0]) {
    bench_skip("ipc_pingpong", "evrt row: %s", why);
  } else {
    bench_compare("ipc_pingpong", NULL, &cs[0], &cs[1],
                  (struct bench_target){BT_NONE, 0, NULL}, NULL);
    bench_compare("ipc_pingpong", "vs pure futex", &cs[0], &cs[2],
                  (struct bench_target){BT_NONE, 0, NULL}, NULL);
  }
  atomic_store(&M->state, 9);
  bench_futex_wake(&M->state, 1 << 30, 1);
  bench_post(&M->p_k, atomic_load(&M->p_k) + 1, &M->p_nw, 1);
  int wst;
  if (waitpid(child, &wst, 0) < 0)
    kill(child, SIGKILL);
  return 0;
}
