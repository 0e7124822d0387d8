/*
 * acl_fork.c - fork(): a child of a process that used the ACL layer gets
 * the ACL code of EVRT_ERROR_FORKED (ACL_ERROR_RT_INTERNAL_ERROR, 507000;
 * the table in acl_error.c) from every call at once, before the call takes
 * any lock of this layer: a thread of the parent may have held acl__lock or
 * the memory registry's lock at the fork, and the state they guard may be
 * half-written in the child's copy.
 *
 * Every path that takes one of those locks, or reads what they guard,
 * without having called into evrt first passes ACL__ENTER (acl__current,
 * acl__stream, the memory registry, report queues, notifies, contexts,
 * aclFinalize); a path that calls evrt first gets EVRT_ERROR_FORKED from it
 * in the child.  The first pass marks the layer used (seq_cst, before the
 * caller takes any lock, so a fork that copies a held lock copies the mark
 * too).  The child handler keeps the mark and adds CHILD; a child of a
 * process that never used the layer asks evrt (which answers FORKED if the
 * parent had initialized it) and then goes on as a fresh process.
 */
#include "acl_internal.h"

atomic_uint acl__fork_state;

static void atfork_child(void) {
  /* The child's only thread; relaxed. */
  unsigned s = atomic_load_explicit(&acl__fork_state, memory_order_relaxed);
  atomic_store_explicit(&acl__fork_state,
                        (s & ACL__FORK_USED) ? ACL__FORK_USED | ACL__FORK_CHILD
                                             : ACL__FORK_CHILD,
                        memory_order_relaxed);
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
