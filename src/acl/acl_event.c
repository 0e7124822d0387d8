/*
 * acl_event.c - ACL events over evrt events.
 *
 * Two generations (reference/acl-streams-events.md section 5):
 *  - legacy (aclrtCreateEvent, aclrtCreateEventWithFlag): a flag that must be
 *    reset.  Built on EVRT_EVENT_WAIT_NEXT_RECORD where the event has a wait
 *    task, so that a stream wait on a not-recorded (never, or reset) event
 *    waits for the next record; query-status before the first record is
 *    NOT_READY; aclrtResetEvent works.
 *  - new mode (aclrtCreateEventExWithFlag): re-captured by every record, a
 *    wait binds to the record current at enqueue (evrt's native rule), a
 *    wait before any record is a no-op, query-status before the first record
 *    is COMPLETE, and reset / query / wait-status are rejected (207000).
 * Event resources: events the doc counts (aclrtCreateEvent, SYNC and
 * EXTERNAL) take one of evrt's per-device resources at record; the others
 * are created with EVRT_EVENT_NO_LIMIT.
 *
 * The side table (id -> struct meta) is under acl__lock; callers copy
 * what they need out of it, since another thread may destroy the event.
 */
#include "acl_internal.h"

#include <stdlib.h>
#include <string.h>

enum { LEGACY = 0, NEW_MODE = 1 };

struct meta {
  int mode;
  uint32_t flags;   /* ACL flags */
  int device;       /* device of the context current at create */
  int rec_flag;     /* first record's flag, -1 before (sticky) */
  int wait_flag;    /* first wait's flag, -1 before (sticky) */
  int imported;     /* opened from an IPC handle */
  bool recorded;    /* a record succeeded once.  The layer's own checks
                     * read it instead of evrt_event_get_info, which under
                     * EVRT_CHECK orders its caller after a complete event:
                     * a check the program did not ask for must not. */
};

static struct acl__map *events;

/* Flags of events that have a wait task (IsEventWithoutWaitTask's
 * complement). */
#define WAIT_TASK_FLAGS                                                        \
  (ACL_EVENT_SYNC | ACL__EVENT_DDSYNC | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)

static aclError lookup(const char *fn, aclrtEvent event, struct meta *out,
                       uint64_t *idp) {
  if (!event)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
  uint64_t id;
  evrt_status_t st = evrt_event_get_id((evrt_event_t)event, &id);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  struct meta *m = acl__map_get(&events, id);
  if (m)
    *out = *m;
  pthread_mutex_unlock(&acl__lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                          "event %p was not created by the ACL layer", event);
  if (idp)
    *idp = id;
  return ACL_SUCCESS;
}

/* Register a new evrt event (made with status st) with its ACL metadata m
 * and hand it out; on any failure nothing is left behind. */
static aclError adopt(const char *fn, evrt_status_t st, evrt_event_t e,
                      struct meta *m, aclrtEvent *event) {
  uint64_t id = 0;
  if (st == EVRT_SUCCESS && (st = evrt_event_get_id(e, &id)))
    evrt_event_destroy(e);
  if (st) {
    free(m);
    return acl__st(st, fn);
  }
  pthread_mutex_lock(&acl__lock);
  int bad = acl__map_put(&events, id, m);
  pthread_mutex_unlock(&acl__lock);
  if (bad) {
    free(m);
    evrt_event_destroy(e);
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  }
  *event = (aclrtEvent)e;
  return ACL_SUCCESS;
}

static aclError create(const char *fn, aclrtEvent *event, uint32_t flag,
                       int mode) {
  if (!event)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  unsigned nf = 0;
  if (flag & ACL_EVENT_TIME_LINE)
    nf |= EVRT_EVENT_TIMING;
  if (flag & ACL_EVENT_IPC)
    nf |= EVRT_EVENT_INTERPROCESS;
  if (mode == LEGACY && (flag & (ACL_EVENT_SYNC | ACL__EVENT_DDSYNC)))
    nf |= EVRT_EVENT_WAIT_NEXT_RECORD;
  bool limited = flag == ACL__EVENT_DEFAULT_FLAG ||
                 (flag & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL));
  if (!limited)
    nf |= EVRT_EVENT_NO_LIMIT;
  struct meta *m = malloc(sizeof *m);
  if (!m)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *m = (struct meta){mode, flag, c->device, -1, -1, 0, false};
  evrt_event_t e = NULL;
  evrt_status_t st = evrt_event_create(&e, nf);
  return adopt(fn, st, e, m, event);
}

