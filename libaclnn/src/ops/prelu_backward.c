/*
 * prelu_backward.c - aclnnPreluBackward.
 *
 *   gradInput[i]  = self[i] > 0 ? g[i] : w(c) * g[i]           (g = gradOutput broadcast to self)
 *   gradWeight[c] = sum over every axis but 1 of update[i], update[i] = self[i] > 0 ? 0 : self[i] * g[i]
 *                   (the sum of all elements when weight has a single value)
 *
 * computed as the card of the selected product computes them (choose_rule; the formulas are in
 * kernels/prelu/prelu.h): the card's update is a tensor of self's dtype, so every term is rounded
 * to fp16/bf16 before the fp32 sum, and the TBE kernel of A2/A3/910/310P spreads NaN from 0 * inf
 * (an infinite gradInput, gradOutput or weight).
 *
 * One fused pass reads self and g once, writes gradInput once and reduces the weight gradient on
 * the fly - no full-size temporary, no update tensor.  The arithmetic is fp32 with the card's
 * roundings to the dtype; gradWeight is the fp32 sum of the terms rounded once.
 *
 * Determinism: the tensor is cut into fixed-size BLOCKS whose shape depends only on the tensor
 * shape (never on the thread count).  Each block is summed by one thread in a fixed order (16
 * interleaved fp32 lanes folded in a fixed tree) into its own partial; after the parallel pass
 * the partials are added in block order.  So the bytes are the same for any ACLNN_NUM_THREADS.
 *
 * Blocks, with self viewed as [outer, C, inner]:
 *   plane mode (single weight, or inner >= PLANE_MIN): a block is a run of at most BLOCK_ELEMS
 *     elements of one (n, c) plane; one partial per block.
 *   row mode (per-channel weight, inner < PLANE_MIN): a block is R rows (n) x a group of
 *     channels; one partial per (block row group, channel).  With inner == 1 (channel-last)
 *     the per-channel sums are a vector add across channels.
 *
 * The kernels (the blocks, on staged or fused AVX2 loops) are in kernels/prelu/; phase 2 picks
 * one from the CPU table and names it in the launch trace.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_prelu_backward.h"
#include "exec/nn_exec.h"
#include "kernels/prelu/prelu.h"
#include "ops/products.h"
#include "ops/im2col_prelu_common.h"

#define OP "aclnnPreluBackward"
#define PRELU_MAX_DIMS 8
#define BLOCK_ELEMS NN_PRELU_BW_BLOCK_ELEMS
#define PLANE_MIN NN_PRELU_BW_PLANE_MIN
#define ROW_BLOCK_ELEMS NN_PRELU_BW_ROW_BLOCK_ELEMS
#define ROW_TILE_ELEMS NN_PRELU_BW_ROW_TILE_ELEMS
typedef nn_prelu_bw_plan prelu_bw_plan;
typedef nn_prelu_bw_ctx prelu_bw_ctx;

/* Adds the partials in block order into one fp32 sum per weight value. */
/* A NaN sum comes out as the positive quiet NaN: which NaN an add of two NaNs keeps depends
 * on its operand order, which compilers swap freely (an add is commutative for them) and the
 * vector tiers do not share, so only a canonical NaN is the same bits on every path. */
static void canonical_nans(float *grad_weight, int64_t channels)
{
    const uint32_t quiet_nan = 0x7fc00000u;
    for (int64_t c = 0; c < channels; c++) {
        if (grad_weight[c] != grad_weight[c]) memcpy(&grad_weight[c], &quiet_nan, sizeof quiet_nan);
    }
}

static void combine_partials(const prelu_bw_plan *p, const float *partials, float *grad_weight)
{
    for (int64_t c = 0; c < p->channels; c++) grad_weight[c] = 0.0f;
    if (p->plane_mode) {
        for (int64_t b = 0; b < p->num_partials; b++) {
            grad_weight[(b / p->chunks_per_plane) % p->channels] += partials[b];
        }
    } else {
        for (int64_t g = 0; g < p->row_groups; g++) {
            for (int64_t c = 0; c < p->channels; c++) {
                grad_weight[c] += partials[g * p->channels + c];
            }
        }
    }
}

