/*
 * nn_simd.h - what the operators' AVX-512 fast paths share: one CPU check and the lane
 * helpers that move fp16/bf16 to and from fp32.
 *
 * The library is built for baseline x86-64; a fast path is a set of functions compiled with
 * NN_AVX512 and called only when nn_cpu_avx512() is true, with the portable loops as the
 * fallback.  The helpers round exactly as core's scalar conversions (nn_half_impl.h), so a
 * fast path gives the same bits as the portable one.
 */
#ifndef NN_SIMD_H
#define NN_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/nn_core.h"

/* True when the CPU has AVX-512 F, BW, VL and DQ and ACLNN_NO_SIMD is not "1" (which keeps
 * every operator on its portable loops, for comparisons).  Valgrind's CPU has no AVX-512. */
bool nn_cpu_avx512(void);

/* True when nn_cpu_avx512() is and the CPU also has AVX512-BF16 (vcvtne2ps2bf16). */
bool nn_cpu_avx512bf16(void);

#if defined(__x86_64__) && defined(__GNUC__)
#define NN_HAVE_AVX512_CODE 1
#include <immintrin.h>

#define NN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* 16 elements of an fp32, fp16 or bf16 row from element `at` on, as fp32 (exact); lanes
 * outside `live` are not read and give +0.0. */
NN_AVX512 static inline __m512 nn512_load_f32(const void *row, int64_t at, __mmask16 live, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) return _mm512_maskz_loadu_ps(live, (const float *)row + at);
    const __m256i narrow = _mm256_maskz_loadu_epi16(live, (const uint16_t *)row + at);
    if (dtype == ACL_FLOAT16) return _mm512_cvtph_ps(narrow);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(narrow), 16));
}

/* fp32 -> bf16 on 16 lanes with nn_half_f32_to_bf16's rounding: to nearest even (subnormals
 * included), NaN quieted by setting the top mantissa bit.  This form leaves each bf16 in the low
 * half of its 32-bit lane (the high half is zero), for callers that permute the words anyway. */
NN_AVX512 static inline __m512i nn512_round_bf16_lanes(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
    const __mmask16 nan =
        _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, high, _mm512_set1_epi32(0x40));
}

/* The same, packed: 16 bf16 values. */
NN_AVX512 static inline __m256i nn512_round_bf16(__m512 v)
{
    return _mm512_cvtepi32_epi16(nn512_round_bf16_lanes(v));
}

#define NN_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

/* fp32 -> bf16 on 32 lanes, a's 16 then b's, with nn512_round_bf16's bits for lanes that are not
 * subnormal: vcvtne2ps2bf16 rounds to nearest even and quiets NaNs the same way, but reads
 * subnormal inputs as zero.  Callers must rule subnormal lanes out first (a vfpclassps test, or
 * what they know of their sums) and take nn512_round_bf16 for those. */
NN_AVX512BF16 static inline __m512i nn512_round_bf16_pair_normal(__m512 a, __m512 b)
{
    const __m512bh words = _mm512_cvtne2ps_pbh(b, a);
    __m512i bits;
    __builtin_memcpy(&bits, &words, sizeof bits);
    return bits;
}

/* fp32 -> fp16 on 16 lanes, to nearest even (the F16C conversion core's rows use). */
NN_AVX512 static inline __m256i nn512_round_f16(__m512 v)
{
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#else
#define NN_HAVE_AVX512_CODE 0
#endif

#endif /* NN_SIMD_H */
