/*
 * upsample_nearest_exact1d_backward.c - aclnnUpsampleNearestExact1dBackward: the gradient of
 * aclnnUpsampleNearestExact1d with respect to its input.
 *
 *   out[n, c, i] = sum of gradOutput[n, c, d] over every d whose forward source index is i
 *
 * with the forward's index map (scale = scales > 0 ? fl32(1/scales) : fl32(Lin)/fl32(Lout)),
 * i.e. PyTorch's scatter form (an Lout larger than Lin*scales clamps the extra
 * gradients into the last cell, as PyTorch does).
 *
 * Written as a gather: the map is monotone, so input i owns the contiguous outputs
 * [lo(i), lo(i+1)).  The map is built once per launch and shared by all N*C rows; each row
 * is then computed with loops that suit the map: stretches of equal count k become
 * "gi[t] = go[k t] + ... + go[k t + k-1]" loops the compiler vectorises, irregular maps walk
 * lo(), and pure downsampling (every count <= 1) is a zero fill plus one pick per gradient.
 * Every gi element is 0 + its gradients in increasing d order: the same order as PyTorch, and
 * independent of the thread split.  fp16/bf16 accumulate in fp32 and round once.  With
 * AVX-512, fp32 runs of count 1-3 are summed 16 inputs per vector (lane permutations of the
 * gradients, the same adds in the same order), on up to 8 rows from separate stretches at once
 * (more memory streams in flight per core).  Threads claim shrinking chunks of rows from a
 * shared counter (a late pool worker still takes its share, and the threads finish close
 * together), and gradInput is streamed out when the whole launch's traffic passes base's
 * streaming threshold, as whole aligned lines even when rows are not multiples of 16 floats.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnUpsampleNearestExact1dBackward"


/* Smallest accepted Lin/Lout (or 1/scales): gradOutput may be at most 50x longer. */
#define MIN_SUPPORT_SCALE 0.02

/* Run lists up to this long are built in phase 1 and kept in the plan (1000 -> 2999 has 3). */
#define PLAN_MAX_RUNS 8

typedef struct upsample_bwd_plan {
    int64_t rows;            /* N*C */
    int64_t in_len, out_len; /* Lin (gradInput), Lout (gradOutput) */
    double scales;
    aclDataType dtype;
    /* The map's run list when it is short and long-running (MODE_RUNS), else num_runs = 0 and
     * each launch builds the map: saves the launch ~30 us of index arithmetic before the
     * threads start. */
    int64_t num_runs, max_count;
    nn_ne_run runs[PLAN_MAX_RUNS];
} upsample_bwd_plan;

enum { MODE_RUNS, MODE_PER_INPUT, MODE_PICK };

typedef struct upsample_bwd_ctx {
    const upsample_bwd_plan *plan;
    const nn_ne_map *map;
    int mode;
    const void *grad_out;
    void *grad_in;
    bool stream;             /* large gradInput: rows are built in a buffer and streamed out */
    int failed;              /* a range could not get its conversion buffers */
    nn_guided_claims claims; /* rows, claimed in shrinking chunks by the threads */
} upsample_bwd_ctx;

