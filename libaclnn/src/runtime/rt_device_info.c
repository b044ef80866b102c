/*
 * rt_device_info.c - what a program can ask about a device: attributes and capabilities, CANN
 * attributes of the product, status, id mappings, and peer access between the emulated devices.
 *
 * The device is the host CPU, so the numbers are the machine's: the cores that run operators
 * are the threads of libaclnn's pool (ACL_DEV_ATTR_AICORE_CORE_NUM and the vector and cube
 * counts; ACLNN_NUM_THREADS sets them), the L2 size is the CPU's last-level cache, the global
 * memory is the machine's RAM.  What depends on the product (the NPU architecture, bf16 and
 * inf/nan support) follows the emulated product (ACLNN_SOC_VERSION).  Attributes that only a
 * real NPU has (SIMT grid limits, super-pod ids, ...) return ACL_ERROR_RT_FEATURE_NOT_SUPPORT.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

int64_t nn_rt_operator_cores(void)
{
    int n = nn_num_threads();
    return n > 0 ? n : 1;
}

static int64_t total_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : 0;
}

/* The NpuArch number of the emulated product (DAV_2201 -> 2201): CANN's SoC -> arch map. */
static int64_t npu_arch(void)
{
    switch (nn_soc_current()) {
    case NN_SOC_ASCEND910:
        return 1001;
    case NN_SOC_ASCEND310P:
        return 2002;
    case NN_SOC_ASCEND950:
        return 3510;
    default:
        return 2201; /* Ascend910B and Ascend910_93 */
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    const char *api = "aclrtGetDeviceInfo";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    switch ((int)attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM: {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        *value = online > 0 ? online : 1;
        return ACL_SUCCESS;
    }
    case ACL_DEV_ATTR_AICORE_CORE_NUM:
    case ACL_DEV_ATTR_CUBE_CORE_NUM:
    case ACL_DEV_ATTR_VECTOR_CORE_NUM:
        *value = nn_rt_operator_cores();
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
        *value = total_memory_bytes();
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_L2_CACHE_SIZE:
        *value = (int64_t)nn_last_level_cache_bytes();
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_IS_VIRTUAL:
        *value = 0;
        return ACL_SUCCESS;
    case ACL_DEV_ATTR_NPU_ARCH:
        *value = npu_arch();
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: attribute %d has no meaning on libaclnn's "
                           "CPU device (supported: AICPU/AICORE/CUBE/VECTOR core numbers, "
                           "TOTAL_GLOBAL_MEM_SIZE, L2_CACHE_SIZE, IS_VIRTUAL, NPU_ARCH).", api, (int)attr);
    }
}

ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)
{
    const char *api = "aclGetDeviceCapability";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    switch ((int)deviceInfo) {
    case ACL_DEVICE_INFO_AI_CORE_NUM:
    case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
        *value = nn_rt_operator_cores();
        return ACL_SUCCESS;
    case ACL_DEVICE_INFO_L2_SIZE:
        *value = (int64_t)nn_last_level_cache_bytes();
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceInfo must be ACL_DEVICE_INFO_AI_CORE_NUM, "
                           "_VECTOR_CORE_NUM or _L2_SIZE, got %d.", api, (int)deviceInfo);
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType,
                                                      int32_t *value)
{
    const char *api = "aclrtGetDeviceCapability";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    if (devFeatureType != ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV &&
        devFeatureType != ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: unknown devFeatureType %d.", api, (int)devFeatureType);
    /* Both features belong to the NPU's task scheduler and memory queues. */
    *value = ACL_DEV_FEATURE_NOT_SUPPORT;
    return ACL_SUCCESS;
}

/* ---- CANN attributes of the product ------------------------------------------------------- */

static bool product_has_bf16(void)
{
    nn_soc soc = nn_soc_current();
    return soc == NN_SOC_ASCEND910B || soc == NN_SOC_ASCEND910_93 || soc == NN_SOC_ASCEND950;
}

ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
    static const aclCannAttr with_bf16[] = {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16};
    static const aclCannAttr without_bf16[] = {ACL_CANN_ATTR_INF_NAN};
    if (cannAttrList == NULL || num == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclGetCannAttributeList: cannAttrList and num must not "
                           "be null.");
    bool bf16 = product_has_bf16();
    *cannAttrList = bf16 ? with_bf16 : without_bf16;
    *num = bf16 ? 2 : 1;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: value must not be null.");
    switch ((int)cannAttr) {
    case ACL_CANN_ATTR_INF_NAN:
        *value = 1; /* IEEE arithmetic: the CPU always computes with inf and nan */
        return ACL_SUCCESS;
    case ACL_CANN_ATTR_BF16:
        *value = product_has_bf16() ? 1 : 0;
        return ACL_SUCCESS;
    case ACL_CANN_ATTR_JIT_COMPILE:
        *value = 0; /* no operator is compiled */
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclGetCannAttribute: unknown cannAttr %d.", (int)cannAttr);
    }
}

