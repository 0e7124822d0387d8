/*
 * event.c - events: generations, record, query, synchronize, stream waits,
 * elapsed time, reset and wait status.
 *
 * Lock order used here: event.lock -> stream.plock (record and wait enqueue
 * their item while holding the event lock, so that the generation they
 * publish and the item's seq agree).  Workers take event.lock with no other
 * lock held.
 *
 * event.lock is a seqlock: writers make it odd (a CAS: acquire, and seq_cst
 * for destroy's sake), store the fields with release (so the odd value is
 * visible before any new field) and
 * make it even again with release; readers load it with acquire, load the
 * fields with acquire (so the re-check cannot move above them) and re-check.
 * No fences (ThreadSanitizer does not model them); on x86 all of these are
 * plain moves.  Query costs a handful of loads and never writes.
 *
 * Destroy does not take the lock in the common case.  It kills the handle
 * with one CAS on the slot word (exactly one of racing destroys succeeds)
 * and then reads the lock; every lock holder CASes the lock and then reads
 * the slot word.  Both sides are seq_cst, so (store buffering forbidden)
 * either destroy sees the lock held, and waits for it, or the holder sees
 * the event dead and writes nothing.  A destroy that finds the lock free
 * therefore has the event to itself: it can scrub it and recycle the slot
 * without the lock.  Every lock holder that writes checks the incarnation
 * first (same_incarnation, or the generation its item carries).
 *
 * A dead slot is always clean (never recorded: see evrt__event_init_slot),
 * so create writes only the flags and the id.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void evrt__event_lock(struct evrt__event *e) {
  for (unsigned n = 0;; n++) {
    unsigned v = atomic_load_explicit(&e->lock, memory_order_relaxed);
    if (!(v & 1u) &&
        /* seq_cst, not just acquire: the holder's next read of the slot
         * word pairs with destroy (see the top of this file) */
        atomic_compare_exchange_weak_explicit(&e->lock, &v, v + 1,
                                              memory_order_seq_cst,
                                              memory_order_relaxed))
      break;
    if (n < 64)
      evrt__cpu_relax();
    else
      sched_yield();
  }
}

void evrt__event_unlock(struct evrt__event *e) {
  /* We hold it: a plain store of the next (even) value releases it. */
  unsigned v = atomic_load_explicit(&e->lock, memory_order_relaxed);
  atomic_store_explicit(&e->lock, v + 1, memory_order_release);
}

/* A consistent snapshot of the latest generation. */
struct gen {
  struct evrt__stream *src;
  uint64_t target;
  uint64_t rec_no;
};

static inline struct gen read_gen(struct evrt__event *e) {
  struct gen g;
  for (;;) {
    unsigned s1 = atomic_load_explicit(&e->lock, memory_order_acquire);
    if (EVRT_UNLIKELY(s1 & 1u)) {
      evrt__cpu_relax();
      continue;
    }
    g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                        memory_order_acquire);
    g.target = atomic_load_explicit(&e->target, memory_order_acquire);
    g.rec_no = atomic_load_explicit(&e->rec_no, memory_order_acquire);
    if (EVRT_LIKELY(atomic_load_explicit(&e->lock, memory_order_relaxed) == s1))
      return g;
  }
}

/* Is the latest generation complete?  The seqlock read of query: only src
 * and target. */
static inline __attribute__((always_inline)) bool
latest_done_try(struct evrt__event *e, bool *done, struct gen *g) {
  unsigned s1 = atomic_load_explicit(&e->lock, memory_order_acquire);
  uintptr_t src = atomic_load_explicit(&e->src, memory_order_acquire);
  uint64_t target = atomic_load_explicit(&e->target, memory_order_acquire);
  /* One test for "held" (odd) and "changed" */
  if (EVRT_UNLIKELY(atomic_load_explicit(&e->lock, memory_order_relaxed) !=
                    (s1 & ~1u)))
    return false;
  g->src = (struct evrt__stream *)src;
  g->target = target;
  *done = !src || evrt__done((struct evrt__stream *)src) >= target;
  return true;
}
static __attribute__((noinline)) bool latest_done_retry(struct evrt__event *e,
                                                        struct gen *g) {
  bool done;
  while (!latest_done_try(e, &done, g))
    evrt__cpu_relax();
  return done;
}
/* Query's answer: NOT_READY, SUCCESS, or the pending error of the failed
 * task the generation covers (src/failure.c: one more load, of the line
 * done_seq was read from). */
static inline evrt_status_t latest_status(struct evrt__event *e) {
  bool done;
  struct gen g;
  /* The retry loop out of line: the first try is straight-line code. */
  if (EVRT_UNLIKELY(!latest_done_try(e, &done, &g)))
    done = latest_done_retry(e, &g);
  if (!done) /* (or recorded inside a capture: an error, capture.c) */
    return EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g.src))
               ? evrt__capture_event_misuse(e, "queried")
               : EVRT_NOT_READY;
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_observe_event(e);
  return g.src ? evrt__error_check(g.src, g.target) : EVRT_SUCCESS;
}

static inline bool gen_done(const struct gen *g) {
  return !g->src || evrt__done(g->src) >= g->target;
}

