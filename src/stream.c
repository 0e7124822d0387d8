/*
 * stream.c - the stream API and the producer side of a stream's queue.
 *
 * Lock order used here: stream.plock -> pool.lock (never nested in fact:
 * the stream is scheduled after plock is released).
 *
 * Enqueue assigns the item's seq and links it at the tail under plock (a
 * lock among producers only), so seq order is queue order even with several
 * producer threads.  enq_seq is stored seq_cst after the link; then the
 * producer reads the state (seq_cst) and, if the stream is IDLE, CASes it to
 * QUEUED and pushes it to the run queue.  The worker going idle stores IDLE
 * and then re-reads enq_seq (exec.c): one of the two always sees the other,
 * so no item is ever left behind in an idle stream.
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
  s->pfree = NULL;
  atomic_store_explicit(&s->returned, NULL, memory_order_relaxed);
  atomic_store_explicit(&s->capture, NULL, memory_order_relaxed);
  unsigned w = atomic_load_explicit(&s->state, memory_order_relaxed);
  atomic_store_explicit(&s->state, ((EVRT__INC(w) + 1) << 4) | EVRT__S_IDLE,
                        memory_order_relaxed);
  atomic_store_explicit(&s->destroyed, false, memory_order_relaxed);
  atomic_store_explicit(&s->enq_seq, done, memory_order_relaxed);
  s->done_local = s->done_local_tail = NULL;
  s->n_done_local = 0;
  s->n_returned = 0;
  evrt__stream_waiters_reset(s);
  evrt__failure_reset(s);
  atomic_store_explicit(&s->wait_failures, 0, memory_order_relaxed);
  atomic_store_explicit(&s->device, device, memory_order_relaxed);
  s->priority = priority < 0 ? -1 : 0;
  s->is_default = is_default;
  s->id = atomic_fetch_add_explicit(&next_stream_id, 1, memory_order_relaxed) + 1;
  s->name[0] = 0;
  st = evrt__pool_reserve(s);
  if (EVRT_UNLIKELY(st)) {
    evrt__table_release(&evrt__streams, &s->hdr);
    return st;
  }
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_stream_new(s);
  evrt__table_publish(&s->hdr);
  if (EVRT_TRACING())
    evrt__trace_stream_name(device, s->id, NULL);
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
  /* The caller won the CAS to DEAD: nobody runs or schedules the stream.
   * Its worker may have let it go idle unsettled (src/cpu/exec.c) and not
   * yet notified its waiters: do it now, before a new incarnation of the
   * slot empties the waiter lists (waiters lost that way hung evrt-stress
   * under ASan).  Drained, so every registered target is reached. */
  evrt__stream_notify(s, evrt__done(s));
  if (s->head != &s->stub)
    evrt__free(s->head);
  s->head = &s->stub;
  evrt__spin_lock(&s->plock);
  evrt__items_free(s->pfree);
  s->pfree = NULL;
  s->tail = &s->stub;
  evrt__spin_unlock(&s->plock);
  evrt__items_free(atomic_exchange_explicit(&s->returned, NULL, memory_order_acquire));
  evrt__items_free(s->done_local);
  s->done_local = s->done_local_tail = NULL;
  s->n_done_local = 0;
  evrt__pool_unreserve(s);
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

