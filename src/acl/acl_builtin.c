/*
 * acl_builtin.c - the built-in tasks: aclrtReduceAsync (element-wise
 * dst = dst OP src) and aclrtRandomNumAsync (counter-based random numbers).
 * Each is one host function on the stream doing the arithmetic on host
 * memory when the stream reaches it.
 *
 * Random numbers: Philox4x32-10 (Salmon et al., SC'11), keyed by the seed,
 * starting at the 128-bit counter stored at randomCounterAddr (two
 * little-endian 64-bit words, low first).  The task advances that counter
 * by the number of Philox blocks it used, so successive tasks with the same
 * counter memory continue the sequence.  Distributions:
 *  - uniform: floats in [min, max), integers in [min, max);
 *  - normal: Box-Muller; truncated normal: redrawn until within two
 *    standard deviations of the mean;
 *  - dropout bitmask: bit i (LSB first in byte i/8) is 1 when element i is
 *    kept (a uniform draw >= the ratio), ceil(num / 8) bytes in all.
 * Parameters with isAddr = 1 are read from the address when the task runs.
 */
#include "acl_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- helpers */

static float bf16_to_float(uint16_t v) {
  uint32_t bits = (uint32_t)v << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* float -> bf16, round to nearest even (NaN kept quiet) */
static uint16_t float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

static size_t elem_size(aclDataType t) { return aclDataTypeSize(t); }

/* --------------------------------------------------------------- reduce */

struct reduce {
  void *dst;
  const void *src;
  size_t n; /* elements */
  aclrtReduceKind kind;
  aclDataType type;
  bool saturate;      /* the device's mode when enqueued */
  bool note_overflow; /* the stream's overflow switch when enqueued */
};

/* Store a float result; an overflow (a finite computation that does not
 * fit) saturates to the largest finite value or becomes +-Inf, by mode. */
static void store_result(struct reduce *t, size_t i, double v, bool *ovf) {
  float f = (float)v;
  switch (t->type) {
  case ACL_FLOAT:
    if (isinf(f) && isfinite(v)) {
      *ovf = true;
      f = t->saturate ? copysignf(FLT_MAX, f) : f;
    }
    ((float *)t->dst)[i] = f;
    break;
  case ACL_FLOAT16:
    if (fabs(v) >= 65520.0) { /* rounds beyond 65504 */
      *ovf = true;
      ((uint16_t *)t->dst)[i] = t->saturate ? (v > 0 ? 0x7bffu : 0xfbffu)
                                            : (v > 0 ? 0x7c00u : 0xfc00u);
    } else {
      ((uint16_t *)t->dst)[i] = aclFloatToFloat16(f);
    }
    break;
  default: { /* ACL_BF16 */
    uint16_t b = float_to_bf16(f);
    if ((b & 0x7fffu) == 0x7f80u || isinf(f)) {
      *ovf = true;
      b = t->saturate ? (uint16_t)((b & 0x8000u) | 0x7f7fu)
                      : (uint16_t)((b & 0x8000u) | 0x7f80u);
    }
    ((uint16_t *)t->dst)[i] = b;
    break;
  }
  }
}

static double apply(aclrtReduceKind k, double a, double b) {
  switch (k) {
  case ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM:
    return a + b;
  case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX:
    return a > b ? a : b;
  default:
    return a < b ? a : b;
  }
}

#define REDUCE_INT(T)                                                          \
  do {                                                                         \
    T *d = t->dst;                                                             \
    const T *s = t->src;                                                       \
    for (size_t i = 0; i < t->n; i++)                                          \
      d[i] = t->kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM                       \
                 ? (T)(d[i] + s[i])                                            \
             : t->kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX ? (d[i] > s[i] ? d[i] : s[i]) \
                                                           : (d[i] < s[i] ? d[i] : s[i]); \
  } while (0)

static void run_reduce(void *arg) {
  struct reduce *t = arg;
  bool ovf = false;
  switch (t->type) {
  case ACL_INT8:
    REDUCE_INT(int8_t);
    break;
  case ACL_INT16:
    REDUCE_INT(int16_t);
    break;
  case ACL_INT32:
    REDUCE_INT(int32_t);
    break;
  case ACL_FLOAT: {
    float *d = t->dst;
    const float *s = t->src;
    for (size_t i = 0; i < t->n; i++)
      store_result(t, i, apply(t->kind, d[i], s[i]), &ovf);
    break;
  }
  case ACL_FLOAT16: {
    uint16_t *d = t->dst;
    const uint16_t *s = t->src;
    for (size_t i = 0; i < t->n; i++)
      store_result(t, i, apply(t->kind, aclFloat16ToFloat(d[i]),
                               aclFloat16ToFloat(s[i])), &ovf);
    break;
  }
  default: { /* ACL_BF16 */
    uint16_t *d = t->dst;
    const uint16_t *s = t->src;
    for (size_t i = 0; i < t->n; i++)
      store_result(t, i, apply(t->kind, bf16_to_float(d[i]),
                               bf16_to_float(s[i])), &ovf);
    break;
  }
  }
  if (ovf && t->note_overflow)
    acl__note_overflow();
  free(t);
}

/* Types as the A2/A3 reference lists them (int8, int16, int32, fp16, fp32,
 * bf16); the other types ACL maps (int4, uint8, uint16, uint32) are for
 * other SoCs: 207000; any other type 100000.  EQUAL has no documented
 * meaning: 207000. */
aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count,
                          aclrtReduceKind kind, aclDataType type,
                          aclrtStream stream, void *reserve) {
  static const char fn[] = "aclrtReduceAsync";
  if (!dst || !src)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     dst ? "src" : "dst");
  if (reserve)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "reserve is reserved and must be NULL");
  switch ((int)type) {
  case ACL_INT8:
  case ACL_INT16:
  case ACL_INT32:
  case ACL_FLOAT16:
  case ACL_FLOAT:
  case ACL_BF16:
    break;
  case ACL_INT4:
  case ACL_UINT8:
  case ACL_UINT16:
  case ACL_UINT32:
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "data type %d is not supported by %s", (int)type,
                     acl__soc.name);
  default:
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "data type %d is not supported", (int)type);
  }
  if (!count)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "count is 0");
  if (kind < ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM ||
      kind > ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "kind %d is not in [10, 14)", (int)kind);
  if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL is not modelled "
                     "(CANN documents no semantics for it)");
  if (count % elem_size(type))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "count %llu is not a whole number of %zu-byte elements",
                     (unsigned long long)count, elem_size(type));
  struct reduce *t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *t = (struct reduce){dst, src, (size_t)(count / elem_size(type)), kind,
                       type, acl__sat_mode() == ACL_RT_OVERFLOW_MODE_SATURATION,
                       acl__stream_overflow_switch(stream) != 0};
  return acl__enqueue_task(fn, stream, run_reduce, t, false);
}

