/*
 * capture.c - stream capture: while a stream captures, the work enqueued on
 * it becomes graph nodes instead of running, and events recorded on it
 * carry dependencies between the streams of the capture.  The rules, each
 * with its source, are in docs/capture.md; section "How" there describes
 * what this file keeps.
 *
 * State.  A capture (struct evrt__capture) lists its member streams: the
 * origin (member 0, where it began) and the streams that joined it by
 * waiting on an event recorded inside it (forks).  Each member has a tail:
 * the nodes the next node captured on it will depend on.  A node captured
 * on a member depends on its tail and becomes its tail; a record inside the
 * capture copies the tail into a record entry and points the event at it
 * (the generation (&evrt__capture_src, capture id)); a wait on such an event
 * adds the entry's nodes to the waiting stream's tail.  A stream's capture
 * field points to its capture while it is a member.
 *
 * Capture objects are type-stable: never freed, recycled through a free
 * list with a new id.  A thread that read a stream's capture field and then
 * locks that capture may find it ended or reused: it re-checks, under the
 * capture's lock, that the stream is still a member (pointer and stream id,
 * which is unique per stream incarnation), and otherwise tries again or
 * goes the ordinary way.
 *
 * Lock order: reg_lock -> capture.lock -> event.lock (-> stream.plock and
 * pool.lock inside the core).  reg_lock guards the registry of active
 * captures, the free list, ids, and every change of a stream's capture
 * field to non-NULL at begin; the capture's lock guards its members, tails,
 * records, graph and status.  No user code runs under either.
 */
#include "graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Zero-initialized, never linked anywhere: done_seq is 0 for ever, so a
 * generation naming it is never complete; every path that would wait on a
 * generation checks for it first (event.c). */
struct evrt__stream evrt__capture_src;
atomic_uint evrt__captures_active;

_Static_assert(offsetof(struct evrt__stream, capture) + sizeof(void *) <= 64,
               "the capture field shares the producers' line with the handle");

enum { CAP_FREE = 0, CAP_ACTIVE, CAP_INVALIDATED };

struct member {
  struct evrt__stream *s;
  uint64_t stream_id; /* s->id when it joined: names the incarnation */
  uint32_t *tail;     /* capacity >= 1 always */
  uint32_t ntail, captail;
};

struct caprec { /* an event recorded inside the capture */
  struct evrt__event *e;
  uint32_t ev_gen;
  uint64_t rec_no;
  uint32_t *set;
  uint32_t nset;
};

