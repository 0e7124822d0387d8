/*
 * acl_stream_cfg.c - stream configuration handles (aclrtCreateStreamConfigHandle,
 * aclrtSetStreamConfigOpt, aclrtCreateStreamV2) and the queries of what a
 * stream was created with (aclrtStreamGetFlags, aclrtStreamGetPriority).
 *
 * aclrtStreamConfigHandle is CANN's public struct {workptr, workSize, flag,
 * priority}; the handle is plain caller-visible memory, as in CANN (a
 * program may keep one of its own), so a handle is only checked to be
 * memory the call may read (and write, for aclrtSetStreamConfigOpt): a
 * stray pointer is 100000, not a crash (the Python binding takes any
 * integer; issue 23, fuzz suite).  aclrtDestroyStreamConfigHandle frees,
 * so it takes only the handles aclrtCreateStreamConfigHandle made (kept in
 * `handles`, under cfg_lock, a leaf).  The work buffer fields are stored and unused
 * (a CPU stream needs no device work memory).  Flags and priority are kept
 * in the stream's side-table entry (acl__streams, under acl__lock).
 */
#include "acl_internal.h"

#include <stdlib.h>

/* A handle the layer made: the struct, then its link. */
struct made {
  aclrtStreamConfigHandle h; /* first: the handle is its address */
  struct made *next;
};
static ACL__MUTEX(cfg_lock)
static struct made *handles;

aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void) {
  struct made *m = calloc(1, sizeof *m);
  if (!m) {
    acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStreamConfigHandle",
              "out of memory");
    return NULL;
  }
  pthread_mutex_lock(&cfg_lock);
  m->next = handles;
  handles = m;
  pthread_mutex_unlock(&cfg_lock);
  return &m->h;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle) {
  static const char fn[] = "aclrtDestroyStreamConfigHandle";
  if (!handle)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "handle is NULL");
  struct made *m = NULL;
  pthread_mutex_lock(&cfg_lock);
  for (struct made **pp = &handles; *pp; pp = &(*pp)->next)
    if (&(*pp)->h == handle) {
      m = *pp;
      *pp = m->next;
      break;
    }
  pthread_mutex_unlock(&cfg_lock);
  if (!m)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "%p was not made by aclrtCreateStreamConfigHandle (or "
                     "was destroyed)",
                     (void *)handle);
  free(m);
  return ACL_SUCCESS;
}

/* Value sizes as CANN checks them: pointer-sized work address, size_t work
 * size, uint32_t priority in [0, 7].  The flag is a size_t in CANN; a
 * uint32_t is accepted too, because CANN's own stream_config_query sample
 * passes one and its README shows success. */
aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle,
                                 aclrtStreamConfigAttr attr,
                                 const void *attrValue, size_t valueSize) {
  static const char fn[] = "aclrtSetStreamConfigOpt";
  if (!handle || !attrValue)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     handle ? "attrValue" : "handle");
  if (!acl__host_range_ok(handle, sizeof *handle, true))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "handle %p is not writable memory", (void *)handle);
  if (!acl__host_range_ok(attrValue, valueSize, false))
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                     "attrValue %p (%zu bytes) is not readable memory",
                     attrValue, valueSize);
  switch (attr) {
  case ACL_RT_STREAM_WORK_ADDR_PTR:
    if (valueSize != sizeof(void *))
      break;
    handle->workptr = *(void *const *)attrValue;
    return ACL_SUCCESS;
  case ACL_RT_STREAM_WORK_SIZE:
    if (valueSize != sizeof(size_t))
      break;
    handle->workSize = *(const size_t *)attrValue;
    return ACL_SUCCESS;
  case ACL_RT_STREAM_FLAG:
    if (valueSize == sizeof(size_t))
      handle->flag = *(const size_t *)attrValue;
    else if (valueSize == sizeof(uint32_t))
      handle->flag = *(const uint32_t *)attrValue;
    else
      break;
    return ACL_SUCCESS;
  case ACL_RT_STREAM_PRIORITY: {
    if (valueSize != sizeof(uint32_t))
      break;
    uint32_t p = *(const uint32_t *)attrValue;
    if (p > ACL__STREAM_PRIORITY_LEAST)
      return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                       "priority %u is not in [0, %d]", p,
                       ACL__STREAM_PRIORITY_LEAST);
    handle->priority = p;
    return ACL_SUCCESS;
  }
  default:
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "unknown attribute %d",
                     (int)attr);
  }
  return acl__fail(ACL_ERROR_INVALID_PARAM, fn,
                   "valueSize %zu does not fit attribute %d", valueSize,
                   (int)attr);
}

aclError aclrtCreateStreamV2(aclrtStream *stream,
                             const aclrtStreamConfigHandle *handle) {
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamV2",
                     "stream is NULL");
  if (!handle) /* CANN: no handle is a default configuration */
    return aclrtCreateStreamWithConfig(stream, 0, 0);
  if (!acl__host_range_ok(handle, sizeof *handle, false))
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamV2",
                     "handle %p is not readable memory", (const void *)handle);
  if (handle->flag > UINT32_MAX)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamV2",
                     "flag 0x%zx does not fit the stream flags", handle->flag);
  return aclrtCreateStreamWithConfig(stream, handle->priority,
                                     (uint32_t)handle->flag);
}

/* The side-table entry of `stream` (NULL: the current default stream). */
static aclError query(const char *fn, aclrtStream stream, uint32_t *out,
                      bool want_flags) {
  if (!out)
    return acl__fail(ACL_ERROR_INVALID_PARAM, fn, "%s is NULL",
                     want_flags ? "flags" : "priority");
  evrt_stream_t h;
  struct acl__stream *m;
  aclError r = acl__stream_locked(fn, stream, &h, &m);
  if (r)
    return r;
  bool known = m != NULL;
  uint32_t v = known ? (want_flags ? m->flags : m->priority) : 0;
  pthread_mutex_unlock(&acl__lock);
  if (!known)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, fn,
                     "stream %p was not created by this layer", stream);
  *out = v;
  return ACL_SUCCESS;
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags) {
  return query("aclrtStreamGetFlags", stream, flags, true);
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority) {
  return query("aclrtStreamGetPriority", stream, priority, false);
}
