/* The built-in tasks (the flow of the CANN runtime samples
 * built_in_task/0_reduce_task and 1_random_num_task, with the overflow
 * switch of 4_reliability/overflow_detection): reductions, random numbers
 * and the saturation mode, each a task of a stream. */
#include "sample_common.h"

#include <string.h>

static void *dev_alloc(size_t n) {
  void *p = NULL;
  CHECK_ERROR(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
  return p;
}

static void put(void *dst, const void *src, size_t n) {
  CHECK_ERROR(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void get(void *dst, const void *src, size_t n) {
  CHECK_ERROR(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_HOST));
}

static void set_para(aclrtRandomParaInfo *p, const void *v, uint8_t size) {
  memset(p, 0, sizeof *p);
  memcpy(p->valueOrAddr, v, size);
  p->size = size;
}

int main(void) {
  aclrtStream stream = NULL;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtCreateStream(&stream));

  /* reduce: dst = dst OP src */
  const int32_t a[4] = {1, -2, 30, 4}, b[4] = {10, 20, -30, 40};
  int32_t out[4];
  int32_t *src = dev_alloc(sizeof a), *dst = dev_alloc(sizeof b);
  static const struct {
    aclrtReduceKind kind;
    const char *name;
  } kinds[] = {{ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, "SUM"},
               {ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, "MAX"},
               {ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, "MIN"}};
  for (size_t k = 0; k < 3; k++) {
    put(src, a, sizeof a);
    put(dst, b, sizeof b);
    CHECK_ERROR(aclrtReduceAsync(dst, src, sizeof a, kinds[k].kind, ACL_INT32,
                                 stream, NULL));
    CHECK_ERROR(aclrtSynchronizeStream(stream));
    get(out, dst, sizeof out);
    INFO_LOG("Reduce %s: [%d, %d, %d, %d]", kinds[k].name, out[0], out[1],
             out[2], out[3]);
  }
  INFO_LOG("Reduce EQUAL returns %d",
           aclrtReduceAsync(dst, src, sizeof a, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL,
                            ACL_INT32, stream, NULL));

  /* fp16 overflow under both saturation modes, with the overflow switch */
  uint32_t on = 0;
  CHECK_ERROR(aclrtSetStreamOverflowSwitch(stream, 1));
  CHECK_ERROR(aclrtGetStreamOverflowSwitch(stream, &on));
  INFO_LOG("Overflow switch: %u", on);
  uint64_t *status = dev_alloc(64);
  static const struct {
    aclrtFloatOverflowMode mode;
    const char *name;
  } modes[] = {{ACL_RT_OVERFLOW_MODE_SATURATION, "saturation"},
               {ACL_RT_OVERFLOW_MODE_INFNAN, "inf/nan"}};
  for (size_t m = 0; m < 2; m++) {
    aclrtStream s2 = NULL;
    CHECK_ERROR(aclrtSetDeviceSatMode(modes[m].mode));
    CHECK_ERROR(aclrtCreateStream(&s2)); /* the mode applies to new streams */
    CHECK_ERROR(aclrtSetStreamOverflowSwitch(s2, 1));
    CHECK_ERROR(aclrtResetOverflowStatus(s2));
    aclFloat16 h[2] = {aclFloatToFloat16(60000.0f), aclFloatToFloat16(1.0f)};
    aclFloat16 r[2];
    aclFloat16 *hs = dev_alloc(sizeof h), *hd = dev_alloc(sizeof h);
    put(hs, h, sizeof h);
    put(hd, h, sizeof h);
    CHECK_ERROR(aclrtReduceAsync(hd, hs, sizeof h, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                                 ACL_FLOAT16, s2, NULL));
    CHECK_ERROR(aclrtGetOverflowStatus(status, 64, s2));
    CHECK_ERROR(aclrtSynchronizeStream(s2));
    get(r, hd, sizeof r);
    uint64_t word = 0;
    get(&word, status, sizeof word);
    INFO_LOG("fp16 60000 + 60000 in %s mode: 0x%04x (%s), 1 + 1: %.1f, "
             "overflow %s",
             modes[m].name, (unsigned)r[0],
             r[0] == 0x7BFF ? "65504, the largest fp16"
             : r[0] == 0x7C00 ? "+Inf" : "?",
             aclFloat16ToFloat(r[1]), word ? "detected" : "not detected");
    CHECK_ERROR(aclrtResetOverflowStatus(s2));
    CHECK_ERROR(aclrtGetOverflowStatus(status, 64, s2));
    CHECK_ERROR(aclrtSynchronizeStream(s2));
    get(&word, status, sizeof word);
    INFO_LOG("After the reset: overflow %s", word ? "detected" : "not detected");
    CHECK_ERROR(aclrtFree(hs));
    CHECK_ERROR(aclrtFree(hd));
    CHECK_ERROR(aclrtDestroyStream(s2));
  }

  /* random numbers: the same seed and counter give the same numbers */
  enum { N = 1000 };
  float *r1 = dev_alloc(N * sizeof(float)), *r2 = dev_alloc(N * sizeof(float));
  uint64_t *counter = dev_alloc(16);
  const uint64_t zero[2] = {0, 0}, seed = 2024, num = N;
  const float lo = -1.0f, hi = 1.0f;
  aclrtRandomNumTaskInfo info;
  memset(&info, 0, sizeof info);
  info.dataType = ACL_FLOAT;
  info.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
  set_para(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, 4);
  set_para(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, 4);
  set_para(&info.randomSeed, &seed, 8);
  set_para(&info.randomNum, &num, 8);
  info.randomCounterAddr = counter;
  put(counter, zero, sizeof zero);
  info.randomResultAddr = r1;
  CHECK_ERROR(aclrtRandomNumAsync(&info, stream, NULL));
  CHECK_ERROR(aclrtSynchronizeStream(stream));
  uint64_t advanced[2];
  get(advanced, counter, sizeof advanced);
  put(counter, zero, sizeof zero);
  info.randomResultAddr = r2;
  CHECK_ERROR(aclrtRandomNumAsync(&info, stream, NULL));
  CHECK_ERROR(aclrtSynchronizeStream(stream));
  static float h1[N], h2[N];
  get(h1, r1, sizeof h1);
  get(h2, r2, sizeof h2);
  int inRange = 1;
  double sum = 0;
  for (int i = 0; i < N; i++) {
    inRange &= h1[i] >= lo && h1[i] < hi;
    sum += h1[i];
  }
  INFO_LOG("Uniform [-1, 1): %d numbers, all in range: %s, mean within 0.1 of "
           "0: %s",
           N, inRange ? "yes" : "no", sum / N > -0.1 && sum / N < 0.1 ? "yes" : "no");
  INFO_LOG("The counter advanced: %s; same seed and counter, same numbers: %s",
           advanced[0] || advanced[1] ? "yes" : "no",
           memcmp(h1, h2, sizeof h1) ? "no" : "yes");

  CHECK_ERROR(aclrtFree(r1));
  CHECK_ERROR(aclrtFree(r2));
  CHECK_ERROR(aclrtFree(counter));
  CHECK_ERROR(aclrtFree(status));
  CHECK_ERROR(aclrtFree(src));
  CHECK_ERROR(aclrtFree(dst));
  CHECK_ERROR(aclrtDestroyStream(stream));
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Done.");
  return 0;
}
