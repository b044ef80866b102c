/*
 * im2col_avx512.c - the im2col gather for AVX-512 CPUs (im2col.h), compiled with the AVX-512
 * flags (Makefile); called only when nn_cpu_avx512(), for the same dtype in and out and sW <= 8.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/nn_simd.h"
#include "kernels/im2col/im2col.h"

#if NN_HAVE_X86_SIMD
/* ---- AVX-512 rows (same dtype in and out) ---------------------------------------------------
 *
 * An output row (fixed ki, kj, oh) is OW values of input row ih taken every sW columns from
 * column kj*dW - pW on.  It is made in chunks of `lanes` window positions: the chunk's source
 * columns span at most two vectors (V = 16 four-byte or 32 two-byte elements) from its first
 * column s0, so two masked loads from s0 (one when sW = 1) and one two-source permute (lane
 * l <- element l*sW) build it.  The loads' masks cover only the columns inside [0, W): a padding column reads as
 * 0, which is im2col's padding value, with no per-lane test.  Rows in the vertical padding are
 * stored as zeros.  A pure copy of the bits, like the portable loop. */
enum { I2C_MAX_STRIDE = 8 }; /* wider strides keep too few lanes per chunk; portable loop */

/* One step of the short rows (one or, with `pairs`, two output rows of kernel row ki, for every
 * kernel column): the byte offsets of its two loads from the plane's start, their masks (0 for
 * a row in the vertical padding, so the load reads zeros and its offset is 0), the store mask and
 * the byte offset of kernel column 0's row in the plane's block.  Precomputed so the step loop
 * does no index arithmetic: with it done inline, register pressure left the loop at ~2.5x the
 * time of a straight-line copy (in L1). */
typedef struct i2c_step {
    int64_t load_a, load_b, out;
    uint32_t mask_a, mask_b, store;
} i2c_step;

/* One 64-byte line of a plane's block on the shifted-copy path (build_lines): at most two output
 * rows meet in a line, each a run of one input row, so two masked loads (byte offsets from the
 * plane's start, masks 0 for a row in the vertical padding or no second row) fill it. */
typedef struct i2c_line {
    int32_t load_a, load_b;
    uint32_t mask_a, mask_b;
} i2c_line;

typedef struct i2c_chunk {
    int64_t src;              /* s0: the chunk's first source column (negative in the padding) */
    uint32_t load_lo, load_hi; /* element masks of the loads at s0 and s0 + V */
} i2c_chunk;

struct nn_im2col_avx512_plan {
    int64_t lanes, chunks;    /* window positions per chunk, chunks per output row */
    bool two_loads;           /* a chunk's columns reach past the first vector (sW > 1) */
    uint32_t last_store;      /* store mask of a row's last chunk */
    uint16_t pick[32];        /* the permute's source element of lane l: l*sW (0 past `lanes`) */
    bool short_rows;          /* one chunk a row, and the loads at kernel column 0's s0 reach every
                               * kernel column's source columns: short_rows() */
    bool pairs;               /* short 2-byte rows, two rows in one vector: two rows a step */
    bool short_two_loads;     /* short rows: the kernel columns' span reaches past the first vector */
    unsigned char *short_pick; /* [kW] 64-byte permute indices (16 dwords, or 32 words for 2-byte
                               * elements): lane l's element, from kernel column 0's s0, of kernel
                               * column kj: l*sW + kj*dW; pairs: the first row's lanes l < OW, the
                               * second row's (from the second load, + 32) lanes OW..2*OW-1 */
    i2c_chunk *table;         /* [kW][chunks]: the chunks of each kernel column */
    i2c_step *steps;          /* short rows: [kH * steps_per_ki], kernel row by kernel row (build_steps) */
    int64_t steps_per_ki, kH;
    i2c_line *lines;          /* shifted copies: the plane block's 64-byte lines (build_lines), or NULL */
    int64_t line_count;       /* lines a block, the last one partial when block_bytes % 64 != 0 */
    int64_t block_bytes;
};

typedef struct nn_im2col_avx512_plan i2c_fast;

