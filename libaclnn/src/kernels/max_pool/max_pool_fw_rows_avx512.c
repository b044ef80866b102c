/*
 * max_pool_fw_rows_avx512.c - the max-pool forward's pooled-rows path (max_pool_fw_avx512.h):
 * fp32 planes of 3x3 windows with stride 2, any padding, without NaN in a window, and bf16 ones
 * wider than MP_ROWS16_MAX_WO outputs (narrower fp16/bf16 planes take the int16-key form of
 * max_pool_fw_rows16_avx512.c; widened by vcvtph2ps, fp16 ran slower here than its keys).
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
 * A row step loads 32 elements from column 2*ow0 - pW and splits the even columns (each
 * window's first cell) from the odd ones (its second) as exact fp32 values (load_step: fp32 by
 * vpermt2ps; bf16 by a shift and a mask of each 32-bit lane's two words), and takes the third
 * cell as the even columns moved down one lane (valignd, the last lane from element 32).  From
 * there both dtypes run the same fp32 compares, and the scratch holds fp32 values; a bf16
 * output is the top half of its fp32 value, so out holds the winner's bits.
 * Elements outside the row load as -inf, which is never taken; a window's pooled index starts
 * at its first cell inside the row (column 0 for a window at column -1), and its output at its
 * first row inside the plane, so a window of -inf cells gives its first in-range cell, as the
 * other paths do.  A NaN in a pooled row (unordered compare of each step's 32 elements, and of
 * element 32 after the row's last step) gives the plane back to the cell path.
 */
#include "kernels/max_pool/max_pool_fw_avx512.h"

#if NN_HAVE_X86_SIMD
/* 16 windows' pooled value and index. */
typedef struct pooled16 {
    __m512 v;
    __m512i x;
} pooled16;

/* The step at column c0 of a row of W: the elements of its 32 inside the row (live), whether
 * row[c0 + 32] is (ln) and must be tested for NaN here (last: no later step of the row loads
 * it), and whether the step starts left of the row. */
typedef struct step_at {
    __mmask32 live;
    __mmask16 ln;
    bool inside, last, left;
} step_at;
static inline step_at step_of(int64_t c0, int64_t W, bool last)
{
    const bool inside = c0 >= 0 && c0 + 33 <= W;
    return (step_at){inside ? ~(__mmask32)0 : (__mmask32)step_lanes(c0, W, 32), (__mmask16)(c0 + 32 < W), inside,
                     last && c0 + 32 < W, c0 < 0};
}

/* A row step's cells as exact fp32 values: c0 the even elements of at[0 .. 31] (each window's
 * first cell), c1 the odd ones (its second), nx at[32] in lane 0; elements outside the row are
 * -inf.  fp32 splits the 32 values with vpermt2ps; bf16 takes each 32-bit lane's low word
 * shifted up and its high word masked. */
typedef struct step_cells {
    __m512 c0, c1, nx;
} step_cells;
NN_AVX512 static inline __attribute__((always_inline)) step_cells load_step(const unsigned char *at, step_at st,
                                                                            aclDataType dtype)
{
    step_cells c;
    const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
    if (dtype == ACL_BF16) {
        const uint16_t *h = (const uint16_t *)at;
        const __m512i fill = _mm512_set1_epi16((int16_t)0xFF80);
        const __m512i w = st.inside ? _mm512_loadu_si512(h) : _mm512_mask_loadu_epi16(fill, st.live, h);
        const __m128i nx = _mm_mask_loadu_epi16(_mm512_castsi512_si128(fill), (__mmask8)st.ln, h + 32);
        c.c0 = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
        c.c1 = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int32_t)0xFFFF0000)));
        c.nx = _mm512_castps128_ps512(_mm_castsi128_ps(_mm_slli_epi32(nx, 16)));
        return c;
    }
    const float *f = (const float *)at;
    const __m512 a = st.inside ? _mm512_loadu_ps(f) : _mm512_mask_loadu_ps(neg_inf, (__mmask16)st.live, f);
    const __m512 b =
        st.inside ? _mm512_loadu_ps(f + 16) : _mm512_mask_loadu_ps(neg_inf, (__mmask16)(st.live >> 16), f + 16);
    c.nx = _mm512_mask_loadu_ps(neg_inf, st.ln, f + 32);
    const __m512i even = _mm512_load_si512(even_lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    c.c0 = _mm512_permutex2var_ps(a, even, b);
    c.c1 = _mm512_permutex2var_ps(a, odd, b);
    return c;
}

/* The odd words of 32 (then the even ones): a vpermw whose low half is the top halves of 16
 * fp32 lanes. */
static const int16_t odd_words[32] __attribute__((aligned(64))) = {
    1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};

/* 16 windows of one row from row[c0 ..] (`at`) for the step `st`; base the index of each
 * window's column c0 + 2*lane, first the index taken when neither later cell is greater. */
