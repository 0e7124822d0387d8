/*
 * shadow.c - the checker's shadow memory: an interval map from byte ranges
 * to the last write (or the allocation or free of a tracked block) and the
 * reads since, each an access record with its epoch (actor, clock).
 *
 * The map is a treap of disjoint intervals keyed by their start, split and
 * merged around each access: an access of [lo, hi) cuts the intervals at lo
 * and hi, checks and updates the ones inside, fills the gaps, and merges the
 * pieces back.  A write leaves one interval over its whole range; reads add
 * themselves to the intervals they overlap.  Cost: O(log n + k) for k
 * intervals touched, whatever the number of bytes.
 *
 * Neighbours whose state is the same (the same last write and the same read
 * records, pointer for pointer) are merged after each access, so the map
 * holds one interval per distinct state, not one per access: a read that
 * covers many earlier reads of its own actor replaces them all with itself
 * (add_read) and leaves one interval.  Only identical states merge: two
 * reads by different items of a stream stay apart, since a later wait may
 * be ordered after the first and not the second (a double buffer).
 *
 * Race rule (FastTrack's): an earlier access `then` is ordered before a
 * later `now` with clock V iff they are by the same actor (program or
 * stream order) or then.clock <= V[then.actor].  Accesses are checked in
 * the order they happen, which every happens-before edge respects (an item
 * is checked before its stream publishes its completion; a host annotation
 * before the thread's next call), so checking one direction is enough.
 *
 * Lock: one mutex around the map (a leaf); findings are reported after it
 * is released.
 */
#include "cimpl.h"

#include <stdlib.h>
#include <string.h>

struct iv {
  uintptr_t lo, hi;
  uint32_t prio;
  struct iv *l, *r;
  struct evrt__acc *w; /* last write, ALLOC or FREE marker; NULL: none */
  /* Freed (w is a FREE): the block's last life as the free found it, its
   * last write (pw) and the reads since (rd), so that an access that comes
   * after the free is checked against them as it would have been before it
   * (the findings do not depend on which came first: determinism). */
  struct evrt__acc *pw;
  struct evrt__acc **rd; /* reads since w (pw if freed), one per actor */
  uint32_t nr, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct iv *root;
static size_t n_iv; /* intervals allocated (under lock) */
static uint32_t prio_state = 2463534242u;

static uint32_t next_prio(void) {
  /* xorshift32: the treap only needs priorities that look random */
  uint32_t x = prio_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return prio_state = x;
}

struct evrt__acc *evrt__acc_new(void) {
  struct evrt__acc *a = calloc(1, sizeof *a);
  if (a) {
    atomic_init(&a->ref, 1);
    if (EVRT_TRACING())
      a->t = evrt__now_ns();
  }
  return a;
}

void evrt__acc_unref(struct evrt__acc *a) {
  /* acq_rel: the last holder frees what the others read */
  if (a && atomic_fetch_sub_explicit(&a->ref, 1, memory_order_acq_rel) == 1)
    free(a);
}

static struct iv *iv_new(uintptr_t lo, uintptr_t hi) {
  struct iv *n = calloc(1, sizeof *n);
  if (!n)
    return NULL;
  n->lo = lo;
  n->hi = hi;
  n->prio = next_prio();
  n_iv++;
  return n;
}

static void iv_clear(struct iv *n) {
  evrt__acc_unref(n->w);
  n->w = NULL;
  evrt__acc_unref(n->pw);
  n->pw = NULL;
  for (uint32_t i = 0; i < n->nr; i++)
    evrt__acc_unref(n->rd[i]);
  n->nr = 0;
}

static void iv_free(struct iv *n) {
  iv_clear(n);
  free(n->rd);
  free(n);
  n_iv--;
}

/* The same state: the same write (and, freed, the same last write before
 * the free) and the same reads (pointers; add_read
 * keeps at most one per actor, in the order they came, so two intervals
 * that saw the same accesses list them alike, and a permutation is only a
 * missed merge). */
static bool same_state(const struct iv *x, const struct iv *y) {
  if (x->w != y->w || x->pw != y->pw || x->nr != y->nr)
    return false;
  for (uint32_t i = 0; i < x->nr; i++)
    if (x->rd[i] != y->rd[i])
      return false;
  return true;
}

static bool add_read(struct iv *n, struct evrt__acc *a, const cvc_t *vc) {
  /* Reads ordered before this one are covered by it: a later write that is
   * ordered after this read is ordered after them too. */
  uint32_t j = 0;
  for (uint32_t i = 0; i < n->nr; i++) {
    struct evrt__acc *r = n->rd[i];
    if (r->actor == a->actor || r->clock <= evrt__cvc_get(vc, r->actor))
      evrt__acc_unref(r);
    else
      n->rd[j++] = r;
  }
  n->nr = j;
  if (n->nr == n->cap) {
    uint32_t cap = n->cap ? n->cap * 2 : 2;
    struct evrt__acc **g = malloc(cap * sizeof *g);
    if (!g)
      return false;
    if (n->nr)
      memcpy(g, n->rd, n->nr * sizeof *g);
    free(n->rd);
    n->rd = g;
    n->cap = cap;
  }
  n->rd[n->nr++] = evrt__acc_ref(a);
  return true;
}

/* A copy of n's state on [lo, hi). */
static struct iv *iv_cut_copy(const struct iv *n, uintptr_t lo, uintptr_t hi) {
  struct iv *m = iv_new(lo, hi);
  if (!m)
    return NULL;
  if (n->w)
    m->w = evrt__acc_ref(n->w);
  if (n->pw)
    m->pw = evrt__acc_ref(n->pw);
  if (n->nr) {
    m->rd = malloc(n->nr * sizeof *m->rd);
    if (!m->rd) {
      iv_free(m);
      return NULL;
    }
    m->cap = n->nr;
    for (uint32_t i = 0; i < n->nr; i++)
      m->rd[m->nr++] = evrt__acc_ref(n->rd[i]);
  }
  return m;
}

/* ---------------------------------------------------------- the treap */

static void split(struct iv *t, uintptr_t key, struct iv **l, struct iv **r) {
  if (!t) {
    *l = *r = NULL;
  } else if (t->lo < key) {
    split(t->r, key, &t->r, r);
    *l = t;
  } else {
    split(t->l, key, l, &t->l);
    *r = t;
  }
}

static struct iv *merge(struct iv *a, struct iv *b) {
  if (!a)
    return b;
  if (!b)
    return a;
  if (a->prio > b->prio) {
    a->r = merge(a->r, b);
    return a;
  }
  b->l = merge(a, b->l);
  return b;
}

static struct iv *max_node(struct iv *t) {
  while (t && t->r)
    t = t->r;
  return t;
}

static struct iv *min_node(struct iv *t) {
  while (t && t->l)
    t = t->l;
  return t;
}

/* In-order list of a treap's nodes. */
struct vec {
  struct iv **v;
  size_t n, cap;
};
static bool vec_push(struct vec *x, struct iv *n) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 16;
    struct iv **g = malloc(cap * sizeof *g);
    if (!g)
      return false;
    if (x->n)
      memcpy(g, x->v, x->n * sizeof *g);
    free(x->v);
    x->v = g;
    x->cap = cap;
  }
  x->v[x->n++] = n;
  return true;
}
static bool flatten_rec(struct iv *t, struct vec *x) {
  return !t || (flatten_rec(t->l, x) && vec_push(x, t) && flatten_rec(t->r, x));
}
/* List a treap's nodes in order and unlink them; false (no memory): the
 * treap is left whole. */
