/*
 * stream.c - streams: an in-order queue of tasks run by one worker thread per stream.
 *
 * A task is (run, release, ctx).  The worker pops tasks in FIFO order, runs them, and keeps the
 * first failure (code + the message the task left on the worker thread) until somebody
 * synchronizes the stream; that synchronize returns the code, hands the message to its own
 * thread (so aclGetRecentErrMsg shows it there), and clears it.  Tasks after a failed one still
 * run (ACL_CONTINUE_ON_FAILURE, CANN's default).
 *
 * A thread that synchronizes a stream whose next task has not started runs that task itself
 * when the task allows it (operator launches and copies; not host functions, callbacks or
 * event waits, which may block or must run on the stream's own thread): still one task at a
 * time and in order (`running`), but without the two thread hand-offs, the worker's wake-up
 * and the synchronizer's, which cost ~25 us per call after an idle moment on a VM.
 *
 * Deferred wake-up (stream_worker.c, with the worker itself): while a stream's synchronizers
 * arrive right after its launches, operator launches and copies are queued without waking the
 * worker, and whoever needs the work done without running it pays the wake-up.
 *
 * Capture: a stream recording into a model runtime instance hands it every task instead of queuing
 * it (submit_task, the one place all tasks pass); the model replays them (model_ri.c).
 *
 * Streams are registered (nn_rt_lock): an unknown or destroyed handle is rejected, never read.
 * A stream lives until its last reference goes: the registry's, or a waiting thread's (one whose
 * tasks a force-destroy dropped gets 107023).  A task never releases or synchronizes its own
 * stream: 107000 instead (nn_stream_runs_here; its worker would join itself).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/nn_check.h"
#include "runtime/stream_impl.h"

/* The stream count CANN's A2/A3 hardware allows; each of ours costs a thread. */
#define NN_MAX_STREAMS 1984

static nn_ptrset g_streams; /* under nn_rt_lock */

/* ACLNN_LAUNCH_BLOCKING, read once. */
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static bool g_launch_blocking;

static void read_env(void)
{
    g_launch_blocking = nn_rt_env_flag("ACLNN_LAUNCH_BLOCKING");
}

static bool launch_blocking(void)
{
    pthread_once(&g_env_once, read_env);
    return g_launch_blocking;
}

/* ------------------------------------------------------------------------------------------ */
/* Life cycle                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void stream_free(nn_stream *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s->first_error_message);
    free(s);
}

static int32_t g_next_stream_id; /* under nn_rt_lock, as nn_stream_new_locked is called */
/* aclrtGetThreadLastTaskId: the number, on its stream, of the last task this thread queued. */
static _Thread_local uint32_t t_last_task_id;

nn_stream *nn_stream_new_locked(nn_context *ctx, bool is_default, uint32_t flags, aclError *err)
{
    if (g_streams.count >= NN_MAX_STREAMS) {
        *err = nn_rt_error(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                           "aclrtCreateStream: at most %d streams may exist at once.",
                           NN_MAX_STREAMS);
        return NULL;
    }
    nn_stream *s = calloc(1, sizeof *s);
    if (s == NULL) {
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateStream: out of memory.");
        return NULL;
    }
    s->ctx = ctx;
    s->is_default = is_default;
    s->flags = flags;
    s->id = g_next_stream_id++;
    s->saturation = nn_overflow_device_saturation();
    s->prof_row = nn_prof_new_row();
    atomic_init(&s->refs, 1);
    s->owner_pid = getpid();
    atomic_init(&s->aborting, false);
    pthread_mutex_init(&s->lock, NULL);
    nn_rt_cond_init_monotonic(&s->work_cv); /* the worker's naps (worker_wait_locked) */
    nn_rt_cond_init_monotonic(&s->done_cv);
    int rc = pthread_create(&s->worker, NULL, nn_stream_worker_main, s);
    if (rc != 0) {
        stream_free(s);
        *err = nn_rt_error(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                           "aclrtCreateStream: cannot start the stream's worker thread (%s).",
                           strerror(rc));
        return NULL;
    }
    s->worker_started = true;
    nn_check_stream_created(s, is_default, ctx->device);
    if (!nn_ptrset_add(&g_streams, s)) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_signal(&s->work_cv);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->worker, NULL);
        stream_free(s);
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateStream: out of memory.");
        return NULL;
    }
    *err = ACL_SUCCESS;
    return s;
}

