/*
 * max_pool_fw_rows_avx512.c - the max-pool forward's pooled-rows path (max_pool_fw_avx512.h):
 * fp32 planes of 3x3 windows with stride 2, any padding, without NaN in a window.
 *
 * In PyTorch's order (kh outer, kw inner, the first maximum wins) the winner of a window is the
 * first maximum of the first row that holds the window's maximum: so each input row is pooled
 * along the row once (hv[ow], the first maximum of its three cells, hx[ow] its index) and an
 * output is the first of its rows' pooled values that no later row exceeds.  With stride 2 the
 * last row of one output row's windows is the first of the next's, so an input row is pooled
 * once for two output rows: about 26 vector operations per 16 outputs against the keyed path's
 * 40.  An output row of whole windows pools its two new rows step by step in registers and
 * takes them down at once, storing only the last (the next output row's first); the first and
 * the last output rows (windows cut by the padding or the edge) pool their rows into the
 * three-row scratch first.
 *
 * A row step loads 32 elements from column 2*ow0 - pW, splits the even columns (each window's
 * first cell) from the odd ones (its second) with vpermt2ps, and takes the third cell as the
 * even columns moved down one lane (valignd, the last lane from element 32).  Elements outside
 * the row load as -inf, which is never taken; a window's pooled index starts at its first cell
 * inside the row (column 0 for a window at column -1), and its output at its first row inside
 * the plane, so a window of -inf cells gives its first in-range cell, as the other paths do.
 * A NaN in a pooled row (unordered compare of each step's 32 elements, and of element 32 after
 * the row's last step) gives the plane back to the cell path.
 */
#include "kernels/max_pool/max_pool_fw_avx512.h"

#if NN_HAVE_X86_SIMD
/* 16 windows' pooled value and index. */
typedef struct pooled16 {
    __m512 v;
    __m512i x;
} pooled16;

/* The step at column c0 of a row of W: the lanes of its two loads inside the row (la, lb),
 * whether row[c0 + 32] is (ln) and must be tested for NaN here (last: no later step of the row
 * loads it), and whether the step starts left of the row. */
typedef struct step_at {
    __mmask16 la, lb, ln;
    bool last, left;
} step_at;
static inline step_at step_of(int64_t c0, int64_t W, bool last)
{
    const bool inside = c0 >= 0 && c0 + 33 <= W;
    return (step_at){inside ? 0xFFFF : (__mmask16)step_lanes(c0, W, 16),
                     inside ? 0xFFFF : (__mmask16)step_lanes(c0 + 16, W, 16), (__mmask16)(c0 + 32 < W),
                     last && c0 + 32 < W, c0 < 0};
}

/* 16 windows of one row from row[c0 ..] (`at`) for the step `st`; base the index of each
 * window's column c0 + 2*lane, first the index taken when neither later cell is greater. */
NN_AVX512 static inline __attribute__((always_inline)) pooled16 row_step(const float *at, step_at st, __m512i base,
                                                                         __m512i first, __mmask16 *nan)
{
    const __mmask16 la = st.la, lb = st.lb, ln = st.ln;
    const __m512 fill = _mm512_set1_ps(-__builtin_inff());
    const __m512i even = _mm512_load_si512(even_lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512 a = _mm512_mask_loadu_ps(fill, la, at), b = _mm512_mask_loadu_ps(fill, lb, at + 16);
    const __m512 c0 = _mm512_permutex2var_ps(a, even, b), c1 = _mm512_permutex2var_ps(a, odd, b);
    const __m512 next = _mm512_mask_loadu_ps(fill, ln, at + 32);
    const __m512 c2 =
        _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(c0), 1));
    *nan |= _mm512_cmp_ps_mask(c0, c1, _CMP_UNORD_Q); /* the 32 loaded elements */
    if (st.last) *nan |= _mm512_mask_cmp_ps_mask(1, next, next, _CMP_UNORD_Q);
    const __mmask16 m1 = _mm512_cmp_ps_mask(c1, c0, _CMP_GT_OQ);
    pooled16 p;
    p.v = _mm512_mask_mov_ps(c0, m1, c1);
    const __mmask16 m2 = _mm512_cmp_ps_mask(c2, p.v, _CMP_GT_OQ);
    p.v = _mm512_mask_mov_ps(p.v, m2, c2);
    p.x = _mm512_mask_add_epi32(first, m1, base, _mm512_set1_epi32(1));
    p.x = _mm512_mask_add_epi32(p.x, m2, base, _mm512_set1_epi32(2));
    return p;
}

