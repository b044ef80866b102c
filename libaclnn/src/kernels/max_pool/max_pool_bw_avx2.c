/*
 * max_pool_bw_avx2.c - the MaxPool2dWithMask backward's 2x2 stride-2 direct write and 3x3
 * stride-2 slots on AVX2 + F16C CPUs (max_pool_bw.h; the schemes are described in
 * max_pool_bw_avx512.c).  Compiled with the AVX2 flags (Makefile); run only when the plan's
 * tiled_2x2_avx2 / slots_3x3s2_avx2 flag is set, which phase 1 sets from nn_cpu_avx2() on CPUs
 * without the AVX-512 tier (the slots only in streamed fp32/fp16 launches).
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

/* 8 gradients from grad[at..] as fp32 (fp16/bf16 widened exactly); both kernels of this file. */
NN_AVX2 static inline __attribute__((always_inline)) __m256 avx2_load_grad8(const unsigned char *grad, int64_t at,
                                                                          aclDataType dtype)
{
    if (dtype == ACL_FLOAT) return _mm256_loadu_ps((const float *)grad + at);
    const __m128i narrow = _mm_loadu_si128((const __m128i *)((const uint16_t *)grad + at));
    return dtype == ACL_FLOAT16 ? _mm256_cvtph_ps(narrow)
                                : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(narrow), 16));
}

/* 8 gradients from grow[at..] as fp32 and their 8 indices. */
NN_AVX2 static inline __attribute__((always_inline)) void
tiled_avx2_load8(const unsigned char *grow, const unaligned_i32 *irow, int64_t at, aclDataType dtype, __m256 *g,
                 __m256i *index)
{
    *index = _mm256_loadu_si256((const __m256i *)(irow + at));
    *g = avx2_load_grad8(grow, at, dtype);
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
/*
 * The 3x3 stride-2 windows (padding 0 or 1) on AVX2, 8 outputs a step.  Slot pair j of a window
 * row is the column window j shares with window j - 1 (2j - pW, "even") and window j's middle
 * column (2j - pW + 1, "odd").  A shared cell of the window row's cell row dy is
 *     (above + s(j - 1, dy, dx = 2)) + s(j, dy, dx = 0),   a middle one  above + s(j, dy, 1)
 * with `above` what the window row above left in the cell (+0.0 for the rows of its own) and s
 * the output's gradient when its index names that cell, else +0.0: the scatter's fp32 sums in
 * output order (adding +0.0 to a sum that started at +0.0 changes nothing), so the same bits.
 * An index is compared with 0, 1, 2 relative to each of the window's cell rows.  Cell row 0
 * finishes the pending row (fp32, even and odd slots apart, so no shuffles), row 1 is final, row
 * 2 becomes the pending row.  Finished rows are built in slot order in the scratch, rounded once
 * (fp16/bf16), and copied into a line stage at their columns (slot k is column k - pW).  The
 * first and last steps of a row (a missing output j - 1 or j, a column outside the row) read 8
 * outputs from inside the row, move them into place with permutes and check every lane.  A plane with a NaN gradient is given back to the
 * scatter, which keeps two NaNs' payloads in output order.
 */

/* Window rows ahead whose index and gradient rows are prefetched (the AVX-512 slots: six). */
enum { SLOT_PREFETCH_ROWS = 6 };

/* One window row: its index and gradient rows, the plane position of window 0's first cell
 * (row 2oh - pH, column -pW; modulo 2^32), all-ones for each of its three cell rows that lies in
 * the plane. */
typedef struct slot_row {
    const unsigned char *grad;
    const unaligned_i32 *index;
    int32_t base;
    __m256i ok[3];
} slot_row;

/* The outputs j = j0 + lane (cur) and j - 1 (left) of a step as vectors; at the row's ends
 * (EDGE, slot_load_edge) absent outputs are given index 0 and gradient +0.0 and left out of
 * `cur_live` / `left_live`. */
typedef struct slot_step {
    __m256i cur_index, left_index, cur_live, left_live;
    __m256 cur_grad, left_grad;
} slot_step;

/* A step's outputs at a row end (EDGE), without reading past the row: 8 outputs loaded from
 * inside the row (the step's own, or the row's last 8) moved into place with permutes; lanes
 * with no output j (or j - 1) are left out of cur_live (left_live).  Rows of fewer than 9 outputs go through small
 * arrays. */
NN_AVX2 static inline __attribute__((always_inline)) slot_step slot_load_edge(const slot_row *r, int64_t j0, int64_t Wo,
                                                                            aclDataType dtype)
{
    slot_step s;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i j = _mm256_add_epi32(_mm256_set1_epi32((int32_t)j0), lane);
    s.cur_live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)Wo), j);
    s.left_live = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(1), j),
                                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)Wo + 1), j));
    if (Wo >= 9) {
        /* 8 outputs from cur_from (left_from) hold j0 + l (j0 - 1 + l) for every live lane */
        const int64_t cur_from = j0 + 8 <= Wo ? j0 : Wo - 8;
        const int64_t left_from = j0 == 0 ? 0 : j0 + 7 <= Wo ? j0 - 1 : Wo - 8;
        const __m256i seven = _mm256_set1_epi32(7), zero = _mm256_setzero_si256();
        const __m256i cp = _mm256_min_epi32(
            _mm256_max_epi32(_mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)(j0 - cur_from))), zero), seven);
        const __m256i lp = _mm256_min_epi32(
            _mm256_max_epi32(_mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)(j0 - 1 - left_from))), zero), seven);
        const __m256i cur_index = _mm256_loadu_si256((const __m256i *)(r->index + cur_from));
        const __m256i left_index = _mm256_loadu_si256((const __m256i *)(r->index + left_from));
        s.cur_index = _mm256_and_si256(_mm256_permutevar8x32_epi32(cur_index, cp), s.cur_live);
        s.left_index = _mm256_and_si256(_mm256_permutevar8x32_epi32(left_index, lp), s.left_live);
        s.cur_grad = _mm256_and_ps(_mm256_permutevar8x32_ps(avx2_load_grad8(r->grad, cur_from, dtype), cp),
                                   _mm256_castsi256_ps(s.cur_live));
        s.left_grad = _mm256_and_ps(_mm256_permutevar8x32_ps(avx2_load_grad8(r->grad, left_from, dtype), lp),
                                    _mm256_castsi256_ps(s.left_live));
        return s;
    }
    int32_t cur[8], left[8];
    float cur_g[8], left_g[8];
    for (int l = 0; l < 8; l++) {
        const int64_t jl = j0 + l;
        const bool has_cur = jl < Wo, has_left = jl >= 1 && jl - 1 < Wo;
        cur[l] = has_cur ? r->index[jl] : 0;
        left[l] = has_left ? r->index[jl - 1] : 0;
        cur_g[l] = has_cur ? mp_load_f32(r->grad, jl, dtype) : 0.0f;
        left_g[l] = has_left ? mp_load_f32(r->grad, jl - 1, dtype) : 0.0f;
    }
    s.cur_index = _mm256_loadu_si256((const __m256i *)cur);
    s.left_index = _mm256_loadu_si256((const __m256i *)left);
    s.cur_grad = _mm256_loadu_ps(cur_g);
    s.left_grad = _mm256_loadu_ps(left_g);
    return s;
}

