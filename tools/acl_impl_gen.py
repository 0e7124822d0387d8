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
  src/acl/acl_impl.c         - a forwarder per Impl entry point;
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
    proto = []
    fwd = []
    for b in names:
        ret, params = decls[b]
        sep = "" if ret.endswith("*") else " "
        proto.append("ACL_FUNC_VISIBILITY %s%s%sImpl(%s);" %
                     (ret, sep, b, params or "void"))
        call = "%s(%s)" % (b, ", ".join(arg_names(params)))
        fwd.append("%s%s%sImpl(%s) {\n  return %s;\n}\n" %
                   (ret, sep, b, params or "void", call))
    header = HEADER_TEXT.replace("@PROTOS@", "\n".join(proto))
    source = SOURCE_TEXT.replace("@FWD@", "\n".join(fwd))
    impl_names = [b + "Impl" for b in names] + ["aclAppLogImpl"]
    return header, source, impl_names


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
 * acl_impl.c - the Impl entry points (acl/acl_rt_impl.h): each forwards to
 * the public call.  libascendcl.so is linked with -Bsymbolic-functions, so
 * the forwarders reach this library's own aclX even when a program or a
 * preloaded tool interposes aclX.  Generated by tools/acl_impl_gen.py; do
 * not edit.  (aclAppLogImpl is in acl_base.c.)
 */
#include <acl/acl_rt_impl.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

@FWD@"""


def update_map(text, impl_names):
    m = re.search(r"global:\n(.*?)\n  local:", text, re.S)
    cur = [l.strip().rstrip(";") for l in m.group(1).split("\n") if l.strip()]
    keep = [n for n in cur if not n.endswith("Impl")]
    allnames = sorted(set(keep + impl_names))
    body = "\n".join("    %s;" % n for n in allnames)
    return text[:m.start(1)] + body + text[m.end(1):]


def main():
    check = "--check" in sys.argv[1:]
    header, source, impl_names = generate()
    map_path = os.path.join(ROOT, MAP)
    outputs = {HEADER: header, SOURCE: source,
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
