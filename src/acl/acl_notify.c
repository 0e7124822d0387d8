/*
 * acl_notify.c - notifies on evrt's stream-ordered values (issue 13 item 5:
 * a notify wait parks its stream and holds no worker).
 *
 * A notify is a 64-bit word: aclrtRecordNotify is a value write of 1 in
 * stream order, aclrtWaitAndResetNotify a value wait for 1 that resets the
 * word as it passes (EVRT_VALUE_WAIT_RESET: one wait per record), with the
 * timeout in seconds (0: none; a wait that times out lets its stream go on,
 * and the next synchronize reports ACL_ERROR_RT_WAIT_TIMEOUT once, as for
 * event waits).  aclrtNotifyBatchReset stores 0 from the host.
 *
 * The word lives in evrt interprocess memory (a page of its own) so that
 * aclrtNotifyGetExportKey can share it: another process imports the key
 * (aclrtNotifyImportByKey) and records or waits on the same word; waits on
 * an exported or imported notify also poll, since the other process's
 * writes wake nobody here.  If no shareable memory can be had (descriptors
 * exhausted), the word is private and the notify cannot be exported.
 *
 * Lifetime: the live notifies are in a list under acl__lock; each call
 * holds a reference while it enqueues.  aclrtDestroyNotify takes the handle
 * off the list; when the last reference goes, the word is released once
 * every stream has passed what was enqueued until then
 * (evrt_device_launch_host_func): a queued record or wait never touches a
 * freed word.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

struct notify {
  uint64_t *word;
  void *page;    /* evrt_ipc_mem_alloc'd (owner) or imported mapping */
  bool imported;
  atomic_bool exported; /* set once, under acl__lock (with key) */
  char key[EVRT_IPC_MEM_KEY_SIZE];
  atomic_uint refs; /* 1 for the handle + 1 per call in progress */
  uint32_t id;
  struct notify *next;
};

static struct notify *notifies; /* live ones, under acl__lock */
static uint32_t next_id;

static void release(void *arg) {
  struct notify *n = arg;
  if (n->imported)
    evrt_ipc_mem_close(n->key);
  else if (n->page)
    evrt_ipc_mem_free(n->page);
  else
    free(n->word);
  free(n);
}

static void put(struct notify *n) {
  /* acq_rel: the last owner sees every enqueue of the others */
  if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
    return;
  if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, release, n) !=
      EVRT_SUCCESS)
    return; /* cannot tell when queued tasks end: keep the word (a leak) */
}

/* Validate and take a reference. */
static aclError get(const char *fn, aclrtNotify h, struct notify **out) {
  if (!h)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  ACL__ENTER(fn);
  pthread_mutex_lock(&acl__lock);
  struct notify *n = notifies;
  while (n && n != (struct notify *)h)
    n = n->next;
  if (n)
    atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "notify %p is destroyed or not a notify", h);
  *out = n;
  return ACL_SUCCESS;
}

static void add(struct notify *n) {
  atomic_init(&n->refs, 1);
  pthread_mutex_lock(&acl__lock);
  n->id = next_id++;
  n->next = notifies;
  notifies = n;
  pthread_mutex_unlock(&acl__lock);
}

aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag) {
  static const char fn[] = "aclrtCreateNotify";
  if (!notify)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flag %llu is neither ACL_NOTIFY_DEFAULT nor "
                     "ACL_NOTIFY_DEVICE_USE_ONLY",
                     (unsigned long long)flag);
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  struct notify *n = calloc(1, sizeof *n);
  if (!n)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  void *page = NULL;
  if (evrt_ipc_mem_alloc(sizeof(uint64_t), &page) == EVRT_SUCCESS) {
    n->page = page;
    n->word = page;
  } else if (!(n->word = calloc(1, sizeof *n->word))) {
    free(n);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  add(n);
  *notify = n;
  return ACL_SUCCESS;
}

aclError aclrtDestroyNotify(aclrtNotify notify) {
  static const char fn[] = "aclrtDestroyNotify";
  if (!notify)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notify is NULL");
  ACL__ENTER(fn);
  pthread_mutex_lock(&acl__lock);
  struct notify **pp = &notifies;
  while (*pp && *pp != (struct notify *)notify)
    pp = &(*pp)->next;
  struct notify *n = *pp;
  if (n)
    *pp = n->next;
  pthread_mutex_unlock(&acl__lock);
  if (!n)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "notify %p is destroyed or not a notify", notify);
  put(n);
  return ACL_SUCCESS;
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) {
  static const char fn[] = "aclrtRecordNotify";
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  evrt_stream_t h;
  if (!(r = acl__stream(fn, stream, &h)))
    r = acl__st(evrt_stream_write_value64(h, n->word, 1, 0), fn);
  put(n);
  return r;
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream,
                                 uint32_t timeout) {
  static const char fn[] = "aclrtWaitAndResetNotify";
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  evrt_stream_t h;
  if (!(r = acl__stream(fn, stream, &h))) {
    /* Only evrt writes the word here (no re-check after host functions);
     * another process's writes are polled for. */
    unsigned flags = EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_RESET |
                     EVRT_VALUE_WAIT_EXPLICIT;
    if (n->imported || atomic_load_explicit(&n->exported, memory_order_relaxed))
      flags |= EVRT_VALUE_WAIT_POLL;
    r = acl__st(evrt_stream_wait_value64_timeout(
                    h, n->word, 1, flags,
                    timeout ? (int64_t)timeout * 1000000000 : -1),
                fn);
  }
  put(n);
  return r;
}

