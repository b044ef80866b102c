/*
 * rt_mem_pool.c - stream-ordered memory pools (acl/acl_rt_memory_soma.h).
 *
 * A pool hands out device memory in 2 MiB blocks, as CANN's pools round every request
 * (runtime:src/runtime/feature/soma/stream_mem_pool.hpp, DEVICE_POOL_MIN_BLOCK_SIZE).  A block
 * is BUSY from aclrtMemPoolMallocAsync to aclrtMemPoolFreeAsync, FREEING from that call until its
 * stream reaches the free (a queued task), then CACHED: idle memory the pool keeps.
 *
 * Reuse never hands memory out twice while something can still reach it (docs/runtime.md):
 * a MallocAsync on stream S takes the best-fitting block whose free was queued on S (the
 * stream's order puts every later task of S after the free, as CANN's single-stream reuse does).
 * Another stream takes a block only after its free: opportunistic reuse once the free ran,
 * internal dependencies even while it is queued.  With either flag on, the free records a
 * private event right after it, and the taking stream waits for that event, which also shows
 * racecheck the order; a block freed with both flags off has no event, so racecheck turns its
 * opportunistic reuse off (it could not see that the free ran).  Event dependencies of the
 * program's own are not followed (the flag is kept and read back).
 *
 * Blocks are device memory for the rest of the runtime: registered with memory.c's allocation
 * registry (nn_mem_register_mapped: copies, pointer attributes and strict mode find them, and
 * aclrtFree refuses them) and, under ACLNN_CHECK, made by the checker (nn_check_device_alloc).
 * Idle memory beyond ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD is given back at the next stream or
 * device synchronize (nn_mem_pool_release_idle, called by nn_stream_wait), as CANN documents.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "acl/acl_rt_memory_soma.h"
#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define POOL_BLOCK_BYTES ((size_t)2 << 20)

/* BLOCK_QUEUING: between aclrtMemPoolFreeAsync's checks and its task being queued (taken by nobody,
 * released by nobody). */
typedef enum { BLOCK_BUSY, BLOCK_QUEUING, BLOCK_FREEING, BLOCK_CACHED } block_state;

typedef struct mem_pool mem_pool;

typedef struct pool_block {
    void *base;
    size_t size;           /* a multiple of POOL_BLOCK_BYTES */
    block_state state;
    const nn_stream *stream; /* of its MallocAsync while BUSY, of its FreeAsync after */
    aclrtEvent freed;        /* recorded on `stream` right after the free when cross-stream reuse is on */
    bool free_ran;           /* the free's task ran (while QUEUING: settled by the call) */
    uint64_t free_number;    /* counts its frees: a task acts only on its own */
    mem_pool *pool;
} pool_block;

struct mem_pool {
    size_t max_size;
    uint32_t reuse_event_dependencies, reuse_opportunistic, reuse_internal_dependencies;
    uint64_t release_threshold;
    uint64_t reserved, reserved_high, used, used_high;
    pool_block **blocks;
    size_t num_blocks, cap_blocks;
    bool destroyed; /* the handle is gone; the pool waits for its FREEING blocks */
};

static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_pools;          /* every pool, destroyed ones with FREEING blocks included */
static atomic_bool g_have_pools;   /* a synchronize skips the lock while no pool exists */
static bool g_finalizing;          /* aclFinalize released the events already */

/* ---- block memory --------------------------------------------------------------------------- */

static void *block_memory_new(size_t size)
{
    void *memory = NULL;
    if (nn_check_on(NN_CHECK_ALL)) {
        memory = nn_check_device_alloc("aclrtMemPoolMallocAsync", size);
    } else if (posix_memalign(&memory, POOL_BLOCK_BYTES, size) == 0) {
        (void)madvise(memory, size, MADV_HUGEPAGE); /* as memory.c places large device memory */
    } else {
        memory = NULL;
    }
    if (memory != NULL && !nn_mem_register_mapped(memory, size, "aclrtMemPoolMallocAsync", "aclrtMemPoolFreeAsync")) {
        if (nn_check_on(NN_CHECK_ALL))
            nn_check_device_free(memory);
        else
            free(memory);
        memory = NULL;
    }
    return memory;
}

