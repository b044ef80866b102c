/*
 * pad_bw.h - the ReplicationPad2d backward kernels (a gather: every gradInput row summed once
 * from the gradOutput rows that replicate it), one file per instruction set:
 *
 *   pad_bw_portable.c  any CPU, every dtype: the row code and the work loop; the plain row
 *                      loops are in pad_bw_rows.inc, built here and again in
 *   pad_bw_avx2.c      with the AVX2 flags (nn_pad_bw_loops_avx2)
 *   pad_bw_avx512.c    AVX-512: fp32 and fp16/bf16 rows 16 / 32 columns per vector, written
 *                      straight to gradInput; fp32 gradOutput rows of at most 16 columns summed
 *                      in one vector and permuted into place (nn_pad_bw_short_fits)
 *
 * Which contributions an element adds, in which order and how it rounds is the plan's
 * arithmetic (pad_bw_arith, chosen per product at phase 1): every path follows it, so they all
 * give the same bits.  The operator (ops/replication_pad2d_backward.c) sets ctx.avx512 and
 * ctx.loops from the CPU table; the AVX-512 rows run only then.
 */
#ifndef NN_KERNELS_PAD_BW_H
#define NN_KERNELS_PAD_BW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_base.h"
#include "base/nn_half_impl.h"
#include "base/nn_simd.h"

/* How one element is stored and accumulated. */
enum pad_bwd_kind { KIND_F32, KIND_F64, KIND_C128, KIND_F16, KIND_BF16, KIND_C64 };

/* Whose order of additions the kernels follow (docs/precision.md, ReplicationPad2dBackward).
 *   ROW_MAJOR       every element from +0, its strip in (row, column) order (ATen's order; the
 *                   Ascend950 SIMT kernel's, and the choice where the card's kernel is not public)
 *   EDGE_FIRST      Atlas A2/A3 PadV3GradReplicate, both pads of an axis handled edge-first: an
 *                   edge row (column) starts from the replicated row itself, adds the top (left)
 *                   pad rows outermost first, then the bottom (right) pad rows outermost first;
 *                   rows first, then columns; no +0; single elements are copied
 *   OUTERMOST_FIRST A2/A3 with only H padded (the kernel "_h"): an edge row is +0 + the pad rows
 *                   from the outermost to the replicated row; inner rows are copied */
enum pad_bw_arith { PAD_BW_ROW_MAJOR, PAD_BW_EDGE_FIRST, PAD_BW_OUTERMOST_FIRST };

typedef struct pad_bwd_plan {
    int64_t planes;        /* N*C (C for 3-D) */
    int64_t H, W, Ho, Wo;
    int64_t top, bottom, left, right;
    int64_t block_rows;    /* gradInput rows per work item (about 2K elements, so that the
                            * complex64 widening buffers stay in L1) */
    int kind;
    int arith;             /* enum pad_bw_arith */
    bool round_row_sums;   /* fp16: row sums are rounded to fp16 before the column pass */
    bool edges_ties_away;  /* fp16: the two edge columns round ties away from zero */
} pad_bwd_plan;

/* The order in which one element adds its contributions along one axis: up to three runs of
 * consecutive indices (step +1 or -1), from +0 when zero_start, else from the first value. */
typedef struct index_run {
    int64_t first, step, count;
} index_run;

typedef struct add_order {
    index_run runs[3];
    int nruns;
    bool zero_start;
} add_order;

/* The k-th index of an order (k < order_count). */
static inline int64_t order_index(const add_order *o, int64_t k)
{
    int run = 0;
    while (k >= o->runs[run].count) {
        k -= o->runs[run].count;
        run++;
    }
    return o->runs[run].first + k * o->runs[run].step;
}

static inline int64_t order_count(const add_order *o)
{
    int64_t n = 0;
    for (int run = 0; run < o->nruns; run++) {
        n += o->runs[run].count;
    }
    return n;
}

/* One element with one contribution and no +0: a plain copy. */
static inline bool order_is_copy(const add_order *o)
{
    return !o->zero_start && order_count(o) == 1;
}

