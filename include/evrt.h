/*
 * evrt.h - the public C API of evrt, a stream-and-event runtime.
 *
 * Streams are in-order asynchronous work queues bound to a device; events are
 * markers recorded into a stream.  The embedded cpu backend runs streams on a
 * pool of host worker threads, so every call here works on any Linux machine.
 *
 * Conventions
 *  - Every function returns an evrt_status_t.  0 (EVRT_SUCCESS) is success;
 *    EVRT_NOT_READY is a normal status (query of pending work), not a failure.
 *  - Handles are opaque, validated ids with a generation tag: NULL, destroyed,
 *    double-destroyed or forged handles give EVRT_ERROR_INVALID_HANDLE.
 *  - A failing call changes nothing.  evrt_last_error_message() gives the
 *    detail of the last failure on the calling thread.
 *  - Times are in nanoseconds unless the name says otherwise; a negative
 *    timeout means "wait forever".
 *
 * The normative semantics are in docs/design.md.
 */
#ifndef EVRT_H
#define EVRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(EVRT_BUILDING_LIBRARY) && defined(__GNUC__)
#define EVRT_EXPORT __attribute__((visibility("default")))
#else
#define EVRT_EXPORT
#endif

#define EVRT_VERSION_MAJOR 0
#define EVRT_VERSION_MINOR 1
#define EVRT_VERSION_PATCH 0
#define EVRT_VERSION_HEX                                                       \
  ((EVRT_VERSION_MAJOR << 16) | (EVRT_VERSION_MINOR << 8) | EVRT_VERSION_PATCH)

/* ------------------------------------------------------------------------ */
/* Errors: one X-macro table makes the enum, evrt_strerror and evrt_err_name. */

#define EVRT_ERRNO_MAP(XX)                                                     \
  XX(SUCCESS, 0, "success")                                                    \
  XX(NOT_READY, 1, "work captured by the object is not complete yet")          \
  XX(ERROR_INVALID_VALUE, 100, "invalid argument value")                       \
  XX(ERROR_INVALID_HANDLE, 101, "invalid, destroyed or forged handle")         \
  XX(ERROR_INVALID_DEVICE, 102, "invalid device index")                        \
  XX(ERROR_OUT_OF_MEMORY, 103, "out of memory")                                \
  XX(ERROR_TIMEOUT, 104, "timed out")                                          \
  XX(ERROR_TIMING_DISABLED, 105, "event was created without timing")           \
  XX(ERROR_NOT_RECORDED, 106, "event has not been recorded")                   \
  XX(ERROR_NOT_COMPLETE, 107, "event has not completed")                       \
  XX(ERROR_DEVICE_MISMATCH, 108, "objects belong to different devices")        \
  XX(ERROR_EVENT_LIMIT, 109, "per-device event resource limit reached")        \
  XX(ERROR_WOULD_DEADLOCK, 110, "call would wait on the calling stream")      \
  XX(ERROR_NOT_PERMITTED, 111, "operation not permitted on this object")       \
  XX(ERROR_NOT_SUPPORTED, 112, "operation not supported")                      \
  XX(ERROR_IPC_HANDLE, 113, "malformed or forged interprocess handle")         \
  XX(ERROR_IPC_SAME_PROCESS, 114, "interprocess handle opened by its exporter") \
  XX(ERROR_PEER_LOST, 115, "the peer process of an interprocess event died")   \
  XX(ERROR_FORKED, 116, "library was initialized before fork(): unusable "    \
                        "in the child")                                        \
  XX(ERROR_SHUTDOWN, 117, "library has been shut down")                        \
  XX(ERROR_SYSTEM, 118, "operating system call failed")                        \
  XX(ERROR_INTERNAL, 119, "internal error")

typedef enum evrt_status {
#define EVRT_ENUM_(name, value, msg) EVRT_##name = value,
  EVRT_ERRNO_MAP(EVRT_ENUM_)
#undef EVRT_ENUM_
} evrt_status_t;

/* Message for a status ("success", "invalid argument value", ...). */
EVRT_EXPORT const char *evrt_strerror(evrt_status_t status);
/* Name of a status ("EVRT_SUCCESS", "EVRT_ERROR_INVALID_HANDLE", ...). */
EVRT_EXPORT const char *evrt_err_name(evrt_status_t status);
/* Detail of the last failing call on this thread ("" if none).  The pointer
 * stays valid until the next evrt call on this thread. */
