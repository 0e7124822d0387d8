/*
 * failure.c - failing tasks and the error state of a stream: host functions
 * that report failure, sticky errors, stop-on-failure, abort, failure
 * callbacks, and the thread's last task (docs/design.md, "Failures").
 *
 * State of a stream's error (err_seq, skipping; the record under flock):
 *
 *   OK --task fails--> FAILED(seq)  [EVRT_FAILURE_STOP: skipping = true]
 *   OK --abort discards a task--> ABORTED(first discarded seq)
 *   FAILED/ABORTED --evrt_stream_clear_error--> OK (skipping = false)
 *   FAILED/ABORTED --another failure or abort--> unchanged (the first wins)
 *
 * err_seq is written under flock (with the record) and read without it:
 * queries and synchronizes test it next to done_seq (one line) and read the
 * record under flock only when it is set.  skipping is written by the worker
 * (set) and by the clearing thread (cleared), read by the worker.  A task
 * enqueued after a clear returned runs: its enqueue (release link) follows
 * the clear, and the worker's acquire of the link sees it.
 *
 * Calls that write this state (failure mode, clear, abort, stop) racing a
 * destroy of the stream and the reuse of its slot: the failure mode and the
 * clear are made under plock with the handle checked there (destroy kills
 * it under plock; a create reusing the slot resets the state after that),
 * abort and stop check the handle after their acquire loads of the
 * counters, as a query does (a later incarnation's seqs lie past any mark
 * read from this one).  So a stale handle fails with INVALID_HANDLE and
 * never changes the stream that reused the slot.
 *
 * Locks: plock -> flock (the clear); flock (a leaf spin lock, per stream: a
 * few stores under it, no system call); cb_lock (a mutex around the callback table; a worker copies
 * the table under it and calls the callbacks without it).
 */
#include "internal.h"

#include <string.h>

EVRT_TLS uint64_t evrt__tls_last_stream_id;
EVRT_TLS uint64_t evrt__tls_last_seq;
EVRT_TLS int evrt__tls_cancelled;
/* General-dynamic, like the error message: not on any fast path. */
static _Thread_local evrt_task_failure_t tls_failure;

/* ------------------------------------------------------------- records */

void evrt__failure_reset(struct evrt__stream *s) {
  evrt__spin_lock(&s->flock);
  memset(&s->fail, 0, sizeof s->fail);
  atomic_store_explicit(&s->err_seq, 0, memory_order_relaxed);
  atomic_store_explicit(&s->abort_seq, 0, memory_order_relaxed);
  atomic_store_explicit(&s->stop_seq, 0, memory_order_relaxed);
  atomic_store_explicit(&s->abort_head, 0, memory_order_relaxed);
  atomic_store_explicit(&s->skipping, false, memory_order_relaxed);
  atomic_store_explicit(&s->fail_stop, 0, memory_order_relaxed);
  evrt__spin_unlock(&s->flock);
}

static void fill_info(struct evrt__stream *s, const struct evrt__failrec *r,
                      evrt_task_failure_t *out) {
  memset(out, 0, sizeof *out);
  out->status = r->status;
  out->code = r->code;
  out->device = atomic_load_explicit(&s->device, memory_order_relaxed);
  out->stream_id = s->id;
  out->task_id = r->seq;
  out->thread_id = r->thread;
  out->fn = r->fn;
  out->user_data = r->user;
}

/* Record an error unless one is pending; true if recorded. */
static bool record(struct evrt__stream *s, const struct evrt__failrec *r) {
  bool fresh = false;
  evrt__spin_lock(&s->flock);
  if (atomic_load_explicit(&s->err_seq, memory_order_relaxed) == 0) {
    s->fail = *r;
    /* release: a reader that sees err_seq (acquire) and then takes flock
     * sees the record; the lock orders it anyway */
    atomic_store_explicit(&s->err_seq, r->seq, memory_order_release);
    fresh = true;
  }
  evrt__spin_unlock(&s->flock);
  return fresh;
}

