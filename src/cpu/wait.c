/*
 * wait.c - completion side of streams: host threads waiting for a stream to
 * reach a seq (spin briefly, then park), and streams parked on another
 * stream's progress.
 *
 * Locks: stream.wlock only (a leaf), which is bit 63 of stream.wake_at.
 * Streams and host threads found satisfied under it are resumed / woken
 * after it is released.
 *
 * Waiters register under wlock with their target: stream waits link their
 * WAIT item on `waiters`, host threads link a struct evrt__hwaiter (on their
 * own stack) on `hwaiters` and sleep on its private futex word.  wake_at is
 * the smallest registered target.  The Dekker pair: a registrar lowers
 * wake_at with the same seq_cst CAS that takes wlock and then re-reads
 * done_seq (seq_cst); the worker stores
 * done_seq (seq_cst) and then reads wake_at (seq_cst).  At least one sees the
 * other, so a waiter is never missed; a worker whose waiters are all further
 * ahead pays one load per item and no lock, and a parked host is woken once,
 * when its own target is reached (not at every completion of the stream).
 * notify recomputes wake_at under wlock after unlinking the satisfied ones,
 * so it never hides a registration made before it took the lock; one made
 * after stores wake_at itself.
 */
#include "cpu.h"

#include <stdlib.h>

struct evrt__hwaiter {
  struct evrt__hwaiter *next;
  uint64_t target;
  /* 0 = waiting; 1 = unlinked and woken by notify (target reached);
   * 2 = unlinked and woken by evrt_shutdown (the work was discarded) */
  atomic_uint futex;
};
enum { HW_WAITING = 0, HW_REACHED = 1, HW_SHUTDOWN = 2 };

#define EVRT__SPIN_MAX_NS 20000u
static atomic_uint spin_base_ns; /* EVRT_SPIN_NS or the default */
/* Per-thread adaptive budget: doubles when spinning paid off, halves when the
 * thread had to park anyway, within [base / 8, 4 * base]. */
static EVRT_TLS int64_t tls_budget = -1;

uint64_t evrt__spin_budget_ns(void) {
  unsigned b = atomic_load_explicit(&spin_base_ns, memory_order_relaxed);
  if (EVRT_UNLIKELY(b == 0)) {
    long x = evrt__env_long("EVRT_SPIN_NS", 4000, 0, EVRT__SPIN_MAX_NS);
    b = (unsigned)x + 1; /* +1: 0 means "not read yet" */
    atomic_store_explicit(&spin_base_ns, b, memory_order_relaxed);
  }
  return b - 1;
}

/* wlock is bit 63 of wake_at (internal.h).  Taking it is one CAS that may
 * also lower the target: seq_cst, the registrar's half of the Dekker pair
 * (lower wake_at, then read done_seq), so that registering costs one
 * locked instruction where a lock and an exchange of wake_at were two (a
 * chained wait registers at every hop).  Only the holder writes the word
 * while the bit is set. */
static __attribute__((noinline)) void wlock_slow(struct evrt__stream *s,
                                                 uint64_t t) {
  struct evrt__backoff b = {0};
  for (;;) {
    uint64_t w = atomic_load_explicit(&s->wake_at, memory_order_relaxed);
    if (!(w & EVRT__WLOCK) &&
        atomic_compare_exchange_weak_explicit(
            &s->wake_at, &w, (t < w ? t : w) | EVRT__WLOCK,
            memory_order_seq_cst, memory_order_relaxed))
      return;
    evrt__backoff(&b);
  }
}

/* Lock s's waiter lists, lowering wake_at to t (EVRT__WAKE_NONE: as is). */
static inline void wlock_lower(struct evrt__stream *s, uint64_t t) {
  EVRT__SPIN_HELD(1);
  uint64_t w = atomic_load_explicit(&s->wake_at, memory_order_relaxed);
  if (EVRT_LIKELY(!(w & EVRT__WLOCK)) &&
      atomic_compare_exchange_weak_explicit(
          &s->wake_at, &w, (t < w ? t : w) | EVRT__WLOCK,
          memory_order_seq_cst, memory_order_relaxed))
    return;
  wlock_slow(s, t);
}

static inline void wlock(struct evrt__stream *s) {
  wlock_lower(s, EVRT__WAKE_NONE);
}

