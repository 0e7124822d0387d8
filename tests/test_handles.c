/* Handles: NULL, destroyed, double-destroyed, forged and wrong-type handles
 * get EVRT_ERROR_INVALID_HANDLE from every function, and change nothing. */
#include "test.h"

#include <string.h>

#define BAD EVRT_ERROR_INVALID_HANDLE

static void noop(void *p) { (void)p; }

/* Every function that takes a stream. */
static int stream_calls_reject(evrt_stream_t s) {
  int dev, prio;
  uint64_t id, n;
  char buf[8];
  evrt_event_t e;
  if (evrt_event_create(&e, 0))
    return 0;
  int ok = evrt_stream_destroy(s) == BAD && evrt_stream_query(s) == BAD &&
           evrt_stream_synchronize(s) == BAD &&
           evrt_stream_synchronize_timeout(s, 1000) == BAD &&
           evrt_stream_get_device(s, &dev) == BAD &&
           evrt_stream_get_priority(s, &prio) == BAD &&
           evrt_stream_get_id(s, &id) == BAD &&
           evrt_stream_set_name(s, "x") == BAD &&
           evrt_launch_host_func(s, noop, NULL) == BAD &&
           evrt_launch_host_func_labeled(s, noop, NULL, "l") == BAD &&
           evrt_memcpy_async(s, buf, buf + 4, 4) == BAD &&
           evrt_memset_async(s, buf, 0, 4) == BAD &&
           evrt_stream_delay(s, 10) == BAD && evrt_event_record(e, s) == BAD &&
           evrt_stream_wait_event(s, e) == BAD &&
           evrt_stream_wait_event_timeout(s, e, 10) == BAD &&
           evrt_stream_wait_failures(s, &n) == BAD &&
           evrt_event_reset(e, s) == BAD;
  evrt_event_info_t info = {.struct_size = sizeof info};
  /* and the event stayed untouched */
  ok = ok && evrt_event_get_info(e, &info) == EVRT_SUCCESS &&
       info.record_count == 0 && info.device == -1;
  evrt_event_destroy(e);
  return ok;
}

/* Every function that takes an event. */
static int event_calls_reject(evrt_event_t e) {
  evrt_stream_t s;
  evrt_event_t good;
  float ms;
  uint64_t ns, id;
  int dev;
  evrt_event_info_t info = {.struct_size = sizeof info};
  evrt_ipc_event_handle_t h;
  if (evrt_stream_default(0, &s) || evrt_event_create(&good, EVRT_EVENT_TIMING))
    return 0;
  int ok = evrt_event_destroy(e) == BAD && evrt_event_record(e, s) == BAD &&
           evrt_event_query(e) == BAD && evrt_event_synchronize(e) == BAD &&
           evrt_event_synchronize_timeout(e, 10) == BAD &&
           evrt_stream_wait_event(s, e) == BAD &&
           evrt_stream_wait_event_timeout(s, e, 10) == BAD &&
           evrt_event_elapsed_time(&ms, e, good) == BAD &&
           evrt_event_elapsed_time(&ms, good, e) == BAD &&
           evrt_event_timestamp(e, &ns) == BAD &&
           evrt_event_reset(e, s) == BAD && evrt_event_wait_status(e) == BAD &&
           evrt_event_get_info(e, &info) == BAD &&
           evrt_event_get_device(e, &dev) == BAD &&
           evrt_event_get_id(e, &id) == BAD &&
           evrt_event_ipc_handle(e, &h) == BAD;
  evrt_event_destroy(good);
  return ok;
}

TEST(null_handles) {
  /* A NULL stream is the current device's default stream (next test). */
  ASSERT(event_calls_reject(NULL));
}

static void set_flag(void *p) { *(volatile int *)p = 1; }

/* NULL as a stream: the calling thread's current device's default stream,
 * in every function that takes a stream (CUDA's 0, ACL's NULL). */
