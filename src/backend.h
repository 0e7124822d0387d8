/*
 * backend.h - the interface between the core and a backend (the thing that
 * executes stream work): the ops table, and the inline dispatch the core
 * calls it through.  docs/backends.md describes it for backend writers and
 * maps a CUDA driver and a Level Zero backend onto it.
 *
 * The model is evrt's own: a generation is (stream, seq), seq the 1-based
 * position of an item in its stream.  A stream is a timeline; the backend
 * advances stream.done_seq (internal.h) monotonically as items complete
 * (release, then wake whoever waits), and the core reads it directly: query
 * and the record fast path need no call.  Everything else the core asks is
 * a hook below.
 *
 * Core files (src/stream.c, event.c, device.c, ipc*.c, capture.c, graph*.c,
 * value.c, failure.c, init.c, src/check) reach the scheduler only through
 * these hooks; the CTest `core_uses_backend_ops` (tests/layering.sh) fails
 * if one of them names a symbol of src/cpu/cpu.h.
 *
 * Dispatch.  The cpu backend is built in; evrt__backend points at its table
 * unless EVRT_BACKEND named another at init (src/backend_load.c).  The hooks
 * on hot paths (submit, host_wait, timestamp, stream_resume) go through an
 * inline test of that pointer, predicted true, and then a direct call of
 * the cpu function: no indirect call for the built-in backend (bench/README.md
 * has the A/B); so do the stream hooks (stream create + destroy is measured
 * too).  Cold hooks are called through the table.
 *
 * Locks named below are those of internal.h's lock order.  "No lock held"
 * means no runtime lock at all (a hook may then block or make system calls).
 */
#ifndef EVRT_BACKEND_H
#define EVRT_BACKEND_H

#include "evrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef EVRT_LIKELY /* (a backend built outside the core includes this alone) */
#define EVRT_LIKELY(x) __builtin_expect(!!(x), 1)
#endif

struct evrt__stream;
struct evrt__item;

/* The interface version: bumped by any change to the table's layout or to
 * a hook's contract.  A loaded backend reports the version and the table
 * size it was built with; init refuses a mismatch (EVRT_ERROR_NOT_SUPPORTED,
 * with both numbers in the message). */
#define EVRT__BACKEND_VERSION 1u

/* The direction of a copy, as the backend's copy engine wants it.  The
 * core passes EVRT__COPY_DEFAULT (infer it from the addresses, like
 * cudaMemcpyDefault under unified addressing) until an API carries one. */
enum evrt__copy_dir {
  EVRT__COPY_DEFAULT = 0,
  EVRT__COPY_H2H,
  EVRT__COPY_H2D,
  EVRT__COPY_D2H,
  EVRT__COPY_D2D
};

struct evrt__backend_ops {
  /* sizeof(struct evrt__backend_ops) and EVRT__BACKEND_VERSION as the
   * backend was compiled: checked at init before any hook is called. */
  uint32_t size;
  uint32_t version;
  const char *name;

  /* ---- lifecycle (the initializing thread, or evrt_shutdown's caller
   * under the init lock; no other runtime lock) */
  /* Number of devices; called once, at init, after init. */
  int (*device_count)(void);
  /* Start the backend's threads.  A failure is reported as it is returned
   * (the hook calls evrt__fail for the message). */
  evrt_status_t (*init)(void);
  /* Wake every host thread parked in host_wait with EVRT_ERROR_SHUTDOWN:
   * the library state is SHUTDOWN already.  Called before shutdown. */
  void (*wake_hosts)(void);
  /* Wait for the items running now and join every backend thread. */
  void (*shutdown)(void);