static void block_memory_release(void *base, size_t size)
{
    nn_mem_unregister_mapped(base);
    nn_ipc_block_freed(base, size);
    if (nn_check_on(NN_CHECK_ALL))
        nn_check_device_free(base);
    else
        free(base);
}

/* ---- pools and blocks (under g_pool_lock) ------------------------------------------------------- */

static mem_pool *live_pool_locked(aclrtMemPool handle)
{
    mem_pool *pool = handle;
    return nn_ptrset_has(&g_pools, pool) && !pool->destroyed ? pool : NULL;
}

static bool add_block_locked(mem_pool *pool, pool_block *block)
{
    if (pool->num_blocks == pool->cap_blocks) {
        size_t capacity = pool->cap_blocks ? 2 * pool->cap_blocks : 8;
        pool_block **grown = realloc(pool->blocks, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        pool->blocks = grown;
        pool->cap_blocks = capacity;
    }
    pool->blocks[pool->num_blocks++] = block;
    pool->reserved += block->size;
    nn_mem_usage_add(NN_MEM_USE_POOL, block->size);
    if (pool->reserved > pool->reserved_high)
        pool->reserved_high = pool->reserved;
    return true;
}

static void release_block_at_locked(mem_pool *pool, size_t index)
{
    pool_block *block = pool->blocks[index];
    if (block->freed != NULL && !g_finalizing)
        (void)aclrtDestroyEvent(block->freed);
    pool->reserved -= block->size;
    nn_mem_usage_sub(NN_MEM_USE_POOL, block->size);
    pool->blocks[index] = pool->blocks[--pool->num_blocks];
    block_memory_release(block->base, block->size);
    free(block);
}

static void free_pool_locked(mem_pool *pool)
{
    while (pool->num_blocks > 0)
        release_block_at_locked(pool, pool->num_blocks - 1);
    nn_ptrset_remove(&g_pools, pool);
    atomic_store(&g_have_pools, g_pools.count > 0);
    free(pool->blocks);
    free(pool);
}

/* Gives CACHED blocks back, largest first, while more than `keep` bytes are reserved: whole
 * blocks, so the pool may end up to one block below `keep`. */
static void trim_cached_locked(mem_pool *pool, uint64_t keep)
{
    while (pool->reserved > keep) {
        size_t largest = SIZE_MAX;
        for (size_t i = 0; i < pool->num_blocks; i++)
            if (pool->blocks[i]->state == BLOCK_CACHED &&
                (largest == SIZE_MAX || pool->blocks[i]->size > pool->blocks[largest]->size))
                largest = i;
        if (largest == SIZE_MAX)
            return;
        release_block_at_locked(pool, largest);
    }
}

/* Another stream takes a block only after its free: opportunistic reuse when the free ran,
 * internal dependencies whether or not, by waiting for the event recorded after the free (which
 * also shows racecheck the order; without that event racecheck cannot see it, so no reuse). */
static bool reusable_by(const mem_pool *pool, const pool_block *block, const nn_stream *stream)
{
    if (block->state == BLOCK_BUSY || block->state == BLOCK_QUEUING)
        return false;
    if (block->stream == stream)
        return true;
    const bool opportunistic = block->state == BLOCK_CACHED && pool->reuse_opportunistic != 0;
    if (block->freed != NULL)
        return opportunistic || pool->reuse_internal_dependencies != 0;
    return opportunistic && !nn_check_on(NN_CHECK_RACECHECK);
}


/* The smallest block of at least `size` bytes that `stream` may reuse, or NULL. */
static pool_block *best_fit_locked(const mem_pool *pool, size_t size, const nn_stream *stream)
{
    pool_block *best = NULL;
    for (size_t i = 0; i < pool->num_blocks; i++) {
        pool_block *block = pool->blocks[i];
        if (block->size >= size && reusable_by(pool, block, stream) && (best == NULL || block->size < best->size))
            best = block;
    }
    return best;
}

/* `stream` takes `block` (its event, if any, now the caller's). */
static void take_locked(mem_pool *pool, pool_block *block, const nn_stream *stream)
{
    block->freed = NULL;
    block->state = BLOCK_BUSY;
    block->stream = stream;
    pool->used += block->size;
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
}

/* Undoes take_locked when the wait for the block's free could not be queued: the block is idle
 * again (its free ran or is queued on `freed_on`), without an event. */
static void give_back(pool_block *block, const nn_stream *freed_on)
{
    pthread_mutex_lock(&g_pool_lock);
    block->pool->used -= block->size;
    block->stream = freed_on;
    block->state = block->free_ran ? BLOCK_CACHED : BLOCK_FREEING;
    pthread_mutex_unlock(&g_pool_lock);
}

static aclError new_block_locked(const char *api, mem_pool *pool, size_t size, pool_block **out)
{
    if (size > pool->max_size - pool->reserved)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: the pool cannot grow by %zu bytes: it holds %llu of "
                           "its maxSize %zu (aclrtMemPoolTrimTo gives idle memory back).", api, size,
                           (unsigned long long)pool->reserved, pool->max_size);
    pool_block *block = calloc(1, sizeof *block);
    if (block != NULL)
        block->base = block_memory_new(size);
    if (block == NULL || block->base == NULL) {
        free(block);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory allocating %zu bytes.", api, size);
    }
    block->size = size;
    block->pool = pool;
    if (!add_block_locked(pool, block)) {
        block_memory_release(block->base, size);
        free(block);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *out = block;
    return ACL_SUCCESS;
}

/* The BUSY block that starts at ptr, or NULL; *inside tells whether ptr lies in any block. */
static pool_block *busy_block_at_locked(const void *ptr, bool *inside)
{
    *inside = false;
    for (size_t p = 0; p < g_pools.count; p++) {
        const mem_pool *pool = g_pools.items[p];
        for (size_t i = 0; i < pool->num_blocks; i++) {
            pool_block *block = pool->blocks[i];
            if ((uintptr_t)ptr - (uintptr_t)block->base >= block->size)
                continue;
            *inside = true;
            return block->base == ptr && block->state == BLOCK_BUSY ? block : NULL;
        }
    }
    return NULL;
}

/* ---- creation and destruction ---------------------------------------------------------------- */

static bool all_zero(const unsigned char *bytes, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != 0)
            return false;
    return true;
}

