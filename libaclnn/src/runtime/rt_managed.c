/*
 * rt_managed.c - managed (unified) memory: aclrtMemAllocManaged, aclrtMemManagedAdvise,
 * aclrtMemManagedGetAttr(s), aclrtMemManagedPrefetchAsync / PrefetchBatchAsync.
 *
 * On a CPU every byte is where both the host and the device reach it, so managed memory is a
 * device allocation the program may also touch directly: plain heap memory, 2 MiB aligned and
 * sized as CANN rounds it, recorded in memory.c's registry (copies, operators, aclrtFree) and
 * never made inaccessible by ACLNN_CHECK's memcheck.  Nothing migrates: advice and prefetches
 * are checked as CANN checks them and recorded per 2 MiB page, so that GetAttr answers what
 * was advised and where the range was last prefetched, with CANN's rules for mixed ranges
 * (runtime:docs/zh/api_ref/25-02_Enumerations.md, aclrtMemManagedRangeAttribute).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define MANAGED_PAGE ((size_t)2 << 20)
#define MANAGED_MAX ((uint64_t)3 << 40) /* CANN: at most 3 TB of managed memory per process */
#define ID_NONE (-2)                    /* CANN's "no single location" */
#define ID_HOST (-1)

typedef struct managed_page {
    bool read_mostly;
    aclrtMemManagedLocation preferred;     /* type INVALID: none advised */
    aclrtMemManagedLocation last_prefetch; /* type INVALID: never prefetched */
    uint64_t accessed_by_devices;          /* bit d: device d */
    bool accessed_by_host;
} managed_page;

typedef struct managed_range {
    uintptr_t base;
    size_t size;
    managed_page *pages;
} managed_range;

static pthread_mutex_t g_managed_lock = PTHREAD_MUTEX_INITIALIZER;
static managed_range *g_ranges;
static size_t g_num_ranges, g_cap_ranges;

/* ---- the ranges (under g_managed_lock) ------------------------------------------------------ */

static managed_range *range_containing_locked(const void *ptr, size_t size)
{
    const uintptr_t addr = (uintptr_t)ptr;
    for (size_t i = 0; i < g_num_ranges; i++)
        if (addr - g_ranges[i].base < g_ranges[i].size && size <= g_ranges[i].base + g_ranges[i].size - addr)
            return &g_ranges[i];
    return NULL;
}

static bool add_range_locked(uintptr_t base, size_t size, managed_page *pages)
{
    if (g_num_ranges == g_cap_ranges) {
        size_t capacity = g_cap_ranges ? 2 * g_cap_ranges : 8;
        managed_range *grown = realloc(g_ranges, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        g_ranges = grown;
        g_cap_ranges = capacity;
    }
    g_ranges[g_num_ranges++] = (managed_range){base, size, pages};
    return true;
}

bool nn_managed_forget(const void *base)
{
    bool found = false;
    pthread_mutex_lock(&g_managed_lock);
    for (size_t i = 0; i < g_num_ranges && !found; i++) {
        if (g_ranges[i].base == (uintptr_t)base) {
            free(g_ranges[i].pages);
            g_ranges[i] = g_ranges[--g_num_ranges];
            found = true;
        }
    }
    pthread_mutex_unlock(&g_managed_lock);
    return found;
}

bool nn_managed_contains(const void *ptr)
{
    pthread_mutex_lock(&g_managed_lock);
    bool found = range_containing_locked(ptr, 1) != NULL;
    pthread_mutex_unlock(&g_managed_lock);
    return found;
}

void nn_managed_finalize(void)
{
    pthread_mutex_lock(&g_managed_lock);
    for (size_t i = 0; i < g_num_ranges; i++)
        free(g_ranges[i].pages);
    free(g_ranges);
    g_ranges = NULL;
    g_num_ranges = g_cap_ranges = 0;
    pthread_mutex_unlock(&g_managed_lock);
}

/* CANN documents managed memory on Atlas A2 and A3 (Ascend910B, Ascend910_93) only; elsewhere its
 * driver answers "not supported" once the acl layer's checks passed. */
static aclError require_managed(const char *api)
{
    const nn_soc soc = nn_soc_current();
    if (soc == NN_SOC_ASCEND910B || soc == NN_SOC_ASCEND910_93)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the selected product (%s) has no managed memory "
                       "(CANN offers it on Ascend910B and Ascend910_93).", api, nn_soc_family_name(soc));
}