/* The index of each of the first step's windows' column 2*lane - pW in input row r. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i row_base(int64_t r, int64_t W, int64_t pW)
{
    const __m512i lanes = _mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words));
    return _mm512_add_epi32(_mm512_slli_epi32(lanes, 1), _mm512_set1_epi32((int32_t)(r * W - pW)));
}

/* The outputs j0 .. of a row of Wo from their windows' winners. */
NN_AVX512 static inline __attribute__((always_inline)) void store_outputs(pooled16 best, int64_t j0, int64_t Wo,
                                                                          float *val, int32_t *arg)
{
    const __mmask16 outs = Wo - j0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)nn_lane_range(0, Wo - j0, 16);
    _mm512_mask_storeu_ps(val + j0, outs, best.v);
    _mm512_mask_storeu_epi32(arg + j0, outs, best.x);
}

NN_AVX512 static inline __attribute__((always_inline)) void store_pooled(pooled16 p, float *hv, int32_t *hx)
{
    _mm512_store_ps(hv, p.v);
    _mm512_store_si512(hx, p.x);
}

/* Input row r pooled along the row into hv, hx (len = Wo rounded up to 16 windows). */
NN_AVX512 static void pool_input_row(const float *in, const mp_geometry *g, int64_t r, __m512i first_dx, float *hv,
                                     int32_t *hx, int64_t len, __mmask16 *nan)
{
    const int64_t W = g->width, pW = g->pad_w;
    const float *row = in + r * W;
    __m512i base = row_base(r, W, pW);
    for (int64_t j0 = 0; j0 < len; j0 += 16, base = _mm512_add_epi32(base, _mm512_set1_epi32(32))) {
        const step_at st = step_of(2 * j0 - pW, W, j0 + 16 >= len);
        const __m512i first = st.left ? _mm512_add_epi32(base, first_dx) : base;
        store_pooled(row_step(row + 2 * j0 - pW, st, base, first, nan), hv + j0, hx + j0);
    }
}

/* p taken over `best` where greater (a later row of the windows). */
NN_AVX512 static inline __attribute__((always_inline)) pooled16 take(pooled16 best, pooled16 p)
{
    const __mmask16 m = _mm512_cmp_ps_mask(p.v, best.v, _CMP_GT_OQ);
    best.v = _mm512_mask_mov_ps(best.v, m, p.v);
    best.x = _mm512_mask_mov_epi32(best.x, m, p.x);
    return best;
}

NN_AVX512 static inline __attribute__((always_inline)) pooled16 load_pooled(const float *hv, const int32_t *hx)
{
    return (pooled16){_mm512_load_ps(hv), _mm512_load_si512(hx)};
}

/* One output row from its `rows` pooled rows (1 to 3). */
NN_AVX512 static inline __attribute__((always_inline)) void pool_down(float *const *hv, int32_t *const *hx,
                                                                      int64_t rows, int64_t Wo, float *val,
                                                                      int32_t *arg)
{
    for (int64_t j0 = 0; j0 < Wo; j0 += 16) {
        pooled16 best = load_pooled(hv[0] + j0, hx[0] + j0);
        for (int64_t k = 1; k < rows; ++k) best = take(best, load_pooled(hv[k] + j0, hx[k] + j0));
        store_outputs(best, j0, Wo, val, arg);
    }
}

