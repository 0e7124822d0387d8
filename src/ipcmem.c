/*
 * ipcmem.c - interprocess memory: memory shareable with other processes of
 * the same user, exported under a 64-character key, imported by key,
 * closed (docs/design.md, "Interprocess memory"; ACL's aclrtIpcMem* and
 * interprocess notifies are built on it).
 *
 * Each allocation is a memfd ("evrt-ipcmem") of its data pages plus one
 * header page, mapped shared in one piece; the descriptor stays open while
 * the memory lives, because importers open /proc/<pid>/fd/<fd> (the way
 * src/ipc.c shares events).  Nothing is created in /dev/shm: the memory
 * goes when the last process unmaps it, after a crash too.  The header, in
 * the shared page, holds a magic number, a random nonce (also in the key:
 * a stale or forged key, or a recycled descriptor number, fails the
 * compare), the exported range and its state (exported, closed), and the
 * import whitelist (appended only: pids are stored before their count is
 * published, so an importer reading the count reads complete entries).
 *
 * Keys: 32 bytes, hex: version, exporter pid, descriptor, nonce, exported
 * page offset and length, FNV-1a of the rest.
 *
 * EVRT_CHECK (docs/check.md, "What is tracked"): an allocation and an
 * import are blocks whose life starts at the call (evrt_check_alloc); a
 * free and the close of an import end it at the call, in the order of no
 * stream (evrt_check_free), so that queued work still using the memory is
 * a use after free.  Their pages are unmapped when the checker's quarantine
 * lets the range go (release_seg; at once with the checker off), so that
 * such work is reported instead of faulting, and the addresses are not
 * reused while the checker still holds their shadow.
 *
 * Locks: reg_lock (a mutex: system calls happen under it; no other runtime
 * lock is taken with it but the checker's shadow lock, a leaf, inside
 * evrt_check_alloc).  evrt_check_free is called without it: it may call
 * release_seg, which takes it.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_SIZE 4096u
#define MAGIC 0x6d6370692d747276ull /* "evrt-ipcm" */
#define MAX_PIDS ((HDR_SIZE - 64) / 4)
#define KEY_BYTES 32

struct hdr {
  uint64_t magic;
  uint64_t nonce;
  uint64_t data_len;
  uint64_t off, len;     /* the exported range (page offset, bytes) */
  atomic_uint state;     /* 0 private, 1 exported, 2 closed */
  uint32_t flags;        /* EVRT_IPC_MEM_NO_PID_CHECK */
  atomic_uint npids;
  uint32_t pad;
  int32_t pids[MAX_PIDS];
};
_Static_assert(sizeof(struct hdr) <= HDR_SIZE, "header outgrew its page");

enum { ST_PRIVATE = 0, ST_EXPORTED = 1, ST_CLOSED = 2 };

struct seg {
  struct seg *next;
  bool imported;
  char *base;      /* mapping (imported: the exported range) */
  size_t map_len;  /* bytes mapped */
  size_t data_len; /* owner: data pages */
  int fd;          /* owner: the memfd; -1 imported */
  struct hdr *hdr; /* owner: in the mapping */
  char key[EVRT_IPC_MEM_KEY_SIZE]; /* exported or imported under */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seg *segs;
static struct seg *dying; /* freed or closed, waiting for release_seg */
static bool nofile_raised;

/* The checker lets the freed range at base go (or it is off): unmap the
 * segment starting there.  Takes reg_lock. */
static void release_seg(void *base) {
  pthread_mutex_lock(&reg_lock);
  struct seg **pp = &dying, *g = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->base == (char *)base) {
      g = *pp;
      *pp = g->next;
      break;
    }
  if (g) {
    munmap(g->base, g->map_len);
    if (g->fd >= 0)
      close(g->fd);
  }
  pthread_mutex_unlock(&reg_lock);
  evrt__free(g);
}

/* g is off segs (reg_lock held, released here): the end of its life for
 * the checker at this call, its pages released after (release_seg). */
static void retire_unlock(struct seg *g, size_t bytes) {
  g->next = dying;
  dying = g;
  char *base = g->base;
  pthread_mutex_unlock(&reg_lock);
  if (evrt_check_free(base, bytes, release_seg) != EVRT_SUCCESS)
    release_seg(base);
}

static size_t page_size(void) {
  static size_t ps;
  if (!ps)
    ps = (size_t)sysconf(_SC_PAGESIZE);
  return ps;
}

/* --------------------------------------------------------------- keys */

struct key {
  uint8_t version;
  int32_t pid;
  int32_t fd;
  uint64_t nonce, off, len;
};

static uint32_t fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

