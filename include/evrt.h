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
 *    Except: a NULL stream stands for the calling thread's current device's
 *    default stream wherever a stream is taken (as CUDA's stream 0 and
 *    ACL's NULL stream do); evrt_stream_destroy(NULL) is
 *    EVRT_ERROR_NOT_PERMITTED, as for any default stream.
 *  - A failing call changes nothing.  evrt_last_error_message() gives the
 *    detail of the last failure on the calling thread.
 *  - Times are in nanoseconds unless the name says otherwise; a negative
 *    timeout means "wait forever".
 *
 * Tags: the line above each function says, in this order,
 *  [ts]       thread-safe: may be called from any thread, racing any other
 *             call on the same objects, destroy included;
 *  [!ts]      must not run while any other thread is in (or enters) evrt;
 *  [nb]       does not wait: returns without waiting for enqueued work,
 *             another thread's progress, a timeout or file I/O (it may take
 *             a short internal lock, allocate, or start a runtime thread:
 *             the workers at the first call, the timer, the IPC watcher);
 *  [blocks]   may wait: for enqueued work or a timeout (synchronize), or
 *             for file I/O (tracing);
 *  [hostfn]   may be called from a host function (evrt_launch_host_func);
 *  [hostfn*]  may be called from a host function, except to wait for work
 *             that the host function's own stream has yet to reach: that
 *             returns EVRT_ERROR_WOULD_DEADLOCK instead of hanging (any other
 *             wait holds the worker thread; the pool adds workers meanwhile);
 *  [!hostfn]  from a host function returns EVRT_ERROR_WOULD_DEADLOCK.
 * tests/install/abi_check.py (test abi_evrt) refuses a declaration without
 * its tag line.
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

/* The version of evrt, written here only: CMake's project version (and from
 * it the pkg-config files, the CMake package and the Debian packages) and
 * python/setup.py read these three lines. */
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
  XX(ERROR_INTERNAL, 119, "internal error")                                   \
  XX(ERROR_DEADLOCK, 120, "awaited streams wait on each other (EVRT_CHECK)") \
  /* stream capture (docs/capture.md) */                                      \
  XX(ERROR_CAPTURE_UNSUPPORTED, 121, "operation not permitted while a "       \
                                     "stream is capturing")                    \
  XX(ERROR_CAPTURE_INVALIDATED, 122, "the capture was invalidated by an "      \
                                     "earlier error")                          \
  XX(ERROR_CAPTURE_MERGE, 123, "operation would merge two independent "        \
                               "captures")                                     \
  XX(ERROR_CAPTURE_UNMATCHED, 124, "the capture was not begun on this stream") \
  XX(ERROR_CAPTURE_UNJOINED, 125, "the capture forked into a stream that was " \
                                  "not joined back")                           \
  XX(ERROR_CAPTURE_ISOLATION, 126, "dependency on work outside the capture")   \
  XX(ERROR_CAPTURE_IMPLICIT, 127, "a default stream cannot take part in a "    \
                                  "capture")                                   \
  XX(ERROR_CAPTURE_WRONG_THREAD, 128, "capture ended on another thread than "  \
                                      "the one that began it")                 \
  XX(ERROR_CAPTURE_EVENT, 129, "operation not permitted on an event last "     \
                               "recorded in a capture")                        \
  /* failures (numbered from 140: other blocks take the values after 119) */ \
  XX(ERROR_TASK_FAILED, 140, "a task of the stream failed")                   \
  XX(ERROR_ABORTED, 141, "queued work of the stream was discarded by an "     \
                         "abort")

typedef enum evrt_status {
#define EVRT_ENUM_(name, value, msg) EVRT_##name = value,
  EVRT_ERRNO_MAP(EVRT_ENUM_)
#undef EVRT_ENUM_
} evrt_status_t;

/* Message for a status ("success", "invalid argument value", ...). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT const char *evrt_strerror(evrt_status_t status);
/* Name of a status ("EVRT_SUCCESS", "EVRT_ERROR_INVALID_HANDLE", ...). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT const char *evrt_err_name(evrt_status_t status);
/* Detail of the last failing call on this thread ("" if none).  The pointer
 * stays valid until the next evrt call on this thread. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT const char *evrt_last_error_message(void);
/* Status of the last failing call on this thread (EVRT_SUCCESS if none). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_last_error(void);
/* Forget the last error of this thread. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT void evrt_clear_last_error(void);

/* ------------------------------------------------------------------------ */
/* Library */

/* [ts] [nb] [hostfn] */
EVRT_EXPORT unsigned evrt_version(void);          /* EVRT_VERSION_HEX */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT const char *evrt_version_string(void); /* "MAJOR.MINOR.PATCH" */

