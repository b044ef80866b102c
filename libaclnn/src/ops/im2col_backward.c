/*
 * im2col_backward.c - aclnnIm2colBackward ("col2im" / fold): the adjoint of aclnnIm2col.
 *
 *   out[n, c, ih, iw] = sum over (ki, kj) with ih = oh*sH - pH + ki*dH, iw = ow*sW - pW + kj*dW
 *                       of gradOutput[n, (c*kH + ki)*kW + kj, oh*OW + ow]
 *
 * On CPUs with AVX-512 (F/BW/VL/DQ, checked at run time) and sW <= 2 the planes go through a
 * row kernel instead (see "AVX-512 row kernel" below): each output row is summed in registers
 * from masked 16-lane loads and stored once, in the same per-element order.  The rest of this
 * comment describes the portable path, which every other case (and ACLNN_NO_SIMD=1) uses.
 * bf16 and fp32 with kernel 3, stride 2, padding 1 on small even images (k3s2_geometry) have
 * their own straight-line row kernels (see "k3s2p1" below), same order, same bits.
 *
 * Each image plane is accumulated in fp32 in a cache-resident buffer (the fp32 output plane
 * itself when possible) and written once; gradOutput is read exactly once, front to back, one
 * kernel row (ki, kj) after the other.  Each output element therefore receives its contributions
 * in a fixed order (ki ascending, then kj ascending) whatever the thread count; fp16/bf16 are
 * summed in fp32 and rounded once.
 *
 * The accumulator is split into sH x sW phase planes (ih mod sH, iw mod sW): within one phase
 * the contributions of a kernel offset (ki, kj) are contiguous runs of gradOutput, so every inner
 * loop is a unit-stride, vectorisable add (a single run for a whole kernel row block when it
 * covers complete phase rows); the phases are interleaved back into the image at the end (with
 * stride 1 the accumulator is the output plane itself).  Work is split over the N*C planes.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_im2col_backward.h"
#include "exec/nn_exec.h"
#include "base/nn_simd.h"
#include "ops/im2col_common.h"

#define OP "aclnnIm2colBackward"

/* The attribute arrays in argument order (inputSize, kernelSize, dilation, padding, stride). */
static const char *const ARRAY_NAMES[5] = {"inputSize", "kernelSize", "dilation", "padding",
                                           "stride"};

/* planes = N*C (C for a 2-D gradOutput); H, W = inputSize */
typedef nn_i2c_plan col2im_plan;

/* Where the contributions of kernel column kj land inside a row (see the file comment). */
typedef struct kcol_span {
    int64_t residue;           /* iw % sW of every iw this kernel column touches */
    int64_t src_off;           /* ow = t + src_off for the t-th iw of the residue class */
    int64_t t_lo, t_hi;        /* valid t range (empty when t_lo >= t_hi) */
} kcol_span;

/* Kernel columns of one residue class fused into one pass (at most 3, kj ascending): inside
 * the range every member covers, the row is read once and the members are added in order;
 * outside it each member adds its own edge, still in kj order. */
#define GROUP_MAX 3
typedef struct kcol_group {
    int64_t residue;
    int count;
    int64_t kj[GROUP_MAX];
    int64_t common_lo, common_hi;  /* empty (== class_len) when the members share nothing */
} kcol_group;

/* Tables of the AVX-512 row kernel (defined further down). */
typedef struct fast_plan fast_plan;

typedef struct col2im_ctx {
    const col2im_plan *plan;
    const kcol_span *spans;    /* kW entries */
    const kcol_group *groups;
    int64_t num_groups;
    const fast_plan *fast;     /* the AVX-512 row kernel's tables, or NULL */
    const struct avx2_plan *avx2; /* the AVX2 row kernel's tables, or NULL */
    bool stream_out;           /* fast path: write planes with non-temporal stores */
    int64_t class_len;         /* ceil(W / sW): columns of one phase plane of the accumulator */
    int64_t phase_rows;        /* ceil(H / sH): rows of one phase plane */
    const unsigned char *in;
    unsigned char *out;
    nn_claims claims;          /* planes, claimed in chunks by the threads */
    int failed;
} col2im_ctx;

static void build_spans(const col2im_plan *p, kcol_span *spans)
{
    for (int64_t kj = 0; kj < p->kW; kj++) {
        const int64_t koff = kj * p->dW - p->pW;   /* iw = ow*sW + koff */
        int64_t r = koff % p->sW;
        if (r < 0) r += p->sW;
        const int64_t off = (r - koff) / p->sW;    /* exact: r - koff is a multiple of sW */
        const int64_t count = r < p->W ? nn_ceil_div(p->W - r, p->sW) : 0;
        int64_t lo = -off > 0 ? -off : 0;
        int64_t hi = p->OW - off < count ? p->OW - off : count;
        spans[kj].residue = r;
        spans[kj].src_off = off;
        spans[kj].t_lo = lo;
        spans[kj].t_hi = hi > lo ? hi : lo;
    }
}

/* Groups the non-empty kernel columns by residue class, kj ascending within a class. */
static int64_t build_groups(const col2im_plan *p, const kcol_span *spans, int64_t class_len,
                            kcol_group *groups)
{
    int64_t n = 0;
    for (int64_t r = 0; r < p->sW; r++) {
        kcol_group *g = NULL;
        for (int64_t kj = 0; kj < p->kW; kj++) {
            const kcol_span *sp = &spans[kj];
            if (sp->residue != r || sp->t_lo >= sp->t_hi) continue;
            if (g == NULL || g->count == GROUP_MAX) {
                g = &groups[n++];
                g->residue = r;
                g->count = 0;
                g->common_lo = sp->t_lo;
                g->common_hi = sp->t_hi;
            }
            g->kj[g->count++] = kj;
            if (sp->t_lo > g->common_lo) g->common_lo = sp->t_lo;
            if (sp->t_hi < g->common_hi) g->common_hi = sp->t_hi;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        if (groups[i].common_lo >= groups[i].common_hi) {
            groups[i].common_lo = groups[i].common_hi = class_len;
        }
    }
    return n;
}

/* Short runs (often 13-56 floats) dominate, so the adds are written as explicit 8- and 4-wide
 * unaligned vector steps (GCC vector extensions: one AVX register in the AVX2 clone, two SSE
 * registers otherwise) plus a scalar tail, instead of letting the auto-vectoriser peel for
 * alignment.  Each element is still computed as ((acc + a) + b) + c, in that order. */
typedef float v8f __attribute__((vector_size(32), aligned(4), may_alias));
typedef float v4f __attribute__((vector_size(16), aligned(4), may_alias));

#define V8(p) (*(v8f *)(p))
#define V4(p) (*(v4f *)(p))
#define C8(p) (*(const v8f *)(p))
#define C4(p) (*(const v4f *)(p))

static inline __attribute__((always_inline)) void add_run(float *restrict acc,
                                                          const float *restrict a, int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) V8(acc + t) = V8(acc + t) + C8(a + t);
    if (t + 4 <= n) { V4(acc + t) = V4(acc + t) + C4(a + t); t += 4; }
    for (; t < n; t++) acc[t] += a[t];
}

