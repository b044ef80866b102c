/*
 * check_leak.c - leakcheck (nn_check.h, docs/checking.md): every handle the program was given,
 * with the stack of the call that made it, listed when it is still alive at aclFinalize or at
 * exit.
 *
 * Device resources (aclrtMalloc memory, streams, events, contexts) are the card's and outlive a
 * careless process's intent: left at aclFinalize they are errors, as compute-sanitizer's leak
 * check counts device allocations.  Host-side handles (tensors, arrays, scalars, lists,
 * executors) only cost host memory, and CANN's own examples leave their aclIntArrays behind, so
 * they are warnings.  aclFinalize reports before the runtime releases anything; each object is
 * reported once (at aclFinalize, or at exit if it was made later or aclFinalize never came).
 *
 * Records live on the heap, found through an array sorted by handle (a handle the runtime freed
 * without telling us may come back from malloc: the new record then replaces the old one).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/nn_check.h"

typedef struct leak_object {
    uintptr_t handle;
    uint64_t seq;          /* creation order, for the report */
    const char *type;      /* "aclTensor", "aclrtStream", ... */
    char api[80];          /* the creating call */
    bool device_resource;  /* error, not warning */
    int pid;               /* the process that made it (a forked child inherits the record) */
    bool reported;
    nn_check_trace where;
} leak_object;

typedef struct leak_slot {
    uintptr_t handle; /* sort key */
    leak_object *object;
} leak_slot;

/* The allocation registry's per-tool slot for leakcheck: non-NULL once reported. */
#define LEAK_STATE 3

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static leak_slot *g_slots;
static size_t g_count, g_capacity;
static uint64_t g_next_seq;

/* Index of the record of `handle` in g_slots, or g_count. */
static size_t find_locked(uintptr_t handle)
{
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof(leak_slot), handle);
    return at > 0 && g_slots[at - 1].handle == handle ? at - 1 : g_count;
}

static void remove_locked(size_t index)
{
    free(g_slots[index].object);
    nn_sorted_remove(g_slots, &g_count, sizeof(leak_slot), index);
}

void nn_check_object_created(const void *handle, const char *type, const char *api,
                             bool device_resource)
{
    if (handle == NULL || !nn_check_on(NN_CHECK_LEAKCHECK))
        return;
    leak_object *object = calloc(1, sizeof *object);
    if (object == NULL)
        return; /* out of memory: this one goes unchecked */
    object->handle = (uintptr_t)handle;
    object->type = type;
    /* an executor is made by its operator's phase 1 */
    snprintf(object->api, sizeof object->api, strcmp(type, "aclOpExecutor") == 0 ? "%sGetWorkspaceSize" : "%s",
             api);
    object->device_resource = device_resource;
    object->pid = (int)getpid();
    nn_check_capture(&object->where);

    pthread_mutex_lock(&g_lock);
    size_t old = find_locked(object->handle);
    if (old < g_count)
        remove_locked(old);
    object->seq = g_next_seq++;
    leak_slot slot = {object->handle, object};
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof slot, slot.handle);
    leak_slot *grown = nn_sorted_insert(g_slots, &g_count, &g_capacity, 64, sizeof slot, at, &slot);
    if (grown != NULL)
        g_slots = grown;
    pthread_mutex_unlock(&g_lock);
    if (grown == NULL)
        free(object);
}

void nn_check_object_destroyed(const void *handle)
{
    if (handle == NULL || !nn_check_on(NN_CHECK_LEAKCHECK))
        return;
    pthread_mutex_lock(&g_lock);
    size_t at = find_locked((uintptr_t)handle);
    if (at < g_count)
        remove_locked(at);
    pthread_mutex_unlock(&g_lock);
}

/* ---- reports -------------------------------------------------------------------------------- */

