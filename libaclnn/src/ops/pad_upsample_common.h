/*
 * pad_upsample_common.h - helpers shared by the ReplicationPad2d and UpsampleNearestExact1d
 * operator files (internal; every function is static inline).
 *
 *  - the nearest-exact index map: PyTorch/CANN compute the source index of output position d
 *    as min(floor(fl32((d + 0.5) * scale)), L - 1) with a float32 scale.  That map is monotone,
 *    so every input index i owns a contiguous range of outputs [lo(i), lo(i) + count(i)).  We
 *    turn it into "runs": maximal stretches of inputs with the same count, so that both the
 *    forward (repeat each input count times) and the backward (sum count consecutive
 *    gradients) run as simple, vectorisable loops over each run.
 */
#ifndef NN_OPS_PAD_UPSAMPLE_COMMON_H
#define NN_OPS_PAD_UPSAMPLE_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/nn_exec.h"
#include "ops/checks.h"

/* Hot loops: compiled for AVX2 and baseline x86-64, the loader picks one (base/nn_simd.h). */
#define NN_PU_HOT NN_CLONES_AVX2

/* AVX-512 kernels (explicit intrinsics) run only when nn_cpu_avx512() says so: not without
 * AVX-512 (valgrind's emulated CPU has none) nor with ACLNN_NO_SIMD=1 / ACLNN_NO_AVX512=1. */
#include "base/nn_simd.h"

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

/* Builds the map in_len -> out_len (both > 0).  Returns false on allocation failure. */
static inline bool nn_ne_map_build(nn_ne_map *map, int64_t in_len, int64_t out_len, double scales,
                                   bool float_reciprocal)
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
    const float scale = nn_nearest_exact_scale(in_len, out_len, scales, float_reciprocal);
    for (int64_t d = 0; d < out_len; d++) {
        map->src[d] = nn_nearest_exact_src(d, scale, in_len);
        map->lo[map->src[d] + 1]++; /* counts, turned into starts below */
    }
    for (int64_t i = 0; i < in_len;) {
        const int64_t count = map->lo[i + 1];
        int64_t j = i + 1;
        while (j < in_len && map->lo[j + 1] == count) {
            j++;
        }
        nn_ne_run *run = &map->runs[map->num_runs++];
        run->i0 = i;
        run->i1 = j;
        run->count = count;
        if (count > map->max_count) {
            map->max_count = count;
        }
        i = j;
    }
    for (int64_t i = 0; i < in_len; i++) {
        map->lo[i + 1] += map->lo[i];
    }
    for (int64_t r = 0; r < map->num_runs; r++) {
        map->runs[r].d0 = map->lo[map->runs[r].i0];
    }
    return true;
}

/* True when the run list is worth walking: runs average at least 8 inputs. */
static inline bool nn_ne_map_runs_are_long(const nn_ne_map *map)
{
    return map->num_runs * 8 <= map->in_len;
}

/* Grain for nn_parallel_for: items of `item_bytes` each, at least ~256 KiB of traffic per
 * range, and everything in one range when the whole job moves less than ~1 MiB (threads do
 * not pay off below that on this kind of machine). */
static inline int64_t nn_pu_grain(int64_t items, double item_bytes)
{
    if (items <= 1 || item_bytes * (double)items < (double)(1 << 20)) {
        return items > 0 ? items : 1;
    }
    double grain = (double)(256 << 10) / (item_bytes > 1 ? item_bytes : 1);
    if (grain < 1) {
        grain = 1;
    }
    return (int64_t)grain;
}

#endif /* NN_OPS_PAD_UPSAMPLE_COMMON_H */
