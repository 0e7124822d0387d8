/* Copies and fills beyond aclrtMemcpy: 2-D copies, 32-bit fills, copies
 * through device-held addresses (with offset, with a descriptor) and batch
 * copies.  The asynchronous variants run in stream order (a gate holds the
 * stream: nothing is copied before it opens) and never on the caller; bad
 * input gets CANN's codes and changes nothing. */
#include "acl_test.h"

static void *dev_alloc(size_t n) {
  void *p = NULL;
  if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
    return NULL;
  return p;
}

TEST(memcpy2d_sync) {
  /* 3 rows of 4 bytes out of a 10-byte-pitch source into an 8-byte pitch */
  char src[30], *dst = dev_alloc(24);
  ASSERT(dst != NULL);
  for (int i = 0; i < 30; i++)
    src[i] = (char)i;
  memset(dst, 0x7f, 24);
  ASSERT_OK(aclrtMemcpy2d(dst, 8, src, 10, 4, 3, ACL_MEMCPY_HOST_TO_DEVICE));
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 8; c++)
      ASSERT_EQ(dst[r * 8 + c], c < 4 ? r * 10 + c : 0x7f);
  /* empty copies succeed at once, whatever else is wrong */
  ASSERT_OK(aclrtMemcpy2d(NULL, 0, NULL, 0, 0, 5, (aclrtMemcpyKind)99));
  ASSERT_OK(aclrtFree(dst));
}

