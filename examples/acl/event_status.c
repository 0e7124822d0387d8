/* Event status after create, after record and after synchronize (the flow
 * of the CANN runtime sample event/0_event_status, kernel replaced by a
 * host task). */
#include "sample_common.h"

int main(void) {
  int32_t deviceId = 0;
  unsigned num = 0;
  unsigned *numDevice = NULL;
  size_t size = sizeof num;
  aclrtContext context;
  aclrtStream stream = NULL;
  aclrtEvent event;
  aclrtEventRecordedStatus eventStatus;
  aclInit(NULL);
  CHECK_ERROR(aclrtSetDevice(deviceId));
  CHECK_ERROR(aclrtCreateContext(&context, deviceId));
  CHECK_ERROR(aclrtCreateStream(&stream));
  CHECK_ERROR(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
  CHECK_ERROR(aclrtCreateEvent(&event));
  CHECK_ERROR(aclrtQueryEventStatus(event, &eventStatus));
  INFO_LOG("After create event, current event status is %d.", eventStatus);
  CHECK_ERROR(aclrtMalloc((void **)&numDevice, size, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ERROR(aclrtMemcpy(numDevice, size, &num, size, ACL_MEMCPY_HOST_TO_DEVICE));
  INFO_LOG("Applied resource successfully, begin assigning task.");
  INFO_LOG("Begin a long task.");
  CHECK_ERROR(LongOP(stream, numDevice));
  CHECK_ERROR(aclrtRecordEvent(event, stream));
  CHECK_ERROR(aclrtQueryEventStatus(event, &eventStatus));
  INFO_LOG("0 is incompleted, 1 is completed.");
  INFO_LOG("After record but before synchronize, current event status is %d.",
           eventStatus);
  CHECK_ERROR(aclrtSynchronizeEvent(event));
  CHECK_ERROR(aclrtQueryEventStatus(event, &eventStatus));
  INFO_LOG("After synchronize, current event status is %d.", eventStatus);
  CHECK_ERROR(aclrtMemcpy(&num, size, numDevice, size, ACL_MEMCPY_DEVICE_TO_HOST));
  INFO_LOG("The answer is %u.", num);
  CHECK_ERROR(aclrtFree(numDevice));
  CHECK_ERROR(aclrtDestroyEvent(event));
  CHECK_ERROR(aclrtDestroyStreamForce(stream));
  CHECK_ERROR(aclrtDestroyContext(context));
  CHECK_ERROR(aclrtResetDeviceForce(deviceId));
  aclFinalize();
  INFO_LOG("Resource cleanup completed.");
  return 0;
}
