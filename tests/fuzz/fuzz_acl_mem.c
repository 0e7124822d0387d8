/*
 * fuzz_acl_mem.c - libFuzzer target for the calls of acl/acl.h that take
 * pointers and sizes: allocation and free, every copy and fill (sync,
 * async, 2-D, batch, with offset, with a descriptor, 32-bit fills, value
 * writes), virtual and physical memory (reserve, map, unmap, access,
 * release), registration and the pointer queries.
 *
 * An input is a byte string decoded into up to 128 calls (an opcode byte,
 * then the bytes its arguments read; missing bytes read as 0) over a small
 * state: 8 block slots (aclrtMalloc / aclrtMallocHost), the blocks freed
 * lately, 2 reserved ranges of 4 MiB with 2 MiB halves mapped or not, 2
 * physical allocations, one stream, a 64 KiB host region of the fuzzer's own
 * between PROT_NONE guards, and bad pointers: NULL, low addresses, a guard
 * page, non-canonical addresses, freed blocks, reserved ranges with nothing
 * mapped.  Pointers are a slot, region or range plus an offset; sizes fit,
 * run past the end by a little, or are huge.
 *
 * Checked: every call returns ACL_SUCCESS or an aclError (100000-599999);
 * a copy or fill with a bad side and something to do is never ACL_SUCCESS;
 * no crash, hang or sanitizer report.  Host pointers never leave the
 * fuzzer's own region except into a guard page (the layer takes host memory
 * the whole range of which is accessible: a range running from one buffer
 * into the next would be a real copy the fuzzer asked for).  Each input
 * cleans up: the device synchronized, mappings, physical memory, ranges,
 * registrations and blocks released.
 *
 * Built by tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined
 * (the core and src/acl compiled in); replay_main.c runs the committed
 * corpus (tests/fuzz/corpus/fuzz_acl_mem, written by gen_corpus.py) in
 * CTest with any compiler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <acl/acl.h>
#include <evrt.h> /* evrt_device_launch_host_func: drain the releases */

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBLK 8
#define NSTALE 16
#define NRES 2
#define NPHYS 2
#define MAXOPS 128
#define MB2 ((size_t)2 << 20)
#define PLAIN_SZ ((size_t)64 << 10)
#define FRESH_FREES 32 /* a freed pointer is used while this recent: the
                          layer knows its last 64 frees (docs/acl.md) */

struct in {
  const uint8_t *p;
  size_t n;
};
static uint8_t next(struct in *in) {
  if (!in->n)
    return 0;
  in->n--;
  return *in->p++;
}
static uint64_t nextn(struct in *in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)next(in) << (8 * i);
  return v;
}

static struct {
  unsigned char *p;
  size_t size;
  bool host;
} blk[NBLK];
static struct {
  unsigned char *p;
  size_t size;
  unsigned long at; /* nfrees when it was freed */
} stale[NSTALE];
static unsigned long nfrees;
static unsigned char *plain, *guard; /* guard: the PROT_NONE page before */
static struct {
  unsigned char *va;
  int map[2]; /* physical slot mapped on each half, -1 none */
} res[NRES];
static aclrtDrvMemHandle phys[NPHYS];
static int phys_maps[NPHYS];
static bool registered;
static aclrtStream streams[1];

static bool documented(aclError r) {
  return r == ACL_SUCCESS || (r >= 100000 && r < 600000);
}

