/*
 * im2col_backward.c - aclnnIm2colBackward ("col2im" / fold): the adjoint of aclnnIm2col.
 *
 *   out[n, c, ih, iw] = sum over (ki, kj) with ih = oh*sH - pH + ki*dH, iw = ow*sW - pW + kj*dW
 *                       of gradOutput[n, (c*kH + ki)*kW + kj, oh*OW + ow]
 *
 * Phase 1 checks the arguments in CANN's order and records the geometry; phase 2 folds the N*C
 * column blocks into image planes with one of the col2im kernels (kernels/col2im/), chosen from
 * the CPU table:
 *   AVX-512 and sW <= 2      col2im_avx512 (k3s2p1 small images: straight-line row kernels)
 *   AVX2 + F16C and sW <= 2  col2im_avx2   (only without AVX-512)
 *   otherwise, AVX2 + F16C   col2im_phase_avx2 (the portable loops built for AVX2)
 *   otherwise                col2im_portable (also with ACLNN_NO_SIMD=1)
 * All add each output element's contributions from +0.0 in fp32 in the order the card adds them
 * on the selected product (ops/products.c, im2col_bw): window order (oh, then ow, ascending) on
 * A2/A3 when padding is (0, 0) and on Ascend950, kernel order ((ki, kj) ascending) otherwise
 * (kernels/col2im/col2im.h).  Like the card's
 * Col2im they round the sum to gradOutput's dtype, and a different `out` dtype is then reached
 * by a second conversion (the card's l0 Cast).  All paths give the same bits; the launch trace
 * names the one that ran.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_im2col_backward.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "kernels/col2im/col2im.h"
#include "ops/im2col_common.h"

#define OP "aclnnIm2colBackward"

/* The attribute arrays in argument order (inputSize, kernelSize, dilation, padding, stride). */
static const char *const ARRAY_NAMES[5] = {"inputSize", "kernelSize", "dilation", "padding",
                                           "stride"};

/* planes = N*C (C for a 2-D gradOutput); H, W = inputSize */
typedef nn_i2c_plan col2im_plan;

/* ---------------------------------------------------------------------------------------- */
/* Phase 2                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Converts the n values of `from` (fp16 or bf16) at buf to `to` in place, as l0 Cast does after
 * the card's Col2im: widening is exact, fp16 <-> bf16 goes through fp32 and is rounded once
 * (RNE).  Chunks are read whole before they are written and taken from the end backwards, so
 * the wider results never overwrite values not yet read. */
static void recast_in_place(void *buf, aclDataType from, aclDataType to, int64_t n)
{
    enum { CHUNK = 1024 };
    float wide[CHUNK];
    const size_t from_size = nn_dtype_size(from), to_size = nn_dtype_size(to);
    for (int64_t end = n; end > 0;) {
        const int64_t begin = end > CHUNK ? end - CHUNK : 0;
        nn_to_f32_n(from, (const unsigned char *)buf + (size_t)begin * from_size, wide, (size_t)(end - begin));
        nn_from_f32_n(to, wide, (unsigned char *)buf + (size_t)begin * to_size, (size_t)(end - begin));
        end = begin;
    }
}

/* The vector kernels ask for the fastest tier the CPU table allows and fall back to the
 * portable one when their plan does not fit the geometry. */
