/*
 * acl_mempool.c - stream-ordered memory pools (acl/acl_rt_memory_soma.h):
 * aclrtMemPoolCreate/Destroy/SetAttr/GetAttr/MallocAsync/FreeAsync/TrimTo.
 *
 * A pool hands out blocks of host memory (device memory here), each in one
 * of three states (diagram):
 *
 *     MallocAsync            FreeAsync              the free task runs
 *   -------------> USED ---------------> PENDING ---------------------> FREE
 *                   ^                       |                          |
 *                   +-- MallocAsync on the -+                          |
 *                   |   freeing stream (stream order makes it safe)    |
 *                   +----------------- MallocAsync on any stream -------+
 *
 * A FreeAsync enqueues a host function on its stream; when it runs, every
 * earlier task of that stream is done with the block, so the block becomes
 * FREE and any stream may take it (CANN's "reuse" rules: within a stream,
 * and across streams once the free has executed).  A malloc takes the free
 * block whose size is the closest above the request (CANN's rule), else
 * allocates a new one within maxSize.  A free task also releases free
 * memory above the pool's release threshold (CANN releases it at the next
 * stream synchronize: here it is released when the free executes).
 *
 * EVRT_CHECK (docs/check.md, "What is tracked"): a block's life starts
 * where the malloc puts it in its stream's order and ends at the free task,
 * in its stream's order.  A new block, or a FREE one (its free has run),
 * starts its life at the MallocAsync call (evrt_check_alloc: the work the
 * program enqueues after it follows it).  The free task frees the block
 * (evrt_check_free from the task: work of other streams not ordered before
 * the task is a use after free).  A PENDING block handed again on its
 * freeing stream starts its new life in that same free task, right after
 * the free (the new life's work comes after the task on that stream), so
 * that the old life's work still queued before the free is not taken for
 * the new life's.  The checker's calls on a block are made under pool_lock,
 * so that it sees a block's lives in the order the pool made them.  A
 * released block's memory goes back to the heap through the checker's
 * quarantine (pool_flush), as aclrtFree's does.
 *
 * Lock: pool_lock (a mutex) guards every pool and block; it is taken by the
 * free tasks on worker threads for a short, non-blocking section.  Lock
 * order: pool_lock -> the block registry's lock; pool_lock -> the checker's
 * shadow and report locks (evrt_check_alloc, and evrt_check_free without a
 * release function: neither calls back into the layer).
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MAGIC 0x706f6f6cu /* "pool" */

enum { BLK_USED, BLK_PENDING, BLK_FREE };

struct pblock {
  void *p;
  size_t size;
  int state;
  uint64_t gen;     /* bumped by every malloc: a stale free task no-ops */
  uint64_t stream;  /* evrt stream id of the last malloc or free */
  struct pool *pool;
  struct pblock *next;
};

struct pool {
  uint32_t magic;
  bool destroyed;
  aclrtMemPoolProps props;
  uint32_t reuse[3]; /* FOLLOW_EVENT_DEPENDENCIES, OPPORTUNISTIC, INTERNAL */
  uint64_t threshold;
  uint64_t reserved, reserved_high, used, used_high;
  struct pblock *blocks;
  struct pool *next;
};

static ACL__MUTEX(pool_lock)
static struct pool *pools;
static struct acl__map *by_ptr; /* block start -> struct pblock */

static bool pool_live_locked(const struct pool *p) {
  for (struct pool *x = pools; x; x = x->next)
    if (x == p && !x->destroyed)
      return true;
  return false;
}

/* Released blocks whose memory is to go back to the heap (pool_lock). */
struct gone {
  void *p;
  size_t size;
  struct gone *next;
};
static struct gone *gone_list;

static void block_release_locked(struct pool *pl, struct pblock *b) {
  for (struct pblock **pp = &pl->blocks; *pp; pp = &(*pp)->next)
    if (*pp == b) {
      *pp = b->next;
      break;
    }
  acl__map_del(&by_ptr, (uint64_t)(uintptr_t)b->p);
  acl__mem_untrack(b->p, ACL__MEM_POOL, NULL);
  struct gone *g = malloc(sizeof *g);
  if (g) {
    *g = (struct gone){b->p, b->size, gone_list};
    gone_list = g;
  } else {
    free(b->p); /* (its shadow stays: stale) */
  }
  pl->reserved -= b->size;
  free(b);
}

