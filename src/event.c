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
 *
 * Calls racing destroy and slot reuse.  A call looks the handle up without
 * a lock; by the time it acts the event may be destroyed and its slot
 * reused by a create.  Writers re-check the handle under the lock (above).
 * Lock-free readers of the generation (query, synchronize, elapsed time)
 * check the handle inside the seqlock read (gen_try): every write of the
 * generation fields is made under the lock, destroy's scrub of a recorded
 * event included (destroy_slow always takes it).  Elapsed time also reads
 * the devices, and re-checks the handles after those (acquire) reads.  The stream a call names is re-checked under its
 * plock or after acquire loads (evrt__stream_link_live, evrt__stream_is).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void evrt__event_lock(struct evrt__event *e) {
  struct evrt__backoff b = {0};
  EVRT__SPIN_HELD(1);
  for (;;) {
    unsigned v = atomic_load_explicit(&e->lock, memory_order_relaxed);
    if (!(v & 1u) &&
        /* seq_cst, not just acquire: the holder's next read of the slot
         * word pairs with destroy (see the top of this file) */
        atomic_compare_exchange_weak_explicit(&e->lock, &v, v + 1,
                                              memory_order_seq_cst,
                                              memory_order_relaxed))
      break;
    evrt__backoff(&b);
  }
}

void evrt__event_unlock(struct evrt__event *e) {
  /* We hold it: a plain store of the next (even) value releases it. */
  unsigned v = atomic_load_explicit(&e->lock, memory_order_relaxed);
  atomic_store_explicit(&e->lock, v + 1, memory_order_release);
  EVRT__SPIN_HELD(-1);
}

/* A consistent snapshot of the latest generation. */
struct gen {
  struct evrt__stream *src;
  uint64_t target;
  uint64_t rec_no; /* (full reads only) */
  uint64_t ts;     /* (full reads only) */
  unsigned flags;  /* the event's */
};

enum { GEN_DEAD = -1, GEN_BUSY = 0, GEN_OK = 1 };

static inline bool gen_done(const struct gen *g) {
  return !g->src || evrt__done(g->src) >= g->target;
}

/* The seqlock reader, the only one: one attempt at a snapshot of the
 * latest generation of the event whose raw handle is r (src and target;
 * with `full` also rec_no and ts).  GEN_BUSY if a writer held the lock or
 * changed the fields meanwhile, GEN_DEAD if r is not the live incarnation.
 * The handle is checked after the first load of the lock word: a destroy,
 * a create reusing the slot and its records, all before that load, fail
 * the check; any of them after it changes the lock word (every write of
 * these fields is made under the lock, destroy's scrub included) or
 * leaves the fields as they were (a never-recorded event's destroy and the
 * create after it write none of them), so an accepted snapshot is one the
 * event r really had.  The same loads as a lookup and a seqlock read,
 * reordered; inlined with a constant `full`, the query reads just the
 * words it needs. */
static inline __attribute__((always_inline)) int
gen_try(struct evrt__event *e, uint64_t r, struct gen *g, bool full) {
  unsigned s1 = atomic_load_explicit(&e->lock, memory_order_acquire);
  /* acquire: as a lookup's (the object's initialization is visible) */
  if (EVRT_UNLIKELY(atomic_load_explicit(&e->hdr.hw, memory_order_acquire) !=
                    r))
    return GEN_DEAD;
  g->flags = atomic_load_explicit(&e->flags, memory_order_relaxed);
  g->src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                       memory_order_acquire);
  g->target = atomic_load_explicit(&e->target, memory_order_acquire);
  if (full) {
    g->rec_no = atomic_load_explicit(&e->rec_no, memory_order_acquire);
    g->ts = atomic_load_explicit(&e->ts, memory_order_acquire);
  }
  /* One test for "held" (odd) and "changed" */
  return EVRT_LIKELY(atomic_load_explicit(&e->lock, memory_order_relaxed) ==
                     (s1 & ~1u))
             ? GEN_OK
             : GEN_BUSY;
}

/* A full snapshot, retrying with back-off while a writer holds the lock:
 * GEN_OK or GEN_DEAD. */
static __attribute__((noinline)) int read_gen(struct evrt__event *e,
                                              uint64_t r, struct gen *g) {
  struct evrt__backoff b = {0};
  int st;
  while ((st = gen_try(e, r, g, true)) == GEN_BUSY)
    evrt__backoff(&b);
  return st;
}

/* Is the slot word still h?  After acquire loads of the event's fields:
 * true means they were h's (see the top of the file). */
static inline bool still(struct evrt__event *e, evrt_event_t h) {
  return atomic_load_explicit(&e->hdr.hw, memory_order_relaxed) ==
         evrt__raw((uintptr_t)h);
}

/* The event slot a handle names (live or not), or NULL. */
static inline struct evrt__event *event_slot(uint64_t r) {
  return (struct evrt__event *)evrt__table_slot(&evrt__events, r,
                                                EVRT__EVENT_SLOT);
}

/* Query's answer from a snapshot: NOT_READY, SUCCESS, or the pending error
 * of the failed task the generation covers (src/failure.c: one more load,
 * of the line done_seq was read from).  may_check false: the caller has
 * already seen evrt__check_on false (it is set once, at initialization),
 * so the checker's call is compiled out of that caller; with it in, the
 * call kept live values across it and made query's fast path save and
 * restore two registers and a frame (9 instructions of 54, callgrind). */
