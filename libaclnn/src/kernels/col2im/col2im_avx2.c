/*
 * col2im_avx2.c - the col2im kernel for AVX2 + F16C CPUs without AVX-512, sW <= 2 (col2im.h).
 * Compiled with the AVX2 flags (Makefile); called only when nn_cpu_avx2() and not
 * nn_cpu_avx512().
 *
 * The AVX-512 kernel's scheme (col2im_avx512.c) - each output row built in registers, chunk by chunk, every
 * (ki, kj) contribution one vector load added in (ki, kj) order from +0.0 - with 8-lane vectors
 * and no lane masks: each plane's columns are first copied (widened to fp32) into a scratch
 * where every gradOutput row has zeros on both sides, wide enough that a tap's load lanes
 * outside the window read +0.0 (adding +0.0 never changes an accumulator that started at +0.0,
 * so the results are the portable path's bits).  A chunk is 8 output columns (sW == 1) or 8 even
 * and 8 odd ones (sW == 2), interleaved by unpacking (fp32) or as (even | odd << 16) word pairs
 * (fp16/bf16).  The plane is built in a staging buffer (the last chunk of a row spills into the
 * next row, which overwrites it) and copied out, with non-temporal stores when streaming.
 */
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/col2im/col2im.h"

/* The portable phase-plane loops built for AVX2 (nn_col2im_planes_phase_avx2): geometries this
 * file's kernel does not take, on CPUs with AVX2. */
#define COL2IM_PHASE_PLANES nn_col2im_planes_phase_avx2
#include "kernels/col2im/col2im_phase.inc"

#if NN_HAVE_X86_SIMD
typedef nn_i2c_plan col2im_plan;
typedef struct nn_col2im_avx2_plan avx2_plan;

#define AVX2_MAX_MARGIN 64                 /* zero floats on each side of a scratch row, at most */
#define AVX2_MAX_SCRATCH_FLOATS (8 * 1024) /* 32 KiB */

struct nn_col2im_avx2_plan {
    bool k3s2;                 /* avx2_k3s2_geometry: avx2_k3s2_plane, no scratch or tables */
    int64_t left, row_stride;  /* scratch rows: `left` zeros, OW values, zeros; row_stride floats */
    int64_t scratch_floats;    /* kH*kW*OH rows */
    int64_t chunks;            /* per output row, 8*sW columns each */
    int64_t even_count;        /* taps feeding the even-column accumulator (all of them for sW 1) */
    int64_t *taps;             /* chunks x kW scratch offsets of a chunk's loads, the even phase's
                                * kj ascending (window order: descending) then the odd
                                * phase's; include the kj block */
    int64_t *row_first;        /* H + 1 entries into row_offset, as in the AVX-512 plan */
    int64_t *row_offset;       /* scratch offset of row (ki, kj = 0, oh), in the plane's
                                * ki order (nn_col2im_fill_row_tables) */
};

static void free_avx2_tables(avx2_plan *ap)
{
    free(ap->taps);
    free(ap->row_first);
    free(ap->row_offset);
}

/* Kernel 3x3, stride 2, padding 1, dilation 1, H = 2*OH, W = 2*OW, one dtype in and out: the
 * stride-2 3x3 layers of ResNet-style networks. */
static bool avx2_k3s2_geometry(const col2im_plan *p)
{
    return p->in_dtype == p->out_dtype && p->kH == 3 && p->kW == 3 && p->sH == 2 && p->sW == 2 && p->pH == 1 &&
           p->pW == 1 && p->dH == 1 && p->dW == 1 && p->H == 2 * p->OH && p->W == 2 * p->OW;
}

