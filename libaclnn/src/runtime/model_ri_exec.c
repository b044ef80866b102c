/*
 * model_ri_exec.c - model runtime instances, second half: building (aclmdlRIBuildBegin ..
 * aclmdlRIBuildEnd), execution, destroy, names, destroy callbacks and debug output.  The
 * design is described in model_ri.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/model_ri_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Building                                                                                    */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
    (void)flag; /* reserved: CANN documents 0 */
    if (modelRI == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRIBuildBegin: modelRI is NULL.");
    aclError err;
    nn_model *model = nn_model_new("aclmdlRIBuildBegin", MODEL_BUILDING, &err);
    if (model == NULL)
        return err;
    *modelRI = model;
    return ACL_SUCCESS;
}

/* The model and the stream of a build call, each checked; the model carries a reference. */
static aclError find_model_and_stream(const char *api, aclmdlRI modelRI, aclrtStream stream, nn_model **model,
                                      nn_stream **s)
{
    aclError err;
    *model = nn_model_find(api, modelRI, &err);
    if (*model == NULL)
        return err;
    err = nn_stream_resolve_named(api, stream, s);
    if (err != ACL_SUCCESS)
        nn_model_unref(*model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag)
{
    static const char api[] = "aclmdlRIBindStream";
    nn_model *model;
    nn_stream *s;
    aclError err = find_model_and_stream(api, modelRI, stream, &model, &s);
    if (err != ACL_SUCCESS)
        return err;
    pthread_mutex_lock(&model->lock);
    bool building = model->state == MODEL_BUILDING;
    const bool late = flag != NN_MODEL_STREAM_FLAG_HEAD; /* it waits for an activation (model_ri_active.c) */
    bool listed = building &&
                  nn_model_grow((void **)&model->bound, &model->cap_bound, model->num_bound, sizeof *model->bound) &&
                  (!late || nn_model_grow((void **)&model->late, &model->cap_late, model->num_late,
                                          sizeof *model->late));
    if (listed)
        model->bound[model->num_bound++] = s;
    if (listed && late)
        model->late[model->num_late++] = s;
    pthread_mutex_unlock(&model->lock);
    if (!building)
        err = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: modelRI %u is not being built (aclmdlRIBuildBegin "
                          "... aclmdlRIBuildEnd).", api, model->id);
    else if (!listed)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    else if (nn_stream_set_capture(s, model, NULL) != ACL_SUCCESS) {
        pthread_mutex_lock(&model->lock);
        nn_model_unbind_locked(model, s);
        if (late && model->num_late > 0 && model->late[model->num_late - 1] == s)
            model->num_late--;
        pthread_mutex_unlock(&model->lock);
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p already captures into, or is bound "
                          "to, a model runtime instance.", api, stream);
    } else {
        nn_model_ref(model); /* the stream's */
    }
    nn_model_unref(model);
    return err;
}

/* Whether `s` is bound to `model`, after an error naming `api` if not. */
static aclError check_bound(const char *api, nn_model *model, nn_stream *s, aclrtStream stream)
{
    nn_model *current = nn_stream_capture(s);
    bool bound = current == model;
    if (current != NULL)
        nn_model_unref(current);
    if (bound)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is not bound to modelRI %u.", api, stream,
                       model->id);
}

