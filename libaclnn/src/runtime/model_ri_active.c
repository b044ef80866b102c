/*
 * model_ri_active.c - stream activation and switching in built model runtime instances
 * (aclrtActiveStream, aclrtSwitchStream).
 *
 * CANN's model of a built instance: the streams bound with ACL_MODEL_STREAM_FLAG_HEAD start
 * when the model executes; the others (ACL_MODEL_STREAM_FLAG_DEFAULT) run only when a task
 * activates them.  aclrtActiveStream(activeStream, stream) records on `stream` a task that
 * starts `activeStream`, whose tasks then run beside the rest of `stream`'s.
 * aclrtSwitchStream(left, cond, right, type, trueStream, NULL, stream) records a task that
 * compares the int32 or int64 values at two device addresses when it runs; if `*left cond
 * *right` holds, `trueStream` starts and `stream` stops (its later tasks do not run), else
 * `stream` goes on.
 *
 * Execution.  A model holding such a task executes as one task (nn_model_queue_walk) that runs
 * its streams' task lists: the head streams first, in the order of their first recorded task,
 * then each activated stream when the stream that activated it has run to its end or switched
 * away, in activation order.  The card runs an activated stream beside the one that activated
 * it; running it after is one order that serializes the two, and a stream already waiting to
 * run is not queued twice.  Activating a stream that has already run runs it again, from its
 * first task, as the card re-activates a stream (loops are built this way);  aclmdlRIAbort
 * stops the walk before its next task.  Event records, resets and waits cannot run inside the
 * walk (it runs on one thread) and fail the execution with a message, as in a model with
 * label switches; a model holding both label switches and activations runs the label walk,
 * in which an activation fails the execution.  A model with no activation task replays its
 * streams as one list in call order, every bound stream included (model_ri.c).
 *
 * The checks follow CANN (runtime:src/acl/aclrt_impl/stream.cpp, aclrtActiveStreamImpl and
 * aclrtSwitchStreamImpl; runtime:src/runtime/api/impl/api_error.cc and api_impl.cc,
 * StreamSwitchEx and StreamActive): NULL pointers and a falseStream that is not NULL are 100000;
 * a condition outside [ACL_RT_EQUAL, ACL_RT_LESS_OR_EQUAL] or a data type outside
 * [ACL_RT_SWITCH_INT32, ACL_RT_SWITCH_INT64] is 107000; a stream that is not bound to a model,
 * or a target bound to another model, is 107005 (ACL_ERROR_RT_STREAM_MODEL).  In a capture the
 * calls answer 207000 (libaclnn activates streams of built models only).  CANN documents both
 * calls as unsupported on Atlas A3 (Ascend910_93): there they answer 207000.
 */
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/model_ri_impl.h"

/* A recorded aclrtActiveStream (left == NULL) or aclrtSwitchStream. */
typedef struct activation_task {
    const nn_stream *target; /* the stream it starts */
    const void *left, *right; /* the library's view of the device values compared */
    aclrtCondition cond;
    aclrtCompareDataType type;
} activation_task;

/* Runs only if the task is queued outside the walk (a model that also has label switches). */
static int run_activation(void *ctx)
{
    (void)ctx;
    return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "a stream activation or switch ran outside the walk of its "
                       "model's streams (a model with label switches cannot also activate streams).");
}

const char *nn_model_activation_task_kind(const nn_captured_task *task)
{
    if (task->run != run_activation)
        return NULL;
    return ((const activation_task *)task->ctx)->left == NULL ? "stream activation" : "stream switch";
}

bool nn_model_has_activations(const nn_model *model)
{
    for (size_t i = 0; i < model->num_tasks; i++)
        if (model->tasks[i].run == run_activation)
            return true;
    return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Recording                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static aclError refuse_product(const char *api)
{
    if (nn_soc_current() != NN_SOC_ASCEND910_93)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: CANN does not offer stream activation and "
                       "switching on the selected product (Atlas A3, Ascend910_93).", api);
}

