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
#include "ops/products.h"
#include "base/nn_simd.h"
#include "ops/im2col_common.h"

#define OP "aclnnIm2col"

/* The attribute arrays in argument order (kernelSize, dilation, padding, stride). */
static const char *const ARRAY_NAMES[4] = {"kernelSize", "dilation", "padding", "stride"};

/* planes = N*C (C for a 3-D self) */
typedef nn_i2c_plan im2col_plan;

typedef struct i2c_fast i2c_fast;

typedef struct im2col_ctx {
    const im2col_plan *plan;
    const i2c_fast *fast;      /* the AVX-512 rows, or NULL */
    bool stream_out;           /* large output: the AVX-512 rows write it non-temporally */
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
        nn_i2c_valid_range(W, OW, p->sW, col_off, &ow_lo, &ow_hi);                                \
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

DEFINE_IM2COL_ROW(im2col_row_u8, uint8_t)
DEFINE_IM2COL_ROW(im2col_row_u16, uint16_t)
DEFINE_IM2COL_ROW(im2col_row_u32, uint32_t)
DEFINE_IM2COL_ROW(im2col_row_u64, uint64_t)

/* Any element size of the products' lists (1, 2, 4 or 8 bytes: Ascend950 gathers its integer,
 * bool, double and complex dtypes too); zero bits are every dtype's padding value. */
static void im2col_row(const im2col_plan *p, size_t esz, const void *plane, void *row,
                       int64_t ki, int64_t kj)
{
    switch (esz) {
    case 1: im2col_row_u8(p, (const uint8_t *)plane, (uint8_t *)row, ki, kj); break;
    case 2: im2col_row_u16(p, (const uint16_t *)plane, (uint16_t *)row, ki, kj); break;
    case 4: im2col_row_u32(p, (const uint32_t *)plane, (uint32_t *)row, ki, kj); break;
    default: im2col_row_u64(p, (const uint64_t *)plane, (uint64_t *)row, ki, kj); break;
    }
}

/* ---- AVX-512 rows (same dtype in and out) ---------------------------------------------------
 *
 * An output row (fixed ki, kj, oh) is OW values of input row ih taken every sW columns from
 * column kj*dW - pW on.  It is made in chunks of `lanes` window positions: the chunk's source
 * columns span at most two vectors (V = 16 four-byte or 32 two-byte elements) from its first
 * column s0, so two masked loads from s0 (one when sW = 1) and one two-source permute (lane
 * l <- element l*sW) build it.  The loads' masks cover only the columns inside [0, W): a padding column reads as
 * 0, which is im2col's padding value, with no per-lane test.  Rows in the vertical padding are
 * stored as zeros.  A pure copy of the bits, like the portable loop. */
enum { I2C_MAX_STRIDE = 8 }; /* wider strides keep too few lanes per chunk; portable loop */

typedef struct i2c_chunk {
    int64_t src;              /* s0: the chunk's first source column (negative in the padding) */
    uint32_t load_lo, load_hi; /* element masks of the loads at s0 and s0 + V */
} i2c_chunk;

struct i2c_fast {
    int64_t lanes, chunks;    /* window positions per chunk, chunks per output row */
    bool two_loads;           /* a chunk's columns reach past the first vector (sW > 1) */
    uint32_t last_store;      /* store mask of a row's last chunk */
    uint16_t pick[32];        /* the permute's source element of lane l: l*sW (0 past `lanes`) */
    i2c_chunk *table;         /* [kW][chunks]: the chunks of each kernel column */
};

/* The chunk table, or false (no AVX-512, a dtype cast, a wide stride, no memory). */
static bool build_fast(const im2col_plan *p, i2c_fast *f)
{
#if NN_HAVE_X86_SIMD
    const size_t esz = nn_dtype_size(p->in_dtype);
    if (!nn_cpu_avx512() || p->in_dtype != p->out_dtype || p->sW > I2C_MAX_STRIDE || (esz != 2 && esz != 4))
        return false;
    const int64_t V = 64 / (int64_t)nn_dtype_size(p->in_dtype);
    f->lanes = (2 * V - 1) / p->sW + 1 < V ? (2 * V - 1) / p->sW + 1 : V;
    f->chunks = nn_ceil_div(p->OW, f->lanes);
    f->two_loads = (f->lanes - 1) * p->sW >= V;
    for (int64_t l = 0; l < 32; l++) f->pick[l] = (uint16_t)(l < f->lanes ? l * p->sW : 0);
    f->last_store = nn_lane_range(0, p->OW - (f->chunks - 1) * f->lanes, 32);
    f->table = malloc((size_t)(p->kW * f->chunks) * sizeof *f->table);
    if (f->table == NULL) return false;
    for (int64_t kj = 0; kj < p->kW; kj++) {
        for (int64_t c = 0; c < f->chunks; c++) {
            i2c_chunk *ch = &f->table[kj * f->chunks + c];
            ch->src = c * f->lanes * p->sW + kj * p->dW - p->pW;
            ch->load_lo = nn_lane_range(-ch->src, p->W - ch->src, V);
            ch->load_hi = nn_lane_range(-ch->src - V, p->W - ch->src - V, V);
        }
    }
    return true;
#else
    (void)p;
    (void)f;
    return false;
#endif
}

#if NN_HAVE_X86_SIMD
/* Element `at` (may be before the row) of a row of esz-byte elements, for a masked load. */
static inline const void *element_at(const void *row, int64_t at, int64_t esz)
{
    return (const void *)((uintptr_t)row + (uintptr_t)(at * esz));
}

/* A plane's block is written in whole 64-byte lines, non-temporal, through a line stage
 * (base/nn_simd.h) when the output is large: flushed once this many bytes are complete. */
enum { I2C_FLUSH_BYTES = 256 };

/* Plane `plane`'s kH*kW*L block of out, which starts `at` bytes into the output range being
 * written: stored at out + at directly, or through `stage` (whose dst is out).  `wide`: four-byte
 * elements.  Inlined once per size. */
NN_AVX512 static inline __attribute__((always_inline)) void
fast_plane(const im2col_plan *p, const i2c_fast *f, const void *plane, unsigned char *out, int64_t at,
           nn_line_stage *stage, bool wide)
{
    const int64_t esz = wide ? 4 : 2, V = 64 / esz, row_bytes = p->OW * esz;
    const __m512i pick16 = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)f->pick));
    const __m512i pick32 = _mm512_loadu_si512(f->pick);
    const uint32_t full_store = nn_lane_range(0, f->lanes, 32);
    const bool two_loads = f->two_loads;
    for (int64_t ki = 0; ki < p->kH; ki++) {
        for (int64_t kj = 0; kj < p->kW; kj++) {
            const i2c_chunk *chunks = f->table + kj * f->chunks;
            for (int64_t oh = 0; oh < p->OH; oh++, at += row_bytes) {
                const int64_t ih = oh * p->sH - p->pH + ki * p->dH;
                const bool inside = ih >= 0 && ih < p->H;
                const unsigned char *row = (const unsigned char *)plane + (inside ? ih : 0) * p->W * esz;
                unsigned char *dst = stage != NULL ? nn_line_stage_at(stage, at) : out + at;
                for (int64_t c = 0; c < f->chunks; c++) {
                    const i2c_chunk *ch = &chunks[c];
                    const uint32_t store = c + 1 < f->chunks ? full_store : f->last_store;
                    void *chunk_out = dst + c * f->lanes * esz;
                    __m512i v = _mm512_setzero_si512();
                    if (wide && inside) {
                        const __m512i lo = _mm512_maskz_loadu_epi32((__mmask16)ch->load_lo, element_at(row, ch->src, 4));
                        const __m512i hi =
                            two_loads ? _mm512_maskz_loadu_epi32((__mmask16)ch->load_hi, element_at(row, ch->src + V, 4))
                                      : lo;
                        v = _mm512_permutex2var_epi32(lo, pick16, hi);
                    } else if (inside) {
                        const __m512i lo = _mm512_maskz_loadu_epi16(ch->load_lo, element_at(row, ch->src, 2));
                        const __m512i hi =
                            two_loads ? _mm512_maskz_loadu_epi16(ch->load_hi, element_at(row, ch->src + V, 2)) : lo;
                        v = _mm512_permutex2var_epi16(lo, pick32, hi);
                    }
                    if (wide)
                        _mm512_mask_storeu_epi32(chunk_out, (__mmask16)store, v);
                    else
                        _mm512_mask_storeu_epi16(chunk_out, store, v);
                }
                if (stage != NULL && at + row_bytes - stage->written >= I2C_FLUSH_BYTES)
                    nn512_line_stage_flush(stage, at + row_bytes, false);
            }
        }
    }
}

