/*
 * model_ri.c - model runtime instances (aclmdlRI): the tasks streams were given while a model
 * recorded them, replayed in order by aclmdlRIExecute[Async].
 *
 * Recording.  A model records from a stream that captures into it (aclmdlRICaptureBegin ..
 * aclmdlRICaptureEnd on that stream) or from the streams bound to it while it is built
 * (aclmdlRIBuildBegin, aclmdlRIBindStream .. aclmdlRIBuildEnd).  stream.c hands it every task
 * such a stream is given instead of queuing it (nn_model_record_task): one list in the order
 * the calls were made, whatever the stream, each task noting the stream that gave it
 * (model_ri_task.c).  A built model that activates or switches streams runs them as they are
 * activated instead (model_ri_active.c).  A task is kept as the stream had it: run + ctx for
 * operator launches, copies, fills, callbacks and host functions (ctx holds the arguments as
 * they were at the call: a launch's operand addresses, workspace and executor reference), or
 * replay + ctx for event records, resets and waits, which take their record numbers when the
 * model executes (a wait inside a model waits for the newest record made before that
 * execution, inside the model or outside it, as on the card).
 *
 * Execution queues the list on the given stream, in order, followed by a task that drops the
 * execution's reference.  The tasks of one model therefore run one after another; CANN may run
 * the work of a model's streams side by side, and this order is one the events allow.  A
 * launch task may run many times (its executor reference is kept by the model, so a normal,
 * non-repeatable executor captured once replays at every execution, as in CANN's samples); the
 * ctx of each task is released once, when the model goes.  A model runs on one stream at a
 * time (a launch task holds per-run state): an execution on another stream while one is queued
 * returns ACL_ERROR_RT_MODEL_RUNNING.
 *
 * Capture modes.  While a capture is open, a synchronous copy or fill (aclrtMemcpy,
 * aclrtMemset, aclrtMemcpy2d) is refused with ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT after the
 * rule of CANN's runtime (runtime:src/runtime/feature/aclgraph/context_aclgraph.cc,
 * Context::IsCaptureModeSupport): the calling thread's exchange mode (GLOBAL unless
 * aclmdlRICaptureThreadExchangeMode swapped it) RELAXED allows everything; GLOBAL refuses while
 * a GLOBAL capture is open in the thread's context or a THREAD_LOCAL one was begun by the
 * thread; THREAD_LOCAL refuses while the thread itself began a GLOBAL or THREAD_LOCAL capture.
 *
 * Locks: a stream's lock, then a model's lock (stream.c records under its lock); the registry
 * lock, then a model's lock.  A model's lock is taken last and held briefly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/model_ri_impl.h"

static pthread_mutex_t g_models_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_models; /* live handles, under g_models_lock */
static uint32_t g_next_id; /* under g_models_lock */
static atomic_int g_open_captures; /* the sync-call check's fast path: 0 means nothing to check */

/* CANN's default exchange mode of a thread is GLOBAL (runtime:src/runtime/core/src/common/
 * inner_thread_local.cpp). */
static _Thread_local aclmdlRICaptureMode tl_exchange_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;

/* No capture of that kind: stricter modes have smaller values, so min() finds the strictest. */
#define NO_CAPTURE 3

static const char *mode_name(int mode)
{
    switch (mode) {
    case ACL_MODEL_RI_CAPTURE_MODE_GLOBAL:
        return "GLOBAL";
    case ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL:
        return "THREAD_LOCAL";
    case ACL_MODEL_RI_CAPTURE_MODE_RELAXED:
        return "RELAXED";
    default:
        return "none";
    }
}

static bool valid_mode(int mode)
{
    return mode >= ACL_MODEL_RI_CAPTURE_MODE_GLOBAL && mode <= ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
}

