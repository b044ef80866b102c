/*
 * nn_half_impl.h - fp16 / bf16 <-> fp32 conversion kernels (scalar, portable rows, x86 SIMD rows).
 *
 * Self-contained (only system headers) so that dtype.c wraps it into the nn_* functions and a
 * test program can include it directly to check every variant against its own reference.
 *
 * Rules, identical in every variant (the SIMD rows are verified bit-identical to the scalar
 * code over all 65536 half values and many fp32 values):
 *   - fp32 -> fp16 / bf16 rounds to nearest, ties to even; overflow gives +/-Inf; results
 *     below the smallest subnormal round to signed zero; subnormal results are exact RNE.
 *   - Inf stays Inf; a NaN stays a NaN with its sign and the top payload bits, made quiet
 *     (fp32 -> half sets the quiet bit, as vcvtps2ph and vcvtneps2bf16 do).
 *   - fp16 -> fp32 is exact (subnormals too); an fp16 NaN becomes a quiet fp32 NaN with the
 *     payload shifted up (as vcvtph2ps does).
 *   - bf16 -> fp32 is exact, a plain 16-bit shift (NaNs keep their bits, as in PyTorch).
 * The saturation-mode variants (nn_half_*_saturate, nn_half_f32_to_f16_sat) apply the card's
 * saturation rule to those results.
 */
#ifndef NN_HALF_IMPL_H
#define NN_HALF_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NN_HALF_X86 1
#else
#define NN_HALF_X86 0
#endif

/* The scalar conversions below are always inlined: loops compiled under an optimize attribute
 * (kernels/prelu/prelu_hot.h) inline nothing that lacks it otherwise, and a call per element
 * there cost 20x (kernels/prelu/prelu_bw_portable.c). */
#define NN_HALF_SCALAR static inline __attribute__((always_inline))

NN_HALF_SCALAR uint32_t nn_half_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

NN_HALF_SCALAR float nn_half_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- scalar ------------------------------------------------------------------------------ */

/* Both fp16 conversions compute every case and select one with masks, without branches, so
 * that a row loop of them vectorizes (SSE2 on baseline x86-64, NEON on aarch64: the portable
 * rows).  (Written as ?: the selects became branches around the float operations, which GCC
 * may not if-convert under the default -ftrapping-math.) */
NN_HALF_SCALAR uint32_t nn_half_pick(uint32_t condition, uint32_t if_true, uint32_t if_false)
{
    return if_false ^ ((if_true ^ if_false) & (0u - condition)); /* condition is 0 or 1 */
}

#if defined(__aarch64__)
/* AArch64 widens in hardware (FCVT; FCVTL when a loop of it vectorizes: baseline ARMv8): exact,
 * subnormals included, a NaN made quiet with its payload shifted up (default-NaN mode off, as
 * Linux starts every thread).  The narrowing stays the masked form below, which vectorizes in
 * the kernels' loops (GCC 12 does not vectorize a float -> __fp16 conversion); the row of it
 * uses FCVTN (nn_half_f32_to_f16_row).  test_core_dtype checks both against every code under
 * qemu in `make cross-test`. */
NN_HALF_SCALAR float nn_half_f16_to_f32(uint16_t h)
{
    __fp16 v;
    memcpy(&v, &h, sizeof v);
    return (float)v;
}
#else
NN_HALF_SCALAR float nn_half_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t magnitude = h & 0x7fffu; /* exponent and mantissa */
    /* normal: rebias the exponent 15 -> 127 */
    const uint32_t normal = (magnitude << 13) + (112u << 23);
    /* Inf, or NaN made quiet (payload shifted up) */
    const uint32_t special = (magnitude << 13) | 0x7f800000u | ((uint32_t)(magnitude > 0x7c00u) << 22);
    /* subnormal or zero: mantissa * 2^-24, an exact int -> float conversion and an exact
     * multiply whose result is normal (no denormal operand: DAZ / FTZ cannot change it) */
    const uint32_t small = nn_half_f32_bits((float)(int32_t)magnitude * 0x1p-24f);
    const uint32_t result = nn_half_pick(magnitude >= 0x7c00u, special,
                                         nn_half_pick(magnitude >= 0x400u, normal, small));
    return nn_half_bits_f32(sign | result);
}
#endif

