/*
 * max_pool_bw.h - the MaxPool2dWithMask backward kernels (gradient scatter by argmax), one file
 * per instruction set (the geometry they share with the forward: max_pool.h):
 *
 *   max_pool_bw_portable.c  any CPU: the fp32 tile scatter (every index checked; NCHW planes,
 *                           or NHWC planes read and written with a channel stride), the 1x1
 *                           kernel's copy, and the per-thread plane loop that runs a fast path
 *                           first and redoes a plane by the scatter when it gives up
 *   max_pool_bw_2x2_portable.c  any CPU without the SIMD forms: the 2x2 stride-2 direct write in C
 *   max_pool_bw_avx2.c      AVX2 + F16C: the 2x2 stride-2 direct write and the 3x3 stride-2
 *                           slots (streamed fp32/fp16 launches)
 *   max_pool_bw_avx512.c    AVX-512: the 2x2 stride-2 direct write and the 3x3 stride-2 slots
 *
 * Each gradInput element is the fp32 sum of its contributions in increasing output position,
 * rounded once, on every path: the same bits.  The operator (ops/max_pool2d_with_mask_backward.c)
 * sets the plan's path flags from the CPU table at phase 1; a fast path runs only when its flag
 * is set.
 */
#ifndef NN_KERNELS_MAX_POOL_BW_H
#define NN_KERNELS_MAX_POOL_BW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_base.h"
#include "base/nn_simd.h"
#include "kernels/max_pool/max_pool.h"

typedef struct bw_plan {
    mp_geometry g;
    aclDataType dtype;
    bool mask_ignored;      /* 1x1 kernel */
    bool indices_int64;     /* aclnnMaxPool2dWithIndicesBackward with INT64 indices */
    bool no_binary;         /* indices dtype op_api accepts but the device kernel has no binary for
                             * (INT8 on A2/A3): the launch fails, nothing is written */
    bool stream_stores;
    bool tiled_2x2;         /* 2x2 kernel, stride 2, no padding, int32 indices, AVX-512: nn_mp_bw_tiled_2x2_plane_avx512 */
    bool tiled_2x2_avx2;    /* the same on AVX2 (no AVX-512): nn_mp_bw_tiled_2x2_plane_avx2 */
    bool tiled_2x2_portable; /* the same in plain C (neither): nn_mp_bw_tiled_2x2_plane_portable */
    bool v1_mask;           /* Ascend910: the V1 uint16 bit mask, decoded by nn_mp_bw_v1_chunks (mask_v1.h) */
    bool fp16_compute;      /* FLOAT computed as FLOAT16 (Ascend910 mask path; mask_v1.h) */
    bool slots_3x3s2;       /* 3x3 kernel, stride 2, padding <= 1, int32 indices, AVX-512: nn_mp_bw_slots_3x3s2_plane */
    bool slots_3x3s2_avx2;  /* the same on AVX2 (no AVX-512): nn_mp_bw_slots_3x3s2_plane_avx2 */
    int64_t scatter_group;  /* planes the scatter fills before one store: small planes of a plan
                             * with no fast path, so each streaming store moves several KiB */
    int64_t chunks;         /* plane runs, each with its own scratch */
    int64_t scratch_floats; /* per chunk: the fp32 tile (scatter_group planes), (fp16/bf16) the
                             * widened gradOutput, then (fast paths) their pending row and line
                             * stage */
    int64_t widened_offset, band_offset; /* floats from the start of a chunk's scratch */
    int64_t slot_stride;    /* slots_3x3s2: floats per pending row half (slots rounded up, + 16) */
} bw_plan;

/* One launch (nn_mp_bw_chunks, nn_mp_bw_1x1_planes). */
typedef struct bw_ctx {
    const bw_plan *plan;
    const unsigned char *grad_out;
    const unsigned char *indices;
    unsigned char *grad_in;
    float *scratch;
    _Atomic int64_t first_bad; /* lowest global output position holding a bad index */
    nn_claims claims;          /* planes, claimed in chunks by the threads */
} bw_ctx;

/* Whether the geometry fits the fast paths (the CPU table decides whether they run); never for
 * dilation > 1, NHWC or planes past 2^31 cells (mp_is_plain). */