struct evrt__capture {
  pthread_mutex_t lock;
  struct evrt__capture *next; /* registry or free list (reg_lock) */
  uint64_t id;                /* reg_lock; immutable while active */
  int status;                 /* lock */
  evrt_capture_mode_t mode;   /* immutable while active */
  uint64_t thread;            /* evrt_thread_id of the beginner */
  struct evrt__graph *g;      /* lock */
  struct member *m;           /* lock; m[0] is the origin */
  uint32_t nm, capm;
  struct caprec *r; /* lock */
  uint32_t nr, capr;
  char why[160]; /* first invalidation, for messages */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evrt__capture *active;    /* reg_lock */
static struct evrt__capture *free_caps; /* reg_lock */
static uint64_t next_cap_id;            /* reg_lock */

/* The calling thread's capture interaction mode (GLOBAL = 0 by default).
 * General-dynamic TLS: read only on the rare paths below. */
static _Thread_local evrt_capture_mode_t tls_mode;

static const char *mode_name(evrt_capture_mode_t m) {
  return m == EVRT_CAPTURE_MODE_GLOBAL         ? "global"
         : m == EVRT_CAPTURE_MODE_THREAD_LOCAL ? "thread-local"
                                               : "relaxed";
}

/* ------------------------------------------------------------ helpers */

/* Capture lock held: mark it invalidated (the first reason is kept). */
static void invalidate_locked(struct evrt__capture *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void invalidate_locked(struct evrt__capture *c, const char *fmt, ...) {
  if (c->status != CAP_ACTIVE)
    return;
  c->status = CAP_INVALIDATED;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
}

static evrt_status_t fail_invalidated(struct evrt__capture *c) {
  return evrt__fail(EVRT_ERROR_CAPTURE_INVALIDATED,
                    "capture %llu was invalidated earlier: %s",
                    (unsigned long long)c->id, c->why);
}

/* Capture lock held: s's member entry, or NULL. */
static struct member *member_of(struct evrt__capture *c,
                                struct evrt__stream *s) {
  for (uint32_t i = 0; i < c->nm; i++)
    if (c->m[i].s == s && c->m[i].stream_id == s->id)
      return &c->m[i];
  return NULL;
}

/* Lock the capture s takes part in as the incarnation h names; NULL
 * (nothing locked) if it takes part in none, or no longer, or h is not the
 * member (a stale handle: the caller goes the ordinary way, which fails it).
 * The handle test is exact here: a stream becomes a member under plock
 * with its handle live (begin, fork), and destroy kills a handle under
 * plock only after finding the capture field NULL, so while s is a member
 * (its field is c and c's lock is held, which end_capture needs to clear
 * it) the member's handle cannot die. */
static struct evrt__capture *lock_capture_of(struct evrt__stream *s,
                                             evrt_stream_t h, uint32_t *mi) {
  for (;;) {
    /* acquire: pairs with the CAS that made s a member, so the capture's
     * fields written before it are seen (the lock orders the rest) */
    struct evrt__capture *c =
        atomic_load_explicit(&s->capture, memory_order_acquire);
    if (!c)
      return NULL;
    pthread_mutex_lock(&c->lock);
    struct member *m = NULL;
    if (atomic_load_explicit(&s->capture, memory_order_relaxed) == c &&
        c->status != CAP_FREE && (m = member_of(c, s))) {
      if (EVRT_UNLIKELY(!evrt__stream_is(s, h))) {
        pthread_mutex_unlock(&c->lock);
        return NULL;
      }
      *mi = (uint32_t)(m - c->m);
      return c;
    }
    pthread_mutex_unlock(&c->lock);
    if (atomic_load_explicit(&s->capture, memory_order_acquire) == c)
      return NULL; /* not a member (cannot happen): the ordinary way */
  }
}

/* reg_lock held: the active capture with this id, or NULL. */
static struct evrt__capture *find_active(uint64_t id) {
  for (struct evrt__capture *c = active; c; c = c->next)
    if (c->id == id)
      return c;
  return NULL;
}

/* Invalidate the active capture with this id (if any).  No lock held. */
static void invalidate_id(uint64_t id, const char *why) {
  pthread_mutex_lock(&reg_lock);
  struct evrt__capture *c = find_active(id);
  if (c) {
    pthread_mutex_lock(&c->lock);
    invalidate_locked(c, "%s", why);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&reg_lock);
}

/* Capture lock held: a node captured on member mi, depending on its tail;
 * it becomes the tail.  Nothing changes on failure. */
static evrt_status_t add_node_locked(struct evrt__capture *c, uint32_t mi,
                                     struct evrt__gnode *n,
                                     const uint64_t *labels, uint32_t nl) {
  if (c->status != CAP_ACTIVE)
    return fail_invalidated(c);
  struct member *m = &c->m[mi];
  n->lane = mi;
  if (EVRT_UNLIKELY(evrt__check_on))
    n->site = evrt__check_node_site(); /* (reports: where it was captured) */
  uint32_t idx = evrt__graph_add_node(c->g, n, m->tail, m->ntail, labels, nl);
  if (idx == UINT32_MAX)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot add a graph node");
  m->tail[0] = idx; /* capacity >= 1 */
  m->ntail = 1;
  return EVRT_SUCCESS;
}

/* Capture lock held: add the nodes of set to member mi's tail (a join). */
static evrt_status_t merge_tail_locked(struct member *m, const uint32_t *set,
                                       uint32_t n) {
  if (!evrt__grow((void **)&m->tail, &m->captail, m->ntail + n,
                  sizeof *m->tail))
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot extend a capture tail");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = 0;
    while (k < m->ntail && m->tail[k] != set[i])
      k++;
    if (k == m->ntail)
      m->tail[m->ntail++] = set[i];
  }
  return EVRT_SUCCESS;
}

/* Capture lock held: the record entry of (e, ev_gen, rec_no). */
static struct caprec *find_rec(struct evrt__capture *c, struct evrt__event *e,
                               uint32_t ev_gen, uint64_t rec_no) {
  for (uint32_t i = c->nr; i-- > 0;)
    if (c->r[i].e == e && c->r[i].ev_gen == ev_gen && c->r[i].rec_no == rec_no)
      return &c->r[i];
  return NULL;
}

/* The generation of an event's incarnation ev_gen, read under its lock;
 * false if the incarnation is gone. */
static bool read_gen(struct evrt__event *e, uint32_t ev_gen, uintptr_t *src,
                     uint64_t *target, uint64_t *rec_no) {
  evrt__event_lock(e);
  bool live = evrt__obj_gen(&e->hdr) == ev_gen;
  *src = atomic_load_explicit(&e->src, memory_order_relaxed);
  *target = atomic_load_explicit(&e->target, memory_order_relaxed);
  *rec_no = atomic_load_explicit(&e->rec_no, memory_order_relaxed);
  evrt__event_unlock(e);
  return live;
}

static uint32_t gen_of_handle(evrt_event_t eh) {
  return (uint32_t)(evrt__raw((uintptr_t)eh) >> 32);
}

static void free_members_and_recs(struct evrt__capture *c) {
  for (uint32_t i = 0; i < c->nm; i++)
    evrt__free(c->m[i].tail);
  for (uint32_t i = 0; i < c->nr; i++)
    evrt__free(c->r[i].set);
  evrt__free(c->m);
  evrt__free(c->r);
  c->m = NULL;
  c->r = NULL;
  c->nm = c->capm = c->nr = c->capr = 0;
}

/* ----------------------------------------------------- begin, end, info */

static evrt_status_t get_stream_(evrt_stream_t *h,
                                 struct evrt__stream **out) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  return evrt__stream_arg(h, out);
}
/* Rewrites the caller's handle variable (NULL: the current default
 * stream's handle), which lock_capture_of and the attach under plock then
 * compare with. */
#define get_stream(h, out) get_stream_(&(h), (out))

static evrt_status_t destroyed_meanwhile(evrt_stream_t h) {
  return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                    "stream %p destroyed during the call", (void *)h);
}

/* Make s a member of c (its capture field NULL -> c) if h is still its
 * live handle: under plock, where destroy kills the handle after reading
 * the field, so of an attach and a destroy racing exactly one goes first
 * (the destroy then finds the capture and fails, or the attach finds the
 * handle dead).  0, or 1 if h is dead, 2 if s is in a capture already, 3
 * if s is a default stream (is_default read with the handle known live: a
 * create recycling the slot writes it).
 * acq_rel: publishes the initialized capture and member entry to
 * lock_capture_of.  Called with reg_lock or c's lock held (lock order:
 * capture locks -> plock); the section is a CAS, no system call. */