static inline __attribute__((always_inline)) evrt_status_t
get_event(evrt_event_t h, struct evrt__event **out) {
  evrt_status_t st = evrt__ready();
  if (EVRT_UNLIKELY(st))
    return st;
  struct evrt__event *e = evrt__event_get(h);
  if (EVRT_UNLIKELY(!e))
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  *out = e;
  return EVRT_SUCCESS;
}

static inline __attribute__((always_inline)) evrt_status_t
get_pair_(evrt_event_t eh, evrt_stream_t *sh,
                              struct evrt__event **e, struct evrt__stream **s) {
  evrt_status_t st = get_event(eh, e);
  if (EVRT_UNLIKELY(st))
    return st;
  *s = evrt__stream_get(*sh);
  if (EVRT_UNLIKELY(!*s)) {
    if (*sh)
      return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                        "stream %p is destroyed or not a stream", (void *)*sh);
    *s = evrt__stream_null_default();
    *sh = evrt__stream_handle(*s);
  }
  return EVRT_SUCCESS;
}
/* Rewrites the caller's stream variable: NULL becomes the handle of the
 * current device's default stream (evrt__stream_null_default). */
#define get_pair(eh, sh, e, s) get_pair_((eh), &(sh), (e), (s))

/* Under the event lock: is the handle still this incarnation? */
static inline bool same_incarnation(struct evrt__event *e, evrt_event_t h) {
  /* seq_cst: the holder's half of the Dekker pair with destroy */
  return atomic_load(&e->hdr.hw) == (uint64_t)(uintptr_t)h;
}

#define IS_IPC(e) EVRT_UNLIKELY((e)->flags & EVRT_EVENT_INTERPROCESS)

/* Under the event lock: drop the wait records whose stream has passed its
 * wait (done_seq only grows, so they never count again); returns how many
 * are still pending. */
static uint32_t wrec_prune(struct evrt__event *e) {
  uint32_t j = 0;
  for (uint32_t i = 0; i < e->nwrec; i++)
    if (evrt__done(e->wrec[i].s) < e->wrec[i].seq)
      e->wrec[j++] = e->wrec[i];
  e->nwrec = j;
  return j;
}

/* Under the event lock: room for `extra` more wait records.  Reserved before
 * anything changes, so that running out of memory changes nothing.  Passed
 * waits are dropped before the buffer grows, so it is bounded by the waits
 * still pending (an event recorded once and waited on for ever, with
 * nobody asking its wait status, would otherwise keep every wait). */
static bool wrec_reserve(struct evrt__event *e, uint32_t extra) {
  if (EVRT_LIKELY(e->capwrec - e->nwrec >= extra))
    return true;
  if (e->capwrec - wrec_prune(e) >= extra)
    return true;
  uint64_t cap = (uint64_t)e->capwrec * 2;
  if (cap < 8)
    cap = 8;
  while (cap < (uint64_t)e->nwrec + extra)
    cap *= 2;
  if (cap > UINT32_MAX)
    return false;
  struct evrt__waitrec *n = evrt__malloc(cap * sizeof *n);
  if (!n)
    return false;
  if (e->nwrec)
    memcpy(n, e->wrec, e->nwrec * sizeof *n);
  evrt__free(e->wrec);
  e->wrec = n;
  e->capwrec = (uint32_t)cap;
  return true;
}

/* Under the event lock, with room reserved. */
static inline void wrec_add(struct evrt__event *e, struct evrt__stream *s,
                            uint64_t seq) {
  e->wrec[e->nwrec].s = s;
  e->wrec[e->nwrec].seq = seq;
  e->nwrec++;
}

/* A dead event slot: never recorded, no resource, no waiters, no shared
 * state.  Destroy leaves every slot it recycles in this state (scrub), and
 * new chunks start in it, so create initializes nothing else. */
void evrt__event_init_slot(struct evrt__obj *o) {
  struct evrt__event *e = (struct evrt__event *)o;
  atomic_init(&e->device, -1);
}

static inline bool slot_is_clean(struct evrt__event *e) {
  return atomic_load_explicit(&e->device, memory_order_relaxed) == -1 &&
         !atomic_load_explicit(&e->src, memory_order_relaxed) &&
         !atomic_load_explicit(&e->target, memory_order_relaxed) &&
         !atomic_load_explicit(&e->rec_no, memory_order_relaxed) &&
         !atomic_load_explicit(&e->ts, memory_order_relaxed) &&
         !atomic_load_explicit(&e->rec_thread, memory_order_relaxed) &&
         !e->nwrec && !e->wrec && !e->capwrec &&
         !e->has_resource && !e->imported && !e->nr_waiters &&
         !atomic_load_explicit(&e->ipc, memory_order_relaxed);
}

static __attribute__((cold, noinline)) evrt_status_t
create_invalid(evrt_event_t *event, unsigned flags) {
  if (!event)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "event is NULL");
  if (flags & ~EVRT_EVENT_FLAGS_ALL)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown event flags 0x%x",
                      flags & ~EVRT_EVENT_FLAGS_ALL);
  if (flags & EVRT_EVENT_TIMING)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "an interprocess event must have timing off");
  return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                    "an interprocess event cannot wait for the next record");
}

