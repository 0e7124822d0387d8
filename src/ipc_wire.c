/*
 * ipc_wire.c - the 64-byte handle of an interprocess event (its wire
 * format: magic, version, device, the exporter's pid, start time and memfd
 * descriptor, a random nonce, the event id and a checksum) and the two
 * public calls that make and open one.
 */
#include "ipc.h"

#include <string.h>

#define HANDLE_MAGIC 0x3143504954525645ULL /* "EVRTIPC1" */
#define HANDLE_VERSION 2 /* 2: segments with a recorders' table */

struct wire { /* the 64-byte handle */
  uint64_t magic;
  uint16_t version, flags;
  int32_t device;
  int32_t pid, fd;
  uint64_t start;
  uint64_t nonce;
  uint64_t event_id;
  uint64_t reserved;
  uint64_t check;
};
_Static_assert(sizeof(struct wire) == EVRT_IPC_HANDLE_SIZE, "handle size");

static uint64_t checksum(const struct wire *w) {
  /* FNV-1a over the first 56 bytes: catches truncation and corruption (the
   * nonce check in the shared header catches forgery). */
  const unsigned char *p = (const unsigned char *)w;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < offsetof(struct wire, check); i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static evrt_status_t get_ipc_event(evrt_event_t h, struct evrt__event **out) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__event *e = evrt__event_get(h);
  if (!e)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  *out = e;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_ipc_handle(evrt_event_t h,
                                    evrt_ipc_event_handle_t *handle) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_ipc_event(h, &e);
  if (st)
    return st;
  if (!handle)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "handle is NULL");
  if (!(e->flags & EVRT_EVENT_INTERPROCESS))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "event was not created with EVRT_EVENT_INTERPROCESS");
  if (e->imported)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "an imported event cannot be exported again");
  /* A never-recorded event is put on the current device. */
  struct evrt__ipc_map *map = NULL;
  int fd = -1;
  st = evrt__ipc_event_map(e, evrt__tls_device, false, &map, &fd);
  if (st)
    return st;
  if (fd < 0) {
    evrt__ipc_map_unref(map);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event is being destroyed");
  }
  struct wire w;
  memset(&w, 0, sizeof w);
  w.magic = HANDLE_MAGIC;
  w.version = HANDLE_VERSION;
  w.device = map->shm->device;
  w.pid = evrt__ipc_my_pid;
  w.fd = fd;
  w.start = evrt__ipc_my_start;
  w.nonce = map->shm->nonce;
  w.event_id = map->shm->event_id;
  w.check = checksum(&w);
  evrt__ipc_map_unref(map);
  memcpy(handle->reserved, &w, sizeof w);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_ipc_open(evrt_event_t *event,
                                  const evrt_ipc_event_handle_t *handle) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!event || !handle)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "event or handle is NULL");
  evrt__ipc_init_self();
  struct wire w;
  memcpy(&w, handle->reserved, sizeof w);
  if (w.magic != HANDLE_MAGIC || w.version != HANDLE_VERSION || w.flags ||
      w.reserved || w.check != checksum(&w) || w.pid <= 0 || w.fd < 0)
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "not an evrt interprocess event handle (bad magic, "
                      "version or checksum)");
  if (w.pid == evrt__ipc_my_pid && w.start == evrt__ipc_my_start)
    return evrt__fail(EVRT_ERROR_IPC_SAME_PROCESS,
                      "the handle was exported by this process; use the "
                      "event itself");
  if (w.device < 0 || w.device >= evrt__ndevices)
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE,
                      "handle's device %d does not exist here (%d devices)",
                      w.device, evrt__ndevices);
  if (!evrt__ipc_alive(w.pid, w.start))
    return evrt__fail(EVRT_ERROR_PEER_LOST, "the exporting process %d is gone",
                      w.pid);
  struct evrt__ipc_map *map = NULL;
  st = evrt__ipc_map_peer(w.pid, w.fd, w.nonce, w.device, w.event_id, &map);
  if (st)
    return st;
  evrt_event_t h;
  st = evrt_event_create(&h, EVRT_EVENT_INTERPROCESS | EVRT_EVENT_NO_LIMIT);
  if (st) {
    evrt__ipc_map_unref(map);
    return st;
  }
  struct evrt__event *e = evrt__event_get(h);
  evrt__event_lock(e);
  e->imported = true;
  atomic_store_explicit(&e->device, w.device, memory_order_relaxed);
  atomic_store_explicit(&e->ipc, map, memory_order_release);
  evrt__event_unlock(e);
  *event = h;
  return EVRT_SUCCESS;
}
