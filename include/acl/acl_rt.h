/*
 * acl/acl_rt.h - the runtime part (devices, contexts, streams, events,
 * callbacks, notifies, memory, built-in tasks, switches) of evrt's Ascend
 * ACL compatibility layer.
 *
 * Prototypes, type and enum names and numeric values follow the public CANN
 * header acl/acl_rt.h (hicann/runtime include/external/acl/acl_rt.h, version
 * 1.17.0); each was written here from those facts.  The calls declared are
 * the ones docs/acl.md lists, with their status.  Compiles as C11 and as C++.
 */
#ifndef EVRT_ACL_RT_H
#define EVRT_ACL_RT_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt_allocator.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

/* Event creation flags */
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY 0x00000010U
#define ACL_EVENT_EXTERNAL 0x00000020U
#define ACL_EVENT_IPC 0x00000040U

/* Record and wait operation flags */
#define ACL_EVENT_RECORD_DEFAULT 0x0U
#define ACL_EVENT_RECORD_EXTERNAL 0x01U
#define ACL_EVENT_WAIT_DEFAULT 0x0U
#define ACL_EVENT_WAIT_EXTERNAL 0x01U

/* Stream creation flags */
#define ACL_STREAM_FAST_LAUNCH 0x00000001U
#define ACL_STREAM_FAST_SYNC 0x00000002U
#define ACL_STREAM_PERSISTENT 0x00000004U
#define ACL_STREAM_HUGE 0x00000008U
#define ACL_STREAM_CPU_SCHEDULE 0x00000010U
#define ACL_STREAM_DEVICE_USE_ONLY 0x00000020U

/* Stream failure modes (aclrtSetStreamFailureMode) */
#define ACL_CONTINUE_ON_FAILURE 0x00000000U
#define ACL_STOP_ON_FAILURE 0x00000001U

#define ACL_IPC_EVENT_HANDLE_SIZE 64U

typedef enum aclrtRunMode { ACL_DEVICE, ACL_HOST } aclrtRunMode;

typedef enum aclrtEventStatus {
  ACL_EVENT_STATUS_COMPLETE = 0,
  ACL_EVENT_STATUS_NOT_READY = 1,
  ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

/* Note the polarity: COMPLETE is 1 here and 0 in the other status enums. */
typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

typedef enum aclrtEventWaitStatus {
  ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
  ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
  ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF
} aclrtEventWaitStatus;

typedef enum aclrtStreamStatus {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

typedef enum aclrtCallbackBlockType {
  ACL_CALLBACK_NO_BLOCK,
  ACL_CALLBACK_BLOCK
} aclrtCallbackBlockType;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
  ACL_MEMCPY_DEFAULT,
  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
  ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
  ACL_MEMCPY_INTER_DEVICE_TO_DEVICE
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
  ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
  ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

typedef enum aclrtLastErrLevel { ACL_RT_THREAD_LEVEL = 0 } aclrtLastErrLevel;

typedef void (*aclrtCallback)(void *userData);
typedef void (*aclrtHostFunc)(void *args);

typedef struct aclrtIpcEventHandle {
  char reserved[ACL_IPC_EVENT_HANDLE_SIZE];
} aclrtIpcEventHandle;

/* ---------------------------------------------------------------- init */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount);
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);
ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);

/* -------------------------------------------------- devices, contexts */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context,
                                                int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtGetPrimaryCtxState(int32_t deviceId,
                                                     uint32_t *flags,
                                                     int32_t *active);

/* ---------------------------------------------------- operation timeouts */
ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout,
                                                        uint64_t *actualTimeout);
ACL_FUNC_VISIBILITY aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs);
ACL_FUNC_VISIBILITY aclError aclrtGetOpTimeOutInterval(uint64_t *interval);

/* ------------------------------------------------------------- streams */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream,
                                                         uint32_t priority,
                                                         uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
                                                               int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream,
                                              aclrtStreamStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream,
                                                  aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream,
                                                             aclrtEvent event,
                                                             int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithFlag(aclrtStream stream,
                                                          aclrtEvent event,
                                                          uint32_t timeout,
                                                          uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream,
                                                       uint64_t mode);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream,
                                              int32_t *streamId);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAvailableNum(uint32_t *streamCount);

/* -------------------------------------------------------------- events */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event,
                                                      uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent *event,
                                                        uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event,
                                              aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtRecordEventWithFlag(aclrtEvent event,
                                                      aclrtStream stream,
                                                      uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event,
                                             aclrtStream stream);
ACL_DEPRECATED_MESSAGE("aclrtQueryEvent is deprecated, use aclrtQueryEventStatus instead")
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event,
                                             aclrtEventStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event,
                                                       aclrtEventWaitStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event,
                                                              int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms,
                                                   aclrtEvent startEvent,
                                                   aclrtEvent endEvent);
ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event,
                                                    uint64_t *timestamp);
ACL_FUNC_VISIBILITY aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId);
ACL_FUNC_VISIBILITY aclError aclrtGetEventAvailNum(uint32_t *eventCount);
ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event,
                                                    aclrtIpcEventHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle,
                                                     aclrtEvent *event);

/* ----------------------------------------------------------- callbacks */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId,
                                                  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId,
                                                    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream,
                                                 aclrtHostFunc fn, void *args);

