/*
 * upsample_bw_portable.c - the UpsampleNearestExact1dBackward for any CPU (upsample.h): the rows
 * of upsample_bw_rows.inc built for baseline x86-64.  A gather: stretches of equal count k
 * become "gi[t] = go[k t] + ... + go[k t + k-1]" loops, irregular maps walk lo(), pure
 * downsampling is a zero fill plus one pick per gradient; every gi element is 0 + its gradients
 * in increasing d order.  fp16/bf16 accumulate in fp32 and round once.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/upsample/upsample.h"

#define UPSAMPLE_BW_ROWS nn_upsample_bw_rows_portable
#include "kernels/upsample/upsample_bw_rows.inc"

/* ---- A2/A3: the Cube's NaN spread ------------------------------------------------------------
 * The A2/A3 kernel computes a slide of cube_slide gradInput cells [c0, c1) as a matrix product
 * gradOutput[m, K] x R with K = [first(c0), first(c1)) and R[j][i] = 1 where cell i owns
 * gradient j, else 0 (ops-cv:image/upsample_nearest_exact2d_grad/op_kernel/upsample_nearest_exact2d_grad_kernel.h,
 * calculateRadioTensorW and calculateWidthExtension).  Under IEEE arithmetic 0 * inf and 0 * NaN
 * are NaN, so a non-finite gradient in K makes every cell of the slide that does not own it NaN;
 * the cells' own sums are right otherwise.  A slide whose K is empty multiplies a single column -
 * gradient first(c0), or 0 when that is past the row - by zeros.  Slides start at multiples of
 * cube_slide whatever the core count (upsample_nearest_exact2d_grad_tiling.cpp, GetNeedCoreNumW),
 * so the spread does not depend on it.  The NaN written is the quiet NaN with a clear sign (the
 * Cube's NaN bits are not in the sources). */

/* A gradient of `dtype` (FLOAT, FLOAT16 or BF16) is inf or NaN: its exponent bits are all ones. */
static inline bool nonfinite_at(const void *row, aclDataType dtype, int64_t at)
{
    if (dtype == ACL_FLOAT) {
        uint32_t bits;
        memcpy(&bits, (const float *)row + at, sizeof bits);
        return (bits & 0x7f800000u) == 0x7f800000u;
    }
    const uint16_t h = ((const uint16_t *)row)[at], mask = dtype == ACL_FLOAT16 ? 0x7c00 : 0x7f80;
    return (h & mask) == mask;
}

/* One slide [c0, c1): NaN into the cells that do not own a non-finite gradient of K. */
static void cube_slide(const nn_upsample_bw_plan *p, const void *go, aclDataType go_dtype, float *gi,
                       int64_t c0, int64_t c1, bool row_nonfinite)
{
    const float scale = p->gather_scale;
    const int64_t k0 = nn_nearest_exact_first_owned(c0, scale, p->out_len);
    const int64_t k1 = nn_nearest_exact_first_owned(c1, scale, p->out_len);
    if (k0 == k1) { /* one column times zeros */
        if (nonfinite_at(go, go_dtype, k0 < p->out_len ? k0 : 0)) {
            for (int64_t i = c0; i < c1; i++) gi[i] = NAN;
        }
        return;
    }
    /* a non-finite gradient leaves its owner's sum non-finite */
    if (!row_nonfinite || nn_upsample_bw_count_nonfinite(gi + c0, c1 - c0) == 0) return;
    int64_t first = -1, last = -1;
    for (int64_t d = k0; d < k1; d++) {
        if (nonfinite_at(go, go_dtype, d)) {
            if (first < 0) first = d;
            last = d;
        }
    }
    if (first < 0) return; /* an overflowed sum of finite gradients */
    int64_t owned_from = k0;
    for (int64_t i = c0; i < c1; i++) {
        const int64_t owned_to = nn_nearest_exact_first_owned(i + 1, scale, p->out_len);
        if (first < owned_from || last >= owned_to) gi[i] = NAN;
        owned_from = owned_to;
    }
}

