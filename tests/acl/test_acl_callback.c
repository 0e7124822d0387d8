/* aclrtLaunchCallback + aclrtSubscribeReport + aclrtProcessReport, and
 * aclrtLaunchHostFunc. */
#include "acl_test.h"

static atomic_int stop_flag;
static atomic_int ran;
static atomic_ulong ran_on;

static void *report_loop(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_flag))
    aclrtProcessReport(20);
  return NULL;
}

static void cb(void *ud) {
  atomic_fetch_add(&ran, *(int *)ud);
  atomic_store(&ran_on, (unsigned long)pthread_self());
}

static gate_t cb_gate;
static void blocking_cb(void *ud) {
  (void)ud;
  gate_pass(&cb_gate);
}

static void host_fn(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

TEST(callback_runs_on_subscribed_thread) {
  aclrtStream s;
  pthread_t t;
  atomic_store(&stop_flag, 0);
  atomic_store(&ran, 0);
  ASSERT_OK(aclrtCreateStream(&s));
  int one = 1;
  ASSERT_ACL(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s),
             ACL_ERROR_RT_STREAM_NO_CB_REG);
  pthread_create(&t, NULL, report_loop, NULL);
  ASSERT_OK(aclrtSubscribeReport((uint64_t)t, s));
  ASSERT_ACL(aclrtSubscribeReport((uint64_t)t, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
  ASSERT_ACL(aclrtLaunchCallback(cb, &one, (aclrtCallbackBlockType)5, s),
             ACL_ERROR_INVALID_PARAM);
  for (int i = 0; i < 10; i++)
    ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&ran), 10); /* BLOCK: done when the stream is */
  ASSERT_EQ(atomic_load(&ran_on), (unsigned long)t);
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_NO_BLOCK, s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  for (int i = 0; i < 2000 && atomic_load(&ran) < 11; i++)
    sleep_ms(1);
  ASSERT_EQ(atomic_load(&ran), 11);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, s));
  ASSERT_ACL(aclrtUnSubscribeReport((uint64_t)t, s), ACL_ERROR_RT_STREAM_SUBSCRIBE);
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(block_callback_blocks_later_tasks) {
  aclrtStream s;
  pthread_t t;
  atomic_store(&stop_flag, 0);
  gate_init(&cb_gate);
  ASSERT_OK(aclrtCreateStream(&s));
  pthread_create(&t, NULL, report_loop, NULL);
  ASSERT_OK(aclrtSubscribeReport((uint64_t)t, s));
  atomic_int after = 0;
  ASSERT_OK(aclrtLaunchCallback(blocking_cb, NULL, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &after));
  sleep_ms(50);
  ASSERT_EQ(atomic_load(&after), 0);
  gate_open(&cb_gate);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&after), 1);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, s));
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(s));
}

TEST(process_report_errors) {
  ASSERT_ACL(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtSubscribeReport((uint64_t)pthread_self(), s));
  ASSERT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT);
  int one = 1;
  atomic_store(&ran, 0);
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_NO_BLOCK, s));
  ASSERT_OK(aclrtProcessReport(5000));
  ASSERT_EQ(atomic_load(&ran), 1);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)pthread_self(), s));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

TEST(launch_host_func_in_order) {
  aclrtStream s;
  atomic_int n = 0;
  ASSERT_OK(aclrtCreateStream(&s));
  for (int i = 0; i < 100; i++)
    ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &n));
  ASSERT_ACL(aclrtLaunchHostFunc(s, NULL, &n), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&n), 100);
  ASSERT_OK(aclrtDestroyStream(s));
  (void)aclGetRecentErrMsg();
}

/* ---------------------------------------------------------------------
 * Issue 13 item 5: BLOCK callbacks park their streams instead of holding a
 * worker each.  70 of them waiting for a report thread that has not begun
 * (more than the pool's 64 workers) used to leave no worker for any other
 * stream. */
static atomic_int proc_go;
static void *report_when_go(void *arg) {
  (void)arg;
  while (!atomic_load(&proc_go))
    sleep_ms(1);
  while (!atomic_load(&stop_flag))
    aclrtProcessReport(20);
  return NULL;
}

