/* System, version and device queries of the virtual device (docs/acl.md,
 * "The virtual device"): versions, CANN attributes, SoC name and
 * architecture check, attributes, capabilities, status, utilization, UUID,
 * PCI bus ids, id mappings, resource and device limits, peer access, memory
 * info; each with its bad input (the exact ACL code, outputs untouched).
 * Runs with EVRT_CPU_DEVICES=2. */
#include "acl_test.h"

TEST(versions) {
  char pkg[] = "runtime";
  char v[ACL_PKG_VERSION_MAX_SIZE] = {0};
  int32_t n = 0;
  ASSERT_OK(aclsysGetVersionStr(pkg, v));
  ASSERT(strcmp(v, "9.1.0") == 0);
  ASSERT_OK(aclsysGetVersionNum(pkg, &n));
  ASSERT_EQ(n, 90100000);
  char alt[] = "npu_runtime";
  ASSERT_OK(aclsysGetVersionNum(alt, &n));
  ASSERT_EQ(n, 90100000);
  /* unknown package: no version file; outputs untouched */
  char other[] = "toolkit";
  char w[8] = "keep";
  n = 7;
  ASSERT_ACL(aclsysGetVersionStr(other, w), ACL_ERROR_INVALID_FILE);
  ASSERT_ACL(aclsysGetVersionNum(other, &n), ACL_ERROR_INVALID_FILE);
  ASSERT(strcmp(w, "keep") == 0 && n == 7);
  ASSERT_ACL(aclsysGetVersionStr(NULL, v), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclsysGetVersionStr(pkg, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclsysGetVersionNum(pkg, NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(deprecated_versions) {
  aclCANNPackageVersion v;
  ASSERT_OK(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &v));
  ASSERT(strcmp(v.version, "9.1.0") == 0);
  ASSERT(strcmp(v.majorVersion, "9") == 0 && strcmp(v.minorVersion, "1") == 0);
  ASSERT(strcmp(v.releaseVersion, "0") == 0 && strcmp(v.patchVersion, "0") == 0);
  ASSERT_OK(aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &v));
  ASSERT(strcmp(v.version, "9.1.0") == 0);
  memset(&v, 0x5a, sizeof v);
  ASSERT_ACL(aclsysGetCANNVersion(ACL_PKG_NAME_HCCL, &v),
             ACL_ERROR_INVALID_FILE);
  ASSERT_EQ((unsigned char)v.version[0], 0x5a); /* untouched */
  ASSERT_ACL(aclsysGetCANNVersion((aclCANNPackageName)99, &v),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, NULL),
             ACL_ERROR_INVALID_PARAM);
  int32_t a = -1, b = -1, c = -1;
  ASSERT_OK(aclrtGetVersion(&a, &b, &c));
  ASSERT(a == ACL_MAJOR_VERSION && b == ACL_MINOR_VERSION &&
         c == ACL_PATCH_VERSION);
  ASSERT(a == 1 && b == 17 && c == 0);
  ASSERT_ACL(aclrtGetVersion(NULL, &b, &c), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetVersion(&a, &b, NULL), ACL_ERROR_INVALID_PARAM);
}
#pragma GCC diagnostic pop

TEST(cann_attributes) {
  const aclCannAttr *list = NULL;
  size_t num = 0;
  ASSERT_OK(aclGetCannAttributeList(&list, &num));
  ASSERT_EQ(num, 3);
  ASSERT_EQ(list[0], ACL_CANN_ATTR_INF_NAN);
  ASSERT_EQ(list[1], ACL_CANN_ATTR_BF16);
  ASSERT_EQ(list[2], ACL_CANN_ATTR_JIT_COMPILE);
  for (size_t i = 0; i < num; i++) {
    int32_t on = 0;
    ASSERT_OK(aclGetCannAttribute(list[i], &on));
    ASSERT_EQ(on, 1);
  }
  int32_t v = 5;
  ASSERT_ACL(aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &v),
             ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(v, 5);
  ASSERT_ACL(aclGetCannAttribute(ACL_CANN_ATTR_BF16, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclGetCannAttributeList(NULL, &num), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclGetCannAttributeList(&list, NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(soc_and_arch) {
  const char *soc = aclrtGetSocName();
  ASSERT(soc && strcmp(soc, "Ascend910B3") == 0);
  int32_t ok = -1;
  ASSERT_OK(aclrtCheckArchCompatibility(soc, &ok));
  ASSERT_EQ(ok, 1);
  ASSERT_OK(aclrtCheckArchCompatibility("Ascend910_9392", &ok)); /* same arch */
  ASSERT_EQ(ok, 1);
  ASSERT_OK(aclrtCheckArchCompatibility("Ascend310P3", &ok));
  ASSERT_EQ(ok, 0);
  ok = -1;
  ASSERT_ACL(aclrtCheckArchCompatibility("Ascend999", &ok), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCheckArchCompatibility("", &ok), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(ok, -1);
  ASSERT_ACL(aclrtCheckArchCompatibility(NULL, &ok), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtCheckArchCompatibility(soc, NULL), ACL_ERROR_RT_PARAM_INVALID);
  (void)aclGetRecentErrMsg();
}

TEST(device_capability_and_info) {
  int64_t v = 0;
  ASSERT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v));
  ASSERT_EQ(v, 20);
  ASSERT_OK(aclGetDeviceCapability(1, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &v));
  ASSERT_EQ(v, 40);
  ASSERT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &v));
  ASSERT_EQ(v, 201326592);
  v = -9;
  ASSERT_ACL(aclGetDeviceCapability(2, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclGetDeviceCapability(0, ACL_DEVICE_INFO_UNDEFINED, &v), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(v, -9);

  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
  ASSERT_EQ(v, 40);
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_CUBE_CORE_NUM, &v));
  ASSERT_EQ(v, 20);
  ASSERT_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_AICPU_CORE_NUM, &v));
  ASSERT_EQ(v, 6);
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, &v));
  ASSERT_EQ(v, 2201);
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
  ASSERT(v > 0);
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &v)); /* no SIMT */
  ASSERT_EQ(v, 0);
  ASSERT_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_PHY_CHIP_ID, &v));
  ASSERT_EQ(v, 1);
  v = -9;
  ASSERT_ACL(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtGetDeviceInfo(0, (aclrtDevAttr)7777, &v), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(v, -9);
  ASSERT_ACL(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM);

  int32_t cap = -1;
  ASSERT_OK(aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &cap));
  ASSERT_EQ(cap, ACL_DEV_FEATURE_SUPPORT);
  ASSERT_OK(aclrtGetDeviceCapability(1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &cap));
  ASSERT_EQ(cap, ACL_DEV_FEATURE_NOT_SUPPORT);
  cap = -1;
  ASSERT_ACL(aclrtGetDeviceCapability(5, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &cap),
             ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtGetDeviceCapability(0, (aclrtDevFeatureType)3, &cap), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(cap, -1);
  ASSERT_ACL(aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, NULL),
             ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(status_utilization_priority) {
  aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_END;
  ASSERT_OK(aclrtQueryDeviceStatus(1, &st));
  ASSERT_EQ(st, ACL_RT_DEVICE_STATUS_NORMAL);
  st = ACL_RT_DEVICE_STATUS_END;
  ASSERT_ACL(aclrtQueryDeviceStatus(-1, &st), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(st, ACL_RT_DEVICE_STATUS_END);
  ASSERT_ACL(aclrtQueryDeviceStatus(0, NULL), ACL_ERROR_INVALID_PARAM);

  aclrtUtilizationInfo u;
  memset(&u, 0x11, sizeof u);
  u.utilizationExtend = NULL;
  ASSERT_OK(aclrtGetDeviceUtilizationRate(0, &u));
  ASSERT_EQ(u.cubeUtilization, 0);
  ASSERT_EQ(u.memoryUtilization, -1); /* not supported, as CANN */
  u.utilizationExtend = (aclrtUtilizationExtendInfo *)&u;
  u.cubeUtilization = 55;
  ASSERT_ACL(aclrtGetDeviceUtilizationRate(0, &u), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(u.cubeUtilization, 55);
  u.utilizationExtend = NULL;
  ASSERT_ACL(aclrtGetDeviceUtilizationRate(3, &u), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtGetDeviceUtilizationRate(0, NULL), ACL_ERROR_INVALID_PARAM);

  int32_t least = -1, greatest = -1;
  ASSERT_OK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
  ASSERT_EQ(least, 7);
  ASSERT_EQ(greatest, 0);
  ASSERT_OK(aclrtDeviceGetStreamPriorityRange(NULL, NULL)); /* allowed */
  (void)aclGetRecentErrMsg();
}

TEST(uuid_and_pci) {
  aclrtUuid a, b;
  ASSERT_OK(aclrtDeviceGetUuid(0, &a));
  ASSERT_OK(aclrtDeviceGetUuid(1, &b));
  ASSERT(memcmp(a.bytes, b.bytes, sizeof a.bytes) != 0);
  aclrtUuid a2;
  ASSERT_OK(aclrtDeviceGetUuid(0, &a2));
  ASSERT(memcmp(a.bytes, a2.bytes, sizeof a.bytes) == 0); /* stable */
  ASSERT_ACL(aclrtDeviceGetUuid(2, &a), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtDeviceGetUuid(0, NULL), ACL_ERROR_INVALID_PARAM);

  char bus[16];
  ASSERT_OK(aclrtDeviceGetPCIBusId(1, bus, sizeof bus));
  ASSERT(strcmp(bus, "0000:02:00.0") == 0);
  int32_t dev = -1;
  ASSERT_OK(aclrtDeviceGetByPCIBusId(bus, &dev));
  ASSERT_EQ(dev, 1);
  ASSERT_OK(aclrtDeviceGetPCIBusId(0, bus, 13)); /* exactly enough */
  ASSERT_OK(aclrtDeviceGetByPCIBusId(bus, &dev));
  ASSERT_EQ(dev, 0);
  char small[12] = "untouched";
  ASSERT_ACL(aclrtDeviceGetPCIBusId(0, small, sizeof small), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT(strcmp(small, "untouched") == 0);
  ASSERT_ACL(aclrtDeviceGetPCIBusId(-1, bus, sizeof bus), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtDeviceGetPCIBusId(0, NULL, 16), ACL_ERROR_INVALID_PARAM);
  dev = 9;
  ASSERT_ACL(aclrtDeviceGetByPCIBusId("0000:77:00.0", &dev), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(dev, 9);
  ASSERT_ACL(aclrtDeviceGetByPCIBusId(NULL, &dev), ACL_ERROR_INVALID_PARAM);

  int32_t pid = 0;
  ASSERT_OK(aclrtDeviceGetBareTgid(&pid));
  ASSERT_EQ(pid, getpid());
  ASSERT_ACL(aclrtDeviceGetBareTgid(NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(device_id_mappings) {
  aclError (*const maps[])(const int32_t, int32_t *const) = {
      aclrtGetLogicDevIdByUserDevId, aclrtGetUserDevIdByLogicDevId,
      aclrtGetLogicDevIdByPhyDevId,  aclrtGetPhyDevIdByLogicDevId,
      aclrtGetUserDevIdByPhyDevId,   aclrtGetPhyDevIdByUserDevId};
  for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
    int32_t out = -1;
    ASSERT_OK(maps[i](1, &out));
    ASSERT_EQ(out, 1);
    out = -1;
    ASSERT_ACL(maps[i](2, &out), ACL_ERROR_RT_INVALID_DEVICEID);
    ASSERT_ACL(maps[i](-3, &out), ACL_ERROR_RT_INVALID_DEVICEID);
    ASSERT_EQ(out, -1);
    ASSERT_ACL(maps[i](0, NULL), ACL_ERROR_INVALID_PARAM);
  }
  (void)aclGetRecentErrMsg();
}

TEST(device_res_limits) {
  uint32_t v = 0;
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 20); /* hardware default */
  ASSERT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 3));
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 3);
  ASSERT_OK(aclrtGetDeviceResLimit(1, ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 40); /* per device */
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 3); /* process limit of the current device */
  /* bad input changes nothing */
  ASSERT_ACL(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 41), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSetDeviceResLimit(0, (aclrtDevResLimitType)2, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSetDeviceResLimit(4, ACL_RT_DEV_RES_VECTOR_CORE, 1), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 3);
  ASSERT_ACL(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetDeviceResLimit(9, ACL_RT_DEV_RES_CUBE_CORE, &v), ACL_ERROR_RT_INVALID_DEVICEID);
  /* a limit of 0 cores reads back as 0, not as "unset" */
  ASSERT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 0));
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 0);
  ASSERT_OK(aclrtResetDeviceResLimit(0));
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 40);
  ASSERT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 20);
  ASSERT_ACL(aclrtResetDeviceResLimit(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  (void)aclGetRecentErrMsg();
}

TEST(stream_res_limits) {
  aclrtStream s;
  uint32_t v = 0;
  ASSERT_OK(aclrtCreateStream(&s));
  ASSERT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 20); /* falls back to the device */
  ASSERT_OK(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 4));
  ASSERT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 4);
  ASSERT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 8));
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 8); /* this thread does not use the stream's limits yet */
  ASSERT_OK(aclrtUseStreamResInCurrentThread(s));
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 4); /* stream > process > hardware */
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 40); /* the stream set no vector limit */
  ASSERT_OK(aclrtUnuseStreamResInCurrentThread(NULL)); /* another stream: no-op */
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 4);
  ASSERT_OK(aclrtUnuseStreamResInCurrentThread(s));
  ASSERT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 8);
  ASSERT_OK(aclrtResetStreamResLimit(s));
  ASSERT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
  ASSERT_EQ(v, 8);
  /* the default stream (NULL) has limits too */
  ASSERT_OK(aclrtSetStreamResLimit(NULL, ACL_RT_DEV_RES_VECTOR_CORE, 2));
  ASSERT_OK(aclrtGetStreamResLimit(NULL, ACL_RT_DEV_RES_VECTOR_CORE, &v));
  ASSERT_EQ(v, 2);
  ASSERT_OK(aclrtResetStreamResLimit(NULL));
  /* bad input */
  ASSERT_ACL(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 21), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSetStreamResLimit(s, (aclrtDevResLimitType)5, 1), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetResInCurrentThread((aclrtDevResLimitType)2, &v), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 1), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtUseStreamResInCurrentThread(s), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_OK(aclrtResetDeviceResLimit(0));
  (void)aclGetRecentErrMsg();
}

