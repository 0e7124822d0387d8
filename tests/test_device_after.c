/* evrt_device_launch_host_func: runs once every stream of the device has
 * finished the work enqueued before the call, holds up no stream, runs at
 * once when nothing is pending, covers destroyed streams still draining. */
#include "test.h"

#define MS 1000000ull

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

typedef struct {
  atomic_int open;
} latch_t;
static void latch_pass(void *p) {
  latch_t *l = p;
  while (!atomic_load(&l->open))
    sleep_ms(1);
}

static atomic_int fired;
static atomic_uint_least64_t fired_thread;
static void fire(void *p) {
  (void)p;
  atomic_store(&fired_thread, evrt_thread_id());
  atomic_fetch_add(&fired, 1);
}
static atomic_int later;
static void bump_later(void *p) {
  (void)p;
  atomic_fetch_add(&later, 1);
}

static evrt_stream_t new_stream(int dev) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, dev, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}

TEST(runs_after_every_stream_of_the_device) {
  evrt_stream_t a = new_stream(0), b = new_stream(0), other = new_stream(1);
  latch_t la = {0}, lb = {0}, lo = {0};
  atomic_store(&fired, 0);
  atomic_store(&later, 0);
  ASSERT_OK(evrt_launch_host_func(a, latch_pass, &la));
  ASSERT_OK(evrt_launch_host_func(b, latch_pass, &lb));
  ASSERT_OK(evrt_launch_host_func(other, latch_pass, &lo)); /* device 1 */
  ASSERT_OK(evrt_device_launch_host_func(0, fire, NULL));
  /* it holds up nobody: later work of a stream it waits for runs (after
   * that stream's own earlier work) */
  ASSERT_OK(evrt_launch_host_func(b, bump_later, NULL));
  ASSERT_ST(evrt_stream_query(a), EVRT_NOT_READY);
  atomic_store(&la.open, 1);
  ASSERT_OK(evrt_stream_synchronize(a));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&fired), 0); /* b still holds it */
  atomic_store(&lb.open, 1);
  WAIT_UNTIL(atomic_load(&fired) == 1, 10000);
  ASSERT_EQ(atomic_load(&fired), 1);
  ASSERT_OK(evrt_stream_synchronize(b));
  ASSERT_EQ(atomic_load(&later), 1);
  /* device 1 was not waited for */
  ASSERT_ST(evrt_stream_query(other), EVRT_NOT_READY);
  /* EVRT_DEVICE_ALL waits for device 1 as well */
  ASSERT_OK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, fire, NULL));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&fired), 1);
  atomic_store(&lo.open, 1);
  WAIT_UNTIL(atomic_load(&fired) == 2, 10000);
  ASSERT_EQ(atomic_load(&fired), 2);
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
  ASSERT_OK(evrt_stream_destroy(other));
}

TEST(runs_at_once_when_nothing_is_pending) {
  ASSERT_OK(evrt_device_synchronize(0));
  ASSERT_OK(evrt_device_synchronize(1));
  atomic_store(&fired, 0);
  ASSERT_OK(evrt_device_launch_host_func(-1, fire, NULL));
  ASSERT_EQ(atomic_load(&fired), 1);
  ASSERT_EQ(atomic_load(&fired_thread), evrt_thread_id());
}

TEST(covers_destroyed_streams_still_draining) {
  evrt_stream_t a = new_stream(0);
  latch_t l = {0};
  atomic_store(&fired, 0);
  ASSERT_OK(evrt_launch_host_func(a, latch_pass, &l));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_device_launch_host_func(0, fire, NULL));
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&fired), 0);
  atomic_store(&l.open, 1);
  WAIT_UNTIL(atomic_load(&fired) == 1, 10000);
  ASSERT_EQ(atomic_load(&fired), 1);
}

TEST(work_enqueued_after_the_call_is_not_waited_for) {
  evrt_stream_t a = new_stream(0), b = new_stream(0);
  latch_t la = {0}, lb = {0};
  atomic_store(&fired, 0);
  ASSERT_OK(evrt_launch_host_func(a, latch_pass, &la));
  ASSERT_OK(evrt_device_launch_host_func(0, fire, NULL));
  ASSERT_OK(evrt_launch_host_func(a, latch_pass, &lb)); /* after the call */
  ASSERT_OK(evrt_launch_host_func(b, latch_pass, &lb)); /* a new stream's */
  atomic_store(&la.open, 1);
  WAIT_UNTIL(atomic_load(&fired) == 1, 10000);
  ASSERT_EQ(atomic_load(&fired), 1);
  atomic_store(&lb.open, 1);
  ASSERT_OK(evrt_device_synchronize(0));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
}

TEST(bad_input_changes_nothing) {
  atomic_store(&fired, 0);
  ASSERT_ST(evrt_device_launch_host_func(2, fire, NULL),
            EVRT_ERROR_INVALID_DEVICE);
  ASSERT_ST(evrt_device_launch_host_func(-3, fire, NULL),
            EVRT_ERROR_INVALID_DEVICE);
  ASSERT_ST(evrt_device_launch_host_func(0, NULL, NULL),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_EQ(atomic_load(&fired), 0);
}
