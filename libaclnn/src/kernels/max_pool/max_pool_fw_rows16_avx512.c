/*
 * max_pool_fw_rows16_avx512.c - the pooled-rows path (max_pool_fw_rows_avx512.c) on int16 keys:
 * fp16 and bf16 planes of 3x3 windows with stride 2, any padding, without NaN in a window.
 *
 * The order is the fp32 form's (an input row pooled once along the row, an output the first of
 * its three pooled rows that no later one exceeds), but each vector holds 32 windows: the cells
 * are the keyed path's int16 keys (sign-magnitude to two's complement, so +0.0 and -0.0 are both
 * 0 and tie), compared with vpcmpgtw and taken with vpmaxsw (equal keys are equal values, so the
 * maximum is the best whichever cell it came from).  A pooled row keeps, per window, its best key
 * and a 16-bit code of the winning cell (dx; the take-down adds 4*dy), and the index is built
 * only for the output: dy*W + dx from a 16-entry table, plus the window's first cell.  The value
 * is the key turned back into bits; a best of 0 (the one key two values share) reads the winner's
 * word, as the keyed path does.  A key beyond +-inf's is a NaN: the row's extremes are gathered
 * as it is pooled, and a plane with one gives the plane back to the cell path.
 *
 * On a CPU with AVX512-FP16 (nn_cpu_avx512fp16) fp16 runs the same steps on its words instead
 * of keys (`ph`): vcmpph compares them (+0.0 and -0.0 tie, as their keys do), a masked move takes
 * the winner's own word, so the output needs neither the inverse map nor the zero case, and two
 * unordered compares per row step find a NaN.  The bits are the key form's.
 *
 * A row step of 32 windows reads 66 elements from column c0 = 2*ow0 - pW, as four loads (at
 * c0, c0 + 32, c0 + 2, c0 + 34) whose masks are the same for every row and are computed once per
 * plane.  No word crosses a 32-bit lane: window i (0-15) sits in word 2i of the step's vectors,
 * window 16+i in word 2i+1, so each window's first cell is the even element of the first load's
 * lane and the odd one of the second's (a shift and a word blend), its second cell the odd
 * elements, its third the first cell of the loads two columns on.  Only the output puts the
 * windows back in order (one vpermw for the values; the indices of the even and odd words come
 * out as two 16-lane halves by vpermd on the codes).  Elements outside the row load as -inf,
 * which is never taken; the codes start at each window's first cell inside the row.  (A first
 * build split the elements with three vpermt2w per step instead, shuffles that share a port
 * with the mask compares on Intel cores; the two forms were not timed side by side.)
 */
#include "kernels/max_pool/max_pool_fw_avx512.h"

#if NN_HAVE_X86_SIMD
/* 32 windows' pooled key and code (4*dy + dx of the winning cell). */
typedef struct pooled32 {
    __m512i k, c;
} pooled32;

/* Windows 0-15 sit in the even words of a step's vectors, 16-31 in the odd ones; this puts
 * them back in order. */
static const int16_t window_order[32] __attribute__((aligned(64))) = {
    0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};

/* What a plane's steps share. */
#define ROWS16_MAX_STEPS (MP_ROWS16_MAX_WO / 32)
typedef struct rows16_ctx {
    const uint16_t *in;
    int64_t W, pW, Wo, len;
    __m512i fill;      /* -inf's bits */
    __m512i first;     /* the first step's codes before any compare: its first cell inside the row */
    __m512i tab;       /* code 4*dy + dx -> dy*W + dx */
    __m512i hi, lo;    /* the keys' extremes so far */
    __mmask32 nan;     /* ph: the words found NaN so far */
    const __mmask32 (*live)[4]; /* per step: the elements inside the row of its loads at c0, c0 + 32,
                                 * c0 + 2 and c0 + 34 (they do not depend on the row) */
} rows16_ctx;

