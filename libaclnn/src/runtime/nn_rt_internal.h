/*
 * nn_rt_internal.h - what the files of src/runtime share with each other (never used outside
 * this directory; the contract with the rest of the library is nn_runtime.h).
 *
 * Locks, always taken in this order (a thread never takes an earlier one while holding a later
 * one):
 *   nn_rt_lock      devices, contexts, the stream registry, stream reference counts
 *   stream->lock    one stream's task queue and error state
 *   nn_ev_lock      every event's state and the event registry (one lock + one condition)
 *   nn_cb_lock      callback subscriptions and report queues
 *   memory lock     the allocation registry (memory.c, a leaf lock)
 * No stream worker is ever joined while nn_rt_lock is held (a task may call the runtime).
 * Whatever a thread may wait on is kept alive by that thread's reference, never freed under it:
 * streams (refs), events (refs), report threads (users); a task never releases its own stream.
 */
#ifndef NN_RT_INTERNAL_H
#define NN_RT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "acl/acl.h"
#include "base/nn_base.h"
#include "check/nn_check.h"
#include "runtime/nn_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NN_RT_MAX_DEVICES 64

/* ---- small helpers (init.c) ------------------------------------------------------------ */

/* nn_error() that also records `code` as the thread's last runtime error
 * (aclrtPeekAtLastError / aclrtGetLastError).  Returns code. */
int nn_rt_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void nn_rt_set_last_error(int code);
/* Whether aclInit has succeeded and aclFinalize has not run since (init.c). */
bool nn_rt_initialized(void);
/* Dumps (rt_dump.c): aclInit's configPath may hold a "dump" section (called with the init lock
 * held, before the runtime counts as initialized); aclFinalize turns every dump off. */
aclError nn_dump_configure_at_init(const char *configPath);
void nn_dump_finalize(void);
/* rt_init_callback.c: aclInit runs the registered init callbacks (after the dump section, with the
 * init lock held; a failure fails aclInit); the finalize that releases the runtime runs the
 * finalize callbacks first (a failure is returned and the runtime stays initialized). */
aclError nn_init_callbacks_run(const char *configPath);
aclError nn_finalize_callbacks_run(const char *api);
/* rt_state_callback.c: the registered stream / device state callbacks and task abort callbacks,
 * called without any runtime lock held (see the top of that file for when). */
void nn_state_stream_notify(nn_stream *stream, aclrtStreamState state);
void nn_state_device_notify(int32_t device, aclrtDeviceState state);
aclError nn_state_task_abort_notify(int32_t device, aclrtDeviceTaskAbortStage stage, uint32_t timeout);

/* CLOCK_MONOTONIC deadline `timeout_ms` from now. */
void nn_rt_deadline(struct timespec *deadline, int32_t timeout_ms);
/* CLOCK_MONOTONIC now, in nanoseconds (stream_worker.c). */
uint64_t nn_rt_now_ns(void);
/* A condition variable that times out on CLOCK_MONOTONIC. */
void nn_rt_cond_init_monotonic(pthread_cond_t *cond);
/* Environment flag "1"/"true"/"yes"/"on" (case-insensitive) -> true. */
bool nn_rt_env_flag(const char *name);

/* ---- a set of live handles (sorted array, binary search) -------------------------------- */

typedef struct nn_ptrset {
    void **items;
    size_t count;
    size_t capacity;
} nn_ptrset;

bool nn_ptrset_add(nn_ptrset *set, void *item); /* false on allocation failure */
bool nn_ptrset_remove(nn_ptrset *set, const void *item);
bool nn_ptrset_has(const nn_ptrset *set, const void *item);
void nn_ptrset_clear(nn_ptrset *set);

/* ---- devices and contexts (device.c, context.c) ----------------------------------------- */

#define NN_CTX_OPTS 3 /* context-scope aclSysParamOpt values 0..2 */

typedef struct nn_context {
    uint64_t id;            /* unique for the life of the process (detects stale TLS) */
    int32_t device;
    bool is_default;        /* the per-device context made by aclrtSetDevice */
    nn_stream *default_stream;
    int64_t opt_value[NN_CTX_OPTS];
    bool opt_set[NN_CTX_OPTS];
} nn_context;

extern pthread_mutex_t nn_rt_lock;

