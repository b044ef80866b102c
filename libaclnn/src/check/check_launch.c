/*
 * check_launch.c - what memcheck and initcheck check when a copy, a fill or an operator launch
 * is made (nn_check.h; docs/checking.md): the ranges against the live allocations, the bytes
 * read against the bytes written, CANN's rules for aclrtMemcpyAsync; then the addresses are
 * translated to the library's view.  Everything is decided when the call is made, in the order
 * the program made its calls, never from when a stream's worker happens to run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

typedef enum {
    RANGE_HOST,     /* no device allocation: host memory (or nothing we know) */
    RANGE_DEVICE,   /* inside one live allocation */
    RANGE_PAST_END, /* starts in a live allocation and runs past its end */
    RANGE_FREED,    /* in an allocation that was freed */
} range_kind;

static range_kind resolve_locked(const void *start, size_t length, nn_check_alloc **alloc)
{
    nn_check_alloc *live = nn_check_alloc_find_locked(start);
    if (live != NULL) {
        *alloc = live;
        size_t offset = (uintptr_t)start - live->base;
        return length <= live->size - offset ? RANGE_DEVICE : RANGE_PAST_END;
    }
    nn_check_alloc *freed = nn_check_freed_find_locked(start);
    if (freed != NULL) {
        *alloc = freed;
        return RANGE_FREED;
    }
    *alloc = NULL;
    return RANGE_HOST;
}

static size_t offset_in(const nn_check_alloc *alloc, const void *address)
{
    return (uintptr_t)address - alloc->base;
}

/* The "call:" lines: the call and the program's stack at it. */
static void call_lines(nn_check_report *report, const char *fmt, const char *what, const char *arg)
{
    nn_check_trace trace;
    nn_check_capture(&trace);
    nn_check_line(report, "call:", fmt, what, arg);
    nn_check_trace_lines(report, &trace);
}

static void report_freed_use(const char *api, const char *what, const nn_check_alloc *alloc,
                             const void *address, size_t length)
{
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "use of freed device memory");
    call_lines(report, "%s: %s", api, what);
    nn_check_line(report, "range:", "[%p, +%zu bytes): %zu bytes into freed allocation #%llu",
                  address, length, offset_in(alloc, address), (unsigned long long)alloc->id);
    nn_check_freed_lines(report, alloc);
    nn_check_line(report, "advice:", "on an NPU this reads or writes memory that may already "
                  "belong to another allocation; free device memory only after its last use "
                  "(and after aclrtSynchronizeStream when a queued task uses it)");
    nn_check_end(report);
}

static void report_past_end(const char *api, const char *what, const nn_check_alloc *alloc,
                            const void *address, size_t length, const char *advice)
{
    size_t offset = offset_in(alloc, address);
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "range runs past the end of its allocation");
    call_lines(report, "%s: %s", api, what);
    nn_check_line(report, "range:", "[%p, +%zu bytes) starts %zu bytes into allocation #%llu and "
                  "runs %zu bytes past its end", address, length, offset,
                  (unsigned long long)alloc->id, length - (alloc->size - offset));
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "%s", advice);
    nn_check_end(report);
}

/* ---- copies and fills ----------------------------------------------------------------------- */

static void report_rule(const char *api, const char *title, const char *what, const char *rule)
{
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK, title);
    call_lines(report, "%s: %s", api, what);
    nn_check_line(report, "rule:", "%s", rule);
    nn_check_end(report);
}

