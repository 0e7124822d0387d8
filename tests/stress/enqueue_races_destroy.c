/*
 * enqueue_races_destroy.c - every call that names a stream or an event,
 * racing the destroy of that object and the reuse of its slot by a new
 * create (issue 13, item 1).  The invariant: a racing call either fails
 * with EVRT_ERROR_INVALID_HANDLE and has no effect, or succeeds and its
 * work runs (exactly once, on the object it named).
 *
 * Before the fix a producer validated the handle, the destroy freed the
 * drained stream, and the producer then linked its item onto the freed
 * stream (heap-use-after-free under ASan, the item never ran, enq_seq ran
 * ahead of done_seq so evrt_device_synchronize never returned), or onto
 * the next incarnation of the slot.
 *
 * Every launched host function carries its own record: after the race, a
 * call that returned SUCCESS must have run once, a refused one never.  A
 * lost item shows as a device synchronize that times out (60 s, generous
 * for a loaded sanitizer run) rather than a hang.
 */
#include "test.h"

#define CALLS 100000 /* per producer */
#define PRODUCERS 2

struct call {
  atomic_int runs;
  atomic_int refused; /* the host function's launch returned INVALID_HANDLE */
  /* what the memcpy and memset of this round write, and whether they were
   * accepted: after the race, written exactly when accepted */
  unsigned char cpy[8], set[8];
  bool cpy_ok, set_ok;
};
static const unsigned char pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* Workers give a drained stream up at once (no spinning on it), so the
 * destroys often find it idle and free it there and then: the window
 * where a producer that looked the handle up links onto a freed stream. */
__attribute__((constructor)) static void no_spin(void) {
  setenv("EVRT_SPIN_NS", "0", 1);
}
static struct call *all_calls[PRODUCERS];

static _Atomic(evrt_stream_t) cur_stream;
static atomic_long bad_status;
static long nlaunched[PRODUCERS];
static atomic_int nproducers_done;

static void run_call(void *p) {
  struct call *c = p;
  atomic_fetch_add(&c->runs, 1);
}

/* One producer: launches on whatever handle is current, possibly one being
 * destroyed right now; each call gets its own record. */
static void *producer(void *arg) {
  int me = (int)(intptr_t)arg;
  struct call *calls = all_calls[me];
  long n = 0;
  while (n < CALLS) {
    evrt_stream_t s = atomic_load(&cur_stream);
    struct call *c = &calls[n++];
    evrt_status_t st = evrt_launch_host_func(s, run_call, c);
    if (st == EVRT_ERROR_INVALID_HANDLE)
      atomic_store(&c->refused, 1);
    else if (st != EVRT_SUCCESS)
      atomic_fetch_add(&bad_status, 1);
    /* The other enqueue paths, racing the same destroys: their items must
     * run or be refused cleanly (ASan sees a use of a freed stream, the
     * device synchronize below a lost item). */
    st = evrt_memcpy_async(s, c->cpy, pattern, sizeof c->cpy);
    c->cpy_ok = st == EVRT_SUCCESS;
    if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
      atomic_fetch_add(&bad_status, 1);
    st = evrt_memset_async(s, c->set, 0x5a, sizeof c->set);
    c->set_ok = st == EVRT_SUCCESS;
    if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
      atomic_fetch_add(&bad_status, 1);
    st = evrt_stream_delay(s, n % 3 == 0 ? 1000 : 0);
    if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
      atomic_fetch_add(&bad_status, 1);
    /* A stop races the same destroys too; it keeps the queue, and these
     * host functions never poll their cancellation: each still runs. */
    if (n % 4 == 0) {
      st = evrt_stream_stop(s);
      if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
        atomic_fetch_add(&bad_status, 1);
    }
  }
  nlaunched[me] = n;
  atomic_fetch_add(&nproducers_done, 1);
  return NULL;
}

