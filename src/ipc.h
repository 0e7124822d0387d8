/*
 * ipc.h - what the interprocess-event files share: the layout of the shared
 * segment, the per-process map of it, and the functions between the files.
 *
 *   ipc_proc.c   this process's identity; is a peer alive (/proc)
 *   ipc_shm.c    the shared segment: create (memfd), map another process's,
 *                reference counts, close at destroy
 *   ipc_ring.c   the generation ring in the segment: recorders' table,
 *                lock-free claim of a generation, completion, state
 *   ipc_proto.c  an event's record, query, synchronize and stream wait
 *   ipc_watch.c  the watcher thread of parked stream waits
 *   ipc_wire.c   the 64-byte handle: export and open
 *
 * The design (segment, generations, robustness) is described at the top of
 * ipc_ring.c and in docs/design.md section 8.
 */
#ifndef EVRT_IPC_H
#define EVRT_IPC_H

#include "internal.h"

#define EVRT__IPC_SHM_SIZE 65536
#define EVRT__IPC_SHM_MAGIC 0x324d4853545256ULL /* "VRTSHM2" */
/* Ring of generations: generation g lives in slot g % RING. */
#define EVRT__IPC_RING 2048
/* Recorders' table: a process that records gets one entry (its index + 1 is
 * the "recorder" field of the words below). */
#define EVRT__IPC_RECORDERS 1024
/* How often a waiter checks that the recorder of its generation lives. */
#define EVRT__IPC_PEER_CHECK_NS 50000000ull

/* A ring word and the claim word (head): gen << GEN_SHIFT | recorder << 1 |
 * done.  11 bits of recorder index, 52 of generation. */
#define EVRT__IPC_GEN_SHIFT 12
#define EVRT__IPC_WORD(gen, rec)                                               \
  ((uint64_t)(gen) << EVRT__IPC_GEN_SHIFT | (uint64_t)(rec) << 1)
static inline uint64_t evrt__ipc_gen(uint64_t w) {
  return w >> EVRT__IPC_GEN_SHIFT;
}
static inline unsigned evrt__ipc_rec(uint64_t w) {
  return (unsigned)(w >> 1) & ((1u << (EVRT__IPC_GEN_SHIFT - 1)) - 1);
}
_Static_assert(EVRT__IPC_RECORDERS < (1u << (EVRT__IPC_GEN_SHIFT - 1)),
               "recorder index fits its field");

/* A recorder's identity: start time (clock ticks since boot, 42 bits) <<
 * 22 | pid (pids are below 2^22, the kernel's PID_MAX_LIMIT).  0 = free. */
#define EVRT__IPC_PID_BITS 22

struct evrt__ipc_shm {
  uint64_t magic;
  uint64_t nonce;
  uint64_t event_id; /* the exporter's event: a handle names it */
  int32_t device;
  int32_t unused;
  atomic_uint_least64_t head; /* latest claimed generation (a word) */
  atomic_uint seq;      /* shared futex word: bumped on every completion */
  atomic_uint nwaiters; /* sleepers on seq, all processes */
  atomic_uint_least64_t recorder[EVRT__IPC_RECORDERS]; /* identities */
  atomic_uint_least64_t ring[EVRT__IPC_RING];          /* words */
};
_Static_assert(sizeof(struct evrt__ipc_shm) <= EVRT__IPC_SHM_SIZE,
               "shared state fits the segment");

struct evrt__ipc_map {
  struct evrt__ipc_shm *shm;
  atomic_int refs; /* the event + each pending item that points here */
  int fd;          /* exporter: the memfd importers open; -1 in importers */
  /* This process's index in shm->recorder (0 until its first record).
   * Relaxed: any thread may register; two racing ones may both register,
   * which leaves two entries naming the same process (harmless). */
  atomic_uint me;
};

/* ipc_proc.c: this process (pid and start time, refreshed after fork). */
extern int evrt__ipc_my_pid;
extern uint64_t evrt__ipc_my_start;
void evrt__ipc_init_self(void);
/* Start time (clock ticks since boot) of a live process; false if it is
 * gone or a zombie. */
