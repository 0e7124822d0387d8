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

/* Create the shared state of an exported event (caller holds e's lock). */
static evrt_status_t create_shared(struct evrt__event *e, int device) {
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
  m->magic = EVRT__IPC_SHM_MAGIC;
  map->shm = m;
  map->fd = fd;
  atomic_init(&map->refs, 1);
  atomic_store_explicit(&e->ipc, map, memory_order_release);
  return EVRT_SUCCESS;
}

evrt_status_t evrt__ipc_ensure_shared(struct evrt__event *e, int device) {
  if (evrt__ipc_map_of(e))
    return EVRT_SUCCESS;
  if (!e->has_resource && !(e->flags & EVRT_EVENT_NO_LIMIT)) {
    if (!evrt__event_resource_take(device))
      return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                        "device %d has no free event resource", device);
    e->has_resource = true;
  }
  evrt_status_t st = create_shared(e, device);
  if (st) {
    if (e->has_resource) {
      e->has_resource = false;
      evrt__event_resource_give(device);
    }
    return st;
  }
  atomic_store_explicit(&e->device, device, memory_order_relaxed);
  return EVRT_SUCCESS;
}

evrt_status_t evrt__ipc_map_peer(int pid, int fd_no, uint64_t nonce, int device,
                                 struct evrt__ipc_map **out) {
  char path[64], target[128];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd_no);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n < 0) {
    return evrt__fail(
        errno == ENOENT ? EVRT_ERROR_PEER_LOST : EVRT_ERROR_SYSTEM,
        "cannot reach the exporter's event (%s): %s", path, strerror(errno));
  }
  target[n] = 0;
  if (strncmp(target, "/memfd:evrt-ipc", 15) != 0) {
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "the handle does not name an evrt event");
  }
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return evrt__fail(errno == ENOENT ? EVRT_ERROR_PEER_LOST
                                      : EVRT_ERROR_SYSTEM,
                      "cannot open the exporter's event: %s", strerror(errno));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      sb.st_size != EVRT__IPC_SHM_SIZE) {
    close(fd);
    return evrt__fail(EVRT_ERROR_IPC_HANDLE, "the handle names no evrt event");
  }
  void *p =
      mmap(NULL, EVRT__IPC_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd); /* the mapping keeps the memory */
  if (p == MAP_FAILED) {
    return evrt__fail(EVRT_ERROR_SYSTEM, "mmap: %s", strerror(errno));
  }
  struct evrt__ipc_shm *m = p;
  if (m->magic != EVRT__IPC_SHM_MAGIC || m->nonce != nonce ||
      m->device != device) {
    munmap(p, EVRT__IPC_SHM_SIZE);
    return evrt__fail(
        EVRT_ERROR_IPC_HANDLE,
        "the handle's nonce does not match the event (forged or stale "
        "handle)");
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
