/* Built-in tasks: aclrtReduceAsync (element-wise SUM/MAX/MIN on each
 * supported type, in stream order) and aclrtRandomNumAsync (Philox:
 * reproducible per seed and counter, the counter advances, distributions in
 * range); bad input gets CANN's codes and changes nothing. */
#include "acl_test.h"

#include <math.h>

static void *dev(size_t n) {
  void *p = NULL;
  return aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : NULL;
}

TEST(reduce_float_sum_in_stream_order) {
  aclrtStream s;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtCreateStream(&s));
  float *a = dev(16), *b = dev(16);
  for (int i = 0; i < 4; i++) {
    a[i] = (float)(i + 1);
    b[i] = (float)(i + 1);
  }
  ASSERT_OK(gate_on(s, &g));
  ASSERT_OK(aclrtReduceAsync(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, s, NULL));
  ASSERT(b[3] == 4.0f); /* held */
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(s));
  for (int i = 0; i < 4; i++)
    ASSERT(b[i] == 2.0f * (float)(i + 1));
  ASSERT_OK(aclrtDestroyStream(s));
  aclrtFree(a);
  aclrtFree(b);
}

TEST(reduce_kinds_and_types) {
  int8_t *i8 = dev(4), *j8 = dev(4);
  int16_t *i16 = dev(8), *j16 = dev(8);
  int32_t *i32 = dev(16), *j32 = dev(16);
  uint16_t *h = dev(4), *k = dev(4), *bf = dev(4), *bg = dev(4);
  int8_t x8[4] = {1, -5, 100, 7}, y8[4] = {2, 3, 27, 7};
  memcpy(i8, x8, 4);
  memcpy(j8, y8, 4);
  int16_t x16[4] = {-300, 5, 9, 0}, y16[4] = {200, 6, -9, 1};
  memcpy(i16, x16, 8);
  memcpy(j16, y16, 8);
  int32_t x32[4] = {10, -20, 30, 40}, y32[4] = {11, -21, 29, 40};
  memcpy(i32, x32, 16);
  memcpy(j32, y32, 16);
  h[0] = aclFloatToFloat16(1.5f);
  h[1] = aclFloatToFloat16(-2.0f);
  k[0] = aclFloatToFloat16(0.25f);
  k[1] = aclFloatToFloat16(-3.0f);
  bf[0] = 0x3fc0; /* 1.5 */
  bf[1] = 0x4000; /* 2.0 */
  bg[0] = 0x4040; /* 3.0 */
  bg[1] = 0x3f80; /* 1.0 */
  ASSERT_OK(aclrtReduceAsync(i8, j8, 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT8, NULL, NULL));
  ASSERT_OK(aclrtReduceAsync(i16, j16, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_INT16, NULL, NULL));
  ASSERT_OK(aclrtReduceAsync(i32, j32, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_INT32, NULL, NULL));
  ASSERT_OK(aclrtReduceAsync(h, k, 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT16, NULL, NULL));
  ASSERT_OK(aclrtReduceAsync(bf, bg, 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_BF16, NULL, NULL));
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT_EQ(i8[0], 3);
  ASSERT_EQ(i8[1], -2);
  ASSERT_EQ(i8[2], 127);
  ASSERT_EQ(i16[0], 200);
  ASSERT_EQ(i16[2], 9);
  ASSERT_EQ(i32[0], 10);
  ASSERT_EQ(i32[1], -21);
  ASSERT_EQ(i32[2], 29);
  ASSERT(aclFloat16ToFloat(h[0]) == 1.75f);
  ASSERT(aclFloat16ToFloat(h[1]) == -5.0f);
  ASSERT_EQ(bf[0], 0x4040);
  ASSERT_EQ(bf[1], 0x4000);
  void *all[] = {i8, j8, i16, j16, i32, j32, h, k, bf, bg};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    aclrtFree(all[i]);
}

