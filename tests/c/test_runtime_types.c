/*
 * test_runtime_types.c - aclDataTypeSize (CANN's dtype size table, including the 8-byte
 * default branch) and the public fp16 helpers with CANN's documented quirks (§3.1):
 * aclFloat16ToFloat treats exponent 31 as a normal exponent, aclFloatToFloat16 rounds to
 * nearest even and saturates.  The reference for finite values is the compiler's IEEE
 * _Float16 type, or the CPU's F16C conversions where the compiler has no _Float16 (clang
 * before 15 on x86-64).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

static void test_data_type_size(void)
{
    static const struct { int dtype; size_t size; } table[] = {
        {-1, 0}, {0, 4}, {1, 2}, {2, 1}, {3, 4}, {4, 1}, {6, 2}, {7, 2}, {8, 4}, {9, 8},
        {10, 8}, {11, 8}, {12, 1}, {13, 0}, {16, 8}, {17, 16}, {27, 2}, {29, 1}, {30, 1},
        {33, 4}, {34, 1}, {35, 1}, {36, 1}, {37, 1},
        /* FLOAT6/FLOAT4 and unknown values fall into CANN's 8-byte default branch. */
        {38, 8}, {39, 8}, {40, 8}, {41, 8}, {5, 8}, {14, 8}, {28, 8}, {100, 8}, {-7, 8},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        size_t got = aclDataTypeSize((aclDataType)table[i].dtype);
        CHECK(got == table[i].size, "aclDataTypeSize(%d) = %zu, expected %zu", table[i].dtype,
              got, table[i].size);
    }
}

#ifdef __FLT16_MANT_DIG__
/* float -> IEEE half, rounded to nearest even (Inf and NaN as IEEE keeps them). */
static uint16_t half_of(float value)
{
    _Float16 h = (_Float16)value;
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}

/* IEEE half -> float (exact). */
static float float_of_half(uint16_t bits)
{
    _Float16 h;
    memcpy(&h, &bits, sizeof h);
    return (float)h;
}
#elif defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("f16c"))) static uint16_t half_of(float value)
{
    return (uint16_t)_cvtss_sh(value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

__attribute__((target("f16c"))) static float float_of_half(uint16_t bits)
{
    return _cvtsh_ss(bits);
}
#else
#error "no IEEE half reference for this compiler and target"
#endif

static float f32_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void test_half_to_float(void)
{
    /* Documented quirk: exponent 31 is an ordinary exponent. */
    CHECK(aclFloat16ToFloat(0x7C00) == 65536.0f, "0x7C00 -> %g", aclFloat16ToFloat(0x7C00));
    CHECK(aclFloat16ToFloat(0xFC00) == -65536.0f, "0xFC00 -> %g", aclFloat16ToFloat(0xFC00));
    CHECK(aclFloat16ToFloat(0x7E00) == 98304.0f, "0x7E00 -> %g", aclFloat16ToFloat(0x7E00));
    /* Every finite half (normals, subnormals, signed zeros) is exact. */
    for (uint32_t bits = 0; bits <= 0xFFFF; bits++) {
        if ((bits & 0x7C00u) == 0x7C00u) {
            /* exponent 31: (1 + m/1024) * 2^16 with the sign */
            float expected = ldexpf(1.0f + (float)(bits & 0x3FF) / 1024.0f, 16);
            if (bits & 0x8000u)
                expected = -expected;
            CHECK(aclFloat16ToFloat((aclFloat16)bits) == expected, "0x%04x", bits);
            continue;
        }
        float expected = float_of_half((uint16_t)bits);
        float got = aclFloat16ToFloat((aclFloat16)bits);
        CHECK(memcmp(&got, &expected, sizeof got) == 0, "aclFloat16ToFloat(0x%04x) = %a, "
              "expected %a", bits, got, expected);
    }
}

/* The saturating reference: IEEE round-to-nearest-even, then Inf/NaN -> +/-65504. */
static uint16_t saturating_reference(float value)
{
    if (isnan(value))
        return signbit(value) ? 0xFBFF : 0x7BFF;
    uint16_t bits = half_of(value);
    if ((bits & 0x7FFFu) == 0x7C00u)
        bits = (uint16_t)((bits & 0x8000u) | 0x7BFFu);
    return bits;
}

static void test_float_to_half(void)
{
    static const struct { float value; uint16_t bits; } table[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3C00}, {-2.0f, 0xC000},
        {65504.0f, 0x7BFF}, {65519.0f, 0x7BFF}, {65520.0f, 0x7BFF}, {1e10f, 0x7BFF},
        {-1e10f, 0xFBFF}, {INFINITY, 0x7BFF}, {-INFINITY, 0xFBFF},
        {5.960464477539063e-08f, 0x0001}, /* smallest subnormal */
        {2.98023223876953125e-08f, 0x0000}, /* exactly half of it: ties to even (0) */
        {1.0009765625f, 0x3C01}, {1.00048828125f, 0x3C00}, /* halfway 1 + 2^-11 -> even */
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        uint16_t got = aclFloatToFloat16(table[i].value);
        CHECK(got == table[i].bits, "aclFloatToFloat16(%a) = 0x%04x, expected 0x%04x",
              table[i].value, got, table[i].bits);
    }
    CHECK(aclFloatToFloat16(NAN) == 0x7BFF, "NaN -> 0x%04x", aclFloatToFloat16(NAN));
    CHECK(aclFloatToFloat16(-NAN) == 0xFBFF, "-NaN -> 0x%04x", aclFloatToFloat16(-NAN));

    /* A sweep over float bit patterns (every 4099th, plus neighbours of every half). */
    for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4099) {
        float value = f32_from_bits((uint32_t)bits);
        uint16_t got = aclFloatToFloat16(value), expected = saturating_reference(value);
        CHECK(got == expected, "aclFloatToFloat16(%a) = 0x%04x, expected 0x%04x", value, got,
              expected);
    }
    for (uint32_t h = 0; h < 0x7C00; h++) {
        float exact = float_of_half((uint16_t)h);
        uint32_t fb;
        memcpy(&fb, &exact, sizeof fb);
        for (int delta = -2; delta <= 2; delta++) {
            for (int sign = 0; sign < 2; sign++) {
                float value = f32_from_bits((uint32_t)(fb + (uint32_t)delta) ^ (sign ? 0x80000000u : 0u));
                uint16_t got = aclFloatToFloat16(value), expected = saturating_reference(value);
                CHECK(got == expected, "aclFloatToFloat16(%a) = 0x%04x, expected 0x%04x", value,
                      got, expected);
            }
        }
    }
}

int main(void)
{
    test_data_type_size();
    test_half_to_float();
    test_float_to_half();
    return tu_finish("test_runtime_types");
}