static void put(uint8_t *b, uint64_t v, int n) {
  for (int i = 0; i < n; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get(const uint8_t *b, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++)
    v |= (uint64_t)b[i] << (8 * i);
  return v;
}

/* 1 version, 4 pid, 4 fd, 8 nonce, 5 page offset, 6 length, 4 checksum */
static void encode(const struct key *k, char out[EVRT_IPC_MEM_KEY_SIZE]) {
  uint8_t b[KEY_BYTES] = {0};
  b[0] = k->version;
  put(b + 1, (uint32_t)k->pid, 4);
  put(b + 5, (uint32_t)k->fd, 4);
  put(b + 9, k->nonce, 8);
  put(b + 17, k->off / page_size(), 5);
  put(b + 22, k->len, 6);
  put(b + 28, fnv1a(b, 28), 4);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < KEY_BYTES; i++) {
    out[2 * i] = hex[b[i] >> 4];
    out[2 * i + 1] = hex[b[i] & 15];
  }
  out[2 * KEY_BYTES] = 0;
}

static int unhex(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

static evrt_status_t decode(const char *s, struct key *k) {
  if (!s)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "key is NULL");
  uint8_t b[KEY_BYTES];
  for (int i = 0; i < KEY_BYTES; i++) {
    int hi = unhex(s[2 * i]), lo = hi < 0 ? -1 : unhex(s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                        "key is not 64 lowercase hex digits");
    b[i] = (uint8_t)(hi << 4 | lo);
  }
  if (s[2 * KEY_BYTES] != 0 || b[0] != 1 ||
      get(b + 28, 4) != fnv1a(b, 28))
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "malformed or corrupted interprocess memory key");
  k->version = b[0];
  k->pid = (int32_t)get(b + 1, 4);
  k->fd = (int32_t)get(b + 5, 4);
  k->nonce = get(b + 9, 8);
  k->off = get(b + 17, 5) * page_size();
  k->len = get(b + 22, 6);
  return EVRT_SUCCESS;
}

/* ---------------------------------------------------------- allocation */

static uint64_t random64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
    v = evrt__now_ns() ^ ((uint64_t)getpid() << 32);
  return v | 1; /* never 0 */
}

/* Caller holds reg_lock.  A shareable block holds a descriptor: allow as
 * many as the hard limit lets (as the Go runtime does at start). */
static void raise_nofile_locked(void) {
  if (nofile_raised)
    return;
  nofile_raised = true;
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

evrt_status_t evrt_ipc_mem_alloc(size_t bytes, void **ptr) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!ptr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "ptr is NULL");
  size_t ps = page_size();
  if (bytes == 0 || bytes > ((size_t)1 << 46))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "size %zu: must be 1 to 2^46 bytes", bytes);
  size_t data_len = (bytes + ps - 1) & ~(ps - 1);
  struct seg *g = evrt__calloc(1, sizeof *g);
  if (!g)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate a record");
  pthread_mutex_lock(&reg_lock);
  raise_nofile_locked();
  int fd = memfd_create("evrt-ipcmem", MFD_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0 && ftruncate(fd, (off_t)(data_len + HDR_SIZE)) != 0)
    err = errno;
  char *base = MAP_FAILED;
  if (!err) {
    base = mmap(NULL, data_len + HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                fd, 0);
    if (base == MAP_FAILED)
      err = errno;
  }
  if (err) {
    pthread_mutex_unlock(&reg_lock);
    if (fd >= 0)
      close(fd);
    evrt__free(g);
    return evrt__fail(err == ENOMEM || err == EMFILE || err == ENFILE ||
                              err == ENOSPC
                          ? EVRT_ERROR_OUT_OF_MEMORY
                          : EVRT_ERROR_SYSTEM,
                      "cannot make %zu bytes of shareable memory: %s", bytes,
                      strerror(err));
  }
  g->base = base;
  g->map_len = data_len + HDR_SIZE;
  g->data_len = data_len;
  g->fd = fd;
  g->hdr = (struct hdr *)(base + data_len);
  g->hdr->magic = MAGIC;
  g->hdr->nonce = random64();
  g->hdr->data_len = data_len;
  g->next = segs;
  segs = g;
  pthread_mutex_unlock(&reg_lock);
  evrt_check_alloc(base, data_len); /* EVRT_CHECK: a new block */
  *ptr = base;
  return EVRT_SUCCESS;
}

/* Caller holds reg_lock: the owned block containing [p, p + n). */
static struct seg *owner_of_locked(const void *p, size_t n) {
  for (struct seg *g = segs; g; g = g->next)
    if (!g->imported && (const char *)p >= g->base &&
        (size_t)((const char *)p - g->base) + n <= g->data_len)
      return g;
  return NULL;
}

static void unlink_locked(struct seg *g) {
  for (struct seg **p = &segs; *p; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      return;
    }
}