/* bf16 is the upper half of an fp32: widening is a shift, done inline in the loops below. */
static inline float widen_bf16(uint16_t b)
{
    const uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#define WIDEN_F32(x) (x)

/* run_sums: sums `count` consecutive gradients per input over a run of n inputs.
 * row: one fp32 gradInput row from one gradOutput row of type IT, in the map's mode. */
#define DEFINE_GRAD_ROW(SUMS, ROW, IT, WIDEN)                                                     \
    NN_PU_HOT static void SUMS(const IT *restrict s, float *restrict o, int64_t n, int64_t count) \
    {                                                                                            \
        switch (count) {                                                                         \
        case 0:                                                                                  \
            for (int64_t t = 0; t < n; t++) {                                                    \
                o[t] = 0.0f;                                                                     \
            }                                                                                    \
            break;                                                                               \
        case 1:                                                                                  \
            for (int64_t t = 0; t < n; t++) {                                                    \
                o[t] = 0.0f + WIDEN(s[t]);                                                       \
            }                                                                                    \
            break;                                                                               \
        case 2:                                                                                  \
            for (int64_t t = 0; t < n; t++) {                                                    \
                o[t] = (0.0f + WIDEN(s[2 * t])) + WIDEN(s[2 * t + 1]);                           \
            }                                                                                    \
            break;                                                                               \
        case 3:                                                                                  \
            for (int64_t t = 0; t < n; t++) {                                                    \
                o[t] = ((0.0f + WIDEN(s[3 * t])) + WIDEN(s[3 * t + 1])) + WIDEN(s[3 * t + 2]);   \
            }                                                                                    \
            break;                                                                               \
        case 4:                                                                                  \
            for (int64_t t = 0; t < n; t++) {                                                    \
                o[t] = (((0.0f + WIDEN(s[4 * t])) + WIDEN(s[4 * t + 1])) + WIDEN(s[4 * t + 2])) + \
                       WIDEN(s[4 * t + 3]);                                                      \
            }                                                                                    \
            break;                                                                               \
        default:                                                                                 \
            for (int64_t t = 0; t < n; t++) {                                                    \
                const IT *restrict g = s + count * t;                                            \
                float acc = 0.0f;                                                                \
                for (int64_t j = 0; j < count; j++) {                                            \
                    acc += WIDEN(g[j]);                                                          \
                }                                                                                \
                o[t] = acc;                                                                      \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
    }                                                                                            \
                                                                                                 \
    NN_PU_HOT static void ROW(const nn_ne_map *map, int mode, const IT *restrict go,              \
                              float *restrict gi)                                                \
    {                                                                                            \
        if (mode == MODE_PICK) {                                                                 \
            /* every input gets at most one gradient: zeros, then the picks */                   \
            memset(gi, 0, (size_t)map->in_len * sizeof(float));                                  \
            const int64_t *restrict src = map->src;                                              \
            for (int64_t d = 0; d < map->out_len; d++) {                                         \
                gi[src[d]] = 0.0f + WIDEN(go[d]);                                                \
            }                                                                                    \
        } else if (mode == MODE_RUNS) {                                                          \
            for (int64_t r = 0; r < map->num_runs; r++) {                                        \
                const nn_ne_run *run = &map->runs[r];                                            \
                SUMS(go + run->d0, gi + run->i0, run->i1 - run->i0, run->count);                 \
            }                                                                                    \
        } else {                                                                                 \
            const int64_t *restrict lo = map->lo;                                                \
            for (int64_t i = 0; i < map->in_len; i++) {                                          \
                float acc = 0.0f;                                                                \
                for (int64_t d = lo[i]; d < lo[i + 1]; d++) {                                    \
                    acc += WIDEN(go[d]);                                                         \
                }                                                                                \
                gi[i] = acc;                                                                     \
            }                                                                                    \
        }                                                                                        \
    }

DEFINE_GRAD_ROW(run_sums_f32, row_f32, float, WIDEN_F32)
DEFINE_GRAD_ROW(run_sums_bf16, row_bf16, uint16_t, widen_bf16)

#if NN_HAVE_X86_SIMD
/* gradOutput is prefetched this many bytes ahead of the loads (one core alone does not keep
 * enough misses in flight to stream at full speed otherwise). */
#define PREFETCH_BYTES 4096

/* Lane t of the result takes element count*t + s of the concatenation (a, b[, c]): the
 * permutation tables for counts 2 and 3, s = 0 .. count-1. */
NN_AVX512 static inline __m512i index_vector(int64_t count, int64_t s)
{
    int32_t idx[16];
    for (int t = 0; t < 16; t++) {
        idx[t] = (int32_t)(count * t + s);
    }
    return _mm512_loadu_si512((const void *)idx);
}

/* How many rows a thread works on at once, each from its own stretch of its claimed chunk.
 * One sequential stream per core does not keep enough misses in flight (the hardware
 * prefetcher follows each stream only so far ahead); 4-8 independent streams moved a core's
 * read rate from ~11 to ~15 GB/s here (8 was a little ahead of 4). */
#define LOCKSTEP_ROWS 8
/* Streamed rows with several runs go through one stage of Lin + 16 floats per stretch; the
 * stages together stay within this (so long rows use fewer stretches, down to one). */
#define LOCKSTEP_STAGE_BYTES ((size_t)256 << 10)

/* fp32 run sums, AVX-512, for counts 1, 2 and 3 (the counts of upsampling by up to 3), on m
 * (<= LOCKSTEP_ROWS) rows in lockstep: s[i] and o[i] are row i's gradients and sums.  16
 * inputs per vector, each ((0 + g0) + g1) + g2 in d order exactly as run_sums_f32 does; the
 * last n % 16 inputs use the scalar loop's arithmetic.  With `stream`, every o[i] is 64-byte
 * aligned and every full vector is stored non-temporally.  Returns false for other counts. */
NN_AVX512 static bool run_sums_f32_avx512(const float *const *s, float *const *o, int m, int64_t n,
                                             int64_t count, bool stream)
{
    if (count < 1 || count > 3) {
        return false;
    }
    const int64_t n16 = n & ~(int64_t)15;
    const __m512 zero = _mm512_setzero_ps();
#define STORE_SUM(dst, v)                   \
    do {                                    \
        if (stream) {                       \
            _mm512_stream_ps(dst, v);       \
        } else {                            \
            _mm512_storeu_ps(dst, v);       \
        }                                   \
    } while (0)
#define PREFETCH_AHEAD(g, k) _mm_prefetch((const char *)((uintptr_t)(g) + PREFETCH_BYTES + 64 * (k)), _MM_HINT_T0)
    if (count == 1) {
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                PREFETCH_AHEAD(s[i] + t, 0);
                STORE_SUM(o[i] + t, _mm512_add_ps(zero, _mm512_loadu_ps(s[i] + t)));
            }
        }
    } else if (count == 2) {
        const __m512i even = index_vector(2, 0), odd = index_vector(2, 1);
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                const float *g = s[i] + 2 * t;
                PREFETCH_AHEAD(g, 0);
                PREFETCH_AHEAD(g, 1);
                const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16);
                __m512 v = _mm512_add_ps(zero, _mm512_permutex2var_ps(a, even, b));
                v = _mm512_add_ps(v, _mm512_permutex2var_ps(a, odd, b));
                STORE_SUM(o[i] + t, v);
            }
        }
    } else {
        /* element 3t + s: from (a, b) when < 32, else from c; the second permute keeps lane t
         * of the first (index t) or takes c[3t + s - 32] (index 16 + 3t + s - 32) */
        __m512i from_ab[3], with_c[3];
        for (int64_t k = 0; k < 3; k++) {
            int32_t second[16];
            for (int t = 0; t < 16; t++) {
                const int e = 3 * t + (int)k;
                second[t] = e < 32 ? t : 16 + e - 32;
            }
            from_ab[k] = index_vector(3, k);
            with_c[k] = _mm512_loadu_si512((const void *)second);
        }
        for (int64_t t = 0; t < n16; t += 16) {
            for (int i = 0; i < m; i++) {
                const float *g = s[i] + 3 * t;
                PREFETCH_AHEAD(g, 0);
                PREFETCH_AHEAD(g, 1);
                PREFETCH_AHEAD(g, 2);
                const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16), c = _mm512_loadu_ps(g + 32);
                __m512 v = zero;
                for (int k = 0; k < 3; k++) {
                    const __m512 ab = _mm512_permutex2var_ps(a, from_ab[k], b);
                    v = _mm512_add_ps(v, _mm512_permutex2var_ps(ab, with_c[k], c));
                }
                STORE_SUM(o[i] + t, v);
            }
        }
    }
