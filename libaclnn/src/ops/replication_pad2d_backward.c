/*
 * replication_pad2d_backward.c - aclnnReplicationPad2dBackward: the gradient of
 * aclnnReplicationPad2d with respect to its input.
 *
 *   gradInput[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)] += gradOutput[..., i, j]
 *
 * Written as a gather, not as zero-fill + scatter: every gradInput row is computed once from
 * the gradOutput rows that map onto it (one row inside, top+1 / bottom+1 rows at the edges).
 * Inside a row the interior is a plain copy and the first / last element sum their
 * replicated strips.  Per element the contributions are added in (row, column) order starting
 * from +0, which is exactly ATen's order for fp32/fp64, so those results are bit-identical to
 * PyTorch; the order never depends on the thread split.
 *
 * With AVX-512, fp32 and fp16/bf16 rows are computed 16 / 32 columns per vector and written
 * straight to gradInput (non-temporal stores for large outputs), with the same adds in the same
 * order as the portable row code.
 *
 * Precision: fp16/bf16 are accumulated in fp32 and rounded once; complex64 in double.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_pad2d_backward.h"
#include "exec/nn_exec.h"
#include "base/nn_half_impl.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnReplicationPad2dBackward"

static const aclDataType pad_bwd_dtypes[] = {
    ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128,
};
#define NUM_PAD_BWD_DTYPES (sizeof pad_bwd_dtypes / sizeof pad_bwd_dtypes[0])

/* How one element is stored and accumulated. */
enum pad_bwd_kind { KIND_F32, KIND_F64, KIND_C128, KIND_F16, KIND_BF16, KIND_C64 };

typedef struct pad_bwd_plan {
    int64_t planes;        /* N*C (C for 3-D) */
    int64_t H, W, Ho, Wo;
    int64_t top, bottom, left;
    int64_t block_rows;    /* gradInput rows per work item (about 2K elements, so that the
                            * complex64 widening buffers stay in L1) */
    int kind;
} pad_bwd_plan;

/* The gradOutput rows [*r0, *r1] (inclusive) that replicate gradInput row h. */
static void source_rows(const pad_bwd_plan *p, int64_t h, int64_t *r0, int64_t *r1)
{
    *r0 = h == 0 ? 0 : h + p->top;
    *r1 = h == p->H - 1 ? p->Ho - 1 : h + p->top;
}

/* ---------------------------------------------------------------------------------------- */
/* One gradInput row from `nrows` consecutive gradOutput rows (`rows` points at the first),  */
/* in the accumulation type T (float or double).  `comps` scalars per element (2 for         */
/* complex; complex addition is per component).                                              */
/* ---------------------------------------------------------------------------------------- */

#define DEFINE_GRAD_ROW(NAME, T)                                                                  \
    NN_PU_HOT static void NAME(const pad_bwd_plan *p, int comps, const T *restrict rows, int64_t nrows,     \
                     T *restrict gi)                                                             \
    {                                                                                            \
        const int64_t row_len = p->Wo * comps, W = p->W, left = p->left;                         \
        const int64_t first_hi = W == 1 ? p->Wo : left + 1; /* end of the left strip */          \
        for (int comp = 0; comp < comps; comp++) {                                               \
            T first = 0;                                                                         \
            for (int64_t r = 0; r < nrows; r++) {                                                \
                const T *restrict row = rows + r * row_len + comp;                               \
                for (int64_t j = 0; j < first_hi; j++) {                                         \
                    first += row[j * comps];                                                     \
                }                                                                                \
            }                                                                                    \
            gi[comp] = first;                                                                    \
        }                                                                                        \
        if (W == 1) {                                                                            \
            return;                                                                              \
        }                                                                                        \
        const int64_t last_lo = W - 1 + left; /* first column of the right strip */              \
        for (int comp = 0; comp < comps; comp++) {                                               \
            T last = 0;                                                                          \
            for (int64_t r = 0; r < nrows; r++) {                                                \
                const T *restrict row = rows + r * row_len + comp;                               \
                for (int64_t j = last_lo; j < p->Wo; j++) {                                      \
                    last += row[j * comps];                                                      \
                }                                                                                \
            }                                                                                    \
            gi[(W - 1) * comps + comp] = last;                                                   \
        }                                                                                        \
        /* interior: scalars [comps, (W-1)*comps) of gi <- columns left+1 .. of each row */      \
        const int64_t n = (W - 2) * comps;                                                       \
        T *restrict dst = gi + comps;                                                            \
        const T *restrict src = rows + (left + 1) * comps;                                       \
        for (int64_t k = 0; k < n; k++) {                                                        \
            dst[k] = (T)0 + src[k]; /* +0 start, as ATen's zero-filled grad_input */             \
        }                                                                                        \
        for (int64_t r = 1; r < nrows; r++) {                                                    \
            src = rows + r * row_len + (left + 1) * comps;                                       \
            for (int64_t k = 0; k < n; k++) {                                                    \
                dst[k] += src[k];                                                                \
            }                                                                                    \
        }                                                                                        \
    }

