/*
 * max_pool_fw_portable.c - the max-pool forward kernel (max_pool_fw.h): any CPU.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/max_pool/max_pool_fw.h"

/* One window cell (row `row`, column offset `col_off` = b - pW) applied to a run of outputs
 * [lo, hi) of one output row: take the cell when it is greater than the running best or NaN.
 * Branch-free so the compiler vectorises it over ow; `stride` is a compile-time constant at the
 * call sites for the common strides. */
static inline __attribute__((always_inline)) void apply_cell(const float *restrict row, int64_t col_off,
                                                             int64_t stride, int32_t flat_row, int64_t lo,
                                                             int64_t hi, float *restrict best,
                                                             int32_t *restrict arg)
{
    /* 32-bit lane arithmetic: a plane holds fewer than 2^31 cells (checked at phase 1). */
    const float *restrict cells = row + col_off;
    const int32_t first = flat_row + (int32_t)col_off;
    for (int32_t ow = (int32_t)lo; ow < (int32_t)hi; ++ow) {
        const int32_t offset = ow * (int32_t)stride;
        const float v = cells[offset];
        const float b = best[ow];
        const bool take = (v > b) | (v != v);
        best[ow] = take ? v : b;
        arg[ow] = take ? first + offset : arg[ow];
    }
}

/* Pools one plane whose values (widened to fp32) are `vals`; writes each output's argmax into
 * argmax_out[o] (int32, plane-local ih*W+iw).  The window cells are visited in PyTorch's order
 * (kh outer, kw inner) for a whole output row at a time, which gives the same result as scanning
 * each window on its own: the first maximum wins, a NaN always wins (so the last NaN does), and
 * a window with nothing above -inf keeps its first in-range cell. */
static void pool_plane(const float *restrict vals, const mp_geometry *g, float *restrict best,
                       int32_t *restrict argmax_out)
{
    const int64_t H = g->height, W = g->width, Wo = g->out_width;
    const int64_t sW = g->stride_w, pW = g->pad_w;
    for (int64_t oh = 0; oh < g->out_height; ++oh) {
        const int64_t ih0 = oh * g->stride_h - g->pad_h;
        const int64_t h_lo = ih0 < 0 ? 0 : ih0;
        const int64_t h_hi = ih0 + g->kernel_h < H ? ih0 + g->kernel_h : H;
        int32_t *restrict arg = argmax_out + oh * Wo;
        for (int64_t ow = 0; ow < Wo; ++ow) {
            const int64_t iw0 = ow * sW - pW;
            best[ow] = -INFINITY;
            arg[ow] = (int32_t)(h_lo * W + (iw0 < 0 ? 0 : iw0));
        }
        for (int64_t ih = h_lo; ih < h_hi; ++ih) {
            const float *row = vals + ih * W;
            const int32_t flat_row = (int32_t)(ih * W);
            for (int64_t b = 0; b < g->kernel_w; ++b) {
                const int64_t col_off = b - pW;
                /* outputs whose cell column ow*sW + col_off lies in [0, W) */
                int64_t lo = col_off >= 0 ? 0 : nn_ceil_div(-col_off, sW);
                int64_t hi = W - 1 - col_off < 0 ? 0 : (W - 1 - col_off) / sW + 1;
                if (hi > Wo) hi = Wo;
                if (lo >= hi) continue;
                if (sW == 1)
                    apply_cell(row, col_off, 1, flat_row, lo, hi, best, arg);
                else if (sW == 2)
                    apply_cell(row, col_off, 2, flat_row, lo, hi, best, arg);
                else
                    apply_cell(row, col_off, sW, flat_row, lo, hi, best, arg);
            }
        }
    }
}

void nn_mp_fw_pool_plane(const float *vals, const mp_geometry *g, float *best, int32_t *argmax_out)
{
    pool_plane(vals, g, best, argmax_out);
}