/* Fills the tables; false (use the portable path) when the geometry does not fit. */
static bool build_avx2_plan(const col2im_plan *p, avx2_plan *ap)
{
    memset(ap, 0, sizeof *ap);
    if (avx2_k3s2_geometry(p)) {
        ap->k3s2 = true;
        /* room for the tensor's last plane and the 8 values its loads may read past it */
        ap->scratch_floats = (9 * p->OH * p->OW * (int64_t)nn_dtype_size(p->in_dtype) + 3) / 4 + 8;
        return true;
    }
    if (p->sW > 2 || p->kW > 4096 || p->kH > 4096 || p->W > ((int64_t)1 << 32) ||
        p->H > (((int64_t)1 << 22) / p->kH))
        return false;
    const int64_t span = 8 * p->sW;
    ap->chunks = (p->W + span - 1) / span;
    /* the reads of chunk q, tap kj: ow = (q*span + r - koff) / sW + 0..7 (r: the tap's phase) */
    int64_t lowest = 0, highest = p->OW - 1;
    for (int64_t kj = 0; kj < p->kW; kj++) {
        const int64_t koff = kj * p->dW - p->pW;
        const int64_t r = ((koff % p->sW) + p->sW) % p->sW;
        const int64_t first = (r - koff) / p->sW, last = ((ap->chunks - 1) * span + r - koff) / p->sW + 7;
        if (first < lowest) lowest = first;
        if (last > highest) highest = last;
    }
    ap->left = -lowest;
    int64_t right = highest - (p->OW - 1);
    if (ap->left > AVX2_MAX_MARGIN || right > AVX2_MAX_MARGIN) return false;
    if (right < 8) right = 8; /* avx2_widen_row's last vector and its zeros land in it */
    ap->row_stride = ap->left + p->OW + right;
    const int64_t block = p->OH * ap->row_stride; /* one kernel position's rows */
    ap->scratch_floats = p->kH * p->kW * block;
    /* The widened plane must stay in L1: past it, the copy's round trip through L2 costs more
     * than the portable path's in-place adds (k3s1 on 56x56 fp32: 5.0 vs 4.1 ms at 1 thread,
     * k3s2 on 28x28 bf16: 1.9 vs 2.2). */
    if (ap->scratch_floats > AVX2_MAX_SCRATCH_FLOATS) return false;
    ap->taps = malloc((size_t)(ap->chunks * p->kW) * sizeof *ap->taps);
    ap->row_first = malloc((size_t)(p->H + 1) * sizeof *ap->row_first);
    ap->row_offset = malloc((size_t)(p->H * p->kH) * sizeof *ap->row_offset);
    if (ap->taps == NULL || ap->row_first == NULL || ap->row_offset == NULL) {
        free_avx2_tables(ap);
        return false;
    }
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < p->kW; i++) {   /* kj descending for window order */
            const int64_t kj = p->window_order ? p->kW - 1 - i : i;
            const int64_t koff = kj * p->dW - p->pW;
            const int64_t r = ((koff % p->sW) + p->sW) % p->sW;
            if (r != pass) continue;
            for (int64_t q = 0; q < ap->chunks; q++)
                ap->taps[q * p->kW + n] = kj * block + ap->left + (q * span + r - koff) / p->sW;
            n++;
        }
        if (pass == 0) ap->even_count = n;
    }
    nn_col2im_fill_row_tables(p, block, ap->row_stride, ap->row_first, ap->row_offset);
    return true;
}

/* 8 values from `from` as fp32 (exact). */
NN_AVX2 static inline __attribute__((always_inline)) __m256 avx2_load8_f32(const void *from, int in_dt)
{
    if (in_dt == NN_C2I_F32) return _mm256_loadu_ps((const float *)from);
    const __m128i w = _mm_loadu_si128((const __m128i *)from);
    return in_dt == NN_C2I_F16 ? _mm256_cvtph_ps(w) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(w), 16));
}

