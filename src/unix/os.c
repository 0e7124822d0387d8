/*
 * os.c - the operating-system layer: futex, clock, cpu count, sleeping.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int evrt__futex_wait(atomic_uint *addr, uint32_t expected, int64_t timeout_ns,
                     int shared) {
  EVRT__NO_SPIN_HELD("futex_wait");
  struct timespec ts, *tsp = NULL;
  if (timeout_ns >= 0) {
    ts.tv_sec = (time_t)(timeout_ns / 1000000000);
    ts.tv_nsec = (long)(timeout_ns % 1000000000);
    tsp = &ts;
  }
  int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
  long r = syscall(SYS_futex, (uint32_t *)addr, op, expected, tsp, NULL, 0);
  if (r == 0)
    return 0;
  return errno; /* EAGAIN: value changed; ETIMEDOUT; EINTR */
}

void evrt__futex_wake(atomic_uint *addr, int count, int shared) {
  EVRT__NO_SPIN_HELD("futex_wake");
  int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
  syscall(SYS_futex, (uint32_t *)addr, op, count, NULL, NULL, 0);
}

uint64_t evrt__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Written before the workers start (pthread_create orders it before their
 * reads), never changed after. */
bool evrt__has_prefetchw;

/* The end of the user address space: no range of memory a stream item may
 * touch ends beyond it.  x86-64: 47 bits, 56 with 5-level paging (LA57,
 * where the kernel may hand out addresses up to 2^56); arm64: 52 bits at
 * most; elsewhere the whole pointer range. */
uintptr_t evrt__user_va_end = UINTPTR_MAX;

void evrt__cpu_features_init(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  /* CPUID 0x80000001 ECX bit 8: PREFETCHW (3DNowPrefetch) */
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
    evrt__has_prefetchw = (c >> 8) & 1u;
#endif
#if defined(__x86_64__)
  /* CPUID 7.0 ECX bit 16: LA57 (5-level paging) */
  bool la57 = __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((c >> 16) & 1u);
  evrt__user_va_end = (uintptr_t)1 << (la57 ? 56 : 47);
#elif defined(__aarch64__)
  evrt__user_va_end = (uintptr_t)1 << 52;
#endif
}

int evrt__ncpu(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

__attribute__((noinline)) void evrt__fence_seq_cst(void) {
  atomic_thread_fence(memory_order_seq_cst);
}

void evrt__sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

#ifdef EVRT_TEST_HOOKS
static atomic_long backoff_slow_rounds;
/* Test hook (white-box build only): rounds of back-off past the pauses. */
long evrt__test_backoff_rounds(void);
long evrt__test_backoff_rounds(void) {
  return atomic_load_explicit(&backoff_slow_rounds, memory_order_relaxed);
}
#endif

void evrt__backoff_slow(struct evrt__backoff *b) {
#ifdef EVRT_TEST_HOOKS
  atomic_fetch_add_explicit(&backoff_slow_rounds, 1, memory_order_relaxed);
#endif
  /* On 2 cores the holder may be preempted: yield instead of burning the
   * core it needs, and sleep if it still does not finish. */
  if (b->n < EVRT__BACKOFF_PAUSES + EVRT__BACKOFF_YIELDS) {
    b->n++;
    sched_yield();
  } else {
    evrt__sleep_ns(50000);
  }
}

void evrt__spin_lock_slow(evrt__spin_t *l) {
  struct evrt__backoff b = {0};
  for (;;) {
    unsigned z = 0;
    if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_weak_explicit(&l->v, &z, 1,
                                              memory_order_acquire,
                                              memory_order_relaxed))
      return;
    evrt__backoff(&b);
  }
}

/* Variables already warned about (each warns once per process). */
static pthread_mutex_t env_warn_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *env_warned[16];
static int env_nwarned;

/* True the first time it is asked for name (a string literal). */
static bool env_first_warning(const char *name) {
  pthread_mutex_lock(&env_warn_lock);
  bool seen = false;
  for (int i = 0; i < env_nwarned && !seen; i++)
    seen = strcmp(env_warned[i], name) == 0;
  if (!seen && env_nwarned < (int)(sizeof env_warned / sizeof env_warned[0]))
    env_warned[env_nwarned++] = name; /* (callers pass string literals) */
  pthread_mutex_unlock(&env_warn_lock);
  return !seen;
}

static void env_warn(const char *name, const char *v, long lo, long hi,
                     long used) {
  if (env_first_warning(name))
    fprintf(stderr,
            "evrt: warning: %s=\"%s\" is not an integer in [%ld, %ld]; "
            "using %ld\n",
            name, v, lo, hi, used);
}

const char *evrt__env_path(const char *name) {
  /* secure_getenv: NULL in a secure-execution process (set-user-ID or
   * set-group-ID, file capabilities: AT_SECURE), whose caller must not
   * choose what file it truncates or what library it loads. */
  const char *v = secure_getenv(name);
  if (!v && getenv(name) && env_first_warning(name))
    fprintf(stderr,
            "evrt: warning: %s is ignored in a set-user-ID, set-group-ID or "
            "capability-raising program\n",
            name);
  return v;
}

long evrt__env_long(const char *name, long dflt, long lo, long hi) {
  const char *v = getenv(name);
  if (!v || !*v)
    return dflt;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < lo || x > hi) {
    env_warn(name, v, lo, hi, dflt);
    return dflt;
  }
  return x;
}