/* The short rows' steps (i2c_step), walked ki, oh (two rows at a time with `pairs`): in the
 * block's order of kernel rows, so each kernel column's rows are stored in increasing order. */
static bool build_steps(const nn_i2c_plan *p, i2c_fast *f)
{
    const int64_t esz = (int64_t)nn_dtype_size(p->in_dtype), V = 64 / esz, step = f->pairs ? 2 : 1;
    const i2c_chunk *first = &f->table[0]; /* kernel column 0's loads, which cover every column */
    const uint32_t one_store = nn_lane_range(0, p->OW, 32);
    f->steps_per_ki = nn_ceil_div(p->OH, step);
    f->kH = p->kH;
    f->steps = malloc((size_t)(p->kH * f->steps_per_ki) * sizeof *f->steps);
    if (f->steps == NULL) return false;
    i2c_step *st = f->steps;
    for (int64_t ki = 0; ki < p->kH; ki++) {
        for (int64_t oh = 0; oh < p->OH; oh += step, st++) {
            const int64_t ih_a = oh * p->sH - p->pH + ki * p->dH, ih_b = ih_a + p->sH;
            const bool in_a = ih_a >= 0 && ih_a < p->H;
            const bool in_b = f->pairs && oh + 1 < p->OH && ih_b >= 0 && ih_b < p->H;
            st->load_a = in_a ? (ih_a * p->W + first->src) * esz : 0;
            st->mask_a = in_a ? first->load_lo : 0;
            if (f->pairs) { /* the second row's load, at the same columns */
                st->load_b = in_b ? (ih_b * p->W + first->src) * esz : 0;
                st->mask_b = in_b ? first->load_lo : 0;
            } else { /* the first row's second vector, or nothing */
                st->load_b = in_a && f->short_two_loads ? st->load_a + V * esz : 0;
                st->mask_b = in_a && f->short_two_loads ? first->load_hi : 0;
            }
            st->store = f->pairs && oh + 1 < p->OH ? nn_lane_range(0, 2 * p->OW, 32) : one_store;
            st->out = (ki * p->kW * p->OH + oh) * p->OW * esz;
        }
    }
    return true;
}

/* Shifted copies: with sW = 1 every output row is a run of consecutive columns of one input row
 * (columns past the edges, and rows in the vertical padding, are zeros), so a plane's block,
 * cut into whole 64-byte lines, is a shifted copy of the plane: each line is one or two masked
 * loads (two when it holds the end of one output row and the start of the next) and one full
 * store, the same instructions per byte for 2- and 4-byte elements.  The row-chunk path stored a
 * 112-byte fp16 row (k3s1p1 56x56) as two chunks through the line stage, and reached 0.52-0.67
 * of the STREAM copy on a host whose memory gave 30-35 GB/s to one thread, against 0.65-0.94 for
 * fp32.  The lines are counted from the block's start; a block of whole lines whose first
 * starts on a line of out is stored straight (non-temporal when streamed), any other goes
 * through a line stage, so the output still leaves in whole aligned lines.  Taken when a line
 * meets at most two output rows (OW >= V), the table stays cache-sized, and the launch has
 * planes enough to pay for the table: it is built at each launch, ~3.5 ns a line against the
 * ~0.65 ns a line and plane the copies save over the row chunks (fp32 in cache). */
enum { I2C_LINES_MAX_BYTES = 256 << 10, I2C_LINES_MIN_PLANES = 16 };

