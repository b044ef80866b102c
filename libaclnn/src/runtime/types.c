/*
 * types.c - aclDataTypeSize and the public fp16 <-> float helpers.
 *
 * The public conversions keep CANN's documented quirks (they differ from the IEEE conversions
 * the kernels use, nn_f16_to_f32/nn_f32_to_f16 in base):
 *   aclFloat16ToFloat treats exponent 31 as an ordinary exponent (0x7C00 -> 65536.0f);
 *   aclFloatToFloat16 rounds to nearest even and saturates (NaN/Inf/overflow -> +/-65504).
 */
#include <math.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"

ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType)
{
    switch ((int)dataType) {
    case ACL_DT_UNDEFINED:
    case ACL_STRING:
        return 0;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
    case ACL_INT4:
    case ACL_UINT1:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_BF16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
        return 8;
    case ACL_COMPLEX128:
        return 16;
    default:
        /* CANN's table falls into an 8-byte default for everything else, including the
         * FLOAT6/FLOAT4 types; we return the same. */
        return 8;
    }
}

ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value)
{
    unsigned sign = (value >> 15) & 1u;
    unsigned exponent = (value >> 10) & 0x1Fu;
    unsigned mantissa = value & 0x3FFu;
    float magnitude;
    if (exponent == 0)
        magnitude = ldexpf((float)mantissa, -24); /* subnormal (or zero) */
    else
        magnitude = ldexpf((float)(mantissa | 0x400u), (int)exponent - 25); /* exponent 31 too */
    return sign ? -magnitude : magnitude;
}

ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t abs_bits = bits & 0x7FFFFFFFu;
    if (abs_bits >= 0x7F800000u) /* Inf or NaN saturate */
        return (uint16_t)(sign | 0x7BFFu);

    int32_t exponent = (int32_t)(abs_bits >> 23) - 127 + 15;
    uint32_t mantissa = abs_bits & 0x7FFFFFu;
    if (exponent >= 31)
        return (uint16_t)(sign | 0x7BFFu);
    if (exponent <= 0) {
        /* Subnormal half or zero: shift the full significand, round to nearest even. */
        if (exponent < -10)
            return sign; /* below half of the smallest subnormal: rounds to zero */
        uint32_t significand = mantissa | 0x800000u;
        uint32_t shift = (uint32_t)(14 - exponent); /* 13 + (1 - exponent) */
        uint32_t half = significand >> shift;
        uint32_t rest = significand & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u)))
            half++;
        return (uint16_t)(sign | half); /* a carry turns into the smallest normal: correct */
    }
    uint32_t half = ((uint32_t)exponent << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++;
    if (half >= 0x7C00u) /* rounded up into Inf: saturate */
        half = 0x7BFFu;
    return (uint16_t)(sign | half);
}
