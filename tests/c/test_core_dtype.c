/*
 * test_core_dtype.c - fp16 / bf16 <-> fp32 conversions, exhaustively.
 *
 * Compiles the library's base/dtype.c into this program (the nn_* functions are hidden in the
 * shared object) and checks, against a reference written here:
 *   - all 65536 fp16 and all 65536 bf16 bit patterns -> fp32 (exact values, NaN quiet, Inf kept)
 *   - fp32 -> fp16 / bf16 for every half value, every midpoint between neighbours and the fp32
 *     values next to it, fp32 subnormals, specials and a million random bit patterns; the
 *     reference finds the nearest half by binary search in a table of all half values (ties to
 *     the even code), which shares no arithmetic with the implementation
 *   - every row variant (portable, F16C, AVX2, AVX-512 BF16 when the CPU has them) and the
 *     dispatched nn_*_n functions give the same bits, for lengths 0..67 (SIMD tails)
 *   - saturation mode: fp32 -> fp16 over the same inputs (the nearest code, Inf -> +-65504,
 *     NaN -> +0) and the in-place rule over all 65536 fp16 and bf16 codes
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libaclnn/src/base/dtype.c"
#include "../../libaclnn/src/base/cpu.c" /* the CPU table dtype.c chooses by */

#include "test_util.h"

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* ---- reference: decode by the textbook formula --------------------------------------------- */

/* Value of a finite half-like code with `mbits` mantissa bits and exponent bias `bias`. */
static double decode(uint32_t code, int ebits, int mbits, int bias)
{
    uint32_t mant = code & ((1u << mbits) - 1);
    uint32_t exp = (code >> mbits) & ((1u << ebits) - 1);
    double value = exp == 0 ? ldexp((double)mant, 1 - bias - mbits)
                            : ldexp((double)(mant | (1u << mbits)), (int)exp - bias - mbits);
    return (code >> (ebits + mbits)) & 1 ? -value : value;
}

/* Expected fp32 bits of a half code (fp16: 5/10/15, bf16: 8/7/127). */
static uint32_t expected_widen(uint16_t code, int ebits, int mbits, int bias, bool quiet_nans)
{
    uint32_t exp_all = (1u << ebits) - 1;
    uint32_t exp = (code >> mbits) & exp_all;
    uint32_t mant = code & ((1u << mbits) - 1);
    uint32_t sign = (uint32_t)(code >> 15) << 31;
    if (exp == exp_all) {
        uint32_t payload = mant << (23 - mbits);
        if (mant != 0 && quiet_nans)
            payload |= 0x400000u;
        return sign | 0x7f800000u | payload;
    }
    float f = (float)decode(code, ebits, mbits, bias); /* exact: fits in fp32 */
    return bits_of(f);
}

/* ---- reference: nearest half by table search ----------------------------------------------- */

typedef struct {
    double values[0x8000]; /* value of positive codes 0 .. top; top = first Inf code */
    uint32_t top;
    int mbits;
} half_table;

static void build_table(half_table *t, int ebits, int mbits, int bias)
{
    t->mbits = mbits;
    t->top = ((1u << ebits) - 1) << mbits; /* the +Inf code */
    for (uint32_t c = 0; c < t->top; c++)
        t->values[c] = decode(c, ebits, mbits, bias);
    /* Rounding treats Inf as the next value after the largest finite one. */
    t->values[t->top] = ldexp(1.0, (1 << (ebits - 1)) - 1 + 1);
}

