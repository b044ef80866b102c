/*
 * upsample_bw_avx512.c - the UpsampleNearestExact1dBackward's AVX-512 rows (upsample.h),
 * compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512(), for fp32
 * long-run maps: runs of count 1-3 summed 16 inputs per vector (lane permutations of the
 * gradients, the same adds in the same order as the plain loops), on up to 8 rows from separate
 * stretches at once (more memory streams in flight per core); streamed outputs go through one
 * line stage per stretch (base/nn_simd.h), as whole aligned lines.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/upsample/upsample.h"

#if NN_HAVE_X86_SIMD
/* gradOutput is prefetched this many bytes ahead of the loads (one core alone does not keep
 * enough misses in flight to stream at full speed otherwise). */
#define PREFETCH_BYTES 4096

/* Lane t of the result takes element count*t + s of the concatenation (a, b[, c]): the
 * permutation tables for counts 2 and 3, s = 0 .. count-1. */
NN_AVX512 static inline __m512i index_vector(int64_t count, int64_t s)
{
    int32_t idx[16];
    for (int t = 0; t < 16; t++) {
        idx[t] = (int32_t)(count * t + s);
    }
    return _mm512_loadu_si512((const void *)idx);
}

/* fp32 run sums, AVX-512, for counts 1, 2 and 3 (the counts of upsampling by up to 3), on m
 * (<= NN_UPSAMPLE_BW_LOCKSTEP_ROWS) rows in lockstep: s[i] and o[i] are row i's gradients and sums.  16
 * inputs per vector, each ((0 + g0) + g1) + g2 in d order exactly as run_sums_f32 does; the
 * last n % 16 inputs use the scalar loop's arithmetic.  With `stream`, every o[i] is 64-byte
 * aligned and every full vector is stored non-temporally.  nonfinite[i] (when not NULL) becomes
 * true if a sum of row i is inf or NaN (vfpclassps).  Returns false for other counts. */
NN_AVX512 static bool run_sums_f32_avx512(const float *const *s, float *const *o, int m, int64_t n,
                                             int64_t count, bool stream, bool *nonfinite)
{
    if (count < 1 || count > 3) {
        return false;
    }
    const int64_t n16 = n & ~(int64_t)15;
    const __m512 zero = _mm512_setzero_ps();
#define STORE_SUM(dst, v)                                                          \
    do {                                                                           \
        if (stream) {                                                              \
            _mm512_stream_ps(dst, v);                                              \
        } else {                                                                   \
            _mm512_storeu_ps(dst, v);                                              \
        }                                                                          \
        if (nonfinite != NULL) nonfinite[i] |= _mm512_fpclass_ps_mask(v, 0x99) != 0; \
    } while (0)
#define PREFETCH_AHEAD(g, k) _mm_prefetch((const char *)((uintptr_t)(g) + PREFETCH_BYTES + 64 * (k)), _MM_HINT_T0)
    if (count == 1) {
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                PREFETCH_AHEAD(s[i] + t, 0);
                STORE_SUM(o[i] + t, _mm512_add_ps(zero, _mm512_loadu_ps(s[i] + t)));
            }
        }
    } else if (count == 2) {
        const __m512i even = index_vector(2, 0), odd = index_vector(2, 1);
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                const float *g = s[i] + 2 * t;
                PREFETCH_AHEAD(g, 0);
                PREFETCH_AHEAD(g, 1);
                const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16);
                __m512 v = _mm512_add_ps(zero, _mm512_permutex2var_ps(a, even, b));
                v = _mm512_add_ps(v, _mm512_permutex2var_ps(a, odd, b));
                STORE_SUM(o[i] + t, v);
            }
        }
    } else {
        /* element 3t + s: from (a, b) when < 32, else from c; the second permute keeps lane t
         * of the first (index t) or takes c[3t + s - 32] (index 16 + 3t + s - 32) */
        __m512i from_ab[3], with_c[3];
        for (int64_t k = 0; k < 3; k++) {
            int32_t second[16];
            for (int t = 0; t < 16; t++) {
                const int e = 3 * t + (int)k;
                second[t] = e < 32 ? t : 16 + e - 32;
            }
            from_ab[k] = index_vector(3, k);
            with_c[k] = _mm512_loadu_si512((const void *)second);
        }
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                const float *g = s[i] + 3 * t;
                PREFETCH_AHEAD(g, 0);
                PREFETCH_AHEAD(g, 1);
                PREFETCH_AHEAD(g, 2);
                const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16), c = _mm512_loadu_ps(g + 32);
                __m512 v = zero;
                for (int k = 0; k < 3; k++) {
                    const __m512 ab = _mm512_permutex2var_ps(a, from_ab[k], b);
                    v = _mm512_add_ps(v, _mm512_permutex2var_ps(ab, with_c[k], c));
                }
                STORE_SUM(o[i] + t, v);
            }
        }
    }
#undef STORE_SUM
#undef PREFETCH_AHEAD
    for (int i = 0; i < m; i++) {
        for (int64_t t = n16; t < n; t++) {
            const float *g = s[i] + count * t;
            float acc = 0.0f;
            for (int64_t j = 0; j < count; j++) {
                acc += g[j];
            }
            o[i][t] = acc;
            if (nonfinite != NULL) nonfinite[i] |= !isfinite(acc);
        }
    }
    return true;
}

/* m fp32 gradInput rows in NN_UPSAMPLE_BW_RUNS, in lockstep, with the AVX-512 run sums where they
 * apply.  nonfinite (not NULL): whether each row has an inf or NaN sum. */
