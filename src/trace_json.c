/*
 * trace_json.c - the trace writer: sorts and matches the entries of a
 * session (record <-> record item, wait item <-> bind <-> resume) and prints
 * them as a Chrome trace-event JSON file (docs/trace.md describes the file;
 * tools/evrt-trace.c draws it).
 */
#include "trace_internal.h"
#include "json_str.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file is written with write(2) from this buffer, not through stdio:
 * a process forked while a thread writes the trace must not hold a copy of
 * unwritten bytes that its exit would flush into the parent's file (the
 * child never writes the parent's trace; src/trace_rec.c).  The calls
 * mirror stdio's; the first write error is kept in err. */
struct sink {
  int fd;
  int err;
  size_t n;
  char buf[65536];
};

static void sink_flush(struct sink *f) {
  size_t off = 0;
  while (off < f->n && !f->err) {
    ssize_t r = write(f->fd, f->buf + off, f->n - off);
    if (r > 0)
      off += (size_t)r;
    else if (r < 0 && errno != EINTR)
      f->err = errno;
    else if (r == 0)
      f->err = EIO;
  }
  f->n = 0;
}

static void sink_write(const void *p, size_t size, size_t nmemb,
                       struct sink *f) {
  const char *c = p;
  size_t len = size * nmemb;
  while (len) {
    if (f->n == sizeof f->buf)
      sink_flush(f);
    size_t k = sizeof f->buf - f->n;
    if (k > len)
      k = len;
    memcpy(f->buf + f->n, c, k);
    f->n += k;
    c += k;
    len -= k;
  }
}

static void sink_puts(const char *s, struct sink *f) {
  sink_write(s, 1, strlen(s), f);
}

