/*
 * trace.c - what streams did, as a Chrome trace-event JSON file
 * (docs/trace.md describes the file; tools/evrt-trace.c draws it).
 *
 * Recording.  Every thread that calls a hook appends fixed-size entries to
 * its own buffer (struct tbuf), registered once in a global list.  An append
 * takes no lock: the owner raises tbuf.busy, re-checks evrt__trace_enabled,
 * writes the entry and lowers busy.  evrt_trace_stop() clears the flag and
 * then waits until no buffer is busy (the Dekker pair below), so after that
 * wait every entry of the session is in memory and nobody appends any more:
 * a stop loses nothing that happened before it, and the writer reads the
 * buffers without racing their owners.  A buffer holds at most `cap` entries
 * per session (EVRT_TRACE_BUFFER, default 262144); an entry that does not fit
 * is counted in tbuf.dropped, reported by evrt_trace_dropped() and in the
 * file's otherData.dropped_entries.  Buffers outlive their threads (a thread
 * that exits mid-session still has its entries written); an exited thread's
 * buffer is freed after the next flush.
 *
 * Writing happens at stop, at evrt_shutdown and at exit: entries are copied
 * out, sorted, matched (record <-> record item, wait item <-> bind <->
 * resume) and printed.  Nothing is written during the session.
 *
 * Lock order: (init.c's init_lock ->) ctl_lock -> reg_lock -> names_lock;
 * init_lock is held around evrt__trace_init_from_env and evrt__trace_finish
 * at shutdown, and evrt_trace_start initializes the library before it takes
 * ctl_lock.  Hooks take reg_lock only
 * to register a new thread (never while busy is raised) and names_lock only
 * in evrt__trace_stream_name.  No core lock is ever taken here.
 */
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_int evrt__trace_enabled;

const char *evrt__item_kind_name(int kind) {
  static const char *const names[] = {
      "host_func", "memcpy", "memset", "delay", "graph",
      "graph_nodes", "record", "wait", "reset"};
  _Static_assert(sizeof names / sizeof names[0] == EVRT__ITEM_KIND_COUNT,
                 "a name for every item kind");
  return kind >= 0 && kind < EVRT__ITEM_KIND_COUNT ? names[kind] : "unknown";
}

/* ------------------------------------------------------------ entries */

enum { E_ITEM = 0, E_RECORD, E_BIND, E_RESUME, E_HOST_WAIT };
#define LABEL_MAX 28

struct entry {
  uint64_t t0, t1;     /* t1 = t0 for points */
  uint64_t stream;     /* stream id; host wait: id of the awaited object */
  uint64_t event, gen; /* host wait: gen = evrt_thread_id() of the waiter */
  int32_t device;
  uint32_t aux; /* writer only: position in the sorted slice array */
  uint8_t type, kind, synthetic;
  char label[LABEL_MAX + 1];
};

#define CHUNK_ENTRIES 1024u
#define MAX_CHUNKS 4096u /* hard cap: 4M entries per thread */
#define DEFAULT_CAP (256u * 1024u)

struct tbuf {
  /* 1 while the owner appends (seq_cst: Dekker pair with stop) */
  atomic_int busy;
  /* Entries of this session.  Written by the owner while busy; reset by the
   * flusher while tracing is off (ordered by evrt__trace_enabled). */
  atomic_uint_least64_t count;
  atomic_uint_least64_t dropped; /* relaxed: a statistic */
  struct tbuf *next;             /* reg_lock */
  bool orphan;                   /* reg_lock: owner thread exited */
  struct entry *chunks[MAX_CHUNKS];
};

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *buffers; /* reg_lock */
static _Thread_local struct tbuf *tls_buf;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t buf_key;
static bool key_ok;

/* Session state (ctl_lock), read by hooks only after they saw the flag. */
static atomic_uint_least64_t cap; /* relaxed: published by the flag */
static FILE *out;
static char *out_path;
static uint64_t t_start;
static pid_t session_pid;
static bool active;
/* Entries lost because a thread could not get a buffer (relaxed). */
static atomic_uint_least64_t lost_noalloc;
static atomic_uint_least64_t last_dropped; /* total of the last session */

static void thread_gone(void *p) {
  struct tbuf *b = p;
  pthread_mutex_lock(&reg_lock);
  b->orphan = true;
  pthread_mutex_unlock(&reg_lock);
  tls_buf = NULL;
}

static void make_key(void) {
  key_ok = pthread_key_create(&buf_key, thread_gone) == 0;
}

