/*
 * executor.c - the two-phase framework every operator uses.
 *
 * Phase 1 (nn_executor_create / add_* / finish) freezes a copy of each tensor argument (shape,
 * strides, offset, dtype; the handle and its creation number) and the op's plan, and lays out
 * the workspace:
 *
 *     [staging for non-contiguous operand 0][staging for ...][op scratch]
 *      each area 64-byte aligned, numel * element size bytes
 *
 * and registers the executor.  Phase 2 (nn_launch_executor) checks the executor and workspace,
 * snapshots the operands into a task with each tensor's current storage address (executors
 * follow their tensors, as CANN's share their storage: aclSetRawTensorAddr or aclSet*TensorAddr
 * on a tensor redirects the next launch; a tensor destroyed since phase 1 is an error, where
 * CANN would read freed memory) and queues it on the stream; the task stages strided
 * inputs into the workspace, runs the kernel on contiguous buffers and copies strided outputs
 * back through their views (CANN's Contiguous -> kernel -> ViewCopy).
 *
 * Lifetime: an executor holds one reference for the registry and one per queued task.  A
 * normal executor leaves the registry at phase 2 (it is consumed, success or failure, as in
 * CANN) and is freed when its task has run; a repeatable one stays registered until
 * aclDestroyAclOpExecutor.  Because every public entry point looks the pointer up in the
 * registry first, a consumed or foreign executor is reported, never dereferenced.
 *
 * Handles: the pointer a program holds is not the executor's address but a handle from the
 * meta objects' handle space, an address handed out once and never again (design decision
 * 20).  With the object's own address, malloc gives a consumed executor's address to
 * the next phase 1, and a second launch through the stale pointer ran that other executor.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/nn_check.h"
#include "exec/nn_executor_impl.h"
#include "exec/nn_launch_dump.h"
#include "runtime/nn_runtime.h"

pthread_mutex_t nn_executor_lock = PTHREAD_MUTEX_INITIALIZER;

/* The live executors by handle, in increasing order (nn_sorted_*): every launch and every
 * aclSet*TensorAddr looks its executor up here, so the lookup is a bisection, whatever number of
 * repeatable executors a program keeps (a model's layers); a list walk grew with each of them. */
typedef struct registry_entry {
    uintptr_t handle; /* the sort key: what the program holds */
    aclOpExecutor *ex;
} registry_entry;
static registry_entry *registry = NULL;
static size_t registry_count = 0, registry_capacity = 0;

/* ---- handles ------------------------------------------------------------------------------- */

/* A handle is a small block of the meta objects' handle space (meta/handle_space.c), whose
 * addresses are never handed out twice; it holds nothing, only its address counts.  (The
 * executor itself is too large for that space.)  0 when none could be had. */
static uintptr_t new_handle(void)
{
    return (uintptr_t)nn_handle_alloc(1);
}

/* ---- registry ------------------------------------------------------------------------------ */

static void executor_free(aclOpExecutor *ex)
{
    ex->magic = 0;
    free(ex->plan);
    free(ex);
}

/* Drops one reference; frees at zero.  Caller holds the lock. */
static void executor_unref_locked(aclOpExecutor *ex)
{
    if (--ex->refs == 0)
        executor_free(ex);
}

/* Index one past where `handle` is or would be in the registry.  Caller holds the lock. */
static size_t registry_slot_after(uintptr_t handle)
{
    return nn_sorted_upper_bound(registry, registry_count, sizeof *registry, handle);
}

aclOpExecutor *nn_executor_live_locked(const aclOpExecutor *handle)
{
    const size_t after = registry_slot_after((uintptr_t)handle);
    return after > 0 && registry[after - 1].handle == (uintptr_t)handle ? registry[after - 1].ex : NULL;
}

void nn_executor_unregister_locked(aclOpExecutor *ex)
{
    if (!ex->registered)
        return;
    nn_sorted_remove(registry, &registry_count, sizeof *registry, registry_slot_after(ex->handle) - 1);
    ex->registered = false;
    nn_check_object_destroyed((void *)ex->handle);
    nn_handle_free((void *)ex->handle);
    executor_unref_locked(ex);
}

