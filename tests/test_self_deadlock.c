/* A host function that waits, through other streams' waits, for its own
 * stream to get past it (issue 13, item 6): it gets
 * EVRT_ERROR_WOULD_DEADLOCK, as when it synchronizes its own stream, and
 * everything then completes.  Before, it hung for ever (and with it the
 * stream, everything waiting on it, and a worker).  A hang fails here by a
 * 20-second limit instead. */
#include "test.h"

#define MS 1000000ull

__attribute__((constructor)) static void two_devices(void) {
  setenv("EVRT_CPU_DEVICES", "2", 1);
}

enum { SYNC_STREAM, SYNC_EVENT, SYNC_DEVICE };
struct job {
  int kind;
  evrt_stream_t stream;
  evrt_event_t event;
  int device;
  atomic_int gate;       /* the host function starts waiting when set */
  atomic_int status;     /* what its synchronize returned, -1 before */
};

static void sync_job(void *p) {
  struct job *j = p;
  WAIT_UNTIL(atomic_load(&j->gate), 20000);
  evrt_status_t st = j->kind == SYNC_STREAM  ? evrt_stream_synchronize(j->stream)
                     : j->kind == SYNC_EVENT ? evrt_event_synchronize(j->event)
                                             : evrt_device_synchronize(j->device);
  atomic_store(&j->status, (int)st);
}

static atomic_int marks;
static void mark(void *p) {
  (void)p;
  atomic_fetch_add(&marks, 1);
}
static atomic_int gate2;
static void wait_gate2(void *p) {
  (void)p;
  WAIT_UNTIL(atomic_load(&gate2), 20000);
}

/* A: [H: synchronize X] [record E]; B: [wait E] [mark]; H waits for B. */
static void indirect_case(int kind, bool late) {
  struct job j;
  memset(&j, 0, sizeof j);
  atomic_store(&j.status, -1);
  atomic_store(&marks, 0);
  atomic_store(&gate2, 0);
  evrt_stream_t a, b;
  evrt_event_t e, f;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, kind == SYNC_DEVICE ? 1 : 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_event_create(&f, 0));
  j.kind = kind;
  j.stream = b;
  j.event = f;
  j.device = 1;
  ASSERT_OK(evrt_launch_host_func(a, sync_job, &j));
  ASSERT_OK(evrt_event_record(e, a)); /* behind the host function */
  if (late) /* B reaches its wait only after H has started waiting */
    ASSERT_OK(evrt_launch_host_func(b, wait_gate2, NULL));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_OK(evrt_launch_host_func(b, mark, NULL));
  ASSERT_OK(evrt_event_record(f, b)); /* after B's wait */
  atomic_store(&j.gate, 1);
  if (late) {
    sleep_ms(50); /* H is waiting by now, most likely (not required) */
    atomic_store(&gate2, 1);
  }
  WAIT_UNTIL(atomic_load(&j.status) != -1, 20000);
  ASSERT_ST((evrt_status_t)atomic_load(&j.status), EVRT_ERROR_WOULD_DEADLOCK);
  /* and then it all runs */
  ASSERT_OK(evrt_stream_synchronize_timeout(b, 20000 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(a, 20000 * MS));
  ASSERT_EQ(atomic_load(&marks), 1);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_event_destroy(f));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
}

TEST(host_fn_synchronizing_a_stream_that_waits_behind_it) {
  indirect_case(SYNC_STREAM, false);
}
TEST(host_fn_synchronizing_an_event_recorded_behind_such_a_wait) {
  indirect_case(SYNC_EVENT, false);
}
TEST(host_fn_synchronizing_a_device_whose_stream_waits_behind_it) {
  indirect_case(SYNC_DEVICE, false);
}
/* B is still running an earlier item when H starts waiting: the chain
 * closes later, and H's wait sees it then. */
TEST(chain_closing_after_the_host_fn_started_waiting) {
  indirect_case(SYNC_STREAM, true);
}

/* A: [H: synchronize C]; E recorded on A behind H; B waits E; F recorded
 * on B; C waits F: C -> B -> A. */
