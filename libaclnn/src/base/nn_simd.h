/*
 * nn_simd.h - what the vector kernels share: the lane helpers that move fp16/bf16 to and from
 * fp32 in AVX-512 registers, the target attributes of the tiers, and the line stage that writes
 * an output in whole cache lines.
 *
 * The library is built for baseline x86-64 (or aarch64, where only the portable code and the
 * line stage below exist).  A vector kernel is compiled for its instruction set
 * (a kernels/<family>/<family>_avx2.c or _avx512.c file, built with that set's -m flags, or a
 * function marked NN_AVX2 / NN_AVX512) and called only when the CPU table (nn_cpu_features,
 * cpu.c) says so, with the portable loops as the fallback.  NN_HAVE_X86_SIMD says whether this
 * compiler targets x86-64 at all, so that any of that code can be built.  The helpers round
 * exactly as the scalar conversions (nn_half_impl.h), so a fast path gives the portable bits.
 */
#ifndef NN_SIMD_H
#define NN_SIMD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nn_base.h"

/* n >= 16 bytes from s to d in 16-byte moves, the last one overlapping the one before when n is
 * not a multiple of 16: a short row's copy, inlined into the row loops (a call to memcpy costs
 * about what a 112-byte copy does). */
static inline __attribute__((always_inline)) void nn_copy_bytes16(unsigned char *restrict d,
                                                                  const unsigned char *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) memcpy(d + i, s + i, 16);
    if (i < n) memcpy(d + n - 16, s + n - 16, 16);
}

/* Bits [lo, hi) of a `width`-bit lane mask (width <= 32), clipped to [0, width): the lanes of a
 * vector whose positions fall inside a range. */
static inline uint32_t nn_lane_range(int64_t lo, int64_t hi, int64_t width)
{
    if (lo < 0) lo = 0;
    if (hi > width) hi = width;
    if (hi <= lo) return 0;
    const uint64_t ones = hi - lo >= 64 ? ~0ull : (1ull << (hi - lo)) - 1u;
    return (uint32_t)(ones << lo);
}

/* The lowest `n` bits of a 64-bit mask (n <= 64): the bytes of a 64-byte vector a masked load or
 * store of n bytes covers. */
static inline uint64_t nn_low_bits64(int64_t n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* x86-64 vector code (AVX2 and AVX-512 tiers) can be compiled here. */
#define NN_HAVE_X86_SIMD 1
#include <immintrin.h>

#define NN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* v's lanes of es bytes (2, 4 or 8) permuted by idx (lane j takes v's lane idx[j]); es is a
 * constant in the always-inlined callers, so one instruction remains. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i nn512_permute_lanes(size_t es, __m512i idx, __m512i v)
{
    switch (es) {
    case 2: return _mm512_permutexvar_epi16(idx, v);
    case 4: return _mm512_permutexvar_epi32(idx, v);
    default: return _mm512_permutexvar_epi64(idx, v);
    }
}

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

/* No "fma": with it the compiler may contract a*b+c, and the AVX2 paths must give the portable
 * loops' bits. */
#define NN_AVX2 __attribute__((target("avx2,f16c")))

/* nn_copy_bytes16 in 32-byte moves (n >= 32), for AVX2 code only: a function marked NN_AVX2 or
 * a file built with the AVX2 flags (GCC refuses to inline it elsewhere, and a call would fault on
 * a CPU without AVX2).  Intrinsics, not a 32-byte memcpy: GCC 12's generic tuning compiles that
 * to two 16-byte moves even with AVX2 enabled. */
NN_AVX2 static inline void nn_copy_bytes32(unsigned char *restrict d, const unsigned char *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
    if (i < n) _mm256_storeu_si256((__m256i *)(d + n - 32), _mm256_loadu_si256((const __m256i *)(s + n - 32)));
}

/* 8 fp32 lanes rounded once to 16-bit words, one per 32-bit lane (high halves zero): fp16 with
 * F16C (to nearest even), else bf16 with nn_half_f32_to_bf16's rounding (to nearest even, a NaN
 * quieted by setting the top mantissa bit).  AVX2 code only, as nn_copy_bytes32. */
NN_AVX2 static inline __m256i nn256_round_words(__m256 v, bool fp16)
{
    if (fp16) return _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i u = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)), nan);
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

