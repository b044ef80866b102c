/*
 * pad_upsample_common.h - helpers shared by the ReplicationPad2d and UpsampleNearestExact1d
 * operator files (internal; every function is static inline): the thread grain, and the
 * nearest-exact index map, which lives with the upsample kernels (kernels/upsample/upsample.h).
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
#include "kernels/upsample/upsample.h"

/* AVX-512 kernels (explicit intrinsics) run only when nn_cpu_avx512() says so: not without
 * AVX-512 (valgrind's emulated CPU has none) nor with ACLNN_NO_SIMD=1 / ACLNN_NO_AVX512=1. */
#include "base/nn_simd.h"

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