/* maxSize rounded up to whole blocks; 0 means all of the device's memory. */
static aclError pool_size(const char *api, size_t requested, size_t *out)
{
    size_t free_bytes = 0, total = 0;
    aclError ret = aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total);
    if (ret != ACL_SUCCESS)
        return ret;
    size_t size = requested == 0 ? total / POOL_BLOCK_BYTES * POOL_BLOCK_BYTES
                                 : (requested + POOL_BLOCK_BYTES - 1) / POOL_BLOCK_BYTES * POOL_BLOCK_BYTES;
    if (requested > SIZE_MAX - POOL_BLOCK_BYTES || size > total)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: poolProps->maxSize %zu bytes (%zu after 2 MiB "
                           "alignment) exceeds the device's %zu bytes of memory.", api, requested, size, total);
    *out = size;
    return ACL_SUCCESS;
}

static aclError check_props(const char *api, const aclrtMemPoolProps *props)
{
    if (props->allocType != ACL_MEM_ALLOCATION_TYPE_PINNED)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: poolProps->allocType must be "
                           "ACL_MEM_ALLOCATION_TYPE_PINNED (0), got %d.", api, (int)props->allocType);
    if (props->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: poolProps->location.type must be "
                           "ACL_MEM_LOCATION_TYPE_DEVICE (1), got %d.", api, (int)props->location.type);
    if (!all_zero(props->reserved, sizeof props->reserved))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: poolProps->reserved must be all zero.", api);
    if (props->location.id >= nn_rt_device_count())
        return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: poolProps->location.id %u is not a device (there "
                           "are %u).", api, props->location.id, nn_rt_device_count());
    if (props->handleType == ACL_MEM_HANDLE_TYPE_POSIX)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: poolProps->handleType "
                           "ACL_MEM_HANDLE_TYPE_POSIX (an IPC pool) is not supported by libaclnn: its pools are "
                           "not shared between processes.", api);
    if (props->handleType != ACL_MEM_HANDLE_TYPE_NONE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: poolProps->handleType must be an aclrtMemHandleType, "
                           "got %d.", api, (int)props->handleType);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemPoolCreate(aclrtMemPool *memPool, const aclrtMemPoolProps *poolProps)
{
    const char *api = "aclrtMemPoolCreate";
    if (memPool == NULL || poolProps == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           memPool == NULL ? "memPool" : "poolProps");
    aclError ret = check_props(api, poolProps);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_require_device(api);
    const nn_soc soc = nn_soc_current();
    if (ret == ACL_SUCCESS && soc != NN_SOC_ASCEND910B) /* CANN documents pools on Atlas A2 only */
        ret = nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the selected product (%s) has no stream-ordered "
                          "memory pools (CANN offers them on Ascend910B).", api, nn_soc_family_name(soc));
    size_t max_size = 0;
    if (ret == ACL_SUCCESS)
        ret = pool_size(api, poolProps->maxSize, &max_size);
    if (ret != ACL_SUCCESS)
        return ret;
    mem_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    pool->max_size = max_size;
    pthread_mutex_lock(&g_pool_lock);
    bool added = nn_ptrset_add(&g_pools, pool);
    atomic_store(&g_have_pools, g_pools.count > 0);
    pthread_mutex_unlock(&g_pool_lock);
    if (!added) {
        free(pool);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    nn_check_object_created(pool, "aclrtMemPool", api, true);
    *memPool = pool;
    return ACL_SUCCESS;
}

