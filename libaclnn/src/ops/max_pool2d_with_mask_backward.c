/*
 * aclnnMaxPool2dWithMaskBackward: the gradient of aclnnMaxPool2dWithMask given its mask
 * (spec/ops.md sections 6 and 11).
 *
 *   gradInput[n,c,ih,iw] = sum of gradOutput[n,c,oh,ow] over the outputs whose recorded argmax
 *                          (int32 ih*W+iw read from the head of the INT8 mask) is (ih, iw)
 *
 * How it runs: one input plane at a time, in an fp32 tile that stays in cache: the tile is
 * cleared, each output's gradient is added to its argmax cell in output order (oh, then ow), and
 * the finished tile is written to gradInput exactly once (rounded once for fp16/bf16, with
 * streaming stores for large tensors).  So every gradInput element is the fp32 sum of its
 * contributions in a fixed order - increasing output position - whatever the thread count:
 * bit-identical results, and for fp32 bit-identical to PyTorch, which adds in the same order.
 * Every index is bounds-checked; a bad one is skipped (nothing is written outside the plane)
 * and the launch fails, so the stream reports it at synchronize.
 *
 * A 1x1 kernel (padding is then 0) maps output (oh, ow) to input (oh*sH, ow*sW): the mask is not
 * read at all, as on the device, whose 1x1 mask is a legacy bit pattern.
 *
 * The same header declares aclnnMaxPool2dWithIndicesBackward (PyTorch-style int32 indices with
 * gradOutput's shape), defined here too.
 */
#include <emmintrin.h>
#include <immintrin.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/nn_core.h"
#include "core/nn_simd.h"
#include "ops/max_pool_common.h"

#if defined(__has_include)
#if __has_include("aclnnop/aclnn_max_pool2d_with_indices_backward.h")
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#endif
#endif

#define MP_EXPORT __attribute__((visibility("default")))


static const char OP_MASK[] = "aclnnMaxPool2dWithMaskBackward";
#define OP_INDICES "aclnnMaxPool2dWithIndicesBackward"

enum { OPD_GRAD_OUTPUT = 0, OPD_SELF = 1, OPD_INDICES = 2, OPD_GRAD_INPUT = 3 };

typedef struct bw_plan {
    mp_geometry g;
    aclDataType dtype;
    bool mask_ignored;      /* 1x1 kernel */
    bool indices_int64;     /* aclnnMaxPool2dWithIndicesBackward with INT64 indices */
    bool stream_stores;
    bool tiled_2x2;         /* 2x2 kernel, stride 2, no padding, int32 indices, AVX-512: tiled_2x2_plane */
    bool gather_3x3s2;      /* 3x3 kernel, stride 2, padding <= 1, int32 indices, AVX-512: gather_3x3s2_plane */
    int64_t chunks;         /* plane runs, each with its own scratch */
    int64_t scratch_floats; /* per chunk: the fp32 tile, (fp16/bf16) the widened gradOutput, then
                             * (tiled_2x2) the row band */
    int64_t widened_offset, band_offset; /* floats from the start of a chunk's scratch */
    int64_t band_rows;      /* tiled_2x2 (even) / gather_3x3s2: input rows per band (band_rows * W floats) */
} bw_plan;

typedef struct bw_ctx {
    const bw_plan *plan;
    const unsigned char *grad_out;
    const unsigned char *indices;
    unsigned char *grad_in;
    float *scratch;
    _Atomic int64_t first_bad; /* lowest global output position holding a bad index */
} bw_ctx;

/* ------------------------------------------------------------------------------------------ */
/* Stores                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The tile is written out in blocks of this many elements: the block is still in L1 when it is
 * cleared right after, and each block costs one nn_copy_row_nt call and one prefetch update. */
enum { STORE_BLOCK = 1024 };

/* Streams that the next plane will read; the store loops touch them ahead of time so that the
 * reads overlap the writes instead of alternating with them. */
typedef struct prefetch_plan {
    const char *a, *b;      /* next plane's gradOutput and indices */
    int64_t a_bytes, b_bytes;
    int64_t a_done, b_done; /* bytes already prefetched */
} prefetch_plan;

/* Keeps the prefetched share of each stream level with the written share of the tile
 * (`done` of `total` elements), one cache line at a time.  Called once per block, so the two
 * divisions are negligible. */
static inline void prefetch_step(prefetch_plan *pf, int64_t done, int64_t total)
{
    if (!pf) return;
    const int64_t want_a = pf->a_bytes * done / total, want_b = pf->b_bytes * done / total;
    for (; pf->a_done < want_a; pf->a_done += 64) _mm_prefetch(pf->a + pf->a_done, _MM_HINT_T0);
    for (; pf->b_done < want_b; pf->b_done += 64) _mm_prefetch(pf->b + pf->b_done, _MM_HINT_T0);
}