TEST(host_func_racing_stream_destroy_runs_iff_it_succeeded) {
  struct call **calls = all_calls;
  pthread_t th[PRODUCERS];
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  atomic_store(&cur_stream, s);
  for (int i = 0; i < PRODUCERS; i++) {
    calls[i] = calloc(CALLS, sizeof *calls[i]);
    ASSERT(calls[i]);
    pthread_create(&th[i], NULL, producer, (void *)(intptr_t)i);
  }
  /* Destroy and recreate (the same slot: this thread's slot cache) while the
   * producers launch on the handle. */
  for (int r = 0; atomic_load(&nproducers_done) < PRODUCERS; r++) {
    evrt_stream_t old = atomic_load(&cur_stream), nw;
    ASSERT_OK(evrt_stream_destroy(old));
    ASSERT_OK(evrt_stream_create(&nw, 0, 0, 0));
    atomic_store(&cur_stream, nw);
    for (volatile int k = 0; k < 200 * (r % 7); k++)
      ;
  }
  for (int i = 0; i < PRODUCERS; i++)
    pthread_join(th[i], NULL);
  /* Everything accepted must complete: device synchronize covers the
   * destroyed streams still draining.  A lost item times out here. */
  ASSERT_OK(evrt_device_synchronize_timeout(0, 60000000000ll));
  ASSERT_OK(evrt_stream_destroy(atomic_load(&cur_stream)));
  ASSERT_EQ(atomic_load(&bad_status), 0);
  long lost = 0, ghost = 0, twice = 0, nref = 0, mem_bad = 0;
  static const unsigned char zero[8], fives[8] = {0x5a, 0x5a, 0x5a, 0x5a,
                                                  0x5a, 0x5a, 0x5a, 0x5a};
  for (int i = 0; i < PRODUCERS; i++)
    for (long k = 0; k < nlaunched[i]; k++) {
      struct call *c = &calls[i][k];
      mem_bad += memcmp(c->cpy, c->cpy_ok ? pattern : zero, 8) != 0;
      mem_bad += memcmp(c->set, c->set_ok ? fives : zero, 8) != 0;
      int runs = atomic_load(&c->runs);
      if (atomic_load(&c->refused)) {
        nref++;
        ghost += runs != 0;
      } else {
        lost += runs == 0;
        twice += runs > 1;
      }
    }
  printf("  %ld calls, %ld refused, %ld lost, %ld ran though refused, "
         "%ld ran twice, %ld copies/fills wrong\n",
         nlaunched[0] + nlaunched[1], nref, lost, ghost, twice, mem_bad);
  ASSERT_EQ(mem_bad, 0);
  ASSERT_EQ(lost, 0);
  ASSERT_EQ(ghost, 0);
  ASSERT_EQ(twice, 0);
  for (int i = 0; i < PRODUCERS; i++)
    free(calls[i]);
}

/* ------------------------------------------------------------ events */

static _Atomic(evrt_event_t) cur_event;
static atomic_int ev_stop;
static atomic_long ev_bad;

static void *event_user(void *arg) {
  evrt_stream_t s = (evrt_stream_t)arg;
  evrt_event_info_t info = {.struct_size = sizeof info};
  uint64_t id, ns;
  int dev;
  float ms;
  for (long n = 0; !atomic_load(&ev_stop); n++) {
    evrt_event_t e = atomic_load(&cur_event);
    evrt_status_t st[10];
    st[0] = evrt_event_record(e, s);
    st[1] = evrt_stream_wait_event(s, e);
    st[2] = evrt_event_query(e);
    st[3] = evrt_event_synchronize(e);
    st[4] = evrt_event_get_info(e, &info);
    st[5] = evrt_event_get_device(e, &dev);
    st[6] = evrt_event_get_id(e, &id);
    st[7] = evrt_event_wait_status(e);
    st[8] = evrt_event_reset(e, s);
    st[9] = evrt_event_elapsed_time(&ms, e, e);
    (void)evrt_event_timestamp(e, &ns);
    for (int i = 0; i < 10; i++)
      if (st[i] != EVRT_SUCCESS && st[i] != EVRT_NOT_READY &&
          st[i] != EVRT_ERROR_INVALID_HANDLE &&
          st[i] != EVRT_ERROR_NOT_RECORDED &&
          st[i] != EVRT_ERROR_NOT_COMPLETE)
        atomic_fetch_add(&ev_bad, 1);
    if (st[4] == EVRT_SUCCESS && !(info.flags & EVRT_EVENT_TIMING))
      atomic_fetch_add(&ev_bad, 1); /* every incarnation here has timing */
  }
  return NULL;
}

/* Records, waits, queries, resets... racing event destroy and slot reuse
 * (ThreadSanitizer: the event's flags and imported fields were read
 * without synchronization while a create reusing the slot wrote them).
 * Event resources must all come back. */
