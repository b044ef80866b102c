/*
 * prelu_avx2.h - the 8-lane loads and stores of the fused AVX2 (+F16C) Prelu loops, per element
 * kind (included by prelu_fwd_avx2.c and prelu_bw_avx2.c only, which are built with the AVX2
 * flags).
 *
 * Each loop reads fp32/fp16/bf16 directly, widens 8 elements in registers, does the branchless
 * select in fp32 and narrows once on the store (fp16 with vcvtps2ph round-to-nearest-even, bf16
 * with base's integer RNE), so there is no staging buffer and one pass over memory.  The
 * arithmetic is the scalar code's, element by element: results are bit-identical to the
 * portable paths.  Streaming variants (`nt`) write the output with non-temporal stores once the
 * destination is 32-byte aligned; callers end a range that streamed with nn_streaming_fence().
 */
#ifndef NN_KERNELS_PRELU_AVX2_H
#define NN_KERNELS_PRELU_AVX2_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"
#include "base/nn_half_impl.h"
#include "kernels/prelu/prelu.h"

#if NN_HALF_X86
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

/* v rounded to the dtype and read back (RNE, no store). */
PS_TARGET __m256 ps_rt_f32(__m256 v) { return v; }
PS_TARGET __m256 ps_rt_f16(__m256 v)
{
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
PS_TARGET __m256 ps_rt_bf16(__m256 v)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(nn_half_bf16_round_avx2(_mm256_castps_si256(v)), 16));
}

/* Scalar conversions for the tails (same rules as the vector ones). */
static inline float ps_sld_f32(float v) { return v; }
static inline float ps_sld_f16(uint16_t v) { return nn_half_f16_to_f32(v); }
static inline float ps_sld_bf16(uint16_t v) { return nn_half_bf16_to_f32(v); }
static inline float ps_sst_f32(float v) { return v; }
static inline uint16_t ps_sst_f16(float v) { return nn_half_f32_to_f16(v); }
static inline uint16_t ps_sst_bf16(float v) { return nn_half_f32_to_bf16(v); }

#define ps_head nn_prelu_head

#endif /* NN_HALF_X86 */
#endif /* NN_KERNELS_PRELU_AVX2_H */
