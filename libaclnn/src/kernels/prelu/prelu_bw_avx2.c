/*
 * prelu_bw_avx2.c - the PreluBackward kernel for AVX2 + F16C CPUs (prelu.h), compiled with the
 * AVX2 flags (Makefile); called only when nn_cpu_avx2() and the plan's rule has vector loops
 * (nn_prelu_bw_has_vector_loops).  The blocks of prelu_bw_blocks.inc on fused loops that read
 * fp32/fp16/bf16 in place: the same per-element arithmetic (nn_prelu_bw_element's operations in
 * its order) and the same lanes and fold as prelu_bw_portable.c, so the same bits.
 * The fused loops are kept out of line (noinline), as they were when only they had the AVX2
 * target attribute (the bf16 backward looked ~15% slower with them inlined, in a noisy bench).
 */
#include <stdbool.h>
#include <stdint.h>

#include "kernels/prelu/prelu.h"
#include "kernels/prelu/prelu_avx2.h"

#if NN_HALF_X86
/*
 * One step of 8 elements per rule (prelu.h), pf / nf the dx factors of x > 0 / x <= 0
 * (ctx->pos_factor / neg_factor); stores gradInput and returns the 8 update terms as the dtype
 * holds them.
 *   sel: gi = x > 0 ? g : nf*g (nf = w), term = x > 0 ? +0.0 : x*g (andnot)
 *   tbe: dx = (x > 0 ? pf : nf) * g, term = ((x > 0 ? 0 : 1) * x) * g + 0 * dx, formed as the
 *        sel term with NaN where the card's 0 * inf makes one: where the stored dx is not finite
 *        (|dx| >= NN_PRELU_DX_LIMIT or NaN) and where x = +inf (0 * x), both found by one compare of
 *        max(x, |dx|) (a NaN |dx| wins vmaxps as its second operand; a finite x of the dtype is
 *        below the limit; a NaN x makes the term NaN anyway).  The card's other terms differ
 *        from the sel term only in the sign of a zero, which no sum starting from +0 can show.
 */
#define PS_DEFINE_STEPS(KIND, T)                                                                    \
PS_TARGET __m256 ps_step_sel_##KIND(__m256 xv, __m256 gv, __m256 pf, __m256 nf, T *gi, bool nt)     \
{                                                                                                   \
    (void)pf;                                                                                       \
    const __m256 pos = _mm256_cmp_ps(xv, _mm256_setzero_ps(), _CMP_GT_OQ);                          \
    ps_st_##KIND(gi, _mm256_blendv_ps(_mm256_mul_ps(nf, gv), gv, pos), nt);                         \
    return ps_rt_##KIND(_mm256_andnot_ps(pos, _mm256_mul_ps(xv, gv)));                              \
}                                                                                                   \
PS_TARGET __m256 ps_step_tbe_##KIND(__m256 xv, __m256 gv, __m256 pf, __m256 nf, T *gi, bool nt)     \
{                                                                                                   \
    const __m256 pos = _mm256_cmp_ps(xv, _mm256_setzero_ps(), _CMP_GT_OQ);                          \
    const __m256 dx = _mm256_mul_ps(_mm256_blendv_ps(nf, pf, pos), gv);                             \
    ps_st_##KIND(gi, dx, nt);                                                                       \
    const __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), dx);                           \
    const __m256 spread = _mm256_cmp_ps(_mm256_max_ps(xv, magnitude), _mm256_set1_ps(NN_PRELU_DX_LIMIT_##KIND), \
                                        _CMP_NLT_UQ);                                               \
    const __m256 term = ps_rt_##KIND(_mm256_andnot_ps(pos, _mm256_mul_ps(xv, gv)));                 \
    return _mm256_blendv_ps(term, _mm256_set1_ps(NAN), spread);                                     \
}

/*
 * Backward, channel-last run: weight factors and sums advance with the element (the per-row
 * order of the portable loop, so the per-channel sums are bit-identical).  The head and tail
 * go through nn_prelu_bw_element with the raw weights.
 */
