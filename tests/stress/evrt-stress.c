/*
 * evrt-stress.c - randomized stress of streams and events, checked against a
 * happens-before model computed from the program.
 *
 * Each round generates a random program: N streams on M devices, E events,
 * T host threads issuing host functions, records, re-records, waits, resets,
 * destroys (of events and streams), queries and synchronizes.  The test
 * serializes the calls that touch one object with a test-side mutex per
 * stream slot and per event slot (event before stream), so the order of the
 * calls on each object is known, while the runtime still sees concurrent
 * calls on different objects from several threads.  Destroys are the
 * exception: they run without the mutex, racing any call on the object
 * (issue 13, item 1).  The destroying thread marks the slot "dying" under
 * the mutex, lets go of it, destroys the handle, creates the replacement
 * (most likely in the same slot of the runtime: its own slot cache) and
 * only then installs it under the mutex.  Meanwhile calls on the old handle
 * may succeed or fail with EVRT_ERROR_INVALID_HANDLE, and the model takes
 * either, exactly: a call that succeeded enters the model as usual (its host
 * function must run once, its record is the event's generation...); one that
 * failed must leave nothing (its host function never runs, its memset never
 * writes, its record never counts); once one call on a handle was refused,
 * every later one must be (the destroy is a point in time), and a call made
 * after the destroy returned must be refused.  From that order the
 * model computes, for every host function, its frontier: for each stream,
 * how many host functions of it must have finished before this one starts
 * (stream order plus wait edges bound to the generation current at the wait
 * call, DESIGN.md rule 3; a never-recorded event gives an empty dependency,
 * rule 2).  A record copies the recording stream's frontier (its generation);
 * a wait merges the bound generation into the waiting stream's frontier.
 *
 * Checks:
 *  - live, in every host function: everything in its frontier has finished;
 *  - after synchronize / a successful query: everything the object captured
 *    has finished;
 *  - at the end of the round: every accepted host function ran exactly once
 *    and every refused one never (nothing lost, destroyed streams
 *    included), the memset and memcpy buffers of each stream hold the
 *    values of its last accepted ones, each stream's log (appended without
 *    atomics: only stream order makes that race-free, which TSan checks) is
 *    its enqueue order, start/end sequence numbers from one atomic counter
 *    respect stream order and every frontier, event states and record counts
 *    match the model, and every event resource was given back.
 *
 * A reset is a work item: between the reset call and its execution a wait
 * may bind either to the old generation or to nothing, so the model treats
 * the event as "uncertain" (no must-edge) until it is recorded again.
 *
 * Before the rounds, blocker host functions (one more than the CPU count,
 * i.e. than the base worker pool) sleep for EVRT_STRESS_BLOCK_SECONDS
 * (default 3, or 10 when the run lasts a minute or more) while other streams
 * must keep making progress.
 *
 * Environment: EVRT_STRESS_SECONDS (default 10), EVRT_STRESS_SEED (default:
 * from the clock; always printed), EVRT_STRESS_BLOCK_SECONDS.
 * Exit status: 0 pass, 1 failure (the seed and round are printed).
 */
#define _GNU_SOURCE
#include <evrt.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NDEV 3
#define MAX_SLOTS 12   /* live stream slots and event slots per round */
#define MAX_MS 64      /* model streams per round (live and destroyed) */
#define MAX_HF 6000    /* host functions per round */
#define MAX_THREADS 4
#define STALE_RING 32

/* ------------------------------------------------------------- helpers */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static unsigned rnd(uint64_t *x, unsigned n) {
  return (unsigned)(splitmix(x) % n);
}

static uint64_t g_seed;
static int g_round;
static atomic_int g_failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  /* Report the first few in full; the count says how many there were. */
  if (atomic_fetch_add(&g_failures, 1) >= 20)
    return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "evrt-stress: FAIL (EVRT_STRESS_SEED=0x%016" PRIx64
                  ", round %d): %s\n",
          g_seed, g_round, buf);
}

#define EXPECT_ST(call, want)                                                  \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (st_ != (want))                                                         \
      fail("%s:%d: %s returned %s, want %s (%s)", __FILE__, __LINE__, #call,   \
           evrt_err_name(st_), evrt_err_name(want),                            \
           evrt_last_error_message());                                         \
  } while (0)

/* --------------------------------------------------------------- model */

struct hf {
  int id;
  int ms;                 /* model stream */
  int idx;                /* position among its stream's host functions */
  unsigned spin_ns;       /* busy work, to widen race windows */
  atomic_uint_least64_t start, end; /* global sequence numbers, 0 = not yet */
  atomic_int runs;
  atomic_int refused;     /* its launch failed (racing a destroy): never runs */
  uint16_t front[MAX_MS]; /* frontier: host functions per stream before us */
};

