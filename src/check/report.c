/*
 * report.c - the checker's findings: one block on stderr per distinct
 * finding, as it is found (first line "evrt-check: KIND ..."), the JSON
 * file of EVRT_CHECK_REPORT and the exit status (EVRT_CHECK_EXITCODE,
 * default 66) when the process ends.
 *
 * A finding is distinct by its kind and the call sites and operations of
 * both sides: a race in a loop is reported once, counted every time.
 *
 * Lock: report_lock (a mutex, a leaf: nothing else is taken under it but
 * the site table, which is lock-free).
 */
#include "cimpl.h"
#include "json_str.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

struct finding {
  int kind;
  struct evrt__acc *now, *then;
  struct evrt__cycle_member *cyc;
  int ncyc;
  uint32_t host_site;
  uint64_t count;
};
static struct finding *findings; /* report_lock */
static size_t nfind, capfind;
static atomic_uint_least64_t total; /* every occurrence, duplicates too */
static int exit_code = 66;
static char *json_path;
static bool oom_said;

static const char *const mark_name[] = {
    [FIND_RACE] = "check: data race",
    [FIND_UAF] = "check: use after free",
    [FIND_HOST] = "check: host access",
    [FIND_DEADLOCK] = "check: deadlock",
};

static void mark(int kind, const struct evrt__acc *a) {
  if (EVRT_TRACING())
    evrt__trace_mark(a->op == OP_HOST ? -1 : a->device, a->stream_id, a->tid,
                     a->seq, a->t ? a->t : evrt__now_ns(), mark_name[kind]);
}

static const char *const kind_name[] = {
    [FIND_RACE] = "data race",
    [FIND_UAF] = "use after free",
    [FIND_HOST] = "unsynchronized host access",
    [FIND_DEADLOCK] = "deadlock",
};

uint64_t evrt__check_nfindings(void) {
  return atomic_load_explicit(&total, memory_order_relaxed);
}

void evrt__check_oom(void) {
  pthread_mutex_lock(&report_lock);
  bool said = oom_said;
  oom_said = true;
  pthread_mutex_unlock(&report_lock);
  if (!said)
    fprintf(stderr, "evrt-check: note: out of memory inside the checker; "
                    "later findings may be missed\n");
}

void evrt__stream_name_of(uint64_t id, char *out, size_t n) {
  out[0] = 0;
  struct evrt__table *t = &evrt__streams;
  uint32_t m = atomic_load_explicit(&t->next_unused, memory_order_acquire);
  for (uint32_t i = 0; i < m; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(t, i);
    struct evrt__cstream *cs = s ? s->check : NULL;
    if (!cs)
      continue;
    evrt__spin_lock(&cs->lock);
    bool hit = cs->id == id;
    if (hit)
      snprintf(out, n, "%s", cs->name);
    evrt__spin_unlock(&cs->lock);
    if (hit)
      return;
  }
}

/* --------------------------------------------------------------- text */

static const char *op_name(const struct evrt__acc *a) {
  switch (a->op) {
  case EVRT__ITEM_MEMCPY:
    return "evrt_memcpy_async";
  case EVRT__ITEM_MEMSET:
    return "evrt_memset_async";
  case EVRT__ITEM_HOST_FUNC:
    return "host function";
  case OP_HOST:
    return "host code";
  default:
    return evrt__item_kind_name(a->op);
  }
}

static const char *acc_verb(const struct evrt__acc *a) {
  switch (a->kind) {
  case ACC_READ:
    return "read";
  case ACC_WRITE:
    return a->rw ? "read and write" : "write";
  case ACC_ALLOC:
    return "allocation";
  default:
    return "free";
  }
}

/* "stream 3" or "stream 3 \"name\"". */
static void put_stream(FILE *f, uint64_t id) {
  char name[64];
  evrt__stream_name_of(id, name, sizeof name);
  fprintf(f, "stream %" PRIu64 "%s%s%s", id, name[0] ? " \"" : "", name,
          name[0] ? "\"" : "");
}