/* Writes the fp32 tile to dst (streamed when `stream`) and clears the tile for the next plane. */
static void store_f32(float *dst, float *tile, int64_t n, bool stream, prefetch_plan *pf)
{
    if (!stream) {
        memcpy(dst, tile, (size_t)n * sizeof(float));
        memset(tile, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i += STORE_BLOCK) {
        const int64_t m = n - i < STORE_BLOCK ? n - i : STORE_BLOCK;
        prefetch_step(pf, i + m, n);
        nn_copy_row_nt(dst + i, tile + i, (size_t)m * sizeof(float));
        memset(tile + i, 0, (size_t)m * sizeof(float));
    }
}

/* Rounds the fp32 tile once to fp16/bf16 into an L1 buffer, writes that (streamed when
 * `stream`), and clears the tile for the next plane. */
static void store_narrow(uint16_t *dst, float *tile, int64_t n, aclDataType dtype, bool stream, prefetch_plan *pf)
{
    uint16_t narrow[STORE_BLOCK] __attribute__((aligned(64)));
    for (int64_t i = 0; i < n; i += STORE_BLOCK) {
        const int64_t m = n - i < STORE_BLOCK ? n - i : STORE_BLOCK;
        prefetch_step(pf, i + m, n);
        if (dtype == ACL_FLOAT16)
            nn_f32_to_f16_n(tile + i, narrow, (size_t)m);
        else
            nn_f32_to_bf16_n(tile + i, narrow, (size_t)m);
        memset(tile + i, 0, (size_t)m * sizeof(float));
        if (stream)
            nn_copy_row_nt(dst + i, narrow, (size_t)m * sizeof(uint16_t));
        else
            memcpy(dst + i, narrow, (size_t)m * sizeof(uint16_t));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Kernels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void note_bad_index(bw_ctx *c, int64_t position)
{
    int64_t seen = atomic_load(&c->first_bad);
    while (position < seen && !atomic_compare_exchange_weak(&c->first_bad, &seen, position)) {
    }
}

/* Adds one plane's gradients into the cleared tile in output order. Returns the plane-local
 * position of the first bad index, or -1. */
static int64_t scatter_plane_int32(float *restrict tile, const float *restrict grad, const unsigned char *mask,
                                   int64_t count, int64_t plane_size)
{
    int64_t first_bad = -1;
    for (int64_t o = 0; o < count; ++o) {
        int32_t index;
        memcpy(&index, mask + o * 4, 4); /* little-endian int32; unaligned-safe */
        if ((uint64_t)(int64_t)index >= (uint64_t)plane_size) {
            if (first_bad < 0) first_bad = o;
            continue;
        }
        tile[index] += grad[o];
    }
    return first_bad;
}

static int64_t scatter_plane_int64(float *restrict tile, const float *restrict grad, const int64_t *indices,
                                   int64_t count, int64_t plane_size)
{
    int64_t first_bad = -1;
    for (int64_t o = 0; o < count; ++o) {
        const int64_t index = indices[o];
        if ((uint64_t)index >= (uint64_t)plane_size) {
            if (first_bad < 0) first_bad = o;
            continue;
        }
        tile[index] += grad[o];
    }
    return first_bad;
}


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

typedef int32_t __attribute__((aligned(1), may_alias)) unaligned_i32;


/* Copies finished bytes to gradInput (streamed when the plan says so). */
static void write_bytes(const bw_plan *p, unsigned char *dst, const void *src, int64_t bytes)
{
    if (p->stream_stores)
        nn_copy_row_nt(dst, src, (size_t)bytes);
    else
        memcpy(dst, src, (size_t)bytes);
}

/* Writes n fp32 cells of the band to gradInput (rounded once for fp16/bf16). */
static void flush_cells(const bw_plan *p, unsigned char *gi_rows, const float *band, int64_t n)
{
    if (p->dtype == ACL_FLOAT) {
        write_bytes(p, gi_rows, band, n * (int64_t)sizeof(float));
        return;
    }
    uint16_t narrow[STORE_BLOCK] __attribute__((aligned(64)));
    uint16_t *dst = (uint16_t *)gi_rows;
    for (int64_t i = 0; i < n; i += STORE_BLOCK) {
        const int64_t m = n - i < STORE_BLOCK ? n - i : STORE_BLOCK;
        if (p->dtype == ACL_FLOAT16)
            nn_f32_to_f16_n(band + i, narrow, (size_t)m);
        else
            nn_f32_to_bf16_n(band + i, narrow, (size_t)m);
        write_bytes(p, (unsigned char *)(dst + i), narrow, m * (int64_t)sizeof(uint16_t));
    }
}

/* Flushes `rows` rows of the band to gradInput. */
static void flush_band(const bw_plan *p, unsigned char *gi_rows, const float *band, int64_t rows)
{
    flush_cells(p, gi_rows, band, rows * p->g.width);
}

/* Stores the 16 cells v at row[c0..] (lanes in `keep`): as fp32, or (bf16_cells) as bf16.  A
 * 2x2-path cell is +0.0 or 0.0f + one bf16 gradient, so its bf16 is its top half, exactly - the
 * rounding would give the same bits, NaNs quieted as it does them. */
NN_AVX512 static inline void store_cells16(void *row, int64_t c0, __mmask16 keep, __m512 v, bool bf16_cells)
{
    if (!bf16_cells) {
        _mm512_mask_storeu_ps((float *)row + c0, keep, v);
        return;
    }
    __m512i top = _mm512_srli_epi32(_mm512_castps_si512(v), 16);
    top = _mm512_mask_or_epi32(top, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), top, _mm512_set1_epi32(0x40));
    _mm256_mask_storeu_epi16((uint16_t *)row + c0, keep, _mm512_cvtepi32_epi16(top));
}

/* Cells [c0, c0 + 16) of input rows 2oh (row0) and 2oh+1 (row1, NULL past the plane) from the
 * outputs ow0 + half*8 .. +8 whose grad/rel (index - (2oh*W + 2ow)) are in g/rel.  Returns the
 * matches. */
NN_AVX512 static inline int64_t tiled_2x2_half(void *row0, void *row1, __m512 g, __m512i rel, __m512i duplicate,
                                                 int64_t c0, int64_t cell_end, int64_t W, bool bf16_cells)
{
    const __m512i parity = _mm512_setr_epi32(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 gd = _mm512_permutexvar_ps(duplicate, g);
    const __m512i rd = _mm512_permutexvar_epi32(duplicate, rel);
    /* cells inside the row and inside a window: c < min(W, 2*Wo) = cell_end */
    const __mmask16 cells = _mm512_cmplt_epi32_mask(_mm512_add_epi32(_mm512_set1_epi32((int32_t)c0), lane),
                                                    _mm512_set1_epi32((int32_t)cell_end));
    const __mmask16 in_row = _mm512_cmplt_epi32_mask(_mm512_add_epi32(_mm512_set1_epi32((int32_t)c0), lane),
                                                     _mm512_set1_epi32((int32_t)W));
    const __mmask16 hit0 = _mm512_mask_cmpeq_epi32_mask(cells, rd, parity);
    store_cells16(row0, c0, in_row, _mm512_maskz_add_ps(hit0, _mm512_setzero_ps(), gd), bf16_cells);
    int64_t matches = __builtin_popcount((unsigned)hit0);
    if (row1) {
        const __mmask16 hit1 =
            _mm512_mask_cmpeq_epi32_mask(cells, rd, _mm512_add_epi32(parity, _mm512_set1_epi32((int32_t)W)));
        store_cells16(row1, c0, in_row, _mm512_maskz_add_ps(hit1, _mm512_setzero_ps(), gd), bf16_cells);
        matches += __builtin_popcount((unsigned)hit1);
    }
    return matches;
}

/* Writes one plane of gradInput; false (plane partly written) when some index lies outside its
 * own window.  bf16 cells are narrowed as they are made (store_cells16), the others go through
 * fp32 band rows. */
NN_AVX512 static bool tiled_2x2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                        const unsigned char *mask, float *band)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype);
    const int64_t cell_end = W < 2 * Wo ? W : 2 * Wo;
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i dup_lo = _mm512_srli_epi32(lane, 1);
    const __m512i dup_hi = _mm512_add_epi32(dup_lo, _mm512_set1_epi32(8));
    const bool bf16_cells = p->dtype == ACL_BF16;
    const int64_t cell_bytes = bf16_cells ? 2 : 4, row_bytes = W * cell_bytes;
    int64_t matches = 0, used = 0, first_row = 0;
    for (int64_t ih = 0; ih < H; ih += 2) {
        unsigned char *row0 = (unsigned char *)band + used * row_bytes;
        unsigned char *row1 = ih + 1 < H ? row0 + row_bytes : NULL;
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
                const __m512 gv = nn512_load_f32(grow, ow0, live, p->dtype);
                const __m512i base = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(ih * W + 2 * ow0)),
                                                      _mm512_slli_epi32(lane, 1));
                const __m512i rel =
                    _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live, (const void *)(irow + ow0)), base);
                matches += tiled_2x2_half(row0, row1, gv, rel, dup_lo, 2 * ow0, cell_end, W, bf16_cells);
                if (n > 8)
                    matches += tiled_2x2_half(row0, row1, gv, rel, dup_hi, 2 * ow0 + 16, cell_end, W, bf16_cells);
            }
            if (cell_end < W) { /* odd W, ceilMode off: the last column is in no window */
                memset(row0 + cell_end * cell_bytes, 0, (size_t)cell_bytes);
                if (row1) memset(row1 + cell_end * cell_bytes, 0, (size_t)cell_bytes);
            }
        } else { /* odd H, ceilMode off: no window */
            memset(row0, 0, (size_t)row_bytes);
            if (row1) memset(row1, 0, (size_t)row_bytes);
        }
        used += row1 ? 2 : 1;
        if (used + 2 > p->band_rows || ih + 2 >= H) {
            if (bf16_cells)
                write_bytes(p, gi + first_row * row_bytes, band, used * row_bytes);
            else
                flush_band(p, gi + first_row * W * elem, band, used);
            first_row += used;
            used = 0;
        }
    }
    return matches == Ho * Wo;
}

