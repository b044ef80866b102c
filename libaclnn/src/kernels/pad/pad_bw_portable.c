/*
 * pad_bw_portable.c - the ReplicationPad2d backward for any CPU and every dtype (pad_bw.h).
 *
 * Written as a gather, not as zero-fill + scatter: every gradInput row is computed once from
 * the gradOutput rows that map onto it (one row inside, top+1 / bottom+1 rows at the edges).
 * Inside a row the interior is a copy (or the rows' column sums) and the first / last element
 * sum their replicated strips, all in the plan's order of additions (pad_bw.h, pad_bw_arith),
 * which never depends on the thread split.
 *
 * Precision: fp16/bf16 are accumulated in fp32 (fp16 row sums rounded once more where the
 * card's kernel does, pad_bwd_plan.round_row_sums); complex64 in double.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/pad/pad_bw.h"

#define PAD_BW_LOOPS nn_pad_bw_loops_portable
#include "kernels/pad/pad_bw_rows.inc"

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

/* How far ahead the native rows prefetch gradOutput: about NATIVE_PREFETCH_BYTES, at least 2
 * rows.  This host's prefetchers do not run far enough ahead of the row loops on their own:
 * N8 C64 130x130 -> 128x128 fp32 at 1 thread took 0.58-0.63 of the time with 8-12 KiB ahead
 * (4 KiB: 0.72) in the AVX2 build, 0.52 in the baseline one, 0.60 at 2 threads.  fp16/bf16
 * rows, bound by their conversions, gained nothing and do not prefetch. */
#define NATIVE_PREFETCH_BYTES 8192

static int64_t native_prefetch_rows(size_t row_bytes)
{
    const int64_t rows = (int64_t)(NATIVE_PREFETCH_BYTES / (row_bytes > 0 ? row_bytes : 1));
    return rows > 2 ? rows : 2;
}

/* Native types: storage == accumulation type, rows are used in place. */
static void pad_bwd_native(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    if (ctx->avx512 && p->kind == KIND_F32 && nn_pad_bw_f32_avx512(ctx, begin, end)) {
        return;
    }
    const int comps = p->kind == KIND_C128 ? 2 : 1;
    const int64_t plane_in = p->Ho * p->Wo * comps, row_out = p->W * comps;
    const size_t scalar = p->kind == KIND_F32 ? sizeof(float) : sizeof(double);
    block_sink sink = sink_open(ctx, (size_t)row_out * scalar);
    const size_t row_in_bytes = (size_t)(p->Wo * comps) * scalar;
    const int64_t ahead = native_prefetch_rows(row_in_bytes);
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        void *block = sink_rows(&sink, ctx, &b);
        const char *plane_go = (const char *)ctx->grad_out + (size_t)(b.plane * plane_in) * scalar;
        for (int64_t h = b.h0; h < b.h1; h++) {
            add_order rows;
            row_order(p, h, &rows);
            prefetch_source_row_ahead(p, plane_go, row_in_bytes, h, ahead);
            const int64_t out = (h - b.h0) * row_out;
            if (p->kind == KIND_F32) {
                ctx->loops->grad_row_f32(p, (const float *)plane_go, &rows,
                                         (float *)block + out);
            } else {
                ctx->loops->grad_row_f64(p, comps, (const double *)plane_go, &rows,
                                         (double *)block + out);
            }
        }
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
}

/* complex64 (double accumulation, row-major: the card runs complex on AI-CPU): a block's source
 * rows are widened into a buffer in one pass, summed with the native double row code, and the
 * result rounded once. */
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
            add_order order;
            row_order(p, h, &order);
            order.runs[0].first -= b.src0; /* one ascending run: rows of the buffer */
            ctx->loops->grad_row_f64(p, 2, rows, &order, gi + (h - b.h0) * row_out);
        }
        store_f32_from_f64(gi, (float *)sink_rows(&sink, ctx, &b), (size_t)((b.h1 - b.h0) * row_out));
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
    free(rows);
}

#define HALF_BLOCK 512

