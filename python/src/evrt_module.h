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
/* Device types.  There is one runtime with one set of devices; the type of a
 * stream, event or device object only selects how it presents itself in the
 * torch-compatible API: names, messages, reprs and handle values.  EVRT is
 * the package's own type (torch's PrivateUse1: its name is "evrt" unless
 * renamed, as torch.utils.rename_privateuse1_backend renames that one); CUDA
 * and XPU are the types of evrt.cuda and evrt.xpu; CPU and META exist only
 * as device objects (torch code names them). */
enum {
  EVRTPY_EVRT,
  EVRTPY_CUDA,
  EVRTPY_XPU,
  EVRTPY_NGPU, /* the types streams and events can have */
  EVRTPY_CPU = EVRTPY_NGPU,
  EVRTPY_META,
  EVRTPY_NTYPES
};
/* "evrt" (or its new name), "cuda", "xpu", "cpu", "meta". */
const char *evrtpy_type_name(int type);
/* The name messages use: "CUDA", "XPU", or the evrt type's display name. */
const char *evrtpy_type_display(int type);
/* torch's DeviceType numbers: 20 (PrivateUse1), 1, 12, 0, 14. */
int evrtpy_type_id(int type);
/* The type of a torch DeviceType number, or -1. */
int evrtpy_type_of_id(long id);
/* The current accelerator (evrt.accelerator.use): EVRTPY_EVRT unless set.
 * Only written with the GIL held. */
extern int evrtpy_accelerator;

/* The self of the module functions of one type (evrt, evrt.cuda, evrt.xpu,
 * evrt.accelerator): module.c binds each function to one of these. */
typedef struct {
  PyObject_HEAD
  int type;
  int accel; /* evrt.accelerator: the current accelerator's type, checked */
} FlavorObject;

/* evrt.device: a device type and an optional index (-1: none). */
typedef struct {
  PyObject_HEAD
  int type;
  int index;
  PyObject *ctx; /* list of previous devices of nested with-statements */
} DeviceObject;
extern PyTypeObject evrtpy_DeviceType;
#define evrtpy_Device_Check(o) PyObject_TypeCheck((o), &evrtpy_DeviceType)
PyObject *evrtpy_device_new(int type, int index);

/* Number of devices / the calling thread's current device; 0, or -1 with
 * the exception set. */
int evrtpy_get_count(int *n);
int evrtpy_get_current(int *d);

/* How evrtpy_device_arg reads a device argument. */
#define EVRTPY_DEV_OPTIONAL 1 /* None (or an index-less device): current */
#define EVRTPY_DEV_ANY_GPU 2  /* evrt, cuda and xpu devices all accepted */
#define EVRTPY_DEV_ACCEL 4    /* the accelerator API's type check/message */
#define EVRTPY_DEV_NEG_OK 8   /* a negative int is returned as is (-1) */
/* A device argument of an API of type `type`: an int (negative: the current
 * device), a str ("cuda:1") or a device object of that type (any GPU type
 * with EVRTPY_DEV_ANY_GPU), or None.  A bool is a TypeError (it is never a
 * device).  The index is checked against the device count, with the type's
 * message.  0 with *index (and *type_out: the device's type, or `type` for
 * ints and None) or -1 with the exception set. */
int evrtpy_device_arg(PyObject *o, int type, int flags, int *index,
                      int *type_out);
/* The out-of-range error of a type (torch's wording for CUDA and XPU). */
int evrtpy_range_error(int type, long index, int count);
/* Set the current device, or raise. */
int evrtpy_set_device(int d);
/* _rename_device_type, _use_accelerator, _accelerator_type. */
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
  evrt_stream_t h; /* the stream's real handle, even for a default stream */
  uint64_t id;     /* evrt_stream_get_id: keys the launch errors */
  int device;
  int priority;
  unsigned char type;       /* EVRTPY_EVRT, _CUDA or _XPU */
  unsigned char owned;      /* destroyed with the object */
  unsigned char is_default; /* the device's default stream */
  PyObject *owner;          /* a view's owning object, kept alive; or NULL */
  PyObject *ctx;            /* the with-statement stack (a list), lazily */
  PyObject *weakreflist;
} StreamObject;

