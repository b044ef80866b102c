/*
 * model_ri_task.c - the per-task calls of model runtime instances: aclmdlRIGetStreams,
 * aclmdlRIGetTasksByStream, aclmdlRITaskGetType, aclmdlRITaskGetSeqId, aclmdlRITaskGetParams,
 * aclmdlRIKernelTaskGetAttribute, aclmdlRITaskSetParams, aclmdlRITaskDisable, and what
 * aclmdlRIUpdate applies of the last two.
 *
 * What is kept.  Beside each recorded task (model->tasks) the model keeps a task_meta: the
 * stream that recorded it, and the changes asked for it.  The task's kind travels with the task
 * itself (nn_captured_task.type, set by the submitting code: an operator launch is KERNEL, an
 * event record / wait / reset and a value write / wait are what they are; copies, fills, host
 * functions and callbacks are DEFAULT, as CANN answers for the tasks its enum does not name).
 * The model lists the streams that recorded its tasks, first record first (and, for a built
 * model, the bound streams that recorded nothing): aclmdlRIGetStreams answers them.  CANN's
 * capture records into streams the model owns; libaclnn records from the program's own
 * streams, so those are the streams a capture answers; aclmdlRIGetTasksByStream answers for the
 * model a stream is bound to or captures into now, else for the newest live model it recorded
 * into.  A destroyed stream leaves the list (its tasks stay in the model).
 *
 * Task handles.  An aclmdlRITask is the model's id and the task's place in its list, packed in
 * the pointer: a handle is checked against the live models each time, so one of a destroyed
 * model is refused (107000), never read.  The sequence id (aclmdlRITaskGetSeqId) is that place,
 * from 0: the order in which the capture recorded the tasks, as CANN's GenerateSeqId numbers
 * them per captured model.
 *
 * Changes.  As in CANN (runtime:src/runtime/api/impl/api_impl.cc, TaskSetParams and
 * ModelTaskDisable; runtime:src/runtime/feature/aclgraph/capture_model_utils.cc,
 * CheckCaptureModelForUpdate): only captured models change (a built one answers 207000, a
 * branch of a conditional task 207000), not while one of their executions is queued or the
 * capture is open (107040), and a change applies at the next aclmdlRIUpdate: executions before
 * it run the tasks as they were.  aclmdlRITaskDisable takes any task but a DEFAULT one; a
 * disabled task is skipped by every later execution.  Of a Disable and a SetParams on one task
 * the later call wins (CANN keeps one update flag per task): new parameters make a disabled
 * task run again.  aclmdlRITaskSetParams takes VALUE_WRITE
 * and VALUE_WAIT params for any task but a DEFAULT one (the task becomes that value task, as
 * UpdateWriteValueTaskParams converts it), checked as aclrtValueWrite / aclrtValueWait check
 * theirs; event params are refused (107000) as there.  KERNEL params name an AI Core kernel
 * (funcHandle, args): libaclnn has none (aclrtBinaryGetFunction answers 207000), so they are
 * refused with 207000 and an operator launch's arguments change through a task group update
 * instead (model_ri_update.c).  For the same reason aclmdlRITaskGetParams answers a launch with
 * its type and an empty kernel part (no funcHandle, args or numBlocks).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/model_ri_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Books                                                                                       */
/* ------------------------------------------------------------------------------------------ */

bool nn_model_note_task_locked(nn_model *model, const nn_stream *stream, size_t index)
{
    if (!nn_model_grow((void **)&model->meta, &model->cap_meta, index, sizeof *model->meta))
        return false;
    if (!nn_model_recorded_by_locked(model, stream)) {
        if (!nn_model_grow((void **)&model->recorders, &model->cap_recorders, model->num_recorders,
                           sizeof *model->recorders))
            return false;
        model->recorders[model->num_recorders++] = stream;
    }
    model->meta[index] = (task_meta){.stream = stream};
    nn_model_note_thread_last_task(model->id, index); /* for aclrtCacheLastTask*Info (model_ri_info.c) */
    return true;
}

