/*
 * replication_pad2d.c - aclnnReplicationPad2d: pads the last two dims of a 3-D [C,H,W] or 4-D
 * [N,C,H,W] tensor by repeating the edge values.
 *
 *   padding = [left, right, top, bottom]  (PyTorch's order: W first, then H)
 *   out[..., i, j] = self[..., clamp(i - top, 0, H-1), clamp(j - left, 0, W-1)]
 *
 * A pure copy, so the kernel only moves bytes: each output row is the clamped source row with
 * its first/last element repeated left/right times.  Work is split over output rows.  With
 * AVX-512: large outputs take the line kernel (non-temporal stores), rows of at most 64 bytes
 * one lane permutation each (kernels/pad/pad_fw_short_avx512.c); else the row loops.
 *
 * Checks follow CANN's op_api order and codes.  Stricter than CANN (docs/compatibility.md):
 * negative pads and pads >= the padded dim are rejected.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_replication_pad2d.h"
#include "exec/nn_exec.h"
#include "kernels/pad/pad_fw.h"
#include "ops/pad_upsample_common.h"
#include "ops/products.h"

#define OP "aclnnReplicationPad2d"


typedef struct pad_plan {
    int64_t planes;          /* N*C (C for a 3-D self) */
    int64_t H, W, Ho, Wo;
    int64_t top, left;
    size_t elem_size;
} pad_plan;

typedef struct pad_ctx {
    const pad_plan *plan;
    const unsigned char *in;
    unsigned char *out;
    bool stream;             /* large output: build rows in a buffer, stream them out */
    nn_pad_fw_row_fn row;    /* the row loop of the CPU's tier (kernels/pad/pad_fw_rows.inc) */
} pad_ctx;

#define PAD_CHUNK_BYTES 16384

/* Source rows are prefetched this many bytes ahead when the output is streamed (one core alone
 * did not keep enough misses in flight to stream at full speed otherwise).  Not when it is not:
 * there (on a Zen 4 with a large L3) the prefetches made the copy ~15 % slower. */
#define PREFETCH_BYTES 8192

/* Prefetches the `bytes` that follow PREFETCH_BYTES after `src` (the source rows of a later
 * output row; may lie past the tensor: a prefetch never faults). */
static inline void prefetch_source_row(const void *src, size_t bytes)
{
    if (bytes > 4096) {
        return; /* long rows: the hardware prefetcher keeps up on its own */
    }
    const uintptr_t ahead = (uintptr_t)src + (uintptr_t)PREFETCH_BYTES;
    for (uintptr_t b = 0; b < bytes + 64; b += 64) {
        __builtin_prefetch((const void *)(ahead + b), 0, 3);
    }
}

/* Writes output rows [begin, end) at dst (which holds them consecutively). */
static void pad_write_rows(const pad_ctx *ctx, int64_t begin, int64_t end, unsigned char *dst)
{
    const pad_plan *p = ctx->plan;
    const size_t es = p->elem_size;
    const int64_t right = p->Wo - p->W - p->left;
    /* stepped: no division per row (short rows, e.g. fp16 128-wide, would otherwise spend a
     * noticeable share of their time in two divisions) */
    pad_fw_walk walk = pad_fw_walk_from(begin, p->Ho);
    for (int64_t row = begin; row < end; row++, dst += (size_t)p->Wo * es) {
        const unsigned char *src = pad_fw_walk_next(&walk, ctx->in, p->H, p->Ho, p->top, p->W * (int64_t)es);
        if (ctx->stream)
            prefetch_source_row(src, (size_t)p->W * es);
        ctx->row(es, src, dst, p->W, p->left, right);
    }
}

/* A row too long for the chunk buffer, streamed in place: the left edge fill and the right
 * edge fill with ordinary stores, the interior (the bulk) copied from the source row with
 * non-temporal stores. */
static void pad_write_long_row_streamed(const pad_ctx *ctx, int64_t row, unsigned char *dst)
{
    const pad_plan *p = ctx->plan;
    const size_t es = p->elem_size;
    const int64_t right = p->Wo - p->W - p->left;
    int64_t src_i = row % p->Ho - p->top;
    src_i = src_i < 0 ? 0 : (src_i >= p->H ? p->H - 1 : src_i);
    const unsigned char *src = ctx->in + ((size_t)((row / p->Ho) * p->H + src_i) * (size_t)p->W) * es;
    for (int64_t j = 0; j < p->left; j++) memcpy(dst + (size_t)j * es, src, es);
    nn_copy_row_nt(dst + (size_t)p->left * es, src, (size_t)p->W * es);
    unsigned char *tail = dst + (size_t)(p->left + p->W) * es;
    for (int64_t j = 0; j < right; j++) memcpy(tail + (size_t)j * es, src + (size_t)(p->W - 1) * es, es);
}

