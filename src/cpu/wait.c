/*
 * wait.c - completion side of streams: host threads waiting for a stream to
 * reach a seq (spin briefly, then futex), and streams parked on another
 * stream's progress.
 *
 * Locks: stream.wlock only (a leaf).  Streams found satisfied under it are
 * resumed after it is released.
 *
 * The Dekker pair: a waiter increments nwait (seq_cst RMW) and then reads
 * done_seq (seq_cst); the worker stores done_seq (seq_cst) and then reads
 * nwait (seq_cst).  At least one of them sees the other, so a waiter is never
 * missed and a worker with no waiters pays one load.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#define EVRT__SPIN_MAX_NS 20000u
static atomic_uint spin_base_ns; /* EVRT_SPIN_NS or the default */
/* Per-thread adaptive budget: doubles when spinning paid off, halves when the
 * thread had to park anyway, within [base / 8, 4 * base]. */
static EVRT_TLS int64_t tls_budget = -1;

uint64_t evrt__spin_budget_ns(void) {
  unsigned b = atomic_load_explicit(&spin_base_ns, memory_order_relaxed);
  if (EVRT_UNLIKELY(b == 0)) {
    const char *v = getenv("EVRT_SPIN_NS");
    long x = v ? strtol(v, NULL, 10) : 4000;
    if (x < 0 || x > (long)EVRT__SPIN_MAX_NS)
      x = 4000;
    b = (unsigned)x + 1; /* +1: 0 means "not read yet" */
    atomic_store_explicit(&spin_base_ns, b, memory_order_relaxed);
  }
  return b - 1;
}

static inline uint64_t u64_futex_val(struct evrt__stream *s, uint64_t *d) {
  *d = atomic_load_explicit(&s->done_seq, memory_order_seq_cst);
  return (uint32_t)*d;
}

evrt_status_t evrt__wait_seq(struct evrt__stream *s, uint64_t target,
                             int64_t timeout_ns, bool blocking) {
  if (evrt__done(s) >= target)
    return EVRT_SUCCESS;
  uint64_t start = evrt__now_ns();
  uint64_t deadline = timeout_ns >= 0 ? start + (uint64_t)timeout_ns : 0;
  if (!blocking) {
    uint64_t base = evrt__spin_budget_ns();
    if (tls_budget < 0)
      tls_budget = (int64_t)base;
    uint64_t budget = (uint64_t)tls_budget;
    if (timeout_ns >= 0 && budget > (uint64_t)timeout_ns)
      budget = (uint64_t)timeout_ns;
    uint64_t now = start;
    for (unsigned i = 1; now - start < budget; i++) {
      if (evrt__done(s) >= target) {
        if (tls_budget < (int64_t)(4 * base))
          tls_budget = tls_budget * 2 + 64;
        return EVRT_SUCCESS;
      }
      evrt__cpu_relax();
      if ((i & 15) == 0)
        now = evrt__now_ns();
    }
    /* Halve after a wait that outlasted the spin, but keep a floor: with
     * nothing left to spin, no wait could ever succeed by spinning again
     * and short waits would pay a park for good. */
    tls_budget /= 2;
    if (tls_budget < (int64_t)(base / 8))
      tls_budget = (int64_t)(base / 8);
  }
  evrt_status_t r = EVRT_SUCCESS;
  atomic_fetch_add_explicit(&s->nwait, 1, memory_order_seq_cst);
  for (;;) {
    uint64_t d;
    uint32_t v = (uint32_t)u64_futex_val(s, &d);
    if (d >= target)
      break;
    int64_t left = -1;
    if (deadline) {
      uint64_t now = evrt__now_ns();
      if (now >= deadline) {
        r = EVRT_ERROR_TIMEOUT;
        break;
      }
      left = (int64_t)(deadline - now);
    }
    /* The futex word is the low half of done_seq: any completion changes
     * it, so a wake-up between our read and the wait is never lost. */
    evrt__futex_wait((atomic_uint *)(void *)&s->done_seq, v, left, 0);
  }
  atomic_fetch_sub_explicit(&s->nwait, 1, memory_order_relaxed);
  return r;
}

bool evrt__stream_add_waiter(struct evrt__item *it) {
  struct evrt__stream *src = it->u.ev.src;
  evrt__spin_lock(&src->wlock);
  atomic_store_explicit(&it->u.ev.unlinked, false, memory_order_relaxed);
  it->u.ev.wnext = src->waiters;
  src->waiters = it;
  atomic_fetch_add_explicit(&src->nwait, 1u << 16, memory_order_seq_cst);
  if (atomic_load_explicit(&src->done_seq, memory_order_seq_cst) >=
      it->u.ev.target) {
    src->waiters = it->u.ev.wnext;
    atomic_fetch_sub_explicit(&src->nwait, 1u << 16, memory_order_relaxed);
    evrt__spin_unlock(&src->wlock);
    return false;
  }
  evrt__spin_unlock(&src->wlock);
  return true;
}

void evrt__stream_remove_waiter(struct evrt__item *it) {
  struct evrt__stream *src = it->u.ev.src;
  evrt__spin_lock(&src->wlock);
  for (struct evrt__item **p = &src->waiters; *p; p = &(*p)->u.ev.wnext) {
    if (*p == it) {
      *p = it->u.ev.wnext;
      atomic_fetch_sub_explicit(&src->nwait, 1u << 16, memory_order_relaxed);
      break;
    }
  }
  evrt__spin_unlock(&src->wlock);
}

void evrt__stream_notify(struct evrt__stream *s, uint64_t seq) {
  unsigned w = atomic_load_explicit(&s->nwait, memory_order_relaxed);
  if (w & 0xffffu)
    evrt__futex_wake((atomic_uint *)(void *)&s->done_seq, INT_MAX, 0);
  if (!(w >> 16))
    return;
  /* Collect the owners (type-stable) rather than the items: once unlinked,
   * an item may complete and be recycled by its own worker at any time. */
  enum { BATCH = 32 };
  struct evrt__stream *owners[BATCH];
  for (;;) {
    int n = 0;
    bool more = false;
    evrt__spin_lock(&s->wlock);
    for (struct evrt__item **p = &s->waiters; *p;) {
      struct evrt__item *it = *p;
      if (it->u.ev.target <= seq) {
        if (n == BATCH) {
          more = true;
          break;
        }
        *p = it->u.ev.wnext;
        owners[n++] = it->owner;
        atomic_fetch_sub_explicit(&s->nwait, 1u << 16, memory_order_relaxed);
        /* Last touch of the item (its owner may recycle it once it sees
         * this): tells the owner it need not take wlock to unlink it. */
        atomic_store_explicit(&it->u.ev.unlinked, true, memory_order_release);
      } else {
        p = &it->u.ev.wnext;
      }
    }
    evrt__spin_unlock(&s->wlock);
    /* Queue them all under one pool lock; a worker keeps the first to run
     * next itself (evrt__pool_push_local). */
    int k = 0;
    for (int i = 0; i < n; i++)
      if (evrt__stream_try_queue(owners[i]))
        owners[k++] = owners[i];
    int first = 0;
    if (k > 0 && evrt__pool_push_local(owners[0]))
      first = 1;
    evrt__pool_push_many(owners + first, k - first);
    if (!more)
      break;
  }
}