/* Unlock, wake_at as it is (release: the lists). */
static inline void wunlock(struct evrt__stream *s) {
  uint64_t w = atomic_load_explicit(&s->wake_at, memory_order_relaxed);
  atomic_store_explicit(&s->wake_at, w & ~EVRT__WLOCK, memory_order_release);
  EVRT__SPIN_HELD(-1);
}

/* Unlock with a new target (notify's recomputation). */
static inline void wunlock_set(struct evrt__stream *s, uint64_t t) {
  atomic_store_explicit(&s->wake_at, t, memory_order_release);
  EVRT__SPIN_HELD(-1);
}

void evrt__stream_waiters_reset(struct evrt__stream *s) {
  wlock(s);
  s->waiters = s->waiters_tail = NULL;
  s->hwaiters = NULL;
  wunlock_set(s, EVRT__WAKE_NONE);
}

/* Caller holds s->wlock: unlink hw if notify has not already. */
static void hw_unlink_locked(struct evrt__stream *s, struct evrt__hwaiter *hw) {
  for (struct evrt__hwaiter **p = &s->hwaiters; *p; p = &(*p)->next)
    if (*p == hw) {
      *p = hw->next;
      return;
    }
}

/*
 * Self-deadlock of a host function (issue 13, item 6).  A host function of
 * stream A (the running item, seq evrt__tls_seq + 1) that waits for
 * (x, t) waits for ever if reaching (x, t) needs A to get past that item:
 * directly (x == A, t > evrt__tls_seq: checked by the callers too), or
 * through a chain of blocked streams: x's next item (done + 1 <= t) is a
 * wait registered on (y, u) that y has not reached, y's is blocked on z...
 * up to A.  Each stream says what it is blocked on (blk_src, blk_target,
 * blk_at: a registered wait without timeout, or a host function of it
 * blocked in a synchronize); the chain from (x, t) is followed through
 * those records, at most EVRT__CHAIN_MAX links.  It is read twice: if no
 * stream of it moved (done_seq) and no record changed between the two
 * reads, the chain was there, whole, at an instant between them, and then
 * for good (each link waits on the next, the last on A, which waits on
 * us).  A chain that is not closed yet (a stream still running towards its
 * wait) is looked at again while the host function waits: at the start of
 * the wait and then after 1, 2, 4, ... 64 ms.
 *
 * Not followed: waits with a timeout (they end by themselves), legacy
 * next-record waits not bound yet (the record they will bind to is not
 * known), interprocess waits, and a wait still queued behind other items
 * of a stream that is running (found once that stream reaches it).
 */
#define EVRT__CHAIN_MAX 32

struct link {
  struct evrt__stream *x;
  uint64_t done, at, target;
  struct evrt__stream *src;
};

/* One read of the chain from (x, t); n links into path.  1: it ends at
 * the calling host function's stream beyond its position; 0: it ends
 * elsewhere (reached, or a stream not blocked). */
static int chain_read(struct evrt__stream *x, uint64_t t, struct link *path,
                      int *n) {
  struct evrt__stream *self = evrt__tls_stream;
  *n = 0;
  for (int k = 0; k < EVRT__CHAIN_MAX; k++) {
    if (x == self)
      return t > evrt__tls_seq;
    struct link *l = &path[(*n)++];
    l->x = x;
    l->done = evrt__done(x);
    if (l->done >= t)
      return 0;
    /* acquire, all: see evrt__stream_blocked_on */
    l->at = atomic_load_explicit(&x->blk_at, memory_order_acquire);
    l->src = atomic_load_explicit(&x->blk_src, memory_order_acquire);
    l->target = atomic_load_explicit(&x->blk_target, memory_order_acquire);
    if (l->at != l->done + 1 || !l->src)
      return 0; /* not blocked (on record) before reaching t */
    x = l->src;
    t = l->target;
  }
  return 0; /* too long, or a cycle of other streams: not ours to judge */
}

/* Does waiting for (x, t) on this host function's thread wait for the
 * host function itself?  (Caller: a host function, evrt__tls_stream set.) */
static bool waits_on_self(struct evrt__stream *x, uint64_t t) {
  struct link a[EVRT__CHAIN_MAX], b[EVRT__CHAIN_MAX];
  int na, nb;
  if (!chain_read(x, t, a, &na))
    return false;
  if (!chain_read(x, t, b, &nb) || na != nb)
    return false;
  for (int i = 0; i < na; i++)
    if (a[i].x != b[i].x || a[i].done != b[i].done || a[i].at != b[i].at ||
        a[i].src != b[i].src || a[i].target != b[i].target)
      return false; /* something moved: look again later */
  return true;
}