/* The vector loops' dx factors per weight value (prelu.h): x > 0 gives 1 + 0*w (NaN for an
 * infinite or NaN w under the TBE rule, where the card multiplies the mask's 0 by w) and x <= 0
 * gives 0 + w (the card's 0 + 1*w turns w = -0 into +0); the select rule uses w itself. */
static void dx_factors(const prelu_bw_plan *p, const float *weight, float *pos_factor, float *neg_factor)
{
    const bool tbe = p->rule != NN_PRELU_BW_SELECT;
    for (int64_t c = 0; c < p->channels; c++) {
        pos_factor[c] = tbe ? 1.0f + 0.0f * weight[c] : 1.0f;
        neg_factor[c] = tbe ? 0.0f + weight[c] : weight[c];
    }
}

static aclnnStatus zero_grad_weight_kernel(const nn_launch *l)
{
    const prelu_bw_plan *p = (const prelu_bw_plan *)l->plan;
    memset(l->operands[0].data, 0, (size_t)p->grad_weight_numel * nn_dtype_size(p->dtype));
    return ACLNN_SUCCESS;
}

static aclnnStatus prelu_bw_kernel(const nn_launch *l)
{
    /* The intermediates saturate on a saturation-only product (frozen at phase 1) and on a
     * stream in saturation mode (this launch's, nn_launch.saturation). */
    prelu_bw_plan launch_plan = *(const prelu_bw_plan *)l->plan;
    launch_plan.saturate = launch_plan.saturate || l->saturation;
    const prelu_bw_plan *p = &launch_plan;
    unsigned char *scratch = (unsigned char *)l->scratch;
    const void *grad = l->operands[0].data;
    if (p->broadcast) {
        void *expanded = scratch + p->expand_offset;
        nn_copy_to_contiguous(expanded, grad, nn_dtype_size(p->dtype), p->ndim, p->self_dims,
                              p->grad_strides);
        grad = expanded;
    }
    float *weight = malloc((size_t)p->channels * 4 * sizeof(float));
    if (weight == NULL) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld fp32 weight values.",
                        (long long)p->channels);
    }
    float *grad_weight = weight + p->channels;
    float *pos_factor = grad_weight + p->channels, *neg_factor = pos_factor + p->channels;
    nn_to_f32_n(p->dtype, l->operands[2].data, weight, (size_t)p->channels);
    dx_factors(p, weight, pos_factor, neg_factor);

    /* The path (kernels/prelu/): fused loops for every layout, 16-lane AVX-512 ones when the CPU
     * table has that tier, else 8-lane AVX2 ones.  Streaming is decided on the bytes the launch
     * moves (self and gradOutput read, gradInput written), not on gradInput alone: the reads
     * passing through the cache evict gradInput before anyone could read it back.  On gradInput
     * alone the 2-D 4096x1024 fp16/bf16 case (8 MiB out, 24 MiB moved) wrote with read-for-
     * ownership and ran at about half the memory's bandwidth on an Intel Xeon
     * (docs/kernels_im2col_prelu.md). */
    const nn_cpu_features *cpu = nn_cpu_features_get();
    const bool vector = nn_prelu_bw_has_vector_loops(p);
    const bool avx512 = vector && cpu->avx512, avx2 = vector && cpu->avx2;
    const bool streaming = avx2 && nn_use_streaming_stores(3 * (uint64_t)p->numel * nn_dtype_size(p->dtype));
    prelu_bw_ctx ctx = {p, grad, l->operands[1].data, weight, pos_factor, neg_factor, l->operands[3].data,
                        (float *)(scratch + p->partial_offset), streaming, cpu->avx512bf16, cpu->avx512fp16,
                        {0, 0, 0}};
    nn_launch_set_path(l, avx512 ? "prelu_bw_avx512" : avx2 ? "prelu_bw_avx2" : "prelu_bw_portable");
    nn_claims_init(&ctx.claims, p->num_blocks, 8, 1); /* claims of ~1/8 of a thread's share */
    nn_parallel_for(p->num_blocks, 1,
                    avx512 ? nn_prelu_bw_blocks_avx512 : avx2 ? nn_prelu_bw_blocks_avx2 : nn_prelu_bw_blocks_portable,
                    &ctx);
    combine_partials(p, ctx.partials, grad_weight);
    canonical_nans(grad_weight, p->channels);
    nn_from_f32_n(p->dtype, grad_weight, l->operands[4].data, (size_t)p->channels);
    free(weight);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtypes(const aclTensor *gradOutput, const aclTensor *self,
                                const aclTensor *weight, const aclTensor *gradInput,
                                const aclTensor *gradWeight)
{
    aclnnStatus st = nn_check_product_dtype(OP, nn_product_row(NN_PR_PRELU_BACKWARD), "self", self);
    if (st != ACLNN_SUCCESS) return st;
    const aclTensor *others[4] = {gradOutput, weight, gradInput, gradWeight};
    const char *names[4] = {"gradOutput", "weight", "gradInput", "gradWeight"};
    for (int i = 0; i < 4; i++) {
        if (others[i]->dtype != self->dtype) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected %s to have the same dtype as "
                            "self, expected dtype is %s but found %s.", names[i],
                            nn_dtype_name(self->dtype), nn_dtype_name(others[i]->dtype));
        }
    }
    return ACLNN_SUCCESS;
}

