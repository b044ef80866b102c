/*
 * aclnnop/aclnn_max_pool2d_with_indices_backward.h - gradient of 2-D max pooling.
 *
 * Introduction
 *   aclnnMaxPool2dWithMaskBackward: gradInput (shape of self) = 0, then each gradOutput cell is
 *   added to the input cell its window's maximum came from (as recorded in `indices`, the mask
 *   written by aclnnMaxPool2dWithMask with the same attributes).
 *   aclnnMaxPool2dWithIndicesBackward: the same, reading PyTorch-style indices (INT32/INT64,
 *   gradOutput's shape) instead of the mask.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_
#define OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                     const aclTensor *self,
                                                                     const aclTensor *indices,
                                                                     const aclIntArray *kernelSize,
                                                                     const aclIntArray *stride,
                                                                     const aclIntArray *padding,
                                                                     const aclIntArray *dilation,
                                                                     bool ceilMode,
                                                                     aclTensor *gradInput,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithMaskBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

/* The same gradient, reading PyTorch-style indices (INT32 or INT64, gradOutput's shape, as
 * written by aclnnMaxPool2dWithIndices) instead of the mask.  gradOutput, self and gradInput are
 * FLOAT, FLOAT16 or BFLOAT16 (all the same).  Like the mask variant, an index outside the input
 * plane is skipped and reported at aclrtSynchronizeStream (507015); nothing is written outside
 * gradInput. */
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                        const aclTensor *self,
                                                                        const aclTensor *indices,
                                                                        const aclIntArray *kernelSize,
                                                                        const aclIntArray *stride,
                                                                        const aclIntArray *padding,
                                                                        const aclIntArray *dilation,
                                                                        bool ceilMode,
                                                                        aclTensor *gradInput,
                                                                        uint64_t *workspaceSize,
                                                                        aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor,
                                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_MAX_POOL2D_WITH_INDICES_BACKWARD_H_ */
