/*
 * model_ri_impl.h - what the files of the model runtime instances share: model_ri.c (lifetime,
 * recording, capture), model_ri_exec.c (building, execution, destroy, names, debug output),
 * model_ri_update.c (task groups and their updates), model_ri_task.c (per-task queries and
 * changes), model_ri_cond.c (conditional tasks),
 * model_ri_abort.c (aclmdlRIAbort), model_ri_label.c (labels and switches) and model_ri_info.c
 * (aclrtCacheLastTask*Info).  See model_ri.c
 * for the design.
 */
#ifndef NN_MODEL_RI_IMPL_H
#define NN_MODEL_RI_IMPL_H

#include "runtime/nn_rt_internal.h"

/* aclmdlRIBindStream's flag for a stream that starts with the model (CANN's
 * ACL_MODEL_STREAM_FLAG_HEAD, documented with aclmdlRIBindStream; ACL_MODEL_STREAM_FLAG_DEFAULT,
 * 0x7FFFFFFF, is a stream that waits for aclrtActiveStream / aclrtSwitchStream). */
#define NN_MODEL_STREAM_FLAG_HEAD 0x00000000u

typedef enum {
    MODEL_BUILDING,    /* aclmdlRIBuildBegin .. aclmdlRIBuildEnd: bound streams record */
    MODEL_CAPTURING,   /* aclmdlRICaptureBegin .. aclmdlRICaptureEnd: the stream records */
    MODEL_INVALIDATED, /* a capture that lost a task or its stream: ending it fails */
    MODEL_READY,       /* recorded; executes */
} model_state;

/* A stream that joined a capture by waiting for an event recorded in it. It is joined back
 * (`rejoined`) when its last task is an event record that another stream of the capture waits
 * for, as CANN's Context::CheckCaptureModelValidity requires at the end of the capture. */
typedef struct joined_stream {
    nn_stream *stream;
    const void *last_record; /* the event its last task recorded (NULL: its last task was no record) */
    bool rejoined;
} joined_stream;

/* A task group (aclmdlRICaptureTaskGrpBegin .. End), model_ri_update.c. */
typedef struct nn_task_group nn_task_group;
/* A condition handle (aclmdlRICondHandleCreate), model_ri_cond.c. */
typedef struct nn_cond_handle nn_cond_handle;

/* What the per-task calls know of a recorded task (model_ri_task.c), beside model->tasks. */
typedef struct task_meta {
    const nn_stream *stream;  /* the stream that recorded it */
    bool disabled;            /* skipped by executions (aclmdlRITaskDisable, applied by aclmdlRIUpdate) */
    bool disable_pending;     /* aclmdlRITaskDisable since the last aclmdlRIUpdate */
    bool has_replacement;     /* aclmdlRITaskSetParams since the last aclmdlRIUpdate: */
    nn_captured_task replacement; /* the task that takes its place then */
    void *op_info;            /* aclrtCacheLastTaskOpInfo's bytes (model_ri_info.c), or NULL */
    size_t op_info_size;
    char *extend_info;        /* aclrtCacheLastTaskExtendInfo's bytes, or NULL */
    size_t extend_info_size;
} task_meta;

typedef struct destroy_callback {
    aclrtCallback func;
    void *user_data;
} destroy_callback;

struct nn_model {
    pthread_mutex_t lock;
    atomic_int refs; /* the registry's, one per stream recording into it, one per queued execution */
    uint32_t id;
    model_state state;
    bool built; /* by aclmdlRIBuildBegin (else captured) */
    char *name;

    /* an open capture (capture_open): its stream, context, mode and thread */
    bool capture_open;
    nn_stream *origin;
    nn_context *ctx;
    aclmdlRICaptureMode mode;
    pthread_t thread;

    joined_stream *joined; /* streams that joined the capture through an event */
    size_t num_joined, cap_joined;

    nn_stream **bound; /* streams bound while building (aclmdlRIBindStream) */
    size_t num_bound, cap_bound;
    const nn_stream **late; /* bound with a flag other than ACL_MODEL_STREAM_FLAG_HEAD: they run when activated */
    size_t num_late, cap_late;

