/* Helpers shared by the ACL samples: the logging and error-check macros the
 * CANN samples use, and a "long kernel" that is a host task here. */
#ifndef ACL_SAMPLE_COMMON_H
#define ACL_SAMPLE_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <acl/acl.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define INFO_LOG(fmt, ...) printf("[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR]  " fmt "\n", ##__VA_ARGS__)
#define CHECK_ERROR(call)                                                      \
  do {                                                                         \
    aclError r_ = (call);                                                      \
    if (r_ != ACL_SUCCESS) {                                                   \
      const char *m_ = aclGetRecentErrMsg();                                   \
      ERROR_LOG("%s failed: %d (%s)", #call, r_, m_ ? m_ : "");                \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* Stand-in for a device kernel that takes a while and adds one to *x. */
static void long_op_task(void *arg) {
  struct timespec ts = {0, 200 * 1000000L};
  nanosleep(&ts, NULL);
  *(unsigned *)arg += 1;
}
static inline aclError LongOP(aclrtStream stream, unsigned *x) {
  return aclrtLaunchHostFunc(stream, long_op_task, x);
}

#endif