static inline evrt_status_t latest_status(struct evrt__event *e,
                                          const struct gen *g,
                                          bool may_check) {
  if (!gen_done(g)) /* (or recorded inside a capture: an error, capture.c) */
    return EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g->src))
               ? evrt__capture_event_misuse(e, "queried")
               : EVRT_NOT_READY;
  if (may_check && EVRT_UNLIKELY(evrt__check_on))
    evrt__check_observe_event(e);
  return g->src ? evrt__error_check(g->src, g->target) : EVRT_SUCCESS;
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

static __attribute__((cold, noinline)) evrt_status_t
event_gone(evrt_event_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                    (void *)h);
}
static __attribute__((cold, noinline)) evrt_status_t
stream_gone(evrt_stream_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "stream %p destroyed during the call", (void *)h);
}

static inline __attribute__((always_inline)) evrt_status_t
get_pair_(evrt_event_t eh, evrt_stream_t *sh,
                              struct evrt__event **e, struct evrt__stream **s) {
  evrt_status_t st = get_event(eh, e);
  if (EVRT_UNLIKELY(st))
    return st;
  return evrt__stream_arg(sh, s);
}
/* Rewrites the caller's stream variable: NULL becomes the handle of the
 * current device's default stream (evrt__stream_null_default). */
#define get_pair(eh, sh, e, s) get_pair_((eh), &(sh), (e), (s))

/* Under the event lock: is the handle still this incarnation? */
static inline bool same_incarnation(struct evrt__event *e, evrt_event_t h) {
  /* seq_cst: the holder's half of the Dekker pair with destroy */
  return atomic_load(&e->hdr.hw) == evrt__raw((uintptr_t)h);
}

static inline unsigned flags_of(struct evrt__event *e) {
  return atomic_load_explicit(&e->flags, memory_order_relaxed);
}
#define IS_IPC(e) EVRT_UNLIKELY(flags_of(e) & EVRT_EVENT_INTERPROCESS)

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

/*
 * Memory for a writer section, got off the lock.  The event lock is a spin
 * lock, so nothing under it may call malloc or free (either may enter the
 * kernel, and every thread waiting for the lock would spin meanwhile).  A
 * writer that finds it needs memory (a work item when the stream's recycle
 * list is empty, a larger wait-record buffer) gives everything back,
 * unlocks, allocates here, and starts over; what it did not use, or what
 * it replaced, is freed after the final unlock (offlock_done).
 */
struct offlock {
  struct evrt__item *it;      /* a work item for the section */
  struct evrt__waitrec *wbuf; /* a wait-record buffer of wcap entries */
  uint32_t wcap;
  uint32_t wwant;             /* entries the section asked for (0: none) */
  bool want_item;
  struct evrt__waitrec *wold; /* a buffer the section replaced */
};

/* Off the lock: get what the last try asked for.  False: no memory. */
static bool offlock_get(struct offlock *ol, struct evrt__stream *s) {
  if (ol->want_item && !ol->it && !(ol->it = evrt__item_new(s)))
    return false;
  ol->want_item = false;
  if (ol->wwant) {
    evrt__free(ol->wbuf);
    ol->wbuf = evrt__malloc((size_t)ol->wwant * sizeof *ol->wbuf);
    ol->wcap = ol->wbuf ? ol->wwant : 0;
    ol->wwant = 0;
    if (!ol->wbuf)
      return false;
  }
  return true;
}

/* After the final unlock: give back what was not used (usually nothing:
 * one test on the hot paths). */
static __attribute__((noinline)) void offlock_release(struct offlock *ol,
                                                      struct evrt__stream *s) {
  if (ol->it)
    evrt__item_discard(s, ol->it);
  evrt__free(ol->wbuf);
  evrt__free(ol->wold);
}
static inline void offlock_done(struct offlock *ol, struct evrt__stream *s) {
  if (EVRT_UNLIKELY(ol->it || ol->wbuf || ol->wold))
    offlock_release(ol, s);
}

/* Under the event lock: a work item for s from its recycle list or ol,
 * or NULL, and then ol asks for one. */
static struct evrt__item *offlock_item(struct offlock *ol,
                                       struct evrt__stream *s) {
  struct evrt__item *it = ol->it;
  if (it) {
    ol->it = NULL;
    return it;
  }
  if (!(it = evrt__item_take(s)))
    ol->want_item = true;
  return it;
}

/* Under the event lock: room for `extra` more wait records.  Reserved before
 * anything changes, so that running out of memory changes nothing.  Passed
 * waits are dropped before the buffer grows, so it is bounded by the waits
 * still pending (an event recorded once and waited on for ever, with
 * nobody asking its wait status, would otherwise keep every wait).  False:
 * ol asks for a larger buffer (wwant; UINT32_MAX entries: impossible). */
