/* evrt_shutdown() with threads blocked in synchronize on work it discards
 * (issue 13, item 3): they return EVRT_ERROR_SHUTDOWN promptly, a host
 * function blocked that way does not hang the shutdown, and the runtime
 * stays consistent.  Shutdown is final, so this is a program of its own. */
#include "test.h"

#define MS 1000000ull

static atomic_int ran_behind_delay;
static void behind_delay(void *p) {
  (void)p;
  atomic_store(&ran_behind_delay, 1);
}

struct waiter {
  pthread_t th;
  int kind; /* 0 stream, 1 event (spinning), 2 event (blocking), 3 device */
  evrt_stream_t s;
  evrt_event_t e;
  atomic_int done;
  evrt_status_t st;
};

static void *wait_main(void *p) {
  struct waiter *w = p;
  switch (w->kind) {
  case 0: w->st = evrt_stream_synchronize(w->s); break;
  case 1: w->st = evrt_event_synchronize(w->e); break;
  case 2: w->st = evrt_event_synchronize(w->e); break;
  default: w->st = evrt_device_synchronize(0); break;
  }
  atomic_store(&w->done, 1);
  return NULL;
}

/* A host function that synchronizes another stream's discarded work: it
 * holds a worker, which shutdown waits for. */
static evrt_stream_t held;
static atomic_int hf_status = -1;
static void sync_held(void *p) {
  (void)p;
  atomic_store(&hf_status, evrt_stream_synchronize(held));
}

static atomic_int shutdown_done;
static evrt_status_t shutdown_st;
static void *shutdown_main(void *p) {
  (void)p;
  shutdown_st = evrt_shutdown();
  atomic_store(&shutdown_done, 1);
  return NULL;
}

TEST(synchronize_on_discarded_work_returns_shutdown) {
  evrt_stream_t s, s2, hf_stream;
  evrt_event_t spin_ev, block_ev;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&s2, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&held, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&hf_stream, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&spin_ev, 0));
  ASSERT_OK(evrt_event_create(&block_ev, EVRT_EVENT_BLOCKING_SYNC));
  /* Work that cannot finish before the shutdown: an hour's delay, a host
   * function behind it, records behind those; a second stream waits on
   * them (parked). */
  ASSERT_OK(evrt_stream_delay(s, 3600000 * MS));
  ASSERT_OK(evrt_launch_host_func(s, behind_delay, NULL));
  ASSERT_OK(evrt_event_record(spin_ev, s));
  ASSERT_OK(evrt_event_record(block_ev, s));
  ASSERT_OK(evrt_stream_wait_event(s2, spin_ev));
  ASSERT_OK(evrt_stream_delay(held, 3600000 * MS));
  ASSERT_OK(evrt_launch_host_func(hf_stream, sync_held, NULL));
  struct waiter w[5];
  memset(w, 0, sizeof w);
  w[0].kind = 0, w[0].s = s;
  w[1].kind = 0, w[1].s = s2;
  w[2].kind = 1, w[2].e = spin_ev;
  w[3].kind = 2, w[3].e = block_ev;
  w[4].kind = 3;
  for (int i = 0; i < 5; i++)
    ASSERT(pthread_create(&w[i].th, NULL, wait_main, &w[i]) == 0);
  sleep_ms(100); /* most of them parked by now (not required) */
  for (int i = 0; i < 5; i++)
    ASSERT_EQ(atomic_load(&w[i].done), 0);
  /* Shut down from another thread, so that a hang fails the test. */
  pthread_t sd;
  ASSERT(pthread_create(&sd, NULL, shutdown_main, NULL) == 0);
  WAIT_UNTIL(atomic_load(&shutdown_done), 30000);
  ASSERT(atomic_load(&shutdown_done)); /* not held by the host function */
  pthread_join(sd, NULL);
  ASSERT_OK(shutdown_st);
  ASSERT_EQ(atomic_load(&hf_status), EVRT_ERROR_SHUTDOWN);
  int all = 1;
  for (int i = 0; i < 5; i++) {
    WAIT_UNTIL(atomic_load(&w[i].done), 30000);
    all &= atomic_load(&w[i].done);
  }
  ASSERT(all); /* every waiter returned */
  for (int i = 0; i < 5; i++) {
    pthread_join(w[i].th, NULL);
    ASSERT_ST(w[i].st, EVRT_ERROR_SHUTDOWN);
  }
  ASSERT_EQ(atomic_load(&ran_behind_delay), 0); /* it was discarded */
  /* and the library is consistently shut down */
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_SHUTDOWN);
  ASSERT_ST(evrt_event_query(spin_ev), EVRT_ERROR_SHUTDOWN);
  ASSERT_ST(evrt_device_synchronize(0), EVRT_ERROR_SHUTDOWN);
  ASSERT(strstr(evrt_last_error_message(), "shut") != NULL);
}