/* out[o] = raw input element at argmax[o] (bit-exact, any element size). */
static void gather_values(const unsigned char *plane_in, unsigned char *plane_out, const int32_t *argmax,
                          int64_t count, size_t elem)
{
    if (elem == 4) {
        const uint32_t *src = (const uint32_t *)plane_in;
        uint32_t *dst = (uint32_t *)plane_out;
        for (int64_t o = 0; o < count; ++o) dst[o] = src[argmax[o]];
    } else {
        const uint16_t *src = (const uint16_t *)plane_in;
        uint16_t *dst = (uint16_t *)plane_out;
        for (int64_t o = 0; o < count; ++o) dst[o] = src[argmax[o]];
    }
}

static void widen_plane(const unsigned char *plane_in, float *dst, int64_t count, aclDataType dtype)
{
    if (dtype == ACL_FLOAT16)
        nn_f16_to_f32_n((const uint16_t *)plane_in, dst, (size_t)count);
    else
        nn_bf16_to_f32_n((const uint16_t *)plane_in, dst, (size_t)count);
}

/* Writes one plane's argmax into the indices tensor in the requested form (the int32 forms
 * with streaming stores when the plan says so). */
static void store_indices(const fw_plan *p, unsigned char *indices, int64_t plane, const int32_t *argmax)
{
    const int64_t P = p->g.out_height * p->g.out_width;
    switch (p->index_kind) {
    case MP_INDEX_MASK_STREAM: /* x86-64 is little-endian: the host int32 bytes are the mask bytes */
    case MP_INDEX_INT32:
        if (p->stream_stores)
            nn_copy_row_nt(indices + plane * P * 4, argmax, (size_t)P * 4);
        else
            memcpy(indices + plane * P * 4, argmax, (size_t)P * 4);
        break;
    case MP_INDEX_INT64: {
        int64_t *dst = (int64_t *)(indices + plane * P * 8);
        for (int64_t o = 0; o < P; ++o) dst[o] = argmax[o];
        break;
    }
    default: /* legacy mask: written once for the whole call */
        break;
    }
}

/* Share [first, last) of `units` of the mask container's tail [tail_start, total), as addresses
 * [*begin, *end): the shares are cut at cache lines of the container (the first starts and the
 * last ends where the tail does), so each line is written whole by one unit. */
static void tail_share(unsigned char *container, int64_t tail_start, int64_t total, int64_t units, int64_t first,
                       int64_t last, uintptr_t *begin, uintptr_t *end)
{
    const int64_t tail = total - tail_start;
    const uintptr_t base = (uintptr_t)container, lo = base + (uintptr_t)tail_start, hi = base + (uintptr_t)total;
    const uintptr_t a = (base + (uintptr_t)(tail_start + (int64_t)(((__int128)tail * first) / units))) & ~(uintptr_t)63;
    const uintptr_t b = (base + (uintptr_t)(tail_start + (int64_t)(((__int128)tail * last) / units))) & ~(uintptr_t)63;
    *begin = first == 0 || a < lo ? lo : a;
    *end = last == units ? hi : b < lo ? lo : b;
}

/* Zeroes [begin, end) with streaming stores, the zeros coming from one cached block. */
static void zero_nt(uintptr_t begin, uintptr_t end)
{
    static const unsigned char zeros[4096] __attribute__((aligned(64)));
    while (begin < end) {
        const size_t n = end - begin < sizeof zeros ? (size_t)(end - begin) : sizeof zeros;
        nn_copy_row_nt((void *)begin, zeros, n);
        begin += n;
    }
}

