/* Waiters (src/cpu/wait.c, src/cpu/exec.c): host threads parked on
 * different targets of one stream are each woken once their own target
 * completes (never before, never lost, not at every completion), timed-out
 * waiters leave cleanly, and a fan-out resumes every waiting stream with the
 * wait status right before and after. */
#include "test.h"

#include <sys/resource.h>

#define MS 1000000ull

/* ------------------------------------------------------------ helpers */

static atomic_int gate;
static void wait_gate(void *p) {
  (void)p;
  while (!atomic_load(&gate))
    usleep(200);
}
static void count_fn(void *p) { atomic_fetch_add((atomic_int *)p, 1); }
static void sleep_50us(void *p) {
  (void)p;
  usleep(50);
}

static long thread_vcsw(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw;
}

/* ------------------------------------------------- many host waiters */

enum { NW = 8, PER = 50 };
static atomic_int done_items;

struct waiter {
  pthread_t th;
  evrt_event_t ev;
  int k;               /* waits for the generation after (k + 1) * PER items */
  int64_t timeout_ns;  /* -1: forever */
  evrt_status_t st;
  int seen_at_return; /* items done when synchronize returned */
};

static void *waiter_main(void *p) {
  struct waiter *w = p;
  w->st = evrt_event_synchronize_timeout(w->ev, w->timeout_ns);
  w->seen_at_return = atomic_load(&done_items);
  return NULL;
}

TEST(host_waiters_on_different_targets_each_return_at_their_own) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  atomic_store(&gate, 0);
  atomic_store(&done_items, 0);
  ASSERT_OK(evrt_launch_host_func(s, wait_gate, NULL));
  struct waiter w[NW];
  for (int k = 0; k < NW; k++) {
    for (int i = 0; i < PER; i++)
      ASSERT_OK(evrt_launch_host_func(s, count_fn, &done_items));
    memset(&w[k], 0, sizeof w[k]);
    w[k].k = k;
    /* half of them park at once, half spin first */
    ASSERT_OK(evrt_event_create(&w[k].ev,
                                k % 2 ? EVRT_EVENT_BLOCKING_SYNC : 0));
    ASSERT_OK(evrt_event_record(w[k].ev, s));
    /* Waiters 1 and 4 give up long before the gate opens. */
    w[k].timeout_ns = (k == 1 || k == 4) ? (int64_t)(20 * MS) : -1;
  }
  /* Start the waiters in reverse order so that registrations interleave
   * with different targets. */
  for (int k = NW - 1; k >= 0; k--)
    ASSERT(pthread_create(&w[k].th, NULL, waiter_main, &w[k]) == 0);
  sleep_ms(60); /* most waiters are parked by now */
  /* The two with a timeout give up before the gate opens: by order, not by
   * time (a loaded machine may start a thread later than 60 ms). */
  pthread_join(w[1].th, NULL);
  pthread_join(w[4].th, NULL);
  atomic_store(&gate, 1);
  for (int k = 0; k < NW; k++)
    if (k != 1 && k != 4)
      pthread_join(w[k].th, NULL);
  for (int k = 0; k < NW; k++) {
    if (k == 1 || k == 4) {
      ASSERT_ST(w[k].st, EVRT_ERROR_TIMEOUT);
      ASSERT(w[k].seen_at_return == 0); /* gave up before any item ran */
    } else {
      ASSERT_OK(w[k].st);
      /* never before its own target */
      ASSERT(w[k].seen_at_return >= (k + 1) * PER);
    }
  }
  /* The timed-out waiters left nothing behind: the events complete and the
   * stream keeps working. */
  ASSERT_OK(evrt_stream_synchronize(s));
  for (int k = 0; k < NW; k++) {
    ASSERT_OK(evrt_event_query(w[k].ev));
    ASSERT_OK(evrt_event_synchronize(w[k].ev));
    evrt_event_destroy(w[k].ev);
  }
  ASSERT_EQ(atomic_load(&done_items), NW * PER);
  evrt_stream_destroy(s);
}

