/*
 * core_ipc.h - what the core calls of interprocess events (src/ipc_*.c;
 * src/ipc.h is their own header).  Called with the event lock held where
 * the caller says so (record); none takes a lock the caller holds.
 */
#ifndef EVRT_CORE_IPC_H
#define EVRT_CORE_IPC_H

#include "core_base.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evrt__event;
struct evrt__stream;
struct evrt__item;

/* ------------------------------------------------------------------ ipc */
/* src/ipc_*.c (src/ipc.h lists the files) */
evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s);
evrt_status_t evrt__ipc_query(struct evrt__event *e);
evrt_status_t evrt__ipc_sync(struct evrt__event *e, int64_t timeout_ns);
evrt_status_t evrt__ipc_wait(struct evrt__event *e, struct evrt__stream *s,
                             int64_t timeout_ns);
void evrt__ipc_close(struct evrt__event *e);
/* Is the interprocess generation of a wait item done?  With check_peer, a
 * dead recorder sets *err = EVRT_ERROR_PEER_LOST. */
bool evrt__ipc_dep_ready(struct evrt__item *it, bool check_peer,
                         evrt_status_t *err);
void evrt__ipc_wait_done(struct evrt__item *it);
evrt_status_t evrt__ipc_watch(struct evrt__item *it);
void evrt__ipc_unwatch(struct evrt__item *it);
void evrt__ipc_exec_record(struct evrt__item *it);
void evrt__ipc_shutdown(void);

#endif
