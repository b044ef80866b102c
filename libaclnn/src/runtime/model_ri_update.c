/*
 * model_ri_update.c - task groups of a captured model and their updates
 * (aclmdlRICaptureTaskGrpBegin / End, aclmdlRICaptureTaskUpdateBegin / End, aclmdlRIUpdate).
 *
 * A group.  Between aclmdlRICaptureTaskGrpBegin and aclmdlRICaptureTaskGrpEnd on a capturing
 * stream, the tasks that stream records are noted.  At the end the updatable ones (operator
 * launches, copies and fills: the tasks stream.c lets a synchronizing thread run) move into the
 * group's slots, and the model's list holds in their place a task that runs whatever its slot
 * holds at the moment it runs.  Events and host functions in the range stay as they were: CANN
 * updates only the tasks that run on the AI cores (runtime:src/runtime/core/src/stream/
 * stream.cc, Stream::AllocTask refuses the others while a group is updated).
 *
 * An update.  aclmdlRICaptureTaskUpdateBegin(stream, group) makes `stream` record into the
 * model again, but what it is given replaces the group's tasks one by one, in order (Stream::
 * UpdateTask): each must be of the kind of the task it replaces (the same run function), and
 * no more than the group holds.  aclmdlRICaptureTaskUpdateEnd checks that every task was
 * replaced (CANN's Context::StreamEndTaskUpdate: else "task group update error", 507000) and
 * queues on `stream` the swap itself, as the card applies an update in the order of the update
 * stream: an execution queued earlier and reaching the group after the swap runs the new
 * tasks, which is what CANN's 1_model_update sample orders with an event.  A slot's task runs
 * under the group's lock, so the swap never releases a task that runs.
 *
 * One group may be open per model at a time, and one update per model (CANN tracks both per
 * stream); aclmdlRIUpdate applies what the per-task calls (aclmdlRITaskSetParams,
 * aclmdlRITaskDisable, model_ri_task.c) changed.
 *
 * Locks: a model's lock, then g_groups_lock; a group's lock is taken alone.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/model_ri_impl.h"

typedef struct group_slot {
    nn_task_group *group;
    nn_captured_task task; /* what the slot runs now (under group->lock) */
} group_slot;

struct nn_task_group {
    pthread_mutex_t lock;    /* the slots' tasks: an update swaps them while executions run them */
    nn_model *model;         /* the model it belongs to (which frees it) */
    const nn_stream *stream; /* the stream that began it: only its tasks join */
    bool incomplete;         /* a task could not be noted (out of memory) */
    size_t *noted;           /* while open: the model's tasks that join */
    size_t num_noted, cap_noted;
    group_slot *slots;
    size_t num_slots;
    nn_captured_task *pending; /* an open update's tasks, under the model's lock */
    size_t num_pending;
};

static pthread_mutex_t g_groups_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_groups; /* live group handles */

/* ------------------------------------------------------------------------------------------ */
/* Groups                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* A task stream.c would let a synchronizing thread run: an operator launch, a copy or a fill. */
static bool updatable(const nn_captured_task *task)
{
    return task->replay == NULL && task->inline_ok;
}

static void release_task(const nn_captured_task *task)
{
    if (task->release != NULL)
        task->release(task->ctx);
}

static void release_pending(nn_task_group *group)
{
    for (size_t i = 0; i < group->num_pending; i++)
        release_task(&group->pending[i]);
    free(group->pending);
    group->pending = NULL;
    group->num_pending = 0;
}

static void free_group(nn_task_group *group)
{
    if (group == NULL)
        return;
    for (size_t i = 0; i < group->num_slots; i++)
        release_task(&group->slots[i].task);
    release_pending(group);
    pthread_mutex_destroy(&group->lock);
    free(group->slots);
    free(group->noted);
    free(group);
}

void nn_model_free_groups(nn_model *model)
{
    pthread_mutex_lock(&g_groups_lock);
    for (size_t i = 0; i < model->num_groups; i++)
        nn_ptrset_remove(&g_groups, model->groups[i]);
    pthread_mutex_unlock(&g_groups_lock);
    for (size_t i = 0; i < model->num_groups; i++)
        free_group(model->groups[i]);
    free_group(model->open_group);
    free(model->groups);
}

void nn_model_group_note_locked(nn_model *model, const nn_stream *stream, size_t index)
{
    nn_task_group *group = model->open_group;
    if (group == NULL || group->stream != stream)
        return;
    if (nn_model_grow((void **)&group->noted, &group->cap_noted, group->num_noted, sizeof *group->noted))
        group->noted[group->num_noted++] = index;
    else
        group->incomplete = true;
}

