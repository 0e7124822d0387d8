/*
 * acl_callback.c - callbacks that run on a thread the program subscribed:
 * aclrtLaunchCallback with aclrtSubscribeReport / aclrtProcessReport /
 * aclrtUnSubscribeReport, and aclrtLaunchHostFunc on a stream subscribed
 * with aclrtSubscribeHostFunc / aclrtProcessHostFunc /
 * aclrtUnSubscribeHostFunc (host functions then run on that thread, and
 * block the stream's later tasks).  aclrtLaunchHostFunc on a stream with no
 * such subscription is an evrt host function (a worker runs it).
 *
 * No worker ever waits here (issue 13 item 5).  A callback task is three
 * stream items: a host function `deliver` that hands the task to the
 * subscribed thread's queue and returns, for BLOCK tasks a value wait on
 * the task's `done` word (the stream parks, holding no worker: see
 * docs/design.md, "Values"), then a host function `finish` that drops the
 * stream's reference.  The subscribed thread runs the callback inside
 * aclrtProcessReport / aclrtProcessHostFunc, declared as serving the
 * stream's wait (evrt_thread_serve_begin: a callback that synchronizes its
 * own stream gets ACL_ERROR_RT_PARAM_INVALID, as a host function would),
 * then writes `done` (evrt_value_write64), which resumes the stream.
 *
 * Subscriptions: a stream has at most one report and one host-function
 * subscription (struct acl__sub, referenced by the stream's metadata and by
 * its tasks).  Unsubscribing, or destroying the stream, deactivates it and
 * releases its tasks still queued: they are not run, their `done` is
 * written, and the stream goes on (a BLOCK callback left queued after
 * aclrtUnSubscribeReport froze its stream before; destroy and device reset
 * then hung).  deliver checks `active` under the queue's mutex, so a task
 * delivered after the deactivation is released the same way.
 *
 * Lock order: acl__lock -> queue.m (neither is held while user code runs
 * or while evrt writes a value).  Queues are never freed (a thread id can
 * subscribe again); subscriptions and tasks are reference-counted.
 */
#include "acl_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

enum { Q_REPORT = 0, Q_HOSTFUNC = 1 };

struct task {
  aclrtCallback fn;
  void *user;
  bool block;
  uint64_t done;    /* the stream waits for 1 (BLOCK) */
  struct acl__sub *sub;
  evrt_stream_t stream;
  /* Task id of the value wait (BLOCK): 0 until the launching thread knows
   * it, TASK_NO_WAIT if it could not queue the wait.  The subscribed thread
   * may pop the task before that (deliver runs first), so it is atomic:
   * release by the launcher, acquire by process(). */
  _Atomic uint64_t wait_task;
  atomic_uint refs;   /* queue side + the stream's finish item */
  struct task *next;
};

struct acl__report_queue {
  uint64_t tid;
  int kind;
  unsigned nstreams; /* under acl__lock */
  pthread_mutex_t m;
  pthread_cond_t cv; /* signalled on push */
  struct task *head, *tail;
  struct acl__report_queue *next;
};

struct acl__sub {
  struct acl__report_queue *q;
  bool active;      /* under q->m */
  atomic_uint refs; /* the stream's metadata + one per task */
};

static struct acl__report_queue *queues; /* under acl__lock */

static struct acl__report_queue *find_queue(uint64_t tid, int kind,
                                            bool make) {
  for (struct acl__report_queue *q = queues; q; q = q->next)
    if (q->tid == tid && q->kind == kind)
      return q;
  if (!make)
    return NULL;
  struct acl__report_queue *q = calloc(1, sizeof *q);
  if (!q)
    return NULL;
  q->tid = tid;
  q->kind = kind;
  pthread_mutex_init(&q->m, NULL);
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&q->cv, &a);
  pthread_condattr_destroy(&a);
  q->next = queues;
  queues = q;
  return q;
}

static void sub_unref(struct acl__sub *s) {
  /* acq_rel: the last owner sees the others' writes before freeing */
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
    free(s);
}

static void task_unref(struct task *t) {
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) {
    /* EVRT_CHECK: the task's two synchronization objects die with it (its
     * address may name another stream's task next; every release and
     * acquire of these is done by now). */
    evrt_check_forget(t);
    evrt_check_forget(&t->done);
    sub_unref(t->sub);
    free(t);
  }
}

/* The queue side is done with t: ran or released.  For BLOCK tasks the
 * stream waits for this write. */
