/*
 * replication_pad2d_backward.c - aclnnReplicationPad2dBackward: the gradient of
 * aclnnReplicationPad2d with respect to its input.
 *
 *   gradInput[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)] += gradOutput[..., i, j]
 *
 * Phase 1 checks the arguments in CANN's order, records the geometry and chooses the arithmetic
 * of the selected product (choose_arithmetic); phase 2 gathers every gradInput row once from the
 * gradOutput rows that replicate it (kernels/pad/): the AVX-512 rows for fp32/fp16/bf16 when the
 * CPU table allows them, the portable rows otherwise, all in that arithmetic.  The launch trace
 * names the path.
 *
 * Precision (docs/precision.md): on Atlas A2/A3 fp32/fp16/bf16 follow the PadV3GradReplicate
 * kernel CANN's tiling picks (order of additions, fp16 roundings, copies that keep -0); elsewhere,
 * and for fp64/complex, every element from +0 in (row, column) order (ATen's order), fp16/bf16
 * accumulated in fp32 and rounded once, complex64 in double.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_pad2d_backward.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "kernels/pad/pad_bw.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnReplicationPad2dBackward"


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
                       false, 0, &nn_pad_bw_loops_portable};
    const nn_cpu_features *cpu = nn_cpu_features_get();
    ctx.avx512 = cpu->avx512 && nn_pad_bw_avx512_fits(&ctx);
    ctx.loops = cpu->avx2 ? &nn_pad_bw_loops_avx2 : &nn_pad_bw_loops_portable;
    nn_launch_set_path(launch, nn_pad_bw_short_fits(&ctx) ? "pad_bw_short_avx512"
                               : ctx.avx512                ? "pad_bw_avx512"
                               : cpu->avx2                 ? "pad_bw_avx2"
                                                           : "pad_bw_portable");
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

static aclnnStatus check_dtypes(const aclTensor *grad_out, const aclTensor *self,
                                const aclTensor *grad_in)
{
    const nn_product *pr = nn_product_row(NN_PR_REPLICATION_PAD2D_BACKWARD);
    aclnnStatus st = nn_check_product_dtype(OP, pr, "gradOutput", grad_out);
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, pr, "self", self);
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, pr, "gradInput", grad_in);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "gradOutput", grad_out, "self", self);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "gradInput", grad_in, "self", self);
    return st;
}

static aclnnStatus check_formats(const aclTensor *grad_out, const aclTensor *self,
                                 const aclTensor *grad_in)
{
    const nn_arg tensors[] = {NN_TENSOR_ARG("gradOutput", grad_out), NN_TENSOR_ARG("self", self),
                              NN_TENSOR_ARG("gradInput", grad_in)};
    for (size_t i = 0; i < NN_ARG_COUNT(tensors); i++) {
        const aclTensor *t = (const aclTensor *)tensors[i].handle;
        if (nn_format_is_private(t->format)) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Format only support ND, %s has %s.",
                            tensors[i].name, nn_format_name(t->format));
        }
    }
    return nn_check_same_format(OP, tensors, NN_ARG_COUNT(tensors));
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
    /* Stricter than CANN (docs/compatibility.md): no negative pads, no pad >= the dim it pads. */
    const uint64_t nd = self->ndim;
    const int64_t H = self->dims[nd - 2], W = self->dims[nd - 1];
    aclnnStatus st = nn_check_pad_values(OP, self, pad);
    if (st != ACLNN_SUCCESS) {
        return st;
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

/* op_api's padFlag (ops-math:conversion/pad_v3_grad_replicate/op_host/op_api/aclnn_pad2d_backward.cpp,
 * CheckPaddingValue): no H padding, or every pad <= 7.  Without it PadV3Grad runs on AI-CPU. */
static bool ai_core_padding(const pad_bwd_plan *plan)
{
    if (plan->top == 0 && plan->bottom == 0) {
        return true;
    }
    return plan->left <= 7 && plan->right <= 7 && plan->top <= 7 && plan->bottom <= 7;
}

/* The arithmetic of the product's kernel (pad_bw.h, pad_bw_arith).  On A2/A3 fp32/fp16 reach
 * PadV3GradReplicate as they are and bf16 as fp32 (op_api casts it, then casts the result back
 * with round to nearest even); the tiling key (ops-math:conversion/pad_v3_grad_replicate/op_host/
 * pad_v3_grad_replicate_tiling.cpp, GetTilingKey; H, W are gradOutput's) picks the kernel:
 *   W unpadded, H padded       _h.h        outermost first from +0, fp16 rounded once (CAST_RINT)
 *   H unpadded, W padded       _w.h        edge-first; fp16 edges rounded ties away (CAST_ROUND)
 *   H <= 64 and W <= 64        _h_w_mini.h edge-first, rows then columns, fp16 rounded once
 *   otherwise                  _small_h_large_w_f16.h, _large_h_small_w_f16.h, _h_w_large.h:
 *                              as mini, but fp16 row sums are stored as fp16 (CAST_RINT) before
 *                              the column pass, so corners are rounded twice
 * The outHeight == 1 kernel (_h_w.h) needs H > 64 with one gradInput row, i.e. a pad > 7 with H
 * padded, which op_api sends to AI-CPU: it is never chosen from aclnn. */
static void choose_arithmetic(const nn_product *pr, pad_bwd_plan *plan)
{
    const bool card_dtype = plan->kind == KIND_F32 || plan->kind == KIND_F16 || plan->kind == KIND_BF16;
    plan->arith = PAD_BW_ROW_MAJOR;
    if (!pr->pad_grad_replicate || !card_dtype || !ai_core_padding(plan)) {
        return;
    }
    const bool h_padded = plan->top != 0 || plan->bottom != 0;
    const bool w_padded = plan->left != 0 || plan->right != 0;
    const bool fp16 = plan->kind == KIND_F16;
    if (h_padded && !w_padded) {
        plan->arith = PAD_BW_OUTERMOST_FIRST;
        return;
    }
    plan->arith = PAD_BW_EDGE_FIRST;
    if (!h_padded && w_padded) {
        plan->edges_ties_away = fp16;
        return;
    }
    const bool mini = plan->Ho <= 64 && plan->Wo <= 64;
    plan->round_row_sums = fp16 && !mini;
}

aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                          const aclTensor *self,
                                                          const aclIntArray *padding,
                                                          aclTensor *gradInput,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", gradOutput), NN_TENSOR_ARG("self", self),
                           NN_ARRAY_ARG("padding", padding), NN_TENSOR_ARG("gradInput", gradInput)};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = check_dtypes(gradOutput, self, gradInput);
    if (status == ACLNN_SUCCESS) status = check_formats(gradOutput, self, gradInput);
    if (status == ACLNN_SUCCESS) status = check_shapes(gradOutput, self, padding, gradInput);
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
        return nn_finish_phase1(OP, &(nn_phase1_end){0}, workspaceSize, executor);
    }

    pad_bwd_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.planes = nd == 4 ? self->dims[0] * self->dims[1] : self->dims[0];
    plan.H = self->dims[nd - 2];
    plan.W = self->dims[nd - 1];
    plan.Ho = gradOutput->dims[nd - 2];
    plan.Wo = gradOutput->dims[nd - 1];
    plan.left = padding->values[0];
    plan.right = padding->values[1];
    plan.top = padding->values[2];
    plan.bottom = padding->values[3];
    plan.kind = kind_of(self->dtype);
    choose_arithmetic(nn_product_row(NN_PR_REPLICATION_PAD2D_BACKWARD), &plan);
    plan.block_rows = 2048 / (plan.Wo > 0 ? plan.Wo : 1);
    plan.block_rows = plan.block_rows < 1 ? 1 : (plan.block_rows > plan.H ? plan.H : plan.block_rows);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = pad_bwd_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {gradOutput, self}, .outputs = {gradInput},
                                             .input_names = {"gradOutput", "self"},
                                             .output_names = {"gradInput"}, .shape_only_inputs = 1u << 1,
                                             .computed_outputs = true},
                            workspaceSize, executor);
}

aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, const aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
