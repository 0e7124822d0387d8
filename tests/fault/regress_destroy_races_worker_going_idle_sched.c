/*
 * regress_destroy_races_worker_going_idle_sched.c - race 7 of
 * src/cpu/cpu.h (a slot reused under an old owner), hit on every run
 * through the white-box build's schedule points (EVRT__SCHED_POINT:
 * evrt_static only, nothing in libevrt.so).  The first test of
 * tests/stress/regress_destroy_races_worker_going_idle searches for the
 * same window by repetition and did not hit it on demand.
 *
 * The window: worker W1 ran stream A's last item and stored IDLE
 * (give_up), and has not loaded enq_seq yet (point EVRT__SP_IDLE_STORED).
 * Meanwhile A is destroyed (drained and IDLE: the destroy frees it), a
 * create reuses its slot as stream B, and B runs two items on another
 * worker and goes idle.  W1 then sees enq_seq unlike its counter and tries
 * to take the stream back.  Before the fix (the incarnation counter in the
 * state word) its CAS IDLE -> RUNNING matched B's word, and W1 ran a
 * stream it no longer owned (under TSan: it read s->head while the create
 * wrote it).  Fixed, the CAS expects A's incarnation and fails: W1 never
 * touches B again.  The second test does the same for the second form
 * (race 4 of cpu.h), with the schedule points of
 * regress_link_and_destroy_between_idle_loads.
 */
#include "test.h"

#include "cpu/cpu.h"
#include "sched_points.h"

static struct evrt__stream *_Atomic target;
static atomic_int armed, counting, w1_after;
static pthread_t w1;
static sem_t w_in, w_go;
static atomic_int ran;

__attribute__((constructor)) static void env(void) {
  setenv("EVRT_SPIN_NS", "0", 1); /* W1 gives the stream up at once */
  setenv("EVRT_WORKERS", "2", 1); /* W2 runs B while W1 is held */
}

static void hook(int point, struct evrt__stream *s) {
  if (s != atomic_load(&target) || point != EVRT__SP_IDLE_STORED)
    return;
  if (atomic_exchange(&armed, 0)) {
    /* W1: IDLE stored after A's item, enq_seq not loaded yet */
    w1 = pthread_self();
    sem_post(&w_in);
    (void)sem_wait_s(&w_go, 60);
  } else if (atomic_load(&counting) && pthread_equal(pthread_self(), w1)) {
    atomic_fetch_add(&w1_after, 1); /* W1 ran the slot again and idled it */
  }
}

static void count(void *p) {
  (void)p;
  atomic_fetch_add(&ran, 1);
}

TEST(old_owner_cannot_take_back_a_reused_slot) {
  sem_init(&w_in, 0, 0);
  sem_init(&w_go, 0, 0);
  evrt_stream_t a, b;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  struct evrt__stream *s = evrt__stream_get(a);
  atomic_store(&target, s);
  atomic_store(&armed, 1);
  atomic_store(&evrt__test_sched_hook, hook);
  ASSERT_OK(evrt_launch_host_func(a, count, NULL));
  /* W1 ran A's item and stops at its point, A IDLE and drained */
  ASSERT(sem_wait_s(&w_in, 60));
  ASSERT_EQ(atomic_load(&ran), 1);
  unsigned w1_word = evrt__st_load(s);
  ASSERT_EQ(EVRT__ST(w1_word), EVRT__S_IDLE);
  ASSERT_OK(evrt_stream_destroy(a)); /* frees A: W1 stored IDLE */
  ASSERT_EQ(EVRT__ST(evrt__st_load(s)), EVRT__S_DEAD);
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT(evrt__stream_get(b) == s); /* the same slot (freed last) */
  ASSERT_OK(evrt_launch_host_func(b, count, NULL));
  ASSERT_OK(evrt_launch_host_func(b, count, NULL));
  ASSERT_OK(evrt_stream_synchronize(b));
  ASSERT_EQ(atomic_load(&ran), 3);
  /* B idle on W2: IDLE as W1 stored it, but another incarnation */
  WAIT_UNTIL(EVRT__ST(evrt__st_load(s)) == EVRT__S_IDLE, 60000);
  ASSERT_EQ(EVRT__ST(evrt__st_load(s)), EVRT__S_IDLE);
  ASSERT(evrt__st_load(s) != w1_word);
  atomic_store(&counting, 1);
  sem_post(&w_go);
  /* Fixed, W1's retake CAS fails and it leaves the slot alone; broken, it
   * takes B over at once, finds nothing linked and idles it again (hook).
   * (Load can only hide the bug here, never make a fixed build fail.) */
  sleep_ms(200);
  atomic_store(&evrt__test_sched_hook, NULL);
  ASSERT_EQ(atomic_load(&w1_after), 0);
  ASSERT_EQ(EVRT__ST(evrt__st_load(s)), EVRT__S_IDLE);
  ASSERT_OK(evrt_stream_destroy(b));
}

/* The second form (race 4; the second test of the stress counterpart):
 * W1 is held after its IDLE store as above; the host links item 2 and is
 * held in submit before it reads the state word, and a third thread
 * destroys the stream, which finds it IDLE with item 2 pending.  Before
 * the fix the destroy freed it then (item 2 never ran); fixed, it leaves
 * the stream to whoever drains it. */
static sem_t p_in, d_done;
static atomic_int armed_p;
static evrt_stream_t dstream;

static void hook2(int point, struct evrt__stream *s) {
  if (s != atomic_load(&target))
    return;
  if (point == EVRT__SP_IDLE_STORED && atomic_exchange(&armed, 0)) {
    sem_post(&w_in);
    (void)sem_wait_s(&w_go, 60);
  } else if (point == EVRT__SP_SUBMIT && atomic_exchange(&armed_p, 0)) {
    /* the host: item 2 linked, state not read yet */
    sem_post(&p_in);
    (void)sem_wait_s(&d_done, 60);
  }
}

static void *destroyer(void *arg) {
  (void)arg;
  if (sem_wait_s(&p_in, 60))
    evrt_stream_destroy(dstream);
  sem_post(&d_done);
  return NULL;
}

TEST(destroy_of_an_idle_stream_with_an_item_pending_leaves_it_to_run) {
  sem_init(&w_in, 0, 0);
  sem_init(&w_go, 0, 0);
  sem_init(&p_in, 0, 0);
  sem_init(&d_done, 0, 0);
  atomic_store(&ran, 0);
  ASSERT_OK(evrt_stream_create(&dstream, 0, 0, 0));
  atomic_store(&target, evrt__stream_get(dstream));
  atomic_store(&armed, 1);
  atomic_store(&evrt__test_sched_hook, hook2);
  ASSERT_OK(evrt_launch_host_func(dstream, count, NULL));
  ASSERT(sem_wait_s(&w_in, 60)); /* W1 stored IDLE after item 1 */
  ASSERT_EQ(atomic_load(&ran), 1);
  pthread_t d;
  ASSERT_EQ(pthread_create(&d, NULL, destroyer, NULL), 0);
  atomic_store(&armed_p, 1);
  /* links item 2; held in submit until the destroy returned */
  ASSERT_OK(evrt_launch_host_func(dstream, count, NULL));
  pthread_join(d, NULL);
  sem_post(&w_go);
  atomic_store(&evrt__test_sched_hook, NULL);
  /* the call succeeded: its host function runs */
  ASSERT_OK(evrt_device_synchronize_timeout(0, 10LL * 1000000000));
  ASSERT_EQ(atomic_load(&ran), 2);
}
