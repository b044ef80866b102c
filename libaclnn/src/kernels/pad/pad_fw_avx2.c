/*
 * pad_fw_avx2.c - the ReplicationPad2d forward's row loop (pad_fw_rows.inc) compiled with the
 * AVX2 flags (Makefile): nn_pad_fw_row_avx2, which the operator picks when the CPU table says
 * avx2.  The same source as the portable build: a copy, the same bytes.
 */
#include <stdint.h>

#include "kernels/pad/pad_fw.h"

#define PAD_FW_ROW nn_pad_fw_row_avx2
#include "kernels/pad/pad_fw_rows.inc"
