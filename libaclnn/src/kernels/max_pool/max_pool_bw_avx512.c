/*
 * max_pool_bw_avx512.c - the MaxPool2dWithMask backward's AVX-512 fast paths (max_pool_bw.h):
 * the 2x2 stride-2 direct write and the 3x3 stride-2 slots.  Compiled with the AVX-512 flags
 * (Makefile); run only when the plan's tiled_2x2 / slots_3x3s2 flags are set, which phase 1
 * sets from nn_cpu_avx512().
 */
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_bw.h"

#if NN_HAVE_X86_SIMD
/* ------------------------------------------------------------------------------------------ */
/* 2x2 windows with stride 2 (no padding): direct write                                        */
/* ------------------------------------------------------------------------------------------ */

/* With kernel == stride == 2 and no padding, input cell (ih, iw) lies in exactly one window,
 * (ih / 2, iw / 2), or in none (the last row/column when H/W is odd and ceilMode is off).  If
 * every index lies in its own window, each gradInput element has at most one contribution, and
 *   gradInput[ih, iw] = (index[ih/2, iw/2] == ih*W + iw) ? 0.0f + grad[ih/2, iw/2] : 0.0f
 * (the 0.0f + turns -0.0f into +0.0f, as the scatter's add onto a cleared tile does), so the
 * plane is produced row pair by row pair, 16 outputs (32 cells per row) per step, without a
 * tile or a read-modify-write, and streamed out in small bands.
 *
 * Each output matches at most one cell, and only a cell of its own window inside the plane;
 * the plane is accepted only if all Ho*Wo outputs matched.  Otherwise (a mask not written by the
 * forward with these arguments) it is redone by the scatter, which accepts any index in the plane
 * and reports the others. */


/* Stores 32 cells, lo then hi, at row[c0..] (those in `keep`) in the dtype.  A 2x2-path cell is
 * +0.0 or 0.0f + one gradient of the dtype, so narrowing is exact: for fp16 the conversion, for
 * bf16 the top half of the fp32 (the add has already quieted a signalling NaN, as the rounding
 * would). */
static const uint16_t tiled_top_halves[32] __attribute__((aligned(64))) = {
    1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
    33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};

NN_AVX512 static inline __attribute__((always_inline)) void store_cells32(unsigned char *row, int64_t c0,
                                                                           __mmask32 keep, __m512 lo, __m512 hi,
                                                                           aclDataType dtype)
{
    if (dtype == ACL_FLOAT) {
        _mm512_mask_storeu_ps((float *)row + c0, (__mmask16)keep, lo);
        _mm512_mask_storeu_ps((float *)row + c0 + 16, (__mmask16)(keep >> 16), hi);
        return;
    }
    __m512i words;
    if (dtype == ACL_BF16)
        words = _mm512_permutex2var_epi16(_mm512_castps_si512(lo), _mm512_load_si512(tiled_top_halves),
                                          _mm512_castps_si512(hi));
    else
        words = _mm512_inserti64x4(_mm512_castsi256_si512(nn512_round_f16(lo)), nn512_round_f16(hi), 1);
    _mm512_mask_storeu_epi16((uint16_t *)row + c0, keep, words);
}

/* Cells [c0, c0 + 32) of input rows 2oh (row0) and 2oh+1 (row1, NULL past the plane) from 16
 * outputs whose grad/rel (index - (2oh*W + 2ow)) are g/rel, each spread to its two columns;
 * `cells`: the cells inside a window, `keep`: inside the row.  Returns the matches. */
NN_AVX512 static inline __attribute__((always_inline)) int64_t
tiled_2x2_block(unsigned char *row0, unsigned char *row1, __m512 g, __m512i rel, int64_t c0, __mmask32 cells,
                __mmask32 keep, int64_t W, aclDataType dtype)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i dup_lo = _mm512_srli_epi32(lane, 1), dup_hi = _mm512_add_epi32(dup_lo, _mm512_set1_epi32(8));
    const __m512i parity = _mm512_and_si512(lane, _mm512_set1_epi32(1));
    const __m512 g_lo = _mm512_permutexvar_ps(dup_lo, g), g_hi = _mm512_permutexvar_ps(dup_hi, g);
    const __m512i rel_lo = _mm512_permutexvar_epi32(dup_lo, rel), rel_hi = _mm512_permutexvar_epi32(dup_hi, rel);
    const __m512 zero = _mm512_setzero_ps();
    int64_t matches = 0;
    for (int r = 0; r < 2; ++r) {
        unsigned char *row = r == 0 ? row0 : row1;
        if (!row) break;
        const __m512i at = r == 0 ? parity : _mm512_add_epi32(parity, _mm512_set1_epi32((int32_t)W));
        const __mmask16 hit_lo = _mm512_mask_cmpeq_epi32_mask((__mmask16)cells, rel_lo, at);
        const __mmask16 hit_hi = _mm512_mask_cmpeq_epi32_mask((__mmask16)(cells >> 16), rel_hi, at);
        store_cells32(row, c0, keep, _mm512_maskz_add_ps(hit_lo, zero, g_lo), _mm512_maskz_add_ps(hit_hi, zero, g_hi),
                      dtype);
        matches += __builtin_popcount((unsigned)hit_lo | ((unsigned)hit_hi << 16));
    }
    return matches;
}

/* Writes one plane of gradInput; false (plane partly written) when some index lies outside its
 * own window.  Inlined into one copy per dtype. */