/* Output rows [begin, end).  Streaming: short rows are built a few at a time in an L1 buffer
 * (edges and interior together, so whole output lines are streamed and none is read for
 * ownership) and copied out with nn_copy_row_nt; long rows are streamed in place. */
static void pad_rows(void *vctx, int64_t begin, int64_t end)
{
    const pad_ctx *ctx = (const pad_ctx *)vctx;
    const size_t row_bytes = (size_t)ctx->plan->Wo * ctx->plan->elem_size;
    if (!ctx->stream) {
        pad_write_rows(ctx, begin, end, ctx->out + (size_t)begin * row_bytes);
        return;
    }
    if (row_bytes > PAD_CHUNK_BYTES) {
        for (int64_t row = begin; row < end; row++)
            pad_write_long_row_streamed(ctx, row, ctx->out + (size_t)row * row_bytes);
        nn_streaming_fence();
        return;
    }
    _Alignas(64) unsigned char chunk[PAD_CHUNK_BYTES];
    const int64_t rows_per_chunk = (int64_t)(PAD_CHUNK_BYTES / row_bytes);
    for (int64_t row = begin; row < end; row += rows_per_chunk) {
        const int64_t stop = row + rows_per_chunk < end ? row + rows_per_chunk : end;
        pad_write_rows(ctx, row, stop, chunk);
        nn_copy_row_nt(ctx->out + (size_t)row * row_bytes, chunk, (size_t)(stop - row) * row_bytes);
    }
    nn_streaming_fence();
}

/* Bits [lo, hi) of a 64-bit byte mask (clipped to [0, 64)). */
static uint64_t byte_range_mask(int64_t lo, int64_t hi)
{
    lo = lo < 0 ? 0 : lo;
    hi = hi > 64 ? 64 : hi;
    if (hi <= lo)
        return 0;
    const uint64_t below_hi = hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return below_hi & ~(((uint64_t)1 << lo) - 1);
}

/* The line kernel's table (pad_fw.h) for this launch's tensors: for each offset a row can start
 * at within a 64-byte line, which of its lines are whole source copies and the masks of the
 * others.  False when the kernel does not apply: element sizes other than 1, 2, 4, 8 bytes,
 * tensors not aligned to their element, or more edge lines per row than the table holds (pads
 * of hundreds of bytes). */
static bool pad_lines_init(pad_fw_lines *t, const pad_plan *p, const unsigned char *in, unsigned char *out)
{
    const size_t es = p->elem_size;
    if ((es != 1 && es != 2 && es != 4 && es != 8) || (uintptr_t)in % es != 0 || (uintptr_t)out % es != 0)
        return false;
    const int64_t R = p->Wo * (int64_t)es, L = p->left * (int64_t)es, I = p->W * (int64_t)es;
    int64_t g = R, b = 64;
    while (b != 0) {
        const int64_t rest = g % b;
        g = b;
        b = rest;
    }
    *t = (pad_fw_lines){.in = in, .out = out, .H = p->H, .W = p->W, .Ho = p->Ho, .Wo = p->Wo,
                        .top = p->top, .left = p->left, .es = es, .period = 64 / g};
    for (int64_t q = 0; q < t->period; q++) {
        pad_fw_phase *ph = &t->phase[q];
        const int64_t start = (int64_t)(((uintptr_t)out + (uintptr_t)(q * R)) & 63);
        int n = 0;
        ph->full_off = L;
        /* lines k (at row byte k*64 - start) inside the interior: k in [k0, k1] */
        const int64_t k0 = (L + start + 63) / 64, k1 = (L + I - 64 + start) / 64;
        for (int64_t k = 0, off = -start; off < R; k++, off += 64) {
            if (k == k0 && k0 <= k1 && L + I - 64 + start >= 0) {
                ph->full = (int32_t)(k1 - k0 + 1);
                ph->full_off = off;
                k = k1;
                off += (k1 - k0) * 64;
                continue;
            }
            if (n == PAD_FW_MAX_EDGES)
                return false;
            ph->edge[n++] = (pad_fw_edge){off, byte_range_mask(L - off, L + I - off),
                                          byte_range_mask(-off, L - off),
                                          byte_range_mask(L + I - off, R - off),
                                          byte_range_mask(-off, R - off)};
            if (ph->full == 0)
                ph->head++;
            else
                ph->tail++;
        }
    }
    return true;
}

