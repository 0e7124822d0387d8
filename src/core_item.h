/*
 * core_item.h - the work item: one entry of a stream's queue (host
 * function, copy, fill, delay, record, wait, graph, value op), shared by
 * the core, the backends and the graph code.  Items are written by their
 * producer before the release that links them (core_stream.h) and then
 * owned by the worker running their stream.
 */
#ifndef EVRT_CORE_ITEM_H
#define EVRT_CORE_ITEM_H

#include "core_base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- items */
struct evrt__stream;
struct evrt__event;

enum evrt__dep_kind {
  EVRT__DEP_STREAM = 0,  /* wait until src->done_seq >= target */
  EVRT__DEP_NEXT_RECORD, /* legacy: wait for the event's next record */
  EVRT__DEP_IPC          /* interprocess generation (src/ipc_*.c) */
};

/* Field order: the first cache line holds what the worker running the
 * stream and a notifier resuming it touch (items are 64-byte aligned, see
 * stream.c); recycling links, deadlines and trace fields come after. */
struct evrt__item {
  _Atomic(struct evrt__item *) qnext; /* stream queue link (see stream) */
  uint64_t seq;       /* position in its stream (1-based) */
  struct evrt__stream *owner;
  uint8_t kind;       /* enum evrt__item_kind */
  uint8_t phase;      /* per-kind progress (delay armed, wait registered) */
  uint8_t dep_kind;   /* waits */
  uint8_t failed;     /* wait ended by timeout or peer loss */
  int32_t timer_idx;  /* index in the timer heap, -1 if not armed */
  union {
    struct { evrt_host_fn fn; void *user; } host;
    struct { void *dst; const void *src; size_t n; int value; } mem;
    struct { uint64_t ns; } delay;
    struct {
      /* waits: the bound generation (first line: read by notify) */
      struct evrt__stream *src;
      uint64_t target;
      struct evrt__item *wnext; /* link in src->waiters or ev->nr_waiters */
      atomic_bool unlinked;     /* taken off src->waiters by the notifier */
      uint32_t ev_gen;
      struct evrt__event *ev;
      uint64_t rec_no;
      uint64_t ev_id;
      struct evrt__ipc_map *ipc; /* interprocess record/wait (gen = target) */
    } ev;
    /* graph items (src/graph_exec.c): a launch, or a lane's run of nodes.
     * A launch first waits for the previous launch's end as a stream wait
     * does: its first fields are u.ev's (a common initial sequence: the
     * waiter lists of src/cpu/wait.c read them as u.ev). */
    struct {
      struct evrt__stream *src;
      uint64_t target;
      struct evrt__item *wnext;
      atomic_bool unlinked;
      struct evrt__gexec *x;
      void *binds;   /* launch: its event bindings */
      uint64_t n;    /* launch number */
      uint32_t lane, op;
    } graph;
    /* a host function that may fail (src/failure.c) */
    struct {
      evrt_host_fn_status fn;
      void *user;
      uint64_t thread; /* evrt_thread_id() of the enqueuing thread */
    } task;
    /* stream-ordered values (src/value.c) */
    struct {
      _Atomic(uint64_t) *addr;
      uint64_t value;
      uint32_t flags;          /* EVRT_VALUE_WAIT_* (waits), 0 (writes) */
      struct evrt__item *vnext; /* link in its bucket while parked */
      uint64_t poll_ns;         /* EVRT_VALUE_WAIT_POLL: next poll period */
      uint64_t end;             /* timeout (ns, CLOCK_MONOTONIC), 0 none */
    } val;
  } u;
  struct evrt__item *next;            /* recycle lists */
  uint64_t deadline;  /* delay / wait-timeout deadline (ns), 0 none */
  uint64_t t_start;   /* when the worker first reached it (traces), 0 */
  char label[24];
  void *check; /* EVRT_CHECK: struct evrt__citem (src/check) */
};

#endif