TEST(null_stream_is_the_current_devices_default) {
  int ndev = 0;
  ASSERT_OK(evrt_device_count(&ndev));
  for (int d = 0; d < ndev && d < 2; d++) {
    evrt_stream_t def;
    ASSERT_OK(evrt_set_device(d));
    ASSERT_OK(evrt_stream_default(d, &def));
    int dev = -1, prio = 7;
    uint64_t id = 0, def_id = 1, n = 1;
    ASSERT_OK(evrt_stream_get_device(NULL, &dev));
    ASSERT_EQ(dev, d);
    ASSERT_OK(evrt_stream_get_priority(NULL, &prio));
    ASSERT_EQ(prio, 0);
    ASSERT_OK(evrt_stream_get_id(NULL, &id));
    ASSERT_OK(evrt_stream_get_id(def, &def_id));
    ASSERT_EQ(id, def_id);
    ASSERT_OK(evrt_stream_wait_failures(NULL, &n));
    ASSERT_OK(evrt_stream_set_name(NULL, "default"));
    /* work enqueued through NULL runs on the default stream, in order */
    volatile int ran = 0;
    char buf[8] = "abcdefg";
    evrt_event_t e;
    ASSERT_OK(evrt_event_create(&e, 0));
    ASSERT_OK(evrt_stream_delay(NULL, 20 * 1000 * 1000));
    ASSERT_OK(evrt_launch_host_func(NULL, set_flag, (void *)&ran));
    ASSERT_OK(evrt_launch_host_func_labeled(NULL, set_flag, (void *)&ran, "l"));
    ASSERT_OK(evrt_memset_async(NULL, buf, 'x', 3));
    ASSERT_OK(evrt_memcpy_async(NULL, buf + 4, buf, 2));
    ASSERT_OK(evrt_event_record(e, NULL));
    ASSERT_EQ(evrt_stream_query(def), EVRT_NOT_READY);
    ASSERT_EQ(evrt_stream_query(NULL), EVRT_NOT_READY);
    ASSERT_EQ(evrt_event_query(e), EVRT_NOT_READY);
    ASSERT_OK(evrt_stream_synchronize(NULL));
    ASSERT_EQ(ran, 1);
    ASSERT_OK(evrt_event_query(e));
    ASSERT(memcmp(buf, "xxxdxxg", 7) == 0);
    ASSERT_OK(evrt_stream_synchronize_timeout(NULL, 1000));
    ASSERT_OK(evrt_stream_wait_event(NULL, e));
    ASSERT_OK(evrt_stream_wait_event_timeout(NULL, e, 1000000));
    ASSERT_OK(evrt_event_reset(e, NULL));
    ASSERT_OK(evrt_stream_synchronize(def));
    evrt_event_info_t info = {.struct_size = sizeof info};
    ASSERT_OK(evrt_event_get_info(e, &info));
    ASSERT_EQ(info.device, d);
    ASSERT_OK(evrt_event_destroy(e));
    /* and it cannot be destroyed */
    ASSERT_ST(evrt_stream_destroy(NULL), EVRT_ERROR_NOT_PERMITTED);
  }
  ASSERT_OK(evrt_set_device(0));
}

TEST(destroyed_and_double_destroyed) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT(stream_calls_reject(s)); /* includes a second destroy */
  ASSERT(event_calls_reject(e));
}

TEST(stale_handle_after_slot_reuse) {
  evrt_event_t e1, e2;
  ASSERT_OK(evrt_event_create(&e1, 0));
  ASSERT_OK(evrt_event_destroy(e1));
  ASSERT_OK(evrt_event_create(&e2, 0)); /* likely the same slot */
  ASSERT(e1 != e2);
  ASSERT_ST(evrt_event_query(e1), BAD);
  ASSERT_ST(evrt_event_destroy(e1), BAD);
  ASSERT_OK(evrt_event_query(e2)); /* the new one is untouched */
  ASSERT_OK(evrt_event_destroy(e2));
}