/* False, with nothing registered, when no handle is left or the registry could not grow. */
static bool register_locked(aclOpExecutor *ex)
{
    const registry_entry entry = {.handle = new_handle(), .ex = ex};
    if (entry.handle == 0)
        return false;
    registry_entry *grown = nn_sorted_insert(registry, &registry_count, &registry_capacity, 64, sizeof *registry,
                                             registry_slot_after(entry.handle), &entry);
    if (grown == NULL) {
        nn_handle_free((void *)entry.handle);
        return false;
    }
    registry = grown;
    ex->handle = entry.handle;
    ex->registered = true;
    ex->refs = 1;
    nn_check_object_created((void *)ex->handle, "aclOpExecutor", ex->op_name, false);
    return true;
}

/* ---- phase 1 ------------------------------------------------------------------------------- */

aclOpExecutor *nn_executor_create(const char *op_name, nn_kernel_fn kernel, const void *plan,
                                  size_t plan_size)
{
    aclOpExecutor *ex = calloc(1, sizeof *ex);
    if (ex == NULL) {
        nn_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: could not allocate the executor.", op_name);
        return NULL;
    }
    if (plan_size > 0) {
        ex->plan = malloc(plan_size);
        if (ex->plan == NULL) {
            free(ex);
            nn_error(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%s: could not allocate the plan (%zu bytes).",
                     op_name, plan_size);
            return NULL;
        }
        memcpy(ex->plan, plan, plan_size);
    }
    ex->magic = NN_MAGIC_EXECUTOR;
    snprintf(ex->op_name, sizeof ex->op_name, "%s", op_name);
    ex->kernel = kernel;
    ex->saturation_only = nn_overflow_saturation_only();
    ex->saturation_possible = nn_overflow_mode_supported(true);
    return ex;
}

void nn_operand_freeze(nn_operand *op, const aclTensor *t, bool is_output)
{
    memset(op, 0, sizeof *op);
    op->handle = t;
    op->is_output = is_output;
    op->contiguous = true;
    if (t == NULL)
        return;
    op->dtype = t->dtype;
    op->format = t->format;
    op->ndim = t->ndim;
    memcpy(op->dims, t->dims, sizeof(int64_t) * t->ndim);
    memcpy(op->strides, t->strides, sizeof(int64_t) * t->ndim);
    op->offset = t->offset;
    op->serial = t->serial;
    op->base = t->data;
    op->numel = nn_numel(t->ndim, t->dims);
    op->contiguous = op->numel <= 1 || nn_view_is_contiguous(t->ndim, t->dims, t->strides);
    nn_operand_note_alloc(op);
}

void nn_operand_note_alloc(nn_operand *op)
{
    op->check_alloc = 0;
    if (op->base != NULL && op->numel > 0 && nn_check_on(NN_CHECK_MEMCHECK))
        op->check_alloc = nn_check_alloc_id_at((const char *)op->base +
                                               op->offset * (int64_t)nn_dtype_size(op->dtype));
}

static int add_operand(aclOpExecutor *ex, const aclTensor *t, bool is_output)
{
    if (ex == NULL)
        return -1;
    if (ex->num_operands >= NN_MAX_OPERANDS) {
        ex->overflow = true;
        return -1;
    }
    int index;
    if (is_output) {
        index = ex->num_operands;
    } else {
        /* Inputs stay in front of any outputs already added. */
        index = ex->num_inputs;
        memmove(&ex->operands[index + 1], &ex->operands[index],
                sizeof(nn_operand) * (size_t)(ex->num_operands - index));
        ex->num_inputs++;
    }
    nn_operand_freeze(&ex->operands[index], t, is_output);
    ex->num_operands++;
    return index;
}

int nn_executor_add_input(aclOpExecutor *ex, const aclTensor *t) { return add_operand(ex, t, false); }
int nn_executor_add_output(aclOpExecutor *ex, const aclTensor *t) { return add_operand(ex, t, true); }

void nn_executor_describe(aclOpExecutor *ex, int index, const char *name, bool shape_only)
{
    if (ex == NULL || index < 0 || index >= ex->num_operands)
        return;
    ex->operands[index].name = name;
    ex->operands[index].shape_only = shape_only;
}

void nn_executor_add_scratch(aclOpExecutor *ex, uint64_t bytes)
{
    if (ex != NULL)
        ex->scratch_bytes += (bytes + 63) & ~(uint64_t)63;
}

