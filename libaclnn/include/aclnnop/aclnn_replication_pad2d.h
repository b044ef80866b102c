/*
 * aclnnop/aclnn_replication_pad2d.h - edge (replication) padding of the last two dimensions.
 *
 * Introduction
 *   out[..., i, j] = self[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]
 *   self: 3-D [C,H,W] or 4-D [N,C,H,W]; padding: aclIntArray [left, right, top, bottom];
 *   out: [..., H+top+bottom, W+left+right], same dtype as self.
 *
 *   Two-phase call (see aclnn/aclnn_base.h): phase 1 (...GetWorkspaceSize) checks the arguments
 *   and returns an executor plus the workspace size; phase 2 queues the work on `stream`.  The
 *   results are valid after aclrtSynchronizeStream(stream).  Status: 0 on success, 161001 for a
 *   NULL argument, 161002 for an invalid one (message in aclGetRecentErrMsg()).
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_REPLICATION_PAD2D_H_
#define OP_API_INC_LEVEL2_ACLNN_REPLICATION_PAD2D_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1. */
ACLNN_API aclnnStatus aclnnReplicationPad2dGetWorkspaceSize(const aclTensor *self,
                                                            const aclIntArray *padding,
                                                            aclTensor *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);

/* Phase 2. */
ACLNN_API aclnnStatus aclnnReplicationPad2d(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_REPLICATION_PAD2D_H_ */
