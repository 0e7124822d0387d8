/*
 * evrt_module.h - what the parts of the evrt._evrt extension share.
 *
 * The extension is written over the public C API only (include/evrt.h and,
 * for evrt.acl, include/acl/acl.h): the Python layer must behave like any
 * other client of the library.
 */
#ifndef EVRT_PY_MODULE_H
#define EVRT_PY_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <evrt.h>

/* evrt.EvrtError (a RuntimeError) and its NotImplementedError subclass for
 * EVRT_ERROR_NOT_SUPPORTED. */
extern PyObject *evrtpy_Error;
extern PyObject *evrtpy_NotSupportedError;

/* Set the Python error for a failed evrt call and return NULL.  The message
 * names the call, the status and evrt's per-thread detail message; the
 * exception has .code (int) and .name ("EVRT_ERROR_...") attributes. */
PyObject *evrtpy_raise(evrt_status_t st, const char *call);

/* Python callbacks run by evrt worker threads (or ACL report threads)
 * bracket their use of the interpreter with these, so that the exit hook can
 * wait for them.  enter() returns 0 when the interpreter is exiting: the
 * caller must then not touch Python at all (and not call leave()).
 * counted: the callback was added to the pending count at enqueue
 * (evrtpy_pending_add(1)), which the exit hook drains before it returns. */
int evrtpy_trampoline_enter(int counted);
void evrtpy_trampoline_leave(int counted);
void evrtpy_pending_add(long n);

/* Take / drop the GIL on a thread that is not running Python (an evrt
 * worker).  A worker keeps one thread state for its lifetime instead of
 * creating and deleting one per callback, as PyGILState_Ensure would on a
 * thread Python does not know; a thread Python knows uses PyGILState. */
typedef struct evrtpy_gil {
  int gilstate;
  PyGILState_STATE g;
} evrtpy_gil_t;
void evrtpy_gil_take(evrtpy_gil_t *t);
void evrtpy_gil_drop(evrtpy_gil_t *t);

/* ------------------------------------------------------------ devices.c */
/* Number of devices / the calling thread's current device; 0, or -1 with
 * the exception set. */
int evrtpy_get_count(int *n);
int evrtpy_get_current(int *d);
/* Device argument: None or a negative int = the current device; an int; or
 * the strings "evrt" / "evrt:N".  0, or -1 with the exception set. */
int evrtpy_parse_device(PyObject *o, int *out);
extern PyMethodDef evrtpy_device_methods[];

/* --------------------------------------------------------------- wait.c */
/* Longest a blocking wait goes without looking at pending signals. */
#define EVRTPY_WAIT_SLICE_NS (20 * 1000 * 1000LL)
/* One slice of a blocking wait on obj: EVRT_ERROR_TIMEOUT when it ran out
 * (timeout 0: a poll). */
typedef evrt_status_t (*slice_wait_fn)(void *obj, int64_t timeout_ns);
/* Waits with fn for up to timeout_ns (negative: forever) with the GIL
 * released, in slices, running the signal handlers between them; poll: try
 * once with the GIL held first.  Returns 0 with the wait's status in *st
 * (EVRT_ERROR_TIMEOUT if timeout_ns ran out), or -1 with the exception a
 * signal handler raised (KeyboardInterrupt). */
int evrtpy_wait(slice_wait_fn fn, void *obj, int64_t timeout_ns, int poll,
                evrt_status_t *st);
/* The same for an event, a stream and a device. */
int evrtpy_event_wait(evrt_event_t e, int64_t timeout_ns, int poll,
                      evrt_status_t *st);
int evrtpy_stream_wait(evrt_stream_t s, int64_t timeout_ns, int poll,
                       evrt_status_t *st);
int evrtpy_device_wait(int device, int64_t timeout_ns, int poll,
                       evrt_status_t *st);

/* ------------------------------------------------------------- stream.c */
typedef struct {
  PyObject_HEAD
  evrt_stream_t h;
  int device;
  int priority;
  uint64_t id;
  int owned; /* created by us (destroyed with the object), not a default */
  PyObject *weakreflist;
} StreamObject;

extern PyTypeObject evrtpy_StreamType;
#define evrtpy_Stream_Check(o) PyObject_TypeCheck((o), &evrtpy_StreamType)

/* -------------------------------------------------------------- event.c */
typedef struct {
  PyObject_HEAD
  evrt_event_t h; /* NULL until the first record / ipc_handle (lazy) */
  unsigned flags;
  int want_device; /* device given at construction, -1 if none */
  int imported;
  PyObject *weakreflist;
} EventObject;

extern PyTypeObject evrtpy_EventType;

/* ------------------------------------------------------------- launch.c */
/* Stream.launch(fn, *args). */
PyObject *evrtpy_stream_launch(StreamObject *self, PyObject *args);
/* Take the pending launch errors that match (by device, or by stream id when
 * by_stream) and raise the first; 0 if there was none, -1 with the
 * exception set. */
int evrtpy_raise_launch_errors(int device, int by_stream, uint64_t stream_id);
extern PyMethodDef evrtpy_launch_methods[];
int evrtpy_launch_init(PyObject *module);

/* -------------------------------------------------------------- check.c */
extern PyMethodDef evrtpy_check_methods[]; /* evrt.check_* (docs/check.md) */
/* With the checker on, name the calling Python line as the site of the next
 * evrt call (undo with evrt_check_site(NULL)). */
void evrtpy_check_site(void);

/* ------------------------------------------------------------- errors.c */
int evrtpy_errors_init(PyObject *module);

/* Adds the pyACL functions (evrt._evrt._acl_rt) to the module; returns 0 or
 * -1 with an exception set. */
int evrtpy_acl_init(PyObject *module);

#endif