#define PS_DEFINE_BACKWARD(KIND, T, RULE)                                                           \
__attribute__((target("avx2,f16c"), noinline)) static void ps_bwd_vw_##RULE##_##KIND(                \
    const nn_prelu_bw_plan *p, const T *x, const T *g, T *gi, const float *w, const float *pf,      \
    const float *nf, float *sums, int64_t n, bool nt)                                               \
{                                                                                                   \
    const int64_t head = ps_head(gi, sizeof(T), n, nt);                                             \
    int64_t i = 0;                                                                                  \
    for (; i < head; i++) {                                                                         \
        float term;                                                                                 \
        gi[i] = ps_sst_##KIND(nn_prelu_bw_element(p, ps_sld_##KIND(x[i]), ps_sld_##KIND(g[i]),      \
                                                  w[i], &term));                                    \
        sums[i] += term;                                                                            \
    }                                                                                               \
    for (; i + 8 <= n; i += 8) {                                                                    \
        const __m256 term = ps_step_##RULE##_##KIND(ps_ld_##KIND(x + i), ps_ld_##KIND(g + i),       \
                                                    _mm256_loadu_ps(pf + i), _mm256_loadu_ps(nf + i), \
                                                    gi + i, nt);                                    \
        _mm256_storeu_ps(sums + i, _mm256_add_ps(_mm256_loadu_ps(sums + i), term));                 \
    }                                                                                               \
    for (; i < n; i++) {                                                                            \
        float term;                                                                                 \
        gi[i] = ps_sst_##KIND(nn_prelu_bw_element(p, ps_sld_##KIND(x[i]), ps_sld_##KIND(g[i]),      \
                                                  w[i], &term));                                    \
        sums[i] += term;                                                                            \
    }                                                                                               \
}

/*
 * Backward, run sharing one weight value: the 16-lane scheme of prelu_bw_portable.c's
 * run_scalar_w (lane k sums elements i with i % 16 == k in order, the tail restarts at lane 0,
 * lanes folded in the same tree), so the returned sum is bit-identical.  Streams only when gi is
 * already 32-byte aligned at the start of the run (no head: the lanes must stay in phase).
 */
#define PS_DEFINE_BACKWARD_SW(KIND, T, RULE)                                                        \
__attribute__((target("avx2,f16c"), noinline)) static float ps_bwd_sw_##RULE##_##KIND(               \
    const nn_prelu_bw_plan *p, const T *x, const T *g, T *gi, float w, float pf, float nf,          \
    int64_t n, bool nt)                                                                             \
{                                                                                                   \
    nt = nt && ((uintptr_t)gi & 31u) == 0;                                                          \
    const __m256 pfv = _mm256_set1_ps(pf), nfv = _mm256_set1_ps(nf);                                \
    __m256 acc_lo = _mm256_setzero_ps(), acc_hi = _mm256_setzero_ps();                              \
    int64_t i = 0;                                                                                  \
    for (; i + 16 <= n; i += 16) {                                                                  \
        acc_lo = _mm256_add_ps(acc_lo, ps_step_##RULE##_##KIND(ps_ld_##KIND(x + i), ps_ld_##KIND(g + i), \
                                                              pfv, nfv, gi + i, nt));               \
        acc_hi = _mm256_add_ps(acc_hi, ps_step_##RULE##_##KIND(ps_ld_##KIND(x + i + 8),             \
                                                              ps_ld_##KIND(g + i + 8), pfv, nfv,    \
                                                              gi + i + 8, nt));                     \
    }                                                                                               \
    float lanes[16];                                                                                \
    _mm256_storeu_ps(lanes, acc_lo);                                                                \
    _mm256_storeu_ps(lanes + 8, acc_hi);                                                            \
    for (int k = 0; i < n; i++, k++) {                                                              \
        float term;                                                                                 \
        gi[i] = ps_sst_##KIND(nn_prelu_bw_element(p, ps_sld_##KIND(x[i]), ps_sld_##KIND(g[i]), w,   \
                                                  &term));                                          \
        lanes[k] += term;                                                                           \
    }                                                                                               \
    float s8[8], s4[4];                                                                             \
    for (int k = 0; k < 8; k++) s8[k] = lanes[k] + lanes[k + 8];                                    \
    for (int k = 0; k < 4; k++) s4[k] = s8[k] + s8[k + 4];                                          \
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);                                                       \
}