static size_t count_state_locked(const mem_pool *pool, block_state state)
{
    size_t count = 0;
    for (size_t i = 0; i < pool->num_blocks; i++)
        count += pool->blocks[i]->state == state;
    return count;
}

/* A pool with allocations still in use is refused (its blocks would go while the program
 * holds them); frees still queued finish first and then release their blocks. */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolDestroy(const aclrtMemPool memPool)
{
    const char *api = "aclrtMemPoolDestroy";
    if (memPool == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: memPool must not be null.", api);
    pthread_mutex_lock(&g_pool_lock);
    mem_pool *pool = live_pool_locked(memPool);
    size_t busy = pool != NULL ? count_state_locked(pool, BLOCK_BUSY) : 0;
    if (pool != NULL && busy == 0) {
        trim_cached_locked(pool, 0);
        pool->destroyed = true;
        if (pool->num_blocks == 0)
            free_pool_locked(pool);
    }
    pthread_mutex_unlock(&g_pool_lock);
    if (pool == NULL)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: memPool %p is not a pool (never created, or "
                           "already destroyed).", api, memPool);
    if (busy > 0)
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: memPool %p still has %zu allocation(s) in use; "
                           "free them with aclrtMemPoolFreeAsync first.", api, memPool, busy);
    nn_check_object_destroyed(memPool);
    return ACL_SUCCESS;
}

/* ---- attributes ------------------------------------------------------------------------------- */

static aclError set_attr_locked(const char *api, mem_pool *pool, aclrtMemPoolAttr attr, const void *value)
{
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        pool->reuse_event_dependencies = *(const uint32_t *)value != 0;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
        pool->reuse_opportunistic = *(const uint32_t *)value != 0;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        pool->reuse_internal_dependencies = *(const uint32_t *)value != 0;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD: {
        uint64_t threshold = *(const uint64_t *)value;
        if (threshold > pool->max_size)
            return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: value %llu of ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD "
                               "exceeds the pool's maxSize %zu.", api, (unsigned long long)threshold, pool->max_size);
        pool->release_threshold = threshold;
        return ACL_SUCCESS;
    }
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
        if (*(const uint64_t *)value != 0)
            return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: a high-water attribute (attr %d) can only be reset "
                               "to 0, got value %llu.", api, (int)attr, (unsigned long long)*(const uint64_t *)value);
        if (attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH)
            pool->reserved_high = 0;
        else
            pool->used_high = 0;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: attr %d is read-only.", api, (int)attr);
    default:
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: attr must be an aclrtMemPoolAttr in [1, 8], got %d.",
                           api, (int)attr);
    }
}