static void build_lines(const nn_i2c_plan *p, i2c_fast *f)
{
    const int64_t esz = (int64_t)nn_dtype_size(p->in_dtype), V = 64 / esz;
    const int64_t block = p->kH * p->kW * p->OH * p->OW * esz, count = nn_ceil_div(block, 64);
    if (p->sW != 1 || p->OW < V || p->planes < I2C_LINES_MIN_PLANES || p->H * p->W * esz >= INT32_MAX / 2 ||
        count * (int64_t)sizeof(i2c_line) > I2C_LINES_MAX_BYTES)
        return;
    i2c_line *lines = calloc((size_t)count, sizeof *lines);
    if (lines == NULL) return; /* the row chunks instead */
    /* A walk over the block's runs (a run: the lanes of one output row in one line), counting
     * the row's (ki, kj, oh, ow) and the line's lane, with no division: built at every launch,
     * the divisions cost 10-16 us for k3s1p1 56x56, as much as 8 planes' copies in cache. */
    int64_t ki = 0, kj = 0, oh = 0, ow = 0, lane = 0;
    for (i2c_line *line = lines; ki < p->kH;) { /* the last line may end before its last lane */
        const int64_t ih = oh * p->sH - p->pH + ki * p->dH, iw = ow - p->pW + kj * p->dW; /* at `lane` */
        const int64_t run = p->OW - ow < V - lane ? p->OW - ow : V - lane; /* lanes of this row */
        uint32_t mask = 0;
        int64_t load = 0;
        if (ih >= 0 && ih < p->H) {
            const int64_t lo = iw < 0 ? lane - iw : lane, hi = p->W - iw < run ? lane + p->W - iw : lane + run;
            mask = nn_lane_range(lo, hi, V);
            load = mask != 0 ? (ih * p->W + iw - lane) * esz : 0; /* lane 0's element, which may lie outside */
        }
        if (lane == 0) { /* OW >= V: a line's second run, if any, starts the next row */
            line->load_a = (int32_t)load;
            line->mask_a = mask;
        } else {
            line->load_b = (int32_t)load;
            line->mask_b = mask;
        }
        lane += run;
        ow += run;
        if (lane == V) {
            lane = 0;
            line++;
        }
        if (ow == p->OW) {
            ow = 0;
            if (++oh == p->OH) {
                oh = 0;
                if (++kj == p->kW) {
                    kj = 0;
                    ki++;
                }
            }
        }
    }
    f->lines = lines;
    f->line_count = count;
    f->block_bytes = block;
}

nn_im2col_avx512_plan *nn_im2col_avx512_plan_create(const nn_i2c_plan *p)
{
    const size_t esz = nn_dtype_size(p->in_dtype);
    if (p->in_dtype != p->out_dtype || p->sW > I2C_MAX_STRIDE || (esz != 2 && esz != 4)) return NULL;
    i2c_fast *f = calloc(1, sizeof *f);
    if (f == NULL) return NULL;
    const int64_t V = 64 / (int64_t)nn_dtype_size(p->in_dtype);
    f->lanes = (2 * V - 1) / p->sW + 1 < V ? (2 * V - 1) / p->sW + 1 : V;
    f->chunks = nn_ceil_div(p->OW, f->lanes);
    f->two_loads = (f->lanes - 1) * p->sW >= V;
    for (int64_t l = 0; l < 32; l++) f->pick[l] = (uint16_t)(l < f->lanes ? l * p->sW : 0);
    f->last_store = nn_lane_range(0, p->OW - (f->chunks - 1) * f->lanes, 32);
    /* Short rows (k3s2p1 on 28x28: OW = 14) cost per row, not per byte (short_rows()). `span`:
     * the source columns of every kernel column, counted from kernel column 0's first. */
    const int64_t span = (p->kW - 1) * p->dW + (p->OW - 1) * p->sW + 1;
    f->short_rows = f->chunks == 1 && span <= 2 * V;
    f->pairs = f->short_rows && esz == 2 && 2 * p->OW <= 32 && span <= 32;
    f->short_two_loads = span > V;
    f->table = malloc((size_t)(p->kW * f->chunks) * sizeof *f->table);
    f->short_pick = f->short_rows ? malloc((size_t)p->kW * 64) : NULL;
    if (f->table == NULL || (f->short_rows && f->short_pick == NULL)) {
        free(f->table);
        free(f->short_pick);
        free(f);
        return NULL;
    }
    for (int64_t kj = 0; f->short_rows && kj < p->kW; kj++) {
        for (int64_t l = 0; l < V; l++) {
            const int64_t at = kj * p->dW + (f->pairs && l >= p->OW ? 32 + (l - p->OW) * p->sW : l * p->sW);
            const int64_t pick = l < (f->pairs ? 2 : 1) * p->OW ? at : 0;
            if (esz == 4)
                ((uint32_t *)(void *)f->short_pick)[kj * 16 + l] = (uint32_t)pick;
            else
                ((uint16_t *)(void *)f->short_pick)[kj * 32 + l] = (uint16_t)pick;
        }
    }
    for (int64_t kj = 0; kj < p->kW; kj++) {
        for (int64_t c = 0; c < f->chunks; c++) {
            i2c_chunk *ch = &f->table[kj * f->chunks + c];
            ch->src = c * f->lanes * p->sW + kj * p->dW - p->pW;
            ch->load_lo = nn_lane_range(-ch->src, p->W - ch->src, V);
            ch->load_hi = nn_lane_range(-ch->src - V, p->W - ch->src - V, V);
        }
    }
    if (f->short_rows && !build_steps(p, f)) {
        nn_im2col_avx512_plan_destroy(f);
        return NULL;
    }
    if (!f->short_rows) build_lines(p, f);
    return f;
}