NN_AVX2 static inline __attribute__((always_inline)) slot_step slot_load(const slot_row *r, int64_t j0, int64_t Wo,
                                                                       bool EDGE, aclDataType dtype)
{
    if (EDGE) return slot_load_edge(r, j0, Wo, dtype);
    slot_step s;
    s.cur_index = _mm256_loadu_si256((const __m256i *)(r->index + j0));
    s.left_index = _mm256_loadu_si256((const __m256i *)(r->index + j0 - 1));
    s.cur_grad = avx2_load_grad8(r->grad, j0, dtype);
    s.left_grad = avx2_load_grad8(r->grad, j0 - 1, dtype);
    s.cur_live = s.left_live = _mm256_set1_epi32(-1);
    return s;
}

/* Slots 2j0 .. 2j0+15 of a finished row (cells in the output dtype, slot order) from its even
 * and odd slots. */
NN_AVX2 static inline __attribute__((always_inline)) void slot_store_row(unsigned char *slots, int64_t j0, __m256 even,
                                                                       __m256 odd, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) {
        const __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
        _mm256_storeu_ps((float *)slots + 2 * j0, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_storeu_ps((float *)slots + 2 * j0 + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        return;
    }
    /* rounded once with the scatter's rounding (store_narrow) */
    const bool fp16 = dtype == ACL_FLOAT16;
    const __m256i pairs = _mm256_or_si256(nn256_round_words(even, fp16), _mm256_slli_epi32(nn256_round_words(odd, fp16), 16));
    _mm256_storeu_si256((__m256i *)((uint16_t *)slots + 2 * j0), pairs);
}

/* All-ones in the lanes where c equals v. */
NN_AVX2 static inline __attribute__((always_inline)) __m256i slot_eq(__m256i c, int32_t v)
{
    return _mm256_cmpeq_epi32(c, _mm256_set1_epi32(v));
}

/* All-ones in the lanes whose column 2j - pW + dx lies in [0, W). */
NN_AVX2 static inline __attribute__((always_inline)) __m256i slot_column_ok(__m256i two_j, int32_t pW, int32_t dx,
                                                                          int32_t W)
{
    const __m256i column = _mm256_add_epi32(two_j, _mm256_set1_epi32(dx - pW));
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), column),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(W), column));
}

