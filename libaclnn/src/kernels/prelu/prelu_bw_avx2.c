/*
 * prelu_bw_avx2.c - the PreluBackward kernel for AVX2 + F16C CPUs (prelu.h), compiled with the
 * AVX2 flags (Makefile); called only when nn_cpu_avx2().  The blocks of prelu_bw_blocks.inc on
 * fused loops that read fp32/fp16/bf16 in place: the same per-element arithmetic and the same
 * lanes and fold as prelu_bw_portable.c, so the same bits.
 * The fused loops are kept out of line (noinline), as they were when only they had the AVX2
 * target attribute (the bf16 backward looked ~15% slower with them inlined, in a noisy bench).
 */
#include <stdbool.h>
#include <stdint.h>

#include "kernels/prelu/prelu.h"
#include "kernels/prelu/prelu_avx2.h"

#if NN_HALF_X86
/*
 * Backward, channel-last run: gi = x > 0 ? g : w*g, sums[i] += x > 0 ? +0.0 : x*g, with w and
 * sums advancing with the element (the per-row order of the portable loop, so the per-channel
 * sums are bit-identical).  andnot(pos, x*g) is exactly `pos ? +0.0 : x*g`.
 */
#define PS_DEFINE_BACKWARD(KIND, T)                                                                 \
__attribute__((target("avx2,f16c"), noinline)) static void ps_bwd_vw_##KIND(                                  \
    const T *x, const T *g, T *gi, const float *w, float *sums, int64_t n, bool nt)                \
{                                                                                                   \
    const int64_t head = ps_head(gi, sizeof(T), n, nt);                                             \
    const __m256 zero = _mm256_setzero_ps();                                                        \
    int64_t i = 0;                                                                                  \
    for (; i < head; i++) {                                                                         \
        const float xv = ps_sld_##KIND(x[i]), gv = ps_sld_##KIND(g[i]);                             \
        const float scaled = w[i] * gv, update = xv * gv;                                           \
        const bool pos = xv > 0.0f;                                                                 \
        gi[i] = ps_sst_##KIND(pos ? gv : scaled);                                                   \
        sums[i] += pos ? 0.0f : update;                                                             \
    }                                                                                               \
    for (; i + 8 <= n; i += 8) {                                                                    \
        const __m256 xv = ps_ld_##KIND(x + i), gv = ps_ld_##KIND(g + i);                            \
        const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(w + i), gv);                            \
        const __m256 update = _mm256_mul_ps(xv, gv);                                                \
        const __m256 pos = _mm256_cmp_ps(xv, zero, _CMP_GT_OQ);                                     \
        ps_st_##KIND(gi + i, _mm256_blendv_ps(scaled, gv, pos), nt);                                \
        _mm256_storeu_ps(sums + i, _mm256_add_ps(_mm256_loadu_ps(sums + i),                         \
                                                 _mm256_andnot_ps(pos, update)));                   \
    }                                                                                               \
    for (; i < n; i++) {                                                                            \
        const float xv = ps_sld_##KIND(x[i]), gv = ps_sld_##KIND(g[i]);                             \
        const float scaled = w[i] * gv, update = xv * gv;                                           \
        const bool pos = xv > 0.0f;                                                                 \
        gi[i] = ps_sst_##KIND(pos ? gv : scaled);                                                   \
        sums[i] += pos ? 0.0f : update;                                                             \
    }                                                                                               \
}

/*
 * Backward, run sharing one weight value: the 16-lane scheme of prelu_backward.c's run_scalar_w
 * (lane k sums elements i with i % 16 == k in order, the tail restarts at lane 0, lanes folded
 * in the same tree), so the returned sum is bit-identical.  Streams only when gi is already
 * 32-byte aligned at the start of the run (no head: the lanes must stay in phase).
 */