void nn_check_copy_rules(const nn_check_copy_args *args)
{
    if (!args->async || args->src == NULL || !nn_check_on(NN_CHECK_MEMCHECK))
        return;
    char what[160];
    const uintptr_t dst = (uintptr_t)args->dst, src = (uintptr_t)args->src;
    if (args->src != NULL && ((dst | src) % 64) != 0) {
        snprintf(what, sizeof what, "%s %p is not 64-byte aligned (%s %p)",
                 dst % 64 != 0 ? "dst" : "src", dst % 64 != 0 ? args->dst : args->src,
                 dst % 64 != 0 ? "src" : "dst", dst % 64 != 0 ? args->src : args->dst);
        report_rule(args->api, "unaligned asynchronous copy", what,
                    "CANN's aclrtMemcpyAsync: \"The source address and destination address "
                    "passed to this call must be 64-byte aligned.\" Allocate with aclrtMalloc / "
                    "aclrtMallocHost, or offset by multiples of 64 bytes");
    }
    if (args->unpinned_side != NULL) {
        snprintf(what, sizeof what, "%s, host side %s %p is pageable memory", args->kind_name,
                 args->unpinned_side, strcmp(args->unpinned_side, "src") == 0 ? args->src : args->dst);
        report_rule(args->api, "asynchronous copy with pageable host memory", what,
                    "CANN's aclrtMemcpyAsync: \"If the value of kind passed by this API is "
                    "ACL_MEMCPY_HOST_TO_DEVICE or ACL_MEMCPY_DEVICE_TO_HOST and the host memory is "
                    "not allocated by aclrtMallocHost, this API does not report an error, but an "
                    "unpredictable error may occur when the task is executed.\" Use aclrtMallocHost "
                    "(or aclrtHostRegister) memory for the host side");
    }
}

bool nn_check_copy(nn_check_copy_args *args)
{
    const bool memcheck = nn_check_on(NN_CHECK_MEMCHECK);
    const bool initcheck = nn_check_on(NN_CHECK_INITCHECK);
    if (!memcheck && !initcheck)
        return true;
    nn_check_alloc_lock();
    nn_check_alloc *to = NULL, *from = NULL;
    range_kind dst_kind = resolve_locked(args->dst, args->count, &to);
    range_kind src_kind = args->src != NULL ? resolve_locked(args->src, args->count, &from)
                                            : RANGE_HOST;
    bool ok = true;
    if (memcheck && (dst_kind == RANGE_FREED || src_kind == RANGE_FREED)) {
        const bool dst_freed = dst_kind == RANGE_FREED;
        report_freed_use(args->api, dst_freed ? "dst" : "src", dst_freed ? to : from,
                         dst_freed ? args->dst : args->src, args->count);
        ok = false;
    } else if (dst_kind == RANGE_PAST_END || src_kind == RANGE_PAST_END) {
        ok = false; /* the runtime's own range check refuses it with a status */
    }
    if (ok && initcheck && dst_kind == RANGE_DEVICE) {
        if (src_kind == RANGE_DEVICE)
            nn_check_init_copy_locked(to, offset_in(to, args->dst), from,
                                      offset_in(from, args->src), args->count);
        else
            nn_check_init_mark_locked(to, offset_in(to, args->dst), args->count);
    }
    if (ok && memcheck) {
        if (dst_kind == RANGE_DEVICE)
            args->dst = nn_check_lib_of(to, args->dst);
        if (src_kind == RANGE_DEVICE)
            args->src = nn_check_lib_of(from, args->src);
    }
    nn_check_alloc_unlock();
    if (!ok)
        nn_check_note_refusal();
    return ok;
}

/* ---- operator launches ---------------------------------------------------------------------- */

/* The argument's name for reports: "input 0 (self)" or "output 1". */
static const char *operand_name(const nn_check_operand *op, char *buffer, size_t size)
{
    if (op->name != NULL)
        snprintf(buffer, size, "%s %d (%s)", op->is_output ? "output" : "input", op->index, op->name);
    else
        snprintf(buffer, size, "%s %d", op->is_output ? "output" : "input", op->index);
    return buffer;
}

/* The bytes a view spans, [*first, *first + *length) relative to its base. */
static void view_span(const nn_check_operand *op, int64_t *first, size_t *length)
{
    int64_t lo = op->offset, hi = op->offset;
    for (uint64_t i = 0; i < op->ndim; i++) {
        int64_t reach = op->strides[i] * (op->dims[i] - 1);
        if (reach > 0)
            hi += reach;
        else
            lo += reach;
    }
    *first = lo * (int64_t)op->elem_size;
    *length = (size_t)(hi - lo + 1) * op->elem_size;
}

