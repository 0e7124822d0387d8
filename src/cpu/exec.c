/*
 * exec.c - a worker runs one stream: follows its queue, executes items in
 * order, publishes completion, and parks the stream (not the thread) when
 * the head item must wait.
 *
 * Locks: none of its own.  Event locks are taken by the event helpers with
 * no other lock held; host functions run with no lock held.
 *
 * Ownership.  The worker owns a stream from the moment it pops it from the
 * run queue until it stores IDLE, PARKED or QUEUED into its state.  Going
 * idle is the Dekker pair with producers: store IDLE (seq_cst), re-read
 * enq_seq (seq_cst); if an item arrived, CAS IDLE -> RUNNING and go on (or,
 * if the CAS fails, a producer queued the stream and another worker will
 * run it).  Parking and resuming meet in the state word itself: a resumer
 * CASes PARKED -> QUEUED (it now owns the stream), or flags EVRT__RESUME on
 * a RUNNING one; the owner parks with a CAS that fails on that flag and
 * then goes on.  A resume is never lost, and a spurious one only
 * re-evaluates the head item.
 *
 * Unsettled idles.  Publishing a completion (done_seq, then read wake_at)
 * and going idle (state, then read enq_seq) each need a full barrier, the
 * bulk of a one-item stream's cost (a fan-out runs thousands of them).  A
 * stream that runs out of work while other streams are ready goes idle
 * with plain release stores instead and is noted; the worker settles its
 * notes with one seq_cst fence (evrt__exec_settle_slow) before taking more
 * work, before user code, before spinning or parking, and when 16 are
 * noted.  After the fence it does what the barriers would have: notify
 * waiters the registrars' side of the Dekker pair may have missed, take
 * back (QUEUED) a stream that a producer fed meanwhile, and free a stream
 * destroyed meanwhile.  The stream is no longer ours by then, and may even
 * be freed and reused: notify is still right, because seqs only grow
 * across incarnations (a target <= seq is reached in any of them) and the
 * lists are touched under wlock; the other two are CASes that expect the
 * exact word we stored (incarnation included).
 *
 * Inline resumes.  A notify that resumes a stream parked on a plain wait,
 * now satisfied, with nothing behind it (each stream of a fan-out) takes
 * it PARKED -> RUNNING, passes the wait as run_wait would, and lets it go
 * idle unsettled (evrt__exec_resume): no run-queue push and pop, no
 * second worker pulling the stream's lines across, no wake-up.  A full
 * note list is settled there, which notifies again: settles nest, at most
 * three deep (then resumes queue as before).
 */
#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVRT__FAIRNESS_BUDGET 1024
#define EVRT__RETURN_BATCH 32
#define EVRT__RETURN_CAP 256

/* Hand finished items back to producers, or, when producers already have
 * EVRT__RETURN_CAP waiting, have them freed when this worker next idles
 * (bounds the memory a burst leaves). */
static void flush_done(struct evrt__stream *s) {
  struct evrt__item *batch = s->done_local, *tail = s->done_local_tail;
  uint32_t n = s->n_done_local;
  if (!batch)
    return;
  s->done_local = s->done_local_tail = NULL;
  s->n_done_local = 0;
  /* Producers take `returned` whole (exchange with NULL); only the owning
   * worker adds to it.  Keep up to EVRT__RETURN_CAP items there: a burst
   * enqueued ahead of execution then recycles instead of freeing each
   * item on the worker and allocating it again on the host. */
  struct evrt__item *top = atomic_load_explicit(&s->returned,
                                                memory_order_acquire);
  if (!top)
    s->n_returned = 0; /* taken since our last look */
  if (s->n_returned + n <= EVRT__RETURN_CAP) {
    do {
      tail->next = top;
      /* release: producers see the links of the batch */
    } while (!atomic_compare_exchange_weak_explicit(
        &s->returned, &top, batch, memory_order_release,
        memory_order_acquire));
    s->n_returned = top ? s->n_returned + n : n;
    return;
  }
  /* Producers have plenty: free the batch, but not now (a burst enqueued
   * ahead of execution would make every 32nd item of the chain pay 32
   * free() calls): the worker frees it when it next runs out of work. */
  evrt__pool_defer_free(batch, tail, n);
}

