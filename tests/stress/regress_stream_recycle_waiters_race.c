/*
 * regress_stream_recycle_waiters_race.c - bug found by evrt-stress under TSan
 * (EVRT_STRESS_SEED=0x000030c5c157f716).
 *
 * Stream A waits on an event recorded on stream B; B is destroyed and drains.
 * B's worker completes the record's generation, unlinks A's wait item from
 * B->waiters and resumes A, then frees B's slot.  A creation that recycles
 * the slot runs evrt__stream_new, which stores s->waiters = NULL without
 * B's wlock, while A's worker, passing its wait (phase 1), calls
 * evrt__stream_remove_waiter on the same slot and reads s->waiters under
 * wlock: a data race on the recycled slot (src/stream.c evrt__stream_new vs
 * src/cpu/wait.c evrt__stream_remove_waiter).  The list is empty at that
 * point, so today it is "only" undefined behaviour that TSan reports, but a
 * stale remover walking the list of the new incarnation unordered with its
 * initialization is the pattern that corrupts once the list is not empty.
 *
 * This test only fails under ThreadSanitizer (a report); in other builds it
 * checks that the waits still order the work.
 */
#include "test.h"

static atomic_int ran_b, ran_a;
static void spin_b(void *p) {
  (void)p;
  uint64_t t0 = now_ns();
  while (now_ns() - t0 < 20000)
    ;
  atomic_fetch_add(&ran_b, 1);
}
static void after_a(void *p) {
  int want = (int)(intptr_t)p;
  /* A's host function follows B's, by the wait */
  if (atomic_load(&ran_b) < want)
    fprintf(stderr, "  A ran before B's generation completed\n");
  atomic_fetch_add(&ran_a, 1);
}

TEST(recycled_stream_slot_vs_stale_remove_waiter) {
  evrt_stream_t a;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  for (int i = 1; i <= 2000; i++) {
    evrt_stream_t b, c;
    ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(b, spin_b, NULL));
    ASSERT_OK(evrt_event_record(e, b));
    ASSERT_OK(evrt_stream_wait_event(a, e));
    ASSERT_OK(evrt_launch_host_func(a, after_a, (void *)(intptr_t)i));
    ASSERT_OK(evrt_stream_destroy(b));
    /* recycle B's slot as soon as its worker frees it */
    while (atomic_load(&ran_b) < i)
      ;
    for (int k = 0; k < 4; k++) {
      ASSERT_OK(evrt_stream_create(&c, 0, 0, 0));
      ASSERT_OK(evrt_stream_destroy(c));
    }
  }
  ASSERT_OK(evrt_stream_synchronize(a));
  ASSERT_EQ(atomic_load(&ran_a), 2000);
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_event_destroy(e));
}
