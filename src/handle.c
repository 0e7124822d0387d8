/*
 * handle.c - type-stable object slots and validated handles.
 *
 * A handle is (generation << 32 | (index + 1) << 2 | type tag).  The slot's
 * generation is odd while the object lives and is bumped at create and at
 * destroy, so stale, double-destroyed and forged handles fail validation.
 * Slot memory is allocated in chunks that are never freed while the library
 * is loaded: pending work items may keep a pointer to a destroyed object and
 * read it; they check the generation under the object's lock before writing.
 */
#include "internal.h"

#include <string.h>

void evrt__table_init(struct evrt__table *t, size_t obj_size, unsigned tag) {
  memset(t, 0, sizeof *t);
  t->obj_size = (obj_size + 63) & ~(size_t)63; /* own cache lines */
  t->tag = tag;
  pthread_mutex_init(&t->grow_lock, NULL);
}

static evrt_status_t grow(struct evrt__table *t, uint32_t index) {
  uint32_t c = index >> EVRT__CHUNK_SHIFT;
  if (c >= EVRT__MAX_CHUNKS)
    return evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "handle table full (%u slots)",
                      (unsigned)EVRT__MAX_CHUNKS * EVRT__CHUNK_SIZE);
  evrt_status_t st = EVRT_SUCCESS;
  pthread_mutex_lock(&t->grow_lock);
  if (!atomic_load_explicit(&t->chunks[c], memory_order_relaxed)) {
    char *mem = evrt__calloc(EVRT__CHUNK_SIZE, t->obj_size);
    if (!mem) {
      st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot grow handle table");
    } else {
      for (uint32_t i = 0; i < EVRT__CHUNK_SIZE; i++)
        ((struct evrt__obj *)(mem + (size_t)i * t->obj_size))->index =
            (c << EVRT__CHUNK_SHIFT) + i;
      /* release: lookups that see the chunk see its initialized slots */
      atomic_store_explicit(&t->chunks[c], mem, memory_order_release);
    }
  }
  pthread_mutex_unlock(&t->grow_lock);
  return st;
}

evrt_status_t evrt__table_alloc(struct evrt__table *t, struct evrt__obj **out) {
  struct evrt__obj *o = NULL;
  /* acquire: the popped slot's next_free link was written before its push */
  uint64_t top = atomic_load_explicit(&t->free_top, memory_order_acquire);
  while ((uint32_t)top != 0) {
    struct evrt__obj *cand = evrt__table_at(t, (uint32_t)top - 1);
    uint32_t next = atomic_load_explicit(&cand->next_free, memory_order_relaxed);
    uint64_t nt = ((top >> 32) + 1) << 32 | next; /* new ABA tag */
    if (atomic_compare_exchange_weak_explicit(&t->free_top, &top, nt,
                                              memory_order_acquire,
                                              memory_order_acquire)) {
      o = cand;
      break;
    }
  }
  if (!o) {
    uint32_t idx =
        atomic_fetch_add_explicit(&t->next_unused, 1, memory_order_relaxed);
    struct evrt__obj *cand = evrt__table_at(t, idx);
    if (!cand) {
      evrt_status_t st = grow(t, idx);
      /* On failure this one index is never handed out (a later index of
       * the same chunk grows it again); giving it back could hand a
       * concurrent allocator's index out twice. */
      if (st != EVRT_SUCCESS)
        return st;
      cand = evrt__table_at(t, idx);
    }
    o = cand;
  }
  atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
  *out = o;
  return EVRT_SUCCESS;
}

void evrt__table_kill(struct evrt__obj *o) {
  /* release: lookups that still see the live generation see the object as
   * it was; after this they fail. */
  atomic_fetch_add_explicit(&o->gen, 1, memory_order_release);
}

void evrt__table_release(struct evrt__table *t, struct evrt__obj *o) {
  atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
  uint64_t top = atomic_load_explicit(&t->free_top, memory_order_relaxed);
  do {
    atomic_store_explicit(&o->next_free, (uint32_t)top, memory_order_relaxed);
    /* release: publishes next_free (and the dead object) to the popper */
  } while (!atomic_compare_exchange_weak_explicit(
      &t->free_top, &top, (((top >> 32) + 1) << 32) | (o->index + 1),
      memory_order_release, memory_order_relaxed));
}