static struct tbuf *register_thread(void) {
  pthread_once(&key_once, make_key);
  struct tbuf *b = evrt__calloc(1, sizeof *b);
  if (!b)
    return NULL;
  pthread_mutex_lock(&reg_lock);
  b->next = buffers;
  buffers = b;
  pthread_mutex_unlock(&reg_lock);
  /* Without the key the buffer is never marked orphan: it stays (a leak
   * bounded by the number of threads), which is better than losing data. */
  if (key_ok)
    pthread_setspecific(buf_key, b);
  tls_buf = b;
  return b;
}

/* Reserve the next entry of this thread's buffer, or NULL (tracing just
 * stopped, or the buffer is full).  On success the caller fills the entry
 * and calls commit(). */
static struct entry *reserve(struct tbuf **bp) {
  struct tbuf *b = tls_buf;
  if (EVRT_UNLIKELY(!b) && !(b = register_thread())) {
    atomic_fetch_add_explicit(&lost_noalloc, 1, memory_order_relaxed);
    return NULL;
  }
  /* seq_cst store then seq_cst load: either stop sees busy = 1 and waits for
   * us, or we see the flag cleared and append nothing. */
  atomic_store_explicit(&b->busy, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&evrt__trace_enabled, memory_order_seq_cst)) {
    atomic_store_explicit(&b->busy, 0, memory_order_release);
    return NULL;
  }
  uint64_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
  uint64_t ci = n / CHUNK_ENTRIES;
  if (n >= atomic_load_explicit(&cap, memory_order_relaxed) ||
      ci >= MAX_CHUNKS ||
      (!b->chunks[ci] &&
       !(b->chunks[ci] = evrt__malloc(CHUNK_ENTRIES * sizeof(struct entry))))) {
    atomic_fetch_add_explicit(&b->dropped, 1, memory_order_relaxed);
    atomic_store_explicit(&b->busy, 0, memory_order_release);
    return NULL;
  }
  *bp = b;
  struct entry *e = &b->chunks[ci][n % CHUNK_ENTRIES];
  memset(e, 0, sizeof *e);
  return e;
}

static void commit(struct tbuf *b) {
  uint64_t n = atomic_load_explicit(&b->count, memory_order_relaxed);
  atomic_store_explicit(&b->count, n + 1, memory_order_relaxed);
  /* release: the entry and the count are visible to the flusher that
   * acquires busy == 0 */
  atomic_store_explicit(&b->busy, 0, memory_order_release);
}

static void put_label(struct entry *e, const char *s) {
  if (s) {
    size_t n = strnlen(s, LABEL_MAX);
    memcpy(e->label, s, n);
    e->label[n] = 0;
  }
}

/* --------------------------------------------------------- stream names */

/* Open-addressing table stream id -> (device, name), kept across sessions so
 * a name set in an earlier session still names the track. */
struct name_slot {
  uint64_t id; /* 0 = empty */
  uint64_t session;
  int device;
  char name[64];
};
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct name_slot *names;
static size_t names_cap, names_used;
static uint64_t session_no; /* names_lock (written under ctl_lock too) */

static struct name_slot *name_find(uint64_t id) {
  size_t m = names_cap - 1;
  for (size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m;; i = (i + 1) & m)
    if (names[i].id == id || names[i].id == 0)
      return &names[i];
}

static bool names_grow(void) {
  size_t ncap = names_cap ? names_cap * 2 : 256;
  struct name_slot *old = names, *nn = evrt__calloc(ncap, sizeof *nn);
  if (!nn)
    return false;
  size_t ocap = names_cap;
  names = nn;
  names_cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].id)
      *name_find(old[i].id) = old[i];
  evrt__free(old);
  return true;
}

void evrt__trace_stream_name(int device, uint64_t stream_id, const char *name) {
  if (!stream_id)
    return;
  pthread_mutex_lock(&names_lock);
  if ((names_used + 1) * 2 <= names_cap || names_grow()) {
    struct name_slot *s = name_find(stream_id);
    if (!s->id) {
      s->id = stream_id;
      names_used++;
    }
    s->device = device;
    s->session = session_no;
    if (name) {
      strncpy(s->name, name, sizeof s->name - 1);
      s->name[sizeof s->name - 1] = 0;
    }
  }
  pthread_mutex_unlock(&names_lock);
}

/* ---------------------------------------------------------------- hooks */

void evrt__trace_item(int device, uint64_t stream_id, int kind,
                      const char *label, uint64_t t0, uint64_t t1,
                      uint64_t event_id, uint64_t gen) {
  struct tbuf *b;
  struct entry *e = reserve(&b);
  if (!e)
    return;
  e->type = E_ITEM;
  e->kind = (uint8_t)kind;
  e->device = device;
  e->stream = stream_id;
  e->t0 = t0;
  e->t1 = t1 < t0 ? t0 : t1;
  e->event = event_id;
  e->gen = gen;
  put_label(e, label);
  commit(b);
}