/* ------------------------------------------------------------------------------------------ */
/* 3x3 windows with stride 2 (padding 0 or 1): gather                                          */
/* ------------------------------------------------------------------------------------------ */

/* With a 3x3 kernel and stride 2, window (oh, ow) covers rows 2oh-pH .. 2oh-pH+2 and columns
 * 2ow-pW .. 2ow-pW+2, so along each axis a cell lies in one or two windows: with u = iw + pW,
 * window u/2 (if < Wo) and, when u is even, window u/2 - 1 (if >= 0); the same for rows.
 * Instead of scattering every output into a tile, each gradInput cell gathers its (at most
 * four) candidate outputs and adds those whose index names it:
 *   gradInput[ih, iw] = ((0 + g(oh-1, ow-1)) + g(oh-1, ow)) + g(oh, ow-1)) + g(oh, ow)
 * over the candidates that match, in increasing output position - the scatter's order, so the
 * result is bit-identical to it (and for fp32 to PyTorch's).  The adds are masked: a candidate
 * that does not match leaves the accumulator alone.
 *
 * The work is organised by output row: the outputs of row oh that are candidates of 16
 * consecutive cells (9 consecutive outputs) are loaded once and spread to the cells with two
 * permutes - the cell's "left" window u/2 - 1 and its "right" window u/2 - then compared with
 * the cells of the three input rows that window row covers.  Those rows are accumulated in a
 * small band of rows that stays in L1: the row 2oh-pH+2 is shared with the next window row
 * (which adds to it after this one, as the order requires), so the band keeps it open and
 * flushes the finished rows to gradInput.
 *
 * As for the 2x2 path, each output can match at most one cell (its own index, tested only at
 * cells of its window inside the plane), so all Ho*Wo outputs matching proves every index lies
 * in its own window; otherwise the plane is redone by the scatter.
 *
 * fp16/bf16 gradients are widened in registers (exact) and the finished cells rounded once when
 * they are written. */