struct mstream {
  int dev;
  int nhf;              /* host functions enqueued (under the slot mutex) */
  int hf_ids[MAX_HF];
  int log[MAX_HF];      /* appended by the host functions, in stream order */
  int log_len;
  char buf[8];          /* target of the stream's memset items */
  char cbuf[8];         /* target of its memcpy items */
  int nfill;            /* memsets and memcpys accepted (values 1..255) */
  int last_set, last_cpy; /* value of the last accepted one, 0 = none */
  uint16_t front[MAX_MS]; /* what the stream's next item must follow */
};

enum gen_state { GEN_NONE, GEN_CERTAIN, GEN_UNCERTAIN };

/* Racing destroys (top of the file): `dying` and `refused` under the slot
 * mutex; `gone` is set by the destroying thread when the destroy has
 * returned, without the mutex. */
struct sslot {
  pthread_mutex_t mu;
  evrt_stream_t h;
  int ms;
  unsigned incarnation;
  bool dying;     /* a destroy of h may be running now */
  bool refused;   /* a call on h was refused: every later one must be */
  atomic_int gone;
};

struct eslot {
  pthread_mutex_t mu;
  evrt_event_t h;
  bool dying, refused; /* as in struct sslot */
  atomic_int gone;
  unsigned flags;
  int dev;               /* -1 until the first successful record */
  uint64_t rec_count;
  enum gen_state gs;
  uint16_t gen[MAX_MS];  /* frontier of the latest generation */
};

static struct {
  int ns, ne, nthreads, ops;
  struct sslot s[MAX_SLOTS];
  struct eslot e[MAX_SLOTS];
  atomic_int nms;
  atomic_int nhf;
  struct mstream *ms;    /* MAX_MS */
  struct hf *hf;         /* MAX_HF */
} R;

static atomic_uint_least64_t g_seqno;

/* Handles destroyed earlier (any round): every use must fail. */
static pthread_mutex_t stale_mu = PTHREAD_MUTEX_INITIALIZER;
static evrt_stream_t stale_s[STALE_RING];
static evrt_event_t stale_e[STALE_RING];
static unsigned stale_ns, stale_ne;

static void hf_run(void *p) {
  struct hf *h = p;
  /* seq_cst: one total order of starts and ends across every thread */
  uint64_t start = atomic_fetch_add(&g_seqno, 1) + 1;
  atomic_store(&h->start, start);
  if (atomic_fetch_add(&h->runs, 1) != 0)
    fail("host function %d (stream %d #%d) ran twice", h->id, h->ms, h->idx);
  /* Live happens-before check: the last host function of each stream in our
   * frontier has finished (stream order covers the earlier ones). */
  for (int t = 0; t < MAX_MS; t++) {
    if (!h->front[t])
      continue;
    struct hf *dep = &R.hf[R.ms[t].hf_ids[h->front[t] - 1]];
    if (atomic_load(&dep->end) == 0)
      fail("host function %d (stream %d #%d) started before its dependency "
           "%d (stream %d #%d) finished",
           h->id, h->ms, h->idx, dep->id, dep->ms, dep->idx);
  }
  struct mstream *m = &R.ms[h->ms];
  m->log[m->log_len++] = h->id; /* plain: exclusive by stream order */
  if (h->spin_ns) {
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < h->spin_ns)
      ;
  }
  evrt_check_release(h); /* EVRT_CHECK: the round's end observes this */
  atomic_store(&h->end, atomic_fetch_add(&g_seqno, 1) + 1);
}

static void stale_ran(void *p) {
  (void)p;
  fail("a host function enqueued on a destroyed stream handle ran");
}

/* Everything in the frontier f has finished. */
static void check_front(const uint16_t *f, const char *what) {
  for (int t = 0; t < MAX_MS; t++) {
    if (!f[t])
      continue;
    struct hf *dep = &R.hf[R.ms[t].hf_ids[f[t] - 1]];
    if (atomic_load(&dep->end) == 0)
      fail("%s returned but host function %d (stream %d #%d) it captured has "
           "not finished",
           what, dep->id, dep->ms, dep->idx);
  }
}

static void merge(uint16_t *dst, const uint16_t *src) {
  for (int t = 0; t < MAX_MS; t++)
    if (src[t] > dst[t])
      dst[t] = src[t];
}

static int new_mstream(int dev) {
  int m = atomic_fetch_add(&R.nms, 1);
  if (m >= MAX_MS) {
    atomic_fetch_sub(&R.nms, 1);
    return -1;
  }
  struct mstream *ms = &R.ms[m];
  ms->dev = dev;
  ms->nhf = 0;
  ms->log_len = 0;
  memset(ms->buf, 0, sizeof ms->buf);
  memset(ms->cbuf, 0, sizeof ms->cbuf);
  ms->nfill = 0;
  ms->last_set = ms->last_cpy = 0;
  memset(ms->front, 0, sizeof ms->front);
  return m;
}

