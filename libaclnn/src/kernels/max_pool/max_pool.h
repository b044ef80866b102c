/*
 * max_pool.h - what the max-pool kernels (forward: max_pool_fw.h, backward: max_pool_bw.h) share:
 * the geometry of one call, frozen at phase 1, and how planes are split among threads.
 */
#ifndef NN_KERNELS_MAX_POOL_H
#define NN_KERNELS_MAX_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_base.h"

/* The geometry of one pooling call, frozen at phase 1. */
typedef struct mp_geometry {
    int64_t batch, channels, height, width;     /* input, logical N, C, H, W (N = 1 for 3-D) */
    int64_t out_height, out_width;              /* pooled Ho, Wo */
    int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
    bool ceil_mode;
    bool is_3d;
    /* aclnnMaxPool2dWithIndices[Backward] on Ascend950 only (1, false, false elsewhere): */
    int64_t dilation_h, dilation_w;
    bool channels_last; /* NHWC storage: element (n, c, h, w) at ((n*H + h)*W + w)*C + c */
    bool large_planes;  /* H*W or Ho*Wo exceeds INT32_MAX (Ascend950 has no INT_MAX check) */
} mp_geometry;

static inline bool mp_is_1x1(const mp_geometry *g) { return g->kernel_h == 1 && g->kernel_w == 1; }
static inline int64_t mp_planes(const mp_geometry *g) { return g->batch * g->channels; }

/* Whether the geometry is the one the tuned kernels assume: dilation 1, NCHW planes, 32-bit
 * plane-local indices.  Anything else runs the general kernels (dilation, NHWC). */
static inline bool mp_is_plain(const mp_geometry *g)
{
    return g->dilation_h == 1 && g->dilation_w == 1 && !g->channels_last && !g->large_planes;
}

/* Element offset of output position o (= oh*Wo + ow) of plane (n*C + c), in either layout. */
static inline int64_t mp_out_offset(const mp_geometry *g, int64_t plane, int64_t o)
{
    const int64_t P = g->out_height * g->out_width;
    if (!g->channels_last) return plane * P + o;
    return ((plane / g->channels) * P + o) * g->channels + plane % g->channels;
}

/* Splits [0, planes) into `chunks` contiguous runs; run i is [first(i), first(i+1)). */
static inline int64_t mp_chunk_first(int64_t planes, int64_t chunks, int64_t i)
{
    return (int64_t)(((__int128)planes * i) / chunks);
}

/* Bytes of the INT8 mask container's last dimension: ceil(Ho*Wo/16) blocks of 16 uint16 words
 * re-typed as int8, plus one spare block.  The V1 mask's rows and the 1x1 pattern's slabs are
 * rows of this width. */
static inline int64_t mp_mask_row_bytes(const mp_geometry *g)
{
    return ((g->out_height * g->out_width + 15) / 16 + 1) * 32;
}

/* 16-channel groups (n, c1 = c/16): the units of the V1 mask and of the 1x1 pattern. */
static inline int64_t mp_channel_groups(const mp_geometry *g) { return g->batch * ((g->channels + 15) / 16); }

/* Zeroes the share of units [first, last) (out of `units`) of a mask container's tail
 * [tail_start, total): each chunk clears its own part of what no kernel writes. */
static inline void mp_zero_tail_share(unsigned char *container, int64_t tail_start, int64_t total, int64_t units,
                                      int64_t first, int64_t last)
{
    const int64_t tail = total - tail_start;
    const int64_t a = (int64_t)(((__int128)tail * first) / units);
    const int64_t b = (int64_t)(((__int128)tail * last) / units);
    memset(container + tail_start + a, 0, (size_t)(b - a));
}

/* Element `at` of a FLOAT, FLOAT16 or BF16 array as fp32 (exact): the general paths' scalar read. */
static inline float mp_load_f32(const unsigned char *base, int64_t at, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) {
        float v;
        memcpy(&v, base + at * 4, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, base + at * 2, 2);
    return dtype == ACL_FLOAT16 ? nn_f16_to_f32(h) : nn_bf16_to_f32(h);
}

#endif /* NN_KERNELS_MAX_POOL_H */
