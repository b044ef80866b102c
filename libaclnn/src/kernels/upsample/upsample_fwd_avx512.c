/*
 * upsample_fwd_avx512.c - the UpsampleNearestExact1d forward's AVX-512 rows (upsample.h),
 * compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512(): 4-byte runs of
 * count 1-4 are lane permutations of 16 inputs per step.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/nn_simd.h"
#include "kernels/upsample/upsample.h"

#if NN_HAVE_X86_SIMD
/* The input is prefetched this many bytes ahead of the loads. */
#define PREFETCH_BYTES 2048

/* Repeats each of n 4-byte elements `count` (1..4) times, 16 inputs per step: output vector v
 * of a step is lane-permutation v of the 16 inputs (lane l takes input (16 v + l) / count).
 * With `stream`, o is 64-byte aligned and every whole vector is stored non-temporally.
 * Returns false for other counts. */
NN_AVX512 static bool run_repeat_b32_avx512(const uint32_t *restrict s, uint32_t *restrict o,
                                               int64_t n, int64_t count, bool stream)
{
    if (count < 1 || count > 4) {
        return false;
    }
    __m512i perm[4];
    for (int64_t v = 0; v < count; v++) {
        int32_t idx[16];
        for (int l = 0; l < 16; l++) {
            idx[l] = (int32_t)((16 * v + l) / count);
        }
        perm[v] = _mm512_loadu_si512((const void *)idx);
    }
    const int64_t n16 = n & ~(int64_t)15;
    for (int64_t t = 0; t < n16; t += 16) {
        _mm_prefetch((const char *)((uintptr_t)(s + t) + PREFETCH_BYTES), _MM_HINT_T0);
        const __m512i x = _mm512_loadu_si512((const void *)(s + t));
        uint32_t *dst = o + count * t;
        for (int64_t v = 0; v < count; v++) {
            const __m512i y = _mm512_permutexvar_epi32(perm[v], x);
            if (stream) {
                _mm512_stream_si512((void *)(dst + 16 * v), y);
            } else {
                _mm512_storeu_si512((void *)(dst + 16 * v), y);
            }
        }
    }
    for (int64_t t = n16; t < n; t++) {
        for (int64_t j = 0; j < count; j++) {
            o[count * t + j] = s[t];
        }
    }
    return true;
}

/* One 4-byte output row from the run list with the AVX-512 repeats where they apply. */
NN_AVX512 static void upsample_row_b32_avx512(const nn_ne_map *map, const uint32_t *restrict in,
                                                 uint32_t *restrict out, bool stream)
{
    for (int64_t r = 0; r < map->num_runs; r++) {
        const nn_ne_run *run = &map->runs[r];
        const int64_t n = run->i1 - run->i0;
        if (!run_repeat_b32_avx512(in + run->i0, out + run->d0, n, run->count, stream)) {
            const uint32_t *s = in + run->i0;
            uint32_t *o = out + run->d0;
            for (int64_t t = 0; t < n; t++) {
                for (int64_t j = 0; j < run->count; j++) {
                    o[run->count * t + j] = s[t];
                }
            }
        }
    }
}

/* 4-byte elements over a long-run map, AVX-512: rows are written in place (or, streaming with
 * a single run over aligned rows of whole vectors, streamed straight from the registers);
 * streaming with several runs builds each row in a buffer and streams it (run boundaries
 * fall mid-line).  Returns false when this path does not apply. */
bool nn_upsample_rows_b32_avx512(const nn_upsample_ctx *ctx, int64_t begin, int64_t end)
{
    const nn_upsample_plan *p = ctx->plan;
    if (p->elem_size != 4 || !ctx->use_runs) {
        return false;
    }
    const bool direct_stream = ctx->stream && ctx->map->num_runs == 1 && (p->out_len & 15) == 0 &&
                               ((uintptr_t)ctx->out & 63) == 0;
    uint32_t *buffer = NULL;
    if (ctx->stream && !direct_stream) {
        buffer = (uint32_t *)malloc((size_t)p->out_len * sizeof(uint32_t));
        if (buffer == NULL) {
            return false;
        }
    }
    for (int64_t row = begin; row < end; row++) {
        const uint32_t *in = (const uint32_t *)ctx->in + row * p->in_len;
        uint32_t *out = (uint32_t *)ctx->out + row * p->out_len;
        if (buffer != NULL) {
            upsample_row_b32_avx512(ctx->map, in, buffer, false);
            nn_copy_row_nt(out, buffer, (size_t)p->out_len * sizeof(uint32_t));
        } else {
            upsample_row_b32_avx512(ctx->map, in, out, direct_stream);
        }
    }
    if (ctx->stream) {
        nn_streaming_fence();
    }
    free(buffer);
    return true;
}
#else
bool nn_upsample_rows_b32_avx512(const nn_upsample_ctx *ctx, int64_t begin, int64_t end)
{
    (void)ctx, (void)begin, (void)end;
    return false;
}
#endif
