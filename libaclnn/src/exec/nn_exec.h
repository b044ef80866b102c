/*
 * nn_exec.h - the two-phase executor every operator is built on (exec/executor.c): phase 1
 * freezes the tensor arguments and the op's plan into an aclOpExecutor and lays out the
 * workspace; phase 2 (nn_launch_executor) queues [stage inputs, kernel, copy outputs back] on a
 * stream.  Operators include this header; it brings base (nn_base.h) and the meta objects
 * (nn_meta.h) with it.
 */
#ifndef NN_EXEC_H
#define NN_EXEC_H

#include "base/nn_base.h"
#include "meta/nn_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Executors                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define NN_MAX_OPERANDS 8

/* One tensor argument as frozen at phase 1: everything but the address, which phase 2 takes from
 * the tensor itself (as CANN's executors share their tensors' storage), so aclSetRawTensorAddr
 * or aclSet*TensorAddr on the tensor redirects the launch.  At phase 2 the kernel sees `data` pointing at a
 * contiguous row-major buffer of `numel` elements of `dtype` with shape `dims` (strides are
 * those of a contiguous tensor): either the caller's memory (tensor already contiguous; the
 * view offset is applied) or a staging area in the workspace (the executor copies strided inputs in
 * before the kernel and strided outputs out after it). */
typedef struct nn_operand {
    const aclTensor *handle;  /* caller's descriptor at phase 1; NULL for an absent optional */
    bool is_output;
    aclDataType dtype;
    aclFormat format;
    uint64_t ndim;
    int64_t dims[NN_MAX_DIMS];
    int64_t strides[NN_MAX_DIMS]; /* the caller's view strides, in elements */
    int64_t offset;               /* the caller's view offset, in elements */
    uint64_t serial;              /* the tensor's creation number: a destroyed tensor is told */
    void *base;                   /* the tensor's tensorData: at phase 1, and in a launch task
                                   * the tensor's address at the phase-2 call */
    int64_t numel;
    bool contiguous;              /* view strides are row-major contiguous */
    uint64_t staging_offset;      /* workspace offset of the contiguous copy, if !contiguous */
    void *data;                   /* set at launch: the contiguous buffer the kernel uses */
    uint64_t check_alloc;         /* checking mode: the device allocation the view lay in when
                                   * frozen or rebound (0: none, or checking off) */
    const char *name;             /* the argument's name in CANN's prototype, or NULL */
    bool shape_only;              /* an input whose bytes the kernel never reads */
} nn_operand;

/* What a kernel receives at phase 2 (on the stream's worker thread). */
typedef struct nn_launch {
    const char *op_name;
    const void *plan;          /* the op's frozen parameters (copied at phase 1) */
    nn_operand *operands;      /* inputs first, then outputs, in the order they were added */
    int num_operands;
    void *scratch;             /* op scratch area inside the workspace (NULL if none asked) */
    uint64_t scratch_size;
    const char **path;         /* where nn_launch_set_path records the kernel path that ran */
    bool saturation;           /* this launch runs in saturation mode: the product's only mode,
                                * or the stream's, copied from the device when it was created
                                * (docs/precision.md, "Overflow mode"); a kernel's own
                                * narrowings should follow it */
} nn_launch;

/* Names the kernel path a kernel chose (a string literal such as "col2im_avx512_rows"); the
 * launch trace (ASCEND_GLOBAL_LOG_LEVEL=1) prints it as kernel=<path>, as ONEDNN_VERBOSE names
 * its implementation. */
static inline void nn_launch_set_path(const nn_launch *launch, const char *path)
{
    if (launch->path != NULL) *launch->path = path;
}

/* A kernel returns ACLNN_SUCCESS or a status after nn_error(); the stream keeps the first error
 * and reports it (code and message) at the next synchronize. */
typedef aclnnStatus (*nn_kernel_fn)(const nn_launch *launch);

/* Phase 1 helpers.  An op validates, then:
 *     aclOpExecutor *ex = nn_executor_create("aclnnFoo", foo_kernel, &plan, sizeof plan);
 *     nn_executor_add_input(ex, self);  nn_executor_add_output(ex, out);
 *     nn_executor_add_scratch(ex, bytes);      (optional fp32 accumulation area)
 *     return nn_executor_finish(ex, workspaceSize, executor);
 * `kernel == NULL` makes an executor whose phase 2 does nothing (empty tensors).
 * nn_executor_create returns NULL only on allocation failure (after nn_error). */
aclOpExecutor *nn_executor_create(const char *op_name, nn_kernel_fn kernel, const void *plan,
                                  size_t plan_size);
/* Adds a tensor argument; `t` may be NULL for an absent optional one.  Returns its index in
 * launch->operands (inputs are kept in front of outputs, so add all inputs first for the
 * returned output indices to stay valid); -1 if ex is NULL or full (finish then fails). */
int nn_executor_add_input(aclOpExecutor *ex, const aclTensor *t);
int nn_executor_add_output(aclOpExecutor *ex, const aclTensor *t);
/* Names operand `index` (as returned by add_*; -1 is ignored) for checking-mode reports, and
 * marks an input whose bytes the kernel never reads (only its shape). */
void nn_executor_describe(aclOpExecutor *ex, int index, const char *name, bool shape_only);
/* Reserves `bytes` (64-byte aligned) of op scratch in the workspace. */
void nn_executor_add_scratch(aclOpExecutor *ex, uint64_t bytes);
/* Marks the outputs as computed (sums, products, casts; not copies): a launch that runs in
 * saturation mode (nn_launch.saturation) turns the fp16/bf16 outputs' Inf into +-MAX and NaN
 * into 0 after the kernel (docs/precision.md, "Overflow mode"); fp32 outputs stay as computed. */
void nn_executor_saturate_outputs(aclOpExecutor *ex);
/* Lays out the workspace (staging for non-contiguous operands, then scratch), registers the
 * executor, writes *workspaceSize and *executor.  Frees ex and returns an error on failure. */
aclnnStatus nn_executor_finish(aclOpExecutor *ex, uint64_t *workspaceSize, aclOpExecutor **executor);
/* Frees an executor that was never finished (phase 1 failed after create). */
void nn_executor_discard(aclOpExecutor *ex);

/* Phase 2, shared by every op: checks (NULL executor -> 161001, unknown/consumed executor or
 * workspaceSize smaller than planned -> 161002, workspace NULL with size > 0 -> 161001, unknown
 * stream), snapshots the operand addresses, and queues [stage inputs, kernel, copy outputs back]
 * on the stream.  A non-repeatable executor is consumed (freed once its task has run). */
aclnnStatus nn_launch_executor(const char *op_name, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);
/* Whether this launch on `stream` is one that aclnnCpuLaunchAndSynchronize synchronizes right
 * after (executor_api.c), so its stream need not wake its worker nor time it; the answer is
 * given once per such call. */
bool nn_launch_take_wait_follows(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* NN_EXEC_H */