/* ------------------------------------------------------------------------------------------ */
/* Lifetime                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static void model_ref(nn_model *model)
{
    atomic_fetch_add(&model->refs, 1);
}

/* The last reference releases every recorded task's ctx, in recording order. */
static void model_unref(nn_model *model)
{
    if (atomic_fetch_sub(&model->refs, 1) != 1)
        return;
    for (size_t i = 0; i < model->num_tasks; i++)
        if (model->tasks[i].release != NULL)
            model->tasks[i].release(model->tasks[i].ctx);
    nn_model_free_task_meta(model);
    nn_model_free_groups(model);
    nn_model_free_conds(model);
    pthread_mutex_destroy(&model->lock);
    free(model->tasks);
    free(model->joined);
    free(model->bound);
    free(model->late);
    free(model->callbacks);
    free(model->name);
    free(model);
}

/* A registered model in `state` with one reference, the registry's. */
nn_model *nn_model_new(const char *api, model_state state, aclError *err)
{
    nn_model *model = calloc(1, sizeof *model);
    if (model == NULL) {
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
        return NULL;
    }
    pthread_mutex_init(&model->lock, NULL);
    atomic_init(&model->refs, 1);
    model->state = state;
    model->built = state == MODEL_BUILDING;
    pthread_mutex_lock(&g_models_lock);
    bool added = nn_ptrset_add(&g_models, model);
    model->id = ++g_next_id;
    pthread_mutex_unlock(&g_models_lock);
    if (!added) {
        model_unref(model);
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
        return NULL;
    }
    return model;
}

/* The live model behind a handle, with a reference the caller drops; NULL after nn_rt_error. */
nn_model *nn_model_find(const char *api, aclmdlRI handle, aclError *err)
{
    if (handle == NULL) {
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL.", api);
        return NULL;
    }
    pthread_mutex_lock(&g_models_lock);
    nn_model *model = nn_ptrset_has(&g_models, handle) ? handle : NULL;
    if (model != NULL)
        model_ref(model);
    pthread_mutex_unlock(&g_models_lock);
    *err = ACL_SUCCESS;
    if (model == NULL)
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: modelRI %p is not a live model runtime instance "
                           "(destroyed, or never returned by aclmdlRICaptureEnd / aclmdlRIBuildBegin).",
                           api, handle);
    return model;
}

nn_model *nn_model_find_id(uint32_t model_id)
{
    nn_model *found = NULL;
    pthread_mutex_lock(&g_models_lock);
    for (size_t i = 0; i < g_models.count && found == NULL; i++) {
        nn_model *model = g_models.items[i];
        if (model->id == model_id) {
            model_ref(model);
            found = model;
        }
    }
    pthread_mutex_unlock(&g_models_lock);
    return found;
}

bool nn_model_recorded_by_locked(const nn_model *model, const nn_stream *stream)
{
    for (size_t i = 0; i < model->num_recorders; i++)
        if (model->recorders[i] == stream)
            return true;
    return false;
}

nn_model *nn_model_find_recorded_by(const nn_stream *stream)
{
    nn_model *newest = NULL;
    pthread_mutex_lock(&g_models_lock);
    for (size_t i = 0; i < g_models.count; i++) {
        nn_model *model = g_models.items[i];
        pthread_mutex_lock(&model->lock);
        if (nn_model_recorded_by_locked(model, stream) && (newest == NULL || model->id > newest->id))
            newest = model;
        pthread_mutex_unlock(&model->lock);
    }
    if (newest != NULL)
        model_ref(newest);
    pthread_mutex_unlock(&g_models_lock);
    return newest;
}

void nn_model_forget_recorder(const nn_stream *stream)
{
    pthread_mutex_lock(&g_models_lock);
    for (size_t i = 0; i < g_models.count; i++) {
        nn_model *model = g_models.items[i];
        pthread_mutex_lock(&model->lock);
        for (size_t j = 0; j < model->num_recorders; j++)
            if (model->recorders[j] == stream)
                model->recorders[j] = NULL; /* its tasks stay; they are no longer listed */
        pthread_mutex_unlock(&model->lock);
    }
    pthread_mutex_unlock(&g_models_lock);
}

