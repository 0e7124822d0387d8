/* Streams: work items in order, memcpy/memset, delay without CPU, destroy
 * with pending work, query/synchronize, default streams, devices. */
#include "test.h"

#define MS 1000000ull

__attribute__((constructor)) static void three_devices(void) {
  setenv("EVRT_CPU_DEVICES", "3", 1);
}

struct log {
  atomic_int n;
  int order[4096];
};
struct entry {
  struct log *log;
  int value;
};
static void append(void *p) {
  struct entry *e = p;
  int i = atomic_fetch_add(&e->log->n, 1);
  e->log->order[i] = e->value;
}

TEST(items_run_in_enqueue_order) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  static struct log log;
  static struct entry ent[3000];
  static char src[64], dst[64];
  memset(src, 7, sizeof src);
  for (int i = 0; i < 3000; i++) {
    ent[i].log = &log;
    ent[i].value = i;
    ASSERT_OK(evrt_launch_host_func(s, append, &ent[i]));
    if (i == 1000)
      ASSERT_OK(evrt_stream_delay(s, 20 * MS));
  }
  ASSERT_OK(evrt_memcpy_async(s, dst, src, sizeof dst));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(atomic_load(&log.n), 3000);
  for (int i = 0; i < 3000; i++)
    ASSERT_EQ(log.order[i], i);
  ASSERT_EQ(memcmp(dst, src, sizeof dst), 0);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(memset_then_memcpy_in_stream_order) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  static unsigned char a[1 << 16], b[1 << 16];
  /* long enough that a stalled host still queries before it ends */
  ASSERT_OK(evrt_stream_delay(s, 300 * MS));
  ASSERT_OK(evrt_memset_async(s, a, 0x5a, sizeof a));
  ASSERT_OK(evrt_memcpy_async(s, b, a, sizeof b));
  ASSERT_OK(evrt_memset_async(s, a, 0x11, 16));
  ASSERT_OK(evrt_memcpy_async(s, a, b, 0)); /* zero bytes is fine */
  ASSERT_ST(evrt_stream_query(s), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(b[0], 0x5a);
  ASSERT_EQ(b[sizeof b - 1], 0x5a);
  ASSERT_EQ(a[0], 0x11);
  ASSERT_EQ(a[16], 0x5a);
  ASSERT_OK(evrt_stream_destroy(s));
}

/* Ranges that wrap around the address space or end past its top are
 * EVRT_ERROR_INVALID_VALUE at the call (they used to be accepted, and the
 * worker then crashed), and change nothing; overlapping memcpy ranges are
 * allowed and copy as memmove does (docs/design.md, section 11). */
TEST(impossible_memory_ranges_are_invalid_value_and_change_nothing) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  static unsigned char buf[64];
  memset(buf, 3, sizeof buf);
  ASSERT_ST(evrt_memset_async(s, buf, 0, (size_t)-1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT(strstr(evrt_last_error_message(), "wraps") != NULL);
  ASSERT_ST(evrt_memcpy_async(s, buf, buf + 8, SIZE_MAX),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memset_async(s, buf, 0, SIZE_MAX / 2),
            EVRT_ERROR_INVALID_VALUE);
  /* no wrap, but beyond any address space a process has (2^60 bytes) */
  ASSERT_ST(evrt_memset_async(s, buf, 0, (size_t)1 << 60),
            EVRT_ERROR_INVALID_VALUE);
  /* the source alone is impossible */
  ASSERT_ST(evrt_memcpy_async(s, buf, (void *)(UINTPTR_MAX - 16), 32),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memcpy_async(s, (void *)(UINTPTR_MAX - 16), buf, 32),
            EVRT_ERROR_INVALID_VALUE);
  /* nothing was enqueued: the stream is idle, the buffer untouched */
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_stream_synchronize(s));
  for (size_t i = 0; i < sizeof buf; i++)
    ASSERT_EQ(buf[i], 3);
  /* overlapping ranges copy as memmove */
  for (int i = 0; i < 64; i++)
    buf[i] = (unsigned char)i;
  ASSERT_OK(evrt_memcpy_async(s, buf + 4, buf, 32));
  ASSERT_OK(evrt_memcpy_async(s, buf + 40, buf + 44, 16));
  ASSERT_OK(evrt_stream_synchronize(s));
  for (int i = 0; i < 32; i++)
    ASSERT_EQ(buf[4 + i], i);
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(buf[40 + i], 44 + i);
  ASSERT_OK(evrt_stream_destroy(s));
}

static void *sync_thread(void *p) {
  evrt_stream_synchronize(*(evrt_stream_t *)p);
  return NULL;
}

TEST(delay_holds_no_worker_and_burns_no_cpu) {
  /* 3 delays of 300 ms on 3 streams run at the same time, with fewer
   * workers than that possibly, and no thread burns CPU meanwhile. */
  evrt_stream_t s[3];
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  uint64_t t0 = now_ns();
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
    ASSERT_OK(evrt_stream_delay(s[i], 300 * MS));
  }
  pthread_t th;
  pthread_create(&th, NULL, sync_thread, &s[0]);
  pthread_join(th, NULL);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(evrt_stream_synchronize(s[i]));
  uint64_t wall = now_ns() - t0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  uint64_t cpu = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u +
                 (uint64_t)(c1.tv_nsec - c0.tv_nsec);
  ASSERT(wall >= 299 * MS);
  ASSERT(wall < 900 * MS); /* concurrent, not 3 x 300 ms */
  if (cpu > 60 * MS)
    FAIL_("delays burned %.1f ms of CPU", cpu / 1e6);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(evrt_stream_destroy(s[i]));
}