void nn_executor_saturate_outputs(aclOpExecutor *ex)
{
    if (ex != NULL) ex->computed_outputs = true;
}

void nn_executor_discard(aclOpExecutor *ex)
{
    if (ex != NULL)
        executor_free(ex);
}

/* The element range [lo, hi] a view touches, relative to its base (numel > 0). */
static void view_extent(const nn_operand *op, int64_t *lo, int64_t *hi)
{
    *lo = *hi = op->offset;
    for (uint64_t i = 0; i < op->ndim; i++) {
        int64_t reach = op->strides[i] * (op->dims[i] - 1);
        if (reach > 0)
            *hi += reach;
        else
            *lo += reach;
    }
}

/* The bytes an operand's view spans: *start (NULL for a NULL base) and *len. */
static void operand_span(const nn_operand *op, const char **start, size_t *len)
{
    size_t elem = nn_dtype_size(op->dtype);
    int64_t lo, hi;
    view_extent(op, &lo, &hi);
    *len = (size_t)(hi - lo + 1) * elem;
    /* Address arithmetic on a NULL base is undefined: test the base first. */
    *start = op->base == NULL ? NULL : (const char *)op->base + lo * (int64_t)elem;
}

/* Whether the runtime knows the operand's bytes as memory the device reaches (aclrtMalloc or
 * aclrtMapMem memory, registered host memory); an empty or NULL one counts as reachable. */
static bool operand_reachable(const nn_operand *op)
{
    if (op->handle == NULL || op->numel <= 0 || op->base == NULL)
        return true;
    const char *start;
    size_t len;
    operand_span(op, &start, &len);
    return nn_mem_find(start, len, NULL, NULL);
}

/* ACLNN_STRICT=1: every non-empty operand must lie inside one aclrtMalloc allocation. */
static aclnnStatus strict_check_operand(const char *op_name, const nn_operand *op, int index)
{
    if (op->handle == NULL || op->numel <= 0 || !nn_strict_mode())
        return ACLNN_SUCCESS;
    const char *start;
    size_t len;
    operand_span(op, &start, &len);
    /* CANN's phase 1 never reads the data address (its own op_api unit tests pass NULL), and a
     * launch refuses NULL data: memcheck lets phase 1 through, ACLNN_STRICT=1 refuses early. */
    if (start == NULL && !nn_strict_mode_asked())
        return ACLNN_SUCCESS;
    if (start == NULL || !nn_mem_find(start, len, NULL, NULL))
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: %s %d (data %p, %zu bytes) does not lie inside memory from aclrtMalloc "
                        "(ACLNN_STRICT=1).",
                        op_name, op->is_output ? "output" : "input", index, (const void *)start, len);
    return ACLNN_SUCCESS;
}

aclnnStatus nn_executor_finish(aclOpExecutor *ex, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (ex == NULL)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR; /* create already reported it */
    if (workspaceSize == NULL || executor == NULL) { /* ops check these first; a backstop */
        aclnnStatus st = nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s must not be null.", ex->op_name,
                                  workspaceSize == NULL ? "workspaceSize" : "executor");
        executor_free(ex);
        return st;
    }
    if (ex->overflow) {
        aclnnStatus st = nn_error(ACLNN_ERR_INNER, "%s: more than %d tensor arguments.", ex->op_name,
                                  NN_MAX_OPERANDS);
        executor_free(ex);
        return st;
    }
    for (int i = 0; i < ex->num_operands; i++) {
        aclnnStatus st = strict_check_operand(ex->op_name, &ex->operands[i], i);
        if (st != ACLNN_SUCCESS) {
            executor_free(ex);
            return st;
        }
    }

    uint64_t size = 0;
    if (ex->kernel != NULL) {
        for (int i = 0; i < ex->num_operands; i++) {
            nn_operand *op = &ex->operands[i];
            if (op->handle == NULL || op->contiguous)
                continue;
            size = (size + 63) & ~(uint64_t)63;
            op->staging_offset = size;
            size += (uint64_t)op->numel * nn_dtype_size(op->dtype);
        }
        if (ex->scratch_bytes > 0) {
            size = (size + 63) & ~(uint64_t)63;
            ex->scratch_offset = size;
            size += ex->scratch_bytes;
        }
    } else {
        ex->scratch_bytes = 0;
    }
    ex->workspace_size = size;

    pthread_mutex_lock(&nn_executor_lock);
    const bool registered = register_locked(ex);
    pthread_mutex_unlock(&nn_executor_lock);
    if (!registered) {
        aclnnStatus st = nn_error(ACLNN_ERR_INNER_CREATE_EXECUTOR,
                                  "%s: could not grow the executor registry or reserve handles.", ex->op_name);
        executor_free(ex);
        return st;
    }
    *workspaceSize = size;
    *executor = (aclOpExecutor *)ex->handle;
    return ACLNN_SUCCESS;
}

