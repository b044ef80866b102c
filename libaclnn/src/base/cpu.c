/*
 * cpu.c - the one table of CPU features every kernel choice reads (nn_cpu_features).
 *
 * Decided once per process, from CPUID (and the OS's saved vector state, which
 * __builtin_cpu_supports checks for AVX and AVX-512) and two environment switches that hold for
 * every kernel alike:
 *   ACLNN_NO_SIMD=1     no vector tier at all: the portable loops everywhere (comparisons,
 *                       debugging); streaming copies fall back to SSE2, x86-64's baseline
 *   ACLNN_NO_AVX512=1   no AVX-512 tier: the AVX2 tier where there is one (ditto)
 * and one that holds for the kernels with an AVX512-FP16 form (fp16 compared with vcmpph) only:
 *   ACLNN_NO_AVX512FP16=1  those kernels keep their AVX-512 form without it (fp16 compared as
 *                       int16 keys), so that form stays tested on a CPU with AVX512-FP16
 * Valgrind's CPU has no AVX-512, so the tests under valgrind run the AVX2 tier.  On any target
 * but x86-64 (aarch64) the table stays all false: the portable tier ("portable"), whose loops
 * give the same bits as the vector tiers.
 */
#include <pthread.h>
#include <stdlib.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "nn_base.h"

static nn_cpu_features table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static bool env_is_one(const char *name)
{
    const char *value = getenv(name);
    return value != NULL && value[0] == '1';
}

#if defined(__x86_64__) && defined(__GNUC__)
/* CPUID bits read directly where clang 14's __builtin_cpu_supports lacks the name ("f16c",
 * "avx512bf16", "avx512fp16"); only asked once AVX2 / AVX-512 are known usable, which already implies that the
 * OS saves the YMM / ZMM state. */
static bool cpuid_has_f16c(void)
{
    unsigned eax, ebx, ecx = 0, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}

static bool cpuid_has_avx512bf16(void)
{
    unsigned eax = 0, ebx, ecx, edx;
    return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5)) != 0;
}

/* CPUID.(EAX=7, ECX=0):EDX bit 23; the ZMM state it needs is the one avx512f's check asked of
 * the OS. */
static bool cpuid_has_avx512fp16(void)
{
    unsigned eax, ebx, ecx, edx = 0;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 23)) != 0;
}

static void detect(void)
{
    __builtin_cpu_init();
    if (env_is_one("ACLNN_NO_SIMD"))
        return; /* every tier off */
    table.avx = __builtin_cpu_supports("avx");
    table.avx2 = table.avx && __builtin_cpu_supports("avx2") && cpuid_has_f16c();
    if (env_is_one("ACLNN_NO_AVX512"))
        return;
    table.avx512 = table.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    table.avx512bf16 = table.avx512 && cpuid_has_avx512bf16();
    table.avx512fp16 = table.avx512 && cpuid_has_avx512fp16() && !env_is_one("ACLNN_NO_AVX512FP16");
}
#else
static void detect(void)
{
    (void)env_is_one;
}
#endif

const nn_cpu_features *nn_cpu_features_get(void)
{
    pthread_once(&table_once, detect);
    return &table;
}

bool nn_cpu_avx(void) { return nn_cpu_features_get()->avx; }
bool nn_cpu_avx2(void) { return nn_cpu_features_get()->avx2; }
bool nn_cpu_avx512(void) { return nn_cpu_features_get()->avx512; }
bool nn_cpu_avx512bf16(void) { return nn_cpu_features_get()->avx512bf16; }
bool nn_cpu_avx512fp16(void) { return nn_cpu_features_get()->avx512fp16; }

const char *nn_cpu_tier_name(void)
{
    const nn_cpu_features *cpu = nn_cpu_features_get();
    return cpu->avx512 ? "avx512" : cpu->avx2 ? "avx2" : "portable";
}