/* ----------------------------------------------------------- callbacks */

#define EVRT__MAX_FAILURE_CBS 16
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cb {
  evrt_failure_fn fn;
  void *user;
} cbs[EVRT__MAX_FAILURE_CBS];
static int ncbs;
/* relaxed: a hint that spares the worker the mutex when nothing is
 * registered; a registration racing a failure may or may not see it */
static atomic_int ncbs_hint;

evrt_status_t evrt_failure_callback_add(evrt_failure_fn fn, void *user) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!fn)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "callback is NULL");
  pthread_mutex_lock(&cb_lock);
  for (int i = 0; i < ncbs; i++)
    if (cbs[i].fn == fn && cbs[i].user == user) {
      pthread_mutex_unlock(&cb_lock);
      return EVRT_SUCCESS;
    }
  if (ncbs == EVRT__MAX_FAILURE_CBS) {
    pthread_mutex_unlock(&cb_lock);
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "%d failure callbacks are registered already",
                      EVRT__MAX_FAILURE_CBS);
  }
  cbs[ncbs].fn = fn;
  cbs[ncbs].user = user;
  ncbs++;
  atomic_store_explicit(&ncbs_hint, ncbs, memory_order_relaxed);
  pthread_mutex_unlock(&cb_lock);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_failure_callback_remove(evrt_failure_fn fn, void *user) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!fn)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "callback is NULL");
  pthread_mutex_lock(&cb_lock);
  int i = 0;
  while (i < ncbs && !(cbs[i].fn == fn && cbs[i].user == user))
    i++;
  bool found = i < ncbs;
  if (found) {
    memmove(&cbs[i], &cbs[i + 1], (size_t)(ncbs - i - 1) * sizeof cbs[0]);
    ncbs--;
    atomic_store_explicit(&ncbs_hint, ncbs, memory_order_relaxed);
  }
  pthread_mutex_unlock(&cb_lock);
  if (!found)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "this (callback, user_data) pair is not registered");
  return EVRT_SUCCESS;
}

/* ---------------------------------------------------------- the worker */

void evrt__task_failed(struct evrt__stream *s, struct evrt__item *it,
                       int32_t code) {
  struct evrt__failrec r = {.status = EVRT_ERROR_TASK_FAILED,
                            .code = code,
                            .seq = it->seq,
                            .thread = it->u.task.thread,
                            .fn = it->u.task.fn,
                            .user = it->u.task.user};
  record(s, &r);
  if (atomic_load_explicit(&s->fail_stop, memory_order_relaxed))
    atomic_store_explicit(&s->skipping, true, memory_order_relaxed);
  if (!atomic_load_explicit(&ncbs_hint, memory_order_relaxed))
    return;
  struct cb copy[EVRT__MAX_FAILURE_CBS];
  pthread_mutex_lock(&cb_lock);
  int n = ncbs;
  memcpy(copy, cbs, (size_t)n * sizeof copy[0]);
  pthread_mutex_unlock(&cb_lock);
  evrt_task_failure_t info;
  fill_info(s, &r, &info);
  /* The caller keeps this stream marked as running a host function, so a
   * callback that synchronizes it gets EVRT_ERROR_WOULD_DEADLOCK. */
  for (int i = 0; i < n; i++)
    copy[i].fn(&info, copy[i].user);
}

/* The head item is skipped: end whatever it was waiting for, as run_wait
 * does when a wait ends, and complete it without running it. */