bool nn_mp_bw_tiled_2x2_fits(const bw_plan *plan);
bool nn_mp_bw_slots_3x3s2_fits(const bw_plan *plan);
/* Whether the plane is wide enough for a fitting fast path to beat the scatter. */
bool nn_mp_bw_fast_path_pays(const bw_plan *plan);
/* Lays out one chunk's scratch for the chosen path (offsets in floats, multiples of 16). */
void nn_mp_bw_layout_scratch(bw_plan *plan);
/* The kernel path the plan runs, for the launch trace. */
const char *nn_mp_bw_path(const bw_plan *plan);

/* The thread pool's range functions: planes claimed in chunks, each chunk index owning one
 * scratch region (plan->chunks of them); the 1x1 kernel's planes. */
void nn_mp_bw_chunks(void *ctx, int64_t chunk_begin, int64_t chunk_end);
void nn_mp_bw_1x1_planes(void *ctx, int64_t plane_begin, int64_t plane_end);

/* The fast paths: write one plane of gradInput; false (plane partly written, to be redone by the
 * scatter) when some index is not a cell of its own window inside the plane. */
bool nn_mp_bw_tiled_2x2_plane_portable(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                       const unsigned char *mask, float *scratch);
bool nn_mp_bw_tiled_2x2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                   const unsigned char *mask, float *scratch);
bool nn_mp_bw_tiled_2x2_plane_avx512(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                     const unsigned char *mask, float *scratch);
bool nn_mp_bw_slots_3x3s2_plane(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                const unsigned char *mask, float *scratch);
bool nn_mp_bw_slots_3x3s2_plane_avx2(const bw_plan *p, unsigned char *gi, const unsigned char *grad,
                                     const unsigned char *mask, float *scratch);

/* ---- shared by the fast paths ---------------------------------------------------------------- */

typedef int32_t __attribute__((aligned(1), may_alias)) unaligned_i32;

/* Finished cells on their way to gradInput (both fast paths) go through a line stage
 * (base/nn_simd.h): kept in L1 in the output dtype and written out whenever a few cache lines
 * are ready - in whole lines of gradInput, and often, so that the writes spread over the
 * computation instead of stalling it in bursts (10-15 % faster than flushing 8 KiB at a time). */
enum { STAGE_FLUSH_BYTES = 256 };
enum { AVX2_STAGE_FLUSH_BYTES = 2048 }; /* nn_line_stage_flush streams from 256 bytes on */

/* Cells [from, W) of a row pair (row1 NULL past the plane) lie in no 2x2 window: +0.0. */
static inline void tiled_zero_uncovered(unsigned char *row0, unsigned char *row1, int64_t from, int64_t W,
                                        int64_t elem)
{
    if (from >= W) return;
    memset(row0 + from * elem, 0, (size_t)((W - from) * elem));
    if (row1) memset(row1 + from * elem, 0, (size_t)((W - from) * elem));
}

/* The AVX2 3x3 kernel's floats per slot array (max_pool_bw_avx2.c): its pending row's even and
 * odd slots (Wo + 1 of each, and the last step's 8 lanes past them), whole lines; its scratch is
 * those two, two rows of cells (2 * span slots each) and a line stage. */
static inline int64_t nn_mp_bw_slots_avx2_span(int64_t out_width)
{
    return (out_width + 1 + 8 + 15) / 16 * 16;
}

/* Room a stage needs for rows of W cells added two at a time: a flush's worth, two rows, a
 * carried-over line and a line in front (a row may start one cell early, masked off); floats. */
static inline int64_t stage_floats(int64_t W, int64_t flush_bytes)
{
    return (flush_bytes + 2 * W * (int64_t)sizeof(float) + 128 + 63) / 64 * 16;
}

/* The scratch a path's stage takes (nn_mp_bw_layout_scratch): the stage and room to keep it in one page. */
static inline int64_t stage_region_floats(int64_t W, int64_t flush_bytes)
{
    return stage_floats(W, flush_bytes) + NN_LINE_STAGE_SLACK / (int64_t)sizeof(float);
}

/* The stage's buffer in its region: kept inside one page when it fits (nn_line_stage_place),
 * after a cache line of front room. */
static inline unsigned char *stage_buffer(float *region, int64_t W, int64_t flush_bytes)
{
    const size_t bytes = (size_t)stage_floats(W, flush_bytes) * sizeof(float);
    return nn_line_stage_place((unsigned char *)region, bytes) + 64;
}

#endif /* NN_KERNELS_MAX_POOL_BW_H */
