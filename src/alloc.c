/*
 * alloc.c - the runtime's allocations.  The test-only static core
 * (evrt_static, built with EVRT_TEST_HOOKS) adds the fault-injection hook
 * used by tests/fault/fault_alloc_sites.c (the n-th allocation fails);
 * libevrt.so has neither the hook nor its check.
 */
#include "internal.h"

#include <stdlib.h>

#ifdef EVRT_TEST_HOOKS
/* Countdown to the failing allocation: 0 = disarmed.  Relaxed: the hook is
 * armed by a test thread before it makes the calls it targets. */
static atomic_long fail_countdown;
static atomic_long alloc_count;

/* Set by the first call of the hook: until then an allocation costs one
 * read of a line nobody writes, not an atomic increment of a counter shared
 * by every thread. */
static atomic_bool hook_armed;

static bool should_fail(void) {
  if (EVRT_LIKELY(!atomic_load_explicit(&hook_armed, memory_order_relaxed)))
    return false;
  atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
  long c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
  if (EVRT_LIKELY(c == 0))
    return false;
  c = atomic_fetch_sub_explicit(&fail_countdown, 1, memory_order_relaxed);
  return c == 1;
}

long evrt__test_fail_alloc_at(long n) {
  atomic_store_explicit(&hook_armed, true, memory_order_relaxed);
  atomic_store_explicit(&fail_countdown, n > 0 ? n : 0, memory_order_relaxed);
  return atomic_exchange_explicit(&alloc_count, 0, memory_order_relaxed);
}
#else
static inline bool should_fail(void) { return false; }
#endif

void *evrt__malloc(size_t size) {
  EVRT__NO_SPIN_HELD("malloc");
  if (EVRT_UNLIKELY(should_fail()))
    return NULL;
  return malloc(size);
}

void *evrt__calloc(size_t n, size_t size) {
  EVRT__NO_SPIN_HELD("calloc");
  if (EVRT_UNLIKELY(should_fail()))
    return NULL;
  return calloc(n, size);
}

void evrt__free(void *p) {
  if (p)
    EVRT__NO_SPIN_HELD("free");
  free(p);
}

#ifdef EVRT_TEST_HOOKS
EVRT_TLS unsigned evrt__tls_spins_held;
static atomic_long spin_violations;
static _Atomic(const char *) spin_violation_what;

void evrt__spin_violation(const char *what) {
  atomic_fetch_add_explicit(&spin_violations, 1, memory_order_relaxed);
  atomic_store_explicit(&spin_violation_what, what, memory_order_relaxed);
}

/* Test hook (white-box build only): system calls made under a spin lock
 * so far, and what the last one was. */
long evrt__test_spin_violations(const char **what);
long evrt__test_spin_violations(const char **what) {
  if (what)
    *what = atomic_load_explicit(&spin_violation_what, memory_order_relaxed);
  return atomic_load_explicit(&spin_violations, memory_order_relaxed);
}
#endif
