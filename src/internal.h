/*
 * internal.h - core data structures shared by src/, src/cpu/ and src/unix/.
 *
 * Lock order (the only nestings that exist; every file that takes two locks
 * repeats the part it uses):
 *
 *     event.lock  ->  stream.plock  ->  pool.lock
 *     timer.lock  (leaf: nothing is taken while holding it)
 *     stream.wlock (leaf: waiters found under it are resumed after release)
 *     stream.flock, value bucket locks (leaves: failure.c, value.c)
 *
 * No user code (host functions) ever runs with any of these held.
 *
 * Memory model summary (details at each atomic):
 *  - stream.done_seq is the completion counter of a stream: item k is done
 *    when done_seq >= k.  It only grows, across stream incarnations too (a
 *    recycled stream slot keeps counting), so a generation (stream, target)
 *    stays valid forever.  It is stored seq_cst by the worker and paired with
 *    a seq_cst read of stream.wake_at (the Dekker pair with waiters, which
 *    lower wake_at to their target and then re-read done_seq).
 *  - event generation fields are published under a seqlock (event.lock);
 *    readers retry on a torn read and never write.
 *  - objects live in type-stable slots (handle.c): memory of a destroyed
 *    object is recycled, never returned to malloc, so a stale pointer held by
 *    a pending item may read it safely and checks the slot generation under
 *    the object's lock before writing.
 */
#ifndef EVRT_INTERNAL_H
#define EVRT_INTERNAL_H

#include "evrt.h"
#include "trace.h"
#include "check/check.h" /* EVRT_CHECK hooks */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hot thread-locals use the initial-exec TLS model: no __tls_get_addr call
 * per access in a shared library.  They are few and small (well under the
 * static TLS surplus glibc keeps for libraries loaded with dlopen, such as
 * the Python extension); the 256-byte error message stays general-dynamic. */
#ifdef EVRT_TLS_DYNAMIC /* core compiled into a dlopen'd module */
#define EVRT_TLS _Thread_local
#else
#define EVRT_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#endif

/* Prefetch a line the caller will write (an atomic store or CAS): on x86
 * __builtin_prefetch(p, 1) is a read prefetch unless the whole library is
 * built for PREFETCHW, so the line arrives shared and the write still waits
 * for the other core to give it up; for a serializing write (xchg, lock
 * cmpxchg) that wait stalls the worker.  PREFETCHW fetches it owned.  The
 * CPU is asked once (evrt__cpu_features_init, src/unix/os.c). */
extern bool evrt__has_prefetchw;
static inline void evrt__prefetch_w(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
  if (evrt__has_prefetchw) {
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
    return;
  }
#endif
  __builtin_prefetch(p, 1, 3);
}
void evrt__cpu_features_init(void);
/* One past the highest user address this machine can map (os.c, set at
 * init): a memory range ending beyond it is impossible. */
extern uintptr_t evrt__user_va_end;

#define EVRT_LIKELY(x) __builtin_expect(!!(x), 1)
#define EVRT_UNLIKELY(x) __builtin_expect(!!(x), 0)

_Static_assert(sizeof(void *) == 8, "evrt handles need 64-bit pointers");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the futex word is the low half of done_seq");

/* ------------------------------------------------------------------ os */
/* src/unix/os.c */
int evrt__futex_wait(atomic_uint *addr, uint32_t expected, int64_t timeout_ns,
                     int shared);
void evrt__futex_wake(atomic_uint *addr, int count, int shared);
uint64_t evrt__now_ns(void);
/* The deadline ns after now, saturated: a huge delay or timeout (up to
 * UINT64_MAX) means "never", not a wrap to the past. */
static inline uint64_t evrt__deadline_after(uint64_t now, uint64_t ns) {
  return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}
int evrt__ncpu(void);
void evrt__sleep_ns(uint64_t ns);
/* A seq_cst fence, out of line (src/unix/os.c): gcc's ThreadSanitizer build
 * refuses atomic_thread_fence once it is inlined into a caller
 * (-Werror=tsan), and TSan does not model fences anyway.  For cold paths;
 * exec.c's settle keeps its own inline fence. */
void evrt__fence_seq_cst(void);
/* An integer environment variable in [lo, hi]; dflt if unset.  A value
 * that is not such an integer gives dflt and a warning on stderr, once per
 * variable, naming the variable, the value and the value used. */
