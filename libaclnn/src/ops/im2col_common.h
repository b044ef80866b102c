/*
 * im2col_common.h - what aclnnIm2col (im2col.c) and aclnnIm2colBackward (im2col_backward.c)
 * share: the attribute-array checks, out's shape check and the end of phase 1 (the kernel
 * geometry is kernels/col2im/col2im.h's nn_i2c_plan).  Each op keeps its own messages where
 * CANN's differ; the checks here run in the order the caller passes its arguments.
 *
 * Everything is `static inline`: no symbol leaves the translation unit that includes it.
 */
#ifndef NN_IM2COL_COMMON_H
#define NN_IM2COL_COMMON_H

#include <stdint.h>

#include "exec/nn_exec.h"
#include "kernels/col2im/col2im.h" /* nn_i2c_plan, the geometry both kernels walk */
#include "ops/im2col_prelu_common.h"

/* Every attribute array holds one value per spatial axis (H, W). */
static inline aclnnStatus nn_i2c_check_array_sizes(const char *op, int num_arrays,
                                                   const aclIntArray *const *arrays,
                                                   const char *const *array_names)
{
    for (int i = 0; i < num_arrays; i++) {
        if (arrays[i]->size != 2) {
            return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: It is expected %s equals to 2, but got "
                            "size %llu.", op, array_names[i], (unsigned long long)arrays[i]->size);
        }
    }
    return ACLNN_SUCCESS;
}

/* out must have exactly the `nd` dims in `expected`; the message reads
 * "<op>: <lead><expected shape><mid><out's shape>." in the op's own CANN wording. */
static inline aclnnStatus nn_i2c_check_out_shape(const char *op, const aclTensor *out, uint64_t nd,
                                                 const int64_t *expected, const char *lead,
                                                 const char *mid)
{
    bool same = out->ndim == nd;
    for (uint64_t i = 0; same && i < nd; i++) same = out->dims[i] == expected[i];
    if (!same) {
        char want[160], got[512];
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s%s%s%s.", op, lead,
                        nn_shape_str(want, sizeof want, nd, expected), mid,
                        nn_shape_str(got, sizeof got, out->ndim, out->dims));
    }
    return ACLNN_SUCCESS;
}

/* Records the checked geometry in the plan (k, d, pad, s hold {H value, W value}). */
static inline void nn_i2c_set_geometry(nn_i2c_plan *plan, int64_t planes, int64_t H, int64_t W,
                                       int64_t OH, int64_t OW, const aclIntArray *k,
                                       const aclIntArray *d, const aclIntArray *pad,
                                       const aclIntArray *s)
{
    plan->planes = planes;
    plan->H = H;
    plan->W = W;
    plan->OH = OH;
    plan->OW = OW;
    plan->kH = k->values[0];
    plan->kW = k->values[1];
    plan->dH = d->values[0];
    plan->dW = d->values[1];
    plan->pH = pad->values[0];
    plan->pW = pad->values[1];
    plan->sH = s->values[0];
    plan->sW = s->values[1];
    /* With one output row (column) the stride never multiplies a nonzero index, so any value
     * gives the same result; a huge one (up to INT64_MAX is valid) would only overflow the
     * kernels' phase-plane arithmetic, so it is recorded as at most H (W). */
    if (OH == 1 && plan->sH > H) plan->sH = H > 0 ? H : 1;
    if (OW == 1 && plan->sW > W) plan->sW = W > 0 ? W : 1;
}

/* The end of phase 1 once every check passed: an executor that runs `kernel` on in -> out, or
 * one with nothing to do when `in` is empty.  `sums`: out is computed (col2im's sums), not
 * gathered, so saturation mode saturates it. */
static inline aclnnStatus nn_i2c_make_executor(const char *op, nn_kernel_fn kernel,
                                               nn_i2c_plan *plan, const aclTensor *in,
                                               const aclTensor *out, bool sums, uint64_t *workspaceSize,
                                               aclOpExecutor **executor)
{
    plan->in_dtype = in->dtype;
    plan->out_dtype = out->dtype;
    const bool empty = nn_tensor_is_empty(in);
    return nn_finish_phase1(op,
                            &(nn_phase1_end){.kernel = empty ? NULL : kernel, .plan = plan, .plan_size = sizeof *plan,
                                             .inputs = {empty ? NULL : in}, .outputs = {empty ? NULL : out},
                                             .computed_outputs = sums},
                            workspaceSize, executor);
}

#endif /* NN_IM2COL_COMMON_H */