/* A value wait's condition, as ">=" (EVRT_VALUE_WAIT_* in its low bits). */
static const char *cond_name(uint32_t flags) {
  static const char *const op[] = {">=", "==", "&", "nor"};
  return op[flags & 3u];
}

/* The last wait the access's stream passed: the edge that was meant to
 * order it (an event generation, or a value wait and the write of its
 * word that it passed on). */
static void put_last_wait(FILE *f, const struct evrt__clw *w) {
  if (w->ev) {
    fprintf(f,
            "    last wait passed before it: event 0x%" PRIx64
            " generation %" PRIu64 " (recorded on stream %" PRIu64
            " at work item #%" PRIu64 ")\n",
            w->ev, w->gen, w->src, w->target);
    return;
  }
  if (!w->addr) {
    fprintf(f, "    no stream wait passed before it on its stream\n");
    return;
  }
  fprintf(f, "    last wait passed before it: value wait on 0x%" PRIxPTR
             " %s %" PRIu64 "%s, ",
          w->addr, cond_name(w->flags), w->value,
          (w->flags & EVRT_VALUE_WAIT_RESET) ? " (a notify wait, reset as it "
                                               "passes)"
                                             : "");
  if (w->wstream) {
    fprintf(f, "written by ");
    put_stream(f, w->wstream);
    fprintf(f, " at work item #%" PRIu64 ", enqueued at ", w->wseq);
    evrt__site_print(f, w->wsite, "      ", 0);
  } else if (w->wtid) {
    fprintf(f, "written by host thread %" PRIu64 " at ", w->wtid);
    evrt__site_print(f, w->wsite, "      ", 0);
  } else {
    fprintf(f, "written by nothing the checker saw (a store it does not "
               "track orders nothing)\n");
  }
}

static void put_where(FILE *f, const struct evrt__acc *a) {
  if (a->op == OP_HOST) {
    fprintf(f, "    on host thread %" PRIu64 "\n", a->tid);
    fprintf(f, "    at ");
    evrt__site_print(f, a->site, "      ", 2);
    return;
  }
  fprintf(f, "    on ");
  put_stream(f, a->stream_id);
  fprintf(f, " (device %d), work item #%" PRIu64 "\n", a->device, a->seq);
  if (a->launch.stream) {
    /* A replayed graph's node: which launch (two launches of graphs made
     * from one capture differ only here). */
    fprintf(f, "    in the graph launched on ");
    put_stream(f, a->launch.stream);
    fprintf(f, " by evrt_graph_launch at ");
    evrt__site_print(f, a->launch.site, "      ", 2);
  }
  if (a->site2) {
    fprintf(f, "    annotated at ");
    evrt__site_print(f, a->site2, "      ", 0);
  }
  fprintf(f, a->launch.stream ? "    captured at " : "    enqueued at ");
  evrt__site_print(f, a->site, "      ", 2);
  put_last_wait(f, &a->lw);
}

static void put_acc(FILE *f, const char *label, const struct evrt__acc *a) {
  fprintf(f, "  %s: %s by %s%s%s%s of [0x%" PRIxPTR ", 0x%" PRIxPTR
             ") (%" PRIuPTR " bytes)\n",
          label, acc_verb(a), op_name(a), a->role ? " (" : "",
          a->role ? a->role : "", a->role ? ")" : "", a->lo, a->hi,
          a->hi - a->lo);
  put_where(f, a);
}

/* The stream the program put an access's work on: a replayed graph's
 * node runs on an internal lane, the program launched it on another. */
static uint64_t user_stream(const struct evrt__acc *a) {
  return a->launch.stream ? a->launch.stream : a->stream_id;
}

/* Both nodes of one launch: what is missing is an edge of the graph. */
static bool same_launch(const struct evrt__acc *a, const struct evrt__acc *b) {
  return a->launch.stream && a->launch.stream == b->launch.stream &&
         a->launch.site == b->launch.site;
}

/* The API a finding's operations were written in: ACL when either side's
 * call went through the ACL layer (its streams, events and frees are
 * ACL's, from C or pyACL), else Python when either side's call (or
 * declared access) was made from Python, else C (EVRT_CHECK_API_*). */