/* Records the task on `stream`, which must be bound to a model being built, as `target` must
 * be to the same model; 0 or the status after nn_rt_error. */
static aclError record_activation(const char *api, aclrtStream stream, aclrtStream target, const char *target_name,
                                  activation_task *task)
{
    nn_stream *s, *t;
    const nn_model *model;
    aclError err = refuse_product(api);
    if (err == ACL_SUCCESS)
        err = nn_model_building_stream(api, stream, &s, &model);
    if (err == ACL_SUCCESS)
        err = nn_stream_resolve_named(api, target, &t);
    if (err != ACL_SUCCESS)
        return err;
    nn_model *target_model = nn_stream_capture(t);
    bool same = target_model == model;
    if (target_model != NULL)
        nn_model_unref(target_model);
    if (!same)
        return nn_rt_error(ACL_ERROR_RT_STREAM_MODEL, "%s: %s %p is not bound to the model stream %p records into "
                           "(aclmdlRIBindStream).", api, target_name, target, stream);
    activation_task *kept = malloc(sizeof *kept);
    if (kept == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *kept = *task;
    kept->target = t;
    return nn_stream_submit(s, run_activation, free, kept); /* recorded: the stream builds */
}

ACL_FUNC_VISIBILITY aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream)
{
    static const char api[] = "aclrtActiveStream";
    if (activeStream == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api,
                           activeStream == NULL ? "activeStream" : "stream");
    activation_task task = {0};
    return record_activation(api, stream, activeStream, "activeStream", &task);
}

ACL_FUNC_VISIBILITY aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue,
                                               aclrtCompareDataType dataType, aclrtStream trueStream,
                                               aclrtStream falseStream, aclrtStream stream)
{
    static const char api[] = "aclrtSwitchStream";
    if (leftValue == NULL || rightValue == NULL || trueStream == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api,
                           leftValue == NULL ? "leftValue" : rightValue == NULL ? "rightValue"
                                                           : trueStream == NULL ? "trueStream" : "stream");
    if (falseStream != NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: falseStream is a reserved parameter and must be NULL.",
                           api);
    if ((int)cond < ACL_RT_EQUAL || (int)cond > ACL_RT_LESS_OR_EQUAL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cond %d must be in [%d, %d] (ACL_RT_EQUAL .. "
                           "ACL_RT_LESS_OR_EQUAL).", api, (int)cond, ACL_RT_EQUAL, ACL_RT_LESS_OR_EQUAL);
    if ((int)dataType < ACL_RT_SWITCH_INT32 || (int)dataType > ACL_RT_SWITCH_INT64)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: dataType %d must be ACL_RT_SWITCH_INT32 (0) or "
                           "ACL_RT_SWITCH_INT64 (1).", api, (int)dataType);
    activation_task task = {NULL, nn_check_lib_addr(leftValue), nn_check_lib_addr(rightValue), cond, dataType};
    return record_activation(api, stream, trueStream, "trueStream", &task);
}

/* ------------------------------------------------------------------------------------------ */
/* Execution                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static int64_t load_value(const void *at, aclrtCompareDataType type)
{
    if (type == ACL_RT_SWITCH_INT32) {
        int32_t v;
        memcpy(&v, at, sizeof v); /* written by an earlier task of this walk or another stream */
        return v;
    }
    int64_t v;
    memcpy(&v, at, sizeof v);
    return v;
}

/* Whether the task starts its target now: an activation always, a switch when its condition holds. */
static bool starts_target(const activation_task *task)
{
    if (task->left == NULL)
        return true;
    const int64_t left = load_value(task->left, task->type), right = load_value(task->right, task->type);
    switch (task->cond) {
    case ACL_RT_EQUAL:
        return left == right;
    case ACL_RT_NOT_EQUAL:
        return left != right;
    case ACL_RT_GREATER:
        return left > right;
    case ACL_RT_GREATER_OR_EQUAL:
        return left >= right;
    case ACL_RT_LESS:
        return left < right;
    default: /* ACL_RT_LESS_OR_EQUAL */
        return left <= right;
    }
}