static bool wrec_reserve(struct evrt__event *e, uint32_t extra,
                         struct offlock *ol) {
  if (EVRT_LIKELY(e->capwrec - e->nwrec >= extra))
    return true;
  if (e->capwrec - wrec_prune(e) >= extra)
    return true;
  uint64_t cap = (uint64_t)e->capwrec * 2;
  if (cap < 8)
    cap = 8;
  while (cap < (uint64_t)e->nwrec + extra)
    cap *= 2;
  if (cap >= UINT32_MAX) {
    ol->wwant = UINT32_MAX;
    return false;
  }
  if (!ol->wbuf || ol->wcap < cap) {
    ol->wwant = (uint32_t)cap;
    return false;
  }
  if (e->nwrec)
    memcpy(ol->wbuf, e->wrec, e->nwrec * sizeof *ol->wbuf);
  ol->wold = e->wrec;
  e->wrec = ol->wbuf;
  e->capwrec = ol->wcap;
  ol->wbuf = NULL;
  ol->wcap = 0;
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
         !e->has_resource && !e->reset_hlow &&
         !atomic_load_explicit(&e->imported, memory_order_relaxed) &&
         !e->nr_waiters &&
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

static evrt_status_t init_event(struct evrt__obj *o, uint64_t h,
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
  uint64_t h = c->next[n - 1]; /* raw */
  return init_event(evrt__table_at_known(&evrt__events,
                                         ((uint32_t)h >> 2) - 1,
                                         EVRT__EVENT_SLOT),
                    h, event, flags);
}

/* Make the clean dead slot o the new event, raw handle h. */
static inline __attribute__((always_inline)) evrt_status_t
init_event(struct evrt__obj *o, uint64_t h, evrt_event_t *event,
           unsigned flags) {
  struct evrt__event *e = (struct evrt__event *)o;
#ifndef NDEBUG
  if (!slot_is_clean(e) || h != evrt__table_next_handle(o)) {
    fprintf(stderr, "evrt: internal error: event slot %u recycled unclean\n",
            evrt__obj_index(o));
    abort();
  }
#endif
  /* relaxed: published by the release store of the handle below */
  atomic_store_explicit(&e->flags, flags, memory_order_relaxed);
  /* Unique for the life of the process: the live generation and the slot. */
  atomic_store_explicit(&e->id,
                        ((uint64_t)h & 0xffffffff00000000u) |
                            ((uint32_t)h >> 2),
                        memory_order_relaxed);
  evrt__table_publish_as(o, (uintptr_t)h);
  *event = (evrt_event_t)evrt__pub(h);
  return EVRT_SUCCESS;
}

/* Resume the streams of legacy next-record waits taken off an event. */
static void resume_list(struct evrt__item *list) {
  while (list) {
    struct evrt__item *next = list->u.ev.wnext;
    evrt__be_stream_resume(list->owner);
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
  bool ipc = flags_of(e) & EVRT_EVENT_INTERPROCESS;
  /* The lock: to wait for a holder that got in before the kill (lk odd),
   * to take legacy waiters off the list (a worker's bind scans it under
   * the lock without checking the incarnation), for interprocess events
   * (src/ipc_proto.c re-checks under it), and so that lock-free readers that
   * overlap the scrub retry (the top of this file).  No other holder
   * writes: see the top of this file. */
  (void)lk;
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
  /* Scrub.  Pending items keep (pointer, generation) and skip their writes.
   * release: a lock-free reader that sees a scrubbed field sees the kill
   * (the handle re-check after its reads fails: the top of the file). */
  atomic_store_explicit(&e->device, -1, memory_order_release);
  atomic_store_explicit(&e->src, 0, memory_order_release);
  atomic_store_explicit(&e->target, 0, memory_order_release);
  atomic_store_explicit(&e->rec_no, 0, memory_order_release);
  atomic_store_explicit(&e->ts, 0, memory_order_release);
  atomic_store_explicit(&e->rec_thread, 0, memory_order_release);
  struct evrt__waitrec *wrec = e->wrec; /* end with the incarnation */
  e->wrec = NULL;
  e->nwrec = e->capwrec = 0;
  e->reset_hlow = 0;
  e->reset_seq = 0;
  atomic_store_explicit(&e->imported, false, memory_order_release);
  evrt__event_unlock(e);
  evrt__free(wrec); /* (not under the spin lock: free may trim) */
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
  uint64_t r = evrt__raw((uintptr_t)h);
  struct evrt__event *e = (struct evrt__event *)evrt__table_slot(
      &evrt__events, r, EVRT__EVENT_SLOT);
  /* The CAS validates and kills at once: of racing destroys of one handle,
   * exactly one gets here. */
  if (EVRT_UNLIKELY(!e || !evrt__table_kill_handle(&e->hdr, r)))
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  /* seq_cst: the other half of the Dekker pair with lock holders.  Free
   * (even): every holder so far has released it (and we see its writes:
   * this load acquires), every later one will find the event dead. */
  unsigned lk = atomic_load(&e->lock);
  if (EVRT_UNLIKELY((lk & 1u) | (flags_of(e) & EVRT_EVENT_INTERPROCESS) ||
                    atomic_load_explicit(&e->rec_no, memory_order_relaxed) ||
                    e->nr_waiters))
    return destroy_slow(e, lk);
  /* Pending items keep only (pointer, generation) pairs and re-check them,
   * so the slot can be reused at once (unless its last generation died:
   * destroy_release retires it). */
  uint64_t dead = evrt__dead_of(r);
  if (EVRT_UNLIKELY(evrt__dead_retired(dead) ||
                    !evrt__table_give_cached(
                        EVRT__TAG_EVENT,
                        evrt__live_after(dead, (uint32_t)r))))
    return destroy_release(e);
  return EVRT_SUCCESS;
}

/* Interprocess record and wait (src/ipc.c) push without a handle: pin the
 * stream across them, so that a destroy racing the call waits for its
 * item to be linked (or finds the stream pinned by nobody).  Their push
 * only links (ipc.c pushes under the event lock): the stream is scheduled
 * here, once no spin lock is held. */
static __attribute__((noinline)) evrt_status_t
ipc_record(struct evrt__event *e, struct evrt__stream *s, evrt_stream_t sh) {
  if (!evrt__stream_pin(s, sh))
    return stream_gone(sh);
  evrt_status_t st = evrt__ipc_record(e, s);
  evrt__stream_schedule(s);
  evrt__stream_unpin(s);
  return st;
}
static __attribute__((noinline)) evrt_status_t
ipc_wait(struct evrt__event *e, struct evrt__stream *s, evrt_stream_t sh,
         int64_t timeout_ns) {
  if (!evrt__stream_pin(s, sh))
    return stream_gone(sh);
  evrt_status_t st = evrt__ipc_wait(e, s, timeout_ns);
  evrt__stream_schedule(s);
  evrt__stream_unpin(s);
  return st;
}

/* Record's failures once the lock is released: a stream destroyed during
 * the call is the error, whatever else went wrong with it. */
static __attribute__((cold, noinline)) evrt_status_t
record_failed(evrt_status_t st, struct evrt__stream *s, evrt_stream_t sh,
              int dev, int sdev) {
  if (!evrt__stream_is(s, sh))
    return stream_gone(sh);
  if (st == EVRT_ERROR_DEVICE_MISMATCH)
    return evrt__fail(st,
                      "event device %d does not match recording stream's "
                      "device %d",
                      dev, sdev);
  if (st == EVRT_ERROR_EVENT_LIMIT)
    return evrt__fail(st,
                      "device %d has no free event resource (limit %u); "
                      "destroy or reset events",
                      sdev, atomic_load(&evrt__devices[sdev].ev_limit));
  return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                    "cannot allocate the record item or track the waits "
                    "bound to this record");
}

/* Under the event lock: make (s, target) the latest generation, number
 * rec_no, with timestamp ts; the wait status starts over.  device >= 0
 * fixes the event's device (its first record). */
static inline __attribute__((always_inline)) void
publish_locked(struct evrt__event *e, struct evrt__stream *s, int device,
               uint64_t rec_no, uint64_t target, uint64_t ts) {
  /* release, all: see the top of the file (lock-free readers) */
  if (device >= 0)
    atomic_store_explicit(&e->device, device, memory_order_release);
  atomic_store_explicit(&e->src, (uintptr_t)s, memory_order_release);
  atomic_store_explicit(&e->target, target, memory_order_release);
  atomic_store_explicit(&e->rec_no, rec_no, memory_order_release);
  atomic_store_explicit(&e->ts, ts, memory_order_release);
  atomic_store_explicit(&e->rec_thread, evrt__thread_id(), memory_order_relaxed);
  e->nwrec = 0;
  e->reset_hlow = 0; /* a queued reset of the last generation is void */
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
      !(flags_of(e) & EVRT_EVENT_NO_LIMIT) && evrt__event_resource_take(device))
    e->has_resource = true;
  *rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed) + 1;
  publish_locked(e, s, dev < 0 ? device : -1, *rec_no, target, 0);
  /* (a record inside a capture is a marker, not a generation to order by) */
  if (EVRT_UNLIKELY(evrt__check_on) && !evrt__captured_src((uintptr_t)s))
    evrt__check_record(atomic_load_explicit(&e->id, memory_order_relaxed), s,
                       *rec_no, target);
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

