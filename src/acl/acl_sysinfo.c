/*
 * acl_sysinfo.c - system, version and device queries: package versions,
 * CANN attributes, the SoC name and architecture check, device attributes,
 * capabilities, status, utilization, UUID, PCI bus id, id mappings,
 * aclrtGetErrorVerbose.  None of them touches a stream.
 *
 * What the virtual device is (docs/acl.md, "The virtual device"): every evrt
 * CPU device presents itself as an Ascend910B3, with the numbers of CANN's
 * own platform file for that SoC (hicann/runtime
 * src/platform/platform_config/cann/Ascend910B3.ini: 20 AI (cube) cores, 40
 * vector cores, 6 AI CPUs, 192 MiB L2, NpuArch 2201, bf16 and inf/nan
 * supported).  Its memory is the host's (sysinfo), because "device memory"
 * is host memory here.  The runtime package version is that of the CANN
 * runtime whose API evrt follows (9.1.0, hicann/runtime version.cmake).
 * UUIDs and PCI bus ids are fixed per device index.
 *
 * No lock is taken here: everything is constant or read from the OS.
 */
#include "acl_internal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#define SOC_NAME "Ascend910B3"
#define SOC_NPU_ARCH 2201
#define RUNTIME_VERSION "9.1.0"

const struct acl__soc acl__soc = {
    .name = SOC_NAME,
    .npu_arch = SOC_NPU_ARCH,
    .aicore = 20,
    .cube_core = 20,
    .vector_core = 40,
    .aicpu = 6,
    .l2_size = 201326592,
};

bool acl__device_ok(int64_t dev) {
  int n = 0;
  if (evrt_device_count(&n) != EVRT_SUCCESS)
    return false;
  return dev >= 0 && dev < n && dev < ACL__MAX_DEVICES;
}

aclError acl__bad_device(const char *fn, int64_t dev, aclError code) {
  int n = 0;
  evrt_device_count(&n);
  return acl__fail(code, fn, "device id %lld is out of range [0, %d)",
                   (long long)dev, n);
}

void acl__host_memory(size_t *free_bytes, size_t *total_bytes) {
  struct sysinfo si;
  if (sysinfo(&si) != 0) {
    *free_bytes = *total_bytes = 0;
    return;
  }
  *total_bytes = (size_t)si.totalram * si.mem_unit;
  *free_bytes = (size_t)(si.freeram + si.bufferram) * si.mem_unit;
}

/* The host link the virtual devices report: EVRT_ACL_HOST_LINK=pcie (the
 * default: a PCIe card with PCI bus ids) or hccs (a POD module off PCIe,
 * whose PCI bus id queries answer 207000 as CANN's do off PCIe).  Read once;
 * another value is warned about and taken as pcie. */
static bool host_link_pcie(void) {
  static atomic_int link; /* 0 unread, 1 pcie, 2 hccs; relaxed: idempotent */
  int v = atomic_load_explicit(&link, memory_order_relaxed);
  if (!v) {
    const char *e = getenv("EVRT_ACL_HOST_LINK");
    v = 1;
    if (e && !strcmp(e, "hccs"))
      v = 2;
    else if (e && *e && strcmp(e, "pcie"))
      fprintf(stderr, "evrt: EVRT_ACL_HOST_LINK=%s is neither pcie nor hccs: "
                      "pcie\n", e);
    atomic_store_explicit(&link, v, memory_order_relaxed);
  }
  return v == 1;
}

/* ------------------------------------------------------------- versions */

/* The packages this layer answers for: the runtime (under the names CANN
 * accepts: "runtime", and the package's own "npu-runtime" or
 * "npu_runtime").  Any other package has no version.info here: 100003. */
static aclError pkg_version(const char *fn, const char *pkg,
                            const char **version) {
  if (!strcmp(pkg, "runtime") || !strcmp(pkg, "npu-runtime") ||
      !strcmp(pkg, "npu_runtime")) {
    *version = RUNTIME_VERSION;
    return ACL_SUCCESS;
  }
  return acl__fail(ACL_ERROR_INVALID_FILE, fn,
                   "no version information for package '%s' (evrt answers "
                   "for 'runtime' only)",
                   pkg);
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr) {
  static const char fn[] = "aclsysGetVersionStr";
  if (!versionStr || !pkgName)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     versionStr ? "pkgName" : "versionStr");
  const char *v;
  aclError r = pkg_version(fn, pkgName, &v);
  if (r)
    return r;
  snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s", v);
  return ACL_SUCCESS;
}

