/*
 * dtype.c - data type and format tables, fp16/bf16 conversions.
 *
 * The conversion arithmetic lives in nn_half_impl.h (shared with the exhaustive test); here
 * the row functions pick the fastest variant the CPU offers, once, at load time.  Every variant
 * gives bit-identical results, so the choice never changes a number.
 */
#include <stdlib.h>

#include "nn_base.h"
#include "nn_half_impl.h"

/* ---- dtypes -------------------------------------------------------------------------------- */

typedef struct {
    int value;
    size_t size; /* bytes per element in a tensor; 0 = a tensor cannot hold it */
    const char *name;
} dtype_info;

/* Sizes follow aclDataTypeSize except the 6/4-bit float formats, which CANN's table leaves at a
 * default of 8; we never compute on them, so a tensor of them counts as one byte per element. */
static const dtype_info dtype_table[] = {
    {ACL_DT_UNDEFINED, 0, "UNDEFINED"},
    {ACL_FLOAT, 4, "FLOAT"},
    {ACL_FLOAT16, 2, "FLOAT16"},
    {ACL_INT8, 1, "INT8"},
    {ACL_INT32, 4, "INT32"},
    {ACL_UINT8, 1, "UINT8"},
    {ACL_INT16, 2, "INT16"},
    {ACL_UINT16, 2, "UINT16"},
    {ACL_UINT32, 4, "UINT32"},
    {ACL_INT64, 8, "INT64"},
    {ACL_UINT64, 8, "UINT64"},
    {ACL_DOUBLE, 8, "DOUBLE"},
    {ACL_BOOL, 1, "BOOL"},
    {ACL_STRING, 0, "STRING"},
    {ACL_COMPLEX64, 8, "COMPLEX64"},
    {ACL_COMPLEX128, 16, "COMPLEX128"},
    {ACL_BF16, 2, "BFLOAT16"},
    {29 /* ACL_INT4 */, 1, "INT4"},
    {30 /* ACL_UINT1 */, 1, "UINT1"},
    {33 /* ACL_COMPLEX32 */, 4, "COMPLEX32"},
    {34 /* ACL_HIFLOAT8 */, 1, "HIFLOAT8"},
    {35 /* ACL_FLOAT8_E5M2 */, 1, "FLOAT8_E5M2"},
    {36 /* ACL_FLOAT8_E4M3FN */, 1, "FLOAT8_E4M3FN"},
    {37 /* ACL_FLOAT8_E8M0 */, 1, "FLOAT8_E8M0"},
    {38 /* ACL_FLOAT6_E3M2 */, 1, "FLOAT6_E3M2"},
    {39 /* ACL_FLOAT6_E2M3 */, 1, "FLOAT6_E2M3"},
    {40 /* ACL_FLOAT4_E2M1 */, 1, "FLOAT4_E2M1"},
    {41 /* ACL_FLOAT4_E1M2 */, 1, "FLOAT4_E1M2"},
};

static const dtype_info *find_dtype(aclDataType dtype)
{
    for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
        if (dtype_table[i].value == (int)dtype)
            return &dtype_table[i];
    return NULL;
}

size_t nn_dtype_size(aclDataType dtype)
{
    const dtype_info *info = find_dtype(dtype);
    return info ? info->size : 0;
}

const char *nn_dtype_name(aclDataType dtype)
{
    const dtype_info *info = find_dtype(dtype);
    return info ? info->name : "UNKNOWN";
}

bool nn_dtype_is_known(aclDataType dtype)
{
    return (int)dtype != ACL_DT_UNDEFINED && find_dtype(dtype) != NULL;
}

/* ---- formats ------------------------------------------------------------------------------- */

typedef struct {
    int value;
    const char *name;
} format_info;

static const format_info format_table[] = {
    {-1, "UNDEFINED"},    {0, "NCHW"},           {1, "NHWC"},
    {2, "ND"},            {3, "NC1HWC0"},        {4, "FRACTAL_Z"},
    {12, "NC1HWC0_C04"},  {16, "HWCN"},          {27, "NDHWC"},
    {29, "FRACTAL_NZ"},   {30, "NCDHW"},         {32, "NDC1HWC0"},
    {33, "FRACTAL_Z_3D"}, {35, "NC"},            {47, "NCL"},
    {50, "FRACTAL_NZ_C0_16"}, {51, "FRACTAL_NZ_C0_32"}, {52, "FRACTAL_NZ_C0_2"},
    {53, "FRACTAL_NZ_C0_4"},  {54, "FRACTAL_NZ_C0_8"},
};

static const format_info *find_format(aclFormat format)
{
    for (size_t i = 0; i < sizeof format_table / sizeof format_table[0]; i++)
        if (format_table[i].value == (int)format)
            return &format_table[i];
    return NULL;
}

const char *nn_format_name(aclFormat format)
{
    const format_info *info = find_format(format);
    return info ? info->name : "UNKNOWN";
}

bool nn_format_is_known(aclFormat format)
{
    return find_format(format) != NULL;
}

bool nn_format_is_private(aclFormat format)
{
    switch ((int)format) {
    case -1: /* UNDEFINED: treated as ND, like CANN's default */
    case 0:  /* NCHW */
    case 1:  /* NHWC */
    case 2:  /* ND */
    case 16: /* HWCN */
    case 27: /* NDHWC */
    case 30: /* NCDHW */
    case 35: /* NC */
    case 47: /* NCL */
        return false;
    default:
        return true;
    }
}