static unsigned random_event_flags(uint64_t *rng) {
  unsigned f = 0;
  if (rnd(rng, 3) == 0)
    f |= EVRT_EVENT_TIMING; /* a record on a busy stream allocates an item */
  if (rnd(rng, 4) == 0)
    f |= EVRT_EVENT_BLOCKING_SYNC;
  if (rnd(rng, 4) == 0)
    f |= EVRT_EVENT_NO_LIMIT;
  return f;
}

/* A new event in slot e (under its mutex, or before the threads start). */
static void event_slot_install(struct eslot *e, evrt_event_t h,
                               unsigned flags) {
  e->h = h;
  e->flags = flags;
  e->dying = e->refused = false;
  atomic_store(&e->gone, 0);
  e->dev = -1;
  e->rec_count = 0;
  e->gs = GEN_NONE;
  memset(e->gen, 0, sizeof e->gen);
}

static void event_slot_init(struct eslot *e, uint64_t *rng) {
  unsigned flags = random_event_flags(rng);
  evrt_event_t h = NULL;
  EXPECT_ST(evrt_event_create(&h, flags), EVRT_SUCCESS);
  event_slot_install(e, h, flags);
}

/* --------------------------------------------- racing destroys: outcomes */

/* Under the slot mutexes: the outcome of a call on the slots' handles (e or
 * s may be NULL), read `gone` before the call (gs, ge).  Returns true if
 * the call took effect (st == ok) and the model must apply it, false if it
 * was refused because a destroy raced it (allowed while the slot is dying;
 * required once the destroy returned).  Anything else fails the round. */
/* Calls that raced a destroy of a handle they named, by outcome. */
static atomic_long g_raced_ok, g_raced_refused;

static bool took_effect(const char *what, evrt_status_t st, evrt_status_t ok,
                        struct sslot *s, int gs, struct eslot *e, int ge) {
  bool sdying = s && s->dying, edying = e && e->dying;
  if (sdying || edying)
    atomic_fetch_add(st == ok ? &g_raced_ok : &g_raced_refused, 1);
  if (st == ok) {
    if (gs || ge)
      fail("%s returned %s on a handle whose destroy had returned", what,
           evrt_err_name(st));
    else if ((s && s->refused) || (e && e->refused))
      fail("%s returned %s after a call on the same handle was refused",
           what, evrt_err_name(st));
    return true;
  }
  if (st == EVRT_ERROR_INVALID_HANDLE && (sdying || edying)) {
    /* Which handle was refused is known only when one slot is dying. */
    if (sdying && !edying)
      s->refused = true;
    else if (edying && !sdying)
      e->refused = true;
    return false;
  }
  fail("%s returned %s, want %s%s (%s)", what, evrt_err_name(st),
       evrt_err_name(ok),
       sdying || edying ? " or EVRT_ERROR_INVALID_HANDLE (racing destroy)" : "",
       evrt_last_error_message());
  return false;
}

/* ----------------------------------------------------------------- ops */

static void op_host_fn(struct sslot *s, uint64_t *rng) {
  int id = atomic_fetch_add(&R.nhf, 1);
  if (id >= MAX_HF)
    return;
  struct mstream *m = &R.ms[s->ms];
  struct hf *h = &R.hf[id];
  h->id = id;
  h->ms = s->ms;
  h->idx = m->nhf;
  h->spin_ns = rnd(rng, 8) == 0 ? rnd(rng, 40000) : 0;
  atomic_store(&h->start, 0);
  atomic_store(&h->end, 0);
  atomic_store(&h->runs, 0);
  atomic_store(&h->refused, 0);
  memcpy(h->front, m->front, sizeof h->front);
  m->hf_ids[m->nhf] = id;
  int gone = atomic_load(&s->gone);
  evrt_status_t st = evrt_launch_host_func(s->h, hf_run, h);
  if (!took_effect("launch_host_func", st, EVRT_SUCCESS, s, gone, NULL, 0)) {
    atomic_store(&h->refused, 1);
    return;
  }
  m->nhf++;
  m->front[s->ms] = (uint16_t)m->nhf;
}

static void op_record(struct eslot *e, struct sslot *s) {
  struct mstream *m = &R.ms[s->ms];
  evrt_status_t want =
      e->dev >= 0 && e->dev != m->dev ? EVRT_ERROR_DEVICE_MISMATCH
                                      : EVRT_SUCCESS;
  int gs = atomic_load(&s->gone), ge = atomic_load(&e->gone);
  evrt_status_t st = evrt_event_record(e->h, s->h);
  if (!took_effect("record", st, want, s, gs, e, ge) || st != EVRT_SUCCESS)
    return;
  e->dev = m->dev;
  e->rec_count++;
  e->gs = GEN_CERTAIN;
  memcpy(e->gen, m->front, sizeof e->gen);
}