static void pad_rows_lines(void *vlines, int64_t begin, int64_t end)
{
    nn_pad_fw_rows_nt_avx512((const pad_fw_lines *)vlines, begin, end);
}

static void pad_rows_short(void *vshort, int64_t begin, int64_t end)
{
    nn_pad_fw_rows_short_avx512((const pad_fw_short *)vshort, begin, end);
}

/* Whether the AVX-512 line kernel (non-temporal stores) should write this output rather than
 * ordinary stores: once input + output reach 3/4 of the last-level cache.  Measured on a Zen 4
 * with a 32 MiB L3, N8 C64 128x128 pad 1 (in + out 34 MB fp16/bf16, 68 MB fp32):
 *   - one core cannot keep enough read-for-ownership misses in flight: 1 thread, repeated
 *     calls, the line kernel took fp32 1.59 vs 2.18 ms, fp16 0.71 vs 0.84 ms (at half the L3,
 *     17 MB, the two were even);
 *   - 2 threads: fp32 1.43 vs 1.76 ms.  fp16 alone in a loop was faster with ordinary stores
 *     (0.56 vs 0.69 ms: they keep part of a working set near the L3's size cached for the next
 *     identical call), but not once anything else runs between the calls: in bench/run.py,
 *     which alternates with PyTorch's own tensors, the line kernel took 0.86 vs 1.07 ms (fp16)
 *     and 0.91 vs 1.21 ms (bf16).
 * The cache counted is what Linux reports, but at most PAD_LLC_PER_THREAD per thread of the call:
 * where the last-level cache is the whole socket's (an Intel Xeon: Linux in a 2-vCPU guest of an
 * Emerald Rapids host reports 300 MiB) the other cores' work owns most of it, and the rule above
 * never chose the line kernel.  There, N8 C64 128x128 at 2 threads ran with ordinary stores at
 * 0.56-1.31x PyTorch, with the line kernel at 2.08-4.32x (bench/run.py, alternated runs,
 * docs/kernels_pad_upsample.md).  4 MiB is a Zen 4 core's share of its CCD's 32 MiB.
 * ACLNN_STREAMING_STORES=1/0 forces it on (whenever it applies) / off. */
#define PAD_LLC_PER_THREAD ((uint64_t)4 << 20)
static bool pad_lines_pay_off(const pad_plan *p)
{
    if (nn_use_streaming_stores(0))
        return true; /* forced on */
    if (!nn_use_streaming_stores(UINT64_MAX))
        return false; /* forced off, or no streaming stores on this target */
    const uint64_t rows = (uint64_t)(p->planes * p->Ho);
    const uint64_t bytes = (rows * (uint64_t)p->Wo + (uint64_t)(p->planes * p->H * p->W)) * p->elem_size;
    uint64_t llc = nn_last_level_cache_bytes();
    if (llc == 0)
        return nn_use_streaming_stores(rows * (uint64_t)p->Wo * p->elem_size);
    const uint64_t share = PAD_LLC_PER_THREAD * (uint64_t)(nn_num_threads() > 0 ? nn_num_threads() : 1);
    if (llc > share) llc = share;
    return bytes * 4 >= llc * 3;
}

static aclnnStatus pad_kernel(const nn_launch *launch)
{
    const pad_plan *p = (const pad_plan *)launch->plan;
    const int64_t rows = p->planes * p->Ho;
    const unsigned char *in = (const unsigned char *)launch->operands[0].data;
    unsigned char *out = (unsigned char *)launch->operands[1].data;
    /* bytes moved per output row: the row written plus (about) the source row read */
    const double row_bytes = (double)(p->Wo + p->W) * (double)p->elem_size;
    const int64_t grain = nn_pu_grain(rows, row_bytes);
    if (nn_cpu_avx512() && pad_lines_pay_off(p)) {
        pad_fw_lines *lines = (pad_fw_lines *)malloc(sizeof *lines);
        if (lines != NULL && pad_lines_init(lines, p, in, out)) {
            nn_launch_set_path(launch, "pad_lines_nt_avx512");
            nn_parallel_for(rows, grain, pad_rows_lines, lines);
            free(lines);
            return ACLNN_SUCCESS;
        }
        free(lines);
    }
    if (nn_cpu_avx512() && nn_pad_fw_short_fits(p->elem_size, p->Wo)) {
        /* short rows (below the line kernel's sizes): one permutation per row */
        const pad_fw_short t = {in, out, p->H, p->W, p->Ho, p->Wo, p->top, p->left, p->elem_size};
        nn_launch_set_path(launch, "pad_short_rows_avx512");
        nn_parallel_for(rows, grain, pad_rows_short, (void *)&t);
        return ACLNN_SUCCESS;
    }
    const bool avx2 = nn_cpu_features_get()->avx2;
    pad_ctx ctx = {p, in, out, nn_use_streaming_stores_past_cache((uint64_t)(rows * p->Wo) * p->elem_size),
                   avx2 ? nn_pad_fw_row_avx2 : nn_pad_fw_row_portable};
    nn_launch_set_path(launch, avx2 ? "pad_rows_avx2" : "pad_rows_portable");
    nn_parallel_for(rows, grain, pad_rows, &ctx);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtypes(const aclTensor *self, const aclTensor *out)
{
    /* the product's list (ops/products.c): Ascend950 adds eight dtypes, all copied by size */
    const nn_product *pr = nn_product_row(NN_PR_REPLICATION_PAD2D);
    aclnnStatus st = nn_check_product_dtype(OP, pr, "self", self);
    if (st == ACLNN_SUCCESS) st = nn_check_product_dtype(OP, pr, "out", out);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "out", out, "self", self);
    return st;
}

