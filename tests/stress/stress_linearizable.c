/*
 * stress_linearizable.c - a linearizability-style check of event state.
 *
 * Several threads record, reset, query, synchronize and inspect the same few
 * events at once.  Every observation of an event maps to a key
 *     record_count * 4 + rank,  rank: PENDING 0, COMPLETE 1, UNRECORDED 2
 * and the key of the latest generation can only grow: a generation never goes
 * backwards, a completed one never becomes incomplete, a reset one never
 * comes back without a new record (which raises record_count).  Each thread
 * reads the shared floor (the largest key any finished observation saw)
 * before it observes, checks its observation against it, and raises it after:
 * an observation that started after another finished must not see less.
 *
 * query and synchronize do not report the count, so they are bracketed by
 * get_info: SUCCESS with the count unchanged across the bracket means that
 * generation was complete, so a later PENDING with that count fails the
 * floor; NOT_READY must not contradict a floor already past "pending" for
 * every count it could have seen.
 *
 * EVRT_STRESS_SECONDS (default 3) bounds the run; EVRT_STRESS_SEED seeds it.
 */
#include "test.h"

#define NEV 4
#define NSTREAM 3
#define NTHREAD 4

static evrt_event_t ev[NEV];
static evrt_stream_t st[NSTREAM];
static atomic_uint_least64_t floor_key[NEV];
static atomic_uint_least64_t records_started[NEV];
static atomic_int violations;
static uint64_t deadline, seed;