TEST(forged_and_wrong_type) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_OK(evrt_event_create(&e, 0));
  /* an event handle used as a stream and vice versa */
  ASSERT(stream_calls_reject((evrt_stream_t)(void *)e));
  ASSERT(event_calls_reject((evrt_event_t)(void *)s));
  /* arbitrary bit patterns, including a pointer to real memory */
  static int some_int;
  uintptr_t forged[] = {1, 2, 3, 0xdeadbeef, UINTPTR_MAX, (uintptr_t)&some_int,
                        ((uintptr_t)e) ^ (1ull << 33), /* other generation */
                        ((uintptr_t)e) + 4,            /* neighbour slot */
                        ((uintptr_t)e) & 0xffffffffu,  /* generation 0 */
                        (uintptr_t)0x7ffffffc | 2};   /* huge index */
  for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
    ASSERT(event_calls_reject((evrt_event_t)forged[i]));
    ASSERT(stream_calls_reject((evrt_stream_t)forged[i]));
  }
  ASSERT_OK(evrt_event_query(e));
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_event_destroy(e));
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(bad_values_change_nothing) {
  evrt_stream_t s;
  evrt_event_t e;
  ASSERT_ST(evrt_stream_create(NULL, 0, 0, 0), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_create(&s, 0, 0, 0x80), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_create(&s, 7, 0, 0), EVRT_ERROR_INVALID_DEVICE);
  ASSERT_ST(evrt_event_create(&e, 0x1000), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_event_create(&e, EVRT_EVENT_INTERPROCESS | EVRT_EVENT_TIMING),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  ASSERT_ST(evrt_launch_host_func(s, NULL, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memcpy_async(s, NULL, &s, 8), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_memset_async(s, NULL, 0, 8), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_get_device(s, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_stream_query(s)); /* nothing was enqueued */
  evrt_stream_t def;
  ASSERT_OK(evrt_stream_default(0, &def));
  ASSERT_ST(evrt_stream_destroy(def), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_OK(evrt_stream_query(def));
  ASSERT_OK(evrt_stream_destroy(s));
}

/* Racing calls on one event handle from two threads, round after round, in
 * every state destroy has a different path for (never recorded, recorded on
 * an idle or a busy stream, with a legacy waiter, interprocess).  Of two
 * racing destroys exactly one succeeds; a record racing a destroy either
 * succeeds or gets BAD, and no event resource is lost either way. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { RACE_ROUNDS = 3000, RACE_KINDS = 6 };
static struct {
  atomic_int round; /* released by main, one per round */
  atomic_int done;  /* threads finished with the round */
  evrt_event_t e;
  evrt_stream_t s;
  int kind;
  evrt_status_t st[2];
} race;

static void *race_thread(void *arg) {
  int me = (int)(intptr_t)arg;
  for (int r = 1; r <= RACE_ROUNDS; r++) {
    while (atomic_load(&race.round) < r)
      sched_yield();
    /* even kinds: destroy vs destroy; odd: destroy vs record (or wait) */
    if (me == 0 || race.kind % 2 == 0)
      race.st[me] = evrt_event_destroy(race.e);
    else if (race.kind == 3)
      race.st[me] = evrt_stream_wait_event(race.s, race.e);
    else
      race.st[me] = evrt_event_record(race.e, race.s);
    atomic_fetch_add(&race.done, 1);
  }
  return NULL;
}

TEST(racing_destroys_exactly_once) {
  evrt_stream_t busy, idle;
  uint32_t avail0, avail1;
  ASSERT_OK(evrt_device_event_available(0, &avail0));
  ASSERT_OK(evrt_stream_create(&busy, 0, 0, 0));
  ASSERT_OK(evrt_stream_create(&idle, 0, 0, 0));
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    ASSERT(pthread_create(&th[i], NULL, race_thread, (void *)(intptr_t)i) == 0);
  int nfail = 0;
  for (int r = 1; r <= RACE_ROUNDS; r++) {
    int kind = r % RACE_KINDS;
    unsigned flags = kind == 4   ? EVRT_EVENT_WAIT_NEXT_RECORD
                     : kind == 5 ? EVRT_EVENT_INTERPROCESS
                     : kind == 1 ? EVRT_EVENT_TIMING
                                 : 0;
    evrt_event_t e;
    ASSERT_OK(evrt_event_create(&e, flags));
    if (kind == 2) {
      ASSERT_OK(evrt_stream_delay(busy, 1000));
      ASSERT_OK(evrt_event_record(e, busy));
    } else if (kind == 3 || kind == 5) {
      ASSERT_OK(evrt_event_record(e, idle));
    } else if (kind == 4) {
      /* a legacy waiter parked on the event until it is destroyed */
      ASSERT_OK(evrt_stream_wait_event(busy, e));
    }
    race.e = e;
    race.s = kind == 1 ? busy : idle;
    race.kind = kind;
    atomic_store(&race.done, 0);
    atomic_store(&race.round, r);
    while (atomic_load(&race.done) < 2)
      sched_yield();
    if (kind % 2 == 0) {
      int ok = (race.st[0] == EVRT_SUCCESS) + (race.st[1] == EVRT_SUCCESS);
      int bad = (race.st[0] == BAD) + (race.st[1] == BAD);
      if (ok != 1 || bad != 1)
        nfail++;
    } else {
      /* the destroy always succeeds; the other call either way */
      if (race.st[0] != EVRT_SUCCESS ||
          (race.st[1] != EVRT_SUCCESS && race.st[1] != BAD))
        nfail++;
    }
    ASSERT_ST(evrt_event_query(e), BAD);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  ASSERT(nfail == 0);
  ASSERT_OK(evrt_stream_synchronize(busy));
  ASSERT_OK(evrt_stream_synchronize(idle));
  ASSERT_OK(evrt_device_event_available(0, &avail1));
  ASSERT(avail1 == avail0);
  /* the recycled slots are clean: a fresh event is unrecorded */
  for (int i = 0; i < 64; i++) {
    evrt_event_t e;
    evrt_event_info_t info = {.struct_size = sizeof info};
    ASSERT_OK(evrt_event_create(&e, 0));
    ASSERT_OK(evrt_event_get_info(e, &info));
    ASSERT(info.state == EVRT_EVENT_STATE_UNRECORDED && info.device == -1 &&
           info.record_count == 0);
    ASSERT_OK(evrt_event_destroy(e));
  }
  ASSERT_OK(evrt_stream_destroy(busy));
  ASSERT_OK(evrt_stream_destroy(idle));
}