/* ---- phase 2 ------------------------------------------------------------------------------- */

typedef struct {
    aclOpExecutor *ex; /* holds a reference: keeps the plan alive */
    nn_launch launch;
    nn_operand operands[NN_MAX_OPERANDS];
    nn_kernel_fn kernel;
    char *workspace;
    uint64_t workspace_size;
    const char *path;         /* the kernel path that ran (nn_launch_set_path), or NULL */
    nn_dump_launch *dump;     /* what a data dump writes of this launch (launch_dump.c), or NULL */
    void *held;               /* memcheck: the device allocations it uses (nn_check_task_hold) */
    void *reach;              /* memcheck: the registered or mapped host memory it uses (nn_check_reach_hold) */
    bool translated;          /* checking mode: lib_base/lib_workspace replace the addresses */
    void *lib_base[NN_MAX_OPERANDS];
    void *lib_workspace;
    int32_t overflow_device;  /* the device whose overflow status Inf/NaN outputs mark, or -1 */
} launch_task;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One INFO line per launch, in the spirit of ONEDNN_VERBOSE:
 *   aclnnFoo: exec in0=FLOAT[2, 3] out0=FLOAT[2, 3]:strides[1, 2] kernel=foo_avx512 ws=96
 *             threads=2 time=12.3us
 * where kernel= names the path the kernel chose (nn_launch_set_path), when it named one. */
static void trace_launch(const launch_task *task, aclnnStatus status, double micros)
{
    char line[1800];
    size_t used = 0;
    int n = snprintf(line, sizeof line, "%s: exec", task->launch.op_name);
    used = n > 0 ? (size_t)n : 0;
    int inputs = 0, outputs = 0;
    for (int i = 0; i < task->launch.num_operands && used < sizeof line; i++) {
        const nn_operand *op = &task->operands[i];
        char shape[256];
        const char *kind = op->is_output ? "out" : "in";
        int ordinal = op->is_output ? outputs++ : inputs++;
        if (op->handle == NULL) {
            n = snprintf(line + used, sizeof line - used, " %s%d=none", kind, ordinal);
        } else {
            n = snprintf(line + used, sizeof line - used, " %s%d=%s%s", kind, ordinal,
                         nn_dtype_name(op->dtype), nn_shape_str(shape, sizeof shape, op->ndim, op->dims));
            if (n > 0 && !op->contiguous && used + (size_t)n < sizeof line) {
                used += (size_t)n;
                n = snprintf(line + used, sizeof line - used, ":strides%s+%lld",
                             nn_shape_str(shape, sizeof shape, op->ndim, op->strides),
                             (long long)op->offset);
            }
        }
        used += n > 0 ? (size_t)n : 0;
    }
    if (task->path != NULL && used < sizeof line) {
        n = snprintf(line + used, sizeof line - used, " kernel=%s", task->path);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < sizeof line)
        snprintf(line + used, sizeof line - used, " ws=%llu threads=%d time=%.1fus%s",
                 (unsigned long long)task->workspace_size, nn_num_threads(), micros,
                 status == ACLNN_SUCCESS ? "" : " FAILED");
    nn_log(NN_LOG_INFO, "%s", line);
}

/* Saturation mode's post-pass over one computed fp16/bf16 output, on the contiguous buffer the
 * kernel wrote (before a strided output is copied back: the same bits, one pass).  Large outputs
 * are split over the pool: the rule is per element, so the split cannot change a bit. */
typedef struct {
    uint16_t *values;
    bool bf16;
} saturate_job;

