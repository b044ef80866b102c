/*
 * im2col_portable.c - the im2col gather for any CPU (im2col.h): each kernel row (ki, kj) of a
 * plane's column block copied from the image in the input's element type (memcpy for sW == 1),
 * padding as zeros; a streamed output (no cast) through a line stage, in whole non-temporal
 * lines; with a dtype cast, one row at a time through fp32 (one rounding per value).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h" /* the line stage */
#include "kernels/im2col/im2col.h"

/* Gathers rows [oh_begin, oh_end) of row (ki, kj) of one plane's column block (L = OH*OW values)
 * in the input's element type, into dst (output row oh_begin first): for every window position
 * the source pixel, or 0 where it falls into the padding. */
#define DEFINE_IM2COL_ROWS(NAME, T)                                                               \
    static void NAME(const nn_i2c_plan *p, const T *restrict plane, T *restrict dst, int64_t ki,  \
                     int64_t kj, int64_t oh_begin, int64_t oh_end)                               \
    {                                                                                            \
        const int64_t W = p->W, OW = p->OW;                                                      \
        const int64_t col_off = kj * p->dW - p->pW;                                              \
        int64_t ow_lo, ow_hi;                                                                    \
        nn_i2c_valid_range(W, OW, p->sW, col_off, &ow_lo, &ow_hi);                                \
        for (int64_t oh = oh_begin; oh < oh_end; oh++, dst += OW) {                              \
            const int64_t ih = oh * p->sH - p->pH + ki * p->dH;                                  \
            if (ih < 0 || ih >= p->H || ow_lo >= ow_hi) {                                        \
                memset(dst, 0, (size_t)OW * sizeof(T));                                          \
                continue;                                                                        \
            }                                                                                    \
            const T *restrict src = plane + ih * W + col_off;                                    \
            memset(dst, 0, (size_t)ow_lo * sizeof(T));                                           \
            if (p->sW == 1) {                                                                    \
                memcpy(dst + ow_lo, src + ow_lo, (size_t)(ow_hi - ow_lo) * sizeof(T));           \
            } else {                                                                             \
                const int64_t sW = p->sW;                                                        \
                for (int64_t ow = ow_lo; ow < ow_hi; ow++) {                                     \
                    dst[ow] = src[ow * sW];                                                      \
                }                                                                                \
            }                                                                                    \
            memset(dst + ow_hi, 0, (size_t)(OW - ow_hi) * sizeof(T));                            \
        }                                                                                        \
    }

DEFINE_IM2COL_ROWS(im2col_rows_u8, uint8_t)
DEFINE_IM2COL_ROWS(im2col_rows_u16, uint16_t)
DEFINE_IM2COL_ROWS(im2col_rows_u32, uint32_t)
DEFINE_IM2COL_ROWS(im2col_rows_u64, uint64_t)

/* Any element size of the products' lists (1, 2, 4 or 8 bytes: Ascend950 gathers its integer,
 * bool, double and complex dtypes too); zero bits are every dtype's padding value. */
static void im2col_rows(const nn_i2c_plan *p, size_t esz, const void *plane, void *dst, int64_t ki,
                        int64_t kj, int64_t oh_begin, int64_t oh_end)
{
    switch (esz) {
    case 1: im2col_rows_u8(p, (const uint8_t *)plane, (uint8_t *)dst, ki, kj, oh_begin, oh_end); break;
    case 2: im2col_rows_u16(p, (const uint16_t *)plane, (uint16_t *)dst, ki, kj, oh_begin, oh_end); break;
    case 4: im2col_rows_u32(p, (const uint32_t *)plane, (uint32_t *)dst, ki, kj, oh_begin, oh_end); break;
    default: im2col_rows_u64(p, (const uint64_t *)plane, (uint64_t *)dst, ki, kj, oh_begin, oh_end); break;
    }
}

/* Row (ki, kj) of one plane's column block, all OH rows. */
static void im2col_row(const nn_i2c_plan *p, size_t esz, const void *plane, void *row, int64_t ki,
                       int64_t kj)
{
    im2col_rows(p, esz, plane, row, ki, kj, 0, p->OH);
}

/* A streamed launch's bytes staged between two flushes.  The flush (nn_copy_row_nt) stores
 * ordinary below 256 bytes, so it gets several lines. */
enum { I2C_STAGE_FLUSH_BYTES = 2048 };
/* The largest plane with its padding written out that the shifted rows use (below: L2-sized). */
enum { I2C_PADDED_PLANE_MAX_BYTES = 256 * 1024 };