ACL_FUNC_VISIBILITY aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)
{
    nn_model *model;
    nn_stream *s;
    aclError err = find_model_and_stream("aclmdlRIEndTask", modelRI, stream, &model, &s);
    if (err != ACL_SUCCESS)
        return err;
    /* The card ends the stream's task list with a model-end task; here the list ends by itself. */
    err = check_bound("aclmdlRIEndTask", model, s, stream);
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
    (void)reserve;
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIBuildEnd", modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    bool building = model->state == MODEL_BUILDING;
    if (building)
        model->state = MODEL_READY; /* bound streams queue their tasks again from here */
    pthread_mutex_unlock(&model->lock);
    err = building ? ACL_SUCCESS
                   : nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIBuildEnd: modelRI %u is not being built.",
                                 model->id);
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)
{
    nn_model *model;
    nn_stream *s;
    aclError err = find_model_and_stream("aclmdlRIUnbindStream", modelRI, stream, &model, &s);
    if (err != ACL_SUCCESS)
        return err;
    pthread_mutex_lock(&model->lock);
    bool was_bound = nn_model_unbind_locked(model, s);
    pthread_mutex_unlock(&model->lock);
    if (was_bound && nn_stream_set_capture(s, NULL, model) == ACL_SUCCESS)
        nn_model_unref(model); /* the stream's reference */
    else
        err = nn_rt_error(ACL_ERROR_RT_STREAM_MODEL, "aclmdlRIUnbindStream: stream %p is not bound to modelRI %u.",
                          stream, model->id);
    nn_model_unref(model);
    return err;
}

/* ------------------------------------------------------------------------------------------ */
/* Execution                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static int run_execution_end(void *ctx)
{
    (void)ctx;
    return 0;
}

/* Also reached when a force-destroy drops the execution: the model's tasks before it are done. */
static void release_execution(void *ctx)
{
    nn_model *model = ctx;
    pthread_mutex_lock(&model->lock);
    if (--model->executions == 0)
        model->running_on = NULL;
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
}

/* Under model->lock: why the model cannot execute on `s` now (0: it can). */
static aclError check_executable_locked(const char *api, const nn_model *model, const nn_stream *s)
{
    if (model->state != MODEL_READY)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: modelRI %u is %s; end its capture or build first.",
                           api, model->id, model->state == MODEL_BUILDING ? "being built" : "being captured");
    if (model->running_on != NULL && model->running_on != s)
        return nn_rt_error(ACL_ERROR_RT_MODEL_RUNNING, "%s: modelRI %u still runs on another stream; "
                           "synchronize that stream first.", api, model->id);
    return ACL_SUCCESS;
}

/* Queues one recorded task on `s`: as it was given (its ctx stays the model's), or re-issued. */
static aclError queue_recorded(nn_model *model, const nn_captured_task *task, nn_stream *s)
{
    if (task->replay != NULL)
        return task->replay(task->ctx, s);
    if (nn_model_abortable(model))
        return nn_model_queue_abortable(model, task, s);
    if (task->inline_ok)
        return nn_stream_submit_inline_ok(s, task->run, NULL, task->ctx);
    return nn_stream_submit(s, task->run, NULL, task->ctx);
}

static aclError execute_async(const char *api, aclmdlRI modelRI, aclrtStream stream)
{
    aclError err;
    nn_model *model = nn_model_find(api, modelRI, &err);
    if (model == NULL)
        return err;
    nn_stream *s;
    err = nn_stream_resolve_named(api, stream, &s);
    if (err == ACL_SUCCESS && nn_stream_records(s))
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p records into a model runtime instance "
                          "itself; libaclnn does not nest models.", api, stream);
    if (err == ACL_SUCCESS)
        err = nn_model_cond_prepare(api, model);
    if (err == ACL_SUCCESS) {
        pthread_mutex_lock(&model->lock);
        err = check_executable_locked(api, model, s);
        if (err == ACL_SUCCESS) {
            model->running_on = s;
            model->executions++;
        }
        pthread_mutex_unlock(&model->lock);
    }
    if (err != ACL_SUCCESS) {
        nn_model_unref(model);
        return err;
    }
    /* The list changes once the model is ready only by aclmdlRIUpdate, which refuses while an
     * execution is queued (model_ri_task.c): no lock while queuing. */
    bool switching = nn_model_has_switches(model);
    bool activating = !switching && nn_model_has_activations(model);
    if (switching)
        err = nn_model_queue_switching(model, s); /* one walk through the switches (model_ri_label.c) */
    else if (activating)
        err = nn_model_queue_activating(model, s); /* one walk through the streams (model_ri_active.c) */
    for (size_t i = 0; i < model->num_tasks && err == ACL_SUCCESS && !switching && !activating; i++)
        if (!model->meta[i].disabled) /* aclmdlRITaskDisable (model_ri_task.c) */
            err = queue_recorded(model, &model->tasks[i], s);
    aclError end = nn_stream_submit(s, run_execution_end, release_execution, model); /* takes our reference */
    return err != ACL_SUCCESS ? err : end;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    return execute_async("aclmdlRIExecuteAsync", modelRI, stream);
}

