/*
 * max_pool_fw_general.c - the max-pool forward for the geometries the tuned kernel
 * (max_pool_fw_portable.c) does not take: dilation > 1, NHWC storage, planes of 2^31 cells or
 * more (aclnnMaxPool2dWithIndices on Ascend950).  Any CPU; one output at a time, 64-bit index
 * arithmetic.
 *
 * Each output scans its window as PyTorch's CPU kernel and CANN's MaxPoolWithArgmaxV3 SIMT
 * kernel do: rows hstart, hstart+dH, ... below min(hstart + (kH-1)*dH + 1, H), where a negative
 * start is moved up by whole dilation steps (the same for columns); the best starts at -inf with
 * the index of the first in-range cell, and a cell is taken when it is greater than the best or
 * NaN - so the first maximum wins and a NaN always does (the last NaN of a window).  The value is
 * copied bit for bit from the winning cell.  A window without any in-range cell (possible with
 * dilation and ceil mode) gives -inf and the index hstart*W + wstart, as both reference kernels
 * compute it.  Indices are flat h*W + w in the plane, in NHWC too.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_fw.h"

/* The first in-range coordinate of a window start: a negative start moves up in steps of d. */
static inline int64_t first_in_range(int64_t start, int64_t d)
{
    return start >= 0 ? start : start + nn_ceil_div(-start, d) * d;
}

/* -inf in the output dtype (fp32, fp16 or bf16 bits). */
static void store_neg_inf(unsigned char *dst, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) {
        const float v = -INFINITY;
        memcpy(dst, &v, 4);
    } else {
        const uint16_t bits = dtype == ACL_FLOAT16 ? 0xFC00u : 0xFF80u;
        memcpy(dst, &bits, 2);
    }
}

static void store_index(const fw_plan *p, unsigned char *indices, int64_t at, int64_t index)
{
    if (p->index_kind == MP_INDEX_INT64) {
        memcpy(indices + at * 8, &index, 8);
    } else {
        const int32_t v = (int32_t)index; /* a plane past 2^31 cells needs INT64 indices */
        memcpy(indices + at * 4, &v, 4);
    }
}

/* One output: the plane's cells are at plane_in + (h*W + w) * step elements. */
static void pool_one(const fw_ctx *c, const unsigned char *plane_in, int64_t step, int64_t oh, int64_t ow,
                     int64_t out_at)
{
    const fw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const size_t elem = nn_dtype_size(p->dtype);
    const int64_t H = g->height, W = g->width, dH = g->dilation_h, dW = g->dilation_w;
    const int64_t h_start = oh * g->stride_h - g->pad_h, w_start = ow * g->stride_w - g->pad_w;
    const int64_t h_end = h_start + (g->kernel_h - 1) * dH + 1 < H ? h_start + (g->kernel_h - 1) * dH + 1 : H;
    const int64_t w_end = w_start + (g->kernel_w - 1) * dW + 1 < W ? w_start + (g->kernel_w - 1) * dW + 1 : W;
    const int64_t h0 = first_in_range(h_start, dH), w0 = first_in_range(w_start, dW);
    float best = -INFINITY;
    int64_t arg = h0 * W + w0;
    for (int64_t h = h0; h < h_end; h += dH)
        for (int64_t w = w0; w < w_end; w += dW) {
            const float v = mp_load_f32(plane_in, (h * W + w) * step, p->dtype);
            if (v > best || v != v) {
                best = v;
                arg = h * W + w;
            }
        }
    unsigned char *dst = c->out + out_at * (int64_t)elem;
    if (h0 < h_end && w0 < w_end)
        memcpy(dst, plane_in + arg * step * (int64_t)elem, elem);
    else
        store_neg_inf(dst, p->dtype);
    store_index(p, c->indices, out_at, arg);
}

int64_t nn_mp_fw_general_units(const mp_geometry *g)
{
    return g->channels_last ? g->batch * g->out_height : mp_planes(g);
}

/* NCHW: unit = one plane.  NHWC: unit = one output row (n, oh) over every ow and channel, so the
 * channel loop runs along memory. */
void nn_mp_fw_general(void *vctx, int64_t unit_begin, int64_t unit_end)
{
    const fw_ctx *c = (const fw_ctx *)vctx;
    const mp_geometry *g = &c->plan->g;
    const int64_t elem = (int64_t)nn_dtype_size(c->plan->dtype);
    const int64_t HW = g->height * g->width, Ho = g->out_height, Wo = g->out_width, C = g->channels;
    for (int64_t u = unit_begin; u < unit_end; ++u) {
        if (!g->channels_last) {
            const unsigned char *plane_in = c->self + u * HW * elem;
            for (int64_t oh = 0; oh < Ho; ++oh)
                for (int64_t ow = 0; ow < Wo; ++ow) pool_one(c, plane_in, 1, oh, ow, (u * Ho + oh) * Wo + ow);
            continue;
        }
        const int64_t n = u / Ho, oh = u % Ho;
        for (int64_t ow = 0; ow < Wo; ++ow)
            for (int64_t ch = 0; ch < C; ++ch)
                pool_one(c, c->self + (n * HW * C + ch) * elem, C, oh, ow, ((n * Ho + oh) * Wo + ow) * C + ch);
    }
}