static bool flatten(struct iv *t, struct vec *x) {
  if (!flatten_rec(t, x))
    return false;
  for (size_t i = 0; i < x->n; i++)
    x->v[i]->l = x->v[i]->r = NULL;
  return true;
}

/* Cut the map at lo and hi: *a gets what starts before lo, *c what starts
 * at or after hi, and the return value the intervals inside [lo, hi).
 * false: no memory (the map is whole again in *a). */
static bool isolate(uintptr_t lo, uintptr_t hi, struct iv **a, struct iv **m,
                    struct iv **c) {
  struct iv *b;
  split(root, lo, a, &b);
  struct iv *p = max_node(*a);
  if (p && p->hi > lo) {
    struct iv *q = iv_cut_copy(p, lo, p->hi);
    if (!q) {
      *a = merge(*a, b);
      return false;
    }
    p->hi = lo;
    b = merge(q, b);
  }
  split(b, hi, m, c);
  p = max_node(*m);
  if (p && p->hi > hi) {
    struct iv *q = iv_cut_copy(p, hi, p->hi);
    if (!q) {
      *a = merge(merge(*a, *m), *c);
      return false;
    }
    p->hi = hi;
    *c = merge(q, *c);
  }
  return true;
}

/* ------------------------------------------------------------ findings */

struct found {
  int kind;
  struct evrt__acc *then;
};
struct found_list {
  struct found f[8];
  int n;
};

static void note(struct found_list *fl, int kind, struct evrt__acc *then) {
  for (int i = 0; i < fl->n; i++)
    if (fl->f[i].then == then && fl->f[i].kind == kind)
      return;
  if (fl->n < 8) {
    fl->f[fl->n].kind = kind;
    fl->f[fl->n].then = evrt__acc_ref(then);
    fl->n++;
  }
}

