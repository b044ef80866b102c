/*
 * rt_memcpy_desc.c - the device-to-device copies whose addresses the device reads when the copy
 * runs: aclrtMemcpyAsyncWithOffset (the addresses sit in device memory, each plus an offset) and
 * the copy descriptors (aclrtGetMemcpyDescSize, aclrtSetMemcpyDesc, aclrtMemcpyAsyncWithDesc).
 *
 * CANN queues both as an SDMA copy of kind RT_MEMCPY_ADDR_DEVICE_TO_DEVICE: the engine loads the
 * source and destination from device memory when it reaches the task
 * (runtime:src/runtime/api/api_c_standard_soc.cc, rtMemcpyD2DAddrAsync;
 * runtime:src/runtime/api/impl/api_error.cc, SetMemcpyDesc and MemcpyAsyncWithDesc).  Here the
 * stream's task does the same: it reads the addresses then, so a task queued before it may still
 * write them, and checks the ranges they name against the allocation registry before copying
 * (a range that is not device memory fails the task: 107000 at the next synchronize).
 *
 * A descriptor is CANN's rtMemcpyAddrInfo (runtime:pkg_inc/runtime/runtime/mem.h): three
 * reserved words, the 32-bit length, then the 64-bit source and destination, written into the
 * program's device memory by aclrtSetMemcpyDesc.  Its size is the product's (32 bytes; 64 on
 * Ascend950, MEMCPY_DESC_SIZE_V2); only the first 32 are used.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define MAX_D2D_BYTES ((uint64_t)4 << 30) /* CANN's MAX_MEMCPY_SIZE_OF_D2D */
#define DESC_ALIGN 64

typedef struct memcpy_addr_info {
    uint32_t reserved[3];
    uint32_t len;
    uint64_t src;
    uint64_t dst;
} memcpy_addr_info;

/* ---- the copy a task makes once it has read its addresses -------------------------------------- */

static uint64_t load_address(const void *cell)
{
    uint64_t value;
    memcpy(&value, nn_check_lib_addr(cell), sizeof value);
    return value;
}

/* Copies `count` bytes from the program's address src to dst, both inside device memory. */
static int copy_now(const char *api, uintptr_t dst, uintptr_t src, size_t count)
{
    if (!nn_mem_find((const void *)dst, count, NULL, NULL) || !nn_mem_find((const void *)src, count, NULL, NULL))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the copy read its addresses when it ran: %zu bytes from "
                           "%p to %p, but %s is not inside device memory.", api, count, (void *)src, (void *)dst,
                           nn_mem_find((const void *)dst, count, NULL, NULL) ? "the source" : "the destination");
    nn_check_copy_args args = {api, (void *)dst, (const void *)src, count, false, "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE",
                               NULL};
    if (nn_check_on(NN_CHECK_MEMCHECK | NN_CHECK_INITCHECK) && !nn_check_copy(&args))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the copy touches freed device memory (see the ACLNN_CHECK "
                           "report).", api);
    memmove(args.dst, args.src, count);
    return 0;
}

typedef struct offset_copy {
    const void *dst_cell, *src_cell; /* device memory holding the two base addresses */
    size_t dst_offset, src_offset, count, dest_max;
    void *held;                      /* memcheck: the cells' allocations, kept while queued */
} offset_copy;

static int run_offset_copy(void *ctx)
{
    offset_copy *task = ctx;
    const uint64_t dst = load_address(task->dst_cell), src = load_address(task->src_cell);
    if (dst + task->dst_offset < dst || src + task->src_offset < src)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpyAsyncWithOffset: an address plus its offset "
                           "overflows (dst %#llx + %zu, src %#llx + %zu).", (unsigned long long)dst, task->dst_offset,
                           (unsigned long long)src, task->src_offset);
    return copy_now("aclrtMemcpyAsyncWithOffset", (uintptr_t)(dst + task->dst_offset),
                    (uintptr_t)(src + task->src_offset), task->count);
}

static void release_offset_copy(void *ctx)
{
    offset_copy *task = ctx;
    nn_check_task_release(task->held);
    free(task);
}

