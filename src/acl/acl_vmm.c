/*
 * acl_vmm.c - virtual and physical memory: reserve address ranges, allocate
 * physical memory, map, set access, export a physical allocation to another
 * process and import it there.
 *
 * The model (docs/acl.md, "Virtual memory"):
 *  - physical memory is a memfd (one per aclrtMallocPhysical), so that it can
 *    be mapped at several addresses and shared with other processes.  After
 *    its data, rounded up to a page, the memfd holds one metadata page: a
 *    magic, the exporter's pid, a random nonce, the "no pid check" flag and
 *    the pid whitelist of aclrtMemSetPidToShareableHandle;
 *  - a reserved range is an inaccessible anonymous mapping (PROT_NONE);
 *    aclrtMapMem maps the memfd over part of it (MAP_FIXED | MAP_SHARED),
 *    aclrtUnmapMem puts the inaccessible mapping back, aclrtMemSetAccess is
 *    mprotect;
 *  - a shareable handle names the exporter's memfd: (pid, fd, nonce) packed
 *    in 64 bits (22 + 20 + 22), or the same fields in a 128-byte fabric
 *    handle.  The importer opens /proc/<pid>/fd/<fd> (so the exporter must
 *    still hold it, as CANN requires), checks the nonce and, unless the
 *    exporter disabled it, that its own pid is on the whitelist (207006).
 *
 * Unmapping (issue 23 item 3).  Only mapped pages are memory of the layer:
 * the copy and fill calls ask acl__vmm_mapped, and a range touching a page
 * never mapped, unmapped, or without the access the call needs is refused
 * (100000).  A call that passed that check holds the reservation ("users")
 * while it copies (the synchronous calls) or enqueues (the asynchronous
 * ones).  aclrtUnmapMem takes the mapping away for the program at once (the
 * checks fail from then on), but its pages stay mapped, and the physical
 * memory referenced, as CANN's driver keeps them for the tasks already
 * queued: until no call holds the reservation and then every stream has
 * passed the work enqueued before (evrt_device_launch_host_func); only then
 * do they become PROT_NONE again (the pages a new aclrtMapMem took in the
 * meantime are left to it).  So a copy validated at its enqueue and unmapped
 * before it runs reads and writes the old pages instead of crashing a
 * worker.  aclrtReleaseMemAddress of a range with such pages pending keeps
 * the address range until they are done.  Nobody waits: the last user, or
 * the deferred task, finishes the unmap.  Lowering a mapping's access
 * (aclrtMemSetAccess, or aclrtMemMapNoAccess over pages an unmap still
 * keeps) works the same way: the checks see the new access at once, the
 * pages get it once the work queued before has passed (the last pending
 * lowering of a mapping applies it).
 *
 * Physical handles are pointers to struct phys, validated against the list
 * of live ones.  Lock order: vmm_lock -> the block registry's lock
 * (acl__mem_track/untrack); vmm_lock -> grave_lock (a leaf); vmm_lock ->
 * the checker's shadow and report locks (EVRT_CHECK: a map's
 * evrt_check_alloc and an unmap's evrt_check_free, which has no release
 * function and so calls back into nothing).  vmm_lock is a mutex, held
 * across mmap, mprotect and open: no spin lock is involved.  Other evrt
 * calls (the deferred launch, the release of a reservation through the
 * checker's quarantine) are made without it.
 */
#include "acl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define PHYS_MAGIC 0x70687973u /* "phys" */
#define META_MAGIC 0x65767274766d6d31ull /* "evrtvmm1" */
#define META_PIDS 1000
#define MB2 ((size_t)2 << 20)

struct meta {
  uint64_t magic;
  uint64_t size; /* the allocation's size, for the importer's aclrtMapMem */
  int32_t exporter_pid;
  uint32_t nonce;
  uint32_t no_pid_check;
  uint32_t npids;
  int32_t pids[META_PIDS];
};

struct phys {
  uint32_t magic;
  int fd;
  size_t size;     /* as asked: the size every aclrtMapMem must use */
  size_t data_len; /* size rounded up to a page: where the metadata starts */
  aclrtPhysicalMemProp prop;
  bool imported, exported;
  uint64_t shareable; /* the 64-bit shareable handle once exported */
  struct meta *meta;  /* the metadata page, mapped (exporter) */
  unsigned maps;      /* live mappings */
  unsigned refs;      /* aclrtMallocPhysical/import + retains - frees */
  struct phys *next;
};

struct mapping {
  uintptr_t va;
  size_t size;
  struct phys *phys;
  uint64_t access;   /* aclrtMemAccessFlags: what the checks allow */
  int prot;          /* the pages' protection: access's, or more while a
                        lowering waits for queued work (top of file) */
  uint64_t gen;      /* names it in a pending lowering */
  struct mapping *next;
};

/* An unmap whose pages are not given back yet, or a lowering of a
 * mapping's protection not applied yet (top of file). */
enum { UNMAP_HELD, UNMAP_QUEUED, UNMAP_READY };
struct unmap {
  struct reserve *r;
  uintptr_t va;
  size_t size;
  struct phys *phys; /* an unmap's physical memory; NULL: a lowering */
  uint64_t gen;      /* a lowering's mapping */
  int state; /* HELD: users were in at the unmap, the last one queues it;
                QUEUED: waits for the work queued before; READY: that work
                passed, users came in since, the last one finishes it */
  struct unmap *next, *launch_next;
};

struct reserve {
  uintptr_t start;
  size_t size;
  struct mapping *maps;
  struct unmap *unmaps; /* unmapped for the program, pages still there */
  unsigned users;       /* calls holding it (acl__vmm_mapped with pin) */
  bool released;        /* aclrtReleaseMemAddress'd with unmaps pending:
                           off the list, munmap'd by the last of them */
  struct reserve *next;
};

static ACL__MUTEX(vmm_lock)
static struct phys *phys_list;
static struct reserve *reserves;
static uint64_t mapping_gen; /* under vmm_lock */

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

