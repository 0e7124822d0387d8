/*
 * handle.c - type-stable object slots and validated handles.
 *
 * A raw handle is (generation << 32 | (index + 1) << 2 | type tag); the
 * value callers see is the raw handle XOR a per-process key (evrt__hkey),
 * so that handle values are unpredictable from one process to the next.
 * The slot's generation is odd while the object lives and is bumped at
 * create and at destroy, so stale, double-destroyed and forged handles fail
 * validation; a slot whose last generation (EVRT__GEN_LAST) dies is retired
 * instead of wrapping around to generation 1, so a stale handle never
 * becomes valid again (one slot of 64 or 128 bytes lost per 2^31 cycles of
 * it).  The slot stores its live raw handle whole (evrt__obj.hw), so
 * validation is a range check and one compare.
 * Slot memory is allocated in chunks that are never freed while the library
 * is loaded: pending work items may keep a pointer to a destroyed object and
 * read it; they check the generation under the object's lock before writing.
 */
#include "internal.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Written once, at init (under the init lock, before the release store
 * that publishes the library state), read-only afterwards. */
uint64_t evrt__hkey;

void evrt__handles_init(void) {
  uint64_t k = 0;
  if (getrandom(&k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
    /* No entropy (early boot, seccomp): still differ between processes. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    k = ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^
         (uint64_t)getpid() << 16 ^ (uint64_t)(uintptr_t)&k) *
        0x9e3779b97f4a7c15ull;
  }
  /* An even generation half: NULL (raw = key) is never a live handle. */
  evrt__hkey = k & ~(1ull << 32);
}

void evrt__table_init(struct evrt__table *t, size_t obj_size, unsigned tag,
                      void (*init_slot)(struct evrt__obj *o)) {
  memset(t, 0, sizeof *t);
  t->obj_size = (obj_size + 63) & ~(size_t)63; /* = EVRT__SLOT_SIZE */
  t->tag = tag;
  t->init_slot = init_slot;
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
    /* 64 bytes more, to start the slots on a cache line (calloc gives 16;
     * chunks are never freed, so the unaligned start need not be kept). */
    char *mem = evrt__calloc(1, (size_t)EVRT__CHUNK_SIZE * t->obj_size + 64);
    if (!mem) {
      st = evrt__fail(EVRT_ERROR_OUT_OF_MEMORY, "cannot grow handle table");
    } else {
      mem = (char *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
      for (uint32_t i = 0; i < EVRT__CHUNK_SIZE; i++) {
        struct evrt__obj *o = (struct evrt__obj *)(mem + (size_t)i * t->obj_size);
        /* hw stays 0: dead, generation 0 */
        o->hlow = (((c << EVRT__CHUNK_SHIFT) + i + 1) << 2) | t->tag;
        if (t->init_slot)
          t->init_slot(o);
      }
      /* release: lookups that see the chunk see its initialized slots */
      atomic_store_explicit(&t->chunks[c], mem, memory_order_release);
    }
  }
  pthread_mutex_unlock(&t->grow_lock);
  return st;
}

/* The per-thread caches of free slots (evrt_event_create takes from its
 * own inline, evrt__table_give_cached gives, without leaving the thread). */
EVRT_TLS struct evrt__tcache evrt__tcaches[2];
static pthread_key_t tcache_key;
static pthread_once_t tcache_once = PTHREAD_ONCE_INIT;

static void global_push(struct evrt__table *t, struct evrt__obj *o);

static struct evrt__obj *cached_slot(struct evrt__table *t, uint64_t next) {
  return evrt__table_at_known(t, ((uint32_t)next >> 2) - 1, t->obj_size);
}

static void tcache_flush(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    struct evrt__tcache *c = &evrt__tcaches[i];
    while (c->n)
      global_push(c->table, cached_slot(c->table, c->next[--c->n]));
  }
}
static void tcache_key_make(void) { pthread_key_create(&tcache_key, tcache_flush); }

evrt_status_t evrt__table_alloc(struct evrt__table *t, struct evrt__obj **out) {
  struct evrt__tcache *c = &evrt__tcaches[t->tag - 1];
  /* (graphs have no thread cache: they are not made in hot loops) */
  if (EVRT_LIKELY(t->tag != EVRT__TAG_GRAPH && c->n)) {
    *out = cached_slot(t, c->next[--c->n]);
    return EVRT_SUCCESS;
  }
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
  *out = o;
  return EVRT_SUCCESS;
}

static void global_push(struct evrt__table *t, struct evrt__obj *o) {
  uint64_t top = atomic_load_explicit(&t->free_top, memory_order_relaxed);
  do {
    atomic_store_explicit(&o->next_free, (uint32_t)top, memory_order_relaxed);
    /* release: publishes next_free (and the dead object) to the popper */
  } while (!atomic_compare_exchange_weak_explicit(
      &t->free_top, &top, (((top >> 32) + 1) << 32) | (evrt__obj_index(o) + 1),
      memory_order_release, memory_order_relaxed));
}

void evrt__table_release(struct evrt__table *t, struct evrt__obj *o) {
  /* Its last generation died: retire the slot (never handed out again) */
  if (EVRT_UNLIKELY(evrt__dead_retired(
          atomic_load_explicit(&o->hw, memory_order_relaxed))))
    return;
  if (t->tag == EVRT__TAG_GRAPH) {
    global_push(t, o);
    return;
  }
  struct evrt__tcache *c = &evrt__tcaches[t->tag - 1];
  if (EVRT_UNLIKELY(!c->table)) {
    pthread_once(&tcache_once, tcache_key_make);
    /* any non-NULL value makes the destructor run at thread exit */
    pthread_setspecific(tcache_key, c);
    c->table = t;
  }
  if (EVRT_LIKELY(c->n < EVRT__TCACHE)) {
    c->next[c->n++] = evrt__table_next_handle(o);
    return;
  }
  global_push(t, o);
}

#ifdef EVRT_TEST_HOOKS
/* Test hook (tests/handle_generations.c, linked with evrt_static): give the
 * live object named by h the generation gen (odd), as if its slot had been
 * cycled that often, and return its new handle (0 if h is not live or gen
 * is even).  No other call may use the object meanwhile. */
uintptr_t evrt__test_set_generation(uintptr_t h, uint32_t gen);
uintptr_t evrt__test_set_generation(uintptr_t h, uint32_t gen) {
  uint64_t r = evrt__raw(h);
  struct evrt__table *t = (r & 3u) == EVRT__TAG_STREAM ? &evrt__streams
                                                        : &evrt__events;
  struct evrt__obj *o = evrt__table_lookup(t, h);
  if (!o || !(gen & 1u))
    return 0;
  uint64_t nr = (uint64_t)gen << 32 | (uint32_t)r;
  atomic_store_explicit(&o->hw, nr, memory_order_release);
  return evrt__pub(nr);
}
#endif
