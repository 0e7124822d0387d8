/*
 * acl_base.c - the helpers of acl/acl_base.h that need no device: fp16
 * conversion, data-type sizes, aclDataBuffer descriptors and aclAppLog.
 *
 * aclDataBuffer: a small heap descriptor {data, size}.  CANN deletes it
 * without checking; here the live descriptors are kept in a set (under
 * buf_lock) so that a destroyed or forged one is refused with 100000 by
 * destroy and update, and reads as NULL / 0 by the getters, instead of
 * touching freed memory.  buf_lock is a leaf lock.
 */
#include "acl_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ fp16 */

/* fp16 -> float.  Exponent 31 is read as an ordinary exponent, as CANN does
 * (its note: +Inf -> 65536.0, -Inf -> -65536.0, NaN 0x7E00 -> 98304.0), so
 * every fp16 bit pattern maps to a finite float. */
float aclFloat16ToFloat(aclFloat16 value) {
  uint32_t sign = (uint32_t)(value >> 15) << 31;
  int exp = (value >> 10) & 0x1f;
  uint32_t man = value & 0x3ffu;
  uint32_t bits;
  if (exp == 0 && man == 0) {
    bits = sign; /* signed zero */
  } else if (exp == 0) {
    /* subnormal: value = man * 2^-24; normalize into a float */
    int e = -14;
    while (!(man & 0x400u)) {
      man <<= 1;
      e--;
    }
    man &= 0x3ffu;
    bits = sign | ((uint32_t)(e + 127) << 23) | (man << 13);
  } else {
    bits = sign | ((uint32_t)(exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* float -> fp16, round to nearest even; any magnitude that does not fit
 * (overflow, +-Inf, NaN) saturates to +-65504 (0x7BFF / 0xFBFF) as CANN's
 * note says. */
aclFloat16 aclFloatToFloat16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  int exp = (int)((bits >> 23) & 0xffu);
  uint32_t man = bits & 0x7fffffu;
  const uint16_t max_finite = 0x7bffu;
  if (exp == 0xff)
    return (aclFloat16)(sign | max_finite);
  int e = exp - 127 + 15; /* fp16 biased exponent */
  if (e >= 31)
    return (aclFloat16)(sign | max_finite);
  if (e <= 0) {
    /* subnormal fp16 (or zero): shift the 24-bit significand so that one
     * unit is 2^-24, rounding the bits shifted out to nearest even */
    if (e < -10)
      return sign; /* below half the smallest subnormal: rounds to zero */
    uint32_t sig = man | 0x800000u;
    int shift = 14 - e; /* 13 mantissa bits + (1 - e) */
    uint32_t half = 1u << (shift - 1);
    uint32_t rest = sig & ((1u << shift) - 1);
    uint32_t q = sig >> shift;
    if (rest > half || (rest == half && (q & 1u)))
      q++;
    return (aclFloat16)(sign | q); /* q == 0x400 is the smallest normal */
  }
  uint32_t q = man >> 13;
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (q & 1u)))
    q++;
  if (q == 0x400u) { /* the mantissa rounded up into the next exponent */
    q = 0;
    e++;
    if (e >= 31)
      return (aclFloat16)(sign | max_finite);
  }
  return (aclFloat16)(sign | (uint16_t)(e << 10) | (uint16_t)q);
}

/* ------------------------------------------------------------ data types */

/* Element sizes as CANN's aclDataTypeSize returns them: STRING and
 * UNDEFINED 0; the packed sub-byte types INT4 and UINT1 1; and every value
 * the table does not list (FLOAT6_*, FLOAT4_*, unknown values) falls into
 * CANN's default branch, 8. */
size_t aclDataTypeSize(aclDataType dataType) {
  switch ((int)dataType) {
  case ACL_STRING:
  case ACL_DT_UNDEFINED:
    return 0;
  case ACL_UINT1:
  case ACL_INT4:
  case ACL_BOOL:
  case ACL_INT8:
  case ACL_UINT8:
  case ACL_HIFLOAT8:
  case ACL_FLOAT8_E5M2:
  case ACL_FLOAT8_E4M3FN:
  case ACL_FLOAT8_E8M0:
    return 1;
  case ACL_FLOAT16:
  case ACL_INT16:
  case ACL_UINT16:
  case ACL_BF16:
    return 2;
  case ACL_FLOAT:
  case ACL_INT32:
  case ACL_UINT32:
  case ACL_COMPLEX32:
    return 4;
  case ACL_COMPLEX128:
    return 16;
  default: /* INT64, UINT64, DOUBLE, COMPLEX64 and the rest */
    return 8;
  }
}

/* ----------------------------------------------------------- data buffer */

struct aclDataBuffer {
  void *data;
  size_t size;
};

static ACL__MUTEX(buf_lock)
static struct acl__map *live_bufs; /* key: descriptor address */

static bool buf_live_locked(const aclDataBuffer *b) {
  return b && acl__map_get(&live_bufs, (uint64_t)(uintptr_t)b) != NULL;
}

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size) {
  static const char fn[] = "aclCreateDataBuffer";
  if (!data && size) {
    acl__fail(ACL_ERROR_INVALID_PARAM, fn,
              "data is NULL but size is %zu (an empty buffer has size 0)",
              size);
    return NULL;
  }
  aclDataBuffer *b = malloc(sizeof *b);
  if (!b) {
    acl__fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
    return NULL;
  }
  b->data = data;
  b->size = size;
  pthread_mutex_lock(&buf_lock);
  int bad = acl__map_put(&live_bufs, (uint64_t)(uintptr_t)b, b);
  pthread_mutex_unlock(&buf_lock);
  if (bad) {
    free(b);
    acl__fail(ACL_ERROR_BAD_ALLOC, fn, "out of memory");
    return NULL;
  }
  return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) {
  static const char fn[] = "aclDestroyDataBuffer";
  if (!dataBuffer)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "dataBuffer is NULL");
  pthread_mutex_lock(&buf_lock);
  void *b = acl__map_del(&live_bufs, (uint64_t)(uintptr_t)dataBuffer);
  pthread_mutex_unlock(&buf_lock);
  if (!b)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p is not a live aclDataBuffer (destroyed already?)",
                     (const void *)dataBuffer);
  free(b);
  return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data,
                             size_t size) {
  static const char fn[] = "aclUpdateDataBuffer";
  if (!dataBuffer)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "dataBuffer is NULL");
  pthread_mutex_lock(&buf_lock);
  bool ok = buf_live_locked(dataBuffer);
  if (ok) {
    dataBuffer->data = data;
    dataBuffer->size = size;
  }
  pthread_mutex_unlock(&buf_lock);
  if (!ok)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p is not a live aclDataBuffer", (void *)dataBuffer);
  return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer) {
  pthread_mutex_lock(&buf_lock);
  void *d = buf_live_locked(dataBuffer) ? dataBuffer->data : NULL;
  pthread_mutex_unlock(&buf_lock);
  return d;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer) {
  pthread_mutex_lock(&buf_lock);
  size_t n = buf_live_locked(dataBuffer) ? dataBuffer->size : 0;
  pthread_mutex_unlock(&buf_lock);
  return n;
}