EVRT_EXPORT const char *evrt_last_error_message(void);
/* Status of the last failing call on this thread (EVRT_SUCCESS if none). */
EVRT_EXPORT evrt_status_t evrt_last_error(void);
/* Forget the last error of this thread. */
EVRT_EXPORT void evrt_clear_last_error(void);

/* ------------------------------------------------------------------------ */
/* Library */

EVRT_EXPORT unsigned evrt_version(void);          /* EVRT_VERSION_HEX */
EVRT_EXPORT const char *evrt_version_string(void); /* "0.1.0" */

/* Initialization is implicit on first use; evrt_init() makes it explicit.
 * evrt_shutdown() waits for running work items, discards queued ones, joins
 * every worker thread, flushes the trace and invalidates every handle.  Later
 * calls return EVRT_ERROR_SHUTDOWN.  After fork() in a process that had
 * initialized evrt, every call in the child returns EVRT_ERROR_FORKED. */
EVRT_EXPORT evrt_status_t evrt_init(void);
EVRT_EXPORT evrt_status_t evrt_shutdown(void);

/* ------------------------------------------------------------------------ */
/* Devices.  The cpu backend has EVRT_CPU_DEVICES (default 1) virtual devices.
 * The current device is per host thread (default 0). */

EVRT_EXPORT evrt_status_t evrt_device_count(int *count);
EVRT_EXPORT evrt_status_t evrt_set_device(int device);
EVRT_EXPORT evrt_status_t evrt_get_device(int *device);
/* Block until every stream of the device, destroyed ones still draining
 * included, has finished the work enqueued before the call. */
EVRT_EXPORT evrt_status_t evrt_device_synchronize(int device);
/* EVRT_ERROR_TIMEOUT if not done within timeout_ns (negative: forever). */
EVRT_EXPORT evrt_status_t evrt_device_synchronize_timeout(int device,
                                                          int64_t timeout_ns);
/* Event resources: an event takes one of its device's resources at its first
 * record (or IPC export) and gives it back when destroyed or reset.  The
 * default limit is 65535 per device (EVRT_EVENT_LIMIT in the environment
 * changes the default).  Lowering the limit below the number in use is an
 * error. */
EVRT_EXPORT evrt_status_t evrt_device_set_event_limit(int device,
                                                      uint32_t limit);
EVRT_EXPORT evrt_status_t evrt_device_get_event_limit(int device,
                                                      uint32_t *limit);
EVRT_EXPORT evrt_status_t evrt_device_event_available(int device,
                                                      uint32_t *available);

/* ------------------------------------------------------------------------ */
/* Streams */

typedef struct evrt_stream_s *evrt_stream_t;
typedef void (*evrt_host_fn)(void *user_data);

/* Priority: lower numbers run first (CUDA convention); 0 is normal and any
 * negative value is "high".  No flags are defined yet: pass 0. */
EVRT_EXPORT evrt_status_t evrt_stream_create(evrt_stream_t *stream, int device,
                                             int priority, unsigned flags);
/* The default stream of a device (cannot be destroyed). device -1 = current. */
EVRT_EXPORT evrt_status_t evrt_stream_default(int device,
                                              evrt_stream_t *stream);
/* Returns at once; pending work still completes; the handle is invalid at
 * once and the stream's resources are freed when its work is done. */
EVRT_EXPORT evrt_status_t evrt_stream_destroy(evrt_stream_t stream);
/* EVRT_SUCCESS if all enqueued work is done, else EVRT_NOT_READY. */
EVRT_EXPORT evrt_status_t evrt_stream_query(evrt_stream_t stream);
EVRT_EXPORT evrt_status_t evrt_stream_synchronize(evrt_stream_t stream);
/* EVRT_ERROR_TIMEOUT if not done within timeout_ns (negative: forever). */
EVRT_EXPORT evrt_status_t evrt_stream_synchronize_timeout(evrt_stream_t stream,
                                                          int64_t timeout_ns);
EVRT_EXPORT evrt_status_t evrt_stream_get_device(evrt_stream_t stream,
                                                 int *device);
