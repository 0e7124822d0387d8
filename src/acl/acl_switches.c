/*
 * acl_switches.c - the floating-point overflow and saturation switches and
 * the runtime parameters (deterministic computing and the others of
 * aclSysParamOpt): stored, read back, and used by the built-in tasks.
 *
 *  - Saturation mode: per device, default ACL_RT_OVERFLOW_MODE_INFNAN (the
 *    A2's).  aclrtReduceAsync on fp16/bf16/fp32 follows the mode of its
 *    device when it is enqueued: an overflow saturates to the largest
 *    finite value, or gives +-Inf.
 *  - Overflow status: one process-level word (CANN: process level on
 *    A2/A3).  A built-in task whose result overflows sets it when its
 *    stream's overflow switch is on; aclrtGetOverflowStatus copies it (as a
 *    task) into the caller's 64 bytes, aclrtResetOverflowStatus clears it
 *    (as a task).
 *  - Runtime parameters: process values default to 0; context values have
 *    no default (107021 until set).
 *
 * Lock: sw_lock, a leaf mutex, guards the modes and parameter tables; the
 * overflow word is an atomic.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

static ACL__MUTEX(sw_lock)
static int sat_mode_set[ACL__MAX_DEVICES]; /* 0 = default, else mode + 1 */
/* relaxed is enough: the word carries no other data, and the tasks that
 * read and write it are ordered by their streams */
static atomic_uint overflow_status;

#define N_OPTS 4 /* aclSysParamOpt values 0..3 */
static int64_t proc_opt[N_OPTS];
static struct acl__map *ctx_opts; /* context address -> int64_t[N_OPTS+1] */

/* ------------------------------------------------------ saturation mode */

aclrtFloatOverflowMode acl__sat_mode(void) {
  struct acl__ctx *c = acl__current_quiet();
  int dev = c ? c->device : 0;
  pthread_mutex_lock(&sw_lock);
  int m = sat_mode_set[dev];
  pthread_mutex_unlock(&sw_lock);
  return m ? (aclrtFloatOverflowMode)(m - 1) : ACL_RT_OVERFLOW_MODE_INFNAN;
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
  static const char fn[] = "aclrtSetDeviceSatMode";
  if (mode != ACL_RT_OVERFLOW_MODE_SATURATION &&
      mode != ACL_RT_OVERFLOW_MODE_INFNAN)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "mode %d is neither SATURATION nor INFNAN", (int)mode);
  struct acl__ctx *c;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  pthread_mutex_lock(&sw_lock);
  sat_mode_set[c->device] = (int)mode + 1;
  pthread_mutex_unlock(&sw_lock);
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode) {
  static const char fn[] = "aclrtGetDeviceSatMode";
  if (!mode)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "mode is NULL");
  struct acl__ctx *c;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  *mode = acl__sat_mode();
  return ACL_SUCCESS;
}

/* ------------------------------------------------------ overflow switch */

/* No error is recorded here: it is an internal probe of a stream the
 * caller's own call goes on to validate. */
uint32_t acl__stream_overflow_switch(aclrtStream s) {
  evrt_stream_t h = (evrt_stream_t)s;
  if (!h) {
    struct acl__ctx *c = acl__current_quiet();
    if (!c)
      return 0;
    h = c->def_stream;
  }
  uint64_t id;
  if (evrt_stream_get_id(h, &id) != EVRT_SUCCESS)
    return 0;
  pthread_mutex_lock(&acl__lock);
  struct acl__stream *m = acl__map_get(&acl__streams, id);
  uint32_t v = m ? m->overflow_switch : 0;
  pthread_mutex_unlock(&acl__lock);
  return v;
}

void acl__note_overflow(void) {
  atomic_store_explicit(&overflow_status, 1, memory_order_relaxed);
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag) {
  static const char fn[] = "aclrtSetStreamOverflowSwitch";
  if (flag > 1)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "flag %u is neither 0 nor 1", flag);
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  if (m)
    m->overflow_switch = flag;
  pthread_mutex_unlock(&acl__lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "stream %p was not created by this layer", stream);
  return ACL_SUCCESS;
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag) {
  static const char fn[] = "aclrtGetStreamOverflowSwitch";
  if (!flag)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "flag is NULL");
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  uint32_t v = m ? m->overflow_switch : 0;
  pthread_mutex_unlock(&acl__lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "stream %p was not created by this layer", stream);
  *flag = v;
  return ACL_SUCCESS;
}

