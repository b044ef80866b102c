/*
 * upsample_fwd_portable.c - the UpsampleNearestExact1d forward for any CPU (upsample.h): the
 * rows of upsample_fwd_rows.inc built for baseline x86-64.  A pure gather (bit copies): long
 * stretches of equal repeat count become "repeat each element k times" loops, irregular maps use
 * the per-output source table; large outputs are built row by row in a buffer and streamed.
 * Also the table of the AVX-512 windows (upsample_fwd_window_avx512.c), plain C built for any
 * CPU.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_simd.h"
#include "kernels/upsample/upsample.h"

#define UPSAMPLE_ROWS nn_upsample_rows_portable
#include "kernels/upsample/upsample_fwd_rows.inc"

/* ---- the AVX-512 windows' table (nn_upsample_window_build) ---------------------------------- */

void nn_upsample_window_free(nn_upsample_window *w)
{
    free(w->base);
    free(w->load_mask);
    free(w->index);
    memset(w, 0, sizeof *w);
}

/* Lane l of chunk k's permutation, in the element width (the permutation reads only the low
 * bits of each lane, so unused lanes hold 0). */
static void set_lane(unsigned char *index, size_t es, int64_t lane, int64_t value)
{
    switch (es) {
    case 2: { const uint16_t v = (uint16_t)value; memcpy(index + lane * 2, &v, 2); break; }
    case 4: { const uint32_t v = (uint32_t)value; memcpy(index + lane * 4, &v, 4); break; }
    default: { const uint64_t v = (uint64_t)value; memcpy(index + lane * 8, &v, 8); break; }
    }
}

bool nn_upsample_window_build(nn_upsample_window *w, const nn_ne_map *map, size_t elem_size)
{
    memset(w, 0, sizeof *w);
    if (elem_size != 2 && elem_size != 4 && elem_size != 8) {
        return false;
    }
    const int64_t lanes = 64 / (int64_t)elem_size, out_len = map->out_len;
    const int64_t chunks = (out_len + lanes - 1) / lanes;
    for (int64_t k = 0; k < chunks; k++) {
        const int64_t last = (k + 1) * lanes < out_len ? (k + 1) * lanes - 1 : out_len - 1;
        if (map->src[last] - map->src[k * lanes] >= lanes) {
            return false; /* the window is wider than a vector */
        }
    }
    w->chunks = chunks;
    w->lanes = lanes;
    w->base = (int64_t *)malloc((size_t)chunks * sizeof *w->base);
    w->load_mask = (uint64_t *)malloc((size_t)chunks * sizeof *w->load_mask);
    w->index = calloc((size_t)chunks, 64);
    if (w->base == NULL || w->load_mask == NULL || w->index == NULL) {
        nn_upsample_window_free(w);
        return false;
    }
    for (int64_t k = 0; k < chunks; k++) {
        const int64_t first = k * lanes, n = out_len - first < lanes ? out_len - first : lanes;
        const int64_t base = map->src[first];
        w->base[k] = base;
        /* inputs base .. src[last]: all inside the row (src < in_len) */
        w->load_mask[k] = nn_low_bits64((map->src[first + n - 1] - base + 1) * (int64_t)elem_size);
        for (int64_t l = 0; l < n; l++) {
            set_lane((unsigned char *)w->index + 64 * k, elem_size, l, map->src[first + l] - base);
        }
    }
    w->last_store_mask = nn_low_bits64((out_len - (chunks - 1) * lanes) * (int64_t)elem_size);
    return true;
}
