/*
 * aclnnMaxPool2dWithMaskBackward: the gradient of aclnnMaxPool2dWithMask given its mask
 * (docs/compatibility.md, MaxPool2dWithMask).
 *
 *   gradInput[n,c,ih,iw] = sum of gradOutput[n,c,oh,ow] over the outputs whose recorded argmax
 *                          (int32 ih*W+iw read from the head of the INT8 mask) is (ih, iw)
 *
 * Phase 1 checks the arguments in CANN's order and picks the kernel path from the geometry and
 * the CPU table (kernels/max_pool/):
 *   1x1 kernel                               a strided copy; the mask is not read (as on the device)
 *   3x3, stride 2, padding <= 1, AVX-512     the slots (max_pool_bw_avx512.c)
 *   2x2, stride 2, no padding, AVX-512/AVX2  the direct write (max_pool_bw_avx512.c / _avx2.c)
 *   otherwise (and for any plane a fast path gives up on: an index outside its window)
 *                                            the fp32 tile scatter (max_pool_bw_portable.c)
 * On Ascend910 (the product's row) the mask is the V1 bit mask instead, decoded by
 * kernels/max_pool/mask_v1.c for every kernel but 1x1, and FLOAT is computed as FLOAT16.
 * Every path adds each gradInput element's contributions in increasing output position in fp32
 * and rounds once, so they give the same bits (and for fp32 PyTorch's).  Every index is
 * bounds-checked; a bad one is skipped and the launch fails, so the stream reports it at
 * synchronize.  The launch trace names the path.
 *
 * The same header declares aclnnMaxPool2dWithIndicesBackward (PyTorch-style indices with
 * gradOutput's shape), defined here too.  Its product row says the indices dtypes (A2/A3: INT32,
 * or INT8, which has no device kernel and fails at launch; Ascend950: INT32/INT64), and what
 * Ascend950 adds: dilation > 0 (the scatter does not depend on it; the fast paths are not used)
 * and NHWC (the NHWC scatter).
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "exec/nn_exec.h"
#include "ops/products.h"
#include "kernels/max_pool/max_pool_bw.h"
#include "ops/max_pool_common.h"
#include "kernels/max_pool/mask_v1.h"

#if defined(__has_include)
#if __has_include("aclnnop/aclnn_max_pool2d_with_indices_backward.h")
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#endif
#endif

#define MP_EXPORT __attribute__((visibility("default")))


static const char OP_MASK[] = "aclnnMaxPool2dWithMaskBackward";
#define OP_INDICES "aclnnMaxPool2dWithIndicesBackward"

enum { OPD_GRAD_OUTPUT = 0, OPD_SELF = 1, OPD_INDICES = 2, OPD_GRAD_INPUT = 3 };

/* ------------------------------------------------------------------------------------------ */
/* Phase 2                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static aclnnStatus backward_kernel(const nn_launch *l)
{
    const bw_plan *p = (const bw_plan *)l->plan;
    const mp_geometry *g = &p->g;
    bw_ctx c;
    c.plan = p;
    c.grad_out = (const unsigned char *)l->operands[OPD_GRAD_OUTPUT].data;
    c.indices = (const unsigned char *)l->operands[OPD_INDICES].data;
    c.grad_in = (unsigned char *)l->operands[OPD_GRAD_INPUT].data;
    c.scratch = (float *)l->scratch;
    atomic_init(&c.first_bad, INT64_MAX);
    if (p->no_binary)
        return nn_error(ACLNN_ERR_INNER, "%s: Cannot find binary for op MaxPool3DGradWithArgmax: its argmax input "
                        "takes int32 only, got INT8 indices (accepted by the argument checks, as CANN's op_api does; "
                        "the device kernel exists for int32). gradInput was not written.", l->op_name);
    nn_launch_set_path(l, nn_mp_bw_path(p));
    if (p->mask_ignored) {
        nn_parallel_for(mp_planes(g), 1, nn_mp_bw_1x1_planes, &c);
        if (p->fp16_compute) nn_parallel_for(mp_planes(g), 1, nn_mp_bw_round_fp16_planes, &c);
        return ACLNN_SUCCESS;
    }
    if (p->v1_mask) { /* bits naming padding cells are dropped: nothing to report */
        nn_parallel_for(p->chunks, 1, nn_mp_bw_v1_chunks, &c);
        return ACLNN_SUCCESS;
    }
    nn_claims_init(&c.claims, mp_planes(g), 16, 1); /* ~1/16 of a thread's share */
    nn_parallel_for(p->chunks, 1, nn_mp_bw_chunks, &c);
    const int64_t bad = atomic_load(&c.first_bad);
    if (bad == INT64_MAX) return ACLNN_SUCCESS;

    const int64_t P = g->out_height * g->out_width;
    const int64_t plane = bad / P, at = bad % P, offset = mp_out_offset(g, plane, at);
    int64_t value;
    if (p->indices_int64) {
        memcpy(&value, c.indices + offset * 8, 8);
    } else {
        int32_t v32;
        memcpy(&v32, c.indices + offset * 4, 4);
        value = v32;
    }
    const bool with_indices = strcmp(l->op_name, OP_INDICES) == 0;
    return nn_error(ACL_ERROR_RT_AICORE_EXCEPTION,
                    "%s: indices holds argmax %lld for output (n=%lld, c=%lld, oh=%lld, ow=%lld), outside the "
                    "input plane [0, %lld) (H=%lld, W=%lld); %s with these arguments. That gradient was dropped.",
                    l->op_name, (long long)value, (long long)(plane / g->channels), (long long)(plane % g->channels),
                    (long long)(at / g->out_width), (long long)(at % g->out_width),
                    (long long)(g->height * g->width), (long long)g->height, (long long)g->width,
                    with_indices ? "the indices do not come from aclnnMaxPool2dWithIndices"
                                 : "the mask does not come from aclnnMaxPool2dWithMask");
}

