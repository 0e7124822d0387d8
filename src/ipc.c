/*
 * ipc.c - interprocess events.
 *
 * Layout.  The exporter keeps the event's shared state in a 64 KiB memfd
 * ("evrt-ipc") mapped MAP_SHARED.  The 64-byte handle names the exporter's
 * pid, its start time (to detect pid reuse), the memfd's descriptor number
 * and a random nonce; an importer opens /proc/<pid>/fd/<fd>, checks that it is
 * an evrt memfd of the right size whose header carries the nonce, and maps
 * it.  No name is ever created in /dev/shm, so nothing is left behind by a
 * normal exit or a crash: the memory goes when the last process unmaps it.
 *
 * Generations.  rec_no in the shared header is the latest generation; each
 * generation g owns ring slot g % 2048 (RING), whose word is (g << 1 | done)
 * and which also names the recording process (pid + start time).  A record
 * takes the shared lock, fills the slot, then publishes rec_no (release).  A
 * slot is reused only after it is done (a record that would reuse a pending
 * one fails with EVRT_ERROR_EVENT_LIMIT), so a waiter bound to g that finds
 * another generation in its slot knows g completed.  Completion is a CAS of
 * the word followed by a bump of the shared futex word `seq` and a
 * FUTEX_WAKE when `nwaiters` says someone sleeps (the Dekker pair: waiter
 * increments nwaiters then re-reads the slot; completer writes the slot then
 * reads nwaiters, all seq_cst).
 *
 * Robustness.  The shared lock word holds the owner's pid; a process that
 * finds it held by a dead process takes it over, and everything the lock
 * protects is rewritten by the next record, so a crashed peer can neither
 * block nor corrupt the others.  Waiters on a pending generation check that
 * its recorder is alive every 50 ms and give up with EVRT_ERROR_PEER_LOST.
 *
 * Streams of this process that wait on an interprocess generation are parked
 * and watched by one watcher thread, which sleeps in futex_waitv on the
 * shared futex words of every watched event (plus a private kick word).
 *
 * Locks: watch.lock is a leaf (owners are resumed after releasing it); the
 * shared lock is taken by a record, under the event's lock.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHM_SIZE 65536
#define RING 2048
#define SHM_MAGIC 0x314d4853545256ULL /* "VRTSHM1" */
#define HANDLE_MAGIC 0x3143504954525645ULL /* "EVRTIPC1" */
#define HANDLE_VERSION 1
#define PEER_CHECK_NS 50000000ull

struct slot {
  atomic_uint_least64_t word; /* gen << 1 | done */
  atomic_int pid;
  atomic_uint_least64_t start;
};

struct shm {
  uint64_t magic;
  uint64_t nonce;
  int32_t device;
  atomic_int lock_pid;
  atomic_uint_least64_t rec_no;
  atomic_uint seq;      /* shared futex word: bumped on every completion */
  atomic_uint nwaiters; /* sleepers on seq, all processes */
  struct slot ring[RING];
};
_Static_assert(sizeof(struct shm) <= SHM_SIZE, "shared state fits the segment");

struct wire { /* the 64-byte handle */
  uint64_t magic;
  uint16_t version, flags;
  int32_t device;
  int32_t pid, fd;
  uint64_t start;
  uint64_t nonce;
  uint64_t event_id;
  uint64_t reserved;
  uint64_t check;
};
_Static_assert(sizeof(struct wire) == EVRT_IPC_HANDLE_SIZE, "handle size");

struct evrt__ipc_map {
  struct shm *shm;
  atomic_int refs; /* the event + each pending item that points here */
  int fd;          /* exporter: the memfd importers open; -1 in importers */
};

static uint64_t my_start;
static int my_pid;

/* ------------------------------------------------------------ processes */

/* Start time (clock ticks since boot) and liveness of a process, from
 * /proc/<pid>/stat.  A zombie counts as dead. */
static bool proc_info(int pid, uint64_t *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the command may contain spaces */
  if (!p || p[1] != ' ')
    return false;
  char state = p[2];
  if (state == 'Z' || state == 'X' || state == 'x')
    return false;
  /* field 3 is the state; starttime is field 22 */
  p += 2;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p)
      return false;
    p++;
  }
  *start = strtoull(p, NULL, 10);
  return true;
}