long evrt__env_long(const char *name, long dflt, long lo, long hi);
static inline void evrt__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}
/*
 * Back-off, for every wait of the core on another thread's short critical
 * section (spin locks, the event seqlock, wlock, destroy's wait for pins):
 * the caller re-checks what it waits for between calls.  64 pauses (a
 * holder on another CPU is about to finish), then sched_yield (a holder
 * preempted on this CPU runs), then, past EVRT__BACKOFF_YIELDS rounds, a
 * 50 us sleep per round (a holder that is not running at all, stopped or
 * starved, costs the waiter nothing).  The waits that may last long
 * (host synchronize, idle workers) spin for a bounded time and then park
 * on a futex instead (wait.c, pool.c).
 *
 * No system call is ever made while holding one of these spin-locked
 * sections (a holder in a system call makes every waiter spin): work that
 * needs one (scheduling a stream, malloc, free) is collected and done after
 * the unlock.
 */
/* The white-box build (evrt_static, EVRT_TEST_HOOKS) counts the spin
 * locks each thread holds and records every system call made by the core
 * while one is held (evrt__test_spin_violations); the shared library
 * compiles these to nothing. */
#ifdef EVRT_TEST_HOOKS
extern EVRT_TLS unsigned evrt__tls_spins_held;
void evrt__spin_violation(const char *what);
#define EVRT__SPIN_HELD(d) ((void)(evrt__tls_spins_held += (unsigned)(d)))
#define EVRT__NO_SPIN_HELD(what)                                               \
  do {                                                                         \
    if (EVRT_UNLIKELY(evrt__tls_spins_held))                                   \
      evrt__spin_violation(what);                                              \
  } while (0)
#else
#define EVRT__SPIN_HELD(d) ((void)0)
#define EVRT__NO_SPIN_HELD(what) ((void)0)
#endif
#define EVRT__BACKOFF_PAUSES 64u
#define EVRT__BACKOFF_YIELDS 1000u
struct evrt__backoff {
  unsigned n;
};
void evrt__backoff_slow(struct evrt__backoff *b);
static inline void evrt__backoff(struct evrt__backoff *b) {
  if (EVRT_LIKELY(b->n < EVRT__BACKOFF_PAUSES)) {
    b->n++;
    evrt__cpu_relax();
    return;
  }
  evrt__backoff_slow(b);
}

/* Tiny lock for short critical sections (spin with evrt__backoff). */
typedef struct { atomic_uint v; } evrt__spin_t;
void evrt__spin_lock_slow(evrt__spin_t *l);
static inline void evrt__spin_lock(evrt__spin_t *l) {
  unsigned z = 0;
  /* acquire: the critical section must not float above the lock */
  EVRT__SPIN_HELD(1);
  if (EVRT_LIKELY(atomic_compare_exchange_weak_explicit(
          &l->v, &z, 1, memory_order_acquire, memory_order_relaxed)))
    return;
  evrt__spin_lock_slow(l);
}
static inline void evrt__spin_unlock(evrt__spin_t *l) {
  atomic_store_explicit(&l->v, 0, memory_order_release);
  EVRT__SPIN_HELD(-1);
}

/* --------------------------------------------------------------- errors */
/* src/error.c: record the detail for evrt_last_error_message(); returns st. */
evrt_status_t evrt__fail(evrt_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold));

/* --------------------------------------------------------------- alloc */
/* src/alloc.c: every runtime allocation goes through these, so tests can make
 * the n-th allocation fail (evrt__test_fail_alloc_at). */
void *evrt__malloc(size_t size);
void *evrt__calloc(size_t n, size_t size);
void evrt__free(void *p);
/* Test hook, compiled only into the test-only static core (evrt_static,
 * EVRT_TEST_HOOKS), never into libevrt.so: the n-th following allocation
 * fails (n >= 1); 0 disarms.  Returns the number of allocations made since
 * the last call. */
#ifdef EVRT_TEST_HOOKS
long evrt__test_fail_alloc_at(long n);
#endif

/* ----------------------------------------------------------- lifecycle */
/* UNINIT -> INITIALIZING (one thread's CAS) -> RUNNING, or back to UNINIT
 * if init failed; RUNNING -> SHUTDOWN; in a forked child INITIALIZING or
 * RUNNING -> FORKED (src/init.c). */
enum {
  EVRT__UNINIT = 0,
  EVRT__RUNNING,
  EVRT__SHUTDOWN,
  EVRT__FORKED,
  EVRT__INITIALIZING
};
extern atomic_int evrt__lib_state;
evrt_status_t evrt__init_slow(void);
/* The fast test of evrt__ready(): false sends the caller to its slow path,
 * which calls evrt__ready() for the status. */