NN_AVX512 static inline __attribute__((always_inline)) bool
tiled_2x2_rows(const bw_plan *p, unsigned char *gi, const unsigned char *grad, const unsigned char *mask,
               float *scratch, aclDataType dtype)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(dtype);
    const int64_t cell_end = W < 2 * Wo ? W : 2 * Wo; /* cells inside a window: c < cell_end */
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    nn_line_stage st = {stage_buffer(scratch, W, STAGE_FLUSH_BYTES), gi, 0, p->stream_stores};
    int64_t matches = 0;
    for (int64_t ih = 0; ih < H; ih += 2) {
        unsigned char *row0 = nn_line_stage_at(&st, ih * W * elem);
        unsigned char *row1 = ih + 1 < H ? nn_line_stage_at(&st, (ih + 1) * W * elem) : NULL;
        const int64_t oh = ih / 2;
        if (oh < Ho) {
            const unsigned char *grow = grad + oh * Wo * elem;
            const unaligned_i32 *irow = index + oh * Wo;
            for (int64_t ow0 = 0; ow0 < Wo; ow0 += 16) {
                const int64_t n = Wo - ow0 < 16 ? Wo - ow0 : 16;
                const __mmask16 live = (__mmask16)((1u << n) - 1u);
                /* The streams are read at one cache line per step; fetch 1 KiB ahead (across the
                 * end of the plane into the next one: a prefetch past a buffer does not fault). */
                _mm_prefetch((const char *)(irow + ow0) + 1024, _MM_HINT_T0);
                _mm_prefetch((const char *)(grow + ow0 * elem) + 1024, _MM_HINT_T0);
                const __m512 gv = nn512_load_f32(grow, ow0, live, dtype);
                const __m512i base = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(ih * W + 2 * ow0)),
                                                      _mm512_slli_epi32(lane, 1));
                const __m512i rel =
                    _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live, (const void *)(irow + ow0)), base);
                const int64_t c0 = 2 * ow0;
                if (c0 + 32 <= cell_end) /* all 32 cells inside windows (and the row) */
                    matches += tiled_2x2_block(row0, row1, gv, rel, c0, 0xFFFFFFFFu, 0xFFFFFFFFu, W, dtype);
                else
                    matches += tiled_2x2_block(row0, row1, gv, rel, c0, (__mmask32)nn_lane_range(0, cell_end - c0, 32),
                                               (__mmask32)nn_lane_range(0, W - c0, 32), W, dtype);
            }
            tiled_zero_uncovered(row0, row1, cell_end, W, elem); /* odd W, ceilMode off: the last column */
        } else { /* odd H, ceilMode off: no window */
            tiled_zero_uncovered(row0, row1, 0, W, elem);
        }
        const int64_t done = (ih + 2 < H ? ih + 2 : H) * W * elem;
        if (done - st.written >= STAGE_FLUSH_BYTES) nn512_line_stage_flush(&st, done, false);
    }
    nn512_line_stage_flush(&st, H * W * elem, true);
    return matches == Ho * Wo;
}

bool nn_mp_bw_tiled_2x2_plane_avx512(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                        const unsigned char *mask, float *scratch)
{
    if (p->dtype == ACL_FLOAT) return tiled_2x2_rows(p, gi, grad, mask, scratch, ACL_FLOAT);
    if (p->dtype == ACL_BF16) return tiled_2x2_rows(p, gi, grad, mask, scratch, ACL_BF16);
    return tiled_2x2_rows(p, gi, grad, mask, scratch, ACL_FLOAT16);
}

/* ------------------------------------------------------------------------------------------ */
/* 3x3 windows with stride 2 (padding 0 or 1): slots                                           */
/* ------------------------------------------------------------------------------------------ */

/* With a 3x3 kernel and stride 2, window (oh, ow) covers rows 2oh-pH .. 2oh-pH+2 and columns
 * 2ow-pW .. 2ow-pW+2.  Pair the columns in "slots": slot j holds the shared column 2j-pW (the
 * last column of window j-1 and the first of window j) and the private column 2j-pW+1 (window j
 * only); rows pair the same way.  An index from the forward names a cell of its own window,
 * rel = index - ((2oh-pH)*W + 2ow-pW) = dy*W + dx with dy, dx in 0..2, so 16 outputs of a window
 * row are handled in 16 lanes with no scatter at all:
 *   shared cell of slot j  += g(j-1) where output j-1 has dx = 2,  then g(j) where j has dx = 0
 *   private cell of slot j += g(j) where output j has dx = 1
 * (output j-1's gradient and index shifted in from the lane before), in the row dy names.  Each
 * window row finishes its shared row 2oh-pH (begun by the previous window row's dy = 2 cells,
 * kept in `pending`) and its private row 2oh-pH+1, and begins the next shared row.  So a cell
 * receives its gradients in increasing output position - (oh-1, ow-1), (oh-1, ow), (oh, ow-1),
 * (oh, ow) - which is the scatter's order: the result is bit-identical to it (and for fp32 to
 * PyTorch's).  Adds are masked and start from +0.0, so an untouched cell stays +0.0 and a lone
 * -0.0 becomes +0.0, as with the tile.
 *
 * The finished rows' shared and private cells are interleaved back to column order (and rounded
 * once for fp16/bf16) in the same permute, staged in L1 and written out a few cache lines at a
 * time, whole lines of gradInput (streamed when the plan says so).
 *
 * Per 16 outputs this is 12 compares, 9 masked adds, 2 interleaving permutes per finished row
 * and a 5-instruction validity check: 2-3 cycles per output with the data in L2, where the
 * scatter takes 6-10 (docs/kernels_max_pool.md).
 *
 * Every index is checked: each output must name a cell of its window inside the plane.  If one
 * does not (a mask not written by the forward with these arguments), the plane is redone by the
 * scatter, which accepts any index in the plane and reports the others. */

/* The slot kernels are compiled with AVX512-BF16 enabled so that one body serves every variant;
 * only the bf16 `pairs` variants execute a BF16 instruction (vcvtne2ps2bf16, in
 * nn512_round_bf16_pair_normal), and they are called only when nn_cpu_avx512bf16(). */
#define SLOT_TARGET NN_AVX512BF16

/* Masks of the 16 slots from j0 on: which lanes have an output j (live) and j-1 (live_prev),
 * which have an output j whose window cell at dx is inside the row (cell_live[dx]: an index
 * naming any other cell is invalid), and which of the 32 cells from column 2*j0 - pW on are
 * inside the row (keep). */
typedef struct slot_block {
    __mmask16 live, live_prev, cell_live[3];
    bool whole;             /* every live output's window lies inside the row */
    bool full;              /* whole, and all 16 outputs, their j-1 and all 32 cells live */
    __mmask32 keep;
} slot_block;

static slot_block slot_block_at(int64_t j0, int64_t W, int64_t Wo, int64_t pad_w)
{
    slot_block b;
    b.live = (__mmask16)nn_lane_range(-j0, Wo - j0, 16);
    b.live_prev = (__mmask16)nn_lane_range(1 - j0, Wo + 1 - j0, 16);
    for (int64_t dx = 0; dx < 3; ++dx) { /* 0 <= 2j - pW + dx < W */
        const int64_t lo = pad_w > dx ? 1 : 0, hi = nn_floor_div(W - 1 + pad_w - dx, 2) + 1;
        b.cell_live[dx] = (__mmask16)(b.live & nn_lane_range(lo - j0, hi - j0, 16));
    }
    b.whole = b.cell_live[0] == b.live && b.cell_live[1] == b.live && b.cell_live[2] == b.live;
    const int64_t c0 = 2 * j0 - pad_w;
    b.keep = (__mmask32)nn_lane_range(-c0, W - c0, 32);
    b.full = b.whole && b.live == 0xFFFF && b.live_prev == 0xFFFF && b.keep == (__mmask32)~0u;
    return b;
}