static void *no_ctx_res(void *p) {
  uint32_t v = 0;
  *(aclError *)p = aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v);
  return NULL;
}

TEST(res_in_thread_needs_context) {
  pthread_t t;
  aclError r = -1;
  pthread_create(&t, NULL, no_ctx_res, &r);
  pthread_join(t, NULL);
  ASSERT_EQ(r, ACL_ERROR_RT_CONTEXT_NULL);
}

TEST(device_limits) {
  size_t v = 0;
  ASSERT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v));
  ASSERT_EQ(v, 32768);
  ASSERT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 40000));
  ASSERT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v));
  ASSERT_EQ(v, 49152); /* rounded up to 16 KiB */
  ASSERT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 100));
  ASSERT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v));
  ASSERT_EQ(v, 32768); /* at most 32 KiB counts as 32 KiB */
  ASSERT_ACL(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 196609), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1025));
  ASSERT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &v));
  ASSERT_EQ(v, 1032);
  ASSERT_ACL(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1000), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &v));
  ASSERT_EQ(v, 1032);
  ASSERT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 32768));
  /* SIMT limits: no SIMT on the 910B */
  ASSERT_ACL(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 1152), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE, &v), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  ASSERT_ACL(aclrtDeviceSetLimit((aclrtDeviceLimit)5, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, (size_t)UINT32_MAX + 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 32768));
  (void)aclGetRecentErrMsg();
}