static int attach_locked(struct evrt__stream *s, evrt_stream_t h,
                         struct evrt__capture *c) {
  int why = 0;
  struct evrt__capture *none = NULL;
  evrt__spin_lock(&s->plock);
  if (!evrt__stream_is(s, h))
    why = 1;
  else if (s->is_default)
    why = 3;
  else if (!atomic_compare_exchange_strong_explicit(&s->capture, &none, c,
                                                    memory_order_acq_rel,
                                                    memory_order_relaxed))
    why = 2;
  evrt__spin_unlock(&s->plock);
  return why;
}

/* Capture lock held (or the capture private): a new member with the given
 * tail, and its lane in the graph.  Nothing changes on failure. */
static evrt_status_t add_member_locked(struct evrt__capture *c,
                                       struct evrt__stream *s,
                                       const uint32_t *tail, uint32_t ntail) {
  uint32_t cap = ntail ? ntail : 1;
  uint32_t *t = evrt__malloc(cap * sizeof *t);
  if (!t || !evrt__grow((void **)&c->m, &c->capm, c->nm + 1, sizeof *c->m) ||
      !evrt__graph_add_lane(
          c->g, atomic_load_explicit(&s->device, memory_order_relaxed),
          s->id)) {
    evrt__free(t);
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot add a stream to the "
                                                "capture");
  }
  if (ntail)
    memcpy(t, tail, ntail * sizeof *t);
  c->m[c->nm++] = (struct member){
      .s = s, .stream_id = s->id, .tail = t, .ntail = ntail, .captail = cap};
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_begin_capture(evrt_stream_t h,
                                        evrt_capture_mode_t mode) {
  struct evrt__stream *s;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if ((unsigned)mode > EVRT_CAPTURE_MODE_RELAXED)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown capture mode %d",
                      (int)mode);
  EVRT__SCHED_POINT(EVRT__SP_CAPTURE_BEGIN, s); /* white-box build only */
  pthread_mutex_lock(&reg_lock);
  struct evrt__capture *c = free_caps;
  if (c) {
    free_caps = c->next;
  } else if ((c = evrt__calloc(1, sizeof *c))) {
    pthread_mutex_init(&c->lock, NULL); /* never destroyed: type-stable */
  }
  pthread_mutex_unlock(&reg_lock);
  if (!c)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate a capture");
  /* Unpublished until the CAS below, but filled under its lock: a thread
   * that read a stream's capture field during this object's previous life
   * may lock it and look now (lock_capture_of; it finds CAP_FREE, or the
   * field no longer naming it).  (ThreadSanitizer saw those reads race
   * these writes when they were made without the lock.) */
  pthread_mutex_lock(&c->lock);
  c->g = evrt__graph_new();
  c->mode = mode;
  c->thread = evrt__thread_id();
  c->why[0] = 0;
  st = c->g ? add_member_locked(c, s, NULL, 0)
            : evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot allocate a graph");
  pthread_mutex_unlock(&c->lock);
  pthread_mutex_lock(&reg_lock);
  pthread_mutex_lock(&c->lock);
  if (st == EVRT_SUCCESS) {
    c->id = ++next_cap_id;
    c->status = CAP_ACTIVE;
    /* The handle was looked up without a lock: a destroy may have killed
     * it since (a capture attached then could never be ended, and a
     * GLOBAL one would fail every later GLOBAL synchronize). */
    int why = attach_locked(s, h, c);
    if (why) {
      c->status = CAP_FREE;
      st = why == 1   ? destroyed_meanwhile(h)
           : why == 3 ? evrt__fail(EVRT_ERROR_CAPTURE_IMPLICIT,
                                   "the default stream of device %d cannot "
                                   "be captured: capture a stream of your "
                                   "own",
                                   atomic_load_explicit(&s->device,
                                                        memory_order_relaxed))
                      : evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                                   "stream %llu is capturing already",
                                   (unsigned long long)s->id);
    }
  }
  struct evrt__graph *drop = NULL;
  if (st != EVRT_SUCCESS) {
    free_members_and_recs(c);
    drop = c->g;
    c->g = NULL;
    c->id = 0;
  }
  pthread_mutex_unlock(&c->lock);
  if (st == EVRT_SUCCESS) {
    c->next = active;
    active = c;
    atomic_fetch_add_explicit(&evrt__captures_active, 1, memory_order_relaxed);
  } else {
    evrt__graph_unref(drop);
    c->next = free_caps;
    free_caps = c;
  }
  pthread_mutex_unlock(&reg_lock);
  return st;
}

/* Capture lock held: every member's tail lies in the origin's past (its
 * tail and what that tail depends on).  Returns the first member that does
 * not, 0 if all joined, UINT32_MAX if out of memory. */
