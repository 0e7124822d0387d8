/*
 * acl_memory.c - aclrtMalloc/aclrtMallocHost/aclrtFree/aclrtFreeHost and the
 * copy and set calls.  "Device" memory is host memory here.  Every block is
 * kept in a registry (a tree of address ranges under its own mutex) so that
 * aclrtFree rejects pointers it did not hand out, the copy and set calls
 * refuse device pointers the layer never handed out (ACL's invalid-parameter
 * error instead of a crash: issue 13 item 2), and aclrtMemcpyAsync can tell
 * pinned host memory (from aclrtMallocHost: the copy is asynchronous) from
 * plain host memory (the call returns only after the copy is done, as the
 * ACL doc says).
 *
 * Device blocks of a page or more are evrt interprocess memory
 * (evrt_ipc_mem_alloc), so that aclrtIpcMemGetExportKey can share them
 * (acl_ipcmem.c); smaller ones, and every block when no shareable memory
 * can be had, come from the heap.
 *
 * Freeing (issue 13 item 12).  CANN documents that aclrtFree releases at
 * once, with no device or stream synchronization and without waiting for
 * the tasks that use the block: the program must not touch it afterwards.
 * Here the pointer is invalid for the layer at once (a second free, a copy
 * or a set on it fail; EVRT_CHECK reports later accesses), but the memory
 * itself is released only when every stream has passed what was enqueued
 * before the free (evrt_device_launch_host_func): a copy or kernel queued
 * before the free reads or writes memory that is still mapped, as it would
 * on the device.
 *
 * Checking a side of a copy or fill (acl__mem_side, issue 13 item 2 and
 * issue 23 items 2, 3 and 8): one rule for every copy and fill call, the
 * 2-D, batch and run-time-addressed ones included.  A range inside a block
 * must fit the block; in a reserved virtual range it must lie in mapped
 * pages with the access the call needs (acl_vmm.c, which holds them mapped
 * while the call copies or enqueues); outside every block it is host memory
 * where the call takes host memory, unless it touches one of the last
 * GRAVES blocks freed whose memory the layer still holds (a use after free:
 * the process still maps the bytes; release_blk holds the last HELD of them
 * a little longer, and a grave ends when the heap gets the memory back).
 */
#include "acl_internal.h"

#include <search.h>
#include <stdlib.h>
#include <string.h>

static void *tree;
static ACL__MUTEX(mem_lock)

/* Ranges compare equal when they overlap, so a one-byte key finds the block
 * holding an interior pointer. */
static int cmp(const void *a, const void *b) {
  const struct acl__blk *x = a, *y = b;
  if (x->start + (x->size ? x->size : 1) <= y->start)
    return -1;
  if (y->start + (y->size ? y->size : 1) <= x->start)
    return 1;
  return 0;
}

/* The registered block containing [p, p+n), or NULL. Copies it out. */
static bool find(const void *p, size_t n, struct acl__blk *out) {
  struct acl__blk key = {.start = (uintptr_t)p, .size = 1};
  pthread_mutex_lock(&mem_lock);
  struct acl__blk **hit = tfind(&key, &tree, cmp);
  /* p is in the block: n must fit in what is left of it (no overflow) */
  bool ok = hit && (uintptr_t)p >= (*hit)->start &&
            n <= (*hit)->size - ((uintptr_t)p - (*hit)->start);
  if (ok)
    *out = **hit;
  pthread_mutex_unlock(&mem_lock);
  return ok;
}

bool acl__mem_find(const void *p, size_t n, struct acl__blk *out) {
  return find(p, n, out);
}

/* The device of new "device" blocks: the current context's, else 0. */
static int alloc_device(void) {
  struct acl__ctx *c = acl__current_quiet();
  return c ? c->device : 0;
}

int acl__mem_track(void *p, size_t size, unsigned kind, int device) {
  return acl__mem_track_shared(p, size, kind, device, false);
}

int acl__mem_track_shared(void *p, size_t size, unsigned kind, int device,
                          bool shared) {
  struct acl__blk *b = malloc(sizeof *b);
  if (!b)
    return -1;
  *b = (struct acl__blk){.start = (uintptr_t)p,
                         .size = size,
                         .kind = (uint8_t)kind,
                         .device = device,
                         .shared = shared};
  pthread_mutex_lock(&mem_lock);
  struct acl__blk key = {.start = (uintptr_t)p, .size = size ? size : 1};
  bool clash = tfind(&key, &tree, cmp) != NULL;
  void *ins = clash ? NULL : tsearch(b, &tree, cmp);
  pthread_mutex_unlock(&mem_lock);
  if (!ins) {
    free(b);
    return clash ? 1 : -1;
  }
  return 0;
}

