/*
 * regress_second_ready_stream_never_woken.c - bug found by
 * tests/fault/fault_alloc_sites (about 1 run in 10): two streams made ready
 * while a worker spun; the push saw the spinner and woke nobody, the spinner
 * took the first stream into a blocking host function, and the second stream
 * waited in the run queue while a worker slept idle.  Fixed in
 * src/cpu/pool.c: a worker that pops a stream with more left passes the
 * wake-up on.  Each iteration here makes exactly that situation likely; the
 * test failed within a few dozen iterations before the fix.
 */
#include "test.h"

static atomic_int entered, gate;

static void gate_fn(void *p) {
  (void)p;
  atomic_fetch_add(&entered, 1);
  while (!atomic_load(&gate))
    usleep(100);
}

TEST(two_blocking_streams_both_start) {
  for (int iter = 0; iter < 300; iter++) {
    evrt_stream_t a, b;
    atomic_store(&entered, 0);
    atomic_store(&gate, 0);
    ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
    ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
    ASSERT_OK(evrt_launch_host_func(a, gate_fn, NULL));
    ASSERT_OK(evrt_launch_host_func(b, gate_fn, NULL));
    WAIT_UNTIL(atomic_load(&entered) == 2, 5000);
    int n = atomic_load(&entered);
    atomic_store(&gate, 1);
    ASSERT_OK(evrt_stream_synchronize(a));
    ASSERT_OK(evrt_stream_synchronize(b));
    ASSERT_OK(evrt_stream_destroy(a));
    ASSERT_OK(evrt_stream_destroy(b));
    if (n != 2)
      FAIL_("iteration %d: only %d of 2 ready streams started", iter, n);
  }
}