/* Calls fn for each run of contiguous bytes the view covers (offsets relative to its base),
 * innermost rows at a time; stops when fn returns false. */
typedef bool (*run_fn)(void *ctx, int64_t byte_offset, size_t length);

static void each_run(const nn_check_operand *op, run_fn fn, void *ctx)
{
    const int64_t elem = (int64_t)op->elem_size;
    int ndim = (int)op->ndim;
    /* merge the innermost dimensions while they are contiguous */
    int64_t run = 1;
    int inner = ndim;
    while (inner > 0 && (op->strides[inner - 1] == run || op->dims[inner - 1] == 1)) {
        run *= op->dims[inner - 1];
        --inner;
    }
    int64_t index[NN_MAX_DIMS] = {0};
    for (;;) {
        int64_t element = op->offset;
        for (int d = 0; d < inner; ++d)
            element += index[d] * op->strides[d];
        if (!fn(ctx, element * elem, (size_t)(run * elem)))
            return;
        int d = inner - 1;
        while (d >= 0 && ++index[d] == op->dims[d])
            index[d--] = 0;
        if (d < 0)
            return;
    }
}

typedef struct init_walk {
    nn_check_alloc *alloc;
    size_t base_offset; /* the view's base, bytes into the allocation */
    bool found;
    size_t first;       /* the first unwritten byte, into the allocation */
} init_walk;

static bool check_run(void *ctx, int64_t byte_offset, size_t length)
{
    init_walk *walk = ctx;
    size_t first;
    if (nn_check_init_written_locked(walk->alloc, walk->base_offset + (size_t)byte_offset, length,
                                     &first))
        return true;
    walk->found = true;
    walk->first = first;
    return false;
}

static bool mark_run(void *ctx, int64_t byte_offset, size_t length)
{
    init_walk *walk = ctx;
    nn_check_init_mark_locked(walk->alloc, walk->base_offset + (size_t)byte_offset, length);
    return true;
}

static void report_unwritten(const char *op_name, const char *argument, const nn_check_alloc *alloc,
                             size_t first)
{
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_INITCHECK,
                                             "operator reads device memory nobody wrote");
    call_lines(report, "%s: %s", op_name, argument);
    nn_check_line(report, "unwritten:", "byte %zu of allocation #%llu is the first the view reads "
                  "that no copy, fill or operator wrote", first, (unsigned long long)alloc->id);
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "on an NPU the operator reads whatever the memory held "
                  "(aclrtMalloc does not clear it); aclrtMemcpy the input in, or aclrtMemset it, "
                  "before the launch");
    nn_check_end(report);
}

/* memcheck for one operand: its range must lie in a live allocation, the one phase 1 saw. */
/* A view outside every device allocation that the device cannot reach at the launch: host
 * memory unregistered since phase 1 (aclrtHostUnregister), or an aclrtMapMem range unmapped
 * since (aclrtUnmapMem, aclrtFreePhysical), where the kernel would fault. */
static void report_unreachable(const char *op_name, const char *what, const char *start, size_t length)
{
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "launch reaches memory the device cannot reach");
    call_lines(report, "%s: %s", op_name, what);
    nn_check_line(report, "range:", "[%p, +%zu bytes) is neither device memory, an aclrtMapMem mapping "
                  "nor aclrtHostRegister'd host memory now", (const void *)start, length);
    nn_check_line(report, "advice:", "keep host memory registered, and a mapping mapped and its physical "
                  "memory allocated, until the launch that uses it has run (aclrtSynchronizeStream)");
    nn_check_end(report);
}