/* A host thread parked on the last of 2,000 items is woken once, not at each
 * completion: it makes few voluntary context switches. */
TEST(parked_host_is_not_woken_by_every_completion) {
  enum { N = 2000 };
  evrt_stream_t s;
  evrt_event_t last;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&last, EVRT_EVENT_BLOCKING_SYNC));
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_launch_host_func(s, sleep_50us, NULL));
  ASSERT_OK(evrt_event_record(last, s));
  long before = thread_vcsw();
  ASSERT_OK(evrt_event_synchronize(last));
  long switches = thread_vcsw() - before;
  ASSERT_OK(evrt_stream_query(s));
  /* One park and one wake-up (a few spurious ones allowed); a wake-up per
   * completion would be about N. */
  if (switches > 20)
    FAIL_("host parked once but switched %ld times for %d completions",
          switches, N);
  evrt_event_destroy(last);
  evrt_stream_destroy(s);
}

/* ---------------------------------------------------------- fan-out */

TEST(fanout_resumes_every_waiting_stream) {
  enum { N = 1000 };
  static evrt_stream_t st[N];
  static evrt_event_t ev[N];
  static atomic_int ran[N];
  evrt_stream_t src;
  evrt_event_t e0;
  ASSERT_OK(evrt_stream_create(&src, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e0, 0));
  atomic_store(&gate, 0);
  ASSERT_OK(evrt_launch_host_func(src, wait_gate, NULL));
  ASSERT_OK(evrt_event_record(e0, src));
  ASSERT_OK(evrt_event_wait_status(e0)); /* nobody waits yet */
  for (int i = 0; i < N; i++) {
    atomic_store(&ran[i], 0);
    ASSERT_OK(evrt_stream_create(&st[i], 0, 0, 0));
    ASSERT_OK(evrt_event_create(&ev[i], 0));
    ASSERT_OK(evrt_stream_wait_event(st[i], e0));
    ASSERT_OK(evrt_launch_host_func(st[i], count_fn, &ran[i]));
    ASSERT_OK(evrt_event_record(ev[i], st[i]));
  }
  sleep_ms(20);
  for (int i = 0; i < N; i += 97)
    ASSERT_ST(evrt_event_query(ev[i]), EVRT_NOT_READY); /* all held */
  ASSERT_ST(evrt_event_wait_status(e0), EVRT_NOT_READY);
  atomic_store(&gate, 1);
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_event_synchronize(ev[i]));
  for (int i = 0; i < N; i++)
    ASSERT_EQ(atomic_load(&ran[i]), 1);
  /* every waiting stream has passed its wait */
  ASSERT_OK(evrt_event_wait_status(e0));
  /* A new generation with one late waiter: its own count. */
  ASSERT_OK(evrt_event_record(e0, src));
  ASSERT_OK(evrt_event_wait_status(e0));
  ASSERT_OK(evrt_stream_delay(st[0], 30 * MS));
  ASSERT_OK(evrt_stream_wait_event(st[0], e0));
  ASSERT_ST(evrt_event_wait_status(e0), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(st[0]));
  ASSERT_OK(evrt_event_wait_status(e0));
  for (int i = 0; i < N; i++) {
    evrt_event_destroy(ev[i]);
    evrt_stream_destroy(st[i]);
  }
  evrt_event_destroy(e0);
  evrt_stream_destroy(src);
}

/* Chained waits between two streams, enqueued ahead and released at once:
 * every hop resumes the other stream (the resume flag and run-next path);
 * none is lost and the two streams strictly alternate. */