void nn_im2col_avx512_plan_destroy(nn_im2col_avx512_plan *f)
{
    if (f == NULL) return;
    free(f->table);
    free(f->short_pick);
    free(f->steps);
    free(f->lines);
    free(f);
}

bool nn_im2col_avx512_shifted(const nn_im2col_avx512_plan *f)
{
    return f != NULL && f->lines != NULL;
}

/* Element `at` (may be before the row) of a row of esz-byte elements, for a masked load. */
static inline const void *element_at(const void *row, int64_t at, int64_t esz)
{
    return (const void *)((uintptr_t)row + (uintptr_t)(at * esz));
}

/* A plane's block is written in whole 64-byte lines, non-temporal, through a line stage
 * (base/nn_simd.h) when the output is large: flushed once this many bytes are complete. */
enum { I2C_FLUSH_BYTES = 256 };

/* Short rows: one chunk a row (OW <= lanes; k3s2p1 on 28x28 has OW = 14) whose every kernel
 * column's source columns lie within the loads made at kernel column 0's first one.  Such rows
 * cost per row, not per byte, so a window row is loaded once for all kW kernel columns (one or
 * two masked loads; the masks keep only columns inside [0, W), so padding reads as 0) and each
 * kernel column's row is one permute of them (short_pick) and one store.  2-byte rows with
 * `pairs` are made two at a time: rows oh and oh + 1 of a kernel cell are neighbours in out, so
 * one permute of their two window rows' loads fills both.  The loads of up to I2C_HELD_STEPS
 * steps (build_steps) are held in registers while every kernel column stores its rows of them,
 * so the stores run through each cell in order (one row per kernel column in turn, three
 * streams 392 bytes apart for k3s2p1 28x28 fp16, was bound by the stores once the block left
 * L1: 170-200 ns a plane in L2).  `kw3`: kW = 3, the permute indices held in registers.
 * Inlined once per element size and kW case. */
enum { I2C_HELD_STEPS = 8 };