static bool alive(int pid, uint64_t start) {
  if (pid == my_pid && start == my_start)
    return true;
  uint64_t s;
  return proc_info(pid, &s) && s == start;
}

static void init_self(void) {
  int pid = getpid();
  if (pid != my_pid) { /* first use, or a forked child */
    my_pid = pid;
    if (!proc_info(pid, &my_start))
      my_start = 0;
  }
}

/* ------------------------------------------------------------- the lock */

static void shm_lock(struct shm *m) {
  for (unsigned n = 0;; n++) {
    int z = 0;
    if (atomic_compare_exchange_weak_explicit(&m->lock_pid, &z, my_pid,
                                              memory_order_acquire,
                                              memory_order_relaxed))
      return;
    if (n < 64) {
      evrt__cpu_relax();
      continue;
    }
    sched_yield();
    if ((n & 1023) == 1023 && z != 0) {
      /* Held for long: if its owner died, take it over. */
      uint64_t s;
      if (!proc_info(z, &s) &&
          atomic_compare_exchange_strong_explicit(&m->lock_pid, &z, my_pid,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
        return;
    }
  }
}

static void shm_unlock(struct shm *m) {
  atomic_store_explicit(&m->lock_pid, 0, memory_order_release);
}

/* --------------------------------------------------------------- maps */

static void map_ref(struct evrt__ipc_map *map) {
  atomic_fetch_add_explicit(&map->refs, 1, memory_order_relaxed);
}

static void map_unref(struct evrt__ipc_map *map) {
  /* acq_rel: the last owner sees every write of the others before unmap */
  if (atomic_fetch_sub_explicit(&map->refs, 1, memory_order_acq_rel) == 1) {
    munmap(map->shm, SHM_SIZE);
    if (map->fd >= 0)
      close(map->fd);
    evrt__free(map);
  }
}

static struct evrt__ipc_map *map_of(struct evrt__event *e) {
  return atomic_load_explicit(&e->ipc, memory_order_acquire);
}

/* Create the shared state of an exported event (caller holds e's lock). */
static evrt_status_t create_shared(struct evrt__event *e, int device) {
  init_self();
  struct evrt__ipc_map *map = evrt__calloc(1, sizeof *map);
  if (!map)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "interprocess event state");
  int fd = memfd_create("evrt-ipc", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, SHM_SIZE) != 0) {
    int err = errno;
    if (fd >= 0)
      close(fd);
    evrt__free(map);
    return evrt__fail(err == ENOMEM ? EVRT_ERROR_OUT_OF_MEMORY
                                    : EVRT_ERROR_SYSTEM,
                      "memfd for an interprocess event: %s", strerror(err));
  }
  void *p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    evrt__free(map);
    return evrt__fail(EVRT_ERROR_SYSTEM, "mmap: %s", strerror(err));
  }
  struct shm *m = p; /* zero-filled by ftruncate */
  uint64_t nonce = 0;
  while (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce || nonce == 0) {
  }
  m->nonce = nonce;
  m->device = device;
  m->magic = SHM_MAGIC;
  map->shm = m;
  map->fd = fd;
  atomic_init(&map->refs, 1);
  atomic_store_explicit(&e->ipc, map, memory_order_release);
  return EVRT_SUCCESS;
}

/* Make sure an exporting event has its shared state and device (lock held). */
static evrt_status_t ensure_shared(struct evrt__event *e, int device) {
  if (map_of(e))
    return EVRT_SUCCESS;
  if (!e->has_resource && !(e->flags & EVRT_EVENT_NO_LIMIT)) {
    if (!evrt__event_resource_take(device))
      return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                        "device %d has no free event resource", device);
    e->has_resource = true;
  }
  evrt_status_t st = create_shared(e, device);
  if (st) {
    if (e->has_resource) {
      e->has_resource = false;
      evrt__event_resource_give(device);
    }
    return st;
  }
  atomic_store_explicit(&e->device, device, memory_order_relaxed);
  return EVRT_SUCCESS;
}