/* Initialization is implicit on first use; evrt_init() makes it explicit.
 * evrt_shutdown() waits for running work items, discards queued ones, joins
 * every worker thread, flushes the trace and invalidates every handle.  Later
 * calls return EVRT_ERROR_SHUTDOWN.  After fork() in a process that had
 * initialized evrt, every call in the child returns EVRT_ERROR_FORKED. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_init(void);
/* [!ts] [blocks] [!hostfn] */
EVRT_EXPORT evrt_status_t evrt_shutdown(void);
/* *initialized = 1 if evrt is initialized in this process and usable (an
 * evrt_init() or a first call succeeded; not shut down; not a child forked
 * after initialization), else 0.  Never initializes it (what
 * torch.cuda.is_initialized() tells).  NULL: EVRT_ERROR_INVALID_VALUE. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_is_initialized(int *initialized);

/* ------------------------------------------------------------------------ */
/* Devices.  The cpu backend has EVRT_CPU_DEVICES (default 1) virtual devices.
 * The current device is per host thread (default 0). */

/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_device_count(int *count);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_set_device(int device);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_get_device(int *device);
/* Block until every stream of the device, destroyed ones still draining
 * included, has finished the work enqueued before the call. */
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_device_synchronize(int device);
/* EVRT_ERROR_TIMEOUT if not done within timeout_ns (negative: forever). */
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_device_synchronize_timeout(int device,
                                                          int64_t timeout_ns);
/* Event resources: an event takes one of its device's resources at its first
 * record (or IPC export) and gives it back when destroyed or reset.  The
 * default limit is 65535 per device (EVRT_EVENT_LIMIT in the environment
 * changes the default).  Lowering the limit below the number in use is an
 * error. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_device_set_event_limit(int device,
                                                      uint32_t limit);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_device_get_event_limit(int device,
                                                      uint32_t *limit);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_device_event_available(int device,
                                                      uint32_t *available);

/* ------------------------------------------------------------------------ */
/* Streams */

typedef struct evrt_stream_s *evrt_stream_t;
typedef void (*evrt_host_fn)(void *user_data);

/* A new stream on device (0 .. count - 1, or -1: the calling thread's
 * current device, as evrt_stream_default takes it and as CUDA and torch
 * users expect; any other value is EVRT_ERROR_INVALID_DEVICE).  Priority:
 * lower numbers run first (CUDA convention); 0 is normal and any negative
 * value is "high".  No flags are defined yet: pass 0. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_create(evrt_stream_t *stream, int device,
                                             int priority, unsigned flags);
/* The default stream of a device (cannot be destroyed). device -1 = current. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_default(int device,
                                              evrt_stream_t *stream);
/* Returns at once; pending work still completes; the handle is invalid at
 * once and the stream's resources are freed when its work is done.  A
 * stream that captures (began a capture or joined one) is not destroyed:
 * EVRT_ERROR_CAPTURE_UNSUPPORTED and the capture is invalidated.  Of a
 * destroy and a begin_capture (or a wait that joins a capture) racing on
 * one stream, exactly one succeeds. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_destroy(evrt_stream_t stream);
/* EVRT_SUCCESS if all enqueued work is done, else EVRT_NOT_READY. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_query(evrt_stream_t stream);
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_stream_synchronize(evrt_stream_t stream);
/* EVRT_ERROR_TIMEOUT if not done within timeout_ns (negative: forever). */
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_stream_synchronize_timeout(evrt_stream_t stream,
                                                          int64_t timeout_ns);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_get_device(evrt_stream_t stream,
                                                 int *device);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_get_priority(evrt_stream_t stream,
                                                   int *priority);
/* A process-unique id of the stream (stable for its lifetime; for traces and
 * for languages that need a hashable value). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_get_id(evrt_stream_t stream,
                                             uint64_t *id);
/* Label used by traces (copied; at most 63 bytes kept). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_set_name(evrt_stream_t stream,
                                               const char *name);

/* Work items, executed in order.  A host function runs on a worker thread
 * with no runtime lock held; it may call non-blocking evrt functions. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_launch_host_func(evrt_stream_t stream,
                                                evrt_host_fn fn,
                                                void *user_data);
/* Same, with a label shown in traces (copied; at most 31 bytes kept). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_launch_host_func_labeled(evrt_stream_t stream,
                                                        evrt_host_fn fn,
                                                        void *user_data,
                                                        const char *label);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_memcpy_async(evrt_stream_t stream, void *dst,
                                            const void *src, size_t bytes);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_memset_async(evrt_stream_t stream, void *dst,
                                            int value, size_t bytes);
/* A timed wait of delay_ns in stream order that burns no CPU and holds no
 * worker thread. */
/* [ts] [nb] [hostfn] */
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