static void point(int type, int device, uint64_t stream_id, uint64_t event_id,
                  uint64_t gen, uint64_t t) {
  struct tbuf *b;
  struct entry *e = reserve(&b);
  if (!e)
    return;
  e->type = (uint8_t)type;
  e->device = device;
  e->stream = stream_id;
  e->event = event_id;
  e->gen = gen;
  e->t0 = e->t1 = t;
  commit(b);
}

void evrt__trace_record(int device, uint64_t stream_id, uint64_t event_id,
                        uint64_t gen, uint64_t t) {
  point(E_RECORD, device, stream_id, event_id, gen, t);
}

void evrt__trace_wait_bind(int device, uint64_t stream_id, uint64_t event_id,
                           uint64_t gen, uint64_t t) {
  point(E_BIND, device, stream_id, event_id, gen, t);
}

void evrt__trace_wait_resume(int device, uint64_t stream_id, uint64_t event_id,
                             uint64_t gen, uint64_t t) {
  point(E_RESUME, device, stream_id, event_id, gen, t);
}

void evrt__trace_host_wait(const char *what, uint64_t id, uint64_t t0,
                           uint64_t t1) {
  struct tbuf *b;
  struct entry *e = reserve(&b);
  if (!e)
    return;
  e->type = E_HOST_WAIT;
  e->device = -1;
  e->stream = id;
  e->gen = evrt_thread_id();
  e->t0 = t0;
  e->t1 = t1 < t0 ? t0 : t1;
  put_label(e, what);
  commit(b);
}

/* --------------------------------------------------------------- writer */

#define HOST_PID 1000000
#define HOST_TID_BASE 1000000000ull

struct writer {
  FILE *f;
  uint64_t base;
  struct entry *all;
  size_t n;
  struct entry *syn; /* synthetic slices for records of idle streams */
  size_t nsyn;
  struct entry **slices, **recs, **waits, **binds, **resumes, **hwaits;
  size_t nslices, nrecs, nwaits, nbinds, nresumes, nhwaits;
  struct entry **rec_slice; /* per record (sorted recs order) */
  uint64_t *shown_start; /* per slice position: start shown in the file */
  bool *wait_bound;
  uint64_t dropped;
};

static void put_str(FILE *f, const char *s) {
  /* JSON string: escape quotes, backslashes and controls; bytes that are not
   * valid UTF-8 (a label cut in the middle of a character) become '?'. */
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  while (*p) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
      p++;
    } else if (c < 0x20) {
      fprintf(f, "\\u%04x", c);
      p++;
    } else if (c < 0x80) {
      fputc((int)c, f);
      p++;
    } else {
      int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      if (c >= 0xf5)
        len = 0;
      bool ok = len > 0;
      for (int i = 1; ok && i < len; i++)
        ok = (p[i] & 0xc0) == 0x80;
      if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) ||
                             (c == 0xed && p[1] >= 0xa0)))
        ok = false; /* overlong or surrogate */
      if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) ||
                             (c == 0xf4 && p[1] >= 0x90)))
        ok = false;
      if (ok) {
        fwrite(p, 1, (size_t)len, f);
        p += len;
      } else {
        fputc('?', f);
        p++;
      }
    }
  }
  fputc('"', f);
}

/* Microseconds since the session start, with ns precision. */
static void put_ts(struct writer *w, const char *key, uint64_t t) {
  int64_t d = (int64_t)(t - w->base);
  if (t < w->base)
    d = 0;
  fprintf(w->f, ",\"%s\":%lld.%03lld", key, (long long)(d / 1000),
          (long long)(d % 1000));
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }
static int cmp_ptr(const void *a, const void *b) {
  return (uintptr_t)a < (uintptr_t)b ? -1 : (uintptr_t)a > (uintptr_t)b;
}

/* slices: by track, then time (ties: the entry's address, deterministic). */
static int cmp_track_time(const void *pa, const void *pb) {
  const struct entry *a = *(struct entry *const *)pa;
  const struct entry *b = *(struct entry *const *)pb;
  int c;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if ((c = cmp_u64(a->stream, b->stream)))
    return c;
  if ((c = cmp_u64(a->t0, b->t0)))
    return c;
  return cmp_ptr(a, b);
}

/* records: by generation (event, gen); waits, binds and resumes: by
 * (track, event, gen, time) so the k-th wait of a key meets its k-th bind. */
static int cmp_gen(const void *pa, const void *pb) {
  const struct entry *a = *(struct entry *const *)pa;
  const struct entry *b = *(struct entry *const *)pb;
  int c;
  if ((c = cmp_u64(a->event, b->event)))
    return c;
  if ((c = cmp_u64(a->gen, b->gen)))
    return c;
  if ((c = cmp_u64(a->t0, b->t0)))
    return c;
  return cmp_ptr(a, b);
}

