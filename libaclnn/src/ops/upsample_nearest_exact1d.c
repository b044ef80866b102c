/*
 * upsample_nearest_exact1d.c - aclnnUpsampleNearestExact1d: resizes the last dim of a 3-D
 * [N, C, L] tensor to outputSize[0] with "nearest-exact" sampling.
 *
 *   scale  = scales > 0 ? fl32(1 / scales) : fl32(L) / fl32(Lout)
 *            (Ascend950: 1.0f / fl32(scales), the reciprocal taken in float; ops/products.c)
 *   out[n, c, d] = self[n, c, min(floor(fl32((d + 0.5) * scale)), L - 1)]
 *
 * A pure gather (bit-exact).  The index map is the same for every (n, c) row, so the kernel
 * builds it once per launch (pad_upsample_common.h) and then copies row by row: long stretches
 * of equal repeat count become "repeat each element k times" loops, irregular maps use the
 * per-output source table.  With AVX-512, 4-byte runs of count 1-4 are lane permutations of
 * 16 inputs per step (upsample_rows_b32_avx512).
 *
 * Checks follow CANN's op_api.  Stricter than CANN (docs/compatibility.md):
 * out must be [N, C, outputSize[0]] and self/out must use the ND or NCL format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnUpsampleNearestExact1d"


typedef struct upsample_plan {
    int64_t rows;            /* N*C */
    int64_t in_len, out_len;
    double scales;
    bool float_reciprocal;   /* Ascend950: 1.0f / (float)scales (ops/products.c) */
    size_t elem_size;
} upsample_plan;

typedef struct upsample_ctx {
    const upsample_plan *plan;
    const nn_ne_map *map;
    bool use_runs;
    const unsigned char *in;
    unsigned char *out;
    bool stream;             /* large output: rows are streamed out of a buffer */
} upsample_ctx;

