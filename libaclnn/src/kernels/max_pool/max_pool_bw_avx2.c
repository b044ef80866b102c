/*
 * max_pool_bw_avx2.c - the MaxPool2dWithMask backward's 2x2 stride-2 direct write on AVX2 + F16C
 * CPUs (max_pool_bw.h; the scheme is described in max_pool_bw_avx512.c).  Compiled with the
 * AVX2 flags (Makefile); run only when the plan's tiled_2x2_avx2 flag is set, which phase 1 sets
 * from nn_cpu_avx2() on CPUs without the AVX-512 tier.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_bw.h"

#if NN_HAVE_X86_SIMD
/* The same plane on AVX2 CPUs, 8 outputs (16 cells of each row) per step.  AVX2 has no lane
 * masks, so a row's last step, when partial, is done first, with whole-vector loads and stores: its
 * loads end at the row's last output (lanes shifted into place; the ones past the row read
 * index -1, which matches no cell) and its stores run past the row end into the next row,
 * whose own steps come after and overwrite them. */

/* 8 gradients from grow[at..] as fp32 and their 8 indices. */
NN_AVX2 static inline __attribute__((always_inline)) void
tiled_avx2_load8(const unsigned char *grow, const unaligned_i32 *irow, int64_t at, aclDataType dtype, __m256 *g,
                 __m256i *index)
{
    *index = _mm256_loadu_si256((const __m256i *)(irow + at));
    if (dtype == ACL_FLOAT) {
        *g = _mm256_loadu_ps((const float *)grow + at);
        return;
    }
    const __m128i narrow = _mm_loadu_si128((const __m128i *)((const uint16_t *)grow + at));
    *g = dtype == ACL_FLOAT16 ? _mm256_cvtph_ps(narrow)
                              : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(narrow), 16));
}

/* Outputs ow0 .. Wo-1 (n = Wo - ow0 <= 8 of them) in lanes 0..n-1; the other lanes' indices are -1. */
NN_AVX2 static inline __attribute__((always_inline)) void
tiled_avx2_load_tail(const unsigned char *grow, const unaligned_i32 *irow, int64_t ow0, int64_t n, aclDataType dtype,
                     __m256 *g, __m256i *index)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), lane);
    if (ow0 + n >= 8) { /* the 8 outputs ending at the row's last, moved down by 8 - n lanes */
        const __m256i from = _mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)(8 - n)));
        tiled_avx2_load8(grow, irow, ow0 + n - 8, dtype, g, index);
        *g = _mm256_permutevar8x32_ps(*g, from);
        *index = _mm256_blendv_epi8(_mm256_set1_epi32(-1), _mm256_permutevar8x32_epi32(*index, from), live);
        return;
    }
    /* a row of fewer than 8 outputs: through small arrays (narrow images only) */
    const int64_t elem = dtype == ACL_FLOAT ? 4 : 2;
    int32_t idx[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    unsigned char bytes[32] = {0};
    memcpy(idx, irow + ow0, (size_t)n * 4);
    memcpy(bytes, grow + ow0 * elem, (size_t)(n * elem));
    tiled_avx2_load8(bytes, (const unaligned_i32 *)idx, 0, dtype, g, index);
}

/* Cells c0 .. c0+15 of row0 and row1 (NULL past the plane) from 8 outputs with gradients g and
 * rel = index - (2oh*W + 2ow); odd_ok: the lanes whose odd cell (column 2ow+1) is inside the row.
 * Each output's gradient goes to the one cell its rel names - (0, 1, W, W+1): row0/row1, even/odd
 * column - as 0.0f + g (-0.0 -> +0.0 and a quieted NaN, like the tile's add).  fp16/bf16: the
 * rounded-back word w of each output makes the 32-bit pair (even | odd << 16) of its two cells,
 * which is their memory order, so a row's 16 cells are one store; fp32: the two cells' values
 * are interleaved by unpacking.  Returns -1 in the lanes whose index matched a cell. */
NN_AVX2 static inline __attribute__((always_inline)) __m256i
tiled_avx2_block(unsigned char *row0, unsigned char *row1, __m256 g, __m256i rel, __m256i odd_ok, int64_t c0,
                 int64_t W, aclDataType dtype)
{
    const __m256i w = _mm256_set1_epi32((int32_t)W), one = _mm256_set1_epi32(1);
    const __m256i even0 = _mm256_cmpeq_epi32(rel, _mm256_setzero_si256());
    const __m256i odd0 = _mm256_and_si256(_mm256_cmpeq_epi32(rel, one), odd_ok);
    __m256i even1 = _mm256_cmpeq_epi32(rel, w);
    __m256i odd1 = _mm256_and_si256(_mm256_cmpeq_epi32(rel, _mm256_add_epi32(w, one)), odd_ok);
    if (!row1) even1 = odd1 = _mm256_setzero_si256();
    g = _mm256_add_ps(g, _mm256_setzero_ps());
    if (dtype == ACL_FLOAT) {
        const __m256i bits = _mm256_castps_si256(g);
        for (int r = 0; r < 2; ++r) {
            if (r == 1 && !row1) break;
            float *row = (float *)(r == 0 ? row0 : row1) + c0;
            const __m256 e = _mm256_castsi256_ps(_mm256_and_si256(bits, r == 0 ? even0 : even1));
            const __m256 o = _mm256_castsi256_ps(_mm256_and_si256(bits, r == 0 ? odd0 : odd1));
            const __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o); /* cells 0-3|8-11, 4-7|12-15 */
            _mm_storeu_ps(row, _mm256_castps256_ps128(lo));
            _mm_storeu_ps(row + 4, _mm256_castps256_ps128(hi));
            _mm_storeu_ps(row + 8, _mm256_extractf128_ps(lo, 1));
            _mm_storeu_ps(row + 12, _mm256_extractf128_ps(hi, 1));
        }
    } else {
        const __m256i words = dtype == ACL_BF16
                                  ? _mm256_srli_epi32(_mm256_castps_si256(g), 16)
                                  : _mm256_cvtepu16_epi32(_mm256_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm256_storeu_si256((__m256i *)((uint16_t *)row0 + c0),
                            _mm256_or_si256(_mm256_and_si256(words, even0),
                                            _mm256_slli_epi32(_mm256_and_si256(words, odd0), 16)));
        if (row1)
            _mm256_storeu_si256((__m256i *)((uint16_t *)row1 + c0),
                                _mm256_or_si256(_mm256_and_si256(words, even1),
                                                _mm256_slli_epi32(_mm256_and_si256(words, odd1), 16)));
    }
    return _mm256_or_si256(_mm256_or_si256(even0, odd0), _mm256_or_si256(even1, odd1));
}

