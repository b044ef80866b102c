/*
 * max_pool_fw_avx512.h - what the max-pool forward's AVX-512 plane paths share
 * (max_pool_fw_avx512.c: the cell, keyed and paired paths; max_pool_fw_rows_avx512.c: the
 * pooled-rows path): lane tables, the input rows an output row covers, and the memory traffic a
 * plane spreads over its output rows.
 */
#ifndef NN_KERNELS_MAX_POOL_FW_AVX512_H
#define NN_KERNELS_MAX_POOL_FW_AVX512_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/max_pool/max_pool_fw.h"

#if NN_HAVE_X86_SIMD
/* Even elements of two 16-lane vectors (lo's 0, 2, ..., 14, then hi's). */
static const int32_t even_lanes[16] __attribute__((aligned(64))) = {0,  2,  4,  6,  8,  10, 12, 14,
                                                                    16, 18, 20, 22, 24, 26, 28, 30};

/* 0 .. 31 in 16-bit lanes (widened, the first 16 are the lane numbers of a 32-bit vector). */
static const int16_t lane_words[32] __attribute__((aligned(64))) = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* Even words of two vectors (a's 0, 2, ..., 30, then b's): the even columns of 64 elements. */
static const int16_t even_words[32] __attribute__((aligned(64))) = {
    0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62};

/* fp16/bf16 bits -> int16 key in value order: x >= 0 keeps its bits, -x becomes -bits(x). */
NN_AVX512 static inline __attribute__((always_inline)) __m512i key16(__m512i w)
{
    const __m512i sign = _mm512_srai_epi16(w, 15);
    /* w ^ (sign & 0x7FFF), then + 1 where negative (-0.0 -> 0) */
    const __m512i flipped = _mm512_ternarylogic_epi32(w, sign, _mm512_set1_epi16(0x7FFF), 0x78);
    return _mm512_sub_epi16(flipped, sign);
}
/* The inverse for a key other than 0 (0 is +0.0 and -0.0): |key| with the key's sign bit. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i unkey16(__m512i k)
{
    return _mm512_ternarylogic_epi32(_mm512_abs_epi16(k), _mm512_srai_epi16(k, 15), _mm512_set1_epi16((int16_t)0x8000),
                                     0xF8);
}

/* fp16 compares of 32 words (AVX512-FP16's vcmpph), for the forms chosen only when
 * nn_cpu_avx512fp16(): a > b (ordered, so a NaN on either side gives false; +0.0 and -0.0 tie),
 * and a or b a NaN.  Written as assembly so that they can sit in the always-inline helpers the
 * int16-key forms share: a target("avx512fp16") helper cannot be inlined into those (GCC refuses
 * across the target difference) and clang 14's headers declare the FP16 intrinsics only under
 * -mavx512fp16, which would let the compiler use FP16 in the whole file. */
NN_AVX512 static inline __attribute__((always_inline)) __mmask32 ph_greater(__m512i a, __m512i b)
{
    __mmask32 m;
    __asm__("vcmpph $0x1e, %2, %1, %0" : "=k"(m) : "v"(a), "v"(b)); /* 0x1e: _CMP_GT_OQ */
    return m;
}
NN_AVX512 static inline __attribute__((always_inline)) __mmask32 ph_unordered(__m512i a, __m512i b)
{
    __mmask32 m;
    __asm__("vcmpph $0x03, %2, %1, %0" : "=k"(m) : "v"(a), "v"(b)); /* 0x03: _CMP_UNORD_Q */
    return m;
}

/* The lanes of a row step that read inside the row: all of them but at the row's ends. */
static inline uint32_t step_lanes(int64_t c0, int64_t W, int64_t lanes)
{
    return c0 >= 0 && c0 + lanes <= W ? (uint32_t)((1ull << lanes) - 1) : nn_lane_range(-c0, W - c0, lanes);
}

/* The rows an output row's windows cover: [h_lo, h_hi), ih0 the first (maybe above the plane). */
typedef struct window_rows {
    int64_t ih0, h_lo, rows;
} window_rows;
static inline window_rows rows_of(const mp_geometry *g, int64_t oh)
{
    const int64_t ih0 = oh * g->stride_h - g->pad_h;
    const int64_t h_lo = ih0 < 0 ? 0 : ih0;
    const int64_t h_hi = ih0 + g->kernel_h < g->height ? ih0 + g->kernel_h : g->height;
    return (window_rows){ih0, h_lo, h_hi - h_lo};
}

/* Copies [*done, upto) of a plane's values or indices from the scratch to their tensor with
 * streaming stores, once DRAIN_MIN_BYTES or more are ready, up to the last line boundary of the
 * destination (`all`: everything).  Only a line the plane shares with its neighbour, at either
 * end, takes ordinary stores.  Bursts of 16 lines rather than 4: on an AMD EPYC Zen 5 the
 * 1-thread N32 C256 56x56 2x2 forward took 0.92-0.95 of the time (fp16, bf16, fp32; alternated
 * in one process, back to back) and 0.96-0.98 right after torch's call (bf16 faster in 11 of 12
 * rounds), 2 threads 0.95; 512 and 2048 bytes about as good, the whole plane at its end no better. */
enum { DRAIN_MIN_BYTES = 1024 };
NN_AVX512 static inline void drain(unsigned char *dst, const unsigned char *src, int64_t *done, int64_t upto, bool all)
{
    if (!all) {
        upto = (int64_t)((((uintptr_t)dst + (uintptr_t)upto) & ~(uintptr_t)63) - (uintptr_t)dst);
        if (upto - *done < DRAIN_MIN_BYTES) return;
    }
    unsigned char *d = dst + *done;
    const unsigned char *s = src + *done;
    int64_t n = upto - *done;
    *done = upto;
    int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63);
    if (head > n) head = n;
    memcpy(d, s, (size_t)head);
    for (d += head, s += head, n -= head; n >= 64; d += 64, s += 64, n -= 64)
        _mm512_stream_si512((void *)d, _mm512_loadu_si512(s));
    memcpy(d, s, (size_t)n);
}