TEST(host_fn_waiting_through_a_chain_of_two_streams) {
  struct job j;
  memset(&j, 0, sizeof j);
  atomic_store(&j.status, -1);
  atomic_store(&marks, 0);
  evrt_stream_t a, b, c;
  evrt_event_t e, f;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&c, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_event_create(&f, 0));
  j.kind = SYNC_STREAM;
  j.stream = c;
  ASSERT_OK(evrt_launch_host_func(a, sync_job, &j));
  ASSERT_OK(evrt_event_record(e, a));
  ASSERT_OK(evrt_stream_wait_event(b, e));
  ASSERT_OK(evrt_event_record(f, b));
  ASSERT_OK(evrt_stream_wait_event(c, f));
  ASSERT_OK(evrt_launch_host_func(c, mark, NULL));
  atomic_store(&j.gate, 1);
  WAIT_UNTIL(atomic_load(&j.status) != -1, 20000);
  ASSERT_ST((evrt_status_t)atomic_load(&j.status), EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT_OK(evrt_stream_synchronize_timeout(c, 20000 * MS));
  ASSERT_EQ(atomic_load(&marks), 1);
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_event_destroy(f));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
  ASSERT_OK(evrt_stream_destroy(c));
}

/* Two host functions, each synchronizing the other's stream: at least one
 * is told, and both return. */
TEST(two_host_fns_synchronizing_each_others_streams) {
  struct job ja, jb;
  memset(&ja, 0, sizeof ja);
  memset(&jb, 0, sizeof jb);
  atomic_store(&ja.status, -1);
  atomic_store(&jb.status, -1);
  evrt_stream_t a, b;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ja.kind = jb.kind = SYNC_STREAM;
  ja.stream = b;
  jb.stream = a;
  ASSERT_OK(evrt_launch_host_func(a, sync_job, &ja));
  ASSERT_OK(evrt_launch_host_func(b, sync_job, &jb));
  atomic_store(&ja.gate, 1);
  atomic_store(&jb.gate, 1);
  WAIT_UNTIL(atomic_load(&ja.status) != -1 && atomic_load(&jb.status) != -1,
             20000);
  int sa = atomic_load(&ja.status), sb = atomic_load(&jb.status);
  ASSERT(sa != -1 && sb != -1);
  ASSERT(sa == EVRT_ERROR_WOULD_DEADLOCK || sb == EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT(sa == EVRT_SUCCESS || sa == EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT(sb == EVRT_SUCCESS || sb == EVRT_ERROR_WOULD_DEADLOCK);
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
}

/* No false alarm: B waits on a generation of A recorded before the host
 * function (complete when it runs), and C waits behind it on a stream held
 * by another host thread's gate, opened later: the host function waits,
 * and gets SUCCESS. */
TEST(waits_that_do_not_need_the_host_fn_are_not_deadlocks) {
  struct job j;
  memset(&j, 0, sizeof j);
  atomic_store(&j.status, -1);
  atomic_store(&marks, 0);
  atomic_store(&gate2, 0);
  evrt_stream_t a, b, held;
  evrt_event_t before, hev;
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&held, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&before, 0));
  ASSERT_OK(evrt_event_create(&hev, 0));
  ASSERT_OK(evrt_launch_host_func(a, mark, NULL));
  ASSERT_OK(evrt_event_record(before, a)); /* before the host function */
  ASSERT_OK(evrt_launch_host_func(held, wait_gate2, NULL));
  ASSERT_OK(evrt_event_record(hev, held));
  j.kind = SYNC_STREAM;
  j.stream = b;
  ASSERT_OK(evrt_launch_host_func(a, sync_job, &j));
  ASSERT_OK(evrt_stream_wait_event(b, before));
  ASSERT_OK(evrt_stream_wait_event(b, hev)); /* blocked, but not on A */
  ASSERT_OK(evrt_launch_host_func(b, mark, NULL));
  atomic_store(&j.gate, 1);
  sleep_ms(150); /* H waits through a few of its re-checks */
  ASSERT_EQ(atomic_load(&j.status), -1);
  atomic_store(&gate2, 1);
  WAIT_UNTIL(atomic_load(&j.status) != -1, 20000);
  ASSERT_OK((evrt_status_t)atomic_load(&j.status));
  ASSERT_OK(evrt_stream_synchronize_timeout(a, 20000 * MS));
  ASSERT_EQ(atomic_load(&marks), 2);
  ASSERT_OK(evrt_event_destroy(before));
  ASSERT_OK(evrt_event_destroy(hev));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
  ASSERT_OK(evrt_stream_destroy(held));
}
