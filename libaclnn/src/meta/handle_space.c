/*
 * handle_space.c - memory for meta objects (aclTensor, arrays, scalars, lists) at addresses that
 * are never handed out twice (design decision 20).
 *
 * A program holds these objects by address, and every entry point looks the address up in the
 * registry of live handles (handles.c).  With malloc, a destroyed tensor's address came back
 * for the next object, and a stale pointer - a second aclDestroyTensor, a tensor destroyed
 * before the executor that uses it - named that other, live object.  Here objects are carved
 * in increasing order from reserved ranges of the address space and no address is used again:
 * a stale pointer stays dead.
 *
 * The memory itself is given back: each 4 KiB page counts its live objects, and a page the
 * carving has passed whose count drops to zero is released to the system (MADV_DONTNEED; the
 * address range stays reserved).  An object never straddles two pages.  Ranges are 1 GiB of
 * address space, reserved without committing memory; a used-up range is followed by a new one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "meta/nn_meta.h"

#define RANGE_BYTES ((size_t)1 << 30)
#define PAGE_BYTES ((size_t)4096)
#define PAGES_PER_RANGE (RANGE_BYTES / PAGE_BYTES)
#define ALIGN 16u

typedef struct space_range {
    uintptr_t base;
    uint32_t *live; /* live objects per page */
} space_range;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static space_range *g_ranges; /* every range ever reserved; the last is being carved */
static size_t g_num_ranges;
static uintptr_t g_next, g_end; /* the carving position in the last range */

/* Under g_lock: the range holding `address`, or NULL. */
static space_range *range_of_locked(uintptr_t address)
{
    for (size_t i = g_num_ranges; i-- > 0;)
        if (address - g_ranges[i].base < RANGE_BYTES)
            return &g_ranges[i];
    return NULL;
}

/* Under g_lock: releases the page at `page_address` if nothing lives there and the carving is
 * not in it (objects may still come there). */
static void release_if_empty_locked(space_range *range, uintptr_t page_address)
{
    const size_t page = (page_address - range->base) / PAGE_BYTES;
    const bool carving_here = g_next >= page_address && g_next < page_address + PAGE_BYTES;
    if (range->live[page] == 0 && !carving_here)
        (void)madvise((void *)page_address, PAGE_BYTES, MADV_DONTNEED);
}

/* Under g_lock: moves the carving to `next`, releasing the page it leaves if that is empty.  A
 * carving at the range's very end (a used-up range, about to be followed by a new one) is in no
 * page of it: its last page was left, and released, when the carving reached the end. */
static void carve_to_locked(uintptr_t next)
{
    const uintptr_t left = g_next / PAGE_BYTES * PAGE_BYTES;
    g_next = next;
    if (g_num_ranges > 0 && left - g_ranges[g_num_ranges - 1].base < RANGE_BYTES)
        release_if_empty_locked(&g_ranges[g_num_ranges - 1], left);
}

/* Under g_lock: a new range to carve from; false when none can be reserved. */
static bool new_range_locked(void)
{
    if (g_num_ranges > 0)
        carve_to_locked(g_end); /* leaves the old range's last page */
    void *base = mmap(NULL, RANGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return false;
    uint32_t *live = calloc(PAGES_PER_RANGE, sizeof *live);
    space_range *grown = live != NULL ? realloc(g_ranges, (g_num_ranges + 1) * sizeof *grown) : NULL;
    if (grown == NULL) {
        free(live);
        munmap(base, RANGE_BYTES);
        return false;
    }
    g_ranges = grown;
    g_ranges[g_num_ranges++] = (space_range){(uintptr_t)base, live};
    g_next = (uintptr_t)base;
    g_end = g_next + RANGE_BYTES;
    return true;
}

void *nn_handle_alloc(size_t size)
{
    if (size == 0 || size > PAGE_BYTES)
        return NULL;
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    pthread_mutex_lock(&g_lock);
    const uintptr_t page_end = (g_next / PAGE_BYTES + 1) * PAGE_BYTES;
    if (g_next != 0 && g_next + size > page_end)
        carve_to_locked(page_end); /* the object would straddle: the rest of this page stays unused */
    void *object = NULL;
    if ((g_next != 0 && g_next + size <= g_end) || new_range_locked()) {
        space_range *range = &g_ranges[g_num_ranges - 1];
        object = (void *)g_next;
        range->live[(g_next - range->base) / PAGE_BYTES]++;
        carve_to_locked(g_next + size);
    }
    pthread_mutex_unlock(&g_lock);
    return object; /* zeroed: memory of a private anonymous mapping that was never used */
}

void nn_handle_free(void *object)
{
    if (object == NULL)
        return;
    const uintptr_t address = (uintptr_t)object;
    pthread_mutex_lock(&g_lock);
    space_range *range = range_of_locked(address);
    if (range != NULL) {
        const size_t page = (address - range->base) / PAGE_BYTES;
        if (range->live[page] > 0 && --range->live[page] == 0)
            release_if_empty_locked(range, range->base + page * PAGE_BYTES);
    }
    pthread_mutex_unlock(&g_lock);
}