/* One step: slot pairs j0 .. j0+7 of the window row's three cell rows (row 0 into `first` when
 * FIRST, row 1 into `middle`, row 2 into the pending slots).  EDGE: a step at a row end (lanes
 * and columns checked); ROWS: a window row at the plane's top or bottom (cell rows checked).
 * Returns the lanes whose output's index named no cell of its window inside the plane; *nan
 * collects NaN gradients. */
NN_AVX2 static inline __attribute__((always_inline)) __m256i
slot_step_run(const slot_row *r, float *pend_even, float *pend_odd, unsigned char *first, unsigned char *middle,
              int64_t j0, int64_t Wo, int32_t W, int32_t pW, bool FIRST, bool EDGE, bool ROWS, __m256 *nan,
              aclDataType dtype)
{
    const slot_step s = slot_load(r, j0, Wo, EDGE, dtype);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i two_j = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(2 * j0)), _mm256_add_epi32(lane, lane));
    const __m256i at = _mm256_add_epi32(_mm256_set1_epi32(r->base), two_j); /* window j's first cell */
    const __m256i rel0 = _mm256_sub_epi32(s.cur_index, at);
    const __m256i rel1 = _mm256_sub_epi32(rel0, _mm256_set1_epi32(W)), rel2 = _mm256_sub_epi32(rel1, _mm256_set1_epi32(W));
    const __m256i left0 = _mm256_sub_epi32(s.left_index, _mm256_sub_epi32(at, _mm256_set1_epi32(2)));
    const __m256i left1 = _mm256_sub_epi32(left0, _mm256_set1_epi32(W)), left2 = _mm256_sub_epi32(left1, _mm256_set1_epi32(W));
    /* the cells' masks: row dy of the window, shared (even) or middle (odd) column */
    __m256i c_even = _mm256_set1_epi32(-1), c_odd = c_even, c_far = c_even, cur_ok = c_even, left_ok = c_even;
    if (EDGE) {
        c_even = slot_column_ok(two_j, pW, 0, W);
        c_odd = slot_column_ok(two_j, pW, 1, W);
        c_far = slot_column_ok(two_j, pW, 2, W);
        cur_ok = s.cur_live;
        left_ok = _mm256_and_si256(s.left_live, c_even); /* output j - 1's dx = 2 is column 2j - pW */
    }
    __m256i ok0 = _mm256_set1_epi32(-1), ok1 = ok0, ok2 = ok0;
    if (ROWS) ok0 = r->ok[0], ok1 = r->ok[1], ok2 = r->ok[2];
    const __m256i cur_even = _mm256_and_si256(cur_ok, c_even), cur_odd = _mm256_and_si256(cur_ok, c_odd);
    const __m256i g = _mm256_castps_si256(s.cur_grad), gl = _mm256_castps_si256(s.left_grad);
#define SLOT_PICK(grad, rel, v, valid, ok) \
    _mm256_castsi256_ps(_mm256_and_si256(grad, _mm256_and_si256(_mm256_and_si256(slot_eq(rel, v), valid), ok)))
    const __m256 l0 = SLOT_PICK(gl, left0, 2, left_ok, ok0), l1 = SLOT_PICK(gl, left1, 2, left_ok, ok1);
    const __m256 l2 = SLOT_PICK(gl, left2, 2, left_ok, ok2);
    const __m256 e0 = SLOT_PICK(g, rel0, 0, cur_even, ok0), o0 = SLOT_PICK(g, rel0, 1, cur_odd, ok0);
    const __m256 e1 = SLOT_PICK(g, rel1, 0, cur_even, ok1), o1 = SLOT_PICK(g, rel1, 1, cur_odd, ok1);
    const __m256 e2 = SLOT_PICK(g, rel2, 0, cur_even, ok2), o2 = SLOT_PICK(g, rel2, 1, cur_odd, ok2);