/* -------------------------------------------------------------- memory */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
                                         aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
                                         const void *src, size_t count,
                                         aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount,
                                         int32_t value, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax,
                                              const void *src, size_t count,
                                              aclrtMemcpyKind kind,
                                              aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount,
                                              int32_t value, size_t count,
                                              aclrtStream stream);

/* ------------------------------------------------------------ notifies */
ACL_FUNC_VISIBILITY aclError aclrtCreateNotify(aclrtNotify *notify,
                                               uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyNotify(aclrtNotify notify);
ACL_FUNC_VISIBILITY aclError aclrtRecordNotify(aclrtNotify notify,
                                               aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtWaitAndResetNotify(aclrtNotify notify,
                                                     aclrtStream stream,
                                                     uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtGetNotifyId(aclrtNotify notify,
                                              uint32_t *notifyId);

/* ================================================ errors: aclrtErrorInfo */
#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14
#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20

typedef struct aclrtMemUceInfo {
  void *addr;
  size_t len;
  size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

typedef enum {
  ACL_RT_NO_ERROR = 0,
  ACL_RT_ERROR_MEMORY = 1,
  ACL_RT_ERROR_L2 = 2,
  ACL_RT_ERROR_AICORE = 3,
  ACL_RT_ERROR_LINK = 4,
  ACL_RT_ERROR_L3_PORT = 5,
  ACL_RT_ERROR_OTHERS = 0xFFFF
} aclrtErrorType;

typedef enum aclrtAicoreErrorType {
  ACL_RT_AICORE_ERROR_UNKNOWN,
  ACL_RT_AICORE_ERROR_SW,
  ACL_RT_AICORE_ERROR_HW_LOCAL
} aclrtAicoreErrorType;

typedef struct {
  size_t arraySize;
  aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail {
  aclrtMemUceInfoArray uceInfo;
  aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo {
  uint8_t tryRepair;
  uint8_t hasDetail;
  uint8_t reserved[2];
  aclrtErrorType errorType;
  aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

/* After a task failure on the device: ACL_RT_ERROR_AICORE (acl_failure.c);
 * else ACL_RT_NO_ERROR. */
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId,
                                                  aclrtErrorInfo *errorInfo);

/* ======================================= system, version and device info */
#define ACL_PKG_VERSION_MAX_SIZE 128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64

typedef enum aclCANNPackageName {
  ACL_PKG_NAME_CANN,
  ACL_PKG_NAME_RUNTIME,
  ACL_PKG_NAME_COMPILER,
  ACL_PKG_NAME_HCCL,
  ACL_PKG_NAME_TOOLKIT,
  ACL_PKG_NAME_OPP,
  ACL_PKG_NAME_OPP_KERNEL,
  ACL_PKG_NAME_DRIVER
} aclCANNPackageName;

typedef struct aclCANNPackageVersion {
  char version[ACL_PKG_VERSION_MAX_SIZE];
  char majorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char minorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char releaseVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char patchVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char reserved[ACL_PKG_VERSION_MAX_SIZE];
} aclCANNPackageVersion;

/* aclrtGetDevicesTopo values */
#define ACL_RT_DEVS_TOPOLOGY_HCCS 0x01ULL
#define ACL_RT_DEVS_TOPOLOGY_PIX 0x02ULL
#define ACL_RT_DEVS_TOPOLOGY_PIB 0x04ULL
#define ACL_RT_DEVS_TOPOLOGY_PHB 0x08ULL
#define ACL_RT_DEVS_TOPOLOGY_SYS 0x10ULL
#define ACL_RT_DEVS_TOPOLOGY_SIO 0x20ULL
#define ACL_RT_DEVS_TOPOLOGY_HCCS_SW 0x40ULL

/* aclrtGetDeviceCapability values */
#define ACL_DEV_FEATURE_SUPPORT 0x00000001
#define ACL_DEV_FEATURE_NOT_SUPPORT 0x00000000

/* Host-device link (ACL_DEV_ATTR_HD_CONNECT_TYPE) */
#define ACL_HOST_DEVICE_CONNECT_TYPE_PCIE 0
#define ACL_HOST_DEVICE_CONNECT_TYPE_HCCS 1
#define ACL_HOST_DEVICE_CONNECT_TYPE_UB 2

/* Device form factor (ACL_DEV_ATTR_DEVICE_FORM_FACTOR) */
#define ACL_DEVICE_FORM_FACTOR_POD 0
#define ACL_DEVICE_FORM_FACTOR_A_K 1
#define ACL_DEVICE_FORM_FACTOR_A_X 2
#define ACL_DEVICE_FORM_FACTOR_PCIE_CARD 3

typedef enum aclrtDeviceStatus {
  ACL_RT_DEVICE_STATUS_NORMAL = 0,
  ACL_RT_DEVICE_STATUS_ABNORMAL,
  ACL_RT_DEVICE_STATUS_END = 0xFFFF
} aclrtDeviceStatus;

typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;

typedef struct aclrtUtilizationInfo {
  int32_t cubeUtilization;
  int32_t vectorUtilization;
  int32_t aicpuUtilization;
  int32_t memoryUtilization;
  aclrtUtilizationExtendInfo *utilizationExtend; /* reserved: NULL */
} aclrtUtilizationInfo;

typedef enum {
  ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
  ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
  ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
  ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
  ACL_DEV_ATTR_WARP_SIZE = 202,
  ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
  ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE ACL_DEPRECATED_MESSAGE(
      "Use ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE instead") = 204,
  ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
  ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
  ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
  ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
  ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
  ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
  ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
  ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
  ACL_DEV_ATTR_SMP_ID = 401U,
  ACL_DEV_ATTR_PHY_CHIP_ID = 402U,
  ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID = 403U, /* deprecated spelling */
  ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403U,
  ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404U,
  ACL_DEV_ATTR_SUPER_POD_ID = 405U,
  ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406U,
  ACL_DEV_ATTR_MAINBOARD_ID = 407U,
  ACL_DEV_ATTR_HD_CONNECT_TYPE = 408U,
  ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409U,
  ACL_DEV_ATTR_IS_VIRTUAL = 501U,
  ACL_DEV_ATTR_NPU_ARCH = 601U
} aclrtDevAttr;

typedef enum {
  ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1,
  ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21
} aclrtDevFeatureType;

typedef enum {
  ACL_RT_DEV_RES_CUBE_CORE = 0,
  ACL_RT_DEV_RES_VECTOR_CORE
} aclrtDevResLimitType;

typedef enum aclrtDeviceLimit {
  ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0,
  ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1,
  ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2,
  ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3,
  ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4
} aclrtDeviceLimit;

typedef struct aclrtUuid {
  char bytes[16];
} aclrtUuid;

typedef enum aclrtMemAttr {
  ACL_DDR_MEM,
  ACL_HBM_MEM,
  ACL_DDR_MEM_HUGE,
  ACL_DDR_MEM_NORMAL,
  ACL_HBM_MEM_HUGE,
  ACL_HBM_MEM_NORMAL,
  ACL_DDR_MEM_P2P_HUGE,
  ACL_DDR_MEM_P2P_NORMAL,
  ACL_HBM_MEM_P2P_HUGE,
  ACL_HBM_MEM_P2P_NORMAL,
  ACL_HBM_MEM_HUGE1G,
  ACL_HBM_MEM_P2P_HUGE1G,
  ACL_MEM_NORMAL,
  ACL_MEM_HUGE,
  ACL_MEM_HUGE1G,
  ACL_MEM_P2P_NORMAL,
  ACL_MEM_P2P_HUGE,
  ACL_MEM_P2P_HUGE1G
} aclrtMemAttr;

/* Versions: the runtime package ("runtime") only; 9.1.0 -> 90100000. */
ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
ACL_FUNC_VISIBILITY aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum);
/* Deprecated forms: the runtime (ACL_PKG_NAME_CANN / _RUNTIME) is 9.1.0,
 * the ACL interface 1.17.0; other packages 100003. */
ACL_DEPRECATED_MESSAGE("aclsysGetCANNVersion is deprecated, use aclsysGetVersionStr and aclsysGetVersionNum instead")
ACL_FUNC_VISIBILITY aclError aclsysGetCANNVersion(aclCANNPackageName name,
                                                  aclCANNPackageVersion *version);
ACL_DEPRECATED_MESSAGE("aclrtGetVersion is deprecated, use aclSysGetVersion instead")
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion,
                                             int32_t *minorVersion,
                                             int32_t *patchVersion);
ACL_FUNC_VISIBILITY aclError aclrtCheckArchCompatibility(const char *socVersion,
                                                         int32_t *canCompatible);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceInfo(uint32_t deviceId,
                                                aclrtDevAttr attr,
                                                int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCapability(int32_t deviceId,
                                                      aclrtDevFeatureType devFeatureType,
                                                      int32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtQueryDeviceStatus(int32_t deviceId,
                                                    aclrtDeviceStatus *deviceStatus);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
                                                           aclrtUtilizationInfo *utilizationInfo);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority,
                                                               int32_t *greatestPriority);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free,
                                             size_t *total);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetPCIBusId(int32_t deviceId,
                                                    char *pciBusId, int32_t len);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetByPCIBusId(const char *pciBusId,
                                                      int32_t *deviceId);

/* aclrtDeviceGetHostAtomicCapabilities: operations and capability bits */
typedef enum aclrtAtomicOperationCapability {
  ACL_RT_ATOMIC_CAPABILITY_SIGNED = 1U << 0,
  ACL_RT_ATOMIC_CAPABILITY_UNSIGNED = 1U << 1,
  ACL_RT_ATOMIC_CAPABILITY_REDUCATION = 1U << 2, /* deprecated spelling */
  ACL_RT_ATOMIC_CAPABILITY_REDUCTION = 1U << 2,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR8 = 1U << 3,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR16 = 1U << 4,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR32 = 1U << 5,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR64 = 1U << 6,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR128 = 1U << 7,
  ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4 = 1U << 8,
} aclrtAtomicOperationCapability;

typedef enum aclrtAtomicOperation {
  ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0,
  ACL_RT_ATOMIC_OPERATION_INTEGER_MIN = 1,
  ACL_RT_ATOMIC_OPERATION_INTEGER_MAX = 2,
  ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT = 3,
  ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT = 4,
  ACL_RT_ATOMIC_OPERATION_AND = 5,
  ACL_RT_ATOMIC_OPERATION_OR = 6,
  ACL_RT_ATOMIC_OPERATION_XOR = 7,
  ACL_RT_ATOMIC_OPERATION_EXCHANGE = 8,
  ACL_RT_ATOMIC_OPERATION_CAS = 9,
  ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10,
  ACL_RT_ATOMIC_OPERATION_FLOAT_MIN = 11,
  ACL_RT_ATOMIC_OPERATION_FLOAT_MAX = 12,

  ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30,
  ACL_RT_ATOMIC_OPERATION_DMA_MIN = 31,
  ACL_RT_ATOMIC_OPERATION_DMA_MAX = 32,

  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD = 40,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN = 41,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX = 42,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS = 43,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH = 44,
} aclrtAtomicOperation;

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetHostAtomicCapabilities(
    uint32_t *capabilities, const aclrtAtomicOperation *operations,
    const uint32_t count, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid);
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid,
                                                           int32_t *const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId,
                                                           int32_t *const userDevid);
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId,
                                                          int32_t *const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId,
                                                          int32_t *const phyDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId,
                                                         int32_t *const userDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId,
                                                         int32_t *const phyDevId);

/* Resource limits (cube / vector cores): stored and read back with CANN's
 * precedence; they do not partition the CPU backend's workers. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId,
                                                    aclrtDevResLimitType type,
                                                    uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId,
                                                    aclrtDevResLimitType type,
                                                    uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream,
                                                    aclrtDevResLimitType type,
                                                    uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream,
                                                    aclrtDevResLimitType type,
                                                    uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type,
                                                        uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit,
                                                 size_t value);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit,
                                                 size_t *value);

/* Peer access: every pair of virtual devices can (one host memory). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer,
                                                      int32_t deviceId,
                                                      int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId,
                                                         uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDevicePeerAccessStatus(int32_t deviceId,
                                                         int32_t peerDeviceId,
                                                         int32_t *status);
/* Every pair of virtual devices (and a device with itself) is linked by
 * HCCS: ACL_RT_DEVS_TOPOLOGY_HCCS. */
ACL_FUNC_VISIBILITY aclError aclrtGetDevicesTopo(uint32_t deviceId,
                                                 uint32_t otherDeviceId,
                                                 uint64_t *value);

/* ============================= streams: configuration handles, queries */
typedef enum {
  ACL_RT_STREAM_WORK_ADDR_PTR = 0,
  ACL_RT_STREAM_WORK_SIZE,
  ACL_RT_STREAM_FLAG,
  ACL_RT_STREAM_PRIORITY
} aclrtStreamConfigAttr;

typedef struct aclrtStreamConfigHandle {
  void *workptr;
  size_t workSize;
  size_t flag;
  uint32_t priority;
} aclrtStreamConfigHandle;

ACL_FUNC_VISIBILITY aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle,
                                                     aclrtStreamConfigAttr attr,
                                                     const void *attrValue,
                                                     size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamV2(aclrtStream *stream,
                                                 const aclrtStreamConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetPriority(aclrtStream stream,
                                                    uint32_t *priority);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetFlags(aclrtStream stream,
                                                 uint32_t *flags);

/* ========================================================== memory */
/* Host registration flags (aclrtHostRegisterV2) */
#define ACL_HOST_REG_MAPPED 0x2UL
#define ACL_HOST_REG_IOMEMORY 0x4UL
#define ACL_HOST_REG_READONLY 0x8UL
#define ACL_HOST_REG_PINNED 0x10000000UL

/* Managed memory (aclrtMemAllocManaged) */
#define ACL_RT_MEM_ATTACH_GLOBAL 0x01U

typedef enum aclrtMemManagedAdviseType {
  ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
  ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
  ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
  ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
  ACL_MEM_ADVISE_SET_ACCESSED_BY,
  ACL_MEM_ADVISE_UNSET_ACCESSED_BY
} aclrtMemManagedAdviseType;

typedef enum aclrtMemManagedLocationType {
  ACL_MEM_LOCATIONTYPE_INVALID = 0,
  ACL_MEM_LOCATIONTYPE_DEVICE,
  ACL_MEM_LOCATIONTYPE_HOST,
  ACL_MEM_LOCATIONTYPE_HOST_NUMA,
  ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT
} aclrtMemManagedLocationType;

typedef struct aclrtMemManagedLocation {
  aclrtMemManagedLocationType type;
  int32_t id;
} aclrtMemManagedLocation;

typedef enum aclrtMemManagedRangeAttribute {
  ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
  ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID
} aclrtMemManagedRangeAttribute;

typedef enum {
  ACL_HOST_REGISTER_MAPPED = 0,
  ACL_HOST_REGISTER_IOMEMORY = 0x04,
  ACL_HOST_REGISTER_READONLY = 0x08
} aclrtHostRegisterType;

typedef enum {
  ACL_RT_MEM_ATTR_RSV = 0,
  ACL_RT_MEM_ATTR_MODULE_ID,
  ACL_RT_MEM_ATTR_DEVICE_ID,
  ACL_RT_MEM_ATTR_VA_FLAG
} aclrtMallocAttrType;

typedef union {
  uint16_t moduleId;
  uint32_t deviceId;
  uint32_t vaFlag;
  uint8_t rsv[8];
} aclrtMallocAttrValue;

typedef struct {
  aclrtMallocAttrType attr;
  aclrtMallocAttrValue value;
} aclrtMallocAttribute;

typedef struct {
  aclrtMallocAttribute *attrs;
  size_t numAttrs;
} aclrtMallocConfig;

enum aclrtMemPgType { NORMAL_PAGE_TYPE = 0U, HUGE_PAGE_TYPE, HUGE1G_PAGE_TYPE };

enum aclrtMemType { HBM_TYPE = 0U, DDR_TYPE, P2P_HBM_TYPE, P2P_DDR_TYPE };

typedef enum aclrtMemLocationType {
  ACL_MEM_LOCATION_TYPE_HOST = 0,
  ACL_MEM_LOCATION_TYPE_DEVICE,
  ACL_MEM_LOCATION_TYPE_UNREGISTERED,
  ACL_MEM_LOCATION_TYPE_MANAGED,
  ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
  uint32_t id;
  aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPtrAttributes {
  aclrtMemLocation location;
  uint32_t pageSize;
  uint32_t rsv[4];
} aclrtPtrAttributes;

typedef struct {
  aclrtMemLocation dstLoc;
  aclrtMemLocation srcLoc;
  uint8_t rsv[16];
} aclrtMemcpyBatchAttr;

typedef enum {
  ACL_RT_HAC_TYPE_STARS = 0,
  ACL_RT_HAC_TYPE_AICPU,
  ACL_RT_HAC_TYPE_AIC,
  ACL_RT_HAC_TYPE_AIV,
  ACL_RT_HAC_TYPE_PCIEDMA,
  ACL_RT_HAC_TYPE_RDMA,
  ACL_RT_HAC_TYPE_SDMA,
  ACL_RT_HAC_TYPE_DVPP,
  ACL_RT_HAC_TYPE_UDMA,
  ACL_RT_HAC_TYPE_CCU
} aclrtHacType;

typedef enum {
  ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
  ACL_RT_HOST_MEM_MAP_SUPPORTED
} aclrtHostMemMapCapability;

/* Virtual and physical memory */
#define ACL_RT_VMM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
/* The interprocess-memory flags, as CANN defines them (the same values as
 * the VMM ones; CANN's own VMM samples pass these). */
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x1UL

typedef enum aclrtMemAllocationType {
  ACL_MEM_ALLOCATION_TYPE_PINNED = 0
} aclrtMemAllocationType;

typedef enum aclrtMemHandleType {
  ACL_MEM_HANDLE_TYPE_NONE = 0,
  ACL_MEM_HANDLE_TYPE_POSIX = 2
} aclrtMemHandleType;

typedef enum aclrtMemSharedHandleType {
  ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1,
  ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2
} aclrtMemSharedHandleType;

typedef struct aclrtMemFabricHandle {
  uint8_t data[128];
} aclrtMemFabricHandle;

typedef struct aclrtPhysicalMemProp {
  aclrtMemHandleType handleType;
  aclrtMemAllocationType allocationType;
  aclrtMemAttr memAttr;
  aclrtMemLocation location;
  uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtMemGranularityOptions {
  ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
  ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
  ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF
} aclrtMemGranularityOptions;

typedef void *aclrtDrvMemHandle;

typedef enum {
  ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
  ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
  ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3
} aclrtMemAccessFlags;

typedef struct {
  aclrtMemAccessFlags flags;
  aclrtMemLocation location;
  uint8_t rsv[12];
} aclrtMemAccessDesc;

/* ------------------------------------------ memory: allocation variants */
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
                                                aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size,
                                               aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocWithCfg(void **devPtr, size_t size,
                                                aclrtMemMallocPolicy policy,
                                                aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size,
                                                         aclrtMemMallocPolicy policy,
                                                         aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size,
                                                    aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeWithDevSync(void *devPtr);
/* aclrtCheckMemType's memType bits */
#define ACL_RT_MEM_TYPE_DEV (0X2U)
#define ACL_RT_MEM_TYPE_DVPP (0X8U)
#define ACL_RT_MEM_TYPE_RSVD (0X10U)
ACL_FUNC_VISIBILITY aclError aclrtCheckMemType(void **addrList, uint32_t size,
                                               uint32_t memType,
                                               uint32_t *checkResult,
                                               uint32_t reserve);
ACL_FUNC_VISIBILITY aclError aclrtFreeHostWithDevSync(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void *ptr,
                                                       aclrtPtrAttributes *attributes);

/* ---------------------------------------------- memory: host registration */
ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void *ptr, uint64_t size,
                                               aclrtHostRegisterType type,
                                               void **devPtr);
ACL_FUNC_VISIBILITY aclError aclrtHostRegisterV2(void *ptr, uint64_t size,
                                                 uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice,
                                                       uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void *ptr);
ACL_FUNC_VISIBILITY aclError aclrtHostMemMapCapabilities(uint32_t deviceId,
                                                         aclrtHacType hacType,
                                                         aclrtHostMemMapCapability *capabilities);

/* -------------------------------------------------- memory: managed (UVM) */
ACL_FUNC_VISIBILITY aclError aclrtMemAllocManaged(void **ptr, uint64_t size,
                                                  uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedAdvise(const void *const ptr,
                                                   uint64_t size,
                                                   aclrtMemManagedAdviseType advise,
                                                   aclrtMemManagedLocation location);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute,
                                                    const void *ptr, size_t size,
                                                    void *data, size_t dataSize);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes,
                                                     size_t numAttributes,
                                                     const void *ptr, size_t size,
                                                     void **data, size_t *dataSizes);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size,
                                                          aclrtMemManagedLocation location,
                                                          uint32_t flags,
                                                          aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs,
                                                               size_t *sizes, size_t count,
                                                               aclrtMemManagedLocation *prefetchLocs,
                                                               size_t *prefetchLocIdxs,
                                                               size_t numPrefetchLocs,
                                                               uint64_t flags,
                                                               aclrtStream stream);

/* ------------------------------------------ memory: virtual and physical */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t *granularity);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop,
                                                 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
                                                                       aclrtPhysicalMemProp *prop);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size,
                                                    size_t alignment, void *expectPtr,
                                                    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size,
                                                              size_t alignment,
                                                              void *expectPtr,
                                                              uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAddressRange(void *ptr, void **pbase,
                                                     size_t *psize);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                                         aclrtDrvMemHandle handle, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset,
                                                 aclrtDrvMemHandle handle,
                                                 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemRetainAllocationHandle(void *virPtr,
                                                            aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetAccess(void *virPtr, size_t size,
                                               aclrtMemAccessDesc *desc, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location,
                                               uint64_t *flag);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                                             aclrtMemHandleType handleType,
                                                             uint64_t flags,
                                                             uint64_t *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle,
                                                               uint64_t flags,
                                                               aclrtMemSharedHandleType shareType,
                                                               void *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
                                                             int32_t *pid, size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
                                                               aclrtMemSharedHandleType shareType,
                                                               int32_t *pid, size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
                                                               int32_t deviceId,
                                                               aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
                                                                 aclrtMemSharedHandleType shareType,
                                                                 uint64_t flags,
                                                                 aclrtDrvMemHandle *handle);