/* Every record evrt_event_record's straight path does not take: tracing, a
 * timing event on a busy stream (an item), legacy waiters to bind, a
 * failure, a stream destroyed meanwhile, memory to get off the lock. */
static __attribute__((noinline)) evrt_status_t
record_general(struct evrt__event *e, evrt_event_t eh, struct evrt__stream *s,
               evrt_stream_t sh) {
  evrt_status_t st;
  struct evrt__item *it = NULL;
  struct evrt__item *nr = NULL;
  bool timing = flags_of(e) & EVRT_EVENT_TIMING;
  bool tracing = EVRT_TRACING();
  struct offlock ol = {0};
  uint64_t rec_no, target, ts;
  int dev, sdev;

  for (;;) { /* once, unless memory must be got off the lock */
    evrt__event_lock(e);
    if (EVRT_UNLIKELY(!same_incarnation(e, eh))) {
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return event_gone(eh);
    }
    dev = atomic_load_explicit(&e->device, memory_order_relaxed);
    /* acquire: a stream destroyed and recycled meanwhile is found dead by
     * evrt__stream_is after this load */
    sdev = atomic_load_explicit(&s->device, memory_order_acquire);
    st = EVRT_SUCCESS;
    bool took = false;
    if (EVRT_UNLIKELY(dev >= 0 && dev != sdev)) {
      st = EVRT_ERROR_DEVICE_MISMATCH;
    } else if (!e->has_resource && !(flags_of(e) & EVRT_EVENT_NO_LIMIT)) {
      if (EVRT_UNLIKELY(!evrt__event_resource_take(sdev)))
        st = EVRT_ERROR_EVENT_LIMIT;
      else
        took = true;
    }
    /* Legacy waits queued on the event bind to this record and count as
     * its waiters: make room for them first. */
    uint32_t nnr = 0;
    for (struct evrt__item *w = e->nr_waiters; w; w = w->u.ev.wnext)
      nnr++;
    bool more = false; /* memory to get off the lock */
    if (!st && EVRT_UNLIKELY(nnr) && !wrec_reserve(e, nnr, &ol))
      more = true;
    rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed) + 1;
    uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
    bool idle = evrt__done(s) >= enq;
    target = enq;
    ts = 0;
    bool gone = false;
    if (st || more) {
      /* (nothing more to do under the lock) */
    } else if (!idle && (timing || tracing)) {
      /* The timestamp (or the trace marker) must be taken when the stream
       * reaches the record: that needs an item. */
      it = offlock_item(&ol, s);
      if (EVRT_UNLIKELY(!it)) {
        more = true;
      } else {
        it->kind = EVRT__ITEM_RECORD;
        it->u.ev.ipc = NULL;
        it->u.ev.ev = e;
        it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
        it->u.ev.rec_no = rec_no;
        it->u.ev.ev_id = atomic_load_explicit(&e->id, memory_order_relaxed);
        target = evrt__stream_link_live(s, sh, it);
        if (!target) { /* (a linked item's seq is >= 1) */
          gone = true;
          ol.it = it; /* not linked: given back after the unlock */
          it = NULL;
        }
      }
    } else if (EVRT_UNLIKELY(!evrt__stream_is(s, sh))) {
      /* (after the acquire load of enq_seq: enq was this incarnation's) */
      gone = true;
    } else if (timing) {
      ts = evrt__be_timestamp(sdev);
    }
    if (EVRT_UNLIKELY(st || more || gone)) {
      /* Nothing happened: undo, unlock, and fail or get memory and retry. */
      if (took)
        evrt__event_resource_give(sdev);
      evrt__event_unlock(e);
      if (gone) {
        offlock_done(&ol, s);
        return stream_gone(sh);
      }
      if (st || !offlock_get(&ol, s)) {
        offlock_done(&ol, s);
        return record_failed(st ? st : EVRT_ERROR_OUT_OF_MEMORY, s, sh, dev,
                             sdev);
      }
      continue;
    }
    if (took)
      e->has_resource = true;
    break;
  }
  publish_locked(e, s, dev < 0 ? sdev : -1, rec_no, target, ts);
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
    evrt__check_record(atomic_load_explicit(&e->id, memory_order_relaxed), s,
                       rec_no, target);
  evrt__event_unlock(e);
  /* With no spin lock held: queue the stream if the record item made an
   * idle one runnable (pool mutex, maybe a futex wake). */
  if (it)
    evrt__stream_schedule(s);
  offlock_done(&ol, s);
  if (EVRT_UNLIKELY(tracing) && !it)
    evrt__trace_record(sdev, atomic_load_explicit(&s->id, memory_order_relaxed),
                       atomic_load_explicit(&e->id, memory_order_relaxed),
                       rec_no, evrt__now_ns());
  resume_list(nr);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_record(evrt_event_t eh, evrt_stream_t sh) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (EVRT_UNLIKELY(st))
    return st;
  /* (a stale stream handle must not record into the capture of a stream
   * that reused the slot) */
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) && evrt__stream_is(s, sh) &&
      evrt__capture_record(e, eh, s, sh, EVRT_EVENT_RECORD_DEFAULT, &st))
    return st;
  if (IS_IPC(e))
    return ipc_record(e, s, sh);
  /* The straight path: no item, nothing to allocate, no legacy waiter, no
   * failure; anything else starts over in record_general. */
  unsigned flags = flags_of(e);
  if (EVRT_UNLIKELY(EVRT_TRACING() || evrt__check_on))
    return record_general(e, eh, s, sh);
  evrt__event_lock(e);
  if (EVRT_UNLIKELY(!same_incarnation(e, eh))) {
    evrt__event_unlock(e);
    return event_gone(eh);
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  /* acquire: see record_general */
  int sdev = atomic_load_explicit(&s->device, memory_order_acquire);
  bool took = false;
  if (EVRT_UNLIKELY((dev >= 0 && dev != sdev) || e->nr_waiters))
    goto general;
  if (!e->has_resource && !(flags & EVRT_EVENT_NO_LIMIT)) {
    if (EVRT_UNLIKELY(!evrt__event_resource_take(sdev)))
      goto general;
    took = true;
  }
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  bool timing = flags & EVRT_EVENT_TIMING;
  /* (after the acquire load of enq_seq: enq was this incarnation's) */
  if (EVRT_UNLIKELY((timing && evrt__done(s) < enq) ||
                    !evrt__stream_is(s, sh))) {
    if (took)
      evrt__event_resource_give(sdev);
    goto general;
  }
  /* A timing event on an idle stream: the record executes now. */
  uint64_t ts = timing ? evrt__be_timestamp(sdev) : 0;
  if (took)
    e->has_resource = true;
  publish_locked(e, s, dev < 0 ? sdev : -1,
                 atomic_load_explicit(&e->rec_no, memory_order_relaxed) + 1,
                 enq, ts);
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
general:
  evrt__event_unlock(e);
  return record_general(e, eh, s, sh);
}

