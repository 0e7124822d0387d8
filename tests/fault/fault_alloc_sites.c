/*
 * fault_alloc_sites.c - allocation failure at every allocation site of the
 * create / record / wait / enqueue paths, in turn.
 *
 * Uses the white-box hook evrt__test_fail_alloc_at (src/alloc.c): the n-th
 * following runtime allocation fails, and each call returns how many
 * allocations were made since the previous one.  For each operation:
 *   1. on a fresh fixture, count the allocations the call makes (the sites);
 *   2. on a second fresh fixture, fail each site in turn: the call must
 *      return EVRT_ERROR_OUT_OF_MEMORY (also as evrt_last_error) and nothing
 *      may change: event state, record count, device, wait status, the
 *      device's free event resources, the streams' query results;
 *   3. the same call then succeeds, and after the streams are released all
 *      the work that was accepted runs, the work that was refused never does,
 *      and later work still runs.
 * The streams are held busy by a gate host function while calls are made,
 * so that no worker allocates concurrently (the count is exact) and the
 * items' recycle lists stay empty (every enqueue reaches malloc).
 * Under ASan the run also shows that nothing leaks.
 */
/* evrt_static defines _GNU_SOURCE on the command line; test.h defines it
 * again without a value, which -Werror rejects as a redefinition. */

#include "test.h"
#include "internal.h"

struct fx {
  evrt_stream_t s1, s2;
  evrt_event_t e;
  atomic_int gate, entered;
  atomic_int ran, late;
  unsigned char dst[64], src[64];
};

static void gate_fn(void *p) {
  struct fx *f = p;
  atomic_fetch_add(&f->entered, 1);
  while (!atomic_load(&f->gate))
    usleep(100);
}
static void count_fn(void *p) { atomic_fetch_add(&((struct fx *)p)->ran, 1); }
static void late_fn(void *p) { atomic_fetch_add(&((struct fx *)p)->late, 1); }

/* Two gated streams on device 0 and an event (recorded on s1 if asked). */
static int fx_setup(struct fx *f, unsigned evflags, bool record) {
  memset(f, 0, sizeof *f);
  for (int i = 0; i < 64; i++)
    f->src[i] = (unsigned char)(i + 1);
  if (evrt_stream_create(&f->s1, 0, 0, 0) || evrt_stream_create(&f->s2, 0, 0, 0) ||
      evrt_event_create(&f->e, evflags) ||
      evrt_launch_host_func(f->s1, gate_fn, f) ||
      evrt_launch_host_func(f->s2, gate_fn, f))
    return -1;
  if (record && evrt_event_record(f->e, f->s1))
    return -1;
  WAIT_UNTIL(atomic_load(&f->entered) == 2, 5000);
  return atomic_load(&f->entered) == 2 ? 0 : -1;
}

/* Open the gates, add late work, wait for everything; 0 if the late work
 * ran after the rest. */
static int fx_finish(struct fx *f) {
  atomic_store(&f->gate, 1);
  if (evrt_launch_host_func(f->s1, late_fn, f) ||
      evrt_launch_host_func(f->s2, late_fn, f) ||
      evrt_stream_synchronize(f->s1) || evrt_stream_synchronize(f->s2))
    return -1;
  return atomic_load(&f->late) == 2 ? 0 : -1;
}

static void fx_teardown(struct fx *f) {
  evrt_event_destroy(f->e);
  evrt_stream_destroy(f->s1);
  evrt_stream_destroy(f->s2);
}

struct snap {
  evrt_event_info_t info;
  evrt_status_t wait_status, q1, q2;
  uint32_t avail;
};

static void take(struct fx *f, struct snap *s) {
  memset(s, 0, sizeof *s);
  s->info.struct_size = sizeof s->info;
  evrt_event_get_info(f->e, &s->info);
  s->wait_status = evrt_event_wait_status(f->e);
  s->q1 = evrt_stream_query(f->s1);
  s->q2 = evrt_stream_query(f->s2);
  evrt_device_event_available(0, &s->avail);
}

typedef evrt_status_t (*op_fn)(struct fx *f);

