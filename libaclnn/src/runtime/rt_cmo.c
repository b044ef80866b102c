/*
 * rt_cmo.c - cache maintenance tasks: aclrtCmoAsync, and the descriptor form aclrtCmoGetDescSize /
 * aclrtCmoSetDesc / aclrtCmoAsyncWithDesc.
 *
 * On a card these prefetch device memory into the L2 cache, write it back, invalidate or flush
 * it.  A CPU's caches are coherent with its memory and its hardware prefetchers need no hint,
 * so here a CMO is a stream task that checks its range (it must lie in one device allocation)
 * and has no other effect: the stream's order, events and synchronizes see it as CANN's do.
 * The checks are CANN's (runtime:src/runtime/api/api_c_standard_soc.cc, rtCmoAsync and
 * rtCmoAddrTaskLaunch; runtime:src/runtime/api/impl/api_impl.cc, SetCmoDesc): the chips with
 * RT_FEATURE_TASK_CMO are 910_B_93 and 950, so Ascend910 and Ascend310P answer 207000.
 *
 * A descriptor is CANN's rtCmoAddrInfo (runtime:pkg_inc/runtime/rt_external_stars_define.h; on
 * Ascend950 rtDavidCmoAddrInfo, runtime:src/runtime/core/inc/sqe/v200_base/starsv2_base.hpp),
 * written into the program's device memory by aclrtCmoSetDesc and read by the task when it runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define DESC_ALIGN 64 /* the STARS constraint CANN's rtCmoAddrTaskLaunch cites */

#pragma pack(push, 1)
typedef struct cmo_addr_info { /* 32 bytes: the 910_B_93 layout */
    uint32_t reserved0, reserved1;
    uint16_t num_outer, num_inner;
    uint32_t len_inner;
    uint64_t src;
    uint32_t stride_outer, stride_inner;
} cmo_addr_info;

typedef struct cmo_addr_info_950 { /* 64 bytes */
    uint32_t reserved0[7];
    uint16_t num_outer, num_inner;
    uint64_t src;
    uint32_t stride_outer, stride_inner;
    uint32_t len_inner;
    uint32_t reserved1[3];
} cmo_addr_info_950;
#pragma pack(pop)

static bool layout_950(void)
{
    return nn_soc_current() == NN_SOC_ASCEND950;
}

static size_t desc_size(void)
{
    return layout_950() ? sizeof(cmo_addr_info_950) : sizeof(cmo_addr_info);
}

static aclError check_type(const char *api, aclrtCmoType cmoType, aclError code)
{
    if ((unsigned)cmoType > ACL_RT_CMO_TYPE_FLUSH)
        return nn_rt_error(code, "%s: cmoType must be an aclrtCmoType in [0, 3] (prefetch, writeback, invalid, "
                           "flush), got %d.", api, (int)cmoType);
    return ACL_SUCCESS;
}

/* [src, src+size) must lie in one device allocation. */
static aclError check_range(const char *api, const void *src, size_t size)
{
    if (!nn_mem_find(src, size, NULL, NULL))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: [%p, +%zu) is not inside one device memory allocation.",
                           api, src, size);
    return ACL_SUCCESS;
}

/* The task of a CMO whose range was checked at the call: nothing is left to do. */
static int run_checked_cmo(void *ctx)
{
    (void)ctx;
    return 0;
}

ACL_FUNC_VISIBILITY aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream)
{
    const char *api = "aclrtCmoAsync";
    if (src == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           src == NULL ? "src must not be null" : "size must be positive, got 0");
    aclError ret = nn_rt_require_stars(api, "cache maintenance tasks");
    if (ret == ACL_SUCCESS) /* CANN: an unknown operation is "not supported" */
        ret = check_type(api, cmoType, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    nn_stream *s = NULL;
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS)
        ret = check_range(api, src, size);
    return ret == ACL_SUCCESS ? nn_stream_submit(s, run_checked_cmo, NULL, NULL) : ret;
}