static void cancel_pending(struct evrt__item *it) {
  switch (it->kind) {
  case EVRT__ITEM_DELAY:
    if (it->phase == 1)
      evrt__backend->timer_cancel(it);
    break;
  case EVRT__ITEM_VALUE_WAIT:
    if (it->phase == 1)
      evrt__value_cancel(it);
    break;
  case EVRT__ITEM_WAIT:
    if (it->dep_kind == EVRT__DEP_NEXT_RECORD) {
      if (it->phase == 2)
        evrt__event_unlink_next_record(it);
    } else if (it->dep_kind == EVRT__DEP_IPC) {
      if (it->phase == 1)
        evrt__ipc_unwatch(it);
      evrt__ipc_wait_done(it);
    } else if (it->phase == 1 &&
               /* acquire: pairs with the notifier's release */
               !atomic_load_explicit(&it->u.ev.unlinked,
                                     memory_order_acquire)) {
      evrt__backend->wait_cancel(it);
    }
    /* timer_idx is the timer thread's, under its lock (run_wait) */
    if (it->deadline)
      evrt__backend->timer_cancel(it);
    it->phase = 0;
    break;
  default:
    break;
  }
}

bool evrt__skip_slow(struct evrt__stream *s, struct evrt__item *it) {
  /* Records and resets are bookkeeping: they complete their generations
   * (an interprocess record must mark its shared slot, or importers would
   * wait for ever). */
  if (EVRT__ITEM_IS_EVENT(it->kind) && it->kind != EVRT__ITEM_WAIT)
    return false;
  /* So is a graph launch: it runs its lanes with their nodes skipped, and
   * their records complete (src/graph_exec.c). */
  if (it->kind == EVRT__ITEM_GRAPH)
    return false;
  /* acquire: pairs with the abort's raise, after its abort_head store */
  bool aborted =
      atomic_load_explicit(&s->abort_seq, memory_order_acquire) >= it->seq;
  bool skipping = atomic_load_explicit(&s->skipping, memory_order_relaxed);
  if (!aborted && !skipping)
    return false;
  /* The head host function of an abort runs, and sees its cancellation: the
   * caller could not tell whether it had started (evrt_stream_abort). */
  if (aborted && !skipping &&
      (it->kind == EVRT__ITEM_HOST_FUNC || it->kind == EVRT__ITEM_HOST_TASK) &&
      atomic_load_explicit(&s->abort_head, memory_order_relaxed) == it->seq)
    return false;
  cancel_pending(it);
  if (aborted && atomic_load_explicit(&s->err_seq, memory_order_relaxed) == 0) {
    struct evrt__failrec r = {.status = EVRT_ERROR_ABORTED, .seq = it->seq};
    record(s, &r);
  }
  return true;
}

void evrt__task_killed(struct evrt__stream *s, struct evrt__item *it) {
  int why = evrt__tls_cancelled;
  evrt__tls_cancelled = 0;
  struct evrt__failrec r = {.status = EVRT_ERROR_ABORTED,
                            .code = why,
                            .seq = it->seq};
  if (it->kind == EVRT__ITEM_HOST_TASK) {
    r.thread = it->u.task.thread;
    r.fn = it->u.task.fn;
    r.user = it->u.task.user;
  }
  record(s, &r); /* a failure it returned itself stays the one reported */
}

/* ------------------------------------------------------------ the host */

evrt_status_t evrt__stream_error(struct evrt__stream *s, uint64_t target) {
  struct evrt__failrec r;
  evrt__spin_lock(&s->flock);
  uint64_t e = atomic_load_explicit(&s->err_seq, memory_order_relaxed);
  r = s->fail;
  evrt__spin_unlock(&s->flock);
  if (e == 0 || e > target)
    return EVRT_SUCCESS; /* cleared meanwhile, or past the target */
  fill_info(s, &r, &tls_failure);
  if (r.status == EVRT_ERROR_ABORTED)
    return evrt__fail(EVRT_ERROR_ABORTED,
                      "stream %llu: queued work from task %llu on was "
                      "discarded by evrt_stream_abort",
                      (unsigned long long)s->id, (unsigned long long)r.seq);
  return evrt__fail(EVRT_ERROR_TASK_FAILED,
                    "stream %llu: task %llu failed with code %d (clear it "
                    "with evrt_stream_clear_error)",
                    (unsigned long long)s->id, (unsigned long long)r.seq,
                    (int)r.code);
}

