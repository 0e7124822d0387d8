/*
 * core_handle.h - handles and the type-stable slot tables (src/handle.c).
 * A slot word (obj.hw) is published with release and validated with
 * acquire; slots are recycled, never freed, so stale pointers stay safe to
 * read.  The grow lock (a mutex) is a leaf.
 */
#ifndef EVRT_CORE_HANDLE_H
#define EVRT_CORE_HANDLE_H

#include "core_base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* -------------------------------------------------------------- handles */
/* Type-stable object slots.  Raw handle bits: [1:0] type tag, [31:2]
 * index+1, [63:32] slot generation (odd = live).  The value a caller sees
 * is the raw handle XOR evrt__hkey, a key drawn at init (handle.c), so
 * handle values differ from process to process: an integer guessed or kept
 * from another run names nothing.  Everything inside the core (slot words,
 * caches, ids) is raw; evrt__raw / evrt__pub convert at the API.  A slot
 * whose generation would pass EVRT__GEN_LAST is retired, never reused, so
 * a stale handle can never become valid again. */
/* Graphs and executable graphs share tag 3 (src/graph.c); they have no
 * per-thread slot cache (evrt__tcaches covers tags 1 and 2). */
enum { EVRT__TAG_STREAM = 1, EVRT__TAG_EVENT = 2, EVRT__TAG_GRAPH = 3 };
#define EVRT__CHUNK_SHIFT 10
#define EVRT__CHUNK_SIZE (1u << EVRT__CHUNK_SHIFT)
#define EVRT__MAX_CHUNKS 4096
#define EVRT__MAX_SLOTS ((uint32_t)EVRT__MAX_CHUNKS << EVRT__CHUNK_SHIFT)
/* The slot size a table gives objects of a type (its own cache lines); a
 * compile-time constant, so lookups that pass it index without a load. */
#define EVRT__SLOT_SIZE(type) ((sizeof(type) + 63) & ~(size_t)63)

/*
 * Slot header.  hw holds the handle of the live incarnation, so validating a
 * handle is one compare of the whole word (tag, index and generation at
 * once).  A dead slot keeps its (even) generation in the high half and zero
 * in the low half: no handle can equal it, because a handle whose low half
 * is zero names index 0, which the range check refuses before hw is read.
 */
struct evrt__obj {
  atomic_uint_least64_t hw; /* live: the handle; dead: gen << 32 */
  atomic_uint next_free;    /* free-stack link: index+1, 0 = end */
  uint32_t hlow;            /* (index + 1) << 2 | tag: the live low half */
};

static inline uint32_t evrt__obj_index(const struct evrt__obj *o) {
  return (o->hlow >> 2) - 1;
}
/* The slot generation (odd while live).  seq_cst: under an event lock this
 * is one side of the Dekker pair with evrt_event_destroy (see event.c);
 * on x86 and for relaxed uses it is a plain load. */
static inline uint32_t evrt__obj_gen(struct evrt__obj *o) {
  return (uint32_t)(atomic_load(&o->hw) >> 32);
}
static inline bool evrt__obj_live(struct evrt__obj *o) {
  /* acquire: a caller that finds the slot live sees its initialization */
  return (atomic_load_explicit(&o->hw, memory_order_acquire) >> 32) & 1u;
}

/* The per-process handle key (handle.c): its generation half is even, so
 * NULL (raw = the key) names an even, never live, generation. */
extern uint64_t evrt__hkey;
static inline uint64_t evrt__raw(uintptr_t h) { return (uint64_t)h ^ evrt__hkey; }
static inline uintptr_t evrt__pub(uint64_t raw) {
  return (uintptr_t)(raw ^ evrt__hkey);
}
/* The last live generation a slot gets: a slot whose incarnation of this
 * generation dies is retired (its dead word keeps EVRT__GEN_LAST + 1), so
 * generations never wrap around and a stale handle never revalidates. */
