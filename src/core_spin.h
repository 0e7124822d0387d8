/*
 * core_spin.h - spinning, the one way the core waits on another thread's
 * short critical section: evrt__cpu_relax (one pause), evrt__backoff (the
 * back-off every such wait uses: pauses, then yields, then sleeps), the
 * spin lock built on it, and evrt__spin_for (the bounded spin before a
 * wait parks).  The fast paths are static inline (records and
 * queries take spin locks); the slow rounds are out of line (src/unix/os.c).
 * Memory orders: lock is an acquire CAS, unlock a release store.  No system
 * call while a spin lock is held (checked in the white-box build).
 */
#ifndef EVRT_CORE_SPIN_H
#define EVRT_CORE_SPIN_H

#include "core_base.h"
#include "core_os.h" /* evrt__now_ns */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline void evrt__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}
/*
 * Back-off, for every wait of the core on another thread's short critical
 * section (spin locks, the event seqlock, wlock, destroy's wait for pins):
 * the caller re-checks what it waits for between calls.  64 pauses (a
 * holder on another CPU is about to finish), then sched_yield (a holder
 * preempted on this CPU runs), then, past EVRT__BACKOFF_YIELDS rounds, a
 * 50 us sleep per round (a holder that is not running at all, stopped or
 * starved, costs the waiter nothing).  The waits that may last long
 * (host synchronize, idle workers) spin for a bounded time and then park
 * on a futex instead (wait.c, pool.c).
 *
 * No system call is ever made while holding one of these spin-locked
 * sections (a holder in a system call makes every waiter spin): work that
 * needs one (scheduling a stream, malloc, free) is collected and done after
 * the unlock.
 */
/* The white-box build (evrt_static, EVRT_TEST_HOOKS) counts the spin
 * locks each thread holds and records every system call made by the core
 * while one is held (evrt__test_spin_violations); the shared library
 * compiles these to nothing. */
#ifdef EVRT_TEST_HOOKS
extern EVRT_TLS unsigned evrt__tls_spins_held;
void evrt__spin_violation(const char *what);
#define EVRT__SPIN_HELD(d) ((void)(evrt__tls_spins_held += (unsigned)(d)))
#define EVRT__NO_SPIN_HELD(what)                                               \
  do {                                                                         \
    if (EVRT_UNLIKELY(evrt__tls_spins_held))                                   \
      evrt__spin_violation(what);                                              \
  } while (0)
#else
#define EVRT__SPIN_HELD(d) ((void)0)
#define EVRT__NO_SPIN_HELD(what) ((void)0)
#endif
#define EVRT__BACKOFF_PAUSES 64u
#define EVRT__BACKOFF_YIELDS 1000u
struct evrt__backoff {
  unsigned n;
};
void evrt__backoff_slow(struct evrt__backoff *b);
static inline void evrt__backoff(struct evrt__backoff *b) {
  if (EVRT_LIKELY(b->n < EVRT__BACKOFF_PAUSES)) {
    b->n++;
    evrt__cpu_relax();
    return;
  }
  evrt__backoff_slow(b);
}

/* A bounded spin, the one shape of the short spins before a wait parks or
 * a worker goes idle (a peer or producer that answers within the budget
 * costs a cache-line transfer, not a wake-up): the caller tests its
 * condition, then calls evrt__spin_for_more, which pauses once and, every
 * 16th round, reads the clock; false once more than `budget` ns have
 * passed since `now` (the caller's clock reading, given to
 * evrt__spin_for_start).  Inline: it sits in the worker's loop. */
struct evrt__spin_for {
  uint64_t t0, budget;
  unsigned i;
};
static inline struct evrt__spin_for evrt__spin_for_start(uint64_t now,
                                                         uint64_t budget) {
  struct evrt__spin_for w = {now, budget, 0};
  return w;
}
static inline bool evrt__spin_for_more(struct evrt__spin_for *w) {
  evrt__cpu_relax();
  return (++w->i & 15) != 0 || evrt__now_ns() - w->t0 <= w->budget;
}

/* Tiny lock for short critical sections (spin with evrt__backoff). */
typedef struct { atomic_uint v; } evrt__spin_t;
void evrt__spin_lock_slow(evrt__spin_t *l);
static inline void evrt__spin_lock(evrt__spin_t *l) {
  unsigned z = 0;
  /* acquire: the critical section must not float above the lock */
  EVRT__SPIN_HELD(1);
  if (EVRT_LIKELY(atomic_compare_exchange_weak_explicit(
          &l->v, &z, 1, memory_order_acquire, memory_order_relaxed)))
    return;
  evrt__spin_lock_slow(l);
}
static inline void evrt__spin_unlock(evrt__spin_t *l) {
  atomic_store_explicit(&l->v, 0, memory_order_release);
  EVRT__SPIN_HELD(-1);
}

#endif