static inline bool evrt__running(void) {
  /* acquire: as in evrt__ready */
  return atomic_load_explicit(&evrt__lib_state, memory_order_acquire) ==
         EVRT__RUNNING;
}
static inline evrt_status_t evrt__ready(void) {
  /* acquire: pairs with the release store at the end of initialization, so
   * every global set up by init is visible. */
  if (EVRT_LIKELY(atomic_load_explicit(&evrt__lib_state,
                                       memory_order_acquire) == EVRT__RUNNING))
    return EVRT_SUCCESS;
  return evrt__init_slow();
}

/* evrt_thread_id() inlined (src/init.c): record stores it at every call. */
extern EVRT_TLS uint64_t evrt__tls_thread_id;
uint64_t evrt__thread_id_slow(void);
static inline uint64_t evrt__thread_id(void) {
  uint64_t id = evrt__tls_thread_id;
  return EVRT_LIKELY(id) ? id : evrt__thread_id_slow();
}

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

/* ---------------------------------------------------------------- items */
struct evrt__stream;
struct evrt__event;

enum evrt__dep_kind {
  EVRT__DEP_STREAM = 0,  /* wait until src->done_seq >= target */
  EVRT__DEP_NEXT_RECORD, /* legacy: wait for the event's next record */
  EVRT__DEP_IPC          /* interprocess generation (src/ipc_*.c) */
};

/* Field order: the first cache line holds what the worker running the
 * stream and a notifier resuming it touch (items are 64-byte aligned, see
 * stream.c); recycling links, deadlines and trace fields come after. */
struct evrt__item {
  _Atomic(struct evrt__item *) qnext; /* stream queue link (see stream) */
  uint64_t seq;       /* position in its stream (1-based) */
  struct evrt__stream *owner;
  uint8_t kind;       /* enum evrt__item_kind */
  uint8_t phase;      /* per-kind progress (delay armed, wait registered) */
  uint8_t dep_kind;   /* waits */
  uint8_t failed;     /* wait ended by timeout or peer loss */
  int32_t timer_idx;  /* index in the timer heap, -1 if not armed */
  union {
    struct { evrt_host_fn fn; void *user; } host;
    struct { void *dst; const void *src; size_t n; int value; } mem;
    struct { uint64_t ns; } delay;
    struct {
      /* waits: the bound generation (first line: read by notify) */
      struct evrt__stream *src;
      uint64_t target;
      struct evrt__item *wnext; /* link in src->waiters or ev->nr_waiters */
      atomic_bool unlinked;     /* taken off src->waiters by the notifier */
      uint32_t ev_gen;
      struct evrt__event *ev;
      uint64_t rec_no;
      uint64_t ev_id;
      struct evrt__ipc_map *ipc; /* interprocess record/wait (gen = target) */
    } ev;
    /* graph items (src/graph_exec.c): a launch, or a lane's run of nodes.
     * A launch first waits for the previous launch's end as a stream wait
     * does: its first fields are u.ev's (a common initial sequence: the
     * waiter lists of src/cpu/wait.c read them as u.ev). */
    struct {
      struct evrt__stream *src;
      uint64_t target;
      struct evrt__item *wnext;
      atomic_bool unlinked;
      struct evrt__gexec *x;
      void *binds;   /* launch: its event bindings */
      uint64_t n;    /* launch number */
      uint32_t lane, op;
    } graph;
    /* a host function that may fail (src/failure.c) */
    struct {
      evrt_host_fn_status fn;
      void *user;
      uint64_t thread; /* evrt_thread_id() of the enqueuing thread */
    } task;
    /* stream-ordered values (src/value.c) */
    struct {
      _Atomic(uint64_t) *addr;
      uint64_t value;
      uint32_t flags;          /* EVRT_VALUE_WAIT_* (waits), 0 (writes) */
      struct evrt__item *vnext; /* link in its bucket while parked */
      uint64_t poll_ns;         /* EVRT_VALUE_WAIT_POLL: next poll period */
      uint64_t end;             /* timeout (ns, CLOCK_MONOTONIC), 0 none */
    } val;
  } u;
  struct evrt__item *next;            /* recycle lists */
  uint64_t deadline;  /* delay / wait-timeout deadline (ns), 0 none */
  uint64_t t_start;   /* when the worker first reached it (traces), 0 */
  char label[24];
  void *check; /* EVRT_CHECK: struct evrt__citem (src/check) */
};


/* ------------------------------------------------------------- streams */
/* The scheduling state word (stream.state) belongs to the backend: the cpu
 * backend's states and transitions are in src/cpu/cpu.h. */

