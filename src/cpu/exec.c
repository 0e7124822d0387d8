/*
 * exec.c - a worker runs one stream: takes its queued items, executes them
 * in order, publishes completion, and parks the stream (not the thread) when
 * the head item must wait.
 *
 * Lock order used here: stream.qlock -> pool.lock (requeue for fairness).
 * Event locks are taken by the event helpers with no other lock held; host
 * functions run with no lock held.
 *
 * A parked stream is resumed by whoever satisfies it (a completing stream,
 * the timer, a record).  A resume that arrives while the worker is still
 * parking it sets resume_pending, and the worker goes on instead of parking:
 * a resume is never lost, and a spurious one only re-evaluates the head.
 */
#include "internal.h"

#include <string.h>


#define EVRT__FAIRNESS_BUDGET 1024
#define EVRT__MAX_FREE_ITEMS 64

/* Caller holds qlock: move queued items to the run list and give finished
 * items back to the recycle list. */
static void take_locked(struct evrt__stream *s) {
  if (s->q_head) {
    if (s->run_tail)
      s->run_tail->next = s->q_head;
    else
      s->run_head = s->q_head;
    s->run_tail = s->q_tail;
    s->q_head = s->q_tail = NULL;
  }
  while (s->done_items && s->n_free < EVRT__MAX_FREE_ITEMS) {
    struct evrt__item *it = s->done_items;
    s->done_items = it->next;
    s->n_done--;
    it->next = s->free_items;
    s->free_items = it;
    s->n_free++;
  }
}

static void trim_done(struct evrt__stream *s) {
  /* Items beyond the recycle cap go back to malloc, outside qlock. */
  while (s->n_done > EVRT__MAX_FREE_ITEMS) {
    struct evrt__item *it = s->done_items;
    s->done_items = it->next;
    s->n_done--;
    evrt__free(it);
  }
}

void evrt__stream_resume(struct evrt__stream *s) {
  pthread_mutex_lock(&s->qlock);
  if (s->state == EVRT__S_PARKED) {
    s->state = EVRT__S_QUEUED;
    evrt__pool_push_locked(s);
  } else if (s->state == EVRT__S_RUNNING) {
    s->resume_pending = true;
  }
  pthread_mutex_unlock(&s->qlock);
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
        if (it->deadline && it->timer_idx < 0 &&
            evrt__timer_arm(it) != EVRT_SUCCESS)
          it->deadline = 0;
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
      }
    } else if (ok && it->phase == 1) {
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
  if (it->timer_idx >= 0)
    evrt__timer_cancel(it);
  if (it->failed)
    atomic_fetch_add_explicit(&s->wait_failures, 1, memory_order_relaxed);
  if (it->u.ev.ev)
    evrt__event_wait_passed(it);
  if (EVRT_TRACING() && it->u.ev.src)
    evrt__trace_wait_resume(s->device, s->id, it->u.ev.ev_id, it->u.ev.rec_no,
                            evrt__now_ns());
  return true;
}

/* Execute the head item; false if the stream must park. */
static bool run_item(struct evrt__stream *s, struct evrt__item *it) {
  switch (it->kind) {
  case EVRT__ITEM_HOST_FUNC:
    evrt__tls_stream = s;
    evrt__tls_seq = it->seq - 1;
    it->u.host.fn(it->u.host.user);
    evrt__tls_stream = NULL;
    return true;
  case EVRT__ITEM_MEMCPY:
    if (it->u.mem.n)
      memmove(it->u.mem.dst, it->u.mem.src, it->u.mem.n);
    return true;
  case EVRT__ITEM_MEMSET:
    if (it->u.mem.n)
      memset(it->u.mem.dst, it->u.mem.value, it->u.mem.n);
    return true;
  case EVRT__ITEM_DELAY: {
    uint64_t now = evrt__now_ns();
    if (it->phase == 0) {
      if (it->u.delay.ns == 0)
        return true;
      it->deadline = now + it->u.delay.ns;
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
    uint64_t now = evrt__now_ns();
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
  }
  return true;
}

void evrt__exec_stream(struct evrt__stream *s) {
  pthread_mutex_lock(&s->qlock);
  s->state = EVRT__S_RUNNING;
  s->resume_pending = false;
  take_locked(s);
  pthread_mutex_unlock(&s->qlock);
  trim_done(s);
  unsigned budget = EVRT__FAIRNESS_BUDGET;
  for (;;) {
    struct evrt__item *it = s->run_head;
    if (!it) {
      pthread_mutex_lock(&s->qlock);
      take_locked(s);
      if (s->run_head) {
        pthread_mutex_unlock(&s->qlock);
        trim_done(s);
        continue;
      }
      s->state = EVRT__S_IDLE;
      bool dead = s->destroyed;
      pthread_mutex_unlock(&s->qlock);
      if (dead)
        evrt__stream_free(s);
      return;
    }
    bool tracing = EVRT_TRACING();
    uint64_t t0 = tracing ? evrt__now_ns() : 0;
    if (!run_item(s, it)) {
      pthread_mutex_lock(&s->qlock);
      if (s->resume_pending) {
        s->resume_pending = false;
        pthread_mutex_unlock(&s->qlock);
        continue;
      }
      s->state = EVRT__S_PARKED;
      pthread_mutex_unlock(&s->qlock);
      return;
    }
    if (tracing)
      evrt__trace_item(s->device, s->id, it->kind, it->label, t0,
                       evrt__now_ns(),
                       it->kind >= EVRT__ITEM_RECORD ? it->u.ev.ev_id : 0,
                       it->kind >= EVRT__ITEM_RECORD ? it->u.ev.rec_no : 0);
    s->run_head = it->next;
    if (!s->run_head)
      s->run_tail = NULL;
    uint64_t seq = it->seq;
    it->next = s->done_items;
    s->done_items = it;
    s->n_done++;
    /* seq_cst: the Dekker pair with waiters (wait.c) */
    atomic_store_explicit(&s->done_seq, seq, memory_order_seq_cst);
    if (atomic_load_explicit(&s->nwait, memory_order_seq_cst))
      evrt__stream_notify(s, seq);
    if (--budget == 0) {
      budget = EVRT__FAIRNESS_BUDGET;
      if (evrt__pool_has_ready()) {
        /* Let other ready streams run: go to the back of the queue. */
        pthread_mutex_lock(&s->qlock);
        take_locked(s);
        s->state = EVRT__S_QUEUED;
        evrt__pool_push_locked(s);
        pthread_mutex_unlock(&s->qlock);
        return;
      }
    }
  }
}
