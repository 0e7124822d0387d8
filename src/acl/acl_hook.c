/*
 * acl_hook.c - API injection: aclrtApiInjectionSetFunc / GetFunc (CANN's
 * "API Hook" chapter).  A hookable call's public symbol is a trampoline
 * (acl_impl.c) that loads the call's hook slot and calls the hook when one
 * is set, the implementation aclXImpl otherwise.  Setting a hook is one
 * atomic store, so it races safely with threads inside the call: each call
 * runs either the old or the new function, entirely.  Restoring the
 * original (func == originFunc) clears the slot.  The calls take no lock
 * and need no aclInit (CANN's tools install hooks before it).
 */
#include "acl_internal.h"

#include "acl_hook.h"

static aclError find(const char *fn, const char *name,
                     _Atomic(aclrtApiFunc) **slot, aclrtApiFunc *impl) {
  if (!name)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "name is NULL");
  if (!acl__hook_find(name, slot, impl))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%.64s cannot be hooked (the hookable calls are the "
                     "aclrt* and aclmdlRI* calls of CANN's hook table)",
                     name);
  return ACL_SUCCESS;
}

aclError aclrtApiInjectionSetFunc(const char *name, aclrtApiFunc func) {
  static const char fn[] = "aclrtApiInjectionSetFunc";
  _Atomic(aclrtApiFunc) *slot;
  aclrtApiFunc impl;
  aclError r = find(fn, name, &slot, &impl);
  if (r)
    return r;
  if (!func)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "func is NULL");
  /* release: pairs with the trampoline's acquire load, so that a thread
   * that runs the hook sees everything this thread wrote before (the
   * original the hook forwards to, the hook's state). */
  atomic_store_explicit(slot, func == impl ? NULL : func,
                        memory_order_release);
  return ACL_SUCCESS;
}

aclError aclrtApiInjectionGetFunc(const char *name, aclrtApiFunc *originFunc,
                                  aclrtApiFunc *currentFunc) {
  static const char fn[] = "aclrtApiInjectionGetFunc";
  _Atomic(aclrtApiFunc) *slot;
  aclrtApiFunc impl;
  aclError r = find(fn, name, &slot, &impl);
  if (r)
    return r;
  if (originFunc)
    *originFunc = impl;
  if (currentFunc) {
    /* acquire: as the trampoline's */
    aclrtApiFunc h = atomic_load_explicit(slot, memory_order_acquire);
    *currentFunc = h ? h : impl;
  }
  return ACL_SUCCESS;
}