/* The task a model's list holds for a slot: runs what the slot holds when it runs. */
static int run_slot(void *ctx)
{
    group_slot *slot = ctx;
    pthread_mutex_lock(&slot->group->lock);
    int status = slot->task.run(slot->task.ctx);
    pthread_mutex_unlock(&slot->group->lock);
    return status;
}

/* Under model->lock: moves the group's updatable noted tasks into its slots; false: out of memory. */
static bool fill_slots_locked(nn_model *model, nn_task_group *group)
{
    size_t count = 0;
    for (size_t i = 0; i < group->num_noted; i++)
        count += updatable(&model->tasks[group->noted[i]]);
    group->slots = count > 0 ? calloc(count, sizeof *group->slots) : NULL;
    if (count > 0 && group->slots == NULL)
        return false;
    for (size_t i = 0; i < group->num_noted; i++) {
        nn_captured_task *task = &model->tasks[group->noted[i]];
        if (!updatable(task))
            continue;
        group_slot *slot = &group->slots[group->num_slots++];
        slot->group = group;
        slot->task = *task;
        *task = (nn_captured_task){run_slot, NULL, NULL, slot, task->inline_ok, task->type}; /* the slot releases */
    }
    return true;
}

/* The model `stream` records into (*model, with a reference), or the status after nn_rt_error:
 * `none_code` and "<api>: stream <p> <none_why>." when it records into none. */
static aclError stream_model(const char *api, aclrtStream stream, nn_stream **s, nn_model **model, int none_code,
                             const char *none_why)
{
    *model = NULL;
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stream must not be NULL.", api);
    aclError err = nn_stream_resolve_named(api, stream, s);
    if (err != ACL_SUCCESS)
        return err;
    *model = nn_stream_capture(*s);
    if (*model == NULL)
        return nn_rt_error(none_code, "%s: stream %p %s.", api, stream, none_why);
    return ACL_SUCCESS;
}

/* The model a capturing stream records into (*model, with a reference), or the status. */
static aclError capturing_model(const char *api, aclrtStream stream, nn_stream **s, nn_model **model)
{
    return stream_model(api, stream, s, model, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                        "is not capturing (no aclmdlRICaptureBegin on it, nor a join of a capture)");
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskGrpBegin";
    nn_stream *s;
    nn_model *model;
    aclError err = capturing_model(api, stream, &s, &model);
    if (err != ACL_SUCCESS)
        return err;
    nn_task_group *group = calloc(1, sizeof *group);
    pthread_mutex_lock(&model->lock);
    if (!model->capture_open)
        err = nn_rt_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is bound to modelRI %u being built, "
                          "not captured; task groups belong to captures.", api, stream, model->id);
    else if (model->state == MODEL_INVALIDATED)
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "%s: the capture into modelRI %u was "
                          "invalidated.", api, model->id);
    else if (model->open_group != NULL)
        err = nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: a task group of modelRI %u is already open "
                          "(aclmdlRICaptureTaskGrpEnd ends it); libaclnn opens one at a time per model.",
                          api, model->id);
    else if (group == NULL)
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    if (err == ACL_SUCCESS) {
        pthread_mutex_init(&group->lock, NULL);
        group->model = model;
        group->stream = s;
        model->open_group = group;
    }
    pthread_mutex_unlock(&model->lock);
    if (err != ACL_SUCCESS)
        free(group);
    nn_model_unref(model);
    return err;
}

