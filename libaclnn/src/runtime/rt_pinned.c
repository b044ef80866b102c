/*
 * rt_pinned.c - aclrtMallocHost blocks that queued asynchronous copies read or write
 * (nn_rt_internal.h).  A block aclrtFreeHost frees while such a copy has not run leaves
 * memory.c's registry at once (a second free is refused) and its memory is released by the last
 * of those copies: the stream's worker would otherwise copy through freed memory, unmapped for
 * large blocks (a SIGSEGV inside the library).  The checking mode reports the free
 * (docs/checking.md, "Memory freed under a queued task").
 *
 * Lock order: memory.c's registry lock, then g_pinned_lock.
 */
#include <stdlib.h>

#include "runtime/nn_rt_internal.h"

typedef struct pinned_use {
    uintptr_t base;         /* the block */
    size_t copies;          /* queued copies not yet run or dropped */
    bool free_owed;         /* aclrtFreeHost came first: free() when copies reaches 0 */
    nn_check_trace queued;  /* the newest such copy's stack (checking mode only) */
} pinned_use;

static pthread_mutex_t g_pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static pinned_use *g_uses; /* few: the blocks with copies in flight */
static size_t g_num_uses, g_cap_uses;

static pinned_use *use_of_locked(uintptr_t base)
{
    for (size_t i = 0; i < g_num_uses; ++i)
        if (g_uses[i].base == base)
            return &g_uses[i];
    return NULL;
}

bool nn_pinned_copy_begin(uintptr_t base)
{
    pthread_mutex_lock(&g_pinned_lock);
    pinned_use *use = use_of_locked(base);
    if (use == NULL) {
        const pinned_use fresh = {base, 0, false, {{0}, 0}};
        pinned_use *grown = nn_sorted_insert(g_uses, &g_num_uses, &g_cap_uses, 8, sizeof fresh,
                                             g_num_uses, &fresh); /* (appended: order is not used) */
        if (grown != NULL) {
            g_uses = grown;
            use = &g_uses[g_num_uses - 1];
        }
    }
    if (use != NULL) {
        ++use->copies;
        if (nn_check_on(NN_CHECK_ALL))
            nn_check_capture(&use->queued);
    }
    pthread_mutex_unlock(&g_pinned_lock);
    return use != NULL;
}

void nn_pinned_copy_end(uintptr_t base)
{
    if (base == 0)
        return;
    void *release_now = NULL;
    pthread_mutex_lock(&g_pinned_lock);
    pinned_use *use = use_of_locked(base);
    if (use != NULL && --use->copies == 0) {
        if (use->free_owed)
            release_now = (void *)use->base;
        *use = g_uses[--g_num_uses];
    }
    pthread_mutex_unlock(&g_pinned_lock);
    if (release_now != NULL)
        nn_mem_release_host(release_now);
}

bool nn_pinned_owe_free(uintptr_t base, nn_check_trace *queued)
{
    pthread_mutex_lock(&g_pinned_lock);
    pinned_use *use = use_of_locked(base);
    if (use != NULL) {
        use->free_owed = true;
        *queued = use->queued;
    }
    pthread_mutex_unlock(&g_pinned_lock);
    return use != NULL;
}

void nn_pinned_report_free(const char *api, void *base, size_t size, const nn_check_trace *queued)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK | NN_CHECK_RACECHECK))
        return;
    nn_check_trace here;
    nn_check_capture(&here);
    nn_check_report *report = nn_check_begin(
        NN_CHECK_ERROR, nn_check_on(NN_CHECK_RACECHECK) ? NN_CHECK_RACECHECK : NN_CHECK_MEMCHECK,
        "aclrtFreeHost frees pinned memory a queued copy still uses");
    nn_check_line(report, "call:", "%s frees the %zu-byte aclrtMallocHost block at %p, at:", api, size, base);
    nn_check_trace_lines(report, &here);
    nn_check_line(report, "other:", "an asynchronous copy that reads or writes it, not run yet, queued at:");
    nn_check_trace_lines(report, queued);
    nn_check_line(report, "advice:", "wait for the copy first (aclrtSynchronizeStream on its stream, or "
                  "aclrtSynchronizeEvent on an event recorded after it): on a card the copy reads or "
                  "writes freed host memory; here the memory is released when the copy has run");
    nn_check_end(report);
}