static __attribute__((cold, noinline)) evrt_status_t
self_deadlock(struct evrt__stream *x, uint64_t t) {
  return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                    "a host function of stream %llu waits for stream %llu "
                    "to reach item %llu, which waits (through the streams' "
                    "waits) for that host function to finish",
                    (unsigned long long)atomic_load_explicit(
                        &evrt__tls_stream->id, memory_order_relaxed),
                    (unsigned long long)atomic_load_explicit(
                        &x->id, memory_order_relaxed),
                    (unsigned long long)t);
}

evrt_status_t evrt__cpu_host_wait(struct evrt__stream *s, uint64_t target,
                                  int64_t timeout_ns, bool blocking) {
  if (evrt__done(s) >= target)
    return EVRT_SUCCESS;
  if (EVRT_UNLIKELY(evrt__check_on) && !evrt__check_tls_waiting)
    return evrt__check_wait_seq(s, target, timeout_ns, blocking); /* cycles */
  uint64_t start = evrt__now_ns();
  uint64_t deadline =
      timeout_ns >= 0 ? evrt__deadline_after(start, (uint64_t)timeout_ns) : 0;
  if (!blocking) {
    uint64_t base = evrt__spin_budget_ns();
    if (tls_budget < 0)
      tls_budget = (int64_t)base;
    uint64_t budget = (uint64_t)tls_budget;
    if (timeout_ns >= 0 && budget > (uint64_t)timeout_ns)
      budget = (uint64_t)timeout_ns;
    uint64_t now = start;
    bool backlog = false;
    for (unsigned i = 1; now - start < budget; i++) {
      if (evrt__done(s) >= target) {
        if (tls_budget < (int64_t)(4 * base))
          tls_budget = tls_budget * 2 + 64;
        return EVRT_SUCCESS;
      }
      evrt__cpu_relax();
      if ((i & 15) == 0) {
        now = evrt__now_ns();
        if (!evrt__running())
          break; /* shut down: below, not by spinning */
        /* Streams are ready but no worker has taken them: every worker is
         * busy, and on a machine with as many workers as cores this spin
         * holds a core one of them needs (a fan-out: the host spinning on
         * the first of 1,000 events kept the second worker off the cores).
         * The wait will not be short: park now. */
        if (evrt__pool_has_ready()) {
          backlog = true;
          break;
        }
      }
    }
    /* Halve after a wait that outlasted the spin, but keep a floor: with
     * nothing left to spin, no wait could ever succeed by spinning again
     * and short waits would pay a park for good.  (A backlog says nothing
     * about how well spinning pays.) */
    if (!backlog) {
      tls_budget /= 2;
      if (tls_budget < (int64_t)(base / 8))
        tls_budget = (int64_t)(base / 8);
    }
  }
  evrt_status_t r = EVRT_SUCCESS;
  /* On a host function: would this wait for the host function itself? */
  struct evrt__stream *self = evrt__tls_stream;
  if (EVRT_UNLIKELY(self != NULL)) {
    if (waits_on_self(s, target))
      return self_deadlock(s, target);
    /* blocked: other host functions' detection follows us through this
     * (under EVRT_CHECK an untimed wait comes here in slices: value 2) */
    if (timeout_ns < 0 ||
        (EVRT_UNLIKELY(evrt__check_on) && evrt__check_tls_waiting == 2))
      evrt__stream_blocked_on(self, s, target, evrt__tls_seq + 1);
  }
  int64_t recheck_ns = 1000000; /* host functions: 1, 2, 4 ... 64 ms */
  struct evrt__hwaiter hw = {.next = NULL, .target = target};
  atomic_init(&hw.futex, 0);
  wlock_lower(s, target);
  hw.next = s->hwaiters;
  s->hwaiters = &hw;
  wunlock(s);
  for (;;) {
    /* acquire: notify sets the word after done_seq reached the target */
    if (atomic_load_explicit(&hw.futex, memory_order_acquire))
      break;
    if (atomic_load_explicit(&s->done_seq, memory_order_seq_cst) >= target)
      break; /* reached before (or while) we registered */
    /* Shut down before evrt__wait_shutdown looked at this stream's list:
     * it will not wake us.  (It stores the state and then takes every
     * wlock; we registered under wlock and then read the state.) */
    if (EVRT_UNLIKELY(!evrt__running())) {
      r = EVRT_ERROR_SHUTDOWN;
      break;
    }
    int64_t left = -1;
    if (deadline) {
      uint64_t now = evrt__now_ns();
      if (now >= deadline) {
        r = EVRT_ERROR_TIMEOUT;
        break;
      }
      left = (int64_t)(deadline - now);
    }
    if (EVRT_UNLIKELY(self != NULL)) {
      /* A chain to us may close while we wait: look again now and then. */
      if (waits_on_self(s, target)) {
        r = EVRT_ERROR_WOULD_DEADLOCK;
        break;
      }
      if (left < 0 || left > recheck_ns)
        left = recheck_ns;
      if (recheck_ns < 64000000)
        recheck_ns *= 2;
    }
    evrt__futex_wait(&hw.futex, 0, left, 0);
  }
  if (EVRT_UNLIKELY(self != NULL))
    evrt__stream_blocked_on(self, NULL, 0, 0); /* it runs on */
  if (!atomic_load_explicit(&hw.futex, memory_order_acquire)) {
    /* Leaving without notify's help (reached at registration, timed out,
     * shut down): take ourselves off the list before the frame goes
     * away. */
    wlock(s);
    if (!atomic_load_explicit(&hw.futex, memory_order_relaxed))
      hw_unlink_locked(s, &hw);
    wunlock(s);
  }
  if (atomic_load_explicit(&hw.futex, memory_order_relaxed) == HW_SHUTDOWN)
    r = EVRT_ERROR_SHUTDOWN;
  /* Reached after all (a notify ran meanwhile, or the work completed as
   * the library shut down): success. */
  if (r != EVRT_SUCCESS && evrt__done(s) >= target)
    r = EVRT_SUCCESS;
  if (r == EVRT_ERROR_SHUTDOWN)
    return evrt__fail(r, "evrt_shutdown() was called during the wait; the "
                         "work waited for was discarded");
  if (r == EVRT_ERROR_WOULD_DEADLOCK)
    return self_deadlock(s, target);
  return r;
}

