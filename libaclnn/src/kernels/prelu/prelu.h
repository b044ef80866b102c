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
 * Every path computes the card's formula of the selected product (the rules below) with the same
 * fp32 operations in the same order and the same roundings to the tensor dtype, and the backward
 * sums in the same lanes and fold, so all give the same bits.  The operators (ops/prelu.c,
 * ops/prelu_backward.c) choose the rule from the product and the path from the CPU table, and
 * name the path in the launch trace; an _avx2 / _avx512 function runs only when nn_cpu_features
 * says so.  The vector loops carry the rules of the A2/A3 and 950 cards; the Ascend910 forward,
 * the Ascend910 backward and the saturating (Ascend910/310P) backward run the portable loops,
 * which carry every rule.
 */
#ifndef NN_KERNELS_PRELU_H
#define NN_KERNELS_PRELU_H

#include <stdbool.h>
#include <math.h>
#include <stdint.h>

#include "base/nn_base.h"
#include "base/nn_half_impl.h"

/* ---- forward ------------------------------------------------------------------------------ */

typedef struct nn_prelu_plan {
    int64_t numel;
    int64_t channels;      /* weight values: 1 (single weight) or C */
    int64_t inner;         /* elements per channel run: prod(self.shape[2:]); numel if single */
    aclDataType self_dtype, weight_dtype, out_dtype, compute_dtype;
    /* Ascend910's TBE PRelu (its pre-v200 branch): max(x, 0) + min(x, 0) * w instead of the
     * select x > 0 ? x : w * x of every other product (docs/precision.md) */
    bool max_min;
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
/* The channel and the run left in it are found once per span (two divisions); each later run
 * starts a new channel.  Per run, the divisions cost more than the run's own loop when planes
 * are small (N64 C16 8x8: 64-element runs, the divisions half of the kernel's time). */
#define NN_PRELU_FUSED_SPAN(KIND, T)                                                                  \
static void prelu_simd_span_##KIND(const nn_prelu_plan *p, const float *weight, int64_t first,       \
                                   const T *x, T *y, int64_t n, bool nt)                          \
{                                                                                                 \
    if (p->channels == 1) {                                                                       \
        ps_fwd_sw_##KIND(x, y, weight[0], n, nt);                                                 \
        return;                                                                                   \
    }                                                                                             \
    const bool channels_last = p->inner == 1;                                                     \
    int64_t c = channels_last ? first % p->channels : (first / p->inner) % p->channels;           \
    int64_t left = channels_last ? p->channels - c : p->inner - first % p->inner;                \
    for (int64_t done = 0; done < n;) {                                                           \
        const int64_t run = left < n - done ? left : n - done;                                    \
        if (channels_last)                                                                        \
            ps_fwd_vw_##KIND(x + done, y + done, weight + c, run, nt);                            \
        else                                                                                      \
            ps_fwd_sw_##KIND(x + done, y + done, weight[c], run, nt);                             \
        done += run;                                                                              \
        if (channels_last) {                                                                      \
            c = 0, left = p->channels;                                                            \
        } else {                                                                                  \
            c = c + 1 == p->channels ? 0 : c + 1, left = p->inner;                                \
        }                                                                                         \
    }                                                                                             \
}

/* ---- backward ----------------------------------------------------------------------------- */

#define NN_PRELU_BW_BLOCK_ELEMS 16384     /* plane-mode block length */
#define NN_PRELU_BW_PLANE_MIN 2048        /* inner length from which plane mode is used */
#define NN_PRELU_BW_ROW_BLOCK_ELEMS 65536 /* target elements per row-mode block */
#define NN_PRELU_BW_ROW_TILE_ELEMS 4096   /* target elements per row of a row-mode tile */
#define NN_PRELU_BW_CHUNK 1024            /* fp32 staging for fp16/bf16 */

/* How the card forms gradInput (dx) and the update terms that gradWeight sums, per product
 * (ops/prelu_backward.c; sources in docs/precision.md).  Every update term is rounded to the
 * tensor dtype before the fp32 sum, as the card stores it in a tensor of that dtype. */
typedef enum nn_prelu_bw_rule {
    /* 950, AscendC arch35: dx = x > 0 ? g : w*g, update = x > 0 ? +0 : x*g */
    NN_PRELU_BW_SELECT,
    /* A2/A3/310P, TBE PReluGradUpdate after v200: pos = x > 0 as 1/0, neg = 1 - pos;
     * dx = (pos + neg*w) * g, update = (neg*x) * g + 0 * dx, with dx already in the dtype */
    NN_PRELU_BW_TBE,
    /* Ascend910, the same kernel's pre-v200 branch: pos = clamp(x, 0, 2^-126) * 2^126,
     * neg = |pos - 1|, then the same dx and update (a positive fp32 subnormal x blends) */
    NN_PRELU_BW_TBE_PRE_V200
} nn_prelu_bw_rule;

