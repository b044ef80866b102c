/*
 * prelu_fwd_avx512.c - the Prelu forward's fp16/bf16 fused loops for AVX-512 CPUs (prelu.h),
 * compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512(), for self, compute
 * and out of one half dtype.  bf16 uses AVX512-BF16 where the plan's ctx says the CPU has it.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/prelu/prelu_avx512.h"

#if NN_HAVE_X86_SIMD
#define ps_head nn_prelu_head

/* ---- AVX-512 loops for fp16/bf16: 16 lanes per step and masked tails (prelu_avx512.h) ---- */

/* y = x > 0 ? x : w * x over n halves; w is a vector (vw) or one broadcast value (w_vec NULL).
 * Generated for the fp16/bf16 integer rounding (p512_narrow) and for the AVX512-BF16 one
 * (pbf_narrow), which need different target attributes. */
#define DEFINE_P512_FWD(NAME, TARGET, NARROW)                                                         \
TARGET static inline __attribute__((always_inline)) void                                              \
NAME(const uint16_t *x, uint16_t *y, const float *w_vec, float w_one, int64_t n, bool nt,             \
         bool bf16)                                                                                   \
{                                                                                                     \
    int64_t head = ps_head(y, sizeof(uint16_t), n, nt);                                               \
    if (head >= 16) {   /* an odd address cannot be aligned (never for real tensors): no streaming */ \
        head = 0;                                                                                     \
        nt = false;                                                                                   \
    }                                                                                                 \
    const __m512 zero = _mm512_setzero_ps(), wv = _mm512_set1_ps(w_one);                              \
    int64_t i = 0;                                                                                    \
    if (head > 0) {   /* up to 15 elements to reach 32-byte alignment */                              \
        const __mmask16 m = (__mmask16)((1u << head) - 1u);                                           \
        const __m512 xv = p512_load(x, m, bf16);                                                      \
        const __m512 w = w_vec ? _mm512_maskz_loadu_ps(m, w_vec) : wv;                                \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        _mm256_mask_storeu_epi16(y, m, NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16));               \
        i = head;                                                                                     \
    }                                                                                                 \
    for (; i + 16 <= n; i += 16) {                                                                    \
        const __m512 xv = p512_load(x + i, 0xffff, bf16);                                             \
        const __m512 w = w_vec ? _mm512_loadu_ps(w_vec + i) : wv;                                     \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        const __m256i h = NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16);                             \
        if (nt) _mm256_stream_si256((__m256i *)(y + i), h);                                           \
        else _mm256_storeu_si256((__m256i *)(y + i), h);                                              \
    }                                                                                                 \
    if (i < n) {                                                                                      \
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                        \
        const __m512 xv = p512_load(x + i, m, bf16);                                                  \
        const __m512 w = w_vec ? _mm512_maskz_loadu_ps(m, w_vec + i) : wv;                            \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        _mm256_mask_storeu_epi16(y + i, m, NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16));           \
    }                                                                                                 \
}

DEFINE_P512_FWD(p512_fwd, P512_TARGET, p512_narrow)

/* bf16 forward with AVX512-BF16 (pbf_narrow) */
DEFINE_P512_FWD(pbf_fwd, PBF_TARGET, pbf_narrow)

PBF_TARGET static void pbf_fwd_vw_bf16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    pbf_fwd(x, y, w, 0.0f, n, nt, true);
}
PBF_TARGET static void pbf_fwd_sw_bf16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    pbf_fwd(x, y, NULL, w, n, nt, true);
}

P512_TARGET static void p512_fwd_vw_f16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    p512_fwd(x, y, w, 0.0f, n, nt, false);
}
P512_TARGET static void p512_fwd_sw_f16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    p512_fwd(x, y, NULL, w, n, nt, false);
}
P512_TARGET static void p512_fwd_vw_bf16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    p512_fwd(x, y, w, 0.0f, n, nt, true);
}
P512_TARGET static void p512_fwd_sw_bf16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    p512_fwd(x, y, NULL, w, n, nt, true);
}

#define ps_fwd_vw_p512f16 p512_fwd_vw_f16
#define ps_fwd_sw_p512f16 p512_fwd_sw_f16
#define ps_fwd_vw_p512bf16 p512_fwd_vw_bf16
#define ps_fwd_sw_p512bf16 p512_fwd_sw_bf16
NN_PRELU_FUSED_SPAN(p512f16, uint16_t)
NN_PRELU_FUSED_SPAN(p512bf16, uint16_t)
#define ps_fwd_vw_pbf16 pbf_fwd_vw_bf16
#define ps_fwd_sw_pbf16 pbf_fwd_sw_bf16
NN_PRELU_FUSED_SPAN(pbf16, uint16_t)

void nn_prelu_fwd_fused_avx512(void *vctx, int64_t begin, int64_t end)
{
    const nn_prelu_ctx *ctx = (const nn_prelu_ctx *)vctx;
    const nn_prelu_plan *p = ctx->plan;
    const int64_t n = end - begin;
    if (p->self_dtype == ACL_FLOAT16) {
        prelu_simd_span_p512f16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                                (uint16_t *)ctx->out + begin, n, ctx->streaming);
    } else if (ctx->avx512bf16) {
        prelu_simd_span_pbf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                              (uint16_t *)ctx->out + begin, n, ctx->streaming);
    } else {
        prelu_simd_span_p512bf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                                 (uint16_t *)ctx->out + begin, n, ctx->streaming);
    }
    if (ctx->streaming) nn_streaming_fence();
}
#else
void nn_prelu_fwd_fused_avx512(void *vctx, int64_t begin, int64_t end)
{
    nn_prelu_fwd_portable(vctx, begin, end); /* never chosen: no AVX-512 tier on this target */
}
#endif