static uint32_t unjoined_member(struct evrt__capture *c) {
  struct evrt__graph *g = c->g;
  if (c->nm == 1 || g->n == 0)
    return 0;
  uint8_t *seen = evrt__calloc(g->n, 1);
  uint32_t *stack = evrt__malloc(g->n * sizeof *stack);
  if (!seen || !stack) {
    evrt__free(seen);
    evrt__free(stack);
    return UINT32_MAX;
  }
  uint32_t sp = 0;
  for (uint32_t i = 0; i < c->m[0].ntail; i++)
    if (!seen[c->m[0].tail[i]]) {
      seen[c->m[0].tail[i]] = 1;
      stack[sp++] = c->m[0].tail[i];
    }
  while (sp) {
    const struct evrt__gnode *n = &g->nodes[stack[--sp]];
    for (uint32_t d = 0; d < n->ndeps; d++) {
      uint32_t k = g->deps[n->dep0 + d];
      if (!seen[k]) {
        seen[k] = 1;
        stack[sp++] = k;
      }
    }
  }
  uint32_t bad = 0;
  for (uint32_t i = 1; i < c->nm && !bad; i++)
    for (uint32_t k = 0; k < c->m[i].ntail; k++)
      if (!seen[c->m[i].tail[k]]) {
        bad = i;
        break;
      }
  evrt__free(seen);
  evrt__free(stack);
  return bad;
}

evrt_status_t evrt_stream_end_capture(evrt_stream_t h, evrt_graph_t *graph) {
  struct evrt__stream *s;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!graph)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "graph is NULL");
  pthread_mutex_lock(&reg_lock);
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c) {
    pthread_mutex_unlock(&reg_lock);
    if (!evrt__stream_is(s, h))
      return destroyed_meanwhile(h);
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED, "stream %llu is not capturing",
                      (unsigned long long)s->id);
  }
  if (mi != 0) {
    invalidate_locked(c,
                      "evrt_stream_end_capture on stream %llu, which "
                      "joined the capture but did not begin it",
                      (unsigned long long)s->id);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_CAPTURE_UNMATCHED,
                      "capture %llu was begun on stream %llu, not on stream "
                      "%llu (the capture is invalidated)",
                      (unsigned long long)c->id,
                      (unsigned long long)c->m[0].s->id,
                      (unsigned long long)s->id);
  }
  if (c->mode != EVRT_CAPTURE_MODE_RELAXED && c->thread != evrt__thread_id()) {
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_CAPTURE_WRONG_THREAD,
                      "a %s capture must end on the thread that began it",
                      mode_name(c->mode));
  }
  evrt_graph_t gh = NULL;
  uint32_t bad = 0;
  if (c->status == CAP_INVALIDATED) {
    st = fail_invalidated(c);
  } else if ((bad = unjoined_member(c)) == UINT32_MAX ||
             (bad == 0 && (st = evrt__graph_handle(c->g, &gh)))) {
    /* out of memory: the capture goes on, unchanged */
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&reg_lock);
    return st ? st
              : evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                           "cannot check the capture's joins");
  } else if (bad) {
    st = evrt__fail(EVRT_ERROR_CAPTURE_UNJOINED,
                    "stream %llu joined capture %llu and was not joined back "
                    "into stream %llu (record an event on it, wait on it in "
                    "the origin stream)",
                    (unsigned long long)c->m[bad].stream_id,
                    (unsigned long long)c->id, (unsigned long long)s->id);
  }
  /* The capture ends, graph or not: every member leaves it. */
  for (uint32_t i = 0; i < c->nm; i++) {
    struct evrt__capture *mine = c;
    /* only if still ours: a destroyed member's slot may be another stream */
    atomic_compare_exchange_strong_explicit(&c->m[i].s->capture, &mine, NULL,
                                            memory_order_release,
                                            memory_order_relaxed);
  }
  free_members_and_recs(c);
  struct evrt__graph *g = c->g;
  c->g = NULL;
  c->status = CAP_FREE;
  for (struct evrt__capture **p = &active; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  c->id = 0;
  atomic_fetch_sub_explicit(&evrt__captures_active, 1, memory_order_relaxed);
  pthread_mutex_unlock(&c->lock);
  c->next = free_caps;
  free_caps = c;
  pthread_mutex_unlock(&reg_lock);
  if (st == EVRT_SUCCESS) {
    *graph = gh; /* the handle owns the graph's reference */
  } else {
    *graph = NULL;
    evrt__graph_unref(g);
  }
  return st;
}

evrt_status_t evrt_stream_capture_info(evrt_stream_t h,
                                       evrt_capture_status_t *status,
                                       uint64_t *capture_id) {
  struct evrt__stream *s;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  evrt_capture_status_t cs = EVRT_CAPTURE_STATUS_NONE;
  uint64_t id = 0;
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (c) {
    cs = c->status == CAP_ACTIVE ? EVRT_CAPTURE_STATUS_ACTIVE
                                 : EVRT_CAPTURE_STATUS_INVALIDATED;
    id = c->id;
    pthread_mutex_unlock(&c->lock);
  } else if (!evrt__stream_is(s, h)) {
    /* (a stale handle must not report the capture state of a stream
     * that reused the slot) */
    return destroyed_meanwhile(h);
  }
  if (status)
    *status = cs;
  if (capture_id)
    *capture_id = id;
  return EVRT_SUCCESS;
}

evrt_status_t evrt_stream_capture_status(evrt_stream_t h,
                                         evrt_capture_status_t *status) {
  struct evrt__stream *s;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  if (!status)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "status is NULL");
  return evrt_stream_capture_info(h, status, NULL);
}

/* ---------------------------------------------------- modes, unsafe calls */

evrt_status_t evrt_thread_exchange_capture_mode(evrt_capture_mode_t *mode) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!mode)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "mode is NULL");
  if ((unsigned)*mode > EVRT_CAPTURE_MODE_RELAXED)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown capture mode %d",
                      (int)*mode);
  evrt_capture_mode_t old = tls_mode;
  tls_mode = *mode;
  *mode = old;
  return EVRT_SUCCESS;
}

