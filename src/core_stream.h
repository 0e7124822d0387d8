/*
 * core_stream.h - the stream object and the core's stream calls
 * (src/stream.c).  Locks: plock (producers; before the backend's pool
 * lock), wlock (bit 63 of wake_at, a leaf), flock (a leaf).  done_seq only
 * grows and is the Dekker pair with wake_at (see internal.h's summary and
 * each field's comment).
 */
#ifndef EVRT_CORE_STREAM_H
#define EVRT_CORE_STREAM_H

#include "core_handle.h"
#include "core_item.h"
#include "core_spin.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- streams */
/* The scheduling state word (stream.state) belongs to the backend: the cpu
 * backend's states and transitions are in src/cpu/cpu.h. */

/*
 * A stream's queue is a singly linked list with a stub node.  Producers link
 * at the tail under plock (a lock among producers only: the worker never
 * takes it); the worker that owns the stream follows head->qnext without any
 * lock.  Ownership moves with the state word: a producer that finds the
 * stream IDLE CASes it to QUEUED and pushes it to the run queue; the worker
 * gives it up by storing IDLE or PARKED and then re-checking (see exec.c).
 */
/* One cache line per party (slots are 64-byte aligned, handle.c): line 0
 * is written by producers, line 1 by the owning worker and by whoever queues
 * the stream, line 2 at completion; a fan-out that resumes thousands of
 * streams touches lines 1 and 2 of each, a producer streaming items into a
 * running stream never shares a written line with its worker. */
struct evrt__stream {
  struct evrt__obj hdr;
  /* --- producers, under plock */
  evrt__spin_t plock;
  /* Callers that validated the handle under plock and will push without
   * it (evrt__stream_pin): destroy waits for them to leave.  Written
   * under plock; read by destroy after the kill. */
  atomic_uint pins;
  struct evrt__item *tail;  /* last linked item, or &stub */
  struct evrt__item *pfree; /* recycled items ready for reuse */
  /* Stored seq_cst after linking (Dekker pair with the worker going idle,
   * which stores the state and then reads it); read with acquire by
   * record's idle check. */
  atomic_uint_least64_t enq_seq;
  /* Finished items handed back by the worker, taken whole by a producer. */
  _Atomic(struct evrt__item *) returned;
  /* The capture the stream takes part in, or NULL (src/capture.c).  On the
   * producers' line: enqueue tests it where it reads the handle word. */
  _Atomic(struct evrt__capture *) capture;
  /* --- scheduling */
  /* Owned by the backend (cpu: src/cpu/cpu.h, EVRT__ST / EVRT__INC /
   * EVRT__RESUME).  The incarnation grows at
   * every evrt__stream_new, so a CAS made by a thread that last saw an
   * earlier incarnation of the slot fails (no ABA across a free). */
  _Alignas(64) atomic_uint state;
  atomic_bool destroyed;
  /* Stop-on-failure (src/failure.c): set by the worker when a task fails
   * in EVRT_FAILURE_STOP mode, cleared when the error is cleared; while set
   * the worker skips the stream's tasks. */
  atomic_bool skipping;
  atomic_uchar fail_stop; /* EVRT_FAILURE_STOP */
  int priority; /* its sign picks the run-queue ring (pool.c) */
  /* --- the worker that owns the stream */
  /* (16 bits: at most EVRT__RETURN_BATCH + 1 and EVRT__RETURN_CAP plus a
   * batch, exec.c; small, so that the blocked-on record fits this line) */
  uint16_t n_done_local;
  uint16_t n_returned; /* items this owner put in `returned` (an estimate) */
  struct evrt__item *head; /* last consumed item (or &stub) */
  struct evrt__item *done_local;
  struct evrt__item *done_local_tail;
  /* What the stream is blocked on, for the self-deadlock detection of host
   * functions (wait.c): its item at seq blk_at cannot complete before
   * stream blk_src reaches blk_target.  Written (release) by the thread
   * that owns the stream: its worker when a wait without timeout
   * registers, a host function of it blocking in a synchronize.  Valid
   * only while done_seq + 1 == blk_at, so it never needs clearing when
   * the stream moves on (a host function's is cleared when its wait
   * ends: the function runs on). */
  _Atomic(struct evrt__stream *) blk_src;
  atomic_uint_least64_t blk_at;
  atomic_uint_least64_t blk_target;
  /* --- completion */
  _Alignas(64) atomic_uint_least64_t done_seq;
  /* Smallest target of any registered waiter (EVRT__WAKE_NONE: none); the
   * worker calls evrt__stream_notify only when done_seq reaches it, so a
   * host parked on a far target costs no wake-up per completion.  Bit 63
   * (EVRT__WLOCK) is the lock of the waiter lists below, "wlock": a
   * registrar takes it and lowers the target in one CAS (wait.c). */
  atomic_uint_least64_t wake_at;
  /* Parked wait items bound to this stream, in registration order (a
   * fan-out resumes its streams in the order they waited). */
  struct evrt__item *waiters, *waiters_tail;
  struct evrt__hwaiter *hwaiters; /* host threads parked in a wait (wait.c) */
  atomic_uint_least64_t wait_failures;
  /* Failures (src/failure.c).  err_seq: the task whose error is pending (0:
   * none), read with done_seq by queries and synchronizes (same line);
   * abort_seq: tasks up to it that have not started are skipped (the
   * worker loads it before each item, a hit in this line it writes). */
  atomic_uint_least64_t err_seq;
  atomic_uint_least64_t abort_seq;
  /* stop_seq: the task evrt_stream_stop asked to end (it and earlier ones
   * see evrt_host_func_cancelled; later ones run as usual). */
  atomic_uint_least64_t stop_seq;
  /* abort_head: the head task when the last abort looked; a host function
   * there counts as running: it runs and is asked to end, not discarded
   * (written before abort_seq's raise, read after its acquire). */
  atomic_uint_least64_t abort_head;
  /* --- identity */
  /* Atomic because evrt_device_synchronize reads it on slots that may be
   * mid-reuse (a destroyed stream still draining, device.c); everyone else
   * reads it on a stream they hold (a plain mov on x86 either way). */
  _Alignas(64) atomic_int device;
  bool is_default;
  /* The trace's name table may hold an entry of this incarnation's id
   * (created while tracing, or named): destroy removes it.  Written before
   * the publish or under plock with the handle live; read by destroy under
   * plock. */
  bool named;
  /* Atomic: error and trace paths read it on a handle that a destroy and
   * a create may be recycling meanwhile (a plain mov on x86). */
  atomic_uint_least64_t id;
  char name[64];
  /* The pending error's detail (under flock, a leaf; err_seq says whether
   * there is one). */
  evrt__spin_t flock;
  struct evrt__failrec {
    evrt_status_t status; /* EVRT_ERROR_TASK_FAILED or EVRT_ERROR_ABORTED */
    int32_t code;
    uint64_t seq, thread;
    evrt_host_fn_status fn;
    void *user;
  } fail;
  /* EVRT_CHECK: one per slot, set before the first publish (src/check) */
  _Atomic(struct evrt__cstream *) check;
  struct evrt__item stub;
};