static void saturate_range(void *ctx, int64_t begin, int64_t end)
{
    const saturate_job *job = ctx;
    if (job->bf16)
        nn_bf16_saturate_n(job->values + begin, (size_t)(end - begin));
    else
        nn_f16_saturate_n(job->values + begin, (size_t)(end - begin));
}

static void saturate_outputs(const launch_task *task)
{
    for (int i = 0; i < task->launch.num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        if (!op->is_output || op->handle == NULL || op->numel == 0 || op->data == NULL ||
            (op->dtype != ACL_FLOAT16 && op->dtype != ACL_BF16))
            continue;
        saturate_job job = {(uint16_t *)op->data, op->dtype == ACL_BF16};
        nn_parallel_for(op->numel, 1 << 16, saturate_range, &job);
    }
}

/* Whether a computed output holds Inf/NaN: looked at before saturation, which hides it. */
static bool outputs_overflowed(const launch_task *task)
{
    for (int i = 0; i < task->launch.num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        if (op->is_output && op->handle != NULL && op->numel > 0 && op->data != NULL &&
            nn_any_nonfinite(op->data, op->dtype, (size_t)op->numel))
            return true;
    }
    return false;
}

/* The bytes a launch's kernel reads and writes: every operand it touches, once. */
static int64_t launch_bytes(const launch_task *task)
{
    int64_t bytes = 0;
    for (int i = 0; i < task->launch.num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        if (op->handle != NULL && !op->shape_only)
            bytes += op->numel * (int64_t)nn_dtype_size(op->dtype);
    }
    return bytes;
}

static int run_task(void *ctx)
{
    launch_task *task = ctx;
    bool tracing = nn_log_enabled(NN_LOG_INFO);
    double start = tracing ? now_us() : 0.0;

    for (int i = 0; i < task->launch.num_operands; i++) {
        nn_operand *op = &task->operands[i];
        if (op->handle == NULL)
            continue;
        size_t elem = nn_dtype_size(op->dtype);
        /* An empty operand may legally have NULL data; never do arithmetic on it. */
        if (op->numel == 0 || op->base == NULL) {
            op->data = op->base;
            continue;
        }
        char *view_start = (char *)op->base + op->offset * (int64_t)elem;
        if (op->contiguous || task->kernel == NULL) {
            op->data = view_start;
            continue;
        }
        op->data = task->workspace + op->staging_offset;
        if (!op->is_output)
            nn_copy_to_contiguous(op->data, view_start, elem, op->ndim, op->dims, op->strides);
    }

    if (task->dump != NULL)
        nn_launch_dump_tensors(task->dump, task->launch.op_name, task->operands, task->launch.num_operands, false);
    aclnnStatus status = ACLNN_SUCCESS;
    if (task->kernel != NULL) {
        /* a small launch keeps its kernel on this thread (nn_parallel_small_work) */
        const bool serial_before = nn_parallel_set_serial(nn_parallel_small_work(launch_bytes(task)));
        status = task->kernel(&task->launch);
        nn_parallel_set_serial(serial_before);
    }

    if (status == ACLNN_SUCCESS && task->kernel != NULL && task->ex->computed_outputs &&
        task->overflow_device >= 0 && outputs_overflowed(task))
        nn_rt_note_overflow(task->overflow_device); /* aclrtGetOverflowStatus (runtime/rt_overflow.c) */
    if (status == ACLNN_SUCCESS && task->kernel != NULL && task->ex->computed_outputs && task->launch.saturation)
        saturate_outputs(task);
    if (task->dump != NULL) {
        if (status == ACLNN_SUCCESS)
            nn_launch_dump_tensors(task->dump, task->launch.op_name, task->operands, task->launch.num_operands, true);
        nn_launch_dump_end(task->dump, task->launch.op_name, task->operands, task->launch.num_operands, status);
    }
    if (status == ACLNN_SUCCESS && task->kernel != NULL) {
        for (int i = 0; i < task->launch.num_operands; i++) {
            nn_operand *op = &task->operands[i];
            if (op->handle == NULL || op->contiguous || !op->is_output || op->numel == 0)
                continue;
            size_t elem = nn_dtype_size(op->dtype);
            char *view_start = (char *)op->base + op->offset * (int64_t)elem;
            nn_copy_from_contiguous(view_start, op->data, elem, op->ndim, op->dims, op->strides);
        }
    }
    if (tracing)
        trace_launch(task, status, now_us() - start);
    return status;
}

