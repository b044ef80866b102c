/*
 * col2im_avx512.c - the col2im kernel for AVX-512 CPUs (F/BW/VL/DQ), sW <= 2 (col2im.h).
 * Compiled with the AVX-512 flags (Makefile); called only when nn_cpu_avx512().
 *
 * On AVX-512 CPUs each output row is produced in registers and stored once: for a chunk of 16
 * output columns (sW == 1) or 32 columns split into 16 even and 16 odd ones (sW == 2), every
 * (ki, kj) contribution is one masked 16-lane load of a gradOutput row (widened in registers
 * for fp16/bf16) added to the chunk's accumulator, ki ascending then kj ascending (both
 * descending for window order, col2im.h: only the tables change) - the same
 * per-element order as the phase-plane code (col2im_portable.c), starting from +0.0.  Lanes outside the
 * window (padding, row ends) load +0.0; adding +0.0 never changes an accumulator that started
 * at +0.0 (it cannot be -0.0), so the results are bit-identical to the portable path.  The
 * sW == 2 accumulators are interleaved with two permutes (fp32) or rounded first and merged
 * with one word permute (fp16/bf16).  No accumulator buffer, no memset, no interleave pass, no
 * separate conversion pass: each output element is written once.  fp16/bf16 outputs are
 * rounded once with base's rules (vcvtps2ph RNE; the integer RNE of nn_half_f32_to_bf16).
 * Launches that move enough bytes for base to want streaming (nn_use_streaming_stores,
 * asked with columns + image) build each plane in a small buffer and copy it out with
 * non-temporal stores.
 */
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/col2im/col2im.h"

#if NN_HAVE_X86_SIMD
/* acc + x with acc the first source: when both are NaN, x86 keeps the first source's NaN, and
 * GCC, which takes vaddps as commutative, could swap the operands (col2im_phase.inc's add8). */
NN_AVX512 static inline __attribute__((always_inline)) __m512 add_in_order(__m512 acc, __m512 x)
{
    __m512 sum;
    __asm__("vaddps %2, %1, %0" : "=v"(sum) : "v"(acc), "vm"(x));
    return sum;
}

typedef nn_i2c_plan col2im_plan;
typedef struct nn_col2im_avx512_plan fast_plan;

#define AVX512_TARGET NN_AVX512

/* Small-image kernels prefetch the columns of the plane this many planes ahead into L2, one
 * slice per step (row or row pair) of the current plane, so that the whole plane is requested
 * by the time the current one is done.  One plane ahead left too little lead time after another
 * op had emptied the caches: 3 planes made the k3s2p1 28x28 calls 5-26 % faster at 1 thread
 * and 1-20 % at 2; 2 and 4 planes about as much, 6 a little less
 * (docs/kernels_im2col_prelu.md has the table). */
enum { PREFETCH_PLANES_AHEAD = 3 };

/* Kernels whose blocks are a page or longer leave the plane to the hardware prefetchers, which
 * follow the kH*kW block streams; with rows of at most ROW_PREFETCH_MAX_BYTES they also prefetch
 * (prefetcht0) the gradOutput rows that output row ih + ROW_PREFETCH_AHEAD reads.  On an Intel
 * Xeon the streams alone left a 1-thread k3s1p1 56x56 call waiting on memory: right after torch's
 * col2im, fp32 5.33-5.54 -> 4.94 ms, bf16 3.16 -> 2.83 ms; 2 threads 6.04 -> 5.46 CPU ms.
 * 8 rows ahead about as good for fp32, worse for bf16; 16 or 32 rows with prefetcht1 slower
 * (docs/kernels_im2col_prelu.md). */
enum { ROW_PREFETCH_AHEAD = 4, ROW_PREFETCH_MAX_BYTES = 1024 };

/* Bytes of each of `steps` prefetch slices covering a plane of plane_bytes (whole lines). */
static inline size_t prefetch_slice_bytes(size_t plane_bytes, size_t steps)
{
    return ((plane_bytes + steps - 1) / steps + 63) & ~(size_t)63;
}

/* Slice `step` of the plane PREFETCH_PLANES_AHEAD after the one at cols, into L2.  Past the end
 * of the tensor the prefetches are dropped (a prefetch never faults). */
static inline __attribute__((always_inline)) void prefetch_plane_slice(const void *cols, size_t plane_bytes,
                                                                       size_t slice, size_t step)
{
    const char *ahead = (const char *)cols + PREFETCH_PLANES_AHEAD * plane_bytes + step * slice;
    for (size_t b = 0; b < slice; b += 64) _mm_prefetch(ahead + b, _MM_HINT_T1);
}

/* One kernel column's load for one chunk: element offset inside a gradOutput row (may be
 * negative; those lanes are masked off) and the lanes that hold a real contribution. */
typedef struct fast_tap {
    int64_t offset;
    __mmask16 lanes;
} fast_tap;