/* reg_lock held: may this thread make a potentially unsafe call now (CUDA's
 * rules, docs/capture.md)?  If not, the captures that forbid it are
 * invalidated and the error is returned. */
static evrt_status_t unsafe_call_locked(const char *what) {
  evrt_capture_mode_t tm = tls_mode;
  if (tm == EVRT_CAPTURE_MODE_RELAXED)
    return EVRT_SUCCESS;
  uint64_t me = evrt__thread_id();
  struct evrt__capture *first = NULL;
  for (struct evrt__capture *c = active; c; c = c->next) {
    bool own = c->thread == me && c->mode != EVRT_CAPTURE_MODE_RELAXED;
    if (own || (tm == EVRT_CAPTURE_MODE_GLOBAL &&
                c->mode == EVRT_CAPTURE_MODE_GLOBAL)) {
      pthread_mutex_lock(&c->lock);
      invalidate_locked(c,
                        "%s, a potentially unsafe call, was made by a "
                        "thread in %s mode during the capture",
                        what, mode_name(tm));
      pthread_mutex_unlock(&c->lock);
      if (!first)
        first = c;
    }
  }
  if (!first)
    return EVRT_SUCCESS;
  return evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                    "%s is potentially unsafe while %s capture %llu (begun in "
                    "%s mode) is active and this thread is in %s mode; "
                    "the capture is invalidated "
                    "(see evrt_thread_exchange_capture_mode)",
                    what, first->thread == me ? "this thread's" : "the",
                    (unsigned long long)first->id, mode_name(first->mode),
                    mode_name(tm));
}

evrt_status_t evrt_capture_unsafe_call(void) {
  evrt_status_t st = evrt__ready();
  if (st || !evrt__any_capture())
    return st;
  pthread_mutex_lock(&reg_lock);
  st = unsafe_call_locked("the call");
  pthread_mutex_unlock(&reg_lock);
  return st;
}

/* ------------------------------------------------ misuse of captured objects
 */

evrt_status_t evrt__capture_stream_misuse(struct evrt__stream *s,
                                          evrt_stream_t h, const char *what) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c) { /* ended meanwhile (or h stale): the query it was */
    uint64_t enq = atomic_load_explicit(&s->enq_seq, memory_order_acquire);
    bool done = evrt__done(s) >= enq;
    if (!evrt__stream_is(s, h)) /* after the acquire loads, as a query */
      return destroyed_meanwhile(h);
    return done ? EVRT_SUCCESS : EVRT_NOT_READY;
  }
  uint64_t id = c->id;
  invalidate_locked(c, "stream %llu was %s while capturing",
                    (unsigned long long)s->id, what);
  pthread_mutex_unlock(&c->lock);
  return evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                    "stream %llu is capturing (capture %llu) and cannot be "
                    "%s; the capture is invalidated",
                    (unsigned long long)s->id, (unsigned long long)id, what);
}

evrt_status_t evrt__capture_event_misuse(struct evrt__event *e,
                                         const char *what) {
  uint64_t target = atomic_load_explicit(&e->target, memory_order_relaxed);
  char why[96];
  snprintf(why, sizeof why, "event %llu, recorded inside it, was %s",
           (unsigned long long)e->id, what);
  invalidate_id(target, why);
  return evrt__fail(EVRT_ERROR_CAPTURE_EVENT,
                    "event %llu was last recorded inside capture %llu and "
                    "cannot be %s (record it outside a capture first)",
                    (unsigned long long)e->id, (unsigned long long)target,
                    what);
}

/* reg_lock held: is s a member of an active capture?  If so, invalidate
 * it and return its error. */
static bool sync_own_capture_locked(struct evrt__stream *s, evrt_stream_t h,
                                    evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c)
    return false;
  invalidate_locked(c, "stream %llu was synchronized while capturing",
                    (unsigned long long)s->id);
  uint64_t id = c->id;
  pthread_mutex_unlock(&c->lock);
  *st = evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                   "stream %llu is capturing (capture %llu) and cannot be "
                   "synchronized; the capture is invalidated",
                   (unsigned long long)s->id, (unsigned long long)id);
  return true;
}

bool evrt__capture_sync_stream(struct evrt__stream *s, evrt_stream_t h,
                               evrt_status_t *st) {
  pthread_mutex_lock(&reg_lock);
  bool handled = sync_own_capture_locked(s, h, st);
  if (!handled && !evrt__stream_is(s, h)) {
    /* a stale handle fails (the caller's check) without invalidating
     * anyone's capture */
    pthread_mutex_unlock(&reg_lock);
    return false;
  }
  if (!handled && (*st = unsafe_call_locked("evrt_stream_synchronize")))
    handled = true;
  pthread_mutex_unlock(&reg_lock);
  return handled;
}

bool evrt__capture_sync_event(struct evrt__event *e, evrt_status_t *st) {
  if (evrt__captured_src(atomic_load_explicit(&e->src, memory_order_acquire))) {
    *st = evrt__capture_event_misuse(e, "synchronized");
    return true;
  }
  pthread_mutex_lock(&reg_lock);
  *st = unsafe_call_locked("evrt_event_synchronize");
  pthread_mutex_unlock(&reg_lock);
  return *st != EVRT_SUCCESS;
}