int acl__mem_untrack(const void *p, unsigned kind, struct acl__blk *out) {
  struct acl__blk key = {.start = (uintptr_t)p, .size = 1};
  pthread_mutex_lock(&mem_lock);
  struct acl__blk **hit = tfind(&key, &tree, cmp);
  struct acl__blk *b = hit ? *hit : NULL;
  bool ok = b && b->start == (uintptr_t)p && b->kind == kind;
  if (ok)
    tdelete(&key, &tree, cmp);
  pthread_mutex_unlock(&mem_lock);
  if (!ok)
    return -1;
  if (out)
    *out = *b;
  free(b);
  return 0;
}

/* Blocks aclrtFree / aclrtFreeHost released whose memory is not given back
 * yet (their release waits for queued work, or EVRT_CHECK's quarantine): an
 * access there is a use after free (on a device the address is gone), not
 * host memory, though the process still maps the bytes (so that the
 * host-memory rule would take them).  A grave ends when release_blk gives
 * the memory back: from then on the heap may hand the address to the
 * program (a Python buffer), which is host memory like any other.  At most
 * GRAVES at a time (the oldest is forgotten).  A range matters only while
 * no block of the layer holds the pointer (find first).  Under mem_lock. */
#define GRAVES 64
static struct {
  uintptr_t start;
  size_t size;
} graves[GRAVES];
static unsigned grave_next;

static void bury(const struct acl__blk *b) {
  pthread_mutex_lock(&mem_lock);
  graves[grave_next % GRAVES].start = b->start;
  graves[grave_next % GRAVES].size = b->size;
  grave_next++;
  pthread_mutex_unlock(&mem_lock);
}

/* The memory at start is given back: its grave ends. */
static void unbury(uintptr_t start) {
  pthread_mutex_lock(&mem_lock);
  for (unsigned i = 0; i < GRAVES; i++)
    if (graves[i].size && graves[i].start == start)
      graves[i].size = 0;
  pthread_mutex_unlock(&mem_lock);
}

/* [p, p+n) (p when n is 0) overlaps a freed block not given back yet. */
static bool freed_recently(const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p, e = a + (n ? n : 1);
  bool hit = false;
  pthread_mutex_lock(&mem_lock);
  for (unsigned i = 0; i < GRAVES && !hit; i++)
    hit = graves[i].size && a < graves[i].start + graves[i].size &&
          graves[i].start < e;
  pthread_mutex_unlock(&mem_lock);
  return hit;
}

bool acl__mem_usable(const void *p, size_t n, bool write) {
  struct acl__blk b;
  if (!find(p, n ? n : 1, &b))
    return false;
  return b.kind != ACL__MEM_VIRTUAL || acl__vmm_mapped(p, n, write, NULL);
}

void acl__pins_drop(struct acl__pins *pins) {
  if (!pins)
    return;
  for (int i = 0; i < pins->n; i++)
    acl__vmm_unpin(pins->r[i]);
  pins->n = 0;
}

/* Hold the reserved range of [p, p+n) in pins (one entry per range: a
 * second hold of one range is let go at once, the first still holds it). */
static bool pin_side(const void *p, size_t n, bool write,
                     struct acl__pins *pins) {
  if (!pins)
    return acl__vmm_mapped(p, n, write, NULL);
  void *pin;
  if (!acl__vmm_mapped(p, n, write, &pin))
    return false;
  for (int i = 0; i < pins->n; i++)
    if (pins->r[i] == pin) {
      acl__vmm_unpin(pin);
      return true;
    }
  if (pins->n == (int)(sizeof pins->r / sizeof pins->r[0])) {
    acl__vmm_unpin(pin);
    return false; /* more reserved ranges than one call can hold */
  }
  pins->r[pins->n++] = pin;
  return true;
}

