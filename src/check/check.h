/*
 * check.h - EVRT_CHECK, the synchronization checker (docs/check.md).
 *
 * The core calls the hooks below behind `if (EVRT_UNLIKELY(evrt__check_on))`
 * (one load of a global that never changes after init and a predictable
 * branch); with EVRT_NO_CHECK defined evrt__check_on is the constant false
 * and the hooks compile out (the bench's A/B copy, bench/check_off.c).
 *
 * Model (happens-before, computed independently of timing):
 *  - actors: every host thread and every stream incarnation, each with a
 *    vector clock (vc.c).  A stream's own clock is the seq of the item it
 *    executes, so an access by item k of stream s is the epoch (s, k).
 *  - an enqueue carries the enqueuing thread's clock (a host function's
 *    thread enqueues in its stream's clock); the stream joins it when the
 *    item begins (item_begin, on the worker, in stream order).
 *  - a record makes a generation whose clock is the stream's clock after
 *    the item it targets (captured when that item ends: pending until then)
 *    joined with the recording thread's clock; a wait joins it when the
 *    waiting stream passes the wait (item_end), whenever it was bound.  A
 *    wait on a stream position that no event names (graph replay, device
 *    host functions) gets such a generation of its own.
 *  - a completed synchronize, a query that returned complete and a device
 *    synchronize join what they observed into the calling thread.
 *  - accesses are checked against interval shadow memory (shadow.c).
 *
 * Locks (all leaves of the core's order; taken with no check lock held
 * except where said): cstream.lock (spin), cevent.lock (spin) ->
 * cstream.lock, shadow lock (mutex, shadow.c), report lock (report.c).
 * Hooks may be called under an event lock or a stream's plock where said;
 * they never call back into the core's locking functions except
 * evrt__event_lock in deadlock.c, with no check lock held.
 */
#ifndef EVRT_CHECK_H
#define EVRT_CHECK_H

#include "evrt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef EVRT_NO_CHECK
#define evrt__check_on false
#else
/* Set once by evrt__check_init (init lock held, before the library state
 * is published with release), never changed: a plain read is race-free. */
extern bool evrt__check_on;
#endif

struct evrt__stream;
struct evrt__item;
struct evrt__event;

/* ------------------------------------------------------------- hooks */
/* init.c, under the init lock, before any stream exists: reads EVRT_CHECK,
 * EVRT_CHECK_EXITCODE, EVRT_CHECK_REPORT and registers the exit report. */
void evrt__check_init(void);
/* stream.c: a new incarnation of a stream slot (evrt__stream_new). */
void evrt__check_stream_new(struct evrt__stream *s);
/* stream.c: the item about to be linked on s (no lock held): its check
 * record (enqueuer's clock, call site), stored in it->check. */
void *evrt__check_enqueue(struct evrt__stream *s, const struct evrt__item *it);
/* graph_exec.c, on the worker of stream `by` running a graph launch: the
 * check record of an item it puts on lane stream s, carrying by's clock
 * (as an enqueue by a host function of `by` would). */
void *evrt__check_enqueue_by(struct evrt__stream *by, struct evrt__stream *s,
                             const struct evrt__item *it);
/* graph_exec.c, on the worker that owns s: s learns the clock of src after
 * its item target, which has ended (a launch after the previous one's
 * end). */
void evrt__check_join_after(struct evrt__stream *s, struct evrt__stream *src,
                            uint64_t target);
/* capture.c: the call site of a work item captured as a graph node (kept in
 * the node); graph_exec.c: the check record of a replayed node, with that
 * site (reports name where the node was captured), run by the lane item
 * whose check record is seg (reports name the launch it belongs to: the
 * evrt_graph_launch call and its stream). */
uint32_t evrt__check_node_site(void);
void *evrt__check_node(uint32_t site, const void *seg);
/* stream.c: the enqueue failed after evrt__check_enqueue (NULL is fine). */
void evrt__check_discard(void *check);
/* stream.c: the stream was named (for reports). */
/* (id: the incarnation named; a name for another one is ignored) */
void evrt__check_stream_name(struct evrt__stream *s, uint64_t id,
                             const char *name);
/* exec.c, the worker that owns s: before an item runs (again, for a parked
 * item), after it completed, and when it parks. */
void evrt__check_item_begin(struct evrt__stream *s, struct evrt__item *it);
void evrt__check_item_end(struct evrt__stream *s, struct evrt__item *it);
void evrt__check_item_parked(struct evrt__stream *s, struct evrt__item *it);
/* event.c and ipc_proto.c (under the event lock, or after it with the id
 * read under it): a record of event ev_id's generation rec_no targeting
 * (s, target). */
void evrt__check_record(uint64_t ev_id, struct evrt__stream *s,
                        uint64_t rec_no, uint64_t target);
/* event.c, under the event lock: a wait satisfied at the call on an idle
 * stream (no item): the stream's later items are ordered after it. */
void evrt__check_wait_skipped(struct evrt__stream *s, struct evrt__event *e,
                              uint64_t rec_no);
/* The calling thread observed completion (no lock held): a stream up to
 * target (query, synchronize), the latest generation of an event (query,
 * synchronize), every stream of a device (device synchronize). */
void evrt__check_observe_stream(struct evrt__stream *s, uint64_t target);
void evrt__check_observe_event(struct evrt__event *e);
void evrt__check_observe_device(int device);
/* evrt_check_unobserved_begin (delta 1) / _end (delta -1) of the calling
 * thread; false for an end without a begin (nothing changed). */
bool evrt__check_unobserved(int delta);
/* An interprocess event's query or synchronize returned st: on success the
 * generation recorded in this process, if any, is observed.  Returns st. */
evrt_status_t evrt__check_ipc_observed(struct evrt__event *e, evrt_status_t st);
/* evrt_check_release / evrt_check_acquire, and value.c's host write
 * (evrt_value_write64 releases its word: a stream's value wait on it
 * acquires it when it passes). */
void evrt__check_release(const void *key);
void evrt__check_acquire(const void *key);
/* evrt_check_forget: drop key's clock (its object is gone). */
void evrt__check_forget(const void *key);
/* wait.c: a host thread about to block until s->done_seq >= target: waits
 * in slices and returns EVRT_ERROR_DEADLOCK if the streams it waits for
 * are in a cycle of waits (deadlock.c). */
evrt_status_t evrt__check_wait_seq(struct evrt__stream *s, uint64_t target,
                         int64_t timeout_ns, bool blocking);
/* Set while evrt__check_wait_seq runs on this thread: 1, or 2 when the
 * caller's wait is untimed (wait.c then registers a host function's
 * blocked wait for the other host functions' self-deadlock detection, as
 * for an untimed wait). */
extern _Thread_local int evrt__check_tls_waiting;

#endif
