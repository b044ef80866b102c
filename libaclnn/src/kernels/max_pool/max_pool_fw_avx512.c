/*
 * max_pool_fw_avx512.c - the max-pool forward's plane kernel with AVX-512 (max_pool_fw.h), for
 * strides 1 and 2 along the row, in fp32, fp16 or bf16: for planes without NaN in a window,
 * the paired path for 2x2 stride-2 windows (max_pool_fw_pairs_avx512.c), the pooled-rows path for
 * 3x3 stride-2 windows (max_pool_fw_rows_avx512.c, max_pool_fw_rows16_avx512.c) and the keyed path for the other
 * geometries (below, "The keyed path"); the cell path for the rest, described here.
 * The cell path: 16 outputs of a row per vector, straight from the input (no widened copy of
 * the plane, no gather of the winners).
 *
 * For each output row, each block of 16 outputs visits its window cells in PyTorch's order
 * (kh outer, kw inner).  Cell b of the 16 windows is row[ow*sW + b - pW] for the 16 ow: one load
 * (stride 1) or 32 consecutive elements whose even ones are taken (stride 2).  Elements outside
 * the row are not read; they load as -inf, which is never taken (-inf > best is false and it is
 * not a NaN), so they act as the portable kernel's skipped cells.  A cell is taken when it is
 * greater than the running best or NaN, on the fp32 value (fp16/bf16 widened exactly); the
 * raw element of the winner is carried along with the best (fp32 and bf16: the best's own bits,
 * bf16's top half; fp16, whose widening quiets a signalling NaN: the 16-bit word, selected with
 * the same mask), so the output is the winner's bits, as
 * the portable kernel's gather gives.  The running best starts at -inf with the raw bits of -inf
 * and the index of the first in-range cell: a window of -inf cells keeps both, which is what the
 * portable kernel's gather of that cell gives.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_fw_avx512.h"

#if NN_HAVE_X86_SIMD
/* Widest window the kernel takes (a row of cell masks on the stack); wider ones run portable. */
#define MAX_KERNEL_W 16

/* The 16 cells row[col + s*lane] (s = 1 or 2) of one window cell for a block of 16 outputs, as
 * fp32 values and (16-bit dtypes) raw words; `live` marks the elements row[col + j] inside the
 * row (j < 16 * s). */
typedef struct cells16 {
    __m512 value;
    __m256i raw;
} cells16;

NN_AVX512 static inline __attribute__((always_inline)) cells16 load_cells(const unsigned char *row, int64_t col,
                                                                          int stride, uint32_t live,
                                                                          aclDataType dtype)
{
    cells16 c;
    const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
    if (dtype == ACL_FLOAT) {
        const float *p = (const float *)row + col;
        if (stride == 1) {
            c.value = _mm512_mask_loadu_ps(neg_inf, (__mmask16)live, p);
        } else {
            const __m512 lo = _mm512_mask_loadu_ps(neg_inf, (__mmask16)live, p);
            const __m512 hi = _mm512_mask_loadu_ps(neg_inf, (__mmask16)(live >> 16), p + 16);
            c.value = _mm512_permutex2var_ps(lo, _mm512_load_si512(even_lanes), hi);
        }
        c.raw = _mm256_setzero_si256();
        return c;
    }
    const uint16_t *p = (const uint16_t *)row + col;
    const int16_t inf_bits = dtype == ACL_FLOAT16 ? (int16_t)0xFC00 : (int16_t)0xFF80;
    if (dtype == ACL_BF16) {
        /* bf16 -> fp32 is a shift, so the best's top half is the winner's word: no raw word is
         * carried.  Stride 2: the shift also drops each pair's odd element. */
        c.raw = _mm256_setzero_si256();
        if (stride == 1) {
            const __m256i words = _mm256_mask_loadu_epi16(_mm256_set1_epi16(inf_bits), (__mmask16)live, p);
            c.value = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(words), 16));
        } else {
            const __m512i words = _mm512_mask_loadu_epi16(_mm512_set1_epi16(inf_bits), (__mmask32)live, p);
            c.value = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
        }
        return c;
    }
    if (stride == 1) {
        c.raw = _mm256_mask_loadu_epi16(_mm256_set1_epi16(inf_bits), (__mmask16)live, p);
    } else {
        const __m512i words = _mm512_mask_loadu_epi16(_mm512_set1_epi16(inf_bits), (__mmask32)live, p);
        c.raw = _mm512_cvtepi32_epi16(words); /* the low word of each pair: the even elements */
    }
    c.value = _mm512_cvtph_ps(c.raw);
    return c;
}