static bool same_dims(uint64_t nd_a, const int64_t *a, uint64_t nd_b, const int64_t *b)
{
    if (nd_a != nd_b) return false;
    for (uint64_t i = 0; i < nd_a; i++) {
        if (a[i] != b[i]) return false;
    }
    return true;
}

static aclnnStatus shape_mismatch(const char *name, const aclTensor *t, uint64_t nd,
                                  const int64_t *expected)
{
    char want[256], got[256];
    return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected tensor for %s to have size %s, but "
                    "got %s.", name, nn_shape_str(want, sizeof want, nd, expected),
                    nn_shape_str(got, sizeof got, t->ndim, t->dims));
}

/* numpy broadcasting of self with gradOutput must give exactly self's shape. */
static aclnnStatus check_broadcast(const aclTensor *self, const aclTensor *grad)
{
    const uint64_t nd = self->ndim > grad->ndim ? self->ndim : grad->ndim;
    int64_t shape[NN_MAX_DIMS];
    char a[256], b[256], c[256];
    for (uint64_t i = 0; i < nd; i++) {
        const int64_t s = i + self->ndim >= nd ? self->dims[i + self->ndim - nd] : 1;
        const int64_t g = i + grad->ndim >= nd ? grad->dims[i + grad->ndim - nd] : 1;
        if (s != g && s != 1 && g != 1) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": the size of tensor self %s must match "
                            "the size of tensor gradOutput %s (broadcast failed at dimension "
                            "%llu).", nn_shape_str(a, sizeof a, self->ndim, self->dims),
                            nn_shape_str(b, sizeof b, grad->ndim, grad->dims),
                            (unsigned long long)i);
        }
        shape[i] = s == 1 ? g : s;
    }
    if (!same_dims(nd, shape, self->ndim, self->dims)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": the broadcastShape%s of gradOutput and self "
                        "must be equal with selfShape%s.", nn_shape_str(c, sizeof c, nd, shape),
                        nn_shape_str(a, sizeof a, self->ndim, self->dims));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_shapes(const aclTensor *gradOutput, const aclTensor *self,
                                const aclTensor *weight, const aclTensor *gradInput,
                                const aclTensor *gradWeight)
{
    const aclTensor *all[5] = {gradOutput, self, weight, gradInput, gradWeight};
    const char *names[5] = {"gradOutput", "self", "weight", "gradInput", "gradWeight"};
    for (int i = 0; i < 5; i++) {
        if (all[i]->ndim > PRELU_MAX_DIMS) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected %s to have at most %d "
                            "dimensions, but got %llu.", names[i], PRELU_MAX_DIMS,
                            (unsigned long long)all[i]->ndim);
        }
    }
    if (!same_dims(gradInput->ndim, gradInput->dims, self->ndim, self->dims)) {
        return shape_mismatch("gradInput", gradInput, self->ndim, self->dims);
    }
    const int64_t weight_numel = nn_tensor_numel(weight);
    if (weight_numel != 1) {
        if (self->ndim < 1) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected self to have at least 1 "
                            "dimension when weight has %lld elements, but got 0.",
                            (long long)weight_numel);
        }
        const int64_t channels = self->ndim > 1 ? self->dims[1] : 1;
        if (weight_numel != channels) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": the number of weight elements must be 1 "
                            "or self channel size %lld, but got %lld.", (long long)channels,
                            (long long)weight_numel);
        }
        if (!same_dims(gradWeight->ndim, gradWeight->dims, 1, &channels)) {
            return shape_mismatch("gradWeight", gradWeight, 1, &channels);
        }
    } else if (!same_dims(gradWeight->ndim, gradWeight->dims, weight->ndim, weight->dims)) {
        return shape_mismatch("gradWeight", gradWeight, weight->ndim, weight->dims);
    }
    return check_broadcast(self, gradOutput);
}