aclError aclrtCreateEvent(aclrtEvent *event) {
  return create("aclrtCreateEvent", event, ACL__EVENT_DEFAULT_FLAG, LEGACY);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
  static const char fn[] = "aclrtCreateEventWithFlag";
  const uint32_t max = 0x3Fu;
  if ((flag & max) == 0 || flag > max)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "flag 0x%x: must be a non-empty subset of 0x%x "
                          "(ACL_EVENT_IPC needs aclrtCreateEventExWithFlag)",
                          flag, max);
  if (((flag & ACL_EVENT_DEVICE_USE_ONLY) && flag != ACL_EVENT_DEVICE_USE_ONLY) ||
      ((flag & ACL_EVENT_EXTERNAL) && flag != ACL_EVENT_EXTERNAL))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "flag 0x%x: ACL_EVENT_DEVICE_USE_ONLY and "
                          "ACL_EVENT_EXTERNAL must be used alone",
                          flag);
  return create(fn, event, flag, LEGACY);
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag) {
  static const char fn[] = "aclrtCreateEventExWithFlag";
  const uint32_t alone =
      ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;
  if ((flag & alone) && (flag & ~(flag & alone)))
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "flag 0x%x: ACL_EVENT_IPC must be used alone", flag);
  const uint32_t max = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS |
                       ACL__EVENT_DDSYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_IPC;
  if ((flag & max) == 0 || flag > max)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "flag 0x%x: must be an OR of ACL_EVENT_SYNC, "
                          "ACL_EVENT_CAPTURE_STREAM_PROGRESS and "
                          "ACL_EVENT_TIME_LINE, or ACL_EVENT_IPC alone",
                          flag);
  return create(fn, event, flag, NEW_MODE);
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  static const char fn[] = "aclrtDestroyEvent";
  struct meta m;
  uint64_t id;
  aclError r = lookup(fn, event, &m, &id);
  if (r)
    return r;
  evrt_status_t st = evrt_event_destroy((evrt_event_t)event);
  if (st)
    return acl__st(st, fn);
  pthread_mutex_lock(&acl__lock);
  free(acl__map_del(&events, id));
  pthread_mutex_unlock(&acl__lock);
  return ACL_SUCCESS;
}

/* Sticky record / wait flag: the first use fixes it. */
static aclError sticky(const char *fn, uint64_t id, bool record, int flag) {
  pthread_mutex_lock(&acl__lock);
  struct meta *m = acl__map_get(&events, id);
  int *slot = m ? (record ? &m->rec_flag : &m->wait_flag) : NULL;
  int was = slot ? *slot : -1;
  if (slot && was < 0)
    *slot = flag;
  pthread_mutex_unlock(&acl__lock);
  if (!m)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn, "event destroyed");
  if (was >= 0 && was != flag)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "the event's %s flag was fixed to %d by its first "
                          "%s; %d is not allowed now",
                          record ? "record" : "wait", was,
                          record ? "record" : "wait", flag);
  return ACL_SUCCESS;
}

