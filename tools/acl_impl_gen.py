#!/usr/bin/env python3
"""Generate the ACL "Impl" entry points (CANN's acl/acl_rt_impl.h layer).

CANN's libascendcl implements every public call aclX as a forwarder to
aclXImpl, and publishes aclXImpl in acl/acl_rt_impl.h: CANN's own libraries
(HCCL, GE) call the Impl entry points, and a tool that interposes the public
symbols (profilers, API tracers) reaches the runtime through them.  The Impl
prototype is the public one with "Impl" appended (CANN generates both from
one table), except aclAppLogImpl, which takes a va_list.

This script writes, from evrt's own public declarations (include/acl/*.h):
  include/acl/acl_rt_impl.h  - the Impl prototypes, for the calls below that
                               evrt declares (aclAppLogImpl written by hand);
  src/acl/acl_impl.c         - a forwarder per Impl entry point of a call
                               that cannot be hooked, and for each hookable
                               call (HOOK_BASES, CANN's API injection) the
                               public trampoline and its hook slot;
  src/acl/acl_hook_names.h   - renames the hookable aclX to aclXImpl in the
                               layer's other sources (their implementation);
and adds the names to src/acl/ascendcl.map.  `--check` only compares.

IMPL_BASES: the calls whose Impl form CANN's acl_rt_impl.h declares
(hicann/runtime include/external/acl/acl_rt_impl.h), names only.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPL_BASES = """
aclrtPeekAtLastError aclrtGetLastError aclrtSetExceptionInfoCallback
aclrtGetTaskIdFromExceptionInfo aclrtGetStreamIdFromExceptionInfo
aclrtGetThreadIdFromExceptionInfo aclrtGetDeviceIdFromExceptionInfo
aclrtGetErrorCodeFromExceptionInfo aclrtSubscribeReport aclrtLaunchCallback
aclrtProcessReport aclrtUnSubscribeReport aclrtCreateContext
aclrtDestroyContext aclrtSetCurrentContext aclrtGetCurrentContext
aclrtCtxGetSysParamOpt aclrtCtxSetSysParamOpt aclrtGetSysParamOpt
aclrtSetSysParamOpt aclrtSetDevice aclrtResetDevice aclrtResetDeviceForce
aclrtGetDevice aclrtSetStreamFailureMode aclrtGetRunMode
aclrtSynchronizeDevice aclrtSynchronizeDeviceWithTimeout aclrtSetTsDevice
aclrtGetDeviceUtilizationRate aclrtGetDeviceCount aclrtCreateEvent
aclrtCreateEventWithFlag aclrtCreateEventExWithFlag aclrtDestroyEvent
aclrtRecordEvent aclrtResetEvent aclrtQueryEvent aclrtQueryEventStatus
aclrtQueryEventWaitStatus aclrtSynchronizeEvent
aclrtSynchronizeEventWithTimeout aclrtEventElapsedTime aclrtEventGetTimestamp
aclrtMalloc aclrtMallocAlign32 aclrtMallocCached aclrtMallocWithCfg
aclrtMallocForTaskScheduler aclrtMallocHostWithCfg aclrtPointerGetAttributes
aclrtHostRegister aclrtHostUnregister aclrtGetThreadLastTaskId
aclrtStreamGetId aclrtMemFlush aclrtMemInvalidate aclrtFree aclrtMallocHost
aclrtFreeHost aclrtFreeWithDevSync aclrtFreeHostWithDevSync aclrtMemcpy
aclrtMemset aclrtMemcpyAsync aclrtMemcpyAsyncWithCondition aclrtMemcpy2d
aclrtMemcpy2dAsync aclrtMemsetAsync aclrtReserveMemAddress
aclrtReleaseMemAddress aclrtMallocPhysical aclrtFreePhysical aclrtMapMem
aclrtUnmapMem aclrtCreateStream aclrtCreateStreamWithConfig
aclrtDestroyStream aclrtDestroyStreamForce aclrtSynchronizeStream
aclrtSynchronizeStreamWithTimeout aclrtStreamQuery aclrtStreamGetPriority
aclrtStreamGetFlags aclrtStreamWaitEvent aclrtStreamWaitEventWithTimeout
aclrtDeviceCanAccessPeer aclrtDeviceEnablePeerAccess
aclrtDeviceDisablePeerAccess aclrtGetMemInfo aclrtGetMemUsageInfo
aclrtSetOpWaitTimeout aclrtSetOpExecuteTimeOut aclrtSetOpExecuteTimeOutWithMs
aclrtSetOpExecuteTimeOutV2 aclrtGetOpTimeOutInterval
aclrtSetStreamOverflowSwitch aclrtGetStreamOverflowSwitch
aclrtSetDeviceSatMode aclrtGetDeviceSatMode aclrtGetOverflowStatus
aclrtResetOverflowStatus aclrtQueryDeviceStatus aclrtMemGetAccess
aclrtMemExportToShareableHandle aclrtMemExportToShareableHandleV2
aclrtMemImportFromShareableHandle aclrtMemImportFromShareableHandleV2
aclrtMemSetPidToShareableHandle aclrtMemSetPidToShareableHandleV2
aclrtMemGetAllocationGranularity aclrtDeviceGetBareTgid aclrtCmoAsync
aclrtDeviceTaskAbort aclrtStreamAbort aclrtGetMemcpyDescSize
aclrtSetMemcpyDesc aclrtMemcpyAsyncWithDesc aclrtMemcpyAsyncWithOffset
aclrtValueWrite aclrtValueWait aclrtGetStreamAvailableNum
aclrtSetStreamAttribute aclrtGetStreamAttribute aclrtCreateNotify
aclrtDestroyNotify aclrtCntNotifyCreate aclrtCntNotifyDestroy
aclrtRecordNotify aclrtWaitAndResetNotify aclrtGetNotifyId aclrtGetEventId
aclrtGetEventAvailNum aclrtGetDeviceInfo aclrtDeviceGetStreamPriorityRange
aclrtGetDeviceCapability aclrtDeviceGetUuid aclrtCtxGetCurrentDefaultStream
aclrtGetPrimaryCtxState aclrtReduceAsync aclrtGetSocName
aclrtGetDeviceResLimit aclrtSetDeviceResLimit aclrtResetDeviceResLimit
aclrtGetStreamResLimit aclrtSetStreamResLimit aclrtResetStreamResLimit
aclrtUseStreamResInCurrentThread aclrtUnuseStreamResInCurrentThread
aclrtGetResInCurrentThread aclrtGetDevicesTopo aclrtMemcpyBatch
aclrtIpcMemGetExportKey aclrtMemcpyBatchAsync aclrtIpcMemClose
aclrtIpcMemImportByKey aclrtIpcMemSetImportPid aclrtNotifyBatchReset
aclrtNotifyGetExportKey aclrtNotifyImportByKey aclrtNotifySetImportPid
aclDataTypeSize aclCreateDataBuffer aclDestroyDataBuffer aclUpdateDataBuffer
aclGetDataBufferAddr aclGetDataBufferSize aclGetDataBufferSizeV2
aclrtAllocatorCreateDesc aclrtAllocatorDestroyDesc aclrtAllocatorSetObjToDesc
aclrtAllocatorSetAllocFuncToDesc aclrtAllocatorSetFreeFuncToDesc
aclrtAllocatorSetAllocAdviseFuncToDesc
aclrtAllocatorSetGetAddrFromBlockFuncToDesc aclrtAllocatorRegister
aclrtAllocatorGetByStream aclrtAllocatorUnregister aclrtGetVersion
aclInitCallbackRegister aclInitCallbackUnRegister aclFinalizeCallbackRegister
aclFinalizeCallbackUnRegister aclrtGetLogicDevIdByUserDevId
aclrtGetUserDevIdByLogicDevId aclrtGetLogicDevIdByPhyDevId
aclrtGetPhyDevIdByLogicDevId aclInit aclFinalize aclFinalizeReference
aclsysGetCANNVersion aclsysGetVersionStr aclsysGetVersionNum
aclGetRecentErrMsg aclGetCannAttributeList aclGetCannAttribute
aclGetDeviceCapability aclFloat16ToFloat aclFloatToFloat16
aclrtLaunchHostFunc aclrtRandomNumAsync aclrtRegStreamStateCallback
aclrtRegDeviceStateCallback aclrtGetOpExecuteTimeout
aclrtDevicePeerAccessStatus aclrtStreamStop aclrtCheckArchCompatibility
aclrtGetErrorVerbose aclrtRepairError aclrtMemSetAccess
aclrtIpcGetEventHandle aclrtIpcOpenEventHandle aclrtMemRetainAllocationHandle
aclrtMemGetAllocationPropertiesFromHandle
""".split()

# HOOK_BASES: the calls CANN's API injection can redirect
# (aclrtApiInjectionSetFunc): its hook tables ACL_RT_FUNC_MAP,
# ACL_RT_ALLOCATOR_FUNC_MAP and ACL_MDLRI_FUNC_MAP (hicann/runtime
# src/acl/aclrt_impl/acl_rt_wrapper.h), names only.  Those evrt declares get
# a trampoline as their public symbol (see HOOKS_TEXT).
HOOK_BASES = """aclrtPeekAtLastError aclrtGetLastError aclrtSetExceptionInfoCallback
aclrtExceptionInfoCallbackRegister aclrtExceptionInfoCallbackUnregister
aclrtGetTaskIdFromExceptionInfo aclrtGetStreamIdFromExceptionInfo
aclrtGetThreadIdFromExceptionInfo aclrtGetDeviceIdFromExceptionInfo
aclrtGetErrorCodeFromExceptionInfo aclrtSubscribeReport
aclrtGetArgsFromExceptionInfo aclrtGetFuncHandleFromExceptionInfo
aclrtBinarySetExceptionCallback aclrtLaunchCallback aclrtProcessReport
aclrtUnSubscribeReport aclrtCreateContext aclrtDestroyContext
aclrtSetCurrentContext aclrtGetCurrentContext aclrtCtxGetSysParamOpt
aclrtCtxSetSysParamOpt aclrtGetSysParamOpt aclrtSetSysParamOpt aclrtSetDevice
aclrtResetDevice aclrtResetDeviceForce aclrtGetDevice aclrtSetStreamFailureMode
aclrtGetRunMode aclrtSynchronizeDevice aclrtSynchronizeDeviceWithTimeout
aclrtSetTsDevice aclrtGetDeviceUtilizationRate aclrtGetDeviceCount
aclrtCreateEvent aclrtCreateEventWithFlag aclrtCreateEventExWithFlag
aclrtDestroyEvent aclrtRecordEvent aclrtRecordEventWithFlag aclrtResetEvent
aclrtQueryEvent aclrtQueryEventStatus aclrtQueryEventWaitStatus
aclrtSynchronizeEvent aclrtSynchronizeEventWithTimeout aclrtEventElapsedTime
aclrtEventGetTimestamp aclrtMalloc aclrtMallocAlign32 aclrtMallocCached
aclrtMallocWithCfg aclrtMallocForTaskScheduler aclrtMallocHostWithCfg
aclrtPointerGetAttributes aclrtHostRegister aclrtHostRegisterV2
aclrtHostGetDevicePointer aclrtHostUnregister aclrtHostMemMapCapabilities
aclrtGetThreadLastTaskId aclrtStreamGetId aclrtMemFlush aclrtMemInvalidate
aclrtFree aclrtMallocHost aclrtMemAllocManaged aclrtFreeHost
aclrtFreeWithDevSync aclrtFreeHostWithDevSync aclrtMemcpy aclrtMemset
aclrtMemcpyAsync aclrtMemsetD32 aclrtMemsetD32Async
aclrtMemcpyAsyncWithCondition aclrtMemcpy2d aclrtMemcpy2dAsync
aclrtMemsetAsync aclrtReserveMemAddress aclrtReleaseMemAddress
aclrtMallocPhysical aclrtFreePhysical aclrtMapMem aclrtUnmapMem
aclrtMemMapNoAccess aclrtCreateStream aclrtCreateStreamWithConfig
aclrtDestroyStream aclrtDestroyStreamForce aclrtSynchronizeStream
aclrtSynchronizeStreamWithTimeout aclrtStreamQuery aclrtStreamGetPriority
aclrtStreamGetFlags aclrtStreamWaitEvent aclrtStreamWaitEventWithFlag
aclrtStreamWaitEventWithTimeout aclrtSetGroup aclrtGetGroupCount
aclrtCreateGroupInfo aclrtDestroyGroupInfo aclrtGetAllGroupInfo
aclrtGetGroupInfoDetail aclrtDeviceCanAccessPeer aclrtDeviceEnablePeerAccess
aclrtDeviceDisablePeerAccess aclrtGetMemInfo aclrtGetMemUsageInfo
aclrtSetOpWaitTimeout aclrtSetOpExecuteTimeOut aclrtSetOpExecuteTimeOutWithMs
aclrtSetOpExecuteTimeOutV2 aclrtGetOpTimeOutInterval
aclrtSetStreamOverflowSwitch aclrtGetStreamOverflowSwitch
aclrtSetDeviceSatMode aclrtGetDeviceSatMode aclrtGetOverflowStatus
aclrtResetOverflowStatus aclrtQueryDeviceStatus aclrtCreateBinary
aclrtDestroyBinary aclrtBinaryLoad aclrtBinaryUnLoad aclrtBinaryGetFunction
aclrtBinaryEnumerateFunctions aclrtLaunchKernel aclrtMemGetAccess
aclrtMemExportToShareableHandle aclrtMemExportToShareableHandleV2
aclrtMemImportFromShareableHandle aclrtMemImportFromShareableHandleV2
aclrtMemSetPidToShareableHandle aclrtMemSetPidToShareableHandleV2
aclrtMemGetAllocationGranularity aclrtDeviceGetBareTgid aclrtCmoAsync
aclrtGetMemUceInfo aclrtDeviceTaskAbort aclrtMemUceRepair aclrtStreamAbort
aclrtBinaryLoadFromFile aclrtBinaryGetDevAddress aclrtBinaryGetFunctionByEntry
aclrtBinaryGetFunctionCount aclrtBinaryGetGlobal aclrtGetFuncBySymbol
aclrtGetFunctionAddr aclrtGetFunctionSize aclrtGetMemcpyDescSize
aclrtSetMemcpyDesc aclrtMemcpyAsyncWithDesc aclrtMemcpyAsyncWithOffset
aclrtKernelArgsGetHandleMemSize aclrtKernelArgsGetMemSize aclrtKernelArgsInit
aclrtKernelArgsInitByUserMem aclrtKernelArgsAppend
aclrtKernelArgsAppendPlaceHolder aclrtKernelArgsGetPlaceHolderBuffer
aclrtKernelArgsParaUpdate aclrtLaunchKernelWithConfig aclmdlRITaskGetParams
aclmdlRITaskSetParams aclmdlRIKernelTaskGetAttribute aclmdlRIUpdate
aclrtKernelArgsFinalize aclrtValueWrite aclrtValueWait
aclrtGetStreamAvailableNum aclrtSetStreamAttribute aclrtGetStreamAttribute
aclrtCreateNotify aclrtDestroyNotify aclrtCntNotifyCreate aclrtCntNotifyDestroy
aclrtRecordNotify aclrtWaitAndResetNotify aclrtGetNotifyId aclrtGetEventId
aclrtGetEventAvailNum aclrtGetDeviceInfo aclrtDeviceGetStreamPriorityRange
aclrtGetDeviceCapability aclrtDeviceGetUuid aclrtDeviceGetPCIBusId
aclrtDeviceGetByPCIBusId aclrtDeviceSetLimit aclrtDeviceGetLimit
aclrtCtxGetCurrentDefaultStream aclrtGetPrimaryCtxState aclrtReduceAsync
aclrtSetDeviceWithoutTsdVXX aclrtResetDeviceWithoutTsdVXX
aclrtGetDeviceResLimit aclrtSetDeviceResLimit aclrtResetDeviceResLimit
aclrtGetStreamResLimit aclrtSetStreamResLimit aclrtResetStreamResLimit
aclrtUseStreamResInCurrentThread aclrtUnuseStreamResInCurrentThread
aclrtGetResInCurrentThread aclrtCreateLabel aclrtSetLabel aclrtDestroyLabel
aclrtCreateLabelList aclrtDestroyLabelList aclrtSwitchLabelByIndex
aclrtActiveStream aclrtSwitchStream aclrtGetFunctionName aclrtGetBufFromChain
aclrtGetBufChainNum aclrtAppendBufChain aclrtCopyBufRef aclrtGetBufUserData
aclrtSetBufUserData aclrtGetBufData aclrtGetBufDataLen aclrtSetBufDataLen
aclrtFreeBuf aclrtAllocBuf aclrtBinaryLoadFromData aclrtRegisterCpuFunc
aclrtCmoAsyncWithBarrier aclrtCmoWaitBarrier aclrtGetDevicesTopo
aclrtMemcpyBatch aclrtMemcpyBatchV2 aclrtIpcMemGetExportKey
aclrtMemcpyBatchAsync aclrtMemcpyBatchAsyncV2 aclrtIpcMemClose
aclrtIpcMemImportByKey aclrtIpcMemSetImportPid aclrtIpcMemSetAttr
aclrtIpcMemImportPidInterServer aclrtNotifyBatchReset aclrtNotifyGetExportKey
aclrtNotifyImportByKey aclrtNotifySetImportPid
aclrtNotifySetImportPidInterServer aclrtCheckMemType
aclrtGetLogicDevIdByUserDevId aclrtGetUserDevIdByLogicDevId
aclrtGetLogicDevIdByPhyDevId aclrtGetPhyDevIdByLogicDevId
aclrtGetUserDevIdByPhyDevId aclrtGetPhyDevIdByUserDevId aclrtProfTrace
aclrtLaunchKernelV2 aclrtLaunchKernelWithHostArgs
aclrtLaunchKernelWithArgsArray aclrtLaunchSIMTKernelWithArgsArray
aclrtLaunchSIMTKernelWithHostArgs aclrtCtxGetFloatOverflowAddr
aclrtGetFloatOverflowStatus aclrtResetFloatOverflowStatus
aclrtNpuGetFloatOverFlowStatus aclrtNpuClearFloatOverFlowStatus
aclrtLaunchHostFunc aclrtGetHardwareSyncAddr aclrtRandomNumAsync
aclrtRegStreamStateCallback aclrtRegDeviceStateCallback
aclrtSetDeviceTaskAbortCallback aclrtGetOpExecuteTimeout
aclrtDevicePeerAccessStatus aclrtStreamStop aclrtTaskUpdateAsync
aclrtCmoGetDescSize aclrtCmoSetDesc aclrtCmoAsyncWithDesc
aclrtCheckArchCompatibility aclrtCntNotifyRecord aclrtCntNotifyWaitWithTimeout
aclrtCntNotifyReset aclrtCntNotifyGetId aclrtPersistentTaskClean
aclrtGetErrorVerbose aclrtRepairError aclrtMemSetAccess
aclrtSnapShotProcessLock aclrtSnapShotProcessUnlock aclrtSnapShotProcessBackup
aclrtSnapShotProcessRestore aclrtSnapShotCallbackRegister
aclrtSnapShotCallbackUnregister aclrtCacheLastTaskOpInfo
aclrtCacheLastTaskExtendInfo aclrtGetFunctionAttribute aclrtFunctionGetBinary
aclrtFunctionGetParamCount aclrtFunctionGetParamInfo
aclrtFunctionGetAvailDynUbufPerBlock aclrtIpcGetEventHandle
aclrtIpcOpenEventHandle aclrtMemRetainAllocationHandle
aclrtMemGetAllocationPropertiesFromHandle aclrtReserveMemAddressNoUCMemory
aclrtMemGetAddressRange aclrtGetSocName aclrtGetVersion aclrtMemP2PMap
aclrtMemPoolCreate aclrtMemPoolDestroy aclrtMemPoolSetAttr aclrtMemPoolGetAttr
aclrtMemPoolMallocAsync aclrtMemPoolFreeAsync aclrtMemManagedGetAttr
aclrtMemManagedGetAttrs aclrtMemManagedAdvise aclrtMemPoolTrimTo
aclrtMemManagedPrefetchAsync aclrtMemManagedPrefetchBatchAsync
aclrtDeviceGetHostAtomicCapabilities aclrtDeviceGetP2PAtomicCapabilities
aclrtGetSymbolAddress aclrtGetSymbolSize aclrtMemcpyFromSymbol
aclrtMemcpyFromSymbolAsync aclrtMemcpyToSymbol aclrtMemcpyToSymbolAsync
aclrtMemMapSelectedLink aclrtDeviceL2CacheFlush aclrtMemMapSetLink
aclrtHostGetDevicePointerAddrRange
aclrtAllocatorCreateDesc aclrtAllocatorDestroyDesc aclrtAllocatorSetObjToDesc
aclrtAllocatorSetAllocFuncToDesc aclrtAllocatorSetFreeFuncToDesc
aclrtAllocatorSetAllocAdviseFuncToDesc
aclrtAllocatorSetGetAddrFromBlockFuncToDesc aclrtAllocatorRegister
aclrtAllocatorGetByStream aclrtAllocatorUnregister
aclmdlRIExecuteAsync aclmdlRIDestroy aclmdlRICaptureBegin
aclmdlRICaptureGetInfo aclmdlRICaptureEnd aclmdlRIDebugPrint
aclmdlRIDebugJsonPrint aclmdlRICaptureThreadExchangeMode
aclmdlRICaptureTaskGrpBegin aclmdlRICaptureTaskGrpEnd
aclmdlRICaptureTaskUpdateBegin aclmdlRICaptureTaskUpdateEnd aclmdlRIBuildBegin
aclmdlRIBindStream aclmdlRIEndTask aclmdlRIBuildEnd aclmdlRIUnbindStream
aclmdlRIExecute aclmdlRISetName aclmdlRIGetName aclmdlRIGetId aclmdlRIAbort
aclmdlRITaskGetSeqId aclmdlRIGetStreams aclmdlRIGetTasksByStream
aclmdlRITaskGetType aclmdlRITaskDisable aclmdlRIDestroyRegisterCallback
aclmdlRIDestroyUnregisterCallback aclmdlRICondHandleCreate
aclmdlRICondHandleGetCondPtr aclmdlRIAddCondTask aclmdlRICaptureToModelRIBegin
""".split()

HEADER = "include/acl/acl_rt_impl.h"
SOURCE = "src/acl/acl_impl.c"
MAP = "src/acl/ascendcl.map"


def declarations():
    """name -> (return type, parameter text) of every public declaration."""
    decls = {}
    inc = os.path.join(ROOT, "include", "acl")
    for fn in sorted(os.listdir(inc)):
        if not fn.endswith(".h") or fn == os.path.basename(HEADER):
            continue
        text = open(os.path.join(inc, fn)).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        for m in re.finditer(r"ACL_FUNC_VISIBILITY\s+([^;{}]*?)\b([A-Za-z_]\w*)"
                             r"\s*\(([^;{}]*?)\)\s*;", text):
            ret = " ".join(m.group(1).split())
            params = " ".join(m.group(3).split())
            decls[m.group(2)] = (ret, params)
    return decls


def arg_names(params):
    if params in ("", "void"):
        return []
    names = []
    for p in params.split(","):
        m = re.search(r"([A-Za-z_]\w*)\s*(\[\s*\])?\s*$", p.strip())
        if not m or "(" in p:
            raise SystemExit("acl_impl_gen: cannot name parameter %r" % p)
        names.append(m.group(1))
    return names


def generate():
    decls = declarations()
    names = [b for b in IMPL_BASES if b in decls and b != "aclAppLog"]
    hooks = sorted(b for b in set(HOOK_BASES) if b in decls)
    for b in hooks:
        if decls[b][0] == "void":
            raise SystemExit("acl_impl_gen: hookable %s returns void" % b)
    proto = []
    fwd = []
    for b in names:
        ret, params = decls[b]
        sep = "" if ret.endswith("*") else " "
        proto.append("ACL_FUNC_VISIBILITY %s%s%sImpl(%s);" %
                     (ret, sep, b, params or "void"))
        if b in hooks:
            continue  # aclXImpl is the implementation itself
        call = "%s(%s)" % (b, ", ".join(arg_names(params)))
        fwd.append("%s%s%sImpl(%s) {\n  return %s;\n}\n" %
                   (ret, sep, b, params or "void", call))
    hidden = []
    tramp = []
    table = []
    for i, b in enumerate(hooks):
        ret, params = decls[b]
        sep = "" if ret.endswith("*") else " "
        if b not in names:
            hidden.append("ACL__HIDDEN %s%s%sImpl(%s);" %
                          (ret, sep, b, params or "void"))
        args = ", ".join(arg_names(params))
        tramp.append("%s%s%s(%s) {\n  ACL__HOOKED(%d, %s, (%s));\n"
                     "  return %sImpl(%s);\n}\n" %
                     (ret, sep, b, params or "void", i, b, args, b, args))
        table.append('    {"%s", ACL__API(%sImpl)},' % (b, b))
    header = HEADER_TEXT.replace("@PROTOS@", "\n".join(proto))
    source = (SOURCE_TEXT.replace("@FWD@", "\n".join(fwd))
              .replace("@HIDDEN@", "\n".join(hidden))
              .replace("@N@", str(len(hooks)))
              .replace("@TRAMP@", "\n".join(tramp))
              .replace("@TABLE@", "\n".join(table)))
    renames = NAMES_TEXT.replace("@DEFS@", "\n".join(
        "#define %s %sImpl" % (b, b) for b in hooks))
    impl_names = [b + "Impl" for b in names] + ["aclAppLogImpl"]
    return header, source, renames, impl_names


HEADER_TEXT = """/*
 * acl/acl_rt_impl.h - the Impl entry points of evrt's ACL layer, as CANN's
 * acl/acl_rt_impl.h publishes them: aclXImpl does what aclX does, and
 * CANN's own libraries call it directly, so that a tool interposing the
 * public aclX (a profiler, an API tracer) sees only the application's calls
 * and can reach the runtime through aclXImpl.  Generated by
 * tools/acl_impl_gen.py from the public declarations (the prototype is the
 * public one with "Impl" appended; aclAppLogImpl takes a va_list); only the
 * calls evrt implements are declared.  Do not edit.
 */