bool evrt__capture_sync_device(int device, evrt_status_t *st) {
  pthread_mutex_lock(&reg_lock);
  struct evrt__capture *first = NULL;
  for (struct evrt__capture *c = active; c; c = c->next) {
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < c->g->nlanes; i++)
      if (c->g->lane_device[i] == device) {
        invalidate_locked(c, "device %d was synchronized during the capture",
                          device);
        if (!first)
          first = c;
        break;
      }
    pthread_mutex_unlock(&c->lock);
  }
  if (first)
    *st = evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                     "device %d has a capturing stream (capture %llu) and "
                     "cannot be synchronized; the capture is invalidated",
                     device, (unsigned long long)first->id);
  else
    *st = unsafe_call_locked("evrt_device_synchronize");
  pthread_mutex_unlock(&reg_lock);
  return *st != EVRT_SUCCESS;
}

bool evrt__capture_destroy_stream(struct evrt__stream *s, evrt_stream_t h,
                                  evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c)
    return false;
  invalidate_locked(c, "stream %llu was destroyed while capturing",
                    (unsigned long long)s->id);
  uint64_t id = c->id;
  pthread_mutex_unlock(&c->lock);
  *st = evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                   "stream %llu is capturing (capture %llu) and cannot be "
                   "destroyed; the capture is invalidated",
                   (unsigned long long)s->id, (unsigned long long)id);
  return true;
}

/* --------------------------------------------------- work on a capture */

bool evrt__capture_item(struct evrt__stream *s, evrt_stream_t h,
                        const struct evrt__item *tmpl, const char *label,
                        evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c)
    return false;
  struct evrt__gnode n;
  memset(&n, 0, sizeof n);
  n.kind = tmpl->kind;
  switch (tmpl->kind) {
  case EVRT__ITEM_HOST_FUNC:
    n.u.host.fn = tmpl->u.host.fn;
    n.u.host.user = tmpl->u.host.user;
    break;
  case EVRT__ITEM_MEMCPY:
  case EVRT__ITEM_MEMSET:
    n.u.mem.dst = tmpl->u.mem.dst;
    n.u.mem.src = tmpl->u.mem.src;
    n.u.mem.n = tmpl->u.mem.n;
    n.u.mem.value = tmpl->u.mem.value;
    break;
  case EVRT__ITEM_VALUE_WAIT:
  case EVRT__ITEM_VALUE_WRITE:
    n.u.val.addr = tmpl->u.val.addr;
    n.u.val.value = tmpl->u.val.value;
    n.u.val.flags = tmpl->u.val.flags;
    break;
  case EVRT__ITEM_DELAY:
    n.u.delay.ns = tmpl->u.delay.ns;
    break;
  default: {
    /* A host task's failure (src/failure.c) belongs to the stream that ran
     * it, and a replayed one would run on a lane nobody synchronizes: its
     * error would be lost.  Refused, as CUDA refuses what it cannot
     * capture (rule C9). */
    uint64_t id = c->id;
    invalidate_locked(c, "a host task (evrt_launch_host_func_status) was "
                         "enqueued on stream %llu",
                      (unsigned long long)s->id);
    pthread_mutex_unlock(&c->lock);
    *st = evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                     "stream %llu is capturing (capture %llu): a host task "
                     "that returns a status cannot be captured (capture "
                     "evrt_launch_host_func instead); the capture is "
                     "invalidated",
                     (unsigned long long)s->id, (unsigned long long)id);
    return true;
  }
  }
  if (label) {
    strncpy(n.label, label, sizeof n.label - 1);
    n.label[sizeof n.label - 1] = 0;
  }
  *st = add_node_locked(c, mi, &n, NULL, 0);
  pthread_mutex_unlock(&c->lock);
  return true;
}

/* An event node (external record or wait, reset) on member mi. */
static evrt_status_t event_node_locked(struct evrt__capture *c, uint32_t mi,
                                       int kind, struct evrt__event *e,
                                       evrt_event_t eh) {
  struct evrt__gnode n;
  memset(&n, 0, sizeof n);
  n.kind = (uint8_t)kind;
  n.u.ev.e = e;
  n.u.ev.ev_gen = gen_of_handle(eh);
  n.u.ev.ev_id = e->id;
  return add_node_locked(c, mi, &n, NULL, 0);
}

static bool interprocess_refused(struct evrt__capture *c, struct evrt__event *e,
                                 const char *what, evrt_status_t *st) {
  if (!(e->flags & EVRT_EVENT_INTERPROCESS))
    return false;
  invalidate_locked(c, "interprocess event %llu was %s",
                    (unsigned long long)e->id, what);
  *st = evrt__fail(EVRT_ERROR_CAPTURE_UNSUPPORTED,
                   "an interprocess event cannot be %s in a capture; the "
                   "capture is invalidated",
                   what);
  return true;
}

