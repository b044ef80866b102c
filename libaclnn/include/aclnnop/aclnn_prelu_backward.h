/*
 * aclnnop/aclnn_prelu_backward.h - gradient of parametric ReLU.
 *
 * Introduction
 *   gradInput = gradOutput where self > 0, else weight * gradOutput;
 *   gradWeight = sum over the positions sharing a weight of (self > 0 ? 0 : self * gradOutput).
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_PRELU_BACKWARD_H_
#define OP_API_INC_PRELU_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnPreluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                         const aclTensor *self,
                                                         const aclTensor *weight,
                                                         aclTensor *gradInput,
                                                         aclTensor *gradWeight,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);

/* Phase 2 (CANN names the size parameter workspace_size here). */
ACLNN_API aclnnStatus aclnnPreluBackward(void *workspace, uint64_t workspace_size,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_PRELU_BACKWARD_H_ */