/* The n values of a gradOutput row as fp32 (exact) at `to`, whose right margin (>= 8 floats)
 * is zero again afterwards.  Whole vectors: the last one may read up to 7 values past the row,
 * so the caller passes `exact` (a scalar tail instead) for the plane's last rows, where that
 * would read past the plane. */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_widen_row(const void *from, float *to, int64_t n,
                                                                        int in_dt, bool exact)
{
    const size_t esz = in_dt == NN_C2I_F32 ? 4 : 2;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(to + i, avx2_load8_f32((const unsigned char *)from + i * esz, in_dt));
    if (i == n) return;
    if (!exact) {
        _mm256_storeu_ps(to + i, avx2_load8_f32((const unsigned char *)from + i * esz, in_dt));
        _mm256_storeu_ps(to + n, _mm256_setzero_ps()); /* the spill, back to zeros */
        return;
    }
    for (; i < n; i++) {
        const uint16_t h = in_dt == NN_C2I_F32 ? 0 : ((const uint16_t *)from)[i];
        if (in_dt == NN_C2I_F32) {
            to[i] = ((const float *)from)[i];
        } else if (in_dt == NN_C2I_F16) {
            to[i] = _cvtsh_ss(h);
        } else {
            const uint32_t bits = (uint32_t)h << 16;
            memcpy(to + i, &bits, 4);
        }
    }
}

/* One plane into `out` (H*W values of the out dtype, plus room for a chunk's spill). */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_plane(const col2im_plan *p, const avx2_plan *ap,
                                                                    const void *cols, float *scratch, void *out,
                                                                    int in_dt, int out_dt, int64_t sW, int64_t KW)
{
    const int64_t kW = KW ? KW : p->kW, OW = p->OW, W = p->W;
    const size_t in_esz = in_dt == NN_C2I_F32 ? 4 : 2;
    const int64_t rows = p->kH * kW * p->OH;
    const int64_t vector_rows = rows - (((OW + 7) / 8 * 8 - OW) + OW - 1) / OW; /* whole-vector reads stay in the plane */
    for (int64_t r = 0; r < rows; r++)
        avx2_widen_row((const unsigned char *)cols + (size_t)(r * OW) * in_esz, scratch + r * ap->row_stride + ap->left,
                       OW, in_dt, r >= vector_rows);
    const int64_t span = 8 * sW;
    for (int64_t ih = 0; ih < p->H; ih++) {
        const int64_t r0 = ap->row_first[ih], r1 = ap->row_first[ih + 1];
        for (int64_t q = 0; q < ap->chunks; q++) {
            const int64_t *tap = ap->taps + q * kW;
            __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
            for (int64_t r = r0; r < r1; r++) {
                const float *row = scratch + ap->row_offset[r];
                if (sW == 1) {
                    for (int64_t i = 0; i < kW; i++) even = add8(even, _mm256_loadu_ps(row + tap[i]));
                } else {
                    for (int64_t i = 0; i < ap->even_count; i++)
                        even = add8(even, _mm256_loadu_ps(row + tap[i]));
                    for (int64_t i = ap->even_count; i < kW; i++)
                        odd = add8(odd, _mm256_loadu_ps(row + tap[i]));
                }
            }
            const int64_t at = ih * W + q * span;
            if (out_dt == NN_C2I_F32) {
                float *o = (float *)out + at;
                if (sW == 1) {
                    _mm256_storeu_ps(o, even);
                } else {
                    const __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
                    _mm_storeu_ps(o, _mm256_castps256_ps128(lo));
                    _mm_storeu_ps(o + 4, _mm256_castps256_ps128(hi));
                    _mm_storeu_ps(o + 8, _mm256_extractf128_ps(lo, 1));
                    _mm_storeu_ps(o + 12, _mm256_extractf128_ps(hi, 1));
                }
            } else {
                uint16_t *o = (uint16_t *)out + at;
                const __m256i e = nn256_round_words(even, out_dt == NN_C2I_F16);
                if (sW == 1) {
                    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(e, e), 0x08);
                    _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(packed));
                } else {
                    const __m256i pairs = _mm256_or_si256(e, _mm256_slli_epi32(nn256_round_words(odd, out_dt == NN_C2I_F16), 16));
                    _mm256_storeu_si256((__m256i *)o, pairs);
                }
            }
        }
    }
}