/* One output row's blocks of 16 for one dtype and stride (constants after inlining). */
NN_AVX512 static inline __attribute__((always_inline)) void pool_row(const unsigned char *in, const mp_geometry *g,
                                                                     int64_t oh, int stride, aclDataType dtype,
                                                                     int32_t *arg_row, unsigned char *val_row)
{
    const int64_t H = g->height, W = g->width, Wo = g->out_width, pW = g->pad_w;
    const size_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t ih0 = oh * g->stride_h - g->pad_h;
    const int64_t h_lo = ih0 < 0 ? 0 : ih0;
    const int64_t h_hi = ih0 + g->kernel_h < H ? ih0 + g->kernel_h : H;
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i lane_step = _mm512_mullo_epi32(lane, _mm512_set1_epi32(stride));
    const int64_t span = 16 * (int64_t)stride; /* elements a block's loads cover */
    for (int64_t ow0 = 0; ow0 < Wo; ow0 += 16) {
        const __mmask16 outs = (__mmask16)nn_lane_range(0, Wo - ow0, 16);
        /* first in-range cell of each window: column max(ow*s - pW, 0) of row h_lo */
        const __m512i iw0 = _mm512_add_epi32(lane_step, _mm512_set1_epi32((int32_t)(ow0 * stride - pW)));
        __m512i arg = _mm512_add_epi32(_mm512_max_epi32(iw0, _mm512_setzero_si512()),
                                       _mm512_set1_epi32((int32_t)(h_lo * W)));
        __m512 best = _mm512_set1_ps(-__builtin_inff());
        __m256i raw = _mm256_set1_epi16(dtype == ACL_FLOAT16 ? (int16_t)0xFC00 : (int16_t)0xFF80);
        uint32_t live[MAX_KERNEL_W]; /* the elements of each cell column inside the row */
        for (int64_t b = 0; b < g->kernel_w; ++b) {
            const int64_t col = ow0 * stride + b - pW;
            live[b] = nn_lane_range(-col, W - col, span);
        }
        for (int64_t ih = h_lo; ih < h_hi; ++ih) {
            const unsigned char *row = in + ih * W * (int64_t)elem;
            for (int64_t b = 0; b < g->kernel_w; ++b) {
                const int64_t col = ow0 * stride + b - pW;
                if (live[b] == 0) continue;
                const cells16 c = load_cells(row, col, stride, live[b], dtype);
                const __mmask16 take =
                    _mm512_cmp_ps_mask(c.value, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c.value, c.value, _CMP_UNORD_Q);
                best = _mm512_mask_blend_ps(take, best, c.value);
                if (dtype == ACL_FLOAT16) raw = _mm256_mask_blend_epi16(take, raw, c.raw);
                const __m512i at = _mm512_add_epi32(lane_step, _mm512_set1_epi32((int32_t)(ih * W + col)));
                arg = _mm512_mask_blend_epi32(take, arg, at);
            }
        }
        _mm512_mask_storeu_epi32(arg_row + ow0, outs, arg);
        if (dtype == ACL_FLOAT)
            _mm512_mask_storeu_ps((float *)val_row + ow0, outs, best);
        else if (dtype == ACL_FLOAT16)
            _mm256_mask_storeu_epi16((uint16_t *)val_row + ow0, outs, raw);
        else
            _mm256_mask_storeu_epi16((uint16_t *)val_row + ow0, outs,
                                     _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(best), 16)));
    }
}

/* Pools a plane; while it does, the next plane's input (`next`, NULL for none) is prefetched
 * into L2 in even shares per output row, so a single thread keeps enough reads in flight, and
 * `zero_lines` cache lines from `zeros` (64-byte aligned) are zeroed with streaming stores in
 * even shares per row, so the mask's zero tail goes out while the rows are computed. */
