/*
 * upsample_bw_window_avx512.c - the UpsampleNearestExact1dBackward fp32 window rows
 * (upsample.h), compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512().
 *
 * Input i owns gradients lo[i] .. lo[i+1] - 1.  Maps of short runs (scale 1.5: counts
 * alternating 1, 2) otherwise sum input by input, a loop of one or two adds with its overhead
 * per input; here a chunk of up to 16 inputs whose gradients lie within 32 consecutive ones is
 * two masked loads, and per gradient t (up to the map's largest count) one two-source lane
 * permutation picking each lane's t-th gradient and one masked add into +0.  Each lane thus
 * adds +0 and its gradients in increasing output order, the order of every other path.  The
 * table is built in upsample_bw_portable.c (plain C, freed on any CPU).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/upsample/upsample.h"

#if NN_HAVE_X86_SIMD
/* One gradInput row from one gradOutput row. */
NN_AVX512 static void window_row(const nn_upsample_bw_window *w, const float *go, float *gi)
{
    for (int64_t k = 0; k < w->chunks; k++) {
        const nn_upsample_bw_chunk *c = &w->chunk[k];
        const __m512 lo = _mm512_maskz_loadu_ps((__mmask16)nn_lane_range(0, c->span, 16), go + c->base);
        const __m512 hi = _mm512_maskz_loadu_ps((__mmask16)nn_lane_range(0, c->span - 16, 16), go + c->base + 16);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t t = 0; t < w->terms; t++) {
            const __m512i index = _mm512_loadu_si512((const void *)c->index[t]);
            acc = _mm512_mask_add_ps(acc, (__mmask16)c->term_mask[t], acc, _mm512_permutex2var_ps(lo, index, hi));
        }
        _mm512_mask_storeu_ps(gi + c->i0, (__mmask16)nn_lane_range(0, c->n, 16), acc);
    }
}

NN_AVX512 void nn_upsample_bw_rows_window_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end)
{
    const nn_upsample_bw_plan *p = ctx->plan;
    const int64_t Lin = p->in_len, Lout = p->out_len;
    for (int64_t row = begin; row < end; row++) {
        const float *go = (const float *)ctx->grad_out + row * Lout;
        float *gi = (float *)ctx->grad_in + row * Lin;
        window_row(ctx->window, go, gi);
        if (p->cube_slide > 0) {
            nn_upsample_bw_cube_row(ctx, go, ACL_FLOAT, gi, nn_upsample_bw_count_nonfinite(gi, Lin) != 0);
        }
    }
}
#else /* not x86-64: never chosen, defined for the link */
void nn_upsample_bw_rows_window_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
}
#endif /* NN_HAVE_X86_SIMD */
