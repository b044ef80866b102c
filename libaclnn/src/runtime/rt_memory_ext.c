/*
 * rt_memory_ext.c - the memory calls around memory.c's allocator: 2-D copies, pointer
 * attributes, address ranges, frees that synchronize first, allocation with a config, cache
 * maintenance, 32-bit fills, and the aclDataBuffer descriptor.
 *
 * They check ranges against the allocation registry (nn_mem_find) the way aclrtMemcpy does:
 * a range that starts inside a registered allocation must end inside it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

/* If [ptr, ptr+len) starts inside a registered device allocation, it must end inside it. */
static aclError check_span(const char *api, const char *param, const void *ptr, size_t len)
{
    void *base;
    size_t size;
    if (!nn_mem_find(ptr, 0, &base, &size) || nn_mem_find(ptr, len, NULL, NULL))
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p + %zu bytes runs past the end of its %zu-byte "
                       "allocation at %p.", api, param, ptr, len, size, base);
}

/* The checking mode's look at a copy or fill of `span` bytes (nn_check_copy: freed memory,
 * initcheck's written bytes, for a 2-D copy the whole span with its pitch gaps); *dst and *src
 * become the library's addresses (memcheck maps device memory twice).  A 2-D copy's source may
 * span less (or more) than its destination (spitch != dpitch): the copy is checked over the
 * shorter span - each side lies in one allocation (check_span), so its start settles freed
 * memory and the translation - and a longer destination's rest counts as written. */
static aclError check_mode_span(const char *api, unsigned char **dst, const unsigned char **src,
                                size_t span, size_t src_span, bool async)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK | NN_CHECK_INITCHECK))
        return ACL_SUCCESS;
    const size_t common = *src != NULL && src_span < span ? src_span : span;
    nn_check_copy_args args = {api, *dst, *src, common, async, NULL, NULL};
    bool ok = nn_check_copy(&args);
    if (ok && common < span) {
        nn_check_copy_args rest = {api, *dst + common, NULL, span - common, async, NULL, NULL};
        ok = nn_check_copy(&rest);
    }
    if (!ok)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the %s touches freed device memory (see the "
                           "ACLNN_CHECK report).", api, *src != NULL ? "copy" : "fill");
    *dst = args.dst;
    *src = args.src;
    return ACL_SUCCESS;
}

static size_t span_2d(size_t pitch, size_t width, size_t height)
{
    return pitch * (height - 1) + width;
}

typedef struct copy2d {
    unsigned char *dst;
    const unsigned char *src;
    size_t dpitch, spitch, width, height;
} copy2d;

static aclError check_2d(const char *api, const copy2d *c, aclrtMemcpyKind kind)
{
    if (c->dst == NULL || c->src == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: dst and src must not be null.", api);
    if (c->width > c->dpitch || c->width > c->spitch)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: width (%zu) must not exceed dpitch (%zu) or spitch "
                           "(%zu).", api, c->width, c->dpitch, c->spitch);
    if (c->height == 0 || c->width == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: width and height must be positive, got %zu x %zu.",
                           api, c->width, c->height);
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_DEFAULT)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: kind must be an aclrtMemcpyKind in [0, 4], got %d.",
                           api, (int)kind);
    if (c->height - 1 > (SIZE_MAX - c->width) / (c->dpitch > c->spitch ? c->dpitch : c->spitch))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: pitch x height overflows.", api);
    aclError ret = check_span(api, "dst", c->dst, c->dpitch * (c->height - 1) + c->width);
    if (ret == ACL_SUCCESS)
        ret = check_span(api, "src", c->src, c->spitch * (c->height - 1) + c->width);
    return ret;
}

static void run_2d(const copy2d *c)
{
    if (c->dpitch == c->width && c->spitch == c->width) {
        memmove(c->dst, c->src, c->width * c->height);
        return;
    }
    for (size_t row = 0; row < c->height; row++)
        memmove(c->dst + row * c->dpitch, c->src + row * c->spitch, c->width);
}

/* racecheck: the copy's rows on each side, as one range each (the rows between are the pitch's
 * gaps); queued on `stream`, or made now by the host when it is NULL. */
static void race_check_2d(const char *api, const copy2d *c, const nn_stream *stream)
{
    if (!nn_check_on(NN_CHECK_RACECHECK))
        return;
    const nn_check_access accesses[2] = {
        {c->dst, c->dpitch * (c->height - 1) + c->width, true, "dst", -1},
        {c->src, c->spitch * (c->height - 1) + c->width, false, "src", -1}};
    if (stream == NULL)
        nn_check_race_host(api, accesses, 2);
    else if (!nn_stream_records((nn_stream *)stream))
        nn_check_race_task(stream, api, accesses, 2);
}

