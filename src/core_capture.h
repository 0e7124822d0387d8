/*
 * core_capture.h - the hooks of stream capture and graphs (src/capture.c,
 * src/graph.c, src/graph_exec.c) that the core calls, and the event
 * publish they use.  Each hook is reached only on an unlikely branch; the
 * active count and a stream's capture field are relaxed hints, the hooks
 * lock (docs/capture.md).
 */
#ifndef EVRT_CORE_CAPTURE_H
#define EVRT_CORE_CAPTURE_H

#include "core_stream.h"
#include "core_event.h"


/* ------------------------------------------------------------- capture */
/* src/capture.c, src/graph.c, src/graph_exec.c; docs/capture.md.  The core
 * calls these hooks only on their unlikely branch: a stream whose capture
 * field is set, a generation naming evrt__capture_src, or (synchronize)
 * some capture active.  Each returns true when it handled the call (its
 * status in *st); false sends the caller on its ordinary path (the capture
 * ended meanwhile).  They take no lock the caller holds. */
struct evrt__capture;
struct evrt__gexec;
/* The source of every captured generation: an event recorded on a
 * capturing stream has src == &evrt__capture_src (never done, nothing ever
 * runs on it) and target == the capture's id. */
extern struct evrt__stream evrt__capture_src;
/* Active captures, all modes (relaxed: a hint; the hooks lock). */
extern atomic_uint evrt__captures_active;
static inline bool evrt__stream_capturing(struct evrt__stream *s) {
  return atomic_load_explicit(&s->capture, memory_order_relaxed) != NULL;
}
static inline bool evrt__any_capture(void) {
  return atomic_load_explicit(&evrt__captures_active, memory_order_relaxed);
}
static inline bool evrt__captured_src(uintptr_t src) {
  return src == (uintptr_t)&evrt__capture_src;
}
/* Every hook that names a stream takes the caller's handle of it (h, sh):
 * it acts only if that incarnation is the capture's member, so a stale
 * handle never touches the capture of a stream that reused the slot (the
 * caller's ordinary path then fails it).  A stream joins a capture (begin,
 * fork) under plock with its handle checked there, and destroy reads the
 * capture field under plock before it kills the handle: of a join and a
 * destroy racing, exactly one succeeds. */
/* enqueue of a host function, copy, fill or delay (tmpl: the item) */
bool evrt__capture_item(struct evrt__stream *s, evrt_stream_t h,
                        const struct evrt__item *tmpl, const char *label,
                        evrt_status_t *st);
bool evrt__capture_record(struct evrt__event *e, evrt_event_t eh,
                          struct evrt__stream *s, evrt_stream_t sh,
                          unsigned flags, evrt_status_t *st);
bool evrt__capture_wait(struct evrt__stream *s, evrt_stream_t sh,
                        struct evrt__event *e, evrt_event_t eh, unsigned flags,
                        evrt_status_t *st);
bool evrt__capture_reset(struct evrt__event *e, evrt_event_t eh,
                         struct evrt__stream *s, evrt_stream_t sh,
                         evrt_status_t *st);
/* A stream not capturing waits on a captured generation (capture id, rec_no
 * of the event's incarnation ev_gen): it joins that capture (INVALID_HANDLE
 * and nothing joined if sh died meanwhile). */
evrt_status_t evrt__capture_fork(struct evrt__stream *s, evrt_stream_t sh,
                                 struct evrt__event *e, uint32_t ev_gen,
                                 uint64_t cap_id, uint64_t rec_no);
/* Query of a capturing stream; use of a captured event ("queried",
 * "synchronized", ...): the error, and the capture invalidated. */
evrt_status_t evrt__capture_stream_misuse(struct evrt__stream *s,
                                          evrt_stream_t h, const char *what);
evrt_status_t evrt__capture_event_misuse(struct evrt__event *e,
                                         const char *what);
/* Synchronize calls while some capture is active: the object's own
 * capture, then the interaction modes. */
bool evrt__capture_sync_stream(struct evrt__stream *s, evrt_stream_t h,
                               evrt_status_t *st);
bool evrt__capture_sync_event(struct evrt__event *e, evrt_status_t *st);
bool evrt__capture_sync_device(int device, evrt_status_t *st);
bool evrt__capture_destroy_stream(struct evrt__stream *s, evrt_stream_t h,
                                  evrt_status_t *st);
/* src/graph_exec.c, called by the worker running the item (exec.c), no
 * lock held: a launch expands into its lanes; a run of nodes executes. */
bool evrt__graph_run_launch(struct evrt__stream *s, struct evrt__item *it);
bool evrt__graph_run_seg(struct evrt__stream *s, struct evrt__item *it);
/* src/event.c: publish the generation (s, target) of the incarnation
 * ev_gen of e, as a record on a stream of `device` would, without
 * enqueuing anything: a graph launch's record nodes (target lies ahead on
 * a lane), a record inside a capture (s = &evrt__capture_src).  Takes the
 * event's resource if asked and one is free.  *rec_no gets its number.
 * EVRT_ERROR_INVALID_HANDLE if the incarnation is gone,
 * EVRT_ERROR_DEVICE_MISMATCH; nothing changed then.  Takes the event
 * lock: call with no lock held but a capture's (capture.c's lock order). */
evrt_status_t evrt__event_publish(struct evrt__event *e, uint32_t ev_gen,
                                  struct evrt__stream *s, int device,
                                  uint64_t target, bool take_resource,
                                  uint64_t *rec_no);

#endif
