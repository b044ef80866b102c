/*
 * im2col_prelu_common.h - small helpers shared by the four operator files of the Im2col and
 * Prelu pairs (im2col.c, im2col_backward.c, prelu.c, prelu_backward.c).
 *
 * Everything is `static inline`: no symbol leaves the translation unit that includes it.
 */
#ifndef NN_IM2COL_PRELU_COMMON_H
#define NN_IM2COL_PRELU_COMMON_H

#include <stdint.h>
#include <string.h>

#include "exec/nn_exec.h"
#include "ops/checks.h"

/* Overflow-safe int64 arithmetic for shape formulas built from user attributes. */
static inline bool nn_ip_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool nn_ip_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }


/* Number of sliding-window positions along one axis:
 *   floor((in + 2*pad - (dil*(k-1) + 1)) / stride) + 1
 * Returns false when the formula overflows int64 (absurd attributes). */
static inline bool nn_ip_window_count(int64_t in, int64_t k, int64_t dil, int64_t pad,
                                      int64_t stride, int64_t *count)
{
    int64_t span, twice_pad, padded, num;
    if (!nn_ip_mul(dil, k - 1, &span) || !nn_ip_add(span, 1, &span) ||
        !nn_ip_mul(pad, 2, &twice_pad) || !nn_ip_add(in, twice_pad, &padded) ||
        __builtin_sub_overflow(padded, span, &num)) {
        return false;
    }
    *count = nn_floor_div(num, stride) + 1;
    return true;
}

#endif /* NN_IM2COL_PRELU_COMMON_H */
