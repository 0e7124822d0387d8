/*
 * acl_memcopy.c - the copy and fill calls beyond aclrtMemcpy/aclrtMemset:
 * 2-D copies, 32-bit fills, copies through device-held addresses (with
 * offset, with a descriptor) and batch copies.
 *
 * Every asynchronous variant enqueues one evrt host function that does the
 * whole operation on a worker thread (acl__enqueue_task); the caller thread
 * never copies.  As CANN documents for aclrtMemcpyAsync and the 2-D and
 * batch variants, a copy whose host side is plain (not ACL-allocated)
 * memory returns only once the copy is done: the call enqueues the task
 * and then synchronizes the stream.
 *
 * Every side of every copy is checked by acl__mem_side (acl_memory.c), the
 * rule of aclrtMemcpy: at the call for the addresses the call is given
 * (the 2-D spans whole, each copy of a batch), and when the task runs for
 * the addresses read from device memory then (with offset, with a
 * descriptor), since the blocks they name may be freed or unmapped by
 * then.  A task whose addresses fail there copies nothing.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

aclError acl__enqueue_task(const char *fn, aclrtStream stream,
                           evrt_host_fn run, void *task, bool wait) {
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r) {
    free(task);
    return r;
  }
  evrt_status_t st = evrt_launch_host_func_labeled(h, run, task, fn);
  if (st) {
    free(task);
    return acl__st(st, fn);
  }
  if (wait && (st = evrt_stream_synchronize(h)))
    return acl__st(st, fn);
  return ACL_SUCCESS;
}

/* As acl__enqueue_task, letting the held reserved ranges go once the task
 * is enqueued (an unmap after that waits for it), before any wait. */
static aclError enqueue_held(const char *fn, aclrtStream stream,
                             evrt_host_fn run, void *task, bool wait,
                             struct acl__pins *pins) {
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  evrt_status_t st = EVRT_SUCCESS;
  if (!r && (st = evrt_launch_host_func_labeled(h, run, task, fn)))
    r = acl__st(st, fn);
  acl__pins_drop(pins);
  if (r) {
    free(task);
    return r;
  }
  if (wait && (st = evrt_stream_synchronize(h)))
    return acl__st(st, fn);
  return ACL_SUCCESS;
}

bool acl__is_acl_memory(const void *p, size_t n) {
  return acl__mem_usable(p, n, false);
}

/* ----------------------------------------------------------------- 2-D */

struct copy2d {
  char *dst;
  const char *src;
  size_t dpitch, spitch, width, height;
};

/* A copy that EVRT_CHECK sees (docs/check.md): these copies run as host
 * functions (or on the caller, for the synchronous forms), so they declare
 * what they read and write. */
static void checked_move(void *dst, const void *src, size_t n) {
  evrt_check_access(src, n, EVRT_CHECK_READ);
  evrt_check_access(dst, n, EVRT_CHECK_WRITE);
  memmove(dst, src, n);
}

static void run_copy2d(void *p) {
  struct copy2d *t = p;
  for (size_t i = 0; i < t->height; i++)
    checked_move(t->dst + i * t->dpitch, t->src + i * t->spitch, t->width);
  free(t);
}

/* CANN's checks: an empty copy (width or height 0) succeeds at once; then
 * dst/src non-NULL, width <= both pitches, and a kind among H2D, D2H, D2D
 * and DEFAULT; all 100000.  The async variant also caps width at 5000000
 * and height at 5 Mi rows.  Then aclrtMemcpy's rules on each side's span,
 * [ptr, ptr + (height-1)*pitch + width) (issue 23 item 2): in one block of
 * the layer (mapped pages of a reserved range, held in pins), or host
 * memory where the kind names host memory; 100000 otherwise. */
