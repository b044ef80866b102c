/*
 * model_ri_cond.c - conditional tasks of captured models (aclmdlRICondHandleCreate,
 * aclmdlRICondHandleGetCondPtr, aclmdlRIAddCondTask, aclmdlRICaptureToModelRIBegin).
 *
 * A condition handle belongs to a model being captured and holds a 64-bit value in device
 * memory (zero at creation, as CANN's CondHandle::Setup clears it).  With
 * ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT the value is set to the handle's default whenever the
 * model (or the model it is a branch of) is executed, at the aclmdlRIExecuteAsync call, as
 * CANN's CaptureModel::PreModelExecute does (runtime:src/runtime/feature/aclgraph/
 * capture_model.cc): a value written before the execution is overwritten, which is why CANN's
 * 3_cond_model sample prints its else-branch for both of its IF runs.
 *
 * aclmdlRIAddCondTask records, on a stream that captures into the handle's model, one task and
 * makes params.size empty branch models, each filled by a capture that
 * aclmdlRICaptureToModelRIBegin opens on a stream and aclmdlRICaptureEnd closes.  When the task
 * runs it reads the value and runs the chosen branch's tasks in order, on the thread that runs
 * it (runtime:src/runtime/core/src/task/stars_cond_isa_helper.cc gives the choices):
 *   IF      value != 0: branch 0; else branch 1 if there are two, else nothing;
 *   WHILE   branch 0 as long as the value, read again before each round, is not 0;
 *   SWITCH  branch `value` when it is below the number of branches, else nothing.
 * A branch runs its operator launches, copies, fills, host functions and nested conditional
 * tasks; an event record, reset or wait inside a branch is re-issued on a stream on the card,
 * which the running task cannot do here, so it fails the conditional task (507000).
 *
 * CANN offers conditions on Ascend 950 only (elsewhere its ApiImpl answers "feature not
 * supported"): so does this file, after the parameter checks CANN makes first.
 */
#include <stdlib.h>

#include "runtime/model_ri_impl.h"

struct nn_cond_handle {
    nn_model *model;        /* the model it was made for (which frees it) */
    uint64_t *value;        /* the condition, in memory the copy calls accept as device memory */
    uint64_t default_value; /* written at each execution when assign_default */
    bool assign_default;
    bool has_task;          /* aclmdlRIAddCondTask was called with it (once per handle) */
    aclmdlRICondTaskType type;
    nn_model **branches;    /* references, size of them */
    uint32_t size;
};

/* CANN's asynchronous copies need 64-byte aligned addresses; the condition is one. */
#define COND_ALIGN 64

static pthread_mutex_t g_conds_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_conds; /* live condition handles */

static aclError need_ascend950(const char *api)
{
    if (nn_soc_current() == NN_SOC_ASCEND950)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: conditional tasks of model runtime instances "
                       "exist on Ascend 950 only (the emulated product is %s).", api, nn_soc_reported_name());
}

/* ------------------------------------------------------------------------------------------ */
/* Lifetime                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static void free_handle(nn_cond_handle *handle)
{
    for (uint32_t i = 0; i < handle->size; i++) {
        if (nn_model_unregister(handle->branches[i]))
            nn_model_unref(handle->branches[i]); /* the registry's: a branch goes with its model */
        nn_model_unref(handle->branches[i]);
    }
    nn_mem_unregister_mapped(handle->value);
    free(handle->value);
    free(handle->branches);
    free(handle);
}

void nn_model_free_conds(nn_model *model)
{
    pthread_mutex_lock(&g_conds_lock);
    for (size_t i = 0; i < model->num_conds; i++)
        nn_ptrset_remove(&g_conds, model->conds[i]);
    pthread_mutex_unlock(&g_conds_lock);
    for (size_t i = 0; i < model->num_conds; i++)
        free_handle(model->conds[i]);
    free(model->conds);
}

/* Sets the defaults of the model's conditions and, through its conditional tasks, of its branches'. */
static void assign_defaults(nn_model *model)
{
    pthread_mutex_lock(&model->lock);
    for (size_t i = 0; i < model->num_conds; i++) {
        nn_cond_handle *handle = model->conds[i];
        if (handle->assign_default)
            *(volatile uint64_t *)handle->value = handle->default_value;
        for (uint32_t b = 0; b < handle->size; b++)
            assign_defaults(handle->branches[b]); /* (a branch's lock after its parent's) */
    }
    pthread_mutex_unlock(&model->lock);
}

