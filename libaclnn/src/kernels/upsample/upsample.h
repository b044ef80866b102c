/*
 * upsample.h - the UpsampleNearestExact1d kernels (forward and backward), one file per
 * instruction set, and the nearest-exact index map they share:
 *
 *   upsample_fwd_portable.c  any CPU: rows gathered from the map (upsample_fwd_rows.inc)
 *   upsample_fwd_avx2.c      the same loops built with the AVX2 flags
 *   upsample_fwd_avx512.c    AVX-512: 4-byte runs of count 1-4 as lane permutations
 *   upsample_fwd_window_avx512.c  AVX-512: any map whose chunks of a vector of outputs read
 *                            within a vector of inputs, one permutation per chunk (short rows)
 *   upsample_bw_portable.c   any CPU: each gradInput row summed from the map (upsample_bw_rows.inc)
 *   upsample_bw_avx2.c       the same loops built with the AVX2 flags
 *   upsample_bw_avx512.c     AVX-512: fp32 runs of count 1-3 summed 16 inputs per vector, 8 rows
 *                            in lockstep
 *   upsample_bw_window_avx512.c  AVX-512: fp32 maps of short runs kept in cache, up to 16 inputs
 *                            a vector from a window of 32 gradients
 *
 * The forward is a gather (bit copies); the backward adds every gradient into +0.0 in increasing
 * output order on every path, so all give the same bits.  The operators
 * (ops/upsample_nearest_exact1d*.c) choose the build from the CPU table and name it in the
 * launch trace; an _avx2 / _avx512 function runs only when nn_cpu_features says so.
 *
 * The nearest-exact index map: PyTorch/CANN compute the source index of output position d as
 * min(floor(fl32((d + 0.5) * scale)), L - 1) with a float32 scale.  That map is monotone, so
 * every input index i owns a contiguous range of outputs [lo(i), lo(i) + count(i)).  We turn it
 * into "runs": maximal stretches of inputs with the same count, so that both the forward (repeat
 * each input count times) and the backward (sum count consecutive gradients) run as simple,
 * vectorisable loops over each run.
 */
#ifndef NN_KERNELS_UPSAMPLE_H
#define NN_KERNELS_UPSAMPLE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_base.h"

/* ---------------------------------------------------------------------------------------- */
/* nearest-exact index map                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Input units per output unit, as a float32, exactly as CANN's op_api and ATen derive it:
 * a positive `scales` (output/input) is inverted in double and rounded to float once (Ascend950,
 * float_reciprocal: rounded to float first, then inverted in float); any other value (0,
 * negative, NaN) means "not given": float(in) / float(out). */
static inline float nn_nearest_exact_scale(int64_t in_len, int64_t out_len, double scales, bool float_reciprocal)
{
    if (scales > 0) {
        return float_reciprocal ? 1.0f / (float)scales : (float)(1.0 / scales);
    }
    return (float)in_len / (float)out_len;
}

/* Source index of output position d.  (d + 0.5) * scale is exact in double (at most 49
 * significant bits for d < 2^24), and is rounded to float before the floor, as the device
 * (float add, float multiply) and ATen (double product passed to floorf) both do. */
static inline int64_t nn_nearest_exact_src(int64_t d, float scale, int64_t in_len)
{
    float position = (float)(((double)d + 0.5) * (double)scale);
    float src = floorf(position);
    if (!((double)src < (double)(in_len - 1))) {
        return in_len - 1; /* also catches an infinite scale */
    }
    return (int64_t)src;
}

/* A stretch of inputs [i0, i1) that each own `count` consecutive outputs, starting at d0:
 * input i owns outputs [d0 + count*(i - i0), d0 + count*(i - i0 + 1)). */
typedef struct nn_ne_run {
    int64_t i0, i1, d0, count;
} nn_ne_run;

/* The whole map in_len -> out_len in three forms; kernels pick the one that suits it:
 *  - runs: long stretches of equal count become vectorisable loops,
 *  - lo:   lo[i] .. lo[i+1] are the outputs of input i (in_len + 1 entries),
 *  - src:  src[d] is the input of output d (out_len entries). */
