/*
 * im2col_backward.c - aclnnIm2colBackward ("col2im" / fold): the adjoint of aclnnIm2col.
 *
 *   out[n, c, ih, iw] = sum over (ki, kj) with ih = oh*sH - pH + ki*dH, iw = ow*sW - pW + kj*dW
 *                       of gradOutput[n, (c*kH + ki)*kW + kj, oh*OW + ow]
 *
 * Each image plane is accumulated in fp32 in a cache-resident buffer (the fp32 output plane
 * itself when possible) and written once; gradOutput is read exactly once, front to back, one
 * kernel row (ki, kj) after the other.  Each output element therefore receives its contributions
 * in a fixed order (ki ascending, then kj ascending) whatever the thread count; fp16/bf16 are
 * summed in fp32 and rounded once.
 *
 * Image rows are split by the residue of iw modulo sW: within one residue class the
 * contributions of a kernel column kj are a contiguous run of gradOutput, so every inner loop is
 * a unit-stride, vectorisable add; the classes are interleaved back into the rows at the end.
 * Work is split over the N*C image planes.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_im2col_backward.h"
#include "core/nn_core.h"
#include "ops/im2col_prelu_common.h"

#define OP "aclnnIm2colBackward"

typedef struct col2im_plan {
    int64_t planes;            /* N*C (C for a 2-D gradOutput) */
    int64_t H, W, OH, OW;
    int64_t kH, kW, dH, dW, pH, pW, sH, sW;
    aclDataType in_dtype, out_dtype;
} col2im_plan;

/* Where the contributions of kernel column kj land inside a row (see the file comment). */
typedef struct kcol_span {
    int64_t residue;           /* iw % sW of every iw this kernel column touches */
    int64_t src_off;           /* ow = t + src_off for the t-th iw of the residue class */
    int64_t t_lo, t_hi;        /* valid t range (empty when t_lo >= t_hi) */
} kcol_span;

typedef struct col2im_ctx {
    const col2im_plan *plan;
    const kcol_span *spans;    /* kW entries */
    int64_t class_len;         /* ceil(W / sW): room per residue class in the row buffer */
    const unsigned char *in;
    unsigned char *out;
    int failed;
} col2im_ctx;

static void build_spans(const col2im_plan *p, kcol_span *spans, int64_t class_len)
{
    for (int64_t kj = 0; kj < p->kW; kj++) {
        const int64_t koff = kj * p->dW - p->pW;   /* iw = ow*sW + koff */
        int64_t r = koff % p->sW;
        if (r < 0) r += p->sW;
        const int64_t off = (r - koff) / p->sW;    /* exact: r - koff is a multiple of sW */
        const int64_t count = r < p->W ? (p->W - r + p->sW - 1) / p->sW : 0;
        int64_t lo = -off > 0 ? -off : 0;
        int64_t hi = p->OW - off < count ? p->OW - off : count;
        (void)class_len;
        spans[kj].residue = r;
        spans[kj].src_off = off;
        spans[kj].t_lo = lo;
        spans[kj].t_hi = hi > lo ? hi : lo;
    }
}

static void add_run(float *restrict acc, const float *restrict src, int64_t n)
{
    for (int64_t t = 0; t < n; t++) {
        acc[t] += src[t];
    }
}

/* Adds one kernel offset's column row (L values, fp32) into the plane accumulator. */
static void add_kernel_row(const col2im_ctx *ctx, const float *restrict src, int64_t ki,
                           const kcol_span *sp, float *restrict acc, int64_t acc_row)
{
    const col2im_plan *p = ctx->plan;
    int64_t oh_lo, oh_hi;
    nn_ip_valid_range(p->H, p->OH, p->sH, ki * p->dH - p->pH, &oh_lo, &oh_hi);
    const int64_t n = sp->t_hi - sp->t_lo;
    float *restrict dst = acc + sp->residue * ctx->class_len + sp->t_lo;
    src += sp->t_lo + sp->src_off;
    for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
        const int64_t ih = oh * p->sH - p->pH + ki * p->dH;
        add_run(dst + ih * acc_row, src + oh * p->OW, n);
    }
}

/* One image plane: `cols` (kH*kW rows of L values, any of the three dtypes) into `dst` (fp32,
 * H*W).  The kernel rows are visited in order (ki, then kj), each read once front to back, and
 * added into an accumulator that stays in cache: `dst` itself when sW == 1, else the plane split
 * into residue classes (`classes`, H rows of sW*class_len), interleaved into dst at the end. */