ACL_FUNC_VISIBILITY aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)
{
    /* On the current context's default stream, then waits for it (timeout as aclrtSynchronizeStreamWithTimeout). */
    aclError err = execute_async("aclmdlRIExecute", modelRI, NULL);
    if (err != ACL_SUCCESS)
        return err;
    return aclrtSynchronizeStreamWithTimeout(NULL, timeout);
}

/* ------------------------------------------------------------------------------------------ */
/* Destroy, names, callbacks, debug output                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Unbinds every stream still bound to the model (a model being destroyed). */
static void unbind_all(nn_model *model)
{
    for (;;) {
        pthread_mutex_lock(&model->lock);
        nn_stream *s = model->num_bound > 0 ? model->bound[--model->num_bound] : NULL;
        pthread_mutex_unlock(&model->lock);
        if (s == NULL)
            return;
        if (nn_stream_set_capture(s, NULL, model) == ACL_SUCCESS)
            nn_model_unref(model);
    }
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIDestroy";
    aclError err;
    nn_model *model = nn_model_find(api, modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    bool capturing = model->capture_open;
    pthread_mutex_unlock(&model->lock);
    if (capturing) {
        nn_model_unref(model);
        return nn_rt_error(ACL_ERROR_RT_MODEL_CAPTURED, "%s: modelRI %u is being captured; end the capture "
                           "with aclmdlRICaptureEnd first.", api, model->id);
    }
    if (!nn_model_unregister(model)) { /* another thread destroyed it meanwhile */
        nn_model_unref(model);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: modelRI %p was already destroyed.", api, modelRI);
    }
    unbind_all(model);
    for (size_t i = 0; i < model->num_callbacks; i++)
        model->callbacks[i].func(model->callbacks[i].user_data);
    nn_model_unref(model); /* the registry's: queued executions keep theirs */
    nn_model_unref(model);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRISetName", modelRI, &err);
    if (model == NULL)
        return err;
    char *copy = name != NULL ? strdup(name) : NULL;
    if (name == NULL || copy == NULL) {
        err = name == NULL ? nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRISetName: name is NULL.")
                           : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRISetName: out of memory.");
    } else {
        pthread_mutex_lock(&model->lock);
        free(model->name);
        model->name = copy;
        pthread_mutex_unlock(&model->lock);
    }
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIGetName", modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    const char *current = model->name != NULL ? model->name : "";
    size_t length = strlen(current);
    if (name == NULL || maxLen <= length)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetName: the name of modelRI %u needs %zu bytes, "
                          "maxLen is %u%s.", model->id, length + 1, maxLen, name == NULL ? " and name is NULL" : "");
    else
        memcpy(name, current, length + 1);
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIGetId", modelRI, &err);
    if (model == NULL)
        return err;
    if (modelRIId == NULL)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetId: modelRIId is NULL.");
    else
        *modelRIId = model->id;
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func, void *userData)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIDestroyRegisterCallback", modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    destroy_callback *grown = func == NULL ? NULL
                                           : realloc(model->callbacks, (model->num_callbacks + 1) * sizeof *grown);
    if (grown != NULL) {
        model->callbacks = grown;
        model->callbacks[model->num_callbacks++] = (destroy_callback){func, userData};
    }
    pthread_mutex_unlock(&model->lock);
    if (func == NULL)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroyRegisterCallback: func is NULL.");
    else if (grown == NULL)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRIDestroyRegisterCallback: out of memory.");
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIDestroyUnregisterCallback", modelRI, &err);
    if (model == NULL)
        return err;
    bool found = false;
    pthread_mutex_lock(&model->lock);
    for (size_t i = 0; i < model->num_callbacks && !found; i++) {
        if (model->callbacks[i].func == func) {
            memmove(&model->callbacks[i], &model->callbacks[i + 1],
                    (model->num_callbacks - i - 1) * sizeof *model->callbacks);
            model->num_callbacks--;
            found = true;
        }
    }
    pthread_mutex_unlock(&model->lock);
    if (!found)
        err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroyUnregisterCallback: the callback is not "
                          "registered on modelRI %u.", model->id);
    nn_model_unref(model);
    return err;
}