/* --------------------------------------------------------- generations */

static void wake_all(struct shm *m) {
  atomic_fetch_add_explicit(&m->seq, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&m->nwaiters, memory_order_seq_cst))
    evrt__futex_wake(&m->seq, INT_MAX, 1);
}

static void complete(struct shm *m, uint64_t g) {
  struct slot *sl = &m->ring[g % RING];
  uint64_t w = g << 1;
  /* seq_cst: pairs with the waiter's nwaiters increment (see top) */
  atomic_compare_exchange_strong_explicit(&sl->word, &w, (g << 1) | 1,
                                          memory_order_seq_cst,
                                          memory_order_relaxed);
  wake_all(m);
}

/* 1 done, 0 pending, -1 pending and its recorder is dead */
static int gen_state(struct shm *m, uint64_t g, bool check_peer) {
  if (g == 0)
    return 1;
  struct slot *sl = &m->ring[g % RING];
  uint64_t w = atomic_load_explicit(&sl->word, memory_order_seq_cst);
  if ((w >> 1) != g || (w & 1))
    return 1; /* done, or the slot moved on (only after g was done) */
  if (check_peer &&
      !alive(atomic_load_explicit(&sl->pid, memory_order_relaxed),
             atomic_load_explicit(&sl->start, memory_order_relaxed)))
    return -1;
  return 0;
}

/* Under e's lock: is e (still) a live interprocess event?  The callers
 * found it so before taking the lock; a destroy since (or a destroy and a
 * create of another kind in the slot) must not get shared state or a
 * resource attached to a slot that its destroy has already cleaned. */
static bool live_ipc(struct evrt__event *e) {
  return evrt__obj_live(&e->hdr) && (e->flags & EVRT_EVENT_INTERPROCESS);
}

evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s) {
  evrt__event_lock(e);
  if (!live_ipc(e)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event destroyed");
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  if (dev >= 0 && dev != s->device) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                      "event device %d does not match recording stream's "
                      "device %d",
                      dev, s->device);
  }
  evrt_status_t st = ensure_shared(e, s->device);
  struct evrt__ipc_map *map = map_of(e);
  if (st) {
    evrt__event_unlock(e);
    return st;
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate record item");
  }
  struct shm *m = map->shm;
  shm_lock(m);
  uint64_t g = atomic_load_explicit(&m->rec_no, memory_order_relaxed) + 1;
  struct slot *sl = &m->ring[g % RING];
  uint64_t w = atomic_load_explicit(&sl->word, memory_order_acquire);
  if (!(w == 0 || (w & 1) ||
        !alive(atomic_load_explicit(&sl->pid, memory_order_relaxed),
               atomic_load_explicit(&sl->start, memory_order_relaxed)))) {
    /* The slot's generation (RING records ago) is still pending: reusing it
     * would break the waiters bound to it.  A clear error rather than a
     * blocking record (that could wait on work queued behind it). */
    shm_unlock(m);
    evrt__item_discard(s, it);
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_EVENT_LIMIT,
                      "%d generations of this interprocess event are pending; "
                      "synchronize before recording again",
                      RING);
  }
  atomic_store_explicit(&sl->pid, my_pid, memory_order_relaxed);
  atomic_store_explicit(&sl->start, my_start, memory_order_relaxed);
  atomic_store_explicit(&sl->word, g << 1, memory_order_relaxed);
  /* release: importers that read rec_no == g see the slot filled */
  atomic_store_explicit(&m->rec_no, g, memory_order_release);
  shm_unlock(m);
  atomic_store_explicit(&e->rec_no, g, memory_order_relaxed);
  atomic_store_explicit(&e->rec_thread, evrt_thread_id(), memory_order_relaxed);
  uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
  if (evrt__done(s) >= enq) {
    evrt__item_discard(s, it);
    complete(m, g);
    if (atomic_load_explicit(&e->device, memory_order_relaxed) < 0)
      atomic_store_explicit(&e->device, s->device, memory_order_relaxed);
  } else {
    it->kind = EVRT__ITEM_RECORD;
    it->u.ev.ev = NULL;
    it->u.ev.ipc = map;
    it->u.ev.target = g;
    it->u.ev.rec_no = g;
    it->u.ev.ev_id = e->id;
    map_ref(map);
    evrt__stream_push(s, it);
  }
  evrt__event_unlock(e);
  return EVRT_SUCCESS;
}

