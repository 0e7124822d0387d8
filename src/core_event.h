/*
 * core_event.h - the event object and the calls workers make on events
 * (src/event.c).  event.lock is a seqlock and the writer lock (odd while
 * held, taken before a stream's plock); readers retry on a torn read and
 * never write (the reader is gen_try in src/event.c).
 */
#ifndef EVRT_CORE_EVENT_H
#define EVRT_CORE_EVENT_H

#include "core_handle.h"
#include "core_item.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --------------------------------------------------------------- events */
struct evrt__ipc_map;
struct evrt__event {
  struct evrt__obj hdr;
  /* Seqlock and writer lock: odd while a writer holds it. */
  atomic_uint lock;
  /* Atomic (relaxed): read before the lock by calls whose handle a destroy
   * and a create may be recycling meanwhile; they re-check the handle
   * before acting on what they read. */
  atomic_uint flags;
  atomic_int device;            /* -1 until first record / export */
  /* Latest generation (seqlock): src == 0 means unrecorded. */
  atomic_uintptr_t src;         /* struct evrt__stream * */
  atomic_uint_least64_t target;
  atomic_uint_least64_t rec_no; /* generation number */
  atomic_uint_least64_t ts;     /* ns when the latest record executed, 0 */
  atomic_uint_least64_t rec_thread;
  /* Wait status (under the lock): the waits bound to the latest
   * generation, as (waiting stream, seq of its WAIT item); complete when
   * every such stream has passed that seq.  Workers never write it, so
   * passing a wait costs nothing here (a fan-out of 1,000 streams waiting
   * on one event would otherwise bounce one counter between cores).  Freed
   * at destroy. */
  struct evrt__waitrec *wrec;
  uint32_t nwrec, capwrec;
  bool has_resource;
  atomic_bool imported; /* as flags */
  /* A reset of the latest generation still queued (under the lock): the
   * stream's hdr.hlow (0: none) and the reset item's seq.  A legacy wait
   * (EVRT_EVENT_WAIT_NEXT_RECORD) enqueued behind it on that stream runs
   * after it, so it waits for the next record (CANN's flag is read when
   * the wait task runs).  A record clears it (it voids the reset). */
  uint32_t reset_hlow;
  struct evrt__item *nr_waiters; /* legacy next-record waiters (lock) */
  /* interprocess shared state (src/ipc.h), NULL until first record/export */
  _Atomic(struct evrt__ipc_map *) ipc;
  atomic_uint_least64_t id; /* as flags */
  uint64_t reset_seq; /* (see reset_hlow) */
};

struct evrt__waitrec {
  struct evrt__stream *s; /* type-stable; seq counters outlive incarnations */
  uint64_t seq;
};

/* Event slots are a compile-time power of two, so that the hot lookups
 * (query, record, destroy) index with a shift and no load of the size. */
#define EVRT__EVENT_SLOT 128u
_Static_assert(sizeof(struct evrt__event) <= EVRT__EVENT_SLOT,
               "struct evrt__event outgrew its slot");
extern struct evrt__table evrt__events;
static inline struct evrt__event *evrt__event_get(evrt_event_t h) {
  return (struct evrt__event *)evrt__table_lookup_sized(
      &evrt__events, (uintptr_t)h, EVRT__EVENT_SLOT);
}
/* The state every dead event slot is in (table init_slot). */
void evrt__event_init_slot(struct evrt__obj *o);
void evrt__event_lock(struct evrt__event *e);
void evrt__event_unlock(struct evrt__event *e);

/* Called by workers (src/event.c), without any lock held. */
void evrt__event_exec_record(struct evrt__item *it, uint64_t now);
void evrt__event_exec_reset(struct evrt__item *it);
/* Legacy next-record wait reached the head: bind it or queue it on the
 * event.  Returns true if bound (it->u.ev.src/target are set). */
bool evrt__event_bind_next_record(struct evrt__item *it, bool first);
/* A legacy wait queued on its event (phase 2) is skipped (abort, stop):
 * take it off the event's list. */
void evrt__event_unlink_next_record(struct evrt__item *it);

#endif