struct status_task {
  void *out;
  size_t size;
};

static void run_get_status(void *arg) {
  struct status_task *t = arg;
  uint32_t v = atomic_load_explicit(&overflow_status, memory_order_relaxed);
  memset(t->out, 0, t->size);
  memcpy(t->out, &v, sizeof v);
  free(t);
}

static void run_reset_status(void *arg) {
  (void)arg;
  atomic_store_explicit(&overflow_status, 0, memory_order_relaxed);
}

/* The status word goes first in the 64 bytes CANN documents. */
aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize,
                                aclrtStream stream) {
  static const char fn[] = "aclrtGetOverflowStatus";
  if (!outputAddr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "outputAddr is NULL");
  if (outputSize < 64)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "outputSize %zu: the status takes 64 bytes", outputSize);
  if (!acl__is_acl_memory(outputAddr, 64))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "outputAddr must be 64 bytes of device memory");
  struct status_task *t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *t = (struct status_task){outputAddr, 64};
  return acl__enqueue_task(fn, stream, run_get_status, t, false);
}

aclError aclrtResetOverflowStatus(aclrtStream stream) {
  static const char fn[] = "aclrtResetOverflowStatus";
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  return acl__st(evrt_launch_host_func_labeled(h, run_reset_status, NULL, fn),
                 fn);
}

/* --------------------------------------------------- runtime parameters */

static aclError check_opt(const char *fn, aclSysParamOpt opt, bool ctx) {
  int o = (int)opt;
  if (o < 0 || o >= (ctx ? 3 : N_OPTS))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "option %d is not supported here", o);
  return ACL_SUCCESS;
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  aclError r = check_opt("aclrtSetSysParamOpt", opt, false);
  if (r)
    return r;
  pthread_mutex_lock(&sw_lock);
  proc_opt[opt] = value;
  pthread_mutex_unlock(&sw_lock);
  return ACL_SUCCESS;
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
  static const char fn[] = "aclrtGetSysParamOpt";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  aclError r = check_opt(fn, opt, false);
  if (r)
    return r;
  pthread_mutex_lock(&sw_lock);
  *value = proc_opt[opt];
  pthread_mutex_unlock(&sw_lock);
  return ACL_SUCCESS;
}

/* Per context: slot N_OPTS is a bit mask of the options set. */
aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  static const char fn[] = "aclrtCtxSetSysParamOpt";
  aclError r = check_opt(fn, opt, true);
  if (r)
    return r;
  struct acl__ctx *c;
  if ((r = acl__current(fn, &c)))
    return r;
  pthread_mutex_lock(&sw_lock);
  int64_t *v = acl__map_get(&ctx_opts, (uint64_t)(uintptr_t)c);
  if (!v && (v = calloc(N_OPTS + 1, sizeof *v)) &&
      acl__map_put(&ctx_opts, (uint64_t)(uintptr_t)c, v)) {
    free(v);
    v = NULL;
  }
  if (v) {
    v[opt] = value;
    v[N_OPTS] |= 1 << opt;
  }
  pthread_mutex_unlock(&sw_lock);
  if (!v)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  return ACL_SUCCESS;
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
  static const char fn[] = "aclrtCtxGetSysParamOpt";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  aclError r = check_opt(fn, opt, true);
  if (r)
    return r;
  struct acl__ctx *c;
  if ((r = acl__current(fn, &c)))
    return r;
  pthread_mutex_lock(&sw_lock);
  int64_t *v = acl__map_get(&ctx_opts, (uint64_t)(uintptr_t)c);
  bool set = v && (v[N_OPTS] & (1 << opt));
  if (set)
    *value = v[opt];
  pthread_mutex_unlock(&sw_lock);
  if (!set)
    return acl__fail(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, fn,
                     "option %d was not set in this context", (int)opt);
  return ACL_SUCCESS;
}
