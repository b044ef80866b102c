/*
 * pad_bw_avx512.c - the ReplicationPad2d backward's AVX-512 rows (pad_bw.h): fp32 16 columns
 * and fp16/bf16 32 columns per vector, written straight to gradInput (non-temporal stores for
 * large outputs), with the same adds in the same order as the portable row code.  Compiled with
 * the AVX-512 flags (Makefile); run only when the operator set ctx.avx512 from the CPU table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/pad/pad_bw.h"

#if NN_HAVE_X86_SIMD
/* gradOutput rows prefetched this far ahead of the rows being summed, in fp32 rows (fp16/bf16
 * go twice as many rows ahead: the same bytes). */
#define PREFETCH_ROWS 8

/* fp32, AVX-512: gradInput rows [h0, h1) of one plane written straight to gradInput, 16
 * columns per vector: the interior lanes are the shifted gradOutput rows added in the row's
 * order (row_order: the same adds, in the same order, as interior_f32), lanes 0 and W-1 are
 * replaced by the two edge sums (edge_sum).  With `stream` every vector is a non-temporal store
 * (the caller guarantees 64-byte aligned rows of a multiple of 16 floats), so the whole
 * gradInput plane goes out as one contiguous stream without a read for ownership. */
NN_AVX512 static void grad_rows_f32_avx512(const pad_bwd_plan *p, const float *plane_go,
                                              float *plane_gi, int64_t h0, int64_t h1,
                                              bool stream)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left;
    const __mmask16 tail = (W & 15) != 0 ? (__mmask16)((1u << (W & 15)) - 1u) : (__mmask16)0xffff;
    const int64_t last_vec = (W - 1) & ~(int64_t)15;
    const __mmask16 last_lane = (__mmask16)(1u << ((W - 1) & 15));
    for (int64_t h = h0; h < h1; h++) {
        add_order rows;
        row_order(p, h, &rows);
        const int64_t count = order_count(&rows);
        prefetch_source_row_ahead(p, plane_go, (size_t)Wo * sizeof(float), h, PREFETCH_ROWS);
        const float first = edge_sum(p, KIND_F32, plane_go, &rows, false);
        const float last = edge_sum(p, KIND_F32, plane_go, &rows, true);
        float *dst = plane_gi + h * W;
        const float *src = plane_go + order_index(&rows, 0) * Wo + left;
        for (int64_t k = 0; k < W; k += 16) {
            const __mmask16 mask = k + 16 <= W ? (__mmask16)0xffff : tail;
            __m512 acc = _mm512_maskz_loadu_ps(mask, src + k);
            if (rows.zero_start) {
                acc = _mm512_add_ps(_mm512_setzero_ps(), acc);
            }
            for (int64_t c = 1; c < count; c++) {
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask, plane_go + order_index(&rows, c) * Wo + left + k));
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

/* fp32, AVX-512, gradOutput rows of at most 16 columns (nn_pad_bw_short_fits): gradInput rows
 * [h0, h1) of one plane.  The row's gradOutput rows are added whole, in row_order's order, so
 * lane c holds column c's sum (what column_sum adds, in its order, for every column at once); a
 * lane permutation moves column j + left to lane j, and lanes 0 and W-1 take the edge sums:
 * on the card's orders the column sums combined edge-first from those lanes (edge_sum's second
 * half), row-major from edge_sum itself.  The row loop of grad_rows_f32_avx512 spent about 40
 * cycles on such a row (the edge sums' per-element order walks, prefetches, masks): 64x8 planes
 * of 16x16 took 98 us there, 43 here. */
NN_AVX512 static void grad_rows_f32_short_avx512(const pad_bwd_plan *p, const float *plane_go, float *plane_gi,
                                                 int64_t h0, int64_t h1)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left, right = p->right;
    const __mmask16 load_mask = (__mmask16)((1u << Wo) - 1u), store_mask = (__mmask16)((1u << W) - 1u);
    const __mmask16 last_lane = (__mmask16)(1u << (W - 1));
    const __m512i shift = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int)left));
    for (int64_t h = h0; h < h1; h++) {
        add_order rows;
        row_order(p, h, &rows);
        __m512 acc = _mm512_maskz_loadu_ps(load_mask, plane_go + rows.runs[0].first * Wo);
        if (rows.zero_start) {
            acc = _mm512_add_ps(_mm512_setzero_ps(), acc);
        }
        for (int run = 0; run < rows.nruns; run++) { /* the rest in order_index's order */
            const index_run *r = &rows.runs[run];
            for (int64_t k = run == 0 ? 1 : 0; k < r->count; k++) {
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(load_mask, plane_go + (r->first + k * r->step) * Wo));
            }
        }
        float first, last;
        if (p->arith == PAD_BW_ROW_MAJOR) {
            first = edge_sum(p, KIND_F32, plane_go, &rows, false);
            last = edge_sum(p, KIND_F32, plane_go, &rows, true);
        } else {
            float column[16];
            _mm512_storeu_ps(column, acc);
            first = column[left];
            for (int64_t j = 0; j < left; j++) first += column[j];
            last = column[W - 1 + left];
            for (int64_t i = 0; i < right; i++) last += column[Wo - 1 - i];
        }
        __m512 out = _mm512_permutexvar_ps(shift, acc);
        out = _mm512_mask_mov_ps(out, (__mmask16)1, _mm512_set1_ps(first));
        out = _mm512_mask_mov_ps(out, last_lane, _mm512_set1_ps(last));
        _mm512_mask_storeu_ps(plane_gi + h * W, store_mask, out);
    }
}