static void flush(struct found_list *fl, struct evrt__acc *now) {
  for (int i = 0; i < fl->n; i++) {
    evrt__report_pair(fl->f[i].kind, now, fl->f[i].then);
    evrt__acc_unref(fl->f[i].then);
  }
}

static bool ordered(const struct evrt__acc *then, const struct evrt__acc *now,
                    const cvc_t *vc) {
  return then->actor == now->actor ||
         then->clock <= evrt__cvc_get(vc, then->actor);
}

static int race_kind(const struct evrt__acc *a, const struct evrt__acc *b) {
  return (a->op == OP_HOST) != (b->op == OP_HOST) ? FIND_HOST : FIND_RACE;
}

/* Check `now` against one interval's state. */
static void check_iv(const struct iv *n, struct evrt__acc *now,
                     const cvc_t *vc, struct found_list *fl) {
  struct evrt__acc *w = n->w;
  if (w && w->kind == ACC_FREE) {
    if (now->kind == ACC_FREE)
      return; /* (freed again: its first free was checked) */
    note(fl, FIND_UAF, w);
    /* and the races it would have met before the free */
    w = n->pw;
  }
  if (w) {
    if (!ordered(w, now, vc)) {
      if (w->kind == ACC_ALLOC)
        note(fl, FIND_UAF, w);
      else if (now->kind == ACC_FREE)
        note(fl, FIND_UAF, w);
      else if (now->kind == ACC_WRITE || w->kind == ACC_WRITE)
        note(fl, race_kind(now, w), w);
    }
  }
  if (now->kind == ACC_READ)
    return;
  for (uint32_t i = 0; i < n->nr; i++) {
    struct evrt__acc *r = n->rd[i];
    if (!ordered(r, now, vc))
      note(fl, now->kind == ACC_FREE ? FIND_UAF : race_kind(now, r), r);
  }
}

static bool freed(const struct iv *n) {
  return n->w && n->w->kind == ACC_FREE;
}

/* The intervals an access leaves, appended in order: each joins the one
 * before it (the last appended, or the map's last interval before the
 * access) when they touch and hold the same state. */
struct run {
  struct iv *t;    /* appended and not merged away */
  struct iv *last; /* the interval just before the next one */
};
static void run_add(struct run *o, struct iv *n) {
  if (o->last && o->last->hi == n->lo && same_state(o->last, n)) {
    o->last->hi = n->hi; /* last is a treap's rightmost node: keys stay */
    iv_free(n);
    return;
  }
  o->t = merge(o->t, n);
  o->last = n;
}
/* The first interval after the access joins the last one too. */
static void run_close(struct run *o, struct iv **c) {
  struct iv *q = min_node(*c);
  if (o->last && q && o->last->hi == q->lo && same_state(o->last, q)) {
    struct iv *qt;
    split(*c, q->lo + 1, &qt, c); /* q alone: every other key >= q->hi */
    o->last->hi = q->hi;
    iv_free(qt);
  }
}

/* A freed interval [lo, hi) holding what n held (n: NULL for a gap, or not
 * freed yet) under the free marker f. */
static struct iv *freed_copy(const struct iv *n, uintptr_t lo, uintptr_t hi,
                             struct evrt__acc *f) {
  struct iv *m = n ? iv_cut_copy(n, lo, hi) : iv_new(lo, hi);
  if (!m)
    return NULL;
  if (m->w && m->w->kind != ACC_ALLOC)
    m->pw = m->w; /* (its reference moves) */
  else
    evrt__acc_unref(m->w);
  m->w = evrt__acc_ref(f);
  return m;
}

void evrt__shadow_access(struct evrt__acc *now, const cvc_t *vc) {
  if (now->hi <= now->lo)
    return;
  struct found_list fl = {.n = 0};
  struct vec x = {0};
  pthread_mutex_lock(&lock);
  struct iv *a, *m, *c;
  if (!isolate(now->lo, now->hi, &a, &m, &c)) {
    root = a;
    pthread_mutex_unlock(&lock);
    evrt__check_oom();
    return;
  }
  if (!flatten(m, &x)) {
    /* no memory to list them: put them back unchecked */
    root = merge(merge(a, m), c);
    pthread_mutex_unlock(&lock);
    free(x.v);
    evrt__check_oom();
    return;
  }
  bool ok = true, any_freed = false;
  for (size_t i = 0; i < x.n; i++) {
    check_iv(x.v[i], now, vc, &fl);
    any_freed |= freed(x.v[i]);
  }
  struct run o = {.t = NULL, .last = max_node(a)};
  if (any_freed) {
    /* A use after free: keep the block marked freed, store nothing. */
    for (size_t i = 0; i < x.n; i++)
      run_add(&o, x.v[i]);
  } else if (now->kind == ACC_WRITE) {
    struct iv *n = iv_new(now->lo, now->hi);
    if (n) {
      for (size_t i = 0; i < x.n; i++)
        iv_free(x.v[i]);
      n->w = evrt__acc_ref(now);
      run_add(&o, n);
    } else {
      ok = false;
      for (size_t i = 0; i < x.n; i++)
        run_add(&o, x.v[i]);
    }
  } else {
    /* A read: add it to each interval and to the gaps between them. */
    uintptr_t at = now->lo;
    for (size_t i = 0; i <= x.n; i++) {
      uintptr_t next = i < x.n ? x.v[i]->lo : now->hi;
      if (ok && next > at) {
        struct iv *g = iv_new(at, next);
        if (g && add_read(g, now, vc)) {
          run_add(&o, g);
        } else {
          if (g)
            iv_free(g);
          ok = false;
        }
      }
      if (i < x.n) {
        uintptr_t end = x.v[i]->hi;
        if (ok && !add_read(x.v[i], now, vc))
          ok = false;
        run_add(&o, x.v[i]);
        at = end;
      }
    }
  }
  run_close(&o, &c);
  root = merge(merge(a, o.t), c);
  pthread_mutex_unlock(&lock);
  free(x.v);
  if (!ok)
    evrt__check_oom();
  flush(&fl, now);
}

