/*
 * pool.c - the worker pool of the cpu backend: a run queue of ready streams
 * (two priority levels), workers that park on a private futex word when
 * idle, and a monitor that adds a worker when ready streams wait while every
 * worker is busy (a host function that blocks), up to a bound.
 *
 * The run queue is a ring of stream pointers per priority, not a list linked
 * through the streams: a worker taking a batch of a fan-out reads one line
 * of pointers and starts the misses on all the streams at once, where a list
 * made it wait for each stream's line in turn to find the next.  A stream
 * is in the queue at most once (only the thread that made it QUEUED pushes
 * it), so a ring as long as the number of stream objects of its priority
 * never overflows: evrt__stream_new reserves the room (and may fail there,
 * cleanly), evrt__stream_free gives it back, and a push never allocates.
 *
 * Locks: pool.lock is a leaf (push is called with no lock held, by the
 * thread that just made the stream QUEUED).  Workers never hold pool.lock
 * while running a stream.
 *
 * Wake-ups are targeted: a push wakes at most one parked worker, and none if
 * a worker is spinning (it will find the stream).  At most one worker spins
 * at a time, briefly: on 2 cores a second spinner steals the core that the
 * thread it waits for needs.
 */
#include "cpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct evrt__worker {
  atomic_uint futex; /* 0 = parked/idle, 1 = woken */
  struct evrt__worker *next_idle;
  bool extra;
};

/* A ring of ready streams; cap is a power of two (or 0) and >= need, the
 * number of stream objects of this priority (pool.lock). */
struct ring {
  struct evrt__stream **v;
  uint32_t cap, head, n, need;
};

/* Lines by writer: the lock and the rings (holders of the lock), rq_len
 * (written under the lock, read without it by spinners and by every worker
 * going idle), nspinning (spinners). */
static struct {
  _Alignas(64) pthread_mutex_t lock;
  struct ring rq[2];
  uint64_t pops;
  _Alignas(64) atomic_uint rq_len;
  _Alignas(64) atomic_int nspinning;
  struct evrt__worker *idle;
  int nidle, nworkers, base, max;
  pthread_cond_t exited;
  bool stop;
  bool mon_parked;
  atomic_uint mon_futex;
  pthread_t monitor;
  bool monitor_started;
  uint64_t seed; /* seq policy's seed (evrt__pool_seq) */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .exited = PTHREAD_COND_INITIALIZER};

/* The seq backend's policy (src/seq/): one worker, no monitor, and each pop
 * picks the queued stream whose key (seed, stream id, position) is least.
 * Written by pool_start with no worker alive (before it spawns any:
 * pthread_create orders it for them); read by workers and under P.lock. */
bool evrt__pool_seq;

static EVRT_TLS struct evrt__worker *tls_worker;
/* A stream resumed by this worker, run next by it (see evrt__pool_push_local). */
static EVRT_TLS struct evrt__stream *tls_runnext;
/* Streams popped together under one lock when many are ready (fan-out):
 * run by this worker in order, given back before user code runs. */
#define EVRT__POP_BATCH 8
static EVRT_TLS struct evrt__stream *tls_batch[EVRT__POP_BATCH];
static EVRT_TLS int tls_bhead, tls_btail;
/* Finished items this worker will free when it runs out of work. */
#define EVRT__DEFER_FREE_MAX 65536
static EVRT_TLS struct evrt__item *tls_dfree;
static EVRT_TLS uint32_t tls_ndfree;

/* Free up to max deferred items (all with UINT32_MAX). */
static void free_deferred(uint32_t max) {
  while (tls_dfree && max--) {
    struct evrt__item *next = tls_dfree->next;
    evrt__free(tls_dfree);
    tls_dfree = next;
    tls_ndfree--;
  }
}

void evrt__pool_defer_free(struct evrt__item *head, struct evrt__item *tail,
                           uint32_t n) {
  tail->next = tls_dfree;
  tls_dfree = head;
  tls_ndfree += n;
  if (tls_ndfree >= EVRT__DEFER_FREE_MAX)
    free_deferred(tls_ndfree - EVRT__DEFER_FREE_MAX / 2);
}

