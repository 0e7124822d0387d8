/* Virtual and physical memory (the flow of the CANN runtime sample
 * memory/7_physical_memory_sharing_withpid, in one process): reserve an
 * address range, allocate physical memory, map it twice, change its access,
 * and export it to a shareable handle for another process. */
#include "sample_common.h"

#include <string.h>
#include <unistd.h>

int main(void) {
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  aclrtPhysicalMemProp prop;
  memset(&prop, 0, sizeof prop);
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran = 0;
  CHECK_ERROR(aclrtMemGetAllocationGranularity(
      &prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
  INFO_LOG("Allocation granularity: %zu bytes", gran);

  void *va = NULL;
  aclrtDrvMemHandle handle = NULL;
  CHECK_ERROR(aclrtReserveMemAddress(&va, 2 * gran, 0, NULL, 0));
  CHECK_ERROR(aclrtMallocPhysical(&handle, gran, &prop, 0));
  CHECK_ERROR(aclrtMapMem(va, gran, 0, handle, 0));
  CHECK_ERROR(aclrtMapMem((char *)va + gran, gran, 0, handle, 0));
  INFO_LOG("Reserved 2 granules and mapped one physical allocation at both");

  const char msg[] = "written through the first mapping";
  char seen[sizeof msg];
  CHECK_ERROR(aclrtMemcpy(va, sizeof msg, msg, sizeof msg,
                          ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ERROR(aclrtMemcpy(seen, sizeof seen, (char *)va + gran, sizeof seen,
                          ACL_MEMCPY_DEVICE_TO_HOST));
  INFO_LOG("Read through the second: \"%s\"", seen);

  aclrtMemAccessDesc desc;
  memset(&desc, 0, sizeof desc);
  desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
  desc.location = prop.location;
  CHECK_ERROR(aclrtMemSetAccess((char *)va + gran, gran, &desc, 1));
  uint64_t flags = 0;
  CHECK_ERROR(aclrtMemGetAccess((char *)va + gran, &desc.location, &flags));
  INFO_LOG("Access of the second mapping: %llu (1 is read-only)",
           (unsigned long long)flags);

  uint64_t shareable = 0;
  CHECK_ERROR(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                              ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
                                              &shareable));
  int32_t pid = 0;
  CHECK_ERROR(aclrtDeviceGetBareTgid(&pid));
  CHECK_ERROR(aclrtMemSetPidToShareableHandle(shareable, &pid, 1));
  INFO_LOG("Exported to a shareable handle (non-zero: %s), pid list set",
           shareable ? "yes" : "no");
  aclrtDrvMemHandle imported = NULL;
  aclError ret = aclrtMemImportFromShareableHandle(shareable, 0, &imported);
  INFO_LOG("Importing it in the exporting process returns %d", ret);
  ret = aclrtReleaseMemAddress(va);
  INFO_LOG("Releasing the range while mapped returns %d", ret);
  (void)aclGetRecentErrMsg();

  CHECK_ERROR(aclrtUnmapMem(va));
  CHECK_ERROR(aclrtUnmapMem((char *)va + gran));
  CHECK_ERROR(aclrtFreePhysical(handle));
  CHECK_ERROR(aclrtReleaseMemAddress(va));
  INFO_LOG("Unmapped, freed and released");
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Done.");
  return 0;
}
