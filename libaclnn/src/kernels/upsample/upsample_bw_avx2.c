/*
 * upsample_bw_avx2.c - the UpsampleNearestExact1dBackward's rows (upsample_bw_rows.inc) compiled
 * with the AVX2 flags (Makefile); called only when nn_cpu_avx2().  On AVX-512 CPUs they hand fp32
 * long-run maps to upsample_bw_avx512.c (ctx->avx512).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/upsample/upsample.h"

#define UPSAMPLE_BW_ROWS nn_upsample_bw_rows_avx2
#define UPSAMPLE_BW_WITH_AVX512 1
#include "kernels/upsample/upsample_bw_rows.inc"