#undef STORE_SUM
#undef PREFETCH_AHEAD
    for (int i = 0; i < m; i++) {
        for (int64_t t = n16; t < n; t++) {
            const float *g = s[i] + count * t;
            float acc = 0.0f;
            for (int64_t j = 0; j < count; j++) {
                acc += g[j];
            }
            o[i][t] = acc;
        }
    }
    return true;
}

/* m fp32 gradInput rows in MODE_RUNS, in lockstep, with the AVX-512 run sums where they apply. */
NN_AVX512 static void rows_f32_runs_avx512(const nn_ne_map *map, const float *const *go,
                                              float *const *gi, int m, bool stream)
{
    for (int64_t r = 0; r < map->num_runs; r++) {
        const nn_ne_run *run = &map->runs[r];
        const float *s[LOCKSTEP_ROWS];
        float *o[LOCKSTEP_ROWS];
        for (int i = 0; i < m; i++) {
            s[i] = go[i] + run->d0;
            o[i] = gi[i] + run->i0;
        }
        if (!run_sums_f32_avx512(s, o, m, run->i1 - run->i0, run->count, stream)) {
            for (int i = 0; i < m; i++) {
                run_sums_f32(s[i], o[i], run->i1 - run->i0, run->count);
            }
        }
    }
}

/* Stretches (rows worked on at once) for rows of Lin floats: with stages, as many as fit in
 * LOCKSTEP_STAGE_BYTES. */
