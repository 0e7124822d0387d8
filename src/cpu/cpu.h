/*
 * cpu.h - the cpu backend's scheduler: its interface among the files of
 * src/cpu/ (pool.c, exec.c, wait.c, timer.c, backend.c), and of the seq
 * backend (src/seq/), which runs the same scheduler under another pool
 * policy.  Nothing else includes it: the core reaches the scheduler
 * through the ops table (src/backend.h), and tests/layering.sh keeps it so.
 *
 * Lock order: as internal.h (stream.plock -> pool.lock; timer.lock,
 * stream.wlock leaves).
 */
#ifndef EVRT_CPU_H
#define EVRT_CPU_H

#include "internal.h"

/* ------------------------------------------------ the stream state word */
enum evrt__sched_state {
  EVRT__S_IDLE = 0, /* no work, not in the run queue */
  EVRT__S_QUEUED,   /* in the run queue */
  EVRT__S_RUNNING,  /* a worker owns it */
  EVRT__S_PARKED,   /* head item waits (dependency, delay) */
  EVRT__S_DEAD      /* destroyed and drained: being freed */
};
/* State word: (incarnation << 4) | EVRT__RESUME? | enum evrt__sched_state.
 * EVRT__RESUME is set (by CAS) on a RUNNING stream by a resume that its
 * owner has not seen yet; every state change through EVRT__ST_WITH clears
 * it. */
#define EVRT__RESUME 8u
#define EVRT__ST(w) ((w)&7u)
#define EVRT__INC(w) ((w) >> 4)
#define EVRT__ST_WITH(w, st) (((w) & ~15u) | (unsigned)(st))

