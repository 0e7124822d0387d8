/* Failing tasks, stop-on-failure, exception callbacks, notifies and values
 * (the flows of the CANN samples stream/1_stream_with_failure_mode,
 * callback/2_callback_exception, notify/2_reusable_stream_handoff and
 * memory/9_multistream_sync_memory).  ACL has no call that launches a
 * kernel, so the "kernels" are host tasks; the failing one returns its
 * error code through evrt's native evrt_launch_host_func_status (an ACL
 * stream is an evrt stream); the long one polls evrt_host_func_cancelled
 * so that a stop or an abort can end it. */
#include "sample_common.h"

#include <evrt.h>

#include <stdint.h>
#include <string.h>

static void easy_task(void *arg) { *(uint32_t *)arg += 1; }

static int32_t error_task(void *arg) {
  (void)arg;
  return ACL_ERROR_RT_VECTOR_CORE_EXCEPTION; /* 507035, a kernel's trap */
}

static void on_exception(aclrtExceptionInfo *info) {
  INFO_LOG("Exception callback: task %u of stream %u failed with %u.",
           aclrtGetTaskIdFromExceptionInfo(info),
           aclrtGetStreamIdFromExceptionInfo(info),
           aclrtGetErrorCodeFromExceptionInfo(info));
}

/* EasyOP, ErrorOP, EasyOP on a stream; what the synchronize says and what
 * the counter reads after. */
static void three_tasks(aclrtStream s, uint32_t *x) {
  *x = 0;
  CHECK_ERROR(aclrtLaunchHostFunc(s, easy_task, x));
  if (evrt_launch_host_func_status((evrt_stream_t)s, error_task, NULL))
    exit(1);
  CHECK_ERROR(aclrtLaunchHostFunc(s, easy_task, x));
  aclError r = aclrtSynchronizeStream(s);
  INFO_LOG("aclrtSynchronizeStream returned %d, the counter is %u.", r, *x);
  r = aclrtSynchronizeStream(s);
  INFO_LOG("The next synchronize returned %d: the error was reported once.",
           r);
}

/* A long kernel (seconds on a device): it polls evrt_host_func_cancelled,
 * so that aclrtStreamStop and aclrtStreamAbort kill it as a device kills a
 * running kernel; without them it would add 1 after 10 s. */
static void long_task(void *arg) {
  for (int ms = 0; ms < 10000; ms++) {
    if (evrt_host_func_cancelled())
      return;
    struct timespec ms1 = {0, 1000000L};
    nanosleep(&ms1, NULL);
  }
  *(uint32_t *)arg += 1;
}

/* stream/1's last part: stop keeps the queue, abort discards it. */
static void stop_and_abort(void) {
  aclrtStream s;
  uint32_t x = 0;
  CHECK_ERROR(aclrtCreateStream(&s));
  CHECK_ERROR(aclrtLaunchHostFunc(s, long_task, &x));
  CHECK_ERROR(aclrtLaunchHostFunc(s, easy_task, &x));
  CHECK_ERROR(aclrtStreamStop(s));
  aclError r = aclrtSynchronizeStream(s);
  INFO_LOG("After aclrtStreamStop the synchronize returned %d, the counter "
           "is %u.", r, x);
  CHECK_ERROR(aclrtLaunchHostFunc(s, long_task, &x));
  CHECK_ERROR(aclrtLaunchHostFunc(s, easy_task, &x));
  CHECK_ERROR(aclrtStreamAbort(s));
  r = aclrtSynchronizeStream(s);
  INFO_LOG("After aclrtStreamAbort the synchronize returned %d, the counter "
           "is %u.", r, x);
  CHECK_ERROR(aclrtDestroyStream(s));
}

