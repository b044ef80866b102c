/*
 * stream_impl.h - a stream's insides, shared by the two files that implement streams:
 * stream.c (life cycle, submit, wait, the public stream calls) and stream_worker.c (the worker:
 * running tasks and the deferred wake-up policy).  Nothing else looks inside a stream.
 */
#ifndef NN_STREAM_IMPL_H
#define NN_STREAM_IMPL_H

#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

/* Deferral is for a launch or two before a synchronize: with more tasks than this unfinished,
 * a launch wakes the worker, so a loop that never synchronizes does not pile up work. */
#define DEFER_WAKE_MAX_PENDING 4

typedef struct nn_task {
    nn_task_run_fn run;
    nn_task_release_fn release;
    void *ctx;
    bool inline_ok; /* a synchronizing thread may run it (nn_stream_submit_inline_ok) */
    nn_prof_task *prof; /* what profiling records of it (NULL: profiling was off when queued) */
    struct nn_task *next;
} nn_task;

struct nn_stream {
    nn_context *ctx;
    bool is_default;
    uint32_t flags;
    uint32_t priority; /* as created: CANN reserves it, aclrtStreamGetPriority reads it back */
    int32_t id;        /* aclrtStreamGetId: streams numbered from 0 in creation order */

    pthread_t worker;
    bool worker_started;
    pid_t owner_pid; /* a forked child has no worker threads: it must not join them */

    pthread_mutex_t lock;
    pthread_cond_t work_cv; /* the worker waits here for tasks */
    pthread_cond_t done_cv; /* synchronizers wait here (CLOCK_MONOTONIC) */
    nn_task *head;
    nn_task *tail;
    uint64_t submitted;
    uint64_t completed;
    bool running; /* a task is running, on the worker or on a synchronizing thread */
    bool defer_wake;    /* operator launches and copies do not wake the worker */
    bool wake_owed;     /* tasks were queued without waking the worker */
    bool worker_asleep; /* the worker sleeps without a timeout: only a wake-up brings it back */
    uint64_t first_unwaited_ns; /* when the first task no synchronizer waited for yet was queued (0: none) */
    bool stopping;
    atomic_bool aborting;
    uint64_t first_dropped; /* number of the first task a force-destroy dropped (0: none) */
    atomic_bool stop_on_failure; /* ACL_STOP_ON_FAILURE: skip tasks while an error is pending */
    int first_error;
    char *first_error_message;

    atomic_int refs; /* the registry's + one per waiting thread; taken under nn_rt_lock, registered */
    bool saturation; /* the device's overflow mode when the stream was made (nn_stream_saturation) */
    nn_model *capture; /* the model this stream records its tasks into (NULL: none); under lock */
    uint32_t prof_row; /* the stream's row in a profile's timeline (prof_trace.c), from 1 */
};

/* ---- the worker (stream_worker.c) ------------------------------------------------------- */

/* The worker thread's body: runs the stream's tasks in order until it stops and drains. */
void *nn_stream_worker_main(void *arg);
/* Pays a wake-up the launches deferred (lock held): the caller needs the worker to go on. */
void nn_stream_wake_if_owed_locked(nn_stream *s);
/* A synchronizer has arrived (lock held): decides whether the next launches defer the wake. */
void nn_stream_note_synchronizer_locked(nn_stream *s);
/* A synchronizing thread runs the stream's next task itself (lock held on entry and return). */
void nn_stream_run_next_inline_locked(nn_stream *s);
/* Releases a task that will never run (a force-destroy dropped it). */
void nn_stream_drop_task(nn_task *task);

#endif /* NN_STREAM_IMPL_H */