static unsigned finding_api(const struct finding *x) {
  const struct evrt__acc *s[2] = {x->now, x->then};
  unsigned api = EVRT_CHECK_API_C;
  for (int i = 0; i < 2; i++) {
    if (!s[i])
      continue;
    unsigned a = evrt__site_api(s[i]->site);
    unsigned b = s[i]->site2 ? evrt__site_api(s[i]->site2) : a;
    if (a == EVRT__CHECK_API_ACL || b == EVRT__CHECK_API_ACL)
      return EVRT__CHECK_API_ACL;
    if (a == EVRT_CHECK_API_PYTHON || b == EVRT_CHECK_API_PYTHON)
      api = EVRT_CHECK_API_PYTHON;
  }
  return api;
}

/* The fix in ACL's calls (aclrt*; pyACL's acl.rt.* have the same names
 * without the prefix); NULL where the C words fit as they are. */
static char *acl_fix(const struct finding *x) {
  const struct evrt__acc *a = x->now, *b = x->then;
  char *out = NULL;
  int r = -1;
  if (x->kind == FIND_RACE && a->op != OP_HOST && b->op != OP_HOST)
    r = asprintf(&out,
                 "fix: record an event on stream %" PRIu64
                 " after its access (aclrtRecordEvent) and make stream %" PRIu64
                 " wait on it (aclrtStreamWaitEvent) before its access, or "
                 "synchronize in between (aclrtSynchronizeStream)",
                 user_stream(b), user_stream(a));
  else if (x->kind == FIND_HOST)
    r = asprintf(&out,
                 "fix: synchronize stream %" PRIu64
                 " (aclrtSynchronizeStream, or aclrtSynchronizeEvent of an "
                 "event recorded after its work) before the host touches this "
                 "memory, or enqueue the host access as a host function "
                 "(aclrtLaunchHostFunc) after a wait",
                 user_stream(a->op == OP_HOST ? b : a));
  else if (x->kind == FIND_UAF && x->then->kind != ACC_ALLOC)
    r = asprintf(&out, "fix: synchronize the streams that still use the "
                       "block (aclrtSynchronizeStream, or aclrtSynchronizeEvent "
                       "of an event recorded after their last use) before "
                       "freeing it (aclrtFree)");
  return r < 0 ? NULL : out;
}

/* A stream as a Python expression in a fix: its name when the program
 * named it with a Python identifier, else the placeholder dflt, which the
 * line explains ("s1: stream 2") in legend. */
static void py_stream(char *out, size_t n, uint64_t id, const char *dflt,
                      char *legend, size_t ln) {
  evrt__stream_name_of(id, out, n);
  bool ident = out[0] && !(out[0] >= '0' && out[0] <= '9');
  for (const char *c = out; *c && ident; c++)
    ident = *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
            (*c >= '0' && *c <= '9');
  if (ident)
    return;
  snprintf(out, n, "%s", dflt);
  size_t k = strlen(legend);
  snprintf(legend + k, ln - k, "%s%s: stream %" PRIu64, k ? ", " : "", dflt,
           id);
}

/* The fix of a race with a replayed graph's node in C words: the streams
 * the program launched on (not the lanes), or the capture's missing edge;
 * NULL when no side is a graph's. */
static char *graph_fix(const struct finding *x) {
  const struct evrt__acc *a = x->now, *b = x->then;
  char *out = NULL;
  int r = -1;
  if (x->kind != FIND_RACE || a->op == OP_HOST || b->op == OP_HOST ||
      (!a->launch.stream && !b->launch.stream))
    return NULL;
  if (same_launch(a, b))
    r = asprintf(&out, "fix: the captured graph does not order these two "
                       "nodes: while capturing, record an event on the "
                       "first's stream after it and make the second's stream "
                       "wait on it (evrt_stream_wait_event) before it");
  else
    r = asprintf(&out,
                 "fix: record an event on stream %" PRIu64
                 " after its work (for a graph: after its evrt_graph_launch) "
                 "and make stream %" PRIu64
                 " wait on it (evrt_stream_wait_event) before its work, or "
                 "synchronize in between",
                 user_stream(b), user_stream(a));
  return r < 0 ? NULL : out;
}

