/*
 * prelu_bw_portable.c - the PreluBackward kernel for any CPU and every rule (prelu.h): one fused
 * pass per run - gradInput and the weight gradient's update terms of the plan's rule, the terms
 * summed on the fly - in fp32, fp16/bf16 staged through fp32 in NN_PRELU_BW_CHUNK pieces.  A run sharing
 * one weight value is summed in 16 interleaved fp32 lanes folded in a fixed tree; a channel-last
 * run adds into per-channel sums element by element.  prelu_bw_avx2.c does the same adds on
 * fused AVX2 loops.
 */
#include <stdbool.h>
#include <stdint.h>

#include "kernels/prelu/prelu.h"
#include "kernels/prelu/prelu_hot.h"

#define LANES 16

/* ---- fp32 fused inner loops (staged: fp16/bf16 widened first) ---------------------------------------------------------------- */

static inline float fold_lanes(const float *lanes)
{
    float s8[8], s4[4];
    for (int k = 0; k < 8; k++) s8[k] = lanes[k] + lanes[k + 8];
    for (int k = 0; k < 4; k++) s4[k] = s8[k] + s8[k + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

/* Each element goes through nn_prelu_bw_rule_element (prelu.h), the plan's rule with its
 * roundings to the dtype; the vector loops of prelu_bw_avx2.c / prelu_bw_avx512.c give the same
 * bits.  The loops are instantiated per rule and dtype (RUN_LOOPS below), so both are constants
 * and the element's branches on them fold away: with them read from the plan, GCC kept a
 * scalar loop with a branch on x > 0 per element, about 25x slower than the AVX2 build (and
 * it could not inline the element across the loops' optimize attribute at all). */
#define RUN_LOOPS(SUFFIX, RULE, DTYPE, SATURATE)                                                      \
    /* gradInput for a run sharing one weight value; returns the run's fixed-order update sum */   \
    NN_PRELU_HOT __attribute__((noinline)) static float run_scalar_w_##SUFFIX(                      \
        const float *restrict x, const float *restrict g, float *restrict gi, float w, int64_t n)   \
    {                                                                                               \
        float lanes[LANES] = {0};                                                                   \
        int64_t i = 0;                                                                              \
        for (; i + LANES <= n; i += LANES) {                                                        \
            for (int k = 0; k < LANES; k++) {                                                       \
                float term;                                                                         \
                gi[i + k] = nn_prelu_bw_rule_element(RULE, DTYPE, SATURATE, x[i + k], g[i + k], w,  \
                                                     &term);                                        \
                lanes[k] += term;                                                                   \
            }                                                                                       \
        }                                                                                           \
        for (int k = 0; i < n; i++, k++) {                                                          \
            float term;                                                                             \
            gi[i] = nn_prelu_bw_rule_element(RULE, DTYPE, SATURATE, x[i], g[i], w, &term);          \
            lanes[k] += term;                                                                       \
        }                                                                                           \
        return fold_lanes(lanes);                                                                   \
    }                                                                                               \
    /* channel-last run: weight and per-channel sums advance with the element */                   \
    NN_PRELU_HOT __attribute__((noinline)) static void run_vector_w_##SUFFIX(                       \
        const float *restrict x, const float *restrict g, float *restrict gi,                      \
        const float *restrict w, float *restrict sums, int64_t n)                                   \
    {                                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                           \
            float term;                                                                             \
            gi[i] = nn_prelu_bw_rule_element(RULE, DTYPE, SATURATE, x[i], g[i], w[i], &term);       \
            sums[i] += term;                                                                        \
        }                                                                                           \
    }