DEFINE_GRAD_ROW(grad_row_f32, float)
DEFINE_GRAD_ROW(grad_row_f64, double)

static void load_f64_from_f32(const float *src, double *dst, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        dst[k] = (double)src[k];
    }
}

static void store_f32_from_f64(const double *src, float *dst, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        dst[k] = (float)src[k];
    }
}

/* Work items are blocks of `block_rows` consecutive gradInput rows of one plane; the
 * gradOutput rows they read are consecutive too: [first source row of the first, last source
 * row of the last]. */
typedef struct row_block {
    int64_t plane, h0, h1;    /* gradInput rows [h0, h1) */
    int64_t src0, src1;       /* gradOutput rows [src0, src1] */
} row_block;

static row_block block_of(const pad_bwd_plan *p, int64_t item)
{
    row_block b;
    const int64_t blocks_per_plane = (p->H + p->block_rows - 1) / p->block_rows;
    b.plane = item / blocks_per_plane;
    b.h0 = (item % blocks_per_plane) * p->block_rows;
    b.h1 = b.h0 + p->block_rows < p->H ? b.h0 + p->block_rows : p->H;
    int64_t unused;
    source_rows(p, b.h0, &b.src0, &unused);
    source_rows(p, b.h1 - 1, &unused, &b.src1);
    return b;
}

typedef struct pad_bwd_ctx {
    const pad_bwd_plan *plan;
    const void *grad_out;
    void *grad_in;
    bool stream;           /* large gradInput: blocks are built in a buffer and streamed out */
    int failed;            /* a range could not get its widening buffer */
} pad_bwd_ctx;

/* Where a range writes its gradInput blocks.  Streaming (large outputs): each block of
 * block_rows rows (a few KiB, consecutive in gradInput) is computed into `buffer`, which stays
 * in L1, and copied out with non-temporal stores, so no gradInput line is read for ownership.
 * Otherwise (or if the buffer could not be allocated) blocks are written in place. */
typedef struct block_sink {
    unsigned char *buffer;  /* NULL: write in place */
    size_t row_bytes;       /* one gradInput row in storage bytes */
} block_sink;

static block_sink sink_open(const pad_bwd_ctx *ctx, size_t row_bytes)
{
    block_sink sink = {NULL, row_bytes};
    if (ctx->stream) {
        sink.buffer = (unsigned char *)malloc((size_t)ctx->plan->block_rows * row_bytes);
    }
    return sink;
}

/* Where block b's rows are to be computed: the buffer, or gradInput itself. */
static void *sink_rows(const block_sink *sink, const pad_bwd_ctx *ctx, const row_block *b)
{
    if (sink->buffer != NULL) {
        return sink->buffer;
    }
    return (unsigned char *)ctx->grad_in + (size_t)(b->plane * ctx->plan->H + b->h0) * sink->row_bytes;
}

/* Block b is complete in the buffer: stream it to gradInput. */
static void sink_flush(const block_sink *sink, const pad_bwd_ctx *ctx, const row_block *b)
{
    if (sink->buffer != NULL) {
        unsigned char *dst = (unsigned char *)ctx->grad_in +
                             (size_t)(b->plane * ctx->plan->H + b->h0) * sink->row_bytes;
        nn_copy_row_nt(dst, sink->buffer, (size_t)(b->h1 - b->h0) * sink->row_bytes);
    }
}

/* End of a range: order the streamed stores, release the buffer. */
static void sink_close(block_sink *sink)
{
    if (sink->buffer != NULL) {
        nn_streaming_fence();
        free(sink->buffer);
        sink->buffer = NULL;
    }
}

#if NN_HAVE_AVX512_CODE
/* gradOutput rows prefetched this far ahead of the rows being summed (a few KiB: one core
 * alone does not keep enough misses in flight to stream at full speed otherwise). */
#define PREFETCH_ROWS 8

