/* Host callbacks through aclrtSubscribeReport / aclrtLaunchCallback /
 * aclrtProcessReport (the flow of the CANN callback samples): a thread
 * processes reports; callbacks run on it in stream order. */
#include "sample_common.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int g_exit;

static void *process_thread(void *arg) {
  (void)arg;
  CHECK_ERROR(aclrtSetDevice(0));
  while (!atomic_load(&g_exit))
    (void)aclrtProcessReport(100); /* timeouts just loop */
  (void)aclGetRecentErrMsg();
  CHECK_ERROR(aclrtResetDevice(0));
  return NULL;
}

static void callback_func(void *userData) {
  INFO_LOG("Callback %d runs on the subscribed thread.", *(int *)userData);
}

int main(void) {
  static int ids[3] = {1, 2, 3};
  aclrtStream stream;
  pthread_t tid;
  unsigned *x;
  CHECK_ERROR(aclInit(NULL));
  CHECK_ERROR(aclrtSetDevice(0));
  CHECK_ERROR(aclrtCreateStream(&stream));
  pthread_create(&tid, NULL, process_thread, NULL);
  CHECK_ERROR(aclrtSubscribeReport((uint64_t)tid, stream));
  CHECK_ERROR(aclrtMalloc((void **)&x, sizeof *x, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ERROR(aclrtMemset(x, sizeof *x, 0, sizeof *x));
  for (int i = 0; i < 3; i++) {
    CHECK_ERROR(LongOP(stream, x));
    CHECK_ERROR(aclrtLaunchCallback(callback_func, &ids[i], ACL_CALLBACK_BLOCK,
                                    stream));
  }
  CHECK_ERROR(aclrtSynchronizeStream(stream));
  INFO_LOG("All callbacks done, x = %u.", *x);
  CHECK_ERROR(aclrtUnSubscribeReport((uint64_t)tid, stream));
  atomic_store(&g_exit, 1);
  pthread_join(tid, NULL);
  CHECK_ERROR(aclrtFree(x));
  CHECK_ERROR(aclrtDestroyStream(stream));
  CHECK_ERROR(aclrtResetDevice(0));
  CHECK_ERROR(aclFinalize());
  INFO_LOG("Resource cleanup completed.");
  return 0;
}
