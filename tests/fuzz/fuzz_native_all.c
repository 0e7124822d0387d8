/*
 * fuzz_native_all.c - libFuzzer target that calls every public function of
 * include/evrt.h with garbage arguments (issue 23).
 *
 * An input is a byte string decoded into up to 192 calls on a few objects of
 * each kind (streams, events, graphs, executable graphs, interprocess memory
 * blocks).  A handle argument is live, NULL, stale (destroyed earlier), a
 * live handle of another kind, or forged from input bytes; integers are
 * out-of-range enums, unknown flags, negative and huge devices, counts and
 * sizes; output pointers are NULL where a check is possible (never a stray
 * pointer: evrt.h does not claim to check those).  Objects are destroyed
 * while others still use them (graphs after instantiation, executable graphs
 * with launches in flight, streams with pending work, capturing or joined,
 * events that streams wait on, exported memory).
 *
 * What must hold: every call returns a status of EVRT_ERRNO_MAP; a stale,
 * NULL (except a NULL stream: the default stream) or other-kind handle gives
 * EVRT_ERROR_INVALID_HANDLE; a failed call leaves its output untouched (the
 * create calls, the getters); a create with a NULL output fails; no crash,
 * hang (libFuzzer -timeout, and the 5 s bound of the cleanup) or sanitizer
 * report.  evrt_shutdown is called only from a host function, where it must
 * be refused (EVRT_ERROR_WOULD_DEADLOCK): the process goes on; a host
 * function that synchronizes its own stream must be refused the same way.
 *
 * Every wait is bounded: value waits without a timeout wait on a word that
 * stays 0 with conditions that 0 satisfies; stream waits bind at the call to
 * work already enqueued; delays are below a millisecond; the legacy
 * next-record event flag is left out (fuzz_api.c says why).  Copies and
 * fills use a buffer per stream (none while the stream captures: the graph
 * may run on any stream), so the program has no data race of its own and the
 * corpus replay is clean under TSan.
 *
 * tests/fuzz/native_all_coverage.sh (CTest fuzz_native_all_covers_evrt_h)
 * checks that every EVRT_EXPORT name of evrt.h is called between the
 * "ops begin" and "ops end" markers below.
 * Encoding: an opcode byte (mod NOPS) then the argument bytes it reads;
 * missing bytes read as 0 (gen_corpus.py writes the seeds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <evrt.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSLOT 4
#define NSTALE 8
#define NBUF 64
#define BUFSZ 64
#define MAXOPS 192
#define NMEM 2

struct in {
  const uint8_t *p;
  size_t n;
};
static uint8_t next(struct in *in) {
  if (!in->n)
    return 0;
  in->n--;
  return *in->p++;
}
static uint64_t next64(struct in *in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)next(in) << (8 * i);
  return v;
}

static bool documented(evrt_status_t st) {
  switch (st) {
#define XX(name, value, msg) case EVRT_##name:
    EVRT_ERRNO_MAP(XX)
#undef XX
    return true;
  }
  return false;
}

static void die(const char *what, int line, evrt_status_t st) {
  fprintf(stderr, "fuzz_native_all: line %d: %s: status %d (%s): %s\n", line,
          what, (int)st, documented(st) ? evrt_err_name(st) : "undocumented",
          evrt_last_error_message());
  abort();
}

/* A call's status: documented, and INVALID_HANDLE when one of its handles
 * was known bad (NULL, stale, other kind). */
