/*
 * stream.c - the stream API and the producer side of a stream's queue.
 *
 * Lock order used here: stream.plock -> the backend's locks (cpu:
 * pool.lock; never nested in fact: submit is called after plock is
 * released).
 *
 * Enqueue assigns the item's seq and links it at the tail under plock (a
 * lock among producers only), so seq order is queue order even with several
 * producer threads.  enq_seq is stored seq_cst after the link; then the
 * producer calls the backend's submit (src/backend.h).  The cpu backend's
 * (src/cpu/streams.c) reads the state (seq_cst) and, if the stream is IDLE,
 * CASes it to QUEUED and pushes it to the run queue; its worker going idle
 * stores IDLE and then re-reads enq_seq (exec.c): one of the two always
 * sees the other, so no item is ever left behind in an idle stream.
 *
 * Destroy racing enqueue.  A producer looks the handle up without a lock,
 * so by the time it links, the stream may have been destroyed, drained,
 * freed and its slot reused by a new create.  Destroy kills the handle
 * under plock, and every producer checks the handle again under plock
 * before it links: one that finds it live links before the destroy looks
 * at enq_seq (so the destroy leaves the stream to the worker that drains
 * it, and the item runs); one that finds it dead, or another incarnation's,
 * links nothing and fails with EVRT_ERROR_INVALID_HANDLE.  The recycle
 * lists (pfree, returned) may be used on any incarnation: they are only
 * touched under plock (or by the owning worker) and never reset by a
 * create, and their items are interchangeable.
 */
#include "internal.h"

#include <string.h>

EVRT_TLS struct evrt__stream *evrt__tls_stream;
EVRT_TLS uint64_t evrt__tls_seq;
static atomic_uint_least64_t next_stream_id;

evrt_status_t evrt__stream_new(int device, int priority, bool is_default,
                               struct evrt__stream **out) {
  struct evrt__obj *o;
  evrt_status_t st = evrt__table_alloc(&evrt__streams, &o);
  if (st)
    return st;
  struct evrt__stream *s = (struct evrt__stream *)o;
  /* A recycled slot keeps enq_seq/done_seq: they only grow, so generations
   * recorded on an earlier incarnation stay complete. */
  uint64_t done = atomic_load_explicit(&s->done_seq, memory_order_relaxed);
  atomic_store_explicit(&s->stub.qnext, NULL, memory_order_relaxed);
  s->head = s->tail = &s->stub;
  /* pfree and returned are not reset: evrt__stream_free emptied them
   * under plock, and a producer still holding a stale handle may use them
   * under plock meanwhile (evrt__item_new). */
  atomic_store_explicit(&s->capture, NULL, memory_order_relaxed);
  atomic_store_explicit(&s->destroyed, false, memory_order_relaxed);
  /* release (here and for device, wait_failures): a caller still holding
   * the previous incarnation's handle may read these before it re-checks
   * the handle (acquire), and must then find it dead */
  atomic_store_explicit(&s->enq_seq, done, memory_order_release);
  s->done_local = s->done_local_tail = NULL;
  s->n_done_local = 0;
  s->n_returned = 0;
  evrt__failure_reset(s);
  atomic_store_explicit(&s->wait_failures, 0, memory_order_release);
  atomic_store_explicit(&s->device, device, memory_order_release);
  s->priority = priority;
  s->is_default = is_default;
  atomic_store_explicit(
      &s->id,
      atomic_fetch_add_explicit(&next_stream_id, 1, memory_order_relaxed) + 1,
      memory_order_relaxed);
  s->name[0] = 0;
  /* A track for a stream created while tracing (docs/trace.md), added
   * before the publish: a destroy racing from another thread then finds
   * `named` and removes it (after the publish it could come first, and
   * the entry would outlive the stream). */
  s->named = EVRT_TRACING();
  if (s->named)
    evrt__trace_stream_name(device, atomic_load_explicit(&s->id,
                                                         memory_order_relaxed),
                            NULL);
  /* the backend's state of the new incarnation, and the room its submit
   * will need (so that an enqueue never fails for want of it) */
  st = evrt__be_stream_init(s);
  if (EVRT_UNLIKELY(st)) {
    evrt__table_release(&evrt__streams, &s->hdr);
    return st;
  }
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_stream_new(s);
  evrt__table_publish(&s->hdr);
  *out = s;
  return EVRT_SUCCESS;
}