TEST(memcpy2d_bad_input) {
  char a[64] = {0}, b[64];
  memset(b, 1, sizeof b);
  ASSERT_ACL(aclrtMemcpy2d(b, 4, a, 8, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy2d(b, 8, a, 4, 5, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy2d(b, 8, a, 8, 4, 2, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy2d(NULL, 8, a, 8, 4, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy2dAsync(b, 8, a, 8, 5000001, 1, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpy2dAsync(b, 8, a, 8, 4, 5242881, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
             ACL_ERROR_INVALID_PARAM);
  for (int i = 0; i < 64; i++)
    ASSERT_EQ(b[i], 1);
  (void)aclGetRecentErrMsg();
}

TEST(memcpy2d_async_in_stream_order) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  char *src = NULL, *dst = dev_alloc(64);
  ASSERT_OK(aclrtMallocHost((void **)&src, 64));
  memset(src, 9, 64);
  memset(dst, 0, 64);
  ASSERT_OK(gate_on(s, &g));
  /* pinned host memory: the call returns before the copy */
  ASSERT_OK(aclrtMemcpy2dAsync(dst, 16, src, 16, 8, 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
  ASSERT_EQ(dst[0], 0); /* held behind the gate */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 16; c++)
      ASSERT_EQ(dst[r * 16 + c], c < 8 ? 9 : 0);
  /* plain host memory: returns after the copy */
  char plain[64];
  memset(plain, 0, sizeof plain);
  ASSERT_OK(aclrtMemcpy2dAsync(plain, 16, dst, 16, 8, 4, ACL_MEMCPY_DEVICE_TO_HOST, s));
  ASSERT_EQ(plain[0], 9);
  ASSERT_EQ(plain[3 * 16 + 7], 9);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtFree(dst));
  ASSERT_OK(aclrtFreeHost(src));
}

TEST(memset_d32) {
  uint32_t *d = dev_alloc(64), *h = NULL;
  ASSERT_OK(aclrtMallocHost((void **)&h, 64));
  memset(d, 0, 64);
  ASSERT_OK(aclrtMemsetD32(d, 64, 0xdeadbeefu, 10));
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(d[i], i < 10 ? 0xdeadbeefu : 0);
  ASSERT_OK(aclrtMemsetD32(h, 64, 7, 16));
  ASSERT_EQ(h[15], 7);
  ASSERT_OK(aclrtMemsetD32(NULL, 0, 1, 0)); /* N == 0: nothing checked */
  /* bad input: nothing written */
  uint32_t plain[4] = {0};
  ASSERT_ACL(aclrtMemsetD32(plain, 16, 1, 4), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemsetD32(d, 36, 1, 10), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemsetD32((char *)d + 2, 60, 1, 2), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemsetD32(NULL, 64, 1, 2), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(plain[0], 0);
  ASSERT_EQ(d[0], 0xdeadbeefu);
  ASSERT_OK(aclrtFree(d));
  ASSERT_OK(aclrtFreeHost(h));
  (void)aclGetRecentErrMsg();
}

TEST(memset_d32_async) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  uint32_t *d = dev_alloc(64), *h = NULL;
  ASSERT_OK(aclrtMallocHost((void **)&h, 64));
  memset(d, 0, 64);
  memset(h, 0, 64);
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtMemsetD32Async(d, 64, 5, 16, s));
  ASSERT_EQ(d[0], 0); /* device memory: a stream task, still held */
  ASSERT_OK(aclrtMemsetD32Async(h, 64, 6, 16, s));
  ASSERT_EQ(h[15], 6); /* host memory: done at once (CANN's rule) */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(d[15], 5);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtMemsetD32Async(d, 64, 1, 16, s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_EQ(d[0], 5);
  ASSERT_OK(aclrtFree(d));
  ASSERT_OK(aclrtFreeHost(h));
  (void)aclGetRecentErrMsg();
}

TEST(memcpy_with_offset_reads_addresses_at_run_time) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  char *a = dev_alloc(64), *b = dev_alloc(64), *other = dev_alloc(64);
  void **dslot = dev_alloc(sizeof(void *)), **sslot = dev_alloc(sizeof(void *));
  memset(a, 0, 64);
  memset(other, 0, 64);
  for (int i = 0; i < 64; i++)
    b[i] = (char)(100 + i);
  *dslot = a;
  *sslot = b;
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtMemcpyAsyncWithOffset(dslot, 32, 4, (const void **)sslot, 8, 10,
                                       ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
  *dslot = other; /* changed before the task runs: the task sees it */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(a[4], 0);
  for (int i = 0; i < 8; i++)
    ASSERT_EQ(other[4 + i], 110 + i);
  ASSERT_EQ(other[12], 0);
  /* bad input */
  ASSERT_OK(aclrtMemcpyAsyncWithOffset(NULL, 0, 0, NULL, 0, 0, ACL_MEMCPY_HOST_TO_HOST, s));
  ASSERT_ACL(aclrtMemcpyAsyncWithOffset(dslot, 32, 0, (const void **)sslot, 8, 0,
                                        ACL_MEMCPY_DEVICE_TO_DEVICE, s),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtMemcpyAsyncWithOffset(dslot, 4, 0, (const void **)sslot, 8, 0,
                                        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s),
             ACL_ERROR_RT_PARAM_INVALID);
  void *local = a;
  ASSERT_ACL(aclrtMemcpyAsyncWithOffset(&local, 32, 0, (const void **)sslot, 8, 0,
                                        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(other[0], 0);
  ASSERT_OK(aclrtDestroyStream(s));
  aclrtFree(a);
  aclrtFree(b);
  aclrtFree(other);
  aclrtFree(dslot);
  aclrtFree(sslot);
  (void)aclGetRecentErrMsg();
}

TEST(memcpy_with_descriptor) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  size_t dsz = 0;
  ASSERT_OK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &dsz));
  ASSERT(dsz >= 32);
  void *desc = dev_alloc(dsz);
  char *a = dev_alloc(32), *b = dev_alloc(32);
  memset(a, 3, 32);
  memset(b, 0, 32);
  ASSERT_OK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 16, NULL));
  ASSERT_OK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(b[15], 3);
  ASSERT_EQ(b[16], 0);
  /* bad input */
  ASSERT_ACL(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetMemcpyDescSize((aclrtMemcpyKind)9, &dsz), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetMemcpyDescSize(ACL_MEMCPY_HOST_TO_DEVICE, &dsz), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 0, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 4, (void *)1),
             ACL_ERROR_INVALID_PARAM);
  char plain[64];
  ASSERT_ACL(aclrtSetMemcpyDesc(plain, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, a, b, 4, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtMemcpyAsyncWithDesc(NULL, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDestroyStream(s));
  aclrtFree(desc);
  aclrtFree(a);
  aclrtFree(b);
  (void)aclGetRecentErrMsg();
}

static aclrtMemcpyBatchAttr h2d(void) {
  aclrtMemcpyBatchAttr a;
  memset(&a, 0, sizeof a);
  a.srcLoc.type = ACL_MEM_LOCATION_TYPE_HOST;
  a.dstLoc.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  return a;
}

TEST(memcpy_batch) {
  char host[3][16], *dev[3];
  for (int i = 0; i < 3; i++) {
    dev[i] = dev_alloc(16);
    memset(host[i], 'a' + i, 16);
    memset(dev[i], 0, 16);
  }
  void *dsts[3] = {dev[0], dev[1], dev[2]}, *srcs[3] = {host[0], host[1], host[2]};
  size_t maxs[3] = {16, 16, 16}, sizes[3] = {16, 8, 0}, idx[1] = {0}, fail = 7;
  aclrtMemcpyBatchAttr attr = h2d();
  ASSERT_OK(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 3, &attr, idx, 1, &fail));
  ASSERT_EQ(dev[0][15], 'a');
  ASSERT_EQ(dev[1][7], 'b');
  ASSERT_EQ(dev[1][8], 0);
  ASSERT_EQ(dev[2][0], 0);
  ASSERT_EQ(fail, SIZE_MAX);
  /* asynchronous, device to host, two attribute ranges of one direction */
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  char *pin = NULL;
  ASSERT_OK(aclrtMallocHost((void **)&pin, 48));
  memset(pin, 0, 48);
  void *d2[3] = {pin, pin + 16, pin + 32}, *s2[3] = {dev[0], dev[1], dev[0]};
  size_t sz2[3] = {16, 16, 4}, idx2[2] = {0, 2};
  aclrtMemcpyBatchAttr at2[2] = {h2d(), h2d()};
  for (int k = 0; k < 2; k++) {
    at2[k].srcLoc.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    at2[k].dstLoc.type = ACL_MEM_LOCATION_TYPE_HOST;
  }
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtMemcpyBatchAsync(d2, maxs, s2, sz2, 3, at2, idx2, 2, &fail, s));
  ASSERT_EQ(pin[0], 0); /* pinned host memory: held behind the gate */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(pin[0], 'a');
  ASSERT_EQ(pin[16], 'b');
  ASSERT_EQ(pin[35], 'a');
  ASSERT_OK(aclrtMemcpyBatchAsyncV2(d2, maxs, s2, sz2, 3, at2, idx2, 2, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtFreeHost(pin));
  for (int i = 0; i < 3; i++)
    aclrtFree(dev[i]);
}

TEST(memcpy_batch_bad_input) {
  char host[16], *dev = dev_alloc(16);
  memset(dev, 0, 16);
  memset(host, 1, 16);
  void *dsts[2] = {dev, dev}, *srcs[2] = {host, host};
  size_t maxs[2] = {16, 16}, sizes[2] = {16, 16}, idx[2] = {0, 1}, fail = 0;
  aclrtMemcpyBatchAttr attr[2] = {h2d(), h2d()};
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attr, idx, 2, NULL),
             ACL_ERROR_INVALID_PARAM);
  size_t small[2] = {8, 16};
  ASSERT_ACL(aclrtMemcpyBatch(dsts, small, srcs, sizes, 2, attr, idx, 2, &fail),
             ACL_ERROR_INVALID_PARAM);
  attr[1].rsv[3] = 1;
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attr, idx, 2, &fail),
             ACL_ERROR_INVALID_PARAM);
  attr[1].rsv[3] = 0;
  size_t bad_idx[2] = {1, 2};
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attr, bad_idx, 2, &fail),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(fail, SIZE_MAX);
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 1, attr, idx, 2, &fail),
             ACL_ERROR_RT_PARAM_INVALID); /* numAttrs > numBatches */
  /* mixed directions: the failing copy's index */
  attr[1].srcLoc.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  attr[1].dstLoc.type = ACL_MEM_LOCATION_TYPE_HOST;
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attr, idx, 2, &fail),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(fail, 1);
  /* the device side must be device memory */
  char other[16];
  void *bad_dsts[2] = {dev, other};
  attr[1] = h2d();
  ASSERT_ACL(aclrtMemcpyBatch(bad_dsts, maxs, srcs, sizes, 2, attr, idx, 2, &fail),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(fail, 1);
  ASSERT_EQ(dev[0], 0); /* nothing copied */
  /* all sizes 0: nothing checked */
  size_t zeros[2] = {0, 0};
  ASSERT_OK(aclrtMemcpyBatch(NULL, NULL, NULL, zeros, 2, NULL, NULL, 0, &fail));
  ASSERT_ACL(aclrtMemcpyBatch(dsts, maxs, srcs, NULL, 2, attr, idx, 2, &fail),
             ACL_ERROR_INVALID_PARAM);
  aclrtFree(dev);
  (void)aclGetRecentErrMsg();
}
