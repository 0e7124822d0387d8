/*
 * acl_test.h - harness of the ACL tests.  Tests use acl/acl.h only (no evrt
 * header): TEST(), ASSERT, ASSERT_EQ, ASSERT_ACL(expr, code) which prints
 * aclGetRecentErrMsg() on mismatch, a "N passed, N failed" summary and
 * exit 77 = skipped.  Host tasks stand in for device kernels: gate_t is a
 * latch a host function waits on, so a test controls exactly when a stream
 * gets past a point.
 */
#ifndef ACL_TEST_H
#define ACL_TEST_H

#define _GNU_SOURCE
#include <acl/acl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_case { const char *name; test_fn fn; };
static struct test_case test_cases_[128];
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

#define ASSERT_ACL(expr, want)                                                 \
  do {                                                                         \
    aclError got_ = (expr);                                                    \
    if (got_ != (want)) {                                                      \
      const char *m_ = aclGetRecentErrMsg();                                   \
      FAIL_("%s returned %d, want %d (%s)", #expr, got_, (int)(want),          \
            m_ ? m_ : "no message");                                           \
    }                                                                          \
  } while (0)
#define ASSERT_OK(expr) ASSERT_ACL(expr, ACL_SUCCESS)

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A latch: host tasks block in gate_pass until gate_open. */
typedef struct {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int open;
  atomic_int passed;
} gate_t;
static inline void gate_init(gate_t *g) {
  pthread_mutex_init(&g->m, NULL);
  pthread_cond_init(&g->cv, NULL);
  g->open = 0;
  atomic_init(&g->passed, 0);
}
static inline void gate_open(gate_t *g) {
  pthread_mutex_lock(&g->m);
  g->open = 1;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->m);
}
static inline void gate_pass(void *arg) {
  gate_t *g = (gate_t *)arg;
  pthread_mutex_lock(&g->m);
  while (!g->open)
    pthread_cond_wait(&g->cv, &g->m);
  pthread_mutex_unlock(&g->m);
  atomic_fetch_add(&g->passed, 1);
}
/* Make `stream` block at this point until gate_open(g). */
static inline aclError gate_on(aclrtStream stream, gate_t *g) {
  return aclrtLaunchHostFunc(stream, gate_pass, g);
}

static void acl_test_setup(void) {
  aclError r = aclInit(NULL);
  if (r != ACL_SUCCESS && r != ACL_ERROR_REPEAT_INITIALIZE) {
    printf("aclInit failed: %d\n", r);
    exit(1);
  }
  if (aclrtSetDevice(0) != ACL_SUCCESS) {
    printf("aclrtSetDevice(0) failed\n");
    exit(1);
  }
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  acl_test_setup();
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
  aclrtResetDevice(0);
  aclFinalize();
  return failed ? 1 : 0;
}

#endif
