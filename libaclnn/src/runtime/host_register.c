/*
 * host_register.c - aclrtHostRegister / aclrtHostUnregister: host memory the device may use.
 *
 * On an NPU, registering maps host pages into the device's address space and returns the
 * device address.  Here the device shares the host's address space, so the device address is
 * the host address; what registering changes is that ACLNN_STRICT=1 accepts tensors in the
 * range (nn_mem_find asks nn_host_mapped_contains), as a real device could reach them.
 *
 * CANN's rules are kept: ptr must be 4 KiB aligned, size non-zero, the type MAPPED, and a range
 * that overlaps one already registered is refused with ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
 * unregistering a ptr that no registration starts at gives ACL_ERROR_HOST_MEMORY_NOT_REGISTERED.
 * Registrations are few and short-lived (pyaclnn registers an operator call's inputs for the
 * call), so they live in a small array sorted by start, searched by bisection.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"

#define HOST_PAGE_BYTES ((uintptr_t)4096)

typedef struct mapped_range {
    uintptr_t start; /* first: the sort key (nn_sorted_*) */
    uintptr_t end;   /* one past the last byte */
} mapped_range;

static pthread_mutex_t g_mapped_lock = PTHREAD_MUTEX_INITIALIZER;
static mapped_range *g_mapped; /* sorted by start, never overlapping */
static size_t g_num_mapped;
static size_t g_cap_mapped;

/* Index of the first range whose start is > addr (under g_mapped_lock). */
static size_t first_after(uintptr_t addr)
{
    return nn_sorted_upper_bound(g_mapped, g_num_mapped, sizeof *g_mapped, addr);
}

static bool overlaps_locked(uintptr_t start, uintptr_t end, size_t pos)
{
    if (pos > 0 && g_mapped[pos - 1].end > start)
        return true;
    return pos < g_num_mapped && g_mapped[pos].start < end;
}

static bool insert_locked(mapped_range range, size_t pos)
{
    mapped_range *ranges = nn_sorted_insert(g_mapped, &g_num_mapped, &g_cap_mapped, 16, sizeof *g_mapped, pos, &range);
    if (ranges == NULL)
        return false;
    g_mapped = ranges;
    return true;
}

ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type,
                                               void **devPtr)
{
    static const char api[] = "aclrtHostRegister";
    if (ptr == NULL || devPtr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           ptr == NULL ? "ptr" : "devPtr");
    if (size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: size must be greater than 0, got 0.", api);
    if (type != ACL_HOST_REGISTER_MAPPED)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: type must be ACL_HOST_REGISTER_MAPPED (0), got %d.", api, (int)type);
    const uintptr_t start = (uintptr_t)ptr;
    if (start % HOST_PAGE_BYTES != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: ptr %p must be aligned to a 4 KiB page.", api, ptr);
    if (size > UINTPTR_MAX - start)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: ptr %p + size %llu runs past the end of the address space.", api,
                           ptr, (unsigned long long)size);
    const mapped_range range = {start, start + (uintptr_t)size};
    pthread_mutex_lock(&g_mapped_lock);
    const size_t pos = first_after(start);
    aclError code = ACL_SUCCESS;
    if (overlaps_locked(range.start, range.end, pos))
        code = nn_rt_error(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                           "%s: [%p, +%llu) overlaps host memory that is already registered.", api,
                           ptr, (unsigned long long)size);
    else if (!insert_locked(range, pos))
        code = nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    pthread_mutex_unlock(&g_mapped_lock);
    if (code == ACL_SUCCESS)
        *devPtr = ptr;
    return code;
}

ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void *ptr)
{
    if (ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtHostUnregister: ptr must not be null.");
    const uintptr_t start = (uintptr_t)ptr;
    pthread_mutex_lock(&g_mapped_lock);
    size_t pos = first_after(start);
    const uintptr_t end = pos > 0 && g_mapped[pos - 1].start == start ? g_mapped[pos - 1].end : start;
    pthread_mutex_unlock(&g_mapped_lock);
    /* checking: a launch still queued on the range is reported and waited for */
    nn_check_reach_released("aclrtHostUnregister", ptr, (size_t)(end - start));
    pthread_mutex_lock(&g_mapped_lock);
    pos = first_after(start);
    const bool found = pos > 0 && g_mapped[pos - 1].start == start;
    if (found)
        nn_sorted_remove(g_mapped, &g_num_mapped, sizeof *g_mapped, pos - 1);
    pthread_mutex_unlock(&g_mapped_lock);
    if (!found)
        return nn_rt_error(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
                           "aclrtHostUnregister: no registration starts at %p.", ptr);
    return ACL_SUCCESS;
}

bool nn_host_mapped_contains(const void *ptr, size_t len)
{
    const uintptr_t start = (uintptr_t)ptr;
    if (ptr == NULL || len > UINTPTR_MAX - start)
        return false;
    pthread_mutex_lock(&g_mapped_lock);
    const size_t pos = first_after(start);
    const bool inside = pos > 0 && start + len <= g_mapped[pos - 1].end &&
                        (start < g_mapped[pos - 1].end || len == 0);
    pthread_mutex_unlock(&g_mapped_lock);
    return inside;
}