static void release_task(const nn_captured_task *task)
{
    if (task->release != NULL)
        task->release(task->ctx);
}

void nn_model_free_task_meta(nn_model *model)
{
    for (size_t i = 0; i < model->num_tasks; i++) {
        if (model->meta[i].has_replacement)
            release_task(&model->meta[i].replacement);
        nn_model_free_task_info(&model->meta[i]);
    }
    free(model->meta);
    free(model->recorders);
}

/* ------------------------------------------------------------------------------------------ */
/* Handles                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define TASK_INDEX_BITS 32
_Static_assert(sizeof(aclmdlRITask) * CHAR_BIT >= 2 * TASK_INDEX_BITS, "a task handle packs a model id and an index");

static aclmdlRITask task_handle(uint32_t model_id, size_t index)
{
    return (aclmdlRITask)(uintptr_t)(((uint64_t)model_id << TASK_INDEX_BITS) | (uint64_t)(index + 1));
}

/* The model behind a task handle (with a reference; its lock held) and the task's index; NULL
 * after nn_rt_error, which names `api`. */
static nn_model *lock_task(const char *api, aclmdlRITask task, size_t *index)
{
    const uint64_t packed = (uint64_t)(uintptr_t)task;
    const uint64_t place = packed & ((UINT64_C(1) << TASK_INDEX_BITS) - 1);
    if (task == NULL) {
        nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: task is NULL.", api);
        return NULL;
    }
    nn_model *model = place != 0 ? nn_model_find_id((uint32_t)(packed >> TASK_INDEX_BITS)) : NULL;
    if (model != NULL) {
        pthread_mutex_lock(&model->lock);
        if (place <= model->num_tasks) {
            *index = (size_t)place - 1;
            return model;
        }
        pthread_mutex_unlock(&model->lock);
        nn_model_unref(model);
    }
    nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: task %p is not a task of a live model runtime instance "
                "(aclmdlRIGetTasksByStream gives them; a destroyed model's tasks are gone).", api, task);
    return NULL;
}

static void unlock_model(nn_model *model)
{
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
}

/* Under model->lock: the task as the next execution after an aclmdlRIUpdate would run it. */
static const nn_captured_task *current_task_locked(const nn_model *model, size_t index)
{
    const task_meta *meta = &model->meta[index];
    return meta->has_replacement ? &meta->replacement : &model->tasks[index];
}

/* Under model->lock: why a branch model answers none of these calls (0: it is none). */
static aclError refuse_branch_locked(const char *api, const nn_model *model)
{
    if (!model->is_branch)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: modelRI %u is a branch of a conditional task "
                       "(aclmdlRIAddCondTask); CANN answers no per-task calls for it.", api, model->id);
}

/* The checks every task call but aclmdlRIKernelTaskGetAttribute makes: its output (`out`, named
 * `out_name`; NULL is 107000), the handle, and that the model is no branch.  The model, locked
 * and with a reference, or NULL with *err set after nn_rt_error. */