aclError nn_rt_require_device(const char *api)
{
    pthread_mutex_lock(&nn_rt_lock);
    const bool have = nn_rt_current_context_locked() != NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    if (!have)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread; call aclrtSetDevice "
                           "first.", api);
    return ACL_SUCCESS;
}

/* ---- allocation ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag)
{
    const char *api = "aclrtMemAllocManaged";
    if (ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: ptr must not be null.", api);
    if (flag != ACL_RT_MEM_ATTACH_GLOBAL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flag must be ACL_RT_MEM_ATTACH_GLOBAL (1), got %u.", api,
                           flag);
    aclError ret = require_managed(api);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_require_device(api);
    if (ret != ACL_SUCCESS)
        return ret;
    if (size == 0 || size > MANAGED_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size must be in (0, 3 TB], got %llu.", api,
                           (unsigned long long)size);
    const size_t rounded = (size_t)((size + MANAGED_PAGE - 1) / MANAGED_PAGE * MANAGED_PAGE);
    managed_page *pages = calloc(rounded / MANAGED_PAGE, sizeof *pages);
    void *memory = NULL;
    if (pages == NULL || posix_memalign(&memory, MANAGED_PAGE, rounded) != 0) {
        free(pages);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory allocating %zu bytes.", api, rounded);
    }
    (void)madvise(memory, rounded, MADV_HUGEPAGE);
    pthread_mutex_lock(&g_managed_lock);
    bool ok = add_range_locked((uintptr_t)memory, rounded, pages);
    pthread_mutex_unlock(&g_managed_lock);
    if (ok && !nn_mem_register_managed(memory, rounded)) {
        nn_managed_forget(memory); /* (frees pages) */
        pages = NULL;
        ok = false;
    }
    if (!ok) {
        free(pages);
        free(memory);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    nn_mem_usage_add(NN_MEM_USE_MANAGED, rounded);
    *ptr = memory;
    return ACL_SUCCESS;
}

/* ---- locations ------------------------------------------------------------------------------- */

/* The NUMA node the calling thread runs on (ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT). */
static int32_t current_numa_node(void)
{
    unsigned cpu = 0, node = 0;
    return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int32_t)node : 0;
}

/* A location as CANN checks it (a device id must name a device) and as it is recorded (the
 * current NUMA node resolved). */
static aclError check_location(const char *api, const char *param, aclrtMemManagedLocation *location)
{
    if ((int)location->type < ACL_MEM_LOCATIONTYPE_INVALID ||
        (int)location->type > ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.type must be an aclrtMemManagedLocationType in [0, "
                           "4], got %d.", api, param, (int)location->type);
    const int32_t devices = (int32_t)nn_rt_device_count();
    if (location->type == ACL_MEM_LOCATIONTYPE_DEVICE && (location->id < 0 || location->id >= devices))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.id %d is not a device id in [0, %d].", api, param,
                           (int)location->id, (int)devices - 1);
    if (location->type == ACL_MEM_LOCATIONTYPE_HOST_NUMA && location->id < 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.id %d is not a NUMA node.", api, param,
                           (int)location->id);
    if (location->type == ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT) {
        location->type = ACL_MEM_LOCATIONTYPE_HOST_NUMA;
        location->id = current_numa_node();
    }
    return ACL_SUCCESS;
}

static bool same_location(aclrtMemManagedLocation a, aclrtMemManagedLocation b)
{
    return a.type == b.type && (a.type == ACL_MEM_LOCATIONTYPE_HOST || a.id == b.id);
}

/* The managed range holding [ptr, ptr+size) and its pages, or 107000 naming `api`. */
static aclError find_pages(const char *api, const void *ptr, size_t size, managed_range **range,
                           size_t *first, size_t *last)
{
    *range = range_containing_locked(ptr, size);
    if (*range == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: ptr %p + size %zu is not inside memory from "
                           "aclrtMemAllocManaged.", api, ptr, size);
    *first = ((uintptr_t)ptr - (*range)->base) / MANAGED_PAGE;
    *last = ((uintptr_t)ptr + size - 1 - (*range)->base) / MANAGED_PAGE;
    return ACL_SUCCESS;
}

/* ---- advice ---------------------------------------------------------------------------------- */

