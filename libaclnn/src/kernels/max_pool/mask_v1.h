/*
 * mask_v1.h - the max-pool mask of MaxPoolWithArgmaxV1 / MaxPoolGradWithArgmaxV1, the kernels
 * CANN runs on Ascend910 and Ascend310P for every kernel size, and FLOAT computed as FLOAT16
 * (Ascend910): docs/compatibility.md, "MaxPool2dWithMask on Ascend910 and Ascend310P".
 *
 * The user's INT8 container [N, C, kH*kW, W8], W8 = (G+1)*32 bytes, G = ceil(P/16), P = Ho*Wo,
 * is read as rows of (G+1)*16 little-endian uint16 words:
 *
 *   row r = (n*C1 + c1)*kH*kW + k     C1 = ceil(C/16), k = i*kW + j (window cell, row-major)
 *   word p = oh*Wo + ow               bit c0 set: window cell k of output p holds the maximum of
 *                                     channel c = 16*c1 + c0 (the first maximum in k order)
 *
 * Everything else - words [P, (G+1)*16) of a row, the bits of channels c >= C, the rows past
 * N*C1*kH*kW - is zero.  A 1x1 kernel keeps the 0xFFFF pattern (nn_mp_fw_legacy_mask).
 *
 * The forward splits the work into 16-channel groups (n, c1), so one thread owns all the words
 * it writes.  The backward scatters each gradOutput element to every in-range cell whose bit is
 * set, summing in fp32 in increasing output position and rounding once, as the other paths do.
 */
#ifndef NN_KERNELS_MAX_POOL_MASK_V1_H
#define NN_KERNELS_MAX_POOL_MASK_V1_H

#include <stdint.h>

#include "kernels/max_pool/max_pool_bw.h"
#include "kernels/max_pool/max_pool_fw.h"

/* Bytes of the rows the kernels write and read: N*C1*kH*kW rows of mp_mask_row_bytes (the
 * forward's units of work are the 16-channel groups, mp_channel_groups). */
static inline int64_t mp_v1_mask_bytes(const mp_geometry *g)
{
    return mp_channel_groups(g) * g->kernel_h * g->kernel_w * mp_mask_row_bytes(g);
}

/* Forward (fw_plan.v1_groups): the thread pool's range function over chunk indices; chunk i
 * pools its run of groups, writes their out values and (MP_INDEX_MASK_V1) their mask rows, and
 * zeroes its share of the container past the rows. */
void nn_mp_fw_v1_chunks(void *ctx, int64_t chunk_begin, int64_t chunk_end);

/* Backward (bw_plan.v1_mask): lays out a chunk's scratch (the fp32 tile, the widened
 * gradOutput), and the range function over chunk indices, each owning a run of planes. */
void nn_mp_bw_v1_layout_scratch(bw_plan *plan);
void nn_mp_bw_v1_chunks(void *ctx, int64_t chunk_begin, int64_t chunk_end);

/* Backward, 1x1 kernel with fp16_compute: rounds gradInput planes (FLOAT) to fp16 values in place. */
void nn_mp_bw_round_fp16_planes(void *ctx, int64_t plane_begin, int64_t plane_end);

#endif /* NN_KERNELS_MAX_POOL_MASK_V1_H */