half_row_ctx nn_pad_bw_half_row_ctx(const pad_bwd_ctx *ctx)
{
    const bool bf16 = ctx->plan->kind == KIND_BF16;
    half_row_ctx hc = {bf16, bf16 ? nn_bf16_to_f32_n : nn_f16_to_f32_n,
                       bf16 ? nn_f32_to_bf16_n : nn_f32_to_f16_n, bf16 ? 0x7f80 : 0x7c00,
                       bf16 ? 0x0040 : 0x0200, ctx->loops};
    return hc;
}

/* One fp16/bf16 gradInput row of a plane from its gradOutput rows `rows`: the two edge
 * elements in the plan's arithmetic (edge_sum, narrow_edge); the interior a copy when the
 * order is one row without +0, the bit-level shortcut above for one row from +0, else widened
 * in blocks, summed in fp32 in the order and rounded once to nearest even (the card's kernels
 * narrow those sums with CAST_RINT, bf16 through op_api's Cast). */
void nn_pad_bw_half_row(const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *plane,
                        const add_order *rows, uint16_t *gi)
{
    const int64_t W = p->W, Wo = p->Wo, skip = p->left + 1;
    float acc[HALF_BLOCK], tmp[HALF_BLOCK];
    gi[0] = narrow_edge(p, edge_sum(p, p->kind, plane, rows, false));
    if (W == 1) {
        return;
    }
    gi[W - 1] = narrow_edge(p, edge_sum(p, p->kind, plane, rows, true));
    const int64_t n = W - 2, count = order_count(rows);
    const uint16_t *first = plane + order_index(rows, 0) * Wo + skip;
    if (order_is_copy(rows)) {
        memcpy(gi + 1, first, (size_t)n * sizeof(uint16_t));
        return;
    }
    if (count == 1) {
        hc->loops->single_source_half(first, gi + 1, n, hc->inf_bits, hc->quiet_bit);
        return;
    }
    for (int64_t k0 = 0; k0 < n; k0 += HALF_BLOCK) {
        const int64_t m = n - k0 < HALF_BLOCK ? n - k0 : HALF_BLOCK;
        hc->widen_n(first + k0, acc, (size_t)m);
        for (int64_t k = 0; rows->zero_start && k < m; k++) {
            acc[k] = 0.0f + acc[k];
        }
        for (int64_t c = 1; c < count; c++) {
            hc->widen_n(plane + order_index(rows, c) * Wo + skip + k0, tmp, (size_t)m);
            hc->loops->add_rows_f32(acc, tmp, m);
        }
        hc->narrow_n(acc, gi + 1 + k0, (size_t)m);
    }
}


bool nn_pad_bw_avx512_fits(const pad_bwd_ctx *ctx)
{
    const pad_bwd_plan *p = ctx->plan;
    if (p->W < 2) return false;
    if (p->kind == KIND_F32)
        return !ctx->stream || ((p->W & 15) == 0 && ((uintptr_t)ctx->grad_in & 63) == 0);
    if (p->kind == KIND_F16 || p->kind == KIND_BF16)
        return !ctx->stream || ((p->W & 31) == 0 && ((uintptr_t)ctx->grad_in & 63) == 0);
    return false;
}

/* fp16/bf16 rows (see nn_pad_bw_half_row). */
static void pad_bwd_half(pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    if (ctx->avx512 && nn_pad_bw_half_avx512(ctx, begin, end)) {
        return;
    }
    const pad_bwd_plan *p = ctx->plan;
    const half_row_ctx hc = nn_pad_bw_half_row_ctx(ctx);
    const uint16_t *grad_out = (const uint16_t *)ctx->grad_out;
    block_sink sink = sink_open(ctx, (size_t)p->W * sizeof(uint16_t));
    for (int64_t item = begin; item < end; item++) {
        const row_block b = block_of(p, item);
        uint16_t *block = (uint16_t *)sink_rows(&sink, ctx, &b);
        for (int64_t h = b.h0; h < b.h1; h++) {
            add_order rows;
            row_order(p, h, &rows);
            nn_pad_bw_half_row(p, &hc, grad_out + b.plane * p->Ho * p->Wo, &rows, block + (h - b.h0) * p->W);
        }
        sink_flush(&sink, ctx, &b);
    }
    sink_close(&sink);
}

void nn_pad_bw_items(void *vctx, int64_t begin, int64_t end)
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