/* ------------------------------------------------- memory: copies, fills */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src,
                                           size_t spitch, size_t width, size_t height,
                                           aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch,
                                                const void *src, size_t spitch,
                                                size_t width, size_t height,
                                                aclrtMemcpyKind kind,
                                                aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value,
                                            size_t N);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32Async(void *ptr, size_t memSize,
                                                 uint32_t value, size_t N,
                                                 aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax,
                                                        size_t dstDataOffset,
                                                        const void **src, size_t count,
                                                        size_t srcDataOffset,
                                                        aclrtMemcpyKind kind,
                                                        aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind,
                                                    size_t *descSize);
ACL_FUNC_VISIBILITY aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind,
                                                void *srcAddr, void *dstAddr,
                                                size_t count, void *config);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind,
                                                      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs,
                                              size_t *sizes, size_t numBatches,
                                              aclrtMemcpyBatchAttr *attrs,
                                              size_t *attrsIndexes, size_t numAttrs,
                                              size_t *failIndex);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs,
                                                void **srcs, size_t *sizes,
                                                size_t numBatches,
                                                aclrtMemcpyBatchAttr *attrs,
                                                size_t *attrsIndexes, size_t numAttrs);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs,
                                                   void **srcs, size_t *sizes,
                                                   size_t numBatches,
                                                   aclrtMemcpyBatchAttr *attrs,
                                                   size_t *attrsIndexes,
                                                   size_t numAttrs, size_t *failIndex,
                                                   aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs,
                                                     void **srcs, size_t *sizes,
                                                     size_t numBatches,
                                                     aclrtMemcpyBatchAttr *attrs,
                                                     size_t *attrsIndexes,
                                                     size_t numAttrs,
                                                     aclrtStream stream);