/* evrt.Stream, evrt.cuda.Stream, evrt.xpu.Stream (C subtypes). */
extern PyTypeObject evrtpy_StreamType, evrtpy_CudaStreamType,
    evrtpy_XpuStreamType;
#define evrtpy_Stream_Check(o) PyObject_TypeCheck((o), &evrtpy_StreamType)
/* The class that C code uses for streams of a type. */
PyTypeObject *evrtpy_stream_class(int type);
/* PyType_Ready of the three (after filling the subtypes' method tables). */
int evrtpy_stream_types_ready(void);
/* ctypes.c_void_p(v) (the _as_parameter_ of the cuda and xpu kinds). */
PyObject *evrtpy_c_void_p(unsigned long long v);
/* An object of class cls (NULL: the type's class) and type `type` for the
 * existing native stream h, which it does not own; owner (may be NULL) is
 * kept alive with it.  New reference, or NULL with the exception set. */
PyObject *evrtpy_stream_wrap(PyTypeObject *cls, int type, evrt_stream_t h,
                             PyObject *owner);
/* The object that owns native stream h (created it), or NULL; new ref. */
PyObject *evrtpy_stream_owner(evrt_stream_t h);
/* torch's stream_id: the handle; 0 for a CUDA-type default stream (CUDA's
 * legacy stream 0, which the C API reads as the current device's default). */
uint64_t evrtpy_stream_id(StreamObject *s);
/* The with-statement of streams (torch.Stream.__enter__/__exit__). */
PyObject *evrtpy_stream_enter(StreamObject *s);
PyObject *evrtpy_stream_exit(StreamObject *s);

/* ------------------------------------------------------------ current.c */
/* The calling thread's current stream of a device: its handle (NULL: the
 * device's default stream, which is also what the C API reads NULL as on
 * the current device), and an object of the given type for it. */
evrt_stream_t evrtpy_current_handle(int device);
PyObject *evrtpy_current_stream(int type, int device);
/* The default stream of a device as an object of a type (cached, one per
 * type and device; new reference). */
PyObject *evrtpy_default_stream(int type, int device);
/* Make s the calling thread's current stream of its device, and its device
 * the current device.  0 or -1. */
int evrtpy_set_stream(StreamObject *s);
/* The module functions of a type (current_stream, set_stream, ...). */
extern PyMethodDef evrtpy_flavor_methods[];

/* -------------------------------------------------------------- event.c */
typedef struct {
  PyObject_HEAD
  evrt_event_t h; /* NULL until the first record / ipc_handle (lazy) */
  unsigned flags;
  int want_device; /* the device given at construction (IPC), -1 if none */
  unsigned char type;
  unsigned char imported;
  unsigned char external; /* torch.cuda.Event(external=True): a flag only */
  PyObject *weakreflist;
} EventObject;

/* evrt.Event, evrt.cuda.Event, evrt.xpu.Event (C subtypes). */
extern PyTypeObject evrtpy_EventType, evrtpy_CudaEventType,
    evrtpy_XpuEventType;
#define evrtpy_Event_Check(o) PyObject_TypeCheck((o), &evrtpy_EventType)
PyTypeObject *evrtpy_event_class(int type);
int evrtpy_event_types_ready(void);
/* A new, never recorded event of a type (its class: evrtpy_event_class). */
PyObject *evrtpy_event_new(int type, unsigned flags);
/* Record e on native stream h of device sdev (torch's checks and
 * messages); 0 or -1.  Make h wait for e (nothing if e was never created);
 * None or NULL with the exception set. */
int evrtpy_event_record_on(EventObject *e, evrt_stream_t h, int sdev);
PyObject *evrtpy_event_wait_on(EventObject *e, evrt_stream_t h);

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

/* -------------------------------------------------------------- graph.c */
/* evrt.Graph, evrt.GraphExec and the capture functions (0 or -1). */
int evrtpy_graph_init(PyObject *module);
extern PyTypeObject evrtpy_GraphType, evrtpy_GraphExecType;
/* 1 (and *id) if native stream h is capturing (an active capture), else 0. */
int evrtpy_capture_id(evrt_stream_t h, uint64_t *id);
/* A callable's item launched into capture id: kept until every graph and
 * executable made from it is gone (release(item) runs then, with the GIL).
 * 0, or -1 with the exception set (release already called). */
