/*
 * model_ri_abort.c - aclmdlRIAbort: stops the executions of a built model runtime instance.
 *
 * CANN documents aclmdlRIAbort as stopping a running model instance, which runs again at the
 * next aclmdlRIExecute[Async], and as not supported for captured models (ACL Graph).  Here a
 * model built with aclmdlRIBuildBegin .. aclmdlRIBuildEnd queues each operator launch, copy,
 * fill and host function of an execution behind a check of the model's abort count: one
 * aclmdlRIAbort raises the count, so the tasks of executions queued before it that have not
 * started are skipped (the one running finishes), and executions queued after it run in full.
 * Event records, resets and waits are still issued, so streams that wait for the model do not
 * hang.  A captured model keeps its unchecked tasks and aclmdlRIAbort refuses it (207000).
 * A model that executes as one walk (label switches, stream activation) checks the count
 * before each task it runs (nn_model_walk_aborted).
 */
#include <stdlib.h>

#include "runtime/model_ri_impl.h"

typedef struct abortable_task {
    nn_model *model; /* a reference */
    unsigned epoch;  /* the model's abort count when the execution was queued */
    nn_task_run_fn run;
    void *ctx;
} abortable_task;

bool nn_model_abortable(const nn_model *model)
{
    return model->ctx == NULL; /* a capture sets its context; building never does */
}

static int run_abortable(void *ctx)
{
    const abortable_task *task = ctx;
    if (atomic_load(&task->model->abort_epoch) != task->epoch)
        return 0; /* aborted before it started */
    return task->run(task->ctx);
}

static void release_abortable(void *ctx)
{
    abortable_task *task = ctx;
    nn_model_unref(task->model);
    free(task);
}

aclError nn_model_queue_abortable(nn_model *model, const nn_captured_task *task, nn_stream *s)
{
    abortable_task *wrapped = malloc(sizeof *wrapped);
    if (wrapped == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRIExecuteAsync: out of memory queuing modelRI %u.",
                           model->id);
    nn_model_ref(model);
    *wrapped = (abortable_task){model, atomic_load(&model->abort_epoch), task->run, task->ctx};
    if (task->inline_ok)
        return nn_stream_submit_inline_ok(s, run_abortable, release_abortable, wrapped);
    return nn_stream_submit(s, run_abortable, release_abortable, wrapped);
}

bool nn_model_walk_aborted(const nn_model_walk *walk)
{
    return atomic_load(&walk->model->abort_epoch) != walk->epoch;
}

static void release_walk(void *ctx)
{
    nn_model_walk *walk = ctx;
    nn_model_unref(walk->model);
    free(walk);
}

aclError nn_model_queue_walk(nn_model *model, nn_stream *s, nn_task_run_fn walk)
{
    nn_model_walk *run = malloc(sizeof *run);
    if (run == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRIExecuteAsync: out of memory queuing modelRI "
                           "%u.", model->id);
    nn_model_ref(model);
    *run = (nn_model_walk){model, atomic_load(&model->abort_epoch)};
    return nn_stream_submit(s, walk, release_walk, run);
}

ACL_FUNC_VISIBILITY aclError aclmdlRIAbort(aclmdlRI modelRI)
{
    static const char api[] = "aclmdlRIAbort";
    aclError err;
    nn_model *model = nn_model_find(api, modelRI, &err);
    if (model == NULL)
        return err;
    if (!nn_model_abortable(model))
        err = nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: modelRI %u was captured; CANN does not abort "
                          "captured models (ACL Graph), only built ones.", api, model->id);
    else
        atomic_fetch_add(&model->abort_epoch, 1);
    nn_model_unref(model);
    return err;
}
