/*
 * ipc_ring.c - the generations of an interprocess event, in its shared
 * segment, claimed and completed by any process without a lock.
 *
 * Words.  head and every ring slot hold gen << 12 | recorder << 1 | done.
 * `recorder` indexes the recorders' table, whose entries name processes by
 * pid and start time (so a reused pid is not taken for the process that
 * died).  Generation g lives in slot g % 2048.
 *
 * Claim (a record, any process).  Read head (generation r); make sure slot
 * r % 2048 holds r ("help", below); check that slot (r + 1) % 2048 may be
 * reused: its generation is done, or its recorder is dead (else the ring is
 * full: EVRT_ERROR_EVENT_LIMIT, the record changes nothing); then one CAS
 * moves head from that word to (r + 1, me).  The winner fills its slot
 * with (r + 1, me, pending); a loser retries (someone else progressed: the
 * loop is lock-free), backing off.
 *
 * Help.  Between its CAS and its fill a claimer may stop or die.  Whoever
 * reads head (the next claimer, every query, synchronize and stream wait)
 * first fills head's slot itself if it still holds an older generation:
 * one CAS from that older word to head's word, so exactly one of the
 * claimer and its helpers fills it, with the same value.  Invariant: when
 * head holds generation h, the slots of every generation below h are filled
 * (or reused later), and a reader that took g from head sees slot g at g or
 * beyond.  A generation's slot therefore always names its recorder, and no
 * process ever waits on another to make progress in the protocol: a dead or
 * stopped claimer stops nobody.  (A former design took a lock in the
 * segment that stored its owner's pid: a holder stopped with SIGSTOP, or
 * dead with its pid reused, made the others spin for ever.)
 *
 * Completion.  The recorder's item CASes its slot's word to done, bumps the
 * shared futex word `seq` and wakes the sleepers if `nwaiters` says there
 * are any (the Dekker pair: a waiter increments nwaiters then re-reads the
 * slot; the completer writes the slot then reads nwaiters; all seq_cst).
 * A slot is reused only after it is done or its recorder died, so a waiter
 * bound to g that finds a newer generation in its slot knows g ended.
 *
 * Liveness.  A pending generation's recorder is checked (/proc/<pid>/stat:
 * pid and start time, not a zombie) by waiters every 50 ms
 * (EVRT__IPC_PEER_CHECK_NS): dead, the waiter gets EVRT_ERROR_PEER_LOST;
 * alive but stopped (SIGSTOP), the waiter keeps sleeping on the futex word
 * until the recorder goes on, dies, or the waiter's timeout ends.
 *
 * Every access to the segment's words is seq_cst (they are few, and the
 * pairs above are easiest to state in one total order), except the
 * claimer's own fill of its slot, a release store (own_fill says why).
 */
#include "ipc.h"

#include <limits.h>

#define PID_MASK ((1ull << EVRT__IPC_PID_BITS) - 1)

static uint64_t my_id(void) {
  return (evrt__ipc_my_start << EVRT__IPC_PID_BITS) |
         ((uint64_t)evrt__ipc_my_pid & PID_MASK);
}

static bool id_alive(uint64_t id) {
  if (!id)
    return false;
  return evrt__ipc_alive((int)(id & PID_MASK), id >> EVRT__IPC_PID_BITS);
}

static bool recorder_alive(struct evrt__ipc_shm *m, unsigned rec) {
  if (rec == 0 || rec > EVRT__IPC_RECORDERS)
    return false; /* not a recorder this library writes */
  return id_alive(
      atomic_load_explicit(&m->recorder[rec - 1], memory_order_seq_cst));
}

/* Does a pending generation name recorder rec?  head first: a claim whose
 * slot is not filled yet is pending too, and once head has moved past it
 * the slot is filled, so the scan below sees it. */