void evrt__ipc_exec_record(struct evrt__item *it) {
  struct evrt__ipc_map *map = it->u.ev.ipc;
  complete(map->shm, it->u.ev.target);
  it->u.ev.ipc = NULL;
  map_unref(map);
}

/* Latest generation of an event and a reference on its map (or NULL). */
static struct evrt__ipc_map *latest(struct evrt__event *e, uint64_t *g) {
  evrt__event_lock(e);
  struct evrt__ipc_map *map = map_of(e);
  if (map) {
    map_ref(map);
    *g = atomic_load_explicit(&map->shm->rec_no, memory_order_acquire);
  }
  evrt__event_unlock(e);
  return map;
}

evrt_status_t evrt__ipc_query(struct evrt__event *e) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS; /* never recorded nor exported */
  int st = gen_state(map->shm, g, true);
  map_unref(map);
  if (st < 0)
    return evrt__fail(EVRT_ERROR_PEER_LOST,
                      "the process that recorded generation %llu died",
                      (unsigned long long)g);
  return st ? EVRT_SUCCESS : EVRT_NOT_READY;
}

static evrt_status_t wait_gen(struct shm *m, uint64_t g, int64_t timeout_ns,
                              bool blocking) {
  uint64_t start = evrt__now_ns();
  uint64_t deadline = timeout_ns >= 0 ? start + (uint64_t)timeout_ns : 0;
  if (!blocking) {
    uint64_t budget = evrt__spin_budget_ns();
    for (unsigned i = 1;; i++) {
      if (gen_state(m, g, false) > 0)
        return EVRT_SUCCESS;
      evrt__cpu_relax();
      if ((i & 15) == 0 && evrt__now_ns() - start >= budget)
        break;
    }
  }
  evrt_status_t r = EVRT_SUCCESS;
  atomic_fetch_add_explicit(&m->nwaiters, 1, memory_order_seq_cst);
  uint64_t next_check = evrt__now_ns() + PEER_CHECK_NS;
  for (;;) {
    unsigned v = atomic_load_explicit(&m->seq, memory_order_seq_cst);
    uint64_t now = evrt__now_ns();
    bool check = now >= next_check;
    int st = gen_state(m, g, check);
    if (check)
      next_check = now + PEER_CHECK_NS;
    if (st > 0)
      break;
    if (st < 0) {
      r = EVRT_ERROR_PEER_LOST;
      break;
    }
    if (deadline && now >= deadline) {
      r = EVRT_ERROR_TIMEOUT;
      break;
    }
    int64_t left = (int64_t)(next_check - now);
    if (deadline && (int64_t)(deadline - now) < left)
      left = (int64_t)(deadline - now);
    evrt__futex_wait(&m->seq, v, left, 1);
  }
  atomic_fetch_sub_explicit(&m->nwaiters, 1, memory_order_relaxed);
  return r;
}

evrt_status_t evrt__ipc_sync(struct evrt__event *e, int64_t timeout_ns) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS;
  uint64_t t0 = EVRT_TRACING() ? evrt__now_ns() : 0;
  evrt_status_t st = wait_gen(map->shm, g, timeout_ns,
                              (e->flags & EVRT_EVENT_BLOCKING_SYNC) != 0);
  map_unref(map);
  if (EVRT_TRACING())
    evrt__trace_host_wait("event_synchronize", e->id, t0, evrt__now_ns());
  if (st == EVRT_ERROR_PEER_LOST)
    return evrt__fail(st, "the process that recorded generation %llu died",
                      (unsigned long long)g);
  if (st == EVRT_ERROR_TIMEOUT)
    return evrt__fail(st, "interprocess generation %llu not complete after "
                      "%lld ns", (unsigned long long)g, (long long)timeout_ns);
  return st;
}

