/*
 * acl_stream.c - streams.  An aclrtStream is an evrt_stream_t; NULL is the
 * default stream of the calling thread's current context.  The side table
 * (evrt__acl_streams, under evrt__acl_lock) keeps what ACL adds: the owning
 * context, flags, failure mode, the callback subscription and how many
 * timed-out waits the last synchronize already reported.
 */
#include "acl_internal.h"

#include <stdlib.h>

struct evrt__acl_map *evrt__acl_streams;
unsigned evrt__acl_stream_count[ACL__MAX_DEVICES];

int evrt__acl_stream_add(evrt_stream_t h, struct evrt__acl_ctx *ctx,
                         uint32_t flags, uint32_t priority, bool is_default) {
  uint64_t id;
  if (evrt_stream_get_id(h, &id))
    return -1;
  struct evrt__acl_stream *m = calloc(1, sizeof *m);
  if (!m)
    return -1;
  m->ctx = ctx;
  m->handle = h;
  m->flags = flags;
  m->priority = priority;
  m->is_default = is_default;
  if (evrt__acl_map_put(&evrt__acl_streams, id, m)) {
    free(m);
    return -1;
  }
  evrt__acl_stream_count[ctx->device]++;
  return 0;
}

aclError evrt__acl_stream(const char *fn, aclrtStream s, evrt_stream_t *h) {
  if (s) {
    *h = (evrt_stream_t)s;
    return ACL_SUCCESS;
  }
  struct evrt__acl_ctx *c = NULL;
  aclError r = evrt__acl_current(fn, &c);
  if (r)
    return r;
  *h = c->def_stream;
  return ACL_SUCCESS;
}