struct nn_col2im_avx512_plan {
    int64_t chunks;            /* column chunks per output row */
    fast_tap *taps;            /* chunks x kW: the even-phase kj ascending (window order:
                                * descending), then the odd ones;
                                * offsets include the kernel column's block (kj * L) */
    int64_t even_count;        /* how many taps per chunk feed the even-column accumulator */
    int64_t *row_first;        /* H + 1 entries: output row ih reads kernel rows
                                * row_first[ih] .. row_first[ih + 1] - 1 of row_offset */
    int64_t *row_offset;       /* ki ascending (window order: descending): plane offset
                                * of gradOutput row (ki, kj = 0, oh) */
    /* The k3s2p1 small-image kernels (k3s2_geometry): k3s2 says they apply, k3s2_cvt that bf16
     * rounds with AVX512-BF16.  bf16 row pairs (k3s2_plane_bf16_*): for a two-row window holding
     * nr = 0, 1, 2 valid rows and a tap read in place (0) or one column ahead (1), the valid words
     * (w) and the lanes of their even (a) and odd (b) positions; the word permutes of output
     * rows 0 and 1 of a pair. */
    bool k3s2, k3s2_cvt;
    __mmask32 pair_w0[3], pair_w1[3];
    __mmask16 pair_a0[3], pair_b0[3], pair_a1[3], pair_b1[3];
    uint16_t pair_idx[2][32];
};

/* The k3s2p1 kernels' geometry (their sums are written out in kernel and in window order): one
 * dtype in and out (fp32, fp16 or bf16), kernel 3x3, stride 2, padding 1, dilation 1, an even image
 * exactly twice the window grid (H = 2*OH, W = 2*OW) and at most 16 windows per row (bf16: two
 * window rows in one 32-word vector; one 32-column output chunk) - the stride-2 3x3 layers of
 * ResNet-style networks on 28x28 and smaller maps. */
static bool k3s2_geometry(const col2im_plan *p)
{
    return p->in_dtype == p->out_dtype && p->kH == 3 && p->kW == 3 &&
           p->sH == 2 && p->sW == 2 && p->pH == 1 && p->pW == 1 && p->dH == 1 && p->dW == 1 &&
           p->H == 2 * p->OH && p->W == 2 * p->OW && p->OW <= 16;
}

/* Position j (0 <= j < 2*OW) of a two-row window is window column t = j % OW of row j / OW;
 * lane m of the "a" half holds position 2m, of the "b" half 2m + 1.  A tap read one column
 * ahead (kernel column 0: ow = t + 1) has no value for t = OW - 1. */
static void build_k3s2_tables(const col2im_plan *p, fast_plan *fp)
{
    fp->k3s2 = k3s2_geometry(p);
    if (!fp->k3s2) return;
    fp->k3s2_cvt = p->in_dtype == ACL_BF16 && nn_cpu_avx512bf16();
    const int64_t OW = p->OW;
    for (int64_t nr = 0; nr <= 2; nr++) {
        unsigned a0 = 0, b0 = 0, a1 = 0, b1 = 0, w0 = 0, w1 = 0;
        for (int64_t j = 0; j < nr * OW; j++) {
            const unsigned lane = 1u << (j / 2);
            w0 |= 1u << j;
            if (j % 2 == 0) a0 |= lane; else b0 |= lane;
            if (j % OW == OW - 1) continue;   /* no value one column ahead */
            w1 |= 1u << j;
            if (j % 2 == 0) a1 |= lane; else b1 |= lane;
        }
        fp->pair_w0[nr] = (__mmask32)w0;
        fp->pair_w1[nr] = (__mmask32)w1;
        fp->pair_a0[nr] = (__mmask16)a0;
        fp->pair_b0[nr] = (__mmask16)b0;
        fp->pair_a1[nr] = (__mmask16)a1;
        fp->pair_b1[nr] = (__mmask16)b1;
    }
    /* rounded halves are packed as words 0..15 = a lanes, 16..31 = b lanes (even output
     * columns in the first source, odd ones in the second) */
    for (int64_t r = 0; r < 2; r++) {
        for (int64_t c = 0; c < 32; c++) {
            const int64_t j = c < p->W ? r * OW + c / 2 : 0;
            fp->pair_idx[r][c] = (uint16_t)((c & 1 ? 32 : 0) + (j & 1) * 16 + j / 2);
        }
    }
}