struct evrt__item *evrt__item_new(struct evrt__stream *s) {
  evrt__spin_lock(&s->plock);
  struct evrt__item *it = pop_free_locked(s);
  evrt__spin_unlock(&s->plock);
  if (!it)
    it = evrt__malloc(sizeof *it);
  if (it)
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

/* After linking, with plock released: make an idle stream runnable. */
static void schedule(struct evrt__stream *s) {
  unsigned w = atomic_load_explicit(&s->state, memory_order_seq_cst);
  if (EVRT__ST(w) == EVRT__S_IDLE &&
      atomic_compare_exchange_strong_explicit(
          &s->state, &w, EVRT__ST_WITH(w, EVRT__S_QUEUED),
          memory_order_acq_rel, memory_order_relaxed))
    evrt__pool_push(s);
}

uint64_t evrt__stream_push(struct evrt__stream *s, struct evrt__item *it) {
  if (EVRT_UNLIKELY(evrt__check_on))
    it->check = evrt__check_enqueue(s, it);
  evrt__spin_lock(&s->plock);
  uint64_t seq = link_locked(s, it);
  evrt__spin_unlock(&s->plock);
  schedule(s);
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

/* Allocate, fill and push in one plock round trip (the hot path of host
 * functions). */
static evrt_status_t enqueue(struct evrt__stream *s, const struct evrt__item *tmpl,
                             const char *label) {
  evrt_status_t st;
  /* A capturing stream takes a graph node instead (src/capture.c). */
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_item(s, tmpl, label, &st))
    return st;
  void *chk = EVRT_UNLIKELY(evrt__check_on) ? evrt__check_enqueue(s, tmpl)
                                            : NULL;
  evrt__spin_lock(&s->plock);
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

evrt_status_t evrt__enqueue(struct evrt__stream *s,
                           const struct evrt__item *tmpl) {
  return enqueue(s, tmpl, NULL);
}

static inline __attribute__((always_inline)) evrt_status_t
get_stream_(evrt_stream_t *h, struct evrt__stream **out) {
  evrt_status_t st = evrt__ready();
  if (EVRT_UNLIKELY(st))
    return st;
  struct evrt__stream *s = evrt__stream_get(*h);
  if (EVRT_UNLIKELY(!s)) {
    if (*h)
      return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                        "stream %p is destroyed or not a stream", (void *)*h);
    s = evrt__stream_null_default();
    *h = evrt__stream_handle(s);
  }
  *out = s;
  return EVRT_SUCCESS;
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
  s->priority = priority;
  *stream = evrt__stream_handle(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_destroy(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (s->is_default)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "the default stream of device %d cannot be destroyed",
                      s->device);
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)) &&
      evrt__capture_destroy_stream(s, &st))
    return st;
  evrt__spin_lock(&s->plock);
  /* Check the generation again under the lock: two racing destroys of the
   * same handle must not both succeed. */
  if ((uintptr_t)evrt__stream_handle(s) != (uintptr_t)h) {
    evrt__spin_unlock(&s->plock);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "stream %p already destroyed",
                      (void *)h);
  }
  evrt__table_kill(&s->hdr);
  evrt__spin_unlock(&s->plock);
  /* Until `destroyed` is set nobody frees the stream, so this is the
   * incarnation being destroyed.  Once it is set, the worker that drains the
   * stream may free it and a create may reuse the slot: the CAS below must
   * match this incarnation only. */
  unsigned w0 = atomic_load_explicit(&s->state, memory_order_relaxed);
  /* seq_cst: the Dekker pair with the worker going idle, which stores IDLE
   * and then reads `destroyed`.  Whoever wins the CAS to DEAD frees it;
   * otherwise the worker that drains it does (exec.c). */
  atomic_store_explicit(&s->destroyed, true, memory_order_seq_cst);
  unsigned w = atomic_load_explicit(&s->state, memory_order_seq_cst);
  /* IDLE with work still linked means the worker has just given it up and
   * is about to take it back (it re-reads enq_seq after storing IDLE):
   * leave the stream to it, or its last items would be lost. */
  if (EVRT__INC(w) == EVRT__INC(w0) && EVRT__ST(w) == EVRT__S_IDLE &&
      evrt__done(s) >=
          atomic_load_explicit(&s->enq_seq, memory_order_seq_cst) &&
      atomic_compare_exchange_strong_explicit(
          &s->state, &w, EVRT__ST_WITH(w, EVRT__S_DEAD), memory_order_acq_rel,
          memory_order_relaxed))
    evrt__stream_free(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_query(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (EVRT_UNLIKELY(evrt__stream_capturing(s)))
    return evrt__capture_stream_misuse(s, "queried");
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  /* complete: a pending error of its work (src/failure.c) is reported */
  if (evrt__done(s) < enq)
    return EVRT_NOT_READY;
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_observe_stream(s, enq);
  return evrt__error_check(s, enq);
}

/* The waiting part, out of line (see sync_wait in event.c). */
static __attribute__((noinline)) evrt_status_t
stream_sync_wait(struct evrt__stream *s, uint64_t enq, int64_t timeout_ns) {
  evrt_status_t st;
  if (evrt__tls_stream == s)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "stream %llu synchronized from its own host function",
                      (unsigned long long)s->id);
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  st = evrt__wait_seq(s, enq, timeout_ns, false);
  if (EVRT_TRACING())
    evrt__trace_host_wait("stream_synchronize", s->id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st, "stream %llu not done after %lld ns",
                      (unsigned long long)s->id, (long long)timeout_ns);
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
  if (EVRT_UNLIKELY(evrt__any_capture()) && evrt__capture_sync_stream(s, &st))
    return st;
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  if (evrt__done(s) >= enq) {
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_observe_stream(s, enq);
    return evrt__error_check(s, enq);
  }
  return stream_sync_wait(s, enq, timeout_ns);
}

evrt_status_t evrt_stream_synchronize(evrt_stream_t h) {
  return evrt_stream_synchronize_timeout(h, -1);
}

evrt_status_t evrt_stream_get_device(evrt_stream_t h, int *device) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!device)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "device is NULL");
  *device = s->device;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_priority(evrt_stream_t h, int *priority) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!priority)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "priority is NULL");
  *priority = s->priority;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_id(evrt_stream_t h, uint64_t *id) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!id)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "id is NULL");
  *id = s->id;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_set_name(evrt_stream_t h, const char *name) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!name)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "name is NULL");
  evrt__spin_lock(&s->plock);
  strncpy(s->name, name, sizeof s->name - 1);
  s->name[sizeof s->name - 1] = 0;
  evrt__spin_unlock(&s->plock);
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_stream_name(s, name);
  /* Always: the trace writer remembers names given before tracing starts. */
  evrt__trace_stream_name(s->device, s->id, name);
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
  return enqueue(s, &t, label);
}

evrt_status_t evrt_launch_host_func(evrt_stream_t h, evrt_host_fn fn,
                                    void *user) {
  return evrt_launch_host_func_labeled(h, fn, user, NULL);
}

static evrt_status_t mem_item(evrt_stream_t h, int kind, void *dst,
                              const void *src, int value, size_t n) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (n && (!dst || (kind == EVRT__ITEM_MEMCPY && !src)))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%s of %zu bytes with a NULL "
                      "pointer", kind == EVRT__ITEM_MEMCPY ? "memcpy" : "memset",
                      n);
  struct evrt__item t;
  memset(&t, 0, sizeof t);
  t.kind = (uint8_t)kind;
  t.u.mem.dst = dst;
  t.u.mem.src = src;
  t.u.mem.value = value;
  t.u.mem.n = n;
  return enqueue(s, &t, NULL);
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
  return enqueue(s, &t, NULL);
}

evrt_status_t evrt_stream_wait_failures(evrt_stream_t h, uint64_t *count) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!count)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "count is NULL");
  *count = atomic_load_explicit(&s->wait_failures, memory_order_relaxed);
  return EVRT_SUCCESS;
}
