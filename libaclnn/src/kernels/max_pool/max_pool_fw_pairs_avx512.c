/*
 * max_pool_fw_pairs_avx512.c - the max-pool forward's paired path (AVX-512): planes of 2x2
 * windows with stride 2 and no padding, pooled straight from the loaded input rows
 * (max_pool_fw_avx512.c picks it for planes without NaN in a window).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_fw_avx512.h"

#if NN_HAVE_X86_SIMD
/* ---- The paired path: 2x2 windows, stride 2, no padding ------------------------------------
 * When every window lies inside the plane (no ceil-mode window past its edge), output (oh, ow)
 * is the two pairs at columns 2ow, 2ow+1 of rows 2oh and 2oh+1: each step loads 16 outputs'
 * 32 elements of both rows and pools them in registers, with no key rows.  In PyTorch's order
 * (kh outer, kw inner; the first maximum wins) a pair's second cell is taken when greater than
 * its first, then the bottom pair's best when greater than the top's.  fp16 compares, on a CPU
 * with AVX512-FP16, the words themselves with vcmpph, 32 outputs a chunk after vpermt2w has
 * split even and odd columns (pair_chunk_ph); elsewhere the words as fp32 patterns, as bf16
 * (pair_chunk_spread), or under MXCSR's DAZ int16 keys (key16) in the even word of each 32-bit
 * lane (pair_step16, the odd cell shifted down onto it); bf16 the
 * exact fp32 values of the even (shifted up) and odd (masked) words of each lane; fp32 the
 * values after vpermt2ps has split even and odd columns.  The same masks give the
 * index (2oh*W + 2ow + dy*W + dx) and select the winner's raw element, so -0.0/+0.0 and ties
 * come out as on the other paths.  A NaN in a window sends the plane to the cell path, as the
 * keyed path does (a NaN in the last row or column of an odd H or W is in no window). */
/* 16 outputs' indices from the masks of 16 windows: mt (top pair's second cell), mb (bottom
 * pair's), mv (the bottom pair won). */
NN_AVX512 static inline __attribute__((always_inline)) void pair_index(int64_t W, __mmask16 mt, __mmask16 mb,
                                                                       __mmask16 mv, __m512i base, int32_t *arg,
                                                                       __mmask16 outs)
{
    const __m512i dx = _mm512_maskz_mov_epi32(mt, _mm512_set1_epi32(1));
    const __m512i below = _mm512_mask_mov_epi32(_mm512_set1_epi32((int32_t)W), mb, _mm512_set1_epi32((int32_t)W + 1));
    _mm512_mask_storeu_epi32(arg, outs, _mm512_add_epi32(base, _mm512_mask_mov_epi32(dx, mv, below)));
}

/* 16 outputs from fp16 elements as int16 keys (the paired path under MXCSR's DAZ, below): top
 * at row 2oh, column 2*ow0; `live` the elements loaded.  The keys' extremes go into *hi and *lo
 * (a key beyond +-inf's is a NaN), and the odd words are masked off the compares: the values and
 * the index offsets below only read the even words. */
NN_AVX512 static inline __attribute__((always_inline)) void pair_step16(const uint16_t *top, int64_t W, __mmask32 live,
                                                                        __mmask16 outs, __m512i base, int32_t *arg,
                                                                        uint16_t *val, __m512i *hi, __m512i *lo)
{
    const __mmask32 even = 0x55555555u;
    const __m512i t = _mm512_maskz_loadu_epi16(live, top), b = _mm512_maskz_loadu_epi16(live, top + W);
    const __m512i kt = key16(t), kb = key16(b);
    *hi = _mm512_max_epi16(*hi, _mm512_max_epi16(kt, kb));
    *lo = _mm512_min_epi16(*lo, _mm512_min_epi16(kt, kb));
    const __m512i kt1 = _mm512_srli_epi32(kt, 16), kb1 = _mm512_srli_epi32(kb, 16);
    const __mmask32 mt = _mm512_mask_cmpgt_epi16_mask(even, kt1, kt);
    const __mmask32 mb = _mm512_mask_cmpgt_epi16_mask(even, kb1, kb);
    const __m512i bt = _mm512_mask_mov_epi16(kt, mt, kt1), bb = _mm512_mask_mov_epi16(kb, mb, kb1);
    const __mmask32 mv = _mm512_mask_cmpgt_epi16_mask(even, bb, bt);
    /* the winner's word */
    const __m512i rt = _mm512_mask_mov_epi16(t, mt, _mm512_srli_epi32(t, 16));
    const __m512i rb = _mm512_mask_mov_epi16(b, mb, _mm512_srli_epi32(b, 16));
    _mm256_mask_storeu_epi16(val, outs, _mm512_cvtepi32_epi16(_mm512_mask_mov_epi16(rt, mv, rb)));
    /* the offsets dy*W + dx in the even words (odd words stay 0) */
    const __m512i dx = _mm512_maskz_mov_epi16(mt, _mm512_set1_epi32(1));
    const __m512i below = _mm512_mask_mov_epi16(_mm512_set1_epi32((int32_t)W), mb, _mm512_set1_epi32((int32_t)W + 1));
    _mm512_mask_storeu_epi32(arg, outs, _mm512_add_epi32(base, _mm512_mask_mov_epi16(dx, mv, below)));
}

