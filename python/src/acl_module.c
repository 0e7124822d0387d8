/*
 * acl_module.c - pyACL-style functions (evrt.acl, evrt.acl.rt, evrt.acl.util)
 * over evrt's ACL compatibility layer (include/acl/acl.h).
 *
 * pyACL conventions (reference/acl-streams-events.md section 4): handles
 * (streams, events, contexts, memory) are Python ints holding the C pointer,
 * 0 is NULL (the default stream); every function returns the aclError as
 * `ret` (int, 0 = success), after its outputs when it has any:
 * `event, ret = acl.rt.create_event()`, `ret = acl.rt.record_event(e, s)`.
 * Functions never raise for an ACL failure; they raise TypeError /
 * OverflowError for arguments of the wrong Python type, as pyACL does.
 *
 * Calls that may block (synchronize*, process_report) release the GIL.
 * Python callbacks (launch_callback, launch_host_func) take the GIL only
 * while they run; an exception they raise goes to sys.unraisablehook (ACL
 * has no channel to report it), and the references they hold are dropped
 * once they have run.
 *
 * Files, one per ACL family (each ends with its method table, which
 * evrtpy_acl_init below adds to its module; shared helpers in acl_common.h):
 *   acl_module.c        acl.init / finalize / get_recent_err_msg, the
 *                       constants, the modules and their registration
 *   acl_base.c          acl.*: acl_base.h (data buffers, types), system,
 *                       versions
 *   acl_init_callback.c acl.*: init / finalize callbacks, finalize
 *                       reference
 *   acl_rt_device.c     devices and contexts
 *   acl_rt_stream.c     streams, switches, stream parameters
 *   acl_rt_event.c      events, interprocess event handles
 *   acl_rt_callback.c   callbacks, host functions, reports
 *   acl_rt_memory.c     memory: allocation, copies, fills, queries
 *   acl_rt_pool.c       memory pools, managed memory
 *   acl_rt_copy.c       batch copies, copy with offset, random numbers
 *   acl_rt_vmm.c        virtual and physical memory
 *   acl_rt_allocator.c  the external allocator interface
 *   acl_rt_failure.c    failures, values, notifies, interprocess memory,
 *                       subscribed host functions, operator timeouts
 *   acl_util.c          acl.util: pointers and bytes
 *   acl_mdl.c           acl.mdl (its own init, evrtpy_acl_mdl_init)
 */
#include "acl_common.h"

#ifdef EVRTPY_HAVE_ACL

#include <acl/acl_rt_memory_soma.h> /* the pool constants */

/* The helpers this file and the family files share are in acl_common.h. */
int evrtpy_acl_to_ptr(PyObject *o, void **out) { return to_ptr(o, out); }
PyObject *evrtpy_acl_ptr_ret(void *p, int ret) { return ptr_ret(p, ret); }

/* ------------------------------------------------------------ acl.* */

/* The GIL is released: aclInit runs the init callbacks, Python ones too
 * (acl_init_callback.c, which says why a thread holding the GIL must not
 * wait for them). */