/* fp32, AVX-512: gradInput rows [b->h0, b->h1) of one plane written straight to gradInput,
 * 16 columns per vector: the interior lanes are (0 + row r0) + row r0+1 + ... of the shifted
 * gradOutput rows (the same adds, in the same order, as grad_row_f32), lane 0 and lane W-1
 * are replaced by the two strip sums.  With `stream` every vector is a non-temporal store
 * (the caller guarantees 64-byte aligned rows of a multiple of 16 floats), so the whole
 * gradInput plane goes out as one contiguous stream without a read for ownership. */
NN_AVX512 static void grad_rows_f32_avx512(const pad_bwd_plan *p, const float *plane_go,
                                              float *plane_gi, int64_t h0, int64_t h1,
                                              bool stream)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left;
    const int64_t last_lo = W - 1 + left;
    const __mmask16 tail = (W & 15) != 0 ? (__mmask16)((1u << (W & 15)) - 1u) : (__mmask16)0xffff;
    const int64_t last_vec = (W - 1) & ~(int64_t)15;
    const __mmask16 last_lane = (__mmask16)(1u << ((W - 1) & 15));
    for (int64_t h = h0; h < h1; h++) {
        int64_t r0, r1;
        source_rows(p, h, &r0, &r1);
        const int64_t nrows = r1 - r0 + 1;
        const float *rows = plane_go + r0 * Wo;
        /* (may point past the tensor: a prefetch never faults; integer arithmetic keeps the
         * pointer arithmetic itself in bounds) */
        const uintptr_t ahead = (uintptr_t)plane_go + (uintptr_t)((r1 + PREFETCH_ROWS) * Wo) * sizeof(float);
        for (uintptr_t byte = 0; byte < (uintptr_t)Wo * sizeof(float) + 64; byte += 64) {
            _mm_prefetch((const char *)(ahead + byte), _MM_HINT_T0);
        }
        float first = 0.0f, last = 0.0f;
        for (int64_t r = 0; r < nrows; r++) {
            const float *row = rows + r * Wo;
            for (int64_t j = 0; j <= left; j++) {
                first += row[j];
            }
        }
        for (int64_t r = 0; r < nrows; r++) {
            const float *row = rows + r * Wo;
            for (int64_t j = last_lo; j < Wo; j++) {
                last += row[j];
            }
        }
        float *dst = plane_gi + h * W;
        const float *src = rows + left;
        for (int64_t k = 0; k < W; k += 16) {
            const __mmask16 mask = k + 16 <= W ? (__mmask16)0xffff : tail;
            __m512 acc = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(mask, src + k));
            for (int64_t r = 1; r < nrows; r++) {
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask, src + r * Wo + k));
            }
            if (k == 0) {
                acc = _mm512_mask_mov_ps(acc, (__mmask16)1, _mm512_set1_ps(first));
            }
            if (k == last_vec) {
                acc = _mm512_mask_mov_ps(acc, last_lane, _mm512_set1_ps(last));
            }
            if (stream) {
                _mm512_stream_ps(dst + k, acc);
            } else {
                _mm512_mask_storeu_ps(dst + k, mask, acc);
            }
        }
    }
}

/* The AVX-512 fp32 path, if it applies: W >= 2, and for streaming whole aligned vectors. */
static bool pad_bwd_f32_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    if (p->kind != KIND_F32 || p->W < 2 || !nn_cpu_avx512()) {
        return false;
    }
    if (ctx->stream && ((p->W & 15) != 0 || ((uintptr_t)ctx->grad_in & 63) != 0)) {
        return false;
    }
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        grad_rows_f32_avx512(p, (const float *)ctx->grad_out + b.plane * p->Ho * p->Wo,
                             (float *)ctx->grad_in + b.plane * p->H * p->W, b.h0, b.h1, ctx->stream);
    }
    if (ctx->stream) {
        nn_streaming_fence();
    }
    return true;
}
#endif

/* Native types: storage == accumulation type, rows are used in place. */
static void pad_bwd_native(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
#if NN_HAVE_AVX512_CODE
    if (pad_bwd_f32_avx512(ctx, begin, end)) {
        return;
    }
#endif
    const int comps = p->kind == KIND_C128 ? 2 : 1;
    const int64_t plane_in = p->Ho * p->Wo * comps, row_in = p->Wo * comps, row_out = p->W * comps;
    const size_t scalar = p->kind == KIND_F32 ? sizeof(float) : sizeof(double);
    block_sink sink = sink_open(ctx, (size_t)row_out * scalar);
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        void *block = sink_rows(&sink, ctx, &b);
        for (int64_t h = b.h0; h < b.h1; h++) {
            int64_t r0, r1;
            source_rows(p, h, &r0, &r1);
            const int64_t first = b.plane * plane_in + r0 * row_in;
            const int64_t out = (h - b.h0) * row_out;
            if (p->kind == KIND_F32) {
                grad_row_f32(p, 1, (const float *)ctx->grad_out + first, r1 - r0 + 1,
                             (float *)block + out);
            } else {
                grad_row_f64(p, comps, (const double *)ctx->grad_out + first, r1 - r0 + 1,
                             (double *)block + out);
            }
        }
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
}