/* Fills the tables; returns false (use the portable path) when the geometry does not fit. */
static bool build_fast_plan(const col2im_plan *p, fast_plan *fp)
{
    /* table sizes stay small: (W/16) x kW taps, H x kH row entries */
    if (p->sW > 2 || p->kW > 4096 || p->kH > 4096 || p->W > ((int64_t)1 << 32) ||
        p->H > (((int64_t)1 << 22) / p->kH)) {
        return false;
    }
    const int64_t span = p->sW * 16, L = p->OH * p->OW;   /* output columns per chunk */
    fp->chunks = (p->W + span - 1) / span;
    fp->taps = malloc((size_t)(fp->chunks * p->kW) * sizeof *fp->taps);
    int64_t *kj_order = malloc((size_t)p->kW * sizeof *kj_order);
    fp->row_first = malloc((size_t)(p->H + 1) * sizeof *fp->row_first);
    fp->row_offset = malloc((size_t)(p->H * p->kH) * sizeof *fp->row_offset);
    if (fp->taps == NULL || kj_order == NULL || fp->row_first == NULL || fp->row_offset == NULL) {
        free(fp->taps);
        free(kj_order);
        free(fp->row_first);
        free(fp->row_offset);
        return false;
    }
    fp->even_count = 0;
    for (int pass = 0, n = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < p->kW; i++) {   /* kj descending for window order */
            const int64_t kj = p->window_order ? p->kW - 1 - i : i;
            int64_t r = (kj * p->dW - p->pW) % p->sW;
            if (r < 0) r += p->sW;
            if (r == pass) kj_order[n++] = kj;
        }
        if (pass == 0) fp->even_count = n;
    }
    for (int64_t q = 0; q < fp->chunks; q++) {
        for (int64_t i = 0; i < p->kW; i++) {
            const int64_t kj = kj_order[i], koff = kj * p->dW - p->pW;
            int64_t r = koff % p->sW;
            if (r < 0) r += p->sW;
            /* lane l is output column iw = q*span + l*sW + r, reading ow = (iw - koff) / sW */
            const int64_t base = (q * span + r - koff) / p->sW;
            unsigned lanes = 0;
            for (int64_t l = 0; l < 16; l++) {
                const int64_t iw = q * span + l * p->sW + r, ow = base + l;
                if (iw < p->W && ow >= 0 && ow < p->OW) lanes |= 1u << l;
            }
            fp->taps[q * p->kW + i].offset = kj * L + base;
            fp->taps[q * p->kW + i].lanes = (__mmask16)lanes;
        }
    }
    free(kj_order);
    nn_col2im_fill_row_tables(p, L, p->OW, fp->row_first, fp->row_offset);
    build_k3s2_tables(p, fp);
    return true;
}

static void free_fast_tables(fast_plan *fp)
{
    free(fp->taps);
    free(fp->row_first);
    free(fp->row_offset);
}

/* 16 values from src[offset...] (lanes outside `m` read nothing and give +0.0), as fp32. */
AVX512_TARGET static inline __attribute__((always_inline)) __m512
load16(const void *src, int64_t offset, __mmask16 m, int dt)
{
    return nn512_load_f32(src, offset, m, (aclDataType)dt);
}

/* Stores the lanes `m` of v at dst[offset...] in the out dtype (rounded once). */
AVX512_TARGET static inline __attribute__((always_inline)) void
store16(void *dst, int64_t offset, __mmask16 m, __m512 v, int dt)
{
    if (dt == NN_C2I_F32) {
        _mm512_mask_storeu_ps((float *)dst + offset, m, v);
    } else if (dt == NN_C2I_F16) {
        _mm256_mask_storeu_epi16((uint16_t *)dst + offset, m, nn512_round_f16(v));
    } else {
        _mm256_mask_storeu_epi16((uint16_t *)dst + offset, m, nn512_round_bf16(v));
    }
}

/* bf16 rounding of 16 lanes left in the high halves of the 32-bit lanes (the low halves are
 * junk): u + 0x7fff + odd, or for NaN u | 0x400000 (high half (u >> 16) | 0x40) - the same
 * values as nn512_round_bf16 before its shift. */
AVX512_TARGET static inline __attribute__((always_inline)) __m512i bf16_round16_high(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                   _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
}

/* The first n of 32 / 16 lanes. */
static inline __mmask32 lanes32_below(int64_t n)
{
    return (__mmask32)nn_lane_range(0, n, 32);
}

static inline __mmask16 lanes_below(int64_t n)
{
    return (__mmask16)nn_lane_range(0, n, 16);
}

/* The gradOutput rows output row ih reads (every kernel column's block), into L1. */
static inline __attribute__((always_inline)) void prefetch_rows(const col2im_plan *p, const fast_plan *fp,
                                                                const void *cols, int64_t ih, int64_t kW,
                                                                size_t row_bytes, size_t esz)
{
    const size_t block_bytes = (size_t)(p->OH * p->OW) * esz;
    for (int64_t r = fp->row_first[ih]; r < fp->row_first[ih + 1]; r++) {
        const char *row = (const char *)cols + (size_t)fp->row_offset[r] * esz;
        for (int64_t kj = 0; kj < kW; kj++, row += block_bytes) nn_prefetch_bytes(row, row_bytes);
    }
}

/* The rows output row ih + ROW_PREFETCH_AHEAD reads; near the plane's end, the first rows of the
 * plane after it in memory (the next plane this thread or another takes; past the tensor's end
 * the prefetches are dropped).  The hardware prefetchers of an AMD Zen 5 do not follow the kH*kW
 * block streams at all (without these prefetches a 1-thread k3s1p1 56x56 fp32 call took 1.8x
 * as long), so a plane whose first rows were not requested ahead started each time at half
 * speed: prefetching across the plane boundary took that call from 2.74 to 2.46 ms. */
static inline __attribute__((always_inline)) void prefetch_rows_ahead(const col2im_plan *p, const fast_plan *fp,
                                                                      const void *cols, size_t plane_bytes,
                                                                      int64_t ih, int64_t kW, size_t row_bytes,
                                                                      size_t esz)
{
    const int64_t ahead = ih + ROW_PREFETCH_AHEAD;
    if (ahead < p->H) {
        prefetch_rows(p, fp, cols, ahead, kW, row_bytes, esz);
    } else if (ahead - p->H < p->H) {
        prefetch_rows(p, fp, (const char *)cols + plane_bytes, ahead - p->H, kW, row_bytes, esz);
    }
}

