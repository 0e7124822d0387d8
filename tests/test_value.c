/* Stream-ordered values: waits park the stream (no worker held), writes in
 * stream order, host writes, conditions, RESET, host-function re-checks,
 * copies and fills, polling, abort, racing destroy, bad input
 * (docs/design.md, "Values"). */
#include "test.h"

#define MS 1000000ull

static void mark(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

static evrt_stream_t new_stream(void) {
  evrt_stream_t s = NULL;
  if (evrt_stream_create(&s, 0, 0, 0) != EVRT_SUCCESS)
    abort();
  return s;
}

TEST(seventy_waits_hold_no_worker) {
  /* Issue 13 item 5 natively: 70 streams park on values that a 71st
   * stream writes, behind work of its own.  Waits that held workers would
   * leave the writer no thread (or need 70 of them). */
  enum { N = 70 };
  static uint64_t words[N];
  static atomic_int done[N];
  evrt_stream_t w[N], writer = new_stream();
  int threads0 = thread_count();
  for (int i = 0; i < N; i++) {
    words[i] = 0;
    atomic_store(&done[i], 0);
    w[i] = new_stream();
    ASSERT_OK(evrt_stream_wait_value64(w[i], &words[i], 1,
                                       EVRT_VALUE_WAIT_EQ |
                                           EVRT_VALUE_WAIT_EXPLICIT));
    ASSERT_OK(evrt_launch_host_func(w[i], mark, &done[i]));
  }
  ASSERT_OK(evrt_stream_delay(writer, 20 * MS));
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_stream_write_value64(writer, &words[i], 1, 0));
  ASSERT_OK(evrt_device_synchronize_timeout(0, 20000 * MS));
  for (int i = 0; i < N; i++)
    ASSERT_EQ(atomic_load(&done[i]), 1);
  /* parked streams cost no thread */
  ASSERT(thread_count() < threads0 + 8);
  for (int i = 0; i < N; i++)
    ASSERT_OK(evrt_stream_destroy(w[i]));
  ASSERT_OK(evrt_stream_destroy(writer));
}

struct cond_case {
  unsigned flags;
  uint64_t want;
  uint64_t miss; /* a value that does not satisfy it */
  uint64_t hit;  /* one that does */
};

TEST(conditions_geq_eq_and_nor) {
  static const struct cond_case cases[] = {
      {EVRT_VALUE_WAIT_GEQ, 10, 9, 10},
      {EVRT_VALUE_WAIT_GEQ, 10, 9, 11},
      /* GEQ compares (int64_t)(v - want): it wraps like a counter */
      {EVRT_VALUE_WAIT_GEQ, UINT64_MAX - 1, UINT64_MAX - 2, 1},
      {EVRT_VALUE_WAIT_EQ, 7, 8, 7},
      {EVRT_VALUE_WAIT_AND, 0x30, 0x0f, 0x10},
      {EVRT_VALUE_WAIT_NOR, 0x0f, 0 /* ~want, below */, 0x0f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct cond_case *c = &cases[i];
    static uint64_t word;
    atomic_int passed = 0;
    /* NOR: ~(v | want) != 0 fails only when v | want is all ones */
    uint64_t miss = c->flags == EVRT_VALUE_WAIT_NOR ? ~c->want : c->miss;
    word = miss;
    evrt_stream_t s = new_stream();
    ASSERT_OK(evrt_stream_wait_value64(s, &word, c->want, c->flags));
    ASSERT_OK(evrt_launch_host_func(s, mark, &passed));
    ASSERT_ST(evrt_stream_synchronize_timeout(s, 30 * MS), EVRT_ERROR_TIMEOUT);
    ASSERT_OK(evrt_value_write64(&word, miss)); /* still not */
    ASSERT_ST(evrt_stream_synchronize_timeout(s, 30 * MS), EVRT_ERROR_TIMEOUT);
    ASSERT_EQ(atomic_load(&passed), 0);
    ASSERT_OK(evrt_value_write64(&word, c->hit));
    ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
    ASSERT_EQ(atomic_load(&passed), 1);
    ASSERT_EQ(word, c->hit); /* not RESET: the word is kept */
    ASSERT_OK(evrt_stream_destroy(s));
  }
}

TEST(reset_lets_one_wait_pass_per_write) {
  static uint64_t word;
  word = 0;
  atomic_int a = 0, b = 0;
  evrt_stream_t s = new_stream(), t = new_stream();
  unsigned f = EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_RESET;
  ASSERT_OK(evrt_stream_wait_value64(s, &word, 1, f));
  ASSERT_OK(evrt_launch_host_func(s, mark, &a));
  ASSERT_OK(evrt_stream_wait_value64(t, &word, 1, f));
  ASSERT_OK(evrt_launch_host_func(t, mark, &b));
  ASSERT_OK(evrt_value_write64(&word, 1));
  WAIT_UNTIL(atomic_load(&a) + atomic_load(&b) == 1, 10000);
  sleep_ms(30);
  ASSERT_EQ(atomic_load(&a) + atomic_load(&b), 1);
  /* Atomic: t's wait may still be re-checking the word (a CAS that lost
   * to s's counts as a write for ThreadSanitizer). */
  ASSERT_EQ(atomic_load((_Atomic(uint64_t) *)&word), 0); /* consumed */
  ASSERT_OK(evrt_value_write64(&word, 1));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(t, 10000 * MS));
  ASSERT_EQ(atomic_load(&a), 1);
  ASSERT_EQ(atomic_load(&b), 1);
  ASSERT_EQ(word, 0);
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(t));
}

