/* Allocator descriptors and their registration on a stream
 * (acl/acl_rt_allocator.h); bad input gets CANN's codes. */
#include "acl_test.h"

#include <acl/acl_rt_allocator.h>
#include <stdlib.h>

static int allocs, frees;
static void *my_alloc(aclrtAllocator a, size_t n) {
  (void)a;
  allocs++;
  return malloc(n);
}
static void my_free(aclrtAllocator a, aclrtAllocatorBlock b) {
  (void)a;
  frees++;
  free(b);
}
static void *my_advise(aclrtAllocator a, size_t n, aclrtAllocatorAddr addr) {
  (void)addr;
  return my_alloc(a, n);
}
static void *my_addr(aclrtAllocatorBlock b) { return b; }
static void *other_advise(aclrtAllocator a, size_t n, aclrtAllocatorAddr addr) {
  (void)a;
  (void)n;
  return addr;
}

TEST(register_and_query) {
  int obj = 0;
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
  ASSERT(d != NULL);
  ASSERT_OK(aclrtAllocatorSetObjToDesc(d, &obj));
  ASSERT_OK(aclrtAllocatorSetAllocFuncToDesc(d, my_alloc));
  ASSERT_OK(aclrtAllocatorSetFreeFuncToDesc(d, my_free));
  ASSERT_OK(aclrtAllocatorSetAllocAdviseFuncToDesc(d, my_advise));
  ASSERT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, my_addr));
  ASSERT_OK(aclrtAllocatorRegister(s, d));
  aclrtAllocatorDesc dout = NULL;
  aclrtAllocator aout = NULL;
  aclrtAllocatorAllocFunc af = NULL;
  aclrtAllocatorFreeFunc ff = NULL;
  aclrtAllocatorAllocAdviseFunc adv = NULL;
  aclrtAllocatorGetAddrFromBlockFunc gf = NULL;
  ASSERT_OK(aclrtAllocatorGetByStream(s, &dout, &aout, &af, &ff, &adv, &gf));
  ASSERT(dout == d && aout == &obj && af == my_alloc && ff == my_free &&
         adv == my_advise && gf == my_addr);
  void *blk = af(aout, 64);
  ASSERT(gf(blk) == blk);
  ff(aout, blk);
  ASSERT_EQ(allocs, 1);
  ASSERT_EQ(frees, 1);
  /* the registration is a copy: later descriptor changes do not apply,
   * and the descriptor may be destroyed while registered */
  ASSERT_OK(aclrtAllocatorSetAllocAdviseFuncToDesc(d, other_advise));
  ASSERT_OK(aclrtAllocatorDestroyDesc(d));
  ASSERT_OK(aclrtAllocatorGetByStream(s, &dout, NULL, NULL, NULL, &adv, NULL));
  ASSERT(adv == my_advise);
  ASSERT_OK(aclrtAllocatorUnregister(s));
  ASSERT_ACL(aclrtAllocatorGetByStream(s, &dout, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtAllocatorUnregister(s)); /* twice: success, as CANN */
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(bad_input) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
  int obj;
  ASSERT_ACL(aclrtAllocatorSetObjToDesc(d, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorSetAllocFuncToDesc(NULL, my_alloc), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorSetFreeFuncToDesc(d, NULL), ACL_ERROR_INVALID_PARAM);
  /* incomplete descriptors are refused */
  ASSERT_ACL(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtAllocatorSetObjToDesc(d, &obj));
  ASSERT_OK(aclrtAllocatorSetAllocFuncToDesc(d, my_alloc));
  ASSERT_OK(aclrtAllocatorSetFreeFuncToDesc(d, my_free));
  ASSERT_ACL(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM); /* no getAddr */
  ASSERT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, my_addr));
  ASSERT_ACL(aclrtAllocatorRegister(NULL, d), ACL_ERROR_INVALID_PARAM);
  aclrtAllocatorDesc out = NULL;
  ASSERT_ACL(aclrtAllocatorGetByStream(s, &out, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorGetByStream(s, NULL, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorUnregister(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtAllocatorDestroyDesc(d));
  ASSERT_ACL(aclrtAllocatorDestroyDesc(d), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorSetObjToDesc(d, &obj), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
  aclrtAllocatorDesc d2 = aclrtAllocatorCreateDesc();
  ASSERT_ACL(aclrtAllocatorRegister(s, d2), ACL_ERROR_RT_INVALID_HANDLE); /* dead stream */
  ASSERT_OK(aclrtAllocatorDestroyDesc(d2));
  (void)aclGetRecentErrMsg();
}
