/* checks.c - the operators' shared argument checks and end of phase 1 (checks.h). */
#include <stdio.h>

#include "ops/checks.h"

const aclDataType nn_float_dtypes[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

aclnnStatus nn_null_tensor(const char *op, const char *name)
{
    return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: Expected a proper Tensor but got null for argument %s.",
                    op, name);
}

aclnnStatus nn_null_array(const char *op, const char *name)
{
    return nn_error(ACLNN_ERR_PARAM_NULLPTR,
                    "%s: Expected a proper IntArray but got null for argument %s.", op, name);
}

aclnnStatus nn_null_out_param(const char *op, const char *name)
{
    return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s must not be null.", op, name);
}

aclnnStatus nn_check_result_ptrs(const char *op, const uint64_t *workspaceSize, aclOpExecutor *const *executor)
{
    if (workspaceSize == NULL) return nn_null_out_param(op, "workspaceSize");
    if (executor == NULL) return nn_null_out_param(op, "executor");
    return ACLNN_SUCCESS;
}

aclnnStatus nn_check_args(const char *op, const nn_arg *args, size_t count)
{
    /* An unknown ACLNN_SOC_VERSION leaves no product to follow. */
    aclnnStatus soc = nn_soc_check(op);
    if (soc != ACLNN_SUCCESS) return soc;
    for (size_t i = 0; i < count; i++) {
        if (args[i].handle == NULL)
            return args[i].is_array ? nn_null_array(op, args[i].name) : nn_null_tensor(op, args[i].name);
    }
    /* CANN reads a destroyed or foreign handle as if it were live (undefined: a crash or
     * garbage); each one is looked up in the registry of live handles before anything reads it. */
    for (size_t i = 0; i < count; i++) {
        aclnnStatus st = nn_handle_check(op, args[i].name, args[i].handle,
                                         args[i].is_array ? NN_HANDLE_INT_ARRAY : NN_HANDLE_TENSOR);
        if (st != ACLNN_SUCCESS) return st;
    }
    /* aclCreateTensor accepts a negative view dim, as CANN does; each CANN operator's shape
     * checks then reject it (Im2col: "GetDim(i) <= 0").  Every operator rejects it here, before
     * any size arithmetic sees it. */
    for (size_t i = 0; i < count; i++) {
        const aclTensor *t = args[i].handle;
        for (uint64_t d = 0; !args[i].is_array && d < t->ndim; d++) {
            if (t->dims[d] >= 0) continue;
            char shape[300];
            return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s has a negative dimension: shape %s (dim %llu is %lld).",
                            op, args[i].name, nn_shape_str(shape, sizeof shape, t->ndim, t->dims),
                            (unsigned long long)d, (long long)t->dims[d]);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus nn_check_handles(const char *op, const uint64_t *workspaceSize, aclOpExecutor *const *executor,
                             const nn_arg *args, size_t count)
{
    aclnnStatus st = nn_check_result_ptrs(op, workspaceSize, executor);
    return st != ACLNN_SUCCESS ? st : nn_check_args(op, args, count);
}

bool nn_dtype_in(aclDataType dtype, const aclDataType *list, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (list[i] == dtype) return true;
    }
    return false;
}

/* "A, B, C" into buf. */
static const char *dtype_list_str(char *buf, size_t size, const aclDataType *list, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", nn_dtype_name(list[i]));
        if (n < 0) break;
        used += (size_t)n;
    }
    return buf;
}

aclnnStatus nn_check_dtype_supported(const char *op, const char *name, const aclTensor *t,
                                     const aclDataType *list, size_t count)
{
    if (nn_dtype_in(t->dtype, list, count)) return ACLNN_SUCCESS;
    char names[192];
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: Tensor %s not implemented for %s, should be in dtype support list [%s].",
                    op, name, nn_dtype_name(t->dtype), dtype_list_str(names, sizeof names, list, count));
}

aclnnStatus nn_check_dtype_one_of(const char *op, const char *name, const aclTensor *t,
                                  const aclDataType *list, size_t count)
{
    if (nn_dtype_in(t->dtype, list, count)) return ACLNN_SUCCESS;
    char names[192];
    if (count == 1)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s dtype must be %s, got %s.", op, name,
                        nn_dtype_name(list[0]), nn_dtype_name(t->dtype));
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s dtype must be one of [%s], got %s.", op, name,
                    dtype_list_str(names, sizeof names, list, count), nn_dtype_name(t->dtype));
}

aclnnStatus nn_check_same_dtype(const char *op, const char *name, const aclTensor *t, const char *ref_name,
                                const aclTensor *ref)
{
    if (t->dtype == ref->dtype) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s dtype must equal %s dtype %s, got %s.", op, name, ref_name,
                    nn_dtype_name(ref->dtype), nn_dtype_name(t->dtype));
}

aclnnStatus nn_check_same_format(const char *op, const nn_arg *args, size_t count)
{
    bool same = true;
    for (size_t i = 1; i < count; i++) {
        same = same && ((const aclTensor *)args[i].handle)->format == ((const aclTensor *)args[0].handle)->format;
    }
    if (same) return ACLNN_SUCCESS;
    char list[256];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < count && used < sizeof list; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s [%s]", i ? ", " : "", args[i].name,
                         nn_format_name(((const aclTensor *)args[i].handle)->format));
        if (n < 0) break;
        used += (size_t)n;
    }
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: Format of input and output should be equal, %s.", op, list);
}

aclnnStatus nn_check_pad_values(const char *op, const aclTensor *self, const int64_t pad[4])
{
    const int64_t H = self->dims[self->ndim - 2], W = self->dims[self->ndim - 1];
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: padding values must be >= 0, got [%lld, %lld, %lld, %lld].", op,
                        (long long)pad[0], (long long)pad[1], (long long)pad[2], (long long)pad[3]);
    }
    if (W > 0 && (pad[0] >= W || pad[1] >= W)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: padding left/right must be less than the width of self (%lld), got [%lld, %lld].", op,
                        (long long)W, (long long)pad[0], (long long)pad[1]);
    }
    if (H > 0 && (pad[2] >= H || pad[3] >= H)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: padding top/bottom must be less than the height of self (%lld), got [%lld, %lld].", op,
                        (long long)H, (long long)pad[2], (long long)pad[3]);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus nn_finish_phase1(const char *op, const nn_phase1_end *end, uint64_t *workspaceSize,
                             aclOpExecutor **executor)
{
    aclOpExecutor *ex = nn_executor_create(op, end->kernel, end->plan, end->plan_size);
    if (ex == NULL) return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    for (int i = 0; i < NN_MAX_OPERANDS && end->inputs[i] != NULL; i++)
        nn_executor_describe(ex, nn_executor_add_input(ex, end->inputs[i]), end->input_names[i],
                             (end->shape_only_inputs >> i) & 1u);
    for (int i = 0; i < NN_MAX_OPERANDS && end->outputs[i] != NULL; i++)
        nn_executor_describe(ex, nn_executor_add_output(ex, end->outputs[i]), end->output_names[i],
                             false);
    if (end->scratch_bytes > 0) nn_executor_add_scratch(ex, end->scratch_bytes);
    if (end->computed_outputs) nn_executor_saturate_outputs(ex);
    return nn_executor_finish(ex, workspaceSize, executor);
}