/* ================================================== built-in tasks */
typedef enum {
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13
} aclrtReduceKind;

typedef struct {
  uint8_t isAddr;
  uint8_t valueOrAddr[8];
  uint8_t size;
  uint8_t rsv[6];
} aclrtRandomParaInfo;

typedef struct {
  aclrtRandomParaInfo dropoutRation;
} aclrtDropoutBitmaskInfo;

typedef struct {
  aclrtRandomParaInfo min;
  aclrtRandomParaInfo max;
} aclrtUniformDisInfo;

typedef struct {
  aclrtRandomParaInfo mean;
  aclrtRandomParaInfo stddev;
} aclrtNormalDisInfo;

typedef enum {
  ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS
} aclrtRandomNumFuncType;

typedef struct {
  aclrtRandomNumFuncType funcType;
  union {
    aclrtDropoutBitmaskInfo dropoutBitmaskInfo;
    aclrtUniformDisInfo uniformDisInfo;
    aclrtNormalDisInfo normalDisInfo;
  } paramInfo;
} aclrtRandomNumFuncParaInfo;

typedef struct {
  aclDataType dataType;
  aclrtRandomNumFuncParaInfo randomNumFuncParaInfo;
  void *randomParaAddr;
  void *randomResultAddr;
  void *randomCounterAddr;
  aclrtRandomParaInfo randomSeed;
  aclrtRandomParaInfo randomNum;
  uint8_t rsv[8];
} aclrtRandomNumTaskInfo;