static aclnnStatus check_shapes(const aclTensor *self, const aclIntArray *padding,
                                const aclTensor *out)
{
    char got[128], want[128], found[128];
    if (self->ndim < 3 || self->ndim > 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": self must be 3-D or 4-D, got %llu-D %s.", (unsigned long long)self->ndim,
                        nn_shape_str(got, sizeof got, self->ndim, self->dims));
    }
    if (out->ndim != self->ndim) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": self, out dim should be same: self is %llu-D, out is %llu-D.",
                        (unsigned long long)self->ndim, (unsigned long long)out->ndim);
    }
    if (padding->size != 4) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": padding length should be 4, but got %llu.",
                        (unsigned long long)padding->size);
    }
    aclnnStatus status = nn_check_pad_values(OP, self, padding->values);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    int64_t expected[4];
    const uint64_t nd = self->ndim;
    for (uint64_t d = 0; d < nd; d++) {
        expected[d] = self->dims[d];
    }
    const int64_t *pad = padding->values;
    if (__builtin_add_overflow(expected[nd - 2], pad[2] + pad[3], &expected[nd - 2]) ||
        __builtin_add_overflow(expected[nd - 1], pad[0] + pad[1], &expected[nd - 1]) ||
        memcmp(expected, out->dims, nd * sizeof(int64_t)) != 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": out shape should be %s (self %s padded by [%lld, %lld, %lld, %lld]), "
                        "got %s.", nn_shape_str(want, sizeof want, nd, expected),
                        nn_shape_str(got, sizeof got, self->ndim, self->dims), (long long)pad[0],
                        (long long)pad[1], (long long)pad[2], (long long)pad[3],
                        nn_shape_str(found, sizeof found, out->ndim, out->dims));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnReplicationPad2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *padding,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("self", self), NN_ARRAY_ARG("padding", padding), NN_TENSOR_ARG("out", out)};
    const nn_arg tensors[] = {args[0], args[2]};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = nn_check_same_format(OP, tensors, NN_ARG_COUNT(tensors));
    if (status == ACLNN_SUCCESS) status = check_dtypes(self, out);
    if (status == ACLNN_SUCCESS) {
        status = check_shapes(self, padding, out);
    }
    if (status != ACLNN_SUCCESS) {
        return status;
    }

    const uint64_t nd = self->ndim;
    if (nn_tensor_is_empty(self) || nn_tensor_is_empty(out)) {
        /* CANN: only a 4-D self with N == 0 (and non-zero C, H, W) may be empty. */
        if (nd == 3 || self->dims[1] == 0 || self->dims[2] == 0 || self->dims[3] == 0) {
            char shape[128];
            return nn_error(ACLNN_ERR_PARAM_INVALID,
                            OP ": Expected 3D or 4D tensor with possibly 0 batch size and other "
                            "non-zero dimensions for input, got self %s.",
                            nn_shape_str(shape, sizeof shape, nd, self->dims));
        }
        return nn_finish_phase1(OP, &(nn_phase1_end){0}, workspaceSize, executor);
    }

    pad_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.planes = nd == 4 ? self->dims[0] * self->dims[1] : self->dims[0];
    plan.H = self->dims[nd - 2];
    plan.W = self->dims[nd - 1];
    plan.Ho = out->dims[nd - 2];
    plan.Wo = out->dims[nd - 1];
    plan.left = padding->values[0];
    plan.top = padding->values[2];
    plan.elem_size = nn_dtype_size(self->dtype);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = pad_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {self}, .outputs = {out},
                                             .input_names = {"self"}, .output_names = {"out"}},
                            workspaceSize, executor);
}

aclnnStatus aclnnReplicationPad2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
