/* Huge delays and timeouts saturate (issue 13, item 11): a deadline
 * computed as now + ns wrapped for ns near UINT64_MAX, so
 * evrt_stream_delay(UINT64_MAX) ended at once instead of never.  (Its own
 * program: the delayed stream never completes, so its device can never be
 * synchronized afterwards.) */
#include "test.h"

#define MS 1000000ull

static atomic_int ran;
static void mark(void *p) {
  (void)p;
  atomic_fetch_add(&ran, 1);
}

TEST(delay_of_uint64_max_never_ends) {
  evrt_stream_t s, other;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_delay(s, UINT64_MAX));
  ASSERT_OK(evrt_launch_host_func(s, mark, NULL));
  /* Another stream runs meanwhile: the delay holds no worker. */
  ASSERT_OK(evrt_stream_create(&other, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(other, mark, NULL));
  ASSERT_OK(evrt_stream_synchronize(other));
  ASSERT_EQ(atomic_load(&ran), 1);
  /* Not done after a while: timeouts, not completion (the delay wrapped to
   * the past and ended at once before the fix). */
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 100 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_ST(evrt_stream_query(s), EVRT_NOT_READY);
  ASSERT_EQ(atomic_load(&ran), 1);
  /* A delay a little below UINT64_MAX - now wrapped too. */
  evrt_stream_t s2;
  ASSERT_OK(evrt_stream_create(&s2, 0, 0, 0));
  ASSERT_OK(evrt_stream_delay(s2, UINT64_MAX - 1000));
  ASSERT_ST(evrt_stream_synchronize_timeout(s2, 50 * MS), EVRT_ERROR_TIMEOUT);
  /* The timer thread sleeps on such a deadline: the process stays idle. */
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  sleep_ms(200);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  uint64_t used = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u +
                  (uint64_t)c1.tv_nsec - (uint64_t)c0.tv_nsec;
  if (used > 100 * MS)
    FAIL_("idle with two endless delays, the process used %.1f ms of CPU in "
          "200 ms",
          used / 1e6);
  /* Destroying the streams gives up the handles; the work stays pending
   * (documented: destroy never cancels). */
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(s2));
}

/* The longest timeouts wait (they are not taken for "expired"). */
TEST(longest_timeout_waits_for_the_work) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_delay(s, 20 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, INT64_MAX));
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_stream_destroy(s));
}
