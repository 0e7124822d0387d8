/* System, version and device queries (the flow of the CANN runtime samples
 * 0_quickstart/2_system_info and device/1_device_multi_thread): what the
 * virtual device reports, and the error code of a bad query.  Memory sizes
 * vary with the host and are not printed. */
#include "sample_common.h"

#include <string.h>

int main(void) {
  char pkg[] = "runtime";
  char version[ACL_PKG_VERSION_MAX_SIZE] = {0};
  int32_t versionNum = 0;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclsysGetVersionStr(pkg, version));
  CHECK_ERROR(aclsysGetVersionNum(pkg, &versionNum));
  INFO_LOG("Runtime version: %s (%d)", version, versionNum);
  INFO_LOG("SoC name: %s", aclrtGetSocName());
  int32_t compatible = -1;
  CHECK_ERROR(aclrtCheckArchCompatibility(aclrtGetSocName(), &compatible));
  INFO_LOG("Compatible with its own SoC: %d", compatible);

  const aclCannAttr *attrs = NULL;
  size_t numAttrs = 0;
  CHECK_ERROR(aclGetCannAttributeList(&attrs, &numAttrs));
  for (size_t i = 0; i < numAttrs; i++) {
    int32_t value = 0;
    CHECK_ERROR(aclGetCannAttribute(attrs[i], &value));
    INFO_LOG("CANN attribute %d: %d", (int)attrs[i], value);
  }

  uint32_t count = 0;
  CHECK_ERROR(aclrtGetDeviceCount(&count));
  INFO_LOG("Device count at least 1: %s", count >= 1 ? "yes" : "no");
  int32_t deviceId = 0;
  CHECK_ERROR(aclrtSetDevice(deviceId));
  static const struct {
    aclrtDevAttr attr;
    const char *name;
  } infos[] = {
      {ACL_DEV_ATTR_AICPU_CORE_NUM, "AI CPU cores"},
      {ACL_DEV_ATTR_AICORE_CORE_NUM, "AI cores"},
      {ACL_DEV_ATTR_VECTOR_CORE_NUM, "vector cores"},
      {ACL_DEV_ATTR_L2_CACHE_SIZE, "L2 cache bytes"},
      {ACL_DEV_ATTR_NPU_ARCH, "NPU arch"},
  };
  for (size_t i = 0; i < sizeof infos / sizeof infos[0]; i++) {
    int64_t value = 0;
    CHECK_ERROR(aclrtGetDeviceInfo(deviceId, infos[i].attr, &value));
    INFO_LOG("Device %d %s: %lld", deviceId, infos[i].name, (long long)value);
  }
  aclrtDeviceStatus status;
  CHECK_ERROR(aclrtQueryDeviceStatus(deviceId, &status));
  INFO_LOG("Device %d status: %d (0 is normal)", deviceId, (int)status);
  aclrtUtilizationInfo util;
  memset(&util, 0, sizeof util);
  CHECK_ERROR(aclrtGetDeviceUtilizationRate(deviceId, &util));
  INFO_LOG("Utilization: cube %d%%, vector %d%%, AI CPU %d%%, memory %d",
           util.cubeUtilization, util.vectorUtilization, util.aicpuUtilization,
           util.memoryUtilization);
  int32_t least = 0, greatest = 0;
  CHECK_ERROR(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
  INFO_LOG("Stream priorities: least %d, greatest %d", least, greatest);
  char bus[16];
  CHECK_ERROR(aclrtDeviceGetPCIBusId(deviceId, bus, (int32_t)sizeof bus));
  INFO_LOG("PCI bus id: %s", bus);

  uint32_t cubes = 0;
  CHECK_ERROR(aclrtSetDeviceResLimit(deviceId, ACL_RT_DEV_RES_CUBE_CORE, 8));
  CHECK_ERROR(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &cubes));
  INFO_LOG("Cube cores for this thread after a limit of 8: %u", cubes);
  CHECK_ERROR(aclrtResetDeviceResLimit(deviceId));
  CHECK_ERROR(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &cubes));
  INFO_LOG("Cube cores after the reset: %u", cubes);

  int64_t value = 0;
  aclError ret = aclrtGetDeviceInfo(4096, ACL_DEV_ATTR_AICORE_CORE_NUM, &value);
  INFO_LOG("Querying device 4096 (out of range) returns %d", ret);
  ret = aclrtGetDeviceInfo(deviceId, (aclrtDevAttr)12345, &value);
  INFO_LOG("Querying an unknown attribute returns %d", ret);
  (void)aclGetRecentErrMsg();

  CHECK_ERROR(aclrtResetDevice(deviceId));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Done.");
  return 0;
}
