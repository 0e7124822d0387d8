/*
 * wait.c - blocking waits with the GIL released that Ctrl-C interrupts.
 *
 * A wait runs in slices of EVRTPY_WAIT_SLICE_NS with the GIL released;
 * between two slices the thread takes the GIL back and runs the pending
 * signal handlers (PyErr_CheckSignals: only the main thread has any).  A
 * handler that raises (KeyboardInterrupt) ends the wait with that exception;
 * the wait itself has no side effect, so the runtime is as if the call had
 * not been made.  A signal also interrupts the system call a slice sleeps in
 * (CPython installs its handlers without SA_RESTART), so the slice length
 * bounds the latency rather than sets it.
 *
 * Before releasing the GIL the wait is polled once (a zero timeout): a call
 * on finished work, the common case, costs no GIL round trip.
 */
#include "evrt_module.h"

#include <time.h>

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int evrtpy_wait(slice_wait_fn fn, void *obj, int64_t timeout_ns, int poll,
                evrt_status_t *out) {
  evrt_status_t st = EVRT_ERROR_TIMEOUT;
  if (poll) {
    st = fn(obj, 0);
    if (st != EVRT_ERROR_TIMEOUT || timeout_ns == 0) {
      *out = st;
      return 0;
    }
  }
  int64_t deadline = timeout_ns < 0 ? -1 : now_ns() + timeout_ns;
  for (;;) {
    int64_t slice = EVRTPY_WAIT_SLICE_NS;
    if (deadline >= 0) {
      int64_t left = deadline - now_ns();
      if (left <= 0)
        break;
      if (left < slice)
        slice = left;
    }
    Py_BEGIN_ALLOW_THREADS
    st = fn(obj, slice);
    Py_END_ALLOW_THREADS
    if (st != EVRT_ERROR_TIMEOUT)
      break;
    if (PyErr_CheckSignals() < 0)
      return -1;
  }
  *out = st;
  return 0;
}

static evrt_status_t event_slice(void *e, int64_t t) {
  return evrt_event_synchronize_timeout((evrt_event_t)e, t);
}

static evrt_status_t stream_slice(void *s, int64_t t) {
  return evrt_stream_synchronize_timeout((evrt_stream_t)s, t);
}

static evrt_status_t device_slice(void *d, int64_t t) {
  return evrt_device_synchronize_timeout((int)(intptr_t)d, t);
}

int evrtpy_event_wait(evrt_event_t e, int64_t timeout_ns, int poll,
                      evrt_status_t *st) {
  return evrtpy_wait(event_slice, (void *)e, timeout_ns, poll, st);
}

int evrtpy_stream_wait(evrt_stream_t s, int64_t timeout_ns, int poll,
                       evrt_status_t *st) {
  return evrtpy_wait(stream_slice, (void *)s, timeout_ns, poll, st);
}

int evrtpy_device_wait(int device, int64_t timeout_ns, int poll,
                       evrt_status_t *st) {
  return evrtpy_wait(device_slice, (void *)(intptr_t)device, timeout_ns, poll,
                     st);
}