aclError evrt__acl_stream_locked(const char *fn, aclrtStream s,
                                 evrt_stream_t *h,
                                 struct evrt__acl_stream **meta) {
  aclError r = evrt__acl_stream(fn, s, h);
  if (r)
    return r;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(*h, &id);
  if (st)
    return evrt__acl_st(st, fn);
  pthread_mutex_lock(&evrt__acl_lock);
  *meta = evrt__acl_map_get(&evrt__acl_streams, id);
  return ACL_SUCCESS;
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                     uint32_t flag) {
  static const char fn[] = "aclrtCreateStream";
  if (!stream)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  struct evrt__acl_ctx *c = NULL;
  aclError r = evrt__acl_current(fn, &c);
  if (r)
    return r;
  pthread_mutex_lock(&evrt__acl_lock);
  bool full = evrt__acl_stream_count[c->device] >= ACL__STREAM_LIMIT;
  pthread_mutex_unlock(&evrt__acl_lock);
  if (full)
    return evrt__acl_fail(ACL_ERROR_RT_NO_STREAM_RESOURCE, fn,
                          "device %d already has %u streams (the limit, "
                          "default streams included)",
                          c->device, ACL__STREAM_LIMIT);
  evrt_stream_t h;
  /* The ACL doc calls priority reserved and unused: it is only stored. */
  evrt_status_t st = evrt_stream_create(&h, c->device, 0, 0);
  if (st)
    return evrt__acl_st(st, fn);
  pthread_mutex_lock(&evrt__acl_lock);
  int bad = evrt__acl_stream_add(h, c, flag, priority, false);
  pthread_mutex_unlock(&evrt__acl_lock);
  if (bad) {
    evrt_stream_destroy(h);
    return evrt__acl_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *stream = (aclrtStream)h;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  return aclrtCreateStreamWithConfig(stream, 0, 0);
}

static aclError destroy(const char *fn, aclrtStream stream, bool wait) {
  if (!stream)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn,
                          "stream is NULL (the default stream cannot be "
                          "destroyed)");
  evrt_stream_t h = (evrt_stream_t)stream;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return evrt__acl_st(st, fn);
  pthread_mutex_lock(&evrt__acl_lock);
  struct evrt__acl_stream *m = evrt__acl_map_get(&evrt__acl_streams, id);
  if (!m || m->is_default) {
    pthread_mutex_unlock(&evrt__acl_lock);
    return evrt__acl_fail(m ? ACL_ERROR_RT_PARAM_INVALID
                            : ACL_ERROR_RT_INVALID_HANDLE,
                          fn, "%s", m ? "a context's default stream cannot be "
                                        "destroyed"
                                      : "stream was not created by "
                                        "aclrtCreateStream");
  }
  pthread_mutex_unlock(&evrt__acl_lock);
  if (wait && (st = evrt_stream_synchronize(h)))
    return evrt__acl_st(st, fn);
  pthread_mutex_lock(&evrt__acl_lock);
  m = evrt__acl_map_del(&evrt__acl_streams, id);
  if (m && evrt__acl_stream_count[m->ctx->device])
    evrt__acl_stream_count[m->ctx->device]--;
  pthread_mutex_unlock(&evrt__acl_lock);
  if (!m) /* another thread destroyed it meanwhile */
    return evrt__acl_fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "stream %p already destroyed", stream);
  free(m);
  return evrt__acl_st(evrt_stream_destroy(h), fn);
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
  pthread_mutex_lock(&evrt__acl_lock);
  struct evrt__acl_stream *m = evrt__acl_map_get(&evrt__acl_streams, id);
  uint64_t seen = m ? m->seen_wait_failures : n;
  if (m)
    m->seen_wait_failures = n;
  pthread_mutex_unlock(&evrt__acl_lock);
  if (n > seen)
    return evrt__acl_fail(ACL_ERROR_RT_WAIT_TIMEOUT, fn,
                          "%llu event wait(s) on this stream timed out",
                          (unsigned long long)(n - seen));
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  static const char fn[] = "aclrtSynchronizeStreamWithTimeout";
  if (timeout < -1 || timeout == 0)
    return evrt__acl_fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %d: must be -1 (forever) or > 0 ms",
                          (int)timeout);
  evrt_stream_t h;
  aclError r = evrt__acl_stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_synchronize_timeout(
      h, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
  if (st)
    return evrt__acl_st2(st, EVRT_ERROR_TIMEOUT,
                         ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn);
  return report_wait_failures(fn, h);
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  static const char fn[] = "aclrtSynchronizeStream";
  evrt_stream_t h;
  aclError r = evrt__acl_stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_synchronize(h);
  if (st)
    return evrt__acl_st(st, fn);
  return report_wait_failures(fn, h);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  static const char fn[] = "aclrtStreamQuery";
  if (!status)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  evrt_stream_t h;
  aclError r = evrt__acl_stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_query(h);
  if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
    return evrt__acl_st(st, fn);
  *status = st == EVRT_SUCCESS ? ACL_STREAM_STATUS_COMPLETE
                               : ACL_STREAM_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  static const char fn[] = "aclrtSetStreamFailureMode";
  if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn,
                          "mode %llu is neither ACL_CONTINUE_ON_FAILURE nor "
                          "ACL_STOP_ON_FAILURE",
                          (unsigned long long)mode);
  evrt_stream_t h;
  struct evrt__acl_stream *m;
  aclError r = evrt__acl_stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  if (m)
    m->failure_mode = mode;
  pthread_mutex_unlock(&evrt__acl_lock);
  return ACL_SUCCESS;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId) {
  static const char fn[] = "aclrtStreamGetId";
  if (!streamId)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn, "streamId is NULL");
  evrt_stream_t h;
  aclError r = evrt__acl_stream(fn, stream, &h);
  if (r)
    return r;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return evrt__acl_st(st, fn);
  *streamId = (int32_t)(id & 0x7fffffff);
  return ACL_SUCCESS;
}

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount) {
  static const char fn[] = "aclrtGetStreamAvailableNum";
  if (!streamCount)
    return evrt__acl_fail(ACL_ERROR_INVALID_PARAM, fn, "streamCount is NULL");
  struct evrt__acl_ctx *c = NULL;
  aclError r = evrt__acl_current(fn, &c);
  if (r)
    return r;
  pthread_mutex_lock(&evrt__acl_lock);
  unsigned used = evrt__acl_stream_count[c->device];
  pthread_mutex_unlock(&evrt__acl_lock);
  *streamCount = used >= ACL__STREAM_LIMIT ? 0 : ACL__STREAM_LIMIT - used;
  return ACL_SUCCESS;
}