/* Extensible: the caller sets struct_size before the call, in C
 *     evrt_event_info_t info = {.struct_size = sizeof info};
 * Fields are only ever appended (after `reserved`, which keeps the size a
 * multiple of 8 so that each version has its own size), so a program built
 * against an older evrt.h passes its smaller size and gets exactly the
 * fields it knows.  evrt_event_get_info accepts every size a release has had
 * (0.1: 40 bytes) and writes that many bytes; any other size (0: not set;
 * larger: built against a newer evrt.h than the library) is
 * EVRT_ERROR_INVALID_VALUE with nothing written.  The library never changes
 * struct_size, so the struct can be reused. */
typedef struct evrt_event_info {
  uint32_t struct_size;    /* set by the caller: sizeof(evrt_event_info_t) */
  unsigned flags;
  int device;              /* -1 until the first record or export */
  evrt_event_state_t state;
  uint64_t record_count;   /* number of records so far (generation number) */
  uint64_t record_thread;  /* evrt_thread_id() of the latest record, 0 if none */
  int imported;            /* opened from an interprocess handle */
  uint32_t reserved;       /* 0 */
} evrt_event_info_t;

/* Events are created lazily: no backend resource until the first record or
 * interprocess export. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_create(evrt_event_t *event,
                                            unsigned flags);
/* Returns at once even if generations are pending; waiters are unaffected. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_destroy(evrt_event_t event);
/* New generation = all work enqueued on stream before this call. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_record(evrt_event_t event,
                                            evrt_stream_t stream);
/* EVRT_SUCCESS if the latest generation is complete (or never recorded),
 * EVRT_NOT_READY otherwise. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_query(evrt_event_t event);
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_event_synchronize(evrt_event_t event);
/* [ts] [blocks] [hostfn*] */
EVRT_EXPORT evrt_status_t evrt_event_synchronize_timeout(evrt_event_t event,
                                                         int64_t timeout_ns);
/* stream waits for the generation current now; later records, resets or the
 * destruction of event do not change what it waits for. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_event(evrt_stream_t stream,
                                                 evrt_event_t event);
/* Same, failing the waiting stream's wait after timeout_ns: the stream goes
 * on, and the timeout is counted in evrt_stream_wait_failures(). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_event_timeout(evrt_stream_t stream,
                                                         evrt_event_t event,
                                                         int64_t timeout_ns);
/* Number of waits on this stream that ended by timeout or peer loss. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_failures(evrt_stream_t stream,
                                                    uint64_t *count);
/* Milliseconds from start to end.  Errors, checked in this order:
 * EVRT_ERROR_TIMING_DISABLED, EVRT_ERROR_NOT_RECORDED,
 * EVRT_ERROR_NOT_COMPLETE, EVRT_ERROR_DEVICE_MISMATCH. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_elapsed_time(float *ms,
                                                  evrt_event_t start,
                                                  evrt_event_t end);
/* CLOCK_MONOTONIC time (ns) at which the latest record executed; same errors
 * as elapsed time. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_timestamp(evrt_event_t event,
                                               uint64_t *ns);
/* Enqueue on stream a work item that returns the event to "not recorded"
 * (and gives back its event resource).  It has no effect if the event was
 * recorded again after this call.  The event must have been recorded. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_reset(evrt_event_t event,
                                           evrt_stream_t stream);
/* EVRT_SUCCESS when every stream that waited on the latest generation has
 * passed its wait (or none waited), else EVRT_NOT_READY. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_wait_status(evrt_event_t event);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_get_info(evrt_event_t event,
                                              evrt_event_info_t *info);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_get_device(evrt_event_t event,
                                                int *device);
/* A process-unique id of the event (for traces and hashing). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_get_id(evrt_event_t event, uint64_t *id);

/* Non-zero id of the calling thread, as stored in evrt_event_info_t. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT uint64_t evrt_thread_id(void);

/* ------------------------------------------------------------------------ */
/* Interprocess events */

#define EVRT_IPC_HANDLE_SIZE 64
typedef struct evrt_ipc_event_handle {
  unsigned char reserved[EVRT_IPC_HANDLE_SIZE];
} evrt_ipc_event_handle_t;

/* Export an EVRT_EVENT_INTERPROCESS event (initialized on the current device
 * if never recorded).  Imported events cannot be re-exported. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_ipc_handle(evrt_event_t event,
                                                evrt_ipc_event_handle_t *handle);
/* Open a handle exported by another process.  The event has timing off and
 * may be queried, synchronized, waited on and recorded, on a stream of any
 * device (its device is the exporter's).  The handle of an event that its
 * exporter destroyed gives EVRT_ERROR_INVALID_HANDLE. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_ipc_open(evrt_event_t *event,
                                              const evrt_ipc_event_handle_t *handle);

/* ------------------------------------------------------------------------ */
/* Stream capture and graphs (docs/capture.md has every rule and its source).
 *
 * Between evrt_stream_begin_capture(s) and evrt_stream_end_capture(s), work
 * enqueued on s does not run: it becomes the nodes of a graph (host
 * functions, copies, fills, delays, external event records and waits, event
 * resets).  An event recorded on a capturing stream is a dependency marker:
 * another stream that waits on it joins the capture (a fork), and every
 * stream forked that way must be joined back into s (s waits on an event
 * recorded on it) before the capture ends.  A graph is instantiated into an
 * executable graph, which is launched on any stream, as often as wanted:
 * a launch runs after the work enqueued before it on that stream and after
 * the previous launch of the same executable graph, and the stream's later
 * work runs after it.  Breaking a capture rule invalidates the capture
 * (EVRT_ERROR_CAPTURE_*); evrt_stream_end_capture then ends it without a
 * graph. */