/* Expected half code for a float (NaNs handled by the caller). */
static uint16_t expected_narrow(const half_table *t, float f)
{
    uint16_t sign = (uint16_t)((bits_of(f) >> 16) & 0x8000u);
    double x = fabs((double)f);
    if (x >= t->values[t->top])
        return sign | (uint16_t)t->top;
    uint32_t lo = 0, hi = t->top; /* values[lo] <= x < values[hi] */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (t->values[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    double below = x - t->values[lo], above = t->values[hi] - x;
    uint32_t code = below < above ? lo : above < below ? hi : ((lo & 1) == 0 ? lo : hi);
    return sign | (uint16_t)code;
}

static uint16_t expected_nan_narrow(float f, int mbits, uint16_t exp_code)
{
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint16_t payload = (uint16_t)((u & 0x7fffffu) >> (23 - mbits));
    return sign | exp_code | payload | (uint16_t)(1u << (mbits - 1));
}

/* ---- inputs ---------------------------------------------------------------------------------- */

static float *inputs;
static size_t num_inputs;

static void add_input(float f) { inputs[num_inputs++] = f; }

static void add_around(float f)
{
    add_input(f);
    add_input(nextafterf(f, INFINITY));
    add_input(nextafterf(f, -INFINITY));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void build_inputs(const half_table *f16, const half_table *bf16)
{
    inputs = malloc(sizeof(float) * 2000000);
    const half_table *tables[2] = {f16, bf16};
    for (int k = 0; k < 2; k++) {
        const half_table *t = tables[k];
        for (uint32_t c = 0; c < t->top; c++) {
            float v = (float)t->values[c];
            float mid = (float)((t->values[c] + t->values[c + 1]) / 2); /* exact in fp32 */
            add_around(v);
            add_around(-v);
            add_around(mid);
            add_around(-mid);
        }
    }
    float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                        float_of(1), float_of(0x80000001u), float_of(0x007fffffu), 65504.0f,
                        65519.99f, 65520.0f, 65536.0f, 1e-8f, 2.9802322e-08f, 5.9604645e-08f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        add_around(specials[i]);
    uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7fffffffu,
                       0x7f802000u, 0x7f801fffu, 0x7fa00000u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++)
        add_input(float_of(nans[i]));
    for (int i = 0; i < 200000; i++)
        add_input(float_of(next_random()));
}

/* ---- checks ---------------------------------------------------------------------------------- */

typedef void (*to_f32_row)(const uint16_t *, float *, size_t);
typedef void (*from_f32_row)(const float *, uint16_t *, size_t);

static void check_widen(const char *name, to_f32_row row, int ebits, int mbits, int bias,
                        bool quiet_nans)
{
    static uint16_t codes[65536 + 67];
    static float out[65536 + 67];
    for (uint32_t c = 0; c < 65536; c++)
        codes[c] = (uint16_t)c;
    /* whole table, then short lengths at odd alignments for the SIMD tails */
    row(codes, out, 65536);
    for (uint32_t c = 0; c < 65536; c++) {
        uint32_t want = expected_widen((uint16_t)c, ebits, mbits, bias, quiet_nans);
        CHECK(bits_of(out[c]) == want, "%s(0x%04x) = 0x%08x, want 0x%08x", name, c, bits_of(out[c]), want);
    }
    for (size_t n = 0; n <= 67; n++) {
        for (size_t start = 0; start < 3; start++) {
            uint16_t *src = codes + 0x7bf0 + start; /* around the fp16 Inf/NaN codes */
            memset(out, 0xa5, sizeof(float) * 70);
            row(src, out, n);
            for (size_t i = 0; i < n; i++)
                CHECK(bits_of(out[i]) == expected_widen(src[i], ebits, mbits, bias, quiet_nans),
                      "%s tail n=%zu i=%zu", name, n, i);
            CHECK(bits_of(out[n]) == 0xa5a5a5a5u, "%s wrote past n=%zu", name, n);
        }
    }
}

static void check_narrow(const char *name, from_f32_row row, const half_table *t, uint16_t inf_code)
{
    uint16_t *out = malloc(sizeof(uint16_t) * (num_inputs + 1));
    row(inputs, out, num_inputs);
    for (size_t i = 0; i < num_inputs; i++) {
        float f = inputs[i];
        uint16_t want = isnan(f) ? expected_nan_narrow(f, t->mbits, inf_code) : expected_narrow(t, f);
        CHECK(out[i] == want, "%s(%a = 0x%08x) = 0x%04x, want 0x%04x", name, (double)f, bits_of(f),
              out[i], want);
    }
    for (size_t n = 0; n <= 67; n++) {
        const float *src = inputs + 1000 + n; /* arbitrary alignment */
        out[n] = 0xa5a5;
        row(src, out, n);
        for (size_t i = 0; i < n; i++) {
            float f = src[i];
            uint16_t want = isnan(f) ? expected_nan_narrow(f, t->mbits, inf_code) : expected_narrow(t, f);
            CHECK(out[i] == want, "%s tail n=%zu i=%zu", name, n, i);
        }
        CHECK(out[n] == 0xa5a5, "%s wrote past n=%zu", name, n);
    }
    free(out);
}

/* Saturation mode: the nearest code as above, then an Inf code becomes the largest finite code
 * of its sign (the one below inf_code) and every NaN input gives +0. */
static void check_narrow_saturating(const char *name, from_f32_row row, const half_table *t, uint16_t inf_code)
{
    uint16_t *out = malloc(sizeof(uint16_t) * (num_inputs + 1));
    row(inputs, out, num_inputs);
    for (size_t i = 0; i < num_inputs; i++) {
        float f = inputs[i];
        uint16_t want = isnan(f) ? 0 : expected_narrow(t, f);
        if ((want & 0x7fffu) == inf_code) want = (uint16_t)((want & 0x8000u) | (inf_code - 1u));
        CHECK(out[i] == want, "%s(%a = 0x%08x) = 0x%04x, want 0x%04x", name, (double)f, bits_of(f), out[i], want);
    }
    free(out);
}

/* The in-place rule over every 16-bit code: finite codes kept, +-Inf -> +-MAX, NaN -> +0. */
static void check_saturate_codes(const char *name, void (*saturate)(uint16_t *, size_t), uint16_t inf_code)
{
    uint16_t *codes = malloc(sizeof(uint16_t) * 65536);
    for (uint32_t c = 0; c < 65536; c++)
        codes[c] = (uint16_t)c;
    saturate(codes, 65536);
    for (uint32_t c = 0; c < 65536; c++) {
        const uint16_t magnitude = (uint16_t)(c & 0x7fffu);
        uint16_t want = (uint16_t)c;
        if (magnitude == inf_code) want = (uint16_t)((c & 0x8000u) | (inf_code - 1u)); /* 0x7bff, 0x7f7f */
        if (magnitude > inf_code) want = 0;
        CHECK(codes[c] == want, "%s(0x%04x) = 0x%04x, want 0x%04x", name, c, codes[c], want);
    }
    free(codes);
}

static void scalar_f32_to_f16_sat(const float *s, uint16_t *d, size_t n) { for (size_t i = 0; i < n; i++) d[i] = nn_f32_to_f16_sat(s[i]); }

/* Scalar functions wrapped as rows so that the same checks apply. */
static void scalar_f16_to_f32(const uint16_t *s, float *d, size_t n) { for (size_t i = 0; i < n; i++) d[i] = nn_f16_to_f32(s[i]); }
static void scalar_bf16_to_f32(const uint16_t *s, float *d, size_t n) { for (size_t i = 0; i < n; i++) d[i] = nn_bf16_to_f32(s[i]); }
static void scalar_f32_to_f16(const float *s, uint16_t *d, size_t n) { for (size_t i = 0; i < n; i++) d[i] = nn_f32_to_f16(s[i]); }
static void scalar_f32_to_bf16(const float *s, uint16_t *d, size_t n) { for (size_t i = 0; i < n; i++) d[i] = nn_f32_to_bf16(s[i]); }

static void check_tables(void)
{
    CHECK(nn_dtype_size(ACL_FLOAT) == 4 && nn_dtype_size(ACL_FLOAT16) == 2 && nn_dtype_size(ACL_BF16) == 2,
          "float sizes");
    CHECK(nn_dtype_size(ACL_INT64) == 8 && nn_dtype_size(ACL_COMPLEX128) == 16 && nn_dtype_size(ACL_BOOL) == 1,
          "int/complex/bool sizes");
    CHECK(nn_dtype_size(ACL_STRING) == 0 && nn_dtype_size(ACL_DT_UNDEFINED) == 0 &&
              nn_dtype_size((aclDataType)5) == 0 && nn_dtype_size((aclDataType)1000) == 0,
          "sizes of dtypes a tensor cannot hold");
    CHECK(strcmp(nn_dtype_name(ACL_BF16), "BFLOAT16") == 0 && strcmp(nn_dtype_name((aclDataType)77), "UNKNOWN") == 0,
          "dtype names");
    CHECK(nn_dtype_is_known(ACL_UINT64) && !nn_dtype_is_known((aclDataType)5) && !nn_dtype_is_known(ACL_DT_UNDEFINED),
          "known dtypes");
    int formats[] = {-1, 0, 1, 2, 3, 4, 12, 16, 27, 29, 30, 32, 33, 35, 47, 50, 51, 52, 53, 54};
    int known = 0;
    for (int v = -5; v < 100; v++)
        known += nn_format_is_known((aclFormat)v);
    CHECK(known == (int)(sizeof formats / sizeof formats[0]), "%d known formats, want 20", known);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        CHECK(nn_format_is_known((aclFormat)formats[i]), "format %d known", formats[i]);
    CHECK(strcmp(nn_format_name(ACL_FORMAT_NCHW), "NCHW") == 0, "format name");
}

int main(void)
{
    static half_table f16, bf16;
    build_table(&f16, 5, 10, 15);
    build_table(&bf16, 8, 7, 127);
    build_inputs(&f16, &bf16);
    check_tables();

    check_widen("nn_f16_to_f32", scalar_f16_to_f32, 5, 10, 15, true);
    check_widen("nn_bf16_to_f32", scalar_bf16_to_f32, 8, 7, 127, false);
    check_narrow("nn_f32_to_f16", scalar_f32_to_f16, &f16, 0x7c00);
    check_narrow("nn_f32_to_bf16", scalar_f32_to_bf16, &bf16, 0x7f80);

    check_widen("portable f16 row", portable_f16_to_f32, 5, 10, 15, true);
    check_widen("portable bf16 row", portable_bf16_to_f32, 8, 7, 127, false);
    check_narrow("portable f16 row", portable_f32_to_f16, &f16, 0x7c00);
    check_narrow("portable bf16 row", portable_f32_to_bf16, &bf16, 0x7f80);

    /* The dispatched functions (whatever this CPU selected). */
    check_widen("nn_f16_to_f32_n", nn_f16_to_f32_n, 5, 10, 15, true);
    check_widen("nn_bf16_to_f32_n", nn_bf16_to_f32_n, 8, 7, 127, false);
    check_narrow("nn_f32_to_f16_n", nn_f32_to_f16_n, &f16, 0x7c00);
    check_narrow("nn_f32_to_bf16_n", nn_f32_to_bf16_n, &bf16, 0x7f80);

    /* Saturation mode. */
    check_narrow_saturating("nn_f32_to_f16_sat", scalar_f32_to_f16_sat, &f16, 0x7c00);
    check_narrow_saturating("nn_f32_to_f16_sat_n", nn_f32_to_f16_sat_n, &f16, 0x7c00);
    check_saturate_codes("nn_f16_saturate_n", nn_f16_saturate_n, 0x7c00);
    check_saturate_codes("nn_bf16_saturate_n", nn_bf16_saturate_n, 0x7f80);

    int variants = 0;
#if NN_HALF_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && cpuid_has_f16c()) { /* cpu.c's: clang 14 lacks "f16c" */
        check_widen("F16C row", f16c_f16_to_f32, 5, 10, 15, true);
        check_narrow("F16C row", f16c_f32_to_f16, &f16, 0x7c00);
        variants++;
    }
    if (__builtin_cpu_supports("avx2")) {
        check_widen("AVX2 bf16 row", avx2_bf16_to_f32, 8, 7, 127, false);
        check_narrow("AVX2 bf16 row", avx2_f32_to_bf16, &bf16, 0x7f80);
        variants++;
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        cpuid_has_avx512bf16()) {
        check_narrow("AVX-512 BF16 row", avx512_f32_to_bf16, &bf16, 0x7f80);
        variants++;
    }
#endif
    free(inputs);
    printf("dtype: %zu fp32 inputs, %d SIMD variant groups checked, %d failures\n", num_inputs,
           variants, failures);
    return failures != 0;
}