/* One plane's state while its window rows are added. */
typedef struct slot_plane {
    int64_t H, W, Ho, Wo, pad_h, pad_w, slots;
    float *pending_shared, *pending_private; /* the next shared row, as slots (fp32) */
    slot_block *blocks;                      /* per 16 slots, computed once per plane */
    int64_t elem;                            /* bytes of a gradOutput / gradInput element */
    nn_line_stage out;                       /* finished cells */
    __mmask16 bad;                           /* an output whose index is not a cell of its window */
} slot_plane;

/* acc + g in the lanes of k (acc elsewhere), acc being the first operand: when both are NaN the
 * sum is acc's NaN (quieted), as in the scatter's tile[i] += g and PyTorch's.  The operands are
 * fixed in assembly because a compiler may swap those of an add it sees (same number, but not
 * the same NaN). */
#define SLOT_ADD_ASM "vaddps %[g], %[acc], %[acc]%{%[k]%}"
#define SLOT_START_ASM "vaddps %[g], %[zero], %[acc]%{%[k]%}%{z%}"
SLOT_TARGET static inline __m512 slot_add(__m512 acc, __mmask16 k, __m512 g)
{
    __asm__(SLOT_ADD_ASM : [acc] "+v"(acc) : [g] "v"(g), [k] "Yk"(k));
    return acc;
}

/* +0.0 + g in the lanes of k, +0.0 elsewhere: a cell's first gradient (a lone -0.0 becomes +0.0,
 * a NaN is quieted, as in the scatter).  One zero-masked add; GCC builds the intrinsic's form
 * from a zeroed register, a move and a merge-masked add. */
SLOT_TARGET static inline __m512 slot_start(__mmask16 k, __m512 g)
{
    __m512 acc;
    const __m512 zero = _mm512_setzero_ps();
    __asm__(SLOT_START_ASM : [acc] "=v"(acc) : [g] "v"(g), [zero] "v"(zero), [k] "Yk"(k));
    return acc;
}

/* bf16 `pairs` kernels round with vcvtne2ps2bf16, which would flush a subnormal sum to zero.
 * Gradients that are 0 or at least 2^-118 in magnitude are multiples of 2^-125 (bf16 keeps 8
 * significant bits), and so is every fp32 partial sum of them (a sum is exact below 2^-102 and
 * otherwise rounds to a multiple of its ulp, >= 2^-125): their sums are 0 or at least 2^-125,
 * never subnormal.  A plane holding a gradient in (0, 2^-118) is rounded with the integer code
 * instead (both give the same bits on every normal sum).  Checked once per plane, 32 words at a
 * time: 0 < magnitude < 2^-118 is a bf16 exponent field below 9. */
SLOT_TARGET static bool slot_tiny_gradients(const uint16_t *grad, int64_t count)
{
    const __m512i magnitude_bits = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
    const __m512i below = _mm512_set1_epi16((9 << 7) - 1);
    __mmask32 tiny = 0;
    for (int64_t at = 0; at < count; at += 32) {
        const __mmask32 live = count - at >= 32 ? (__mmask32)~0u : (__mmask32)((1u << (count - at)) - 1u);
        const __m512i m = _mm512_and_si512(_mm512_maskz_loadu_epi16(live, grad + at), magnitude_bits);
        tiny |= _mm512_mask_cmplt_epu16_mask(live, _mm512_sub_epi16(m, one), below);
    }
    return tiny != 0;
}

static const uint16_t slot_words_bf16[32] __attribute__((aligned(64))) = {
    0, 32, 2, 34, 4, 36, 6, 38, 8, 40, 10, 42, 12, 44, 14, 46,
    16, 48, 18, 50, 20, 52, 22, 54, 24, 56, 26, 58, 28, 60, 30, 62};
static const uint16_t slot_words_f16[32] __attribute__((aligned(64))) = {
    0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
    8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
static const uint16_t slot_words_pair[32] __attribute__((aligned(64))) = {
    0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
    8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};


/* Interleaves 16 slots' shared cells s and private cells q into 32 cells in column order and
 * stores those in `keep` at dst, rounded to the dtype (bf16 `pairs`: both at once, for cells
 * known not to be subnormal). */
SLOT_TARGET static inline __attribute__((always_inline)) void store_slot_cells(unsigned char *dst, __m512 s, __m512 q,
                                                                               __mmask32 keep, aclDataType dtype,
                                                                               bool pairs)
{
    if (dtype == ACL_FLOAT) {
        const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(8));
        _mm512_mask_storeu_ps(dst, (__mmask16)keep, _mm512_permutex2var_ps(s, low, q));
        _mm512_mask_storeu_ps(dst + 64, (__mmask16)(keep >> 16), _mm512_permutex2var_ps(s, high, q));
        return;
    }
    __m512i words;
    if (dtype == ACL_BF16 && pairs)
        words = _mm512_permutexvar_epi16(_mm512_load_si512(slot_words_pair), nn512_round_bf16_pair_normal(s, q));
    else if (dtype == ACL_BF16) /* each bf16 in the low half of its lane */
        words = _mm512_permutex2var_epi16(nn512_round_bf16_lanes(s), _mm512_load_si512(slot_words_bf16),
                                          nn512_round_bf16_lanes(q));
    else
        words = _mm512_permutex2var_epi16(_mm512_castsi256_si512(nn512_round_f16(s)),
                                          _mm512_load_si512(slot_words_f16),
                                          _mm512_castsi256_si512(nn512_round_f16(q)));
    _mm512_mask_storeu_epi16(dst, keep, words);
}

/* Each cell of a 3x3 window as its offset from the window's first cell, dy*W + dx, in 16 lanes
 * (what the indices relative to their window are compared with). */
typedef struct window_cells {
    __m512i at0, at1, at2, at_w0, at_w1, at_w2, at_2w0, at_2w1, at_2w2;
} window_cells;

SLOT_TARGET static inline __attribute__((always_inline)) window_cells window_cells_for(int64_t W)
{
    const __m512i row_step = _mm512_set1_epi32((int32_t)W), at1 = _mm512_set1_epi32(1), at2 = _mm512_set1_epi32(2);
    const __m512i at_2w0 = _mm512_add_epi32(row_step, row_step);
    return (window_cells){_mm512_setzero_si512(), at1, at2,
                          row_step, _mm512_add_epi32(row_step, at1), _mm512_add_epi32(row_step, at2),
                          at_2w0, _mm512_add_epi32(at_2w0, at1), _mm512_add_epi32(at_2w0, at2)};
}

/* What the blocks of one window row share (built once per row; always inlined, so it lives in
 * registers). */