static PyObject *a_init(PyObject *m, PyObject *args) {
  const char *path = NULL;
  if (!PyArg_ParseTuple(args, "|z:init", &path))
    return NULL;
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclInit(path);
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *a_finalize(PyObject *m, PyObject *unused) {
  aclError r;
  Py_BEGIN_ALLOW_THREADS
  r = aclFinalize();
  Py_END_ALLOW_THREADS
  RET(r);
}

static PyObject *a_get_recent_err_msg(PyObject *m, PyObject *unused) {
  const char *s = aclGetRecentErrMsg();
  char *older = evrtpy_acl_take_carried_msgs(); /* see r_process_report */
  PyObject *res;
  if (!older) {
    if (!s)
      Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
  }
  if (s && *s)
    res = PyUnicode_FromFormat("%s\n%s", s, older);
  else
    res = PyUnicode_DecodeUTF8(older, (Py_ssize_t)strlen(older), "replace");
  PyMem_RawFree(older);
  return res;
}

/* --------------------------------------------------------- tables */

static PyMethodDef acl_methods[] = {
    MV(init, a_init),
    M0(finalize, a_finalize),
    M0(get_recent_err_msg, a_get_recent_err_msg),
    {NULL, NULL, 0, NULL}};

static PyMethodDef rt_methods[] = {
    {NULL, NULL, 0, NULL}};

static PyMethodDef util_methods[] = {
    {NULL, NULL, 0, NULL}};

/* Constants by their ACL names, with the values of the C headers. */
struct named { const char *name; long value; };
#define C(x) {#x, (long)(x)}
static const struct named acl_constants[] = {
    C(ACL_SUCCESS), C(ACL_ERROR_NONE), C(ACL_RT_SUCCESS),
    C(ACL_ERROR_INVALID_PARAM), C(ACL_ERROR_UNINITIALIZE),
    C(ACL_ERROR_REPEAT_INITIALIZE), C(ACL_ERROR_REPEAT_SUBSCRIBE),
    C(ACL_ERROR_STREAM_NOT_SUBSCRIBE), C(ACL_ERROR_THREAD_NOT_SUBSCRIBE),
    C(ACL_ERROR_WAIT_CALLBACK_TIMEOUT), C(ACL_ERROR_REPEAT_FINALIZE),
    C(ACL_ERROR_BAD_ALLOC), C(ACL_ERROR_API_NOT_SUPPORT),
    C(ACL_ERROR_INVALID_DEVICE), C(ACL_ERROR_INVALID_RESOURCE_HANDLE),
    C(ACL_ERROR_FEATURE_UNSUPPORTED), C(ACL_ERROR_INTERNAL_ERROR),
    C(ACL_ERROR_FAILURE), C(ACL_ERROR_RT_FAILURE),
    C(ACL_ERROR_RT_PARAM_INVALID), C(ACL_ERROR_RT_INVALID_DEVICEID),
    C(ACL_ERROR_RT_CONTEXT_NULL), C(ACL_ERROR_RT_STREAM_CONTEXT),
    C(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID),
    C(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL), C(ACL_ERROR_RT_STREAM_SUBSCRIBE),
    C(ACL_ERROR_RT_THREAD_SUBSCRIBE), C(ACL_ERROR_RT_STREAM_NO_CB_REG),
    C(ACL_ERROR_RT_INVALID_HANDLE), C(ACL_ERROR_RT_WAIT_TIMEOUT),
    C(ACL_ERROR_RT_TASK_TIMEOUT), C(ACL_ERROR_RT_STREAM_ABORT),
    C(ACL_ERROR_RT_STREAM_CAPTURED), C(ACL_ERROR_RT_EVENT_CAPTURED),
    C(ACL_ERROR_RT_FEATURE_NOT_SUPPORT), C(ACL_ERROR_RT_MEMORY_ALLOCATION),
    C(ACL_ERROR_RT_NO_DEVICE), C(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
    C(ACL_ERROR_RT_NO_EVENT_RESOURCE), C(ACL_ERROR_RT_NO_STREAM_RESOURCE),
    C(ACL_ERROR_RT_OVER_LIMIT), C(ACL_ERROR_RT_INTERNAL_ERROR),
    C(ACL_ERROR_RT_STREAM_TASK_FULL), C(ACL_ERROR_RT_STREAM_TASK_EMPTY),
    C(ACL_ERROR_RT_STREAM_NOT_COMPLETE), C(ACL_ERROR_RT_END_OF_SEQUENCE),
    C(ACL_ERROR_RT_EVENT_NOT_COMPLETE), C(ACL_ERROR_RT_REPORT_TIMEOUT),
    C(ACL_ERROR_RT_IPC_ERROR), C(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT),
    C(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
    C(ACL_EVENT_SYNC), C(ACL_EVENT_CAPTURE_STREAM_PROGRESS),
    C(ACL_EVENT_TIME_LINE), C(ACL_EVENT_DEVICE_USE_ONLY),
    C(ACL_EVENT_EXTERNAL), C(ACL_EVENT_IPC),
    C(ACL_EVENT_RECORD_DEFAULT), C(ACL_EVENT_RECORD_EXTERNAL),
    C(ACL_EVENT_WAIT_DEFAULT), C(ACL_EVENT_WAIT_EXTERNAL),
    C(ACL_STREAM_FAST_LAUNCH), C(ACL_STREAM_FAST_SYNC),
    C(ACL_STREAM_PERSISTENT), C(ACL_STREAM_HUGE), C(ACL_STREAM_CPU_SCHEDULE),
    C(ACL_STREAM_DEVICE_USE_ONLY), C(ACL_CONTINUE_ON_FAILURE),
    C(ACL_STOP_ON_FAILURE), C(ACL_IPC_EVENT_HANDLE_SIZE),
    /* aclrtStreamConfigAttr, aclRegisterCallbackType */
    C(ACL_RT_STREAM_WORK_ADDR_PTR), C(ACL_RT_STREAM_WORK_SIZE),
    C(ACL_RT_STREAM_FLAG), C(ACL_RT_STREAM_PRIORITY),
    C(ACL_REG_TYPE_ACL_MODEL), C(ACL_REG_TYPE_ACL_OP_EXECUTOR),
    C(ACL_REG_TYPE_ACL_OP_CBLAS), C(ACL_REG_TYPE_ACL_OP_COMPILER),
    C(ACL_REG_TYPE_ACL_TDT_CHANNEL), C(ACL_REG_TYPE_ACL_TDT_QUEUE),
    C(ACL_REG_TYPE_ACL_DVPP), C(ACL_REG_TYPE_ACL_RETR), C(ACL_REG_TYPE_OTHER),
    C(ACL_DEVICE), C(ACL_HOST),
    C(ACL_EVENT_STATUS_COMPLETE), C(ACL_EVENT_STATUS_NOT_READY),
    C(ACL_EVENT_STATUS_RESERVED),
    C(ACL_EVENT_RECORDED_STATUS_NOT_READY),
    C(ACL_EVENT_RECORDED_STATUS_COMPLETE),
    C(ACL_EVENT_WAIT_STATUS_COMPLETE), C(ACL_EVENT_WAIT_STATUS_NOT_READY),
    C(ACL_EVENT_WAIT_STATUS_RESERVED),
    C(ACL_STREAM_STATUS_COMPLETE), C(ACL_STREAM_STATUS_NOT_READY),
    C(ACL_STREAM_STATUS_RESERVED),
    C(ACL_CALLBACK_NO_BLOCK), C(ACL_CALLBACK_BLOCK),
    C(ACL_MEMCPY_HOST_TO_HOST), C(ACL_MEMCPY_HOST_TO_DEVICE),
    C(ACL_MEMCPY_DEVICE_TO_HOST), C(ACL_MEMCPY_DEVICE_TO_DEVICE),
    C(ACL_MEMCPY_DEFAULT),
    C(ACL_MEM_MALLOC_HUGE_FIRST), C(ACL_MEM_MALLOC_HUGE_ONLY),
    C(ACL_MEM_MALLOC_NORMAL_ONLY),
    C(ACL_MAJOR_VERSION), C(ACL_MINOR_VERSION), C(ACL_PATCH_VERSION),
    C(ACL_STREAM_WAIT_VALUE_GEQ), C(ACL_STREAM_WAIT_VALUE_EQ),
    C(ACL_STREAM_WAIT_VALUE_AND), C(ACL_STREAM_WAIT_VALUE_NOR),
    C(ACL_NOTIFY_DEFAULT), C(ACL_NOTIFY_DEVICE_USE_ONLY),
    C(ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT),
    C(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    C(ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT),
    C(ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS),
    C(ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT),
    C(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    C(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT),
    C(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS),
    C(ACL_RT_STREAM_STATE_CREATE_POST), C(ACL_RT_STREAM_STATE_DESTROY_PRE),
    C(ACL_RT_NO_ERROR), C(ACL_RT_ERROR_AICORE), C(ACL_RT_AICORE_ERROR_SW),
    C(ACL_ERROR_RT_VECTOR_CORE_EXCEPTION), C(ACL_ERROR_RT_AICORE_EXCEPTION),
    C(ACL_ERROR_RT_DEVICE_TASK_ABORT), C(ACL_ERROR_RT_NO_NOTIFY_RESOURCE),
    C(ACL_ERROR_RT_MEMORY_FREE),
    {NULL, 0}};
#undef C

/* =====================================================================
 * Issue 16 families (errors, acl_base.h, system / version / device, stream
 * queries, memory, built-in tasks, switches): the pyACL calls of these
 * families, with pyACL's names, argument orders and result tuples
 * (hicann/runtime python/pyACL: py_init_acl.cpp, rt/rt_device.cpp,
 * rt/rt_memory.cpp, rt/rt_stream.cpp, rt/rt_context.cpp,
 * rt/rt_allocator.cpp).  Structs are dicts with pyACL's keys.  Where pyACL
 * truncates or mangles a value, these keep the C value; each case is noted
 * at the function and in docs/python.md.  Their functions are in the
 * family files with the others (acl_base.c, acl_rt_*.c); their constants
 * (cover_constants) are below, added by evrtpy_acl_init.
 * ===================================================================== */

/* Their constants, by ACL name (added to acl.*). */
#define C(x) {#x, (long)(x)}
static const struct named cover_constants[] = {
    /* aclDataType */
    C(ACL_DT_UNDEFINED), C(ACL_FLOAT), C(ACL_FLOAT16), C(ACL_INT8),
    C(ACL_INT32), C(ACL_UINT8), C(ACL_INT16), C(ACL_UINT16), C(ACL_UINT32),
    C(ACL_INT64), C(ACL_UINT64), C(ACL_DOUBLE), C(ACL_BOOL), C(ACL_STRING),
    C(ACL_COMPLEX64), C(ACL_COMPLEX128), C(ACL_BF16), C(ACL_INT4),
    C(ACL_UINT1), C(ACL_COMPLEX32),
    /* aclFormat (common ones) */
    C(ACL_FORMAT_UNDEFINED), C(ACL_FORMAT_NCHW), C(ACL_FORMAT_NHWC),
    C(ACL_FORMAT_ND), C(ACL_FORMAT_NC1HWC0), C(ACL_FORMAT_FRACTAL_Z),
    C(ACL_FORMAT_FRACTAL_NZ),
    /* aclLogLevel */
    C(ACL_DEBUG), C(ACL_INFO), C(ACL_WARNING), C(ACL_ERROR),
    /* aclCannAttr, aclDeviceInfo */
    C(ACL_CANN_ATTR_UNDEFINED), C(ACL_CANN_ATTR_INF_NAN),
    C(ACL_CANN_ATTR_BF16), C(ACL_CANN_ATTR_JIT_COMPILE),
    C(ACL_DEVICE_INFO_UNDEFINED), C(ACL_DEVICE_INFO_AI_CORE_NUM),
    C(ACL_DEVICE_INFO_VECTOR_CORE_NUM), C(ACL_DEVICE_INFO_L2_SIZE),
    /* aclSysParamOpt */
    C(ACL_OPT_DETERMINISTIC), C(ACL_OPT_ENABLE_DEBUG_KERNEL),
    /* aclCANNPackageName */
    C(ACL_PKG_NAME_CANN), C(ACL_PKG_NAME_RUNTIME), C(ACL_PKG_NAME_DRIVER),
    /* aclrtMemAttr */
    C(ACL_DDR_MEM), C(ACL_HBM_MEM), C(ACL_DDR_MEM_HUGE),
    C(ACL_DDR_MEM_NORMAL), C(ACL_HBM_MEM_HUGE), C(ACL_HBM_MEM_NORMAL),
    /* aclrtDeviceStatus, overflow modes, reduce kinds, topology */
    C(ACL_RT_DEVICE_STATUS_NORMAL), C(ACL_RT_DEVICE_STATUS_ABNORMAL),
    C(ACL_RT_OVERFLOW_MODE_SATURATION), C(ACL_RT_OVERFLOW_MODE_INFNAN),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM), C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN),
    C(ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL),
    C(ACL_RT_DEVS_TOPOLOGY_HCCS),
    C(ACL_DEV_FEATURE_SUPPORT), C(ACL_DEV_FEATURE_NOT_SUPPORT),
    C(ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV),
    C(ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV),
    /* aclrtDevResLimitType */
    C(ACL_RT_DEV_RES_CUBE_CORE), C(ACL_RT_DEV_RES_VECTOR_CORE),
    /* memory: host registration, location types, VMM */
    C(ACL_HOST_REGISTER_MAPPED), C(ACL_HOST_REG_MAPPED),
    C(ACL_HOST_REG_PINNED), C(ACL_MEM_LOCATION_TYPE_HOST),
    C(ACL_MEM_LOCATION_TYPE_DEVICE), C(ACL_MEM_LOCATION_TYPE_UNREGISTERED),
    C(ACL_MEM_LOCATION_TYPE_MANAGED),
    C(ACL_RT_MEM_ATTR_RSV), C(ACL_RT_MEM_ATTR_MODULE_ID),
    C(ACL_RT_MEM_ATTR_DEVICE_ID),
    C(ACL_MEM_HANDLE_TYPE_NONE), C(ACL_MEM_ALLOCATION_TYPE_PINNED),
    C(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM),
    C(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED),
    C(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
    /* pools, managed memory, batch copies, random numbers, newer VMM
     * (acl_rt_pool.c, acl_rt_copy.c, acl_rt_vmm.c) */
    C(ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES),
    C(ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC),
    C(ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES),
    C(ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD),
    C(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT),
    C(ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH),
    C(ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT),
    C(ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), C(ACL_MEM_HANDLE_TYPE_POSIX),
    C(ACL_RT_MEM_ATTACH_GLOBAL), C(ACL_MEM_ADVISE_SET_READ_MOSTLY),
    C(ACL_MEM_ADVISE_UNSET_READ_MOSTLY),
    C(ACL_MEM_ADVISE_SET_PREFERRED_LOCATION),
    C(ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION),
    C(ACL_MEM_ADVISE_SET_ACCESSED_BY), C(ACL_MEM_ADVISE_UNSET_ACCESSED_BY),
    C(ACL_MEM_LOCATIONTYPE_INVALID), C(ACL_MEM_LOCATIONTYPE_DEVICE),
    C(ACL_MEM_LOCATIONTYPE_HOST), C(ACL_MEM_LOCATIONTYPE_HOST_NUMA),
    C(ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT),
    C(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY),
    C(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
    C(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY),
    C(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE),
    C(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID),
    C(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
    C(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE),
    C(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID),
    C(ACL_MEM_LOCATION_TYPE_HOST_NUMA),
    C(ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK),
    C(ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS),
    C(ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS),
    C(ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS),
    C(ACL_RT_MEM_ACCESS_FLAGS_NONE), C(ACL_RT_MEM_ACCESS_FLAGS_READ),
    C(ACL_RT_MEM_ACCESS_FLAGS_READWRITE),
    C(ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT), C(ACL_MEM_SHARE_HANDLE_TYPE_FABRIC),
    C(ACL_RT_VMM_EXPORT_FLAG_DEFAULT),
    C(ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    C(ACL_RT_HAC_TYPE_STARS), C(ACL_RT_HAC_TYPE_AICPU), C(ACL_RT_HAC_TYPE_AIC),
    C(ACL_RT_HAC_TYPE_AIV), C(ACL_RT_HAC_TYPE_PCIEDMA), C(ACL_RT_HAC_TYPE_RDMA),
    C(ACL_RT_HAC_TYPE_SDMA), C(ACL_RT_HAC_TYPE_DVPP), C(ACL_RT_HAC_TYPE_UDMA),
    C(ACL_RT_HAC_TYPE_CCU), C(ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED),
    C(ACL_RT_HOST_MEM_MAP_SUPPORTED), C(ACL_ERROR_RT_NO_PERMISSION),
    /* aclrtLastErrLevel, aclrtDeviceLimit */
    C(ACL_RT_THREAD_LEVEL), C(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE),
    C(ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE),
    C(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE),
    C(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE),
    C(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE),
    /* aclrtCheckMemType's memType bits */
    C(ACL_RT_MEM_TYPE_DEV), C(ACL_RT_MEM_TYPE_DVPP), C(ACL_RT_MEM_TYPE_RSVD),
    /* aclrtAtomicOperation, aclrtAtomicOperationCapability (by suffix) */
#define OP(n) C(ACL_RT_ATOMIC_OPERATION_##n)
#define CAP(n) C(ACL_RT_ATOMIC_CAPABILITY_##n)
    OP(INTEGER_ADD), OP(INTEGER_MIN), OP(INTEGER_MAX), OP(INTEGER_INCREMENT),
    OP(INTEGER_DECREMENT), OP(AND), OP(OR), OP(XOR), OP(EXCHANGE), OP(CAS),
    OP(FLOAT_ADD), OP(FLOAT_MIN), OP(FLOAT_MAX), OP(DMA_ADD), OP(DMA_MIN),
    OP(DMA_MAX), OP(SIMD_SCALAR_ADD), OP(SIMD_SCALAR_MIN),
    OP(SIMD_SCALAR_MAX), OP(SIMD_SCALAR_CAS), OP(SIMD_SCALAR_EXCH),
    CAP(SIGNED), CAP(UNSIGNED), CAP(REDUCATION), CAP(REDUCTION), CAP(SCALAR8),
    CAP(SCALAR16), CAP(SCALAR32), CAP(SCALAR64), CAP(SCALAR128),
    CAP(VECTOR32X4),
#undef CAP
#undef OP
    /* error codes of these families */
    C(ACL_ERROR_INVALID_FILE), C(ACL_ERROR_RT_PARAM_INVALID),
    C(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET),
    C(ACL_ERROR_RT_INVALID_MEMORY_TYPE),
    C(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    C(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED),
    {NULL, 0}};
#undef C

static struct PyModuleDef acl_def = {PyModuleDef_HEAD_INIT,
                                     .m_name = "evrt._evrt._acl",
                                     .m_size = -1,
                                     .m_methods = acl_methods};
static struct PyModuleDef rt_def = {PyModuleDef_HEAD_INIT,
                                    .m_name = "evrt._evrt._acl_rt",
                                    .m_size = -1,
                                    .m_methods = rt_methods};
static struct PyModuleDef util_def = {PyModuleDef_HEAD_INIT,
                                      .m_name = "evrt._evrt._acl_util",
                                      .m_size = -1,
                                      .m_methods = util_methods};

static int add_sub(PyObject *module, const char *attr, PyModuleDef *def,
                   PyObject **out) {
  PyObject *sub = PyModule_Create(def);
  if (!sub)
    return -1;
  if (PyModule_AddObject(module, attr, sub) < 0) {
    Py_DECREF(sub);
    return -1;
  }
  *out = sub; /* borrowed: owned by module */
  return 0;
}

int evrtpy_acl_init(PyObject *module) {
  PyObject *acl, *rt, *util;
  if (add_sub(module, "_acl", &acl_def, &acl) < 0 ||
      add_sub(module, "_acl_rt", &rt_def, &rt) < 0 ||
      add_sub(module, "_acl_util", &util_def, &util) < 0)
    return -1;
  for (const struct named *c = acl_constants; c->name; c++)
    if (PyModule_AddIntConstant(acl, c->name, c->value) < 0)
      return -1;
  /* The families' tables (acl_*.c, declared in acl_common.h). */
  if (PyModule_AddFunctions(rt, evrtpy_acl_rt_device_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_stream_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_event_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_callback_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_memory_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_pool_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_copy_methods) < 0 ||
      PyModule_AddFunctions(util, evrtpy_acl_util_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_failure_methods) < 0 ||
      PyModule_AddFunctions(acl, evrtpy_acl_base_methods) < 0 ||
      PyModule_AddFunctions(acl, evrtpy_acl_init_callback_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_vmm_methods) < 0 ||
      PyModule_AddFunctions(rt, evrtpy_acl_rt_allocator_methods) < 0)
    return -1;
  for (const struct named *c = cover_constants; c->name; c++)
    if (PyModule_AddIntConstant(acl, c->name, c->value) < 0)
      return -1;
  if (evrtpy_acl_mdl_init(module, acl, rt) < 0) /* acl.mdl (acl_mdl.c) */
    return -1;
  return PyModule_AddIntConstant(module, "HAVE_ACL", 1);
}

#else /* !EVRTPY_HAVE_ACL */

/* Built without the ACL layer: evrt.acl reports that on import. */
int evrtpy_acl_init(PyObject *module) {
  return PyModule_AddIntConstant(module, "HAVE_ACL", 0);
}

#endif
