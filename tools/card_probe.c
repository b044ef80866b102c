/*
 * card_probe.c - a fixed set of numeric probes of the ten operators, to settle on a real card
 * what CANN's public sources leave open and to check what they pin (docs/precision.md,
 * "Probing a card").
 *
 * The same file builds against real CANN and against libaclnn with the same line, as any CANN
 * program does:
 *
 *     cc -std=c11 tools/card_probe.c -I$P/include -I$P/include/aclnnop -L$P/lib64 \
 *        -lascendcl -lnnopbase -lopapi -lm -o card_probe
 *
 * where P is the CANN toolkit (e.g. /usr/local/Ascend/ascend-toolkit/latest) or a libaclnn
 * install tree (`make install PREFIX=...`).  Run it on each (libaclnn emulates the card named by
 * ACLNN_SOC_VERSION) and diff the two outputs: every line is one result element, as
 *
 *     <probe> <dtype> <tensor>[<i>] = 0x<bits> (<value>)
 *
 * so a difference names the case, the element and both bit patterns.  The inputs are exact in
 * their dtype (the probe never rounds an input), and each probe is built to hit one question:
 * ties under round-half-away (CAST_ROUND) against half-even (CAST_RINT), orders of additions,
 * -0, saturation, NaN and infinity algebra, fp32 subnormals.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"

static aclrtStream g_stream;
static int g_failures;

/* ---- exact encodings of the inputs (no rounding: an inexact input stops the probe) ---------- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* fp16 bits of a float that fp16 holds exactly (every probe input does). */
static uint16_t f16_exact(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (isnan(f))
        return (uint16_t)(sign | 0x7e00u);
    if (isinf(f))
        return (uint16_t)(sign | 0x7c00u);
    float mag = fabsf(f);
    if (mag == 0.0f)
        return sign;
    int exp2;
    float mant = frexpf(mag, &exp2); /* mag = mant * 2^exp2, mant in [0.5, 1) */
    uint16_t bits;
    if (exp2 >= -13) { /* normal: 2^-14 <= mag */
        float frac = ldexpf(mant, 11) - 1024.0f; /* 10 fraction bits */
        bits = (uint16_t)(((exp2 + 14) << 10) | (uint16_t)frac);
        if (frac != floorf(frac) || exp2 + 14 > 30)
            goto inexact;
    } else { /* subnormal: multiples of 2^-24 */
        float units = ldexpf(mag, 24);
        if (units != floorf(units))
            goto inexact;
        bits = (uint16_t)units;
    }
    return (uint16_t)(sign | bits);
inexact:
    fprintf(stderr, "card_probe: %.9g is not exact in fp16\n", (double)f);
    exit(2);
}

static float f16_value(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    float mag = exp == 0 ? ldexpf((float)frac, -24)
                : exp == 31 ? (frac ? NAN : INFINITY)
                            : ldexpf((float)(frac | 0x400), exp - 25);
    return (h & 0x8000) ? -mag : mag;
}

static uint16_t bf16_exact(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0xffffu) != 0 && !isnan(f)) {
        fprintf(stderr, "card_probe: %.9g is not exact in bf16\n", (double)f);
        exit(2);
    }
    return isnan(f) ? (uint16_t)((u >> 16) | 0x40u) : (uint16_t)(u >> 16);
}

/* ---- device tensors ------------------------------------------------------------------------ */

typedef struct probe_tensor {
    aclDataType dtype;
    int64_t numel;
    size_t bytes;
    void *dev;
    aclTensor *tensor;
} probe_tensor;

static size_t dtype_bytes(aclDataType dtype)
{
    return dtype == ACL_FLOAT16 || dtype == ACL_BF16 ? 2 : dtype == ACL_INT8 ? 1 : 4;
}

static const char *dtype_name(aclDataType dtype)
{
    return dtype == ACL_FLOAT16 ? "fp16" : dtype == ACL_BF16 ? "bf16" : dtype == ACL_FLOAT ? "fp32" : "int";
}