/* Number of visible devices (ASCEND_RT_VISIBLE_DEVICES entries, else 1); read once. */
uint32_t nn_rt_device_count(void);
/* 0, or 107001 (ACL_ERROR_RT_INVALID_DEVICEID) naming `api` when deviceId is not a visible
 * device (device.c); every runtime call that takes a device id checks it here. */
aclError nn_rt_check_device(const char *api, int64_t deviceId);
/* Under nn_rt_lock: the calling thread's current context if it is still alive, else NULL. */
nn_context *nn_rt_current_context_locked(void);
void nn_rt_set_current_context_locked(nn_context *ctx);
/* Under nn_rt_lock: makes a context with its default stream and registers it. */
nn_context *nn_rt_context_new_locked(int32_t device, bool is_default, aclError *err);
/* Under nn_rt_lock: unregisters ctx and moves it and all of its streams into `out` for
 * nn_rt_teardown (which must be called without the lock). */
typedef struct nn_teardown {
    nn_context **contexts;
    size_t num_contexts;
    nn_stream **streams;
    size_t num_streams;
} nn_teardown;
bool nn_rt_context_detach_locked(nn_context *ctx, nn_teardown *out);
bool nn_rt_context_detach_all_locked(nn_teardown *out);
/* Without nn_rt_lock: waits for (or with force, drops) the streams' work, joins their
 * workers, frees streams and contexts, and empties `td`. */
void nn_rt_teardown(nn_teardown *td, bool force);
/* Whether [ptr, ptr+len) lies inside one aclrtHostRegister range (host_register.c). */
bool nn_host_mapped_contains(const void *ptr, size_t len);

/* aclFinalize: releases every device, context and stream. */
void nn_rt_devices_finalize(void);
/* aclrtGetPrimaryCtxState: whether aclrtSetDevice holds the device (its default context lives). */
bool nn_rt_device_is_set(int32_t device);
/* Library unload without aclFinalize: stops every stream without running queued work. */
void nn_rt_devices_release_at_exit(void);

/* ---- streams (stream.c) ---------------------------------------------------------------- */

/* Under nn_rt_lock: makes and registers a stream of ctx with a running worker thread. */
nn_stream *nn_stream_new_locked(nn_context *ctx, bool is_default, uint32_t flags, aclError *err);
/* Under nn_rt_lock. */
void nn_stream_unregister_locked(nn_stream *stream);
/* rt_device_queries.c: how many more streams may be created (every device counts against one
 * limit, NN_MAX_STREAMS in stream.c), and the number on its stream (from 1) of the last task the
 * calling thread queued (0: none yet). */
uint32_t nn_stream_free_count(void);
uint32_t nn_stream_thread_last_task_id(void);
bool nn_stream_is_live_locked(const nn_stream *stream);
nn_context *nn_stream_context(const nn_stream *stream);
/* Under nn_rt_lock: appends every registered stream of ctx to out (grown with realloc). */
bool nn_stream_collect_locked(nn_context *ctx, nn_stream ***out, size_t *count);
/* Under nn_rt_lock: streams whose context is on `device` (any context); each gets a reference
 * the caller drops with nn_stream_unref. */
bool nn_stream_collect_device_locked(int32_t device, nn_stream ***out, size_t *count);
void nn_stream_ref_locked(nn_stream *stream);
void nn_stream_unref(nn_stream *stream); /* the last reference frees the stream */
/* nn_stream_resolve_named plus a reference (dropped with nn_stream_unref): for a caller that
 * waits on the stream, which a destroy must not free meanwhile. */
aclError nn_stream_acquire_named(const char *api, aclrtStream stream, nn_stream **out);
/* The priority a stream was created with (aclrtCreateStreamWithConfig, aclrtCreateStreamV2). */
void nn_stream_set_priority(nn_stream *s, uint32_t priority);
/* Without nn_rt_lock, on an unregistered stream: finishes (or drops, if force) its queued
 * tasks, joins its worker and drops the registry's reference. */
void nn_stream_shutdown(nn_stream *stream, bool force);
/* aclrtStreamAbort / aclrtStreamStop / aclrtDeviceTaskAbort (rt_abort.c), without nn_rt_lock,
 * on a stream the caller holds a reference to and does not run a task of: drops the tasks that
 * have not started, makes a blocked one give up, waits for the running one and forgets the
 * stream's pending error, so the stream takes new work at once.  Returns how many it dropped. */
