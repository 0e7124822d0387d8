/*
 * launch.c - Python callables run by evrt worker threads: Stream.launch, the
 * trampoline, the workers' thread states, the errors they raise (kept for
 * the next synchronize) and the exit hook that drains them.
 *
 * Errors raised by a launched callable cannot propagate to anybody at the
 * moment they happen (the launching thread has moved on).  They are kept, in
 * order, in a process-wide list and raised by the next Stream.synchronize()
 * of the stream they ran on, or by evrt.synchronize() of that stream's
 * device, whichever comes first.  Errors that nobody collects are passed to
 * sys.unraisablehook at interpreter exit, so an error is never lost.
 */
#include "evrt_module.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

/* Pending launch errors: a list of (device, stream_id, exception) tuples,
 * only touched with the GIL held. */
static PyObject *launch_errors;

/* Launched Python callables not yet finished, and those inside the
 * trampoline right now; the exit hook waits for both to drain before the
 * interpreter goes away.  Once py_exiting is set, trampolines no longer
 * touch Python (they would need a GIL that finalization has taken). */
static atomic_long launches_pending;
static atomic_long launches_inflight;
static atomic_int py_exiting;
/* Set in the child of a fork(): the parent's worker threads, and the
 * launches they had pending, are not there; evrt itself refuses every call
 * (EVRT_ERROR_FORKED), so nothing launched there ever runs. */
static atomic_int forked_child;

/* pthread_atfork child handler (async-signal-safe stores only). */
static void after_fork_child(void) {
  atomic_store(&launches_pending, 0);
  atomic_store(&launches_inflight, 0);
  atomic_store(&forked_child, 1);
}

/* ------------------------------------------------------------ launch errors */

/* Take the pending launch errors that match (by device, or by stream id when
 * by_stream) and raise the first; more than one: the others go to
 * sys.unraisablehook, in order, before the first is raised.  Returns 0 if
 * there was none, -1 with the exception set. */
int evrtpy_raise_launch_errors(int device, int by_stream, uint64_t stream_id) {
  if (!launch_errors || PyList_GET_SIZE(launch_errors) == 0)
    return 0;
  PyObject *keep = PyList_New(0);
  PyObject *mine = PyList_New(0);
  if (!keep || !mine) {
    Py_XDECREF(keep);
    Py_XDECREF(mine);
    return -1;
  }
  Py_ssize_t n = PyList_GET_SIZE(launch_errors);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PyList_GET_ITEM(launch_errors, i);
    int d = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
    uint64_t id = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 1));
    int match = by_stream ? id == stream_id : d == device;
    if (PyList_Append(match ? mine : keep, t) < 0) {
      Py_DECREF(keep);
      Py_DECREF(mine);
      return -1;
    }
  }
  Py_ssize_t m = PyList_GET_SIZE(mine);
  if (m == 0) {
    Py_DECREF(keep);
    Py_DECREF(mine);
    return 0;
  }
  Py_SETREF(launch_errors, keep);
  for (Py_ssize_t i = 1; i < m; i++) {
    PyObject *exc = PyTuple_GET_ITEM(PyList_GET_ITEM(mine, i), 2);
    Py_INCREF(exc);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    PyErr_WriteUnraisable(NULL);
  }
  PyObject *first = PyTuple_GET_ITEM(PyList_GET_ITEM(mine, 0), 2);
  Py_INCREF(first);
  Py_DECREF(mine);
  PyErr_SetObject((PyObject *)Py_TYPE(first), first);
  Py_DECREF(first);
  return -1;
}

struct launch_item {
  PyObject *fn;
  PyObject *args;
  int device;
  uint64_t stream_id;
};

int evrtpy_trampoline_enter(int counted) {
  /* seq_cst with the exit hook: either it sees us in flight, or we see
   * py_exiting and stay away from the interpreter. */
  atomic_fetch_add(&launches_inflight, 1);
  if (atomic_load(&py_exiting)) {
    atomic_fetch_sub(&launches_inflight, 1);
    if (counted)
      atomic_fetch_sub(&launches_pending, 1);
    return 0;
  }
  return 1;
}

void evrtpy_trampoline_leave(int counted) {
  atomic_fetch_sub(&launches_inflight, 1);
  if (counted)
    atomic_fetch_sub(&launches_pending, 1);
}

void evrtpy_pending_add(long n) { atomic_fetch_add(&launches_pending, n); }