/* Every output row (ki, kj, oh) reads OW image columns kj*dW - pW + ow*sW of one image row, with
 * zeros past its edges.  Written out once per plane with its padding - the rows and columns the
 * windows reach, from (-pH, -pW) on - and, for sW > 1, with its columns split by their phase
 * modulo sW (each padded row holds sW runs: the columns c = ph + j*sW of phase ph), the image
 * makes each output row one fixed-length copy from row oh*sH + ki*dH, phase (kj*dW) % sW, run
 * column (kj*dW) / sW, with no edge tests, no memsets and no gather: a row of k3s1p1 56x56 fp16
 * (112 bytes) otherwise costs a memcpy and two memsets, one of k3s2p1 28x28 a 14-element strided
 * loop.  The gather is then done once per plane instead of once per kernel cell.  The padded
 * plane's shape: */
typedef struct i2c_padded {
    int64_t rows; /* the rows the windows reach */
    int64_t cols; /* columns of one phase's run (the columns the windows reach when sW == 1) */
} i2c_padded;

static i2c_padded padded_shape(const nn_i2c_plan *p)
{
    return (i2c_padded){(p->OH - 1) * p->sH + (p->kH - 1) * p->dH + 1, p->OW + (p->kW - 1) * p->dW / p->sW};
}

/* Elements of one padded row: sW runs of shape.cols. */
static int64_t padded_row_elems(const nn_i2c_plan *p, i2c_padded shape)
{
    return p->sW * shape.cols;
}

/* Whether the shifted rows apply: the padded plane fits I2C_PADDED_PLANE_MAX_BYTES (tested
 * without overflow: a stride may be as large as INT64_MAX). */
static bool shifted_rows_apply(const nn_i2c_plan *p, size_t esz)
{
    const i2c_padded shape = padded_shape(p);
    int64_t row_elems, elems, bytes;
    return !__builtin_mul_overflow(p->sW, shape.cols, &row_elems) &&
           !__builtin_mul_overflow(shape.rows, row_elems, &elems) &&
           !__builtin_mul_overflow(elems, (int64_t)esz, &bytes) && bytes <= I2C_PADDED_PLANE_MAX_BYTES;
}

/* One phase's run of a padded row (sW > 2): run[j] = row[first + j*sW] for j in [lo, hi) (the
 * image columns, nn_i2c_valid_range), 0 elsewhere. */
#define DEFINE_PHASE_RUN(NAME, T)                                                                 \
    static void NAME(const T *restrict row, T *restrict run, int64_t first, int64_t sW, int64_t lo, int64_t hi, \
                     int64_t n)                                                                  \
    {                                                                                            \
        for (int64_t j = 0; j < lo; j++) run[j] = 0;                                             \
        for (int64_t j = lo; j < hi; j++) run[j] = row[first + j * sW];                          \
        for (int64_t j = hi; j < n; j++) run[j] = 0;                                             \
    }

/* Both runs of a padded row when sW == 2, in one pass over the image row: run0[j] =
 * row[first + 2j] for j in [v[0], v[1]), run1[j] = row[first + 1 + 2j] for j in [v[2], v[3]), 0
 * elsewhere.  Where both are inside the image the loop is a pair of neighbouring loads, which
 * the compiler turns into whole-vector loads and shuffles (a phase at a time, it did twice the
 * loads: 0.65 of the k3s2p1 28x28 launch's time was this split). */
#define DEFINE_PAIR_RUNS(NAME, T)                                                                 \
    static void NAME(const T *restrict row, T *restrict run0, T *restrict run1, int64_t first,  \
                     const int64_t v[4], int64_t n)                                              \
    {                                                                                            \
        const int64_t lo = v[0] > v[2] ? v[0] : v[2], hi = v[1] < v[3] ? v[1] : v[3];           \
        for (int64_t j = 0; j < n; j++) {                                                        \
            if (j == lo && lo < hi) j = hi; /* the middle, below */                             \
            if (j >= n) break;                                                                   \
            run0[j] = j >= v[0] && j < v[1] ? row[first + 2 * j] : (T)0;                         \
            run1[j] = j >= v[2] && j < v[3] ? row[first + 1 + 2 * j] : (T)0;                     \
        }                                                                                        \
        for (int64_t j = lo; j < hi; j++) {                                                      \
            run0[j] = row[first + 2 * j];                                                        \
            run1[j] = row[first + 1 + 2 * j];                                                    \
        }                                                                                        \
    }

