/*
 * aclnnop/aclnn_max_pool2d_with_indices.h - 2-D max pooling that also records the argmax.
 *
 * Introduction
 *   aclnnMaxPool2dWithMask: self [N,C,H,W] or [C,H,W]; kernelSize/stride/padding/dilation are
 *   aclIntArrays of 1 or 2 values (stride may be empty = kernelSize); out gets the maxima and
 *   indices (INT8) an Ascend-style bit mask [N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)] consumed by
 *   aclnnMaxPool2dWithMaskBackward.  Note the parameter order kernelSize, stride, padding, dilation.
 *   aclnnMaxPool2dWithIndices: the same, writing PyTorch-style indices (INT32/INT64, out's
 *   shape, ih*W+iw) instead of the mask.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_H_
#define OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskGetWorkspaceSize(const aclTensor *self,
                                                             const aclIntArray *kernelSize,
                                                             const aclIntArray *stride,
                                                             const aclIntArray *padding,
                                                             const aclIntArray *dilation,
                                                             bool ceilMode, aclTensor *out,
                                                             aclTensor *indices,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMask(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

/* The same pooling, writing PyTorch-style indices instead of the mask: `indices` is INT32 or
 * INT64 with out's shape, each value the argmax ih*W+iw of its window in the input plane (as
 * torch.ops.aten.max_pool2d_with_indices).  Same dtypes (FLOAT, FLOAT16, BFLOAT16), attributes
 * and status codes as aclnnMaxPool2dWithMask. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor *self,
                                                                const aclIntArray *kernelSize,
                                                                const aclIntArray *stride,
                                                                const aclIntArray *padding,
                                                                const aclIntArray *dilation,
                                                                bool ceilMode, aclTensor *out,
                                                                aclTensor *indices,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_H_ */