/* Odd words of two vectors (a's 1, 3, ..., 31, then b's): the odd columns of 64 elements, or
 * the top halves of 32 32-bit lanes (even_words gives the even columns). */
static const int16_t odd_words[32] __attribute__((aligned(64))) = {
    1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};

/* 32 outputs' indices from the masks of 32 windows (bit i: output i), as pair_index: the
 * offsets dy*W + dx in 16-bit lanes (W + 1 fits, nn_mp_fw_pair_geometry), widened onto the
 * window bases of outputs 0-15 (base.lo) and 16-31 (base.hi). */
typedef struct pair_bases {
    __m512i lo, hi;
} pair_bases;
NN_AVX512 static inline __attribute__((always_inline)) void pair_index32(int64_t W, __mmask32 mt, __mmask32 mb,
                                                                         __mmask32 mv, pair_bases base, int32_t *arg,
                                                                         __mmask32 outs)
{
    const __m512i dx = _mm512_maskz_mov_epi16(mt, _mm512_set1_epi16(1));
    const __m512i below = _mm512_mask_blend_epi16(mb, _mm512_set1_epi16((int16_t)W), _mm512_set1_epi16((int16_t)(W + 1)));
    const __m512i offsets = _mm512_mask_mov_epi16(dx, mv, below);
    const __m512i lo = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(offsets));
    const __m512i hi = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(offsets, 1));
    _mm512_mask_storeu_epi32(arg, (__mmask16)outs, _mm512_add_epi32(base.lo, lo));
    _mm512_mask_storeu_epi32(arg + 16, (__mmask16)(outs >> 16), _mm512_add_epi32(base.hi, hi));
}

/* A chunk's input: the top (t) and bottom (b) cells of 32 windows, outputs 0-15 in t[0], b[0]
 * and 16-31 in t[1], b[1], each window's pair in one 32-bit lane. */
typedef struct pair_rows {
    __m512i t[2], b[2];
} pair_rows;

/* From one output row: top at row 2oh, column 2*ow0; live_lo and live_hi the elements of the
 * two 32-element loads of each row. */
NN_AVX512 static inline __attribute__((always_inline)) pair_rows rows_of_row(const uint16_t *top, int64_t W,
                                                                             __mmask32 live_lo, __mmask32 live_hi)
{
    return (pair_rows){{_mm512_maskz_loadu_epi16(live_lo, top), _mm512_maskz_loadu_epi16(live_hi, top + 32)},
                       {_mm512_maskz_loadu_epi16(live_lo, top + W), _mm512_maskz_loadu_epi16(live_hi, top + W + 32)}};
}

/* 32 outputs from fp16 elements with AVX512-FP16 (vcmpph).  The even and odd
 * columns are split into vectors of their own (one vpermt2w each), so each compare, move and
 * the values' store covers 32 windows, and the best is the winner's word.  A NaN is found by one
 * unordered compare of each row's two columns (into *nan). */
NN_AVX512 static inline __attribute__((always_inline)) void pair_chunk_ph(pair_rows r, int64_t W, __mmask32 outs,
                                                                          pair_bases base, int32_t *arg, uint16_t *val,
                                                                          __mmask32 *nan)
{
    const __m512i even = _mm512_load_si512(even_words), odd = _mm512_load_si512(odd_words);
    const __m512i te = _mm512_permutex2var_epi16(r.t[0], even, r.t[1]), to = _mm512_permutex2var_epi16(r.t[0], odd, r.t[1]);
    const __m512i be = _mm512_permutex2var_epi16(r.b[0], even, r.b[1]), bo = _mm512_permutex2var_epi16(r.b[0], odd, r.b[1]);
    *nan |= ph_unordered(te, to) | ph_unordered(be, bo);
    const __mmask32 mt = ph_greater(to, te), mb = ph_greater(bo, be);
    const __m512i bt = _mm512_mask_mov_epi16(te, mt, to), bb = _mm512_mask_mov_epi16(be, mb, bo);
    const __mmask32 mv = ph_greater(bb, bt);
    _mm512_mask_storeu_epi16(val, outs, _mm512_mask_mov_epi16(bt, mv, bb));
    pair_index32(W, mt, mb, mv, base, arg, outs);
}