static evrt_status_t check(evrt_status_t st, bool bad, bool badarg,
                           const char *call, int line) {
  if (!documented(st))
    die(call, line, st);
  /* a NULL, stale or other-kind handle taken; with a bad argument too,
   * either may be named first */
  if (bad && st != EVRT_ERROR_INVALID_HANDLE &&
      !(badarg && st == EVRT_ERROR_INVALID_VALUE))
    die(call, line, st);
  return st;
}
#define CHECK(call, bad_handle)                                                \
  check((call), (bad_handle), false, #call, __LINE__)
/* The same for a call given a bad argument (NULL output, unknown flag or
 * mode, misaligned or NULL address, a size that wraps) as well. */
#define CHECKA(call, bad_handle)                                               \
  check((call), (bad_handle), true, #call, __LINE__)
/* A failed call with an output: the output is as it was. */
#define CHECK_OUT(call, bad_handle, out, before)                               \
  do {                                                                         \
    evrt_status_t so_ = CHECKA(call, bad_handle);                              \
    if (so_ != EVRT_SUCCESS && so_ != EVRT_NOT_READY &&                        \
        memcmp(&(out), &(before), sizeof(out)) != 0)                           \
      die(#call " failed and wrote its output", __LINE__, so_);                \
  } while (0)
/* A create with no place for its result must fail. */
#define CHECK_NULL_OUT(call)                                                   \
  do {                                                                         \
    evrt_status_t sn_ = CHECK(call, false);                                    \
    if (sn_ == EVRT_SUCCESS)                                                   \
      die(#call " succeeded with a NULL output", __LINE__, sn_);               \
  } while (0)

#define SENT ((void *)(uintptr_t)0x5a5a5a5a5a5a5a50ull)

enum kind { K_STREAM, K_EVENT, K_GRAPH, K_EXEC, NKIND };
static void *live[NKIND][NSLOT];
static void *stale[NKIND][NSTALE];
static int nstale[NKIND];
static int slot_buf[NSLOT];
static unsigned char bufs[NBUF + 3][BUFSZ]; /* per stream, 2 defaults, spare */
static int nbufs;
static void *mem[NMEM];
static size_t mem_len[NMEM];
static void *stale_mem[NSTALE];
static int nstale_mem;
static char keys[NMEM][EVRT_IPC_MEM_KEY_SIZE];
static _Alignas(8) uint64_t zero_word; /* only ever 0: waits without timeout */
static _Alignas(8) uint64_t values[4]; /* written by the value ops */
static const uint32_t switch_index[8] = {0, 1, 2, 3, 4, 5, 6, 7}; /* read
                                            when a graph runs: never written */
static atomic_long host_calls;
static atomic_int shutdown_answer = EVRT_ERROR_WOULD_DEADLOCK;
static atomic_int self_sync_answer = EVRT_ERROR_WOULD_DEADLOCK;
static atomic_int cleanup_done;
static int ncallbacks;

static void retire(enum kind k, int i) {
  stale[k][nstale[k]++ % NSTALE] = live[k][i];
  live[k][i] = NULL;
}

/* A handle of kind k.  *bad: known to be refused.  NULL stands for the
 * default stream where a stream is taken. */
static void *pick(struct in *in, enum kind k, bool *bad) {
  uint8_t b = next(in);
  *bad = false;
  switch (b % 8) {
  case 4: /* stale */
    if (nstale[k]) {
      *bad = true;
      return stale[k][(b >> 3) % (nstale[k] < NSTALE ? nstale[k] : NSTALE)];
    }
    break;
  case 5: { /* a live handle of another kind */
    enum kind o = (enum kind)((k + 1 + (b >> 3) % (NKIND - 1)) % NKIND);
    void *h = live[o][(b >> 5) % NSLOT];
    if (h) {
      *bad = true;
      return h;
    }
    break;
  }
  case 6: { /* forged: may be anything, so nothing is asserted */
    void *h = (void *)(uintptr_t)next64(in);
    if (h)
      return h;
    break;
  }
  case 7: /* NULL */
    break;
  default: {
    void *h = live[k][(b >> 3) % NSLOT];
    if (h)
      return h;
    break;
  }
  }
  *bad = k != K_STREAM;
  return NULL;
}

/* The buffer a stream's copies may touch, or NULL (forged, capturing). */
static unsigned char *stream_buf(evrt_stream_t s) {
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
  if (evrt_stream_capture_status(s, &cs) != EVRT_SUCCESS ||
      cs != EVRT_CAPTURE_STATUS_NONE)
    return NULL;
  if (!s) {
    int d = 0;
    evrt_get_device(&d);
    return bufs[NBUF + d];
  }
  for (int i = 0; i < NSLOT; i++)
    if (live[K_STREAM][i] == (void *)s)
      return slot_buf[i] >= 0 ? bufs[slot_buf[i]] : NULL;
  for (int d = 0; d < 2; d++) {
    evrt_stream_t ds = NULL;
    if (evrt_stream_default(d, &ds) == EVRT_SUCCESS && ds == s)
      return bufs[NBUF + d];
  }
  return NULL;
}

static int garbage_device(struct in *in) {
  static const int devs[] = {0, 1, -1, 2, -2, -3, 7, 1 << 30, -2147483647 - 1,
                             2147483647};
  return devs[next(in) % (sizeof devs / sizeof devs[0])];
}
static int64_t small_timeout(struct in *in) {
  uint8_t b = next(in);
  return b == 0xff ? -1 : (int64_t)(b % 64) * 10000; /* up to 0.63 ms */
}
static size_t garbage_size(struct in *in) {
  static const size_t sizes[] = {0, 1, 7, 8, 64, 4096, 4097, 3 * 4096,
                                 SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2,
                                 (size_t)1 << 62};
  return sizes[next(in) % (sizeof sizes / sizeof sizes[0])];
}
static void garbage_string(struct in *in, char *s, size_t cap) {
  size_t n = next(in) % cap;
  for (size_t k = 0; k < n; k++)
    s[k] = (char)next(in);
  s[n] = 0;
}

/* ops begin */
static void noop(void *p) {
  (void)p;
  atomic_fetch_add_explicit(&host_calls, 1, memory_order_relaxed);
  (void)evrt_host_func_cancelled();
}
static int32_t status_fn(void *p) { return (int32_t)(intptr_t)p; }
static void try_shutdown(void *p) {
  (void)p;
  /* [!hostfn]: refused in a host function; anything else ends the run */
  evrt_status_t st = evrt_shutdown();
  if (st != EVRT_ERROR_WOULD_DEADLOCK)
    atomic_store(&shutdown_answer, (int)st);
}
/* user_data: the slot stream that runs it, not capturing when enqueued, so
 * it is its own stream: a wait for it cannot end ([hostfn*]).  Destroyed
 * meanwhile: INVALID_HANDLE; a GLOBAL capture active anywhere: refused as
 * an unsafe call (the worker's mode is GLOBAL). */
static void self_sync(void *p) {
  evrt_status_t st = evrt_stream_synchronize((evrt_stream_t)p);
  if (st != EVRT_ERROR_WOULD_DEADLOCK && st != EVRT_ERROR_INVALID_HANDLE &&
      st != EVRT_ERROR_CAPTURE_UNSUPPORTED)
    atomic_store(&self_sync_answer, (int)st);
}
static void on_failure(const evrt_task_failure_t *f, void *ud) {
  (void)ud;
  if (!f || (f->status != EVRT_ERROR_TASK_FAILED &&
             f->status != EVRT_ERROR_ABORTED))
    abort();
}
static void release_nothing(void *p) { (void)p; }
static void mark_done(void *p) {
  (void)p;
  atomic_store_explicit(&cleanup_done, 1, memory_order_release);
}

enum {
  OP_STREAM_CREATE, OP_STREAM_DESTROY, OP_EVENT_CREATE, OP_EVENT_DESTROY,
  OP_RECORD, OP_WAIT, OP_EVENT_Q, OP_STREAM_Q, OP_SYNC, OP_DEVICE_SYNC,
  OP_WORK, OP_MEM, OP_VALUE, OP_CAPTURE_BEGIN, OP_CAPTURE_END,
  OP_CAPTURE_CTRL, OP_INSTANTIATE, OP_GRAPH, OP_FAILURE, OP_THREAD,
  OP_DEVICE, OP_IPC_EVENT, OP_IPC_MEM, OP_CHECK, OP_TRACE, OP_LIB, NOPS
};

static void op_stream_create(struct in *in) {
  int i = next(in) % NSLOT;
  int dev = garbage_device(in);
  int prio = (int)(int8_t)next(in);
  unsigned flags = next(in) % 4 == 0 ? (unsigned)next(in) << (next(in) % 32) : 0;
  evrt_stream_t s = SENT, before = SENT;
  evrt_status_t st = CHECKA(evrt_stream_create(&s, dev, prio, flags), false);
  CHECK_OUT(st, false, s, before);
  if (st == EVRT_SUCCESS) {
    if (live[K_STREAM][i] &&
        evrt_stream_destroy(live[K_STREAM][i]) != EVRT_SUCCESS) {
      /* capturing: keep the old one, drop the new */
      CHECK(evrt_stream_destroy(s), false);
      return;
    }
    if (live[K_STREAM][i])
      retire(K_STREAM, i);
    live[K_STREAM][i] = s;
    slot_buf[i] = nbufs < NBUF ? nbufs++ : -1;
  }
  CHECK_NULL_OUT(evrt_stream_create(NULL, 0, 0, 0));
  evrt_stream_t d = SENT, dbefore = SENT;
  CHECK_OUT(evrt_stream_default(dev, &d), false, d, dbefore);
  CHECKA(evrt_stream_default(dev, NULL), false);
}

static void op_stream_destroy(struct in *in) {
  bool bad;
  uint8_t b = next(in);
  if (b % 2 == 0) {
    int i = (b >> 1) % NSLOT;
    if (live[K_STREAM][i] &&
        CHECK(evrt_stream_destroy(live[K_STREAM][i]), false) == EVRT_SUCCESS)
      retire(K_STREAM, i);
    return;
  }
  evrt_stream_t s = pick(in, K_STREAM, &bad);
  if (bad)
    CHECK(evrt_stream_destroy(s), true);
  else if (!s && CHECKA(evrt_stream_destroy(NULL), false) !=
                     EVRT_ERROR_NOT_PERMITTED)
    die("destroying the default stream", __LINE__, EVRT_SUCCESS);
}

static void op_event_create(struct in *in) {
  int i = next(in) % NSLOT;
  unsigned flags = next(in);
  flags = (flags & 0x80) ? flags << (next(in) % 24) : (flags & ~0x08u);
  evrt_event_t e = SENT, before = SENT;
  evrt_status_t st = CHECKA(evrt_event_create(&e, flags & ~0x08u), false);
  CHECK_OUT(st, false, e, before);
  if (st == EVRT_SUCCESS) {
    if (live[K_EVENT][i]) {
      CHECK(evrt_event_destroy(live[K_EVENT][i]), false);
      retire(K_EVENT, i);
    }
    live[K_EVENT][i] = e;
  }
  CHECK_NULL_OUT(evrt_event_create(NULL, 0));
}

static void op_event_destroy(struct in *in) {
  bool bad;
  uint8_t b = next(in);
  if (b % 2 == 0) {
    int i = (b >> 1) % NSLOT;
    if (live[K_EVENT][i]) {
      CHECK(evrt_event_destroy(live[K_EVENT][i]), false);
      retire(K_EVENT, i);
    }
    return;
  }
  evrt_event_t e = pick(in, K_EVENT, &bad);
  if (bad)
    CHECK(evrt_event_destroy(e), true);
}

static void op_record(struct in *in) {
  bool be, bs;
  evrt_event_t e = pick(in, K_EVENT, &be);
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  if (b % 3 == 0)
    CHECK(evrt_event_record(e, s), be || bs);
  else if (b % 3 == 1)
    CHECKA(evrt_event_record_with_flags(e, s, (unsigned)(b >> 2) & 0x21u),
          be || bs);
  else
    CHECK(evrt_event_reset(e, s), be || bs);
}

static void op_wait(struct in *in) {
  bool be, bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  evrt_event_t e = pick(in, K_EVENT, &be);
  uint8_t b = next(in);
  if (b % 3 == 0)
    CHECK(evrt_stream_wait_event(s, e), be || bs);
  else if (b % 3 == 1)
    CHECKA(evrt_stream_wait_event_with_flags(s, e, (unsigned)(b >> 2) & 0x21u),
          be || bs);
  else
    CHECK(evrt_stream_wait_event_timeout(s, e, small_timeout(in)), be || bs);
}

static void op_event_q(struct in *in) {
  bool be, b2;
  evrt_event_t e = pick(in, K_EVENT, &be);
  evrt_event_t e2 = pick(in, K_EVENT, &b2);
  CHECK(evrt_event_query(e), be);
  CHECK(evrt_event_wait_status(e), be);
  float ms = -1.0f, msb = -1.0f;
  CHECK_OUT(evrt_event_elapsed_time(&ms, e, e2), be || b2, ms, msb);
  CHECKA(evrt_event_elapsed_time(NULL, e, e2), false);
  uint64_t ts = 7, tsb = 7, id = 7, idb = 7;
  CHECK_OUT(evrt_event_timestamp(e, &ts), be, ts, tsb);
  CHECKA(evrt_event_timestamp(e, NULL), false);
  evrt_event_info_t info, ib;
  memset(&info, 0x5a, sizeof info);
  uint8_t sz = next(in);
  info.struct_size = sz % 4 == 0 ? sz : (uint32_t)sizeof info;
  ib = info;
  CHECK_OUT(evrt_event_get_info(e, &info), be, info, ib);
  CHECKA(evrt_event_get_info(e, NULL), be);
  int d = 7, db = 7;
  CHECK_OUT(evrt_event_get_device(e, &d), be, d, db);
  CHECKA(evrt_event_get_device(e, NULL), be);
  CHECK_OUT(evrt_event_get_id(e, &id), be, id, idb);
  CHECKA(evrt_event_get_id(e, NULL), be);
}

static void op_stream_q(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  CHECK(evrt_stream_query(s), bs);
  uint64_t n = 7, nb = 7;
  CHECK_OUT(evrt_stream_wait_failures(s, &n), bs, n, nb);
  CHECKA(evrt_stream_wait_failures(s, NULL), bs);
  int v = 7, vb = 7;
  CHECK_OUT(evrt_stream_get_device(s, &v), bs, v, vb);
  CHECK_OUT(evrt_stream_get_priority(s, &v), bs, v, vb);
  CHECKA(evrt_stream_get_priority(s, NULL), bs);
  CHECK_OUT(evrt_stream_get_id(s, &n), bs, n, nb);
  CHECKA(evrt_stream_get_device(s, NULL), bs);
  char name[80];
  garbage_string(in, name, sizeof name);
  CHECKA(evrt_stream_set_name(s, next(in) % 4 ? name : NULL), bs);
}

static void op_sync(struct in *in) {
  bool b;
  uint8_t w = next(in);
  int64_t t = small_timeout(in);
  if (w % 2) {
    evrt_stream_t s = pick(in, K_STREAM, &b);
    if (w % 4 == 1)
      CHECK(evrt_stream_synchronize_timeout(s, t < 0 ? 0 : t), b);
    else
      CHECK(evrt_stream_synchronize(s), b);
  } else {
    evrt_event_t e = pick(in, K_EVENT, &b);
    if (w % 4 == 0)
      CHECK(evrt_event_synchronize_timeout(e, t < 0 ? 0 : t), b);
    else
      CHECK(evrt_event_synchronize(e), b);
  }
}

static void op_device_sync(struct in *in) {
  int d = garbage_device(in);
  if (next(in) % 2)
    CHECK(evrt_device_synchronize(d), false);
  else
    CHECK(evrt_device_synchronize_timeout(d, small_timeout(in)), false);
  evrt_host_fn fn = next(in) % 4 ? noop : NULL;
  CHECKA(evrt_device_launch_host_func(next(in) % 2 ? d : EVRT_DEVICE_ALL, fn,
                                     NULL),
        false);
}

static void op_work(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  char label[48];
  switch (b % 7) {
  case 0:
    CHECKA(evrt_launch_host_func(s, b & 8 ? noop : NULL, NULL), bs);
    break;
  case 1:
    garbage_string(in, label, sizeof label);
    CHECKA(evrt_launch_host_func_labeled(s, b & 8 ? noop : NULL, NULL,
                                        b & 16 ? label : NULL),
          bs);
    break;
  case 2:
    CHECKA(evrt_launch_host_func_status(s, b & 8 ? status_fn : NULL,
                                       (void *)(intptr_t)(b >> 4)),
          bs);
    break;
  case 3:
    CHECK(evrt_stream_delay(s, (uint64_t)(next(in) % 32) * 20000), bs);
    break;
  case 4:
    CHECK(evrt_stream_delay(s, 0), bs);
    break;
  case 5:
    if ((b & 8) && !bs && s && stream_buf(s)) {
      for (int i = 0; i < NSLOT; i++)
        if (live[K_STREAM][i] == (void *)s)
          CHECK(evrt_launch_host_func(s, self_sync, s), false);
    } else {
      CHECK(evrt_launch_host_func(s, try_shutdown, NULL), bs);
    }
    break;
  default:
    CHECK(evrt_stream_stop(s), bs);
    CHECK(evrt_stream_abort(s), bs);
    break;
  }
}

static void op_mem(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  size_t off = next(in) % BUFSZ, off2 = next(in) % BUFSZ;
  size_t n = next(in) % (BUFSZ - (off > off2 ? off : off2) + 1);
  unsigned char *base = bs ? NULL : stream_buf(s);
  switch (b % 4) {
  case 0: /* NULL pointers, huge sizes */
    CHECKA(evrt_memcpy_async(s, NULL, base ? base : NULL, garbage_size(in) | 1),
          bs);
    CHECKA(evrt_memset_async(s, NULL, (int)b, garbage_size(in) | 1), bs);
    break;
  case 1: /* ranges that wrap the address space */
    CHECKA(evrt_memcpy_async(s, (void *)(uintptr_t)-16, (void *)(uintptr_t)-32,
                            64),
          bs);
    CHECKA(evrt_memset_async(s, (void *)(uintptr_t)-16, 0, 64), bs);
    break;
  default:
    if (!base) {
      CHECK(evrt_memcpy_async(s, bufs[NBUF + 2], bufs[NBUF + 2], 0), bs);
    } else if (b % 4 == 2) {
      CHECK(evrt_memcpy_async(s, base + off, base + off2, n), bs);
    } else {
      CHECK(evrt_memset_async(s, base + off, (int)next(in) << (b >> 5), n),
            bs);
    }
  }
}

static void op_value(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  uint64_t v = next64(in);
  uint64_t *w = &values[next(in) % 4];
  uint64_t *odd = (uint64_t *)((char *)w + 1 + b % 7); /* misaligned */
  static const unsigned conds[] = {EVRT_VALUE_WAIT_GEQ, EVRT_VALUE_WAIT_EQ,
                                   EVRT_VALUE_WAIT_NOR};
  unsigned mods = (unsigned)(b >> 4) & 0x7u;
  unsigned flags = conds[(b >> 2) % 3] | (mods << 4);
  switch (b % 4) {
  case 0: /* holds at once on the zero word: no wait without end */
    CHECKA(evrt_stream_wait_value64(s, &zero_word, 0, flags), bs);
    CHECKA(evrt_stream_wait_value64(s, NULL, 0, 0), bs);
    CHECKA(evrt_stream_wait_value64(s, odd, 0, 0), bs);
    CHECK(evrt_stream_wait_value64(s, &zero_word, 0, 0x80u << (b >> 5)), bs);
    break;
  case 1:
  {
    /* any condition on a word anything writes: the timeout (never
     * negative here) ends it */
    int64_t t = small_timeout(in);
    CHECKA(evrt_stream_wait_value64_timeout(s, w, v, (unsigned)next(in),
                                           t < 0 ? 0 : t),
          bs);
  }
    break;
  case 2:
    CHECKA(evrt_stream_write_value64(s, next(in) % 4 ? w : odd, v,
                                    next(in) % 4 ? 0 : b),
          bs);
    CHECKA(evrt_stream_write_value64(s, NULL, v, 0), bs);
    break;
  default:
    CHECKA(evrt_value_write64(next(in) % 4 ? w : odd, v), false);
    CHECKA(evrt_value_write64(NULL, v), false);
    CHECKA(evrt_value_notify(next(in) % 2 ? (void *)w : NULL, garbage_size(in)),
          false);
    CHECKA(evrt_value_notify((void *)(uintptr_t)-8, 64), false);
  }
}

static void op_capture_begin(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t m = next(in);
  evrt_capture_mode_t mode = (evrt_capture_mode_t)(m % 8 < 3 ? m % 8 : m);
  CHECKA(evrt_stream_begin_capture(s, mode), bs);
}

static void op_capture_end(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  evrt_graph_t g = SENT;
  evrt_status_t st = CHECK(evrt_stream_end_capture(s, &g), bs);
  if (st == EVRT_SUCCESS) {
    int i = next(in) % NSLOT;
    if (live[K_GRAPH][i]) {
      CHECK(evrt_graph_destroy(live[K_GRAPH][i]), false);
      retire(K_GRAPH, i);
    }
    live[K_GRAPH][i] = g;
  } else if (g != SENT && !(g == NULL &&
                            (st == EVRT_ERROR_CAPTURE_INVALIDATED ||
                             st == EVRT_ERROR_CAPTURE_UNJOINED))) {
    die("a failed end_capture wrote its graph", __LINE__, st);
  }
  CHECKA(evrt_stream_end_capture(s, NULL), false);
  evrt_capture_status_t cs = 77, csb = 77;
  uint64_t id = 7, idb = 7;
  CHECK_OUT(evrt_stream_capture_status(s, &cs), bs, cs, csb);
  CHECKA(evrt_stream_capture_status(s, NULL), false);
  cs = 77;
  CHECK_OUT(evrt_stream_capture_info(s, &cs, &id), bs, cs, csb);
  CHECK_OUT(evrt_stream_capture_info(s, NULL, &id), bs, id, idb);
  CHECKA(evrt_stream_capture_info(s, NULL, NULL), bs);
}

static void op_capture_ctrl(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  uint64_t labels[16];
  uint32_t count = next(in) % 17;
  for (uint32_t k = 0; k < count; k++)
    labels[k] = next(in) % 4;
  switch (b % 4) {
  case 0:
    CHECK(evrt_stream_capture_label(s, next(in) % 4), bs);
    break;
  case 1:
    CHECKA(evrt_stream_capture_switch(s, &switch_index[next(in) % 8], labels,
                                     count),
          bs);
    break;
  case 2:
    CHECKA(evrt_stream_capture_switch(s, NULL, labels, count), bs);
    CHECKA(evrt_stream_capture_switch(s, switch_index, NULL, UINT32_MAX), bs);
    break;
  default:
    CHECK(evrt_capture_unsafe_call(), false);
  }
}

static void op_instantiate(struct in *in) {
  bool bg;
  evrt_graph_t g = pick(in, K_GRAPH, &bg);
  evrt_graph_exec_t x = SENT, xb = SENT;
  evrt_status_t st = CHECK(evrt_graph_instantiate(&x, g), bg);
  CHECK_OUT(st, bg, x, xb);
  if (st == EVRT_SUCCESS) {
    int i = next(in) % NSLOT;
    if (live[K_EXEC][i]) {
      CHECK(evrt_graph_exec_destroy(live[K_EXEC][i]), false);
      retire(K_EXEC, i);
    }
    live[K_EXEC][i] = x;
  }
  CHECK_NULL_OUT(evrt_graph_instantiate(NULL, g));
}

static void op_graph(struct in *in) {
  bool bg, bx, bs;
  uint8_t b = next(in);
  evrt_graph_t g = pick(in, K_GRAPH, &bg);
  switch (b % 5) {
  case 0: {
    evrt_graph_exec_t x = pick(in, K_EXEC, &bx);
    evrt_stream_t s = pick(in, K_STREAM, &bs);
    int reps = 1 + next(in) % 3;
    for (int r = 0; r < reps; r++)
      CHECK(evrt_graph_launch(x, s), bx || bs);
    break;
  }
  case 1: { /* destroy: the slot's object or a bad handle */
    int i = next(in) % NSLOT;
    if (b & 8) {
      if (live[K_EXEC][i]) {
        CHECK(evrt_graph_exec_destroy(live[K_EXEC][i]), false);
        retire(K_EXEC, i);
      } else {
        evrt_graph_exec_t x = pick(in, K_EXEC, &bx);
        if (bx)
          CHECK(evrt_graph_exec_destroy(x), true);
      }
    } else if (live[K_GRAPH][i]) {
      CHECK(evrt_graph_destroy(live[K_GRAPH][i]), false);
      retire(K_GRAPH, i);
    } else if (bg) {
      CHECK(evrt_graph_destroy(g), true);
    }
    break;
  }
  case 2: {
    size_t n = 7, nb = 7;
    uint32_t lanes = 7, lb = 7;
    CHECK_OUT(evrt_graph_node_count(g, &n), bg, n, nb);
    CHECKA(evrt_graph_node_count(g, NULL), bg);
    CHECK_OUT(evrt_graph_lane_count(g, &lanes), bg, lanes, lb);
    CHECKA(evrt_graph_lane_count(g, NULL), bg);
    break;
  }
  case 3: {
    size_t idx = next(in) % 2 ? next(in) % 8 : garbage_size(in);
    evrt_graph_node_type_t t = 77, tb = 77;
    uint32_t lane = 7, lb = 7;
    CHECK_OUT(evrt_graph_node_get(g, idx, &t, &lane), bg, t, tb);
    CHECK_OUT(evrt_graph_node_get(g, idx, NULL, &lane), bg, lane, lb);
    CHECKA(evrt_graph_node_get(g, idx, NULL, NULL), bg);
    break;
  }
  default:
    CHECKA(evrt_graph_debug_dot_print(
              g, b & 8 ? "/dev/null"
                       : (b & 16 ? "/nonexistent-evrt-fuzz/g.dot" : NULL)),
          bg);
  }
}

static void op_failure(struct in *in) {
  bool bs;
  evrt_stream_t s = pick(in, K_STREAM, &bs);
  uint8_t b = next(in);
  evrt_task_failure_t f, fb;
  memset(&f, 0x5a, sizeof f);
  fb = f;
  switch (b % 5) {
  case 0: {
    unsigned mode = b & 8 ? EVRT_FAILURE_STOP
                          : (b & 16 ? (unsigned)next(in) << (b >> 5)
                                    : EVRT_FAILURE_CONTINUE);
    CHECKA(evrt_stream_set_failure_mode(s, mode), bs);
    break;
  }
  case 1:
    CHECK_OUT(evrt_stream_get_error(s, &f), bs, f, fb);
    CHECKA(evrt_stream_get_error(s, NULL), bs);
    break;
  case 2:
    CHECKA(evrt_stream_clear_error(s, b & 8 ? &f : NULL), bs);
    break;
  case 3:
    CHECKA(evrt_last_task_failure(b & 8 ? &f : NULL), false);
    break;
  default: {
    void *ud = (void *)(uintptr_t)(next(in) % 4);
    evrt_failure_fn fn = b & 8 ? on_failure : NULL;
    if (b & 16) {
      if (CHECK(evrt_failure_callback_add(fn, ud), false) == EVRT_SUCCESS)
        ncallbacks++;
    } else {
      CHECK(evrt_failure_callback_remove(fn, ud), false);
    }
  }
  }
}

static void op_thread(struct in *in) {
  bool bs;
  uint8_t b = next(in);
  switch (b % 4) {
  case 0: {
    evrt_capture_mode_t m =
        (evrt_capture_mode_t)(b & 8 ? next(in) : next(in) % 3);
    evrt_capture_mode_t before = m;
    evrt_status_t st = CHECKA(evrt_thread_exchange_capture_mode(&m), false);
    if (st != EVRT_SUCCESS && m != before)
      die("a failed exchange_capture_mode wrote its mode", __LINE__, st);
    CHECKA(evrt_thread_exchange_capture_mode(NULL), false);
    break;
  }
  case 1: {
    evrt_stream_t s = pick(in, K_STREAM, &bs);
    uint64_t task = next(in) % 4 ? next(in) % 8 : UINT64_MAX;
    CHECKA(evrt_thread_serve_begin(s, task), bs);
    break;
  }
  case 2:
    evrt_thread_serve_end();
    break;
  default: {
    uint64_t sid = 7, tid = 7;
    CHECK(evrt_thread_last_task(&sid, &tid), false);
    CHECKA(evrt_thread_last_task(NULL, b & 8 ? &tid : NULL), false);
    if (evrt_thread_id() == 0)
      die("evrt_thread_id is 0", __LINE__, EVRT_SUCCESS);
    (void)evrt_host_func_cancelled();
  }
  }
}

static void op_device(struct in *in) {
  int d = garbage_device(in);
  int c = 7, cb = 7;
  uint8_t b = next(in);
  evrt_status_t st = CHECK(evrt_set_device(d), false);
  if (st != EVRT_SUCCESS)
    CHECK_OUT(evrt_get_device(&c), false, c, cb);
  CHECKA(evrt_get_device(NULL), false);
  CHECKA(evrt_device_count(b & 1 ? &c : NULL), false);
  uint32_t v = (uint32_t)next(in) * (b & 2 ? 1u : 300u), v0 = 7, vb = 7;
  if (b & 4)
    v = UINT32_MAX;
  CHECK(evrt_device_set_event_limit(d, v), false);
  CHECK_OUT(evrt_device_get_event_limit(d, &v0), false, v0, vb);
  CHECKA(evrt_device_get_event_limit(d, NULL), false);
  CHECK_OUT(evrt_device_event_available(d, &v0), false, v0, vb);
  CHECKA(evrt_device_event_available(d, NULL), false);
}

static void op_ipc_event(struct in *in) {
  bool be;
  evrt_event_t e = pick(in, K_EVENT, &be);
  evrt_ipc_event_handle_t h, hb;
  memset(&h, 0x5a, sizeof h);
  hb = h;
  evrt_status_t st = CHECK(evrt_event_ipc_handle(e, &h), be);
  if (st != EVRT_SUCCESS && memcmp(&h, &hb, sizeof h))
    die("a failed ipc_handle wrote its handle", __LINE__, st);
  if (st != EVRT_SUCCESS)
    for (size_t k = 0; k < sizeof h.reserved; k++)
      h.reserved[k] = next(in);
  h.reserved[next(in) % EVRT_IPC_HANDLE_SIZE] ^= next(in);
  evrt_event_t x = SENT, xb = SENT;
  st = CHECK(evrt_event_ipc_open(&x, &h), false);
  CHECK_OUT(st, false, x, xb);
  if (st == EVRT_SUCCESS)
    CHECK(evrt_event_destroy(x), false);
  CHECKA(evrt_event_ipc_open(&x, NULL), false);
  CHECK_NULL_OUT(evrt_event_ipc_open(NULL, &h));
  CHECKA(evrt_event_ipc_handle(e, NULL), be);
}

static void op_ipc_mem(struct in *in) {
  uint8_t b = next(in);
  int i = next(in) % NMEM;
  switch (b % 6) {
  case 0: {
    void *p = SENT, *pb = SENT;
    size_t n = b & 8 ? garbage_size(in) : 1 + next(in) * 64u;
    evrt_status_t st = CHECK(evrt_ipc_mem_alloc(n, &p), false);
    CHECK_OUT(st, false, p, pb);
    if (st == EVRT_SUCCESS) {
      if (mem[i]) {
        CHECK(evrt_ipc_mem_free(mem[i]), false);
        stale_mem[nstale_mem++ % NSTALE] = mem[i];
      }
      mem[i] = p;
      mem_len[i] = n;
      keys[i][0] = 0;
    }
    CHECK_NULL_OUT(evrt_ipc_mem_alloc(64, NULL));
    break;
  }
  case 1: { /* free: a live block (maybe exported), or what is not one */
    if ((b & 24) == 0) {
      if (mem[i]) {
        CHECK(evrt_ipc_mem_free(mem[i]), false);
        stale_mem[nstale_mem++ % NSTALE] = mem[i];
        mem[i] = NULL;
      }
      break;
    }
    void *p = NULL;
    if ((b & 24) == 8 && nstale_mem)
      p = stale_mem[(b >> 5) % (nstale_mem < NSTALE ? nstale_mem : NSTALE)];
    else if ((b & 24) == 16)
      p = mem[i] ? (char *)mem[i] + 1 + next(in) : (void *)bufs;
    else if ((b & 24) == 24)
      p = (void *)(uintptr_t)next64(in);
    if (p && (p == mem[0] || p == mem[1]))
      break; /* a stale or forged value that is a live block again */
    if (CHECK(evrt_ipc_mem_free(p), false) == EVRT_SUCCESS)
      die("freed what evrt_ipc_mem_alloc did not return", __LINE__,
          EVRT_SUCCESS);
    break;
  }
  case 2: {
    char key[EVRT_IPC_MEM_KEY_SIZE], kb[EVRT_IPC_MEM_KEY_SIZE];
    memset(key, 'k', sizeof key);
    memcpy(kb, key, sizeof key);
    size_t off = b & 8 ? 4096u * (next(in) % 2) : next(in);
    size_t n = b & 16 ? garbage_size(in) : (mem_len[i] ? mem_len[i] : 64);
    unsigned flags = b & 32 ? next(in) : EVRT_IPC_MEM_NO_PID_CHECK * (b >> 7);
    void *p = mem[i] ? (char *)mem[i] + off : (void *)bufs;
    evrt_status_t st = CHECKA(evrt_ipc_mem_export(p, n, flags, key), false);
    if (st == EVRT_SUCCESS)
      memcpy(keys[i], key, sizeof key);
    else if (memcmp(key, kb, sizeof key))
      die("a failed export wrote its key", __LINE__, st);
    CHECKA(evrt_ipc_mem_export(p, n, flags, NULL), false);
    break;
  }
  case 3: {
    int32_t pids[4] = {(int32_t)next64(in), 1, -1, 0};
    size_t n = next(in) % 5;
    const char *key = b & 8 ? keys[i] : NULL;
    CHECKA(evrt_ipc_mem_set_import_pids(key, b & 16 ? NULL : pids, n), false);
    break;
  }
  case 4: {
    char key[EVRT_IPC_MEM_KEY_SIZE];
    memcpy(key, keys[i], sizeof key);
    if (b & 8)
      key[next(in) % 64] ^= (char)next(in);
    if (b & 16)
      garbage_string(in, key, sizeof key);
    void *p = SENT, *pb = SENT;
    size_t n = 7, nb = 7;
    evrt_status_t st =
        CHECK(evrt_ipc_mem_import(key, b & 32 ? next(in) : 0, &p, &n), false);
    if (st == EVRT_SUCCESS)
      die("a key of this process imported", __LINE__, st);
    CHECK_OUT(st, false, p, pb);
    CHECK_OUT(st, false, n, nb);
    CHECKA(evrt_ipc_mem_import(key, 0, NULL, NULL), false);
    CHECKA(evrt_ipc_mem_import(NULL, 0, &p, &n), false);
    break;
  }
  default: {
    char key[EVRT_IPC_MEM_KEY_SIZE];
    memcpy(key, keys[i], sizeof key);
    if (b & 8)
      garbage_string(in, key, sizeof key);
    CHECKA(evrt_ipc_mem_close(b & 16 ? NULL : key), false);
  }
  }
}

static void op_check(struct in *in) {
  uint8_t b = next(in);
  unsigned char *p = b & 8 ? bufs[NBUF + 2] : (unsigned char *)(uintptr_t)next64(in);
  size_t n = b & 16 ? garbage_size(in) : next(in) % BUFSZ;
  if (!(b & 8) && n > 64)
    n = 64; /* a forged pointer: any range in the address space */
  unsigned mode = b & 32 ? (unsigned)next(in) : 1u + next(in) % 3;
  char site[300];
  switch (b % 5) {
  case 0:
    CHECKA(evrt_check_access(p, n, mode), false);
    CHECKA(evrt_check_access(NULL, n, EVRT_CHECK_READ), false);
    break;
  case 1:
    CHECK(evrt_check_alloc(p, n), false);
    CHECKA(evrt_check_free(p, n, b & 64 ? release_nothing : NULL), false);
    break;
  case 2:
    CHECKA(evrt_check_release(b & 64 ? (void *)p : NULL), false);
    CHECKA(evrt_check_acquire(b & 128 ? (void *)p : NULL), false);
    CHECKA(evrt_check_forget(b & 64 ? (void *)p : NULL), false);
    break;
  case 3:
    garbage_string(in, site, b & 64 ? sizeof site : 32);
    CHECKA(evrt_check_site(b & 128 ? NULL : site), false);
    /* an API tag in range or garbage (INVALID_VALUE, nothing changed) */
    CHECKA(evrt_check_site_api(b & 128 ? NULL : site,
                               b & 32 ? mode : EVRT_CHECK_API_PYTHON),
           false);
    break;
  default:
    (void)evrt_check_enabled();
    (void)evrt_check_findings();
    /* balanced, or an end without a begin (INVALID_VALUE with the checker
     * on, nothing changed) */
    if (b & 64)
      CHECKA(evrt_check_unobserved_begin(), false);
    CHECKA(evrt_check_unobserved_end(), false);
    CHECKA(evrt_check_free(NULL, n, release_nothing), false);
  }
}

static void op_trace(struct in *in) {
  uint8_t b = next(in);
  switch (b % 3) {
  case 0:
    CHECKA(evrt_trace_start(b & 8 ? "/dev/null"
                                 : (b & 16 ? "/nonexistent-evrt-fuzz/t.json"
                                           : NULL)),
          false);
    break;
  case 1:
    CHECK(evrt_trace_stop(), false);
    break;
  default:
    (void)evrt_trace_dropped();
  }
}

static void op_lib(struct in *in) {
  uint8_t b = next(in);
  evrt_status_t st = (evrt_status_t)(int)(next(in) * 3 - (b & 1 ? 256 : 0));
  if (!evrt_err_name(st) || !evrt_strerror(st))
    die("a status without a name or message", __LINE__, st);
  if (!evrt_last_error_message())
    die("no last error message", __LINE__, st);
  CHECK(evrt_last_error(), false);
  if (b & 2)
    evrt_clear_last_error();
  if (evrt_version() != EVRT_VERSION_HEX || !evrt_version_string())
    die("version", __LINE__, EVRT_SUCCESS);
  int init = 7;
  CHECK(evrt_is_initialized(&init), false);
  if (init != 1)
    die("initialized", __LINE__, EVRT_SUCCESS);
  CHECKA(evrt_is_initialized(NULL), false);
  CHECK(evrt_init(), false);
}

static bool trace; /* FUZZ_NATIVE_TRACE=1: each opcode and its bytes */
static const char *const op_names[NOPS] = {
    "stream_create", "stream_destroy", "event_create", "event_destroy",
    "record", "wait", "event_q", "stream_q", "sync", "device_sync", "work",
    "mem", "value", "capture_begin", "capture_end", "capture_ctrl",
    "instantiate", "graph", "failure", "thread", "device", "ipc_event",
    "ipc_mem", "check", "trace", "lib"};

static void run_op(struct in *in) {
  unsigned op = next(in) % NOPS;
  if (trace) {
    fprintf(stderr, "fuzz_native_all: %s:", op_names[op]);
    for (size_t k = 0; k < in->n && k < 12; k++)
      fprintf(stderr, " %u", in->p[k]);
    fprintf(stderr, "\n");
  }
  switch (op) {
  case OP_STREAM_CREATE: op_stream_create(in); break;
  case OP_STREAM_DESTROY: op_stream_destroy(in); break;
  case OP_EVENT_CREATE: op_event_create(in); break;
  case OP_EVENT_DESTROY: op_event_destroy(in); break;
  case OP_RECORD: op_record(in); break;
  case OP_WAIT: op_wait(in); break;
  case OP_EVENT_Q: op_event_q(in); break;
  case OP_STREAM_Q: op_stream_q(in); break;
  case OP_SYNC: op_sync(in); break;
  case OP_DEVICE_SYNC: op_device_sync(in); break;
  case OP_WORK: op_work(in); break;
  case OP_MEM: op_mem(in); break;
  case OP_VALUE: op_value(in); break;
  case OP_CAPTURE_BEGIN: op_capture_begin(in); break;
  case OP_CAPTURE_END: op_capture_end(in); break;
  case OP_CAPTURE_CTRL: op_capture_ctrl(in); break;
  case OP_INSTANTIATE: op_instantiate(in); break;
  case OP_GRAPH: op_graph(in); break;
  case OP_FAILURE: op_failure(in); break;
  case OP_THREAD: op_thread(in); break;
  case OP_DEVICE: op_device(in); break;
  case OP_IPC_EVENT: op_ipc_event(in); break;
  case OP_IPC_MEM: op_ipc_mem(in); break;
  case OP_CHECK: op_check(in); break;
  case OP_TRACE: op_trace(in); break;
  default: op_lib(in); break;
  }
}
/* ops end */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("EVRT_CPU_DEVICES", "2", 1);
  trace = getenv("FUZZ_NATIVE_TRACE") != NULL;
  if (evrt_init() != EVRT_SUCCESS)
    abort();
  return 0;
}

/* End every capture that a slot stream takes part in (a joined stream's end
 * is UNMATCHED and invalidates; the origin's end then ends it). */
static void end_captures(void) {
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < NSLOT; i++) {
      evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
      if (!live[K_STREAM][i] ||
          evrt_stream_capture_status(live[K_STREAM][i], &cs) ||
          cs == EVRT_CAPTURE_STATUS_NONE)
        continue;
      evrt_graph_t g = NULL;
      if (CHECK(evrt_stream_end_capture(live[K_STREAM][i], &g), false) ==
              EVRT_SUCCESS &&
          g)
        CHECK(evrt_graph_destroy(g), false);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct in in = {data, size};
  nbufs = 0;
  for (int k = 0; k < MAXOPS && in.n; k++)
    run_op(&in);

  /* Clean up: no serving, relaxed mode (a capture of a lost stream must not
   * refuse the waits below), captures ended, objects destroyed, and every
   * stream (destroyed ones included) past its work before the next input
   * reuses the buffers. */
  evrt_thread_serve_end();
  evrt_capture_mode_t m = EVRT_CAPTURE_MODE_RELAXED;
  CHECK(evrt_thread_exchange_capture_mode(&m), false);
  end_captures();
  for (int i = 0; i < NSLOT; i++) {
    if (live[K_EXEC][i]) {
      CHECK(evrt_graph_exec_destroy(live[K_EXEC][i]), false);
      retire(K_EXEC, i);
    }
    if (live[K_GRAPH][i]) {
      CHECK(evrt_graph_destroy(live[K_GRAPH][i]), false);
      retire(K_GRAPH, i);
    }
    if (live[K_EVENT][i]) {
      CHECK(evrt_event_destroy(live[K_EVENT][i]), false);
      retire(K_EVENT, i);
    }
  }
  for (int i = 0; i < NSLOT; i++) {
    if (!live[K_STREAM][i])
      continue;
    CHECK(evrt_stream_clear_error(live[K_STREAM][i], NULL), false);
    evrt_status_t st = CHECK(evrt_stream_destroy(live[K_STREAM][i]), false);
    if (st == EVRT_ERROR_CAPTURE_UNSUPPORTED) {
      end_captures();
      st = CHECK(evrt_stream_destroy(live[K_STREAM][i]), false);
    }
    if (st != EVRT_SUCCESS && st != EVRT_ERROR_INVALID_HANDLE)
      die("a slot stream could not be destroyed", __LINE__, st);
    retire(K_STREAM, i);
  }
  for (int d = 0; d < 2; d++) {
    evrt_stream_t s = NULL;
    CHECK(evrt_stream_default(d, &s), false);
    CHECK(evrt_stream_clear_error(s, NULL), false);
    CHECK(evrt_stream_set_failure_mode(s, EVRT_FAILURE_CONTINUE), false);
    CHECK(evrt_device_set_event_limit(d, 65535), false);
  }
  atomic_store(&cleanup_done, 0);
  if (CHECK(evrt_device_launch_host_func(EVRT_DEVICE_ALL, mark_done, NULL),
            false) != EVRT_SUCCESS)
    die("device_launch_host_func at cleanup", __LINE__, EVRT_SUCCESS);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!atomic_load_explicit(&cleanup_done, memory_order_acquire)) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 5)
      die("the streams did not drain in 5 s (a hang)", __LINE__,
          EVRT_SUCCESS);
    struct timespec ms = {0, 100000};
    nanosleep(&ms, NULL);
  }
  if (atomic_load(&self_sync_answer) != EVRT_ERROR_WOULD_DEADLOCK)
    die("a host function synchronized its own stream", __LINE__,
        (evrt_status_t)atomic_load(&self_sync_answer));
  if (atomic_load(&shutdown_answer) != EVRT_ERROR_WOULD_DEADLOCK)
    die("evrt_shutdown from a host function was not refused", __LINE__,
        (evrt_status_t)atomic_load(&shutdown_answer));
  for (int i = 0; i < NMEM; i++) {
    if (mem[i])
      CHECK(evrt_ipc_mem_free(mem[i]), false);
    mem[i] = NULL;
    keys[i][0] = 0;
  }
  for (int ud = 0; ud < 4 && ncallbacks; ud++)
    evrt_failure_callback_remove(on_failure, (void *)(uintptr_t)ud);
  ncallbacks = 0;
  evrt_trace_stop();
  m = EVRT_CAPTURE_MODE_GLOBAL;
  CHECK(evrt_thread_exchange_capture_mode(&m), false);
  evrt_check_site(NULL);
  evrt_set_device(0);
  evrt_clear_last_error();
  return 0;
}