static bool phys_live_locked(const struct phys *p) {
  for (struct phys *x = phys_list; x; x = x->next)
    if (x == p && x->refs)
      return true;
  return false;
}

static void phys_unlink_locked(struct phys *p) {
  for (struct phys **pp = &phys_list; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      return;
    }
}

/* Drop a reference; the memory goes when no reference and no mapping is
 * left (CANN: freeing a mapped handle releases it at the last unmap). */
static void phys_put_locked(struct phys *p) {
  if (p->refs)
    p->refs--;
  if (p->refs || p->maps)
    return;
  phys_unlink_locked(p);
  if (p->meta)
    munmap(p->meta, sizeof(struct meta));
  close(p->fd);
  p->magic = 0;
  free(p);
}

/* ------------------------------------------------------ held ranges */

/* [a, a+n) (n > 0, no wrap) lies in mappings of r with read access, and
 * write access when write (vmm_lock held). */
static bool covered_locked(const struct reserve *r, uintptr_t a, size_t n,
                           bool write) {
  uintptr_t cur = a, end = a + n;
  while (cur < end) {
    const struct mapping *hit = NULL;
    for (const struct mapping *x = r->maps; x && !hit; x = x->next)
      if (cur >= x->va && cur - x->va < x->size)
        hit = x;
    if (!hit)
      return false; /* never mapped, or unmapped */
    if (hit->access != ACL_RT_MEM_ACCESS_FLAGS_READWRITE &&
        (write || hit->access != ACL_RT_MEM_ACCESS_FLAGS_READ))
      return false; /* mapped without the access the call needs */
    cur = hit->va + hit->size;
  }
  return true;
}

static struct reserve *reserve_of_locked(uintptr_t va, size_t n);

bool acl__vmm_mapped(const void *p, size_t n, bool write, void **pin) {
  uintptr_t a = (uintptr_t)p;
  size_t len = n ? n : 1;
  if (!p || a + len < a)
    return false;
  pthread_mutex_lock(&vmm_lock);
  struct reserve *r = reserve_of_locked(a, len);
  bool ok = r && covered_locked(r, a, len, write);
  if (ok && pin) {
    r->users++; /* acl__vmm_unpin: finishes the unmaps it held up */
    *pin = r;
  }
  pthread_mutex_unlock(&vmm_lock);
  return ok;
}

/* Released reservations on their way out (EVRT_CHECK).  The checker's
 * shadow of a reservation holds its mappings' lives (freed by their
 * unmaps): the addresses may only go back to the kernel, which may hand
 * them to memory the checker does not track, once the checker has
 * forgotten that shadow.  So a reservation that goes is given to
 * evrt_check_free with grave_munmap as its release: the checker forgets
 * the range and then munmaps it when it leaves the quarantine (at once with
 * the checker off).  grave_lock is a leaf (taken under vmm_lock, and alone
 * by grave_munmap); evrt_check_free is called with neither held
 * (grave_flush), since it may release other blocks leaving the
 * quarantine, whose release functions take the layer's other locks. */
struct grave {
  uintptr_t start;
  size_t size;
  struct grave *next;
};
static ACL__MUTEX(grave_lock)
static struct grave *graves_due;  /* to give to the checker */
static struct grave *graves_held; /* in its quarantine */

static void grave_munmap(void *p) {
  pthread_mutex_lock(&grave_lock);
  struct grave **pp = &graves_held, *g = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)p) {
      g = *pp;
      *pp = g->next;
      break;
    }
  pthread_mutex_unlock(&grave_lock);
  if (g) {
    munmap((void *)g->start, g->size);
    free(g);
  }
}

/* After vmm_lock is released: the reservations that went under it. */
static void grave_flush(void) {
  pthread_mutex_lock(&grave_lock);
  struct grave *g = graves_due;
  graves_due = NULL;
  pthread_mutex_unlock(&grave_lock);
  while (g) {
    struct grave *next = g->next;
    pthread_mutex_lock(&grave_lock);
    g->next = graves_held;
    graves_held = g;
    pthread_mutex_unlock(&grave_lock);
    if (evrt_check_free((void *)g->start, g->size, grave_munmap) !=
        EVRT_SUCCESS)
      grave_munmap((void *)g->start);
    g = next;
  }
}

/* A released reservation goes once nothing of it is pending (vmm_lock;
 * the caller calls grave_flush after releasing it). */
static void reserve_idle_locked(struct reserve *r) {
  if (r->released && !r->unmaps && !r->users) {
    struct grave *g = malloc(sizeof *g);
    if (g) {
      *g = (struct grave){r->start, r->size, NULL};
      pthread_mutex_lock(&grave_lock);
      g->next = graves_due;
      graves_due = g;
      pthread_mutex_unlock(&grave_lock);
    } else {
      munmap((void *)r->start, r->size); /* (its shadow stays: stale) */
    }
    free(r);
  }
}

/* The end of the live mapping or pending unmap of r that holds cur, or 0;
 * else *next is lowered to the start of the first one above cur. */
static uintptr_t held_until(const struct reserve *r, uintptr_t cur,
                            uintptr_t *next) {
  for (const struct mapping *x = r->maps; x; x = x->next) {
    if (x->va <= cur && cur - x->va < x->size)
      return x->va + x->size;
    if (x->va > cur && x->va < *next)
      *next = x->va;
  }
  for (const struct unmap *x = r->unmaps; x; x = x->next) {
    if (!x->phys)
      continue; /* a lowering holds no pages */
    if (x->va <= cur && cur - x->va < x->size)
      return x->va + x->size;
    if (x->va > cur && x->va < *next)
      *next = x->va;
  }
  return 0;
}

static int prot_of(uint64_t flags);

/* A lowering is due: the pages of its mapping, if still mapped, get the
 * mapping's access, unless a later lowering of it is pending (its queued
 * work may rely on the access in between: that one applies it). */