/*
 * A stream's queue is a singly linked list with a stub node.  Producers link
 * at the tail under plock (a lock among producers only: the worker never
 * takes it); the worker that owns the stream follows head->qnext without any
 * lock.  Ownership moves with the state word: a producer that finds the
 * stream IDLE CASes it to QUEUED and pushes it to the run queue; the worker
 * gives it up by storing IDLE or PARKED and then re-checking (see exec.c).
 */
/* One cache line per party (slots are 64-byte aligned, handle.c): line 0
 * is written by producers, line 1 by the owning worker and by whoever queues
 * the stream, line 2 at completion; a fan-out that resumes thousands of
 * streams touches lines 1 and 2 of each, a producer streaming items into a
 * running stream never shares a written line with its worker. */
struct evrt__stream {
  struct evrt__obj hdr;
  /* --- producers, under plock */
  evrt__spin_t plock;
  /* Callers that validated the handle under plock and will push without
   * it (evrt__stream_pin): destroy waits for them to leave.  Written
   * under plock; read by destroy after the kill. */
  atomic_uint pins;
  struct evrt__item *tail;  /* last linked item, or &stub */
  struct evrt__item *pfree; /* recycled items ready for reuse */
  /* Stored seq_cst after linking (Dekker pair with the worker going idle,
   * which stores the state and then reads it); read with acquire by
   * record's idle check. */
  atomic_uint_least64_t enq_seq;
  /* Finished items handed back by the worker, taken whole by a producer. */
  _Atomic(struct evrt__item *) returned;
  /* The capture the stream takes part in, or NULL (src/capture.c).  On the
   * producers' line: enqueue tests it where it reads the handle word. */
  _Atomic(struct evrt__capture *) capture;
  /* --- scheduling */
  /* Owned by the backend (cpu: src/cpu/cpu.h, EVRT__ST / EVRT__INC /
   * EVRT__RESUME).  The incarnation grows at
   * every evrt__stream_new, so a CAS made by a thread that last saw an
   * earlier incarnation of the slot fails (no ABA across a free). */
  _Alignas(64) atomic_uint state;
  atomic_bool destroyed;
  /* Stop-on-failure (src/failure.c): set by the worker when a task fails
   * in EVRT_FAILURE_STOP mode, cleared when the error is cleared; while set
   * the worker skips the stream's tasks. */
  atomic_bool skipping;
  atomic_uchar fail_stop; /* EVRT_FAILURE_STOP */
  int priority; /* its sign picks the run-queue ring (pool.c) */
  /* --- the worker that owns the stream */
  /* (16 bits: at most EVRT__RETURN_BATCH + 1 and EVRT__RETURN_CAP plus a
   * batch, exec.c; small, so that the blocked-on record fits this line) */
  uint16_t n_done_local;
  uint16_t n_returned; /* items this owner put in `returned` (an estimate) */
  struct evrt__item *head; /* last consumed item (or &stub) */
  struct evrt__item *done_local;
  struct evrt__item *done_local_tail;
  /* What the stream is blocked on, for the self-deadlock detection of host
   * functions (wait.c): its item at seq blk_at cannot complete before
   * stream blk_src reaches blk_target.  Written (release) by the thread
   * that owns the stream: its worker when a wait without timeout
   * registers, a host function of it blocking in a synchronize.  Valid
   * only while done_seq + 1 == blk_at, so it never needs clearing when
   * the stream moves on (a host function's is cleared when its wait
   * ends: the function runs on). */
  _Atomic(struct evrt__stream *) blk_src;
  atomic_uint_least64_t blk_at;
  atomic_uint_least64_t blk_target;
  /* --- completion */
  _Alignas(64) atomic_uint_least64_t done_seq;
  /* Smallest target of any registered waiter (EVRT__WAKE_NONE: none); the
   * worker calls evrt__stream_notify only when done_seq reaches it, so a
   * host parked on a far target costs no wake-up per completion.  Bit 63
   * (EVRT__WLOCK) is the lock of the waiter lists below, "wlock": a
   * registrar takes it and lowers the target in one CAS (wait.c). */
  atomic_uint_least64_t wake_at;
  /* Parked wait items bound to this stream, in registration order (a
   * fan-out resumes its streams in the order they waited). */
  struct evrt__item *waiters, *waiters_tail;
  struct evrt__hwaiter *hwaiters; /* host threads parked in a wait (wait.c) */
  atomic_uint_least64_t wait_failures;
  /* Failures (src/failure.c).  err_seq: the task whose error is pending (0:
   * none), read with done_seq by queries and synchronizes (same line);
   * abort_seq: tasks up to it that have not started are skipped (the
   * worker loads it before each item, a hit in this line it writes). */
  atomic_uint_least64_t err_seq;
  atomic_uint_least64_t abort_seq;
  /* --- identity */
  /* Atomic because evrt_device_synchronize reads it on slots that may be
   * mid-reuse (a destroyed stream still draining, device.c); everyone else
   * reads it on a stream they hold (a plain mov on x86 either way). */
  _Alignas(64) atomic_int device;
  bool is_default;
  /* Atomic: error and trace paths read it on a handle that a destroy and
   * a create may be recycling meanwhile (a plain mov on x86). */
  atomic_uint_least64_t id;
  char name[64];
  /* The pending error's detail (under flock, a leaf; err_seq says whether
   * there is one). */
  evrt__spin_t flock;
  struct evrt__failrec {
    evrt_status_t status; /* EVRT_ERROR_TASK_FAILED or EVRT_ERROR_ABORTED */
    int32_t code;
    uint64_t seq, thread;
    evrt_host_fn_status fn;
    void *user;
  } fail;
  /* EVRT_CHECK: one per slot, set before the first publish (src/check) */
  _Atomic(struct evrt__cstream *) check;
  struct evrt__item stub;
};