/* The same from bf16 elements on their exact fp32 values (a shift and a mask, no keys): the
 * compares and the NaN test are one instruction each, and the best's top half is the winner's
 * word.  `fp16`: fp16 elements the same way, on CPUs without AVX512-FP16.  An fp16 word moved to
 * the top of a 32-bit lane is an fp32 pattern whose order is the fp16 order (sign and magnitude
 * stay in place, the magnitude's bits on top of the lane; +0.0 and -0.0 tie), but an fp16 NaN is
 * not always an fp32 NaN there (0x7C01 reads as a large finite value), so the words'
 * magnitudes, doubled by a word shift (the sign dropped), keep their unsigned maximum in
 * *nan_max: above inf's 0xF800 is a NaN.  The fp16 subnormals below 2^-17 become fp32
 * denormals, which compare as 0 under MXCSR's DAZ: the plane takes the int16 keys then
 * (mxcsr_daz).  Against the keys: no key arithmetic (three operations a word) and no key
 * extremes, seven fewer vector operations per 16 outputs. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i pair_step_spread(__m512i t, __m512i b, int64_t W,
                                                                                __mmask16 outs, __m512i base,
                                                                                int32_t *arg, __mmask16 *nan,
                                                                                __m512i *nan_max, bool fp16)
{
    const __m512i high = _mm512_set1_epi32((int32_t)0xFFFF0000);
    const __m512 te = _mm512_castsi512_ps(_mm512_slli_epi32(t, 16)), to = _mm512_castsi512_ps(_mm512_and_si512(t, high));
    const __m512 be = _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)), bo = _mm512_castsi512_ps(_mm512_and_si512(b, high));
    if (fp16)
        *nan_max = _mm512_max_epu16(*nan_max, _mm512_max_epu16(_mm512_slli_epi16(t, 1), _mm512_slli_epi16(b, 1)));
    else
        *nan |= _mm512_cmp_ps_mask(te, to, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(be, bo, _CMP_UNORD_Q);
    const __mmask16 mt = _mm512_cmp_ps_mask(to, te, _CMP_GT_OQ), mb = _mm512_cmp_ps_mask(bo, be, _CMP_GT_OQ);
    const __m512 bt = _mm512_mask_mov_ps(te, mt, to), bb = _mm512_mask_mov_ps(be, mb, bo);
    const __mmask16 mv = _mm512_cmp_ps_mask(bb, bt, _CMP_GT_OQ);
    pair_index(W, mt, mb, mv, base, arg, outs);
    return _mm512_castps_si512(_mm512_mask_mov_ps(bt, mv, bb));
}

/* 32 outputs from two pair_step_spread (the second only when some of outputs 16-31 are
 * wanted): the winners' words, the top halves of the two steps' lanes, go out in one store
 * after one vpermt2w (a narrowing store per 16 outputs took three operations). */
NN_AVX512 static inline __attribute__((always_inline)) void pair_chunk_spread(pair_rows r, int64_t W, __mmask32 outs,
                                                                              pair_bases base, int32_t *arg,
                                                                              uint16_t *val, __mmask16 *nan,
                                                                              __m512i *nan_max, bool fp16)
{
    const __m512i lo = pair_step_spread(r.t[0], r.b[0], W, (__mmask16)outs, base.lo, arg, nan, nan_max, fp16);
    __m512i hi = _mm512_setzero_si512();
    if (outs >> 16)
        hi = pair_step_spread(r.t[1], r.b[1], W, (__mmask16)(outs >> 16), base.hi, arg + 16, nan, nan_max, fp16);
    _mm512_mask_storeu_epi16(val, outs, _mm512_permutex2var_epi16(lo, _mm512_load_si512(odd_words), hi));
}

/* MXCSR's DAZ (denormals are zero) on this thread: fp32 compares would tie the fp16 subnormals
 * that pair_step_spread turns into fp32 denormals. */
