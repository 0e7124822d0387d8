/*
 * cimpl.h - what the checker's files share (the files of src/check).  The model is
 * described in check.h; docs/check.md says what it means for a user.
 */
#ifndef EVRT_CHECK_CIMPL_H
#define EVRT_CHECK_CIMPL_H

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------ vector clocks */
/* A sparse vector clock: entries sorted by actor.  Shared copies are
 * immutable; whoever holds the only reference (ref == 1) may write it
 * (cvc_own copies a shared one first).  Only an owner ever makes a new
 * reference to its clock, so ref == 1 seen by the owner stays true. */
struct evrt__cent {
  uint32_t a;
  uint64_t c;
};
typedef struct evrt__cvc {
  atomic_uint ref;
  uint32_t n, cap;
  struct evrt__cent e[];
} cvc_t;

cvc_t *evrt__cvc_new(uint32_t cap);
static inline cvc_t *evrt__cvc_ref(cvc_t *v) {
  /* relaxed: the new holder got the pointer through a lock or a release */
  if (v)
    atomic_fetch_add_explicit(&v->ref, 1, memory_order_relaxed);
  return v;
}
void evrt__cvc_unref(cvc_t *v);
uint64_t evrt__cvc_get(const cvc_t *v, uint32_t a);
/* Make *pv writable by its owner (copy if shared or NULL); false: no memory
 * (then *pv is unchanged). */
bool evrt__cvc_own(cvc_t **pv);
/* *pv[a] = c (owned after the call). */
bool evrt__cvc_set(cvc_t **pv, uint32_t a, uint64_t c);
/* *pv = *pv joined with src (owned after the call, unless src adds
 * nothing: then *pv is left as it is, shared or not). */
bool evrt__cvc_join(cvc_t **pv, const cvc_t *src);
/* Every entry of a <= the same entry of b. */
bool evrt__cvc_leq(const cvc_t *a, const cvc_t *b);

/* A new actor id (host threads and stream incarnations; never reused). */
uint32_t evrt__check_actor(void);

/* ---------------------------------------------------------- call sites */
/* The calling thread's stack as an interned site id (0: none), or the
 * label a binding set with evrt_check_site. */
uint32_t evrt__site_capture(void);
void evrt__site_hint(const char *where, unsigned api);
/* The API a site's calls were written in (EVRT_CHECK_API_*): a binding's
 * label says it; a C stack is EVRT__CHECK_API_ACL when the call went
 * through the ACL layer (libascendcl), else EVRT_CHECK_API_C. */
#define EVRT__CHECK_API_ACL 100u
unsigned evrt__site_api(uint32_t site);
/* "function (file:line)" of the first frame outside evrt's libraries (on
 * the current line), then up to `more` callers, each on a line of its own
 * starting with indent. */
void evrt__site_print(FILE *f, uint32_t site, const char *indent, int more);
/* The same frame as "function", "file", line for the JSON report (static
 * storage until the next call: report lock held). */
void evrt__site_frame(uint32_t site, const char **fn, const char **file,
                      int *line, uintptr_t *pc);

/* ------------------------------------------------------ thread context */
/* A host thread: its clock's own entry is `clock`; `released` says an
 * enqueue or record shared the clock since the last tick, so the next
 * access must tick first (lazy tick: accesses after a release are not
 * ordered before what was released). */
struct evrt__chost {
  uint32_t actor;
  uint64_t clock;
  cvc_t *vc;
  bool released;
  uint64_t tid;
};

/* ------------------------------------------------------------ streams */
/* What a parked stream waits on (deadlock.c): an event generation or a
 * stream position (CW_STREAM), a record not made yet (CW_FUTURE), a
 * stream-ordered value (CW_VALUE: evrt_stream_wait_value64, ACL notify
 * waits), something else (CW_OTHER). */
enum { CW_NONE = 0, CW_STREAM, CW_FUTURE, CW_VALUE, CW_OTHER };

