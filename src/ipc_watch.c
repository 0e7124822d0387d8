/*
 * ipc_watch.c - the watcher thread: streams of this process that wait on a
 * pending interprocess generation are parked and put on its list; it sleeps
 * in futex_waitv on the shared futex words of every watched event (plus a
 * private kick word) and resumes the streams whose generation ended (or
 * whose recorder died).  Polls every 200 us on kernels without futex_waitv.
 *
 * Locks: W.lock is a leaf (owners are resumed after releasing it).
 */
#include "ipc.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
  int st = evrt__ipc_gen_state(it->u.ev.ipc->shm, it->u.ev.target, check_peer);
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
      struct evrt__ipc_shm *m = it->u.ev.ipc->shm;
      unsigned v = atomic_load_explicit(&m->seq, memory_order_seq_cst);
      int st = evrt__ipc_gen_state(m, it->u.ev.target, true);
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
      evrt__be_stream_resume(owners[i]);
    if (k == 0) {
      if (empty) {
        evrt__futex_wait(&W.kick, kick, -1, 0);
      } else if (have_waitv) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)EVRT__IPC_PEER_CHECK_NS;
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
    evrt__ipc_map_unref(it->u.ev.ipc);
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