aclError acl__mem_side(const char *fn, aclError code, const char *what,
                       const void *p, size_t n, unsigned how,
                       struct acl__pins *pins) {
  bool write = (how & ACL__SIDE_WRITE) != 0;
  const char *acc = write ? "writable" : "readable";
  struct acl__blk b;
  if (!p)
    return acl__fail(code, fn, "%s is NULL", what);
  if (find(p, n, &b)) {
    if ((how & ACL__SIDE_DEVICE) && b.kind == ACL__MEM_HOST)
      return acl__fail(code, fn,
                       "%s %p is host memory from aclrtMallocHost; the copy "
                       "kind names device memory there",
                       what, p);
    if (b.kind == ACL__MEM_VIRTUAL && !pin_side(p, n, write, pins))
      return acl__fail(code, fn,
                       "%s %p (%zu bytes) is in a reserved address range "
                       "but not all in pages mapped %s (aclrtMapMem, "
                       "aclrtMemSetAccess)",
                       what, p, n, acc);
    return ACL_SUCCESS;
  }
  if (find(p, 1, &b))
    return acl__fail(code, fn, "%s %p: %zu bytes run past the end of its block",
                     what, p, n);
  if (!(how & ACL__SIDE_HOST))
    return acl__fail(code, fn,
                     "%s %p (%zu bytes) is not device memory of the layer "
                     "(aclrtMalloc, a mapped reserved range, imported memory)",
                     what, p, n);
  if (freed_recently(p, n))
    return acl__fail(code, fn,
                     "%s %p (%zu bytes) is in a block that aclrtFree or "
                     "aclrtFreeHost released",
                     what, p, n);
  if (!acl__host_range_ok(p, n, write))
    return acl__fail(code, fn, "%s %p (%zu bytes) is not %s memory of this "
                     "process", what, p, n, acc);
  return ACL_SUCCESS;
}

/* pad: aclrtMalloc's 32 extra bytes (aclrtMallocAlign32 has none). */
aclError acl__mem_alloc(const char *fn, void **ptr, size_t size,
                        unsigned kind, bool pad) {
  return acl__mem_alloc_on(fn, ptr, size, kind, pad, ACL__DEVICE_CURRENT);
}

aclError acl__mem_alloc_on(const char *fn, void **ptr, size_t size,
                           unsigned kind, bool pad, int device) {
  ACL__ENTER(fn);
  bool host = kind == ACL__MEM_HOST;
  if (device == ACL__DEVICE_CURRENT)
    device = host ? -1 : alloc_device();
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pointer is NULL");
  if (size == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (size > SIZE_MAX / 2)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                          "size %zu is too large", size);
  /* The doc: size rounded up to 32 bytes plus 32, start 64-byte aligned. */
  size_t real = ((size + 31) & ~(size_t)31) + (pad ? 32 : 0);
  real = (real + 63) & ~(size_t)63; /* aligned_alloc wants a multiple */
  void *p = NULL;
  bool shared = kind == ACL__MEM_DEVICE && size >= 4096 &&
                evrt_ipc_mem_alloc(real, &p) == EVRT_SUCCESS;
  if (!shared)
    p = aligned_alloc(64, real);
  if (!p)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                          "cannot allocate %zu bytes", size);
  if (acl__mem_track_shared(p, real, kind, device, shared)) {
    if (shared)
      evrt_ipc_mem_free(p);
    else
      free(p);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  evrt_check_alloc(p, real); /* EVRT_CHECK: a new block */
  *ptr = p;
  return ACL_SUCCESS;
}

static void give_back(struct acl__blk *b) {
  /* before the memory goes: a buffer the heap puts there next is the
   * program's, not a freed block (the grave must not outlive the block) */
  unbury(b->start);
  if (b->shared)
    evrt_ipc_mem_free((void *)b->start);
  else
    free((void *)b->start);
  free(b);
}

/* Released blocks are held a little longer before the heap gets them back
 * (the last HELD of them, HELD_BYTES at most), so that a copy or set on a
 * block just freed still finds its grave (100000) instead of the heap's
 * next user of the address.  The oldest goes first; a block larger than
 * HELD_BYTES goes at once.  Under held_lock (never with mem_lock held: the
 * give-back takes it). */
#define HELD 64
#define HELD_BYTES (64u << 20)
static ACL__MUTEX(held_lock)
static struct acl__blk *held[HELD];
static unsigned held_n, held_head;
static size_t held_bytes;

/* Runs once every stream has passed what was enqueued before the free. */
static void release_blk(void *arg) {
  struct acl__blk *b = arg, *out[HELD + 1];
  unsigned nout = 0;
  pthread_mutex_lock(&held_lock);
  if (b->size > HELD_BYTES) {
    out[nout++] = b;
  } else {
    while (held_n && (held_n == HELD || held_bytes + b->size > HELD_BYTES)) {
      struct acl__blk *o = held[held_head];
      held_head = (held_head + 1) % HELD;
      held_n--;
      held_bytes -= o->size;
      out[nout++] = o;
    }
    held[(held_head + held_n) % HELD] = b;
    held_n++;
    held_bytes += b->size;
  }
  pthread_mutex_unlock(&held_lock);
  for (unsigned i = 0; i < nout; i++) /* (no system call under the lock) */
    give_back(out[i]);
}

