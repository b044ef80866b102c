/*
 * nn_check.h - the checking mode (ACLNN_CHECK): the bookkeeping and the reports that let a CANN
 * host program find here the mistakes a real card would punish (docs/checking.md).
 *
 * This layer sits just above base: runtime, meta, exec and ops call it; it calls none of them.
 * Everything here costs one predictable branch when checking is off (nn_check_on).
 *
 *   ACLNN_CHECK=1 | all                    every tool
 *   ACLNN_CHECK=memcheck,initcheck,...     the tools named (memcheck, initcheck, racecheck,
 *                                          leakcheck; synccheck is an alias of racecheck)
 *   ACLNN_CHECK_EXITCODE=N                 a process that had errors exits with N
 *   ACLNN_CHECK_LOG=FILE                   reports go to FILE (appended) instead of stderr
 *
 * A report is one block, every line starting with "=========" (compute-sanitizer's mark, so one
 * grep finds them):
 *
 *   ========= ACLNN_CHECK ERROR (memcheck): host access to device memory
 *   =========   call:     ...
 *   =========   object:   ...
 *   =========     #0 main+0x52 (./a.out)
 *   =========   advice:   ...
 *
 * Errors count towards the summary and the exit status; warnings are printed and counted apart.
 */
#ifndef NN_CHECK_H
#define NN_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/nn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tools, as bits of nn_check_tools(). */
enum {
    NN_CHECK_MEMCHECK = 1u << 0,  /* device memory is not host memory; launch ranges; API rules */
    NN_CHECK_INITCHECK = 1u << 1, /* operator inputs that nobody wrote */
    NN_CHECK_RACECHECK = 1u << 2, /* host/stream and stream/stream order (vector clocks) */
    NN_CHECK_LEAKCHECK = 1u << 3, /* objects alive at aclFinalize / exit */
    NN_CHECK_ALL = 0xfu,
    /* Not a tool of its own: warnings about what the emulated product's documentation calls
     * unsupported (ops/products.c), made when any tool is on (or ACLNN_CHECK=product alone). */
    NN_CHECK_PRODUCT = 1u << 4,
    /* Not a tool of its own either: a call that fails returns its status to the program and is
     * also reported, with the status, the message and the program's stack, as compute-sanitizer
     * reports failed API calls (ported code often ignores what aclrtFree or aclrtMemcpy return).
     * On whenever any tool is; ACLNN_CHECK_API_ERRORS=0 turns it off for programs that make
     * calls fail on purpose (tests of error codes). */
    NN_CHECK_API = 1u << 5,
};

/* The tools ACLNN_CHECK enables (read once per process; 0 when unset). */
unsigned nn_check_tools(void);

/* Whether any of `tools` is enabled. */
static inline bool nn_check_on(unsigned tools)
{
    return (nn_check_tools() & tools) != 0;
}

/* ---- Reports ------------------------------------------------------------------------------ */

typedef enum { NN_CHECK_ERROR = 0, NN_CHECK_WARNING = 1 } nn_check_severity;

/* A creation site: the return addresses of the calling program's frames, captured cheaply when
 * an object is made and symbolised only when a report prints it. */
enum { NN_CHECK_TRACE_DEPTH = 8 };
typedef struct nn_check_trace {
    void *frames[NN_CHECK_TRACE_DEPTH];
    int count;
} nn_check_trace;

/* Captures the caller's stack, dropping the frames inside libaclnn itself (so frame #0 is the
 * program's call into the library). */
void nn_check_capture(nn_check_trace *trace);

/* A report being written: nn_check_begin, any number of lines, nn_check_end.  The block is
 * printed whole at nn_check_end (reports from several threads never interleave). */
typedef struct nn_check_report nn_check_report;

/* `tool` is the bit of the tool that found it (NN_CHECK_*); `what` a short title such as
 * "host access to device memory". */