void evrt__wait_shutdown(void) {
  /* The library state is SHUTDOWN (stored seq_cst before this): a waiter
   * registering from now on sees it after its registration (wlock orders
   * the two).  Wake every host parked in a wait: its work will never
   * complete (queued and parked streams are discarded; a host function
   * blocked in a synchronize would keep its worker, and the shutdown
   * waiting for that worker, for ever).  Slots are type-stable: each
   * stream slot ever handed out is looked at, live or not. */
  enum { BATCH = 32 };
  atomic_uint *wake[BATCH];
  struct evrt__table *t = &evrt__streams;
  uint32_t n = atomic_load_explicit(&t->next_unused, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(t, i);
    if (!s)
      continue;
    for (;;) {
      int nw = 0;
      wlock(s);
      while (s->hwaiters && nw < BATCH) {
        struct evrt__hwaiter *hw = s->hwaiters;
        s->hwaiters = hw->next;
        wake[nw++] = &hw->futex;
        /* last touch of the waiter's frame, as in notify */
        atomic_store_explicit(&hw->futex, HW_SHUTDOWN, memory_order_release);
      }
      bool more = s->hwaiters != NULL;
      wunlock(s);
      for (int k = 0; k < nw; k++)
        evrt__futex_wake(wake[k], 1, 0);
      if (!more)
        break;
    }
  }
}

/* Caller holds src->wlock: unlink the item *p points to (prev is the item
 * before it, NULL at the head). */
static inline void waiter_unlink_locked(struct evrt__stream *src,
                                        struct evrt__item **p,
                                        struct evrt__item *prev) {
  struct evrt__item *it = *p;
  *p = it->u.ev.wnext;
  if (src->waiters_tail == it)
    src->waiters_tail = prev;
}

bool evrt__stream_add_waiter(struct evrt__item *it) {
  struct evrt__stream *src = it->u.ev.src;
  wlock_lower(src, it->u.ev.target);
  if (atomic_load_explicit(&src->done_seq, memory_order_seq_cst) >=
      it->u.ev.target) {
    /* Reached already: not registered (wake_at stays low: the next notify
     * recomputes it). */
    wunlock(src);
    return false;
  }
  atomic_store_explicit(&it->u.ev.unlinked, false, memory_order_relaxed);
  it->u.ev.wnext = NULL;
  struct evrt__item *prev = src->waiters_tail;
  if (prev)
    prev->u.ev.wnext = it;
  else
    src->waiters = it;
  src->waiters_tail = it;
  wunlock(src);
  return true;
}