/* Which of 16 cells starting at column c0 (a multiple of 16) have a left / right window, and
 * which of the outputs ow = c0/2 - 1 .. c0/2 + 14 must be loaded. */
typedef struct gather_block {
    __mmask16 left, right, live;
} gather_block;

NN_AVX512 static gather_block gather_block_at(int64_t c0, int64_t W, int64_t Wo, int64_t pad_w)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i iw = _mm512_add_epi32(_mm512_set1_epi32((int32_t)c0), lane);
    const __m512i u = _mm512_add_epi32(iw, _mm512_set1_epi32((int32_t)pad_w));
    const __m512i right = _mm512_srli_epi32(u, 1), left = _mm512_sub_epi32(right, _mm512_set1_epi32(1));
    const __m512i wo = _mm512_set1_epi32((int32_t)Wo);
    const __m512i loaded = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(c0 / 2 - 1)), lane);
    const __mmask16 in_row = _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32((int32_t)W));
    const __mmask16 u_even = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(1));
    gather_block m;
    m.right = _mm512_mask_cmplt_epi32_mask(in_row, right, wo);
    m.left = _mm512_mask_cmplt_epi32_mask(in_row & u_even, left, wo) &
             _mm512_cmpge_epi32_mask(left, _mm512_setzero_si512());
    m.live = _mm512_mask_cmplt_epi32_mask(_mm512_cmpge_epi32_mask(loaded, _mm512_setzero_si512()), loaded, wo);
    return m;
}

/* Adds the matches of one block of a window row to one cell row (`cells`: 16 floats of the
 * band; `fresh`: the row has no earlier contribution) and counts them, one per lane in *hits
 * (a vector count: cheaper than a popcount per compare). */
NN_AVX512 static inline void gather_cell_row(float *cells, bool fresh, __m512i target, __m512i idx_left,
                                               __m512i idx_right, __m512 g_left, __m512 g_right, gather_block blk,
                                               __m512i *hits)
{
    const __m512i one = _mm512_set1_epi32(1);
    __m512 acc = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(cells);
    const __mmask16 hit_left = _mm512_mask_cmpeq_epi32_mask(blk.left, idx_left, target);
    const __mmask16 hit_right = _mm512_mask_cmpeq_epi32_mask(blk.right, idx_right, target);
    acc = _mm512_mask_add_ps(acc, hit_left, acc, g_left);
    acc = _mm512_mask_add_ps(acc, hit_right, acc, g_right);
    _mm512_storeu_ps(cells, acc);
    *hits = _mm512_mask_add_epi32(*hits, hit_left, *hits, one);
    *hits = _mm512_mask_add_epi32(*hits, hit_right, *hits, one);
}

/* Adds window row oh to cell rows 2oh-pH .. 2oh-pH+2 (those inside the plane), which sit at
 * band row `band_row0` onwards; the first of them is fresh only for oh == 0.  Counts the
 * matches into *hits. */
NN_AVX512 static void gather_window_row(const mp_geometry *g, float *band, int64_t band_stride, int64_t band_row0,
                                          const unsigned char *grow, const unaligned_i32 *irow, int64_t oh,
                                          aclDataType dtype, __m512i *hits)
{
    const int64_t H = g->height, W = g->width, Wo = g->out_width, pad_w = g->pad_w;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* cell lane -> loaded output: the right window u/2 sits at (pW + lane)/2 + 1, the left one below */
    const __m512i pick_right =
        _mm512_add_epi32(_mm512_srli_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32((int32_t)pad_w)), 1),
                         _mm512_set1_epi32(1));
    const __m512i pick_left = _mm512_sub_epi32(pick_right, _mm512_set1_epi32(1));
    /* away from the row ends every cell has a right window, the even-u ones a left one, and
     * outputs c0/2 - 1 .. c0/2 + 8 are needed */
    const gather_block inner = {(__mmask16)(pad_w ? 0xAAAAu : 0x5555u), (__mmask16)0xFFFFu,
                                (__mmask16)(pad_w ? 0x03FFu : 0x01FFu)};
    const int64_t top = 2 * oh - g->pad_h;
    const bool row0 = top >= 0, row1 = top + 1 < H, row2 = top + 2 < H; /* top + 1 >= 0 always */
    const bool fresh0 = oh == 0;
    const __m512i row_step = _mm512_set1_epi32((int32_t)W);
    float *cells0 = band + band_row0 * band_stride;
    for (int64_t c0 = 0; c0 < W; c0 += 16) {
        const bool is_inner = c0 >= 16 && c0 + 16 <= W && (c0 + 15 + pad_w) / 2 < Wo;
        const gather_block blk = is_inner ? inner : gather_block_at(c0, W, Wo, pad_w);
        const int64_t first = c0 / 2 - 1;
        const __m512 gv = nn512_load_f32(grow, first, blk.live, dtype);
        const __m512i iv = _mm512_maskz_loadu_epi32(blk.live, (const void *)(irow + first));
        const __m512i idx_left = _mm512_permutexvar_epi32(pick_left, iv);
        const __m512i idx_right = _mm512_permutexvar_epi32(pick_right, iv);
        const __m512 g_left = _mm512_permutexvar_ps(pick_left, gv);
        const __m512 g_right = _mm512_permutexvar_ps(pick_right, gv);
        /* the cells' flat indices ih*W + iw, row by row */
        const __m512i target0 = _mm512_add_epi32(_mm512_set1_epi32((int32_t)(top * W + c0)), lane);
        const __m512i target1 = _mm512_add_epi32(target0, row_step);
        if (row0) gather_cell_row(cells0 + c0, fresh0, target0, idx_left, idx_right, g_left, g_right, blk, hits);
        if (row1)
            gather_cell_row(cells0 + band_stride + c0, true, target1, idx_left, idx_right, g_left, g_right, blk,
                            hits);
        if (row2)
            gather_cell_row(cells0 + 2 * band_stride + c0, true, _mm512_add_epi32(target1, row_step), idx_left,
                            idx_right, g_left, g_right, blk, hits);
    }
}

