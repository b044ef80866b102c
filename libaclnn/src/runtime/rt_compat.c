/*
 * rt_compat.c - variants of implemented calls: record and wait with flags, the task scheduler
 * choice, host registration and its pointers, memory-type checks, batched copies, and two
 * host-side queries.  Each forwards to
 * the implemented call when its extra argument has the default meaning, and otherwise answers
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT saying which value is not supported.
 */
#include <stdint.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

ACL_FUNC_VISIBILITY aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag)
{
    /* EXTERNAL marks a record inside a captured model that events outside it see; here every
     * record of a model is re-issued as a real record at each execution (model_ri.c). */
    if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtRecordEventWithFlag: flag must be "
                           "ACL_EVENT_RECORD_DEFAULT (0) or ACL_EVENT_RECORD_EXTERNAL (1), got %u.", flag);
    return aclrtRecordEvent(event, stream);
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout,
                                                          uint32_t flag)
{
    /* EXTERNAL: the wait of a captured model on a record outside it, a real wait here too. */
    if ((flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL) || timeout != 0)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtStreamWaitEventWithFlag: flag %u / timeout %u "
                           "is not supported by libaclnn (only ACL_EVENT_WAIT_DEFAULT or EXTERNAL without a timeout; "
                           "aclrtSetOpWaitTimeout bounds every wait).", flag, timeout);
    return aclrtStreamWaitEvent(stream, event);
}

/* Every task runs on the CPU whichever task scheduler is named. */
ACL_FUNC_VISIBILITY aclError aclrtSetTsDevice(aclrtTsId tsId)
{
    if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtSetTsDevice: tsId must be ACL_TS_ID_AICORE (0) or "
                           "ACL_TS_ID_AIVECTOR (1), got %d.", (int)tsId);
    return ACL_SUCCESS;
}

/* Registered host memory is reached by the device where it lies (host_register.c). */
ACL_FUNC_VISIBILITY aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)
{
    (void)flag;
    if (pHost == NULL || pDevice == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtHostGetDevicePointer: pHost and pDevice must not be null.");
    if (!nn_host_mapped_contains(pHost, 1))
        return nn_rt_error(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "aclrtHostGetDevicePointer: %p is not inside "
                           "memory registered with aclrtHostRegister.", pHost);
    *pDevice = pHost;
    return ACL_SUCCESS;
}

/* checkResult: 1 when every address is device memory (ACL_RT_MEM_TYPE_DEV); DVPP and reserved
 * memory do not exist here, so an address only of those types does not match. */
ACL_FUNC_VISIBILITY aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult,
                                               uint32_t reserve)
{
    (void)reserve;
    if (addrList == NULL || checkResult == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCheckMemType: addrList and checkResult must not be null "
                           "and size positive.");
    if ((memType & ~(uint32_t)(ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD)) != 0 ||
        memType == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCheckMemType: memType %#x is not a combination of "
                           "ACL_RT_MEM_TYPE_DEV, _DVPP and _RSVD.", memType);
    uint32_t all = 1;
    for (uint32_t i = 0; i < size && all; i++)
        all = (memType & ACL_RT_MEM_TYPE_DEV) != 0 && nn_mem_find(addrList[i], 1, NULL, NULL);
    *checkResult = all;
    return ACL_SUCCESS;
}

/* The copies one after another; the attributes (source and destination locations) add
 * nothing on one memory.  *failIndex names the copy that failed (SIZE_MAX: none). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                              size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                              size_t numAttrs, size_t *failIndex)
{
    (void)attrs;
    (void)attrsIndexes;
    (void)numAttrs;
    if (dsts == NULL || destMaxs == NULL || srcs == NULL || sizes == NULL || failIndex == NULL || numBatches == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatch: the arrays and failIndex must not be null "
                           "and numBatches positive.");
    *failIndex = SIZE_MAX;
    for (size_t i = 0; i < numBatches; i++) {
        aclError ret = aclrtMemcpy(dsts[i], destMaxs[i], srcs[i], sizes[i], ACL_MEMCPY_DEFAULT);
        if (ret != ACL_SUCCESS) {
            *failIndex = i;
            return ret;
        }
    }
    return ACL_SUCCESS;
}

/* Deprecated: CANN's condition was the copy kind's check; the copy is aclrtMemcpyAsync's. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count,
                                                           aclrtMemcpyKind kind, aclrtStream stream)
{
    return aclrtMemcpyAsync(dst, destMax, src, count, kind, stream);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                                size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                                size_t numAttrs)
{
    size_t fail;
    return aclrtMemcpyBatch(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs, &fail);
}

/* Each copy queued on the stream in order; a copy refused at the call stops the batch there. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                                   size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                                   size_t numAttrs, size_t *failIndex, aclrtStream stream)
{
    (void)attrs;
    (void)attrsIndexes;
    (void)numAttrs;
    if (dsts == NULL || destMaxs == NULL || srcs == NULL || sizes == NULL || failIndex == NULL || numBatches == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatchAsync: the arrays and failIndex must not be "
                           "null and numBatches positive.");
    *failIndex = SIZE_MAX;
    for (size_t i = 0; i < numBatches; i++) {
        aclError ret = aclrtMemcpyAsync(dsts[i], destMaxs[i], srcs[i], sizes[i], ACL_MEMCPY_DEFAULT, stream);
        if (ret != ACL_SUCCESS) {
            *failIndex = i;
            return ret;
        }
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                                     size_t numBatches, aclrtMemcpyBatchAttr *attrs,
                                                     size_t *attrsIndexes, size_t numAttrs, aclrtStream stream)
{
    size_t fail;
    return aclrtMemcpyBatchAsync(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs, &fail,
                                 stream);
}

/* ACL_HOST_REG_MAPPED (with PINNED or not) is aclrtHostRegister's MAPPED registration; the device
 * address comes from aclrtHostGetDevicePointer.  I/O memory and read-only mappings have no CPU
 * counterpart here. */
ACL_FUNC_VISIBILITY aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
    if ((flag & ~(uint32_t)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED)) != 0 || (flag & ACL_HOST_REG_MAPPED) == 0)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtHostRegisterV2: flag %#x is not supported by "
                           "libaclnn (ACL_HOST_REG_MAPPED, optionally with ACL_HOST_REG_PINNED).", flag);
    void *device = NULL;
    return aclrtHostRegister(ptr, size, ACL_HOST_REGISTER_MAPPED, &device);
}

/* Every engine reaches host memory: the device is the host. */
ACL_FUNC_VISIBILITY aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
                                                         aclrtHostMemMapCapability *capabilities)
{
    (void)hacType;
    if (capabilities == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtHostMemMapCapabilities: capabilities must not be null.");
    aclError ret = nn_rt_check_device("aclrtHostMemMapCapabilities", deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    *capabilities = ACL_RT_HOST_MEM_MAP_SUPPORTED;
    return ACL_SUCCESS;
}

/* The process id the device knows the program by: this process's. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    if (pid == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetBareTgid: pid must not be null.");
    *pid = (int32_t)getpid();
    return ACL_SUCCESS;
}
