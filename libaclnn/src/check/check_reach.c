/*
 * check_reach.c - memcheck's queued launches on host memory the runtime maps for the device
 * (nn_check.h; docs/checking.md, "Launch ranges").
 *
 * An operator may read and write aclrtHostRegister'd host memory and aclrtMapMem mappings: the
 * runtime knows them as memory the device reaches, memcheck does not hold them as allocations.
 * aclrtHostUnregister or aclrtUnmapMem of such memory while a launch that uses it is queued
 * takes it away from a kernel that has not run: on a card the kernel reads an unmapped address
 * (or faults); here an unmapped mapping is a bare reservation, and the worker died with SIGSEGV.
 * So each queued launch that uses such memory records its ranges, its operator and the stack
 * of the launch (nn_check_reach_hold), until it has run (nn_check_reach_release); the release
 * calls (nn_check_reach_released) report a range a queued launch still reaches and then wait for
 * those launches, as a freed device allocation waits for its tasks (check_mem.c).
 *
 * Such launches are rare (device memory is the rule), so the holds are a list under the
 * allocation registry's lock, and a launch on device memory only costs the lookups it makes.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "check/check_internal.h"

/* How long a release waits for the launches before it goes on (a launch that never runs: a
 * stream stuck on an event nobody records). */
#define RELEASE_WAIT_SECONDS 30

typedef struct reach_range {
    uintptr_t start, end;
    const char *name; /* the operand's name in CANN's prototype, or NULL */
    int operand;
} reach_range;

typedef struct reach_hold {
    struct reach_hold *prev, *next;
    const char *op_name;
    nn_check_trace queued; /* the launch's caller */
    int count;
    reach_range ranges[];
} reach_hold;

static reach_hold *g_holds; /* under the registry's lock */
static pthread_cond_t g_released = PTHREAD_COND_INITIALIZER;

void *nn_check_reach_hold(const char *op_name, const char *const *names, const void *const *starts,
                          const size_t *lengths, int count)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK) || count <= 0)
        return NULL;
    reach_hold *hold = malloc(sizeof *hold + (size_t)count * sizeof hold->ranges[0]);
    if (hold == NULL)
        return NULL; /* the launch runs unguarded, as before */
    hold->count = 0;
    nn_check_alloc_lock();
    for (int i = 0; i < count; ++i)
        if (starts[i] != NULL && lengths[i] > 0 && nn_check_alloc_find_locked(starts[i]) == NULL &&
            nn_check_freed_find_locked(starts[i]) == NULL)
            hold->ranges[hold->count++] =
                (reach_range){(uintptr_t)starts[i], (uintptr_t)starts[i] + lengths[i], names[i], i};
    if (hold->count > 0) {
        hold->op_name = op_name;
        nn_check_capture(&hold->queued);
        hold->prev = NULL;
        hold->next = g_holds;
        if (g_holds != NULL)
            g_holds->prev = hold;
        g_holds = hold;
    }
    nn_check_alloc_unlock();
    if (hold->count == 0) {
        free(hold);
        return NULL;
    }
    return hold;
}

void nn_check_reach_release(void *held)
{
    reach_hold *hold = held;
    if (hold == NULL)
        return;
    nn_check_alloc_lock();
    if (hold->prev != NULL)
        hold->prev->next = hold->next;
    else
        g_holds = hold->next;
    if (hold->next != NULL)
        hold->next->prev = hold->prev;
    pthread_cond_broadcast(&g_released);
    nn_check_alloc_unlock();
    free(hold);
}

/* The first queued launch's range that overlaps [start, end), or NULL (and *holder). */
static const reach_range *overlapping_locked(uintptr_t start, uintptr_t end, const reach_hold **holder)
{
    for (const reach_hold *hold = g_holds; hold != NULL; hold = hold->next)
        for (int i = 0; i < hold->count; ++i)
            if (hold->ranges[i].start < end && start < hold->ranges[i].end) {
                *holder = hold;
                return &hold->ranges[i];
            }
    return NULL;
}

static void report_release(const char *api, const void *start, size_t length, const reach_hold *hold,
                           const reach_range *range)
{
    nn_check_trace here;
    nn_check_capture(&here);
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             "memory released while a queued launch still reaches it");
    nn_check_line(report, "call:", "%s of [%p, +%zu bytes), at:", api, start, length);
    nn_check_trace_lines(report, &here);
    nn_check_line(report, "other:", "%s, operand %d (%s) at [%p, +%zu bytes), queued (not run yet) at:",
                  hold->op_name, range->operand, range->name != NULL ? range->name : "unnamed",
                  (void *)range->start, (size_t)(range->end - range->start));
    nn_check_trace_lines(report, &hold->queued);
    nn_check_line(report, "advice:", "wait for the launch (aclrtSynchronizeStream) before %s: it does not "
                  "wait, so on a card the kernel reaches memory that is no longer mapped for the device; "
                  "here the call waits for the launch", api);
    nn_check_end(report);
}

void nn_check_reach_released(const char *api, const void *start, size_t length)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK) || start == NULL || length == 0)
        return;
    const uintptr_t lo = (uintptr_t)start, hi = lo + length;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += RELEASE_WAIT_SECONDS;
    nn_check_alloc_lock();
    const reach_hold *hold = NULL;
    const reach_range *range = overlapping_locked(lo, hi, &hold);
    if (range != NULL)
        report_release(api, start, length, hold, range);
    while (range != NULL && nn_check_alloc_wait(&g_released, &deadline) != ETIMEDOUT)
        range = overlapping_locked(lo, hi, &hold);
    nn_check_alloc_unlock();
}