/* Drop every interval inside [lo, hi) (the map is cut there). */
static void drop_range(uintptr_t lo, uintptr_t hi, struct iv **a,
                       struct iv **c, bool *ok) {
  struct iv *m;
  if (!isolate(lo, hi, a, &m, c)) {
    *ok = false;
    *c = NULL;
    return;
  }
  struct vec x = {0};
  if (!flatten(m, &x)) {
    /* cannot list them: keep them (stale state is better than a leak of
     * the whole subtree) */
    *a = merge(*a, m);
    *ok = false;
  } else {
    for (size_t i = 0; i < x.n; i++)
      iv_free(x.v[i]);
  }
  free(x.v);
}

void evrt__shadow_alloc(struct evrt__acc *now) {
  if (now->hi <= now->lo)
    return;
  bool ok = true;
  pthread_mutex_lock(&lock);
  struct iv *a, *c;
  drop_range(now->lo, now->hi, &a, &c, &ok);
  struct iv *n = ok ? iv_new(now->lo, now->hi) : NULL;
  if (n)
    n->w = evrt__acc_ref(now);
  else
    ok = false;
  root = merge(merge(a, n), c);
  pthread_mutex_unlock(&lock);
  if (!ok)
    evrt__check_oom();
}

void evrt__shadow_free(struct evrt__acc *now, const cvc_t *vc) {
  if (now->hi <= now->lo)
    return;
  struct found_list fl = {.n = 0};
  bool ok = true;
  pthread_mutex_lock(&lock);
  struct iv *a, *m, *c;
  if (!isolate(now->lo, now->hi, &a, &m, &c)) {
    root = a;
    pthread_mutex_unlock(&lock);
    evrt__check_oom();
    return;
  }
  struct vec x = {0};
  if (flatten(m, &x)) {
    /* Each interval (and each gap) becomes freed, keeping what it held;
     * one already freed stays as it is. */
    struct iv *out = NULL;
    uintptr_t at = now->lo;
    for (size_t i = 0; i <= x.n; i++) {
      struct iv *n = i < x.n ? x.v[i] : NULL;
      uintptr_t next = n ? n->lo : now->hi;
      if (next > at) {
        struct iv *g = freed_copy(NULL, at, next, now);
        if (g)
          out = merge(out, g);
        else
          ok = false;
      }
      if (!n)
        break;
      check_iv(n, now, vc, &fl);
      at = n->hi; /* (n may be freed below) */
      struct iv *f = freed(n) ? NULL : freed_copy(n, n->lo, n->hi, now);
      if (f || freed(n)) {
        out = merge(out, f ? f : n);
        if (f)
          iv_free(n);
      } else {
        ok = false;
        out = merge(out, n); /* (no memory: left as it was) */
      }
    }
    m = out;
  } else {
    ok = false; /* m is whole: left unchecked */
  }
  free(x.v);
  root = merge(merge(a, m), c);
  pthread_mutex_unlock(&lock);
  if (!ok)
    evrt__check_oom();
  flush(&fl, now);
}

void evrt__shadow_forget(uintptr_t lo, uintptr_t hi) {
  if (hi <= lo)
    return;
  bool ok = true;
  pthread_mutex_lock(&lock);
  struct iv *a, *c;
  drop_range(lo, hi, &a, &c, &ok);
  root = merge(a, c);
  pthread_mutex_unlock(&lock);
}

size_t evrt__shadow_intervals(void) {
  pthread_mutex_lock(&lock);
  size_t n = n_iv;
  pthread_mutex_unlock(&lock);
  return n;
}
