/*
 * streams.c - the cpu backend's stream hooks (src/backend.h): a new
 * incarnation, its release, the destroy hand-over and submit.  They are the
 * producer side of the state word's transitions (cpu.h has the table):
 * submit takes IDLE -> QUEUED, the destroy takes IDLE -> DEAD.
 *
 * Lock order: none nested (the pool mutex is taken by evrt__pool_push
 * with no other lock held).
 */
#include "cpu.h"

evrt_status_t evrt__cpu_stream_init(struct evrt__stream *s) {
  /* The creating thread owns the dead slot until the handle is
   * published; a thread that last saw an earlier incarnation fails its
   * CAS on the new incarnation number. */
  evrt__st_new_incarnation(s);
  evrt__stream_waiters_reset(s);
  return evrt__pool_reserve(s);
}

void evrt__cpu_stream_release(struct evrt__stream *s) {
  /* The caller won the CAS to DEAD: nobody runs or schedules the stream.
   * Its worker may have let it go idle unsettled (exec.c) and not yet
   * notified its waiters: do it now, before a new incarnation of the slot
   * empties the waiter lists (waiters lost that way hung evrt-stress under
   * ASan).  Drained, so every registered target is reached. */
  evrt__stream_notify(s, evrt__done(s));
  evrt__pool_unreserve(s);
}

/* After linking, with plock released (and no other spin lock held: this
 * may take the pool mutex and wake a worker): make an idle stream
 * runnable.  The producer's half of the Dekker pair of stream.c's top
 * comment: enq_seq was stored seq_cst before this seq_cst load. */
void evrt__cpu_submit(struct evrt__stream *s) {
  EVRT__SCHED_POINT(EVRT__SP_SUBMIT, s); /* white-box build only */
  if (evrt__st_try_queue_idle(s))
    evrt__pool_push(s);
}

void evrt__cpu_stream_destroyed(struct evrt__stream *s) {
  /* Until `destroyed` is set nobody frees the stream, so this is the
   * incarnation being destroyed.  Once it is set, the worker that drains the
   * stream may free it and a create may reuse the slot: the CAS below must
   * match this incarnation only. */
  unsigned w0 = atomic_load_explicit(&s->state, memory_order_relaxed);
  /* seq_cst: the Dekker pair with the worker going idle, which stores IDLE
   * and then reads `destroyed`.  Whoever wins the CAS to DEAD frees it;
   * otherwise the worker that drains it does (exec.c). */
  atomic_store_explicit(&s->destroyed, true, memory_order_seq_cst);
  /* IDLE with work still linked means the worker has just given it up and
   * is about to take it back (it re-reads enq_seq after storing IDLE):
   * leave the stream to it, or its last items would be lost. */
  if (evrt__st_try_kill_idle(s, w0))
    evrt__stream_free(s);
}
