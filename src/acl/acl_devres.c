/*
 * acl_devres.c - device and stream resource limits (cube and vector cores),
 * the process-wide device limits (stack and printf sizes), peer access
 * between devices and aclrtGetMemInfo.
 *
 * Resource limits are bookkeeping: the CPU backend does not partition its
 * workers by "core", so a limit is stored, checked against the virtual
 * device's core counts and read back with CANN's precedence (the stream the
 * thread uses > the process limit of the device > the hardware count).
 * Peer access is a table of enabled (device -> peer) pairs; memory of every
 * virtual device is host memory, so copies between devices work whether or
 * not it is enabled (docs/acl.md).
 *
 * Locks: res_lock guards dev_res, peer and limits; it is a leaf lock, never
 * held across an evrt call.  Stream limits live in the stream's side-table
 * entry under acl__lock.
 */
#include "acl_internal.h"

static ACL__MUTEX(res_lock)
static uint32_t dev_res[ACL__MAX_DEVICES][2]; /* 0 = not set */
static bool peer[ACL__MAX_DEVICES][ACL__MAX_DEVICES];
/* The stream whose limits this thread uses (aclrtUseStreamResInCurrentThread). */
static _Thread_local evrt_stream_t tls_res_stream;

static uint32_t hw_res(int type) {
  return type == ACL_RT_DEV_RES_CUBE_CORE ? acl__soc.cube_core
                                          : acl__soc.vector_core;
}

static aclError check_type(const char *fn, aclrtDevResLimitType type) {
  if ((unsigned)type > ACL_RT_DEV_RES_VECTOR_CORE)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "resource type %d is not in [0, 2)", (int)type);
  return ACL_SUCCESS;
}

/* Limits are stored with 0 meaning "not set"; a set limit of 0 cores is
 * stored as UINT32_MAX (above any core count). */
static uint32_t stored(uint32_t v) { return v == UINT32_MAX ? 0 : v; }

/* The process limit of the device, else the hardware count. */
static uint32_t device_res(int dev, int type) {
  pthread_mutex_lock(&res_lock);
  uint32_t v = dev_res[dev][type];
  pthread_mutex_unlock(&res_lock);
  return v ? stored(v) : hw_res(type);
}

/* ------------------------------------------------- device res limits */

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
                                uint32_t *value) {
  static const char fn[] = "aclrtGetDeviceResLimit";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  aclError r = check_type(fn, type);
  if (r)
    return r;
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  *value = device_res(deviceId, type);
  return ACL_SUCCESS;
}

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
                                uint32_t value) {
  static const char fn[] = "aclrtSetDeviceResLimit";
  aclError r = check_type(fn, type);
  if (r)
    return r;
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  if (value > hw_res(type))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "value %u exceeds the %u cores of the device", value,
                     hw_res(type));
  pthread_mutex_lock(&res_lock);
  dev_res[deviceId][type] = value ? value : UINT32_MAX;
  pthread_mutex_unlock(&res_lock);
  return ACL_SUCCESS;
}

aclError aclrtResetDeviceResLimit(int32_t deviceId) {
  static const char fn[] = "aclrtResetDeviceResLimit";
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  pthread_mutex_lock(&res_lock);
  dev_res[deviceId][0] = dev_res[deviceId][1] = 0;
  pthread_mutex_unlock(&res_lock);
  return ACL_SUCCESS;
}

/* ------------------------------------------------- stream res limits */

/* The stream's side-table entry with acl__lock held, or an error (no lock
 * held).  NULL means the current context's default stream. */
static aclError stream_meta(const char *fn, aclrtStream stream,
                            struct acl__stream **m) {
  evrt_stream_t h;
  aclError r = acl__stream_locked(fn, stream, &h, m);
  if (r)
    return r;
  if (!*m) {
    pthread_mutex_unlock(&acl__lock);
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "stream %p was not created by this layer", stream);
  }
  return ACL_SUCCESS;
}

aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
                                uint32_t value) {
  static const char fn[] = "aclrtSetStreamResLimit";
  aclError r = check_type(fn, type);
  if (r)
    return r;
  if (value > hw_res(type))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "value %u exceeds the %u cores of the device", value,
                     hw_res(type));
  struct acl__stream *m;
  if ((r = stream_meta(fn, stream, &m)))
    return r;
  m->res_limit[type] = value ? value : UINT32_MAX;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclrtResetStreamResLimit(aclrtStream stream) {
  static const char fn[] = "aclrtResetStreamResLimit";
  struct acl__stream *m;
  aclError r = stream_meta(fn, stream, &m);
  if (r)
    return r;
  m->res_limit[0] = m->res_limit[1] = 0;
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
                                uint32_t *value) {
  static const char fn[] = "aclrtGetStreamResLimit";
  aclError r = check_type(fn, type);
  if (r)
    return r;
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  struct acl__stream *m;
  if ((r = stream_meta(fn, stream, &m)))
    return r;
  uint32_t v = m->res_limit[type];
  int dev = m->ctx->device;
  pthread_mutex_unlock(&acl__lock);
  *value = v ? stored(v) : device_res(dev, type);
  return ACL_SUCCESS;
}

aclError aclrtUseStreamResInCurrentThread(aclrtStream stream) {
  static const char fn[] = "aclrtUseStreamResInCurrentThread";
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return acl__st(st, fn);
  tls_res_stream = h;
  return ACL_SUCCESS;
}

aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream) {
  static const char fn[] = "aclrtUnuseStreamResInCurrentThread";
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  if (tls_res_stream == h) /* another stream: nothing to undo (CANN) */
    tls_res_stream = NULL;
  return ACL_SUCCESS;
}

aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type,
                                    uint32_t *value) {
  static const char fn[] = "aclrtGetResInCurrentThread";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  aclError r = check_type(fn, type);
  if (r)
    return r;
  if (tls_res_stream) {
    uint64_t id;
    uint32_t v = 0;
    if (evrt_stream_get_id(tls_res_stream, &id) == EVRT_SUCCESS) {
      pthread_mutex_lock(&acl__lock);
      struct acl__stream *m = acl__map_get(&acl__streams, id);
      if (m)
        v = m->res_limit[type];
      pthread_mutex_unlock(&acl__lock);
    }
    if (v) {
      *value = stored(v);
      return ACL_SUCCESS;
    }
  }
  struct acl__ctx *c;
  if ((r = acl__current(fn, &c)))
    return r;
  *value = device_res(c->device, type);
  return ACL_SUCCESS;
}

/* ------------------------------------------------------ device limits */

/* Process-wide, shared by every device (CANN: set through device 0).  The
 * SIMT limits do not exist on the 910B: 207000.  Values are rounded as the
 * aclrtDeviceLimit reference says. */
static size_t simd_stack = 32768, simd_printf = 32768;

aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value) {
  static const char fn[] = "aclrtDeviceSetLimit";
  if ((unsigned)limit > ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE ||
      value > UINT32_MAX)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "limit %d / value %zu out of range", (int)limit, value);
  switch (limit) {
  case ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE:
    if (value > 196608)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "SIMD stack size %zu is above 196608", value);
    pthread_mutex_lock(&res_lock);
    simd_stack = value <= 32768 ? 32768 : (value + 16383) / 16384 * 16384;
    pthread_mutex_unlock(&res_lock);
    return ACL_SUCCESS;
  case ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE:
    if (value < 1024 || value > 67108864)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "printf FIFO size %zu is outside [1024, 67108864]",
                       value);
    pthread_mutex_lock(&res_lock);
    simd_printf = (value + 7) / 8 * 8;
    pthread_mutex_unlock(&res_lock);
    return ACL_SUCCESS;
  default:
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "SIMT limits are not supported on %s", acl__soc.name);
  }
}

aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t *value) {
  static const char fn[] = "aclrtDeviceGetLimit";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  if ((unsigned)limit > ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "limit %d out of range",
                     (int)limit);
  if (limit != ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE &&
      limit != ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "SIMT limits are not supported on %s", acl__soc.name);
  pthread_mutex_lock(&res_lock);
  *value = limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE ? simd_stack
                                                     : simd_printf;
  pthread_mutex_unlock(&res_lock);
  return ACL_SUCCESS;
}

/* -------------------------------------------------------- peer access */

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId,
                                  int32_t peerDeviceId) {
  static const char fn[] = "aclrtDeviceCanAccessPeer";
  if (deviceId == peerDeviceId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "deviceId %d cannot be equal to peerDeviceId %d",
                     (int)deviceId, (int)peerDeviceId);
  if (!acl__device_ok(peerDeviceId))
    return acl__bad_device(fn, peerDeviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_PARAM_INVALID);
  if (!canAccessPeer)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "canAccessPeer is NULL");
  *canAccessPeer = 1; /* all virtual devices share the host's memory */
  return ACL_SUCCESS;
}

static aclError set_peer(const char *fn, int32_t peerDeviceId, bool on) {
  struct acl__ctx *c;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  if (c->device == peerDeviceId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "deviceId %d cannot be equal to peerDeviceId %d",
                     c->device, (int)peerDeviceId);
  if (!acl__device_ok(peerDeviceId))
    return acl__bad_device(fn, peerDeviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  pthread_mutex_lock(&res_lock);
  peer[c->device][peerDeviceId] = on;
  pthread_mutex_unlock(&res_lock);
  return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  static const char fn[] = "aclrtDeviceEnablePeerAccess";
  if (flags != 0)
    return acl__fail(ACL_ERROR_FEATURE_UNSUPPORTED, fn,
                     "flags is reserved and must be 0 (got %u)", flags);
  return set_peer(fn, peerDeviceId, true);
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  return set_peer("aclrtDeviceDisablePeerAccess", peerDeviceId, false);
}

aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId,
                                     int32_t *status) {
  static const char fn[] = "aclrtDevicePeerAccessStatus";
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  if (!acl__device_ok(deviceId) || !acl__device_ok(peerDeviceId))
    return acl__bad_device(fn, acl__device_ok(deviceId) ? peerDeviceId
                                                        : deviceId,
                           ACL_ERROR_RT_PARAM_INVALID);
  pthread_mutex_lock(&res_lock);
  *status = peer[deviceId][peerDeviceId];
  pthread_mutex_unlock(&res_lock);
  return ACL_SUCCESS;
}

/* The virtual devices share one host: every pair, and a device with
 * itself (CANN reports HCCS there too), is ACL_RT_DEVS_TOPOLOGY_HCCS. */
aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId,
                             uint64_t *value) {
  static const char fn[] = "aclrtGetDevicesTopo";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  if (!acl__device_ok(deviceId) || !acl__device_ok(otherDeviceId))
    return acl__bad_device(fn, acl__device_ok(deviceId) ? otherDeviceId
                                                        : deviceId,
                           ACL_ERROR_RT_INVALID_DEVICEID);
  *value = ACL_RT_DEVS_TOPOLOGY_HCCS;
  return ACL_SUCCESS;
}

/* ------------------------------------------------------------ memory */

/* Every memory attribute (DDR, HBM, huge, normal, P2P) is the host's RAM;
 * free is what the kernel reports free (free + buffers). */
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total) {
  static const char fn[] = "aclrtGetMemInfo";
  if (!free || !total)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     free ? "total" : "free");
  if ((unsigned)attr > ACL_MEM_P2P_HUGE1G)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "unknown memory attribute %d", (int)attr);
  struct acl__ctx *c;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  acl__host_memory(free, total);
  return ACL_SUCCESS;
}