static void col2im_plane(const col2im_ctx *ctx, const void *cols, float *restrict dst,
                         float *restrict classes, float *restrict row_f32)
{
    const col2im_plan *p = ctx->plan;
    const int64_t L = p->OH * p->OW, W = p->W, sW = p->sW;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    float *restrict acc = sW == 1 ? dst : classes;
    const int64_t acc_row = sW == 1 ? W : sW * ctx->class_len;
    memset(acc, 0, (size_t)(p->H * acc_row) * sizeof(float));
    for (int64_t ki = 0; ki < p->kH; ki++) {
        for (int64_t kj = 0; kj < p->kW; kj++) {
            const kcol_span *sp = &ctx->spans[kj];
            if (sp->t_lo >= sp->t_hi) continue;
            const void *row = (const unsigned char *)cols + (size_t)((ki * p->kW + kj) * L) * in_esz;
            const float *src = (const float *)row;
            if (p->in_dtype != ACL_FLOAT) {
                nn_ip_to_f32(p->in_dtype, row, row_f32, (size_t)L);
                src = row_f32;
            }
            add_kernel_row(ctx, src, ki, sp, acc, acc_row);
        }
    }
    if (sW == 1) return;
    for (int64_t ih = 0; ih < p->H; ih++) {
        float *restrict out_row = dst + ih * W;
        for (int64_t r = 0; r < sW && r < W; r++) {
            const float *restrict cls = classes + ih * acc_row + r * ctx->class_len;
            const int64_t count = (W - r + sW - 1) / sW;
            for (int64_t t = 0; t < count; t++) {
                out_row[r + t * sW] = cls[t];
            }
        }
    }
}

static void col2im_planes(void *vctx, int64_t begin, int64_t end)
{
    col2im_ctx *ctx = (col2im_ctx *)vctx;
    const col2im_plan *p = ctx->plan;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W;
    const int64_t col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    const bool wide_in = p->in_dtype == ACL_FLOAT, wide_out = p->out_dtype == ACL_FLOAT;

    float *classes = p->sW == 1 ? NULL
                                : malloc((size_t)(p->H * p->sW * ctx->class_len) * sizeof(float));
    float *row_f32 = wide_in ? NULL : malloc((size_t)L * sizeof(float));
    float *plane_f32 = wide_out ? NULL : malloc((size_t)HW * sizeof(float));
    if ((p->sW != 1 && classes == NULL) || (!wide_in && row_f32 == NULL) ||
        (!wide_out && plane_f32 == NULL)) {
        __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
    } else {
        for (int64_t plane = begin; plane < end; plane++) {
            const void *cols = ctx->in + (size_t)(plane * col_block) * in_esz;
            void *dst = ctx->out + (size_t)(plane * HW) * out_esz;
            col2im_plane(ctx, cols, wide_out ? (float *)dst : plane_f32, classes, row_f32);
            if (!wide_out) {
                nn_ip_from_f32(p->out_dtype, plane_f32, dst, (size_t)HW);
            }
        }
    }
    free(classes);
    free(row_f32);
    free(plane_f32);
}

