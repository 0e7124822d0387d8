/*
 * vc.c - sparse vector clocks for the checker: (actor, clock) entries
 * sorted by actor, reference counted, copy-on-write (cimpl.h).  Programs
 * with a few streams have a few entries per clock; the sparse form keeps a
 * process that made thousands of streams from paying for all of them at
 * every join.
 */
#include "cimpl.h"

#include <string.h>

static atomic_uint next_actor;

uint32_t evrt__check_actor(void) {
  /* relaxed: only uniqueness matters */
  return atomic_fetch_add_explicit(&next_actor, 1, memory_order_relaxed) + 1;
}

cvc_t *evrt__cvc_new(uint32_t cap) {
  if (cap < 4)
    cap = 4;
  cvc_t *v = malloc(sizeof *v + (size_t)cap * sizeof v->e[0]);
  if (!v)
    return NULL;
  atomic_init(&v->ref, 1);
  v->n = 0;
  v->cap = cap;
  return v;
}

void evrt__cvc_unref(cvc_t *v) {
  /* acq_rel: the last holder sees every write made while it was owned */
  if (v && atomic_fetch_sub_explicit(&v->ref, 1, memory_order_acq_rel) == 1)
    free(v);
}

/* Index of the first entry with actor >= a. */
static uint32_t lower(const cvc_t *v, uint32_t a) {
  uint32_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (v->e[mid].a < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint64_t evrt__cvc_get(const cvc_t *v, uint32_t a) {
  if (!v)
    return 0;
  uint32_t i = lower(v, a);
  return i < v->n && v->e[i].a == a ? v->e[i].c : 0;
}

static cvc_t *copy_with_room(const cvc_t *v, uint32_t extra) {
  uint32_t n = v ? v->n : 0;
  cvc_t *c = evrt__cvc_new(n + extra + n / 2);
  if (!c)
    return NULL;
  if (n)
    memcpy(c->e, v->e, (size_t)n * sizeof v->e[0]);
  c->n = n;
  return c;
}

bool evrt__cvc_own(cvc_t **pv) {
  cvc_t *v = *pv;
  /* acquire: pairs with the release half of other holders' unref, so the
   * owner's writes cannot overtake their last reads */
  if (v && atomic_load_explicit(&v->ref, memory_order_acquire) == 1)
    return true;
  cvc_t *c = copy_with_room(v, 1);
  if (!c)
    return false;
  evrt__cvc_unref(v);
  *pv = c;
  return true;
}

bool evrt__cvc_set(cvc_t **pv, uint32_t a, uint64_t c) {
  if (!evrt__cvc_own(pv))
    return false;
  cvc_t *v = *pv;
  uint32_t i = lower(v, a);
  if (i < v->n && v->e[i].a == a) {
    v->e[i].c = c;
    return true;
  }
  if (v->n == v->cap) {
    cvc_t *g = copy_with_room(v, 4);
    if (!g)
      return false;
    evrt__cvc_unref(v);
    *pv = v = g;
  }
  memmove(&v->e[i + 1], &v->e[i], (size_t)(v->n - i) * sizeof v->e[0]);
  v->e[i].a = a;
  v->e[i].c = c;
  v->n++;
  return true;
}

bool evrt__cvc_leq(const cvc_t *a, const cvc_t *b) {
  if (!a || a == b)
    return true;
  uint32_t j = 0, nb = b ? b->n : 0;
  for (uint32_t i = 0; i < a->n; i++) {
    while (j < nb && b->e[j].a < a->e[i].a)
      j++;
    if (j == nb || b->e[j].a != a->e[i].a || b->e[j].c < a->e[i].c)
      return false;
  }
  return true;
}

bool evrt__cvc_join(cvc_t **pv, const cvc_t *src) {
  if (!src || src->n == 0 || evrt__cvc_leq(src, *pv))
    return true;
  const cvc_t *d = *pv;
  uint32_t nd = d ? d->n : 0;
  cvc_t *m = evrt__cvc_new(nd + src->n);
  if (!m)
    return false;
  uint32_t i = 0, j = 0, k = 0;
  while (i < nd || j < src->n) {
    if (j == src->n || (i < nd && d->e[i].a < src->e[j].a)) {
      m->e[k++] = d->e[i++];
    } else if (i == nd || src->e[j].a < d->e[i].a) {
      m->e[k++] = src->e[j++];
    } else {
      m->e[k] = d->e[i];
      if (src->e[j].c > m->e[k].c)
        m->e[k].c = src->e[j].c;
      k++, i++, j++;
    }
  }
  m->n = k;
  evrt__cvc_unref(*pv);
  *pv = m;
  return true;
}