static void task_done(struct task *t) {
  if (t->block)
    evrt_value_write64(&t->done, 1);
  task_unref(t);
}

/* Deactivate s and release its queued tasks (not run).  Takes q->m. */
static void sub_release(struct acl__sub *s) {
  struct acl__report_queue *q = s->q;
  struct task *mine = NULL;
  pthread_mutex_lock(&q->m);
  s->active = false;
  struct task **pp = &q->head, *prev = NULL;
  while (*pp) {
    struct task *t = *pp;
    if (t->sub == s) {
      *pp = t->next;
      t->next = mine;
      mine = t;
    } else {
      prev = t;
      pp = &t->next;
    }
  }
  q->tail = prev;
  pthread_mutex_unlock(&q->m);
  while (mine) {
    struct task *next = mine->next;
    task_done(mine);
    mine = next;
  }
}

void acl__stream_detach(struct acl__stream *m) {
  /* The stream's metadata is gone from the table (caller): nobody else
   * reaches m->sub / m->hsub any more. */
  struct acl__sub *subs[2] = {m->sub, m->hsub};
  m->sub = m->hsub = NULL;
  for (int i = 0; i < 2; i++)
    if (subs[i]) {
      pthread_mutex_lock(&acl__lock);
      subs[i]->q->nstreams--;
      pthread_mutex_unlock(&acl__lock);
      sub_release(subs[i]);
      sub_unref(subs[i]);
    }
}

struct ctx_subs {
  struct acl__ctx *ctx;
  struct acl__sub *v[128];
  int n;
  bool more;
};
static void take_ctx_subs(uint64_t id, void *val, void *arg) {
  (void)id;
  struct acl__stream *m = val;
  struct ctx_subs *c = arg;
  if (m->ctx != c->ctx)
    return;
  struct acl__sub **slots[2] = {&m->sub, &m->hsub};
  for (int i = 0; i < 2; i++)
    if (*slots[i]) {
      if (c->n == 128) {
        c->more = true;
        return;
      }
      c->v[c->n++] = *slots[i];
      (*slots[i])->q->nstreams--;
      *slots[i] = NULL;
    }
}

void acl__ctx_detach(struct acl__ctx *ctx) {
  for (;;) {
    struct ctx_subs c = {.ctx = ctx};
    pthread_mutex_lock(&acl__lock);
    acl__map_each(acl__streams, take_ctx_subs, &c);
    pthread_mutex_unlock(&acl__lock);
    for (int i = 0; i < c.n; i++) {
      sub_release(c.v[i]);
      sub_unref(c.v[i]);
    }
    if (!c.more)
      return;
  }
}

/* ------------------------------------------------------- subscription */

static aclError subscribe(const char *fn, int kind, uint64_t tid,
                          aclrtStream stream) {
  if (kind == Q_HOSTFUNC && !stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "exeStream is NULL (the default stream cannot be "
                     "subscribed)");
  struct acl__sub *s = calloc(1, sizeof *s);
  if (!s)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r) {
    free(s);
    return r;
  }
  struct acl__sub **slot = m ? (kind == Q_REPORT ? &m->sub : &m->hsub) : NULL;
  const char *why = !m       ? "stream was not created by the ACL layer"
                    : *slot ? "the stream is subscribed already"
                            : NULL;
  struct acl__report_queue *q = why ? NULL : find_queue(tid, kind, true);
  if (q) {
    s->q = q;
    s->active = true;
    atomic_init(&s->refs, 1);
    *slot = s;
    q->nstreams++;
  }
  pthread_mutex_unlock(&acl__lock);
  if (why) {
    free(s);
    return acl__fail(m ? ACL_ERROR_RT_STREAM_SUBSCRIBE
                       : ACL_ERROR_RT_INVALID_HANDLE,
                     fn, "%s", why);
  }
  if (!q) {
    free(s);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  return ACL_SUCCESS;
}