static aclnnStatus col2im_kernel(const nn_launch *l)
{
    const col2im_plan *p = (const col2im_plan *)l->plan;
    /* The card's Col2im writes gradOutput's dtype (ops-cv:image/col2im/op_api/col2im.cpp) and
     * l0 Cast then converts to out's (ops-cv:image/col2im/op_api/aclnn_im2col_backward.cpp): a
     * fp16/bf16 gradOutput is folded into its own dtype in out's buffer (which is at least as
     * large) and converted there.  A fp32 sum narrowed to out's dtype is one rounding either way. */
    const bool recast = p->in_dtype != p->out_dtype && p->in_dtype != ACL_FLOAT;
    col2im_plan in_dtype_plan;
    if (recast) {
        in_dtype_plan = *p;
        in_dtype_plan.out_dtype = p->in_dtype;
        p = &in_dtype_plan;
    }
    const nn_cpu_features *cpu = nn_cpu_features_get();
    nn_col2im_avx512_plan *avx512 = cpu->avx512 ? nn_col2im_avx512_plan_create(p) : NULL;
    nn_col2im_avx2_plan *avx2 = cpu->avx2 && !cpu->avx512 ? nn_col2im_avx2_plan_create(p) : NULL;
    nn_col2im_tables *tables = NULL;
    if (avx512 == NULL && avx2 == NULL && (tables = nn_col2im_tables_create(p)) == NULL) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld kernel-column spans.",
                        (long long)p->kW);
    }
    /* Streaming is decided on the bytes the launch moves, columns read plus image written (as
     * the upsample backward does): the columns passing through the cache evict the image before
     * anyone could read it back.  In the bench's conditions (torch's call in between) this took
     * the k3s2p1 fp32 case from 2.15-2.41 to 1.79-1.85 ms at 1 thread and 1.26-1.29 to
     * 0.88-1.09 ms at 2 (docs/kernels_im2col_prelu.md). */
    const int64_t col_elems = p->kH * p->kW * p->OH * p->OW, image_elems = p->H * p->W; /* per plane */
    const uint64_t moved = (uint64_t)(p->planes * col_elems) * nn_dtype_size(p->in_dtype) +
                           (uint64_t)(p->planes * image_elems) * nn_dtype_size(p->out_dtype);
    nn_col2im_job job = {.plan = p,
                         .in = (const unsigned char *)l->operands[0].data,
                         .out = (unsigned char *)l->operands[1].data,
                         .stream_out = tables == NULL && nn_use_streaming_stores(moved)};
    bool ok;
    if (avx512 != NULL) {
        job.tables = avx512;
        nn_launch_set_path(l, nn_col2im_avx512_path(p, avx512));
        ok = nn_col2im_run(&job, nn_col2im_planes_avx512);
    } else if (avx2 != NULL) {
        job.tables = avx2;
        nn_launch_set_path(l, nn_col2im_avx2_path(avx2));
        ok = nn_col2im_run(&job, nn_col2im_planes_avx2);
    } else {
        job.tables = tables; /* the phase-plane loops, built for AVX2 when the CPU has it */
        nn_launch_set_path(l, cpu->avx2 ? "col2im_phase_avx2" : "col2im_portable");
        ok = nn_col2im_run(&job, cpu->avx2 ? nn_col2im_planes_phase_avx2 : nn_col2im_planes_portable);
    }
    nn_col2im_avx512_plan_destroy(avx512);
    nn_col2im_avx2_plan_destroy(avx2);
    nn_col2im_tables_destroy(tables);
    if (!ok) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate the per-thread fp32 buffers "
                        "(%lld image values per plane).", (long long)(p->H * p->W));
    }
    if (recast) {
        const col2im_plan *asked = (const col2im_plan *)l->plan;
        recast_in_place(job.out, asked->in_dtype, asked->out_dtype, p->planes * p->H * p->W);
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_ranks(const aclTensor *gradOutput, const aclTensor *out)
{
    if (gradOutput->ndim != 2 && gradOutput->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected gradOutput dim [%llu] to be 2 or 3 "
                        "but check failed.", (unsigned long long)gradOutput->ndim);
    }
    if (out->ndim != gradOutput->ndim + 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected out dim [%llu] to be 1 greater than "
                        "gradOutput dim [%llu] but check failed.", (unsigned long long)out->ndim,
                        (unsigned long long)gradOutput->ndim);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_array_values(const aclIntArray *inputSize, const aclIntArray *k,
                                      const aclIntArray *d, const aclIntArray *pad,
                                      const aclIntArray *s)
{
    if (k->values[0] <= 0 || k->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Kernel size must be greater than zero, but "
                        "got kernelSize=(%lld,%lld).", (long long)k->values[0], (long long)k->values[1]);
    }
    if (s->values[0] <= 0 || s->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Stride must be greater than zero, but got "
                        "stride=(%lld,%lld).", (long long)s->values[0], (long long)s->values[1]);
    }
    if (d->values[0] <= 0 || d->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Dilation must be greater than zero, but got "
                        "dilation=(%lld,%lld).", (long long)d->values[0], (long long)d->values[1]);
    }
    if (pad->values[0] < 0 || pad->values[1] < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Padding must not be negative, but got "
                        "padding=(%lld,%lld).", (long long)pad->values[0], (long long)pad->values[1]);
    }
    /* CANN's doc requires a positive inputSize but its code does not check
     * (docs/compatibility.md). */
    if (inputSize->values[0] <= 0 || inputSize->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": inputSize must be greater than zero, but got "
                        "inputSize=(%lld,%lld).", (long long)inputSize->values[0],
                        (long long)inputSize->values[1]);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_arrays(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                const aclIntArray *k, const aclIntArray *d, const aclIntArray *pad,
                                const aclIntArray *s, col2im_plan *plan)
{
    const aclIntArray *arrays[5] = {inputSize, k, d, pad, s};
    aclnnStatus st = nn_i2c_check_array_sizes(OP, 5, arrays, ARRAY_NAMES);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_array_values(inputSize, k, d, pad, s)) != ACLNN_SUCCESS) return st;

    const bool batched = gradOutput->ndim == 3;
    const int64_t rows = gradOutput->dims[batched ? 1 : 0];
    const int64_t L = gradOutput->dims[batched ? 2 : 1];
    int64_t kk;
    if (!nn_ip_mul(k->values[0], k->values[1], &kk) || rows % kk != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected size of gradOutput's dim -2 to be "
                        "divisible by the product of kernelSize but got gradOutput.shape[-2]=%lld "
                        "and kernelSize=(%lld,%lld).", (long long)rows, (long long)k->values[0],
                        (long long)k->values[1]);
    }
    int64_t OH, OW, expected_L;
    if (!nn_ip_window_count(inputSize->values[0], k->values[0], d->values[0], pad->values[0],
                            s->values[0], &OH) ||
        !nn_ip_window_count(inputSize->values[1], k->values[1], d->values[1], pad->values[1],
                            s->values[1], &OW) ||
        !nn_ip_mul(OH < 0 ? 0 : OH, OW < 0 ? 0 : OW, &expected_L)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": inputSize, kernelSize, dilation and padding "
                        "must keep the window count within int64.");
    }
    /* CANN computes L with truncating unsigned arithmetic and lets OH < 1 through when
     * gradOutput is empty; we require at least one window per axis, like ATen
     * (docs/compatibility.md). */
    if (OH < 1 || OW < 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": The shape (%lld, %lld) of the array "
                        "calculated by inputSize, kernelSize, dilation, padding and stride must be "
                        "at least one.", (long long)OH, (long long)OW);
    }
    if (L != expected_L) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected gradOutput.shape[-1] should be %lld, "
                        "but current is %lld.", (long long)expected_L, (long long)L);
    }
    nn_i2c_set_geometry(plan, (batched ? gradOutput->dims[0] : 1) * (rows / kk),
                        inputSize->values[0], inputSize->values[1], OH, OW, k, d, pad, s);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_out_shape(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                   const aclIntArray *k, const aclTensor *out)
{
    int64_t expected[4];
    uint64_t nd = 0;
    const bool batched = gradOutput->ndim == 3;
    if (batched) expected[nd++] = gradOutput->dims[0];
    expected[nd++] = gradOutput->dims[batched ? 1 : 0] / (k->values[0] * k->values[1]);
    expected[nd++] = inputSize->values[0];
    expected[nd++] = inputSize->values[1];
    return nn_i2c_check_out_shape(OP, out, nd, expected, "Shape of out should be ",
                                  ", but current is ");
}

aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                const aclIntArray *inputSize,
                                                const aclIntArray *kernelSize,
                                                const aclIntArray *dilation,
                                                const aclIntArray *padding,
                                                const aclIntArray *stride, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", gradOutput), NN_ARRAY_ARG("inputSize", inputSize),
                           NN_ARRAY_ARG("kernelSize", kernelSize), NN_ARRAY_ARG("dilation", dilation),
                           NN_ARRAY_ARG("padding", padding),       NN_ARRAY_ARG("stride", stride),
                           NN_TENSOR_ARG("out", out)};
    col2im_plan plan;
    memset(&plan, 0, sizeof plan);
    aclnnStatus st = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (st == ACLNN_SUCCESS) st = nn_check_args(OP, args, NN_ARG_COUNT(args));
    const nn_product *pr = st == ACLNN_SUCCESS ? nn_product_row(NN_PR_IM2COL_BACKWARD) : NULL;
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, pr, "gradOutput", gradOutput);
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, pr, "out", out);
    if (st == ACLNN_SUCCESS) st = check_ranks(gradOutput, out);
    if (st == ACLNN_SUCCESS) st = check_arrays(gradOutput, inputSize, kernelSize, dilation, padding, stride, &plan);
    if (st == ACLNN_SUCCESS) st = check_out_shape(gradOutput, inputSize, kernelSize, out);
    if (st != ACLNN_SUCCESS) return st;
    plan.window_order = pr->col2im_order == NN_COL2IM_WINDOW_ORDER ||
                        (pr->col2im_order == NN_COL2IM_WINDOW_ORDER_UNPADDED && plan.pH == 0 && plan.pW == 0);
    return nn_i2c_make_executor(OP, col2im_kernel, &plan, gradOutput, out, true, workspaceSize, executor);
}

aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
