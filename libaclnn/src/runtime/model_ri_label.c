/*
 * model_ri_label.c - labels and the switch by index (aclrtCreateLabel .. aclrtSwitchLabelByIndex)
 * in built model runtime instances.
 *
 * A label is a position in a model's task list: aclrtSetLabel on a stream bound to a model
 * being built (aclmdlRIBuildBegin, aclmdlRIBindStream) records a marker task that does
 * nothing.  aclrtSwitchLabelByIndex records a switch task holding the device address of a
 * uint32 index and the labels of a label list (their ids: a label destroyed later leaves no
 * dangling pointer).  A model with a switch task executes as one task that walks its list with
 * a program counter: a switch reads the index when it runs and continues at the chosen label's
 * marker, forward or backward; aclmdlRIAbort stops the walk before its next task.  The index
 * follows the rule of CANN's switch function (runtime:src/runtime/core/src/task/
 * stars_cond_isa_helper.cc, ConstructLabelSwitchByIdxCheckFc): an index >= maxValue takes the
 * last entry (maxValue - 1), and an index past the label list's end is a task error.
 *
 * All of a model's tasks form one list in call order (model_ri.c), so a jump moves through
 * that list: tasks that other bound streams recorded between the switch and the label are
 * skipped or repeated with it.  Inside such a model, event records, resets and waits cannot run
 * (the walk runs on one thread) and fail the execution with a message.
 *
 * The checks follow CANN's runtime (runtime:src/runtime/core/src/launch/label.cc, Label::Set;
 * runtime:src/runtime/api/impl/api_impl.cc, ApiImpl::LabelSwitchByIndex): a stream outside a
 * model gives ACL_ERROR_RT_STREAM_MODEL; a label set twice, set before it joined a label list,
 * or put in two lists gives ACL_ERROR_RT_INTERNAL_ERROR (RT_ERROR_LABEL_SET,
 * RT_ERROR_LABEL_PHY_ADDR_NULL, RT_ERROR_SAME_LABELS_IN_SWITCH); labels in a capture (ACL Graph)
 * give ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as CANN refuses labels there.
 */
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/model_ri_impl.h"

typedef struct nn_label {
    uint32_t id;
    bool listed; /* in a label list (CANN sets a label's device address once) */
    bool set;    /* aclrtSetLabel was called on it */
} nn_label;

typedef struct nn_label_list {
    size_t num;
    uint32_t ids[]; /* the labels' ids, in list order */
} nn_label_list;

/* A recorded aclrtSwitchLabelByIndex. */
typedef struct switch_task {
    const uint32_t *index; /* device memory, read when the task runs */
    uint32_t max_value;
    size_t num;
    uint32_t ids[];
} switch_task;

static pthread_mutex_t g_labels_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_labels, g_lists; /* live handles, under g_labels_lock */
static uint32_t g_next_label_id;    /* under g_labels_lock */

/* ---- labels and label lists ----------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCreateLabel(aclrtLabel *label)
{
    if (label == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateLabel: label is NULL.");
    nn_label *made = calloc(1, sizeof *made);
    if (made == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateLabel: out of memory.");
    pthread_mutex_lock(&g_labels_lock);
    made->id = ++g_next_label_id;
    bool added = nn_ptrset_add(&g_labels, made);
    pthread_mutex_unlock(&g_labels_lock);
    if (!added) {
        free(made);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateLabel: out of memory.");
    }
    *label = made;
    return ACL_SUCCESS;
}

/* Takes a label or label list (`what`, the parameter `param`) out of `set` and frees it. */
static aclError destroy_handle(const char *api, nn_ptrset *set, void *handle, const char *param, const char *what)
{
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, param);
    pthread_mutex_lock(&g_labels_lock);
    bool removed = nn_ptrset_remove(set, handle);
    pthread_mutex_unlock(&g_labels_lock);
    if (!removed)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %p is not a live %s.", api, handle, what);
    free(handle);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyLabel(aclrtLabel label)
{
    /* markers and switches hold its id, not the label */
    return destroy_handle("aclrtDestroyLabel", &g_labels, label, "label", "label");
}

