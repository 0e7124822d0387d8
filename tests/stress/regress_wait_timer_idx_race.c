/*
 * regress_wait_timer_idx_race.c - bug found by the fuzz_api corpus replay
 * under TSan (tests/fuzz/corpus/fuzz_api/timeouts, 1 run in ~2).
 *
 * A wait with a timeout arms a timer entry (it->timer_idx is its index in the
 * timer heap, written under timer.lock by every heap operation: arm, fire,
 * cancel and the swaps of sift up/down, which move *other* items' entries).
 * When the wait is satisfied by its dependency, the worker tests
 * `if (it->timer_idx >= 0)` in run_wait (src/cpu/exec.c) without timer.lock,
 * while the timer thread fires or reorders entries: a data race on
 * timer_idx.  (Benign in effect today, because evrt__timer_cancel re-checks
 * under the lock, but undefined behaviour that TSan reports.)  Fix: read it
 * under the lock (call evrt__timer_cancel unconditionally, or make the field
 * atomic).
 *
 * The test keeps the heap busy (many streams waiting with timeouts that fire
 * and others that are satisfied first) and fails under TSan only; in other
 * builds it checks that satisfied waits pass and expired ones are counted.
 */
#include "test.h"

#define NS 24

static atomic_int gate;
static void gate_fn(void *p) {
  (void)p;
  while (!atomic_load(&gate))
    usleep(50);
}

TEST(wait_timeout_satisfied_while_timer_heap_moves) {
  evrt_stream_t src, w[NS];
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&src, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  for (int i = 0; i < NS; i++)
    ASSERT_OK(evrt_stream_create(&w[i], 0, 0, 0));
  uint64_t expired = 0;
  for (int round = 0; round < 40; round++) {
    atomic_store(&gate, 0);
    ASSERT_OK(evrt_launch_host_func(src, gate_fn, NULL));
    ASSERT_OK(evrt_event_record(e, src));
    for (int i = 0; i < NS; i++) {
      /* odd streams: a timeout that fires first; even: one that does not */
      int64_t t = (i & 1) ? 200000 + 20000 * i : 2000000000LL;
      ASSERT_OK(evrt_stream_wait_event_timeout(w[i], e, t));
    }
    sleep_ms(1);
    atomic_store(&gate, 1);
    for (int i = 0; i < NS; i++)
      ASSERT_OK(evrt_stream_synchronize(w[i]));
  }
  for (int i = 0; i < NS; i++) {
    uint64_t n;
    ASSERT_OK(evrt_stream_wait_failures(w[i], &n));
    if (!(i & 1))
      ASSERT_EQ(n, 0); /* satisfied before the 2 s timeout */
    expired += n;
    ASSERT_OK(evrt_stream_destroy(w[i]));
  }
  printf("  %llu waits expired\n", (unsigned long long)expired);
  ASSERT_OK(evrt_stream_synchronize(src));
  ASSERT_OK(evrt_stream_destroy(src));
  ASSERT_OK(evrt_event_destroy(e));
}