NN_AVX512 static inline __attribute__((always_inline)) void pool_plane(const unsigned char *in, const unsigned char *next,
                                                                       const mp_geometry *g, int stride,
                                                                       aclDataType dtype, int32_t *argmax,
                                                                       unsigned char *values, unsigned char *zeros,
                                                                       int64_t zero_lines)
{
    const int64_t Wo = g->out_width, Ho = g->out_height;
    const size_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t lines = next ? (g->height * g->width * (int64_t)elem + 63) / 64 : 0;
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t oh = 0; oh < Ho; ++oh) {
        for (int64_t line = oh * lines / Ho; line < (oh + 1) * lines / Ho; ++line)
            _mm_prefetch((const char *)next + line * 64, _MM_HINT_T1);
        for (int64_t line = oh * zero_lines / Ho; line < (oh + 1) * zero_lines / Ho; ++line)
            _mm512_stream_si512((void *)(zeros + line * 64), zero);
        pool_row(in, g, oh, stride, dtype, argmax + oh * Wo, values + oh * Wo * (int64_t)elem);
    }
}

/* ---- The keyed path ----------------------------------------------------------------------
 * For the usual geometries (stride 1 or 2 along the row, at most 32 window cells, a kernel at
 * most 16 wide) the plane is first rewritten, one input row at a time, into "key rows": for
 * stride 2 the even and the odd columns apart, for stride 1 the row itself, each padded with
 * -inf on both sides.  Cell (dy, dx) of the windows ow0 .. ow0+L-1 is then one unaligned load
 * key_row(ih0 + dy, dx % s)[ow0 + dx / s]: no shuffle, no lane mask, no edge case.  fp32 keys
 * are the floats; fp16/bf16 keys are int16 in value order (sign-magnitude to two's complement,
 * -0.0 and +0.0 both 0), so 32 outputs are compared per vector with an integer compare.  Per
 * cell: a compare, the best taken and the cell's number taken (0 .. kH*kW-1) under its mask;
 * after the window the number gives the plane-local index through a 32-entry table
 * (dy*W + dx) and the best key gives the value back.  The order and the strict compare are the
 * cell path's, so without NaNs the same cell wins.  A NaN anywhere in the plane (seen while the
 * keys are built) sends the plane to the cell path above, which takes NaNs by the rule; an
 * fp16/bf16 window whose best key is 0 (+0.0 or -0.0) reads its value at the winner's index. */

#define KEY_CELLS 32    /* cell numbers fit one vpermt2d table */
#define KEY_MAX_KW 16   /* dx / s < 16: the padding after a key row covers it */

/* Lanes per vector: 16 fp32 keys, 32 int16 keys.  A key row holds the Wo + (kW-1)/s keys the
 * outputs read, rounded up to whole vectors; a step's lanes past Wo may read the next row's
 * keys (or, in the last row, the L spare keys after the plane's rows), and their results are
 * not stored. */
static inline int64_t key_lanes(aclDataType dtype) { return dtype == ACL_FLOAT ? 16 : 32; }
static inline int64_t key_row_len(const mp_geometry *g, aclDataType dtype)
{
    const int64_t L = key_lanes(dtype);
    return (g->out_width + (g->kernel_w - 1) / g->stride_w + L - 1) / L * L;
}
static inline bool keyed_geometry(const mp_geometry *g)
{
    return (g->stride_w == 1 || g->stride_w == 2) && g->kernel_w <= KEY_MAX_KW &&
           g->kernel_h * g->kernel_w <= KEY_CELLS;
}

int64_t nn_mp_fw_keys_bytes(const mp_geometry *g, aclDataType dtype)
{
    if (!keyed_geometry(g)) return 0;
    const int64_t keys = (g->height * g->stride_w * key_row_len(g, dtype) + 2 * key_lanes(dtype)) * (dtype == ACL_FLOAT ? 4 : 2);
    /* the pooled-rows path uses the same scratch */
    return mp_rows3_geometry(g, dtype) && mp_rows3_bytes(g) > keys ? mp_rows3_bytes(g) : keys;
}

/* Builds input row ih's key rows (phase r at keys + (ih*s + r) * len); hi/lo gather the keys'
 * extremes (a NaN's key lies beyond +-inf's). */