/* Under g_labels_lock: why labels[0..num) cannot form a list (0: they can). */
static aclError check_list_labels_locked(aclrtLabel *labels, size_t num)
{
    for (size_t i = 0; i < num; i++) {
        if (!nn_ptrset_has(&g_labels, labels[i]))
            return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateLabelList: labels[%zu] (%p) is not a live "
                               "label.", i, labels[i]);
        if (((const nn_label *)labels[i])->listed)
            return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtCreateLabelList: labels[%zu] is already in a "
                               "label list; a label joins one list only.", i);
        for (size_t j = 0; j < i; j++)
            if (labels[j] == labels[i])
                return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtCreateLabelList: labels[%zu] and "
                                   "labels[%zu] are the same label.", j, i);
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)
{
    if (labels == NULL || labelList == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateLabelList: %s is NULL.",
                           labels == NULL ? "labels" : "labelList");
    if (num == 0 || num > UINT32_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtCreateLabelList: num must be in [1, %u], got %zu.",
                           UINT32_MAX, num);
    nn_label_list *list = malloc(sizeof *list + num * sizeof list->ids[0]);
    if (list == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateLabelList: out of memory.");
    list->num = num;
    pthread_mutex_lock(&g_labels_lock);
    aclError err = check_list_labels_locked(labels, num);
    if (err == ACL_SUCCESS && !nn_ptrset_add(&g_lists, list))
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateLabelList: out of memory.");
    for (size_t i = 0; err == ACL_SUCCESS && i < num; i++) {
        nn_label *label = labels[i];
        label->listed = true;
        list->ids[i] = label->id;
    }
    pthread_mutex_unlock(&g_labels_lock);
    if (err != ACL_SUCCESS) {
        free(list);
        return err;
    }
    *labelList = list;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyLabelList(aclrtLabelList labelList)
{
    /* switches recorded from it keep their own copy of the ids */
    return destroy_handle("aclrtDestroyLabelList", &g_lists, labelList, "labelList", "label list");
}

/* ---- recording -------------------------------------------------------------------------- */

/* Runs only if a marker is queued outside the walk: a label does nothing by itself. */
static int run_label_mark(void *ctx)
{
    (void)ctx;
    return 0;
}

static int run_switch(void *ctx);

aclError nn_model_building_stream(const char *api, aclrtStream stream, nn_stream **s, const nn_model **built)
{
    aclError err = nn_stream_resolve_named(api, stream, s);
    if (err != ACL_SUCCESS)
        return err;
    nn_model *model = nn_stream_capture(*s);
    if (model == NULL)
        return nn_rt_error(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is not bound to a model runtime instance "
                           "(aclmdlRIBuildBegin, aclmdlRIBindStream).", api, stream);
    pthread_mutex_lock(&model->lock);
    bool building = model->state == MODEL_BUILDING;
    pthread_mutex_unlock(&model->lock);
    nn_model_unref(model);
    if (!building)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: needs a model being built "
                           "(aclmdlRIBuildBegin .. aclmdlRIBuildEnd); CANN refuses it in a capture.", api);
    if (built != NULL)
        *built = model; /* compared only: the stream's binding keeps it */
    return ACL_SUCCESS;
}

/* Under g_labels_lock: marks the label set, or says why it cannot be (0: marked). */
static aclError claim_label_locked(aclrtLabel label)
{
    if (!nn_ptrset_has(&g_labels, label))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtSetLabel: %p is not a live label.", label);
    nn_label *target = label;
    if (target->set)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtSetLabel: the label is already set; a label is "
                           "set once.");
    if (!target->listed)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtSetLabel: put the label in a label list "
                           "(aclrtCreateLabelList) before setting it.");
    target->set = true;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream)
{
    static const char api[] = "aclrtSetLabel";
    if (label == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, label == NULL ? "label" : "stream");
    nn_stream *s;
    aclError err = nn_model_building_stream(api, stream, &s, NULL);
    if (err != ACL_SUCCESS)
        return err;
    uint32_t *mark = malloc(sizeof *mark);
    if (mark == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    pthread_mutex_lock(&g_labels_lock);
    err = claim_label_locked(label);
    if (err == ACL_SUCCESS)
        *mark = ((const nn_label *)label)->id;
    pthread_mutex_unlock(&g_labels_lock);
    if (err != ACL_SUCCESS) {
        free(mark);
        return err;
    }
    return nn_stream_submit(s, run_label_mark, free, mark); /* recorded: the stream builds */
}

/* A switch task holding a copy of the list's ids; NULL after nn_rt_error. */
static switch_task *make_switch(const char *api, void *ptr, uint32_t max_value, aclrtLabelList labelList,
                                aclError *err)
{
    pthread_mutex_lock(&g_labels_lock);
    const nn_label_list *list = nn_ptrset_has(&g_lists, labelList) ? labelList : NULL;
    switch_task *task = list != NULL ? malloc(sizeof *task + list->num * sizeof task->ids[0]) : NULL;
    if (task != NULL) {
        task->index = nn_check_lib_addr(ptr); /* memcheck: the library's view of the device memory */
        task->max_value = max_value;
        task->num = list->num;
        memcpy(task->ids, list->ids, list->num * sizeof task->ids[0]);
    }
    pthread_mutex_unlock(&g_labels_lock);
    if (list == NULL)
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %p is not a live label list.", api, labelList);
    else if (task == NULL)
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    return task;
}

ACL_FUNC_VISIBILITY aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
                                                     aclrtStream stream)
{
    static const char api[] = "aclrtSwitchLabelByIndex";
    if (ptr == NULL || labelList == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api,
                           ptr == NULL ? "ptr" : labelList == NULL ? "labelList" : "stream");
    nn_stream *s;
    aclError err = nn_model_building_stream(api, stream, &s, NULL);
    if (err != ACL_SUCCESS)
        return err;
    switch_task *task = make_switch(api, ptr, maxValue, labelList, &err);
    if (task == NULL)
        return err;
    return nn_stream_submit(s, run_switch, free, task); /* recorded: the stream builds */
}