#define DEFINE_RUNS(SUFFIX, T) DEFINE_PHASE_RUN(phase_run_##SUFFIX, T) DEFINE_PAIR_RUNS(pair_runs_##SUFFIX, T)
DEFINE_RUNS(u8, uint8_t)
DEFINE_RUNS(u16, uint16_t)
DEFINE_RUNS(u32, uint32_t)
DEFINE_RUNS(u64, uint64_t)

/* Every phase's runs of the padded rows [r_lo, r_hi) (image rows r - pH), each padded row
 * row_elems elements apart; shape.cols columns a run. */
static void phase_runs(const nn_i2c_plan *p, size_t esz, i2c_padded shape, const unsigned char *src,
                       unsigned char *padded, int64_t r_lo, int64_t r_hi)
{
    const int64_t n = shape.cols, row_elems = padded_row_elems(p, shape);
    if (p->sW == 2) {
        int64_t v[4]; /* each phase's image columns */
        nn_i2c_valid_range(p->W, n, 2, -p->pW, &v[0], &v[1]);
        nn_i2c_valid_range(p->W, n, 2, 1 - p->pW, &v[2], &v[3]);
        for (int64_t r = r_lo; r < r_hi; r++) {
            const unsigned char *row = src + (size_t)((r - p->pH) * p->W) * esz;
            unsigned char *run0 = padded + (size_t)(r * row_elems) * esz, *run1 = run0 + (size_t)n * esz;
            switch (esz) {
            case 1: pair_runs_u8(row, run0, run1, -p->pW, v, n); break;
            case 2: pair_runs_u16((const uint16_t *)row, (uint16_t *)run0, (uint16_t *)run1, -p->pW, v, n); break;
            case 4: pair_runs_u32((const uint32_t *)row, (uint32_t *)run0, (uint32_t *)run1, -p->pW, v, n); break;
            default: pair_runs_u64((const uint64_t *)row, (uint64_t *)run0, (uint64_t *)run1, -p->pW, v, n); break;
            }
        }
        return;
    }
    for (int64_t ph = 0; ph < p->sW; ph++) {
        const int64_t first = ph - p->pW;
        int64_t lo, hi;
        nn_i2c_valid_range(p->W, n, p->sW, first, &lo, &hi);
        for (int64_t r = r_lo; r < r_hi; r++) {
            const unsigned char *row = src + (size_t)((r - p->pH) * p->W) * esz;
            unsigned char *run = padded + (size_t)(r * row_elems + ph * n) * esz;
            switch (esz) {
            case 1: phase_run_u8(row, run, first, p->sW, lo, hi, n); break;
            case 2: phase_run_u16((const uint16_t *)row, (uint16_t *)run, first, p->sW, lo, hi, n); break;
            case 4: phase_run_u32((const uint32_t *)row, (uint32_t *)run, first, p->sW, lo, hi, n); break;
            default: phase_run_u64((const uint64_t *)row, (uint64_t *)run, first, p->sW, lo, hi, n); break;
            }
        }
    }
}

/* One image row as a padded row of shape.cols columns from column -pW on (sW == 1). */
static void pad_row(const nn_i2c_plan *p, size_t esz, i2c_padded shape, const unsigned char *row,
                    unsigned char *dst)
{
    const int64_t col_lo = p->pW < shape.cols ? p->pW : shape.cols; /* image column 0's place */
    const int64_t width = p->W < shape.cols - col_lo ? p->W : shape.cols - col_lo;
    if (width <= 0) {
        memset(dst, 0, (size_t)shape.cols * esz);
        return;
    }
    memset(dst, 0, (size_t)col_lo * esz);
    memcpy(dst + (size_t)col_lo * esz, row, (size_t)width * esz);
    memset(dst + (size_t)(col_lo + width) * esz, 0, (size_t)(shape.cols - col_lo - width) * esz);
}

/* The plane `src` with its padding (and its columns split by phase when sW > 1), into `padded`
 * (shape.rows rows of padded_row_elems elements). */
static void pad_plane(const nn_i2c_plan *p, size_t esz, i2c_padded shape, const unsigned char *src,
                      unsigned char *padded)
{
    const int64_t row_elems = padded_row_elems(p, shape);
    /* padded rows [r_lo, r_hi) hold image rows; the others are zeros */
    const int64_t r_lo = p->pH < shape.rows ? p->pH : shape.rows;
    const int64_t r_hi = p->pH + p->H < shape.rows ? p->pH + p->H : shape.rows;
    for (int64_t r = 0; r < shape.rows; r++) {
        unsigned char *dst = padded + (size_t)(r * row_elems) * esz;
        const bool image_row = r >= r_lo && r < r_hi;
        if (!image_row)
            memset(dst, 0, (size_t)row_elems * esz);
        else if (p->sW == 1)
            pad_row(p, esz, shape, src + (size_t)((r - p->pH) * p->W) * esz, dst);
    }
    if (p->sW > 1) phase_runs(p, esz, shape, src, padded, r_lo, r_hi);
}

