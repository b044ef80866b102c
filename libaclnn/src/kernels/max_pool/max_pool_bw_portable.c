/*
 * max_pool_bw_portable.c - the MaxPool2dWithMask backward for any CPU, and the plane loop every
 * path runs in (max_pool_bw.h).
 *
 * One input plane at a time, in an fp32 tile that stays in cache: the tile is cleared, each
 * output's gradient is added to its argmax cell in output order (oh, then ow), and the finished
 * tile is written to gradInput exactly once (rounded once for fp16/bf16, with streaming stores
 * for large tensors).  So every gradInput element is the fp32 sum of its contributions in a
 * fixed order - increasing output position - whatever the thread count: bit-identical results,
 * and for fp32 bit-identical to PyTorch, which adds in the same order.  Every index is
 * bounds-checked; a bad one is skipped (nothing is written outside the plane) and noted, and the
 * launch fails.
 *
 * A 1x1 kernel (padding is then 0) maps output (oh, ow) to input (oh*sH, ow*sW): the mask is not
 * read at all, as on the device, whose 1x1 mask is a legacy bit pattern.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/max_pool/max_pool_bw.h"

/* ------------------------------------------------------------------------------------------ */
/* Stores                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The tile is written out in blocks of this many elements: the block is still in L1 when it is
 * cleared right after, and each block costs one nn_copy_row_nt call and one prefetch update. */
enum { STORE_BLOCK = 1024 };

/* Planes whose fp32 tile is at most half this are scattered several at a time into consecutive
 * tiles of at most this many bytes in all and stored together (plan->scatter_group).  A
 * streaming store of each 8x8 fp32 plane (256 bytes) right after its scatter took 5x as long as
 * ordinary stores: N32 C12544 8x8, 1 thread, 58 ms against 11 (torch 12); 4 KiB groups took it
 * to 10.6 ms, and 16 KiB ones 3x3 24x24 planes (2.3 KiB, ungrouped at 4 KiB) from 12.6 to 10.3. */
enum { SCATTER_GROUP_BYTES = 16384 };

/* Streams that the next plane will read; the store loops touch them ahead of time so that the
 * reads overlap the writes instead of alternating with them. */
typedef struct prefetch_plan {
    const char *a, *b;      /* next plane's gradOutput and indices */
    int64_t a_bytes, b_bytes;
    int64_t a_done, b_done; /* bytes already prefetched */
} prefetch_plan;

/* Keeps the prefetched share of each stream level with the written share of the tile
 * (`done` of `total` elements), one cache line at a time.  Called once per block, so the two
 * divisions are negligible. */
static inline void prefetch_step(prefetch_plan *pf, int64_t done, int64_t total)
{
    if (!pf) return;
    const int64_t want_a = pf->a_bytes * done / total, want_b = pf->b_bytes * done / total;
    /* (read, keep in every cache level): prefetcht0 on x86-64, PRFM PLDL1KEEP on aarch64 */
    for (; pf->a_done < want_a; pf->a_done += 64) __builtin_prefetch(pf->a + pf->a_done, 0, 3);
    for (; pf->b_done < want_b; pf->b_done += 64) __builtin_prefetch(pf->b + pf->b_done, 0, 3);
}

