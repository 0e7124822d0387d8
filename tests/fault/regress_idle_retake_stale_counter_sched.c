/*
 * regress_idle_retake_stale_counter_sched.c - race 7 of src/cpu/cpu.h
 * (the stale completion counter), hit on every run through the white-box
 * build's schedule points (EVRT__SCHED_POINT: evrt_static only, nothing in
 * libevrt.so).  tests/stress/regress_idle_retake_stale_counter searches
 * for the same window by repetition and rarely hits it.
 *
 * The window: worker W1 ran item 1 and stored IDLE (give_up), and has not
 * loaded enq_seq yet (point EVRT__SP_IDLE_STORED).  Meanwhile item 2 is
 * launched: the producer queues the idle stream, another worker W2 runs it
 * and idles it again, which leaves the same state word (same incarnation,
 * IDLE).  W1 then sees enq_seq ahead of its counter, and its retake CAS
 * succeeds.  Before the fix (src/cpu/exec.c, evrt__exec_stream re-reads
 * evrt__done after a retake) W1 kept its stale counter: with nothing
 * linked it went idle, saw enq_seq ahead again, retook the stream, and so
 * on for ever (a core burned; with every worker caught, a hang).  Fixed,
 * W1 goes idle once more and stops.
 */
#include "test.h"

#include <unistd.h>

#include "cpu/cpu.h"
#include "sched_points.h"

static struct evrt__stream *_Atomic target;
static atomic_int armed, counting, idles_after;
static sem_t w_in, w_go;
static atomic_int ran1, ran2;

__attribute__((constructor)) static void env(void) {
  setenv("EVRT_SPIN_NS", "0", 1); /* W1 gives the stream up at once */
  setenv("EVRT_WORKERS", "2", 1); /* W2 runs item 2 while W1 is held */
}

static void hook(int point, struct evrt__stream *s) {
  if (s != atomic_load(&target) || point != EVRT__SP_IDLE_STORED)
    return;
  if (atomic_exchange(&armed, 0)) {
    /* W1: IDLE stored after item 1, enq_seq not loaded yet */
    sem_post(&w_in);
    (void)sem_wait_s(&w_go, 60);
  } else if (atomic_load(&counting)) {
    atomic_fetch_add(&idles_after, 1); /* W1 idles the stream again */
  }
}

static void one(void *p) { atomic_store((atomic_int *)p, 1); }

TEST(retake_after_another_worker_ran_and_idled_the_stream_stops) {
  sem_init(&w_in, 0, 0);
  sem_init(&w_go, 0, 0);
  evrt_stream_t stream;
  ASSERT_OK(evrt_stream_create(&stream, 0, 0, 0));
  struct evrt__stream *s = evrt__stream_get(stream);
  atomic_store(&target, s);
  atomic_store(&armed, 1);
  atomic_store(&evrt__test_sched_hook, hook);
  ASSERT_OK(evrt_launch_host_func(stream, one, &ran1));
  /* W1 ran item 1 and stops at its point, the stream IDLE */
  ASSERT(sem_wait_s(&w_in, 60));
  ASSERT_EQ(atomic_load(&ran1), 1);
  unsigned w1_word = evrt__st_load(s);
  ASSERT_EQ(EVRT__ST(w1_word), EVRT__S_IDLE);
  /* item 2: queued by this thread, run and idled by W2 */
  ASSERT_OK(evrt_launch_host_func(stream, one, &ran2));
  WAIT_UNTIL(atomic_load(&ran2) == 1 && evrt__done(s) == 2 &&
                 evrt__st_load(s) == w1_word,
             60000);
  ASSERT_EQ(evrt__st_load(s), w1_word); /* the word W1 stored: its CAS wins */
  atomic_store(&counting, 1);
  sem_post(&w_go);
  /* W1 retakes the stream and goes idle again (at least once) */
  WAIT_UNTIL(atomic_load(&idles_after) >= 1, 60000);
  ASSERT(atomic_load(&idles_after) >= 1);
  /* Fixed, that was its last look; with the stale counter it loops, going
   * idle and retaking thousands of times a millisecond.  (Load can only
   * hide the loop here, never make a fixed build fail.) */
  sleep_ms(200);
  int n = atomic_load(&idles_after);
  atomic_store(&evrt__test_sched_hook, NULL);
  if (n > 1) {
    /* a worker spins on the stream for ever: no clean exit possible */
    fprintf(stderr, "  FAIL: W1 went idle and retook the stream %d times "
                    "(stale completion counter)\n", n);
    fflush(stderr);
    _exit(1);
  }
  ASSERT_EQ(EVRT__ST(evrt__st_load(s)), EVRT__S_IDLE);
  ASSERT_OK(evrt_stream_destroy(stream));
}