/* Planes [begin, end) (a contiguous stretch of out); streamed through a per-call stage when
 * `stream`.  False when the stage could not be allocated.  Inlined once per element size. */
NN_AVX512 static inline __attribute__((always_inline)) bool
fast_planes(const im2col_ctx *ctx, int64_t begin, int64_t end, bool stream, bool wide)
{
    const im2col_plan *p = ctx->plan;
    const int64_t esz = wide ? 4 : 2, in_plane = p->H * p->W * esz;
    const int64_t block = p->kH * p->kW * p->OH * p->OW * esz;
    unsigned char *out = ctx->out + begin * block;
    nn_line_stage stage = {NULL, out, 0, true};
    unsigned char *stage_region = NULL;
    if (stream) {
        /* a flush's worth, a row, the carried-over line and a line of slack, kept in one page */
        const size_t stage_bytes = (size_t)(I2C_FLUSH_BYTES + p->OW * esz + 2 * 64);
        stage_region = malloc(stage_bytes + NN_LINE_STAGE_SLACK);
        if (stage_region == NULL) return false;
        stage.buf = nn_line_stage_place(stage_region, stage_bytes);
    }
    for (int64_t plane = begin; plane < end; plane++)
        fast_plane(p, ctx->fast, ctx->in + plane * in_plane, out, (plane - begin) * block, stream ? &stage : NULL,
                   wide);
    if (stream) {
        nn512_line_stage_flush(&stage, (end - begin) * block, true);
        nn_streaming_fence();
        free(stage_region);
    }
    return true;
}

