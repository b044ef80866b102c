/*
 * upsample_nearest_exact1d.c - aclnnUpsampleNearestExact1d: resizes the last dim of a 3-D
 * [N, C, L] tensor to outputSize[0] with "nearest-exact" sampling.
 *
 *   scale  = scales > 0 ? fl32(1 / scales) : fl32(L) / fl32(Lout)
 *            (Ascend950: 1.0f / fl32(scales), the reciprocal taken in float; ops/products.c)
 *   out[n, c, d] = self[n, c, min(floor(fl32((d + 0.5) * scale)), L - 1)]
 *
 * A pure gather (bit-exact).  The index map is the same for every (n, c) row, so phase 2
 * builds it once per launch (kernels/upsample/upsample.h) and the kernels copy row by row: long
 * stretches of equal repeat count become "repeat each element k times" loops, irregular maps use
 * the per-output source table.  With AVX-512, an output kept in cache is written a vector at a
 * time, each one lane permutation of a window of inputs (kernels/upsample/
 * upsample_fwd_window_avx512.c), and 4-byte runs of count 1-4 streamed out are lane permutations
 * of 16 inputs per step (kernels/upsample/upsample_fwd_avx512.c).  The path comes from the CPU
 * table and the geometry, and is named in the launch trace.
 *
 * CANN transposes an ND or NCL self and hands a self of any other format to the kernel as NLC
 * ([N, L, C], dim 1 resized).  So does this file for the other row-major formats (NCHW, NHWC,
 * ...): each index moves a block of C elements.  Ascend950 has no NLC path (ops/products.c).
 *
 * Checks follow CANN's op_api.  Stricter than CANN (docs/compatibility.md): out must be
 * [N, C, outputSize[0]] ([N, outputSize[0], C] for NLC), and NPU-private formats are rejected.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "exec/nn_exec.h"
#include "ops/pad_upsample_common.h"
#include "ops/products.h"

#define OP "aclnnUpsampleNearestExact1d"


typedef nn_upsample_plan upsample_plan;

static aclnnStatus upsample_kernel(const nn_launch *launch)
{
    const upsample_plan *p = (const upsample_plan *)launch->plan;
    nn_ne_map map;
    if (!nn_ne_map_build(&map, p->in_len, p->out_len, p->scales, p->float_reciprocal)) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the index map (L %lld -> %lld).",
                        (long long)p->in_len, (long long)p->out_len);
    }
    /* The path (kernels/upsample/): on AVX-512, an output kept in cache (not streamed) whose
     * every vector of outputs reads within a vector of inputs takes the windows (one permutation
     * per vector), except 2-byte long-run maps, where the AVX2 build's repeat loops were a little
     * faster (1024 rows 200 -> 400: 45 against 51 us); else the 4-byte long-run permutations on
     * AVX-512, else the plain rows built for AVX2 when the CPU table has it. */
    const nn_cpu_features *cpu = nn_cpu_features_get();
    nn_upsample_ctx ctx = {p, &map, nn_ne_map_runs_are_long(&map),
                           (const unsigned char *)launch->operands[0].data,
                           (unsigned char *)launch->operands[1].data,
                           nn_use_streaming_stores((uint64_t)(p->rows * p->out_len) * p->elem_size), false, NULL};
    ctx.avx512 = p->elem_size == 4 && ctx.use_runs && cpu->avx512;
    const int64_t grain = nn_pu_grain(p->rows, (double)(p->in_len + p->out_len) * (double)p->elem_size);
    nn_upsample_window window;
    if (!ctx.stream && cpu->avx512 && !(ctx.use_runs && p->elem_size == 2) &&
        nn_upsample_window_build(&window, &map, p->elem_size)) {
        ctx.window = &window;
        nn_launch_set_path(launch, "upsample_window_avx512");
        nn_parallel_for(p->rows, grain, nn_upsample_rows_window_avx512, &ctx);
        nn_upsample_window_free(&window);
    } else {
        nn_launch_set_path(launch, ctx.avx512   ? "upsample_avx512_runs"
                                   : ctx.use_runs ? (cpu->avx2 ? "upsample_runs_avx2" : "upsample_runs_portable")
                                   : cpu->avx2    ? "upsample_per_output_avx2"
                                                  : "upsample_per_output_portable");
        nn_parallel_for(p->rows, grain, cpu->avx2 ? nn_upsample_rows_avx2 : nn_upsample_rows_portable, &ctx);
    }
    nn_ne_map_free(&map);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* CANN's test: everything but ND and NCL takes the NLC path (UNDEFINED counts as ND, as it
 * does everywhere in this library). */