#undef SLOT_PICK
    /* the index names a cell of the window inside the plane: dx <= 2 in one of its rows */
    __m256i named;
    if (EDGE) {
#define SLOT_NAMED_ROW(rel, ok)                                                                         \
    _mm256_and_si256(ok, _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(slot_eq(rel, 0), c_even),     \
                                                         _mm256_and_si256(slot_eq(rel, 1), c_odd)),     \
                                         _mm256_and_si256(slot_eq(rel, 2), c_far)))
        named = _mm256_or_si256(_mm256_or_si256(SLOT_NAMED_ROW(rel0, ok0), SLOT_NAMED_ROW(rel1, ok1)),
                                SLOT_NAMED_ROW(rel2, ok2));
#undef SLOT_NAMED_ROW
    } else {
        const __m256i two = _mm256_set1_epi32(2);
        named = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(ok0, _mm256_cmpeq_epi32(_mm256_min_epu32(rel0, two), rel0)),
                            _mm256_and_si256(ok1, _mm256_cmpeq_epi32(_mm256_min_epu32(rel1, two), rel1))),
            _mm256_and_si256(ok2, _mm256_cmpeq_epi32(_mm256_min_epu32(rel2, two), rel2)));
    }
    *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(s.cur_grad, s.cur_grad, _CMP_UNORD_Q));
    const __m256 zero = _mm256_setzero_ps();
    if (FIRST) {
        const __m256 pe = _mm256_loadu_ps(pend_even + j0), po = _mm256_loadu_ps(pend_odd + j0);
        slot_store_row(first, j0, _mm256_add_ps(_mm256_add_ps(pe, l0), e0), _mm256_add_ps(po, o0), dtype);
    }
    slot_store_row(middle, j0, _mm256_add_ps(_mm256_add_ps(zero, l1), e1), _mm256_add_ps(zero, o1), dtype);
    _mm256_storeu_ps(pend_even + j0, _mm256_add_ps(_mm256_add_ps(zero, l2), e2));
    _mm256_storeu_ps(pend_odd + j0, _mm256_add_ps(zero, o2));
    return _mm256_andnot_si256(named, cur_ok);
}

/* Slot pairs [0, Wo] of one window row; returns the lanes of outputs whose index named no cell
 * of their window inside the plane.  Steps 1 .. with both outputs of each lane inside the row
 * and their columns too take the unchecked form. */
NN_AVX2 static inline __attribute__((always_inline)) __m256i
slot_window_row(const slot_row *r, float *pend_even, float *pend_odd, unsigned char *first, unsigned char *middle,
                int64_t Wo, int64_t inner_end, int32_t W, int32_t pW, bool FIRST, bool ROWS, __m256 *nan,
                aclDataType dtype)
{
    __m256i bad = slot_step_run(r, pend_even, pend_odd, first, middle, 0, Wo, W, pW, FIRST, true, ROWS, nan, dtype);
    int64_t j0 = 8;
    for (; j0 + 8 <= inner_end; j0 += 8)
        bad = _mm256_or_si256(bad, slot_step_run(r, pend_even, pend_odd, first, middle, j0, Wo, W, pW, FIRST, false,
                                                 ROWS, nan, dtype));
    for (; j0 <= Wo; j0 += 8)
        bad = _mm256_or_si256(bad, slot_step_run(r, pend_even, pend_odd, first, middle, j0, Wo, W, pW, FIRST, true,
                                                 ROWS, nan, dtype));
    return bad;
}

/* Slots [0, 2Wo + 2) of the pending row, finished: nothing below adds to it. */
NN_AVX2 static inline __attribute__((always_inline)) void slot_finish_pending(const float *pend_even,
                                                                            const float *pend_odd,
                                                                            unsigned char *row, int64_t Wo,
                                                                            aclDataType dtype)
{
    for (int64_t j0 = 0; j0 <= Wo; j0 += 8)
        slot_store_row(row, j0, _mm256_loadu_ps(pend_even + j0), _mm256_loadu_ps(pend_odd + j0), dtype);
}