NN_AVX512 static inline __attribute__((always_inline)) void
short_rows(const i2c_fast *f, int64_t kW, int64_t cell, const void *plane, unsigned char *out, bool wide, bool kw3)
{
    const unsigned char *short_pick = f->short_pick;
    const __m512i pick0 = _mm512_loadu_si512(short_pick), pick1 = _mm512_loadu_si512(short_pick + (kw3 ? 64 : 0));
    const __m512i pick2 = _mm512_loadu_si512(short_pick + (kw3 ? 128 : 0));
    const int64_t per_ki = f->steps_per_ki;
    for (int64_t ki = 0; ki < f->kH; ki++) {
        for (int64_t first = 0; first < per_ki; first += I2C_HELD_STEPS) {
            const i2c_step *st = f->steps + ki * per_ki + first;
            const int64_t n = per_ki - first < I2C_HELD_STEPS ? per_ki - first : I2C_HELD_STEPS;
            __m512i x[I2C_HELD_STEPS], y[I2C_HELD_STEPS]; /* each step's two permute sources */
            int64_t at[I2C_HELD_STEPS];
            uint32_t store[I2C_HELD_STEPS];
#pragma GCC unroll 8
            for (int64_t i = 0; i < I2C_HELD_STEPS; i++) {
                x[i] = y[i] = _mm512_setzero_si512();
                at[i] = 0;
                store[i] = 0;
                if (i >= n) continue;
                if (wide) {
                    x[i] = _mm512_maskz_loadu_epi32((__mmask16)st[i].mask_a, element_at(plane, st[i].load_a, 1));
                    y[i] = _mm512_maskz_loadu_epi32((__mmask16)st[i].mask_b, element_at(plane, st[i].load_b, 1));
                } else {
                    x[i] = _mm512_maskz_loadu_epi16(st[i].mask_a, element_at(plane, st[i].load_a, 1));
                    y[i] = _mm512_maskz_loadu_epi16(st[i].mask_b, element_at(plane, st[i].load_b, 1));
                }
                at[i] = st[i].out;
                store[i] = st[i].store;
            }
            for (int64_t kj = 0; kj < (kw3 ? 3 : kW); kj++) {
                const __m512i pick =
                    kw3 ? (kj == 0 ? pick0 : kj == 1 ? pick1 : pick2) : _mm512_loadu_si512(short_pick + kj * 64);
                unsigned char *cell_out = out + kj * cell;
#pragma GCC unroll 8
                for (int64_t i = 0; i < I2C_HELD_STEPS; i++) {
                    if (i >= n) break;
                    if (wide)
                        _mm512_mask_storeu_epi32(cell_out + at[i], (__mmask16)store[i],
                                                 _mm512_permutex2var_epi32(x[i], pick, y[i]));
                    else
                        _mm512_mask_storeu_epi16(cell_out + at[i], store[i], _mm512_permutex2var_epi16(x[i], pick, y[i]));
                }
            }
        }
    }
}

/* Plane `plane`'s kH*kW*L block of out, which starts `at` bytes into the output range being
 * written: stored at out + at directly, or through `stage` (whose dst is out).  `wide`: four-byte
 * elements.  Inlined once per size. */
NN_AVX512 static inline __attribute__((always_inline)) void
fast_plane(const nn_i2c_plan *p, const i2c_fast *f, const void *plane, unsigned char *out, int64_t at,
           nn_line_stage *stage, bool wide)
{
    const int64_t esz = wide ? 4 : 2, V = 64 / esz, row_bytes = p->OW * esz;
    const __m512i pick16 = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)f->pick));
    const __m512i pick32 = _mm512_loadu_si512(f->pick);
    const uint32_t full_store = nn_lane_range(0, f->lanes, 32);
    const bool two_loads = f->two_loads;
    if (f->short_rows) {
        /* streamed: the whole block in the stage, flushed up to its last whole line */
        unsigned char *block = stage != NULL ? nn_line_stage_at(stage, at) : out + at;
        const int64_t cell = p->OH * p->OW * (wide ? 4 : 2);
        if (p->kW == 3)
            short_rows(f, 3, cell, plane, block, wide, true);
        else
            short_rows(f, p->kW, cell, plane, block, wide, false);
        if (stage != NULL) nn512_line_stage_flush(stage, at + p->kH * p->kW * p->OH * p->OW * (wide ? 4 : 2), false);
        return;
    }
    for (int64_t ki = 0; ki < p->kH; ki++) {
        for (int64_t kj = 0; kj < p->kW; kj++) {
            const i2c_chunk *chunks = f->table + kj * f->chunks;
            for (int64_t oh = 0; oh < p->OH; oh++, at += row_bytes) {
                const int64_t ih = oh * p->sH - p->pH + ki * p->dH;
                const bool inside = ih >= 0 && ih < p->H;
                const unsigned char *row = (const unsigned char *)plane + (inside ? ih : 0) * p->W * esz;
                unsigned char *dst = stage != NULL ? nn_line_stage_at(stage, at) : out + at;
                for (int64_t c = 0; c < f->chunks; c++) {
                    const i2c_chunk *ch = &chunks[c];
                    const uint32_t store = c + 1 < f->chunks ? full_store : f->last_store;
                    void *chunk_out = dst + c * f->lanes * esz;
                    __m512i v = _mm512_setzero_si512();
                    if (wide && inside) {
                        const __m512i lo = _mm512_maskz_loadu_epi32((__mmask16)ch->load_lo, element_at(row, ch->src, 4));
                        const __m512i hi =
                            two_loads ? _mm512_maskz_loadu_epi32((__mmask16)ch->load_hi, element_at(row, ch->src + V, 4))
                                      : lo;
                        v = _mm512_permutex2var_epi32(lo, pick16, hi);
                    } else if (inside) {
                        const __m512i lo = _mm512_maskz_loadu_epi16(ch->load_lo, element_at(row, ch->src, 2));
                        const __m512i hi =
                            two_loads ? _mm512_maskz_loadu_epi16(ch->load_hi, element_at(row, ch->src + V, 2)) : lo;
                        v = _mm512_permutex2var_epi16(lo, pick32, hi);
                    }
                    if (wide)
                        _mm512_mask_storeu_epi32(chunk_out, (__mmask16)store, v);
                    else
                        _mm512_mask_storeu_epi16(chunk_out, store, v);
                }
                if (stage != NULL && at + row_bytes - stage->written >= I2C_FLUSH_BYTES)
                    nn512_line_stage_flush(stage, at + row_bytes, false);
            }
        }
    }
}

