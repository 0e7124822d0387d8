/*
 * device_after.c - evrt_device_launch_host_func: run a host function once
 * every stream of a device has finished what was enqueued on it before the
 * call (the ACL layer releases freed blocks this way: docs/acl.md).
 *
 * One release lane per device, and one for EVRT_DEVICE_ALL: a hidden
 * stream, made at the first call and kept, on which each call appends, in
 * one section under the lane's lock, a stream wait per stream with work
 * pending, (stream, enq_seq at the call) as a generation, and then the
 * host function.  The lane is FIFO, so a call's waits need only cover what
 * the lane's earlier waits do not: the lane keeps the frontier it waits for
 * already (`cover`, each stream's target, by slot), and a stream whose
 * enq_seq has not moved since costs nothing.  The lane's own pending work
 * (the earlier releases) is before the new one by the queue's order, never
 * waited for.  Other lanes count as streams (at most one wait each).
 *
 * Why a lane: a hidden stream per call (the first design) snapshot every
 * stream with work pending, the hidden streams of earlier calls still
 * waiting included, so behind one busy stream call k enqueued k items and
 * held a stream slot of its own: 2,000 frees grew the process by 306 MiB,
 * 5,000 by 1.3 GB (issue 23, item 4).  Now a call costs one scan of the
 * stream slots (bounded by the streams that ever lived at once, not by what
 * is pending) and, behind streams that did not move, one item.
 *
 * Order.  A stream's seqs only grow (across incarnations too: slots are
 * type-stable), so a target read at the call is reached however the
 * stream is destroyed or recycled meanwhile; a later call's frontier lies
 * at or past an earlier one's for every stream still pending, so running
 * the lane in order delays no release past its own frontier but for the
 * host functions queued before it.
 *
 * A failed allocation changes nothing: every item of a call is allocated
 * before the first is linked; short of one, they go back, the call fails
 * with EVRT_ERROR_OUT_OF_MEMORY and the caller still owns its release (the
 * ACL layer then releases at once, docs/acl.md).
 *
 * Locks: lane.lock (a mutex; malloc and the lane's pushes under it) ->
 * the lane stream's plock (evrt__stream_push); lanes_lock guards the lazy
 * allocation of the lane table only.  The host function never runs under
 * either: with nothing pending it runs on the caller's thread after the
 * unlock, otherwise on the lane's worker.
 */
#include "graph.h" /* evrt__grow (graph.c), and internal.h */

#include <string.h>

struct pend {
  uint32_t slot; /* index in the stream table (the scan's order) */
  bool need;     /* not covered by the lane's queued waits: a wait item */
  struct evrt__stream *s;
  uint64_t target;
};

struct lane {
  pthread_mutex_t lock;
  struct evrt__stream *s; /* NULL until the first call that needs it */
  /* What the lane's queued waits cover already: per stream slot, sorted
   * by slot (the scan's order), the largest target waited for. */
  struct pend *cover, *scratch;
  uint32_t ncover, capcover, capscratch;
  struct evrt__item **v; /* a call's items before they are linked */
  uint32_t capv;
};

static pthread_mutex_t lanes_lock = PTHREAD_MUTEX_INITIALIZER;
/* ndevices + 1 lanes (the last: EVRT_DEVICE_ALL); made once, kept for the
 * life of the process.  acquire/release: publishes the initialized
 * mutexes. */
static _Atomic(struct lane *) lanes;

/* White-box (tests): the stream of a lane (NULL: none yet). */
struct evrt__stream *evrt__device_after_lane(int device);

static struct lane *lane_of(int device) {
  struct lane *v = atomic_load_explicit(&lanes, memory_order_acquire);
  if (EVRT_UNLIKELY(!v)) {
    pthread_mutex_lock(&lanes_lock);
    v = atomic_load_explicit(&lanes, memory_order_relaxed);
    if (!v && (v = evrt__calloc((size_t)evrt__ndevices + 1, sizeof *v))) {
      for (int i = 0; i <= evrt__ndevices; i++)
        pthread_mutex_init(&v[i].lock, NULL); /* never destroyed */
      atomic_store_explicit(&lanes, v, memory_order_release);
    }
    pthread_mutex_unlock(&lanes_lock);
    if (!v)
      return NULL;
  }
  return &v[device == EVRT_DEVICE_ALL ? evrt__ndevices : device];
}

struct evrt__stream *evrt__device_after_lane(int device) {
  struct lane *l = lane_of(device);
  if (!l)
    return NULL;
  pthread_mutex_lock(&l->lock);
  struct evrt__stream *s = l->s;
  pthread_mutex_unlock(&l->lock);
  return s;
}

/* Lane lock held: the streams of `device` (EVRT_DEVICE_ALL: any), but the
 * lane's own, with work pending now, into l->scratch.  False if out of
 * memory. */