extern struct evrt__table evrt__streams;
extern EVRT_TLS struct evrt__stream *evrt__tls_stream; /* host fn running */
extern EVRT_TLS uint64_t evrt__tls_seq;                /* its seq */

static inline struct evrt__stream *evrt__stream_get(evrt_stream_t h) {
  /* the slot size is a constant: a shift, not a multiply */
  return (struct evrt__stream *)evrt__table_lookup_sized(
      &evrt__streams, (uintptr_t)h, EVRT__SLOT_SIZE(struct evrt__stream));
}
static inline evrt_stream_t evrt__stream_handle(struct evrt__stream *s) {
  return (evrt_stream_t)evrt__handle_of(&evrt__streams, &s->hdr);
}
#define EVRT__WLOCK (1ull << 63)
#define EVRT__WAKE_NONE (EVRT__WLOCK - 1)
/* The smallest registered target (wake_at without its lock bit). */
static inline uint64_t evrt__wake_target(struct evrt__stream *s,
                                         memory_order mo) {
  return atomic_load_explicit(&s->wake_at, mo) & ~EVRT__WLOCK;
}
static inline uint64_t evrt__done(struct evrt__stream *s) {
  return atomic_load_explicit(&s->done_seq, memory_order_acquire);
}

/* Is h the live incarnation of s?  Under plock this is exact (destroy
 * kills the handle under plock); elsewhere it is true at the moment of the
 * load.  Relaxed: callers order it (plock, or an acquire load before it). */
static inline bool evrt__stream_is(struct evrt__stream *s, evrt_stream_t h) {
  return atomic_load_explicit(&s->hdr.hw, memory_order_relaxed) ==
         evrt__raw((uintptr_t)h);
}

/* src/stream.c */
evrt_status_t evrt__stream_new(int device, int priority, bool is_default,
                               struct evrt__stream **out);
/* Allocate an item for s (from its recycle list or malloc) or NULL.  Safe
 * on any incarnation of the slot, dead ones included (the recycle lists
 * are only touched under plock, and items are interchangeable). */
struct evrt__item *evrt__item_new(struct evrt__stream *s);
/* The same from the recycle lists only (no malloc: callable under a spin
 * lock), or NULL. */
struct evrt__item *evrt__item_take(struct evrt__stream *s);
void evrt__item_discard(struct evrt__stream *s, struct evrt__item *it);
/* Free a ->next-linked list of items. */
void evrt__items_free(struct evrt__item *list);
/* Link a filled item if h is still s's live handle (checked under plock,
 * where destroy kills it): its seq; 0 if the stream was destroyed (nothing
 * linked: the caller still owns the item).  A call racing the destroy thus
 * either links before the destroy looks at enq_seq, and its item runs, or
 * links nothing.  The caller then calls evrt__stream_schedule once it holds
 * no spin lock (scheduling may take the pool mutex and wake a worker). */
uint64_t evrt__stream_link_live(struct evrt__stream *s, evrt_stream_t h,
                                struct evrt__item *it);
/* Make s runnable if it is idle with linked work (after a link, no spin
 * lock held; a no-op if nothing is pending). */
void evrt__stream_schedule(struct evrt__stream *s);
/* Hold s alive across a section that pushes with evrt__stream_push without
 * a handle (src/ipc.c): false if h is no longer s's live handle.  Destroy
 * waits for every pin to go (the sections are short and run no user
 * code). */