    nn_captured_task *tasks;
    size_t num_tasks, cap_tasks;
    task_meta *meta;              /* one per task (model_ri_task.c) */
    size_t cap_meta;
    const nn_stream **recorders;  /* the streams that recorded its tasks, first record first */
    size_t num_recorders, cap_recorders;
    bool changes_pending;         /* aclmdlRITaskSetParams / Disable since the last aclmdlRIUpdate */

    nn_stream *running_on; /* the stream of the queued executions (NULL: none) */
    size_t executions;     /* queued and not finished */

    destroy_callback *callbacks;
    size_t num_callbacks;

    /* task groups and their updates (model_ri_update.c) */
    nn_task_group *open_group;    /* begun and not ended: notes the tasks of its stream */
    nn_task_group **groups;       /* ended groups, released with the model */
    size_t num_groups, cap_groups;
    nn_stream *update_stream;     /* its tasks replace update_group's (TaskUpdateBegin .. End) */
    nn_task_group *update_group;

    /* conditions (model_ri_cond.c) */
    nn_cond_handle **conds;       /* the condition handles made for it, released with it */
    size_t num_conds, cap_conds;
    bool is_branch;               /* a branch of a conditional task: runs only through it */
    bool branch_captured;         /* aclmdlRICaptureToModelRIBegin was called on it */

    atomic_uint abort_epoch;      /* aclmdlRIAbort counts here (model_ri_abort.c) */
};

/* A registered model in `state` with one reference, the registry's; NULL after nn_rt_error. */
nn_model *nn_model_new(const char *api, model_state state, aclError *err);
/* The live model behind a handle, with a reference the caller drops; NULL after nn_rt_error. */
nn_model *nn_model_find(const char *api, aclmdlRI handle, aclError *err);
/* Takes the model out of the registry (false: it was not there any more). */
bool nn_model_unregister(nn_model *model);
/* Grows *array (of *capacity items of item_size) to hold count + 1; false when out of memory. */
bool nn_model_grow(void **array, size_t *capacity, size_t count, size_t item_size);
/* Under model->lock: removes `stream` from the bound list; false if it was not there. */
bool nn_model_unbind_locked(nn_model *model, const nn_stream *stream);
/* The checks of a call that begins a capture (a stream, one of the three modes), then the
 * stream; 0 or the status after nn_rt_error. */
aclError nn_model_check_capture_args(const char *api, aclrtStream stream, aclmdlRICaptureMode mode, nn_stream **s);
/* Opens a capture of `s` into `model`, which the stream then references; 0 or the status after
 * nn_rt_error (the model is then as it was). */
aclError nn_model_open_capture(const char *api, nn_model *model, nn_stream *s, aclmdlRICaptureMode mode);

/* The live model with this id, with a reference; NULL if there is none. */
nn_model *nn_model_find_id(uint32_t model_id);
/* Under model->lock: whether `stream` recorded tasks of the model. */
bool nn_model_recorded_by_locked(const nn_model *model, const nn_stream *stream);
/* The newest live model `stream` recorded tasks of, with a reference; NULL if none. */
nn_model *nn_model_find_recorded_by(const nn_stream *stream);

/* ---- information attached to tasks (model_ri_info.c) ----------------------------------- */

/* The calling thread gave task `index` to the model with this id (its last task now). */
void nn_model_note_thread_last_task(uint32_t model_id, size_t index);
/* Frees what aclrtCacheLastTask*Info attached to a task. */
void nn_model_free_task_info(task_meta *meta);

/* ---- per-task queries and changes (model_ri_task.c) ------------------------------------ */

/* Under model->lock: notes the stream of the task just recorded (task `index`); false: out of memory. */
bool nn_model_note_task_locked(nn_model *model, const nn_stream *stream, size_t index);
/* aclmdlRIUpdate: applies the changes of aclmdlRITaskSetParams / Disable; 0 or the status. */
aclError nn_model_apply_task_changes(const char *api, nn_model *model);
/* The model's last reference went: releases the replacements never applied. */
void nn_model_free_task_meta(nn_model *model);