static evrt_status_t op_host(struct fx *f) {
  return evrt_launch_host_func(f->s2, count_fn, f);
}
static evrt_status_t op_host_labeled(struct fx *f) {
  return evrt_launch_host_func_labeled(f->s2, count_fn, f, "fault");
}
static evrt_status_t op_memcpy(struct fx *f) {
  return evrt_memcpy_async(f->s2, f->dst, f->src, sizeof f->dst);
}
static evrt_status_t op_memset(struct fx *f) {
  return evrt_memset_async(f->s2, f->dst, 0x5a, sizeof f->dst);
}
static evrt_status_t op_delay(struct fx *f) {
  return evrt_stream_delay(f->s2, 1000000);
}
static evrt_status_t op_record(struct fx *f) {
  return evrt_event_record(f->e, f->s2);
}
static evrt_status_t op_wait(struct fx *f) {
  return evrt_stream_wait_event(f->s2, f->e);
}
static evrt_status_t op_reset(struct fx *f) {
  return evrt_event_reset(f->e, f->s2);
}

struct opdesc {
  const char *name;
  op_fn fn;
  unsigned evflags;
  bool record_first; /* event recorded on s1 (pending) before the call */
};

static const struct opdesc ops[] = {
    {"launch_host_func", op_host, 0, false},
    {"launch_host_func_labeled", op_host_labeled, 0, false},
    {"memcpy_async", op_memcpy, 0, false},
    {"memset_async", op_memset, 0, false},
    {"stream_delay", op_delay, 0, false},
    /* a timing event on a busy stream needs an item; first record ... */
    {"record timing (first)", op_record, EVRT_EVENT_TIMING, false},
    /* ... and a re-record on another stream */
    {"record timing (again)", op_record, EVRT_EVENT_TIMING, true},
    {"stream_wait_event", op_wait, 0, true},
    {"event_reset", op_reset, 0, true},
};

static bool snaps_equal(const struct snap *a, const struct snap *b) {
  return a->info.state == b->info.state &&
         a->info.record_count == b->info.record_count &&
         a->info.device == b->info.device &&
         a->wait_status == b->wait_status && a->q1 == b->q1 &&
         a->q2 == b->q2 && a->avail == b->avail;
}

static void check_op(const struct opdesc *op) {
  struct fx a, b;
  /* 1. count the sites */
  ASSERT_EQ(fx_setup(&a, op->evflags, op->record_first), 0);
  evrt__test_fail_alloc_at(0);
  ASSERT_OK(op->fn(&a));
  long sites = evrt__test_fail_alloc_at(0);
  ASSERT_EQ(fx_finish(&a), 0);
  fx_teardown(&a);
  printf("  %-26s %ld allocation site(s)\n", op->name, sites);
  ASSERT(sites >= 1); /* each of these paths allocates a work item */

  /* 2. fail each in turn */
  ASSERT_EQ(fx_setup(&b, op->evflags, op->record_first), 0);
  for (long i = 1; i <= sites; i++) {
    struct snap before, after;
    take(&b, &before);
    evrt__test_fail_alloc_at(i);
    evrt_status_t st = op->fn(&b);
    long made = evrt__test_fail_alloc_at(0);
    ASSERT_ST(st, EVRT_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(evrt_last_error(), EVRT_ERROR_OUT_OF_MEMORY);
    ASSERT(made >= i);
    take(&b, &after);
    if (!snaps_equal(&before, &after))
      FAIL_("%s: state changed by a failed call: state %d->%d count %llu->%llu "
            "device %d->%d wait_status %d->%d q2 %d->%d available %u->%u",
            op->name, before.info.state, after.info.state,
            (unsigned long long)before.info.record_count,
            (unsigned long long)after.info.record_count, before.info.device,
            after.info.device, before.wait_status, after.wait_status,
            before.q2, after.q2, before.avail, after.avail);
  }
  /* 3. the runtime is still usable: the same call succeeds */
  ASSERT_OK(op->fn(&b));
  ASSERT_EQ(fx_finish(&b), 0);
  /* accepted work ran once, refused work never */
  if (op->fn == op_host || op->fn == op_host_labeled)
    ASSERT_EQ(atomic_load(&b.ran), 1);
  if (op->fn == op_memcpy)
    ASSERT(memcmp(b.dst, b.src, sizeof b.dst) == 0);
  if (op->fn == op_memset)
    ASSERT_EQ(b.dst[63], 0x5a);
  evrt_event_info_t info = {.struct_size = sizeof info};
  ASSERT_OK(evrt_event_get_info(b.e, &info));
  if (op->fn == op_record) {
    ASSERT_EQ(info.record_count, op->record_first ? 2 : 1);
    ASSERT_EQ(info.state, EVRT_EVENT_STATE_COMPLETE);
    uint64_t ts;
    ASSERT_OK(evrt_event_timestamp(b.e, &ts));
  }
  if (op->fn == op_reset)
    ASSERT_EQ(info.state, EVRT_EVENT_STATE_UNRECORDED);
  if (op->fn == op_wait)
    ASSERT_OK(evrt_event_wait_status(b.e));
  fx_teardown(&b);
}

TEST(enqueue_record_wait_sites) {
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    check_op(&ops[i]);
    if (test_failed_now_)
      return;
  }
}