/* One line of the shifted copies: its one or two masked loads from the plane. */
NN_AVX512 static inline __attribute__((always_inline)) __m512i shifted_line(const unsigned char *in, const i2c_line *line,
                                                                            bool wide)
{
    if (wide) {
        const __m512i v = _mm512_maskz_loadu_epi32((__mmask16)line->mask_a, element_at(in, line->load_a, 1));
        return _mm512_mask_loadu_epi32(v, (__mmask16)line->mask_b, element_at(in, line->load_b, 1));
    }
    const __m512i v = _mm512_maskz_loadu_epi16(line->mask_a, element_at(in, line->load_a, 1));
    return _mm512_mask_loadu_epi16(v, line->mask_b, element_at(in, line->load_b, 1));
}

/* Shifted copies (build_lines): planes [begin, end), each block's lines in order.  Blocks of
 * whole lines starting on a line of out are stored straight, with non-temporal stores when
 * `stream`; others go through `stage` (whose dst is the range's start), flushed every
 * I2C_FLUSH_BYTES, the block's last partial line stored masked.  Inlined once per element size. */
NN_AVX512 static inline __attribute__((always_inline)) void
shifted_planes(const nn_im2col_ctx *ctx, int64_t begin, int64_t end, nn_line_stage *stage, bool wide)
{
    const nn_i2c_plan *p = ctx->plan;
    const i2c_fast *f = ctx->avx512;
    const int64_t in_plane = p->H * p->W * (wide ? 4 : 2), count = f->line_count, block = f->block_bytes;
    const __mmask64 tail = (__mmask64)(~0ull >> (64 - (block - (count - 1) * 64)));
    unsigned char *out = ctx->out + begin * block;
    for (int64_t plane = begin, at = 0; plane < end; plane++, at += block) {
        const unsigned char *in = ctx->in + plane * in_plane;
        const i2c_line *line = f->lines;
        if (stage == NULL) { /* streamed only with whole lines, so the masked tail is not */
            for (int64_t n = 0; n + 1 < count; n++, line++) {
                if (ctx->stream_out)
                    _mm512_stream_si512((void *)(out + at + n * 64), shifted_line(in, line, wide));
                else
                    _mm512_storeu_si512(out + at + n * 64, shifted_line(in, line, wide));
            }
            if (ctx->stream_out)
                _mm512_stream_si512((void *)(out + at + (count - 1) * 64), shifted_line(in, line, wide));
            else
                _mm512_mask_storeu_epi8(out + at + (count - 1) * 64, tail, shifted_line(in, line, wide));
            continue;
        }
        for (int64_t n = 0; n < count; n++, line++) {
            unsigned char *dst = nn_line_stage_at(stage, at + n * 64);
            if (n + 1 < count)
                _mm512_storeu_si512(dst, shifted_line(in, line, wide));
            else
                _mm512_mask_storeu_epi8(dst, tail, shifted_line(in, line, wide));
            const int64_t done = n + 1 < count ? at + (n + 1) * 64 : at + block;
            if (done - stage->written >= I2C_FLUSH_BYTES) nn512_line_stage_flush(stage, done, false);
        }
    }
}