static bool has_pending(struct evrt__ipc_shm *m, unsigned rec) {
  uint64_t h = atomic_load_explicit(&m->head, memory_order_seq_cst);
  if (h && evrt__ipc_rec(h) == rec)
    return true;
  for (unsigned i = 0; i < EVRT__IPC_RING; i++) {
    uint64_t w = atomic_load_explicit(&m->ring[i], memory_order_seq_cst);
    if (w && !(w & 1) && evrt__ipc_rec(w) == rec)
      return true;
  }
  return false;
}

unsigned evrt__ipc_recorder(struct evrt__ipc_map *map) {
  unsigned me = atomic_load_explicit(&map->me, memory_order_relaxed);
  if (EVRT_LIKELY(me))
    return me;
  evrt__ipc_init_self();
  struct evrt__ipc_shm *m = map->shm;
  uint64_t id = my_id();
  /* Already registered (through another map of the segment)? */
  for (unsigned i = 0; !me && i < EVRT__IPC_RECORDERS; i++)
    if (atomic_load_explicit(&m->recorder[i], memory_order_seq_cst) == id)
      me = i + 1;
  for (unsigned i = 0; !me && i < EVRT__IPC_RECORDERS; i++) {
    uint64_t z = 0;
    if (atomic_compare_exchange_strong_explicit(&m->recorder[i], &z, id,
                                                memory_order_seq_cst,
                                                memory_order_seq_cst))
      me = i + 1;
  }
  /* Full: take over the entry of a dead process that no pending generation
   * names.  Its process cannot add one, and others only remove them, so
   * the check stays true until the CAS. */
  for (unsigned i = 0; !me && i < EVRT__IPC_RECORDERS; i++) {
    uint64_t v = atomic_load_explicit(&m->recorder[i], memory_order_seq_cst);
    if (v != id && !id_alive(v) && !has_pending(m, i + 1) &&
        atomic_compare_exchange_strong_explicit(&m->recorder[i], &v, id,
                                                memory_order_seq_cst,
                                                memory_order_seq_cst))
      me = i + 1;
  }
  if (me)
    atomic_store_explicit(&map->me, me, memory_order_relaxed);
  return me;
}

/* Make slot gen(w) hold w (pending) unless it holds that generation or a
 * newer one already. */
static void fill(struct evrt__ipc_shm *m, uint64_t w) {
  uint64_t g = evrt__ipc_gen(w);
  _Atomic uint64_t *sl = &m->ring[g % EVRT__IPC_RING];
  uint64_t old = atomic_load_explicit(sl, memory_order_seq_cst);
  while (evrt__ipc_gen(old) < g &&
         !atomic_compare_exchange_weak_explicit(
             sl, &old, w, memory_order_seq_cst, memory_order_seq_cst)) {
  }
}

uint64_t evrt__ipc_latest(struct evrt__ipc_shm *m) {
  uint64_t h = atomic_load_explicit(&m->head, memory_order_seq_cst);
  if (h)
    fill(m, h); /* help a claimer that has not filled its slot yet */
  return evrt__ipc_gen(h);
}

enum claim { CLAIMED, RING_FULL, LOST_RACE, NEEDS_CHECK };

/* One attempt at claiming the next generation for `me`: CLAIMED (head
 * moved to *out), RING_FULL (its slot holds a pending generation of a live
 * recorder), LOST_RACE (another claim won: retry), or, without may_check,
 * NEEDS_CHECK (the slot is pending and telling whether its recorder lives
 * takes a read of /proc). */
static enum claim claim_step(struct evrt__ipc_shm *m, unsigned me,
                             bool may_check, uint64_t *out) {
  uint64_t h = atomic_load_explicit(&m->head, memory_order_seq_cst);
  if (h)
    fill(m, h);
  uint64_t g = evrt__ipc_gen(h) + 1;
  uint64_t w =
      atomic_load_explicit(&m->ring[g % EVRT__IPC_RING], memory_order_seq_cst);
  /* The slot holds generation g - RING (or older, or nothing).  Reused
   * while pending it would end the waits bound to that generation: a clear
   * error instead (a blocking record could wait on work queued behind
   * it). */
  if (w && !(w & 1)) {
    if (!may_check)
      return NEEDS_CHECK;
    if (recorder_alive(m, evrt__ipc_rec(w)))
      return RING_FULL;
  }
  uint64_t nw = EVRT__IPC_WORD(g, me);
  if (!atomic_compare_exchange_strong_explicit(
          &m->head, &h, nw, memory_order_seq_cst, memory_order_seq_cst))
    return LOST_RACE;
  *out = nw;
  return CLAIMED;
}