evrt_status_t evrt_last_task_failure(evrt_task_failure_t *info) {
  if (!info)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "info is NULL");
  *info = tls_failure;
  return EVRT_SUCCESS;
}

static __attribute__((cold, noinline)) evrt_status_t
destroyed_meanwhile(evrt_stream_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "stream %p destroyed during the call", (void *)h);
}

/* Rewrites the caller's handle variable (NULL: the default stream's). */
static evrt_status_t get_stream_(evrt_stream_t *h, struct evrt__stream **out) {
  evrt_status_t st = evrt__ready();
  if (st || (st = evrt__stream_arg(h, out)))
    return st;
  EVRT__SCHED_POINT(EVRT__SP_FAILURE_LOOKED, *out); /* white-box build only */
  return EVRT_SUCCESS;
}
#define get_stream(h, out) get_stream_(&(h), (out))

evrt_status_t evrt_launch_host_func_status(evrt_stream_t h,
                                           evrt_host_fn_status fn,
                                           void *user) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!fn)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "host function is NULL");
  struct evrt__item t;
  memset(&t, 0, sizeof t);
  t.kind = EVRT__ITEM_HOST_TASK;
  t.u.task.fn = fn;
  t.u.task.user = user;
  t.u.task.thread = evrt__thread_id();
  return evrt__enqueue(s, h, &t);
}

evrt_status_t evrt_stream_set_failure_mode(evrt_stream_t h, unsigned mode) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (mode != EVRT_FAILURE_CONTINUE && mode != EVRT_FAILURE_STOP)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "failure mode %u is neither EVRT_FAILURE_CONTINUE nor "
                      "EVRT_FAILURE_STOP",
                      mode);
  /* Applies to failures from now on; a stream already stopped stays
   * stopped until its error is cleared.  Under plock with the handle
   * checked (top of file): a stale handle must not set the mode of the
   * stream that reused the slot. */
  evrt__spin_lock(&s->plock);
  bool live = evrt__stream_is(s, h);
  if (live)
    atomic_store_explicit(&s->fail_stop, (unsigned char)mode,
                          memory_order_relaxed);
  evrt__spin_unlock(&s->plock);
  return live ? EVRT_SUCCESS : destroyed_meanwhile(h);
}

static evrt_status_t error_of(evrt_stream_t h, evrt_task_failure_t *info,
                              bool clear) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!info && !clear)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "info is NULL");
  struct evrt__failrec r;
  /* plock with the handle checked, then flock (top of file): a stale
   * handle neither reads nor clears the error of the stream that reused
   * the slot. */
  evrt__spin_lock(&s->plock);
  if (!evrt__stream_is(s, h)) {
    evrt__spin_unlock(&s->plock);
    return destroyed_meanwhile(h);
  }
  evrt__spin_lock(&s->flock);
  bool pending = atomic_load_explicit(&s->err_seq, memory_order_relaxed) != 0;
  r = s->fail;
  if (clear && pending) {
    atomic_store_explicit(&s->err_seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->skipping, false, memory_order_relaxed);
  }
  evrt__spin_unlock(&s->flock);
  evrt__spin_unlock(&s->plock);
  if (info) {
    if (pending) {
      fill_info(s, &r, info);
    } else {
      memset(info, 0, sizeof *info);
      info->device = atomic_load_explicit(&s->device, memory_order_relaxed);
      info->stream_id = s->id;
    }
  }
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_get_error(evrt_stream_t h,
                                    evrt_task_failure_t *info) {
  return error_of(h, info, false);
}

evrt_status_t evrt_stream_clear_error(evrt_stream_t h,
                                      evrt_task_failure_t *info) {
  return error_of(h, info, true);
}

/* Raise *a to v (never lower it: concurrent callers keep the larger);
 * `mo` orders a successful raise. */