/* Writes cells [from, to) of the plane from the band (band row 0 holds input row band_first;
 * from/to are whole rows unless the rows are contiguous in the band). */
static void write_band_cells(const bw_plan *p, unsigned char *gi, const float *band, int64_t stride,
                             int64_t band_first, int64_t from, int64_t to)
{
    const int64_t W = p->g.width, elem = (int64_t)nn_dtype_size(p->dtype);
    if (to <= from) return;
    if (stride == W) {
        flush_cells(p, gi + from * elem, band + (from - band_first * W), to - from);
        return;
    }
    for (int64_t r = from / W; r < to / W; ++r) flush_band(p, gi + r * W * elem, band + (r - band_first) * stride, 1);
}

/* Writes one plane of gradInput; false (plane partly written) when some index lies outside its
 * own window.  The band holds p->band_rows rows of `stride` floats (W rounded up to 16); band
 * row 0 holds input row band_first.  Before a window row would overrun the band, the finished
 * rows (those above the window row's top, which stays open) are written out and the band is
 * shifted down.  When the rows are contiguous in the band (W a multiple of 16) the cells are
 * written up to a cache-line boundary of the plane, so that the streaming stores cover whole
 * lines, and the few finished cells past it wait in the band for the next write. */
NN_AVX512 static bool gather_3x3s2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                           const unsigned char *mask, float *band)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype), stride = (W + 15) / 16 * 16;
    const int64_t line = stride == W ? 64 / elem : W; /* write granularity, in cells */
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    __m512i hits = _mm512_setzero_si512(); /* matches, per lane */
    int64_t band_first = -g->pad_h; /* -1: the padding row above the plane, never written */
    int64_t written = 0;            /* cells [0, written) of the plane are in gradInput */
    for (int64_t oh = 0; oh < Ho; ++oh) {
        const int64_t top = 2 * oh - g->pad_h;
        if (top + 3 - band_first > p->band_rows) {
            const int64_t upto = top * W / line * line;
            write_band_cells(p, gi, band, stride, band_first, written, upto);
            written = upto;
            const int64_t keep = upto / W; /* first row with a cell still to write or to add to */
            memmove(band, band + (keep - band_first) * stride, (size_t)((top + 1 - keep) * stride) * sizeof(float));
            band_first = keep;
        }
        for (int64_t b = 0; b < Wo * 4; b += 64) { /* the next window row's streams */
            _mm_prefetch((const char *)(index + (oh + 1) * Wo) + b, _MM_HINT_T0);
            if (b < Wo * elem) _mm_prefetch((const char *)(grad + (oh + 1) * Wo * elem) + b, _MM_HINT_T0);
        }
        gather_window_row(g, band, stride, top - band_first, grad + oh * Wo * elem, index + oh * Wo, oh, p->dtype,
                          &hits);
    }
    /* every row the windows reached, then zeros for rows below the last window (pH = 0, odd H) */
    const int64_t reached = 2 * (Ho - 1) - g->pad_h + 3 < H ? 2 * (Ho - 1) - g->pad_h + 3 : H;
    write_band_cells(p, gi, band, stride, band_first, written, reached * W);
    if (reached < H) {
        memset(band, 0, (size_t)W * sizeof(float));
        for (int64_t r = reached; r < H; ++r) flush_band(p, gi + r * W * elem, band, 1);
    }
    return _mm512_reduce_add_epi32(hits) == Ho * Wo; /* lanes count at most W*H*4/16 < 2^31 each */
}