/* after_idle's destroyed case, out of line (the idle path stays as it
 * was): every call that linked an item did so before the destroy (plock
 * orders them, src/stream.c), and the caller's acquire of `destroyed`
 * makes their enq_seq visible here.  Without this second look, a producer
 * linking and a destroy both landing between the caller's two loads left
 * an item linked on a freed stream: never run, and enq_seq ahead of
 * done_seq for ever (found by tests/fault/sched_settle_model.c). */
static __attribute__((noinline, cold)) bool
after_idle_destroyed(struct evrt__stream *s, unsigned mine, uint64_t last,
                     int back) {
  if (atomic_load_explicit(&s->enq_seq, memory_order_relaxed) != last)
    return evrt__st_try_retake(s, mine, back);
  if (evrt__st_try_kill_mine(s, mine))
    evrt__stream_free(s);
  return false;
}

/* After storing the IDLE word `mine` with done_seq at `last`, and a full
 * barrier between that store and these loads (mo: seq_cst loads, or
 * relaxed ones after a seq_cst fence): a stream a producer fed meanwhile is
 * taken back into state `back` (true: the caller owns it again); a drained
 * one destroyed meanwhile is freed.  Both are CASes that expect exactly
 * `mine`: they fail if a producer queued the stream (its new owner runs
 * it) or if it changed hands and incarnation since. */
static bool after_idle(struct evrt__stream *s, unsigned mine, uint64_t last,
                       int back, memory_order mo) {
  EVRT__SCHED_POINT(EVRT__SP_IDLE_STORED, s); /* white-box build only */
  if (atomic_load_explicit(&s->enq_seq, mo) != last)
    return evrt__st_try_retake(s, mine, back);
  EVRT__SCHED_POINT(EVRT__SP_IDLE_ENQ_READ, s); /* white-box build only */
  /* acquire at least: see after_idle_destroyed */
  if (EVRT_UNLIKELY(atomic_load_explicit(
          &s->destroyed,
          mo == memory_order_seq_cst ? mo : memory_order_acquire)))
    return after_idle_destroyed(s, mine, last, back);
  return false;
}

#ifdef EVRT_TEST_HOOKS
void (*_Atomic evrt__test_sched_hook)(int, struct evrt__stream *);
#endif

#define EVRT__UNSETTLED_MAX 16
EVRT_TLS int evrt__tls_nunsettled;
struct unsettled {
  struct evrt__stream *s;
  unsigned word; /* the IDLE state word we stored */
  uint64_t seq;  /* done_seq we stored */
};
/* On the heap, allocated by the worker at its first unsettled idle: the
 * library's initial-exec TLS must stay small, or a process cannot dlopen
 * it (or two copies of it) once its static TLS surplus is spent.  NULL
 * (no memory): streams go idle the settled way. */
static EVRT_TLS struct unsettled *tls_unsettled;

static bool have_notes(void) {
  if (EVRT_LIKELY(tls_unsettled != NULL))
    return true;
  tls_unsettled = evrt__malloc(EVRT__UNSETTLED_MAX * sizeof *tls_unsettled);
  return tls_unsettled != NULL;
}

void evrt__exec_thread_exit(void) {
  /* Called under the pool lock, after the worker settled (before its last
   * pop or park): nothing is noted. */
  evrt__free(tls_unsettled);
  tls_unsettled = NULL;
}

static void settle_once(void);
static EVRT_TLS int tls_settle_depth; /* settles in progress (nested) */

void evrt__exec_settle_slow(void) {
  /* Its notifies may pass waits inline (evrt__exec_resume), noting more
   * streams: settle until none is left. */
  while (evrt__tls_nunsettled)
    settle_once();
}

