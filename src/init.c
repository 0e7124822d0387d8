/*
 * init.c - library lifecycle: lazy initialization, shutdown, fork safety,
 * version.
 *
 * Initialization takes no lock: the thread whose CAS moves the state from
 * UNINIT to INITIALIZING initializes; the others sleep on the state word
 * (a futex) until it is RUNNING, or UNINIT again after a failure (then one
 * of them tries).  So a process forked while another thread is inside the
 * initialization inherits no held lock, only the INITIALIZING state, which
 * the child handler turns into FORKED like RUNNING.
 *
 * fork().  The child handler is installed when the library is loaded (a
 * constructor), before any initialization can start.  In the child, every
 * call returns EVRT_ERROR_FORKED from the state word before it takes any
 * lock; the trace is told (evrt__trace_atfork_child) so that its calls and
 * the exit handler take none either.  The locks a parent thread may have
 * held at the fork (init_lock in a shutdown, the pool's, the trace's, the
 * watcher's) are thus never taken in the child.
 *
 * init_lock serializes shutdowns only.
 */
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

atomic_int evrt__lib_state;
struct evrt__table evrt__streams;
struct evrt__table evrt__events;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool atexit_installed; /* written by the initializing thread only */

static void atfork_child(void) {
  /* The worker threads did not survive fork(); objects of the parent refer to
   * them.  A child gets a clear error instead of a hang (docs/design.md).
   * Relaxed: the child has one thread. */
  int st = atomic_load_explicit(&evrt__lib_state, memory_order_relaxed);
  if (st == EVRT__RUNNING || st == EVRT__INITIALIZING)
    atomic_store_explicit(&evrt__lib_state, EVRT__FORKED, memory_order_relaxed);
  if (st != EVRT__UNINIT)
    evrt__trace_atfork_child();
}

__attribute__((constructor)) static void install_atfork(void) {
  pthread_atfork(NULL, NULL, atfork_child);
}

static void at_exit(void) { evrt__trace_finish(); }

/* The state word as a futex word (an int of the same size). */
static atomic_uint *state_word(void) {
  return (atomic_uint *)(void *)&evrt__lib_state;
}

/* The initialization proper, by the thread that moved the state to
 * INITIALIZING. */
static evrt_status_t initialize(void) {
  if (!atexit_installed) {
    evrt__check_init(); /* its exit handler runs after the trace's */
    atexit(at_exit);
    atexit_installed = true;
  }
  evrt__handles_init();
  evrt__table_init(&evrt__streams, sizeof(struct evrt__stream),
                   EVRT__TAG_STREAM, NULL);
  evrt__table_init(&evrt__events, EVRT__EVENT_SLOT, EVRT__TAG_EVENT,
                   evrt__event_init_slot);
  /* EVRT_BACKEND: the cpu backend or a loaded one (backend_load.c) */
  evrt_status_t r = evrt__backend_select();
  if (r == EVRT_SUCCESS)
    r = evrt__backend->init();
  if (r == EVRT_SUCCESS)
    r = evrt__devices_init();
  if (r == EVRT_SUCCESS)
    evrt__trace_init_from_env();
  return r;
}

evrt_status_t evrt__init_slow(void) {
  for (;;) {
    int st = atomic_load_explicit(&evrt__lib_state, memory_order_acquire);
    if (st == EVRT__FORKED)
      return evrt__fail(EVRT_ERROR_FORKED,
                        "evrt was initialized in the parent before fork()");
    if (st == EVRT__SHUTDOWN)
      return evrt__fail(EVRT_ERROR_SHUTDOWN, "evrt_shutdown() was called");
    if (st == EVRT__RUNNING)
      return EVRT_SUCCESS;
    if (st == EVRT__INITIALIZING) {
      /* Another thread initializes: sleep until the state changes (it
       * wakes every sleeper). */
      evrt__futex_wait(state_word(), EVRT__INITIALIZING, -1, 0);
      continue;
    }
    int z = EVRT__UNINIT;
    /* acquire: a failed initialization's writes are seen by the next */
    if (!atomic_compare_exchange_strong_explicit(
            &evrt__lib_state, &z, EVRT__INITIALIZING, memory_order_acquire,
            memory_order_acquire))
      continue;
    evrt_status_t r = initialize();
    /* release: publishes every global initialized above (RUNNING); a
     * failure leaves UNINIT for the next caller to try again */
    atomic_store_explicit(&evrt__lib_state,
                          r == EVRT_SUCCESS ? EVRT__RUNNING : EVRT__UNINIT,
                          memory_order_release);
    evrt__futex_wake(state_word(), INT_MAX, 0);
    if (r != EVRT_SUCCESS)
      return r;
  }
}

evrt_status_t evrt_init(void) { return evrt__ready(); }

evrt_status_t evrt_is_initialized(int *initialized) {
  if (!initialized)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "initialized is NULL");
  /* acquire: pairs with the store of RUNNING that ends initialization */
  *initialized = atomic_load_explicit(&evrt__lib_state, memory_order_acquire) ==
                 EVRT__RUNNING;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_shutdown(void) {
  evrt_status_t r = evrt__ready();
  if (r != EVRT_SUCCESS)
    return r;
  if (evrt__tls_stream)
    return evrt__fail(EVRT_ERROR_WOULD_DEADLOCK,
                      "evrt_shutdown() called from a host function");
  pthread_mutex_lock(&init_lock);
  /* seq_cst: a host registering a wait after evrt__wait_shutdown has
   * looked at its stream reads it (wait.c) */
  atomic_store_explicit(&evrt__lib_state, EVRT__SHUTDOWN, memory_order_seq_cst);
  /* Hosts parked on work about to be discarded return
   * EVRT_ERROR_SHUTDOWN now: one of them may be a host function holding a
   * worker that the backend's shutdown waits for. */
  evrt__backend->wake_hosts();
  evrt__backend->shutdown();
  evrt__ipc_shutdown();
  evrt__trace_finish();
  pthread_mutex_unlock(&init_lock);
  return EVRT_SUCCESS;
}

unsigned evrt_version(void) { return EVRT_VERSION_HEX; }

#define EVRT_STR2_(x) #x
#define EVRT_STR_(x) EVRT_STR2_(x)
const char *evrt_version_string(void) {
  return EVRT_STR_(EVRT_VERSION_MAJOR) "." EVRT_STR_(
      EVRT_VERSION_MINOR) "." EVRT_STR_(EVRT_VERSION_PATCH);
}

EVRT_TLS uint64_t evrt__tls_thread_id;
static atomic_uint_least64_t next_thread_id;
uint64_t evrt__thread_id_slow(void) {
  evrt__tls_thread_id =
      atomic_fetch_add_explicit(&next_thread_id, 1, memory_order_relaxed) + 1;
  return evrt__tls_thread_id;
}
uint64_t evrt_thread_id(void) { return evrt__thread_id(); }