/* racecheck (the caller checks that it is on): what the task will touch - every input view
 * read, every output view written, the workspace written (staging and scratch). */
static void race_check_launch(const launch_task *task, nn_stream *stream)
{
    nn_check_access accesses[NN_MAX_OPERANDS + 1];
    int count = 0, inputs = 0, outputs = 0;
    for (int i = 0; i < task->launch.num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        int ordinal = op->is_output ? outputs++ : inputs++;
        if (op->handle == NULL || op->numel <= 0 || op->base == NULL)
            continue;
        int64_t lo, hi;
        view_extent(op, &lo, &hi);
        size_t elem = nn_dtype_size(op->dtype);
        accesses[count++] = (nn_check_access){(const char *)op->base + lo * (int64_t)elem,
                                              (uint64_t)(hi - lo + 1) * elem, op->is_output,
                                              op->is_output ? "output" : "input", ordinal};
    }
    if (task->workspace != NULL && task->workspace_size > 0 && task->kernel != NULL)
        accesses[count++] = (nn_check_access){task->workspace, task->workspace_size, true,
                                              "workspace", -1};
    nn_check_race_task(stream, task->launch.op_name, accesses, count);
}

static void release_task(void *ctx)
{
    launch_task *task = ctx;
    pthread_mutex_lock(&nn_executor_lock);
    executor_unref_locked(task->ex);
    pthread_mutex_unlock(&nn_executor_lock);
    nn_check_task_release(task->held);
    free(task->dump);
    nn_check_reach_release(task->reach);
    free(task);
}

/* Copies the executor's operands into `operands` with each tensor's current storage address
 * (caller holds the lock); an error when a tensor was destroyed since phase 1. */
static aclnnStatus follow_tensors_locked(const char *op_name, const aclOpExecutor *ex, nn_operand *operands)
{
    const aclTensor *handles[NN_MAX_OPERANDS];
    uint64_t serials[NN_MAX_OPERANDS];
    void *current[NN_MAX_OPERANDS];
    for (int i = 0; i < ex->num_operands; i++) {
        operands[i] = ex->operands[i];
        handles[i] = ex->operands[i].handle;
        serials[i] = ex->operands[i].serial;
    }
    size_t dead = nn_tensors_current_data(handles, serials, (size_t)ex->num_operands, current);
    if (dead < (size_t)ex->num_operands) {
        const nn_operand *op = &ex->operands[dead];
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: %s tensor %d (%p) given to phase 1 was destroyed before this launch; "
                        "an executor reads its tensors' addresses at launch, so they must live "
                        "until the phase-2 call (CANN would read freed memory).",
                        op_name, op->is_output ? "output" : "input",
                        op->is_output ? (int)dead - ex->num_inputs : (int)dead, (const void *)op->handle);
    }
    for (int i = 0; i < ex->num_operands; i++)
        if (handles[i] != NULL)
            operands[i].base = current[i];
    return ACLNN_SUCCESS;
}

/* The checking mode's look at a launch (nn_check_launch): every range it touches, checked now
 * in program order; the library's addresses for the bytes are kept for use_lib_addresses. */
