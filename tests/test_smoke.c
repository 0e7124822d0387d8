#include "test.h"

static atomic_int counter;
static void inc(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

TEST(host_funcs_run_in_order) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  for (int i = 0; i < 1000; i++)
    ASSERT_OK(evrt_launch_host_func(s, inc, &counter));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&counter), 1000);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(record_wait_sync) {
  evrt_stream_t a, b;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_TIMING));
  ASSERT_OK(evrt_stream_delay(a, 50000000));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_ST(evrt_event_query(e), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_ST(evrt_stream_query(b), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(b));
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
}