  /* ---- streams */
  /* A new incarnation of a stream slot (evrt__stream_new: the creating
   * thread, no lock held, before the handle is published): reset the
   * backend's per-stream state and reserve what submit will need, so that
   * submit never fails.  Nonzero: the create fails with that status. */
  evrt_status_t (*stream_init)(struct evrt__stream *s);
  /* A drained, destroyed stream is being freed (evrt__stream_free, called
   * by whoever won it: the destroying thread or the backend's thread that
   * drained it; no lock held): wake the waiters of every reached target
   * and give back what stream_init reserved. */
  void (*stream_release)(struct evrt__stream *s);
  /* evrt_stream_destroy killed the handle and no pinned producer remains
   * (the destroying thread, no lock held).  Mark the stream destroyed;
   * if it is idle and drained, claim it and call evrt__stream_free now,
   * otherwise the thread that drains it will. */
  void (*stream_destroyed)(struct evrt__stream *s);
  /* Items were linked to s (stream.c, after plock is released; the caller
   * may hold an event lock, never a spin lock): make s run them.  Hot:
   * every enqueue.  Must not fail (stream_init reserved its room). */
  void (*submit)(struct evrt__stream *s);
  /* A parked item of s may now proceed (its dependency completed, its
   * deadline passed, its value arrived, or it was aborted).  Any thread,
   * no lock held. */
  void (*stream_resume)(struct evrt__stream *s);

  /* ---- waits */
  /* Host wait: return once s->done_seq >= target (EVRT_SUCCESS), after
   * timeout_ns (>= 0; -1 never: EVRT_ERROR_TIMEOUT), or at shutdown
   * (EVRT_ERROR_SHUTDOWN).  blocking: park at once instead of spinning
   * first (EVRT_EVENT_BLOCKING_SYNC).  The calling host thread, no lock
   * held; it may be one of the backend's own threads running a host
   * function (the backend must then keep the stream's other work going). */
  evrt_status_t (*host_wait)(struct evrt__stream *s, uint64_t target,
                             int64_t timeout_ns, bool blocking);
  /* Device-side wait: the wait item `it` of it->owner depends on
   * (it->u.ev.src, it->u.ev.target).  Register it so that stream_resume
   * (it->owner) follows when the target is reached; false if it already
   * is (nothing registered).  The thread executing it->owner (graph
   * launches: the same), no lock held. */
  bool (*wait_register)(struct evrt__item *it);
  /* Take a registered wait off its source (it is skipped: abort, stop, a
   * graph launch ended).  Any thread, no lock held. */
  void (*wait_cancel)(struct evrt__item *it);
  /* Resume it->owner at it->deadline (ns, CLOCK_MONOTONIC): wait timeouts
   * and value-wait polls.  Any thread, no lock held.  cancel is harmless
   * on an item not armed. */
  evrt_status_t (*timer_arm)(struct evrt__item *it);
  void (*timer_cancel)(struct evrt__item *it);
  /* How long a host should spin on a word another thread will write soon
   * before it parks (ns); an estimate, any thread, no lock held. */
  uint64_t (*spin_budget_ns)(void);
  /* Is the calling thread one of the backend's executing threads (it then
   * must never block on a wait: failure.c defers work instead)? */
  bool (*on_own_thread)(void);

  /* ---- execution */
  /* Execute one item of s now, as its stream would (a graph launch runs
   * its nodes through this; the thread executing s, no lock held).  False:
   * the item parked (s must park until stream_resume). */
  bool (*run_item)(struct evrt__stream *s, struct evrt__item *it);
  /* Host functions are items (kinds HOST, TASK) delivered by submit: the
   * backend runs them in stream order on a thread of its own with no
   * runtime lock held (cpu: a worker; CUDA: cuLaunchHostFunc), and never
   * on a thread that is inside a host wait of the same stream. */

  /* ---- time */
  /* When a record executes on `device`, in ns on one scale per device.
   * Any thread; may be called with an event lock held (no blocking).  Hot:
   * every timing record. */
  uint64_t (*timestamp)(int device);
  /* Signed ns from t0 to t1, two timestamps of `device` (elapsed time).
   * Any thread, no lock held. */
  int64_t (*elapsed_ns)(int device, uint64_t t0, uint64_t t1);

  /* ---- memory (the thread executing the stream, no lock held; may take
   * long) */
  void (*copy)(int device, void *dst, const void *src, size_t n,
               enum evrt__copy_dir dir);
  void (*fill)(int device, void *dst, int value, size_t n);
};