static void advise_page(managed_page *page, aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location)
{
    const bool set = advise == ACL_MEM_ADVISE_SET_ACCESSED_BY;
    switch (advise) {
    case ACL_MEM_ADVISE_SET_READ_MOSTLY:
    case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
        page->read_mostly = advise == ACL_MEM_ADVISE_SET_READ_MOSTLY;
        break;
    case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
        page->preferred = location;
        break;
    case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        page->preferred = (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_INVALID, 0};
        break;
    default: /* SET / UNSET_ACCESSED_BY */
        if (location.type == ACL_MEM_LOCATIONTYPE_HOST)
            page->accessed_by_host = set;
        else if (set)
            page->accessed_by_devices |= UINT64_C(1) << location.id;
        else
            page->accessed_by_devices &= ~(UINT64_C(1) << location.id);
        break;
    }
}

/* What each advice needs of its location: preferred locations and accessed-by a real one
 * (accessed-by: a device or the host). */
static aclError check_advice_location(const char *api, aclrtMemManagedAdviseType advise,
                                      aclrtMemManagedLocation location)
{
    if (advise == ACL_MEM_ADVISE_SET_PREFERRED_LOCATION && location.type == ACL_MEM_LOCATIONTYPE_INVALID)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: location.type must name a location for "
                           "ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, got ACL_MEM_LOCATIONTYPE_INVALID.", api);
    if ((advise == ACL_MEM_ADVISE_SET_ACCESSED_BY || advise == ACL_MEM_ADVISE_UNSET_ACCESSED_BY) &&
        location.type != ACL_MEM_LOCATIONTYPE_DEVICE && location.type != ACL_MEM_LOCATIONTYPE_HOST)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: location.type must be ACL_MEM_LOCATIONTYPE_DEVICE or "
                           "ACL_MEM_LOCATIONTYPE_HOST for an accessed-by advice, got %d.", api, (int)location.type);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size,
                                                   aclrtMemManagedAdviseType advise,
                                                   aclrtMemManagedLocation location)
{
    const char *api = "aclrtMemManagedAdvise";
    if (ptr == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           ptr == NULL ? "ptr must not be null" : "size must be positive, got 0");
    if (require_managed(api) != ACL_SUCCESS)
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    if ((unsigned)advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: advise must be an aclrtMemManagedAdviseType in [0, 5], "
                           "got %d.", api, (int)advise);
    if (size % MANAGED_PAGE != 0 || size > MANAGED_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size must be a multiple of 2 MiB in (0, 3 TB], got "
                           "%llu.", api, (unsigned long long)size);
    aclError ret = check_location(api, "location", &location);
    if (ret == ACL_SUCCESS)
        ret = check_advice_location(api, advise, location);
    if (ret != ACL_SUCCESS)
        return ret;
    managed_range *range = NULL;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&g_managed_lock);
    ret = find_pages(api, ptr, (size_t)size, &range, &first, &last);
    for (size_t p = first; ret == ACL_SUCCESS && p <= last; p++)
        advise_page(&range->pages[p], advise, location);
    pthread_mutex_unlock(&g_managed_lock);
    return ret;
}

/* ---- attributes ------------------------------------------------------------------------------ */

/* The location every page of [first, last] shares (`prefetch`: the last prefetch's, else the
 * preferred one), or type INVALID when they differ or none is recorded. */
static aclrtMemManagedLocation common_location(const managed_range *range, size_t first, size_t last,
                                               bool prefetch)
{
    const aclrtMemManagedLocation none = {ACL_MEM_LOCATIONTYPE_INVALID, ID_NONE};
    aclrtMemManagedLocation common = prefetch ? range->pages[first].last_prefetch : range->pages[first].preferred;
    for (size_t p = first + 1; p <= last; p++)
        if (!same_location(common, prefetch ? range->pages[p].last_prefetch : range->pages[p].preferred))
            return none;
    return common.type == ACL_MEM_LOCATIONTYPE_INVALID ? none : common;
}

/* CANN's integer answer for a location: a device or NUMA node's id, -1 for the host, else -2. */
static int32_t location_number(aclrtMemManagedLocation location)
{
    if (location.type == ACL_MEM_LOCATIONTYPE_HOST)
        return ID_HOST;
    return location.type == ACL_MEM_LOCATIONTYPE_INVALID ? ID_NONE : location.id;
}

/* ACCESSED_BY: the host (-1) and the devices advised for every page, then -2 to the end. */
static void accessed_by(const managed_range *range, size_t first, size_t last, int32_t *out, size_t count)
{
    uint64_t devices = UINT64_MAX;
    bool host = true;
    for (size_t p = first; p <= last; p++) {
        devices &= range->pages[p].accessed_by_devices;
        host = host && range->pages[p].accessed_by_host;
    }
    size_t n = 0;
    if (host && n < count)
        out[n++] = ID_HOST;
    for (int32_t d = 0; d < 64 && n < count; d++)
        if (devices & (UINT64_C(1) << d))
            out[n++] = d;
    while (n < count)
        out[n++] = ID_NONE;
}