/* The AVX-512 fp32 rows (the caller checked nn_pad_bw_avx512_fits). */
bool nn_pad_bw_f32_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    if (nn_pad_bw_short_fits(ctx)) {
        for (int64_t item = begin; item < end; item++) {
            const row_block b = block_of(p, item);
            grad_rows_f32_short_avx512(p, (const float *)ctx->grad_out + b.plane * p->Ho * p->Wo,
                                       (float *)ctx->grad_in + b.plane * p->H * p->W, b.h0, b.h1);
        }
        return true;
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

/* fp16/bf16, AVX-512BW: gradInput rows [h0, h1) of one plane written straight to gradInput.
 * Rows with one source row (all but the top/bottom edge rows) are copied 32 lanes at a time -
 * as they are where the row's order is a copy (the card), through the bit-level shortcut of
 * single_source_half where it starts from +0 (row-major) - with lanes 0 and W-1 replaced by the
 * rounded edge sums; with `stream` (rows of a multiple of 32 elements, 64-byte aligned) every
 * vector is a non-temporal store.  The few rows with several source rows go through
 * nn_pad_bw_half_row into `spare` (W elements) and are copied.  `kind` is the plan's, a
 * constant in each of the two calls (grad_rows_half_avx512): the edge sums then widen without a
 * branch per element. */
NN_AVX512 static inline __attribute__((always_inline)) void grad_rows_half_kind_avx512(
    const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *plane_go, uint16_t *plane_gi,
    int64_t h0, int64_t h1, bool stream, uint16_t *spare, int kind)
{
    const int64_t W = p->W, Wo = p->Wo, left = p->left;
    const __mmask32 tail = (W & 31) != 0 ? (__mmask32)((1u << (W & 31)) - 1u) : (__mmask32)0xffffffffu;
    const int64_t last_vec = (W - 1) & ~(int64_t)31;
    const __mmask32 last_lane = (__mmask32)(1u << ((W - 1) & 31));
    const __m512i magnitude = _mm512_set1_epi16(0x7fff), inf = _mm512_set1_epi16((short)hc->inf_bits);
    const __m512i quiet = _mm512_set1_epi16((short)hc->quiet_bit);
    const __m512i neg_zero = _mm512_set1_epi16((short)0x8000), zero = _mm512_setzero_si512();
    for (int64_t h = h0; h < h1; h++) {
        add_order rows;
        row_order(p, h, &rows);
        uint16_t *dst = plane_gi + h * W;
        prefetch_source_row_ahead(p, plane_go, (size_t)Wo * sizeof(uint16_t), h, 2 * PREFETCH_ROWS);
        if (order_count(&rows) != 1) {
            nn_pad_bw_half_row(p, hc, plane_go, &rows, spare);
            memcpy(dst, spare, (size_t)W * sizeof(uint16_t));
            continue;
        }
        const bool copy = !rows.zero_start;
        const __m512i first = _mm512_set1_epi16((short)narrow_edge(p, edge_sum(p, kind, plane_go, &rows, false)));
        const __m512i last = _mm512_set1_epi16((short)narrow_edge(p, edge_sum(p, kind, plane_go, &rows, true)));
        const uint16_t *src = plane_go + order_index(&rows, 0) * Wo + left;
        for (int64_t k = 0; k < W; k += 32) {
            const __mmask32 mask = k + 32 <= W ? (__mmask32)0xffffffffu : tail;
            const __m512i x = _mm512_maskz_loadu_epi16(mask, src + k);
            __m512i v = x;
            if (!copy) {
                const __mmask32 nan = _mm512_cmpgt_epu16_mask(_mm512_and_si512(x, magnitude), inf);
                v = _mm512_mask_mov_epi16(x, nan, _mm512_or_si512(x, quiet));
                v = _mm512_mask_mov_epi16(v, _mm512_cmpeq_epi16_mask(x, neg_zero), zero);
            }
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

NN_AVX512 static void grad_rows_half_avx512(const pad_bwd_plan *p, const half_row_ctx *hc, const uint16_t *plane_go,
                                            uint16_t *plane_gi, int64_t h0, int64_t h1, bool stream, uint16_t *spare)
{
    if (p->kind == KIND_BF16) {
        grad_rows_half_kind_avx512(p, hc, plane_go, plane_gi, h0, h1, stream, spare, KIND_BF16);
    } else {
        grad_rows_half_kind_avx512(p, hc, plane_go, plane_gi, h0, h1, stream, spare, KIND_F16);
    }
}

/* The AVX-512 fp16/bf16 rows (the caller checked nn_pad_bw_avx512_fits). */
bool nn_pad_bw_half_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    const pad_bwd_plan *p = ctx->plan;
    uint16_t *spare = (uint16_t *)malloc((size_t)p->W * sizeof(uint16_t));
    if (spare == NULL) {
        return false; /* the portable path needs no buffer of that size */
    }
    const half_row_ctx hc = nn_pad_bw_half_row_ctx(ctx);
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
#else /* not x86-64: never chosen, defined for the link */
bool nn_pad_bw_f32_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    return false;
}
bool nn_pad_bw_half_avx512(const pad_bwd_ctx *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    return false;
}
#endif /* NN_HAVE_X86_SIMD */
