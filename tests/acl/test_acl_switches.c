/* The saturation mode, the stream overflow switch and the process overflow
 * status (set by a reduce that overflows on a switched stream), runtime
 * parameters (process defaults, context values unset until set), and the
 * init / finalize callback registry run by aclInit / aclFinalize. */
#include "acl_test.h"

static void *dev(size_t n) {
  void *p = NULL;
  return aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : NULL;
}

static uint32_t read_status(aclrtStream s) {
  uint8_t *st = dev(64);
  memset(st, 0xff, 64);
  uint32_t v = 0xdead;
  if (aclrtGetOverflowStatus(st, 64, s) == ACL_SUCCESS &&
      aclrtSynchronizeStream(s) == ACL_SUCCESS)
    memcpy(&v, st, 4);
  if (st[63] != 0)
    v = 0xbeef; /* the rest is zeroed */
  aclrtFree(st);
  return v;
}

TEST(saturation_mode_and_overflow_status) {
  aclrtFloatOverflowMode m = ACL_RT_OVERFLOW_MODE_UNDEF;
  ASSERT_OK(aclrtGetDeviceSatMode(&m));
  ASSERT_EQ(m, ACL_RT_OVERFLOW_MODE_INFNAN); /* the A2 default */
  aclrtStream s;
  ASSERT_OK(aclrtCreateStream(&s));
  uint32_t sw = 9;
  ASSERT_OK(aclrtGetStreamOverflowSwitch(s, &sw));
  ASSERT_EQ(sw, 0);
  ASSERT_OK(aclrtResetOverflowStatus(s));
  ASSERT_EQ(read_status(s), 0);
  uint16_t *a = dev(4), *b = dev(4);
  /* 60000 + 60000 in fp16: INFNAN mode gives +Inf; the switch is off, so
   * the status stays 0 */
  a[0] = b[0] = aclFloatToFloat16(60000.0f);
  ASSERT_OK(aclrtReduceAsync(a, b, 2, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT16, s, NULL));
  ASSERT_EQ(read_status(s), 0);
  ASSERT_EQ(a[0], 0x7c00);
  /* switch on, saturation mode: 65504 and the status set */
  ASSERT_OK(aclrtSetStreamOverflowSwitch(s, 1));
  ASSERT_OK(aclrtGetStreamOverflowSwitch(s, &sw));
  ASSERT_EQ(sw, 1);
  ASSERT_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
  ASSERT_OK(aclrtGetDeviceSatMode(&m));
  ASSERT_EQ(m, ACL_RT_OVERFLOW_MODE_SATURATION);
  a[0] = aclFloatToFloat16(60000.0f);
  ASSERT_OK(aclrtReduceAsync(a, b, 2, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT16, s, NULL));
  ASSERT_EQ(read_status(s), 1);
  ASSERT_EQ(a[0], 0x7bff);
  ASSERT_OK(aclrtResetOverflowStatus(s));
  ASSERT_EQ(read_status(s), 0);
  /* no overflow: status stays clear */
  a[0] = aclFloatToFloat16(1.0f);
  ASSERT_OK(aclrtReduceAsync(a, b, 2, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_FLOAT16, s, NULL));
  ASSERT_EQ(read_status(s), 0);
  /* bad input changes nothing */
  ASSERT_ACL(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtSetStreamOverflowSwitch(s, 2), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_OK(aclrtGetDeviceSatMode(&m));
  ASSERT_EQ(m, ACL_RT_OVERFLOW_MODE_SATURATION);
  ASSERT_ACL(aclrtGetDeviceSatMode(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetStreamOverflowSwitch(s, NULL), ACL_ERROR_INVALID_PARAM);
  char small[64];
  ASSERT_ACL(aclrtGetOverflowStatus(small, 64, s), ACL_ERROR_RT_PARAM_INVALID);
  void *st = dev(64);
  ASSERT_ACL(aclrtGetOverflowStatus(st, 32, s), ACL_ERROR_RT_PARAM_INVALID);
  ASSERT_ACL(aclrtGetOverflowStatus(NULL, 64, s), ACL_ERROR_INVALID_PARAM);
  ASSERT_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
  ASSERT_OK(aclrtDestroyStream(s));
  ASSERT_ACL(aclrtSetStreamOverflowSwitch(s, 1), ACL_ERROR_RT_INVALID_HANDLE);
  ASSERT_ACL(aclrtResetOverflowStatus(s), ACL_ERROR_RT_INVALID_HANDLE);
  aclrtFree(a);
  aclrtFree(b);
  aclrtFree(st);
  (void)aclGetRecentErrMsg();
}

static void *no_ctx(void *p) {
  aclrtFloatOverflowMode m;
  int64_t v;
  aclError *r = p;
  r[0] = aclrtGetDeviceSatMode(&m);
  r[1] = aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v);
  return NULL;
}

TEST(system_parameters) {
  int64_t v = 5;
  ASSERT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  ASSERT_EQ(v, 0); /* default: off */
  ASSERT_OK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
  ASSERT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  ASSERT_EQ(v, 1);
  ASSERT_OK(aclrtSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1));
  /* contexts: no default */
  ASSERT_ACL(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
  ASSERT_OK(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 2));
  ASSERT_OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  ASSERT_EQ(v, 2);
  aclrtContext c, def;
  ASSERT_OK(aclrtGetCurrentContext(&def));
  ASSERT_OK(aclrtCreateContext(&c, 0)); /* a new context has its own */
  ASSERT_ACL(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
  ASSERT_OK(aclrtSetCurrentContext(def));
  ASSERT_OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v));
  ASSERT_EQ(v, 2);
  ASSERT_OK(aclrtDestroyContext(c));
  ASSERT_OK(aclrtSetCurrentContext(def));
  /* bad input */
  ASSERT_ACL(aclrtSetSysParamOpt((aclSysParamOpt)4, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL), ACL_ERROR_INVALID_PARAM);
  aclError r[2] = {0, 0};
  pthread_t t;
  pthread_create(&t, NULL, no_ctx, r);
  pthread_join(t, NULL);
  ASSERT_EQ(r[0], ACL_ERROR_RT_CONTEXT_NULL);
  ASSERT_EQ(r[1], ACL_ERROR_RT_CONTEXT_NULL);
  ASSERT_OK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0));
  (void)aclGetRecentErrMsg();
}