static inline bool mxcsr_daz(void)
{
    return (_mm_getcsr() & 0x0040u) != 0;
}

/* The same from fp32 elements; `nan` gathers the lanes that met a NaN. */
NN_AVX512 static inline __attribute__((always_inline)) void pair_step32(const float *top, int64_t W, __mmask32 live,
                                                                        __mmask16 outs, __m512i base, int32_t *arg,
                                                                        float *val, __mmask16 *nan)
{
    const __m512i even = _mm512_load_si512(even_lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __mmask16 live0 = (__mmask16)live, live1 = (__mmask16)(live >> 16);
    const __m512 t0 = _mm512_maskz_loadu_ps(live0, top), t1 = _mm512_maskz_loadu_ps(live1, top + 16);
    const __m512 b0 = _mm512_maskz_loadu_ps(live0, top + W), b1 = _mm512_maskz_loadu_ps(live1, top + W + 16);
    const __m512 te = _mm512_permutex2var_ps(t0, even, t1), to = _mm512_permutex2var_ps(t0, odd, t1);
    const __m512 be = _mm512_permutex2var_ps(b0, even, b1), bo = _mm512_permutex2var_ps(b0, odd, b1);
    *nan |= _mm512_cmp_ps_mask(te, to, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(be, bo, _CMP_UNORD_Q);
    const __mmask16 mt = _mm512_cmp_ps_mask(to, te, _CMP_GT_OQ), mb = _mm512_cmp_ps_mask(bo, be, _CMP_GT_OQ);
    const __m512 bt = _mm512_mask_mov_ps(te, mt, to), bb = _mm512_mask_mov_ps(be, mb, bo);
    const __mmask16 mv = _mm512_cmp_ps_mask(bb, bt, _CMP_GT_OQ);
    _mm512_mask_storeu_ps(val, outs, _mm512_mask_mov_ps(bt, mv, bb));
    pair_index(W, mt, mb, mv, base, arg, outs);
}

/* ---- Chunks across output rows ------------------------------------------------------------
 * When the rows have no odd last column (W = 2*Wo), output o = oh*Wo + ow has its top cells at
 * 2o + oh*W in the plane (row 2oh starts at 2oh*W = oh*W + 2oh*Wo), so the 16-bit forms take the
 * plane's outputs as one stream of 32-output chunks, whatever their rows: a 56x56 plane is 25
 * chunks of 32 lanes instead of 28 rows of one chunk each (28 lanes used), and the prefetch, tail
 * and drain shares are spread per chunk.  With Wo >= 16 a chunk's half of 16 outputs lies in at
 * most two output rows: the lanes of its first row load from the half's first window on, the
 * others (merge-masked) from W further on, and their index bases add W. */
NN_AVX512 static inline __attribute__((always_inline)) void stream_half(const uint16_t *in, int64_t W, int64_t Wo,
                                                                        int64_t oh, int64_t ow, int64_t left,
                                                                        bool last, __m512i lane2, __m512i *t, __m512i *b,
                                                                        __m512i *base)
{
    const int64_t at = 2 * oh * W + 2 * ow, first = Wo - ow; /* first: the lanes in row oh */
    const uint32_t live = !last || left >= 16 ? ~0u : left > 0 ? (1u << (2 * left)) - 1 : 0u;
    const uint32_t near = first >= 16 ? ~0u : (1u << (2 * first)) - 1;
    const __mmask32 m0 = near & live, m1 = ~near & live;
    const uint16_t *p = in + at;
    if (m1 == 0 && m0 == ~0u) {
        *t = _mm512_loadu_si512(p);
        *b = _mm512_loadu_si512(p + W);
    } else {
        *t = _mm512_mask_loadu_epi16(_mm512_maskz_loadu_epi16(m0, p), m1, p + W);
        *b = _mm512_mask_loadu_epi16(_mm512_maskz_loadu_epi16(m0, p + W), m1, p + 2 * W);
    }
    const __mmask16 next_row = (__mmask16)~(first >= 16 ? 0xFFFFu : (1u << first) - 1);
    const __m512i at_lanes = _mm512_add_epi32(lane2, _mm512_set1_epi32((int32_t)at));
    *base = _mm512_mask_add_epi32(at_lanes, next_row, at_lanes, _mm512_set1_epi32((int32_t)W));
}

/* The plane as one stream (W = 2*Wo, 16 <= Wo); NaNs are looked for once, at the end (a plane
 * with one is redone whole, drained lines included). */
NN_AVX512 static inline __attribute__((always_inline)) bool pair_stream_plane(const fw_plane_io *io,
                                                                              const mp_geometry *geometry, bool ph,
                                                                              bool spread)
{
    const mp_geometry local = *geometry, *g = &local; /* as in key_plane */
    const int64_t W = g->width, Wo = g->out_width, P = g->out_height * Wo;
    const __m512i lane2 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words)), 1);
    const uint16_t *in = (const uint16_t *)io->in;
    row_shares sh = shares_over(io, g, 2, (P + 31) / 32);
    __mmask16 nan = 0;
    __mmask32 nan16 = 0;
    __m512i nan_max = _mm512_setzero_si512();
    int64_t oh = 0, ow = 0; /* the chunk's first output */
    for (int64_t o0 = 0; o0 < P; o0 += 32) {
        shares_before_row(io, &sh);
        pair_rows r;
        pair_bases b;
        const bool last = o0 + 32 >= P; /* the plane's last chunk: lanes past P not loaded */
        stream_half(in, W, Wo, oh, ow, P - o0, last, lane2, &r.t[0], &r.b[0], &b.lo);
        if ((ow += 16) >= Wo) ow -= Wo, ++oh;
        stream_half(in, W, Wo, oh, ow, P - o0 - 16, last, lane2, &r.t[1], &r.b[1], &b.hi);
        if ((ow += 16) >= Wo) ow -= Wo, ++oh;
        const __mmask32 outs = last ? (__mmask32)nn_lane_range(0, P - o0, 32) : ~(__mmask32)0;
        if (ph)
            pair_chunk_ph(r, W, outs, b, io->argmax + o0, (uint16_t *)io->values + o0, &nan16);
        else
            pair_chunk_spread(r, W, outs, b, io->argmax + o0, (uint16_t *)io->values + o0, &nan, &nan_max, spread);
        shares_after(io, &sh, last ? P : o0 + 32, last, 2);
    }
    return ph ? nan16 == 0 : !nan && !_mm512_cmpgt_epu16_mask(nan_max, _mm512_set1_epi16((int16_t)0xF800));
}

