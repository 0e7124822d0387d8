/*
 * ipc_shm.c - the shared segment of an interprocess event: a 64 KiB memfd
 * ("evrt-ipc") that the exporter creates and importers map through
 * /proc/<pid>/fd/<fd>, and the reference-counted per-process map of it.
 */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

void evrt__ipc_map_ref(struct evrt__ipc_map *map) {
  atomic_fetch_add_explicit(&map->refs, 1, memory_order_relaxed);
}

void evrt__ipc_map_unref(struct evrt__ipc_map *map) {
  /* acq_rel: the last owner sees every write of the others before unmap */
  if (atomic_fetch_sub_explicit(&map->refs, 1, memory_order_acq_rel) == 1) {
    munmap(map->shm, EVRT__IPC_SHM_SIZE);
    if (map->fd >= 0)
      close(map->fd);
    evrt__free(map);
  }
}

/* A new segment (not yet attached to the event).  System calls: no lock
 * held. */
static evrt_status_t segment_new(int device, uint64_t event_id,
                                 struct evrt__ipc_map **out) {
  evrt__ipc_init_self();
  struct evrt__ipc_map *map = evrt__calloc(1, sizeof *map);
  if (!map)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "interprocess event state");
  int fd = memfd_create("evrt-ipc", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, EVRT__IPC_SHM_SIZE) != 0) {
    int err = errno;
    if (fd >= 0)
      close(fd);
    evrt__free(map);
    return evrt__fail(err == ENOMEM ? EVRT_ERROR_OUT_OF_MEMORY
                                    : EVRT_ERROR_SYSTEM,
                      "memfd for an interprocess event: %s", strerror(err));
  }
  void *p =
      mmap(NULL, EVRT__IPC_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    evrt__free(map);
    return evrt__fail(EVRT_ERROR_SYSTEM, "mmap: %s", strerror(err));
  }
  struct evrt__ipc_shm *m = p; /* zero-filled by ftruncate */
  uint64_t nonce = 0;
  while (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce || nonce == 0) {
  }
  m->nonce = nonce;
  m->device = device;
  m->event_id = event_id;
  /* Importers map the segment only from a handle, made after this. */
  m->magic = EVRT__IPC_SHM_MAGIC;
  map->shm = m;
  map->fd = fd;
  atomic_init(&map->refs, 1);
  *out = map;
  return EVRT_SUCCESS;
}

evrt_status_t evrt__ipc_event_map(struct evrt__event *e, int device,
                                  bool record, struct evrt__ipc_map **out,
                                  int *fd) {
  struct evrt__ipc_map *made = NULL;
  for (;;) {
    evrt_status_t st = EVRT_SUCCESS;
    evrt__event_lock(e);
    int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
    struct evrt__ipc_map *map = evrt__ipc_map_of(e);
    if (!evrt__ipc_live(e)) {
      st = evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event destroyed");
    } else if (record && (st = evrt__ipc_record_device(e, device))) {
      /* st says why */
    } else if (!map && made) {
      /* Attach the segment made below: the event's resource and device
       * are fixed now (its first record or export). */
      if (!e->has_resource && !(e->flags & EVRT_EVENT_NO_LIMIT)) {
        if (evrt__event_resource_take(device))
          e->has_resource = true;
        else
          st = evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                          "device %d has no free event resource", device);
      }
      if (!st) {
        atomic_store_explicit(&e->device, device, memory_order_relaxed);
        /* release: pairs with evrt__ipc_map_of's acquire */
        atomic_store_explicit(&e->ipc, made, memory_order_release);
        map = made;
        made = NULL;
      }
    }
    if (!st && map) {
      evrt__ipc_map_ref(map);
      if (fd) /* under the lock: a destroy closes it after taking it */
        *fd = map->fd;
      *out = map;
    }
    uint64_t id = e->id;
    if (!record && dev >= 0)
      device = dev; /* an export keeps the event's device */
    evrt__event_unlock(e);
    if (made) /* not attached: an error, or another thread attached one */
      evrt__ipc_map_unref(made);
    if (st || map)
      return st;
    /* First record or export: make the segment without the lock (system
     * calls), then attach it. */
    if ((st = segment_new(device, id, &made)))
      return st;
  }
}

evrt_status_t evrt__ipc_map_peer(int pid, int fd_no, uint64_t nonce, int device,
                                 uint64_t event_id,
                                 struct evrt__ipc_map **out) {
  /* The caller found the exporter alive.  Its descriptor of the event's
   * segment is closed when it destroys the event, and the number may be
   * reused since: for a file that is not an evrt segment, or the segment of
   * another event.  Those mean "destroyed by its exporter" (or a handle
   * that never named an event of that process). */
  char path[64], target[128];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd_no);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n < 0 && errno == ENOENT)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "the exporting process %d is alive but has destroyed "
                      "event %llu (its descriptor %d is closed)",
                      pid, (unsigned long long)event_id, fd_no);
  if (n < 0)
    return evrt__fail(EVRT_ERROR_SYSTEM,
                      "cannot reach the exporter's event (%s): %s", path,
                      strerror(errno));
  target[n] = 0;
  if (strncmp(target, "/memfd:evrt-ipc", 15) != 0)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "the exporting process %d is alive but has destroyed "
                      "event %llu (descriptor %d now names another file)",
                      pid, (unsigned long long)event_id, fd_no);
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return evrt__fail(errno == ENOENT ? EVRT_ERROR_INVALID_HANDLE
                                      : EVRT_ERROR_SYSTEM,
                      "cannot open the exporter's event: %s", strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      sb.st_size != EVRT__IPC_SHM_SIZE) {
    close(fd);
    return evrt__fail(EVRT_ERROR_IPC_HANDLE, "the handle names no evrt event");
  }
  void *p =
      mmap(NULL, EVRT__IPC_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd); /* the mapping keeps the memory */
  if (p == MAP_FAILED)
    return evrt__fail(EVRT_ERROR_SYSTEM, "mmap: %s", strerror(errno));
  struct evrt__ipc_shm *m = p;
  evrt_status_t st = EVRT_SUCCESS;
  if (m->magic != EVRT__IPC_SHM_MAGIC)
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE,
                    "the handle names a segment of another evrt version");
  else if (m->event_id != event_id)
    st = evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "the exporting process %d is alive but has destroyed "
                    "event %llu (descriptor %d now holds event %llu)",
                    pid, (unsigned long long)event_id, fd_no,
                    (unsigned long long)m->event_id);
  else if (m->nonce != nonce || m->device != device)
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE,
                    "the handle's nonce does not match the event (forged "
                    "handle)");
  if (st) {
    munmap(p, EVRT__IPC_SHM_SIZE);
    return st;
  }
  struct evrt__ipc_map *map = evrt__calloc(1, sizeof *map);
  if (!map) {
    munmap(p, EVRT__IPC_SHM_SIZE);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "interprocess event state");
  }
  map->shm = m;
  map->fd = -1;
  atomic_init(&map->refs, 1);
  *out = map;
  return EVRT_SUCCESS;
}

void evrt__ipc_close(struct evrt__event *e) {
  struct evrt__ipc_map *map =
      atomic_exchange_explicit(&e->ipc, NULL, memory_order_acq_rel);
  if (map) {
    /* Importers that have not opened yet will fail cleanly from now on. */
    if (map->fd >= 0) {
      close(map->fd);
      map->fd = -1;
    }
    evrt__ipc_map_unref(map);
  }
}