/* CANN's weights: major * 10^7 + minor * 10^5 + patch * 10^3, and a
 * pre-release suffix subtracts 300 (alpha), 200 (beta) or 100 (rc) and adds
 * its number ("9.0.0-rc.2" -> 89999902). */
static aclError version_number(const char *s, int32_t *out) {
  int major, minor, patch, used = 0;
  if (sscanf(s, "%d.%d.%d%n", &major, &minor, &patch, &used) != 3)
    return ACL_ERROR_INTERNAL_ERROR;
  int64_t v = (int64_t)major * 10000000 + (int64_t)minor * 100000 +
              (int64_t)patch * 1000;
  const char *rest = s + used;
  if (*rest) {
    static const struct {
      const char *word;
      int weight;
    } pre[] = {{"alpha", 300}, {"beta", 200}, {"rc", 100}};
    const char *p = rest;
    if (*p == '-' || *p == '.' || *p == '_')
      p++;
    int i, n = 0;
    for (i = 0; i < 3; i++)
      if (!strncmp(p, pre[i].word, strlen(pre[i].word)))
        break;
    if (i == 3)
      return ACL_ERROR_INTERNAL_ERROR;
    p += strlen(pre[i].word);
    if (*p == '.' || *p == '-')
      p++;
    if (*p && sscanf(p, "%d", &n) != 1)
      return ACL_ERROR_INTERNAL_ERROR;
    v += n - pre[i].weight;
  }
  if (v > INT32_MAX || v < 0)
    return ACL_ERROR_INTERNAL_ERROR;
  *out = (int32_t)v;
  return ACL_SUCCESS;
}

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) {
  static const char fn[] = "aclsysGetVersionNum";
  if (!versionNum || !pkgName)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     versionNum ? "pkgName" : "versionNum");
  const char *v;
  aclError r = pkg_version(fn, pkgName, &v);
  if (r)
    return r;
  int32_t n;
  if (version_number(v, &n))
    return acl__fail(ACL_ERROR_INTERNAL_ERROR, fn,
                     "cannot parse version '%s'", v);
  *versionNum = n;
  return ACL_SUCCESS;
}

/* Deprecated: CANN fills the four parts from the package's version.info
 * ("9.1.0" -> "9", "1", "0", "0"; missing parts are "0").  The runtime
 * answers for ACL_PKG_NAME_CANN and ACL_PKG_NAME_RUNTIME (both read the
 * runtime's version.info in CANN); the other packages are not installed:
 * ACL_ERROR_INVALID_FILE, as CANN says when their file is missing. */
aclError aclsysGetCANNVersion(aclCANNPackageName name,
                              aclCANNPackageVersion *version) {
  static const char fn[] = "aclsysGetCANNVersion";
  if (!version)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "version is NULL");
  if ((unsigned)name > ACL_PKG_NAME_DRIVER)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "package name enum id %d is invalid", (int)name);
  if (name != ACL_PKG_NAME_CANN && name != ACL_PKG_NAME_RUNTIME)
    return acl__fail(ACL_ERROR_INVALID_FILE, fn,
                     "no version information for package %d (evrt answers "
                     "for the runtime only)",
                     (int)name);
  int major = 0, minor = 0, release = 0;
  sscanf(RUNTIME_VERSION, "%d.%d.%d", &major, &minor, &release);
  memset(version, 0, sizeof *version);
  snprintf(version->version, sizeof version->version, "%s", RUNTIME_VERSION);
  snprintf(version->majorVersion, sizeof version->majorVersion, "%d", major);
  snprintf(version->minorVersion, sizeof version->minorVersion, "%d", minor);
  snprintf(version->releaseVersion, sizeof version->releaseVersion, "%d",
           release);
  snprintf(version->patchVersion, sizeof version->patchVersion, "0");
  return ACL_SUCCESS;
}

/* Deprecated: the ACL interface version of the headers (1.17.0). */
aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                         int32_t *patchVersion) {
  static const char fn[] = "aclrtGetVersion";
  if (!majorVersion || !minorVersion || !patchVersion)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     !majorVersion   ? "majorVersion"
                     : !minorVersion ? "minorVersion"
                                     : "patchVersion");
  *majorVersion = ACL_MAJOR_VERSION;
  *minorVersion = ACL_MINOR_VERSION;
  *patchVersion = ACL_PATCH_VERSION;
  return ACL_SUCCESS;
}

/* --------------------------------------------------------- attributes */

static const aclCannAttr cann_attrs[] = {
    ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16, ACL_CANN_ATTR_JIT_COMPILE};

aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList,
                                 size_t *num) {
  static const char fn[] = "aclGetCannAttributeList";
  if (!cannAttrList || !num)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     cannAttrList ? "num" : "cannAttrList");
  *cannAttrList = cann_attrs;
  *num = sizeof cann_attrs / sizeof cann_attrs[0];
  return ACL_SUCCESS;
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value) {
  static const char fn[] = "aclGetCannAttribute";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  for (size_t i = 0; i < sizeof cann_attrs / sizeof cann_attrs[0]; i++)
    if (cann_attrs[i] == cannAttr) {
      *value = 1; /* all three are available on the virtual device */
      return ACL_SUCCESS;
    }
  return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown CANN attribute %d",
                   (int)cannAttr);
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo,
                                int64_t *value) {
  static const char fn[] = "aclGetDeviceCapability";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_INVALID_PARAM);
  switch ((int)deviceInfo) {
  case ACL_DEVICE_INFO_AI_CORE_NUM:
    *value = acl__soc.aicore;
    return ACL_SUCCESS;
  case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
    *value = acl__soc.vector_core;
    return ACL_SUCCESS;
  case ACL_DEVICE_INFO_L2_SIZE:
    *value = acl__soc.l2_size;
    return ACL_SUCCESS;
  }
  return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown device info %d",
                   (int)deviceInfo);
}

/* ------------------------------------------------------ SoC and arch */

const char *aclrtGetSocName(void) { return acl__soc.name; }

/* NpuArch of every SoC that CANN's platform files name (hicann/runtime
 * src/platform/platform_config/cann/ *.ini, key NpuArch). */
static const struct {
  const char *soc;
  int arch;
} soc_arch[] = {
    {"Ascend910A", 1001},     {"Ascend910B", 1001},
    {"Ascend910PremiumA", 1001}, {"Ascend910ProA", 1001},
    {"Ascend910ProB", 1001},  {"Ascend310P1", 2002},
    {"Ascend310P3", 2002},    {"Ascend310P5", 2002},
    {"Ascend310P7", 2002},    {"Ascend910B1", 2201},
    {"Ascend910B2", 2201},    {"Ascend910B2C", 2201},
    {"Ascend910B3", 2201},    {"Ascend910B4", 2201},
    {"Ascend910B4-1", 2201},  {"Ascend910_9362", 2201},
    {"Ascend910_9363", 2201}, {"Ascend910_9372", 2201},
    {"Ascend910_9381", 2201}, {"Ascend910_9382", 2201},
    {"Ascend910_9391", 2201}, {"Ascend910_9392", 2201},
    {"Ascend310B1", 3002},    {"Ascend310B2", 3002},
    {"Ascend310B3", 3002},    {"Ascend310B4", 3002},
    {"Ascend031", 3004},      {"Ascend035", 3505},
    {"Ascend035A", 3505},     {"Ascend035B", 3505},
};

aclError aclrtCheckArchCompatibility(const char *socVersion,
                                     int32_t *canCompatible) {
  static const char fn[] = "aclrtCheckArchCompatibility";
  if (!socVersion || !canCompatible)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s is NULL",
                     socVersion ? "canCompatible" : "socVersion");
  for (size_t i = 0; i < sizeof soc_arch / sizeof soc_arch[0]; i++)
    if (!strcmp(soc_arch[i].soc, socVersion)) {
      *canCompatible = soc_arch[i].arch == acl__soc.npu_arch;
      return ACL_SUCCESS;
    }
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "SoC version '%s' is invalid", socVersion);
}