static nn_model *lock_task_checked(const char *api, aclmdlRITask task, const void *out, const char *out_name,
                                   size_t *index, aclError *err)
{
    *err = ACL_ERROR_RT_PARAM_INVALID;
    if (out == NULL) {
        nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s is NULL.", api, out_name);
        return NULL;
    }
    nn_model *model = lock_task(api, task, index);
    if (model == NULL)
        return NULL;
    *err = refuse_branch_locked(api, model);
    if (*err == ACL_SUCCESS)
        return model;
    unlock_model(model);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Streams and tasks                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Writes up to *capacity items into out (NULL: only counts) and answers *capacity as CANN's
 * two-call queries do: the count, or the number written (107039 when short); the rest NULL. */
static aclError answer_list(const char *api, const char *count_name, void **out, uint32_t *capacity,
                            void *const *items, size_t count)
{
    if (out == NULL) {
        *capacity = (uint32_t)count;
        return ACL_SUCCESS;
    }
    const size_t written = *capacity < count ? *capacity : count;
    for (size_t i = 0; i < *capacity; i++)
        out[i] = i < written ? items[i] : NULL;
    const uint32_t given = *capacity;
    *capacity = (uint32_t)written;
    if (written < count)
        return nn_rt_error(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, "%s: %s is %u and there are %zu; pass NULL "
                           "first to learn the number.", api, count_name, given, count);
    return ACL_SUCCESS;
}

/* Under model->lock: the model's streams into *out (malloc'd; NULL when none); false: out of memory. */
static bool collect_streams_locked(const nn_model *model, void ***out, size_t *count)
{
    *count = 0;
    *out = malloc((model->num_recorders + model->num_bound + 1) * sizeof **out);
    if (*out == NULL)
        return false;
    for (size_t i = 0; i < model->num_recorders; i++)
        if (model->recorders[i] != NULL)
            (*out)[(*count)++] = (void *)model->recorders[i];
    for (size_t i = 0; i < model->num_bound; i++)
        if (!nn_model_recorded_by_locked(model, model->bound[i]))
            (*out)[(*count)++] = model->bound[i];
    return true;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams, uint32_t *numStreams)
{
    static const char api[] = "aclmdlRIGetStreams";
    aclError err;
    nn_model *model = nn_model_find(api, modelRI, &err);
    if (model == NULL)
        return err;
    void **items = NULL;
    size_t count = 0;
    pthread_mutex_lock(&model->lock);
    err = refuse_branch_locked(api, model);
    if (err == ACL_SUCCESS && numStreams == NULL)
        err = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: numStreams is NULL.", api);
    if (err == ACL_SUCCESS && !collect_streams_locked(model, &items, &count))
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    pthread_mutex_unlock(&model->lock);
    if (err == ACL_SUCCESS)
        err = answer_list(api, "numStreams", streams, numStreams, items, count);
    free(items);
    nn_model_unref(model);
    return err;
}

/* The model of `s`: the one it is bound to or captures into now (its tasks so far), else the
 * newest that lists it; with a reference, or NULL after nn_rt_error. */
static nn_model *model_of_stream(const char *api, nn_stream *s, aclrtStream stream)
{
    nn_model *model = nn_stream_capture(s);
    if (model == NULL)
        model = nn_model_find_recorded_by(s);
    if (model == NULL)
        nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: stream %p recorded no task of a live model runtime instance "
                    "(it is bound to none; aclmdlRIGetStreams lists a model's streams).", api, stream);
    return model;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks, uint32_t *numTasks)
{
    static const char api[] = "aclmdlRIGetTasksByStream";
    if (stream == NULL || numTasks == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s is NULL.", api, stream == NULL ? "stream" : "numTasks");
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    nn_model *model = err == ACL_SUCCESS ? model_of_stream(api, s, stream) : NULL;
    if (model == NULL)
        return err != ACL_SUCCESS ? err : ACL_ERROR_RT_PARAM_INVALID;
    pthread_mutex_lock(&model->lock);
    err = refuse_branch_locked(api, model);
    void **items = err == ACL_SUCCESS ? malloc((model->num_tasks + 1) * sizeof *items) : NULL;
    size_t count = 0;
    if (err == ACL_SUCCESS && items == NULL)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    for (size_t i = 0; items != NULL && i < model->num_tasks; i++)
        if (model->meta[i].stream == s)
            items[count++] = task_handle(model->id, i);
    pthread_mutex_unlock(&model->lock);
    if (err == ACL_SUCCESS)
        err = answer_list(api, "numTasks", tasks, numTasks, items, count);
    free(items);
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    static const char api[] = "aclmdlRITaskGetType";
    size_t index;
    aclError err;
    nn_model *model = lock_task_checked(api, task, type, "type", &index, &err);
    if (model == NULL)
        return err;
    *type = (aclmdlRITaskType)current_task_locked(model, index)->type;
    unlock_model(model);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    static const char api[] = "aclmdlRITaskGetSeqId";
    size_t index;
    aclError err;
    nn_model *model = lock_task_checked(api, task, id, "id", &index, &err);
    if (model == NULL)
        return err;
    if (model->built)
        err = nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: modelRI %u was built (aclmdlRIBuildBegin); "
                          "sequence ids number the tasks of captured models only, as in CANN.", api, model->id);
    if (err == ACL_SUCCESS)
        *id = (uint32_t)index;
    unlock_model(model);
    return err;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters                                                                                  */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    static const char api[] = "aclmdlRITaskGetParams";
    size_t index;
    aclError err;
    nn_model *model = lock_task_checked(api, task, params, "params", &index, &err);
    if (model == NULL)
        return err;
    const nn_captured_task *current = current_task_locked(model, index);
    if (current->type == ACL_MODEL_RI_TASK_DEFAULT)
        err = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: task %p is a copy, fill, host function or callback "
                          "(ACL_MODEL_RI_TASK_DEFAULT); only the other task types have parameters.", api, task);
    if (err == ACL_SUCCESS) {
        memset(params, 0, sizeof *params);
        params->type = (aclmdlRITaskType)current->type;
        /* a launch answers its type only: it has no AI Core kernel, argument block or numBlocks */
        if (!nn_value_task_params(current, params))
            nn_event_task_params(current, params);
    }
    unlock_model(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task, aclrtLaunchKernelAttrId attrId,
                                                           aclrtLaunchKernelAttrValue *attrValue)
{
    static const char api[] = "aclmdlRIKernelTaskGetAttribute";
    if (task == NULL || attrValue == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, task == NULL ? "task" : "attrValue");
    size_t index;
    nn_model *model = lock_task(api, task, &index);
    if (model == NULL)
        return ACL_ERROR_RT_PARAM_INVALID;
    const bool kernel = current_task_locked(model, index)->type == ACL_MODEL_RI_TASK_KERNEL;
    unlock_model(model);
    if (!kernel)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: task %p is not an operator launch "
                           "(ACL_MODEL_RI_TASK_KERNEL); check it with aclmdlRITaskGetType first.", api, task);
    const uint64_t timeout_us = nn_rt_op_execute_timeout_ms() * 1000u;
    switch (attrId) {
    case ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
        attrValue->schemMode = 0; /* no scheduling mode was configured: the default */
        return ACL_SUCCESS;
    case ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE:
        attrValue->dynUBufSize = 0; /* a host launch has no unified buffer */
        return ACL_SUCCESS;
    case ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
        attrValue->isDataDump = 0; /* launches recorded into a model are not dumped (launch_dump.c) */
        return ACL_SUCCESS;
    case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
        attrValue->timeout = (uint16_t)(timeout_us / 1000000u > UINT16_MAX ? UINT16_MAX : timeout_us / 1000000u);
        return ACL_SUCCESS;
    case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US:
        attrValue->timeoutUs = (aclrtTimeoutUs){(uint32_t)timeout_us, (uint32_t)(timeout_us >> 32)};
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: attrId %d cannot be queried: SCHEM_MODE (1), "
                           "DYN_UBUF_SIZE (2), DATA_DUMP (6), TIMEOUT (7) and TIMEOUT_US (8) can (ENGINE_TYPE, "
                           "BLOCKDIM_OFFSET and BLOCK_TASK_PREFETCH are refused as in CANN).", api, (int)attrId);
    }
}

