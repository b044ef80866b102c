/*
 * prelu_avx512.h - the 16-lane fp16/bf16 loads and narrowing stores of the AVX-512 Prelu loops
 * (included by prelu_fwd_avx512.c and prelu_bw_avx512.c only, which are built with the AVX-512
 * flags).  The arithmetic around them is the AVX2 loops' (fp32 product, ordered `x > 0` select,
 * one RNE rounding on the store), so the bytes are identical.  A 16-lane half vector is 32
 * bytes: the AVX2 loops' 32-byte alignment head (nn_prelu_head) serves the streaming stores.
 */
#ifndef NN_KERNELS_PRELU_AVX512_H
#define NN_KERNELS_PRELU_AVX512_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/prelu/prelu.h"

#if NN_HAVE_X86_SIMD
#define P512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,avx2")))
/* AVX512-BF16 (vcvtneps2bf16) on top */
#define PBF_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,f16c,avx2")))

P512_TARGET static inline __attribute__((always_inline)) __m512 p512_load(const uint16_t *p,
                                                                          __mmask16 m, bool bf16)
{
    return nn512_load_f32(p, 0, m, bf16 ? ACL_BF16 : ACL_FLOAT16);
}

/* Same rounding as nn_half_f32_to_f16 / nn_half_f32_to_bf16 (RNE, NaN quieted). */
P512_TARGET static inline __attribute__((always_inline)) __m256i p512_narrow(__m512 v, bool bf16)
{
    return bf16 ? nn512_round_bf16(v) : nn512_round_f16(v);
}

/* The integer rounding out of line, for pbf_narrow's rare vectors: inlined, its constants took
 * registers the hot loops around pbf_narrow then rebuilt every step. */
P512_TARGET __attribute__((noinline, unused)) static __m256i p512_narrow_bf16_rare(__m512 v)
{
    return nn512_round_bf16(v);
}

/* bf16 with AVX512-BF16: vcvtneps2bf16 rounds to nearest even and quiets NaNs exactly like
 * nn_half_f32_to_bf16, but reads subnormal inputs as zero; a vector holding a subnormal value is
 * rounded with the integer code instead (rare: only values below 2^-126). */
PBF_TARGET static inline __attribute__((always_inline)) __m256i pbf_narrow(__m512 v, bool bf16)
{
    (void)bf16; /* always bf16: the parameter gives p512_narrow's signature */
    const __mmask16 subnormal = _mm512_fpclass_ps_mask(v, 0x20); /* the denormal class */
    if (__builtin_expect(subnormal != 0, 0)) return p512_narrow_bf16_rare(v);
    const __m256bh h = _mm512_cvtneps_pbh(v);
    __m256i r;
    memcpy(&r, &h, sizeof r);
    return r;
}
#endif /* NN_HAVE_X86_SIMD */
#endif /* NN_KERNELS_PRELU_AVX512_H */