static __attribute__((cold, noinline)) evrt_status_t
query_slow(evrt_event_t h) {
  struct evrt__event *e = NULL;
  struct evrt__backoff b = {0};
  for (;;) {
    evrt_status_t st = get_event(h, &e); /* fails once h is dead */
    if (st)
      return st;
    if (IS_IPC(e))
      return EVRT_UNLIKELY(evrt__check_on) ? evrt__check_ipc_observed(
                                                 e, evrt__ipc_query(e))
                                           : evrt__ipc_query(e);
    struct gen g;
    if (gen_try(e, evrt__raw((uintptr_t)h), &g, false) == GEN_OK)
      return latest_status(e, &g, true);
    evrt__backoff(&b); /* (GEN_DEAD: the lookup above fails) */
  }
}

evrt_status_t evrt_event_query(evrt_event_t h) {
  /* Every unusual case (library not running, the checker on, bad handle,
   * interprocess) is a tail call, so the common one keeps everything in
   * registers. */
  if (EVRT_UNLIKELY(!evrt__running()) || EVRT_UNLIKELY(evrt__check_on))
    return query_slow(h);
  uint64_t r = evrt__raw((uintptr_t)h);
  struct evrt__event *e = event_slot(r);
  struct gen g;
  if (EVRT_UNLIKELY(!e) ||
      EVRT_UNLIKELY(gen_try(e, r, &g, false) != GEN_OK) ||
      EVRT_UNLIKELY(g.flags & EVRT_EVENT_INTERPROCESS))
    return query_slow(h);
  return latest_status(e, &g, false);
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
  bool blocking = g.flags & EVRT_EVENT_BLOCKING_SYNC;
  uint64_t id = atomic_load_explicit(&e->id, memory_order_relaxed);
  /* (src, target) stays valid if the event is destroyed meanwhile */
  st = evrt__be_host_wait(g.src, g.target, timeout_ns, blocking);
  if (EVRT_TRACING())
    evrt__trace_host_wait("event_synchronize", id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st, "event generation %llu not complete after %lld ns",
                      (unsigned long long)g.rec_no, (long long)timeout_ns);
  if (EVRT_UNLIKELY(evrt__check_on) && !st)
    evrt__check_observe_event(e);
  return st ? st : evrt__error_check(g.src, g.target);
}

