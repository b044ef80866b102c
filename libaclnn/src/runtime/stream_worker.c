/*
 * stream_worker.c - a stream's worker: running its tasks, on the worker thread or on a thread that
 * synchronizes the stream (stream.c explains the queue, errors and inline runs).
 *
 * Deferred wake-up.  Waking the sleeping worker is itself expensive on a VM (~20 us on the
 * launching thread when the worker's CPU is idle), and is wasted when a synchronizer arrives
 * right after the launch and runs the task inline.  So while the stream's synchronizers have
 * been arriving soon after its launches (within DEFER_WAKE_WINDOW_NS of the first launch they
 * wait for), an operator launch or copy is queued without waking the worker (while at most
 * DEFER_WAKE_MAX_PENDING tasks are unfinished), and the wake is owed.  Whoever then needs the
 * work done without running it pays the wake first: a synchronizer that has to wait (a timed
 * one, or a task in the way), aclrtStreamQuery, the next task only the worker may run (event
 * records, callbacks, host functions), a stream being destroyed.  Should nobody need it, the
 * worker, which naps instead of sleeping while launches defer (a launch that finds it asleep
 * wakes it), starts the task within DEFER_WAKE_NAP_MS.  A synchronizer arriving later than
 * the window switches the stream back to waking the worker at once, so host work between a
 * launch and its synchronize overlaps with the task again from then on; so do 100 ms without
 * a task.
 *
 * Profiling: a task queued while profiling records (prof_trace.c) carries a record; its run is
 * timed here, on whichever thread runs it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/stream_impl.h"

/* A synchronizer arriving within this time of the first launch it waits for keeps (or puts) the
 * stream in deferred wake-up (see above): Python's launch-then-synchronize takes 10-40 us. */
#define DEFER_WAKE_WINDOW_NS 100000

/* Meanwhile the worker naps this long at a time, and stops deferring after this many naps
 * with nothing to do (see worker_wait_locked).  Naps of 5 ms measured 10-30 us slower on a
 * 0.6-1 ms call than no naps at all; 50 ms ones did not. */
#define DEFER_WAKE_NAP_MS 50
#define DEFER_WAKE_IDLE_NAPS 2


/* Records a task's failure as the stream's first error unless one is already pending. */
static void keep_first_error(nn_stream *s, int code, const char *message)
{
    if (s->first_error != 0)
        return;
    s->first_error = code;
    s->first_error_message = (message && message[0]) ? strdup(message) : NULL;
}

uint64_t nn_rt_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Pays a wake-up the launches deferred (lock held): the caller needs the worker to go on. */
void nn_stream_wake_if_owed_locked(nn_stream *s)
{
    if (s->wake_owed) {
        s->wake_owed = false;
        pthread_cond_signal(&s->work_cv);
    }
}

/* A synchronizer has arrived (lock held): defer the next launches' wake-ups if it came soon
 * after the first launch it waits for. */
void nn_stream_note_synchronizer_locked(nn_stream *s)
{
    if (s->first_unwaited_ns != 0) {
        s->defer_wake = nn_rt_now_ns() - s->first_unwaited_ns <= DEFER_WAKE_WINDOW_NS;
        s->first_unwaited_ns = 0;
    }
}

/* Pops the next task and marks the stream running (lock held); NULL when there is none. */
static nn_task *take_next_task_locked(nn_stream *s)
{
    nn_task *task = s->head;
    if (task == NULL)
        return NULL;
    s->head = task->next;
    if (s->head == NULL)
        s->tail = NULL, s->wake_owed = false; /* nothing left for the worker to be told of */
    s->running = true;
    return task;
}

/* Runs a task taken by take_next_task_locked on this thread (lock not held) and records its
 * end.  The task's error text is moved from this thread into the stream (the synchronizer hands
 * it on).  Returns with the lock not held. */
static void run_task_here(nn_stream *s, nn_task *task)
{
    bool skip = atomic_load(&s->aborting);
    if (!skip && atomic_load(&s->stop_on_failure)) {
        pthread_mutex_lock(&s->lock);
        skip = s->first_error != 0;
        pthread_mutex_unlock(&s->lock);
    }
    int code = 0;
    uint64_t began_ns = task->prof != NULL ? nn_rt_now_ns() : 0;
    if (!skip && task->run != NULL)
        code = task->run(task->ctx);
    if (task->prof != NULL) /* the record is handed to the recorder (or freed) here */
        nn_prof_task_ran(task->prof, began_ns, nn_rt_now_ns(), skip);
    if (code != 0)
        nn_rt_report_exception(s->ctx != NULL ? s->ctx->device : 0, s, (uint32_t)code);
    /* Whatever the task left on this thread belongs to it (and leaves the thread clean); the
     * text stays valid until this thread's next nn_error_take, which nothing below makes. */
    const char *message = nn_error_take();
    if (task->release != NULL)
        task->release(task->ctx);
    free(task);

    pthread_mutex_lock(&s->lock);
    if (code != 0)
        keep_first_error(s, code, message);
    s->running = false;
    s->completed++;
    pthread_cond_broadcast(&s->done_cv);
    /* the worker waits while another thread runs a task: wake it if there is work it was told of */
    if ((s->head != NULL && !s->wake_owed) || s->stopping)
        pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->lock);
}

/* A synchronizing thread runs the stream's next task itself (see the top of the file); its own
 * pending error text is set aside meanwhile so the task's cannot mix with it.  Lock held on
 * entry and on return. */
void nn_stream_run_next_inline_locked(nn_stream *s)
{
    nn_task *task = take_next_task_locked(s);
    pthread_mutex_unlock(&s->lock);
    const char *pending = nn_error_take();
    char *saved = pending != NULL ? strdup(pending) : NULL;
    run_task_here(s, task);
    if (saved != NULL)
        nn_error_push_raw(saved);
    free(saved);
    pthread_mutex_lock(&s->lock);
}

/* The worker's wait for something to do (lock held).  While launches defer its wake-up it naps
 * instead of sleeping, so that a deferred task nobody waits for still starts within
 * DEFER_WAKE_NAP_MS; after DEFER_WAKE_IDLE_NAPS naps with nothing queued the stream goes back
 * to waking the worker at each launch, and the worker sleeps for good. */
static void worker_wait_locked(nn_stream *s, int *idle_naps)
{
    if (!s->defer_wake) {
        s->worker_asleep = true;
        pthread_cond_wait(&s->work_cv, &s->lock);
        s->worker_asleep = false;
        return;
    }
    struct timespec deadline;
    nn_rt_deadline(&deadline, DEFER_WAKE_NAP_MS);
    if (pthread_cond_timedwait(&s->work_cv, &s->lock, &deadline) != ETIMEDOUT)
        return;
    if (s->head != NULL || s->running)
        *idle_naps = 0;
    else if (++*idle_naps >= DEFER_WAKE_IDLE_NAPS)
        s->defer_wake = false;
}

void *nn_stream_worker_main(void *arg)
{
    nn_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        /* wait while a synchronizing thread runs a task, or for a task (or, stopping, to drain) */
        int idle_naps = 0;
        while (s->running || (s->head == NULL && !s->stopping))
            worker_wait_locked(s, &idle_naps);
        nn_task *task = take_next_task_locked(s);
        if (task == NULL)
            break; /* stopping and drained */
        pthread_mutex_unlock(&s->lock);
        run_task_here(s, task);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

void nn_stream_drop_task(nn_task *task)
{
    if (task->prof != NULL)
        nn_prof_task_discard(task->prof);
    if (task->release != NULL)
        task->release(task->ctx);
    free(task);
}