static void sink_printf(struct sink *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sink_printf(struct sink *f, const char *fmt, ...) {
  char tmp[512]; /* every line printed here fits; the longer case is kept
                    correct anyway */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof tmp) {
    sink_write(tmp, 1, (size_t)n, f);
    return;
  }
  char *big = evrt__malloc((size_t)n + 1);
  if (!big) {
    f->err = f->err ? f->err : ENOMEM;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sink_write(big, 1, (size_t)n, f);
  evrt__free(big);
}

#define HOST_PID 1000000
#define HOST_TID_BASE 1000000000ull

struct writer {
  struct sink *f;
  uint64_t base;
  struct evrt__trace_entry *all;
  size_t n;
  /* synthetic slices for records of idle streams */
  struct evrt__trace_entry *syn;
  size_t nsyn;
  struct evrt__trace_entry **slices, **recs, **waits, **binds;
  struct evrt__trace_entry **resumes, **hwaits;
  size_t nslices, nrecs, nwaits, nbinds, nresumes, nhwaits;
  struct evrt__trace_entry **rec_slice; /* per record (sorted recs order) */
  uint64_t *shown_start; /* per slice position: start shown in the file */
  bool *wait_bound;
  uint64_t dropped;
};

static void sink_put(const char *p, size_t n, void *f) {
  sink_write(p, 1, n, f);
}

static void put_str(struct sink *f, const char *s) {
  evrt__json_str(s, sink_put, f);
}

/* Microseconds since the session start, with ns precision. */
static void put_ts(struct writer *w, const char *key, uint64_t t) {
  int64_t d = (int64_t)(t - w->base);
  if (t < w->base)
    d = 0;
  sink_printf(w->f, ",\"%s\":%lld.%03lld", key, (long long)(d / 1000),
              (long long)(d % 1000));
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }
static int cmp_ptr(const void *a, const void *b) {
  return (uintptr_t)a < (uintptr_t)b ? -1 : (uintptr_t)a > (uintptr_t)b;
}

/* slices: by track, then time (ties: the entry's address, deterministic). */
static int cmp_track_time(const void *pa, const void *pb) {
  const struct evrt__trace_entry *a = *(struct evrt__trace_entry *const *)pa;
  const struct evrt__trace_entry *b = *(struct evrt__trace_entry *const *)pb;
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
  const struct evrt__trace_entry *a = *(struct evrt__trace_entry *const *)pa;
  const struct evrt__trace_entry *b = *(struct evrt__trace_entry *const *)pb;
  int c;
  if ((c = cmp_u64(a->event, b->event)))
    return c;
  if ((c = cmp_u64(a->gen, b->gen)))
    return c;
  if ((c = cmp_u64(a->t0, b->t0)))
    return c;
  return cmp_ptr(a, b);
}

static int cmp_key(const struct evrt__trace_entry *a,
                   const struct evrt__trace_entry *b) {
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
  const struct evrt__trace_entry *a = *(struct evrt__trace_entry *const *)pa;
  const struct evrt__trace_entry *b = *(struct evrt__trace_entry *const *)pb;
  int c = cmp_key(a, b);
  if (c)
    return c;
  if ((c = cmp_u64(a->t0, b->t0)))
    return c;
  return cmp_ptr(a, b);
}

/* The record item (slice) of a record entry: same stream and generation. */
static struct evrt__trace_entry *
find_record_item(struct evrt__trace_entry **v, size_t n,
                 const struct evrt__trace_entry *r) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const struct evrt__trace_entry *m = v[mid];
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

static void put_meta(struct sink *f, const char *what, int pid, uint64_t tid,
                     bool thread, const char *key, const char *sval,
                     long long ival) {
  sink_printf(f, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d", what, pid);
  if (thread)
    sink_printf(f, ",\"tid\":%llu", (unsigned long long)tid);
  sink_printf(f, ",\"args\":{\"%s\":", key);
  if (sval)
    put_str(f, sval);
  else
    sink_printf(f, "%lld", ival);
  sink_puts("}}", f);
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
  struct sink *f = w->f;
  pthread_mutex_lock(&evrt__trace_names_lock);
  size_t nt = w->nslices + evrt__trace_names_used;
  struct track *t = evrt__malloc((nt ? nt : 1) * sizeof *t);
  if (!t) {
    pthread_mutex_unlock(&evrt__trace_names_lock);
    return false;
  }
  nt = 0;
  for (size_t i = 0; i < w->nslices; i++)
    if (i == 0 || w->slices[i]->stream != w->slices[i - 1]->stream ||
        w->slices[i]->device != w->slices[i - 1]->device)
      t[nt++] = (struct track){w->slices[i]->device, w->slices[i]->stream};
  for (size_t i = 0; i < evrt__trace_names_cap; i++)
    if (evrt__trace_names[i].id &&
        evrt__trace_names[i].session == evrt__trace_session_no)
      t[nt++] =
          (struct track){evrt__trace_names[i].device, evrt__trace_names[i].id};
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
    struct evrt__trace_name *s =
        evrt__trace_names_cap ? evrt__trace_name_find(t[i].stream) : NULL;
    if (s && s->id && s->name[0])
      snprintf(buf, sizeof buf, "%s", s->name);
    else
      snprintf(buf, sizeof buf, "device %d stream %llu", dev,
               (unsigned long long)t[i].stream);
    put_meta(f, "thread_name", dev + 1, t[i].stream, true, "name", buf, 0);
    put_meta(f, "thread_sort_index", dev + 1, t[i].stream, true, "sort_index",
             NULL, (long long)t[i].stream);
  }
  pthread_mutex_unlock(&evrt__trace_names_lock);
  evrt__free(t);
  for (size_t i = 0; i < w->nhwaits; i++) {
    const struct evrt__trace_entry *e = w->hwaits[i];
    if (i == 0) {
      put_meta(f, "process_name", HOST_PID, 0, false, "name", "host", 0);
      put_meta(f, "process_sort_index", HOST_PID, 0, false, "sort_index", NULL,
               HOST_PID);
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
  struct sink *f = w->f;
  const struct evrt__trace_entry *e = w->slices[pos];
  uint64_t t0 = w->shown_start[pos];
  const char *kind = evrt__item_kind_name(e->kind);
  sink_printf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%llu", e->device + 1,
              (unsigned long long)e->stream);
  put_ts(w, "ts", t0);
  sink_printf(f, ",\"dur\":%llu.%03llu,\"name\":",
              (unsigned long long)((e->t1 - t0) / 1000),
              (unsigned long long)((e->t1 - t0) % 1000));
  put_str(f, e->label[0] ? e->label : kind);
  sink_printf(f, ",\"cat\":\"%s\",\"args\":{\"kind\":\"%s\"", kind, kind);
  if (EVRT__ITEM_IS_EVENT(e->kind))
    sink_printf(f, ",\"event\":%llu,\"gen\":%llu", (unsigned long long)e->event,
                (unsigned long long)e->gen);
  if (e->synthetic)
    sink_puts(",\"inline\":true", f);
  sink_puts("}}", f);
}

static void put_flow_point(struct writer *w, char ph,
                           const struct evrt__trace_entry *on, uint64_t id,
                           uint64_t event, uint64_t t, bool enclosing) {
  sink_printf(w->f, ",\n{\"ph\":\"%c\",\"id\":%llu,\"pid\":%d,\"tid\":%llu", ph,
              (unsigned long long)id, on->device + 1,
              (unsigned long long)on->stream);
  put_ts(w, "ts", t);
  sink_printf(w->f, ",\"name\":\"event %llu\",\"cat\":\"event\"%s}",
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
    struct evrt__trace_entry *wt = w->slices[pos];
    if (wt->kind != EVRT__ITEM_WAIT || !wt->gen)
      continue;
    size_t r = find_record(w, wt->event, wt->gen);
    if (r == (size_t)-1)
      continue;
    const struct evrt__trace_entry *rec = w->recs[r], *rs = w->rec_slice[r];
    uint64_t ws = w->shown_start[pos];
    uint64_t tr = clamp(rec->t0, rs->t0, rs->t1);
    /* the step: inside the wait, after the record when the wait outlasted it */
    uint64_t lo = clamp(tr, ws, wt->t1);
    uint64_t tw = lo + (wt->t1 - lo) / 2;
    const struct evrt__trace_entry *next = NULL;
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
  struct sink *f = w->f;
  sink_printf(f,
              "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"evrt_version\":"
              "\"%s\",\"clock\":\"CLOCK_MONOTONIC\",\"start_ns\":%llu,"
              "\"dropped_entries\":%llu},\n\"traceEvents\":[\n",
              evrt_version_string(), (unsigned long long)w->base,
              (unsigned long long)w->dropped);
  /* A first event so every later one starts with ",". */
  sink_printf(f,
              "{\"ph\":\"M\",\"name\":\"trace_info\",\"pid\":0,\"args\":"
              "{\"dropped_entries\":%llu}}",
              (unsigned long long)w->dropped);
  if (!put_tracks(w))
    return false;
  for (size_t i = 0; i < w->nslices; i++)
    put_slice(w, i);
  for (size_t i = 0; i < w->nrecs; i++) {
    const struct evrt__trace_entry *e = w->recs[i];
    sink_printf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%llu",
                e->device + 1, (unsigned long long)e->stream);
    put_ts(w, "ts", e->t0);
    sink_printf(f,
                ",\"name\":\"record\",\"cat\":\"record\",\"args\":{\"event\":"
                "%llu,\"gen\":%llu}}",
                (unsigned long long)e->event, (unsigned long long)e->gen);
  }
  for (size_t i = 0; i < w->nhwaits; i++) {
    const struct evrt__trace_entry *e = w->hwaits[i];
    const char *what = e->label[0] ? e->label : "host_wait";
    const char *key = strncmp(what, "event", 5) == 0    ? "event"
                      : strncmp(what, "stream", 6) == 0 ? "stream"
                                                        : "id";
    sink_printf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%llu", HOST_PID,
                (unsigned long long)(HOST_TID_BASE + e->gen));
    put_ts(w, "ts", e->t0);
    sink_printf(f, ",\"dur\":%llu.%03llu,\"name\":",
                (unsigned long long)((e->t1 - e->t0) / 1000),
                (unsigned long long)((e->t1 - e->t0) % 1000));
    put_str(f, what);
    sink_printf(f, ",\"cat\":\"host_wait\",\"args\":{\"%s\":%llu}}", key,
                (unsigned long long)e->stream);
  }
  put_flows(w);
  /* Marks (EVRT_CHECK's findings): instants on the stream's track, or on
   * the host thread's for host code. */
  for (size_t i = 0; i < w->n; i++) {
    const struct evrt__trace_entry *e = &w->all[i];
    if (e->type != EVRT__TE_MARK)
      continue;
    if (e->device >= 0)
      sink_printf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%llu",
                  e->device + 1, (unsigned long long)e->stream);
    else
      sink_printf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%llu",
                  HOST_PID, (unsigned long long)(HOST_TID_BASE + e->gen));
    put_ts(w, "ts", e->t0);
    sink_printf(f, ",\"name\":");
    put_str(f, e->label);
    sink_printf(f, ",\"cat\":\"evrt-check\",\"args\":{\"work_item\":%llu}}",
                (unsigned long long)e->event);
  }
  sink_puts("\n]}\n", f);
  return true;
}

