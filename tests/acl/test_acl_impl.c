/* The Impl entry points (acl/acl_rt_impl.h): each does what its public
 * call does, and a program that interposes a public call (as a profiling
 * tool does) reaches the runtime through aclXImpl without recursion; calls
 * inside the library never go through the interposer. */
#include "acl_test.h"

#include <acl/acl_rt_impl.h>

#include <stdarg.h>
#include <string.h>

/* This program interposes two public calls, as a tracing tool would:
 * count, then forward to the runtime through the Impl entry point. */
static int malloc_calls, free_calls;

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  malloc_calls++;
  return aclrtMallocImpl(devPtr, size, policy);
}

aclError aclrtFree(void *devPtr) {
  free_calls++;
  return aclrtFreeImpl(devPtr);
}

TEST(interposed_calls_reach_the_runtime_through_impl) {
  void *p = NULL;
  malloc_calls = free_calls = 0;
  ASSERT_OK(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT(p != NULL);
  ASSERT_EQ(malloc_calls, 1);
  aclrtPtrAttributes a;
  ASSERT_OK(aclrtPointerGetAttributesImpl(p, &a));
  ASSERT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  /* aclrtFreeWithDevSync frees inside the library: the program's aclrtFree
   * is not called (the library binds its own calls). */
  ASSERT_OK(aclrtFreeWithDevSync(p));
  ASSERT_EQ(free_calls, 0);
  ASSERT_OK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtFree(p));
  ASSERT_EQ(free_calls, 1);
  ASSERT_ACL(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID); /* double free */
  ASSERT_EQ(free_calls, 2);
  (void)aclGetRecentErrMsg();
}

TEST(impl_entry_points_behave_as_their_calls) {
  ASSERT(strcmp(aclrtGetSocNameImpl(), aclrtGetSocName()) == 0);
  uint32_t n1 = 0, n2 = 0;
  ASSERT_OK(aclrtGetDeviceCountImpl(&n1));
  ASSERT_OK(aclrtGetDeviceCount(&n2));
  ASSERT_EQ(n1, n2);
  aclrtStream s = NULL;
  ASSERT_OK(aclrtCreateStreamImpl(&s));
  int32_t *a = NULL, *b = NULL;
  ASSERT_OK(aclrtMallocImpl((void **)&a, 16, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtMallocImpl((void **)&b, 16, ACL_MEM_MALLOC_HUGE_FIRST));
  int32_t h[4] = {1, 2, 3, 4}, r[4];
  ASSERT_OK(aclrtMemcpyImpl(a, 16, h, 16, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtMemcpyImpl(b, 16, h, 16, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtReduceAsyncImpl(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                                 ACL_INT32, s, NULL));
  ASSERT_OK(aclrtSynchronizeStreamImpl(s));
  ASSERT_OK(aclrtMemcpyImpl(r, 16, b, 16, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT(r[0] == 2 && r[3] == 8);
  /* bad input: the same codes as the public calls */
  ASSERT_ACL(aclrtMemcpy2dImpl(b, 4, h, 16, 16, 1, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetDeviceInfoImpl(0, (aclrtDevAttr)7777, &(int64_t){0}),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(aclDataTypeSizeImpl(ACL_FLOAT16), 2);
  ASSERT_EQ(aclFloatToFloat16Impl(1.0f), 0x3C00);
  ASSERT_OK(aclrtFreeImpl(a));
  ASSERT_OK(aclrtFreeImpl(b));
  ASSERT_OK(aclrtDestroyStreamImpl(s));
  (void)aclGetRecentErrMsgImpl();
}

static void log_v(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  aclAppLogImpl(ACL_ERROR, "log_v", "test_acl_impl.c", 1, fmt, ap);
  va_end(ap);
}

TEST(app_log_impl_takes_a_va_list) {
  log_v("%s %d", "Impl log line", 42); /* to stderr; must not crash */
}