static PyInterpreterState *main_interp;
static _Thread_local PyThreadState *worker_ts;
/* Deletes a worker's thread state when the worker exits (the pool retires
 * idle extra workers), so that states do not pile up. */
static pthread_key_t worker_ts_key;

static void worker_ts_destructor(void *p) {
  PyThreadState *ts = p;
  if (!evrtpy_trampoline_enter(0))
    return; /* interpreter exiting: finalization frees every state */
  PyEval_RestoreThread(ts);
  PyThreadState_Clear(ts);
  PyThreadState_DeleteCurrent(); /* also releases the GIL */
  evrtpy_trampoline_leave(0);
}

void evrtpy_gil_take(evrtpy_gil_t *t) {
  if (!worker_ts && PyGILState_GetThisThreadState() == NULL) {
    worker_ts = PyThreadState_New(main_interp); /* no GIL needed (3.11 docs) */
    if (worker_ts && pthread_setspecific(worker_ts_key, worker_ts) != 0) {
      /* Without the destructor the state would leak at thread exit: use
       * PyGILState for this thread instead. */
      PyEval_RestoreThread(worker_ts);
      PyThreadState_Clear(worker_ts);
      PyThreadState_DeleteCurrent();
      worker_ts = NULL;
    }
  }
  if (worker_ts) {
    t->gilstate = 0;
    PyEval_RestoreThread(worker_ts);
  } else {
    t->gilstate = 1;
    t->g = PyGILState_Ensure();
  }
}

void evrtpy_gil_drop(evrtpy_gil_t *t) {
  if (t->gilstate)
    PyGILState_Release(t->g);
  else
    (void)PyEval_SaveThread();
}

/* counted: a launch (runs once, freed here); else a callable captured into
 * a graph (runs at every replay, freed by kept_free, graph.c). */
static void run_item(struct launch_item *L, int counted) {
  /* Interpreter exiting: the references are leaked on purpose, releasing
   * them would need the GIL. */
  if (!evrtpy_trampoline_enter(counted))
    return;
  evrtpy_gil_t g;
  evrtpy_gil_take(&g);
  PyObject *r = PyObject_Call(L->fn, L->args, NULL);
  if (r) {
    Py_DECREF(r);
  } else {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
      PyException_SetTraceback(value, tb);
    PyObject *t = value ? Py_BuildValue("(iKO)", L->device,
                                        (unsigned long long)L->stream_id,
                                        value)
                        : NULL;
    if (!t || !launch_errors || PyList_Append(launch_errors, t) < 0) {
      /* Could not keep it: report it now rather than lose it. */
      PyErr_Clear();
      PyErr_Restore(type, value, tb);
      type = value = tb = NULL;
      PyErr_WriteUnraisable(L->fn);
    }
    Py_XDECREF(t);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  }
  if (counted) {
    Py_DECREF(L->fn);
    Py_DECREF(L->args);
    PyMem_RawFree(L);
  }
  evrtpy_gil_drop(&g);
  evrtpy_trampoline_leave(counted);
}

static void launch_trampoline(void *p) { run_item(p, 1); }
static void kept_trampoline(void *p) { run_item(p, 0); }

/* With the GIL (graph.c, when the last graph made from the capture goes). */
static void kept_free(void *p) {
  struct launch_item *L = p;
  Py_DECREF(L->fn);
  Py_DECREF(L->args);
  PyMem_RawFree(L);
}