/* The call that releases a handle of `type`. */
static const char *destroyer(const char *type)
{
    static const struct {
        const char *type, *call;
    } calls[] = {
        {"aclrtStream", "aclrtDestroyStream"},
        {"aclrtEvent", "aclrtDestroyEvent"},
        {"aclrtContext", "aclrtDestroyContext"},
        {"aclOpExecutor", "aclDestroyAclOpExecutor (or launch it: phase 2 consumes it)"},
        {"aclTensor", "aclDestroyTensor"},
        {"aclIntArray", "aclDestroyIntArray"},
        {"aclFloatArray", "aclDestroyFloatArray"},
        {"aclBoolArray", "aclDestroyBoolArray"},
        {"aclScalar", "aclDestroyScalar"},
        {"aclTensorList", "aclDestroyTensorList"},
        {"aclScalarList", "aclDestroyScalarList"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        if (strcmp(calls[i].type, type) == 0)
            return calls[i].call;
    return "its destroy call";
}

static void report_object(const leak_object *object, const char *when)
{
    char title[160];
    snprintf(title, sizeof title, "%s not destroyed %s", object->type, when);
    nn_check_report *report = nn_check_begin(object->device_resource ? NN_CHECK_ERROR
                                                                     : NN_CHECK_WARNING,
                                             NN_CHECK_LEAKCHECK, title);
    nn_check_line(report, "object:", "%s %p, from %s at:", object->type, (void *)object->handle,
                  object->api);
    nn_check_trace_lines(report, &object->where);
    nn_check_line(report, "advice:", "release it with %s when done with it%s", destroyer(object->type),
                  object->device_resource ? " (a card keeps the resource until the process ends)"
                                          : "");
    nn_check_end(report);
}

static void report_allocation(nn_check_alloc *alloc, void *ctx)
{
    if (alloc->tool_state[LEAK_STATE] != NULL || alloc->pid != (int)getpid())
        return;
    alloc->tool_state[LEAK_STATE] = alloc; /* reported */
    char title[160];
    snprintf(title, sizeof title, "device memory not freed %s", (const char *)ctx);
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_LEAKCHECK, title);
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "free it with aclrtFree once the tasks that use it have "
                  "finished (the card's memory stays taken until the process ends)");
    nn_check_end(report);
}

static int by_creation(const void *a, const void *b)
{
    const leak_object *x = *(leak_object *const *)a, *y = *(leak_object *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reports every live object and allocation not reported yet, oldest first; in a forked child,
 * only those the child made itself (what it inherited is its parent's to release, and a child
 * that never calls the runtime and exits has leaked nothing). */
static void report_unreported(const char *when)
{
    nn_check_alloc_lock();
    nn_check_alloc_each_locked(report_allocation, (void *)when);
    nn_check_alloc_unlock();

    pthread_mutex_lock(&g_lock);
    leak_object **pending = malloc((g_count + 1) * sizeof *pending);
    size_t n = 0;
    for (size_t i = 0; pending != NULL && i < g_count; ++i)
        if (!g_slots[i].object->reported && g_slots[i].object->pid == (int)getpid())
            pending[n++] = g_slots[i].object;
    if (pending != NULL) {
        qsort(pending, n, sizeof *pending, by_creation);
        /* device resources first: they are the errors */
        for (int pass = 0; pass < 2; ++pass)
            for (size_t i = 0; i < n; ++i)
                if (pending[i]->device_resource == (pass == 0)) {
                    report_object(pending[i], when);
                    pending[i]->reported = true;
                }
    }
    pthread_mutex_unlock(&g_lock);
    free(pending);
}

void nn_check_leaks_at_finalize(void)
{
    if (nn_check_on(NN_CHECK_LEAKCHECK))
        report_unreported("at aclFinalize");
}

static void leaks_at_exit(void)
{
    if (nn_check_on(NN_CHECK_LEAKCHECK))
        report_unreported("at exit (no aclFinalize after it was made)");
}

__attribute__((constructor)) static void register_exit_hook(void)
{
    nn_check_at_exit(leaks_at_exit);
}