bool evrt__stream_pin(struct evrt__stream *s, evrt_stream_t h);
void evrt__stream_unpin(struct evrt__stream *s);
/* Link a filled item to a stream the caller has pinned (or that nobody
 * else can name: device_after.c's hidden stream); its seq.  Not scheduled:
 * the caller calls evrt__stream_schedule after its section (src/ipc_proto.c
 * pushes under an event lock). */
uint64_t evrt__stream_push(struct evrt__stream *s, struct evrt__item *it);
/* Append n filled items in order, in one producer-lock round trip (a
 * graph lane's items); returns the seq of the first. */
uint64_t evrt__stream_push_chain(struct evrt__stream *s,
                                 struct evrt__item **v, uint32_t n);
/* Allocate up to n items for s (recycled first); returns how many. */
uint32_t evrt__items_new(struct evrt__stream *s, struct evrt__item **v,
                         uint32_t n);
/* Enqueue a copy of the filled template (kind, union, flags) on s, if h is
 * still its live handle (checked under plock, as every push). */
evrt_status_t evrt__enqueue(struct evrt__stream *s, evrt_stream_t h,
                           const struct evrt__item *tmpl);
/* Free a drained, destroyed stream (called by the worker). */
void evrt__stream_free(struct evrt__stream *s);

/* --------------------------------------------------------------- events */
struct evrt__ipc_map;
struct evrt__event {
  struct evrt__obj hdr;
  /* Seqlock and writer lock: odd while a writer holds it. */
  atomic_uint lock;
  /* Atomic (relaxed): read before the lock by calls whose handle a destroy
   * and a create may be recycling meanwhile; they re-check the handle
   * before acting on what they read. */
  atomic_uint flags;
  atomic_int device;            /* -1 until first record / export */
  /* Latest generation (seqlock): src == 0 means unrecorded. */
  atomic_uintptr_t src;         /* struct evrt__stream * */
  atomic_uint_least64_t target;
  atomic_uint_least64_t rec_no; /* generation number */
  atomic_uint_least64_t ts;     /* ns when the latest record executed, 0 */
  atomic_uint_least64_t rec_thread;
  /* Wait status (under the lock): the waits bound to the latest
   * generation, as (waiting stream, seq of its WAIT item); complete when
   * every such stream has passed that seq.  Workers never write it, so
   * passing a wait costs nothing here (a fan-out of 1,000 streams waiting
   * on one event would otherwise bounce one counter between cores).  Freed
   * at destroy. */
  struct evrt__waitrec *wrec;
  uint32_t nwrec, capwrec;
  bool has_resource;
  atomic_bool imported; /* as flags */
  struct evrt__item *nr_waiters; /* legacy next-record waiters (lock) */
  /* interprocess shared state (src/ipc.h), NULL until first record/export */
  _Atomic(struct evrt__ipc_map *) ipc;
  atomic_uint_least64_t id; /* as flags */
};

struct evrt__waitrec {
  struct evrt__stream *s; /* type-stable; seq counters outlive incarnations */
  uint64_t seq;
};

/* Event slots are a compile-time power of two, so that the hot lookups
 * (query, record, destroy) index with a shift and no load of the size. */
#define EVRT__EVENT_SLOT 128u
_Static_assert(sizeof(struct evrt__event) <= EVRT__EVENT_SLOT,
               "struct evrt__event outgrew its slot");
extern struct evrt__table evrt__events;
static inline struct evrt__event *evrt__event_get(evrt_event_t h) {
  return (struct evrt__event *)evrt__table_lookup_sized(
      &evrt__events, (uintptr_t)h, EVRT__EVENT_SLOT);
}
/* The state every dead event slot is in (table init_slot). */
void evrt__event_init_slot(struct evrt__obj *o);
void evrt__event_lock(struct evrt__event *e);
void evrt__event_unlock(struct evrt__event *e);

/* Called by workers (src/event.c), without any lock held. */
void evrt__event_exec_record(struct evrt__item *it, uint64_t now);
void evrt__event_exec_reset(struct evrt__item *it);
/* Legacy next-record wait reached the head: bind it or queue it on the
 * event.  Returns true if bound (it->u.ev.src/target are set). */
bool evrt__event_bind_next_record(struct evrt__item *it, bool first);
/* A legacy wait queued on its event (phase 2) is skipped (abort, stop):
 * take it off the event's list. */
void evrt__event_unlink_next_record(struct evrt__item *it);