/* dst = dst OP src element-wise, count bytes, as a task of stream. */
ACL_FUNC_VISIBILITY aclError aclrtReduceAsync(void *dst, const void *src,
                                              uint64_t count, aclrtReduceKind kind,
                                              aclDataType type, aclrtStream stream,
                                              void *reserve);
/* Philox4x32-10 random numbers, as a task of stream (docs/acl.md). */
ACL_FUNC_VISIBILITY aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo,
                                                 const aclrtStream stream,
                                                 void *reserve);

/* ============== overflow and saturation switches, runtime parameters */
typedef enum aclrtFloatOverflowMode {
  ACL_RT_OVERFLOW_MODE_SATURATION = 0,
  ACL_RT_OVERFLOW_MODE_INFNAN,
  ACL_RT_OVERFLOW_MODE_UNDEF
} aclrtFloatOverflowMode;

/* Per device, default INFNAN; aclrtReduceAsync follows it. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream,
                                                          uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream,
                                                          uint32_t *flag);
/* Process-level status word, copied / cleared as tasks of stream. */
ACL_FUNC_VISIBILITY aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize,
                                                    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetOverflowStatus(aclrtStream stream);
/* Deterministic computing and the other aclSysParamOpt values: stored. */
ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value);

/* ================================= init and finalize callback registration */
typedef enum aclRegisterCallbackType {
  ACL_REG_TYPE_ACL_MODEL,
  ACL_REG_TYPE_ACL_OP_EXECUTOR,
  ACL_REG_TYPE_ACL_OP_CBLAS,
  ACL_REG_TYPE_ACL_OP_COMPILER,
  ACL_REG_TYPE_ACL_TDT_CHANNEL,
  ACL_REG_TYPE_ACL_TDT_QUEUE,
  ACL_REG_TYPE_ACL_DVPP,
  ACL_REG_TYPE_ACL_RETR,
  ACL_REG_TYPE_OTHER = 0xFFFF
} aclRegisterCallbackType;
typedef aclError (*aclInitCallbackFunc)(const char *configStr, size_t len,
                                        void *userData);