static int cmp_key(const struct entry *a, const struct entry *b) {
  int c;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  if ((c = cmp_u64(a->stream, b->stream)))
    return c;
  if ((c = cmp_u64(a->event, b->event)))
    return c;
  return cmp_u64(a->gen, b->gen);
}

static int cmp_key_time(const void *pa, const void *pb) {
  const struct entry *a = *(struct entry *const *)pa;
  const struct entry *b = *(struct entry *const *)pb;
  int c = cmp_key(a, b);
  if (c)
    return c;
  if ((c = cmp_u64(a->t0, b->t0)))
    return c;
  return cmp_ptr(a, b);
}

/* The record item (slice) of a record entry: same stream and generation. */
static struct entry *find_record_item(struct entry **v, size_t n,
                                      const struct entry *r) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const struct entry *m = v[mid];
    int c = cmp_u64(m->event, r->event);
    if (!c)
      c = cmp_u64(m->gen, r->gen);
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < n && v[lo]->event == r->event && v[lo]->gen == r->gen; lo++)
    if (v[lo]->device == r->device && v[lo]->stream == r->stream)
      return v[lo];
  return NULL;
}

static size_t find_record(struct writer *w, uint64_t event, uint64_t gen) {
  size_t lo = 0, hi = w->nrecs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = cmp_u64(w->recs[mid]->event, event);
    if (!c)
      c = cmp_u64(w->recs[mid]->gen, gen);
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < w->nrecs && w->recs[lo]->event == event && w->recs[lo]->gen == gen)
    return lo;
  return (size_t)-1;
}

static void put_meta(FILE *f, const char *what, int pid, uint64_t tid,
                     bool thread, const char *key, const char *sval,
                     long long ival) {
  fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d", what, pid);
  if (thread)
    fprintf(f, ",\"tid\":%llu", (unsigned long long)tid);
  fprintf(f, ",\"args\":{\"%s\":", key);
  if (sval)
    put_str(f, sval);
  else
    fprintf(f, "%lld", ival);
  fputs("}}", f);
}

struct track {
  int device;
  uint64_t stream;
};

static int cmp_track(const void *pa, const void *pb) {
  const struct track *a = pa, *b = pb;
  if (a->device != b->device)
    return a->device < b->device ? -1 : 1;
  return cmp_u64(a->stream, b->stream);
}

/* Tracks: streams with slices in this session, and streams created or named
 * during it (even if they ran nothing).  False if out of memory. */
static bool put_tracks(struct writer *w) {
  FILE *f = w->f;
  pthread_mutex_lock(&names_lock);
  size_t nt = w->nslices + names_used;
  struct track *t = evrt__malloc((nt ? nt : 1) * sizeof *t);
  if (!t) {
    pthread_mutex_unlock(&names_lock);
    return false;
  }
  nt = 0;
  for (size_t i = 0; i < w->nslices; i++)
    if (i == 0 || w->slices[i]->stream != w->slices[i - 1]->stream ||
        w->slices[i]->device != w->slices[i - 1]->device)
      t[nt++] = (struct track){w->slices[i]->device, w->slices[i]->stream};
  for (size_t i = 0; i < names_cap; i++)
    if (names[i].id && names[i].session == session_no)
      t[nt++] = (struct track){names[i].device, names[i].id};
  qsort(t, nt, sizeof *t, cmp_track);
  char buf[80];
  for (size_t i = 0; i < nt; i++) {
    if (i > 0 && !cmp_track(&t[i], &t[i - 1]))
      continue;
    int dev = t[i].device;
    if (i == 0 || dev != t[i - 1].device) {
      snprintf(buf, sizeof buf, "device %d", dev);
      put_meta(f, "process_name", dev + 1, 0, false, "name", buf, 0);
      put_meta(f, "process_sort_index", dev + 1, 0, false, "sort_index", NULL,
               dev);
    }
    struct name_slot *s = names_cap ? name_find(t[i].stream) : NULL;
    if (s && s->id && s->name[0])
      snprintf(buf, sizeof buf, "%s", s->name);
    else
      snprintf(buf, sizeof buf, "device %d stream %llu", dev,
               (unsigned long long)t[i].stream);
    put_meta(f, "thread_name", dev + 1, t[i].stream, true, "name", buf, 0);
    put_meta(f, "thread_sort_index", dev + 1, t[i].stream, true, "sort_index",
             NULL, (long long)t[i].stream);
  }
  pthread_mutex_unlock(&names_lock);
  evrt__free(t);
  for (size_t i = 0; i < w->nhwaits; i++) {
    const struct entry *e = w->hwaits[i];
    if (i == 0) {
      put_meta(f, "process_name", HOST_PID, 0, false, "name", "host", 0);
      put_meta(f, "process_sort_index", HOST_PID, 0, false, "sort_index",
               NULL, HOST_PID);
    }
    if (i > 0 && e->gen == w->hwaits[i - 1]->gen)
      continue;
    snprintf(buf, sizeof buf, "host thread %llu", (unsigned long long)e->gen);
    put_meta(f, "thread_name", HOST_PID, HOST_TID_BASE + e->gen, true, "name",
             buf, 0);
  }
  return true;
}