static int lockstep_stretches(int64_t Lin, bool staged)
{
    if (!staged) return LOCKSTEP_ROWS;
    const size_t fit = LOCKSTEP_STAGE_BYTES / ((size_t)(Lin + 16) * sizeof(float));
    return fit < 1 ? 1 : (fit > LOCKSTEP_ROWS ? LOCKSTEP_ROWS : (int)fit);
}

/* Rows [begin, end) in MODE_RUNS, split into up to LOCKSTEP_ROWS stretches of consecutive rows
 * that are worked on in lockstep (row j of every stretch, then row j + 1, ...).  Rows go
 * straight to gradInput (`direct`: non-temporal stores from the registers, every row aligned;
 * else ordinary stores), or, with `stages` (lockstep_stretches(Lin, true) buffers of Lin + 16
 * floats), through one streaming line stage per stretch (base/nn_simd.h): a stretch goes out as
 * one flat stream of whole lines, with partial lines only at its two ends. */
NN_AVX512 static void rows_f32_runs_lockstep(const nn_ne_map *map, const float *go_base,
                                                float *gi_base, int64_t begin, int64_t end,
                                                bool direct, float *stages)
{
    const int64_t Lin = map->in_len, Lout = map->out_len, rows = end - begin;
    if (rows <= 0) {
        return;
    }
    const int most = lockstep_stretches(Lin, stages != NULL);
    const int m = rows < most ? (int)rows : most;
    int64_t first[LOCKSTEP_ROWS] = {0}, count[LOCKSTEP_ROWS] = {0};
    nn_line_stage flat[LOCKSTEP_ROWS];
    const int64_t row_bytes = Lin * (int64_t)sizeof(float);
    for (int i = 0; i < m; i++) { /* the longer stretches first */
        count[i] = rows / m + (i < rows % m ? 1 : 0);
        first[i] = i == 0 ? begin : first[i - 1] + count[i - 1];
        if (stages != NULL) {
            flat[i] = (nn_line_stage){(unsigned char *)(stages + (size_t)i * (size_t)(Lin + 16)),
                                      (unsigned char *)(gi_base + first[i] * Lin), 0, true};
        }
    }
    for (int64_t j = 0; j < count[0]; j++) {
        int live = 0; /* stretches that still have a row j */
        const float *go[LOCKSTEP_ROWS];
        float *gi[LOCKSTEP_ROWS];
        while (live < m && j < count[live]) {
            go[live] = go_base + (first[live] + j) * Lout;
            gi[live] = stages != NULL ? (float *)nn_line_stage_at(&flat[live], j * row_bytes)
                                      : gi_base + (first[live] + j) * Lin;
            live++;
        }
        rows_f32_runs_avx512(map, go, gi, live, direct);
        if (stages != NULL) {
            for (int i = 0; i < live; i++) {
                nn512_line_stage_flush(&flat[i], (j + 1) * row_bytes, false);
            }
        }
    }
    if (stages != NULL) {
        for (int i = 0; i < m; i++) {
            nn512_line_stage_flush(&flat[i], count[i] * row_bytes, true);
        }
    }
}
#endif