NN_AVX512 static inline __attribute__((always_inline)) pooled16 row_step(const unsigned char *at, step_at st,
                                                                         __m512i base, __m512i first, __mmask16 *nan,
                                                                         aclDataType dtype)
{
    const step_cells c = load_step(at, st, dtype);
    const __m512 c2 =
        _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(c.nx), _mm512_castps_si512(c.c0), 1));
    *nan |= _mm512_cmp_ps_mask(c.c0, c.c1, _CMP_UNORD_Q); /* the 32 loaded elements */
    if (st.last) *nan |= _mm512_mask_cmp_ps_mask(1, c.nx, c.nx, _CMP_UNORD_Q);
    const __mmask16 m1 = _mm512_cmp_ps_mask(c.c1, c.c0, _CMP_GT_OQ);
    pooled16 p;
    p.v = _mm512_mask_mov_ps(c.c0, m1, c.c1);
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

/* The outputs j0 .. of a row of Wo from their windows' winners, the values in their dtype. */
NN_AVX512 static inline __attribute__((always_inline)) void store_outputs(pooled16 best, int64_t j0, int64_t Wo,
                                                                          unsigned char *val, int32_t *arg,
                                                                          aclDataType dtype)
{
    const __mmask16 outs = Wo - j0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)nn_lane_range(0, Wo - j0, 16);
    if (dtype == ACL_FLOAT) {
        _mm512_mask_storeu_ps((float *)val + j0, outs, best.v);
    } else { /* bf16: the top halves */
        const __m512i words = _mm512_permutexvar_epi16(_mm512_load_si512(odd_words), _mm512_castps_si512(best.v));
        _mm256_mask_storeu_epi16((uint16_t *)val + j0, outs, _mm512_castsi512_si256(words));
    }
    _mm512_mask_storeu_epi32(arg + j0, outs, best.x);
}

NN_AVX512 static inline __attribute__((always_inline)) void store_pooled(pooled16 p, float *hv, int32_t *hx)
{
    _mm512_store_ps(hv, p.v);
    _mm512_store_si512(hx, p.x);
}

static inline int64_t elem_of(aclDataType dtype) { return dtype == ACL_FLOAT ? 4 : 2; }

