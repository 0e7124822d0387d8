/*
 * acl_notify.c - notifies: aclrtRecordNotify sets a flag when its stream
 * reaches it; aclrtWaitAndResetNotify makes its stream wait until the flag
 * is set and clears it.  Both are evrt host functions; a waiting one blocks
 * its worker thread (evrt's pool compensates), which is acceptable for the
 * rare notify use.  A notify is freed when destroyed and no task refers to
 * it any more (reference count).
 */
#include "acl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct notify {
  pthread_mutex_t m;
  pthread_cond_t cv;
  bool set;
  atomic_uint refs;    /* 1 for the handle + 1 per queued task */
  uint32_t id;
  struct notify *next;
};

struct wait_task {
  struct notify *n;
  uint32_t timeout_ms;
};

static struct notify *notifies; /* live ones, under acl__lock */
static uint32_t next_id;

static void unref(struct notify *n) {
  /* acq_rel: the last owner sees every write of the others before freeing */
  if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_destroy(&n->m);
    pthread_cond_destroy(&n->cv);
    free(n);
  }
}

/* Validate and take a task reference. */
static aclError get(const char *fn, aclrtNotify h, struct notify **out) {
  if (!h)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  ACL__ENTER(fn);
  pthread_mutex_lock(&acl__lock);
  struct notify *n = notifies;
  while (n && n != (struct notify *)h)
    n = n->next;
  if (n)
    atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "notify %p is destroyed or not a notify", h);
  *out = n;
  return ACL_SUCCESS;
}

aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag) {
  static const char fn[] = "aclrtCreateNotify";
  if (!notify)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  if (flag != 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "flag is reserved and must be 0");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  struct notify *n = calloc(1, sizeof *n);
  if (!n)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  pthread_mutex_init(&n->m, NULL);
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&n->cv, &a);
  pthread_condattr_destroy(&a);
  atomic_init(&n->refs, 1);
  pthread_mutex_lock(&acl__lock);
  n->id = next_id++;
  n->next = notifies;
  notifies = n;
  pthread_mutex_unlock(&acl__lock);
  *notify = n;
  return ACL_SUCCESS;
}

aclError aclrtDestroyNotify(aclrtNotify notify) {
  static const char fn[] = "aclrtDestroyNotify";
  if (!notify)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  ACL__ENTER(fn);
  pthread_mutex_lock(&acl__lock);
  struct notify **pp = &notifies;
  while (*pp && *pp != (struct notify *)notify)
    pp = &(*pp)->next;
  struct notify *n = *pp;
  if (n)
    *pp = n->next;
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "notify %p is destroyed or not a notify", notify);
  unref(n);
  return ACL_SUCCESS;
}

static void do_record(void *arg) {
  struct notify *n = arg;
  pthread_mutex_lock(&n->m);
  n->set = true;
  pthread_cond_broadcast(&n->cv);
  pthread_mutex_unlock(&n->m);
  unref(n);
}

static void do_wait(void *arg) {
  struct wait_task *w = arg;
  struct notify *n = w->n;
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  dl.tv_sec += w->timeout_ms / 1000;
  dl.tv_nsec += (long)(w->timeout_ms % 1000) * 1000000L;
  if (dl.tv_nsec >= 1000000000L) {
    dl.tv_sec++;
    dl.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&n->m);
  while (!n->set) {
    int e = w->timeout_ms ? pthread_cond_timedwait(&n->cv, &n->m, &dl)
                          : pthread_cond_wait(&n->cv, &n->m);
    if (e == ETIMEDOUT)
      break; /* the stream goes on; see docs/acl.md */
  }
  n->set = false;
  pthread_mutex_unlock(&n->m);
  free(w);
  unref(n);
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) {
  static const char fn[] = "aclrtRecordNotify";
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  evrt_stream_t h;
  evrt_status_t st = EVRT_SUCCESS;
  if ((r = acl__stream(fn, stream, &h)) ||
      (st = evrt_launch_host_func_labeled(h, do_record, n, "acl_notify_record"))) {
    unref(n);
    return r ? r : acl__st(st, fn);
  }
  return ACL_SUCCESS;
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream,
                                 uint32_t timeout) {
  static const char fn[] = "aclrtWaitAndResetNotify";
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  struct wait_task *w = malloc(sizeof *w);
  evrt_stream_t h;
  evrt_status_t st = EVRT_SUCCESS;
  if (!w)
    r = acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  else {
    w->n = n;
    w->timeout_ms = timeout;
  }
  if (r || (r = acl__stream(fn, stream, &h)) ||
      (st = evrt_launch_host_func_labeled(h, do_wait, w, "acl_notify_wait"))) {
    free(w);
    unref(n);
    return r ? r : acl__st(st, fn);
  }
  return ACL_SUCCESS;
}

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId) {
  static const char fn[] = "aclrtGetNotifyId";
  if (!notifyId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notifyId is NULL");
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  *notifyId = n->id;
  unref(n);
  return ACL_SUCCESS;
}