/* racecheck: a 32-bit fill of `count` values at ptr. */
static void race_check_d32(const char *api, void *ptr, size_t count, aclrtStream stream, bool async)
{
    if (!nn_check_on(NN_CHECK_RACECHECK))
        return;
    const nn_check_access access = {ptr, (uint64_t)count * 4, true, "ptr", -1};
    nn_stream *s = NULL;
    if (!async)
        nn_check_race_host(api, &access, 1);
    else if (nn_stream_resolve_named(api, stream, &s) == ACL_SUCCESS && !nn_stream_records(s))
        nn_check_race_task(s, api, &access, 1);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                           size_t height, aclrtMemcpyKind kind)
{
    copy2d c = {dst, src, dpitch, spitch, width, height};
    aclError ret = nn_model_check_sync_call("aclrtMemcpy2d");
    if (ret == ACL_SUCCESS)
        ret = check_2d("aclrtMemcpy2d", &c, kind);
    if (ret == ACL_SUCCESS) {
        race_check_2d("aclrtMemcpy2d", &c, NULL); /* the program's addresses */
        ret = check_mode_span("aclrtMemcpy2d", &c.dst, &c.src, span_2d(dpitch, width, height),
                              span_2d(spitch, width, height), false);
        if (ret == ACL_SUCCESS)
            run_2d(&c);
    }
    return ret;
}

/* A queued 2-D copy, with the device allocations it uses held (memcheck: a block freed
 * meanwhile waits for it, nn_check_task_hold). */
typedef struct copy2d_task {
    copy2d c;
    void *held;
} copy2d_task;

static void run_2d_task(void *args)
{
    copy2d_task *task = args;
    run_2d(&task->c);
    nn_check_task_release(task->held);
    free(task);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                size_t width, size_t height, aclrtMemcpyKind kind,
                                                aclrtStream stream)
{
    const char *api = "aclrtMemcpy2dAsync";
    copy2d c = {dst, src, dpitch, spitch, width, height};
    const copy2d program = c; /* racecheck knows the allocations by the program's addresses */
    aclError ret = check_2d(api, &c, kind);
    if (ret == ACL_SUCCESS)
        ret = check_mode_span(api, &c.dst, &c.src, span_2d(dpitch, width, height),
                              span_2d(spitch, width, height), true);
    if (ret != ACL_SUCCESS)
        return ret;
    copy2d_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    task->c = c;
    task->held = nn_check_task_hold((const void *const[]){program.dst, program.src}, 2);
    nn_stream *s = NULL;
    if (nn_check_on(NN_CHECK_RACECHECK) && nn_stream_resolve_named(api, stream, &s) == ACL_SUCCESS)
        race_check_2d(api, &program, s);
    ret = nn_stream_launch_library_task(api, stream, run_2d_task, task);
    if (ret != ACL_SUCCESS) {
        nn_check_task_release(task->held);
        free(task);
    }
    return ret;
}

/* ---- attributes and ranges ---------------------------------------------------------------- */

#define HUGE_PAGE ((size_t)2 << 20)

ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
    if (ptr == NULL || attributes == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes: ptr and attributes must not "
                           "be null.");
    memset(attributes, 0, sizeof *attributes);
    long page = sysconf(_SC_PAGESIZE);
    attributes->pageSize = page > 0 ? (uint32_t)page : 4096;
    void *base;
    size_t size;
    if (nn_mem_is_host_alloc(ptr)) {
        attributes->location.type = ACL_MEM_LOCATION_TYPE_HOST;
    } else if (nn_mem_find(ptr, 1, &base, &size)) {
        int32_t device = 0;
        (void)aclrtGetDevice(&device); /* allocations are not tied to a device: report the current one */
        /* (aclrtMemAllocManaged memory: the host and the device both reach it) */
        attributes->location.type = nn_managed_contains(ptr) ? ACL_MEM_LOCATION_TYPE_MANAGED
                                                             : ACL_MEM_LOCATION_TYPE_DEVICE;
        attributes->location.id = (uint32_t)device;
        if (size >= HUGE_PAGE)
            attributes->pageSize = (uint32_t)HUGE_PAGE; /* large blocks sit on huge pages (memory.c) */
    } else {
        attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
    void *base;
    size_t size;
    if (ptr == NULL || !nn_mem_find(ptr, 1, &base, &size))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAddressRange: %p is not inside device "
                           "memory of this process.", ptr);
    if (pbase != NULL)
        *pbase = base;
    if (psize != NULL)
        *psize = size;
    return ACL_SUCCESS;
}

/* Host and "device" share one coherent memory: flushing or invalidating caches is a no-op
 * once the range is known to be memory the program owns. */
static aclError cache_op(const char *api, void *devPtr, size_t size)
{
    if (devPtr == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr must not be null and size positive.", api);
    return check_span(api, "devPtr", devPtr, size);
}

ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void *devPtr, size_t size)
{
    return cache_op("aclrtMemFlush", devPtr, size);
}

ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
    return cache_op("aclrtMemInvalidate", devPtr, size);
}

