/*
 * acl_fork.c - fork(): a child of a process that used the ACL layer gets
 * the ACL code of EVRT_ERROR_FORKED (ACL_ERROR_RT_INTERNAL_ERROR, 507000;
 * the table in acl_error.c) from every call at once, before the call takes
 * any lock of this layer: a thread of the parent may have held acl__lock or
 * the memory registry's lock at the fork, and the state they guard may be
 * half-written in the child's copy.
 *
 * The paths of the main families that take one of those locks, or read
 * what they guard, without having called into evrt first pass ACL__ENTER
 * (acl__current, acl__stream, memory allocation and release, report
 * queues, notifies, contexts, aclFinalize); a path that calls evrt first
 * gets EVRT_ERROR_FORKED from it in the child.  And every global mutex of
 * the layer (ACL__MUTEX) is re-initialized in the child, so the paths of
 * the other families (data buffers, allocator descriptors, device limits,
 * switches, managed and registered host memory, pools, virtual memory),
 * which keep tables of their own and may not call evrt at all, cannot hang
 * in a child either: they run on the child's copy of their tables.  The first pass marks the layer used (seq_cst, before the
 * caller takes any lock, so a fork that copies a held lock copies the mark
 * too).  The child handler keeps the mark and adds CHILD; a child of a
 * process that never used the layer asks evrt (which answers FORKED if the
 * parent had initialized it) and then goes on as a fresh process.
 */
#include "acl_internal.h"

#include <stdbool.h>

atomic_uint acl__fork_state;

/* The layer's global mutexes (ACL__MUTEX), registered by constructors (and
 * one pthread_once); re-initialized in a child. */
#define MAX_TRACKED 32
static struct {
  pthread_mutex_t *m;
  bool recursive;
} tracked[MAX_TRACKED];
static atomic_uint ntracked;

void acl__fork_track(pthread_mutex_t *m, bool recursive) {
  unsigned i = atomic_fetch_add_explicit(&ntracked, 1, memory_order_relaxed);
  if (i < MAX_TRACKED) {
    tracked[i].m = m;
    tracked[i].recursive = recursive;
  }
}

static void atfork_child(void) {
  /* The child's only thread; relaxed. */
  unsigned s = atomic_load_explicit(&acl__fork_state, memory_order_relaxed);
  atomic_store_explicit(&acl__fork_state,
                        (s & ACL__FORK_USED) ? ACL__FORK_USED | ACL__FORK_CHILD
                                             : ACL__FORK_CHILD,
                        memory_order_relaxed);
  unsigned n = atomic_load_explicit(&ntracked, memory_order_relaxed);
  for (unsigned i = 0; i < n && i < MAX_TRACKED; i++) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    if (tracked[i].recursive)
      pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(tracked[i].m, &a);
    pthread_mutexattr_destroy(&a);
  }
}

__attribute__((constructor)) static void install_atfork(void) {
  pthread_atfork(NULL, NULL, atfork_child);
}

aclError acl__enter_slow(const char *fn) {
  unsigned s = atomic_load_explicit(&acl__fork_state, memory_order_seq_cst);
  if (s & ACL__FORK_CHILD) {
    if (s & ACL__FORK_USED)
      return acl__fail(acl__code_of(EVRT_ERROR_FORKED), fn,
                       "this process was forked from one that used the ACL "
                       "layer: it cannot be used in the child (start worker "
                       "processes with posix_spawn or exec)");
    evrt_status_t st = evrt_init(); /* FORKED if the parent initialized evrt */
    if (st)
      return acl__st(st, fn);
  }
  /* seq_cst: ordered before the lock the caller takes next (see top) */
  atomic_store_explicit(&acl__fork_state, ACL__FORK_USED, memory_order_seq_cst);
  return ACL_SUCCESS;
}