static void raise_to(atomic_uint_least64_t *a, uint64_t v, memory_order mo) {
  uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak_explicit(
                        a, &cur, v, mo, memory_order_relaxed))
    ;
}

/* The head task of s (done + 1) and what is enqueued: *head is 0 when
 * nothing is pending.  done is read first (acquire, as every reader of
 * done_seq): a task completing meanwhile makes the head its successor,
 * which counts as the head all the same. */
static uint64_t head_task(struct evrt__stream *s, uint64_t *enq) {
  uint64_t done = atomic_load_explicit(&s->done_seq, memory_order_acquire);
  *enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  return *enq > done ? done + 1 : 0;
}

evrt_status_t evrt_stream_abort(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  /* The head task counts as running, as for evrt_stream_stop: a host
   * function there is killed, not discarded.  Relaxed: published by the
   * raise of abort_seq below. */
  uint64_t mark;
  uint64_t head = head_task(s, &mark);
  /* The counters were this incarnation's if the handle is still live after
   * their acquire loads (top of file). */
  if (!evrt__stream_is(s, h))
    return destroyed_meanwhile(h);
  if (head)
    raise_to(&s->abort_head, head, memory_order_relaxed);
  /* Everything enqueued so far that has not started.  seq_cst: ordered
   * before the resume below (which the worker acquires). */
  raise_to(&s->abort_seq, mark, memory_order_seq_cst);
  /* A parked head (a wait, a delay) re-evaluates and is skipped; a running
   * or queued stream sees the mark at its next item; an idle one has
   * nothing to discard. */
  evrt__be_stream_resume(s);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_stop(evrt_stream_t h) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  uint64_t enq;
  uint64_t head = head_task(s, &enq);
  if (!evrt__stream_is(s, h)) /* as in abort */
    return destroyed_meanwhile(h);
  /* Nothing pending: nothing to stop.  Relaxed: the running function
   * polls it, nothing is published with it. */
  if (head)
    raise_to(&s->stop_seq, head, memory_order_relaxed);
  return EVRT_SUCCESS;
}

int evrt_host_func_cancelled(void) {
  struct evrt__stream *s = evrt__tls_stream;
  if (!s)
    return 0;
  /* relaxed: a flag polled by the function itself; abort and stop publish
   * nothing through it */
  uint64_t k = evrt__tls_seq + 1;
  int why = 0;
  if (atomic_load_explicit(&s->abort_seq, memory_order_relaxed) >= k)
    why = EVRT_CANCEL_ABORT;
  else if (atomic_load_explicit(&s->stop_seq, memory_order_relaxed) >= k)
    why = EVRT_CANCEL_STOP;
  if (why)
    evrt__tls_cancelled = why;
  return why;
}

/* ------------------------------------------------------------- threads */

evrt_status_t evrt_thread_last_task(uint64_t *stream_id, uint64_t *task_id) {
  if (!stream_id || !task_id)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%s is NULL",
                      stream_id ? "task_id" : "stream_id");
  *stream_id = evrt__tls_last_stream_id;
  *task_id = evrt__tls_last_seq;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_thread_serve_begin(evrt_stream_t h, uint64_t task_id) {
  struct evrt__stream *s = NULL;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (task_id == 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "task_id is 0");
  if (evrt__tls_stream)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "the calling thread already runs work of stream %llu",
                      (unsigned long long)evrt__tls_stream->id);
  /* The checks of host functions (stream.c, event.c, device.c): waits for
   * the task or beyond on this stream would never end. */
  evrt__tls_stream = s;
  evrt__tls_seq = task_id - 1;
  evrt__tls_cancelled = 0; /* the worker records kills; a serving thread not */
  return EVRT_SUCCESS;
}

void evrt_thread_serve_end(void) {
  /* Only a thread that began serving (never a worker inside a host
   * function: that one returns to its worker loop, which clears it). */
  if (!evrt__backend->on_own_thread()) {
    evrt__tls_stream = NULL;
    evrt__tls_cancelled = 0;
  }
}
