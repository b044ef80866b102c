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

/* Hot loops are compiled twice, for AVX2 and for the baseline ISA, and picked at load time
 * (the library itself is built without -march).  no-trapping-math lets GCC compute a product
 * that a select may discard (if-conversion), which is what makes `x > 0 ? x : w * x` a
 * branchless vector blend; it changes no result (no reassociation, no contraction). */
#define NN_IP_HOT __attribute__((target_clones("avx2", "default"), optimize("no-trapping-math")))

/* The dtypes the four operators accept on A2/A3. */
static inline bool nn_ip_is_float_dtype(aclDataType dtype)
{
    return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16;
}

#define NN_IP_FLOAT_DTYPE_LIST "[FLOAT, FLOAT16, BFLOAT16]"

/* A non-NULL handle that is not a live object (destroyed, or not an aclTensor at all) would
 * crash CANN; we report it instead (design.md decision 7). */
static inline aclnnStatus nn_ip_check_tensor(const char *op, const char *name, const aclTensor *t)
{
    if (t == NULL) {
        return nn_null_tensor(op, name);
    }
    if (!nn_tensor_alive(t)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be a live aclTensor, got a destroyed "
                        "or foreign handle.", op, name);
    }
    return ACLNN_SUCCESS;
}

static inline aclnnStatus nn_ip_check_array(const char *op, const char *name, const aclIntArray *a)
{
    if (a == NULL) {
        return nn_null_array(op, name);
    }
    if (!nn_int_array_alive(a)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be a live aclIntArray, got a destroyed "
                        "or foreign handle.", op, name);
    }
    return ACLNN_SUCCESS;
}

static inline aclnnStatus nn_ip_check_float_dtype(const char *op, const char *name,
                                                  const aclTensor *t)
{
    if (!nn_ip_is_float_dtype(t->dtype)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: Tensor %s not implemented for %s, should be in dtype support list "
                        NN_IP_FLOAT_DTYPE_LIST ".", op, name, nn_dtype_name(t->dtype));
    }
    return ACLNN_SUCCESS;
}

/* Row conversions between a FLOAT/FLOAT16/BFLOAT16 buffer and fp32 (base's). */
#define nn_ip_to_f32 nn_to_f32_n
#define nn_ip_from_f32 nn_from_f32_n

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