nn_check_report *nn_check_begin(nn_check_severity severity, unsigned tool, const char *what);
/* "=========   <label>: <text>"; label may be NULL for a continuation line. */
void nn_check_line(nn_check_report *report, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The frames of `trace`, one line each, symbolised (function+offset and the module). */
void nn_check_trace_lines(nn_check_report *report, const nn_check_trace *trace);
/* Prints the block and counts it. */
void nn_check_end(nn_check_report *report);

/* Errors and warnings reported so far in this process. */
uint64_t nn_check_error_count(void);
uint64_t nn_check_warning_count(void);

/* The printable name of a tool bit ("memcheck", ...). */
const char *nn_check_tool_name(unsigned tool);

/* Ends the process after a report that cannot be survived (a host access to device memory):
 * prints the summary, then exits with ACLNN_CHECK_EXITCODE when set, else aborts. */
void nn_check_fatal_exit(void) __attribute__((noreturn));


/* Tools that report at process exit register here; their hooks run, in registration order,
 * before the summary line is printed (check.c). */
void nn_check_at_exit(void (*fn)(void));


/* ---- Objects the program creates and must destroy (check_leak.c) ------------------------- */

/* Records a handle the program was given (`type` such as "aclTensor" or "aclrtStream", `api` the
 * creating call; the caller's stack is captured here).  A device resource (stream, event,
 * context) left alive at aclFinalize or exit is an error, a host-side handle (tensor, array,
 * scalar, list, executor) a warning.  No-op unless leakcheck is on. */
void nn_check_object_created(const void *handle, const char *type, const char *api,
                             bool device_resource);
/* Forgets a handle (destroyed by the program, or released by the runtime). */
void nn_check_object_destroyed(const void *handle);
/* aclFinalize, before it releases anything: reports every object and allocation still alive
 * (each once: an object reported here is not reported again at exit). */
void nn_check_leaks_at_finalize(void);


/* ---- Device allocations (check_alloc.c) ---------------------------------------------------- */

/* What the checking mode knows of one device allocation (aclrtMalloc and friends), from its
 * creation to its free.  The tools hang their own state on it. */
typedef struct nn_check_alloc {
    uintptr_t base;        /* the address the program holds */
    size_t size;           /* the bytes the program may use */
    uint64_t id;           /* 1, 2, ... in the order of allocation: "allocation #id" in reports */
    const char *api;       /* the call that made it ("aclrtMalloc") */
    nn_check_trace where;  /* the program's stack at that call */
    void *lib_base;        /* where the library itself reads and writes these bytes (memcheck
                            * maps them elsewhere; otherwise lib_base == base) */
    void *tool_state[4];   /* per tool (index: the tool's bit number), owned by that tool */
    nn_check_trace freed;  /* the program's stack at the free (memcheck keeps freed records a
                            * while, to name them when a freed address is used) */
    int pid;               /* the process that made it: a forked child's leak report leaves out
                            * what it inherited (its parent's to free) */
    bool views_replaced;   /* memcheck: the views are not the arena's file (an IPC export mapped
                            * a file of its own over both, or a slot of 2 MiB and more has an
                            * anonymous library view); the arena is mapped there again when the
                            * slot is reused */
    unsigned queued;       /* memcheck: queued tasks that use it (nn_check_task_hold) */
    bool free_waiting;     /* memcheck: freed while `queued` > 0; held back until it is 0 */
} nn_check_alloc;

/* Records an allocation (the caller's stack is captured here).  Returns the record, or NULL when
 * out of memory (checking then ignores the allocation). */
nn_check_alloc *nn_check_alloc_add(void *base, size_t size, const char *api, void *lib_base);
/* Forgets the allocation at `base` and frees its record (each tool releases its tool_state
 * first); false when none starts there. */
bool nn_check_alloc_remove(void *base);
/* Takes the allocation at `base` out of the registry without freeing the record (NULL when none
 * starts there); nn_check_alloc_release frees it later. */
nn_check_alloc *nn_check_alloc_detach(void *base);
void nn_check_alloc_release(nn_check_alloc *alloc);

/* Lookups run under the registry's lock: take it, find, use the record, release it.  A record
 * found under the lock stays valid until the lock is released. */
void nn_check_alloc_lock(void);
void nn_check_alloc_unlock(void);
/* The allocation that contains `address` (NULL when none). */
nn_check_alloc *nn_check_alloc_find_locked(const void *address);
/* Calls fn for every live allocation, in address order. */
void nn_check_alloc_each_locked(void (*fn)(nn_check_alloc *alloc, void *ctx), void *ctx);

/* Report lines naming an allocation: "allocation #3: 4096 bytes at 0x..., from aclrtMalloc at:"
 * and its creation stack. */
void nn_check_alloc_lines(nn_check_report *report, const char *label, const nn_check_alloc *alloc);

/* ---- Order between the host, streams and events (check_race.c) --------------------------- */

/* One range of device memory a call or task reads or writes (the program's addresses).  Ranges
 * outside the allocations checking knows are ignored. */
typedef struct nn_check_access {
    const void *address;
    uint64_t bytes;
    bool write;
    const char *role; /* "input", "output", "workspace", "dst", "src", "devPtr" (a literal) */
    int index;        /* the operand's number for inputs and outputs, else -1 */
} nn_check_access;

/* A stream the runtime made (the default stream of a context included) and one it destroyed
 * after its tasks ran or were dropped (the host then knows them finished). */
void nn_check_stream_created(const void *stream, bool is_default, int32_t device);
void nn_check_stream_finished(const void *stream);
/* A task queued on `stream` (an operator launch, an asynchronous copy or fill) that touches
 * `accesses`: checked against the unfinished tasks of other streams, then recorded.  `call`
 * names it in reports ("aclnnPrelu"); the caller's stack is captured here. */
void nn_check_race_task(const void *stream, const char *call, const nn_check_access *accesses,
                        int count);
/* A host-synchronous call that touches device bytes now (aclrtMemcpy, aclrtMemset): checked
 * against every task not known to have finished.  True when a race was reported. */
bool nn_check_race_host(const char *call, const nn_check_access *accesses, int count);
/* aclrtFree of the allocation at `base`, before it is released.  True when a task that may
 * still be unfinished uses it (reported): the caller then keeps the bytes until aclFinalize. */
bool nn_check_race_free(const void *base, const char *call);
/* The order the program establishes: aclrtRecordEvent, aclrtStreamWaitEvent, a host wait that
 * returned with the stream's or the event's work finished, aclrtDestroyEvent (or an event
 * handle made anew). */
void nn_check_race_event_recorded(const void *event, const void *stream);
void nn_check_race_event_waited(const void *stream, const void *event);
void nn_check_race_host_waited_stream(const void *stream);
void nn_check_race_host_waited_event(const void *event);
void nn_check_race_event_destroyed(const void *event);
/* Under the allocation lock, when an allocation goes: drops racecheck's records of it. */
void nn_check_race_forget_locked(nn_check_alloc *alloc);
/* ---- memcheck and initcheck: device memory (check_mem.c, check_launch.c, check_init.c) ------ */

/* The runtime's device allocators call these when any tool is on (nn_check_on(NN_CHECK_ALL)).
 * nn_check_device_alloc returns `size` bytes of device memory, registered with the allocation
 * registry: under memcheck a slot of an arena (one memfd mapped twice), PROT_NONE at the
 * returned (program's) address and read-write at the record's lib_base; otherwise plain 64-byte
 * aligned heap memory.  NULL when out of memory (or when the system would refuse the unchecked
 * runtime the same size). */
void *nn_check_device_alloc(const char *api, size_t size);
/* Releases memory from nn_check_device_alloc.  Under memcheck its addresses stay reserved (and
 * named in reports) for a while, so a use after the free is reported, not silently reused; while
 * a queued task uses it (nn_check_task_hold) its bytes and addresses stay whatever its size, so
 * the task writes memory nobody else was given. */
void nn_check_device_free(void *base);
/* memcheck: a task about to be queued uses the device allocations containing `addresses` (NULL
 * entries skipped).  Returns what nn_check_task_release takes once the task ran or was dropped
 * (NULL: nothing held). */
void *nn_check_task_hold(const void *const *addresses, int count);
void nn_check_task_release(void *hold);
/* memcheck: the views of the live allocation containing `address` were mapped over with another
 * file (an IPC export shares its pages); its slot is mapped back onto the arena before reuse. */
void nn_check_device_views_replaced(const void *address);

/* memcheck: a launch about to be queued uses [starts[i], +lengths[i]) (operand i, names[i] in
 * CANN's prototype; NULL or empty entries skipped); the ranges outside device allocations (aclrtHostRegister'd host memory, aclrtMapMem
 * mappings) are remembered until nn_check_reach_release, so that nn_check_reach_released - the
 * runtime's aclrtHostUnregister and aclrtUnmapMem, before they release [start, +length) -
 * reports a launch still queued on them and waits for it (check_reach.c). */
void *nn_check_reach_hold(const char *op_name, const char *const *names, const void *const *starts,
                          const size_t *lengths, int count);
void nn_check_reach_release(void *hold);
void nn_check_reach_released(const char *api, const void *start, size_t length);

/* memcheck's aclrtMallocHost memory (check_pinned.c): a memfd mapped twice, so that the
 * program's view can be closed while an asynchronous copy writes it, and made read-only while
 * one reads it.  nn_check_pinned_alloc returns NULL when out of memory; nn_check_pinned_free is
 * false for memory not made by it.  nn_check_pinned_lib_addr: the library's address for
 * `address` in a block (else unchanged).  nn_check_pinned_copy_queued: a copy into (`writes`)
 * or from `ptr` is being queued (true when `ptr` is in a block, now guarded from the host);
 * nn_check_pinned_copy_done with the same arguments once that copy ran or was dropped. */
/* memcheck: the calling thread starts (true) or ends host code a stream runs (a callback or a
 * host function).  The stream may have queued a copy touching a pinned block after that code,
 * so the code's accesses to guarded blocks are let through unreported (check_pinned.c). */
void nn_check_stream_code(bool running);
void *nn_check_pinned_alloc(size_t size);
bool nn_check_pinned_free(void *base);
void *nn_check_pinned_lib_addr(const void *address);
bool nn_check_pinned_copy_queued(const void *ptr, bool writes);
void nn_check_pinned_copy_done(const void *ptr, bool writes);

/* The library's address for the program's `address`: inside a live device allocation under
 * memcheck, the same byte in the library's read-write view; any other address unchanged. */
void *nn_check_lib_addr(const void *address);

/* The id of the live allocation containing `address` (0: none), recorded at phase 1 so that a
 * launch finds memory freed or reallocated since. */
uint64_t nn_check_alloc_id_at(const void *address);

/* A copy or fill the runtime is about to make (now, or queued on a stream).  Checks it (memcheck:
 * freed device memory, the rules CANN's aclrtMemcpyAsync page states; initcheck: records the
 * bytes written) and translates dst and src to the library's addresses.  Returns false when it
 * must not run (it touches freed device memory; reported). */
typedef struct nn_check_copy_args {
    const char *api;            /* "aclrtMemcpyAsync" */
    void *dst;                  /* in: the program's address; out: the library's */
    const void *src;            /* NULL for a fill */
    size_t count;
    bool async;
    const char *kind_name;      /* "ACL_MEMCPY_HOST_TO_DEVICE" (copies) */
    const char *unpinned_side;  /* "src"/"dst": the host side of an async host<->device copy is
                                 * neither aclrtMallocHost nor aclrtHostRegister memory */
} nn_check_copy_args;
bool nn_check_copy(nn_check_copy_args *args);
/* The rules CANN's aclrtMemcpyAsync page states and a card does not check: 64-byte aligned
 * addresses, pinned host memory for host<->device copies.  Reported (memcheck) for a call the
 * runtime accepted; the copy is still made, as CANN makes it.  `args` as the program gave them. */
void nn_check_copy_rules(const nn_check_copy_args *args);

/* One tensor argument of a launch, as the executor froze it. */
typedef struct nn_check_operand {
    bool is_output;
    int index;                /* among the inputs, or among the outputs */
    const char *name;         /* the argument's name in CANN's prototype, or NULL */
    const char *base;         /* the program's tensorData */
    size_t elem_size;
    int64_t offset;           /* view offset, elements */
    uint64_t ndim;
    const int64_t *dims;
    const int64_t *strides;   /* elements */
    int64_t numel;
    uint64_t phase1_alloc;    /* nn_check_alloc_id_at at phase 1 (0: none) */
    bool shape_only;          /* an input the operator never reads (only its shape) */
    bool reachable;           /* the runtime knows the view as memory the device reaches (device
                               * memory, a mapping, registered host memory) at the launch */
    void *lib_base;           /* out: the library's address for base */
} nn_check_operand;

/* A launch about to be queued: checks every range it touches against the live allocations
 * (memcheck: each view and [workspace, workspace + workspace_size)), each input view's bytes
 * against what was written (initcheck; then marks the outputs' bytes written) and translates
 * the addresses.  Returns false when the launch must fail (it would touch freed memory or run
 * past an allocation; reported). */
bool nn_check_launch(const char *op_name, nn_check_operand *operands, int count, void *workspace,
                     uint64_t workspace_size, void **lib_workspace);

#ifdef __cplusplus
}
#endif

#endif /* NN_CHECK_H */
