/*
 * executor_api.c - the public executor functions of aclnn/acl_meta.h: repeatable executors,
 * destroying them, rebinding their tensor addresses, plus aclDumpOpTensors and
 * aclnnInit/aclnnFinalize.
 *
 * Every function looks the executor up in the registry before touching it, so a consumed,
 * destroyed or foreign pointer gives a status and a message instead of a crash.
 */
#include "exec/nn_executor_impl.h"

NN_EXPORT aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    if (executor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR,
                        "aclSetAclOpExecutorRepeatable: executor must not be null.");
    pthread_mutex_lock(&nn_executor_lock);
    bool live = nn_executor_registered_locked(executor);
    if (live)
        executor->repeatable = true;
    pthread_mutex_unlock(&nn_executor_lock);
    if (!live)
        return nn_error(ACLNN_ERR_INNER,
                        "aclSetAclOpExecutorRepeatable: executor %p is not a live executor (consumed "
                        "by phase 2, destroyed, or not from a GetWorkspaceSize call).",
                        (void *)executor);
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (executor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor: executor must not be null.");
    pthread_mutex_lock(&nn_executor_lock);
    bool live = nn_executor_registered_locked(executor);
    if (live)
        nn_executor_unregister_locked(executor); /* freed now, or when its last queued task ends */
    pthread_mutex_unlock(&nn_executor_lock);
    if (!live)
        return nn_error(ACLNN_ERR_INNER,
                        "aclDestroyAclOpExecutor: executor %p is not a live executor (already "
                        "destroyed or consumed by phase 2).",
                        (void *)executor);
    return ACLNN_SUCCESS;
}

typedef enum { BIND_INPUT, BIND_OUTPUT, BIND_ANY } bind_kind;

static aclnnStatus set_tensor_addr(const char *fn, bind_kind kind, aclOpExecutor *executor,
                                   size_t index, aclTensor *tensor, void *addr)
{
    /* CANN stores the address into the descriptor before checking the executor. */
    if (nn_tensor_alive(tensor))
        tensor->data = addr;
    if (executor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: executor must not be null.", fn);
    if (tensor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: tensor must not be null.", fn);
    aclnnStatus live = nn_handle_check(fn, "tensor", tensor, NN_HANDLE_TENSOR);
    if (live != ACLNN_SUCCESS)
        return live;

    pthread_mutex_lock(&nn_executor_lock);
    aclnnStatus status = ACLNN_SUCCESS;
    if (!nn_executor_registered_locked(executor)) {
        status = nn_error(ACLNN_ERR_INNER,
                          "%s: executor %p is not a live executor (consumed by phase 2 or destroyed).",
                          fn, (void *)executor);
    } else {
        size_t first = kind == BIND_OUTPUT ? (size_t)executor->num_inputs : 0;
        size_t count = kind == BIND_INPUT    ? (size_t)executor->num_inputs
                       : kind == BIND_OUTPUT ? (size_t)(executor->num_operands - executor->num_inputs)
                                             : (size_t)executor->num_operands;
        const char *what = kind == BIND_INPUT ? "inputs" : kind == BIND_OUTPUT ? "outputs" : "tensors";
        if (index >= count) {
            status = nn_error(ACLNN_ERR_PARAM_INVALID,
                              "%s: index must be less than %zu (the %s executor has %zu %s), got %zu.",
                              fn, count, executor->op_name, count, what, index);
        } else {
            nn_operand *op = &executor->operands[first + index];
            if (op->handle == NULL)
                status = nn_error(ACLNN_ERR_PARAM_INVALID,
                                  "%s: tensor %zu of the %s executor was null (an absent optional "
                                  "argument) at phase 1; it has no address to set.",
                                  fn, index, executor->op_name);
            else
                op->base = addr;
        }
    }
    pthread_mutex_unlock(&nn_executor_lock);
    return status;
}

NN_EXPORT aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                            aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetInputTensorAddr", BIND_INPUT, executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                             aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetOutputTensorAddr", BIND_OUTPUT, executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                       aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetTensorAddr", BIND_ANY, executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                            aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetInputTensorAddr", BIND_INPUT, executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                             aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetOutputTensorAddr", BIND_OUTPUT, executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                       aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetTensorAddr", BIND_ANY, executor, index, tensor, addr);
}

/* None of our operators takes a tensor-list argument, so every index is out of range. */
static aclnnStatus set_dynamic_addr(const char *fn, aclOpExecutor *executor, size_t irIndex,
                                    size_t relativeIndex, aclTensorList *tensors, void *addr)
{
    if (executor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: executor must not be null.", fn);
    if (tensors == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: tensors must not be null.", fn);
    if (nn_handle_kind_of(tensors) == NN_HANDLE_TENSOR_LIST && relativeIndex < tensors->size &&
        nn_tensor_alive(tensors->items[relativeIndex]))
        tensors->items[relativeIndex]->data = addr;
    pthread_mutex_lock(&nn_executor_lock);
    bool live = nn_executor_registered_locked(executor);
    pthread_mutex_unlock(&nn_executor_lock);
    if (!live)
        return nn_error(ACLNN_ERR_INNER,
                        "%s: executor %p is not a live executor (consumed by phase 2 or destroyed).",
                        fn, (void *)executor);
    if (relativeIndex >= tensors->size)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: relativeIndex must be less than the list size %llu, got %zu.", fn,
                        (unsigned long long)tensors->size, relativeIndex);
    return nn_error(ACLNN_ERR_PARAM_INVALID,
                    "%s: the %s executor has no tensor-list argument (irIndex %zu).", fn,
                    executor->op_name, irIndex);
}

NN_EXPORT aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                   const size_t relativeIndex, aclTensorList *tensors,
                                                   void *addr)
{
    return set_dynamic_addr("aclSetDynamicInputTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                    const size_t relativeIndex, aclTensorList *tensors,
                                                    void *addr)
{
    return set_dynamic_addr("aclSetDynamicOutputTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                              const size_t relativeIndex, aclTensorList *tensors,
                                              void *addr)
{
    return set_dynamic_addr("aclSetDynamicTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus AclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                   const size_t relativeIndex, aclTensorList *tensors,
                                                   void *addr)
{
    return set_dynamic_addr("AclSetDynamicInputTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus AclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                                    const size_t relativeIndex, aclTensorList *tensors,
                                                    void *addr)
{
    return set_dynamic_addr("AclSetDynamicOutputTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus AclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex,
                                              const size_t relativeIndex, aclTensorList *tensors,
                                              void *addr)
{
    return set_dynamic_addr("AclSetDynamicTensorAddr", executor, irIndex, relativeIndex, tensors, addr);
}

NN_EXPORT aclnnStatus aclDumpOpTensors(const char *opType, const char *opName, aclTensor **tensors,
                                       size_t inputTensorNum, size_t outputTensorNum,
                                       aclrtStream stream)
{
    (void)stream;
    if (opType == NULL || opName == NULL || tensors == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclDumpOpTensors: %s must not be null.",
                        opType == NULL ? "opType" : opName == NULL ? "opName" : "tensors");
    nn_log(NN_LOG_WARNING,
           "aclDumpOpTensors: tensor dumping is not supported by this CPU library; %zu input and "
           "%zu output tensors of %s (%s) were not dumped.",
           inputTensorNum, outputTensorNum, opName, opType);
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath; /* no aclnn options apply to the CPU library */
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclnnFinalize(void)
{
    return ACLNN_SUCCESS;
}
