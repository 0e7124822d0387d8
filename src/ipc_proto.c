/*
 * ipc_proto.c - interprocess events: generations in the shared segment
 * (record, complete, query, synchronize, stream wait).
 *
 * Layout.  The exporter keeps the event's shared state in a 64 KiB memfd
 * ("evrt-ipc") mapped MAP_SHARED.  The 64-byte handle names the exporter's
 * pid, its start time (to detect pid reuse), the memfd's descriptor number
 * and a random nonce; an importer opens /proc/<pid>/fd/<fd>, checks that it is
 * an evrt memfd of the right size whose header carries the nonce, and maps
 * it.  No name is ever created in /dev/shm, so nothing is left behind by a
 * normal exit or a crash: the memory goes when the last process unmaps it.
 *
 * Generations.  rec_no in the shared header is the latest generation; each
 * generation g owns ring slot g % 2048 (RING), whose word is (g << 1 | done)
 * and which also names the recording process (pid + start time).  A record
 * takes the shared lock, fills the slot, then publishes rec_no (release).  A
 * slot is reused only after it is done (a record that would reuse a pending
 * one fails with EVRT_ERROR_EVENT_LIMIT), so a waiter bound to g that finds
 * another generation in its slot knows g completed.  Completion is a CAS of
 * the word followed by a bump of the shared futex word `seq` and a
 * FUTEX_WAKE when `nwaiters` says someone sleeps (the Dekker pair: waiter
 * increments nwaiters then re-reads the slot; completer writes the slot then
 * reads nwaiters, all seq_cst).
 *
 * Robustness.  The shared lock word holds the owner's pid; a process that
 * finds it held by a dead process takes it over, and everything the lock
 * protects is rewritten by the next record, so a crashed peer can neither
 * block nor corrupt the others.  Waiters on a pending generation check that
 * its recorder is alive every 50 ms and give up with EVRT_ERROR_PEER_LOST.
 *
 * Streams of this process that wait on an interprocess generation are parked
 * and watched by one watcher thread, which sleeps in futex_waitv on the
 * shared futex words of every watched event (plus a private kick word).
 *
 * Locks: watch.lock is a leaf (owners are resumed after releasing it); the
 * shared lock is taken by a record, under the event's lock.
 */
#include "ipc.h"

#include <limits.h>

/* --------------------------------------------------------- generations */

static void wake_all(struct evrt__ipc_shm *m) {
  atomic_fetch_add_explicit(&m->seq, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&m->nwaiters, memory_order_seq_cst))
    evrt__futex_wake(&m->seq, INT_MAX, 1);
}

static void complete(struct evrt__ipc_shm *m, uint64_t g) {
  struct evrt__ipc_slot *sl = &m->ring[g % EVRT__IPC_RING];
  uint64_t w = g << 1;
  /* seq_cst: pairs with the waiter's nwaiters increment (see top) */
  atomic_compare_exchange_strong_explicit(
      &sl->word, &w, (g << 1) | 1, memory_order_seq_cst, memory_order_relaxed);
  wake_all(m);
}

/* 1 done, 0 pending, -1 pending and its recorder is dead */
int evrt__ipc_gen_state(struct evrt__ipc_shm *m, uint64_t g, bool check_peer) {
  if (g == 0)
    return 1;
  struct evrt__ipc_slot *sl = &m->ring[g % EVRT__IPC_RING];
  uint64_t w = atomic_load_explicit(&sl->word, memory_order_seq_cst);
  if ((w >> 1) != g || (w & 1))
    return 1; /* done, or the slot moved on (only after g was done) */
  if (check_peer &&
      !evrt__ipc_alive(atomic_load_explicit(&sl->pid, memory_order_relaxed),
                       atomic_load_explicit(&sl->start, memory_order_relaxed)))
    return -1;
  return 0;
}

/* Under e's lock: is e (still) a live interprocess event?  The callers
 * found it so before taking the lock; a destroy since (or a destroy and a
 * create of another kind in the slot) must not get shared state or a
 * resource attached to a slot that its destroy has already cleaned. */