/* The paired plane, with the row shares between rows; false for a plane with a NaN. */
NN_AVX512 static inline __attribute__((always_inline)) bool pair_plane(const fw_plane_io *io, const mp_geometry *geometry,
                                                                       aclDataType dtype, bool ph, bool spread)
{
    /* rows of whole chunks gain nothing from the stream */
    if ((ph || spread || dtype == ACL_BF16) && geometry->width == 2 * geometry->out_width && geometry->out_width >= 16 &&
        geometry->out_width % 32 != 0)
        return pair_stream_plane(io, geometry, ph, spread);
    const mp_geometry local = *geometry, *g = &local; /* as in key_plane */
    const int64_t W = g->width, Wo = g->out_width, Ho = g->out_height, elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t full = Wo / 16 * 16;
    const __mmask16 tail_outs = (__mmask16)nn_lane_range(0, Wo - full, 16);
    const __mmask32 tail_live = nn_lane_range(0, 2 * (Wo - full), 32);
    /* the 16-bit forms but the keys take 32 outputs at a time: the last chunk's outputs and the
     * elements of its two loads per row */
    const int64_t full32 = Wo / 32 * 32;
    const __mmask32 tail32_outs = nn_lane_range(0, Wo - full32, 32);
    const __mmask32 tail32_lo = nn_lane_range(0, 2 * (Wo - full32), 32);
    const __mmask32 tail32_hi = nn_lane_range(0, 2 * (Wo - full32) - 32, 32);
    const __m512i lane2 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words)), 1);
    const int16_t inf_bits = dtype == ACL_FLOAT16 ? 0x7C00 : 0x7F80;
    row_shares sh = shares_of(io, g, elem);
    __m512i hi = _mm512_set1_epi16((int16_t)-inf_bits), lo = _mm512_set1_epi16(inf_bits);
    __mmask16 nan = 0;
    __mmask32 nan16 = 0;
    __m512i nan_max = _mm512_setzero_si512(); /* spread: the doubled magnitudes' maximum */
    for (int64_t oh = 0; oh < Ho; ++oh) {
        shares_before_row(io, &sh);
        const int64_t first = 2 * oh * W;
        __m512i base = _mm512_add_epi32(lane2, _mm512_set1_epi32((int32_t)first));
        int32_t *arg = io->argmax + oh * Wo;
        int64_t ow0 = 0;
        if (dtype == ACL_FLOAT) {
            const float *top = (const float *)io->in + first;
            float *val = (float *)io->values + oh * Wo;
            for (; ow0 < full; ow0 += 16, base = _mm512_add_epi32(base, _mm512_set1_epi32(32)))
                pair_step32(top + 2 * ow0, W, ~(__mmask32)0, (__mmask16)0xFFFF, base, arg + ow0, val + ow0, &nan);
            if (tail_outs) pair_step32(top + 2 * ow0, W, tail_live, tail_outs, base, arg + ow0, val + ow0, &nan);
            if (nan) return false;
        } else if (dtype == ACL_BF16 || spread || ph) { /* 32 outputs a chunk; spread: fp16 as fp32 patterns */
            const uint16_t *top = (const uint16_t *)io->in + first;
            uint16_t *val = (uint16_t *)io->values + oh * Wo;
            for (; ow0 < full32; ow0 += 32, base = _mm512_add_epi32(base, _mm512_set1_epi32(64))) {
                const pair_rows r = rows_of_row(top + 2 * ow0, W, ~(__mmask32)0, ~(__mmask32)0);
                const pair_bases b = {base, _mm512_add_epi32(base, _mm512_set1_epi32(32))};
                if (ph)
                    pair_chunk_ph(r, W, ~(__mmask32)0, b, arg + ow0, val + ow0, &nan16);
                else
                    pair_chunk_spread(r, W, ~(__mmask32)0, b, arg + ow0, val + ow0, &nan, &nan_max, spread);
            }
            if (tail32_outs) {
                const pair_rows r = rows_of_row(top + 2 * ow0, W, tail32_lo, tail32_hi);
                const pair_bases b = {base, _mm512_add_epi32(base, _mm512_set1_epi32(32))};
                if (ph)
                    pair_chunk_ph(r, W, tail32_outs, b, arg + ow0, val + ow0, &nan16);
                else
                    pair_chunk_spread(r, W, tail32_outs, b, arg + ow0, val + ow0, &nan, &nan_max, spread);
            }
            if (ph ? nan16 != 0 : nan || _mm512_cmpgt_epu16_mask(nan_max, _mm512_set1_epi16((int16_t)0xF800)))
                return false;
        } else { /* int16 keys */
            const uint16_t *top = (const uint16_t *)io->in + first;
            uint16_t *val = (uint16_t *)io->values + oh * Wo;
            for (; ow0 < full; ow0 += 16, base = _mm512_add_epi32(base, _mm512_set1_epi32(32)))
                pair_step16(top + 2 * ow0, W, ~(__mmask32)0, (__mmask16)0xFFFF, base, arg + ow0, val + ow0, &hi, &lo);
            if (tail_outs) pair_step16(top + 2 * ow0, W, tail_live, tail_outs, base, arg + ow0, val + ow0, &hi, &lo);
            if ((_mm512_cmpgt_epi16_mask(hi, _mm512_set1_epi16(inf_bits)) |
                 _mm512_cmplt_epi16_mask(lo, _mm512_set1_epi16((int16_t)-inf_bits))) != 0)
                return false;
        }
        shares_after_row(io, &sh, oh, Ho, Wo, elem);
    }
    return true;
}
#define PAIR_PLANE_VARIANT(name, dtype, ph, spread)                                                                  \
    NN_AVX512 static bool name(const fw_plane_io *io, const mp_geometry *g)                                          \
    {                                                                                                                \
        return pair_plane(io, g, dtype, ph, spread);                                                                 \
    }
PAIR_PLANE_VARIANT(pairs_f32, ACL_FLOAT, false, false)
PAIR_PLANE_VARIANT(pairs_f16, ACL_FLOAT16, false, false)     /* int16 keys: under MXCSR's DAZ */
PAIR_PLANE_VARIANT(pairs_f16_ph, ACL_FLOAT16, true, false)   /* only when nn_cpu_avx512fp16() */
PAIR_PLANE_VARIANT(pairs_f16_spread, ACL_FLOAT16, false, true) /* without AVX512-FP16 */
PAIR_PLANE_VARIANT(pairs_bf16, ACL_BF16, false, false)

bool nn_mp_fw_pairs_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) return pairs_f32(io, g);
    if (dtype == ACL_BF16) return pairs_bf16(io, g);
    return (nn_cpu_avx512fp16() ? pairs_f16_ph : mxcsr_daz() ? pairs_f16 : pairs_f16_spread)(io, g);
}
#endif /* NN_HAVE_X86_SIMD */