NN_AVX512 static bool fast_planes_u32(const im2col_ctx *ctx, int64_t begin, int64_t end, bool stream)
{
    return fast_planes(ctx, begin, end, stream, true);
}

NN_AVX512 static bool fast_planes_u16(const im2col_ctx *ctx, int64_t begin, int64_t end, bool stream)
{
    return fast_planes(ctx, begin, end, stream, false);
}
#endif

static void im2col_planes(void *vctx, int64_t begin, int64_t end)
{
    im2col_ctx *ctx = (im2col_ctx *)vctx;
    const im2col_plan *p = ctx->plan;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const size_t out_esz = nn_dtype_size(p->out_dtype);
    const int64_t L = p->OH * p->OW;
    const int64_t rows = p->kH * p->kW;
    const bool cast = p->in_dtype != p->out_dtype;
#if NN_HAVE_X86_SIMD
    if (ctx->fast != NULL) {
        const bool ok = in_esz == 4 ? fast_planes_u32(ctx, begin, end, ctx->stream_out)
                                    : fast_planes_u16(ctx, begin, end, ctx->stream_out);
        if (!ok) __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
        return;
    }
#endif
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
                nn_to_f32_n(p->in_dtype, gathered, widened, (size_t)L);
                nn_from_f32_n(p->out_dtype, widened, dst, (size_t)L);
            }
        }
    }
    free(gathered);
    free(widened);
}

static aclnnStatus im2col_kernel(const nn_launch *l)
{
    const im2col_plan *p = (const im2col_plan *)l->plan;
    /* About 64 KiB of output per task keeps small images from paying thread hand-offs. */
    const int64_t per_plane = p->kH * p->kW * p->OH * p->OW;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    i2c_fast fast;
    const bool use_fast = build_fast(p, &fast);
    nn_launch_set_path(l, use_fast ? "im2col_avx512_rows" : "im2col_portable");
    const uint64_t out_bytes = (uint64_t)(p->planes * per_plane) * nn_dtype_size(p->out_dtype);
    im2col_ctx ctx = {p, use_fast ? &fast : NULL, use_fast && nn_use_streaming_stores(out_bytes),
                      (const unsigned char *)l->operands[0].data, (unsigned char *)l->operands[1].data, 0};
    nn_parallel_for(p->planes, grain, im2col_planes, &ctx);
    if (use_fast) free(fast.table);
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
    return nn_i2c_make_executor(OP, im2col_kernel, &plan, self, out, workspaceSize, executor);
}

aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                        aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
