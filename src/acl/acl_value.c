/*
 * acl_value.c - aclrtValueWrite / aclrtValueWait over evrt's stream-ordered
 * values (docs/design.md, "Values"): the wait parks its stream and holds no
 * worker.  The address must be 8-byte aligned device memory the layer
 * handed out (aclrtMalloc, or imported from another process): anything else
 * is ACL's invalid parameter.  The flags are CANN's conditions, whose
 * values evrt shares.  A wait on memory shared with another process
 * (exported or imported) also polls, since that process's writes wake
 * nobody here; host tasks (the kernels' stand-ins), copies and sets wake
 * the waits on the bytes they write.
 */
#include "acl_internal.h"

static aclError check(const char *fn, void *addr) {
  if (!addr || ((uintptr_t)addr & 7u))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "devAddr %p is %s", addr,
                     addr ? "not 8-byte aligned" : "NULL");
  /* device memory of the layer (mapped pages of a reserved range) */
  return acl__mem_side(fn, ACL_ERROR_INVALID_PARAM, "devAddr", addr,
                       sizeof(uint64_t), ACL__SIDE_WRITE | ACL__SIDE_DEVICE,
                       NULL);
}

aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag,
                         aclrtStream stream) {
  static const char fn[] = "aclrtValueWrite";
  if (flag != 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flag %u is reserved and must be 0", (unsigned)flag);
  aclError r = check(fn, devAddr);
  evrt_stream_t h;
  if (r || (r = acl__stream(fn, stream, &h)))
    return r;
  return acl__st(evrt_stream_write_value64(h, devAddr, value, 0), fn);
}

aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag,
                        aclrtStream stream) {
  static const char fn[] = "aclrtValueWait";
  if (flag > ACL_STREAM_WAIT_VALUE_NOR)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "flag %u is not an ACL_STREAM_WAIT_VALUE_* condition",
                     (unsigned)flag);
  aclError r = check(fn, devAddr);
  evrt_stream_t h;
  if (r || (r = acl__stream(fn, stream, &h)))
    return r;
  unsigned flags = flag; /* same values as EVRT_VALUE_WAIT_GEQ..NOR */
  if (acl__ipc_mem_shared(devAddr))
    flags |= EVRT_VALUE_WAIT_POLL;
  return acl__st(evrt_stream_wait_value64(h, devAddr, value, flags), fn);
}