/* ------------------------------------------------------------------------------------------ */
/* Phase 1                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Every handle for NULL, in the order of CANN's full check. */
static aclnnStatus check_nulls(const char *op, const aclTensor *grad_output, const aclTensor *self,
                               const aclTensor *indices, const aclIntArray *kernel, const aclIntArray *stride,
                               const aclIntArray *padding, const aclIntArray *dilation, const aclTensor *grad_input)
{
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", grad_output), NN_TENSOR_ARG("self", self),
                           NN_TENSOR_ARG("indices", indices),        NN_ARRAY_ARG("kernelSize", kernel),
                           NN_ARRAY_ARG("stride", stride),           NN_ARRAY_ARG("padding", padding),
                           NN_ARRAY_ARG("dilation", dilation),       NN_TENSOR_ARG("gradInput", grad_input)};
    return nn_check_args(op, args, NN_ARG_COUNT(args));
}

static aclnnStatus check_dtypes(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                const aclTensor *indices, const aclTensor *grad_input, bool is_mask)
{
    const nn_arg like_self[] = {NN_TENSOR_ARG("gradOutput", grad_output), NN_TENSOR_ARG("gradInput", grad_input)};
    const nn_product *pr =
        nn_product_row(is_mask ? NN_PR_MAX_POOL2D_WITH_MASK_BACKWARD : NN_PR_MAX_POOL2D_WITH_INDICES_BACKWARD);
    return mp_check_dtypes(op, pr, self, like_self, NN_ARG_COUNT(like_self), indices, is_mask);
}

static aclnnStatus check_rank(const char *op, const char *name, const aclTensor *t)
{
    if (t->ndim == 3 || t->ndim == 4) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be a 3-D or 4-D tensor, got %llu-D.", op, name,
                    (unsigned long long)t->ndim);
}