static __attribute__((cold, noinline)) evrt_status_t
create_slow(evrt_event_t *event, unsigned flags) {
  evrt_status_t st = evrt__ready();
  return st ? st : evrt_event_create(event, flags);
}

static evrt_status_t init_event(struct evrt__obj *o, uintptr_t h,
                                evrt_event_t *event, unsigned flags);

/* This thread's slot cache is empty: the table's free stack, or a new slot
 * (evrt__table_alloc looks at the cache again, harmlessly). */
static __attribute__((noinline)) evrt_status_t
create_uncached(evrt_event_t *event, unsigned flags) {
  struct evrt__obj *o;
  evrt_status_t st = evrt__table_alloc(&evrt__events, &o);
  return st ? st : init_event(o, evrt__table_next_handle(o), event, flags);
}

evrt_status_t evrt_event_create(evrt_event_t *event, unsigned flags) {
  if (EVRT_UNLIKELY(!evrt__running()))
    return create_slow(event, flags);
  /* One test for every invalid argument; the cold path says which. */
  if (EVRT_UNLIKELY(!event || (flags & ~EVRT_EVENT_FLAGS_ALL) ||
                    ((flags & EVRT_EVENT_INTERPROCESS) &&
                     (flags & (EVRT_EVENT_TIMING |
                               EVRT_EVENT_WAIT_NEXT_RECORD)))))
    return create_invalid(event, flags);
  /* This thread's slot cache (handle.c), inline */
  struct evrt__tcache *c = &evrt__tcaches[EVRT__TAG_EVENT - 1];
  uint32_t n = c->n;
  if (EVRT_UNLIKELY(!n))
    return create_uncached(event, flags);
  c->n = n - 1;
  uintptr_t h = (uintptr_t)c->next[n - 1];
  return init_event(evrt__table_at_known(&evrt__events,
                                         ((uint32_t)h >> 2) - 1,
                                         EVRT__EVENT_SLOT),
                    h, event, flags);
}

/* Make the clean dead slot o the new event. */
static inline __attribute__((always_inline)) evrt_status_t
init_event(struct evrt__obj *o, uintptr_t h, evrt_event_t *event,
           unsigned flags) {
  struct evrt__event *e = (struct evrt__event *)o;
#ifndef NDEBUG
  if (!slot_is_clean(e) || h != evrt__table_next_handle(o)) {
    fprintf(stderr, "evrt: internal error: event slot %u recycled unclean\n",
            evrt__obj_index(o));
    abort();
  }
#endif
  e->flags = flags;
  /* Unique for the life of the process: the live generation and the slot. */
  e->id = ((uint64_t)h & 0xffffffff00000000u) | ((uint32_t)h >> 2);
  evrt__table_publish_as(o, h);
  *event = (evrt_event_t)h;
  return EVRT_SUCCESS;
}

/* Resume the streams of legacy next-record waits taken off an event. */
static void resume_list(struct evrt__item *list) {
  while (list) {
    struct evrt__item *next = list->u.ev.wnext;
    evrt__stream_resume(list->owner);
    list = next;
  }
}

/* Destroy of an event that was recorded, exported, has legacy waiters or
 * was locked when we killed it: give back what it holds and return the
 * slot to the clean state.  The handle is dead already and we are its only
 * destroyer. */
static __attribute__((noinline)) evrt_status_t
destroy_release(struct evrt__event *e) {
  evrt__table_release(&evrt__events, &e->hdr);
  return EVRT_SUCCESS;
}

static __attribute__((noinline)) evrt_status_t
destroy_slow(struct evrt__event *e, unsigned lk) {
  bool ipc = e->flags & EVRT_EVENT_INTERPROCESS;
  /* The lock only to wait for a holder that got in before the kill (lk
   * odd), to take legacy waiters off the list (a worker's bind scans it
   * under the lock without checking the incarnation), and for interprocess
   * events (src/ipc_proto.c re-checks under it).  Otherwise nobody can write:
   * see the top of this file. */
  bool lock = (lk & 1u) || ipc || e->nr_waiters;
  if (lock)
    evrt__event_lock(e);
  if (e->has_resource) {
    e->has_resource = false;
    evrt__event_resource_give(atomic_load_explicit(&e->device,
                                                   memory_order_relaxed));
  }
  /* Legacy waits still waiting for a record that can no longer come are
   * released as empty dependencies (rule 7: destroy never breaks waiters). */
  struct evrt__item *nr = e->nr_waiters;
  e->nr_waiters = NULL;
  for (struct evrt__item *it = nr; it; it = it->u.ev.wnext)
    it->u.ev.src = NULL;
  /* Scrub.  Pending items keep (pointer, generation) and skip their writes;
   * a stale query may read a mix of old and zero fields and report either
   * state, nothing worse. */
  atomic_store_explicit(&e->device, -1, memory_order_relaxed);
  atomic_store_explicit(&e->src, 0, memory_order_relaxed);
  atomic_store_explicit(&e->target, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rec_no, 0, memory_order_relaxed);
  atomic_store_explicit(&e->ts, 0, memory_order_relaxed);
  atomic_store_explicit(&e->rec_thread, 0, memory_order_relaxed);
  evrt__free(e->wrec); /* wait records end with the incarnation */
  e->wrec = NULL;
  e->nwrec = e->capwrec = 0;
  e->imported = false;
  if (lock)
    evrt__event_unlock(e);
  if (ipc)
    evrt__ipc_close(e); /* leaves e->ipc NULL */
  resume_list(nr);
  return destroy_release(e);
}