/* One output row from one input row, for element type T. */
#define DEFINE_UPSAMPLE_ROW(NAME, T)                                                              \
    NN_PU_HOT static void NAME(const nn_ne_map *map, bool use_runs, const T *restrict in,                  \
                     T *restrict out)                                                            \
    {                                                                                            \
        if (!use_runs) {                                                                         \
            const int64_t *restrict src = map->src;                                              \
            for (int64_t d = 0; d < map->out_len; d++) {                                         \
                out[d] = in[src[d]];                                                             \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        for (int64_t r = 0; r < map->num_runs; r++) {                                            \
            const nn_ne_run *run = &map->runs[r];                                                \
            const int64_t n = run->i1 - run->i0;                                                 \
            const T *restrict s = in + run->i0;                                                  \
            T *restrict o = out + run->d0;                                                       \
            switch (run->count) {                                                                \
            case 0:                                                                              \
                break;                                                                           \
            case 1:                                                                              \
                memcpy(o, s, (size_t)n * sizeof(T));                                             \
                break;                                                                           \
            case 2:                                                                              \
                for (int64_t t = 0; t < n; t++) {                                                \
                    o[2 * t] = s[t];                                                             \
                    o[2 * t + 1] = s[t];                                                         \
                }                                                                                \
                break;                                                                           \
            case 3:                                                                              \
                for (int64_t t = 0; t < n; t++) {                                                \
                    o[3 * t] = s[t];                                                             \
                    o[3 * t + 1] = s[t];                                                         \
                    o[3 * t + 2] = s[t];                                                         \
                }                                                                                \
                break;                                                                           \
            case 4:                                                                              \
                for (int64_t t = 0; t < n; t++) {                                                \
                    o[4 * t] = s[t];                                                             \
                    o[4 * t + 1] = s[t];                                                         \
                    o[4 * t + 2] = s[t];                                                         \
                    o[4 * t + 3] = s[t];                                                         \
                }                                                                                \
                break;                                                                           \
            default: {                                                                           \
                const int64_t k = run->count;                                                    \
                for (int64_t t = 0; t < n; t++) {                                                \
                    const T v = s[t];                                                            \
                    T *restrict dst = o + k * t;                                                 \
                    for (int64_t j = 0; j < k; j++) {                                            \
                        dst[j] = v;                                                              \
                    }                                                                            \
                }                                                                                \
                break;                                                                           \
            }                                                                                    \
            }                                                                                    \
        }                                                                                        \
    }

DEFINE_UPSAMPLE_ROW(upsample_row_1, uint8_t)
DEFINE_UPSAMPLE_ROW(upsample_row_2, uint16_t)
DEFINE_UPSAMPLE_ROW(upsample_row_4, uint32_t)

static void upsample_write_row(const upsample_ctx *ctx, const unsigned char *in, unsigned char *out)
{
    switch (ctx->plan->elem_size) {
    case 1: upsample_row_1(ctx->map, ctx->use_runs, in, out); break;
    case 2: upsample_row_2(ctx->map, ctx->use_runs, (const uint16_t *)in, (uint16_t *)out); break;
    default: upsample_row_4(ctx->map, ctx->use_runs, (const uint32_t *)in, (uint32_t *)out); break;
    }
}

#if NN_HAVE_X86_SIMD
/* The input is prefetched this many bytes ahead of the loads. */
#define PREFETCH_BYTES 2048

/* Repeats each of n 4-byte elements `count` (1..4) times, 16 inputs per step: output vector v
 * of a step is lane-permutation v of the 16 inputs (lane l takes input (16 v + l) / count).
 * With `stream`, o is 64-byte aligned and every whole vector is stored non-temporally.
 * Returns false for other counts. */
NN_AVX512 static bool run_repeat_b32_avx512(const uint32_t *restrict s, uint32_t *restrict o,
                                               int64_t n, int64_t count, bool stream)
{
    if (count < 1 || count > 4) {
        return false;
    }
    __m512i perm[4];
    for (int64_t v = 0; v < count; v++) {
        int32_t idx[16];
        for (int l = 0; l < 16; l++) {
            idx[l] = (int32_t)((16 * v + l) / count);
        }
        perm[v] = _mm512_loadu_si512((const void *)idx);
    }
    const int64_t n16 = n & ~(int64_t)15;
    for (int64_t t = 0; t < n16; t += 16) {
        _mm_prefetch((const char *)((uintptr_t)(s + t) + PREFETCH_BYTES), _MM_HINT_T0);
        const __m512i x = _mm512_loadu_si512((const void *)(s + t));
        uint32_t *dst = o + count * t;
        for (int64_t v = 0; v < count; v++) {
            const __m512i y = _mm512_permutexvar_epi32(perm[v], x);
            if (stream) {
                _mm512_stream_si512((void *)(dst + 16 * v), y);
            } else {
                _mm512_storeu_si512((void *)(dst + 16 * v), y);
            }
        }
    }
    for (int64_t t = n16; t < n; t++) {
        for (int64_t j = 0; j < count; j++) {
            o[count * t + j] = s[t];
        }
    }
    return true;
}

/* One 4-byte output row from the run list with the AVX-512 repeats where they apply. */
NN_AVX512 static void upsample_row_b32_avx512(const nn_ne_map *map, const uint32_t *restrict in,
                                                 uint32_t *restrict out, bool stream)
{
    for (int64_t r = 0; r < map->num_runs; r++) {
        const nn_ne_run *run = &map->runs[r];
        const int64_t n = run->i1 - run->i0;
        if (!run_repeat_b32_avx512(in + run->i0, out + run->d0, n, run->count, stream)) {
            const uint32_t *s = in + run->i0;
            uint32_t *o = out + run->d0;
            for (int64_t t = 0; t < n; t++) {
                for (int64_t j = 0; j < run->count; j++) {
                    o[run->count * t + j] = s[t];
                }
            }
        }
    }
}

/* 4-byte elements over a long-run map, AVX-512: rows are written in place (or, streaming with
 * a single run over aligned rows of whole vectors, streamed straight from the registers);
 * streaming with several runs builds each row in a buffer and streams it (run boundaries
 * fall mid-line).  Returns false when this path does not apply. */
static bool upsample_rows_b32_avx512(const upsample_ctx *ctx, int64_t begin, int64_t end)
{
    const upsample_plan *p = ctx->plan;
    if (p->elem_size != 4 || !ctx->use_runs || !nn_cpu_avx512()) {
        return false;
    }
    const bool direct_stream = ctx->stream && ctx->map->num_runs == 1 && (p->out_len & 15) == 0 &&
                               ((uintptr_t)ctx->out & 63) == 0;
    uint32_t *buffer = NULL;
    if (ctx->stream && !direct_stream) {
        buffer = (uint32_t *)malloc((size_t)p->out_len * sizeof(uint32_t));
        if (buffer == NULL) {
            return false;
        }
    }
    for (int64_t row = begin; row < end; row++) {
        const uint32_t *in = (const uint32_t *)ctx->in + row * p->in_len;
        uint32_t *out = (uint32_t *)ctx->out + row * p->out_len;
        if (buffer != NULL) {
            upsample_row_b32_avx512(ctx->map, in, buffer, false);
            nn_copy_row_nt(out, buffer, (size_t)p->out_len * sizeof(uint32_t));
        } else {
            upsample_row_b32_avx512(ctx->map, in, out, direct_stream);
        }
    }
    if (ctx->stream) {
        nn_streaming_fence();
    }
    free(buffer);
    return true;
}
#endif

static void upsample_rows(void *vctx, int64_t begin, int64_t end)
{
    const upsample_ctx *ctx = (const upsample_ctx *)vctx;
    const upsample_plan *p = ctx->plan;
    const size_t in_bytes = (size_t)p->in_len * p->elem_size;
    const size_t out_bytes = (size_t)p->out_len * p->elem_size;
#if NN_HAVE_X86_SIMD
    if (upsample_rows_b32_avx512(ctx, begin, end)) {
        return;
    }
#endif
    /* large outputs: build each row in a buffer and stream it out (no buffer: plain stores) */
    unsigned char *row_buffer = ctx->stream ? (unsigned char *)malloc(out_bytes) : NULL;
    for (int64_t row = begin; row < end; row++) {
        const unsigned char *in = ctx->in + (size_t)row * in_bytes;
        unsigned char *out = ctx->out + (size_t)row * out_bytes;
        if (row_buffer != NULL) {
            upsample_write_row(ctx, in, row_buffer);
            nn_copy_row_nt(out, row_buffer, out_bytes);
        } else {
            upsample_write_row(ctx, in, out);
        }
    }
    if (row_buffer != NULL) {
        nn_streaming_fence();
        free(row_buffer);
    }
}

static aclnnStatus upsample_kernel(const nn_launch *launch)
{
    const upsample_plan *p = (const upsample_plan *)launch->plan;
    nn_ne_map map;
    if (!nn_ne_map_build(&map, p->in_len, p->out_len, p->scales, p->float_reciprocal)) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the index map (L %lld -> %lld).",
                        (long long)p->in_len, (long long)p->out_len);
    }
    upsample_ctx ctx = {p, &map, nn_ne_map_runs_are_long(&map),
                        (const unsigned char *)launch->operands[0].data,
                        (unsigned char *)launch->operands[1].data,
                        nn_use_streaming_stores((uint64_t)(p->rows * p->out_len) * p->elem_size)};
    nn_launch_set_path(launch, p->elem_size == 4 && ctx.use_runs && nn_cpu_avx512() ? "upsample_avx512_runs"
                               : ctx.use_runs                                      ? "upsample_runs"
                                                                                   : "upsample_per_output");
    const double row_bytes = (double)(p->in_len + p->out_len) * (double)p->elem_size;
    nn_parallel_for(p->rows, nn_pu_grain(p->rows, row_bytes), upsample_rows, &ctx);
    nn_ne_map_free(&map);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *outputSize,
                                const aclTensor *out)
{
    char shape[128], want[128];
    aclnnStatus st = nn_check_product_dtype(OP, nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D), "self", self);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "out", out, "self", self);
    if (st != ACLNN_SUCCESS) {
        return st;
    }
    /* CANN checks the sizes before the rank; we do the same whenever the values exist. */
    if (self->ndim >= 3 && outputSize->size >= 1) {
        const int64_t N = self->dims[0], C = self->dims[1], L = self->dims[2];
        const int64_t out_len = outputSize->values[0];
        if (!(N > 0 && C > 0 && L > 0 && out_len > 0)) {
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            OP ": Input and output sizes should greater than 0, but got self (N: %lld, "
                            "C: %lld, L: %lld) outputSize [%lld].", (long long)N, (long long)C,
                            (long long)L, (long long)out_len);
        }
    }
    if (self->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self must be 3-D [N, C, L], got %llu-D %s.",
                        (unsigned long long)self->ndim,
                        nn_shape_str(shape, sizeof shape, self->ndim, self->dims));
    }
    if (outputSize->size != 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected outputSize equals to 1, but got size %llu.",
                        (unsigned long long)outputSize->size);
    }
    /* Stricter than CANN: formats the CPU kernel can read as N, C, L. */
    if (self->format != ACL_FORMAT_ND && self->format != ACL_FORMAT_NCL) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": self format must be ND or NCL, got %s.",
                        nn_format_name(self->format));
    }
    if (out->format != ACL_FORMAT_ND && out->format != ACL_FORMAT_NCL) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out format must be ND or NCL, got %s.",
                        nn_format_name(out->format));
    }
    const int64_t expected[3] = {self->dims[0], self->dims[1], outputSize->values[0]};
    if (out->ndim != 3 || memcmp(out->dims, expected, sizeof expected) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out shape should be %s, got %s.",
                        nn_shape_str(want, sizeof want, 3, expected),
                        nn_shape_str(shape, sizeof shape, out->ndim, out->dims));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnUpsampleNearestExact1dGetWorkspaceSize(const aclTensor *self,
                                                        const aclIntArray *outputSize, double scales,
                                                        aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("self", self), NN_TENSOR_ARG("out", out),
                           NN_ARRAY_ARG("outputSize", outputSize)};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = check_params(self, outputSize, out);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    /* Every size is > 0 here, so CANN's "empty self -> success" branch cannot be reached. */
    upsample_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.rows = self->dims[0] * self->dims[1];
    plan.in_len = self->dims[2];
    plan.out_len = outputSize->values[0];
    plan.scales = scales;
    plan.float_reciprocal = nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D)->float_reciprocal;
    plan.elem_size = nn_dtype_size(self->dtype);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = upsample_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {self}, .outputs = {out}},
                            workspaceSize, executor);
}

aclnnStatus aclnnUpsampleNearestExact1d(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
