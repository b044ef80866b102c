/*
 * im2col.c - aclnnIm2col ("unfold"): every sliding kH x kW window of a [N,]C,H,W image becomes
 * one column of out [N,] C*kH*kW, L.
 *
 *   out[n, (c*kH + ki)*kW + kj, oh*OW + ow] = self[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]
 *   (0 where the source position falls into the padding)
 *
 * CANN checks only self's dtype; the result is cast to out's dtype at the end.  The kernel is a
 * pure gather: bit-exact when the dtypes agree, otherwise one rounding (through fp32) per value.
 * Work is split over the N*C image planes; each plane writes its own kH*kW*L block of out.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_im2col.h"
#include "core/nn_core.h"
#include "ops/im2col_common.h"

#define OP "aclnnIm2col"

/* The attribute arrays in argument order (kernelSize, dilation, padding, stride). */
static const char *const ARRAY_NAMES[4] = {"kernelSize", "dilation", "padding", "stride"};

/* planes = N*C (C for a 3-D self) */
typedef nn_i2c_plan im2col_plan;

typedef struct im2col_ctx {
    const im2col_plan *plan;
    const unsigned char *in;
    unsigned char *out;
    int failed;                /* a worker could not get its conversion buffer */
} im2col_ctx;

/* Gathers row (ki, kj) of one plane's column block (L = OH*OW values) in the input's element
 * type: for every window position the source pixel, or 0 where it falls into the padding. */
#define DEFINE_IM2COL_ROW(NAME, T)                                                                \
    static void NAME(const im2col_plan *p, const T *restrict plane, T *restrict row, int64_t ki,   \
                     int64_t kj)                                                                 \
    {                                                                                            \
        const int64_t W = p->W, OW = p->OW;                                                      \
        const int64_t col_off = kj * p->dW - p->pW;                                              \
        int64_t ow_lo, ow_hi;                                                                    \
        nn_ip_valid_range(W, OW, p->sW, col_off, &ow_lo, &ow_hi);                                \
        for (int64_t oh = 0; oh < p->OH; oh++) {                                                 \
            T *restrict dst = row + oh * OW;                                                     \
            const int64_t ih = oh * p->sH - p->pH + ki * p->dH;                                  \
            if (ih < 0 || ih >= p->H || ow_lo >= ow_hi) {                                        \
                memset(dst, 0, (size_t)OW * sizeof(T));                                          \
                continue;                                                                        \
            }                                                                                    \
            const T *restrict src = plane + ih * W + col_off;                                    \
            memset(dst, 0, (size_t)ow_lo * sizeof(T));                                           \
            if (p->sW == 1) {                                                                    \
                memcpy(dst + ow_lo, src + ow_lo, (size_t)(ow_hi - ow_lo) * sizeof(T));           \
            } else {                                                                             \
                const int64_t sW = p->sW;                                                        \
                for (int64_t ow = ow_lo; ow < ow_hi; ow++) {                                     \
                    dst[ow] = src[ow * sW];                                                      \
                }                                                                                \
            }                                                                                    \
            memset(dst + ow_hi, 0, (size_t)(OW - ow_hi) * sizeof(T));                            \
        }                                                                                        \
    }

DEFINE_IM2COL_ROW(im2col_row_u16, uint16_t)
DEFINE_IM2COL_ROW(im2col_row_u32, uint32_t)

static void im2col_row(const im2col_plan *p, size_t esz, const void *plane, void *row,
                       int64_t ki, int64_t kj)
{
    if (esz == 2) {
        im2col_row_u16(p, (const uint16_t *)plane, (uint16_t *)row, ki, kj);
    } else {
        im2col_row_u32(p, (const uint32_t *)plane, (uint32_t *)row, ki, kj);
    }
}

static void im2col_planes(void *vctx, int64_t begin, int64_t end)
{
    im2col_ctx *ctx = (im2col_ctx *)vctx;
    const im2col_plan *p = ctx->plan;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const size_t out_esz = nn_dtype_size(p->out_dtype);
    const int64_t L = p->OH * p->OW;
    const int64_t rows = p->kH * p->kW;
    const bool cast = p->in_dtype != p->out_dtype;
    unsigned char *gathered = NULL;
    float *widened = NULL;

    if (cast) {
        /* One row in the input type, then the same row widened to fp32. */
        gathered = malloc((size_t)L * in_esz);
        widened = malloc((size_t)L * sizeof(float));
        if (gathered == NULL || widened == NULL) {
            __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
            free(gathered);
            free(widened);
            return;
        }
    }
    for (int64_t plane = begin; plane < end; plane++) {
        const unsigned char *src = ctx->in + (size_t)(plane * p->H * p->W) * in_esz;
        unsigned char *dst_block = ctx->out + (size_t)(plane * rows * L) * out_esz;
        for (int64_t ki = 0; ki < p->kH; ki++) {
            for (int64_t kj = 0; kj < p->kW; kj++) {
                unsigned char *dst = dst_block + (size_t)((ki * p->kW + kj) * L) * out_esz;
                if (!cast) {
                    im2col_row(p, in_esz, src, dst, ki, kj);
                    continue;
                }
                im2col_row(p, in_esz, src, gathered, ki, kj);
                nn_ip_to_f32(p->in_dtype, gathered, widened, (size_t)L);
                nn_ip_from_f32(p->out_dtype, widened, dst, (size_t)L);
            }
        }
    }
    free(gathered);
    free(widened);
}