uint32_t nn_stream_thread_last_task_id(void) { return t_last_task_id; }

uint32_t nn_stream_free_count(void)
{
    pthread_mutex_lock(&nn_rt_lock);
    uint32_t available = NN_MAX_STREAMS - (uint32_t)g_streams.count;
    pthread_mutex_unlock(&nn_rt_lock);
    return available;
}

void nn_stream_unregister_locked(nn_stream *stream)
{
    nn_ptrset_remove(&g_streams, stream);
}

bool nn_stream_is_live_locked(const nn_stream *stream)
{
    return nn_ptrset_has(&g_streams, stream);
}

nn_context *nn_stream_context(const nn_stream *stream) { return stream->ctx; }
uint32_t nn_stream_prof_row(const nn_stream *stream) { return stream->prof_row; }
bool nn_stream_saturation(const nn_stream *stream) { return stream->saturation; }

bool nn_stream_aborting(const nn_stream *stream)
{
    return atomic_load(&((nn_stream *)stream)->aborting);
}

void nn_stream_set_stop_on_failure(nn_stream *stream, bool stop)
{
    atomic_store(&stream->stop_on_failure, stop);
}

bool nn_stream_is_worker(const nn_stream *stream)
{
    return stream->worker_started && pthread_equal(pthread_self(), stream->worker);
}

bool nn_stream_runs_here(const nn_stream *stream)
{
    return nn_stream_is_worker(stream) || nn_callback_blocks_here(stream);
}

nn_stream *nn_stream_running_here_locked(const nn_context *ctx)
{
    for (size_t i = 0; i < g_streams.count; i++) {
        nn_stream *s = g_streams.items[i];
        if ((ctx == NULL || s->ctx == ctx) && nn_stream_runs_here(s))
            return s;
    }
    return NULL;
}

static bool append_stream(nn_stream ***out, size_t *count, nn_stream *s)
{
    nn_stream **grown = realloc(*out, (*count + 1) * sizeof **out);
    if (grown == NULL)
        return false;
    grown[(*count)++] = s;
    *out = grown;
    return true;
}

bool nn_stream_collect_locked(nn_context *ctx, nn_stream ***out, size_t *count)
{
    for (size_t i = 0; i < g_streams.count; i++) {
        nn_stream *s = g_streams.items[i];
        if (s->ctx == ctx && !append_stream(out, count, s))
            return false;
    }
    return true;
}

bool nn_stream_collect_device_locked(int32_t device, nn_stream ***out, size_t *count)
{
    for (size_t i = 0; i < g_streams.count; i++) {
        nn_stream *s = g_streams.items[i];
        if (s->ctx->device != device)
            continue;
        if (!append_stream(out, count, s))
            return false;
        atomic_fetch_add(&s->refs, 1);
    }
    return true;
}

void nn_stream_ref_locked(nn_stream *stream)
{
    atomic_fetch_add(&stream->refs, 1);
}

void nn_stream_unref(nn_stream *stream)
{
    if (atomic_fetch_sub(&stream->refs, 1) == 1)
        stream_free(stream);
}

void nn_stream_shutdown(nn_stream *s, bool force)
{
    nn_allocator_forget_stream(s);
    nn_model_forget_recorder(s); /* its tasks no longer answer through it (aclmdlRIGetTasksByStream) */
    nn_model *model = nn_stream_capture(s);
    if (model != NULL) {
        nn_model_forget_stream(model, s); /* a capture in progress is invalidated */
        nn_model_unref(model);
    }
    nn_task *dropped = NULL;
    uint64_t num_dropped = 0;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    if (force) {
        atomic_store(&s->aborting, true);
        dropped = s->head;
        s->head = s->tail = NULL;
        for (nn_task *t = dropped; t != NULL; t = t->next)
            num_dropped++;
        if (num_dropped > 0)
            s->first_dropped = s->submitted - num_dropped + 1;
    }
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->lock);

    /* Dropped tasks are released (never run) so their resources and event records settle. */
    while (dropped != NULL) {
        nn_task *next = dropped->next;
        nn_stream_drop_task(dropped);
        dropped = next;
    }
    if (force)
        nn_rt_wake_blocked_tasks(); /* a running wait-event / blocking callback gives up */
    if (s->worker_started)
        pthread_join(s->worker, NULL);

    pthread_mutex_lock(&s->lock);
    s->completed += num_dropped;
    pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->lock);
    nn_check_object_destroyed(s);
    nn_check_stream_finished(s);
    nn_stream_unref(s);
}