bool evrt__ipc_live(struct evrt__event *e) {
  return evrt__obj_live(&e->hdr) && (e->flags & EVRT_EVENT_INTERPROCESS);
}

evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s) {
  evrt__event_lock(e);
  if (!evrt__ipc_live(e)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event destroyed");
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (dev >= 0 && dev != s->device) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "event device %d does not match recording stream's "
                      "device %d",
                      dev, s->device);
  }
  evrt_status_t st = evrt__ipc_ensure_shared(e, s->device);
  struct evrt__ipc_map *map = evrt__ipc_map_of(e);
  if (st) {
    evrt__event_unlock(e);
    return st;
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate record item");
  }
  struct evrt__ipc_shm *m = map->shm;
  evrt__ipc_lock(m);
  uint64_t g = atomic_load_explicit(&m->rec_no, memory_order_relaxed) + 1;
  struct evrt__ipc_slot *sl = &m->ring[g % EVRT__IPC_RING];
  uint64_t w = atomic_load_explicit(&sl->word, memory_order_acquire);
  if (!(w == 0 || (w & 1) ||
        !evrt__ipc_alive(
            atomic_load_explicit(&sl->pid, memory_order_relaxed),
            atomic_load_explicit(&sl->start, memory_order_relaxed)))) {
    /* The slot's generation (RING records ago) is still pending: reusing it
     * would break the waiters bound to it.  A clear error rather than a
     * blocking record (that could wait on work queued behind it). */
    evrt__ipc_unlock(m);
    evrt__item_discard(s, it);
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                      "%d generations of this interprocess event are pending; "
                      "synchronize before recording again",
                      EVRT__IPC_RING);
  }
  atomic_store_explicit(&sl->pid, evrt__ipc_my_pid, memory_order_relaxed);
  atomic_store_explicit(&sl->start, evrt__ipc_my_start, memory_order_relaxed);
  atomic_store_explicit(&sl->word, g << 1, memory_order_relaxed);
  /* release: importers that read rec_no == g see the slot filled */
  atomic_store_explicit(&m->rec_no, g, memory_order_release);
  evrt__ipc_unlock(m);
  atomic_store_explicit(&e->rec_no, g, memory_order_relaxed);
  atomic_store_explicit(&e->rec_thread, evrt_thread_id(), memory_order_relaxed);
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  uint64_t target = enq; /* the stream position the generation covers */
  if (evrt__done(s) >= enq) {
    evrt__item_discard(s, it);
    complete(m, g);
    if (atomic_load_explicit(&e->device, memory_order_relaxed) < 0)
      atomic_store_explicit(&e->device, s->device, memory_order_relaxed);
  } else {
    it->kind = EVRT__ITEM_RECORD;
    it->u.ev.ev = NULL;
    it->u.ev.ipc = map;
    it->u.ev.target = g;
    it->u.ev.rec_no = g;
    it->u.ev.ev_id = e->id;
    evrt__ipc_map_ref(map);
    target = evrt__stream_push(s, it);
  }
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_record(e, s, g, target); /* waits in this process */
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

void evrt__ipc_exec_record(struct evrt__item *it) {
  struct evrt__ipc_map *map = it->u.ev.ipc;
  complete(map->shm, it->u.ev.target);
  it->u.ev.ipc = NULL;
  evrt__ipc_map_unref(map);
}

/* Latest generation of an event and a reference on its map (or NULL). */
static struct evrt__ipc_map *latest(struct evrt__event *e, uint64_t *g) {
  evrt__event_lock(e);
  struct evrt__ipc_map *map = evrt__ipc_map_of(e);
  if (map) {
    evrt__ipc_map_ref(map);
    *g = atomic_load_explicit(&map->shm->rec_no, memory_order_acquire);
  }
  evrt__event_unlock(e);
  return map;
}

