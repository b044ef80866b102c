/*
 * acl/acl_rt_allocator.h - types of CANN's custom device-memory allocator hooks.
 *
 * Introduction
 *   CANN lets a framework plug its own allocator into a stream (aclrtAllocatorRegister and the
 *   aclrtAllocatorSet*FuncToDesc family).  libaclnn's operators never allocate device memory
 *   behind the caller's back (the workspace is always the caller's), so the registration
 *   functions are NOT provided; only the callback types are declared, so that code which
 *   merely names them compiles.  A program that calls aclrtAllocatorRegister will fail to
 *   link, which is better than silently ignoring its allocator.
 */
#ifndef INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_
#define INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);
typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size,
                                               aclrtAllocatorAddr addr);
typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_ */