static uint64_t rng_next(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void violation(int e, const char *what, uint64_t floor, uint64_t key) {
  if (atomic_fetch_add(&violations, 1) < 10)
    fprintf(stderr,
            "  event %d: %s: observed count %llu rank %llu after count %llu "
            "rank %llu (EVRT_STRESS_SEED=0x%llx)\n",
            e, what, (unsigned long long)(key >> 2),
            (unsigned long long)(key & 3), (unsigned long long)(floor >> 2),
            (unsigned long long)(floor & 3), (unsigned long long)seed);
}

static void raise_floor(int e, uint64_t key) {
  uint64_t cur = atomic_load(&floor_key[e]);
  while (cur < key && !atomic_compare_exchange_weak(&floor_key[e], &cur, key))
    ;
}

/* get_info as a key, checked against the floor read before the call. */
static uint64_t observe(int e) {
  uint64_t f = atomic_load(&floor_key[e]);
  evrt_event_info_t info = {.struct_size = sizeof info};
  if (evrt_event_get_info(ev[e], &info) != EVRT_SUCCESS) {
    violation(e, "get_info failed", f, 0);
    return f;
  }
  uint64_t rank = info.state == EVRT_EVENT_STATE_PENDING    ? 0
                  : info.state == EVRT_EVENT_STATE_COMPLETE ? 1
                                                            : 2;
  if (info.record_count == 0 && info.state != EVRT_EVENT_STATE_UNRECORDED)
    violation(e, "no record yet but not UNRECORDED", f, rank);
  uint64_t key = info.record_count * 4 + rank;
  if (key < f)
    violation(e, "get_info went backwards", f, key);
  if (info.record_count > atomic_load(&records_started[e]))
    violation(e, "more generations than record calls", f, key);
  raise_floor(e, key);
  return key;
}

static void spin_fn(void *p) {
  uint64_t ns = (uint64_t)(uintptr_t)p, t0 = now_ns();
  while (now_ns() - t0 < ns)
    ;
}

static void *worker(void *arg) {
  uint64_t rng = seed ^ ((uintptr_t)arg * 0x9e3779b97f4a7c15ull);
  while (now_ns() < deadline && atomic_load(&violations) == 0) {
    int e = (int)(rng_next(&rng) % NEV);
    int s = (int)(rng_next(&rng) % NSTREAM);
    unsigned op = (unsigned)(rng_next(&rng) % 100);
    if (op < 25) {
      /* pending work, then a new generation of e */
      evrt_launch_host_func(st[s], spin_fn,
                            (void *)(uintptr_t)(rng_next(&rng) % 100000));
      atomic_fetch_add(&records_started[e], 1);
      if (evrt_event_record(ev[e], st[s]) != EVRT_SUCCESS)
        violation(e, "record failed", 0, 0);
    } else if (op < 30) {
      evrt_status_t r = evrt_event_reset(ev[e], st[s]);
      if (r != EVRT_SUCCESS && r != EVRT_ERROR_NOT_RECORDED)
        violation(e, "reset failed", 0, 0);
    } else if (op < 60) {
      observe(e);
    } else if (op < 85) {
      uint64_t k1 = observe(e);
      uint64_t f0 = atomic_load(&floor_key[e]);
      evrt_status_t q = evrt_event_query(ev[e]);
      uint64_t k2 = observe(e);
      if (q == EVRT_NOT_READY) {
        /* the query saw a pending generation with count <= count(k2) */
        if ((k2 >> 2) * 4 < f0)
          violation(e, "query NOT_READY for a generation already complete",
                    f0, k2);
      } else if (q == EVRT_SUCCESS) {
        if ((k1 >> 2) == (k2 >> 2) && (k2 & 3) == 0)
          violation(e, "query SUCCESS, then the same generation pending", k1,
                    k2);
        if ((k1 >> 2) == (k2 >> 2))
          raise_floor(e, (k2 >> 2) * 4 + 1);
      } else {
        violation(e, "query failed", 0, q);
      }
    } else {
      uint64_t k1 = observe(e);
      if (evrt_event_synchronize(ev[e]) != EVRT_SUCCESS)
        violation(e, "synchronize failed", 0, 0);
      uint64_t k2 = observe(e);
      if ((k1 >> 2) == (k2 >> 2) && (k2 & 3) == 0)
        violation(e, "synchronize returned, then the same generation pending",
                  k1, k2);
    }
  }
  return NULL;
}

TEST(generations_never_go_backwards) {
  const char *v = getenv("EVRT_STRESS_SEED");
  seed = v ? strtoull(v, NULL, 0) : now_ns();
  v = getenv("EVRT_STRESS_SECONDS");
  double secs = v ? atof(v) : 3.0;
  if (secs <= 0 || secs > 3.0)
    secs = 3.0;
  printf("  EVRT_STRESS_SEED=0x%llx, %.0f s\n", (unsigned long long)seed, secs);
  for (int i = 0; i < NEV; i++)
    ASSERT_OK(evrt_event_create(
        &ev[i], i == 0 ? EVRT_EVENT_TIMING
                : i == 1 ? EVRT_EVENT_BLOCKING_SYNC
                : i == 2 ? EVRT_EVENT_NO_LIMIT
                         : EVRT_EVENT_DEFAULT));
  for (int i = 0; i < NSTREAM; i++)
    ASSERT_OK(evrt_stream_create(&st[i], 0, 0, 0));
  deadline = now_ns() + (uint64_t)(secs * 1e9);
  pthread_t th[NTHREAD];
  for (int i = 0; i < NTHREAD; i++)
    pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
  for (int i = 0; i < NTHREAD; i++)
    pthread_join(th[i], NULL);
  ASSERT_EQ(atomic_load(&violations), 0);
  uint64_t total = 0;
  for (int i = 0; i < NSTREAM; i++)
    ASSERT_OK(evrt_stream_synchronize(st[i]));
  for (int i = 0; i < NEV; i++) {
    /* quiescent: the final state is complete or reset, never pending */
    evrt_event_info_t info = {.struct_size = sizeof info};
    ASSERT_OK(evrt_event_get_info(ev[i], &info));
    ASSERT(info.state != EVRT_EVENT_STATE_PENDING);
    ASSERT_EQ(info.record_count, atomic_load(&records_started[i]));
    ASSERT_OK(evrt_event_query(ev[i]));
    total += info.record_count;
    ASSERT_OK(evrt_event_destroy(ev[i]));
  }
  for (int i = 0; i < NSTREAM; i++)
    ASSERT_OK(evrt_stream_destroy(st[i]));
  printf("  %llu records checked\n", (unsigned long long)total);
  ASSERT(total > 0);
}