evrt_status_t evrt_event_synchronize_timeout(evrt_event_t h,
                                             int64_t timeout_ns) {
  evrt_status_t st = evrt__ready();
  if (EVRT_UNLIKELY(st))
    return st;
  uint64_t r = evrt__raw((uintptr_t)h);
  struct evrt__event *e = event_slot(r);
  struct gen g;
  int got = e ? gen_try(e, r, &g, true) : GEN_DEAD;
  if (EVRT_UNLIKELY(got == GEN_BUSY)) /* the loop out of line */
    got = read_gen(e, r, &g);
  if (EVRT_UNLIKELY(got == GEN_DEAD))
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  if (EVRT_UNLIKELY(evrt__any_capture()) && evrt__capture_sync_event(e, &st))
    return st;
  if (EVRT_UNLIKELY(g.flags & EVRT_EVENT_INTERPROCESS))
    return EVRT_UNLIKELY(evrt__check_on)
               ? evrt__check_ipc_observed(e, evrt__ipc_sync(e, timeout_ns))
               : evrt__ipc_sync(e, timeout_ns);
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

/* Under the event lock: a reset of e's latest generation is queued on s
 * and has not run (a wait enqueued on s now runs after it). */
static inline bool reset_queued_before(struct evrt__event *e,
                                       struct evrt__stream *s) {
  return e->reset_hlow && e->reset_hlow == s->hdr.hlow &&
         evrt__done(s) < e->reset_seq;
}

static evrt_status_t stream_wait(evrt_stream_t sh, evrt_event_t eh,
                                 int64_t timeout_ns) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (EVRT_UNLIKELY(st))
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) && evrt__stream_is(s, sh) &&
      evrt__capture_wait(s, sh, e, eh, EVRT_EVENT_WAIT_DEFAULT, &st))
    return st;
  if (IS_IPC(e))
    return ipc_wait(e, s, sh, timeout_ns);
  /* The deadline is set relative to the enqueue (ACL's wait timeout); the
   * clock is read before the lock. */
  uint64_t deadline =
      timeout_ns >= 0
          ? evrt__deadline_after(evrt__now_ns(), (uint64_t)timeout_ns)
          : 0;
  struct offlock ol = {0};
  struct evrt__item *it = NULL;
  struct gen g;
  bool next_record;
  uint64_t seq;
  for (;;) { /* once, unless memory must be got off the lock */
    evrt__event_lock(e);
    if (EVRT_UNLIKELY(!same_incarnation(e, eh))) {
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return event_gone(eh);
    }
    g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                        memory_order_relaxed);
    g.target = atomic_load_explicit(&e->target, memory_order_relaxed);
    g.rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
    if (EVRT_UNLIKELY(evrt__captured_src((uintptr_t)g.src))) {
      /* recorded inside a capture: this stream joins it (a fork) */
      uint32_t ev_gen = evrt__obj_gen(&e->hdr);
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return evrt__capture_fork(s, sh, e, ev_gen, g.target, g.rec_no);
    }
    next_record = (flags_of(e) & EVRT_EVENT_WAIT_NEXT_RECORD) &&
                  (!g.src || reset_queued_before(e, s));
    if (next_record)
      g.src = NULL; /* (bound when it runs, after the reset) */
    if (!g.src && !next_record) {
      /* Rule 2: a never-recorded (or reset) event is an empty dependency. */
      /* (No trace slice: the stream may be busy right now, and a slice
       * stamped at this call would overlap the item it is running.) */
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return EVRT_SUCCESS;
    }
    if (!next_record && gen_done(&g) &&
        evrt__done(s) >=
            atomic_load_explicit(&s->enq_seq, memory_order_acquire)) {
      /* Satisfied already and the waiting stream is idle: it has passed the
       * wait the moment it was made.  No item, no wake-up.  (The stream's
       * counters were its own if its handle is still live after them.) */
      bool gone = !evrt__stream_is(s, sh);
      if (EVRT_UNLIKELY(evrt__check_on) && !gone)
        evrt__check_wait_skipped(s, e, g.rec_no);
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      if (EVRT_UNLIKELY(gone))
        return stream_gone(sh);
      if (EVRT_TRACING())
        trace_skipped_wait(s, e, &g);
      return EVRT_SUCCESS;
    }
    if (EVRT_UNLIKELY(!next_record && !wrec_reserve(e, 1, &ol)) ||
        EVRT_UNLIKELY(!(it = offlock_item(&ol, s)))) {
      evrt__event_unlock(e);
      if (!offlock_get(&ol, s)) {
        offlock_done(&ol, s);
        return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                          "cannot allocate the wait item");
      }
      continue;
    }
    it->kind = EVRT__ITEM_WAIT;
    it->dep_kind = next_record ? EVRT__DEP_NEXT_RECORD : EVRT__DEP_STREAM;
    it->u.ev.ev = e;
    it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
    it->u.ev.ev_id = atomic_load_explicit(&e->id, memory_order_relaxed);
    it->u.ev.rec_no = next_record ? 0 : g.rec_no;
    it->u.ev.src = g.src;
    it->u.ev.target = g.target;
    it->u.ev.wnext = NULL;
    it->deadline = deadline;
    seq = evrt__stream_link_live(s, sh, it);
    if (EVRT_UNLIKELY(!seq)) {
      /* destroyed during the call: nothing linked (the reserved wait
       * record room stays, unused) */
      evrt__event_unlock(e);
      ol.it = it;
      offlock_done(&ol, s);
      return stream_gone(sh);
    }
    break;
  }
  if (!next_record)
    wrec_add(e, s, seq); /* a wait task of the latest generation */
  evrt__event_unlock(e);
  /* no spin lock held: queue the stream if it was idle */
  evrt__stream_schedule(s);
  offlock_done(&ol, s);
  if (EVRT_TRACING() && !next_record)
    evrt__trace_wait_bind(atomic_load_explicit(&s->device,
                                               memory_order_relaxed),
                          atomic_load_explicit(&s->id, memory_order_relaxed),
                          atomic_load_explicit(&e->id, memory_order_relaxed),
                          g.rec_no, evrt__now_ns());
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
static evrt_status_t timing_of(struct evrt__event *e, evrt_event_t h,
                               const char *which, uint64_t *ts) {
  struct gen g;
  if (read_gen(e, evrt__raw((uintptr_t)h), &g) == GEN_DEAD)
    return event_gone(h);
  uint64_t t = g.ts;
  if (!(g.flags & EVRT_EVENT_TIMING))
    return evrt__fail(EVRT_ERROR_TIMING_DISABLED,
                      "%s event was created without EVRT_EVENT_TIMING", which);
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
    bool live = same_incarnation(e, h);
    t = atomic_load_explicit(&e->ts, memory_order_relaxed);
    evrt__event_unlock(e);
    if (!live)
      return event_gone(h);
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
  struct gen ga, gb;
  if (read_gen(a, evrt__raw((uintptr_t)sh), &ga) == GEN_DEAD)
    return event_gone(sh);
  if (read_gen(b, evrt__raw((uintptr_t)eh), &gb) == GEN_DEAD)
    return event_gone(eh);
  int da = atomic_load_explicit(&a->device, memory_order_acquire);
  int db = atomic_load_explicit(&b->device, memory_order_acquire);
  /* the devices: read after acquire loads, the handles checked after */
  if (EVRT_UNLIKELY(!still(a, sh)))
    return event_gone(sh);
  if (EVRT_UNLIKELY(!still(b, eh)))
    return event_gone(eh);
  if (!(ga.flags & EVRT_EVENT_TIMING) || !(gb.flags & EVRT_EVENT_TIMING))
    return evrt__fail(EVRT_ERROR_TIMING_DISABLED,
                      "both events must be created with EVRT_EVENT_TIMING");
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
  if (da != db)
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "events belong to devices %d and %d", da, db);
  uint64_t t0, t1;
  if ((st = timing_of(a, sh, "start", &t0)) ||
      (st = timing_of(b, eh, "end", &t1)))
    return st;
  *ms = (float)((double)evrt__backend->elapsed_ns(da, t0, t1) / 1e6);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_timestamp(evrt_event_t h, uint64_t *ns) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!ns)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "ns is NULL");
  return timing_of(e, h, "the", ns);
}

