/*
 * aclnnop/aclnn_pad2d_backward.h - gradients of 2-D padding (replication and reflection).
 *
 * Introduction
 *   aclnnReplicationPad2dBackward: gradInput (shape of self) = sum of gradOutput over every
 *   output cell that copied the input cell; `self` only gives the shape.
 *   padding: aclIntArray [left, right, top, bottom]; gradOutput: [..., H+top+bottom, W+left+right].
 *   aclnnReflectionPad2dBackward is declared as in CANN but not implemented by libaclnn yet.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_PAD2D_BACKWARD_H_
#define OP_API_INC_LEVEL2_ACLNN_PAD2D_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1 of the replication-pad gradient. */
ACLNN_API aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                    const aclTensor *self,
                                                                    const aclIntArray *padding,
                                                                    aclTensor *gradInput,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);

/* Phase 2 (CANN declares the stream `const`; no ABI effect). */
ACLNN_API aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor,
                                                    const aclrtStream stream);

/* Declared because CANN's header declares it; libaclnn does not implement it yet: both phases
 * return ACLNN_ERR_INNER (561000) with an explanatory message. */
ACLNN_API aclnnStatus aclnnReflectionPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                   const aclTensor *self,
                                                                   const aclIntArray *padding,
                                                                   aclTensor *gradInput,
                                                                   uint64_t *workspaceSize,
                                                                   aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnReflectionPad2dBackward(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor,
                                                   const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_PAD2D_BACKWARD_H_ */
