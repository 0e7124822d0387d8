/*
 * acl_memory.c - aclrtMalloc/aclrtMallocHost/aclrtFree/aclrtFreeHost and the
 * copy and set calls.  "Device" memory is host memory here.  Every block is
 * kept in a registry (a tree of address ranges under its own mutex) so that
 * aclrtFree rejects pointers it did not hand out, and so that
 * aclrtMemcpyAsync can tell pinned host memory (from aclrtMallocHost: the
 * copy is asynchronous) from plain host memory (the call returns only after
 * the copy is done, as the ACL doc says).
 */
#include "acl_internal.h"

#include <search.h>
#include <stdlib.h>
#include <string.h>

struct blk {
  uintptr_t start;
  size_t size;
  bool host;
};

static void *tree;
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* Ranges compare equal when they overlap, so a one-byte key finds the block
 * holding an interior pointer. */
static int cmp(const void *a, const void *b) {
  const struct blk *x = a, *y = b;
  if (x->start + (x->size ? x->size : 1) <= y->start)
    return -1;
  if (y->start + (y->size ? y->size : 1) <= x->start)
    return 1;
  return 0;
}

/* The registered block containing [p, p+n), or NULL. Copies it out. */
static bool find(const void *p, size_t n, struct blk *out) {
  struct blk key = {(uintptr_t)p, 1, false};
  pthread_mutex_lock(&mem_lock);
  struct blk **hit = tfind(&key, &tree, cmp);
  bool ok = hit && (uintptr_t)p + n <= (*hit)->start + (*hit)->size;
  if (ok)
    *out = **hit;
  pthread_mutex_unlock(&mem_lock);
  return ok;
}

static aclError alloc(const char *fn, void **ptr, size_t size, bool host) {
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pointer is NULL");
  if (size == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (size > SIZE_MAX / 2)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                          "size %zu is too large", size);
  /* The doc: size rounded up to 32 bytes plus 32, start 64-byte aligned. */
  size_t real = ((size + 31) & ~(size_t)31) + 32;
  real = (real + 63) & ~(size_t)63; /* aligned_alloc wants a multiple */
  struct blk *b = malloc(sizeof *b);
  void *p = b ? aligned_alloc(64, real) : NULL;
  if (!p) {
    free(b);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                          "cannot allocate %zu bytes", size);
  }
  *b = (struct blk){(uintptr_t)p, real, host};
  pthread_mutex_lock(&mem_lock);
  void *ins = tsearch(b, &tree, cmp);
  pthread_mutex_unlock(&mem_lock);
  if (!ins) {
    free(p);
    free(b);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *ptr = p;
  return ACL_SUCCESS;
}

static aclError release(const char *fn, void *p, bool host) {
  if (!p)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pointer is NULL");
  struct blk key = {(uintptr_t)p, 1, false};
  pthread_mutex_lock(&mem_lock);
  struct blk **hit = tfind(&key, &tree, cmp);
  struct blk *b = hit ? *hit : NULL;
  bool ok = b && b->start == (uintptr_t)p && b->host == host;
  if (ok)
    tdelete(&key, &tree, cmp);
  pthread_mutex_unlock(&mem_lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "%p was not returned by %s (or was freed already)",
                          p, host ? "aclrtMallocHost" : "aclrtMalloc");
  free(p);
  free(b);
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  static const char fn[] = "aclrtMalloc";
  unsigned base = (unsigned)policy & 0xFFu;
  unsigned mods = (unsigned)policy & ~0xFFu;
  const unsigned allowed = ACL_MEM_TYPE_LOW_BAND_WIDTH |
                           ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                           ACL_MEM_ACCESS_USER_SPACE_READONLY;
  if (base > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P || (mods & ~allowed))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown policy 0x%x",
                          (unsigned)policy);
  return alloc(fn, devPtr, size, false);
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
  return alloc("aclrtMallocHost", hostPtr, size, true);
}

aclError aclrtFree(void *devPtr) { return release("aclrtFree", devPtr, false); }

aclError aclrtFreeHost(void *hostPtr) {
  return release("aclrtFreeHost", hostPtr, true);
}

static aclError copy_checks(const char *fn, void *dst, size_t destMax,
                            const void *src, size_t count, int kind) {
  if (!dst || !src)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                          dst ? "src" : "dst");
  if (count > destMax)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "count %zu is larger than destMax %zu", count,
                          destMax);
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown kind %d", kind);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
  aclError r = copy_checks("aclrtMemcpy", dst, destMax, src, count, (int)kind);
  if (r || (r = acl__mdl_unsafe("aclrtMemcpy",
                                ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT)))
    return r;
  if (count)
    memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                          size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  static const char fn[] = "aclrtMemcpyAsync";
  aclError r = copy_checks(fn, dst, destMax, src, count, (int)kind);
  if (r)
    return r;
  if (kind == ACL_MEMCPY_HOST_TO_HOST)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "host-to-host copies are not asynchronous: use "
                          "aclrtMemcpy");
  evrt_stream_t h;
  if ((r = acl__stream(fn, stream, &h)))
    return r;
  /* The host side of the copy: plain (not ACL-allocated) host memory makes
   * the call return only after the copy completes. */
  struct blk b;
  bool sync = false;
  if (kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
    sync = !find(src, count, &b);
  else if (kind == ACL_MEMCPY_DEVICE_TO_HOST)
    sync = !find(dst, count, &b);
  else if (kind == ACL_MEMCPY_DEFAULT)
    sync = !find(src, count, &b) || !find(dst, count, &b);
  /* A blocking copy is potentially unsafe during a capture; allowed, it is
   * captured without the synchronize (acl_mdl.c). */
  if (sync && (r = acl__mdl_blocking_copy(fn, h, &sync)))
    return r;
  evrt_status_t st = evrt_memcpy_async(h, dst, src, count);
  if (st == EVRT_SUCCESS && sync)
    st = evrt_stream_synchronize(h);
  return acl__st(st, fn);
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
                     size_t count) {
  static const char fn[] = "aclrtMemset";
  if (!devPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
  if (count > maxCount)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "count %zu is larger than maxCount %zu", count,
                          maxCount);
  aclError r = acl__mdl_unsafe(fn, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  if (r)
    return r;
  memset(devPtr, value, count);
  return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                          size_t count, aclrtStream stream) {
  static const char fn[] = "aclrtMemsetAsync";
  if (!devPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
  if (count > maxCount)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "count %zu is larger than maxCount %zu", count,
                          maxCount);
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  return acl__st(evrt_memset_async(h, devPtr, value, count), fn);
}
