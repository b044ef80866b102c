/*
 * nn_runtime.h - what the runtime (src/runtime) offers the executor (src/exec): streams that run queued tasks
 * in order on a worker thread, and the registry of "device" allocations.
 */
#ifndef NN_RUNTIME_H
#define NN_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "acl/acl_dump.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nn_stream nn_stream;

/* A queued task.  run() executes on the stream's worker thread and returns 0 or an error code
 * (after nn_error() on that thread); the stream keeps the first error code and its message and
 * returns them at the next aclrtSynchronizeStream/Device on that stream.  Tasks queued after a
 * failed one still run.  release(), if not NULL, is called exactly once, after run(). */
typedef int (*nn_task_run_fn)(void *ctx);
typedef void (*nn_task_release_fn)(void *ctx);

/* Resolves a user stream handle: NULL means the current context's default stream (needs a
 * device set on this thread or a current context: otherwise ACL_ERROR_RT_CONTEXT_NULL after
 * nn_error).  An unknown handle -> ACL_ERROR_INVALID_PARAM after nn_error. */
aclError nn_stream_resolve(aclrtStream stream, nn_stream **out);
/* Same, with `api` (e.g. "aclnnIm2col") naming the caller in the error message. */
aclError nn_stream_resolve_named(const char *api, aclrtStream stream, nn_stream **out);
/* Whether the stream runs in saturation mode on a product that can switch (A2/A3): the device's
 * mode when the stream was created, as CANN's streams copy it (docs/precision.md, "Overflow
 * mode"); aclrtSetDeviceSatMode does not change streams that exist. */
bool nn_stream_saturation(const nn_stream *stream);

/* rt_overflow.c: the device whose overflow status a launch on `stream` marks when it produces
 * Inf/NaN (its switch is on, aclrtSetStreamOverflowSwitch, or the product always reports), else
 * -1.  Asked at launch; nn_rt_note_overflow marks it. */
int32_t nn_stream_overflow_device(const nn_stream *stream);
void nn_rt_note_overflow(int32_t device);

/* Queues a task.  With ACLNN_LAUNCH_BLOCKING=1 it also waits for it (and returns its error).
 * On failure to queue, release(ctx) is still called. */
aclError nn_stream_submit(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release,
                          void *ctx);
/* The same, for a task that a thread synchronizing the stream may run itself instead of waiting
 * for the worker (stream.c): it must not block on other threads or care which thread runs it
 * (operator launches, copies). */
aclError nn_stream_submit_inline_ok(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx);
/* nn_stream_submit_inline_ok for an operator launch: a model that records it answers
 * ACL_MODEL_RI_TASK_KERNEL for it (aclmdlRITaskGetType).  `wait_follows`: the calling thread
 * synchronizes the stream right after (stream.c, submit_task). */
aclError nn_stream_submit_launch(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx,
                                 bool wait_follows);

/* Whether the stream records its tasks into a model runtime instance now (model_ri.c): they
 * are kept, not queued, so checks of queued work (racecheck) leave them out. */
bool nn_stream_records(nn_stream *stream);

/* Finds the aclrtMalloc allocation, or else the aclrtHostRegister range (its base and size then
 * are ptr and len), that contains [ptr, ptr+len). Returns false if none does. */
bool nn_mem_find(const void *ptr, size_t len, void **alloc_base, size_t *alloc_size);
/* Whether ACLNN_STRICT=1: tensors must lie inside aclrtMalloc memory. */
bool nn_strict_mode(void);
/* Whether ACLNN_STRICT=1 itself is set (nn_strict_mode is also on under ACLNN_CHECK's memcheck). */
bool nn_strict_mode_asked(void);

/* The process's ACL_OPT_DETERMINISTIC (aclrtSetSysParamOpt; 0 when never set): what CANN's
 * opbase reads at every phase 1 to choose deterministic kernels (opbase:src/nnopbase/
 * composite_op/aclnn_engine/op_executor.cpp, GetDeterministicLevelFromRt).  The context-scope
 * aclrtCtxSetSysParamOpt value is not consulted there. */
int64_t nn_rt_deterministic_level(void);

/* ---- dumps (rt_dump.c; the files are written by exec/launch_dump.c) ----------------------- */

enum { NN_DUMP_DATA = 1u, NN_DUMP_ARGS = 2u };
/* NN_DUMP_DATA while a data dump covers single operators, NN_DUMP_ARGS while aclopStartDumpArgs
 * is on; 0 otherwise.  A launch reads it once, relaxed: all dumping costs when it is off. */
extern _Atomic unsigned nn_dump_switch;

static inline bool nn_dump_wanted(void)
{
    return atomic_load_explicit(&nn_dump_switch, memory_order_relaxed) != 0;
}

#define NN_DUMP_DIR_MAX 4096

/* dump_stats items, in the order of CANN's statistics columns; the default is all but L2norm. */
enum {
    NN_DUMP_STAT_MAX = 1u << 0,
    NN_DUMP_STAT_MIN = 1u << 1,
    NN_DUMP_STAT_AVG = 1u << 2,
    NN_DUMP_STAT_NAN = 1u << 3,
    NN_DUMP_STAT_NEG_INF = 1u << 4,
    NN_DUMP_STAT_POS_INF = 1u << 5,
    NN_DUMP_STAT_L2NORM = 1u << 6,
    NN_DUMP_STAT_DEFAULT = 0x3fu
};

/* What one launch dumps, fixed at its phase-2 call (a later aclmdlFinalizeDump does not take
 * back a launch already queued). */
typedef struct nn_dump_launch {
    uint64_t number;               /* 1, 2, ...: its place among the process's dumped launches */
    bool data;                     /* tensors go to dir */
    bool inputs, outputs;          /* dump_mode: input, output (the default) or all */
    unsigned stats;                /* dump_data "stats": NN_DUMP_STAT_* items of a CSV row per
                                    * tensor instead of .npy files; 0 for tensors */
    char dir[NN_DUMP_DIR_MAX];     /* <dump_path>/<product>/<pid>: made, or (callback) absolute */
    int32_t (*callback)(const acldumpChunk *, int32_t); /* acldumpRegCallback: the program gets
                                    * the files' bytes instead of the disk (NULL: files) */
    bool args;                     /* aclopStartDumpArgs: the operator's description goes to args_dir */
    char args_dir[NN_DUMP_DIR_MAX];
    char stream[24];               /* the stream handle the launch ran on, "0x..." */
    int32_t device;
    char product[24];              /* the emulated SoC family, e.g. "Ascend910B" */
} nn_dump_launch;

/* At a phase-2 call, when nn_dump_wanted(): what the launch on `stream` dumps (malloc'd; the
 * caller frees it), or NULL when nothing applies. */
nn_dump_launch *nn_dump_launch_new(nn_stream *stream);

/* Profiling (runtime/prof_trace.c): whether a session records tasks now (one relaxed load), and
 * the label of the next task this thread queues: the launch of operator `op_name`, with its
 * inputs' shapes ("[2,3];[3]") and dtypes ("FLOAT;FLOAT"), malloc'd strings the profile takes
 * over (and frees). */
bool nn_prof_active(void);
void nn_prof_label_launch(const char *op_name, char *shapes, char *dtypes);

#ifdef __cplusplus
}
#endif

#endif /* NN_RUNTIME_H */