typedef struct evrt_graph_s *evrt_graph_t;
typedef struct evrt_graph_exec_s *evrt_graph_exec_t;

/* Which potentially unsafe calls (the synchronize calls on objects outside
 * the capture, and evrt_capture_unsafe_call) other threads and this thread
 * may make while the capture is active: see
 * evrt_thread_exchange_capture_mode. */
typedef enum {
  EVRT_CAPTURE_MODE_GLOBAL,
  EVRT_CAPTURE_MODE_THREAD_LOCAL,
  EVRT_CAPTURE_MODE_RELAXED
} evrt_capture_mode_t;

typedef enum {
  EVRT_CAPTURE_STATUS_NONE,       /* not capturing */
  EVRT_CAPTURE_STATUS_ACTIVE,     /* capturing */
  EVRT_CAPTURE_STATUS_INVALIDATED /* capturing, broken: end it */
} evrt_capture_status_t;

/* Flags of evrt_event_record_with_flags / evrt_stream_wait_event_with_flags
 * (CUDA's cudaEventRecordExternal / cudaEventWaitExternal).  EXTERNAL is
 * valid only on a capturing stream: the record (wait) becomes a node that
 * records (waits for) the event each time the graph runs. */
#define EVRT_EVENT_RECORD_DEFAULT 0x0u
#define EVRT_EVENT_RECORD_EXTERNAL 0x1u
#define EVRT_EVENT_WAIT_DEFAULT 0x0u
#define EVRT_EVENT_WAIT_EXTERNAL 0x1u

/* Begin capturing stream (not a default stream: EVRT_ERROR_CAPTURE_IMPLICIT;
 * not one capturing already: EVRT_ERROR_CAPTURE_UNSUPPORTED; destroyed
 * meanwhile: EVRT_ERROR_INVALID_HANDLE, nothing begun). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_begin_capture(evrt_stream_t stream,
                                                    evrt_capture_mode_t mode);
/* End the capture begun on stream and return its graph.  Every stream that
 * joined the capture leaves it.  An invalidated capture gives
 * EVRT_ERROR_CAPTURE_INVALIDATED, a fork not joined back
 * EVRT_ERROR_CAPTURE_UNJOINED; both end the capture with *graph = NULL.
 * EVRT_ERROR_CAPTURE_UNMATCHED on a stream that joined but did not begin it
 * (the capture is invalidated), EVRT_ERROR_CAPTURE_WRONG_THREAD from another
 * thread than the one that began a non-relaxed capture (nothing changes). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_end_capture(evrt_stream_t stream,
                                                  evrt_graph_t *graph);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_capture_status(evrt_stream_t stream,
                                                     evrt_capture_status_t *status);
/* Status and the capture's unique id (0 if not capturing); either pointer
 * may be NULL. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_capture_info(
    evrt_stream_t stream, evrt_capture_status_t *status, uint64_t *capture_id);
/* Swap the calling thread's capture interaction mode with *mode (default
 * GLOBAL).  A potentially unsafe call is refused with
 * EVRT_ERROR_CAPTURE_UNSUPPORTED, and the captures it conflicts with are
 * invalidated, when: this thread's mode is GLOBAL and a GLOBAL capture is
 * active anywhere, or this thread's mode is GLOBAL or THREAD_LOCAL and a
 * capture this thread began in a mode other than RELAXED is active. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_thread_exchange_capture_mode(
    evrt_capture_mode_t *mode);
/* For layers above evrt (ACL's synchronous copies): declare a potentially
 * unsafe call; EVRT_SUCCESS if this thread may make it now, else as above. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_capture_unsafe_call(void);

/* evrt_event_record / evrt_stream_wait_event with the flags above. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_event_record_with_flags(evrt_event_t event,
                                                       evrt_stream_t stream,
                                                       unsigned flags);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_event_with_flags(
    evrt_stream_t stream, evrt_event_t event, unsigned flags);

/* Control flow inside a capture (what ACL's labels need).  A label node
 * marks a place in a capturing stream; a switch node reads *index (a
 * uint32_t) when the graph runs and continues at the first node after the
 * label labels[min(*index, count - 1)], which must come later on the same
 * stream (checked at instantiation): the host functions, copies, fills,
 * records and resets in between are skipped; waits and delays in between
 * still order the stream. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_capture_label(evrt_stream_t stream,
                                                    uint64_t label);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_capture_switch(evrt_stream_t stream,
                                                     const uint32_t *index,
                                                     const uint64_t *labels,
                                                     uint32_t count);

/* An executable copy of graph (the graph may be destroyed afterwards). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_instantiate(evrt_graph_exec_t *exec,
                                                 evrt_graph_t graph);
/* Enqueue one run of exec on stream.  The host cost does not depend on the
 * number of nodes.  Launches of one executable graph never overlap; two
 * executable graphs (of one graph, too) may run at the same time. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_launch(evrt_graph_exec_t exec,
                                            evrt_stream_t stream);
/* Returns at once; launches in flight complete, then it is freed. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_exec_destroy(evrt_graph_exec_t exec);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_destroy(evrt_graph_t graph);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_node_count(evrt_graph_t graph,
                                                size_t *count);

/* What a graph holds, for a layer that lists its tasks (ACL's
 * aclmdlRIGetStreams / aclmdlRIGetTasksByStream).  Nodes are numbered in
 * capture order, 0 .. node_count - 1 (every node's dependencies come before
 * it); lanes are the captured streams, 0 .. lane_count - 1: lane 0 is the
 * stream the capture began on, each stream that joined it the next, in the
 * order they joined.  A lane's nodes run in their index order. */