static void settle_once(void) {
  tls_settle_depth++;
  struct unsettled u[EVRT__UNSETTLED_MAX];
  int n = evrt__tls_nunsettled;
  memcpy(u, tls_unsettled, (size_t)n * sizeof u[0]);
  evrt__tls_nunsettled = 0;
  /* The one barrier: our done_seq and state stores before it, the loads of
   * wake_at, enq_seq and destroyed after it (the registrars, producers and
   * destroyers store those seq_cst and then read ours seq_cst). */
  atomic_thread_fence(memory_order_seq_cst);
  struct evrt__stream *again[EVRT__UNSETTLED_MAX];
  int k = 0;
  for (int i = 0; i < n; i++) {
    struct evrt__stream *s = u[i].s;
    if (evrt__wake_target(s, memory_order_relaxed) <= u[i].seq)
      evrt__stream_notify(s, u[i].seq);
    if (after_idle(s, u[i].word, u[i].seq, EVRT__S_QUEUED,
                   memory_order_relaxed))
      again[k++] = s;
  }
  /* Like a resume: the first one runs next on this warm worker. */
  int first = k > 0 && evrt__pool_push_local(again[0]);
  evrt__pool_push_many(again + first, k - first);
  tls_settle_depth--;
}

/* `it`, the item after the head, is done: it becomes the head, and the
 * previous head joins the finished items. */
static inline void retire_head(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__item *prev = s->head;
  s->head = it;
  if (prev != &s->stub) {
    prev->next = NULL;
    if (s->done_local_tail)
      s->done_local_tail->next = prev;
    else
      s->done_local = prev;
    s->done_local_tail = prev;
    s->n_done_local++;
  }
}

static void idle_unsettled(struct evrt__stream *s, uint64_t seq);

bool evrt__exec_resume(struct evrt__stream *s) {
  unsigned w = atomic_load_explicit(&s->state, memory_order_relaxed);
  /* Workers only (a destroy frees a stream, and notifies, on the host's
   * thread, which never settles); no trace events to write (run_wait
   * writes them). */
  if (EVRT__ST(w) != EVRT__S_PARKED || !evrt__pool_on_worker() ||
      EVRT_TRACING() || evrt__check_on || !have_notes())
    return evrt__stream_try_queue(s);
  if (evrt__tls_nunsettled == EVRT__UNSETTLED_MAX) {
    /* Settling notifies, which may come back here: a dependency tree of
     * fan-outs would nest settles as deep as it is.  Allow a few levels,
     * then queue the rest the usual way. */
    if (tls_settle_depth >= 3)
      return evrt__stream_try_queue(s);
    evrt__exec_settle_slow();
  }
  if (!evrt__st_try_take_parked(s, w))
    return evrt__stream_try_queue(s);
  /* Ours now.  A plain stream wait, satisfied, with nothing behind it (a
   * fan-out's streams): pass it here, as run_wait would, and go idle. */
  struct evrt__item *it =
      atomic_load_explicit(&s->head->qnext, memory_order_acquire);
  if (it && it->kind == EVRT__ITEM_WAIT && it->dep_kind == EVRT__DEP_STREAM &&
      it->phase == 1 && !it->deadline && !it->failed && it->u.ev.src &&
      evrt__done(it->u.ev.src) >= it->u.ev.target &&
      atomic_load_explicit(&it->u.ev.unlinked, memory_order_acquire) &&
      !atomic_load_explicit(&it->qnext, memory_order_acquire)) {
    retire_head(s, it);
    idle_unsettled(s, it->seq);
    return false;
  }
  /* Anything else runs on a worker as usual: queue it (a resume flag set
   * meanwhile is moot, whoever runs it looks at the head afresh). */
  evrt__st_requeue(s, memory_order_relaxed);
  return true;
}

/* Out of work with other streams ready: go idle now, settle later. */
static void idle_unsettled(struct evrt__stream *s, uint64_t seq) {
  if (evrt__tls_nunsettled == EVRT__UNSETTLED_MAX)
    evrt__exec_settle_slow();
  /* release: whoever takes the stream next sees its items and done_seq */
  atomic_store_explicit(&s->done_seq, seq, memory_order_release);
  if (s->n_done_local >= EVRT__RETURN_BATCH)
    flush_done(s);
  struct unsettled *u = &tls_unsettled[evrt__tls_nunsettled++];
  u->s = s;
  u->seq = seq;
  /* Last touch of the stream (see give_up: a resume flag dropped here is
   * stale).  Nothing of it is read after this but atomics.  release: the
   * settle's fence orders it before the re-reads. */
  u->word = evrt__st_idle(s, memory_order_release);
}

