/* Stream-ordered memory pools (acl/acl_rt_memory_soma.h): allocation in
 * stream order, reuse of freed blocks (same stream at once, other streams
 * once the free ran), statistics, release threshold, trimming, maxSize, and
 * bad input with CANN's codes (nothing changed). */
#include "acl_test.h"

#include <acl/acl_rt_memory_soma.h>

static aclrtMemPool make_pool(size_t max) {
  aclrtMemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  p.maxSize = max;
  aclrtMemPool pool = NULL;
  if (aclrtMemPoolCreate(&pool, &p) != ACL_SUCCESS)
    return NULL;
  return pool;
}

static uint64_t attr64(aclrtMemPool pool, aclrtMemPoolAttr a) {
  uint64_t v = ~0ull;
  aclrtMemPoolGetAttr(pool, a, &v);
  return v;
}

TEST(malloc_and_free_in_stream_order) {
  aclrtMemPool pool = make_pool(1 << 20);
  ASSERT(pool != NULL);
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  char *a = NULL, *b = NULL;
  ASSERT_OK(aclrtMemPoolMallocAsync((void **)&a, 1000, pool, s));
  ASSERT(a != NULL);
  aclrtPtrAttributes pa;
  ASSERT_OK(aclrtPointerGetAttributes(a, &pa));
  ASSERT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 1024);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 1024);
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtMemsetAsync(a, 1000, 7, 1000, s));
  ASSERT_OK(aclrtMemPoolFreeAsync(a, s));
  /* the same stream may take the block back at once: stream order */
  ASSERT_OK(aclrtMemPoolMallocAsync((void **)&b, 900, pool, s));
  ASSERT(b == a);
  ASSERT_OK(aclrtMemPoolFreeAsync(b, s));
  /* another stream may not before the free has run */
  aclrtStream s2;
  char *c = NULL;
  ASSERT_OK(aclrtCreateStream(&s2));
  ASSERT_OK(aclrtMemPoolMallocAsync((void **)&c, 900, pool, s2));
  ASSERT(c != a);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 2048);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(a[999], 7);
  /* the free ran: with the default threshold 0 the idle block was released */
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 1024);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 1024);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 2048);
  ASSERT_OK(aclrtMemPoolFreeAsync(c, s2));
  ASSERT_OK(aclrtSynchronizeStream(s2));
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT), 0);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStream(s2));
  ASSERT_OK(aclrtMemPoolDestroy(pool));
}

TEST(threshold_reuse_and_trim) {
  aclrtMemPool pool = make_pool(0); /* no size limit */
  ASSERT(pool != NULL);
  uint64_t keep = 1 << 20;
  ASSERT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), keep);
  aclrtStream s1, s2;
  ASSERT_OK(aclrtCreateStream(&s1));
  ASSERT_OK(aclrtCreateStream(&s2));
  void *small = NULL, *big = NULL, *got = NULL;
  ASSERT_OK(aclrtMemPoolMallocAsync(&small, 512, pool, s1));
  ASSERT_OK(aclrtMemPoolMallocAsync(&big, 8192, pool, s1));
  ASSERT_OK(aclrtMemPoolFreeAsync(small, s1));
  ASSERT_OK(aclrtMemPoolFreeAsync(big, s1));
  ASSERT_OK(aclrtSynchronizeStream(s1));
  /* kept (under the threshold) and reusable by another stream; the closest
   * size wins */
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 512 + 8192);
  ASSERT_OK(aclrtMemPoolMallocAsync(&got, 4000, pool, s2));
  ASSERT(got == big);
  ASSERT_OK(aclrtMemPoolFreeAsync(got, s2));
  ASSERT_OK(aclrtSynchronizeStream(s2));
  ASSERT_OK(aclrtMemPoolTrimTo(pool, 600));
  ASSERT(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) <= 600);
  ASSERT_OK(aclrtMemPoolTrimTo(pool, 0));
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
  /* high-water marks reset to the current values */
  uint64_t zero = 0;
  ASSERT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, &zero));
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 0);
  ASSERT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &zero));
  uint32_t on = 0;
  ASSERT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &on));
  on = 9;
  ASSERT_OK(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, &on));
  ASSERT_EQ(on, 0);
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtDestroyStream(s2));
  ASSERT_OK(aclrtMemPoolDestroy(pool));
}

TEST(bad_input) {
  aclrtMemPool pool = make_pool(4096);
  ASSERT(pool != NULL);
  void *p = (void *)1, *q = NULL;
  ASSERT_ACL(aclrtMemPoolMallocAsync(&p, 8192, pool, NULL), ACL_ERROR_RT_MEMORY_ALLOCATION);
  ASSERT_ACL(aclrtMemPoolMallocAsync(&p, 0, pool, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemPoolMallocAsync(NULL, 8, pool, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemPoolMallocAsync(&p, 8, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT(p == (void *)1);
  ASSERT_EQ(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT), 0);
  uint64_t v = 5;
  ASSERT_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &v), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &v), ACL_ERROR_RT_PARAM_INVALID);
  uint32_t two = 2;
  ASSERT_ACL(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES, &two),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemPoolSetAttr(pool, (aclrtMemPoolAttr)9, &v), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, NULL), ACL_ERROR_INVALID_PARAM);
  /* frees of what the pool did not hand out */
  char local[16];
  ASSERT_ACL(aclrtMemPoolFreeAsync(local, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtMemPoolMallocAsync(&q, 64, pool, NULL));
  ASSERT_OK(aclrtMemPoolFreeAsync(q, NULL));
  ASSERT_ACL(aclrtMemPoolFreeAsync(q, NULL), ACL_ERROR_RT_PARAM_INVALID); /* twice */
  ASSERT_ACL(aclrtFree(q), ACL_ERROR_RT_PARAM_INVALID); /* not aclrtMalloc's */
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  /* props */
  aclrtMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  aclrtMemPool other = (aclrtMemPool)1;
  ASSERT_ACL(aclrtMemPoolCreate(&other, &props), ACL_ERROR_INVALID_PARAM);
  props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  props.reserved[3] = 1;
  ASSERT_ACL(aclrtMemPoolCreate(&other, &props), ACL_ERROR_INVALID_PARAM);
  props.reserved[3] = 0;
  props.location.id = 7;
  ASSERT_ACL(aclrtMemPoolCreate(&other, &props), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtMemPoolCreate(NULL, &props), ACL_ERROR_INVALID_PARAM);
  ASSERT(other == (aclrtMemPool)1);
  /* a destroyed pool is refused */
  ASSERT_OK(aclrtMemPoolDestroy(pool));
  ASSERT_ACL(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemPoolMallocAsync(&p, 8, pool, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemPoolTrimTo(pool, 0), ACL_ERROR_RT_PARAM_INVALID);
  (void)aclGetRecentErrMsg();
}

TEST(destroy_with_blocks_in_use) {
  aclrtMemPool pool = make_pool(0);
  void *p = NULL;
  ASSERT_OK(aclrtMemPoolMallocAsync(&p, 100, pool, NULL));
  ASSERT_OK(aclrtMemPoolDestroy(pool)); /* the block stays usable */
  memset(p, 1, 100);
  ASSERT_OK(aclrtMemPoolFreeAsync(p, NULL)); /* and goes with the pool */
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  aclrtPtrAttributes pa;
  ASSERT_OK(aclrtPointerGetAttributes(p, &pa));
  ASSERT_EQ(pa.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
}