/* Inside the library these are hidden, and said so here: the dispatch's
 * compare is then with an address the code computes (lea), not one loaded
 * from the GOT. */
#ifdef EVRT_BUILDING_LIBRARY
#define EVRT__HIDDEN __attribute__((visibility("hidden")))
#else
#define EVRT__HIDDEN
#endif
/* The table in use (set at init, before any other hook runs; read-only
 * after) and the built-in one. */
extern EVRT__HIDDEN const struct evrt__backend_ops *evrt__backend;
extern EVRT__HIDDEN const struct evrt__backend_ops evrt__cpu_backend;
/* The built-in seq backend (src/seq/): the cpu scheduler on one thread,
 * the next stream drawn from a seed (EVRT_BACKEND=seq). */
extern EVRT__HIDDEN const struct evrt__backend_ops evrt__seq_backend;

/* Choose the backend named by EVRT_BACKEND (unset or "cpu": the built-in
 * one; "seq": the built-in seq one; another name: dlopen of libevrt-backend-<name>.so.0 and its entry
 * EVRT_BACKEND_ENTRY).  The initializing thread. */
evrt_status_t evrt__backend_select(void);

/* The entry a loadable backend exports: given the core's interface
 * version and the built-in cpu table (so that a backend may wrap it), its
 * own table, or NULL to refuse (init then fails, naming the library). */
#define EVRT_BACKEND_ENTRY "evrt_backend_entry_v1"
typedef const struct evrt__backend_ops *(*evrt__backend_entry_fn)(
    uint32_t core_version, const struct evrt__backend_ops *cpu);

/* ---- the cpu backend's hot hooks, for the direct calls below only (no
 * core file names them: tests/layering.sh) */
void evrt__cpu_submit(struct evrt__stream *s);
void evrt__cpu_stream_resume(struct evrt__stream *s);
evrt_status_t evrt__cpu_host_wait(struct evrt__stream *s, uint64_t target,
                                  int64_t timeout_ns, bool blocking);
uint64_t evrt__cpu_timestamp(int device);
evrt_status_t evrt__cpu_stream_init(struct evrt__stream *s);
void evrt__cpu_stream_release(struct evrt__stream *s);
void evrt__cpu_stream_destroyed(struct evrt__stream *s);

#define EVRT__BE_IS_CPU() EVRT_LIKELY(evrt__backend == &evrt__cpu_backend)

/* ---- dispatch: what the core calls */
static inline void evrt__be_submit(struct evrt__stream *s) {
  if (EVRT__BE_IS_CPU())
    evrt__cpu_submit(s);
  else
    evrt__backend->submit(s);
}
static inline void evrt__be_stream_resume(struct evrt__stream *s) {
  if (EVRT__BE_IS_CPU())
    evrt__cpu_stream_resume(s);
  else
    evrt__backend->stream_resume(s);
}
static inline evrt_status_t evrt__be_host_wait(struct evrt__stream *s,
                                               uint64_t target,
                                               int64_t timeout_ns,
                                               bool blocking) {
  if (EVRT__BE_IS_CPU())
    return evrt__cpu_host_wait(s, target, timeout_ns, blocking);
  return evrt__backend->host_wait(s, target, timeout_ns, blocking);
}
static inline evrt_status_t evrt__be_stream_init(struct evrt__stream *s) {
  if (EVRT__BE_IS_CPU())
    return evrt__cpu_stream_init(s);
  return evrt__backend->stream_init(s);
}
static inline void evrt__be_stream_release(struct evrt__stream *s) {
  if (EVRT__BE_IS_CPU())
    evrt__cpu_stream_release(s);
  else
    evrt__backend->stream_release(s);
}
static inline void evrt__be_stream_destroyed(struct evrt__stream *s) {
  if (EVRT__BE_IS_CPU())
    evrt__cpu_stream_destroyed(s);
  else
    evrt__backend->stream_destroyed(s);
}
static inline uint64_t evrt__be_timestamp(int device) {
  if (EVRT__BE_IS_CPU())
    return evrt__cpu_timestamp(device);
  return evrt__backend->timestamp(device);
}

#endif