void evrt__items_free(struct evrt__item *it) {
  while (it) {
    struct evrt__item *next = it->next;
    evrt__free(it);
    it = next;
  }
}

void evrt__stream_free(struct evrt__stream *s) {
  /* The caller won the stream (the backend's stream_destroyed or its
   * drain): nobody runs or schedules it.  The backend wakes the waiters of
   * every reached target before a new incarnation of the slot can empty
   * its waiter lists, and gives back what stream_init reserved. */
  evrt__be_stream_release(s);
  if (s->head != &s->stub)
    evrt__free(s->head);
  s->head = &s->stub;
  evrt__spin_lock(&s->plock);
  struct evrt__item *pfree = s->pfree;
  s->pfree = NULL;
  s->tail = &s->stub;
  evrt__spin_unlock(&s->plock);
  evrt__items_free(pfree); /* free() after the spin lock: it may trim */
  evrt__items_free(atomic_exchange_explicit(&s->returned, NULL, memory_order_acquire));
  evrt__items_free(s->done_local);
  s->done_local = s->done_local_tail = NULL;
  s->n_done_local = 0;
  evrt__table_release(&evrt__streams, &s->hdr);
}

/* Caller holds plock: a recycled item, or NULL. */
static struct evrt__item *pop_free_locked(struct evrt__stream *s) {
  struct evrt__item *it = s->pfree;
  if (!it) {
    /* acquire: the worker wrote the items' links before handing them over */
    it = atomic_exchange_explicit(&s->returned, NULL, memory_order_acquire);
    if (!it)
      return NULL;
  }
  s->pfree = it->next;
  return it;
}

static void init_item(struct evrt__stream *s, struct evrt__item *it) {
  it->next = NULL;
  it->phase = 0;
  it->failed = 0;
  it->dep_kind = 0;
  it->timer_idx = -1;
  it->deadline = 0;
  it->t_start = 0;
  it->owner = s;
  it->label[0] = 0;
}

struct evrt__item *evrt__item_take(struct evrt__stream *s) {
  evrt__spin_lock(&s->plock);
  struct evrt__item *it = pop_free_locked(s);
  evrt__spin_unlock(&s->plock);
  if (it)
    init_item(s, it);
  return it;
}

struct evrt__item *evrt__item_new(struct evrt__stream *s) {
  struct evrt__item *it = evrt__item_take(s);
  if (!it && (it = evrt__malloc(sizeof *it)))
    init_item(s, it);
  return it;
}

void evrt__item_discard(struct evrt__stream *s, struct evrt__item *it) {
  evrt__spin_lock(&s->plock);
  it->next = s->pfree;
  s->pfree = it;
  evrt__spin_unlock(&s->plock);
}

/* Caller holds plock: give it the next seq and link it. */
static uint64_t link_locked(struct evrt__stream *s, struct evrt__item *it) {
  atomic_store_explicit(&it->qnext, NULL, memory_order_relaxed);
  uint64_t seq = atomic_load_explicit(&s->enq_seq, memory_order_relaxed) + 1;
  it->seq = seq;
  /* release: the worker that reads the link sees the filled item */
  atomic_store_explicit(&s->tail->qnext, it, memory_order_release);
  s->tail = it;
  /* seq_cst: the Dekker pair with the worker going idle (top of file) */
  atomic_store_explicit(&s->enq_seq, seq, memory_order_seq_cst);
  /* evrt_thread_last_task (src/failure.c): two thread-local stores; s->id
   * is on the identity line, read-mostly */
  evrt__tls_last_stream_id = s->id;
  evrt__tls_last_seq = seq;
  return seq;
}

/* After linking, with plock released (and no other spin lock held: the
 * backend may take a mutex and wake a thread): the backend's submit. */
static inline void schedule(struct evrt__stream *s) { evrt__be_submit(s); }

uint64_t evrt__stream_push(struct evrt__stream *s, struct evrt__item *it) {
  if (EVRT_UNLIKELY(evrt__check_on))
    it->check = evrt__check_enqueue(s, it);
  evrt__spin_lock(&s->plock);
  uint64_t seq = link_locked(s, it);
  evrt__spin_unlock(&s->plock);
  /* not scheduled here: the caller may hold an event lock; the pin's
   * owner calls evrt__stream_schedule after releasing it */
  return seq;
}

