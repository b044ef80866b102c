/*
 * prof_trace.h - the profile recorder (prof_trace.c) as the runtime's files use it: streams hand
 * it their tasks' times, the runtime calls that queue tasks label them, and rt_prof.c (the aclprof*
 * API) opens and closes sessions and adds the program's own marks and ranges.
 * docs/runtime.md, "Profiling", describes what is recorded and the files written.
 */
#ifndef NN_PROF_TRACE_H
#define NN_PROF_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acl/acl.h"
#include "runtime/nn_runtime.h"

/* What a task on a stream is, as the timeline names its category. */
typedef enum {
    NN_PROF_TASK,      /* queued by nothing that labelled it (a model's replay, ...) */
    NN_PROF_OPERATOR,  /* an aclnn operator's phase 2 */
    NN_PROF_COPY,      /* aclrtMemcpyAsync and the other queued copies */
    NN_PROF_MEMSET,    /* aclrtMemsetAsync */
    NN_PROF_EVENT,     /* record, reset or wait of an event */
    NN_PROF_CALLBACK,  /* aclrtLaunchCallback */
    NN_PROF_HOST_FUNC, /* aclrtLaunchHostFunc */
    NN_PROF_MARK,      /* aclprofMarkEx's mark on the stream */
    NN_PROF_STEP,      /* aclprofGetStepTimestamp's step start or end on the stream */
} nn_prof_kind;

typedef struct nn_prof_task nn_prof_task;

/* Whether a session records now (its scope then says what it keeps).  Read with one relaxed load
 * on every submit: when it is false profiling costs nothing else. */
extern atomic_bool nn_prof_session_on;
static inline bool nn_prof_recording(void)
{
    return atomic_load_explicit(&nn_prof_session_on, memory_order_relaxed);
}

/* A new stream's row on the timeline (1, 2, ... in creation order), and a stream's (stream.c). */
uint32_t nn_prof_new_row(void);
uint32_t nn_stream_prof_row(const nn_stream *stream);

/* Labels the next task this thread queues (while recording; a no-op otherwise).  `name` is copied. */
void nn_prof_label(nn_prof_kind kind, const char *name);

/* The record of a task being queued on stream row `row` of `device`; it takes this thread's label.
 * NULL when out of memory. */
nn_prof_task *nn_prof_task_queued(uint32_t row, int32_t device);
/* The task ran (or was skipped) on this thread from begin_ns to end_ns (CLOCK_MONOTONIC): the
 * record joins the session's, or is freed when recording stopped meanwhile. */
void nn_prof_task_ran(nn_prof_task *task, uint64_t begin_ns, uint64_t end_ns, bool skipped);
/* Frees a record whose task never ran (NULL is fine). */
void nn_prof_task_discard(nn_prof_task *task);

/* ---- sessions and the program's own stamps (rt_prof.c) ---------------------------------- */

/* What a session records. */
typedef struct nn_prof_scope {
    bool tasks; /* the streams' tasks */
    bool tx;    /* msproftx: marks and ranges */
} nn_prof_scope;

/* Starts recording (the previous session's records, if any, are dropped). */
void nn_prof_session_begin(nn_prof_scope scope);
/* Stops recording and writes the session under `dir` (made if missing): <dir>/aclnn_prof_<pid>_<n>/
 * trace.json and op_summary.csv.  ACL_ERROR_PROFILING_FAILURE (after nn_rt_error naming `api`)
 * when a file cannot be written. */
aclError nn_prof_session_end(const char *api, const char *dir);
/* Whether a session records msproftx stamps now. */
bool nn_prof_tx_recording(void);
/* ACLNN_PROFILE's directory when the environment asked for profiling (NULL: it did not). */
const char *nn_prof_env_dir(void);

/* A host-side instant on this thread's row (aclprofMark, aclprofMarkEx). */
void nn_prof_host_mark(const char *message, uint32_t stream_row);
/* A host-side range on this thread's row (aclprofPush/Pop, aclprofRangePushEx/Pop), nested
 * as the calls were. */
void nn_prof_host_range(const char *message, uint64_t begin_ns, uint64_t end_ns);
/* A range that may end on another thread (aclprofRangeStart/Stop): an async slice `id`. */
void nn_prof_async_range(const char *message, uint32_t id, int32_t begin_thread, uint64_t begin_ns,
                         uint64_t end_ns);
/* The calling thread's id, as the records hold it. */
int32_t nn_prof_thread_id(void);

/* Whether an aclprof (or ACLNN_PROFILE) session records now. */
bool nn_prof_collection_running(void);

/* ---- operator subscriptions (prof_subscribe.c) ---------------------------------------- */

/* prof_subscribe.c says how many subscriptions listen now: while any does, tasks are labelled. */
void nn_prof_subscriptions_changed(int count);
/* An operator launch ran on `device` (prof_trace.c, as its record completes): written to the pipe of
 * every subscription of that device. */
void nn_prof_subscription_deliver(const char *op_type, int32_t device, uint64_t begin_ns, uint64_t end_ns,
                                  int32_t thread);

#endif /* NN_PROF_TRACE_H */