static aclError unsubscribe(const char *fn, int kind, uint64_t tid,
                            aclrtStream stream) {
  if (kind == Q_HOSTFUNC && !stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "exeStream is NULL");
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  struct acl__sub **slot = m ? (kind == Q_REPORT ? &m->sub : &m->hsub) : NULL;
  struct acl__sub *s = slot && *slot && (*slot)->q->tid == tid ? *slot : NULL;
  if (s) {
    *slot = NULL;
    s->q->nstreams--;
  }
  pthread_mutex_unlock(&acl__lock);
  if (!s)
    return acl__fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, fn,
                     "the stream is not subscribed by thread %llu",
                     (unsigned long long)tid);
  sub_release(s);
  sub_unref(s);
  return ACL_SUCCESS;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return subscribe("aclrtSubscribeReport", Q_REPORT, threadId, stream);
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return unsubscribe("aclrtUnSubscribeReport", Q_REPORT, threadId, stream);
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId,
                                aclrtStream exeStream) {
  return subscribe("aclrtSubscribeHostFunc", Q_HOSTFUNC, hostFuncThreadId,
                   exeStream);
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId,
                                  aclrtStream exeStream) {
  return unsubscribe("aclrtUnSubscribeHostFunc", Q_HOSTFUNC, hostFuncThreadId,
                     exeStream);
}

/* ------------------------------------------------------------ tasks */

/* Runs on an evrt worker when the stream reaches the task: hand it over
 * and return (the stream's wait, next, parks it). */
static void deliver(void *arg) {
  struct task *t = arg;
  struct acl__report_queue *q = t->sub->q;
  /* EVRT_CHECK: the callback runs after what the stream did before this
   * task (in CANN it is a task of the stream), on a thread that learns of
   * it through the queue: released here, in the stream's order, before the
   * push; acquired by process() before it calls the callback.  The stream's
   * later tasks learn the callback's end through the value write of
   * `done` (evrt_value_write64 releases the word, the wait acquires it). */
  evrt_check_release(t);
  pthread_mutex_lock(&q->m);
  bool active = t->sub->active;
  if (active) {
    t->next = NULL;
    if (q->tail)
      q->tail->next = t;
    else
      q->head = t;
    q->tail = t;
    pthread_cond_broadcast(&q->cv);
  }
  pthread_mutex_unlock(&q->m);
  if (!active)
    task_done(t); /* unsubscribed meanwhile: released, not run */
}

static void finish(void *arg) { task_unref(arg); }

#define TASK_NO_WAIT UINT64_MAX

/* The id of t's value wait, once its launcher has published it.  The
 * launcher is between two enqueues when this waits (never blocked on this
 * thread), so the wait is short; it backs off from yields to sleeps. */
static uint64_t task_wait_id(struct task *t) {
  unsigned spins = 0;
  for (;;) {
    /* acquire: pairs with the launcher's release store */
    uint64_t id = atomic_load_explicit(&t->wait_task, memory_order_acquire);
    if (id)
      return id;
    if (++spins < 64) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000}; /* 50 us */
      nanosleep(&ts, NULL);
    }
  }
}

/* Enqueue fn as a task of the subscription of `kind` on stream h. */
static aclError launch_task(const char *fn, int kind, aclrtCallback cb,
                            void *user, bool block, evrt_stream_t h,
                            struct acl__sub *s) {
  struct task *t = calloc(1, sizeof *t);
  if (!t) {
    sub_unref(s);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  t->fn = cb;
  t->user = user;
  t->block = block;
  t->sub = s; /* takes the caller's reference */
  t->stream = h;
  atomic_init(&t->refs, block ? 2 : 1);
  atomic_init(&t->wait_task, 0);
  evrt_status_t st = evrt_launch_host_func_labeled(
      h, deliver, t, kind == Q_REPORT ? "acl_callback" : "acl_host_func");
  if (st) {
    sub_unref(s);
    free(t);
    return acl__st(st, fn);
  }
  if (!block)
    return ACL_SUCCESS;
  /* Only evrt writes the word: no re-check after host functions. */
  uint64_t sid, wait_id = 0;
  bool waits = !evrt_stream_wait_value64(
                   h, &t->done, 1,
                   EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_EXPLICIT) &&
               !evrt_thread_last_task(&sid, &wait_id) && wait_id;
  /* release: the subscribed thread may already hold t (process()); t
   * lives on, the finish item's reference is not queued yet */
  atomic_store_explicit(&t->wait_task, waits ? wait_id : TASK_NO_WAIT,
                        memory_order_release);
  if (!waits ||
      evrt_launch_host_func_labeled(h, finish, t, "acl_callback_end")) {
    /* Out of memory after the task was handed over: it still runs (on the
     * subscribed thread), but the stream may not wait for it. */
    task_unref(t);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "out of memory: the callback will run but may not "
                     "block the stream");
  }
  return ACL_SUCCESS;
}

