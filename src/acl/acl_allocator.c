/*
 * acl_allocator.c - allocator descriptors and their registration on streams
 * (acl/acl_rt_allocator.h).
 *
 * A descriptor holds the caller's allocator object and its four callbacks.
 * aclrtAllocatorRegister copies them for the stream (CANN keeps a copy and
 * the caller's descriptor pointer); aclrtAllocatorGetByStream hands both
 * back.  Live descriptors are kept in a set, so a destroyed one is refused
 * (100000) instead of touched.  Registrations are keyed by the stream's
 * handle value, as CANN keys them by the stream pointer.
 *
 * Lock: alloc_lock, a leaf mutex, guards both tables.
 */
#include "acl_internal.h"

#include <stdlib.h>

struct desc {
  aclrtAllocator obj;
  aclrtAllocatorAllocFunc alloc;
  aclrtAllocatorFreeFunc free_fn;
  aclrtAllocatorAllocAdviseFunc advise;
  aclrtAllocatorGetAddrFromBlockFunc addr;
};

struct reg {
  aclrtAllocatorDesc user; /* the caller's descriptor, as given */
  struct desc copy;
};

static ACL__MUTEX(alloc_lock)
static struct acl__map *live_descs; /* descriptor address -> itself */
static struct acl__map *regs;       /* stream handle value -> struct reg */

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void) {
  struct desc *d = calloc(1, sizeof *d);
  pthread_mutex_lock(&alloc_lock);
  if (d && acl__map_put(&live_descs, (uint64_t)(uintptr_t)d, d)) {
    free(d);
    d = NULL;
  }
  pthread_mutex_unlock(&alloc_lock);
  if (!d)
    acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtAllocatorCreateDesc", "out of memory");
  return d;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc) {
  static const char fn[] = "aclrtAllocatorDestroyDesc";
  if (!allocatorDesc)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "allocatorDesc is NULL");
  pthread_mutex_lock(&alloc_lock);
  void *d = acl__map_del(&live_descs, (uint64_t)(uintptr_t)allocatorDesc);
  pthread_mutex_unlock(&alloc_lock);
  if (!d)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p is not a live allocator descriptor", allocatorDesc);
  free(d);
  return ACL_SUCCESS;
}

/* Set one field of a live descriptor. */
static aclError set_field(const char *fn, aclrtAllocatorDesc d,
                          const void *value, int which) {
  if (!d || !value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     d ? "the value" : "allocatorDesc");
  pthread_mutex_lock(&alloc_lock);
  struct desc *x = acl__map_get(&live_descs, (uint64_t)(uintptr_t)d);
  if (x) {
    switch (which) {
    case 0:
      x->obj = (aclrtAllocator)value;
      break;
    case 1:
      x->alloc = *(const aclrtAllocatorAllocFunc *)value;
      break;
    case 2:
      x->free_fn = *(const aclrtAllocatorFreeFunc *)value;
      break;
    case 3:
      x->advise = *(const aclrtAllocatorAllocAdviseFunc *)value;
      break;
    default:
      x->addr = *(const aclrtAllocatorGetAddrFromBlockFunc *)value;
      break;
    }
  }
  pthread_mutex_unlock(&alloc_lock);
  if (!x)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p is not a live allocator descriptor", d);
  return ACL_SUCCESS;
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
                                    aclrtAllocator allocator) {
  return set_field("aclrtAllocatorSetObjToDesc", allocatorDesc, allocator, 0);
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                          aclrtAllocatorAllocFunc func) {
  return set_field("aclrtAllocatorSetAllocFuncToDesc", allocatorDesc,
                   func ? &func : NULL, 1);
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                         aclrtAllocatorFreeFunc func) {
  return set_field("aclrtAllocatorSetFreeFuncToDesc", allocatorDesc,
                   func ? &func : NULL, 2);
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(
    aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func) {
  return set_field("aclrtAllocatorSetAllocAdviseFuncToDesc", allocatorDesc,
                   func ? &func : NULL, 3);
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func) {
  return set_field("aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
                   allocatorDesc, func ? &func : NULL, 4);
}

aclError aclrtAllocatorRegister(aclrtStream stream,
                                aclrtAllocatorDesc allocatorDesc) {
  static const char fn[] = "aclrtAllocatorRegister";
  if (!stream || !allocatorDesc)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     stream ? "allocatorDesc" : "stream (the default stream "
                                                "cannot take an allocator)");
  uint64_t id;
  evrt_status_t st = evrt_stream_get_id((evrt_stream_t)stream, &id);
  if (st)
    return acl__st(st, fn);
  struct reg *r = malloc(sizeof *r);
  if (!r)
    return acl__fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
  pthread_mutex_lock(&alloc_lock);
  struct desc *d = acl__map_get(&live_descs, (uint64_t)(uintptr_t)allocatorDesc);
  const char *missing = !d          ? "a live allocator descriptor"
                        : !d->obj   ? "allocatorDesc->obj"
                        : !d->alloc ? "allocatorDesc->allocFunc"
                        : !d->free_fn ? "allocatorDesc->freeFunc"
                        : !d->addr  ? "allocatorDesc->getAddrFromBlockFunc"
                                    : NULL;
  if (!missing) {
    r->user = allocatorDesc;
    r->copy = *d; /* a later change of the descriptor does not apply */
    struct reg *old = acl__map_del(&regs, (uint64_t)(uintptr_t)stream);
    free(old); /* the last registration wins */
    if (acl__map_put(&regs, (uint64_t)(uintptr_t)stream, r))
      missing = "memory";
  }
  pthread_mutex_unlock(&alloc_lock);
  if (missing) {
    free(r);
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "missing %s", missing);
  }
  return ACL_SUCCESS;
}

aclError aclrtAllocatorGetByStream(
    aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
    aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
    aclrtAllocatorFreeFunc *freeFunc,
    aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
    aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc) {
  static const char fn[] = "aclrtAllocatorGetByStream";
  if (!allocatorDesc || !stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     allocatorDesc ? "stream" : "allocatorDesc");
  pthread_mutex_lock(&alloc_lock);
  struct reg *r = acl__map_get(&regs, (uint64_t)(uintptr_t)stream);
  struct reg copy;
  if (r)
    copy = *r;
  pthread_mutex_unlock(&alloc_lock);
  if (!r)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "the stream is not registered with any allocator");
  *allocatorDesc = copy.user;
  if (allocator)
    *allocator = copy.copy.obj;
  if (allocFunc)
    *allocFunc = copy.copy.alloc;
  if (freeFunc)
    *freeFunc = copy.copy.free_fn;
  if (allocAdviseFunc)
    *allocAdviseFunc = copy.copy.advise;
  if (getAddrFromBlockFunc)
    *getAddrFromBlockFunc = copy.copy.addr;
  return ACL_SUCCESS;
}

/* An unknown stream, or one unregistered already, is a success (CANN). */
aclError aclrtAllocatorUnregister(aclrtStream stream) {
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtAllocatorUnregister",
                     "stream is NULL");
  pthread_mutex_lock(&alloc_lock);
  struct reg *r = acl__map_del(&regs, (uint64_t)(uintptr_t)stream);
  pthread_mutex_unlock(&alloc_lock);
  free(r);
  return ACL_SUCCESS;
}