static aclError record(const char *fn, aclrtEvent event, aclrtStream stream,
                       uint32_t flag) {
  struct meta m;
  uint64_t id;
  aclError r = lookup(fn, event, &m, &id);
  if (r)
    return r;
  if (m.flags & ACL_EVENT_DEVICE_USE_ONLY)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "an ACL_EVENT_DEVICE_USE_ONLY event cannot be "
                          "recorded from the host");
  evrt_stream_t h;
  if ((r = acl__stream(fn, stream, &h)))
    return r;
  int sdev;
  evrt_status_t st = evrt_stream_get_device(h, &sdev);
  if (st)
    return acl__st(st, fn);
  if (!m.imported && sdev != m.device)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "event of device %d recorded on a stream of "
                          "device %d",
                          m.device, sdev);
  /* (an external record is for capture only: acl_mdl.c) */
  if (flag == ACL_EVENT_RECORD_EXTERNAL && (r = acl__mdl_capturing(fn, h)))
    return r;
  if ((r = sticky(fn, id, true, (int)flag)))
    return r;
  st = evrt_event_record_with_flags((evrt_event_t)event, h,
                                    flag == ACL_EVENT_RECORD_EXTERNAL
                                        ? EVRT_EVENT_RECORD_EXTERNAL
                                        : EVRT_EVENT_RECORD_DEFAULT);
  if (st == EVRT_SUCCESS) {
    pthread_mutex_lock(&acl__lock);
    struct meta *mm = acl__map_get(&events, id);
    if (mm)
      mm->recorded = true;
    pthread_mutex_unlock(&acl__lock);
  }
  return acl__st(st, fn);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return record("aclrtRecordEvent", event, stream, ACL_EVENT_RECORD_DEFAULT);
}

aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream,
                                  uint32_t flag) {
  static const char fn[] = "aclrtRecordEventWithFlag";
  if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flag 0x%x",
                          flag);
  return record(fn, event, stream, flag);
}

static aclError wait_checks(const char *fn, aclrtEvent event, struct meta *m,
                            uint64_t *id) {
  aclError r = lookup(fn, event, m, id);
  if (r)
    return r;
  if (m->flags & ACL_EVENT_DEVICE_USE_ONLY)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "an ACL_EVENT_DEVICE_USE_ONLY event cannot be used "
                          "from the host");
  if (!(m->flags & WAIT_TASK_FLAGS))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "event flags 0x%x have no wait task (create it with "
                          "ACL_EVENT_SYNC)",
                          m->flags);
  return ACL_SUCCESS;
}

static aclError stream_wait(const char *fn, aclrtStream stream,
                            aclrtEvent event, int64_t timeout_ns,
                            uint32_t flag) {
  struct meta m;
  uint64_t id;
  aclError r = wait_checks(fn, event, &m, &id);
  if (r)
    return r;
  evrt_stream_t h;
  if ((r = acl__stream(fn, stream, &h)))
    return r;
  if (m.mode == LEGACY && !(m.flags & ACL_EVENT_SYNC) && !m.imported) {
    /* A default legacy event must have been recorded once; after a reset
     * its wait is for the next record (EVRT_EVENT_WAIT_NEXT_RECORD). */
    if (!m.recorded)
      return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                            "the event has not been recorded: call "
                            "aclrtRecordEvent first");
  }
  /* (an external wait is for capture only, with no timeout: acl_mdl.c) */
  if (flag == ACL_EVENT_WAIT_EXTERNAL && (r = acl__mdl_capturing(fn, h)))
    return r;
  if ((r = sticky(fn, id, false, (int)flag)))
    return r;
  evrt_status_t st =
      flag == ACL_EVENT_WAIT_EXTERNAL
          ? evrt_stream_wait_event_with_flags(h, (evrt_event_t)event,
                                              EVRT_EVENT_WAIT_EXTERNAL)
      : timeout_ns >= 0
          ? evrt_stream_wait_event_timeout(h, (evrt_event_t)event, timeout_ns)
          : evrt_stream_wait_event(h, (evrt_event_t)event);
  return acl__st(st, fn);
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  unsigned s = atomic_load_explicit(&acl__op_wait_timeout,
                                    memory_order_relaxed);
  return stream_wait("aclrtStreamWaitEvent", stream, event,
                     s ? (int64_t)s * 1000000000 : -1, ACL_EVENT_WAIT_DEFAULT);
}

aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event,
                                         int32_t timeout) {
  static const char fn[] = "aclrtStreamWaitEventWithTimeout";
  if (timeout < 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %d s is negative (0 = never times out)",
                          (int)timeout);
  /* seconds, as the doc and the official sample use it */
  return stream_wait(fn, stream, event,
                     timeout ? (int64_t)timeout * 1000000000 : -1,
                     ACL_EVENT_WAIT_DEFAULT);
}

aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event,
                                      uint32_t timeout, uint32_t flag) {
  static const char fn[] = "aclrtStreamWaitEventWithFlag";
  if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown flag 0x%x",
                          flag);
  if (timeout > INT32_MAX)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %u s is too large", timeout);
  return stream_wait(fn, stream, event,
                     timeout ? (int64_t)timeout * 1000000000 : -1, flag);
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  static const char fn[] = "aclrtResetEvent";
  struct meta m;
  uint64_t id;
  aclError r = wait_checks(fn, event, &m, &id);
  if (r)
    return r;
  if (m.mode == NEW_MODE || (m.flags & ACL_EVENT_IPC))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "events from aclrtCreateEventExWithFlag are reused "
                          "by recording again; they cannot be reset");
  evrt_stream_t h;
  if ((r = acl__stream(fn, stream, &h)))
    return r;
  evrt_status_t st = evrt_event_reset((evrt_event_t)event, h);
  return acl__st2(st, EVRT_ERROR_NOT_RECORDED, ACL_ERROR_RT_PARAM_INVALID,
                       fn);
}

static aclError info_of(const char *fn, aclrtEvent event, evrt_event_info_t *i) {
  return acl__st(evrt_event_get_info((evrt_event_t)event, i), fn);
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status) {
  static const char fn[] = "aclrtQueryEvent";
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.mode == NEW_MODE || (m.flags & (ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "not supported for this event; use "
                          "aclrtQueryEventStatus");
  evrt_event_info_t i = {.struct_size = sizeof i};
  if ((r = info_of(fn, event, &i)))
    return r;
  /* Only records made by the calling thread count: a record by another
   * thread is invisible here, as if this thread had never recorded. */
  bool pending = i.state == EVRT_EVENT_STATE_PENDING &&
                 i.record_thread == evrt_thread_id();
  *status = pending ? ACL_EVENT_STATUS_NOT_READY : ACL_EVENT_STATUS_COMPLETE;
  return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event,
                               aclrtEventRecordedStatus *status) {
  static const char fn[] = "aclrtQueryEventStatus";
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.flags & ACL_EVENT_EXTERNAL)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "not supported for ACL_EVENT_EXTERNAL events");
  evrt_event_info_t i = {.struct_size = sizeof i};
  if ((r = info_of(fn, event, &i)))
    return r;
  /* (pending, or last recorded inside a capture: 107028) */
  evrt_status_t q = i.state == EVRT_EVENT_STATE_PENDING
                        ? evrt_event_query((evrt_event_t)event)
                        : EVRT_SUCCESS;
  if (q == EVRT_ERROR_CAPTURE_EVENT)
    return acl__st(q, fn);
  /* (a query that found the pending generation complete since is an
   * answer too: evrt ordered the caller after it, so it must say so) */
  bool done = i.state == EVRT_EVENT_STATE_COMPLETE ||
              (i.state == EVRT_EVENT_STATE_PENDING && q == EVRT_SUCCESS) ||
              (i.state == EVRT_EVENT_STATE_UNRECORDED && m.mode == NEW_MODE);
  *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                 : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

aclError aclrtQueryEventWaitStatus(aclrtEvent event,
                                   aclrtEventWaitStatus *status) {
  static const char fn[] = "aclrtQueryEventWaitStatus";
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "status is NULL");
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.mode == NEW_MODE || (m.flags & (ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "not supported for events from "
                          "aclrtCreateEventExWithFlag");
  evrt_status_t st = evrt_event_wait_status((evrt_event_t)event);
  if (st != EVRT_SUCCESS && st != EVRT_NOT_READY)
    return acl__st(st, fn);
  *status = st == EVRT_SUCCESS ? ACL_EVENT_WAIT_STATUS_COMPLETE
                               : ACL_EVENT_WAIT_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

static aclError sync_event(const char *fn, aclrtEvent event, int64_t ns) {
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.flags & ACL_EVENT_EXTERNAL)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "not supported for ACL_EVENT_EXTERNAL events");
  evrt_status_t st = evrt_event_synchronize_timeout((evrt_event_t)event, ns);
  return acl__st2(st, EVRT_ERROR_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                       fn);
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  return sync_event("aclrtSynchronizeEvent", event, -1);
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
  static const char fn[] = "aclrtSynchronizeEventWithTimeout";
  if (timeout < -1 || timeout == 0)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "timeout %d: must be -1 (forever) or > 0 ms",
                          (int)timeout);
  return sync_event(fn, event, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

static aclError timing_checks(const char *fn, aclrtEvent event) {
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.flags & (ACL_EVENT_EXTERNAL | ACL_EVENT_IPC))
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "no timestamps for external or IPC events");
  return ACL_SUCCESS;
}

