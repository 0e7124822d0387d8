/*
 * ipc.h - what the interprocess-event files share: the layout of the shared
 * segment, the per-process map of it, and the functions between the files.
 *
 *   ipc_proc.c   this process's identity; is a peer alive (/proc)
 *   ipc_shm.c    the shared segment: create (memfd), map another process's,
 *                reference counts
 *   ipc_lock.c   the cross-process lock in the segment
 *   ipc_proto.c  generations: record, complete, query, synchronize, stream
 *                wait, close at destroy
 *   ipc_watch.c  the watcher thread of parked stream waits
 *   ipc_wire.c   the 64-byte handle: export and open
 *
 * The design (segment, generations, robustness) is described at the top of
 * ipc_proto.c and in docs/design.md section 8.
 */
#ifndef EVRT_IPC_H
#define EVRT_IPC_H

#include "internal.h"

#define EVRT__IPC_SHM_SIZE 65536
#define EVRT__IPC_RING 2048
#define EVRT__IPC_SHM_MAGIC 0x314d4853545256ULL /* "VRTSHM1" */
/* How often a waiter checks that the recorder of its generation lives. */
#define EVRT__IPC_PEER_CHECK_NS 50000000ull

struct evrt__ipc_slot {
  atomic_uint_least64_t word; /* gen << 1 | done */
  atomic_int pid;
  atomic_uint_least64_t start;
};

struct evrt__ipc_shm {
  uint64_t magic;
  uint64_t nonce;
  int32_t device;
  atomic_int lock_pid;
  atomic_uint_least64_t rec_no;
  atomic_uint seq;      /* shared futex word: bumped on every completion */
  atomic_uint nwaiters; /* sleepers on seq, all processes */
  struct evrt__ipc_slot ring[EVRT__IPC_RING];
};
_Static_assert(sizeof(struct evrt__ipc_shm) <= EVRT__IPC_SHM_SIZE,
               "shared state fits the segment");

struct evrt__ipc_map {
  struct evrt__ipc_shm *shm;
  atomic_int refs; /* the event + each pending item that points here */
  int fd;          /* exporter: the memfd importers open; -1 in importers */
};

/* ipc_proc.c: this process (pid and start time, refreshed after fork). */
extern int evrt__ipc_my_pid;
extern uint64_t evrt__ipc_my_start;
void evrt__ipc_init_self(void);
/* Start time (clock ticks since boot) of a live process; false if it is
 * gone or a zombie. */
bool evrt__ipc_proc_info(int pid, uint64_t *start);
/* Is (pid, start) a live process (the same one, not a reuse of its pid)? */
bool evrt__ipc_alive(int pid, uint64_t start);

/* ipc_shm.c */
void evrt__ipc_map_ref(struct evrt__ipc_map *map);
void evrt__ipc_map_unref(struct evrt__ipc_map *map);
static inline struct evrt__ipc_map *evrt__ipc_map_of(struct evrt__event *e) {
  /* acquire: pairs with the release store that installs the map */
  return atomic_load_explicit(&e->ipc, memory_order_acquire);
}
/* Make sure an exporting event has its shared state and device (e's lock
 * held). */
evrt_status_t evrt__ipc_ensure_shared(struct evrt__event *e, int device);
/* Map the segment that process pid holds at descriptor fd, after checking
 * it is an evrt segment with this nonce and device. */
evrt_status_t evrt__ipc_map_peer(int pid, int fd, uint64_t nonce, int device,
                                 struct evrt__ipc_map **out);

/* ipc_lock.c */
void evrt__ipc_lock(struct evrt__ipc_shm *m);
void evrt__ipc_unlock(struct evrt__ipc_shm *m);

/* ipc_proto.c: 1 done, 0 pending, -1 pending and its recorder is dead. */
int evrt__ipc_gen_state(struct evrt__ipc_shm *m, uint64_t g, bool check_peer);
/* Under e's lock: is e (still) a live interprocess event? */
bool evrt__ipc_live(struct evrt__event *e);

#endif