static uint64_t kick_word;
static void store_five(void *p) {
  (void)p;
  /* a kernel's store: no evrt call */
  atomic_store_explicit((_Atomic(uint64_t) *)&kick_word, 5,
                        memory_order_relaxed);
}

TEST(host_functions_wake_waits_unless_explicit) {
  atomic_int a = 0, b = 0;
  kick_word = 0;
  evrt_stream_t s = new_stream(), e = new_stream(), k = new_stream();
  ASSERT_OK(evrt_stream_wait_value64(s, &kick_word, 5, EVRT_VALUE_WAIT_GEQ));
  ASSERT_OK(evrt_launch_host_func(s, mark, &a));
  ASSERT_OK(evrt_stream_wait_value64(e, &kick_word, 5,
                                     EVRT_VALUE_WAIT_GEQ |
                                         EVRT_VALUE_WAIT_EXPLICIT));
  ASSERT_OK(evrt_launch_host_func(e, mark, &b));
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 30 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_OK(evrt_launch_host_func(k, store_five, NULL));
  ASSERT_OK(evrt_stream_synchronize(k));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_EQ(atomic_load(&a), 1);
  /* the explicit one waits for evrt to say so */
  ASSERT_ST(evrt_stream_synchronize_timeout(e, 50 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_EQ(atomic_load(&b), 0);
  ASSERT_OK(evrt_value_notify(&kick_word, sizeof kick_word));
  ASSERT_OK(evrt_stream_synchronize_timeout(e, 10000 * MS));
  ASSERT_EQ(atomic_load(&b), 1);
  ASSERT_OK(evrt_stream_destroy(s));
  ASSERT_OK(evrt_stream_destroy(e));
  ASSERT_OK(evrt_stream_destroy(k));
}

TEST(copies_and_fills_wake_waits_on_their_bytes) {
#if defined(__SANITIZE_THREAD__)
  /* The waiting worker's first (atomic) read of the word and the copy's
   * plain write of it are a mixed-access race by construction (a device
   * kernel polling memory that a DMA writes): ThreadSanitizer would report
   * it, so this one runs in the other builds. */
  return;
#endif
  static uint64_t words[64];
  static uint64_t src[64];
  memset(words, 0, sizeof words);
  for (int i = 0; i < 64; i++)
    src[i] = 3;
  evrt_stream_t a = new_stream(), b = new_stream(), w = new_stream();
  atomic_int pa = 0, pb = 0;
  ASSERT_OK(evrt_stream_wait_value64(a, &words[1], 0x0101010101010101ull,
                                     EVRT_VALUE_WAIT_EQ |
                                         EVRT_VALUE_WAIT_EXPLICIT));
  ASSERT_OK(evrt_launch_host_func(a, mark, &pa));
  ASSERT_OK(evrt_stream_wait_value64(b, &words[40], 3,
                                     EVRT_VALUE_WAIT_EQ |
                                         EVRT_VALUE_WAIT_EXPLICIT));
  ASSERT_OK(evrt_launch_host_func(b, mark, &pb));
  ASSERT_ST(evrt_stream_synchronize_timeout(a, 30 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_ST(evrt_stream_synchronize_timeout(b, 30 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_OK(evrt_memset_async(w, &words[0], 1, 16));
  ASSERT_OK(evrt_memcpy_async(w, &words[8], &src[8], 56 * sizeof src[0]));
  ASSERT_OK(evrt_stream_synchronize_timeout(a, 10000 * MS));
  ASSERT_OK(evrt_stream_synchronize_timeout(b, 10000 * MS));
  ASSERT_EQ(atomic_load(&pa), 1);
  ASSERT_EQ(atomic_load(&pb), 1);
  ASSERT_OK(evrt_stream_destroy(a));
  ASSERT_OK(evrt_stream_destroy(b));
  ASSERT_OK(evrt_stream_destroy(w));
}

TEST(writes_are_in_stream_order) {
  static uint64_t word;
  static uint64_t seen[2];
  word = 1;
  evrt_stream_t s = new_stream();
  ASSERT_OK(evrt_stream_delay(s, 20 * MS));
  ASSERT_OK(evrt_stream_write_value64(s, &word, 2, 0));
  ASSERT_OK(evrt_stream_write_value64(s, &word, 3, 0));
  seen[0] = atomic_load_explicit((_Atomic(uint64_t) *)&word,
                                 memory_order_relaxed);
  ASSERT_OK(evrt_stream_synchronize(s));
  seen[1] = word;
  ASSERT_EQ(seen[0], 1);
  ASSERT_EQ(seen[1], 3);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(poll_sees_stores_evrt_does_not) {
  static uint64_t word;
  word = 0;
  atomic_int p = 0;
  evrt_stream_t s = new_stream();
  ASSERT_OK(evrt_stream_wait_value64(s, &word, 1,
                                     EVRT_VALUE_WAIT_EQ |
                                         EVRT_VALUE_WAIT_EXPLICIT |
                                         EVRT_VALUE_WAIT_POLL));
  ASSERT_OK(evrt_launch_host_func(s, mark, &p));
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 30 * MS), EVRT_ERROR_TIMEOUT);
  /* as another process would: a store and nothing else */
  atomic_store((_Atomic(uint64_t) *)&word, 1);
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_EQ(atomic_load(&p), 1);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(a_wait_with_a_timeout_ends_and_is_counted) {
  static uint64_t word;
  word = 0;
  atomic_int p = 0;
  evrt_stream_t s = new_stream();
  uint64_t fails = 0;
  /* satisfied in time: no failure */
  ASSERT_OK(evrt_stream_wait_value64_timeout(s, &word, 1, EVRT_VALUE_WAIT_EQ,
                                             60000 * MS));
  ASSERT_OK(evrt_value_write64(&word, 1));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_OK(evrt_stream_wait_failures(s, &fails));
  ASSERT_EQ(fails, 0);
  /* never satisfied: ends after its timeout, the stream goes on */
  ASSERT_OK(evrt_stream_wait_value64_timeout(s, &word, 2, EVRT_VALUE_WAIT_EQ,
                                             30 * MS));
  ASSERT_OK(evrt_launch_host_func(s, mark, &p));
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_EQ(atomic_load(&p), 1);
  ASSERT_OK(evrt_stream_wait_failures(s, &fails));
  ASSERT_EQ(fails, 1);
  /* with polling too, and a write that comes first */
  ASSERT_OK(evrt_stream_wait_value64_timeout(
      s, &word, 3, EVRT_VALUE_WAIT_EQ | EVRT_VALUE_WAIT_POLL, 60000 * MS));
  atomic_store((_Atomic(uint64_t) *)&word, 3);
  ASSERT_OK(evrt_stream_synchronize_timeout(s, 10000 * MS));
  ASSERT_OK(evrt_stream_wait_failures(s, &fails));
  ASSERT_EQ(fails, 1);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(abort_and_stop_skip_value_items) {
  static uint64_t word, out;
  word = 0;
  out = 0;
  evrt_stream_t s = new_stream();
  ASSERT_OK(evrt_stream_wait_value64(s, &word, 1,
                                     EVRT_VALUE_WAIT_EQ |
                                         EVRT_VALUE_WAIT_POLL));
  ASSERT_OK(evrt_stream_write_value64(s, &out, 7, 0));
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 30 * MS), EVRT_ERROR_TIMEOUT);
  ASSERT_OK(evrt_stream_abort(s));
  ASSERT_ST(evrt_stream_synchronize_timeout(s, 10000 * MS),
            EVRT_ERROR_ABORTED);
  ASSERT_EQ(out, 0);
  ASSERT_OK(evrt_stream_clear_error(s, NULL));
  /* the cancelled wait left its bucket: a write wakes nothing stale */
  ASSERT_OK(evrt_value_write64(&word, 1));
  ASSERT_OK(evrt_stream_write_value64(s, &out, 8, 0));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_EQ(out, 8);
  ASSERT_OK(evrt_stream_destroy(s));
}

TEST(destroy_with_a_parked_wait_drains_after_the_write) {
  for (int round = 0; round < 50; round++) {
    static uint64_t word;
    word = 0;
    atomic_int p = 0;
    evrt_stream_t s = new_stream();
    ASSERT_OK(evrt_stream_wait_value64(s, &word, 1, EVRT_VALUE_WAIT_EQ));
    ASSERT_OK(evrt_launch_host_func(s, mark, &p));
    if (round & 1)
      sleep_ms(1); /* parked or not yet: both */
    ASSERT_OK(evrt_stream_destroy(s));
    ASSERT_ST(evrt_stream_wait_value64(s, &word, 1, 0),
              EVRT_ERROR_INVALID_HANDLE);
    ASSERT_OK(evrt_value_write64(&word, 1));
    WAIT_UNTIL(atomic_load(&p) == 1, 10000);
    ASSERT_EQ(atomic_load(&p), 1);
  }
}

/* Writers and waiters on a few words from several threads: every wait
 * passes (each write only raises its word, so GEQ waits cannot miss). */
static uint64_t race_words[4];
static void *race_writer(void *arg) {
  int k = (int)(intptr_t)arg;
  for (uint64_t v = 1; v <= 400; v++)
    if (evrt_value_write64(&race_words[k & 3], v) != EVRT_SUCCESS)
      abort();
  return NULL;
}

TEST(concurrent_writers_and_waiters) {
  memset(race_words, 0, sizeof race_words);
  enum { NS = 16 };
  evrt_stream_t s[NS];
  static atomic_int passed[NS];
  for (int i = 0; i < NS; i++) {
    s[i] = new_stream();
    atomic_store(&passed[i], 0);
  }
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, race_writer, (void *)(intptr_t)i);
  for (int r = 0; r < 20; r++)
    for (int i = 0; i < NS; i++) {
      ASSERT_OK(evrt_stream_wait_value64(s[i], &race_words[i & 3],
                                         (uint64_t)(r * 20 + 1),
                                         EVRT_VALUE_WAIT_GEQ));
      ASSERT_OK(evrt_launch_host_func(s[i], mark, &passed[i]));
    }
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < NS; i++) {
    ASSERT_OK(evrt_stream_synchronize_timeout(s[i], 20000 * MS));
    ASSERT_EQ(atomic_load(&passed[i]), 20);
    ASSERT_OK(evrt_stream_destroy(s[i]));
  }
}

TEST(bad_input_changes_nothing) {
  static uint64_t word;
  evrt_stream_t s = new_stream();
  char *p = (char *)&word;
  ASSERT_ST(evrt_stream_wait_value64(s, NULL, 1, 0), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_wait_value64(s, (uint64_t *)(p + 4), 1, 0),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_wait_value64(s, &word, 1, 0x80),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_wait_value64((evrt_stream_t)(uintptr_t)0x5a5a5a5a5a5a,
                                     &word, 1, 0),
            EVRT_ERROR_INVALID_HANDLE); /* (NULL: the default stream) */
  ASSERT_ST(evrt_stream_write_value64(s, &word, 1, 1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_stream_write_value64(s, (uint64_t *)(p + 1), 1, 0),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_value_write64(NULL, 1), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_value_write64((uint64_t *)(p + 2), 1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_value_notify(NULL, 8), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_value_notify((void *)(uintptr_t)-8, 64),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_value_notify(NULL, 0));
  /* nothing was enqueued */
  uint64_t sid = 0, task = 0, id;
  ASSERT_OK(evrt_stream_get_id(s, &id));
  ASSERT_OK(evrt_thread_last_task(&sid, &task));
  ASSERT(sid != id);
  ASSERT_OK(evrt_stream_query(s));
  ASSERT_OK(evrt_stream_destroy(s));
}