int64_t *nn_upsample_bw_empty_slides(const nn_upsample_bw_plan *p, int64_t *count)
{
    const int64_t Lin = p->in_len, S = p->cube_slide;
    int64_t *starts = malloc((size_t)((Lin + S - 1) / S) * sizeof *starts);
    *count = 0;
    if (starts == NULL) return NULL;
    for (int64_t c0 = 0; c0 < Lin; c0 += S) {
        const int64_t c1 = c0 + S < Lin ? c0 + S : Lin;
        if (nn_nearest_exact_first_owned(c0, p->gather_scale, p->out_len) ==
            nn_nearest_exact_first_owned(c1, p->gather_scale, p->out_len)) {
            starts[(*count)++] = c0;
        }
    }
    return starts;
}

void nn_upsample_bw_cube_row(const nn_upsample_bw_ctx *ctx, const void *go, aclDataType go_dtype, float *gi,
                             bool row_nonfinite)
{
    const nn_upsample_bw_plan *p = ctx->plan;
    const int64_t Lin = p->in_len, S = p->cube_slide;
    /* A non-finite gradient leaves its owner's sum non-finite (unless no cell owns it). */
    if (row_nonfinite) {
        for (int64_t c0 = 0; c0 < Lin; c0 += S) cube_slide(p, go, go_dtype, gi, c0, c0 + S < Lin ? c0 + S : Lin, true);
        return;
    }
    for (int64_t k = 0; k < ctx->cube_empty_count; k++) {   /* only they can change */
        const int64_t c0 = ctx->cube_empty[k];
        cube_slide(p, go, go_dtype, gi, c0, c0 + S < Lin ? c0 + S : Lin, false);
    }
}

/* ---- the AVX-512 windows' table (nn_upsample_bw_window_build) ------------------------------- */

void nn_upsample_bw_window_free(nn_upsample_bw_window *w)
{
    free(w->chunk);
    memset(w, 0, sizeof *w);
}

/* The chunk of inputs from i0: as many as fit (at most 16, gradients within 32). */
static void build_chunk(nn_upsample_bw_chunk *c, const int64_t *lo, int64_t i0, int64_t in_len)
{
    int64_t n = 1;
    while (n < 16 && i0 + n < in_len && lo[i0 + n + 1] - lo[i0] <= 32) {
        n++;
    }
    memset(c, 0, sizeof *c);
    c->i0 = (int32_t)i0;
    c->n = (int32_t)n;
    c->base = (int32_t)lo[i0];
    c->span = (int32_t)(lo[i0 + n] - lo[i0]);
    for (int64_t l = 0; l < n; l++) {
        for (int64_t t = 0; t < lo[i0 + l + 1] - lo[i0 + l]; t++) {
            c->term_mask[t] |= (uint16_t)(1u << l);
            c->index[t][l] = (int32_t)(lo[i0 + l] + t - lo[i0]);
        }
    }
}

bool nn_upsample_bw_window_build(nn_upsample_bw_window *w, const nn_ne_map *map)
{
    memset(w, 0, sizeof *w);
    if (map->in_len > INT32_MAX || map->out_len > INT32_MAX) {
        return false; /* the chunks hold 32-bit positions */
    }
    const int64_t *lo = map->lo;
    int64_t terms = 0;
    for (int64_t i = 0; i < map->in_len; i++) {
        const int64_t count = lo[i + 1] - lo[i];
        if (count > NN_UPSAMPLE_BW_WINDOW_TERMS) {
            return false;
        }
        terms = count > terms ? count : terms;
    }
    /* at most in_len chunks (each takes at least one input) */
    w->chunk = (nn_upsample_bw_chunk *)malloc((size_t)map->in_len * sizeof *w->chunk);
    if (w->chunk == NULL) {
        return false;
    }
    w->terms = terms;
    for (int64_t i0 = 0; i0 < map->in_len; i0 += w->chunk[w->chunks++].n) {
        build_chunk(&w->chunk[w->chunks], lo, i0, map->in_len);
    }
    return true;
}