static bool check_operand_locked(const char *op_name, nn_check_operand *op, nn_check_alloc **found)
{
    char name[96];
    int64_t first;
    size_t length;
    view_span(op, &first, &length);
    const char *start = op->base + first;
    nn_check_alloc *alloc;
    range_kind kind = resolve_locked(start, length, &alloc);
    *found = kind == RANGE_DEVICE ? alloc : NULL;
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return kind != RANGE_PAST_END;
    if (kind == RANGE_FREED) {
        report_freed_use(op_name, operand_name(op, name, sizeof name), alloc, start, length);
        return false;
    }
    if (kind == RANGE_PAST_END) {
        report_past_end(op_name, operand_name(op, name, sizeof name), alloc, start, length,
                        "the tensor's view must lie inside the memory it was given");
        return false;
    }
    if (kind == RANGE_HOST && op->phase1_alloc == 0 && !op->reachable) {
        report_unreachable(op_name, operand_name(op, name, sizeof name), start, length);
        return false;
    }
    if (op->phase1_alloc != 0 && (kind == RANGE_HOST || alloc->id != op->phase1_alloc)) {
        nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                                 "tensor memory freed since phase 1");
        call_lines(report, "%s: %s", op_name, operand_name(op, name, sizeof name));
        nn_check_line(report, "range:", "[%p, +%zu bytes) was in allocation #%llu at phase 1 "
                      "(GetWorkspaceSize); it was freed since%s", (const void *)start, length,
                      (unsigned long long)op->phase1_alloc,
                      kind == RANGE_HOST ? "" : " and the address now belongs to:");
        if (kind != RANGE_HOST)
            nn_check_alloc_lines(report, "object:", alloc);
        nn_check_line(report, "advice:", "keep a tensor's memory allocated from phase 1 until its "
                      "launch has run (aclrtSynchronizeStream), or rebind it with "
                      "aclSetInputTensorAddr / aclSetOutputTensorAddr");
        nn_check_end(report);
        return false;
    }
    return true;
}

static bool check_workspace_locked(const char *op_name, void *workspace, uint64_t size,
                                   void **lib_workspace)
{
    *lib_workspace = workspace;
    if (workspace == NULL || size == 0)
        return true;
    char what[96];
    snprintf(what, sizeof what, "workspace %p, workspaceSize %llu", workspace,
             (unsigned long long)size);
    nn_check_alloc *alloc;
    range_kind kind = resolve_locked(workspace, (size_t)size, &alloc);
    if (kind == RANGE_FREED) {
        report_freed_use(op_name, what, alloc, workspace, (size_t)size);
        return false;
    }
    if (kind == RANGE_PAST_END) {
        report_past_end(op_name, what, alloc, workspace, (size_t)size,
                        "the workspace buffer must hold workspaceSize bytes: allocate at least "
                        "the size phase 1 returned, and pass that size to the launch");
        return false;
    }
    if (kind == RANGE_DEVICE)
        *lib_workspace = nn_check_lib_of(alloc, workspace);
    return true;
}

/* ---- outputs that share bytes ---------------------------------------------------------------- */

/* The bytes both views cover, found exactly: a bitmap of the shared span marked by one view's
 * runs and tested by the other's (two interleaved strided views share a span, not a byte). */
typedef struct overlap_walk {
    uintptr_t lo, hi;     /* the shared span, absolute addresses */
    unsigned char *marks; /* a bit per byte of [lo, hi) */
    const char *base;     /* the walked view's base */
    bool testing;         /* false: marking */
    bool found;
} overlap_walk;

static bool overlap_run(void *ctx, int64_t byte_offset, size_t length)
{
    overlap_walk *walk = ctx;
    uintptr_t start = (uintptr_t)(walk->base + byte_offset), end = start + length;
    start = start < walk->lo ? walk->lo : start;
    end = end > walk->hi ? walk->hi : end;
    for (uintptr_t at = start; at < end; ++at) {
        size_t bit = at - walk->lo;
        if (!walk->testing)
            walk->marks[bit / 8] |= (unsigned char)(1u << (bit % 8));
        else if (walk->marks[bit / 8] & (1u << (bit % 8)))
            walk->found = true;
    }
    return !walk->found;
}