TEST(reduce_bad_input) {
  float *a = dev(16), *b = dev(16);
  a[0] = b[0] = 1.0f;
  ASSERT_ACL(aclrtReduceAsync(NULL, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, NULL, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtReduceAsync(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, NULL, (void *)1),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtReduceAsync(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_DOUBLE, NULL, NULL),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtReduceAsync(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_UINT32, NULL, NULL),
             ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtReduceAsync(b, a, 0, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, NULL, NULL),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtReduceAsync(b, a, 6, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, NULL, NULL),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtReduceAsync(b, a, 16, (aclrtReduceKind)9, ACL_FLOAT, NULL, NULL),
             ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtReduceAsync(b, a, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_FLOAT, NULL, NULL),
             ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT(b[0] == 1.0f);
  aclrtFree(a);
  aclrtFree(b);
  (void)aclGetRecentErrMsg();
}

static void set_para(aclrtRandomParaInfo *p, const void *v, uint8_t size) {
  memset(p, 0, sizeof *p);
  memcpy(p->valueOrAddr, v, size);
  p->size = size;
}

static aclrtRandomNumTaskInfo task(aclDataType t, aclrtRandomNumFuncType f,
                                   const void *a, const void *b, uint8_t sz,
                                   uint64_t seed, uint64_t num, void *out,
                                   void *ctr) {
  aclrtRandomNumTaskInfo ti;
  memset(&ti, 0, sizeof ti);
  ti.dataType = t;
  ti.randomNumFuncParaInfo.funcType = f;
  set_para(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, a, sz);
  if (b)
    set_para(&ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, b, sz);
  set_para(&ti.randomSeed, &seed, 8);
  set_para(&ti.randomNum, &num, 8);
  ti.randomResultAddr = out;
  ti.randomCounterAddr = ctr;
  return ti;
}

TEST(random_uniform_reproducible_and_advancing) {
  float *o1 = dev(1024 * 4), *o2 = dev(1024 * 4), *o3 = dev(1024 * 4);
  uint64_t *ctr = dev(16);
  float lo = 2.0f, hi = 5.0f;
  memset(ctr, 0, 16);
  aclrtRandomNumTaskInfo ti = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, &lo, &hi,
                                   4, 42, 1024, o1, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  ti.randomResultAddr = o2; /* the counter moved: different numbers */
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT(ctr[0] > 0);
  memset(ctr, 0, 16);
  ti.randomResultAddr = o3; /* same seed and counter: same numbers */
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  double sum = 0;
  int same12 = 0;
  for (int i = 0; i < 1024; i++) {
    ASSERT(o1[i] >= 2.0f && o1[i] < 5.0f);
    ASSERT(o1[i] == o3[i]);
    same12 += o1[i] == o2[i];
    sum += o1[i];
  }
  ASSERT(same12 < 10);
  ASSERT(fabs(sum / 1024 - 3.5) < 0.2); /* the mean of U[2, 5) */
  /* a different seed gives different numbers */
  memset(ctr, 0, 16);
  ti = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, &lo, &hi, 4, 43, 1024, o2, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT(o2[0] != o1[0] || o2[1] != o1[1]);
  aclrtFree(o1);
  aclrtFree(o2);
  aclrtFree(o3);
  aclrtFree(ctr);
}

TEST(random_distributions) {
  uint64_t *ctr = dev(16);
  memset(ctr, 0, 16);
  int32_t *ints = dev(4000 * 4);
  int32_t lo = 1, hi = 100;
  aclrtRandomNumTaskInfo ti = task(ACL_INT32, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, &lo, &hi,
                                   4, 0, 4000, ints, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  float *nrm = dev(4000 * 4);
  float mean = 3.0f, sd = 2.0f;
  ti = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, &mean, &sd, 4, 0, 4000, nrm, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  uint16_t *tb = dev(4000 * 2);
  uint16_t m16 = 0x3f80, s16 = 0x4000; /* bf16 1.0, 2.0 */
  ti = task(ACL_BF16, ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS, &m16, &s16, 2, 0, 4000, tb, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  uint8_t *mask = dev(500);
  float ratio = 0.25f;
  ti = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, &ratio, NULL, 4, 0, 4000, mask, ctr);
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  double s = 0, s2 = 0;
  int kept = 0;
  for (int i = 0; i < 4000; i++) {
    ASSERT(ints[i] >= 1 && ints[i] < 100);
    s += nrm[i];
    s2 += (double)nrm[i] * nrm[i];
    uint32_t bits = (uint32_t)tb[i] << 16;
    float f;
    memcpy(&f, &bits, 4);
    ASSERT(f >= 1.0f - 4.0f - 0.05f && f <= 1.0f + 4.0f + 0.05f); /* 2 sd */
    kept += (mask[i / 8] >> (i % 8)) & 1;
  }
  double m = s / 4000, var = s2 / 4000 - m * m;
  ASSERT(fabs(m - 3.0) < 0.2);
  ASSERT(fabs(sqrt(var) - 2.0) < 0.2);
  ASSERT(kept > 2800 && kept < 3200); /* ~75 % kept */
  aclrtFree(ctr);
  aclrtFree(ints);
  aclrtFree(nrm);
  aclrtFree(tb);
  aclrtFree(mask);
}

TEST(random_parameter_by_address) {
  uint64_t *ctr = dev(16);
  memset(ctr, 0, 16);
  float *bounds = dev(8), *out = dev(64 * 4);
  bounds[0] = 10.0f;
  bounds[1] = 11.0f;
  aclrtRandomNumTaskInfo ti = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, &bounds[0],
                                   &bounds[1], 4, 1, 64, out, ctr);
  float *pmin = &bounds[0], *pmax = &bounds[1];
  ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.isAddr = 1;
  memcpy(ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.valueOrAddr, &pmin, 8);
  ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.isAddr = 1;
  memcpy(ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.valueOrAddr, &pmax, 8);
  gate_t g;
  gate_init(&g);
  ASSERT_OK(gate_on(NULL, &g));
  ASSERT_OK(aclrtRandomNumAsync(&ti, NULL, NULL));
  bounds[0] = 20.0f; /* read when the task runs */
  bounds[1] = 21.0f;
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  for (int i = 0; i < 64; i++)
    ASSERT(out[i] >= 20.0f && out[i] < 21.0f);
  aclrtFree(ctr);
  aclrtFree(bounds);
  aclrtFree(out);
}

TEST(random_bad_input) {
  uint64_t *ctr = dev(16);
  float *out = dev(64);
  float lo = 0, hi = 1;
  out[0] = -7.0f;
  aclrtRandomNumTaskInfo ti = task(ACL_DOUBLE, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, &lo, &hi,
                                   4, 0, 16, out, ctr);
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtRandomNumAsync(NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ti.dataType = ACL_FLOAT;
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, (void *)1), ACL_ERROR_RT_PARAM_INVALID);
  ti.randomNumFuncParaInfo.funcType = (aclrtRandomNumFuncType)4;
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ti.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS;
  ti.dataType = ACL_INT32;
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ti.dataType = ACL_FLOAT;
  ti.randomResultAddr = NULL;
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ti.randomResultAddr = out;
  uint64_t local[2];
  ti.randomCounterAddr = local;
  ASSERT_ACL(aclrtRandomNumAsync(&ti, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtSynchronizeStream(NULL));
  ASSERT(out[0] == -7.0f);
  aclrtFree(ctr);
  aclrtFree(out);
  (void)aclGetRecentErrMsg();
}