/* Under model->lock: why the open group cannot end now (0: it can; it is then taken out). */
static aclError end_group_locked(const char *api, nn_model *model, const nn_stream *s, nn_task_group **out)
{
    nn_task_group *group = model->open_group;
    *out = NULL;
    if (group == NULL || group->stream != s)
        return nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: no task group was begun on stream %p "
                           "(aclmdlRICaptureTaskGrpBegin).", api, (const void *)s);
    model->open_group = NULL;
    bool listed = nn_model_grow((void **)&model->groups, &model->cap_groups, model->num_groups,
                                sizeof *model->groups);
    aclError err = ACL_SUCCESS;
    if (model->state == MODEL_INVALIDATED || !model->capture_open)
        err = nn_rt_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "%s: the capture into modelRI %u was "
                          "invalidated; the task group is dropped.", api, model->id);
    else if (group->incomplete || !listed || !fill_slots_locked(model, group))
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory; the task group is dropped.", api);
    if (err != ACL_SUCCESS) {
        free_group(group); /* its slots hold nothing: the tasks are still the model's */
        return err;
    }
    free(group->noted);
    group->noted = NULL;
    model->groups[model->num_groups++] = group;
    *out = group;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)
{
    static const char api[] = "aclmdlRICaptureTaskGrpEnd";
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL.", api);
    *handle = NULL;
    nn_stream *s;
    nn_model *model;
    aclError err = capturing_model(api, stream, &s, &model);
    if (err != ACL_SUCCESS)
        return err;
    nn_task_group *group;
    pthread_mutex_lock(&model->lock);
    err = end_group_locked(api, model, s, &group);
    if (err == ACL_SUCCESS) {
        pthread_mutex_lock(&g_groups_lock);
        if (!nn_ptrset_add(&g_groups, group))
            err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
        pthread_mutex_unlock(&g_groups_lock);
    }
    pthread_mutex_unlock(&model->lock);
    if (err == ACL_SUCCESS)
        *handle = group; /* (on failure the group stays with the model, unreachable) */
    nn_model_unref(model);
    return err;
}

/* ------------------------------------------------------------------------------------------ */
/* Updates                                                                                     */
/* ------------------------------------------------------------------------------------------ */

aclError nn_model_update_record_locked(nn_model *model, const nn_captured_task *task, bool *taken)
{
    nn_task_group *group = model->update_group;
    *taken = false;
    if (group->num_pending >= group->num_slots)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "task group update of modelRI %u: the group holds %zu "
                           "updatable tasks and this would be task %zu.", model->id, group->num_slots,
                           group->num_pending + 1);
    const nn_captured_task *replaced = &group->slots[group->num_pending].task;
    if (!updatable(task) || task->run != replaced->run)
        return nn_rt_error(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, "task group update of modelRI %u: task %zu of the "
                           "group is replaced only by a task of its own kind (an operator launch by an operator "
                           "launch, a copy by a copy, a fill by a fill); events, host functions and callbacks "
                           "are not updated.", model->id, group->num_pending + 1);
    nn_captured_task *grown = realloc(group->pending, (group->num_pending + 1) * sizeof *grown);
    if (grown == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "task group update of modelRI %u: out of memory.",
                           model->id);
    group->pending = grown;
    group->pending[group->num_pending++] = *task;
    *taken = true;
    return ACL_SUCCESS;
}

void nn_model_forget_update_locked(nn_model *model, const nn_stream *stream)
{
    if (model->update_stream != stream)
        return;
    release_pending(model->update_group);
    model->update_stream = NULL;
    model->update_group = NULL;
}

/* The live group behind a handle and its model, with a reference; NULL after nn_rt_error. */
static nn_task_group *find_group(const char *api, aclrtTaskGrp handle, nn_model **model)
{
    pthread_mutex_lock(&g_groups_lock);
    nn_task_group *group = handle != NULL && nn_ptrset_has(&g_groups, handle) ? handle : NULL;
    nn_model *owner = group != NULL ? group->model : NULL;
    pthread_mutex_unlock(&g_groups_lock);
    aclError err;
    *model = owner != NULL ? nn_model_find(api, owner, &err) : NULL; /* a destroyed model is not found */
    if (*model == NULL && owner == NULL)
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle %p is not a task group of a live model runtime "
                    "instance (aclmdlRICaptureTaskGrpEnd returns one).", api, handle);
    return *model != NULL ? group : NULL;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateBegin";
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stream must not be NULL.", api);
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    nn_model *model;
    nn_task_group *group = err == ACL_SUCCESS ? find_group(api, handle, &model) : NULL;
    if (group == NULL)
        return err != ACL_SUCCESS ? err : ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&model->lock);
    if (model->state != MODEL_READY)
        err = nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: modelRI %u is still captured; end the capture "
                          "before updating its task groups.", api, model->id);
    else if (model->update_stream != NULL)
        err = nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: a task group of modelRI %u is being updated "
                          "(aclmdlRICaptureTaskUpdateEnd ends it); libaclnn updates one at a time per model.",
                          api, model->id);
    else {
        model->update_stream = s;
        model->update_group = group;
    }
    pthread_mutex_unlock(&model->lock);
    if (err == ACL_SUCCESS && nn_stream_set_capture(s, model, NULL) != ACL_SUCCESS) {
        pthread_mutex_lock(&model->lock);
        model->update_stream = NULL;
        model->update_group = NULL;
        pthread_mutex_unlock(&model->lock);
        err = nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: stream %p captures into, is bound to, or "
                          "updates a model runtime instance already.", api, stream);
    }
    if (err != ACL_SUCCESS)
        nn_model_unref(model);
    return err; /* on success the reference is the stream's */
}