NN_AVX512 static inline __attribute__((always_inline)) void build_row16(const uint16_t *in, const mp_geometry *g,
                                                                        int64_t ih, int s, int16_t inf_bits,
                                                                        int16_t *keys, int64_t len, __m512i *hi,
                                                                        __m512i *lo)
{
    const int64_t W = g->width, pW = g->pad_w;
    const __m512i fill = _mm512_set1_epi16((int16_t)(0x8000 | inf_bits)); /* -inf */
    const __m512i even = _mm512_load_si512(even_words), odd = _mm512_add_epi16(even, _mm512_set1_epi16(1));
    const uint16_t *row = in + ih * W;
    int16_t *k = keys + ih * s * len;
    for (int64_t j0 = 0; j0 < len; j0 += 32) {
        const int64_t c0 = s * j0 - pW; /* the first column this step reads */
        const __m512i a = key16(_mm512_mask_loadu_epi16(fill, (__mmask32)step_lanes(c0, W, 32), row + c0));
        if (s == 1) {
            *hi = _mm512_max_epi16(*hi, a);
            *lo = _mm512_min_epi16(*lo, a);
            _mm512_store_si512(k + j0, a);
            continue;
        }
        const __m512i b = key16(_mm512_mask_loadu_epi16(fill, (__mmask32)step_lanes(c0 + 32, W, 32), row + c0 + 32));
        *hi = _mm512_max_epi16(*hi, _mm512_max_epi16(a, b));
        *lo = _mm512_min_epi16(*lo, _mm512_min_epi16(a, b));
        _mm512_store_si512(k + j0, _mm512_permutex2var_epi16(a, even, b));
        _mm512_store_si512(k + len + j0, _mm512_permutex2var_epi16(a, odd, b));
    }
}

/* The same for fp32 (keys are the values); hi gathers the largest magnitude's bits. */
NN_AVX512 static inline __attribute__((always_inline)) void build_row32(const float *in, const mp_geometry *g,
                                                                        int64_t ih, int s, float *keys, int64_t len,
                                                                        __m512i *hi)
{
    const int64_t W = g->width, pW = g->pad_w;
    const __m512 fill = _mm512_set1_ps(-__builtin_inff());
    const __m512i even = _mm512_load_si512(even_lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
    const float *row = in + ih * W;
    float *k = keys + ih * s * len;
    for (int64_t j0 = 0; j0 < len; j0 += 16) {
        const int64_t c0 = s * j0 - pW;
        const __m512 a = _mm512_mask_loadu_ps(fill, (__mmask16)step_lanes(c0, W, 16), row + c0);
        *hi = _mm512_max_epu32(*hi, _mm512_and_si512(_mm512_castps_si512(a), magnitude));
        if (s == 1) {
            _mm512_store_ps(k + j0, a);
            continue;
        }
        const __m512 b = _mm512_mask_loadu_ps(fill, (__mmask16)step_lanes(c0 + 16, W, 16), row + c0 + 16);
        *hi = _mm512_max_epu32(*hi, _mm512_and_si512(_mm512_castps_si512(b), magnitude));
        _mm512_store_ps(k + j0, _mm512_permutex2var_ps(a, even, b));
        _mm512_store_ps(k + len + j0, _mm512_permutex2var_ps(a, odd, b));
    }
}

/* The cells' numbers as vectors: 16-bit lanes (fp16/bf16 keys) and 32-bit lanes (fp32). */
#define REP4(x) x, x, x, x
#define REP16(x) REP4(x), REP4(x), REP4(x), REP4(x)
#define IDS(row) row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7), row(8), row(9), row(10), row(11), \
    row(12), row(13), row(14), row(15), row(16), row(17), row(18), row(19), row(20), row(21), row(22), row(23),     \
    row(24), row(25), row(26), row(27), row(28), row(29), row(30), row(31)
#define ROW16(c) {REP16(c), REP16(c)}
#define ROW32(c) {REP16(c)}
static const int16_t cell_ids16[KEY_CELLS][32] __attribute__((aligned(64))) = {IDS(ROW16)};
static const int32_t cell_ids32[KEY_CELLS][16] __attribute__((aligned(64))) = {IDS(ROW32)};

/* What every row of a keyed plane uses: the cells' numbers (cell_ids16 or cell_ids32), the index table (cell c = dy*kW + dx of a window at (ih0, iw0) is
 * ih0*W + iw0 + tab[c]), the first in-range column of the first step's windows and s*lane. */
typedef struct key_consts {
    const __m512i *cell_ids;
    __m512i tab_lo, tab_hi;
    __m512i first_dx; /* max(pW - s*ow, 0) for ow = lane (the later steps' are 0: pW < 16 <= s*ow) */
    __m512i lane_step;
} key_consts;

NN_AVX512 static inline __attribute__((always_inline)) void key_consts_init(key_consts *kc, const mp_geometry *g,
                                                                            int s, int kw, bool wide_ids)
{
    int32_t tab[KEY_CELLS] __attribute__((aligned(64)));
    for (int c = 0; c < KEY_CELLS; ++c) tab[c] = (int32_t)((c / kw) * g->width + c % kw);
    kc->cell_ids = wide_ids ? (const __m512i *)cell_ids32 : (const __m512i *)cell_ids16;
    kc->tab_lo = _mm512_load_si512(tab);
    kc->tab_hi = _mm512_load_si512(tab + 16);
    const __m512i lanes = _mm512_load_si512(lane_words);
    const __m512i dx = _mm512_max_epi16(
        _mm512_sub_epi16(_mm512_set1_epi16((int16_t)g->pad_w), _mm512_mullo_epi16(lanes, _mm512_set1_epi16((int16_t)s))),
        _mm512_setzero_si512());
    kc->first_dx = wide_ids ? _mm512_cvtepi16_epi32(_mm512_castsi512_si256(dx)) : dx;
    kc->lane_step = _mm512_mullo_epi32(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(lanes)), _mm512_set1_epi32(s));
}