EVRT_EXPORT evrt_status_t evrt_stream_get_priority(evrt_stream_t stream,
                                                   int *priority);
/* A process-unique id of the stream (stable for its lifetime; for traces and
 * for languages that need a hashable value). */
EVRT_EXPORT evrt_status_t evrt_stream_get_id(evrt_stream_t stream,
                                             uint64_t *id);
/* Label used by traces (copied; at most 63 bytes kept). */
EVRT_EXPORT evrt_status_t evrt_stream_set_name(evrt_stream_t stream,
                                               const char *name);

/* Work items, executed in order.  A host function runs on a worker thread
 * with no runtime lock held; it may call non-blocking evrt functions. */
EVRT_EXPORT evrt_status_t evrt_launch_host_func(evrt_stream_t stream,
                                                evrt_host_fn fn,
                                                void *user_data);
/* Same, with a label shown in traces (copied; at most 31 bytes kept). */
EVRT_EXPORT evrt_status_t evrt_launch_host_func_labeled(evrt_stream_t stream,
                                                        evrt_host_fn fn,
                                                        void *user_data,
                                                        const char *label);
EVRT_EXPORT evrt_status_t evrt_memcpy_async(evrt_stream_t stream, void *dst,
                                            const void *src, size_t bytes);
EVRT_EXPORT evrt_status_t evrt_memset_async(evrt_stream_t stream, void *dst,
                                            int value, size_t bytes);
/* A timed wait of delay_ns in stream order that burns no CPU and holds no
 * worker thread. */
EVRT_EXPORT evrt_status_t evrt_stream_delay(evrt_stream_t stream,
                                            uint64_t delay_ns);

/* ------------------------------------------------------------------------ */
/* Events */

typedef struct evrt_event_s *evrt_event_t;

#define EVRT_EVENT_DEFAULT 0x0u
/* Take a timestamp when the record executes (needed for elapsed time). */
#define EVRT_EVENT_TIMING 0x1u
/* synchronize parks the thread at once instead of spinning briefly. */
#define EVRT_EVENT_BLOCKING_SYNC 0x2u
/* Shareable with other processes (timing must be off). */
#define EVRT_EVENT_INTERPROCESS 0x4u
/* Legacy-flag semantics (ACL's aclrtCreateEvent events): a stream wait on an
 * event that is not recorded (never, or reset) waits for the next record
 * instead of being a no-op. */
#define EVRT_EVENT_WAIT_NEXT_RECORD 0x8u
/* The event takes no device event resource (is not counted by the limit). */
#define EVRT_EVENT_NO_LIMIT 0x10u
#define EVRT_EVENT_FLAGS_ALL 0x1fu

typedef enum evrt_event_state {
  EVRT_EVENT_STATE_UNRECORDED = 0, /* never recorded, or reset */
  EVRT_EVENT_STATE_PENDING = 1,    /* latest generation not complete */
  EVRT_EVENT_STATE_COMPLETE = 2    /* latest generation complete */
} evrt_event_state_t;

typedef struct evrt_event_info {
  unsigned flags;
  int device;              /* -1 until the first record or export */
  evrt_event_state_t state;
  uint64_t record_count;   /* number of records so far (generation number) */
  uint64_t record_thread;  /* evrt_thread_id() of the latest record, 0 if none */
  int imported;            /* opened from an interprocess handle */
} evrt_event_info_t;

/* Events are created lazily: no backend resource until the first record or
 * interprocess export. */
EVRT_EXPORT evrt_status_t evrt_event_create(evrt_event_t *event,
                                            unsigned flags);
/* Returns at once even if generations are pending; waiters are unaffected. */
EVRT_EXPORT evrt_status_t evrt_event_destroy(evrt_event_t event);
/* New generation = all work enqueued on stream before this call. */
EVRT_EXPORT evrt_status_t evrt_event_record(evrt_event_t event,
                                            evrt_stream_t stream);
/* EVRT_SUCCESS if the latest generation is complete (or never recorded),
 * EVRT_NOT_READY otherwise. */
EVRT_EXPORT evrt_status_t evrt_event_query(evrt_event_t event);
EVRT_EXPORT evrt_status_t evrt_event_synchronize(evrt_event_t event);
EVRT_EXPORT evrt_status_t evrt_event_synchronize_timeout(evrt_event_t event,
                                                         int64_t timeout_ns);