static inline __attribute__((always_inline)) void add_run2(float *restrict acc,
                                                           const float *restrict a,
                                                           const float *restrict b, int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) V8(acc + t) = (V8(acc + t) + C8(a + t)) + C8(b + t);
    if (t + 4 <= n) { V4(acc + t) = (V4(acc + t) + C4(a + t)) + C4(b + t); t += 4; }
    for (; t < n; t++) acc[t] = (acc[t] + a[t]) + b[t];
}

static inline __attribute__((always_inline)) void add_run3(float *restrict acc,
                                                           const float *restrict a,
                                                           const float *restrict b,
                                                           const float *restrict c, int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) V8(acc + t) = ((V8(acc + t) + C8(a + t)) + C8(b + t)) + C8(c + t);
    if (t + 4 <= n) { V4(acc + t) = ((V4(acc + t) + C4(a + t)) + C4(b + t)) + C4(c + t); t += 4; }
    for (; t < n; t++) acc[t] = ((acc[t] + a[t]) + b[t]) + c[t];
}

/* bf16 sources are widened inside the adds (a bf16 value is the top half of its fp32 value), so
 * bf16 columns need no scratch conversion pass. */
typedef uint16_t v8h __attribute__((vector_size(16), aligned(2), may_alias));
typedef uint32_t v8u __attribute__((vector_size(32)));

#define widen8(p) ((v8f)(__builtin_convertvector(*(const v8h *)(p), v8u) << 16))

static inline __attribute__((always_inline)) float widen1(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline __attribute__((always_inline)) void add_run_bf16(float *restrict acc,
                                                               const uint16_t *restrict a,
                                                               int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) V8(acc + t) = V8(acc + t) + widen8(a + t);
    for (; t < n; t++) acc[t] += widen1(a[t]);
}

static inline __attribute__((always_inline)) void add_run2_bf16(float *restrict acc,
                                                                const uint16_t *restrict a,
                                                                const uint16_t *restrict b,
                                                                int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) V8(acc + t) = (V8(acc + t) + widen8(a + t)) + widen8(b + t);
    for (; t < n; t++) acc[t] = (acc[t] + widen1(a[t])) + widen1(b[t]);
}

static inline __attribute__((always_inline)) void add_run3_bf16(float *restrict acc,
                                                                const uint16_t *restrict a,
                                                                const uint16_t *restrict b,
                                                                const uint16_t *restrict c,
                                                                int64_t n)
{
    int64_t t = 0;
    for (; t + 8 <= n; t += 8)
        V8(acc + t) = ((V8(acc + t) + widen8(a + t)) + widen8(b + t)) + widen8(c + t);
    for (; t < n; t++) acc[t] = ((acc[t] + widen1(a[t])) + widen1(b[t])) + widen1(c[t]);
}

/* Adds one group's kernel columns of kernel row ki (`krows`: kW rows of L values of SRC_T) into
 * the accumulator rows they reach; RUN, RUN2 and RUN3 add one, two or three source runs.
 * Defined for fp32 rows and for bf16 rows widened on the fly. */
#define DEFINE_ADD_GROUP(NAME, SRC_T, RUN, RUN2, RUN3)                                                                 \
static inline __attribute__((always_inline)) void NAME(const col2im_ctx *ctx, const kcol_group *g, const SRC_T *krows, \
                             int64_t ki, float *restrict acc)                                                          \
{                                                                                                                      \
    const col2im_plan *p = ctx->plan;                                                                                  \
    const int64_t L = p->OH * p->OW;                                                                                   \
    int64_t oh_lo, oh_hi;                                                                                              \
    nn_ip_valid_range(p->H, p->OH, p->sH, ki * p->dH - p->pH, &oh_lo, &oh_hi);                                         \
    const SRC_T *src[GROUP_MAX];                                                                                       \
    const kcol_span *sp[GROUP_MAX];                                                                                    \
    for (int m = 0; m < g->count; m++) {                                                                               \
        sp[m] = &ctx->spans[g->kj[m]];                                                                                 \
        src[m] = krows + g->kj[m] * L + sp[m]->src_off;   /* src[m][oh*OW + t] */                                      \
    }                                                                                                                  \
    const int64_t c_lo = g->common_lo, c_hi = g->common_hi, T = ctx->class_len;                                        \
    /* Phase plane (rh, residue) of the accumulator; output row ih = oh*sH + koff is its row                           \
     * oh + row_off. */                                                                                                \
    const int64_t koff = ki * p->dH - p->pH;                                                                           \
    int64_t rh = koff % p->sH;                                                                                         \
    if (rh < 0) rh += p->sH;                                                                                           \
    const int64_t row_off = (koff - rh) / p->sH;                                                                       \
    float *restrict phase = acc + (rh * p->sW + g->residue) * ctx->phase_rows * T;                                     \
    if (T == p->OW && c_lo == 0 && c_hi == T && oh_hi > oh_lo) {                                                       \
        /* every member covers whole rows and rows are OW long on both sides: the kernel row                           \
         * block is one contiguous run */                                                                              \
        float *restrict first = phase + (oh_lo + row_off) * T;                                                         \
        const int64_t n = (oh_hi - oh_lo) * T, o = oh_lo * p->OW;                                                      \
        if (g->count == 1) {                                                                                           \
            RUN(first, src[0] + o, n);                                                                                 \
        } else if (g->count == 2) {                                                                                    \
            RUN2(first, src[0] + o, src[1] + o, n);                                                                    \
        } else {                                                                                                       \
            RUN3(first, src[0] + o, src[1] + o, src[2] + o, n);                                                        \
        }                                                                                                              \
        return;                                                                                                        \
    }                                                                                                                  \
    for (int64_t oh = oh_lo; oh < oh_hi; oh++) {                                                                       \
        float *restrict row = phase + (oh + row_off) * T;                                                              \
        const int64_t o = oh * p->OW;                                                                                  \
        for (int m = 0; m < g->count; m++) {        /* edges, kj ascending */                                          \
            const int64_t lo = sp[m]->t_lo, hi = sp[m]->t_hi;                                                          \
            const int64_t left_end = hi < c_lo ? hi : c_lo;                                                            \
            const int64_t right_start = lo > c_hi ? lo : c_hi;                                                         \
            if (left_end > lo) RUN(row + lo, src[m] + o + lo, left_end - lo);                                          \
            if (hi > right_start) RUN(row + right_start, src[m] + o + right_start, hi - right_start);                  \
        }                                                                                                              \
        const int64_t n = c_hi - c_lo;                                                                                 \
        if (n <= 0) continue;                                                                                          \
        if (g->count == 1) {                                                                                           \
            RUN(row + c_lo, src[0] + o + c_lo, n);                                                                     \
        } else if (g->count == 2) {                                                                                    \
            RUN2(row + c_lo, src[0] + o + c_lo, src[1] + o + c_lo, n);                                                 \
        } else {                                                                                                       \
            RUN3(row + c_lo, src[0] + o + c_lo, src[1] + o + c_lo, src[2] + o + c_lo, n);                              \
        }                                                                                                              \
    }                                                                                                                  \
}

DEFINE_ADD_GROUP(add_group, float, add_run, add_run2, add_run3)
DEFINE_ADD_GROUP(add_group_bf16, uint16_t, add_run_bf16, add_run2_bf16, add_run3_bf16)