static aclError read_attr(const char *api, const managed_range *range, size_t first, size_t last,
                          aclrtMemManagedRangeAttribute attribute, void *data, size_t dataSize)
{
    const bool list = attribute == ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
    if (list ? dataSize == 0 || dataSize % 4 != 0 : dataSize != 4)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: dataSize must be %s for attribute %d, got %zu.", api,
                           list ? "a positive multiple of 4" : "4", (int)attribute, dataSize);
    const bool prefetch = attribute >= ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION;
    const aclrtMemManagedLocation where = common_location(range, first, last, prefetch);
    int32_t value = 0;
    switch (attribute) {
    case ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
        value = 1;
        for (size_t p = first; p <= last; p++)
            value = value && range->pages[p].read_mostly;
        break;
    case ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY:
        accessed_by(range, first, last, data, dataSize / 4);
        return ACL_SUCCESS;
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
        value = location_number(where);
        break;
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
        value = (int32_t)where.type;
        break;
    default: /* the _ID attributes: a device's or NUMA node's only */
        value = where.type == ACL_MEM_LOCATIONTYPE_HOST ? ID_NONE : location_number(where);
        break;
    }
    memcpy(data, &value, sizeof value);
    return ACL_SUCCESS;
}

static aclError check_attribute(const char *api, aclrtMemManagedRangeAttribute attribute)
{
    if ((int)attribute < ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY ||
        (int)attribute > ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: attribute must be an aclrtMemManagedRangeAttribute in "
                           "[1, 8], got %d.", api, (int)attribute);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void *ptr,
                                                    size_t size, void *data, size_t dataSize)
{
    const char *api = "aclrtMemManagedGetAttr";
    if (ptr == NULL || data == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, ptr == NULL ? "ptr must not be null"
                           : data == NULL ? "data must not be null" : "size must be positive, got 0");
    aclError ret = require_managed(api);
    if (ret == ACL_SUCCESS)
        ret = check_attribute(api, attribute);
    if (ret != ACL_SUCCESS)
        return ret;
    managed_range *range = NULL;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&g_managed_lock);
    ret = find_pages(api, ptr, size, &range, &first, &last);
    if (ret == ACL_SUCCESS)
        ret = read_attr(api, range, first, last, attribute, data, dataSize);
    pthread_mutex_unlock(&g_managed_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes, size_t numAttributes,
                                                     const void *ptr, size_t size, void **data, size_t *dataSizes)
{
    const char *api = "aclrtMemManagedGetAttrs";
    if (ptr == NULL || attributes == NULL || data == NULL || dataSizes == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, ptr == NULL ? "ptr"
                           : attributes == NULL ? "attributes" : data == NULL ? "data" : "dataSizes");
    if (size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: size must be positive, got 0.", api);
    aclError ret = require_managed(api);
    for (size_t i = 0; ret == ACL_SUCCESS && i < numAttributes; i++) {
        ret = check_attribute(api, attributes[i]);
        if (ret == ACL_SUCCESS && data[i] == NULL)
            ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: data[%zu] must not be null.", api, i);
    }
    managed_range *range = NULL;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&g_managed_lock);
    if (ret == ACL_SUCCESS)
        ret = find_pages(api, ptr, size, &range, &first, &last);
    for (size_t i = 0; ret == ACL_SUCCESS && i < numAttributes; i++)
        ret = read_attr(api, range, first, last, attributes[i], data[i], dataSizes[i]);
    pthread_mutex_unlock(&g_managed_lock);
    return ret;
}

/* ---- prefetches ------------------------------------------------------------------------------- */

/* Nothing moves on a CPU: a prefetch is checked and its location recorded at the call (CANN's
 * attribute reports the location asked for, "not whether the prefetch completed"). */
static aclError check_prefetch_range(const char *api, const void *ptr, size_t size)
{
    if (size % MANAGED_PAGE != 0 || size > MANAGED_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size must be a multiple of 2 MiB in (0, 3 TB], got "
                           "%zu.", api, size);
    managed_range *range = NULL;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&g_managed_lock);
    aclError ret = find_pages(api, ptr, size, &range, &first, &last);
    pthread_mutex_unlock(&g_managed_lock);
    return ret;
}