static void *worker_main(void *arg);

/* The lines a worker touches first when it runs s (a fan-out runs
 * thousands of streams last touched on other cores).  Called once the
 * scheduling line of every stream of the batch has been prefetched: the
 * load of s->head waits for it. */
static inline void prefetch_stream(struct evrt__stream *s) {
  evrt__prefetch_w(&s->done_seq); /* stored seq_cst after the first item */
  __builtin_prefetch(&s->enq_seq, 0, 3);
  __builtin_prefetch(s->head, 0, 3);
}

/* Caller holds P.lock. */
static int spawn_locked(bool extra) {
  struct evrt__worker *w = evrt__calloc(1, sizeof *w);
  if (!w)
    return ENOMEM;
  w->extra = extra;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 256 * 1024);
  pthread_t th;
  int r = pthread_create(&th, &a, worker_main, w);
  pthread_attr_destroy(&a);
  if (r) {
    evrt__free(w);
    return r;
  }
  P.nworkers++;
  return 0;
}

static inline int ring_of(const struct evrt__stream *s) {
  return s->priority < 0 ? 0 : 1;
}

/* Take up to max streams, high priority first (caller holds P.lock and
 * stores rq_len after). */
static int pop_locked(struct evrt__stream **out, int max) {
  int k = 0;
  for (int q = 0; q < 2 && k < max; q++) {
    struct ring *r = &P.rq[q];
    while (r->n && k < max) {
      out[k++] = r->v[r->head];
      r->head = (r->head + 1) & (r->cap - 1);
      r->n--;
    }
  }
  P.pops += (uint64_t)k;
  return k;
}

/* splitmix64's finalizer: a bijection that scatters nearby inputs. */
static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The seq policy's draw for a queued stream: a function of the seed, the
 * stream's id and the position of its head item only, so that the pick
 * does not depend on the order in which the streams were queued (which
 * another thread's timing may set).  A stream picked only to find its
 * head blocked parks without moving, and keeps its key. */
static inline uint64_t seq_key(struct evrt__stream *s) {
  uint64_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
  return mix64(P.seed ^ mix64(id * 0x9e3779b97f4a7c15ull + evrt__done(s) + 1));
}

/* Seq policy: take the stream of least key of the first non-empty ring
 * (ties: lower id), O(queued streams).  Caller holds P.lock. */
static int pop_seq_locked(struct evrt__stream **out) {
  for (int q = 0; q < 2; q++) {
    struct ring *r = &P.rq[q];
    if (!r->n)
      continue;
    uint32_t m = r->cap - 1, best = 0;
    uint64_t bk = 0, bid = 0;
    for (uint32_t i = 0; i < r->n; i++) {
      struct evrt__stream *s = r->v[(r->head + i) & m];
      uint64_t k = seq_key(s);
      uint64_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
      if (i == 0 || k < bk || (k == bk && id < bid)) {
        best = i;
        bk = k;
        bid = id;
      }
    }
    struct evrt__stream *pick = r->v[(r->head + best) & m];
    r->v[(r->head + best) & m] = r->v[r->head];
    out[0] = pick;
    r->head = (r->head + 1) & m;
    r->n--;
    P.pops++;
    return 1;
  }
  return 0;
}

/* Move ring q to an array of newcap (>= its length, a power of two). */
static void ring_move_locked(struct ring *r, struct evrt__stream **nv,
                             uint32_t newcap) {
  for (uint32_t i = 0; i < r->n; i++)
    nv[i] = r->v[(r->head + i) & (r->cap - 1)];
  r->v = nv;
  r->cap = newcap;
  r->head = 0;
}

evrt_status_t evrt__pool_reserve(const struct evrt__stream *s) {
  struct ring *r = &P.rq[ring_of(s)];
  struct evrt__stream **nv = NULL, **old = NULL;
  uint32_t want = 0;
  pthread_mutex_lock(&P.lock);
  for (;;) {
    if (r->need < r->cap) {
      r->need++;
      break;
    }
    if (nv && want > r->need) {
      old = r->v;
      ring_move_locked(r, nv, want);
      nv = NULL;
      r->need++;
      break;
    }
    /* Allocate outside the lock (workers pop under it), then look again. */
    want = r->cap ? r->cap * 2 : 64;
    if (want <= r->cap) { /* 2^32 streams of one priority */
      pthread_mutex_unlock(&P.lock);
      return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "run queue is full");
    }
    pthread_mutex_unlock(&P.lock);
    evrt__free(nv);
    nv = evrt__malloc((size_t)want * sizeof *nv);
    if (!nv)
      return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                        "cannot grow the run queue to %u streams", want);
    pthread_mutex_lock(&P.lock);
  }
  pthread_mutex_unlock(&P.lock);
  evrt__free(nv);
  evrt__free(old);
  return EVRT_SUCCESS;
}