uint64_t nn_stream_abort_queued(nn_stream *stream);
/* At process exit (library destructor): drops queued tasks, joins the worker for at most 2 s and
 * frees the stream.  Returns false (and leaves the stream alone) if that was not possible. */
bool nn_stream_shutdown_at_exit(nn_stream *stream);
/* Waits until the tasks queued so far have run (deadline NULL = forever).  Returns 0, the
 * stream's first task error (pushing its message onto this thread and clearing it), or
 * `timeout_code` after nn_rt_error naming `api`. */
aclError nn_stream_wait(nn_stream *stream, const struct timespec *deadline, int timeout_code,
                        const char *api, int32_t timeout_ms);
/* True while a force-destroy is cancelling the stream (blocking tasks give up). */
bool nn_stream_aborting(const nn_stream *stream);
/* ACL_STOP_ON_FAILURE (true): tasks are skipped while the stream holds an unreported error. */
void nn_stream_set_stop_on_failure(nn_stream *stream, bool stop);
/* rt_misc.c: aclrtSetOpExecuteTimeOut* in ms and aclrtSetOpWaitTimeout in s (0: none). */
uint64_t nn_rt_op_execute_timeout_ms(void);
/* rt_misc.c: ACL_ERROR_RT_AICORE_TIMEOUT with the message of a synchronize that gave up on a
 * task overrunning the execute timeout. */
aclError nn_rt_execute_timeout_error(const char *api);
uint32_t nn_rt_op_wait_timeout_s(void);
/* rt_misc.c: hands a failed task to the exception callbacks (aclrtExceptionInfoCallbackRegister). */
void nn_rt_report_exception(int32_t device, const nn_stream *stream, uint32_t error_code);
/* True when called from the stream's own worker thread. */
bool nn_stream_is_worker(const nn_stream *stream);
/* True when the calling thread runs a task the stream waits for: its worker (a host function
 * or event task), or a blocking callback of it run by aclrtProcessReport.  Such a thread must
 * not synchronize or release the stream. */
bool nn_stream_runs_here(const nn_stream *stream);
/* Under nn_rt_lock: a registered stream of ctx (NULL: of any context) for which
 * nn_stream_runs_here holds, else NULL. */
nn_stream *nn_stream_running_here_locked(const nn_context *ctx);

/* ---- model runtime instances (model_ri.c) and stream capture ------------------------------ */

typedef struct nn_model nn_model;

/* Re-issues a captured task on `stream` when its model executes (event records and waits take
 * their record numbers then, not at capture time). */
typedef aclError (*nn_task_replay_fn)(void *ctx, nn_stream *stream);

/* One task as a stream was given it: run (queued as is on replay) or replay, and release. */
typedef struct nn_captured_task {
    nn_task_run_fn run;
    nn_task_replay_fn replay;
    nn_task_release_fn release;
    void *ctx;
    bool inline_ok;
    uint8_t type; /* the aclmdlRITaskType a model's task queries answer (aclmdlRITaskGetType) */
} nn_captured_task;

/* Queues a task that, on a stream capturing into a model, is recorded and re-issued by
 * replay(ctx, stream) at each execution; on any other stream replay runs now.  release(ctx)
 * follows once: after replay here, or when the model goes.  `type` is what a model answers for it. */
aclError nn_stream_submit_replayed(nn_stream *stream, nn_task_replay_fn replay, nn_task_release_fn release,
                                   void *ctx, aclmdlRITaskType type);
/* nn_stream_submit / nn_stream_submit_inline_ok for a task a model answers as `type` (an operator
 * launch is ACL_MODEL_RI_TASK_KERNEL, a value write or wait is VALUE_WRITE / VALUE_WAIT). */
aclError nn_stream_submit_typed(nn_stream *stream, nn_task_run_fn run, nn_task_release_fn release, void *ctx,
                                bool inline_ok, aclmdlRITaskType type);
/* stream.c: the stream goes; the models it recorded into stop listing it (aclmdlRIGetStreams). */
void nn_model_forget_recorder(const nn_stream *stream);
/* rt_value.c: the parameters of a value write or wait task (false: `task` is none). */
bool nn_value_task_params(const nn_captured_task *task, aclmdlRITaskParams *params);
/* rt_value.c: a value write or wait task made from params (aclmdlRITaskSetParams), checked as
 * aclrtValueWrite / aclrtValueWait check theirs; 0 or the status after nn_rt_error. */
