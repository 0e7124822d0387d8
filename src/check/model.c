/*
 * model.c - the checker's happens-before model: the clocks of host
 * threads and streams, what an enqueue, a record, a wait and an observed
 * completion do to them (check.h has the rules), and the accesses of
 * copies and fills.
 *
 * Locks: cstream.lock (a spin lock per stream slot) and cevent.lock (per
 * event slot) are leaves, never nested in each other: a join of another
 * stream's capture takes a reference under that stream's lock first, then
 * this stream's lock.  Hooks under an event lock (record, skipped wait)
 * take them below it; no check lock is held while the core is called.
 */
#include "cimpl.h"

#include <stdlib.h>
#include <string.h>

#ifndef EVRT_NO_CHECK
bool evrt__check_on;
#endif

/* -------------------------------------------------------- thread state */

struct ctls {
  struct evrt__chost h;
  struct evrt__cstream *run_cs; /* the stream whose host function runs here */
  uint64_t run_seq;
  uint32_t run_site;
  struct evrt__claunch run_launch; /* its graph launch, if a node's */
  /* evrt_check_unobserved_begin depth: while > 0 this thread's
   * observations of completion order nothing (a layer's own waits). */
  uint32_t unobserved;
};
/* One pointer of TLS (the library's static TLS is budgeted: design.md 12) */
static _Thread_local struct ctls *tls;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

/* Actors of exited threads, reused by new ones with their clock going on
 * (a process that starts threads for ever keeps a bounded clock size). */
struct free_actor {
  uint32_t actor;
  uint64_t clock;
  struct free_actor *next;
};
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct free_actor *free_actors;

static void tls_gone(void *p) {
  struct ctls *t = p;
  evrt__cvc_unref(t->h.vc);
  _Static_assert(sizeof(struct free_actor) <= sizeof(struct ctls),
                 "a free actor reuses its thread's state");
  tls = NULL; /* a later destructor's evrt call starts afresh */
  struct free_actor *f = (struct free_actor *)t; /* reuse the memory */
  uint32_t a = t->h.actor;
  uint64_t c = t->h.clock;
  f->actor = a;
  f->clock = c;
  pthread_mutex_lock(&free_lock);
  f->next = free_actors;
  free_actors = f;
  pthread_mutex_unlock(&free_lock);
}
static void tls_key_make(void) { pthread_key_create(&tls_key, tls_gone); }

static struct ctls *ctls(void) {
  struct ctls *t = tls;
  if (EVRT_LIKELY(t != NULL))
    return t;
  pthread_mutex_lock(&free_lock);
  struct free_actor *f = free_actors;
  if (f)
    free_actors = f->next;
  pthread_mutex_unlock(&free_lock);
  uint32_t actor = f ? f->actor : evrt__check_actor();
  uint64_t clock = f ? f->clock + 1 : 1;
  free(f);
  t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->h.actor = actor;
  t->h.clock = clock;
  t->h.tid = evrt__thread_id();
  if (!evrt__cvc_set(&t->h.vc, t->h.actor, clock)) {
    free(t);
    return NULL;
  }
  pthread_once(&tls_once, tls_key_make);
  pthread_setspecific(tls_key, t);
  tls = t;
  return t;
}

/* A reference to the clock an enqueue or record carries from this thread. */
static cvc_t *ctx_share(struct ctls *t) {
  if (t->run_cs) {
    struct evrt__cstream *cs = t->run_cs;
    evrt__spin_lock(&cs->lock);
    cvc_t *v = evrt__cvc_ref(cs->vc);
    evrt__spin_unlock(&cs->lock);
    return v;
  }
  t->h.released = true;
  return evrt__cvc_ref(t->h.vc);
}

/* The calling thread learns v (it observed what v describes complete). */
static void ctx_join(struct ctls *t, const cvc_t *v) {
  if (!v)
    return;
  bool ok;
  if (t->run_cs) {
    struct evrt__cstream *cs = t->run_cs;
    evrt__spin_lock(&cs->lock);
    ok = evrt__cvc_join(&cs->vc, v);
    evrt__spin_unlock(&cs->lock);
  } else {
    ok = evrt__cvc_join(&t->h.vc, v);
  }
  if (!ok)
    evrt__check_oom();
}

bool evrt__check_ctx_access(struct evrt__acc *a, cvc_t **vc) {
  struct ctls *t = ctls();
  if (!t)
    return false;
  a->tid = t->h.tid;
  if (t->run_cs) {
    struct evrt__cstream *cs = t->run_cs;
    evrt__spin_lock(&cs->lock);
    a->actor = cs->actor;
    a->clock = t->run_seq;
    a->stream_id = cs->id;
    a->device = cs->device;
    a->seq = t->run_seq;
    a->lw = cs->lw;
    *vc = evrt__cvc_ref(cs->vc);
    evrt__spin_unlock(&cs->lock);
    a->op = EVRT__ITEM_HOST_FUNC;
    a->site = t->run_site;
    a->launch = t->run_launch;
    a->site2 = evrt__site_capture();
    return true;
  }
  if (t->h.released) {
    /* Lazy tick: what was released before keeps the old clock. */
    if (!evrt__cvc_set(&t->h.vc, t->h.actor, t->h.clock + 1))
      return false;
    t->h.clock++;
    t->h.released = false;
  }
  a->actor = t->h.actor;
  a->clock = t->h.clock;
  a->op = OP_HOST;
  a->device = -1;
  a->site = evrt__site_capture();
  *vc = evrt__cvc_ref(t->h.vc);
  return true;
}