static void backward_chunks(void *vctx, int64_t chunk_begin, int64_t chunk_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const bw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t planes = mp_planes(g), HW = g->height * g->width, P = g->out_height * g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype);
    const int64_t index_bytes = p->indices_int64 ? 8 : 4;
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        float *tile = c->scratch + chunk * p->scratch_floats;
        float *widened = tile + p->widened_offset, *band = tile + p->band_offset;
        const int64_t first = mp_chunk_first(planes, p->chunks, chunk);
        const int64_t last = mp_chunk_first(planes, p->chunks, chunk + 1);
        memset(tile, 0, (size_t)HW * sizeof(float)); /* kept clear by the store loops after this */
        for (int64_t plane = first; plane < last; ++plane) {
            const unsigned char *go = c->grad_out + plane * P * elem;
            const unsigned char *mask = c->indices + plane * P * index_bytes;
            unsigned char *gi = c->grad_in + plane * HW * elem;
            /* the fast paths read fp16/bf16 gradients as they are; when an index lies outside its
             * window they give up and the plane is redone by the scatter */
            if ((p->gather_3x3s2 && gather_3x3s2_plane(p, gi, go, mask, band)) ||
                (p->tiled_2x2 && tiled_2x2_plane(p, gi, go, mask, band)))
                continue;
            if ((p->gather_3x3s2 || p->tiled_2x2) && p->stream_stores) nn_streaming_fence();
            const float *grad = (const float *)go;
            if (p->dtype == ACL_FLOAT16) {
                nn_f16_to_f32_n((const uint16_t *)go, widened, (size_t)P);
                grad = widened;
            } else if (p->dtype == ACL_BF16) {
                nn_bf16_to_f32_n((const uint16_t *)go, widened, (size_t)P);
                grad = widened;
            }
            const int64_t bad = p->indices_int64
                                    ? scatter_plane_int64(tile, grad, (const int64_t *)mask, P, HW)
                                    : scatter_plane_int32(tile, grad, mask, P, HW);
            if (bad >= 0) note_bad_index(c, plane * P + bad);
            prefetch_plan pf = {(const char *)(go + P * elem), (const char *)(mask + P * index_bytes),
                                plane + 1 < last ? P * elem : 0, plane + 1 < last ? P * index_bytes : 0, 0, 0};
            if (p->dtype == ACL_FLOAT)
                store_f32((float *)gi, tile, HW, p->stream_stores, p->stream_stores ? &pf : NULL);
            else
                store_narrow((uint16_t *)gi, tile, HW, p->dtype, p->stream_stores, p->stream_stores ? &pf : NULL);
        }
    }
    if (p->stream_stores) nn_streaming_fence();
}

/* 1x1 kernel: gradInput[oh*sH, ow*sW] = gradOutput[oh, ow], zero elsewhere (bit copies). */
static void backward_1x1_planes(void *vctx, int64_t plane_begin, int64_t plane_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const mp_geometry *g = &c->plan->g;
    const int64_t elem = (int64_t)nn_dtype_size(c->plan->dtype);
    const int64_t H = g->height, W = g->width, Wo = g->out_width;
    for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
        const unsigned char *go = c->grad_out + plane * g->out_height * Wo * elem;
        unsigned char *gi = c->grad_in + plane * H * W * elem;
        memset(gi, 0, (size_t)(H * W * elem));
        for (int64_t oh = 0; oh < g->out_height; ++oh) {
            unsigned char *row = gi + oh * g->stride_h * W * elem;
            const unsigned char *src = go + oh * Wo * elem;
            if (g->stride_w == 1) {
                memcpy(row, src, (size_t)(Wo * elem));
                continue;
            }
            for (int64_t ow = 0; ow < Wo; ++ow) memcpy(row + ow * g->stride_w * elem, src + ow * elem, (size_t)elem);
        }
    }
}

static aclnnStatus backward_kernel(const nn_launch *l)
{
    const bw_plan *p = (const bw_plan *)l->plan;
    const mp_geometry *g = &p->g;
    bw_ctx c;
    c.plan = p;
    c.grad_out = (const unsigned char *)l->operands[OPD_GRAD_OUTPUT].data;
    c.indices = (const unsigned char *)l->operands[OPD_INDICES].data;
    c.grad_in = (unsigned char *)l->operands[OPD_GRAD_INPUT].data;
    c.scratch = (float *)l->scratch;
    atomic_init(&c.first_bad, INT64_MAX);
    if (p->mask_ignored) {
        nn_parallel_for(mp_planes(g), 1, backward_1x1_planes, &c);
        return ACLNN_SUCCESS;
    }
    nn_parallel_for(p->chunks, 1, backward_chunks, &c);
    const int64_t bad = atomic_load(&c.first_bad);
    if (bad == INT64_MAX) return ACLNN_SUCCESS;

    const int64_t P = g->out_height * g->out_width;
    int64_t value;
    if (p->indices_int64) {
        memcpy(&value, c.indices + bad * 8, 8);
    } else {
        int32_t v32;
        memcpy(&v32, c.indices + bad * 4, 4);
        value = v32;
    }
    const int64_t plane = bad / P, at = bad % P;
    return nn_error(ACL_ERROR_RT_AICORE_EXCEPTION,
                    "%s: indices holds argmax %lld for output (n=%lld, c=%lld, oh=%lld, ow=%lld), outside the "
                    "input plane [0, %lld) (H=%lld, W=%lld); the mask does not come from aclnnMaxPool2dWithMask "
                    "with these arguments. That gradient was dropped.",
                    l->op_name, (long long)value, (long long)(plane / g->channels), (long long)(plane % g->channels),
                    (long long)(at / g->out_width), (long long)(at % g->out_width),
                    (long long)(g->height * g->width), (long long)g->height, (long long)g->width);
}

