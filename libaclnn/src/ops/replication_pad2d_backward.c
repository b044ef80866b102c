/*
 * replication_pad2d_backward.c - aclnnReplicationPad2dBackward: the gradient of
 * aclnnReplicationPad2d with respect to its input.
 *
 *   gradInput[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)] += gradOutput[..., i, j]
 *
 * Phase 1 checks the arguments in CANN's order and records the geometry; phase 2 gathers every
 * gradInput row once from the gradOutput rows that replicate it (kernels/pad/): the AVX-512 rows
 * for fp32/fp16/bf16 when the CPU table allows them, the portable rows otherwise.  Per element
 * the contributions are added in (row, column) order from +0 on either (ATen's order for
 * fp32/fp64: bit-identical to PyTorch).  The launch trace names the path.
 *
 * Precision: fp16/bf16 are accumulated in fp32 and rounded once; complex64 in double.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_pad2d_backward.h"
#include "exec/nn_exec.h"
#include "kernels/pad/pad_bw.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnReplicationPad2dBackward"

static const aclDataType pad_bwd_dtypes[] = {
    ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128,
};
#define NUM_PAD_BWD_DTYPES (sizeof pad_bwd_dtypes / sizeof pad_bwd_dtypes[0])

/* ---------------------------------------------------------------------------------------- */
/* Phase 2                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus pad_bwd_kernel(const nn_launch *launch)
{
    const pad_bwd_plan *p = (const pad_bwd_plan *)launch->plan;
    /* operands: 0 gradOutput, 1 self (shape only), 2 gradInput */
    pad_bwd_ctx ctx = {p, launch->operands[0].data, launch->operands[2].data,
                       nn_use_streaming_stores((uint64_t)launch->operands[2].numel *
                                               nn_dtype_size(launch->operands[2].dtype)),
                       false, 0};
    ctx.avx512 = nn_cpu_avx512() && nn_pad_bw_avx512_fits(&ctx);
    nn_launch_set_path(launch, ctx.avx512 ? "pad_bw_avx512" : "pad_bw_portable");
    const int64_t blocks_per_plane = (p->H + p->block_rows - 1) / p->block_rows;
    const int64_t items = p->planes * blocks_per_plane;
    const double elem = (double)nn_dtype_size(launch->operands[0].dtype);
    const double item_bytes = (double)(p->W + p->Wo) * (double)p->block_rows * elem;
    nn_parallel_for(items, nn_pu_grain(items, item_bytes), nn_pad_bw_items, &ctx);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the widened row buffers.");
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtype_in_list(const aclTensor *t, const char *name)
{
    if (nn_pu_dtype_in(t->dtype, pad_bwd_dtypes, NUM_PAD_BWD_DTYPES)) {
        return ACLNN_SUCCESS;
    }
    char list[128];
    return nn_error(ACLNN_ERR_PARAM_INVALID,
                    OP ": Tensor %s not implemented for %s, should be in dtype support list [%s].",
                    name, nn_dtype_name(t->dtype),
                    nn_pu_dtype_list_str(list, sizeof list, pad_bwd_dtypes, NUM_PAD_BWD_DTYPES));
}

static aclnnStatus check_dtypes(const aclTensor *grad_out, const aclTensor *self,
                                const aclTensor *grad_in)
{
    aclnnStatus status = check_dtype_in_list(grad_out, "gradOutput");
    if (status == ACLNN_SUCCESS) {
        status = check_dtype_in_list(self, "self");
    }
    if (status == ACLNN_SUCCESS) {
        status = check_dtype_in_list(grad_in, "gradInput");
    }
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    if (grad_out->dtype != self->dtype) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradOutput dtype must equal self dtype %s, got %s.",
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_out->dtype));
    }
    if (grad_in->dtype != self->dtype) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradInput dtype must equal self dtype %s, got %s.",
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_in->dtype));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_formats(const aclTensor *grad_out, const aclTensor *self,
                                 const aclTensor *grad_in)
{
    const aclTensor *tensors[3] = {grad_out, self, grad_in};
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    for (int i = 0; i < 3; i++) {
        if (nn_format_is_private(tensors[i]->format)) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Format only support ND, %s has %s.",
                            names[i], nn_format_name(tensors[i]->format));
        }
    }
    if (grad_out->format != self->format || grad_out->format != grad_in->format) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Format of input and output should be equal, gradOutput [%s], self [%s], "
                        "gradInput [%s].", nn_format_name(grad_out->format),
                        nn_format_name(self->format), nn_format_name(grad_in->format));
    }
    return ACLNN_SUCCESS;
}

/* CANN's AI-core restriction for BF16: pads >= 0, and either no H padding or every pad <= 7. */
static bool bf16_padding_supported(const int64_t *pad)
{
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) {
        return false;
    }
    if (pad[2] == 0 && pad[3] == 0) {
        return true;
    }
    return pad[0] <= 7 && pad[1] <= 7 && pad[2] <= 7 && pad[3] <= 7;
}