void evrt__st_violation(const struct evrt__stream *s, unsigned w,
                        const char *transition) {
  fprintf(stderr,
          "evrt: stream state machine violated: transition '%s' on stream "
          "%p found state %u (incarnation %u%s)\n",
          transition, (const void *)s, EVRT__ST(w), EVRT__INC(w),
          (w & EVRT__RESUME) ? ", resume flagged" : "");
  abort();
}

bool evrt__stream_try_queue(struct evrt__stream *s) {
  unsigned w = atomic_load_explicit(&s->state, memory_order_relaxed);
  for (;;) {
    unsigned st = EVRT__ST(w);
    if (st == EVRT__S_PARKED) {
      /* acq_rel: takes ownership (acquire of the parker's release) */
      if (atomic_compare_exchange_weak_explicit(
              &s->state, &w, EVRT__ST_WITH(w, EVRT__S_QUEUED),
              memory_order_acq_rel, memory_order_relaxed))
        return true;
    } else if (st == EVRT__S_RUNNING && !(w & EVRT__RESUME)) {
      /* Its owner may be about to park: flag the resume in the same word,
       * so its parking CAS fails and it looks at the head again. */
      if (atomic_compare_exchange_weak_explicit(&s->state, &w,
                                                w | EVRT__RESUME,
                                                memory_order_release,
                                                memory_order_relaxed))
        return false;
    } else {
      /* Flagged already, or queued / idle / dead: whoever runs it next
       * evaluates the head item afresh. */
      return false;
    }
  }
}

void evrt__cpu_stream_resume(struct evrt__stream *s) {
  if (evrt__stream_try_queue(s) && !evrt__pool_push_local(s))
    evrt__pool_push(s);
}

/* Wait item at the head: true when the stream may pass it. */
static bool run_wait(struct evrt__stream *s, struct evrt__item *it) {
  if (it->dep_kind == EVRT__DEP_NEXT_RECORD) {
    /* phase 0: first look; phase 2: queued on the event, resumed by a record
     * or destroy (or spuriously: then still queued). */
    if (!evrt__event_bind_next_record(it, it->phase == 0)) {
      it->phase = 2;
      return false;
    }
    it->phase = 0;
    it->dep_kind = EVRT__DEP_STREAM;
    if (it->u.ev.src && EVRT_TRACING())
      evrt__trace_wait_bind(s->device, s->id, it->u.ev.ev_id, it->u.ev.rec_no,
                            evrt__now_ns());
  }
  bool ok;
  if (it->dep_kind == EVRT__DEP_IPC) {
    /* phase 1: put on the watcher's list (the watcher may have taken it off
     * since, when it saw the generation end).  A resume after watching
     * checks the recorder's liveness too. */
    evrt_status_t err = EVRT_SUCCESS;
    ok = evrt__ipc_dep_ready(it, it->phase == 1, &err);
    if (!ok && err != EVRT_SUCCESS) {
      it->failed = 1;
      ok = true;
    }
    if (!ok && it->phase == 0)
      evrt__exec_settle(); /* before spinning */
    if (!ok && it->phase == 0 && evrt__pool_spin_enter()) {
      /* Before handing the wait to the watcher thread (a futex wake-up of
       * it, then of a worker: two ~30 us hand-offs here), spin briefly on
       * the shared word, as the pool's only spinner and only while no other
       * stream is ready: a peer that answers quickly (a ping-pong) then
       * costs a cache-line transfer, not a wake-up. */
      struct evrt__spin_for w =
          evrt__spin_for_start(evrt__now_ns(), 16 * evrt__spin_budget_ns());
      while (!evrt__pool_has_ready()) {
        if (evrt__ipc_dep_ready(it, false, &err)) {
          ok = true;
          break;
        }
        if (!evrt__spin_for_more(&w))
          break;
      }
      evrt__pool_spin_leave();
    }
    if (it->phase == 1) {
      evrt__ipc_unwatch(it);
      it->phase = 0;
    }
    if (!ok) {
      if (evrt__ipc_watch(it) != EVRT_SUCCESS) {
        it->failed = 1; /* no watcher thread: cannot wait */
        ok = true;
      } else {
        it->phase = 1;
        if (it->deadline && !it->failed) {
          /* (re)arm: harmless if still armed, evrt__timer_arm checks */
          if (evrt__timer_arm(it) != EVRT_SUCCESS)
            it->deadline = 0;
        }
      }
    }
  } else {
    ok = !it->u.ev.src || evrt__done(it->u.ev.src) >= it->u.ev.target;
    if (!ok && it->phase == 0) {
      if (!evrt__stream_add_waiter(it)) {
        ok = true;
      } else {
        it->phase = 1;
        if (it->deadline && evrt__timer_arm(it) != EVRT_SUCCESS)
          it->deadline = 0; /* no timer memory: wait without timeout */
        /* For host functions' self-deadlock detection (wait.c): this
         * stream is stuck here until src reaches target (a wait with a
         * timeout is not: it ends by itself). */
        if (!it->deadline)
          evrt__stream_blocked_on(s, it->u.ev.src, it->u.ev.target, it->seq);
      }
    } else if (ok && it->phase == 1) {
      /* acquire: pairs with the notifier's release after unlinking */
      if (!atomic_load_explicit(&it->u.ev.unlinked, memory_order_acquire))
        evrt__stream_remove_waiter(it);
    }
  }
  if (!ok && it->deadline && evrt__now_ns() >= it->deadline) {
    if (it->dep_kind == EVRT__DEP_IPC) {
      evrt__ipc_unwatch(it);
      it->phase = 0;
    } else {
      evrt__stream_remove_waiter(it);
    }
    it->failed = 1;
    ok = true;
  }
  if (!ok)
    return false;
  if (it->dep_kind == EVRT__DEP_IPC)
    evrt__ipc_wait_done(it);
  /* timer_idx is written by the timer thread under its lock: let
   * evrt__timer_cancel look at it there. */
  if (it->deadline)
    evrt__timer_cancel(it);
  if (it->failed)
    atomic_fetch_add_explicit(&s->wait_failures, 1, memory_order_relaxed);
  if (EVRT_TRACING() && it->u.ev.src)
    evrt__trace_wait_resume(s->device, s->id, it->u.ev.ev_id, it->u.ev.rec_no,
                            evrt__now_ns());
  return true;
}