/* The stream's subscription of `kind`, referenced, or NULL. */
static aclError sub_of(const char *fn, aclrtStream stream, int kind,
                       evrt_stream_t *h, struct acl__sub **out) {
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, h, &m);
  if (r)
    return r;
  struct acl__sub *s = m ? (kind == Q_REPORT ? m->sub : m->hsub) : NULL;
  if (s)
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&acl__lock);
  *out = s;
  return ACL_SUCCESS;
}

aclError aclrtLaunchCallback(aclrtCallback fn_, void *userData,
                             aclrtCallbackBlockType blockType,
                             aclrtStream stream) {
  static const char fn[] = "aclrtLaunchCallback";
  if (!fn_)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "fn is NULL");
  if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "blockType %d is neither ACL_CALLBACK_NO_BLOCK nor "
                     "ACL_CALLBACK_BLOCK",
                     (int)blockType);
  evrt_stream_t h;
  struct acl__sub *s;
  aclError r = sub_of(fn, stream, Q_REPORT, &h, &s);
  if (r)
    return r;
  if (!s)
    return acl__fail(ACL_ERROR_RT_STREAM_NO_CB_REG, fn,
                     "no thread is subscribed to the stream: call "
                     "aclrtSubscribeReport first");
  return launch_task(fn, Q_REPORT, fn_, userData,
                     blockType == ACL_CALLBACK_BLOCK, h, s);
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn_,
                             void *args) {
  static const char fn[] = "aclrtLaunchHostFunc";
  if (!fn_)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "fn is NULL");
  evrt_stream_t h;
  struct acl__sub *s;
  aclError r = sub_of(fn, stream, Q_HOSTFUNC, &h, &s);
  if (r)
    return r;
  if (s) /* runs on the subscribed thread and blocks the stream */
    return launch_task(fn, Q_HOSTFUNC, fn_, args, true, h, s);
  return acl__st(evrt_launch_host_func(h, fn_, args), fn);
}

/* ------------------------------------------------------- processing */

static aclError process(const char *fn, int kind, int32_t timeout) {
  if (timeout == 0 || timeout < -1)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "timeout %d: must be -1 (forever) or > 0 ms",
                     (int)timeout);
  ACL__ENTER(fn);
  uint64_t self = (uint64_t)pthread_self();
  pthread_mutex_lock(&acl__lock);
  struct acl__report_queue *q = find_queue(self, kind, false);
  bool subscribed = q && q->nstreams > 0;
  pthread_mutex_unlock(&acl__lock);
  if (!subscribed)
    return acl__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, fn,
                     "the calling thread is not subscribed to any stream "
                     "(%s)",
                     kind == Q_REPORT ? "aclrtSubscribeReport"
                                      : "aclrtSubscribeHostFunc");
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  if (timeout > 0) {
    dl.tv_sec += timeout / 1000;
    dl.tv_nsec += (long)(timeout % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&q->m);
  while (!q->head) {
    int e = timeout < 0 ? pthread_cond_wait(&q->cv, &q->m)
                        : pthread_cond_timedwait(&q->cv, &q->m, &dl);
    if (e == ETIMEDOUT && !q->head) {
      pthread_mutex_unlock(&q->m);
      return acl__fail(ACL_ERROR_RT_REPORT_TIMEOUT, fn,
                       "no callback within %d ms", (int)timeout);
    }
  }
  struct task *t = q->head;
  q->head = t->next;
  if (!q->head)
    q->tail = NULL;
  pthread_mutex_unlock(&q->m);
  /* No lock held: the callback may call ACL.  While a BLOCK one runs, its
   * stream is parked on it: this thread serves that wait, so waiting for
   * the stream from here is refused instead of deadlocking. */
  evrt_check_acquire(t); /* (deliver released it: see there) */
  uint64_t wait_id = t->block ? task_wait_id(t) : TASK_NO_WAIT;
  bool serving = wait_id != TASK_NO_WAIT &&
                 evrt_thread_serve_begin(t->stream, wait_id) == EVRT_SUCCESS;
  t->fn(t->user);
  if (serving)
    evrt_thread_serve_end();
  task_done(t);
  return ACL_SUCCESS;
}

aclError aclrtProcessReport(int32_t timeout) {
  return process("aclrtProcessReport", Q_REPORT, timeout);
}

aclError aclrtProcessHostFunc(int32_t timeout) {
  return process("aclrtProcessHostFunc", Q_HOSTFUNC, timeout);
}