uint64_t nn_stream_abort_queued(nn_stream *s)
{
    pthread_mutex_lock(&s->lock);
    atomic_store(&s->aborting, true); /* a task taken meanwhile is skipped, a blocked one gives up */
    nn_task *dropped = s->head;
    s->head = s->tail = NULL;
    s->wake_owed = false;
    pthread_mutex_unlock(&s->lock);
    uint64_t num_dropped = 0;
    while (dropped != NULL) { /* released, never run, so their event records settle */
        nn_task *next = dropped->next;
        nn_stream_drop_task(dropped);
        dropped = next;
        num_dropped++;
    }
    nn_rt_wake_blocked_tasks();
    pthread_mutex_lock(&s->lock);
    s->completed += num_dropped;
    while (s->running)
        pthread_cond_wait(&s->done_cv, &s->lock);
    s->first_error = 0; /* the stream starts afresh: nothing of the aborted work is reported */
    free(s->first_error_message);
    s->first_error_message = NULL;
    atomic_store(&s->aborting, false);
    pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->lock);
    return num_dropped;
}

bool nn_stream_shutdown_at_exit(nn_stream *s)
{
    if (nn_stream_is_worker(s) || s->owner_pid != getpid())
        return false; /* exit() from this stream's own task, or in a forked child: leave it */
    nn_task *dropped;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    atomic_store(&s->aborting, true);
    dropped = s->head;
    s->head = s->tail = NULL;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->lock);
    while (dropped != NULL) {
        nn_task *next = dropped->next;
        nn_stream_drop_task(dropped);
        dropped = next;
    }
    nn_rt_wake_blocked_tasks();
    /* A task stuck in user code must not hang the exit: give it a bounded time. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 2;
    if (s->worker_started && pthread_timedjoin_np(s->worker, NULL, &deadline) != 0)
        return false;
    stream_free(s);
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Contract: resolve, submit, wait                                                             */
/* ------------------------------------------------------------------------------------------ */

/* nn_stream_resolve_named, and with `ref` a reference the caller drops with nn_stream_unref. */
static aclError resolve(const char *api, aclrtStream stream, nn_stream **out, bool ref)
{
    if (out == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: internal error: no stream output.", api);
    *out = NULL;
    pthread_mutex_lock(&nn_rt_lock);
    if (stream == NULL) {
        nn_context *ctx = nn_rt_current_context_locked();
        nn_stream *s = ctx ? ctx->default_stream : NULL;
        if (s != NULL && ref)
            nn_stream_ref_locked(s);
        pthread_mutex_unlock(&nn_rt_lock);
        if (s == NULL)
            return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                               "%s: stream is NULL (the default stream) but this thread has no "
                               "current context; call aclrtSetDevice first.", api);
        *out = s;
        return ACL_SUCCESS;
    }
    bool live = nn_ptrset_has(&g_streams, stream);
    if (live && ref)
        nn_stream_ref_locked(stream);
    pthread_mutex_unlock(&nn_rt_lock);
    if (!live)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: stream %p is not a live stream (never created by "
                           "aclrtCreateStream, or already destroyed).", api, stream);
    *out = (nn_stream *)stream;
    return ACL_SUCCESS;
}

aclError nn_stream_resolve_named(const char *api, aclrtStream stream, nn_stream **out)
{
    return resolve(api, stream, out, false);
}

aclError nn_stream_acquire_named(const char *api, aclrtStream stream, nn_stream **out)
{
    return resolve(api, stream, out, true);
}

