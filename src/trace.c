/*
 * trace.c - placeholder until the Chrome trace writer lands: tracing is
 * never enabled, so the hooks are never reached.
 */
#include "internal.h"

atomic_int evrt__trace_enabled;

const char *evrt__item_kind_name(int kind) {
  static const char *const names[] = {"host_func", "memcpy", "memset", "delay",
                                      "record",    "wait",   "reset"};
  return kind >= 0 && kind < EVRT__ITEM_KIND_COUNT ? names[kind] : "unknown";
}
void evrt__trace_init_from_env(void) {}
void evrt__trace_finish(void) {}
void evrt__trace_stream_name(int d, uint64_t s, const char *n) {}
void evrt__trace_item(int d, uint64_t s, int k, const char *l, uint64_t t0,
                      uint64_t t1, uint64_t e, uint64_t g) {}
void evrt__trace_record(int d, uint64_t s, uint64_t e, uint64_t g, uint64_t t) {}
void evrt__trace_wait_bind(int d, uint64_t s, uint64_t e, uint64_t g,
                           uint64_t t) {}
void evrt__trace_wait_resume(int d, uint64_t s, uint64_t e, uint64_t g,
                             uint64_t t) {}
void evrt__trace_host_wait(const char *w, uint64_t id, uint64_t t0,
                           uint64_t t1) {}
evrt_status_t evrt_trace_start(const char *path) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "tracing is not built yet");
}
evrt_status_t evrt_trace_stop(void) { return EVRT_SUCCESS; }
uint64_t evrt_trace_dropped(void) { return 0; }