static __attribute__((cold, noinline)) evrt_status_t
destroy_slow_start(evrt_event_t h) {
  evrt_status_t st = evrt__ready();
  return st ? st : evrt_event_destroy(h);
}

evrt_status_t evrt_event_destroy(evrt_event_t h) {
  if (EVRT_UNLIKELY(!evrt__running()))
    return destroy_slow_start(h);
  struct evrt__event *e = (struct evrt__event *)evrt__table_slot(
      &evrt__events, (uintptr_t)h, EVRT__EVENT_SLOT);
  /* The CAS validates and kills at once: of racing destroys of one handle,
   * exactly one gets here. */
  if (EVRT_UNLIKELY(!e || !evrt__table_kill_handle(&e->hdr, (uintptr_t)h)))
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  /* seq_cst: the other half of the Dekker pair with lock holders.  Free
   * (even): every holder so far has released it (and we see its writes:
   * this load acquires), every later one will find the event dead. */
  unsigned lk = atomic_load(&e->lock);
  if (EVRT_UNLIKELY((lk & 1u) | (e->flags & EVRT_EVENT_INTERPROCESS) ||
                    atomic_load_explicit(&e->rec_no, memory_order_relaxed) ||
                    e->nr_waiters))
    return destroy_slow(e, lk);
  /* Pending items keep only (pointer, generation) pairs and re-check them,
   * so the slot can be reused at once. */
  if (EVRT_UNLIKELY(!evrt__table_give_cached(
          EVRT__TAG_EVENT, evrt__live_after(evrt__dead_of((uintptr_t)h),
                                            (uint32_t)(uintptr_t)h))))
    return destroy_release(e);
  return EVRT_SUCCESS;
}

/* Under the event lock: make (s, target) the latest generation, number
 * rec_no, with timestamp ts; the wait status starts over.  device >= 0
 * fixes the event's device (its first record). */
static inline __attribute__((always_inline)) void
publish_locked(struct evrt__event *e, struct evrt__stream *s, int device,
               uint64_t rec_no, uint64_t target, uint64_t ts) {
  if (device >= 0)
    atomic_store_explicit(&e->device, device, memory_order_relaxed);
  atomic_store_explicit(&e->src, (uintptr_t)s, memory_order_release);
  atomic_store_explicit(&e->target, target, memory_order_release);
  atomic_store_explicit(&e->rec_no, rec_no, memory_order_release);
  atomic_store_explicit(&e->ts, ts, memory_order_release);
  atomic_store_explicit(&e->rec_thread, evrt__thread_id(), memory_order_relaxed);
  e->nwrec = 0;
}