/* One image plane: `cols` (kH*kW rows of L values, any of the three dtypes) into `dst` (fp32,
 * H*W).  Kernel rows are visited ki by ki, and within one ki by residue class with kj
 * ascending, so every output element receives its contributions in (ki, kj) order.  The
 * accumulator stays in cache: `dst` itself when sH == sW == 1, else the sH*sW phase planes in
 * `classes` (phase_rows x class_len each), interleaved into dst at the end. */
NN_IP_HOT static void col2im_plane(const col2im_ctx *ctx, const void *cols, float *restrict dst,
                                   float *restrict classes, float *restrict rows_f32)
{
    const col2im_plan *p = ctx->plan;
    const int64_t L = p->OH * p->OW, W = p->W, sW = p->sW;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const bool in_place = sW == 1 && p->sH == 1;   /* the phase layout is the plane itself */
    float *restrict acc = in_place ? dst : classes;
    memset(acc, 0, (size_t)(p->sH * sW * ctx->phase_rows * ctx->class_len) * sizeof(float));
    for (int64_t ki = 0; ki < p->kH; ki++) {
        const void *krows = (const unsigned char *)cols + (size_t)(ki * p->kW * L) * in_esz;
        if (p->in_dtype == ACL_BF16) {
            for (int64_t gi = 0; gi < ctx->num_groups; gi++) {
                add_group_bf16(ctx, &ctx->groups[gi], (const uint16_t *)krows, ki, acc);
            }
            continue;
        }
        const float *krows_f32 = (const float *)krows;
        if (p->in_dtype != ACL_FLOAT) {
            nn_ip_to_f32(p->in_dtype, krows, rows_f32, (size_t)(p->kW * L));
            krows_f32 = rows_f32;
        }
        for (int64_t gi = 0; gi < ctx->num_groups; gi++) {
            add_group(ctx, &ctx->groups[gi], krows_f32, ki, acc);
        }
    }
    if (in_place) return;
    const int64_t T = ctx->class_len, phase_size = ctx->phase_rows * T;
    for (int64_t ih = 0; ih < p->H; ih++) {
        float *restrict out_row = dst + ih * W;
        const float *restrict cls = classes + (ih % p->sH) * sW * phase_size + (ih / p->sH) * T;
        if (sW == 1) {
            memcpy(out_row, cls, (size_t)W * sizeof(float));
        } else if (sW == 2) {   /* the common case: a vectorisable two-way interleave */
            const int64_t pairs = W / 2;
            const float *restrict even = cls, *restrict odd = cls + phase_size;
            for (int64_t t = 0; t < pairs; t++) {
                out_row[2 * t] = even[t];
                out_row[2 * t + 1] = odd[t];
            }
            if (W % 2) out_row[W - 1] = even[pairs];
        } else {
            for (int64_t r = 0; r < sW && r < W; r++) {
                const int64_t count = nn_ceil_div(W - r, sW);
                for (int64_t t = 0; t < count; t++) {
                    out_row[r + t * sW] = cls[r * phase_size + t];
                }
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* AVX-512 row kernel (sW <= 2)                                                              */
/* ---------------------------------------------------------------------------------------- */
/*
 * On AVX-512 CPUs each output row is produced in registers and stored once: for a chunk of 16
 * output columns (sW == 1) or 32 columns split into 16 even and 16 odd ones (sW == 2), every
 * (ki, kj) contribution is one masked 16-lane load of a gradOutput row (widened in registers
 * for fp16/bf16) added to the chunk's accumulator, ki ascending then kj ascending - the same
 * per-element order as the phase-plane code above, starting from +0.0.  Lanes outside the
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
#if NN_HAVE_AVX512_CODE
#define AVX512_TARGET NN_AVX512

/* Small-image kernels prefetch the columns of the plane this many planes ahead into L2, one
 * slice per step (row or row pair) of the current plane, so that the whole plane is requested
 * by the time the current one is done.  One plane ahead left too little lead time after another
 * op had emptied the caches: 3 planes made the k3s2p1 28x28 calls 5-26 % faster at 1 thread
 * and 1-20 % at 2; 2 and 4 planes about as much, 6 a little less
 * (docs/performance_notes_im2col_prelu.md, session 11, has the table). */
enum { PREFETCH_PLANES_AHEAD = 3 };

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

struct fast_plan {
    int64_t chunks;            /* column chunks per output row */
    fast_tap *taps;            /* chunks x kW: the even-phase kj ascending, then the odd ones;
                                * offsets include the kernel column's block (kj * L) */
    int64_t even_count;        /* how many taps per chunk feed the even-column accumulator */
    int64_t *row_first;        /* H + 1 entries: output row ih reads kernel rows
                                * row_first[ih] .. row_first[ih + 1] - 1 of row_offset */
    int64_t *row_offset;       /* ki ascending: plane offset of gradOutput row (ki, kj = 0, oh) */
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

/* The k3s2p1 kernels' geometry: bf16 -> bf16 or fp32 -> fp32, kernel 3x3, stride 2, padding 1,
 * dilation 1, an even image exactly twice the window grid (H = 2*OH, W = 2*OW) and at most 16
 * windows per row (bf16: two window rows in one 32-word vector; one 32-column output chunk) - the
 * stride-2 3x3 layers of ResNet-style networks on 28x28 and smaller maps. */
static bool k3s2_geometry(const col2im_plan *p)
{
    return p->in_dtype == p->out_dtype && p->in_dtype != ACL_FLOAT16 && p->kH == 3 && p->kW == 3 &&
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

/* The gradOutput rows each output row ih reads: entries row_first[ih] .. row_first[ih+1]-1 of
 * row_offset, ki ascending, each the offset of row (ki, kj = 0, oh) in a layout where a kernel
 * position's OH rows take `kpos_size` elements and a row `row_stride`. */
static void fill_row_tables(const col2im_plan *p, int64_t kpos_size, int64_t row_stride, int64_t *row_first,
                            int64_t *row_offset)
{
    int64_t n = 0;
    for (int64_t ih = 0; ih < p->H; ih++) {
        row_first[ih] = n;
        for (int64_t ki = 0; ki < p->kH; ki++) {
            const int64_t t = ih + p->pH - ki * p->dH;
            if (t < 0 || t % p->sH != 0 || t / p->sH >= p->OH) continue;
            row_offset[n++] = ki * p->kW * kpos_size + (t / p->sH) * row_stride;
        }
    }
    row_first[p->H] = n;
}

/* Fills the tables; returns false (use the portable path) when the geometry does not fit. */
static bool build_fast_plan(const col2im_plan *p, fast_plan *fp)
{
    /* table sizes stay small: (W/16) x kW taps, H x kH row entries */
    if (p->sW > 2 || p->kW > 4096 || p->kH > 4096 || p->W > ((int64_t)1 << 32) ||
        p->H > (((int64_t)1 << 22) / p->kH) || !nn_cpu_avx512()) {
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
        for (int64_t kj = 0; kj < p->kW; kj++) {
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
    fill_row_tables(p, L, p->OW, fp->row_first, fp->row_offset);
    build_k3s2_tables(p, fp);
    return true;
}

static void free_fast_plan(fast_plan *fp)
{
    free(fp->taps);
    free(fp->row_first);
    free(fp->row_offset);
}

/* The dtypes as compile-time constants of the specialised kernels (fast_plane's cases). */
enum { DT_F32 = ACL_FLOAT, DT_F16 = ACL_FLOAT16, DT_BF16 = ACL_BF16 };

static inline int dt_code(aclDataType d)
{
    return d == ACL_FLOAT16 ? DT_F16 : d == ACL_BF16 ? DT_BF16 : DT_F32;
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
    if (dt == DT_F32) {
        _mm512_mask_storeu_ps((float *)dst + offset, m, v);
    } else if (dt == DT_F16) {
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

/* One plane, sW == 1 or 2.  in_dt, out_dt and sW are compile-time constants after inlining, and
 * so are KW (kernel width) and EVEN (taps of the even phase) when non-zero. */
AVX512_TARGET static inline __attribute__((always_inline)) void
fast_plane(const col2im_plan *p, const fast_plan *fp, const void *cols, void *dst, int in_dt,
           int out_dt, int64_t sW, int64_t KW, int64_t EVEN)
{
    const int64_t kW = KW ? KW : p->kW, even_count = EVEN ? EVEN : fp->even_count;
    const int64_t W = p->W;
    const size_t esz = in_dt == DT_F32 ? 4 : 2, out_esz = out_dt == DT_F32 ? 4 : 2;
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
    for (int64_t ih = 0; ih < p->H; ih++) {
        if (prefetch) prefetch_plane_slice(cols, plane_bytes, slice, (size_t)ih);
        const int64_t r_lo = fp->row_first[ih], r_hi = fp->row_first[ih + 1];
        unsigned char *out_row = (unsigned char *)dst + (size_t)(ih * W) * out_esz;
        for (int64_t q = 0; q < fp->chunks; q++) {
            const fast_tap *taps = fp->taps + q * kW;
            __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();
            for (int64_t r = r_lo; r < r_hi; r++) {   /* ki ascending, then kj ascending */
                const unsigned char *row = (const unsigned char *)cols + (size_t)fp->row_offset[r] * esz;
                for (int64_t i = 0; i < even_count; i++) {
                    even = _mm512_add_ps(even, load16(row, taps[i].offset, taps[i].lanes, in_dt));
                }
                if (sW == 2) {
                    for (int64_t i = even_count; i < kW; i++) {
                        odd = _mm512_add_ps(odd, load16(row, taps[i].offset, taps[i].lanes, in_dt));
                    }
                }
            }
            if (sW == 1) {
                store16(out_row, q * 16, lanes_below(W - q * 16), even, out_dt);
            } else if (out_dt == DT_BF16) {
                /* round both phases, then one word permute picks the high halves in column
                 * order: out[2l] = even[l], out[2l + 1] = odd[l] */
                const __m512i words = _mm512_permutex2var_epi16(bf16_round16_high(even), bf16_idx,
                                                                bf16_round16_high(odd));
                _mm512_mask_storeu_epi16((uint16_t *)out_row + q * 32, lanes32_below(W - q * 32),
                                         words);
            } else if (out_dt == DT_F16) {
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
 * the taps are added ki ascending, then kj ascending, as everywhere else; the accumulators start
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

/* Sums one row pair; the caller rounds and stores it. */
AVX512_TARGET static inline __attribute__((always_inline)) pair_acc
pair_sum(const fast_plan *fp, const uint16_t *const *blk, int64_t OW, int64_t oh, int64_t nr,
         int64_t nr_next, bool odd_rows)
{
    const __m512 zero = _mm512_setzero_ps();
    __m512 a, b, c, d;
    pair_acc acc;
    if (!odd_rows) {
        const int64_t o = oh * OW;
        pair_load(blk[4] + o, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &acc.ea, &acc.eb);
        pair_load(blk[3] + o + 1, fp->pair_w1[nr], fp->pair_a1[nr], fp->pair_b1[nr], &a, &b);
        pair_load(blk[5] + o, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &c, &d);
        acc.oa = _mm512_add_ps(a, c);
        acc.ob = _mm512_add_ps(b, d);
    } else {
        const int64_t o0 = (oh + 1) * OW, o2 = oh * OW;   /* ki = 0 at oh + 1, ki = 2 at oh */
        pair_load(blk[1] + o0, fp->pair_w0[nr_next], fp->pair_a0[nr_next], fp->pair_b0[nr_next], &a, &b);
        pair_load(blk[7] + o2, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &c, &d);
        acc.ea = _mm512_add_ps(a, c);
        acc.eb = _mm512_add_ps(b, d);
        pair_load(blk[0] + o0 + 1, fp->pair_w1[nr_next], fp->pair_a1[nr_next], fp->pair_b1[nr_next], &acc.oa, &acc.ob);
        pair_load(blk[2] + o0, fp->pair_w0[nr_next], fp->pair_a0[nr_next], fp->pair_b0[nr_next], &a, &b);
        acc.oa = _mm512_add_ps(acc.oa, a);
        acc.ob = _mm512_add_ps(acc.ob, b);
        pair_load(blk[6] + o2 + 1, fp->pair_w1[nr], fp->pair_a1[nr], fp->pair_b1[nr], &a, &b);
        acc.oa = _mm512_add_ps(acc.oa, a);
        acc.ob = _mm512_add_ps(acc.ob, b);
        pair_load(blk[8] + o2, fp->pair_w0[nr], fp->pair_a0[nr], fp->pair_b0[nr], &a, &b);
        acc.oa = _mm512_add_ps(acc.oa, a);
        acc.ob = _mm512_add_ps(acc.ob, b);
    }
    acc.ea = _mm512_add_ps(acc.ea, zero);
    acc.eb = _mm512_add_ps(acc.eb, zero);
    acc.oa = _mm512_add_ps(acc.oa, zero);
    acc.ob = _mm512_add_ps(acc.ob, zero);
    return acc;
}

/* One plane, two output rows of each parity per step; STORE rounds (pair_store_int or, with
 * AVX512-BF16, pair_store_cvt). */
#define DEFINE_PAIR_PLANE(NAME, TARGET, STORE)                                                      \
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
        STORE(fp, pair_sum(fp, blk, OW, oh, nr, nr_next, false), row, W, nr == 2);                  \
        STORE(fp, pair_sum(fp, blk, OW, oh, nr, nr_next, true), row + W, W, nr == 2);               \
    }                                                                                               \
}
DEFINE_PAIR_PLANE(k3s2_plane_bf16_int, AVX512_TARGET, pair_store_int)

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
DEFINE_PAIR_PLANE(k3s2_plane_bf16_cvt, NN_AVX512BF16, pair_store_cvt)

/* fp32 on the same geometry: one output row at a time, 16 even and 16 odd output columns in two
 * accumulators (the generic row kernel's layout, without its tables and loops):
 *   row 2oh:      E = x(1,1);            O = x(1,0)+ + x(1,2)
 *   row 2oh + 1:  E = x(0,1)' + x(2,1);  O = x(0,0)'+ + x(0,2)' + x(2,0)+ + x(2,2)   */
AVX512_TARGET static void k3s2_plane_f32(const col2im_plan *p, const void *cols, void *dst)
{
    const int64_t OH = p->OH, OW = p->OW, W = p->W, L = OH * OW;
    const float *blk[9];
    for (int b = 0; b < 9; b++) blk[b] = (const float *)cols + b * L;
    const __mmask16 in_row = lanes_below(OW), ahead = lanes_below(OW - 1);
    const __mmask16 store_lo = lanes_below(W), store_hi = lanes_below(W - 16);
    const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                            24, 8);
    const size_t plane_bytes = (size_t)(9 * L) * 4;
    const size_t slice = prefetch_slice_bytes(plane_bytes, (size_t)OH);
    float *row = (float *)dst;
    for (int64_t oh = 0; oh < OH; oh++, row += 2 * W) {
        prefetch_plane_slice(cols, plane_bytes, slice, (size_t)oh);
        const int64_t o = oh * OW, o1 = o + OW;
        const __m512 zero = _mm512_setzero_ps();
        __m512 e = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(in_row, blk[4] + o));
        __m512 d = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(ahead, blk[3] + o + 1));
        d = _mm512_add_ps(d, _mm512_maskz_loadu_ps(in_row, blk[5] + o));
        _mm512_mask_storeu_ps(row, store_lo, _mm512_permutex2var_ps(e, lo_idx, d));
        _mm512_mask_storeu_ps(row + 16, store_hi, _mm512_permutex2var_ps(e, hi_idx, d));
        const __mmask16 next = oh + 1 < OH ? in_row : 0, next_ahead = oh + 1 < OH ? ahead : 0;
        e = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(next, blk[1] + o1));
        e = _mm512_add_ps(e, _mm512_maskz_loadu_ps(in_row, blk[7] + o));
        d = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(next_ahead, blk[0] + o1 + 1));
        d = _mm512_add_ps(d, _mm512_maskz_loadu_ps(next, blk[2] + o1));
        d = _mm512_add_ps(d, _mm512_maskz_loadu_ps(ahead, blk[6] + o + 1));
        d = _mm512_add_ps(d, _mm512_maskz_loadu_ps(in_row, blk[8] + o));
        _mm512_mask_storeu_ps(row + W, store_lo, _mm512_permutex2var_ps(e, lo_idx, d));
        _mm512_mask_storeu_ps(row + W + 16, store_hi, _mm512_permutex2var_ps(e, hi_idx, d));
    }
}

/* Instantiates fast_plane for every (in, out) dtype pair and both strides. */
AVX512_TARGET static void fast_plane_any(const col2im_plan *p, const fast_plan *fp,
                                         const void *cols, void *dst)
{
    if (fp->k3s2) {
        if (p->in_dtype == ACL_FLOAT) {
            k3s2_plane_f32(p, cols, dst);
        } else if (fp->k3s2_cvt) {
            k3s2_plane_bf16_cvt(p, fp, cols, dst);
        } else {
            k3s2_plane_bf16_int(p, fp, cols, dst);
        }
        return;
    }
    const int in = dt_code(p->in_dtype), out = dt_code(p->out_dtype);
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
    COL2IM_FAST_CASE(DT_F32, DT_F32)
    COL2IM_FAST_CASE(DT_F16, DT_F16)
    COL2IM_FAST_CASE(DT_BF16, DT_BF16)
    COL2IM_FAST_CASE_GENERIC(DT_F16, DT_F32)
    COL2IM_FAST_CASE_GENERIC(DT_BF16, DT_F32)
    COL2IM_FAST_CASE_GENERIC(DT_F32, DT_F16)
    COL2IM_FAST_CASE_GENERIC(DT_F32, DT_BF16)
    COL2IM_FAST_CASE_GENERIC(DT_F16, DT_BF16)
    COL2IM_FAST_CASE_GENERIC(DT_BF16, DT_F16)
#undef COL2IM_FAST_CASE_GENERIC
#undef COL2IM_FAST_CASE
}
#else
struct fast_plan { int unused; };
static bool build_fast_plan(const col2im_plan *p, fast_plan *fp) { (void)p; (void)fp; return false; }
static void free_fast_plan(fast_plan *fp) { (void)fp; }
static void fast_plane_any(const col2im_plan *p, const fast_plan *fp, const void *cols, void *dst)
{
    (void)p; (void)fp; (void)cols; (void)dst;
}
#endif

/* ---------------------------------------------------------------------------------------- */
/* AVX2 row kernel (sW <= 2, CPUs without AVX-512)                                            */
/* ---------------------------------------------------------------------------------------- */
/*
 * The AVX-512 kernel's scheme - each output row built in registers, chunk by chunk, every
 * (ki, kj) contribution one vector load added in (ki, kj) order from +0.0 - with 8-lane vectors
 * and no lane masks: each plane's columns are first copied (widened to fp32) into a scratch
 * where every gradOutput row has zeros on both sides, wide enough that a tap's load lanes
 * outside the window read +0.0 (adding +0.0 never changes an accumulator that started at +0.0,
 * so the results are the portable path's bits).  A chunk is 8 output columns (sW == 1) or 8 even
 * and 8 odd ones (sW == 2), interleaved by unpacking (fp32) or as (even | odd << 16) word pairs
 * (fp16/bf16).  The plane is built in a staging buffer (the last chunk of a row spills into the
 * next row, which overwrites it) and copied out, with non-temporal stores when streaming.
 */
#if NN_HAVE_AVX512_CODE
#define AVX2_MAX_MARGIN 64                 /* zero floats on each side of a scratch row, at most */
#define AVX2_MAX_SCRATCH_FLOATS (8 * 1024) /* 32 KiB */

typedef struct avx2_plan {
    bool k3s2;                 /* avx2_k3s2_geometry: avx2_k3s2_plane, no scratch or tables */
    int64_t left, row_stride;  /* scratch rows: `left` zeros, OW values, zeros; row_stride floats */
    int64_t scratch_floats;    /* kH*kW*OH rows */
    int64_t chunks;            /* per output row, 8*sW columns each */
    int64_t even_count;        /* taps feeding the even-column accumulator (all of them for sW 1) */
    int64_t *taps;             /* chunks x kW scratch offsets of a chunk's loads, the even phase's
                                * kj ascending then the odd phase's; include the kj block */
    int64_t *row_first;        /* H + 1 entries into row_offset, as in fast_plan */
    int64_t *row_offset;       /* scratch offset of row (ki, kj = 0, oh), ki ascending */
} avx2_plan;

static void free_avx2_plan(avx2_plan *ap)
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
    if (avx2_k3s2_geometry(p) && nn_cpu_avx2() && !nn_cpu_avx512()) {
        ap->k3s2 = true;
        /* room for the tensor's last plane and the 8 values its loads may read past it */
        ap->scratch_floats = (9 * p->OH * p->OW * (int64_t)nn_dtype_size(p->in_dtype) + 3) / 4 + 8;
        return true;
    }
    if (p->sW > 2 || p->kW > 4096 || p->kH > 4096 || p->W > ((int64_t)1 << 32) ||
        p->H > (((int64_t)1 << 22) / p->kH) || !nn_cpu_avx2() || nn_cpu_avx512())
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
        free_avx2_plan(ap);
        return false;
    }
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t kj = 0; kj < p->kW; kj++) {
            const int64_t koff = kj * p->dW - p->pW;
            const int64_t r = ((koff % p->sW) + p->sW) % p->sW;
            if (r != pass) continue;
            for (int64_t q = 0; q < ap->chunks; q++)
                ap->taps[q * p->kW + n] = kj * block + ap->left + (q * span + r - koff) / p->sW;
            n++;
        }
        if (pass == 0) ap->even_count = n;
    }
    fill_row_tables(p, block, ap->row_stride, ap->row_first, ap->row_offset);
    return true;
}

/* 8 values from `from` as fp32 (exact). */
NN_AVX2 static inline __attribute__((always_inline)) __m256 avx2_load8_f32(const void *from, int in_dt)
{
    if (in_dt == DT_F32) return _mm256_loadu_ps((const float *)from);
    const __m128i w = _mm_loadu_si128((const __m128i *)from);
    return in_dt == DT_F16 ? _mm256_cvtph_ps(w) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(w), 16));
}

/* The n values of a gradOutput row as fp32 (exact) at `to`, whose right margin (>= 8 floats)
 * is zero again afterwards.  Whole vectors: the last one may read up to 7 values past the row,
 * so the caller passes `exact` (a scalar tail instead) for the plane's last rows, where that
 * would read past the plane. */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_widen_row(const void *from, float *to, int64_t n,
                                                                        int in_dt, bool exact)
{
    const size_t esz = in_dt == DT_F32 ? 4 : 2;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(to + i, avx2_load8_f32((const unsigned char *)from + i * esz, in_dt));
    if (i == n) return;
    if (!exact) {
        _mm256_storeu_ps(to + i, avx2_load8_f32((const unsigned char *)from + i * esz, in_dt));
        _mm256_storeu_ps(to + n, _mm256_setzero_ps()); /* the spill, back to zeros */
        return;
    }
    for (; i < n; i++) {
        const uint16_t h = in_dt == DT_F32 ? 0 : ((const uint16_t *)from)[i];
        if (in_dt == DT_F32) {
            to[i] = ((const float *)from)[i];
        } else if (in_dt == DT_F16) {
            to[i] = _cvtsh_ss(h);
        } else {
            const uint32_t bits = (uint32_t)h << 16;
            memcpy(to + i, &bits, 4);
        }
    }
}

/* 8 fp32 lanes rounded once to the out dtype's words, one per 32-bit lane (high halves zero). */
NN_AVX2 static inline __attribute__((always_inline)) __m256i avx2_round_words(__m256 v, int out_dt)
{
    if (out_dt == DT_F16)
        return _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i u = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)), nan);
}