evrt_status_t evrt_event_reset(evrt_event_t eh, evrt_stream_t sh) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (st)
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) && evrt__stream_is(s, sh) &&
      evrt__capture_reset(e, eh, s, sh, &st))
    return st;
  if (IS_IPC(e))
    return evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                      "interprocess events cannot be reset");
  struct offlock ol = {0};
  struct evrt__item *it;
  for (;;) { /* once, unless the item must be allocated off the lock */
    evrt__event_lock(e);
    if (!same_incarnation(e, eh)) {
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return event_gone(eh);
    }
    uint64_t rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
    if (rec_no == 0) {
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return evrt__fail(EVRT_ERROR_NOT_RECORDED,
                        "reset of an event that was never recorded");
    }
    if (EVRT_UNLIKELY(evrt__captured_src(
            atomic_load_explicit(&e->src, memory_order_relaxed)))) {
      evrt__event_unlock(e);
      offlock_done(&ol, s);
      return evrt__capture_event_misuse(e, "reset outside its capture");
    }
    if (!(it = offlock_item(&ol, s))) {
      evrt__event_unlock(e);
      if (!offlock_get(&ol, s)) {
        offlock_done(&ol, s);
        return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                          "cannot allocate the reset item");
      }
      continue;
    }
    it->kind = EVRT__ITEM_RESET;
    it->u.ev.ev = e;
    it->u.ev.ev_gen = evrt__obj_gen(&e->hdr);
    it->u.ev.rec_no = rec_no;
    it->u.ev.ev_id = atomic_load_explicit(&e->id, memory_order_relaxed);
    uint64_t seq = evrt__stream_link_live(s, sh, it);
    if (EVRT_UNLIKELY(!seq)) {
      evrt__event_unlock(e);
      ol.it = it;
      offlock_done(&ol, s);
      return stream_gone(sh);
    }
    e->reset_hlow = s->hdr.hlow;
    e->reset_seq = seq;
    break;
  }
  evrt__event_unlock(e);
  evrt__stream_schedule(s); /* no spin lock held */
  offlock_done(&ol, s);
  return EVRT_SUCCESS;
}