static const char *task_kind(const nn_captured_task *task)
{
    const char *label_kind = nn_model_label_task_kind(task);
    if (label_kind != NULL)
        return label_kind;
    const char *activation_kind = nn_model_activation_task_kind(task);
    if (activation_kind != NULL)
        return activation_kind;
    if (task->replay != NULL)
        return "event record, reset or wait";
    return task->inline_ok ? "operator launch, copy or fill" : "callback or host function";
}

static const char *state_name(model_state state)
{
    static const char *const names[] = {"building", "capturing", "invalidated", "ready"};
    return names[state];
}

/* Writes `len` bytes of text as the inside of a JSON string. */
static void write_json_text(FILE *out, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        const char c = text[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if ((unsigned char)c < 0x20)
            fprintf(out, "\\u%04x", (unsigned)(unsigned char)c);
        else
            fputc(c, out);
    }
}

/* Writes the model as JSON (lock held).  A task's aclrtCacheLastTaskExtendInfo text goes in its
 * "ExtendInfo", as CANN's Stream::TraceEventToJson writes it (runtime:src/runtime/core/src/stream/
 * stream.cc). */
static void write_json_locked(FILE *out, const nn_model *model)
{
    fprintf(out, "{\n  \"modelRI\": {\n    \"id\": %u,\n    \"name\": \"", model->id);
    const char *name = model->name != NULL ? model->name : "";
    write_json_text(out, name, strlen(name));
    fprintf(out, "\",\n    \"state\": \"%s\",\n    \"tasks\": [", state_name(model->state));
    for (size_t i = 0; i < model->num_tasks; i++) {
        fprintf(out, "%s\n      {\"seq\": %zu, \"kind\": \"%s\"", i ? "," : "", i, task_kind(&model->tasks[i]));
        const task_meta *meta = &model->meta[i];
        if (meta->extend_info != NULL) {
            fputs(", \"ExtendInfo\": \"", out);
            write_json_text(out, meta->extend_info, meta->extend_info_size);
            fputc('"', out);
        }
        fputc('}', out);
    }
    fprintf(out, "%s]\n  }\n}\n", model->num_tasks ? "\n    " : "");
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)
{
    static const char api[] = "aclmdlRIDebugJsonPrint";
    (void)flags; /* reserved */
    aclError err;
    nn_model *model = nn_model_find(api, modelRI, &err);
    if (model == NULL)
        return err;
    FILE *out = path != NULL ? fopen(path, "w") : NULL;
    if (out == NULL) {
        err = path == NULL ? nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: path is NULL.", api)
                           : nn_rt_error(ACL_ERROR_RT_FILE_OPEN, "%s: cannot open %s for writing.", api, path);
    } else {
        pthread_mutex_lock(&model->lock);
        write_json_locked(out, model);
        pthread_mutex_unlock(&model->lock);
        if (fclose(out) != 0)
            err = nn_rt_error(ACL_ERROR_RT_FILE_WRITE, "%s: could not write %s.", api, path);
    }
    nn_model_unref(model);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDebugPrint(aclmdlRI modelRI)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIDebugPrint", modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock); /* CANN writes it to the log: so does this */
    nn_log(NN_LOG_INFO, "modelRI %u (%s): %s, %zu tasks", model->id, model->name != NULL ? model->name : "",
           state_name(model->state), model->num_tasks);
    for (size_t i = 0; i < model->num_tasks; i++)
        nn_log(NN_LOG_INFO, "modelRI %u task %zu: %s", model->id, i, task_kind(&model->tasks[i]));
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
    return ACL_SUCCESS;
}
