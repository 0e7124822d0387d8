/*
 * value.c - stream-ordered values: a stream waits, parked, until a 64-bit
 * word satisfies a condition; a stream (or the host) writes a word and wakes
 * the waits on it (docs/design.md, "Values").
 *
 * The object model is an address, as in CUDA's cuStreamWaitValue64 and
 * ACL's aclrtValueWait: the word is the program's memory, evrt keeps no
 * object for it.  A parked wait item is linked in one of 64 buckets hashed
 * by its address; whoever writes through evrt (value writes, copies and
 * fills, evrt_value_notify, host functions for the waits that allow it)
 * looks the address up and resumes the waits whose condition now holds.
 *
 * Locks: bucket locks (spin locks, leaves: a few loads and link updates
 * under them, no system call; streams found are resumed after release).
 *
 * The Dekker pair.  A waiter takes its bucket lock, links its item, then
 * counts itself in nwait (seq_cst RMW) and re-evaluates the word (seq_cst
 * load); a writer stores the word (seq_cst) and then reads nwait (seq_cst,
 * or acquire after a fence).  Either the writer sees the waiter counted,
 * and then, through that RMW (every change of nwait is an RMW, so later
 * ones continue its release sequence), the link: its look at the bucket's
 * head finds the item, and its scan under the lock resumes it; or the
 * waiter's load follows the store.  The writer peeks at the head without
 * the lock, so the link must come before the count: linked after it, a
 * writer between the two found the bucket empty and the wait slept for
 * ever.  Writers whose stores are plain (copies, fills, host functions)
 * put a seq_cst fence between their stores and the load of the counter.  A parked wait is resumed at most once per
 * write that satisfies it, and a resume that finds the condition false
 * again (a RESET wait that lost the word to another) parks again.
 */
#include "internal.h"

#include <string.h>

#define NBUCKETS 64
#define POLL_MIN_NS 50000ull
#define POLL_MAX_NS 10000000ull

static struct bucket {
  evrt__spin_t lock;
  /* Parked waits, linked through u.val.vnext; written under lock, read
   * without it (relaxed) only to skip empty buckets. */
  _Atomic(struct evrt__item *) head;
} __attribute__((aligned(64))) buckets[NBUCKETS];

atomic_bool evrt__value_armed;
static atomic_uint nwait; /* parked waits */
static atomic_uint nkick; /* of which re-checked after host functions */

#define COND_MASK 0x3u

static inline struct bucket *bucket_of(const void *addr) {
  uint64_t a = ((uintptr_t)addr >> 3) * 0x9E3779B97F4A7C15ull;
  return &buckets[a >> 58];
}

static inline bool holds(uint64_t v, uint64_t want, unsigned flags) {
  switch (flags & COND_MASK) {
  case EVRT_VALUE_WAIT_GEQ:
    return (int64_t)(v - want) >= 0;
  case EVRT_VALUE_WAIT_EQ:
    return v == want;
  case EVRT_VALUE_WAIT_AND:
    return (v & want) != 0;
  default: /* NOR */
    return ~(v | want) != 0;
  }
}

/* Does the condition hold?  For a RESET wait, consume the word (exactly
 * one of the waits a write satisfies passes). */
static bool try_pass(struct evrt__item *it) {
  /* seq_cst: the waiter's half of the Dekker pair (top of file) */
  uint64_t v = atomic_load_explicit(it->u.val.addr, memory_order_seq_cst);
  for (;;) {
    if (!holds(v, it->u.val.value, it->u.val.flags))
      return false;
    if (!(it->u.val.flags & EVRT_VALUE_WAIT_RESET))
      return true;
    if (atomic_compare_exchange_weak_explicit(it->u.val.addr, &v, 0,
                                              memory_order_seq_cst,
                                              memory_order_seq_cst))
      return true;
  }
}

static void count(const struct evrt__item *it, int d) {
  /* seq_cst: the RMW of the Dekker pair */
  atomic_fetch_add_explicit(&nwait, (unsigned)d, memory_order_seq_cst);
  if (!(it->u.val.flags & EVRT_VALUE_WAIT_EXPLICIT))
    atomic_fetch_add_explicit(&nkick, (unsigned)d, memory_order_seq_cst);
}

/* Caller holds b->lock; it is linked in b. */
static void unlink_locked(struct bucket *b, struct evrt__item *it) {
  struct evrt__item *prev = NULL;
  struct evrt__item *cur = atomic_load_explicit(&b->head, memory_order_relaxed);
  while (cur && cur != it) {
    prev = cur;
    cur = cur->u.val.vnext;
  }
  if (!cur)
    return;
  if (prev)
    prev->u.val.vnext = it->u.val.vnext;
  else
    atomic_store_explicit(&b->head, it->u.val.vnext, memory_order_relaxed);
  count(it, -1);
}

/* (Re)arm the timer for the next poll and the timeout, whichever comes
 * first.  A deadline is never changed while the item is in the timer heap
 * (a writer's resume may come before the timer thread takes it out). */