/*
 * The state machine of stream.state (docs/design.md section 4 has the
 * same table with the race diagrams).  Every write of the word is one of
 * the functions below; each asserts its source state where asserts are on
 * (EVRT__ASSERTS: debug, sanitizer and white-box builds).  Owner = the
 * thread that owns the stream (the worker running it, or whoever made it
 * QUEUED until a worker pops it).
 *
 *   from              to                 by (how)                      function
 *   IDLE/DEAD, inc i  IDLE, inc i+1      creator, slot unpublished     st_new_incarnation
 *   IDLE              QUEUED             producer (CAS; submit)        st_try_queue_idle
 *   IDLE, inc i       DEAD               destroyer (CAS; drained)      st_try_kill_idle
 *   QUEUED            RUNNING            worker that popped it (store) st_run
 *   RUNNING           IDLE               owner (store, seq_cst or      st_idle
 *                                        release if unsettled)
 *   RUNNING           PARKED             owner (CAS, no RESUME flag)   st_try_park
 *   RUNNING|RESUME    RUNNING            owner (CAS: goes on)          st_try_park
 *   RUNNING           QUEUED             owner (store: fairness yield, st_requeue
 *                                        inline resume handing over)
 *   IDLE (its word)   RUNNING / QUEUED   last owner after a barrier,   st_try_retake
 *                                        fed meanwhile (CAS)
 *   IDLE (its word)   DEAD               last owner after a barrier,   st_try_kill_mine
 *                                        destroyed meanwhile (CAS)
 *   PARKED            QUEUED             any resumer (CAS)             evrt__stream_try_queue
 *   RUNNING           RUNNING|RESUME     any resumer (CAS)             evrt__stream_try_queue
 *   PARKED            RUNNING            a worker's inline resume (CAS) st_try_take_parked
 *
 * Stores are used only where the writer owns the stream and nobody else
 * writes its word but to flag a resume; a flag that st_idle or st_requeue
 * drops is stale: whoever runs the stream next looks at the head afresh.
 * CASes expect the whole word, incarnation included, so a thread that last
 * saw an earlier incarnation of the slot cannot move it.
 *
 * The races this protocol closes (docs/reliability.md, "Found and
 * fixed", lists the bugs each once was), time going down, W the owning
 * worker, P a producer, H a host waiter, D the destroyer:
 *
 * 1. Lost work: a producer links while the owner goes idle (Dekker pair).
 *      W: st_idle: state = IDLE  (seq_cst)   P: enq_seq = n+1   (seq_cst)
 *      W: load enq_seq                       P: st_try_queue_idle: load state
 *    At least one load sees the other's store: W retakes (st_try_retake)
 *    or P queues; both CAS the same IDLE word, so only one wins.  With
 *    release/acquire on either side both loads may read the old values
 *    (W sees n, P sees RUNNING) and item n+1 never runs.
 *    Tests: sched_settle_model (the counterexample when weakened),
 *    feed_and_destroy_in_the_window_lose_nothing (stress_unsettled_idle).
 *
 * 2. Lost wake-up: a host registers while the worker completes.
 *      W: done_seq = k     (seq_cst)       H: wlock_lower: wake_at = k (CAS)
 *      W: load wake_at                     H: load done_seq (seq_cst), park
 *    W notifies, or H sees k and does not park.  Tests: sched_settle_model,
 *    parked_host_is_not_woken_by_every_completion (test_waiters),
 *    fanout_wakes_every_parked_host (stress_unsettled_idle).
 *
 * 3. The settle fence (unsettled idles, exec.c): races 1 and 2 with W's
 *    stores plain release and one fence for up to 16 streams.
 *      W: done_seq = k (release)
 *      W: state = IDLE (release), noted    P: enq_seq = n+1 (seq_cst)
 *          ...  other streams  ...         P: load state -> RUNNING?
 *      W: atomic_thread_fence(seq_cst)     H: wake_at = k; load done_seq
 *      W: load wake_at, enq_seq, destroyed (relaxed) -> notify / retake /
 *         kill, each as the seq_cst path would
 *    Store buffering: without the fence, W's stores may still sit in its
 *    store buffer when P and H load, while W's loads return the values from
 *    before P's and H's stores: item lost, host parked for ever, destroyed
 *    stream never freed.  TSan does not model fences: sched_settle_model
 *    explores every interleaving over store buffers, and finds exactly these
 *    three with the fence removed or made release/acquire.
 *
 * 4. Destroy while the owner goes idle (Dekker pair on `destroyed`).
 *      D: destroyed = 1 (seq_cst)          W: state = IDLE (or the fence)
 *      D: st_try_kill_idle: load state,    W: load destroyed ->
 *         done_seq, enq_seq; CAS -> DEAD      st_try_kill_mine CAS -> DEAD
 *    Exactly one frees it; D only a drained IDLE stream of the incarnation
 *    it destroyed.  Tests: regress_destroy_races_worker_going_idle (both
 *    forms, by repetition), regress_destroy_races_worker_going_idle_sched
 *    (both forms on every run, W held after its IDLE store; the second
 *    fails every run when D ignores pending work), sched_settle_model.
 *
 * 5. A link and a destroy between W's two loads (found by the model).
 *      W: load enq_seq -> n
 *                                          P: link, enq_seq = n+1; unlock
 *                                          D: plock: kill the handle;
 *                                             destroyed = 1; sees work: leaves it
 *      W: load destroyed -> 1 (acquire)
 *      W: load enq_seq again -> n+1: retake, run it, then free it
 *    Without the second look W freed the stream with item n+1 linked:
 *    never run, enq_seq ahead of done_seq for ever (a device synchronize
 *    waits on it).  Tests: sched_settle_model (variant "no second look"),
 *    regress_link_and_destroy_between_idle_loads (schedule points below:
 *    hits the window every run; fails every run without the second look).
 *
 * 6. Park while a resume arrives: the resumer CASes RUNNING ->
 *    RUNNING|RESUME, so W's parking CAS (st_try_park) fails and W looks
 *    at the head again; or it sees PARKED and queues.  Tests:
 *    pingpong_chain_alternates_and_completes, fanout_resumes_every_
 *    waiting_stream (test_waiters), evrt-stress.
 *
 * 7. A slot reused under an old owner: W stored IDLE, D freed it, a create
 *    reused the slot; W's CAS expects the incarnation it stored and fails.
 *    A stream another worker ran and idled in between has the same word:
 *    W's CAS wins and W re-reads done_seq.  Tests:
 *    regress_destroy_races_worker_going_idle_sched (slot reuse) and
 *    regress_idle_retake_stale_counter_sched (done_seq re-read): schedule
 *    points below, each hits its window every run and fails every run
 *    without its fix; regress_destroy_races_worker_going_idle,
 *    regress_idle_retake_stale_counter (by repetition); whoever frees a
 *    stream notifies first
 *    (waiters_survive_destroy_and_slot_reuse_in_the_window).
 */
#if !defined(NDEBUG) || defined(EVRT_TEST_HOOKS) || defined(EVRT_ASSERTS) || \
    defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define EVRT__ASSERTS 1
#else
#define EVRT__ASSERTS 0
#endif
/* Schedule points (EVRT__SCHED_POINT): core_base.h. */

/* A transition found the word in a state it does not start from: print
 * the stream, the word and the transition, and abort (exec.c). */
void evrt__st_violation(const struct evrt__stream *s, unsigned w,
                        const char *transition)
    __attribute__((noreturn, cold));