/* The card's arithmetic on the selected product (docs/precision.md, "PreluBackward"): the 950
 * runs the AscendC arch35 PReluGradUpdate (selects), the others the TBE prelu_grad_update,
 * whose `after_v200()` branch (tik.vcopy: the v200 and v220 cores, 310P and A2/A3) builds its
 * factors from the x > 0 mask and whose other branch (the Ascend910's v100 core) from min/max
 * scaling.  Ascend910 and Ascend310P only have saturation mode. */
static void choose_rule(prelu_bw_plan *p)
{
    const nn_soc soc = nn_soc_current();
    p->rule = soc == NN_SOC_ASCEND950 ? NN_PRELU_BW_SELECT
              : soc == NN_SOC_ASCEND910 ? NN_PRELU_BW_TBE_PRE_V200 : NN_PRELU_BW_TBE;
    p->saturate = nn_overflow_saturation_only();
}

/* Chooses the blocks (see the file comment); depends on the shape only. */
static void plan_blocks(prelu_bw_plan *p)
{
    p->plane_mode = p->channels == 1 || p->inner >= PLANE_MIN;
    if (p->plane_mode) {
        p->chunks_per_plane = (p->inner + BLOCK_ELEMS - 1) / BLOCK_ELEMS;
        p->num_blocks = p->outer * p->channels * p->chunks_per_plane;
        p->num_partials = p->num_blocks;
        return;
    }
    const int64_t row = p->channels * p->inner;
    p->channels_per_tile = row <= ROW_TILE_ELEMS ? p->channels
                                                 : (ROW_TILE_ELEMS / p->inner > 0 ? ROW_TILE_ELEMS / p->inner : 1);
    const int64_t tile_row = p->channels_per_tile * p->inner;
    p->rows_per_block = ROW_BLOCK_ELEMS / tile_row > 0 ? ROW_BLOCK_ELEMS / tile_row : 1;
    p->row_groups = (p->outer + p->rows_per_block - 1) / p->rows_per_block;
    p->channel_groups = (p->channels + p->channels_per_tile - 1) / p->channels_per_tile;
    p->num_blocks = p->row_groups * p->channel_groups;
    p->num_partials = p->row_groups * p->channels;
}