/* evrt checks "timing enabled" first; ACL checks "recorded" first.  A
 * never-recorded event gets 507000 either way. */
static aclError timing_status(const char *fn, evrt_status_t st,
                              aclrtEvent a, aclrtEvent b) {
  if (st == EVRT_ERROR_TIMING_DISABLED) {
    struct meta m;
    if ((!lookup(fn, a, &m, NULL) && !m.recorded) ||
        (b && !lookup(fn, b, &m, NULL) && !m.recorded))
      st = EVRT_ERROR_NOT_RECORDED;
  }
  return acl__st(st, fn);
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
                               aclrtEvent endEvent) {
  static const char fn[] = "aclrtEventElapsedTime";
  if (!ms)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "ms is NULL");
  aclError r = timing_checks(fn, startEvent);
  if (r || (r = timing_checks(fn, endEvent)))
    return r;
  evrt_status_t st = evrt_event_elapsed_time(ms, (evrt_event_t)startEvent,
                                             (evrt_event_t)endEvent);
  return st ? timing_status(fn, st, startEvent, endEvent) : ACL_SUCCESS;
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp) {
  static const char fn[] = "aclrtEventGetTimestamp";
  if (!timestamp)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "timestamp is NULL");
  aclError r = timing_checks(fn, event);
  if (r)
    return r;
  uint64_t ns;
  evrt_status_t st = evrt_event_timestamp((evrt_event_t)event, &ns);
  if (st)
    return timing_status(fn, st, event, NULL);
  *timestamp = ns / 1000u; /* microseconds, per the doc */
  return ACL_SUCCESS;
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId) {
  static const char fn[] = "aclrtGetEventId";
  if (!eventId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "eventId is NULL");
  struct meta m;
  uint64_t id;
  aclError r = lookup(fn, event, &m, &id);
  if (r)
    return r;
  if (m.flags & ACL_EVENT_IPC)
    return acl__fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn,
                          "IPC events have no event id");
  *eventId = (uint32_t)id;
  return ACL_SUCCESS;
}

aclError aclrtGetEventAvailNum(uint32_t *eventCount) {
  static const char fn[] = "aclrtGetEventAvailNum";
  if (!eventCount)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "eventCount is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  return acl__st(evrt_device_event_available(c->device, eventCount), fn);
}

/* ------------------------------------------------------------- IPC */

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle) {
  static const char fn[] = "aclrtIpcGetEventHandle";
  if (!handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "handle is NULL");
  struct meta m;
  aclError r = lookup(fn, event, &m, NULL);
  if (r)
    return r;
  if (m.mode != NEW_MODE || m.flags != ACL_EVENT_IPC || m.imported)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, fn,
                          "only events created by aclrtCreateEventExWithFlag"
                          "(ACL_EVENT_IPC) in this process can be exported");
  evrt_ipc_event_handle_t h;
  evrt_status_t st = evrt_event_ipc_handle((evrt_event_t)event, &h);
  if (st)
    return acl__st(st, fn);
  _Static_assert(sizeof h == sizeof *handle, "IPC handle sizes differ");
  memcpy(handle, &h, sizeof h);
  return ACL_SUCCESS;
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event) {
  static const char fn[] = "aclrtIpcOpenEventHandle";
  if (!event)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "event is NULL");
  struct acl__ctx *c = NULL;
  aclError r = acl__current(fn, &c);
  if (r)
    return r;
  evrt_ipc_event_handle_t h;
  memcpy(&h, &handle, sizeof h);
  struct meta *m = malloc(sizeof *m);
  if (!m)
    return acl__fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, "out of memory");
  *m = (struct meta){NEW_MODE, ACL_EVENT_IPC, c->device, -1, -1, 1, false};
  evrt_event_t e = NULL;
  evrt_status_t st = evrt_event_ipc_open(&e, &h);
  return adopt(fn, st, e, m, event);
}