static aclnnStatus col2im_kernel(const nn_launch *l)
{
    const col2im_plan *p = (const col2im_plan *)l->plan;
    kcol_span *spans = malloc((size_t)p->kW * sizeof *spans);
    if (spans == NULL) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld kernel-column spans.",
                        (long long)p->kW);
    }
    col2im_ctx ctx = {p, spans, (p->W + p->sW - 1) / p->sW, (const unsigned char *)l->operands[0].data,
                      (unsigned char *)l->operands[1].data, 0};
    build_spans(p, spans, ctx.class_len);
    /* Read volume per plane decides the grain: ~64 KiB of columns per task at least. */
    const int64_t per_plane = p->kH * p->kW * p->OH * p->OW + p->H * p->W;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    nn_parallel_for(p->planes, grain, col2im_planes, &ctx);
    free(spans);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate the per-thread fp32 buffers "
                        "(%lld image values per plane).", (long long)(p->H * p->W));
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_not_null(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                  const aclIntArray *kernelSize, const aclIntArray *dilation,
                                  const aclIntArray *padding, const aclIntArray *stride,
                                  const aclTensor *out)
{
    if (gradOutput == NULL) return nn_ip_null_tensor(OP, "gradOutput");
    if (inputSize == NULL) return nn_ip_null_array(OP, "inputSize");
    if (kernelSize == NULL) return nn_ip_null_array(OP, "kernelSize");
    if (dilation == NULL) return nn_ip_null_array(OP, "dilation");
    if (padding == NULL) return nn_ip_null_array(OP, "padding");
    if (stride == NULL) return nn_ip_null_array(OP, "stride");
    if (out == NULL) return nn_ip_null_tensor(OP, "out");
    aclnnStatus st;
    if ((st = nn_ip_check_tensor(OP, "gradOutput", gradOutput)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_array(OP, "inputSize", inputSize)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_array(OP, "kernelSize", kernelSize)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_array(OP, "dilation", dilation)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_array(OP, "padding", padding)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_array(OP, "stride", stride)) != ACLNN_SUCCESS) return st;
    return nn_ip_check_tensor(OP, "out", out);
}

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
    /* CANN's doc requires a positive inputSize but its code does not check (decision 7). */
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
    const char *names[5] = {"inputSize", "kernelSize", "dilation", "padding", "stride"};
    for (int i = 0; i < 5; i++) {
        if (arrays[i]->size != 2) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": It is expected %s equals to 2, but got "
                            "size %llu.", names[i], (unsigned long long)arrays[i]->size);
        }
    }
    aclnnStatus st = check_array_values(inputSize, k, d, pad, s);
    if (st != ACLNN_SUCCESS) return st;

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
     * gradOutput is empty; we require at least one window per axis, like ATen (decision 7). */
    if (OH < 1 || OW < 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": The shape (%lld, %lld) of the array "
                        "calculated by inputSize, kernelSize, dilation, padding and stride must be "
                        "at least one.", (long long)OH, (long long)OW);
    }
    if (L != expected_L) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected gradOutput.shape[-1] should be %lld, "
                        "but current is %lld.", (long long)expected_L, (long long)L);
    }
    plan->planes = (batched ? gradOutput->dims[0] : 1) * (rows / kk);
    plan->H = inputSize->values[0];
    plan->W = inputSize->values[1];
    plan->OH = OH;
    plan->OW = OW;
    plan->kH = k->values[0];
    plan->kW = k->values[1];
    plan->dH = d->values[0];
    plan->dW = d->values[1];
    plan->pH = pad->values[0];
    plan->pW = pad->values[1];
    plan->sH = s->values[0];
    plan->sW = s->values[1];
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
    bool same = out->ndim == nd;
    for (uint64_t i = 0; same && i < nd; i++) same = out->dims[i] == expected[i];
    if (!same) {
        char want[160], got[512];
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Shape of out should be %s, but current is %s.",
                        nn_shape_str(want, sizeof want, nd, expected),
                        nn_shape_str(got, sizeof got, out->ndim, out->dims));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                const aclIntArray *inputSize,
                                                const aclIntArray *kernelSize,
                                                const aclIntArray *dilation,
                                                const aclIntArray *padding,
                                                const aclIntArray *stride, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (workspaceSize == NULL) {
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, OP ": workspaceSize must not be null.");
    }
    if (executor == NULL) {
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, OP ": executor must not be null.");
    }
    aclnnStatus st = check_not_null(gradOutput, inputSize, kernelSize, dilation, padding, stride, out);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_float_dtype(OP, "gradOutput", gradOutput)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_float_dtype(OP, "out", out)) != ACLNN_SUCCESS) return st;
    if ((st = check_ranks(gradOutput, out)) != ACLNN_SUCCESS) return st;
    col2im_plan plan;
    memset(&plan, 0, sizeof plan);
    st = check_arrays(gradOutput, inputSize, kernelSize, dilation, padding, stride, &plan);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_out_shape(gradOutput, inputSize, kernelSize, out)) != ACLNN_SUCCESS) return st;
    plan.in_dtype = gradOutput->dtype;
    plan.out_dtype = out->dtype;

    const bool empty = nn_tensor_is_empty(gradOutput);
    aclOpExecutor *ex = nn_executor_create(OP, empty ? NULL : col2im_kernel, &plan, sizeof plan);
    if (ex == NULL) return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if (!empty) {
        nn_executor_add_input(ex, gradOutput);
        nn_executor_add_output(ex, out);
    }
    return nn_executor_finish(ex, workspaceSize, executor);
}

aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