typedef struct slot_row {
    const unsigned char *grow;            /* the window row's gradients */
    const unaligned_i32 *irow;            /* and indices */
    float *pending_shared, *pending_private;
    unsigned char *shared_row, *private_row; /* staged cell rows top and top + 1 (NULL: outside) */
    int64_t pad_w, elem;
    bool nearest_ok;                      /* W >= 3: rel - {0, W, 2W} has one value in 0..2 at most */
    __mmask16 rows_live, top_gate, middle_gate, bottom_gate;
    window_cells cell;
} slot_row;

/* The previous block's gradients and indices (for lane 0's j-1), and the invalid outputs seen. */
typedef struct slot_carry {
    __m512 g_last;
    __m512i rel_last;
    __mmask16 bad;
} slot_carry;

/* Every live output must name a cell of its window inside the plane.  With all three cell rows
 * inside (inner rows) and W >= 3, rel is valid when dx = min(rel, rel - W, rel - 2W) (unsigned)
 * is at most 2 and column dx of the window is inside the row (cell_live[dx]; only blocks that
 * are not `whole` need that test).  Edge rows compare with each of the cells that are inside. */
SLOT_TARGET static inline __attribute__((always_inline)) __mmask16
slot_invalid(const slot_row *r, const slot_block *b, __m512i rel, __mmask16 live, __mmask16 cell0, __mmask16 cell1,
             __mmask16 cell2, bool edge, bool full)
{
    if (!edge && (full || r->nearest_ok)) {
        const __m512i dx = _mm512_min_epu32(rel, _mm512_min_epu32(_mm512_sub_epi32(rel, r->cell.at_w0),
                                                                   _mm512_sub_epi32(rel, r->cell.at_2w0)));
        if (full) return _mm512_cmpgt_epu32_mask(dx, r->cell.at2);
        __mmask16 invalid = _mm512_mask_cmpgt_epu32_mask(live, dx, r->cell.at2);
        if (!b->whole)
            invalid |= _mm512_mask_cmpeq_epi32_mask((__mmask16)(live & ~cell0), dx, r->cell.at0) |
                       _mm512_mask_cmpeq_epi32_mask((__mmask16)(live & ~cell1), dx, r->cell.at1) |
                       _mm512_mask_cmpeq_epi32_mask((__mmask16)(live & ~cell2), dx, r->cell.at2);
        return invalid;
    }
    const __mmask16 top0 = cell0 & r->top_gate, top1 = cell1 & r->top_gate, top2 = cell2 & r->top_gate;
    const __mmask16 mid0 = cell0 & r->middle_gate, mid1 = cell1 & r->middle_gate, mid2 = cell2 & r->middle_gate;
    const __mmask16 bot0 = cell0 & r->bottom_gate, bot1 = cell1 & r->bottom_gate, bot2 = cell2 & r->bottom_gate;
    const __mmask16 named =
        _mm512_mask_cmpeq_epi32_mask(top0, rel, r->cell.at0) | _mm512_mask_cmpeq_epi32_mask(top1, rel, r->cell.at1) |
        _mm512_mask_cmpeq_epi32_mask(top2, rel, r->cell.at2) | _mm512_mask_cmpeq_epi32_mask(mid0, rel, r->cell.at_w0) |
        _mm512_mask_cmpeq_epi32_mask(mid1, rel, r->cell.at_w1) | _mm512_mask_cmpeq_epi32_mask(mid2, rel, r->cell.at_w2) |
        _mm512_mask_cmpeq_epi32_mask(bot0, rel, r->cell.at_2w0) | _mm512_mask_cmpeq_epi32_mask(bot1, rel, r->cell.at_2w1) |
        _mm512_mask_cmpeq_epi32_mask(bot2, rel, r->cell.at_2w2);
    return (__mmask16)(live & ~named);
}

/* Slots [j0, j0 + 16) of a window row, whose windows start at cells `origin`.  `full`: all 16
 * outputs and their j-1 live, every window inside the row and all 32 cells kept - the masks are
 * then constants, which spares the loads of the block's masks (port 5 bounds this loop). */
SLOT_TARGET static inline __attribute__((always_inline)) void
slot_block_step(const slot_row *r, const slot_block *b, int64_t j0, __m512i origin, slot_carry *carry,
                aclDataType dtype, bool edge, bool pairs, bool full)
{
    __mmask16 live = full ? 0xFFFF : b->live, live_prev = full ? 0xFFFF : b->live_prev;
    __mmask16 cell0 = full ? 0xFFFF : b->cell_live[0], cell1 = full ? 0xFFFF : b->cell_live[1],
              cell2 = full ? 0xFFFF : b->cell_live[2];
    const __mmask32 keep = full ? (__mmask32)~0u : b->keep;
    if (edge) {
        live &= r->rows_live, live_prev &= r->rows_live;
        cell0 &= r->rows_live, cell1 &= r->rows_live, cell2 &= r->rows_live;
    }
    const __m512 g = nn512_load_f32(r->grow, j0, live, dtype);
    /* lane l: output j-1's gradient (fp32: loaded again, which costs no shuffle) */
    const __m512 g_prev = dtype == ACL_FLOAT ? nn512_load_f32(r->grow, j0 - 1, live_prev, dtype)
                                             : _mm512_castsi512_ps(_mm512_alignr_epi32(
                                                   _mm512_castps_si512(g), _mm512_castps_si512(carry->g_last), 15));
    carry->g_last = g;
    /* rel: the index relative to the window's first cell; output j-1's window starts 2 earlier */
    const __m512i rel = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live, (const void *)(r->irow + j0)), origin);
    const __m512i rel_prev = _mm512_alignr_epi32(rel, carry->rel_last, 15); /* j-1's, from its own window */
    carry->rel_last = rel;
    carry->bad |= slot_invalid(r, b, rel, live, cell0, cell1, cell2, edge, full);
    /* row top: the pending cells, then this window row's dy = 0 */
    /* (the gradients go where the index says; a cell outside the plane is never stored) */
    __m512 shared = _mm512_loadu_ps(r->pending_shared + j0);
    __m512 private = _mm512_loadu_ps(r->pending_private + j0);
    shared = slot_add(shared, _mm512_mask_cmpeq_epi32_mask(live_prev, rel_prev, r->cell.at2), g_prev);
    shared = slot_add(shared, _mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at0), g);
    private = slot_add(private, _mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at1), g);
    if (!edge || r->shared_row)
        store_slot_cells(r->shared_row + (2 * j0 - r->pad_w) * r->elem, shared, private, keep, dtype, pairs);
    /* row top + 1: dy = 1 only */
    shared = slot_start(_mm512_mask_cmpeq_epi32_mask(live_prev, rel_prev, r->cell.at_w2), g_prev);
    shared = slot_add(shared, _mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at_w0), g);
    private = slot_start(_mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at_w1), g);
    if (!edge || r->private_row)
        store_slot_cells(r->private_row + (2 * j0 - r->pad_w) * r->elem, shared, private, keep, dtype, pairs);
    /* row top + 2: dy = 2, finished by the next window row */
    shared = slot_start(_mm512_mask_cmpeq_epi32_mask(live_prev, rel_prev, r->cell.at_2w2), g_prev);
    shared = slot_add(shared, _mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at_2w0), g);
    _mm512_storeu_ps(r->pending_shared + j0, shared);
    _mm512_storeu_ps(r->pending_private + j0, slot_start(_mm512_mask_cmpeq_epi32_mask(live, rel, r->cell.at_2w1), g));
}

