/* API injection (aclrtApiInjectionSetFunc / aclrtApiInjectionGetFunc,
 * CANN's "API Hook" chapter): a hook set on a hookable call receives every
 * public call with its arguments and its result is the call's; the original
 * is the implementation (a hook forwards to it without recursion);
 * restoring the original ends the redirection; calls inside the library and
 * the Impl entry points are not redirected; setting a hook races safely
 * with threads inside the call; bad input changes nothing. */
#include "acl_test.h"

#include <acl/acl_rt_impl.h>

#include <string.h>
#include <time.h>

#define API(f) ((aclrtApiFunc)(void (*)(void))(f))

static void current_of(const char *name, aclrtApiFunc *origin,
                       aclrtApiFunc *current) {
  *origin = *current = NULL;
  aclError r = aclrtApiInjectionGetFunc(name, origin, current);
  if (r != ACL_SUCCESS)
    printf("GetFunc(%s) = %d\n", name, r);
}

/* ---------------------------------------------------- aclrtGetDevice */
static atomic_uint get_device_hits;
/* Written before the hook is installed, read by the hook: published by
 * SetFunc's release store and the trampoline's acquire load. */
static aclError (*orig_get_device)(int32_t *);

static aclError count_get_device(int32_t *deviceId) {
  atomic_fetch_add_explicit(&get_device_hits, 1, memory_order_relaxed);
  return orig_get_device(deviceId);
}

static void hook_get_device(void) {
  aclrtApiFunc origin, current;
  current_of("aclrtGetDevice", &origin, &current);
  orig_get_device = (aclError(*)(int32_t *))(void (*)(void))origin;
  aclError r = aclrtApiInjectionSetFunc("aclrtGetDevice",
                                        API(count_get_device));
  if (r != ACL_SUCCESS)
    printf("SetFunc(aclrtGetDevice) = %d\n", r);
}

static void unhook(const char *name) {
  aclrtApiFunc origin, current;
  current_of(name, &origin, &current);
  aclError r = aclrtApiInjectionSetFunc(name, origin);
  if (r != ACL_SUCCESS)
    printf("SetFunc(%s, origin) = %d\n", name, r);
}

TEST(initially_origin_equals_current_for_each_family) {
  static const char *const names[] = {
      "aclrtGetDevice",           "aclrtRecordEvent",
      "aclrtQueryEvent",          "aclrtMemcpy",
      "aclrtGetSocName",          "aclrtLaunchHostFunc",
      "aclrtAllocatorCreateDesc", "aclrtMemPoolCreate",
      "aclmdlRICaptureBegin",     "aclmdlRIExecuteAsync",
      "aclrtCreateLabel",         "aclrtIpcMemGetExportKey"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    aclrtApiFunc origin = NULL, current = NULL;
    ASSERT_OK(aclrtApiInjectionGetFunc(names[i], &origin, &current));
    ASSERT(origin != NULL);
    ASSERT(origin == current);
  }
}