evrt_status_t evrt__event_publish(struct evrt__event *e, uint32_t ev_gen,
                                  struct evrt__stream *s, int device,
                                  uint64_t target, bool take_resource,
                                  uint64_t *rec_no) {
  evrt__event_lock(e);
  if (evrt__obj_gen(&e->hdr) != ev_gen) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event destroyed");
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (dev >= 0 && dev != device) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "event device %d does not match the recording device %d",
                      dev, device);
  }
  /* Best effort: a graph's record node cannot fail when the graph runs. */
  if (take_resource && !e->has_resource &&
      !(e->flags & EVRT_EVENT_NO_LIMIT) && evrt__event_resource_take(device))
    e->has_resource = true;
  *rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed) + 1;
  publish_locked(e, s, dev < 0 ? device : -1, *rec_no, target, 0);
  /* (a record inside a capture is a marker, not a generation to order by) */
  if (EVRT_UNLIKELY(evrt__check_on) && !evrt__captured_src((uintptr_t)s))
    evrt__check_record(e->id, s, *rec_no, target);
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_record(evrt_event_t eh, evrt_stream_t sh) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (EVRT_UNLIKELY(st))
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_record(e, eh, s, EVRT_EVENT_RECORD_DEFAULT, &st))
    return st;
  if (IS_IPC(e))
    return evrt__ipc_record(e, s);
  struct evrt__item *it = NULL;
  struct evrt__item *nr = NULL;
  bool timing = e->flags & EVRT_EVENT_TIMING;
  bool tracing = EVRT_TRACING();

  evrt__event_lock(e);
  if (EVRT_UNLIKELY(!same_incarnation(e, eh))) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                      (void *)eh);
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (EVRT_UNLIKELY(dev >= 0 && dev != s->device)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "event device %d does not match recording stream's "
                      "device %d",
                      dev, s->device);
  }
  bool took = false;
  if (!e->has_resource && !(e->flags & EVRT_EVENT_NO_LIMIT)) {
    if (EVRT_UNLIKELY(!evrt__event_resource_take(s->device))) {
      evrt__event_unlock(e);
      return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                        "device %d has no free event resource (limit %u); "
                        "destroy or reset events",
                        s->device,
                        atomic_load(&evrt__devices[s->device].ev_limit));
    }
    took = true;
  }
  /* Legacy waits queued on the event bind to this record and count as its
   * waiters: make room for them first. */
  uint32_t nnr = 0;
  for (struct evrt__item *w = e->nr_waiters; w; w = w->u.ev.wnext)
    nnr++;
  if (EVRT_UNLIKELY(nnr) && !wrec_reserve(e, nnr)) {
    if (took)
      evrt__event_resource_give(s->device);
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "cannot track the waits bound to this record");
  }
  uint64_t rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed) + 1;
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  bool idle = evrt__done(s) >= enq;
  uint64_t target = enq, ts = 0;
  if (!idle && (timing || tracing)) {
    /* The timestamp (or the trace marker) must be taken when the stream
     * reaches the record: that needs an item. */
    it = evrt__item_new(s);
    if (EVRT_UNLIKELY(!it)) {
      if (took)
        evrt__event_resource_give(s->device);
      evrt__event_unlock(e);
      return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                        "cannot allocate the record item");
    }
    it->kind = EVRT__ITEM_RECORD;
    it->u.ev.ipc = NULL;
    it->u.ev.ev = e;
    it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
    it->u.ev.rec_no = rec_no;
    it->u.ev.ev_id = e->id;
    target = evrt__stream_push(s, it);
  } else if (timing) {
    ts = evrt__backend->timestamp(s->device);
  }
  if (took)
    e->has_resource = true;
  publish_locked(e, s, dev < 0 ? s->device : -1, rec_no, target, ts);
  /* The legacy waits that were waiting for this record bind to it now. */
  nr = e->nr_waiters;
  e->nr_waiters = NULL;
  for (struct evrt__item *w = nr; w; w = w->u.ev.wnext) {
    w->u.ev.src = s;
    w->u.ev.target = target;
    w->u.ev.rec_no = rec_no;
    wrec_add(e, w->owner, w->seq);
  }
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_record(e->id, s, rec_no, target);
  evrt__event_unlock(e);
  if (EVRT_UNLIKELY(tracing) && !it)
    evrt__trace_record(s->device, s->id, e->id, rec_no, evrt__now_ns());
  resume_list(nr);
  return EVRT_SUCCESS;
}

static __attribute__((cold, noinline)) evrt_status_t
query_slow(evrt_event_t h) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (IS_IPC(e))
    return EVRT_UNLIKELY(evrt__check_on) ? evrt__check_ipc_observed(
                                               e, evrt__ipc_query(e))
                                         : evrt__ipc_query(e);
  return latest_status(e);
}

evrt_status_t evrt_event_query(evrt_event_t h) {
  /* Every unusual case (library not running, bad handle, interprocess) is
   * a tail call, so the common one keeps everything in registers. */
  if (EVRT_UNLIKELY(!evrt__running()))
    return query_slow(h);
  struct evrt__event *e = evrt__event_get(h);
  if (EVRT_UNLIKELY(!e) || IS_IPC(e))
    return query_slow(h);
  return latest_status(e);
}

/* The waiting part, out of line: its trace timing keeps values live across
 * the wait, and inlined it made every call (a complete event included) save
 * twice as many registers. */
static __attribute__((noinline)) evrt_status_t
sync_wait(struct evrt__event *e, struct gen g, int64_t timeout_ns) {
  evrt_status_t st;
  if (EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g.src)))
    return evrt__capture_event_misuse(e, "synchronized");
  if (evrt__tls_stream == g.src && g.target > evrt__tls_seq)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "event synchronized from a host function of the stream "
                      "that must reach the record first");
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  st = evrt__wait_seq(g.src, g.target, timeout_ns,
                      (e->flags & EVRT_EVENT_BLOCKING_SYNC) != 0);
  if (EVRT_TRACING())
    evrt__trace_host_wait("event_synchronize", e->id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st, "event generation %llu not complete after %lld ns",
                      (unsigned long long)g.rec_no, (long long)timeout_ns);
  if (EVRT_UNLIKELY(evrt__check_on) && !st)
    evrt__check_observe_event(e);
  return st ? st : evrt__error_check(g.src, g.target);
}

evrt_status_t evrt_event_synchronize_timeout(evrt_event_t h,
                                             int64_t timeout_ns) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (EVRT_UNLIKELY(st))
    return st;
  if (EVRT_UNLIKELY(evrt__any_capture()) && evrt__capture_sync_event(e, &st))
    return st;
  if (IS_IPC(e))
    return EVRT_UNLIKELY(evrt__check_on)
               ? evrt__check_ipc_observed(e, evrt__ipc_sync(e, timeout_ns))
               : evrt__ipc_sync(e, timeout_ns);
  struct gen g = read_gen(e);
  if (gen_done(&g)) {
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_observe_event(e);
    return g.src ? evrt__error_check(g.src, g.target) : EVRT_SUCCESS;
  }
  return sync_wait(e, g, timeout_ns);
}

evrt_status_t evrt_event_synchronize(evrt_event_t h) {
  return evrt_event_synchronize_timeout(h, -1);
}