/* A finding's fix line, in the API its program used (malloc'd). */
static char *fix_text(const struct finding *x);

/* The fix in Python's torch-style words (evrt.Stream, evrt.cuda), naming
 * the streams; NULL where the C words fit as they are. */
static char *py_fix(const struct finding *x) {
  const struct evrt__acc *a = x->now, *b = x->then;
  char s1[64], s2[64], legend[160] = "", *out = NULL;
  int r = -1;
  if (x->kind == FIND_RACE && a->op != OP_HOST && b->op != OP_HOST &&
      same_launch(a, b)) {
    r = asprintf(&out, "fix: the captured graph does not order these two "
                       "functions: while capturing, make the second's stream "
                       "wait for the first's between them (s2.wait_stream(s1), "
                       "or e = s1.record_event() then s2.wait_event(e))");
  } else if (x->kind == FIND_RACE && a->op != OP_HOST && b->op != OP_HOST) {
    /* which access ran first is timing: either order fixes the race, the
     * one the report names is the one that ran (b, then a) */
    py_stream(s1, sizeof s1, user_stream(b), "s1", legend, sizeof legend);
    py_stream(s2, sizeof s2, user_stream(a), "s2", legend, sizeof legend);
    r = asprintf(&out,
                 "fix: make %s wait for %s's work between the two: "
                 "%s.wait_stream(%s), or e = %s.record_event() then "
                 "%s.wait_event(e), or %s.synchronize() in between%s%s%s",
                 s2, s1, s2, s1, s1, s2, s1, legend[0] ? " (" : "", legend,
                 legend[0] ? ")" : "");
  } else if (x->kind == FIND_HOST) {
    const struct evrt__acc *w = a->op == OP_HOST ? b : a;
    py_stream(s1, sizeof s1, user_stream(w), "s", legend, sizeof legend);
    r = asprintf(&out,
                 "fix: synchronize before the host touches this memory: "
                 "%s.synchronize(), e.synchronize() of an event recorded on it "
                 "after its work, or evrt.synchronize()%s%s%s; or launch the "
                 "access as a function after a wait",
                 s1, legend[0] ? " (" : "", legend, legend[0] ? ")" : "");
  }
  return r < 0 ? NULL : out;
}

static const char *fix_line(const struct finding *x);

/* NULL: fix_line's words fit as they are (or no memory for others). */
static char *fix_text(const struct finding *x) {
  unsigned api = finding_api(x);
  char *fix = api == EVRT_CHECK_API_PYTHON ? py_fix(x)
              : api == EVRT__CHECK_API_ACL ? acl_fix(x)
                                           : NULL;
  return fix ? fix : graph_fix(x);
}

static const char *fix_line(const struct finding *x) {
  switch (x->kind) {
  case FIND_RACE:
    if (x->now->op == OP_HOST && x->then->op == OP_HOST)
      return "fix: order the two host threads (evrt sees no host-level "
             "synchronization between them)";
    return "fix: record an event on the first stream after its access and "
           "make the second stream wait on it (evrt_stream_wait_event) "
           "before its access, or synchronize in between";
  case FIND_HOST:
    return "fix: synchronize the stream (or an event recorded after its "
           "work) before the host touches this memory, or enqueue the host "
           "access as a host function after a wait";
  case FIND_UAF:
    if (x->then->kind == ACC_ALLOC)
      return "fix: this work was enqueued before the block was allocated "
             "again: synchronize the stream before freeing the old block";
    return "fix: synchronize the streams that still use the block (or an "
           "event recorded after their last use) before freeing it";
  default:
    return "fix: break the cycle: enqueue each record (or value write, "
           "notify record) before the waits that need it, or do not make "
           "the writing stream wait on the waiter";
  }
}

