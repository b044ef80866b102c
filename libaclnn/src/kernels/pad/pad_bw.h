/*
 * pad_bw.h - the ReplicationPad2d backward kernels (a gather: every gradInput row summed once
 * from the gradOutput rows that replicate it), one file per instruction set:
 *
 *   pad_bw_portable.c  any CPU, every dtype: the row code and the work loop; the plain row
 *                      loops are in pad_bw_rows.inc, built here and again in
 *   pad_bw_avx2.c      with the AVX2 flags (nn_pad_bw_loops_avx2)
 *   pad_bw_avx512.c    AVX-512: fp32 and fp16/bf16 rows 16 / 32 columns per vector, written
 *                      straight to gradInput
 *
 * Per element the contributions are added in (row, column) order from +0 on both, so they give
 * the same bits.  The operator (ops/replication_pad2d_backward.c) sets ctx.avx512 and ctx.loops
 * from the CPU table; the AVX-512 rows run only then.
 */
#ifndef NN_KERNELS_PAD_BW_H
#define NN_KERNELS_PAD_BW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_base.h"
#include "base/nn_half_impl.h"

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
static inline void source_rows(const pad_bwd_plan *p, int64_t h, int64_t *r0, int64_t *r1)
{
    *r0 = h == 0 ? 0 : h + p->top;
    *r1 = h == p->H - 1 ? p->Ho - 1 : h + p->top;
}

/* Work items are blocks of `block_rows` consecutive gradInput rows of one plane; the
 * gradOutput rows they read are consecutive too: [first source row of the first, last source
 * row of the last]. */
typedef struct row_block {
    int64_t plane, h0, h1;    /* gradInput rows [h0, h1) */
    int64_t src0, src1;       /* gradOutput rows [src0, src1] */
} row_block;

static inline row_block block_of(const pad_bwd_plan *p, int64_t item)
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

/* The plain row loops (pad_bw_rows.inc) of one build: nn_pad_bw_loops_portable
 * (pad_bw_portable.c, baseline x86-64) or nn_pad_bw_loops_avx2 (pad_bw_avx2.c, only when
 * nn_cpu_avx2()). */
typedef struct nn_pad_bw_loops {
    void (*grad_row_f32)(const pad_bwd_plan *p, int comps, const float *rows, int64_t nrows, float *gi);
    void (*grad_row_f64)(const pad_bwd_plan *p, int comps, const double *rows, int64_t nrows, double *gi);
    void (*single_source_half)(const uint16_t *src, uint16_t *dst, int64_t n, uint16_t inf_bits,
                               uint16_t quiet_bit);
    void (*add_rows_f32)(float *acc, const float *row, int64_t n);
} nn_pad_bw_loops;
extern const nn_pad_bw_loops nn_pad_bw_loops_portable;
extern const nn_pad_bw_loops nn_pad_bw_loops_avx2;

typedef struct pad_bwd_ctx {
    const pad_bwd_plan *plan;
    const void *grad_out;
    void *grad_in;
    bool stream;           /* large gradInput: blocks are built in a buffer and streamed out */
    bool avx512;           /* the AVX-512 rows (nn_pad_bw_avx512_fits and the CPU table) */
    int failed;            /* a range could not get its widening buffer */
    const nn_pad_bw_loops *loops; /* the plain row loops' build */
} pad_bwd_ctx;

/* The work loop the thread pool runs: items [begin, end) of ctx (row blocks). */
void nn_pad_bw_items(void *ctx, int64_t begin, int64_t end);
/* Whether the AVX-512 rows apply to this launch: fp32 / fp16 / bf16, W >= 2, and for streamed
 * outputs whole aligned vectors. */
bool nn_pad_bw_avx512_fits(const pad_bwd_ctx *ctx);
/* The AVX-512 rows (pad_bw_avx512.c); false when they could not run (then the portable rows do). */
bool nn_pad_bw_f32_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end);
bool nn_pad_bw_half_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end);

/* ---- fp16/bf16 rows, shared by both files --------------------------------------------------- */

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
    const nn_pad_bw_loops *loops;
} half_row_ctx;

half_row_ctx nn_pad_bw_half_row_ctx(const pad_bwd_ctx *ctx);
/* One fp16/bf16 gradInput row from `nrows` gradOutput rows: every sum in fp32, rounded once. */
void nn_pad_bw_half_row(const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *rows, int64_t nrows,
                        uint16_t *gi);

#endif /* NN_KERNELS_PAD_BW_H */
