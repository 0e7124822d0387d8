/*
 * handle_generations.c - stale handles never become valid again, and
 * handle values differ between processes (issue 13, item 9).
 *
 * A slot's generation is 32 bits; after 2^31 create/destroy cycles of one
 * slot it used to wrap around to 1, and the first handle ever given for
 * that slot was valid again (naming whatever lived there: another
 * component's event, destroyed by a stale destroy).  Exhausting a slot for
 * real takes 25 s of loops, so a test hook (evrt__test_set_generation,
 * linked from evrt_static) moves a live object to the generation of its
 * choice.  And every process used to hand out the same values (the first
 * event was always the same integer), so an integer kept from another run,
 * or guessed, named a live object: values are now keyed per process.
 */
#include "test.h"

#include <sys/wait.h>

uintptr_t evrt__test_set_generation(uintptr_t h, uint32_t gen);

/* Cycle create/destroy on this thread (which reuses the slot it just
 * freed first) and check that no handle in `stale` ever validates or is
 * handed out again. */
static int cycle_and_check_events(const evrt_event_t *stale, int nstale,
                                  int cycles) {
  for (int i = 0; i < cycles; i++) {
    evrt_event_t e;
    if (evrt_event_create(&e, 0) != EVRT_SUCCESS)
      return 0;
    for (int k = 0; k < nstale; k++) {
      if (e == stale[k] || evrt_event_query(stale[k]) != EVRT_ERROR_INVALID_HANDLE)
        return 0;
    }
    if (evrt_event_destroy(e) != EVRT_SUCCESS)
      return 0;
  }
  return 1;
}

TEST(exhausted_event_slot_is_retired_not_revalidated) {
  evrt_event_t e, first, last;
  ASSERT_OK(evrt_event_create(&e, 0));
  /* the slot's first incarnation, then its last one */
  first = (evrt_event_t)evrt__test_set_generation((uintptr_t)e, 1);
  ASSERT(first != NULL);
  ASSERT_OK(evrt_event_query(first));
  ASSERT_OK(evrt_event_destroy(first));
  ASSERT_OK(evrt_event_create(&e, 0)); /* this thread's cache: same slot */
  last = (evrt_event_t)evrt__test_set_generation((uintptr_t)e, 0xfffffffdu);
  ASSERT(last != NULL);
  ASSERT_OK(evrt_event_query(last));
  ASSERT_OK(evrt_event_destroy(last));
  evrt_event_t stale[2] = {first, last};
  /* Without retirement the next incarnations are 0xffffffff and then 1:
   * `first` again. */
  ASSERT(cycle_and_check_events(stale, 2, 100));
  ASSERT_ST(evrt_event_destroy(first), EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_event_destroy(last), EVRT_ERROR_INVALID_HANDLE);
}

/* The same for a recorded event (its destroy takes the slow path) and for
 * a stream slot. */
TEST(exhausted_stream_and_recorded_event_slots_are_retired) {
  evrt_stream_t s, sfirst, slast;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  sfirst = (evrt_stream_t)evrt__test_set_generation((uintptr_t)s, 1);
  ASSERT(sfirst != NULL);
  ASSERT_OK(evrt_stream_destroy(sfirst));
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  slast = (evrt_stream_t)evrt__test_set_generation((uintptr_t)s, 0xfffffffdu);
  ASSERT(slast != NULL);
  ASSERT_OK(evrt_stream_synchronize(slast));
  ASSERT_OK(evrt_stream_destroy(slast));
  for (int i = 0; i < 100; i++) {
    evrt_stream_t n;
    ASSERT_OK(evrt_stream_create(&n, 0, 0, 0));
    ASSERT(n != sfirst && n != slast);
    ASSERT_ST(evrt_stream_query(sfirst), EVRT_ERROR_INVALID_HANDLE);
    ASSERT_ST(evrt_stream_query(slast), EVRT_ERROR_INVALID_HANDLE);
    ASSERT_OK(evrt_stream_destroy(n));
  }

  evrt_event_t e, first, last;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  first = (evrt_event_t)evrt__test_set_generation((uintptr_t)e, 1);
  ASSERT_OK(evrt_event_record(first, s));
  ASSERT_OK(evrt_event_destroy(first));
  ASSERT_OK(evrt_event_create(&e, 0));
  last = (evrt_event_t)evrt__test_set_generation((uintptr_t)e, 0xfffffffdu);
  ASSERT_OK(evrt_event_record(last, s));
  ASSERT_OK(evrt_event_destroy(last));
  evrt_event_t stale[2] = {first, last};
  ASSERT(cycle_and_check_events(stale, 2, 100));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* The child: print the first event handle it is given, and leave. */
__attribute__((constructor)) static void first_handle_child(void) {
  if (!getenv("EVRT_TEST_FIRST_HANDLE_CHILD"))
    return;
  evrt_event_t e;
  if (evrt_event_create(&e, 0) != EVRT_SUCCESS)
    _exit(1);
  printf("%llx\n", (unsigned long long)(uintptr_t)e);
  fflush(stdout);
  _exit(0);
}

static unsigned long long child_first_handle(void) {
  char exe[512];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k <= 0)
    return 0;
  exe[k] = 0;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "EVRT_TEST_FIRST_HANDLE_CHILD=1 '%s'", exe);
  FILE *p = popen(cmd, "r");
  unsigned long long h = 0;
  if (!p)
    return 0;
  if (fscanf(p, "%llx", &h) != 1)
    h = 0;
  pclose(p);
  return h;
}

TEST(first_event_handles_differ_between_processes) {
  unsigned long long a = child_first_handle(), b = child_first_handle(),
                     c = child_first_handle();
  ASSERT(a != 0 && b != 0 && c != 0);
  /* (equal by chance: about 2^-60) */
  ASSERT(a != b && b != c && a != c);
  /* and a value of another process names nothing here */
  evrt_event_t mine;
  ASSERT_OK(evrt_event_create(&mine, 0));
  ASSERT_ST(evrt_event_query((evrt_event_t)(uintptr_t)a),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_ST(evrt_event_destroy((evrt_event_t)(uintptr_t)b),
            EVRT_ERROR_INVALID_HANDLE);
  ASSERT_OK(evrt_event_query(mine));
  ASSERT_OK(evrt_event_destroy(mine));
}