/* The last wait a stream passed, named in reports as the edge that was
 * meant to order an access: an event generation (ev != 0: recorded on
 * stream src at item target), or a stream-ordered value wait (addr != 0:
 * its word, condition and flags, and the last write of the word the
 * checker saw before it passed: by stream wstream's item wseq, or by host
 * thread wtid when wstream is 0, at wsite; wsite 0 and wtid 0: none). */
struct evrt__clw {
  uint64_t ev, gen, src, target;
  uintptr_t addr;
  uint64_t value;
  uint32_t flags;
  uint32_t wsite;
  uint64_t wstream, wseq, wtid;
};

/* The graph launch an item or an access belongs to (reports): the
 * evrt_graph_launch call's site and the stream it was launched on
 * (stream 0: not a graph's). */
struct evrt__claunch {
  uint32_t site;
  uint64_t stream;
};

struct evrt__cgen;
struct evrt__cstream {
  evrt__spin_t lock;
  uint32_t actor;
  uint64_t id; /* the incarnation's stream id */
  int device;
  char name[64];
  struct evrt__stream *s;
  cvc_t *vc;            /* the stream's clock (item cur_seq) */
  uint64_t cur_seq;     /* last item begun */
  uint64_t end_seq;     /* last item ended */
  cvc_t *last_in;       /* last enqueue clock joined (a reference) */
  struct evrt__cgen *pending; /* captures waiting for their target */
  /* The wait the stream is parked on (deadlock.c), written by its worker;
   * w_timed: it has a timeout (it will pass); a value wait's word,
   * condition value and flags in w_addr, w_value, w_flags. */
  uint8_t wstate;
  bool w_timed;
  struct evrt__stream *w_src;
  uint64_t w_target, w_seq, w_ev, w_gen;
  uintptr_t w_addr;
  uint64_t w_value;
  uint32_t w_flags;
  uint32_t w_site;
  /* Items enqueued and not ended that may write memory (copies, fills,
   * host functions, value writes, graph runs): a value wait's possible
   * producers (deadlock.c).  Relaxed: a count the walk reads twice. */
  atomic_uint q_writers;
  /* The last wait it passed (reports: "last wait passed before it") */
  struct evrt__clw lw;
  /* The graph launch item running now (its worker's, set at its begin):
   * the lane items it enqueues carry it (evrt__check_enqueue_by). */
  struct evrt__claunch launch;
};

/* A generation: the stream's clock at `target` (svc, NULL until captured,
 * under cs->lock) joined with the recorder's (hvc). */
struct evrt__cgen {
  atomic_uint ref;
  uint64_t ev_id, rec_no;
  struct evrt__cstream *cs;
  uint64_t target, stream_id;
  cvc_t *svc;
  cvc_t *hvc;
  uint32_t site;
  struct evrt__cgen *pnext;
};
void evrt__cgen_unref(struct evrt__cgen *g);

/* What an enqueued item carries (it->check).  qcs: the stream whose
 * q_writers counts it (NULL: not counted); a value write is also in the
 * table of queued value writes under its word (model.c, vw_*). */
struct evrt__citem {
  cvc_t *vc;
  uint32_t site;
  struct evrt__cgen *gen; /* a wait bound at enqueue: its generation */
  struct evrt__cstream *qcs;
  uintptr_t vw_addr;            /* a queued value write's word, or 0 */
  struct evrt__citem *vw_next;  /* its link in the table (vw_lock) */
  struct evrt__claunch launch;  /* a replayed graph's item: its launch */
};
/* The streams (up to max) with a value write of the word addr enqueued
 * and not ended; returns how many were found (deadlock.c). */
int evrt__check_value_writers(uintptr_t addr, struct evrt__stream **out,
                              int max);

/* -------------------------------------------------------------- accesses */
enum { ACC_READ = 1, ACC_WRITE = 2, ACC_ALLOC = 3, ACC_FREE = 4 };
enum { OP_HOST = EVRT__ITEM_KIND_COUNT + 1 }; /* plain host code */