#define EVRT__GEN_LAST 0xfffffffdu
static inline bool evrt__dead_retired(uint64_t dead) {
  return (uint32_t)(dead >> 32) > EVRT__GEN_LAST;
}
void evrt__handles_init(void);

/* Per-thread cache of free slots, so that a create/destroy pair on one
 * thread touches no shared free list (the only atomic read-modify-write
 * left is destroy's CAS of the slot word).  Flushed to the table's free
 * stack when the thread exits (handle.c).  Kept small: it is initial-exec
 * TLS, which a dlopen'd libevrt takes from the static TLS surplus. */
#define EVRT__TCACHE 16
struct evrt__tcache {
  struct evrt__table *table; /* set at the first release: destructor armed */
  uint32_t n;
  /* The handle each cached slot will get next (its slot and the
   * generation after its dead one): the slot is found from it, and create
   * need not read the slot to make the handle. */
  uint64_t next[EVRT__TCACHE];
};
extern EVRT_TLS struct evrt__tcache evrt__tcaches[2]; /* by tag - 1 */

struct evrt__table {
  _Atomic(char *) chunks[EVRT__MAX_CHUNKS]; /* first: indexed with no offset */
  size_t obj_size;
  unsigned tag;
  /* Called on each slot of a new chunk: the state a dead slot must be in
   * (events: device -1); NULL if all zero will do. */
  void (*init_slot)(struct evrt__obj *o);
  /* Treiber stack of free slots: low 32 bits index+1, high 32 an ABA tag. */
  atomic_uint_least64_t free_top;
  atomic_uint next_unused; /* slots never handed out start here */
  pthread_mutex_t grow_lock;
};

void evrt__table_init(struct evrt__table *t, size_t obj_size, unsigned tag,
                      void (*init_slot)(struct evrt__obj *o));
/* A dead slot (in the state its last incarnation, or init_slot, left it):
 * the caller initializes what differs and publishes it.  Takes from this
 * thread's cache first. */
evrt_status_t evrt__table_alloc(struct evrt__table *t, struct evrt__obj **obj);
/* Return a dead slot to the table (this thread's cache first). */
void evrt__table_release(struct evrt__table *t, struct evrt__obj *o);

/* Put a dead slot in this thread's cache; false if it is full or not armed
 * yet (then evrt__table_release). */
static inline bool evrt__table_give_cached(unsigned tag, uint64_t next) {
  struct evrt__tcache *c = &evrt__tcaches[tag - 1];
  uint32_t n = c->n;
  if (EVRT_UNLIKELY(!c->table || n >= EVRT__TCACHE))
    return false;
  c->next[n] = next;
  c->n = n + 1;
  return true;
}

/* The word that follows h in its slot: the dead word after a live handle,
 * or (with the low half added) the next live handle after a dead word. */
static inline uint64_t evrt__dead_of(uint64_t h) {
  return ((h >> 32) + 1) << 32 & 0xffffffff00000000u;
}
/* The handle that follows dead word `dead` in the slot whose live low half
 * is `low`. */
static inline uintptr_t evrt__live_after(uint64_t dead, uint32_t low) {
  return (uintptr_t)(evrt__dead_of(dead) | low);
}
/* The handle a dead slot's next incarnation gets. */
static inline uintptr_t evrt__table_next_handle(struct evrt__obj *o) {
  return evrt__live_after(atomic_load_explicit(&o->hw, memory_order_relaxed),
                          o->hlow);
}
/* Make a dead slot live as h (= evrt__table_next_handle, after
 * initializing the object).  Only the thread that took the slot from the
 * free list writes the word of a dead slot, so this is a plain store, not a
 * RMW.  release: a lookup that sees the new handle sees the initialized
 * object (pairs with the acquire in evrt__table_lookup). */
static inline void evrt__table_publish_as(struct evrt__obj *o, uintptr_t h) {
  atomic_store_explicit(&o->hw, (uint64_t)h, memory_order_release);
}
static inline uintptr_t evrt__table_publish(struct evrt__obj *o) {
  uintptr_t h = evrt__table_next_handle(o);
  evrt__table_publish_as(o, h);
  return h;
}
/* Make a live slot dead: its handles fail from now on.  The caller holds
 * the object's lock and checked the handle under it, so it is the only
 * writer of hw (streams).  Events use evrt__table_kill_handle instead. */
