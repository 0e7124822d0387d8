/*
 * acl_failure.c - failing tasks on evrt's failure model (docs/design.md,
 * "Failures"): the ACL code a failure is reported with, the exception info
 * callbacks and their accessors, aclrtGetThreadLastTaskId,
 * aclrtGetErrorVerbose, aclrtStreamAbort / aclrtStreamStop and the stream
 * state callbacks.
 *
 * A task fails when a host task returns non-zero (evrt_launch_host_func_status:
 * the stand-in for a kernel that traps returns the aclError the kernel
 * would raise, 507035 for a vector core exception).  evrt keeps the error
 * pending; the ACL synchronize that reports it clears it (acl_stream.c,
 * acl_device.c), since CANN's samples show the stream running new tasks
 * normally after that synchronize returned 507035.
 *
 * Locks: cb_lock (a mutex, a leaf: the callback tables; callbacks are
 * called with no lock held).
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

struct rtExceptionInfo {
  uint32_t taskid, streamid, tid, deviceid, retcode;
  void *args;
  aclrtFuncHandle func;
};

#define MAX_CBS 16
#define MAX_STATE_CBS 64
static ACL__MUTEX(cb_lock)
static aclrtExceptionInfoCallback set_cb;   /* aclrtSetExceptionInfoCallback */
static aclrtExceptionInfoCallback regs[MAX_CBS]; /* ...CallbackRegister */
static int nregs;
static struct state_cb {
  char name[64];
  aclrtStreamStateCallback fn;
  void *args;
} state_cbs[MAX_STATE_CBS];
static int nstate;
/* aclrtGetErrorVerbose: the last task failure of each device */
static struct {
  bool failed;
  uint32_t code;
} dev_err[ACL__MAX_DEVICES];
static atomic_bool native_installed;

aclError acl__failure_code(const evrt_task_failure_t *f) {
  /* A kernel killed while it ran: CANN's stream_with_failure_mode README
   * shows 507000 after aclrtStreamStop and the AI core's exception, 507035,
   * after aclrtStreamAbort.  Work discarded before it ran: 107023. */
  if (f->status == EVRT_ERROR_ABORTED)
    return f->code == EVRT_CANCEL_STOP    ? ACL_ERROR_RT_INTERNAL_ERROR
           : f->code == EVRT_CANCEL_ABORT ? ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
                                          : ACL_ERROR_RT_STREAM_ABORT;
  /* the task's own aclError when it is one (1xxxxx to 5xxxxx) */
  if (f->code >= 100000 && f->code < 600000)
    return f->code;
  return ACL_ERROR_RT_VECTOR_CORE_EXCEPTION;
}

/* Runs on the evrt worker that ran the failed task, marked as running it. */
static void on_failure(const evrt_task_failure_t *f, void *unused) {
  (void)unused;
  /* aclrtStreamGetId's id (acl__lock is a leaf held for a lookup: no wait
   * of the worker's) */
  int32_t sid = acl__stream_acl_id(f->stream_id);
  struct rtExceptionInfo info = {
      .taskid = (uint32_t)f->task_id,
      .streamid = sid >= 0 ? (uint32_t)sid
                           : (uint32_t)(f->stream_id & 0x7fffffff),
      .tid = (uint32_t)f->thread_id,
      .deviceid = (uint32_t)f->device,
      .retcode = (uint32_t)acl__failure_code(f),
      .args = f->user_data,
      .func = (aclrtFuncHandle)(uintptr_t)f->fn};
  aclrtExceptionInfoCallback call[MAX_CBS + 1];
  int n = 0;
  pthread_mutex_lock(&cb_lock);
  if (f->device >= 0 && f->device < ACL__MAX_DEVICES) {
    dev_err[f->device].failed = true;
    dev_err[f->device].code = info.retcode;
  }
  if (set_cb)
    call[n++] = set_cb;
  for (int i = 0; i < nregs; i++)
    if (regs[i] != set_cb)
      call[n++] = regs[i];
  pthread_mutex_unlock(&cb_lock);
  for (int i = 0; i < n; i++)
    call[i](&info);
}