static atomic_int na, nb, violations;
static void fa(void *p) {
  (void)p;
  if (atomic_load(&na) != atomic_load(&nb)) /* a runs round i after b's i-1 */
    atomic_fetch_add(&violations, 1);
  atomic_fetch_add(&na, 1);
}
static void fb(void *p) {
  (void)p;
  if (atomic_load(&nb) + 1 != atomic_load(&na)) /* b's round i after a's i */
    atomic_fetch_add(&violations, 1);
  atomic_fetch_add(&nb, 1);
}

TEST(pingpong_chain_alternates_and_completes) {
  enum { N = 20000 };
  evrt_stream_t a, b;
  evrt_event_t ea, eb;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&ea, 0));
  ASSERT_OK(evrt_event_create(&eb, 0));
  atomic_store(&gate, 0);
  atomic_store(&na, 0);
  atomic_store(&nb, 0);
  atomic_store(&violations, 0);
  ASSERT_OK(evrt_launch_host_func(a, wait_gate, NULL));
  for (int i = 0; i < N; i++) {
    ASSERT_OK(evrt_launch_host_func(a, fa, NULL));
    ASSERT_OK(evrt_event_record(ea, a));
    ASSERT_OK(evrt_stream_wait_event(b, ea));
    ASSERT_OK(evrt_launch_host_func(b, fb, NULL));
    ASSERT_OK(evrt_event_record(eb, b));
    ASSERT_OK(evrt_stream_wait_event(a, eb));
  }
  ASSERT_EQ(atomic_load(&nb), 0); /* b is held by a's gate */
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize_timeout(a, 60000 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(b, 60000 * MS));
  ASSERT_EQ(atomic_load(&na), N);
  ASSERT_EQ(atomic_load(&nb), N);
  ASSERT_EQ(atomic_load(&violations), 0);
  evrt_event_destroy(ea);
  evrt_event_destroy(eb);
  evrt_stream_destroy(a);
  evrt_stream_destroy(b);
}

/* Wait records are pruned when their list grows: the passed ones go, a
 * pending one must stay (else the wait status turns complete too early). */
static void short_fn(void *p) {
  (void)p;
  usleep(100);
}

static atomic_int late_gate;
static void wait_late_gate(void *p) {
  (void)p;
  WAIT_UNTIL(atomic_load(&late_gate), 20000);
}

TEST(wait_status_keeps_a_pending_wait_among_many_passed_ones) {
  enum { N = 200 };
  evrt_stream_t src, late, s[8];
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&src, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&late, 0, 0, 0));
  for (int i = 0; i < 8; i++)
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_launch_host_func(src, short_fn, NULL));
  ASSERT_OK(evrt_event_record(e, src));
  ASSERT_OK(evrt_event_synchronize(e));
  /* the late stream reaches its wait only once the checks below are done
   * (a gate, not a delay: a loaded sanitizer run took longer than any
   * delay chosen here) */
  atomic_store(&late_gate, 0);
  ASSERT_OK(evrt_launch_host_func(late, wait_late_gate, NULL));
  ASSERT_OK(evrt_stream_wait_event(late, e));
  /* many waits on busy streams: recorded, and passed soon after */
  for (int i = 0; i < N; i++) {
    ASSERT_OK(evrt_launch_host_func(s[i % 8], short_fn, NULL));
    ASSERT_OK(evrt_stream_wait_event(s[i % 8], e));
    if (i % 8 == 7)
      for (int k = 0; k < 8; k++)
        ASSERT_OK(evrt_stream_synchronize(s[k]));
  }
  ASSERT_ST(evrt_stream_query(late), EVRT_NOT_READY);
  ASSERT_ST(evrt_event_wait_status(e), EVRT_NOT_READY); /* late pending */
  atomic_store(&late_gate, 1);
  ASSERT_OK(evrt_stream_synchronize(late));
  ASSERT_OK(evrt_event_wait_status(e));
  evrt_event_destroy(e);
  for (int i = 0; i < 8; i++)
    evrt_stream_destroy(s[i]);
  evrt_stream_destroy(late);
  evrt_stream_destroy(src);
}