/* The gradOutput rows [*r0, *r1] (inclusive) that replicate gradInput row h. */
static inline void source_rows(const pad_bwd_plan *p, int64_t h, int64_t *r0, int64_t *r1)
{
    *r0 = h == 0 ? 0 : h + p->top;
    *r1 = h == p->H - 1 ? p->Ho - 1 : h + p->top;
}

/* Prefetch the gradOutput row `rows_ahead` rows past the last row gradInput row h reads (one
 * core alone does not keep enough misses in flight to stream at full speed otherwise).  The
 * address may lie past the tensor: a prefetch never faults, and the offset is added on
 * integers so no pointer arithmetic leaves the tensor. */
static inline void prefetch_source_row_ahead(const pad_bwd_plan *p, const void *plane, size_t row_bytes,
                                             int64_t h, int64_t rows_ahead)
{
    int64_t r0, r1;
    source_rows(p, h, &r0, &r1);
    nn_prefetch_bytes((const void *)((uintptr_t)plane + (uintptr_t)(r1 + rows_ahead) * row_bytes), row_bytes);
}

/* Index i of an axis of n_out outputs padded by lo / hi to n_in, edge-first: the replicated
 * index itself, then (i == 0) the lo pad from index 0 inward, then (i == n_out - 1) the hi pad
 * from n_in - 1 inward (PadV3GradReplicate's loops: ops-math:conversion/pad_v3_grad_replicate/
 * op_kernel/pad_v3_grad_replicate_h_w_mini.h, the Add loops over padTop/padBottom and
 * padLeft/padRight; _w.h ComputeWGrad; both loops when one output holds both edges). */
static inline void edge_first_order(int64_t n_in, int64_t lo, int64_t hi, int64_t n_out, int64_t i,
                                    add_order *o)
{
    o->runs[0] = (index_run){i + lo, 1, 1};
    o->nruns = 1;
    o->zero_start = false;
    if (i == 0 && lo > 0) {
        o->runs[o->nruns++] = (index_run){0, 1, lo};
    }
    if (i == n_out - 1 && hi > 0) {
        o->runs[o->nruns++] = (index_run){n_in - 1, -1, hi};
    }
}

/* The gradOutput rows of gradInput row h, in the plan's order of additions (filled in place:
 * built and copied as a value, the struct cost a store-forwarding stall per row). */