#define EVRT__ST_EXPECT(s, w, cond, name)                                      \
  do {                                                                         \
    if (EVRT__ASSERTS && EVRT_UNLIKELY(!(cond)))                               \
      evrt__st_violation((s), (w), (name));                                    \
  } while (0)

static inline unsigned evrt__st_load(struct evrt__stream *s) {
  /* relaxed: a hint or an owner's own word; transitions that take
   * ownership do it with their CAS */
  return atomic_load_explicit(&s->state, memory_order_relaxed);
}

/* IDLE or DEAD (a freed slot, or one whose create failed) -> IDLE of the
 * next incarnation.  Relaxed: the slot is published with release later. */
static inline void evrt__st_new_incarnation(struct evrt__stream *s) {
  unsigned w = evrt__st_load(s);
  EVRT__ST_EXPECT(s, w, EVRT__ST(w) == EVRT__S_IDLE || EVRT__ST(w) == EVRT__S_DEAD,
                  "new incarnation");
  atomic_store_explicit(&s->state, ((EVRT__INC(w) + 1) << 4) | EVRT__S_IDLE,
                        memory_order_relaxed);
}

/* IDLE -> QUEUED by a producer after it linked (true: it owns the stream
 * and pushes it).  seq_cst load: the producer's half of the Dekker pair
 * with the worker going idle (enq_seq stored seq_cst before). */
static inline bool evrt__st_try_queue_idle(struct evrt__stream *s) {
  unsigned w = atomic_load_explicit(&s->state, memory_order_seq_cst);
  /* acq_rel: takes ownership from the worker's release of IDLE */
  return EVRT__ST(w) == EVRT__S_IDLE &&
         atomic_compare_exchange_strong_explicit(
             &s->state, &w, EVRT__ST_WITH(w, EVRT__S_QUEUED),
             memory_order_acq_rel, memory_order_relaxed);
}

/* IDLE -> DEAD by the destroyer, which stored `destroyed` (seq_cst) after
 * reading w0: only the incarnation it destroyed, only drained (IDLE with
 * work linked means the worker just gave it up and will take it back).
 * True: the caller frees it. */
static inline bool evrt__st_try_kill_idle(struct evrt__stream *s,
                                          unsigned w0) {
  /* seq_cst loads: the destroyer's half of the Dekker pair */
  unsigned w = atomic_load_explicit(&s->state, memory_order_seq_cst);
  return EVRT__INC(w) == EVRT__INC(w0) && EVRT__ST(w) == EVRT__S_IDLE &&
         evrt__done(s) >=
             atomic_load_explicit(&s->enq_seq, memory_order_seq_cst) &&
         atomic_compare_exchange_strong_explicit(
             &s->state, &w, EVRT__ST_WITH(w, EVRT__S_DEAD),
             memory_order_acq_rel, memory_order_relaxed);
}

/* QUEUED -> RUNNING by the worker that popped it.  Relaxed: nobody else
 * writes a QUEUED stream's word, and the pop acquired it. */
static inline void evrt__st_run(struct evrt__stream *s) {
  unsigned w = evrt__st_load(s);
  EVRT__ST_EXPECT(s, w, EVRT__ST(w) == EVRT__S_QUEUED, "run");
  atomic_store_explicit(&s->state, EVRT__ST_WITH(w, EVRT__S_RUNNING),
                        memory_order_relaxed);
}

/* RUNNING -> QUEUED by the owner, which then pushes it.  mo: seq_cst for
 * the fairness yield, relaxed where the push publishes. */
static inline void evrt__st_requeue(struct evrt__stream *s, memory_order mo) {
  unsigned w = evrt__st_load(s);
  EVRT__ST_EXPECT(s, w, EVRT__ST(w) == EVRT__S_RUNNING, "requeue");
  atomic_store_explicit(&s->state, EVRT__ST_WITH(w, EVRT__S_QUEUED), mo);
}

/* RUNNING -> IDLE by the owner; returns the word stored.  mo: seq_cst (the
 * Dekker pair with producers: then re-read enq_seq), or release for an
 * unsettled idle (the settle's fence comes before the re-read).  From this
 * store on the stream may be freed and reused: the caller touches it only
 * with atomics on type-stable memory and CASes expecting this word. */
static inline unsigned evrt__st_idle(struct evrt__stream *s,
                                     memory_order mo) {
  unsigned w = evrt__st_load(s);
  EVRT__ST_EXPECT(s, w, EVRT__ST(w) == EVRT__S_RUNNING, "idle");
  unsigned mine = EVRT__ST_WITH(w, EVRT__S_IDLE);
  atomic_store_explicit(&s->state, mine, mo);
  return mine;
}

