/*
 * prelu.h - the Prelu and PreluBackward kernels (aclnnPrelu, aclnnPreluBackward), one file per
 * instruction set:
 *
 *   prelu_fwd_portable.c  any CPU, any dtype mix: fp32 run loops, fp16/bf16 staged through fp32
 *                         (the loops are prelu_fwd_loops.inc, built again in prelu_fwd_avx2.c)
 *   prelu_fwd_avx2.c      AVX2 + F16C: the fused loops (one dtype throughout, read and written
 *                         in place, 8 lanes) and the staged loops built for AVX2
 *   prelu_fwd_avx512.c    AVX-512: fp16/bf16 fused loops, 16 lanes (AVX512-BF16 where present)
 *   prelu_bw_portable.c   any CPU: the blocks with staged fp32 run loops (prelu_bw_blocks.inc)
 *   prelu_bw_avx2.c       AVX2 + F16C: the same blocks on fused loops (prelu_bw_fused.inc)
 *   prelu_bw_avx512.c     AVX-512: the same blocks on 16-lane fused loops (AVX512-BF16 where
 *                         present)
 *
 * Every path computes the fp32 product, the ordered `x > 0` select and one rounding per element,
 * and the backward sums in the same lanes and fold, so all give the same bits.  The operators
 * (ops/prelu.c, ops/prelu_backward.c) choose the path from the CPU table and name it in the
 * launch trace; an _avx2 / _avx512 function runs only when nn_cpu_features says so.
 */
#ifndef NN_KERNELS_PRELU_H
#define NN_KERNELS_PRELU_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"

/* ---- forward ------------------------------------------------------------------------------ */

typedef struct nn_prelu_plan {
    int64_t numel;
    int64_t channels;      /* weight values: 1 (single weight) or C */
    int64_t inner;         /* elements per channel run: prod(self.shape[2:]); numel if single */
    aclDataType self_dtype, weight_dtype, out_dtype, compute_dtype;
} nn_prelu_plan;

typedef struct nn_prelu_ctx {
    const nn_prelu_plan *plan;
    const void *self;
    const float *weight;   /* channels values, fp32 (exact: promotion only widens) */
    void *out;
    bool streaming;        /* non-temporal stores for a large output (fused loops only) */
    bool avx512bf16;       /* prelu_fwd_avx512.c: bf16 rounded with vcvtneps2bf16 */
} nn_prelu_ctx;

/* Range functions for nn_parallel_for over [0, numel), ctx an nn_prelu_ctx. */
void nn_prelu_fwd_portable(void *ctx, int64_t begin, int64_t end);     /* any dtypes */
void nn_prelu_fwd_staged_avx2(void *ctx, int64_t begin, int64_t end);  /* the same, AVX2 build */
/* Fused: self, compute and out dtypes all equal.  AVX-512: fp16/bf16 only. */
void nn_prelu_fwd_fused_avx2(void *ctx, int64_t begin, int64_t end);
void nn_prelu_fwd_fused_avx512(void *ctx, int64_t begin, int64_t end);

/* Elements before the first 32-byte aligned output element (vector stores need it for nt). */
static inline int64_t nn_prelu_head(const void *out, size_t esz, int64_t n, bool nt)
{
    if (!nt) return 0;
    const uintptr_t mis = (uintptr_t)out & 31u;
    if (mis == 0) return 0;
    if (mis % esz != 0) return n; /* cannot align: everything scalar (never for real tensors) */
    const int64_t head = (int64_t)((32u - mis) / esz);
    return head < n ? head : n;
}

/* The run structure of the fused loops (prelu_fwd_avx2.c, prelu_fwd_avx512.c): self and out
 * have the same dtype, read and written in place (no staging); ps_fwd_sw_KIND / ps_fwd_vw_KIND
 * are the loops for one weight value and for a weight per element. */
#define NN_PRELU_FUSED_SPAN(KIND, T)                                                                  \
static void prelu_simd_span_##KIND(const nn_prelu_plan *p, const float *weight, int64_t first,       \
                                   const T *x, T *y, int64_t n, bool nt)                          \
{                                                                                                 \
    int64_t done = 0;                                                                             \
    while (done < n) {                                                                            \
        const int64_t i = first + done;                                                           \
        int64_t run;                                                                              \
        if (p->channels == 1) {                                                                   \
            run = n - done;                                                                       \
            ps_fwd_sw_##KIND(x + done, y + done, weight[0], run, nt);                             \
        } else if (p->inner == 1) {                                                               \
            const int64_t c = i % p->channels;                                                    \
            run = p->channels - c < n - done ? p->channels - c : n - done;                        \
            ps_fwd_vw_##KIND(x + done, y + done, weight + c, run, nt);                            \
        } else {                                                                                  \
            const int64_t c = (i / p->inner) % p->channels;                                       \
            const int64_t left = p->inner - i % p->inner;                                         \
            run = left < n - done ? left : n - done;                                              \
            ps_fwd_sw_##KIND(x + done, y + done, weight[c], run, nt);                             \
        }                                                                                         \
        done += run;                                                                              \
    }                                                                                             \
}

/* ---- backward ----------------------------------------------------------------------------- */

#define NN_PRELU_BW_BLOCK_ELEMS 16384     /* plane-mode block length */
#define NN_PRELU_BW_PLANE_MIN 2048        /* inner length from which plane mode is used */
#define NN_PRELU_BW_ROW_BLOCK_ELEMS 65536 /* target elements per row-mode block */
#define NN_PRELU_BW_ROW_TILE_ELEMS 4096   /* target elements per row of a row-mode tile */
#define NN_PRELU_BW_CHUNK 1024            /* fp32 staging for fp16/bf16 */

typedef struct nn_prelu_bw_plan {
    int64_t numel;
    int64_t outer, channels, inner;  /* channels == 1 for a single weight (then inner = numel) */
    bool plane_mode;
    int64_t chunks_per_plane;        /* plane mode */
    int64_t rows_per_block, channels_per_tile, row_groups, channel_groups;  /* row mode */
    int64_t num_blocks, num_partials;
    bool broadcast;                  /* gradOutput must be expanded to self's shape first */
    uint64_t ndim;
    int64_t self_dims[NN_MAX_DIMS];
    int64_t grad_strides[NN_MAX_DIMS];  /* broadcast strides of gradOutput over self's dims */
    uint64_t expand_offset;          /* scratch offsets (bytes) */
    uint64_t partial_offset;
    aclDataType dtype;
    bool empty;                      /* nothing to compute: only zero gradWeight */
    int64_t grad_weight_numel;
} nn_prelu_bw_plan;

typedef struct nn_prelu_bw_ctx {
    const nn_prelu_bw_plan *plan;
    const void *grad, *self;
    const float *weight;             /* channels values, fp32 */
    void *grad_input;
    float *partials;
    bool streaming;                  /* non-temporal gradInput stores (fused loops only) */
    bool avx512bf16;                 /* prelu_bw_avx512.c: bf16 rounded with vcvtneps2bf16 */
    nn_claims claims;                /* blocks, claimed in chunks by the threads */
} nn_prelu_bw_ctx;

/* Range functions over the plan's blocks (the range is ignored: blocks are claimed from
 * ctx->claims, initialised by the caller); each block writes its own partial sums. */
void nn_prelu_bw_blocks_portable(void *ctx, int64_t begin, int64_t end);
void nn_prelu_bw_blocks_avx2(void *ctx, int64_t begin, int64_t end);
void nn_prelu_bw_blocks_avx512(void *ctx, int64_t begin, int64_t end);

#endif /* NN_KERNELS_PRELU_H */
