/*
 * test_fork.c - fork() while another thread is inside evrt: the child gets
 * EVRT_ERROR_FORKED at once and exits cleanly (its exit handler and the
 * trace take no lock a vanished thread may hold), and the parent goes on.
 *
 * Each window is held open deterministically with a FIFO, never with a
 * sleep: the thread inside evrt blocks in open(2) of a FIFO without a
 * reader (lazy init with EVRT_TRACE naming it), or in write(2) to a FIFO
 * whose reader does not read (evrt_trace_stop writing the file).  The
 * parent forks only once /proc or the FIFO shows the thread blocked there.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define CHILD_MS 20000 /* generous: a loaded sanitizer run is slow */

static void noop(void *p) { (void)p; }

/* The system call a thread of this process is blocked in (-1 if it runs or
 * cannot be read): /proc/self/task/TID/syscall starts with its number. */
static long blocked_in(pid_t tid) {
  char path[64], buf[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  if (buf[0] < '0' || buf[0] > '9')
    return -1; /* "running" */
  return strtol(buf, NULL, 10);
}

static char fifo_path[64];
static void make_fifo(void) {
  snprintf(fifo_path, sizeof fifo_path, "/tmp/evrt-fork-%d", (int)getpid());
  unlink(fifo_path);
  if (mkfifo(fifo_path, 0600) != 0)
    abort();
}

/* LeakSanitizer (ASan builds) would count the memory of the parent's
 * vanished threads in a forked child as leaked: not in the child. */
static int in_forked_child;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

/* The child's part: every call fails with FORKED at once, and exit (atexit
 * handlers, the trace's) returns. */
static void child_checks(void) {
  in_forked_child = 1;
  evrt_stream_t s;
  int n = 0;
  int ok = evrt_init() == EVRT_ERROR_FORKED &&
           evrt_stream_create(&s, 0, 0, 0) == EVRT_ERROR_FORKED &&
           evrt_device_count(&n) == EVRT_ERROR_FORKED &&
           evrt_trace_stop() == EVRT_ERROR_FORKED &&
           strstr(evrt_last_error_message(), "fork") != NULL;
  (void)evrt_trace_dropped();
  exit(ok ? 0 : 1); /* exit, not _exit: the exit handlers must not block */
}

static atomic_int helper_tid;
static atomic_int helper_st = -1;

/* The helper thread: records its tid, then makes the call `arg` (an
 * evrt_status_t (*)(void)) and keeps its status. */
static void *helper(void *arg) {
  evrt_status_t (*call)(void) = *(evrt_status_t(**)(void))arg;
  atomic_store(&helper_tid, (int)syscall(SYS_gettid));
  atomic_store(&helper_st, (int)call());
  return NULL;
}

/* A thread inside the lazy initialization (blocked opening the EVRT_TRACE
 * FIFO, which has no reader yet) while the process forks.  Before round
 * two the child's first call waited for ever on the init lock the thread
 * held. */
TEST(child_forked_inside_lazy_init_gets_forked_and_exits) {
  if (!HARNESS_IN_FRESH_IMAGE()) {
    ASSERT_EQ(harness_run_fresh("child_forked_inside_lazy_init_gets_forked_"
                                "and_exits",
                                NULL, NULL),
              0);
    return;
  }
  make_fifo();
  setenv("EVRT_TRACE", fifo_path, 1);
  pthread_t th;
  static evrt_status_t (*call)(void) = evrt_init;
  ASSERT_EQ(pthread_create(&th, NULL, helper, &call), 0);
  WAIT_UNTIL(atomic_load(&helper_tid) &&
                 blocked_in(atomic_load(&helper_tid)) == SYS_openat,
             CHILD_MS);
  ASSERT(blocked_in(atomic_load(&helper_tid)) == SYS_openat);
  pid_t pid = fork();
  if (pid == 0)
    child_checks();
  ASSERT(pid > 0);
  int status = harness_wait_child(pid, CHILD_MS);
  /* let the initialization go on: a reader for the FIFO */
  int rfd = open(fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT(rfd >= 0);
  pthread_join(th, NULL);
  ASSERT_EQ(status, 0); /* -1: the child hung and was killed */
  ASSERT_ST(atomic_load(&helper_st), EVRT_SUCCESS);
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func(s, noop, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_trace_stop()); /* a small file: fits the FIFO */
  char buf[65536];
  ssize_t n = read(rfd, buf, sizeof buf - 1);
  ASSERT(n > 0);
  buf[n] = 0;
  ASSERT(strstr(buf, "traceEvents") != NULL);
  close(rfd);
  unlink(fifo_path);
}

/* A thread inside evrt_trace_stop (blocked writing the file into a full
 * FIFO, holding the trace's locks) while the process forks.  Before round
 * two the child's evrt_trace_stop and its exit handler waited for ever on
 * those locks.  The child must not write the parent's file either. */
TEST(child_forked_inside_trace_stop_gets_forked_and_exits) {
  make_fifo();
  int rfd = open(fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT(rfd >= 0);
  int cap = fcntl(rfd, F_SETPIPE_SZ, 4096);
  ASSERT(cap > 0);
  ASSERT_OK(evrt_trace_start(fifo_path)); /* a reader exists: no wait */
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  for (int i = 0; i < 300; i++) /* well over 4 KiB of JSON */
    ASSERT_OK(evrt_launch_host_func(s, noop, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  atomic_store(&helper_tid, 0);
  pthread_t th;
  static evrt_status_t (*call)(void) = evrt_trace_stop;
  ASSERT_EQ(pthread_create(&th, NULL, helper, &call), 0);
  /* the FIFO is full and the writer blocked in write(2) */
  int queued = 0;
  WAIT_UNTIL((ioctl(rfd, FIONREAD, &queued) == 0 && queued >= cap &&
              blocked_in(atomic_load(&helper_tid)) == SYS_write),
             CHILD_MS);
  ASSERT(queued >= cap);
  ASSERT(blocked_in(atomic_load(&helper_tid)) == SYS_write);
  pid_t pid = fork();
  if (pid == 0)
    child_checks();
  ASSERT(pid > 0);
  int status = harness_wait_child(pid, CHILD_MS);
  /* drain: the stop finishes and closes the file (the child's copy of the
   * descriptor is closed by its exit) */
  static char file[1 << 20];
  size_t len = 0;
  int fl = fcntl(rfd, F_GETFL);
  fcntl(rfd, F_SETFL, fl & ~O_NONBLOCK);
  for (;;) {
    ssize_t n = read(rfd, file + len, sizeof file - 1 - len);
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  file[len] = 0;
  pthread_join(th, NULL);
  close(rfd);
  unlink(fifo_path);
  ASSERT_EQ(status, 0); /* -1: the child hung and was killed */
  ASSERT_ST(atomic_load(&helper_st), EVRT_SUCCESS);
  /* one whole file, nothing appended by the child */
  ASSERT(len > (size_t)cap);
  ASSERT(strncmp(file, "{\"displayTimeUnit\"", 18) == 0);
  ASSERT(strstr(file + 1, "{\"displayTimeUnit\"") == NULL);
  ASSERT(len >= 4 && strcmp(file + len - 4, "\n]}\n") == 0);
  ASSERT_OK(evrt_stream_destroy(s));
}
