/*
 * max_pool_fw_avx512.c - the max-pool forward's plane kernel with AVX-512 (max_pool_fw.h):
 * 16 outputs of a row per vector, for strides 1 and 2 along the row, in fp32, fp16 or bf16
 * straight from the input (no widened copy of the plane, no gather of the winners).
 *
 * For each output row, each block of 16 outputs visits its window cells in PyTorch's order
 * (kh outer, kw inner).  Cell b of the 16 windows is row[ow*sW + b - pW] for the 16 ow: one load
 * (stride 1) or 32 consecutive elements whose even ones are taken (stride 2).  Elements outside
 * the row are not read; they load as -inf, which is never taken (-inf > best is false and it is
 * not a NaN), so they act as the portable kernel's skipped cells.  A cell is taken when it is
 * greater than the running best or NaN, on the fp32 value (fp16/bf16 widened exactly); the
 * raw element of the winner is carried along with the best (fp32 and bf16: the best's own bits,
 * bf16's top half; fp16, whose widening quiets a signalling NaN: the 16-bit word, selected with
 * the same mask), so the output is the winner's bits, as
 * the portable kernel's gather gives.  The running best starts at -inf with the raw bits of -inf
 * and the index of the first in-range cell: a window of -inf cells keeps both, which is what the
 * portable kernel's gather of that cell gives.
 */
#include <stdint.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/max_pool/max_pool_fw.h"

#if NN_HAVE_X86_SIMD
/* Widest window the kernel takes (a row of cell masks on the stack); wider ones run portable. */
#define MAX_KERNEL_W 16

/* Even elements of two 16-lane vectors (lo's 0, 2, ..., 14, then hi's). */
static const int32_t even_lanes[16] __attribute__((aligned(64))) = {0,  2,  4,  6,  8,  10, 12, 14,
                                                                    16, 18, 20, 22, 24, 26, 28, 30};

/* The 16 cells row[col + s*lane] (s = 1 or 2) of one window cell for a block of 16 outputs, as
 * fp32 values and (16-bit dtypes) raw words; `live` marks the elements row[col + j] inside the
 * row (j < 16 * s). */
typedef struct cells16 {
    __m512 value;
    __m256i raw;
} cells16;

NN_AVX512 static inline __attribute__((always_inline)) cells16 load_cells(const unsigned char *row, int64_t col,
                                                                          int stride, uint32_t live,
                                                                          aclDataType dtype)
{
    cells16 c;
    const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
    if (dtype == ACL_FLOAT) {
        const float *p = (const float *)row + col;
        if (stride == 1) {
            c.value = _mm512_mask_loadu_ps(neg_inf, (__mmask16)live, p);
        } else {
            const __m512 lo = _mm512_mask_loadu_ps(neg_inf, (__mmask16)live, p);
            const __m512 hi = _mm512_mask_loadu_ps(neg_inf, (__mmask16)(live >> 16), p + 16);
            c.value = _mm512_permutex2var_ps(lo, _mm512_load_si512(even_lanes), hi);
        }
        c.raw = _mm256_setzero_si256();
        return c;
    }
    const uint16_t *p = (const uint16_t *)row + col;
    const int16_t inf_bits = dtype == ACL_FLOAT16 ? (int16_t)0xFC00 : (int16_t)0xFF80;
    if (dtype == ACL_BF16) {
        /* bf16 -> fp32 is a shift, so the best's top half is the winner's word: no raw word is
         * carried.  Stride 2: the shift also drops each pair's odd element. */
        c.raw = _mm256_setzero_si256();
        if (stride == 1) {
            const __m256i words = _mm256_mask_loadu_epi16(_mm256_set1_epi16(inf_bits), (__mmask16)live, p);
            c.value = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(words), 16));
        } else {
            const __m512i words = _mm512_mask_loadu_epi16(_mm512_set1_epi16(inf_bits), (__mmask32)live, p);
            c.value = _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
        }
        return c;
    }
    if (stride == 1) {
        c.raw = _mm256_mask_loadu_epi16(_mm256_set1_epi16(inf_bits), (__mmask16)live, p);
    } else {
        const __m512i words = _mm512_mask_loadu_epi16(_mm512_set1_epi16(inf_bits), (__mmask32)live, p);
        c.raw = _mm512_cvtepi32_epi16(words); /* the low word of each pair: the even elements */
    }
    c.value = _mm512_cvtph_ps(c.raw);
    return c;
}