static void print_pair(FILE *f, const struct finding *x) {
  const struct evrt__acc *a = x->now, *b = x->then;
  uintptr_t lo = a->lo > b->lo ? a->lo : b->lo;
  uintptr_t hi = a->hi < b->hi ? a->hi : b->hi;
  fprintf(f, "evrt-check: %s on [0x%" PRIxPTR ", 0x%" PRIxPTR ") (%" PRIuPTR
             " bytes)\n",
          kind_name[x->kind], lo, hi, hi > lo ? hi - lo : 0);
  if (x->kind == FIND_UAF && b->kind == ACC_FREE) {
    put_acc(f, "use", a);
    put_acc(f, "after the free", b);
  } else if (x->kind == FIND_UAF && a->kind == ACC_FREE) {
    put_acc(f, "free", a);
    put_acc(f, "while still in use by", b);
  } else if (x->kind == FIND_UAF) {
    put_acc(f, "use", a);
    put_acc(f, "not ordered after the block's", b);
  } else {
    put_acc(f, "access", a);
    put_acc(f, "earlier access", b);
    fprintf(f, "  nothing orders them: no wait, synchronize or query "
               "connects the second to the first\n");
  }
  char *fix = fix_text(x);
  fprintf(f, "  %s\n", fix ? fix : fix_line(x));
  free(fix);
}

static void print_value_wait(FILE *f, const struct evrt__cycle_member *m) {
  fprintf(f, "for the word at 0x%" PRIxPTR " to be %s %" PRIu64 "%s; ",
          m->addr, cond_name(m->flags), m->want,
          (m->flags & EVRT_VALUE_WAIT_RESET) ? ", reset as it passes (a notify "
                                              "wait)"
                                            : "");
  fprintf(f, "its write%s queued on stream", m->nprod > 1 ? "s are" : " is");
  for (int k = 0; k < m->nprod && k < EVRT__CYC_PRODUCERS; k++)
    fprintf(f, "%s %" PRIu64, k ? "," : "", m->prod[k]);
  if (m->nprod > EVRT__CYC_PRODUCERS)
    fprintf(f, " and %d more", m->nprod - EVRT__CYC_PRODUCERS);
  fprintf(f, ", behind a wait that never passes\n");
}

static void print_cycle(FILE *f, const struct finding *x) {
  if (x->ncyc == 1)
    fprintf(f, "evrt-check: deadlock: a stream waits for its own later "
               "work\n");
  else
    fprintf(f, "evrt-check: deadlock: %d streams wait on each other\n",
            x->ncyc);
  for (int i = 0; i < x->ncyc; i++) {
    const struct evrt__cycle_member *m = &x->cyc[i];
    char name[64];
    evrt__stream_name_of(m->stream_id, name, sizeof name);
    fprintf(f, "  stream %" PRIu64 "%s%s%s waits (work item #%" PRIu64 ") ",
            m->stream_id, name[0] ? " \"" : "", name, name[0] ? "\"" : "",
            m->seq);
    if (m->value)
      print_value_wait(f, m);
    else
      fprintf(f, "on event 0x%" PRIx64 " generation %" PRIu64
                 ", which needs stream %" PRIu64 " to reach work item #%" PRIu64
                 "\n",
              m->ev, m->gen, m->src_id, m->target);
    fprintf(f, "    wait enqueued at ");
    evrt__site_print(f, m->site, "      ", 2);
  }
  if (x->host_site) {
    fprintf(f, "  a host thread synchronizing on them would block for ever; "
               "the synchronize at ");
    evrt__site_print(f, x->host_site, "    ", 0);
    fprintf(f, "  returns EVRT_ERROR_DEADLOCK (ACL: "
               "ACL_ERROR_RT_TASK_TIMEOUT)\n");
  }
  fprintf(f, "  %s\n", fix_line(x));
}

/* A report is one block on stderr: it is composed in memory and written
 * with one call under stderr's stdio lock, so the program's own stderr
 * output (another thread's line, a failing call's message) lands before or
 * after it, never inside it (check_native report_amid_program_output). */
static void print_whole(void (*fn)(FILE *, const struct finding *),
                        const struct finding *x) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) {
    fn(stderr, x);
    return;
  }
  fn(m, x);
  if (fclose(m) == 0 && len) {
    flockfile(stderr);
    fwrite_unlocked(buf, 1, len, stderr);
    fflush_unlocked(stderr);
    funlockfile(stderr);
  }
  free(buf);
}

