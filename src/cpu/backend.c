/*
 * backend.c - the cpu backend's ops table: virtual devices on the host,
 * work items executed by the worker pool (pool.c, exec.c), timestamps from
 * CLOCK_MONOTONIC.  Hook contracts: src/backend.h.
 */
#include "cpu.h"

#include <string.h>

#define EVRT__MAX_DEVICES 64

int evrt__cpu_device_count(void) {
  /* documented: a bad value means the default */
  return (int)evrt__env_long("EVRT_CPU_DEVICES", 1, 1, EVRT__MAX_DEVICES);
}

static evrt_status_t cpu_init(void) { return evrt__pool_init(); }

void evrt__cpu_shutdown(void) {
  evrt__pool_shutdown();
  evrt__timer_shutdown();
}

uint64_t evrt__cpu_timestamp(int device) {
  (void)device; /* one clock for every virtual device */
  return evrt__now_ns();
}

int64_t evrt__cpu_elapsed_ns(int device, uint64_t t0, uint64_t t1) {
  (void)device;
  return (int64_t)(t1 - t0);
}

void evrt__cpu_copy(int device, void *dst, const void *src, size_t n,
                    enum evrt__copy_dir dir) {
  (void)device;
  (void)dir; /* host memory only: every direction is a memmove */
  memmove(dst, src, n);
}

void evrt__cpu_fill(int device, void *dst, int value, size_t n) {
  (void)device;
  memset(dst, value, n);
}

const struct evrt__backend_ops evrt__cpu_backend = {
    .size = sizeof(struct evrt__backend_ops),
    .version = EVRT__BACKEND_VERSION,
    .name = "cpu",
    .device_count = evrt__cpu_device_count,
    .init = cpu_init,
    .wake_hosts = evrt__wait_shutdown,
    .shutdown = evrt__cpu_shutdown,
    .stream_init = evrt__cpu_stream_init,
    .stream_release = evrt__cpu_stream_release,
    .stream_destroyed = evrt__cpu_stream_destroyed,
    .submit = evrt__cpu_submit,
    .stream_resume = evrt__cpu_stream_resume,
    .host_wait = evrt__cpu_host_wait,
    .wait_register = evrt__stream_add_waiter,
    .wait_cancel = evrt__stream_remove_waiter,
    .timer_arm = evrt__timer_arm,
    .timer_cancel = evrt__timer_cancel,
    .spin_budget_ns = evrt__spin_budget_ns,
    .on_own_thread = evrt__pool_on_worker,
    .run_item = evrt__exec_run_item,
    .timestamp = evrt__cpu_timestamp,
    .elapsed_ns = evrt__cpu_elapsed_ns,
    .copy = evrt__cpu_copy,
    .fill = evrt__cpu_fill,
};
