/*
 * acl_stream.c - streams.  An aclrtStream is an evrt_stream_t; NULL is the
 * default stream of the calling thread's current context.  The side table
 * (acl__streams, under acl__lock) keeps what ACL adds: the owning
 * context, flags, failure mode, the callback subscription and how many
 * timed-out waits the last synchronize already reported.
 */
#include "acl_internal.h"

#include <stdlib.h>

struct acl__map *acl__streams;
unsigned acl__stream_count[ACL__MAX_DEVICES];
/* The ids in use on each device (bit i: id i), under acl__lock. */
static uint64_t used_ids[ACL__MAX_DEVICES][(ACL__STREAM_LIMIT + 63) / 64];

static int32_t take_id(int device) {
  uint64_t *w = used_ids[device];
  for (unsigned i = 0; i < (ACL__STREAM_LIMIT + 63) / 64; i++)
    if (~w[i]) {
      int b = __builtin_ctzll(~w[i]);
      w[i] |= 1ull << b;
      return (int32_t)(i * 64 + (unsigned)b);
    }
  return -1; /* more streams than the limit: only the count refuses them */
}

void acl__stream_removed(const struct acl__stream *m) {
  int d = m->ctx->device;
  if (acl__stream_count[d])
    acl__stream_count[d]--;
  if (m->acl_id >= 0)
    used_ids[d][m->acl_id / 64] &= ~(1ull << (m->acl_id % 64));
}

int32_t acl__stream_acl_id(uint64_t id) {
  pthread_mutex_lock(&acl__lock);
  struct acl__stream *m = acl__map_get(&acl__streams, id);
  int32_t v = m ? m->acl_id : -1;
  pthread_mutex_unlock(&acl__lock);
  return v;
}

int acl__stream_add(evrt_stream_t h, struct acl__ctx *ctx,
                         uint32_t flags, uint32_t priority, bool is_default) {
  uint64_t id;
  if (evrt_stream_get_id(h, &id))
    return -1;
  struct acl__stream *m = calloc(1, sizeof *m);
  if (!m)
    return -1;
  m->ctx = ctx;
  m->handle = h;
  m->flags = flags;
  m->priority = priority;
  m->is_default = is_default;
  if (acl__map_put(&acl__streams, id, m)) {
    free(m);
    return -1;
  }
  acl__stream_count[ctx->device]++;
  m->acl_id = take_id(ctx->device);
  return 0;
}

aclError acl__stream(const char *fn, aclrtStream s, evrt_stream_t *h) {
  ACL__ENTER(fn);
  if (s) {
    *h = (evrt_stream_t)s;
    return ACL_SUCCESS;
  }
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  *h = c->def_stream;
  return ACL_SUCCESS;
}

aclError acl__stream_locked(const char *fn, aclrtStream s,
                                 evrt_stream_t *h,
                                 struct acl__stream **meta) {
  aclError r = acl__stream(fn, s, h);
  if (r)
    return r;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(*h, &id);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  *meta = acl__map_get(&acl__streams, id);
  return ACL_SUCCESS;
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                     uint32_t flag) {
  static const char fn[] = "aclrtCreateStream";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  bool full = acl__stream_count[c->device] >= ACL__STREAM_LIMIT;
  pthread_mutex_unlock(&acl__lock);
  if (full)
    return acl__fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, fn,
                          "device %d already has %u streams (the limit, "
                          "default streams included)",
                          c->device, ACL__STREAM_LIMIT);
  evrt_stream_t h;
  /* The ACL doc calls priority reserved and unused: it is only stored. */
  evrt_status_t st = evrt_stream_create(&h, c->device, 0, 0);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  int bad = acl__stream_add(h, c, flag, priority, false);
  pthread_mutex_unlock(&acl__lock);
  if (bad) {
    evrt_stream_destroy(h);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *stream = (aclrtStream)h;
  acl__stream_state(*stream, ACL_RT_STREAM_STATE_CREATE_POST);
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  return aclrtCreateStreamWithConfig(stream, 0, 0);
}

static aclError destroy(const char *fn, aclrtStream stream, bool wait) {
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "stream is NULL (the default stream cannot be "
                          "destroyed)");
  evrt_stream_t h = (evrt_stream_t)stream;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  struct acl__stream *m = acl__map_get(&acl__streams, id);
  if (!m || m->is_default) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(m ? ACL_ERROR_RT_PARAM_INVALID
                            : ACL_ERROR_RT_INVALID_HANDLE,
                          fn, "%s", m ? "a context's default stream cannot be "
                                        "destroyed"
                                      : "stream was not created by "
                                        "aclrtCreateStream");
  }
  pthread_mutex_unlock(&acl__lock);
  acl__stream_state(stream, ACL_RT_STREAM_STATE_DESTROY_PRE);
  /* A failed task's error goes with the stream. */
  if (wait && (st = evrt_stream_synchronize(h)) &&
      st != EVRT_ERROR_TASK_FAILED && st != EVRT_ERROR_ABORTED)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  m = acl__map_del(&acl__streams, id);
  if (m)
    acl__stream_removed(m);
  pthread_mutex_unlock(&acl__lock);
  if (!m) /* another thread destroyed it meanwhile */
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "stream %p already destroyed", stream);
  acl__stream_detach(m); /* queued callbacks are released, not run */
  free(m);
  return acl__st(evrt_stream_destroy(h), fn);
}