static void record_prefetch(const void *ptr, size_t size, aclrtMemManagedLocation location)
{
    managed_range *range = NULL;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&g_managed_lock);
    if (find_pages("", ptr, size, &range, &first, &last) == ACL_SUCCESS) /* (checked before) */
        for (size_t p = first; p <= last; p++)
            range->pages[p].last_prefetch = location;
    pthread_mutex_unlock(&g_managed_lock);
}

static aclError check_prefetch_location(const char *api, const char *param, aclrtMemManagedLocation *location)
{
    aclError ret = check_location(api, param, location);
    if (ret == ACL_SUCCESS && location->type == ACL_MEM_LOCATIONTYPE_INVALID)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.type must name a location, got "
                          "ACL_MEM_LOCATIONTYPE_INVALID.", api, param);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size,
                                                          aclrtMemManagedLocation location, uint32_t flags,
                                                          aclrtStream stream)
{
    const char *api = "aclrtMemManagedPrefetchAsync";
    if (ptr == NULL || size == 0 || flags != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, ptr == NULL ? "ptr must not be null"
                           : size == 0 ? "size must be positive, got 0" : "flags is reserved and must be 0");
    nn_stream *s;
    aclError ret = require_managed(api);
    if (ret == ACL_SUCCESS)
        ret = check_prefetch_location(api, "location", &location);
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS)
        ret = check_prefetch_range(api, ptr, size);
    if (ret == ACL_SUCCESS)
        record_prefetch(ptr, size, location);
    return ret;
}

/* CANN's checks of the batch's shape: prefetchLocIdxs starts at 0 and rises, each below count. */
static aclError check_batch_indices(const char *api, const size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                    size_t count)
{
    for (size_t k = 0; k < numPrefetchLocs; k++) {
        if (prefetchLocIdxs[k] >= count || (k == 0 && prefetchLocIdxs[k] != 0) ||
            (k > 0 && prefetchLocIdxs[k] <= prefetchLocIdxs[k - 1]))
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: prefetchLocIdxs[%zu] = %zu: the indices must start "
                               "at 0, rise, and stay below count %zu.", api, k, prefetchLocIdxs[k], count);
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes, size_t count,
                                                               aclrtMemManagedLocation *prefetchLocs,
                                                               size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                                               uint64_t flags, aclrtStream stream)
{
    const char *api = "aclrtMemManagedPrefetchBatchAsync";
    if (ptrs == NULL || sizes == NULL || prefetchLocs == NULL || prefetchLocIdxs == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, ptrs == NULL ? "ptrs"
                           : sizes == NULL ? "sizes" : prefetchLocs == NULL ? "prefetchLocs" : "prefetchLocIdxs");
    if (count == 0 || numPrefetchLocs == 0 || flags != 0 || count < numPrefetchLocs)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, count == 0 ? "count must be positive"
                           : numPrefetchLocs == 0 ? "numPrefetchLocs must be positive"
                           : flags != 0 ? "flags is reserved and must be 0"
                                        : "count must be greater than or equal to numPrefetchLocs");
    aclError ret = require_managed(api);
    if (ret == ACL_SUCCESS)
        ret = check_batch_indices(api, prefetchLocIdxs, numPrefetchLocs, count);
    for (size_t i = 0; ret == ACL_SUCCESS && i < count; i++)
        if (ptrs[i] == NULL)
            ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: ptrs[%zu] must not be null.", api, i);
    aclrtMemManagedLocation *locations = calloc(numPrefetchLocs, sizeof *locations);
    if (ret == ACL_SUCCESS && locations == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    for (size_t k = 0; ret == ACL_SUCCESS && k < numPrefetchLocs; k++) {
        locations[k] = prefetchLocs[k];
        ret = check_prefetch_location(api, "prefetchLocs[]", &locations[k]);
    }
    nn_stream *s;
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    for (size_t i = 0; ret == ACL_SUCCESS && i < count; i++)
        ret = sizes[i] == 0 ? nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: sizes[%zu] must be positive.", api, i)
                            : check_prefetch_range(api, ptrs[i], sizes[i]);
    /* prefetchLocs[k] serves ptrs[prefetchLocIdxs[k]] up to the next entry's first */
    for (size_t k = 0, i = 0; ret == ACL_SUCCESS && k < numPrefetchLocs; k++)
        for (size_t end = k + 1 < numPrefetchLocs ? prefetchLocIdxs[k + 1] : count; i < end; i++)
            record_prefetch(ptrs[i], sizes[i], locations[k]);
    free(locations);
    return ret;
}