typedef struct nn_ne_map {
    int64_t in_len, out_len;
    int64_t max_count;
    int64_t num_runs;
    nn_ne_run *runs;
    int64_t *lo;
    int64_t *src;
} nn_ne_map;

static inline void nn_ne_map_free(nn_ne_map *map)
{
    free(map->runs);
    free(map->lo);
    free(map->src);
    map->runs = NULL;
    map->lo = NULL;
    map->src = NULL;
    map->num_runs = 0;
}

/* The arrays of a map in_len -> out_len (lo zeroed); false (nothing held) when out of memory. */
static inline bool nn_ne_map_alloc(nn_ne_map *map, int64_t in_len, int64_t out_len)
{
    memset(map, 0, sizeof *map);
    map->in_len = in_len;
    map->out_len = out_len;
    map->runs = (nn_ne_run *)malloc((size_t)in_len * sizeof *map->runs);
    map->lo = (int64_t *)calloc((size_t)in_len + 1, sizeof *map->lo);
    map->src = (int64_t *)malloc((size_t)out_len * sizeof *map->src);
    if (map->runs == NULL || map->lo == NULL || map->src == NULL) {
        nn_ne_map_free(map);
        return false;
    }
    return true;
}

/* The runs and max_count of a map whose lo[] holds the starts. */
static inline void nn_ne_map_find_runs(nn_ne_map *map)
{
    const int64_t *lo = map->lo;
    for (int64_t i = 0; i < map->in_len;) {
        const int64_t count = lo[i + 1] - lo[i];
        int64_t j = i + 1;
        while (j < map->in_len && lo[j + 1] - lo[j] == count) {
            j++;
        }
        nn_ne_run *run = &map->runs[map->num_runs++];
        run->i0 = i;
        run->i1 = j;
        run->d0 = lo[i];
        run->count = count;
        if (count > map->max_count) {
            map->max_count = count;
        }
        i = j;
    }
}

/* Builds the map in_len -> out_len (both > 0) from the forward's index of every output (the
 * scatter form: every output has an input).  Returns false on allocation failure. */
static inline bool nn_ne_map_build(nn_ne_map *map, int64_t in_len, int64_t out_len, double scales,
                                   bool float_reciprocal)
{
    if (!nn_ne_map_alloc(map, in_len, out_len)) return false;
    const float scale = nn_nearest_exact_scale(in_len, out_len, scales, float_reciprocal);
    for (int64_t d = 0; d < out_len; d++) {
        map->src[d] = nn_nearest_exact_src(d, scale, in_len);
        map->lo[map->src[d] + 1]++; /* counts, turned into starts below */
    }
    for (int64_t i = 0; i < in_len; i++) {
        map->lo[i + 1] += map->lo[i];
    }
    nn_ne_map_find_runs(map);
    return true;
}

/* The first output position input i owns in CANN's backward kernels (the gather form):
 * min(ceil(fl(fl(i * scale) - 0.5)), out_len), in float, with `scale` outputs per input - the
 * vector ops Muls, Adds(-0.5), Ceil, Mins of the A2/A3 kernel
 * (ops-cv:image/upsample_nearest_exact2d_grad/op_kernel/upsample_nearest_exact2d_grad_kernel.h,
 * calculateIntermediateTensorX) and ComputeOrig of Ascend950's
 * (ops-cv:image/upsample_nearest_exact2d_grad/op_kernel/arch35/upsample_nearest_exact2d_grad_simt_base.h).
 * (float)i is exact below 2^24. */
static inline int64_t nn_nearest_exact_first_owned(int64_t i, float scale, int64_t out_len)
{
    const float product = (float)i * scale; /* no contraction: -std=c11 keeps -ffp-contract=off */
    const float first = ceilf(product - 0.5f);
    return !((double)first < (double)out_len) ? out_len : (first > 0.0f ? (int64_t)first : 0);
}

