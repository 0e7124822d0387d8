/*
 * acl/acl.h - umbrella header of evrt's Ascend ACL compatibility layer.
 * Link with libascendcl.so (pkg-config ascendcl).  See docs/acl.md.
 */
#ifndef EVRT_ACL_H
#define EVRT_ACL_H

#include "acl_base.h"
#include "acl_rt.h"

#endif /* EVRT_ACL_H */