/* The window cells of `rows` key rows from k (row r's phase p at k + (r*s + p)*len), ids the
 * numbers of the first row's cells: take a cell when its key is greater than the best. */
#define KEY_CELLS_LOOP(T, load, gt, mov, mov_id)                                                                     \
    for (int64_t r = 0; r < rows; ++r)                                                                               \
        for (int dx = 0; dx < kw; ++dx) {                                                                            \
            const T v = load(k + (r * s + dx % s) * len + dx / s);                                                   \
            const __mmask32 take = gt(v, *best);                                                                     \
            *best = mov(*best, take, v);                                                                             \
            *id = mov_id(*id, take, _mm512_load_si512(ids + r * kw + dx));                                           \
        }

#define GT16(a, b) _mm512_cmpgt_epi16_mask(a, b)
#define GT32(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define MOV32(a, m, b) _mm512_mask_mov_ps(a, (__mmask16)(m), b)
#define MOVID32(a, m, b) _mm512_mask_mov_epi32(a, (__mmask16)(m), b)
NN_AVX512 static inline __attribute__((always_inline)) void key_cells16(const int16_t *k, int64_t len, int s, int kw,
                                                                    int64_t rows, const __m512i *ids, __m512i *best,
                                                                    __m512i *id)
{
    KEY_CELLS_LOOP(__m512i, _mm512_loadu_si512, GT16, _mm512_mask_mov_epi16, _mm512_mask_mov_epi16)
}
NN_AVX512 static inline __attribute__((always_inline)) void key_cells32(const float *k, int64_t len, int s, int kw,
                                                                    int64_t rows, const __m512i *ids, __m512 *best,
                                                                    __m512i *id)
{
    KEY_CELLS_LOOP(__m512, _mm512_loadu_ps, GT32, MOV32, MOVID32)
}

/* One output row from int16 keys, 32 outputs per step; s, kw and kh are constants after
 * inlining (kh 0: any), and the rows of a full window run with a constant count. */
