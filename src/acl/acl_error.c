/*
 * acl_error.c - the one evrt-status -> ACL-code table, and the per-thread
 * error state behind aclGetRecentErrMsg, aclrtGetLastError and
 * aclrtPeekAtLastError.
 */
#include "acl_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MSG_CAP 4096

/* Messages of failed calls since the last aclGetRecentErrMsg, newest first. */
static _Thread_local char tls_msgs[MSG_CAP];
static _Thread_local size_t tls_msgs_len;
/* The string handed out by the last aclGetRecentErrMsg (valid until the
 * next one, as documented). */
static _Thread_local char tls_out[MSG_CAP];
static _Thread_local aclError tls_last;

aclError acl__code_of(evrt_status_t st) {
  switch (st) {
  case EVRT_SUCCESS:
  case EVRT_NOT_READY:
    return ACL_SUCCESS;
  case EVRT_ERROR_INVALID_VALUE:
  case EVRT_ERROR_TIMING_DISABLED:
  case EVRT_ERROR_DEVICE_MISMATCH:
  case EVRT_ERROR_WOULD_DEADLOCK:
  case EVRT_ERROR_NOT_PERMITTED:
    return ACL_ERROR_RT_PARAM_INVALID;
  case EVRT_ERROR_INVALID_HANDLE:
    return ACL_ERROR_RT_INVALID_HANDLE;
  case EVRT_ERROR_INVALID_DEVICE:
    return ACL_ERROR_RT_INVALID_DEVICEID;
  case EVRT_ERROR_OUT_OF_MEMORY:
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  case EVRT_ERROR_TIMEOUT:
    return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
  case EVRT_ERROR_DEADLOCK:
    /* EVRT_CHECK found a cycle of waits; a device would end the stuck
     * task by its timeout (docs/check.md) */
    return ACL_ERROR_RT_TASK_TIMEOUT;
  case EVRT_ERROR_NOT_RECORDED:
    return ACL_ERROR_RT_INTERNAL_ERROR; /* RT_ERROR_EVENT_RECORDER_NULL */
  case EVRT_ERROR_NOT_COMPLETE:
    return ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID;
  case EVRT_ERROR_EVENT_LIMIT:
    return ACL_ERROR_RT_NO_EVENT_RESOURCE;
  case EVRT_ERROR_NOT_SUPPORTED:
    return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
  case EVRT_ERROR_IPC_HANDLE:
  case EVRT_ERROR_IPC_SAME_PROCESS:
  case EVRT_ERROR_PEER_LOST:
    return ACL_ERROR_RT_IPC_ERROR;
  case EVRT_ERROR_SHUTDOWN:
    return ACL_ERROR_UNINITIALIZE;
  case EVRT_ERROR_FORKED:
  case EVRT_ERROR_SYSTEM:
  case EVRT_ERROR_INTERNAL:
    return ACL_ERROR_RT_INTERNAL_ERROR;
  /* capture: CANN's rtErrMap (errcode_manage.cc); a potentially unsafe
   * call refused is 107030 instead (acl_mdl.c) */
  case EVRT_ERROR_CAPTURE_UNSUPPORTED:
    return ACL_ERROR_RT_STREAM_CAPTURED;
  case EVRT_ERROR_CAPTURE_INVALIDATED:
    return ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED;
  case EVRT_ERROR_CAPTURE_MERGE:
  case EVRT_ERROR_CAPTURE_ISOLATION:
    return ACL_ERROR_RT_CAPTURE_DEPENDENCY;
  case EVRT_ERROR_CAPTURE_UNMATCHED:
    return ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED;
  case EVRT_ERROR_CAPTURE_UNJOINED:
    return ACL_ERROR_RT_STREAM_UNJOINED;
  case EVRT_ERROR_CAPTURE_IMPLICIT:
    return ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT;
  case EVRT_ERROR_CAPTURE_WRONG_THREAD:
    return ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD;
  case EVRT_ERROR_CAPTURE_EVENT:
    return ACL_ERROR_RT_EVENT_CAPTURED;
  case EVRT_ERROR_TASK_FAILED:
    /* the failing task's own code when it has one (acl__failure_code) */
    return ACL_ERROR_RT_VECTOR_CORE_EXCEPTION;
  case EVRT_ERROR_ABORTED:
    return ACL_ERROR_RT_STREAM_ABORT;
  }
  return ACL_ERROR_RT_INTERNAL_ERROR;
}

static void store(aclError code, const char *msg) {
  tls_last = code;
  size_t n = strlen(msg);
  if (n + 1 >= MSG_CAP)
    n = MSG_CAP - 2;
  /* Prepend: newest message first; older ones are cut when full. */
  size_t keep = tls_msgs_len;
  if (n + 1 + keep >= MSG_CAP)
    keep = MSG_CAP - n - 2;
  memmove(tls_msgs + n + 1, tls_msgs, keep);
  memcpy(tls_msgs, msg, n);
  tls_msgs[n] = '\n';
  tls_msgs_len = n + 1 + keep;
  tls_msgs[tls_msgs_len] = '\0';
}

aclError acl__fail(aclError code, const char *fn, const char *fmt, ...) {
  char body[1024], line[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  snprintf(line, sizeof line, "%s failed (error %d): %s", fn, code, body);
  store(code, line);
  return code;
}

aclError acl__st2(evrt_status_t st, evrt_status_t special, aclError code,
                       const char *fn) {
  if (st == EVRT_SUCCESS || st == EVRT_NOT_READY)
    return ACL_SUCCESS;
  aclError c = st == special ? code : acl__code_of(st);
  if (st != special &&
      (st == EVRT_ERROR_TASK_FAILED || st == EVRT_ERROR_ABORTED)) {
    /* the failure evrt just reported on this thread: its own code */
    evrt_task_failure_t f;
    if (evrt_last_task_failure(&f) == EVRT_SUCCESS && f.status == st)
      c = acl__failure_code(&f);
  }
  return acl__fail(c, fn, "%s (%s)", evrt_last_error_message(),
                        evrt_err_name(st));
}

aclError acl__st(evrt_status_t st, const char *fn) {
  return acl__st2(st, EVRT_SUCCESS, ACL_SUCCESS, fn);
}

const char *aclGetRecentErrMsg(void) {
  if (tls_msgs_len == 0)
    return NULL;
  /* drop the trailing newline of the newest-first list */
  size_t n = tls_msgs_len;
  memcpy(tls_out, tls_msgs, n);
  if (n && tls_out[n - 1] == '\n')
    n--;
  tls_out[n] = '\0';
  tls_msgs_len = 0;
  tls_msgs[0] = '\0';
  return tls_out;
}

aclError aclrtGetLastError(aclrtLastErrLevel level) {
  if (level != ACL_RT_THREAD_LEVEL)
    return ACL_ERROR_INVALID_PARAM;
  aclError c = tls_last;
  tls_last = ACL_SUCCESS;
  return c;
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level) {
  if (level != ACL_RT_THREAD_LEVEL)
    return ACL_ERROR_INVALID_PARAM;
  return tls_last;
}