evrt_status_t evrt__ipc_wait(struct evrt__event *e, struct evrt__stream *s,
                             int64_t timeout_ns) {
  uint64_t g = 0;
  struct evrt__ipc_map *map = latest(e, &g);
  if (!map)
    return EVRT_SUCCESS; /* never recorded: empty dependency */
  if (gen_state(map->shm, g, false) > 0 &&
      evrt__done(s) >= atomic_load_explicit(&s->enq_seq, memory_order_acquire)) {
    map_unref(map);
    return EVRT_SUCCESS;
  }
  struct evrt__item *it = evrt__item_new(s);
  if (!it) {
    map_unref(map);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate wait item");
  }
  it->kind = EVRT__ITEM_WAIT;
  it->dep_kind = EVRT__DEP_IPC;
  it->u.ev.ev = NULL; /* no wait status across processes */
  it->u.ev.ipc = map; /* the reference taken by latest() */
  it->u.ev.src = NULL;
  it->u.ev.target = g;
  it->u.ev.rec_no = g;
  it->u.ev.ev_id = e->id;
  it->u.ev.wnext = NULL;
  it->deadline = timeout_ns >= 0 ? evrt__now_ns() + (uint64_t)timeout_ns : 0;
  evrt__stream_push(s, it);
  return EVRT_SUCCESS;
}

/* ------------------------------------------------------------ watcher */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
struct waitv {
  uint64_t val, uaddr;
  uint32_t flags, reserved;
};
#define W_SIZE_U32 0x02
#define W_PRIVATE 128
#define MAX_WATCH 127

static struct {
  pthread_mutex_t lock;
  struct evrt__item *list;
  atomic_uint kick;
  bool started, stop;
  pthread_t th;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER};

bool evrt__ipc_dep_ready(struct evrt__item *it, bool check_peer,
                         evrt_status_t *err) {
  int st = gen_state(it->u.ev.ipc->shm, it->u.ev.target, check_peer);
  if (st < 0)
    *err = EVRT_ERROR_PEER_LOST;
  return st > 0;
}

static void *watcher_main(void *arg) {
  (void)arg;
  struct waitv wv[MAX_WATCH + 1];
  bool have_waitv = true;
  pthread_mutex_lock(&W.lock);
  while (!W.stop) {
    /* Collect ready (or failed) waits; remember the words to sleep on. */
    enum { BATCH = 32 };
    struct evrt__stream *owners[BATCH];
    int k = 0, nw = 1;
    unsigned kick = atomic_load_explicit(&W.kick, memory_order_relaxed);
    wv[0] = (struct waitv){kick, (uintptr_t)&W.kick, W_SIZE_U32 | W_PRIVATE, 0};
    for (struct evrt__item **p = &W.list; *p;) {
      struct evrt__item *it = *p;
      struct shm *m = it->u.ev.ipc->shm;
      unsigned v = atomic_load_explicit(&m->seq, memory_order_seq_cst);
      int st = gen_state(m, it->u.ev.target, true);
      if (st != 0 && k < BATCH) {
        *p = it->u.ev.wnext;
        atomic_fetch_sub_explicit(&m->nwaiters, 1, memory_order_relaxed);
        owners[k++] = it->owner;
        continue;
      }
      if (nw <= MAX_WATCH)
        wv[nw++] = (struct waitv){v, (uintptr_t)&m->seq, W_SIZE_U32, 0};
      p = &it->u.ev.wnext;
    }
    bool empty = W.list == NULL;
    pthread_mutex_unlock(&W.lock);
    for (int i = 0; i < k; i++)
      evrt__stream_resume(owners[i]);
    if (k == 0) {
      if (empty) {
        evrt__futex_wait(&W.kick, kick, -1, 0);
      } else if (have_waitv) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)PEER_CHECK_NS;
        if (ts.tv_nsec >= 1000000000L) {
          ts.tv_sec++;
          ts.tv_nsec -= 1000000000L;
        }
        long r = syscall(SYS_futex_waitv, wv, (unsigned)nw, 0u, &ts,
                         CLOCK_MONOTONIC);
        if (r < 0 && errno == ENOSYS)
          have_waitv = false;
      } else {
        evrt__sleep_ns(200000); /* old kernel: poll */
      }
    }
    pthread_mutex_lock(&W.lock);
  }
  pthread_mutex_unlock(&W.lock);
  return NULL;
}