typedef struct nn_prelu_bw_plan {
    nn_prelu_bw_rule rule;
    /* fp16 overflow of an intermediate (the update term, the dx that 0 * dx reads) gives
     * +-65504: the products that only have saturation mode (Ascend910, Ascend310P) */
    bool saturate;
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
    /* channels values each, the dx factors of x > 0 and of x <= 0 under the TBE rule:
     * 1 + 0*w (1, or NaN for an infinite or NaN w) and 0 + w (w, with -0 made +0) */
    const float *pos_factor, *neg_factor;
    void *grad_input;
    float *partials;
    bool streaming;                  /* non-temporal gradInput stores (fused loops only) */
    bool avx512bf16;                 /* prelu_bw_avx512.c: bf16 rounded with vcvtneps2bf16 */
    bool avx512fp16;                 /* prelu_bw_avx512.c: fp16 update terms with vmulph */
    nn_claims claims;                /* blocks, claimed in chunks by the threads */
} nn_prelu_bw_ctx;

/* Range functions over the plan's blocks (the range is ignored: blocks are claimed from
 * ctx->claims, initialised by the caller); each block writes its own partial sums. */
void nn_prelu_bw_blocks_portable(void *ctx, int64_t begin, int64_t end);
void nn_prelu_bw_blocks_avx2(void *ctx, int64_t begin, int64_t end);
void nn_prelu_bw_blocks_avx512(void *ctx, int64_t begin, int64_t end);

/* The smallest magnitude whose rounding to the dtype gives inf (RNE), per vector-loop element
 * kind: a dx at or above it (or NaN) is not finite once stored, which is when the TBE kernel's
 * 0 * dx spreads NaN. */
#define NN_PRELU_DX_LIMIT_f32 INFINITY
#define NN_PRELU_DX_LIMIT_f16 65520.0f
#define NN_PRELU_DX_LIMIT_bf16 0x1.ffp127f
#define NN_PRELU_DX_LIMIT_pbf16 0x1.ffp127f

/* The vector loops carry the SELECT and TBE rules without saturation; anything else runs the
 * portable loops on every CPU. */
static inline bool nn_prelu_bw_has_vector_loops(const nn_prelu_bw_plan *p)
{
    return p->rule != NN_PRELU_BW_TBE_PRE_V200 && !p->saturate;
}

/* v rounded to the dtype and read back as fp32 (RNE; a finite fp16 overflow gives +-65504 when
 * saturate): the value a tensor of that dtype holds.  These element helpers are always inlined:
 * the portable loops carry an optimize attribute (prelu_hot.h), across which GCC inlines nothing
 * else, and they must fold into those loops' vector code (prelu_bw_portable.c). */
static inline __attribute__((always_inline)) float nn_prelu_in_dtype(aclDataType dtype, float v, bool saturate)
{
    if (dtype == ACL_FLOAT16) {
        const float f16_max = 65504.0f;
        if (saturate && v == v && v - v == 0.0f && (v > f16_max || v < -f16_max))
            v = v > 0.0f ? f16_max : -f16_max;
        return nn_half_f16_to_f32(nn_half_f32_to_f16(v));
    }
    if (dtype == ACL_BF16) return nn_half_bf16_to_f32(nn_half_f32_to_bf16(v));
    return v;
}

/* The pre-v200 branch's x > 0 factor: min(x, 2^-126), max(., 0), times 2^38 * 2^44 * 2^44 (all
 * exact: the result is x * 2^126 for a positive subnormal x).  A NaN x stays NaN (the documented
 * choice for vmins/vmaxs), and max(-0, 0) is +0. */
static inline __attribute__((always_inline)) float nn_prelu_pre_v200_pos(float x)
{
    if (x != x) return x;
    const float smallest_normal = 0x1p-126f;
    const float clamped = x > smallest_normal ? smallest_normal : (x > 0.0f ? x : 0.0f);
    return clamped * 0x1p38f * 0x1p44f * 0x1p44f;
}

/* One element under `rule`, w the channel's weight: returns dx in fp32 (the caller rounds it to
 * the dtype on the store) and sets *term to the update term as the dtype holds it.  The vector
 * loops reach the same bits through pos_factor / neg_factor. */
static inline __attribute__((always_inline)) float nn_prelu_bw_rule_element(
    nn_prelu_bw_rule rule, aclDataType dtype, bool saturate, float x, float g, float w, float *term)
{
    if (rule == NN_PRELU_BW_SELECT) {
        const bool pos = x > 0.0f;
        *term = pos ? 0.0f : nn_prelu_in_dtype(dtype, x * g, saturate);
        return pos ? g : w * g;
    }
    float pos, neg;
    if (rule == NN_PRELU_BW_TBE) {
        pos = x > 0.0f ? 1.0f : 0.0f;
        neg = x > 0.0f ? 0.0f : 1.0f;
    } else {
        pos = nn_prelu_pre_v200_pos(x);
        neg = fabsf(pos + -1.0f);
    }
    const float dx = (pos + neg * w) * g;
    const float update = (neg * x) * g + 0.0f * nn_prelu_in_dtype(dtype, dx, saturate);
    *term = nn_prelu_in_dtype(dtype, update, saturate);
    return dx;
}

/* The same under the plan's rule. */
static inline __attribute__((always_inline)) float nn_prelu_bw_element(const nn_prelu_bw_plan *p, float x, float g,
                                                                        float w, float *term)
{
    return nn_prelu_bw_rule_element(p->rule, p->dtype, p->saturate, x, g, w, term);
}

#endif /* NN_KERNELS_PRELU_H */
