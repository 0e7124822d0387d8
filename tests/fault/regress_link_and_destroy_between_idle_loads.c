/*
 * regress_link_and_destroy_between_idle_loads.c - race 5 of src/cpu/cpu.h,
 * hit on every run through the white-box build's schedule points
 * (EVRT__SCHED_POINT: evrt_static only, nothing in libevrt.so).
 *
 * The window: a worker going idle has loaded enq_seq (nothing new) and
 * not yet loaded `destroyed` (exec.c, after_idle); a producer links an
 * item and, before its submit looks at the state word, the stream is
 * destroyed (the destroy sees work pending and leaves the stream to the
 * worker).  The worker then sees `destroyed`.  Before the fix it killed
 * and freed the stream with the item linked: the call had returned
 * success, its host function never ran, and a device synchronize waited
 * for ever.  Fixed, the worker looks at enq_seq again, takes the stream
 * back, runs the item and then frees it.
 *
 * Schedule: the worker blocks at its point (W) until the destroy is done;
 * the producer (this thread) blocks at its point (P, in submit) until the
 * worker has decided (the stream ends DEAD either way); a third thread
 * destroys in between.  Found by tests/fault/sched_settle_model.c.
 */
#include "test.h"

#include "cpu/cpu.h"
#include "sched_points.h"

static struct evrt__stream *_Atomic target;
static atomic_int armed_w, armed_p;
static sem_t w_in, w_go, p_in, d_done;
static atomic_int ran1, ran2;
static evrt_stream_t stream;

static void hook(int point, struct evrt__stream *s) {
  if (s != atomic_load(&target))
    return;
  if (point == EVRT__SP_IDLE_ENQ_READ && atomic_exchange(&armed_w, 0)) {
    /* the worker, between its loads of enq_seq and destroyed */
    sem_post(&w_in);
    (void)sem_wait_s(&w_go, 60);
  } else if (point == EVRT__SP_SUBMIT && atomic_exchange(&armed_p, 0)) {
    /* the producer, linked, before its submit reads the state word */
    sem_post(&p_in);
    if (!sem_wait_s(&d_done, 60))
      return;
    sem_post(&w_go);
    /* until the worker has freed the stream (after running the item, or
     * without running it, the bug) */
    for (int i = 0; i < 60000; i++) {
      if (EVRT__ST(evrt__st_load(s)) == EVRT__S_DEAD)
        break;
      evrt__sleep_ns(1000000);
    }
  }
}

static void *destroyer(void *arg) {
  (void)arg;
  if (sem_wait_s(&p_in, 60))
    evrt_stream_destroy(stream);
  sem_post(&d_done);
  return NULL;
}

static void one(void *p) { atomic_store((atomic_int *)p, 1); }

TEST(item_linked_while_the_stream_is_destroyed_in_the_idle_window_runs) {
  sem_init(&w_in, 0, 0);
  sem_init(&w_go, 0, 0);
  sem_init(&p_in, 0, 0);
  sem_init(&d_done, 0, 0);
  ASSERT_OK(evrt_stream_create(&stream, 0, 0, 0));
  atomic_store(&target, evrt__stream_get(stream));
  atomic_store(&armed_w, 1);
  atomic_store(&evrt__test_sched_hook, hook);
  ASSERT_OK(evrt_launch_host_func(stream, one, &ran1));
  /* its worker ran item 1 and stops at its point, going idle */
  ASSERT(sem_wait_s(&w_in, 60));
  ASSERT_EQ(atomic_load(&ran1), 1);
  pthread_t d;
  ASSERT_EQ(pthread_create(&d, NULL, destroyer, NULL), 0);
  atomic_store(&armed_p, 1);
  /* links item 2, then stops in submit until the worker decided */
  ASSERT_OK(evrt_launch_host_func(stream, one, &ran2));
  pthread_join(d, NULL);
  atomic_store(&evrt__test_sched_hook, NULL);
  /* the call succeeded: its host function runs */
  ASSERT_OK(evrt_device_synchronize_timeout(0, 10LL * 1000000000));
  ASSERT_EQ(atomic_load(&ran2), 1);
}
