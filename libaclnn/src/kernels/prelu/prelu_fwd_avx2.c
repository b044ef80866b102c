/*
 * prelu_fwd_avx2.c - the Prelu forward for AVX2 + F16C CPUs (prelu.h), compiled with the AVX2
 * flags (Makefile); called only when nn_cpu_avx2():
 *   nn_prelu_fwd_fused_avx2   one dtype throughout: 8-lane loops that widen, select and narrow
 *                             in registers (fp32 also on AVX-512 CPUs)
 *   nn_prelu_fwd_staged_avx2  any other dtype mix: prelu_fwd_loops.inc built for AVX2
 * Both give the portable loops' bits.
 * The fused loops are kept out of line (noinline), as they were when only they had the AVX2
 * target attribute (the bf16 backward looked ~15% slower with them inlined, in a noisy bench).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/prelu/prelu.h"
#include "kernels/prelu/prelu_avx2.h"

#define PRELU_FWD_STAGED nn_prelu_fwd_staged_avx2
#include "kernels/prelu/prelu_fwd_loops.inc"

#if NN_HALF_X86
/*
 * Forward: y = x > 0 ? x : w * x, with w either a per-element vector (channel-last runs) or one
 * value.  The scalar tail computes the same fp32 product and select.
 */
#define PS_DEFINE_FORWARD(KIND, T) PS_DEFINE_FORWARD_T(KIND, T, "avx2,f16c")
#define PS_DEFINE_FORWARD_T(KIND, T, TARGET)                                                        \
__attribute__((target(TARGET), noinline)) static void ps_fwd_vw_##KIND(const T *x, T *y,                \
                                                                   const float *w, int64_t n,      \
                                                                   bool nt)                        \
{                                                                                                   \
    const int64_t head = ps_head(y, sizeof(T), n, nt);                                              \
    const __m256 zero = _mm256_setzero_ps();                                                        \
    int64_t i = 0;                                                                                  \
    for (; i < head; i++) {                                                                         \
        const float xv = ps_sld_##KIND(x[i]), s = w[i] * xv;                                        \
        y[i] = ps_sst_##KIND(xv > 0.0f ? xv : s);                                                   \
    }                                                                                               \
    for (; i + 8 <= n; i += 8) {                                                                    \
        const __m256 xv = ps_ld_##KIND(x + i);                                                      \
        const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(w + i), xv);                                 \
        const __m256 pos = _mm256_cmp_ps(xv, zero, _CMP_GT_OQ);                                     \
        ps_st_##KIND(y + i, _mm256_blendv_ps(s, xv, pos), nt);                                      \
    }                                                                                               \
    for (; i < n; i++) {                                                                            \
        const float xv = ps_sld_##KIND(x[i]), s = w[i] * xv;                                        \
        y[i] = ps_sst_##KIND(xv > 0.0f ? xv : s);                                                   \
    }                                                                                               \
}                                                                                                   \
__attribute__((target(TARGET), noinline)) static void ps_fwd_sw_##KIND(const T *x, T *y, float w,       \
                                                                   int64_t n, bool nt)             \
{                                                                                                   \
    const int64_t head = ps_head(y, sizeof(T), n, nt);                                              \
    const __m256 zero = _mm256_setzero_ps(), wv = _mm256_set1_ps(w);                                \
    int64_t i = 0;                                                                                  \
    for (; i < head; i++) {                                                                         \
        const float xv = ps_sld_##KIND(x[i]), s = w * xv;                                           \
        y[i] = ps_sst_##KIND(xv > 0.0f ? xv : s);                                                   \
    }                                                                                               \
    for (; i + 8 <= n; i += 8) {                                                                    \
        const __m256 xv = ps_ld_##KIND(x + i);                                                      \
        const __m256 s = _mm256_mul_ps(wv, xv);                                                     \
        const __m256 pos = _mm256_cmp_ps(xv, zero, _CMP_GT_OQ);                                     \
        ps_st_##KIND(y + i, _mm256_blendv_ps(s, xv, pos), nt);                                      \
    }                                                                                               \
    for (; i < n; i++) {                                                                            \
        const float xv = ps_sld_##KIND(x[i]), s = w * xv;                                           \
        y[i] = ps_sst_##KIND(xv > 0.0f ? xv : s);                                                   \
    }                                                                                               \
}

PS_DEFINE_FORWARD(f32, float)
PS_DEFINE_FORWARD(f16, uint16_t)
PS_DEFINE_FORWARD(bf16, uint16_t)

NN_PRELU_FUSED_SPAN(f32, float)
NN_PRELU_FUSED_SPAN(f16, uint16_t)
NN_PRELU_FUSED_SPAN(bf16, uint16_t)

void nn_prelu_fwd_fused_avx2(void *vctx, int64_t begin, int64_t end)
{
    const nn_prelu_ctx *ctx = (const nn_prelu_ctx *)vctx;
    const nn_prelu_plan *p = ctx->plan;
    const int64_t n = end - begin;
    if (p->self_dtype == ACL_FLOAT) {
        prelu_simd_span_f32(p, ctx->weight, begin, (const float *)ctx->self + begin,
                            (float *)ctx->out + begin, n, ctx->streaming);
    } else if (p->self_dtype == ACL_FLOAT16) {
        prelu_simd_span_f16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                            (uint16_t *)ctx->out + begin, n, ctx->streaming);
    } else {
        prelu_simd_span_bf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                             (uint16_t *)ctx->out + begin, n, ctx->streaming);
    }
    if (ctx->streaming) nn_streaming_fence();
}
#else
void nn_prelu_fwd_fused_avx2(void *vctx, int64_t begin, int64_t end)
{
    nn_prelu_fwd_staged_avx2(vctx, begin, end); /* never chosen: no AVX2 tier on this target */
}
#endif