/* Symbolization (libdw) wants more stack than a worker's 256 KiB (under
 * ThreadSanitizer it overflowed it): print from a thread of our own. */
struct big_call {
  void (*fn)(FILE *, const struct finding *);
  const struct finding *x;
};
static void *big_main(void *p) {
  struct big_call *c = p;
  print_whole(c->fn, c->x);
  return NULL;
}
static void print_big(void (*fn)(FILE *, const struct finding *),
                      const struct finding *x) {
  struct big_call c = {fn, x};
  pthread_attr_t a;
  pthread_t t;
  bool ok = pthread_attr_init(&a) == 0;
  ok = ok && pthread_attr_setstacksize(&a, (size_t)16 << 20) == 0 &&
       pthread_create(&t, &a, big_main, &c) == 0;
  if (ok)
    pthread_join(t, NULL);
  else
    print_whole(fn, x);
  pthread_attr_destroy(&a);
  fflush(stderr);
}

static bool same(const struct evrt__acc *a, const struct evrt__acc *b) {
  return a->site == b->site && a->site2 == b->site2 && a->op == b->op &&
         a->kind == b->kind && a->rw == b->rw &&
         a->launch.site == b->launch.site;
}

static bool grow(void) {
  if (nfind < capfind)
    return true;
  size_t cap = capfind ? capfind * 2 : 16;
  struct finding *g = realloc(findings, cap * sizeof *g);
  if (!g)
    return false;
  findings = g;
  capfind = cap;
  return true;
}

void evrt__report_pair(int kind, struct evrt__acc *now,
                       struct evrt__acc *then) {
  atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
  pthread_mutex_lock(&report_lock);
  for (size_t i = 0; i < nfind; i++) {
    struct finding *x = &findings[i];
    /* The pair, in either order: which of two racing accesses reached the
     * checker first is timing, the finding is not. */
    if (x->kind == kind && x->now &&
        ((same(x->now, now) && same(x->then, then)) ||
         (same(x->now, then) && same(x->then, now)))) {
      x->count++;
      pthread_mutex_unlock(&report_lock);
      return;
    }
  }
  if (!grow()) {
    pthread_mutex_unlock(&report_lock);
    return;
  }
  struct finding *x = &findings[nfind++];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->now = evrt__acc_ref(now);
  x->then = evrt__acc_ref(then);
  x->count = 1;
  mark(kind, now);
  mark(kind, then);
  print_big(print_pair, x);
  pthread_mutex_unlock(&report_lock);
}

void evrt__report_cycle(const struct evrt__cycle_member *m, int n,
                        uint32_t host_site) {
  pthread_mutex_lock(&report_lock);
  /* the same cycle (same streams and waits) is reported once */
  for (size_t i = 0; i < nfind; i++) {
    struct finding *x = &findings[i];
    if (x->kind != FIND_DEADLOCK || x->ncyc != n)
      continue;
    int k = 0;
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        k += x->cyc[a].stream_id == m[b].stream_id && x->cyc[a].seq == m[b].seq;
    if (k == n) {
      pthread_mutex_unlock(&report_lock);
      return;
    }
  }
  atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
  struct evrt__cycle_member *c = malloc((size_t)n * sizeof *c);
  if (!c || !grow()) {
    free(c);
    pthread_mutex_unlock(&report_lock);
    return;
  }
  memcpy(c, m, (size_t)n * sizeof *c);
  struct finding *x = &findings[nfind++];
  memset(x, 0, sizeof *x);
  x->kind = FIND_DEADLOCK;
  x->cyc = c;
  x->ncyc = n;
  x->host_site = host_site;
  x->count = 1;
  if (EVRT_TRACING())
    for (int i = 0; i < n; i++)
      evrt__trace_mark(m[i].device, m[i].stream_id, 0, m[i].seq, evrt__now_ns(),
                       mark_name[FIND_DEADLOCK]);
  print_big(print_cycle, x);
  pthread_mutex_unlock(&report_lock);
}