static void op_wait(struct eslot *e, struct sslot *s) {
  int gs = atomic_load(&s->gone), ge = atomic_load(&e->gone);
  evrt_status_t st = evrt_stream_wait_event(s->h, e->h);
  if (took_effect("stream_wait_event", st, EVRT_SUCCESS, s, gs, e, ge) &&
      e->gs == GEN_CERTAIN)
    merge(R.ms[s->ms].front, e->gen);
}

static void op_reset(struct eslot *e, struct sslot *s, uint64_t *rng) {
  int gs = atomic_load(&s->gone), ge = atomic_load(&e->gone);
  evrt_status_t st = evrt_event_reset(e->h, s->h);
  if (e->rec_count == 0) {
    took_effect("reset (never recorded)", st, EVRT_ERROR_NOT_RECORDED, s, gs,
                e, ge);
    return;
  }
  if (!took_effect("reset", st, EVRT_SUCCESS, s, gs, e, ge))
    return;
  e->gs = GEN_UNCERTAIN;
  /* A host function behind the reset: when every host function has run,
   * the reset has executed too (even on a stream destroyed since). */
  op_host_fn(s, rng);
}

/* A short random pause outside the slot mutex: calls of other threads on
 * the dying handle get in meanwhile. */
static void race_pause(uint64_t *rng) {
  unsigned ns = rnd(rng, 4) == 0 ? 0 : rnd(rng, 30000);
  uint64_t t0 = now_ns();
  while (now_ns() - t0 < ns)
    ;
}

/* Destroy the slot's event without its mutex, racing the calls of the
 * other threads (top of the file), then install a new event. */
static void op_event_destroy(struct eslot *e, uint64_t *rng) {
  pthread_mutex_lock(&e->mu);
  if (e->dying) { /* another thread is destroying it */
    pthread_mutex_unlock(&e->mu);
    return;
  }
  e->dying = true;
  evrt_event_t h = e->h;
  pthread_mutex_unlock(&e->mu);
  race_pause(rng);
  EXPECT_ST(evrt_event_destroy(h), EVRT_SUCCESS);
  atomic_store(&e->gone, 1);
  pthread_mutex_lock(&stale_mu);
  stale_e[stale_ne++ % STALE_RING] = h;
  pthread_mutex_unlock(&stale_mu);
  /* Most likely the same slot of the runtime (this thread's slot cache):
   * the calls still made on h must not touch the new event. */
  unsigned flags = random_event_flags(rng);
  evrt_event_t nh = NULL;
  EXPECT_ST(evrt_event_create(&nh, flags), EVRT_SUCCESS);
  race_pause(rng);
  pthread_mutex_lock(&e->mu);
  event_slot_install(e, nh, flags);
  pthread_mutex_unlock(&e->mu);
}

/* As op_event_destroy, for a stream (its pending work still runs). */
static void op_stream_destroy(struct sslot *s, uint64_t *rng) {
  int dev = (int)rnd(rng, NDEV);
  pthread_mutex_lock(&s->mu);
  int m = s->dying ? -1 : new_mstream(dev);
  if (m < 0) {
    pthread_mutex_unlock(&s->mu);
    return;
  }
  s->dying = true;
  evrt_stream_t h = s->h;
  pthread_mutex_unlock(&s->mu);
  race_pause(rng);
  EXPECT_ST(evrt_stream_destroy(h), EVRT_SUCCESS);
  atomic_store(&s->gone, 1);
  pthread_mutex_lock(&stale_mu);
  stale_s[stale_ns++ % STALE_RING] = h;
  pthread_mutex_unlock(&stale_mu);
  evrt_stream_t nh = NULL;
  EXPECT_ST(evrt_stream_create(&nh, dev, rnd(rng, 3) == 0 ? -1 : 0, 0),
            EVRT_SUCCESS);
  race_pause(rng);
  pthread_mutex_lock(&s->mu);
  s->h = nh;
  s->ms = m;
  s->incarnation++;
  s->dying = s->refused = false;
  atomic_store(&s->gone, 0);
  pthread_mutex_unlock(&s->mu);
}

static void op_stream_sync(struct sslot *s) {
  int gs = atomic_load(&s->gone);
  evrt_status_t st = evrt_stream_synchronize(s->h);
  if (!took_effect("stream_synchronize", st, EVRT_SUCCESS, s, gs, NULL, 0))
    return;
  check_front(R.ms[s->ms].front, "stream_synchronize");
  gs = atomic_load(&s->gone);
  st = evrt_stream_query(s->h);
  took_effect("stream_query after synchronize", st, EVRT_SUCCESS, s, gs,
              NULL, 0);
}

static void op_stream_query(struct sslot *s) {
  int gs = atomic_load(&s->gone);
  evrt_status_t st = evrt_stream_query(s->h);
  if (st == EVRT_SUCCESS)
    check_front(R.ms[s->ms].front, "stream_query SUCCESS");
  took_effect("stream_query", st, st == EVRT_NOT_READY ? st : EVRT_SUCCESS,
              s, gs, NULL, 0);
}

