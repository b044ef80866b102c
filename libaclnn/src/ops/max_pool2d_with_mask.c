/*
 * aclnnMaxPool2dWithMask: 2-D max pooling that also writes CANN's INT8 "mask" of argmax
 * positions (its layout: ops/max_pool_common.h; docs/compatibility.md).
 *
 *   out[n,c,oh,ow] = max over the window rows oh*sH-pH .. +kH-1, cols ow*sW-pW .. +kW-1
 *                    (cells outside the input are skipped, i.e. behave as -inf)
 *   mask bytes [0, 4*N*C*Ho*Wo) = int32 little-endian argmax ih*W+iw in N, C, Ho, Wo order,
 *   the rest of the container zero.  A 1x1 kernel writes the legacy bit-mask pattern instead.
 *   Ascend910/310P write the V1 bit mask for every other kernel, and Ascend910 computes FLOAT
 *   as FLOAT16 (kernels/max_pool/mask_v1.h; the product's row, ops/products.c).
 *
 * Selection follows PyTorch's CPU kernel exactly: start from -inf with the first in-range cell,
 * take a value when it is strictly greater or NaN.  So ties keep the first maximum in window
 * order and the last NaN of a window wins (the value is then that NaN).  Values are copied
 * bit for bit from the input; fp16/bf16 are compared after an exact widening to fp32.
 *
 * The file also defines aclnnMaxPool2dWithIndices (same header): PyTorch-style INT32/INT64
 * indices with the shape of `out`.  Its product row (ops/products.c) says what Ascend950's V3
 * kernel adds: dilation > 0, an NHWC self read as [N,] H, W, C, no INT_MAX check; such calls run
 * the general kernel (kernels/max_pool/max_pool_fw_general.c), with the same selection rule.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "exec/nn_exec.h"
#include "ops/products.h"
#include "ops/max_pool_common.h"
#include "kernels/max_pool/mask_v1.h"

#if defined(__has_include)
#if __has_include("aclnnop/aclnn_max_pool2d_with_indices.h")
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#endif
#endif

#define MP_EXPORT __attribute__((visibility("default")))

static const char OP_MASK[] = "aclnnMaxPool2dWithMask";
#define OP_INDICES "aclnnMaxPool2dWithIndices"

/* ------------------------------------------------------------------------------------------ */
/* Launch                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static aclnnStatus forward_kernel(const nn_launch *l)
{
    const fw_plan *p = (const fw_plan *)l->plan;
    fw_ctx c = {.plan = p,
                .self = (const unsigned char *)l->operands[0].data,
                .out = (unsigned char *)l->operands[1].data,
                .indices = (unsigned char *)l->operands[2].data,
                .scratch = (float *)l->scratch};
    if (!mp_is_plain(&p->g)) { /* dilation, NHWC or a plane past 2^31 cells (WithIndices, Ascend950) */
        nn_launch_set_path(l, "max_pool_portable_general");
        nn_parallel_for(nn_mp_fw_general_units(&p->g), 1, nn_mp_fw_general, &c);
        return ACLNN_SUCCESS;
    }
    nn_launch_set_path(l, p->v1_groups ? "max_pool_v1_mask" : p->plane_avx512 ? "max_pool_avx512" : "max_pool_portable");
    nn_claims_init(&c.claims, mp_planes(&p->g), 16, 1); /* ~1/16 of a thread's share */
    nn_parallel_for(p->chunks, 1, p->v1_groups ? nn_mp_fw_v1_chunks : nn_mp_fw_chunks, &c);
    if (p->index_kind == MP_INDEX_MASK_LEGACY) nn_mp_fw_legacy_mask(p, c.indices);
    return ACLNN_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Phase 1                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Every handle for NULL, in the order of CANN's full check. */
static aclnnStatus check_nulls(const char *op, const aclTensor *self, const aclIntArray *kernel,
                               const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
                               const aclTensor *out, const aclTensor *indices)
{
    const nn_arg args[] = {NN_TENSOR_ARG("self", self),       NN_ARRAY_ARG("kernelSize", kernel),
                           NN_ARRAY_ARG("stride", stride),     NN_ARRAY_ARG("padding", padding),
                           NN_ARRAY_ARG("dilation", dilation), NN_TENSOR_ARG("out", out),
                           NN_TENSOR_ARG("indices", indices)};
    return nn_check_args(op, args, NN_ARG_COUNT(args));
}