static inline void evrt__table_kill(struct evrt__obj *o) {
  uint64_t h = atomic_load_explicit(&o->hw, memory_order_relaxed);
  atomic_store_explicit(&o->hw, evrt__dead_of(h), memory_order_release);
}
/* Make the incarnation named by raw handle r dead if it is live: true for
 * exactly one of any number of racing callers with the same r.  seq_cst:
 * the first half of a Dekker pair (see evrt_event_destroy). */
static inline bool evrt__table_kill_handle(struct evrt__obj *o, uint64_t r) {
  uint64_t want = r;
  return atomic_compare_exchange_strong(&o->hw, &want, evrt__dead_of(r));
}
/* The (public) handle of a live object. */
static inline uintptr_t evrt__handle_of(const struct evrt__table *t,
                                        struct evrt__obj *o) {
  (void)t;
  return evrt__pub(atomic_load_explicit(&o->hw, memory_order_relaxed));
}
/* The slot at index with a runtime or (inlined, constant) slot size. */
static inline struct evrt__obj *evrt__table_at_sized(struct evrt__table *t,
                                                     uint32_t index,
                                                     size_t size) {
  /* acquire: pairs with the release store of a new chunk in grow */
  char *c = atomic_load_explicit(&t->chunks[index >> EVRT__CHUNK_SHIFT],
                                 memory_order_acquire);
  if (EVRT_UNLIKELY(!c))
    return NULL;
  return (struct evrt__obj *)(c + (size_t)(index & (EVRT__CHUNK_SIZE - 1)) *
                                      size);
}
/* The slot at an index handed out before (its chunk exists). */
static inline struct evrt__obj *
evrt__table_at_known(struct evrt__table *t, uint32_t index, size_t size) {
  /* acquire: as in evrt__table_at_sized (the chunk is ours to read) */
  char *c = atomic_load_explicit(&t->chunks[index >> EVRT__CHUNK_SHIFT],
                                 memory_order_acquire);
  return (struct evrt__obj *)(c + (size_t)(index & (EVRT__CHUNK_SIZE - 1)) *
                                      size);
}
static inline struct evrt__obj *evrt__table_at(struct evrt__table *t,
                                               uint32_t index) {
  return evrt__table_at_sized(t, index, t->obj_size);
}
/* The slot a raw handle names, live or not; NULL if out of range.  Index 0
 * (a zero low half) wraps to 0xffffffff and fails the range check. */
static inline struct evrt__obj *evrt__table_slot(struct evrt__table *t,
                                                 uint64_t r, size_t size) {
  uint32_t idx = ((uint32_t)r >> 2) - 1u;
  if (EVRT_UNLIKELY(idx >= EVRT__MAX_SLOTS))
    return NULL;
  return evrt__table_at_sized(t, idx, size);
}
/* Validate a handle: the object if it is live with that generation.  One
 * compare covers tag, index and generation (a live slot's hw is its
 * handle; a dead one's can match no handle that passed the range check). */
static inline struct evrt__obj *
evrt__table_lookup_sized(struct evrt__table *t, uintptr_t h, size_t size) {
  uint64_t r = evrt__raw(h);
  struct evrt__obj *o = evrt__table_slot(t, r, size);
  /* acquire: pairs with the release in evrt__table_publish, so the
   * object's initialization is visible to the caller */
  if (EVRT_UNLIKELY(!o || atomic_load_explicit(&o->hw, memory_order_acquire) !=
                              r))
    return NULL;
  return o;
}
static inline struct evrt__obj *evrt__table_lookup(struct evrt__table *t,
                                                   uintptr_t h) {
  return evrt__table_lookup_sized(t, h, t->obj_size);
}

#endif
