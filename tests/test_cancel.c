/* Stopping and aborting a running host function: evrt_stream_stop,
 * evrt_stream_abort and evrt_host_func_cancelled (docs/design.md,
 * "Failures").  A host function that polls the answer and returns is
 * killed; one that does not poll runs to its end. */
#include "test.h"

/* A long "kernel": polls its cancellation for up to 60 s (the tests end it
 * long before), then says what it saw. */
typedef struct {
  atomic_int entered;
  atomic_int saw;      /* evrt_host_func_cancelled's answer, -1: never */
  atomic_int finished; /* it ran to its end without a cancellation */
  int32_t rc_on_cancel;
} kernel_t;
static int32_t long_kernel(void *p) {
  kernel_t *k = p;
  atomic_store(&k->entered, 1);
  uint64_t end = now_ns() + 60000ull * 1000000ull;
  while (now_ns() < end) {
    int why = evrt_host_func_cancelled();
    if (why) {
      atomic_store(&k->saw, why);
      return k->rc_on_cancel;
    }
    sleep_ms(1);
  }
  atomic_store(&k->finished, 1);
  return 0;
}
static void long_kernel_void(void *p) { (void)long_kernel(p); }

static atomic_int counter;
static void bump(void *p) {
  (void)p;
  atomic_fetch_add(&counter, 1);
}
static atomic_int seen_in_bump;
static void record_cancelled(void *p) {
  (void)p;
  atomic_store(&seen_in_bump, evrt_host_func_cancelled());
}

static evrt_stream_t new_stream(void) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, 0, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}
static kernel_t kernel(int32_t rc) {
  kernel_t k = {.rc_on_cancel = rc};
  atomic_store(&k.saw, -1);
  return k;
}

TEST(stop_kills_the_running_function_and_keeps_the_queue) {
  evrt_stream_t s = new_stream();
  kernel_t k = kernel(0);
  atomic_store(&counter, 0);
  atomic_store(&seen_in_bump, -1); /* unseen until record_cancelled runs */
  ASSERT_OK(evrt_launch_host_func_status(s, long_kernel, &k));
  uint64_t sid, kid;
  ASSERT_OK(evrt_thread_last_task(&sid, &kid));
  ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
  ASSERT_OK(evrt_launch_host_func(s, record_cancelled, NULL));
  WAIT_UNTIL(atomic_load(&k.entered), 30000);
  ASSERT_OK(evrt_stream_stop(s));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_ABORTED);
  ASSERT_EQ(atomic_load(&k.saw), EVRT_CANCEL_STOP);
  ASSERT_EQ(atomic_load(&k.finished), 0);
  ASSERT_EQ(atomic_load(&counter), 1);      /* the queue ran */
  ASSERT_EQ(atomic_load(&seen_in_bump), 0); /* and was not cancelled */
  evrt_task_failure_t f;
  ASSERT_OK(evrt_last_task_failure(&f));
  ASSERT_EQ(f.status, EVRT_ERROR_ABORTED);
  ASSERT_EQ(f.code, EVRT_CANCEL_STOP);
  ASSERT_EQ(f.task_id, kid);
  ASSERT(f.fn == long_kernel);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  /* a stop with nothing pending changes nothing */
  ASSERT_OK(evrt_stream_stop(s));
  atomic_store(&seen_in_bump, -1); /* before the launch: it may run at once */
  ASSERT_OK(evrt_launch_host_func(s, record_cancelled, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&seen_in_bump), 0);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(abort_kills_the_running_function_and_discards_the_queue) {
  evrt_stream_t s = new_stream();
  kernel_t k = kernel(0);
  atomic_store(&counter, 0);
  ASSERT_OK(evrt_launch_host_func(s, long_kernel_void, &k));
  uint64_t sid, kid;
  ASSERT_OK(evrt_thread_last_task(&sid, &kid));
  for (int i = 0; i < 10; i++)
    ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
  WAIT_UNTIL(atomic_load(&k.entered), 30000);
  ASSERT_OK(evrt_stream_abort(s));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_ABORTED);
  ASSERT_EQ(atomic_load(&k.saw), EVRT_CANCEL_ABORT);
  ASSERT_EQ(atomic_load(&counter), 0); /* discarded */
  evrt_task_failure_t f;
  ASSERT_OK(evrt_last_task_failure(&f));
  ASSERT_EQ(f.code, EVRT_CANCEL_ABORT); /* the kill, not the discard */
  ASSERT_EQ(f.task_id, kid);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(a_killed_status_function_reports_its_own_code) {
  evrt_stream_t s = new_stream();
  kernel_t k = kernel(77);
  ASSERT_OK(evrt_launch_host_func_status(s, long_kernel, &k));
  WAIT_UNTIL(atomic_load(&k.entered), 30000);
  ASSERT_OK(evrt_stream_stop(s));
  ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_TASK_FAILED);
  evrt_task_failure_t f;
  ASSERT_OK(evrt_last_task_failure(&f));
  ASSERT_EQ(f.code, 77);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* A function that never polls is not touched: it runs to its end and the
 * stream reports no error. */