static void lowering_finish_locked(struct unmap *u) {
  struct reserve *r = u->r;
  for (const struct unmap *x = r->unmaps; x; x = x->next)
    if (!x->phys && x->gen == u->gen)
      return;
  for (struct mapping *m = r->maps; m; m = m->next)
    if (m->gen == u->gen) {
      m->prot = prot_of(m->access);
      mprotect((void *)m->va, m->size, m->prot);
      break;
    }
}

/* Give back the pages of u: PROT_NONE again where neither a live mapping of
 * its reservation (a new aclrtMapMem took them since) nor another pending
 * unmap (one of a remap since, whose queued work uses them: it gives them
 * back itself) holds them, and the physical memory's mapping reference
 * dropped (CANN: freed while mapped, it goes at the last unmap).  u is
 * unlinked already (vmm_lock held). */
static void unmap_finish_locked(struct unmap *u) {
  struct reserve *r = u->r;
  if (!u->phys) {
    if (!r->released)
      lowering_finish_locked(u);
    free(u);
    return;
  }
  uintptr_t cur = u->va, end = u->va + u->size;
  while (!r->released && cur < end) {
    uintptr_t gap_end = end, held = held_until(r, cur, &gap_end);
    if (held) {
      cur = held;
      continue;
    }
    mmap((void *)cur, gap_end - cur, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    cur = gap_end;
  }
  u->phys->maps--;
  if (!u->phys->refs) { /* freed while mapped: now it can go */
    u->phys->refs = 1;
    phys_put_locked(u->phys);
  }
  free(u);
}

/* [va, va+n) overlaps pages of a pending unmap of r (vmm_lock held). */
static bool unmap_overlaps_locked(const struct reserve *r, uintptr_t va,
                                  size_t n) {
  for (const struct unmap *x = r->unmaps; x; x = x->next)
    if (x->phys && va < x->va + x->size && x->va < va + n)
      return true;
  return false;
}

static void unlink_unmap_locked(struct unmap *u) {
  for (struct unmap **pp = &u->r->unmaps; *pp; pp = &(*pp)->next)
    if (*pp == u) {
      *pp = u->next;
      return;
    }
}

/* Every stream has passed the work enqueued before u was queued: finish it
 * unless a call holds the reservation now (then the last one does).  Runs
 * on an evrt worker (or the caller, when the launch failed). */
static void unmap_passed(void *arg) {
  struct unmap *u = arg;
  pthread_mutex_lock(&vmm_lock);
  struct reserve *r = u->r;
  if (r->users) {
    u->state = UNMAP_READY;
  } else {
    unlink_unmap_locked(u);
    unmap_finish_locked(u);
    reserve_idle_locked(r);
  }
  pthread_mutex_unlock(&vmm_lock);
  grave_flush();
}

/* Queue unmaps (linked by launch_next) behind the work enqueued so far; no
 * lock held.  Without memory to defer, finish now (as CANN would). */
static void unmap_queue(struct unmap *u) {
  while (u) {
    struct unmap *next = u->launch_next;
    if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, unmap_passed, u) !=
        EVRT_SUCCESS)
      unmap_passed(u);
    u = next;
  }
}

void acl__vmm_unpin(void *pin) {
  struct reserve *r = pin;
  struct unmap *queue = NULL;
  pthread_mutex_lock(&vmm_lock);
  if (--r->users == 0) {
    for (struct unmap **pp = &r->unmaps; *pp;) {
      struct unmap *u = *pp;
      if (u->state == UNMAP_READY) {
        *pp = u->next;
        unmap_finish_locked(u);
        continue;
      }
      if (u->state == UNMAP_HELD) {
        /* its copies are enqueued now: the deferral covers them */
        u->state = UNMAP_QUEUED;
        u->launch_next = queue;
        queue = u;
      }
      pp = &u->next;
    }
    reserve_idle_locked(r);
  }
  pthread_mutex_unlock(&vmm_lock);
  grave_flush();
  unmap_queue(queue); /* the QUEUED ones stay until unmap_passed runs */
}

/* ------------------------------------------------------- granularity */

static bool attr_ok(aclrtMemAttr a, bool device) {
  switch (a) {
  case ACL_MEM_NORMAL:
  case ACL_MEM_HUGE:
  case ACL_MEM_P2P_NORMAL:
  case ACL_MEM_P2P_HUGE:
  case ACL_HBM_MEM_HUGE:
  case ACL_HBM_MEM_NORMAL:
    return true;
  case ACL_MEM_HUGE1G:
  case ACL_HBM_MEM_HUGE1G:
    return device; /* device only; P2P_HUGE1G is not on the 910B */
  case ACL_DDR_MEM_HUGE:
  case ACL_DDR_MEM_NORMAL:
  case ACL_DDR_MEM_P2P_HUGE:
  case ACL_DDR_MEM_P2P_NORMAL:
    return !device; /* host only */
  default:
    return false;
  }
}

/* 1 GiB for the 1G attributes, 2 MiB for huge pages and for HBM_MEM_NORMAL
 * (CANN allocates it as huge), the host page for normal memory. */
static size_t granule_of(aclrtMemAttr a) {
  switch (a) {
  case ACL_MEM_HUGE1G:
  case ACL_HBM_MEM_HUGE1G:
    return (size_t)1 << 30;
  case ACL_MEM_HUGE:
  case ACL_MEM_P2P_HUGE:
  case ACL_HBM_MEM_HUGE:
  case ACL_HBM_MEM_NORMAL:
  case ACL_DDR_MEM_HUGE:
  case ACL_DDR_MEM_P2P_HUGE:
    return MB2;
  default:
    return page_size();
  }
}