/* Adds window row i (gradients grow, indices irow; no outputs when i >= Ho) to the plane:
 * finishes cell rows 2i-pH and 2i-pH+1 into the staging buffer and begins row 2i-pH+2.
 * Inlined into one copy per dtype, and per kind of row: `edge` rows are the first and last
 * ones, whose top or bottom cell row may lie outside the plane. */
SLOT_TARGET static inline __attribute__((always_inline)) void slot_window_row(slot_plane *s, const unsigned char *grow,
                                                                               const unaligned_i32 *irow, int64_t i,
                                                                               aclDataType dtype, bool edge, bool pairs)
{
    const int64_t W = s->W, elem = s->elem, top = 2 * i - s->pad_h;
    /* cell rows inside the plane (top < H for every row pair; top + 1 >= 0 as pH <= 1, but a
     * ceil-mode window may start on the last row) */
    const bool top_in = !edge || top >= 0, middle_in = !edge || top + 1 < s->H, bottom_in = !edge || top + 2 < s->H;
    /* locals: the stores below may alias anything, so fields of *s would be reloaded */
    const slot_row r = {
        grow, irow, s->pending_shared, s->pending_private,
        top_in ? nn_line_stage_at(&s->out, top * W * elem) : NULL,
        middle_in ? nn_line_stage_at(&s->out, (top + 1) * W * elem) : NULL,
        s->pad_w, elem, W >= 3,
        (__mmask16)(!edge || i < s->Ho ? 0xFFFF : 0), (__mmask16)(top_in ? 0xFFFF : 0),
        (__mmask16)(middle_in ? 0xFFFF : 0), (__mmask16)(bottom_in ? 0xFFFF : 0),
        window_cells_for(W)};
    const slot_block *b = s->blocks;
    const int64_t slots = s->slots;
    slot_carry carry = {_mm512_setzero_ps(), _mm512_setzero_si512(), 0};
    /* each lane's window origin: cell top*W + 2j - pW of the plane, for j = j0 + lane */
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i origin = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(top * W - s->pad_w)), _mm512_add_epi32(lane, lane));
    const __m512i block_step = _mm512_set1_epi32(32);
    for (int64_t j0 = 0; j0 < slots; j0 += 16, ++b, origin = _mm512_add_epi32(origin, block_step)) {
        if (!edge && b->full)
            slot_block_step(&r, b, j0, origin, &carry, dtype, edge, pairs, true);
        else
            slot_block_step(&r, b, j0, origin, &carry, dtype, edge, pairs, false);
    }
    s->bad |= carry.bad;
}

/* The prefetches made before window row i: its indices six window rows ahead (into the next
 * plane near the end: a prefetch past the buffer does not fault; 2 rows measured 2-6 % slower for
 * bf16, the same for fp32) and its gradients grad_ahead rows ahead. */
static inline __attribute__((always_inline)) void slot_prefetch_row(const unsigned char *grad,
                                                                    const unaligned_i32 *index, int64_t i,
                                                                    int64_t Wo, int64_t elem, int64_t grad_ahead)
{
    for (int64_t b = 0; b < Wo * 4; b += 64) {
        _mm_prefetch((const char *)(index + (i + 6) * Wo) + b, _MM_HINT_T0);
        if (b < Wo * elem) _mm_prefetch((const char *)(grad + (i + grad_ahead) * Wo * elem) + b, _MM_HINT_T0);
    }
}

/* Adds window rows [i_begin, i_end) to the plane and writes what they finish. */
SLOT_TARGET static inline __attribute__((always_inline)) void slot_rows(slot_plane *s, unsigned char *gi,
                                                                        const unsigned char *grad,
                                                                        const unaligned_i32 *index, int64_t i_begin,
                                                                        int64_t i_end, aclDataType dtype, bool edge,
                                                                        bool pairs)
{
    /* bf16 gradients a whole plane ahead: the next plane's tiny-gradient check reads them all
     * before its first row, and it stalled on memory for ~15 % of the time when they were not */
    const int64_t grad_ahead = dtype == ACL_BF16 ? s->Ho : 2;
    for (int64_t i = i_begin; i < i_end; ++i) {
        slot_prefetch_row(grad, index, i, s->Wo, s->elem, grad_ahead);
        slot_window_row(s, grad + i * s->Wo * s->elem, index + i * s->Wo, i, dtype, edge, pairs);
        const int64_t done = (2 * i - s->pad_h + 2 < s->H ? 2 * i - s->pad_h + 2 : s->H) * s->W;
        if (done * s->elem - s->out.written >= STAGE_FLUSH_BYTES) nn512_line_stage_flush(&s->out, done * s->elem, false);
    }
}

#define SLOT_ROWS_KERNEL(name, dtype, edge, pairs)                                                               \
    SLOT_TARGET static void name(slot_plane *s, unsigned char *gi, const unsigned char *grad,                  \
                                 const unaligned_i32 *index, int64_t i_begin, int64_t i_end)                   \
    {                                                                                                            \
        slot_rows(s, gi, grad, index, i_begin, i_end, dtype, edge, pairs);                                       \
    }
SLOT_ROWS_KERNEL(slot_rows_f32, ACL_FLOAT, false, false)
SLOT_ROWS_KERNEL(slot_rows_f32_edge, ACL_FLOAT, true, false)
SLOT_ROWS_KERNEL(slot_rows_f16, ACL_FLOAT16, false, false)
SLOT_ROWS_KERNEL(slot_rows_f16_edge, ACL_FLOAT16, true, false)
SLOT_ROWS_KERNEL(slot_rows_bf16, ACL_BF16, false, false)
SLOT_ROWS_KERNEL(slot_rows_bf16_edge, ACL_BF16, true, false)
SLOT_ROWS_KERNEL(slot_rows_bf16_pairs, ACL_BF16, false, true)
SLOT_ROWS_KERNEL(slot_rows_bf16_pairs_edge, ACL_BF16, true, true)