static void op_event_sync(struct eslot *e) {
  int ge = atomic_load(&e->gone);
  evrt_status_t st = evrt_event_synchronize(e->h);
  if (took_effect("event_synchronize", st, EVRT_SUCCESS, NULL, 0, e, ge) &&
      e->gs == GEN_CERTAIN)
    check_front(e->gen, "event_synchronize");
}

static void op_event_query(struct eslot *e) {
  int ge = atomic_load(&e->gone);
  evrt_status_t st = evrt_event_query(e->h);
  if (st == EVRT_SUCCESS) {
    if (e->gs == GEN_CERTAIN)
      check_front(e->gen, "event_query SUCCESS");
  } else if (st == EVRT_NOT_READY) {
    if (e->gs == GEN_NONE)
      fail("event_query of a never-recorded event: NOT_READY (rule 2)");
  }
  if (!took_effect("event_query", st,
                   st == EVRT_NOT_READY ? st : EVRT_SUCCESS, NULL, 0, e, ge))
    return;
  evrt_event_info_t info = {.struct_size = sizeof info};
  ge = atomic_load(&e->gone);
  st = evrt_event_get_info(e->h, &info);
  if (took_effect("event_get_info", st, EVRT_SUCCESS, NULL, 0, e, ge) &&
      info.record_count != e->rec_count)
    fail("record_count %" PRIu64 ", model %" PRIu64, info.record_count,
         e->rec_count);
}

/* memset or memcpy of a fresh value into the model stream's buffers: an
 * accepted one must have written its value by the end of the round (the
 * last accepted one's value is there), a refused one never writes. */
static char patterns[256][8]; /* memcpy sources, set in main */

static void op_fill(struct sslot *s, bool copy) {
  struct mstream *m = &R.ms[s->ms];
  int v = m->nfill % 255 + 1; /* differs from the previous value */
  int gs = atomic_load(&s->gone);
  evrt_status_t st =
      copy ? evrt_memcpy_async(s->h, m->cbuf, patterns[v], sizeof m->cbuf)
           : evrt_memset_async(s->h, m->buf, v, sizeof m->buf);
  if (!took_effect(copy ? "memcpy_async" : "memset_async", st, EVRT_SUCCESS,
                   s, gs, NULL, 0))
    return;
  m->nfill++;
  if (copy)
    m->last_cpy = v;
  else
    m->last_set = v;
}

static void op_stale(uint64_t *rng, struct sslot *live_s) {
  evrt_stream_t s = NULL;
  evrt_event_t e = NULL;
  pthread_mutex_lock(&stale_mu);
  if (stale_ns)
    s = stale_s[rnd(rng, stale_ns < STALE_RING ? stale_ns : STALE_RING)];
  if (stale_ne)
    e = stale_e[rnd(rng, stale_ne < STALE_RING ? stale_ne : STALE_RING)];
  pthread_mutex_unlock(&stale_mu);
  /* A NULL event stands in while nothing was destroyed yet: same error (a
   * NULL stream is the default stream: no stand-in for a stale one). */
  if (s) {
    EXPECT_ST(evrt_launch_host_func(s, stale_ran, NULL),
              EVRT_ERROR_INVALID_HANDLE);
    EXPECT_ST(evrt_stream_query(s), EVRT_ERROR_INVALID_HANDLE);
    EXPECT_ST(evrt_stream_destroy(s), EVRT_ERROR_INVALID_HANDLE);
  }
  EXPECT_ST(evrt_event_query(e), EVRT_ERROR_INVALID_HANDLE);
  EXPECT_ST(evrt_event_destroy(e), EVRT_ERROR_INVALID_HANDLE);
  EXPECT_ST(evrt_event_synchronize(e), EVRT_ERROR_INVALID_HANDLE);
  /* live stream, stale event: must fail on the event, changing nothing */
  EXPECT_ST(evrt_event_record(e, live_s->h), EVRT_ERROR_INVALID_HANDLE);
  EXPECT_ST(evrt_stream_wait_event(live_s->h, e), EVRT_ERROR_INVALID_HANDLE);
}

