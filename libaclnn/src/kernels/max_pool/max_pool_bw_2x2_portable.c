/*
 * max_pool_bw_2x2_portable.c - the MaxPool2dWithMask backward's 2x2 stride-2 direct write in plain
 * C (max_pool_bw.h), for the CPUs without the AVX2 / AVX-512 forms: aarch64, baseline x86-64,
 * `ACLNN_NO_SIMD=1`.  Run only when the plan's tiled_2x2_portable flag is set.
 *
 * With kernel = stride = 2 and no padding each cell lies in at most one window, so a cell is
 * `0.0f + g` of the output whose index names it, and +0.0 otherwise - the tile scatter's value
 * (its tile starts at +0.0 and gets that one add), so the bits are the same; fp16/bf16 are that
 * sum rounded back, which only turns -0.0 into +0.0 and quiets a signalling NaN.  A row pair is
 * built in the scratch, then copied out (non-temporal when the launch streams).  The loops are
 * written as selects on integer bits, which the compiler vectorises (SSE2; NEON, where the two
 * interleaved cells of a row are one ST2); the tile scatter spent most of its time on its
 * per-output adds and the tile's store and clear.
 */
#include <stdint.h>
#include <string.h>

#include "base/nn_half_impl.h"
#include "kernels/max_pool/max_pool_bw.h"

/* The bits a matching output writes to its cell: 0.0f + g, rounded back for fp16/bf16.  The
 * sum of a bf16 value and +0.0 is a bf16 value again (the value, +0.0, or the NaN quieted in its
 * top half), so its top half is the rounded result, as in the AVX2 form. */
static inline __attribute__((always_inline)) uint32_t cell_bits(const void *grad, int64_t o, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) {
        float g;
        memcpy(&g, (const float *)grad + o, sizeof g);
        return nn_half_f32_bits(g + 0.0f);
    }
    const uint16_t h = ((const uint16_t *)grad)[o];
    if (dtype == ACL_FLOAT16) return nn_half_f32_to_f16(nn_half_f16_to_f32(h) + 0.0f);
    return nn_half_f32_bits(nn_half_bf16_to_f32(h) + 0.0f) >> 16;
}

static inline __attribute__((always_inline)) void put_cell(void *row, int64_t c, uint32_t bits, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) ((uint32_t *)row)[c] = bits;
    else ((uint16_t *)row)[c] = (uint16_t)bits;
}

/* Outputs [0, n) of one window row into the cells of row0 and row1 (both scratch), whose first
 * cell is plane position `base`; the index of output ow names cell rel = index - (base + 2ow):
 * 0 and 1 in row0, W and W + 1 in row1 (ROW1: row1 is in the plane).  Returns the number of
 * outputs whose index named a cell of their window. */
static inline __attribute__((always_inline)) int64_t
window_row(unsigned char *restrict row0, unsigned char *restrict row1, const void *restrict grad,
           const unaligned_i32 *restrict index, int64_t n, uint32_t base, uint32_t W, bool ROW1,
           aclDataType dtype)
{
    uint32_t matched = 0; /* 32-bit lanes: no widening in the vector loop (n < 2^31) */
    for (int64_t ow = 0; ow < n; ow++) {
        /* unsigned: any int32 index, however stray, gives a defined rel */
        const uint32_t rel = (uint32_t)index[ow] - (base + 2u * (uint32_t)ow);
        const uint32_t bits = cell_bits(grad, ow, dtype);
        const uint32_t at0 = rel == 0, at1 = rel == 1, at2 = ROW1 && rel == W, at3 = ROW1 && rel == W + 1;
        put_cell(row0, 2 * ow, bits & (0u - at0), dtype);
        put_cell(row0, 2 * ow + 1, bits & (0u - at1), dtype);
        put_cell(row1, 2 * ow, bits & (0u - at2), dtype);
        put_cell(row1, 2 * ow + 1, bits & (0u - at3), dtype);
        matched += at0 | at1 | at2 | at3;
    }
    return matched;
}