static void arm(struct evrt__item *it, bool first) {
  uint64_t now = evrt__now_ns(), d = 0;
  if (!first && it->deadline)
    evrt__backend->timer_cancel(it);
  if (it->u.val.flags & EVRT_VALUE_WAIT_POLL) {
    uint64_t p = first ? POLL_MIN_NS : it->u.val.poll_ns * 2;
    if (p > POLL_MAX_NS)
      p = POLL_MAX_NS;
    it->u.val.poll_ns = p;
    d = now + p;
  }
  if (it->u.val.end && (!d || it->u.val.end < d))
    d = it->u.val.end;
  it->deadline = d;
  if (d && evrt__backend->timer_arm(it) != EVRT_SUCCESS)
    it->deadline = 0; /* no timer: woken by writes only */
}

bool evrt__value_exec_wait(struct evrt__stream *s, struct evrt__item *it) {
  struct bucket *b = bucket_of((const void *)it->u.val.addr);
  if (it->phase == 0) {
    if (try_pass(it))
      return true;
    evrt__spin_lock(&b->lock);
    /* Linked before counted (the Dekker pair, top of file): a writer that
     * sees the count sees the link.  Linked after, a writer came between
     * the re-evaluation and the link, found the bucket empty and resumed
     * nobody (tests/stress/regress_value_wait_write_lost). */
    it->u.val.vnext = atomic_load_explicit(&b->head, memory_order_relaxed);
    atomic_store_explicit(&b->head, it, memory_order_relaxed);
    count(it, 1);
    if (try_pass(it)) {
      unlink_locked(b, it); /* at the head: one step */
      evrt__spin_unlock(&b->lock);
      return true;
    }
    it->phase = 1;
    evrt__spin_unlock(&b->lock);
    if ((it->u.val.flags & EVRT_VALUE_WAIT_POLL) || it->u.val.end)
      arm(it, true);
    return false;
  }
  /* Resumed: by a write, a kick, the poll timer, an abort, or spuriously. */
  evrt__spin_lock(&b->lock);
  bool pass = try_pass(it);
  if (pass)
    unlink_locked(b, it);
  evrt__spin_unlock(&b->lock);
  if (pass) {
    if (it->deadline) {
      evrt__backend->timer_cancel(it); /* timer_idx is the timer thread's */
      it->deadline = 0;
    }
    it->phase = 0;
    return true;
  }
  uint64_t now = it->deadline ? evrt__now_ns() : 0;
  if (it->u.val.end && now >= it->u.val.end) {
    /* Timed out: the stream goes on, and the failure is counted as a
     * timed-out event wait is (evrt_stream_wait_failures). */
    evrt__value_cancel(it);
    atomic_fetch_add_explicit(&s->wait_failures, 1, memory_order_relaxed);
    return true;
  }
  if (it->deadline && now >= it->deadline)
    arm(it, false);
  return false;
}

void evrt__value_cancel(struct evrt__item *it) {
  struct bucket *b = bucket_of((const void *)it->u.val.addr);
  evrt__spin_lock(&b->lock);
  unlink_locked(b, it);
  evrt__spin_unlock(&b->lock);
  if (it->deadline) {
    evrt__backend->timer_cancel(it);
    it->deadline = 0;
  }
  it->phase = 0;
}

/* Resume the waits of b that lie in [lo, hi) (any address with kick_only:
 * those not EXPLICIT) and hold now. */
static void wake_bucket(struct bucket *b, uintptr_t lo, uintptr_t hi,
                        bool kick_only) {
  enum { BATCH = 32 };
  struct evrt__stream *owners[BATCH];
  for (;;) {
    int n = 0;
    bool more = false;
    evrt__spin_lock(&b->lock);
    for (struct evrt__item *it =
             atomic_load_explicit(&b->head, memory_order_relaxed);
         it; it = it->u.val.vnext) {
      uintptr_t a = (uintptr_t)it->u.val.addr;
      if (kick_only ? (it->u.val.flags & EVRT_VALUE_WAIT_EXPLICIT) != 0
                    : (a < lo || a >= hi))
        continue;
      /* seq_cst: after the writer's store (or fence) */
      uint64_t v = atomic_load_explicit(it->u.val.addr, memory_order_seq_cst);
      if (!holds(v, it->u.val.value, it->u.val.flags))
        continue;
      if (n == BATCH) {
        more = true;
        break;
      }
      /* The item stays linked (its owner unlinks it when it passes): a
       * second write before it runs resumes it again, harmlessly. */
      owners[n++] = it->owner;
    }
    evrt__spin_unlock(&b->lock);
    for (int i = 0; i < n; i++)
      evrt__be_stream_resume(owners[i]);
    if (!more)
      return;
  }
}

