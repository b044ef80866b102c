/*
 * model_ri_info.c - aclrtCacheLastTaskOpInfo / aclrtCacheLastTaskExtendInfo: information a
 * program attaches to the last task its thread gave a model runtime instance.
 *
 * As CANN's runtime (runtime:src/runtime/api/impl/api_impl.cc, CacheLastTaskOpInfo and
 * CacheLastTaskExtendInfo; runtime:src/runtime/api/impl/api_error.cc for the limits):
 *   - "the last task" is the last task the calling thread gave any stream (CANN's thread-local
 *     last stream and task id).  When that task went to a model (it was captured, or recorded by a
 *     stream bound to a model being built), the information is kept with it in the model's
 *     task_meta; when it was queued for running, there is no model to keep it: 507000
 *     (RT_ERROR_MODEL_NULL), as is a model destroyed since;
 *   - operator information needs a captured model whose capture is still open with the
 *     operator-information switch of its stream on (aclrtSetStreamAttribute
 *     ACL_STREAM_ATTR_CACHE_OP_INFO: CANN copies the capturing stream's switch into the capture
 *     model and clears it at aclmdlRICaptureEnd), else 507000 (RT_ERROR_MODEL_OP_CACHE_CLOSED);
 *     infoPtr NULL or infoSize 0 -> 100000 (the acl layer's checks), infoSize over 64 KiB ->
 *     107000;
 *   - extended information goes with a task of any model; extendInfoPtr NULL or infoSize 0 ->
 *     107000 (CANN's acl layer does not check them), more than 4096 bytes keeps the first 4096;
 *   - a later call on the same task replaces what an earlier one attached; the model frees both
 *     when it is destroyed;
 *   - the Atlas training series (Ascend910) has no ACL graphs in CANN's runtime: 207000.
 * The extended information shows in aclmdlRIDebugJsonPrint (model_ri_exec.c), as in CANN's
 * (Stream::TraceEventToJson).  CANN hands the operator information to its profiler (msprof's shape
 * records at each execution) and offers no call that reads it back; libaclnn keeps it with the
 * task for the model's lifetime (its profiler does not show it).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/model_ri_impl.h"

#define OP_INFO_MAX (64u * 1024u)  /* api_error.cc: MAX_SHAPE_INFO_SIZE */
#define EXTEND_INFO_MAX 4096u      /* api_error.cc: maxExtendInfoSize */

/* The last task the calling thread gave a model: its id and the task's index (valid when set). */
static _Thread_local struct {
    bool set;
    uint32_t model_id;
    size_t index;
} tl_last;

void nn_model_note_thread_last_task(uint32_t model_id, size_t index)
{
    tl_last.set = true;
    tl_last.model_id = model_id;
    tl_last.index = index;
}

void nn_model_forget_thread_last_task(void)
{
    tl_last.set = false;
}

void nn_model_free_task_info(task_meta *meta)
{
    free(meta->op_info);
    free(meta->extend_info);
}

static void unlock_model(nn_model *model)
{
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
}

/* The model of the thread's last task, locked and referenced, with the task's index; NULL after
 * nn_rt_error (507000). */
static nn_model *lock_last_task(const char *api, size_t *index)
{
    nn_model *model = tl_last.set ? nn_model_find_id(tl_last.model_id) : NULL;
    if (model == NULL) {
        nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: the calling thread's last task was not given to a live "
                    "model runtime instance (capture or build one first).", api);
        return NULL;
    }
    pthread_mutex_lock(&model->lock);
    if (tl_last.index >= model->num_tasks) { /* (the model's list was reset since) */
        unlock_model(model);
        nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: the calling thread's last task is no longer in modelRI %u.",
                    api, tl_last.model_id);
        return NULL;
    }
    *index = tl_last.index;
    return model;
}

/* Replaces *slot (of *slot_size bytes) with a copy of `size` bytes of `data`. */
static aclError keep_copy(const char *api, void **slot, size_t *slot_size, const void *data, size_t size)
{
    void *copy = malloc(size);
    if (copy == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory keeping %zu bytes.", api, size);
    memcpy(copy, data, size);
    free(*slot);
    *slot = copy;
    *slot_size = size;
    return ACL_SUCCESS;
}

static aclError check_product(const char *api)
{
    if (nn_soc_current() == NN_SOC_ASCEND910)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the Atlas training series (Ascend910) has no ACL "
                           "graphs to cache task information in.", api);
    return ACL_SUCCESS;
}

/* Whether the model takes operator information now (under its lock). */
static bool op_info_switch_on_locked(const nn_model *model)
{
    return !model->built && model->capture_open && model->state == MODEL_CAPTURING && model->origin != NULL &&
           nn_stream_attr_get(model->origin, NN_STREAM_ATTR_CACHE_OP_INFO) != 0;
}

ACL_FUNC_VISIBILITY aclError aclrtCacheLastTaskOpInfo(const void *const infoPtr, const size_t infoSize)
{
    const char *api = "aclrtCacheLastTaskOpInfo";
    if (infoPtr == NULL || infoSize == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           infoPtr == NULL ? "infoPtr is NULL" : "infoSize must be greater than 0");
    aclError err = check_product(api);
    if (err != ACL_SUCCESS)
        return err;
    if (infoSize > OP_INFO_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: infoSize %zu is outside (0, %u].", api, infoSize,
                           OP_INFO_MAX);
    size_t index;
    nn_model *model = lock_last_task(api, &index);
    if (model == NULL)
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (model->built)
        err = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: modelRI %u was built (aclmdlRIBuildBegin); operator "
                          "information goes with captured tasks only.", api, model->id);
    else if (!op_info_switch_on_locked(model))
        err = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: the operator information cache of modelRI %u is not "
                          "enabled: set ACL_STREAM_ATTR_CACHE_OP_INFO on the capturing stream first (and cache "
                          "before aclmdlRICaptureEnd).", api, model->id);
    else
        err = keep_copy(api, &model->meta[index].op_info, &model->meta[index].op_info_size, infoPtr, infoSize);
    unlock_model(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtCacheLastTaskExtendInfo(const char *const extendInfoPtr, const size_t infoSize)
{
    const char *api = "aclrtCacheLastTaskExtendInfo";
    aclError err = check_product(api);
    if (err != ACL_SUCCESS)
        return err;
    if (extendInfoPtr == NULL || infoSize == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.", api,
                           extendInfoPtr == NULL ? "extendInfoPtr is NULL" : "infoSize must not be 0");
    size_t kept = infoSize > EXTEND_INFO_MAX ? EXTEND_INFO_MAX : infoSize; /* CANN keeps the first 4096 */
    size_t index;
    nn_model *model = lock_last_task(api, &index);
    if (model == NULL)
        return ACL_ERROR_RT_INTERNAL_ERROR;
    task_meta *meta = &model->meta[index];
    err = keep_copy(api, (void **)&meta->extend_info, &meta->extend_info_size, extendInfoPtr, kept);
    unlock_model(model);
    return err;
}
