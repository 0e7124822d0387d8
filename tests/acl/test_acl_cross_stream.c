/* The ACL guide's cross-stream pattern: stream 1 copies, records; stream 2
 * waits on the event, copies back, resets the event.  10,000 iterations with
 * the data checked each time, and no event resource leaked. */
#include "acl_test.h"

#define N 256
#define ITERS 10000

TEST(cross_stream_copy_record_wait_reset_loop) {
  aclrtStream s1, s2;
  aclrtEvent e;
  uint32_t start = 0, end = 0, mid = 0;
  uint32_t *host_in, *host_out, *dev;
  ASSERT_OK(aclrtGetEventAvailNum(&start));
  ASSERT_OK(aclrtCreateStream(&s1));
  ASSERT_OK(aclrtCreateStream(&s2));
  ASSERT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  ASSERT_OK(aclrtMallocHost((void **)&host_in, N * sizeof(uint32_t)));
  ASSERT_OK(aclrtMallocHost((void **)&host_out, N * sizeof(uint32_t)));
  ASSERT_OK(aclrtMalloc((void **)&dev, N * sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
  for (uint32_t it = 0; it < ITERS; it++) {
    for (int i = 0; i < N; i++)
      host_in[i] = it * 7919u + (uint32_t)i;
    ASSERT_OK(aclrtMemcpyAsync(dev, N * sizeof(uint32_t), host_in,
                               N * sizeof(uint32_t), ACL_MEMCPY_HOST_TO_DEVICE, s1));
    ASSERT_OK(aclrtRecordEvent(e, s1));
    ASSERT_OK(aclrtStreamWaitEvent(s2, e));
    ASSERT_OK(aclrtMemcpyAsync(host_out, N * sizeof(uint32_t), dev,
                               N * sizeof(uint32_t), ACL_MEMCPY_DEVICE_TO_HOST, s2));
    ASSERT_OK(aclrtResetEvent(e, s2));
    if (it == 0) {
      ASSERT_OK(aclrtGetEventAvailNum(&mid));
      ASSERT(mid <= start); /* taken at record (released by the reset) */
    }
    ASSERT_OK(aclrtSynchronizeStream(s2));
    for (int i = 0; i < N; i++)
      if (host_out[i] != it * 7919u + (uint32_t)i)
        FAIL_("iteration %u: word %d is %u, want %u", it, i, host_out[i],
              it * 7919u + (uint32_t)i);
    /* stream 1 must not overwrite dev before stream 2 has read it */
    ASSERT_OK(aclrtSynchronizeStream(s1));
  }
  ASSERT_OK(aclrtGetEventAvailNum(&end));
  ASSERT_EQ(end, start);
  ASSERT_OK(aclrtDestroyEvent(e));
  ASSERT_OK(aclrtGetEventAvailNum(&end));
  ASSERT_EQ(end, start);
  ASSERT_OK(aclrtFree(dev));
  ASSERT_OK(aclrtFreeHost(host_in));
  ASSERT_OK(aclrtFreeHost(host_out));
  ASSERT_OK(aclrtDestroyStream(s1));
  ASSERT_OK(aclrtDestroyStream(s2));
}