/* Object creation allocates only when the handle table grows a chunk (and,
 * for streams, when the run queue's ring grows to make room for one more
 * stream): create enough objects to cross a chunk boundary with every call
 * armed. */
static void creation_sites(bool streams) {
  enum { N = EVRT__CHUNK_SIZE + 8 };
  static void *h[N];
  int n = 0, hits = 0;
  for (int i = 0; i < N; i++) {
    void *sentinel = (void *)(uintptr_t)0x5e5e;
    void *x = sentinel;
    evrt__test_fail_alloc_at(1);
    evrt_status_t st = streams ? evrt_stream_create((evrt_stream_t *)&x, 0, 0, 0)
                               : evrt_event_create((evrt_event_t *)&x, 0);
    long made = evrt__test_fail_alloc_at(0);
    if (st == EVRT_ERROR_OUT_OF_MEMORY) {
      hits++;
      ASSERT_EQ(made, 1);
      ASSERT(x == sentinel); /* no handle written */
      ASSERT_EQ(evrt_last_error(), EVRT_ERROR_OUT_OF_MEMORY);
      /* the same call succeeds once memory is back */
      st = streams ? evrt_stream_create((evrt_stream_t *)&x, 0, 0, 0)
                   : evrt_event_create((evrt_event_t *)&x, 0);
    } else {
      ASSERT_EQ(made, 0); /* no allocation: nothing could fail */
    }
    ASSERT_OK(st);
    h[n++] = x;
  }
  printf("  %s: %d creation(s) hit an allocation site\n",
         streams ? "stream_create" : "event_create", hits);
  ASSERT(hits >= 1);
  /* every handle works */
  for (int i = 0; i < n; i++) {
    if (streams) {
      ASSERT_OK(evrt_stream_query((evrt_stream_t)h[i]));
      ASSERT_OK(evrt_stream_destroy((evrt_stream_t)h[i]));
    } else {
      ASSERT_OK(evrt_event_query((evrt_event_t)h[i]));
      ASSERT_OK(evrt_event_destroy((evrt_event_t)h[i]));
    }
  }
}

TEST(event_create_sites) { creation_sites(false); }
TEST(stream_create_sites) { creation_sites(true); }

/* A delay whose timer entry cannot be allocated on the worker still waits
 * its time and completes (the worker sleeps instead). */
TEST(delay_survives_timer_oom) {
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  uint64_t t0 = now_ns();
  evrt__test_fail_alloc_at(0);
  ASSERT_OK(evrt_stream_delay(s, 20000000));
  /* the next allocation anywhere (the worker's timer heap, if it has to grow)
   * fails */
  evrt__test_fail_alloc_at(1);
  ASSERT_OK(evrt_stream_synchronize(s));
  evrt__test_fail_alloc_at(0);
  ASSERT(now_ns() - t0 >= 20000000);
  ASSERT_OK(evrt_stream_destroy(s));
}