/* ------------------------------------------- host-level synchronization */

/* evrt_check_release / evrt_check_acquire: a clock per address, joined by
 * releases, learned by acquires (TSan's happens-before annotations).
 * Lock: sync_lock (a leaf). */
#define SYNC_BUCKETS 1024
struct csync {
  const void *key;
  cvc_t *vc;
  /* Its last release, for reports (a value wait names the write it
   * passed on): stream wstream's item wseq, or host thread wtid; at wsite. */
  uint64_t wstream, wseq, wtid;
  uint32_t wsite;
  struct csync *next;
};
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static struct csync *sync_table[SYNC_BUCKETS];

static struct csync **sync_slot(const void *key) {
  uintptr_t h = (uintptr_t)key;
  h ^= h >> 17;
  h *= 0x9e3779b97f4a7c15ull;
  struct csync **p = &sync_table[(h >> 40) & (SYNC_BUCKETS - 1)];
  while (*p && (*p)->key != key)
    p = &(*p)->next;
  return p;
}

/* Release key with the clock of stream cs (its item seq, enqueued at
 * site), or of the thread t (at the calling site). */
static void sync_release(struct evrt__cstream *cs, struct ctls *t,
                         const void *key, uint64_t seq, uint32_t site) {
  cvc_t *v;
  uint64_t wstream = 0, wtid = 0;
  if (cs) {
    evrt__spin_lock(&cs->lock);
    v = evrt__cvc_ref(cs->vc);
    wstream = cs->id;
    evrt__spin_unlock(&cs->lock);
  } else if (t->run_cs) { /* from a host function: its stream's item */
    v = ctx_share(t);
    evrt__spin_lock(&t->run_cs->lock);
    wstream = t->run_cs->id;
    evrt__spin_unlock(&t->run_cs->lock);
    seq = t->run_seq;
    site = evrt__site_capture();
  } else {
    v = ctx_share(t);
    wtid = t->h.tid;
    site = evrt__site_capture();
  }
  bool ok = true;
  pthread_mutex_lock(&sync_lock);
  struct csync **p = sync_slot(key);
  if (!*p && (*p = calloc(1, sizeof **p)))
    (*p)->key = key;
  if (*p) {
    ok = evrt__cvc_join(&(*p)->vc, v);
    (*p)->wstream = wstream;
    (*p)->wseq = seq;
    (*p)->wtid = wtid;
    (*p)->wsite = site;
  } else {
    ok = false;
  }
  pthread_mutex_unlock(&sync_lock);
  evrt__cvc_unref(v);
  if (!ok)
    evrt__check_oom();
}

/* Acquire key into stream cs, or into the thread t.  A stream's value
 * wait (lw: its word, condition and flags) becomes the stream's last wait,
 * with the release it acquired as its writer. */
static void sync_acquire(struct evrt__cstream *cs, struct ctls *t,
                         const void *key, struct evrt__clw *lw) {
  pthread_mutex_lock(&sync_lock);
  struct csync **p = sync_slot(key);
  cvc_t *v = *p ? evrt__cvc_ref((*p)->vc) : NULL;
  if (lw && *p) {
    lw->wstream = (*p)->wstream;
    lw->wseq = (*p)->wseq;
    lw->wtid = (*p)->wtid;
    lw->wsite = (*p)->wsite;
  }
  pthread_mutex_unlock(&sync_lock);
  if (cs) {
    evrt__spin_lock(&cs->lock);
    if (v && !evrt__cvc_join(&cs->vc, v))
      evrt__check_oom();
    if (lw)
      cs->lw = *lw;
    evrt__spin_unlock(&cs->lock);
  } else if (t) {
    ctx_join(t, v);
  }
  evrt__cvc_unref(v);
}

void evrt__check_release(const void *key) {
  struct ctls *t = ctls();
  if (t)
    sync_release(NULL, t, key, 0, 0);
}

void evrt__check_acquire(const void *key) {
  struct ctls *t = ctls();
  if (t)
    sync_acquire(NULL, t, key, NULL);
}

void evrt__check_forget(const void *key) {
  pthread_mutex_lock(&sync_lock);
  struct csync **p = sync_slot(key), *dead = *p;
  if (dead)
    *p = dead->next;
  pthread_mutex_unlock(&sync_lock);
  if (dead) {
    evrt__cvc_unref(dead->vc);
    free(dead);
  }
}

