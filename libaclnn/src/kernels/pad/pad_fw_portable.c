/*
 * pad_fw_portable.c - the ReplicationPad2d forward's row loop (pad_fw_rows.inc) for baseline
 * x86-64: nn_pad_fw_row_portable, what runs without AVX2 or with ACLNN_NO_SIMD=1.
 */
#include <stdint.h>

#include "kernels/pad/pad_fw.h"

#define PAD_FW_ROW nn_pad_fw_row_portable
#include "kernels/pad/pad_fw_rows.inc"