void evrt__pool_unreserve(const struct evrt__stream *s) {
  struct ring *r = &P.rq[ring_of(s)];
  pthread_mutex_lock(&P.lock);
  r->need--;
  /* Shrink after a burst of streams is gone (not below 1024 entries, and
   * never below what the ring holds: it holds at most `need`). */
  uint32_t want = r->cap / 2;
  bool shrink = r->cap > 1024 && r->need < r->cap / 4;
  pthread_mutex_unlock(&P.lock);
  if (!shrink)
    return;
  struct evrt__stream **nv = evrt__malloc((size_t)want * sizeof *nv);
  if (!nv)
    return; /* keep the larger ring */
  pthread_mutex_lock(&P.lock);
  struct evrt__stream **old = NULL;
  if (r->cap == want * 2 && r->need < want && r->n <= want) {
    old = r->v;
    ring_move_locked(r, nv, want);
    nv = NULL;
  }
  pthread_mutex_unlock(&P.lock);
  evrt__free(nv);
  evrt__free(old);
}

/* Who to wake for work now in the queue (caller holds P.lock): a parked
 * worker if nobody spins, else the monitor if every worker is busy. */
struct wake {
  struct evrt__worker *w;
  bool monitor;
};

static struct wake pick_wake_locked(void) {
  struct wake k = {NULL, false};
  if (atomic_load_explicit(&P.nspinning, memory_order_relaxed) == 0 && P.idle) {
    k.w = P.idle;
    P.idle = k.w->next_idle;
    P.nidle--;
    atomic_store_explicit(&k.w->futex, 1, memory_order_relaxed);
  } else if (P.nidle == 0 && P.mon_parked) {
    P.mon_parked = false;
    atomic_store_explicit(&P.mon_futex, 1, memory_order_relaxed);
    k.monitor = true;
  }
  return k;
}

/* After releasing P.lock. */
static void do_wake(struct wake k) {
  if (k.w)
    evrt__futex_wake(&k.w->futex, 1, 0);
  if (k.monitor)
    evrt__futex_wake(&P.mon_futex, 1, 0);
}

/* Caller holds P.lock.  Never full: see the top of the file. */
static void append_locked(struct evrt__stream *s) {
  struct ring *r = &P.rq[ring_of(s)];
  r->v[(r->head + r->n) & (r->cap - 1)] = s;
  r->n++;
}

/* Streams the caller owns (each just CASed to QUEUED), under one lock and
 * with at most one wake-up: a woken worker that finds more passes the
 * wake-up on (worker_main). */