/* Takes the model out of the registry (false: it was not there any more). */
bool nn_model_unregister(nn_model *model)
{
    pthread_mutex_lock(&g_models_lock);
    bool removed = nn_ptrset_remove(&g_models, model);
    pthread_mutex_unlock(&g_models_lock);
    return removed;
}

/* Under model->lock: the capture is over (ended, or its stream went). */
static void close_capture_locked(nn_model *model)
{
    if (model->capture_open) {
        model->capture_open = false;
        atomic_fetch_sub(&g_open_captures, 1);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* What stream.c calls                                                                         */
/* ------------------------------------------------------------------------------------------ */

bool nn_model_grow(void **array, size_t *capacity, size_t count, size_t item_size)
{
    if (count < *capacity)
        return true;
    size_t wanted = *capacity ? 2 * *capacity : 16;
    void *grown = realloc(*array, wanted * item_size);
    if (grown == NULL)
        return false;
    *array = grown;
    *capacity = wanted;
    return true;
}

/* Under model->lock: the entry of a stream that joined the capture, or NULL. */
static joined_stream *find_joined_locked(nn_model *model, const nn_stream *stream)
{
    for (size_t i = 0; i < model->num_joined; i++)
        if (model->joined[i].stream == stream)
            return &model->joined[i];
    return NULL;
}

aclError nn_model_record_task(nn_model *model, const nn_stream *stream, const nn_captured_task *task,
                              bool *taken)
{
    aclError err = ACL_SUCCESS;
    *taken = false;
    pthread_mutex_lock(&model->lock);
    if (model->update_stream == stream) {
        err = nn_model_update_record_locked(model, task, taken);
    } else if (model->state == MODEL_INVALIDATED && model->capture_open) {
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "stream capture into modelRI %u was "
                          "invalidated by an earlier failure; end it with aclmdlRICaptureEnd.", model->id);
    } else if (model->state == MODEL_BUILDING || model->state == MODEL_CAPTURING) {
        if (nn_model_grow((void **)&model->tasks, &model->cap_tasks, model->num_tasks, sizeof *model->tasks) &&
            nn_model_note_task_locked(model, stream, model->num_tasks)) {
            model->tasks[model->num_tasks++] = *task;
            *taken = true;
            nn_model_group_note_locked(model, stream, model->num_tasks - 1);
            joined_stream *joined = find_joined_locked(model, stream);
            if (joined != NULL) { /* a task after its record: not joined back (yet) */
                joined->last_record = NULL;
                joined->rejoined = false;
            }
        } else {
            if (model->state == MODEL_CAPTURING)
                model->state = MODEL_INVALIDATED;
            err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "out of memory recording a task into "
                              "modelRI %u.", model->id);
        }
    }
    pthread_mutex_unlock(&model->lock);
    return err;
}

void nn_model_ref(nn_model *model)
{
    model_ref(model);
}

void nn_model_unref(nn_model *model)
{
    model_unref(model);
}

/* Under model->lock: removes `stream` from the bound list; false if it was not there. */
bool nn_model_unbind_locked(nn_model *model, const nn_stream *stream)
{
    for (size_t i = 0; i < model->num_bound; i++) {
        if (model->bound[i] == stream) {
            model->bound[i] = model->bound[--model->num_bound];
            return true;
        }
    }
    return false;
}

uint32_t nn_model_note_event_call(nn_stream *stream, const void *event, bool is_record, bool is_wait)
{
    nn_model *model = nn_stream_capture(stream);
    if (model == NULL)
        return 0;
    pthread_mutex_lock(&model->lock);
    uint32_t id = model->capture_open ? model->id : 0; /* a built model makes no joins */
    joined_stream *joined = find_joined_locked(model, stream);
    if (joined != NULL && is_record)
        joined->last_record = event;
    for (size_t i = 0; is_wait && i < model->num_joined; i++)
        if (model->joined[i].stream != stream && model->joined[i].last_record == event)
            model->joined[i].rejoined = true;
    pthread_mutex_unlock(&model->lock);
    model_unref(model);
    return id;
}

