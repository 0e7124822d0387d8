/*
 * check_acl.c - racy and correct programs written against the ACL layer
 * (acl/acl.h only) under EVRT_CHECK: device memory from aclrtMalloc, copies
 * and fills (asynchronous ones are stream work, synchronous ones host
 * accesses), frees, legacy events; virtual memory mappings, imported IPC
 * memory and memory pools as blocks.  scenario.h says how they are judged.
 */
#include "scenario.h"

#include <acl/acl.h>
#include <acl/acl_rt_memory_soma.h>
#include <pthread.h>

#define OK(call)                                                               \
  do {                                                                         \
    aclError r_ = (call);                                                      \
    if (r_ != ACL_SUCCESS) {                                                   \
      fprintf(stderr, "scenario: %s failed: %d (%s)\n", #call, (int)r_,        \
              aclGetRecentErrMsg());                                           \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

enum { N = 4096 };
static aclrtStream s1, s2;
static void *dev, *host, *host2;

static void setup(void) {
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  OK(aclrtCreateStream(&s1));
  OK(aclrtCreateStream(&s2));
  OK(aclrtMalloc(&dev, N, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMallocHost(&host, N));
  OK(aclrtMallocHost(&host2, N));
  OK(aclrtMemset(host, N, 1, N));
}

static void gate_host_fn(void *p) { gate_fn(p); }
static void *open_gate_later(void *p) {
  (void)p;
  sleep_ms_(300);
  gate_open();
  return NULL;
}

/* ------------------------------------------------------------ racy ones */

/* The download on s2 does not wait for the upload on s1; the fix is in
 * ACL's calls (the program's API), not evrt's. */
REPORT_LINES(acl_missing_wait,
             "  fix: record an event on stream [23] after its access "
             "(aclrtRecordEvent) and make stream [23] wait on it "
             "(aclrtStreamWaitEvent) before its access, or synchronize in "
             "between (aclrtSynchronizeStream)")
SCENARIO(acl_missing_wait, "data race") {
  setup();
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeDevice());
}

/* A fill on one stream and a fill on another overlap. */
SCENARIO(acl_memset_overlap, "data race") {
  setup();
  OK(aclrtMemsetAsync(dev, N, 0, 128, s1));
  OK(aclrtMemsetAsync((char *)dev + 127, N - 127, 1, 128, s2));
  OK(aclrtSynchronizeDevice());
}

/* A 2D copy (a host function of the ACL layer) and a plain copy on another
 * stream overlap. */
SCENARIO(acl_copy2d_missing_wait, "data race") {
  setup();
  OK(aclrtMemcpy2dAsync(dev, 64, host, 64, 64, 8, ACL_MEMCPY_HOST_TO_DEVICE,
                        s1));
  OK(aclrtMemcpyAsync(host2, N, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeDevice());
}

/* A synchronous copy (a host access) reads device memory an upload is still
 * writing: the stream was not synchronized first. */
REPORT_LINES(acl_sync_copy_unsynchronized,
             "  fix: synchronize stream 2 (aclrtSynchronizeStream, or "
             "aclrtSynchronizeEvent of an event recorded after its work) "
             "before the host touches this memory, or enqueue the host access "
             "as a host function (aclrtLaunchHostFunc) after a wait")
SCENARIO(acl_sync_copy_unsynchronized, "unsynchronized host access") {
  setup();
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  gate_open();
  sleep_ms_(20);
  OK(aclrtMemcpy(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST));
  OK(aclrtSynchronizeStream(s1));
}

/* aclrtFree while a queued copy still reads the block. */
REPORT_LINES(acl_free_before_copy,
             "  fix: synchronize the streams that still use the block "
             "(aclrtSynchronizeStream, or aclrtSynchronizeEvent of an event "
             "recorded after their last use) before freeing it (aclrtFree)")
SCENARIO(acl_free_before_copy, "use after free") {
  setup();
  void *blk = NULL;
  OK(aclrtMalloc(&blk, N, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemset(blk, N, 0, N));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(host2, N, blk, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  OK(aclrtFree(blk));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
}

/* Managed memory is a block too: freed while a queued copy reads it. */
SCENARIO(acl_managed_free_before_copy, "use after free") {
  setup();
  void *m = NULL;
  OK(aclrtMemAllocManaged(&m, N, ACL_RT_MEM_ATTACH_GLOBAL));
  OK(aclrtMemset(m, N, 0, N));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(host2, N, m, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  OK(aclrtFree(m));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
}

/* Legacy events (a SYNC event waits for its next record when it was never
 * recorded): the record the first wait needs is queued behind a wait on
 * the first stream. */
SCENARIO(acl_legacy_event_cycle, "deadlock") {
  setup();
  aclrtEvent l, m;
  OK(aclrtCreateEventWithFlag(&l, ACL_EVENT_SYNC));
  OK(aclrtCreateEvent(&m));
  OK(aclrtStreamWaitEvent(s1, l)); /* l never recorded: waits for its next */
  OK(aclrtRecordEvent(m, s1));
  OK(aclrtStreamWaitEvent(s2, m));
  OK(aclrtRecordEvent(l, s2));
  aclError r = aclrtSynchronizeStream(s1);
  EXPECT(r == ACL_ERROR_RT_TASK_TIMEOUT);
  fflush(stderr);
  _exit(66);
}

/* A notify cycle: each stream waits for a notify that the other records
 * behind its own notify wait (ACL notifies are stream-ordered values). */
SCENARIO(acl_notify_cycle, "deadlock") {
  setup();
  aclrtNotify n1, n2;
  OK(aclrtCreateNotify(&n1, 0));
  OK(aclrtCreateNotify(&n2, 0));
  OK(aclrtWaitAndResetNotify(n1, s1, 0));
  OK(aclrtRecordNotify(n2, s1));
  OK(aclrtWaitAndResetNotify(n2, s2, 0));
  OK(aclrtRecordNotify(n1, s2));
  EXPECT(aclrtSynchronizeStream(s1) == ACL_ERROR_RT_TASK_TIMEOUT);
  fflush(stderr);
  _exit(66);
}

/* ---------------------------------------------------------- correct ones */

SCENARIO(acl_event_orders, CLEAN) {
  setup();
  aclrtEvent e;
  OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtRecordEvent(e, s1));
  OK(aclrtStreamWaitEvent(s2, e));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  gate_open();
  OK(aclrtSynchronizeStream(s2));
  EXPECT(((unsigned char *)host2)[7] == 1);
}

SCENARIO(acl_copy2d_event_orders, CLEAN) {
  setup();
  aclrtEvent e;
  OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  OK(aclrtMemcpy2dAsync(dev, 64, host, 64, 64, 8, ACL_MEMCPY_HOST_TO_DEVICE,
                        s1));
  OK(aclrtRecordEvent(e, s1));
  OK(aclrtStreamWaitEvent(s2, e));
  OK(aclrtMemcpyAsync(host2, N, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeStream(s2));
  OK(aclrtMemcpy2d(host2, 64, dev, 64, 64, 4, ACL_MEMCPY_DEVICE_TO_HOST));
}

SCENARIO(acl_synchronize_orders, CLEAN) {
  setup();
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtMemcpy(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST));
  OK(aclrtMemsetAsync(dev, N, 2, N, s2));
  OK(aclrtSynchronizeDevice());
  OK(aclrtMemset(dev, N, 3, N));
}

/* Freed host blocks go back to the heap (after the checker's quarantine),
 * which hands their addresses to memory the checker does not track: plain
 * malloc'd buffers copied with aclrtMemcpy.  No finding: was "use after
 * free" when a freed block's shadow outlived its memory. */
SCENARIO(acl_freed_memory_reused_by_the_heap, CLEAN) {
  enum { K = 64, SZ = 1000 };
  setup();
  void *p[K], *q[K];
  for (int i = 0; i < K; i++)
    OK(aclrtMallocHost(&p[i], SZ));
  for (int i = 0; i < K; i++)
    OK(aclrtFreeHost(p[i]));
  OK(aclrtSynchronizeDevice()); /* the deferred releases ran */
  for (int i = 0; i < K; i++) {
    q[i] = malloc(SZ);
    memset(q[i], i, SZ);
  }
  for (int i = 1; i < K; i++)
    OK(aclrtMemcpy(q[i], SZ, q[0], SZ, ACL_MEMCPY_HOST_TO_HOST));
  for (int i = 0; i < K; i++)
    free(q[i]);
}

/* A plain (not pinned) host buffer makes the async copy synchronous. */
SCENARIO(acl_plain_host_copy_is_synchronous, CLEAN) {
  setup();
  static char plain[N];
  OK(aclrtMemcpyAsync(dev, N, plain, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  plain[0] = 5; /* the call returned after the copy */
  OK(aclrtMemset(dev, N, 0, N));
}

SCENARIO(acl_free_after_synchronize, CLEAN) {
  setup();
  void *blk = NULL;
  OK(aclrtMalloc(&blk, N, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemsetAsync(blk, N, 0, N, s1));
  OK(aclrtMemcpyAsync(host2, N, blk, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtFree(blk));
  OK(aclrtMalloc(&blk, N, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemsetAsync(blk, N, 0, N, s2));
  OK(aclrtSynchronizeStream(s2));
  OK(aclrtFree(blk));
}

/* A notify handoff: the record comes after the wait was enqueued, on a
 * stream that is held for a while (the deadlock search runs meanwhile and
 * must find nothing); the wait orders the copy after the upload. */
SCENARIO(acl_notify_orders, CLEAN) {
  setup();
  aclrtNotify n;
  OK(aclrtCreateNotify(&n, 0));
  OK(aclrtWaitAndResetNotify(n, s2, 0));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtRecordNotify(n, s1));
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, open_gate_later, NULL) == 0);
  OK(aclrtSynchronizeStream(s2));
  pthread_join(t, NULL);
  EXPECT(((unsigned char *)host2)[11] == 1);
  OK(aclrtDestroyNotify(n));
}

/* A legacy SYNC event recorded after the wait was enqueued: the wait binds
 * to it when it runs. */
SCENARIO(acl_legacy_wait_orders, CLEAN) {
  setup();
  aclrtEvent l;
  OK(aclrtCreateEventWithFlag(&l, ACL_EVENT_SYNC));
  OK(aclrtStreamWaitEvent(s2, l));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtRecordEvent(l, s1));
  OK(aclrtSynchronizeStream(s2));
  EXPECT(((unsigned char *)host2)[9] == 1);
}

/* ------------------------------------- callbacks on a subscribed thread */

/* A thread that serves the callbacks of the streams it is subscribed to
 * (aclrtSubscribeHostFunc / aclrtSubscribeReport), as CANN's callback
 * samples do: it loops on aclrtProcessHostFunc or aclrtProcessReport. */
static atomic_int cb_stop;
static int cb_report; /* 1: aclrtProcessReport, 0: aclrtProcessHostFunc */
static void *cb_thread(void *p) {
  (void)p;
  OK(aclrtSetDevice(0));
  while (!atomic_load(&cb_stop))
    (void)(cb_report ? aclrtProcessReport(20) : aclrtProcessHostFunc(20));
  return NULL;
}

/* The callback reads and writes the word the upload before it wrote (as
 * host code: synchronous copies on the subscribed thread). */
static uint32_t cb_word;
static void cb_touch(void *p) {
  (void)p;
  OK(aclrtMemcpy(&cb_word, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST));
  cb_word += 1;
  OK(aclrtMemcpy(dev, 4, &cb_word, 4, ACL_MEMCPY_HOST_TO_DEVICE));
}

/* Upload, then the callback on the same stream, then (racy) a fill of the
 * same word on another stream that nothing orders after the callback. */
static void subscribed_callback(int report, bool racy) {
  setup();
  pthread_t t;
  cb_report = report;
  EXPECT(pthread_create(&t, NULL, cb_thread, NULL) == 0);
  if (report)
    OK(aclrtSubscribeReport((uint64_t)t, s1));
  else
    OK(aclrtSubscribeHostFunc((uint64_t)t, s1));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  aclrtEvent up;
  OK(aclrtCreateEventWithFlag(&up, ACL_EVENT_SYNC));
  OK(aclrtRecordEvent(up, s1)); /* the fill below is after the upload */
  if (report)
    OK(aclrtLaunchCallback(cb_touch, NULL, ACL_CALLBACK_BLOCK, s1));
  else
    OK(aclrtLaunchHostFunc(s1, cb_touch, NULL));
  if (racy) {
    OK(aclrtStreamWaitEvent(s2, up));
    OK(aclrtMemsetAsync(dev, N, 7, 4, s2));
  }
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtSynchronizeStream(s2));
  if (report)
    OK(aclrtUnSubscribeReport((uint64_t)t, s1));
  else
    OK(aclrtUnSubscribeHostFunc((uint64_t)t, s1));
  atomic_store(&cb_stop, 1);
  pthread_join(t, NULL);
  /* the stream waited for the callback: the host sees its write */
  uint32_t w = 0;
  OK(aclrtMemcpy(&w, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST));
  if (!racy)
    EXPECT(w == 0x01010102u);
}

/* Was reported as a data race: the subscribed thread's callback was not
 * ordered after the upload before it on its stream (issue 24). */
SCENARIO(acl_subscribed_host_func_orders, CLEAN) { subscribed_callback(0, false); }
SCENARIO(acl_subscribed_callback_orders, CLEAN) { subscribed_callback(1, false); }
/* The callback and a fill on another stream that waits for nothing. */
SCENARIO(acl_subscribed_host_func_races, "unsynchronized host access") {
  subscribed_callback(0, true);
}
SCENARIO(acl_subscribed_callback_races, "unsynchronized host access") {
  subscribed_callback(1, true);
}

/* ------------------------------------ every way of observing completion */

/* A fill on s1 (held by a gate) writes a block; the host polls one of
 * ACL's ways of learning it is complete until it says so, then frees the
 * block: clean.  (aclrtQueryEventStatus, aclrtQueryEvent and
 * aclrtQueryEventWaitStatus were reported as use after free, issue 24:
 * their last "complete" came from a call that ordered nothing.) */
enum {
  AOBS_QUERY_EVENT_STATUS,
  AOBS_QUERY_EVENT,
  AOBS_QUERY_EVENT_WAIT_STATUS,
  AOBS_STREAM_QUERY,
  AOBS_SYNC_STREAM,
  AOBS_SYNC_STREAM_TIMEOUT,
  AOBS_SYNC_EVENT,
  AOBS_SYNC_EVENT_TIMEOUT,
};
static int acl_observe(int how, aclrtEvent e) {
  aclrtEventRecordedStatus rs;
  aclrtEventStatus es;
  aclrtEventWaitStatus ws;
  aclrtStreamStatus ss;
  aclError r;
  switch (how) {
  case AOBS_QUERY_EVENT_STATUS:
    OK(aclrtQueryEventStatus(e, &rs));
    return rs == ACL_EVENT_RECORDED_STATUS_COMPLETE;
  case AOBS_QUERY_EVENT: /* (deprecated, still offered) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(aclrtQueryEvent(e, &es));
#pragma GCC diagnostic pop
    return es == ACL_EVENT_STATUS_COMPLETE;
  case AOBS_QUERY_EVENT_WAIT_STATUS:
    OK(aclrtQueryEventWaitStatus(e, &ws));
    return ws == ACL_EVENT_WAIT_STATUS_COMPLETE;
  case AOBS_STREAM_QUERY:
    OK(aclrtStreamQuery(s1, &ss));
    return ss == ACL_STREAM_STATUS_COMPLETE;
  case AOBS_SYNC_STREAM:
    OK(aclrtSynchronizeStream(s1));
    return 1;
  case AOBS_SYNC_STREAM_TIMEOUT:
    r = aclrtSynchronizeStreamWithTimeout(s1, 1);
    EXPECT(r == ACL_SUCCESS || r == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    return r == ACL_SUCCESS;
  case AOBS_SYNC_EVENT:
    OK(aclrtSynchronizeEvent(e));
    return 1;
  default:
    r = aclrtSynchronizeEventWithTimeout(e, 1);
    EXPECT(r == ACL_SUCCESS || r == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    return r == ACL_SUCCESS;
  }
}
static void acl_free_after(int how) {
  setup();
  void *blk = NULL;
  OK(aclrtMalloc(&blk, N, ACL_MEM_MALLOC_HUGE_FIRST));
  aclrtEvent e;
  OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemsetAsync(blk, N, 4, N, s1));
  OK(aclrtRecordEvent(e, s1));
  OK(aclrtStreamWaitEvent(s2, e)); /* (what the wait status reports) */
  if (how == AOBS_QUERY_EVENT_STATUS || how == AOBS_QUERY_EVENT_WAIT_STATUS)
    EXPECT(!acl_observe(how, e)); /* one "not ready" first */
  gate_open();
  for (int n = 0; !acl_observe(how, e); n++) {
    EXPECT(n < 20000);
    sleep_ms_(1);
  }
  OK(aclrtFree(blk));
  OK(aclrtSynchronizeDevice());
}
SCENARIO(acl_free_after_query_event_status, CLEAN) {
  acl_free_after(AOBS_QUERY_EVENT_STATUS);
}
SCENARIO(acl_free_after_query_event, CLEAN) { acl_free_after(AOBS_QUERY_EVENT); }
SCENARIO(acl_free_after_query_event_wait_status, CLEAN) {
  acl_free_after(AOBS_QUERY_EVENT_WAIT_STATUS);
}
SCENARIO(acl_free_after_stream_query, CLEAN) { acl_free_after(AOBS_STREAM_QUERY); }
SCENARIO(acl_free_after_sync_stream, CLEAN) { acl_free_after(AOBS_SYNC_STREAM); }
SCENARIO(acl_free_after_sync_stream_timeout, CLEAN) {
  acl_free_after(AOBS_SYNC_STREAM_TIMEOUT);
}
SCENARIO(acl_free_after_sync_event, CLEAN) { acl_free_after(AOBS_SYNC_EVENT); }
SCENARIO(acl_free_after_sync_event_timeout, CLEAN) {
  acl_free_after(AOBS_SYNC_EVENT_TIMEOUT);
}

/* The layer's own look at the event (a default legacy event must have been
 * recorded before a wait) is not the program observing it: the host's
 * later fill is not ordered after the fill on s1, however long ago that
 * completed (it would be hidden if the look ordered the host). */
SCENARIO(acl_stream_wait_enqueue_orders_nothing, "unsynchronized host access") {
  setup();
  aclrtEvent e;
  OK(aclrtCreateEvent(&e));
  OK(aclrtMemsetAsync(dev, N, 4, N, s1));
  OK(aclrtRecordEvent(e, s1));
  sleep_ms_(50); /* complete by now: the race is one of order */
  OK(aclrtStreamWaitEvent(s2, e));
  OK(aclrtMemset(dev, N, 5, N));
  OK(aclrtSynchronizeDevice());
}

/* A legacy SYNC wait enqueued behind a queued reset of its event on the
 * same stream waits for the next record (it runs after the reset): the
 * download after it is ordered after the upload that the next record
 * covers.  Was a data race: the wait bound to the earlier record. */
SCENARIO(acl_wait_after_queued_reset_orders, CLEAN) {
  setup();
  aclrtEvent l;
  OK(aclrtCreateEventWithFlag(&l, ACL_EVENT_SYNC));
  OK(aclrtRecordEvent(l, s1));
  OK(aclrtSynchronizeEvent(l));
  OK(aclrtLaunchHostFunc(s2, gate_host_fn, NULL));
  OK(aclrtResetEvent(l, s2));
  OK(aclrtStreamWaitEvent(s2, l));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtRecordEvent(l, s1));
  gate_open();
  OK(aclrtSynchronizeStream(s2));
  EXPECT(((unsigned char *)host2)[3] == 1);
}

/* The other order: a wait enqueued before the reset passes on the record
 * it found, which does not cover the later upload: a data race. */
SCENARIO(acl_wait_before_reset_binds_earlier_record, "data race") {
  setup();
  aclrtEvent l;
  OK(aclrtCreateEventWithFlag(&l, ACL_EVENT_SYNC));
  OK(aclrtRecordEvent(l, s1));
  OK(aclrtSynchronizeEvent(l));
  OK(aclrtLaunchHostFunc(s2, gate_host_fn, NULL));
  OK(aclrtStreamWaitEvent(s2, l));
  OK(aclrtResetEvent(l, s2));
  OK(aclrtMemcpyAsync(host2, N, dev, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtRecordEvent(l, s1));
  gate_open();
  OK(aclrtSynchronizeDevice());
}

/* ------------------------------------------------- virtual memory */

#define MB2 ((size_t)2 << 20)
static void *va;
static aclrtDrvMemHandle vh;

/* A reserved range with 2 MiB of physical memory mapped at its start. */
static void vmm_setup(void) {
  setup();
  aclrtPhysicalMemProp p;
  memset(&p, 0, sizeof p);
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.memAttr = ACL_HBM_MEM_NORMAL;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  OK(aclrtReserveMemAddress(&va, MB2, 0, NULL, 0));
  OK(aclrtMallocPhysical(&vh, MB2, &p, 0));
  OK(aclrtMapMem(va, MB2, 0, vh, 0));
}

/* CANN's memory/7 and 8: the range is unmapped (and its physical memory
 * freed) while a kernel queued on it still writes: a use after free of the
 * mapping.  Was clean: mappings were not blocks. */
SCENARIO(acl_unmap_while_kernel_writes, "use after free") {
  vmm_setup();
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemsetAsync(va, MB2, 7, MB2, s1));
  OK(aclrtUnmapMem(va));
  OK(aclrtFreePhysical(vh));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtReleaseMemAddress(va));
}

/* The same, with the kernel done before the unmap (the stream was
 * synchronized): clean. */
SCENARIO(acl_unmap_after_synchronize, CLEAN) {
  vmm_setup();
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemsetAsync(va, MB2, 7, MB2, s1));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtUnmapMem(va));
  OK(aclrtFreePhysical(vh));
  OK(aclrtReleaseMemAddress(va));
}

/* A remap is a new life: work on the new mapping, enqueued after the map,
 * is not taken for the old one's (whose last write no synchronize after
 * it covered: the host learned of it only through the kernel that wrote
 * it, on another stream than the new work). */
SCENARIO(acl_remap_starts_a_new_life, CLEAN) {
  vmm_setup();
  OK(aclrtMemsetAsync(va, MB2, 7, MB2, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtUnmapMem(va));
  OK(aclrtMapMem(va, MB2, 0, vh, 0));
  OK(aclrtMemsetAsync(va, MB2, 8, MB2, s2));
  OK(aclrtMemcpyAsync(host2, N, va, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeStream(s2));
  EXPECT(((unsigned char *)host2)[5] == 8);
  OK(aclrtUnmapMem(va));
  OK(aclrtFreePhysical(vh));
  OK(aclrtReleaseMemAddress(va));
}

/* A kernel of the old mapping still queued when the range is mapped again
 * writes the new mapping's bytes: a use after free (of the old life, and
 * not ordered after the new one's start). */
SCENARIO(acl_old_kernel_after_remap, "use after free") {
  vmm_setup();
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemsetAsync(va, MB2, 7, MB2, s1));
  OK(aclrtUnmapMem(va));
  OK(aclrtMapMem(va, MB2, 0, vh, 0));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtUnmapMem(va));
  OK(aclrtFreePhysical(vh));
  OK(aclrtReleaseMemAddress(va));
}

/* ------------------------------------------- imported IPC memory */

/* An exporter in another process (forked before this one starts evrt): it
 * allocates a page-aligned block, exports it without the pid check,
 * writes the key to kfd and waits for a byte on wfd.  CANN's memory/10 and
 * 11 import in a second process too: an import in the exporting process is
 * refused (507022). */
static pid_t exporter;
static int exporter_wake;
static char ipc_key[65];

static void start_exporter(void) {
  int kp[2], wp[2];
  EXPECT(pipe(kp) == 0 && pipe(wp) == 0);
  fflush(NULL);
  exporter = fork();
  EXPECT(exporter >= 0);
  if (exporter == 0) {
    close(kp[0]);
    close(wp[1]);
    void *m = NULL;
    char k[65] = {0};
    if (aclInit(NULL) || aclrtSetDevice(0) ||
        aclrtMalloc(&m, 2 * N, ACL_MEM_MALLOC_HUGE_FIRST) ||
        aclrtMemset(m, 2 * N, 3, 2 * N) ||
        aclrtIpcMemGetExportKey(m, 2 * N, k, sizeof k,
                                ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION))
      _exit(9);
    if (write(kp[1], k, sizeof k) != (ssize_t)sizeof k)
      _exit(9);
    char c;
    (void)read(wp[0], &c, 1);
    _exit(0); /* (no exit report: its checker saw nothing of ours) */
  }
  close(kp[1]);
  close(wp[0]);
  exporter_wake = wp[1];
  size_t got = 0;
  while (got < sizeof ipc_key) {
    ssize_t r = read(kp[0], ipc_key + got, sizeof ipc_key - got);
    EXPECT(r > 0);
    got += (size_t)r;
  }
  close(kp[0]);
}

static void stop_exporter(void) {
  EXPECT(write(exporter_wake, "x", 1) == 1);
  int st = 0;
  EXPECT(waitpid(exporter, &st, 0) == exporter);
  EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* memory/10 and 11: the importer closes the memory while a copy queued on
 * it still reads it: a use after free of the import.  Was clean: the close
 * was deferred behind the queued work and the import was no block. */
SCENARIO(acl_ipc_close_while_copy_reads, "use after free") {
  start_exporter();
  setup();
  void *imp = NULL;
  OK(aclrtIpcMemImportByKey(&imp, ipc_key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(host2, N, imp, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  OK(aclrtIpcMemClose(ipc_key));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  stop_exporter();
}

/* The copy is done before the close: clean. */
SCENARIO(acl_ipc_close_after_synchronize, CLEAN) {
  start_exporter();
  setup();
  void *imp = NULL;
  OK(aclrtIpcMemImportByKey(&imp, ipc_key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(host2, N, imp, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  EXPECT(((unsigned char *)host2)[9] == 3);
  OK(aclrtIpcMemClose(ipc_key));
  stop_exporter();
}

/* -------------------------------------------------- memory pools */

static aclrtMemPool pool_new(void) {
  aclrtMemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  aclrtMemPool pool = NULL;
  OK(aclrtMemPoolCreate(&pool, &p));
  return pool;
}

/* A stream-ordered free on s1, and a copy of the block on s2 that nothing
 * orders before the free: a use after free (the free happens at its place
 * in s1's order, whenever the copy runs).  Was clean: pool blocks were not
 * blocks. */
SCENARIO(acl_pool_free_then_other_stream_reads, "use after free") {
  setup();
  aclrtMemPool pool = pool_new();
  void *p = NULL;
  OK(aclrtMemPoolMallocAsync(&p, N, pool, s1));
  OK(aclrtMemsetAsync(p, N, 4, N, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemPoolFreeAsync(p, s1));
  OK(aclrtMemcpyAsync(host2, N, p, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeStream(s2));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtMemPoolDestroy(pool));
}

/* The copy on s2 is ordered before the free by an event: clean. */
SCENARIO(acl_pool_free_after_event, CLEAN) {
  setup();
  aclrtMemPool pool = pool_new();
  aclrtEvent e1, e2;
  OK(aclrtCreateEventExWithFlag(&e1, ACL_EVENT_SYNC));
  OK(aclrtCreateEventExWithFlag(&e2, ACL_EVENT_SYNC));
  void *p = NULL;
  OK(aclrtMemPoolMallocAsync(&p, N, pool, s1));
  OK(aclrtMemsetAsync(p, N, 4, N, s1));
  OK(aclrtRecordEvent(e1, s1));
  OK(aclrtStreamWaitEvent(s2, e1));
  OK(aclrtMemcpyAsync(host2, N, p, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtRecordEvent(e2, s2));
  OK(aclrtStreamWaitEvent(s1, e2));
  OK(aclrtMemPoolFreeAsync(p, s1));
  OK(aclrtSynchronizeDevice());
  EXPECT(((unsigned char *)host2)[1] == 4);
  OK(aclrtMemPoolDestroy(pool));
}

/* A block freed on s1 and handed again on s1 before its free ran (CANN's
 * reuse within a stream): the new life's work follows the old one's in
 * stream order: clean.  A host-side allocation at the malloc call would
 * take the old life's queued copy for work of a previous life. */
SCENARIO(acl_pool_reuse_on_freeing_stream, CLEAN) {
  setup();
  aclrtMemPool pool = pool_new();
  void *p = NULL, *q = NULL;
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtMemPoolMallocAsync(&p, N, pool, s1));
  OK(aclrtMemcpyAsync(p, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1));
  OK(aclrtMemPoolFreeAsync(p, s1));
  OK(aclrtMemPoolMallocAsync(&q, N, pool, s1));
  EXPECT(q == p); /* handed again while its free is still queued */
  OK(aclrtMemsetAsync(q, N, 6, N, s1));
  OK(aclrtMemcpyAsync(host2, N, q, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  gate_open();
  OK(aclrtSynchronizeStream(s1));
  EXPECT(((unsigned char *)host2)[2] == 6);
  OK(aclrtMemPoolFreeAsync(q, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtMemPoolDestroy(pool));
}

/* The old life's copy on s2 still queued (nothing orders it before the
 * free on s1) when the block is handed again on s1: a use after free
 * (the new life writes nothing here: a write of it that the copy met
 * would be named as a data race instead). */
SCENARIO(acl_pool_reuse_races_old_copy, "use after free") {
  setup();
  aclrtMemPool pool = pool_new();
  void *p = NULL, *q = NULL;
  OK(aclrtMemPoolMallocAsync(&p, N, pool, s1));
  OK(aclrtMemsetAsync(p, N, 4, N, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtLaunchHostFunc(s1, gate_host_fn, NULL));
  OK(aclrtLaunchHostFunc(s2, gate_host_fn, NULL));
  OK(aclrtMemcpyAsync(host2, N, p, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtMemPoolFreeAsync(p, s1));
  OK(aclrtMemPoolMallocAsync(&q, N, pool, s1));
  EXPECT(q == p);
  gate_open();
  OK(aclrtSynchronizeDevice());
  OK(aclrtMemPoolFreeAsync(q, s1));
  OK(aclrtSynchronizeStream(s1));
  OK(aclrtMemPoolDestroy(pool));
}

/* A block whose free task has run is handed to another stream (CANN's
 * reuse across streams): its old life's work all ran before that task, so
 * the new life on s2 is clean.  The host learns that the free ran only
 * from the pool's statistics, which order nothing for the checker: the
 * new life starts at the malloc call. */
SCENARIO(acl_pool_reuse_by_other_stream_after_free_ran, CLEAN) {
  setup();
  aclrtMemPool pool = pool_new();
  uint64_t keep = (uint64_t)1 << 30, used = 1;
  OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &keep));
  void *p = NULL, *q = NULL;
  OK(aclrtMemPoolMallocAsync(&p, N, pool, s1));
  OK(aclrtMemsetAsync(p, N, 4, N, s1));
  OK(aclrtMemPoolFreeAsync(p, s1));
  for (int i = 0; i < 10000 && used; i++) {
    OK(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &used));
    if (used)
      sleep_ms_(1);
  }
  EXPECT(used == 0);
  OK(aclrtMemPoolMallocAsync(&q, N, pool, s2));
  EXPECT(q == p);
  OK(aclrtMemsetAsync(q, N, 6, N, s2));
  OK(aclrtMemcpyAsync(host2, N, q, N, ACL_MEMCPY_DEVICE_TO_HOST, s2));
  OK(aclrtSynchronizeStream(s2));
  EXPECT(((unsigned char *)host2)[3] == 6);
  OK(aclrtMemPoolFreeAsync(q, s2));
  OK(aclrtSynchronizeDevice());
  OK(aclrtMemPoolDestroy(pool));
}

/* aclrtFreePhysical of a mapped allocation does not end the mapping (CANN
 * frees it at the unmap): work on the mapping after it, then the unmap
 * after a synchronize, is clean. */
SCENARIO(acl_free_physical_keeps_the_mapping, CLEAN) {
  vmm_setup();
  OK(aclrtFreePhysical(vh));
  OK(aclrtMemsetAsync(va, MB2, 7, MB2, s1));
  OK(aclrtMemcpyAsync(host2, N, va, N, ACL_MEMCPY_DEVICE_TO_HOST, s1));
  OK(aclrtSynchronizeStream(s1));
  EXPECT(((unsigned char *)host2)[4] == 7);
  OK(aclrtUnmapMem(va));
  OK(aclrtReleaseMemAddress(va));
}
