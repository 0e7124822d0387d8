/*
 * acl_fork_lock.c - fork() while another thread holds the ACL layer's global
 * lock (acl__lock): the child gets ACL's code for EVRT_ERROR_FORKED
 * (ACL_ERROR_RT_INTERNAL_ERROR) from every call at once and exits cleanly;
 * the parent goes on.  White-box: the layer's sources are compiled into
 * this program so that a helper thread can hold acl__lock for as long as
 * the test wants (no sleep decides the window).  Before round two the
 * child's first call that took the lock waited for ever.  The child's last
 * message must be the FORKED one: the data-buffer calls at the end run on
 * the child's copy and record no error.
 */
#include "acl_internal.h"
#include "acl_test.h"

#include <semaphore.h>

#define CHILD_MS 20000

static sem_t held, release_it;

static void *holder(void *arg) {
  (void)arg;
  pthread_mutex_lock(&acl__lock);
  sem_post(&held);
  while (sem_wait(&release_it) != 0) {
  }
  pthread_mutex_unlock(&acl__lock);
  return NULL;
}

static int in_forked_child;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

static void report_cb(void *p) { (void)p; }

struct objs {
  aclrtStream s;
  aclrtEvent e;
  void *dev;
  aclrtContext ctx;
  aclrtNotify n;
};

/* Every call, on objects of the parent and new ones, returns the FORKED
 * code; counts the ones that do not. */
static int child_calls(struct objs *o) {
  const aclError want = ACL_ERROR_RT_INTERNAL_ERROR;
  int bad = 0;
  aclrtStream s2;
  aclrtEvent e2;
  aclrtContext c2;
  aclrtNotify n2;
  void *p2;
  int32_t dev;
  char buf[64];
  aclrtEventRecordedStatus st;
#define CHILD_EXPECT(call)                                                     \
  do {                                                                         \
    aclError r_ = (call);                                                      \
    if (r_ != want) {                                                          \
      fprintf(stderr, "child: %s returned %d\n", #call, r_);                   \
      bad++;                                                                   \
    }                                                                          \
  } while (0)
  CHILD_EXPECT(aclrtSetDevice(0));
  CHILD_EXPECT(aclrtGetDevice(&dev));
  CHILD_EXPECT(aclrtCreateStream(&s2));
  CHILD_EXPECT(aclrtCreateEvent(&e2));
  CHILD_EXPECT(aclrtRecordEvent(o->e, o->s));
  CHILD_EXPECT(aclrtQueryEventStatus(o->e, &st));
  CHILD_EXPECT(aclrtSynchronizeStream(o->s));
  CHILD_EXPECT(
      aclrtLaunchCallback(report_cb, NULL, ACL_CALLBACK_NO_BLOCK, o->s));
  CHILD_EXPECT(aclrtProcessReport(100));
  CHILD_EXPECT(aclrtMalloc(&p2, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  CHILD_EXPECT(
      aclrtMemcpyAsync(o->dev, 64, buf, 64, ACL_MEMCPY_HOST_TO_DEVICE, o->s));
  CHILD_EXPECT(aclrtFree(o->dev));
  CHILD_EXPECT(aclrtCreateContext(&c2, 0));
  CHILD_EXPECT(aclrtSetCurrentContext(o->ctx));
  CHILD_EXPECT(aclrtGetCurrentContext(&c2));
  CHILD_EXPECT(aclrtCreateNotify(&n2, 0));
  CHILD_EXPECT(aclrtRecordNotify(o->n, o->s));
  CHILD_EXPECT(aclrtDestroyNotify(o->n));
  CHILD_EXPECT(aclrtDestroyEvent(o->e));
  CHILD_EXPECT(aclrtDestroyStream(o->s));
  CHILD_EXPECT(aclrtDestroyContext(o->ctx));
  CHILD_EXPECT(aclrtResetDevice(0));
  CHILD_EXPECT(aclFinalize());
  /* The layer's mutexes are re-initialized in the child (ACL__MUTEX): the
   * one the helper holds in the parent is free here, and the families that
   * keep tables of their own run on the child's copy without waiting. */
  if (pthread_mutex_trylock(&acl__lock) != 0) {
    fprintf(stderr, "child: acl__lock is still held\n");
    bad++;
  } else {
    pthread_mutex_unlock(&acl__lock);
  }
  aclDataBuffer *db = aclCreateDataBuffer(buf, sizeof buf);
  if (db)
    aclDestroyDataBuffer(db);
  const char *m = aclGetRecentErrMsg();
  if (!m || !strstr(m, "fork")) {
    fprintf(stderr, "child: message does not say fork: %s\n", m ? m : "");
    bad++;
  }
  return bad;
}

TEST(child_forked_while_acl_lock_held_gets_forked_code_and_exits) {
  struct objs o;
  ASSERT_OK(aclrtCreateStream(&o.s));
  ASSERT_OK(aclrtCreateEvent(&o.e));
  ASSERT_OK(aclrtMalloc(&o.dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_OK(aclrtCreateNotify(&o.n, 0));
  aclrtContext cur;
  ASSERT_OK(aclrtGetCurrentContext(&cur));
  ASSERT_OK(aclrtCreateContext(&o.ctx, 0));
  ASSERT_OK(aclrtSetCurrentContext(cur));
  sem_init(&held, 0, 0);
  sem_init(&release_it, 0, 0);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, holder, NULL), 0);
  while (sem_wait(&held) != 0) {
  }
  /* acl__lock is held by the helper for as long as we do not post */
  pid_t pid = fork();
  if (pid == 0) {
    in_forked_child = 1;
    exit(child_calls(&o) ? 1 : 0); /* exit: handlers must not block */
  }
  ASSERT(pid > 0);
  int status = harness_wait_child(pid, CHILD_MS);
  sem_post(&release_it);
  pthread_join(th, NULL);
  ASSERT(status != -1); /* -1: the child hung and was killed */
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* the parent goes on */
  ASSERT_OK(aclrtRecordEvent(o.e, o.s));
  ASSERT_OK(aclrtSynchronizeStream(o.s));
  ASSERT_OK(aclrtFree(o.dev));
  ASSERT_OK(aclrtDestroyNotify(o.n));
  ASSERT_OK(aclrtDestroyEvent(o.e));
  ASSERT_OK(aclrtDestroyStream(o.s));
  ASSERT_OK(aclrtDestroyContext(o.ctx));
  ASSERT_OK(aclrtSetCurrentContext(cur));
}

static void noop_host(void *p) { (void)p; }

/* Run in a fresh image, from a constructor (before main's aclInit): a child
 * forked before the process used the layer may use it. */
__attribute__((constructor)) static void fresh_fork(void) {
  if (!getenv("ACL_FORK_FRESH_CHILD"))
    return;
  pid_t pid = fork();
  if (pid == 0) {
    aclrtStream s;
    int ok = aclInit(NULL) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS &&
             aclrtCreateStream(&s) == ACL_SUCCESS &&
             aclrtLaunchHostFunc(s, noop_host, NULL) == ACL_SUCCESS &&
             aclrtSynchronizeStream(s) == ACL_SUCCESS &&
             aclrtDestroyStream(s) == ACL_SUCCESS;
    _exit(ok ? 0 : 1);
  }
  int status = harness_wait_child(pid, CHILD_MS);
  _exit(status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : 2);
}

TEST(child_forked_before_first_use_may_use_the_layer) {
  ASSERT_EQ(harness_run_fresh("none", "ACL_FORK_FRESH_CHILD", "1"), 0);
}
