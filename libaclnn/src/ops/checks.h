/*
 * checks.h - the argument checks every operator's phase 1 is made of, with CANN's messages and
 * status codes, and the shared end of phase 1 (checks.c).
 *
 * An operator lists its arguments once, in the order CANN checks them, and runs the steps it
 * needs in that order:
 *
 *     if ((st = nn_check_args(OP, args, n)) != ACLNN_SUCCESS) return st;   NULL, then not live
 *     ... dtype / format / shape checks (nn_check_dtype_*, nn_check_same_*) ...
 *     if ((st = nn_check_result_ptrs(OP, workspaceSize, executor)) ...           phase 1's outputs
 *     return nn_finish_phase1(OP, &(nn_phase1_end){.kernel = foo_kernel, .plan = &plan,
 *                             .plan_size = sizeof plan, .inputs = {self}, .outputs = {out}},
 *                             workspaceSize, executor);
 *
 * Where an operator's CANN counterpart words a message its own way, the operator keeps that text.
 */
#ifndef NN_OPS_CHECKS_H
#define NN_OPS_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/nn_exec.h"

/* ---- handles ------------------------------------------------------------------------------ */

/* One handle argument of an aclnn function: a tensor or an int array, with its CANN name. */
typedef struct nn_arg {
    const char *name;
    const void *handle;
    bool is_array;             /* aclIntArray; otherwise aclTensor */
} nn_arg;

#define NN_TENSOR_ARG(name, t) ((nn_arg){(name), (const void *)(t), false})
#define NN_ARRAY_ARG(name, a) ((nn_arg){(name), (const void *)(a), true})
#define NN_ARG_COUNT(args) (sizeof(args) / sizeof((args)[0]))

/* The handle arguments, in `args` order: the first NULL one gives ACLNN_ERR_PARAM_NULLPTR with
 * CANN's text ("Expected a proper Tensor (IntArray) but got null for argument <name>."); then the
 * first that is not a live handle of its kind (destroyed, foreign, or another kind of handle,
 * which would crash CANN) gives ACLNN_ERR_PARAM_INVALID ("<op>: <name> must be a live aclTensor,
 * got a destroyed or foreign handle (0x...).").  No field of any argument is read before. */
aclnnStatus nn_check_args(const char *op, const nn_arg *args, size_t count);

/* Phase 1's two output pointers (nn_check_result_ptrs), then nn_check_args: the order of
 * the operators whose CANN code checks its outputs first. */
aclnnStatus nn_check_handles(const char *op, const uint64_t *workspaceSize, aclOpExecutor *const *executor,
                             const nn_arg *args, size_t count);

/* ACLNN_ERR_PARAM_NULLPTR for a NULL argument `name`: a tensor, an int array, or an output
 * pointer of phase 1 ("<name> must not be null."). */
aclnnStatus nn_null_tensor(const char *op, const char *name);
aclnnStatus nn_null_array(const char *op, const char *name);
aclnnStatus nn_null_out_param(const char *op, const char *name);
/* Both output pointers of phase 1, workspaceSize first: CANN dereferences them without a check,
 * and a NULL would crash it. */
aclnnStatus nn_check_result_ptrs(const char *op, const uint64_t *workspaceSize, aclOpExecutor *const *executor);

/* ---- dtypes ------------------------------------------------------------------------------- */

/* FLOAT, FLOAT16, BFLOAT16: what most of these operators accept. */
extern const aclDataType nn_float_dtypes[3];
#define NN_FLOAT_DTYPE_COUNT 3

bool nn_dtype_in(aclDataType dtype, const aclDataType *list, size_t count);
/* CANN's wording: "<op>: Tensor <name> not implemented for <DTYPE>, should be in dtype support
 * list [A, B, ...]." */
aclnnStatus nn_check_dtype_supported(const char *op, const char *name, const aclTensor *t,
                                     const aclDataType *list, size_t count);
/* "<op>: <name> dtype must be <A>, got <DTYPE>." or "... must be one of [A, B], got ...". */
aclnnStatus nn_check_dtype_one_of(const char *op, const char *name, const aclTensor *t,
                                  const aclDataType *list, size_t count);
/* "<op>: <name> dtype must equal <ref_name> dtype <REF>, got <DTYPE>." */
aclnnStatus nn_check_same_dtype(const char *op, const char *name, const aclTensor *t, const char *ref_name,
                                const aclTensor *ref);

/* ---- formats ------------------------------------------------------------------------------ */

/* CANN's wording: "<op>: Format of input and output should be equal, a [X], b [Y]." over the
 * tensors of `args` (all tensors). */
aclnnStatus nn_check_same_format(const char *op, const nn_arg *args, size_t count);

/* ---- shapes ------------------------------------------------------------------------------- */

/* A 2-D padding [left, right, top, bottom] of self's last two dims (stricter than CANN): every
 * pad >= 0 and smaller than the dim it pads (a zero dim is left to the empty-tensor rules). */
aclnnStatus nn_check_pad_values(const char *op, const aclTensor *self, const int64_t pad[4]);

/* ---- the end of phase 1 ------------------------------------------------------------------- */

/* What phase 2 runs: the kernel (NULL: nothing to do, e.g. empty tensors), the plan it gets (a
 * copy is kept), the tensor operands (inputs then outputs, each list ending at its first NULL)
 * and the scratch it needs in the workspace. */
typedef struct nn_phase1_end {
    nn_kernel_fn kernel;
    const void *plan;
    size_t plan_size;
    const aclTensor *inputs[NN_MAX_OPERANDS];
    const aclTensor *outputs[NN_MAX_OPERANDS];
    uint64_t scratch_bytes;
    /* The arguments' names in CANN's prototype (checking-mode reports name them), and the
     * inputs whose shape the operator uses but whose bytes it never reads (bit i: input i), so
     * initcheck does not ask that they were written. */
    const char *input_names[NN_MAX_OPERANDS];
    const char *output_names[NN_MAX_OPERANDS];
    unsigned shape_only_inputs;
    /* The outputs are computed (sums, products, casts), not copied: saturation mode saturates
     * them (nn_executor_saturate_outputs). */
    bool computed_outputs;
} nn_phase1_end;

/* Creates, fills and finishes the executor: *workspaceSize and *executor, or an error status
 * (ACLNN_ERR_INNER_CREATE_EXECUTOR when it cannot be allocated). */
aclnnStatus nn_finish_phase1(const char *op, const nn_phase1_end *end, uint64_t *workspaceSize,
                             aclOpExecutor **executor);

#endif /* NN_OPS_CHECKS_H */
