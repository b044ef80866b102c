/*
 * col2im.h - the col2im ("fold") kernels behind aclnnIm2colBackward, one file per instruction
 * set, and the window geometry they share with aclnnIm2col:
 *
 *   out[plane, ih, iw] = sum over (ki, kj) with ih = oh*sH - pH + ki*dH, iw = ow*sW - pW + kj*dW
 *                        of cols[plane, (ki*kW + kj), oh*OW + ow]
 *
 *   col2im_portable.c  any CPU: phase-plane accumulation in fp32 (and the shared helpers); the
 *                      loops are in col2im_phase.inc, which col2im_avx2.c compiles again for AVX2
 *   col2im_avx2.c      AVX2 + F16C, sW <= 2: each output row built in 8-lane registers from a
 *                      zero-margined fp32 copy of the plane; k3s2p1 without the copy
 *   col2im_avx512.c    AVX-512, sW <= 2: each output row built in 16-lane registers from masked
 *                      loads; k3s2p1 on small images in straight-line row kernels
 *
 * Every path adds an output element's contributions in the same order - ki ascending, then kj
 * ascending (kernel order), or both descending when plan->window_order (window order: oh, then
 * ow, ascending) - from +0.0, in fp32, rounded once to the output dtype, so all give the same
 * bits.  The tables of the row and phase-plane kernels carry the order; the k3s2p1
 * straight-line kernels have both orders written out.
 * The operator (ops/im2col_backward.c) chooses the path from the CPU table: an _avx2 / _avx512
 * function is called only when nn_cpu_features says that set may run.
 */
#ifndef NN_KERNELS_COL2IM_H
#define NN_KERNELS_COL2IM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/nn_base.h"

/* The geometry both im2col and col2im walk: image planes of H x W, OH x OW window positions, the
 * kernel size, dilation, padding and stride per axis. */
typedef struct nn_i2c_plan {
    int64_t planes;            /* N*C (C for an unbatched image) */
    int64_t H, W, OH, OW;
    int64_t kH, kW, dH, dW, pH, pW, sH, sW;
    aclDataType in_dtype, out_dtype;
    /* col2im: add an element's contributions in window order (oh, then ow, ascending - which
     * is (ki, kj) descending) instead of kernel order ((ki, kj) ascending): the card's order
     * on the product (ops/products.h, nn_col2im_order). */
    bool window_order;
} nn_i2c_plan;

/* For one kernel offset `koff` (= k*dil - pad), the window positions o in [lo, hi) whose source
 * index o*stride + koff falls inside [0, in). */
static inline void nn_i2c_valid_range(int64_t in, int64_t out_len, int64_t stride, int64_t koff,
                                      int64_t *lo, int64_t *hi)
{
    /* o*stride + koff >= 0  <=>  o >= ceil(-koff / stride) */
    int64_t first = -nn_floor_div(koff, stride);
    /* o*stride + koff <= in - 1  <=>  o <= floor((in - 1 - koff) / stride) */
    int64_t last = nn_floor_div(in - 1 - koff, stride);
    if (first < 0) first = 0;
    if (last > out_len - 1) last = out_len - 1;
    *lo = first;
    *hi = last + 1 > first ? last + 1 : first;
}

/* One launch: `planes` column blocks (kH*kW*OH*OW values of in_dtype each) folded into as many
 * image planes (H*W values of out_dtype).  Threads claim planes in chunks (nn_claims), so a
 * late pool worker still takes its share; each plane is computed the same way by whoever
 * claims it. */
typedef struct nn_col2im_job {
    const nn_i2c_plan *plan;
    const void *tables;        /* the chosen path's tables (its plan_create / tables_create) */
    const unsigned char *in;
    unsigned char *out;
    bool stream_out;           /* vector paths: write planes with non-temporal stores */
    nn_claims claims;
    int failed;                /* a thread could not allocate its buffers (atomic) */
} nn_col2im_job;

/* Runs `planes_fn` (one of the nn_col2im_planes_* below) over the job's planes on the thread
 * pool.  Returns false when a thread could not allocate its buffers. */
bool nn_col2im_run(nn_col2im_job *job, nn_range_fn planes_fn);

/* ---- portable (col2im_portable.c) ---------------------------------------------------------- */

/* The kernel-column spans and groups of the phase-plane scheme; NULL when out of memory. */
typedef struct nn_col2im_tables nn_col2im_tables;
nn_col2im_tables *nn_col2im_tables_create(const nn_i2c_plan *p);
void nn_col2im_tables_destroy(nn_col2im_tables *t);
void nn_col2im_planes_portable(void *job, int64_t begin, int64_t end);
/* The same loops (col2im_phase.inc) compiled with the AVX2 flags, in col2im_avx2.c: the same
 * bits; only when nn_cpu_avx2().  Takes the portable tables. */
void nn_col2im_planes_phase_avx2(void *job, int64_t begin, int64_t end);

/* Used by the vector paths' table builders: the gradOutput rows each output row ih reads,
 * entries row_first[ih] .. row_first[ih+1]-1 of row_offset, ki ascending (descending for
 * window order), each the offset of
 * row (ki, kj = 0, oh) in a layout where a kernel position's OH rows take `kpos_size` elements
 * and a row `row_stride`. */
void nn_col2im_fill_row_tables(const nn_i2c_plan *p, int64_t kpos_size, int64_t row_stride,
                               int64_t *row_first, int64_t *row_offset);

/* ---- AVX2 + F16C (col2im_avx2.c): only when nn_cpu_avx2() and not nn_cpu_avx512() ---------- */

typedef struct nn_col2im_avx2_plan nn_col2im_avx2_plan;
/* NULL when the geometry does not fit the AVX2 kernel (or out of memory): use the portable one. */
nn_col2im_avx2_plan *nn_col2im_avx2_plan_create(const nn_i2c_plan *p);
void nn_col2im_avx2_plan_destroy(nn_col2im_avx2_plan *ap);
const char *nn_col2im_avx2_path(const nn_col2im_avx2_plan *ap);
void nn_col2im_planes_avx2(void *job, int64_t begin, int64_t end);

/* ---- AVX-512 (col2im_avx512.c): only when nn_cpu_avx512() ----------------------------------- */

typedef struct nn_col2im_avx512_plan nn_col2im_avx512_plan;
nn_col2im_avx512_plan *nn_col2im_avx512_plan_create(const nn_i2c_plan *p);
void nn_col2im_avx512_plan_destroy(nn_col2im_avx512_plan *fp);
const char *nn_col2im_avx512_path(const nn_i2c_plan *p, const nn_col2im_avx512_plan *fp);
void nn_col2im_planes_avx512(void *job, int64_t begin, int64_t end);

/* The dtypes as compile-time constants of the specialised vector kernels. */
enum { NN_C2I_F32 = ACL_FLOAT, NN_C2I_F16 = ACL_FLOAT16, NN_C2I_BF16 = ACL_BF16 };

static inline int nn_col2im_dt_code(aclDataType d)
{
    return d == ACL_FLOAT16 ? NN_C2I_F16 : d == ACL_BF16 ? NN_C2I_BF16 : NN_C2I_F32;
}

#endif /* NN_KERNELS_COL2IM_H */