typedef aclError (*aclFinalizeCallbackFunc)(void *userData);

ACL_FUNC_VISIBILITY aclError aclInitCallbackRegister(aclRegisterCallbackType type,
                                                     aclInitCallbackFunc cbFunc,
                                                     void *userData);
ACL_FUNC_VISIBILITY aclError aclInitCallbackUnRegister(aclRegisterCallbackType type,
                                                       aclInitCallbackFunc cbFunc);
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type,
                                                         aclFinalizeCallbackFunc cbFunc,
                                                         void *userData);
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type,
                                                           aclFinalizeCallbackFunc cbFunc);

/* =============================================================== * Failing tasks, stream stop/abort, subscribed host functions,
 * stream-ordered values, notify batch reset and interprocess notifies,
 * interprocess memory (built on evrt's failures, values and interprocess
 * memory: docs/acl.md).  Names, types and values from CANN's
 * include/external/acl/acl_rt.h (hicann/runtime 681ef761).
 * ==================================================================== */

#define ACL_STREAM_WAIT_VALUE_GEQ 0x00000000U
#define ACL_STREAM_WAIT_VALUE_EQ 0x00000001U
#define ACL_STREAM_WAIT_VALUE_AND 0x00000002U
#define ACL_STREAM_WAIT_VALUE_NOR 0x00000003U

