/*
 * acl_device.c - aclInit/aclFinalize, devices, contexts, run mode and the
 * operation-timeout settings.
 *
 * A device set by aclrtSetDevice has one default context per process
 * (shared by every thread that sets it), reference-counted by
 * aclrtSetDevice/aclrtResetDevice; its default stream is evrt's default
 * stream of the device.  aclrtCreateContext makes an explicit context whose
 * default stream is a stream of its own.  Context objects are never freed
 * (dead ones stay on the list) so that a thread-local current-context
 * pointer left behind by another thread's reset can always be tested.
 */
#include "acl_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define CTX_MAGIC 0x61636c63u /* "aclc" */

ACL__MUTEX(acl__lock)
atomic_uint acl__op_wait_timeout;

static unsigned init_count;   /* under acl__lock */
static int dev_refs[ACL__MAX_DEVICES];
static struct acl__ctx *dev_ctx[ACL__MAX_DEVICES];
static struct acl__ctx *all_ctx;
static _Thread_local struct acl__ctx *tls_ctx;

static aclError check_device(const char *fn, int32_t dev) {
  int n = 0;
  evrt_status_t st = evrt_device_count(&n);
  if (st)
    return acl__st(st, fn);
  if (dev < 0 || dev >= n || dev >= ACL__MAX_DEVICES)
    return acl__fail(ACL_ERROR_RT_INVALID_DEVICEID, fn,
                          "device id %d is out of range (%d devices)", dev, n);
  return ACL_SUCCESS;
}

aclError acl__current(const char *fn, struct acl__ctx **ctx) {
  ACL__ENTER(fn);
  pthread_mutex_lock(&acl__lock);
  struct acl__ctx *c = tls_ctx;
  bool ok = c && c->alive;
  pthread_mutex_unlock(&acl__lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_CONTEXT_NULL, fn,
                          "no current context: call aclrtSetDevice or "
                          "aclrtSetCurrentContext first");
  *ctx = c;
  return ACL_SUCCESS;
}

struct acl__ctx *acl__current_quiet(void) {
  pthread_mutex_lock(&acl__lock);
  struct acl__ctx *c = tls_ctx;
  if (c && !c->alive)
    c = NULL;
  pthread_mutex_unlock(&acl__lock);
  return c;
}

static struct acl__ctx *new_ctx(int dev, bool is_default,
                                     evrt_stream_t def) {
  struct acl__ctx *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->magic = CTX_MAGIC;
  c->device = dev;
  c->is_default = is_default;
  c->alive = true;
  c->def_stream = def;
  c->next = all_ctx;
  all_ctx = c;
  return c;
}

static bool ctx_valid(struct acl__ctx *c) {
  for (struct acl__ctx *x = all_ctx; x; x = x->next)
    if (x == c)
      return x->alive;
  return false;
}

/* ------------------------------------------------------------- init */

/* The config file's content (for the init callbacks), at most 1 MiB. */
static char *read_config(FILE *f, size_t *len) {
  char *buf = malloc((1u << 20) + 1);
  *len = buf ? fread(buf, 1, 1u << 20, f) : 0;
  if (buf)
    buf[*len] = '\0';
  return buf;
}

aclError aclInit(const char *configPath) {
  static const char fn[] = "aclInit";
  char *cfg = NULL;
  size_t cfg_len = 0;
  if (configPath && *configPath) {
    FILE *f = fopen(configPath, "r");
    if (!f)
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                            "cannot open config file '%s'", configPath);
    cfg = read_config(f, &cfg_len);
    fclose(f);
  }
  evrt_status_t st = evrt_init();
  if (st) {
    free(cfg);
    return acl__st(st, fn);
  }
  pthread_mutex_lock(&acl__lock);
  unsigned before = init_count++;
  pthread_mutex_unlock(&acl__lock);
  if (before) {
    free(cfg);
    return acl__fail(ACL_ERROR_REPEAT_INITIALIZE, fn,
                          "aclInit was already called (count now %u)",
                          before + 1);
  }
  /* the registered init callbacks (acl_initcb.c); a failing one fails
   * aclInit, which then counts as not called */
  aclError r = acl__notify_init(cfg ? cfg : "", cfg_len);
  free(cfg);
  if (r) {
    pthread_mutex_lock(&acl__lock);
    init_count--;
    pthread_mutex_unlock(&acl__lock);
  }
  return r;
}