extern struct evrt__table evrt__streams;
extern EVRT_TLS struct evrt__stream *evrt__tls_stream; /* host fn running */
extern EVRT_TLS uint64_t evrt__tls_seq;                /* its seq */

static inline struct evrt__stream *evrt__stream_get(evrt_stream_t h) {
  /* the slot size is a constant: a shift, not a multiply */
  return (struct evrt__stream *)evrt__table_lookup_sized(
      &evrt__streams, (uintptr_t)h, EVRT__SLOT_SIZE(struct evrt__stream));
}
static inline evrt_stream_t evrt__stream_handle(struct evrt__stream *s) {
  return (evrt_stream_t)evrt__handle_of(&evrt__streams, &s->hdr);
}

/* src/device.c: the stream a NULL handle names (below). */
struct evrt__stream *evrt__stream_null_default(void);
/* src/stream.c: the failure of a non-NULL handle that is no live stream. */
evrt_status_t evrt__stream_arg_invalid(evrt_stream_t h);

/* The stream argument of a public call, the one lookup every stream-taking
 * entry point uses (evrt.h, Conventions): a live handle gives its stream; a
 * NULL handle the calling thread's current device's default stream, and *h
 * is rewritten to that stream's handle, so the call's later checks of the
 * handle (evrt__stream_is, under plock) compare with the stream it acts on;
 * any other handle is EVRT_ERROR_INVALID_HANDLE.  The library must be ready
 * (evrt__ready).  Inlined: the live-handle path is one table lookup. */