/* One plane into `out` (H*W values of the out dtype, plus room for a chunk's spill). */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_plane(const col2im_plan *p, const avx2_plan *ap,
                                                                    const void *cols, float *scratch, void *out,
                                                                    int in_dt, int out_dt, int64_t sW, int64_t KW)
{
    const int64_t kW = KW ? KW : p->kW, OW = p->OW, W = p->W;
    const size_t in_esz = in_dt == DT_F32 ? 4 : 2;
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
                    for (int64_t i = 0; i < kW; i++) even = _mm256_add_ps(even, _mm256_loadu_ps(row + tap[i]));
                } else {
                    for (int64_t i = 0; i < ap->even_count; i++)
                        even = _mm256_add_ps(even, _mm256_loadu_ps(row + tap[i]));
                    for (int64_t i = ap->even_count; i < kW; i++)
                        odd = _mm256_add_ps(odd, _mm256_loadu_ps(row + tap[i]));
                }
            }
            const int64_t at = ih * W + q * span;
            if (out_dt == DT_F32) {
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
                const __m256i e = avx2_round_words(even, out_dt);
                if (sW == 1) {
                    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(e, e), 0x08);
                    _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(packed));
                } else {
                    const __m256i pairs = _mm256_or_si256(e, _mm256_slli_epi32(avx2_round_words(odd, out_dt), 16));
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
 * in (ki, kj) order from +0.0 as everywhere; a term whose m+1 or n+1 reaches OH or OW is left
 * out (the n+1 loads are zeroed in those lanes).  8 window columns per step; a row's last step
 * (which may spill past the row) goes first.  The loads of a step may read up to 8 values past
 * a block row, so the tensor's last plane is run from a padded copy.
 */
enum { K3S2_AHEAD = 4 };

NN_AVX2 static inline __attribute__((always_inline)) __m256 avx2_k3s2_at(const unsigned char *cols, int64_t block,
                                                                        int64_t at, int dt)
{
    const size_t esz = dt == DT_F32 ? 4 : 2;
    return avx2_load8_f32(cols + (size_t)(block + at) * esz, dt);
}

/* Stores the 8 even and 8 odd columns from column 2*n0 of an output row, rounded once. */
NN_AVX2 static inline __attribute__((always_inline)) void avx2_store_pairs(void *row, int64_t c0, __m256 even,
                                                                          __m256 odd, int dt, bool exact_even)
{
    if (dt == DT_F32) {
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
    const __m256i e = exact_even && dt == DT_BF16 ? _mm256_srli_epi32(_mm256_castps_si256(even), 16)
                                                  : avx2_round_words(even, dt);
    _mm256_storeu_si256((__m256i *)((uint16_t *)row + c0),
                        _mm256_or_si256(e, _mm256_slli_epi32(avx2_round_words(odd, dt), 16)));
}

NN_AVX2 static inline __attribute__((always_inline)) void avx2_k3s2_plane(const col2im_plan *p,
                                                                         const unsigned char *cols, void *out,
                                                                         int dt)
{
    const int64_t OH = p->OH, OW = p->OW, L = OH * OW, W = p->W;
    const size_t esz = dt == DT_F32 ? 4 : 2;
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
            const __m256 e0 = _mm256_add_ps(zero, avx2_k3s2_at(cols, 4 * L, at, dt));
            const __m256 o0 = _mm256_add_ps(_mm256_add_ps(zero, c10), avx2_k3s2_at(cols, 5 * L, at, dt));
            avx2_store_pairs(row0, 2 * n0, e0, o0, dt, true);
            __m256 e1 = zero, o1 = zero;
            if (below) {
                e1 = _mm256_add_ps(e1, avx2_k3s2_at(cols, 1 * L, at_below, dt));
                o1 = _mm256_add_ps(o1, _mm256_and_ps(ahead, avx2_k3s2_at(cols, 0, at_below + 1, dt)));
                o1 = _mm256_add_ps(o1, avx2_k3s2_at(cols, 2 * L, at_below, dt));
            }
            e1 = _mm256_add_ps(e1, avx2_k3s2_at(cols, 7 * L, at, dt));
            o1 = _mm256_add_ps(o1, _mm256_and_ps(ahead, avx2_k3s2_at(cols, 6 * L, at + 1, dt)));
            o1 = _mm256_add_ps(o1, avx2_k3s2_at(cols, 8 * L, at, dt));
            avx2_store_pairs(row1, 2 * n0, e1, o1, dt, false);
        }
    }
}