/* The last output of a row whose window's right column lies past the row (odd W, ceilMode): its
 * left column only. */
static inline __attribute__((always_inline)) int64_t
left_column_only(unsigned char *row0, unsigned char *row1, const void *grad, const unaligned_i32 *index,
                 int64_t ow, uint32_t base, uint32_t W, bool row1_in_plane, aclDataType dtype)
{
    const uint32_t rel = (uint32_t)index[ow] - (base + 2u * (uint32_t)ow);
    const uint32_t bits = cell_bits(grad, ow, dtype);
    const uint32_t at0 = rel == 0, at2 = row1_in_plane && rel == W;
    put_cell(row0, 2 * ow, bits & (0u - at0), dtype);
    put_cell(row1, 2 * ow, bits & (0u - at2), dtype);
    return at0 | at2;
}

/* Writes rows ih and ih + 1 (when row1_in_plane) of gradInput from the row pair built in `pair`. */
static void copy_rows_out(const bw_plan *p, unsigned char *gi, const unsigned char *pair, int64_t ih,
                          bool row1_in_plane, int64_t elem)
{
    const int64_t W = p->g.width;
    const size_t bytes = (size_t)((row1_in_plane ? 2 : 1) * W * elem);
    if (p->stream_stores) nn_copy_row_nt(gi + ih * W * elem, pair, bytes);
    else memcpy(gi + ih * W * elem, pair, bytes);
}

static inline __attribute__((always_inline)) bool
tiled_rows(const bw_plan *p, unsigned char *gi, const unsigned char *grad, const unsigned char *mask,
           unsigned char *pair, aclDataType dtype)
{
    const mp_geometry *g = &p->g;
    const int64_t H = g->height, W = g->width, Ho = g->out_height, Wo = g->out_width;
    const int64_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t cell_end = W < 2 * Wo ? W : 2 * Wo; /* cells inside a window: c < cell_end */
    const int64_t whole = 2 * Wo > W ? Wo - 1 : Wo;  /* outputs with both columns in the row */
    unsigned char *row0 = pair, *row1 = pair + W * elem;
    const unaligned_i32 *index = (const unaligned_i32 *)mask;
    int64_t matched = 0;
    memset(pair, 0, (size_t)(2 * W * elem));          /* cells [cell_end, W) stay +0.0 */
    for (int64_t ih = 0; ih < H; ih += 2) {
        const int64_t oh = ih / 2;
        const bool row1_in_plane = ih + 1 < H;
        if (oh < Ho) {
            const unsigned char *grow = grad + oh * Wo * elem;
            const unaligned_i32 *irow = index + oh * Wo;
            const uint32_t base = (uint32_t)(ih * W);
            matched += row1_in_plane ? window_row(row0, row1, grow, irow, whole, base, (uint32_t)W, true, dtype)
                                     : window_row(row0, row1, grow, irow, whole, base, (uint32_t)W, false, dtype);
            if (whole < Wo)
                matched += left_column_only(row0, row1, grow, irow, whole, base, (uint32_t)W, row1_in_plane, dtype);
        } else { /* odd H, ceilMode off: the last row is in no window */
            memset(pair, 0, (size_t)(cell_end * elem));
        }
        copy_rows_out(p, gi, pair, ih, row1_in_plane, elem);
    }
    return matched == Ho * Wo;
}

bool nn_mp_bw_tiled_2x2_plane_portable(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                       const unsigned char *mask, float *scratch)
{
    unsigned char *pair = (unsigned char *)scratch;
    if (p->dtype == ACL_FLOAT) return tiled_rows(p, gi, grad, mask, pair, ACL_FLOAT);
    if (p->dtype == ACL_BF16) return tiled_rows(p, gi, grad, mask, pair, ACL_BF16);
    return tiled_rows(p, gi, grad, mask, pair, ACL_FLOAT16);
}
