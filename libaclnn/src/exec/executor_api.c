/*
 * executor_api.c - the public executor functions of aclnn/acl_meta.h: repeatable executors,
 * destroying them, rebinding their tensor addresses, plus aclnnInit/aclnnFinalize and
 * libaclnn's aclnnCpuLaunchAndSynchronize (aclDumpOpTensors is in launch_dump.c).
 *
 * Every function looks the executor up in the registry before touching it, so a consumed,
 * destroyed or foreign pointer gives a status and a message instead of a crash.
 */
#include <string.h>

#include "acl/acl_rt.h"
#include "exec/nn_executor_impl.h"

NN_EXPORT aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    if (executor == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR,
                        "aclSetAclOpExecutorRepeatable: executor must not be null.");
    pthread_mutex_lock(&nn_executor_lock);
    aclOpExecutor *ex = nn_executor_live_locked(executor);
    const bool live = ex != NULL;
    if (live)
        ex->repeatable = true;
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
    aclOpExecutor *ex = nn_executor_live_locked(executor);
    const bool live = ex != NULL;
    if (live)
        nn_executor_unregister_locked(ex); /* freed now, or when its last queued task ends */
    pthread_mutex_unlock(&nn_executor_lock);
    if (!live)
        return nn_error(ACLNN_ERR_INNER,
                        "aclDestroyAclOpExecutor: executor %p is not a live executor (already "
                        "destroyed or consumed by phase 2).",
                        (void *)executor);
    return ACLNN_SUCCESS;
}

/* As CANN's opbase does for its built-in operators: the call sets the storage address of
 * `tensor`, and every launch of an executor planned with that tensor uses it (phase 2 reads its
 * tensors' current addresses).  `index` is ignored, as there, so a wrong index with the right
 * tensor rebinds the right operand.  A tensor the executor was not planned with changes nothing
 * for it: that is allowed (CANN returns success) and logged as a warning. */
static aclnnStatus set_tensor_addr(const char *fn, aclOpExecutor *executor,
                                   size_t index, aclTensor *tensor, void *addr)
{
    (void)index;
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
    const aclOpExecutor *ex = nn_executor_live_locked(executor);
    if (ex == NULL) {
        pthread_mutex_unlock(&nn_executor_lock);
        return nn_error(ACLNN_ERR_INNER,
                        "%s: executor %p is not a live executor (consumed by phase 2 or destroyed).",
                        fn, (void *)executor);
    }
    bool planned = false; /* as an input or an output: the address is the tensor's either way */
    for (int i = 0; i < ex->num_operands && !planned; i++)
        planned = ex->operands[i].handle == tensor;
    char op_name[NN_OP_NAME_MAX];
    memcpy(op_name, ex->op_name, sizeof op_name);
    pthread_mutex_unlock(&nn_executor_lock);
    if (!planned)
        nn_log(NN_LOG_WARNING,
               "%s: tensor %p is not a tensor of the %s executor %p; its address was set, "
               "which changes nothing for this executor.", fn, (void *)tensor, op_name,
               (void *)executor);
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                            aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetInputTensorAddr", executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                             aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetOutputTensorAddr", executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                       aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetTensorAddr", executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                            aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetInputTensorAddr", executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                             aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetOutputTensorAddr", executor, index, tensor, addr);
}

NN_EXPORT aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                                       aclTensor *tensor, void *addr)
{
    return set_tensor_addr("AclSetTensorAddr", executor, index, tensor, addr);
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
    const aclOpExecutor *ex = nn_executor_live_locked(executor);
    char op_name[NN_OP_NAME_MAX] = "";
    if (ex != NULL)
        memcpy(op_name, ex->op_name, sizeof op_name);
    pthread_mutex_unlock(&nn_executor_lock);
    if (ex == NULL)
        return nn_error(ACLNN_ERR_INNER,
                        "%s: executor %p is not a live executor (consumed by phase 2 or destroyed).",
                        fn, (void *)executor);
    if (relativeIndex >= tensors->size)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: relativeIndex must be less than the list size %llu, got %zu.", fn,
                        (unsigned long long)tensors->size, relativeIndex);
    return nn_error(ACLNN_ERR_PARAM_INVALID,
                    "%s: the %s executor has no tensor-list argument (irIndex %zu).", fn,
                    op_name, irIndex);
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

NN_EXPORT aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath; /* no aclnn options apply to the CPU library */
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclnnFinalize(void)
{
    return ACLNN_SUCCESS;
}

/* The stream that aclnnCpuLaunchAndSynchronize synchronizes after its launch call, while that
 * call runs on this thread. */
static _Thread_local struct {
    bool set;
    aclrtStream stream;
} t_wait_follows;

bool nn_launch_take_wait_follows(aclrtStream stream)
{
    /* only the call's first launch: a launch function that queued more leaves the rest as any */
    const bool follows = t_wait_follows.set && t_wait_follows.stream == stream;
    t_wait_follows.set = false;
    return follows;
}

NN_EXPORT aclnnStatus aclnnCpuLaunchAndSynchronize(
    aclnnStatus (*launch)(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                          aclrtStream stream),
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream,
    aclError *waited)
{
    if (launch == NULL || waited == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclnnCpuLaunchAndSynchronize: %s must not be null.",
                        launch == NULL ? "launch" : "waited");
    *waited = ACL_SUCCESS;
    t_wait_follows.set = true;
    t_wait_follows.stream = stream;
    aclnnStatus status = launch(workspace, workspaceSize, executor, stream);
    t_wait_follows.set = false; /* (a launch function that launched nothing left it set) */
    if (status != ACLNN_SUCCESS)
        return status;
    *waited = aclrtSynchronizeStream(stream);
    return *waited == ACL_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_RUNTIME_ERROR;
}