/* Under model->lock: why the task's model (no branch) takes no change now (0: it does). */
static aclError check_changeable_locked(const char *api, const nn_model *model, const nn_captured_task *current,
                                        aclmdlRITask task)
{
    if (model->built)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: modelRI %u was built (aclmdlRIBuildBegin); "
                           "only captured models change their tasks, as in CANN.", api, model->id);
    if (model->state != MODEL_READY || model->running_on != NULL)
        return nn_rt_error(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "%s: modelRI %u is %s; its tasks change only while "
                           "it is neither captured nor executing (synchronize its stream first).", api, model->id,
                           model->state != MODEL_READY ? "being captured" : "executing");
    if (current->type == ACL_MODEL_RI_TASK_DEFAULT)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: task %p is a copy, fill, host function or callback "
                           "(ACL_MODEL_RI_TASK_DEFAULT), which cannot be changed or disabled.", api, task);
    return ACL_SUCCESS;
}

/* Why params cannot replace a task (0: they can, as a value write or wait). */
static aclError check_set_params(const char *api, const aclmdlRITaskParams *params, const nn_captured_task *current)
{
    if (params->type == ACL_MODEL_RI_TASK_KERNEL && current->type != ACL_MODEL_RI_TASK_KERNEL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: KERNEL params apply only to an operator launch "
                           "(ACL_MODEL_RI_TASK_KERNEL); check the task with aclmdlRITaskGetType.", api);
    if (params->type == ACL_MODEL_RI_TASK_KERNEL)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: KERNEL params name an AI Core kernel "
                           "(funcHandle) and its argument block; libaclnn's operator launches run on the host "
                           "and have neither, so a launch's operands change through a task group update "
                           "(aclmdlRICaptureTaskUpdateBegin) instead.", api);
    if (params->type != ACL_MODEL_RI_TASK_VALUE_WRITE && params->type != ACL_MODEL_RI_TASK_VALUE_WAIT)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: params->type %d cannot be set: it must be "
                           "TASK_KERNEL (1), TASK_VALUE_WRITE (5) or TASK_VALUE_WAIT (6).", api, (int)params->type);
    if (params->taskGrp != NULL || params->opInfoPtr != NULL || params->opInfoSize != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: params->taskGrp and params->opInfoPtr must be NULL "
                           "and params->opInfoSize 0 for value tasks.", api);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    static const char api[] = "aclmdlRITaskSetParams";
    size_t index;
    aclError err;
    nn_model *model = lock_task_checked(api, task, params, "params", &index, &err);
    if (model == NULL)
        return err;
    const nn_captured_task *current = current_task_locked(model, index);
    err = check_changeable_locked(api, model, current, task);
    if (err == ACL_SUCCESS)
        err = check_set_params(api, params, current);
    nn_captured_task made;
    if (err == ACL_SUCCESS)
        err = nn_value_task_make(api, params, &made);
    if (err == ACL_SUCCESS) {
        task_meta *meta = &model->meta[index];
        if (meta->has_replacement)
            release_task(&meta->replacement);
        meta->replacement = made;
        meta->has_replacement = true;
        meta->disable_pending = false; /* the later call wins, as CANN's one update flag per task */
        model->changes_pending = true;
    }
    unlock_model(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRITaskDisable(aclmdlRITask task)
{
    static const char api[] = "aclmdlRITaskDisable";
    size_t index;
    aclError err;
    nn_model *model = lock_task_checked(api, task, api, "task", &index, &err); /* (no output) */
    if (model == NULL)
        return err;
    err = check_changeable_locked(api, model, current_task_locked(model, index), task);
    if (err == ACL_SUCCESS) {
        model->meta[index].disable_pending = true;
        model->changes_pending = true;
    }
    unlock_model(model);
    return err;
}

aclError nn_model_apply_task_changes(const char *api, nn_model *model)
{
    pthread_mutex_lock(&model->lock);
    aclError err = ACL_SUCCESS;
    if (model->changes_pending && model->running_on != NULL)
        err = nn_rt_error(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "%s: modelRI %u is executing; synchronize its stream "
                          "before applying task changes.", api, model->id);
    for (size_t i = 0; err == ACL_SUCCESS && model->changes_pending && i < model->num_tasks; i++) {
        task_meta *meta = &model->meta[i];
        if (meta->has_replacement) {
            release_task(&model->tasks[i]); /* no execution holds it: none is queued */
            model->tasks[i] = meta->replacement;
            meta->has_replacement = false;
            meta->disabled = false; /* a disabled task given new parameters runs again */
        }
        meta->disabled = meta->disabled || meta->disable_pending;
        meta->disable_pending = false;
    }
    if (err == ACL_SUCCESS)
        model->changes_pending = false;
    pthread_mutex_unlock(&model->lock);
    return err;
}