static inline void row_order(const pad_bwd_plan *p, int64_t h, add_order *o)
{
    if (p->arith == PAD_BW_EDGE_FIRST) {
        edge_first_order(p->Ho, p->top, p->bottom, p->H, h, o);
        return;
    }
    int64_t r0, r1;
    source_rows(p, h, &r0, &r1);
    o->runs[0] = (index_run){r0, 1, r1 - r0 + 1};
    o->nruns = 1;
    o->zero_start = true;
    if (p->arith == PAD_BW_OUTERMOST_FIRST) {
        /* _h.h Process: an edge row sums from +0 (Duplicate 0, Add per row), the bottom edge
         * from the last row upwards; inner rows are copied (CopyInAndOut2Gm) */
        if (p->H > 1 && h == p->H - 1) {
            o->runs[0] = (index_run){p->Ho - 1, -1, r1 - r0 + 1};
        }
        o->zero_start = h == 0 || h == p->H - 1;
    }
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
    /* one gradInput row of a plane (`plane` is its first gradOutput row), its rows added in
     * `rows`' order; fp32 in the plan's arithmetic, double (fp64, complex) row-major */
    void (*grad_row_f32)(const pad_bwd_plan *p, const float *plane, const add_order *rows, float *gi);
    void (*grad_row_f64)(const pad_bwd_plan *p, int comps, const double *plane, const add_order *rows,
                         double *gi);
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
/* Whether the fp32 AVX-512 rows take the short planes (a gradOutput row in one vector, kept in
 * cache): each gradInput row is one lane permutation of its summed gradOutput rows. */
static inline bool nn_pad_bw_short_fits(const pad_bwd_ctx *ctx)
{
    return ctx->avx512 && ctx->plan->kind == KIND_F32 && !ctx->plan->round_row_sums && ctx->plan->Wo <= 16 &&
           !ctx->stream;
}
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

/* Element `at` of an fp32, fp16 or bf16 plane, as fp32. */
static inline float element_f32(const void *plane, int kind, int64_t at)
{
    if (kind == KIND_F32) {
        return ((const float *)plane)[at];
    }
    const uint16_t bits = ((const uint16_t *)plane)[at];
    return kind == KIND_BF16 ? widen_bf16(bits) : widen_f16(bits);
}

/* Column `col` summed over `rows`, in their order (fp16 sums rounded to fp16 where the
 * plan says so).  Most rows have one source row and no +0: then it is the element itself.
 * `kind` is the plan's, passed apart so that a caller that knows it makes it a constant. */
static inline __attribute__((always_inline)) float column_sum(const pad_bwd_plan *p, int kind, const void *plane,
                                                              const add_order *rows, int64_t col)
{
    const int64_t first = rows->runs[0].first * p->Wo + col;
    if (rows->nruns == 1 && rows->runs[0].count == 1 && !rows->zero_start) {
        return element_f32(plane, kind, first);
    }
    const int64_t count = order_count(rows);
    float sum = rows->zero_start ? 0.0f + element_f32(plane, kind, first) : element_f32(plane, kind, first);
    for (int64_t k = 1; k < count; k++) {
        sum += element_f32(plane, kind, order_index(rows, k) * p->Wo + col);
    }
    return p->round_row_sums ? widen_f16(nn_half_f32_to_f16(sum)) : sum;
}

/* gradInput column 0 (last: column W-1) of the row summed over `rows`, in fp32, before the
 * narrowing.  Row-major: from +0, the strip in (row, column) order.  The card's orders: every
 * column of the strip summed over the rows first (column_sum), then those sums edge-first as
 * edge_first_order lists them (_h_w_mini.h, _w.h ComputeWGrad). */
static inline __attribute__((always_inline)) float edge_sum(const pad_bwd_plan *p, int kind, const void *plane,
                                                            const add_order *rows, bool last)
{
    if (p->arith == PAD_BW_ROW_MAJOR) {
        const int64_t j0 = last ? p->W - 1 + p->left : 0;
        const int64_t j1 = last || p->W == 1 ? p->Wo : p->left + 1;
        /* row_order gives the row-major order as one ascending run */
        const int64_t r0 = rows->runs[0].first, r1 = r0 + rows->runs[0].count;
        float sum = 0.0f;
        for (int64_t r = r0; r < r1; r++) {
            for (int64_t j = j0; j < j1; j++) {
                sum += element_f32(plane, kind, r * p->Wo + j);
            }
        }
        return sum;
    }
    float sum = column_sum(p, kind, plane, rows, last ? p->W - 1 + p->left : p->left);
    for (int64_t j = 0; !last && j < p->left; j++) {
        sum += column_sum(p, kind, plane, rows, j);
    }
    for (int64_t i = 0; (last || p->W == 1) && i < p->right; i++) {
        sum += column_sum(p, kind, plane, rows, p->Wo - 1 - i);
    }
    return sum;
}

/* An fp16/bf16 edge sum rounded to its dtype: to nearest even, or ties away from zero where
 * the card's kernel narrows with CAST_ROUND. */
static inline uint16_t narrow_edge(const pad_bwd_plan *p, float sum)
{
    if (p->kind == KIND_BF16) {
        return nn_half_f32_to_bf16(sum);
    }
    return p->edges_ties_away ? nn_half_f32_to_f16_ties_away(sum) : nn_half_f32_to_f16(sum);
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
/* One fp16/bf16 gradInput row of a plane from its gradOutput rows `rows` (pad_bw_portable.c). */
void nn_pad_bw_half_row(const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *plane,
                        const add_order *rows, uint16_t *gi);

#endif /* NN_KERNELS_PAD_BW_H */