static bool outputs_share_bytes(const nn_check_operand *a, const nn_check_operand *b)
{
    int64_t a_first, b_first;
    size_t a_len, b_len;
    view_span(a, &a_first, &a_len);
    view_span(b, &b_first, &b_len);
    uintptr_t a_lo = (uintptr_t)(a->base + a_first), b_lo = (uintptr_t)(b->base + b_first);
    overlap_walk walk = {a_lo > b_lo ? a_lo : b_lo, 0, NULL, a->base, false, false};
    walk.hi = a_lo + a_len < b_lo + b_len ? a_lo + a_len : b_lo + b_len;
    if (walk.lo >= walk.hi)
        return false;
    walk.marks = calloc((walk.hi - walk.lo + 7) / 8, 1);
    if (walk.marks == NULL)
        return true; /* out of memory: the spans overlap, say so */
    each_run(a, overlap_run, &walk);
    walk.base = b->base;
    walk.testing = true;
    each_run(b, overlap_run, &walk);
    free(walk.marks);
    return walk.found;
}

/* Two outputs of one launch in the same bytes: on a card the kernel's writes race, and what is
 * left there is neither result.  Reported, not refused (a card runs it). */
static void check_output_aliasing(const char *op_name, const nn_check_operand *operands, int count)
{
    char first[96], second[96];
    for (int i = 0; i < count; ++i)
        for (int j = i + 1; j < count; ++j) {
            const nn_check_operand *a = &operands[i], *b = &operands[j];
            if (!a->is_output || !b->is_output || a->base == NULL || b->base == NULL || a->numel <= 0 ||
                b->numel <= 0 || !outputs_share_bytes(a, b))
                continue;
            nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                                     "two outputs of one launch share bytes");
            call_lines(report, "%s: %s", op_name, operand_name(a, first, sizeof first));
            nn_check_line(report, "and:", "%s, in the same device memory", operand_name(b, second, sizeof second));
            nn_check_line(report, "advice:", "give each output its own memory: the kernel writes both, and "
                          "on a card the bytes they share end up holding neither result");
            nn_check_end(report);
        }
}

bool nn_check_launch(const char *op_name, nn_check_operand *operands, int count, void *workspace,
                     uint64_t workspace_size, void **lib_workspace)
{
    const bool memcheck = nn_check_on(NN_CHECK_MEMCHECK);
    nn_check_alloc *allocs[count > 0 ? count : 1];
    bool ok = true;
    nn_check_alloc_lock();
    for (int i = 0; i < count; ++i) {
        nn_check_operand *op = &operands[i];
        allocs[i] = NULL;
        op->lib_base = (void *)op->base;
        if (op->base == NULL || op->numel <= 0)
            continue;
        ok = check_operand_locked(op_name, op, &allocs[i]) && ok;
        if (memcheck && allocs[i] != NULL)
            op->lib_base = nn_check_lib_of(allocs[i], op->base);
    }
    if (memcheck) {
        ok = check_workspace_locked(op_name, workspace, workspace_size, lib_workspace) && ok;
        check_output_aliasing(op_name, operands, count);
    } else {
        *lib_workspace = workspace;
    }
    if (ok && nn_check_on(NN_CHECK_INITCHECK)) {
        char name[96];
        for (int i = 0; i < count; ++i) { /* inputs are read before any output is written */
            if (allocs[i] == NULL || operands[i].is_output || operands[i].shape_only)
                continue;
            init_walk walk = {allocs[i], offset_in(allocs[i], operands[i].base), false, 0};
            each_run(&operands[i], check_run, &walk);
            if (walk.found)
                report_unwritten(op_name, operand_name(&operands[i], name, sizeof name),
                                 allocs[i], walk.first);
        }
        for (int i = 0; i < count; ++i) {
            if (allocs[i] == NULL || !operands[i].is_output)
                continue;
            init_walk walk = {allocs[i], offset_in(allocs[i], operands[i].base), false, 0};
            each_run(&operands[i], mark_run, &walk);
        }
    }
    nn_check_alloc_unlock();
    if (!ok)
        nn_check_note_refusal();
    return ok;
}
