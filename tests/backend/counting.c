/*
 * counting.c - libevrt-backend-counting.so.0, a loadable test backend: the
 * built-in cpu backend (handed to the entry) with submit, copy and
 * host_wait wrapped to count their calls, so that test_backend_load can
 * tell that the core dispatched through this table and not the built-in
 * one.  Its name is "counting".
 */
#include "backend.h"

#include <stdatomic.h>

static const struct evrt__backend_ops *cpu;
static struct evrt__backend_ops ops;
static atomic_ulong n_submit, n_copy, n_wait;

static void counting_submit(struct evrt__stream *s) {
  /* relaxed: counters read after a synchronize (which orders them) */
  atomic_fetch_add_explicit(&n_submit, 1, memory_order_relaxed);
  cpu->submit(s);
}

static void counting_copy(int device, void *dst, const void *src, size_t n,
                          enum evrt__copy_dir dir) {
  atomic_fetch_add_explicit(&n_copy, 1, memory_order_relaxed);
  cpu->copy(device, dst, src, n, dir);
}

static evrt_status_t counting_wait(struct evrt__stream *s, uint64_t target,
                                   int64_t timeout_ns, bool blocking) {
  atomic_fetch_add_explicit(&n_wait, 1, memory_order_relaxed);
  return cpu->host_wait(s, target, timeout_ns, blocking);
}

__attribute__((visibility("default"))) const struct evrt__backend_ops *
evrt_backend_entry_v1(uint32_t core_version,
                      const struct evrt__backend_ops *builtin) {
  if (core_version != EVRT__BACKEND_VERSION)
    return NULL;
  cpu = builtin;
  ops = *builtin;
  ops.name = "counting";
  ops.submit = counting_submit;
  ops.copy = counting_copy;
  ops.host_wait = counting_wait;
  return &ops;
}

/* For the test (dlsym on the loaded copy). */
__attribute__((visibility("default"))) void
evrt_test_backend_counts(unsigned long *submits, unsigned long *copies,
                         unsigned long *waits) {
  *submits = atomic_load(&n_submit);
  *copies = atomic_load(&n_copy);
  *waits = atomic_load(&n_wait);
}
