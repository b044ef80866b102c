/*
 * pad_bw_avx2.c - the ReplicationPad2d backward's row loops (pad_bw_rows.inc) compiled with the
 * AVX2 flags (Makefile): nn_pad_bw_loops_avx2, which the operator picks when nn_cpu_avx2().  The
 * same source as the portable build, so the same bits.
 */
#include <stdint.h>

#include "kernels/pad/pad_bw.h"

#define PAD_BW_LOOPS nn_pad_bw_loops_avx2
#include "kernels/pad/pad_bw_rows.inc"