evrt_status_t evrt__ipc_query(struct evrt__event *e) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS; /* never recorded nor exported */
  int st = evrt__ipc_gen_state(map->shm, g, true);
  evrt__ipc_map_unref(map);
  if (st < 0)
    return evrt__fail(EVRT_ERROR_PEER_LOST,
                      "the process that recorded generation %llu died",
                      (unsigned long long)g);
  return st ? EVRT_SUCCESS : EVRT_NOT_READY;
}

static evrt_status_t wait_gen(struct evrt__ipc_shm *m, uint64_t g,
                              int64_t timeout_ns, bool blocking) {
  uint64_t start = evrt__now_ns();
  uint64_t deadline = timeout_ns >= 0 ? start + (uint64_t)timeout_ns : 0;
  if (!blocking) {
    uint64_t budget = evrt__spin_budget_ns();
    for (unsigned i = 1;; i++) {
      if (evrt__ipc_gen_state(m, g, false) > 0)
        return EVRT_SUCCESS;
      evrt__cpu_relax();
      if ((i & 15) == 0 && evrt__now_ns() - start >= budget)
        break;
    }
  }
  evrt_status_t r = EVRT_SUCCESS;
  atomic_fetch_add_explicit(&m->nwaiters, 1, memory_order_seq_cst);
  uint64_t next_check = evrt__now_ns() + EVRT__IPC_PEER_CHECK_NS;
  for (;;) {
    unsigned v = atomic_load_explicit(&m->seq, memory_order_seq_cst);
    uint64_t now = evrt__now_ns();
    bool check = now >= next_check;
    int st = evrt__ipc_gen_state(m, g, check);
    if (check)
      next_check = now + EVRT__IPC_PEER_CHECK_NS;
    if (st > 0)
      break;
    if (st < 0) {
      r = EVRT_ERROR_PEER_LOST;
      break;
    }
    if (deadline && now >= deadline) {
      r = EVRT_ERROR_TIMEOUT;
      break;
    }
    int64_t left = (int64_t)(next_check - now);
    if (deadline && (int64_t)(deadline - now) < left)
      left = (int64_t)(deadline - now);
    evrt__futex_wait(&m->seq, v, left, 1);
  }
  atomic_fetch_sub_explicit(&m->nwaiters, 1, memory_order_relaxed);
  return r;
}

evrt_status_t evrt__ipc_sync(struct evrt__event *e, int64_t timeout_ns) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS;
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  evrt_status_t st = wait_gen(map->shm, g, timeout_ns,
                              (e->flags & EVRT_EVENT_BLOCKING_SYNC) != 0);
  evrt__ipc_map_unref(map);
  if (EVRT_TRACING())
    evrt__trace_host_wait("event_synchronize", e->id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_PEER_LOST)
    return evrt__fail(st, "the process that recorded generation %llu died",
                      (unsigned long long)g);
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st,
                      "interprocess generation %llu not complete after "
                      "%lld ns",
                      (unsigned long long)g, (long long)timeout_ns);
  return st;
}

evrt_status_t evrt__ipc_wait(struct evrt__event *e, struct evrt__stream *s,
                             int64_t timeout_ns) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS; /* never recorded: empty dependency */
  if (evrt__ipc_gen_state(map->shm, g, false) > 0 &&
      evrt__done(s) >=
          atomic_load_explicit(&s->enq_seq, memory_order_acquire)) {
    evrt__ipc_map_unref(map);
    return EVRT_SUCCESS;
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__ipc_map_unref(map);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate wait item");
  }
  it->kind = EVRT__ITEM_WAIT;
  it->dep_kind = EVRT__DEP_IPC;
  it->u.ev.ev = NULL; /* no wait status across processes */
  it->u.ev.ipc = map; /* the reference taken by latest() */
  it->u.ev.src = NULL;
  it->u.ev.target = g;
  it->u.ev.rec_no = g;
  it->u.ev.ev_id = e->id;
  it->u.ev.wnext = NULL;
  it->deadline = timeout_ns >= 0 ? evrt__now_ns() + (uint64_t)timeout_ns : 0;
  evrt__stream_push(s, it);
  return EVRT_SUCCESS;
}
