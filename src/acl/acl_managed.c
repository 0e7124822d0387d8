/*
 * acl_managed.c - managed (unified virtual) memory: aclrtMemAllocManaged,
 * the advice calls and their attribute queries, prefetching.
 *
 * Host and device memory are the same memory here, so managed memory needs
 * no migration: it is host memory in 2 MiB granules (CANN's rounding), and
 * what the layer keeps is the advice of each granule (read mostly,
 * preferred location, accessed-by set, last prefetch location) so that the
 * attribute queries answer as CANN documents, including the "not the same
 * over the whole range" values.  A prefetch is a stream task that touches
 * one byte of each granule (no data changes).
 *
 * Lock: man_lock guards the list of managed blocks and their advice; it is
 * a leaf lock, never held across an evrt call.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

#define GRANULE ((size_t)2 << 20)

/* A location; type ACL_MEM_LOCATIONTYPE_INVALID means "not set". */
struct loc {
  int type, id;
};
static const struct loc LOC_NONE = {ACL_MEM_LOCATIONTYPE_INVALID, 0};

struct granule {
  bool read_mostly;
  struct loc preferred, last_prefetch;
  uint64_t accessed_by; /* bit 0: the host, bit 1 + d: device d */
};

struct managed {
  uintptr_t start;
  size_t size, n;
  struct managed *next;
  struct granule g[];
};

static ACL__MUTEX(man_lock)
static struct managed *blocks;

/* ----------------------------------------------------------- allocation */

aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag) {
  static const char fn[] = "aclrtMemAllocManaged";
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (flag != ACL_RT_MEM_ATTACH_GLOBAL)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flag 0x%x: only ACL_RT_MEM_ATTACH_GLOBAL", flag);
  if (size > ((uint64_t)3 << 40))
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "size %llu is above the 3 TiB of managed memory",
                     (unsigned long long)size);
  size_t real = ((size_t)size + GRANULE - 1) / GRANULE * GRANULE;
  size_t n = real / GRANULE;
  struct managed *m = malloc(sizeof *m + n * sizeof m->g[0]);
  void *p = m ? aligned_alloc(GRANULE, real) : NULL;
  if (!p) {
    free(m);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "cannot allocate %zu bytes", real);
  }
  m->start = (uintptr_t)p;
  m->size = real;
  m->n = n;
  for (size_t i = 0; i < n; i++)
    m->g[i] = (struct granule){false, LOC_NONE, LOC_NONE, 0};
  if (acl__mem_track(p, real, ACL__MEM_MANAGED, -1)) {
    free(p);
    free(m);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  pthread_mutex_lock(&man_lock);
  m->next = blocks;
  blocks = m;
  pthread_mutex_unlock(&man_lock);
  evrt_check_alloc(p, real); /* EVRT_CHECK: a new block (aclrtFree frees it) */
  *ptr = p;
  return ACL_SUCCESS;
}

/* Called by aclrtFree once the block left the registry. */
void acl__managed_forget(void *p) {
  pthread_mutex_lock(&man_lock);
  struct managed **pp = &blocks, *m = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)p) {
      m = *pp;
      *pp = m->next;
      break;
    }
  pthread_mutex_unlock(&man_lock);
  free(m);
}

/* The block and granule range of [p, p+size) with man_lock held, or an
 * error (lock not held).  aligned: p and size in whole granules. */
static aclError range_locked(const char *fn, const void *p, size_t size,
                             bool aligned, struct managed **out, size_t *g0,
                             size_t *g1) {
  if (!p)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  pthread_mutex_lock(&man_lock);
  uintptr_t a = (uintptr_t)p;
  for (struct managed *m = blocks; m; m = m->next)
    if (a >= m->start && a < m->start + m->size) {
      size_t off = a - m->start;
      if (size > m->size - off ||
          (aligned && (off % GRANULE || size % GRANULE)))
        break;
      *out = m;
      *g0 = off / GRANULE;
      *g1 = (off + size + GRANULE - 1) / GRANULE;
      return ACL_SUCCESS;
    }
  pthread_mutex_unlock(&man_lock);
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "[%p, +%zu) is not %smanaged memory of "
                   "aclrtMemAllocManaged",
                   p, size, aligned ? "a whole number of 2 MiB granules of " : "");
}

/* Check a location; HOST_NUMA_CURRENT is the host. */
static aclError check_loc(const char *fn, aclrtMemManagedLocation in,
                          bool allow_invalid, struct loc *out) {
  switch (in.type) {
  case ACL_MEM_LOCATIONTYPE_DEVICE:
    if (!acl__device_ok(in.id))
      return acl__bad_device(fn, in.id, ACL_ERROR_RT_PARAM_INVALID);
    *out = (struct loc){in.type, in.id};
    return ACL_SUCCESS;
  case ACL_MEM_LOCATIONTYPE_HOST:
  case ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT:
    *out = (struct loc){ACL_MEM_LOCATIONTYPE_HOST, 0};
    return ACL_SUCCESS;
  case ACL_MEM_LOCATIONTYPE_HOST_NUMA:
    if (in.id < 0)
      break;
    *out = (struct loc){in.type, in.id};
    return ACL_SUCCESS;
  case ACL_MEM_LOCATIONTYPE_INVALID:
    if (!allow_invalid)
      break;
    *out = LOC_NONE;
    return ACL_SUCCESS;
  }
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "location type %d id %d is not valid here", (int)in.type,
                   (int)in.id);
}