static aclnnStatus check_dtypes(const char *op, const aclTensor *self, const aclTensor *out,
                                const aclTensor *indices, bool is_mask)
{
    const nn_arg like_self[] = {NN_TENSOR_ARG("out", out)};
    const nn_product *pr = nn_product_row(is_mask ? NN_PR_MAX_POOL2D_WITH_MASK : NN_PR_MAX_POOL2D_WITH_INDICES);
    return mp_check_dtypes(op, pr, self, like_self, NN_ARG_COUNT(like_self), indices, is_mask);
}

static aclnnStatus check_format(const char *op, const aclTensor *self, const aclTensor *out)
{
    if (self->format != out->format)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: self and out must have the same format, got self %s, out %s.", op,
                        nn_format_name(self->format), nn_format_name(out->format));
    if (nn_format_is_private(self->format))
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: self format must be NCHW, ND or NCL (CHW), got %s.", op,
                        nn_format_name(self->format));
    if (self->ndim != 3 && self->ndim != 4)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: self must be a 3-D [C, H, W] or 4-D [N, C, H, W] tensor, got %llu-D.", op,
                        (unsigned long long)self->ndim);
    return ACLNN_SUCCESS;
}

/* Everything after the NULL checks, in CANN's order (dtype, format, attributes, shapes). */
static aclnnStatus check_and_plan(const char *op, const aclTensor *self, const aclIntArray *kernel,
                                  const aclIntArray *stride, const aclIntArray *padding,
                                  const aclIntArray *dilation, bool ceil_mode, const aclTensor *out,
                                  const aclTensor *indices, bool is_mask, fw_plan *plan)
{
    aclnnStatus st = check_dtypes(op, self, out, indices, is_mask);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_format(op, self, out)) != ACLNN_SUCCESS) return st;
    /* The product's row: what its WithIndices kernel takes beyond the A2 one (Ascend950:
     * dilation, NHWC, planes past INT_MAX; no mask row has any of it), the mask's layout and casts. */
    const nn_product *pr = nn_product_row(is_mask ? NN_PR_MAX_POOL2D_WITH_MASK : NN_PR_MAX_POOL2D_WITH_INDICES);
    mp_attrs attrs = {0};
    if ((st = mp_check_attrs(op, kernel, stride, padding, dilation, pr->any_dilation, &attrs)) != ACLNN_SUCCESS)
        return st;
    mp_geometry g = {0};
    const bool nhwc = pr->nhwc && self->format == ACL_FORMAT_NHWC;
    if ((st = mp_check_pooled_geometry(op, self, &attrs, ceil_mode, nhwc, &g)) != ACLNN_SUCCESS) return st;
    if ((st = mp_check_out_size(op, &g, pr->large_planes)) != ACLNN_SUCCESS) return st;

    int64_t dims[4];
    uint64_t rank = mp_pooled_shape(&g, dims);
    if (!mp_shape_equals(out, rank, dims)) return mp_shape_error(op, "out", out, rank, dims);
    if (is_mask) {
        rank = mp_mask_shape(&g, dims);
        if (!mp_shape_equals(indices, rank, dims)) return mp_shape_error(op, "indices", indices, rank, dims);
        /* CANN writes the stream at the storage head of `indices` and documents the tensor as
         * contiguous-only; a strided mask would have no defined byte order, so refuse it. */
        if (!nn_tensor_is_contiguous(indices))
            return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: indices must be a contiguous tensor (the mask is a byte "
                            "container), got a non-contiguous view.", op);
    } else if (!mp_shape_equals(indices, rank, dims)) {
        return mp_shape_error(op, "indices", indices, rank, dims);
    }

    /* Ascend950: after the checks and the empty-tensor exit, op_api runs MaxPoolWithArgmaxV3's
     * shape inference, which takes a 4-D x in ND, NCHW or NHWC only (a 3-D one is re-formatted
     * to NCHW first); its failure leaves op_api a NULL result. */
    const bool v3_format = self->format == ACL_FORMAT_ND || self->format == ACL_FORMAT_NCHW ||
                           self->format == ACL_FORMAT_NHWC;
    if (pr->nhwc && self->ndim == 4 && !v3_format && !nn_tensor_is_empty(self) && !nn_tensor_is_empty(out))
        return nn_error(ACLNN_ERR_INNER_NULLPTR,
                        "%s: MaxPoolWithArgmaxV3's shape inference failed: x format must be ND, NCHW or NHWC, "
                        "got %s.", op, nn_format_name(self->format));

    memset(plan, 0, sizeof *plan);
    plan->g = g;
    plan->dtype = self->dtype;
    plan->index_bytes = nn_tensor_numel(indices) * (int64_t)nn_dtype_size(indices->dtype);
    if (!is_mask) {
        plan->index_kind = indices->dtype == ACL_INT64 ? MP_INDEX_INT64 : MP_INDEX_INT32;
        return ACLNN_SUCCESS;
    }
    /* The product's mask layout and casts, frozen here (ops/products.c). */
    plan->index_kind = mp_is_1x1(&g) ? MP_INDEX_MASK_LEGACY
                       : pr->mask_layout == NN_MASK_V1_BITS ? MP_INDEX_MASK_V1 : MP_INDEX_MASK_STREAM;
    plan->fp16_compute = pr->fp32_as_fp16 && self->dtype == ACL_FLOAT;
    plan->v1_groups = plan->index_kind == MP_INDEX_MASK_V1 || plan->fp16_compute;
    return ACLNN_SUCCESS;
}