void evrt__pool_push_many(struct evrt__stream **v, int n) {
  if (n <= 0)
    return;
  EVRT__NO_SPIN_HELD("run queue push (pool mutex, futex wake)");
  pthread_mutex_lock(&P.lock);
  for (int i = 0; i < n; i++)
    append_locked(v[i]);
  /* written under the lock only: a plain add, no locked instruction */
  atomic_store_explicit(&P.rq_len,
                        atomic_load_explicit(&P.rq_len, memory_order_relaxed) +
                            (unsigned)n,
                        memory_order_relaxed);
  struct wake k = pick_wake_locked();
  pthread_mutex_unlock(&P.lock);
  do_wake(k);
}

/* On a worker, keep a stream it just resumed to run next itself: a chain of
 * waits (A resumes B, B resumes A) then stays on one worker, with no run
 * queue, no lock and no cross-core hand-off.  Returns false (the caller
 * pushes it) off workers or when the slot is taken. */
bool evrt__pool_push_local(struct evrt__stream *s) {
  /* (seq policy: every stream goes through the seeded pick) */
  if (!tls_worker || tls_runnext || EVRT_UNLIKELY(evrt__pool_seq))
    return false;
  tls_runnext = s;
  return true;
}

/* Before running something that may take long (user code), give the kept
 * stream to the pool so that it does not wait behind it. */
void evrt__pool_flush_local(void) {
  evrt__exec_settle();
  struct evrt__stream *v[EVRT__POP_BATCH + 1];
  int n = 0;
  if (tls_runnext) {
    v[n++] = tls_runnext;
    tls_runnext = NULL;
  }
  while (tls_bhead < tls_btail)
    v[n++] = tls_batch[tls_bhead++];
  tls_bhead = tls_btail = 0;
  evrt__pool_push_many(v, n);
}

void evrt__pool_push(struct evrt__stream *s) { evrt__pool_push_many(&s, 1); }

static void worker_exit_locked(struct evrt__worker *w) {
  evrt__exec_thread_exit(); /* settled before its last pop or park */
  free_deferred(UINT32_MAX);
  P.nworkers--;
  if (P.nworkers == 0)
    pthread_cond_broadcast(&P.exited);
  evrt__free(w);
}