static char seen_cfg[256];
static size_t seen_len;
static int init_calls, fini_calls, order[4], norder;
static aclError on_init(const char *cfg, size_t len, void *user) {
  snprintf(seen_cfg, sizeof seen_cfg, "%s", cfg);
  seen_len = len;
  init_calls++;
  order[norder++ % 4] = (int)(intptr_t)user;
  return ACL_SUCCESS;
}
static aclError on_init2(const char *cfg, size_t len, void *user) {
  (void)cfg;
  (void)len;
  order[norder++ % 4] = (int)(intptr_t)user;
  return ACL_SUCCESS;
}
static aclError failing_init(const char *cfg, size_t len, void *user) {
  (void)cfg;
  (void)len;
  (void)user;
  return ACL_ERROR_INVALID_FILE;
}
static aclError on_fini(void *user) {
  fini_calls += (int)(intptr_t)user;
  return ACL_SUCCESS;
}

/* aclFinalize, then aclInit(cfg) again and back to device 0. */
static aclError reinit(const char *cfg) {
  aclrtResetDevice(0);
  aclFinalize();
  aclError r = aclInit(cfg);
  aclrtSetDevice(0);
  return r;
}

TEST(init_and_finalize_callbacks) {
  /* registered after aclInit: runs at once */
  init_calls = 0;
  ASSERT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init, (void *)1));
  ASSERT_EQ(init_calls, 1);
  ASSERT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_fini, (void *)10));
  /* one per type, except OTHER */
  ASSERT_ACL(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_fini, NULL), ACL_ERROR_INTERNAL_ERROR);
  ASSERT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init2, (void *)3));
  norder = 0; /* on_init2 just ran once; count from here */
  ASSERT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init2, (void *)2));
  norder = 0;
  /* aclInit with a config file: every callback sees its content, in type
   * order (MODEL before OTHER), then registration order */
  char path[] = "/tmp/evrt-acl-initcb-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  ASSERT(write(fd, "{\"dump\":{}}", 11) == 11);
  close(fd);
  fini_calls = 0;
  ASSERT_OK(reinit(path));
  ASSERT_EQ(fini_calls, 10);
  ASSERT(strcmp(seen_cfg, "{\"dump\":{}}") == 0);
  ASSERT_EQ(seen_len, 11);
  ASSERT_EQ(norder, 3);
  ASSERT_EQ(order[0], 2);
  ASSERT_EQ(order[1], 1);
  ASSERT_EQ(order[2], 3);
  /* unregistered ones do not run */
  ASSERT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init2));
  ASSERT_ACL(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init2), ACL_ERROR_INTERNAL_ERROR);
  ASSERT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init2));
  ASSERT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_fini));
  init_calls = fini_calls = 0;
  ASSERT_OK(reinit(NULL));
  ASSERT_EQ(init_calls, 1);
  ASSERT_EQ(seen_len, 0);
  ASSERT_EQ(fini_calls, 0);
  /* a failing init callback fails aclInit, which then counts as not done */
  ASSERT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_RETR, failing_init, NULL));
  /* ... registered after aclInit, it ran once already (result ignored) */
  aclrtResetDevice(0);
  ASSERT_OK(aclFinalize());
  ASSERT_ACL(aclInit(NULL), ACL_ERROR_INVALID_FILE);
  ASSERT_ACL(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  ASSERT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_RETR, failing_init));
  ASSERT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init));
  ASSERT_OK(aclInit(NULL));
  ASSERT_OK(aclrtSetDevice(0));
  ASSERT_ACL(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, NULL, NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, NULL), ACL_ERROR_INVALID_PARAM);
  unlink(path);
  (void)aclGetRecentErrMsg();
}