static aclnnStatus im2col_kernel(const nn_launch *l)
{
    const im2col_plan *p = (const im2col_plan *)l->plan;
    im2col_ctx ctx = {p, (const unsigned char *)l->operands[0].data,
                      (unsigned char *)l->operands[1].data, 0};
    /* About 64 KiB of output per task keeps small images from paying thread hand-offs. */
    int64_t per_plane = p->kH * p->kW * p->OH * p->OW;
    int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    nn_parallel_for(p->planes, grain, im2col_planes, &ctx);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate a %lld-element conversion row.",
                        (long long)(p->OH * p->OW));
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_self_dims(const aclTensor *self)
{
    if (self->ndim != 3 && self->ndim != 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected self dim [%llu] to be 3 or 4 but "
                        "check failed.", (unsigned long long)self->ndim);
    }
    /* The batch dimension of a 4-D self may be 0 (nothing to do); C, H, W must be positive. */
    for (uint64_t i = (self->ndim == 4) ? 1 : 0; i < self->ndim; i++) {
        if (self->dims[i] <= 0) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self's dims is invalid, self No.[%llu] "
                            "dim is [%lld], expected a positive size.",
                            (unsigned long long)(i + 1), (long long)self->dims[i]);
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_arrays(const aclIntArray *kernelSize, const aclIntArray *dilation,
                                const aclIntArray *padding, const aclIntArray *stride)
{
    const aclIntArray *arrays[4] = {kernelSize, dilation, padding, stride};
    aclnnStatus st = nn_i2c_check_array_sizes(OP, 4, arrays, ARRAY_NAMES);
    if (st != ACLNN_SUCCESS) return st;
    /* CANN's order: kernelSize, stride, dilation (all > 0), then padding (>= 0). */
    const aclIntArray *positive[3] = {kernelSize, stride, dilation};
    const char *positive_names[3] = {"kernelSize", "stride", "dilation"};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++) {
            if (positive[i]->values[j] <= 0) {
                return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": It is expected %s be greater than "
                                "zero, but %s No.[%d] dim is [%lld].", positive_names[i],
                                positive_names[i], j + 1, (long long)positive[i]->values[j]);
            }
        }
    }
    for (int j = 0; j < 2; j++) {
        if (padding->values[j] < 0) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": It is expected padding be greater than or "
                            "equal to zero, but padding No.[%d] dim is [%lld].", j + 1,
                            (long long)padding->values[j]);
        }
    }
    return ACLNN_SUCCESS;
}

/* Output window counts and out's expected shape. */
static aclnnStatus check_out(const aclTensor *self, const aclIntArray *k, const aclIntArray *d,
                             const aclIntArray *pad, const aclIntArray *s, const aclTensor *out,
                             im2col_plan *plan)
{
    const bool batched = self->ndim == 4;
    const int64_t H = self->dims[batched ? 2 : 1], W = self->dims[batched ? 3 : 2];
    int64_t OH, OW, kk, rows, L;
    if (!nn_ip_window_count(H, k->values[0], d->values[0], pad->values[0], s->values[0], &OH) ||
        !nn_ip_window_count(W, k->values[1], d->values[1], pad->values[1], s->values[1], &OW)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": kernelSize, dilation and padding must keep "
                        "the output size within int64, got kernelSize=(%lld,%lld), dilation=(%lld,"
                        "%lld), padding=(%lld,%lld).", (long long)k->values[0],
                        (long long)k->values[1], (long long)d->values[0], (long long)d->values[1],
                        (long long)pad->values[0], (long long)pad->values[1]);
    }
    if (OH < 1 || OW < 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": The shape (%lld, %lld) of the array "
                        "calculated by other parameters must be at least one.", (long long)OH,
                        (long long)OW);
    }
    const int64_t C = self->dims[batched ? 1 : 0];
    if (!nn_ip_mul(k->values[0], k->values[1], &kk) || !nn_ip_mul(C, kk, &rows) ||
        !nn_ip_mul(OH, OW, &L)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out shape overflows int64 for "
                        "kernelSize=(%lld,%lld).", (long long)k->values[0], (long long)k->values[1]);
    }
    int64_t expected[3];
    uint64_t nd = 0;
    if (batched) expected[nd++] = self->dims[0];
    expected[nd++] = rows;
    expected[nd++] = L;
    aclnnStatus st = nn_i2c_check_out_shape(OP, out, nd, expected, "Expect out shape ",
                                            ", but got: ");
    if (st != ACLNN_SUCCESS) return st;
    nn_i2c_set_geometry(plan, (batched ? self->dims[0] : 1) * C, H, W, OH, OW, k, d, pad, s);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                        const aclIntArray *dilation, const aclIntArray *padding,
                                        const aclIntArray *stride, const aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const aclIntArray *arrays[4] = {kernelSize, dilation, padding, stride};
    aclnnStatus st = nn_i2c_check_handles(OP, "self", self, 4, arrays, ARRAY_NAMES, out);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_float_dtype(OP, "self", self)) != ACLNN_SUCCESS) return st;
    if ((st = check_self_dims(self)) != ACLNN_SUCCESS) return st;
    if ((st = check_arrays(kernelSize, dilation, padding, stride)) != ACLNN_SUCCESS) return st;
    im2col_plan plan;
    memset(&plan, 0, sizeof plan);
    if ((st = check_out(self, kernelSize, dilation, padding, stride, out, &plan)) != ACLNN_SUCCESS) {
        return st;
    }
    /* CANN casts to any out dtype; we accept the three float types only (decision 7). */
    if (!nn_ip_is_float_dtype(out->dtype)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out dtype must be in " NN_IP_FLOAT_DTYPE_LIST
                        ", got %s.", nn_dtype_name(out->dtype));
    }
    if ((st = nn_check_result_ptrs(OP, workspaceSize, executor)) != ACLNN_SUCCESS) return st;
    return nn_i2c_make_executor(OP, im2col_kernel, &plan, self, out, workspaceSize, executor);
}

aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                        aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