/* Builds the map in_len -> out_len (both > 0) in the gather form of CANN's backward kernels:
 * input i owns outputs [first_owned(i), first_owned(i + 1)); outputs from first_owned(in_len)
 * on belong to no input (their gradients are dropped) and have src[d] = -1.  Returns false on
 * allocation failure. */
static inline bool nn_ne_map_build_gather(nn_ne_map *map, int64_t in_len, int64_t out_len, float scale)
{
    if (!nn_ne_map_alloc(map, in_len, out_len)) return false;
    for (int64_t i = 0; i <= in_len; i++) {
        map->lo[i] = nn_nearest_exact_first_owned(i, scale, out_len);
    }
    for (int64_t i = 0; i < in_len; i++) {
        for (int64_t d = map->lo[i]; d < map->lo[i + 1]; d++) map->src[d] = i;
    }
    for (int64_t d = map->lo[in_len]; d < out_len; d++) map->src[d] = -1;
    nn_ne_map_find_runs(map);
    return true;
}

/* True when the run list is worth walking: runs average at least 8 inputs. */
static inline bool nn_ne_map_runs_are_long(const nn_ne_map *map)
{
    return map->num_runs * 8 <= map->in_len;
}

/* ---- forward ------------------------------------------------------------------------------ */

typedef struct nn_upsample_plan {
    int64_t rows;            /* N*C (an NLC self: N) */
    int64_t in_len, out_len;
    double scales;
    bool float_reciprocal;   /* Ascend950: 1.0f / (float)scales (ops/products.c) */
    size_t elem_size;        /* bytes moved per index: the dtype's size (an NLC self: C of them) */
} nn_upsample_plan;

typedef struct nn_upsample_ctx {
    const nn_upsample_plan *plan;
    const nn_ne_map *map;
    bool use_runs;
    const unsigned char *in;
    unsigned char *out;
    bool stream;             /* large output: rows are streamed out of a buffer */
    bool avx512;             /* 4-byte runs on upsample_fwd_avx512.c (only in the AVX2 build) */
    const struct nn_upsample_window *window; /* short windows (nn_upsample_rows_window_avx512) */
} nn_upsample_ctx;

/* Range functions over rows [begin, end), ctx an nn_upsample_ctx. */
void nn_upsample_rows_portable(void *ctx, int64_t begin, int64_t end);
void nn_upsample_rows_avx2(void *ctx, int64_t begin, int64_t end);
/* 4-byte elements over a long-run map, AVX-512; false when this path cannot run (then the AVX2
 * build's loops do). */
bool nn_upsample_rows_b32_avx512(const nn_upsample_ctx *ctx, int64_t begin, int64_t end);

/* Short windows (upsample_fwd_window_avx512.c): when every chunk of one vector of outputs (16
 * of 4 bytes, 32 of 2, 8 of 8) reads inputs within one vector's width (every upsampling does),
 * chunk k of a row is one lane permutation of the inputs loaded from base[k] under a mask.
 * The table is built once per launch from the map (nn_upsample_window_build). */
typedef struct nn_upsample_window {
    int64_t chunks;          /* ceil(out_len / lanes) */
    int64_t lanes;           /* 64 / elem_size */
    int64_t *base;           /* first input of chunk k */
    uint64_t *load_mask;     /* bytes of chunk k's inputs */
    void *index;             /* chunk k's permutation: 64 bytes at index + 64 k */
    uint64_t last_store_mask; /* bytes of the last chunk's outputs */
} nn_upsample_window;

/* The table for rows of elem_size bytes (2, 4 or 8) over `map`; false when some chunk's inputs
 * span more than a vector (or the element size has no permutation, or out of memory), and then
 * nothing is held.  nn_upsample_window_free releases it. */
bool nn_upsample_window_build(nn_upsample_window *w, const nn_ne_map *map, size_t elem_size);
void nn_upsample_window_free(nn_upsample_window *w);
/* Range function over rows [begin, end), ctx an nn_upsample_ctx whose `window` is built;
 * ordinary stores. */