NN_AVX512 static inline __attribute__((always_inline)) void key_row16(const int16_t *keys, int64_t len,
                                                                      const mp_geometry *g, window_rows wr, int s, int kw,
                                                                      int kh, int16_t ninf_key, const key_consts *kc,
                                                                      const uint16_t *in, int32_t *arg_row,
                                                                      uint16_t *val_row)
{
    const int64_t W = g->width, Wo = g->out_width;
    const int16_t *k0 = keys + wr.h_lo * s * len;
    const __m512i *ids = kc->cell_ids + (wr.h_lo - wr.ih0) * kw;
    const __m512i id_row = _mm512_set1_epi16((int16_t)((wr.h_lo - wr.ih0) * kw));
    __m512i base = _mm512_add_epi32(kc->lane_step, _mm512_set1_epi32((int32_t)(wr.ih0 * W - g->pad_w)));
    for (int64_t ow0 = 0; ow0 < Wo; ow0 += 32) {
        __m512i best = _mm512_set1_epi16(ninf_key);
        __m512i id = ow0 == 0 ? _mm512_add_epi16(kc->first_dx, id_row) : id_row;
        if (kh && wr.rows == kh)
            key_cells16(k0 + ow0, len, s, kw, kh, ids, &best, &id);
        else
            key_cells16(k0 + ow0, len, s, kw, wr.rows, ids, &best, &id);
        const __mmask32 outs = Wo - ow0 >= 32 ? ~(__mmask32)0 : (__mmask32)nn_lane_range(0, Wo - ow0, 32);
        const __m512i idx_lo = _mm512_add_epi32(
            base, _mm512_permutex2var_epi32(kc->tab_lo, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(id)), kc->tab_hi));
        const __m512i idx_hi = _mm512_add_epi32(
            _mm512_add_epi32(base, _mm512_set1_epi32(16 * s)),
            _mm512_permutex2var_epi32(kc->tab_lo, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(id, 1)), kc->tab_hi));
        base = _mm512_add_epi32(base, _mm512_set1_epi32(32 * s));
        _mm512_mask_storeu_epi32(arg_row + ow0, (__mmask16)outs, idx_lo);
        _mm512_mask_storeu_epi32(arg_row + ow0 + 16, (__mmask16)(outs >> 16), idx_hi);
        _mm512_mask_storeu_epi16(val_row + ow0, outs, unkey16(best));
        /* a zero best is +0.0 or -0.0: the winner's own word */
        for (uint32_t zero = (uint32_t)(_mm512_testn_epi16_mask(best, best) & outs); zero; zero &= zero - 1) {
            const int o = __builtin_ctz(zero);
            val_row[ow0 + o] = in[arg_row[ow0 + o]];
        }
    }
}

/* One output row from fp32 keys, 16 outputs per step. */
NN_AVX512 static inline __attribute__((always_inline)) void key_row32(const float *keys, int64_t len,
                                                                      const mp_geometry *g, window_rows wr, int s, int kw,
                                                                      int kh, const key_consts *kc, int32_t *arg_row,
                                                                      float *val_row)
{
    const int64_t W = g->width, Wo = g->out_width;
    const float *k0 = keys + wr.h_lo * s * len;
    const __m512i *ids = kc->cell_ids + (wr.h_lo - wr.ih0) * kw;
    const __m512i id_row = _mm512_set1_epi32((int32_t)((wr.h_lo - wr.ih0) * kw));
    __m512i base = _mm512_add_epi32(kc->lane_step, _mm512_set1_epi32((int32_t)(wr.ih0 * W - g->pad_w)));
    for (int64_t ow0 = 0; ow0 < Wo; ow0 += 16) {
        __m512 best = _mm512_set1_ps(-__builtin_inff());
        __m512i id = ow0 == 0 ? _mm512_add_epi32(kc->first_dx, id_row) : id_row;
        if (kh && wr.rows == kh)
            key_cells32(k0 + ow0, len, s, kw, kh, ids, &best, &id);
        else
            key_cells32(k0 + ow0, len, s, kw, wr.rows, ids, &best, &id);
        const __mmask16 outs = Wo - ow0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)nn_lane_range(0, Wo - ow0, 16);
        _mm512_mask_storeu_epi32(arg_row + ow0, outs,
                                 _mm512_add_epi32(base, _mm512_permutex2var_epi32(kc->tab_lo, id, kc->tab_hi)));
        _mm512_mask_storeu_ps(val_row + ow0, outs, best);
        base = _mm512_add_epi32(base, _mm512_set1_epi32(16 * s));
    }
}

