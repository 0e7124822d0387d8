/*
 * check_order.c - a racy program whose accesses reach the checker in an
 * order that timing decides, modeled on CANN's memory/5: a kernel-like host
 * function reads and writes a block, the host copies from the block at
 * once (no synchronize) and frees it while the kernel may still run.
 *
 *   check_order [kernel|host]
 *
 * forces the kernel's access before the host's, or after the host's free
 * (by plain flags, which the checker does not see); no argument lets the
 * timing (and EVRT_CHAOS) decide.  tests/check/order.sh runs it in every
 * order and compares the findings: they must be the same set each time.
 */
#define _POSIX_C_SOURCE 200809L
#include <evrt.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 4096 };
static char *src;
static char dst[N];
static atomic_int kernel_done, host_done;
static int order; /* 0: timing, 1: kernel first, 2: host first */

static void wait_flag(atomic_int *f) {
  for (int i = 0; i < 20000 && !atomic_load(f); i++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void kernel(void *p) {
  (void)p;
  if (order == 2)
    wait_flag(&host_done);
  evrt_check_access(src, N, EVRT_CHECK_READ | EVRT_CHECK_WRITE);
  for (int i = 0; i < N; i++) /* (quarantined after the free: still ours) */
    src[i] = (char)(src[i] + 1);
  atomic_store(&kernel_done, 1);
}

int main(int argc, char **argv) {
  order = argc > 1 ? (strcmp(argv[1], "kernel") == 0 ? 1 : 2) : 0;
  evrt_stream_t s;
  if (evrt_stream_create(&s, 0, 0, 0))
    return 2;
  src = malloc(N);
  if (!src)
    return 2;
  evrt_check_alloc(src, N);
  evrt_check_access(src, N, EVRT_CHECK_WRITE);
  memset(src, 1, N);
  evrt_launch_host_func(s, kernel, NULL);
  if (order == 1)
    wait_flag(&kernel_done);
  /* the synchronous copy: no synchronize before it */
  evrt_check_access(src, N, EVRT_CHECK_READ);
  evrt_check_access(dst, N, EVRT_CHECK_WRITE);
  memcpy(dst, src, N);
  evrt_check_free(src, N, free); /* the kernel may still use it */
  atomic_store(&host_done, 1);
  evrt_stream_synchronize(s);
  evrt_stream_destroy(s);
  return 0;
}