/* After pool_lock is released: the released blocks' memory goes back to
 * the heap once EVRT_CHECK's quarantine lets it go (at once with the
 * checker off), so that work still queued on a block is reported instead
 * of touching reused memory, and the heap does not reuse the addresses
 * while the checker holds their freed shadow.  Called without pool_lock:
 * the quarantine may release other blocks, whose release functions take
 * the layer's other locks. */
static void pool_flush(void) {
  pthread_mutex_lock(&pool_lock);
  struct gone *g = gone_list;
  gone_list = NULL;
  pthread_mutex_unlock(&pool_lock);
  while (g) {
    struct gone *next = g->next;
    if (evrt_check_free(g->p, g->size, free) != EVRT_SUCCESS)
      free(g->p);
    free(g);
    g = next;
  }
}

/* Release free blocks until at most `keep` bytes stay reserved. */
static void trim_locked(struct pool *pl, uint64_t keep) {
  struct pblock *b = pl->blocks, *next;
  for (; b && pl->reserved > keep; b = next) {
    next = b->next;
    if (b->state == BLK_FREE)
      block_release_locked(pl, b);
  }
}

/* A destroyed pool goes once its last block is back. */
static void maybe_drop_pool_locked(struct pool *pl) {
  if (!pl->destroyed)
    return;
  trim_locked(pl, 0);
  if (pl->blocks)
    return;
  for (struct pool **pp = &pools; *pp; pp = &(*pp)->next)
    if (*pp == pl) {
      *pp = pl->next;
      break;
    }
  pl->magic = 0;
  free(pl);
}

aclError aclrtMemPoolCreate(aclrtMemPool *memPool,
                            const aclrtMemPoolProps *poolProps) {
  static const char fn[] = "aclrtMemPoolCreate";
  if (!memPool || !poolProps)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     memPool ? "poolProps" : "memPool");
  if (poolProps->allocType != ACL_MEM_ALLOCATION_TYPE_PINNED ||
      poolProps->location.type != ACL_MEM_LOCATION_TYPE_DEVICE ||
      (poolProps->handleType != ACL_MEM_HANDLE_TYPE_NONE &&
       poolProps->handleType != ACL_MEM_HANDLE_TYPE_POSIX))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "a pool is pinned device memory (allocType %d, "
                     "location type %d, handle type %d)",
                     (int)poolProps->allocType, (int)poolProps->location.type,
                     (int)poolProps->handleType);
  for (size_t i = 0; i < sizeof poolProps->reserved; i++)
    if (poolProps->reserved[i])
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                       "poolProps->reserved must be all zero");
  if (!acl__device_ok(poolProps->location.id))
    return acl__bad_device(fn, poolProps->location.id,
                           ACL_ERROR_RT_INVALID_DEVICEID);
  struct pool *pl = calloc(1, sizeof *pl);
  if (!pl)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  pl->magic = POOL_MAGIC;
  pl->props = *poolProps;
  pl->reuse[0] = pl->reuse[1] = pl->reuse[2] = 1;
  pthread_mutex_lock(&pool_lock);
  pl->next = pools;
  pools = pl;
  pthread_mutex_unlock(&pool_lock);
  *memPool = pl;
  return ACL_SUCCESS;
}

aclError aclrtMemPoolDestroy(const aclrtMemPool memPool) {
  static const char fn[] = "aclrtMemPoolDestroy";
  if (!memPool)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "memPool is NULL");
  pthread_mutex_lock(&pool_lock);
  struct pool *pl = memPool;
  bool ok = pool_live_locked(pl);
  if (ok) {
    pl->destroyed = true; /* the handle is invalid from now on */
    maybe_drop_pool_locked(pl);
  }
  pthread_mutex_unlock(&pool_lock);
  pool_flush();
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a live memory pool", memPool);
  return ACL_SUCCESS;
}

aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr,
                             void *value) {
  static const char fn[] = "aclrtMemPoolSetAttr";
  if (!memPool || !value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     memPool ? "value" : "memPool");
  pthread_mutex_lock(&pool_lock);
  struct pool *pl = memPool;
  const char *why = NULL;
  if (!pool_live_locked(pl)) {
    why = "not a live memory pool";
  } else {
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
      uint32_t v = *(const uint32_t *)value;
      if (v > 1)
        why = "a reuse switch is 0 or 1";
      else
        pl->reuse[attr - ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES] = v;
      break;
    }
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
      pl->threshold = *(const uint64_t *)value;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
      if (*(const uint64_t *)value != 0)
        why = "a high-water mark can only be reset to 0";
      else if (attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH)
        pl->reserved_high = pl->reserved;
      else
        pl->used_high = pl->used;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
      why = "the current sizes are read-only";
      break;
    default:
      why = "unknown attribute";
    }
  }
  pthread_mutex_unlock(&pool_lock);
  if (why)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s (attr %d)", why,
                     (int)attr);
  return ACL_SUCCESS;
}

aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr,
                             void *value) {
  static const char fn[] = "aclrtMemPoolGetAttr";
  if (!memPool || !value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     memPool ? "value" : "memPool");
  pthread_mutex_lock(&pool_lock);
  struct pool *pl = memPool;
  const char *why = NULL;
  if (!pool_live_locked(pl)) {
    why = "not a live memory pool";
  } else {
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *(uint32_t *)value =
          pl->reuse[attr - ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES];
      break;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
      *(uint64_t *)value = pl->threshold;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
      *(uint64_t *)value = pl->reserved;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
      *(uint64_t *)value = pl->reserved_high;
      break;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
      *(uint64_t *)value = pl->used;
      break;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
      *(uint64_t *)value = pl->used_high;
      break;
    default:
      why = "unknown attribute";
    }
  }
  pthread_mutex_unlock(&pool_lock);
  if (why)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s (attr %d)", why,
                     (int)attr);
  return ACL_SUCCESS;
}

/* The evrt stream id of an ACL stream (NULL: the current default). */
static aclError stream_id(const char *fn, aclrtStream stream, uint64_t *id) {
  evrt_stream_t h;
  aclError r = acl__stream(fn, stream, &h);
  if (r)
    return r;
  evrt_status_t st = evrt_stream_get_id(h, id);
  return st ? acl__st(st, fn) : ACL_SUCCESS;
}

static void note_use_locked(struct pool *pl, size_t size) {
  pl->used += size;
  if (pl->used > pl->used_high)
    pl->used_high = pl->used;
}

aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool,
                                 aclrtStream stream) {
  static const char fn[] = "aclrtMemPoolMallocAsync";
  if (!ptr || !memPool)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     ptr ? "memPool" : "ptr");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  uint64_t sid;
  aclError r = stream_id(fn, stream, &sid);
  if (r)
    return r;
  size_t real = (size + 511) / 512 * 512; /* CANN-like 512-byte blocks */
  pthread_mutex_lock(&pool_lock);
  struct pool *pl = memPool;
  if (!pool_live_locked(pl)) {
    pthread_mutex_unlock(&pool_lock);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a live memory pool", memPool);
  }
  /* the closest fit among FREE blocks and this stream's PENDING ones */
  struct pblock *best = NULL;
  for (struct pblock *b = pl->blocks; b; b = b->next)
    if (b->size >= real &&
        (b->state == BLK_FREE || (b->state == BLK_PENDING && b->stream == sid)) &&
        (!best || b->size < best->size))
      best = b;
  if (best) {
    /* a pending block still counts as used: its free has not run */
    if (best->state == BLK_FREE) {
      note_use_locked(pl, best->size);
      /* EVRT_CHECK: its free has run: a new life from this call (a
       * PENDING one starts it in its free task: top of file) */
      evrt_check_alloc(best->p, best->size);
    }
    best->state = BLK_USED;
    best->gen++;
    best->stream = sid;
    *ptr = best->p;
    pthread_mutex_unlock(&pool_lock);
    return ACL_SUCCESS;
  }
  if (pl->props.maxSize && real > pl->props.maxSize - pl->reserved) {
    pthread_mutex_unlock(&pool_lock);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "the pool is full: %llu of %zu bytes reserved",
                     (unsigned long long)pl->reserved, pl->props.maxSize);
  }
  struct pblock *b = calloc(1, sizeof *b);
  void *p = b ? aligned_alloc(64, real) : NULL;
  if (!p || acl__mem_track(p, real, ACL__MEM_POOL, (int)pl->props.location.id) ||
      acl__map_put(&by_ptr, (uint64_t)(uintptr_t)p, b)) {
    if (p)
      acl__mem_untrack(p, ACL__MEM_POOL, NULL);
    free(p);
    free(b);
    pthread_mutex_unlock(&pool_lock);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "cannot allocate %zu bytes", real);
  }
  *b = (struct pblock){p, real, BLK_USED, 1, sid, pl, pl->blocks};
  pl->blocks = b;
  pl->reserved += real;
  if (pl->reserved > pl->reserved_high)
    pl->reserved_high = pl->reserved;
  note_use_locked(pl, real);
  evrt_check_alloc(p, real); /* EVRT_CHECK: a new block */
  pthread_mutex_unlock(&pool_lock);
  *ptr = p;
  return ACL_SUCCESS;
}

