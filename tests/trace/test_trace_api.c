/*
 * test_trace_api.c - evrt_trace_start/stop/dropped: errors, restart, the
 * bounded buffer's accounting, and tracing across fork().
 *
 * The file's contents are checked by check_trace.py; here only what the C
 * API promises, with the file read back by the small helpers below.
 */
#include "test.h"

#include <dirent.h>
#include <fcntl.h>

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char dir[256];

static const char *path_of(const char *name) {
  static char p[4][320];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s)
    s[n] = 0;
  fclose(f);
  return s;
}

static long count_of(const char *text, const char *needle) {
  long n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* The value of "dropped_entries" in otherData, or -1. */
static long long dropped_in(const char *text) {
  const char *p = strstr(text, "\"dropped_entries\":");
  return p ? atoll(p + strlen("\"dropped_entries\":")) : -1;
}

static pid_t dir_owner;

__attribute__((constructor)) static void make_dir(void) {
  const char *base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/evrt-trace-api-XXXXXX", base ? base : "/tmp");
  dir_owner = getpid();
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
}

/* Leave no files behind in /tmp: each run made a new directory.  Only the
 * process that made it removes it (a forked child exits through here too). */
__attribute__((destructor)) static void remove_dir(void) {
  if (getpid() != dir_owner)
    return;
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
      unlinkat(dirfd(d), de->d_name, 0);
  closedir(d);
  rmdir(dir);
}

TEST(bad_arguments) {
  ASSERT_ST(evrt_trace_start(NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_trace_start(""), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_trace_start("/nonexistent-dir/x/trace.json"),
            EVRT_ERROR_SYSTEM);
  ASSERT(strstr(evrt_last_error_message(), "nonexistent-dir") != NULL);
  /* a failed start leaves tracing off: stop is a no-op, start works */
  ASSERT_OK(evrt_trace_stop());
  ASSERT_OK(evrt_trace_start(path_of("a.json")));
  ASSERT_ST(evrt_trace_start(path_of("b.json")), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_OK(evrt_trace_stop());
  ASSERT_OK(evrt_trace_stop());
  char *t = slurp(path_of("a.json"));
  ASSERT(t != NULL);
  ASSERT(strstr(t, "\"traceEvents\"") != NULL);
  ASSERT_EQ(dropped_in(t), 0);
  free(t);
  struct stat st;
  ASSERT(stat(path_of("b.json"), &st) != 0 && errno == ENOENT);
}

static void nop(void *p) { (void)p; }

/* Two sessions: each file holds only its own session's work. */
TEST(restart_holds_only_its_session) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "before"));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_start(path_of("one.json")));
  for (int i = 0; i < 5; i++)
    ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "first"));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_stop());
  ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "between"));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_start(path_of("two.json")));
  for (int i = 0; i < 7; i++)
    ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "second"));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_stop());
  ASSERT_OK(evrt_stream_destroy(s));
  char *one = slurp(path_of("one.json")), *two = slurp(path_of("two.json"));
  ASSERT(one && two);
  ASSERT_EQ(count_of(one, "\"name\":\"first\""), 5);
  ASSERT_EQ(count_of(one, "\"name\":\"second\""), 0);
  ASSERT_EQ(count_of(two, "\"name\":\"second\""), 7);
  ASSERT_EQ(count_of(two, "\"name\":\"first\""), 0);
  ASSERT_EQ(count_of(one, "\"name\":\"before\"") +
                count_of(two, "\"name\":\"between\""),
            0);
  free(one);
  free(two);
}

/* A full buffer drops entries and says so: every entry is either in the
 * file or counted, in evrt_trace_dropped() and in the file. */
TEST(bounded_buffer_counts_what_it_drops) {
  enum { ITEMS = 600 };
  static char buf[16];
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  setenv("EVRT_TRACE_BUFFER", "50", 1);
  ASSERT_OK(evrt_trace_start(path_of("small.json")));
  unsetenv("EVRT_TRACE_BUFFER");
  ASSERT_EQ(evrt_trace_dropped(), 0);
  for (int i = 0; i < ITEMS; i++)
    ASSERT_OK(evrt_memset_async(s, buf, i, sizeof buf));
  ASSERT_OK(evrt_stream_synchronize(s));
  uint64_t live = evrt_trace_dropped();
  ASSERT_OK(evrt_trace_stop());
  uint64_t dropped = evrt_trace_dropped();
  ASSERT(dropped > 0);
  ASSERT(dropped >= live);
  char *t = slurp(path_of("small.json"));
  ASSERT(t != NULL);
  /* Each memset is one entry of a worker's buffer (the main thread's host
   * wait lands in its own buffer, which stays far from full). */
  long kept = count_of(t, "\"cat\":\"memset\"");
  ASSERT(kept > 0);
  ASSERT_EQ(kept + (long long)dropped, ITEMS);
  ASSERT_EQ(dropped_in(t), (long long)dropped);
  free(t);
  /* the next session starts with empty buffers and a zero count */
  ASSERT_OK(evrt_trace_start(path_of("after.json")));
  ASSERT_EQ(evrt_trace_dropped(), 0);
  ASSERT_OK(evrt_memset_async(s, buf, 1, sizeof buf));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_stop());
  ASSERT_EQ(evrt_trace_dropped(), 0);
  ASSERT_OK(evrt_stream_destroy(s));
}

/* A child of fork() must not write (or clobber) the parent's trace, not even
 * from its exit handler. */
TEST(fork_child_leaves_the_trace_alone) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_trace_start(path_of("fork.json")));
  for (int i = 0; i < 3; i++)
    ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "parent"));
  ASSERT_OK(evrt_stream_synchronize(s));
  pid_t pid = fork();
  if (pid == 0) {
    /* child: stop reports the fork; exit runs the library's exit handler */
    int rc = evrt_trace_stop() == EVRT_ERROR_FORKED ? 0 : 3;
    exit(rc);
  }
  ASSERT(pid > 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ASSERT_OK(evrt_launch_host_func_labeled(s, nop, NULL, "parent"));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_trace_stop());
  char *t = slurp(path_of("fork.json"));
  ASSERT(t != NULL);
  ASSERT_EQ(count_of(t, "\"name\":\"parent\""), 4);
  ASSERT_EQ(count_of(t, "\"traceEvents\""), 1);
  free(t);
  ASSERT_OK(evrt_stream_destroy(s));
}
