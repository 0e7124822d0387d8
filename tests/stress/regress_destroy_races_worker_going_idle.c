/*
 * regress_destroy_races_worker_going_idle.c - bug found by evrt-stress under
 * ThreadSanitizer (EVRT_STRESS_SEED=0x00001a353b7d2f22): a worker draining a
 * stream stored IDLE and then re-checked the stream; a concurrent
 * evrt_stream_destroy saw IDLE, freed the stream, a create reused the slot
 * and enqueued on it, and the old worker's re-check CAS (IDLE -> RUNNING)
 * could take over the new stream (TSan: the worker read s->head while
 * evrt__stream_new wrote it).  Fixed by an incarnation counter in the state
 * word: the worker's CAS only matches the stream it gave up.
 *
 * The window is made hot: no spinning (EVRT_SPIN_NS=0, so the worker gives
 * the stream up right after the item), the host destroys the stream the
 * moment its item has run, and at once creates a stream in the same slot
 * and enqueues on it.  Every item must run exactly once.  The window is a
 * few instructions wide: neither this test nor the seed reproduced it on
 * demand with the old code (3 runs each under TSan); the fix holds by
 * construction, and this test keeps the path exercised.
 * tests/fault/regress_destroy_races_worker_going_idle_sched.c hits the
 * window on every run through schedule points (white-box build).
 */
#include "test.h"

#define ITERS 20000
static atomic_int ran;

__attribute__((constructor)) static void no_spin(void) {
  setenv("EVRT_SPIN_NS", "0", 1);
}

static void count(void *p) {
  (void)p;
  atomic_fetch_add(&ran, 1);
}

TEST(destroy_the_moment_the_last_item_ran_then_reuse_the_slot) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  for (int i = 0; i < ITERS; i++) {
    ASSERT_OK(evrt_launch_host_func(s, count, NULL));
    uint64_t dl = now_ns() + 5000000000ull;
    while (atomic_load(&ran) < i + 1 && now_ns() < dl)
      ;
    ASSERT_EQ(atomic_load(&ran), i + 1);
    ASSERT_OK(evrt_stream_destroy(s));
    ASSERT_OK(evrt_stream_create(&s, 0, 0, 0)); /* likely the same slot */
  }
  ASSERT_OK(evrt_launch_host_func(s, count, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&ran), ITERS + 1);
  ASSERT_OK(evrt_stream_destroy(s));
}

/* Second bug on the same path (found by evrt-stress, seed
 * 0x00002ba8fbfb5b5c, "ran 0 times (lost work)"): the host linked a last
 * item while the worker was still running the stream (so no reschedule was
 * needed), then destroyed the stream; the worker stored IDLE on its way out
 * and the destroy, seeing IDLE, freed the stream with that item still
 * linked.  Fixed: destroy frees an IDLE stream only when nothing is pending
 * (the worker re-checks enq_seq after storing IDLE and takes it back). */
TEST(destroy_right_behind_enqueue_to_a_running_stream_loses_nothing) {
  enum { N = 20000, PER = 3 };
  atomic_store(&ran, 0);
  for (int i = 0; i < N; i++) {
    evrt_stream_t s;
    ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
    for (int k = 0; k < PER; k++)
      ASSERT_OK(evrt_launch_host_func(s, count, NULL));
    ASSERT_OK(evrt_stream_destroy(s));
  }
  WAIT_UNTIL(atomic_load(&ran) == N * PER, 20000);
  ASSERT_EQ(atomic_load(&ran), N * PER);
}