/* Input row r pooled along the row into hv, hx (len = Wo rounded up to 16 windows). */
NN_AVX512 static inline __attribute__((always_inline)) void pool_input_row(const unsigned char *in,
                                                                           const mp_geometry *g, int64_t r,
                                                                           __m512i first_dx, float *hv, int32_t *hx,
                                                                           int64_t len, __mmask16 *nan,
                                                                           aclDataType dtype)
{
    const int64_t W = g->width, pW = g->pad_w, elem = elem_of(dtype);
    const unsigned char *row = in + r * W * elem;
    __m512i base = row_base(r, W, pW);
    for (int64_t j0 = 0; j0 < len; j0 += 16, base = _mm512_add_epi32(base, _mm512_set1_epi32(32))) {
        const step_at st = step_of(2 * j0 - pW, W, j0 + 16 >= len);
        const __m512i first = st.left ? _mm512_add_epi32(base, first_dx) : base;
        store_pooled(row_step(row + (2 * j0 - pW) * elem, st, base, first, nan, dtype), hv + j0, hx + j0);
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
                                                                      int64_t rows, int64_t Wo, unsigned char *val,
                                                                      int32_t *arg, aclDataType dtype)
{
    for (int64_t j0 = 0; j0 < Wo; j0 += 16) {
        pooled16 best = load_pooled(hv[0] + j0, hx[0] + j0);
        for (int64_t k = 1; k < rows; ++k) best = take(best, load_pooled(hv[k] + j0, hx[k] + j0));
        store_outputs(best, j0, Wo, val, arg, dtype);
    }
}

/* An output row of whole windows whose first row is pooled: rows r0+1 and r0+2 pooled in
 * registers step by step and taken down at once; only r0+2 is stored (the next output row's
 * first). */
NN_AVX512 static inline __attribute__((always_inline)) void pool_fused(const unsigned char *in, const mp_geometry *g,
                                                                       int64_t r0, __m512i first_dx, float *const *hv,
                                                                       int32_t *const *hx, int64_t len,
                                                                       __mmask16 *nan, unsigned char *val,
                                                                       int32_t *arg, aclDataType dtype)
{
    const int64_t W = g->width, pW = g->pad_w, Wo = g->out_width, elem = elem_of(dtype);
    const unsigned char *row1 = in + (r0 + 1) * W * elem, *row2 = row1 + W * elem;
    const __m512i step = _mm512_set1_epi32(32), down = _mm512_set1_epi32((int32_t)W);
    __m512i base = row_base(r0 + 1, W, pW);
    for (int64_t j0 = 0; j0 < len; j0 += 16, base = _mm512_add_epi32(base, step)) {
        const int64_t c0 = 2 * j0 - pW;
        const step_at st = step_of(c0, W, j0 + 16 >= len);
        const __m512i first = st.left ? _mm512_add_epi32(base, first_dx) : base;
        const pooled16 h1 = row_step(row1 + c0 * elem, st, base, first, nan, dtype);
        const pooled16 h2 =
            row_step(row2 + c0 * elem, st, _mm512_add_epi32(base, down), _mm512_add_epi32(first, down), nan, dtype);
        const pooled16 best = take(take(load_pooled(hv[0] + j0, hx[0] + j0), h1), h2);
        store_pooled(h2, hv[2] + j0, hx[2] + j0);
        store_outputs(best, j0, Wo, val, arg, dtype);
    }
}

/* The row passes of one dtype, compiled apart (not inlined into the plane loop). */
typedef void (*input_row_fn)(const unsigned char *, const mp_geometry *, int64_t, __m512i, float *, int32_t *,
                             int64_t, __mmask16 *);
typedef void (*fused_fn)(const unsigned char *, const mp_geometry *, int64_t, __m512i, float *const *,
                         int32_t *const *, int64_t, __mmask16 *, unsigned char *, int32_t *);

/* The plane; false for a plane with a NaN in a pooled row (nothing is final). */
NN_AVX512 static inline __attribute__((always_inline)) bool rows3_plane(const fw_plane_io *io,
                                                                        const mp_geometry *geometry,
                                                                        aclDataType dtype, input_row_fn input_row,
                                                                        fused_fn fused)
{
    const mp_geometry local = *geometry, *g = &local; /* the stores below could alias it */
    const int64_t Wo = g->out_width, Ho = g->out_height, len = mp_rows3_len(g), elem = elem_of(dtype);
    float *slots = (float *)io->keys; /* input row r's pooled row in slot r % 3: values, then indices */
    const __m512i lanes = _mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words));
    /* the first in-range column of the first step's windows, past each window's first column */
    const __m512i first_dx = _mm512_max_epi32(
        _mm512_sub_epi32(_mm512_set1_epi32((int32_t)g->pad_w), _mm512_slli_epi32(lanes, 1)), _mm512_setzero_si512());
    row_shares sh = shares_of(io, g, elem);
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
        unsigned char *val = io->values + oh * Wo * elem;
        int32_t *arg = io->argmax + oh * Wo;
        if (wr.rows == 3 && pooled == wr.h_lo + 1) {
            shares_before_row(io, &sh);
            fused(io->in, g, wr.h_lo, first_dx, hv, hx, len, &nan, val, arg);
            pooled = wr.h_lo + 3;
            if (nan) return false;
            shares_after_row(io, &sh, oh, Ho, Wo, elem);
            continue;
        }
        for (int64_t k = 0; k < wr.rows; ++k) {
            if (wr.h_lo + k >= pooled) input_row(io->in, g, wr.h_lo + k, first_dx, hv[k], hx[k], len, &nan);
        }
        pooled = wr.h_lo + wr.rows;
        if (nan) return false;
        shares_before_row(io, &sh);
        pool_down(hv, hx, wr.rows, Wo, val, arg, dtype);
        shares_after_row(io, &sh, oh, Ho, Wo, elem);
    }
    return true;
}

#define ROWS3_DTYPE(suffix, dtype)                                                                                  \
    NN_AVX512 static void input_row_##suffix(const unsigned char *in, const mp_geometry *g, int64_t r,              \
                                             __m512i first_dx, float *hv, int32_t *hx, int64_t len, __mmask16 *nan) \
    {                                                                                                              \
        pool_input_row(in, g, r, first_dx, hv, hx, len, nan, dtype);                                               \
    }                                                                                                              \
    NN_AVX512 static void fused_##suffix(const unsigned char *in, const mp_geometry *g, int64_t r0,                 \
                                         __m512i first_dx, float *const *hv, int32_t *const *hx, int64_t len,       \
                                         __mmask16 *nan, unsigned char *val, int32_t *arg)                          \
    {                                                                                                              \
        pool_fused(in, g, r0, first_dx, hv, hx, len, nan, val, arg, dtype);                                        \
    }                                                                                                              \
    NN_AVX512 static bool rows3_##suffix(const fw_plane_io *io, const mp_geometry *g)                               \
    {                                                                                                              \
        return rows3_plane(io, g, dtype, input_row_##suffix, fused_##suffix);                                      \
    }
ROWS3_DTYPE(f32, ACL_FLOAT)
ROWS3_DTYPE(bf16, ACL_BF16)

bool nn_mp_fw_rows3_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) return rows3_f32(io, g);
    return g->out_width <= MP_ROWS16_MAX_WO ? nn_mp_fw_rows16_plane(io, g, dtype) : rows3_bf16(io, g);
}
#endif /* NN_HAVE_X86_SIMD */