/* One plane's kH*kW*L block from its padded plane, row by row in output order: into
 * out + at, or through `stage` (whose dst is out), flushed every I2C_STAGE_FLUSH_BYTES.  Returns
 * the output offset after the block. */
static inline __attribute__((always_inline)) int64_t shifted_rows_in(const nn_i2c_plan *p, size_t esz, i2c_padded shape,
                                                                      const unsigned char *padded, unsigned char *out,
                                                                      int64_t at, nn_line_stage *stage, bool wide)
{
    const size_t row_bytes = (size_t)p->OW * esz;
    for (int64_t ki = 0; ki < p->kH; ki++) {
        for (int64_t kj = 0; kj < p->kW; kj++) {
            /* padded column kj*dW + ow*sW: phase (kj*dW) % sW, run column (kj*dW) / sW + ow */
            const int64_t row_elems = padded_row_elems(p, shape), col = kj * p->dW;
            const unsigned char *src =
                padded + (size_t)(ki * p->dH * row_elems + col % p->sW * shape.cols + col / p->sW) * esz;
            const size_t step = (size_t)(p->sH * row_elems) * esz;
            for (int64_t oh = 0; oh < p->OH; oh++, src += step, at += (int64_t)row_bytes) {
                unsigned char *dst = stage != NULL ? nn_line_stage_at(stage, at) : out + at;
                nn_copy_row_short(dst, src, row_bytes, wide);
                if (stage != NULL && at + (int64_t)row_bytes - stage->written >= I2C_STAGE_FLUSH_BYTES)
                    nn_line_stage_flush(stage, at + (int64_t)row_bytes, false);
            }
        }
    }
    return at;
}

static int64_t shifted_rows(const nn_i2c_plan *p, size_t esz, i2c_padded shape, const unsigned char *padded,
                            unsigned char *out, int64_t at, nn_line_stage *stage)
{
    return shifted_rows_in(p, esz, shape, padded, out, at, stage, false);
}

#if NN_HAVE_X86_SIMD
/* The same rows in 32-byte moves, on CPUs with AVX2 (nn_cpu_avx2()).  On an AMD EPYC Zen 5 under
 * ACLNN_NO_AVX512=1, N8 C64 56x56 k3s1p1 at 1 thread, alternated in one process: 0.80 (fp16,
 * bf16) and 0.84 (fp32) of the 16-byte moves' time; in bench/run.py 55-59 % -> 66-84 % of the
 * STREAM copy. */
NN_AVX2 static int64_t shifted_rows_avx2(const nn_i2c_plan *p, size_t esz, i2c_padded shape,
                                         const unsigned char *padded, unsigned char *out, int64_t at,
                                         nn_line_stage *stage)
{
    return shifted_rows_in(p, esz, shape, padded, out, at, stage, true);
}
#endif

/* Planes [begin, end) without a cast, when the shifted rows apply or the output is streamed.
 * Streamed, the rows are built in an L1 line stage and leave it in whole aligned lines with
 * non-temporal stores: rows built straight into out would end in a partial line at every row
 * boundary (112 bytes a row for k3s1p1 56x56 fp16), a read for ownership of a line the next row
 * overwrites.  False when a buffer could not be allocated. */