static bool snapshot(struct lane *l, int device, uint32_t *nout) {
  struct evrt__table *t = &evrt__streams;
  uint32_t n = atomic_load_explicit(&t->next_unused, memory_order_acquire);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(t, i);
    if (!s || s == l->s)
      continue;
    /* acquire: pairs with the producer's release of enq_seq */
    uint64_t target = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
    if (evrt__done(s) >= target ||
        (device != EVRT_DEVICE_ALL &&
         atomic_load_explicit(&s->device, memory_order_relaxed) != device))
      continue;
    if (k == l->capscratch &&
        !evrt__grow((void **)&l->scratch, &l->capscratch, k + 1,
                    sizeof *l->scratch))
      return false;
    l->scratch[k++] = (struct pend){.slot = i, .s = s, .target = target};
  }
  *nout = k;
  return true;
}

/* Lane lock held: of the n pending streams in scratch, mark (need) the
 * ones the lane's queued waits do not cover yet; returns how many. */
static uint32_t uncovered(struct lane *l, uint32_t n) {
  uint32_t left = 0, j = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct pend *p = &l->scratch[i];
    while (j < l->ncover && l->cover[j].slot < p->slot)
      j++;
    p->need = !(j < l->ncover && l->cover[j].slot == p->slot &&
                l->cover[j].target >= p->target);
    left += p->need;
  }
  return left;
}

evrt_status_t evrt_device_launch_host_func(int device, evrt_host_fn fn,
                                           void *user) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (device == -1)
    device = evrt__tls_device;
  if (device != EVRT_DEVICE_ALL && (device < 0 || device >= evrt__ndevices))
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE,
                      "device %d out of range (%d devices)", device,
                      evrt__ndevices);
  if (!fn)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "host function is NULL");
  struct lane *l = lane_of(device);
  if (!l)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "cannot allocate the release lanes");
  pthread_mutex_lock(&l->lock);
  uint32_t n = 0;
  if (!snapshot(l, device, &n)) {
    pthread_mutex_unlock(&l->lock);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "cannot list the streams with pending work");
  }
  bool lane_busy =
      l->s && evrt__done(l->s) <
                  atomic_load_explicit(&l->s->enq_seq, memory_order_acquire);
  if (n == 0 && !lane_busy) {
    pthread_mutex_unlock(&l->lock);
    fn(user); /* nothing pending: now, on the calling thread */
    return EVRT_SUCCESS;
  }
  /* The hidden stream's pushes are not the caller's tasks. */
  uint64_t last_id = evrt__tls_last_stream_id, last_seq = evrt__tls_last_seq;
  if (!l->s &&
      (st = evrt__stream_new(device == EVRT_DEVICE_ALL ? 0 : device, 0, false,
                             &l->s))) {
    l->s = NULL;
    pthread_mutex_unlock(&l->lock);
    return st;
  }
  /* Every item first (nothing linked if one is missing): the uncovered
   * waits, then the function.  The buffers are the lane's, kept across
   * calls (a call behind streams that did not move allocates its item
   * only, and that from the lane's recycle list once earlier ones ran). */
  uint32_t nw = uncovered(l, n);
  /* the covered frontier after this call: the snapshot (targets only grow,
   * and a stream no longer pending is past its old target) */
  bool bufs_ok = evrt__grow((void **)&l->cover, &l->capcover, n ? n : 1,
                            sizeof *l->cover) &&
                 evrt__grow((void **)&l->v, &l->capv, nw + 1, sizeof *l->v);
  struct evrt__item **v = l->v;
  uint32_t got = bufs_ok ? evrt__items_new(l->s, v, nw + 1) : 0;
  if (got < nw + 1) {
    for (uint32_t i = 0; i < got; i++)
      evrt__item_discard(l->s, v[i]);
    pthread_mutex_unlock(&l->lock);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "cannot allocate the items of the device-wide wait");
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!l->scratch[i].need)
      continue;
    struct evrt__item *it = v[k++];
    it->kind = EVRT__ITEM_WAIT;
    it->dep_kind = EVRT__DEP_STREAM;
    memset(&it->u.ev, 0, sizeof it->u.ev);
    it->u.ev.src = l->scratch[i].s;
    it->u.ev.target = l->scratch[i].target;
  }
  struct evrt__item *it = v[k];
  it->kind = EVRT__ITEM_HOST_FUNC;
  it->u.host.fn = fn;
  it->u.host.user = user;
  /* In order, under the lane's lock: the lane's queue order is the calls'
   * order, which the cover relies on. */
  for (uint32_t i = 0; i <= nw; i++)
    evrt__stream_push(l->s, v[i]);
  memcpy(l->cover, l->scratch, n * sizeof *l->cover);
  l->ncover = n;
  struct evrt__stream *s = l->s;
  pthread_mutex_unlock(&l->lock);
  evrt__stream_schedule(s); /* (push only links) */
  evrt__tls_last_stream_id = last_id;
  evrt__tls_last_seq = last_seq;
  return EVRT_SUCCESS;
}
