/*
 * prelu_simd.h - fused AVX2 (+F16C) loops for aclnnPrelu / aclnnPreluBackward (prelu.c,
 * prelu_backward.c only).
 *
 * Each loop reads fp32/fp16/bf16 directly, widens 8 elements in registers, does the branchless
 * select in fp32 and narrows once on the store (fp16 with vcvtps2ph round-to-nearest-even, bf16
 * with base's integer RNE), so there is no staging buffer and one pass over memory.  The
 * arithmetic is the scalar code's, element by element: results are bit-identical to the
 * portable paths (which stay as the fallback on CPUs without AVX2/F16C).
 *
 * Streaming variants (`nt`) write the output with non-temporal stores once the destination is
 * 32-byte aligned: a write-once output then costs its bytes once (no read-for-ownership).
 * Callers end a range that streamed with nn_streaming_fence().
 *
 * Everything is `static`: nothing leaves the including translation unit.
 */
#ifndef NN_PRELU_SIMD_H
#define NN_PRELU_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"
#include "base/nn_half_impl.h"

#if NN_HALF_X86
#define NN_PRELU_SIMD 1

/* True when the CPU runs the loops below: the CPU table's AVX2 tier (AVX2 + F16C, not under
 * ACLNN_NO_SIMD=1). */
static inline bool nn_prelu_simd_ok(void)
{
    return nn_cpu_avx2();
}

#define PS_TARGET __attribute__((target("avx2,f16c"), always_inline)) static inline

/* ---- 8-lane loads / stores per element kind ----------------------------------------------- */

PS_TARGET __m256 ps_ld_f32(const float *p) { return _mm256_loadu_ps(p); }
PS_TARGET __m256 ps_ld_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
PS_TARGET __m256 ps_ld_bf16(const uint16_t *p)
{
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

PS_TARGET void ps_st_f32(float *p, __m256 v, bool nt)
{
    if (nt) _mm256_stream_ps(p, v); else _mm256_storeu_ps(p, v);
}
PS_TARGET void ps_st_f16(uint16_t *p, __m256 v, bool nt)
{
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if (nt) _mm_stream_si128((__m128i *)p, h); else _mm_storeu_si128((__m128i *)p, h);
}
PS_TARGET void ps_st_bf16(uint16_t *p, __m256 v, bool nt)
{
    __m256i r = nn_half_bf16_round_avx2(_mm256_castps_si256(v));
    __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    if (nt) _mm_stream_si128((__m128i *)p, h); else _mm_storeu_si128((__m128i *)p, h);
}

/* Scalar conversions for the tails (same rules as the vector ones). */
static inline float ps_sld_f32(float v) { return v; }
static inline float ps_sld_f16(uint16_t v) { return nn_half_f16_to_f32(v); }
static inline float ps_sld_bf16(uint16_t v) { return nn_half_bf16_to_f32(v); }
static inline float ps_sst_f32(float v) { return v; }
static inline uint16_t ps_sst_f16(float v) { return nn_half_f32_to_f16(v); }
static inline uint16_t ps_sst_bf16(float v) { return nn_half_f32_to_bf16(v); }

/* Elements before the first 32-byte aligned output element (vector stores need it for nt). */
static inline int64_t ps_head(const void *out, size_t esz, int64_t n, bool nt)
{
    if (!nt) return 0;
    const uintptr_t mis = (uintptr_t)out & 31u;
    if (mis == 0) return 0;
    if (mis % esz != 0) return n; /* cannot align: everything scalar (never for real tensors) */
    const int64_t head = (int64_t)((32u - mis) / esz);
    return head < n ? head : n;
}

/*
 * Forward: y = x > 0 ? x : w * x, with w either a per-element vector (channel-last runs) or one
 * value.  The scalar tail computes the same fp32 product and select.
 */
#define PS_DEFINE_FORWARD(KIND, T) PS_DEFINE_FORWARD_T(KIND, T, "avx2,f16c")
#define PS_DEFINE_FORWARD_T(KIND, T, TARGET)                                                        \
__attribute__((target(TARGET))) static void ps_fwd_vw_##KIND(const T *x, T *y,                \
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
__attribute__((target(TARGET))) static void ps_fwd_sw_##KIND(const T *x, T *y, float w,       \
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

/*
 * Backward, channel-last run: gi = x > 0 ? g : w*g, sums[i] += x > 0 ? +0.0 : x*g, with w and
 * sums advancing with the element (the per-row order of the portable loop, so the per-channel
 * sums are bit-identical).  andnot(pos, x*g) is exactly `pos ? +0.0 : x*g`.
 */
#define PS_DEFINE_BACKWARD(KIND, T)                                                                 \
__attribute__((target("avx2,f16c"))) static void ps_bwd_vw_##KIND(                                  \
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
__attribute__((target("avx2,f16c"))) static float ps_bwd_sw_##KIND(                                 \
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

#else
#define NN_PRELU_SIMD 0
static inline bool nn_prelu_simd_ok(void) { return false; }
#endif /* NN_HALF_X86 */

#endif /* NN_PRELU_SIMD_H */
