/* acl_base.h: fp16 conversion (CANN's saturating rules), aclDataTypeSize,
 * aclDataBuffer descriptors (destroyed ones refused), aclrtMallocAlign32's
 * sizing, aclAppLog's truncation. */
#include "acl_test.h"

#include <math.h>

TEST(float_to_fp16) {
  ASSERT_EQ(aclFloatToFloat16(1.625f), 0x3e80);
  ASSERT_EQ(aclFloatToFloat16(1.0f), 0x3c00);
  ASSERT_EQ(aclFloatToFloat16(-2.0f), 0xc000);
  ASSERT_EQ(aclFloatToFloat16(0.0f), 0x0000);
  ASSERT_EQ(aclFloatToFloat16(-0.0f), 0x8000);
  ASSERT_EQ(aclFloatToFloat16(65504.0f), 0x7bff);
  /* saturation: overflow, Inf and NaN go to +-65504 */
  ASSERT_EQ(aclFloatToFloat16(65520.0f), 0x7bff);
  ASSERT_EQ(aclFloatToFloat16(1e10f), 0x7bff);
  ASSERT_EQ(aclFloatToFloat16(INFINITY), 0x7bff);
  ASSERT_EQ(aclFloatToFloat16(-INFINITY), 0xfbff);
  ASSERT_EQ(aclFloatToFloat16(NAN), 0x7bff);
  /* rounding to nearest even: 1 + 2^-11 is a tie, rounds down to 1.0;
   * 1 + 3*2^-11 is a tie that rounds up to the even 1 + 2^-9 */
  ASSERT_EQ(aclFloatToFloat16(1.0f + 0x1p-11f), 0x3c00);
  ASSERT_EQ(aclFloatToFloat16(1.0f + 3 * 0x1p-11f), 0x3c02);
  ASSERT_EQ(aclFloatToFloat16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  /* subnormals: 2^-24 is the smallest; 2^-25 ties to 0; above it to 1 */
  ASSERT_EQ(aclFloatToFloat16(0x1p-24f), 0x0001);
  ASSERT_EQ(aclFloatToFloat16(0x1p-25f), 0x0000);
  ASSERT_EQ(aclFloatToFloat16(0x1.8p-25f), 0x0001);
  ASSERT_EQ(aclFloatToFloat16(0x1p-15f), 0x0200);
  ASSERT_EQ(aclFloatToFloat16(0x1p-14f), 0x0400);
  ASSERT_EQ(aclFloatToFloat16(0x1.ff8p-15f), 0x03ff); /* largest subnormal */
  ASSERT_EQ(aclFloatToFloat16(0x1.ffcp-15f), 0x0400); /* tie: up to normal */
  ASSERT_EQ(aclFloatToFloat16(0x1.ffap-15f), 0x03ff);
}

TEST(fp16_to_float) {
  ASSERT(aclFloat16ToFloat(0x3e80) == 1.625f);
  ASSERT(aclFloat16ToFloat(0x3c00) == 1.0f);
  ASSERT(aclFloat16ToFloat(0x7bff) == 65504.0f);
  ASSERT(aclFloat16ToFloat(0x0001) == 0x1p-24f);
  ASSERT(aclFloat16ToFloat(0x03ff) == 0x1.ff8p-15f);
  ASSERT(aclFloat16ToFloat(0x8000) == 0.0f && signbit(aclFloat16ToFloat(0x8000)));
  /* no Inf/NaN: exponent 31 reads as a normal exponent (CANN's note) */
  ASSERT(aclFloat16ToFloat(0x7c00) == 65536.0f);
  ASSERT(aclFloat16ToFloat(0xfc00) == -65536.0f);
  ASSERT(aclFloat16ToFloat(0x7e00) == 98304.0f);
  /* every finite fp16 survives the round trip */
  for (unsigned v = 0; v < 0x10000; v++) {
    if (((v >> 10) & 0x1f) == 0x1f)
      continue;
    ASSERT_EQ(aclFloatToFloat16(aclFloat16ToFloat((aclFloat16)v)), v);
  }
}

TEST(data_type_size) {
  ASSERT_EQ(aclDataTypeSize(ACL_FLOAT), 4);
  ASSERT_EQ(aclDataTypeSize(ACL_FLOAT16), 2);
  ASSERT_EQ(aclDataTypeSize(ACL_BF16), 2);
  ASSERT_EQ(aclDataTypeSize(ACL_INT8), 1);
  ASSERT_EQ(aclDataTypeSize(ACL_BOOL), 1);
  ASSERT_EQ(aclDataTypeSize(ACL_INT4), 1);
  ASSERT_EQ(aclDataTypeSize(ACL_INT64), 8);
  ASSERT_EQ(aclDataTypeSize(ACL_DOUBLE), 8);
  ASSERT_EQ(aclDataTypeSize(ACL_COMPLEX32), 4);
  ASSERT_EQ(aclDataTypeSize(ACL_COMPLEX64), 8);
  ASSERT_EQ(aclDataTypeSize(ACL_COMPLEX128), 16);
  ASSERT_EQ(aclDataTypeSize(ACL_FLOAT8_E4M3FN), 1);
  ASSERT_EQ(aclDataTypeSize(ACL_STRING), 0);
  ASSERT_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
  ASSERT_EQ(aclDataTypeSize((aclDataType)1000), 8); /* CANN's default */
}

TEST(data_buffer) {
  char mem[64];
  aclDataBuffer *b = aclCreateDataBuffer(mem, sizeof mem);
  ASSERT(b != NULL);
  ASSERT(aclGetDataBufferAddr(b) == mem);
  ASSERT_EQ(aclGetDataBufferSizeV2(b), 64);
  ASSERT_OK(aclUpdateDataBuffer(b, mem + 8, 16));
  ASSERT(aclGetDataBufferAddr(b) == mem + 8);
  ASSERT_EQ(aclGetDataBufferSizeV2(b), 16);
  ASSERT_OK(aclDestroyDataBuffer(b));
  /* an empty buffer */
  aclDataBuffer *e = aclCreateDataBuffer(NULL, 0);
  ASSERT(e != NULL);
  ASSERT(aclGetDataBufferAddr(e) == NULL);
  ASSERT_OK(aclDestroyDataBuffer(e));
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(data_buffer_size_v1_truncates) {
  char c;
  aclDataBuffer *b = aclCreateDataBuffer(&c, ((size_t)1 << 32) + 5);
  ASSERT(b != NULL);
  ASSERT_EQ(aclGetDataBufferSize(b), 5);
  ASSERT_EQ(aclGetDataBufferSizeV2(b), ((size_t)1 << 32) + 5);
  ASSERT_OK(aclDestroyDataBuffer(b));
  ASSERT_EQ(aclGetDataBufferSize(NULL), 0);
}
#pragma GCC diagnostic pop

TEST(data_buffer_bad_input) {
  char mem[8];
  ASSERT(aclCreateDataBuffer(NULL, 8) == NULL);
  const char *m = aclGetRecentErrMsg();
  ASSERT(m && strstr(m, "aclCreateDataBuffer"));
  ASSERT_ACL(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclUpdateDataBuffer(NULL, mem, 8), ACL_ERROR_INVALID_PARAM);
  ASSERT(aclGetDataBufferAddr(NULL) == NULL);
  ASSERT_EQ(aclGetDataBufferSizeV2(NULL), 0);
  aclDataBuffer *b = aclCreateDataBuffer(mem, 8);
  ASSERT(b != NULL);
  ASSERT_OK(aclDestroyDataBuffer(b));
  /* destroyed: refused, and reads as empty */
  ASSERT_ACL(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclUpdateDataBuffer(b, mem, 4), ACL_ERROR_INVALID_PARAM);
  ASSERT(aclGetDataBufferAddr((aclDataBuffer *)(uintptr_t)0x1000) == NULL);
  (void)aclGetRecentErrMsg();
}

TEST(malloc_align32) {
  void *p = NULL, *q = NULL;
  ASSERT_OK(aclrtMallocAlign32(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT(p != NULL && ((uintptr_t)p & 63) == 0);
  memset(p, 0x5a, 128); /* 100 rounded up to 128, no extra 32 */
  /* a policy outside the enum is accepted (the doc picks pages by size) */
  ASSERT_OK(aclrtMallocAlign32(&q, 32, (aclrtMemMallocPolicy)0x77));
  ASSERT_OK(aclrtFree(q));
  ASSERT_OK(aclrtFree(p));
  ASSERT_ACL(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID); /* freed */
  ASSERT_ACL(aclrtMallocAlign32(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST),
             ACL_ERROR_INVALID_PARAM);
  void *z = (void *)1;
  ASSERT_ACL(aclrtMallocAlign32(&z, 0, ACL_MEM_MALLOC_HUGE_FIRST),
             ACL_ERROR_INVALID_PARAM);
  ASSERT(z == (void *)1); /* nothing changed */
  (void)aclGetRecentErrMsg();
}

TEST(app_log_truncates) {
  /* aclAppLog writes to stderr: capture it through a pipe */
  int fds[2];
  ASSERT(pipe(fds) == 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fds[1], 2);
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);
  ACL_APP_LOG(ACL_DEBUG, "hidden %d", 1); /* below the level */
  ACL_APP_LOG(ACL_INFO, "shown %d", 2);
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  ACL_APP_LOG(ACL_ERROR, "%s", big);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fds[1]);
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
  static char out[8192];
  ssize_t n, got = 0;
  while ((n = read(fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
    got += n;
  close(fds[0]);
  out[got] = '\0';
  ASSERT(strstr(out, "hidden") == NULL);
  ASSERT(strstr(out, "shown 2") != NULL);
  ASSERT(strstr(out, "[INFO]") != NULL);
  ASSERT(strstr(out, "...[truncated]") != NULL);
  ASSERT(got < 2 * 1024 + 400); /* the long message was cut at 1024 */
}
