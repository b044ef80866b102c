/*
 * aclnnop/aclnn_im2col.h - im2col (PyTorch's unfold): sliding 2-D patches laid out as columns.
 *
 * Introduction
 *   self: [N,C,H,W] -> out [N, C*kH*kW, L] (or [C,H,W] -> [C*kH*kW, L]), L = OH*OW.
 *   kernelSize, dilation, padding, stride: aclIntArrays of 2 values [H, W], in that order.
 *   out is declared `const aclTensor *` in CANN's header; it is nevertheless written.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_IM2COL_H_
#define OP_API_INC_LEVEL2_ACLNN_IM2COL_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor *self,
                                                  const aclIntArray *kernelSize,
                                                  const aclIntArray *dilation,
                                                  const aclIntArray *padding,
                                                  const aclIntArray *stride, const aclTensor *out,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_IM2COL_H_ */