/* A wait satisfied at the call on an idle stream needs no item but still
 * shows in a trace: a zero-length wait slice with its flow. */
static void trace_skipped_wait(struct evrt__stream *s, struct evrt__event *e,
                               const struct gen *g) {
  /* Only called for a stream found idle, so the slice overlaps nothing. */
  uint64_t t = evrt__now_ns();
  evrt__trace_wait_bind(s->device, s->id, e->id, g->rec_no, t);
  evrt__trace_item(s->device, s->id, EVRT__ITEM_WAIT, NULL, t, t, e->id,
                   g->rec_no);
  evrt__trace_wait_resume(s->device, s->id, e->id, g->rec_no, t);
}

static evrt_status_t stream_wait(evrt_stream_t sh, evrt_event_t eh,
                                 int64_t timeout_ns) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (EVRT_UNLIKELY(st))
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_wait(s, e, eh, EVRT_EVENT_WAIT_DEFAULT, &st))
    return st;
  if (IS_IPC(e))
    return evrt__ipc_wait(e, s, timeout_ns);
  evrt__event_lock(e);
  if (EVRT_UNLIKELY(!same_incarnation(e, eh))) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                      (void *)eh);
  }
  struct gen g;
  g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                      memory_order_relaxed);
  g.target = atomic_load_explicit(&e->target, memory_order_relaxed);
  g.rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  if (EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g.src))) {
    /* recorded inside a capture: this stream joins it (a fork) */
    uint32_t ev_gen = evrt__obj_gen(&e->hdr);
    evrt__event_unlock(e);
    return evrt__capture_fork(s, e, ev_gen, g.target, g.rec_no);
  }
  bool next_record = !g.src && (e->flags & EVRT_EVENT_WAIT_NEXT_RECORD);
  if (!g.src && !next_record) {
    /* Rule 2: a never-recorded (or reset) event is an empty dependency. */
    /* (No trace slice: the stream may be busy right now, and a slice
     * stamped at this call would overlap the item it is running.) */
    evrt__event_unlock(e);
    return EVRT_SUCCESS;
  }
  if (!next_record && gen_done(&g) &&
      evrt__done(s) >= atomic_load_explicit(&s->enq_seq, memory_order_acquire)) {
    /* Satisfied already and the waiting stream is idle: it has passed the
     * wait the moment it was made.  No item, no wake-up. */
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_wait_skipped(s, e, g.rec_no);
    evrt__event_unlock(e);
    if (EVRT_TRACING())
      trace_skipped_wait(s, e, &g);
    return EVRT_SUCCESS;
  }
  struct evrt__item *it = NULL;
  if (EVRT_UNLIKELY(!next_record && !wrec_reserve(e, 1)) ||
      EVRT_UNLIKELY(!(it = evrt__item_new(s)))) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate the wait item");
  }
  it->kind = EVRT__ITEM_WAIT;
  it->dep_kind = next_record ? EVRT__DEP_NEXT_RECORD : EVRT__DEP_STREAM;
  it->u.ev.ev = e;
  it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
  it->u.ev.ev_id = e->id;
  it->u.ev.rec_no = next_record ? 0 : g.rec_no;
  it->u.ev.src = g.src;
  it->u.ev.target = g.target;
  it->u.ev.wnext = NULL;
  /* The deadline is set relative to the enqueue (ACL's wait timeout). */
  it->deadline = timeout_ns >= 0 ? evrt__now_ns() + (uint64_t)timeout_ns : 0;
  uint64_t seq = evrt__stream_push(s, it);
  if (!next_record)
    wrec_add(e, s, seq); /* a wait task of the latest generation */
  evrt__event_unlock(e);
  if (EVRT_TRACING() && !next_record)
    evrt__trace_wait_bind(s->device, s->id, e->id, g.rec_no, evrt__now_ns());
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_wait_event(evrt_stream_t sh, evrt_event_t eh) {
  return stream_wait(sh, eh, -1);
}

evrt_status_t evrt_stream_wait_event_timeout(evrt_stream_t sh, evrt_event_t eh,
                                             int64_t timeout_ns) {
  if (timeout_ns < 0)
    timeout_ns = -1;
  return stream_wait(sh, eh, timeout_ns);
}