static aclError get_attr_locked(const char *api, const mem_pool *pool, aclrtMemPoolAttr attr, void *value)
{
    switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        *(uint32_t *)value = pool->reuse_event_dependencies;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
        *(uint32_t *)value = pool->reuse_opportunistic;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(uint32_t *)value = pool->reuse_internal_dependencies;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
        *(uint64_t *)value = pool->release_threshold;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
        *(uint64_t *)value = pool->reserved;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
        *(uint64_t *)value = pool->reserved_high;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
        *(uint64_t *)value = pool->used;
        return ACL_SUCCESS;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
        *(uint64_t *)value = pool->used_high;
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: attr must be an aclrtMemPoolAttr in [1, 8], got %d.",
                           api, (int)attr);
    }
}

typedef aclError (*attr_fn)(const char *api, mem_pool *pool, aclrtMemPoolAttr attr, void *value);

static aclError set_attr_fn(const char *api, mem_pool *pool, aclrtMemPoolAttr attr, void *value)
{
    return set_attr_locked(api, pool, attr, value);
}

static aclError get_attr_fn(const char *api, mem_pool *pool, aclrtMemPoolAttr attr, void *value)
{
    return get_attr_locked(api, pool, attr, value);
}

/* The checks SetAttr and GetAttr share (CANN: a null pool is the acl layer's 100000, a null
 * value or an unknown pool the runtime's 107000), then `fn` under the lock. */