/* RUNNING -> PARKED by the owner, unless a resume was flagged: then the
 * flag is cleared, the stream stays RUNNING and this returns true (look at
 * the head again).  Only resumers write the word meanwhile, and only to
 * add the flag. */
static inline bool evrt__st_try_park(struct evrt__stream *s) {
  unsigned cur = evrt__st_load(s);
  for (;;) {
    EVRT__ST_EXPECT(s, cur, EVRT__ST(cur) == EVRT__S_RUNNING, "park");
    if (cur & EVRT__RESUME) {
      /* acquire: the resumer's release (what it did before flagging) */
      if (atomic_compare_exchange_weak_explicit(
              &s->state, &cur, EVRT__ST_WITH(cur, EVRT__S_RUNNING),
              memory_order_acquire, memory_order_relaxed))
        return true;
    } else if (atomic_compare_exchange_weak_explicit(
                   &s->state, &cur, EVRT__ST_WITH(cur, EVRT__S_PARKED),
                   memory_order_release, memory_order_relaxed)) {
      /* release: the next owner sees our writes to the stream */
      return false;
    }
  }
}

/* The word `mine` this thread stored (IDLE) -> `to`, if nobody moved it
 * since.  acq_rel: ownership back, as a producer's IDLE -> QUEUED. */
static inline bool evrt__st_cas_mine(struct evrt__stream *s, unsigned mine,
                                     int to) {
  unsigned exp = mine;
  return atomic_compare_exchange_strong_explicit(
      &s->state, &exp, EVRT__ST_WITH(mine, to), memory_order_acq_rel,
      memory_order_relaxed);
}

/* IDLE (the word `mine` this thread stored) -> `back` (RUNNING or QUEUED):
 * the last owner, after a full barrier, found work linked meanwhile.
 * Fails if a producer queued it (its new owner runs it) or it changed
 * hands or incarnation. */
static inline bool evrt__st_try_retake(struct evrt__stream *s, unsigned mine,
                                       int back) {
  EVRT__ST_EXPECT(s, mine,
                  EVRT__ST(mine) == EVRT__S_IDLE &&
                      (back == EVRT__S_RUNNING || back == EVRT__S_QUEUED),
                  "retake");
  return evrt__st_cas_mine(s, mine, back);
}

/* IDLE (the word `mine`) -> DEAD: the last owner, after a full barrier,
 * found the drained stream destroyed.  True: the caller frees it. */
static inline bool evrt__st_try_kill_mine(struct evrt__stream *s,
                                          unsigned mine) {
  EVRT__ST_EXPECT(s, mine, EVRT__ST(mine) == EVRT__S_IDLE, "kill");
  return evrt__st_cas_mine(s, mine, EVRT__S_DEAD);
}

/* PARKED (word w, just read) -> RUNNING: a worker's inline resume
 * (evrt__exec_resume) takes the stream over.  acq_rel: takes ownership,
 * as evrt__stream_try_queue's CAS to QUEUED does. */
static inline bool evrt__st_try_take_parked(struct evrt__stream *s,
                                            unsigned w) {
  EVRT__ST_EXPECT(s, w, EVRT__ST(w) == EVRT__S_PARKED, "take parked");
  return atomic_compare_exchange_strong_explicit(
      &s->state, &w, EVRT__ST_WITH(w, EVRT__S_RUNNING), memory_order_acq_rel,
      memory_order_relaxed);
}

/* ------------------------------------------------------------ scheduler */
/* src/cpu/pool.c */
evrt_status_t evrt__pool_init(void);
/* The seq backend's pool (src/seq/): one worker; each pop takes the queued
 * stream of least seeded key; a running stream yields after every item
 * when others are queued; no resumed stream kept for the worker (all go
 * through the pick); no monitor adding workers. */
evrt_status_t evrt__pool_init_seq(uint64_t seed);
extern bool evrt__pool_seq; /* that policy is on (set at init) */
void evrt__pool_shutdown(void);
/* Put a stream the caller owns (just CASed to QUEUED) in the run queue. */
void evrt__pool_push(struct evrt__stream *s);
/* Room in the run queue for one more stream object of s's priority (taken
 * by evrt__stream_new, given back by evrt__stream_free): a push then never
 * needs memory. */
evrt_status_t evrt__pool_reserve(const struct evrt__stream *s);
void evrt__pool_unreserve(const struct evrt__stream *s);
void evrt__pool_push_many(struct evrt__stream **v, int n);
bool evrt__pool_push_local(struct evrt__stream *s);
void evrt__pool_flush_local(void);
/* Make a parked stream QUEUED (true: the caller now owns it and must push
 * it); otherwise note the resume for its owner. */