typedef enum {
  EVRT_GRAPH_NODE_HOST_FUNC,    /* evrt_launch_host_func(_status) */
  EVRT_GRAPH_NODE_MEMCPY,       /* evrt_memcpy_async */
  EVRT_GRAPH_NODE_MEMSET,       /* evrt_memset_async */
  EVRT_GRAPH_NODE_DELAY,        /* evrt_stream_delay */
  EVRT_GRAPH_NODE_EVENT_RECORD, /* an external record */
  EVRT_GRAPH_NODE_EVENT_WAIT,   /* an external wait */
  EVRT_GRAPH_NODE_EVENT_RESET,  /* evrt_event_reset */
  EVRT_GRAPH_NODE_VALUE_WAIT,   /* evrt_stream_wait_value64 */
  EVRT_GRAPH_NODE_VALUE_WRITE,  /* evrt_stream_write_value64 */
  EVRT_GRAPH_NODE_LABEL,        /* evrt_stream_capture_label */
  EVRT_GRAPH_NODE_SWITCH        /* evrt_stream_capture_switch */
} evrt_graph_node_type_t;
/* *count: the number of captured streams of graph. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_lane_count(evrt_graph_t graph,
                                                uint32_t *count);
/* Node `index` of graph: its type and its lane (either pointer may be NULL).
 * An index past the last node is EVRT_ERROR_INVALID_VALUE (nothing
 * written). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_node_get(evrt_graph_t graph, size_t index,
                                              evrt_graph_node_type_t *type,
                                              uint32_t *lane);
/* Write the graph as Graphviz (dot) to path: a node per graph node, an
 * edge per dependency, a cluster per captured stream. */
/* [ts] [blocks] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_graph_debug_dot_print(evrt_graph_t graph,
                                                     const char *path);

/* ------------------------------------------------------------------------ */
/* Failing tasks, sticky stream errors, stop-on-failure, abort
 * (docs/design.md, "Failures": the state machine of a stream's error).
 *
 * A task fails when a host function launched with
 * evrt_launch_host_func_status returns non-zero.  The stream's error is then
 * pending: every synchronize and query of the stream, of an event recorded
 * on it after the failed task, and evrt_device_synchronize of its device
 * report EVRT_ERROR_TASK_FAILED (the detail: evrt_last_task_failure) until
 * the program clears it with evrt_stream_clear_error.  The first failure is
 * kept; later ones (in continue mode) are not recorded until it is cleared.
 * In EVRT_FAILURE_STOP mode the stream skips its tasks after the failed one
 * (host functions, copies, fills, delays, waits and value writes complete
 * without running; records and resets still complete their generations)
 * until the error is cleared.  evrt_stream_abort discards the queued work
 * of a stream in the same way and leaves EVRT_ERROR_ABORTED pending when it
 * discarded anything. */

typedef int32_t (*evrt_host_fn_status)(void *user_data);

/* A host function that returns 0 on success and any other value (its error
 * code, kept in the failure record) when it fails. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_launch_host_func_status(evrt_stream_t stream,
                                                       evrt_host_fn_status fn,
                                                       void *user_data);

typedef struct evrt_task_failure {
  evrt_status_t status;     /* EVRT_ERROR_TASK_FAILED or EVRT_ERROR_ABORTED;
                               EVRT_SUCCESS: no error pending */
  int32_t code;             /* the task's return value (0 for an abort) */
  int device;
  uint64_t stream_id;       /* evrt_stream_get_id() of its stream */
  uint64_t task_id;         /* its position in the stream (1-based), as
                               evrt_thread_last_task() gives it; for an
                               abort, the first task discarded */
  uint64_t thread_id;       /* evrt_thread_id() of the thread that enqueued
                               it (0 for an abort) */
  evrt_host_fn_status fn;   /* the failing function and its argument */
  void *user_data;
} evrt_task_failure_t;

