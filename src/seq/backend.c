/*
 * backend.c - the seq backend (EVRT_BACKEND=seq): every item of every
 * stream runs on ONE thread, and whenever several streams could run, the
 * next is drawn from a seed (EVRT_SEQ_SEED).  Same seed, same program with
 * its work made runnable in the same order: same order of items across
 * streams, host functions included.  It is a tool for tests and for
 * synchronization checking (src/check): a run that misbehaves under some
 * seed is replayed with that seed, and a sweep of seeds explores orders
 * the dependencies allow.  docs/backends.md ("The seq backend") has the
 * guarantee and its limits.
 *
 * It is the cpu backend's scheduler (src/cpu/cpu.h: items executed by
 * exec.c, waits by wait.c, delays by timer.c) under another pool policy
 * (evrt__pool_init_seq: one worker, a seeded pick among the queued
 * streams, a yield after every item), so that the two backends share one
 * executor: this file holds only what differs, the table, the seed and
 * the host wait of a host function (below).  Hook contracts: src/backend.h.
 */
#include "../cpu/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The seed: EVRT_SEQ_SEED (decimal or 0x hex), else drawn from the clock
 * and the pid and printed, so that the run can be replayed.  The
 * initializing thread (backend init hook). */
static uint64_t seq_seed(void) {
  const char *e = getenv("EVRT_SEQ_SEED");
  if (e && *e) {
    char *end;
    unsigned long long v = strtoull(e, &end, 0);
    if (*end == '\0')
      return (uint64_t)v;
    fprintf(stderr, "evrt: EVRT_SEQ_SEED=%.40s is not a number: drawing a "
                    "seed\n", e);
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^
                  (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
  fprintf(stderr, "evrt: EVRT_BACKEND=seq with EVRT_SEQ_SEED=%llu (set it "
                  "to replay this schedule)\n", (unsigned long long)seed);
  return seed;
}

static evrt_status_t seq_init(void) { return evrt__pool_init_seq(seq_seed()); }

/* A host function (it runs on the one thread) that waits for work not
 * done yet waits for ever: that work can only run on the thread it
 * blocks.  Say so at once instead (the cpu backend lets the wait proceed,
 * other workers running the work).  Other callers: the cpu host wait.
 * The calling thread, no lock held. */
static evrt_status_t seq_host_wait(struct evrt__stream *s, uint64_t target,
                                   int64_t timeout_ns, bool blocking) {
  if (EVRT_UNLIKELY(evrt__pool_on_worker()) && evrt__done(s) < target)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "a host function waits for stream %llu to reach item "
                      "%llu, but EVRT_BACKEND=seq runs all stream work on "
                      "the one thread this host function holds",
                      (unsigned long long)atomic_load_explicit(
                          &s->id, memory_order_relaxed),
                      (unsigned long long)target);
  return evrt__cpu_host_wait(s, target, timeout_ns, blocking);
}

const struct evrt__backend_ops evrt__seq_backend = {
    .size = sizeof(struct evrt__backend_ops),
    .version = EVRT__BACKEND_VERSION,
    .name = "seq",
    .device_count = evrt__cpu_device_count,
    .init = seq_init,
    .wake_hosts = evrt__wait_shutdown,
    .shutdown = evrt__cpu_shutdown,
    .stream_init = evrt__cpu_stream_init,
    .stream_release = evrt__cpu_stream_release,
    .stream_destroyed = evrt__cpu_stream_destroyed,
    .submit = evrt__cpu_submit,
    .stream_resume = evrt__cpu_stream_resume,
    .host_wait = seq_host_wait,
    .wait_register = evrt__stream_add_waiter,
    .wait_cancel = evrt__stream_remove_waiter,
    .timer_arm = evrt__timer_arm,
    .timer_cancel = evrt__timer_cancel,
    .spin_budget_ns = evrt__spin_budget_ns,
    .on_own_thread = evrt__pool_on_worker,
    .run_item = evrt__exec_run_item,
    .timestamp = evrt__cpu_timestamp,
    .elapsed_ns = evrt__cpu_elapsed_ns,
    .copy = evrt__cpu_copy,
    .fill = evrt__cpu_fill,
};