static void put_slice(struct writer *w, size_t pos) {
  FILE *f = w->f;
  const struct entry *e = w->slices[pos];
  uint64_t t0 = w->shown_start[pos];
  const char *kind = evrt__item_kind_name(e->kind);
  fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%llu", e->device + 1,
          (unsigned long long)e->stream);
  put_ts(w, "ts", t0);
  fprintf(f, ",\"dur\":%llu.%03llu,\"name\":",
          (unsigned long long)((e->t1 - t0) / 1000),
          (unsigned long long)((e->t1 - t0) % 1000));
  put_str(f, e->label[0] ? e->label : kind);
  fprintf(f, ",\"cat\":\"%s\",\"args\":{\"kind\":\"%s\"", kind, kind);
  if (e->kind >= EVRT__ITEM_RECORD)
    fprintf(f, ",\"event\":%llu,\"gen\":%llu", (unsigned long long)e->event,
            (unsigned long long)e->gen);
  if (e->synthetic)
    fputs(",\"inline\":true", f);
  fputs("}}", f);
}

static void put_flow_point(struct writer *w, char ph, const struct entry *on,
                           uint64_t id, uint64_t event, uint64_t t,
                           bool enclosing) {
  fprintf(w->f, ",\n{\"ph\":\"%c\",\"id\":%llu,\"pid\":%d,\"tid\":%llu", ph,
          (unsigned long long)id, on->device + 1,
          (unsigned long long)on->stream);
  put_ts(w, "ts", t);
  fprintf(w->f, ",\"name\":\"event %llu\",\"cat\":\"event\"%s}",
          (unsigned long long)event, enclosing ? ",\"bp\":\"e\"" : "");
}

static uint64_t clamp(uint64_t t, uint64_t lo, uint64_t hi) {
  return t < lo ? lo : t > hi ? hi : t;
}

/* Flows: record -> the wait bound to it -> the work the stream resumed with
 * (docs/trace.md).  Each point lies inside the slice it binds to. */
static void put_flows(struct writer *w) {
  uint64_t id = 0;
  for (size_t pos = 0; pos < w->nslices; pos++) {
    struct entry *wt = w->slices[pos];
    if (wt->kind != EVRT__ITEM_WAIT || !wt->gen)
      continue;
    size_t r = find_record(w, wt->event, wt->gen);
    if (r == (size_t)-1)
      continue;
    const struct entry *rec = w->recs[r], *rs = w->rec_slice[r];
    uint64_t ws = w->shown_start[pos];
    uint64_t tr = clamp(rec->t0, rs->t0, rs->t1);
    /* the step: inside the wait, after the record when the wait outlasted it */
    uint64_t lo = clamp(tr, ws, wt->t1);
    uint64_t tw = lo + (wt->t1 - lo) / 2;
    const struct entry *next = NULL;
    if (pos + 1 < w->nslices && w->slices[pos + 1]->device == wt->device &&
        w->slices[pos + 1]->stream == wt->stream)
      next = w->slices[pos + 1];
    id++;
    put_flow_point(w, 's', rs, id, wt->event, tr, false);
    if (next) {
      put_flow_point(w, 't', wt, id, wt->event, tw, false);
      put_flow_point(w, 'f', next, id, wt->event,
                     next->t0 + (next->t1 - next->t0) / 2, true);
    } else {
      put_flow_point(w, 'f', wt, id, wt->event, tw, true);
    }
  }
}

