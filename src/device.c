/*
 * device.c - virtual devices of the cpu backend: count, current device per
 * thread, default streams and the per-device event-resource limit.
 */
#include "internal.h"

#include <stdlib.h>

int evrt__ndevices;
struct evrt__device *evrt__devices;
EVRT_TLS int evrt__tls_device;

#define EVRT__DEFAULT_EVENT_LIMIT 65535u

evrt_status_t evrt__devices_init(void) {
  int n = evrt__backend->device_count();
  unsigned limit = (unsigned)evrt__env_long("EVRT_EVENT_LIMIT",
                                      EVRT__DEFAULT_EVENT_LIMIT, 1, 1L << 30);
  struct evrt__device *d = evrt__calloc((size_t)n, sizeof *d);
  if (!d)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate devices");
  evrt__devices = d;
  evrt__ndevices = n;
  for (int i = 0; i < n; i++) {
    atomic_init(&d[i].ev_limit, limit);
    evrt_status_t st = evrt__stream_new(i, 0, true, &d[i].def);
    if (st != EVRT_SUCCESS)
      return st;
  }
  return EVRT_SUCCESS;
}

static evrt_status_t check_device(int device) {
  if (EVRT_UNLIKELY(device < 0 || device >= evrt__ndevices))
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE,
                      "device %d out of range (the cpu backend has %d)",
                      device, evrt__ndevices);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_device_count(int *count) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!count)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "count is NULL");
  *count = evrt__ndevices;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_set_device(int device) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_device(device)))
    return st;
  evrt__tls_device = device;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_get_device(int *device) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!device)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "device is NULL");
  *device = evrt__tls_device;
  return EVRT_SUCCESS;
}

struct evrt__stream *evrt__stream_null_default(void) {
  return evrt__devices[evrt__tls_device].def;
}

evrt_status_t evrt_stream_default(int device, evrt_stream_t *stream) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (device == -1)
    device = evrt__tls_device;
  if ((st = check_device(device)))
    return st;
  if (!stream)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "stream is NULL");
  *stream = evrt__stream_handle(evrt__devices[device].def);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_device_synchronize(int device) {
  return evrt_device_synchronize_timeout(device, -1);
}

evrt_status_t evrt_device_synchronize_timeout(int device, int64_t timeout_ns) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_device(device)))
    return st;
  if (EVRT_UNLIKELY(evrt__any_capture()) &&
      evrt__capture_sync_device(device, &st))
    return st;
  if (evrt__tls_stream && evrt__tls_stream->device == device)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "device %d synchronized from a host function running "
                      "on one of its streams",
                      device);
  /* Wait for what every stream of the device had enqueued at this moment,
   * destroyed ones still draining included: as cudaDeviceSynchronize, the
   * call covers all work submitted to the device, and a destroy only gives
   * up the handle.  Slots are type-stable and their seqs only grow across
   * incarnations, so a slot freed or reused meanwhile is harmless: a free
   * one has done_seq >= enq_seq, and a target read from an earlier
   * incarnation is reached in every later one. */
  uint64_t deadline =
      timeout_ns >= 0 ? evrt__deadline_after(evrt__now_ns(), (uint64_t)timeout_ns)
                      : 0;
  struct evrt__table *t = &evrt__streams;
  struct evrt__stream *failed = NULL;
  uint32_t n = atomic_load_explicit(&t->next_unused, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(t, i);
    if (!s)
      continue;
    /* acquire: pairs with the producer's release of enq_seq */
    uint64_t target = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
    if (atomic_load_explicit(&s->device, memory_order_relaxed) != device)
      continue;
    if (evrt__done(s) >= target) {
      /* A failed task's pending error (src/failure.c): reported as a
       * stream synchronize would, once the device's work is waited for.
       * (A destroyed stream's error goes with it.) */
      if (EVRT_UNLIKELY(atomic_load_explicit(&s->err_seq,
                                             memory_order_relaxed)) &&
          !atomic_load_explicit(&s->destroyed, memory_order_relaxed))
        failed = s;
      continue;
    }
    int64_t left = -1;
    if (deadline) {
      uint64_t now = evrt__now_ns();
      left = now < deadline ? (int64_t)(deadline - now) : 0;
    }
    st = evrt__be_host_wait(s, target, left, false);
    if (st == EVRT_ERROR_TIMEOUT)
      return evrt__fail(st, "device %d not done after %lld ns", device,
                        (long long)timeout_ns);
    if (st)
      return st;
    if (EVRT_UNLIKELY(atomic_load_explicit(&s->err_seq,
                                           memory_order_relaxed)) &&
        !atomic_load_explicit(&s->destroyed, memory_order_relaxed))
      failed = s;
  }
  if (EVRT_UNLIKELY(evrt__check_on) && !failed)
    evrt__check_observe_device(device);
  return failed ? evrt__error_check(failed, UINT64_MAX) : EVRT_SUCCESS;
}

bool evrt__event_resource_take(int device) {
  struct evrt__device *d = &evrt__devices[device];
  unsigned used = atomic_load_explicit(&d->ev_used, memory_order_relaxed);
  do {
    if (used >= atomic_load_explicit(&d->ev_limit, memory_order_relaxed))
      return false;
  } while (!atomic_compare_exchange_weak_explicit(
      &d->ev_used, &used, used + 1, memory_order_relaxed,
      memory_order_relaxed));
  return true;
}

void evrt__event_resource_give(int device) {
  atomic_fetch_sub_explicit(&evrt__devices[device].ev_used, 1,
                            memory_order_relaxed);
}

evrt_status_t evrt_device_set_event_limit(int device, uint32_t limit) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_device(device)))
    return st;
  struct evrt__device *d = &evrt__devices[device];
  if (limit == 0 || limit < atomic_load_explicit(&d->ev_used,
                                                 memory_order_relaxed))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "limit %u is 0 or below the %u event resources in use "
                      "on device %d",
                      limit, atomic_load(&d->ev_used), device);
  atomic_store_explicit(&d->ev_limit, limit, memory_order_relaxed);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_device_get_event_limit(int device, uint32_t *limit) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_device(device)))
    return st;
  if (!limit)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "limit is NULL");
  *limit = atomic_load_explicit(&evrt__devices[device].ev_limit,
                                memory_order_relaxed);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_device_event_available(int device, uint32_t *available) {
  evrt_status_t st = evrt__ready();
  if (st || (st = check_device(device)))
    return st;
  if (!available)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "available is NULL");
  struct evrt__device *d = &evrt__devices[device];
  unsigned lim = atomic_load_explicit(&d->ev_limit, memory_order_relaxed);
  unsigned used = atomic_load_explicit(&d->ev_used, memory_order_relaxed);
  *available = used >= lim ? 0 : lim - used;
  return EVRT_SUCCESS;
}