/* The model of an open capture with this id, with a reference; NULL when the capture is over. */
static nn_model *find_open_capture(uint32_t model_id)
{
    nn_model *model = nn_model_find_id(model_id);
    if (model == NULL)
        return NULL;
    pthread_mutex_lock(&model->lock);
    bool open = model->capture_open && model->state == MODEL_CAPTURING;
    pthread_mutex_unlock(&model->lock);
    if (!open) {
        model_unref(model);
        return NULL;
    }
    return model;
}

aclError nn_model_join_capture(const char *api, nn_stream *stream, uint32_t model_id)
{
    nn_model *model = find_open_capture(model_id);
    if (model == NULL)
        return ACL_SUCCESS; /* that capture is over: an ordinary wait */
    pthread_mutex_lock(&model->lock);
    bool listed = nn_model_grow((void **)&model->joined, &model->cap_joined, model->num_joined,
                                sizeof *model->joined);
    if (listed)
        model->joined[model->num_joined++] = (joined_stream){stream, NULL, false};
    pthread_mutex_unlock(&model->lock);
    aclError err = ACL_SUCCESS;
    if (!listed)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory joining a capture.", api);
    else if (nn_stream_set_capture(stream, model, NULL) != ACL_SUCCESS)
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p records into another model runtime "
                          "instance and cannot join the capture into modelRI %u.", api, (void *)stream, model->id);
    if (err == ACL_SUCCESS)
        return ACL_SUCCESS; /* the reference is the stream's now */
    pthread_mutex_lock(&model->lock);
    joined_stream *joined = listed ? find_joined_locked(model, stream) : NULL;
    if (joined != NULL)
        *joined = model->joined[--model->num_joined];
    pthread_mutex_unlock(&model->lock);
    model_unref(model);
    return err;
}

/* Lets go of every stream that joined the capture (it ends). */
static void release_joined(nn_model *model)
{
    for (;;) {
        pthread_mutex_lock(&model->lock);
        nn_stream *s = model->num_joined > 0 ? model->joined[--model->num_joined].stream : NULL;
        pthread_mutex_unlock(&model->lock);
        if (s == NULL)
            return;
        if (nn_stream_set_capture(s, NULL, model) == ACL_SUCCESS)
            model_unref(model);
    }
}

/* Under model->lock: a joined stream not joined back, or NULL. */
static const nn_stream *first_unjoined_locked(const nn_model *model)
{
    for (size_t i = 0; i < model->num_joined; i++)
        if (!model->joined[i].rejoined)
            return model->joined[i].stream;
    return NULL;
}

void nn_model_forget_stream(nn_model *model, nn_stream *stream)
{
    pthread_mutex_lock(&model->lock);
    joined_stream *joined = find_joined_locked(model, stream);
    if (joined != NULL) {
        *joined = model->joined[--model->num_joined];
        if (model->state == MODEL_CAPTURING)
            model->state = MODEL_INVALIDATED; /* its tasks can no longer be joined back */
    }
    if (model->origin == stream) {
        if (model->state == MODEL_CAPTURING)
            model->state = MODEL_INVALIDATED;
        model->origin = NULL;
        close_capture_locked(model);
    }
    nn_model_unbind_locked(model, stream);
    nn_model_forget_update_locked(model, stream);
    pthread_mutex_unlock(&model->lock);
    if (nn_stream_set_capture(stream, NULL, model) == ACL_SUCCESS)
        model_unref(model); /* the stream's reference */
}

bool nn_stream_records(nn_stream *s)
{
    nn_model *current = nn_stream_capture(s);
    if (current == NULL)
        return false;
    pthread_mutex_lock(&current->lock);
    bool records = current->state == MODEL_BUILDING || current->state == MODEL_CAPTURING ||
                   current->capture_open || current->update_stream == s;
    pthread_mutex_unlock(&current->lock);
    model_unref(current);
    return records;
}

