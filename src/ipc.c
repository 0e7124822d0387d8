/*
 * ipc.c - interprocess events (placeholder until the shared-memory layer
 * lands: export and import report EVRT_ERROR_NOT_SUPPORTED).
 */
#include "internal.h"

bool evrt__ipc_dep_ready(struct evrt__item *it, evrt_status_t *err) {
  *err = EVRT_ERROR_NOT_SUPPORTED;
  return false;
}
evrt_status_t evrt__ipc_watch(struct evrt__item *it) {
  return EVRT_ERROR_NOT_SUPPORTED;
}
void evrt__ipc_unwatch(struct evrt__item *it) {}
void evrt__ipc_exec_record(struct evrt__item *it) {}
void evrt__ipc_shutdown(void) {}
evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
evrt_status_t evrt__ipc_query(struct evrt__event *e) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
evrt_status_t evrt__ipc_sync(struct evrt__event *e, int64_t t) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
evrt_status_t evrt__ipc_wait(struct evrt__event *e, struct evrt__stream *s,
                             int64_t t) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
void evrt__ipc_close(struct evrt__event *e) {}
evrt_status_t evrt_event_ipc_handle(evrt_event_t event,
                                    evrt_ipc_event_handle_t *handle) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
evrt_status_t evrt_event_ipc_open(evrt_event_t *event,
                                  const evrt_ipc_event_handle_t *handle) {
  return evrt__fail(EVRT_ERROR_NOT_SUPPORTED, "interprocess events");
}