/* A finalize callback that unregisters itself and a later one while
 * aclFinalize walks the list (the Python binding's callbacks can): the
 * walk must neither read the freed entries (AddressSanitizer) nor run the
 * later one. */
static int walk_runs[3];
static aclError fini_c(void *user);
static aclError fini_a(void *user) {
  walk_runs[0]++;
  (void)aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_a);
  (void)aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_c);
  return ACL_SUCCESS;
}
static aclError fini_b(void *user) {
  walk_runs[1]++;
  (void)aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_b);
  return ACL_SUCCESS;
}
static aclError fini_c(void *user) {
  walk_runs[2]++;
  return ACL_SUCCESS;
}

TEST(callbacks_unregistered_while_they_run) {
  ASSERT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, fini_a, NULL));
  ASSERT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, fini_b, NULL));
  ASSERT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, fini_c, NULL));
  ASSERT_OK(reinit(NULL));
  ASSERT_EQ(walk_runs[0], 1);
  ASSERT_EQ(walk_runs[1], 1);
  ASSERT_EQ(walk_runs[2], 0); /* unregistered before its turn */
  /* all three are gone */
  ASSERT_ACL(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_a), ACL_ERROR_INTERNAL_ERROR);
  ASSERT_ACL(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_b), ACL_ERROR_INTERNAL_ERROR);
  ASSERT_ACL(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, fini_c), ACL_ERROR_INTERNAL_ERROR);
  ASSERT_OK(reinit(NULL));
  ASSERT_EQ(walk_runs[0] + walk_runs[1] + walk_runs[2], 2);
  (void)aclGetRecentErrMsg();
}