static aclError check_prop(const char *fn, const aclrtPhysicalMemProp *prop) {
  bool device;
  switch (prop->location.type) {
  case ACL_MEM_LOCATION_TYPE_DEVICE:
    if (!acl__device_ok(prop->location.id))
      return acl__bad_device(fn, prop->location.id,
                             ACL_ERROR_RT_INVALID_DEVICEID);
    device = true;
    break;
  case ACL_MEM_LOCATION_TYPE_HOST:
  case ACL_MEM_LOCATION_TYPE_HOST_NUMA:
    device = false;
    break;
  default:
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "location type %d cannot hold physical memory",
                     (int)prop->location.type);
  }
  if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED ||
      (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE &&
       prop->handleType != ACL_MEM_HANDLE_TYPE_POSIX))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "allocation type %d / handle type %d not supported",
                     (int)prop->allocationType, (int)prop->handleType);
  if (!attr_ok(prop->memAttr, device))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "memory attribute %d is not for %s memory",
                     (int)prop->memAttr, device ? "device" : "host");
  return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option,
                                          size_t *granularity) {
  static const char fn[] = "aclrtMemGetAllocationGranularity";
  if (!prop || !granularity)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     prop ? "granularity" : "prop");
  if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown option %d",
                     (int)option);
  aclError r = check_prop(fn, prop);
  if (r)
    return r;
  *granularity = granule_of(prop->memAttr);
  return ACL_SUCCESS;
}

/* ------------------------------------------------------- physical memory */

static struct phys *phys_new(int fd, size_t size,
                             const aclrtPhysicalMemProp *prop) {
  struct phys *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->magic = PHYS_MAGIC;
  p->fd = fd;
  p->size = size;
  p->data_len = (size + page_size() - 1) / page_size() * page_size();
  p->prop = *prop;
  p->refs = 1;
  return p;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                             const aclrtPhysicalMemProp *prop,
                             uint64_t flags) {
  static const char fn[] = "aclrtMallocPhysical";
  if (!handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "handle is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (!prop)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "prop is NULL");
  if (flags)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flags is reserved and must be 0");
  aclError r = check_prop(fn, prop);
  if (r)
    return r;
  size_t data_len = (size + page_size() - 1) / page_size() * page_size();
  if (size > SIZE_MAX / 2)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "size too large");
  int fd = memfd_create("evrt-acl-physical", MFD_CLOEXEC);
  if (fd < 0)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "memfd_create: %s", strerror(errno));
  struct phys *p = NULL;
  if (ftruncate(fd, (off_t)(data_len + page_size())) != 0 ||
      !(p = phys_new(fd, size, prop))) {
    int e = errno;
    close(fd);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                     "cannot allocate %zu bytes: %s", size, strerror(e));
  }
  pthread_mutex_lock(&vmm_lock);
  p->next = phys_list;
  phys_list = p;
  pthread_mutex_unlock(&vmm_lock);
  *handle = p;
  return ACL_SUCCESS;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  static const char fn[] = "aclrtFreePhysical";
  if (!handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "handle is NULL");
  pthread_mutex_lock(&vmm_lock);
  bool ok = phys_live_locked(handle);
  if (ok)
    phys_put_locked(handle);
  pthread_mutex_unlock(&vmm_lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a live physical memory handle", handle);
  return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
                                                   aclrtPhysicalMemProp *prop) {
  static const char fn[] = "aclrtMemGetAllocationPropertiesFromHandle";
  if (!handle || !prop)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     handle ? "prop" : "handle");
  pthread_mutex_lock(&vmm_lock);
  bool ok = phys_live_locked(handle);
  if (ok)
    *prop = ((struct phys *)handle)->prop;
  pthread_mutex_unlock(&vmm_lock);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not a live physical memory handle", handle);
  return ACL_SUCCESS;
}

/* ------------------------------------------------------ reserved ranges */

static struct reserve *reserve_of_locked(uintptr_t va, size_t n) {
  for (struct reserve *r = reserves; r; r = r->next)
    if (va >= r->start && va - r->start < r->size &&
        n <= r->size - (va - r->start))
      return r;
  return NULL;
}

static aclError reserve(const char *fn, void **virPtr, size_t size,
                        size_t alignment, void *expectPtr, uint64_t flags) {
  if (!virPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "virPtr is NULL");
  if (!size)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "size is 0");
  if (flags > 1) /* 1 is kept for compatibility (CANN) */
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "flags %llu is not 0",
                     (unsigned long long)flags);
  if (alignment & (alignment - 1))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "alignment %zu is not a power of two", alignment);
  size_t align = alignment > MB2 ? alignment : MB2;
  if (size > SIZE_MAX - 2 * align)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "size too large");
  size_t len = (size + MB2 - 1) / MB2 * MB2;
  void *p;
  if (expectPtr) {
    if ((uintptr_t)expectPtr % MB2)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "expectPtr %p is not 2 MiB aligned", expectPtr);
    p = mmap(expectPtr, len, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
             -1, 0);
    if (p == MAP_FAILED)
      return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                       "cannot reserve at %p: %s", expectPtr, strerror(errno));
  } else {
    /* over-reserve, then trim to an aligned start (2 MiB at least: the
     * granule of huge pages) */
    void *raw = mmap(NULL, len + align, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
      return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn,
                       "cannot reserve %zu bytes: %s", size, strerror(errno));
    uintptr_t a = ((uintptr_t)raw + align - 1) / align * align;
    if (a > (uintptr_t)raw)
      munmap(raw, a - (uintptr_t)raw);
    uintptr_t end = (uintptr_t)raw + len + align;
    if (end > a + len)
      munmap((void *)(a + len), end - (a + len));
    p = (void *)a;
  }
  struct reserve *r = calloc(1, sizeof *r);
  struct acl__ctx *c = acl__current_quiet();
  if (!r || acl__mem_track(p, len, ACL__MEM_VIRTUAL, c ? c->device : 0)) {
    free(r);
    munmap(p, len);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  r->start = (uintptr_t)p;
  r->size = len;
  /* EVRT_CHECK: new addresses, whatever lived there before (a freed
   * aclrtMalloc block the kernel gave the range back for) */
  evrt_check_alloc(p, len);
  pthread_mutex_lock(&vmm_lock);
  r->next = reserves;
  reserves = r;
  pthread_mutex_unlock(&vmm_lock);
  *virPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                void *expectPtr, uint64_t flags) {
  return reserve("aclrtReserveMemAddress", virPtr, size, alignment, expectPtr,
                 flags);
}