TEST(event_calls_racing_event_destroy_and_slot_reuse) {
  evrt_stream_t s[2];
  pthread_t th[2];
  evrt_event_t e;
  uint32_t avail0 = 0, avail1 = 0;
  ASSERT_OK(evrt_device_event_available(0, &avail0));
  ASSERT_OK(evrt_event_create(&e, EVRT_EVENT_TIMING));
  atomic_store(&cur_event, e);
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(evrt_stream_create(&s[i], 0, 0, 0));
    pthread_create(&th[i], NULL, event_user, (void *)s[i]);
  }
  for (int r = 0; r < 20000; r++) {
    evrt_event_t old = atomic_load(&cur_event), nw;
    ASSERT_OK(evrt_event_destroy(old));
    ASSERT_OK(evrt_event_create(&nw, EVRT_EVENT_TIMING));
    atomic_store(&cur_event, nw);
  }
  atomic_store(&ev_stop, 1);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(evrt_stream_synchronize(s[i]));
    ASSERT_OK(evrt_stream_destroy(s[i]));
  }
  ASSERT_OK(evrt_event_destroy(atomic_load(&cur_event)));
  ASSERT_EQ(atomic_load(&ev_bad), 0);
  ASSERT_OK(evrt_device_event_available(0, &avail1));
  ASSERT_EQ(avail1, avail0);
}

/* ----------------------------------------------------------- captures */

/* Capture calls racing the destroy of the stream they name and the reuse
 * of its slot (issue 23, item 1): begin and end in each mode, a wait that
 * joins a capture (fork), names, the failure mode, labels, the capture
 * state.  The invariant: a call either fails with INVALID_HANDLE and
 * attaches nothing, or it went first and the destroy saw it: a capture
 * begun (or joined) always ends through its own stream handle (never
 * INVALID_HANDLE: the stream cannot be destroyed while it captures, the
 * destroy fails and invalidates the capture instead); and afterwards no
 * capture is left anywhere, so GLOBAL-mode synchronizes work.  Before the
 * fix a begin and a destroy both succeeded and the capture was stuck on
 * the dead stream (every later GLOBAL synchronize failed). */
#define CAP_ROUNDS 20000
static _Atomic(evrt_stream_t) cap_stream;
static atomic_int cap_stop;
static atomic_long cap_bad, cap_stuck, cap_begun, cap_joined;

static void nop_fn(void *p) { (void)p; }

/* The first unexpected status and the line that got it (for the report). */
static atomic_int bad_line;
static _Atomic evrt_status_t bad_st;
#define BAD(st)                                                                \
  do {                                                                         \
    int z_ = 0;                                                                \
    if (atomic_compare_exchange_strong(&bad_line, &z_, __LINE__))             \
      atomic_store(&bad_st, (st));                                             \
    atomic_fetch_add(&cap_bad, 1);                                             \
  } while (0)

static bool ok_or_dead(evrt_status_t st) {
  return st == EVRT_SUCCESS || st == EVRT_ERROR_INVALID_HANDLE;
}