/* stream waits for the generation current now; later records, resets or the
 * destruction of event do not change what it waits for. */
EVRT_EXPORT evrt_status_t evrt_stream_wait_event(evrt_stream_t stream,
                                                 evrt_event_t event);
/* Same, failing the waiting stream's wait after timeout_ns: the stream goes
 * on, and the timeout is counted in evrt_stream_wait_failures(). */
EVRT_EXPORT evrt_status_t evrt_stream_wait_event_timeout(evrt_stream_t stream,
                                                         evrt_event_t event,
                                                         int64_t timeout_ns);
/* Number of waits on this stream that ended by timeout or peer loss. */
EVRT_EXPORT evrt_status_t evrt_stream_wait_failures(evrt_stream_t stream,
                                                    uint64_t *count);
/* Milliseconds from start to end.  Errors, checked in this order:
 * EVRT_ERROR_TIMING_DISABLED, EVRT_ERROR_NOT_RECORDED,
 * EVRT_ERROR_NOT_COMPLETE, EVRT_ERROR_DEVICE_MISMATCH. */
EVRT_EXPORT evrt_status_t evrt_event_elapsed_time(float *ms,
                                                  evrt_event_t start,
                                                  evrt_event_t end);
/* CLOCK_MONOTONIC time (ns) at which the latest record executed; same errors
 * as elapsed time. */
EVRT_EXPORT evrt_status_t evrt_event_timestamp(evrt_event_t event,
                                               uint64_t *ns);
/* Enqueue on stream a work item that returns the event to "not recorded"
 * (and gives back its event resource).  It has no effect if the event was
 * recorded again after this call.  The event must have been recorded. */
EVRT_EXPORT evrt_status_t evrt_event_reset(evrt_event_t event,
                                           evrt_stream_t stream);
/* EVRT_SUCCESS when every stream that waited on the latest generation has
 * passed its wait (or none waited), else EVRT_NOT_READY. */
EVRT_EXPORT evrt_status_t evrt_event_wait_status(evrt_event_t event);
EVRT_EXPORT evrt_status_t evrt_event_get_info(evrt_event_t event,
                                              evrt_event_info_t *info);
EVRT_EXPORT evrt_status_t evrt_event_get_device(evrt_event_t event,
                                                int *device);
/* A process-unique id of the event (for traces and hashing). */
EVRT_EXPORT evrt_status_t evrt_event_get_id(evrt_event_t event, uint64_t *id);

/* Non-zero id of the calling thread, as stored in evrt_event_info_t. */
EVRT_EXPORT uint64_t evrt_thread_id(void);

/* ------------------------------------------------------------------------ */
/* Interprocess events */

#define EVRT_IPC_HANDLE_SIZE 64
typedef struct evrt_ipc_event_handle {
  unsigned char reserved[EVRT_IPC_HANDLE_SIZE];
} evrt_ipc_event_handle_t;

/* Export an EVRT_EVENT_INTERPROCESS event (initialized on the current device
 * if never recorded).  Imported events cannot be re-exported. */
EVRT_EXPORT evrt_status_t evrt_event_ipc_handle(evrt_event_t event,
                                                evrt_ipc_event_handle_t *handle);
/* Open a handle exported by another process.  The event has timing off and
 * may be queried, synchronized, waited on and recorded, on a stream of any
 * device (its device is the exporter's).  The handle of an event that its
 * exporter destroyed gives EVRT_ERROR_INVALID_HANDLE. */
EVRT_EXPORT evrt_status_t evrt_event_ipc_open(evrt_event_t *event,
                                              const evrt_ipc_event_handle_t *handle);

/* ------------------------------------------------------------------------ */
/* Tracing (Chrome trace-event JSON; also EVRT_TRACE=path.json) */

EVRT_EXPORT evrt_status_t evrt_trace_start(const char *path);
EVRT_EXPORT evrt_status_t evrt_trace_stop(void);
/* Number of trace entries dropped because a buffer was full. */
EVRT_EXPORT uint64_t evrt_trace_dropped(void);

#ifdef __cplusplus
}
#endif

#endif /* EVRT_H */