NN_HALF_SCALAR uint16_t nn_half_f32_to_f16(float f)
{
    const uint32_t u = nn_half_f32_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t magnitude = u & 0x7fffffffu;
    /* NaN: keep the top payload bits, set the quiet bit */
    const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
    /* normal fp16 result: rebias 127 -> 15, round the low 13 bits to nearest even (wraps, unused,
     * below the normal range) */
    const uint32_t normal = (magnitude + 0xfffu + ((magnitude >> 13) & 1u) - (112u << 23)) >> 13;
    /* subnormal fp16 result (or zero): |f| + 0.5 lies in [0.5, 0.5 + 2^-14), where the fp32
     * spacing is 2^-24, the fp16 subnormal step, so the add rounds |f| to nearest even in units
     * of 2^-24 (2^-25 ties to 0, 2^-14 - 2^-25 carries into the smallest normal, 0x400) and
     * the low bits of the sum are the code.  (The add rounds in the FPU's mode, round to
     * nearest even unless a program changes it; a denormal |f| is 0 either way.) */
    const uint32_t small = nn_half_f32_bits(nn_half_bits_f32(magnitude) + 0.5f) - 0x3f000000u;
    const uint32_t finite = nn_half_pick(magnitude >= 0x38800000u, normal, small);
    /* >= 65520 rounds to Inf (and Inf itself) */
    const uint32_t code = nn_half_pick(magnitude > 0x7f800000u, nan,
                                       nn_half_pick(magnitude >= 0x477ff000u, 0x7c00u, finite));
    return (uint16_t)(sign | code);
}

/* fp32 -> fp16 rounding ties away from zero (AscendC's RoundMode::CAST_ROUND; the kernels whose
 * arithmetic libaclnn follows use it in a few narrowings).  NaN, Inf and overflow as above:
 * >= 65520 is a tie between 65504 and 2^16 and goes to Inf. */
static inline uint16_t nn_half_f32_to_f16_ties_away(float f)
{
    uint32_t u = nn_half_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t magnitude = u & 0x7fffffffu;
    if (magnitude > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    if (magnitude >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u);
    if (magnitude >= 0x38800000u) /* normal: add half an fp16 ulp, ties carry away from zero */
        return (uint16_t)(sign | (((magnitude + 0x1000u) >> 13) - (112u << 10)));
    if (magnitude < 0x33000000u) /* below 2^-25: zero */
        return sign;
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exponent; /* 14 .. 24 */
    return (uint16_t)(sign | ((mantissa + (1u << (shift - 1))) >> shift));
}

NN_HALF_SCALAR float nn_half_bf16_to_f32(uint16_t b)
{
    return nn_half_bits_f32((uint32_t)b << 16);
}

NN_HALF_SCALAR uint16_t nn_half_f32_to_bf16(float f)
{
    uint32_t u = nn_half_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* ---- saturation mode ---------------------------------------------------------------------- */

/* What a card in saturation mode leaves of a 16-bit float result: an Inf becomes the largest
 * finite value of its sign, a NaN becomes +0, a finite value stays (CANN runtime's
 * aclrtFloatOverflowMode page: in saturation mode an Inf result ends as a maximal value and a NaN
 * result as 0; docs/precision.md, "Overflow mode").  The one place this rule lives: the
 * saturating narrowings and the executor's post-pass both use it.
 * `exponent_mask` is the format's all-ones exponent (fp16 0x7c00, bf16 0x7f80); the largest
 * finite magnitude is the code just below it. */
static inline uint16_t nn_half_saturate_bits(uint16_t h, uint16_t exponent_mask)
{
    const uint16_t magnitude = (uint16_t)(h & 0x7fffu);
    if (magnitude < exponent_mask) return h;
    if (magnitude > exponent_mask) return 0; /* NaN; the sign of the 0 is not documented */
    return (uint16_t)((h & 0x8000u) | (exponent_mask - 1u));
}

static inline uint16_t nn_half_f16_saturate(uint16_t h) { return nn_half_saturate_bits(h, 0x7c00u); }
static inline uint16_t nn_half_bf16_saturate(uint16_t b) { return nn_half_saturate_bits(b, 0x7f80u); }

/* fp32 -> fp16 in saturation mode: round to nearest even, then the rule above.  Saturating the
 * rounded code is the same as saturating the exact value: RNE gives Inf exactly when |f| >=
 * 65520, and every finite |f| beyond 65504 saturates to 65504 either way. */
static inline uint16_t nn_half_f32_to_f16_sat(float f) { return nn_half_f16_saturate(nn_half_f32_to_f16(f)); }

static inline void nn_half_f16_saturate_row(uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] = nn_half_f16_saturate(h[i]);
}

static inline void nn_half_bf16_saturate_row(uint16_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = nn_half_bf16_saturate(b[i]);
}

/* ---- portable rows ------------------------------------------------------------------------ */

static inline void nn_half_f16_to_f32_row(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = nn_half_f16_to_f32(src[i]);
}

static inline void nn_half_f32_to_f16_row(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
#if defined(__aarch64__) /* FCVTN: round to nearest even in FPCR's default mode, as above */
    for (; i + 4 <= n; i += 4)
        vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
#endif
    for (; i < n; i++)
        dst[i] = nn_half_f32_to_f16(src[i]);
}

static inline void nn_half_bf16_to_f32_row(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = nn_half_bf16_to_f32(src[i]);
}

static inline void nn_half_f32_to_bf16_row(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = nn_half_f32_to_bf16(src[i]);
}

/* ---- x86 SIMD rows (call only when the CPU has the features) ------------------------------ */

#if NN_HALF_X86

__attribute__((target("f16c,avx2"))) static inline void
nn_half_f16_to_f32_row_f16c(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++)
        dst[i] = nn_half_f16_to_f32(src[i]);
}

