/*
 * upsample_fwd_avx2.c - the UpsampleNearestExact1d forward's rows (upsample_fwd_rows.inc)
 * compiled with the AVX2 flags (Makefile); called only when nn_cpu_avx2().  On AVX-512 CPUs they
 * hand 4-byte long-run maps to upsample_fwd_avx512.c (ctx->avx512).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/upsample/upsample.h"

#define UPSAMPLE_ROWS nn_upsample_rows_avx2
#define UPSAMPLE_WITH_AVX512 1
#include "kernels/upsample/upsample_fwd_rows.inc"