static aclnnStatus check_formats(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                 const aclTensor *indices, const aclTensor *grad_input, bool nhwc)
{
    if (self->format != grad_output->format || self->format != grad_input->format)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: self, gradOutput and gradInput must have the same format, got self %s, gradOutput %s, "
                        "gradInput %s.",
                        op, nn_format_name(self->format), nn_format_name(grad_output->format),
                        nn_format_name(grad_input->format));
    const aclTensor *all[4] = {self, grad_input, grad_output, indices};
    const char *names[4] = {"self", "gradInput", "gradOutput", "indices"};
    for (int i = 0; i < 4; ++i)
        if (nn_format_is_private(all[i]->format))
            return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s format must be %s, got %s.", op, names[i],
                            nhwc ? "ND, NCHW or NHWC" : "ND or NCHW", nn_format_name(all[i]->format));
    aclnnStatus st;
    for (int i = 0; i < 4; ++i)
        if ((st = check_rank(op, names[i], all[i])) != ACLNN_SUCCESS) return st;
    return ACLNN_SUCCESS;
}

/* The V1 mask's N*C1*kH*kW rows must fit in the container (CANN does not check its shape; the
 * kernel reads these rows). */
static aclnnStatus check_v1_mask_size(const char *op, const aclTensor *indices, const mp_geometry *g)
{
    const int64_t have = nn_tensor_numel(indices) * (int64_t)nn_dtype_size(indices->dtype);
    const int64_t need = mp_v1_mask_bytes(g);
    if (have >= need) return ACLNN_SUCCESS;
    char got[160];
    nn_shape_str(got, sizeof got, indices->ndim, indices->dims);
    return nn_error(ACLNN_ERR_PARAM_INVALID,
                    "%s: indices must hold at least %lld bytes (the V1 bit mask: N*ceil(C/16)*kH*kW = %lld rows "
                    "of %lld bytes), got shape %s = %lld bytes.",
                    op, (long long)need, (long long)(mp_channel_groups(g) * g->kernel_h * g->kernel_w),
                    (long long)mp_mask_row_bytes(g), got, (long long)have);
}