/* Cell `off` (0, 1, 2: columns c0 + off + 2w) of windows w = 0-15 and 16-31, interleaved:
 * window i's cell in word 2i, window 16+i's in word 2i+1.  Cells 0 and 1 are the even and odd
 * words of the same 64 elements. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i cells_at(const rows16_ctx *x, const uint16_t *row,
                                                                        int64_t c0, int64_t step, int off)
{
    const int at = off & 2;
    const __m512i a = _mm512_mask_loadu_epi16(x->fill, x->live[step][at], row + c0 + at);
    const __m512i b = _mm512_mask_loadu_epi16(x->fill, x->live[step][at | 1], row + c0 + at + 32);
    return off & 1 ? _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(a, 16), b)
                   : _mm512_mask_blend_epi16(0xAAAAAAAAu, a, _mm512_slli_epi32(b, 16));
}

/* a > b: fp16 words with vcmpph (ph), else int16 keys. */
NN_AVX512 static inline __attribute__((always_inline)) __mmask32 greater16(__m512i a, __m512i b, bool ph)
{
    return ph ? ph_greater(a, b) : _mm512_cmpgt_epi16_mask(a, b);
}
/* The best of a and b where m says b is greater: with keys their maximum (equal keys are equal
 * values); with fp16 words the winner's own word, so a signed zero stays the winner's. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i take16(__m512i a, __m512i b, __mmask32 m, bool ph)
{
    return ph ? _mm512_mask_mov_epi16(a, m, b) : _mm512_max_epi16(a, b);
}

/* 32 windows of input row r from column c0 = 2*j0 - pW: cells 0 and 1 are the even and odd
 * elements of 64, cell 2 the even ones of the 64 two columns on; no word crosses a lane.  ph:
 * the cells are the fp16 words themselves and two unordered compares find a NaN among them. */
NN_AVX512 static inline __attribute__((always_inline)) pooled32 row_step32(rows16_ctx *x, int64_t r, int64_t j0,
                                                                           bool ph)
{
    const int64_t W = x->W, c0 = 2 * j0 - x->pW, step = j0 / 32;
    const uint16_t *row = x->in + r * W;
    __m512i k0 = cells_at(x, row, c0, step, 0), k1 = cells_at(x, row, c0, step, 1), k2 = cells_at(x, row, c0, step, 2);
    if (ph) {
        x->nan |= ph_unordered(k0, k1) | ph_unordered(k2, k2);
    } else {
        k0 = key16(k0), k1 = key16(k1), k2 = key16(k2);
        x->lo = _mm512_min_epi16(x->lo, _mm512_min_epi16(_mm512_min_epi16(k0, k1), k2));
    }
    const __mmask32 m1 = greater16(k1, k0, ph);
    pooled32 p;
    p.k = take16(k0, k1, m1, ph);
    const __mmask32 m2 = greater16(k2, p.k, ph);
    p.k = take16(p.k, k2, m2, ph);
    if (!ph) x->hi = _mm512_max_epi16(x->hi, p.k);
    p.c = _mm512_mask_blend_epi16(m1, j0 == 0 ? x->first : _mm512_setzero_si512(), _mm512_set1_epi16(1));
    p.c = _mm512_mask_mov_epi16(p.c, m2, _mm512_set1_epi16(2));
    return p;
}

/* p (the window's row dy) taken over best where greater. */
NN_AVX512 static inline __attribute__((always_inline)) pooled32 take32(pooled32 best, pooled32 p, int dy, bool ph)
{
    const __mmask32 m = greater16(p.k, best.k, ph);
    best.k = take16(best.k, p.k, m, ph);
    best.c = _mm512_mask_add_epi16(best.c, m, p.c, _mm512_set1_epi16((int16_t)(4 * dy)));
    return best;
}

NN_AVX512 static inline __attribute__((always_inline)) void store32(pooled32 p, int16_t *slot, int64_t len, int64_t j0)
{
    _mm512_store_si512(slot + j0, p.k);
    _mm512_store_si512(slot + len + j0, p.c);
}
NN_AVX512 static inline __attribute__((always_inline)) pooled32 load32(const int16_t *slot, int64_t len, int64_t j0)
{
    return (pooled32){_mm512_load_si512(slot + j0), _mm512_load_si512(slot + len + j0)};
}

