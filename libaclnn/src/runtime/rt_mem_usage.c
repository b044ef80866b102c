/*
 * rt_mem_usage.c - aclrtGetMemUsageInfo: the device memory each of the runtime's allocators holds
 * now and has held at most.
 *
 * CANN's driver answers per memory module of the card (halGetMemUsageInfo,
 * runtime:src/runtime/driver/npu_driver_mem.cc); libaclnn's "device memory" is the process's
 * heap, so its components are its allocators: "aclrtMalloc" (aclrtMalloc, aclrtMallocAlign32,
 * aclrtMallocCached, aclrtMallocWithCfg), "aclrtMemPool" (the blocks the pools hold) and
 * "aclrtMemAllocManaged".  Sizes are the usable bytes each allocation reserves (CANN's rounding);
 * peaks count from the first aclInit, or from the aclFinalize before the last one.  The figures
 * are the process's whichever device is named, as every device shares that memory.
 */
#include <stdint.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

typedef struct component {
    const char *name;
    uint64_t current, peak;
} component;

static pthread_mutex_t g_usage_lock = PTHREAD_MUTEX_INITIALIZER;
static component g_components[NN_MEM_USE_COUNT] = {
    [NN_MEM_USE_MALLOC] = {"aclrtMalloc", 0, 0},
    [NN_MEM_USE_POOL] = {"aclrtMemPool", 0, 0},
    [NN_MEM_USE_MANAGED] = {"aclrtMemAllocManaged", 0, 0},
};

void nn_mem_usage_add(nn_mem_use who, size_t bytes)
{
    pthread_mutex_lock(&g_usage_lock);
    component *c = &g_components[who];
    c->current += bytes;
    if (c->current > c->peak)
        c->peak = c->current;
    pthread_mutex_unlock(&g_usage_lock);
}

void nn_mem_usage_sub(nn_mem_use who, size_t bytes)
{
    pthread_mutex_lock(&g_usage_lock);
    component *c = &g_components[who];
    c->current = bytes < c->current ? c->current - bytes : 0;
    pthread_mutex_unlock(&g_usage_lock);
}

void nn_mem_device_block_freed(const void *base, size_t size)
{
    nn_mem_usage_sub(nn_managed_forget(base) ? NN_MEM_USE_MANAGED : NN_MEM_USE_MALLOC, size);
}

void nn_mem_usage_finalize(void)
{
    pthread_mutex_lock(&g_usage_lock);
    for (int i = 0; i < NN_MEM_USE_COUNT; i++)
        g_components[i].current = g_components[i].peak = 0;
    pthread_mutex_unlock(&g_usage_lock);
}

/* Components that ever held memory, the largest now first (CANN's order), then by peak. */
static size_t used_components(component *out)
{
    size_t count = 0;
    pthread_mutex_lock(&g_usage_lock);
    for (int i = 0; i < NN_MEM_USE_COUNT; i++)
        if (g_components[i].peak > 0)
            out[count++] = g_components[i];
    pthread_mutex_unlock(&g_usage_lock);
    for (size_t i = 1; i < count; i++) { /* (three at most: insertion sort) */
        component c = out[i];
        size_t j = i;
        for (; j > 0 && (out[j - 1].current < c.current ||
                         (out[j - 1].current == c.current && out[j - 1].peak < c.peak)); j--)
            out[j] = out[j - 1];
        out[j] = c;
    }
    return count;
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo,
                                                  size_t inputNum, size_t *outputNum)
{
    const char *api = "aclrtGetMemUsageInfo";
    if (memUsageInfo == NULL || outputNum == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           memUsageInfo == NULL ? "memUsageInfo" : "outputNum");
    *outputNum = 0;
    if (inputNum == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: inputNum must be positive, got 0.", api);
    if (deviceId < 0 || (uint32_t)deviceId >= nn_rt_device_count())
        return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: deviceId %d is not a device (there are %u).", api,
                           (int)deviceId, nn_rt_device_count());
    aclError ret = nn_rt_require_device(api); /* CANN asks the current context's driver */
    if (ret != ACL_SUCCESS)
        return ret;
    component used[NN_MEM_USE_COUNT];
    const size_t count = used_components(used);
    for (size_t i = 0; i < count && i < inputNum; i++) {
        memset(&memUsageInfo[i], 0, sizeof memUsageInfo[i]);
        strncpy(memUsageInfo[i].name, used[i].name, sizeof memUsageInfo[i].name - 1);
        memUsageInfo[i].curMemSize = used[i].current;
        memUsageInfo[i].memPeakSize = used[i].peak;
    }
    *outputNum = count < inputNum ? count : inputNum;
    return ACL_SUCCESS;
}