#ifndef EVRT_ACL_RT_IMPL_H
#define EVRT_ACL_RT_IMPL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "acl.h"
#include "acl_base.h"
#include "acl_rt.h"
#include "acl_rt_allocator.h"
#include "acl_rt_memory_soma.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY void aclAppLogImpl(aclLogLevel logLevel, const char *func,
                                       const char *file, uint32_t line,
                                       const char *fmt, va_list args);

@PROTOS@

#ifdef __cplusplus
}
#endif

#endif
"""

SOURCE_TEXT = """/*
 * acl_impl.c - the public entry points of the hookable calls and the Impl
 * entry points of the others.  Generated by tools/acl_impl_gen.py; do not
 * edit.  (aclAppLogImpl is in acl_base.c.)
 *
 * Hookable calls (CANN's API injection, aclrtApiInjectionSetFunc in
 * acl_hook.c): the implementation of aclX is aclXImpl (acl_hook_names.h
 * renames it in every other source of the layer), and the public aclX
 * below is a trampoline: one acquire load of the call's hook slot and a
 * branch that is not taken while nothing is hooked, then a tail call of
 * aclXImpl.  A set slot holds the hook, which is called instead.  Calls
 * inside the layer reach aclXImpl directly and are never hooked, as in
 * CANN, whose own libraries call the Impl entry points.  aclXImpl is
 * exported where CANN's acl_rt_impl.h declares it, hidden otherwise.
 *
 * Other calls: aclXImpl forwards to aclX.  libascendcl.so is linked with
 * -Bsymbolic-functions, so the forwarders reach this library's own aclX
 * even when a program or a preloaded tool interposes aclX.
 */
