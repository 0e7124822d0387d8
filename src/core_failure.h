/*
 * core_failure.h - failed host tasks, stop-on-failure and the error a
 * stream reports (src/failure.c).  err_seq is released by the worker after
 * the record is filled and read with acquire; the record itself is under
 * the stream's flock (a leaf).
 */
#ifndef EVRT_CORE_FAILURE_H
#define EVRT_CORE_FAILURE_H

#include "core_stream.h"


/* ------------------------------------------------------------ failures */
/* src/failure.c.  The thread's last enqueued task (evrt_thread_last_task),
 * stored by every enqueue (stream.c). */
extern EVRT_TLS uint64_t evrt__tls_last_stream_id;
extern EVRT_TLS uint64_t evrt__tls_last_seq;
/* The worker is about to run `it` on s: true if it must be skipped instead
 * (aborted, or s stopped on a failure).  The test is inline (two loads of
 * lines the worker owns); the rest is out of line. */
bool evrt__skip_slow(struct evrt__stream *s, struct evrt__item *it);
static inline bool evrt__skip(struct evrt__stream *s, struct evrt__item *it) {
  /* relaxed: set before the resume (or the enqueue) that makes the worker
   * look at the item, whose release/acquire orders them */
  if (EVRT_LIKELY(atomic_load_explicit(&s->abort_seq, memory_order_relaxed) <
                      it->seq &&
                  !atomic_load_explicit(&s->skipping, memory_order_relaxed)))
    return false;
  return evrt__skip_slow(s, it);
}
/* A host task returned code != 0 (the worker, after it ran). */
void evrt__task_failed(struct evrt__stream *s, struct evrt__item *it,
                       int32_t code);
/* What evrt_host_func_cancelled answered non-zero on this thread, while it
 * runs a host function (0 otherwise); the worker reads it after the
 * function returns. */
extern EVRT_TLS int evrt__tls_cancelled;
/* The host function `it` returned after seeing its cancellation (the
 * worker, after it ran): record it as killed unless an error is pending,
 * and clear evrt__tls_cancelled. */
void evrt__task_killed(struct evrt__stream *s, struct evrt__item *it);
/* A fresh stream incarnation: no error, continue mode. */
void evrt__failure_reset(struct evrt__stream *s);
/* The error pending on s for work up to target, reported as a failing
 * status with its detail (TLS, evrt_last_task_failure); EVRT_SUCCESS if
 * none.  Any thread. */
evrt_status_t evrt__stream_error(struct evrt__stream *s, uint64_t target);
static inline evrt_status_t evrt__error_check(struct evrt__stream *s,
                                              uint64_t target) {
  /* acquire: pairs with the worker's release of err_seq after filling the
   * record (the record itself is read under flock) */
  uint64_t e = atomic_load_explicit(&s->err_seq, memory_order_acquire);
  if (EVRT_LIKELY(e == 0 || e > target))
    return EVRT_SUCCESS;
  return evrt__stream_error(s, target);
}

#endif