/* The dtype pairs and strides as constants of inlined copies (kernel width 3 unrolled). */
NN_AVX2 static void avx2_plane_any(const col2im_plan *p, const avx2_plan *ap, const void *cols, float *scratch,
                                   void *out)
{
    const int in = dt_code(p->in_dtype), outd = dt_code(p->out_dtype);
    const bool k3 = p->kW == 3;
    if (ap->k3s2) {
        if (in == DT_F32) avx2_k3s2_plane(p, cols, out, DT_F32);
        else if (in == DT_BF16) avx2_k3s2_plane(p, cols, out, DT_BF16);
        else avx2_k3s2_plane(p, cols, out, DT_F16);
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
    COL2IM_AVX2_CASE(DT_F32, DT_F32)
    COL2IM_AVX2_CASE(DT_F16, DT_F16)
    COL2IM_AVX2_CASE(DT_BF16, DT_BF16)
    COL2IM_AVX2_CASE(DT_F16, DT_F32)
    COL2IM_AVX2_CASE(DT_BF16, DT_F32)
    COL2IM_AVX2_CASE(DT_F32, DT_F16)
    COL2IM_AVX2_CASE(DT_F32, DT_BF16)
    COL2IM_AVX2_CASE(DT_F16, DT_BF16)
    COL2IM_AVX2_CASE(DT_BF16, DT_F16)
#undef COL2IM_AVX2_CASE
}
#else
typedef struct avx2_plan { int64_t scratch_floats; } avx2_plan;
static bool build_avx2_plan(const col2im_plan *p, avx2_plan *ap) { (void)p; (void)ap; return false; }
static void free_avx2_plan(avx2_plan *ap) { (void)ap; }
static void avx2_plane_any(const col2im_plan *p, const avx2_plan *ap, const void *cols, float *scratch, void *out)
{
    (void)p; (void)ap; (void)cols; (void)scratch; (void)out;
}
#endif

/* The AVX2 kernel's planes: a zeroed scratch and a staging plane per thread. */
static void col2im_planes_avx2(col2im_ctx *ctx)
{
    const col2im_plan *p = ctx->plan;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W, col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    float *scratch = calloc((size_t)ctx->avx2->scratch_floats + 8, sizeof(float));
    unsigned char *staging = malloc((size_t)HW * out_esz + 64); /* + a chunk's spill */
    if (scratch == NULL || staging == NULL) {
        __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
    } else {
        int64_t first, last;
        while (nn_claim_next(&ctx->claims, &first, &last)) {
            for (int64_t plane = first; plane < last; plane++) {
                unsigned char *dst = ctx->out + (size_t)(plane * HW) * out_esz;
                const unsigned char *cols = ctx->in + (size_t)(plane * col_block) * in_esz;
                if (ctx->avx2->k3s2 && plane == p->planes - 1) { /* its loads may not run past the tensor */
                    memcpy(scratch, cols, (size_t)col_block * in_esz);
                    cols = (const unsigned char *)scratch;
                }
                avx2_plane_any(p, ctx->avx2, cols, scratch, staging);
                if (ctx->stream_out)
                    nn_copy_row_nt(dst, staging, (size_t)HW * out_esz);
                else
                    memcpy(dst, staging, (size_t)HW * out_esz);
            }
        }
        if (ctx->stream_out) nn_streaming_fence();
    }
    free(scratch);
    free(staging);
}

static void col2im_planes(void *vctx, int64_t begin, int64_t end)
{
    col2im_ctx *ctx = (col2im_ctx *)vctx;
    const col2im_plan *p = ctx->plan;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W;
    const int64_t col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    const bool wide_out = p->out_dtype == ACL_FLOAT;

    if (ctx->avx2 != NULL) {
        (void)begin;
        (void)end;
        col2im_planes_avx2(ctx);
        return;
    }
    if (ctx->fast != NULL) {
        (void)begin;
        (void)end;
        /* Streamed output: each plane is built in a cache-resident buffer and copied out with
         * non-temporal stores (no read-for-ownership of the output lines). */
        unsigned char *staging = NULL;
        if (ctx->stream_out && (staging = malloc((size_t)HW * out_esz)) == NULL) {
            __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
            return;
        }
        int64_t first, last;
        while (nn_claim_next(&ctx->claims, &first, &last)) {
            for (int64_t plane = first; plane < last; plane++) {
                unsigned char *dst = ctx->out + (size_t)(plane * HW) * out_esz;
                fast_plane_any(p, ctx->fast, ctx->in + (size_t)(plane * col_block) * in_esz,
                               staging != NULL ? staging : dst);
                if (staging != NULL) nn_copy_row_nt(dst, staging, (size_t)HW * out_esz);
            }
        }
        if (staging != NULL) {
            nn_streaming_fence();
            free(staging);
        }
        return;
    }
    const bool in_place = p->sW == 1 && p->sH == 1;
    float *classes = in_place ? NULL
                              : malloc((size_t)(p->sH * p->sW * ctx->phase_rows * ctx->class_len) *
                                       sizeof(float));
    const bool needs_rows = p->in_dtype == ACL_FLOAT16;   /* bf16 is widened inside the adds */
    float *row_f32 = needs_rows ? malloc((size_t)(p->kW * L) * sizeof(float)) : NULL;
    float *plane_f32 = wide_out ? NULL : malloc((size_t)HW * sizeof(float));
    if ((!in_place && classes == NULL) || (needs_rows && row_f32 == NULL) ||
        (!wide_out && plane_f32 == NULL)) {
        __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
    } else {
        /* The range handed to this call is ignored: planes are claimed in chunks (nn_claims),
         * so a thread that starts late on a busy host still takes its share; each plane is
         * computed the same way by whoever claims it. */
        (void)begin;
        (void)end;
        int64_t first, last;
        while (nn_claim_next(&ctx->claims, &first, &last)) {
            for (int64_t plane = first; plane < last; plane++) {
                const void *cols = ctx->in + (size_t)(plane * col_block) * in_esz;
                void *dst = ctx->out + (size_t)(plane * HW) * out_esz;
                col2im_plane(ctx, cols, wide_out ? (float *)dst : plane_f32, classes, row_f32);
                if (!wide_out) {
                    nn_ip_from_f32(p->out_dtype, plane_f32, dst, (size_t)HW);
                }
            }
        }
    }
    free(classes);
    free(row_f32);
    free(plane_f32);
}

static aclnnStatus col2im_kernel(const nn_launch *l)
{
    const col2im_plan *p = (const col2im_plan *)l->plan;
    kcol_span *spans = malloc((size_t)p->kW * sizeof *spans);
    if (spans == NULL) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld kernel-column spans.",
                        (long long)p->kW);
    }
    kcol_group *groups = malloc((size_t)p->kW * sizeof *groups);
    if (groups == NULL) {
        free(spans);
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld kernel-column groups.",
                        (long long)p->kW);
    }
    const int64_t class_len = nn_ceil_div(p->W, p->sW);
    build_spans(p, spans);
    const int64_t num_groups = build_groups(p, spans, class_len, groups);
    fast_plan fast;
    const bool use_fast = build_fast_plan(p, &fast);
    avx2_plan avx2;
    const bool use_avx2 = !use_fast && build_avx2_plan(p, &avx2);
    const int64_t col_elems = p->kH * p->kW * p->OH * p->OW, image_elems = p->H * p->W; /* per plane */
    /* Streaming is decided on the bytes the launch moves, columns read plus image written (as
     * the upsample backward does): the columns passing through the cache evict the image before
     * anyone could read it back.  In the bench's conditions (torch's call in between) this took
     * the k3s2p1 fp32 case from 2.15-2.41 to 1.79-1.85 ms at 1 thread and 1.26-1.29 to
     * 0.88-1.09 ms at 2 (docs/performance_notes_im2col_prelu.md). */
    const uint64_t moved = (uint64_t)(p->planes * col_elems) * nn_dtype_size(p->in_dtype) +
                           (uint64_t)(p->planes * image_elems) * nn_dtype_size(p->out_dtype);
    col2im_ctx ctx = {p, spans, groups, num_groups, use_fast ? &fast : NULL, use_avx2 ? &avx2 : NULL,
                      (use_fast || use_avx2) && nn_use_streaming_stores(moved),
                      class_len,
                      nn_ceil_div(p->H, p->sH),
                      (const unsigned char *)l->operands[0].data,
                      (unsigned char *)l->operands[1].data, {0, 0, 0}, 0};
    /* Read volume per plane decides the grain: ~64 KiB of columns per task at least. */
    const int64_t per_plane = col_elems + image_elems;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    nn_claims_init(&ctx.claims, p->planes, 16, grain); /* ~1/16 of a thread's share, >= a grain */
    nn_parallel_for(p->planes, grain, col2im_planes, &ctx);
    if (use_fast) free_fast_plan(&fast);
    if (use_avx2) free_avx2_plan(&avx2);
    free(spans);
    free(groups);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate the per-thread fp32 buffers "
                        "(%lld image values per plane).", (long long)(p->H * p->W));
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_ranks(const aclTensor *gradOutput, const aclTensor *out)
{
    if (gradOutput->ndim != 2 && gradOutput->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected gradOutput dim [%llu] to be 2 or 3 "
                        "but check failed.", (unsigned long long)gradOutput->ndim);
    }
    if (out->ndim != gradOutput->ndim + 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected out dim [%llu] to be 1 greater than "
                        "gradOutput dim [%llu] but check failed.", (unsigned long long)out->ndim,
                        (unsigned long long)gradOutput->ndim);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_array_values(const aclIntArray *inputSize, const aclIntArray *k,
                                      const aclIntArray *d, const aclIntArray *pad,
                                      const aclIntArray *s)
{
    if (k->values[0] <= 0 || k->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Kernel size must be greater than zero, but "
                        "got kernelSize=(%lld,%lld).", (long long)k->values[0], (long long)k->values[1]);
    }
    if (s->values[0] <= 0 || s->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Stride must be greater than zero, but got "
                        "stride=(%lld,%lld).", (long long)s->values[0], (long long)s->values[1]);
    }
    if (d->values[0] <= 0 || d->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Dilation must be greater than zero, but got "
                        "dilation=(%lld,%lld).", (long long)d->values[0], (long long)d->values[1]);
    }
    if (pad->values[0] < 0 || pad->values[1] < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Padding must not be negative, but got "
                        "padding=(%lld,%lld).", (long long)pad->values[0], (long long)pad->values[1]);
    }
    /* CANN's doc requires a positive inputSize but its code does not check (decision 7). */
    if (inputSize->values[0] <= 0 || inputSize->values[1] <= 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": inputSize must be greater than zero, but got "
                        "inputSize=(%lld,%lld).", (long long)inputSize->values[0],
                        (long long)inputSize->values[1]);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_arrays(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                const aclIntArray *k, const aclIntArray *d, const aclIntArray *pad,
                                const aclIntArray *s, col2im_plan *plan)
{
    const aclIntArray *arrays[5] = {inputSize, k, d, pad, s};
    aclnnStatus st = nn_i2c_check_array_sizes(OP, 5, arrays, ARRAY_NAMES);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_array_values(inputSize, k, d, pad, s)) != ACLNN_SUCCESS) return st;

    const bool batched = gradOutput->ndim == 3;
    const int64_t rows = gradOutput->dims[batched ? 1 : 0];
    const int64_t L = gradOutput->dims[batched ? 2 : 1];
    int64_t kk;
    if (!nn_ip_mul(k->values[0], k->values[1], &kk) || rows % kk != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected size of gradOutput's dim -2 to be "
                        "divisible by the product of kernelSize but got gradOutput.shape[-2]=%lld "
                        "and kernelSize=(%lld,%lld).", (long long)rows, (long long)k->values[0],
                        (long long)k->values[1]);
    }
    int64_t OH, OW, expected_L;
    if (!nn_ip_window_count(inputSize->values[0], k->values[0], d->values[0], pad->values[0],
                            s->values[0], &OH) ||
        !nn_ip_window_count(inputSize->values[1], k->values[1], d->values[1], pad->values[1],
                            s->values[1], &OW) ||
        !nn_ip_mul(OH < 0 ? 0 : OH, OW < 0 ? 0 : OW, &expected_L)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": inputSize, kernelSize, dilation and padding "
                        "must keep the window count within int64.");
    }
    /* CANN computes L with truncating unsigned arithmetic and lets OH < 1 through when
     * gradOutput is empty; we require at least one window per axis, like ATen (decision 7). */
    if (OH < 1 || OW < 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": The shape (%lld, %lld) of the array "
                        "calculated by inputSize, kernelSize, dilation, padding and stride must be "
                        "at least one.", (long long)OH, (long long)OW);
    }
    if (L != expected_L) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected gradOutput.shape[-1] should be %lld, "
                        "but current is %lld.", (long long)expected_L, (long long)L);
    }
    nn_i2c_set_geometry(plan, (batched ? gradOutput->dims[0] : 1) * (rows / kk),
                        inputSize->values[0], inputSize->values[1], OH, OW, k, d, pad, s);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_out_shape(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                   const aclIntArray *k, const aclTensor *out)
{
    int64_t expected[4];
    uint64_t nd = 0;
    const bool batched = gradOutput->ndim == 3;
    if (batched) expected[nd++] = gradOutput->dims[0];
    expected[nd++] = gradOutput->dims[batched ? 1 : 0] / (k->values[0] * k->values[1]);
    expected[nd++] = inputSize->values[0];
    expected[nd++] = inputSize->values[1];
    return nn_i2c_check_out_shape(OP, out, nd, expected, "Shape of out should be ",
                                  ", but current is ");
}

aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                const aclIntArray *inputSize,
                                                const aclIntArray *kernelSize,
                                                const aclIntArray *dilation,
                                                const aclIntArray *padding,
                                                const aclIntArray *stride, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor)
{
    aclnnStatus st = nn_check_result_ptrs(OP, workspaceSize, executor);
    if (st != ACLNN_SUCCESS) return st;
    const aclIntArray *arrays[5] = {inputSize, kernelSize, dilation, padding, stride};
    st = nn_i2c_check_handles(OP, "gradOutput", gradOutput, 5, arrays, ARRAY_NAMES, out);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_float_dtype(OP, "gradOutput", gradOutput)) != ACLNN_SUCCESS) return st;
    if ((st = nn_ip_check_float_dtype(OP, "out", out)) != ACLNN_SUCCESS) return st;
    if ((st = check_ranks(gradOutput, out)) != ACLNN_SUCCESS) return st;
    col2im_plan plan;
    memset(&plan, 0, sizeof plan);
    st = check_arrays(gradOutput, inputSize, kernelSize, dilation, padding, stride, &plan);
    if (st != ACLNN_SUCCESS) return st;
    if ((st = check_out_shape(gradOutput, inputSize, kernelSize, out)) != ACLNN_SUCCESS) return st;
    return nn_i2c_make_executor(OP, col2im_kernel, &plan, gradOutput, out, workspaceSize, executor);
}

aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
