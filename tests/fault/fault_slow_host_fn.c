/*
 * fault_slow_host_fn.c - host functions that take a long time (sleep) must
 * not stall other streams (DESIGN.md section 5, independent progress).
 *
 * One more blocker than the base pool (one worker per CPU) sleeps for
 * EVRT_SLOW_HOST_FN_SECONDS (default 3; `make stress` runs the same check
 * for 10 s in evrt-stress); meanwhile another stream must run 1000 host
 * functions, a record and a cross-stream wait, all within a second, and the
 * blockers must still be running when that work is done.
 */
#include "test.h"

static atomic_int done;
static void tick(void *p) {
  (void)p;
  atomic_fetch_add(&done, 1);
}
static void slow(void *p) {
  unsigned s = *(unsigned *)p;
  sleep(s);
}

TEST(slow_host_functions_do_not_stall_other_streams) {
  const char *v = getenv("EVRT_SLOW_HOST_FN_SECONDS");
  static unsigned secs;
  secs = v ? (unsigned)atoi(v) : 3;
  if (secs < 2)
    secs = 2;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nb = (int)(ncpu < 2 ? 2 : ncpu) + 1;
  if (nb > 32)
    nb = 32;
  evrt_stream_t b[32], s1, s2;
  evrt_event_t e;
  for (int i = 0; i < nb; i++) {
    ASSERT_OK(evrt_stream_create(&b[i], 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(b[i], slow, &secs));
  }
  sleep_ms(100); /* the blockers hold every base worker */
  uint64_t t0 = now_ns();
  ASSERT_OK(evrt_stream_create(&s1, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&s2, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  for (int i = 0; i < 500; i++)
    ASSERT_OK(evrt_launch_host_func(s1, tick, NULL));
  ASSERT_OK(evrt_event_record(e, s1));
  ASSERT_OK(evrt_stream_wait_event(s2, e));
  for (int i = 0; i < 500; i++)
    ASSERT_OK(evrt_launch_host_func(s2, tick, NULL));
  ASSERT_OK(evrt_stream_synchronize_timeout(s2, 1000000000LL));
  uint64_t took = now_ns() - t0;
  int busy = 0;
  for (int i = 0; i < nb; i++)
    busy += evrt_stream_query(b[i]) == EVRT_NOT_READY;
  printf("  %d blockers of %u s; 1000 items on other streams in %.1f ms; "
         "%d blockers still running\n",
         nb, secs, (double)took / 1e6, busy);
  ASSERT_EQ(atomic_load(&done), 1000);
  ASSERT_EQ(busy, nb); /* the work really overlapped the blockers */
  for (int i = 0; i < nb; i++) {
    ASSERT_OK(evrt_stream_synchronize(b[i]));
    ASSERT_OK(evrt_stream_destroy(b[i]));
  }
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s1));
  ASSERT_OK(evrt_stream_destroy(s2));
}