TEST(seventy_block_callbacks_hold_no_worker) {
  enum { N = 70 };
  aclrtStream s[N], other;
  pthread_t t;
  atomic_store(&stop_flag, 0);
  atomic_store(&proc_go, 0);
  atomic_store(&ran, 0);
  pthread_create(&t, NULL, report_when_go, NULL);
  int one = 1;
  for (int i = 0; i < N; i++) {
    ASSERT_OK(aclrtCreateStream(&s[i]));
    ASSERT_OK(aclrtSubscribeReport((uint64_t)t, s[i]));
    ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s[i]));
  }
  sleep_ms(300); /* every stream reaches its callback and parks */
  ASSERT_OK(aclrtCreateStream(&other));
  atomic_int n = 0;
  ASSERT_OK(aclrtLaunchHostFunc(other, host_fn, &n));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(other, 20000));
  ASSERT_EQ(atomic_load(&n), 1);
  ASSERT_EQ(atomic_load(&ran), 0);
  atomic_store(&proc_go, 1);
  for (int i = 0; i < N; i++)
    ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s[i], 20000));
  ASSERT_EQ(atomic_load(&ran), N);
  for (int i = 0; i < N; i++) {
    ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, s[i]));
    ASSERT_OK(aclrtDestroyStream(s[i]));
  }
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(other));
}

/* A BLOCK callback left queued when its thread unsubscribes is released
 * (not run) and its stream goes on; destroying and resetting then return
 * (they hung for ever). */
TEST(unsubscribe_releases_queued_block_callbacks) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  uint64_t me = (uint64_t)pthread_self();
  ASSERT_OK(aclrtSubscribeReport(me, s));
  int one = 1;
  atomic_store(&ran, 0);
  atomic_int after = 0;
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &after));
  ASSERT_ACL(aclrtSynchronizeStreamWithTimeout(s, 100),
             ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_OK(aclrtUnSubscribeReport(me, s));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, 20000));
  ASSERT_EQ(atomic_load(&after), 1);
  ASSERT_EQ(atomic_load(&ran), 0);
  /* queued, then the stream destroyed (Force) while subscribed */
  ASSERT_OK(aclrtSubscribeReport(me, s));
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtLaunchHostFunc(s, host_fn, &after));
  ASSERT_OK(aclrtDestroyStreamForce(s));
  WAIT_UNTIL(atomic_load(&after) == 2, 20000);
  ASSERT_EQ(atomic_load(&after), 2);
  ASSERT_EQ(atomic_load(&ran), 0);
  /* a context reset with one queued returns */
  aclrtContext ctx;
  ASSERT_OK(aclrtGetCurrentContext(&ctx));
  ASSERT_OK(aclrtSetDevice(0)); /* one more reference */
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtSubscribeReport(me, s));
  ASSERT_OK(aclrtLaunchCallback(cb, &one, ACL_CALLBACK_BLOCK, s));
  ASSERT_OK(aclrtResetDeviceForce(0));
  ASSERT_EQ(atomic_load(&ran), 0);
  ASSERT_ACL(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
  ASSERT_OK(aclrtSetDevice(0));
  (void)aclGetRecentErrMsg();
}

/* A BLOCK callback that synchronizes its own stream gets an error, as a
 * host function of the stream would (it deadlocked). */
static aclrtStream self_stream;
static aclrtEvent ev_before, ev_after;
static aclError self_sync, self_sync_to, ev_before_st, ev_after_st;
/* Set once ev_after's record is enqueued: the stream reaches the callback
 * as soon as it is launched, so without this the callback could run
 * before the main thread recorded ev_after, and synchronizing an event
 * never recorded succeeds at once (seen under ThreadSanitizer in CI).
 * Waiting here holds the subscribed thread, not a worker. */
static atomic_int ev_after_recorded;
static void syncing_cb(void *ud) {
  (void)ud;
  WAIT_UNTIL(atomic_load(&ev_after_recorded), 30000);
  self_sync = aclrtSynchronizeStream(self_stream);
  self_sync_to = aclrtSynchronizeStreamWithTimeout(self_stream, 100000);
  ev_before_st = aclrtSynchronizeEvent(ev_before);
  ev_after_st = aclrtSynchronizeEvent(ev_after);
}