/* One output row's blocks of 16 for one dtype and stride (constants after inlining). */
NN_AVX512 static inline __attribute__((always_inline)) void pool_row(const unsigned char *in, const mp_geometry *g,
                                                                     int64_t oh, int stride, aclDataType dtype,
                                                                     int32_t *arg_row, unsigned char *val_row)
{
    const int64_t H = g->height, W = g->width, Wo = g->out_width, pW = g->pad_w;
    const size_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t ih0 = oh * g->stride_h - g->pad_h;
    const int64_t h_lo = ih0 < 0 ? 0 : ih0;
    const int64_t h_hi = ih0 + g->kernel_h < H ? ih0 + g->kernel_h : H;
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i lane_step = _mm512_mullo_epi32(lane, _mm512_set1_epi32(stride));
    const int64_t span = 16 * (int64_t)stride; /* elements a block's loads cover */
    for (int64_t ow0 = 0; ow0 < Wo; ow0 += 16) {
        const __mmask16 outs = (__mmask16)nn_lane_range(0, Wo - ow0, 16);
        /* first in-range cell of each window: column max(ow*s - pW, 0) of row h_lo */
        const __m512i iw0 = _mm512_add_epi32(lane_step, _mm512_set1_epi32((int32_t)(ow0 * stride - pW)));
        __m512i arg = _mm512_add_epi32(_mm512_max_epi32(iw0, _mm512_setzero_si512()),
                                       _mm512_set1_epi32((int32_t)(h_lo * W)));
        __m512 best = _mm512_set1_ps(-__builtin_inff());
        __m256i raw = _mm256_set1_epi16(dtype == ACL_FLOAT16 ? (int16_t)0xFC00 : (int16_t)0xFF80);
        uint32_t live[MAX_KERNEL_W]; /* the elements of each cell column inside the row */
        for (int64_t b = 0; b < g->kernel_w; ++b) {
            const int64_t col = ow0 * stride + b - pW;
            live[b] = nn_lane_range(-col, W - col, span);
        }
        for (int64_t ih = h_lo; ih < h_hi; ++ih) {
            const unsigned char *row = in + ih * W * (int64_t)elem;
            for (int64_t b = 0; b < g->kernel_w; ++b) {
                const int64_t col = ow0 * stride + b - pW;
                if (live[b] == 0) continue;
                const cells16 c = load_cells(row, col, stride, live[b], dtype);
                const __mmask16 take =
                    _mm512_cmp_ps_mask(c.value, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c.value, c.value, _CMP_UNORD_Q);
                best = _mm512_mask_blend_ps(take, best, c.value);
                if (dtype == ACL_FLOAT16) raw = _mm256_mask_blend_epi16(take, raw, c.raw);
                const __m512i at = _mm512_add_epi32(lane_step, _mm512_set1_epi32((int32_t)(ih * W + col)));
                arg = _mm512_mask_blend_epi32(take, arg, at);
            }
        }
        _mm512_mask_storeu_epi32(arg_row + ow0, outs, arg);
        if (dtype == ACL_FLOAT)
            _mm512_mask_storeu_ps((float *)val_row + ow0, outs, best);
        else if (dtype == ACL_FLOAT16)
            _mm256_mask_storeu_epi16((uint16_t *)val_row + ow0, outs, raw);
        else
            _mm256_mask_storeu_epi16((uint16_t *)val_row + ow0, outs,
                                     _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(best), 16)));
    }
}