/* Streaming (large gradInput): rows are computed into buffers that stay in L1/L2 and go out
 * with non-temporal stores, so no gradInput line is read for ownership.  Without streaming
 * (or if the buffer could not be allocated) rows are written in place.  With AVX-512 and a
 * single run (uniform upsampling) over aligned rows of whole vectors, rows are streamed
 * straight out of the vector registers instead. */
static void upsample_bwd_rows_f32(upsample_bwd_ctx *ctx, int64_t begin, int64_t end, float *buffer)
{
    const upsample_bwd_plan *p = ctx->plan;
    const int64_t Lin = p->in_len, Lout = p->out_len;
    const size_t row_bytes = (size_t)Lin * sizeof(float);
#if NN_HAVE_X86_SIMD
    if (ctx->mode == MODE_RUNS && nn_cpu_avx512()) {
        const bool direct_stream = ctx->stream && ctx->map->num_runs == 1 && (Lin & 15) == 0 &&
                                   ((uintptr_t)ctx->grad_in & 63) == 0;
        const bool flat = ctx->stream && !direct_stream && buffer != NULL &&
                          ((uintptr_t)ctx->grad_in & 3) == 0;
        if (!ctx->stream || direct_stream || flat) {
            rows_f32_runs_lockstep(ctx->map, (const float *)ctx->grad_out, (float *)ctx->grad_in,
                                   begin, end, direct_stream, flat ? buffer : NULL);
            return;
        }
    }
#endif
    for (int64_t row = begin; row < end; row++) {
        float *gi = (float *)ctx->grad_in + row * Lin;
        float *target = buffer != NULL ? buffer : gi;
        row_f32(ctx->map, ctx->mode, (const float *)ctx->grad_out + row * Lout, target);
        if (buffer != NULL) {
            nn_copy_row_nt(gi, buffer, row_bytes);
        }
    }
}

/* fp16 / bf16: sum in fp32 (bf16 widened inline, fp16 row by row), round once. */
static void upsample_bwd_rows_half(upsample_bwd_ctx *ctx, int64_t begin, int64_t end, float *gi32)
{
    const upsample_bwd_plan *p = ctx->plan;
    const int64_t Lin = p->in_len, Lout = p->out_len;
    const bool bf16 = p->dtype == ACL_BF16;
    const size_t row_bytes = (size_t)Lin * sizeof(uint16_t);
    const size_t floats = (size_t)(Lin + (bf16 ? 0 : Lout)); /* layout: row_buffer_bytes */
    float *go32 = gi32 + Lin;
    uint16_t *narrow = ctx->stream ? (uint16_t *)(gi32 + floats) : NULL;
    for (int64_t row = begin; row < end; row++) {
        const uint16_t *go = (const uint16_t *)ctx->grad_out + row * Lout;
        uint16_t *gi = (uint16_t *)ctx->grad_in + row * Lin;
        uint16_t *target = narrow != NULL ? narrow : gi;
        if (bf16) {
            row_bf16(ctx->map, ctx->mode, go, gi32);
            nn_f32_to_bf16_n(gi32, target, (size_t)Lin);
        } else {
            nn_f16_to_f32_n(go, go32, (size_t)Lout);
            row_f32(ctx->map, ctx->mode, go32, gi32);
            nn_f32_to_f16_n(gi32, target, (size_t)Lin);
        }
        if (narrow != NULL) {
            nn_copy_row_nt(gi, narrow, row_bytes);
        }
    }
}