aclError nn_model_cond_prepare(const char *api, nn_model *model)
{
    if (model->is_branch)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: modelRI %u is a branch of a conditional task; "
                           "it runs only through that task.", api, model->id);
    assign_defaults(model);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                                      aclmdlRICondHandleFlag flag, aclmdlRICondHandle *handle)
{
    static const char api[] = "aclmdlRICondHandleCreate";
    if (modelRI == NULL || handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, modelRI == NULL ? "modelRI" : "handle");
    if ((uint32_t)flag > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flag must be 0 or ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT "
                           "(1), got %u.", api, (unsigned)flag);
    aclError err = need_ascend950(api);
    nn_model *model = err == ACL_SUCCESS ? nn_model_find(api, modelRI, &err) : NULL;
    if (model == NULL)
        return err;
    nn_cond_handle *made = calloc(1, sizeof *made);
    uint64_t *value = aligned_alloc(COND_ALIGN, COND_ALIGN); /* as aligned as the card's allocations */
    if (value != NULL)
        *value = 0;
    pthread_mutex_lock(&model->lock);
    bool capturing = model->capture_open && model->state == MODEL_CAPTURING;
    bool listed = capturing && made != NULL && value != NULL &&
                  nn_model_grow((void **)&model->conds, &model->cap_conds, model->num_conds, sizeof *model->conds);
    pthread_mutex_lock(&g_conds_lock);
    listed = listed && nn_mem_register_mapped(value, sizeof *value, "aclmdlRICondHandleCreate", "aclmdlRIDestroy") && nn_ptrset_add(&g_conds, made);
    pthread_mutex_unlock(&g_conds_lock);
    if (listed) {
        *made = (nn_cond_handle){model, value, defaultLaunchValue, flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT,
                                 false, ACL_MODEL_RI_COND_TYPE_IF, NULL, 0};
        model->conds[model->num_conds++] = made;
    }
    pthread_mutex_unlock(&model->lock);
    if (!capturing)
        err = nn_rt_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: modelRI %u is not being captured; condition "
                          "handles are made during a capture.", api, model->id);
    else if (!listed)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    if (listed)
        *handle = made;
    else {
        nn_mem_unregister_mapped(value);
        free(value);
        free(made);
    }
    nn_model_unref(model);
    return err;
}

/* The live handle, or NULL after nn_rt_error. */
static nn_cond_handle *find_handle(const char *api, aclmdlRICondHandle handle)
{
    pthread_mutex_lock(&g_conds_lock);
    bool live = handle != NULL && nn_ptrset_has(&g_conds, handle);
    pthread_mutex_unlock(&g_conds_lock);
    if (!live)
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle %p is not a condition handle of a live model runtime "
                    "instance (aclmdlRICondHandleCreate returns one).", api, handle);
    return live ? handle : NULL;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr)
{
    static const char api[] = "aclmdlRICondHandleGetCondPtr";
    if (handle == NULL || ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, handle == NULL ? "handle" : "ptr");
    aclError err = need_ascend950(api);
    if (err != ACL_SUCCESS)
        return err;
    nn_cond_handle *found = find_handle(api, handle);
    if (found == NULL)
        return ACL_ERROR_INVALID_PARAM;
    *ptr = found->value;
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* The conditional task                                                                        */
/* ------------------------------------------------------------------------------------------ */

static int run_model_inline(nn_model *branch);

/* Runs the branch's tasks in order on this thread; the first failure's status (0: none). */
static int run_branch(const nn_cond_handle *handle, uint32_t index)
{
    nn_model *branch = handle->branches[index];
    pthread_mutex_lock(&branch->lock);
    bool ready = branch->state == MODEL_READY; /* its list no longer changes */
    pthread_mutex_unlock(&branch->lock);
    if (!ready)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "conditional task of modelRI %u: its branch %u (modelRI "
                           "%u) was not captured to its end (aclmdlRICaptureToModelRIBegin .. "
                           "aclmdlRICaptureEnd).", handle->model->id, index, branch->id);
    return run_model_inline(branch);
}

static int run_model_inline(nn_model *branch)
{
    int first = 0;
    for (size_t i = 0; i < branch->num_tasks; i++) {
        const nn_captured_task *task = &branch->tasks[i];
        int status = task->run != NULL
                         ? task->run(task->ctx)
                         : nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "a branch of a conditional task (modelRI %u) "
                                       "holds an event record, reset or wait, which libaclnn cannot run inside "
                                       "the conditional task; the task was skipped.", branch->id);
        if (first == 0)
            first = status;
    }
    return first;
}

static uint64_t read_value(const nn_cond_handle *handle)
{
    return *(volatile const uint64_t *)handle->value;
}

static int run_cond(void *ctx)
{
    const nn_cond_handle *handle = ctx;
    uint64_t value = read_value(handle);
    switch (handle->type) {
    case ACL_MODEL_RI_COND_TYPE_IF:
        if (value != 0)
            return run_branch(handle, 0);
        return handle->size == 2 ? run_branch(handle, 1) : 0;
    case ACL_MODEL_RI_COND_TYPE_WHILE: {
        int status = 0;
        for (; value != 0 && status == 0; value = read_value(handle))
            status = run_branch(handle, 0);
        return status;
    }
    default: /* SWITCH */
        return value < handle->size ? run_branch(handle, (uint32_t)value) : 0;
    }
}

