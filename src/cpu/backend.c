/*
 * backend.c - the cpu backend's ops table: virtual devices on the host,
 * work items executed by the worker pool (pool.c, exec.c), timestamps from
 * CLOCK_MONOTONIC.
 */
#include "internal.h"

#include <string.h>

#define EVRT__MAX_DEVICES 64

static int cpu_device_count(void) {
  /* documented: a bad value means the default */
  return (int)evrt__env_long("EVRT_CPU_DEVICES", 1, 1, EVRT__MAX_DEVICES);
}

static evrt_status_t cpu_init(void) { return evrt__pool_init(); }

static void cpu_shutdown(void) {
  evrt__pool_shutdown();
  evrt__timer_shutdown();
}

static uint64_t cpu_timestamp(int device) {
  (void)device; /* one clock for every virtual device */
  return evrt__now_ns();
}

static void cpu_copy(int device, void *dst, const void *src, size_t n) {
  (void)device;
  memmove(dst, src, n);
}

static void cpu_fill(int device, void *dst, int value, size_t n) {
  (void)device;
  memset(dst, value, n);
}

const struct evrt__backend_ops evrt__cpu_backend = {
    .name = "cpu",
    .device_count = cpu_device_count,
    .init = cpu_init,
    .shutdown = cpu_shutdown,
    .timestamp = cpu_timestamp,
    .copy = cpu_copy,
    .fill = cpu_fill,
};