void nn_upsample_rows_window_avx512(void *ctx, int64_t begin, int64_t end);

/* ---- backward ----------------------------------------------------------------------------- */

/* Run lists up to this long are built in phase 1 and kept in the plan (1000 -> 2999 has 3). */
#define NN_UPSAMPLE_BW_PLAN_MAX_RUNS 8

typedef struct nn_upsample_bw_plan {
    int64_t rows;            /* N*C */
    int64_t in_len, out_len; /* Lin (gradInput), Lout (gradOutput) */
    double scales;
    aclDataType dtype;
    /* The card's arithmetic (ops/products.h, nn_upsample_bw_kernel): gather: the map of CANN's
     * kernels (nn_ne_map_build_gather with gather_scale, outputs per input); cube_slide > 0:
     * A2/A3's matrix product, whose 0 * inf spreads a non-finite gradient over the slide of
     * cube_slide gradInput cells that reads it; copy: Ascend950's bit copy (Lin == Lout and a
     * scale of 1). */
    bool gather, copy;
    float gather_scale;
    int64_t cube_slide;
    /* The map's run list when it is short and long-running (MODE_RUNS), else num_runs = 0 and
     * each launch builds the map: saves the launch ~30 us of index arithmetic before the
     * threads start. */
    int64_t num_runs, max_count;
    nn_ne_run runs[NN_UPSAMPLE_BW_PLAN_MAX_RUNS];
} nn_upsample_bw_plan;

enum { NN_UPSAMPLE_BW_RUNS, NN_UPSAMPLE_BW_PER_INPUT, NN_UPSAMPLE_BW_PICK };

typedef struct nn_upsample_bw_ctx {
    const nn_upsample_bw_plan *plan;
    const nn_ne_map *map;
    int mode;                /* NN_UPSAMPLE_BW_* */
    const void *grad_out;
    void *grad_in;
    bool stream;             /* large gradInput: rows are built in a buffer and streamed out */
    bool avx512;             /* fp32 runs on upsample_bw_avx512.c (only in the AVX2 build) */
    int failed;              /* a range could not get its conversion buffers */
    const int64_t *cube_empty; /* A2/A3: nn_upsample_bw_empty_slides */
    int64_t cube_empty_count;
    nn_guided_claims claims; /* rows, claimed in shrinking chunks by the threads */
    const struct nn_upsample_bw_window *window; /* fp32 short windows (upsample_bw_window_avx512.c) */
} nn_upsample_bw_ctx;

/* Range functions (the range is ignored: rows are claimed from ctx->claims). */
void nn_upsample_bw_rows_portable(void *ctx, int64_t begin, int64_t end);
void nn_upsample_bw_rows_avx2(void *ctx, int64_t begin, int64_t end);

/* How many of n fp32 values are inf or NaN (a count, so that the loop vectorises; inline, so
 * that each kernel file builds it for its own instruction set). */
static inline uint32_t nn_upsample_bw_count_nonfinite(const float *row, int64_t n)
{
    const uint32_t *bits = (const uint32_t *)(const void *)row;
    uint32_t count = 0;
    for (int64_t t = 0; t < n; t++) count += (bits[t] & 0x7f800000u) == 0x7f800000u;
    return count;
}

/* A2/A3 (plan->cube_slide > 0), on each fp32 gradInput row `gi` right after its sums: the NaN
 * that the card's matrix product spreads from an inf or NaN gradient over its slide of cells
 * (upsample_bw_portable.c).  `go`: the row's gradients, of go_dtype; row_nonfinite: whether a
 * sum of the row is inf or NaN (the caller counts them while the row is in cache, or as it
 * stores them).  ctx->cube_empty: nn_upsample_bw_empty_slides. */
void nn_upsample_bw_cube_row(const nn_upsample_bw_ctx *ctx, const void *go, aclDataType go_dtype, float *gi,
                             bool row_nonfinite);
/* The first cells of the slides no gradient of which any cell owns (malloc'd; NULL with
 * *count = 0 when out of memory). */
