/*
 * max_pool_bw_3x3_portable.c - the MaxPool2dWithMask backward's 3x3 stride-2 rows in plain C for
 * CPUs with neither AVX-512 nor AVX2 (max_pool_bw_3x3_rows.inc; the AVX2 build of the same loops
 * is in max_pool_bw_avx2.c).
 */
#define MP_BW_ROWS_3X3S2_PLANE nn_mp_bw_rows_3x3s2_plane_portable
#include "kernels/max_pool/max_pool_bw_3x3_rows.inc"