aclError nn_value_task_make(const char *api, const aclmdlRITaskParams *params, nn_captured_task *out);
/* event.c: the parameters of an event record, wait or reset task (false: `task` is none). */
bool nn_event_task_params(const nn_captured_task *task, aclmdlRITaskParams *params);
/* Points the stream's capture at `model` if it points at `expected` (else
 * ACL_ERROR_RT_STREAM_CAPTURED, nothing changed). */
aclError nn_stream_set_capture(nn_stream *stream, nn_model *model, nn_model *expected);
/* The model the stream records into, with a reference dropped by nn_model_unref (NULL: none). */
nn_model *nn_stream_capture(nn_stream *stream);
void nn_model_ref(nn_model *model);
/* The calling thread queued a task for running: its last task went to no model (model_ri_info.c). */
void nn_model_forget_thread_last_task(void);
void nn_model_unref(nn_model *model);
/* stream.c, under the stream's lock: records the task `stream` was given into the model if it is
 * capturing or building (*taken = true), else leaves it to be queued (*taken = false). */
aclError nn_model_record_task(nn_model *model, const nn_stream *stream, const nn_captured_task *task,
                              bool *taken);
/* event.c, after a record, reset or wait was recorded from `stream`: tracks which joined streams
 * are joined back.  Returns the id of the model (0: none), which a recorded event remembers. */
uint32_t nn_model_note_event_call(nn_stream *stream, const void *event, bool is_record, bool is_wait);
/* event.c: `stream` waits for an event whose newest record was captured into model `model_id`:
 * it joins that capture (0), or the capture is over (0, nothing done), or an error. */
aclError nn_model_join_capture(const char *api, nn_stream *stream, uint32_t model_id);
/* stream.c: the stream is being destroyed; a capture it began is invalidated. */
void nn_model_forget_stream(nn_model *model, nn_stream *stream);
/* memory.c: a synchronous copy or fill is refused (107030) while a capture forbids it for the
 * calling thread (capture modes and aclmdlRICaptureThreadExchangeMode). */
aclError nn_model_check_sync_call(const char *api);
/* aclFinalize: destroys the models the program left. */
void nn_model_finalize(void);

/* ---- events (event.c) / callbacks (callback.c) ------------------------------------------ */

/* Wakes every task blocked on an event or a blocking callback (used by force-destroy). */
void nn_rt_wake_blocked_tasks(void);
void nn_event_finalize(void);
/* aclrtGetEventId / aclrtGetEventAvailNum (rt_device_queries.c): an event's number (from 0, in
 * creation order; 100000 naming `api` for a null or dead event) and how many events exist. */
aclError nn_event_get_id(const char *api, aclrtEvent event, uint32_t *id);
size_t nn_event_live_count(void);
/* Runs and removes pending callbacks of `stream` (NULL: all) and its subscriptions. */
void nn_callback_unsubscribe_stream(nn_stream *stream);
void nn_callback_finalize(void);
/* Process exit: drops subscriptions and pending callbacks without running them. */
void nn_callback_finalize_at_exit(void);
/* Wakes blocking-callback tasks so that they re-check whether their stream is aborting. */
void nn_callback_wake_all(void);
/* rt_misc.c: drops the aclrtAllocatorRegister registration of a stream that goes (a new stream
 * at the same address must not inherit it). */
void nn_allocator_forget_stream(const nn_stream *stream);
/* rt_stream_attr.c: values a program sets on a stream and reads back (0 until set); the stream's
 * record goes with nn_stream_attr_forget (called from nn_allocator_forget_stream). */
typedef enum nn_stream_attr {
    NN_STREAM_ATTR_OVERFLOW_SWITCH, /* rt_overflow.c */
    NN_STREAM_ATTR_FAILURE_MODE,    /* rt_misc.c, aclrtSetStreamFailureMode */
    NN_STREAM_ATTR_TAG,
    NN_STREAM_ATTR_CACHE_OP_INFO,
    NN_STREAM_ATTR_CUBE_LIMIT,      /* rt_res_limit.c, aclrtSetStreamResLimit (0: none) */
    NN_STREAM_ATTR_VECTOR_LIMIT,
    NN_STREAM_ATTR_COUNT
} nn_stream_attr;
bool nn_stream_attr_set(const nn_stream *stream, nn_stream_attr id, uint64_t value); /* false: out of memory */
uint64_t nn_stream_attr_get(const nn_stream *stream, nn_stream_attr id);
void nn_stream_attr_forget(const nn_stream *stream);
/* True while the calling thread runs a blocking callback of `stream` (its stream waits). */
bool nn_callback_blocks_here(const nn_stream *stream);

