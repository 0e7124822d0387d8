/*
 * core_init.h - the library's lifecycle state (src/init.c) and the
 * inlined thread id.  evrt__lib_state is read with acquire by every entry
 * point and stored with release when initialization ends, so a caller that
 * sees RUNNING sees every global that init set up.
 */
#ifndef EVRT_CORE_INIT_H
#define EVRT_CORE_INIT_H

#include "core_base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ----------------------------------------------------------- lifecycle */
/* UNINIT -> INITIALIZING (one thread's CAS) -> RUNNING, or back to UNINIT
 * if init failed; RUNNING -> SHUTDOWN; in a forked child INITIALIZING or
 * RUNNING -> FORKED (src/init.c). */
enum {
  EVRT__UNINIT = 0,
  EVRT__RUNNING,
  EVRT__SHUTDOWN,
  EVRT__FORKED,
  EVRT__INITIALIZING
};
extern atomic_int evrt__lib_state;
evrt_status_t evrt__init_slow(void);
/* The fast test of evrt__ready(): false sends the caller to its slow path,
 * which calls evrt__ready() for the status. */
static inline bool evrt__running(void) {
  /* acquire: as in evrt__ready */
  return atomic_load_explicit(&evrt__lib_state, memory_order_acquire) ==
         EVRT__RUNNING;
}
static inline evrt_status_t evrt__ready(void) {
  /* acquire: pairs with the release store at the end of initialization, so
   * every global set up by init is visible. */
  if (EVRT_LIKELY(atomic_load_explicit(&evrt__lib_state,
                                       memory_order_acquire) == EVRT__RUNNING))
    return EVRT_SUCCESS;
  return evrt__init_slow();
}

/* evrt_thread_id() inlined (src/init.c): record stores it at every call. */
extern EVRT_TLS uint64_t evrt__tls_thread_id;
uint64_t evrt__thread_id_slow(void);
static inline uint64_t evrt__thread_id(void) {
  uint64_t id = evrt__tls_thread_id;
  return EVRT_LIKELY(id) ? id : evrt__thread_id_slow();
}

#endif