/* ---- scalar conversions --------------------------------------------------------------------- */

float nn_f16_to_f32(uint16_t h) { return nn_half_f16_to_f32(h); }
uint16_t nn_f32_to_f16(float f) { return nn_half_f32_to_f16(f); }
float nn_bf16_to_f32(uint16_t b) { return nn_half_bf16_to_f32(b); }
uint16_t nn_f32_to_bf16(float f) { return nn_half_f32_to_bf16(f); }
uint16_t nn_f32_to_f16_sat(float f) { return nn_half_f32_to_f16_sat(f); }

/* ---- row conversions, dispatched once -------------------------------------------------------- */

typedef void (*half_to_f32_fn)(const uint16_t *, float *, size_t);
typedef void (*f32_to_half_fn)(const float *, uint16_t *, size_t);

static void portable_f16_to_f32(const uint16_t *s, float *d, size_t n) { nn_half_f16_to_f32_row(s, d, n); }
static void portable_f32_to_f16(const float *s, uint16_t *d, size_t n) { nn_half_f32_to_f16_row(s, d, n); }
static void portable_bf16_to_f32(const uint16_t *s, float *d, size_t n) { nn_half_bf16_to_f32_row(s, d, n); }
static void portable_f32_to_bf16(const float *s, uint16_t *d, size_t n) { nn_half_f32_to_bf16_row(s, d, n); }

static half_to_f32_fn f16_to_f32_row = portable_f16_to_f32;
static f32_to_half_fn f32_to_f16_row = portable_f32_to_f16;
static half_to_f32_fn bf16_to_f32_row = portable_bf16_to_f32;
static f32_to_half_fn f32_to_bf16_row = portable_f32_to_bf16;

#if NN_HALF_X86
static void f16c_f16_to_f32(const uint16_t *s, float *d, size_t n) { nn_half_f16_to_f32_row_f16c(s, d, n); }
static void f16c_f32_to_f16(const float *s, uint16_t *d, size_t n) { nn_half_f32_to_f16_row_f16c(s, d, n); }
static void avx2_bf16_to_f32(const uint16_t *s, float *d, size_t n) { nn_half_bf16_to_f32_row_avx2(s, d, n); }
static void avx2_f32_to_bf16(const float *s, uint16_t *d, size_t n) { nn_half_f32_to_bf16_row_avx2(s, d, n); }
static void avx512_f32_to_bf16(const float *s, uint16_t *d, size_t n) { nn_half_f32_to_bf16_row_avx512(s, d, n); }

#endif

/* Chosen from the CPU table (cpu.c), so ACLNN_NO_SIMD=1 gives the portable rows and
 * ACLNN_NO_AVX512=1 the AVX2 ones; every variant gives the same bits. */
__attribute__((constructor)) static void pick_conversion_rows(void)
{
#if NN_HALF_X86
    const nn_cpu_features *cpu = nn_cpu_features_get();
    if (cpu->avx2) {
        f16_to_f32_row = f16c_f16_to_f32;
        f32_to_f16_row = f16c_f32_to_f16;
        bf16_to_f32_row = avx2_bf16_to_f32;
        f32_to_bf16_row = avx2_f32_to_bf16;
    }
    if (cpu->avx512bf16)
        f32_to_bf16_row = avx512_f32_to_bf16;
#endif
}

void nn_f16_to_f32_n(const uint16_t *src, float *dst, size_t n) { f16_to_f32_row(src, dst, n); }
void nn_f32_to_f16_n(const float *src, uint16_t *dst, size_t n) { f32_to_f16_row(src, dst, n); }
void nn_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n) { bf16_to_f32_row(src, dst, n); }
void nn_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n) { f32_to_bf16_row(src, dst, n); }

/* Saturation mode: the dispatched rounding, then the saturation rule over the row (the mode is
 * rare and the pass is memory-bound, so it has no SIMD variant of its own). */
void nn_f32_to_f16_sat_n(const float *src, uint16_t *dst, size_t n)
{
    f32_to_f16_row(src, dst, n);
    nn_half_f16_saturate_row(dst, n);
}

void nn_f16_saturate_n(uint16_t *h, size_t n) { nn_half_f16_saturate_row(h, n); }
void nn_bf16_saturate_n(uint16_t *b, size_t n) { nn_half_bf16_saturate_row(b, n); }

/* An exponent field of all ones is Inf or NaN in every IEEE-style format. */
static bool bits16_nonfinite(const uint16_t *v, size_t n, uint16_t exponent)
{
    for (size_t i = 0; i < n; i++)
        if ((v[i] & exponent) == exponent)
            return true;
    return false;
}

bool nn_any_nonfinite(const void *values, aclDataType dtype, size_t n)
{
    switch (dtype) {
    case ACL_FLOAT16:
        return bits16_nonfinite(values, n, 0x7c00u);
    case ACL_BF16:
        return bits16_nonfinite(values, n, 0x7f80u);
    case ACL_FLOAT: {
        const uint32_t *v = values;
        for (size_t i = 0; i < n; i++)
            if ((v[i] & 0x7f800000u) == 0x7f800000u)
                return true;
        return false;
    }
    case ACL_DOUBLE: {
        const uint64_t *v = values;
        for (size_t i = 0; i < n; i++)
            if ((v[i] & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
                return true;
        return false;
    }
    default:
        return false;
    }
}