/* ------------------------------------------------------ device queries */

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr,
                            int64_t *value) {
  static const char fn[] = "aclrtGetDeviceInfo";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_PARAM_INVALID);
  size_t free_b, total_b;
  switch ((int)attr) {
  case ACL_DEV_ATTR_AICPU_CORE_NUM:
    *value = acl__soc.aicpu;
    break;
  case ACL_DEV_ATTR_AICORE_CORE_NUM:
    *value = acl__soc.aicore;
    break;
  case ACL_DEV_ATTR_CUBE_CORE_NUM:
    *value = acl__soc.cube_core;
    break;
  case ACL_DEV_ATTR_VECTOR_CORE_NUM:
    *value = acl__soc.vector_core;
    break;
  /* SIMT properties: the 910B has no SIMT unit, CANN answers 0 */
  case ACL_DEV_ATTR_WARP_SIZE:
  case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
  case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE:
  case ACL_DEV_ATTR_MAX_GRID_DIM_X:
  case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
  case ACL_DEV_ATTR_MAX_GRID_DIM_Z:
  case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
  case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
  case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
  case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
  case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
    *value = 0;
    break;
  case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
    acl__host_memory(&free_b, &total_b);
    *value = (int64_t)total_b;
    break;
  case ACL_DEV_ATTR_L2_CACHE_SIZE:
    *value = acl__soc.l2_size;
    break;
  case ACL_DEV_ATTR_SMP_ID: /* every virtual device is in this OS */
    *value = 0;
    break;
  case ACL_DEV_ATTR_PHY_CHIP_ID:
    *value = deviceId;
    break;
  case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
  case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
  case ACL_DEV_ATTR_SUPER_POD_ID:
  case ACL_DEV_ATTR_MAINBOARD_ID:
  case ACL_DEV_ATTR_CUST_OP_PRIVILEGE:
  case ACL_DEV_ATTR_IS_VIRTUAL:
    *value = 0;
    break;
  case ACL_DEV_ATTR_HD_CONNECT_TYPE:
    *value = host_link_pcie() ? ACL_HOST_DEVICE_CONNECT_TYPE_PCIE
                              : ACL_HOST_DEVICE_CONNECT_TYPE_HCCS;
    break;
  case ACL_DEV_ATTR_DEVICE_FORM_FACTOR:
    *value = host_link_pcie() ? ACL_DEVICE_FORM_FACTOR_PCIE_CARD
                              : ACL_DEVICE_FORM_FACTOR_POD;
    break;
  case ACL_DEV_ATTR_NPU_ARCH:
    *value = acl__soc.npu_arch;
    break;
  default:
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "unknown device attribute %d", (int)attr);
  }
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCapability(int32_t deviceId,
                                  aclrtDevFeatureType devFeatureType,
                                  int32_t *value) {
  static const char fn[] = "aclrtGetDeviceCapability";
  if (!value)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "value is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  switch ((int)devFeatureType) {
  case ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV:
    *value = ACL_DEV_FEATURE_SUPPORT;
    return ACL_SUCCESS;
  case ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV:
    *value = ACL_DEV_FEATURE_NOT_SUPPORT;
    return ACL_SUCCESS;
  }
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "unknown device feature type %d", (int)devFeatureType);
}

aclError aclrtQueryDeviceStatus(int32_t deviceId,
                                aclrtDeviceStatus *deviceStatus) {
  static const char fn[] = "aclrtQueryDeviceStatus";
  if (!deviceStatus)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "deviceStatus is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
  return ACL_SUCCESS;
}

/* Utilization is not measured: the cores read 0 %, memory -1 (CANN: not
 * supported). */
aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
                                       aclrtUtilizationInfo *utilizationInfo) {
  static const char fn[] = "aclrtGetDeviceUtilizationRate";
  if (!utilizationInfo)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "utilizationInfo is NULL");
  if (utilizationInfo->utilizationExtend)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "utilizationInfo->utilizationExtend is reserved and "
                     "must be NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  utilizationInfo->cubeUtilization = 0;
  utilizationInfo->vectorUtilization = 0;
  utilizationInfo->aicpuUtilization = 0;
  utilizationInfo->memoryUtilization = -1;
  return ACL_SUCCESS;
}

/* CANN's range: 0 is the greatest priority, 7 the least. */
aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority,
                                           int32_t *greatestPriority) {
  if (leastPriority)
    *leastPriority = ACL__STREAM_PRIORITY_LEAST;
  if (greatestPriority)
    *greatestPriority = ACL__STREAM_PRIORITY_GREATEST;
  return ACL_SUCCESS;
}

aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid) {
  static const char fn[] = "aclrtDeviceGetUuid";
  if (!uuid)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "uuid is NULL");
  if (!acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  /* "evrt-cpu-device" then the device index: fixed and distinct */
  static const char tag[15] = "evrt-cpu-device";
  memcpy(uuid->bytes, tag, sizeof tag);
  uuid->bytes[15] = (char)deviceId;
  return ACL_SUCCESS;
}

/* Bus ids "0000:BB:00.0", BB = 0x01 + device index, in CANN's
 * "%04x:%02x:%02x.%x" form; a buffer needs 13 bytes. */
#define PCI_BUS_ID_MIN_LEN 13

static aclError no_pcie(const char *fn) {
  return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                   "the host link is not PCIe (EVRT_ACL_HOST_LINK=hccs)");
}

aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId,
                                int32_t len) {
  static const char fn[] = "aclrtDeviceGetPCIBusId";
  if (!pciBusId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "pciBusId is NULL");
  if (deviceId < 0 || !acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  if (len < PCI_BUS_ID_MIN_LEN)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                     "len %d is below %d", (int)len, PCI_BUS_ID_MIN_LEN);
  if (!host_link_pcie())
    return no_pcie(fn);
  snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", 0u,
           0x01u + (unsigned)deviceId, 0u, 0u);
  return ACL_SUCCESS;
}

aclError aclrtDeviceGetByPCIBusId(const char *pciBusId, int32_t *deviceId) {
  static const char fn[] = "aclrtDeviceGetByPCIBusId";
  if (!pciBusId || !deviceId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     pciBusId ? "deviceId" : "pciBusId");
  if (!host_link_pcie())
    return no_pcie(fn);
  int n = 0;
  evrt_device_count(&n);
  for (int d = 0; d < n && d < ACL__MAX_DEVICES; d++) {
    char id[PCI_BUS_ID_MIN_LEN];
    snprintf(id, sizeof id, "%04x:%02x:%02x.%x", 0u, 0x01u + (unsigned)d, 0u,
             0u);
    if (!strcmp(id, pciBusId)) {
      *deviceId = d;
      return ACL_SUCCESS;
    }
  }
  return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                   "no device has PCI bus id '%s'", pciBusId);
}

/* Atomic operations between the host and a device: CANN fills them from the
 * SoC's table when the host link is UB; the Ascend910B3 this device poses as
 * has an empty host table (CANN's 910_B_93 configuration), so every
 * capability is 0 and the program takes its device-side path.  CANN's
 * checks, in its order: capabilities, operations, count (107000), the device
 * (107001), each operation within [INTEGER_ADD, SIMD_SCALAR_EXCH] (107000). */
aclError aclrtDeviceGetHostAtomicCapabilities(
    uint32_t *capabilities, const aclrtAtomicOperation *operations,
    const uint32_t count, int32_t deviceId) {
  static const char fn[] = "aclrtDeviceGetHostAtomicCapabilities";
  if (!capabilities || !operations)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "%s is NULL",
                     capabilities ? "operations" : "capabilities");
  if (!count)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn, "count is 0");
  if (deviceId < 0 || !acl__device_ok(deviceId))
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  for (uint32_t i = 0; i < count; i++)
    if ((int)operations[i] < (int)ACL_RT_ATOMIC_OPERATION_INTEGER_ADD ||
        (int)operations[i] > (int)ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                       "operations[%u] is %d, outside [%d, %d]", i,
                       (int)operations[i],
                       (int)ACL_RT_ATOMIC_OPERATION_INTEGER_ADD,
                       (int)ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH);
  for (uint32_t i = 0; i < count; i++)
    capabilities[i] = 0;
  return ACL_SUCCESS;
}

/* The process id the driver knows this process by: the pid itself (no
 * container pid namespace translation here). */
aclError aclrtDeviceGetBareTgid(int32_t *pid) {
  if (!pid)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetBareTgid",
                     "pid is NULL");
  *pid = (int32_t)getpid();
  return ACL_SUCCESS;
}

/* --------------------------------------------------------- id mappings */

/* User, logical and physical device ids are the same numbers: evrt has no
 * ASCEND_RT_VISIBLE_DEVICES remapping. */
static aclError map_id(const char *fn, int32_t in, int32_t *out) {
  if (!out)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "output is NULL");
  if (!acl__device_ok(in))
    return acl__bad_device(fn, in, ACL_ERROR_RT_INVALID_DEVICEID);
  *out = in;
  return ACL_SUCCESS;
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid,
                                       int32_t *const logicDevId) {
  return map_id("aclrtGetLogicDevIdByUserDevId", userDevid, logicDevId);
}
aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId,
                                       int32_t *const userDevid) {
  return map_id("aclrtGetUserDevIdByLogicDevId", logicDevId, userDevid);
}
aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId,
                                      int32_t *const logicDevId) {
  return map_id("aclrtGetLogicDevIdByPhyDevId", phyDevId, logicDevId);
}
aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId,
                                      int32_t *const phyDevId) {
  return map_id("aclrtGetPhyDevIdByLogicDevId", logicDevId, phyDevId);
}
aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId,
                                     int32_t *const userDevId) {
  return map_id("aclrtGetUserDevIdByPhyDevId", phyDevId, userDevId);
}
aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId,
                                     int32_t *const phyDevId) {
  return map_id("aclrtGetPhyDevIdByUserDevId", userDevId, phyDevId);
}

/* -------------------------------------------------------------- errors */

/* aclrtGetErrorVerbose is in acl_failure.c: it reports the device's last
 * task failure. */
