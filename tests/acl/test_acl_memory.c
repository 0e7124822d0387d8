/* ACL memory against misuse: copies and sets on device pointers the layer
 * never handed out (issue 13 item 2), and aclrtFree while queued work still
 * uses the block (issue 13 item 12: CANN frees at once without waiting; the
 * layer defers the release until the queued work has passed). */
#include "acl_test.h"

#include "evrt.h" /* evrt_check_findings: the checker's verdict */

TEST(device_copies_on_foreign_pointers_are_invalid_param) {
  uint64_t findings = evrt_check_findings();
  void *dev = NULL;
  char host[64] = {0};
  ASSERT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  void *bogus = (void *)(uintptr_t)0x1000; /* never mapped */
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_ACL(aclrtMemcpy(bogus, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(host, 64, bogus, 64, ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(dev, 64, bogus, 64, ACL_MEMCPY_DEVICE_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy(bogus, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  /* a host buffer named as device memory */
  ASSERT_ACL(aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  /* past the end of a real block */
  char big[256] = {0};
  ASSERT_ACL(aclrtMemcpy(dev, 256, big, 256, ACL_MEMCPY_HOST_TO_DEVICE),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpyAsync(bogus, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpyAsync(host, 64, bogus, 64, ACL_MEMCPY_DEVICE_TO_HOST, s),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemset(bogus, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemsetAsync(bogus, 64, 0, 64, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemset(dev, 4096, 0, 4096), ACL_ERROR_INVALID_PARAM);
  /* the real ones still work */
  ASSERT_OK(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_OK(aclrtMemset(dev, 64, 3, 64));
  ASSERT_OK(aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  ASSERT_EQ(host[63], 3);
  ASSERT_OK(aclrtMemcpy(host, 64, big, 64, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtFree(dev));
  ASSERT_ACL(aclrtMemset(dev, 64, 0, 64), ACL_ERROR_INVALID_PARAM); /* freed */
  (void)aclGetRecentErrMsg();
  /* refused calls touch nothing: nothing for the checker to report */
  ASSERT_EQ(evrt_check_findings(), findings);
}

/* A kernel stand-in that writes the whole block when its gate opens. */
struct fill {
  gate_t gate;
  unsigned char *p;
  size_t n;
};
static void late_fill(void *arg) {
  struct fill *f = arg;
  gate_pass(&f->gate);
  memset(f->p, 0x77, f->n);
}

TEST(free_with_queued_work_defers_the_release) {
  /* 1 MiB (shareable memory) and 1 KiB (heap) blocks: the queued task and
   * copy run after aclrtFree returned, into memory still mapped (before
   * the fix the 1 MiB one was unmapped: SIGSEGV).  Under EVRT_CHECK the
   * checker reports each such free (the program is wrong by CANN's rules
   * even though the layer keeps it safe). */
  uint64_t findings = evrt_check_findings();
  size_t sizes[2] = {1u << 20, 1024};
  for (int i = 0; i < 2; i++) {
    aclrtStream s;
    ASSERT_OK(aclrtCreateStream(&s));
    void *dev = NULL, *host = NULL;
    ASSERT_OK(aclrtMalloc(&dev, sizes[i], ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_OK(aclrtMallocHost(&host, sizes[i]));
    static struct fill f;
    gate_init(&f.gate);
    f.p = dev;
    f.n = sizes[i];
    ASSERT_OK(aclrtLaunchHostFunc(s, late_fill, &f));
    ASSERT_OK(aclrtMemcpyAsync(host, sizes[i], dev, sizes[i],
                               ACL_MEMCPY_DEVICE_TO_HOST, s));
    ASSERT_OK(aclrtFree(dev));
    ASSERT_ACL(aclrtFree(dev), ACL_ERROR_RT_PARAM_INVALID); /* once */
    ASSERT_ACL(aclrtMemsetAsync(dev, 8, 0, 8, s), ACL_ERROR_INVALID_PARAM);
    gate_open(&f.gate);
    ASSERT_OK(aclrtSynchronizeStream(s));
    ASSERT_EQ(((unsigned char *)host)[sizes[i] - 1], 0x77);
    ASSERT_OK(aclrtFreeHost(host));
    ASSERT_OK(aclrtDestroyStream(s));
  }
  (void)aclGetRecentErrMsg();
  if (evrt_check_enabled())
    ASSERT(evrt_check_findings() > findings);
  else
    ASSERT_EQ(evrt_check_findings(), findings);
}
