/*
 * not_implemented.c - operators that CANN's multi-op headers declare but libaclnn does not
 * implement yet.
 *
 * aclnn_pad2d_backward.h declares aclnnReflectionPad2dBackward next to the
 * aclnnReplicationPad2dBackward libaclnn provides.  Defining them here keeps every declared symbol present (a program that
 * merely references them links), while a call fails cleanly: ACLNN_ERR_INNER (561000) with a
 * message in aclGetRecentErrMsg(), and no executor is created or written.
 */
#include "aclnnop/aclnn_pad2d_backward.h"

#include "exec/nn_exec.h"

static aclnnStatus not_implemented(const char *op_name)
{
    return nn_error(ACLNN_ERR_INNER, "%s: not implemented yet in libaclnn.", op_name);
}

/* ---- aclnnReflectionPad2dBackward (aclnn_pad2d_backward.h) ---- */

aclnnStatus aclnnReflectionPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                         const aclTensor *self,
                                                         const aclIntArray *padding,
                                                         aclTensor *gradInput,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor)
{
    (void)gradOutput; (void)self; (void)padding; (void)gradInput;
    (void)workspaceSize; (void)executor;
    return not_implemented("aclnnReflectionPad2dBackwardGetWorkspaceSize");
}

aclnnStatus aclnnReflectionPad2dBackward(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, const aclrtStream stream)
{
    (void)workspace; (void)workspaceSize; (void)executor; (void)stream;
    return not_implemented("aclnnReflectionPad2dBackward");
}
