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
#include "exec/nn_exec.h"
#include "kernels/im2col/im2col.h"
#include "ops/products.h"
#include "ops/im2col_common.h"

#define OP "aclnnIm2col"

/* The attribute arrays in argument order (kernelSize, dilation, padding, stride). */
static const char *const ARRAY_NAMES[4] = {"kernelSize", "dilation", "padding", "stride"};

/* planes = N*C (C for a 3-D self) */
typedef nn_i2c_plan im2col_plan;

static aclnnStatus im2col_kernel(const nn_launch *l)
{
    const im2col_plan *p = (const im2col_plan *)l->plan;
    /* About 64 KiB of output per task keeps small images from paying thread hand-offs. */
    const int64_t per_plane = p->kH * p->kW * p->OH * p->OW;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    /* The path (kernels/im2col/): the AVX-512 rows when the CPU table has them and they fit. */
    nn_im2col_avx512_plan *avx512 = nn_cpu_features_get()->avx512 ? nn_im2col_avx512_plan_create(p) : NULL;
    /* Streaming is decided on the bytes the launch moves (image read + columns written), as for
     * col2im and PreluBackward: the fp32 k3s2p1 28x28 case (6.4 MB in, 14.5 MB out) wrote with
     * read-for-ownership at 38-42 % of the STREAM copy in bench/run.py, streamed 60-84 %.  The
     * portable rows stream through a line stage when there is no cast. */
    const uint64_t moved = (uint64_t)(p->planes * per_plane) * nn_dtype_size(p->out_dtype) +
                           (uint64_t)(p->planes * p->H * p->W) * nn_dtype_size(p->in_dtype);
    const bool stream = nn_use_streaming_stores(moved) && (avx512 != NULL || p->in_dtype == p->out_dtype);
    nn_launch_set_path(l, nn_im2col_avx512_shifted(avx512) ? "im2col_avx512_shifted"
                          : avx512 != NULL                  ? "im2col_avx512_rows"
                          : stream                          ? "im2col_portable_streamed"
                                                            : "im2col_portable");
    nn_im2col_ctx ctx = {.plan = p,
                         .avx512 = avx512,
                         .stream_out = stream,
                         .in = (const unsigned char *)l->operands[0].data,
                         .out = (unsigned char *)l->operands[1].data,
                         .planes = avx512 != NULL ? nn_im2col_planes_avx512 : nn_im2col_planes_portable};
    /* planes claimed in chunks of about 1/16 of a thread's share (at least `grain`), one call
     * per thread that gets a chunk */
    nn_claims_init(&ctx.claims, p->planes, 16, grain);
    const int64_t threads = nn_num_threads(), claims = nn_ceil_div(p->planes, ctx.claims.chunk);
    nn_parallel_for(claims < threads ? claims : threads, 1, nn_im2col_planes_claimed, &ctx);
    if (avx512 != NULL) nn_im2col_avx512_plan_destroy(avx512);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate a %lld-element conversion or staging row.",
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
    const nn_arg args[] = {NN_TENSOR_ARG("self", self),         NN_ARRAY_ARG("kernelSize", kernelSize),
                           NN_ARRAY_ARG("dilation", dilation), NN_ARRAY_ARG("padding", padding),
                           NN_ARRAY_ARG("stride", stride),     NN_TENSOR_ARG("out", out)};
    im2col_plan plan;
    memset(&plan, 0, sizeof plan);
    aclnnStatus st = nn_check_args(OP, args, NN_ARG_COUNT(args));
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, nn_product_row(NN_PR_IM2COL), "self", self);
    if (st == ACLNN_SUCCESS) st = check_self_dims(self);
    if (st == ACLNN_SUCCESS) st = check_arrays(kernelSize, dilation, padding, stride);
    if (st == ACLNN_SUCCESS) st = check_out(self, kernelSize, dilation, padding, stride, out, &plan);
    /* CANN casts to any out dtype; we accept the three float types only for a float self, and
     * self's own dtype for the others Ascend950 takes (docs/compatibility.md). */
    const bool float_self = st != ACLNN_SUCCESS || nn_dtype_in(self->dtype, nn_float_dtypes, NN_FLOAT_DTYPE_COUNT);
    if (st == ACLNN_SUCCESS && !float_self && out->dtype != self->dtype) {
        st = nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out dtype must be self's dtype %s (no cast from a "
                      "non-float dtype), got %s.", nn_dtype_name(self->dtype), nn_dtype_name(out->dtype));
    }
    if (st == ACLNN_SUCCESS && float_self && !nn_dtype_in(out->dtype, nn_float_dtypes, NN_FLOAT_DTYPE_COUNT)) {
        st = nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out dtype must be in [FLOAT, FLOAT16, BFLOAT16], got %s.",
                      nn_dtype_name(out->dtype));
    }
    if (st == ACLNN_SUCCESS) st = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (st != ACLNN_SUCCESS) return st;
    return nn_i2c_make_executor(OP, im2col_kernel, &plan, self, out, false, workspaceSize, executor);
}

aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                        aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
