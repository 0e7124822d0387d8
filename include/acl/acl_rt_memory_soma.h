/*
 * acl/acl_rt_memory_soma.h - stream-ordered memory pools of evrt's Ascend ACL
 * compatibility layer.  Names, prototypes and values follow the public CANN
 * header of the same name (hicann/runtime include/external/acl/
 * acl_rt_memory_soma.h, commit 681ef761); docs/acl.md says how pools behave
 * here.  Like CANN's, it is not included by acl/acl.h.
 */
#ifndef EVRT_ACL_RT_MEMORY_SOMA_H
#define EVRT_ACL_RT_MEMORY_SOMA_H

#include <stddef.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtMemPool;

typedef enum aclrtMemPoolAttr {
  ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1, /* uint32_t 0/1 */
  ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,       /* uint32_t 0/1 */
  ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3, /* uint32_t 0/1 */
  ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,          /* uint64_t */
  ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5,       /* uint64_t, read-only */
  ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,          /* uint64_t, reset to 0 */
  ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,           /* uint64_t, read-only */
  ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8               /* uint64_t, reset to 0 */
} aclrtMemPoolAttr;

typedef struct {
  aclrtMemAllocationType allocType;
  aclrtMemHandleType handleType;
  aclrtMemLocation location;
  size_t maxSize;
  unsigned char reserved[32];
} aclrtMemPoolProps;

ACL_FUNC_VISIBILITY aclError aclrtMemPoolCreate(aclrtMemPool *memPool,
                                                const aclrtMemPoolProps *poolProps);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolSetAttr(aclrtMemPool memPool,
                                                 aclrtMemPoolAttr attr, void *value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolGetAttr(aclrtMemPool memPool,
                                                 aclrtMemPoolAttr attr, void *value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolMallocAsync(void **ptr, size_t size,
                                                     aclrtMemPool memPool,
                                                     aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolTrimTo(aclrtMemPool memPool,
                                                size_t minBytesToKeep);

#ifdef __cplusplus
}
#endif

#endif /* EVRT_ACL_RT_MEMORY_SOMA_H */
