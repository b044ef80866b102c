/* The CPU check behind the operators' AVX-512 fast paths (nn_simd.h). */
#include <stdlib.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "nn_simd.h"

bool nn_cpu_avx512(void)
{
#if NN_HAVE_AVX512_CODE
    static int cached = -1; /* decided once: the answer never changes within a process */
    int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (ok < 0) {
        const char *no_simd = getenv("ACLNN_NO_SIMD"), *no_avx512 = getenv("ACLNN_NO_AVX512");
        __builtin_cpu_init();
        ok = !(no_simd != NULL && no_simd[0] == '1') && !(no_avx512 != NULL && no_avx512[0] == '1') &&
             __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq");
        __atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
    }
    return ok != 0;
#else
    return false;
#endif
}

bool nn_cpu_avx512bf16(void)
{
#if NN_HAVE_AVX512_CODE
    static int cached = -1;
    int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (ok < 0) {
        ok = nn_cpu_avx512() && __builtin_cpu_supports("avx512bf16");
        __atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
    }
    return ok != 0;
#else
    return false;
#endif
}

bool nn_cpu_avx2(void)
{
#if NN_HAVE_AVX512_CODE
    static int cached = -1;
    int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (ok < 0) {
        const char *no_simd = getenv("ACLNN_NO_SIMD");
        __builtin_cpu_init();
        /* F16C from CPUID leaf 1 (ECX bit 29): clang 14 rejects __builtin_cpu_supports("f16c") */
        unsigned eax, ebx, ecx = 0, edx;
        const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
        ok = !(no_simd != NULL && no_simd[0] == '1') && __builtin_cpu_supports("avx2") && f16c;
        __atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
    }
    return ok != 0;
#else
    return false;
#endif
}
