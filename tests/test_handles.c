/* Handles: NULL, destroyed, double-destroyed, forged and wrong-type handles
 * get EVRT_ERROR_INVALID_HANDLE from every function, and change nothing. */
#include "test.h"

#define BAD EVRT_ERROR_INVALID_HANDLE

static void noop(void *p) { (void)p; }

/* Every function that takes a stream. */
static int stream_calls_reject(evrt_stream_t s) {
  int dev, prio;
  uint64_t id, n;
  char buf[8];
  evrt_event_t e;
  if (evrt_event_create(&e, 0))
    return 0;
  int ok = evrt_stream_destroy(s) == BAD && evrt_stream_query(s) == BAD &&
           evrt_stream_synchronize(s) == BAD &&
           evrt_stream_synchronize_timeout(s, 1000) == BAD &&
           evrt_stream_get_device(s, &dev) == BAD &&
           evrt_stream_get_priority(s, &prio) == BAD &&
           evrt_stream_get_id(s, &id) == BAD &&
           evrt_stream_set_name(s, "x") == BAD &&
           evrt_launch_host_func(s, noop, NULL) == BAD &&
           evrt_launch_host_func_labeled(s, noop, NULL, "l") == BAD &&
           evrt_memcpy_async(s, buf, buf + 4, 4) == BAD &&
           evrt_memset_async(s, buf, 0, 4) == BAD &&
           evrt_stream_delay(s, 10) == BAD && evrt_event_record(e, s) == BAD &&
           evrt_stream_wait_event(s, e) == BAD &&
           evrt_stream_wait_event_timeout(s, e, 10) == BAD &&
           evrt_stream_wait_failures(s, &n) == BAD &&
           evrt_event_reset(e, s) == BAD;
  evrt_event_info_t info;
  /* and the event stayed untouched */
  ok = ok && evrt_event_get_info(e, &info) == EVRT_SUCCESS &&
       info.record_count == 0 && info.device == -1;
  evrt_event_destroy(e);
  return ok;
}

/* Every function that takes an event. */
static int event_calls_reject(evrt_event_t e) {
  evrt_stream_t s;
  evrt_event_t good;
  float ms;
  uint64_t ns, id;
  int dev;
  evrt_event_info_t info;
  evrt_ipc_event_handle_t h;
  if (evrt_stream_default(0, &s) || evrt_event_create(&good, EVRT_EVENT_TIMING))
    return 0;
  int ok = evrt_event_destroy(e) == BAD && evrt_event_record(e, s) == BAD &&
           evrt_event_query(e) == BAD && evrt_event_synchronize(e) == BAD &&
           evrt_event_synchronize_timeout(e, 10) == BAD &&
           evrt_stream_wait_event(s, e) == BAD &&
           evrt_stream_wait_event_timeout(s, e, 10) == BAD &&
           evrt_event_elapsed_time(&ms, e, good) == BAD &&
           evrt_event_elapsed_time(&ms, good, e) == BAD &&
           evrt_event_timestamp(e, &ns) == BAD &&
           evrt_event_reset(e, s) == BAD && evrt_event_wait_status(e) == BAD &&
           evrt_event_get_info(e, &info) == BAD &&
           evrt_event_get_device(e, &dev) == BAD &&
           evrt_event_get_id(e, &id) == BAD &&
           evrt_event_ipc_handle(e, &h) == BAD;
  evrt_event_destroy(good);
  return ok;
}

TEST(null_handles) {
  ASSERT(stream_calls_reject(NULL));
  ASSERT(event_calls_reject(NULL));
}

TEST(destroyed_and_double_destroyed) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT(stream_calls_reject(s)); /* includes a second destroy */
  ASSERT(event_calls_reject(e));
}

TEST(stale_handle_after_slot_reuse) {
  evrt_event_t e1, e2;
  ASSERT_OK(evrt_event_create(&e1, 0));
  ASSERT_OK(evrt_event_destroy(e1));
  ASSERT_OK(evrt_event_create(&e2, 0)); /* likely the same slot */
  ASSERT(e1 != e2);
  ASSERT_ST(evrt_event_query(e1), BAD);
  ASSERT_ST(evrt_event_destroy(e1), BAD);
  ASSERT_OK(evrt_event_query(e2)); /* the new one is untouched */
  ASSERT_OK(evrt_event_destroy(e2));
}

TEST(forged_and_wrong_type) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  /* an event handle used as a stream and vice versa */
  ASSERT(stream_calls_reject((evrt_stream_t)(void *)e));
  ASSERT(event_calls_reject((evrt_event_t)(void *)s));
  /* arbitrary bit patterns, including a pointer to real memory */
  static int some_int;
  uintptr_t forged[] = {1, 2, 3, 0xdeadbeef, UINTPTR_MAX, (uintptr_t)&some_int,
                        ((uintptr_t)e) ^ (1ull << 33), /* other generation */
                        ((uintptr_t)e) + 4,            /* neighbour slot */
                        ((uintptr_t)e) & 0xffffffffu,  /* generation 0 */
                        (uintptr_t)0x7ffffffc | 2};   /* huge index */
  for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
    ASSERT(event_calls_reject((evrt_event_t)forged[i]));
    ASSERT(stream_calls_reject((evrt_stream_t)forged[i]));
  }
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(bad_values_change_nothing) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_ST(evrt_stream_create(NULL, 0, 0, 0), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_create(&s, 0, 0, 0x80), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_create(&s, 7, 0, 0), EVRT_ERROR_INVALID_DEVICE);
  ASSERT_ST(evrt_event_create(&e, 0x1000), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS | EVRT_EVENT_TIMING),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_ST(evrt_launch_host_func(s, NULL, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memcpy_async(s, NULL, &s, 8), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memset_async(s, NULL, 0, 8), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_get_device(s, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_stream_query(s)); /* nothing was enqueued */
  evrt_stream_t def;
  ASSERT_OK(evrt_stream_default(0, &def));
  ASSERT_ST(evrt_stream_destroy(def), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_OK(evrt_stream_query(def));
  ASSERT_OK(evrt_stream_destroy(s));
}
