/*
 * mask_v1.c - the V1 bit mask and FLOAT-as-FLOAT16 paths of the max-pool kernels (mask_v1.h).
 */
#include <string.h>

#include "kernels/max_pool/mask_v1.h"

/* fp32 -> the nearest fp16 value, as fp32: what op_api's cast to FLOAT16 and back leaves of a
 * value.  Only Ascend910 computes FLOAT as FLOAT16, and it has only saturation mode, so the cast
 * saturates: beyond +-65504 (and +-inf) gives +-65504, NaN gives 0 (docs/precision.md,
 * "Overflow mode"). */
static void round_to_fp16(const float *src, float *dst, int64_t count)
{
    for (int64_t i = 0; i < count; ++i) dst[i] = nn_f16_to_f32(nn_f32_to_f16_sat(src[i]));
}

/* ------------------------------------------------------------------------------------------ */
/* Forward                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* A plane (input or gradOutput) as fp32: the data itself (FLOAT), or widened into `scratch`, or
 * (FLOAT with fp16_compute) rounded to fp16 values into `scratch`. */
static const float *values_as_f32(aclDataType dtype, bool fp16_compute, const unsigned char *src, float *scratch,
                                  int64_t count)
{
    if (dtype == ACL_FLOAT && !fp16_compute) return (const float *)src;
    if (dtype == ACL_FLOAT)
        round_to_fp16((const float *)src, scratch, count);
    else if (dtype == ACL_FLOAT16)
        nn_f16_to_f32_n((const uint16_t *)src, scratch, (size_t)count);
    else
        nn_bf16_to_f32_n((const uint16_t *)src, scratch, (size_t)count);
    return scratch;
}

/* out[o] = the winner: FLOAT from the values pooled (so fp16_compute stores the fp16 value
 * widened; otherwise these are the input's own bits), 16-bit dtypes copied bit for bit. */
static void store_out(const fw_plan *p, const unsigned char *in, const float *vals, unsigned char *out,
                      const int32_t *argmax, int64_t count)
{
    if (p->dtype == ACL_FLOAT) {
        float *dst = (float *)out;
        for (int64_t o = 0; o < count; ++o) dst[o] = vals[argmax[o]];
        return;
    }
    const uint16_t *src = (const uint16_t *)in;
    uint16_t *dst = (uint16_t *)out;
    for (int64_t o = 0; o < count; ++o) dst[o] = src[argmax[o]];
}

/* Sets bit c0 of word o in row k (the winner's window cell) for every output of one plane.
 * `rows` is the group's first row; the rows were zeroed. */
static void set_mask_bits(const mp_geometry *g, unsigned char *rows, int64_t row_bytes, int c0,
                          const int32_t *argmax)
{
    const int64_t W = g->width, Wo = g->out_width;
    const uint16_t bit = (uint16_t)(1u << c0);
    for (int64_t oh = 0; oh < g->out_height; ++oh) {
        const int64_t ih0 = oh * g->stride_h - g->pad_h;
        for (int64_t ow = 0; ow < Wo; ++ow) {
            const int64_t o = oh * Wo + ow, at = argmax[o];
            const int64_t i = at / W - ih0, j = at % W - (ow * g->stride_w - g->pad_w);
            unsigned char *word = rows + (i * g->kernel_w + j) * row_bytes + o * 2;
            uint16_t w;
            memcpy(&w, word, 2); /* x86-64 is little-endian: host words are the mask's bytes */
            w |= bit;
            memcpy(word, &w, 2);
        }
    }
}

/* One group (n, c1): its up to 16 planes, and (MP_INDEX_MASK_V1) its kH*kW mask rows. */
static void pool_group(const fw_ctx *c, int64_t group, float *widened, int32_t *argmax, float *best)
{
    const fw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t C1 = (g->channels + 15) / 16, n = group / C1, c1 = group % C1;
    const int64_t HW = g->height * g->width, P = g->out_height * g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype), row_bytes = mp_mask_row_bytes(g);
    unsigned char *rows = c->indices + group * g->kernel_h * g->kernel_w * row_bytes;
    const bool mask = p->index_kind == MP_INDEX_MASK_V1;
    if (mask) memset(rows, 0, (size_t)(g->kernel_h * g->kernel_w * row_bytes));
    const int64_t channels = g->channels - 16 * c1 < 16 ? g->channels - 16 * c1 : 16;
    for (int c0 = 0; c0 < channels; ++c0) {
        const int64_t plane = n * g->channels + 16 * c1 + c0;
        const unsigned char *in = c->self + plane * HW * elem;
        const float *vals = values_as_f32(p->dtype, p->fp16_compute, in, widened, HW);
        nn_mp_fw_pool_plane(vals, g, best, argmax);
        store_out(p, in, vals, c->out + plane * P * elem, argmax, P);
        if (mask) set_mask_bits(g, rows, row_bytes, c0, argmax);
    }
}

