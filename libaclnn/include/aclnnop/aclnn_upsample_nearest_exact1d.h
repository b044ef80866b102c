/*
 * aclnnop/aclnn_upsample_nearest_exact1d.h - nearest-exact 1-D upsampling (PyTorch's 'nearest-exact').
 *
 * Introduction
 *   self: [N, C, L]; outputSize: aclIntArray [Lout]; out: [N, C, Lout].
 *   out[n, c, d] = self[n, c, min(floor((d + 0.5) * scale), L - 1)] with
 *   scale = 1 / scales when scales > 0, else L / Lout.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_H_
#define OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1dGetWorkspaceSize(const aclTensor *self,
                                                                  const aclIntArray *outputSize,
                                                                  double scales, aclTensor *out,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnUpsampleNearestExact1d(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_UPSAMPLE_NEAREST_EXACT1D_H_ */