static aclnnStatus build_executor(const char *op, const aclTensor *self, const aclTensor *out,
                                  const aclTensor *indices, fw_plan *plan, uint64_t *workspaceSize,
                                  aclOpExecutor **executor)
{
    aclnnStatus result_ptrs = nn_check_result_ptrs(op, workspaceSize, executor);
    if (result_ptrs != ACLNN_SUCCESS) return result_ptrs;

    const bool empty = nn_tensor_is_empty(self) || nn_tensor_is_empty(out);
    /* Units of work: planes, or 16-channel groups on the V1 path (one thread owns a group's
     * mask words). */
    const bool general = !mp_is_plain(&plan->g); /* reads the input in place: no scratch */
    const int64_t planes = plan->v1_groups ? mp_channel_groups(&plan->g) : mp_planes(&plan->g);
    int64_t threads = nn_num_threads();
    plan->chunks = empty ? 0 : (planes < threads ? planes : threads);
    if (plan->chunks < 1) plan->chunks = 1;
    /* Per chunk: the fp32 copy of one input plane (fp16/bf16, or fp16_compute), one plane of
     * argmax, one output row of running maxima and one plane of output values (streamed out
     * from there). */
    const int64_t HW = plan->g.height * plan->g.width, P = plan->g.out_height * plan->g.out_width;
    const bool widened = plan->dtype != ACL_FLOAT || plan->fp16_compute;
    plan->scratch_floats = (widened ? HW : 0) + P + plan->g.out_width + P;
    /* The AVX-512 plane kernel reads fp32/fp16/bf16 in place (strides 1 and 2 along the row);
     * the outputs are written once, so past the caches they are streamed (nn_use_streaming_stores
     * on out + indices: the mask container alone is 4.5x the int32 stream for a 3x3 kernel). */
    plan->plane_avx512 = !general && !plan->v1_groups && !plan->fp16_compute && nn_cpu_avx512() &&
                         (plan->g.stride_w == 1 || plan->g.stride_w == 2) && plan->g.kernel_w <= 16;
    plan->stream_stores = !general && !plan->v1_groups &&
                          nn_use_streaming_stores((uint64_t)(nn_tensor_numel(out) * (int64_t)nn_dtype_size(plan->dtype) +
                                                             plan->index_bytes));
    plan->scratch_floats = (plan->scratch_floats + 15) / 16 * 16; /* keep every chunk 64-byte aligned */
    /* The keyed path's rows, after the rest, 64-byte aligned (nn_mp_fw_keys_bytes). */
    const int64_t keys_bytes = plan->plane_avx512 ? nn_mp_fw_keys_bytes(&plan->g, plan->dtype) : 0;
    plan->keys_offset = keys_bytes ? plan->scratch_floats : 0;
    plan->scratch_floats += (keys_bytes + 63) / 64 * 16;

    const uint64_t scratch =
        empty || general ? 0 : (uint64_t)(plan->chunks * plan->scratch_floats) * sizeof(float);
    return nn_finish_phase1(op,
                            &(nn_phase1_end){.kernel = empty ? NULL : forward_kernel, .plan = plan,
                                             .plan_size = sizeof *plan, .inputs = {self},
                                             .outputs = {out, indices}, .scratch_bytes = scratch,
                                             .input_names = {"self"}, .output_names = {"out", "indices"}},
                            workspaceSize, executor);
}