/* complex64 (double accumulation): a block's source rows are widened into a buffer in one
 * pass, summed with the native double row code, and the result rounded once. */
static void pad_bwd_c64(pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    const int64_t plane_in = p->Ho * p->Wo * 2, row_in = p->Wo * 2, row_out = p->W * 2;
    const int64_t max_src_rows = p->H == 1 ? p->Ho : p->block_rows + p->top + p->bottom;
    const int64_t in_cap = max_src_rows * row_in;
    double *rows = (double *)malloc((size_t)(in_cap + p->block_rows * row_out) * sizeof(double));
    if (rows == NULL) {
        __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    double *gi = rows + in_cap;
    block_sink sink = sink_open(ctx, (size_t)row_out * sizeof(float));
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        const int64_t in_at = b.plane * plane_in + b.src0 * row_in;
        load_f64_from_f32((const float *)ctx->grad_out + in_at, rows,
                          (size_t)((b.src1 - b.src0 + 1) * row_in));
        for (int64_t h = b.h0; h < b.h1; h++) {
            int64_t r0, r1;
            source_rows(p, h, &r0, &r1);
            grad_row_f64(p, 2, rows + (r0 - b.src0) * row_in, r1 - r0 + 1,
                         gi + (h - b.h0) * row_out);
        }
        store_f32_from_f64(gi, (float *)sink_rows(&sink, ctx, &b), (size_t)((b.h1 - b.h0) * row_out));
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
    free(rows);
}

/* fp16/bf16 interior element with a single contribution: round(0 + widen(x)) in fp32 is x
 * itself, except that -0 becomes +0 and a signalling NaN comes back quiet.  Doing exactly that
 * on the 16-bit patterns skips both conversions for the bulk of the tensor. */
NN_PU_HOT static void single_source_half(const uint16_t *restrict src, uint16_t *restrict dst,
                                         int64_t n, uint16_t inf_bits, uint16_t quiet_bit)
{
    for (int64_t k = 0; k < n; k++) {
        const uint16_t x = src[k];
        const uint16_t is_nan = (uint16_t)((x & 0x7fff) > inf_bits);
        const uint16_t fixed = is_nan ? (uint16_t)(x | quiet_bit) : x;
        dst[k] = x == 0x8000 ? 0 : fixed;
    }
}

NN_PU_HOT static void add_rows_f32(float *restrict acc, const float *restrict row, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        acc[k] += row[k];
    }
}

#define HALF_BLOCK 512

/* Exact widenings for the few edge elements, inlined (a call per element costs more than the
 * arithmetic).  fp16: normal, subnormal, zero, Inf and NaN (made quiet, as the row converters
 * do); bf16 is the upper half of an fp32. */