static aclError check2d(const char *fn, void *dst, size_t dpitch,
                        const void *src, size_t spitch, size_t width,
                        size_t height, aclrtMemcpyKind kind, bool async,
                        struct acl__pins *pins) {
  if (!dst || !src)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     dst ? "src" : "dst");
  if (width > spitch || width > dpitch)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "width %zu must not exceed spitch %zu and dpitch %zu",
                     width, spitch, dpitch);
  if (kind != ACL_MEMCPY_HOST_TO_DEVICE && kind != ACL_MEMCPY_DEVICE_TO_HOST &&
      kind != ACL_MEMCPY_DEVICE_TO_DEVICE && kind != ACL_MEMCPY_DEFAULT)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "kind %d is not supported by 2-D copies", (int)kind);
  if (async && (width > 5000000 || height > 5242880))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "width %zu or height %zu is above 5000000 / 5242880",
                     width, height);
  /* the last row ends at (height-1)*pitch + width: no wrap */
  if ((height - 1) > (SIZE_MAX - width) / (dpitch ? dpitch : 1) ||
      (height - 1) > (SIZE_MAX - width) / (spitch ? spitch : 1))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "the copy wraps around");
  size_t dspan = (height - 1) * dpitch + width;
  size_t sspan = (height - 1) * spitch + width;
  bool dev_dst = kind == ACL_MEMCPY_HOST_TO_DEVICE ||
                 kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  bool dev_src = kind == ACL_MEMCPY_DEVICE_TO_HOST ||
                 kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  aclError r = acl__mem_side(
      fn, ACL_ERROR_INVALID_PARAM, "dst", dst, dspan,
      ACL__SIDE_WRITE | (dev_dst ? ACL__SIDE_DEVICE : ACL__SIDE_HOST), pins);
  if (!r)
    r = acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "src", src, sspan,
                      dev_src ? ACL__SIDE_DEVICE : ACL__SIDE_HOST, pins);
  if (r)
    acl__pins_drop(pins);
  return r;
}

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src,
                       size_t spitch, size_t width, size_t height,
                       aclrtMemcpyKind kind) {
  static const char fn[] = "aclrtMemcpy2d";
  if (width == 0 || height == 0)
    return ACL_SUCCESS;
  struct acl__pins pins = ACL__PINS_INIT;
  aclError r = check2d(fn, dst, dpitch, src, spitch, width, height, kind, 0,
                       &pins);
  if (r)
    return r;
  for (size_t i = 0; i < height; i++)
    checked_move((char *)dst + i * dpitch, (const char *)src + i * spitch,
                 width);
  acl__pins_drop(&pins);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src,
                            size_t spitch, size_t width, size_t height,
                            aclrtMemcpyKind kind, aclrtStream stream) {
  static const char fn[] = "aclrtMemcpy2dAsync";
  if (width == 0 || height == 0)
    return ACL_SUCCESS;
  struct acl__pins pins = ACL__PINS_INIT; /* held until enqueued */
  aclError r = check2d(fn, dst, dpitch, src, spitch, width, height, kind, 1,
                       &pins);
  if (r)
    return r;
  struct copy2d *t = malloc(sizeof *t);
  if (!t) {
    acl__pins_drop(&pins);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *t = (struct copy2d){dst, src, dpitch, spitch, width, height};
  size_t dspan = (height - 1) * dpitch + width;
  size_t sspan = (height - 1) * spitch + width;
  bool plain = (kind == ACL_MEMCPY_HOST_TO_DEVICE && !acl__is_acl_memory(src, sspan)) ||
               (kind == ACL_MEMCPY_DEVICE_TO_HOST && !acl__is_acl_memory(dst, dspan));
  return enqueue_held(fn, stream, run_copy2d, t, plain, &pins);
}

/* ------------------------------------------------------------ MemsetD32 */

struct fill32 {
  uint32_t *p;
  uint32_t value;
  size_t n;
};

static void run_fill32(void *arg) {
  struct fill32 *t = arg;
  evrt_check_access(t->p, t->n * sizeof t->p[0], EVRT_CHECK_WRITE);
  for (size_t i = 0; i < t->n; i++)
    t->p[i] = t->value;
  free(t);
}

/* CANN's checks: N == 0 succeeds at once; ptr non-NULL and 4-byte aligned;
 * N * 4 <= memSize; the memory from aclrtMalloc or aclrtMallocHost (a
 * registered block of the layer); all 100000. */
static aclError check_d32(const char *fn, void *ptr, size_t memSize,
                          size_t n, struct acl__blk *b) {
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  if ((uintptr_t)ptr & 3u)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "ptr %p is not 4-byte aligned", ptr);
  if (n > SIZE_MAX / 4 || memSize < n * 4)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "N * 4 (N = %zu) is greater than memSize %zu", n,
                     memSize);
  if (!acl__mem_find(ptr, n * 4, b) ||
      (b->kind != ACL__MEM_DEVICE && b->kind != ACL__MEM_HOST))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p + %zu bytes is not memory of aclrtMalloc or "
                     "aclrtMallocHost",
                     ptr, n * 4);
  return ACL_SUCCESS;
}

aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N) {
  static const char fn[] = "aclrtMemsetD32";
  if (N == 0)
    return ACL_SUCCESS;
  struct acl__blk b;
  aclError r = check_d32(fn, ptr, memSize, N, &b);
  if (r)
    return r;
  uint32_t *p = ptr;
  for (size_t i = 0; i < N; i++)
    p[i] = value;
  return ACL_SUCCESS;
}

/* Device memory: a stream task.  Host memory (aclrtMallocHost): CANN
 * documents that the fill is not put on the stream and behaves as
 * aclrtMemsetD32, so it is done before the call returns. */
aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value,
                             size_t N, aclrtStream stream) {
  static const char fn[] = "aclrtMemsetD32Async";
  if (N == 0)
    return ACL_SUCCESS;
  struct acl__blk b;
  aclError r = check_d32(fn, ptr, memSize, N, &b);
  if (r)
    return r;
  if (b.kind == ACL__MEM_HOST) {
    evrt_stream_t h; /* the stream must still be valid */
    if ((r = acl__stream(fn, stream, &h)))
      return r;
    uint64_t id;
    evrt_status_t st = evrt_stream_get_id(h, &id);
    if (st)
      return acl__st(st, fn);
    return aclrtMemsetD32(ptr, memSize, value, N);
  }
  struct fill32 *t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *t = (struct fill32){ptr, value, N};
  return acl__enqueue_task(fn, stream, run_fill32, t, false);
}

/* ------------------------------------- copies through device addresses */

/* The base addresses are read from device memory when the task runs (the
 * "second-level pointer" of CANN's doc), so a stream may compute them. */
struct addr_copy {
  void *const *dst_slot;
  const void *const *src_slot;
  size_t dst_off, src_off, count;
};

/* The addresses a task read from device memory, checked when it runs as
 * aclrtMemcpy's device sides are (the blocks may be freed or unmapped since
 * the enqueue); the reserved ranges stay held for the copy.  False: copy
 * nothing. */
static bool run_sides_ok(const char *fn, uintptr_t d, uintptr_t s, size_t n,
                         struct acl__pins *pins) {
  if (!d || !s || d + n < d || s + n < s)
    return false;
  return !acl__mem_side(fn, ACL_ERROR_RT_PARAM_INVALID, "dst",
                        (void *)d, n, ACL__SIDE_WRITE | ACL__SIDE_DEVICE,
                        pins) &&
         !acl__mem_side(fn, ACL_ERROR_RT_PARAM_INVALID, "src",
                        (const void *)s, n, ACL__SIDE_DEVICE, pins);
}

static void run_addr_copy(void *arg) {
  struct addr_copy *t = arg;
  uintptr_t d = *(const uintptr_t *)t->dst_slot;
  uintptr_t s = *(const uintptr_t *)t->src_slot;
  struct acl__pins pins = ACL__PINS_INIT;
  /* base + offset, without wrapping (checked), as the copy's sides */
  if (d + t->dst_off >= d && s + t->src_off >= s &&
      run_sides_ok("aclrtMemcpyAsyncWithOffset", d + t->dst_off,
                   s + t->src_off, t->count, &pins))
    checked_move((void *)(d + t->dst_off), (const void *)(s + t->src_off),
                 t->count);
  acl__pins_drop(&pins);
  free(t);
}

aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax,
                                    size_t dstDataOffset, const void **src,
                                    size_t count, size_t srcDataOffset,
                                    aclrtMemcpyKind kind, aclrtStream stream) {
  static const char fn[] = "aclrtMemcpyAsyncWithOffset";
  if (count == 0)
    return ACL_SUCCESS;
  if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "kind %d: only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6)",
                     (int)kind);
  if (!dst || !src)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s is NULL",
                     dst ? "src" : "dst");
  if (count > destMax)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "count %zu exceeds destMax %zu", count, destMax);
  if (!acl__is_acl_memory(dst, sizeof(void *)) ||
      !acl__is_acl_memory(src, sizeof(void *)))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "dst and src must be device memory holding addresses");
  struct addr_copy *t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *t = (struct addr_copy){(void *const *)dst, (const void *const *)src,
                          dstDataOffset, srcDataOffset, count};
  return acl__enqueue_task(fn, stream, run_addr_copy, t, false);
}

/* A copy descriptor: device memory of ACL__MEMCPY_DESC_SIZE bytes that
 * aclrtSetMemcpyDesc fills and the copy task reads when it runs. */
#define DESC_MAGIC 0x6163636473657363ull /* "accdesc" */
struct desc {
  uint64_t magic;
  uint64_t src, dst, count;
};
#define ACL__MEMCPY_DESC_SIZE 64u

static aclError desc_kind(const char *fn, aclrtMemcpyKind kind) {
  if ((unsigned)kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "kind %d out of range",
                     (int)kind);
  if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                     "descriptors support ACL_MEMCPY_INNER_DEVICE_TO_DEVICE "
                     "only (kind %d)",
                     (int)kind);
  return ACL_SUCCESS;
}

aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize) {
  static const char fn[] = "aclrtGetMemcpyDescSize";
  if (!descSize)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "descSize is NULL");
  aclError r = desc_kind(fn, kind);
  if (r)
    return r;
  *descSize = ACL__MEMCPY_DESC_SIZE;
  return ACL_SUCCESS;
}

static aclError check_desc_mem(const char *fn, const void *desc) {
  if (!acl__is_acl_memory(desc, ACL__MEMCPY_DESC_SIZE))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "desc %p is not %u bytes of device memory", desc,
                     ACL__MEMCPY_DESC_SIZE);
  return ACL_SUCCESS;
}

aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr,
                            void *dstAddr, size_t count, void *config) {
  static const char fn[] = "aclrtSetMemcpyDesc";
  if (!desc)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "desc is NULL");
  aclError r = desc_kind(fn, kind);
  if (r)
    return r;
  if (!srcAddr || !dstAddr || count == 0 || config)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     !srcAddr  ? "srcAddr is NULL"
                     : !dstAddr ? "dstAddr is NULL"
                     : !count   ? "count is 0"
                                : "config is reserved and must be NULL");
  if ((r = check_desc_mem(fn, desc)))
    return r;
  /* the copy's sides, as aclrtMemcpy's device sides (checked again when
   * the copy runs) */
  if ((r = acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "dstAddr", dstAddr,
                         count, ACL__SIDE_WRITE | ACL__SIDE_DEVICE, NULL)) ||
      (r = acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "srcAddr", srcAddr,
                         count, ACL__SIDE_DEVICE, NULL)))
    return r;
  struct desc d = {DESC_MAGIC, (uintptr_t)srcAddr, (uintptr_t)dstAddr, count};
  memcpy(desc, &d, sizeof d);
  return ACL_SUCCESS;
}

static void run_desc_copy(void *arg) {
  const void *descp = *(const void **)arg;
  struct desc d;
  memcpy(&d, descp, sizeof d);
  struct acl__pins pins = ACL__PINS_INIT;
  if (d.magic == DESC_MAGIC && d.count <= SIZE_MAX &&
      run_sides_ok("aclrtMemcpyAsyncWithDesc", (uintptr_t)d.dst,
                   (uintptr_t)d.src, (size_t)d.count, &pins))
    checked_move((void *)(uintptr_t)d.dst, (const void *)(uintptr_t)d.src,
                 (size_t)d.count);
  acl__pins_drop(&pins);
  free(arg);
}

aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind,
                                  aclrtStream stream) {
  static const char fn[] = "aclrtMemcpyAsyncWithDesc";
  if (!desc)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "desc is NULL");
  aclError r = desc_kind(fn, kind);
  if (r)
    return r;
  if (!stream) /* CANN requires an explicit stream here */
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "stream is NULL");
  if ((r = check_desc_mem(fn, desc)))
    return r;
  void **t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *t = desc;
  return acl__enqueue_task(fn, stream, run_desc_copy, t, false);
}

/* ---------------------------------------------------------------- batch */

struct batch {
  size_t n;
  struct {
    void *dst;
    const void *src;
    size_t size;
  } item[];
};

static void run_batch(void *arg) {
  struct batch *b = arg;
  for (size_t i = 0; i < b->n; i++)
    if (b->item[i].size)
      checked_move(b->item[i].dst, b->item[i].src, b->item[i].size);
  free(b);
}

#define BATCH_MAX 4096u /* copies per batch */

/* Returns the direction of attribute k: +1 host -> device, -1 device ->
 * host, 0 neither. */
static int attr_dir(const aclrtMemcpyBatchAttr *a) {
  if (a->srcLoc.type == ACL_MEM_LOCATION_TYPE_HOST &&
      a->dstLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE)
    return 1;
  if (a->srcLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE &&
      a->dstLoc.type == ACL_MEM_LOCATION_TYPE_HOST)
    return -1;
  return 0;
}

/* All of CANN's checks, in its order (ACL layer: 100000; runtime: 107000).
 * On success *plain says whether a host side is plain memory. */
static aclError check_batch(const char *fn, void **dsts, size_t *destMaxs,
                            void **srcs, size_t *sizes, size_t n,
                            aclrtMemcpyBatchAttr *attrs, size_t *idx,
                            size_t numAttrs, size_t *failIndex, bool *plain,
                            struct acl__pins *pins) {
  if (failIndex)
    *failIndex = SIZE_MAX;
  if (!dsts || !destMaxs || !srcs || !attrs || !idx)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "dsts, destMaxs, srcs, attrs and attrsIndexes must not "
                     "be NULL");
  for (size_t i = 0; i < n; i++)
    if (destMaxs[i] < sizes[i])
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                       "size %zu at index %zu exceeds destMax %zu", sizes[i],
                       i, destMaxs[i]);
  for (size_t k = 0; k < numAttrs; k++)
    for (size_t j = 0; j < sizeof attrs[k].rsv; j++)
      if (attrs[k].rsv[j])
        return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                         "attrs[%zu].rsv must be zero", k);
  if (numAttrs == 0 || numAttrs > n || n > BATCH_MAX || idx[0] != 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "numAttrs %zu / numBatches %zu / attrsIndexes[0] %zu "
                     "out of range",
                     numAttrs, n, idx[0]);
  for (size_t k = 1; k < numAttrs; k++)
    if (idx[k] <= idx[k - 1] || idx[k] >= n)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "attrsIndexes[%zu] = %zu must grow and stay below %zu",
                       k, idx[k], n);
  int dir = 0;
  *plain = false;
  for (size_t k = 0; k < numAttrs; k++) {
    size_t first = idx[k], end = k + 1 < numAttrs ? idx[k + 1] : n;
    int d = attr_dir(&attrs[k]);
    if (!d || (dir && d != dir)) {
      if (failIndex)
        *failIndex = first;
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "copy %zu: a batch copies host to device or device "
                       "to host, one direction",
                       first);
    }
    dir = d;
    for (size_t i = first; i < end; i++) {
      if (!sizes[i])
        continue;
      void *dev = d > 0 ? dsts[i] : srcs[i];
      void *host = d > 0 ? srcs[i] : dsts[i];
      /* aclrtMemcpy's rules for each copy: the device side device memory
       * of the layer, the host side that or host memory of this process
       * (a stray or freed pointer: 107000 at its index, nothing copied) */
      unsigned wd = d > 0 ? ACL__SIDE_WRITE : 0u, wh = d > 0 ? 0u : ACL__SIDE_WRITE;
      aclError r = acl__mem_side(fn, ACL_ERROR_RT_PARAM_INVALID, "device side",
                                 dev, sizes[i], ACL__SIDE_DEVICE | wd, pins);
      if (!r)
        r = acl__mem_side(fn, ACL_ERROR_RT_PARAM_INVALID, "host side", host,
                          sizes[i], ACL__SIDE_HOST | wh, pins);
      if (r) {
        acl__pins_drop(pins);
        if (failIndex)
          *failIndex = i;
        return r;
      }
      if (!acl__is_acl_memory(host, sizes[i]))
        *plain = true;
    }
  }
  return ACL_SUCCESS;
}