static aclError reset_device(const char *fn, int32_t dev, bool force);

static aclError finalize_all(void) {
  for (int d = 0; d < ACL__MAX_DEVICES; d++) {
    pthread_mutex_lock(&acl__lock);
    bool set = dev_refs[d] > 0;
    pthread_mutex_unlock(&acl__lock);
    if (set)
      reset_device("aclFinalize", d, true);
  }
  return ACL_SUCCESS;
}

aclError aclFinalize(void) {
  ACL__ENTER("aclFinalize");
  pthread_mutex_lock(&acl__lock);
  unsigned n = init_count;
  init_count = 0;
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize",
                          "aclFinalize called without a matching aclInit");
  aclError r = acl__notify_finalize();
  finalize_all();
  return r;
}

aclError aclFinalizeReference(uint64_t *refCount) {
  ACL__ENTER("aclFinalizeReference");
  pthread_mutex_lock(&acl__lock);
  unsigned n = init_count;
  if (n)
    init_count = n - 1;
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference",
                          "called without a matching aclInit");
  if (refCount)
    *refCount = n - 1;
  if (n != 1)
    return ACL_SUCCESS;
  aclError r = acl__notify_finalize();
  finalize_all();
  return r;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode) {
  if (!runMode)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode",
                          "runMode is NULL");
  *runMode = ACL_HOST; /* the program runs on the host; the cpu backend
                          plays the device */
  return ACL_SUCCESS;
}

/* ---------------------------------------------------------- devices */

aclError aclrtGetDeviceCount(uint32_t *count) {
  static const char fn[] = "aclrtGetDeviceCount";
  if (!count)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "count is NULL");
  int n = 0;
  evrt_status_t st = evrt_device_count(&n);
  if (st)
    return acl__st(st, fn);
  *count = (uint32_t)(n > ACL__MAX_DEVICES ? ACL__MAX_DEVICES : n);
  return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
  static const char fn[] = "aclrtSetDevice";
  aclError r = check_device(fn, deviceId);
  if (r)
    return r;
  evrt_stream_t def;
  evrt_status_t st = evrt_stream_default(deviceId, &def);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  struct acl__ctx *c = dev_ctx[deviceId];
  if (!c || !c->alive) {
    c = new_ctx(deviceId, true, def);
    if (!c || acl__stream_add(def, c, 0, 0, true)) {
      if (c)
        c->alive = false;
      pthread_mutex_unlock(&acl__lock);
      return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                            "cannot allocate the default context");
    }
    dev_ctx[deviceId] = c;
  }
  dev_refs[deviceId]++;
  tls_ctx = c;
  pthread_mutex_unlock(&acl__lock);
  evrt_set_device(deviceId);
  acl__failure_init();
  return ACL_SUCCESS;
}

struct kill_arg {
  struct acl__ctx *ctx;
  evrt_stream_t list[64];
  uint64_t ids[64];
  int n;
};

static void collect(uint64_t id, void *v, void *argp) {
  struct acl__stream *m = v;
  struct kill_arg *a = argp;
  if (m->ctx == a->ctx && a->n < 64) {
    a->ids[a->n] = id;
    a->list[a->n++] = m->handle;
  }
}

/* Synchronize and destroy every stream of ctx (its own default stream too
 * unless it is evrt's device default).  Takes and releases the lock. */
static void destroy_ctx_streams(struct acl__ctx *ctx) {
  for (;;) {
    struct kill_arg a = {.ctx = ctx};
    pthread_mutex_lock(&acl__lock);
    acl__map_each(acl__streams, collect, &a);
    struct acl__stream *gone[64];
    for (int i = 0; i < a.n; i++) {
      struct acl__stream *m = acl__map_del(&acl__streams, a.ids[i]);
      acl__stream_removed(m);
      if (m->is_default && ctx->is_default)
        a.list[i] = NULL;
      gone[i] = m;
    }
    pthread_mutex_unlock(&acl__lock);
    /* Callbacks still queued for a subscribed thread are released, or the
     * synchronize below would wait for them for ever. */
    for (int i = 0; i < a.n; i++) {
      acl__stream_detach(gone[i]);
      free(gone[i]);
    }
    if (!a.n)
      return;
    for (int i = 0; i < a.n; i++)
      if (a.list[i]) {
        evrt_stream_synchronize(a.list[i]);
        evrt_stream_destroy(a.list[i]);
      }
  }
}