uint64_t evrt__stream_push_chain(struct evrt__stream *s,
                                 struct evrt__item **v, uint32_t n) {
  evrt__spin_lock(&s->plock);
  uint64_t first = atomic_load_explicit(&s->enq_seq, memory_order_relaxed) + 1;
  for (uint32_t i = 0; i < n; i++) {
    v[i]->seq = first + i;
    /* relaxed: published with the release store of the first link below */
    atomic_store_explicit(&v[i]->qnext, i + 1 < n ? v[i + 1] : NULL,
                          memory_order_relaxed);
  }
  /* release: the worker that reads the link sees the whole filled chain */
  atomic_store_explicit(&s->tail->qnext, v[0], memory_order_release);
  s->tail = v[n - 1];
  /* seq_cst: the Dekker pair with the worker going idle (top of file) */
  atomic_store_explicit(&s->enq_seq, first + n - 1, memory_order_seq_cst);
  evrt__spin_unlock(&s->plock);
  schedule(s);
  return first;
}

uint32_t evrt__items_new(struct evrt__stream *s, struct evrt__item **v,
                         uint32_t n) {
  uint32_t k = 0;
  evrt__spin_lock(&s->plock);
  while (k < n && (v[k] = pop_free_locked(s)))
    k++;
  evrt__spin_unlock(&s->plock);
  for (; k < n && (v[k] = evrt__malloc(sizeof *v[k])); k++)
    ;
  for (uint32_t i = 0; i < k; i++)
    init_item(s, v[i]);
  return k;
}

uint64_t evrt__stream_link_live(struct evrt__stream *s, evrt_stream_t h,
                                struct evrt__item *it) {
  if (EVRT_UNLIKELY(evrt__check_on))
    it->check = evrt__check_enqueue(s, it);
  evrt__spin_lock(&s->plock);
  if (EVRT_UNLIKELY(!evrt__stream_is(s, h))) {
    evrt__spin_unlock(&s->plock);
    if (EVRT_UNLIKELY(evrt__check_on)) {
      evrt__check_discard(it->check);
      it->check = NULL;
    }
    return 0;
  }
  uint64_t seq = link_locked(s, it);
  evrt__spin_unlock(&s->plock);
  return seq;
}

void evrt__stream_schedule(struct evrt__stream *s) {
  /* nothing linked (or all of it run already): nothing to schedule */
  if (evrt__done(s) >= atomic_load_explicit(&s->enq_seq, memory_order_seq_cst))
    return;
  schedule(s);
}

bool evrt__stream_pin(struct evrt__stream *s, evrt_stream_t h) {
  evrt__spin_lock(&s->plock);
  bool live = evrt__stream_is(s, h);
  if (live)
    atomic_store_explicit(
        &s->pins, atomic_load_explicit(&s->pins, memory_order_relaxed) + 1,
        memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  return live;
}

void evrt__stream_unpin(struct evrt__stream *s) {
  evrt__spin_lock(&s->plock);
  /* release: a destroy that reads the count at zero (acquire) sees the
   * item this section linked (its enq_seq) */
  atomic_store_explicit(
      &s->pins, atomic_load_explicit(&s->pins, memory_order_relaxed) - 1,
      memory_order_release);
  evrt__spin_unlock(&s->plock);
}

static __attribute__((cold, noinline)) evrt_status_t
destroyed_meanwhile(evrt_stream_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "stream %p destroyed during the call", (void *)h);
}

/* Allocate, fill and push in one plock round trip (the hot path of host
 * functions). */