void nn_mp_fw_v1_chunks(void *vctx, int64_t chunk_begin, int64_t chunk_end)
{
    const fw_ctx *c = (const fw_ctx *)vctx;
    const fw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t groups = mp_channel_groups(g), HW = g->height * g->width, P = g->out_height * g->out_width;
    const bool widen = p->dtype != ACL_FLOAT || p->fp16_compute;
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        float *widened = c->scratch + chunk * p->scratch_floats;
        int32_t *argmax = (int32_t *)(widened + (widen ? HW : 0));
        float *best = (float *)(argmax + P);
        const int64_t first = mp_chunk_first(groups, p->chunks, chunk);
        const int64_t last = mp_chunk_first(groups, p->chunks, chunk + 1);
        for (int64_t group = first; group < last; ++group) pool_group(c, group, widened, argmax, best);
        if (p->index_kind == MP_INDEX_MASK_V1) {
            /* This chunk's share of the container past the N*C1*kH*kW rows. */
            mp_zero_tail_share(c->indices, mp_v1_mask_bytes(g), p->index_bytes, groups, first, last);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Backward                                                                                    */
/* ------------------------------------------------------------------------------------------ */

void nn_mp_bw_v1_layout_scratch(bw_plan *plan)
{
    const mp_geometry *g = &plan->g;
    const int64_t HW = g->height * g->width, P = g->out_height * g->out_width;
    plan->widened_offset = (HW + 15) / 16 * 16;
    plan->band_offset = plan->widened_offset + (P + 15) / 16 * 16;
    plan->scratch_floats = plan->band_offset;
}

/* Adds each output's gradient to every in-range window cell whose bit c0 is set in its row, in
 * increasing output position.  A bit naming a padding cell has no input cell: it is dropped. */
static void scatter_bits(const mp_geometry *g, const unsigned char *rows, int64_t row_bytes, int c0,
                         const float *grad, float *tile)
{
    const int64_t H = g->height, W = g->width, Wo = g->out_width;
    for (int64_t oh = 0; oh < g->out_height; ++oh) {
        const int64_t ih0 = oh * g->stride_h - g->pad_h;
        for (int64_t ow = 0; ow < Wo; ++ow) {
            const int64_t o = oh * Wo + ow, iw0 = ow * g->stride_w - g->pad_w;
            const unsigned char *cell = rows + o * 2;
            for (int64_t i = 0; i < g->kernel_h; ++i) {
                const int64_t ih = ih0 + i;
                for (int64_t j = 0; j < g->kernel_w; ++j, cell += row_bytes) {
                    uint16_t w;
                    memcpy(&w, cell, 2);
                    const int64_t iw = iw0 + j;
                    if (((w >> c0) & 1u) && ih >= 0 && ih < H && iw >= 0 && iw < W) tile[ih * W + iw] += grad[o];
                }
            }
        }
    }
}

/* Writes the finished fp32 tile once, in gradInput's dtype (fp16_compute: the fp16 value as fp32). */
static void store_tile(const bw_plan *p, const float *tile, unsigned char *gi, int64_t count)
{
    if (p->dtype == ACL_FLOAT && p->fp16_compute)
        round_to_fp16(tile, (float *)gi, count);
    else if (p->dtype == ACL_FLOAT)
        memcpy(gi, tile, (size_t)count * sizeof(float));
    else if (p->dtype == ACL_FLOAT16)
        nn_f32_to_f16_n(tile, (uint16_t *)gi, (size_t)count);
    else
        nn_f32_to_bf16_n(tile, (uint16_t *)gi, (size_t)count);
}

void nn_mp_bw_v1_chunks(void *vctx, int64_t chunk_begin, int64_t chunk_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const bw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t planes = mp_planes(g), C1 = (g->channels + 15) / 16;
    const int64_t HW = g->height * g->width, P = g->out_height * g->out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype), row_bytes = mp_mask_row_bytes(g);
    const int64_t K = g->kernel_h * g->kernel_w;
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        float *tile = c->scratch + chunk * p->scratch_floats, *widened = tile + p->widened_offset;
        const int64_t first = mp_chunk_first(planes, p->chunks, chunk);
        const int64_t last = mp_chunk_first(planes, p->chunks, chunk + 1);
        for (int64_t plane = first; plane < last; ++plane) {
            const int64_t n = plane / g->channels, ch = plane % g->channels;
            const unsigned char *rows = c->indices + ((n * C1 + ch / 16) * K) * row_bytes;
            const float *grad = values_as_f32(p->dtype, p->fp16_compute, c->grad_out + plane * P * elem, widened, P);
            memset(tile, 0, (size_t)HW * sizeof(float));
            scatter_bits(g, rows, row_bytes, (int)(ch % 16), grad, tile);
            store_tile(p, tile, c->grad_in + plane * HW * elem, HW);
        }
    }
}

void nn_mp_bw_round_fp16_planes(void *vctx, int64_t plane_begin, int64_t plane_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const mp_geometry *g = &c->plan->g;
    const int64_t HW = g->height * g->width;
    float *gi = (float *)c->grad_in;
    round_to_fp16(gi + plane_begin * HW, gi + plane_begin * HW, (plane_end - plane_begin) * HW);
}