evrt_status_t evrt_ipc_mem_free(void *ptr) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  pthread_mutex_lock(&reg_lock);
  struct seg *g = owner_of_locked(ptr, 0);
  if (!g || g->base != (char *)ptr) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "%p was not returned by evrt_ipc_mem_alloc (or was "
                      "freed already)",
                      ptr);
  }
  unlink_locked(g);
  /* new imports fail from now on; existing ones keep their pages */
  atomic_store_explicit(&g->hdr->state, ST_CLOSED, memory_order_release);
  retire_unlock(g, g->data_len);
  return EVRT_SUCCESS;
}

/* ------------------------------------------------------------- export */

evrt_status_t evrt_ipc_mem_export(void *ptr, size_t bytes, unsigned flags,
                                  char key[EVRT_IPC_MEM_KEY_SIZE]) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!key)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "key is NULL");
  if (flags & ~EVRT_IPC_MEM_NO_PID_CHECK)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown flags 0x%x", flags);
  if (bytes == 0 || bytes >= ((size_t)1 << 48))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "size %zu is out of range",
                      bytes);
  pthread_mutex_lock(&reg_lock);
  struct seg *g = owner_of_locked(ptr, bytes);
  size_t off = g ? (size_t)((char *)ptr - g->base) : 0;
  const char *why = !g ? "is not shareable memory of this process (from "
                         "evrt_ipc_mem_alloc), or the range leaves it"
                    : off % page_size() ? "is not page-aligned"
                                        : NULL;
  if (why) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "%p (%zu bytes) %s", ptr,
                      bytes, why);
  }
  struct hdr *h = g->hdr;
  unsigned state = atomic_load_explicit(&h->state, memory_order_relaxed);
  if (state != ST_PRIVATE) {
    bool same = state == ST_EXPORTED && h->off == off && h->len == bytes &&
                h->flags == flags;
    if (same)
      memcpy(key, g->key, EVRT_IPC_MEM_KEY_SIZE);
    pthread_mutex_unlock(&reg_lock);
    if (same)
      return EVRT_SUCCESS;
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "this memory was %s under another range or flags",
                      state == ST_CLOSED ? "exported and closed" : "exported");
  }
  h->off = off;
  h->len = bytes;
  h->flags = flags;
  struct key k = {.version = 1,
                  .pid = (int32_t)getpid(),
                  .fd = g->fd,
                  .nonce = h->nonce,
                  .off = off,
                  .len = bytes};
  encode(&k, g->key);
  /* release: an importer that sees the state sees the range */
  atomic_store_explicit(&h->state, ST_EXPORTED, memory_order_release);
  memcpy(key, g->key, EVRT_IPC_MEM_KEY_SIZE);
  pthread_mutex_unlock(&reg_lock);
  return EVRT_SUCCESS;
}

/* Caller holds reg_lock: the segment this process exported or imported
 * under key. */
static struct seg *by_key_locked(const char *key, bool imported) {
  for (struct seg *g = segs; g; g = g->next)
    if (g->imported == imported && g->key[0] &&
        strncmp(g->key, key, EVRT_IPC_MEM_KEY_SIZE) == 0)
      return g;
  return NULL;
}

evrt_status_t evrt_ipc_mem_set_import_pids(const char *key, const int32_t *pids,
                                           size_t n) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct key k;
  if ((st = decode(key, &k)))
    return st;
  if (!pids || n == 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "no pids given");
  for (size_t i = 0; i < n; i++)
    if (pids[i] <= 0)
      return evrt__fail(EVRT_ERROR_INVALID_VALUE, "pid %d is not a process id",
                        (int)pids[i]);
  pthread_mutex_lock(&reg_lock);
  struct seg *g = by_key_locked(key, false);
  if (!g || atomic_load_explicit(&g->hdr->state, memory_order_relaxed) !=
                ST_EXPORTED) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "key was not exported by this process (or is closed)");
  }
  struct hdr *h = g->hdr;
  unsigned have = atomic_load_explicit(&h->npids, memory_order_relaxed);
  if (n > MAX_PIDS - have) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "the whitelist holds at most %u pids (%u set)",
                      (unsigned)MAX_PIDS, have);
  }
  for (size_t i = 0; i < n; i++)
    h->pids[have + i] = pids[i];
  /* release: importers read the count (acquire), then the entries */
  atomic_store_explicit(&h->npids, have + (unsigned)n, memory_order_release);
  pthread_mutex_unlock(&reg_lock);
  return EVRT_SUCCESS;
}

/* ------------------------------------------------------------- import */

static evrt_status_t open_peer(const struct key *k, int *fd_out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)k->pid, (int)k->fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    *fd_out = fd;
    return EVRT_SUCCESS;
  }
  int err = errno;
  if (kill(k->pid, 0) != 0 && errno == ESRCH)
    return evrt__fail(EVRT_ERROR_PEER_LOST,
                      "the exporting process %d is gone", (int)k->pid);
  if (err == EACCES || err == EPERM)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "no permission to open process %d's memory",
                      (int)k->pid);
  return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                    "process %d no longer shares this memory (freed)",
                    (int)k->pid);
}