/* ------------------------------------------------------------- backend */
/* src/backend.h: the ops table and its dispatch. */
#include "backend.h"

/* -------------------------------------------------------------- devices */
struct evrt__device {
  struct evrt__stream *def;
  atomic_uint ev_limit;
  atomic_uint ev_used;
};
extern int evrt__ndevices;
extern struct evrt__device *evrt__devices;
extern EVRT_TLS int evrt__tls_device;
evrt_status_t evrt__devices_init(void);
/* A NULL stream handle stands for the calling thread's current device's
 * default stream, as CUDA's stream 0 and ACL's NULL stream do: the stream
 * lookups of the public entry points call this (out of line, so never on
 * their fast path) when the lookup of a NULL handle failed, with the
 * library ready. */
struct evrt__stream *evrt__stream_null_default(void);
bool evrt__event_resource_take(int device);
void evrt__event_resource_give(int device);

/* ------------------------------------------------------------------ ipc */
/* src/ipc_*.c (src/ipc.h lists the files) */
evrt_status_t evrt__ipc_record(struct evrt__event *e, struct evrt__stream *s);
evrt_status_t evrt__ipc_query(struct evrt__event *e);
evrt_status_t evrt__ipc_sync(struct evrt__event *e, int64_t timeout_ns);
evrt_status_t evrt__ipc_wait(struct evrt__event *e, struct evrt__stream *s,
                             int64_t timeout_ns);
void evrt__ipc_close(struct evrt__event *e);
/* Is the interprocess generation of a wait item done?  With check_peer, a
 * dead recorder sets *err = EVRT_ERROR_PEER_LOST. */
bool evrt__ipc_dep_ready(struct evrt__item *it, bool check_peer,
                         evrt_status_t *err);
void evrt__ipc_wait_done(struct evrt__item *it);
evrt_status_t evrt__ipc_watch(struct evrt__item *it);
void evrt__ipc_unwatch(struct evrt__item *it);
void evrt__ipc_exec_record(struct evrt__item *it);
void evrt__ipc_shutdown(void);

/* ------------------------------------------------------------- capture */
/* src/capture.c, src/graph.c, src/graph_exec.c; docs/capture.md.  The core
 * calls these hooks only on their unlikely branch: a stream whose capture
 * field is set, a generation naming evrt__capture_src, or (synchronize)
 * some capture active.  Each returns true when it handled the call (its
 * status in *st); false sends the caller on its ordinary path (the capture
 * ended meanwhile).  They take no lock the caller holds. */
struct evrt__capture;
struct evrt__gexec;
/* The source of every captured generation: an event recorded on a
 * capturing stream has src == &evrt__capture_src (never done, nothing ever
 * runs on it) and target == the capture's id. */
extern struct evrt__stream evrt__capture_src;
/* Active captures, all modes (relaxed: a hint; the hooks lock). */
extern atomic_uint evrt__captures_active;
static inline bool evrt__stream_capturing(struct evrt__stream *s) {
  return atomic_load_explicit(&s->capture, memory_order_relaxed) != NULL;
}
static inline bool evrt__any_capture(void) {
  return atomic_load_explicit(&evrt__captures_active, memory_order_relaxed);
}
static inline bool evrt__captured_src(uintptr_t src) {
  return src == (uintptr_t)&evrt__capture_src;
}
/* enqueue of a host function, copy, fill or delay (tmpl: the item) */
bool evrt__capture_item(struct evrt__stream *s, const struct evrt__item *tmpl,
                        const char *label, evrt_status_t *st);
bool evrt__capture_record(struct evrt__event *e, evrt_event_t eh,
                          struct evrt__stream *s, unsigned flags,
                          evrt_status_t *st);
bool evrt__capture_wait(struct evrt__stream *s, struct evrt__event *e,
                        evrt_event_t eh, unsigned flags, evrt_status_t *st);
bool evrt__capture_reset(struct evrt__event *e, evrt_event_t eh,
                         struct evrt__stream *s, evrt_status_t *st);
/* A stream not capturing waits on a captured generation (capture id, rec_no
 * of the event's incarnation ev_gen): it joins that capture. */
evrt_status_t evrt__capture_fork(struct evrt__stream *s, struct evrt__event *e,
                                 uint32_t ev_gen, uint64_t cap_id,
                                 uint64_t rec_no);
/* Query of a capturing stream; use of a captured event ("queried",
 * "synchronized", ...): the error, and the capture invalidated. */
evrt_status_t evrt__capture_stream_misuse(struct evrt__stream *s,
                                          const char *what);