/* ---- fp16/bf16 planes whose rows are an odd number of half lines: cells paired to the right ----
 *
 * The ResNet stem's backward (112x112, k3s2p1) spends ~20 % of the slot kernel copying the line
 * stage out, and its rows of 57 slots end in a block with 9 live lanes of 16 that takes the masked
 * path (docs/kernels_max_pool.md).  With pH = pW = 1 this variant
 * pairs each private cell (column 2j, output j's dx = 1) with the shared cell to its right
 * (column 2j + 1: output j's dx = 2, then output j + 1's dx = 0 - the scatter's order, so the same
 * bits).  Slots are then outputs: a row of W = 32n + 16 cells is n full 16-output blocks and one
 * 8-output ymm block, and each block's 32 cells are whole 64-byte pieces of the row.  With the
 * plane on a 64-byte boundary and 2W bytes per row (an odd number of half lines), a window row
 * finishes an odd row, which starts half a line in (its lines are two neighbouring vectors'
 * halves), and an even row, which starts on a line and whose last half line is carried into the
 * next odd row.  So every cell goes from registers straight to whole lines of gradInput, with no
 * stage.  An index naming column -1 or row -1 (padding) or any cell outside its window sends the
 * plane to the scatter, as in the slot kernel. */

static bool next_pairing_fits(const bw_plan *p, const unsigned char *gi, bool bf16_pairs)
{
    const mp_geometry *g = &p->g;
    const bool dtype_fits = p->dtype == ACL_FLOAT16 || (p->dtype == ACL_BF16 && bf16_pairs);
    return dtype_fits && g->pad_h == 1 && g->pad_w == 1 && g->height % 2 == 0 && g->width % 32 == 16 &&
           g->width >= 48 && g->out_height == g->height / 2 && g->out_width == g->width / 2 &&
           ((uintptr_t)gi & 63u) == 0;
}

/* The ymm forms of slot_add / slot_start (the same operand order, for the same NaN). */
SLOT_TARGET static inline __m256 next_add8(__m256 acc, __mmask8 k, __m256 g)
{
    __asm__(SLOT_ADD_ASM : [acc] "+v"(acc) : [g] "v"(g), [k] "Yk"(k));
    return acc;
}

SLOT_TARGET static inline __m256 next_start8(__mmask8 k, __m256 g)
{
    __m256 acc;
    const __m256 zero = _mm256_setzero_ps();
    __asm__(SLOT_START_ASM : [acc] "=v"(acc) : [g] "v"(g), [zero] "v"(zero), [k] "Yk"(k));
    return acc;
}

/* 16 slots' private and shared cells rounded to the dtype and interleaved: the 32 cells of
 * columns 2j, 2j + 1, ... in order (bf16 only for sums known not to be subnormal). */
SLOT_TARGET static inline __attribute__((always_inline)) __m512i next_round_pair(__m512 private_cells,
                                                                                  __m512 shared_cells,
                                                                                  aclDataType dtype)
{
    if (dtype == ACL_FLOAT16)
        return _mm512_permutex2var_epi16(_mm512_castsi256_si512(nn512_round_f16(private_cells)),
                                         _mm512_load_si512(slot_words_f16),
                                         _mm512_castsi256_si512(nn512_round_f16(shared_cells)));
    return _mm512_permutexvar_epi16(_mm512_load_si512(slot_words_pair),
                                    nn512_round_bf16_pair_normal(private_cells, shared_cells));
}

