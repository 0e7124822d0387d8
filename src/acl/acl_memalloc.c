/*
 * acl_memalloc.c - allocation with a configuration, cached allocation, the
 * cache maintenance no-ops, frees with a device synchronize, pointer
 * attributes and host-memory registration.
 *
 * Host registration: a virtual device reaches host memory directly, so the
 * "device address" of a registered range is the host address itself.  The
 * registered ranges are kept apart from the block registry (a caller may
 * register memory of aclrtMallocHost), in their own list under reg_lock, a
 * leaf lock.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------- configured allocation */

/* The attributes of aclrtMallocConfig: the device to allocate on; the
 * module id (stored nowhere: it only tags memory for CANN's statistics);
 * the VA flag of host allocations (no separate address space here). */
static aclError read_cfg(const char *fn, const aclrtMallocConfig *cfg,
                         int *device) {
  if (!cfg)
    return ACL_SUCCESS;
  if (cfg->numAttrs && !cfg->attrs)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "cfg->attrs is NULL but numAttrs is %zu", cfg->numAttrs);
  for (size_t i = 0; i < cfg->numAttrs; i++) {
    const aclrtMallocAttribute *a = &cfg->attrs[i];
    switch (a->attr) {
    case ACL_RT_MEM_ATTR_DEVICE_ID:
      if (!acl__device_ok(a->value.deviceId))
        return acl__bad_device(fn, a->value.deviceId,
                               ACL_ERROR_RT_INVALID_DEVICEID);
      *device = (int)a->value.deviceId;
      break;
    case ACL_RT_MEM_ATTR_MODULE_ID:
    case ACL_RT_MEM_ATTR_VA_FLAG:
      break;
    default:
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                       "cfg->attrs[%zu]: unknown attribute %d", i,
                       (int)a->attr);
    }
  }
  return ACL_SUCCESS;
}

static aclError malloc_cfg(const char *fn, void **devPtr, size_t size,
                           aclrtMallocConfig *cfg) {
  if (!devPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
  int device = ACL__DEVICE_CURRENT;
  aclError r = read_cfg(fn, cfg, &device);
  if (r)
    return r;
  return acl__mem_alloc_on(fn, devPtr, size, ACL__MEM_DEVICE, true, device);
}

/* The policy may combine a base rule with the band-width and read-only
 * modifiers; a base rule outside the enum picks pages by size (CANN), so it
 * is not an error.  Neither changes host memory. */
aclError aclrtMallocWithCfg(void **devPtr, size_t size,
                            aclrtMemMallocPolicy policy,
                            aclrtMallocConfig *cfg) {
  (void)policy;
  return malloc_cfg("aclrtMallocWithCfg", devPtr, size, cfg);
}

aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size,
                                     aclrtMemMallocPolicy policy,
                                     aclrtMallocConfig *cfg) {
  (void)policy;
  return malloc_cfg("aclrtMallocForTaskScheduler", devPtr, size, cfg);
}

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size,
                                aclrtMallocConfig *cfg) {
  static const char fn[] = "aclrtMallocHostWithCfg";
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  int device = ACL__DEVICE_CURRENT;
  aclError r = read_cfg(fn, cfg, &device);
  if (r)
    return r;
  if (size > SIZE_MAX)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "size too large");
  return acl__mem_alloc_on(fn, ptr, (size_t)size, ACL__MEM_HOST, true, -1);
}

/* aclrtMalloc's memory is already cacheable and coherent with the host:
 * aclrtMallocCached is aclrtMalloc (CANN: "equivalent"), with the policies
 * the doc lists. */
aclError aclrtMallocCached(void **devPtr, size_t size,
                           aclrtMemMallocPolicy policy) {
  (void)policy;
  return acl__mem_alloc("aclrtMallocCached", devPtr, size, ACL__MEM_DEVICE,
                        true);
}

/* Nothing to flush or invalidate: the CPU's caches are coherent.  CANN's
 * doc: "this version needs no cache maintenance". */
