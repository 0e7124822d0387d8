/*
 * acl_map.c - a small chained hash map uint64 id -> pointer, for the side
 * tables of events and streams.  Not thread-safe: callers hold
 * acl__lock.  It grows by doubling so 65535+ live events stay O(1).
 */
#include "acl_internal.h"

#include <stdlib.h>

struct node {
  uint64_t key;
  void *value;
  struct node *next;
};

struct acl__map {
  size_t nbuckets, count;
  struct node **b;
};

static size_t slot(uint64_t k, size_t n) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (size_t)(k & (n - 1));
}

static int grow(struct acl__map *m) {
  size_t n = m->nbuckets ? m->nbuckets * 2 : 256;
  struct node **nb = calloc(n, sizeof *nb);
  if (!nb)
    return -1;
  for (size_t i = 0; i < m->nbuckets; i++)
    for (struct node *x = m->b[i], *nx; x; x = nx) {
      nx = x->next;
      size_t s = slot(x->key, n);
      x->next = nb[s];
      nb[s] = x;
    }
  free(m->b);
  m->b = nb;
  m->nbuckets = n;
  return 0;
}

void *acl__map_get(struct acl__map **mp, uint64_t key) {
  struct acl__map *m = *mp;
  if (!m || !m->nbuckets)
    return NULL;
  for (struct node *x = m->b[slot(key, m->nbuckets)]; x; x = x->next)
    if (x->key == key)
      return x->value;
  return NULL;
}

int acl__map_put(struct acl__map **mp, uint64_t key, void *value) {
  if (!*mp && !(*mp = calloc(1, sizeof **mp)))
    return -1;
  struct acl__map *m = *mp;
  if (m->count >= m->nbuckets && grow(m))
    return -1;
  struct node *x = malloc(sizeof *x);
  if (!x)
    return -1;
  size_t s = slot(key, m->nbuckets);
  x->key = key;
  x->value = value;
  x->next = m->b[s];
  m->b[s] = x;
  m->count++;
  return 0;
}

void *acl__map_del(struct acl__map **mp, uint64_t key) {
  struct acl__map *m = *mp;
  if (!m || !m->nbuckets)
    return NULL;
  for (struct node **pp = &m->b[slot(key, m->nbuckets)]; *pp; pp = &(*pp)->next)
    if ((*pp)->key == key) {
      struct node *x = *pp;
      void *v = x->value;
      *pp = x->next;
      free(x);
      m->count--;
      return v;
    }
  return NULL;
}

void acl__map_each(struct acl__map *m,
                        void (*fn)(uint64_t, void *, void *), void *arg) {
  if (!m)
    return;
  for (size_t i = 0; i < m->nbuckets; i++)
    for (struct node *x = m->b[i]; x; x = x->next)
      fn(x->key, x->value, arg);
}
