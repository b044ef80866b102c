/*
 * prelu_fwd_portable.c - the Prelu forward for any CPU and any dtype mix (prelu.h): the loops of
 * prelu_fwd_loops.inc built for baseline x86-64.
 *
 * out = self > 0 ? self : weight(c) * self.  fp16/bf16 products are computed in fp32 and rounded
 * once, which is exactly a native half-precision multiply (the product of two 11-bit significands
 * is exact in fp32).  Elementwise, so any split over threads gives the same bytes.
 */
#include "kernels/prelu/prelu.h"

#define PRELU_FWD_STAGED nn_prelu_fwd_portable
#include "kernels/prelu/prelu_fwd_loops.inc"
