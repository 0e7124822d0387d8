/*
 * sched_points.h - what the schedule-point tests of tests/fault/ share
 * (they link evrt_static, where EVRT__SCHED_POINT calls
 * evrt__test_sched_hook): a bounded semaphore wait, for a hook that holds
 * a thread at its point until the test's other threads have done their
 * part.
 */
#ifndef EVRT_TEST_SCHED_POINTS_H
#define EVRT_TEST_SCHED_POINTS_H

#include <errno.h>
#include <semaphore.h>
#include <stdbool.h>
#include <time.h>

/* Waits up to `seconds` (generous: a loaded sanitizer run is slow);
 * false on timeout, so a broken schedule fails instead of hanging. */
static inline bool sem_wait_s(sem_t *s, int seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += seconds;
  while (sem_timedwait(s, &ts) != 0)
    if (errno != EINTR)
      return false;
  return true;
}

#endif