int64_t *nn_upsample_bw_empty_slides(const nn_upsample_bw_plan *p, int64_t *count);

/* How many rows a thread works on at once, each from its own stretch of its claimed chunk.
 * One sequential stream per core does not keep enough misses in flight (the hardware
 * prefetcher follows each stream only so far ahead); 4-8 independent streams moved a core's
 * read rate from ~11 to ~15 GB/s here (8 was a little ahead of 4). */
#define NN_UPSAMPLE_BW_LOCKSTEP_ROWS 8
/* Streamed rows with several runs go through one stage of Lin + 16 floats per stretch; the
 * stages together stay within this (so long rows use fewer stretches, down to one). */
#define NN_UPSAMPLE_BW_LOCKSTEP_STAGE_BYTES ((size_t)256 << 10)

/* Stretches (rows worked on at once) for rows of Lin floats: with stages, as many as fit in
 * NN_UPSAMPLE_BW_LOCKSTEP_STAGE_BYTES. */
static inline int nn_upsample_bw_lockstep_stretches(int64_t Lin, bool staged)
{
    if (!staged) return NN_UPSAMPLE_BW_LOCKSTEP_ROWS;
    const size_t fit = NN_UPSAMPLE_BW_LOCKSTEP_STAGE_BYTES / ((size_t)(Lin + 16) * sizeof(float));
    return fit < 1 ? 1 : (fit > NN_UPSAMPLE_BW_LOCKSTEP_ROWS ? NN_UPSAMPLE_BW_LOCKSTEP_ROWS : (int)fit);
}

/* fp32 windows (upsample_bw_window_avx512.c): gradInput in chunks of up to 16 inputs whose
 * gradients lie within 32 consecutive gradOutput elements, each gradient `term` t of every lane
 * taken by one two-source lane permutation of that window and added under a mask (lanes that
 * own fewer gradients add nothing), so each input is +0 plus its gradients in increasing output
 * order, as on every other path.  Built once per launch from the map's lo[]. */
#define NN_UPSAMPLE_BW_WINDOW_TERMS 4
typedef struct nn_upsample_bw_chunk {
    int32_t i0, n;            /* gradInput [i0, i0 + n) */
    int32_t base, span;       /* gradOutput [base, base + span), span <= 32 */
    uint16_t term_mask[NN_UPSAMPLE_BW_WINDOW_TERMS]; /* lanes that own a gradient t */
    int32_t index[NN_UPSAMPLE_BW_WINDOW_TERMS][16];  /* its place in the window */
} nn_upsample_bw_chunk;

typedef struct nn_upsample_bw_window {
    int64_t chunks, terms;    /* terms: the map's largest count */
    nn_upsample_bw_chunk *chunk;
} nn_upsample_bw_window;

/* The table for `map` (lo[] built); false (nothing held) when a count exceeds
 * NN_UPSAMPLE_BW_WINDOW_TERMS or out of memory. */
bool nn_upsample_bw_window_build(nn_upsample_bw_window *w, const nn_ne_map *map);
void nn_upsample_bw_window_free(nn_upsample_bw_window *w);
/* fp32 rows [begin, end) through ctx->window, ordinary stores (then the A2 cube pass per row,
 * as the other fp32 rows). */
void nn_upsample_bw_rows_window_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end);

/* fp32 sums of `count` consecutive gradients per input over a run of n inputs (the AVX2 build's
 * loop, handed to the AVX-512 rows for the counts they do not take). */
typedef void (*nn_upsample_bw_sums_fn)(const float *s, float *o, int64_t n, int64_t count);
/* fp32 rows [begin, end) in NN_UPSAMPLE_BW_RUNS mode, AVX-512; false when this path cannot run
 * (then the AVX2 build's loops do).  `buffer`: the thread's row buffer (NULL if none). */
bool nn_upsample_bw_rows_f32_avx512(const nn_upsample_bw_ctx *ctx, int64_t begin, int64_t end, float *buffer,
                                    nn_upsample_bw_sums_fn sums);

#endif /* NN_KERNELS_UPSAMPLE_H */