/* A contiguous tensor of `dims` in device memory, filled from `values` (NULL: zeros). */
static probe_tensor make_tensor(aclDataType dtype, int ndim, const int64_t *dims, const float *values)
{
    probe_tensor t = {.dtype = dtype, .numel = 1};
    int64_t strides[8];
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = t.numel;
        t.numel *= dims[i];
    }
    t.bytes = (size_t)t.numel * dtype_bytes(dtype);
    unsigned char *host = calloc(1, t.bytes ? t.bytes : 1);
    for (int64_t i = 0; values != NULL && i < t.numel; i++) {
        if (dtype == ACL_FLOAT) {
            memcpy(host + 4 * i, &values[i], 4);
        } else {
            uint16_t h = dtype == ACL_FLOAT16 ? f16_exact(values[i]) : bf16_exact(values[i]);
            memcpy(host + 2 * i, &h, 2);
        }
    }
    if (aclrtMalloc(&t.dev, t.bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMemcpy(t.dev, t.bytes, host, t.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        fprintf(stderr, "card_probe: device memory failed\n");
        exit(2);
    }
    free(host);
    t.tensor = aclCreateTensor(dims, (uint64_t)ndim, dtype, strides, 0, ndim == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND,
                               dims, (uint64_t)ndim, t.dev);
    return t;
}

static void free_tensor(probe_tensor *t)
{
    aclDestroyTensor(t->tensor);
    aclrtFree(t->dev);
}

/* One line per element of the first `count` (all when count < 0):
 * "<probe> <dtype> <name>[i] = 0x<bits> (<value>)". */
static void print_elements(const char *probe, const char *name, const probe_tensor *t, int64_t count)
{
    unsigned char *host = malloc(t->bytes ? t->bytes : 1);
    if (aclrtMemcpy(host, t->bytes, t->dev, t->bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        fprintf(stderr, "card_probe: %s: copy back failed\n", probe);
        exit(2);
    }
    const int64_t shown = count < 0 || count > t->numel ? t->numel : count;
    for (int64_t i = 0; i < shown; i++) {
        if (t->dtype == ACL_FLOAT) {
            uint32_t u;
            memcpy(&u, host + 4 * i, 4);
            printf("%s %s %s[%lld] = 0x%08x (%.9g)\n", probe, dtype_name(t->dtype), name, (long long)i, u,
                   (double)f32_from_bits(u));
        } else {
            uint16_t h;
            memcpy(&h, host + 2 * i, 2);
            float v = t->dtype == ACL_FLOAT16 ? f16_value(h) : f32_from_bits((uint32_t)h << 16);
            printf("%s %s %s[%lld] = 0x%04x (%.9g)\n", probe, dtype_name(t->dtype), name, (long long)i, h,
                   (double)v);
        }
    }
    free(host);
}

static void print_tensor(const char *probe, const char *name, const probe_tensor *t)
{
    print_elements(probe, name, t, -1);
}

/* Phase 2 and synchronize; a failed status is printed as the probe's result. */
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static int run(const char *probe, aclnnStatus phase1, uint64_t ws, aclOpExecutor *ex, phase2_fn phase2)
{
    if (phase1 != ACLNN_SUCCESS) {
        (void)aclGetRecentErrMsg(); /* its text differs between CANN and libaclnn: the status is the result */
        printf("%s status = %d (phase 1)\n", probe, (int)phase1);
        return -1;
    }
    void *workspace = NULL;
    if (ws > 0 && aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        printf("%s status = workspace allocation failed\n", probe);
        g_failures++;
        return -1;
    }
    aclnnStatus st = phase2(workspace, ws, ex, g_stream);
    aclError sync = aclrtSynchronizeStream(g_stream);
    if (workspace != NULL)
        aclrtFree(workspace);
    if (st != ACLNN_SUCCESS || sync != ACL_SUCCESS) {
        printf("%s status = %d / %d (phase 2 / synchronize)\n", probe, (int)st, (int)sync);
        return -1;
    }
    return 0;
}

/* ---- ReplicationPad2dBackward ---------------------------------------------------------------- */

/* gradOutput [1, 1, H + pt + pb, W + pl + pr] -> gradInput [1, 1, H, W]; padding in CANN's
 * order (left, right, top, bottom).  Prints the first `shown` elements (all: -1). */
static void probe_pad_backward_shown(const char *probe, aclDataType dtype, int64_t h, int64_t w,
                                     const int64_t pad[4], const float *grad, int64_t shown)
{
    int64_t in_dims[4] = {1, 1, h, w};
    int64_t out_dims[4] = {1, 1, h + pad[2] + pad[3], w + pad[0] + pad[1]};
    probe_tensor g = make_tensor(dtype, 4, out_dims, grad);
    probe_tensor self = make_tensor(dtype, 4, in_dims, NULL);
    probe_tensor gi = make_tensor(dtype, 4, in_dims, NULL);
    aclIntArray *padding = aclCreateIntArray(pad, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnReplicationPad2dBackwardGetWorkspaceSize(g.tensor, self.tensor, padding, gi.tensor, &ws, &ex);
    if (run(probe, st, ws, ex, aclnnReplicationPad2dBackward) == 0)
        print_elements(probe, "gradInput", &gi, shown);
    aclDestroyIntArray(padding);
    free_tensor(&g);
    free_tensor(&self);
    free_tensor(&gi);
}

static void probe_pad_backward(const char *probe, aclDataType dtype, int64_t h, int64_t w, const int64_t pad[4],
                               const float *grad)
{
    probe_pad_backward_shown(probe, dtype, h, w, pad, grad, -1);
}

static void pad_backward_probes(void)
{
    /* Width-only padding (the card's H-unpadded kernel): each edge gets two terms whose fp32
     * sum lies exactly halfway between two fp16 values: 1 + 2^-11, 3 + 2^-10, -(1 + 2^-11),
     * 2048 + 1, 1.5 + 2^-11, -(3 + 2^-10).  The smaller neighbour in magnitude has an even last
     * bit each time, so half-even and half-away-from-zero disagree on every one. */
    const int64_t w_only[4] = {1, 1, 0, 0};
    const float w_ties[4 * 4] = {1.0f, 0x1p-11f, 3.0f, 0x1p-10f,   -1.0f, -0x1p-11f, 2048.0f, 1.0f,
                                 0x1p-11f, 1.0f, 0x1p-10f, 3.0f,   1.5f, 0x1p-11f, -3.0f, -0x1p-10f};
    probe_pad_backward("pad_bw_w_only_ties", ACL_FLOAT16, 4, 2, w_only, w_ties);
    /* The same kind of sums with height-only padding (the W-unpadded kernel). */
    const int64_t h_only[4] = {0, 0, 1, 1};
    const float h_ties[4 * 2] = {1.0f, -1.0f, 0x1p-11f, -0x1p-11f, 3.0f, 1.5f, 0x1p-10f, 0x1p-11f};
    probe_pad_backward("pad_bw_h_only_ties", ACL_FLOAT16, 2, 2, h_only, h_ties);
    /* fp32 order: three pads on the left give the left column four terms, 1, 1, 0, 2^24 (the
     * last is the edge itself): summed in row order from +0 they give 2^24 + 2, edge first
     * 2^24.  The same mirrored on the right.  The other gradients are -0: kept by a copy, +0
     * after a sum that starts from +0. */
    const int64_t left3[4] = {3, 0, 0, 0};
    const float order[7] = {1.0f, 1.0f, 0.0f, 0x1p24f, -0.0f, -0.0f, -0.0f};
    probe_pad_backward("pad_bw_fp32_order_left_negzero", ACL_FLOAT, 1, 4, left3, order);
    const int64_t right3[4] = {0, 3, 0, 0};
    const float order_r[7] = {-0.0f, -0.0f, -0.0f, 0x1p24f, 0.0f, 1.0f, 1.0f};
    probe_pad_backward("pad_bw_fp32_order_right_negzero", ACL_FLOAT, 1, 4, right3, order_r);
    /* Corners with both dims padded: the top-left corner sums 1, 2^-12 (row 0) and 2^-11 (row 1):
     * 1 + 3 * 2^-12 rounds once to 1 + 2^-10, but the column sum 1 + 2^-11 rounded to fp16 first
     * (a tie: 1.0) and then 1 + 2^-12 rounds to 1.0.  The card's kernel choice depends on the
     * size: gradOutput 4 x 4 (all of it fits one small kernel) and 4 x 72 (wider than 64). */
    const int64_t both[4] = {1, 1, 1, 1};
    for (int64_t w = 2; w <= 70; w += 68) {
        float *corner = calloc((size_t)(4 * (w + 2)), sizeof *corner);
        corner[0] = 1.0f;
        corner[1] = 0x1p-12f;
        corner[w + 2] = 0x1p-11f;
        probe_pad_backward_shown(w == 2 ? "pad_bw_corner_rounding_small" : "pad_bw_corner_rounding_wide",
                                 ACL_FLOAT16, 2, w, both, corner, 2);
        free(corner);
    }
    /* Overflow of an fp16 edge sum (inf, or 65504 in saturation mode) and fp32 subnormal adds. */
    const float big[1 * 4] = {60000.0f, 60000.0f, 1.0f, -60000.0f};
    probe_pad_backward("pad_bw_fp16_overflow", ACL_FLOAT16, 1, 2, w_only, big);
    const float tiny[1 * 4] = {0x1p-140f, 0x1p-140f, 0x1p-149f, 0x1p-149f};
    probe_pad_backward("pad_bw_fp32_subnormal", ACL_FLOAT, 1, 2, w_only, tiny);
}

/* ---- Prelu and PreluBackward --------------------------------------------------------------- */

#define PRELU_C 4
#define PRELU_W 7
static const float prelu_x[PRELU_W] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN};
static const float prelu_w[PRELU_C] = {0.25f, -1.0f, INFINITY, NAN};

static void probe_prelu(aclDataType dtype)
{
    char probe[64];
    snprintf(probe, sizeof probe, "prelu_specials");
    float x[PRELU_C * PRELU_W];
    for (int c = 0; c < PRELU_C; c++)
        memcpy(&x[c * PRELU_W], prelu_x, sizeof prelu_x);
    int64_t dims[3] = {1, PRELU_C, PRELU_W}, wdims[1] = {PRELU_C};
    probe_tensor self = make_tensor(dtype, 3, dims, x);
    probe_tensor weight = make_tensor(dtype, 1, wdims, prelu_w);
    probe_tensor out = make_tensor(dtype, 3, dims, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluGetWorkspaceSize(self.tensor, weight.tensor, out.tensor, &ws, &ex);
    if (run(probe, st, ws, ex, aclnnPrelu) == 0)
        print_tensor(probe, "out", &out);
    free_tensor(&self);
    free_tensor(&weight);
    free_tensor(&out);
}

/* PreluBackward on one channel: gradInput and gradWeight. */
static void probe_prelu_backward(const char *probe, aclDataType dtype, int64_t n, const float *g, const float *x,
                                 float w)
{
    int64_t dims[2] = {n, 1}, wdims[1] = {1};
    probe_tensor grad = make_tensor(dtype, 2, dims, g);
    probe_tensor self = make_tensor(dtype, 2, dims, x);
    probe_tensor weight = make_tensor(dtype, 1, wdims, &w);
    probe_tensor gi = make_tensor(dtype, 2, dims, NULL);
    probe_tensor gw = make_tensor(dtype, 1, wdims, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluBackwardGetWorkspaceSize(grad.tensor, self.tensor, weight.tensor, gi.tensor, gw.tensor,
                                                        &ws, &ex);
    if (run(probe, st, ws, ex, aclnnPreluBackward) == 0) {
        print_tensor(probe, "gradInput", &gi);
        print_tensor(probe, "gradWeight", &gw);
    }
    free_tensor(&grad);
    free_tensor(&self);
    free_tensor(&weight);
    free_tensor(&gi);
    free_tensor(&gw);
}

static void prelu_probes(void)
{
    probe_prelu(ACL_FLOAT);
    probe_prelu(ACL_FLOAT16);
    /* Per-term rounding of x*g to fp16 before the sum: (1 + 2^-10)(1 - 2^-11) = 1 + 2^-11 - 2^-21
     * rounds down to 1 in fp16; three of them sum to 3 term by term, to 3 + 2^-9 rounded once.
     * And products below 2^-25, which vanish in fp16: four times -2^-26 is -2^-24 rounded once. */
    const float g_round[3] = {-0.99951171875f, -0.99951171875f, -0.99951171875f};
    const float x_round[3] = {-1.0009765625f, -1.0009765625f, -1.0009765625f};
    const float g_tiny[4] = {0x1p-13f, 0x1p-13f, 0x1p-13f, 0x1p-13f};
    const float x_tiny[4] = {-0x1p-13f, -0x1p-13f, -0x1p-13f, -0x1p-13f};
    for (int fp32 = 0; fp32 <= 1; fp32++) {
        aclDataType dtype = fp32 ? ACL_FLOAT : ACL_FLOAT16;
        probe_prelu_backward("prelu_bw_per_term_rounding", dtype, 3, g_round, x_round, 0.5f);
        probe_prelu_backward("prelu_bw_tiny_products", dtype, 4, g_tiny, x_tiny, 0.5f);
    }
    /* One special element each (w = 2), beside an ordinary one (x = -2, g = 2): gradInput
     * overflow (w*g beyond 65504 where x <= 0), an infinite gradient where x > 0, an infinite x:
     * each may turn the gradWeight sum into NaN through 0 * inf. */
    const float g_special[3] = {40000.0f, INFINITY, 1.0f};
    const float x_special[3] = {-1.0f, 1.0f, INFINITY};
    const char *const special_names[3] = {"prelu_bw_grad_input_overflow", "prelu_bw_inf_grad_positive_x",
                                          "prelu_bw_inf_x"};
    for (int k = 0; k < 3; k++) {
        const float g_pair[2] = {g_special[k], 2.0f}, x_pair[2] = {x_special[k], -2.0f};
        probe_prelu_backward(special_names[k], ACL_FLOAT16, 2, g_pair, x_pair, 2.0f);
        probe_prelu_backward(special_names[k], ACL_FLOAT, 2, g_pair, x_pair, 2.0f);
    }
    /* A positive fp32 subnormal x (a blend of g and w*g where x > 0 is found by scaling). */
    const float g_sub[2] = {1.0f, 1.0f};
    const float x_sub[2] = {0x1p-149f, 0x1p-130f};
    probe_prelu_backward("prelu_bw_subnormal_x", ACL_FLOAT, 2, g_sub, x_sub, 0.5f);
}

/* ---- Im2colBackward ------------------------------------------------------------------------- */

/* gradOutput [1, 1*k*k, L] of a k x k kernel over a 1 x 1 x h x w image, into `out_dtype`. */
static void probe_col2im(const char *probe, aclDataType grad_dtype, aclDataType out_dtype, int64_t h, int64_t w,
                         int64_t k, int64_t pad, const float *grad)
{
    const int64_t oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
    int64_t gdims[3] = {1, k * k, oh * ow}, odims[4] = {1, 1, h, w};
    probe_tensor g = make_tensor(grad_dtype, 3, gdims, grad);
    probe_tensor out = make_tensor(out_dtype, 4, odims, NULL);
    int64_t size[2] = {h, w}, ks[2] = {k, k}, one[2] = {1, 1}, pads[2] = {pad, pad};
    aclIntArray *input_size = aclCreateIntArray(size, 2), *kernel = aclCreateIntArray(ks, 2);
    aclIntArray *dilation = aclCreateIntArray(one, 2), *padding = aclCreateIntArray(pads, 2);
    aclIntArray *stride = aclCreateIntArray(one, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnIm2colBackwardGetWorkspaceSize(g.tensor, input_size, kernel, dilation, padding, stride,
                                                         out.tensor, &ws, &ex);
    if (run(probe, st, ws, ex, aclnnIm2colBackward) == 0)
        print_tensor(probe, "out", &out);
    aclDestroyIntArray(input_size);
    aclDestroyIntArray(kernel);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    free_tensor(&g);
    free_tensor(&out);
}

static void col2im_probes(void)
{
    /* A 2x2 kernel over a 3x3 image: the centre pixel gets four contributions, an edge pixel two.
     * An edge's fp16 terms 1 and 2^-11 sum to a tie: rounded to fp16 first (1.0), then widened,
     * or rounded once to fp32 (1 + 2^-11). */
    float mixed[4 * 4];
    for (int i = 0; i < 16; i++)
        mixed[i] = (i % 4 == 0) ? 1.0f : 0x1p-11f;
    probe_col2im("col2im_fp16_into_fp32", ACL_FLOAT16, ACL_FLOAT, 3, 3, 2, 0, mixed);
    /* fp32 order without padding: the centre gets 2^24, 1, 1, 1 in kernel order or the reverse. */
    float order[4 * 4];
    for (int i = 0; i < 16; i++)
        order[i] = (i / 4 == 0) ? 0x1p24f : 1.0f;
    probe_col2im("col2im_fp32_order_pad0", ACL_FLOAT, ACL_FLOAT, 3, 3, 2, 0, order);
    float order_p[9 * 9];
    for (int i = 0; i < 81; i++)
        order_p[i] = (i / 9 == 0) ? 0x1p24f : 1.0f;
    probe_col2im("col2im_fp32_order_pad1", ACL_FLOAT, ACL_FLOAT, 3, 3, 3, 1, order_p);
}

/* ---- UpsampleNearestExact1dBackward ---------------------------------------------------------- */

static void probe_upsample_backward(const char *probe, aclDataType dtype, int64_t in_len, int64_t out_len,
                                    const float *grad)
{
    int64_t gdims[3] = {1, 1, out_len}, odims[3] = {1, 1, in_len};
    probe_tensor g = make_tensor(dtype, 3, gdims, grad);
    probe_tensor out = make_tensor(dtype, 3, odims, NULL);
    int64_t osize[1] = {out_len}, isize[3] = {1, 1, in_len};
    aclIntArray *output_size = aclCreateIntArray(osize, 1), *input_size = aclCreateIntArray(isize, 3);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(g.tensor, output_size, input_size, 0.0,
                                                                         out.tensor, &ws, &ex);
    if (run(probe, st, ws, ex, aclnnUpsampleNearestExact1dBackward) == 0)
        print_tensor(probe, "out", &out);
    aclDestroyIntArray(output_size);
    aclDestroyIntArray(input_size);
    free_tensor(&g);
    free_tensor(&out);
}

static void upsample_probes(void)
{
    /* Scale 4: each input cell sums four gradients; order-sensitive fp32 terms in cell 0, and
     * one +inf gradient in cell 2 (a 0/1 matrix product spreads NaN through 0 * inf). */
    const float grad[16] = {0x1p24f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0x1p24f,
                            INFINITY, 1.0f, 2.0f, 3.0f, 0.5f, 0.25f, 0.125f, 0.0625f};
    probe_upsample_backward("upsample_bw_scale4", ACL_FLOAT, 4, 16, grad);
    probe_upsample_backward("upsample_bw_scale4_inf", ACL_FLOAT16, 4, 16, (const float[16]){
        1.0f, 0x1p-11f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, INFINITY, 1.0f, 2.0f, 3.0f, 60000.0f, 60000.0f, 0.0f, 0.0f});
}

/* ---- MaxPool2dWithMask ------------------------------------------------------------------------ */

/* 2x2 windows, stride 2, over a 2 x 4 image: two windows. */
static void probe_max_pool(const char *probe, aclDataType dtype, const float *x)
{
    int64_t dims[4] = {1, 1, 2, 4}, odims[4] = {1, 1, 1, 2};
    const int64_t mask_w = 32 * ((1 * 2 + 15) / 16 + 1);
    int64_t mdims[4] = {1, 1, 4, mask_w};
    probe_tensor self = make_tensor(dtype, 4, dims, x);
    probe_tensor out = make_tensor(dtype, 4, odims, NULL);
    probe_tensor mask = make_tensor(ACL_INT8, 4, mdims, NULL);
    int64_t two[2] = {2, 2}, zero[2] = {0, 0}, one[2] = {1, 1};
    aclIntArray *kernel = aclCreateIntArray(two, 2), *stride = aclCreateIntArray(two, 2);
    aclIntArray *padding = aclCreateIntArray(zero, 2), *dilation = aclCreateIntArray(one, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation, false,
                                                            out.tensor, mask.tensor, &ws, &ex);
    if (run(probe, st, ws, ex, aclnnMaxPool2dWithMask) == 0)
        print_tensor(probe, "out", &out);
    aclDestroyIntArray(kernel);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    free_tensor(&self);
    free_tensor(&out);
    free_tensor(&mask);
}

static void max_pool_probes(void)
{
    /* Window 0: -0 before +0 (which zero is the max); window 1: a NaN among numbers. */
    const float zeros_nan[8] = {-0.0f, 0.0f, 1.0f, NAN, -0.0f, 0.0f, 2.0f, -1.0f};
    probe_max_pool("max_pool_signed_zero_nan", ACL_FLOAT, zeros_nan);
    probe_max_pool("max_pool_signed_zero_nan", ACL_FLOAT16, zeros_nan);
    /* fp32 values beyond fp16's range (Ascend910 computes FLOAT as FLOAT16). */
    const float large[8] = {1e5f, 3.0f, -1e6f, -2e5f, 70000.0f, 65504.0f, -1e6f, -7e4f};
    probe_max_pool("max_pool_fp32_beyond_fp16", ACL_FLOAT, large);
}

/* ---- main --------------------------------------------------------------------------------- */

static void all_probes(void)
{
    pad_backward_probes();
    prelu_probes();
    col2im_probes();
    upsample_probes();
    max_pool_probes();
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&g_stream) != ACL_SUCCESS) {
        fprintf(stderr, "card_probe: runtime set-up failed\n");
        return 2;
    }
    const char *soc = aclrtGetSocName();
    printf("# card_probe on %s\n", soc ? soc : "(unknown SoC)");
    printf("# overflow mode: default\n");
    all_probes();
    /* The same probes in saturation mode, where the product allows switching: on a stream made
     * after the switch (a stream takes the device's mode when it is created). */
    aclrtStream default_mode_stream = g_stream;
    if (aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION) == ACL_SUCCESS &&
        aclrtCreateStream(&g_stream) == ACL_SUCCESS) {
        printf("# overflow mode: saturation (aclrtSetDeviceSatMode, then a new stream)\n");
        pad_backward_probes();
        prelu_probes();
        aclrtDestroyStream(g_stream);
        aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN);
    }
    g_stream = default_mode_stream;
    aclrtDestroyStream(g_stream);
    aclrtResetDevice(0);
    aclFinalize();
    return g_failures != 0;
}