evrt_status_t evrt__capture_event_misuse(struct evrt__event *e,
                                         const char *what);
/* Synchronize calls while some capture is active: the object's own
 * capture, then the interaction modes. */
bool evrt__capture_sync_stream(struct evrt__stream *s, evrt_status_t *st);
bool evrt__capture_sync_event(struct evrt__event *e, evrt_status_t *st);
bool evrt__capture_sync_device(int device, evrt_status_t *st);
bool evrt__capture_destroy_stream(struct evrt__stream *s, evrt_status_t *st);
/* src/graph_exec.c, called by the worker running the item (exec.c), no
 * lock held: a launch expands into its lanes; a run of nodes executes. */
bool evrt__graph_run_launch(struct evrt__stream *s, struct evrt__item *it);
bool evrt__graph_run_seg(struct evrt__stream *s, struct evrt__item *it);
/* src/event.c: publish the generation (s, target) of the incarnation
 * ev_gen of e, as a record on a stream of `device` would, without
 * enqueuing anything: a graph launch's record nodes (target lies ahead on
 * a lane), a record inside a capture (s = &evrt__capture_src).  Takes the
 * event's resource if asked and one is free.  *rec_no gets its number.
 * EVRT_ERROR_INVALID_HANDLE if the incarnation is gone,
 * EVRT_ERROR_DEVICE_MISMATCH; nothing changed then.  Takes the event
 * lock: call with no lock held but a capture's (capture.c's lock order). */
evrt_status_t evrt__event_publish(struct evrt__event *e, uint32_t ev_gen,
                                  struct evrt__stream *s, int device,
                                  uint64_t target, bool take_resource,
                                  uint64_t *rec_no);
/* ------------------------------------------------------------ failures */
/* src/failure.c.  The thread's last enqueued task (evrt_thread_last_task),
 * stored by every enqueue (stream.c). */
extern EVRT_TLS uint64_t evrt__tls_last_stream_id;
extern EVRT_TLS uint64_t evrt__tls_last_seq;
/* The worker is about to run `it` on s: true if it must be skipped instead
 * (aborted, or s stopped on a failure).  The test is inline (two loads of
 * lines the worker owns); the rest is out of line. */
bool evrt__skip_slow(struct evrt__stream *s, struct evrt__item *it);
static inline bool evrt__skip(struct evrt__stream *s, struct evrt__item *it) {
  /* relaxed: set before the resume (or the enqueue) that makes the worker
   * look at the item, whose release/acquire orders them */
  if (EVRT_LIKELY(atomic_load_explicit(&s->abort_seq, memory_order_relaxed) <
                      it->seq &&
                  !atomic_load_explicit(&s->skipping, memory_order_relaxed)))
    return false;
  return evrt__skip_slow(s, it);
}
/* A host task returned code != 0 (the worker, after it ran). */
void evrt__task_failed(struct evrt__stream *s, struct evrt__item *it,
                       int32_t code);
/* A fresh stream incarnation: no error, continue mode. */
void evrt__failure_reset(struct evrt__stream *s);
/* The error pending on s for work up to target, reported as a failing
 * status with its detail (TLS, evrt_last_task_failure); EVRT_SUCCESS if
 * none.  Any thread. */
evrt_status_t evrt__stream_error(struct evrt__stream *s, uint64_t target);
static inline evrt_status_t evrt__error_check(struct evrt__stream *s,
                                              uint64_t target) {
  /* acquire: pairs with the worker's release of err_seq after filling the
   * record (the record itself is read under flock) */
  uint64_t e = atomic_load_explicit(&s->err_seq, memory_order_acquire);
  if (EVRT_LIKELY(e == 0 || e > target))
    return EVRT_SUCCESS;
  return evrt__stream_error(s, target);
}

/* ---------------------------------------------------------------- values */
/* src/value.c.  evrt__value_armed is set once the first value wait parks
 * (never cleared): until then copies, fills and host functions pay one
 * relaxed load and nothing else. */
extern atomic_bool evrt__value_armed;
bool evrt__value_exec_wait(struct evrt__stream *s, struct evrt__item *it);
void evrt__value_exec_write(struct evrt__item *it);
/* A parked value wait is skipped (abort, stop): take it off its bucket. */
void evrt__value_cancel(struct evrt__item *it);
/* The worker wrote [p, p+n) (copy, fill): wake the waits on words there. */
void evrt__value_written(const void *p, size_t n);
/* A host function returned: re-check the waits that host functions may
 * satisfy. */
void evrt__value_kick(void);

#endif