bool evrt__stream_try_queue(struct evrt__stream *s);
bool evrt__pool_has_ready(void);
bool evrt__pool_on_worker(void); /* the calling thread is a pool worker */
/* Free a ->next-linked list of finished items later, when this worker runs
 * out of work (at once past a bound). Worker threads only. */
void evrt__pool_defer_free(struct evrt__item *head, struct evrt__item *tail,
                           uint32_t n);
bool evrt__pool_spin_enter(void);
void evrt__pool_spin_leave(void);
/* src/cpu/exec.c: run a stream's items until it idles, parks or yields. */
void evrt__exec_stream(struct evrt__stream *s);
/* Streams this worker let go idle without a full barrier, settled together
 * by one (exec.c): call before anything that may keep the worker away for
 * long (user code, spinning, parking) and before taking more work. */
extern EVRT_TLS int evrt__tls_nunsettled;
void evrt__exec_settle_slow(void);
/* A worker leaving (settled already): free its notes. */
void evrt__exec_thread_exit(void);
static inline void evrt__exec_settle(void) {
  if (EVRT_UNLIKELY(evrt__tls_nunsettled))
    evrt__exec_settle_slow();
}
/* notify's resume, on a worker: a stream parked on a satisfied plain wait
 * with nothing behind it passes it here and goes idle (false); otherwise as
 * evrt__stream_try_queue (true: the caller owns it QUEUED and pushes it). */
bool evrt__exec_resume(struct evrt__stream *s);
/* evrt__cpu_stream_resume (backend.h): resume a parked stream (any
 * thread, no lock held). */
/* Resume and wake the waiters whose target is <= seq (seq <= done_seq): a
 * worker after completing items, a settle, or whoever frees the stream
 * (any thread). */
void evrt__stream_notify(struct evrt__stream *s, uint64_t seq);
/* Register a parked wait item on its source stream; false if the dependency
 * is already satisfied (then nothing was registered). */
bool evrt__stream_add_waiter(struct evrt__item *it);
/* s (owned by the caller) cannot pass its item at seq `at` before src
 * reaches target (see blk_src); at = 0 clears. */
static inline void evrt__stream_blocked_on(struct evrt__stream *s,
                                           struct evrt__stream *src,
                                           uint64_t target, uint64_t at) {
  /* release, all three: a reader that sees a record written after the
   * stream moved past `at` sees that move in done_seq (wait.c) */
  atomic_store_explicit(&s->blk_src, src, memory_order_release);
  atomic_store_explicit(&s->blk_target, target, memory_order_release);
  atomic_store_explicit(&s->blk_at, at, memory_order_release);
}
void evrt__stream_remove_waiter(struct evrt__item *it);
/* A new incarnation of a stream slot: empty waiter lists (under wlock: a
 * waiter of the previous incarnation may still look at them). */
void evrt__stream_waiters_reset(struct evrt__stream *s);
/* evrt_shutdown: wake every host parked in a wait with
 * EVRT_ERROR_SHUTDOWN (the state is SHUTDOWN already; any thread). */
void evrt__wait_shutdown(void);
/* src/cpu/timer.c: resume it->owner at it->deadline. */
evrt_status_t evrt__timer_arm(struct evrt__item *it);
void evrt__timer_cancel(struct evrt__item *it);
void evrt__timer_shutdown(void);

/* src/cpu/wait.c: evrt__cpu_host_wait (backend.h) waits on the calling
 * thread until s->done_seq >= target (the host_wait hook). */
/* Common spin budget before parking (ns), adaptive in wait.c. */
uint64_t evrt__spin_budget_ns(void);
/* src/cpu/exec.c: execute one item as the worker would (the run_item
 * hook: the graph executor runs each node through it).  False: the stream
 * must park. */
bool evrt__exec_run_item(struct evrt__stream *s, struct evrt__item *it);
/* src/cpu/backend.c: the cpu table's cold hooks, shared with the seq
 * backend's table. */
int evrt__cpu_device_count(void);
void evrt__cpu_shutdown(void);
int64_t evrt__cpu_elapsed_ns(int device, uint64_t t0, uint64_t t1);
void evrt__cpu_copy(int device, void *dst, const void *src, size_t n,
                    enum evrt__copy_dir dir);
void evrt__cpu_fill(int device, void *dst, int value, size_t n);
/* src/cpu/streams.c: the stream hooks (declared in backend.h, for its
 * direct calls). */

#endif
