/*
 * harness.h - the tiny test harness shared by evrt's C tests (test.h) and
 * the ACL tests (acl/acl_test.h): TEST() registration, asserts that print
 * both operands, timing and /proc helpers, and harness_run(), which runs
 * every test (or the one named on the command line) and prints the summary
 * line "N passed, N failed".  Exit 77 = skipped.
 */
#ifndef EVRT_HARNESS_H
#define EVRT_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_case { const char *name; test_fn fn; };
static struct test_case test_cases_[256];
static int test_count_;
static int test_failed_now_;

#define TEST(tname)                                                            \
  static void test_##tname(void);                                              \
  __attribute__((constructor)) static void reg_##tname(void) {                 \
    test_cases_[test_count_].name = #tname;                                    \
    test_cases_[test_count_++].fn = test_##tname;                              \
  }                                                                            \
  static void test_##tname(void)

#define FAIL_(...)                                                             \
  do {                                                                         \
    fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                          \
    fprintf(stderr, __VA_ARGS__);                                              \
    fprintf(stderr, "\n");                                                     \
    test_failed_now_ = 1;                                                      \
    return;                                                                    \
  } while (0)

#define ASSERT(c)                                                              \
  do {                                                                         \
    if (!(c))                                                                  \
      FAIL_("assertion failed: %s", #c);                                       \
  } while (0)

#define ASSERT_EQ(a, b)                                                        \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    if (a_ != b_)                                                              \
      FAIL_("%s == %s failed: %lld != %lld", #a, #b, a_, b_);                  \
  } while (0)

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}
/* Poll cond for up to ms milliseconds. */
#define WAIT_UNTIL(cond, ms)                                                   \
  do {                                                                         \
    uint64_t dl_ = now_ns() + (uint64_t)(ms) * 1000000u;                       \
    while (!(cond) && now_ns() < dl_)                                          \
      sleep_ms(1);                                                             \
  } while (0)

/* A number field of /proc/self/status ("Threads:", "VmRSS:"), -1 if absent. */
static inline long proc_status(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long n = -1;
  size_t len = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, len)) {
      n = strtol(line + len, NULL, 10);
      break;
    }
  if (f)
    fclose(f);
  return n;
}
static inline int thread_count(void) { return (int)proc_status("Threads:"); }
static inline long rss_kb(void) { return proc_status("VmRSS:"); }

static inline uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Run one test of this binary in a fresh image (no library initialized),
 * with an extra environment variable (var may be NULL) and
 * HARNESS_FRESH=1; returns its exit status, or -1 if it did not exit. */
static inline int harness_run_fresh(const char *test, const char *var,
                                    const char *value) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("HARNESS_FRESH", "1", 1);
    if (var)
      setenv(var, value, 1);
    execl("/proc/self/exe", "fresh", test, (char *)NULL);
    _exit(3);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#define HARNESS_IN_FRESH_IMAGE() (getenv("HARNESS_FRESH") != NULL)

/* Wait up to ms for child pid; a child still running then is killed.
 * Returns its wait status, or -1 if it had to be killed. */
static inline int harness_wait_child(pid_t pid, unsigned ms) {
  int status = 0;
  uint64_t dl = now_ns() + (uint64_t)ms * 1000000u;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (now_ns() >= dl) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    sleep_ms(2);
  }
  return status;
}

/* Run the registered tests; returns the number that failed. */
static int harness_run(int argc, char **argv) {
  int passed = 0, failed = 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  for (int i = 0; i < test_count_; i++) {
    if (argc > 1 && strcmp(argv[1], test_cases_[i].name) != 0)
      continue;
    test_failed_now_ = 0;
    test_cases_[i].fn();
    printf("%s %s\n", test_failed_now_ ? "FAIL" : "ok  ", test_cases_[i].name);
    if (test_failed_now_)
      failed++;
    else
      passed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed;
}

#endif