/* ---- execution -------------------------------------------------------------------------- */

/* Runs only if a switch is queued outside the walk, which never happens for a model. */
static int run_switch(void *ctx)
{
    (void)ctx;
    return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "a label switch ran outside its model's execution.");
}

const char *nn_model_label_task_kind(const nn_captured_task *task)
{
    if (task->run == run_label_mark)
        return "label";
    return task->run == run_switch ? "label switch" : NULL;
}

bool nn_model_has_switches(const nn_model *model)
{
    for (size_t i = 0; i < model->num_tasks; i++)
        if (model->tasks[i].run == run_switch)
            return true;
    return false;
}

/* The position of the marker of label `id` in the model's list; num_tasks if it was not set there. */
static size_t find_label(const nn_model *model, uint32_t id)
{
    for (size_t i = 0; i < model->num_tasks; i++) {
        const nn_captured_task *task = &model->tasks[i];
        if (task->run == run_label_mark && *(const uint32_t *)task->ctx == id)
            return i;
    }
    return model->num_tasks;
}

/* Where the walk continues after the switch: the chosen label's marker; 0 or the status. */
static int switch_target(const nn_model *model, const switch_task *task, size_t *pc)
{
    uint32_t index = *(volatile const uint32_t *)task->index;
    if (index >= task->max_value) /* CANN takes the last entry */
        index = task->max_value > 0 ? task->max_value - 1 : 0;
    if (index >= task->num)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "label switch of modelRI %u: index %u is past the end of "
                           "its label list of %zu labels.", model->id, index, task->num);
    *pc = find_label(model, task->ids[index]);
    if (*pc == model->num_tasks)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "label switch of modelRI %u: label %u of its list was "
                           "not set in this model (aclrtSetLabel).", model->id, index);
    return 0;
}

/* Walks the model's list; the first failure's status (0: none).  A failed switch ends the walk,
 * as the stream stops at a failed task on the card; aclmdlRIAbort ends it before its next task
 * (so a loop whose index never lets it out can be stopped). */
static int run_switching(void *ctx)
{
    const nn_model_walk *run = ctx;
    const nn_model *model = run->model;
    int first = 0;
    size_t pc = 0;
    while (pc < model->num_tasks && !nn_model_walk_aborted(run)) {
        const nn_captured_task *task = &model->tasks[pc];
        int status = 0;
        if (task->run == run_switch) {
            status = switch_target(model, task->ctx, &pc);
            if (status != 0)
                return first != 0 ? first : status;
            continue;
        }
        if (task->run != NULL)
            status = task->run(task->ctx);
        else
            status = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "modelRI %u has label switches and an event "
                                 "record, reset or wait, which libaclnn cannot run in it; the task was skipped.",
                                 model->id);
        if (first == 0)
            first = status;
        pc++;
    }
    return first;
}

aclError nn_model_queue_switching(nn_model *model, nn_stream *s)
{
    return nn_model_queue_walk(model, s, run_switching);
}