TEST(peer_access) {
  int32_t can = -1, st = -1;
  ASSERT_OK(aclrtDeviceCanAccessPeer(&can, 0, 1));
  ASSERT_EQ(can, 1);
  can = -1;
  ASSERT_ACL(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDeviceCanAccessPeer(&can, 0, 2), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(can, -1);
  ASSERT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
  ASSERT_EQ(st, 0);
  ASSERT_OK(aclrtDeviceEnablePeerAccess(1, 0)); /* current device is 0 */
  ASSERT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
  ASSERT_EQ(st, 1);
  ASSERT_OK(aclrtDevicePeerAccessStatus(1, 0, &st));
  ASSERT_EQ(st, 0); /* one direction only */
  ASSERT_ACL(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
  ASSERT_ACL(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDeviceEnablePeerAccess(7, 0), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_OK(aclrtDeviceDisablePeerAccess(1));
  ASSERT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
  ASSERT_EQ(st, 0);
  ASSERT_ACL(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDevicePeerAccessStatus(0, 1, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDevicePeerAccessStatus(0, 5, &st), ACL_ERROR_RT_PARAM_INVALID);
  (void)aclGetRecentErrMsg();
}

TEST(devices_topo) {
  uint64_t v = 0;
  ASSERT_OK(aclrtGetDevicesTopo(0, 1, &v));
  ASSERT_EQ(v, ACL_RT_DEVS_TOPOLOGY_HCCS);
  v = 0;
  ASSERT_OK(aclrtGetDevicesTopo(1, 1, &v));
  ASSERT_EQ(v, ACL_RT_DEVS_TOPOLOGY_HCCS);
  v = 77;
  ASSERT_ACL(aclrtGetDevicesTopo(0, 2, &v), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtGetDevicesTopo(9, 0, &v), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(v, 77);
  ASSERT_ACL(aclrtGetDevicesTopo(0, 1, NULL), ACL_ERROR_INVALID_PARAM);
}

TEST(mem_info) {
  size_t fr = 0, tot = 0;
  ASSERT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
  ASSERT(tot > 0 && fr <= tot);
  ASSERT_OK(aclrtGetMemInfo(ACL_DDR_MEM_HUGE, &fr, &tot));
  fr = tot = 3;
  ASSERT_ACL(aclrtGetMemInfo((aclrtMemAttr)99, &fr, &tot), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT(fr == 3 && tot == 3);
  ASSERT_ACL(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &tot), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

TEST(error_verbose) {
  aclrtErrorInfo info;
  memset(&info, 0x5a, sizeof info);
  ASSERT_OK(aclrtGetErrorVerbose(0, &info));
  ASSERT_EQ(info.errorType, ACL_RT_NO_ERROR);
  ASSERT_EQ(info.tryRepair, 0);
  ASSERT_EQ(info.hasDetail, 0);
  memset(&info, 0x5a, sizeof info);
  ASSERT_ACL(aclrtGetErrorVerbose(2, &info), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(info.tryRepair, 0x5a);
  ASSERT_ACL(aclrtGetErrorVerbose(0, NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

/* The default context of a device is active from its first aclrtSetDevice
 * to its last reset; flags is reserved (must be NULL). */
TEST(primary_context_state_follows_set_and_reset) {
  int32_t active = -1;
  ASSERT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
  ASSERT_EQ(active, 0);
  ASSERT_OK(aclrtSetDevice(1));
  ASSERT_OK(aclrtSetDevice(1));
  ASSERT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
  ASSERT_EQ(active, 1);
  ASSERT_OK(aclrtResetDevice(1)); /* one reference left */
  ASSERT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
  ASSERT_EQ(active, 1);
  ASSERT_OK(aclrtResetDeviceForce(1));
  ASSERT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
  ASSERT_EQ(active, 0);
  ASSERT_OK(aclrtGetPrimaryCtxState(0, NULL, &active)); /* set by setup */
  ASSERT_EQ(active, 1);
  /* bad input: the exact codes, the output untouched */
  uint32_t flags = 0;
  active = -7;
  ASSERT_ACL(aclrtGetPrimaryCtxState(0, &flags, &active), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetPrimaryCtxState(2, NULL, &active), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtGetPrimaryCtxState(-1, NULL, &active), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(active, -7);
  ASSERT_ACL(aclrtGetPrimaryCtxState(0, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  (void)aclGetRecentErrMsg();
}

/* Host atomics: none on the Ascend910B3 profile (CANN's empty host table),
 * every requested capability reads 0; bad input leaves the output alone. */
TEST(host_atomic_capabilities) {
  const aclrtAtomicOperation ops[3] = {ACL_RT_ATOMIC_OPERATION_DMA_ADD,
                                       ACL_RT_ATOMIC_OPERATION_INTEGER_ADD,
                                       ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH};
  uint32_t caps[3] = {7, 7, 7};
  ASSERT_OK(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 3, 1));
  ASSERT_EQ(caps[0], 0u);
  ASSERT_EQ(caps[1], 0u);
  ASSERT_EQ(caps[2], 0u);
  uint32_t keep[2] = {9, 9};
  const aclrtAtomicOperation bad[2] = {ACL_RT_ATOMIC_OPERATION_AND, (aclrtAtomicOperation)45};
  ASSERT_ACL(aclrtDeviceGetHostAtomicCapabilities(keep, bad, 2, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtDeviceGetHostAtomicCapabilities(keep, ops, 2, 2), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL(aclrtDeviceGetHostAtomicCapabilities(keep, ops, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtDeviceGetHostAtomicCapabilities(NULL, ops, 2, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtDeviceGetHostAtomicCapabilities(keep, NULL, 2, 0), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_EQ(keep[0], 9u);
  ASSERT_EQ(keep[1], 9u);
  (void)aclGetRecentErrMsg();
}

/* EVRT_ACL_HOST_LINK: pcie (default) gives PCI bus ids; hccs poses a
 * device off PCIe, whose bus id queries answer 207000 and change nothing
 * (CANN's device_identity_mapping README machine).  CTest runs this case
 * once more as test_acl_device_info_hccs, with the variable set. */
TEST(host_link) {
  const char *e = getenv("EVRT_ACL_HOST_LINK");
  bool hccs = e && !strcmp(e, "hccs");
  int64_t link = -1, form = -1;
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_HD_CONNECT_TYPE, &link));
  ASSERT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_DEVICE_FORM_FACTOR, &form));
  ASSERT_EQ(link, hccs ? ACL_HOST_DEVICE_CONNECT_TYPE_HCCS
                       : ACL_HOST_DEVICE_CONNECT_TYPE_PCIE);
  ASSERT_EQ(form, hccs ? ACL_DEVICE_FORM_FACTOR_POD
                       : ACL_DEVICE_FORM_FACTOR_PCIE_CARD);
  char bus[16] = "untouched";
  int32_t dev = 9;
  if (hccs) {
    ASSERT_ACL(aclrtDeviceGetPCIBusId(0, bus, sizeof bus),
               ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    ASSERT(strcmp(bus, "untouched") == 0);
    ASSERT_ACL(aclrtDeviceGetByPCIBusId("0000:01:00.0", &dev),
               ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    ASSERT_EQ(dev, 9);
  } else {
    ASSERT_OK(aclrtDeviceGetPCIBusId(0, bus, sizeof bus));
    ASSERT_OK(aclrtDeviceGetByPCIBusId(bus, &dev));
    ASSERT_EQ(dev, 0);
  }
  /* bad input is checked first either way */
  ASSERT_ACL(aclrtDeviceGetPCIBusId(0, NULL, 16), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtDeviceGetPCIBusId(-1, bus, sizeof bus),
             ACL_ERROR_RT_INVALID_DEVICEID);
}