/* (saturation matters to fp16 only: its intermediates saturate on Ascend910 / Ascend310P) */
#define RUN_LOOPS_OF_RULE(SUFFIX, RULE)                                                              \
    RUN_LOOPS(SUFFIX##_f32, RULE, ACL_FLOAT, false)                                                 \
    RUN_LOOPS(SUFFIX##_f16, RULE, ACL_FLOAT16, false)                                               \
    RUN_LOOPS(SUFFIX##_bf16, RULE, ACL_BF16, false)                                                 \
    RUN_LOOPS(SUFFIX##_f16_saturated, RULE, ACL_FLOAT16, true)
RUN_LOOPS_OF_RULE(sel, NN_PRELU_BW_SELECT)
RUN_LOOPS_OF_RULE(tbe, NN_PRELU_BW_TBE)
RUN_LOOPS_OF_RULE(pre_v200, NN_PRELU_BW_TBE_PRE_V200)

typedef float (*run_scalar_w_fn)(const float *, const float *, float *, float, int64_t);
typedef void (*run_vector_w_fn)(const float *, const float *, float *, const float *, float *, int64_t);

/* [rule: nn_prelu_bw_rule, SELECT, TBE, TBE_PRE_V200 in its order][dtype_slot] */
#define RUN_TABLE(KIND)                                                                              \
    {{KIND##_sel_f32, KIND##_sel_f16, KIND##_sel_bf16, KIND##_sel_f16_saturated},                  \
     {KIND##_tbe_f32, KIND##_tbe_f16, KIND##_tbe_bf16, KIND##_tbe_f16_saturated},                  \
     {KIND##_pre_v200_f32, KIND##_pre_v200_f16, KIND##_pre_v200_bf16, KIND##_pre_v200_f16_saturated}}
static const run_scalar_w_fn RUN_SCALAR_W[3][4] = RUN_TABLE(run_scalar_w);
static const run_vector_w_fn RUN_VECTOR_W[3][4] = RUN_TABLE(run_vector_w);

static int dtype_slot(const nn_prelu_bw_plan *p)
{
    if (p->dtype == ACL_FLOAT16)
        return p->saturate ? 3 : 1;
    return p->dtype == ACL_FLOAT ? 0 : 2;
}

static float run_scalar_w(const nn_prelu_bw_plan *p, const float *x, const float *g, float *gi, float w,
                          int64_t n)
{
    return RUN_SCALAR_W[p->rule][dtype_slot(p)](x, g, gi, w, n);
}

static void run_vector_w(const nn_prelu_bw_plan *p, const float *x, const float *g, float *gi,
                         const float *w, float *sums, int64_t n)
{
    RUN_VECTOR_W[p->rule][dtype_slot(p)](x, g, gi, w, sums, n);
}

/* ---- dtype staging: a run of n elements at flat index `first` -------------------------------- */

typedef struct run_io {
    const float *x, *g;
    float *gi;
    float xs[NN_PRELU_BW_CHUNK], gs[NN_PRELU_BW_CHUNK], gis[NN_PRELU_BW_CHUNK];
} run_io;

/* Points io at fp32 data for [first, first + n) (n <= NN_PRELU_BW_CHUNK unless the dtype is FLOAT). */
static void stage_in(const nn_prelu_bw_ctx *ctx, run_io *io, int64_t first, int64_t n)
{
    const nn_prelu_bw_plan *p = ctx->plan;
    if (p->dtype == ACL_FLOAT) {
        io->x = (const float *)ctx->self + first;
        io->g = (const float *)ctx->grad + first;
        io->gi = (float *)ctx->grad_input + first;
        return;
    }
    nn_to_f32_n(p->dtype, (const uint16_t *)ctx->self + first, io->xs, (size_t)n);
    nn_to_f32_n(p->dtype, (const uint16_t *)ctx->grad + first, io->gs, (size_t)n);
    io->x = io->xs;
    io->g = io->gs;
    io->gi = io->gis;
}

static void stage_out(const nn_prelu_bw_ctx *ctx, const run_io *io, int64_t first, int64_t n)
{
    if (ctx->plan->dtype != ACL_FLOAT) {
        nn_from_f32_n(ctx->plan->dtype, io->gis, (uint16_t *)ctx->grad_input + first, (size_t)n);
    }
}

/* Processes [first, first + n) sharing weight w; returns the fixed-order update sum.  Long runs
 * of fp16/bf16 are staged in NN_PRELU_BW_CHUNK pieces whose sums are added in order. */
static float span_scalar_w(const nn_prelu_bw_ctx *ctx, run_io *io, int64_t first, int64_t n, float w)
{
    const int64_t piece = ctx->plan->dtype == ACL_FLOAT ? n : NN_PRELU_BW_CHUNK;
    float total = 0.0f;
    for (int64_t done = 0; done < n; done += piece) {
        const int64_t len = n - done < piece ? n - done : piece;
        stage_in(ctx, io, first + done, len);
        total += run_scalar_w(ctx->plan, io->x, io->g, io->gi, w, len);
        stage_out(ctx, io, first + done, len);
    }
    return total;
}

static void span_vector_w(const nn_prelu_bw_ctx *ctx, run_io *io, int64_t first, int64_t n,
                          const float *w, float *sums)
{
    const int64_t piece = ctx->plan->dtype == ACL_FLOAT ? n : NN_PRELU_BW_CHUNK;
    for (int64_t done = 0; done < n; done += piece) {
        const int64_t len = n - done < piece ? n - done : piece;
        stage_in(ctx, io, first + done, len);
        run_vector_w(ctx->plan, io->x, io->g, io->gi, w + done, sums + done, len);
        stage_out(ctx, io, first + done, len);
    }
}

#define PRELU_BW_BLOCKS nn_prelu_bw_blocks_portable
#include "kernels/prelu/prelu_bw_blocks.inc"