evrt_status_t evrt__ipc_watch(struct evrt__item *it) {
  pthread_mutex_lock(&W.lock);
  if (!W.started) {
    W.stop = false;
    if (pthread_create(&W.th, NULL, watcher_main, NULL) != 0) {
      pthread_mutex_unlock(&W.lock);
      return EVRT_ERROR_SYSTEM;
    }
    W.started = true;
  }
  it->u.ev.wnext = W.list;
  W.list = it;
  /* counted as a sleeper so that completers issue the wake-up */
  atomic_fetch_add_explicit(&it->u.ev.ipc->shm->nwaiters, 1,
                            memory_order_seq_cst);
  atomic_fetch_add_explicit(&W.kick, 1, memory_order_relaxed);
  pthread_mutex_unlock(&W.lock);
  evrt__futex_wake(&W.kick, 1, 0);
  return EVRT_SUCCESS;
}

void evrt__ipc_unwatch(struct evrt__item *it) {
  /* The watcher may have taken it off already (and fixed nwaiters). */
  pthread_mutex_lock(&W.lock);
  for (struct evrt__item **p = &W.list; *p; p = &(*p)->u.ev.wnext)
    if (*p == it) {
      *p = it->u.ev.wnext;
      atomic_fetch_sub_explicit(&it->u.ev.ipc->shm->nwaiters, 1,
                                memory_order_relaxed);
      break;
    }
  pthread_mutex_unlock(&W.lock);
}

/* The wait item is finished (passed or failed): drop its map reference. */
void evrt__ipc_wait_done(struct evrt__item *it) {
  if (it->u.ev.ipc) {
    map_unref(it->u.ev.ipc);
    it->u.ev.ipc = NULL;
  }
}

void evrt__ipc_shutdown(void) {
  pthread_mutex_lock(&W.lock);
  bool join = W.started;
  W.stop = true;
  W.started = false;
  atomic_fetch_add_explicit(&W.kick, 1, memory_order_relaxed);
  pthread_mutex_unlock(&W.lock);
  evrt__futex_wake(&W.kick, 1, 0);
  if (join)
    pthread_join(W.th, NULL);
}

/* ------------------------------------------------------ export/import */

