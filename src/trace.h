/*
 * trace.h - hooks the core calls to record what streams did (src/trace_rec.c;
 * src/trace_json.c writes the file).
 *
 * Cost when tracing is off: one relaxed load and a predictable branch
 * (EVRT_TRACING()).  With EVRT_NO_TRACE defined the hooks compile out.
 * Hooks may be called from any thread, never with a runtime lock held, and
 * they never call back into the core.
 */
#ifndef EVRT_TRACE_H
#define EVRT_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

/* Kinds of work items (also used by the scheduler). */
enum evrt__item_kind {
  EVRT__ITEM_HOST_FUNC = 0,
  EVRT__ITEM_MEMCPY,
  EVRT__ITEM_MEMSET,
  EVRT__ITEM_DELAY,
  EVRT__ITEM_RECORD,
  EVRT__ITEM_WAIT,
  EVRT__ITEM_RESET,
  /* failing host functions, stream-ordered values (src/failure.c,
   * src/value.c) */
  EVRT__ITEM_HOST_TASK,
  EVRT__ITEM_VALUE_WAIT,
  EVRT__ITEM_VALUE_WRITE,
  /* graphs (src/graph_exec.c): a launch, which expands into its lanes, and
   * a run of a graph's nodes on one lane */
  EVRT__ITEM_GRAPH,
  EVRT__ITEM_GRAPH_SEG,
  EVRT__ITEM_KIND_COUNT
};
/* Items that name an event generation (record, wait, reset). */
#define EVRT__ITEM_IS_EVENT(kind)                                              \
  ((kind) >= EVRT__ITEM_RECORD && (kind) <= EVRT__ITEM_RESET)

/* Name of an item kind ("host_func", "memcpy", ...). */
const char *evrt__item_kind_name(int kind);

extern atomic_int evrt__trace_enabled;

#ifdef EVRT_NO_TRACE
#define EVRT_TRACING() 0
#else
#define EVRT_TRACING()                                                         \
  __builtin_expect(                                                            \
      atomic_load_explicit(&evrt__trace_enabled, memory_order_relaxed), 0)
#endif

/* Called once at library init: starts tracing if EVRT_TRACE is set. */
void evrt__trace_init_from_env(void);
/* Called at shutdown and at exit: flush and close the file. */
void evrt__trace_finish(void);
/* Called in a forked child of a process that had initialized evrt (its
 * only thread): the session stays the parent's, and no trace call of the
 * child takes a lock or touches the file. */
void evrt__trace_atfork_child(void);

/* A stream got a name (or was created: name may be NULL). */
void evrt__trace_stream_name(int device, uint64_t stream_id, const char *name);
/* The stream is destroyed: its entry goes (at the end of the session that
 * is recording, if one is: the file still names its track).  A no-op for
 * an id without an entry. */
void evrt__trace_stream_forget(uint64_t stream_id);
/* White-box (tests): the entries of the name table. */
size_t evrt__trace_names_count(void);

/* A work item ran on a stream from t0 to t1 (CLOCK_MONOTONIC ns).
 * For RECORD/WAIT/RESET items event_id and gen name the event generation. */
void evrt__trace_item(int device, uint64_t stream_id, int kind,
                      const char *label, uint64_t t0, uint64_t t1,
                      uint64_t event_id, uint64_t gen);

/* An event generation was recorded (executed) on a stream at time t: instant
 * marker and the start of the flow arrows to the waits bound to it. */
void evrt__trace_record(int device, uint64_t stream_id, uint64_t event_id,
                        uint64_t gen, uint64_t t);

/* A stream's wait bound to (event_id, gen) at enqueue time t: the flow goes
 * record -> wait; when the waiting stream resumes, wait -> resume. */
void evrt__trace_wait_bind(int device, uint64_t stream_id, uint64_t event_id,
                           uint64_t gen, uint64_t t);
void evrt__trace_wait_resume(int device, uint64_t stream_id, uint64_t event_id,
                             uint64_t gen, uint64_t t);

/* EVRT_CHECK marks an operation of a finding (name: its kind) at time t:
 * work item seq of a stream (device >= 0), or host code of a thread
 * (device -1, thread = evrt_thread_id()).  An instant in the timeline. */
void evrt__trace_mark(int device, uint64_t stream_id, uint64_t thread,
                      uint64_t seq, uint64_t t, const char *name);

/* A host thread waited (synchronize) from t0 to t1 on a stream or event. */
void evrt__trace_host_wait(const char *what, uint64_t id, uint64_t t0,
                           uint64_t t1);

#endif