aclError nn_stream_resolve(aclrtStream stream, nn_stream **out)
{
    return nn_stream_resolve_named("stream", stream, out);
}

/* Under the stream's lock: the task goes to the model the stream records into (*taken), if any. */
static aclError capture_task_locked(nn_stream *stream, const nn_captured_task *captured, bool *taken)
{
    *taken = false;
    if (stream->capture == NULL)
        return ACL_SUCCESS;
    return nn_model_record_task(stream->capture, stream, captured, taken);
}

/* Queues a task.  `wait_follows`: the caller synchronizes this stream right after (libaclnn's
 * aclnnCpuLaunchAndSynchronize), so the wake-up is always deferred - the synchronizer runs the
 * task inline, or pays the wake if it has to wait (stream_worker.c) - and the launch is not
 * timed for the deferral rule, which such a pair would only confirm (two clock reads, ~12 % of
 * a small launch's bookkeeping). */
static aclError submit_task(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx,
                            bool inline_ok, aclmdlRITaskType type, bool wait_follows)
{
    const nn_captured_task captured = {run, NULL, release, ctx, inline_ok, (uint8_t)type};
    /* (one relaxed load when profiling is off; when on, this takes the caller's label too) */
    nn_prof_task *prof = nn_prof_recording() ? nn_prof_task_queued(stream->prof_row, stream->ctx->device) : NULL;
    /* allocated before the lock, so capture and queueing are one locked section; a task a
     * capturing model takes was allocated for nothing (rare: captures are built once) */
    nn_task *task = malloc(sizeof *task);
    if (task == NULL) {
        nn_prof_task_discard(prof);
        if (release != NULL)
            release(ctx);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "stream: out of memory queuing a task.");
    }
    bool taken;
    pthread_mutex_lock(&stream->lock);
    aclError recorded = capture_task_locked(stream, &captured, &taken);
    if (taken || recorded != ACL_SUCCESS) {
        pthread_mutex_unlock(&stream->lock);
        free(task);
        nn_prof_task_discard(prof); /* captured tasks are profiled when the model replays them */
        if (!(taken && recorded == ACL_SUCCESS) && release != NULL)
            release(ctx); /* (the model holds what it took) */
        return recorded;
    }
    task->run = run;
    task->release = release;
    task->ctx = ctx;
    task->inline_ok = inline_ok;
    task->prof = prof;
    task->next = NULL;
    if (stream->stopping) {
        pthread_mutex_unlock(&stream->lock);
        nn_stream_drop_task(task);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "stream: stream %p is being destroyed; no more work may be queued.",
                           (void *)stream);
    }
    if (stream->tail != NULL)
        stream->tail->next = task;
    else
        stream->head = task;
    stream->tail = task;
    stream->submitted++;
    t_last_task_id = (uint32_t)stream->submitted;
    nn_model_forget_thread_last_task(); /* aclrtCacheLastTask*Info need a model's task */
    if (!wait_follows && stream->first_unwaited_ns == 0)
        stream->first_unwaited_ns = nn_rt_now_ns();
    if (inline_ok && (wait_follows || (stream->defer_wake && !stream->worker_asleep &&
                                       stream->submitted - stream->completed <= DEFER_WAKE_MAX_PENDING))) {
        stream->wake_owed = true;
    } else {
        stream->wake_owed = false; /* the worker runs the whole queue from here */
        pthread_cond_signal(&stream->work_cv);
    }
    pthread_mutex_unlock(&stream->lock);

    /* Debug mode: run synchronously, so a failure is reported by the launching call.  A task
     * queued from the stream's own worker cannot be waited for (it runs after the current). */
    if (launch_blocking() && !nn_stream_is_worker(stream))
        return nn_stream_wait(stream, NULL, 0, "ACLNN_LAUNCH_BLOCKING", -1);
    return ACL_SUCCESS;
}

aclError nn_stream_submit(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx)
{
    return submit_task(stream, run, release, ctx, false, ACL_MODEL_RI_TASK_DEFAULT, false);
}

aclError nn_stream_submit_inline_ok(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx)
{
    return submit_task(stream, run, release, ctx, true, ACL_MODEL_RI_TASK_DEFAULT, false);
}

