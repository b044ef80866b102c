/*
 * aclnn/aclnn_base.h - what every aclnn operator header needs.
 *
 * Introduction
 *   Brings in the meta API (aclnn/acl_meta.h: aclTensor, aclIntArray, ..., aclnnStatus), the
 *   aclnn status codes (aclnn/opdev/op_errno.h, ACLNN_SUCCESS / ACLNN_ERR_*), and declares the
 *   optional light-weight initialisation of the operator library.  aclInit already initialises
 *   aclnn, so calling aclnnInit is not required.
 *
 *   Operators use a two-phase convention:
 *     1. aclnnXxxGetWorkspaceSize(inputs..., outputs..., &workspaceSize, &executor)
 *        checks the arguments and plans the work;
 *     2. the caller provides `workspaceSize` bytes of device memory (if > 0) and calls
 *        aclnnXxx(workspace, workspaceSize, executor, stream), which queues the work on the
 *        stream and returns; results are valid after aclrtSynchronizeStream(stream).
 */
#ifndef OP_API_INC_ACLNN_BASE_H_
#define OP_API_INC_ACLNN_BASE_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "acl_meta.h"
#include "opdev/op_errno.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Initialises aclnn only.  configPath may be NULL, or a JSON file such as
 * {"op_debug_config":{"enable_debug_kernel":"on"}}. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_ACLNN_BASE_H_ */