static void *thread_main(void *arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  evrt_check_acquire(&R); /* EVRT_CHECK: thread creation orders the round */
  for (int i = 0; i < R.ops && atomic_load(&g_failures) == 0; i++) {
    struct sslot *s = &R.s[rnd(&rng, (unsigned)R.ns)];
    struct eslot *e = &R.e[rnd(&rng, (unsigned)R.ne)];
    unsigned op = rnd(&rng, 100);
    if (op < 40) {
      pthread_mutex_lock(&s->mu);
      op_host_fn(s, &rng);
      pthread_mutex_unlock(&s->mu);
    } else if (op < 68) {
      /* lock order: event slot, then stream slot */
      pthread_mutex_lock(&e->mu);
      pthread_mutex_lock(&s->mu);
      if (op < 52)
        op_record(e, s);
      else if (op < 65)
        op_wait(e, s);
      else
        op_reset(e, s, &rng);
      pthread_mutex_unlock(&s->mu);
      pthread_mutex_unlock(&e->mu);
    } else if (op < 72) {
      op_event_destroy(e, &rng); /* without the slot mutex: racing */
    } else if (op < 75) {
      op_stream_destroy(s, &rng); /* likewise */
    } else if (op < 79) {
      pthread_mutex_lock(&s->mu);
      op_stream_sync(s);
      pthread_mutex_unlock(&s->mu);
    } else if (op < 83) {
      pthread_mutex_lock(&s->mu);
      op_stream_query(s);
      pthread_mutex_unlock(&s->mu);
    } else if (op < 87) {
      pthread_mutex_lock(&e->mu);
      op_event_sync(e);
      pthread_mutex_unlock(&e->mu);
    } else if (op < 94) {
      pthread_mutex_lock(&e->mu);
      op_event_query(e);
      pthread_mutex_unlock(&e->mu);
    } else if (op < 96) {
      pthread_mutex_lock(&s->mu); /* for s->h */
      op_stale(&rng, s);
      pthread_mutex_unlock(&s->mu);
    } else {
      /* Work items outside the model: they shift timing and exercise the
       * timer and the memory paths; stream order still holds around them. */
      pthread_mutex_lock(&s->mu);
      if (op < 98) {
        int gs = atomic_load(&s->gone);
        took_effect("stream_delay",
                    evrt_stream_delay(s->h, rnd(&rng, 200000)), EVRT_SUCCESS,
                    s, gs, NULL, 0);
      } else {
        op_fill(s, op == 99);
      }
      op_host_fn(s, &rng);
      pthread_mutex_unlock(&s->mu);
    }
  }
  return NULL;
}

/* ---------------------------------------------------------- one round */

static void final_checks(void) {
  int nhf = atomic_load(&R.nhf);
  if (nhf > MAX_HF)
    nhf = MAX_HF;
  /* Destroyed streams cannot be synchronized: their pending work must still
   * complete on its own (nothing lost). */
  uint64_t deadline = now_ns() + 30000000000ull;
  for (int i = 0; i < nhf; i++) {
    while (!atomic_load(&R.hf[i].refused) && atomic_load(&R.hf[i].end) == 0 &&
           now_ns() < deadline)
      usleep(1000);
    evrt_check_acquire(&R.hf[i]); /* EVRT_CHECK: buffers are reused next */
  }
  for (int i = 0; i < nhf; i++) {
    struct hf *h = &R.hf[i];
    int runs = atomic_load(&h->runs);
    if (atomic_load(&h->refused)) {
      /* its launch failed, racing a destroy: it must leave nothing */
      if (runs != 0)
        fail("host function %d (stream %d) ran %d times though its launch "
             "was refused",
             i, h->ms, runs);
      continue;
    }
    if (runs != 1 || atomic_load(&h->end) == 0) {
      fail("host function %d (stream %d #%d) ran %d times (lost work)", i,
           h->ms, h->idx, runs);
      continue;
    }
    uint64_t start = atomic_load(&h->start);
    for (int t = 0; t < MAX_MS; t++) {
      if (!h->front[t])
        continue;
      struct hf *dep = &R.hf[R.ms[t].hf_ids[h->front[t] - 1]];
      if (start <= atomic_load(&dep->end))
        fail("host function %d (stream %d #%d) started at %" PRIu64
             " before %d (stream %d #%d) ended at %" PRIu64,
             i, h->ms, h->idx, start, dep->id, dep->ms, dep->idx,
             (uint64_t)atomic_load(&dep->end));
    }
  }
  int nms = atomic_load(&R.nms);
  for (int m = 0; m < nms; m++) {
    struct mstream *ms = &R.ms[m];
    if (ms->log_len != ms->nhf) {
      fail("stream %d logged %d host functions, enqueued %d", m, ms->log_len,
           ms->nhf);
      continue;
    }
    for (int k = 0; k < ms->nhf; k++)
      if (ms->log[k] != ms->hf_ids[k]) {
        fail("stream %d ran host function %d at position %d, enqueued %d", m,
             ms->log[k], k, ms->hf_ids[k]);
        break;
      }
    /* the last accepted memset and memcpy wrote their values; no refused
     * one wrote after them */
    for (int i = 0; i < 8; i++) {
      if (ms->buf[i] != (char)ms->last_set) {
        fail("stream %d: memset buffer byte %d is %d, last accepted memset "
             "wrote %d",
             m, i, ms->buf[i], ms->last_set);
        break;
      }
      char want = ms->last_cpy ? patterns[ms->last_cpy][i] : 0;
      if (ms->cbuf[i] != want) {
        fail("stream %d: memcpy buffer byte %d is %d, want %d (value %d)", m,
             i, ms->cbuf[i], want, ms->last_cpy);
        break;
      }
    }
  }
  for (int i = 0; i < R.ne; i++) {
    struct eslot *e = &R.e[i];
    evrt_event_info_t info = {.struct_size = sizeof info};
    evrt_status_t q = evrt_event_query(e->h);
    if (q == EVRT_NOT_READY) {
      /* Tell a late completion from a lost one (a hang). */
      uint64_t t0 = now_ns();
      evrt_status_t w = evrt_event_synchronize_timeout(e->h, 10000000000ll);
      fail("event slot %d: query NOT_READY after the round's "
           "synchronizes; synchronize then returned %s after %.3f ms",
           i, evrt_err_name(w), (double)(now_ns() - t0) / 1e6);
    } else if (q != EVRT_SUCCESS) {
      fail("event slot %d: query returned %s", i, evrt_err_name(q));
    }
    EXPECT_ST(evrt_event_get_info(e->h, &info), EVRT_SUCCESS);
    evrt_event_state_t want = e->gs == GEN_CERTAIN ? EVRT_EVENT_STATE_COMPLETE
                                                   : EVRT_EVENT_STATE_UNRECORDED;
    if (info.state != want || info.record_count != e->rec_count)
      fail("event slot %d: state %d record_count %" PRIu64
           ", model state %d record_count %" PRIu64,
           i, info.state, info.record_count, want, e->rec_count);
    if (e->dev >= 0 && info.device != e->dev)
      fail("event slot %d: device %d, model %d", i, info.device, e->dev);
  }
}