/* Without UCE-protected memory: the same range here (host memory has no
 * uncorrectable-error isolation to opt out of). */
aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size,
                                          size_t alignment, void *expectPtr,
                                          uint64_t flags) {
  return reserve("aclrtReserveMemAddressNoUCMemory", virPtr, size, alignment,
                 expectPtr, flags);
}

aclError aclrtReleaseMemAddress(void *virPtr) {
  static const char fn[] = "aclrtReleaseMemAddress";
  if (!virPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "virPtr is NULL");
  pthread_mutex_lock(&vmm_lock);
  struct reserve **pp = &reserves, *r = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)virPtr) {
      r = *pp;
      break;
    }
  aclError err = ACL_SUCCESS;
  if (!r)
    err = ACL_ERROR_RT_PARAM_INVALID;
  else if (r->maps)
    err = ACL_ERROR_RT_PARAM_INVALID;
  else {
    *pp = r->next;
    acl__mem_untrack(virPtr, ACL__MEM_VIRTUAL, NULL);
    /* gone for the program; the address range stays reserved while pages
     * of an unmap are still given to queued work (top of file) */
    r->released = true;
    reserve_idle_locked(r);
  }
  bool mapped = r && err;
  pthread_mutex_unlock(&vmm_lock);
  grave_flush();
  if (err)
    return acl__fail(err, fn, "%p %s", virPtr,
                     mapped ? "still has mappings: aclrtUnmapMem first"
                            : "is not the start of a reserved range");
  return ACL_SUCCESS;
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize) {
  static const char fn[] = "aclrtMemGetAddressRange";
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ptr is NULL");
  struct acl__blk b;
  if (!acl__mem_find(ptr, 1, &b))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not in memory of this layer", ptr);
  if (pbase)
    *pbase = (void *)b.start;
  if (psize)
    *psize = b.size;
  return ACL_SUCCESS;
}

/* --------------------------------------------------------------- mapping */

static aclError map(const char *fn, void *virPtr, size_t size, size_t offset,
                    aclrtDrvMemHandle handle, uint64_t flags, bool access) {
  if (!virPtr || !handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     virPtr ? "handle" : "virPtr");
  if (offset || flags)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "offset and flags must be 0 (offset %zu, flags %llu)",
                     offset, (unsigned long long)flags);
  /* a lowering, for a no-access map over pages an unmap keeps */
  struct unmap *low = access ? NULL : calloc(1, sizeof *low), *queue = NULL;
  pthread_mutex_lock(&vmm_lock);
  struct phys *p = handle;
  aclError err = ACL_ERROR_RT_PARAM_INVALID;
  const char *why = NULL;
  struct reserve *r = NULL;
  struct mapping *m = NULL;
  if (!phys_live_locked(p))
    why = "the handle is not live physical memory";
  else if (size != p->size)
    why = "size must equal the physical allocation's size";
  else if ((uintptr_t)virPtr % page_size())
    why = "virPtr is not page aligned";
  else if (!(r = reserve_of_locked((uintptr_t)virPtr, size)))
    why = "the range is not inside one reserved range";
  if (!why)
    for (struct mapping *x = r->maps; x; x = x->next)
      if ((uintptr_t)virPtr < x->va + x->size && x->va < (uintptr_t)virPtr + size)
        why = "the range overlaps a mapping";
  /* Pages of an unmap may still be under a synchronous copy or an enqueue
   * that checked them (a user of the reservation): the new mapping waits
   * for those calls to end (they are short and wait on nothing), so none
   * sees its pages replaced mid-copy.  Work already queued is not waited
   * for: it uses what is mapped when it runs (top of file). */
  for (unsigned spins = 0; !why && r->users && unmap_overlaps_locked(r, (uintptr_t)virPtr, size);
       spins++) {
    pthread_mutex_unlock(&vmm_lock);
    if (spins < 16)
      sched_yield();
    else
      usleep(50);
    pthread_mutex_lock(&vmm_lock);
    /* the reservation may have been released meanwhile */
    if (!phys_live_locked(p))
      why = "the handle is not live physical memory";
    else if (!(r = reserve_of_locked((uintptr_t)virPtr, size)))
      why = "the range is not inside one reserved range";
    for (struct mapping *x = r ? r->maps : NULL; !why && x; x = x->next)
      if ((uintptr_t)virPtr < x->va + x->size && x->va < (uintptr_t)virPtr + size)
        why = "the range overlaps a mapping";
  }
  if (!why && !(m = calloc(1, sizeof *m))) {
    err = ACL_ERROR_RT_MEMORY_ALLOCATION;
    why = "out of memory";
  }
  if (!why) {
    /* the data part only: the metadata page stays out of reach */
    size_t len = (size + page_size() - 1) / page_size() * page_size();
    /* No access: inaccessible at once, unless an unmap keeps these pages
     * for work queued before it, which may write them: then writable until
     * that work has passed (a lowering; top of file). */
    bool later = !access && low &&
                 unmap_overlaps_locked(r, (uintptr_t)virPtr, len);
    int prot = access || later ? PROT_READ | PROT_WRITE : PROT_NONE;
    void *q = mmap(virPtr, len, prot, MAP_SHARED | MAP_FIXED, p->fd, 0);
    if (q == MAP_FAILED) {
      err = ACL_ERROR_RT_MEMORY_ALLOCATION;
      why = strerror(errno);
      free(m);
    } else {
      *m = (struct mapping){(uintptr_t)virPtr, len, p,
                            access ? ACL_RT_MEM_ACCESS_FLAGS_READWRITE
                                   : ACL_RT_MEM_ACCESS_FLAGS_NONE,
                            prot, ++mapping_gen, r->maps};
      r->maps = m;
      p->maps++;
      /* EVRT_CHECK: the mapping is a block of its range, its life
       * starting here (a remap starts a new one).  Under vmm_lock, so that
       * the checker sees the lives of a range in the order of the maps
       * and unmaps that made them. */
      evrt_check_alloc(virPtr, len);
      if (later) {
        *low = (struct unmap){r, m->va, len, NULL, m->gen,
                              r->users ? UNMAP_HELD : UNMAP_QUEUED,
                              r->unmaps, NULL};
        r->unmaps = low;
        if (!r->users)
          queue = low;
        low = NULL;
      }
    }
  }
  pthread_mutex_unlock(&vmm_lock);
  free(low);
  if (why)
    return acl__fail(err, fn, "%s", why);
  unmap_queue(queue); /* QUEUED: only unmap_passed finishes it */
  return ACL_SUCCESS;
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                     aclrtDrvMemHandle handle, uint64_t flags) {
  return map("aclrtMapMem", virPtr, size, offset, handle, flags, true);
}

aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset,
                             aclrtDrvMemHandle handle, uint64_t flags) {
  return map("aclrtMemMapNoAccess", virPtr, size, offset, handle, flags,
             false);
}

/* The mapping that starts at va (vmm_lock held), with its range. */
static struct mapping *mapping_at_locked(uintptr_t va, struct reserve **rr,
                                         struct mapping ***link) {
  for (struct reserve *r = reserves; r; r = r->next)
    for (struct mapping **pp = &r->maps; *pp; pp = &(*pp)->next)
      if ((*pp)->va == va) {
        if (rr)
          *rr = r;
        if (link)
          *link = pp;
        return *pp;
      }
  return NULL;
}

aclError aclrtUnmapMem(void *virPtr) {
  static const char fn[] = "aclrtUnmapMem";
  if (!virPtr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "virPtr is NULL");
  struct unmap *u = calloc(1, sizeof *u);
  bool queue = false;
  pthread_mutex_lock(&vmm_lock);
  struct mapping **link;
  struct reserve *r = NULL;
  struct mapping *m = mapping_at_locked((uintptr_t)virPtr, &r, &link);
  if (m) {
    *link = m->next; /* unmapped for the program: checks fail from now */
    /* EVRT_CHECK: the end of the mapping's life, at this call, in the
     * order of no stream: work enqueued before it and not ordered before
     * it (a kernel still writing the range) is a use after free, whether
     * it ran before the call or runs on the pages kept for it (top of
     * file).  No release: the pages are the reservation's, and its shadow
     * is forgotten when the reservation goes (grave_flush).  Under
     * vmm_lock, as the map's allocation. */
    evrt_check_free(virPtr, m->size, NULL);
    if (!u)
      u = calloc(1, sizeof *u); /* malloc may work again */
    if (u) {
      /* the pages stay for what is queued (top of file) */
      *u = (struct unmap){r, m->va, m->size, m->phys, 0,
                          r->users ? UNMAP_HELD : UNMAP_QUEUED, r->unmaps,
                          NULL};
      r->unmaps = u;
      queue = !r->users;
    } else { /* no memory to defer: back to an inaccessible reservation */
      mmap(virPtr, m->size, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      m->phys->maps--;
      if (!m->phys->refs) { /* freed while mapped: now it can go */
        m->phys->refs = 1;
        phys_put_locked(m->phys);
      }
    }
    free(m);
  }
  pthread_mutex_unlock(&vmm_lock);
  if (!m) {
    free(u);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not the start of a mapping", virPtr);
  }
  if (queue)
    unmap_queue(u); /* u is QUEUED: only unmap_passed finishes it */
  return ACL_SUCCESS;
}

aclError aclrtMemRetainAllocationHandle(void *virPtr,
                                        aclrtDrvMemHandle *handle) {
  static const char fn[] = "aclrtMemRetainAllocationHandle";
  if (!virPtr || !handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     virPtr ? "handle" : "virPtr");
  pthread_mutex_lock(&vmm_lock);
  struct mapping *m = mapping_at_locked((uintptr_t)virPtr, NULL, NULL);
  if (m) {
    m->phys->refs++; /* released by aclrtFreePhysical */
    *handle = m->phys;
  }
  pthread_mutex_unlock(&vmm_lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not the start of a mapping", virPtr);
  return ACL_SUCCESS;
}

static int prot_of(uint64_t flags) {
  return flags == ACL_RT_MEM_ACCESS_FLAGS_READWRITE ? PROT_READ | PROT_WRITE
         : flags == ACL_RT_MEM_ACCESS_FLAGS_READ    ? PROT_READ
                                                    : PROT_NONE;
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc,
                           size_t count) {
  static const char fn[] = "aclrtMemSetAccess";
  if (!virPtr || !desc)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s is NULL",
                     virPtr ? "desc" : "virPtr");
  if (!count)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "count is 0");
  for (size_t i = 0; i < count; i++) {
    aclrtMemAccessFlags f = desc[i].flags;
    if (f != ACL_RT_MEM_ACCESS_FLAGS_NONE && f != ACL_RT_MEM_ACCESS_FLAGS_READ &&
        f != ACL_RT_MEM_ACCESS_FLAGS_READWRITE)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "desc[%zu].flags %d is unknown", i, (int)f);
    if (desc[i].location.type == ACL_MEM_LOCATION_TYPE_DEVICE &&
        !acl__device_ok(desc[i].location.id))
      return acl__bad_device(fn, desc[i].location.id,
                             ACL_ERROR_RT_PARAM_INVALID);
    if (desc[i].location.type != ACL_MEM_LOCATION_TYPE_DEVICE &&
        desc[i].location.type != ACL_MEM_LOCATION_TYPE_HOST)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "desc[%zu].location.type %d is not host or device", i,
                       (int)desc[i].location.type);
  }
  struct unmap *low = calloc(1, sizeof *low), *queue = NULL;
  pthread_mutex_lock(&vmm_lock);
  struct reserve *r = NULL;
  struct mapping *m = mapping_at_locked((uintptr_t)virPtr, &r, NULL);
  bool ok = m && (size + page_size() - 1) / page_size() * page_size() == m->size;
  if (ok) {
    /* one address space: every location sees the last entry's access */
    uint64_t f = desc[count - 1].flags;
    int prot = prot_of(f);
    m->access = f; /* the checks: at once */
    if ((m->prot & ~prot) == 0 || !low) {
      /* raised (or the same): the pages at once; lowered without memory
       * for the record: at once too */
      m->prot = prot;
      mprotect(virPtr, m->size, prot);
    } else {
      /* lowered: work queued before may still use the old access */
      *low = (struct unmap){r, m->va, m->size, NULL, m->gen,
                            r->users ? UNMAP_HELD : UNMAP_QUEUED, r->unmaps,
                            NULL};
      r->unmaps = low;
      if (!r->users)
        queue = low;
      low = NULL;
    }
  }
  pthread_mutex_unlock(&vmm_lock);
  free(low);
  if (!ok)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "[%p, +%zu) is not exactly one mapping", virPtr, size);
  unmap_queue(queue); /* at once when nothing is queued anywhere */
  return ACL_SUCCESS;
}

aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location,
                           uint64_t *flag) {
  static const char fn[] = "aclrtMemGetAccess";
  if (!virPtr || !location || !flag)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "virPtr, location and flag must not be NULL");
  if (location->type != ACL_MEM_LOCATION_TYPE_HOST &&
      location->type != ACL_MEM_LOCATION_TYPE_DEVICE)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "location type %d is not host or device",
                     (int)location->type);
  pthread_mutex_lock(&vmm_lock);
  struct mapping *m = mapping_at_locked((uintptr_t)virPtr, NULL, NULL);
  if (m)
    *flag = m->access;
  pthread_mutex_unlock(&vmm_lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "%p is not the start of a mapping", virPtr);
  return ACL_SUCCESS;
}

/* ------------------------------------------------------ export / import */

/* 64-bit shareable handles: pid (22 bits) | fd (20 bits) | nonce (22). */
static uint64_t pack(int32_t pid, int fd, uint32_t nonce) {
  return ((uint64_t)(uint32_t)pid << 42) | ((uint64_t)(uint32_t)fd << 22) |
         (nonce & 0x3fffffu);
}

static void unpack(uint64_t h, int32_t *pid, int *fd, uint32_t *nonce) {
  *pid = (int32_t)(h >> 42);
  *fd = (int)((h >> 22) & 0xfffffu);
  *nonce = (uint32_t)(h & 0x3fffffu);
}

struct fabric {
  uint64_t magic;
  int32_t pid;
  int32_t fd;
  uint32_t nonce;
};

static aclError export_handle(const char *fn, aclrtDrvMemHandle handle,
                              uint64_t flags, uint64_t *out) {
  if (!handle || !out)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     handle ? "shareableHandle" : "handle");
  if (flags != ACL_RT_VMM_EXPORT_FLAG_DEFAULT &&
      flags != ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown flags %llu",
                     (unsigned long long)flags);
  pthread_mutex_lock(&vmm_lock);
  struct phys *p = handle;
  const char *why = NULL;
  if (!phys_live_locked(p))
    why = "not a live physical memory handle";
  else if (p->imported)
    why = "an imported handle cannot be exported again";
  else if (p->exported)
    why = "exported already (one shareable handle per allocation)";
  else if (p->fd >= (1 << 20) || getpid() >= (1 << 22))
    why = "the fd or pid does not fit a shareable handle";
  if (!why) {
    void *mp = mmap(NULL, sizeof(struct meta), PROT_READ | PROT_WRITE,
                    MAP_SHARED, p->fd, (off_t)p->data_len);
    if (mp == MAP_FAILED) {
      why = strerror(errno);
    } else {
      struct meta *m = mp;
      uint32_t nonce = 0;
      if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
        nonce = (uint32_t)(uintptr_t)p ^ (uint32_t)getpid();
      nonce &= 0x3fffffu;
      m->exporter_pid = (int32_t)getpid();
      m->size = p->size;
      m->nonce = nonce;
      m->no_pid_check = flags == ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION;
      m->npids = 0;
      __atomic_store_n(&m->magic, META_MAGIC, __ATOMIC_RELEASE);
      p->meta = m;
      p->exported = true;
      p->shareable = pack(m->exporter_pid, p->fd, nonce);
      *out = p->shareable;
    }
  }
  pthread_mutex_unlock(&vmm_lock);
  if (why)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s", why);
  return ACL_SUCCESS;
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                         aclrtMemHandleType handleType,
                                         uint64_t flags,
                                         uint64_t *shareableHandle) {
  static const char fn[] = "aclrtMemExportToShareableHandle";
  if (handleType != ACL_MEM_HANDLE_TYPE_NONE)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "handleType must be ACL_MEM_HANDLE_TYPE_NONE");
  return export_handle(fn, handle, flags, shareableHandle);
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle,
                                           uint64_t flags,
                                           aclrtMemSharedHandleType shareType,
                                           void *shareableHandle) {
  static const char fn[] = "aclrtMemExportToShareableHandleV2";
  if (!shareableHandle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "shareableHandle is NULL");
  if (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT &&
      shareType != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown shareType %d",
                     (int)shareType);
  uint64_t h;
  aclError r = export_handle(fn, handle, flags, &h);
  if (r)
    return r;
  if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) {
    memcpy(shareableHandle, &h, sizeof h);
  } else {
    aclrtMemFabricHandle fh;
    memset(&fh, 0, sizeof fh);
    struct fabric f;
    f.magic = META_MAGIC;
    unpack(h, &f.pid, &f.fd, &f.nonce);
    memcpy(fh.data, &f, sizeof f);
    memcpy(shareableHandle, &fh, sizeof fh);
  }
  return ACL_SUCCESS;
}

