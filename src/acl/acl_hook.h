/*
 * acl_hook.h - API injection (aclrtApiInjectionSetFunc/GetFunc, acl_hook.c)
 * over the hook slots of the generated acl_impl.c.  No rename header here:
 * acl_impl.c, which defines the public trampolines, includes this file.
 */
#ifndef EVRT_ACL_HOOK_H
#define EVRT_ACL_HOOK_H

#include <acl/acl_rt.h>

#include <stdatomic.h>
#include <stdbool.h>

/* The hook slot of the hookable call `name` (NULL while not hooked) and its
 * implementation aclXImpl; false if `name` is not hookable.  Any thread;
 * no lock. */
bool acl__hook_find(const char *name, _Atomic(aclrtApiFunc) **slot,
                    aclrtApiFunc *impl) __attribute__((visibility("hidden")));

#endif