static atomic_int gate;
static void gated(void *p) {
  atomic_store((atomic_int *)p, 1);
  while (!atomic_load(&gate))
    sleep_ms(1);
}
TEST(a_function_that_does_not_poll_runs_to_its_end) {
  evrt_stream_t s = new_stream();
  atomic_int entered = 0;
  atomic_store(&gate, 0);
  atomic_store(&counter, 0);
  ASSERT_OK(evrt_launch_host_func(s, gated, &entered));
  ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
  WAIT_UNTIL(atomic_load(&entered), 30000);
  ASSERT_OK(evrt_stream_stop(s));
  atomic_store(&gate, 1);
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&counter), 1);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(outside_host_functions_and_bad_input) {
  ASSERT_EQ(evrt_host_func_cancelled(), 0);
  ASSERT_OK(evrt_stream_stop(NULL)); /* the default stream, idle: nothing */
  evrt_stream_t s = new_stream();
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_ST(evrt_stream_stop(s), EVRT_ERROR_INVALID_HANDLE);
}

/* Stops and aborts racing launches, kills and destroys: every call gets
 * SUCCESS or INVALID_HANDLE, and nothing hangs (the kernels poll). */
static evrt_stream_t _Atomic shared;
static atomic_int stop_racing;
static void *stopper(void *p) {
  int abort_too = (int)(intptr_t)p;
  while (!atomic_load(&stop_racing)) {
    evrt_stream_t s = atomic_load(&shared);
    evrt_status_t st = abort_too ? evrt_stream_abort(s) : evrt_stream_stop(s);
    if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
      return (void *)1;
  }
  return NULL;
}
TEST(stop_and_abort_race_launches_and_destroy) {
  atomic_store(&stop_racing, 0);
  atomic_store(&shared, new_stream());
  pthread_t a, b;
  pthread_create(&a, NULL, stopper, (void *)0);
  pthread_create(&b, NULL, stopper, (void *)1);
  for (int round = 0; round < 40; round++) {
    evrt_stream_t s = atomic_load(&shared);
    kernel_t k = kernel(0);
    ASSERT_OK(evrt_launch_host_func_status(s, long_kernel, &k));
    ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
    evrt_status_t st = evrt_stream_synchronize(s);
    ASSERT(st == EVRT_SUCCESS || st == EVRT_ERROR_ABORTED);
    evrt_stream_clear_error(s, NULL);
    if (round % 8 == 7) { /* destroy under the stoppers' feet */
      atomic_store(&shared, new_stream());
      ASSERT_OK(evrt_stream_destroy(s));
    }
  }
  atomic_store(&stop_racing, 1);
  void *ra, *rb;
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  ASSERT(ra == NULL && rb == NULL);
  ASSERT_OK(evrt_stream_destroy(atomic_load(&shared)));
}

/* An abort right after the launch: whether or not the worker has entered
 * the kernel yet, it counts as running (it is the head): it is killed, and
 * the queue behind it is discarded.  Failed when an unstarted head was
 * discarded instead (code 0, the kernel never ran). */
TEST(abort_kills_the_head_even_before_it_starts) {
  evrt_stream_t s = new_stream();
  for (int round = 0; round < 20; round++) {
    kernel_t k = kernel(0);
    atomic_store(&counter, 0);
    ASSERT_OK(evrt_launch_host_func_status(s, long_kernel, &k));
    ASSERT_OK(evrt_launch_host_func(s, bump, NULL));
    ASSERT_OK(evrt_stream_abort(s));
    ASSERT_ST(evrt_stream_synchronize(s), EVRT_ERROR_ABORTED);
    evrt_task_failure_t f;
    ASSERT_OK(evrt_last_task_failure(&f));
    ASSERT_EQ(f.code, EVRT_CANCEL_ABORT);
    ASSERT_EQ(atomic_load(&k.saw), EVRT_CANCEL_ABORT);
    ASSERT_EQ(atomic_load(&counter), 0);
    ASSERT_OK(evrt_stream_clear_error(s, NULL));
  }
  ASSERT_OK(evrt_stream_destroy(s));
}