/* One plane, sW == 1 or 2.  in_dt, out_dt and sW are compile-time constants after inlining, and
 * so are KW (kernel width) and EVEN (taps of the even phase) when non-zero. */
AVX512_TARGET static inline __attribute__((always_inline)) void
fast_plane(const col2im_plan *p, const fast_plan *fp, const void *cols, void *dst, int in_dt,
           int out_dt, int64_t sW, int64_t KW, int64_t EVEN)
{
    const int64_t kW = KW ? KW : p->kW, even_count = EVEN ? EVEN : fp->even_count;
    const int64_t W = p->W;
    const size_t esz = in_dt == NN_C2I_F32 ? 4 : 2, out_esz = out_dt == NN_C2I_F32 ? 4 : 2;
    const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                            24, 8);
    /* word j of the output chunk: bf16 - high word of lane j/2 of even (j even) or odd (j odd);
     * fp16 - half j/2 of the even block (words 0..15) or of the odd block (16..31) */
    uint16_t bf16_words[32], f16_words[32];
    for (int j = 0; j < 32; j++) {
        bf16_words[j] = (uint16_t)((j & 1 ? 32 : 0) + (j & ~1) + 1);
        f16_words[j] = (uint16_t)((j & 1 ? 16 : 0) + j / 2);
    }
    const __m512i bf16_idx = _mm512_loadu_si512(bf16_words), f16_idx = _mm512_loadu_si512(f16_words);
    /* The loads jump between the kH*kW kernel-offset blocks of the plane.  When a block is
     * shorter than a page (small images, e.g. 14x14 windows) the hardware prefetchers see too
     * few accesses per stream to follow them, and the kernel waits on memory; then the columns
     * of a later plane (PREFETCH_PLANES_AHEAD) are prefetched into L2 front to back, a slice per
     * output row.  Long blocks are left to the hardware, which then runs kH*kW streams at once
     * (measured: software prefetching there costs ~30 %). */
    const size_t plane_bytes = (size_t)(p->kH * p->kW * p->OH * p->OW) * esz;
    const bool prefetch = (size_t)(p->OH * p->OW) * esz < 4096;
    const size_t slice = prefetch_slice_bytes(plane_bytes, (size_t)p->H);
    const size_t row_bytes = (size_t)p->OW * esz;
    const bool row_prefetch = !prefetch && row_bytes <= ROW_PREFETCH_MAX_BYTES;
    for (int64_t ih = 0; ih < p->H; ih++) {
        if (prefetch) prefetch_plane_slice(cols, plane_bytes, slice, (size_t)ih);
        if (row_prefetch) prefetch_rows_ahead(p, fp, cols, plane_bytes, ih, kW, row_bytes, esz);
        const int64_t r_lo = fp->row_first[ih], r_hi = fp->row_first[ih + 1];
        unsigned char *out_row = (unsigned char *)dst + (size_t)(ih * W) * out_esz;
        for (int64_t q = 0; q < fp->chunks; q++) {
            const fast_tap *taps = fp->taps + q * kW;
            __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();
            for (int64_t r = r_lo; r < r_hi; r++) {   /* the tables' (ki, kj) order */
                const unsigned char *row = (const unsigned char *)cols + (size_t)fp->row_offset[r] * esz;
                for (int64_t i = 0; i < even_count; i++) {
                    even = add_in_order(even, load16(row, taps[i].offset, taps[i].lanes, in_dt));
                }
                if (sW == 2) {
                    for (int64_t i = even_count; i < kW; i++) {
                        odd = add_in_order(odd, load16(row, taps[i].offset, taps[i].lanes, in_dt));
                    }
                }
            }
            if (sW == 1) {
                store16(out_row, q * 16, lanes_below(W - q * 16), even, out_dt);
            } else if (out_dt == NN_C2I_BF16) {
                /* round both phases, then one word permute picks the high halves in column
                 * order: out[2l] = even[l], out[2l + 1] = odd[l] */
                const __m512i words = _mm512_permutex2var_epi16(bf16_round16_high(even), bf16_idx,
                                                                bf16_round16_high(odd));
                _mm512_mask_storeu_epi16((uint16_t *)out_row + q * 32, lanes32_below(W - q * 32),
                                         words);
            } else if (out_dt == NN_C2I_F16) {
                const __m256i he = nn512_round_f16(even), ho = nn512_round_f16(odd);
                const __m512i words = _mm512_permutexvar_epi16(
                    f16_idx, _mm512_inserti64x4(_mm512_castsi256_si512(he), ho, 1));
                _mm512_mask_storeu_epi16((uint16_t *)out_row + q * 32, lanes32_below(W - q * 32),
                                         words);
            } else {
                const __m512 first = _mm512_permutex2var_ps(even, lo_idx, odd);
                const __m512 second = _mm512_permutex2var_ps(even, hi_idx, odd);
                store16(out_row, q * 32, lanes_below(W - q * 32), first, out_dt);
                store16(out_row, q * 32 + 16, lanes_below(W - q * 32 - 16), second, out_dt);
            }
        }
    }
}