/* The deprecated 32-bit getter truncates, as CANN's static_cast does. */
uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer) {
  return (uint32_t)aclGetDataBufferSizeV2(dataBuffer);
}

/* ----------------------------------------------------------------- log */

/* Application log lines go to stderr when their level is at least
 * ASCEND_GLOBAL_LOG_LEVEL (CANN's variable: 0 debug .. 3 error, 4 off;
 * default 3).  A line is at most 1024 bytes; a longer one is cut and ends in
 * "...[truncated]", as CANN's header says. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file,
               uint32_t line, const char *fmt, ...) {
  static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
  if ((int)logLevel < ACL_DEBUG || (int)logLevel > ACL_ERROR || !fmt)
    return;
  const char *env = getenv("ASCEND_GLOBAL_LOG_LEVEL");
  int threshold = ACL_ERROR;
  if (env && env[0] >= '0' && env[0] <= '4' && env[1] == '\0')
    threshold = env[0] - '0';
  if ((int)logLevel < threshold)
    return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  static const char cut[] = "...[truncated]";
  if (n >= (int)sizeof msg)
    memcpy(msg + sizeof msg - sizeof cut, cut, sizeof cut);
  fprintf(stderr, "[%s] APP(%ld):%s:%u %s: %s\n", names[logLevel],
          (long)getpid(), file ? file : "?", line, func ? func : "?", msg);
}