aclError nn_model_check_sync_call(const char *api)
{
    if (atomic_load(&g_open_captures) == 0)
        return ACL_SUCCESS;
    pthread_mutex_lock(&nn_rt_lock);
    const nn_context *ctx = nn_rt_current_context_locked();
    pthread_mutex_unlock(&nn_rt_lock);

    int context_mode = NO_CAPTURE, thread_mode = NO_CAPTURE;
    pthread_mutex_lock(&g_models_lock);
    for (size_t i = 0; i < g_models.count; i++) {
        nn_model *model = g_models.items[i];
        pthread_mutex_lock(&model->lock);
        if (model->capture_open) {
            if (model->ctx == ctx && (int)model->mode < context_mode)
                context_mode = (int)model->mode;
            if (pthread_equal(model->thread, pthread_self()) && (int)model->mode < thread_mode)
                thread_mode = (int)model->mode;
        }
        pthread_mutex_unlock(&model->lock);
    }
    pthread_mutex_unlock(&g_models_lock);

    const int exchange = (int)tl_exchange_mode;
    bool refused = false;
    if (context_mode != NO_CAPTURE && exchange == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        refused = context_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
                  thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
    else if (context_mode != NO_CAPTURE && exchange == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
        refused = thread_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
                  thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
    if (!refused)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                       "%s: not allowed while a stream capture is open: the capture was begun in mode %s "
                       "and this thread's capture mode is %s; only RELAXED allows it "
                       "(aclmdlRICaptureThreadExchangeMode changes this thread's mode).",
                       api, mode_name(context_mode), mode_name(exchange));
}

void nn_model_finalize(void)
{
    pthread_mutex_lock(&g_models_lock);
    nn_ptrset left = g_models;
    memset(&g_models, 0, sizeof g_models);
    pthread_mutex_unlock(&g_models_lock);
    for (size_t i = 0; i < left.count; i++)
        model_unref(left.items[i]); /* the registry's reference; streams dropped theirs at their end */
    nn_ptrset_clear(&left);
}

/* ------------------------------------------------------------------------------------------ */
/* Capture                                                                                     */
/* ------------------------------------------------------------------------------------------ */

aclError nn_model_check_capture_args(const char *api, aclrtStream stream, aclmdlRICaptureMode mode, nn_stream **s)
{
    if (stream == NULL) /* CANN: the default stream is never captured */
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stream must not be NULL.", api);
    if (!valid_mode((int)mode))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: mode must be ACL_MODEL_RI_CAPTURE_MODE_GLOBAL (0), "
                           "THREAD_LOCAL (1) or RELAXED (2), got %d.", api, (int)mode);
    return nn_stream_resolve_named(api, stream, s);
}

/* Opens a capture of `s` into `model` (a new one, or a branch model of a condition). */
aclError nn_model_open_capture(const char *api, nn_model *model, nn_stream *s, aclmdlRICaptureMode mode)
{
    pthread_mutex_lock(&model->lock);
    model_state before = model->state;
    model->state = MODEL_CAPTURING;
    model->origin = s;
    model->ctx = nn_stream_context(s);
    model->mode = mode;
    model->thread = pthread_self();
    model->capture_open = true; /* before the stream records: GetInfo never sees a half-begun capture */
    atomic_fetch_add(&g_open_captures, 1);
    pthread_mutex_unlock(&model->lock);
    model_ref(model); /* the stream's */
    if (nn_stream_set_capture(s, model, NULL) == ACL_SUCCESS)
        return ACL_SUCCESS;
    pthread_mutex_lock(&model->lock);
    close_capture_locked(model);
    model->origin = NULL;
    model->state = before;
    pthread_mutex_unlock(&model->lock);
    model_unref(model);
    return nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p already captures into, or is bound "
                       "to, a model runtime instance.", api, (void *)s);
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    static const char api[] = "aclmdlRICaptureBegin";
    nn_stream *s;
    aclError err = nn_model_check_capture_args(api, stream, mode, &s);
    if (err != ACL_SUCCESS)
        return err;
    nn_model *model = nn_model_new(api, MODEL_CAPTURING, &err);
    if (model == NULL)
        return err;
    err = nn_model_open_capture(api, model, s, mode);
    if (err != ACL_SUCCESS) {
        nn_model_unregister(model);
        model_unref(model);
    }
    return err;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                                    aclmdlRI *modelRI)
{
    static const char api[] = "aclmdlRICaptureGetInfo";
    if (stream == NULL || (status == NULL && modelRI == NULL))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           stream == NULL ? "stream must not be NULL" : "status and modelRI cannot both be NULL");
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    aclmdlRICaptureStatus state = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI captured = NULL;
    nn_model *model = nn_stream_capture(s);
    if (model != NULL) {
        pthread_mutex_lock(&model->lock);
        if (model->capture_open) {
            state = model->state == MODEL_INVALIDATED ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
                                                      : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
            captured = model;
        }
        pthread_mutex_unlock(&model->lock);
        model_unref(model);
    }
    if (status != NULL)
        *status = state;
    if (modelRI != NULL)
        *modelRI = captured;
    return ACL_SUCCESS;
}

