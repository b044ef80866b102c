/*
 * aclnnop/aclnn_prelu.h - parametric ReLU.
 *
 * Introduction
 *   out = self where self > 0, else weight * self; weight has 1 element (shared) or one per
 *   channel (dimension 1 of self).
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_PRELU_H_
#define OP_API_INC_PRELU_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnPreluGetWorkspaceSize(const aclTensor *self, const aclTensor *weight,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnPrelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_PRELU_H_ */
