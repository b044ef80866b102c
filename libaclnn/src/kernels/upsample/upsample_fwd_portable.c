/*
 * upsample_fwd_portable.c - the UpsampleNearestExact1d forward for any CPU (upsample.h): the
 * rows of upsample_fwd_rows.inc built for baseline x86-64.  A pure gather (bit copies): long
 * stretches of equal repeat count become "repeat each element k times" loops, irregular maps use
 * the per-output source table; large outputs are built row by row in a buffer and streamed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/upsample/upsample.h"

#define UPSAMPLE_ROWS nn_upsample_rows_portable
#include "kernels/upsample/upsample_fwd_rows.inc"
