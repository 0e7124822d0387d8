/*
 * wait.c - blocking waits with the GIL released, cut into slices so that a
 * pending signal (Ctrl-C) is seen between them.
 */
#include "evrt_module.h"

#define WAIT_SLICE_NS (100 * 1000 * 1000LL)

/* Runs a blocking wait with the GIL released, in slices, checking for
 * signals in between (only the main thread gets them).  waitfn returns
 * EVRT_ERROR_TIMEOUT when the slice ran out. */
evrt_status_t evrtpy_wait_sliced(slice_wait_fn fn, void *obj, int *interrupted) {
  evrt_status_t st;
  *interrupted = 0;
  for (;;) {
    Py_BEGIN_ALLOW_THREADS
    st = fn(obj, WAIT_SLICE_NS);
    Py_END_ALLOW_THREADS
    if (st != EVRT_ERROR_TIMEOUT)
      return st;
    if (PyErr_CheckSignals() < 0) {
      *interrupted = 1;
      return st;
    }
  }
}
