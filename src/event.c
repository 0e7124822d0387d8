/*
 * event.c - events: generations, record, query, synchronize, stream waits,
 * elapsed time, reset and wait status.
 *
 * Lock order used here: event.lock -> stream.plock (record and wait enqueue
 * their item while holding the event lock, so that the generation they
 * publish and the item's seq agree).  Workers take event.lock with no other
 * lock held.
 *
 * event.lock is a seqlock: writers make it odd (acquire CAS), store the
 * fields with release (so the odd value is visible before any new field) and
 * make it even again with release; readers load it with acquire, load the
 * fields with acquire (so the re-check cannot move above them) and re-check.
 * No fences (ThreadSanitizer does not model them); on x86 all of these are
 * plain moves.  Query costs a handful of loads and never writes.
 */
#include "internal.h"

#include <string.h>


void evrt__event_lock(struct evrt__event *e) {
  for (unsigned n = 0;; n++) {
    unsigned v = atomic_load_explicit(&e->lock, memory_order_relaxed);
    if (!(v & 1u) &&
        atomic_compare_exchange_weak_explicit(&e->lock, &v, v + 1,
                                              memory_order_acquire,
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
get_pair(evrt_event_t eh, evrt_stream_t sh,
                              struct evrt__event **e, struct evrt__stream **s) {
  evrt_status_t st = get_event(eh, e);
  if (EVRT_UNLIKELY(st))
    return st;
  *s = evrt__stream_get(sh);
  if (EVRT_UNLIKELY(!*s))
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "stream %p is NULL, destroyed or not a stream",
                      (void *)sh);
  return EVRT_SUCCESS;
}

/* Under the event lock: is the handle still this incarnation? */
static inline bool same_incarnation(struct evrt__event *e, evrt_event_t h) {
  return (uintptr_t)evrt__handle_of(&evrt__events, &e->hdr) == (uintptr_t)h;
}

#define IS_IPC(e) EVRT_UNLIKELY((e)->flags & EVRT_EVENT_INTERPROCESS)

/* Under the event lock: room for `extra` more wait records.  Reserved before
 * anything changes, so that running out of memory changes nothing. */
static bool wrec_reserve(struct evrt__event *e, uint32_t extra) {
  if (EVRT_LIKELY(e->capwrec - e->nwrec >= extra))
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

evrt_status_t evrt_event_create(evrt_event_t *event, unsigned flags) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!event)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "event is NULL");
  if (flags & ~EVRT_EVENT_FLAGS_ALL)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown event flags 0x%x",
                      flags & ~EVRT_EVENT_FLAGS_ALL);
  if ((flags & EVRT_EVENT_INTERPROCESS) && (flags & EVRT_EVENT_TIMING))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "an interprocess event must have timing off");
  if ((flags & EVRT_EVENT_INTERPROCESS) && (flags & EVRT_EVENT_WAIT_NEXT_RECORD))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "an interprocess event cannot wait for the next record");
  struct evrt__obj *o;
  if ((st = evrt__table_alloc(&evrt__events, &o)))
    return st;
  struct evrt__event *e = (struct evrt__event *)o;
  e->flags = flags;
  atomic_store_explicit(&e->device, -1, memory_order_relaxed);
  atomic_store_explicit(&e->src, 0, memory_order_release);
  atomic_store_explicit(&e->target, 0, memory_order_release);
  atomic_store_explicit(&e->rec_no, 0, memory_order_release);
  atomic_store_explicit(&e->ts, 0, memory_order_release);
  atomic_store_explicit(&e->rec_thread, 0, memory_order_relaxed);
  e->nwrec = 0;
  e->has_resource = false;
  e->imported = false;
  e->nr_waiters = NULL;
  atomic_store_explicit(&e->ipc, NULL, memory_order_relaxed);
  /* Unique for the life of the process: the live generation and the slot. */
  e->id = (uint64_t)(atomic_load_explicit(&e->hdr.gen, memory_order_relaxed) +
                     1u)
              << 32 |
          (e->hdr.index + 1);
  evrt__table_publish(&e->hdr);
  *event = (evrt_event_t)evrt__handle_of(&evrt__events, &e->hdr);
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