#define ACL_NOTIFY_DEFAULT 0x00000000U
#define ACL_NOTIFY_DEVICE_USE_ONLY 0x00000001U

#define ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x02UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x02UL

typedef void *aclrtFuncHandle;
typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);

typedef enum {
  ACL_RT_STREAM_STATE_CREATE_POST = 1,
  ACL_RT_STREAM_STATE_DESTROY_PRE,
} aclrtStreamState;
typedef void (*aclrtStreamStateCallback)(aclrtStream stm,
                                         aclrtStreamState state, void *args);

/* ------------------------------------------------- failures, exceptions */
ACL_DEPRECATED_MESSAGE("aclrtSetExceptionInfoCallback is deprecated, use aclrtExceptionInfoCallbackRegister and aclrtExceptionInfoCallbackUnregister instead")
ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info,
                                                           void **devArgsPtr,
                                                           uint32_t *devArgsLen);
ACL_FUNC_VISIBILITY aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info,
                                                                 aclrtFuncHandle *func);
ACL_FUNC_VISIBILITY aclError aclrtGetThreadLastTaskId(uint32_t *taskId);

/* -------------------------------------------------- stream stop / abort */
ACL_FUNC_VISIBILITY aclError aclrtStreamStop(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtStreamAbort(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtRegStreamStateCallback(const char *regName,
                                                         aclrtStreamStateCallback callback,
                                                         void *args);

/* ------------------------------------------ subscribed host functions */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId,
                                                    aclrtStream exeStream);
ACL_FUNC_VISIBILITY aclError aclrtProcessHostFunc(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId,
                                                      aclrtStream exeStream);

/* ------------------------------------------------ stream-ordered values */
ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void *devAddr, uint64_t value,
                                             uint32_t flag, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtValueWait(void *devAddr, uint64_t value,
                                            uint32_t flag, aclrtStream stream);

/* ------------------------------------------- notifies: batch and IPC */
ACL_FUNC_VISIBILITY aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num);
ACL_FUNC_VISIBILITY aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key,
                                                     size_t len, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key,
                                                    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid,
                                                     size_t num);