aclError aclrtDestroyStream(aclrtStream stream) {
  return destroy("aclrtDestroyStream", stream, true);
}

aclError aclrtDestroyStreamForce(aclrtStream stream) {
  return destroy("aclrtDestroyStreamForce", stream, false);
}

/* A stream wait that timed out (aclrtSetOpWaitTimeout or
 * aclrtStreamWaitEventWithTimeout) lets the stream go on in evrt; ACL
 * surfaces it at the next synchronize. */
static aclError report_wait_failures(const char *fn, evrt_stream_t h) {
  uint64_t id, n = 0;
  if (evrt_stream_get_id(h, &id) || evrt_stream_wait_failures(h, &n))
    return ACL_SUCCESS;
  pthread_mutex_lock(&acl__lock);
  struct acl__stream *m = acl__map_get(&acl__streams, id);
  uint64_t seen = m ? m->seen_wait_failures : n;
  if (m)
    m->seen_wait_failures = n;
  pthread_mutex_unlock(&acl__lock);
  if (n > seen)
    return acl__fail(ACL_ERROR_RT_WAIT_TIMEOUT, fn,
                          "%llu event wait(s) on this stream timed out",
                          (unsigned long long)(n - seen));
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  static const char fn[] = "aclrtSynchronizeStreamWithTimeout";
  if (timeout < -1 || timeout == 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %d: must be -1 (forever) or > 0 ms",
                          (int)timeout);
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_synchronize_timeout(
      h, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
  if (st == EVRT_ERROR_TASK_FAILED || st == EVRT_ERROR_ABORTED)
    return acl__task_error(h, st, fn); /* reported: cleared */
  if (st)
    return acl__st2(st, EVRT_ERROR_TIMEOUT,
                         ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn);
  return report_wait_failures(fn, h);
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  static const char fn[] = "aclrtSynchronizeStream";
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_synchronize(h);
  if (st == EVRT_ERROR_TASK_FAILED || st == EVRT_ERROR_ABORTED)
    return acl__task_error(h, st, fn); /* reported: cleared */
  if (st)
    return acl__st(st, fn);
  return report_wait_failures(fn, h);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  static const char fn[] = "aclrtStreamQuery";
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_query(h);
  if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
    return acl__st(st, fn);
  *status = st == EVRT_SUCCESS ? ACL_STREAM_STATUS_COMPLETE
                               : ACL_STREAM_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  static const char fn[] = "aclrtSetStreamFailureMode";
  if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "mode %llu is neither ACL_CONTINUE_ON_FAILURE nor "
                          "ACL_STOP_ON_FAILURE",
                          (unsigned long long)mode);
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  if (m)
    m->failure_mode = mode;
  pthread_mutex_unlock(&acl__lock);
  /* evrt skips the stream's tasks after a failure until it is cleared */
  return acl__st(evrt_stream_set_failure_mode(
                     h, mode == ACL_STOP_ON_FAILURE ? EVRT_FAILURE_STOP
                                                    : EVRT_FAILURE_CONTINUE),
                 fn);
}

struct dev_streams {
  int device;
  evrt_stream_t *v;
  size_t n, cap;
};
static void collect_dev(uint64_t id, void *val, void *arg) {
  (void)id;
  struct acl__stream *m = val;
  struct dev_streams *d = arg;
  if (m->ctx->device == d->device && d->n < d->cap)
    d->v[d->n++] = m->handle;
}

void acl__clear_device_errors(int device) {
  struct dev_streams d = {.device = device, .cap = 4096};
  d.v = malloc(d.cap * sizeof *d.v);
  if (!d.v)
    return;
  pthread_mutex_lock(&acl__lock);
  acl__map_each(acl__streams, collect_dev, &d);
  pthread_mutex_unlock(&acl__lock);
  for (size_t i = 0; i < d.n; i++)
    evrt_stream_clear_error(d.v[i], NULL); /* destroyed meanwhile: fine */
  free(d.v);
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId) {
  static const char fn[] = "aclrtStreamGetId";
  if (!streamId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "streamId is NULL");
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return acl__st(st, fn);
  int32_t v = acl__stream_acl_id(id);
  /* A stream the layer did not create (a native evrt stream) keeps evrt's
   * process-wide id. */
  *streamId = v >= 0 ? v : (int32_t)(id & 0x7fffffff);
  return ACL_SUCCESS;
}

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount) {
  static const char fn[] = "aclrtGetStreamAvailableNum";
  if (!streamCount)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "streamCount is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  unsigned used = acl__stream_count[c->device];
  pthread_mutex_unlock(&acl__lock);
  *streamCount = used >= ACL__STREAM_LIMIT ? 0 : ACL__STREAM_LIMIT - used;
  return ACL_SUCCESS;
}
