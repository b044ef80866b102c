/*
 * aclnnop/aclnn_im2col_backward.h - col2im (PyTorch's fold): the gradient of im2col.
 *
 * Introduction
 *   gradOutput: [N, C*kH*kW, L] or [C*kH*kW, L]; inputSize: aclIntArray [H, W];
 *   out: [N, C, H, W] (or [C, H, W]) where each cell is the sum of the columns that read it.
 *   kernelSize, dilation, padding, stride: aclIntArrays of 2 values [H, W], in that order.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_IM2COL_BACKWARD_H_
#define OP_API_INC_LEVEL2_ACLNN_IM2COL_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                          const aclIntArray *inputSize,
                                                          const aclIntArray *kernelSize,
                                                          const aclIntArray *dilation,
                                                          const aclIntArray *padding,
                                                          const aclIntArray *stride,
                                                          aclTensor *out, uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_IM2COL_BACKWARD_H_ */