/* Phase 1 of both variants after their early checks: every NULL, the rest of the checks, the
 * plan and the executor. */
static aclnnStatus checks_and_executor(const char *op, const aclTensor *self, const aclIntArray *kernelSize,
                                       const aclIntArray *stride, const aclIntArray *padding,
                                       const aclIntArray *dilation, bool ceilMode, const aclTensor *out,
                                       const aclTensor *indices, bool is_mask, uint64_t *workspaceSize,
                                       aclOpExecutor **executor)
{
    aclnnStatus st = check_nulls(op, self, kernelSize, stride, padding, dilation, out, indices);
    fw_plan plan;
    if (st == ACLNN_SUCCESS)
        st = check_and_plan(op, self, kernelSize, stride, padding, dilation, ceilMode, out, indices, is_mask, &plan);
    if (st != ACLNN_SUCCESS) return st;
    return build_executor(op, self, out, indices, &plan, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMaskGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                             const aclIntArray *stride, const aclIntArray *padding,
                                                             const aclIntArray *dilation, bool ceilMode,
                                                             aclTensor *out, aclTensor *indices,
                                                             uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *op = OP_MASK;
    /* CANN's early checks: kernelSize, self, out, then the kernelSize length. */
    const nn_arg early[] = {NN_ARRAY_ARG("kernelSize", kernelSize), NN_TENSOR_ARG("self", self),
                            NN_TENSOR_ARG("out", out)};
    aclnnStatus st = nn_check_args(op, early, NN_ARG_COUNT(early));
    if (st != ACLNN_SUCCESS) return st;
    if (kernelSize->size != 1 && kernelSize->size != 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: kernelSize must have 1 or 2 elements, got %llu.", op,
                        (unsigned long long)kernelSize->size);
    /* Ascend950 has no mask path: rejected here, after the early checks. */
    if ((st = nn_check_product_api(op, nn_product_row(NN_PR_MAX_POOL2D_WITH_MASK))) != ACLNN_SUCCESS) return st;
    return checks_and_executor(op, self, kernelSize, stride, padding, dilation, ceilMode, out, indices, true,
                               workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMask(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream)
{
    return nn_launch_executor(OP_MASK, workspace, workspaceSize, executor, stream);
}

/* The WithIndices variant (declared in the same CANN header): the same checks and kernels,
 * with PyTorch-style indices (INT32 or INT64, out's shape) instead of the mask, and what the
 * product row adds (dilation, NHWC on Ascend950). */
MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor *self,
                                                                const aclIntArray *kernelSize,
                                                                const aclIntArray *stride,
                                                                const aclIntArray *padding,
                                                                const aclIntArray *dilation, bool ceilMode,
                                                                aclTensor *out, aclTensor *indices,
                                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    /* No early checks on any product: straight to the full NULL check. */
    return checks_and_executor(OP_INDICES, self, kernelSize, stride, padding, dilation, ceilMode, out, indices,
                               false, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                aclrtStream stream)
{
    return nn_launch_executor(OP_INDICES, workspace, workspaceSize, executor, stream);
}