static bool check_mode_launch(launch_task *task, const aclOpExecutor *ex, void *workspace,
                              uint64_t workspace_size)
{
    nn_check_operand ops[NN_MAX_OPERANDS];
    int inputs = 0, outputs = 0;
    for (int i = 0; i < ex->num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        ops[i] = (nn_check_operand){
            .is_output = op->is_output, .index = op->is_output ? outputs++ : inputs++,
            .base = op->handle != NULL ? op->base : NULL, .elem_size = nn_dtype_size(op->dtype),
            .offset = op->offset, .ndim = op->ndim, .dims = op->dims, .strides = op->strides,
            .numel = op->handle != NULL ? op->numel : 0,
            /* rebound since phase 1 (aclSetInputTensorAddr & co.): no phase-1 allocation to match */
            .phase1_alloc = op->base == ex->operands[i].base ? op->check_alloc : 0,
            .name = op->name, .shape_only = op->shape_only, .reachable = operand_reachable(op)};
    }
    if (!nn_check_launch(ex->op_name, ops, ex->num_operands, workspace, workspace_size,
                         &task->lib_workspace))
        return false;
    const void *touched[NN_MAX_OPERANDS + 1];
    for (int i = 0; i < ex->num_operands; i++) {
        task->lib_base[i] = ops[i].lib_base;
        touched[i] = ops[i].numel > 0 ? ops[i].base : NULL;
    }
    touched[ex->num_operands] = workspace_size > 0 ? workspace : NULL;
    task->held = nn_check_task_hold(touched, ex->num_operands + 1);
    /* Operands memcheck did not translate are outside device memory: registered host memory or
     * mappings, which must stay so until the launch has run (none, as a rule: no call). */
    const void *starts[NN_MAX_OPERANDS];
    const char *names[NN_MAX_OPERANDS];
    size_t lengths[NN_MAX_OPERANDS];
    int outside = 0;
    for (int i = 0; i < ex->num_operands; i++) {
        const char *start = NULL;
        lengths[i] = 0;
        if (ops[i].numel > 0 && ops[i].lib_base == ops[i].base)
            operand_span(&task->operands[i], &start, &lengths[i]);
        starts[i] = start;
        names[i] = ops[i].name;
        outside += start != NULL;
    }
    if (outside > 0)
        task->reach = nn_check_reach_hold(ex->op_name, names, starts, lengths, ex->num_operands);
    task->translated = true;
    return true;
}

/* After racecheck has seen the program's addresses: the task reaches the bytes at the
 * library's (memcheck maps device memory twice). */
static void use_lib_addresses(launch_task *task)
{
    if (!task->translated)
        return;
    for (int i = 0; i < task->launch.num_operands; i++)
        if (task->operands[i].handle != NULL)
            task->operands[i].base = task->lib_base[i];
    if (task->launch.scratch != NULL)
        task->launch.scratch = (char *)task->lib_workspace +
                               ((char *)task->launch.scratch - task->workspace);
    task->workspace = task->lib_workspace;
}

/* A failed phase 2 consumes a normal executor, as CANN's does. Caller holds the lock. */
static void consume_on_failure_locked(aclOpExecutor *ex)
{
    if (!ex->repeatable)
        nn_executor_unregister_locked(ex);
}