static evrt_status_t enqueue(struct evrt__stream *s, evrt_stream_t h,
                             const struct evrt__item *tmpl, const char *label) {
  evrt_status_t st;
  /* A capturing stream takes a graph node instead (src/capture.c), if h
   * names the member (capture_item checks: a stale handle must not add to
   * the graph of a stream that reused the slot). */
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_item(s, h, tmpl, label, &st))
    return st;
  void *chk = EVRT_UNLIKELY(evrt__check_on) ? evrt__check_enqueue(s, tmpl)
                                            : NULL;
  evrt__spin_lock(&s->plock);
  /* The handle again, under the lock destroy kills it under (top of file) */
  if (EVRT_UNLIKELY(!evrt__stream_is(s, h))) {
    evrt__spin_unlock(&s->plock);
    evrt__check_discard(chk);
    return destroyed_meanwhile(h);
  }
  struct evrt__item *it = pop_free_locked(s);
  if (EVRT_UNLIKELY(!it)) {
    /* Allocate outside the lock; the recycle lists were empty anyway. */
    evrt__spin_unlock(&s->plock);
    if (!(it = evrt__malloc(sizeof *it))) {
      evrt__check_discard(chk);
      return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                        "cannot allocate a work item");
    }
    evrt__spin_lock(&s->plock);
    if (EVRT_UNLIKELY(!evrt__stream_is(s, h))) {
      evrt__spin_unlock(&s->plock);
      evrt__free(it);
      evrt__check_discard(chk);
      return destroyed_meanwhile(h);
    }
  }
  *it = *tmpl;
  if (EVRT_UNLIKELY(evrt__check_on))
    it->check = chk; /* read only by the checker */
  it->owner = s;
  it->timer_idx = -1;
  it->t_start = 0;
  if (label) {
    strncpy(it->label, label, sizeof it->label - 1);
    it->label[sizeof it->label - 1] = 0;
  } else {
    it->label[0] = 0;
  }
  link_locked(s, it);
  evrt__spin_unlock(&s->plock);
  schedule(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt__enqueue(struct evrt__stream *s, evrt_stream_t h,
                           const struct evrt__item *tmpl) {
  return enqueue(s, h, tmpl, NULL);
}

__attribute__((cold, noinline)) evrt_status_t
evrt__stream_arg_invalid(evrt_stream_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "stream %p is destroyed or not a stream", (void *)h);
}

static inline __attribute__((always_inline)) evrt_status_t
get_stream_(evrt_stream_t *h, struct evrt__stream **out) {
  evrt_status_t st = evrt__ready();
  if (EVRT_UNLIKELY(st))
    return st;
  return evrt__stream_arg(h, out);
}
/* Rewrites the caller's handle variable: a NULL stream becomes the handle of
 * the current device's default stream (evrt__stream_null_default), which the
 * checks of the handle further on then compare with. */
#define get_stream(h, out) get_stream_(&(h), (out))

evrt_status_t evrt_stream_create(evrt_stream_t *stream, int device,
                                 int priority, unsigned flags) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!stream)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "stream is NULL");
  if (flags != 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown stream flags 0x%x",
                      flags);
  if (device == -1)
    device = evrt__tls_device;
  if (device < 0 || device >= evrt__ndevices)
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE, "device %d out of range (%d)",
                      device, evrt__ndevices);
  struct evrt__stream *s = NULL;
  st = evrt__stream_new(device, priority, false, &s);
  if (st)
    return st;
  *stream = evrt__stream_handle(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_destroy(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  /* (capture_destroy_stream acts only if h names the member: a stale
   * handle must not invalidate the capture of a stream that reused the
   * slot) */
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_destroy_stream(s, h, &st))
    return st;
  EVRT__SCHED_POINT(EVRT__SP_DESTROY_LOOKED, s); /* white-box build only */
again:
  evrt__spin_lock(&s->plock);
  /* Check the generation again under the lock: two racing destroys of the
   * same handle must not both succeed, and the slot may have been freed
   * and reused since the lookup (is_default is read only once the handle
   * is known live: a create reusing the slot writes it). */
  if (!evrt__stream_is(s, h)) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "stream %p already destroyed",
                      (void *)h);
  }
  if (s->is_default) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "the default stream of device %d cannot be destroyed",
                      atomic_load_explicit(&s->device, memory_order_relaxed));
  }
  if (EVRT_UNLIKELY(evrt__stream_capturing(s))) {
    /* A capture attached since the check above (begin and fork attach
     * under plock with the handle live, src/capture.c): the destroy of a
     * capturing stream fails, the capture invalidated, and the stream
     * stays.  Read under plock, so a begin either attached before this
     * read, or attaches after the kill below and finds the handle dead:
     * never both succeed. */
    evrt__spin_unlock(&s->plock);
    if (evrt__capture_destroy_stream(s, h, &st))
      return st;
    goto again; /* the capture ended meanwhile */
  }
  evrt__table_kill(&s->hdr);
  bool named = s->named;
  uint64_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  /* Its name goes with it (a session recording keeps it until its file is
   * written); a set_name racing the kill removes what it added itself. */
  if (named)
    evrt__trace_stream_forget(id);
  /* No producer links after the kill; one that pinned the stream before it
   * (evrt__stream_pin) pushes without the handle: let it finish, so that
   * its item is seen below (acquire: pairs with evrt__stream_unpin). */
  struct evrt__backoff b = {0};
  while (atomic_load_explicit(&s->pins, memory_order_acquire) != 0)
    evrt__backoff(&b);
  /* The backend marks it destroyed and frees it now if it is idle and
   * drained; otherwise whoever drains it frees it. */
  evrt__be_stream_destroyed(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_query(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)))
    return evrt__capture_stream_misuse(s, h, "queried");
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  bool done = evrt__done(s) >= enq;
  /* The counters were this incarnation's if the handle is still live after
   * the (acquire) loads of them: a create reusing the slot publishes its
   * handle before anyone enqueues on it. */
  if (EVRT_UNLIKELY(!evrt__stream_is(s, h)))
    return destroyed_meanwhile(h);
  /* complete: a pending error of its work (src/failure.c) is reported */
  if (!done)
    return EVRT_NOT_READY;
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_observe_stream(s, enq);
  return evrt__error_check(s, enq);
}