/* Outputs j0 .. j0+31 of the row whose windows' first row inside the plane is h. */
NN_AVX512 static inline __attribute__((always_inline)) void store_out32(const rows16_ctx *x, pooled32 best, int64_t h,
                                                                        int64_t j0, uint16_t *val, int32_t *arg,
                                                                        bool ph)
{
    const int64_t Wo = x->Wo;
    const __mmask32 outs = Wo - j0 >= 32 ? ~(__mmask32)0 : (__mmask32)nn_lane_range(0, Wo - j0, 32);
    const __m512i lanes2 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)lane_words)), 1);
    const __m512i base = _mm512_add_epi32(lanes2, _mm512_set1_epi32((int32_t)(h * x->W + 2 * j0 - x->pW)));
    /* vpermd reads the low 4 bits of each lane: the low word's code */
    const __m512i lo = _mm512_permutexvar_epi32(best.c, x->tab);
    const __m512i hi = _mm512_permutexvar_epi32(_mm512_srli_epi32(best.c, 16), x->tab);
    _mm512_mask_storeu_epi32(arg + j0, (__mmask16)outs, _mm512_add_epi32(base, lo));
    _mm512_mask_storeu_epi32(arg + j0 + 16, (__mmask16)(outs >> 16),
                             _mm512_add_epi32(base, _mm512_add_epi32(hi, _mm512_set1_epi32(32))));
    const __m512i k = _mm512_permutexvar_epi16(_mm512_load_si512(window_order), best.k);
    if (ph) { /* the winners' words */
        _mm512_mask_storeu_epi16(val + j0, outs, k);
        return;
    }
    _mm512_mask_storeu_epi16(val + j0, outs, unkey16(k));
    /* a zero best is +0.0 or -0.0: the winner's own word */
    for (uint32_t zero = (uint32_t)(_mm512_testn_epi16_mask(k, k) & outs); zero; zero &= zero - 1) {
        const int o = __builtin_ctz(zero);
        val[j0 + o] = x->in[arg[j0 + o]];
    }
}

NN_AVX512 static inline bool has_nan(const rows16_ctx *x, int16_t inf_bits, bool ph)
{
    if (ph) return x->nan != 0;
    return _mm512_cmpgt_epi16_mask(x->hi, _mm512_set1_epi16(inf_bits)) |
           _mm512_cmplt_epi16_mask(x->lo, _mm512_set1_epi16((int16_t)-inf_bits));
}

/* (Both work on a local copy of the context: the stores could alias it.) */
NN_AVX512 static inline __attribute__((always_inline)) void input_row16(rows16_ctx *ctx, int64_t r, int16_t *slot,
                                                                        bool ph)
{
    rows16_ctx c = *ctx, *x = &c;
    for (int64_t j0 = 0; j0 < x->len; j0 += 32) store32(row_step32(x, r, j0, ph), slot, x->len, j0);
    ctx->hi = c.hi, ctx->lo = c.lo, ctx->nan = c.nan;
}

/* An output row of whole windows from r0 (pooled, in s0): r0+1 and r0+2 pooled in registers,
 * r0+2 stored into s2. */
NN_AVX512 static inline __attribute__((always_inline)) void fused16(rows16_ctx *ctx, int64_t r0, const int16_t *s0,
                                                                    int16_t *s2, uint16_t *val, int32_t *arg, bool ph)
{
    rows16_ctx c = *ctx, *x = &c;
    for (int64_t j0 = 0; j0 < x->len; j0 += 32) {
        const pooled32 h1 = row_step32(x, r0 + 1, j0, ph), h2 = row_step32(x, r0 + 2, j0, ph);
        const pooled32 best = take32(take32(load32(s0, x->len, j0), h1, 1, ph), h2, 2, ph);
        store32(h2, s2, x->len, j0);
        store_out32(x, best, r0, j0, val, arg, ph);
    }
    ctx->hi = c.hi, ctx->lo = c.lo, ctx->nan = c.nan;
}