void acl__failure_init(void) {
  if (atomic_load_explicit(&native_installed, memory_order_acquire))
    return;
  pthread_mutex_lock(&cb_lock);
  if (!atomic_load_explicit(&native_installed, memory_order_relaxed) &&
      evrt_failure_callback_add(on_failure, NULL) == EVRT_SUCCESS)
    atomic_store_explicit(&native_installed, true, memory_order_release);
  pthread_mutex_unlock(&cb_lock);
}

aclError acl__task_error(evrt_stream_t h, evrt_status_t st, const char *fn) {
  evrt_task_failure_t f;
  if (evrt_stream_clear_error(h, &f) != EVRT_SUCCESS ||
      f.status == EVRT_SUCCESS)
    evrt_last_task_failure(&f); /* cleared meanwhile: what was reported */
  aclError code = acl__failure_code(&f);
  return acl__fail(code, fn, "%s (%s)", evrt_last_error_message(),
                   evrt_err_name(st));
}

/* ---------------------------------------------------- exception info */

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback) {
  ACL__ENTER("aclrtSetExceptionInfoCallback");
  acl__failure_init();
  pthread_mutex_lock(&cb_lock);
  set_cb = callback; /* NULL: none */
  pthread_mutex_unlock(&cb_lock);
  return ACL_SUCCESS;
}

aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback cb) {
  static const char fn[] = "aclrtExceptionInfoCallbackRegister";
  ACL__ENTER(fn);
  if (!cb)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "callback is NULL");
  acl__failure_init();
  pthread_mutex_lock(&cb_lock);
  bool have = false;
  for (int i = 0; i < nregs; i++)
    have |= regs[i] == cb;
  bool full = !have && nregs == MAX_CBS;
  if (!have && !full)
    regs[nregs++] = cb;
  pthread_mutex_unlock(&cb_lock);
  if (full)
    return acl__fail(ACL_ERROR_RT_OVER_LIMIT, fn,
                     "%d callbacks are registered already", MAX_CBS);
  return ACL_SUCCESS;
}

aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback cb) {
  static const char fn[] = "aclrtExceptionInfoCallbackUnregister";
  ACL__ENTER(fn);
  if (!cb)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "callback is NULL");
  pthread_mutex_lock(&cb_lock);
  for (int i = 0; i < nregs; i++)
    if (regs[i] == cb) {
      memmove(&regs[i], &regs[i + 1], (size_t)(nregs - i - 1) * sizeof regs[0]);
      nregs--;
      break;
    }
  pthread_mutex_unlock(&cb_lock);
  return ACL_SUCCESS; /* not registered: nothing to do, as documented */
}

/* The info a callback got is the layer's own; a pointer that is not
 * readable memory (a stray one: the Python binding takes any integer) is
 * refused as NULL is, instead of crashing (issue 23, fuzz suite).  One
 * system call (acl_hostmem.c). */
static bool info_ok(const aclrtExceptionInfo *info) {
  return info && acl__host_range_ok(info, sizeof *info, false);
}

#define FIELD(name, field)                                                     \
  uint32_t name(const aclrtExceptionInfo *info) {                             \
    return info_ok(info) ? info->field : 0xFFFFFFFFu;                          \
  }
FIELD(aclrtGetTaskIdFromExceptionInfo, taskid)
FIELD(aclrtGetStreamIdFromExceptionInfo, streamid)
FIELD(aclrtGetThreadIdFromExceptionInfo, tid)
FIELD(aclrtGetDeviceIdFromExceptionInfo, deviceid)
FIELD(aclrtGetErrorCodeFromExceptionInfo, retcode)
#undef FIELD

aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info,
                                       void **devArgsPtr,
                                       uint32_t *devArgsLen) {
  static const char fn[] = "aclrtGetArgsFromExceptionInfo";
  if (!info || !devArgsPtr || !devArgsLen)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     !info ? "info" : !devArgsPtr ? "devArgsPtr" : "devArgsLen");
  if (!info_ok(info))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "info %p is not readable memory", (const void *)info);
  /* a host task's argument: its pointer, length unknown */
  *devArgsPtr = info->args;
  *devArgsLen = 0;
  return ACL_SUCCESS;
}

aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info,
                                             aclrtFuncHandle *func) {
  static const char fn[] = "aclrtGetFuncHandleFromExceptionInfo";
  if (!info || !func)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     info ? "func" : "info");
  if (!info_ok(info))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "info %p is not readable memory", (const void *)info);
  *func = info->func;
  return ACL_SUCCESS;
}