/* Pools a plane; while it does, the next plane's input (`next`, NULL for none) is prefetched
 * into L2 in even shares per output row, so a single thread keeps enough reads in flight, and
 * `zero_lines` cache lines from `zeros` (64-byte aligned) are zeroed with streaming stores in
 * even shares per row, so the mask's zero tail goes out while the rows are computed. */
NN_AVX512 static inline __attribute__((always_inline)) void pool_plane(const unsigned char *in, const unsigned char *next,
                                                                       const mp_geometry *g, int stride,
                                                                       aclDataType dtype, int32_t *argmax,
                                                                       unsigned char *values, unsigned char *zeros,
                                                                       int64_t zero_lines)
{
    const int64_t Wo = g->out_width, Ho = g->out_height;
    const size_t elem = dtype == ACL_FLOAT ? 4 : 2;
    const int64_t lines = next ? (g->height * g->width * (int64_t)elem + 63) / 64 : 0;
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t oh = 0; oh < Ho; ++oh) {
        for (int64_t line = oh * lines / Ho; line < (oh + 1) * lines / Ho; ++line)
            _mm_prefetch((const char *)next + line * 64, _MM_HINT_T1);
        for (int64_t line = oh * zero_lines / Ho; line < (oh + 1) * zero_lines / Ho; ++line)
            _mm512_stream_si512((void *)(zeros + line * 64), zero);
        pool_row(in, g, oh, stride, dtype, argmax + oh * Wo, values + oh * Wo * (int64_t)elem);
    }
}

#define POOL_PLANE_VARIANT(name, stride, dtype)                                                                      \
    NN_AVX512 static void name(const unsigned char *in, const unsigned char *next, const mp_geometry *g,            \
                               int32_t *argmax, unsigned char *values, unsigned char *zeros, int64_t zero_lines)     \
    {                                                                                                                \
        pool_plane(in, next, g, stride, dtype, argmax, values, zeros, zero_lines);                                  \
    }
POOL_PLANE_VARIANT(plane_f32_s1, 1, ACL_FLOAT)
POOL_PLANE_VARIANT(plane_f32_s2, 2, ACL_FLOAT)
POOL_PLANE_VARIANT(plane_f16_s1, 1, ACL_FLOAT16)
POOL_PLANE_VARIANT(plane_f16_s2, 2, ACL_FLOAT16)
POOL_PLANE_VARIANT(plane_bf16_s1, 1, ACL_BF16)
POOL_PLANE_VARIANT(plane_bf16_s2, 2, ACL_BF16)

bool nn_mp_fw_plane_avx512(const unsigned char *in, const unsigned char *next, const mp_geometry *g,
                           aclDataType dtype, int32_t *argmax, unsigned char *values, unsigned char *zeros,
                           int64_t zero_lines)
{
    if ((g->stride_w != 1 && g->stride_w != 2) || g->kernel_w > MAX_KERNEL_W) return false;
    const bool s1 = g->stride_w == 1;
    if (dtype == ACL_FLOAT)
        (s1 ? plane_f32_s1 : plane_f32_s2)(in, next, g, argmax, values, zeros, zero_lines);
    else if (dtype == ACL_FLOAT16)
        (s1 ? plane_f16_s1 : plane_f16_s2)(in, next, g, argmax, values, zeros, zero_lines);
    else
        (s1 ? plane_bf16_s1 : plane_bf16_s2)(in, next, g, argmax, values, zeros, zero_lines);
    return true;
}
#else /* not x86-64: never chosen, defined for the link */
bool nn_mp_fw_plane_avx512(const unsigned char *in, const unsigned char *next, const mp_geometry *g,
                           aclDataType dtype, int32_t *argmax, unsigned char *values, unsigned char *zeros,
                           int64_t zero_lines)
{
    (void)in, (void)next, (void)zeros, (void)zero_lines, (void)g, (void)dtype, (void)argmax, (void)values;
    return false;
}
#endif /* NN_HAVE_X86_SIMD */