static bool put_events(struct writer *w) {
  FILE *f = w->f;
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"evrt_version\":"
             "\"%s\",\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":%llu,"
             "\"dropped_entries\":%llu},\n\"traceEvents\":[\n",
          evrt_version_string(), (unsigned long long)w->base,
          (unsigned long long)w->dropped);
  /* A first event so every later one starts with ",". */
  fprintf(f, "{\"ph\":\"M\",\"name\":\"trace_info\",\"pid\":0,\"args\":"
             "{\"dropped_entries\":%llu}}",
          (unsigned long long)w->dropped);
  if (!put_tracks(w))
    return false;
  for (size_t i = 0; i < w->nslices; i++)
    put_slice(w, i);
  for (size_t i = 0; i < w->nrecs; i++) {
    const struct entry *e = w->recs[i];
    fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%llu",
            e->device + 1, (unsigned long long)e->stream);
    put_ts(w, "ts", e->t0);
    fprintf(f, ",\"name\":\"record\",\"cat\":\"record\",\"args\":{\"event\":"
               "%llu,\"gen\":%llu}}",
            (unsigned long long)e->event, (unsigned long long)e->gen);
  }
  for (size_t i = 0; i < w->nhwaits; i++) {
    const struct entry *e = w->hwaits[i];
    const char *what = e->label[0] ? e->label : "host_wait";
    const char *key = strncmp(what, "event", 5) == 0    ? "event"
                      : strncmp(what, "stream", 6) == 0 ? "stream"
                                                        : "id";
    fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%llu", HOST_PID,
            (unsigned long long)(HOST_TID_BASE + e->gen));
    put_ts(w, "ts", e->t0);
    fprintf(f, ",\"dur\":%llu.%03llu,\"name\":",
            (unsigned long long)((e->t1 - e->t0) / 1000),
            (unsigned long long)((e->t1 - e->t0) % 1000));
    put_str(f, what);
    fprintf(f, ",\"cat\":\"host_wait\",\"args\":{\"%s\":%llu}}", key,
            (unsigned long long)e->stream);
  }
  put_flows(w);
  fputs("\n]}\n", f);
  return true;
}

static int cmp_host(const void *pa, const void *pb) {
  const struct entry *a = *(struct entry *const *)pa;
  const struct entry *b = *(struct entry *const *)pb;
  int c = cmp_u64(a->gen, b->gen);
  if (!c)
    c = cmp_u64(a->t0, b->t0);
  return c ? c : cmp_ptr(a, b);
}

/* Sort and match the copied entries; false if out of memory. */
static bool prepare(struct writer *w) {
  size_t n = w->n, nrec = 0;
  for (size_t i = 0; i < n; i++) {
    struct entry *e = &w->all[i];
    /* Clock values from before the session (a host wait that began before
     * the start) are clamped to its start. */
    if (e->t0 < w->base)
      e->t0 = w->base;
    if (e->t1 < e->t0)
      e->t1 = e->t0;
    nrec += e->type == E_RECORD;
  }
  w->syn = evrt__calloc(nrec + 1, sizeof *w->syn);
  struct entry **v = evrt__calloc(4 * n + 2 * nrec + 8, sizeof *v);
  w->rec_slice = evrt__calloc(nrec + 1, sizeof *w->rec_slice);
  w->shown_start = evrt__calloc(n + nrec + 1, sizeof *w->shown_start);
  if (!w->syn || !v || !w->rec_slice || !w->shown_start)
    return false;
  /* One pointer array cut in pieces: slices (with room for the synthetic
   * ones), records, waits, binds, resumes, host waits, record items. */
  w->slices = v;
  w->recs = w->slices + n + nrec;
  w->waits = w->recs + nrec;
  struct entry **tmp = w->waits + n;
  size_t ntmp = 0;
  for (size_t i = 0; i < n; i++) {
    struct entry *e = &w->all[i];
    if (e->type == E_ITEM) {
      w->slices[w->nslices++] = e;
      if (e->kind == EVRT__ITEM_RECORD)
        tmp[ntmp++] = e;
    } else if (e->type == E_RECORD) {
      w->recs[w->nrecs++] = e;
    }
  }
  /* record <-> record item; a record with no item ran inline on an idle
   * stream: it gets a zero-length slice so its flows have a start. */
  qsort(tmp, ntmp, sizeof *tmp, cmp_gen);
  qsort(w->recs, w->nrecs, sizeof *w->recs, cmp_gen);
  for (size_t i = 0; i < w->nrecs; i++) {
    struct entry *r = w->recs[i];
    struct entry *it = find_record_item(tmp, ntmp, r);
    if (!it) {
      it = &w->syn[w->nsyn++];
      *it = *r;
      it->type = E_ITEM;
      it->kind = EVRT__ITEM_RECORD;
      it->synthetic = 1;
      w->slices[w->nslices++] = it;
    }
    w->rec_slice[i] = it;
  }
  qsort(w->slices, w->nslices, sizeof *w->slices, cmp_track_time);
  for (size_t i = 0; i < w->nslices; i++) {
    w->slices[i]->aux = (uint32_t)i;
    w->shown_start[i] = w->slices[i]->t0;
  }
  /* waits <-> binds, per (stream, generation) in time order. */
  w->binds = tmp;
  w->nbinds = 0;
  w->hwaits = tmp + n;
  for (size_t i = 0; i < n; i++) {
    struct entry *e = &w->all[i];
    if (e->type == E_ITEM && e->kind == EVRT__ITEM_WAIT && e->gen)
      w->waits[w->nwaits++] = e;
    else if (e->type == E_BIND)
      w->binds[w->nbinds++] = e;
    else if (e->type == E_HOST_WAIT)
      w->hwaits[w->nhwaits++] = e;
  }
  qsort(w->waits, w->nwaits, sizeof *w->waits, cmp_key_time);
  qsort(w->binds, w->nbinds, sizeof *w->binds, cmp_key_time);
  qsort(w->hwaits, w->nhwaits, sizeof *w->hwaits, cmp_host);
  for (size_t i = 0, j = 0; i < w->nwaits && j < w->nbinds;) {
    int c = cmp_key(w->waits[i], w->binds[j]);
    if (c < 0) {
      i++;
    } else if (c > 0) {
      j++;
    } else {
      /* The stream waited from when the wait was both enqueued (bound) and
       * at the head of the stream (the previous item ended), not only
       * during the last check the worker made. */
      struct entry *wt = w->waits[i++];
      uint64_t from = w->binds[j++]->t0;
      size_t pos = wt->aux;
      if (pos > 0 && w->slices[pos - 1]->device == wt->device &&
          w->slices[pos - 1]->stream == wt->stream &&
          w->slices[pos - 1]->t1 > from)
        from = w->slices[pos - 1]->t1;
      if (from < wt->t0)
        w->shown_start[pos] = from;
    }
  }
  /* (Delays need no fix-up: the core passes the time the worker first
   * reached an item, even when it parked and was resumed.) */
  return true;
}

