/*
 * regress_value_wait_write_lost.c - a value write that came while its wait
 * was parking was lost, and the waiting stream slept for ever (found as a
 * hang of test_graph_work under ThreadSanitizer in CI, about 1 run in 150).
 *
 * The window (src/value.c, evrt__value_exec_wait): the waiter counted
 * itself in nwait and found the word short, under its bucket's lock, and
 * linked its item into the bucket only after that.  A writer storing the
 * word then saw the count, but looked at the bucket's head without the
 * lock, found it empty, and resumed nobody.  Fixed, the waiter links its
 * item before it counts itself: a writer that sees the count sees the link.
 *
 * The test makes the window as often as it can: a stream waits for the
 * word to reach round r while this thread writes r a varying few hundred
 * nanoseconds after the enqueue, for thousands of rounds.  A round whose
 * wait has not passed 10 s after its write is the lost wake-up.
 */
#include "test.h"

static void spin_ns(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end)
    ;
}

TEST(a_write_racing_the_wait_parking_resumes_it) {
  static uint64_t word;
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  uint64_t end = now_ns() + 3000000000ull, lag = 0;
  int rounds = 0;
  for (uint64_t r = 1; r <= 200000 && now_ns() < end; r++, rounds++) {
    ASSERT_OK(evrt_stream_wait_value64(s, &word, r, EVRT_VALUE_WAIT_GEQ));
    spin_ns(lag);
    lag = (lag + 37) % 40000; /* 0 to 40 us after the enqueue */
    ASSERT_OK(evrt_value_write64(&word, r));
    evrt_status_t st = evrt_stream_synchronize_timeout(s, 10000000000ll);
    if (st != EVRT_SUCCESS)
      FAIL_("round %llu: the wait did not pass 10 s after its write (%s): "
            "the write was lost",
            (unsigned long long)r, evrt_err_name(st));
  }
  ASSERT(rounds > 0);
  printf("  %d rounds\n", rounds);
  ASSERT_OK(evrt_stream_destroy(s));
}