/* Checks that `s` may end the capture of `model` (lock held); 0 or the status after nn_rt_error. */
static aclError check_capture_end_locked(const nn_model *model, const nn_stream *s, aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureEnd";
    if (!model->capture_open)
        return nn_rt_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not capturing (it is bound to "
                           "modelRI %u being built).", api, stream, model->id);
    if (model->origin != s)
        return nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, "%s: the capture into modelRI %u was not "
                           "begun on stream %p.", api, model->id, stream);
    if (model->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && !pthread_equal(model->thread, pthread_self()))
        return nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, "%s: the capture into modelRI %u was "
                           "begun in mode %s by another thread; only that thread may end it.", api, model->id,
                           mode_name((int)model->mode));
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    static const char api[] = "aclmdlRICaptureEnd";
    if (stream == NULL || modelRI == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, stream == NULL ? "stream" : "modelRI");
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    nn_model *model = nn_stream_capture(s);
    if (model == NULL)
        return nn_rt_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not capturing (no "
                           "aclmdlRICaptureBegin on it).", api, stream);
    pthread_mutex_lock(&model->lock);
    err = check_capture_end_locked(model, s, stream);
    bool valid = model->state == MODEL_CAPTURING;
    const nn_stream *unjoined = err == ACL_SUCCESS && valid ? first_unjoined_locked(model) : NULL;
    if (err == ACL_SUCCESS) {
        close_capture_locked(model);
        model->origin = NULL;
        valid = valid && unjoined == NULL;
        model->state = valid ? MODEL_READY : MODEL_INVALIDATED;
    }
    pthread_mutex_unlock(&model->lock);
    if (err != ACL_SUCCESS) {
        model_unref(model);
        return err;
    }
    release_joined(model);
    if (nn_stream_set_capture(s, NULL, model) == ACL_SUCCESS)
        model_unref(model); /* the stream's reference */
    *modelRI = valid ? model : NULL;
    if (!valid) {
        uint32_t id = model->id;
        if (nn_model_unregister(model))
            model_unref(model); /* nobody can reach an invalidated capture: it goes */
        model_unref(model);
        if (unjoined != NULL)
            return nn_rt_error(ACL_ERROR_RT_STREAM_UNJOINED, "%s: stream %p joined the capture into modelRI %u "
                               "but was not joined back: its last task must be an event record that a stream "
                               "of the capture waits for; no model was made.", api, (const void *)unjoined, id);
        return nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "%s: the capture into modelRI %u was "
                           "invalidated (a task could not be recorded, or a stream of it was destroyed); no "
                           "model was made.", api, id);
    }
    model_unref(model);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    if (mode == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: mode is NULL.");
    if (!valid_mode((int)*mode))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: *mode must be "
                           "GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2), got %d.", (int)*mode);
    aclmdlRICaptureMode previous = tl_exchange_mode;
    tl_exchange_mode = *mode;
    *mode = previous;
    return ACL_SUCCESS;
}