/* Timing checks shared by elapsed time and timestamp, in rule 6's order. */
static evrt_status_t timing_of(struct evrt__event *e, const char *which,
                               uint64_t *ts) {
  if (!(e->flags & EVRT_EVENT_TIMING))
    return evrt__fail(EVRT_ERROR_TIMING_DISABLED,
                      "%s event was created without EVRT_EVENT_TIMING", which);
  uint64_t t;
  struct gen g;
  for (;;) {
    unsigned s1 = atomic_load_explicit(&e->lock, memory_order_acquire);
    if (s1 & 1u) {
      evrt__cpu_relax();
      continue;
    }
    g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                        memory_order_acquire);
    g.target = atomic_load_explicit(&e->target, memory_order_acquire);
    t = atomic_load_explicit(&e->ts, memory_order_acquire);
    if (atomic_load_explicit(&e->lock, memory_order_relaxed) == s1)
      break;
  }
  if (EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g.src)))
    return evrt__capture_event_misuse(e, "timed");
  if (!g.src)
    return evrt__fail(EVRT_ERROR_NOT_RECORDED, "%s event was never recorded",
                      which);
  if (!gen_done(&g))
    return evrt__fail(EVRT_ERROR_NOT_COMPLETE,
                      "%s event's latest record has not completed", which);
  if (t == 0) {
    /* Complete, so the record item has run; its timestamp store happened
     * before done_seq (release) that we read (acquire).  Re-read. */
    evrt__event_lock(e);
    t = atomic_load_explicit(&e->ts, memory_order_relaxed);
    evrt__event_unlock(e);
  }
  *ts = t;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_elapsed_time(float *ms, evrt_event_t sh,
                                      evrt_event_t eh) {
  struct evrt__event *a = NULL, *b = NULL;
  evrt_status_t st = get_event(sh, &a);
  if (st || (st = get_event(eh, &b)))
    return st;
  if (!ms)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "ms is NULL");
  /* Rule 6 order: timing (both), recorded (both), complete (both), device. */
  if (!(a->flags & EVRT_EVENT_TIMING) || !(b->flags & EVRT_EVENT_TIMING))
    return evrt__fail(EVRT_ERROR_TIMING_DISABLED,
                      "both events must be created with EVRT_EVENT_TIMING");
  struct gen ga = read_gen(a), gb = read_gen(b);
  if (EVRT_UNLIKELY(evrt__captured_src((uintptr_t)ga.src) ||
                    evrt__captured_src((uintptr_t)gb.src)))
    return evrt__capture_event_misuse(
        evrt__captured_src((uintptr_t)ga.src) ? a : b, "timed");
  if (!ga.src || !gb.src)
    return evrt__fail(EVRT_ERROR_NOT_RECORDED,
                      "both events must be recorded before elapsed time");
  if (!gen_done(&ga) || !gen_done(&gb))
    return evrt__fail(EVRT_ERROR_NOT_COMPLETE,
                      "both events must be complete before elapsed time");
  int da = atomic_load_explicit(&a->device, memory_order_relaxed);
  int db = atomic_load_explicit(&b->device, memory_order_relaxed);
  if (da != db)
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "events belong to devices %d and %d", da, db);
  uint64_t t0, t1;
  if ((st = timing_of(a, "start", &t0)) || (st = timing_of(b, "end", &t1)))
    return st;
  *ms = (float)((double)((int64_t)(t1 - t0)) / 1e6);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_timestamp(evrt_event_t h, uint64_t *ns) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!ns)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "ns is NULL");
  return timing_of(e, "the", ns);
}

evrt_status_t evrt_event_reset(evrt_event_t eh, evrt_stream_t sh) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (st)
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_reset(e, eh, s, &st))
    return st;
  if (IS_IPC(e))
    return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "interprocess events cannot be reset");
  evrt__event_lock(e);
  if (!same_incarnation(e, eh)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                      (void *)eh);
  }
  uint64_t rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  if (rec_no == 0) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_NOT_RECORDED,
                      "reset of an event that was never recorded");
  }
  if (EVRT_UNLIKELY(evrt__captured_src(
          atomic_load_explicit(&e->src, memory_order_relaxed)))) {
    evrt__event_unlock(e);
    return evrt__capture_event_misuse(e, "reset outside its capture");
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate the reset item");
  }
  it->kind = EVRT__ITEM_RESET;
  it->u.ev.ev = e;
  it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
  it->u.ev.rec_no = rec_no;
  it->u.ev.ev_id = e->id;
  evrt__stream_push(s, it);
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_wait_status(evrt_event_t h) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (IS_IPC(e))
    return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "wait status is not tracked across processes");
  evrt__event_lock(e);
  if (!same_incarnation(e, h)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                      (void *)h);
  }
  if (EVRT_UNLIKELY(evrt__captured_src(
          atomic_load_explicit(&e->src, memory_order_relaxed)))) {
    evrt__event_unlock(e);
    return evrt__capture_event_misuse(e, "asked for its wait status");
  }
  /* Any wait left after dropping the passed ones: a waiting stream has not
   * passed its wait yet. */
  uint32_t pending = wrec_prune(e);
  evrt__event_unlock(e);
  return pending ? EVRT_NOT_READY : EVRT_SUCCESS;
}

/* The sizes of evrt_event_info_t that callers may pass, one per version of
 * the struct (evrt.h: fields are only appended).  A new field: append it
 * in evrt.h, add the new sizeof here, and update the assertion. */
static const uint32_t info_sizes[] = {40 /* 0.1 */};
_Static_assert(sizeof(evrt_event_info_t) == 40,
               "evrt_event_info_t changed: add its new size to info_sizes");

static bool info_size_known(uint32_t size) {
  for (size_t i = 0; i < sizeof info_sizes / sizeof info_sizes[0]; i++)
    if (info_sizes[i] == size)
      return true;
  return false;
}