/* ---- allocation variants ------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtFreeWithDevSync(void *devPtr)
{
    /* CANN waits for the device's queued work before releasing, so a task still using the
     * block cannot see it freed. */
    aclError ret = aclrtSynchronizeDevice();
    return ret != ACL_SUCCESS ? ret : aclrtFree(devPtr);
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHostWithDevSync(void *hostPtr)
{
    aclError ret = aclrtSynchronizeDevice();
    return ret != ACL_SUCCESS ? ret : aclrtFreeHost(hostPtr);
}

/* Configurations carry a module id, a device id or virtual-address flags; none changes where
 * host memory comes from, but a device id must name a device. */
static aclError check_config(const char *api, const aclrtMallocConfig *cfg)
{
    if (cfg == NULL)
        return ACL_SUCCESS;
    if (cfg->numAttrs > 0 && cfg->attrs == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: cfg->attrs is null but numAttrs is %zu.", api,
                           cfg->numAttrs);
    for (size_t i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].attr == ACL_RT_MEM_ATTR_DEVICE_ID && cfg->attrs[i].value.deviceId >= nn_rt_device_count())
            return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: cfg names device %u; there are %u.", api,
                               cfg->attrs[i].value.deviceId, nn_rt_device_count());
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                                                aclrtMallocConfig *cfg)
{
    aclError ret = check_config("aclrtMallocWithCfg", cfg);
    return ret != ACL_SUCCESS ? ret : aclrtMalloc(devPtr, size, policy);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)
{
    aclError ret = check_config("aclrtMallocHostWithCfg", cfg);
    return ret != ACL_SUCCESS ? ret : aclrtMallocHost(ptr, (size_t)size);
}

/* ---- 32-bit fills ------------------------------------------------------------------------- */

static aclError check_d32(const char *api, void *ptr, size_t memSize, size_t count)
{
    if (ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: ptr must not be null.", api);
    if ((uintptr_t)ptr % 4 != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: ptr %p must be 4-byte aligned.", api, ptr);
    if (count > memSize / 4)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %zu values of 4 bytes do not fit in memSize %zu.", api,
                           count, memSize);
    return check_span(api, "ptr", ptr, count * 4);
}

typedef struct fill32 {
    uint32_t *ptr;
    uint32_t value;
    size_t count;
    void *held; /* memcheck: the allocation it fills (nn_check_task_hold) */
} fill32;

static void run_fill32(void *args)
{
    fill32 *f = args;
    for (size_t i = 0; i < f->count; i++)
        f->ptr[i] = f->value;
    nn_check_task_release(f->held);
    free(f);
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)
{
    aclError ret = check_d32("aclrtMemsetD32", ptr, memSize, N);
    unsigned char *bytes = ptr;
    const unsigned char *none = NULL;
    if (ret == ACL_SUCCESS && N > 0)
        ret = check_mode_span("aclrtMemsetD32", &bytes, &none, N * 4, 0, false);
    if (ret == ACL_SUCCESS)
        race_check_d32("aclrtMemsetD32", ptr, N, NULL, false);
    if (ret == ACL_SUCCESS)
        for (size_t i = 0; i < N; i++)
            ((uint32_t *)(void *)bytes)[i] = value;
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N,
                                                 aclrtStream stream)
{
    const char *api = "aclrtMemsetD32Async";
    aclError ret = check_d32(api, ptr, memSize, N);
    unsigned char *bytes = ptr;
    const unsigned char *none = NULL;
    if (ret == ACL_SUCCESS && N > 0)
        ret = check_mode_span(api, &bytes, &none, N * 4, 0, true);
    if (ret != ACL_SUCCESS)
        return ret;
    fill32 *f = malloc(sizeof *f);
    if (f == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *f = (fill32){(uint32_t *)(void *)bytes, value, N, nn_check_task_hold((const void *const[]){ptr}, 1)};
    race_check_d32(api, ptr, N, stream, true);
    ret = nn_stream_launch_library_task(api, stream, run_fill32, f);
    if (ret != ACL_SUCCESS) {
        nn_check_task_release(f->held);
        free(f);
    }
    return ret;
}

/* ---- aclDataBuffer ------------------------------------------------------------------------ */

struct aclDataBuffer {
    void *data;
    size_t size;
};

ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *buffer = malloc(sizeof *buffer);
    if (buffer == NULL) {
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer: out of memory.");
        return NULL;
    }
    buffer->data = data;
    buffer->size = size;
    return buffer;
}

ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    if (dataBuffer == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer: dataBuffer must not be null.");
    free((void *)dataBuffer);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
    if (dataBuffer == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer: dataBuffer must not be null.");
    dataBuffer->data = data;
    dataBuffer->size = size;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? dataBuffer->data : NULL;
}

ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? (uint32_t)dataBuffer->size : 0;
}

ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? dataBuffer->size : 0;
}