#define EVRT_FAILURE_CONTINUE 0u /* later tasks run (the default) */
#define EVRT_FAILURE_STOP 1u     /* later tasks are skipped until cleared */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_set_failure_mode(evrt_stream_t stream,
                                                       unsigned mode);
/* The pending error of the stream (info->status EVRT_SUCCESS if none). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_get_error(evrt_stream_t stream,
                                                evrt_task_failure_t *info);
/* Take the pending error (into info unless NULL) and clear it: the stream
 * and its events report success again, and a stopped stream runs its tasks
 * again. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_clear_error(evrt_stream_t stream,
                                                  evrt_task_failure_t *info);
/* The failure behind the last EVRT_ERROR_TASK_FAILED or EVRT_ERROR_ABORTED
 * that a call returned on this thread (status EVRT_SUCCESS if none). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_last_task_failure(evrt_task_failure_t *info);
/* Discard the work queued on the stream: every task enqueued before the
 * call that has not started is skipped; a running host function is asked
 * to end (evrt_host_func_cancelled), and a host function at the head of
 * the stream counts as running, as for evrt_stream_stop (the caller cannot
 * tell whether its worker had entered it); parked waits end at once.  Its
 * generations complete, so waiters are released.  The stream is usable at
 * once: work enqueued after the call runs normally. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_abort(evrt_stream_t stream);
/* Ask the host function running on the stream to end, and keep the queued
 * work, which runs after it.  The task at the head of the stream when the
 * call looks counts as running even if its worker has not entered it yet;
 * a stream with nothing pending is left alone. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_stop(evrt_stream_t stream);

#define EVRT_CANCEL_STOP 1  /* evrt_stream_stop asked it to end */
#define EVRT_CANCEL_ABORT 2 /* evrt_stream_abort did */
/* Called by a host function (evrt_launch_host_func, _status, or a thread
 * serving a stream): EVRT_CANCEL_ABORT or EVRT_CANCEL_STOP once its stream
 * was aborted or stopped since it was enqueued, else 0 (0 outside host
 * functions).  A CPU cannot kill a running function, so a long one polls
 * this and returns early where a device would kill its kernel.  A host
 * function run by a worker that got a non-zero answer and then returns (0,
 * for a status function) counts as killed: the stream's error is pending
 * as for a failed task, with status EVRT_ERROR_ABORTED, code the
 * EVRT_CANCEL_ value and task_id the killed task. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT int evrt_host_func_cancelled(void);

/* Called on the worker that ran a failed task, right after it and before
 * the stream goes on, with no runtime lock held (as a host function of that
 * stream: it may call non-blocking evrt functions).  Not called for
 * aborts.  At most 16 registrations; registering a (fn, user_data) pair
 * twice is a no-op, and removing does not wait for calls in progress. */
typedef void (*evrt_failure_fn)(const evrt_task_failure_t *failure,
                                void *user_data);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_failure_callback_add(evrt_failure_fn fn,
                                                    void *user_data);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_failure_callback_remove(evrt_failure_fn fn,
                                                       void *user_data);

/* The last task this thread enqueued: its stream's id and its position
 * (both 0 if none yet).  Records and waits that need no work item (their
 * generation is complete at the call) enqueue nothing. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_thread_last_task(uint64_t *stream_id,
                                                uint64_t *task_id);

/* Declare that the calling thread does work that task task_id of stream
 * waits for (a callback that a subscribed thread runs while the stream is
 * parked on it): until evrt_thread_serve_end(), evrt's synchronize calls
 * from this thread refuse to wait for that task or later work of the stream
 * (EVRT_ERROR_WOULD_DEADLOCK), as they do in a host function of the stream.
 * Not nestable. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_thread_serve_begin(evrt_stream_t stream,
                                                  uint64_t task_id);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT void evrt_thread_serve_end(void);

/* ------------------------------------------------------------------------ */
/* Stream-ordered values (docs/design.md, "Values"): a stream waits, parked
 * and holding no worker, until a 64-bit word of memory satisfies a
 * condition, and writes a word in stream order.  The word is any 8-byte
 * aligned uint64_t the program owns (it must stay valid while waits on it
 * are pending).  A parked wait re-checks its word when evrt writes it
 * (evrt_stream_write_value64, evrt_value_write64, a copy or fill that covers
 * it), when evrt_value_notify names it, and (unless
 * EVRT_VALUE_WAIT_EXPLICIT) when any host function returns, since host
 * functions stand for device kernels that write memory.  A store evrt does
 * not see (another process's) is seen with EVRT_VALUE_WAIT_POLL. */