/* --------------------------------------------------------------- Philox */

struct philox {
  uint32_t key[2];
  uint64_t ctr[2]; /* 128-bit block counter, low word first */
  uint32_t out[4];
  int used;        /* words of out[] consumed; 4 = empty */
  uint64_t blocks; /* blocks generated */
};

static void philox_block(const uint32_t key_in[2], const uint64_t ctr[2],
                         uint32_t out[4]) {
  uint32_t c[4] = {(uint32_t)ctr[0], (uint32_t)(ctr[0] >> 32),
                   (uint32_t)ctr[1], (uint32_t)(ctr[1] >> 32)};
  uint32_t k0 = key_in[0], k1 = key_in[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c[0] = n0;
    c[1] = n1;
    c[2] = n2;
    c[3] = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  memcpy(out, c, sizeof c);
}

static uint32_t next_u32(struct philox *g) {
  if (g->used == 4) {
    philox_block(g->key, g->ctr, g->out);
    if (++g->ctr[0] == 0)
      g->ctr[1]++;
    g->blocks++;
    g->used = 0;
  }
  return g->out[g->used++];
}

/* Uniform in [0, 1) with 24 bits (float) or 53 bits (double). */
static float next_unit_f(struct philox *g) {
  return (float)(next_u32(g) >> 8) * 0x1p-24f;
}
static double next_unit_d(struct philox *g) {
  uint64_t hi = next_u32(g) >> 5, lo = next_u32(g) >> 6;
  return (double)((hi << 26) | lo) * 0x1p-53;
}

static double next_normal(struct philox *g) {
  double u1 = next_unit_d(g), u2 = next_unit_d(g);
  if (u1 < 0x1p-60)
    u1 = 0x1p-60; /* log(0) */
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---------------------------------------------------------------- random */

struct random_task {
  aclDataType type;
  aclrtRandomNumFuncType func;
  aclrtRandomParaInfo p0, p1; /* min/max, mean/stddev, ratio */
  aclrtRandomParaInfo seed, num;
  void *result;
  void *counter;
};

/* The bytes of a parameter: immediate, or read from its address now. */
static void para_bytes(const aclrtRandomParaInfo *p, unsigned char out[8]) {
  memset(out, 0, 8);
  size_t n = p->size > 8 ? 8 : p->size;
  if (p->isAddr) {
    const void *addr;
    memcpy(&addr, p->valueOrAddr, sizeof addr);
    if (addr)
      memcpy(out, addr, n);
  } else {
    memcpy(out, p->valueOrAddr, n);
  }
}

static uint64_t para_u64(const aclrtRandomParaInfo *p) {
  unsigned char b[8];
  para_bytes(p, b);
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | b[i];
  return v;
}

/* A parameter as a double, decoded by the task's data type. */
static double para_num(const aclrtRandomParaInfo *p, aclDataType t) {
  unsigned char b[8];
  para_bytes(p, b);
  switch ((int)t) {
  case ACL_FLOAT: {
    float f;
    memcpy(&f, b, 4);
    return f;
  }
  case ACL_FLOAT16: {
    uint16_t h;
    memcpy(&h, b, 2);
    return aclFloat16ToFloat(h);
  }
  case ACL_BF16: {
    uint16_t h;
    memcpy(&h, b, 2);
    return bf16_to_float(h);
  }
  case ACL_INT32: {
    int32_t v;
    memcpy(&v, b, 4);
    return v;
  }
  case ACL_UINT32: {
    uint32_t v;
    memcpy(&v, b, 4);
    return v;
  }
  case ACL_INT64: {
    int64_t v;
    memcpy(&v, b, 8);
    return (double)v;
  }
  default: {
    uint64_t v;
    memcpy(&v, b, 8);
    return (double)v;
  }
  }
}

static void store_float(void *out, size_t i, aclDataType t, double v) {
  if (t == ACL_FLOAT)
    ((float *)out)[i] = (float)v;
  else if (t == ACL_FLOAT16)
    ((uint16_t *)out)[i] = aclFloatToFloat16((float)v);
  else
    ((uint16_t *)out)[i] = float_to_bf16((float)v);
}

static void uniform_int(struct philox *g, void *out, size_t n, aclDataType t,
                        const aclrtRandomParaInfo *pmin,
                        const aclrtRandomParaInfo *pmax) {
  bool is64 = t == ACL_INT64 || t == ACL_UINT64;
  bool sgn = t == ACL_INT32 || t == ACL_INT64;
  uint64_t lo = para_u64(pmin), hi = para_u64(pmax);
  if (!is64) { /* sign-extend or zero-extend the 32-bit values */
    lo = sgn ? (uint64_t)(int64_t)(int32_t)lo : (uint32_t)lo;
    hi = sgn ? (uint64_t)(int64_t)(int32_t)hi : (uint32_t)hi;
  }
  bool empty = sgn ? (int64_t)hi <= (int64_t)lo : hi <= lo;
  uint64_t span = empty ? 1 : hi - lo;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = is64 ? ((uint64_t)next_u32(g) << 32) | next_u32(g)
                      : next_u32(g);
    uint64_t v = lo + r % span;
    if (is64)
      ((uint64_t *)out)[i] = v;
    else
      ((uint32_t *)out)[i] = (uint32_t)v;
  }
}

static void run_random(void *arg) {
  struct random_task *t = arg;
  struct philox g;
  uint64_t seed = para_u64(&t->seed);
  size_t n = (size_t)para_u64(&t->num);
  g.key[0] = (uint32_t)seed;
  g.key[1] = (uint32_t)(seed >> 32);
  memcpy(g.ctr, t->counter, sizeof g.ctr);
  g.used = 4;
  g.blocks = 0;
  switch (t->func) {
  case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: {
    float ratio = (float)para_num(&t->p0, ACL_FLOAT);
    unsigned char *m = t->result;
    memset(m, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++)
      if (next_unit_f(&g) >= ratio)
        m[i / 8] |= (unsigned char)(1u << (i % 8));
    break;
  }
  case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
    if (t->type == ACL_FLOAT || t->type == ACL_FLOAT16 || t->type == ACL_BF16) {
      double lo = para_num(&t->p0, t->type), hi = para_num(&t->p1, t->type);
      for (size_t i = 0; i < n; i++)
        store_float(t->result, i, t->type, lo + (hi - lo) * next_unit_f(&g));
    } else {
      uniform_int(&g, t->result, n, t->type, &t->p0, &t->p1);
    }
    break;
  default: { /* normal and truncated normal */
    double mean = para_num(&t->p0, t->type), sd = para_num(&t->p1, t->type);
    bool trunc = t->func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS;
    for (size_t i = 0; i < n; i++) {
      double z = next_normal(&g);
      for (int tries = 0; trunc && fabs(z) > 2.0 && tries < 1000; tries++)
        z = next_normal(&g);
      store_float(t->result, i, t->type, mean + sd * z);
    }
    break;
  }
  }
  uint64_t c[2];
  memcpy(c, t->counter, sizeof c);
  c[0] += g.blocks;
  if (c[0] < g.blocks)
    c[1]++;
  memcpy(t->counter, c, sizeof c);
  free(t);
}

aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo,
                             const aclrtStream stream, void *reserve) {
  static const char fn[] = "aclrtRandomNumAsync";
  if (!taskInfo)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "taskInfo is NULL");
  aclDataType t = taskInfo->dataType;
  if (t != ACL_INT32 && t != ACL_INT64 && t != ACL_UINT32 && t != ACL_UINT64 &&
      t != ACL_BF16 && t != ACL_FLOAT16 && t != ACL_FLOAT)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "taskInfo->dataType %d is not supported", (int)t);
  if (reserve)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "reserve is reserved and must be NULL");
  const aclrtRandomNumFuncParaInfo *fp = &taskInfo->randomNumFuncParaInfo;
  bool is_float = t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16;
  if ((unsigned)fp->funcType > ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "unknown random function %d", (int)fp->funcType);
  if (!is_float && (fp->funcType == ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS ||
                    fp->funcType ==
                        ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "normal distributions need a floating-point type");
  if (!taskInfo->randomResultAddr || !taskInfo->randomCounterAddr)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s is NULL",
                     taskInfo->randomResultAddr ? "randomCounterAddr"
                                                : "randomResultAddr");
  if (!acl__is_acl_memory(taskInfo->randomCounterAddr, 16))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "randomCounterAddr must be 16 bytes of device memory");
  struct random_task *task = malloc(sizeof *task);
  if (!task)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  task->type = t;
  task->func = fp->funcType;
  switch (fp->funcType) {
  case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
    task->p0 = fp->paramInfo.dropoutBitmaskInfo.dropoutRation;
    memset(&task->p1, 0, sizeof task->p1);
    break;
  case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
    task->p0 = fp->paramInfo.uniformDisInfo.min;
    task->p1 = fp->paramInfo.uniformDisInfo.max;
    break;
  default:
    task->p0 = fp->paramInfo.normalDisInfo.mean;
    task->p1 = fp->paramInfo.normalDisInfo.stddev;
    break;
  }
  task->seed = taskInfo->randomSeed;
  task->num = taskInfo->randomNum;
  task->result = taskInfo->randomResultAddr;
  task->counter = taskInfo->randomCounterAddr;
  return acl__enqueue_task(fn, stream, run_random, task, false);
}