/* ------------------------------------------------------------------------------------------ */
/* Phase 1                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static aclnnStatus null_tensor(const char *op, const char *name)
{
    return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: Expected a proper Tensor but got null for argument %s.", op, name);
}

static aclnnStatus null_array(const char *op, const char *name)
{
    return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: Expected a proper IntArray but got null for argument %s.", op, name);
}

static aclnnStatus check_nulls(const char *op, const aclTensor *grad_output, const aclTensor *self,
                               const aclTensor *indices, const aclIntArray *kernel, const aclIntArray *stride,
                               const aclIntArray *padding, const aclIntArray *dilation, const aclTensor *grad_input)
{
    if (!grad_output) return null_tensor(op, "gradOutput");
    if (!self) return null_tensor(op, "self");
    if (!indices) return null_tensor(op, "indices");
    if (!kernel) return null_array(op, "kernelSize");
    if (!stride) return null_array(op, "stride");
    if (!padding) return null_array(op, "padding");
    if (!dilation) return null_array(op, "dilation");
    if (!grad_input) return null_tensor(op, "gradInput");
    return ACLNN_SUCCESS;
}

static aclnnStatus check_dtypes(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                const aclTensor *indices, const aclTensor *grad_input, bool is_mask)
{
    if (!mp_dtype_supported(self->dtype))
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: self dtype must be one of [FLOAT, FLOAT16, BFLOAT16], got %s.",
                        op, nn_dtype_name(self->dtype));
    if (grad_output->dtype != self->dtype)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: gradOutput dtype must equal self dtype %s, got %s.", op,
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_output->dtype));
    if (grad_input->dtype != self->dtype)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: gradInput dtype must equal self dtype %s, got %s.", op,
                        nn_dtype_name(self->dtype), nn_dtype_name(grad_input->dtype));
    if (is_mask && indices->dtype != ACL_INT8)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: indices dtype must be INT8, got %s.", op,
                        nn_dtype_name(indices->dtype));
    if (!is_mask && indices->dtype != ACL_INT32 && indices->dtype != ACL_INT64)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: indices dtype must be one of [INT32, INT64], got %s.", op,
                        nn_dtype_name(indices->dtype));
    return ACLNN_SUCCESS;
}

static aclnnStatus check_rank(const char *op, const char *name, const aclTensor *t)
{
    if (t->ndim == 3 || t->ndim == 4) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be a 3-D or 4-D tensor, got %llu-D.", op, name,
                    (unsigned long long)t->ndim);
}

static aclnnStatus check_formats(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                 const aclTensor *indices, const aclTensor *grad_input)
{
    if (self->format != grad_output->format || self->format != grad_input->format)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: self, gradOutput and gradInput must have the same format, got self %s, gradOutput %s, "
                        "gradInput %s.",
                        op, nn_format_name(self->format), nn_format_name(grad_output->format),
                        nn_format_name(grad_input->format));
    const aclTensor *all[4] = {self, grad_input, grad_output, indices};
    const char *names[4] = {"self", "gradInput", "gradOutput", "indices"};
    for (int i = 0; i < 4; ++i)
        if (nn_format_is_private(all[i]->format))
            return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s format must be ND or NCHW, got %s.", op, names[i],
                            nn_format_name(all[i]->format));
    aclnnStatus st;
    for (int i = 0; i < 4; ++i)
        if ((st = check_rank(op, names[i], all[i])) != ACLNN_SUCCESS) return st;
    return ACLNN_SUCCESS;
}

static aclnnStatus check_and_plan(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                  const aclTensor *indices, const aclIntArray *kernel, const aclIntArray *stride,
                                  const aclIntArray *padding, const aclIntArray *dilation, bool ceil_mode,
                                  const aclTensor *grad_input, bool is_mask, bw_plan *plan)
{
    aclnnStatus st = check_dtypes(op, grad_output, self, indices, grad_input, is_mask);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_formats(op, grad_output, self, indices, grad_input)) != ACLNN_SUCCESS) return st;
    mp_attrs attrs = {0};
    if ((st = mp_check_attrs(op, kernel, stride, padding, dilation, &attrs)) != ACLNN_SUCCESS) return st;
    if (!mp_shape_equals(grad_input, self->ndim, self->dims))
        return mp_shape_error(op, "gradInput", grad_input, self->ndim, self->dims);
    mp_geometry g = {0};
    if ((st = mp_check_pooled_geometry(op, self, &attrs, ceil_mode, &g)) != ACLNN_SUCCESS) return st;
    /* (CANN's "pad <= effective kernel / 2" check sits here; with dilation 1 it equals the
     * pad <= k/2 check above, so it can never fire.) */
    if ((st = mp_check_out_size(op, &g)) != ACLNN_SUCCESS) return st;
    int64_t dims[4];
    const uint64_t rank = mp_pooled_shape(&g, dims);
    if (!mp_shape_equals(grad_output, rank, dims)) return mp_shape_error(op, "gradOutput", grad_output, rank, dims);

    /* CANN computes the expected indices shape but discards the result; it then reads N*C*Ho*Wo
     * indices.  We accept any 3-D/4-D shape as CANN does, but refuse a container too small for
     * what the kernel reads (decision 7).  A 1x1 kernel reads nothing. */
    const int64_t count = mp_planes(&g) * g.out_height * g.out_width;
    const bool mask_ignored = is_mask && mp_is_1x1(&g);
    if (!mask_ignored) {
        const int64_t have = nn_tensor_numel(indices) * (int64_t)nn_dtype_size(indices->dtype);
        const int64_t need = count * (is_mask ? 4 : (int64_t)nn_dtype_size(indices->dtype));
        if (have < need) {
            char got[160];
            nn_shape_str(got, sizeof got, indices->ndim, indices->dims);
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            "%s: indices must hold at least %lld bytes (%s %lld argmax values for N*C*Ho*Wo = "
                            "%lld outputs), got shape %s = %lld bytes.",
                            op, (long long)need, is_mask ? "int32" : nn_dtype_name(indices->dtype),
                            (long long)count, (long long)count, got, (long long)have);
        }
    }

    memset(plan, 0, sizeof *plan);
    plan->g = g;
    plan->dtype = self->dtype;
    plan->mask_ignored = mask_ignored;
    plan->indices_int64 = !is_mask && indices->dtype == ACL_INT64;
    return ACLNN_SUCCESS;
}