/* The claimer's own fill of its slot.  Release is enough: until this store
 * lands, a reader that took g from head fills the slot itself with the
 * same word (fill's CAS), and no other write can reach the slot before g
 * is done, which only this process does, after this store. */
static void own_fill(struct evrt__ipc_shm *m, uint64_t w) {
  atomic_store_explicit(&m->ring[evrt__ipc_gen(w) % EVRT__IPC_RING], w,
                        memory_order_release);
}

static uint64_t claim_head(struct evrt__ipc_shm *m, unsigned me) {
  uint64_t w = 0;
  /* A lost CAS: another process or thread progressed, so retry soon, but
   * give the core away after a while (2 cores shared by many: a busy peer
   * may need this one).  No lock is held here. */
  struct evrt__backoff b = {0};
  for (;;) {
    enum claim c = claim_step(m, me, true, &w);
    if (c == CLAIMED)
      return w;
    if (c == RING_FULL)
      return 0;
    evrt__backoff(&b);
  }
}

uint64_t evrt__ipc_claim_head(struct evrt__ipc_shm *m, unsigned me) {
  return evrt__ipc_gen(claim_head(m, me));
}

uint64_t evrt__ipc_claim(struct evrt__ipc_shm *m, unsigned me) {
  uint64_t w = claim_head(m, me);
  if (w)
    own_fill(m, w);
  return evrt__ipc_gen(w);
}

uint64_t evrt__ipc_claim_once(struct evrt__ipc_shm *m, unsigned me) {
  uint64_t w = 0;
  if (claim_step(m, me, false, &w) != CLAIMED)
    return 0;
  own_fill(m, w);
  return evrt__ipc_gen(w);
}

bool evrt__ipc_mark_done(struct evrt__ipc_shm *m, uint64_t g) {
  _Atomic uint64_t *sl = &m->ring[g % EVRT__IPC_RING];
  uint64_t w = atomic_load_explicit(sl, memory_order_seq_cst);
  /* seq_cst: pairs with the waiter's nwaiters increment (see top).  Only
   * the recorder sets done, and helpers write older slots only, so the
   * word can have changed only if the slot moved on (g's recorder was
   * taken for dead): then there is nothing to mark. */
  if (evrt__ipc_gen(w) == g && !(w & 1))
    atomic_compare_exchange_strong_explicit(sl, &w, w | 1, memory_order_seq_cst,
                                            memory_order_seq_cst);
  atomic_fetch_add_explicit(&m->seq, 1, memory_order_seq_cst);
  return atomic_load_explicit(&m->nwaiters, memory_order_seq_cst) != 0;
}

void evrt__ipc_wake(struct evrt__ipc_shm *m) {
  evrt__futex_wake(&m->seq, INT_MAX, 1);
}

void evrt__ipc_complete(struct evrt__ipc_shm *m, uint64_t g) {
  if (evrt__ipc_mark_done(m, g))
    evrt__ipc_wake(m);
}

int evrt__ipc_gen_state(struct evrt__ipc_shm *m, uint64_t g, bool check_peer) {
  if (g == 0)
    return 1;
  uint64_t w =
      atomic_load_explicit(&m->ring[g % EVRT__IPC_RING], memory_order_seq_cst);
  if (evrt__ipc_gen(w) != g || (w & 1))
    return 1; /* done, or the slot moved on (only after g ended) */
  if (check_peer && !recorder_alive(m, evrt__ipc_rec(w)))
    return -1;
  return 0;
}