__attribute__((target("f16c,avx2"))) static inline void
nn_half_f32_to_f16_row_f16c(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    for (; i < n; i++)
        dst[i] = nn_half_f32_to_f16(src[i]);
}

__attribute__((target("avx2"))) static inline void
nn_half_bf16_to_f32_row_avx2(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(wide, 16));
    }
    for (; i < n; i++)
        dst[i] = nn_half_bf16_to_f32(src[i]);
}

/* Integer RNE on 8 lanes: the same arithmetic as nn_half_f32_to_bf16. */
__attribute__((target("avx2"))) static inline __m256i nn_half_bf16_round_avx2(__m256i u)
{
    const __m256i one = _mm256_set1_epi32(1);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
    __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(rounded, quiet, is_nan);
}

__attribute__((target("avx2"))) static inline void
nn_half_f32_to_bf16_row_avx2(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i lo = nn_half_bf16_round_avx2(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m256i hi = nn_half_bf16_round_avx2(_mm256_loadu_si256((const __m256i *)(src + i + 8)));
        /* packus works per 128-bit lane; the permute restores element order. */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
        _mm256_storeu_si256((__m256i *)(dst + i), packed);
    }
    for (; i < n; i++)
        dst[i] = nn_half_f32_to_bf16(src[i]);
}

/* vcvtneps2bf16 rounds to nearest even and quiets NaNs like the scalar code, but treats
 * subnormal inputs as zero; those lanes are redone with the integer rounding. */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static inline void
nn_half_f32_to_bf16_row_avx512(const float *src, uint16_t *dst, size_t n)
{
    const __m512i exponent_mask = _mm512_set1_epi32(0x7f800000);
    const __m512i mantissa_mask = _mm512_set1_epi32(0x007fffff);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        __m256bh hw = _mm512_cvtneps_pbh(v);
        __m512i u = _mm512_castps_si512(v);
        __mmask16 subnormal = _mm512_testn_epi32_mask(u, exponent_mask) &
                              _mm512_test_epi32_mask(u, mantissa_mask);
        __m256i result;
        memcpy(&result, &hw, sizeof result);
        if (subnormal) {
            __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
            __m512i rounded = _mm512_srli_epi32(
                _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
            __m512i merged = _mm512_mask_mov_epi32(_mm512_cvtepu16_epi32(result), subnormal, rounded);
            result = _mm512_cvtepi32_epi16(merged);
        }
        _mm256_storeu_si256((__m256i *)(dst + i), result);
    }
    for (; i < n; i++)
        dst[i] = nn_half_f32_to_bf16(src[i]);
}

#endif /* NN_HALF_X86 */

#endif /* NN_HALF_IMPL_H */