/* Conditions (the values of CUDA's CU_STREAM_WAIT_VALUE_* and ACL's
 * ACL_STREAM_WAIT_VALUE_*) */
#define EVRT_VALUE_WAIT_GEQ 0x0u /* (int64_t)(*addr - value) >= 0 */
#define EVRT_VALUE_WAIT_EQ 0x1u  /* *addr == value */
#define EVRT_VALUE_WAIT_AND 0x2u /* (*addr & value) != 0 */
#define EVRT_VALUE_WAIT_NOR 0x3u /* ~(*addr | value) != 0 */
/* Modifiers */
/* When the condition holds, atomically set the word to 0 as the wait
 * passes: of several waits that one write satisfies, one passes. */
#define EVRT_VALUE_WAIT_RESET 0x10u
/* Also re-check periodically (50 us, doubling to 10 ms): the word is
 * written where evrt cannot see it (another process). */
#define EVRT_VALUE_WAIT_POLL 0x20u
/* Only evrt's writes and evrt_value_notify wake the wait, not the return of
 * host functions (cheaper when many waits are parked). */
#define EVRT_VALUE_WAIT_EXPLICIT 0x40u
#define EVRT_VALUE_WAIT_FLAGS_ALL 0x73u

/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_value64(evrt_stream_t stream,
                                                   uint64_t *addr,
                                                   uint64_t value,
                                                   unsigned flags);
/* Same, ending the wait after timeout_ns (from the call; negative: never):
 * the stream goes on and the timeout is counted in
 * evrt_stream_wait_failures(), as for evrt_stream_wait_event_timeout. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_wait_value64_timeout(evrt_stream_t stream,
                                                           uint64_t *addr,
                                                           uint64_t value,
                                                           unsigned flags,
                                                           int64_t timeout_ns);
/* Store value into *addr when the stream reaches it (flags: 0). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_stream_write_value64(evrt_stream_t stream,
                                                    uint64_t *addr,
                                                    uint64_t value,
                                                    unsigned flags);
/* Store value into *addr now, from the host, and wake the waits on it. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_value_write64(uint64_t *addr, uint64_t value);
/* Wake the waits on words in [addr, addr + bytes) to re-check them, after
 * the program stored there by other means. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_value_notify(const void *addr, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Device-wide host function */

#define EVRT_DEVICE_ALL (-2)
/* Run fn(user_data) once every stream of device (EVRT_DEVICE_ALL: of every
 * device), destroyed ones still draining included, has finished the work
 * enqueued on it before this call.  It holds up no stream.  When nothing is
 * pending, fn runs on the calling thread before the call returns; otherwise
 * on a worker thread, as a host function, after the functions of earlier
 * calls for the same device (in call order).  A call costs the same
 * whatever is pending.  EVRT_ERROR_OUT_OF_MEMORY: nothing was queued and fn
 * will not run (the caller still owns what it was to release). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_device_launch_host_func(int device,
                                                       evrt_host_fn fn,
                                                       void *user_data);

/* Synchronization checker (EVRT_CHECK=1 in the environment; docs/check.md).
 * With the checker on, evrt checks the happens-before order of every access
 * it sees (its copies and fills, and what is declared here) and reports
 * data races, uses after free, unsynchronized host accesses and deadlocks
 * on stderr ("evrt-check: KIND ..."); the process then exits with status 66
 * (EVRT_CHECK_EXITCODE=N changes it, 0 keeps the program's own).  With the
 * checker off these calls check their arguments and return at once. */

#define EVRT_CHECK_READ 0x1u
#define EVRT_CHECK_WRITE 0x2u

