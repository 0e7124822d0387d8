/* Scheduler (DESIGN.md section 5): independent progress, bounded threads,
 * idle workers burn no CPU, host functions may call evrt, synchronize from a
 * host function on its own stream is an error. */
#include "test.h"

#define MS 1000000ull

static uint64_t process_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static atomic_int blocked_now;

static void block_on_gate(void *p) {
  (void)p;
  atomic_fetch_add(&blocked_now, 1);
  pthread_mutex_lock(&gate_mu);
  while (!gate_open)
    pthread_cond_wait(&gate_cv, &gate_mu);
  pthread_mutex_unlock(&gate_mu);
  atomic_fetch_sub(&blocked_now, 1);
}
static void set_flag(void *p) { atomic_store((atomic_int *)p, 1); }

TEST(blocking_host_functions_do_not_stall_other_streams) {
  /* Block more host functions than there are cores (and workers), then
   * check that an unrelated stream still makes progress: the pool adds
   * workers. */
  enum { B = 6 };
  evrt_stream_t blk[B], free_s;
  gate_open = 0;
  for (int i = 0; i < B; i++) {
    ASSERT_OK(evrt_stream_create(&blk[i], 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(blk[i], block_on_gate, NULL));
  }
  WAIT_UNTIL(atomic_load(&blocked_now) == B, 5000);
  ASSERT_EQ(atomic_load(&blocked_now), B); /* all blocked at once */
  atomic_int ran = 0;
  ASSERT_OK(evrt_stream_create(&free_s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(free_s, set_flag, &ran));
  ASSERT_OK(evrt_stream_synchronize_timeout(free_s, 5000 * MS));
  ASSERT(atomic_load(&ran));
  pthread_mutex_lock(&gate_mu);
  gate_open = 1;
  pthread_cond_broadcast(&gate_cv);
  pthread_mutex_unlock(&gate_mu);
  for (int i = 0; i < B; i++) {
    ASSERT_OK(evrt_stream_synchronize(blk[i]));
    evrt_stream_destroy(blk[i]);
  }
  evrt_stream_destroy(free_s);
}

TEST(worker_count_bounded_and_shrinks_after_burst) {
  int base = thread_count();
  enum { B = 12 };
  evrt_stream_t blk[B];
  gate_open = 0;
  for (int i = 0; i < B; i++) {
    ASSERT_OK(evrt_stream_create(&blk[i], 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(blk[i], block_on_gate, NULL));
  }
  WAIT_UNTIL(atomic_load(&blocked_now) == B, 10000);
  ASSERT_EQ(atomic_load(&blocked_now), B);
  int burst = thread_count();
  ASSERT(burst >= B);
  ASSERT(burst <= base + B + 4); /* no runaway */
  pthread_mutex_lock(&gate_mu);
  gate_open = 1;
  pthread_cond_broadcast(&gate_cv);
  pthread_mutex_unlock(&gate_mu);
  for (int i = 0; i < B; i++) {
    ASSERT_OK(evrt_stream_synchronize(blk[i]));
    evrt_stream_destroy(blk[i]);
  }
  /* extra workers retire after being idle for a while */
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  WAIT_UNTIL(thread_count() <= ncpu + 4 + 2, 10000);
  ASSERT(thread_count() <= ncpu + 4 + 2);
}

TEST(idle_process_burns_no_cpu) {
  evrt_stream_t s[8];
  static atomic_int flags[8];
  for (int i = 0; i < 8; i++) {
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(s[i], set_flag, &flags[i]));
  }
  for (int i = 0; i < 8; i++)
    ASSERT_OK(evrt_stream_synchronize(s[i]));
  sleep_ms(100); /* let spinning workers park */
  uint64_t c0 = process_cpu_ns();
  sleep_ms(1000);
  uint64_t used = process_cpu_ns() - c0;
  if (used > 20 * MS)
    FAIL_("idle process used %.1f ms CPU in 1 s", used / 1e6);
  for (int i = 0; i < 8; i++)
    evrt_stream_destroy(s[i]);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

TEST(hundred_thousand_streams_fit_and_free) {
  enum { N = 100000 };
  static evrt_stream_t s[N];
  ASSERT_OK(evrt_init());
  int threads0 = thread_count();
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
  long rss1 = rss_kb();
  ASSERT(thread_count() <= threads0 + 2); /* streams are not threads */
  fprintf(stderr, "  100k idle streams: RSS %ld kB\n", rss1);
  /* The low half of a handle is its slot (index and type, keyed per
   * process: a bijection of the slot, so equal halves mean equal slots). */
  static uint32_t slots[N];
  for (int i = 0; i < N; i++) {
    slots[i] = (uint32_t)(uintptr_t)s[i];
    ASSERT_OK(evrt_stream_destroy(s[i]));
  }
  qsort(slots, N, sizeof slots[0], cmp_u32);
  /* a second round reuses the slots: no growth */
  for (int i = 0; i < N; i++) {
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
    uint32_t low = (uint32_t)(uintptr_t)s[i];
    ASSERT(bsearch(&low, slots, N, sizeof slots[0], cmp_u32) != NULL);
  }
  long rss2 = rss_kb();
  fprintf(stderr, "  after destroy + 100k again: RSS %ld kB\n", rss2);
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_stream_destroy(s[i]));
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  /* (sanitizer runtimes keep their own growing metadata: RSS means nothing
   * there; the slot-index check above still holds) */
  if (rss2 > rss1 + 4096)
    FAIL_("RSS grew from %ld kB to %ld kB on reuse", rss1, rss2);
  if (rss1 > 2 * 100 * 1024) /* < 2 KiB per stream, generously */
    FAIL_("100k idle streams take %ld kB", rss1);
#endif
}

struct reenter {
  evrt_stream_t self, other;
  evrt_event_t ev;
  evrt_status_t sync_self, sync_ev, query_other, enqueue, record, shutdown;
  atomic_int inner_ran;
};
static void inner(void *p) { atomic_store(&((struct reenter *)p)->inner_ran, 1); }
static void reentrant(void *p) {
  struct reenter *r = p;
  r->sync_self = evrt_stream_synchronize(r->self);
  r->enqueue = evrt_launch_host_func(r->other, inner, r);
  r->record = evrt_event_record(r->ev, r->self); /* records later work */
  r->sync_ev = evrt_event_synchronize(r->ev);
  r->query_other = evrt_stream_query(r->other);
  r->shutdown = evrt_shutdown();
}

TEST(host_functions_may_call_evrt_but_not_wait_on_themselves) {
  struct reenter r;
  memset(&r, 0, sizeof r);
  ASSERT_OK(evrt_stream_create(&r.self, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&r.other, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&r.ev, 0));
  ASSERT_OK(evrt_launch_host_func(r.self, reentrant, &r));
  ASSERT_OK(evrt_stream_synchronize(r.self));
  ASSERT_ST(r.sync_self, EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT_OK(r.enqueue);
  ASSERT_OK(r.record);
  ASSERT_ST(r.sync_ev, EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT(r.query_other == EVRT_SUCCESS || r.query_other == EVRT_NOT_READY);
  ASSERT_ST(r.shutdown, EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT_OK(evrt_stream_synchronize(r.other));
  ASSERT(atomic_load(&r.inner_ran));
  ASSERT_OK(evrt_event_query(r.ev));
  evrt_event_destroy(r.ev);
  evrt_stream_destroy(r.self);
  evrt_stream_destroy(r.other);
}