int evrtpy_capture_keep(uint64_t id, void *item, void (*release)(void *));
/* The list of capture id's kept items, taken (new reference; an empty list
 * if none), or NULL with the exception set. */
PyObject *evrtpy_capture_take(uint64_t id);
/* evrt_stream_end_capture, and the capture's kept items for its graph (a new
 * reference in *keep, or NULL: none, or the end failed). */
evrt_status_t evrtpy_capture_end(evrt_stream_t s, evrt_graph_t *g,
                                 PyObject **keep);
/* Let go of a reference to a list of kept items once the work enqueued so
 * far on every device is done (steals the reference; NULL is fine). */
void evrtpy_release_after_work(PyObject *list);
/* Events made with external=True: record / wait with the external flag when
 * the stream is capturing (an external node), plainly otherwise. */
evrt_status_t evrtpy_record_maybe_external(evrt_event_t e, evrt_stream_t s,
                                           int external);
evrt_status_t evrtpy_wait_maybe_external(evrt_stream_t s, evrt_event_t e,
                                         int external);

/* ----------------------------------------------------------- gputrace.c */
/* torch's GPU trace hooks (evrt._gpu_trace): what happened, for the
 * callbacks of the device type of the object concerned. */
enum {
  EVRTPY_TRACE_EVENT_CREATION,       /* (event) */
  EVRTPY_TRACE_EVENT_DELETION,       /* (event) */
  EVRTPY_TRACE_EVENT_RECORD,         /* (event, stream) */
  EVRTPY_TRACE_EVENT_WAIT,           /* (event, stream) */
  EVRTPY_TRACE_EVENT_SYNCHRONIZATION, /* (event) */
  EVRTPY_TRACE_STREAM_CREATION,      /* (stream) */
  EVRTPY_TRACE_STREAM_SYNCHRONIZATION, /* (stream) */
  EVRTPY_TRACE_DEVICE_SYNCHRONIZATION, /* () */
  EVRTPY_TRACE_N
};
/* Nonzero once evrt._activate_gpu_trace() ran (GIL held to read it). */
extern int evrtpy_gpu_trace_on;
/* Call the callbacks (GIL held; keeps any pending exception; never
 * raises).  Use EVRTPY_GPU_TRACE, which tests evrtpy_gpu_trace_on first. */
void evrtpy_gpu_trace_fire(int type, int what, int nargs, uint64_t a,
                           uint64_t b);
#define EVRTPY_GPU_TRACE(type, what, nargs, a, b)                              \
  do {                                                                         \
    if (evrtpy_gpu_trace_on)                                                   \
      evrtpy_gpu_trace_fire((type), (what), (nargs), (a), (b));                \
  } while (0)
/* A native stream h (NULL: the current device's default) as a type shows
 * it to the callbacks: its cuda_stream / sycl_queue. */
uint64_t evrtpy_gpu_trace_stream(int type, evrt_stream_t h);
extern PyMethodDef evrtpy_gputrace_methods[];

/* Adds the pyACL functions (evrt._evrt._acl_rt) to the module; returns 0 or
 * -1 with an exception set. */
int evrtpy_acl_init(PyObject *module);

/* ------------------------------------------------------------ acl_mdl.c */
/* acl.mdl (the model runtime instance calls) and acl.rt's label calls,
 * added to the acl and acl.rt modules made by evrtpy_acl_init. */
int evrtpy_acl_mdl_init(PyObject *module, PyObject *acl, PyObject *rt);
/* acl.rt.launch_host_func on a capturing stream: the callable is kept for
 * every execution of the model (acl_mdl.c).  0: the stream is not
 * capturing (launch it plainly); 1: launched, the ACL code in *ret; -1:
 * the exception is set. */
int evrtpy_acl_launch_kept(void *stream, PyObject *fn, PyObject *arg,
                           int *ret);
/* acl_module.c's argument converters, for acl_mdl.c: a handle argument
 * (an int, or None for NULL; an O& converter), and (handle, ret). */
int evrtpy_acl_to_ptr(PyObject *o, void **out);
PyObject *evrtpy_acl_ptr_ret(void *p, int ret);

#endif