/*
 * k3s2p1 with H = 2*OH, W = 2*OW, without the scratch: output rows 2m and 2m+1, columns 2n and
 * 2n+1, are sums of the nine gradOutput blocks C(ki,kj) at (m or m+1, n or n+1):
 *   row 2m:   col 2n = 0 + C11[m][n]          col 2n+1 = (0 + C10[m][n+1]) + C12[m][n]
 *   row 2m+1: col 2n = (0 + C01[m+1][n]) + C21[m][n]
 *             col 2n+1 = (((0 + C00[m+1][n+1]) + C02[m+1][n]) + C20[m][n+1]) + C22[m][n]
 * in (ki, kj) order from +0.0 as everywhere (window order: each sum's terms reversed); a term whose m+1 or n+1 reaches OH or OW is left
 * out (the n+1 loads are zeroed in those lanes).  8 window columns per step; a row's last step
 * (which may spill past the row) goes first.  The loads of a step may read up to 8 values past
 * a block row, so the tensor's last plane is run from a padded copy.
 */
enum { K3S2_AHEAD = 4 };

NN_AVX2 static inline __attribute__((always_inline)) __m256 avx2_k3s2_at(const unsigned char *cols, int64_t block,
                                                                        int64_t at, int dt)
{
    const size_t esz = dt == NN_C2I_F32 ? 4 : 2;
    return avx2_load8_f32(cols + (size_t)(block + at) * esz, dt);
}

/* Stores the 8 even and 8 odd columns from column 2*n0 of an output row, rounded once. */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_store_pairs(void *row, int64_t c0, __m256 even,
                                                                          __m256 odd, int dt, bool exact_even)
{
    if (dt == NN_C2I_F32) {
        float *o = (float *)row + c0;
        const __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
        _mm_storeu_ps(o, _mm256_castps256_ps128(lo));
        _mm_storeu_ps(o + 4, _mm256_castps256_ps128(hi));
        _mm_storeu_ps(o + 8, _mm256_extractf128_ps(lo, 1));
        _mm_storeu_ps(o + 12, _mm256_extractf128_ps(hi, 1));
        return;
    }
    /* an even column of row 2m is 0 + one value of the dtype: exact, so bf16 just takes the top
     * half (the add has quieted a signalling NaN, as the rounding would) */
    const __m256i e = exact_even && dt == NN_C2I_BF16 ? _mm256_srli_epi32(_mm256_castps_si256(even), 16)
                                                  : nn256_round_words(even, dt == NN_C2I_F16);
    _mm256_storeu_si256((__m256i *)((uint16_t *)row + c0),
                        _mm256_or_si256(e, _mm256_slli_epi32(nn256_round_words(odd, dt == NN_C2I_F16), 16)));
}