/* ---- status, priorities, id mappings ----------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus *deviceStatus)
{
    if (deviceStatus == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtQueryDeviceStatus: deviceStatus must not be null.");
    aclError ret = nn_rt_check_device("aclrtQueryDeviceStatus", deviceId);
    if (ret == ACL_SUCCESS)
        *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
    return ret;
}

/* CANN's range: 0 is the highest priority, 7 the lowest (aclrtCreateStreamWithConfig). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{
    if (leastPriority == NULL || greatestPriority == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetStreamPriorityRange: leastPriority and "
                           "greatestPriority must not be null.");
    *leastPriority = 7;
    *greatestPriority = 0;
    return ACL_SUCCESS;
}

/* User, logical and physical device ids are one and the same here (no container remapping). */
static aclError same_id(const char *api, int32_t in, int32_t *out)
{
    if (out == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the output id must not be null.", api);
    aclError ret = nn_rt_check_device(api, in);
    if (ret == ACL_SUCCESS)
        *out = in;
    return ret;
}

#define NN_ID_MAPPING(name)                                                                       \
    ACL_FUNC_VISIBILITY aclError name(const int32_t in, int32_t *const out)                       \
    {                                                                                             \
        return same_id(#name, in, out);                                                           \
    }
NN_ID_MAPPING(aclrtGetLogicDevIdByUserDevId)
NN_ID_MAPPING(aclrtGetUserDevIdByLogicDevId)
NN_ID_MAPPING(aclrtGetLogicDevIdByPhyDevId)
NN_ID_MAPPING(aclrtGetPhyDevIdByLogicDevId)
NN_ID_MAPPING(aclrtGetUserDevIdByPhyDevId)
NN_ID_MAPPING(aclrtGetPhyDevIdByUserDevId)

/* ---- peer access -------------------------------------------------------------------------- */

/* Every emulated device shares the host's memory, so any two distinct devices can reach each
 * other; access must still be enabled from the current device before use, as on CANN, and
 * the state is kept per (device, peer) pair. */
static _Atomic uint64_t g_peer_enabled[NN_RT_MAX_DEVICES];

ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    const char *api = "aclrtDeviceCanAccessPeer";
    /* CANN's aclrt_impl/memory.cpp compares the ids first, before the runtime sees them: 100000 */
    if (deviceId == peerDeviceId)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceId %d cannot be equal to peerDeviceId %d.", api,
                           deviceId, peerDeviceId);
    if (canAccessPeer == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: canAccessPeer must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, peerDeviceId);
    if (ret == ACL_SUCCESS)
        *canAccessPeer = 1;
    return ret;
}

static aclError current_device(const char *api, int32_t *device)
{
    if (aclrtGetDevice(device) != ACL_SUCCESS)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread; call "
                           "aclrtSetDevice first.", api);
    return ACL_SUCCESS;
}

static aclError set_peer(const char *api, int32_t peerDeviceId, bool enable)
{
    int32_t device;
    aclError ret = current_device(api, &device);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, peerDeviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    if (device == peerDeviceId) /* CANN's aclrt_impl/memory.cpp checks this itself: 100000 */
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: peerDeviceId %d is the current device (deviceId cannot "
                           "be equal to peerDeviceId).", api, peerDeviceId);
    uint64_t bit = (uint64_t)1 << peerDeviceId;
    uint64_t before = enable ? atomic_fetch_or(&g_peer_enabled[device], bit)
                             : atomic_fetch_and(&g_peer_enabled[device], ~bit);
    /* Enabling again succeeds: programs written for cards call it before every cross-device copy
     * and stop on any error (ggml's CANN backend, MegEngine), so the card's driver accepts a
     * repeat. */
    if (!enable && (before & bit) == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: access from device %d to %d is not enabled.", api,
                           device, peerDeviceId);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    if (flags != 0) /* as CANN (runtime:tests/ut/acl/testcase/acl_common_unittest.cpp): 200006 */
        return nn_rt_error(ACL_ERROR_FEATURE_UNSUPPORTED, "aclrtDeviceEnablePeerAccess: flags is reserved and "
                           "must be 0, got %u.", flags);
    return set_peer("aclrtDeviceEnablePeerAccess", peerDeviceId, true);
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
    return set_peer("aclrtDeviceDisablePeerAccess", peerDeviceId, false);
}

ACL_FUNC_VISIBILITY aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)
{
    const char *api = "aclrtDevicePeerAccessStatus";
    if (status == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: status must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, peerDeviceId);
    if (ret == ACL_SUCCESS)
        *status = (atomic_load(&g_peer_enabled[deviceId]) >> peerDeviceId) & 1u ? 1 : 0;
    return ret;
}

/* Operator instructions built for socVersion run here when it names the emulated product's
 * family (a family, "<family>_CPU" or one of its cards: Ascend910B2 on Ascend910B). */
ACL_FUNC_VISIBILITY aclError aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)
{
    static const char api[] = "aclrtCheckArchCompatibility";
    if (socVersion == NULL || canCompatible == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           socVersion == NULL ? "socVersion" : "canCompatible");
    nn_soc family = nn_soc_family_of(socVersion);
    *canCompatible = family != NN_SOC_INVALID && family == nn_soc_current() ? 1 : 0;
    return ACL_SUCCESS;
}

/* A CPU device has no hardware faults to detail (memory UCE, L2, AI Core, link): no error. */
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{
    static const char api[] = "aclrtGetErrorVerbose";
    if (errorInfo == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: errorInfo must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    memset(errorInfo, 0, sizeof *errorInfo);
    errorInfo->errorType = ACL_RT_NO_ERROR;
    return ACL_SUCCESS;
}
