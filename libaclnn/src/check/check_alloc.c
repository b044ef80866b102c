/*
 * check_alloc.c - the checking mode's registry of device allocations (nn_check.h): who made each
 * one and where, for reports, and a place for each tool's state about its bytes.
 *
 * Records live on the heap and the sorted array holds pointers to them, so a record found under
 * the lock does not move when others are added or removed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check/check_internal.h"

typedef struct alloc_slot {
    uintptr_t base; /* sort key */
    nn_check_alloc *alloc;
} alloc_slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static alloc_slot *g_slots;
static size_t g_count, g_capacity;
static uint64_t g_next_id = 1;

void nn_check_alloc_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

void nn_check_alloc_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

int nn_check_alloc_wait(pthread_cond_t *cond, const struct timespec *deadline)
{
    return pthread_cond_timedwait(cond, &g_lock, deadline);
}

bool nn_check_alloc_trylock(void)
{
    return pthread_mutex_trylock(&g_lock) == 0;
}

nn_check_alloc *nn_check_alloc_add(void *base, size_t size, const char *api, void *lib_base)
{
    nn_check_alloc *alloc = calloc(1, sizeof *alloc);
    if (alloc != NULL)
        alloc->pid = (int)getpid();
    if (alloc == NULL)
        return NULL;
    alloc->base = (uintptr_t)base;
    alloc->size = size;
    alloc->api = api;
    alloc->lib_base = lib_base;
    nn_check_capture(&alloc->where);

    alloc_slot slot = {alloc->base, alloc};
    pthread_mutex_lock(&g_lock);
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof slot, slot.base);
    alloc_slot *grown = nn_sorted_insert(g_slots, &g_count, &g_capacity, 64, sizeof slot, at, &slot);
    if (grown != NULL) {
        g_slots = grown;
        alloc->id = g_next_id++;
    }
    pthread_mutex_unlock(&g_lock);
    if (grown == NULL) {
        free(alloc);
        return NULL;
    }
    return alloc;
}

nn_check_alloc *nn_check_alloc_detach(void *base)
{
    pthread_mutex_lock(&g_lock);
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof(alloc_slot), (uintptr_t)base);
    nn_check_alloc *alloc = NULL;
    if (at > 0 && g_slots[at - 1].base == (uintptr_t)base) {
        alloc = g_slots[at - 1].alloc;
        nn_sorted_remove(g_slots, &g_count, sizeof(alloc_slot), at - 1);
        nn_check_race_forget_locked(alloc);
    }
    pthread_mutex_unlock(&g_lock);
    return alloc;
}

void nn_check_alloc_release(nn_check_alloc *alloc)
{
    if (alloc == NULL)
        return;
    nn_check_init_forget(alloc);
    free(alloc);
}

bool nn_check_alloc_remove(void *base)
{
    nn_check_alloc *alloc = nn_check_alloc_detach(base);
    nn_check_alloc_release(alloc);
    return alloc != NULL;
}

nn_check_alloc *nn_check_alloc_find_locked(const void *address)
{
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof(alloc_slot), (uintptr_t)address);
    if (at == 0)
        return NULL;
    nn_check_alloc *alloc = g_slots[at - 1].alloc;
    return (uintptr_t)address - alloc->base < alloc->size ? alloc : NULL;
}

nn_check_alloc *nn_check_alloc_find_mapped_locked(const void *address, size_t (*extent)(size_t size))
{
    size_t at = nn_sorted_upper_bound(g_slots, g_count, sizeof(alloc_slot), (uintptr_t)address);
    if (at == 0)
        return NULL;
    nn_check_alloc *alloc = g_slots[at - 1].alloc;
    return (uintptr_t)address - alloc->base < extent(alloc->size) ? alloc : NULL;
}

void nn_check_alloc_each_locked(void (*fn)(nn_check_alloc *alloc, void *ctx), void *ctx)
{
    for (size_t i = 0; i < g_count; ++i)
        fn(g_slots[i].alloc, ctx);
}

void nn_check_alloc_lines(nn_check_report *report, const char *label, const nn_check_alloc *alloc)
{
    nn_check_line(report, label, "allocation #%llu: %zu bytes at %p, from %s at:",
                  (unsigned long long)alloc->id, alloc->size, (void *)alloc->base, alloc->api);
    nn_check_trace_lines(report, &alloc->where);
}