static bool loc_eq(struct loc a, struct loc b) {
  return a.type == b.type && a.id == b.id;
}

/* NUMA nodes are host memory: they count as the host in accessed-by. */
static int access_bit(struct loc l) {
  return l.type == ACL_MEM_LOCATIONTYPE_DEVICE ? 1 + l.id : 0;
}

aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size,
                               aclrtMemManagedAdviseType advise,
                               aclrtMemManagedLocation location) {
  static const char fn[] = "aclrtMemManagedAdvise";
  if ((unsigned)advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown advice %d",
                     (int)advise);
  struct loc loc = LOC_NONE;
  aclError r;
  /* SET_READ_MOSTLY ignores the location; the UNSETs of read mostly and
   * preferred location accept an invalid one */
  if (advise != ACL_MEM_ADVISE_SET_READ_MOSTLY &&
      (r = check_loc(fn, location,
                     advise == ACL_MEM_ADVISE_UNSET_READ_MOSTLY ||
                         advise == ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
                     &loc)))
    return r;
  struct managed *m;
  size_t g0, g1;
  if ((r = range_locked(fn, ptr, (size_t)size, true, &m, &g0, &g1)))
    return r;
  for (size_t i = g0; i < g1; i++) {
    struct granule *g = &m->g[i];
    switch (advise) {
    case ACL_MEM_ADVISE_SET_READ_MOSTLY:
      g->read_mostly = true;
      break;
    case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
      g->read_mostly = false;
      break;
    case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
      g->preferred = loc;
      break;
    case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
      g->preferred = LOC_NONE;
      break;
    case ACL_MEM_ADVISE_SET_ACCESSED_BY:
      g->accessed_by |= 1ull << access_bit(loc);
      break;
    case ACL_MEM_ADVISE_UNSET_ACCESSED_BY:
      g->accessed_by &= ~(1ull << access_bit(loc));
      break;
    }
  }
  pthread_mutex_unlock(&man_lock);
  return ACL_SUCCESS;
}

/* One attribute over granules [g0, g1) of m (man_lock held). */
static aclError get_attr_locked(const char *fn, struct managed *m, size_t g0,
                                size_t g1,
                                aclrtMemManagedRangeAttribute attribute,
                                void *data, size_t dataSize) {
  int32_t v;
  bool same = true;
  switch (attribute) {
  case ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
    if (dataSize != 4)
      break;
    v = 1;
    for (size_t i = g0; i < g1; i++)
      v &= m->g[i].read_mostly;
    memcpy(data, &v, 4);
    return ACL_SUCCESS;
  case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
  case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
  case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
  case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
  case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
  case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
    bool pref = attribute <= ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID;
    struct loc common = pref ? m->g[g0].preferred : m->g[g0].last_prefetch;
    for (size_t i = g0; i < g1; i++)
      same &= loc_eq(pref ? m->g[i].preferred : m->g[i].last_prefetch, common);
    if (!same)
      common = LOC_NONE;
    bool has_id = common.type == ACL_MEM_LOCATIONTYPE_DEVICE ||
                  common.type == ACL_MEM_LOCATIONTYPE_HOST_NUMA;
    if (attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
        attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE) {
      if (dataSize != sizeof(aclrtMemManagedLocationType))
        break;
      aclrtMemManagedLocationType t = (aclrtMemManagedLocationType)common.type;
      memcpy(data, &t, sizeof t);
      return ACL_SUCCESS;
    }
    if (dataSize != 4)
      break;
    if (attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION ||
        attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION)
      /* a device or NUMA id, -1 the host, -2 not the same everywhere */
      v = has_id ? common.id
          : common.type == ACL_MEM_LOCATIONTYPE_HOST ? -1
                                                     : -2;
    else /* the id alone: -2 when there is none */
      v = has_id ? common.id : -2;
    memcpy(data, &v, 4);
    return ACL_SUCCESS;
  }
  case ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
    if (!dataSize || dataSize % 4)
      break;
    uint64_t set = ~0ull;
    for (size_t i = g0; i < g1; i++)
      set &= m->g[i].accessed_by;
    size_t slots = dataSize / 4, k = 0;
    int32_t *out = data;
    for (int bit = 0; bit < 64 && k < slots; bit++)
      if (set & (1ull << bit))
        out[k++] = bit == 0 ? -1 : bit - 1;
    while (k < slots)
      out[k++] = -2;
    return ACL_SUCCESS;
  }
  default:
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown attribute %d",
                     (int)attribute);
  }
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "dataSize %zu does not fit attribute %d", dataSize,
                   (int)attribute);
}

aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute,
                                const void *ptr, size_t size, void *data,
                                size_t dataSize) {
  static const char fn[] = "aclrtMemManagedGetAttr";
  if (!ptr || !data)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     ptr ? "data" : "ptr");
  struct managed *m;
  size_t g0, g1;
  aclError r = range_locked(fn, ptr, size, false, &m, &g0, &g1);
  if (r)
    return r;
  r = get_attr_locked(fn, m, g0, g1, attribute, data, dataSize);
  pthread_mutex_unlock(&man_lock);
  return r;
}

aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes,
                                 size_t numAttributes, const void *ptr,
                                 size_t size, void **data, size_t *dataSizes) {
  static const char fn[] = "aclrtMemManagedGetAttrs";
  if (!attributes || !ptr || !data || !dataSizes || !numAttributes)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "attributes, ptr, data and dataSizes must not be NULL, "
                     "numAttributes not 0");
  for (size_t i = 0; i < numAttributes; i++)
    if (!data[i])
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "data[%zu] is NULL", i);
  struct managed *m;
  size_t g0, g1;
  aclError r = range_locked(fn, ptr, size, false, &m, &g0, &g1);
  if (r)
    return r;
  for (size_t i = 0; i < numAttributes && !r; i++)
    r = get_attr_locked(fn, m, g0, g1, attributes[i], data[i], dataSizes[i]);
  pthread_mutex_unlock(&man_lock);
  return r;
}

/* ------------------------------------------------------------ prefetch */

struct touch {
  size_t n;
  struct {
    const volatile char *p;
    size_t size;
  } r[];
};

static void run_touch(void *arg) {
  struct touch *t = arg;
  for (size_t k = 0; k < t->n; k++)
    for (size_t off = 0; off < t->r[k].size; off += GRANULE)
      (void)t->r[k].p[off];
  free(t);
}

static aclError prefetch(const char *fn, const void **ptrs, size_t *sizes,
                         size_t count, const struct loc *locs,
                         aclrtStream stream) {
  evrt_stream_t h; /* a dead stream records nothing */
  uint64_t id;
  aclError r0 = acl__stream(fn, stream, &h);
  if (r0)
    return r0;
  evrt_status_t st = evrt_stream_get_id(h, &id);
  if (st)
    return acl__st(st, fn);
  struct touch *t = malloc(sizeof *t + count * sizeof t->r[0]);
  if (!t)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  t->n = count;
  /* check every range first, then record the request: nothing changes on
   * bad input */
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < count; k++) {
      struct managed *m;
      size_t g0, g1;
      aclError r = range_locked(fn, ptrs[k], sizes[k], true, &m, &g0, &g1);
      if (r) {
        free(t);
        return r;
      }
      if (pass)
        for (size_t i = g0; i < g1; i++)
          m->g[i].last_prefetch = locs[k];
      pthread_mutex_unlock(&man_lock);
      t->r[k].p = ptrs[k];
      t->r[k].size = sizes[k];
    }
  return acl__enqueue_task(fn, stream, run_touch, t, false);
}

aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size,
                                      aclrtMemManagedLocation location,
                                      uint32_t flags, aclrtStream stream) {
  static const char fn[] = "aclrtMemManagedPrefetchAsync";
  if (flags)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flags is reserved and must be 0");
  struct loc loc;
  aclError r = check_loc(fn, location, false, &loc);
  if (r)
    return r;
  return prefetch(fn, &ptr, &size, 1, &loc, stream);
}

aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes,
                                           size_t count,
                                           aclrtMemManagedLocation *prefetchLocs,
                                           size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs,
                                           uint64_t flags, aclrtStream stream) {
  static const char fn[] = "aclrtMemManagedPrefetchBatchAsync";
  if (!ptrs || !sizes || !prefetchLocs || !prefetchLocIdxs || !count ||
      !numPrefetchLocs)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "arrays must not be NULL and counts not 0");
  if (flags)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flags is reserved and must be 0");
  /* locations apply as the batch-copy attributes do: entry k from index
   * prefetchLocIdxs[k] to the next entry's index */
  if (numPrefetchLocs > count || prefetchLocIdxs[0] != 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "prefetchLocIdxs must start at 0, numPrefetchLocs <= "
                     "count");
  for (size_t k = 1; k < numPrefetchLocs; k++)
    if (prefetchLocIdxs[k] <= prefetchLocIdxs[k - 1] ||
        prefetchLocIdxs[k] >= count)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "prefetchLocIdxs[%zu] must grow and stay below %zu", k,
                       count);
  struct loc *locs = malloc(count * sizeof *locs);
  if (!locs)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  aclError r = ACL_SUCCESS;
  for (size_t k = 0; k < numPrefetchLocs && !r; k++) {
    struct loc loc;
    r = check_loc(fn, prefetchLocs[k], false, &loc);
    size_t end = k + 1 < numPrefetchLocs ? prefetchLocIdxs[k + 1] : count;
    for (size_t i = prefetchLocIdxs[k]; !r && i < end; i++)
      locs[i] = loc;
  }
  if (!r)
    r = prefetch(fn, ptrs, sizes, count, locs, stream);
  free(locs);
  return r;
}