static void *worker_main(void *arg) {
  struct evrt__worker *w = arg;
  tls_worker = w;
  uint64_t spin_ns = evrt__spin_budget_ns();
  for (;;) {
    struct evrt__stream *s = tls_runnext;
    if (s) {
      /* A stream this worker resumed: run it now, on this warm core. */
      tls_runnext = NULL;
      evrt__exec_stream(s);
      continue;
    }
    if (tls_bhead < tls_btail) {
      s = tls_batch[tls_bhead++];
      if (tls_bhead == tls_btail)
        tls_bhead = tls_btail = 0;
      evrt__exec_stream(s);
      continue;
    }
    /* Before taking more work (and before parking or leaving).  Its
     * notifies may keep a resumed stream for us to run next: run it. */
    if (evrt__tls_nunsettled) {
      evrt__exec_settle_slow();
      if (tls_runnext)
        continue;
    }
    pthread_mutex_lock(&P.lock);
    if (P.stop) {
      worker_exit_locked(w);
      pthread_mutex_unlock(&P.lock);
      return NULL;
    }
    /* Many ready streams (a fan-out): take a few more under this lock,
     * leaving plenty for the other workers. */
    unsigned len = atomic_load_explicit(&P.rq_len, memory_order_relaxed);
    int take = 1;
    if ((int)len - 2 * P.nworkers > 1)
      take = (int)len - 2 * P.nworkers;
    if (take > EVRT__POP_BATCH + 1)
      take = EVRT__POP_BATCH + 1;
    struct evrt__stream *got[EVRT__POP_BATCH + 1];
    int ngot = EVRT_UNLIKELY(evrt__pool_seq) ? pop_seq_locked(got)
                                             : pop_locked(got, take);
    s = ngot ? got[0] : NULL;
    for (int i = 1; i < ngot; i++)
      tls_batch[tls_btail++] = got[i];
    len -= (unsigned)ngot;
    atomic_store_explicit(&P.rq_len, len, memory_order_relaxed);
    /* More ready streams than this worker can take: a push that saw a
     * spinner woke nobody, trusting it to find the work; it found one
     * stream, so pass the wake-up on (else a second stream could wait for
     * a worker while one sleeps idle). */
    struct wake k = {NULL, false};
    if (s && len > 0)
      k = pick_wake_locked();
    pthread_mutex_unlock(&P.lock);
    do_wake(k);
    if (s) {
      /* Streams of a fan-out were last touched on other cores: start all
       * their misses now, so they overlap instead of following one another
       * (the scheduling lines first: reading s->head needs its line). */
      for (int i = 0; i < ngot; i++)
        evrt__prefetch_w(&got[i]->state); /* stored RUNNING, then IDLE */
      for (int i = 1; i < ngot; i++)
        prefetch_stream(got[i]);
      evrt__exec_stream(s);
      continue;
    }
    if (tls_dfree) {
      /* Idle now: pay for the frees put off under load, a slice at a time
       * so that new work is never kept waiting long. */
      free_deferred(256);
      continue;
    }
    /* Nothing to run: spin briefly if nobody else does, then park. */
    if (spin_ns &&
        atomic_fetch_add_explicit(&P.nspinning, 1, memory_order_relaxed) == 0) {
      uint64_t t0 = evrt__now_ns();
      for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&P.rq_len, memory_order_relaxed))
          break;
        evrt__cpu_relax();
        if ((i & 31) == 0) {
          if (evrt__now_ns() - t0 > spin_ns)
            break;
          /* The thread that will feed us may be waiting for this very
           * CPU: a kernel that packs threads onto few CPUs (this VM's)
           * places a woken worker on its waker's CPU, where it preempts
           * the waker, say a notify with more streams to queue.  Spinning
           * would hold the waker off until we park; yielding lets it run.
           * With nothing else runnable here it returns at once. */
          sched_yield();
        }
      }
      atomic_fetch_sub_explicit(&P.nspinning, 1, memory_order_relaxed);
    } else if (spin_ns) {
      /* someone else spins: undo our count (never with EVRT_SPIN_NS=0,
       * where nothing was counted) */
      atomic_fetch_sub_explicit(&P.nspinning, 1, memory_order_relaxed);
    }
    pthread_mutex_lock(&P.lock);
    if (P.rq_len || P.stop) {
      pthread_mutex_unlock(&P.lock);
      continue;
    }
    atomic_store_explicit(&w->futex, 0, memory_order_relaxed);
    w->next_idle = P.idle;
    P.idle = w;
    P.nidle++;
    pthread_mutex_unlock(&P.lock);
    for (;;) {
      int r = evrt__futex_wait(&w->futex, 0, w->extra ? 2000000000LL : -1, 0);
      pthread_mutex_lock(&P.lock);
      if (atomic_load_explicit(&w->futex, memory_order_relaxed)) {
        pthread_mutex_unlock(&P.lock);
        break;
      }
      if (P.stop || (r == ETIMEDOUT && w->extra)) {
        /* Still on the idle stack: take ourselves off and leave. */
        for (struct evrt__worker **p = &P.idle; *p; p = &(*p)->next_idle)
          if (*p == w) {
            *p = w->next_idle;
            P.nidle--;
            break;
          }
        worker_exit_locked(w);
        pthread_mutex_unlock(&P.lock);
        return NULL;
      }
      pthread_mutex_unlock(&P.lock);
    }
  }
}

/* Adds a worker when ready streams have waited a whole tick with no worker
 * taking any: every worker is then stuck in user code. */
