/*
 * timer.c - one lazily started timer thread resumes streams whose head item
 * is a delay or a wait with a timeout, at its deadline.  Nothing spins: the
 * thread sleeps on a condition variable (CLOCK_MONOTONIC) until the earliest
 * deadline.
 *
 * Locks: timer.lock is a leaf.  Streams are resumed after it is released.
 * A fired entry may race with its item completing for another reason; the
 * resume is then spurious and only re-evaluates the stream's head.
 */
#include "cpu.h"

#include <errno.h>
#include <time.h>

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct evrt__item **heap;
  int n, cap;
  bool started, stop;
  pthread_t th;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void swap(int a, int b) {
  struct evrt__item *t = T.heap[a];
  T.heap[a] = T.heap[b];
  T.heap[b] = t;
  T.heap[a]->timer_idx = a;
  T.heap[b]->timer_idx = b;
}

static void sift_up(int i) {
  while (i > 0) {
    int p = (i - 1) / 2;
    if (T.heap[p]->deadline <= T.heap[i]->deadline)
      break;
    swap(i, p);
    i = p;
  }
}

static void sift_down(int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < T.n && T.heap[l]->deadline < T.heap[m]->deadline)
      m = l;
    if (r < T.n && T.heap[r]->deadline < T.heap[m]->deadline)
      m = r;
    if (m == i)
      return;
    swap(i, m);
    i = m;
  }
}

static void remove_at(int i) {
  T.heap[i]->timer_idx = -1;
  T.n--;
  if (i != T.n) {
    T.heap[i] = T.heap[T.n];
    T.heap[i]->timer_idx = i;
    sift_down(i);
    sift_up(i);
  }
}

static void *timer_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&T.lock);
  while (!T.stop) {
    if (T.n == 0) {
      pthread_cond_wait(&T.cond, &T.lock);
      continue;
    }
    uint64_t now = evrt__now_ns();
    if (T.heap[0]->deadline > now) {
      uint64_t d = T.heap[0]->deadline;
      struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
      pthread_cond_timedwait(&T.cond, &T.lock, &ts);
      continue;
    }
    enum { BATCH = 32 };
    struct evrt__stream *owners[BATCH];
    int k = 0;
    while (T.n > 0 && k < BATCH && T.heap[0]->deadline <= now) {
      owners[k++] = T.heap[0]->owner;
      remove_at(0);
    }
    pthread_mutex_unlock(&T.lock);
    for (int i = 0; i < k; i++)
      evrt__cpu_stream_resume(owners[i]);
    pthread_mutex_lock(&T.lock);
  }
  pthread_mutex_unlock(&T.lock);
  return NULL;
}

evrt_status_t evrt__timer_arm(struct evrt__item *it) {
  EVRT__NO_SPIN_HELD("timer arm (mutex)");
  evrt_status_t st = EVRT_SUCCESS;
  pthread_mutex_lock(&T.lock);
  if (it->timer_idx >= 0 && it->timer_idx < T.n && T.heap[it->timer_idx] == it) {
    pthread_mutex_unlock(&T.lock); /* armed already */
    return EVRT_SUCCESS;
  }
  if (!T.started) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&T.cond, &a);
    pthread_condattr_destroy(&a);
    T.stop = false;
    if (pthread_create(&T.th, NULL, timer_main, NULL) != 0) {
      pthread_mutex_unlock(&T.lock);
      return EVRT_ERROR_SYSTEM;
    }
    T.started = true;
  }
  if (T.n == T.cap) {
    int cap = T.cap ? T.cap * 2 : 64;
    struct evrt__item **h = evrt__malloc(sizeof *h * (size_t)cap);
    if (!h) {
      st = EVRT_ERROR_OUT_OF_MEMORY;
      goto out;
    }
    for (int i = 0; i < T.n; i++)
      h[i] = T.heap[i];
    evrt__free(T.heap);
    T.heap = h;
    T.cap = cap;
  }
  T.heap[T.n] = it;
  it->timer_idx = T.n++;
  sift_up(it->timer_idx);
  if (it->timer_idx == 0)
    pthread_cond_signal(&T.cond);
out:
  pthread_mutex_unlock(&T.lock);
  return st;
}

void evrt__timer_cancel(struct evrt__item *it) {
  pthread_mutex_lock(&T.lock);
  if (it->timer_idx >= 0 && it->timer_idx < T.n && T.heap[it->timer_idx] == it)
    remove_at(it->timer_idx);
  it->timer_idx = -1;
  pthread_mutex_unlock(&T.lock);
}

void evrt__timer_shutdown(void) {
  pthread_mutex_lock(&T.lock);
  bool join = T.started;
  T.stop = true;
  T.started = false;
  if (join)
    pthread_cond_signal(&T.cond);
  pthread_mutex_unlock(&T.lock);
  if (join)
    pthread_join(T.th, NULL);
  pthread_mutex_lock(&T.lock);
  T.n = 0;
  evrt__free(T.heap);
  T.heap = NULL;
  T.cap = 0;
  pthread_mutex_unlock(&T.lock);
}