static inline float widen_bf16(uint16_t b)
{
    const uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float widen_f16(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    uint32_t bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x00400000u : 0);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else {
        /* zero or subnormal: mantissa * 2^-24, exact in fp32 */
        float magnitude = (float)mantissa * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Sum of columns [j0, j1) of `nrows` rows, widened, in (row, column) order from +0. */
static inline float strip_sum(const uint16_t *rows, int64_t nrows, int64_t row_len, int64_t j0,
                              int64_t j1, bool bf16)
{
    float sum = 0.0f;
    for (int64_t r = 0; r < nrows; r++) {
        const uint16_t *row = rows + r * row_len;
        if (bf16) {
            for (int64_t j = j0; j < j1; j++) {
                sum += widen_bf16(row[j]);
            }
        } else {
            for (int64_t j = j0; j < j1; j++) {
                sum += widen_f16(row[j]);
            }
        }
    }
    return sum;
}

/* One fp32 sum rounded to fp16/bf16, inlined: the two edge elements of every row would
 * otherwise cost two calls through base's exported converters (the same routine). */
static inline uint16_t narrow_one(float sum, bool bf16)
{
    return bf16 ? nn_half_f32_to_bf16(sum) : nn_half_f32_to_f16(sum);
}

/* What the fp16/bf16 rows need besides the plan. */
typedef struct half_row_ctx {
    bool bf16;
    void (*widen_n)(const uint16_t *, float *, size_t);
    void (*narrow_n)(const float *, uint16_t *, size_t);
    uint16_t inf_bits, quiet_bit;
} half_row_ctx;

static half_row_ctx half_row_ctx_of(const pad_bwd_plan *p)
{
    const bool bf16 = p->kind == KIND_BF16;
    half_row_ctx hc = {bf16, bf16 ? nn_bf16_to_f32_n : nn_f16_to_f32_n,
                       bf16 ? nn_f32_to_bf16_n : nn_f32_to_f16_n, bf16 ? 0x7f80 : 0x7c00,
                       bf16 ? 0x0040 : 0x0200};
    return hc;
}

/* One fp16/bf16 gradInput row from `nrows` gradOutput rows: every sum in fp32, rounded once.
 * Edge columns are summed element by element; interior elements of rows with one source row
 * take the bit-level shortcut above; rows with several source rows (top/bottom edges) are
 * widened in blocks and summed. */
static void half_row(const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *rows,
                     int64_t nrows, uint16_t *gi)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left;
    const int64_t first_hi = W == 1 ? Wo : left + 1, last_lo = W - 1 + left;
    float acc[HALF_BLOCK], tmp[HALF_BLOCK];
    gi[0] = narrow_one(strip_sum(rows, nrows, Wo, 0, first_hi, hc->bf16), hc->bf16);
    if (W == 1) {
        return;
    }
    gi[W - 1] = narrow_one(strip_sum(rows, nrows, Wo, last_lo, Wo, hc->bf16), hc->bf16);
    const int64_t n = W - 2;
    if (nrows == 1) {
        single_source_half(rows + left + 1, gi + 1, n, hc->inf_bits, hc->quiet_bit);
        return;
    }
    for (int64_t k0 = 0; k0 < n; k0 += HALF_BLOCK) {
        const int64_t m = n - k0 < HALF_BLOCK ? n - k0 : HALF_BLOCK;
        hc->widen_n(rows + left + 1 + k0, acc, (size_t)m);
        for (int64_t k = 0; k < m; k++) {
            acc[k] = 0.0f + acc[k];
        }
        for (int64_t r = 1; r < nrows; r++) {
            hc->widen_n(rows + r * Wo + left + 1 + k0, tmp, (size_t)m);
            add_rows_f32(acc, tmp, m);
        }
        hc->narrow_n(acc, gi + 1 + k0, (size_t)m);
    }
}

#if NN_HAVE_AVX512_CODE
/* fp16/bf16, AVX-512BW: gradInput rows [h0, h1) of one plane written straight to gradInput.
 * Rows with one source row (all but the top/bottom edge rows) are the bit-level shortcut of
 * single_source_half on 32 lanes at a time, with lanes 0 and W-1 replaced by the rounded strip
 * sums; with `stream` (rows of a multiple of 32 elements, 64-byte aligned) every vector is a
 * non-temporal store.  The few rows with several source rows go through half_row into `spare`
 * (W elements) and are copied. */
NN_AVX512 static void grad_rows_half_avx512(
    const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *plane_go, uint16_t *plane_gi,
    int64_t h0, int64_t h1, bool stream, uint16_t *spare)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left;
    const int64_t last_lo = W - 1 + left;
    const __mmask32 tail = (W & 31) != 0 ? (__mmask32)((1u << (W & 31)) - 1u) : (__mmask32)0xffffffffu;
    const int64_t last_vec = (W - 1) & ~(int64_t)31;
    const __mmask32 last_lane = (__mmask32)(1u << ((W - 1) & 31));
    const __m512i magnitude = _mm512_set1_epi16(0x7fff), inf = _mm512_set1_epi16((short)hc->inf_bits);
    const __m512i quiet = _mm512_set1_epi16((short)hc->quiet_bit);
    const __m512i neg_zero = _mm512_set1_epi16((short)0x8000), zero = _mm512_setzero_si512();
    for (int64_t h = h0; h < h1; h++) {
        int64_t r0, r1;
        source_rows(p, h, &r0, &r1);
        const uint16_t *rows = plane_go + r0 * Wo;
        uint16_t *dst = plane_gi + h * W;
        const uintptr_t ahead = (uintptr_t)plane_go + (uintptr_t)((r1 + 2 * PREFETCH_ROWS) * Wo) * sizeof(uint16_t);
        for (uintptr_t byte = 0; byte < (uintptr_t)Wo * sizeof(uint16_t) + 64; byte += 64) {
            _mm_prefetch((const char *)(ahead + byte), _MM_HINT_T0);
        }
        if (r1 != r0) {
            half_row(p, hc, rows, r1 - r0 + 1, spare);
            memcpy(dst, spare, (size_t)W * sizeof(uint16_t));
            continue;
        }
        const __m512i first = _mm512_set1_epi16(
            (short)narrow_one(strip_sum(rows, 1, Wo, 0, left + 1, hc->bf16), hc->bf16));
        const __m512i last = _mm512_set1_epi16(
            (short)narrow_one(strip_sum(rows, 1, Wo, last_lo, Wo, hc->bf16), hc->bf16));
        const uint16_t *src = rows + left;
        for (int64_t k = 0; k < W; k += 32) {
            const __mmask32 mask = k + 32 <= W ? (__mmask32)0xffffffffu : tail;
            const __m512i x = _mm512_maskz_loadu_epi16(mask, src + k);
            const __mmask32 nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(x, magnitude), inf);
            __m512i v = _mm512_mask_mov_epi16(x, nan, _mm512_or_si512(x, quiet));
            v = _mm512_mask_mov_epi16(v, _mm512_cmpeq_epi16_mask(x, neg_zero), zero);
            if (k == 0) {
                v = _mm512_mask_mov_epi16(v, (__mmask32)1, first);
            }
            if (k == last_vec) {
                v = _mm512_mask_mov_epi16(v, last_lane, last);
            }
            if (stream) {
                _mm512_stream_si512((void *)(dst + k), v);
            } else {
                _mm512_mask_storeu_epi16(dst + k, mask, v);
            }
        }
    }
}