aclError nn_stream_submit_launch(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx,
                                 bool wait_follows)
{
    return submit_task(stream, run, release, ctx, true, ACL_MODEL_RI_TASK_KERNEL, wait_follows);
}

aclError nn_stream_submit_typed(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx,
                                bool inline_ok, aclmdlRITaskType type)
{
    return submit_task(stream, run, release, ctx, inline_ok, type, false);
}

aclError nn_stream_submit_replayed(nn_stream *stream, nn_task_replay_fn replay, nn_task_release_fn release,
                                   void *ctx, aclmdlRITaskType type)
{
    const nn_captured_task captured = {NULL, replay, release, ctx, false, (uint8_t)type};
    bool taken;
    pthread_mutex_lock(&stream->lock);
    aclError err = capture_task_locked(stream, &captured, &taken);
    pthread_mutex_unlock(&stream->lock);
    if (!taken && err == ACL_SUCCESS)
        err = replay(ctx, stream);
    if (!taken && release != NULL)
        release(ctx);
    return err;
}

aclError nn_stream_set_capture(nn_stream *stream, nn_model *model, nn_model *expected)
{
    pthread_mutex_lock(&stream->lock);
    bool swapped = stream->capture == expected;
    if (swapped)
        stream->capture = model;
    pthread_mutex_unlock(&stream->lock);
    return swapped ? ACL_SUCCESS : ACL_ERROR_RT_STREAM_CAPTURED;
}

nn_model *nn_stream_capture(nn_stream *stream)
{
    pthread_mutex_lock(&stream->lock);
    nn_model *model = stream->capture;
    if (model != NULL)
        nn_model_ref(model);
    pthread_mutex_unlock(&stream->lock);
    return model;
}

/* Waits (lock held) for a task to complete; false when none does within the operator execute
 * timeout (aclrtSetOpExecuteTimeOut): the running task overran. */
static bool wait_for_progress_locked(nn_stream *s)
{
    const uint64_t limit_ms = nn_rt_op_execute_timeout_ms(), before = s->completed;
    struct timespec until;
    nn_rt_deadline(&until, limit_ms > INT32_MAX ? INT32_MAX : (int32_t)limit_ms);
    if (limit_ms == 0)
        pthread_cond_wait(&s->done_cv, &s->lock);
    while (limit_ms != 0 && s->completed == before)
        if (pthread_cond_timedwait(&s->done_cv, &s->lock, &until) == ETIMEDOUT)
            return s->completed != before;
    return true;
}