/* Picks the path and lays out one chunk's scratch (offsets in floats, multiples of 16). */
static void plan_scratch(bw_plan *plan)
{
    const mp_geometry *g = &plan->g;
    const int64_t HW = g->height * g->width, P = g->out_height * g->out_width, W = g->width;
    plan->tiled_2x2 = !plan->indices_int64 && g->kernel_h == 2 && g->kernel_w == 2 && g->stride_h == 2 &&
                      g->stride_w == 2 && g->pad_h == 0 && g->pad_w == 0 && HW + 2 * W <= INT32_MAX &&
                      nn_cpu_avx512();
    int64_t at = (HW + 15) / 16 * 16;
    plan->widened_offset = at;
    if (plan->dtype != ACL_FLOAT) at += (P + 15) / 16 * 16;
    plan->band_offset = at;
    plan->gather_3x3s2 = !plan->indices_int64 && g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 2 &&
                         g->stride_w == 2 && g->pad_h <= 1 && g->pad_w <= 1 && HW + W <= INT32_MAX &&
                         nn_cpu_avx512();
    if (plan->tiled_2x2) {
        /* ~8 KiB of rows (an even number, at least 2): stays in L1; + 32 floats of slack for the
         * last 16-output step, whose masked stores stay inside the row anyway */
        plan->band_rows = 2048 / W >= 2 ? 2048 / W / 2 * 2 : 2;
        at += (plan->band_rows * W + 32 + 15) / 16 * 16;
    } else if (plan->gather_3x3s2) {
        /* ~8 KiB of rows of W rounded up to 16 floats - stays in L1 */
        const int64_t stride = (W + 15) / 16 * 16;
        plan->band_rows = 2048 / stride >= 6 ? 2048 / stride : 6; /* >= 3 + the 2 kept rows + 1 */
        at += plan->band_rows * stride;
    }
    plan->scratch_floats = at;
}

static aclnnStatus build_executor(const char *op, const aclTensor *grad_output, const aclTensor *self,
                                  const aclTensor *indices, const aclTensor *grad_input, bw_plan *plan,
                                  uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (!workspaceSize) return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: workspaceSize must not be NULL.", op);
    if (!executor) return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: executor must not be NULL.", op);

    const bool empty = nn_tensor_is_empty(self);
    const mp_geometry *g = &plan->g;
    const int64_t planes = mp_planes(g), HW = g->height * g->width;
    const int64_t threads = nn_num_threads();
    plan->chunks = planes < threads ? planes : threads;
    if (plan->chunks < 1) plan->chunks = 1;
    plan_scratch(plan);
    plan->stream_stores = nn_use_streaming_stores((uint64_t)(planes * HW) * nn_dtype_size(plan->dtype));

    aclOpExecutor *ex = nn_executor_create(op, empty ? NULL : backward_kernel, plan, sizeof *plan);
    if (!ex) return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    nn_executor_add_input(ex, grad_output);
    nn_executor_add_input(ex, self);
    nn_executor_add_input(ex, indices);
    nn_executor_add_output(ex, grad_input);
    if (!empty && !plan->mask_ignored)
        nn_executor_add_scratch(ex, (uint64_t)(plan->chunks * plan->scratch_floats) * sizeof(float));
    return nn_executor_finish(ex, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *op = OP_MASK;
    /* CANN's early checks: kernelSize, self, gradOutput, then the kernelSize length - which CANN
     * reports as NULLPTR (documented quirk, kept). */
    if (!kernelSize) return null_array(op, "kernelSize");
    if (!self) return null_tensor(op, "self");
    if (!gradOutput) return null_tensor(op, "gradOutput");
    if (kernelSize->size != 1 && kernelSize->size != 2)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR,
                        "%s: kernelSize must have 1 or 2 elements, got %llu (reported as ACLNN_ERR_PARAM_NULLPTR, "
                        "as CANN does).",
                        op, (unsigned long long)kernelSize->size);
    aclnnStatus st = check_nulls(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, gradInput);
    if (st != ACLNN_SUCCESS) return st;
    bw_plan plan;
    st = check_and_plan(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode, gradInput,
                        true, &plan);
    if (st != ACLNN_SUCCESS) return st;
    return build_executor(op, gradOutput, self, indices, gradInput, &plan, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithMaskBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP_MASK, workspace, workspaceSize, executor, stream);
}

/* The WithIndices variant (declared in the same CANN header): the same checks and kernels,
 * with PyTorch-style indices (INT32 or INT64, out's shape) instead of the mask. */
MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *op = OP_INDICES;
    aclnnStatus st = check_nulls(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, gradInput);
    if (st != ACLNN_SUCCESS) return st;
    bw_plan plan;
    st = check_and_plan(op, gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode, gradInput,
                        false, &plan);
    if (st != ACLNN_SUCCESS) return st;
    return build_executor(op, gradOutput, self, indices, gradInput, &plan, workspaceSize, executor);
}

MP_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP_INDICES, workspace, workspaceSize, executor, stream);
}