/* `window` (a compile-time constant): each sum's terms in the reverse order, window order (col2im.h). */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_k3s2_plane(const col2im_plan *p,
                                                                         const unsigned char *cols, void *out,
                                                                         int dt, bool window)
{
    const int64_t OH = p->OH, OW = p->OW, L = OH * OW, W = p->W;
    const size_t esz = dt == NN_C2I_F32 ? 4 : 2;
    const __m256 zero = _mm256_setzero_ps();
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int64_t last = (OW - 1) / 8 * 8;
    for (int64_t m = 0; m < OH; m++) {
        unsigned char *row0 = (unsigned char *)out + (size_t)(2 * m * W) * esz;
        unsigned char *row1 = row0 + (size_t)W * esz;
        const bool below = m + 1 < OH;
        /* nine block streams advance a row per m: fetch them K3S2_AHEAD rows ahead (the hardware
         * prefetcher follows fewer streams) */
        for (int64_t b = 0; b < 9; b++) {
            const unsigned char *ahead_row = cols + (size_t)(b * L + (m + K3S2_AHEAD) * OW) * esz;
            for (int64_t off = 0; off < OW * (int64_t)esz; off += 64) _mm_prefetch((const char *)ahead_row + off, _MM_HINT_T0);
        }
        for (int64_t n0 = last; n0 >= 0; n0 -= 8) {
            /* lanes whose n+1 is a window column */
            const __m256 ahead = _mm256_castsi256_ps(
                _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(OW - 1 - n0)), lane));
            const int64_t at = m * OW + n0, at_below = at + OW;
            const __m256 c10 = _mm256_and_ps(ahead, avx2_k3s2_at(cols, 3 * L, at + 1, dt));
            const __m256 c12 = avx2_k3s2_at(cols, 5 * L, at, dt);
            const __m256 e0 = add8(zero, avx2_k3s2_at(cols, 4 * L, at, dt));
            const __m256 o0 = window ? add8(add8(zero, c12), c10) : add8(add8(zero, c10), c12);
            avx2_store_pairs(row0, 2 * n0, e0, o0, dt, true);
            __m256 e1 = zero, o1 = zero;
            if (window) {   /* ki = 2 (at m), then ki = 0 (at m + 1); kj descending */
                e1 = add8(e1, avx2_k3s2_at(cols, 7 * L, at, dt));
                o1 = add8(o1, avx2_k3s2_at(cols, 8 * L, at, dt));
                o1 = add8(o1, _mm256_and_ps(ahead, avx2_k3s2_at(cols, 6 * L, at + 1, dt)));
            }
            if (below) {
                const __m256 c01 = avx2_k3s2_at(cols, 1 * L, at_below, dt);
                const __m256 c00 = _mm256_and_ps(ahead, avx2_k3s2_at(cols, 0, at_below + 1, dt));
                const __m256 c02 = avx2_k3s2_at(cols, 2 * L, at_below, dt);
                e1 = add8(e1, c01);
                o1 = window ? add8(add8(o1, c02), c00) : add8(add8(o1, c00), c02);
            }
            if (!window) {
                e1 = add8(e1, avx2_k3s2_at(cols, 7 * L, at, dt));
                o1 = add8(o1, _mm256_and_ps(ahead, avx2_k3s2_at(cols, 6 * L, at + 1, dt)));
                o1 = add8(o1, avx2_k3s2_at(cols, 8 * L, at, dt));
            }
            avx2_store_pairs(row1, 2 * n0, e1, o1, dt, false);
        }
    }
}

/* The dtype pairs and strides as constants of inlined copies (kernel width 3 unrolled). */
NN_AVX2 static void avx2_plane_any(const col2im_plan *p, const avx2_plan *ap, const void *cols, float *scratch,
                                   void *out)
{
    const int in = nn_col2im_dt_code(p->in_dtype), outd = nn_col2im_dt_code(p->out_dtype);
    const bool k3 = p->kW == 3;
    if (ap->k3s2) {
        const bool w = p->window_order;
        if (in == NN_C2I_F32) w ? avx2_k3s2_plane(p, cols, out, NN_C2I_F32, true) : avx2_k3s2_plane(p, cols, out, NN_C2I_F32, false);
        else if (in == NN_C2I_BF16) w ? avx2_k3s2_plane(p, cols, out, NN_C2I_BF16, true) : avx2_k3s2_plane(p, cols, out, NN_C2I_BF16, false);
        else w ? avx2_k3s2_plane(p, cols, out, NN_C2I_F16, true) : avx2_k3s2_plane(p, cols, out, NN_C2I_F16, false);
        return;
    }
#define COL2IM_AVX2_CASE(I, O)                                                                \
    if (in == (I) && outd == (O)) {                                                           \
        if (p->sW == 1) {                                                                     \
            if (k3) avx2_plane(p, ap, cols, scratch, out, (I), (O), 1, 3);                    \
            else avx2_plane(p, ap, cols, scratch, out, (I), (O), 1, 0);                       \
        } else {                                                                              \
            if (k3) avx2_plane(p, ap, cols, scratch, out, (I), (O), 2, 3);                    \
            else avx2_plane(p, ap, cols, scratch, out, (I), (O), 2, 0);                       \
        }                                                                                     \
        return;                                                                               \
    }
    COL2IM_AVX2_CASE(NN_C2I_F32, NN_C2I_F32)
    COL2IM_AVX2_CASE(NN_C2I_F16, NN_C2I_F16)
    COL2IM_AVX2_CASE(NN_C2I_BF16, NN_C2I_BF16)
    COL2IM_AVX2_CASE(NN_C2I_F16, NN_C2I_F32)
    COL2IM_AVX2_CASE(NN_C2I_BF16, NN_C2I_F32)
    COL2IM_AVX2_CASE(NN_C2I_F32, NN_C2I_F16)
    COL2IM_AVX2_CASE(NN_C2I_F32, NN_C2I_BF16)
    COL2IM_AVX2_CASE(NN_C2I_F16, NN_C2I_BF16)
    COL2IM_AVX2_CASE(NN_C2I_BF16, NN_C2I_F16)
#undef COL2IM_AVX2_CASE
}

