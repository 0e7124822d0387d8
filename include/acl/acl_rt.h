/*
 * acl/acl_rt.h - the runtime part (streams, events, contexts, memory,
 * callbacks, notifies) of evrt's Ascend ACL compatibility layer.
 *
 * Prototypes, type and enum names and numeric values follow the public CANN
 * header acl/acl_rt.h (hicann/runtime include/external/acl/acl_rt.h, version
 * 1.17.0); each was written here from those facts.  Only the subset listed in
 * docs/acl.md is declared.  Compiles as C11 and as C++.
 */
#ifndef EVRT_ACL_RT_H
#define EVRT_ACL_RT_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

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

/* ======================================================================
 * Failing tasks, stream stop/abort, subscribed host functions,
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

#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x1UL

typedef void *aclrtFuncHandle;
typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);

typedef enum {
  ACL_RT_STREAM_STATE_CREATE_POST = 1,
  ACL_RT_STREAM_STATE_DESTROY_PRE,
} aclrtStreamState;
typedef void (*aclrtStreamStateCallback)(aclrtStream stm,
                                         aclrtStreamState state, void *args);

#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14
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
  ACL_RT_ERROR_OTHERS = 0xFFFF,
} aclrtErrorType;

typedef enum aclrtAicoreErrorType {
  ACL_RT_AICORE_ERROR_UNKNOWN,
  ACL_RT_AICORE_ERROR_SW,
  ACL_RT_AICORE_ERROR_HW_LOCAL,
} aclrtAicoreErrorType;

#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20
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
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo);

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
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid);

#ifdef __cplusplus
}
#endif

#endif /* EVRT_ACL_RT_H */