static bool uncast_planes(const nn_im2col_ctx *ctx, int64_t begin, int64_t end)
{
    const nn_i2c_plan *p = ctx->plan;
    const size_t esz = nn_dtype_size(p->in_dtype);
    const int64_t row_bytes = p->OW * (int64_t)esz, in_plane = p->H * p->W * (int64_t)esz;
    const int64_t block = p->kH * p->kW * p->OH * row_bytes;
    const bool shifted = shifted_rows_apply(p, esz), stream = ctx->stream_out;
    const i2c_padded shape = padded_shape(p);
    const size_t padded_bytes = shifted ? (size_t)(shape.rows * padded_row_elems(p, shape)) * esz : 0;
    /* the stage: a flush's worth, a row, the < 64 bytes carried over and a line of slack */
    const size_t stage_bytes = stream ? (size_t)(I2C_STAGE_FLUSH_BYTES + row_bytes + 2 * 64) : 0;
    unsigned char *region = malloc(padded_bytes + stage_bytes + NN_LINE_STAGE_SLACK);
    if (region == NULL) return false;
    unsigned char *out = ctx->out + begin * block;
    nn_line_stage stage = {nn_line_stage_place(region + padded_bytes, stage_bytes), out, 0, true};
    int64_t at = 0;
    /* one plane's block from its padded plane: 32-byte moves where the CPU has AVX2 */
    int64_t (*copy_block)(const nn_i2c_plan *, size_t, i2c_padded, const unsigned char *, unsigned char *, int64_t,
                          nn_line_stage *) = shifted_rows;
#if NN_HAVE_X86_SIMD
    if (nn_cpu_avx2()) copy_block = shifted_rows_avx2;
#endif
    for (int64_t plane = begin; plane < end; plane++) {
        const unsigned char *src = ctx->in + plane * in_plane;
        if (shifted) {
            pad_plane(p, esz, shape, src, region);
            at = copy_block(p, esz, shape, region, out, at, stream ? &stage : NULL);
            continue;
        }
        /* streamed (the shifted rows do not apply): each gather takes the rows that fill the
         * stage up to its flush (staged: less than a flush's worth and a row) */
        for (int64_t ki = 0; ki < p->kH; ki++) {
            for (int64_t kj = 0; kj < p->kW; kj++) {
                for (int64_t oh = 0, rows; oh < p->OH; oh += rows) {
                    const int64_t room = I2C_STAGE_FLUSH_BYTES - (at - stage.written);
                    rows = room > row_bytes ? (room + row_bytes - 1) / row_bytes : 1;
                    if (rows > p->OH - oh) rows = p->OH - oh;
                    im2col_rows(p, esz, src, nn_line_stage_at(&stage, at), ki, kj, oh, oh + rows);
                    at += rows * row_bytes;
                    if (at - stage.written >= I2C_STAGE_FLUSH_BYTES) nn_line_stage_flush(&stage, at, false);
                }
            }
        }
    }
    if (stream) {
        nn_line_stage_flush(&stage, at, true);
        nn_streaming_fence();
    }
    free(region);
    return true;
}

/* Claimed chunks instead of fixed ranges: a pool worker that wakes late, or shares its core
 * on a busy host, does not leave the call waiting for its fixed half. */
void nn_im2col_planes_claimed(void *vctx, int64_t begin, int64_t end)
{
    nn_im2col_ctx *ctx = (nn_im2col_ctx *)vctx;
    (void)begin, (void)end;
    int64_t first, last;
    while (nn_claim_next(&ctx->claims, &first, &last)) ctx->planes(vctx, first, last);
}

void nn_im2col_planes_portable(void *vctx, int64_t begin, int64_t end)
{
    nn_im2col_ctx *ctx = (nn_im2col_ctx *)vctx;
    const nn_i2c_plan *p = ctx->plan;
    const size_t in_esz = nn_dtype_size(p->in_dtype);
    const size_t out_esz = nn_dtype_size(p->out_dtype);
    const int64_t L = p->OH * p->OW;
    const int64_t rows = p->kH * p->kW;
    const bool cast = p->in_dtype != p->out_dtype;
    unsigned char *gathered = NULL;
    float *widened = NULL;

    if (!cast && (ctx->stream_out || shifted_rows_apply(p, in_esz))) {
        if (!uncast_planes(ctx, begin, end)) __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    if (cast) {
        /* One row in the input type, then the same row widened to fp32. */
        gathered = malloc((size_t)L * in_esz);
        widened = malloc((size_t)L * sizeof(float));
        if (gathered == NULL || widened == NULL) {
            __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
            free(gathered);
            free(widened);
            return;
        }
    }
    for (int64_t plane = begin; plane < end; plane++) {
        const unsigned char *src = ctx->in + (size_t)(plane * p->H * p->W) * in_esz;
        unsigned char *dst_block = ctx->out + (size_t)(plane * rows * L) * out_esz;
        for (int64_t ki = 0; ki < p->kH; ki++) {
            for (int64_t kj = 0; kj < p->kW; kj++) {
                unsigned char *dst = dst_block + (size_t)((ki * p->kW + kj) * L) * out_esz;
                if (!cast) {
                    im2col_row(p, in_esz, src, dst, ki, kj);
                    continue;
                }
                im2col_row(p, in_esz, src, gathered, ki, kj);
                nn_to_f32_n(p->in_dtype, gathered, widened, (size_t)L);
                nn_from_f32_n(p->out_dtype, widened, dst, (size_t)L);
            }
        }
    }
    free(gathered);
    free(widened);
}