NN_AVX2 static inline __attribute__((always_inline)) bool
slots_avx2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad, const unsigned char *mask,
                 float *scratch, aclDataType dtype)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width, pH = g->pad_h, pW = g->pad_w;
    const int64_t elem = dtype == ACL_FLOAT ? 4 : 2, span = nn_mp_bw_slots_avx2_span(Wo);
    float *pend_even = scratch, *pend_odd = scratch + span;
    unsigned char *first = (unsigned char *)(scratch + 2 * span), *middle = (unsigned char *)(scratch + 4 * span);
    nn_line_stage st = {stage_buffer(scratch + 6 * span, W, AVX2_STAGE_FLUSH_BYTES), gi, 0, p->stream_stores};
    memset(pend_even, 0, (size_t)(2 * span) * sizeof(float));
    /* steps [8, inner_end) have outputs j - 1 and j and their columns inside the row: the last
     * output whose far column 2j - pW + 2 is in the row, plus one, at most Wo */
    int64_t inner_end = (W - 3 + pW) / 2 + 1;
    if (inner_end > Wo) inner_end = Wo;
    __m256i bad = _mm256_setzero_si256();
    __m256 nan = _mm256_setzero_ps();
    int64_t next_row = 0; /* rows [0, next_row) are staged */
    for (int64_t oh = 0; oh < Ho; oh++) {
        const int64_t top = 2 * oh - pH;
        const slot_row r = {grad + oh * Wo * elem, (const unaligned_i32 *)mask + oh * Wo,
                            (int32_t)((uint32_t)top * (uint32_t)W - (uint32_t)pW),
                            {_mm256_set1_epi32(top >= 0 ? -1 : 0), _mm256_set1_epi32(top + 1 < H ? -1 : 0),
                             _mm256_set1_epi32(top + 2 < H ? -1 : 0)}};
        /* the index and gradient rows SLOT_PREFETCH_ROWS window rows ahead (past the plane: the
         * next plane's first rows; a prefetch past the tensor does not fault) */
        nn_prefetch_bytes((const unaligned_i32 *)mask + (oh + SLOT_PREFETCH_ROWS) * Wo, (size_t)(Wo * 4));
        nn_prefetch_bytes(grad + (oh + SLOT_PREFETCH_ROWS) * Wo * elem, (size_t)(Wo * elem));
        if (top >= 0 && top + 2 < H)
            bad = _mm256_or_si256(bad, slot_window_row(&r, pend_even, pend_odd, first, middle, Wo, inner_end,
                                                       (int32_t)W, (int32_t)pW, true, false, &nan, dtype));
        else if (top >= 0)
            bad = _mm256_or_si256(bad, slot_window_row(&r, pend_even, pend_odd, first, middle, Wo, inner_end,
                                                       (int32_t)W, (int32_t)pW, true, true, &nan, dtype));
        else
            bad = _mm256_or_si256(bad, slot_window_row(&r, pend_even, pend_odd, first, middle, Wo, inner_end,
                                                       (int32_t)W, (int32_t)pW, false, true, &nan, dtype));
        if (top >= 0) memcpy(nn_line_stage_at(&st, top * W * elem), first + pW * elem, (size_t)(W * elem));
        if (top + 1 < H) memcpy(nn_line_stage_at(&st, (top + 1) * W * elem), middle + pW * elem, (size_t)(W * elem));
        next_row = top + 2 < H ? top + 2 : H;
        const int64_t done = next_row * W * elem;
        if (done - st.written >= AVX2_STAGE_FLUSH_BYTES) nn_line_stage_flush(&st, done, false);
    }
    if (next_row < H) { /* the last window row's third row */
        slot_finish_pending(pend_even, pend_odd, first, Wo, dtype);
        memcpy(nn_line_stage_at(&st, next_row * W * elem), first + pW * elem, (size_t)(W * elem));
        next_row++;
    }
    for (; next_row < H; next_row++) { /* rows below every window */
        memset(nn_line_stage_at(&st, next_row * W * elem), 0, (size_t)(W * elem));
        const int64_t done = (next_row + 1) * W * elem;
        if (done - st.written >= AVX2_STAGE_FLUSH_BYTES) nn_line_stage_flush(&st, done, false);
    }
    nn_line_stage_flush(&st, H * W * elem, true);
    return _mm256_testz_si256(bad, bad) && _mm256_movemask_ps(nan) == 0;
}

bool nn_mp_bw_slots_3x3s2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                     const unsigned char *mask, float *scratch)
{
    if (p->dtype == ACL_FLOAT) return slots_avx2_plane(p, gi, grad, mask, scratch, ACL_FLOAT);
    if (p->dtype == ACL_BF16) return slots_avx2_plane(p, gi, grad, mask, scratch, ACL_BF16);
    return slots_avx2_plane(p, gi, grad, mask, scratch, ACL_FLOAT16);
}
#else /* not x86-64: never chosen, defined for the link */
bool nn_mp_bw_tiled_2x2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                   const unsigned char *mask, float *scratch)
{
    (void)p, (void)gi, (void)grad, (void)mask, (void)scratch;
    return false;
}

bool nn_mp_bw_slots_3x3s2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                     const unsigned char *mask, float *scratch)
{
    (void)p, (void)gi, (void)grad, (void)mask, (void)scratch;
    return false;
}
#endif /* NN_HAVE_X86_SIMD */