TEST(hook_counts_public_calls_and_restore_ends_it) {
  atomic_store(&get_device_hits, 0);
  aclrtApiFunc origin, current;
  current_of("aclrtGetDevice", &origin, &current);
  hook_get_device();
  aclrtApiFunc o2, c2;
  current_of("aclrtGetDevice", &o2, &c2);
  ASSERT(o2 == origin);
  ASSERT(c2 == API(count_get_device));
  ASSERT_EQ(atomic_load(&get_device_hits), 0u);

  int32_t dev = -1;
  ASSERT_OK(aclrtGetDevice(&dev));
  ASSERT_EQ(dev, 0);
  ASSERT_EQ(atomic_load(&get_device_hits), 1u);
  /* a hook sees bad input too, and the implementation answers it */
  ASSERT_ACL(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(atomic_load(&get_device_hits), 2u);
  /* the Impl entry point is the implementation: not redirected */
  dev = -1;
  ASSERT_OK(aclrtGetDeviceImpl(&dev));
  ASSERT_EQ(dev, 0);
  ASSERT_EQ(atomic_load(&get_device_hits), 2u);

  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtGetDevice", origin));
  current_of("aclrtGetDevice", &o2, &c2);
  ASSERT(o2 == origin && c2 == origin);
  dev = -1;
  ASSERT_OK(aclrtGetDevice(&dev));
  ASSERT_EQ(dev, 0);
  ASSERT_EQ(atomic_load(&get_device_hits), 2u);
}

/* -------------------------------- other signatures, argument passing */
static const char *soc_hook(void) { return "hooked-soc"; }

static aclrtEvent seen_event;
static aclrtStream seen_stream;
static aclError record_hook(aclrtEvent event, aclrtStream stream) {
  seen_event = event;
  seen_stream = stream;
  return ACL_ERROR_RT_INTERNAL_ERROR;
}

/* Nine arguments: the last three on the stack on x86-64 (six argument
 * registers), the last one on AArch64 (eight): the trampoline's tail call
 * passes stack arguments through. */
static size_t batch_fail_index_seen;
static aclError batch_hook(void **dsts, size_t *destMaxs, void **srcs,
                           size_t *sizes, size_t numBatches,
                           aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                           size_t numAttrs, size_t *failIndex) {
  if (dsts != (void **)0x11 || destMaxs != (size_t *)0x22 ||
      srcs != (void **)0x33 || sizes != (size_t *)0x44 || numBatches != 5 ||
      attrs != (aclrtMemcpyBatchAttr *)0x66 ||
      attrsIndexes != (size_t *)0x77 || numAttrs != 8)
    return ACL_ERROR_FAILURE;
  *failIndex = 4242;
  batch_fail_index_seen = 1;
  return ACL_SUCCESS;
}

static aclError memcpy_hook(void *dst, size_t destMax, const void *src,
                            size_t count, aclrtMemcpyKind kind) {
  if (destMax != 7 || count != 3 || kind != ACL_MEMCPY_HOST_TO_HOST)
    return ACL_ERROR_FAILURE;
  memcpy(dst, "HKD", 3); /* not src: the hook decides */
  (void)src;
  return ACL_SUCCESS;
}

static aclrtAllocatorDesc desc_hook(void) {
  return (aclrtAllocatorDesc)(uintptr_t)0xdecade;
}

TEST(hooks_of_other_signatures_get_their_arguments_and_results) {
  const char *real = aclrtGetSocName();
  ASSERT(real != NULL);
  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtGetSocName", API(soc_hook)));
  ASSERT(strcmp(aclrtGetSocName(), "hooked-soc") == 0);
  unhook("aclrtGetSocName");
  ASSERT(strcmp(aclrtGetSocName(), real) == 0);

  aclrtEvent ev;
  aclrtStream st;
  ASSERT_OK(aclrtCreateEvent(&ev));
  ASSERT_OK(aclrtCreateStream(&st));
  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtRecordEvent", API(record_hook)));
  ASSERT_ACL(aclrtRecordEvent(ev, st), ACL_ERROR_RT_INTERNAL_ERROR);
  ASSERT(seen_event == ev && seen_stream == st);
  /* not recorded: the hook did not forward */
  aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  ASSERT_OK(aclrtQueryEventStatus(ev, &rs));
  ASSERT_EQ(rs, ACL_EVENT_RECORDED_STATUS_NOT_READY);
  unhook("aclrtRecordEvent");
  ASSERT_OK(aclrtRecordEvent(ev, st));
  ASSERT_OK(aclrtSynchronizeEvent(ev));
  ASSERT_OK(aclrtQueryEventStatus(ev, &rs));
  ASSERT_EQ(rs, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_OK(aclrtDestroyEvent(ev));
  ASSERT_OK(aclrtDestroyStream(st));

  char dst[8] = "-------";
  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtMemcpy", API(memcpy_hook)));
  ASSERT_OK(aclrtMemcpy(dst, 7, "abc", 3, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT(memcmp(dst, "HKD", 3) == 0);
  unhook("aclrtMemcpy");
  ASSERT_OK(aclrtMemcpy(dst, 7, "abc", 3, ACL_MEMCPY_HOST_TO_HOST));
  ASSERT(memcmp(dst, "abc", 3) == 0);

  size_t fail = 0;
  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtMemcpyBatch", API(batch_hook)));
  ASSERT_OK(aclrtMemcpyBatch((void **)0x11, (size_t *)0x22, (void **)0x33,
                             (size_t *)0x44, 5, (aclrtMemcpyBatchAttr *)0x66,
                             (size_t *)0x77, 8, &fail));
  ASSERT_EQ(fail, (size_t)4242);
  ASSERT_EQ(batch_fail_index_seen, (size_t)1);
  unhook("aclrtMemcpyBatch");
  /* the implementation again: a NULL array is refused */
  ASSERT_ACL(aclrtMemcpyBatch(NULL, NULL, NULL, NULL, 1, NULL, NULL, 0, &fail),
             ACL_ERROR_INVALID_PARAM);

  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtAllocatorCreateDesc",
                                     API(desc_hook)));
  ASSERT(aclrtAllocatorCreateDesc() == (aclrtAllocatorDesc)(uintptr_t)0xdecade);
  unhook("aclrtAllocatorCreateDesc");
  aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
  ASSERT(d != NULL && d != (aclrtAllocatorDesc)(uintptr_t)0xdecade);
  ASSERT_OK(aclrtAllocatorDestroyDesc(d));
}

/* ------------------------------------------- calls inside the library */
static atomic_uint sync_timeout_hits;
static aclError (*orig_sync_timeout)(int32_t);
static aclError count_sync_timeout(int32_t timeout) {
  atomic_fetch_add(&sync_timeout_hits, 1);
  return orig_sync_timeout(timeout);
}

TEST(calls_inside_the_library_are_not_redirected) {
  aclrtApiFunc origin, current;
  current_of("aclrtSynchronizeDeviceWithTimeout", &origin, &current);
  orig_sync_timeout = (aclError(*)(int32_t))(void (*)(void))origin;
  ASSERT_OK(aclrtApiInjectionSetFunc("aclrtSynchronizeDeviceWithTimeout",
                                     API(count_sync_timeout)));
  /* aclrtSynchronizeDevice is implemented with the timeout variant */
  ASSERT_OK(aclrtSynchronizeDevice());
  ASSERT_EQ(atomic_load(&sync_timeout_hits), 0u);
  ASSERT_OK(aclrtSynchronizeDeviceWithTimeout(-1));
  ASSERT_EQ(atomic_load(&sync_timeout_hits), 1u);
  unhook("aclrtSynchronizeDeviceWithTimeout");
}

/* ---------------------------------------------------------- bad input */
TEST(bad_input_is_refused_and_changes_nothing) {
  aclrtApiFunc origin, current;
  current_of("aclrtGetDevice", &origin, &current);
  ASSERT(origin != NULL && origin == current);
  aclrtApiFunc h = API(count_get_device);
  ASSERT_ACL(aclrtApiInjectionSetFunc(NULL, h), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL(aclrtApiInjectionSetFunc("aclrtGetDevice", NULL),
             ACL_ERROR_INVALID_PARAM);
  /* not in CANN's hook table: aclInit/aclFinalize, the injection calls,
   * unknown and misspelt names */
  static const char *const refused[] = {
      "aclInit", "aclFinalize", "aclrtApiInjectionSetFunc",
      "aclrtApiInjectionGetFunc", "aclrtgetdevice", "aclrtGetDevice ", "",
      "aclrtNoSuchCall", "aclrtSubscribeHostFunc"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    ASSERT_ACL(aclrtApiInjectionSetFunc(refused[i], h),
               ACL_ERROR_INVALID_PARAM);
    aclrtApiFunc o = NULL, c = NULL;
    ASSERT_ACL(aclrtApiInjectionGetFunc(refused[i], &o, &c),
               ACL_ERROR_INVALID_PARAM);
    ASSERT(o == NULL && c == NULL);
  }
  ASSERT_ACL(aclrtApiInjectionGetFunc(NULL, &origin, &current),
             ACL_ERROR_INVALID_PARAM);
  /* both outputs are optional */
  ASSERT_OK(aclrtApiInjectionGetFunc("aclrtGetDevice", NULL, NULL));
  aclrtApiFunc o2 = NULL;
  ASSERT_OK(aclrtApiInjectionGetFunc("aclrtGetDevice", &o2, NULL));
  ASSERT(o2 == origin);
  /* nothing changed */
  aclrtApiFunc o3, c3;
  current_of("aclrtGetDevice", &o3, &c3);
  ASSERT(o3 == origin && c3 == origin);
  atomic_store(&get_device_hits, 0);
  int32_t dev = -1;
  ASSERT_OK(aclrtGetDevice(&dev));
  ASSERT_EQ(atomic_load(&get_device_hits), 0u);
}

/* --------------------------------------------- racing with the callers */
#define CALLERS 2
static atomic_bool stop_callers;
static atomic_uint caller_calls[CALLERS];
static atomic_uint caller_errors;

static void *caller(void *arg) {
  int i = (int)(intptr_t)arg;
  if (aclrtSetDevice(0) != ACL_SUCCESS)
    atomic_fetch_add(&caller_errors, 1);
  while (!atomic_load(&stop_callers)) {
    int32_t dev = -1;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS || dev != 0)
      atomic_fetch_add(&caller_errors, 1);
    atomic_fetch_add(&caller_calls[i], 1);
  }
  aclrtResetDevice(0);
  return NULL;
}

/* Wait (backing off, generous bound) until *v >= want. */
static int wait_at_least(atomic_uint *v, unsigned want) {
  for (int i = 0; i < 120000; i++) {
    if (atomic_load(v) >= want)
      return 1;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

TEST(hook_set_and_restored_while_threads_call) {
  atomic_store(&stop_callers, false);
  atomic_store(&caller_errors, 0);
  pthread_t t[CALLERS];
  for (int i = 0; i < CALLERS; i++) {
    atomic_store(&caller_calls[i], 0);
    ASSERT(pthread_create(&t[i], NULL, caller, (void *)(intptr_t)i) == 0);
  }
  for (int round = 0; round < 5; round++) {
    atomic_store(&get_device_hits, 0);
    hook_get_device();
    /* the callers reach the hook */
    ASSERT(wait_at_least(&get_device_hits, 200));
    unhook("aclrtGetDevice");
    unsigned at_restore = atomic_load(&get_device_hits);
    /* each caller makes 200 more calls: none reaches the hook but the one
     * call per caller that may have loaded it before the restore */
    unsigned base[CALLERS];
    for (int i = 0; i < CALLERS; i++)
      base[i] = atomic_load(&caller_calls[i]);
    for (int i = 0; i < CALLERS; i++)
      ASSERT(wait_at_least(&caller_calls[i], base[i] + 200));
    ASSERT(atomic_load(&get_device_hits) <= at_restore + CALLERS);
  }
  atomic_store(&stop_callers, true);
  for (int i = 0; i < CALLERS; i++)
    pthread_join(t[i], NULL);
  ASSERT_EQ(atomic_load(&caller_errors), 0u);
}