static void *monitor_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&P.lock);
  while (!P.stop) {
    if (P.rq_len == 0 || P.nidle > 0) {
      P.mon_parked = true;
      atomic_store_explicit(&P.mon_futex, 0, memory_order_relaxed);
      pthread_mutex_unlock(&P.lock);
      while (!atomic_load_explicit(&P.mon_futex, memory_order_relaxed))
        evrt__futex_wait(&P.mon_futex, 0, -1, 0);
      pthread_mutex_lock(&P.lock);
      continue;
    }
    uint64_t pops = P.pops;
    pthread_mutex_unlock(&P.lock);
    evrt__sleep_ns(1000000);
    pthread_mutex_lock(&P.lock);
    if (!P.stop && P.rq_len > 0 && P.pops == pops && P.nidle == 0 &&
        P.nworkers < P.max)
      spawn_locked(true);
  }
  pthread_mutex_unlock(&P.lock);
  return NULL;
}

/* Start `base` workers (seq: exactly one, no monitor). */
static evrt_status_t pool_start(int base, bool seq, uint64_t seed) {
  evrt__cpu_features_init();
  pthread_mutex_lock(&P.lock);
  evrt__pool_seq = seq;
  P.seed = seed;
  P.base = base;
  P.max = seq ? base : base + 62;
  P.stop = false;
  int err = 0;
  for (int i = 0; i < base && !err; i++)
    err = spawn_locked(false);
  if (!err && !seq && !P.monitor_started) {
    err = pthread_create(&P.monitor, NULL, monitor_main, NULL);
    P.monitor_started = err == 0;
  }
  pthread_mutex_unlock(&P.lock);
  if (err)
    return evrt__fail(err == ENOMEM ? EVRT_ERROR_OUT_OF_MEMORY
                                    : EVRT_ERROR_SYSTEM,
                      "cannot start worker threads: %s", strerror(err));
  return EVRT_SUCCESS;
}

evrt_status_t evrt__pool_init(void) {
  int ncpu = evrt__ncpu();
  /* default: one per CPU, at least 2 (a bad value warns, os.c) */
  int base = (int)evrt__env_long("EVRT_WORKERS", ncpu < 2 ? 2 : ncpu, 1, 256);
  return pool_start(base, false, 0);
}

evrt_status_t evrt__pool_init_seq(uint64_t seed) {
  return pool_start(1, true, seed);
}

void evrt__pool_shutdown(void) {
  pthread_mutex_lock(&P.lock);
  P.stop = true;
  for (struct evrt__worker *w = P.idle; w; w = w->next_idle) {
    atomic_store_explicit(&w->futex, 1, memory_order_relaxed);
    evrt__futex_wake(&w->futex, 1, 0);
  }
  P.idle = NULL;
  P.nidle = 0;
  atomic_store_explicit(&P.mon_futex, 1, memory_order_relaxed);
  evrt__futex_wake(&P.mon_futex, 1, 0);
  while (P.nworkers > 0)
    pthread_cond_wait(&P.exited, &P.lock);
  bool join = P.monitor_started;
  P.monitor_started = false;
  pthread_mutex_unlock(&P.lock);
  if (join)
    pthread_join(P.monitor, NULL);
}

bool evrt__pool_on_worker(void) { return tls_worker != NULL; }

bool evrt__pool_has_ready(void) {
  return atomic_load_explicit(&P.rq_len, memory_order_relaxed) != 0;
}

/* At most one thread of the pool spins at a time (see the top of the file). */
bool evrt__pool_spin_enter(void) {
  if (atomic_fetch_add_explicit(&P.nspinning, 1, memory_order_relaxed) == 0)
    return true;
  atomic_fetch_sub_explicit(&P.nspinning, 1, memory_order_relaxed);
  return false;
}

void evrt__pool_spin_leave(void) {
  atomic_fetch_sub_explicit(&P.nspinning, 1, memory_order_relaxed);
  /* A push made while we spun woke nobody, trusting the spinner; a stream
   * spinner may go on with its own stream instead of taking it, so hand
   * the work to a parked worker (or the monitor). */
  if (!atomic_load_explicit(&P.rq_len, memory_order_relaxed))
    return;
  pthread_mutex_lock(&P.lock);
  struct wake k = {NULL, false};
  if (P.rq_len)
    k = pick_wake_locked();
  pthread_mutex_unlock(&P.lock);
  do_wake(k);
}