bool evrt__capture_record(struct evrt__event *e, evrt_event_t eh,
                          struct evrt__stream *s, evrt_stream_t sh,
                          unsigned flags, evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, sh, &mi);
  if (!c)
    return false;
  if (c->status != CAP_ACTIVE) {
    *st = fail_invalidated(c);
  } else if (interprocess_refused(c, e, "recorded", st)) {
  } else if (flags & EVRT_EVENT_RECORD_EXTERNAL) {
    int dev = atomic_load_explicit(&e->device, memory_order_relaxed);
    int sdev = atomic_load_explicit(&s->device, memory_order_relaxed);
    *st = dev >= 0 && dev != sdev
              ? evrt__fail(EVRT_ERROR_DEVICE_MISMATCH,
                           "event device %d does not match recording stream's "
                           "device %d",
                           dev, sdev)
              : event_node_locked(c, mi, EVRT__ITEM_RECORD, e, eh);
  } else {
    /* A dependency marker: the event names the stream's tail. */
    struct member *m = &c->m[mi];
    uint32_t *set = evrt__malloc((m->ntail ? m->ntail : 1) * sizeof *set);
    uint64_t rec_no = 0;
    if (!set ||
        !evrt__grow((void **)&c->r, &c->capr, c->nr + 1, sizeof *c->r)) {
      evrt__free(set);
      *st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY,
                       "cannot record an event in the capture");
    } else if ((*st = evrt__event_publish(
                    e, gen_of_handle(eh), &evrt__capture_src,
                    atomic_load_explicit(&s->device, memory_order_relaxed),
                    c->id, false, &rec_no))) {
      evrt__free(set);
    } else {
      memcpy(set, m->tail, m->ntail * sizeof *set);
      c->r[c->nr++] = (struct caprec){.e = e,
                                      .ev_gen = gen_of_handle(eh),
                                      .rec_no = rec_no,
                                      .set = set,
                                      .nset = m->ntail};
    }
  }
  pthread_mutex_unlock(&c->lock);
  return true;
}

bool evrt__capture_wait(struct evrt__stream *s, evrt_stream_t sh,
                        struct evrt__event *e, evrt_event_t eh, unsigned flags,
                        evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, sh, &mi);
  if (!c)
    return false;
  uint64_t other = 0;
  if (c->status != CAP_ACTIVE) {
    *st = fail_invalidated(c);
  } else if (interprocess_refused(c, e, "waited on", st)) {
  } else if (flags & EVRT_EVENT_WAIT_EXTERNAL) {
    *st = event_node_locked(c, mi, EVRT__ITEM_WAIT, e, eh);
  } else {
    uintptr_t src;
    uint64_t target, rec_no;
    struct caprec *r;
    if (!read_gen(e, gen_of_handle(eh), &src, &target, &rec_no)) {
      *st = evrt__fail(EVRT_ERROR_INVALID_HANDLE, "event %p destroyed",
                       (void *)eh);
    } else if (!src) {
      *st = EVRT_SUCCESS; /* never recorded: an empty dependency */
    } else if (!evrt__captured_src(src)) {
      invalidate_locked(c,
                        "stream %llu waited on event %llu, recorded "
                        "outside the capture",
                        (unsigned long long)s->id, (unsigned long long)e->id);
      *st = evrt__fail(EVRT_ERROR_CAPTURE_ISOLATION,
                       "event %llu was recorded outside capture %llu: a "
                       "capturing stream may wait on it only with "
                       "EVRT_EVENT_WAIT_EXTERNAL; the capture is invalidated",
                       (unsigned long long)e->id, (unsigned long long)c->id);
    } else if (target != c->id) {
      other = target;
      invalidate_locked(c, "stream %llu waited on event %llu of capture %llu",
                        (unsigned long long)s->id, (unsigned long long)e->id,
                        (unsigned long long)target);
      *st = evrt__fail(EVRT_ERROR_CAPTURE_MERGE,
                       "event %llu was recorded in capture %llu, stream %llu "
                       "captures in capture %llu: both are invalidated",
                       (unsigned long long)e->id, (unsigned long long)target,
                       (unsigned long long)s->id, (unsigned long long)c->id);
    } else if (!(r = find_rec(c, e, gen_of_handle(eh), rec_no))) {
      *st = evrt__fail(EVRT_ERROR_INTERNAL, "capture record not found");
    } else {
      *st = merge_tail_locked(&c->m[mi], r->set, r->nset);
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (other) {
    char why[96];
    snprintf(why, sizeof why,
             "stream %llu of another capture waited on "
             "event %llu",
             (unsigned long long)s->id, (unsigned long long)e->id);
    invalidate_id(other, why);
  }
  return true;
}

bool evrt__capture_reset(struct evrt__event *e, evrt_event_t eh,
                         struct evrt__stream *s, evrt_stream_t sh,
                         evrt_status_t *st) {
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, sh, &mi);
  if (!c)
    return false;
  if (c->status != CAP_ACTIVE)
    *st = fail_invalidated(c);
  else if (!interprocess_refused(c, e, "reset", st))
    *st = event_node_locked(c, mi, EVRT__ITEM_RESET, e, eh);
  pthread_mutex_unlock(&c->lock);
  return true;
}