/* --------------------------------------------------------------- JSON */

static void file_put(const char *p, size_t n, void *f) {
  fwrite(p, 1, n, f);
}

/* The trace's writer: a name or file with bytes that are not UTF-8 once
 * made the report invalid JSON. */
static void json_str(FILE *f, const char *s) {
  evrt__json_str(s, file_put, f);
}

static void json_site(FILE *f, const char *key, uint32_t site) {
  const char *fn, *file;
  int line;
  uintptr_t pc;
  evrt__site_frame(site, &fn, &file, &line, &pc);
  fprintf(f, ", ");
  json_str(f, key);
  fprintf(f, ": {\"function\": ");
  json_str(f, fn ? fn : "");
  fprintf(f, ", \"file\": ");
  json_str(f, file ? file : "");
  fprintf(f, ", \"line\": %d, \"pc\": \"0x%" PRIxPTR "\"}", line, pc);
}

static void json_acc(FILE *f, const struct evrt__acc *a) {
  fprintf(f, "{\"access\": \"%s\", \"operation\": ", acc_verb(a));
  json_str(f, op_name(a));
  if (a->role) {
    fprintf(f, ", \"role\": ");
    json_str(f, a->role);
  }
  fprintf(f, ", \"range\": [\"0x%" PRIxPTR "\", \"0x%" PRIxPTR "\"]", a->lo,
          a->hi);
  if (a->op == OP_HOST) {
    fprintf(f, ", \"host_thread\": %" PRIu64, a->tid);
    json_site(f, "site", a->site);
  } else {
    char name[64];
    evrt__stream_name_of(a->stream_id, name, sizeof name);
    fprintf(f, ", \"stream\": %" PRIu64 ", \"stream_name\": ", a->stream_id);
    json_str(f, name);
    fprintf(f, ", \"device\": %d, \"work_item\": %" PRIu64, a->device, a->seq);
    json_site(f, "enqueued_at", a->site);
    if (a->site2)
      json_site(f, "annotated_at", a->site2);
    if (a->launch.stream) {
      char ln[64];
      evrt__stream_name_of(a->launch.stream, ln, sizeof ln);
      fprintf(f, ", \"graph_launch\": {\"stream\": %" PRIu64
                 ", \"stream_name\": ",
              a->launch.stream);
      json_str(f, ln);
      json_site(f, "launched_at", a->launch.site);
      fprintf(f, "}");
    }
    const struct evrt__clw *w = &a->lw;
    if (w->ev) {
      fprintf(f, ", \"last_wait\": {\"event\": \"0x%" PRIx64
                 "\", \"generation\": %" PRIu64 ", \"stream\": %" PRIu64
                 ", \"work_item\": %" PRIu64 "}",
              w->ev, w->gen, w->src, w->target);
    } else if (w->addr) {
      fprintf(f, ", \"last_wait\": {\"value_address\": \"0x%" PRIxPTR
                 "\", \"condition\": \"%s\", \"value\": %" PRIu64
                 ", \"reset\": %s",
              w->addr, cond_name(w->flags), w->value,
              (w->flags & EVRT_VALUE_WAIT_RESET) ? "true" : "false");
      if (w->wstream)
        fprintf(f, ", \"written_by_stream\": %" PRIu64
                   ", \"written_at_work_item\": %" PRIu64,
                w->wstream, w->wseq);
      else if (w->wtid)
        fprintf(f, ", \"written_by_host_thread\": %" PRIu64, w->wtid);
      if (w->wsite)
        json_site(f, "written_at", w->wsite);
      fprintf(f, "}");
    }
  }
  fprintf(f, "}");
}