/*
 * bf16 k3s2p1 row-pair kernel (k3s2_geometry).  Output rows ih and ih + 2 read the same
 * kernel-offset blocks at window rows oh and oh + 1, which lie next to each other in gradOutput:
 * one 32-word load covers both (2*OW <= 32 values).  Read as 16 dwords, the low words (shifted up 16) are the
 * even positions and the high words (masked) the odd ones - already fp32, so each tap costs one
 * load-and-op per half instead of a load, a zero-extend and a shift per row.  Per output element
 * the taps are added ki ascending, then kj ascending, as everywhere else (or both descending:
 * window order, col2im.h); the accumulators start
 * from the first tap instead of +0.0 and get +0.0 added last, which gives the same bits (a sum
 * can only differ from the +0.0-started one by being -0.0 where that one is +0.0).
 *   even rows 2oh:     E = x(1,1);                 O = x(1,0)+ + x(1,2)
 *   odd rows 2oh + 1:  E = x(0,1)' + x(2,1);       O = x(0,0)'+ + x(0,2)' + x(2,0)+ + x(2,2)
 * (x(ki,kj) at window row oh, ' at oh + 1, + one column ahead; E/O = even/odd output columns).
 */
typedef struct pair_acc {
    __m512 ea, eb, oa, ob;     /* even/odd output columns x even/odd window positions */
} pair_acc;

/* The even and odd positions of the words w at src (lanes outside a / b give +0.0; words
 * outside w are not read - the last window of the tensor may end inside a dword). */
AVX512_TARGET static inline __attribute__((always_inline)) void
pair_load(const uint16_t *src, __mmask32 w, __mmask16 a, __mmask16 b, __m512 *lo, __m512 *hi)
{
    const __m512i v = _mm512_maskz_loadu_epi16(w, src);
    *lo = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(a, v, 16));
    *hi = _mm512_castsi512_ps(_mm512_maskz_and_epi32(b, v, _mm512_set1_epi32((int)0xffff0000u)));
}

/* 16 rounded bf16 values in the high words of the lanes (nn512_round_bf16 before its shift). */
AVX512_TARGET static inline __attribute__((always_inline)) __m512i pair_pack_int(__m512 a, __m512 b)
{
    const __m512i idx = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
                                         31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(bf16_round16_high(a), idx, bf16_round16_high(b));
}

/* Stores output rows ih (and ih + 2 when two_rows) from the rounded words of the even (e) and
 * odd (o) output columns. */
AVX512_TARGET static inline __attribute__((always_inline)) void
pair_store_words(const fast_plan *fp, __m512i e, __m512i o, uint16_t *row0, int64_t W, bool two_rows)
{
    const __mmask32 m = lanes32_below(W);
    _mm512_mask_storeu_epi16(row0, m,
                             _mm512_permutex2var_epi16(e, _mm512_loadu_si512(fp->pair_idx[0]), o));
    if (two_rows) {
        _mm512_mask_storeu_epi16(row0 + 2 * W, m, _mm512_permutex2var_epi16(
                                                      e, _mm512_loadu_si512(fp->pair_idx[1]), o));
    }
}

/* Rounds the four accumulators and stores output rows ih (and ih + 2 when two_rows). */
AVX512_TARGET static inline __attribute__((always_inline)) void
pair_store_int(const fast_plan *fp, pair_acc acc, uint16_t *row0, int64_t W, bool two_rows)
{
    pair_store_words(fp, pair_pack_int(acc.ea, acc.eb), pair_pack_int(acc.oa, acc.ob), row0, W, two_rows);
}

/* Two taps in kernel order (first + second), or in window order (second + first; col2im.h). */
AVX512_TARGET static inline __attribute__((always_inline)) __m512 add2(__m512 first, __m512 second, bool window)
{
    return window ? add_in_order(second, first) : add_in_order(first, second);
}

/* Four taps given in kernel order, added in kernel or window order. */
AVX512_TARGET static inline __attribute__((always_inline)) __m512 add4(__m512 t0, __m512 t1, __m512 t2, __m512 t3,
                                                                      bool window)
{
    return window ? add_in_order(add_in_order(add_in_order(t3, t2), t1), t0)
                  : add_in_order(add_in_order(add_in_order(t0, t1), t2), t3);
}

/* Sums one row pair, its taps in kernel or window order (a compile-time constant); the caller
 * rounds and stores it. */