static aclError cache_op(const char *fn, void *devPtr, size_t size) {
  if (!devPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  return ACL_SUCCESS;
}

aclError aclrtMemFlush(void *devPtr, size_t size) {
  return cache_op("aclrtMemFlush", devPtr, size);
}

aclError aclrtMemInvalidate(void *devPtr, size_t size) {
  return cache_op("aclrtMemInvalidate", devPtr, size);
}

/* The device of the block, synchronized, then the ordinary free: no queued
 * work on that device can still touch it. */
static aclError free_sync(const char *fn, void *p, unsigned kind,
                          aclError (*release)(void *)) {
  if (!p)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pointer is NULL");
  struct acl__blk b;
  if (!acl__mem_find(p, 1, &b) || b.start != (uintptr_t)p || b.kind != kind)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p was not returned by %s", p,
                     kind == ACL__MEM_HOST ? "aclrtMallocHost" : "aclrtMalloc");
  struct acl__ctx *c = acl__current_quiet();
  int dev = b.device >= 0 ? b.device : c ? c->device : -1;
  if (dev >= 0) {
    evrt_status_t st = evrt_device_synchronize(dev);
    if (st)
      return acl__st(st, fn);
  }
  return release(p);
}

aclError aclrtFreeWithDevSync(void *devPtr) {
  return free_sync("aclrtFreeWithDevSync", devPtr, ACL__MEM_DEVICE, aclrtFree);
}

aclError aclrtFreeHostWithDevSync(void *hostPtr) {
  return free_sync("aclrtFreeHostWithDevSync", hostPtr, ACL__MEM_HOST,
                   aclrtFreeHost);
}

/* --------------------------------------------------- host registration */

struct reg {
  uintptr_t start;
  size_t size;
  struct reg *next;
};
static ACL__MUTEX(reg_lock)
static struct reg *regs;

static struct reg *reg_find_locked(uintptr_t p, size_t n) {
  for (struct reg *r = regs; r; r = r->next)
    if (p < r->start + r->size && r->start < p + (n ? n : 1))
      return r;
  return NULL;
}

bool acl__host_registered(const void *p, size_t n) {
  pthread_mutex_lock(&reg_lock);
  struct reg *r = reg_find_locked((uintptr_t)p, n);
  bool ok = r && (uintptr_t)p >= r->start &&
            (uintptr_t)p + n <= r->start + r->size;
  pthread_mutex_unlock(&reg_lock);
  return ok;
}

static aclError do_register(const char *fn, void *ptr, uint64_t size,
                            bool pinned_only) {
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  long page = sysconf(_SC_PAGESIZE);
  if ((uintptr_t)ptr % (uintptr_t)(page > 0 ? page : 4096))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "ptr %p is not aligned to a %ld-byte page", ptr, page);
  if (size > SIZE_MAX - (uintptr_t)ptr)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "the range wraps around");
  struct acl__blk b;
  if (pinned_only && acl__mem_find(ptr, 1, &b) && b.kind == ACL__MEM_HOST)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "ACL_HOST_REG_PINNED is for plain host memory, %p is "
                     "pinned already",
                     ptr);
  struct reg *r = malloc(sizeof *r);
  if (!r)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  pthread_mutex_lock(&reg_lock);
  bool clash = reg_find_locked((uintptr_t)ptr, (size_t)size) != NULL;
  if (!clash) {
    *r = (struct reg){(uintptr_t)ptr, (size_t)size, regs};
    regs = r;
  }
  pthread_mutex_unlock(&reg_lock);
  if (clash) {
    free(r);
    return acl__fail(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, fn,
                     "[%p, +%llu) overlaps a registered range", ptr,
                     (unsigned long long)size);
  }
  return ACL_SUCCESS;
}

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type,
                           void **devPtr) {
  static const char fn[] = "aclrtHostRegister";
  if (!ptr || !devPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     ptr ? "devPtr" : "ptr");
  if (type != ACL_HOST_REGISTER_MAPPED)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "register type %d: only ACL_HOST_REGISTER_MAPPED (IO and "
                     "read-only mappings are reserved)",
                     (int)type);
  aclError r = do_register(fn, ptr, size, false);
  if (r)
    return r;
  *devPtr = ptr; /* the device reaches host memory at the same address */
  return ACL_SUCCESS;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
  static const char fn[] = "aclrtHostRegisterV2";
  const uint32_t known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY |
                         ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (!flag || (flag & ~known))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown flag 0x%x", flag);
  if (flag & (ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "ACL_HOST_REG_IOMEMORY and ACL_HOST_REG_READONLY are "
                     "reserved");
  return do_register(fn, ptr, size, (flag & ACL_HOST_REG_PINNED) != 0);
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag) {
  static const char fn[] = "aclrtHostGetDevicePointer";
  if (!pHost || !pDevice)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     pHost ? "pDevice" : "pHost");
  if (flag)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flag is reserved and must be 0");
  if (!acl__host_registered(pHost, 1))
    return acl__fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, fn,
                     "%p is not in a registered range", pHost);
  *pDevice = pHost;
  return ACL_SUCCESS;
}