SLOT_TARGET static inline __attribute__((always_inline)) __m256i next_round_pair8(__m256 private_cells,
                                                                                   __m256 shared_cells,
                                                                                   aclDataType dtype)
{
    if (dtype == ACL_FLOAT16) {
        /* The rounding is written out, not held in a const int: clang requires an integer
         * constant expression there, which a const variable is not in C. */
        const __m128i q = _mm256_maskz_cvtps_ph(0xff, private_cells,
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                      s = _mm256_maskz_cvtps_ph(0xff, shared_cells,
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        return _mm256_set_m128i(_mm_unpackhi_epi16(q, s), _mm_unpacklo_epi16(q, s));
    }
    static const uint16_t words[16] __attribute__((aligned(32))) = {0, 8, 1, 9, 2, 10, 3, 11,
                                                                     4, 12, 5, 13, 6, 14, 7, 15};
    const __m256bh bh = _mm256_cvtne2ps_pbh(shared_cells, private_cells);
    __m256i bits;
    __builtin_memcpy(&bits, &bh, sizeof bits);
    return _mm256_permutexvar_epi16(_mm256_load_si256((const __m256i *)words), bits);
}

SLOT_TARGET static inline void next_put(unsigned char *dst, __m512i line, bool stream)
{
    if (stream) _mm512_stream_si512((void *)dst, line);
    else _mm512_store_si512((void *)dst, line);
}

/* The 16 outputs of one full block: g / rel and the next outputs' g_n / rel_n (shifted in).
 * Returns the odd (top) row's and the even (middle) row's 32 cells; the bottom row goes to the
 * pending halves.  `first`: lane 0 is output 0, whose dx = 0 names column -1. */
SLOT_TARGET static inline __attribute__((always_inline)) __mmask16
next_block(const window_cells *c, __m512 g, __m512i rel, __m512 g_n, __m512i rel_n, float *pend_q, float *pend_s,
           bool first, bool top_row_0, aclDataType dtype, __m512i *top, __m512i *mid)
{
    const __m512i dx = _mm512_min_epu32(rel, _mm512_min_epu32(_mm512_sub_epi32(rel, c->at_w0),
                                                               _mm512_sub_epi32(rel, c->at_2w0)));
    __mmask16 bad = _mm512_cmpgt_epu32_mask(dx, c->at2);
    if (first) bad |= _mm512_mask_cmpeq_epi32_mask(1, dx, c->at0);
    if (top_row_0) bad |= _mm512_cmplt_epu32_mask(rel, c->at_w0);
    __m512 q = slot_add(_mm512_loadu_ps(pend_q), _mm512_cmpeq_epi32_mask(rel, c->at1), g);
    __m512 s = slot_add(_mm512_loadu_ps(pend_s), _mm512_cmpeq_epi32_mask(rel, c->at2), g);
    s = slot_add(s, _mm512_cmpeq_epi32_mask(rel_n, c->at0), g_n);
    *top = next_round_pair(q, s, dtype);
    q = slot_start(_mm512_cmpeq_epi32_mask(rel, c->at_w1), g);
    s = slot_start(_mm512_cmpeq_epi32_mask(rel, c->at_w2), g);
    s = slot_add(s, _mm512_cmpeq_epi32_mask(rel_n, c->at_w0), g_n);
    *mid = next_round_pair(q, s, dtype);
    _mm512_storeu_ps(pend_q, slot_start(_mm512_cmpeq_epi32_mask(rel, c->at_2w1), g));
    s = slot_start(_mm512_cmpeq_epi32_mask(rel, c->at_2w2), g);
    _mm512_storeu_ps(pend_s, slot_add(s, _mm512_cmpeq_epi32_mask(rel_n, c->at_2w0), g_n));
    return bad;
}

/* The row's last 8 outputs (their next output does not exist: lane 7's g_n is masked off). */
SLOT_TARGET static inline __attribute__((always_inline)) __mmask8
next_block8(const window_cells *c, __m256 g, __m256i rel, __m256 g_n, __m256i rel_n, float *pend_q, float *pend_s,
            bool top_row_0, aclDataType dtype, __m256i *top, __m256i *mid)
{
#define NEXT_AT(v) _mm512_castsi512_si256(c->v)
    const __mmask8 has_next = 0x7f;
    const __m256i dx = _mm256_min_epu32(rel, _mm256_min_epu32(_mm256_sub_epi32(rel, NEXT_AT(at_w0)),
                                                               _mm256_sub_epi32(rel, NEXT_AT(at_2w0))));
    __mmask8 bad = _mm256_cmpgt_epu32_mask(dx, NEXT_AT(at2));
    if (top_row_0) bad |= _mm256_cmplt_epu32_mask(rel, NEXT_AT(at_w0));
    __m256 q = next_add8(_mm256_loadu_ps(pend_q), _mm256_cmpeq_epi32_mask(rel, NEXT_AT(at1)), g);
    __m256 s = next_add8(_mm256_loadu_ps(pend_s), _mm256_cmpeq_epi32_mask(rel, NEXT_AT(at2)), g);
    s = next_add8(s, _mm256_mask_cmpeq_epi32_mask(has_next, rel_n, NEXT_AT(at0)), g_n);
    *top = next_round_pair8(q, s, dtype);
    q = next_start8(_mm256_cmpeq_epi32_mask(rel, NEXT_AT(at_w1)), g);
    s = next_start8(_mm256_cmpeq_epi32_mask(rel, NEXT_AT(at_w2)), g);
    s = next_add8(s, _mm256_mask_cmpeq_epi32_mask(has_next, rel_n, NEXT_AT(at_w0)), g_n);
    *mid = next_round_pair8(q, s, dtype);
    _mm256_storeu_ps(pend_q, next_start8(_mm256_cmpeq_epi32_mask(rel, NEXT_AT(at_2w1)), g));
    s = next_start8(_mm256_cmpeq_epi32_mask(rel, NEXT_AT(at_2w2)), g);
    _mm256_storeu_ps(pend_s, next_add8(s, _mm256_mask_cmpeq_epi32_mask(has_next, rel_n, NEXT_AT(at_2w0)), g_n));
#undef NEXT_AT
    return bad;
}

/* Window row i (0 <= i < Ho): its blocks, then its odd row 2i-1 (not for i = 0) and even row 2i
 * into gradInput; `carry` holds the previous even row's last half line and takes this one's. */
SLOT_TARGET static inline __attribute__((always_inline)) __mmask16
next_window_row(const window_cells *c, const uint16_t *grow, const unaligned_i32 *irow, int64_t i, int64_t W,
                int64_t blocks, float *pend_q, float *pend_s, unsigned char *gi, __m256i *carry, bool stream,
                bool row_0, aclDataType dtype)
{
    /* the odd row's first line begins half a line before it; both pointers are on lines */
    unsigned char *odd = row_0 ? gi : gi + (2 * i - 1) * W * 2 - 32, *even = gi + 2 * i * W * 2;
    const __m512i lane2 = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    /* lane l of block b: output j = 16b + l, whose window starts at cell (2i-1)*W + 2j - 1 */
    __m512i origin = _mm512_add_epi32(_mm512_set1_epi32((int32_t)((2 * i - 1) * W - 1)), lane2);
    const __m512i block_step = _mm512_set1_epi32(32);
    __m512 g = nn512_load_f32(grow, 0, 0xffff, dtype);
    __m512i rel = _mm512_sub_epi32(_mm512_loadu_si512((const void *)irow), origin);
    __m512i top_prev = _mm512_inserti64x4(_mm512_setzero_si512(), *carry, 1); /* as a vector's upper half */
    __mmask16 bad = 0;
    for (int64_t b = 0; b < blocks; ++b) {
        /* the next block (the last, 8-output one as lanes 0-7) for the shifted-in outputs */
        const __mmask16 live_next = b + 1 < blocks ? 0xffff : 0x00ff;
        const __m512i origin_next = _mm512_add_epi32(origin, block_step);
        const __m512 g_next = nn512_load_f32(grow, 16 * (b + 1), live_next, dtype);
        const __m512i rel_next =
            _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live_next, (const void *)(irow + 16 * (b + 1))), origin_next);
        const __m512 g_n =
            _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(g_next), _mm512_castps_si512(g), 1));
        const __m512i rel_n = _mm512_alignr_epi32(rel_next, rel, 1);
        __m512i top, mid;
        /* (two calls, so that `first` is a constant in each inlined copy) */
        float *const q_row = pend_q + 16 * b, *const s_row = pend_s + 16 * b;
        if (b == 0)
            bad |= next_block(c, g, rel, g_n, rel_n, q_row, s_row, true, row_0, dtype, &top, &mid);
        else
            bad |= next_block(c, g, rel, g_n, rel_n, q_row, s_row, false, row_0, dtype, &top, &mid);
        /* odd row: line b is the previous vector's upper half and this one's lower half */
        if (!row_0) next_put(odd + 64 * b, _mm512_alignr_epi64(top, top_prev, 4), stream);
        next_put(even + 64 * b, mid, stream);
        top_prev = top;
        g = g_next, rel = rel_next, origin = origin_next;
    }
    /* the last 8 outputs (lanes 8-15 of g are zero; lane 7's next output is masked off) */
    __m256i top8, mid8;
    const __m512 g_n = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(g), _mm512_castps_si512(g), 1));
    const __m512i rel_n = _mm512_alignr_epi32(rel, rel, 1);
    bad |= next_block8(c, _mm512_castps512_ps256(g), _mm512_castsi512_si256(rel), _mm512_castps512_ps256(g_n),
                       _mm512_castsi512_si256(rel_n), pend_q + 16 * blocks, pend_s + 16 * blocks, row_0, dtype,
                       &top8, &mid8);
    if (!row_0) next_put(odd + 64 * blocks, _mm512_alignr_epi64(_mm512_castsi256_si512(top8), top_prev, 4), stream);
    *carry = mid8;
    return bad;
}