nn_col2im_avx2_plan *nn_col2im_avx2_plan_create(const nn_i2c_plan *p)
{
    avx2_plan *ap = malloc(sizeof *ap);
    if (ap != NULL && !build_avx2_plan(p, ap)) {
        free(ap);
        ap = NULL;
    }
    return ap;
}

void nn_col2im_avx2_plan_destroy(nn_col2im_avx2_plan *ap)
{
    if (ap == NULL) return;
    free_avx2_tables(ap);
    free(ap);
}

const char *nn_col2im_avx2_path(const nn_col2im_avx2_plan *ap)
{
    return ap->k3s2 ? "col2im_avx2_k3s2p1" : "col2im_avx2_rows";
}

/* The range handed to this call is ignored: planes are claimed in chunks (col2im.h). */
void nn_col2im_planes_avx2(void *vjob, int64_t begin, int64_t end)
{
    nn_col2im_job *job = (nn_col2im_job *)vjob;
    const nn_i2c_plan *p = job->plan;
    const avx2_plan *ap = (const avx2_plan *)job->tables;
    (void)begin;
    (void)end;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W, col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    float *scratch = calloc((size_t)ap->scratch_floats + 8, sizeof(float));
    unsigned char *staging = malloc((size_t)HW * out_esz + 64); /* + a chunk's spill */
    if (scratch == NULL || staging == NULL) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    } else {
        int64_t first, last;
        while (nn_claim_next(&job->claims, &first, &last)) {
            for (int64_t plane = first; plane < last; plane++) {
                unsigned char *dst = job->out + (size_t)(plane * HW) * out_esz;
                const unsigned char *cols = job->in + (size_t)(plane * col_block) * in_esz;
                if (ap->k3s2 && plane == p->planes - 1) { /* its loads may not run past the tensor */
                    memcpy(scratch, cols, (size_t)col_block * in_esz);
                    cols = (const unsigned char *)scratch;
                }
                avx2_plane_any(p, ap, cols, scratch, staging);
                if (job->stream_out)
                    nn_copy_row_nt(dst, staging, (size_t)HW * out_esz);
                else
                    memcpy(dst, staging, (size_t)HW * out_esz);
            }
        }
        if (job->stream_out) nn_streaming_fence();
    }
    free(scratch);
    free(staging);
}
#else /* not x86-64: never chosen (nn_cpu_avx2() is false), defined for the link */
nn_col2im_avx2_plan *nn_col2im_avx2_plan_create(const nn_i2c_plan *p) { (void)p; return NULL; }
void nn_col2im_avx2_plan_destroy(nn_col2im_avx2_plan *plan) { (void)plan; }
const char *nn_col2im_avx2_path(const nn_col2im_avx2_plan *ap) { (void)ap; return ""; }
void nn_col2im_planes_avx2(void *job, int64_t begin, int64_t end) { (void)job; (void)begin; (void)end; }
#endif /* NN_HAVE_X86_SIMD */
