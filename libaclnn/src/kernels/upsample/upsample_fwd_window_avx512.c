/*
 * upsample_fwd_window_avx512.c - the UpsampleNearestExact1d forward's short-window rows
 * (upsample.h), compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512().
 *
 * The map's source index is monotone, so the `lanes` outputs of chunk k (a vector: 16 of 4
 * bytes, 32 of 2, 8 of 8) read the inputs src[first] .. src[last] of the chunk; when that
 * window is at most a vector wide (every upsampling: out >= in), the chunk is one masked load
 * of the window and one lane permutation (lane l takes src[first + l] - src[first]).  Maps with
 * short runs (counts alternating 1, 2 at scale 1.5) otherwise gather output by output; here a
 * row of 37 floats is three loads, three permutations and three stores.  The table is built in
 * upsample_fwd_portable.c (plain C, called before the CPU is known to have AVX-512 or not).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/upsample/upsample.h"

#if NN_HAVE_X86_SIMD
/* Rows [begin, end) for elements of es bytes (a constant once inlined: one loop per width). */
NN_AVX512 static inline __attribute__((always_inline)) void window_rows(const nn_upsample_ctx *ctx,
                                                                        int64_t begin, int64_t end, size_t es)
{
    const nn_upsample_window *w = ctx->window;
    const int64_t in_bytes = ctx->plan->in_len * (int64_t)es, out_bytes = ctx->plan->out_len * (int64_t)es;
    const int64_t whole = w->chunks - 1; /* chunks stored whole; the last one under a mask */
    const unsigned char *index = (const unsigned char *)w->index;
    for (int64_t row = begin; row < end; row++) {
        const unsigned char *in = ctx->in + row * in_bytes;
        unsigned char *out = ctx->out + row * out_bytes;
        for (int64_t k = 0; k < whole; k++) {
            const __m512i v = _mm512_maskz_loadu_epi8(w->load_mask[k], (const void *)(in + w->base[k] * (int64_t)es));
            _mm512_storeu_si512((void *)(out + 64 * k),
                                nn512_permute_lanes(es, _mm512_loadu_si512((const void *)(index + 64 * k)), v));
        }
        const __m512i v =
            _mm512_maskz_loadu_epi8(w->load_mask[whole], (const void *)(in + w->base[whole] * (int64_t)es));
        _mm512_mask_storeu_epi8((void *)(out + 64 * whole), w->last_store_mask,
                                nn512_permute_lanes(es, _mm512_loadu_si512((const void *)(index + 64 * whole)), v));
    }
}

NN_AVX512 void nn_upsample_rows_window_avx512(void *vctx, int64_t begin, int64_t end)
{
    const nn_upsample_ctx *ctx = (const nn_upsample_ctx *)vctx;
    switch (ctx->plan->elem_size) {
    case 2: window_rows(ctx, begin, end, 2); break;
    case 4: window_rows(ctx, begin, end, 4); break;
    default: window_rows(ctx, begin, end, 8); break;
    }
}
#else /* not x86-64: never chosen, defined for the link */
void nn_upsample_rows_window_avx512(void *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
}
#endif /* NN_HAVE_X86_SIMD */