aclError aclrtNotifyBatchReset(aclrtNotify *list, size_t num) {
  static const char fn[] = "aclrtNotifyBatchReset";
  if (!list || num == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     list ? "num is 0" : "notifies is NULL");
  struct notify **got = calloc(num, sizeof *got);
  if (!got)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  /* All valid or nothing reset. */
  size_t k = 0;
  aclError r = ACL_SUCCESS;
  for (; k < num && !r; k++)
    if ((r = get(fn, list[k], &got[k])))
      break;
  if (!r)
    for (size_t i = 0; i < num; i++)
      evrt_value_write64(got[i]->word, 0);
  for (size_t i = 0; i < k; i++)
    put(got[i]);
  free(got);
  return r;
}

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId) {
  static const char fn[] = "aclrtGetNotifyId";
  if (!notifyId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "notifyId is NULL");
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  *notifyId = n->id;
  put(n);
  return ACL_SUCCESS;
}

/* -------------------------------------------------------- interprocess */

aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len,
                                 uint64_t flags) {
  static const char fn[] = "aclrtNotifyGetExportKey";
  if (!key || len < EVRT_IPC_MEM_KEY_SIZE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "key is NULL or len %zu is under 65", len);
  if (flags != ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT &&
      flags != ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flags 0x%llx",
                     (unsigned long long)flags);
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  if (n->imported || !n->page) {
    put(n);
    return acl__fail(n->imported ? ACL_ERROR_RT_PARAM_INVALID
                                 : ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     fn, "%s",
                     n->imported ? "an imported notify cannot be exported"
                                 : "this notify has no shareable memory "
                                   "(descriptors exhausted at its creation)");
  }
  char k[EVRT_IPC_MEM_KEY_SIZE];
  evrt_status_t st = evrt_ipc_mem_export(
      n->page, sizeof(uint64_t),
      flags ? EVRT_IPC_MEM_NO_PID_CHECK : 0, k);
  if (st == EVRT_SUCCESS) {
    pthread_mutex_lock(&acl__lock);
    memcpy(n->key, k, sizeof k);
    atomic_store_explicit(&n->exported, true, memory_order_relaxed);
    pthread_mutex_unlock(&acl__lock);
    memcpy(key, k, sizeof k);
  }
  put(n);
  return acl__st(st, fn);
}

aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num) {
  static const char fn[] = "aclrtNotifySetImportPid";
  if (!pid || num == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "no pids given");
  struct notify *n;
  aclError r = get(fn, notify, &n);
  if (r)
    return r;
  char k[EVRT_IPC_MEM_KEY_SIZE];
  pthread_mutex_lock(&acl__lock);
  bool exported = atomic_load_explicit(&n->exported, memory_order_relaxed);
  memcpy(k, n->key, sizeof k);
  pthread_mutex_unlock(&acl__lock);
  if (!exported)
    r = acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                  "the notify was not exported (aclrtNotifyGetExportKey)");
  else
    r = acl__st(evrt_ipc_mem_set_import_pids(k, pid, num), fn);
  put(n);
  return r;
}

aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key,
                                uint64_t flags) {
  static const char fn[] = "aclrtNotifyImportByKey";
  if (!notify || !key)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     notify ? "key" : "notify");
  if (flags != ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT &&
      flags != ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flags 0x%llx",
                     (unsigned long long)flags);
  struct notify *n = calloc(1, sizeof *n);
  if (!n)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  void *p = NULL;
  size_t bytes = 0;
  evrt_status_t st = evrt_ipc_mem_import(key, 0, &p, &bytes);
  if (st == EVRT_SUCCESS && bytes != sizeof(uint64_t)) {
    evrt_ipc_mem_close(key);
    free(n);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "the key names memory, not a notify");
  }
  if (st) {
    free(n);
    return acl__st(st, fn);
  }
  n->word = p;
  n->page = p;
  n->imported = true;
  memcpy(n->key, key, EVRT_IPC_MEM_KEY_SIZE - 1);
  n->key[EVRT_IPC_MEM_KEY_SIZE - 1] = 0;
  add(n);
  *notify = n;
  return ACL_SUCCESS;
}