static uint64_t checksum(const struct wire *w) {
  /* FNV-1a over the first 56 bytes: catches truncation and corruption (the
   * nonce check in the shared header catches forgery). */
  const unsigned char *p = (const unsigned char *)w;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < offsetof(struct wire, check); i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

void evrt__ipc_close(struct evrt__event *e) {
  struct evrt__ipc_map *map =
      atomic_exchange_explicit(&e->ipc, NULL, memory_order_acq_rel);
  if (map) {
    /* Importers that have not opened yet will fail cleanly from now on. */
    if (map->fd >= 0) {
      close(map->fd);
      map->fd = -1;
    }
    map_unref(map);
  }
}

static evrt_status_t get_ipc_event(evrt_event_t h, struct evrt__event **out) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  struct evrt__event *e = evrt__event_get(h);
  if (!e)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event", (void *)h);
  *out = e;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_ipc_handle(evrt_event_t h,
                                    evrt_ipc_event_handle_t *handle) {
  struct evrt__event *e = NULL;
  evrt_status_t st = get_ipc_event(h, &e);
  if (st)
    return st;
  if (!handle)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "handle is NULL");
  if (!(e->flags & EVRT_EVENT_INTERPROCESS))
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "event was not created with EVRT_EVENT_INTERPROCESS");
  if (e->imported)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "an imported event cannot be exported again");
  evrt__event_lock(e);
  if (!live_ipc(e)) {
    evrt__event_unlock(e);
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event destroyed");
  }
  int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
  st = ensure_shared(e, dev >= 0 ? dev : evrt__tls_device);
  struct evrt__ipc_map *map = map_of(e);
  if (st == EVRT_SUCCESS && map->fd < 0)
    st = evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event is being destroyed");
  if (st) {
    evrt__event_unlock(e);
    return st;
  }
  struct wire w;
  memset(&w, 0, sizeof w);
  w.magic = HANDLE_MAGIC;
  w.version = HANDLE_VERSION;
  w.device = map->shm->device;
  w.pid = my_pid;
  w.fd = map->fd;
  w.start = my_start;
  w.nonce = map->shm->nonce;
  w.event_id = e->id;
  w.check = checksum(&w);
  evrt__event_unlock(e);
  memcpy(handle->reserved, &w, sizeof w);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_ipc_open(evrt_event_t *event,
                                  const evrt_ipc_event_handle_t *handle) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!event || !handle)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "event or handle is NULL");
  init_self();
  struct wire w;
  memcpy(&w, handle->reserved, sizeof w);
  if (w.magic != HANDLE_MAGIC || w.version != HANDLE_VERSION || w.flags ||
      w.reserved || w.check != checksum(&w) || w.pid <= 0 || w.fd < 0)
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "not an evrt interprocess event handle (bad magic, "
                      "version or checksum)");
  if (w.pid == my_pid && w.start == my_start)
    return evrt__fail(EVRT_ERROR_IPC_SAME_PROCESS,
                      "the handle was exported by this process; use the "
                      "event itself");
  if (w.device < 0 || w.device >= evrt__ndevices)
    return evrt__fail(EVRT_ERROR_INVALID_DEVICE,
                      "handle's device %d does not exist here (%d devices)",
                      w.device, evrt__ndevices);
  if (!alive(w.pid, w.start))
    return evrt__fail(EVRT_ERROR_PEER_LOST, "the exporting process %d is gone",
                      w.pid);
  char path[64], target[128];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", w.pid, w.fd);
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n < 0)
    return evrt__fail(errno == ENOENT ? EVRT_ERROR_PEER_LOST
                                      : EVRT_ERROR_SYSTEM,
                      "cannot reach the exporter's event (%s): %s", path,
                      strerror(errno));
  target[n] = 0;
  if (strncmp(target, "/memfd:evrt-ipc", 15) != 0)
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "the handle does not name an evrt event");
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return evrt__fail(errno == ENOENT ? EVRT_ERROR_PEER_LOST
                                      : EVRT_ERROR_SYSTEM,
                      "cannot open the exporter's event: %s", strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size != SHM_SIZE) {
    close(fd);
    return evrt__fail(EVRT_ERROR_IPC_HANDLE, "the handle names no evrt event");
  }
  void *p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd); /* the mapping keeps the memory */
  if (p == MAP_FAILED)
    return evrt__fail(EVRT_ERROR_SYSTEM, "mmap: %s", strerror(errno));
  struct shm *m = p;
  if (m->magic != SHM_MAGIC || m->nonce != w.nonce || m->device != w.device) {
    munmap(p, SHM_SIZE);
    return evrt__fail(EVRT_ERROR_IPC_HANDLE,
                      "the handle's nonce does not match the event (forged "
                      "or stale handle)");
  }
  struct evrt__ipc_map *map = evrt__calloc(1, sizeof *map);
  if (!map) {
    munmap(p, SHM_SIZE);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "interprocess event state");
  }
  map->shm = m;
  map->fd = -1;
  atomic_init(&map->refs, 1);
  evrt_event_t h;
  st = evrt_event_create(&h, EVRT_EVENT_INTERPROCESS | EVRT_EVENT_NO_LIMIT);
  if (st) {
    munmap(p, SHM_SIZE);
    evrt__free(map);
    return st;
  }
  struct evrt__event *e = evrt__event_get(h);
  evrt__event_lock(e);
  e->imported = true;
  atomic_store_explicit(&e->device, w.device, memory_order_relaxed);
  atomic_store_explicit(&e->ipc, map, memory_order_release);
  evrt__event_unlock(e);
  *event = h;
  return EVRT_SUCCESS;
}