static void failures(void) {
  aclrtStream s;
  uint32_t x;
  CHECK_ERROR(aclrtCreateStream(&s));
  CHECK_ERROR(aclrtExceptionInfoCallbackRegister(on_exception));
  INFO_LOG("Without failure mode:");
  three_tasks(s, &x);
  CHECK_ERROR(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
  INFO_LOG("With ACL_STOP_ON_FAILURE:");
  three_tasks(s, &x);
  CHECK_ERROR(aclrtExceptionInfoCallbackUnregister(on_exception));
  CHECK_ERROR(aclrtDestroyStream(s));
}

/* A producer stream hands three slots to a consumer stream through
 * notifies, three rounds, the notifies batch-reset after each. */
static void notifies(void) {
  enum { SLOTS = 3, N = 32 };
  aclrtStream prod, cons;
  aclrtNotify n[SLOTS];
  uint32_t *in, *out, *dev[SLOTS];
  CHECK_ERROR(aclrtCreateStream(&prod));
  CHECK_ERROR(aclrtCreateStream(&cons));
  CHECK_ERROR(aclrtMallocHost((void **)&in, SLOTS * N * sizeof *in));
  CHECK_ERROR(aclrtMallocHost((void **)&out, SLOTS * N * sizeof *out));
  for (int k = 0; k < SLOTS; k++) {
    CHECK_ERROR(aclrtCreateNotify(&n[k], ACL_NOTIFY_DEFAULT));
    CHECK_ERROR(aclrtMalloc((void **)&dev[k], N * sizeof *in,
                            ACL_MEM_MALLOC_HUGE_FIRST));
  }
  for (uint32_t round = 1; round <= 3; round++) {
    for (int i = 0; i < SLOTS * N; i++) {
      in[i] = round * 10000 + (uint32_t)i;
      out[i] = 0;
    }
    for (int k = 0; k < SLOTS; k++) {
      CHECK_ERROR(aclrtMemcpyAsync(dev[k], N * sizeof *in, in + k * N,
                                   N * sizeof *in, ACL_MEMCPY_HOST_TO_DEVICE,
                                   prod));
      CHECK_ERROR(aclrtRecordNotify(n[k], prod));
      CHECK_ERROR(aclrtWaitAndResetNotify(n[k], cons, 0));
      CHECK_ERROR(aclrtMemcpyAsync(out + k * N, N * sizeof *in, dev[k],
                                   N * sizeof *in, ACL_MEMCPY_DEVICE_TO_HOST,
                                   cons));
    }
    CHECK_ERROR(aclrtSynchronizeStream(prod));
    CHECK_ERROR(aclrtSynchronizeStream(cons));
    INFO_LOG("Round %u: the consumer %s the producer's %d values.", round,
             memcmp(in, out, SLOTS * N * sizeof *in) ? "missed" : "got",
             SLOTS * N);
    CHECK_ERROR(aclrtNotifyBatchReset(n, SLOTS));
  }
  for (int k = 0; k < SLOTS; k++) {
    CHECK_ERROR(aclrtDestroyNotify(n[k]));
    CHECK_ERROR(aclrtFree(dev[k]));
  }
  CHECK_ERROR(aclrtFreeHost(in));
  CHECK_ERROR(aclrtFreeHost(out));
  CHECK_ERROR(aclrtDestroyStream(prod));
  CHECK_ERROR(aclrtDestroyStream(cons));
}

/* Stream A waits (parked, no thread held) until a word of device memory
 * reaches 123, which stream B writes after its own work. */
static void values(void) {
  aclrtStream a, b;
  uint64_t *flag;
  uint32_t x = 0;
  CHECK_ERROR(aclrtCreateStream(&a));
  CHECK_ERROR(aclrtCreateStream(&b));
  CHECK_ERROR(aclrtMalloc((void **)&flag, sizeof *flag,
                          ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ERROR(aclrtMemset(flag, sizeof *flag, 0, sizeof *flag));
  CHECK_ERROR(aclrtValueWait(flag, 123, ACL_STREAM_WAIT_VALUE_EQ, a));
  CHECK_ERROR(aclrtLaunchHostFunc(a, easy_task, &x));
  CHECK_ERROR(LongOP(b, &x));
  CHECK_ERROR(aclrtValueWrite(flag, 123, 0, b));
  CHECK_ERROR(aclrtSynchronizeStream(a));
  INFO_LOG("Stream A passed its wait after stream B wrote %llu; x = %u.",
           (unsigned long long)*flag, x);
  CHECK_ERROR(aclrtFree(flag));
  CHECK_ERROR(aclrtDestroyStream(a));
  CHECK_ERROR(aclrtDestroyStream(b));
}

int main(void) {
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  failures();
  stop_and_abort();
  notifies();
  values();
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Resource cleanup completed.");
  return 0;
}