#include <acl/acl_rt_impl.h>

#include <stdlib.h>
#include <string.h>

#include "acl_hook.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define ACL__HIDDEN __attribute__((visibility("hidden")))

/* The implementations CANN's acl_rt_impl.h does not declare. */
@HIDDEN@

/* Impl entry points of the calls that cannot be hooked. */
@FWD@
/* One slot per hookable call, in the order of acl__hooks (by name); NULL
 * while the call is not hooked.  Written by acl__hook_set only. */
static _Atomic(aclrtApiFunc) slots[@N@];

/* acquire: pairs with acl__hook_set's release store, so that a call that
 * runs the hook sees what the thread that installed it wrote before (the
 * hook's saved original, its counters).  On x86-64 a plain load. */
#define ACL__HOOKED(i, name, args)                                             \\
  do {                                                                         \\
    aclrtApiFunc h_ = atomic_load_explicit(&slots[i], memory_order_acquire);   \\
    if (__builtin_expect(h_ != NULL, 0))                                       \\
      return ((__typeof__(&name##Impl))(void (*)(void))h_)args;                \\
  } while (0)

/* Function pointers of any type go through void (*)(void), the type GCC
 * accepts as generic (-Wcast-function-type). */
#define ACL__API(f) ((aclrtApiFunc)(void (*)(void))(f))

@TRAMP@
static const struct {
  const char *name;
  aclrtApiFunc impl;
} hooks[@N@] = {
@TABLE@
};

static int by_name(const void *key, const void *elem) {
  return strcmp((const char *)key, *(const char *const *)elem);
}

bool acl__hook_find(const char *name, _Atomic(aclrtApiFunc) **slot,
                    aclrtApiFunc *impl) {
  const void *e = bsearch(name, hooks, @N@, sizeof hooks[0], by_name);
  if (!e)
    return false;
  size_t i = (size_t)((const char *)e - (const char *)hooks) / sizeof hooks[0];
  *slot = &slots[i];
  *impl = hooks[i].impl;
  return true;
}
"""

NAMES = "src/acl/acl_hook_names.h"
NAMES_TEXT = """/*
 * acl_hook_names.h - the implementation of each hookable ACL call aclX is
 * named aclXImpl; its public aclX is the trampoline in acl_impl.c (see
 * there and acl_hook.c).  Included first by acl_internal.h, so that in every
 * source of the layer but acl_impl.c the declarations of acl/acl_rt.h and
 * the definitions and calls of aclX name aclXImpl.  Generated by
 * tools/acl_impl_gen.py from HOOK_BASES; do not edit.
 */
#ifndef EVRT_ACL_HOOK_NAMES_H
#define EVRT_ACL_HOOK_NAMES_H

@DEFS@

#endif
"""


def update_map(text, impl_names):
    m = re.search(r"global:\n(.*?)\n  local:", text, re.S)
    cur = [l.strip().rstrip(";") for l in m.group(1).split("\n") if l.strip()]
    keep = [n for n in cur if not n.endswith("Impl")]
    allnames = sorted(set(keep + impl_names))
    body = "\n".join("    %s;" % n for n in allnames)
    return text[:m.start(1)] + body + text[m.end(1):]


def main():
    check = "--check" in sys.argv[1:]
    header, source, renames, impl_names = generate()
    map_path = os.path.join(ROOT, MAP)
    outputs = {HEADER: header, SOURCE: source, NAMES: renames,
               MAP: update_map(open(map_path).read(), impl_names)}
    stale = []
    for rel, content in outputs.items():
        path = os.path.join(ROOT, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old == content:
            continue
        if check:
            stale.append(rel)
        else:
            with open(path, "w") as f:
                f.write(content)
            print("wrote", rel)
    if stale:
        print("out of date (run tools/acl_impl_gen.py):", " ".join(stale))
        return 1
    print("%d Impl entry points" % len(impl_names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