/* An output row of whole windows whose first row is pooled: rows r0+1 and r0+2 pooled in
 * registers step by step and taken down at once; only r0+2 is stored (the next output row's
 * first). */
NN_AVX512 static void pool_fused(const float *in, const mp_geometry *g, int64_t r0, __m512i first_dx,
                                 float *const *hv, int32_t *const *hx, int64_t len, __mmask16 *nan, float *val,
                                 int32_t *arg)
{
    const int64_t W = g->width, pW = g->pad_w, Wo = g->out_width;
    const float *row1 = in + (r0 + 1) * W, *row2 = row1 + W;
    const __m512i step = _mm512_set1_epi32(32), down = _mm512_set1_epi32((int32_t)W);
    __m512i base = row_base(r0 + 1, W, pW);
    for (int64_t j0 = 0; j0 < len; j0 += 16, base = _mm512_add_epi32(base, step)) {
        const int64_t c0 = 2 * j0 - pW;
        const step_at st = step_of(c0, W, j0 + 16 >= len);
        const __m512i first = st.left ? _mm512_add_epi32(base, first_dx) : base;
        const pooled16 h1 = row_step(row1 + c0, st, base, first, nan);
        const pooled16 h2 = row_step(row2 + c0, st, _mm512_add_epi32(base, down), _mm512_add_epi32(first, down), nan);
        const pooled16 best = take(take(load_pooled(hv[0] + j0, hx[0] + j0), h1), h2);
        store_pooled(h2, hv[2] + j0, hx[2] + j0);
        store_outputs(best, j0, Wo, val, arg);
    }
}

bool nn_mp_fw_rows3_plane(const fw_plane_io *io, const mp_geometry *geometry)
{
    const mp_geometry local = *geometry, *g = &local; /* the stores below could alias it */
    const int64_t Wo = g->out_width, Ho = g->out_height, len = mp_rows3_len(g);
    float *slots = (float *)io->keys; /* input row r's pooled row in slot r % 3: values, then indices */
    const __m512i lanes = _mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words));
    /* the first in-range column of the first step's windows, past each window's first column */
    const __m512i first_dx = _mm512_max_epi32(
        _mm512_sub_epi32(_mm512_set1_epi32((int32_t)g->pad_w), _mm512_slli_epi32(lanes, 1)), _mm512_setzero_si512());
    row_shares sh = shares_of(io, g, 4);
    __mmask16 nan = 0;
    int64_t pooled = 0; /* input rows below this one are in their slots */
    for (int64_t oh = 0; oh < Ho; ++oh) {
        const window_rows wr = rows_of(g, oh);
        float *hv[3];
        int32_t *hx[3];
        for (int64_t k = 0; k < wr.rows; ++k) {
            hv[k] = slots + (wr.h_lo + k) % 3 * 2 * len;
            hx[k] = (int32_t *)(hv[k] + len);
        }
        if (wr.rows == 3 && pooled == wr.h_lo + 1) {
            shares_before_row(io, &sh);
            pool_fused((const float *)io->in, g, wr.h_lo, first_dx, hv, hx, len, &nan, (float *)io->values + oh * Wo,
                       io->argmax + oh * Wo);
            pooled = wr.h_lo + 3;
            if (nan) return false;
            shares_after_row(io, &sh, oh, Ho, Wo, 4);
            continue;
        }
        for (int64_t k = 0; k < wr.rows; ++k) {
            if (wr.h_lo + k >= pooled) pool_input_row((const float *)io->in, g, wr.h_lo + k, first_dx, hv[k], hx[k], len, &nan);
        }
        pooled = wr.h_lo + wr.rows;
        if (nan) return false;
        shares_before_row(io, &sh);
        float *val = (float *)io->values + oh * Wo;
        int32_t *arg = io->argmax + oh * Wo;
        pool_down(hv, hx, wr.rows, Wo, val, arg);
        shares_after_row(io, &sh, oh, Ho, Wo, 4);
    }
    return true;
}
#endif /* NN_HAVE_X86_SIMD */
