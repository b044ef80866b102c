/*
 * not_implemented.c - operators that CANN's multi-op headers declare but libaclnn does not
 * implement yet.
 *
 * aclnn_pad2d_backward.h, aclnn_max_pool2d_with_indices.h and
 * aclnn_max_pool2d_with_indices_backward.h each declare a second operator next to the one
 * libaclnn provides.  Defining them here keeps every declared symbol present (a program that
 * merely references them links), while a call fails cleanly: ACLNN_ERR_INNER (561000) with a
 * message in aclGetRecentErrMsg(), and no executor is created or written.
 */
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_pad2d_backward.h"

#include "core/nn_core.h"

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

/* ---- aclnnMaxPool2dWithIndices (aclnn_max_pool2d_with_indices.h) ---- */

aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor *self,
                                                      const aclIntArray *kernelSize,
                                                      const aclIntArray *stride,
                                                      const aclIntArray *padding,
                                                      const aclIntArray *dilation, bool ceilMode,
                                                      aclTensor *out, aclTensor *indices,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor)
{
    (void)self; (void)kernelSize; (void)stride; (void)padding; (void)dilation; (void)ceilMode;
    (void)out; (void)indices; (void)workspaceSize; (void)executor;
    return not_implemented("aclnnMaxPool2dWithIndicesGetWorkspaceSize");
}

aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream)
{
    (void)workspace; (void)workspaceSize; (void)executor; (void)stream;
    return not_implemented("aclnnMaxPool2dWithIndices");
}

/* ---- aclnnMaxPool2dWithIndicesBackward (aclnn_max_pool2d_with_indices_backward.h) ---- */

aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
    const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    (void)gradOutput; (void)self; (void)indices; (void)kernelSize; (void)stride; (void)padding;
    (void)dilation; (void)ceilMode; (void)gradInput; (void)workspaceSize; (void)executor;
    return not_implemented("aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize");
}

aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream)
{
    (void)workspace; (void)workspaceSize; (void)executor; (void)stream;
    return not_implemented("aclnnMaxPool2dWithIndicesBackward");
}