/* The waits one evrt_event_wait_status call can order its caller after
 * (EVRT_CHECK; more still count for the answer: docs/check.md, "What is
 * not tracked"). */
#define WAIT_STATUS_SEEN 32

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
  /* EVRT_CHECK: the waits this call sees pass (copied before the prune
   * drops them, observed after the unlock: stream slots are type-stable). */
  struct evrt__waitrec seen[WAIT_STATUS_SEEN];
  uint32_t nseen = 0;
  if (EVRT_UNLIKELY(evrt__check_on))
    for (uint32_t i = 0; i < e->nwrec && nseen < WAIT_STATUS_SEEN; i++)
      seen[nseen++] = e->wrec[i];
  /* Any wait left after dropping the passed ones: a waiting stream has not
   * passed its wait yet. */
  uint32_t pending = wrec_prune(e);
  evrt__event_unlock(e);
  if (pending)
    return EVRT_NOT_READY;
  /* Every wait passed: the caller is ordered after each waiting stream at
   * its wait (which joined the generation it waited for). */
  for (uint32_t i = 0; i < nseen; i++)
    evrt__check_observe_stream(seen[i].s, seen[i].seq);
  return EVRT_SUCCESS;
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
  /* Filled here and copied at the end: a failing call writes nothing.
   * Everything under the lock with the handle checked: a create recycling
   * the slot cannot be writing it then. */
  evrt_event_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = size;
  evrt__event_lock(e);
  if (!same_incarnation(e, h)) {
    evrt__event_unlock(e);
    return event_gone(h);
  }
  out.flags = flags_of(e);
  out.imported = atomic_load_explicit(&e->imported, memory_order_relaxed);
  out.device = atomic_load_explicit(&e->device, memory_order_relaxed);
  struct gen g;
  g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                      memory_order_relaxed);
  g.target = atomic_load_explicit(&e->target, memory_order_relaxed);
  out.record_count = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  out.record_thread =
      g.src ? atomic_load_explicit(&e->rec_thread, memory_order_relaxed) : 0;
  evrt__event_unlock(e);
  if (out.flags & EVRT_EVENT_INTERPROCESS) {
    out.record_thread = 0;
    st = evrt__ipc_query(e);
    if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
      return st;
    out.state = st == EVRT_SUCCESS ? EVRT_EVENT_STATE_COMPLETE
                                   : EVRT_EVENT_STATE_PENDING;
  } else {
    out.state = !g.src         ? EVRT_EVENT_STATE_UNRECORDED
                : gen_done(&g) ? EVRT_EVENT_STATE_COMPLETE
                               : EVRT_EVENT_STATE_PENDING;
  }
  /* "complete" is an observation, as a query's (ACL's status queries ask
   * this); pending or unrecorded orders nothing. */
  if (EVRT_UNLIKELY(evrt__check_on) && out.state == EVRT_EVENT_STATE_COMPLETE)
    evrt__check_observe_event(e);
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
  /* under the lock, as get_info */
  evrt__event_lock(e);
  bool live = same_incarnation(e, h);
  int d = atomic_load_explicit(&e->device, memory_order_relaxed);
  evrt__event_unlock(e);
  if (!live)
    return event_gone(h);
  *device = d;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_get_id(evrt_event_t h, uint64_t *id) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!id)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "id is NULL");
  /* acquire orders the handle check after it; create writes the id
   * before publishing the handle */
  uint64_t v = atomic_load_explicit(&e->id, memory_order_acquire);
  if (!still(e, h))
    return event_gone(h);
  *id = v;
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
  bool bound = true, tried = false;
  struct offlock ol = {0};
again:
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
      /* Recorded since the wait was enqueued: bind to the latest record,
       * counted for the wait status if there is memory for it (a worker
       * cannot fail the call that enqueued the wait any more; the buffer
       * is allocated off the lock, then the binding is looked at again). */
      bool room = wrec_reserve(e, 1, &ol);
      if (!room && !tried) {
        evrt__event_unlock(e);
        tried = true;
        offlock_get(&ol, it->owner); /* (no memory: counted without) */
        goto again;
      }
      it->u.ev.src = src;
      it->u.ev.target = atomic_load_explicit(&e->target, memory_order_relaxed);
      it->u.ev.rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
      if (room)
        wrec_add(e, it->owner, it->seq);
    } else {
      it->u.ev.wnext = e->nr_waiters;
      e->nr_waiters = it;
      bound = false;
    }
  }
  evrt__event_unlock(e);
  offlock_done(&ol, it->owner);
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