evrt_status_t evrt_event_get_info(evrt_event_t h, evrt_event_info_t *info) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!info)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "info is NULL");
  uint32_t size = info->struct_size;
  if (!info_size_known(size))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "info->struct_size is %u: set it to "
                      "sizeof(evrt_event_info_t) (%zu in evrt %s)%s",
                      (unsigned)size, sizeof(evrt_event_info_t),
                      evrt_version_string(),
                      size > sizeof(evrt_event_info_t)
                          ? "; built against a newer evrt.h?"
                          : "");
  /* Filled here and copied at the end: a failing call writes nothing. */
  evrt_event_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = size;
  out.flags = e->flags;
  out.imported = e->imported;
  out.device = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (IS_IPC(e)) {
    st = evrt__ipc_query(e);
    if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
      return st;
    out.state = st == EVRT_SUCCESS ? EVRT_EVENT_STATE_COMPLETE
                                   : EVRT_EVENT_STATE_PENDING;
    out.record_count = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  } else {
    evrt__event_lock(e);
    struct gen g;
    g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                        memory_order_relaxed);
    g.target = atomic_load_explicit(&e->target, memory_order_relaxed);
    out.record_count = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
    out.record_thread =
        g.src ? atomic_load_explicit(&e->rec_thread, memory_order_relaxed) : 0;
    evrt__event_unlock(e);
    out.state = !g.src         ? EVRT_EVENT_STATE_UNRECORDED
                : gen_done(&g) ? EVRT_EVENT_STATE_COMPLETE
                               : EVRT_EVENT_STATE_PENDING;
  }
  memcpy(info, &out, size);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_get_device(evrt_event_t h, int *device) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!device)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "device is NULL");
  *device = atomic_load_explicit(&e->device, memory_order_relaxed);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_get_id(evrt_event_t h, uint64_t *id) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!id)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "id is NULL");
  *id = e->id;
  return EVRT_SUCCESS;
}

/* ----------------------------------------------------- worker side */

void evrt__event_exec_record(struct evrt__item *it, uint64_t now) {
  struct evrt__event *e = it->u.ev.ev;
  evrt__event_lock(e);
  if (evrt__obj_gen(&e->hdr) ==
          it->u.ev.ev_gen &&
      atomic_load_explicit(&e->rec_no, memory_order_relaxed) == it->u.ev.rec_no)
    atomic_store_explicit(&e->ts, now, memory_order_release);
  evrt__event_unlock(e);
}

void evrt__event_exec_reset(struct evrt__item *it) {
  struct evrt__event *e = it->u.ev.ev;
  evrt__event_lock(e);
  /* A record made after the reset was enqueued wins over the reset. */
  if (evrt__obj_gen(&e->hdr) ==
          it->u.ev.ev_gen &&
      atomic_load_explicit(&e->rec_no, memory_order_relaxed) ==
          it->u.ev.rec_no) {
    atomic_store_explicit(&e->src, 0, memory_order_release);
    atomic_store_explicit(&e->target, 0, memory_order_release);
    atomic_store_explicit(&e->ts, 0, memory_order_release);
    if (e->has_resource) {
      e->has_resource = false;
      evrt__event_resource_give(atomic_load_explicit(&e->device,
                                                     memory_order_relaxed));
    }
  }
  evrt__event_unlock(e);
}

bool evrt__event_bind_next_record(struct evrt__item *it, bool first) {
  struct evrt__event *e = it->u.ev.ev;
  bool bound = true;
  evrt__event_lock(e);
  if (!first) {
    /* Still queued on the event?  A record or destroy takes us off the list
     * and fills in the generation (src NULL = released by destroy). */
    for (struct evrt__item *w = e->nr_waiters; w; w = w->u.ev.wnext)
      if (w == it) {
        bound = false;
        break;
      }
  } else if (evrt__obj_gen(&e->hdr) !=
             it->u.ev.ev_gen) {
    it->u.ev.src = NULL; /* destroyed before we got here: empty dependency */
  } else {
    struct evrt__stream *src = (struct evrt__stream *)atomic_load_explicit(
        &e->src, memory_order_relaxed);
    /* (a record inside a capture is no record for a legacy wait) */
    if (src && !evrt__captured_src((uintptr_t)src)) {
      /* Recorded since the wait was enqueued: bind to the latest record. */
      it->u.ev.src = src;
      it->u.ev.target = atomic_load_explicit(&e->target, memory_order_relaxed);
      it->u.ev.rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
      /* Counted for the wait status if there is memory for it (a worker
       * cannot fail the call that enqueued the wait any more). */
      if (wrec_reserve(e, 1))
        wrec_add(e, it->owner, it->seq);
    } else {
      it->u.ev.wnext = e->nr_waiters;
      e->nr_waiters = it;
      bound = false;
    }
  }
  evrt__event_unlock(e);
  return bound;
}

void evrt__event_unlink_next_record(struct evrt__item *it) {
  struct evrt__event *e = it->u.ev.ev;
  evrt__event_lock(e);
  /* A record or destroy may have taken it off already (and bound it). */
  for (struct evrt__item **p = &e->nr_waiters; *p; p = &(*p)->u.ev.wnext)
    if (*p == it) {
      *p = it->u.ev.wnext;
      break;
    }
  evrt__event_unlock(e);
}