static void plan_broadcast(prelu_bw_plan *p, const aclTensor *self, const aclTensor *grad)
{
    p->ndim = self->ndim;
    memcpy(p->self_dims, self->dims, sizeof(int64_t) * self->ndim);
    p->broadcast = nn_tensor_numel(grad) != p->numel;
    if (!p->broadcast) return;
    /* Contiguous strides of gradOutput, aligned right against self's dims; 0 where broadcast. */
    int64_t stride = 1;
    for (uint64_t k = 0; k < self->ndim; k++) {
        const uint64_t i = self->ndim - 1 - k;
        if (k < grad->ndim) {
            const int64_t gdim = grad->dims[grad->ndim - 1 - k];
            p->grad_strides[i] = (gdim == 1 && self->dims[i] != 1) ? 0 : stride;
            stride *= gdim;
        } else {
            p->grad_strides[i] = 0;
        }
    }
}

aclnnStatus aclnnPreluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                               const aclTensor *weight, aclTensor *gradInput,
                                               aclTensor *gradWeight, uint64_t *workspaceSize,
                                               aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", gradOutput), NN_TENSOR_ARG("self", self),
                           NN_TENSOR_ARG("weight", weight),         NN_TENSOR_ARG("gradInput", gradInput),
                           NN_TENSOR_ARG("gradWeight", gradWeight)};
    aclnnStatus st = nn_check_args(OP, args, NN_ARG_COUNT(args));
    if (st == ACLNN_SUCCESS) st = check_dtypes(gradOutput, self, weight, gradInput, gradWeight);
    if (st == ACLNN_SUCCESS) st = check_shapes(gradOutput, self, weight, gradInput, gradWeight);
    /* CANN dereferences both without a check (docs/compatibility.md). */
    if (st == ACLNN_SUCCESS) st = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (st != ACLNN_SUCCESS) return st;

    prelu_bw_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.dtype = self->dtype;
    choose_rule(&plan);
    plan.numel = nn_tensor_numel(self);
    plan.grad_weight_numel = nn_tensor_numel(gradWeight);
    plan.empty = nn_tensor_is_empty(gradOutput) || nn_tensor_is_empty(self) ||
                 nn_tensor_is_empty(weight);
    if (plan.empty) {
        /* CANN leaves gradWeight untouched here; we write the zeros PyTorch gives (see
         * docs/compatibility.md). */
        const bool write = plan.grad_weight_numel > 0;
        return nn_finish_phase1(OP,
                                &(nn_phase1_end){.kernel = write ? zero_grad_weight_kernel : NULL, .plan = &plan,
                                                 .plan_size = sizeof plan, .outputs = {write ? gradWeight : NULL}},
                                workspaceSize, executor);
    }

    if (nn_tensor_numel(weight) == 1) {
        plan.outer = 1;
        plan.channels = 1;
        plan.inner = plan.numel;
    } else {
        plan.outer = self->dims[0];
        plan.channels = self->dims[1];
        plan.inner = 1;
        for (uint64_t i = 2; i < self->ndim; i++) plan.inner *= self->dims[i];
    }
    plan_blocks(&plan);
    plan_broadcast(&plan, self, gradOutput);
    const uint64_t expand_bytes = plan.broadcast ? (uint64_t)plan.numel * nn_dtype_size(plan.dtype) : 0;
    plan.expand_offset = 0;
    plan.partial_offset = (expand_bytes + 63) & ~(uint64_t)63;

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = prelu_bw_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {gradOutput, self, weight}, .outputs = {gradInput, gradWeight},
                                             .input_names = {"gradOutput", "self", "weight"},
                                             .output_names = {"gradInput", "gradWeight"}, .computed_outputs = true,
                                             .scratch_bytes = plan.partial_offset +
                                                              (uint64_t)plan.num_partials * sizeof(float)},
                            workspaceSize, executor);
}

aclnnStatus aclnnPreluBackward(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                               aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspace_size, executor, stream);
}