/* ------------------------------------------------- interprocess memory */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
                                                     size_t len, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid,
                                                     size_t num);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key,
                                                    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key);
/* ------------------------------------- model runtime instances, labels */
/* Stream capture and built models (aclmdlRI*) and labels, over evrt's
 * stream capture (docs/capture.md, docs/acl.md).  Names and values from
 * CANN's acl/acl_rt.h and acl/acl_base_rt.h (hicann/runtime). */
typedef void *aclmdlRI; /* (aclrtLabel, aclrtLabelList: acl_base.h) */

typedef enum {
  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
  ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
} aclmdlRICaptureMode;

typedef enum {
  ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
} aclmdlRICaptureStatus;

/* aclmdlRITaskGetType (acl_base_rt.h).  This layer launches no kernels:
 * host functions, copies and fills are DEFAULT tasks. */
typedef enum aclmdlRITaskType {
  ACL_MODEL_RI_TASK_DEFAULT,
  ACL_MODEL_RI_TASK_KERNEL,
  ACL_MODEL_RI_TASK_EVENT_RECORD,
  ACL_MODEL_RI_TASK_EVENT_WAIT,
  ACL_MODEL_RI_TASK_EVENT_RESET,
  ACL_MODEL_RI_TASK_VALUE_WRITE,
  ACL_MODEL_RI_TASK_VALUE_WAIT,
} aclmdlRITaskType;

/* aclmdlRIBindStream flags */
#define ACL_MODEL_STREAM_FLAG_HEAD 0x00000000U
#define ACL_MODEL_STREAM_FLAG_DEFAULT 0x7FFFFFFFU

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream,
                                                  aclmdlRICaptureMode mode);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(
    aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream,
                                                aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError
aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI,
                                                  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRIBuildBegin(aclmdlRI *modelRI,
                                                uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclmdlRIBindStream(aclmdlRI modelRI,
                                                aclrtStream stream,
                                                uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclmdlRIEndTask(aclmdlRI modelRI,
                                             aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve);
ACL_FUNC_VISIBILITY aclError aclmdlRIUnbindStream(aclmdlRI modelRI,
                                                  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRISetName(aclmdlRI modelRI,
                                             const char *name);
ACL_FUNC_VISIBILITY aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen,
                                             char *name);
ACL_FUNC_VISIBILITY aclError aclmdlRIGetId(aclmdlRI modelRI,
                                           uint32_t *modelRIId);
/* Task introspection (CANN: experimental).  streams NULL: *numStreams gets
 * the count; else *numStreams is the array's size (at least the count) and
 * gets the count.  The streams are the model's own, one per captured
 * stream, valid until aclmdlRIDestroy; only the calls below take them. */
ACL_FUNC_VISIBILITY aclError aclmdlRIGetStreams(aclmdlRI modelRI,
                                                aclrtStream *streams,
                                                uint32_t *numStreams);
ACL_FUNC_VISIBILITY aclError aclmdlRIGetTasksByStream(aclrtStream stream,
                                                      aclmdlRITask *tasks,
                                                      uint32_t *numTasks);
ACL_FUNC_VISIBILITY aclError aclmdlRITaskGetType(aclmdlRITask task,
                                                 aclmdlRITaskType *type);
ACL_FUNC_VISIBILITY aclError aclmdlRITaskGetSeqId(aclmdlRITask task,
                                                  uint32_t *id);

ACL_FUNC_VISIBILITY aclError aclrtCreateLabel(aclrtLabel *label);
ACL_FUNC_VISIBILITY aclError aclrtSetLabel(aclrtLabel label,
                                           aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabel(aclrtLabel label);
ACL_FUNC_VISIBILITY aclError aclrtCreateLabelList(aclrtLabel *labels,
                                                  size_t num,
                                                  aclrtLabelList *labelList);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabelList(aclrtLabelList labelList);
ACL_FUNC_VISIBILITY aclError aclrtSwitchLabelByIndex(void *ptr,
                                                     uint32_t maxValue,
                                                     aclrtLabelList labelList,
                                                     aclrtStream stream);

/* API injection (CANN's "API Hook" chapter): redirect a public aclrt* or
 * aclmdlRI* call of CANN's hook table to a function of the same signature,
 * stored as aclrtApiFunc; originFunc is the implementation, which a hook
 * may call. */
typedef int (*aclrtApiFunc)(void);
ACL_FUNC_VISIBILITY aclError aclrtApiInjectionSetFunc(const char *name,
                                                      aclrtApiFunc func);
ACL_FUNC_VISIBILITY aclError aclrtApiInjectionGetFunc(const char *name,
                                                      aclrtApiFunc *originFunc,
                                                      aclrtApiFunc *currentFunc);

#ifdef __cplusplus
}
#endif

#endif /* EVRT_ACL_RT_H */
