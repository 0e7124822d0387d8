/*
 * ipc_lock.c - the cross-process lock in an interprocess event's segment:
 * the word holds its owner's pid; a waiter that finds it held for long by a
 * dead process takes it over (everything it protects is rewritten by the
 * next record).
 */
#include "ipc.h"

#include <sched.h>

void evrt__ipc_lock(struct evrt__ipc_shm *m) {
  for (unsigned n = 0;; n++) {
    int z = 0;
    if (atomic_compare_exchange_weak_explicit(
            &m->lock_pid, &z, evrt__ipc_my_pid, memory_order_acquire,
            memory_order_relaxed))
      return;
    if (n < 64) {
      evrt__cpu_relax();
      continue;
    }
    sched_yield();
    if ((n & 1023) == 1023 && z != 0) {
      /* Held for long: if its owner died, take it over. */
      uint64_t s;
      if (!evrt__ipc_proc_info(z, &s) &&
          atomic_compare_exchange_strong_explicit(
              &m->lock_pid, &z, evrt__ipc_my_pid, memory_order_acquire,
              memory_order_relaxed))
        return;
    }
  }
}

void evrt__ipc_unlock(struct evrt__ipc_shm *m) {
  atomic_store_explicit(&m->lock_pid, 0, memory_order_release);
}