AVX512_TARGET static inline __attribute__((always_inline)) pair_acc
pair_sum(const fast_plan *fp, const uint16_t *const *blk, int64_t OW, int64_t oh, int64_t nr,
         int64_t nr_next, bool odd_rows, bool window)
{
    const __m512 zero = _mm512_setzero_ps();
    __m512 a, b, c, d;
    pair_acc acc;
    if (!odd_rows) {
        const int64_t o = oh * OW;
        pair_load(blk[4] + o, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &acc.ea, &acc.eb);
        pair_load(blk[3] + o + 1, fp->pair_w1[nr], fp->pair_a1[nr], fp->pair_b1[nr], &a, &b);
        pair_load(blk[5] + o, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &c, &d);
        acc.oa = add2(a, c, window);
        acc.ob = add2(b, d, window);
    } else {
        const int64_t o0 = (oh + 1) * OW, o2 = oh * OW;   /* ki = 0 at oh + 1, ki = 2 at oh */
        pair_load(blk[1] + o0, fp->pair_w0[nr_next], fp->pair_a0[nr_next], fp->pair_b0[nr_next], &a, &b);
        pair_load(blk[7] + o2, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &c, &d);
        acc.ea = add2(a, c, window);
        acc.eb = add2(b, d, window);
        __m512 a0, b0, a2, b2, a6, b6, a8, b8;
        pair_load(blk[0] + o0 + 1, fp->pair_w1[nr_next], fp->pair_a1[nr_next], fp->pair_b1[nr_next], &a0, &b0);
        pair_load(blk[2] + o0, fp->pair_w0[nr_next], fp->pair_a0[nr_next], fp->pair_b0[nr_next], &a2, &b2);
        pair_load(blk[6] + o2 + 1, fp->pair_w1[nr], fp->pair_a1[nr], fp->pair_b1[nr], &a6, &b6);
        pair_load(blk[8] + o2, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &a8, &b8);
        acc.oa = add4(a0, a2, a6, a8, window);
        acc.ob = add4(b0, b2, b6, b8, window);
    }
    acc.ea = add_in_order(acc.ea, zero);
    acc.eb = add_in_order(acc.eb, zero);
    acc.oa = add_in_order(acc.oa, zero);
    acc.ob = add_in_order(acc.ob, zero);
    return acc;
}

/* One plane, two output rows of each parity per step; STORE rounds (pair_store_int or, with
 * AVX512-BF16, pair_store_cvt); WINDOW: the taps in window order. */
#define DEFINE_PAIR_PLANE(NAME, TARGET, STORE, WINDOW)                                              \
TARGET static void NAME(const col2im_plan *p, const fast_plan *fp, const void *cols, void *dst)     \
{                                                                                                   \
    const int64_t OH = p->OH, OW = p->OW, W = p->W, L = OH * OW;                                   \
    const uint16_t *blk[9];                                                                         \
    for (int b = 0; b < 9; b++) blk[b] = (const uint16_t *)cols + b * L;                            \
    /* a later plane's columns into L2, a slice per row pair (see fast_plane) */                    \
    const size_t plane_bytes = (size_t)(9 * L) * 2;                                                 \
    const size_t slice = prefetch_slice_bytes(plane_bytes, (size_t)(OH + 1) / 2);                   \
    for (int64_t oh = 0; oh < OH; oh += 2) {                                                        \
        prefetch_plane_slice(cols, plane_bytes, slice, (size_t)(oh / 2));                           \
        const int64_t nr = OH - oh >= 2 ? 2 : 1, left = OH - oh - 1;                               \
        const int64_t nr_next = left >= 2 ? 2 : left;                                               \
        uint16_t *row = (uint16_t *)dst + 2 * oh * W;   /* output row 2*oh */                       \
        STORE(fp, pair_sum(fp, blk, OW, oh, nr, nr_next, false, WINDOW), row, W, nr == 2);          \
        STORE(fp, pair_sum(fp, blk, OW, oh, nr, nr_next, true, WINDOW), row + W, W, nr == 2);       \
    }                                                                                               \
}
DEFINE_PAIR_PLANE(k3s2_plane_bf16_int, AVX512_TARGET, pair_store_int, false)
DEFINE_PAIR_PLANE(k3s2_plane_bf16_int_window, AVX512_TARGET, pair_store_int, true)

/* With AVX512-BF16 (nn512_round_bf16_pair_normal: vcvtne2ps2bf16, which reads subnormal inputs
 * as zero), a pair holding a subnormal sum (vfpclassps 0x20) takes the integer rounding instead. */
NN_AVX512BF16 static inline __attribute__((always_inline)) void
pair_store_cvt(const fast_plan *fp, pair_acc acc, uint16_t *row0, int64_t W, bool two_rows)
{
    const __mmask16 subnormal = (__mmask16)(_mm512_fpclass_ps_mask(acc.ea, 0x20) |
                                            _mm512_fpclass_ps_mask(acc.eb, 0x20) |
                                            _mm512_fpclass_ps_mask(acc.oa, 0x20) |
                                            _mm512_fpclass_ps_mask(acc.ob, 0x20));
    if (__builtin_expect(subnormal != 0, 0)) {
        pair_store_int(fp, acc, row0, W, two_rows);
        return;
    }
    /* words 0..15 = the a lanes, 16..31 = the b lanes */
    pair_store_words(fp, nn512_round_bf16_pair_normal(acc.ea, acc.eb), nn512_round_bf16_pair_normal(acc.oa, acc.ob),
                     row0, W, two_rows);
}
DEFINE_PAIR_PLANE(k3s2_plane_bf16_cvt, NN_AVX512BF16, pair_store_cvt, false)
DEFINE_PAIR_PLANE(k3s2_plane_bf16_cvt_window, NN_AVX512BF16, pair_store_cvt, true)

/* Stores one k3s2p1 output row from its even (e) and odd (d) output columns: fp32 interleaved
 * with two permutes; fp16 rounded with vcvtps2ph and merged with one word permute (the row
 * kernel's fp16 store). */