/* The parameter checks of CANN's ApiErrorDecorator::StreamAddCondTask and CheckCondTaskParamsSize. */
static aclError check_cond_params(const char *api, const aclmdlRICondTaskParams *params, aclrtStream stream,
                                  uint32_t flags)
{
    if (stream == NULL || params->handle == NULL || params->modelRIArray == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, stream == NULL ? "stream"
                           : params->handle == NULL ? "params.handle" : "params.modelRIArray");
    if ((uint32_t)params->type > ACL_MODEL_RI_COND_TYPE_SWITCH)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: params.type must be IF (0), WHILE (1) or SWITCH (2), "
                           "got %u.", api, (unsigned)params->type);
    if (flags != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flags is reserved and must be 0, got %u.", api, flags);
    bool size_ok = params->type == ACL_MODEL_RI_COND_TYPE_IF      ? params->size == 1 || params->size == 2
                   : params->type == ACL_MODEL_RI_COND_TYPE_WHILE ? params->size == 1
                                                                  : params->size > 0;
    if (!size_ok)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: params.size must be %s for this type, got %u.", api,
                           params->type == ACL_MODEL_RI_COND_TYPE_IF      ? "1 or 2"
                           : params->type == ACL_MODEL_RI_COND_TYPE_WHILE ? "1"
                                                                          : "greater than 0",
                           params->size);
    return need_ascend950(api);
}

/* Makes the handle's `size` empty branch models (references in handle->branches). */
static aclError make_branches(const char *api, nn_cond_handle *handle, uint32_t size)
{
    handle->branches = calloc(size, sizeof *handle->branches);
    if (handle->branches == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    aclError err = ACL_SUCCESS;
    for (uint32_t i = 0; i < size && err == ACL_SUCCESS; i++) {
        nn_model *branch = nn_model_new(api, MODEL_READY, &err);
        if (branch == NULL)
            break;
        branch->is_branch = true;
        nn_model_ref(branch); /* the handle's */
        handle->branches[handle->size++] = branch;
    }
    return err;
}

/* The model `s` captures into, if it is the handle's and the capture is open (with a reference). */
static aclError capturing_into(const char *api, nn_stream *s, const nn_cond_handle *handle, nn_model **model)
{
    *model = nn_stream_capture(s);
    bool open = false;
    if (*model != NULL) {
        pthread_mutex_lock(&(*model)->lock);
        open = (*model)->capture_open && (*model)->state == MODEL_CAPTURING;
        pthread_mutex_unlock(&(*model)->lock);
    }
    if (open && *model == handle->model)
        return ACL_SUCCESS;
    if (*model != NULL)
        nn_model_unref(*model);
    *model = NULL;
    if (!open)
        return nn_rt_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: the stream is not capturing.", api);
    return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the stream captures into another model than the one the "
                       "condition handle was made for (modelRI %u).", api, handle->model->id);
}

ACL_FUNC_VISIBILITY aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)
{
    static const char api[] = "aclmdlRIAddCondTask";
    aclError err = check_cond_params(api, &params, stream, flags);
    if (err != ACL_SUCCESS)
        return err;
    nn_cond_handle *handle = find_handle(api, params.handle);
    if (handle == NULL)
        return ACL_ERROR_INVALID_PARAM;
    nn_stream *s;
    err = nn_stream_resolve_named(api, stream, &s);
    nn_model *model = NULL;
    if (err == ACL_SUCCESS)
        err = capturing_into(api, s, handle, &model);
    if (err != ACL_SUCCESS)
        return err;
    pthread_mutex_lock(&model->lock);
    bool used = handle->has_task;
    handle->has_task = true;
    pthread_mutex_unlock(&model->lock);
    if (used)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the condition handle already has its conditional task.", api);
    else
        err = make_branches(api, handle, params.size);
    if (err == ACL_SUCCESS) {
        handle->type = params.type;
        err = nn_stream_submit(s, run_cond, NULL, handle); /* recorded: the stream captures */
    }
    for (uint32_t i = 0; err == ACL_SUCCESS && i < params.size; i++)
        params.modelRIArray[i] = handle->branches[i];
    nn_model_unref(model);
    return err; /* (branches made before a failure go with the model) */
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI,
                                                           aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureToModelRIBegin";
    nn_stream *s;
    aclError err = nn_model_check_capture_args(api, stream, mode, &s);
    nn_model *model = err == ACL_SUCCESS ? nn_model_find(api, modelRI, &err) : NULL;
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    bool fresh = model->is_branch && !model->branch_captured && model->state == MODEL_READY;
    model->branch_captured = model->branch_captured || fresh;
    pthread_mutex_unlock(&model->lock);
    if (!fresh)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: modelRI %u is not an empty branch model of a conditional "
                          "task (aclmdlRIAddCondTask makes them; each is captured once).", api, model->id);
    else
        err = nn_model_open_capture(api, model, s, mode);
    if (err != ACL_SUCCESS && fresh) {
        pthread_mutex_lock(&model->lock);
        model->branch_captured = false;
        pthread_mutex_unlock(&model->lock);
    }
    nn_model_unref(model);
    return err;
}