/* Blocks freed for the program whose memory EVRT_CHECK's quarantine still
 * holds (with the checker off, only for the time of the call), under
 * mem_lock.  The checker calls release_later when a block leaves its
 * quarantine and forgets its shadow then: without it, memory the heap
 * reuses for anything the checker does not track (a Python buffer) would be
 * reported as used after the free. */
static struct acl__blk *freed;

static void release_later(void *p) {
  pthread_mutex_lock(&mem_lock);
  struct acl__blk **pp = &freed, *b = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)p) {
      b = *pp;
      *pp = b->next;
      break;
    }
  pthread_mutex_unlock(&mem_lock);
  if (!b)
    return; /* not ours: cannot happen */
  if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, release_blk, b) !=
      EVRT_SUCCESS)
    release_blk(b); /* no memory to defer: release now (as CANN does) */
}

static aclError release(const char *fn, void *p, bool host) {
  ACL__ENTER(fn);
  if (!p)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pointer is NULL");
  struct acl__blk *b = malloc(sizeof *b);
  if (!b)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  if (acl__mem_untrack(p, host ? ACL__MEM_HOST : ACL__MEM_DEVICE, b)) {
    /* aclrtFree also frees aclrtMemAllocManaged memory */
    if (host || acl__mem_untrack(p, ACL__MEM_MANAGED, b)) {
      free(b);
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                            "%p was not returned by %s (or was freed already)",
                            p, host ? "aclrtMallocHost" : "aclrtMalloc");
    }
    acl__managed_forget(p);
  }
  bury(b);
  pthread_mutex_lock(&mem_lock);
  b->next = freed;
  freed = b;
  pthread_mutex_unlock(&mem_lock);
  /* Freed for the program (and EVRT_CHECK) now; the memory itself when
   * the checker's quarantine lets it go (at once with the checker off) and
   * the tasks enqueued before this call can no longer touch it (top of
   * file). */
  if (evrt_check_free(p, b->size, release_later) != EVRT_SUCCESS)
    release_later(p);
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  static const char fn[] = "aclrtMalloc";
  unsigned base = (unsigned)policy & 0xFFu;
  unsigned mods = (unsigned)policy & ~0xFFu;
  const unsigned allowed = ACL_MEM_TYPE_LOW_BAND_WIDTH |
                           ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                           ACL_MEM_ACCESS_USER_SPACE_READONLY;
  if (base > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P || (mods & ~allowed))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown policy 0x%x",
                          (unsigned)policy);
  return acl__mem_alloc(fn, devPtr, size, ACL__MEM_DEVICE, true);
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
  return acl__mem_alloc("aclrtMallocHost", hostPtr, size, ACL__MEM_HOST, true);
}

aclError aclrtFree(void *devPtr) { return release("aclrtFree", devPtr, false); }

aclError aclrtFreeHost(void *hostPtr) {
  return release("aclrtFreeHost", hostPtr, true);
}

/* aclrtMemcpy's rules (also aclrtMemcpyAsync's): the side(s) the kind
 * names device memory must be memory of the layer that is not
 * aclrtMallocHost's, for the whole count; a host side (the others; both for
 * DEFAULT) may also be host memory outside every block, readable (source)
 * or writable (destination) over the whole count (acl__mem_side).  Reserved
 * ranges met are held in pins; on an error nothing is held. */
static aclError copy_checks(const char *fn, void *dst, size_t destMax,
                            const void *src, size_t count, int kind,
                            struct acl__pins *pins) {
  if (!dst || !src)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                          dst ? "src" : "dst");
  if (count > destMax)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                          "count %zu is larger than destMax %zu", count,
                          destMax);
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown kind %d", kind);
  bool dev_dst = kind == ACL_MEMCPY_HOST_TO_DEVICE ||
                 kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE ||
                 kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                 kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE ||
                 kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
  bool dev_src = kind == ACL_MEMCPY_DEVICE_TO_HOST ||
                 kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                 kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE ||
                 kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE;
  aclError r = acl__mem_side(
      fn, ACL_ERROR_INVALID_PARAM, "dst", dst, count,
      ACL__SIDE_WRITE | (dev_dst ? ACL__SIDE_DEVICE : ACL__SIDE_HOST), pins);
  if (!r)
    r = acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "src", src, count,
                      dev_src ? ACL__SIDE_DEVICE : ACL__SIDE_HOST, pins);
  if (r)
    acl__pins_drop(pins);
  return r;
}

/* aclrtMemset's pointer: memory the layer knows, for count bytes, or (when
 * host_ok: the synchronous call) writable host memory outside every block
 * (CANN sets host memory too: the memory/12 sample clears a stack
 * structure). */