AVX512_TARGET static inline __attribute__((always_inline)) void
k3s2_store_row(void *row, __m512 e, __m512 d, int64_t W, int dt)
{
    if (dt == NN_C2I_F32) {
        const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                                24, 8);
        _mm512_mask_storeu_ps(row, lanes_below(W), _mm512_permutex2var_ps(e, lo_idx, d));
        _mm512_mask_storeu_ps((float *)row + 16, lanes_below(W - 16), _mm512_permutex2var_ps(e, hi_idx, d));
    } else {
        /* word j: half j/2 of the even block (words 0..15) or of the odd block (16..31) */
        const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                              23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        const __m512i halves = _mm512_inserti64x4(_mm512_castsi256_si512(nn512_round_f16(e)),
                                                  nn512_round_f16(d), 1);
        _mm512_mask_storeu_epi16(row, lanes32_below(W), _mm512_permutexvar_epi16(idx, halves));
    }
}

/* fp32 and fp16 on the same geometry: one output row at a time, 16 even and 16 odd output columns
 * in two accumulators (the generic row kernel's layout, without its tables and loops); fp16 taps
 * are widened with vcvtph2ps (load16, exact) and the row rounded once:
 *   row 2oh:      E = x(1,1);            O = x(1,0)+ + x(1,2)
 *   row 2oh + 1:  E = x(0,1)' + x(2,1);  O = x(0,0)'+ + x(0,2)' + x(2,0)+ + x(2,2)
 * fp16 on the generic row kernel took ~1.4x this time per plane in cache, the same taps and
 * stores in its table-driven loops (docs/kernels_im2col_prelu.md).  `window` (a compile-time
 * constant) adds each sum's taps in the reverse order, window order (col2im.h). */
AVX512_TARGET static inline __attribute__((always_inline)) void
k3s2_plane_rows(const col2im_plan *p, const void *cols, void *dst, int dt, bool window)
{
    const int64_t OH = p->OH, OW = p->OW, W = p->W, L = OH * OW;
    const size_t esz = dt == NN_C2I_F32 ? 4 : 2;
    const unsigned char *blk[9];
    for (int b = 0; b < 9; b++) blk[b] = (const unsigned char *)cols + (size_t)(b * L) * esz;
    const __mmask16 in_row = lanes_below(OW), ahead = lanes_below(OW - 1);
    const size_t plane_bytes = (size_t)(9 * L) * esz;
    const size_t slice = prefetch_slice_bytes(plane_bytes, (size_t)OH);
    unsigned char *row = (unsigned char *)dst;
    const size_t row_bytes = (size_t)W * esz;
    for (int64_t oh = 0; oh < OH; oh++, row += 2 * row_bytes) {
        prefetch_plane_slice(cols, plane_bytes, slice, (size_t)oh);
        const int64_t o = oh * OW, o1 = o + OW;
        const __m512 zero = _mm512_setzero_ps();
        __m512 e = add_in_order(zero, load16(blk[4], o, in_row, dt));
        /* x(ki, kj) as in the comment above; each sum from +0.0, in kernel or window order */
        const __m512 x10 = load16(blk[3], o + 1, ahead, dt), x12 = load16(blk[5], o, in_row, dt);
        __m512 d = add_in_order(add_in_order(zero, window ? x12 : x10), window ? x10 : x12);
        k3s2_store_row(row, e, d, W, dt);
        const __mmask16 next = oh + 1 < OH ? in_row : 0, next_ahead = oh + 1 < OH ? ahead : 0;
        const __m512 x01 = load16(blk[1], o1, next, dt), x21 = load16(blk[7], o, in_row, dt);
        e = add_in_order(add_in_order(zero, window ? x21 : x01), window ? x01 : x21);
        const __m512 x00 = load16(blk[0], o1 + 1, next_ahead, dt), x02 = load16(blk[2], o1, next, dt);
        const __m512 x20 = load16(blk[6], o + 1, ahead, dt), x22 = load16(blk[8], o, in_row, dt);
        d = window ? add4(add_in_order(zero, x22), x20, x02, x00, false)
                   : add4(add_in_order(zero, x00), x02, x20, x22, false);
        k3s2_store_row(row + row_bytes, e, d, W, dt);
    }
}

AVX512_TARGET static void k3s2_plane_f32(const col2im_plan *p, const void *cols, void *dst)
{
    if (p->window_order) k3s2_plane_rows(p, cols, dst, NN_C2I_F32, true);
    else k3s2_plane_rows(p, cols, dst, NN_C2I_F32, false);
}

AVX512_TARGET static void k3s2_plane_f16(const col2im_plan *p, const void *cols, void *dst)
{
    if (p->window_order) k3s2_plane_rows(p, cols, dst, NN_C2I_F16, true);
    else k3s2_plane_rows(p, cols, dst, NN_C2I_F16, false);
}