static aclError reset_device(const char *fn, int32_t dev, bool force) {
  aclError r = check_device(fn, dev);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  if (dev_refs[dev] <= 0) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "device %d was not set by aclrtSetDevice", dev);
  }
  dev_refs[dev] = force ? 0 : dev_refs[dev] - 1;
  struct acl__ctx *c = dev_refs[dev] == 0 ? dev_ctx[dev] : NULL;
  pthread_mutex_unlock(&acl__lock);
  if (!c)
    return ACL_SUCCESS;
  /* Last reference: wait for the device's work, free the default context
   * and the streams made in it.  Callbacks still queued for subscribed
   * threads are released first, or the wait would never end. */
  acl__ctx_detach(c);
  evrt_device_synchronize(dev);
  destroy_ctx_streams(c);
  pthread_mutex_lock(&acl__lock);
  c->alive = false;
  if (dev_ctx[dev] == c)
    dev_ctx[dev] = NULL;
  if (tls_ctx == c)
    tls_ctx = NULL;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
  return reset_device("aclrtResetDevice", deviceId, false);
}

aclError aclrtResetDeviceForce(int32_t deviceId) {
  return reset_device("aclrtResetDeviceForce", deviceId, true);
}

/* The default (primary) context of a device is active from its first
 * aclrtSetDevice to its last reset (CANN's aclrtGetPrimaryCtxState: flags is
 * reserved and must be NULL). */
aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags,
                                 int32_t *active) {
  static const char fn[] = "aclrtGetPrimaryCtxState";
  if (!active)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "active is NULL");
  if (flags)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flags is reserved and must be NULL");
  aclError r = check_device(fn, deviceId);
  if (r)
    return r;
  pthread_mutex_lock(&acl__lock);
  struct acl__ctx *c = dev_ctx[deviceId];
  *active = dev_refs[deviceId] > 0 && c && c->alive;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
  static const char fn[] = "aclrtGetDevice";
  if (!deviceId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "deviceId is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  *deviceId = c->device;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  return aclrtSynchronizeDeviceWithTimeout(-1);
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
  static const char fn[] = "aclrtSynchronizeDeviceWithTimeout";
  if (timeout < -1 || timeout == 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %d: must be -1 (forever) or > 0 ms",
                          (int)timeout);
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  /* Every stream of the device, the default and destroyed-but-draining
   * ones included (evrt_device_synchronize_timeout). */
  evrt_status_t st = evrt_device_synchronize_timeout(
      c->device, timeout == -1 ? -1 : (int64_t)timeout * 1000000);
  r = acl__st2(st, EVRT_ERROR_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, fn);
  /* A failed task's error, reported here, is cleared (as by the stream
   * synchronize). */
  if (st == EVRT_ERROR_TASK_FAILED || st == EVRT_ERROR_ABORTED)
    acl__clear_device_errors(c->device);
  return r;
}

/* --------------------------------------------------------- contexts */

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
  static const char fn[] = "aclrtCreateContext";
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "context is NULL");
  aclError r = check_device(fn, deviceId);
  if (r)
    return r;
  evrt_stream_t s;
  evrt_status_t st = evrt_stream_create(&s, deviceId, 0, 0);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  struct acl__ctx *c = new_ctx(deviceId, false, s);
  if (!c || acl__stream_add(s, c, 0, 0, true)) {
    if (c)
      c->alive = false;
    pthread_mutex_unlock(&acl__lock);
    evrt_stream_destroy(s);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                          "cannot allocate the context");
  }
  tls_ctx = c;
  pthread_mutex_unlock(&acl__lock);
  evrt_set_device(deviceId);
  acl__failure_init();
  *context = c;
  return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
  static const char fn[] = "aclrtDestroyContext";
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "context is NULL");
  ACL__ENTER(fn);
  struct acl__ctx *c = context;
  pthread_mutex_lock(&acl__lock);
  bool ok = ctx_valid(c);
  bool dflt = ok && c->is_default;
  if (ok && !dflt)
    c->alive = false; /* invalid for everyone from now on */
  if (ok && !dflt && tls_ctx == c)
    tls_ctx = NULL;
  pthread_mutex_unlock(&acl__lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "context %p is not a live context", context);
  if (dflt)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "the default context of a device is released by "
                          "aclrtResetDevice, not aclrtDestroyContext");
  destroy_ctx_streams(c);
  return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  static const char fn[] = "aclrtSetCurrentContext";
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "context is NULL");
  ACL__ENTER(fn);
  struct acl__ctx *c = context;
  pthread_mutex_lock(&acl__lock);
  bool ok = ctx_valid(c);
  if (ok)
    tls_ctx = c;
  pthread_mutex_unlock(&acl__lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "context %p is destroyed or not a context", context);
  evrt_set_device(c->device);
  return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
  static const char fn[] = "aclrtGetCurrentContext";
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "context is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  *context = c;
  return ACL_SUCCESS;
}

aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream) {
  static const char fn[] = "aclrtCtxGetCurrentDefaultStream";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  *stream = (aclrtStream)c->def_stream;
  return ACL_SUCCESS;
}

/* ---------------------------------------------------------- timeouts */

aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
  /* seconds; 0 = never; process-wide, the last call wins */
  atomic_store_explicit(&acl__op_wait_timeout, timeout,
                        memory_order_relaxed);
  return ACL_SUCCESS;
}

/* Operator execute timeouts (issue 13 item 14).  CANN's rule
 * (aclrtGetOpTimeOutInterval's doc): the effective timeout is interval * N,
 * N an integer in [1, 254]; a request is rounded up to the next multiple
 * and capped at 254 intervals; 0 asks for the maximum.  The interval is
 * the STARS kernel-credit scale of CANN's 910B/910_93 configuration,
 * 2^32 ns = 4294967 us, so 254 intervals are the documented default of
 * 1091 s.  (A CPU runtime does not enforce it: no task is killed.) */
#define OP_INTERVAL_US 4294967ull
#define OP_MAX_INTERVALS 254ull
/* effective timeout (us) last set; 0 = never set (the default) */
static atomic_uint_least64_t op_exec_us;

static uint64_t op_quantize(uint64_t us) {
  if (us == 0)
    return OP_INTERVAL_US * OP_MAX_INTERVALS;
  uint64_t n = us / OP_INTERVAL_US + (us % OP_INTERVAL_US != 0);
  if (n > OP_MAX_INTERVALS)
    n = OP_MAX_INTERVALS;
  return n * OP_INTERVAL_US;
}

static uint64_t op_set(uint64_t us) {
  uint64_t eff = op_quantize(us);
  atomic_store_explicit(&op_exec_us, eff, memory_order_relaxed);
  return eff;
}

aclError aclrtSetOpExecuteTimeOut(uint32_t timeout) { /* seconds */
  op_set((uint64_t)timeout * 1000000u);
  return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout) {
  op_set((uint64_t)timeout * 1000u);
  return ACL_SUCCESS;
}

aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout) {
  if (!actualTimeout)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtSetOpExecuteTimeOutV2",
                     "actualTimeout is NULL");
  /* microseconds; with an interval of 100 ms or more, 0 is the maximum
   * (not "never": the doc's UINT64_MAX case needs an interval under it) */
  *actualTimeout = op_set(timeout);
  return ACL_SUCCESS;
}

aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs) {
  if (!timeoutMs)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetOpExecuteTimeout",
                          "timeoutMs is NULL");
  uint64_t us = atomic_load_explicit(&op_exec_us, memory_order_relaxed);
  /* CANN: the effective time in ms once set; unset, the default rounded
   * up to whole ms */
  *timeoutMs = us ? (uint32_t)(us / 1000u)
                  : (uint32_t)((OP_INTERVAL_US * OP_MAX_INTERVALS + 999u) /
                               1000u);
  return ACL_SUCCESS;
}

aclError aclrtGetOpTimeOutInterval(uint64_t *interval) {
  if (!interval)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetOpTimeOutInterval",
                          "interval is NULL");
  *interval = OP_INTERVAL_US; /* microseconds */
  return ACL_SUCCESS;
}
