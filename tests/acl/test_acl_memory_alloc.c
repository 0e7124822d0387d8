/* Allocation variants (with a configuration, cached, for the task
 * scheduler, host with a configuration), cache maintenance, frees with a
 * device synchronize, pointer attributes, host registration and managed
 * memory; behaviour and bad input (CANN's codes, nothing changed).  Runs
 * with EVRT_CPU_DEVICES=2. */
#include "acl_test.h"

#include <stdlib.h>

TEST(malloc_with_cfg_on_a_device) {
  void *p = NULL;
  aclrtMallocAttribute at;
  memset(&at, 0, sizeof at);
  at.attr = ACL_RT_MEM_ATTR_DEVICE_ID;
  at.value.deviceId = 1;
  aclrtMallocConfig cfg = {&at, 1};
  ASSERT_OK(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
  aclrtPtrAttributes a;
  ASSERT_OK(aclrtPointerGetAttributes(p, &a));
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  ASSERT_EQ(a.location.id, 1);
  ASSERT_OK(aclrtFree(p));
  ASSERT_OK(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
  ASSERT_OK(aclrtPointerGetAttributes(p, &a));
  ASSERT_EQ(a.location.id, 0); /* the current device */
  ASSERT_OK(aclrtFree(p));
  ASSERT_OK(aclrtMallocForTaskScheduler(&p, 64, ACL_MEM_MALLOC_NORMAL_ONLY, &cfg));
  ASSERT_OK(aclrtFree(p));
  /* bad input: nothing allocated, *devPtr untouched */
  p = (void *)1;
  at.value.deviceId = 9;
  ASSERT_ACL(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_ERROR_RT_INVALID_DEVICEID);
  aclrtMallocConfig broken = {NULL, 2};
  ASSERT_ACL(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, &broken), ACL_ERROR_INVALID_PARAM);
  at.attr = (aclrtMallocAttrType)77;
  ASSERT_ACL(aclrtMallocWithCfg(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMallocWithCfg(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMallocWithCfg(NULL, 8, ACL_MEM_MALLOC_HUGE_FIRST, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT(p == (void *)1);
  (void)aclGetRecentErrMsg();
}

TEST(host_with_cfg_cached_and_cache_ops) {
  void *h = NULL, *c = NULL;
  ASSERT_OK(aclrtMallocHostWithCfg(&h, 128, NULL));
  aclrtPtrAttributes a;
  ASSERT_OK(aclrtPointerGetAttributes(h, &a));
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_HOST);
  ASSERT_OK(aclrtFreeHost(h));
  ASSERT_ACL(aclrtMallocHostWithCfg(&h, 0, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtMallocCached(&c, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  memset(c, 1, 256);
  ASSERT_OK(aclrtMemFlush(c, 256));
  ASSERT_OK(aclrtMemInvalidate(c, 256));
  ASSERT_EQ(((char *)c)[255], 1);
  ASSERT_ACL(aclrtMemFlush(c, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemInvalidate(NULL, 4), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtFree(c));
  (void)aclGetRecentErrMsg();
}

static void slow_write(void *arg) {
  sleep_ms(50);
  *(volatile char *)arg = 42;
}

TEST(free_with_dev_sync_waits_for_the_device) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  char *p = NULL;
  ASSERT_OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  static volatile char seen;
  seen = 0;
  ASSERT_OK(aclrtLaunchHostFunc(s, slow_write, (void *)&seen));
  ASSERT_OK(aclrtFreeWithDevSync(p)); /* returns once the device is idle */
  ASSERT_EQ(seen, 42);
  ASSERT_ACL(aclrtFreeWithDevSync(p), ACL_ERROR_RT_PARAM_INVALID); /* freed */
  char *h = NULL;
  ASSERT_OK(aclrtMallocHost((void **)&h, 64));
  ASSERT_ACL(aclrtFreeWithDevSync(h), ACL_ERROR_RT_PARAM_INVALID); /* host */
  ASSERT_OK(aclrtFreeHostWithDevSync(h));
  ASSERT_ACL(aclrtFreeHostWithDevSync(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(pointer_attributes) {
  aclrtPtrAttributes a;
  char local[8] = {0};
  memset(&a, 0x55, sizeof a);
  ASSERT_OK(aclrtPointerGetAttributes(local, &a));
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
  ASSERT(a.pageSize >= 4096);
  ASSERT_EQ(a.rsv[0], 0);
  char *d = NULL;
  ASSERT_OK(aclrtMalloc((void **)&d, 1000, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtPointerGetAttributes(d + 999, &a)); /* interior pointer */
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  ASSERT_OK(aclrtFree(d));
  ASSERT_OK(aclrtPointerGetAttributes(d, &a)); /* freed: not ACL memory */
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
  ASSERT_ACL(aclrtPointerGetAttributes(NULL, &a), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtPointerGetAttributes(local, NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(host_register) {
  long page = sysconf(_SC_PAGESIZE);
  char *mem = aligned_alloc((size_t)page, (size_t)page * 4);
  ASSERT(mem != NULL);
  void *dev = NULL, *dev2 = NULL;
  ASSERT_OK(aclrtHostRegister(mem, (uint64_t)page * 2, ACL_HOST_REGISTER_MAPPED, &dev));
  ASSERT(dev != NULL);
  ASSERT_OK(aclrtHostGetDevicePointer(mem + 10, &dev2, 0));
  ASSERT(dev2 != NULL);
  /* the device address reaches the same memory */
  mem[10] = 5;
  ASSERT_EQ(((char *)dev)[10], 5);
  /* overlapping registration */
  ASSERT_ACL(aclrtHostRegisterV2(mem + page, (uint64_t)page, ACL_HOST_REG_MAPPED),
             ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  ASSERT_OK(aclrtHostRegisterV2(mem + 2 * page, (uint64_t)page, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
  ASSERT_ACL(aclrtHostUnregister(mem + page), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_OK(aclrtHostUnregister(mem));
  ASSERT_OK(aclrtHostUnregister(mem + 2 * page));
  ASSERT_ACL(aclrtHostUnregister(mem), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_ACL(aclrtHostGetDevicePointer(mem, &dev2, 0), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED);
  /* bad input */
  dev = NULL;
  ASSERT_ACL(aclrtHostRegister(mem + 1, 64, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtHostRegister(mem, 0, ACL_HOST_REGISTER_MAPPED, &dev), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtHostRegister(mem, 64, ACL_HOST_REGISTER_MAPPED, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtHostRegister(mem, 64, ACL_HOST_REGISTER_IOMEMORY, &dev), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtHostRegisterV2(mem, 64, 0x40), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtHostRegisterV2(mem, 64, ACL_HOST_REG_READONLY), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtHostGetDevicePointer(mem, &dev2, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT(dev == NULL);
  /* pinned memory cannot be registered as "pin me" */
  void *pinned = NULL;
  ASSERT_OK(aclrtMallocHost(&pinned, (size_t)page));
  if (((uintptr_t)pinned % (uintptr_t)page) == 0)
    ASSERT_ACL(aclrtHostRegisterV2(pinned, 64, ACL_HOST_REG_PINNED), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtFreeHost(pinned));
  aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
  ASSERT_OK(aclrtHostMemMapCapabilities(1, ACL_RT_HAC_TYPE_AIC, &cap));
  ASSERT_EQ(cap, ACL_RT_HOST_MEM_MAP_SUPPORTED);
  ASSERT_ACL(aclrtHostMemMapCapabilities(2, ACL_RT_HAC_TYPE_AIC, &cap), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtHostMemMapCapabilities(0, (aclrtHacType)99, &cap), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, NULL), ACL_ERROR_INVALID_PARAM);
  free(mem);
  (void)aclGetRecentErrMsg();
}

#define MB2 ((size_t)2 << 20)

TEST(managed_memory_advice) {
  char *p = NULL;
  ASSERT_OK(aclrtMemAllocManaged((void **)&p, 3 * MB2 - 100, ACL_RT_MEM_ATTACH_GLOBAL));
  ASSERT(p != NULL);
  p[3 * MB2 - 1] = 1; /* rounded up to 3 granules */
  aclrtPtrAttributes pa;
  ASSERT_OK(aclrtPointerGetAttributes(p + MB2, &pa));
  ASSERT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_MANAGED);
  int32_t v = -9;
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 3 * MB2, &v, 4));
  ASSERT_EQ(v, 0);
  aclrtMemManagedLocation dev1 = {ACL_MEM_LOCATIONTYPE_DEVICE, 1};
  aclrtMemManagedLocation host = {ACL_MEM_LOCATIONTYPE_HOST, 0};
  ASSERT_OK(aclrtMemManagedAdvise(p, 2 * MB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host));
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 2 * MB2, &v, 4));
  ASSERT_EQ(v, 1);
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 3 * MB2, &v, 4));
  ASSERT_EQ(v, 0); /* not every granule */
  ASSERT_OK(aclrtMemManagedAdvise(p + MB2, MB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, dev1));
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p + MB2, 10, &v, 4));
  ASSERT_EQ(v, 1);
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, 2 * MB2, &v, 4));
  ASSERT_EQ(v, -2); /* differs over the range */
  aclrtMemManagedLocationType t = ACL_MEM_LOCATIONTYPE_INVALID;
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, p + MB2, MB2, &t, sizeof t));
  ASSERT_EQ(t, ACL_MEM_LOCATIONTYPE_DEVICE);
  ASSERT_OK(aclrtMemManagedAdvise(p, MB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, dev1));
  ASSERT_OK(aclrtMemManagedAdvise(p, MB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, host));
  int32_t ids[3] = {7, 7, 7};
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, MB2, ids, sizeof ids));
  ASSERT_EQ(ids[0], -1);
  ASSERT_EQ(ids[1], 1);
  ASSERT_EQ(ids[2], -2);
  /* several attributes at once */
  aclrtMemManagedRangeAttribute attrs[2] = {ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                            ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID};
  int32_t r0 = 0, r1 = 0;
  void *data[2] = {&r0, &r1};
  size_t sizes[2] = {4, 4};
  ASSERT_OK(aclrtMemManagedGetAttrs(attrs, 2, p + MB2, MB2, data, sizes));
  ASSERT_EQ(r0, 1);
  ASSERT_EQ(r1, 1);
  /* bad input: nothing changed */
  ASSERT_ACL(aclrtMemManagedAdvise(p + 1, MB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemManagedAdvise(p, 4 * MB2, ACL_MEM_ADVISE_UNSET_READ_MOSTLY, host), ACL_ERROR_RT_PARAM_INVALID);
  aclrtMemManagedLocation bad = {ACL_MEM_LOCATIONTYPE_DEVICE, 5};
  ASSERT_ACL(aclrtMemManagedAdvise(p, MB2, ACL_MEM_ADVISE_UNSET_READ_MOSTLY, bad), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemManagedAdvise(p, MB2, (aclrtMemManagedAdviseType)9, host), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, MB2, &v, 4));
  ASSERT_EQ(v, 1);
  ASSERT_ACL(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, MB2, &v, 8), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 0, &v, 4), ACL_ERROR_INVALID_PARAM);
  char local[4] = {0};
  ASSERT_ACL(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, local, 4, &v, 4), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtFree(p)); /* aclrtFree frees managed memory */
  ASSERT_ACL(aclrtMemManagedAdvise(p, MB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host), ACL_ERROR_RT_PARAM_INVALID);
  /* allocation errors */
  void *q = (void *)1;
  ASSERT_ACL(aclrtMemAllocManaged(&q, 16, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemAllocManaged(&q, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemAllocManaged(NULL, 16, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM);
  ASSERT(q == (void *)1);
  (void)aclGetRecentErrMsg();
}

TEST(managed_memory_prefetch) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  char *p = NULL;
  ASSERT_OK(aclrtMemAllocManaged((void **)&p, 2 * MB2, ACL_RT_MEM_ATTACH_GLOBAL));
  memset(p, 4, 2 * MB2);
  aclrtMemManagedLocation dev0 = {ACL_MEM_LOCATIONTYPE_DEVICE, 0};
  ASSERT_OK(aclrtMemManagedPrefetchAsync(p, 2 * MB2, dev0, 0, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  int32_t v = -9;
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, 2 * MB2, &v, 4));
  ASSERT_EQ(v, 0);
  ASSERT_EQ(p[MB2 + 5], 4); /* data unchanged */
  const void *ptrs[2] = {p, p + MB2};
  size_t sizes[2] = {MB2, MB2}, idx[2] = {0, 1};
  aclrtMemManagedLocation locs[2] = {{ACL_MEM_LOCATIONTYPE_HOST, 0}, {ACL_MEM_LOCATIONTYPE_DEVICE, 1}};
  ASSERT_OK(aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idx, 2, 0, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, MB2, &v, 4));
  ASSERT_EQ(v, -1);
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, p + MB2, MB2, &v, 4));
  ASSERT_EQ(v, 1);
  /* bad input leaves the recorded locations alone */
  ASSERT_ACL(aclrtMemManagedPrefetchAsync(p, 2 * MB2, dev0, 1, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemManagedPrefetchAsync(p, 100, dev0, 0, s), ACL_ERROR_RT_PARAM_INVALID);
  size_t bad_sizes[2] = {MB2, 3 * MB2};
  ASSERT_ACL(aclrtMemManagedPrefetchBatchAsync(ptrs, bad_sizes, 2, locs, idx, 2, 0, s),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, MB2, &v, 4));
  ASSERT_EQ(v, -1);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtMemManagedPrefetchAsync(p, 2 * MB2, dev0, 0, s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_OK(aclrtFree(p));
  (void)aclGetRecentErrMsg();
}

/* aclrtCheckMemType: 1 when every address is of a class named in memType
 * (device memory of every allocator, reserved virtual ranges), else 0. */
TEST(check_mem_type) {
  void *dev = NULL, *cached = NULL, *host = NULL, *va = NULL;
  char local[8];
  ASSERT_OK(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtMallocCached(&cached, 256, ACL_MEM_MALLOC_NORMAL_ONLY));
  ASSERT_OK(aclrtMallocHost(&host, 256));
  ASSERT_OK(aclrtReserveMemAddress(&va, MB2, 0, NULL, 0));
  uint32_t res = 7;
  void *devs[2] = {dev, (char *)cached + 100};
  ASSERT_OK(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, &res, 0));
  ASSERT_EQ(res, 1u);
  void *mixed[2] = {dev, va};
  ASSERT_OK(aclrtCheckMemType(mixed, 2, ACL_RT_MEM_TYPE_DEV, &res, 0));
  ASSERT_EQ(res, 0u);
  ASSERT_OK(aclrtCheckMemType(mixed, 2, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_RSVD, &res, 0));
  ASSERT_EQ(res, 1u);
  void *others[1] = {host};
  ASSERT_OK(aclrtCheckMemType(others, 1, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD, &res, 0));
  ASSERT_EQ(res, 0u);
  others[0] = local;
  res = 7;
  ASSERT_OK(aclrtCheckMemType(others, 1, ACL_RT_MEM_TYPE_DEV, &res, 0));
  ASSERT_EQ(res, 0u);
  /* bad input: 107000, the result cleared */
  res = 7;
  ASSERT_ACL(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, &res, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(res, 0u);
  ASSERT_ACL(aclrtCheckMemType(devs, 0, ACL_RT_MEM_TYPE_DEV, &res, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCheckMemType(devs, 2, 0x4u, &res, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCheckMemType(NULL, 2, ACL_RT_MEM_TYPE_DEV, &res, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, NULL, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtFree(dev));
  devs[0] = dev; /* freed: no longer device memory */
  ASSERT_OK(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, &res, 0));
  ASSERT_EQ(res, 0u);
  ASSERT_OK(aclrtFree(cached));
  ASSERT_OK(aclrtFreeHost(host));
  ASSERT_OK(aclrtReleaseMemAddress(va));
  (void)aclGetRecentErrMsg();
}