/* Instantiates fast_plane for every (in, out) dtype pair and both strides. */
AVX512_TARGET static void fast_plane_any(const col2im_plan *p, const fast_plan *fp,
                                         const void *cols, void *dst)
{
    if (fp->k3s2) {
        if (p->in_dtype == ACL_FLOAT) {
            k3s2_plane_f32(p, cols, dst);
        } else if (p->in_dtype == ACL_FLOAT16) {
            k3s2_plane_f16(p, cols, dst);
        } else if (fp->k3s2_cvt) {
            (p->window_order ? k3s2_plane_bf16_cvt_window : k3s2_plane_bf16_cvt)(p, fp, cols, dst);
        } else {
            (p->window_order ? k3s2_plane_bf16_int_window : k3s2_plane_bf16_int)(p, fp, cols, dst);
        }
        return;
    }
    const int in = nn_col2im_dt_code(p->in_dtype), out = nn_col2im_dt_code(p->out_dtype);
    const bool k3 = p->kW == 3;
    /* same dtype in and out (the common case): kernel width 3 gets unrolled copies */
#define COL2IM_FAST_CASE(I, O)                                                            \
    if (in == (I) && out == (O)) {                                                        \
        if (p->sW == 1 && k3) fast_plane(p, fp, cols, dst, (I), (O), 1, 3, 3);            \
        else if (p->sW == 1) fast_plane(p, fp, cols, dst, (I), (O), 1, 0, 0);             \
        else if (k3 && fp->even_count == 1) fast_plane(p, fp, cols, dst, (I), (O), 2, 3, 1); \
        else if (k3 && fp->even_count == 2) fast_plane(p, fp, cols, dst, (I), (O), 2, 3, 2); \
        else fast_plane(p, fp, cols, dst, (I), (O), 2, 0, 0);                             \
        return;                                                                           \
    }
#define COL2IM_FAST_CASE_GENERIC(I, O)                                                    \
    if (in == (I) && out == (O)) {                                                        \
        if (p->sW == 1) fast_plane(p, fp, cols, dst, (I), (O), 1, 0, 0);                  \
        else fast_plane(p, fp, cols, dst, (I), (O), 2, 0, 0);                             \
        return;                                                                           \
    }
    COL2IM_FAST_CASE(NN_C2I_F32, NN_C2I_F32)
    COL2IM_FAST_CASE(NN_C2I_F16, NN_C2I_F16)
    COL2IM_FAST_CASE(NN_C2I_BF16, NN_C2I_BF16)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_F16, NN_C2I_F32)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_BF16, NN_C2I_F32)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_F32, NN_C2I_F16)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_F32, NN_C2I_BF16)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_F16, NN_C2I_BF16)
    COL2IM_FAST_CASE_GENERIC(NN_C2I_BF16, NN_C2I_F16)
#undef COL2IM_FAST_CASE_GENERIC
#undef COL2IM_FAST_CASE
}

nn_col2im_avx512_plan *nn_col2im_avx512_plan_create(const nn_i2c_plan *p)
{
    fast_plan *fp = calloc(1, sizeof *fp);
    if (fp != NULL && !build_fast_plan(p, fp)) {
        free(fp);
        fp = NULL;
    }
    return fp;
}

void nn_col2im_avx512_plan_destroy(nn_col2im_avx512_plan *fp)
{
    if (fp == NULL) return;
    free_fast_tables(fp);
    free(fp);
}

const char *nn_col2im_avx512_path(const nn_i2c_plan *p, const nn_col2im_avx512_plan *fp)
{
    if (!fp->k3s2) return "col2im_avx512_rows";
    if (p->in_dtype == ACL_FLOAT) return "col2im_avx512_k3s2p1_f32";
    if (p->in_dtype == ACL_FLOAT16) return "col2im_avx512_k3s2p1_f16";
    return fp->k3s2_cvt ? "col2im_avx512_k3s2p1_bf16_cvt" : "col2im_avx512_k3s2p1_bf16";
}

/* The range handed to this call is ignored: planes are claimed in chunks (col2im.h). */
void nn_col2im_planes_avx512(void *vjob, int64_t begin, int64_t end)
{
    nn_col2im_job *job = (nn_col2im_job *)vjob;
    const nn_i2c_plan *p = job->plan;
    const fast_plan *fast = (const fast_plan *)job->tables;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W;
    const int64_t col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    (void)begin;
    (void)end;
    /* Streamed output: each plane is built in a cache-resident buffer and copied out with
     * non-temporal stores (no read-for-ownership of the output lines). */
    unsigned char *staging = NULL;
    if (job->stream_out && (staging = malloc((size_t)HW * out_esz)) == NULL) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t first, last;
    while (nn_claim_next(&job->claims, &first, &last)) {
        for (int64_t plane = first; plane < last; plane++) {
            unsigned char *dst = job->out + (size_t)(plane * HW) * out_esz;
            fast_plane_any(p, fast, job->in + (size_t)(plane * col_block) * in_esz,
                           staging != NULL ? staging : dst);
            if (staging != NULL) nn_copy_row_nt(dst, staging, (size_t)HW * out_esz);
        }
    }
    if (staging != NULL) {
        nn_streaming_fence();
        free(staging);
    }
}
#else /* not x86-64: never chosen (nn_cpu_avx512() is false), defined for the link */
nn_col2im_avx512_plan *nn_col2im_avx512_plan_create(const nn_i2c_plan *p) { (void)p; return NULL; }
void nn_col2im_avx512_plan_destroy(nn_col2im_avx512_plan *plan) { (void)plan; }
const char *nn_col2im_avx512_path(const nn_i2c_plan *p, const nn_col2im_avx512_plan *fp) { (void)p; (void)fp; return ""; }
void nn_col2im_planes_avx512(void *job, int64_t begin, int64_t end) { (void)job; (void)begin; (void)end; }
#endif /* NN_HAVE_X86_SIMD */