/* The keyed plane.  Each output row builds the key rows it is the first to need, then pools;
 * the row shares (above) run between rows, so the memory traffic runs under the computation.
 * False for a plane with a NaN (the rows built so far hold none; the caller redoes the plane on
 * the cell path). */
NN_AVX512 static inline __attribute__((always_inline)) bool key_plane(const fw_plane_io *io, const mp_geometry *geometry,
                                                                      int s, int kw, int kh, aclDataType dtype)
{
    /* a local copy: the stores below (streaming, memcpy) could otherwise alias it, and every row
     * would reload the geometry */
    const mp_geometry local = *geometry, *g = &local;
    const int64_t H = g->height, Wo = g->out_width, Ho = g->out_height, len = key_row_len(g, dtype);
    const int64_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int16_t inf_bits = dtype == ACL_FLOAT16 ? 0x7C00 : 0x7F80;
    key_consts kc;
    key_consts_init(&kc, g, s, kw, dtype == ACL_FLOAT);
    /* the spare keys after the last row: defined, never taken */
    unsigned char *spare = (unsigned char *)io->keys + H * s * len * elem;
    const __m512i spare_keys =
        dtype == ACL_FLOAT ? _mm512_set1_epi32((int32_t)0xFF800000) : _mm512_set1_epi16((int16_t)-inf_bits);
    _mm512_storeu_si512(spare, spare_keys);
    _mm512_storeu_si512(spare + 64, spare_keys);
    row_shares sh = shares_of(io, g, elem);
    __m512i hi = _mm512_setzero_si512(), lo = hi;
    int64_t built = 0;
    for (int64_t oh = 0; oh < Ho; ++oh) {
        const window_rows wr = rows_of(g, oh);
        for (; built < wr.h_lo + wr.rows; ++built) {
            if (dtype == ACL_FLOAT)
                build_row32((const float *)io->in, g, built, s, (float *)io->keys, len, &hi);
            else
                build_row16((const uint16_t *)io->in, g, built, s, inf_bits, (int16_t *)io->keys, len, &hi, &lo);
        }
        if (dtype == ACL_FLOAT ? _mm512_cmpgt_epu32_mask(hi, _mm512_set1_epi32(0x7F800000))
                               : _mm512_cmpgt_epi16_mask(hi, _mm512_set1_epi16(inf_bits)) |
                                     _mm512_cmplt_epi16_mask(lo, _mm512_set1_epi16((int16_t)-inf_bits)))
            return false;
        shares_before_row(io, &sh);
        if (dtype == ACL_FLOAT)
            key_row32((const float *)io->keys, len, g, wr, s, kw, kh, &kc, io->argmax + oh * Wo,
                      (float *)io->values + oh * Wo);
        else
            key_row16((const int16_t *)io->keys, len, g, wr, s, kw, kh, (int16_t)-inf_bits, &kc,
                      (const uint16_t *)io->in, io->argmax + oh * Wo, (uint16_t *)io->values + oh * Wo);
        shares_after_row(io, &sh, oh, Ho, Wo, elem);
    }
    return true;
}


#define POOL_PLANE_VARIANT(name, stride, dtype)                                                                      \
    NN_AVX512 static void name(const unsigned char *in, const unsigned char *next, const mp_geometry *g,            \
                               int32_t *argmax, unsigned char *values, unsigned char *zeros, int64_t zero_lines)     \
    {                                                                                                                \
        pool_plane(in, next, g, stride, dtype, argmax, values, zeros, zero_lines);                                  \
    }
POOL_PLANE_VARIANT(plane_f32_s1, 1, ACL_FLOAT)
POOL_PLANE_VARIANT(plane_f32_s2, 2, ACL_FLOAT)
POOL_PLANE_VARIANT(plane_f16_s1, 1, ACL_FLOAT16)
POOL_PLANE_VARIANT(plane_f16_s2, 2, ACL_FLOAT16)
POOL_PLANE_VARIANT(plane_bf16_s1, 1, ACL_BF16)
POOL_PLANE_VARIANT(plane_bf16_s2, 2, ACL_BF16)

/* Keyed variants: 2x2 and 3x3 windows (the usual pools) with constant loops, any other window
 * up to KEY_CELLS cells with counted loops. */