/* The waiting part, out of line (see sync_wait in event.c). */
static __attribute__((noinline)) evrt_status_t
stream_sync_wait(struct evrt__stream *s, uint64_t enq, int64_t timeout_ns) {
  evrt_status_t st;
  /* read while the handle is known live (the caller checked it since) */
  uint64_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
  if (evrt__tls_stream == s)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "stream %llu synchronized from its own host function",
                      (unsigned long long)id);
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  /* (s, enq) stays valid if s is destroyed meanwhile: seqs only grow */
  st = evrt__be_host_wait(s, enq, timeout_ns, false);
  if (EVRT_TRACING())
    evrt__trace_host_wait("stream_synchronize", id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st, "stream %llu not done after %lld ns",
                      (unsigned long long)id, (long long)timeout_ns);
  if (EVRT_UNLIKELY(evrt__check_on) && !st)
    evrt__check_observe_stream(s, enq);
  return st ? st : evrt__error_check(s, enq);
}

evrt_status_t evrt_stream_synchronize_timeout(evrt_stream_t h,
                                              int64_t timeout_ns) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (EVRT_UNLIKELY(evrt__any_capture()) && evrt__capture_sync_stream(s, h, &st))
    return st;
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  bool done = evrt__done(s) >= enq;
  /* as in evrt_stream_query: enq was this incarnation's */
  if (EVRT_UNLIKELY(!evrt__stream_is(s, h)))
    return destroyed_meanwhile(h);
  if (done) {
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_observe_stream(s, enq);
    return evrt__error_check(s, enq);
  }
  return stream_sync_wait(s, enq, timeout_ns);
}

evrt_status_t evrt_stream_synchronize(evrt_stream_t h) {
  return evrt_stream_synchronize_timeout(h, -1);
}

/* The attribute getters and set_name: look the stream up and hold plock
 * with the handle checked under it, so that a create recycling the slot
 * cannot be writing what they read (true: the caller unlocks). */
static evrt_status_t lock_stream(evrt_stream_t h, struct evrt__stream **out) {
  evrt_status_t st = get_stream(h, out);
  if (st)
    return st;
  evrt__spin_lock(&(*out)->plock);
  if (!evrt__stream_is(*out, h)) {
    evrt__spin_unlock(&(*out)->plock);
    return destroyed_meanwhile(h);
  }
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_device(evrt_stream_t h, int *device) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = lock_stream(h, &s);
  if (st)
    return st;
  if (!device) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "device is NULL");
  }
  *device = atomic_load_explicit(&s->device, memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_priority(evrt_stream_t h, int *priority) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = lock_stream(h, &s);
  if (st)
    return st;
  if (!priority) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "priority is NULL");
  }
  *priority = s->priority;
  evrt__spin_unlock(&s->plock);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_id(evrt_stream_t h, uint64_t *id) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = lock_stream(h, &s);
  if (st)
    return st;
  if (!id) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "id is NULL");
  }
  *id = atomic_load_explicit(&s->id, memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_set_name(evrt_stream_t h, const char *name) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = lock_stream(h, &s);
  if (st)
    return st;
  if (!name) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "name is NULL");
  }
  /* (lock_stream checked the handle under plock; NULL stood for the
   * default stream, whose handle the re-check below compares with) */
  h = evrt__stream_handle(s);
  strncpy(s->name, name, sizeof s->name - 1);
  s->name[sizeof s->name - 1] = 0;
  s->named = true; /* (destroy reads it under plock after the kill) */
  int dev = atomic_load_explicit(&s->device, memory_order_relaxed);
  uint64_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  /* The checker's and the trace's copies are made off plock (a mutex, a
   * malloc), so a destroy may slip in: the checker's ignores a name for
   * another incarnation (the id), and the trace entry added here is
   * removed again if the handle died meanwhile (the destroy's removal
   * may have run before the add: re-checked under plock, after it, so
   * one of the two removes it). */
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_stream_name(s, id, name);
  EVRT__SCHED_POINT(EVRT__SP_NAME_SET, s); /* white-box build only */
  /* Always: the trace writer remembers names given before tracing starts. */
  evrt__trace_stream_name(dev, id, name);
  evrt__spin_lock(&s->plock);
  bool live = evrt__stream_is(s, h);
  evrt__spin_unlock(&s->plock);
  if (EVRT_UNLIKELY(!live)) {
    evrt__trace_stream_forget(id);
    return destroyed_meanwhile(h);
  }
  return EVRT_SUCCESS;
}