#define CHECK(call)                                                            \
  do {                                                                         \
    aclError r_ = (call);                                                      \
    if (!documented(r_)) {                                                     \
      fprintf(stderr, "fuzz_acl_mem: line %d: %s returned %d\n", __LINE__,   \
              #call, (int)r_);                                                 \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* A bad side with work to do must be refused. */
#define CHECK_REFUSED(call, bad)                                               \
  do {                                                                         \
    aclError r_ = (call);                                                      \
    if (!documented(r_) || ((bad) && r_ == ACL_SUCCESS)) {                     \
      fprintf(stderr, "fuzz_acl_mem: line %d: %s returned %d%s\n", __LINE__, \
              #call, (int)r_, (bad) ? " with a bad pointer" : "");           \
      abort();                                                                 \
    }                                                                          \
  } while (0)

struct ptr {
  unsigned char *p;
  size_t room; /* bytes from p that are memory (0 when bad or unknown) */
  bool bad;    /* no memory the call may touch */
};

static bool overlaps_live(const unsigned char *p, size_t n) {
  for (int i = 0; i < NBLK; i++)
    if (blk[i].p && p < blk[i].p + blk[i].size + 64 && blk[i].p < p + n + 64)
      return true;
  return false;
}

static bool in_reserved(const unsigned char *p, size_t n) {
  for (int k = 0; k < NRES; k++)
    if (res[k].va && p < res[k].va + 2 * MB2 && res[k].va < p + n)
      return true;
  return false;
}

static bool res_unmapped(int r) {
  return res[r].map[0] < 0 && res[r].map[1] < 0;
}

static struct ptr pick(struct in *in) {
  uint8_t b = next(in);
  struct ptr r = {NULL, 0, true};
  switch (b % 10) {
  case 0:
  case 1:
  case 2: {
    int i = (b >> 4) % NBLK;
    if (blk[i].p) {
      /* inside the block: a pointer at its end would be the heap's next
       * chunk, host memory the layer rightly takes */
      size_t off = (size_t)nextn(in, 2) % blk[i].size;
      r = (struct ptr){blk[i].p + off, blk[i].size - off, false};
      return r;
    }
  } /* fall through: an empty slot is the plain region */
  /* FALLTHRU */
  case 3: {
    size_t off = (size_t)nextn(in, 2) % PLAIN_SZ;
    r = (struct ptr){plain + off, PLAIN_SZ - off, false};
    return r;
  }
  case 4: {
    int k = (b >> 4) % NRES;
    if (res[k].va) {
      size_t off = (size_t)nextn(in, 3) % (2 * MB2);
      int half = (int)(off / MB2);
      bool mapped = res[k].map[half] >= 0;
      r = (struct ptr){res[k].va + off, mapped ? (half + 1) * MB2 - off : 0,
                       res_unmapped(k)};
      return r;
    }
    r.p = NULL; /* NULL */
    return r;
  }
  case 5: {
    int i = (b >> 4) % NSTALE;
    if (stale[i].p && nfrees - stale[i].at < FRESH_FREES &&
        !overlaps_live(stale[i].p, stale[i].size) &&
        !in_reserved(stale[i].p, stale[i].size + 64)) {
      r.p = stale[i].p + (size_t)next(in) % stale[i].size;
      return r; /* freed */
    }
    r.p = guard + next(in); /* else the guard */
    return r;
  }
  case 6:
    r.p = guard + (size_t)nextn(in, 2) % 4096;
    return r;
  case 7:
    r.p = (unsigned char *)(uintptr_t)(nextn(in, 2) % 4096); /* NULL, low */
    return r;
  case 8:
    r.p = (unsigned char *)(uintptr_t)(0xdead000000000000ull | nextn(in, 4));
    return r;
  default:
    r.p = plain + PLAIN_SZ - 1 - (size_t)next(in) % 64; /* into a guard */
    r.room = PLAIN_SZ - (size_t)(r.p - plain);
    r.bad = false;
    return r;
  }
}

/* A size for a side with `room` bytes: small, exact, a little past, huge. */
static size_t pick_size(struct in *in, size_t room) {
  uint8_t b = next(in);
  switch (b % 5) {
  case 0:
    return next(in);
  case 1:
    return room;
  case 2:
    return room + 1 + next(in);
  case 3:
    return (size_t)nextn(in, 8);
  default:
    return (size_t)nextn(in, 2);
  }
}

/* One stream takes every async call, and a host-side access (a sync copy
 * or fill, a map, the fuzzer's own writes) first drains it: two streams, or
 * the host and a stream, on the same bytes unordered would be the
 * program's own race (ThreadSanitizer replays the corpus).  Frees, unmaps,
 * releases and access changes are left unordered on purpose: the layer
 * must keep queued work safe from them. */
static aclrtStream pick_stream(struct in *in) {
  (void)next(in);
  return streams[0];
}

static void quiesce(void) { CHECK(aclrtSynchronizeStream(streams[0])); }

static void free_slot(int i) {
  if (!blk[i].p)
    return;
  CHECK(blk[i].host ? aclrtFreeHost(blk[i].p) : aclrtFree(blk[i].p));
  stale[nfrees % NSTALE].p = blk[i].p;
  stale[nfrees % NSTALE].size = blk[i].size;
  stale[nfrees % NSTALE].at = nfrees;
  nfrees++;
  blk[i].p = NULL;
}

enum {
  OP_MALLOC, OP_FREE, OP_MEMCPY, OP_MEMCPY_ASYNC, OP_MEMSET, OP_MEMSET_ASYNC,
  OP_2D, OP_2D_ASYNC, OP_D32, OP_BATCH, OP_OFFSET, OP_DESC, OP_RESERVE,
  OP_PHYS, OP_MAP, OP_UNMAP, OP_ACCESS, OP_RELEASE, OP_QUERY, OP_REGISTER,
  OP_VALUE, OP_SYNC, NOPS
};

static void op_vmm(int op, struct in *in) {
  int k = next(in) % NRES, half = next(in) % 2, j = next(in) % NPHYS;
  switch (op) {
  case OP_RESERVE:
    if (!res[k].va) {
      void *va = NULL;
      uint8_t b = next(in);
      void *expect = b % 4 == 3 ? (void *)(uintptr_t)(nextn(in, 2) << 21)
                                : NULL;
      aclError r = aclrtReserveMemAddress(&va, b % 4 == 0 ? MB2 : 2 * MB2,
                                          (size_t)1 << (b % 24), expect, 0);
      CHECK(r);
      if (r == ACL_SUCCESS && b % 4 == 0) {
        CHECK(aclrtReleaseMemAddress(va)); /* only 4 MiB ones are kept */
      } else if (r == ACL_SUCCESS) {
        res[k].va = va;
        res[k].map[0] = res[k].map[1] = -1;
      }
    }
    break;
  case OP_PHYS:
    if (!phys[j]) {
      aclrtPhysicalMemProp p;
      memset(&p, 0, sizeof p);
      p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
      p.memAttr = ACL_HBM_MEM_HUGE;
      p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
      aclError r = aclrtMallocPhysical(&phys[j], MB2, &p, 0);
      CHECK(r);
      if (r)
        phys[j] = NULL;
    } else if (!phys_maps[j]) {
      CHECK(aclrtFreePhysical(phys[j]));
      phys[j] = NULL;
    }
    break;
  case OP_MAP:
    if (res[k].va && phys[j] && res[k].map[half] < 0) {
      quiesce(); /* new pages under a queued copy: a race of the program */
      bool noaccess = next(in) & 1;
      aclError r = (noaccess ? aclrtMemMapNoAccess : aclrtMapMem)(
          res[k].va + half * MB2, MB2, 0, phys[j], 0);
      CHECK(r);
      if (r == ACL_SUCCESS) {
        /* no access counts as unmapped for the oracle only when both
         * halves are unmapped, so keep the bookkeeping simple: a
         * no-access map is unmapped again at once */
        if (noaccess) {
          CHECK(aclrtUnmapMem(res[k].va + half * MB2));
        } else {
          res[k].map[half] = j;
          phys_maps[j]++;
        }
      }
    }
    break;
  case OP_UNMAP:
    if (res[k].va) {
      aclError r = aclrtUnmapMem(res[k].va + half * MB2 + next(in) % 2);
      CHECK(r);
      if (r == ACL_SUCCESS && res[k].map[half] >= 0) {
        phys_maps[res[k].map[half]]--;
        res[k].map[half] = -1;
      }
    }
    break;
  case OP_ACCESS:
    if (res[k].va) {
      aclrtMemAccessDesc d;
      memset(&d, 0, sizeof d);
      d.flags = (aclrtMemAccessFlags)(next(in) % 5);
      d.location.type = (aclrtMemLocationType)(next(in) % 3);
      /* READWRITE again right after: the oracle takes mapped halves as
       * writable */
      CHECK(aclrtMemSetAccess(res[k].va + half * MB2, MB2, &d, 1));
      d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
      d.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
      if (res[k].map[half] >= 0)
        CHECK(aclrtMemSetAccess(res[k].va + half * MB2, MB2, &d, 1));
    }
    break;
  case OP_RELEASE:
    if (res[k].va) {
      aclError r = aclrtReleaseMemAddress(res[k].va);
      CHECK(r);
      if (r == ACL_SUCCESS)
        res[k].va = NULL;
      else if (res_unmapped(k)) {
        fprintf(stderr, "fuzz_acl_mem: release of an unmapped range: %d\n",
                (int)r);
        abort();
      }
    }
    break;
  }
}

static void op_query(struct in *in) {
  struct ptr a = pick(in);
  aclrtPtrAttributes at;
  CHECK(aclrtPointerGetAttributes(a.p, &at));
  void *list[2] = {a.p, pick(in).p};
  uint32_t result = 0;
  CHECK(aclrtCheckMemType(list, 2, next(in) & 0x1fu, &result, 0));
  void *base = NULL;
  size_t size = 0;
  CHECK(aclrtMemGetAddressRange(a.p, &base, &size));
  aclrtMemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = (aclrtMemLocationType)(next(in) % 3);
  uint64_t flag = 0;
  CHECK(aclrtMemGetAccess(a.p, &loc, &flag));
  aclrtDrvMemHandle h = NULL;
  aclError r = aclrtMemRetainAllocationHandle(a.p, &h);
  CHECK(r);
  if (r == ACL_SUCCESS)
    CHECK(aclrtFreePhysical(h)); /* the retain's reference */
  CHECK(aclrtMemFlush(a.p, pick_size(in, a.room)));
  CHECK(aclrtMemInvalidate(a.p, pick_size(in, a.room)));
}

static void op_copies(int op, struct in *in) {
  struct ptr d = pick(in), s = pick(in);
  size_t n = pick_size(in, d.room < s.room ? d.room : s.room);
  size_t max = next(in) & 1 ? n : pick_size(in, d.room);
  aclrtMemcpyKind kind = (aclrtMemcpyKind)(next(in) % 8);
  bool bad = (d.bad || s.bad) && n > 0 && max >= n;
  if (op == OP_MEMCPY || op == OP_MEMSET || op == OP_2D ||
      op == OP_D32 || op == OP_BATCH || op == OP_OFFSET || op == OP_DESC)
    quiesce(); /* the host touches memory (or may: D32 and batch) */
  switch (op) {
  case OP_MEMCPY:
    CHECK_REFUSED(aclrtMemcpy(d.p, max, s.p, n, kind), bad);
    break;
  case OP_MEMCPY_ASYNC:
    CHECK_REFUSED(aclrtMemcpyAsync(d.p, max, s.p, n, kind, pick_stream(in)),
                  bad);
    break;
  case OP_MEMSET:
    CHECK_REFUSED(aclrtMemset(d.p, max, (int32_t)next(in), n),
                  d.bad && n > 0 && max >= n);
    break;
  case OP_MEMSET_ASYNC:
    CHECK_REFUSED(
        aclrtMemsetAsync(d.p, max, (int32_t)next(in), n, pick_stream(in)),
        d.bad && n > 0 && max >= n);
    break;
  case OP_2D:
  case OP_2D_ASYNC: {
    size_t w = n % 4096, h = next(in) % 16 ? next(in) % 64 : (size_t)nextn(in, 4);
    size_t dp = w + next(in) % 512, sp = w + next(in) % 512;
    if (next(in) % 8 == 0)
      dp = (size_t)nextn(in, 8);
    bool bad2 = (d.bad || s.bad) && w && h;
    if (op == OP_2D)
      CHECK_REFUSED(aclrtMemcpy2d(d.p, dp, s.p, sp, w, h, kind), bad2);
    else
      CHECK_REFUSED(aclrtMemcpy2dAsync(d.p, dp, s.p, sp, w, h, kind,
                                       pick_stream(in)),
                    bad2);
    break;
  }
  case OP_D32: {
    size_t cnt = n / 4;
    bool async = next(in) & 1;
    bool badd = d.bad && cnt > 0 && max / 4 >= cnt;
    if (async)
      CHECK_REFUSED(aclrtMemsetD32Async(d.p, max, (uint32_t)n, cnt,
                                        pick_stream(in)),
                    badd);
    else
      CHECK_REFUSED(aclrtMemsetD32(d.p, max, (uint32_t)n, cnt), badd);
    break;
  }
  case OP_BATCH: {
    void *dsts[2] = {d.p, pick(in).p}, *srcs[2] = {s.p, pick(in).p};
    size_t sizes[2] = {n, next(in)}, maxs[2] = {max, 256};
    size_t idx[2] = {0, 1}, fail = 0;
    aclrtMemcpyBatchAttr a[2];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 2; i++) {
      a[i].srcLoc.type = (aclrtMemLocationType)(next(in) % 3);
      a[i].dstLoc.type = (aclrtMemLocationType)(next(in) % 3);
    }
    size_t nb = 1 + next(in) % 2, na = 1 + next(in) % nb;
    bool badb = (d.bad || s.bad) && n > 0 && max >= n;
    if (next(in) & 1)
      CHECK_REFUSED(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, nb, a, idx,
                                          na, &fail, pick_stream(in)),
                    badb);
    else
      CHECK_REFUSED(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, nb, a, idx, na,
                                     &fail),
                    badb);
    break;
  }
  case OP_OFFSET: {
    /* the address slots live in a device block of 16 bytes or more */
    int i = next(in) % NBLK;
    if (!blk[i].p || blk[i].host || blk[i].size < 16)
      break;
    void **slots = (void **)blk[i].p;
    slots[0] = d.p;
    slots[1] = s.p;
    CHECK(aclrtMemcpyAsyncWithOffset(&slots[0], max, next(in), (const void **)&slots[1],
                                     n, next(in), (aclrtMemcpyKind)(6 + next(in) % 2),
                                     pick_stream(in)));
    /* the task reads the slots when it runs: keep them until then */
    CHECK(aclrtSynchronizeDevice());
    break;
  }
  case OP_DESC: {
    int i = next(in) % NBLK;
    struct ptr desc = pick(in);
    void *dp = blk[i].p && blk[i].size >= 64 && (next(in) & 1) ? blk[i].p
                                                               : desc.p;
    CHECK_REFUSED(aclrtSetMemcpyDesc(dp, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                     s.p, d.p, n, NULL),
                  (d.bad || s.bad) && n > 0);
    aclrtStream st = pick_stream(in);
    if (st)
      CHECK(aclrtMemcpyAsyncWithDesc(dp, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                     st));
    CHECK(aclrtSynchronizeDevice()); /* before the descriptor changes */
    break;
  }
  }
}

static bool trace; /* FUZZ_ACL_TRACE=1: each call's opcode on stderr */

static void run_op(struct in *in) {
  int op = next(in) % NOPS;
  if (trace)
    fprintf(stderr, "fuzz_acl_mem: op %d\n", op);
  switch (op) {
  case OP_MALLOC: {
    int i = next(in) % NBLK;
    free_slot(i);
    uint8_t b = next(in);
    size_t size = b & 0x80 ? (size_t)1 << (b % 21) : 1 + (size_t)nextn(in, 2);
    void *p = NULL;
    aclError r = b % 3 == 0   ? aclrtMallocHost(&p, size)
                 : b % 3 == 1 ? aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST)
                              : aclrtMallocAlign32(&p, size,
                                                   ACL_MEM_MALLOC_NORMAL_ONLY);
    CHECK(r);
    if (r == ACL_SUCCESS) {
      blk[i].p = p;
      blk[i].size = size;
      blk[i].host = b % 3 == 0;
    }
    break;
  }
  case OP_FREE: {
    int i = next(in) % NBLK;
    if (next(in) & 1) {
      struct ptr p = pick(in); /* a free of anything else must fail */
      bool ours = false;
      for (int k = 0; k < NBLK; k++)
        ours |= blk[k].p == p.p;
      if (!ours) {
        CHECK_REFUSED(aclrtFree(p.p), true);
        CHECK_REFUSED(aclrtFreeHost(p.p), true);
      }
    }
    free_slot(i);
    break;
  }
  case OP_MEMCPY:
  case OP_MEMCPY_ASYNC:
  case OP_MEMSET:
  case OP_MEMSET_ASYNC:
  case OP_2D:
  case OP_2D_ASYNC:
  case OP_D32:
  case OP_BATCH:
  case OP_OFFSET:
  case OP_DESC:
    op_copies(op, in);
    break;
  case OP_RESERVE:
  case OP_PHYS:
  case OP_MAP:
  case OP_UNMAP:
  case OP_ACCESS:
  case OP_RELEASE:
    op_vmm(op, in);
    break;
  case OP_QUERY:
    op_query(in);
    break;
  case OP_REGISTER: {
    if (!registered) {
      void *dev = NULL;
      size_t pages = 1 + next(in) % 16;
      aclError r = aclrtHostRegister(plain + (next(in) % 2) * 4096,
                                     pages * 4096, ACL_HOST_REGISTER_MAPPED,
                                     &dev);
      CHECK(r);
      registered = r == ACL_SUCCESS;
    } else {
      CHECK(aclrtHostUnregister(plain + 4096 * (next(in) % 2)));
      CHECK(aclrtHostUnregister(plain));
      aclrtHostUnregister(plain + 4096);
      registered = false;
    }
    break;
  }
  case OP_VALUE: {
    struct ptr d = pick(in);
    CHECK_REFUSED(aclrtValueWrite(d.p, nextn(in, 8), 0, pick_stream(in)),
                  d.bad);
    break;
  }
  case OP_SYNC:
    CHECK(next(in) & 1 ? aclrtSynchronizeDevice()
                       : aclrtSynchronizeStream(pick_stream(in)));
    break;
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  trace = getenv("FUZZ_ACL_TRACE") != NULL;
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
      aclrtCreateStream(&streams[0]) != ACL_SUCCESS) {
    fprintf(stderr, "fuzz_acl_mem: ACL set-up failed\n");
    abort();
  }
  /* the plain region between two guard pages */
  unsigned char *m = mmap(NULL, PLAIN_SZ + 2 * 4096, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED ||
      mprotect(m + 4096, PLAIN_SZ, PROT_READ | PROT_WRITE) != 0)
    abort();
  guard = m;
  plain = m + 4096;
  for (int k = 0; k < NRES; k++)
    res[k].map[0] = res[k].map[1] = -1;
  return 0;
}