static void *capturer(void *arg) {
  int me = (int)(intptr_t)arg;
  evrt_stream_t o;
  evrt_event_t e, back;
  if (evrt_stream_create(&o, 0, 0, 0) || evrt_event_create(&e, 0) ||
      evrt_event_create(&back, 0)) {
    BAD(EVRT_ERROR_OUT_OF_MEMORY);
    return NULL;
  }
  for (long n = 0; !atomic_load(&cap_stop); n++) {
    evrt_stream_t s = atomic_load(&cap_stream);
    evrt_capture_mode_t mode = (evrt_capture_mode_t)((n + me) % 3);
    evrt_graph_t g = NULL;
    evrt_status_t st;
    if (n % 4 == 0) {
      /* begin and end on the raced stream itself */
      st = evrt_stream_begin_capture(s, mode);
      if (st == EVRT_SUCCESS) {
        atomic_fetch_add(&cap_begun, 1);
        evrt_status_t l = evrt_stream_capture_label(s, 1);
        if (l != EVRT_SUCCESS && l != EVRT_ERROR_CAPTURE_INVALIDATED)
          BAD(l);
        st = evrt_stream_end_capture(s, &g);
        if (st == EVRT_ERROR_INVALID_HANDLE || st == EVRT_ERROR_NOT_PERMITTED)
          atomic_fetch_add(&cap_stuck, 1);
        else if (st != EVRT_SUCCESS && st != EVRT_ERROR_CAPTURE_INVALIDATED)
          BAD(st);
        if (g && evrt_graph_destroy(g))
          BAD(st);
      } else if (st != EVRT_ERROR_INVALID_HANDLE &&
                 st != EVRT_ERROR_CAPTURE_UNSUPPORTED) { /* the other's */
        BAD(st);
      }
    } else if (n % 4 == 1) {
      /* the raced stream joins this thread's capture of o, and back */
      if ((st = evrt_stream_begin_capture(o, mode)) ||
          (st = evrt_launch_host_func(o, nop_fn, NULL)) ||
          (st = evrt_event_record(e, o))) {
        BAD(st);
        break;
      }
      st = evrt_stream_wait_event(s, e);
      if (st == EVRT_SUCCESS) {
        atomic_fetch_add(&cap_joined, 1);
        /* a member cannot die: its record succeeds (or the capture was
         * invalidated by a destroy that failed) */
        evrt_status_t r = evrt_event_record(back, s);
        if (r == EVRT_SUCCESS)
          r = evrt_stream_wait_event(o, back);
        if (r != EVRT_SUCCESS && r != EVRT_ERROR_CAPTURE_INVALIDATED)
          BAD(r);
      } else if (st != EVRT_ERROR_INVALID_HANDLE &&
                 st != EVRT_ERROR_CAPTURE_MERGE &&       /* the other's */
                 st != EVRT_ERROR_CAPTURE_INVALIDATED) { /* a failed destroy */
        BAD(st);
      }
      st = evrt_stream_end_capture(o, &g);
      if (st == EVRT_ERROR_INVALID_HANDLE || st == EVRT_ERROR_NOT_PERMITTED)
        atomic_fetch_add(&cap_stuck, 1);
      else if (st != EVRT_SUCCESS && st != EVRT_ERROR_CAPTURE_INVALIDATED &&
               st != EVRT_ERROR_CAPTURE_UNJOINED)
        BAD(st);
      if (g && evrt_graph_destroy(g))
        BAD(st);
    }
    evrt_capture_status_t cs;
    uint64_t id;
    if (!ok_or_dead(st = evrt_stream_set_name(s, "raced")) ||
        !ok_or_dead(st = evrt_stream_set_failure_mode(s,
                                                      EVRT_FAILURE_CONTINUE)) ||
        !ok_or_dead(st = evrt_stream_capture_info(s, &cs, &id)))
      BAD(st);
  }
  /* (o ran nothing: everything on it was captured; no synchronize, which
   * the other thread's GLOBAL capture would refuse) */
  if (evrt_event_destroy(e) || evrt_event_destroy(back) ||
      evrt_stream_destroy(o))
    BAD(EVRT_ERROR_INTERNAL);
  return NULL;
}

TEST(capture_calls_racing_stream_destroy_and_slot_reuse) {
  pthread_t th[2];
  evrt_stream_t s;
  ASSERT_OK(evrt_stream_create(&s, 0, 0, 0));
  atomic_store(&cap_stream, s);
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, capturer, (void *)(intptr_t)i);
  long refused = 0;
  for (int r = 0; r < CAP_ROUNDS; r++) {
    evrt_stream_t old = atomic_load(&cap_stream), nw;
    evrt_status_t st = evrt_stream_destroy(old);
    if (st == EVRT_ERROR_CAPTURE_UNSUPPORTED) {
      refused++; /* it captures (or joined one): invalidated; again later */
    } else {
      ASSERT_OK(st);
      ASSERT_OK(evrt_stream_create(&nw, 0, 0, 0));
      atomic_store(&cap_stream, nw);
    }
    /* let the capturers reach the stream, at varying points */
    for (volatile int k = 0; k < 3000 * (r % 5); k++)
      ;
  }
  atomic_store(&cap_stop, 1);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("  %ld captures begun, %ld joins, %ld destroys refused, %ld stuck, "
         "%ld bad statuses (first: %s at line %d)\n",
         atomic_load(&cap_begun), atomic_load(&cap_joined), refused,
         atomic_load(&cap_stuck), atomic_load(&cap_bad),
         evrt_err_name(atomic_load(&bad_st)), atomic_load(&bad_line));
  ASSERT_EQ(atomic_load(&cap_stuck), 0);
  ASSERT_EQ(atomic_load(&cap_bad), 0);
  /* No capture left anywhere: GLOBAL-mode synchronizes work. */
  s = atomic_load(&cap_stream);
  evrt_capture_status_t cs;
  ASSERT_OK(evrt_stream_capture_status(s, &cs));
  ASSERT_EQ(cs, EVRT_CAPTURE_STATUS_NONE);
  ASSERT_OK(evrt_launch_host_func(s, nop_fn, NULL));
  ASSERT_OK(evrt_stream_synchronize(s));
  ASSERT_OK(evrt_device_synchronize_timeout(0, 60000000000ll));
  ASSERT_OK(evrt_stream_destroy(s));
}