aclError nn_stream_wait(nn_stream *s, const struct timespec *deadline, int timeout_code,
                        const char *api, int32_t timeout_ms)
{
    if (nn_stream_runs_here(s))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: called from a task running on the stream it waits for (a host "
                           "function or blocking callback must not synchronize its own "
                           "stream).", api);
    pthread_mutex_lock(&s->lock);
    uint64_t target = s->submitted;
    nn_stream_note_synchronizer_locked(s);
    while (s->completed < target) {
        /* (a wait with a deadline never runs a task: it must be able to give up) */
        if (deadline == NULL && !s->running && s->head != NULL && s->head->inline_ok) {
            nn_stream_run_next_inline_locked(s);
            continue;
        }
        nn_stream_wake_if_owed_locked(s); /* this thread waits: the worker must go on */
        if (deadline == NULL) {
            if (!wait_for_progress_locked(s)) {
                pthread_mutex_unlock(&s->lock);
                return nn_rt_execute_timeout_error(api);
            }
            continue;
        }
        int rc = pthread_cond_timedwait(&s->done_cv, &s->lock, deadline);
        if (rc == ETIMEDOUT && s->completed < target) {
            uint64_t pending = target - s->completed;
            pthread_mutex_unlock(&s->lock);
            return nn_rt_error(timeout_code,
                               "%s: timed out after %d ms with %llu task(s) still pending on "
                               "the stream.", api, (int)timeout_ms, (unsigned long long)pending);
        }
    }
    if (s->first_dropped != 0 && target >= s->first_dropped) {
        /* a force-destroy ended the wait: what was still queued never ran */
        pthread_mutex_unlock(&s->lock);
        return nn_rt_error(ACL_ERROR_RT_STREAM_ABORT,
                           "%s: stream %p was destroyed by aclrtDestroyStreamForce while this "
                           "thread waited; its tasks that had not started were dropped.", api,
                           (void *)s);
    }
    int code = s->first_error;
    char *message = s->first_error_message;
    s->first_error = 0;
    s->first_error_message = NULL;
    pthread_mutex_unlock(&s->lock);
    nn_check_race_host_waited_stream(s); /* the host now knows the stream's tasks finished */
    nn_mem_pool_release_idle(); /* CANN trims its pools at a synchronize */

    if (code != 0) {
        if (message != NULL)
            nn_error_push_raw(message);
        else
            nn_error(code, "%s: a task on the stream failed with error %d.", api, code);
        nn_rt_set_last_error(code);
        free(message);
    }
    return code;
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static aclError destroy_stream(const char *api, aclrtStream stream, bool force)
{
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: stream must not be null (the default stream cannot be "
                           "destroyed).", api);
    pthread_mutex_lock(&nn_rt_lock);
    nn_stream *s = stream;
    if (!nn_ptrset_has(&g_streams, s)) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: stream %p is not a live stream (never created or already "
                           "destroyed).", api, stream);
    }
    if (s->is_default) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: the default stream of a context cannot be destroyed.", api);
    }
    if (nn_stream_runs_here(s)) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: a task (host function or blocking callback) cannot destroy the "
                           "stream it runs on.", api);
    }
    nn_ptrset_remove(&g_streams, s);
    pthread_mutex_unlock(&nn_rt_lock);
    nn_state_stream_notify(s, ACL_RT_STREAM_STATE_DESTROY_PRE);
    nn_callback_unsubscribe_stream(s);
    nn_stream_shutdown(s, force);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream)
{
    return destroy_stream("aclrtDestroyStream", stream, false);
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream)
{
    return destroy_stream("aclrtDestroyStreamForce", stream, true);
}

ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    if (status == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: status must not be null.");
    nn_stream *s;
    aclError ret = nn_stream_acquire_named("aclrtStreamQuery", stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&s->lock);
    bool idle = s->completed == s->submitted;
    if (!idle) {
        /* a caller polling for the work must see it progress, and is better served by a
         * worker that starts at each launch */
        nn_stream_wake_if_owed_locked(s);
        s->defer_wake = false;
    }
    pthread_mutex_unlock(&s->lock);
    if (idle) /* a program that polls until complete has waited for the stream */
        nn_check_race_host_waited_stream(s);
    nn_stream_unref(s);
    *status = idle ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    return ACL_SUCCESS;
}

/* ---- what a stream was made with (aclrtStreamGetId / GetPriority / GetFlags) ------------- */

void nn_stream_set_priority(nn_stream *s, uint32_t priority)
{
    s->priority = priority;
}

/* What a stream was made with, as aclrtStreamGetId / GetPriority / GetFlags read it. */
typedef struct {
    int32_t id;
    uint32_t priority, flags;
} creation_values;

/* The creation values of `stream` for `api`, whose output `out_name` (`out`) must not be null. */
static aclError read_creation_values(const char *api, aclrtStream stream, const void *out, const char *out_name,
                                     creation_values *values)
{
    if (out == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, out_name);
    nn_stream *s;
    aclError ret = nn_stream_acquire_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    *values = (creation_values){s->id, s->priority, s->flags};
    nn_stream_unref(s);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
    creation_values values = {0};
    aclError ret = read_creation_values("aclrtStreamGetId", stream, streamId, "streamId", &values);
    if (ret == ACL_SUCCESS)
        *streamId = values.id;
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
    creation_values values = {0};
    aclError ret = read_creation_values("aclrtStreamGetPriority", stream, priority, "priority", &values);
    if (ret == ACL_SUCCESS)
        *priority = values.priority;
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
    creation_values values = {0};
    aclError ret = read_creation_values("aclrtStreamGetFlags", stream, flags, "flags", &values);
    if (ret == ACL_SUCCESS)
        *flags = values.flags;
    return ret;
}
