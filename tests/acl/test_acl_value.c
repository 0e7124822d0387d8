/* aclrtValueWait / aclrtValueWrite: the wait parks its stream until the
 * device word holds (the multistream_sync_memory sample's flow), kernels'
 * stand-ins and the copy and set calls wake it, and bad input gets ACL's
 * invalid parameter. */
#include "acl_test.h"

static void bump(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

static uint64_t *dev_word(void) {
  void *p = NULL;
  if (aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST))
    return NULL;
  memset(p, 0, 64);
  return p;
}

TEST(a_stream_waits_for_another_streams_write) {
  aclrtStream a, b;
  uint64_t *w = dev_word();
  ASSERT(w != NULL);
  atomic_int pa = 0;
  ASSERT_OK(aclrtCreateStream(&a));
  ASSERT_OK(aclrtCreateStream(&b));
  ASSERT_OK(aclrtValueWait(w, 100, ACL_STREAM_WAIT_VALUE_EQ, a));
  ASSERT_OK(aclrtLaunchHostFunc(a, bump, &pa));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(a, 100),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtValueWrite(w, 100, 0, b));
  ASSERT_OK(aclrtSynchronizeStream(b));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
  ASSERT_EQ(atomic_load(&pa), 1);
  ASSERT_EQ(*w, 100);
  ASSERT_OK(aclrtDestroyStream(a));
  ASSERT_OK(aclrtDestroyStream(b));
  ASSERT_OK(aclrtFree(w));
}

static uint64_t *kernel_target;
static void write_kernel(void *p) {
  (void)p; /* a kernel's store to device memory */
  atomic_store((_Atomic(uint64_t) *)kernel_target, 0x30);
}

TEST(kernels_copies_and_sets_wake_waits) {
  aclrtStream a, k;
  uint64_t *w = dev_word();
  ASSERT(w != NULL);
  ASSERT_OK(aclrtCreateStream(&a));
  ASSERT_OK(aclrtCreateStream(&k));
  /* a kernel stand-in (host task) */
  kernel_target = w;
  ASSERT_OK(aclrtValueWait(w, 0x10, ACL_STREAM_WAIT_VALUE_AND, a));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(a, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtLaunchHostFunc(k, write_kernel, NULL));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
#if !defined(__SANITIZE_THREAD__)
  /* The synchronous set and copy.  (Their plain stores and the parked
   * wait's first atomic read of the word are a mixed access by
   * construction, a kernel polling what a DMA writes: ThreadSanitizer
   * would report it, so these run in the other builds.) */
  uint64_t v = 7;
  ASSERT_OK(aclrtValueWait(w, 0x0101010101010101ull,
                           ACL_STREAM_WAIT_VALUE_GEQ, a));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(a, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtMemset(w, 8, 1, 8));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
  ASSERT_OK(aclrtValueWait(w, 7, ACL_STREAM_WAIT_VALUE_EQ, a));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(a, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtMemcpy(w, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
  /* NOR: ~(*w | value) != 0 */
  ASSERT_OK(aclrtValueWait(w, ~(uint64_t)7, ACL_STREAM_WAIT_VALUE_NOR, a));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(a, 50),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtMemsetAsync(w, 8, 0, 8, k));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(a, 10000));
#endif
  ASSERT_OK(aclrtDestroyStream(a));
  ASSERT_OK(aclrtDestroyStream(k));
  ASSERT_OK(aclrtFree(w));
}

TEST(bad_input_is_invalid_param) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  uint64_t *w = dev_word(), local = 0;
  void *host = NULL;
  ASSERT_OK(aclrtMallocHost(&host, 64));
  char *c = (char *)w;
  ASSERT_ACL(aclrtValueWait(w, 1, 4, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWrite(w, 1, 1, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWait(NULL, 1, 0, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWrite(c + 4, 1, 0, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWait(&local, 1, 0, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWrite(&local, 1, 0, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWait(host, 1, 0, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtValueWrite((void *)(uintptr_t)0x1000, 1, 0, s),
             ACL_ERROR_INVALID_PARAM);
  aclrtStreamStatus st;
  ASSERT_OK(aclrtStreamQuery(s, &st));
  ASSERT_EQ(st, ACL_STREAM_STATUS_COMPLETE); /* nothing enqueued */
  ASSERT_EQ(local, 0);
  ASSERT_OK(aclrtFree(w));
  ASSERT_ACL(aclrtValueWrite(w, 1, 0, s), ACL_ERROR_INVALID_PARAM); /* freed */
  ASSERT_OK(aclrtFreeHost(host));
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}