aclError aclrtGetThreadLastTaskId(uint32_t *taskId) {
  static const char fn[] = "aclrtGetThreadLastTaskId";
  if (!taskId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "taskId is NULL");
  uint64_t sid, task;
  evrt_status_t st = evrt_thread_last_task(&sid, &task);
  if (st)
    return acl__st(st, fn);
  *taskId = (uint32_t)task;
  return ACL_SUCCESS;
}

aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo) {
  static const char fn[] = "aclrtGetErrorVerbose";
  ACL__ENTER(fn);
  if (!errorInfo)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "errorInfo is NULL");
  if (!acl__device_ok(deviceId) || deviceId >= ACL__MAX_DEVICES)
    return acl__bad_device(fn, deviceId, ACL_ERROR_RT_INVALID_DEVICEID);
  memset(errorInfo, 0, sizeof *errorInfo);
  pthread_mutex_lock(&cb_lock);
  bool failed = dev_err[deviceId].failed;
  pthread_mutex_unlock(&cb_lock);
  if (failed) {
    /* a host task that failed stands for a kernel that trapped: a
     * software error of the AI core, nothing to repair */
    errorInfo->errorType = ACL_RT_ERROR_AICORE;
    errorInfo->hasDetail = 1;
    errorInfo->detail.aicoreErrType = ACL_RT_AICORE_ERROR_SW;
  } else {
    errorInfo->errorType = ACL_RT_NO_ERROR;
  }
  return ACL_SUCCESS;
}

/* ----------------------------------------------------- stop and abort */

aclError aclrtStreamAbort(aclrtStream stream) {
  static const char fn[] = "aclrtStreamAbort";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "stream is NULL (the default stream cannot be aborted)");
  return acl__st(evrt_stream_abort((evrt_stream_t)stream), fn);
}

aclError aclrtStreamStop(aclrtStream stream) {
  static const char fn[] = "aclrtStreamStop";
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "stream is NULL (the default stream cannot be stopped)");
  /* CANN stops the task running on the stream and keeps the others: the
   * running host task is asked to end (evrt_host_func_cancelled). */
  return acl__st(evrt_stream_stop((evrt_stream_t)stream), fn);
}

/* ------------------------------------------------ stream state callbacks */

aclError aclrtRegStreamStateCallback(const char *regName,
                                     aclrtStreamStateCallback callback,
                                     void *args) {
  static const char fn[] = "aclrtRegStreamStateCallback";
  ACL__ENTER(fn);
  if (!regName || !*regName || strlen(regName) >= sizeof state_cbs[0].name)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "regName is NULL, empty or longer than 63 bytes");
  pthread_mutex_lock(&cb_lock);
  int i = 0;
  while (i < nstate && strcmp(state_cbs[i].name, regName) != 0)
    i++;
  aclError r = ACL_SUCCESS;
  if (!callback) { /* unregister (nothing under that name: nothing to do) */
    if (i < nstate) {
      memmove(&state_cbs[i], &state_cbs[i + 1],
              (size_t)(nstate - i - 1) * sizeof state_cbs[0]);
      nstate--;
    }
  } else if (i == nstate && nstate == MAX_STATE_CBS) {
    r = ACL_ERROR_RT_OVER_LIMIT;
  } else {
    if (i == nstate)
      nstate++;
    strcpy(state_cbs[i].name, regName);
    state_cbs[i].fn = callback;
    state_cbs[i].args = args;
  }
  pthread_mutex_unlock(&cb_lock);
  if (r)
    return acl__fail(r, fn, "%d stream state callbacks are registered",
                     MAX_STATE_CBS);
  return ACL_SUCCESS;
}

void acl__stream_state(aclrtStream stream, int state) {
  struct state_cb copy[MAX_STATE_CBS];
  pthread_mutex_lock(&cb_lock);
  int n = nstate;
  memcpy(copy, state_cbs, (size_t)n * sizeof copy[0]);
  pthread_mutex_unlock(&cb_lock);
  for (int i = 0; i < n; i++)
    copy[i].fn(stream, (aclrtStreamState)state, copy[i].args);
}