bool evrt__ipc_proc_info(int pid, uint64_t *start);
/* Is (pid, start) a live process (the same one, not a reuse of its pid)?
 * start is compared on its low 42 bits. */
bool evrt__ipc_alive(int pid, uint64_t start);

/* ipc_shm.c */
void evrt__ipc_map_ref(struct evrt__ipc_map *map);
void evrt__ipc_map_unref(struct evrt__ipc_map *map);
static inline struct evrt__ipc_map *evrt__ipc_map_of(struct evrt__event *e) {
  /* acquire: pairs with the release store that installs the map */
  return atomic_load_explicit(&e->ipc, memory_order_acquire);
}
/* The map of an interprocess event with a reference for the caller; for
 * an exporter's first record or export, made (segment, event resource,
 * device) and attached.  record: a record on a stream of `device` (which
 * must be the event's); else an export, which puts a new event on
 * `device`.  fd (may be NULL): the exporter's descriptor, read under the
 * event's lock (-1 once destroyed).  The segment is made without the lock
 * (system calls). */
evrt_status_t evrt__ipc_event_map(struct evrt__event *e, int device,
                                  bool record, struct evrt__ipc_map **out,
                                  int *fd);
/* Map the segment that process pid holds at descriptor fd, after checking
 * it is the segment of event_id with this nonce and device. */
evrt_status_t evrt__ipc_map_peer(int pid, int fd, uint64_t nonce, int device,
                                 uint64_t event_id, struct evrt__ipc_map **out);

/* ipc_ring.c */
/* This process's recorder index in the map's segment (registered at the
 * first call); 0 if the table is full of live recorders. */
unsigned evrt__ipc_recorder(struct evrt__ipc_map *map);
/* Claim the next generation for recorder `me` and fill its slot (pending):
 * the generation, or 0 if its slot still holds a pending generation of a
 * live recorder (the ring is full).  Lock-free. */
uint64_t evrt__ipc_claim(struct evrt__ipc_shm *m, unsigned me);
/* The first step of a claim alone (head moved, slot not filled), as a
 * process stopped or killed between the two steps leaves it (tests). */
uint64_t evrt__ipc_claim_head(struct evrt__ipc_shm *m, unsigned me);
/* One attempt of evrt__ipc_claim that makes no system call (for the
 * caller's spin lock): 0 if it would need one (the slot to reuse is
 * pending: is its recorder alive?) or lost a race; then use
 * evrt__ipc_claim without the lock. */
uint64_t evrt__ipc_claim_once(struct evrt__ipc_shm *m, unsigned me);
/* The latest generation, its slot filled (0: never recorded). */
uint64_t evrt__ipc_latest(struct evrt__ipc_shm *m);
/* Generation g (recorded by this process) is complete: mark it and wake
 * the sleepers of every process. */
void evrt__ipc_complete(struct evrt__ipc_shm *m, uint64_t g);
/* The two halves of evrt__ipc_complete, for a caller under a spin lock:
 * mark (no system call) returns whether sleepers need the wake-up (a
 * system call, made after the lock is released, the map still held). */
bool evrt__ipc_mark_done(struct evrt__ipc_shm *m, uint64_t g);
void evrt__ipc_wake(struct evrt__ipc_shm *m);
/* 1 done, 0 pending, -1 pending and its recorder is dead.  g must come
 * from evrt__ipc_latest or evrt__ipc_claim. */
int evrt__ipc_gen_state(struct evrt__ipc_shm *m, uint64_t g, bool check_peer);

/* ipc_proto.c: under e's lock, is e (still) a live interprocess event? */
bool evrt__ipc_live(struct evrt__event *e);
/* Under e's lock: may e be recorded on a stream of `device`?  (Rule 3 for
 * the exporter; an imported event records on any device.) */
evrt_status_t evrt__ipc_record_device(struct evrt__event *e, int device);

#endif