NN_AVX2 static inline __attribute__((always_inline)) bool
tiled_avx2_rows(const bw_plan *p, unsigned char *gi, const unsigned char *grad, const unsigned char *mask,
                float *scratch, aclDataType dtype)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width;
    const int64_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t cell_end = W < 2 * Wo ? W : 2 * Wo; /* cells inside a window: c < cell_end */
    /* The last step goes first, apart, when it has fewer than 8 outputs or cells past the row
     * end (ceilMode with odd W); `full` outputs are left for the steps in order. */
    const int64_t last_step = (Wo - 1) / 8 * 8;
    const int64_t full = Wo - last_step < 8 || 2 * Wo > W ? last_step : Wo;
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step_base = _mm256_add_epi32(lane, lane), all = _mm256_set1_epi32(-1);
    /* the last step's lanes whose odd cell 2ow+1 is inside a window */
    const __m256i tail_odd_ok = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(cell_end - 2 * full)),
                                                   _mm256_add_epi32(step_base, _mm256_set1_epi32(1)));
    nn_line_stage st = {stage_buffer(scratch, W, AVX2_STAGE_FLUSH_BYTES), gi, 0, p->stream_stores};
    __m256i matched = _mm256_setzero_si256(); /* minus the matches, per lane */
    for (int64_t ih = 0; ih < H; ih += 2) {
        unsigned char *row0 = nn_line_stage_at(&st, ih * W * elem);
        unsigned char *row1 = ih + 1 < H ? nn_line_stage_at(&st, (ih + 1) * W * elem) : NULL;
        const int64_t oh = ih / 2;
        if (oh < Ho) {
            const unsigned char *grow = grad + oh * Wo * elem;
            const unaligned_i32 *irow = index + oh * Wo;
            __m256 gv;
            __m256i iv;
            if (full < Wo) { /* the last step first: its stores spill into cells stored later */
                tiled_avx2_load_tail(grow, irow, full, Wo - full, dtype, &gv, &iv);
                const __m256i base = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(ih * W + 2 * full)), step_base);
                matched = _mm256_add_epi32(matched, tiled_avx2_block(row0, row1, gv, _mm256_sub_epi32(iv, base),
                                                                     tail_odd_ok, 2 * full, W, dtype));
            }
            __m256i base = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(ih * W)), step_base);
            for (int64_t ow0 = 0; ow0 < full; ow0 += 8) {
                /* the streams are read at 1-2 cache lines per step: fetch 1 KiB ahead (across the
                 * end of the plane into the next one: a prefetch past a buffer does not fault) */
                _mm_prefetch((const char *)(irow + ow0) + 1024, _MM_HINT_T0);
                _mm_prefetch((const char *)(grow + ow0 * elem) + 1024, _MM_HINT_T0);
                tiled_avx2_load8(grow, irow, ow0, dtype, &gv, &iv);
                matched = _mm256_add_epi32(matched, tiled_avx2_block(row0, row1, gv, _mm256_sub_epi32(iv, base), all,
                                                                     2 * ow0, W, dtype));
                base = _mm256_add_epi32(base, _mm256_set1_epi32(16));
            }
            tiled_zero_uncovered(row0, row1, cell_end, W, elem); /* odd W, ceilMode off: the last column */
        } else { /* odd H, ceilMode off: no window */
            tiled_zero_uncovered(row0, row1, 0, W, elem);
        }
        const int64_t done = (ih + 2 < H ? ih + 2 : H) * W * elem;
        if (done - st.written >= AVX2_STAGE_FLUSH_BYTES) nn_line_stage_flush(&st, done, false);
    }
    nn_line_stage_flush(&st, H * W * elem, true);
    /* lane sums of at most Ho*Wo/8 + Ho matches each: no overflow (HW < 2^31) */
    int32_t per_lane[8];
    _mm256_storeu_si256((__m256i *)per_lane, matched);
    int64_t matches = 0;
    for (int i = 0; i < 8; i++) matches -= per_lane[i];
    return matches == Ho * Wo;
}

bool nn_mp_bw_tiled_2x2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                         const unsigned char *mask, float *scratch)
{
    if (p->dtype == ACL_FLOAT) return tiled_avx2_rows(p, gi, grad, mask, scratch, ACL_FLOAT);
    if (p->dtype == ACL_BF16) return tiled_avx2_rows(p, gi, grad, mask, scratch, ACL_BF16);
    return tiled_avx2_rows(p, gi, grad, mask, scratch, ACL_FLOAT16);
}
#else /* not x86-64: never chosen, defined for the link */
bool nn_mp_bw_tiled_2x2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                   const unsigned char *mask, float *scratch)
{
    (void)p, (void)gi, (void)grad, (void)mask, (void)scratch;
    return false;
}
#endif /* NN_HAVE_X86_SIMD */
