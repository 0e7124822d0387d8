/*
 * ipc_proto.c - an interprocess event's record, query, synchronize and
 * stream wait in this process, over its generation ring (ipc_ring.c says
 * how generations are claimed and completed across processes; ipc_shm.c
 * how the segment is shared; docs/design.md section 8 the whole design).
 *
 * Locks: the event's lock (a spin lock) only around reading or attaching
 * its map and its local fields; no system call and no wait on another
 * process under it.  Nothing here waits for another process to make
 * progress except a synchronize, which sleeps on the futex word.
 */
#include "ipc.h"

/* Under e's lock: is e (still) a live interprocess event?  The callers
 * found it so before taking the lock; a destroy since (or a destroy and a
 * create of another kind in the slot) must not get shared state or a
 * resource attached to a slot that its destroy has already cleaned. */
bool evrt__ipc_live(struct evrt__event *e) {
  return evrt__obj_live(&e->hdr) && (e->flags & EVRT_EVENT_INTERPROCESS);
}

evrt_status_t evrt__ipc_record_device(struct evrt__event *e, int device) {
  /* An imported event records on a stream of any device of this process
   * (CANN's multi-device IPC sample opens on device 1 an event exported on
   * device 0 and records it there): its generations live in the shared
   * segment, not on a device, and its device is the exporter's.  The
   * exporter's own event keeps rule 3: the device fixed at its first
   * record or export. */
  if (e->imported)
    return EVRT_SUCCESS;
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (dev >= 0 && dev != device)
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "event device %d does not match recording stream's "
                      "device %d",
                      dev, device);
  return EVRT_SUCCESS;
}

/* The record's generation g is claimed (e's lock held, e live with this
 * map): the local fields that get_info shows. */
static void record_local(struct evrt__event *e, uint64_t g) {
  /* Records racing on other threads may get here in either order: the
   * count shown by get_info only grows. */
  if (g > atomic_load_explicit(&e->rec_no, memory_order_relaxed)) {
    atomic_store_explicit(&e->rec_no, g, memory_order_relaxed);
    atomic_store_explicit(&e->rec_thread, evrt_thread_id(),
                          memory_order_relaxed);
  }
}

static void fill_item(struct evrt__item *it, struct evrt__ipc_map *map,
                      uint64_t g, uint64_t id) {
  it->kind = EVRT__ITEM_RECORD;
  it->u.ev.ev = NULL;
  it->u.ev.ipc = map; /* a reference of the item's own */
  it->u.ev.target = g;
  it->u.ev.rec_no = g;
  it->u.ev.ev_id = id;
}

/* A record that could not take the fast path: a first record (no segment
 * yet), this process's first record of the event (registration), a ring
 * slot whose recorder's liveness must be read from /proc, or a lost race.
 * Here system calls are made without e's lock: the map is held by a
 * reference. */
static evrt_status_t record_slow(struct evrt__event *e,
                                 struct evrt__stream *s) {
  struct evrt__ipc_map *map = NULL;
  evrt_status_t st = evrt__ipc_event_map(e, s->device, true, &map, NULL);
  if (st)
    return st;
  unsigned me = evrt__ipc_recorder(map);
  if (!me) {
    evrt__ipc_map_unref(map);
    return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                      "%d live processes have recorded this interprocess "
                      "event; no room for another",
                      EVRT__IPC_RECORDERS);
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__ipc_map_unref(map);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate record item");
  }
  struct evrt__ipc_shm *m = map->shm;
  uint64_t g = evrt__ipc_claim(m, me);
  if (!g) {
    evrt__item_discard(s, it);
    evrt__ipc_map_unref(map);
    return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                      "%d generations of this interprocess event are pending; "
                      "synchronize before recording again",
                      EVRT__IPC_RING);
  }
  /* Generation g is visible to every process now: the record happened,
   * even if a destroy of e races it (its item completes g). */
  uint64_t id = 0;
  evrt__event_lock(e);
  if (evrt__ipc_live(e) && evrt__ipc_map_of(e) == map) {
    id = e->id;
    record_local(e, g);
  }
  evrt__event_unlock(e);
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  uint64_t target = enq; /* the stream position the generation covers */
  if (evrt__done(s) >= enq) {
    evrt__item_discard(s, it);
    evrt__ipc_complete(m, g);
    evrt__ipc_map_unref(map);
  } else {
    fill_item(it, map, g, id); /* takes over our reference */
    target = evrt__stream_push(s, it);
  }
  if (EVRT_UNLIKELY(evrt__check_on) && id)
    evrt__check_record(id, s, g, target); /* waits in this process */
  return EVRT_SUCCESS;
}

evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s) {
  /* Fast path, under e's lock (as a record of a local event): the event
   * has its segment and this process its recorder index; one attempt at
   * the claim that needs no system call.  The map cannot go while the lock
   * is held (a destroy closes it after taking the lock), so a record that
   * completes at once takes no reference unless a sleeper needs a
   * wake-up, which is made after the lock. */
  evrt__event_lock(e);
  struct evrt__ipc_map *map = evrt__ipc_map_of(e);
  if (EVRT_UNLIKELY(!evrt__ipc_live(e) || !map)) {
    evrt__event_unlock(e);
    return record_slow(e, s);
  }
  evrt_status_t st = evrt__ipc_record_device(e, s->device);
  if (st) {
    evrt__event_unlock(e);
    return st;
  }
  unsigned me = atomic_load_explicit(&map->me, memory_order_relaxed);
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  bool idle = evrt__done(s) >= enq;
  struct evrt__item *it = NULL;
  if (!idle && !(it = evrt__item_new(s))) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate record item");
  }
  struct evrt__ipc_shm *m = map->shm;
  uint64_t g = me ? evrt__ipc_claim_once(m, me) : 0;
  if (EVRT_UNLIKELY(!g)) {
    if (it)
      evrt__item_discard(s, it);
    evrt__event_unlock(e);
    return record_slow(e, s);
  }
  record_local(e, g);
  if (idle) {
    /* The stream had finished all its work at the call: g is complete. */
    bool wake = evrt__ipc_mark_done(m, g);
    if (wake)
      evrt__ipc_map_ref(map);
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_record(e->id, s, g, enq); /* waits in this process */
    evrt__event_unlock(e);
    if (wake) {
      evrt__ipc_wake(m);
      evrt__ipc_map_unref(map);
    }
    return EVRT_SUCCESS;
  }
  evrt__ipc_map_ref(map);
  fill_item(it, map, g, e->id);
  uint64_t target = evrt__stream_push(s, it); /* under the event lock, as
                                                 local records do */
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_record(e->id, s, g, target); /* waits in this process */
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

void evrt__ipc_exec_record(struct evrt__item *it) {
  struct evrt__ipc_map *map = it->u.ev.ipc;
  evrt__ipc_complete(map->shm, it->u.ev.target);
  it->u.ev.ipc = NULL;
  evrt__ipc_map_unref(map);
}

/* Latest generation of an event and a reference on its map (or NULL). */
static struct evrt__ipc_map *latest(struct evrt__event *e, uint64_t *g) {
  evrt__event_lock(e);
  struct evrt__ipc_map *map = evrt__ipc_map_of(e);
  if (map)
    evrt__ipc_map_ref(map);
  evrt__event_unlock(e);
  if (map)
    *g = evrt__ipc_latest(map->shm);
  return map;
}

evrt_status_t evrt__ipc_query(struct evrt__event *e) {
  /* Complete (the common answer) is told under e's lock without a system
   * call or a reference; pending needs the recorder's liveness (/proc),
   * read without the lock. */
  evrt__event_lock(e);
  struct evrt__ipc_map *map = evrt__ipc_map_of(e);
  uint64_t g = 0;
  if (map) {
    g = evrt__ipc_latest(map->shm);
    if (evrt__ipc_gen_state(map->shm, g, false) > 0)
      map = NULL; /* complete */
    else
      evrt__ipc_map_ref(map);
  }
  evrt__event_unlock(e);
  if (!map)
    return EVRT_SUCCESS; /* complete, or never recorded nor exported */
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
    struct evrt__spin_for w =
        evrt__spin_for_start(start, evrt__backend->spin_budget_ns());
    do {
      if (evrt__ipc_gen_state(m, g, false) > 0)
        return EVRT_SUCCESS;
    } while (evrt__spin_for_more(&w));
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