/* After a host function of s returned (both kinds): the worker no longer
 * runs work of s; a function that saw its cancellation was killed; and,
 * since host functions stand for kernels, what they stored may satisfy a
 * parked value wait (src/value.c). */
static inline void host_fn_done(struct evrt__stream *s, struct evrt__item *it) {
  evrt__tls_stream = NULL;
  if (EVRT_UNLIKELY(evrt__tls_cancelled))
    evrt__task_killed(s, it); /* it saw evrt_host_func_cancelled */
  if (EVRT_UNLIKELY(atomic_load_explicit(&evrt__value_armed,
                                         memory_order_relaxed)))
    evrt__value_kick();
}

/* Execute the head item; false if the stream must park.  The graph
 * executor runs each node of a lane through it too (graph_exec.c). */
bool evrt__exec_run_item(struct evrt__stream *s, struct evrt__item *it) {
  /* Aborted, or stopped on a failure (src/failure.c): complete it without
   * running it. */
  if (EVRT_UNLIKELY(evrt__skip(s, it)))
    return true;
  if (EVRT_UNLIKELY(evrt__check_on))
    evrt__check_item_begin(s, it); /* its clock, its copy's accesses */
  switch (it->kind) {
  case EVRT__ITEM_HOST_FUNC:
    evrt__pool_flush_local(); /* user code may block: don't hold a stream */
    evrt__tls_stream = s;
    evrt__tls_seq = it->seq - 1;
    it->u.host.fn(it->u.host.user);
    host_fn_done(s, it);
    return true;
  case EVRT__ITEM_HOST_TASK: {
    evrt__pool_flush_local();
    evrt__tls_stream = s;
    evrt__tls_seq = it->seq - 1;
    int32_t rc = it->u.task.fn(it->u.task.user);
    if (EVRT_UNLIKELY(rc != 0))
      evrt__task_failed(s, it, rc); /* callbacks run as its host function */
    host_fn_done(s, it);
    return true;
  }
  case EVRT__ITEM_MEMCPY:
    if (it->u.mem.n > 65536)
      evrt__pool_flush_local();
    if (it->u.mem.n)
      evrt__backend->copy(s->device, it->u.mem.dst, it->u.mem.src,
                          it->u.mem.n, EVRT__COPY_DEFAULT);
    if (EVRT_UNLIKELY(atomic_load_explicit(&evrt__value_armed,
                                           memory_order_relaxed)))
      evrt__value_written(it->u.mem.dst, it->u.mem.n);
    return true;
  case EVRT__ITEM_MEMSET:
    if (it->u.mem.n > 65536)
      evrt__pool_flush_local();
    if (it->u.mem.n)
      evrt__backend->fill(s->device, it->u.mem.dst, it->u.mem.value,
                          it->u.mem.n);
    if (EVRT_UNLIKELY(atomic_load_explicit(&evrt__value_armed,
                                           memory_order_relaxed)))
      evrt__value_written(it->u.mem.dst, it->u.mem.n);
    return true;
  case EVRT__ITEM_VALUE_WAIT:
    return evrt__value_exec_wait(s, it);
  case EVRT__ITEM_VALUE_WRITE:
    evrt__value_exec_write(it);
    return true;
  case EVRT__ITEM_DELAY: {
    uint64_t now = evrt__now_ns();
    if (it->phase == 0) {
      if (it->u.delay.ns == 0)
        return true;
      /* saturated: evrt_stream_delay(UINT64_MAX) waits for ever, where
       * the sum wrapped to the past and the delay ended at once */
      it->deadline = evrt__deadline_after(now, it->u.delay.ns);
      it->phase = 1;
      if (evrt__timer_arm(it) != EVRT_SUCCESS) {
        /* No memory for the timer: degrade to sleeping on this worker
         * rather than failing a call that already returned success. */
        evrt__sleep_ns(it->u.delay.ns);
        return true;
      }
      return false;
    }
    return now >= it->deadline;
  }
  case EVRT__ITEM_RECORD: {
    uint64_t now = evrt__be_timestamp(s->device);
    if (it->u.ev.ipc)
      evrt__ipc_exec_record(it);
    else
      evrt__event_exec_record(it, now);
    if (EVRT_TRACING())
      evrt__trace_record(s->device, s->id, it->u.ev.ev_id, it->u.ev.rec_no, now);
    return true;
  }
  case EVRT__ITEM_WAIT:
    return run_wait(s, it);
  case EVRT__ITEM_RESET:
    evrt__event_exec_reset(it);
    return true;
  case EVRT__ITEM_GRAPH:
    return evrt__graph_run_launch(s, it);
  case EVRT__ITEM_GRAPH_SEG:
    return evrt__graph_run_seg(s, it);
  }
  return true;
}