/* The layer gives freed blocks and unmapped pages back on evrt's release
 * lane for every device (evrt_device_launch_host_func(EVRT_DEVICE_ALL)),
 * after the work queued before them, and aclrtSynchronizeDevice does not
 * wait for that lane.  libFuzzer looks for leaks when an input returns, so
 * the input waits for the lane: a function queued on it last runs after
 * every release queued before it (the lane is FIFO). */
static atomic_int drained;
static void mark_drained(void *p) { atomic_store((atomic_int *)p, 1); }
static void drain_releases(void) {
  atomic_store(&drained, 0);
  if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, mark_drained, &drained) !=
      EVRT_SUCCESS)
    return;
  while (!atomic_load(&drained))
    sched_yield();
}

static void cleanup(void) {
  CHECK(aclrtSynchronizeDevice());
  for (int k = 0; k < NRES; k++) {
    if (!res[k].va)
      continue;
    for (int h = 0; h < 2; h++)
      if (res[k].map[h] >= 0) {
        CHECK(aclrtUnmapMem(res[k].va + h * MB2));
        phys_maps[res[k].map[h]]--;
        res[k].map[h] = -1;
      }
    CHECK(aclrtReleaseMemAddress(res[k].va));
    res[k].va = NULL;
  }
  for (int j = 0; j < NPHYS; j++)
    if (phys[j]) {
      CHECK(aclrtFreePhysical(phys[j]));
      phys[j] = NULL;
    }
  if (registered) {
    aclrtHostUnregister(plain);
    aclrtHostUnregister(plain + 4096);
    registered = false;
  }
  for (int i = 0; i < NBLK; i++)
    free_slot(i);
  drain_releases();
  (void)aclGetRecentErrMsg(); /* the thread's message: not kept */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct in in = {data, size};
  for (int i = 0; i < MAXOPS && in.n; i++)
    run_op(&in);
  cleanup();
  return 0;
}