PyObject *evrtpy_stream_launch(StreamObject *self, PyObject *args) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n < 1)
    return PyErr_Format(PyExc_TypeError,
                        "launch() needs a callable as first argument");
  PyObject *fn = PyTuple_GET_ITEM(args, 0);
  if (!PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError, "launch(): %.100s is not callable",
                        Py_TYPE(fn)->tp_name);
  struct launch_item *L = PyMem_RawMalloc(sizeof *L);
  if (!L)
    return PyErr_NoMemory();
  L->args = PyTuple_GetSlice(args, 1, n);
  if (!L->args) {
    PyMem_RawFree(L);
    return NULL;
  }
  Py_INCREF(fn);
  L->fn = fn;
  L->device = self->device;
  L->stream_id = self->id;
  /* Label the trace slice with the callable's __name__ (at most 31 bytes
   * are kept, so not the longer __qualname__). */
  char label[32] = "py";
  PyObject *qn = PyObject_GetAttrString(fn, "__name__");
  if (qn && PyUnicode_Check(qn)) {
    const char *s = PyUnicode_AsUTF8(qn);
    if (s)
      snprintf(label, sizeof label, "%s", s);
  }
  Py_XDECREF(qn);
  PyErr_Clear();
  uint64_t cap;
  if (evrtpy_capture_id(self->h, &cap)) {
    /* Into a capture: a node that runs at every replay (graph.c).  Kept
     * first: a capture that ends meanwhile makes this a plain launch that
     * never frees its item (a leak, not a crash). */
    if (evrtpy_capture_keep(cap, L, kept_free) < 0)
      return NULL;
    evrtpy_check_site(); /* the node's capture site: the Python line */
    evrt_status_t st =
        evrt_launch_host_func_labeled(self->h, kept_trampoline, L, label);
    evrt_check_site(NULL);
    if (st)
      return evrtpy_raise(st, "evrt_launch_host_func");
    Py_RETURN_NONE;
  }
  atomic_fetch_add(&launches_pending, 1);
  evrtpy_check_site(); /* EVRT_CHECK names the Python line (check.c) */
  evrt_status_t st =
      evrt_launch_host_func_labeled(self->h, launch_trampoline, L, label);
  evrt_check_site(NULL);
  if (st) {
    atomic_fetch_sub(&launches_pending, 1);
    Py_DECREF(L->fn);
    Py_DECREF(L->args);
    PyMem_RawFree(L);
    return evrtpy_raise(st, "evrt_launch_host_func");
  }
  Py_RETURN_NONE;
}

static PyObject *m_launches_pending(PyObject *m, PyObject *unused) {
  return PyLong_FromLong(atomic_load(&launches_pending));
}

/* Called by the package's atexit hook, before the interpreter finalizes.
 * Waits (GIL released, up to timeout seconds) for launched callables still
 * queued, then stops new trampolines from entering Python, waits for those
 * inside, and reports uncollected launch errors.  Returns True if
 * everything drained. */
static PyObject *m_at_exit(PyObject *m, PyObject *args) {
  double timeout = 10.0;
  if (!PyArg_ParseTuple(args, "|d:_at_exit", &timeout))
    return NULL;
  struct timespec t0, now, nap = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int drained = 1;
  if (atomic_load(&forked_child)) {
    /* Nothing can run here: no wait, and the errors the parent's launches
     * raised belong to the parent, which reports them itself. */
    atomic_store(&py_exiting, 1);
    if (PyList_SetSlice(launch_errors, 0, PyList_GET_SIZE(launch_errors),
                        NULL) < 0)
      return NULL;
    Py_RETURN_TRUE;
  }
  Py_BEGIN_ALLOW_THREADS
  while (atomic_load(&launches_pending) > 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) +
            (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >
        timeout) {
      drained = 0;
      break;
    }
    nanosleep(&nap, NULL);
  }
  atomic_store(&py_exiting, 1);
  /* Those already past the py_exiting check need the GIL we do not hold
   * now; their Python call may be arbitrarily long, so this is bounded by
   * the same deadline. */
  while (atomic_load(&launches_inflight) > 0) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) +
            (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >
        timeout + 1.0) {
      drained = 0;
      break;
    }
    nanosleep(&nap, NULL);
  }
  Py_END_ALLOW_THREADS
  if (launch_errors) {
    Py_ssize_t n = PyList_GET_SIZE(launch_errors);
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *exc = PyTuple_GET_ITEM(PyList_GET_ITEM(launch_errors, i), 2);
      Py_INCREF(exc);
      PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
      Py_DECREF(exc);
      PyErr_WriteUnraisable(NULL);
    }
    if (PyList_SetSlice(launch_errors, 0, n, NULL) < 0)
      return NULL;
  }
  return PyBool_FromLong(drained);
}

PyMethodDef evrtpy_launch_methods[] = {
    {"_launches_pending", m_launches_pending, METH_NOARGS,
     "Launched callables not finished yet."},
    {"_at_exit", m_at_exit, METH_VARARGS, "Drain launches (internal)."},
    {NULL}};

int evrtpy_launch_init(PyObject *m) {
  main_interp = PyInterpreterState_Get();
  if (pthread_key_create(&worker_ts_key, worker_ts_destructor) != 0) {
    PyErr_SetString(PyExc_OSError, "pthread_key_create failed");
    return -1;
  }
  if (pthread_atfork(NULL, NULL, after_fork_child) != 0) {
    PyErr_SetString(PyExc_OSError, "pthread_atfork failed");
    return -1;
  }
  launch_errors = PyList_New(0);
  return launch_errors ? 0 : -1;
}
