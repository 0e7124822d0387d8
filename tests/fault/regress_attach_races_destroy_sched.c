/*
 * regress_attach_races_destroy_sched.c - calls that attach state to a
 * stream after looking its handle up, racing the destroy of that stream
 * (issue 23, item 1), each window hit on every run through the white-box
 * build's schedule points (EVRT__SCHED_POINT: evrt_static only).
 *
 * The invariant: of the call and the destroy, the call either fails with
 * EVRT_ERROR_INVALID_HANDLE and nothing is attached, or it went first and
 * the destroy sees what it attached (a capturing stream's destroy fails,
 * the capture invalidated, and the stream stays until the capture ends);
 * and in every case a GLOBAL-mode synchronize elsewhere still works.
 * Before the fix evrt_stream_begin_capture and evrt_stream_destroy both
 * succeeded: the capture stayed attached to a dead stream, could never be
 * ended, and every later GLOBAL-mode synchronize in the process failed
 * with EVRT_ERROR_CAPTURE_UNSUPPORTED.  A stale handle of the failure
 * calls (mode, clear, stop, abort) changed the stream that reused the slot.
 */
#include "test.h"

#include "internal.h"
#include "sched_points.h"

static atomic_int armed_point = -1;
static struct evrt__stream *_Atomic armed_s;
static sem_t held, go;

static void hook(int point, struct evrt__stream *s) {
  int p = point;
  if (s != atomic_load(&armed_s) ||
      !atomic_compare_exchange_strong(&armed_point, &p, -1))
    return;
  sem_post(&held);
  (void)sem_wait_s(&go, 60);
}

/* The next call to reach `point` on s stops there until release(). */
static void arm(int point, struct evrt__stream *s) {
  sem_init(&held, 0, 0);
  sem_init(&go, 0, 0);
  atomic_store(&armed_s, s);
  atomic_store(&armed_point, point);
  atomic_store(&evrt__test_sched_hook, hook);
}

enum what {
  BEGIN,
  DESTROY,
  WAIT,
  NAME,
  FAIL_MODE,
  CLEAR,
  STOP,
  ABORT
};
struct call {
  enum what what;
  evrt_stream_t s;
  evrt_event_t e;
  evrt_capture_mode_t mode;
  evrt_status_t st;
  pthread_t th;
};

static void *run(void *p) {
  struct call *c = p;
  evrt_task_failure_t info;
  switch (c->what) {
  case BEGIN: c->st = evrt_stream_begin_capture(c->s, c->mode); break;
  case DESTROY: c->st = evrt_stream_destroy(c->s); break;
  case WAIT: c->st = evrt_stream_wait_event(c->s, c->e); break;
  case NAME: c->st = evrt_stream_set_name(c->s, "raced"); break;
  case FAIL_MODE:
    c->st = evrt_stream_set_failure_mode(c->s, EVRT_FAILURE_STOP);
    break;
  case CLEAR: c->st = evrt_stream_clear_error(c->s, &info); break;
  case STOP: c->st = evrt_stream_stop(c->s); break;
  case ABORT: c->st = evrt_stream_abort(c->s); break;
  }
  return NULL;
}

/* Start c on its own thread and wait until it is held at its point. */
static bool start_held(struct call *c) {
  pthread_create(&c->th, NULL, run, c);
  return sem_wait_s(&held, 60);
}
static void release(struct call *c) {
  sem_post(&go);
  pthread_join(c->th, NULL);
  atomic_store(&evrt__test_sched_hook, NULL);
}

static void nop(void *p) { (void)p; }

/* No capture is left attached anywhere: GLOBAL-mode synchronizes work. */
#define ASSERT_GLOBAL_SYNC_WORKS()                                             \
  do {                                                                         \
    evrt_stream_t t_;                                                          \
    ASSERT_OK(evrt_stream_create(&t_, 0, 0, 0));                               \
    ASSERT_OK(evrt_launch_host_func(t_, nop, NULL));                           \
    ASSERT_OK(evrt_stream_synchronize(t_));                                    \
    ASSERT_OK(evrt_device_synchronize(0));                                     \
    ASSERT_OK(evrt_stream_destroy(t_));                                        \
  } while (0)

static const evrt_capture_mode_t modes[] = {EVRT_CAPTURE_MODE_GLOBAL,
                                            EVRT_CAPTURE_MODE_THREAD_LOCAL,
                                            EVRT_CAPTURE_MODE_RELAXED};

/* begin_capture looked the handle up; the destroy runs whole; then begin
 * attaches.  Fixed: begin fails, nothing attached. */
TEST(begin_capture_after_its_lookup_loses_to_the_destroy) {
  for (int m = 0; m < 3; m++) {
    evrt_stream_t s;
    ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
    struct call c = {.what = BEGIN, .s = s, .mode = modes[m]};
    arm(EVRT__SP_CAPTURE_BEGIN, evrt__stream_get(s));
    ASSERT(start_held(&c));
    ASSERT_OK(evrt_stream_destroy(s)); /* not capturing yet */
    release(&c);
    ASSERT_ST(c.st, EVRT_ERROR_INVALID_HANDLE);
    evrt_capture_status_t cs;
    ASSERT_ST(evrt_stream_capture_status(s, &cs), EVRT_ERROR_INVALID_HANDLE);
    ASSERT_GLOBAL_SYNC_WORKS();
  }
}

