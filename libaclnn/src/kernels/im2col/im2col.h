/*
 * im2col.h - the im2col ("unfold") kernels behind aclnnIm2col, one file per instruction set:
 *
 *   out[plane, (ki*kW + kj), oh*OW + ow] = image[plane, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW]
 *                                          (0 where the source falls into the padding)
 *
 *   im2col_portable.c  any CPU, any dtype pair: row gathers (memcpy for sW == 1), casts via fp32;
 *                      without a cast, rows copied from the plane with its padding written
 *                      out, its columns split by phase for sW > 1 (shifted rows), and a large
 *                      output gathered into a line stage and streamed
 *   im2col_avx512.c    AVX-512, same dtype in and out, sW <= 8: each output row built in chunks
 *                      from two masked loads and one permute; large outputs streamed through a
 *                      line stage; sW = 1 with rows of a vector or more: each plane's block as
 *                      whole lines of a shifted copy of the plane (two masked loads a line)
 *
 * A pure gather: the paths give the same bits.  The operator (ops/im2col.c) chooses the path
 * from the CPU table and names it in the launch trace.  Work is split over the planes; each
 * plane writes its own kH*kW*L block.
 */
#ifndef NN_KERNELS_IM2COL_H
#define NN_KERNELS_IM2COL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"
#include "kernels/col2im/col2im.h" /* nn_i2c_plan, the geometry both kernels walk */

typedef struct nn_im2col_avx512_plan nn_im2col_avx512_plan;

typedef struct nn_im2col_ctx {
    const nn_i2c_plan *plan;
    const nn_im2col_avx512_plan *avx512; /* the AVX-512 rows' chunk table (their path only) */
    bool stream_out;           /* large output: written non-temporally (the portable rows: no cast) */
    const unsigned char *in;
    unsigned char *out;
    int failed;                /* a worker could not get its conversion buffer */
    nn_claims claims;          /* nn_im2col_planes_claimed: planes, claimed in chunks */
    nn_range_fn planes;        /* nn_im2col_planes_claimed: the path's range function */
} nn_im2col_ctx;

/* Range functions over planes [begin, end), ctx an nn_im2col_ctx. */
void nn_im2col_planes_portable(void *ctx, int64_t begin, int64_t end);
void nn_im2col_planes_avx512(void *ctx, int64_t begin, int64_t end);
/* The thread pool's range function, one call per thread (the range is ignored): runs ctx->planes
 * over the chunks of planes it claims from ctx->claims until none is left. */
void nn_im2col_planes_claimed(void *ctx, int64_t begin, int64_t end);

/* The AVX-512 rows' chunk table (im2col_avx512.c); NULL when they do not apply (a dtype cast, a
 * stride over 8) or out of memory: use the portable gather. */
nn_im2col_avx512_plan *nn_im2col_avx512_plan_create(const nn_i2c_plan *p);
void nn_im2col_avx512_plan_destroy(nn_im2col_avx512_plan *f);
/* True when the plan writes each plane's block as shifted copies of the plane (stride 1 along
 * the row, rows of at least a vector, 16 planes or more): the launch trace names that path. */
bool nn_im2col_avx512_shifted(const nn_im2col_avx512_plan *f);

#endif /* NN_KERNELS_IM2COL_H */