#define PS_DEFINE_KIND(KIND, T)                                                                     \
    PS_DEFINE_STEPS(KIND, T)                                                                        \
    PS_DEFINE_BACKWARD(KIND, T, sel)                                                                \
    PS_DEFINE_BACKWARD(KIND, T, tbe)                                                                \
    PS_DEFINE_BACKWARD_SW(KIND, T, sel)                                                             \
    PS_DEFINE_BACKWARD_SW(KIND, T, tbe)
PS_DEFINE_KIND(f32, float)
PS_DEFINE_KIND(f16, uint16_t)
PS_DEFINE_KIND(bf16, uint16_t)

/* One run of the plan's dtype and rule (prelu_bw_fused.inc); the dx factors of one weight value
 * are prelu_backward.c's pos_factor / neg_factor formulas. */
#define PS_RUN_ARGS(T, at) p, (const T *)ctx->self + (at), (const T *)ctx->grad + (at), (T *)ctx->grad_input + (at)
static float fused_sw(const nn_prelu_bw_ctx *ctx, int64_t at, int64_t len, float w)
{
    const nn_prelu_bw_plan *p = ctx->plan;
    const bool tbe = p->rule == NN_PRELU_BW_TBE;
    const float pf = 1.0f + 0.0f * w, nf = tbe ? 0.0f + w : w;
    const bool nt = ctx->streaming;
    if (p->dtype == ACL_FLOAT)
        return tbe ? ps_bwd_sw_tbe_f32(PS_RUN_ARGS(float, at), w, pf, nf, len, nt)
                   : ps_bwd_sw_sel_f32(PS_RUN_ARGS(float, at), w, pf, nf, len, nt);
    if (p->dtype == ACL_FLOAT16)
        return tbe ? ps_bwd_sw_tbe_f16(PS_RUN_ARGS(uint16_t, at), w, pf, nf, len, nt)
                   : ps_bwd_sw_sel_f16(PS_RUN_ARGS(uint16_t, at), w, pf, nf, len, nt);
    return tbe ? ps_bwd_sw_tbe_bf16(PS_RUN_ARGS(uint16_t, at), w, pf, nf, len, nt)
               : ps_bwd_sw_sel_bf16(PS_RUN_ARGS(uint16_t, at), w, pf, nf, len, nt);
}

static void fused_vw(const nn_prelu_bw_ctx *ctx, int64_t first, int64_t n, const float *w, float *sums)
{
    const nn_prelu_bw_plan *p = ctx->plan;
    const bool tbe = p->rule == NN_PRELU_BW_TBE;
    const int64_t c0 = w - ctx->weight;
    const float *pf = ctx->pos_factor + c0, *nf = ctx->neg_factor + c0;
    const bool nt = ctx->streaming;
    if (p->dtype == ACL_FLOAT) {
        if (tbe) ps_bwd_vw_tbe_f32(PS_RUN_ARGS(float, first), w, pf, nf, sums, n, nt);
        else ps_bwd_vw_sel_f32(PS_RUN_ARGS(float, first), w, pf, nf, sums, n, nt);
    } else if (p->dtype == ACL_FLOAT16) {
        if (tbe) ps_bwd_vw_tbe_f16(PS_RUN_ARGS(uint16_t, first), w, pf, nf, sums, n, nt);
        else ps_bwd_vw_sel_f16(PS_RUN_ARGS(uint16_t, first), w, pf, nf, sums, n, nt);
    } else {
        if (tbe) ps_bwd_vw_tbe_bf16(PS_RUN_ARGS(uint16_t, first), w, pf, nf, sums, n, nt);
        else ps_bwd_vw_sel_bf16(PS_RUN_ARGS(uint16_t, first), w, pf, nf, sums, n, nt);
    }
}

#define PRELU_BW_BLOCKS nn_prelu_bw_blocks_avx2
#include "kernels/prelu/prelu_bw_fused.inc"
#else
void nn_prelu_bw_blocks_avx2(void *vctx, int64_t begin, int64_t end)
{
    nn_prelu_bw_blocks_portable(vctx, begin, end); /* never chosen: no AVX2 tier on this target */
}
#endif