/* Copy out every buffer's entries (tracing is off and nobody is busy), reset
 * the buffers and free those of exited threads.  Caller holds reg_lock. */
static bool collect_locked(struct writer *w) {
  size_t n = 0;
  uint64_t dropped = atomic_load_explicit(&lost_noalloc, memory_order_relaxed);
  for (struct tbuf *b = buffers; b; b = b->next) {
    n += (size_t)atomic_load_explicit(&b->count, memory_order_relaxed);
    dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
  }
  w->dropped = dropped;
  w->all = evrt__malloc((n ? n : 1) * sizeof *w->all);
  size_t k = 0;
  struct tbuf **pp = &buffers;
  while (*pp) {
    struct tbuf *b = *pp;
    uint64_t c = atomic_load_explicit(&b->count, memory_order_relaxed);
    for (uint64_t i = 0; w->all && i < c; i++)
      w->all[k++] = b->chunks[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
    atomic_store_explicit(&b->count, 0, memory_order_relaxed);
    atomic_store_explicit(&b->dropped, 0, memory_order_relaxed);
    if (b->orphan) {
      *pp = b->next;
      for (unsigned i = 0; i < MAX_CHUNKS && b->chunks[i]; i++)
        evrt__free(b->chunks[i]);
      evrt__free(b);
    } else {
      pp = &b->next;
    }
  }
  atomic_store_explicit(&lost_noalloc, 0, memory_order_relaxed);
  w->n = k;
  return w->all != NULL;
}

/* Caller holds ctl_lock and tracing is active. */
static evrt_status_t stop_locked(void) {
  /* seq_cst: the other half of the Dekker pair in reserve() */
  atomic_store_explicit(&evrt__trace_enabled, 0, memory_order_seq_cst);
  active = false;
  struct writer w;
  memset(&w, 0, sizeof w);
  w.f = out;
  w.base = t_start;
  pthread_mutex_lock(&reg_lock);
  for (struct tbuf *b = buffers; b; b = b->next) {
    /* acquire: pairs with the release in commit(); the owner's busy
     * section is a few stores long, so yield rather than sleep */
    while (atomic_load_explicit(&b->busy, memory_order_seq_cst))
      sched_yield();
  }
  bool ok = collect_locked(&w);
  pthread_mutex_unlock(&reg_lock);
  atomic_store_explicit(&last_dropped, w.dropped, memory_order_relaxed);
  evrt_status_t st = EVRT_SUCCESS;
  bool forked = getpid() != session_pid;
  if (!forked) {
    ok = ok && prepare(&w) && put_events(&w);
    if (!ok) {
      /* drop a half-written file: the reader gets a valid, empty trace */
      fflush(out);
      if (ftruncate(fileno(out), 0) != 0)
        clearerr(out);
      rewind(out);
      fputs("{\"traceEvents\":[],\"otherData\":{\"error\":\"evrt: out of "
            "memory while writing the trace\"}}\n",
            out);
      st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                      "out of memory while writing trace %s", out_path);
    }
    if (fflush(out) != 0 || ferror(out)) {
      if (st == EVRT_SUCCESS)
        st = evrt__fail(EVRT_ERROR_SYSTEM, "cannot write trace %s: %s",
                        out_path, strerror(errno));
    }
  }
  /* In a child after fork() the file belongs to the parent's session:
   * close our copy without writing. */
  if (fclose(out) != 0 && st == EVRT_SUCCESS && !forked)
    st = evrt__fail(EVRT_ERROR_SYSTEM, "cannot close trace %s: %s", out_path,
                    strerror(errno));
  out = NULL;
  evrt__free(out_path);
  out_path = NULL;
  evrt__free(w.all);
  evrt__free(w.syn);
  evrt__free(w.slices);
  evrt__free(w.rec_slice);
  evrt__free(w.shown_start);
  if (forked && st == EVRT_SUCCESS)
    st = evrt__fail(EVRT_ERROR_FORKED,
                    "tracing was started before fork(): the trace belongs to "
                    "the parent");
  return st;
}