/* The last odd row (H - 1), which only the last window row's dy = 2 cells reach. */
SLOT_TARGET static inline __attribute__((always_inline)) void
next_last_row(const float *pend_q, const float *pend_s, int64_t blocks, unsigned char *odd, __m256i carry, bool stream,
              aclDataType dtype)
{
    __m512i top_prev = _mm512_inserti64x4(_mm512_setzero_si512(), carry, 1);
    for (int64_t b = 0; b < blocks; ++b) {
        const __m512i top =
            next_round_pair(_mm512_loadu_ps(pend_q + 16 * b), _mm512_loadu_ps(pend_s + 16 * b), dtype);
        next_put(odd + 64 * b, _mm512_alignr_epi64(top, top_prev, 4), stream);
        top_prev = top;
    }
    const __m256i top8 =
        next_round_pair8(_mm256_loadu_ps(pend_q + 16 * blocks), _mm256_loadu_ps(pend_s + 16 * blocks), dtype);
    next_put(odd + 64 * blocks, _mm512_alignr_epi64(_mm512_castsi256_si512(top8), top_prev, 4), stream);
}

/* Writes one fp16 or bf16 plane (next_pairing_fits); false when some index is not a cell of its
 * window inside the plane (the plane is then partly written, and redone by the scatter). */
SLOT_TARGET static inline __attribute__((always_inline)) bool next_3x3s2_plane(const bw_plan *p, unsigned char *gi,
                                                                                const unsigned char *grad,
                                                                                const unsigned char *mask,
                                                                                float *scratch, aclDataType dtype)
{
    const int64_t W = p->g.width, Ho = p->g.out_height, Wo = p->g.out_width, blocks = Wo / 16;
    float *pend_q = scratch, *pend_s = scratch + p->slot_stride;
    const window_cells c = window_cells_for(W);
    const uint16_t *grad16 = (const uint16_t *)grad;
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    const bool stream = p->stream_stores;
    __m256i carry = _mm256_setzero_si256();
    __mmask16 bad = 0;
    for (int64_t i = 0; i < Ho; ++i) {
        slot_prefetch_row(grad, index, i, Wo, 2, Ho); /* gradients a plane ahead, as bf16 slot_rows */
        /* (two calls, so that `row_0` is a constant in each inlined copy) */
        const uint16_t *grow = grad16 + i * Wo;
        const unaligned_i32 *irow = index + i * Wo;
        if (i == 0)
            bad |= next_window_row(&c, grow, irow, i, W, blocks, pend_q, pend_s, gi, &carry, stream, true, dtype);
        else
            bad |= next_window_row(&c, grow, irow, i, W, blocks, pend_q, pend_s, gi, &carry, stream, false, dtype);
    }
    next_last_row(pend_q, pend_s, blocks, gi + (2 * Ho - 1) * W * 2 - 32, carry, stream, dtype);
    return bad == 0;
}

SLOT_TARGET static bool next_3x3s2_plane_bf16(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                              const unsigned char *mask, float *scratch)
{
    return next_3x3s2_plane(p, gi, grad, mask, scratch, ACL_BF16);
}

SLOT_TARGET static bool next_3x3s2_plane_f16(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                             const unsigned char *mask, float *scratch)
{
    return next_3x3s2_plane(p, gi, grad, mask, scratch, ACL_FLOAT16);
}

/* Writes one plane of gradInput; false (plane partly written) when some index is not a cell of
 * its own window inside the plane. */
SLOT_TARGET bool nn_mp_bw_slots_3x3s2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                          const unsigned char *mask, float *scratch)
{
    const mp_geometry *g = &p->g;
    const bool pairs = p->dtype == ACL_BF16 && nn_cpu_avx512bf16() &&
                       !slot_tiny_gradients((const uint16_t *)grad, g->out_height * g->out_width);
    if (next_pairing_fits(p, gi, pairs))
        return p->dtype == ACL_BF16 ? next_3x3s2_plane_bf16(p, gi, grad, mask, scratch)
                                    : next_3x3s2_plane_f16(p, gi, grad, mask, scratch);
    slot_plane s = {g->height, g->width, g->out_height, g->out_width, g->pad_h, g->pad_w,
                    (g->width + g->pad_w + 1) / 2, scratch, scratch + p->slot_stride,
                    (slot_block *)(scratch + 2 * p->slot_stride),
                    (int64_t)nn_dtype_size(p->dtype),
                    {stage_buffer(scratch + 3 * p->slot_stride, g->width, STAGE_FLUSH_BYTES), gi, 0,
                     p->stream_stores},
                    0};
    for (int64_t j0 = 0; j0 < s.slots; j0 += 16) s.blocks[j0 / 16] = slot_block_at(j0, s.W, s.Wo, s.pad_w);
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    typedef void (*rows_fn)(slot_plane *, unsigned char *, const unsigned char *, const unaligned_i32 *, int64_t,
                            int64_t);
    const rows_fn inner = p->dtype == ACL_FLOAT     ? slot_rows_f32
                          : p->dtype == ACL_FLOAT16 ? slot_rows_f16
                          : pairs                   ? slot_rows_bf16_pairs
                                                    : slot_rows_bf16;
    const rows_fn edge = p->dtype == ACL_FLOAT     ? slot_rows_f32_edge
                         : p->dtype == ACL_FLOAT16 ? slot_rows_f16_edge
                         : pairs                   ? slot_rows_bf16_pairs_edge
                                                   : slot_rows_bf16_edge;
    memset(scratch, 0, (size_t)(2 * p->slot_stride) * sizeof(float));
    /* inner window rows [first_inner, end_inner): all three cell rows inside the plane (top =
     * 2i - pH >= 0, top + 2 < H) and outputs in the row (i < Ho); the others are edge rows */
    const int64_t row_pairs = (s.H + s.pad_h + 1) / 2, first_inner = s.pad_h;
    int64_t end_inner = nn_floor_div(s.H - 3 + s.pad_h, 2) + 1;
    if (end_inner > s.Ho) end_inner = s.Ho;
    if (end_inner < first_inner) end_inner = first_inner;
    edge(&s, gi, grad, index, 0, first_inner < row_pairs ? first_inner : row_pairs);
    inner(&s, gi, grad, index, first_inner, end_inner);
    edge(&s, gi, grad, index, end_inner > first_inner ? end_inner : first_inner, row_pairs);
    nn512_line_stage_flush(&s.out, s.H * s.W * s.elem, true);
    return s.bad == 0;
}
#else /* not x86-64: never chosen, defined for the link */
bool nn_mp_bw_tiled_2x2_plane_avx512(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                     const unsigned char *mask, float *scratch)
{
    (void)p, (void)gi, (void)grad, (void)mask, (void)scratch;
    return false;
}
bool nn_mp_bw_slots_3x3s2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                const unsigned char *mask, float *scratch)
{
    (void)p, (void)gi, (void)grad, (void)mask, (void)scratch;
    return false;
}
#endif /* NN_HAVE_X86_SIMD */
