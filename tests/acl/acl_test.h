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

#include "harness.h"

#include <acl/acl.h>

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
  acl_test_setup();
  int failed = harness_run(argc, argv);
  aclrtResetDevice(0);
  aclFinalize();
  return failed ? 1 : 0;
}

#endif
