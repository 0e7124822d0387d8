/*
 * fuzz_api.c - libFuzzer target for the public API sequence surface.
 *
 * An input is a byte string decoded into up to 256 API calls on a handful of
 * objects (4 stream slots, 4 event slots), with handles that are live,
 * destroyed (stale), NULL, forged from input bytes, or the default streams.
 * Every call must return a status of the EVRT_ERRNO_MAP table; a stale
 * handle or a NULL event must give EVRT_ERROR_INVALID_HANDLE (a NULL stream
 * is the current device's default stream); a call must never crash,
 * hang or trip a sanitizer.  Each input cleans up after itself: events are
 * destroyed (which releases legacy next-record waits), live streams drained
 * and destroyed, and destroyed streams' pending work must still complete
 * (a marker host function enqueued before each destroy must run: nothing is
 * lost).  Waits are bounded: synchronize calls use short timeouts, delays
 * are below a millisecond, and waits bind at the call to work already
 * enqueued, so no cycle can form.
 *
 * Encoding (see gen_corpus.py): each call is an opcode byte (mod NOPS)
 * followed by the argument bytes it reads; missing bytes read as 0.
 * Built by tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined;
 * replay_main.c runs the committed corpus in CTest with any compiler.
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
#define MAXOPS 256

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
  fprintf(stderr, "fuzz_api: line %d: %s: status %d (%s): %s\n", line, what,
          (int)st, documented(st) ? evrt_err_name(st) : "undocumented",
          evrt_last_error_message());
  abort();
}

/* Check a call's status: documented, and INVALID_HANDLE when one of its
 * handles was NULL or stale. */