aclError aclrtHostUnregister(void *ptr) {
  static const char fn[] = "aclrtHostUnregister";
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  pthread_mutex_lock(&reg_lock);
  struct reg **pp = &regs, *found = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)ptr) {
      found = *pp;
      *pp = found->next;
      break;
    }
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return acl__fail(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, fn,
                     "%p is not the start of a registered range", ptr);
  free(found);
  return ACL_SUCCESS;
}

/* Every engine of a virtual device reaches registered memory. */
aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
                                     aclrtHostMemMapCapability *capabilities) {
  static const char fn[] = "aclrtHostMemMapCapabilities";
  if (!capabilities)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "capabilities is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  if ((unsigned)hacType > ACL_RT_HAC_TYPE_CCU)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown HAC type %d",
                     (int)hacType);
  *capabilities = ACL_RT_HOST_MEM_MAP_SUPPORTED;
  return ACL_SUCCESS;
}

/* --------------------------------------------------- pointer attributes */

/* Blocks of the layer answer with their kind and device; memory the layer
 * does not know is ACL_MEM_LOCATION_TYPE_UNREGISTERED (registered host
 * ranges included: they belong to the caller).  The page size is the host's
 * (2 MiB for managed memory, whose granule it is). */
aclError aclrtPointerGetAttributes(const void *ptr,
                                   aclrtPtrAttributes *attributes) {
  static const char fn[] = "aclrtPointerGetAttributes";
  if (!ptr || !attributes)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     ptr ? "attributes" : "ptr");
  aclrtPtrAttributes a = {0};
  long page = sysconf(_SC_PAGESIZE);
  a.pageSize = (uint32_t)(page > 0 ? page : 4096);
  struct acl__blk b;
  if (!acl__mem_find(ptr, 1, &b)) {
    a.location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
  } else {
    switch (b.kind) {
    case ACL__MEM_HOST:
      a.location.type = ACL_MEM_LOCATION_TYPE_HOST;
      break;
    case ACL__MEM_MANAGED:
      a.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
      a.pageSize = 2u << 20;
      break;
    default:
      a.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
      a.location.id = (uint32_t)(b.device < 0 ? 0 : b.device);
      break;
    }
  }
  *attributes = a;
  return ACL_SUCCESS;
}

/* ---------------------------------------------------- memory type check */

/* The ACL_RT_MEM_TYPE_* class of one block of the layer: device memory
 * (aclrtMalloc and its variants, pool blocks, imported IPC memory) or a
 * reserved virtual range; anything else (host, registered, managed,
 * unknown memory) is of no class.  The layer has no DVPP memory. */
static uint32_t mem_class(const void *p) {
  struct acl__blk b;
  if (!acl__mem_find(p, 1, &b))
    return 0;
  switch (b.kind) {
  case ACL__MEM_DEVICE:
  case ACL__MEM_POOL:
  case ACL__MEM_IMPORTED:
    return ACL_RT_MEM_TYPE_DEV;
  case ACL__MEM_VIRTUAL:
    return ACL_RT_MEM_TYPE_RSVD;
  default:
    return 0;
  }
}

/* checkResult is 1 when every address is of a class named in memType, else
 * 0.  CANN's checks, in its order and with its codes: checkResult (cleared
 * first), addrList, reserve, size, memType's bits (107000 for each but a
 * NULL checkResult, which CANN's runtime also reports as 107000). */
aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType,
                           uint32_t *checkResult, uint32_t reserve) {
  static const char fn[] = "aclrtCheckMemType";
  if (!checkResult)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "checkResult is NULL");
  *checkResult = 0;
  if (!addrList)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "addrList is NULL");
  if (reserve)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "reserve is %u; it must be 0", reserve);
  if (!size)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "size is 0");
  const uint32_t known =
      ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD;
  if (memType & ~known)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "memType 0x%x has bits other than ACL_RT_MEM_TYPE_DEV, "
                     "_DVPP and _RSVD",
                     memType);
  uint32_t all = 1;
  for (uint32_t i = 0; i < size && all; i++)
    if (!(mem_class(addrList[i]) & memType))
      all = 0;
  *checkResult = all;
  return ACL_SUCCESS;
}