static aclError pool_attr(const char *api, aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value, attr_fn fn)
{
    if (memPool == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: memPool must not be null.", api);
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: value must not be null.", api);
    pthread_mutex_lock(&g_pool_lock);
    mem_pool *pool = live_pool_locked(memPool);
    aclError ret = pool != NULL ? fn(api, pool, attr, value)
                                : nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: memPool %p is not a pool (never "
                                              "created, or already destroyed).", api, memPool);
    pthread_mutex_unlock(&g_pool_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value)
{
    return pool_attr("aclrtMemPoolSetAttr", memPool, attr, value, set_attr_fn);
}

ACL_FUNC_VISIBILITY aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void *value)
{
    return pool_attr("aclrtMemPoolGetAttr", memPool, attr, value, get_attr_fn);
}

/* ---- allocation and free ------------------------------------------------------------------------ */

/* The stream a pool call queues on: a capture would record the free and replay it at every
 * launch of the model, so capturing streams are refused. */
static aclError pool_stream(const char *api, aclrtStream stream, nn_stream **out)
{
    aclError ret = nn_stream_resolve_named(api, stream, out);
    if (ret == ACL_SUCCESS && nn_stream_records(*out))
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: stream %p is capturing into a model runtime "
                           "instance; libaclnn does not capture pool allocations.", api, stream);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool,
                                                     aclrtStream stream)
{
    const char *api = "aclrtMemPoolMallocAsync";
    if (ptr == NULL || memPool == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           ptr == NULL ? "ptr" : memPool == NULL ? "memPool" : "stream");
    if (size == 0)
        return ACL_SUCCESS; /* as CANN: nothing allocated, *ptr untouched */
    nn_stream *s;
    aclError ret = pool_stream(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    if (size > SIZE_MAX - POOL_BLOCK_BYTES)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size %zu overflows the 2 MiB rounding.", api, size);
    const size_t rounded = (size + POOL_BLOCK_BYTES - 1) / POOL_BLOCK_BYTES * POOL_BLOCK_BYTES;
    pthread_mutex_lock(&g_pool_lock);
    mem_pool *pool = live_pool_locked(memPool);
    pool_block *block = pool != NULL ? best_fit_locked(pool, rounded, s) : NULL;
    const nn_stream *freed_on = block != NULL ? block->stream : NULL;
    aclrtEvent freed = block != NULL ? block->freed : NULL; /* the block's now: waited for, then destroyed */
    if (pool == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: memPool %p is not a pool (never created, or already "
                          "destroyed).", api, memPool);
    else if (block == NULL)
        ret = new_block_locked(api, pool, rounded, &block);
    if (ret == ACL_SUCCESS)
        take_locked(pool, block, s);
    pthread_mutex_unlock(&g_pool_lock);
    /* another stream's free: this stream waits for it (outside the lock: under
     * ACLNN_LAUNCH_BLOCKING the wait is waited for, and the free's task takes the lock) */
    if (freed != NULL && freed_on != s)
        ret = aclrtStreamWaitEvent(s, freed);
    if (freed != NULL)
        (void)aclrtDestroyEvent(freed); /* (a queued wait keeps what it needs) */
    if (ret != ACL_SUCCESS && freed != NULL && freed_on != s) {
        give_back(block, freed_on);
        return ret;
    }
    if (ret == ACL_SUCCESS)
        *ptr = block->base; /* (a BUSY block stays: trims and destroys leave it alone) */
    return ret;
}

/* A free its stream reached: the block becomes idle memory of its pool (or, for a destroyed
 * pool, goes; the last one takes the pool with it). */
static void settle_free_locked(pool_block *block)
{
    mem_pool *pool = block->pool;
    block->state = BLOCK_CACHED;
    if (pool->destroyed) {
        trim_cached_locked(pool, 0);
        if (pool->num_blocks == 0)
            free_pool_locked(pool);
    }
}

/* One queued free: run_free when its stream reaches it, release_free after that or instead of it
 * (aclrtDestroyStreamForce drops it together with the tasks before it, so the block is idle all
 * the same).  `number` tells a later free of the same block apart. */
typedef struct free_task {
    pool_block *block;
    uint64_t number;
    bool ran;
} free_task;

static void free_reached(free_task *task)
{
    pthread_mutex_lock(&g_pool_lock);
    pool_block *block = task->block; /* not released: only CACHED blocks are, and this free is not settled */
    if (block->free_number == task->number) {
        block->free_ran = true;
        if (block->state == BLOCK_FREEING)
            settle_free_locked(block);
    }
    pthread_mutex_unlock(&g_pool_lock);
}

static int run_free(void *ctx)
{
    free_task *task = ctx;
    task->ran = true;
    free_reached(task);
    return 0;
}

static void release_free(void *ctx)
{
    free_task *task = ctx;
    if (!task->ran)
        free_reached(task);
    free(task);
}

/* With cross-stream reuse on, an event recorded right after the free lets another stream take
 * the block by waiting for it (aclrtMemPoolMallocAsync).  NULL when it cannot be made. */
static aclrtEvent event_after_free(nn_stream *stream)
{
    aclrtEvent event = NULL;
    if (aclrtCreateEvent(&event) != ACL_SUCCESS)
        return NULL;
    nn_check_object_destroyed(event); /* the pool's own: not the program's to destroy */
    if (aclrtRecordEvent(event, stream) != ACL_SUCCESS) {
        (void)aclrtDestroyEvent(event);
        return NULL;
    }
    return event;
}

/* racecheck: the free touches the whole block on its stream, so a task of another stream that
 * may still use it (not ordered before the free by an event) is reported. */
static void race_check_free(const nn_stream *stream, const pool_block *block)
{
    if (!nn_check_on(NN_CHECK_RACECHECK))
        return;
    const nn_check_access access = {block->base, block->size, true, "ptr", -1};
    nn_check_race_task(stream, "aclrtMemPoolFreeAsync", &access, 1);
}

/* The host function that frees, in stream order, aclrtMalloc memory given to
 * aclrtMemPoolFreeAsync (CANN: ApiImplSoma::MemPoolFreeAsyncCallback).  Launched as a host
 * function, so that racecheck orders it as the stream does. */
static void free_in_stream_order(void *ptr)
{
    if (aclrtFree(ptr) != ACL_SUCCESS) {
        const char *why = nn_error_take();
        nn_log(NN_LOG_ERROR, "aclrtMemPoolFreeAsync: freeing %p on its stream failed: %s", ptr, why ? why : "");
    }
}

/* ptr starts an allocation of the registry that aclrtFree releases (not a mapping of rt_vmm.c). */
static bool plain_device_block(void *ptr)
{
    void *base = NULL;
    int fd;
    size_t offset, room;
    uint64_t nonce;
    return nn_mem_find(ptr, 0, &base, NULL) && base == ptr && !nn_mem_is_host_alloc(ptr) &&
           !nn_vmm_mapping_of(ptr, &fd, &offset, &room, &nonce);
}

ACL_FUNC_VISIBILITY aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream)
{
    const char *api = "aclrtMemPoolFreeAsync";
    if (ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: ptr must not be null.", api);
    nn_stream *s;
    aclError ret = pool_stream(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    bool inside;
    free_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    pthread_mutex_lock(&g_pool_lock);
    pool_block *block = busy_block_at_locked(ptr, &inside);
    const bool events = block != NULL && (block->pool->reuse_opportunistic != 0 ||
                                          block->pool->reuse_internal_dependencies != 0);
    if (block != NULL) {
        race_check_free(s, block);
        block->state = BLOCK_QUEUING;
        block->free_ran = false;
        *task = (free_task){block, ++block->free_number, false};
        block->stream = s;
        block->pool->used -= block->size; /* CANN counts it unused from this call on */
    }
    pthread_mutex_unlock(&g_pool_lock);
    if (block == NULL)
        free(task);
    if (block == NULL && !inside && plain_device_block(ptr)) /* as CANN: freed when the stream gets there */
        return aclrtLaunchHostFunc(stream, free_in_stream_order, ptr);
    if (block == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, inside ? "%s: ptr %p is not an allocation in use: it was "
                           "already freed, or points inside a pool block rather than at its start." :
                           "%s: ptr %p was allocated by neither aclrtMemPoolMallocAsync nor aclrtMalloc.", api, ptr);
    ret = nn_stream_submit(s, run_free, release_free, task); /* (release_free runs even if it fails) */
    aclrtEvent freed = ret == ACL_SUCCESS && events ? event_after_free(s) : NULL;
    pthread_mutex_lock(&g_pool_lock);
    if (ret != ACL_SUCCESS) { /* never queued (release_free only marked it ran): the block stays the program's */
        block->state = BLOCK_BUSY;
        block->pool->used += block->size;
    } else {
        block->freed = freed;
        block->state = BLOCK_FREEING;
        if (block->free_ran)
            settle_free_locked(block);
    }
    pthread_mutex_unlock(&g_pool_lock);
    return ret;
}

/* CANN keeps max(minBytesToKeep, what is in use); memory whose free is still queued is not idle
 * yet and stays. */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep)
{
    const char *api = "aclrtMemPoolTrimTo";
    if (memPool == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: memPool must not be null.", api);
    aclError ret = ACL_SUCCESS;
    pthread_mutex_lock(&g_pool_lock);
    mem_pool *pool = live_pool_locked(memPool);
    if (pool == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: memPool %p is not a pool (never created, or already "
                          "destroyed).", api, memPool);
    else if (minBytesToKeep > pool->max_size)
        ret = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: minBytesToKeep %zu exceeds the pool's maxSize %zu.", api,
                          minBytesToKeep, pool->max_size);
    else if (minBytesToKeep < pool->reserved && minBytesToKeep < pool->used)
        ret = nn_rt_error(ACL_ERROR_RT_INTERNAL_ERROR, "%s: minBytesToKeep %zu is less than the %llu bytes in use.",
                          api, minBytesToKeep, (unsigned long long)pool->used);
    else
        trim_cached_locked(pool, minBytesToKeep);
    pthread_mutex_unlock(&g_pool_lock);
    return ret;
}

void nn_mem_pool_release_idle(void)
{
    if (!atomic_load_explicit(&g_have_pools, memory_order_relaxed))
        return;
    pthread_mutex_lock(&g_pool_lock);
    for (size_t p = 0; p < g_pools.count; p++) {
        mem_pool *pool = g_pools.items[p];
        trim_cached_locked(pool, pool->release_threshold > pool->used ? pool->release_threshold : pool->used);
    }
    pthread_mutex_unlock(&g_pool_lock);
}

void nn_mem_pool_finalize(void)
{
    pthread_mutex_lock(&g_pool_lock);
    g_finalizing = true; /* (nn_event_finalize released the pools' events) */
    while (g_pools.count > 0)
        free_pool_locked(g_pools.items[g_pools.count - 1]);
    nn_ptrset_clear(&g_pools);
    g_finalizing = false;
    pthread_mutex_unlock(&g_pool_lock);
}