/* Give the stream up in state `to` (IDLE or PARKED).  Returns true if the
 * caller must go on running it (work or a resume arrived meanwhile). */
static bool give_up(struct evrt__stream *s, int to, uint64_t last) {
  /* Finished items stay with the stream, idle or parked, until a batch of
   * EVRT__RETURN_BATCH is handed back (run loop): its next owner continues
   * the list (ownership passes through the state word's release/acquire,
   * and a destroy that wins the stream frees them).  Handing back one or
   * two items at every idle would cost a CAS on the producers' line for
   * each of the thousands of streams a fan-out runs. */
  if (to == EVRT__S_PARKED) {
    /* One CAS on the state word: only resumers write it while we own it,
     * and only to add EVRT__RESUME, so either our CAS sees their flag (go
     * on: the awaited thing may have happened) or their later CAS sees
     * PARKED and queues the stream.  release: the next owner sees our
     * writes to the stream. */
    return evrt__st_try_park(s);
  }
  /* From this store on the stream may be freed by a destroy and its slot
   * reused: every later access is an atomic read of type-stable memory or a
   * CAS that expects exactly the word stored here (incarnation included).
   * seq_cst: the Dekker pair with producers (store IDLE, read enq_seq).  A
   * resume flag this store drops is stale: an idle stream has no wait. */
  (void)to; /* IDLE */
  unsigned mine = evrt__st_idle(s, memory_order_seq_cst);
  return after_idle(s, mine, last, EVRT__S_RUNNING, memory_order_seq_cst);
}