void nn_mp_fw_chunks(void *vctx, int64_t chunk_begin, int64_t chunk_end)
{
    fw_ctx *c = (fw_ctx *)vctx;
    const fw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t planes = mp_planes(g), HW = g->height * g->width, P = g->out_height * g->out_width;
    const size_t elem = nn_dtype_size(p->dtype);
    const bool widen = p->dtype != ACL_FLOAT && !p->plane_avx512;
    (void)chunk_end;
    /* This thread's scratch (its first chunk index's): the fp32 copy of one input plane
     * (fp16/bf16 only), then one plane of argmax, a row of running maxima, a plane of output
     * values and the keyed path's rows. */
    float *widened = c->scratch + chunk_begin * p->scratch_floats;
    int32_t *argmax = (int32_t *)(widened + (p->dtype == ACL_FLOAT ? 0 : HW));
    float *best = (float *)(argmax + P);
    unsigned char *values = (unsigned char *)(best + g->out_width);
    /* Planes claimed in chunks (nn_claims): a thread that starts late on a busy host, or
     * shares its core, still leaves the other threads work instead of a fixed half. */
    int64_t first, last;
    while (nn_claim_next(&c->claims, &first, &last)) {
        for (int64_t plane = first; plane < last; ++plane) {
            const unsigned char *in = c->self + plane * HW * (int64_t)elem;
            unsigned char *out = c->out + plane * P * (int64_t)elem;
            /* streamed: the values are gathered in cache and copied out whole */
            unsigned char *out_values = p->stream_stores ? values : out;
            /* This plane's share of the container tail (everything after the int32 stream),
             * written next to its stream while the memory traffic is spread over the planes;
             * the AVX-512 kernel streams the share's whole lines out over its rows. */
            uintptr_t zero_begin = 0, zero_end = 0;
            bool written = false; /* values and indices already in out and indices */
            if (p->index_kind == MP_INDEX_MASK_STREAM)
                tail_share(c->indices, planes * P * 4, p->index_bytes, planes, plane, plane + 1, &zero_begin,
                           &zero_end);
            if (p->plane_avx512) {
                const unsigned char *next = plane + 1 < last ? in + HW * (int64_t)elem : NULL;
                uintptr_t lines_begin = zero_begin, lines_end = zero_begin;
                if (p->stream_stores && zero_end > zero_begin) {
                    lines_begin = (zero_begin + 63) & ~(uintptr_t)63;
                    lines_end = zero_end & ~(uintptr_t)63;
                    if (lines_end < lines_begin) lines_end = lines_begin = zero_begin;
                }
                /* streamed int32 indices go out with the values as their lines fill */
                const bool drain = p->stream_stores &&
                                   (p->index_kind == MP_INDEX_MASK_STREAM || p->index_kind == MP_INDEX_INT32);
                const fw_plane_io io = {
                    .in = in, .next = next, .argmax = argmax, .values = out_values,
                    .zeros = (unsigned char *)lines_begin, .zero_lines = (int64_t)(lines_end - lines_begin) / 64,
                    .out_nt = drain ? out : NULL,
                    .indices_nt = drain ? c->indices + plane * P * 4 : NULL,
                    .keys = p->keys_offset ? widened + p->keys_offset : NULL};
                written = nn_mp_fw_plane_avx512(&io, g, p->dtype) == MP_PLANE_WRITTEN;
                /* what the kernel left: the unaligned ends, or all of it when not streaming */
                if (lines_end > lines_begin) {
                    memset((void *)zero_begin, 0, lines_begin - zero_begin);
                    memset((void *)lines_end, 0, zero_end - lines_end);
                    zero_begin = zero_end;
                }
            } else {
                const float *vals = (const float *)in;
                if (widen) {
                    widen_plane(in, widened, HW, p->dtype);
                    vals = widened;
                }
                pool_plane(vals, g, best, argmax);
                gather_values(in, out_values, argmax, P, elem);
            }
            if (!written) {
                if (p->stream_stores) nn_copy_row_nt(out, values, (size_t)P * elem);
                store_indices(p, c->indices, plane, argmax);
            }
            if (zero_end <= zero_begin) continue; /* no tail (WithIndices) or done in the kernel */
            if (p->stream_stores)
                zero_nt(zero_begin, zero_end);
            else
                memset((void *)zero_begin, 0, zero_end - zero_begin);
        }
    }
    if (p->stream_stores) nn_streaming_fence();
}

/* Legacy 1x1 pattern: uint16 M[N][C1][1][G+1][16]; the kernel writes 0xFFFF to
 * the first 16*G words of every (n, c1) slab; everything else is zero. */
void nn_mp_fw_legacy_mask(const fw_plan *p, unsigned char *mask)
{
    const mp_geometry *g = &p->g;
    const int64_t slab = mp_mask_row_bytes(g), written = slab - 32; /* all blocks but the spare one */
    memset(mask, 0, (size_t)p->index_bytes);
    for (int64_t s = 0; s < mp_channel_groups(g); ++s) memset(mask + s * slab, 0xFF, (size_t)written);
}