static aclError batch(const char *fn, void **dsts, size_t *destMaxs,
                      void **srcs, size_t *sizes, size_t n,
                      aclrtMemcpyBatchAttr *attrs, size_t *idx,
                      size_t numAttrs, size_t *failIndex, bool async,
                      aclrtStream stream) {
  if (!sizes || n == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     sizes ? "numBatches is 0" : "sizes is NULL");
  bool empty = true;
  for (size_t i = 0; i < n && empty; i++)
    empty = sizes[i] == 0;
  if (empty) { /* CANN: nothing to copy, nothing checked */
    if (failIndex)
      *failIndex = SIZE_MAX;
    return ACL_SUCCESS;
  }
  bool plain = false;
  struct acl__pins pins = ACL__PINS_INIT; /* held until copied or enqueued */
  aclError r = check_batch(fn, dsts, destMaxs, srcs, sizes, n, attrs, idx,
                           numAttrs, failIndex, &plain, &pins);
  if (r)
    return r;
  if (!async) {
    for (size_t i = 0; i < n; i++)
      if (sizes[i])
        checked_move(dsts[i], srcs[i], sizes[i]);
    acl__pins_drop(&pins);
    return ACL_SUCCESS;
  }
  struct batch *b = malloc(sizeof *b + n * sizeof b->item[0]);
  if (!b) {
    acl__pins_drop(&pins);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  b->n = n;
  for (size_t i = 0; i < n; i++) {
    b->item[i].dst = dsts[i];
    b->item[i].src = srcs[i];
    b->item[i].size = sizes[i];
  }
  return enqueue_held(fn, stream, run_batch, b, plain, &pins);
}

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs,
                          size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                          size_t numAttrs, size_t *failIndex) {
  if (!failIndex)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatch",
                     "failIndex is NULL");
  return batch("aclrtMemcpyBatch", dsts, destMaxs, srcs, sizes, numBatches,
               attrs, attrsIndexes, numAttrs, failIndex, false, NULL);
}

aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs,
                            size_t *sizes, size_t numBatches,
                            aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                            size_t numAttrs) {
  return batch("aclrtMemcpyBatchV2", dsts, destMaxs, srcs, sizes, numBatches,
               attrs, attrsIndexes, numAttrs, NULL, false, NULL);
}

aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs,
                               size_t *sizes, size_t numBatches,
                               aclrtMemcpyBatchAttr *attrs,
                               size_t *attrsIndexes, size_t numAttrs,
                               size_t *failIndex, aclrtStream stream) {
  if (!failIndex)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatchAsync",
                     "failIndex is NULL");
  return batch("aclrtMemcpyBatchAsync", dsts, destMaxs, srcs, sizes,
               numBatches, attrs, attrsIndexes, numAttrs, failIndex, true,
               stream);
}

aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs,
                                 size_t *sizes, size_t numBatches,
                                 aclrtMemcpyBatchAttr *attrs,
                                 size_t *attrsIndexes, size_t numAttrs,
                                 aclrtStream stream) {
  return batch("aclrtMemcpyBatchAsyncV2", dsts, destMaxs, srcs, sizes,
               numBatches, attrs, attrsIndexes, numAttrs, NULL, true, stream);
}