/* Planes [begin, end) (a contiguous stretch of out); streamed through a per-call stage when
 * `stream`.  False when the stage could not be allocated.  Inlined once per element size. */
NN_AVX512 static inline __attribute__((always_inline)) bool
fast_planes(const nn_im2col_ctx *ctx, int64_t begin, int64_t end, bool stream, bool wide)
{
    const nn_i2c_plan *p = ctx->plan;
    const int64_t esz = wide ? 4 : 2, in_plane = p->H * p->W * esz;
    const int64_t block = p->kH * p->kW * p->OH * p->OW * esz;
    unsigned char *out = ctx->out + begin * block;
    /* the shifted copies store whole blocks straight when the blocks are whole lines and start
     * on lines of out, or out is not streamed; else through the stage */
    const bool shifted = ctx->avx512->lines != NULL;
    const bool straight = shifted && (!stream || (block % 64 == 0 && ((uintptr_t)out & 63) == 0));
    if (straight) {
        shifted_planes(ctx, begin, end, NULL, wide);
        if (stream) nn_streaming_fence();
        return true;
    }
    nn_line_stage stage = {NULL, out, 0, true};
    unsigned char *stage_region = NULL;
    if (stream) {
        /* a flush's worth and a row (short rows: a plane's block), the carried-over line and a
         * line of slack, kept in one page when they fit */
        const size_t stage_bytes =
            (size_t)((ctx->avx512->short_rows ? block : I2C_FLUSH_BYTES + (shifted ? 64 : p->OW * esz)) + 2 * 64);
        stage_region = malloc(stage_bytes + NN_LINE_STAGE_SLACK);
        if (stage_region == NULL) return false;
        stage.buf = nn_line_stage_place(stage_region, stage_bytes);
    }
    if (shifted)
        shifted_planes(ctx, begin, end, &stage, wide);
    else
        for (int64_t plane = begin; plane < end; plane++)
            fast_plane(p, ctx->avx512, ctx->in + plane * in_plane, out, (plane - begin) * block,
                       stream ? &stage : NULL, wide);
    if (stream) {
        nn512_line_stage_flush(&stage, (end - begin) * block, true);
        nn_streaming_fence();
        free(stage_region);
    }
    return true;
}

NN_AVX512 static bool fast_planes_u32(const nn_im2col_ctx *ctx, int64_t begin, int64_t end, bool stream)
{
    return fast_planes(ctx, begin, end, stream, true);
}

NN_AVX512 static bool fast_planes_u16(const nn_im2col_ctx *ctx, int64_t begin, int64_t end, bool stream)
{
    return fast_planes(ctx, begin, end, stream, false);
}

void nn_im2col_planes_avx512(void *vctx, int64_t begin, int64_t end)
{
    nn_im2col_ctx *ctx = (nn_im2col_ctx *)vctx;
    const bool ok = nn_dtype_size(ctx->plan->in_dtype) == 4 ? fast_planes_u32(ctx, begin, end, ctx->stream_out)
                                                            : fast_planes_u16(ctx, begin, end, ctx->stream_out);
    if (!ok) __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
}
#else
nn_im2col_avx512_plan *nn_im2col_avx512_plan_create(const nn_i2c_plan *p)
{
    (void)p;
    return NULL;
}
void nn_im2col_avx512_plan_destroy(nn_im2col_avx512_plan *f) { (void)f; }
bool nn_im2col_avx512_shifted(const nn_im2col_avx512_plan *f)
{
    (void)f;
    return false;
}
void nn_im2col_planes_avx512(void *vctx, int64_t begin, int64_t end) { nn_im2col_planes_portable(vctx, begin, end); }
#endif