static void wake_range(uintptr_t lo, uintptr_t hi) {
  if (hi - lo <= 64) {
    /* A few words: their buckets only (scanning one twice is harmless). */
    for (uintptr_t a = lo & ~(uintptr_t)7; a < hi; a += 8) {
      struct bucket *b = bucket_of((const void *)a);
      if (atomic_load_explicit(&b->head, memory_order_relaxed))
        wake_bucket(b, lo, hi, false);
    }
    return;
  }
  for (int i = 0; i < NBUCKETS; i++)
    if (atomic_load_explicit(&buckets[i].head, memory_order_relaxed))
      wake_bucket(&buckets[i], lo, hi, false);
}

static void store_and_wake(_Atomic(uint64_t) *addr, uint64_t value) {
  /* seq_cst store then seq_cst load: the writer's half of the pair */
  atomic_store_explicit(addr, value, memory_order_seq_cst);
  if (atomic_load_explicit(&nwait, memory_order_seq_cst))
    wake_range((uintptr_t)addr, (uintptr_t)addr + 8);
}

void evrt__value_exec_write(struct evrt__item *it) {
  store_and_wake(it->u.val.addr, it->u.val.value);
}

void evrt__value_written(const void *p, size_t n) {
  /* plain stores before: a fence for the pair (top of file) */
  evrt__fence_seq_cst();
  /* acquire: a waiter counted is a waiter linked (top of file) */
  if (n && atomic_load_explicit(&nwait, memory_order_acquire))
    wake_range((uintptr_t)p, (uintptr_t)p + n);
}

void evrt__value_kick(void) {
  evrt__fence_seq_cst();
  /* acquire: as in evrt__value_written */
  if (!atomic_load_explicit(&nkick, memory_order_acquire))
    return;
  for (int i = 0; i < NBUCKETS; i++)
    if (atomic_load_explicit(&buckets[i].head, memory_order_relaxed))
      wake_bucket(&buckets[i], 0, 0, true);
}

/* ------------------------------------------------------------- the API */

static evrt_status_t check_addr(const void *addr) {
  if (!addr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "addr is NULL");
  if ((uintptr_t)addr & 7u)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "addr %p is not 8-byte aligned", addr);
  return EVRT_SUCCESS;
}

static evrt_status_t value_item(evrt_stream_t h, uint64_t *addr,
                                uint64_t value, unsigned flags, int kind,
                                int64_t timeout_ns) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__stream *s = NULL;
  if ((st = evrt__stream_arg(&h, &s)))
    return st;
  if ((st = check_addr(addr)))
    return st;
  if (kind == EVRT__ITEM_VALUE_WAIT ? (flags & ~EVRT_VALUE_WAIT_FLAGS_ALL) != 0
                                    : flags != 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown flags 0x%x", flags);
  struct evrt__item t;
  memset(&t, 0, sizeof t);
  t.kind = (uint8_t)kind;
  t.u.val.addr = (_Atomic(uint64_t) *)addr;
  t.u.val.value = value;
  t.u.val.flags = flags;
  if (timeout_ns >= 0) {
    /* relative to the enqueue, as evrt_stream_wait_event_timeout; at
     * least 1 ns so that 0 still means "no timeout" inside */
    t.u.val.end = evrt__now_ns() + (uint64_t)timeout_ns;
    if (!t.u.val.end)
      t.u.val.end = 1;
  }
  /* Armed at the first wait enqueued, long before it can park: copies and
   * host functions running meanwhile then already look for waiters. */
  if (kind == EVRT__ITEM_VALUE_WAIT &&
      !atomic_load_explicit(&evrt__value_armed, memory_order_relaxed))
    atomic_store_explicit(&evrt__value_armed, true, memory_order_seq_cst);
  return evrt__enqueue(s, h, &t);
}

evrt_status_t evrt_stream_wait_value64(evrt_stream_t h, uint64_t *addr,
                                       uint64_t value, unsigned flags) {
  return value_item(h, addr, value, flags, EVRT__ITEM_VALUE_WAIT, -1);
}

evrt_status_t evrt_stream_wait_value64_timeout(evrt_stream_t h,
                                               uint64_t *addr, uint64_t value,
                                               unsigned flags,
                                               int64_t timeout_ns) {
  return value_item(h, addr, value, flags, EVRT__ITEM_VALUE_WAIT,
                    timeout_ns < 0 ? -1 : timeout_ns);
}

evrt_status_t evrt_stream_write_value64(evrt_stream_t h, uint64_t *addr,
                                        uint64_t value, unsigned flags) {
  return value_item(h, addr, value, flags, EVRT__ITEM_VALUE_WRITE, -1);
}

evrt_status_t evrt_value_write64(uint64_t *addr, uint64_t value) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_addr(addr)))
    return st;
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_release(addr); /* a value wait that sees it is ordered */
  store_and_wake((_Atomic(uint64_t) *)addr, value);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_value_notify(const void *addr, size_t bytes) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!addr && bytes)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "addr is NULL");
  if ((uintptr_t)addr + bytes < (uintptr_t)addr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "range of %zu bytes at %p wraps the address space",
                      bytes, addr);
  evrt__value_written(addr, bytes);
  return EVRT_SUCCESS;
}