static int cmp_host(const void *pa, const void *pb) {
  const struct evrt__trace_entry *a = *(struct evrt__trace_entry *const *)pa;
  const struct evrt__trace_entry *b = *(struct evrt__trace_entry *const *)pb;
  int c = cmp_u64(a->gen, b->gen);
  if (!c)
    c = cmp_u64(a->t0, b->t0);
  return c ? c : cmp_ptr(a, b);
}

/* Sort and match the copied entries; false if out of memory. */
static bool prepare(struct writer *w) {
  size_t n = w->n, nrec = 0;
  for (size_t i = 0; i < n; i++) {
    struct evrt__trace_entry *e = &w->all[i];
    /* Clock values from before the session (a host wait that began before
     * the start) are clamped to its start. */
    if (e->t0 < w->base)
      e->t0 = w->base;
    if (e->t1 < e->t0)
      e->t1 = e->t0;
    nrec += e->type == EVRT__TE_RECORD;
  }
  w->syn = evrt__calloc(nrec + 1, sizeof *w->syn);
  struct evrt__trace_entry **v = evrt__calloc(4 * n + 2 * nrec + 8, sizeof *v);
  w->rec_slice = evrt__calloc(nrec + 1, sizeof *w->rec_slice);
  w->shown_start = evrt__calloc(n + nrec + 1, sizeof *w->shown_start);
  if (!w->syn || !v || !w->rec_slice || !w->shown_start)
    return false;
  /* One pointer array cut in pieces: slices (with room for the synthetic
   * ones), records, waits, binds, resumes, host waits, record items. */
  w->slices = v;
  w->recs = w->slices + n + nrec;
  w->waits = w->recs + nrec;
  struct evrt__trace_entry **tmp = w->waits + n;
  size_t ntmp = 0;
  for (size_t i = 0; i < n; i++) {
    struct evrt__trace_entry *e = &w->all[i];
    if (e->type == EVRT__TE_ITEM) {
      w->slices[w->nslices++] = e;
      if (e->kind == EVRT__ITEM_RECORD)
        tmp[ntmp++] = e;
    } else if (e->type == EVRT__TE_RECORD) {
      w->recs[w->nrecs++] = e;
    }
  }
  /* record <-> record item; a record with no item ran inline on an idle
   * stream: it gets a zero-length slice so its flows have a start. */
  qsort(tmp, ntmp, sizeof *tmp, cmp_gen);
  qsort(w->recs, w->nrecs, sizeof *w->recs, cmp_gen);
  for (size_t i = 0; i < w->nrecs; i++) {
    struct evrt__trace_entry *r = w->recs[i];
    struct evrt__trace_entry *it = find_record_item(tmp, ntmp, r);
    if (!it) {
      it = &w->syn[w->nsyn++];
      *it = *r;
      it->type = EVRT__TE_ITEM;
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
    struct evrt__trace_entry *e = &w->all[i];
    if (e->type == EVRT__TE_ITEM && e->kind == EVRT__ITEM_WAIT && e->gen)
      w->waits[w->nwaits++] = e;
    else if (e->type == EVRT__TE_BIND)
      w->binds[w->nbinds++] = e;
    else if (e->type == EVRT__TE_HOST_WAIT)
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
      struct evrt__trace_entry *wt = w->waits[i++];
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

int evrt__trace_write_json(int fd, uint64_t base, struct evrt__trace_entry *all,
                           size_t n, uint64_t dropped) {
  /* One writer at a time (the trace's ctl_lock): the buffer is static. */
  static struct sink out;
  out.fd = fd;
  out.err = 0;
  out.n = 0;
  struct writer w;
  memset(&w, 0, sizeof w);
  w.f = &out;
  w.base = base;
  w.all = all;
  w.n = n;
  w.dropped = dropped;
  bool ok = prepare(&w) && put_events(&w);
  if (ok)
    sink_flush(&out);
  evrt__free(w.syn);
  evrt__free(w.slices);
  evrt__free(w.rec_slice);
  evrt__free(w.shown_start);
  return !ok ? ENOMEM : out.err;
}