/* Bytes of one thread's row buffer.  fp32: the gradInput row built before it is streamed out
 * (only when streaming).  fp16/bf16: the fp32 gradInput row, the fp32 gradOutput row (fp16
 * only) and, when streaming, the narrowed row. */
static size_t row_buffer_bytes(const upsample_bwd_ctx *ctx)
{
    const upsample_bwd_plan *p = ctx->plan;
    if (p->dtype == ACL_FLOAT) {
        if (!ctx->stream) return 0;
        size_t stages = 1; /* the portable path's row buffer */
#if NN_HAVE_X86_SIMD
        stages = (size_t)lockstep_stretches(p->in_len, true); /* one per line stage */
#endif
        return stages * (size_t)(p->in_len + 16) * sizeof(float);
    }
    const size_t floats = (size_t)(p->in_len + (p->dtype == ACL_BF16 ? 0 : p->out_len));
    return floats * sizeof(float) + (ctx->stream ? (size_t)p->in_len * sizeof(uint16_t) : 0);
}

/* The range handed in is ignored: every thread claims chunks of rows from a shared counter
 * until none are left, so a pool worker that wakes late still takes its share instead of
 * leaving the caller to wait for a fixed half.  Each row's result does not depend on who
 * computes it. */
static void upsample_bwd_rows(void *vctx, int64_t begin, int64_t end)
{
    upsample_bwd_ctx *ctx = (upsample_bwd_ctx *)vctx;
    (void)begin;
    (void)end;
    const bool wide = ctx->plan->dtype == ACL_FLOAT;
    const size_t bytes = row_buffer_bytes(ctx);
    float *buffer = bytes > 0 ? (float *)malloc(bytes) : NULL; /* once per thread, not per claim */
    if (bytes > 0 && buffer == NULL && !wide) {
        __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    /* (fp32 without its buffer writes the rows in place with ordinary stores) */
    int64_t first, last;
    while (nn_guided_claim_next(&ctx->claims, &first, &last)) {
        if (wide) {
            upsample_bwd_rows_f32(ctx, first, last, buffer);
        } else {
            upsample_bwd_rows_half(ctx, first, last, buffer);
        }
    }
    if (ctx->stream) nn_streaming_fence();
    free(buffer);
}

static aclnnStatus upsample_bwd_kernel(const nn_launch *launch)
{
    const upsample_bwd_plan *p = (const upsample_bwd_plan *)launch->plan;
    nn_ne_map map;
    const bool planned = p->num_runs > 0;
    if (planned) { /* a view of the plan's run list (MODE_RUNS only reads runs) */
        memset(&map, 0, sizeof map);
        map.in_len = p->in_len;
        map.out_len = p->out_len;
        map.max_count = p->max_count;
        map.num_runs = p->num_runs;
        map.runs = (nn_ne_run *)p->runs;
    } else if (!nn_ne_map_build(&map, p->in_len, p->out_len, p->scales, false)) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the index map (L %lld -> %lld).",
                        (long long)p->in_len, (long long)p->out_len);
    }
    upsample_bwd_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.plan = p;
    ctx.map = &map;
    ctx.mode = planned || nn_ne_map_runs_are_long(&map)
                   ? MODE_RUNS
                   : (map.max_count <= 1 ? MODE_PICK : MODE_PER_INPUT);
    ctx.grad_out = launch->operands[0].data;
    ctx.grad_in = launch->operands[1].data;
    /* Streamed when the whole launch (gradOutput read + gradInput written) passes base's
     * threshold, not only gradInput: a 3x upsampling's 16 MB gradInput sits just under it,
     * yet the 49 MB of gradOutput read after it evicts it from the caches anyway, so
     * ordinary stores would only add a read of every gradInput line (a fifth more traffic). */
    const uint64_t esz = nn_dtype_size(p->dtype);
    ctx.stream = nn_use_streaming_stores((uint64_t)(p->rows * (p->in_len + p->out_len)) * esz);
    const bool avx512_runs = ctx.mode == MODE_RUNS && p->dtype == ACL_FLOAT && nn_cpu_avx512();
    nn_launch_set_path(launch, avx512_runs               ? "upsample_bw_avx512_runs"
                               : ctx.mode == MODE_RUNS   ? "upsample_bw_runs"
                               : ctx.mode == MODE_PICK   ? "upsample_bw_pick"
                                                         : "upsample_bw_per_input");
    const double row_bytes = (double)(p->in_len + p->out_len) * (double)nn_dtype_size(p->dtype);
    const int64_t grain = nn_pu_grain(p->rows, row_bytes);
    /* chunks of whole 16-row units where the grain allows (each then starts on a 64-byte line
     * of an aligned gradInput) */
    nn_guided_claims_init(&ctx.claims, p->rows, grain < 16 ? grain : 16);
    nn_parallel_for(p->rows, grain, upsample_bwd_rows, &ctx);
    if (__atomic_load_n(&ctx.claims.next, __ATOMIC_RELAXED) < p->rows) {
        /* the pool ran every part on its worker, which leaves the last unit to this thread */
        upsample_bwd_rows(&ctx, 0, p->rows);
    }
    if (!planned) nn_ne_map_free(&map);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the fp32 row buffers.");
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtypes(const aclTensor *grad_out, const aclTensor *out)
{
    aclnnStatus st = nn_check_product_dtype(OP, nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D_BACKWARD), "gradOutput",
                                            grad_out);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "out", out, "gradOutput", grad_out);
    return st;
}