/* ---- memory (memory.c) ------------------------------------------------------------------ */

void nn_mem_finalize(void);
/* Records [base, base+size), mapped by the runtime itself (rt_vmm.c, rt_ipc.c, rt_mem_pool.c,
 * model_ri_cond.c), as device memory: nn_mem_find and the copy checks accept it, aclrtFree
 * refuses it naming `maker` and `releaser` (the calls that made and end it), aclFinalize leaves it. */
bool nn_mem_register_mapped(void *base, size_t size, const char *maker, const char *releaser);
void nn_mem_unregister_mapped(void *base);
/* rt_managed.c: records heap memory from posix_memalign as a device allocation that aclrtFree
 * releases (aclrtMemAllocManaged); nn_managed_forget drops its advice when it goes (true: it was
 * managed memory). */
bool nn_mem_register_managed(void *base, size_t size);
bool nn_managed_forget(const void *base);
bool nn_managed_contains(const void *ptr);
void nn_managed_finalize(void);
/* rt_mem_usage.c: the device memory each allocator holds (aclrtGetMemUsageInfo).  memory.c calls
 * nn_mem_device_block_freed for every aclrtMalloc or managed block aclrtFree releases. */
typedef enum { NN_MEM_USE_MALLOC, NN_MEM_USE_POOL, NN_MEM_USE_MANAGED, NN_MEM_USE_COUNT } nn_mem_use;
void nn_mem_usage_add(nn_mem_use who, size_t bytes);
void nn_mem_usage_sub(nn_mem_use who, size_t bytes);
void nn_mem_device_block_freed(const void *base, size_t size);
void nn_mem_usage_finalize(void);
/* rt_vmm.c: the access aclrtMemSetAccess gave the aclrtMapMem mapping containing ptr
 * (READWRITE when ptr is in none). */
aclrtMemAccessFlags nn_vmm_access_at(const void *ptr);
/* rt_pinned.c: aclrtMallocHost blocks that queued asynchronous copies use.  A copy counts its
 * use of the block at `base` when queued (false: it could not be counted) and ends it once it
 * ran or was dropped; nn_pinned_owe_free (aclrtFreeHost, under memory.c's lock) is true when a
 * queued copy still uses the block: the last such copy then releases its memory, and *queued is
 * the newest copy's stack (checking mode) for nn_pinned_report_free. */
bool nn_pinned_copy_begin(uintptr_t base);
void nn_pinned_copy_end(uintptr_t base);
bool nn_pinned_owe_free(uintptr_t base, nn_check_trace *queued);
void nn_pinned_report_free(const char *api, void *base, size_t size, const nn_check_trace *queued);
/* Gives an aclrtMallocHost block's memory back (memcheck's pinned blocks included). */
void nn_mem_release_host(void *base);
/* Whether ptr lies in an aclrtMallocHost allocation. */
bool nn_mem_is_host_alloc(const void *ptr);
/* rt_mem_pool.c: a synchronize gives idle pool memory beyond each pool's release threshold
 * back (nn_stream_wait); aclFinalize releases every pool. */
void nn_mem_pool_release_idle(void);
void nn_mem_pool_finalize(void);
/* rt_ipc.c: the aclrtMalloc block [base, base+size) is being freed: its IPC export keys die and
 * pages an export shared get private memory again before the allocator can hand them out. */
void nn_ipc_block_freed(const void *base, size_t size);

#ifdef __cplusplus
}
#endif

/* Queues `fn(args)` on a stream as the library's own work (2-D copies, 32-bit fills): as
 * aclrtLaunchHostFunc, without the racecheck order a program's host function gets (callback.c);
 * `api` names the call in messages. */
aclError nn_stream_launch_library_task(const char *api, aclrtStream stream, aclrtHostFunc fn, void *args);

#endif /* NN_RT_INTERNAL_H */
