/*
 * init.c - library lifecycle: lazy initialization, shutdown, fork safety,
 * version.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

atomic_int evrt__lib_state;
struct evrt__table evrt__streams;
struct evrt__table evrt__events;
const struct evrt__backend_ops *evrt__backend = &evrt__cpu_backend;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool atfork_installed;

static void atfork_child(void) {
  /* The worker threads did not survive fork(); objects of the parent refer to
   * them.  A child gets a clear error instead of a hang (docs/design.md). */
  if (atomic_load_explicit(&evrt__lib_state, memory_order_relaxed) ==
      EVRT__RUNNING)
    atomic_store_explicit(&evrt__lib_state, EVRT__FORKED, memory_order_relaxed);
}

static void at_exit(void) { evrt__trace_finish(); }

evrt_status_t evrt__init_slow(void) {
  int st = atomic_load_explicit(&evrt__lib_state, memory_order_acquire);
  if (st == EVRT__FORKED)
    return evrt__fail(EVRT_ERROR_FORKED,
                      "evrt was initialized in the parent before fork()");
  if (st == EVRT__SHUTDOWN)
    return evrt__fail(EVRT_ERROR_SHUTDOWN, "evrt_shutdown() was called");
  if (st == EVRT__RUNNING)
    return EVRT_SUCCESS;
  evrt_status_t r = EVRT_SUCCESS;
  pthread_mutex_lock(&init_lock);
  if (atomic_load_explicit(&evrt__lib_state, memory_order_relaxed) ==
      EVRT__UNINIT) {
    if (!atfork_installed) {
      pthread_atfork(NULL, NULL, atfork_child);
      atexit(at_exit);
      atfork_installed = true;
    }
    evrt__handles_init();
    evrt__table_init(&evrt__streams, sizeof(struct evrt__stream),
                     EVRT__TAG_STREAM, NULL);
    evrt__table_init(&evrt__events, EVRT__EVENT_SLOT, EVRT__TAG_EVENT,
                     evrt__event_init_slot);
    const char *want = getenv("EVRT_BACKEND");
    if (want && *want && strcmp(want, evrt__backend->name) != 0)
      r = evrt__fail(EVRT_ERROR_NOT_SUPPORTED,
                     "EVRT_BACKEND=%s: only the \"%s\" backend is built", want,
                     evrt__backend->name);
    if (r == EVRT_SUCCESS)
      r = evrt__backend->init();
    if (r == EVRT_SUCCESS)
      r = evrt__devices_init();
    if (r == EVRT_SUCCESS) {
      evrt__trace_init_from_env();
      /* release: publishes every global initialized above */
      atomic_store_explicit(&evrt__lib_state, EVRT__RUNNING,
                            memory_order_release);
    }
  }
  pthread_mutex_unlock(&init_lock);
  if (r != EVRT_SUCCESS)
    return r;
  return evrt__ready();
}

evrt_status_t evrt_init(void) { return evrt__ready(); }

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
  evrt__wait_shutdown();
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
uint64_t evrt_thread_id(void) {
  return evrt__thread_id();
}