evrt_status_t evrt_launch_host_func_labeled(evrt_stream_t h, evrt_host_fn fn,
                                            void *user, const char *label) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (EVRT_UNLIKELY(st))
    return st;
  if (EVRT_UNLIKELY(!fn))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "host function is NULL");
  struct evrt__item t;
  t.kind = EVRT__ITEM_HOST_FUNC;
  t.phase = t.dep_kind = t.failed = 0;
  t.deadline = 0;
  t.u.host.fn = fn;
  t.u.host.user = user;
  return enqueue(s, h, &t, label);
}

evrt_status_t evrt_launch_host_func(evrt_stream_t h, evrt_host_fn fn,
                                    void *user) {
  return evrt_launch_host_func_labeled(h, fn, user, NULL);
}

/* Does [p, p + n) wrap or end past the user address space?  (n > 0) */
static bool bad_range(const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p;
  return n > evrt__user_va_end || a > evrt__user_va_end - n;
}

static evrt_status_t mem_item(evrt_stream_t h, int kind, void *dst,
                              const void *src, int value, size_t n) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  const char *what = kind == EVRT__ITEM_MEMCPY ? "memcpy" : "memset";
  if (n && (!dst || (kind == EVRT__ITEM_MEMCPY && !src)))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%s of %zu bytes with a NULL "
                      "pointer", what, n);
  /* An impossible range (it wraps around the address space, or ends beyond
   * what this machine can map) would be accepted and then crash the worker
   * or scribble over memory: refuse it now.  Overlapping memcpy ranges are
   * fine (the cpu backend copies as memmove: docs/design.md section 11). */
  if (EVRT_UNLIKELY(n && bad_range(dst, n)))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "%s of %zu bytes to %p: the range wraps around the "
                      "address space or ends past its top (%#lx)",
                      what, n, dst, (unsigned long)evrt__user_va_end);
  if (EVRT_UNLIKELY(n && kind == EVRT__ITEM_MEMCPY && bad_range(src, n)))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "memcpy of %zu bytes from %p: the range wraps around "
                      "the address space or ends past its top (%#lx)",
                      n, src, (unsigned long)evrt__user_va_end);
  struct evrt__item t;
  memset(&t, 0, sizeof t);
  t.kind = (uint8_t)kind;
  t.u.mem.dst = dst;
  t.u.mem.src = src;
  t.u.mem.value = value;
  t.u.mem.n = n;
  return enqueue(s, h, &t, NULL);
}

evrt_status_t evrt_memcpy_async(evrt_stream_t h, void *dst, const void *src,
                                size_t bytes) {
  return mem_item(h, EVRT__ITEM_MEMCPY, dst, src, 0, bytes);
}

evrt_status_t evrt_memset_async(evrt_stream_t h, void *dst, int value,
                                size_t bytes) {
  return mem_item(h, EVRT__ITEM_MEMSET, dst, NULL, value, bytes);
}

evrt_status_t evrt_stream_delay(evrt_stream_t h, uint64_t delay_ns) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  struct evrt__item t;
  memset(&t, 0, sizeof t);
  t.kind = EVRT__ITEM_DELAY;
  t.u.delay.ns = delay_ns;
  return enqueue(s, h, &t, NULL);
}

evrt_status_t evrt_stream_wait_failures(evrt_stream_t h, uint64_t *count) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!count)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "count is NULL");
  /* acquire orders the handle check after it (as evrt_stream_query) */
  uint64_t n = atomic_load_explicit(&s->wait_failures, memory_order_acquire);
  if (!evrt__stream_is(s, h))
    return destroyed_meanwhile(h);
  *count = n;
  return EVRT_SUCCESS;
}