static aclnnStatus check_shapes(const aclTensor *grad_out, const aclIntArray *outputSize,
                                const aclIntArray *inputSize, const aclTensor *out)
{
    char a[128];
    if (grad_out->format != out->format) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Format of input and output should be equal, gradOutput [%s], out [%s].",
                        nn_format_name(grad_out->format), nn_format_name(out->format));
    }
    if (grad_out->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": gradOutput must be 3-D, got %llu-D %s.",
                        (unsigned long long)grad_out->ndim,
                        nn_shape_str(a, sizeof a, grad_out->ndim, grad_out->dims));
    }
    if (out->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out must be 3-D, got %llu-D %s.",
                        (unsigned long long)out->ndim, nn_shape_str(a, sizeof a, out->ndim, out->dims));
    }
    if (inputSize->size != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected inputSize equals to 3, but got size %llu.",
                        (unsigned long long)inputSize->size);
    }
    if (outputSize->size != 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected outputSize equals to 1, but got size %llu.",
                        (unsigned long long)outputSize->size);
    }
    if (grad_out->dims[0] != out->dims[0] || grad_out->dims[1] != out->dims[1]) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": N and C of out must equal those of gradOutput: gradOutput (N: %lld, "
                        "C: %lld), out (N: %lld, C: %lld).", (long long)grad_out->dims[0],
                        (long long)grad_out->dims[1], (long long)out->dims[0], (long long)out->dims[1]);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_sizes(const aclTensor *grad_out, const aclIntArray *outputSize,
                               const aclIntArray *inputSize, double scales, const aclTensor *out)
{
    if (scales < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": scales cannot be negative, got %g.", scales);
    }
    const int64_t N = grad_out->dims[0], C = grad_out->dims[1], Lout = grad_out->dims[2];
    const int64_t Lin = inputSize->values[2];
    const double ratio = scales > 0 ? 1.0 / scales : (Lout != 0 ? (double)Lin / (double)Lout : 0.0);
    if (!(ratio >= MIN_SUPPORT_SCALE)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": scales is too large: input/output ratio %g (inputSize L %lld, gradOutput "
                        "L %lld, scales %g) must be >= 0.02, i.e. at most 50x upsampling.", ratio,
                        (long long)Lin, (long long)Lout, scales);
    }
    if (!(N > 0 && C > 0 && Lin > 0 && Lout > 0)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Input and output sizes should greater than 0, but got gradOutput (N: "
                        "%lld, C: %lld, L: %lld), inputSize L %lld.", (long long)N, (long long)C,
                        (long long)Lout, (long long)Lin);
    }
    /* Stricter than CANN (docs/compatibility.md): everything the kernel relies on must agree. */
    if (grad_out->format != ACL_FORMAT_ND && grad_out->format != ACL_FORMAT_NCL) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": gradOutput format must be ND or NCL, got %s.",
                        nn_format_name(grad_out->format));
    }
    if (outputSize->values[0] != Lout) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": outputSize [%lld] must equal the length of gradOutput (%lld).",
                        (long long)outputSize->values[0], (long long)Lout);
    }
    if (inputSize->values[0] != N || inputSize->values[1] != C) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": inputSize [%lld, %lld, %lld] must have the N and C of gradOutput "
                        "(%lld, %lld).", (long long)inputSize->values[0],
                        (long long)inputSize->values[1], (long long)Lin, (long long)N, (long long)C);
    }
    if (out->dims[2] != Lin) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": out length %lld must equal inputSize[2] (%lld).",
                        (long long)out->dims[2], (long long)Lin);
    }
    return ACLNN_SUCCESS;
}

