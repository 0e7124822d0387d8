/*
 * core_base.h - what every core file uses: the TLS model of hot
 * thread-locals, the branch hints, the build's assumptions (64-bit,
 * little-endian), the error detail (src/error.c) and the allocation
 * wrappers (src/alloc.c).  No locks, no shared state of its own.
 * Included through internal.h (the umbrella); lock order and the memory
 * model summary are at the top of internal.h.
 */
#ifndef EVRT_CORE_BASE_H
#define EVRT_CORE_BASE_H

#include "evrt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hot thread-locals use the initial-exec TLS model: no __tls_get_addr call
 * per access in a shared library.  They are few and small (well under the
 * static TLS surplus glibc keeps for libraries loaded with dlopen, such as
 * the Python extension); the 256-byte error message stays general-dynamic. */
#ifdef EVRT_TLS_DYNAMIC /* core compiled into a dlopen'd module */
#define EVRT_TLS _Thread_local
#else
#define EVRT_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#endif

#define EVRT_LIKELY(x) __builtin_expect(!!(x), 1)
#define EVRT_UNLIKELY(x) __builtin_expect(!!(x), 0)

_Static_assert(sizeof(void *) == 8, "evrt handles need 64-bit pointers");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the futex word is the low half of done_seq");

/* --------------------------------------------------------------- errors */
/* src/error.c: record the detail for evrt_last_error_message(); returns st. */
evrt_status_t evrt__fail(evrt_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold));

/* --------------------------------------------------------------- alloc */
/* src/alloc.c: every runtime allocation goes through these, so tests can make
 * the n-th allocation fail (evrt__test_fail_alloc_at). */
void *evrt__malloc(size_t size);
void *evrt__calloc(size_t n, size_t size);
void evrt__free(void *p);
/* Test hook, compiled only into the test-only static core (evrt_static,
 * EVRT_TEST_HOOKS), never into libevrt.so: the n-th following allocation
 * fails (n >= 1); 0 disarms.  Returns the number of allocations made since
 * the last call. */
#ifdef EVRT_TEST_HOOKS
long evrt__test_fail_alloc_at(long n);
#endif


/* Schedule points: the white-box build (evrt_static, EVRT_TEST_HOOKS)
 * calls evrt__test_sched_hook, when a test set it, at a race's window, so
 * that the race's regression test hits the window on every run (the hook
 * blocks the thread there until the test's other threads have done their
 * part).  libevrt.so has neither the hook nor the calls. */
enum evrt__sched_point {
  EVRT__SP_IDLE_ENQ_READ, /* after_idle: enq_seq read, destroyed not yet */
  EVRT__SP_SUBMIT,        /* evrt__cpu_submit: linked, state not read yet */
  EVRT__SP_IDLE_STORED,   /* after_idle: IDLE stored, nothing loaded yet */
  /* the core's: calls racing a destroy of the stream they name */
  EVRT__SP_CAPTURE_BEGIN,  /* begin_capture: looked up, nothing attached */
  EVRT__SP_CAPTURE_JOIN,   /* capture_fork: a wait joins, not attached yet */
  EVRT__SP_DESTROY_LOOKED, /* stream destroy: looked up, plock not taken */
  EVRT__SP_NAME_SET,       /* set_name: checked live, trace entry not added */
  EVRT__SP_FAILURE_LOOKED  /* failure.c's calls: looked up, nothing done */
};
struct evrt__stream;
#ifdef EVRT_TEST_HOOKS
extern void (*_Atomic evrt__test_sched_hook)(int point,
                                             struct evrt__stream *s);
#define EVRT__SCHED_POINT(point, s)                                            \
  do {                                                                         \
    /* acquire: what the test set up before installing the hook */           \
    void (*h_)(int, struct evrt__stream *) =                                   \
        atomic_load_explicit(&evrt__test_sched_hook, memory_order_acquire);    \
    if (h_)                                                                    \
      h_((point), (s));                                                        \
  } while (0)
#else
#define EVRT__SCHED_POINT(point, s) ((void)0)
#endif

#endif