/* The AVX-512 fp16/bf16 path, if it applies: W >= 2, and for streaming whole aligned vectors. */
static bool pad_bwd_half_avx512(pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    if (p->W < 2 || !nn_cpu_avx512()) {
        return false;
    }
    if (ctx->stream && ((p->W & 31) != 0 || ((uintptr_t)ctx->grad_in & 63) != 0)) {
        return false;
    }
    uint16_t *spare = (uint16_t *)malloc((size_t)p->W * sizeof(uint16_t));
    if (spare == NULL) {
        return false; /* the portable path needs no buffer of that size */
    }
    const half_row_ctx hc = half_row_ctx_of(p);
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        grad_rows_half_avx512(p, &hc, (const uint16_t *)ctx->grad_out + b.plane * p->Ho * p->Wo,
                              (uint16_t *)ctx->grad_in + b.plane * p->H * p->W, b.h0, b.h1,
                              ctx->stream, spare);
    }
    if (ctx->stream) {
        nn_streaming_fence();
    }
    free(spare);
    return true;
}
#endif

/* fp16/bf16 rows (see half_row). */
static void pad_bwd_half(pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
#if NN_HAVE_AVX512_CODE
    if (pad_bwd_half_avx512(ctx, begin, end)) {
        return;
    }
#endif
    const pad_bwd_plan *p = ctx->plan;
    const half_row_ctx hc = half_row_ctx_of(p);
    const uint16_t *grad_out = (const uint16_t *)ctx->grad_out;
    block_sink sink = sink_open(ctx, (size_t)p->W * sizeof(uint16_t));
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        uint16_t *block = (uint16_t *)sink_rows(&sink, ctx, &b);
        for (int64_t h = b.h0; h < b.h1; h++) {
            int64_t r0, r1;
            source_rows(p, h, &r0, &r1);
            half_row(p, &hc, grad_out + (b.plane * p->Ho + r0) * p->Wo, r1 - r0 + 1,
                     block + (h - b.h0) * p->W);
        }
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
}

static void pad_bwd_items(void *vctx, int64_t begin, int64_t end)
{
    pad_bwd_ctx *ctx = (pad_bwd_ctx *)vctx;
    const int kind = ctx->plan->kind;
    if (kind == KIND_F32 || kind == KIND_F64 || kind == KIND_C128) {
        pad_bwd_native(ctx, begin, end);
    } else if (kind == KIND_C64) {
        pad_bwd_c64(ctx, begin, end);
    } else {
        pad_bwd_half(ctx, begin, end);
    }
}