static aclnnStatus check_and_plan(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                  const aclTensor *indices, const aclIntArray *kernel, const aclIntArray *stride,
                                  const aclIntArray *padding, const aclIntArray *dilation, bool ceil_mode,
                                  const aclTensor *grad_input, bool is_mask, bw_plan *plan)
{
    aclnnStatus st = check_dtypes(op, grad_output, self, indices, grad_input, is_mask);
    if (st != ACLNN_SUCCESS) return st;
    /* The product's row: what its WithIndices grad kernel takes beyond the A2 one (Ascend950:
     * dilation, NHWC, planes past INT_MAX; no mask row has any of it), the mask's layout and casts. */
    const nn_product *pr =
        nn_product_row(is_mask ? NN_PR_MAX_POOL2D_WITH_MASK_BACKWARD : NN_PR_MAX_POOL2D_WITH_INDICES_BACKWARD);
    if ((st = check_formats(op, grad_output, self, indices, grad_input, pr->nhwc)) != ACLNN_SUCCESS) return st;
    mp_attrs attrs = {0};
    if ((st = mp_check_attrs(op, kernel, stride, padding, dilation, pr->any_dilation, &attrs)) != ACLNN_SUCCESS)
        return st;
    if (!mp_shape_equals(grad_input, self->ndim, self->dims))
        return mp_shape_error(op, "gradInput", grad_input, self->ndim, self->dims);
    mp_geometry g = {0};
    const bool nhwc = pr->nhwc && self->format == ACL_FORMAT_NHWC;
    if ((st = mp_check_pooled_geometry(op, self, &attrs, ceil_mode, nhwc, &g)) != ACLNN_SUCCESS) return st;
    /* (CANN's "pad <= effective kernel / 2" check sits here; the effective kernel (k-1)*d+1 is at
     * least k, so after the pad <= k/2 check above it can never fire.) */
    if ((st = mp_check_out_size(op, &g, pr->large_planes)) != ACLNN_SUCCESS) return st;
    int64_t dims[4];
    const uint64_t rank = mp_pooled_shape(&g, dims);
    if (!mp_shape_equals(grad_output, rank, dims)) return mp_shape_error(op, "gradOutput", grad_output, rank, dims);

    /* CANN computes the expected indices shape but discards the result; it then reads N*C*Ho*Wo
     * indices.  We accept any 3-D/4-D shape as CANN does, but refuse a container too small for
     * what the kernel reads (docs/compatibility.md).  A 1x1 kernel reads nothing. */
    const int64_t count = mp_planes(&g) * g.out_height * g.out_width;
    const bool mask_ignored = is_mask && mp_is_1x1(&g);
    /* The product's mask layout and casts are frozen in the plan (ops/products.c). */
    const bool v1_mask = is_mask && !mask_ignored && pr->mask_layout == NN_MASK_V1_BITS;
    if (v1_mask) {
        if ((st = check_v1_mask_size(op, indices, &g)) != ACLNN_SUCCESS) return st;
    } else if (!mask_ignored) {
        const int64_t have = nn_tensor_numel(indices) * (int64_t)nn_dtype_size(indices->dtype);
        const int64_t need = count * (is_mask ? 4 : (int64_t)nn_dtype_size(indices->dtype));
        if (have < need) {
            char got[160];
            nn_shape_str(got, sizeof got, indices->ndim, indices->dims);
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            "%s: indices must hold at least %lld bytes (%s %lld argmax values for N*C*Ho*Wo = "
                            "%lld outputs), got shape %s = %lld bytes.",
                            op, (long long)need, is_mask ? "int32" : nn_dtype_name(indices->dtype),
                            (long long)count, (long long)count, got, (long long)have);
        }
    }

    memset(plan, 0, sizeof *plan);
    plan->g = g;
    plan->dtype = self->dtype;
    plan->mask_ignored = mask_ignored;
    plan->v1_mask = v1_mask;
    plan->fp16_compute = is_mask && pr->fp32_as_fp16 && self->dtype == ACL_FLOAT;
    plan->indices_int64 = !is_mask && indices->dtype == ACL_INT64;
    plan->no_binary = !is_mask && pr->kernel_index_dtypes.count > 0 &&
                      !nn_dtype_in(indices->dtype, pr->kernel_index_dtypes.list, pr->kernel_index_dtypes.count);
    nn_check_product_determinism(op, pr, g.kernel_h > g.stride_h || g.kernel_w > g.stride_w);
    return ACLNN_SUCCESS;
}

/* Picks the path from the geometry and the CPU table (phase 1), then lays out one chunk's
 * scratch for it. */
static void plan_scratch(bw_plan *plan)
{
    if (plan->v1_mask) { /* one path: the bit decode */
        nn_mp_bw_v1_layout_scratch(plan);
        return;
    }
    const nn_cpu_features *cpu = nn_cpu_features_get();
    const bool pays = nn_mp_bw_fast_path_pays(plan);
    const bool tiled = pays && nn_mp_bw_tiled_2x2_fits(plan);
    plan->tiled_2x2 = tiled && cpu->avx512;
    plan->tiled_2x2_avx2 = tiled && !plan->tiled_2x2 && cpu->avx2;
    plan->tiled_2x2_portable = tiled && !plan->tiled_2x2 && !plan->tiled_2x2_avx2;
    const bool slots = pays && nn_mp_bw_slots_3x3s2_fits(plan);
    plan->slots_3x3s2 = slots && cpu->avx512;
    /* AVX2: only where it measured faster than the scatter - launches that stream gradInput (out
     * of cache; in cache the scatter's adds into its L1 tile win) and not bf16, whose integer
     * rounding costs more than it saves (docs/kernels_max_pool.md) */
    plan->slots_3x3s2_avx2 = slots && !cpu->avx512 && cpu->avx2 && plan->stream_stores && plan->dtype != ACL_BF16;
    nn_mp_bw_layout_scratch(plan);
}