evrt_status_t evrt__capture_fork(struct evrt__stream *s, evrt_stream_t sh,
                                 struct evrt__event *e, uint32_t ev_gen,
                                 uint64_t cap_id, uint64_t rec_no) {
  EVRT__SCHED_POINT(EVRT__SP_CAPTURE_JOIN, s); /* white-box build only */
  pthread_mutex_lock(&reg_lock);
  struct evrt__capture *c = find_active(cap_id);
  if (!c) {
    pthread_mutex_unlock(&reg_lock);
    return evrt__fail(EVRT_ERROR_CAPTURE_EVENT,
                      "event %llu was last recorded inside capture %llu, "
                      "which has ended: record it outside a capture first",
                      (unsigned long long)e->id, (unsigned long long)cap_id);
  }
  pthread_mutex_lock(&c->lock);
  pthread_mutex_unlock(&reg_lock);
  evrt_status_t st;
  struct caprec *r;
  if (c->status != CAP_ACTIVE) {
    st = fail_invalidated(c);
  } else if (!(r = find_rec(c, e, ev_gen, rec_no))) {
    st = evrt__fail(EVRT_ERROR_CAPTURE_EVENT,
                    "event %llu was re-recorded meanwhile",
                    (unsigned long long)e->id);
  } else if ((st = add_member_locked(c, s, r->set, r->nset)) == EVRT_SUCCESS) {
    /* (the waiting stream's handle was looked up without a lock: a
     * destroy may have killed it since; attach_locked checks it again) */
    int why = attach_locked(s, sh, c);
    if (why) {
      /* s was destroyed, or began or joined a capture meanwhile: take the
       * entry back */
      c->nm--;
      evrt__free(c->m[c->nm].tail);
      c->g->nlanes--;
      if (why == 1) {
        st = destroyed_meanwhile(sh);
      } else if (why == 3) {
        invalidate_locked(c, "a default stream waited on event %llu",
                          (unsigned long long)e->id);
        st = evrt__fail(EVRT_ERROR_CAPTURE_IMPLICIT,
                        "the default stream of device %d cannot join capture "
                        "%llu; the capture is invalidated",
                        atomic_load_explicit(&s->device, memory_order_relaxed),
                        (unsigned long long)c->id);
      } else {
        st = evrt__fail(EVRT_ERROR_CAPTURE_MERGE,
                        "stream %llu joined another capture meanwhile",
                        (unsigned long long)s->id);
      }
    }
  }
  pthread_mutex_unlock(&c->lock);
  return st;
}

/* ------------------------------------------- flags, labels: public calls */

static evrt_status_t get_pair(evrt_event_t eh, evrt_stream_t *sh,
                              struct evrt__event **e, struct evrt__stream **s) {
  evrt_status_t st = get_stream(*sh, s);
  if (st)
    return st;
  *e = evrt__event_get(eh);
  if (!*e)
    return evrt__fail(EVRT_ERROR_INVALID_HANDLE,
                      "event %p is NULL, destroyed or not an event",
                      (void *)eh);
  return EVRT_SUCCESS;
}

evrt_status_t evrt_event_record_with_flags(evrt_event_t eh, evrt_stream_t sh,
                                           unsigned flags) {
  if (flags == EVRT_EVENT_RECORD_DEFAULT)
    return evrt_event_record(eh, sh);
  struct evrt__event *e;
  struct evrt__stream *s;
  evrt_status_t st = get_pair(eh, &sh, &e, &s);
  if (st)
    return st;
  if (flags != EVRT_EVENT_RECORD_EXTERNAL)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown record flags 0x%x",
                      flags);
  if (!evrt__capture_record(e, eh, s, sh, flags, &st)) {
    if (!evrt__stream_is(s, sh))
      return destroyed_meanwhile(sh);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "EVRT_EVENT_RECORD_EXTERNAL is valid only on a "
                      "capturing stream (stream %llu is not capturing)",
                      (unsigned long long)s->id);
  }
  return st;
}

evrt_status_t evrt_stream_wait_event_with_flags(evrt_stream_t sh,
                                                evrt_event_t eh,
                                                unsigned flags) {
  if (flags == EVRT_EVENT_WAIT_DEFAULT)
    return evrt_stream_wait_event(sh, eh);
  struct evrt__event *e;
  struct evrt__stream *s;
  evrt_status_t st = get_pair(eh, &sh, &e, &s);
  if (st)
    return st;
  if (flags != EVRT_EVENT_WAIT_EXTERNAL)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE, "unknown wait flags 0x%x",
                      flags);
  if (!evrt__capture_wait(s, sh, e, eh, flags, &st)) {
    if (!evrt__stream_is(s, sh))
      return destroyed_meanwhile(sh);
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "EVRT_EVENT_WAIT_EXTERNAL is valid only on a capturing "
                      "stream (stream %llu is not capturing)",
                      (unsigned long long)s->id);
  }
  return st;
}

static evrt_status_t control_node(evrt_stream_t h, struct evrt__gnode *n,
                                  const uint64_t *labels, uint32_t count) {
  struct evrt__stream *s;
  evrt_status_t st = get_stream(h, &s);
  if (st)
    return st;
  uint32_t mi;
  struct evrt__capture *c = lock_capture_of(s, h, &mi);
  if (!c && !evrt__stream_is(s, h))
    return destroyed_meanwhile(h);
  if (!c)
    return evrt__fail(EVRT_ERROR_NOT_PERMITTED,
                      "labels and switches are capture nodes: stream %llu is "
                      "not capturing",
                      (unsigned long long)s->id);
  st = add_node_locked(c, mi, n, labels, count);
  pthread_mutex_unlock(&c->lock);
  return st;
}

evrt_status_t evrt_stream_capture_label(evrt_stream_t h, uint64_t label) {
  struct evrt__gnode n;
  memset(&n, 0, sizeof n);
  n.kind = EVRT__GN_LABEL;
  n.u.label.id = label;
  return control_node(h, &n, NULL, 0);
}

evrt_status_t evrt_stream_capture_switch(evrt_stream_t h, const uint32_t *index,
                                         const uint64_t *labels,
                                         uint32_t count) {
  evrt_status_t st = evrt__ready();
  if (st)
    return st;
  if (!index || !labels || count == 0)
    return evrt__fail(EVRT_ERROR_INVALID_VALUE,
                      "a switch needs an index pointer and at least one label");
  struct evrt__gnode n;
  memset(&n, 0, sizeof n);
  n.kind = EVRT__GN_SWITCH;
  n.u.sw.index = index;
  return control_node(h, &n, labels, count);
}