/* The streams of one walk: those that recorded the model's tasks, and which wait to run. */
typedef struct stream_set {
    const nn_stream **streams;
    bool *waiting;
    size_t *queue; /* FIFO of stream indices, each at most once (waiting) */
    size_t count, head, length;
} stream_set;

static size_t stream_index(const stream_set *set, const nn_stream *stream)
{
    size_t i = 0;
    while (i < set->count && set->streams[i] != stream)
        i++;
    return i; /* count: it recorded nothing */
}

static void start_stream(stream_set *set, const nn_stream *stream)
{
    size_t i = stream_index(set, stream);
    if (i == set->count || set->waiting[i])
        return; /* nothing to run, or already waiting to run */
    set->waiting[i] = true;
    set->queue[(set->head + set->length++) % set->count] = i;
}

static bool is_late(const nn_model *model, const nn_stream *stream)
{
    for (size_t i = 0; i < model->num_late; i++)
        if (model->late[i] == stream)
            return true;
    return false;
}

/* Fills the set from the model's tasks and queues the head streams; false: out of memory. */
static bool open_set(const nn_model *model, stream_set *set)
{
    const size_t room = model->num_tasks + 1;
    *set = (stream_set){malloc(room * sizeof *set->streams), calloc(room, sizeof *set->waiting),
                        malloc(room * sizeof *set->queue), 0, 0, 0};
    if (set->streams == NULL || set->waiting == NULL || set->queue == NULL)
        return false;
    for (size_t i = 0; i < model->num_tasks; i++)
        if (stream_index(set, model->meta[i].stream) == set->count)
            set->streams[set->count++] = model->meta[i].stream;
    for (size_t i = 0; i < set->count; i++)
        if (!is_late(model, set->streams[i]))
            start_stream(set, set->streams[i]);
    return true;
}

static void close_set(stream_set *set)
{
    free(set->streams);
    free(set->waiting);
    free(set->queue);
}

/* Runs the tasks `stream` recorded until its end or a switch away; the first failure (0: none). */
static int run_stream(const nn_model_walk *walk, stream_set *set, const nn_stream *stream)
{
    const nn_model *model = walk->model;
    int first = 0;
    for (size_t i = 0; i < model->num_tasks && !nn_model_walk_aborted(walk); i++) {
        const nn_captured_task *task = &model->tasks[i];
        if (model->meta[i].stream != stream || model->meta[i].disabled)
            continue;
        int status = 0;
        if (task->run == run_activation) {
            const activation_task *activation = task->ctx;
            if (starts_target(activation)) {
                start_stream(set, activation->target);
                if (activation->left != NULL)
                    return first; /* switched away: the rest of this stream does not run */
            }
        } else if (task->run != NULL) {
            status = task->run(task->ctx);
        } else {
            status = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "modelRI %u activates streams and has an event "
                                 "record, reset or wait, which libaclnn cannot run in it; the task was skipped.",
                                 model->id);
        }
        if (first == 0)
            first = status;
    }
    return first;
}

/* One execution: the head streams, then each stream as it is activated. */
static int run_activating(void *ctx)
{
    const nn_model_walk *walk = ctx;
    stream_set set;
    if (!open_set(walk->model, &set)) {
        close_set(&set);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "modelRI %u: out of memory running its streams.",
                           walk->model->id);
    }
    int first = 0;
    while (set.length > 0 && !nn_model_walk_aborted(walk)) {
        size_t next = set.queue[set.head];
        set.head = (set.head + 1) % set.count;
        set.length--;
        set.waiting[next] = false;
        int status = run_stream(walk, &set, set.streams[next]);
        if (first == 0)
            first = status;
    }
    close_set(&set);
    return first;
}

aclError nn_model_queue_activating(nn_model *model, nn_stream *s)
{
    return nn_model_queue_walk(model, s, run_activating);
}