evrt_status_t evrt_event_destroy(evrt_event_t h) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  evrt__event_lock(e);
  if (!same_incarnation(e, h)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p already destroyed",
                      (void *)h);
  }
  evrt__table_kill(&e->hdr);
  evrt__free(e->wrec); /* wait records end with the incarnation */
  e->wrec = NULL;
  e->nwrec = e->capwrec = 0;
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
  evrt__event_unlock(e);
  if (IS_IPC(e))
    evrt__ipc_close(e);
  resume_list(nr);
  /* Pending items keep only (pointer, generation) pairs and re-check them,
   * so the slot can be reused at once. */
  evrt__table_release(&evrt__events, &e->hdr);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_record(evrt_event_t eh, evrt_stream_t sh) {
  struct evrt__event *e = NULL;
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_pair(eh, sh, &e, &s);
  if (EVRT_UNLIKELY(st))
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
    it->u.ev.ev_gen = atomic_load_explicit(&e->hdr.gen, memory_order_relaxed);
    it->u.ev.rec_no = rec_no;
    it->u.ev.ev_id = e->id;
    target = evrt__stream_push(s, it);
  } else if (timing) {
    ts = evrt__backend->timestamp(s->device);
  }
  if (took)
    e->has_resource = true;
  if (dev < 0)
    atomic_store_explicit(&e->device, s->device, memory_order_relaxed);
  atomic_store_explicit(&e->src, (uintptr_t)s, memory_order_release);
  atomic_store_explicit(&e->target, target, memory_order_release);
  atomic_store_explicit(&e->rec_no, rec_no, memory_order_release);
  atomic_store_explicit(&e->ts, ts, memory_order_release);
  atomic_store_explicit(&e->rec_thread, evrt_thread_id(), memory_order_relaxed);
  /* A new generation: the wait status starts over, with the legacy waits
   * that were waiting for this record (they bind to it now). */
  e->nwrec = 0;
  nr = e->nr_waiters;
  e->nr_waiters = NULL;
  for (struct evrt__item *w = nr; w; w = w->u.ev.wnext) {
    w->u.ev.src = s;
    w->u.ev.target = target;
    w->u.ev.rec_no = rec_no;
    wrec_add(e, w->owner, w->seq);
  }
  evrt__event_unlock(e);
  if (EVRT_UNLIKELY(tracing) && !it)
    evrt__trace_record(s->device, s->id, e->id, rec_no, evrt__now_ns());
  resume_list(nr);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_query(evrt_event_t h) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (EVRT_UNLIKELY(st))
    return st;
  if (IS_IPC(e))
    return evrt__ipc_query(e);
  struct gen g = read_gen(e);
  return gen_done(&g) ? EVRT_SUCCESS : EVRT_NOT_READY;
}

evrt_status_t evrt_event_synchronize_timeout(evrt_event_t h,
                                             int64_t timeout_ns) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (EVRT_UNLIKELY(st))
    return st;
  if (IS_IPC(e))
    return evrt__ipc_sync(e, timeout_ns);
  struct gen g = read_gen(e);
  if (gen_done(&g))
    return EVRT_SUCCESS;
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
  return st;
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
  it->u.ev.ev_gen = atomic_load_explicit(&e->hdr.gen, memory_order_relaxed);
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
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate the reset item");
  }
  it->kind = EVRT__ITEM_RESET;
  it->u.ev.ev = e;
  it->u.ev.ev_gen = atomic_load_explicit(&e->hdr.gen, memory_order_relaxed);
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
  /* Drop the waits already passed (later queries then skip them); any left
   * means a waiting stream has not passed its wait yet. */
  uint32_t j = 0;
  for (uint32_t i = 0; i < e->nwrec; i++)
    if (evrt__done(e->wrec[i].s) < e->wrec[i].seq)
      e->wrec[j++] = e->wrec[i];
  e->nwrec = j;
  evrt__event_unlock(e);
  return j ? EVRT_NOT_READY : EVRT_SUCCESS;
}

evrt_status_t evrt_event_get_info(evrt_event_t h, evrt_event_info_t *info) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_event(h, &e);
  if (st)
    return st;
  if (!info)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "info is NULL");
  memset(info, 0, sizeof *info);
  info->flags = e->flags;
  info->imported = e->imported;
  info->device = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (IS_IPC(e)) {
    st = evrt__ipc_query(e);
    if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
      return st;
    info->state = st == EVRT_SUCCESS ? EVRT_EVENT_STATE_COMPLETE
                                     : EVRT_EVENT_STATE_PENDING;
    info->record_count = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
    return EVRT_SUCCESS;
  }
  evrt__event_lock(e);
  struct gen g;
  g.src = (struct evrt__stream *)atomic_load_explicit(&e->src,
                                                      memory_order_relaxed);
  g.target = atomic_load_explicit(&e->target, memory_order_relaxed);
  info->record_count = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  info->record_thread =
      g.src ? atomic_load_explicit(&e->rec_thread, memory_order_relaxed) : 0;
  evrt__event_unlock(e);
  info->state = !g.src         ? EVRT_EVENT_STATE_UNRECORDED
                : gen_done(&g) ? EVRT_EVENT_STATE_COMPLETE
                               : EVRT_EVENT_STATE_PENDING;
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
  if (atomic_load_explicit(&e->hdr.gen, memory_order_relaxed) ==
          it->u.ev.ev_gen &&
      atomic_load_explicit(&e->rec_no, memory_order_relaxed) == it->u.ev.rec_no)
    atomic_store_explicit(&e->ts, now, memory_order_release);
  evrt__event_unlock(e);
}

void evrt__event_exec_reset(struct evrt__item *it) {
  struct evrt__event *e = it->u.ev.ev;
  evrt__event_lock(e);
  /* A record made after the reset was enqueued wins over the reset. */
  if (atomic_load_explicit(&e->hdr.gen, memory_order_relaxed) ==
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
  } else if (atomic_load_explicit(&e->hdr.gen, memory_order_relaxed) !=
             it->u.ev.ev_gen) {
    it->u.ev.src = NULL; /* destroyed before we got here: empty dependency */
  } else {
    struct evrt__stream *src = (struct evrt__stream *)atomic_load_explicit(
        &e->src, memory_order_relaxed);
    if (src) {
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