NN_AVX512 static void rows_f32_runs_avx512(const nn_ne_map *map, const float *const *go,
                                           float *const *gi, int m, bool stream, nn_upsample_bw_sums_fn sums,
                                           bool *nonfinite)
{
    for (int64_t r = 0; r < map->num_runs; r++) {
        const nn_ne_run *run = &map->runs[r];
        const float *s[NN_UPSAMPLE_BW_LOCKSTEP_ROWS];
        float *o[NN_UPSAMPLE_BW_LOCKSTEP_ROWS];
        for (int i = 0; i < m; i++) {
            s[i] = go[i] + run->d0;
            o[i] = gi[i] + run->i0;
        }
        if (!run_sums_f32_avx512(s, o, m, run->i1 - run->i0, run->count, stream, nonfinite)) {
            for (int i = 0; i < m; i++) {
                sums(s[i], o[i], run->i1 - run->i0, run->count);
                if (nonfinite != NULL) nonfinite[i] |= nn_upsample_bw_count_nonfinite(o[i], run->i1 - run->i0) != 0;
            }
        }
    }
}

/* Rows [begin, end) in NN_UPSAMPLE_BW_RUNS, split into up to NN_UPSAMPLE_BW_LOCKSTEP_ROWS stretches of consecutive rows
 * that are worked on in lockstep (row j of every stretch, then row j + 1, ...).  Rows go
 * straight to gradInput (`direct`: non-temporal stores from the registers, every row aligned;
 * else ordinary stores), or, with `stages` (nn_upsample_bw_lockstep_stretches(Lin, true) buffers of Lin + 16
 * floats), through one streaming line stage per stretch (base/nn_simd.h): a stretch goes out as
 * one flat stream of whole lines, with partial lines only at its two ends. */
NN_AVX512 static void rows_f32_runs_lockstep(const nn_upsample_bw_ctx *ctx, const nn_ne_map *map, const float *go_base,
                                             float *gi_base, int64_t begin, int64_t end,
                                             bool direct, float *stages, nn_upsample_bw_sums_fn sums)
{
    const int64_t Lin = map->in_len, Lout = map->out_len, rows = end - begin;
    if (rows <= 0) {
        return;
    }
    const int most = nn_upsample_bw_lockstep_stretches(Lin, stages != NULL);
    const int m = rows < most ? (int)rows : most;
    int64_t first[NN_UPSAMPLE_BW_LOCKSTEP_ROWS] = {0}, count[NN_UPSAMPLE_BW_LOCKSTEP_ROWS] = {0};
    nn_line_stage flat[NN_UPSAMPLE_BW_LOCKSTEP_ROWS];
    const int64_t row_bytes = Lin * (int64_t)sizeof(float);
    for (int i = 0; i < m; i++) { /* the longer stretches first */
        count[i] = rows / m + (i < rows % m ? 1 : 0);
        first[i] = i == 0 ? begin : first[i - 1] + count[i - 1];
        if (stages != NULL) {
            flat[i] = (nn_line_stage){(unsigned char *)(stages + (size_t)i * (size_t)(Lin + 16)),
                                      (unsigned char *)(gi_base + first[i] * Lin), 0, true};
        }
    }
    for (int64_t j = 0; j < count[0]; j++) {
        int live = 0; /* stretches that still have a row j */
        const float *go[NN_UPSAMPLE_BW_LOCKSTEP_ROWS];
        float *gi[NN_UPSAMPLE_BW_LOCKSTEP_ROWS];
        while (live < m && j < count[live]) {
            go[live] = go_base + (first[live] + j) * Lout;
            gi[live] = stages != NULL ? (float *)nn_line_stage_at(&flat[live], j * row_bytes)
                                      : gi_base + (first[live] + j) * Lin;
            live++;
        }
        /* A2/A3: the rows' sums are classified as they are stored (even past the cache) */
        const bool cube = ctx->plan->cube_slide > 0;
        bool nonfinite[NN_UPSAMPLE_BW_LOCKSTEP_ROWS] = {false};
        rows_f32_runs_avx512(map, go, gi, live, direct, sums, cube ? nonfinite : NULL);
        for (int i = 0; i < live && cube; i++) {
            nn_upsample_bw_cube_row(ctx, go[i], ACL_FLOAT, gi[i], nonfinite[i]);
        }
        if (stages != NULL) {
            for (int i = 0; i < live; i++) {
                nn512_line_stage_flush(&flat[i], (j + 1) * row_bytes, false);
            }
        }
    }
    if (stages != NULL) {
        for (int i = 0; i < m; i++) {
            nn512_line_stage_flush(&flat[i], count[i] * row_bytes, true);
        }
    }
}
bool nn_upsample_bw_rows_f32_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end, float *buffer,
                                    nn_upsample_bw_sums_fn sums)
{
    const nn_upsample_bw_plan *p = ctx->plan;
    const int64_t Lin = p->in_len;
    if (ctx->mode != NN_UPSAMPLE_BW_RUNS || p->dtype != ACL_FLOAT) {
        return false;
    }
    const bool direct_stream = ctx->stream && ctx->map->num_runs == 1 && (Lin & 15) == 0 &&
                               ((uintptr_t)ctx->grad_in & 63) == 0;
    const bool flat = ctx->stream && !direct_stream && buffer != NULL && ((uintptr_t)ctx->grad_in & 3) == 0;
    if (ctx->stream && !direct_stream && !flat) {
        return false;
    }
    rows_f32_runs_lockstep(ctx, ctx->map, (const float *)ctx->grad_out, (float *)ctx->grad_in, begin, end,
                           direct_stream, flat ? buffer : NULL, sums);
    return true;
}
#else
bool nn_upsample_bw_rows_f32_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end, float *buffer,
                                    nn_upsample_bw_sums_fn sums)
{
    (void)ctx, (void)begin, (void)end, (void)buffer, (void)sums;
    return false;
}
#endif