static aclnnStatus build_executor(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                  const aclTensor *indices, const aclTensor *grad_input, bw_plan *plan,
                                  uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclnnStatus result_ptrs = nn_check_result_ptrs(op, workspaceSize, executor);
    if (result_ptrs != ACLNN_SUCCESS) return result_ptrs;

    const bool empty = nn_tensor_is_empty(self);
    const mp_geometry *g = &plan->g;
    const int64_t planes = mp_planes(g), HW = g->height * g->width;
    const int64_t threads = nn_num_threads();
    plan->chunks = planes < threads ? planes : threads;
    if (plan->chunks < 1) plan->chunks = 1;
    /* before the path: a streamed launch gives the fast paths narrower planes */
    plan->stream_stores = nn_use_streaming_stores((uint64_t)(planes * HW) * nn_dtype_size(plan->dtype));
    plan_scratch(plan);

    const uint64_t scratch = empty || plan->mask_ignored
                                 ? 0
                                 : (uint64_t)(plan->chunks * plan->scratch_floats) * sizeof(float);
    return nn_finish_phase1(op,
                            &(nn_phase1_end){.kernel = empty ? NULL : backward_kernel, .plan = plan,
                                             .plan_size = sizeof *plan, .inputs = {grad_output, self, indices},
                                             .input_names = {"gradOutput", "self", "indices"},
                                             .output_names = {"gradInput"}, .shape_only_inputs = 1u << 1,
                                             .outputs = {grad_input}, .scratch_bytes = scratch,
                                             .computed_outputs = true},
                            workspaceSize, executor);
}

/* Phase 1 of both variants after their early checks: every NULL, the rest of the checks, the
 * plan and the executor. */
static aclnnStatus checks_and_executor(const char *op, const aclTensor *gradOutput, const aclTensor *self,
                                       const aclTensor *indices, const aclIntArray *kernelSize,
                                       const aclIntArray *stride, const aclIntArray *padding,
                                       const aclIntArray *dilation, bool ceilMode, const aclTensor *gradInput,
                                       bool is_mask, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclnnStatus st = check_nulls(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, gradInput);
    bw_plan plan;
    if (st == ACLNN_SUCCESS)
        st = check_and_plan(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode,
                            gradInput, is_mask, &plan);
    if (st != ACLNN_SUCCESS) return st;
    return build_executor(op, gradOutput, self, indices, gradInput, &plan, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *op = OP_MASK;
    /* CANN's early checks: kernelSize, self, gradOutput, then the kernelSize length - which CANN
     * reports as NULLPTR (documented quirk, kept). */
    const nn_arg early[] = {NN_ARRAY_ARG("kernelSize", kernelSize), NN_TENSOR_ARG("self", self),
                            NN_TENSOR_ARG("gradOutput", gradOutput)};
    /* Ascend950 rejects the API before anything else. */
    aclnnStatus st = nn_soc_check(op);
    if (st == ACLNN_SUCCESS) st = nn_check_product_api(op, nn_product_row(NN_PR_MAX_POOL2D_WITH_MASK_BACKWARD));
    if (st == ACLNN_SUCCESS) st = nn_check_args(op, early, NN_ARG_COUNT(early));
    if (st != ACLNN_SUCCESS) return st;
    if (kernelSize->size != 1 && kernelSize->size != 2)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR,
                        "%s: kernelSize must have 1 or 2 elements, got %llu (reported as ACLNN_ERR_PARAM_NULLPTR, "
                        "as CANN does).",
                        op, (unsigned long long)kernelSize->size);
    return checks_and_executor(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode,
                               gradInput, true, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMaskBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP_MASK, workspace, workspaceSize, executor, stream);
}

/* The WithIndices variant (declared in the same CANN header): the same checks and kernels,
 * with PyTorch-style indices (gradOutput's shape, the product's dtypes) instead of the mask. */
MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    /* No early checks on any product: straight to the full NULL check. */
    return checks_and_executor(OP_INDICES, gradOutput, self, indices, kernelSize, stride, padding, dilation,
                               ceilMode, gradInput, false, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP_INDICES, workspace, workspaceSize, executor, stream);
}