static void run_round(uint64_t rseed) {
  uint64_t rng = rseed;
  R.ns = 2 + (int)rnd(&rng, MAX_SLOTS - 1);
  R.ne = 2 + (int)rnd(&rng, MAX_SLOTS - 1);
  R.nthreads = 2 + (int)rnd(&rng, MAX_THREADS - 1);
  R.ops = 150 + (int)rnd(&rng, 500);
  atomic_store(&R.nms, 0);
  atomic_store(&R.nhf, 0);
  for (int i = 0; i < R.ns; i++) {
    struct sslot *s = &R.s[i];
    int dev = (int)rnd(&rng, NDEV);
    s->ms = new_mstream(dev);
    s->incarnation = 0;
    EXPECT_ST(evrt_stream_create(&s->h, dev, rnd(&rng, 3) == 0 ? -1 : 0, 0),
              EVRT_SUCCESS);
  }
  for (int i = 0; i < R.ne; i++)
    event_slot_init(&R.e[i], &rng);

  pthread_t th[MAX_THREADS];
  evrt_check_release(&R); /* EVRT_CHECK: thread_main acquires it */
  for (int t = 0; t < R.nthreads; t++)
    pthread_create(&th[t], NULL, thread_main,
                   (void *)(uintptr_t)(rseed ^ (0x9e3779b97f4a7c15ull * (t + 1))));
  for (int t = 0; t < R.nthreads; t++)
    pthread_join(th[t], NULL);

  for (int i = 0; i < R.ns; i++) {
    EXPECT_ST(evrt_stream_synchronize(R.s[i].h), EVRT_SUCCESS);
    check_front(R.ms[R.s[i].ms].front, "final stream_synchronize");
  }
  /* Covers destroyed streams still draining too.  With a timeout: a lost
   * wake-up fails the round with a message instead of hanging the run. */
  for (int d = 0; d < NDEV; d++)
    EXPECT_ST(evrt_device_synchronize_timeout(d, 60000000000ll), EVRT_SUCCESS);
  final_checks();

  for (int i = 0; i < R.ne; i++)
    EXPECT_ST(evrt_event_destroy(R.e[i].h), EVRT_SUCCESS);
  for (int i = 0; i < R.ns; i++)
    EXPECT_ST(evrt_stream_destroy(R.s[i].h), EVRT_SUCCESS);
  /* Every event resource taken by a record came back (destroy or reset). */
  for (int d = 0; d < NDEV; d++) {
    uint32_t avail = 0, limit = 0;
    EXPECT_ST(evrt_device_event_available(d, &avail), EVRT_SUCCESS);
    EXPECT_ST(evrt_device_get_event_limit(d, &limit), EVRT_SUCCESS);
    if (avail != limit)
      fail("device %d: %u of %u event resources available after the round", d,
           avail, limit);
  }
}

/* ------------------------------------------------- blocking host fns */

static atomic_int probe_done;
static void probe(void *p) {
  (void)p;
  atomic_fetch_add(&probe_done, 1);
}
static void blocker(void *p) {
  uint64_t ns = *(uint64_t *)p;
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  nanosleep(&ts, NULL);
}

/* One blocker more than the base pool (one worker per CPU) sleeps for
 * `seconds`; 100 host functions on another stream must finish meanwhile. */