#define KEY_PLANE_VARIANT(name, stride, k_const, dtype)                                                              \
    NN_AVX512 static bool name(const fw_plane_io *io, const mp_geometry *g)                                          \
    {                                                                                                                \
        return key_plane(io, g, stride, k_const ? k_const : (int)g->kernel_w, k_const, dtype);                       \
    }
#define KEY_PLANE_DTYPE(suffix, dtype)                                                                               \
    KEY_PLANE_VARIANT(keys_##suffix##_s1, 1, 0, dtype)                                                               \
    KEY_PLANE_VARIANT(keys_##suffix##_s2, 2, 0, dtype)                                                               \
    KEY_PLANE_VARIANT(keys_##suffix##_s2k2, 2, 2, dtype)                                                             \
    KEY_PLANE_VARIANT(keys_##suffix##_s2k3, 2, 3, dtype)                                                             \
    KEY_PLANE_VARIANT(keys_##suffix##_s1k3, 1, 3, dtype)
KEY_PLANE_DTYPE(f32, ACL_FLOAT)
KEY_PLANE_DTYPE(f16, ACL_FLOAT16)
KEY_PLANE_DTYPE(bf16, ACL_BF16)


typedef bool (*key_plane_fn)(const fw_plane_io *, const mp_geometry *);

static key_plane_fn pick_key_plane(const mp_geometry *g, aclDataType dtype)
{
    static const key_plane_fn fns[3][5] = {
        {keys_f32_s1, keys_f32_s2, keys_f32_s2k2, keys_f32_s2k3, keys_f32_s1k3},
        {keys_f16_s1, keys_f16_s2, keys_f16_s2k2, keys_f16_s2k3, keys_f16_s1k3},
        {keys_bf16_s1, keys_bf16_s2, keys_bf16_s2k2, keys_bf16_s2k3, keys_bf16_s1k3}};
    const int d = dtype == ACL_FLOAT ? 0 : dtype == ACL_FLOAT16 ? 1 : 2;
    const int square = g->kernel_h == g->kernel_w ? (int)g->kernel_w : 0;
    if (g->stride_w == 1) return fns[d][square == 3 ? 4 : 0];
    return fns[d][square == 2 ? 2 : square == 3 ? 3 : 1];
}

int nn_mp_fw_plane_avx512(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    if ((g->stride_w != 1 && g->stride_w != 2) || g->kernel_w > MAX_KERNEL_W) return MP_PLANE_NOT_TAKEN;
    if (io->keys && keyed_geometry(g) &&
        (nn_mp_fw_pair_geometry(g) ? nn_mp_fw_pairs_plane(io, g, dtype)
         : mp_rows3_geometry(g, dtype) ? nn_mp_fw_rows3_plane(io, g, dtype)
                                       : pick_key_plane(g, dtype)(io, g)))
        return io->out_nt ? MP_PLANE_WRITTEN : MP_PLANE_POOLED;
    const unsigned char *in = io->in, *next = io->next;
    int32_t *argmax = io->argmax;
    unsigned char *values = io->values, *zeros = io->zeros;
    const int64_t zero_lines = io->zero_lines;
    const bool s1 = g->stride_w == 1;
    if (dtype == ACL_FLOAT)
        (s1 ? plane_f32_s1 : plane_f32_s2)(in, next, g, argmax, values, zeros, zero_lines);
    else if (dtype == ACL_FLOAT16)
        (s1 ? plane_f16_s1 : plane_f16_s2)(in, next, g, argmax, values, zeros, zero_lines);
    else
        (s1 ? plane_bf16_s1 : plane_bf16_s2)(in, next, g, argmax, values, zeros, zero_lines);
    return MP_PLANE_POOLED;
}
#else /* not x86-64: never chosen, defined for the link */
int64_t nn_mp_fw_keys_bytes(const mp_geometry *g, aclDataType dtype)
{
    (void)g, (void)dtype;
    return 0;
}
int nn_mp_fw_plane_avx512(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype)
{
    (void)io, (void)g, (void)dtype;
    return MP_PLANE_NOT_TAKEN;
}
#endif /* NN_HAVE_X86_SIMD */
