/* Library lifecycle: shutdown joins the workers, fork() gives the child a
 * clear error. */
#include "test.h"

#include <sys/wait.h>

static void noop(void *p) { (void)p; }

/* Threads of the process before evrt started any (ThreadSanitizer adds a
 * background thread of its own, possibly later). */
static int threads_at_start;
__attribute__((constructor)) static void count_start(void) {
  threads_at_start = thread_count();
}

TEST(fork_child_gets_clear_error_parent_unaffected) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(s, noop, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  pid_t pid = fork();
  if (pid == 0) {
    evrt_stream_t c;
    int ok = evrt_stream_create(&c, 0, 0, 0) == EVRT_ERROR_FORKED &&
             evrt_stream_synchronize(s) == EVRT_ERROR_FORKED &&
             strstr(evrt_last_error_message(), "fork") != NULL;
    _exit(ok ? 0 : 1);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_OK(evrt_launch_host_func(s, noop, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(fork_before_first_use_child_can_use_library) {
  if (!HARNESS_IN_FRESH_IMAGE()) {
    /* This process already initialized evrt: re-run this test alone in a
     * fresh image of the binary. */
    ASSERT_EQ(harness_run_fresh("fork_before_first_use_child_can_use_library",
                                NULL, NULL),
              0);
    return;
  }
  /* fresh image: evrt untouched; a child forked now can use it */
  pid_t pid = fork();
  if (pid == 0) {
    evrt_stream_t c;
    int ok = evrt_stream_create(&c, 0, 0, 0) == EVRT_SUCCESS &&
             evrt_launch_host_func(c, noop, NULL) == EVRT_SUCCESS &&
             evrt_stream_synchronize(c) == EVRT_SUCCESS;
    _exit(ok ? 0 : 1);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(is_initialized_tells_without_initializing) {
  if (!HARNESS_IN_FRESH_IMAGE()) {
    ASSERT_EQ(harness_run_fresh("is_initialized_tells_without_initializing",
                                NULL, NULL),
              0);
    return;
  }
  int on = -1;
  ASSERT_ST(evrt_is_initialized(NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_is_initialized(&on));
  ASSERT_EQ(on, 0);
  ASSERT_OK(evrt_is_initialized(&on)); /* asking did not initialize it */
  ASSERT_EQ(on, 0);
  int n = 0;
  ASSERT_OK(evrt_device_count(&n)); /* a first call initializes */
  ASSERT_OK(evrt_is_initialized(&on));
  ASSERT_EQ(on, 1);
  pid_t pid = fork();
  if (pid == 0) { /* a child forked after initialization: unusable */
    int c = -1;
    _exit(evrt_is_initialized(&c) == EVRT_SUCCESS && c == 0 ? 0 : 1);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_OK(evrt_shutdown());
  ASSERT_OK(evrt_is_initialized(&on));
  ASSERT_EQ(on, 0);
}

TEST(unknown_backend_is_a_clear_error) {
  /* in a fresh image of this binary, so that init runs again */
  if (!HARNESS_IN_FRESH_IMAGE()) {
    ASSERT_EQ(harness_run_fresh("unknown_backend_is_a_clear_error",
                                "EVRT_BACKEND", "cuda"),
              0);
    return;
  }
  int n = 0;
  ASSERT_ST(evrt_device_count(&n), EVRT_ERROR_NOT_SUPPORTED);
  ASSERT(strstr(evrt_last_error_message(), "cpu") != NULL);
}

TEST(shutdown_joins_workers_and_invalidates) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(s, noop, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  int before = thread_count();
  ASSERT(before >= 3);
  ASSERT_OK(evrt_shutdown());
  /* Workers are detached: shutdown returns once each has left the pool;
   * the kernel may show an exiting thread a moment longer. */
  WAIT_UNTIL(thread_count() <= threads_at_start, 2000);
  int after = thread_count();
#ifdef __SANITIZE_THREAD__
  ASSERT(after <= threads_at_start + 1);
#else
  ASSERT_EQ(after, threads_at_start); /* every evrt thread was joined */
#endif
  ASSERT(after < before);
  ASSERT_ST(evrt_stream_query(s), EVRT_ERROR_SHUTDOWN);
  ASSERT_ST(evrt_init(), EVRT_ERROR_SHUTDOWN);
  ASSERT_ST(evrt_shutdown(), EVRT_ERROR_SHUTDOWN);
}
