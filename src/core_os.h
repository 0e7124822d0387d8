/*
 * core_os.h - the operating-system layer (src/unix/os.c): futexes, the
 * monotonic clock, sleeps, CPU count and features, an out-of-line fence,
 * integer environment variables.  Every function here may make a system
 * call: none may be called while a spin lock (core_spin.h) is held.
 */
#ifndef EVRT_CORE_OS_H
#define EVRT_CORE_OS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Prefetch a line the caller will write (an atomic store or CAS): on x86
 * __builtin_prefetch(p, 1) is a read prefetch unless the whole library is
 * built for PREFETCHW, so the line arrives shared and the write still waits
 * for the other core to give it up; for a serializing write (xchg, lock
 * cmpxchg) that wait stalls the worker.  PREFETCHW fetches it owned.  The
 * CPU is asked once (evrt__cpu_features_init, src/unix/os.c). */
extern bool evrt__has_prefetchw;
static inline void evrt__prefetch_w(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
  if (evrt__has_prefetchw) {
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
    return;
  }
#endif
  __builtin_prefetch(p, 1, 3);
}
void evrt__cpu_features_init(void);
/* One past the highest user address this machine can map (os.c, set at
 * init): a memory range ending beyond it is impossible. */
extern uintptr_t evrt__user_va_end;

/* ------------------------------------------------------------------ os */
/* src/unix/os.c */
int evrt__futex_wait(atomic_uint *addr, uint32_t expected, int64_t timeout_ns,
                     int shared);
void evrt__futex_wake(atomic_uint *addr, int count, int shared);
uint64_t evrt__now_ns(void);
/* The deadline ns after now, saturated: a huge delay or timeout (up to
 * UINT64_MAX) means "never", not a wrap to the past. */
static inline uint64_t evrt__deadline_after(uint64_t now, uint64_t ns) {
  return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}
int evrt__ncpu(void);
void evrt__sleep_ns(uint64_t ns);
/* A seq_cst fence, out of line (src/unix/os.c): gcc's ThreadSanitizer build
 * refuses atomic_thread_fence once it is inlined into a caller
 * (-Werror=tsan), and TSan does not model fences anyway.  For cold paths;
 * exec.c's settle keeps its own inline fence. */
void evrt__fence_seq_cst(void);
/* An integer environment variable in [lo, hi]; dflt if unset.  A value
 * that is not such an integer gives dflt and a warning on stderr, once per
 * variable, naming the variable, the value and the value used. */
long evrt__env_long(const char *name, long dflt, long lo, long hi);
/* An environment variable that names a file or a library: NULL (unset, or
 * ignored with a warning once) in a secure-execution process, so that the
 * caller of a set-user-ID program cannot make it write or load one. */
const char *evrt__env_path(const char *name);

#endif