/* The swap an update queues on its stream: the slots take the new tasks, the old ones go. */
typedef struct group_swap {
    nn_model *model; /* a reference: the group lives while the model does */
    nn_task_group *group;
    nn_captured_task *tasks; /* one per slot: the new ones, then (after the swap) the old ones */
} group_swap;

static int run_swap(void *ctx)
{
    group_swap *swap = ctx;
    nn_task_group *group = swap->group;
    pthread_mutex_lock(&group->lock);
    for (size_t i = 0; i < group->num_slots; i++) {
        nn_captured_task old = group->slots[i].task;
        group->slots[i].task = swap->tasks[i];
        swap->tasks[i] = old;
    }
    pthread_mutex_unlock(&group->lock);
    return 0;
}

/* Releases what the swap holds: the old tasks once it ran, the new ones if it never did. */
static void release_swap(void *ctx)
{
    group_swap *swap = ctx;
    for (size_t i = 0; i < swap->group->num_slots; i++)
        release_task(&swap->tasks[i]);
    free(swap->tasks);
    nn_model_unref(swap->model);
    free(swap);
}

/* Under model->lock: ends the update `s` has open, taking its tasks (*swap, or NULL on an error). */
static aclError end_update_locked(const char *api, nn_model *model, const nn_stream *s, group_swap **swap)
{
    *swap = NULL;
    nn_task_group *group = model->update_group;
    if (model->update_stream != s)
        return nn_rt_error(ACL_ERROR_STREAM_TASK_GROUP_STATUS, "%s: stream %p updates no task group "
                           "(aclmdlRICaptureTaskUpdateBegin).", api, (const void *)s);
    model->update_stream = NULL;
    model->update_group = NULL;
    if (group->num_pending != group->num_slots) {
        size_t given = group->num_pending;
        release_pending(group);
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: the task group of modelRI %u holds %zu updatable "
                           "tasks and the update gave %zu; nothing was updated.", api, model->id,
                           group->num_slots, given);
    }
    *swap = malloc(sizeof **swap);
    if (*swap == NULL) {
        release_pending(group);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory; nothing was updated.", api);
    }
    **swap = (group_swap){model, group, group->pending};
    group->pending = NULL;
    group->num_pending = 0;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)
{
    static const char api[] = "aclmdlRICaptureTaskUpdateEnd";
    nn_stream *s;
    nn_model *model;
    aclError err = stream_model(api, stream, &s, &model, ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                                "updates no task group (aclmdlRICaptureTaskUpdateBegin)");
    if (err != ACL_SUCCESS)
        return err;
    group_swap *swap;
    pthread_mutex_lock(&model->lock);
    bool was_updating = model->update_stream == s;
    err = end_update_locked(api, model, s, &swap);
    pthread_mutex_unlock(&model->lock);
    /* The stream records no more; its reference to the model passes to the swap. */
    bool released = was_updating && nn_stream_set_capture(s, NULL, model) == ACL_SUCCESS;
    if (swap != NULL && !released)
        nn_model_ref(model);
    if (swap == NULL && released)
        nn_model_unref(model);
    nn_model_unref(model); /* nn_stream_capture's */
    if (swap == NULL)
        return err;
    return nn_stream_submit(s, run_swap, release_swap, swap); /* releases on failure too */
}

ACL_FUNC_VISIBILITY aclError aclmdlRIUpdate(aclmdlRI modelRI)
{
    aclError err;
    nn_model *model = nn_model_find("aclmdlRIUpdate", modelRI, &err);
    if (model == NULL)
        return err;
    pthread_mutex_lock(&model->lock);
    bool ready = model->state == MODEL_READY;
    pthread_mutex_unlock(&model->lock);
    /* As CANN (ApiImpl::ModelUpdate): applies what aclmdlRITaskSetParams / aclmdlRITaskDisable
     * changed (model_ri_task.c); a model with no such change is done at once. */
    if (!ready)
        err = nn_rt_error(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "aclmdlRIUpdate: modelRI %u is being captured or "
                          "built; end that first.", model->id);
    else
        err = nn_model_apply_task_changes("aclmdlRIUpdate", model);
    nn_model_unref(model);
    return err;
}