static aclnnStatus pad_bwd_kernel(const nn_launch *launch)
{
    const pad_bwd_plan *p = (const pad_bwd_plan *)launch->plan;
    /* operands: 0 gradOutput, 1 self (shape only), 2 gradInput */
    pad_bwd_ctx ctx = {p, launch->operands[0].data, launch->operands[2].data,
                       nn_use_streaming_stores((uint64_t)launch->operands[2].numel *
                                               nn_dtype_size(launch->operands[2].dtype)),
                       0};
    const int64_t blocks_per_plane = (p->H + p->block_rows - 1) / p->block_rows;
    const int64_t items = p->planes * blocks_per_plane;
    const double elem = (double)nn_dtype_size(launch->operands[0].dtype);
    const double item_bytes = (double)(p->W + p->Wo) * (double)p->block_rows * elem;
    nn_parallel_for(items, nn_pu_grain(items, item_bytes), pad_bwd_items, &ctx);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the widened row buffers.");
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtype_in_list(const aclTensor *t, const char *name)
{
    if (nn_pu_dtype_in(t->dtype, pad_bwd_dtypes, NUM_PAD_BWD_DTYPES)) {
        return ACLNN_SUCCESS;
    }
    char list[128];
    return nn_error(ACLNN_ERR_PARAM_INVALID,
                    OP ": Tensor %s not implemented for %s, should be in dtype support list [%s].",
                    name, nn_dtype_name(t->dtype),
                    nn_pu_dtype_list_str(list, sizeof list, pad_bwd_dtypes, NUM_PAD_BWD_DTYPES));
}

static aclnnStatus check_dtypes(const aclTensor *grad_out, const aclTensor *self,
                                const aclTensor *grad_in)
{
    aclnnStatus status = check_dtype_in_list(grad_out, "gradOutput");
    if (status == ACLNN_SUCCESS) {
        status = check_dtype_in_list(self, "self");
    }
    if (status == ACLNN_SUCCESS) {
        status = check_dtype_in_list(grad_in, "gradInput");
    }
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    if (grad_out->dtype != self->dtype) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradOutput dtype must equal self dtype %s, got %s.",
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_out->dtype));
    }
    if (grad_in->dtype != self->dtype) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradInput dtype must equal self dtype %s, got %s.",
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_in->dtype));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_formats(const aclTensor *grad_out, const aclTensor *self,
                                 const aclTensor *grad_in)
{
    const aclTensor *tensors[3] = {grad_out, self, grad_in};
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    for (int i = 0; i < 3; i++) {
        if (nn_format_is_private(tensors[i]->format)) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Format only support ND, %s has %s.",
                            names[i], nn_format_name(tensors[i]->format));
        }
    }
    if (grad_out->format != self->format || grad_out->format != grad_in->format) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Format of input and output should be equal, gradOutput [%s], self [%s], "
                        "gradInput [%s].", nn_format_name(grad_out->format),
                        nn_format_name(self->format), nn_format_name(grad_in->format));
    }
    return ACLNN_SUCCESS;
}

/* CANN's AI-core restriction for BF16: pads >= 0, and either no H padding or every pad <= 7. */
static bool bf16_padding_supported(const int64_t *pad)
{
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) {
        return false;
    }
    if (pad[2] == 0 && pad[3] == 0) {
        return true;
    }
    return pad[0] <= 7 && pad[1] <= 7 && pad[2] <= 7 && pad[3] <= 7;
}

static aclnnStatus check_shapes(const aclTensor *grad_out, const aclTensor *self,
                                const aclIntArray *padding, const aclTensor *grad_in)
{
    char a[128], b[128];
    if (self->ndim != grad_in->ndim ||
        memcmp(self->dims, grad_in->dims, self->ndim * sizeof(int64_t)) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Expected tensor for gradInput to have same size as tensor for self %s, "
                        "but got %s.", nn_shape_str(a, sizeof a, self->ndim, self->dims),
                        nn_shape_str(b, sizeof b, grad_in->ndim, grad_in->dims));
    }
    if (self->ndim < 3 || self->ndim > 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self must be 3-D or 4-D, got %llu-D %s.",
                        (unsigned long long)self->ndim,
                        nn_shape_str(a, sizeof a, self->ndim, self->dims));
    }
    if (grad_out->ndim != self->ndim) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": gradOutput, self, gradInput dim should be same: gradOutput is %llu-D, "
                        "self is %llu-D.", (unsigned long long)grad_out->ndim,
                        (unsigned long long)self->ndim);
    }
    if (padding->size != 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": padding length should be 4, but got %llu.",
                        (unsigned long long)padding->size);
    }
    const int64_t *pad = padding->values;
    if (self->dtype == ACL_BF16 && !bf16_padding_supported(pad)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": bf16 only supports h dim no pad or padding values less than or equal "
                        "to 7, got padding [%lld, %lld, %lld, %lld].", (long long)pad[0],
                        (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    }
    /* Stricter than CANN (decision 7): no negative pads, no pad >= the dim it pads. */
    const uint64_t nd = self->ndim;
    const int64_t H = self->dims[nd - 2], W = self->dims[nd - 1];
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding values must be >= 0, got [%lld, %lld, %lld, %lld].",
                        (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    }
    if (W > 0 && (pad[0] >= W || pad[1] >= W)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding left/right must be less than the width of self (%lld), "
                        "got [%lld, %lld].", (long long)W, (long long)pad[0], (long long)pad[1]);
    }
    if (H > 0 && (pad[2] >= H || pad[3] >= H)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": padding top/bottom must be less than the height of self (%lld), "
                        "got [%lld, %lld].", (long long)H, (long long)pad[2], (long long)pad[3]);
    }
    /* CANN checks the last two dims; we also require the leading dims to match self's. */
    int64_t expected[4];
    memcpy(expected, self->dims, nd * sizeof(int64_t));
    bool overflow = __builtin_add_overflow(H, pad[2] + pad[3], &expected[nd - 2]) ||
                    __builtin_add_overflow(W, pad[0] + pad[1], &expected[nd - 1]);
    if (overflow || memcmp(expected, grad_out->dims, nd * sizeof(int64_t)) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": wrong gradOutput shape: expected %s (self padded by [%lld, %lld, %lld, "
                        "%lld]), got %s.", nn_shape_str(a, sizeof a, nd, expected),
                        (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3],
                        nn_shape_str(b, sizeof b, grad_out->ndim, grad_out->dims));
    }
    return ACLNN_SUCCESS;
}