evrt_status_t evrt_ipc_mem_import(const char *key, unsigned flags, void **ptr,
                                  size_t *bytes) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!ptr)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "ptr is NULL");
  if (flags != 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown flags 0x%x", flags);
  struct key k;
  if ((st = decode(key, &k)))
    return st;
  if (k.pid == (int32_t)getpid())
    return evrt__fail(EVRT_ERROR_IPC_SAME_PROCESS,
                      "the key was exported by this process");
  pthread_mutex_lock(&reg_lock);
  if (by_key_locked(key, true)) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "this process has imported the key already");
  }
  struct seg *g = evrt__calloc(1, sizeof *g);
  int fd = -1;
  struct hdr *h = MAP_FAILED;
  struct stat sb;
  if (!g) {
    st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate a record");
    goto out;
  }
  if ((st = open_peer(&k, &fd)))
    goto out;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      (uint64_t)sb.st_size < HDR_SIZE ||
      (uint64_t)sb.st_size % page_size() != 0) {
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE, "the key names no evrt memory");
    goto out;
  }
  h = mmap(NULL, HDR_SIZE, PROT_READ, MAP_SHARED, fd,
           (off_t)((uint64_t)sb.st_size - HDR_SIZE));
  if (h == MAP_FAILED) {
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE, "the key names no evrt memory");
    goto out;
  }
  /* acquire: the exporter published the range with release */
  unsigned state = atomic_load_explicit(&h->state, memory_order_acquire);
  if (h->magic != MAGIC || h->nonce != k.nonce ||
      h->data_len + HDR_SIZE != (uint64_t)sb.st_size || h->off != k.off ||
      h->len != k.len || state == ST_PRIVATE) {
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE, "stale or forged key");
    goto out;
  }
  if (state == ST_CLOSED) {
    st = evrt__fail(EVRT_ERROR_IPC_HANDLE,
                    "the exporter closed this key (aclrtIpcMemClose)");
    goto out;
  }
  if (!(h->flags & EVRT_IPC_MEM_NO_PID_CHECK)) {
    unsigned n = atomic_load_explicit(&h->npids, memory_order_acquire);
    int32_t me = (int32_t)getpid();
    bool listed = false;
    for (unsigned i = 0; i < n && i < MAX_PIDS && !listed; i++)
      listed = h->pids[i] == me;
    if (!listed) {
      st = evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "process %d is not in the key's import whitelist",
                      (int)me);
      goto out;
    }
  }
  size_t len = (k.len + page_size() - 1) & ~(page_size() - 1);
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 (off_t)k.off);
  if (p == MAP_FAILED) {
    st = evrt__fail(EVRT_ERROR_SYSTEM, "cannot map the memory: %s",
                    strerror(errno));
    goto out;
  }
  g->imported = true;
  g->base = p;
  g->map_len = len;
  g->fd = -1;
  memcpy(g->key, key, EVRT_IPC_MEM_KEY_SIZE - 1);
  g->key[EVRT_IPC_MEM_KEY_SIZE - 1] = 0;
  g->next = segs;
  segs = g;
  g = NULL;
  *ptr = p;
  if (bytes)
    *bytes = k.len;
  /* EVRT_CHECK: the import is a block of this process, new from here (the
   * exporter's accesses are another process's: not seen).  Under reg_lock,
   * so that a close racing it cannot end the life before it starts. */
  evrt_check_alloc(p, len);
out:
  pthread_mutex_unlock(&reg_lock);
  if (h != MAP_FAILED)
    munmap(h, HDR_SIZE);
  if (fd >= 0)
    close(fd);
  evrt__free(g);
  return st;
}

evrt_status_t evrt_ipc_mem_close(const char *key) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct key k;
  if ((st = decode(key, &k)))
    return st;
  pthread_mutex_lock(&reg_lock);
  struct seg *g = by_key_locked(key, true);
  if (g) {
    unlink_locked(g);
    retire_unlock(g, g->map_len);
    return EVRT_SUCCESS;
  }
  g = by_key_locked(key, false);
  if (g && atomic_load_explicit(&g->hdr->state, memory_order_relaxed) ==
               ST_EXPORTED) {
    /* new imports fail; the memory stays this process's (and importers'
     * mappings stay valid) until evrt_ipc_mem_free */
    atomic_store_explicit(&g->hdr->state, ST_CLOSED, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    return EVRT_SUCCESS;
  }
  pthread_mutex_unlock(&reg_lock);
  return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                    "key was neither exported (and not yet closed) nor "
                    "imported by this process");
}
