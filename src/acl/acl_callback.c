/*
 * acl_callback.c - aclrtLaunchCallback with aclrtSubscribeReport /
 * aclrtProcessReport / aclrtUnSubscribeReport, and aclrtLaunchHostFunc.
 *
 * A subscribed thread (identified by its pthread_t, as ACL programs pass
 * it) owns a report queue.  aclrtLaunchCallback enqueues on the stream an
 * evrt host function that, when the stream reaches it, hands the report to
 * the queue; for ACL_CALLBACK_BLOCK it then waits until the subscribed
 * thread has run the callback, so later tasks of the stream wait too (evrt's
 * pool adds a worker while one is blocked in user code).  The user callback
 * runs in aclrtProcessReport, on the subscribed thread, with no lock held.
 *
 * Queues are never freed (a thread id can subscribe again); reports are
 * freed by whoever finishes with them last: the processing thread for
 * NO_BLOCK, the stream's host function for BLOCK.
 */
#include "acl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct report {
  aclrtCallback fn;
  void *user;
  bool block;
  bool done; /* under q->m */
  struct acl__report_queue *q;
  struct report *next;
};

struct acl__report_queue {
  uint64_t tid;
  unsigned nstreams; /* under acl__lock */
  pthread_mutex_t m;
  pthread_cond_t cv; /* signalled on push (to the thread) and on done */
  struct report *head, *tail;
  struct acl__report_queue *next;
};

static struct acl__report_queue *queues; /* under acl__lock */

static struct acl__report_queue *find_queue(uint64_t tid, bool make) {
  for (struct acl__report_queue *q = queues; q; q = q->next)
    if (q->tid == tid)
      return q;
  if (!make)
    return NULL;
  struct acl__report_queue *q = calloc(1, sizeof *q);
  if (!q)
    return NULL;
  q->tid = tid;
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

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  static const char fn[] = "aclrtSubscribeReport";
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  if (!m) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "stream was not created by the ACL layer");
  }
  if (m->sub) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, fn,
                          "the stream is already subscribed by thread %llu",
                          (unsigned long long)m->sub->tid);
  }
  struct acl__report_queue *q = find_queue(threadId, true);
  if (q) {
    m->sub = q;
    q->nstreams++;
  }
  pthread_mutex_unlock(&acl__lock);
  if (!q)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  return ACL_SUCCESS;
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  static const char fn[] = "aclrtUnSubscribeReport";
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  bool ok = m && m->sub && m->sub->tid == threadId;
  if (ok) {
    m->sub->nstreams--;
    m->sub = NULL;
  }
  pthread_mutex_unlock(&acl__lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, fn,
                          "the stream is not subscribed by thread %llu",
                          (unsigned long long)threadId);
  return ACL_SUCCESS;
}

/* Runs on an evrt worker when the stream reaches the callback task. */
static void deliver(void *arg) {
  struct report *rp = arg;
  struct acl__report_queue *q = rp->q;
  bool block = rp->block;
  pthread_mutex_lock(&q->m);
  rp->next = NULL;
  if (q->tail)
    q->tail->next = rp;
  else
    q->head = rp;
  q->tail = rp;
  pthread_cond_broadcast(&q->cv);
  if (block) {
    while (!rp->done)
      pthread_cond_wait(&q->cv, &q->m);
  }
  pthread_mutex_unlock(&q->m);
  if (block)
    free(rp);
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
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  struct acl__report_queue *q = m ? m->sub : NULL;
  pthread_mutex_unlock(&acl__lock);
  if (!q)
    return acl__fail(ACL_ERROR_RT_STREAM_NO_CB_REG, fn,
                          "no thread is subscribed to the stream: call "
                          "aclrtSubscribeReport first");
  struct report *rp = calloc(1, sizeof *rp);
  if (!rp)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  rp->fn = fn_;
  rp->user = userData;
  rp->block = blockType == ACL_CALLBACK_BLOCK;
  rp->q = q;
  evrt_status_t st = evrt_launch_host_func_labeled(h, deliver, rp, "acl_callback");
  if (st) {
    free(rp);
    return acl__st(st, fn);
  }
  return ACL_SUCCESS;
}

aclError aclrtProcessReport(int32_t timeout) {
  static const char fn[] = "aclrtProcessReport";
  if (timeout == 0 || timeout < -1)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "timeout %d: must be -1 (forever) or > 0 ms",
                          (int)timeout);
  ACL__ENTER(fn);
  uint64_t self = (uint64_t)pthread_self();
  pthread_mutex_lock(&acl__lock);
  struct acl__report_queue *q = find_queue(self, false);
  bool subscribed = q && q->nstreams > 0;
  pthread_mutex_unlock(&acl__lock);
  if (!subscribed)
    return acl__fail(ACL_ERROR_RT_THREAD_SUBSCRIBE, fn,
                          "the calling thread is not subscribed to any "
                          "stream (aclrtSubscribeReport)");
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
                            "no callback report within %d ms", (int)timeout);
    }
  }
  struct report *rp = q->head;
  q->head = rp->next;
  if (!q->head)
    q->tail = NULL;
  pthread_mutex_unlock(&q->m);
  rp->fn(rp->user); /* no lock held: the callback may call ACL */
  if (rp->block) {
    pthread_mutex_lock(&q->m);
    rp->done = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->m); /* deliver() frees rp */
  } else {
    free(rp);
  }
  return ACL_SUCCESS;
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn_, void *args) {
  static const char fn[] = "aclrtLaunchHostFunc";
  if (!fn_)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "fn is NULL");
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  return acl__st(evrt_launch_host_func(h, fn_, args), fn);
}
