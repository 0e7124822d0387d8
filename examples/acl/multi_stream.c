/* Two streams synchronised by an event (the pattern of the CANN sample
 * stream/2_multi_stream): stream 1 runs a long task and records; stream 2
 * waits for the event, then runs its own task; the event is reset on
 * stream 2 and reused. */
#include "sample_common.h"

static void double_task(void *arg) { *(unsigned *)arg *= 2; }

int main(void) {
  aclrtStream s1, s2;
  aclrtEvent event;
  unsigned *x;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtCreateStream(&s1));
  CHECK_ERROR(aclrtCreateStream(&s2));
  CHECK_ERROR(aclrtCreateEvent(&event));
  CHECK_ERROR(aclrtMalloc((void **)&x, sizeof *x, ACL_MEM_MALLOC_HUGE_FIRST));
  for (int round = 1; round <= 3; round++) {
    CHECK_ERROR(aclrtMemset(x, sizeof *x, 0, sizeof *x));
    CHECK_ERROR(LongOP(s1, x));                 /* x = 1 on stream 1 */
    CHECK_ERROR(aclrtRecordEvent(event, s1));
    CHECK_ERROR(aclrtStreamWaitEvent(s2, event)); /* stream 2 waits */
    CHECK_ERROR(aclrtLaunchHostFunc(s2, double_task, x)); /* x = 2 */
    CHECK_ERROR(aclrtResetEvent(event, s2));
    CHECK_ERROR(aclrtSynchronizeStream(s2));
    INFO_LOG("Round %d: stream 2 saw stream 1's result, x = %u.", round, *x);
  }
  CHECK_ERROR(aclrtFree(x));
  CHECK_ERROR(aclrtDestroyEvent(event));
  CHECK_ERROR(aclrtDestroyStream(s1));
  CHECK_ERROR(aclrtDestroyStream(s2));
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Resource cleanup completed.");
  return 0;
}