/* ---------------------------------------------------------- generations */

void evrt__cgen_unref(struct evrt__cgen *g) {
  /* acq_rel: the last holder frees what the others read */
  if (g && atomic_fetch_sub_explicit(&g->ref, 1, memory_order_acq_rel) == 1) {
    evrt__cvc_unref(g->svc);
    evrt__cvc_unref(g->hvc);
    free(g);
  }
}

/* The stream part of g's clock (a reference), NULL while pending. */
static cvc_t *gen_svc(struct evrt__cgen *g) {
  evrt__spin_lock(&g->cs->lock);
  cvc_t *v = evrt__cvc_ref(g->svc);
  evrt__spin_unlock(&g->cs->lock);
  return v;
}

/* Under cs->lock: the stream's clock after item `target` (<= end_seq): its
 * clock now, with its own entry brought back to target if later items have
 * begun since (their other entries stay: a small over-approximation that
 * can only hide a race, documented in docs/check.md). */
static cvc_t *vc_at_locked(struct evrt__cstream *cs, uint64_t target) {
  if (cs->cur_seq <= target)
    return evrt__cvc_ref(cs->vc);
  cvc_t *v = evrt__cvc_ref(cs->vc);
  if (!evrt__cvc_set(&v, cs->actor, target)) {
    evrt__cvc_unref(v);
    evrt__check_oom();
    return NULL;
  }
  return v;
}

/* Event slots' generations: a ring of the latest ones per slot, found by
 * the slot index of the event id (event.c: id = slot generation << 32 |
 * index + 1).  Waits bound when enqueued hold their generation; the ring
 * serves later lookups (legacy waits bound at execution, host syncs). */
#define CGEN_RING 16
struct cevent {
  evrt__spin_t lock;
  uint64_t ev_id;
  struct evrt__cgen *ring[CGEN_RING];
};
static _Atomic(struct cevent **) cev_chunks[EVRT__MAX_CHUNKS];