/* One access, shared by the shadow intervals it covers and by reports. */
struct evrt__acc {
  atomic_uint ref;
  uint32_t actor;
  uint64_t clock;
  uint8_t kind; /* ACC_* */
  bool rw;      /* an ACC_WRITE that also reads (one annotation of both) */
  uint8_t op;   /* EVRT__ITEM_* of the item, or OP_HOST */
  const char *role; /* "source", "destination", NULL */
  uintptr_t lo, hi;
  uint64_t stream_id, seq, tid;
  int device;
  uint32_t site;  /* where the item was enqueued / the host code called */
  uint32_t site2; /* the annotation inside a host function */
  struct evrt__claunch launch; /* inside a replayed graph: its launch */
  struct evrt__clw lw;
  uint64_t t; /* when it happened (only while tracing: the trace marks) */
};
struct evrt__acc *evrt__acc_new(void);
static inline struct evrt__acc *evrt__acc_ref(struct evrt__acc *a) {
  atomic_fetch_add_explicit(&a->ref, 1, memory_order_relaxed);
  return a;
}
void evrt__acc_unref(struct evrt__acc *a);

/* The calling context: a host thread, or the stream whose host function
 * runs on this thread.  The access is filled with the actor, clock, stream
 * or thread and wait context; *vc gets a reference to the clock to check
 * it with (caller unrefs). */
bool evrt__check_ctx_access(struct evrt__acc *a, cvc_t **vc);


/* shadow.c: check a against what the range holds, then store it.  Findings
 * are reported (report.c) after the shadow lock is released. */
void evrt__shadow_access(struct evrt__acc *a, const cvc_t *vc);
/* ACC_ALLOC: the range is a new block (forget what it held).  ACC_FREE:
 * report accesses not ordered before the free, then mark the range freed. */
void evrt__shadow_alloc(struct evrt__acc *a);
void evrt__shadow_free(struct evrt__acc *a, const cvc_t *vc);
/* Forget a range (a block leaving the quarantine). */
void evrt__shadow_forget(uintptr_t lo, uintptr_t hi);
/* The number of intervals the map holds (tests: its growth is bounded). */
size_t evrt__shadow_intervals(void);

/* chaos.c: EVRT_CHAOS=SEED (read at init), the delay before an item */
extern bool evrt__chaos_on;
void evrt__chaos_init(void);
void evrt__chaos_delay(uint64_t stream_id, uint64_t seq);

/* ------------------------------------------------------------- reports */
enum {
  FIND_RACE = 0,
  FIND_UAF,
  FIND_HOST,
  FIND_DEADLOCK,
};
/* A finding between a later access `now` and an earlier one `then`
 * (references taken). */
void evrt__report_pair(int kind, struct evrt__acc *now, struct evrt__acc *then);
/* A cycle of waits: n members (stream, wait seq, site, event, generation,
 * the stream it waits for) and the host thread that found it. */
#define EVRT__CYC_PRODUCERS 4
struct evrt__cycle_member {
  uint64_t stream_id, seq, target, src_id, ev, gen;
  uint32_t site;
  int device;
  /* A value wait (CW_VALUE) instead of an event wait: its word and
   * condition, and the streams whose queued value writes of it are stuck
   * (nprod of them; more are counted, not named). */
  bool value;
  uintptr_t addr;
  uint64_t want;
  uint32_t flags;
  int nprod;
  uint64_t prod[EVRT__CYC_PRODUCERS];
};
void evrt__report_cycle(const struct evrt__cycle_member *m, int n,
                        uint32_t host_site);
/* The name of a live stream with this id ("" if none). */
void evrt__stream_name_of(uint64_t id, char *out, size_t n);
/* Out of memory inside the checker: say it once. */
void evrt__check_oom(void);
/* Number of findings so far. */
uint64_t evrt__check_nfindings(void);

#endif