void evrt__stream_remove_waiter(struct evrt__item *it) {
  struct evrt__stream *src = it->u.ev.src;
  wlock(src);
  struct evrt__item *prev = NULL;
  for (struct evrt__item **p = &src->waiters; *p; p = &(*p)->u.ev.wnext) {
    if (*p == it) {
      waiter_unlink_locked(src, p, prev);
      break;
    }
    prev = *p;
  }
  wunlock(src);
}

void evrt__stream_notify(struct evrt__stream *s, uint64_t seq) {
  /* Collect the owners (type-stable) rather than the items: once unlinked,
   * an item may complete and be recycled by its own worker at any time. */
  enum { BATCH = 32 };
  struct evrt__stream *owners[BATCH];
  bool alone[BATCH]; /* nothing was linked behind its wait */
  atomic_uint *wake[BATCH];
  for (;;) {
    int n = 0, nw = 0;
    bool more = false;
    uint64_t min = EVRT__WAKE_NONE;
    wlock(s);
    struct evrt__item *prev = NULL;
    for (struct evrt__item **p = &s->waiters; *p;) {
      struct evrt__item *it = *p;
      /* a list walk: start the next item's miss while this one is handled */
      __builtin_prefetch(it->u.ev.wnext, 1, 3);
      if (it->u.ev.target <= seq) {
        if (n == BATCH) {
          more = true; /* the rest next round; wake_at stays <= seq */
          break;
        }
        waiter_unlink_locked(s, p, prev);
        alone[n] = !atomic_load_explicit(&it->qnext, memory_order_relaxed);
        owners[n++] = it->owner;
        /* its state line is CASed after the lock is released, and a
         * plain wait with nothing behind it is passed right here
         * (evrt__exec_resume): its completion line is written then, and
         * enq_seq read when the worker settles it */
        evrt__prefetch_w(&it->owner->state);
        evrt__prefetch_w(&it->owner->done_seq);
        __builtin_prefetch(&it->owner->enq_seq, 0, 3);
        /* Last touch of the item (its owner may recycle it once it sees
         * this): tells the owner it need not take wlock to unlink it. */
        atomic_store_explicit(&it->u.ev.unlinked, true, memory_order_release);
      } else {
        if (it->u.ev.target < min)
          min = it->u.ev.target;
        prev = it;
        p = &it->u.ev.wnext;
      }
    }
    for (struct evrt__hwaiter **p = &s->hwaiters; *p;) {
      struct evrt__hwaiter *hw = *p;
      if (hw->target <= seq && nw < BATCH) {
        *p = hw->next;
        wake[nw++] = &hw->futex;
        /* Last touch of the waiter's frame: once it sees 1 it may return.
         * (The wake-up below may then reach a dead frame's address: a
         * harmless spurious wake-up for whatever sleeps there next.) */
        atomic_store_explicit(&hw->futex, HW_REACHED, memory_order_release);
      } else {
        more |= hw->target <= seq;
        if (hw->target < min)
          min = hw->target;
        p = &hw->next;
      }
    }
    if (more)
      min = seq; /* not scanned to the end: keep notify coming */
    /* Registrations made before we took the lock are in the lists; later
     * ones lower wake_at themselves. */
    wunlock_set(s, min);
    for (int i = 0; i < nw; i++)
      evrt__futex_wake(wake[i], 1, 0);
    /* Queue them under one pool lock (see below for the one kept). */
    int k = 0;
    for (int i = 0; i < n; i++)
      if (alone[i] ? evrt__exec_resume(owners[i])
                   : evrt__stream_try_queue(owners[i]))
        owners[k++] = owners[i];
    /* A single resume (a chain of waits) is kept to run next on this warm
     * worker (evrt__pool_push_local); a fan-out goes to the run queue
     * whole, in order, so that the first streams do not wait for this
     * notify to finish (or for this worker to be scheduled again, should
     * it be preempted). */
    int first = 0;
    if (k == 1 && !more && evrt__pool_push_local(owners[0]))
      first = 1;
    evrt__pool_push_many(owners + first, k - first);
    if (!more)
      break;
  }
}