/* The memory traffic a plane spreads over its output rows: equal shares of the next plane's
 * prefetch (into L2) and of the tail's streaming stores before each row, and (io->out_nt) the
 * finished lines of values and indices after it. */
typedef struct row_shares {
    int64_t lines, fetch_step, zero_step, fetched, zeroed, values_done, indices_done;
} row_shares;

/* Shares for `parts` parts of the plane (shares_of: its output rows). */
static inline row_shares shares_over(const fw_plane_io *io, const mp_geometry *g, int64_t elem, int64_t parts)
{
    const int64_t lines = io->next ? (g->height * g->width * elem + 63) / 64 : 0;
    return (row_shares){lines, (lines + parts - 1) / parts, (io->zero_lines + parts - 1) / parts, 0, 0, 0, 0};
}
static inline row_shares shares_of(const fw_plane_io *io, const mp_geometry *g, int64_t elem)
{
    return shares_over(io, g, elem, g->out_height);
}

NN_AVX512 static inline __attribute__((always_inline)) void shares_before_row(const fw_plane_io *io, row_shares *sh)
{
    for (const int64_t end = sh->fetched + sh->fetch_step < sh->lines ? sh->fetched + sh->fetch_step : sh->lines;
         sh->fetched < end; ++sh->fetched)
        _mm_prefetch((const char *)io->next + sh->fetched * 64, _MM_HINT_T1);
    for (const int64_t end = sh->zeroed + sh->zero_step < io->zero_lines ? sh->zeroed + sh->zero_step : io->zero_lines;
         sh->zeroed < end; ++sh->zeroed)
        _mm512_stream_si512((void *)(io->zeros + sh->zeroed * 64), _mm512_setzero_si512());
}

/* After the plane's first `outputs` outputs of elem bytes (`last`: all of them). */
NN_AVX512 static inline __attribute__((always_inline)) void shares_after(const fw_plane_io *io, row_shares *sh,
                                                                         int64_t outputs, bool last, int64_t elem)
{
    if (!io->out_nt) return;
    drain(io->out_nt, io->values, &sh->values_done, outputs * elem, last);
    drain(io->indices_nt, (const unsigned char *)io->argmax, &sh->indices_done, outputs * 4, last);
}
/* After output row oh of a plane of Ho rows of Wo outputs of elem bytes. */
NN_AVX512 static inline __attribute__((always_inline)) void shares_after_row(const fw_plane_io *io, row_shares *sh,
                                                                             int64_t oh, int64_t Ho, int64_t Wo,
                                                                             int64_t elem)
{
    shares_after(io, sh, (oh + 1) * Wo, oh + 1 == Ho, elem);
}

/* The paired path (max_pool_fw_pairs_avx512.c): 2x2 windows, stride 2, no padding, every
 * window inside the plane (no ceil-mode window past its edge). */
static inline bool nn_mp_fw_pair_geometry(const mp_geometry *g)
{
    return g->kernel_h == 2 && g->kernel_w == 2 && g->stride_h == 2 && g->stride_w == 2 && g->pad_h == 0 &&
           g->pad_w == 0 && 2 * g->out_height <= g->height && 2 * g->out_width <= g->width &&
           g->width < 65535; /* W + 1 fits the 16-bit index offsets */
}
/* False for a plane with a NaN in a window (the caller redoes the plane on the cell path). */
bool nn_mp_fw_pairs_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype);

/* The pooled-rows path: planes of 3x3 windows with stride 2 (any padding, ceil mode or not),
 * pooled first along each input row, then down; fp32 on exact fp32 values
 * (max_pool_fw_rows_avx512.c), fp16 and bf16 on int16 keys (fp16 on its words with vcmpph on
 * a CPU with AVX512-FP16), 32 windows per vector
 * (max_pool_fw_rows16_avx512.c; bf16 rows wider than MP_ROWS16_MAX_WO outputs take the fp32
 * form, fp16 ones the keyed path).  Its scratch (in the keyed path's rows, nn_mp_fw_keys_bytes)
 * holds three pooled rows (fp32: values and indices; 16-bit: keys and cell codes, less). */
#define MP_ROWS16_MAX_WO 2048 /* the 16-bit form's per-step masks sit on the stack */
static inline bool mp_rows3_geometry(const mp_geometry *g, aclDataType dtype)
{
    return (dtype == ACL_FLOAT || dtype == ACL_BF16 || (dtype == ACL_FLOAT16 && g->out_width <= MP_ROWS16_MAX_WO)) &&
           g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 2 && g->stride_w == 2;
}
static inline int64_t mp_rows3_len(const mp_geometry *g) { return (g->out_width + 15) / 16 * 16; }
static inline int64_t mp_rows3_bytes(const mp_geometry *g) { return 3 * 2 * mp_rows3_len(g) * 4; }
/* False for a plane with a NaN in a window (nothing is final; the caller redoes the plane). */
bool nn_mp_fw_rows3_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype);
bool nn_mp_fw_rows16_plane(const fw_plane_io *io, const mp_geometry *g, aclDataType dtype);
#endif /* NN_HAVE_X86_SIMD */

#endif /* NN_KERNELS_MAX_POOL_FW_AVX512_H */