static void write_json_to(FILE *unused, const struct finding *x_unused);
static void write_json(void) { print_big(write_json_to, NULL); }
static void write_json_to(FILE *unused, const struct finding *x_unused) {
  (void)unused;
  (void)x_unused;
  FILE *f = fopen(json_path, "w");
  if (!f) {
    fprintf(stderr, "evrt-check: note: cannot write %s\n", json_path);
    return;
  }
  fprintf(f, "{\"tool\": \"evrt-check\", \"version\": \"%s\", \"findings\": [",
          evrt_version_string());
  for (size_t i = 0; i < nfind; i++) {
    const struct finding *x = &findings[i];
    fprintf(f, "%s\n  {\"kind\": ", i ? "," : "");
    json_str(f, kind_name[x->kind]);
    fprintf(f, ", \"count\": %" PRIu64, x->count);
    if (x->kind == FIND_DEADLOCK) {
      fprintf(f, ", \"cycle\": [");
      for (int k = 0; k < x->ncyc; k++) {
        const struct evrt__cycle_member *m = &x->cyc[k];
        fprintf(f, "%s{\"stream\": %" PRIu64 ", \"work_item\": %" PRIu64,
                k ? ", " : "", m->stream_id, m->seq);
        if (m->value) {
          fprintf(f, ", \"value_address\": \"0x%" PRIxPTR
                     "\", \"condition\": ",
                  m->addr);
          json_str(f, cond_name(m->flags));
          fprintf(f, ", \"value\": %" PRIu64 ", \"reset\": %s"
                     ", \"written_by_streams\": [",
                  m->want, (m->flags & EVRT_VALUE_WAIT_RESET) ? "true" : "false");
          for (int p = 0; p < m->nprod && p < EVRT__CYC_PRODUCERS; p++)
            fprintf(f, "%s%" PRIu64, p ? ", " : "", m->prod[p]);
          fprintf(f, "]");
        } else {
          fprintf(f, ", \"event\": \"0x%" PRIx64 "\", \"generation\": %" PRIu64
                     ", \"needs_stream\": %" PRIu64
                     ", \"needs_work_item\": %" PRIu64,
                  m->ev, m->gen, m->src_id, m->target);
        }
        json_site(f, "enqueued_at", m->site);
        fprintf(f, "}");
      }
      fprintf(f, "]");
    } else {
      fprintf(f, ", \"operations\": [");
      json_acc(f, x->now);
      fprintf(f, ", ");
      json_acc(f, x->then);
      fprintf(f, "]");
    }
    fprintf(f, ", \"fix\": ");
    char *fix = x->kind != FIND_DEADLOCK ? fix_text(x) : NULL;
    json_str(f, fix ? fix : fix_line(x));
    free(fix);
    fprintf(f, "}");
  }
  fprintf(f, "\n], \"total\": %" PRIu64 "}\n", evrt__check_nfindings());
  fclose(f);
}

/* ---------------------------------------------------------------- exit */

/* The process that turned the checker on: a forked child's exit neither
 * reports (the findings are the parent's) nor takes report_lock, which a
 * vanished thread of the parent may hold (issue 13, fork). */
static pid_t check_pid;

static __attribute__((unused)) void check_exit(void) {
  if (getpid() != check_pid)
    return;
  pthread_mutex_lock(&report_lock);
  if (json_path)
    write_json();
  uint64_t n = evrt__check_nfindings();
  size_t distinct = nfind;
  pthread_mutex_unlock(&report_lock);
  if (n == 0)
    return;
  fprintf(stderr, "evrt-check: summary: %zu distinct finding%s (%" PRIu64
                  " in all)%s\n",
          distinct, distinct == 1 ? "" : "s", n,
          exit_code ? "" : "; EVRT_CHECK_EXITCODE=0 keeps the exit status");
  if (exit_code) {
    fflush(NULL);
    _exit(exit_code);
  }
}

void evrt__check_init(void) {
#ifndef EVRT_NO_CHECK
  const char *v = getenv("EVRT_CHECK");
  if (!v || !*v || strcmp(v, "0") == 0)
    return;
  evrt__check_on = true;
  check_pid = getpid();
  exit_code = (int)evrt__env_long("EVRT_CHECK_EXITCODE", 66, 0, 255);
  const char *p = evrt__env_path("EVRT_CHECK_REPORT");
  if (p && *p)
    json_path = strdup(p);
  evrt__chaos_init();
  /* Registered before the trace's exit handler (init.c), so it runs after
   * it: the trace is complete when the process leaves with the status. */
  atexit(check_exit);
#endif
}
