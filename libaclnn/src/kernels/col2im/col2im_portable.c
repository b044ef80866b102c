/*
 * col2im_portable.c - the col2im kernel for any CPU, and what every path shares (col2im.h).
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
 * stride 1 the accumulator is the output plane itself).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/col2im/col2im.h"

/* The hot loop is compiled twice, for AVX2 and for the baseline ISA, and picked at load time
 * (GCC's target_clones): the same source and the same order of adds, so the same bits, in
 * either clone.  no-trapping-math changes no result (no reassociation, no contraction). */
#define COL2IM_HOT __attribute__((target_clones("avx2", "default"), optimize("no-trapping-math")))

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


struct nn_col2im_tables {
    kcol_span *spans;          /* kW entries */
    kcol_group *groups;
    int64_t num_groups;
    int64_t class_len;         /* ceil(W / sW): columns of one phase plane of the accumulator */
    int64_t phase_rows;        /* ceil(H / sH): rows of one phase plane */
};

static void build_spans(const nn_i2c_plan *p, kcol_span *spans)
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
static int64_t build_groups(const nn_i2c_plan *p, const kcol_span *spans, int64_t class_len,
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

nn_col2im_tables *nn_col2im_tables_create(const nn_i2c_plan *p)
{
    nn_col2im_tables *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->spans = malloc((size_t)p->kW * sizeof *t->spans);
    t->groups = malloc((size_t)p->kW * sizeof *t->groups);
    if (t->spans == NULL || t->groups == NULL) {
        nn_col2im_tables_destroy(t);
        return NULL;
    }
    t->class_len = nn_ceil_div(p->W, p->sW);
    t->phase_rows = nn_ceil_div(p->H, p->sH);
    build_spans(p, t->spans);
    t->num_groups = build_groups(p, t->spans, t->class_len, t->groups);
    return t;
}

void nn_col2im_tables_destroy(nn_col2im_tables *t)
{
    if (t == NULL) return;
    free(t->spans);
    free(t->groups);
    free(t);
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
static inline __attribute__((always_inline)) void NAME(const nn_i2c_plan *p, const nn_col2im_tables *ctx,              \
                             const kcol_group *g, const SRC_T *krows,                                                  \
                             int64_t ki, float *restrict acc)                                                          \
{                                                                                                                      \
    const int64_t L = p->OH * p->OW;                                                                                   \
    int64_t oh_lo, oh_hi;                                                                                              \
    nn_i2c_valid_range(p->H, p->OH, p->sH, ki * p->dH - p->pH, &oh_lo, &oh_hi);                                         \
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
COL2IM_HOT static void col2im_plane(const nn_i2c_plan *p, const nn_col2im_tables *ctx, const void *cols,
                                    float *restrict dst, float *restrict classes, float *restrict rows_f32)
{
    const int64_t L = p->OH * p->OW, W = p->W, sW = p->sW;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const bool in_place = sW == 1 && p->sH == 1;   /* the phase layout is the plane itself */
    float *restrict acc = in_place ? dst : classes;
    memset(acc, 0, (size_t)(p->sH * sW * ctx->phase_rows * ctx->class_len) * sizeof(float));
    for (int64_t ki = 0; ki < p->kH; ki++) {
        const void *krows = (const unsigned char *)cols + (size_t)(ki * p->kW * L) * in_esz;
        if (p->in_dtype == ACL_BF16) {
            for (int64_t gi = 0; gi < ctx->num_groups; gi++) {
                add_group_bf16(p, ctx, &ctx->groups[gi], (const uint16_t *)krows, ki, acc);
            }
            continue;
        }
        const float *krows_f32 = (const float *)krows;
        if (p->in_dtype != ACL_FLOAT) {
            nn_to_f32_n(p->in_dtype, krows, rows_f32, (size_t)(p->kW * L));
            krows_f32 = rows_f32;
        }
        for (int64_t gi = 0; gi < ctx->num_groups; gi++) {
            add_group(p, ctx, &ctx->groups[gi], krows_f32, ki, acc);
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


void nn_col2im_planes_portable(void *vjob, int64_t begin, int64_t end)
{
    nn_col2im_job *job = (nn_col2im_job *)vjob;
    const nn_i2c_plan *p = job->plan;
    const nn_col2im_tables *t = (const nn_col2im_tables *)job->tables;
    const int64_t L = p->OH * p->OW, HW = p->H * p->W;
    const int64_t col_block = p->kH * p->kW * L;
    const size_t in_esz = nn_dtype_size(p->in_dtype), out_esz = nn_dtype_size(p->out_dtype);
    const bool wide_out = p->out_dtype == ACL_FLOAT;
    const bool in_place = p->sW == 1 && p->sH == 1;
    float *classes = in_place ? NULL
                              : malloc((size_t)(p->sH * p->sW * t->phase_rows * t->class_len) *
                                       sizeof(float));
    const bool needs_rows = p->in_dtype == ACL_FLOAT16;   /* bf16 is widened inside the adds */
    float *row_f32 = needs_rows ? malloc((size_t)(p->kW * L) * sizeof(float)) : NULL;
    float *plane_f32 = wide_out ? NULL : malloc((size_t)HW * sizeof(float));
    if ((!in_place && classes == NULL) || (needs_rows && row_f32 == NULL) ||
        (!wide_out && plane_f32 == NULL)) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    } else {
        /* The range handed to this call is ignored: planes are claimed in chunks (nn_claims),
         * so a thread that starts late on a busy host still takes its share; each plane is
         * computed the same way by whoever claims it. */
        (void)begin;
        (void)end;
        int64_t first, last;
        while (nn_claim_next(&job->claims, &first, &last)) {
            for (int64_t plane = first; plane < last; plane++) {
                const void *cols = job->in + (size_t)(plane * col_block) * in_esz;
                void *dst = job->out + (size_t)(plane * HW) * out_esz;
                col2im_plane(p, t, cols, wide_out ? (float *)dst : plane_f32, classes, row_f32);
                if (!wide_out) {
                    nn_from_f32_n(p->out_dtype, plane_f32, dst, (size_t)HW);
                }
            }
        }
    }
    free(classes);
    free(row_f32);
    free(plane_f32);
}

bool nn_col2im_run(nn_col2im_job *job, nn_range_fn planes_fn)
{
    const nn_i2c_plan *p = job->plan;
    /* Read volume per plane decides the grain: ~64 KiB of columns per task at least. */
    const int64_t per_plane = p->kH * p->kW * p->OH * p->OW + p->H * p->W;
    const int64_t grain = per_plane >= 16384 ? 1 : 16384 / (per_plane > 0 ? per_plane : 1);
    nn_claims_init(&job->claims, p->planes, 16, grain); /* ~1/16 of a thread's share, >= a grain */
    job->failed = 0;
    nn_parallel_for(p->planes, grain, planes_fn, job);
    return job->failed == 0;
}

/* Shared with the vector paths' table builders (col2im.h). */
void nn_col2im_fill_row_tables(const nn_i2c_plan *p, int64_t kpos_size, int64_t row_stride,
                               int64_t *row_first, int64_t *row_offset)
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