aclnnStatus nn_launch_executor(const char *op_name, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *handle, aclrtStream stream)
{
    const bool wait_follows = nn_launch_take_wait_follows(stream);
    if (handle == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR,
                        "%s: Expected a proper executor but got null for argument executor.", op_name);

    /* Only the header is cleared: a task's readers look at its first num_operands operands,
     * which follow_tensors_locked copies in, and at lib_base only once `translated` is set.
     * Clearing all NN_MAX_OPERANDS operands (4 KiB) cost a small launch more than the rest
     * of its bookkeeping. */
    launch_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: could not allocate the launch task.", op_name);
    memset(task, 0, offsetof(launch_task, operands));
    task->held = NULL;
    task->dump = NULL;
    task->reach = NULL;
    task->translated = false;

    pthread_mutex_lock(&nn_executor_lock);
    aclnnStatus status = ACLNN_SUCCESS;
    aclOpExecutor *executor = nn_executor_live_locked(handle);
    if (executor == NULL) {
        pthread_mutex_unlock(&nn_executor_lock);
        free(task);
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: executor %p is not a live executor (already consumed by a previous "
                        "launch, destroyed, or never returned by a GetWorkspaceSize call).",
                        op_name, (void *)handle);
    }
    if (strcmp(executor->op_name, op_name) != 0)
        nn_log(NN_LOG_WARNING, "%s: launching an executor created by %s.", op_name, executor->op_name);

    if (workspaceSize > 0 && workspace == NULL) {
        status = nn_error(ACLNN_ERR_PARAM_NULLPTR,
                          "%s: workspace is null but workspaceSize is %llu.", op_name,
                          (unsigned long long)workspaceSize);
    } else if (workspaceSize < executor->workspace_size) {
        status = nn_error(ACLNN_ERR_PARAM_INVALID,
                          "%s: workspaceSize must be at least %llu (as returned by phase 1), got %llu.",
                          op_name, (unsigned long long)executor->workspace_size,
                          (unsigned long long)workspaceSize);
    }
    if (status == ACLNN_SUCCESS)
        status = follow_tensors_locked(op_name, executor, task->operands);
    for (int i = 0; status == ACLNN_SUCCESS && i < executor->num_operands; i++) {
        const nn_operand *op = &task->operands[i];
        if (op->handle != NULL && op->numel > 0 && op->base == NULL && executor->kernel != NULL)
            status = nn_error(ACLNN_ERR_PARAM_NULLPTR,
                              "%s: %s tensor %d has no data address (tensorData is null).", op_name,
                              op->is_output ? "output" : "input",
                              op->is_output ? i - executor->num_inputs : i);
        else if (executor->repeatable || op->base != executor->operands[i].base)
            status = strict_check_operand(op_name, op, i); /* memory may have changed since phase 1 */
    }
    if (status != ACLNN_SUCCESS) {
        consume_on_failure_locked(executor);
        pthread_mutex_unlock(&nn_executor_lock);
        free(task);
        return status;
    }

    /* Snapshot (task->operands, above): a repeatable executor may be rebound and relaunched
     * while this task waits. */
    task->ex = executor;
    task->kernel = executor->kernel;
    task->workspace = workspace;
    task->workspace_size = executor->workspace_size;
    task->launch.op_name = executor->op_name;
    task->launch.plan = executor->plan;
    task->launch.operands = task->operands;
    task->launch.num_operands = executor->num_operands;
    task->launch.scratch = executor->scratch_bytes ? (char *)workspace + executor->scratch_offset : NULL;
    task->launch.scratch_size = executor->scratch_bytes;
    task->path = NULL;
    task->launch.path = &task->path;
    if (nn_check_on(NN_CHECK_MEMCHECK | NN_CHECK_INITCHECK) &&
        !check_mode_launch(task, executor, workspace, workspaceSize)) {
        status = nn_error(ACLNN_ERR_PARAM_INVALID, "%s: the launch would touch device memory it "
                          "must not (see the ACLNN_CHECK report).", op_name);
        consume_on_failure_locked(executor);
        pthread_mutex_unlock(&nn_executor_lock);
        free(task);
        return status;
    }
    executor->refs++; /* the task's reference */
    if (!executor->repeatable)
        nn_executor_unregister_locked(executor); /* consumed: the task now owns it */
    pthread_mutex_unlock(&nn_executor_lock);

    nn_stream *resolved = NULL;
    aclError rt = nn_stream_resolve_named(op_name, stream, &resolved);
    if (rt != ACL_SUCCESS) {
        release_task(task);
        return rt == ACL_ERROR_INVALID_PARAM ? ACLNN_ERR_PARAM_INVALID : ACLNN_ERR_RUNTIME_ERROR;
    }
    /* The overflow mode: the product's (frozen at phase 1), or the stream's, which it copied from
     * the device when it was created (docs/precision.md, "Overflow mode"). */
    task->launch.saturation = task->ex->saturation_only ||
                              (task->ex->saturation_possible && nn_stream_saturation(resolved));
    task->overflow_device = nn_stream_overflow_device(resolved);
    if (nn_check_on(NN_CHECK_RACECHECK) && !nn_stream_records(resolved))
        race_check_launch(task, resolved);
    /* Dumps: one relaxed load when off.  A launch captured into a model runtime instance is not
     * dumped (its replays would share one launch number). */
    if (nn_dump_wanted() && !nn_stream_records(resolved))
        task->dump = nn_launch_dump_begin(op_name, task->operands, task->launch.num_operands, resolved);
    use_lib_addresses(task);
    nn_exec_prof_label(task->launch.op_name, task->operands, task->ex->num_inputs);
    rt = nn_stream_submit_launch(resolved, run_task, release_task, task, wait_follows); /* releases on failure too */
    if (rt == ACL_SUCCESS)
        return ACLNN_SUCCESS;
    /* With ACLNN_LAUNCH_BLOCKING=1 the submit returns the kernel's own status: an aclnn status
     * (16xxxx / 56xxxx) passes through; anything else is a runtime failure. */
    if ((rt >= 161000 && rt < 162000) || (rt >= 561000 && rt < 562000))
        return rt;
    return ACLNN_ERR_RUNTIME_ERROR;
}