/* Keeps a short run list in the plan (see upsample_bwd_plan); if the map cannot be built here
 * (out of memory) the launches build it and report that themselves. */
static void plan_runs(upsample_bwd_plan *plan)
{
    nn_ne_map map;
    plan->num_runs = 0;
    if (!nn_ne_map_build(&map, plan->in_len, plan->out_len, plan->scales, false)) {
        return;
    }
    if (nn_ne_map_runs_are_long(&map) && map.num_runs <= PLAN_MAX_RUNS) {
        plan->num_runs = map.num_runs;
        plan->max_count = map.max_count;
        memcpy(plan->runs, map.runs, (size_t)map.num_runs * sizeof map.runs[0]);
    }
    nn_ne_map_free(&map);
}

aclnnStatus aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                const aclIntArray *outputSize,
                                                                const aclIntArray *inputSize,
                                                                double scales, aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor)
{
    /* CANN does not check outputSize for NULL (its device code would crash); we do, last. */
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", gradOutput), NN_ARRAY_ARG("inputSize", inputSize),
                           NN_TENSOR_ARG("out", out), NN_ARRAY_ARG("outputSize", outputSize)};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = check_dtypes(gradOutput, out);
    if (status == ACLNN_SUCCESS) status = check_shapes(gradOutput, outputSize, inputSize, out);
    if (status == ACLNN_SUCCESS) status = check_sizes(gradOutput, outputSize, inputSize, scales, out);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    /* All sizes are > 0 and out is [N, C, Lin] here: CANN's "empty -> success" branch cannot be
     * reached. */
    upsample_bwd_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.rows = gradOutput->dims[0] * gradOutput->dims[1];
    plan.in_len = inputSize->values[2];
    plan.out_len = gradOutput->dims[2];
    plan.scales = scales;
    plan.dtype = gradOutput->dtype;
    plan_runs(&plan);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = upsample_bwd_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {gradOutput}, .outputs = {out}},
                            workspaceSize, executor);
}

aclnnStatus aclnnUpsampleNearestExact1dBackward(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
