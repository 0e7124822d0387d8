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
  XX(ERROR_INTERNAL, 119, "internal error")                                   \
  XX(ERROR_CAPTURE_UNSUPPORTED, 120, "operation not permitted while a "       \
                                     "stream is capturing")                    \
  XX(ERROR_CAPTURE_INVALIDATED, 121, "the capture was invalidated by an "      \
                                     "earlier error")                          \
  XX(ERROR_CAPTURE_MERGE, 122, "operation would merge two independent "        \
                               "captures")                                     \
  XX(ERROR_CAPTURE_UNMATCHED, 123, "the capture was not begun on this stream") \
  XX(ERROR_CAPTURE_UNJOINED, 124, "the capture forked into a stream that was " \
                                  "not joined back")                           \
  XX(ERROR_CAPTURE_ISOLATION, 125, "dependency on work outside the capture")   \
  XX(ERROR_CAPTURE_IMPLICIT, 126, "a default stream cannot take part in a "    \
                                  "capture")                                   \
  XX(ERROR_CAPTURE_WRONG_THREAD, 127, "capture ended on another thread than "  \
                                      "the one that began it")                 \
  XX(ERROR_CAPTURE_EVENT, 128, "operation not permitted on an event last "     \
                               "recorded in a capture")

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
 * on, and the timeout is counted in evrt_stream_wait_timeouts(). */
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
 * may be queried, synchronized, waited on and recorded. */
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
 * not one capturing already: EVRT_ERROR_CAPTURE_UNSUPPORTED). */
EVRT_EXPORT evrt_status_t evrt_stream_begin_capture(evrt_stream_t stream,
                                                    evrt_capture_mode_t mode);
/* End the capture begun on stream and return its graph.  Every stream that
 * joined the capture leaves it.  An invalidated capture gives
 * EVRT_ERROR_CAPTURE_INVALIDATED, a fork not joined back
 * EVRT_ERROR_CAPTURE_UNJOINED; both end the capture with *graph = NULL.
 * EVRT_ERROR_CAPTURE_UNMATCHED on a stream that joined but did not begin it
 * (the capture is invalidated), EVRT_ERROR_CAPTURE_WRONG_THREAD from another
 * thread than the one that began a non-relaxed capture (nothing changes). */
EVRT_EXPORT evrt_status_t evrt_stream_end_capture(evrt_stream_t stream,
                                                  evrt_graph_t *graph);
EVRT_EXPORT evrt_status_t
evrt_stream_capture_status(evrt_stream_t stream, evrt_capture_status_t *status);
/* Status and the capture's unique id (0 if not capturing); either pointer
 * may be NULL. */
EVRT_EXPORT evrt_status_t evrt_stream_capture_info(
    evrt_stream_t stream, evrt_capture_status_t *status, uint64_t *capture_id);
/* Swap the calling thread's capture interaction mode with *mode (default
 * GLOBAL).  A potentially unsafe call is refused with
 * EVRT_ERROR_CAPTURE_UNSUPPORTED, and the captures it conflicts with are
 * invalidated, when: this thread's mode is GLOBAL and a GLOBAL capture is
 * active anywhere, or this thread's mode is GLOBAL or THREAD_LOCAL and a
 * capture this thread began in a mode other than RELAXED is active. */
EVRT_EXPORT evrt_status_t evrt_thread_exchange_capture_mode(
    evrt_capture_mode_t *mode);
/* For layers above evrt (ACL's synchronous copies): declare a potentially
 * unsafe call; EVRT_SUCCESS if this thread may make it now, else as above. */
EVRT_EXPORT evrt_status_t evrt_capture_unsafe_call(void);

/* evrt_event_record / evrt_stream_wait_event with the flags above. */
EVRT_EXPORT evrt_status_t evrt_event_record_with_flags(evrt_event_t event,
                                                       evrt_stream_t stream,
                                                       unsigned flags);
EVRT_EXPORT evrt_status_t evrt_stream_wait_event_with_flags(
    evrt_stream_t stream, evrt_event_t event, unsigned flags);

/* Control flow inside a capture (what ACL's labels need).  A label node
 * marks a place in a capturing stream; a switch node reads *index (a
 * uint32_t) when the graph runs and continues at the first node after the
 * label labels[min(*index, count - 1)], which must come later on the same
 * stream (checked at instantiation): the host functions, copies, fills,
 * records and resets in between are skipped; waits and delays in between
 * still order the stream. */
EVRT_EXPORT evrt_status_t evrt_stream_capture_label(evrt_stream_t stream,
                                                    uint64_t label);
EVRT_EXPORT evrt_status_t evrt_stream_capture_switch(evrt_stream_t stream,
                                                     const uint32_t *index,
                                                     const uint64_t *labels,
                                                     uint32_t count);

/* An executable copy of graph (the graph may be destroyed afterwards). */
EVRT_EXPORT evrt_status_t evrt_graph_instantiate(evrt_graph_exec_t *exec,
                                                 evrt_graph_t graph);
/* Enqueue one run of exec on stream.  The host cost does not depend on the
 * number of nodes.  Launches of one executable graph never overlap; two
 * executable graphs (of one graph, too) may run at the same time. */
EVRT_EXPORT evrt_status_t evrt_graph_launch(evrt_graph_exec_t exec,
                                            evrt_stream_t stream);
/* Returns at once; launches in flight complete, then it is freed. */
EVRT_EXPORT evrt_status_t evrt_graph_exec_destroy(evrt_graph_exec_t exec);
EVRT_EXPORT evrt_status_t evrt_graph_destroy(evrt_graph_t graph);
EVRT_EXPORT evrt_status_t evrt_graph_node_count(evrt_graph_t graph,
                                                size_t *count);
/* Write the graph as Graphviz (dot) to path: a node per graph node, an
 * edge per dependency, a cluster per captured stream. */
EVRT_EXPORT evrt_status_t evrt_graph_debug_dot_print(evrt_graph_t graph,
                                                     const char *path);

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
