/*
 * acl/acl.h - the umbrella header of the ACL runtime.
 *
 * Introduction
 *   Include this to use the runtime: initialisation (aclInit/aclFinalize), devices, contexts,
 *   streams, events, "device" memory and copies (all in acl/acl_rt.h), plus the empty
 *   acl_op.h / acl_mdl.h placeholders CANN also pulls in here.
 *
 *   In libaclnn the "device" is the host CPU: aclrtMalloc returns ordinary (aligned) host memory,
 *   streams are worker threads that run queued operators in order, and aclrtMemcpy of any kind
 *   is a memcpy.  Programs written for CANN compile and run unchanged.
 *
 *   Note (as in CANN): acl/acl.h does not declare the aclnn meta API (aclCreateTensor, ...).
 *   That comes with any operator header (aclnnop/aclnn_*.h) or with aclnn/aclnn_base.h.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