void evrt__exec_stream(struct evrt__stream *s) {
  /* Nobody else writes the word of a QUEUED stream; any resume that
   * arrived before is covered: we look at the head. */
  evrt__st_run(s);
  /* The seq policy yields after every item when others are ready: each
   * step is then the seeded pick's (pool.c). */
  const unsigned fair = EVRT_UNLIKELY(evrt__pool_seq) ? 1 : EVRT__FAIRNESS_BUDGET;
  unsigned budget = fair;
  uint64_t last = evrt__done(s);
  for (;;) {
    /* acquire: pairs with the producer's release link */
    struct evrt__item *it =
        atomic_load_explicit(&s->head->qnext, memory_order_acquire);
    if (!it) {
      /* Out of work: a producer feeding this stream usually enqueues again
       * within a few hundred ns, and going idle would make its next enqueue
       * pay a worker wake-up (~30 us here).  Spin briefly, as the only
       * spinner of the pool and only while no other stream is ready. */
      if (!evrt__pool_has_ready())
        evrt__exec_settle(); /* before spinning */
      if (!evrt__pool_has_ready() && evrt__pool_spin_enter()) {
        struct evrt__spin_for w =
            evrt__spin_for_start(evrt__now_ns(), evrt__spin_budget_ns() / 2);
        while (!atomic_load_explicit(&s->head->qnext, memory_order_relaxed) &&
               !evrt__pool_has_ready() && evrt__spin_for_more(&w)) {
        }
        evrt__pool_spin_leave();
        if (atomic_load_explicit(&s->head->qnext, memory_order_relaxed))
          continue;
      }
      if (give_up(s, EVRT__S_IDLE, last)) {
        /* Taken back from IDLE: another worker may have run it meanwhile
         * (queued by a producer, drained, idle again: the same state word,
         * so our CAS succeeded).  Its progress is ours now (the CAS
         * acquired it): re-read the completion counter, or `last` would
         * stay behind enq_seq and the stream would spin here forever
         * (found by evrt-stress). */
        last = evrt__done(s);
        continue;
      }
      return;
    }
    bool tracing = EVRT_TRACING();
    if (tracing && !it->t_start)
      it->t_start = evrt__now_ns();
    if (!evrt__exec_run_item(s, it)) {
      if (EVRT_UNLIKELY(evrt__check_on))
        evrt__check_item_parked(s, it);
      if (give_up(s, EVRT__S_PARKED, last))
        continue;
      return;
    }
    /* (a run of graph nodes traces each node itself) */
    if (tracing && it->kind != EVRT__ITEM_GRAPH_SEG)
      evrt__trace_item(s->device, s->id, it->kind, it->label,
                       it->t_start ? it->t_start : evrt__now_ns(),
                       evrt__now_ns(),
                       EVRT__ITEM_IS_EVENT(it->kind) ? it->u.ev.ev_id : 0,
                       EVRT__ITEM_IS_EVENT(it->kind) ? it->u.ev.rec_no : 0);
    if (EVRT_UNLIKELY(evrt__check_on))
      evrt__check_item_end(s, it);
    retire_head(s, it);
    uint64_t seq = it->seq;
    last = seq;
    if (it->kind != EVRT__ITEM_HOST_FUNC && it->kind != EVRT__ITEM_HOST_TASK &&
        !atomic_load_explicit(&it->qnext, memory_order_relaxed) &&
        evrt__pool_has_ready() && have_notes()) {
      /* Out of work, and others are ready: no spin for more, go idle
       * (unsettled, see the top of the file).  Not after a host function:
       * its producer usually feeds the stream again at once, and the
       * next host function would settle (a barrier) anyway. */
      idle_unsettled(s, seq);
      return;
    }
    /* seq_cst: the Dekker pair with waiters (wait.c) */
    atomic_store_explicit(&s->done_seq, seq, memory_order_seq_cst);
    if (EVRT_UNLIKELY(seq >= evrt__wake_target(s, memory_order_seq_cst)))
      evrt__stream_notify(s, seq);
    if (s->n_done_local >= EVRT__RETURN_BATCH)
      flush_done(s);
    if (--budget == 0) {
      budget = fair;
      if (evrt__pool_has_ready()) {
        /* Let other ready streams run: go to the back of the queue. */
        evrt__pool_flush_local();
        flush_done(s);
        evrt__st_requeue(s, memory_order_seq_cst);
        evrt__pool_push(s);
        return;
      }
    }
  }
}
