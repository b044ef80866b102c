/*
 * aclnnop/aclnn_upsample_nearest_exact1d_backward.h - gradient of nearest-exact 1-D upsampling.
 *
 * Introduction
 *   gradOutput: [N, C, Lout]; outputSize: [Lout]; inputSize: [N, C, Lin]; scales: the forward
 *   scale factor (<= 0 = derive from the sizes); out: gradInput [N, C, Lin], each input cell
 *   receiving the sum of the gradOutput cells that copied it.
 *   As in CANN this header includes only aclnn/acl_meta.h and spells the visibility attribute
 *   out instead of using ACLNN_API.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H_
#define OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
__attribute__((visibility("default")))
aclnnStatus aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                const aclIntArray *outputSize,
                                                                const aclIntArray *inputSize,
                                                                double scales, aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);

/* Phase 2. */
__attribute__((visibility("default")))
aclnnStatus aclnnUpsampleNearestExact1dBackward(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_BACKWARD_H_ */