static int check_blocked_progress(unsigned seconds, evrt_stream_t *bs,
                                  int *nb) {
  static uint64_t ns;
  ns = (uint64_t)seconds * 1000000000u;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  *nb = (int)(ncpu < 2 ? 2 : ncpu) + 1;
  if (*nb > 64)
    *nb = 64;
  uint64_t t0 = now_ns();
  for (int i = 0; i < *nb; i++) {
    EXPECT_ST(evrt_stream_create(&bs[i], 0, 0, 0), EVRT_SUCCESS);
    EXPECT_ST(evrt_launch_host_func(bs[i], blocker, &ns), EVRT_SUCCESS);
  }
  usleep(50000); /* let the blockers occupy the workers */
  evrt_stream_t ps;
  EXPECT_ST(evrt_stream_create(&ps, 1, 0, 0), EVRT_SUCCESS);
  for (int i = 0; i < 100; i++)
    EXPECT_ST(evrt_launch_host_func(ps, probe, NULL), EVRT_SUCCESS);
  EXPECT_ST(evrt_stream_synchronize(ps), EVRT_SUCCESS);
  uint64_t took = now_ns() - t0;
  int busy = 0;
  for (int i = 0; i < *nb; i++)
    busy += evrt_stream_query(bs[i]) == EVRT_NOT_READY;
  printf("evrt-stress: %d host functions blocked for %u s; another stream "
         "ran 100 items in %.1f ms (%d blockers still running)\n",
         *nb, seconds, (double)took / 1e6, busy);
  if (atomic_load(&probe_done) != 100 || busy == 0)
    fail("a stream stalled behind %d blocking host functions (%d of 100 "
         "ran, %.1f ms)",
         *nb, atomic_load(&probe_done), (double)took / 1e6);
  EXPECT_ST(evrt_stream_destroy(ps), EVRT_SUCCESS);
  return 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  /* Several virtual devices: must be set before the first evrt call. */
  setenv("EVRT_CPU_DEVICES", "3", 1);
  const char *v = getenv("EVRT_STRESS_SECONDS");
  double seconds = v ? atof(v) : 10.0;
  if (seconds <= 0)
    seconds = 10.0;
  v = getenv("EVRT_STRESS_SEED");
  g_seed = v ? strtoull(v, NULL, 0) : (now_ns() ^ (uint64_t)getpid() << 32);
  v = getenv("EVRT_STRESS_BLOCK_SECONDS");
  unsigned block_s = v ? (unsigned)atoi(v) : (seconds >= 60 ? 10u : 3u);
  printf("evrt-stress: EVRT_STRESS_SEED=0x%016" PRIx64 " seconds=%.0f "
         "block=%u s\n",
         g_seed, seconds, block_s);

  int ndev = 0;
  if (evrt_device_count(&ndev) != EVRT_SUCCESS || ndev != NDEV) {
    fprintf(stderr, "evrt-stress: need %d devices, have %d\n", NDEV, ndev);
    return 1;
  }
  for (int pv = 0; pv < 256; pv++)
    for (int i = 0; i < 8; i++)
      patterns[pv][i] = (char)(pv ^ (i + 1) * 37);
  R.ms = calloc(MAX_MS, sizeof *R.ms);
  R.hf = calloc(MAX_HF, sizeof *R.hf);
  for (int i = 0; i < MAX_SLOTS; i++) {
    pthread_mutex_init(&R.s[i].mu, NULL);
    pthread_mutex_init(&R.e[i].mu, NULL);
  }

  evrt_stream_t bs[64];
  int nb = 0;
  if (block_s)
    check_blocked_progress(block_s, bs, &nb);

  uint64_t t_end = now_ns() + (uint64_t)(seconds * 1e9);
  uint64_t total_hf = 0;
  int rounds = 0;
  /* Round r's program comes from splitmix(seed + r): the printed seed and
   * round number identify the failing program. */
  for (g_round = 0; atomic_load(&g_failures) == 0 && now_ns() < t_end;
       g_round++) {
    uint64_t x = g_seed + (uint64_t)g_round;
    run_round(splitmix(&x));
    total_hf += (uint64_t)atomic_load(&R.nhf);
    rounds++;
  }
  for (int i = 0; i < nb; i++) {
    EXPECT_ST(evrt_stream_synchronize(bs[i]), EVRT_SUCCESS);
    EXPECT_ST(evrt_stream_destroy(bs[i]), EVRT_SUCCESS);
  }
  int nf = atomic_load(&g_failures);
  printf("evrt-stress: %d rounds, %" PRIu64 " host functions, %ld calls "
         "racing a destroy (%ld took effect, %ld refused), %d failures "
         "(EVRT_STRESS_SEED=0x%016" PRIx64 ")\n",
         rounds, total_hf,
         atomic_load(&g_raced_ok) + atomic_load(&g_raced_refused),
         atomic_load(&g_raced_ok), atomic_load(&g_raced_refused), nf, g_seed);
  free(R.ms);
  free(R.hf);
  return nf ? 1 : 0;
}