/* The exported allocation of this process behind a shareable handle
 * (vmm_lock held). */
static struct phys *exported_locked(uint64_t h) {
  for (struct phys *p = phys_list; p; p = p->next)
    if (p->refs && p->exported && p->shareable == h)
      return p;
  return NULL;
}

static aclError set_pids(const char *fn, uint64_t h, int32_t *pid,
                         size_t num) {
  if (!pid || !num)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s",
                     pid ? "pidNum is 0" : "pid is NULL");
  pthread_mutex_lock(&vmm_lock);
  struct phys *p = exported_locked(h);
  const char *why = NULL;
  if (!p)
    why = "not a shareable handle exported by this process";
  else if (p->meta->npids + num > META_PIDS)
    why = "the whitelist is full (1000 pids)";
  if (!why) {
    for (size_t i = 0; i < num; i++)
      p->meta->pids[p->meta->npids + i] = pid[i];
    /* release: an importer that sees the count sees the pids */
    __atomic_store_n(&p->meta->npids, p->meta->npids + (uint32_t)num,
                     __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&vmm_lock);
  if (why)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s", why);
  return ACL_SUCCESS;
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
                                         int32_t *pid, size_t pidNum) {
  return set_pids("aclrtMemSetPidToShareableHandle", shareableHandle, pid,
                  pidNum);
}

/* Decode either kind of shareable handle into the 64-bit form. */
static aclError decode(const char *fn, const void *sh,
                       aclrtMemSharedHandleType type, uint64_t *h) {
  if (type == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) {
    memcpy(h, sh, sizeof *h);
    return ACL_SUCCESS;
  }
  if (type != ACL_MEM_SHARE_HANDLE_TYPE_FABRIC)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "unknown shareType %d",
                     (int)type);
  struct fabric f;
  memcpy(&f, sh, sizeof f);
  if (f.magic != META_MAGIC || f.pid < 0 || f.fd < 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "not a fabric handle exported by evrt");
  *h = pack(f.pid, f.fd, f.nonce);
  return ACL_SUCCESS;
}

aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
                                           aclrtMemSharedHandleType shareType,
                                           int32_t *pid, size_t pidNum) {
  static const char fn[] = "aclrtMemSetPidToShareableHandleV2";
  if (!shareableHandle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "shareableHandle is NULL");
  uint64_t h;
  aclError r = decode(fn, shareableHandle, shareType, &h);
  if (r)
    return r;
  return set_pids(fn, h, pid, pidNum);
}

static aclError import(const char *fn, uint64_t h, int32_t deviceId,
                       aclrtDrvMemHandle *handle) {
  if (!handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "handle is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  int32_t pid;
  int fd;
  uint32_t nonce;
  unpack(h, &pid, &fd, &nonce);
  if (pid == (int32_t)getpid())
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "export and import in one process are not supported "
                     "(CANN): map the handle itself");
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
  int mine = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (mine < 0 || fstat(mine, &st) != 0 || st.st_size < (off_t)page_size()) {
    if (mine >= 0)
      close(mine);
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "shareable handle 0x%llx: the exporter or its memory is "
                     "gone",
                     (unsigned long long)h);
  }
  size_t data_len = (size_t)st.st_size - page_size(), size = 0;
  struct meta *m = mmap(NULL, sizeof *m, PROT_READ, MAP_SHARED, mine,
                        (off_t)data_len);
  const char *why = NULL;
  aclError err = ACL_ERROR_RT_PARAM_INVALID;
  if (m == MAP_FAILED) {
    m = NULL;
    why = "cannot read the allocation's metadata";
  } else if (__atomic_load_n(&m->magic, __ATOMIC_ACQUIRE) != META_MAGIC ||
             m->exporter_pid != pid || m->nonce != nonce) {
    why = "not a shareable handle exported by evrt (or a stale one)";
  } else if (!m->no_pid_check) {
    uint32_t n = __atomic_load_n(&m->npids, __ATOMIC_ACQUIRE);
    bool listed = false;
    for (uint32_t i = 0; i < n && i < META_PIDS && !listed; i++)
      listed = m->pids[i] == (int32_t)getpid();
    if (!listed) {
      err = ACL_ERROR_RT_NO_PERMISSION;
      why = "this process is not on the exporter's pid whitelist";
    }
  }
  if (m) {
    size = (size_t)m->size;
    munmap(m, sizeof *m);
  }
  if (!why && (size == 0 || size > data_len))
    why = "the allocation's metadata is corrupt";
  if (why) {
    close(mine);
    return acl__fail(err, fn, "%s", why);
  }
  aclrtPhysicalMemProp prop = {0};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_NORMAL;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = (uint32_t)deviceId;
  struct phys *p = phys_new(mine, size, &prop);
  if (!p) {
    close(mine);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  p->imported = true;
  pthread_mutex_lock(&vmm_lock);
  p->next = phys_list;
  phys_list = p;
  pthread_mutex_unlock(&vmm_lock);
  *handle = p;
  return ACL_SUCCESS;
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
                                           int32_t deviceId,
                                           aclrtDrvMemHandle *handle) {
  return import("aclrtMemImportFromShareableHandle", shareableHandle,
                deviceId, handle);
}

aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
                                             aclrtMemSharedHandleType shareType,
                                             uint64_t flags,
                                             aclrtDrvMemHandle *handle) {
  static const char fn[] = "aclrtMemImportFromShareableHandleV2";
  if (!shareableHandle || !handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     shareableHandle ? "handle" : "shareableHandle");
  if (flags)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "flags is reserved and must be 0");
  uint64_t h;
  aclError r = decode(fn, shareableHandle, shareType, &h);
  if (r)
    return r;
  struct acl__ctx *c = acl__current_quiet();
  return import(fn, h, c ? c->device : 0, handle);
}