/* The 8-byte cell at `cell` (a base address, or a descriptor's bytes) must be device memory. */
static aclError check_cell(const char *api, const char *param, const void *cell, size_t bytes)
{
    if (!nn_mem_find(cell, bytes, NULL, NULL))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p: the %zu bytes there are not device memory "
                           "(aclrtMalloc) of this process.", api, param, cell, bytes);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset,
                                                        const void **src, size_t count, size_t srcDataOffset,
                                                        aclrtMemcpyKind kind, aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsyncWithOffset";
    if (count == 0)
        return ACL_SUCCESS; /* as CANN: nothing to copy */
    if (kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: kind must be ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6), got "
                           "%d.", api, (int)kind);
    aclError ret = ACL_SUCCESS;
    if (nn_soc_current() == NN_SOC_ASCEND310P) /* the one product without RT_FEATURE_TASK_MEMCPY_D2D_BY_OFFSET */
        ret = nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the selected product (Ascend310P) has no copies at "
                          "an address plus an offset (CANN's runtime offers them on Ascend910, Ascend910B, "
                          "Ascend910_93 and Ascend950).", api);
    nn_stream *s = NULL;
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS && (dst == NULL || src == NULL))
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s must not be null.", api, dst == NULL ? "dst" : "src");
    if (ret == ACL_SUCCESS && (count > destMax || count > MAX_D2D_BYTES))
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu must be in (0, min(destMax %zu, 4 GiB)].", api,
                          count, destMax);
    if (ret == ACL_SUCCESS)
        ret = check_cell(api, "dst", dst, sizeof(uint64_t));
    if (ret == ACL_SUCCESS)
        ret = check_cell(api, "src", src, sizeof(uint64_t));
    if (ret != ACL_SUCCESS)
        return ret;
    offset_copy *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (offset_copy){dst, src, dstDataOffset, srcDataOffset, count, destMax,
                          nn_check_task_hold((const void *const[]){dst, src}, 2)};
    return nn_stream_submit(s, run_offset_copy, release_offset_copy, task);
}

/* ---- copy descriptors -------------------------------------------------------------------------- */

/* The acl layer's kind check (100000 outside aclrtMemcpyKind), then the runtime's: only
 * ACL_MEMCPY_INNER_DEVICE_TO_DEVICE has descriptors (207000). */
static aclError check_desc_kind(const char *api, aclrtMemcpyKind kind)
{
    if ((unsigned)kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: kind must be an aclrtMemcpyKind in [0, 7], got %d.", api,
                           (int)kind);
    aclError ret = nn_rt_require_stars(api, "copy descriptors");
    if (ret == ACL_SUCCESS && kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)
        ret = nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: only kind ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6) has "
                          "copy descriptors, got %d.", api, (int)kind);
    return ret;
}

static size_t desc_size(void)
{
    return nn_soc_current() == NN_SOC_ASCEND950 ? 64 : 32;
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)
{
    const char *api = "aclrtGetMemcpyDescSize";
    if (descSize == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: descSize must not be null.", api);
    aclError ret = check_desc_kind(api, kind);
    if (ret == ACL_SUCCESS)
        *descSize = desc_size();
    return ret;
}

/* The descriptor must be 64-byte aligned device memory holding desc_size() bytes. */
static aclError check_desc(const char *api, const void *desc)
{
    if ((uintptr_t)desc % DESC_ALIGN != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: desc %p is not 64-byte aligned.", api, desc);
    return check_cell(api, "desc", desc, desc_size());
}

ACL_FUNC_VISIBILITY aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr,
                                                size_t count, void *config)
{
    const char *api = "aclrtSetMemcpyDesc";
    if (desc == NULL || srcAddr == NULL || dstAddr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           desc == NULL ? "desc" : srcAddr == NULL ? "srcAddr" : "dstAddr");
    if (count == 0 || config != NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, count == 0 ? "count must be positive, got 0"
                           : "config is reserved and must be null");
    aclError ret = check_desc_kind(api, kind);
    if (ret == ACL_SUCCESS && count > MAX_D2D_BYTES)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu must be in (0, 4 GiB].", api, count);
    if (ret == ACL_SUCCESS)
        ret = check_desc(api, desc);
    if (ret == ACL_SUCCESS && (!nn_mem_find(srcAddr, 1, NULL, NULL) || !nn_mem_find(dstAddr, 1, NULL, NULL)))
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: dstAddr %p and srcAddr %p must both be device memory for "
                          "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE.", api, dstAddr, srcAddr);
    if (ret != ACL_SUCCESS)
        return ret;
    /* CANN writes the descriptor with a synchronous host-to-device copy */
    const memcpy_addr_info info = {{0, 0, 0}, (uint32_t)count, (uintptr_t)srcAddr, (uintptr_t)dstAddr};
    return aclrtMemcpy(desc, desc_size(), &info, sizeof info, ACL_MEMCPY_HOST_TO_DEVICE);
}

typedef struct desc_copy {
    const void *desc;
    void *held;
} desc_copy;

static int run_desc_copy(void *ctx)
{
    const desc_copy *task = ctx;
    memcpy_addr_info info;
    memcpy(&info, nn_check_lib_addr(task->desc), sizeof info);
    return copy_now("aclrtMemcpyAsyncWithDesc", (uintptr_t)info.dst, (uintptr_t)info.src, info.len);
}

static void release_desc_copy(void *ctx)
{
    desc_copy *task = ctx;
    nn_check_task_release(task->held);
    free(task);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsyncWithDesc";
    if (desc == NULL || stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, desc == NULL ? "desc" : "stream");
    aclError ret = check_desc_kind(api, kind);
    nn_stream *s = NULL;
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS)
        ret = check_desc(api, desc);
    if (ret != ACL_SUCCESS)
        return ret;
    desc_copy *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (desc_copy){desc, nn_check_task_hold((const void *const[]){desc}, 1)};
    return nn_stream_submit(s, run_desc_copy, release_desc_copy, task);
}
