/*
 * upsample_bw_portable.c - the UpsampleNearestExact1dBackward for any CPU (upsample.h): the rows
 * of upsample_bw_rows.inc built for baseline x86-64.  A gather: stretches of equal count k
 * become "gi[t] = go[k t] + ... + go[k t + k-1]" loops, irregular maps walk lo(), pure
 * downsampling is a zero fill plus one pick per gradient; every gi element is 0 + its gradients
 * in increasing d order.  fp16/bf16 accumulate in fp32 and round once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/upsample/upsample.h"

#define UPSAMPLE_BW_ROWS nn_upsample_bw_rows_portable
#include "kernels/upsample/upsample_bw_rows.inc"
