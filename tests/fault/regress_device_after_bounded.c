/*
 * regress_device_after_bounded.c - evrt_device_launch_host_func costs the
 * same whatever is pending (issue 23, item 4).  Before the fix each call
 * built a hidden stream that waited on every stream with work pending,
 * the hidden streams of earlier calls still waiting included: behind one
 * busy stream, call k enqueued k items and took a stream slot of its own
 * (2,000 frees grew the process by 306 MiB, 5,000 by 1.3 GB).
 *
 * White-box (evrt_static): the allocation counter of
 * evrt__test_fail_alloc_at and the stream table's slot count are the
 * measures (no timing).  Also: the releases still run in order and only
 * after the work enqueued before each, and a failed allocation queues
 * nothing (the caller keeps its release) and leaks nothing (ASan).
 */
#include "test.h"

#include "internal.h"

#ifndef N
#define N 5000
#endif

struct gate {
  atomic_int open;
};
static void gate_fn(void *p) {
  struct gate *g = p;
  while (!atomic_load(&g->open))
    sleep_ms(1);
}
static void nop(void *p) { (void)p; }

/* nran counts finished releases, after their entry of order[] is written
 * (a reader that sees the count sees the entries) */
static atomic_int nslot, nran;
static int order[N + 64];
static void release(void *p) {
  int k = atomic_fetch_add(&nslot, 1);
  if (k < N + 64)
    order[k] = (int)(intptr_t)p;
  atomic_fetch_add(&nran, 1);
}

/* A stream of device 0 held busy by g, the counters reset, and a first
 * release (tag first) queued behind it (which makes the lane if none). */
static evrt_stream_t busy_with_a_release(struct gate *g, int first) {
  evrt_stream_t busy = NULL;
  if (evrt_stream_create(&busy, 0, 0, 0) ||
      evrt_launch_host_func(busy, gate_fn, g))
    abort();
  atomic_store(&nran, 0);
  atomic_store(&nslot, 0);
  if (evrt_device_launch_host_func(EVRT_DEVICE_ALL, release,
                                   (void *)(intptr_t)first))
    abort();
  return busy;
}

TEST(releases_behind_a_busy_stream_cost_a_constant) {
  struct gate g = {0};
  evrt_stream_t busy = busy_with_a_release(&g, 0);
  uint32_t slots0 = atomic_load(&evrt__streams.next_unused);
  (void)evrt__test_fail_alloc_at(0); /* count from here */
  for (int i = 1; i <= N; i++)
    ASSERT_OK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, release,
                                           (void *)(intptr_t)i));
  long allocs = evrt__test_fail_alloc_at(0);
  uint32_t slots1 = atomic_load(&evrt__streams.next_unused);
  fprintf(stderr, "  %d releases behind a busy stream: %ld allocations, "
                  "%u stream slots more\n",
          N, allocs, slots1 - slots0);
  /* one per call (its item; the lane's buffers are kept), twice that
   * generously; before: the sum of 1..N items and a stream per call */
  ASSERT(allocs <= 2l * N);
  ASSERT(slots1 - slots0 <= 1);
  /* nothing ran before the busy stream's work */
  ASSERT_EQ(atomic_load(&nran), 0);
  atomic_store(&g.open, 1);
  WAIT_UNTIL(atomic_load(&nran) == N + 1, 60000);
  ASSERT_EQ(atomic_load(&nran), N + 1);
  for (int i = 0; i <= N; i++)
    ASSERT_EQ(order[i], i); /* in the order of the calls */
  ASSERT_OK(evrt_device_synchronize(0));
  ASSERT_OK(evrt_stream_destroy(busy));
}

/* A release waits for what was enqueued before it, on every stream, and
 * for nothing after: the lane's cover of earlier waits must not let a
 * later call skip a stream that has moved on since. */
TEST(each_release_waits_for_the_work_before_it_only) {
  evrt_stream_t a, b;
  struct gate g1 = {0}, g2 = {0}, gb = {0};
  ASSERT_OK(evrt_stream_create(&a, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&b, 0, 0, 0));
  atomic_store(&nran, 0);
  atomic_store(&nslot, 0);
  ASSERT_OK(evrt_launch_host_func(a, gate_fn, &g1));
  ASSERT_OK(evrt_device_launch_host_func(0, release, (void *)(intptr_t)1));
  ASSERT_OK(evrt_launch_host_func(a, gate_fn, &g2)); /* a moved on */
  ASSERT_OK(evrt_device_launch_host_func(0, release, (void *)(intptr_t)2));
  ASSERT_OK(evrt_launch_host_func(b, gate_fn, &gb)); /* after both */
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&nran), 0);
  atomic_store(&g1.open, 1);
  WAIT_UNTIL(atomic_load(&nran) == 1, 10000);
  ASSERT_EQ(atomic_load(&nran), 1);
  ASSERT_EQ(order[0], 1);
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&nran), 1); /* the second waits for g2 */
  atomic_store(&g2.open, 1);
  /* and not for b's gate, enqueued after it */
  WAIT_UNTIL(atomic_load(&nran) == 2, 10000);
  ASSERT_EQ(atomic_load(&nran), 2);
  ASSERT_EQ(order[1], 2);
  atomic_store(&gb.open, 1);
  ASSERT_OK(evrt_device_synchronize(0));
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
}

/* Every allocation of a call, failed in turn: OUT_OF_MEMORY, nothing
 * queued (the function never runs: the caller still owns its release),
 * nothing leaked (ASan); the next call works. */
TEST(a_failed_allocation_queues_nothing) {
  /* in a fresh process: the lane new, with no recycled items, so that
   * every item of a call is a malloc (a site) */
  if (!HARNESS_IN_FRESH_IMAGE()) {
    ASSERT_EQ(harness_run_fresh("a_failed_allocation_queues_nothing", NULL,
                                NULL),
              0);
    return;
  }
  /* the lane is new and holds no recycled items while the busy stream
   * keeps it waiting: every item is a malloc */
  struct gate g = {0};
  evrt_stream_t busy = busy_with_a_release(&g, 1000);
  /* the busy stream moves on before each call: a wait item is needed */
  ASSERT_OK(evrt_launch_host_func(busy, nop, NULL));
  (void)evrt__test_fail_alloc_at(0);
  ASSERT_OK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, release,
                                         (void *)(intptr_t)1001));
  long sites = evrt__test_fail_alloc_at(0);
  fprintf(stderr, "  %ld allocation sites\n", sites);
  ASSERT(sites >= 2); /* the wait and the function */
  for (long k = 1; k <= sites; k++) {
    ASSERT_OK(evrt_launch_host_func(busy, nop, NULL));
    (void)evrt__test_fail_alloc_at(k);
    evrt_status_t st = evrt_device_launch_host_func(
        EVRT_DEVICE_ALL, release, (void *)(intptr_t)(2000 + k));
    (void)evrt__test_fail_alloc_at(0);
    ASSERT_ST(st, EVRT_ERROR_OUT_OF_MEMORY);
  }
  ASSERT_OK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, release,
                                         (void *)(intptr_t)1002));
  ASSERT_EQ(atomic_load(&nran), 0);
  atomic_store(&g.open, 1);
  ASSERT_OK(evrt_device_synchronize(0));
  WAIT_UNTIL(atomic_load(&nran) == 3, 10000);
  sleep_ms(20);
  ASSERT_EQ(atomic_load(&nran), 3); /* the refused ones never ran */
  ASSERT_EQ(order[0], 1000);
  ASSERT_EQ(order[1], 1001);
  ASSERT_EQ(order[2], 1002);
  ASSERT_OK(evrt_stream_destroy(busy));
}