ACL_FUNC_VISIBILITY aclError aclrtCmoGetDescSize(size_t *size)
{
    const char *api = "aclrtCmoGetDescSize";
    aclError ret = nn_rt_require_stars(api, "cache maintenance descriptors");
    if (ret == ACL_SUCCESS && size == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size must not be null.", api);
    if (ret == ACL_SUCCESS)
        *size = desc_size();
    return ret;
}

/* The descriptor: 64-byte aligned device memory of desc_size() bytes. */
static aclError check_desc(const char *api, const void *cmoDesc)
{
    if ((uintptr_t)cmoDesc % DESC_ALIGN != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cmoDesc %p is not 64-byte aligned.", api, cmoDesc);
    if (!nn_mem_find(cmoDesc, desc_size(), NULL, NULL))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cmoDesc %p: the %zu bytes there are not device memory "
                           "(aclrtMalloc) of this process.", api, cmoDesc, desc_size());
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCmoSetDesc(void *cmoDesc, void *src, size_t size)
{
    const char *api = "aclrtCmoSetDesc";
    aclError ret = nn_rt_require_stars(api, "cache maintenance descriptors");
    if (ret == ACL_SUCCESS && (cmoDesc == NULL || src == NULL || size == 0))
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s.", api, cmoDesc == NULL ? "cmoDesc must not be null"
                          : src == NULL ? "src must not be null" : "size must be positive, got 0");
    if (ret == ACL_SUCCESS && size > UINT32_MAX)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: size %zu does not fit the descriptor's 32-bit length.",
                          api, size);
    if (ret == ACL_SUCCESS)
        ret = check_desc(api, cmoDesc);
    if (ret != ACL_SUCCESS)
        return ret;
    /* CANN writes it with a synchronous host-to-device copy, one layout per chip */
    if (layout_950()) {
        cmo_addr_info_950 info = {0};
        info.src = (uintptr_t)src;
        info.len_inner = (uint32_t)size;
        return aclrtMemcpy(cmoDesc, sizeof info, &info, sizeof info, ACL_MEMCPY_HOST_TO_DEVICE);
    }
    cmo_addr_info info = {0};
    info.src = (uintptr_t)src;
    info.len_inner = (uint32_t)size;
    return aclrtMemcpy(cmoDesc, sizeof info, &info, sizeof info, ACL_MEMCPY_HOST_TO_DEVICE);
}

typedef struct desc_cmo {
    const void *desc;
    void *held; /* memcheck: the descriptor's allocation, kept while queued */
} desc_cmo;

/* The range is the descriptor's when the task runs (a task queued before may rewrite it). */
static int run_desc_cmo(void *ctx)
{
    const desc_cmo *task = ctx;
    const void *lib = nn_check_lib_addr(task->desc);
    uint64_t src;
    uint32_t len;
    if (layout_950()) {
        cmo_addr_info_950 info;
        memcpy(&info, lib, sizeof info);
        src = info.src;
        len = info.len_inner;
    } else {
        cmo_addr_info info;
        memcpy(&info, lib, sizeof info);
        src = info.src;
        len = info.len_inner;
    }
    if (len == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtCmoAsyncWithDesc: the descriptor at %p names 0 bytes "
                           "(set it with aclrtCmoSetDesc).", task->desc);
    return check_range("aclrtCmoAsyncWithDesc", (const void *)(uintptr_t)src, len);
}

static void release_desc_cmo(void *ctx)
{
    desc_cmo *task = ctx;
    nn_check_task_release(task->held);
    free(task);
}

ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithDesc(void *cmoDesc, aclrtCmoType cmoType, aclrtStream stream,
                                                   const void *reserve)
{
    const char *api = "aclrtCmoAsyncWithDesc";
    if (reserve != NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: reserve must be null.", api);
    aclError ret = nn_rt_require_stars(api, "cache maintenance descriptors");
    nn_stream *s = NULL;
    if (ret == ACL_SUCCESS)
        ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS && cmoDesc == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cmoDesc must not be null.", api);
    if (ret == ACL_SUCCESS)
        ret = check_type(api, cmoType, ACL_ERROR_RT_PARAM_INVALID);
    if (ret == ACL_SUCCESS)
        ret = check_desc(api, cmoDesc);
    if (ret != ACL_SUCCESS)
        return ret;
    desc_cmo *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    *task = (desc_cmo){cmoDesc, nn_check_task_hold((const void *const[]){cmoDesc}, 1)};
    return nn_stream_submit(s, run_desc_cmo, release_desc_cmo, task);
}
