/*
 * api.c - the checker's public calls (include/evrt.h): annotations of
 * accesses, allocations and frees, and the quarantine of freed blocks.
 *
 * Lock: quarantine lock (a mutex, a leaf; release functions are called
 * after it is released).
 */
#include "cimpl.h"

#include <stdlib.h>

int evrt_check_enabled(void) {
  return evrt__ready() == EVRT_SUCCESS && evrt__check_on;
}

uint64_t evrt_check_findings(void) {
  return evrt__check_on ? evrt__check_nfindings() : 0;
}

static evrt_status_t range_ok(const char *fn, const void *ptr, size_t bytes) {
  if (bytes && !ptr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%s: NULL pointer with %zu "
                      "bytes", fn, bytes);
  if (bytes && (uintptr_t)ptr + bytes < (uintptr_t)ptr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%s: [%p, +%zu) wraps around "
                      "the address space", fn, ptr, bytes);
  return EVRT_SUCCESS;
}

static void annotate(const void *ptr, size_t bytes, int kind, bool rw) {
  struct evrt__acc *a = evrt__acc_new();
  cvc_t *vc = NULL;
  if (!a || !evrt__check_ctx_access(a, &vc)) {
    evrt__acc_unref(a);
    evrt__check_oom();
    return;
  }
  a->kind = (uint8_t)kind;
  a->rw = rw;
  a->lo = (uintptr_t)ptr;
  a->hi = (uintptr_t)ptr + bytes;
  if (kind == ACC_ALLOC)
    evrt__shadow_alloc(a);
  else if (kind == ACC_FREE)
    evrt__shadow_free(a, vc);
  else
    evrt__shadow_access(a, vc);
  evrt__cvc_unref(vc);
  evrt__acc_unref(a);
}

evrt_status_t evrt_check_access(const void *ptr, size_t bytes, unsigned mode) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (mode == 0 || (mode & ~(EVRT_CHECK_READ | EVRT_CHECK_WRITE)))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "evrt_check_access: mode "
                      "0x%x is not EVRT_CHECK_READ and/or EVRT_CHECK_WRITE",
                      mode);
  if ((st = range_ok("evrt_check_access", ptr, bytes)))
    return st;
  if (!evrt__check_on || !bytes)
    return EVRT_SUCCESS;
  /* A read-modify-write is one access, a write that also reads (it
   * conflicts with whatever a write conflicts with): one finding per
   * conflict, not one for its read and one for its write. */
  if (mode == EVRT_CHECK_READ)
    annotate(ptr, bytes, ACC_READ, false);
  else
    annotate(ptr, bytes, ACC_WRITE, mode & EVRT_CHECK_READ);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_alloc(const void *ptr, size_t bytes) {
  evrt_status_t st = evrt__ready();
  if (st || (st = range_ok("evrt_check_alloc", ptr, bytes)))
    return st;
  if (evrt__check_on && bytes)
    annotate(ptr, bytes, ACC_ALLOC, false);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_unobserved_begin(void) {
  evrt_status_t st = evrt__ready();
  if (st || !evrt__check_on)
    return st;
  evrt__check_unobserved(1);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_unobserved_end(void) {
  evrt_status_t st = evrt__ready();
  if (st || !evrt__check_on)
    return st;
  if (!evrt__check_unobserved(-1))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "evrt_check_unobserved_end: "
                      "no evrt_check_unobserved_begin of this thread is open");
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_site_api(const char *where, unsigned api) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (api > EVRT_CHECK_API_PYTHON)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "evrt_check_site_api: api %u is not an EVRT_CHECK_API_*",
                      api);
  if (evrt__check_on)
    evrt__site_hint(where, api);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_site(const char *where) {
  return evrt_check_site_api(where, EVRT_CHECK_API_C);
}

evrt_status_t evrt_check_release(const void *sync) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!sync)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "evrt_check_release: sync "
                      "is NULL");
  if (evrt__check_on)
    evrt__check_release(sync);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_acquire(const void *sync) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!sync)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "evrt_check_acquire: sync "
                      "is NULL");
  if (evrt__check_on)
    evrt__check_acquire(sync);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_check_forget(const void *sync) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!sync)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "evrt_check_forget: sync "
                      "is NULL");
  if (evrt__check_on)
    evrt__check_forget(sync);
  return EVRT_SUCCESS;
}

/* ----------------------------------------------------------- quarantine */

struct qblock {
  void *ptr;
  size_t bytes;
  void (*release)(void *);
  struct qblock *next;
};
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct qblock *q_head, *q_tail;
static size_t q_bytes, q_count;
#define Q_MAX_BYTES ((size_t)64 << 20)
#define Q_MAX_COUNT 4096

evrt_status_t evrt_check_free(void *ptr, size_t bytes,
                              void (*release)(void *)) {
  evrt_status_t st = evrt__ready();
  if (st || (st = range_ok("evrt_check_free", ptr, bytes)))
    return st;
  if (!evrt__check_on || !bytes || !ptr) {
    if (release && ptr)
      release(ptr);
    return EVRT_SUCCESS;
  }
  annotate(ptr, bytes, ACC_FREE, false);
  if (!release)
    return EVRT_SUCCESS;
  struct qblock *b = malloc(sizeof *b);
  if (!b) {
    evrt__shadow_forget((uintptr_t)ptr, (uintptr_t)ptr + bytes);
    release(ptr);
    return EVRT_SUCCESS;
  }
  *b = (struct qblock){ptr, bytes, release, NULL};
  struct qblock *out = NULL;
  pthread_mutex_lock(&q_lock);
  if (q_tail)
    q_tail->next = b;
  else
    q_head = b;
  q_tail = b;
  q_bytes += bytes;
  q_count++;
  /* The oldest blocks leave: their shadow goes with them (the memory may
   * then be reused by anything, tracked or not). */
  while (q_head && (q_bytes > Q_MAX_BYTES || q_count > Q_MAX_COUNT)) {
    struct qblock *o = q_head;
    q_head = o->next;
    if (!q_head)
      q_tail = NULL;
    q_bytes -= o->bytes;
    q_count--;
    o->next = out;
    out = o;
  }
  pthread_mutex_unlock(&q_lock);
  while (out) {
    struct qblock *o = out;
    out = o->next;
    evrt__shadow_forget((uintptr_t)o->ptr, (uintptr_t)o->ptr + o->bytes);
    o->release(o->ptr);
    free(o);
  }
  return EVRT_SUCCESS;
}