static evrt_status_t start_locked(const char *path) {
  if (active)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "tracing is already on (writing %s)", out_path);
  size_t len = strlen(path);
  char *copy = evrt__malloc(len + 1);
  if (!copy)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot copy the trace path");
  memcpy(copy, path, len + 1);
  FILE *f = fopen(path, "w");
  if (!f) {
    int err = errno;
    evrt__free(copy);
    return evrt__fail(EVRT_ERROR_SYSTEM, "cannot open trace file %s: %s", path,
                      strerror(err));
  }
  uint64_t c = DEFAULT_CAP;
  const char *env = getenv("EVRT_TRACE_BUFFER");
  if (env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == 0 && v > 0)
      c = v;
  }
  if (c > (uint64_t)MAX_CHUNKS * CHUNK_ENTRIES)
    c = (uint64_t)MAX_CHUNKS * CHUNK_ENTRIES;
  atomic_store_explicit(&cap, c, memory_order_relaxed);
  out = f;
  out_path = copy;
  session_pid = getpid();
  pthread_mutex_lock(&names_lock);
  session_no++;
  pthread_mutex_unlock(&names_lock);
  t_start = evrt__now_ns();
  active = true;
  /* seq_cst (a release at least): hooks that see the flag see the cap and
   * the buffers reset by the previous stop */
  atomic_store_explicit(&evrt__trace_enabled, 1, memory_order_seq_cst);
  return EVRT_SUCCESS;
}

/* ----------------------------------------------------------------- API */

void evrt__trace_init_from_env(void) {
  const char *path = getenv("EVRT_TRACE");
  if (!path || !*path)
    return;
  pthread_mutex_lock(&ctl_lock);
  evrt_status_t st = active ? EVRT_SUCCESS : start_locked(path);
  pthread_mutex_unlock(&ctl_lock);
  if (st != EVRT_SUCCESS) {
    /* said once on stderr; the call that initialized the library succeeds
     * and must not find this as its "last error" */
    fprintf(stderr, "evrt: EVRT_TRACE=%s: %s (not tracing)\n", path,
            evrt_last_error_message());
    evrt_clear_last_error();
  }
}

void evrt__trace_finish(void) {
  pthread_mutex_lock(&ctl_lock);
  if (active) {
    const char *path = out_path;
    char shown[256];
    snprintf(shown, sizeof shown, "%s", path ? path : "");
    if (stop_locked() != EVRT_SUCCESS && getpid() == session_pid)
      fprintf(stderr, "evrt: trace %s: %s\n", shown,
              evrt_last_error_message());
  }
  pthread_mutex_unlock(&ctl_lock);
}

evrt_status_t evrt_trace_start(const char *path) {
  if (!path || !*path)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "trace path is NULL or empty");
  evrt_status_t st = evrt__ready();
  if (st != EVRT_SUCCESS)
    return st;
  pthread_mutex_lock(&ctl_lock);
  st = start_locked(path);
  pthread_mutex_unlock(&ctl_lock);
  return st;
}

evrt_status_t evrt_trace_stop(void) {
  pthread_mutex_lock(&ctl_lock);
  evrt_status_t st = active ? stop_locked() : EVRT_SUCCESS;
  pthread_mutex_unlock(&ctl_lock);
  return st;
}

uint64_t evrt_trace_dropped(void) {
  if (!atomic_load_explicit(&evrt__trace_enabled, memory_order_acquire))
    return atomic_load_explicit(&last_dropped, memory_order_relaxed);
  uint64_t n = atomic_load_explicit(&lost_noalloc, memory_order_relaxed);
  pthread_mutex_lock(&reg_lock);
  for (struct tbuf *b = buffers; b; b = b->next)
    n += atomic_load_explicit(&b->dropped, memory_order_relaxed);
  pthread_mutex_unlock(&reg_lock);
  return n;
}