/* ---- task groups (model_ri_update.c) --------------------------------------------------- */

/* Under model->lock: a task `stream` gives while it updates a group of the model: kept as the
 * group's next replacement (*taken), or refused. */
aclError nn_model_update_record_locked(nn_model *model, const nn_captured_task *task, bool *taken);
/* Under model->lock: task `index` was just recorded from `stream`; an open group of that stream
 * notes it. */
void nn_model_group_note_locked(nn_model *model, const nn_stream *stream, size_t index);
/* Under model->lock: `stream` goes; an update it had open is dropped. */
void nn_model_forget_update_locked(nn_model *model, const nn_stream *stream);
/* The model's last reference went: releases its groups and the tasks they hold. */
void nn_model_free_groups(nn_model *model);

/* ---- conditions (model_ri_cond.c) ----------------------------------------------------- */

/* At aclmdlRIExecuteAsync: refuses a branch model (it runs only through its conditional task)
 * and sets the conditions of the model and its branches that assign a default at each run. */
aclError nn_model_cond_prepare(const char *api, nn_model *model);
/* The model's last reference went: releases its condition handles and their branch models. */
void nn_model_free_conds(nn_model *model);

/* ---- abort (model_ri_abort.c) --------------------------------------------------------- */

/* Whether aclmdlRIAbort applies to the model: a built one (CANN refuses it for captures). */
bool nn_model_abortable(const nn_model *model);
/* Queues a run task of an execution of a built model so that it is skipped if the model is
 * aborted before it runs. */
aclError nn_model_queue_abortable(nn_model *model, const nn_captured_task *task, nn_stream *s);

/* One execution of a model that runs as a single task walking its list (label switches,
 * stream activation): walk(ctx) gets an nn_model_walk, which holds a model reference. */
typedef struct nn_model_walk {
    nn_model *model;
    unsigned epoch; /* the model's abort count when the execution was queued */
} nn_model_walk;
/* Whether aclmdlRIAbort was called on the model since the walk was queued. */
bool nn_model_walk_aborted(const nn_model_walk *walk);
/* Queues walk(ctx) on `s` with an nn_model_walk of the model as ctx. */
aclError nn_model_queue_walk(nn_model *model, nn_stream *s, nn_task_run_fn walk);

/* ---- stream activation (model_ri_active.c) ------------------------------------------ */

/* Whether the ready model holds an aclrtActiveStream or aclrtSwitchStream task. */
bool nn_model_has_activations(const nn_model *model);
/* "stream activation" or "stream switch" for those tasks (aclmdlRIDebugJsonPrint); NULL for others. */
const char *nn_model_activation_task_kind(const nn_captured_task *task);
/* Queues one execution of such a model on `s`: one task that runs its streams as they are activated. */
aclError nn_model_queue_activating(nn_model *model, nn_stream *s);

/* ---- labels (model_ri_label.c) ------------------------------------------------------- */

/* The stream behind `stream`, which must record into a model being built (*built, when not
 * NULL: that model, to compare with only); 0 or the status after nn_rt_error. */
aclError nn_model_building_stream(const char *api, aclrtStream stream, nn_stream **s, const nn_model **built);
/* Whether the ready model holds a label switch (aclrtSwitchLabelByIndex). */
bool nn_model_has_switches(const nn_model *model);
/* "label" or "label switch" for the tasks aclrtSetLabel and aclrtSwitchLabelByIndex recorded
 * (aclmdlRIDebugJsonPrint); NULL for any other task. */
const char *nn_model_label_task_kind(const nn_captured_task *task);
/* Queues one execution of such a model on `s`: one task that walks its list through the switches. */
aclError nn_model_queue_switching(nn_model *model, nn_stream *s);

#endif /* NN_MODEL_RI_IMPL_H */