/* Writes the fp32 tile to dst (streamed when `stream`) and clears the tile for the next plane. */
static void store_f32(float *dst, float *tile, int64_t n, bool stream, prefetch_plan *pf)
{
    if (!stream) {
        memcpy(dst, tile, (size_t)n * sizeof(float));
        memset(tile, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i += STORE_BLOCK) {
        const int64_t m = n - i < STORE_BLOCK ? n - i : STORE_BLOCK;
        prefetch_step(pf, i + m, n);
        nn_copy_row_nt(dst + i, tile + i, (size_t)m * sizeof(float));
        memset(tile + i, 0, (size_t)m * sizeof(float));
    }
}

/* Rounds the fp32 tile once to fp16/bf16 into an L1 buffer, writes that (streamed when
 * `stream`), and clears the tile for the next plane. */
static void store_narrow(uint16_t *dst, float *tile, int64_t n, aclDataType dtype, bool stream, prefetch_plan *pf)
{
    uint16_t narrow[STORE_BLOCK] __attribute__((aligned(64)));
    for (int64_t i = 0; i < n; i += STORE_BLOCK) {
        const int64_t m = n - i < STORE_BLOCK ? n - i : STORE_BLOCK;
        prefetch_step(pf, i + m, n);
        if (dtype == ACL_FLOAT16)
            nn_f32_to_f16_n(tile + i, narrow, (size_t)m);
        else
            nn_f32_to_bf16_n(tile + i, narrow, (size_t)m);
        memset(tile + i, 0, (size_t)m * sizeof(float));
        if (stream)
            nn_copy_row_nt(dst + i, narrow, (size_t)m * sizeof(uint16_t));
        else
            memcpy(dst + i, narrow, (size_t)m * sizeof(uint16_t));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Kernels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void note_bad_index(bw_ctx *c, int64_t position)
{
    int64_t seen = atomic_load(&c->first_bad);
    while (position < seen && !atomic_compare_exchange_weak(&c->first_bad, &seen, position)) {
    }
}

/* Adds one plane's gradients into the cleared tile in output order. Returns the plane-local
 * position of the first bad index, or -1. */
static int64_t scatter_plane_int32(float *restrict tile, const float *restrict grad, const unsigned char *mask,
                                   int64_t count, int64_t plane_size)
{
    int64_t first_bad = -1;
    for (int64_t o = 0; o < count; ++o) {
        int32_t index;
        memcpy(&index, mask + o * 4, 4); /* little-endian int32; unaligned-safe */
        if ((uint64_t)(int64_t)index >= (uint64_t)plane_size) {
            if (first_bad < 0) first_bad = o;
            continue;
        }
        tile[index] += grad[o];
    }
    return first_bad;
}

static int64_t scatter_plane_int64(float *restrict tile, const float *restrict grad, const int64_t *indices,
                                   int64_t count, int64_t plane_size)
{
    int64_t first_bad = -1;
    for (int64_t o = 0; o < count; ++o) {
        const int64_t index = indices[o];
        if ((uint64_t)index >= (uint64_t)plane_size) {
            if (first_bad < 0) first_bad = o;
            continue;
        }
        tile[index] += grad[o];
    }
    return first_bad;
}

/* One NHWC plane (n, ch): the same scatter and single rounding as an NCHW plane, reading
 * gradOutput and indices and writing gradInput with the channel stride C.  Indices are flat
 * h*W + w in the plane, as the forward writes them. */
static void scatter_plane_nhwc(bw_ctx *c, int64_t plane, float *tile)
{
    const bw_plan *p = c->plan;
    const mp_geometry *g = &p->g;
    const int64_t C = g->channels, HW = g->height * g->width, P = g->out_height * g->out_width;
    const int64_t n = plane / C, ch = plane % C;
    const int64_t out_base = n * P * C + ch, in_base = n * HW * C + ch;
    int64_t first_bad = -1;
    for (int64_t o = 0; o < P; ++o) {
        const int64_t at = out_base + o * C;
        int64_t index;
        if (p->indices_int64) {
            memcpy(&index, c->indices + at * 8, 8);
        } else {
            int32_t v32;
            memcpy(&v32, c->indices + at * 4, 4);
            index = v32;
        }
        if ((uint64_t)index >= (uint64_t)HW) {
            if (first_bad < 0) first_bad = o;
            continue;
        }
        tile[index] += mp_load_f32(c->grad_out, at, p->dtype);
    }
    if (first_bad >= 0) note_bad_index(c, plane * P + first_bad);
    for (int64_t i = 0; i < HW; ++i) {
        unsigned char *dst = c->grad_in + (in_base + i * C) * (int64_t)nn_dtype_size(p->dtype);
        if (p->dtype == ACL_FLOAT) {
            memcpy(dst, &tile[i], 4);
        } else {
            const uint16_t h = p->dtype == ACL_FLOAT16 ? nn_f32_to_f16(tile[i]) : nn_f32_to_bf16(tile[i]);
            memcpy(dst, &h, 2);
        }
        tile[i] = 0.0f;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Paths and scratch                                                                           */
/* ------------------------------------------------------------------------------------------ */

bool nn_mp_bw_tiled_2x2_fits(const bw_plan *plan)
{
    const mp_geometry *g = &plan->g;
    const int64_t HW = g->height * g->width, W = g->width;
    return mp_is_plain(g) && !plan->indices_int64 && g->kernel_h == 2 && g->kernel_w == 2 && g->stride_h == 2 &&
           g->stride_w == 2 && g->pad_h == 0 && g->pad_w == 0 && HW + 2 * W <= INT32_MAX;
}

bool nn_mp_bw_slots_3x3s2_fits(const bw_plan *plan)
{
    const mp_geometry *g = &plan->g;
    const int64_t HW = g->height * g->width, W = g->width;
    return mp_is_plain(g) && !plan->indices_int64 && g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 2 &&
           g->stride_w == 2 && g->pad_h <= 1 && g->pad_w <= 1 && HW + W <= INT32_MAX;
}

/* Narrower planes than these go to the scatter: the fast paths pay a set-up per plane (pending
 * rows cleared, block masks, the line stage) that a few short rows do not earn back.  Measured at
 * 1 thread on 2 MiB of fp32 input (docs/kernels_max_pool.md, "Small planes"): 3x3 s2 fp32 8x8
 * planes 105 ns a plane by the slots against 26 by the scatter, even at 64x64, ahead from 80;
 * fp16/bf16 ahead from 48; 2x2 s2 16x16 126 against 98 ns, ahead from 24-32, every dtype.  The
 * plain C 2x2 write (no AVX2) is ahead from 8x8 planes: N32 fp32 8x8 14 against 49 ms, 16x16 8.3
 * against 15 ms; at 4x4 it takes 1.9x the scatter's time.  A launch that streams (a large
 * gradInput, out of cache) gives the fast paths less to earn back: N32 fp32 at 1 thread, 2x2
 * 16x16 7.3 (AVX-512) / 5.3 (AVX2) against 10 ms, 8x8 15 against 10; 3x3 32x32 8.0 against 10.4,
 * bf16 8.0 against 9.0 - so the bounds are 16 and 32 there.
 * ACLNN_MP_BW_MIN_WIDTH=N sets one bound for every path (0: the fast paths at any width, which
 * the tests of their edges use). */
static int64_t fast_path_min_width(const bw_plan *plan)
{
    const char *env = getenv("ACLNN_MP_BW_MIN_WIDTH");
    if (env != NULL && env[0] != '\0') {
        char *end;
        const long long value = strtoll(env, &end, 10);
        if (*end == '\0' && value >= 0) return value;
    }
    if (plan->g.kernel_h == 2) return !nn_cpu_features_get()->avx2 ? 8 : plan->stream_stores ? 16 : 32;
    if (plan->stream_stores) return 32;
    return plan->dtype == ACL_FLOAT ? 72 : 48;
}

bool nn_mp_bw_fast_path_pays(const bw_plan *plan)
{
    return plan->g.width >= fast_path_min_width(plan);
}

void nn_mp_bw_layout_scratch(bw_plan *plan)
{
    const mp_geometry *g = &plan->g;
    const int64_t HW = g->height * g->width, P = g->out_height * g->out_width, W = g->width;
    const bool fast_path = plan->tiled_2x2 || plan->tiled_2x2_avx2 || plan->tiled_2x2_portable || plan->slots_3x3s2 ||
                           plan->slots_3x3s2_avx2;
    const int64_t tile_bytes = HW * (int64_t)sizeof(float);
    plan->scatter_group = 1;
    if (!fast_path && !g->channels_last && tile_bytes > 0 && tile_bytes <= SCATTER_GROUP_BYTES / 2)
        plan->scatter_group = SCATTER_GROUP_BYTES / tile_bytes;
    int64_t at = (plan->scatter_group * HW + 15) / 16 * 16;
    plan->widened_offset = at;
    if (plan->dtype != ACL_FLOAT) at += (P + 15) / 16 * 16;
    plan->band_offset = at;
    if (plan->tiled_2x2 || plan->tiled_2x2_avx2) {
        const int64_t flush = plan->tiled_2x2 ? STAGE_FLUSH_BYTES : AVX2_STAGE_FLUSH_BYTES;
        /* the line stage: a flush's worth, a row pair, carried-over and front room (the last
         * step of a row stores inside it: masked, or through a small array on AVX2) */
        at += stage_region_floats(W, flush);
    } else if (plan->tiled_2x2_portable) {
        at += (2 * W + 15) / 16 * 16; /* one row pair of cells */
    } else if (plan->slots_3x3s2) {
        /* the pending row's two halves (one more block of slots for the last one's loads), the
         * blocks' masks (a slot_block per 16 slots fits in 16 floats' room), then the staging
         * buffer: a flush's worth, two more rows, a cache line of carried-over cells and a cache
         * line of room in front (the first block's column -1 is masked off) */
        plan->slot_stride = ((W + g->pad_w + 1) / 2 + 15) / 16 * 16 + 16;
        at += 3 * plan->slot_stride + stage_region_floats(W, STAGE_FLUSH_BYTES);
    } else if (plan->slots_3x3s2_avx2) {
        at += 6 * nn_mp_bw_slots_avx2_span(g->out_width) + stage_region_floats(W, AVX2_STAGE_FLUSH_BYTES);
    }
    plan->scratch_floats = at;
}

const char *nn_mp_bw_path(const bw_plan *plan)
{
    if (plan->mask_ignored) return "max_pool_bw_portable_1x1_copy";
    if (plan->v1_mask) return "max_pool_bw_v1_mask";
    if (plan->g.channels_last) return "max_pool_bw_portable_scatter_nhwc";
    if (plan->slots_3x3s2) return "max_pool_bw_avx512_slots_3x3s2";
    if (plan->tiled_2x2) return "max_pool_bw_avx512_tiled_2x2";
    if (plan->tiled_2x2_avx2) return "max_pool_bw_avx2_tiled_2x2";
    if (plan->tiled_2x2_portable) return "max_pool_bw_portable_tiled_2x2";
    if (plan->slots_3x3s2_avx2) return "max_pool_bw_avx2_slots_3x3s2";
    return "max_pool_bw_portable_scatter";
}

/* ------------------------------------------------------------------------------------------ */
/* The plane loop                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Planes [plane, plane + count) scattered into consecutive tiles (their gradInput planes are
 * consecutive too) and stored in one go, the tiles cleared behind; `more`: the thread's claim goes
 * on after them, so the next planes' streams are prefetched while storing. */
static void scatter_and_store(bw_ctx *c, int64_t plane, int64_t count, float *tile, float *widened, bool more)
{
    const bw_plan *p = c->plan;
    const int64_t HW = p->g.height * p->g.width, P = p->g.out_height * p->g.out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype), index_bytes = p->indices_int64 ? 8 : 4;
    const unsigned char *go = c->grad_out + plane * P * elem;
    const unsigned char *mask = c->indices + plane * P * index_bytes;
    for (int64_t j = 0; j < count; ++j, go += P * elem, mask += P * index_bytes) {
        const float *grad = (const float *)go;
        if (p->dtype == ACL_FLOAT16) {
            nn_f16_to_f32_n((const uint16_t *)go, widened, (size_t)P);
            grad = widened;
        } else if (p->dtype == ACL_BF16) {
            nn_bf16_to_f32_n((const uint16_t *)go, widened, (size_t)P);
            grad = widened;
        }
        const int64_t bad = p->indices_int64
                                ? scatter_plane_int64(tile + j * HW, grad, (const int64_t *)mask, P, HW)
                                : scatter_plane_int32(tile + j * HW, grad, mask, P, HW);
        if (bad >= 0) note_bad_index(c, (plane + j) * P + bad);
    }
    /* go and mask now point at the next planes */
    prefetch_plan pf = {(const char *)go, (const char *)mask, more ? count * P * elem : 0,
                        more ? count * P * index_bytes : 0, 0, 0};
    unsigned char *gi = c->grad_in + plane * HW * elem;
    prefetch_plan *ahead = p->stream_stores ? &pf : NULL;
    if (p->dtype == ACL_FLOAT)
        store_f32((float *)gi, tile, count * HW, p->stream_stores, ahead);
    else
        store_narrow((uint16_t *)gi, tile, count * HW, p->dtype, p->stream_stores, ahead);
}

/* Whether a fast path wrote the plane (false: it has none, or gave the plane back because an index
 * lies outside its window; the scatter then redoes it).  The fast paths read fp16/bf16 gradients
 * as they are. */
static bool fast_path_plane(bw_ctx *c, int64_t plane, float *band)
{
    const bw_plan *p = c->plan;
    const bool any = p->slots_3x3s2 || p->tiled_2x2 || p->tiled_2x2_avx2 || p->tiled_2x2_portable || p->slots_3x3s2_avx2;
    if (!any) return false;
    const int64_t HW = p->g.height * p->g.width, P = p->g.out_height * p->g.out_width;
    const int64_t elem = (int64_t)nn_dtype_size(p->dtype);
    const unsigned char *go = c->grad_out + plane * P * elem;
    const unsigned char *mask = c->indices + plane * P * (p->indices_int64 ? 8 : 4);
    unsigned char *gi = c->grad_in + plane * HW * elem;
    if ((p->slots_3x3s2 && nn_mp_bw_slots_3x3s2_plane(p, gi, go, mask, band)) ||
        (p->tiled_2x2 && nn_mp_bw_tiled_2x2_plane_avx512(p, gi, go, mask, band)) ||
        (p->tiled_2x2_avx2 && nn_mp_bw_tiled_2x2_plane_avx2(p, gi, go, mask, band)) ||
        (p->tiled_2x2_portable && nn_mp_bw_tiled_2x2_plane_portable(p, gi, go, mask, band)) ||
        (p->slots_3x3s2_avx2 && nn_mp_bw_slots_3x3s2_plane_avx2(p, gi, go, mask, band)))
        return true;
    if (p->stream_stores) nn_streaming_fence(); /* its streamed part before the scatter's stores */
    return false;
}

/* One thread's work: the scratch of its first chunk index, and planes claimed in chunks
 * (nn_claims) until none is left, so a thread that starts late on a busy host still takes its
 * share.  Each plane is computed the same way whoever claims it. */
void nn_mp_bw_chunks(void *vctx, int64_t chunk_begin, int64_t chunk_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const bw_plan *p = c->plan;
    const int64_t HW = p->g.height * p->g.width;
    (void)chunk_end;
    float *tile = c->scratch + chunk_begin * p->scratch_floats;
    float *widened = tile + p->widened_offset, *band = tile + p->band_offset;
    /* kept clear by the store loops after this */
    memset(tile, 0, (size_t)(p->scatter_group * HW) * sizeof(float));
    int64_t first, last;
    while (nn_claim_next(&c->claims, &first, &last)) {
        for (int64_t plane = first; plane < last;) {
            if (p->g.channels_last) {
                scatter_plane_nhwc(c, plane++, tile);
            } else if (fast_path_plane(c, plane, band)) {
                plane++;
            } else {
                const int64_t count = last - plane < p->scatter_group ? last - plane : p->scatter_group;
                scatter_and_store(c, plane, count, tile, widened, plane + count < last);
                plane += count;
            }
        }
    }
    if (p->stream_stores) nn_streaming_fence();
}

/* 1x1 kernel: gradInput[oh*sH, ow*sW] = gradOutput[oh, ow], zero elsewhere (bit copies). */
void nn_mp_bw_1x1_planes(void *vctx, int64_t plane_begin, int64_t plane_end)
{
    bw_ctx *c = (bw_ctx *)vctx;
    const mp_geometry *g = &c->plan->g;
    const int64_t elem = (int64_t)nn_dtype_size(c->plan->dtype);
    const int64_t H = g->height, W = g->width, Wo = g->out_width;
    for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
        const unsigned char *go = c->grad_out + plane * g->out_height * Wo * elem;
        unsigned char *gi = c->grad_in + plane * H * W * elem;
        memset(gi, 0, (size_t)(H * W * elem));
        for (int64_t oh = 0; oh < g->out_height; ++oh) {
            unsigned char *row = gi + oh * g->stride_h * W * elem;
            const unsigned char *src = go + oh * Wo * elem;
            if (g->stride_w == 1) {
                memcpy(row, src, (size_t)(Wo * elem));
                continue;
            }
            for (int64_t ow = 0; ow < Wo; ++ow) memcpy(row + ow * g->stride_w * elem, src + ow * elem, (size_t)elem);
        }
    }
}