static inline __attribute__((always_inline)) evrt_status_t
evrt__stream_arg(evrt_stream_t *h, struct evrt__stream **out) {
  struct evrt__stream *s = evrt__stream_get(*h);
  if (EVRT_UNLIKELY(!s)) {
    if (*h)
      return evrt__stream_arg_invalid(*h);
    s = evrt__stream_null_default();
    *h = evrt__stream_handle(s);
  }
  *out = s;
  return EVRT_SUCCESS;
}
#define EVRT__WLOCK (1ull << 63)
#define EVRT__WAKE_NONE (EVRT__WLOCK - 1)
/* The smallest registered target (wake_at without its lock bit). */
static inline uint64_t evrt__wake_target(struct evrt__stream *s,
                                         memory_order mo) {
  return atomic_load_explicit(&s->wake_at, mo) & ~EVRT__WLOCK;
}
static inline uint64_t evrt__done(struct evrt__stream *s) {
  return atomic_load_explicit(&s->done_seq, memory_order_acquire);
}

/* Is h the live incarnation of s?  Under plock this is exact (destroy
 * kills the handle under plock); elsewhere it is true at the moment of the
 * load.  Relaxed: callers order it (plock, or an acquire load before it). */
static inline bool evrt__stream_is(struct evrt__stream *s, evrt_stream_t h) {
  return atomic_load_explicit(&s->hdr.hw, memory_order_relaxed) ==
         evrt__raw((uintptr_t)h);
}

/* src/stream.c */
evrt_status_t evrt__stream_new(int device, int priority, bool is_default,
                               struct evrt__stream **out);
/* Allocate an item for s (from its recycle list or malloc) or NULL.  Safe
 * on any incarnation of the slot, dead ones included (the recycle lists
 * are only touched under plock, and items are interchangeable). */
struct evrt__item *evrt__item_new(struct evrt__stream *s);
/* The same from the recycle lists only (no malloc: callable under a spin
 * lock), or NULL. */
struct evrt__item *evrt__item_take(struct evrt__stream *s);
void evrt__item_discard(struct evrt__stream *s, struct evrt__item *it);
/* Free a ->next-linked list of items. */
void evrt__items_free(struct evrt__item *list);
/* Link a filled item if h is still s's live handle (checked under plock,
 * where destroy kills it): its seq; 0 if the stream was destroyed (nothing
 * linked: the caller still owns the item).  A call racing the destroy thus
 * either links before the destroy looks at enq_seq, and its item runs, or
 * links nothing.  The caller then calls evrt__stream_schedule once it holds
 * no spin lock (scheduling may take the pool mutex and wake a worker). */
uint64_t evrt__stream_link_live(struct evrt__stream *s, evrt_stream_t h,
                                struct evrt__item *it);
/* Make s runnable if it is idle with linked work (after a link, no spin
 * lock held; a no-op if nothing is pending). */
void evrt__stream_schedule(struct evrt__stream *s);
/* Hold s alive across a section that pushes with evrt__stream_push without
 * a handle (src/ipc.c): false if h is no longer s's live handle.  Destroy
 * waits for every pin to go (the sections are short and run no user
 * code). */
bool evrt__stream_pin(struct evrt__stream *s, evrt_stream_t h);
void evrt__stream_unpin(struct evrt__stream *s);
/* Link a filled item to a stream the caller has pinned (or that nobody
 * else can name: device_after.c's hidden stream); its seq.  Not scheduled:
 * the caller calls evrt__stream_schedule after its section (src/ipc_proto.c
 * pushes under an event lock). */
uint64_t evrt__stream_push(struct evrt__stream *s, struct evrt__item *it);
/* Append n filled items in order, in one producer-lock round trip (a
 * graph lane's items); returns the seq of the first. */
uint64_t evrt__stream_push_chain(struct evrt__stream *s,
                                 struct evrt__item **v, uint32_t n);
/* Allocate up to n items for s (recycled first); returns how many. */
uint32_t evrt__items_new(struct evrt__stream *s, struct evrt__item **v,
                         uint32_t n);
/* Enqueue a copy of the filled template (kind, union, flags) on s, if h is
 * still its live handle (checked under plock, as every push). */
evrt_status_t evrt__enqueue(struct evrt__stream *s, evrt_stream_t h,
                           const struct evrt__item *tmpl);
/* Free a drained, destroyed stream (called by the worker). */
void evrt__stream_free(struct evrt__stream *s);

#endif