TEST(block_callback_that_synchronizes_its_stream_gets_an_error) {
  pthread_t t;
  atomic_store(&stop_flag, 0);
  atomic_store(&ev_after_recorded, 0);
  ASSERT_OK(aclrtCreateStream(&self_stream));
  ASSERT_OK(aclrtCreateEvent(&ev_before));
  ASSERT_OK(aclrtCreateEvent(&ev_after));
  pthread_create(&t, NULL, report_loop, NULL);
  ASSERT_OK(aclrtSubscribeReport((uint64_t)t, self_stream));
  ASSERT_OK(aclrtRecordEvent(ev_before, self_stream));
  ASSERT_OK(aclrtLaunchCallback(syncing_cb, NULL, ACL_CALLBACK_BLOCK,
                                self_stream));
  ASSERT_OK(aclrtRecordEvent(ev_after, self_stream));
  atomic_store(&ev_after_recorded, 1);
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(self_stream, 30000));
  ASSERT_ACL(self_sync, ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(self_sync_to, ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(ev_before_st);
  ASSERT_ACL(ev_after_st, ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtUnSubscribeReport((uint64_t)t, self_stream));
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyEvent(ev_before));
  ASSERT_OK(aclrtDestroyEvent(ev_after));
  ASSERT_OK(aclrtDestroyStream(self_stream));
}

/* aclrtSubscribeHostFunc: aclrtLaunchHostFunc then runs on that thread
 * (inside aclrtProcessHostFunc) and blocks the stream's later tasks. */
static atomic_ulong hf_thread;
static void hf(void *p) {
  atomic_store(&hf_thread, (unsigned long)pthread_self());
  atomic_fetch_add((atomic_int *)p, 1);
}
static void *hostfunc_loop(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_flag))
    aclrtProcessHostFunc(20);
  return NULL;
}

TEST(subscribed_host_functions_run_on_the_subscribed_thread) {
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_ACL(aclrtProcessHostFunc(10), ACL_ERROR_RT_THREAD_SUBSCRIBE);
  ASSERT_ACL(aclrtProcessHostFunc(0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtSubscribeHostFunc(1, NULL), ACL_ERROR_INVALID_PARAM);
  pthread_t t;
  atomic_store(&stop_flag, 0);
  pthread_create(&t, NULL, hostfunc_loop, NULL);
  ASSERT_OK(aclrtSubscribeHostFunc((uint64_t)t, s));
  ASSERT_ACL(aclrtSubscribeHostFunc((uint64_t)t, s),
             ACL_ERROR_RT_STREAM_SUBSCRIBE);
  atomic_int n = 0, after = 0;
  gate_t g;
  gate_init(&g);
  ASSERT_OK(aclrtLaunchHostFunc(s, gate_pass, &g)); /* holds the thread */
  ASSERT_OK(aclrtLaunchHostFunc(s, hf, &n));
  /* not subscribed: another stream's host function runs on a worker */
  aclrtStream w;
  ASSERT_OK(aclrtCreateStream(&w));
  ASSERT_OK(aclrtLaunchHostFunc(w, host_fn, &after));
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(w, 20000));
  ASSERT_EQ(atomic_load(&after), 1);
  ASSERT_EQ(atomic_load(&n), 0);
  gate_open(&g);
  ASSERT_OK(aclrtSynchronizeStreamWithTimeout(s, 20000));
  ASSERT_EQ(atomic_load(&n), 1);
  ASSERT_EQ(atomic_load(&hf_thread), (unsigned long)t);
  ASSERT_ACL(aclrtUnSubscribeHostFunc((uint64_t)t + 1, s),
             ACL_ERROR_RT_STREAM_SUBSCRIBE);
  ASSERT_OK(aclrtUnSubscribeHostFunc((uint64_t)t, s));
  /* unsubscribed: a worker runs them again */
  ASSERT_OK(aclrtLaunchHostFunc(s, hf, &n));
  ASSERT_OK(aclrtSynchronizeStream(s));
  ASSERT_EQ(atomic_load(&n), 2);
  ASSERT(atomic_load(&hf_thread) != (unsigned long)t);
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_OK(aclrtDestroyStream(w));
  (void)aclGetRecentErrMsg();
}
