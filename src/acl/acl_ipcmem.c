/*
 * acl_ipcmem.c - interprocess memory (aclrtIpcMemGetExportKey,
 * aclrtIpcMemSetImportPid, aclrtIpcMemImportByKey, aclrtIpcMemClose,
 * with aclrtDeviceGetBareTgid in acl_sysinfo.c) over evrt's interprocess memory (docs/design.md,
 * "Interprocess memory").
 *
 * Device blocks of a page or more are evrt interprocess memory from their
 * allocation (acl_memory.c), so exporting one shares its pages in place:
 * work already queued on it is unaffected.  As in CANN, the block must be
 * page-aligned (blocks under a page are not: 107000, the FAQ's "not page
 * aligned").  An imported range is registered as device memory of this
 * process (the copy, set and value calls accept it); aclrtIpcMemClose
 * unmaps it.  The keys this process exported or imported are kept here so
 * that value waits on them also poll (another process's writes wake nobody
 * here).  EVRT_CHECK: an import is a block from aclrtIpcMemImportByKey
 * (evrt_ipc_mem_import declares it) to aclrtIpcMemClose (a free at the
 * call).
 *
 * Locks: ipc_lock (a mutex, a leaf).
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

struct shared {
  char key[EVRT_IPC_MEM_KEY_SIZE];
  uintptr_t start;
  size_t len;
  bool imported;
  bool closing; /* imported, closed: unmapped once queued work passed */
  struct shared *next;
};

static ACL__MUTEX(ipc_lock)
static struct shared *list;

bool acl__ipc_mem_shared(const void *p) {
  pthread_mutex_lock(&ipc_lock);
  bool hit = false;
  for (struct shared *s = list; s && !hit; s = s->next)
    hit = !s->closing && (uintptr_t)p >= s->start &&
          (uintptr_t)p - s->start < s->len;
  pthread_mutex_unlock(&ipc_lock);
  return hit;
}

static int remember(const char *key, void *p, size_t len, bool imported) {
  struct shared *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  memcpy(s->key, key, EVRT_IPC_MEM_KEY_SIZE - 1);
  s->start = (uintptr_t)p;
  s->len = len;
  s->imported = imported;
  pthread_mutex_lock(&ipc_lock);
  s->next = list;
  list = s;
  pthread_mutex_unlock(&ipc_lock);
  return 0;
}

/* The record of key (NULL if none); with take, off the list. */
static struct shared *find_key(const char *key, bool take) {
  pthread_mutex_lock(&ipc_lock);
  struct shared **pp = &list, *s = NULL;
  while (*pp && strncmp((*pp)->key, key, EVRT_IPC_MEM_KEY_SIZE) != 0)
    pp = &(*pp)->next;
  if (*pp) {
    s = *pp;
    if (take)
      *pp = s->next;
  }
  pthread_mutex_unlock(&ipc_lock);
  return s;
}

/* An imported range is unmapped only once every stream has passed the work
 * enqueued before aclrtIpcMemClose, as aclrtFree releases (acl_memory.c):
 * a kernel queued on the imported memory must not fault (the ipc_memory
 * samples close right after queueing one). */
static void unmap_later(void *arg) {
  struct shared *s = arg;
  evrt_ipc_mem_close(s->key);
  free(find_key(s->key, true));
}

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
                                 size_t len, uint64_t flags) {
  static const char fn[] = "aclrtIpcMemGetExportKey";
  ACL__ENTER(fn);
  if (!devPtr || !key || size == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     !devPtr ? "devPtr is NULL"
                     : !key  ? "key is NULL"
                             : "size is 0");
  if (len < EVRT_IPC_MEM_KEY_SIZE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "len %zu: the key takes 65 bytes", len);
  if (flags != ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT &&
      flags != ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flags 0x%llx",
                     (unsigned long long)flags);
  struct acl__blk b;
  if (!acl__mem_find(devPtr, size, &b) || b.kind != ACL__MEM_DEVICE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p (%zu bytes) is not device memory of this process "
                     "from aclrtMalloc",
                     devPtr, size);
  if (!b.shared)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not page aligned (blocks under 4096 bytes are "
                     "carved from larger ones): allocate at least a page",
                     devPtr);
  char k[EVRT_IPC_MEM_KEY_SIZE];
  evrt_status_t st = evrt_ipc_mem_export(
      devPtr, size,
      flags == ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION
          ? EVRT_IPC_MEM_NO_PID_CHECK
          : 0,
      k);
  if (st)
    return acl__st(st, fn);
  if (!acl__ipc_mem_shared(devPtr) && remember(k, devPtr, size, false)) {
    evrt_ipc_mem_close(k);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  memcpy(key, k, sizeof k);
  return ACL_SUCCESS;
}

aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num) {
  static const char fn[] = "aclrtIpcMemSetImportPid";
  ACL__ENTER(fn);
  if (!key || !pid || num == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     !key ? "key is NULL" : "no pids given");
  return acl__st(evrt_ipc_mem_set_import_pids(key, pid, num), fn);
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key,
                                uint64_t flags) {
  static const char fn[] = "aclrtIpcMemImportByKey";
  ACL__ENTER(fn);
  if (!devPtr || !key)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     devPtr ? "key" : "devPtr");
  if (flags != ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT &&
      flags != ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flags 0x%llx",
                     (unsigned long long)flags);
  void *p = NULL;
  size_t bytes = 0;
  evrt_status_t st = evrt_ipc_mem_import(key, 0, &p, &bytes);
  if (st)
    return acl__st(st, fn);
  struct acl__ctx *c = acl__current_quiet();
  if (acl__mem_track_shared(p, bytes, ACL__MEM_IMPORTED, c ? c->device : 0,
                            true) ||
      remember(key, p, bytes, true)) {
    acl__mem_untrack(p, ACL__MEM_IMPORTED, NULL);
    evrt_ipc_mem_close(key);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *devPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char *key) {
  static const char fn[] = "aclrtIpcMemClose";
  ACL__ENTER(fn);
  if (!key)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "key is NULL");
  pthread_mutex_lock(&ipc_lock);
  struct shared *s = list;
  while (s && strncmp(s->key, key, EVRT_IPC_MEM_KEY_SIZE) != 0)
    s = s->next;
  bool closing = s && s->closing;
  bool imported = s && s->imported;
  if (imported && !closing)
    s->closing = true;
  pthread_mutex_unlock(&ipc_lock);
  if (closing)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "key %.16s... was closed already", key);
  if (imported) {
    /* invalid for the layer at once; unmapped after the queued work */
    acl__mem_untrack((void *)s->start, ACL__MEM_IMPORTED, NULL);
    /* EVRT_CHECK: the import's life ends at this call, not when the
     * deferred unmap runs (that is ordered after every queued task, and
     * would hide a kernel the program let run past its close): queued
     * work not ordered before this call is a use after free.  The import
     * began as a block in evrt_ipc_mem_import; evrt_ipc_mem_close frees
     * it again later (no finding: freed already) and lets the checker's
     * quarantine unmap it. */
    evrt_check_free((void *)s->start, s->len, NULL);
    if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, unmap_later, s) !=
        EVRT_SUCCESS)
      unmap_later(s);
    return ACL_SUCCESS;
  }
  evrt_status_t st = evrt_ipc_mem_close(key);
  if (st == EVRT_SUCCESS)
    free(find_key(key, true));
  return acl__st(st, fn);
}