static atomic_int done_flag;
static void set_done(void *p) {
  (void)p;
  atomic_store(&done_flag, 1);
}

TEST(destroy_returns_at_once_and_pending_work_completes) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_delay(s, 100 * MS));
  ASSERT_OK(evrt_launch_host_func(s, set_done, NULL));
  uint64_t t0 = now_ns();
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT(now_ns() - t0 < 50 * MS);
  ASSERT_ST(evrt_stream_query(s), EVRT_ERROR_INVALID_HANDLE);
  WAIT_UNTIL(atomic_load(&done_flag), 5000);
  ASSERT(atomic_load(&done_flag));
}

TEST(query_and_synchronize) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_stream_delay(s, 50 * MS));
  ASSERT_ST(evrt_stream_query(s), EVRT_NOT_READY);
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(devices_default_streams_and_current_device) {
  int n = 0, d = -1;
  ASSERT_OK(evrt_device_count(&n));
  ASSERT_EQ(n, 3);
  ASSERT_OK(evrt_get_device(&d));
  ASSERT_EQ(d, 0);
  evrt_stream_t d0, d1, d1b, cur;
  ASSERT_OK(evrt_stream_default(0, &d0));
  ASSERT_OK(evrt_stream_default(1, &d1));
  ASSERT_OK(evrt_stream_default(1, &d1b));
  ASSERT(d0 != d1);
  ASSERT(d1 == d1b);
  ASSERT_OK(evrt_set_device(1));
  ASSERT_OK(evrt_stream_default(-1, &cur));
  ASSERT(cur == d1);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, -1, -1, 0)); /* current device */
  ASSERT_OK(evrt_stream_get_device(s, &d));
  ASSERT_EQ(d, 1);
  int prio = 0;
  ASSERT_OK(evrt_stream_get_priority(s, &prio));
  ASSERT_EQ(prio, -1);
  ASSERT_ST(evrt_set_device(3), EVRT_ERROR_INVALID_DEVICE);
  ASSERT_OK(evrt_get_device(&d));
  ASSERT_EQ(d, 1); /* unchanged by the failed call */
  ASSERT_OK(evrt_set_device(0));
  ASSERT_OK(evrt_launch_host_func(d1, set_done, NULL));
  ASSERT_OK(evrt_device_synchronize(1));
  ASSERT_OK(evrt_stream_query(d1));
  ASSERT_ST(evrt_device_synchronize(7), EVRT_ERROR_INVALID_DEVICE);
  uint64_t id1 = 0, id2 = 0;
  ASSERT_OK(evrt_stream_get_id(s, &id1));
  ASSERT_OK(evrt_stream_get_id(d0, &id2));
  ASSERT(id1 != id2 && id1 && id2);
  ASSERT_OK(evrt_stream_destroy(s));
}

static atomic_int gate_open, gate_gave_up;
static void wait_gate(void *p) {
  (void)p;
  /* Gives up after 20 s, so that a wrong wait fails instead of hanging. */
  WAIT_UNTIL(atomic_load(&gate_open), 20000);
  if (!atomic_load(&gate_open))
    atomic_store(&gate_gave_up, 1);
}

/* cudaDeviceSynchronize covers all work submitted to the device: a
 * destroyed stream's pending work too (destroy only gives up the handle).
 * It used to skip them (found by evrt-stress under TSan: an event recorded
 * on a destroyed stream was still pending after the round's synchronizes). */
TEST(device_synchronize_waits_for_destroyed_streams_pending_work) {
  atomic_store(&done_flag, 0);
  atomic_store(&gate_open, 0);
  evrt_stream_t s, other;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 1, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_stream_delay(s, 100 * MS));
  ASSERT_OK(evrt_launch_host_func(s, set_done, NULL));
  ASSERT_OK(evrt_event_record(e, s));
  ASSERT_OK(evrt_stream_destroy(s));
  /* A destroyed stream of another device, held until we open the gate:
   * device 1's synchronize must not wait for it. */
  ASSERT_OK(evrt_stream_create(&other, 2, 0, 0));
  ASSERT_OK(evrt_launch_host_func(other, wait_gate, NULL));
  ASSERT_OK(evrt_stream_destroy(other));
  ASSERT_OK(evrt_device_synchronize(1));
  ASSERT(atomic_load(&done_flag));
  ASSERT_OK(evrt_event_query(e));
  ASSERT(!atomic_load(&gate_gave_up)); /* returned with device 2 busy */
  /* Device 2's only pending work is the destroyed stream's, held shut. */
  ASSERT_ST(evrt_device_synchronize_timeout(2, 20 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_ST(evrt_device_synchronize_timeout(2, 0), EVRT_ERROR_TIMEOUT);
  ASSERT_ST(evrt_device_synchronize_timeout(5, 0), EVRT_ERROR_INVALID_DEVICE);
  atomic_store(&gate_open, 1);
  ASSERT_OK(evrt_device_synchronize_timeout(2, 20000 * MS));
  ASSERT(!atomic_load(&gate_gave_up));
  ASSERT_OK(evrt_event_destroy(e));
}

static void *other_thread_device(void *p) {
  int d = -1;
  evrt_get_device(&d);
  *(int *)p = d;
  return NULL;
}

TEST(current_device_is_per_thread) {
  ASSERT_OK(evrt_set_device(2));
  int seen = -1;
  pthread_t t;
  pthread_create(&t, NULL, other_thread_device, &seen);
  pthread_join(t, NULL);
  ASSERT_EQ(seen, 0);
  int d = -1;
  ASSERT_OK(evrt_get_device(&d));
  ASSERT_EQ(d, 2);
  ASSERT_OK(evrt_set_device(0));
}