/* The destroy looked the handle up (not capturing); begin runs whole; then
 * the destroy kills.  Fixed: the destroy sees the capture under plock and
 * fails; the capture is invalidated and ends; the stream is still there. */
TEST(destroy_after_its_lookup_sees_a_capture_begun_meanwhile) {
  for (int m = 0; m < 3; m++) {
    evrt_stream_t s;
    ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
    struct call d = {.what = DESTROY, .s = s};
    arm(EVRT__SP_DESTROY_LOOKED, evrt__stream_get(s));
    ASSERT(start_held(&d));
    ASSERT_OK(evrt_stream_begin_capture(s, modes[m]));
    release(&d);
    ASSERT_ST(d.st, EVRT_ERROR_CAPTURE_UNSUPPORTED);
    evrt_graph_t g = (evrt_graph_t)1;
    ASSERT_ST(evrt_stream_end_capture(s, &g), EVRT_ERROR_CAPTURE_INVALIDATED);
    ASSERT(g == NULL);
    ASSERT_OK(evrt_stream_destroy(s));
    ASSERT_GLOBAL_SYNC_WORKS();
  }
}

/* A stream waits on an event recorded inside a capture (it joins it); the
 * wait looked the stream up, the stream is destroyed, then the join
 * attaches.  Fixed: the wait fails, the capture has no dead member and
 * ends with its graph. */
TEST(wait_joining_a_capture_loses_to_the_destroy_of_the_waiter) {
  evrt_stream_t o, b;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&o, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_stream_begin_capture(o, EVRT_CAPTURE_MODE_GLOBAL));
  ASSERT_OK(evrt_launch_host_func(o, nop, NULL));
  ASSERT_OK(evrt_event_record(e, o));
  struct call w = {.what = WAIT, .s = b, .e = e};
  arm(EVRT__SP_CAPTURE_JOIN, evrt__stream_get(b));
  ASSERT(start_held(&w));
  ASSERT_OK(evrt_stream_destroy(b));
  release(&w);
  ASSERT_ST(w.st, EVRT_ERROR_INVALID_HANDLE);
  evrt_graph_t g = NULL;
  ASSERT_OK(evrt_stream_end_capture(o, &g));
  size_t n = 0;
  ASSERT_OK(evrt_graph_node_count(g, &n));
  ASSERT_EQ(n, 1); /* the host function; no lane of the dead stream's */
  ASSERT_OK(evrt_graph_destroy(g));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(o));
  ASSERT_GLOBAL_SYNC_WORKS();
}

/* set_name checked the handle and copied the name; the destroy runs whole
 * (it removes the stream's trace name, none yet); then set_name adds its
 * trace entry.  Fixed: set_name sees the handle dead, removes its entry
 * and fails; the trace's name table is as before. */
TEST(set_name_racing_destroy_leaves_no_trace_name) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  size_t before = evrt__trace_names_count();
  struct call c = {.what = NAME, .s = s};
  arm(EVRT__SP_NAME_SET, evrt__stream_get(s));
  ASSERT(start_held(&c));
  ASSERT_OK(evrt_stream_destroy(s));
  release(&c);
  ASSERT_ST(c.st, EVRT_ERROR_INVALID_HANDLE);
  ASSERT_EQ(evrt__trace_names_count(), before);
}

static int32_t fails(void *p) {
  (void)p;
  return 7;
}

/* The failure calls looked the handle of a up; a is destroyed and its slot
 * reused by b; then the call acts.  Fixed: INVALID_HANDLE, b unchanged. */
TEST(failure_calls_with_a_stale_handle_leave_the_reused_slot_alone) {
  static const enum what whats[] = {FAIL_MODE, CLEAR, STOP, ABORT};
  for (int w = 0; w < 4; w++) {
    evrt_stream_t a, b;
    ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
    struct evrt__stream *sa = evrt__stream_get(a);
    struct call c = {.what = whats[w], .s = a};
    arm(EVRT__SP_FAILURE_LOOKED, sa);
    ASSERT(start_held(&c));
    ASSERT_OK(evrt_stream_destroy(a)); /* idle: freed at once */
    ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
    ASSERT(evrt__stream_get(b) == sa); /* the same slot (freed last) */
    /* b has a pending error (for CLEAR) and, for STOP and ABORT, work
     * queued behind a delay that a stale stop or abort would mark */
    ASSERT_OK(evrt_launch_host_func_status(b, fails, NULL));
    ASSERT_ST(evrt_stream_synchronize(b), EVRT_ERROR_TASK_FAILED);
    ASSERT_OK(evrt_stream_delay(b, 200000000)); /* 200 ms */
    ASSERT_OK(evrt_launch_host_func(b, nop, NULL));
    release(&c);
    ASSERT_ST(c.st, EVRT_ERROR_INVALID_HANDLE);
    ASSERT_EQ(atomic_load(&sa->fail_stop), 0);
    ASSERT_EQ(atomic_load(&sa->stop_seq), 0);
    ASSERT_EQ(atomic_load(&sa->abort_seq), 0);
    evrt_task_failure_t info;
    ASSERT_OK(evrt_stream_get_error(b, &info));
    ASSERT_ST(info.status, EVRT_ERROR_TASK_FAILED);
    ASSERT_OK(evrt_stream_clear_error(b, &info));
    ASSERT_OK(evrt_stream_synchronize(b));
    ASSERT_OK(evrt_stream_destroy(b));
  }
}