static int kind_of(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return KIND_F32;
    case ACL_DOUBLE: return KIND_F64;
    case ACL_COMPLEX128: return KIND_C128;
    case ACL_FLOAT16: return KIND_F16;
    case ACL_BF16: return KIND_BF16;
    default: return KIND_C64;
    }
}

aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                          const aclTensor *self,
                                                          const aclIntArray *padding,
                                                          aclTensor *gradInput,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor)
{
    aclnnStatus result_ptrs = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (result_ptrs != ACLNN_SUCCESS) {
        return result_ptrs;
    }
    if (gradOutput == NULL) {
        return nn_null_tensor(OP, "gradOutput");
    }
    if (self == NULL) {
        return nn_null_tensor(OP, "self");
    }
    if (padding == NULL) {
        return nn_null_array(OP, "padding");
    }
    if (gradInput == NULL) {
        return nn_null_tensor(OP, "gradInput");
    }
    aclnnStatus status = check_dtypes(gradOutput, self, gradInput);
    if (status == ACLNN_SUCCESS) {
        status = check_formats(gradOutput, self, gradInput);
    }
    if (status == ACLNN_SUCCESS) {
        status = check_shapes(gradOutput, self, padding, gradInput);
    }
    if (status != ACLNN_SUCCESS) {
        return status;
    }

    const uint64_t nd = self->ndim;
    if (nn_tensor_is_empty(gradOutput) || nn_tensor_is_empty(self) || nn_tensor_is_empty(gradInput)) {
        /* CANN (replication mode): a 3-D self may never be empty; a 4-D one only with N == 0. */
        if (nd == 3 || self->dims[1] == 0 || self->dims[2] == 0 || self->dims[3] == 0) {
            char shape[128];
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            OP ": Input should not be empty: self %s (only a 4-D self with N == 0 "
                            "may be empty).", nn_shape_str(shape, sizeof shape, nd, self->dims));
        }
        aclOpExecutor *ex = nn_executor_create(OP, NULL, NULL, 0);
        if (ex == NULL) {
            return ACLNN_ERR_INNER_CREATE_EXECUTOR;
        }
        return nn_executor_finish(ex, workspaceSize, executor);
    }

    pad_bwd_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.planes = nd == 4 ? self->dims[0] * self->dims[1] : self->dims[0];
    plan.H = self->dims[nd - 2];
    plan.W = self->dims[nd - 1];
    plan.Ho = gradOutput->dims[nd - 2];
    plan.Wo = gradOutput->dims[nd - 1];
    plan.left = padding->values[0];
    plan.top = padding->values[2];
    plan.bottom = padding->values[3];
    plan.kind = kind_of(self->dtype);
    plan.block_rows = 2048 / (plan.Wo > 0 ? plan.Wo : 1);
    plan.block_rows = plan.block_rows < 1 ? 1 : (plan.block_rows > plan.H ? plan.H : plan.block_rows);

    aclOpExecutor *ex = nn_executor_create(OP, pad_bwd_kernel, &plan, sizeof plan);
    if (ex == NULL) {
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    nn_executor_add_input(ex, gradOutput);
    nn_executor_add_input(ex, self);
    nn_executor_add_output(ex, gradInput);
    return nn_executor_finish(ex, workspaceSize, executor);
}

aclnnStatus aclnnReplicationPad2dBackward(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, const aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