/* 1 if the checker is on in this process, else 0. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT int evrt_check_enabled(void);
/* Declare that the calling code reads and/or writes [ptr, ptr + bytes):
 * from a host function it is an access of that work item (in its stream's
 * order), elsewhere an access of the calling host thread.  mode is
 * EVRT_CHECK_READ, EVRT_CHECK_WRITE or both. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_access(const void *ptr, size_t bytes,
                                            unsigned mode);
/* An allocator hands out [ptr, ptr + bytes): work not ordered after this
 * call that touches it is reported as a use after free (of its earlier
 * life). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_alloc(const void *ptr, size_t bytes);
/* The block is freed: work not ordered before this call that touches it,
 * now or later, is reported as a use after free.  release(ptr) gives the
 * memory back: at once with the checker off; with it on, after a
 * quarantine, so that a late access is reported instead of hitting reused
 * memory.  release may be NULL (the caller frees the memory itself). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_free(void *ptr, size_t bytes,
                                          void (*release)(void *ptr));
/* Synchronization between host threads (or host functions) that evrt does
 * not see: a flag, a mutex, a condition variable, a thread join.  Call
 * evrt_check_release(sync) after the writes it publishes and
 * evrt_check_acquire(sync) after observing it (sync: any address naming
 * the synchronization object): everything before the release is then
 * ordered before everything after the acquire. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_release(const void *sync);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_acquire(const void *sync);
/* The synchronization object at sync is gone (its memory is about to be
 * freed or reused): what its releases published is forgotten, so that a
 * new object at the same address does not order its users after the old
 * one's.  Call it once nobody will release or acquire the old object. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_forget(const void *sync);
/* Name the call site of the calling thread's next evrt calls in reports
 * (a language binding passes its own source position, "train.py:42 (step)";
 * at most 255 bytes kept), instead of the C stack; NULL goes back to the
 * stack. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_site(const char *where);
/* The same, and the API the program wrote those calls in, so that a
 * report phrases its fix in it (docs/check.md, "Reading a report"):
 * EVRT_CHECK_API_C (evrt's C calls: evrt_check_site's), or
 * EVRT_CHECK_API_PYTHON (the Python package's torch-style evrt.Stream,
 * evrt.cuda: "s2.wait_stream(s1)", "stream.synchronize()").  Another
 * value: EVRT_ERROR_INVALID_VALUE, and nothing changes. */
#define EVRT_CHECK_API_C 0u
#define EVRT_CHECK_API_PYTHON 1u
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_site_api(const char *where,
                                              unsigned api);
/* Waits that are not the program's: between evrt_check_unobserved_begin()
 * and evrt_check_unobserved_end() the calling thread's observations of
 * completion (synchronize, a query or event info answering complete, a
 * wait status) order nothing for the checker, so that a layer's own waits
 * (an allocator polling its events, a fallback synchronizing for itself)
 * do not hide the program's missing synchronization.  They nest; an end
 * without an open begin of this thread is EVRT_ERROR_INVALID_VALUE and
 * changes nothing.  With the checker off both do nothing. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_unobserved_begin(void);
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_check_unobserved_end(void);
/* Number of findings so far (each occurrence; 0 with the checker off). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT uint64_t evrt_check_findings(void);

/* ------------------------------------------------------------------------ */
/* Interprocess memory (docs/design.md, "Interprocess memory"): memory
 * shareable with other processes of the same user.  evrt_ipc_mem_alloc
 * gives page-aligned, zero-filled memory (a memfd: each block holds a file
 * descriptor while it lives; the process's soft descriptor limit is raised
 * to its hard limit at the first one).  A page-aligned range of it is
 * exported under a key (64 hex digits and a NUL); another process imports
 * the key and maps the same pages.  Unless exported with
 * EVRT_IPC_MEM_NO_PID_CHECK, only the processes whose pids the exporter set
 * may import.  Nothing outlives the processes: no file is left after a
 * crash. */

#define EVRT_IPC_MEM_KEY_SIZE 65
#define EVRT_IPC_MEM_NO_PID_CHECK 0x1u

/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_alloc(size_t bytes, void **ptr);
/* The exporter's memory (importers keep their mappings until they close). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_free(void *ptr);
/* Export [ptr, ptr + bytes) of memory from evrt_ipc_mem_alloc (ptr
 * page-aligned).  One export per block: exporting the same range with the
 * same flags again gives the same key, anything else is
 * EVRT_ERROR_NOT_PERMITTED. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_export(void *ptr, size_t bytes,
                                              unsigned flags,
                                              char key[EVRT_IPC_MEM_KEY_SIZE]);
/* Add pids to the key's import whitelist (the exporter only). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_set_import_pids(const char *key,
                                                       const int32_t *pids,
                                                       size_t n);
/* Map the memory of a key exported by another process (flags: 0).  Errors:
 * EVRT_ERROR_IPC_HANDLE (malformed, forged, stale, freed or closed key),
 * EVRT_ERROR_IPC_SAME_PROCESS, EVRT_ERROR_PEER_LOST (the exporter died),
 * EVRT_ERROR_NOT_PERMITTED (not whitelisted). */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_import(const char *key, unsigned flags,
                                              void **ptr, size_t *bytes);
/* Importer: unmap.  Exporter: later imports fail; the memory stays (and
 * importers' mappings stay valid) until evrt_ipc_mem_free. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_ipc_mem_close(const char *key);

/* ------------------------------------------------------------------------ */
/* Tracing (Chrome trace-event JSON; also EVRT_TRACE=path.json) */

/* [ts] [blocks] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_trace_start(const char *path);
/* [ts] [blocks] [hostfn] */
EVRT_EXPORT evrt_status_t evrt_trace_stop(void);
/* Number of trace entries dropped because a buffer was full. */
/* [ts] [nb] [hostfn] */
EVRT_EXPORT uint64_t evrt_trace_dropped(void);

#ifdef __cplusplus
}
#endif

#endif /* EVRT_H */