#define PS_DEFINE_BACKWARD_SW(KIND, T)                                                              \
__attribute__((target("avx2,f16c"), noinline)) static float ps_bwd_sw_##KIND(                                 \
    const T *x, const T *g, T *gi, float w, int64_t n, bool nt)                                    \
{                                                                                                   \
    nt = nt && ((uintptr_t)gi & 31u) == 0;                                                          \
    const __m256 zero = _mm256_setzero_ps(), wv = _mm256_set1_ps(w);                                \
    __m256 acc_lo = zero, acc_hi = zero;                                                            \
    int64_t i = 0;                                                                                  \
    for (; i + 16 <= n; i += 16) {                                                                  \
        const __m256 x0 = ps_ld_##KIND(x + i), g0 = ps_ld_##KIND(g + i);                            \
        const __m256 x1 = ps_ld_##KIND(x + i + 8), g1 = ps_ld_##KIND(g + i + 8);                    \
        const __m256 p0 = _mm256_cmp_ps(x0, zero, _CMP_GT_OQ);                                      \
        const __m256 p1 = _mm256_cmp_ps(x1, zero, _CMP_GT_OQ);                                      \
        ps_st_##KIND(gi + i, _mm256_blendv_ps(_mm256_mul_ps(wv, g0), g0, p0), nt);                  \
        ps_st_##KIND(gi + i + 8, _mm256_blendv_ps(_mm256_mul_ps(wv, g1), g1, p1), nt);              \
        acc_lo = _mm256_add_ps(acc_lo, _mm256_andnot_ps(p0, _mm256_mul_ps(x0, g0)));                \
        acc_hi = _mm256_add_ps(acc_hi, _mm256_andnot_ps(p1, _mm256_mul_ps(x1, g1)));                \
    }                                                                                               \
    float lanes[16];                                                                                \
    _mm256_storeu_ps(lanes, acc_lo);                                                                \
    _mm256_storeu_ps(lanes + 8, acc_hi);                                                            \
    for (int k = 0; i < n; i++, k++) {                                                              \
        const float xv = ps_sld_##KIND(x[i]), gv = ps_sld_##KIND(g[i]);                             \
        const float scaled = w * gv, update = xv * gv;                                              \
        const bool pos = xv > 0.0f;                                                                 \
        gi[i] = ps_sst_##KIND(pos ? gv : scaled);                                                   \
        lanes[k] += pos ? 0.0f : update;                                                            \
    }                                                                                               \
    float s8[8], s4[4];                                                                             \
    for (int k = 0; k < 8; k++) s8[k] = lanes[k] + lanes[k + 8];                                    \
    for (int k = 0; k < 4; k++) s4[k] = s8[k] + s8[k + 4];                                          \
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);                                                       \
}

PS_DEFINE_BACKWARD(f32, float)
PS_DEFINE_BACKWARD(f16, uint16_t)
PS_DEFINE_BACKWARD(bf16, uint16_t)
PS_DEFINE_BACKWARD_SW(f32, float)
PS_DEFINE_BACKWARD_SW(f16, uint16_t)
PS_DEFINE_BACKWARD_SW(bf16, uint16_t)

/* One run of the plan's dtype (prelu_bw_fused.inc). */
static float fused_sw(const nn_prelu_bw_ctx *ctx, int64_t at, int64_t len, float w)
{
    const aclDataType dtype = ctx->plan->dtype;
    if (dtype == ACL_FLOAT)
        return ps_bwd_sw_f32((const float *)ctx->self + at, (const float *)ctx->grad + at,
                             (float *)ctx->grad_input + at, w, len, ctx->streaming);
    if (dtype == ACL_FLOAT16)
        return ps_bwd_sw_f16((const uint16_t *)ctx->self + at, (const uint16_t *)ctx->grad + at,
                             (uint16_t *)ctx->grad_input + at, w, len, ctx->streaming);
    return ps_bwd_sw_bf16((const uint16_t *)ctx->self + at, (const uint16_t *)ctx->grad + at,
                          (uint16_t *)ctx->grad_input + at, w, len, ctx->streaming);
}

static void fused_vw(const nn_prelu_bw_ctx *ctx, int64_t first, int64_t n, const float *w, float *sums)
{
    const aclDataType dtype = ctx->plan->dtype;
    if (dtype == ACL_FLOAT) {
        ps_bwd_vw_f32((const float *)ctx->self + first, (const float *)ctx->grad + first,
                      (float *)ctx->grad_input + first, w, sums, n, ctx->streaming);
    } else if (dtype == ACL_FLOAT16) {
        ps_bwd_vw_f16((const uint16_t *)ctx->self + first, (const uint16_t *)ctx->grad + first,
                      (uint16_t *)ctx->grad_input + first, w, sums, n, ctx->streaming);
    } else {
        ps_bwd_vw_bf16((const uint16_t *)ctx->self + first, (const uint16_t *)ctx->grad + first,
                       (uint16_t *)ctx->grad_input + first, w, sums, n, ctx->streaming);
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