NN_AVX512 static inline __attribute__((always_inline)) bool rows16_plane(const fw_plane_io *io,
                                                                         const mp_geometry *geometry,
                                                                         aclDataType dtype, bool ph)
{
    const mp_geometry local = *geometry, *g = &local;
    const int16_t inf_bits = dtype == ACL_FLOAT16 ? 0x7C00 : 0x7F80;
    const int64_t W = g->width, Wo = g->out_width, Ho = g->out_height;
    rows16_ctx x;
    x.in = (const uint16_t *)io->in;
    x.W = W, x.pW = g->pad_w, x.Wo = Wo, x.len = (Wo + 31) / 32 * 32;
    x.fill = _mm512_set1_epi16((int16_t)(0x8000 | inf_bits));
    /* with pW = 1 the first window's first cell inside the row is its second */
    x.first = _mm512_maskz_mov_epi16((__mmask32)(g->pad_w > 0), _mm512_set1_epi16(1));
    int32_t tab[16] = {0};
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) tab[4 * dy + dx] = (int32_t)(dy * W + dx);
    x.tab = _mm512_loadu_si512(tab);
    __mmask32 live[ROWS16_MAX_STEPS][4];
    for (int64_t j0 = 0; j0 < x.len; j0 += 32)
        for (int at = 0; at < 4; ++at)
            live[j0 / 32][at] = (__mmask32)step_lanes(2 * j0 - g->pad_w + (at & 2) + (at & 1) * 32, W, 32);
    x.live = (const __mmask32 (*)[4])live;
    x.hi = _mm512_set1_epi16((int16_t)-inf_bits), x.lo = _mm512_set1_epi16(inf_bits), x.nan = 0;
    int16_t *slots = (int16_t *)io->keys; /* input row r's pooled row in slot r % 3: keys, then codes */
    row_shares sh = shares_of(io, g, 2);
    int64_t pooled = 0;
    for (int64_t oh = 0; oh < Ho; ++oh) {
        const window_rows wr = rows_of(g, oh);
        int16_t *s[3];
        for (int64_t k = 0; k < wr.rows; ++k) s[k] = slots + (wr.h_lo + k) % 3 * 2 * x.len;
        uint16_t *val = (uint16_t *)io->values + oh * Wo;
        int32_t *arg = io->argmax + oh * Wo;
        if (wr.rows == 3 && pooled == wr.h_lo + 1) {
            shares_before_row(io, &sh);
            fused16(&x, wr.h_lo, s[0], s[2], val, arg, ph);
            pooled = wr.h_lo + 3;
            if (has_nan(&x, inf_bits, ph)) return false;
            shares_after_row(io, &sh, oh, Ho, Wo, 2);
            continue;
        }
        for (int64_t k = 0; k < wr.rows; ++k)
            if (wr.h_lo + k >= pooled) input_row16(&x, wr.h_lo + k, s[k], ph);
        pooled = wr.h_lo + wr.rows;
        if (has_nan(&x, inf_bits, ph)) return false;
        shares_before_row(io, &sh);
        for (int64_t j0 = 0; j0 < Wo; j0 += 32) {
            pooled32 best = load32(s[0], x.len, j0);
            for (int64_t k = 1; k < wr.rows; ++k) best = take32(best, load32(s[k], x.len, j0), (int)k, ph);
            store_out32(&x, best, wr.h_lo, j0, val, arg, ph);
        }
        shares_after_row(io, &sh, oh, Ho, Wo, 2);
    }
    return true;
}

NN_AVX512 static bool rows16_plane_keys(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    return rows16_plane(io, g, dtype, false);
}
NN_AVX512 static bool rows16_plane_ph(const fw_plane_io *io, const mp_geometry *g) /* fp16 on AVX512-FP16 */
{
    return rows16_plane(io, g, ACL_FLOAT16, true);
}

bool nn_mp_fw_rows16_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    return dtype == ACL_FLOAT16 && nn_cpu_avx512fp16() ? rows16_plane_ph(io, g) : rows16_plane_keys(io, g, dtype);
}
#endif /* NN_HAVE_X86_SIMD */