static aclnnStatus check_shapes(const aclTensor *grad_out, const aclTensor *self,
                                const aclIntArray *padding, const aclTensor *grad_in)
{
    char a[128], b[128];
    if (self->ndim != grad_in->ndim ||
        memcmp(self->dims, grad_in->dims, self->ndim * sizeof(int64_t)) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Expected tensor for gradInput to have same size as tensor for self %s, "
                        "but got %s.", nn_shape_str(a, sizeof a, self->ndim, self->dims),
                        nn_shape_str(b, sizeof b, grad_in->ndim, grad_in->dims));
    }
    if (self->ndim < 3 || self->ndim > 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self must be 3-D or 4-D, got %llu-D %s.",
                        (unsigned long long)self->ndim,
                        nn_shape_str(a, sizeof a, self->ndim, self->dims));
    }
    if (grad_out->ndim != self->ndim) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradOutput, self, gradInput dim should be same: gradOutput is %llu-D, "
                        "self is %llu-D.", (unsigned long long)grad_out->ndim,
                        (unsigned long long)self->ndim);
    }
    if (padding->size != 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": padding length should be 4, but got %llu.",
                        (unsigned long long)padding->size);
    }
    const int64_t *pad = padding->values;
    if (self->dtype == ACL_BF16 && !bf16_padding_supported(pad)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": bf16 only supports h dim no pad or padding values less than or equal "
                        "to 7, got padding [%lld, %lld, %lld, %lld].", (long long)pad[0],
                        (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    }
    /* Stricter than CANN (decision 7): no negative pads, no pad >= the dim it pads. */
    const uint64_t nd = self->ndim;
    const int64_t H = self->dims[nd - 2], W = self->dims[nd - 1];
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding values must be >= 0, got [%lld, %lld, %lld, %lld].",
                        (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    }
    if (W > 0 && (pad[0] >= W || pad[1] >= W)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding left/right must be less than the width of self (%lld), "
                        "got [%lld, %lld].", (long long)W, (long long)pad[0], (long long)pad[1]);
    }
    if (H > 0 && (pad[2] >= H || pad[3] >= H)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding top/bottom must be less than the height of self (%lld), "
                        "got [%lld, %lld].", (long long)H, (long long)pad[2], (long long)pad[3]);
    }
    /* CANN checks the last two dims; we also require the leading dims to match self's. */
    int64_t expected[4];
    memcpy(expected, self->dims, nd * sizeof(int64_t));
    bool overflow = __builtin_add_overflow(H, pad[2] + pad[3], &expected[nd - 2]) ||
                    __builtin_add_overflow(W, pad[0] + pad[1], &expected[nd - 1]);
    if (overflow || memcmp(expected, grad_out->dims, nd * sizeof(int64_t)) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": wrong gradOutput shape: expected %s (self padded by [%lld, %lld, %lld, "
                        "%lld]), got %s.", nn_shape_str(a, sizeof a, nd, expected),
                        (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3],
                        nn_shape_str(b, sizeof b, grad_out->ndim, grad_out->dims));
    }
    return ACLNN_SUCCESS;
}

static int kind_of(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return KIND_F32;
    case ACL_DOUBLE: return KIND_F64;
    case ACL_COMPLEX128: return KIND_C128;
    case ACL_FLOAT16: return KIND_F16;
    case ACL_BF16: return KIND_BF16;
    default: return KIND_C64;
    }
}

aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                          const aclTensor *self,
                                                          const aclIntArray *padding,
                                                          aclTensor *gradInput,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor)
{
    aclnnStatus result_ptrs = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (result_ptrs != ACLNN_SUCCESS) {
        return result_ptrs;
    }
    if (gradOutput == NULL) {
        return nn_null_tensor(OP, "gradOutput");
    }
    if (self == NULL) {
        return nn_null_tensor(OP, "self");
    }
    if (padding == NULL) {
        return nn_null_array(OP, "padding");
    }
    if (gradInput == NULL) {
        return nn_null_tensor(OP, "gradInput");
    }
    aclnnStatus status = check_dtypes(gradOutput, self, gradInput);
    if (status == ACLNN_SUCCESS) {
        status = check_formats(gradOutput, self, gradInput);
    }
    if (status == ACLNN_SUCCESS) {
        status = check_shapes(gradOutput, self, padding, gradInput);
    }
    if (status != ACLNN_SUCCESS) {
        return status;
    }

    const uint64_t nd = self->ndim;
    if (nn_tensor_is_empty(gradOutput) || nn_tensor_is_empty(self) || nn_tensor_is_empty(gradInput)) {
        /* CANN (replication mode): a 3-D self may never be empty; a 4-D one only with N == 0. */
        if (nd == 3 || self->dims[1] == 0 || self->dims[2] == 0 || self->dims[3] == 0) {
            char shape[128];
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            OP ": Input should not be empty: self %s (only a 4-D self with N == 0 "
                            "may be empty).", nn_shape_str(shape, sizeof shape, nd, self->dims));
        }
        aclOpExecutor *ex = nn_executor_create(OP, NULL, NULL, 0);
        if (ex == NULL) {
            return ACLNN_ERR_INNER_CREATE_EXECUTOR;
        }
        return nn_executor_finish(ex, workspaceSize, executor);
    }

    pad_bwd_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.planes = nd == 4 ? self->dims[0] * self->dims[1] : self->dims[0];
    plan.H = self->dims[nd - 2];
    plan.W = self->dims[nd - 1];
    plan.Ho = gradOutput->dims[nd - 2];
    plan.Wo = gradOutput->dims[nd - 1];
    plan.left = padding->values[0];
    plan.top = padding->values[2];
    plan.bottom = padding->values[3];
    plan.kind = kind_of(self->dtype);
    plan.block_rows = 2048 / (plan.Wo > 0 ? plan.Wo : 1);
    plan.block_rows = plan.block_rows < 1 ? 1 : (plan.block_rows > plan.H ? plan.H : plan.block_rows);

    aclOpExecutor *ex = nn_executor_create(OP, pad_bwd_kernel, &plan, sizeof plan);
    if (ex == NULL) {
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    nn_executor_add_input(ex, gradOutput);
    nn_executor_add_input(ex, self);
    nn_executor_add_output(ex, gradInput);
    return nn_executor_finish(ex, workspaceSize, executor);
}

aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, const aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