static bool is_nlc(aclFormat format)
{
    return format != ACL_FORMAT_ND && format != ACL_FORMAT_NCL && format != ACL_FORMAT_UNDEFINED;
}

/* After CANN's own checks: the NLC row of the product table, then (stricter than CANN) the
 * formats the CPU kernel can read and out's shape. */
static aclnnStatus check_layout(const aclTensor *self, const aclIntArray *outputSize, const aclTensor *out)
{
    char shape[128], want[128];
    const bool nlc = is_nlc(self->format);
    if (nlc && nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D)->nlc_inner_nullptr) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": self format %s is read as NLC, which %s does not "
                        "support (only ND and NCL; CANN's l0 operator returns nullptr).",
                        nn_format_name(self->format), nn_soc_family_name(nn_soc_current()));
    }
    if (nn_format_is_private(self->format)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self format must be row-major (ND, NCL, or NLC "
                        "through another plain format), got %s.", nn_format_name(self->format));
    }
    if (nn_format_is_private(out->format)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out format must be row-major, got %s.",
                        nn_format_name(out->format));
    }
    int64_t expected[3] = {self->dims[0], self->dims[1], outputSize->values[0]};
    if (nlc) {
        expected[1] = outputSize->values[0];
        expected[2] = self->dims[2];
    }
    const bool wrong_out = out->ndim != 3 || memcmp(out->dims, expected, sizeof expected) != 0;
    if (wrong_out && nlc) {
        char self_shape[128];
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": out shape should be %s, got %s: self's format %s is neither ND nor NCL, so "
                        "self %s is read as NLC [N, L, C] and its dim 1 is resized, as CANN does (label "
                        "self and out ND or NCL for [N, C, L]).",
                        nn_shape_str(want, sizeof want, 3, expected),
                        nn_shape_str(shape, sizeof shape, out->ndim, out->dims), nn_format_name(self->format),
                        nn_shape_str(self_shape, sizeof self_shape, self->ndim, self->dims));
    }
    if (wrong_out) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out shape should be %s, got %s.",
                        nn_shape_str(want, sizeof want, 3, expected),
                        nn_shape_str(shape, sizeof shape, out->ndim, out->dims));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *outputSize,
                                const aclTensor *out)
{
    char shape[128];
    aclnnStatus st = nn_check_product_dtype(OP, nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D), "self", self);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "out", out, "self", self);
    if (st != ACLNN_SUCCESS) {
        return st;
    }
    /* CANN checks the sizes before the rank; we do the same whenever the values exist. */
    if (self->ndim >= 3 && outputSize->size >= 1) {
        const int64_t N = self->dims[0], C = self->dims[1], L = self->dims[2];
        const int64_t out_len = outputSize->values[0];
        if (!(N > 0 && C > 0 && L > 0 && out_len > 0)) {
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            OP ": Input and output sizes should greater than 0, but got self (N: %lld, "
                            "C: %lld, L: %lld) outputSize [%lld].", (long long)N, (long long)C,
                            (long long)L, (long long)out_len);
        }
    }
    if (self->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self must be 3-D [N, C, L], got %llu-D %s.",
                        (unsigned long long)self->ndim,
                        nn_shape_str(shape, sizeof shape, self->ndim, self->dims));
    }
    if (outputSize->size != 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected outputSize equals to 1, but got size %llu.",
                        (unsigned long long)outputSize->size);
    }
    return check_layout(self, outputSize, out);
}

aclnnStatus aclnnUpsampleNearestExact1dGetWorkspaceSize(const aclTensor *self,
                                                        const aclIntArray *outputSize, double scales,
                                                        aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("self", self), NN_TENSOR_ARG("out", out),
                           NN_ARRAY_ARG("outputSize", outputSize)};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = check_params(self, outputSize, out);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    /* Every size is > 0 here, so CANN's "empty self -> success" branch cannot be reached. */
    upsample_plan plan;
    memset(&plan, 0, sizeof plan);
    const bool nlc = is_nlc(self->format); /* [N, L, C]: rows of L blocks of C */
    plan.rows = nlc ? self->dims[0] : self->dims[0] * self->dims[1];
    plan.in_len = nlc ? self->dims[1] : self->dims[2];
    plan.out_len = outputSize->values[0];
    plan.scales = scales;
    plan.float_reciprocal = nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D)->float_reciprocal;
    plan.elem_size = nn_dtype_size(self->dtype) * (nlc ? (size_t)self->dims[2] : 1);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = upsample_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {self}, .outputs = {out},
                                             .input_names = {"self"}, .output_names = {"out"}},
                            workspaceSize, executor);
}

aclnnStatus aclnnUpsampleNearestExact1d(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
