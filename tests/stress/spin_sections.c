/*
 * spin_sections.c - no system call under a spin lock, and every spin backs
 * off (issue 13, item 10).  White-box: links evrt_static, built with
 * EVRT_TEST_HOOKS, which counts the spin locks (event seqlock, plock, wlock)
 * each thread holds and records every malloc, free, futex call, pool-mutex
 * push and timer arm made while one is held.
 *
 * Before the fix, record and stream-wait linked their item and scheduled the
 * stream (pool mutex, FUTEX_WAKE) under the event's seqlock, allocated the
 * item or a larger wait-record buffer under it, and a destroyed stream's
 * recycled items were freed under plock; readers of a held seqlock spun on
 * pause alone for as long as the writer held it.
 */
#include "test.h"

#include "internal.h"

long evrt__test_spin_violations(const char **what);
long evrt__test_backoff_rounds(void);

#define MS 1000000ull

static atomic_int gate;
static void wait_gate(void *p) {
  (void)p;
  WAIT_UNTIL(atomic_load(&gate), 20000);
}
static void noop(void *p) { (void)p; }

static void assert_no_violation(const char *after) {
  const char *what = NULL;
  long n = evrt__test_spin_violations(&what);
  if (n != 0)
    fprintf(stderr, "  %ld system call(s) under a spin lock after %s, the "
                    "last: %s\n",
            n, after, what ? what : "?");
  ASSERT_EQ(n, 0);
}

TEST(no_system_call_under_a_spin_lock) {
  /* Fresh streams (empty recycle lists: items must be allocated), held
   * busy behind a gate so records need items and waits are linked. */
  enum { NS = 8, NE = 64 };
  evrt_stream_t s[NS];
  evrt_event_t timed[NE], plain, legacy;
  atomic_store(&gate, 0);
  for (int i = 0; i < NS; i++) {
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(s[i], wait_gate, NULL));
  }
  ASSERT_OK(evrt_event_create(&plain, 0));
  ASSERT_OK(evrt_event_create(&legacy, EVRT_EVENT_WAIT_NEXT_RECORD));
  /* timing records on busy streams: an item each, linked under the lock */
  for (int i = 0; i < NE; i++) {
    ASSERT_OK(evrt_event_create(&timed[i], EVRT_EVENT_TIMING));
    ASSERT_OK(evrt_event_record(timed[i], s[i % NS]));
  }
  assert_no_violation("timing records on busy streams");
  /* many waits on one generation: the wait-record buffer grows */
  ASSERT_OK(evrt_event_record(plain, s[0]));
  for (int k = 0; k < 40; k++)
    for (int i = 1; i < NS; i++)
      ASSERT_OK(evrt_stream_wait_event(s[i], plain));
  assert_no_violation("waits on a pending generation");
  /* legacy next-record waits, bound when the record comes */
  for (int i = 1; i < NS; i++)
    ASSERT_OK(evrt_stream_wait_event(s[i], legacy));
  ASSERT_OK(evrt_event_record(legacy, s[0]));
  ASSERT_OK(evrt_event_reset(plain, s[1]));
  assert_no_violation("legacy waits, record and reset");
  /* idle streams: records and waits that schedule them */
  evrt_stream_t idle;
  ASSERT_OK(evrt_stream_create(&idle, 0, 0, 0));
  ASSERT_OK(evrt_stream_wait_event(idle, timed[0]));
  ASSERT_OK(evrt_event_record(timed[1], idle));
  assert_no_violation("a wait and a record on an idle stream");
  atomic_store(&gate, 1);
  for (int i = 0; i < NS; i++)
    ASSERT_OK(evrt_stream_synchronize(s[i]));
  ASSERT_OK(evrt_stream_synchronize(idle));
  ASSERT_OK(evrt_event_wait_status(plain));
  /* destroys: recycled items and wait records freed */
  for (int i = 0; i < NE; i++)
    ASSERT_OK(evrt_event_destroy(timed[i]));
  ASSERT_OK(evrt_event_destroy(plain));
  ASSERT_OK(evrt_event_destroy(legacy));
  for (int i = 0; i < NS; i++) {
    for (int k = 0; k < 40; k++)
      ASSERT_OK(evrt_launch_host_func(s[i], noop, NULL));
    ASSERT_OK(evrt_stream_synchronize(s[i]));
    ASSERT_OK(evrt_stream_destroy(s[i]));
  }
  ASSERT_OK(evrt_stream_destroy(idle));
  ASSERT_OK(evrt_device_synchronize(0));
  assert_no_violation("destroys");
}

static atomic_int reader_done;
static void *reader(void *p) {
  evrt_event_t e = p;
  atomic_store(&reader_done, evrt_event_query(e) == EVRT_SUCCESS ? 1 : 2);
  return NULL;
}

/* A query finding the seqlock held by a writer that does not finish (here:
 * the lock taken directly and held for 300 ms) backs off past its pauses
 * (sched_yield, then sleeps) instead of spinning on pause for the whole
 * time. */
TEST(seqlock_readers_back_off_while_a_writer_holds_it) {
  evrt_event_t e;
  ASSERT_OK(evrt_event_create(&e, 0));
  struct evrt__event *ev = evrt__event_get(e);
  ASSERT(ev != NULL);
  long before = evrt__test_backoff_rounds();
  evrt__event_lock(ev);
  pthread_t th;
  ASSERT(pthread_create(&th, NULL, reader, e) == 0);
  sleep_ms(300);
  ASSERT_EQ(atomic_load(&reader_done), 0); /* still waiting for the lock */
  evrt__event_unlock(ev);
  pthread_join(th, NULL);
  ASSERT_EQ(atomic_load(&reader_done), 1);
  long rounds = evrt__test_backoff_rounds() - before;
  fprintf(stderr, "  reader backed off %ld rounds past its pauses\n", rounds);
  ASSERT(rounds > 0);
  ASSERT_OK(evrt_event_destroy(e));
}