static struct cevent *cevent_of(uint64_t ev_id, bool create) {
  uint32_t idx = (uint32_t)ev_id - 1u;
  if (idx >= EVRT__MAX_SLOTS)
    return NULL;
  _Atomic(struct cevent **) *cp = &cev_chunks[idx >> EVRT__CHUNK_SHIFT];
  /* acquire: pairs with the release CAS that published the chunk */
  struct cevent **chunk = atomic_load_explicit(cp, memory_order_acquire);
  if (!chunk) {
    if (!create)
      return NULL;
    struct cevent **n = calloc(EVRT__CHUNK_SIZE, sizeof *n);
    if (!n)
      return NULL;
    struct cevent **exp = NULL;
    /* acq_rel: publish ours, or see the winner's */
    if (atomic_compare_exchange_strong_explicit(cp, &exp, n,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
      chunk = n;
    } else {
      free(n);
      chunk = exp;
    }
  }
  _Atomic(struct cevent *) *sp =
      (_Atomic(struct cevent *) *)&chunk[idx & (EVRT__CHUNK_SIZE - 1)];
  struct cevent *ce = atomic_load_explicit(sp, memory_order_acquire);
  if (!ce && create) {
    struct cevent *n = calloc(1, sizeof *n);
    if (!n)
      return NULL;
    struct cevent *exp = NULL;
    if (atomic_compare_exchange_strong_explicit(sp, &exp, n,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
      ce = n;
    } else {
      free(n);
      ce = exp;
    }
  }
  return ce;
}

/* Generation rec_no of event ev_id (a reference), or NULL. */
static struct evrt__cgen *gen_find(uint64_t ev_id, uint64_t rec_no) {
  struct cevent *ce = cevent_of(ev_id, false);
  if (!ce)
    return NULL;
  evrt__spin_lock(&ce->lock);
  struct evrt__cgen *g = NULL;
  if (ce->ev_id == ev_id) {
    g = ce->ring[rec_no % CGEN_RING];
    if (g && g->rec_no == rec_no)
      atomic_fetch_add_explicit(&g->ref, 1, memory_order_relaxed);
    else
      g = NULL;
  }
  evrt__spin_unlock(&ce->lock);
  return g;
}

/* Fill g's stream part from cs at g->target: now if that item has ended,
 * else when it ends (item_end takes it off cs->pending). */
static void gen_capture(struct evrt__cstream *cs, struct evrt__cgen *g) {
  evrt__spin_lock(&cs->lock);
  g->stream_id = cs->id;
  if (cs->end_seq >= g->target) {
    g->svc = vc_at_locked(cs, g->target);
  } else {
    /* the worker fills it when item `target` ends (item_end) */
    atomic_fetch_add_explicit(&g->ref, 1, memory_order_relaxed);
    g->pnext = cs->pending;
    cs->pending = g;
  }
  evrt__spin_unlock(&cs->lock);
}

/* A wait on a position of stream src that no event names (graph replay's
 * waits across lanes and on a launch's end, src/graph_exec.c; the waits
 * of evrt_device_launch_host_func): a generation of src at target, held
 * by the wait alone, as if an event had been recorded there. */
static struct evrt__cgen *gen_at(struct evrt__stream *src, uint64_t target,
                                 uint32_t site) {
  struct evrt__cstream *cs = src->check;
  struct evrt__cgen *g = cs ? calloc(1, sizeof *g) : NULL;
  if (!g) {
    if (cs)
      evrt__check_oom();
    return NULL;
  }
  atomic_init(&g->ref, 1); /* the wait's */
  g->cs = cs;
  g->target = target;
  g->site = site;
  gen_capture(cs, g);
  return g;
}

void evrt__check_record(uint64_t ev_id, struct evrt__stream *s,
                        uint64_t rec_no, uint64_t target) {
  struct evrt__cstream *cs = s->check;
  struct ctls *t = ctls();
  struct cevent *ce = cevent_of(ev_id, true);
  struct evrt__cgen *g = calloc(1, sizeof *g);
  if (!cs || !t || !ce || !g) {
    free(g);
    evrt__check_oom();
    return;
  }
  atomic_init(&g->ref, 1); /* the ring's */
  g->ev_id = ev_id;
  g->rec_no = rec_no;
  g->cs = cs;
  g->target = target;
  g->site = evrt__site_capture();
  g->hvc = ctx_share(t);
  gen_capture(cs, g);
  evrt__spin_lock(&ce->lock);
  if (ce->ev_id != ev_id) {
    /* a new incarnation of the slot: the old one's generations go */
    for (int i = 0; i < CGEN_RING; i++) {
      evrt__cgen_unref(ce->ring[i]);
      ce->ring[i] = NULL;
    }
    ce->ev_id = ev_id;
  }
  struct evrt__cgen *old = ce->ring[rec_no % CGEN_RING];
  ce->ring[rec_no % CGEN_RING] = g;
  evrt__spin_unlock(&ce->lock);
  evrt__cgen_unref(old);
}

/* Join generation g into the stream cs (its worker, or an idle stream). */
static void join_gen_into(struct evrt__cstream *cs, struct evrt__cgen *g) {
  cvc_t *sv = gen_svc(g);
  evrt__spin_lock(&cs->lock);
  bool ok = evrt__cvc_join(&cs->vc, sv) && evrt__cvc_join(&cs->vc, g->hvc);
  if (g->ev_id) { /* (a position no event names is not one for reports) */
    memset(&cs->lw, 0, sizeof cs->lw);
    cs->lw.ev = g->ev_id;
    cs->lw.gen = g->rec_no;
    cs->lw.src = g->stream_id;
    cs->lw.target = g->target;
  }
  evrt__spin_unlock(&cs->lock);
  evrt__cvc_unref(sv);
  if (!ok)
    evrt__check_oom();
}

void evrt__check_wait_skipped(struct evrt__stream *s, struct evrt__event *e,
                              uint64_t rec_no) {
  struct evrt__cstream *cs = s->check;
  struct evrt__cgen *g = gen_find(e->id, rec_no);
  if (cs && g)
    join_gen_into(cs, g);
  evrt__cgen_unref(g);
}

/* ------------------------------------------------------------ streams */

void evrt__check_stream_new(struct evrt__stream *s) {
  struct evrt__cstream *cs = s->check;
  if (!cs) {
    /* One per slot for the life of the process (slots are type-stable, and
     * a stale pointer to a stream may still reach its check state); set
     * before the stream is published. */
    cs = calloc(1, sizeof *cs);
    if (!cs) {
      evrt__check_oom();
      return;
    }
    cs->s = s;
    /* The slot's actor for good: its clock is the stream's seq, which
     * keeps growing across incarnations, so epochs of an earlier
     * incarnation stay below every later one and the number of actors is
     * bounded by the number of slots (docs/check.md: what a slot's reuse
     * hides). */
    cs->actor = evrt__check_actor();
    s->check = cs;
  }
  uint64_t done = evrt__done(s);
  evrt__spin_lock(&cs->lock);
  /* Captures of the last incarnation were all filled: it drained. */
  while (cs->pending) {
    struct evrt__cgen *g = cs->pending;
    cs->pending = g->pnext;
    if (!g->svc)
      g->svc = evrt__cvc_ref(cs->vc);
    evrt__cgen_unref(g);
  }
  cs->id = s->id;
  cs->device = atomic_load_explicit(&s->device, memory_order_relaxed);
  evrt__cvc_unref(cs->vc);
  cs->vc = NULL;
  if (!evrt__cvc_set(&cs->vc, cs->actor, done))
    evrt__check_oom();
  cs->cur_seq = cs->end_seq = done;
  evrt__cvc_unref(cs->last_in);
  cs->last_in = NULL;
  cs->wstate = CW_NONE;
  cs->name[0] = 0;
  memset(&cs->lw, 0, sizeof cs->lw);
  memset(&cs->launch, 0, sizeof cs->launch);
  evrt__spin_unlock(&cs->lock);
}

/* ------------------------------------------ queued writers (deadlock.c) */

/* Value writes enqueued and not ended, by word: a value wait's producers.
 * Lock: vw_lock (a spin lock, a leaf: a few link updates under it). */
#define VW_BUCKETS 64
static evrt__spin_t vw_lock;
static struct evrt__citem *vw_table[VW_BUCKETS];

static struct evrt__citem **vw_bucket(uintptr_t addr) {
  return &vw_table[((addr >> 3) * 0x9E3779B97F4A7C15ull) >> 58];
}

/* At enqueue: count an item that may write memory in its stream's
 * q_writers, and a value write under its word. */
static void writer_enqueued(struct evrt__citem *ci, struct evrt__stream *s,
                            const struct evrt__item *it) {
  ci->qcs = NULL;
  ci->vw_addr = 0;
  ci->vw_next = NULL;
  switch (it->kind) {
  case EVRT__ITEM_VALUE_WRITE:
  case EVRT__ITEM_MEMCPY:
  case EVRT__ITEM_MEMSET:
  case EVRT__ITEM_HOST_FUNC:
  case EVRT__ITEM_HOST_TASK:
  case EVRT__ITEM_GRAPH:
  case EVRT__ITEM_GRAPH_SEG:
    break;
  default:
    return;
  }
  if (!s || !s->check)
    return;
  ci->qcs = s->check;
  /* relaxed: a count the walk reads, confirmed by a second walk */
  atomic_fetch_add_explicit(&ci->qcs->q_writers, 1, memory_order_relaxed);
  if (it->kind != EVRT__ITEM_VALUE_WRITE)
    return;
  ci->vw_addr = (uintptr_t)it->u.val.addr;
  struct evrt__citem **b = vw_bucket(ci->vw_addr);
  evrt__spin_lock(&vw_lock);
  ci->vw_next = *b;
  *b = ci;
  evrt__spin_unlock(&vw_lock);
}

/* At its end (or a failed enqueue): no longer a queued writer. */
static void writer_done(struct evrt__citem *ci) {
  if (ci->vw_addr) {
    struct evrt__citem **p = vw_bucket(ci->vw_addr);
    evrt__spin_lock(&vw_lock);
    while (*p && *p != ci)
      p = &(*p)->vw_next;
    if (*p)
      *p = ci->vw_next;
    evrt__spin_unlock(&vw_lock);
    ci->vw_addr = 0;
  }
  if (ci->qcs) {
    atomic_fetch_sub_explicit(&ci->qcs->q_writers, 1, memory_order_relaxed);
    ci->qcs = NULL;
  }
}

int evrt__check_value_writers(uintptr_t addr, struct evrt__stream **out,
                              int max) {
  int n = 0;
  evrt__spin_lock(&vw_lock);
  for (struct evrt__citem *ci = *vw_bucket(addr); ci; ci = ci->vw_next) {
    if (ci->vw_addr != addr)
      continue;
    bool seen = false;
    for (int i = 0; i < n && i < max; i++)
      seen |= out[i] == ci->qcs->s;
    if (seen)
      continue;
    if (n < max)
      out[n] = ci->qcs->s;
    n++;
  }
  evrt__spin_unlock(&vw_lock);
  return n;
}

void evrt__check_discard(void *check) {
  struct evrt__citem *ci = check;
  if (ci) {
    writer_done(ci);
    evrt__cvc_unref(ci->vc);
    evrt__cgen_unref(ci->gen);
    free(ci);
  }
}

void evrt__check_stream_name(struct evrt__stream *s, uint64_t id,
                             const char *name) {
  struct evrt__cstream *cs = s->check;
  if (!cs)
    return;
  evrt__spin_lock(&cs->lock);
  /* a set_name racing a destroy and the slot's reuse must not name the
   * next incarnation (stream_new sets cs->id under this lock) */
  if (cs->id == id)
    snprintf(cs->name, sizeof cs->name, "%s", name);
  evrt__spin_unlock(&cs->lock);
}

static void *enqueue_rec(struct evrt__stream *by, struct evrt__stream *s,
                         const struct evrt__item *it) {
  struct ctls *t = ctls();
  struct evrt__citem *ci = malloc(sizeof *ci);
  if (!t || !ci) {
    free(ci);
    evrt__check_oom();
    return NULL;
  }
  struct evrt__cstream *bcs = by ? by->check : NULL;
  memset(&ci->launch, 0, sizeof ci->launch);
  if (bcs) {
    /* A graph launch's lane item: it belongs to the launch by's worker
     * runs now (item_begin of its graph item set bcs->launch). */
    evrt__spin_lock(&bcs->lock);
    ci->vc = evrt__cvc_ref(bcs->vc);
    ci->launch = bcs->launch;
    evrt__spin_unlock(&bcs->lock);
  } else {
    ci->vc = ctx_share(t);
  }
  ci->site = evrt__site_capture();
  ci->gen = NULL;
  /* A wait bound now (rule 3) holds its generation; the caller holds the
   * event lock, so it is the event's latest.  A wait on a stream position
   * without an event gets a generation of its own. */
  if (it->kind == EVRT__ITEM_WAIT && it->dep_kind == EVRT__DEP_STREAM &&
      it->u.ev.src)
    ci->gen = it->u.ev.ev_id
                  ? gen_find(it->u.ev.ev_id, it->u.ev.rec_no)
                  : gen_at(it->u.ev.src, it->u.ev.target, ci->site);
  writer_enqueued(ci, s, it);
  return ci;
}

void *evrt__check_enqueue(struct evrt__stream *s, const struct evrt__item *it) {
  return enqueue_rec(NULL, s, it);
}

void *evrt__check_enqueue_by(struct evrt__stream *by, struct evrt__stream *s,
                             const struct evrt__item *it) {
  return enqueue_rec(by, s, it);
}

uint32_t evrt__check_node_site(void) { return evrt__site_capture(); }

void *evrt__check_node(uint32_t site, const void *seg) {
  struct evrt__citem *ci = calloc(1, sizeof *ci);
  const struct evrt__citem *sci = seg;
  if (!ci) {
    evrt__check_oom();
  } else {
    ci->site = site;
    if (sci)
      ci->launch = sci->launch;
  }
  return ci;
}

void evrt__check_join_after(struct evrt__stream *s, struct evrt__stream *src,
                            uint64_t target) {
  struct evrt__cstream *cs = s->check, *scs = src->check;
  if (!cs || !scs)
    return;
  evrt__spin_lock(&scs->lock);
  cvc_t *v = scs->end_seq >= target ? vc_at_locked(scs, target) : NULL;
  evrt__spin_unlock(&scs->lock);
  evrt__spin_lock(&cs->lock);
  bool ok = evrt__cvc_join(&cs->vc, v);
  evrt__spin_unlock(&cs->lock);
  evrt__cvc_unref(v);
  if (!ok)
    evrt__check_oom();
}

static void mem_access(struct evrt__cstream *cs, struct evrt__item *it,
                       const struct evrt__citem *ci, cvc_t *vc, int kind,
                       const void *p, const char *role) {
  struct evrt__acc *a = evrt__acc_new();
  if (!a) {
    evrt__check_oom();
    return;
  }
  a->actor = cs->actor;
  a->clock = it->seq;
  a->kind = (uint8_t)kind;
  a->op = it->kind;
  a->role = role;
  a->lo = (uintptr_t)p;
  a->hi = (uintptr_t)p + it->u.mem.n;
  a->stream_id = cs->id;
  a->seq = it->seq;
  a->device = cs->device;
  a->site = ci ? ci->site : 0;
  if (ci)
    a->launch = ci->launch;
  evrt__spin_lock(&cs->lock);
  a->lw = cs->lw; /* its worker's: the lock only pairs with readers */
  evrt__spin_unlock(&cs->lock);
  evrt__shadow_access(a, vc);
  evrt__acc_unref(a);
}

/* Under cs->lock: fill the captures that item seq completes (records that
 * target it). */
static void fill_captures_locked(struct evrt__cstream *cs, uint64_t seq) {
  struct evrt__cgen **pp = &cs->pending;
  while (*pp) {
    struct evrt__cgen *g = *pp;
    if (g->target <= seq) {
      *pp = g->pnext;
      g->svc = vc_at_locked(cs, g->target);
      evrt__cgen_unref(g);
    } else {
      pp = &g->pnext;
    }
  }
}

void evrt__check_item_begin(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__cstream *cs = s->check;
  if (!cs)
    return;
  struct evrt__citem *ci = it->check;
  cvc_t *vc = NULL;
  bool user = it->kind == EVRT__ITEM_HOST_FUNC ||
              it->kind == EVRT__ITEM_HOST_TASK;
  if (evrt__chaos_on && (user || it->kind == EVRT__ITEM_MEMCPY ||
                         it->kind == EVRT__ITEM_MEMSET))
    evrt__chaos_delay(cs->id, it->seq); /* host function, copy, fill: once */
  evrt__spin_lock(&cs->lock);
  if (cs->cur_seq < it->seq) {
    bool ok = true;
    if (ci && ci->vc && ci->vc != cs->last_in) {
      ok = evrt__cvc_join(&cs->vc, ci->vc);
      evrt__cvc_unref(cs->last_in);
      cs->last_in = evrt__cvc_ref(ci->vc);
    }
    ok = ok && evrt__cvc_set(&cs->vc, cs->actor, it->seq);
    if (!ok)
      evrt__check_oom();
    cs->cur_seq = it->seq;
    /* A graph launch: the lane items it enqueues now are its own. */
    if (it->kind == EVRT__ITEM_GRAPH) {
      cs->launch.site = ci ? ci->site : 0;
      cs->launch.stream = cs->id;
    }
    /* A record item completes its generation while it runs (an
     * interprocess one marks the shared slot, and a waiter may pass at
     * once): its capture is its clock now (it touches nothing). */
    if (it->kind == EVRT__ITEM_RECORD)
      fill_captures_locked(cs, it->seq);
  }
  bool mem = (it->kind == EVRT__ITEM_MEMCPY || it->kind == EVRT__ITEM_MEMSET) &&
             it->u.mem.n;
  if (mem)
    vc = evrt__cvc_ref(cs->vc);
  evrt__spin_unlock(&cs->lock);
  if (mem) {
    if (it->kind == EVRT__ITEM_MEMCPY)
      mem_access(cs, it, ci, vc, ACC_READ, it->u.mem.src, "source");
    mem_access(cs, it, ci, vc, ACC_WRITE, it->u.mem.dst,
               it->kind == EVRT__ITEM_MEMCPY ? "destination" : NULL);
    evrt__cvc_unref(vc);
  } else if (user) {
    struct ctls *t = ctls();
    if (t) {
      t->run_cs = cs;
      t->run_seq = it->seq;
      t->run_site = ci ? ci->site : 0;
      if (ci)
        t->run_launch = ci->launch;
      else
        memset(&t->run_launch, 0, sizeof t->run_launch);
    }
  }
}

void evrt__check_item_end(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__cstream *cs = s->check;
  struct evrt__citem *ci = it->check;
  it->check = NULL;
  if ((it->kind == EVRT__ITEM_HOST_FUNC || it->kind == EVRT__ITEM_HOST_TASK) &&
      tls)
    tls->run_cs = NULL;
  if (!cs)
    goto out;
  if (it->kind == EVRT__ITEM_WAIT && !it->failed) {
    /* The wait passed: the stream now knows its generation.  Bound at
     * enqueue (held), or later (legacy next-record, interprocess: looked
     * up).  A wait released by a destroy or a timeout orders nothing. */
    struct evrt__cgen *g = ci && ci->gen ? ci->gen : NULL;
    if (g)
      atomic_fetch_add_explicit(&g->ref, 1, memory_order_relaxed);
    else if (it->u.ev.src || it->dep_kind == EVRT__DEP_IPC)
      g = gen_find(it->u.ev.ev_id, it->u.ev.rec_no);
    if (g)
      join_gen_into(cs, g);
    evrt__cgen_unref(g);
  }
  /* Stream-ordered values: a write releases the word's clock, a wait that
   * passed acquires it (as a host's evrt_value_write64 releases it). */
  if (it->kind == EVRT__ITEM_VALUE_WRITE) {
    sync_release(cs, NULL, (const void *)it->u.val.addr, it->seq,
                 ci ? ci->site : 0);
  } else if (it->kind == EVRT__ITEM_VALUE_WAIT) {
    /* A value wait that passed is the stream's last wait (reports). */
    struct evrt__clw lw = {0};
    lw.addr = (uintptr_t)it->u.val.addr;
    lw.value = it->u.val.value;
    lw.flags = it->u.val.flags;
    sync_acquire(cs, NULL, (const void *)it->u.val.addr,
                 it->failed ? NULL : &lw);
  }
  evrt__spin_lock(&cs->lock);
  cs->wstate = CW_NONE;
  if (it->seq > cs->end_seq)
    cs->end_seq = it->seq;
  fill_captures_locked(cs, it->seq);
  evrt__spin_unlock(&cs->lock);
out:
  if (ci) {
    writer_done(ci);
    evrt__cvc_unref(ci->vc);
    evrt__cgen_unref(ci->gen);
    free(ci);
  }
}

void evrt__check_item_parked(struct evrt__stream *s, struct evrt__item *it) {
  struct evrt__cstream *cs = s->check;
  if (!cs)
    return;
  if (it->kind == EVRT__ITEM_VALUE_WAIT) {
    /* the fields are the item's own, constant while it is queued */
    struct evrt__citem *ci = it->check;
    evrt__spin_lock(&cs->lock);
    cs->wstate = CW_VALUE;
    cs->w_timed = it->u.val.end != 0;
    cs->w_seq = it->seq;
    cs->w_site = ci ? ci->site : 0;
    cs->w_ev = cs->w_gen = 0;
    cs->w_addr = (uintptr_t)it->u.val.addr;
    cs->w_value = it->u.val.value;
    cs->w_flags = it->u.val.flags;
    evrt__spin_unlock(&cs->lock);
    return;
  }
  if (it->kind != EVRT__ITEM_WAIT)
    return;
  struct evrt__citem *ci = it->check;
  /* dep_kind is this worker's; a bound wait's generation was written at
   * enqueue, by this worker, or under the event lock that its binding here
   * took: stable while the stream is parked on it.  A next-record wait
   * still queued on its event is not read: a record may bind it now. */
  evrt__spin_lock(&cs->lock);
  cs->w_seq = it->seq;
  cs->w_timed = it->deadline != 0; /* evrt_stream_wait_event_timeout */
  cs->w_site = ci ? ci->site : 0;
  cs->w_ev = it->u.ev.ev_id;
  cs->w_gen = 0;
  if (it->dep_kind == EVRT__DEP_STREAM && it->u.ev.src) {
    cs->wstate = CW_STREAM;
    cs->w_gen = it->u.ev.rec_no;
    cs->w_src = it->u.ev.src;
    cs->w_target = it->u.ev.target;
  } else if (it->dep_kind == EVRT__DEP_NEXT_RECORD) {
    cs->wstate = CW_FUTURE;
  } else {
    cs->wstate = CW_OTHER;
  }
  evrt__spin_unlock(&cs->lock);
}

/* ------------------------------------------------- observed completion */

/* evrt_check_unobserved_begin (+1) / _end (-1) of the calling thread; only
 * that thread reads or writes its count, so no lock.  An end without a
 * begin is refused (false) and changes nothing. */
bool evrt__check_unobserved(int delta) {
  struct ctls *t = ctls();
  if (!t)
    return delta > 0; /* (no context: out of memory; nothing to order) */
  if (delta < 0 && t->unobserved == 0)
    return false;
  t->unobserved += (uint32_t)delta;
  return true;
}

void evrt__check_observe_stream(struct evrt__stream *s, uint64_t target) {
  struct evrt__cstream *cs = s->check;
  struct ctls *t = ctls();
  if (!cs || !t || t->run_cs == cs || t->unobserved)
    return;
  evrt__spin_lock(&cs->lock);
  cvc_t *v = cs->end_seq >= target ? vc_at_locked(cs, target) : NULL;
  evrt__spin_unlock(&cs->lock);
  ctx_join(t, v);
  evrt__cvc_unref(v);
}

evrt_status_t evrt__check_ipc_observed(struct evrt__event *e,
                                       evrt_status_t st) {
  if (st == EVRT_SUCCESS)
    evrt__check_observe_event(e);
  return st;
}

void evrt__check_observe_event(struct evrt__event *e) {
  struct ctls *t = ctls();
  if (!t || t->unobserved || (!(e->flags & EVRT_EVENT_INTERPROCESS) &&
             !atomic_load_explicit(&e->src, memory_order_relaxed)))
    return; /* never recorded, or reset: complete without a generation */
  uint64_t id = e->id;
  struct cevent *ce = cevent_of(id, false);
  if (!ce)
    return;
  /* The newest generation captured: the one the caller saw complete, or a
   * later one captured since (which can only hide a race).  Captured, not
   * done_seq past its target: an interprocess record completes its shared
   * slot while its item runs, after its capture and before done_seq. */
  struct evrt__cgen *gs[CGEN_RING];
  int n = 0;
  evrt__spin_lock(&ce->lock);
  if (ce->ev_id == id)
    for (int i = 0; i < CGEN_RING; i++)
      if (ce->ring[i]) {
        gs[n] = ce->ring[i];
        atomic_fetch_add_explicit(&gs[n]->ref, 1, memory_order_relaxed);
        n++;
      }
  evrt__spin_unlock(&ce->lock);
  struct evrt__cgen *best = NULL;
  cvc_t *best_sv = NULL;
  for (int i = 0; i < n; i++) {
    if (!best || gs[i]->rec_no > best->rec_no) {
      cvc_t *sv = gen_svc(gs[i]);
      if (sv) {
        evrt__cvc_unref(best_sv);
        best = gs[i];
        best_sv = sv;
      }
    }
  }
  if (best) {
    ctx_join(t, best_sv);
    ctx_join(t, best->hvc);
  }
  evrt__cvc_unref(best_sv);
  for (int i = 0; i < n; i++)
    evrt__cgen_unref(gs[i]);
}

void evrt__check_observe_device(int device) {
  struct ctls *t = ctls();
  if (!t || t->unobserved)
    return;
  struct evrt__table *tb = &evrt__streams;
  uint32_t n = atomic_load_explicit(&tb->next_unused, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    struct evrt__stream *s = (struct evrt__stream *)evrt__table_at(tb, i);
    struct evrt__cstream *cs = s ? s->check : NULL;
    if (!cs || cs == t->run_cs)
      continue;
    evrt__spin_lock(&cs->lock);
    cvc_t *v = cs->device == device ? vc_at_locked(cs, cs->end_seq) : NULL;
    evrt__spin_unlock(&cs->lock);
    ctx_join(t, v);
    evrt__cvc_unref(v);
  }
}