/* fp32 -> fp16 on 16 lanes, to nearest even (the F16C conversion dtype.c's rows use). */
NN_AVX512 static inline __m256i nn512_round_f16(__m512 v)
{
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#else
#define NN_HAVE_X86_SIMD 0
#endif

/* A short row of n bytes (any n) from s to d in vector moves, inlined into the row loops: 32-byte
 * ones when `wide` and n >= 32, 16-byte ones when n >= 16, else memcpy.  `wide` must be a
 * constant, true only in AVX2 code (nn_copy_bytes32). */
static inline __attribute__((always_inline)) void nn_copy_row_short(unsigned char *restrict d,
                                                                    const unsigned char *restrict s, size_t n,
                                                                    bool wide)
{
    (void)wide; /* no 32-byte moves without x86 SIMD */
#if NN_HAVE_X86_SIMD
    if (wide && n >= 32) {
        nn_copy_bytes32(d, s, n);
        return;
    }
#endif
    if (n >= 16)
        nn_copy_bytes16(d, s, n);
    else
        memcpy(d, s, n);
}

/* Prefetches every 64-byte line of [p, p + bytes), the last byte's included, for reading into
 * every cache level (prefetcht0; PRFM PLDL1KEEP on aarch64): a row a kernel reads soon.  The
 * range may lie past the tensor: a prefetch never faults. */
static inline __attribute__((always_inline)) void nn_prefetch_bytes(const void *p, size_t bytes)
{
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch((const char *)p + b, 0, 3);
    __builtin_prefetch((const char *)p + bytes - 1, 0, 3);
}

/*
 * A line stage: an output written through a small buffer in whole, aligned 64-byte lines, each
 * as soon as it is complete (non-temporal when `stream`).  A kernel builds output bytes in the
 * buffer at nn_line_stage_at(st, offset) (offsets from the output's start; the buffer holds the
 * bytes from `written` on) and calls nn512_line_stage_flush(st, done, last) once bytes
 * [0, done) are final.  Only the partial lines at the two ends of the output get ordinary
 * stores: a row-by-row copy would leave a partial line at every row boundary, each a read for
 * ownership and a stalled store queue.  The buffer must hold what is staged between two
 * flushes plus the < 64 bytes carried over.  Used by MaxPool2dWithMaskBackward's AVX-512 planes
 * and the fp32 UpsampleNearestExact1dBackward's row stretches.  The stage itself is plain C
 * (any target); only nn512_line_stage_flush needs x86-64.
 */
typedef struct nn_line_stage {
    unsigned char *buf; /* buf[0] is output byte `written` */
    unsigned char *dst; /* the output */
    int64_t written;    /* output bytes [0, written) are in dst */
    bool stream;        /* non-temporal stores for whole lines */
} nn_line_stage;

static inline unsigned char *nn_line_stage_at(const nn_line_stage *st, int64_t offset)
{
    return st->buf + (offset - st->written);
}

/* A stage's buffer is given NN_LINE_STAGE_SLACK more bytes than it needs, and
 * nn_line_stage_place(region, bytes) says where in that region the `bytes` go: at its start
 * when they fit in the rest of that 4 KiB page, else at the next page.  Why: with a stage
 * straddling a page boundary, the AVX-512 max-pool backward kernels ran 2.5-3x slower on an AMD
 * Zen 4 (the same call with only the stage moved through a page: 6.2 ms at most offsets,
 * 15.5-17.5 ms once its first kilobyte crossed the boundary) - the unaligned 64-byte loads and
 * masked stores on the stage then split across two pages.  A stage larger than a page cannot
 * avoid it, and then starts where the region does. */
#define NN_LINE_STAGE_SLACK 4096
static inline unsigned char *nn_line_stage_place(unsigned char *region, size_t bytes)
{
    const size_t in_page = (uintptr_t)region & 4095u;
    return bytes > 4096 || in_page + bytes <= 4096 ? region : region + (4096 - in_page);
}

/* nn512_line_stage_flush for paths without AVX-512: the same lines written, through
 * nn_copy_row_nt (non-temporal from 256 bytes on, so callers flush at least 512 at a time). */
static inline void nn_line_stage_flush(nn_line_stage *st, int64_t done, bool last)
{
    int64_t end = done;
    if (!last) end -= (int64_t)(((uintptr_t)st->dst + (uintptr_t)end) & 63u);
    const int64_t n = end - st->written;
    if (n <= 0) return;
    if (st->stream)
        nn_copy_row_nt(st->dst + st->written, st->buf, (size_t)n);
    else
        memcpy(st->dst + st->written, st->buf, (size_t)n);
    memmove(st->buf, st->buf + n, (size_t)(done - end));
    st->written = end;
}

#if NN_HAVE_X86_SIMD
/* Writes the staged bytes before output byte `done` - rounded down to a line boundary of dst
 * unless `last` - and moves the rest to the front of the buffer.  Inlined into the row loops:
 * it runs after every row or two, where a call would cost more than the copy. */
NN_AVX512 static inline __attribute__((always_inline)) void nn512_line_stage_flush(nn_line_stage *st,
                                                                                   int64_t done, bool last)
{
    int64_t end = done;
    if (!last) end -= (int64_t)(((uintptr_t)st->dst + (uintptr_t)end) & 63u);
    const int64_t n = end - st->written;
    if (n <= 0) return;
    unsigned char *dst = st->dst + st->written;
    if (st->stream && ((uintptr_t)dst & 63u) == 0 && (n & 63) == 0) {
        for (int64_t at = 0; at < n; at += 64)
            _mm512_stream_si512((void *)(dst + at), _mm512_loadu_si512((const void *)(st->buf + at)));
    } else if (st->stream) {
        nn_copy_row_nt(dst, st->buf, (size_t)n); /* the output's first, unaligned line */
    } else {
        memcpy(dst, st->buf, (size_t)n);
    }
    const int64_t rest = done - end;
    if (rest < 64 && n >= 64) /* one masked move: the two ranges do not overlap */
        _mm512_mask_storeu_epi8(st->buf, (__mmask64)((1ull << rest) - 1u),
                                _mm512_loadu_si512((const void *)(st->buf + n)));
    else
        memmove(st->buf, st->buf + n, (size_t)rest);
    st->written = end;
}

#endif

#endif /* NN_SIMD_H */