#define CHECK(call, bad_handle)                                                \
  do {                                                                         \
    evrt_status_t st_ = (call);                                                \
    if (!documented(st_))                                                      \
      die(#call " returned an undocumented status", __LINE__, st_);            \
    if ((bad_handle) && st_ != EVRT_ERROR_INVALID_HANDLE)                      \
      die(#call " with a NULL or destroyed handle", __LINE__, st_);            \
    if (evrt_err_name(st_) == NULL || evrt_strerror(st_) == NULL)              \
      die("no name or message", __LINE__, st_);                                \
  } while (0)

static evrt_stream_t slot_s[NSLOT];
static int slot_buf[NSLOT];
static evrt_event_t slot_e[NSLOT];
static evrt_stream_t stale_s[NSTALE];
static evrt_event_t stale_e[NSTALE];
static int nstale_s, nstale_e;
static unsigned char bufs[NBUF + 2 + 1][BUFSZ]; /* incarnations, defaults, forged */
static int nbufs;
static atomic_int markers_pending;
static atomic_long host_calls;

static void noop(void *p) {
  (void)p;
  atomic_fetch_add_explicit(&host_calls, 1, memory_order_relaxed);
}
static void marker(void *p) {
  (void)p;
  /* release: the destroyed stream's earlier items (memcpy into bufs) happen
   * before the cleanup that sees the count drop */
  atomic_fetch_sub_explicit(&markers_pending, 1, memory_order_release);
}

enum hk { H_LIVE, H_NULL, H_STALE, H_FORGED, H_DEFAULT };

struct sh {
  evrt_stream_t h;
  bool bad;   /* stale: must be rejected (NULL is the default stream) */
  int buf;    /* buffer its memory items may touch */
};

/* A NULL stream is the current device's default stream, with its buffer. */
static struct sh null_stream(void) {
  int dev = 0;
  evrt_get_device(&dev);
  struct sh r = {NULL, false, NBUF + dev};
  return r;
}

static struct sh pick_stream(struct in *in) {
  uint8_t b = next(in);
  struct sh r = {NULL, false, NBUF + 2};
  switch (b % 8) {
  case 5:
    if (nstale_s) {
      r.h = stale_s[(b >> 3) % (nstale_s < NSTALE ? nstale_s : NSTALE)];
      r.bad = true;
      return r;
    }
    return null_stream();
  case 6:
    r.h = (evrt_stream_t)(uintptr_t)next64(in);
    return r.h ? r : null_stream();
  case 7:
    evrt_stream_default((b >> 3) & 1, &r.h);
    r.buf = NBUF + ((b >> 3) & 1);
    return r;
  default: {
    int i = (b >> 3) % NSLOT;
    if (!slot_s[i])
      return null_stream();
    r.h = slot_s[i];
    r.buf = slot_buf[i];
    return r;
  }
  }
}

static evrt_event_t pick_event(struct in *in, bool *bad) {
  uint8_t b = next(in);
  switch (b % 8) {
  case 5:
    *bad = true;
    return nstale_e ? stale_e[(b >> 3) % (nstale_e < NSTALE ? nstale_e : NSTALE)]
                    : NULL;
  case 6: {
    evrt_event_t h = (evrt_event_t)(uintptr_t)next64(in);
    *bad = h == NULL;
    return h;
  }
  default: {
    evrt_event_t h = slot_e[(b >> 3) % NSLOT];
    *bad = h == NULL;
    return h;
  }
  }
}

static int64_t small_timeout(struct in *in) {
  uint8_t b = next(in);
  if (b == 0xff)
    return -1; /* forever: only where the call cannot block (query-like) */
  return (int64_t)(b % 64) * 10000; /* up to 0.63 ms */
}

static void destroy_stream_slot(int i) {
  if (!slot_s[i])
    return;
  atomic_fetch_add(&markers_pending, 1);
  CHECK(evrt_launch_host_func(slot_s[i], marker, NULL), false);
  CHECK(evrt_stream_destroy(slot_s[i]), false);
  stale_s[nstale_s++ % NSTALE] = slot_s[i];
  slot_s[i] = NULL;
}

static void destroy_event_slot(int i) {
  if (!slot_e[i])
    return;
  CHECK(evrt_event_destroy(slot_e[i]), false);
  stale_e[nstale_e++ % NSTALE] = slot_e[i];
  slot_e[i] = NULL;
}

enum {
  OP_STREAM_CREATE, OP_STREAM_DESTROY, OP_EVENT_CREATE, OP_EVENT_DESTROY,
  OP_RECORD, OP_WAIT, OP_WAIT_TIMEOUT, OP_RESET, OP_EVENT_QUERY,
  OP_STREAM_QUERY, OP_EVENT_SYNC, OP_STREAM_SYNC, OP_HOST, OP_MEMCPY,
  OP_MEMSET, OP_DELAY, OP_ELAPSED, OP_INFO, OP_DEVICE, OP_LIMIT, OP_MISC,
  OP_IPC, NOPS
};

static void run_op(struct in *in) {
  uint8_t op = next(in) % NOPS;
  bool be = false;
  switch (op) {
  case OP_STREAM_CREATE: {
    int i = next(in) % NSLOT;
    int dev = (int)(next(in) % 4) - 1; /* -1 (current), 0, 1, 2 (invalid) */
    int prio = (int)(int8_t)next(in);
    unsigned flags = next(in) % 8 == 0 ? next(in) : 0;
    evrt_stream_t s = NULL;
    evrt_status_t st = evrt_stream_create(&s, dev, prio, flags);
    CHECK(st, false);
    if (st == EVRT_SUCCESS) {
      destroy_stream_slot(i);
      slot_s[i] = s;
      slot_buf[i] = nbufs < NBUF ? nbufs++ : -1;
    }
    CHECK(evrt_stream_create(NULL, 0, 0, 0), false);
    break;
  }
  case OP_STREAM_DESTROY: {
    uint8_t b = next(in);
    if (b % 2 == 0) {
      destroy_stream_slot((b >> 1) % NSLOT);
    } else {
      struct sh s = pick_stream(in);
      /* slots, defaults and forged handles are not destroyed this way:
       * only rejected handles (the default stream must be refused) */
      if (s.bad)
        CHECK(evrt_stream_destroy(s.h), true);
      else if (b % 4 == 3) {
        evrt_stream_t d;
        evrt_stream_default(0, &d);
        evrt_status_t st = evrt_stream_destroy(d);
        if (st != EVRT_ERROR_NOT_PERMITTED)
          die("destroying the default stream", __LINE__, st);
      }
    }
    break;
  }
  case OP_EVENT_CREATE: {
    int i = next(in) % NSLOT;
    /* 0x20 is not a flag (INVALID_VALUE).  EVRT_EVENT_WAIT_NEXT_RECORD
     * (0x08) is left out: a legacy wait binds at the next record, to a
     * generation that may contain the waiter's own later work, so a random
     * program can build a real cycle (a user deadlock, by design of those
     * ACL semantics); tests/acl covers that flag. */
    unsigned flags = next(in) & 0x37;
    evrt_event_t e = NULL;
    evrt_status_t st = evrt_event_create(&e, flags);
    CHECK(st, false);
    if (st == EVRT_SUCCESS) {
      destroy_event_slot(i);
      slot_e[i] = e;
    }
    break;
  }
  case OP_EVENT_DESTROY: {
    uint8_t b = next(in);
    if (b % 2 == 0) {
      destroy_event_slot((b >> 1) % NSLOT);
    } else {
      evrt_event_t e = pick_event(in, &be);
      if (be)
        CHECK(evrt_event_destroy(e), true);
    }
    break;
  }
  case OP_RECORD: {
    evrt_event_t e = pick_event(in, &be);
    struct sh s = pick_stream(in);
    CHECK(evrt_event_record(e, s.h), be || s.bad);
    break;
  }
  case OP_WAIT: {
    struct sh s = pick_stream(in);
    evrt_event_t e = pick_event(in, &be);
    CHECK(evrt_stream_wait_event(s.h, e), be || s.bad);
    break;
  }
  case OP_WAIT_TIMEOUT: {
    struct sh s = pick_stream(in);
    evrt_event_t e = pick_event(in, &be);
    int64_t t = small_timeout(in);
    CHECK(evrt_stream_wait_event_timeout(s.h, e, t), be || s.bad);
    break;
  }
  case OP_RESET: {
    evrt_event_t e = pick_event(in, &be);
    struct sh s = pick_stream(in);
    CHECK(evrt_event_reset(e, s.h), be || s.bad);
    break;
  }
  case OP_EVENT_QUERY: {
    evrt_event_t e = pick_event(in, &be);
    CHECK(evrt_event_query(e), be);
    CHECK(evrt_event_wait_status(e), be);
    break;
  }
  case OP_STREAM_QUERY: {
    struct sh s = pick_stream(in);
    CHECK(evrt_stream_query(s.h), s.bad);
    uint64_t n;
    CHECK(evrt_stream_wait_failures(s.h, &n), s.bad);
    break;
  }
  case OP_EVENT_SYNC: {
    evrt_event_t e = pick_event(in, &be);
    int64_t t = small_timeout(in);
    CHECK(evrt_event_synchronize_timeout(e, t < 0 ? 0 : t), be);
    break;
  }
  case OP_STREAM_SYNC: {
    struct sh s = pick_stream(in);
    int64_t t = small_timeout(in);
    CHECK(evrt_stream_synchronize_timeout(s.h, t < 0 ? 0 : t), s.bad);
    break;
  }
  case OP_HOST: {
    struct sh s = pick_stream(in);
    uint8_t b = next(in);
    if (b % 4 == 0) {
      CHECK(evrt_launch_host_func(s.h, NULL, NULL), s.bad);
    } else if (b % 4 == 1) {
      char label[48];
      size_t n = next(in) % sizeof label;
      for (size_t k = 0; k < n; k++)
        label[k] = (char)next(in);
      label[n] = 0;
      CHECK(evrt_launch_host_func_labeled(s.h, noop, NULL, label), s.bad);
    } else {
      CHECK(evrt_launch_host_func(s.h, noop, NULL), s.bad);
    }
    break;
  }
  case OP_MEMCPY:
  case OP_MEMSET: {
    struct sh s = pick_stream(in);
    uint8_t b = next(in);
    size_t off = next(in) % BUFSZ, off2 = next(in) % BUFSZ;
    size_t n = next(in) % (BUFSZ - (off > off2 ? off : off2) + 1);
    unsigned char *base = s.buf >= 0 ? bufs[s.buf] : NULL;
    if (!base || b % 5 == 0) {
      /* NULL pointers: INVALID_VALUE for n > 0 (or INVALID_HANDLE) */
      if (op == OP_MEMCPY)
        CHECK(evrt_memcpy_async(s.h, NULL, NULL, n ? n : 1), s.bad);
      else
        CHECK(evrt_memset_async(s.h, NULL, 0, n ? n : 1), s.bad);
    } else if (op == OP_MEMCPY) {
      CHECK(evrt_memcpy_async(s.h, base + off, base + off2, n), s.bad);
    } else {
      CHECK(evrt_memset_async(s.h, base + off, (int)b, n), s.bad);
    }
    break;
  }
  case OP_DELAY: {
    struct sh s = pick_stream(in);
    CHECK(evrt_stream_delay(s.h, (uint64_t)(next(in) % 32) * 20000), s.bad);
    break;
  }
  case OP_ELAPSED: {
    bool b2 = false;
    evrt_event_t a = pick_event(in, &be);
    evrt_event_t b = pick_event(in, &b2);
    float ms;
    uint64_t ts;
    CHECK(evrt_event_elapsed_time(&ms, a, b), be || b2);
    CHECK(evrt_event_timestamp(a, &ts), be);
    break;
  }
  case OP_INFO: {
    evrt_event_t e = pick_event(in, &be);
    evrt_event_info_t info = {.struct_size = sizeof info};
    int d;
    uint64_t id;
    CHECK(evrt_event_get_info(e, &info), be);
    CHECK(evrt_event_get_info(e, NULL), be);
    CHECK(evrt_event_get_device(e, &d), be);
    CHECK(evrt_event_get_id(e, &id), be);
    struct sh s = pick_stream(in);
    CHECK(evrt_stream_get_device(s.h, &d), s.bad);
    CHECK(evrt_stream_get_priority(s.h, &d), s.bad);
    CHECK(evrt_stream_get_id(s.h, &id), s.bad);
    CHECK(evrt_stream_get_id(s.h, NULL), s.bad);
    break;
  }
  case OP_DEVICE: {
    int d = (int)(int8_t)next(in) % 4;
    int c;
    CHECK(evrt_set_device(d), false);
    CHECK(evrt_get_device(&c), false);
    CHECK(evrt_device_count(&c), false);
    CHECK(evrt_device_count(NULL), false);
    break;
  }
  case OP_LIMIT: {
    int d = (int)(next(in) % 3);
    uint32_t v = (uint32_t)next(in) * (next(in) % 2 ? 1u : 300u);
    CHECK(evrt_device_set_event_limit(d, v), false);
    CHECK(evrt_device_get_event_limit(d, &v), false);
    CHECK(evrt_device_event_available(d, &v), false);
    break;
  }
  case OP_MISC: {
    struct sh s = pick_stream(in);
    char name[80];
    size_t n = next(in) % sizeof name;
    for (size_t k = 0; k < n; k++)
      name[k] = (char)next(in);
    name[n] = 0;
    CHECK(evrt_stream_set_name(s.h, name), s.bad);
    CHECK(evrt_stream_set_name(s.h, NULL), s.bad);
    evrt_status_t st = (evrt_status_t)(next(in) * 3);
    (void)evrt_err_name(st); /* any value: a name or a placeholder, no crash */
    (void)evrt_strerror(st);
    (void)evrt_last_error_message();
    break;
  }
  case OP_IPC: {
    evrt_event_t e = pick_event(in, &be);
    evrt_ipc_event_handle_t h;
    memset(&h, 0, sizeof h);
    evrt_status_t st = evrt_event_ipc_handle(e, &h);
    CHECK(st, be);
    if (st == EVRT_SUCCESS) {
      /* same process: never a working import */
      evrt_event_t x = NULL;
      h.reserved[next(in) % EVRT_IPC_HANDLE_SIZE] ^= next(in);
      st = evrt_event_ipc_open(&x, &h);
      CHECK(st, false);
      if (st == EVRT_SUCCESS)
        CHECK(evrt_event_destroy(x), false);
    }
    CHECK(evrt_event_ipc_handle(e, NULL), be);
    break;
  }
  }
}

static void sync_or_die(evrt_stream_t s, const char *what) {
  /* Everything here is bounded (delays < 1 ms, waits on generations that
   * complete): 5 s is a hang. */
  evrt_status_t st = evrt_stream_synchronize_timeout(s, 5000000000LL);
  if (st != EVRT_SUCCESS)
    die(what, __LINE__, st);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("EVRT_CPU_DEVICES", "2", 1);
  if (evrt_init() != EVRT_SUCCESS)
    abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct in in = {data, size};
  nbufs = 0;
  for (int k = 0; k < MAXOPS && in.n; k++)
    run_op(&in);

  /* Clean up: events first, then drain
   * and destroy the streams; destroyed streams must still finish. */
  for (int i = 0; i < NSLOT; i++)
    destroy_event_slot(i);
  for (int i = 0; i < NSLOT; i++)
    if (slot_s[i])
      sync_or_die(slot_s[i], "a live stream did not drain");
  for (int d = 0; d < 2; d++) {
    evrt_stream_t s;
    CHECK(evrt_stream_default(d, &s), false);
    sync_or_die(s, "a default stream did not drain");
    CHECK(evrt_device_set_event_limit(d, 65535), false);
  }
  for (int i = 0; i < NSLOT; i++)
    destroy_stream_slot(i);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (atomic_load_explicit(&markers_pending, memory_order_acquire) > 0) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 5)
      die("work of a destroyed stream never ran (lost)", __LINE__,
          EVRT_SUCCESS);
    struct timespec ms = {0, 100000};
    nanosleep(&ms, NULL);
  }
  evrt_set_device(0);
  evrt_clear_last_error();
  return 0;
}