struct free_task {
  struct pblock *b;
  uint64_t gen;
};

/* Runs on a worker when the stream reaches the free: the block is done
 * with; release free memory above the threshold. */
static void run_free(void *arg) {
  struct free_task *t = arg;
  pthread_mutex_lock(&pool_lock);
  struct pblock *b = t->b;
  /* the block may have been handed again to the freeing stream (gen moved)
   * or released with its pool meanwhile: then it is no longer ours */
  bool live = acl__map_get(&by_ptr, (uint64_t)(uintptr_t)b->p) == b;
  if (live) {
    /* EVRT_CHECK: the life ends here in this stream's order (this task's
     * access); handed again on this stream since (gen moved), the new
     * life starts right after (top of file).  Before trim_locked, which
     * may release the block. */
    evrt_check_free(b->p, b->size, NULL);
    if (b->gen != t->gen)
      evrt_check_alloc(b->p, b->size);
  }
  if (live && b->state == BLK_PENDING && b->gen == t->gen) {
    struct pool *pl = b->pool;
    b->state = BLK_FREE;
    pl->used -= b->size;
    trim_locked(pl, pl->threshold);
    maybe_drop_pool_locked(pl);
  }
  pthread_mutex_unlock(&pool_lock);
  pool_flush();
  free(t);
}

aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream) {
  static const char fn[] = "aclrtMemPoolFreeAsync";
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  uint64_t sid;
  aclError r = stream_id(fn, stream, &sid);
  if (r)
    return r;
  struct free_task *t = malloc(sizeof *t);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  pthread_mutex_lock(&pool_lock);
  struct pblock *b = acl__map_get(&by_ptr, (uint64_t)(uintptr_t)ptr);
  bool ok = b && b->state == BLK_USED;
  if (ok) {
    b->state = BLK_PENDING;
    b->stream = sid;
    *t = (struct free_task){b, b->gen};
  }
  uint64_t gen = ok ? b->gen : 0;
  pthread_mutex_unlock(&pool_lock);
  if (!ok) {
    free(t);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a block in use of a memory pool", ptr);
  }
  r = acl__enqueue_task(fn, stream, run_free, t, false);
  if (r) { /* the stream died meanwhile: the block stays in use */
    pthread_mutex_lock(&pool_lock);
    if (acl__map_get(&by_ptr, (uint64_t)(uintptr_t)ptr) == b &&
        b->state == BLK_PENDING && b->gen == gen)
      b->state = BLK_USED;
    pthread_mutex_unlock(&pool_lock);
  }
  return r;
}

aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep) {
  static const char fn[] = "aclrtMemPoolTrimTo";
  if (!memPool)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "memPool is NULL");
  pthread_mutex_lock(&pool_lock);
  struct pool *pl = memPool;
  bool ok = pool_live_locked(pl);
  if (ok)
    trim_locked(pl, minBytesToKeep);
  pthread_mutex_unlock(&pool_lock);
  pool_flush();
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a live memory pool", memPool);
  return ACL_SUCCESS;
}