static aclError set_checks(const char *fn, void *p, size_t max, size_t count,
                           bool host_ok, struct acl__pins *pins) {
  if (!p)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devPtr is NULL");
  if (count > max)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "count %zu is larger than maxCount %zu", count, max);
  return acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "devPtr", p, count,
                       ACL__SIDE_WRITE | (host_ok ? ACL__SIDE_HOST : 0u),
                       pins);
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
  struct acl__pins pins = ACL__PINS_INIT; /* reserved ranges, held mapped */
  aclError r = copy_checks("aclrtMemcpy", dst, destMax, src, count,
                           (int)kind, &pins);
  if (r)
    return r;
  r = acl__mdl_unsafe("aclrtMemcpy", ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  if (!r) {
    evrt_check_access(src, count, EVRT_CHECK_READ); /* EVRT_CHECK */
    evrt_check_access(dst, count, EVRT_CHECK_WRITE);
    /* At once, with no implicit synchronization (CANN's doc): work queued
     * on the blocks still runs after (docs/acl.md). */
    if (count) {
      memmove(dst, src, count);
      evrt_value_notify(dst, count); /* aclrtValueWait on these bytes */
    }
  }
  acl__pins_drop(&pins);
  return r;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                          size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  static const char fn[] = "aclrtMemcpyAsync";
  /* reserved ranges held mapped until the copy is enqueued (acl_vmm.c) */
  struct acl__pins pins = ACL__PINS_INIT;
  aclError r = copy_checks(fn, dst, destMax, src, count, (int)kind, &pins);
  if (r)
    return r;
  if (kind == ACL_MEMCPY_HOST_TO_HOST) {
    acl__pins_drop(&pins);
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "host-to-host copies are not asynchronous: use "
                          "aclrtMemcpy");
  }
  evrt_stream_t h;
  if ((r = acl__stream(fn, stream, &h))) {
    acl__pins_drop(&pins);
    return r;
  }
  /* The host side of the copy: plain (not ACL-allocated) host memory makes
   * the call return only after the copy completes. */
  struct acl__blk b;
  bool sync = false;
  if (kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
    sync = !find(src, count, &b);
  else if (kind == ACL_MEMCPY_DEVICE_TO_HOST)
    sync = !find(dst, count, &b);
  else if (kind == ACL_MEMCPY_DEFAULT)
    sync = !find(src, count, &b) || !find(dst, count, &b);
  /* A blocking copy is potentially unsafe during a capture; allowed, it is
   * captured without the synchronize (acl_mdl.c). */
  if (sync && (r = acl__mdl_blocking_copy(fn, h, &sync))) {
    acl__pins_drop(&pins);
    return r;
  }
  evrt_status_t st = evrt_memcpy_async(h, dst, src, count);
  acl__pins_drop(&pins); /* enqueued: an unmap now waits for it */
  if (st == EVRT_SUCCESS && sync)
    st = evrt_stream_synchronize(h);
  return acl__st(st, fn);
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
                     size_t count) {
  static const char fn[] = "aclrtMemset";
  struct acl__pins pins = ACL__PINS_INIT;
  aclError r = set_checks(fn, devPtr, maxCount, count, true, &pins);
  if (r)
    return r;
  r = acl__mdl_unsafe(fn, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  if (!r) {
    evrt_check_access(devPtr, count, EVRT_CHECK_WRITE); /* EVRT_CHECK */
    memset(devPtr, value, count);
    evrt_value_notify(devPtr, count); /* aclrtValueWait on these bytes */
  }
  acl__pins_drop(&pins);
  return r;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                          size_t count, aclrtStream stream) {
  static const char fn[] = "aclrtMemsetAsync";
  struct acl__pins pins = ACL__PINS_INIT; /* held until enqueued */
  aclError r = set_checks(fn, devPtr, maxCount, count, false, &pins);
  if (r)
    return r;
  evrt_stream_t h;
  r = acl__stream(fn, stream, &h);
  if (!r)
    r = acl__st(evrt_memset_async(h, devPtr, value, count), fn);
  acl__pins_drop(&pins);
  return r;
}

/* ------------------------------------------------- acl_base.h variants */

/* As aclrtMalloc without the 32 extra bytes: the size is only rounded up to
 * a multiple of 32 (A2/A3 rule of the doc).  A policy outside the enum is
 * not an error (the doc: it picks huge or normal pages by size). */
aclError aclrtMallocAlign32(void **devPtr, size_t size,
                            aclrtMemMallocPolicy policy) {
  (void)policy;
  return acl__mem_alloc("aclrtMallocAlign32", devPtr, size, ACL__MEM_DEVICE,
                        false);
}
