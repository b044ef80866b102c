/*
 * rt_device_queries.c - what a program asks about the device, its streams, events and tasks,
 * answered for libaclnn's CPU device: stream and event counts and ids, the UUID and PCI bus id,
 * the stack / printf limits, the primary context's state, the topology between devices, the
 * last task of a thread, and memory errors (a CPU reports none).
 *
 * Statuses and checks follow CANN's runtime (runtime:src/acl/aclrt_impl/device.cpp, event.cpp,
 * stream.cpp, context.cpp, memory.cpp; src/runtime/api/impl/api_error.cc, api_impl.cc); the values
 * are documented in docs/runtime.md ("Device queries").
 */
#include <stdio.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

/* CANN's bounds (runtime:src/runtime/core/inc/kernel/elf.hpp, runtime.hpp): the kernel stack is
 * 32 KiB unless set larger (then rounded up to 16 KiB); the SIMD printf FIFO per core is 32 KiB,
 * settable in [1 KiB, 64 MiB], rounded up to 8 bytes. */
#define STACK_SIZE_DEFAULT (32u * 1024u)
#define STACK_SIZE_ALIGN (16u * 1024u)
#define PRINTF_FIFO_DEFAULT (32u * 1024u)
#define PRINTF_FIFO_MIN 1024u
#define PRINTF_FIFO_MAX (64u * 1024u * 1024u)
#define PRINTF_FIFO_ALIGN 8u
/* CANN's "%04x:%02x:%02x.%x" bus id needs 12 characters and the terminator (api_error.cc). */
#define PCI_BUS_ID_MIN_LEN 13
/* aclrtMemUceRepair's array bound (RT_MAX_RECORD_PA_NUM_PER_DEV in aclrt_impl/memory.cpp). */
#define UCE_REPAIR_MAX 128u

static _Atomic uint32_t g_stack_size = STACK_SIZE_DEFAULT;
static _Atomic uint32_t g_printf_fifo = PRINTF_FIFO_DEFAULT;

static aclError need_context(const char *api)
{
    pthread_mutex_lock(&nn_rt_lock);
    bool have = nn_rt_current_context_locked() != NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    return have ? ACL_SUCCESS
                : nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread; call "
                              "aclrtSetDevice first.", api);
}

static aclError null_param(const char *api, const char *param)
{
    return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, param);
}

/* ---- streams, events, tasks --------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)
{
    static const char api[] = "aclrtGetStreamAvailableNum";
    if (streamCount == NULL)
        return null_param(api, "streamCount");
    aclError ret = need_context(api);
    if (ret == ACL_SUCCESS)
        *streamCount = nn_stream_free_count();
    return ret;
}

/* The event count of the emulated product's runtime (stubEventCount in runtime:src/runtime/
 * config/{910_B_93,cloud,950,dc}/dev_info_reg.cc). */
static uint32_t product_event_count(void)
{
    switch (nn_soc_current()) {
    case NN_SOC_ASCEND950:
        return 131072u;
    case NN_SOC_ASCEND310P:
        return 1024u;
    default:
        return 65536u;
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetEventAvailNum(uint32_t *eventCount)
{
    static const char api[] = "aclrtGetEventAvailNum";
    if (eventCount == NULL)
        return null_param(api, "eventCount");
    aclError ret = need_context(api);
    if (ret != ACL_SUCCESS)
        return ret;
    const size_t capacity = product_event_count(), live = nn_event_live_count();
    *eventCount = live < capacity ? (uint32_t)(capacity - live) : 0u;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)
{
    static const char api[] = "aclrtGetEventId";
    if (event == NULL)
        return null_param(api, "event");
    if (eventId == NULL)
        return null_param(api, "eventId");
    return nn_event_get_id(api, event, eventId);
}

ACL_FUNC_VISIBILITY aclError aclrtGetThreadLastTaskId(uint32_t *taskId)
{
    if (taskId == NULL)
        return null_param("aclrtGetThreadLastTaskId", "taskId");
    *taskId = nn_stream_thread_last_task_id();
    return ACL_SUCCESS;
}

/* ---- identity: UUID, PCI bus id, topology ------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
    static const char api[] = "aclrtDeviceGetUuid";
    if (uuid == NULL)
        return null_param(api, "uuid");
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    /* A fixed name-based UUID per device (RFC 9562 version 8, variant 10): FNV-1a of
     * "libaclnn-cpu-device-<id>" spread over the 16 bytes.  Stable across runs and hosts. */
    char name[40];
    snprintf(name, sizeof name, "libaclnn-cpu-device-%d", (int)deviceId);
    uint64_t hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < 16; i++) {
        for (const char *p = name; *p != '\0'; p++)
            hash = (hash ^ (unsigned char)*p) * 0x100000001b3ull;
        hash = (hash ^ (uint64_t)i) * 0x100000001b3ull;
        uuid->bytes[i] = (char)(hash >> 56);
    }
    uuid->bytes[6] = (char)(((unsigned char)uuid->bytes[6] & 0x0f) | 0x80);
    uuid->bytes[8] = (char)(((unsigned char)uuid->bytes[8] & 0x3f) | 0x80);
    return ACL_SUCCESS;
}

/* Device d sits on PCI bus d + 1 of domain 0, device 0, function 0 ("0000:01:00.0" for 0). */
static void pci_bus_id_of(int32_t device, char out[PCI_BUS_ID_MIN_LEN])
{
    snprintf(out, PCI_BUS_ID_MIN_LEN, "%04x:%02x:%02x.%x", 0u, (unsigned)(uint8_t)(device + 1), 0u, 0u);
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId, int32_t len)
{
    static const char api[] = "aclrtDeviceGetPCIBusId";
    if (pciBusId == NULL)
        return null_param(api, "pciBusId");
    if (len < PCI_BUS_ID_MIN_LEN)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: len %d must be at least %d (a bus id and its "
                           "terminator).", api, (int)len, PCI_BUS_ID_MIN_LEN);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        pci_bus_id_of(deviceId, pciBusId);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetByPCIBusId(const char *pciBusId, int32_t *deviceId)
{
    static const char api[] = "aclrtDeviceGetByPCIBusId";
    if (pciBusId == NULL)
        return null_param(api, "pciBusId");
    if (deviceId == NULL)
        return null_param(api, "deviceId");
    const uint32_t count = nn_rt_device_count();
    for (uint32_t d = 0; d < count; d++) {
        char bus_id[PCI_BUS_ID_MIN_LEN];
        pci_bus_id_of((int32_t)d, bus_id);
        if (strcmp(pciBusId, bus_id) == 0) { /* CANN compares exactly: lower-case hex */
            *deviceId = (int32_t)d;
            return ACL_SUCCESS;
        }
    }
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: pciBusId \"%.32s\" is no device's (device d is "
                       "\"0000:<d+1, 2 hex digits>:00.0\").", api, pciBusId);
}

ACL_FUNC_VISIBILITY aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId, uint64_t *value)
{
    static const char api[] = "aclrtGetDevicesTopo";
    if (value == NULL)
        return null_param(api, "value");
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, otherDeviceId);
    /* The devices share one memory: the closest link there is (CANN answers HCCS for a device
     * with itself too). */
    if (ret == ACL_SUCCESS)
        *value = ACL_RT_DEVS_TOPOLOGY_HCCS;
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)
{
    static const char api[] = "aclrtGetPrimaryCtxState";
    if (active == NULL)
        return null_param(api, "active");
    if (flags != NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flags is a reserved parameter and must be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        *active = nn_rt_device_is_set(deviceId) ? 1 : 0;
    return ret;
}

/* ---- atomic capabilities ------------------------------------------------------------------ */

/* The emulated product's tables in CANN's runtime configuration (runtime:src/runtime/config/
 * 910_B_93/dev_info_reg.cc GetStarsP2PAtomicCaps, 950/dev_info_reg.cc GetDavidAtomicCaps;
 * Ascend910 and Ascend310P have none).  CANN answers a table only for a host connected over UB
 * (host) or devices linked by HCCS/SIO/UB (peer); libaclnn's devices are the host's own memory,
 * so both always apply. */
#define CAPS_TYPE1 (ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | \
                    ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | ACL_RT_ATOMIC_CAPABILITY_SCALAR64)
#define CAPS_TYPE2 (ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | \
                    ACL_RT_ATOMIC_CAPABILITY_SCALAR64)
#define CAPS_TYPE3 (ACL_RT_ATOMIC_CAPABILITY_SCALAR16 | ACL_RT_ATOMIC_CAPABILITY_SCALAR32)
#define CAPS_DMA (ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR8 | \
                  ACL_RT_ATOMIC_CAPABILITY_SCALAR16 | ACL_RT_ATOMIC_CAPABILITY_SCALAR32)

static uint32_t ascend950_caps(aclrtAtomicOperation op)
{
    switch (op) {
    case ACL_RT_ATOMIC_OPERATION_INTEGER_ADD: case ACL_RT_ATOMIC_OPERATION_INTEGER_MIN:
    case ACL_RT_ATOMIC_OPERATION_INTEGER_MAX: case ACL_RT_ATOMIC_OPERATION_AND: case ACL_RT_ATOMIC_OPERATION_OR:
    case ACL_RT_ATOMIC_OPERATION_XOR: case ACL_RT_ATOMIC_OPERATION_EXCHANGE: case ACL_RT_ATOMIC_OPERATION_CAS:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD: case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX:
        return CAPS_TYPE1;
    case ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT: case ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT:
    case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS: case ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH:
        return CAPS_TYPE2;
    case ACL_RT_ATOMIC_OPERATION_FLOAT_ADD: case ACL_RT_ATOMIC_OPERATION_FLOAT_MIN:
    case ACL_RT_ATOMIC_OPERATION_FLOAT_MAX:
        return CAPS_TYPE3;
    case ACL_RT_ATOMIC_OPERATION_DMA_ADD: case ACL_RT_ATOMIC_OPERATION_DMA_MIN: case ACL_RT_ATOMIC_OPERATION_DMA_MAX:
        return CAPS_DMA;
    default:
        return 0;
    }
}

static uint32_t product_caps(aclrtAtomicOperation op, bool peer)
{
    const nn_soc soc = nn_soc_current();
    if (soc == NN_SOC_ASCEND950)
        return ascend950_caps(op);
    const bool a2_a3 = soc == NN_SOC_ASCEND910B || soc == NN_SOC_ASCEND910_93;
    const bool dma = op == ACL_RT_ATOMIC_OPERATION_DMA_ADD || op == ACL_RT_ATOMIC_OPERATION_DMA_MIN ||
                     op == ACL_RT_ATOMIC_OPERATION_DMA_MAX;
    return peer && a2_a3 && dma ? CAPS_DMA : 0; /* A2/A3: peer DMA atomics only, no host table */
}

/* CANN's api_error.cc checks the arrays first, then the devices, then the operations. */
static aclError check_atomic_arrays(const char *api, const uint32_t *capabilities,
                                    const aclrtAtomicOperation *operations, uint32_t count)
{
    if (capabilities == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: capabilities must not be null.", api);
    if (operations == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: operations must not be null.", api);
    if (count == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: count must not be 0.", api);
    return ACL_SUCCESS;
}

static aclError fill_atomic_caps(const char *api, uint32_t *capabilities, const aclrtAtomicOperation *operations,
                                 uint32_t count, bool peer)
{
    for (uint32_t i = 0; i < count; i++)
        if ((int)operations[i] < (int)ACL_RT_ATOMIC_OPERATION_INTEGER_ADD ||
            (int)operations[i] > (int)ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH)
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: operations[%u] %d must be in [0, %d].", api, i,
                               (int)operations[i], (int)ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH);
    for (uint32_t i = 0; i < count; i++)
        capabilities[i] = product_caps(operations[i], peer);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetHostAtomicCapabilities(uint32_t *capabilities,
                                                                  const aclrtAtomicOperation *operations,
                                                                  const uint32_t count, int32_t deviceId)
{
    static const char api[] = "aclrtDeviceGetHostAtomicCapabilities";
    aclError ret = check_atomic_arrays(api, capabilities, operations, count);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, deviceId);
    return ret == ACL_SUCCESS ? fill_atomic_caps(api, capabilities, operations, count, false) : ret;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetP2PAtomicCapabilities(uint32_t *capabilities,
                                                                 const aclrtAtomicOperation *operations,
                                                                 const uint32_t count, int32_t srcDeviceId,
                                                                 int32_t dstDeviceId)
{
    static const char api[] = "aclrtDeviceGetP2PAtomicCapabilities";
    aclError ret = check_atomic_arrays(api, capabilities, operations, count);
    if (ret != ACL_SUCCESS)
        return ret;
    if (srcDeviceId == dstDeviceId)
        return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: srcDeviceId must be different from dstDeviceId "
                           "(both %d).", api, (int)srcDeviceId);
    ret = nn_rt_check_device(api, srcDeviceId);
    if (ret == ACL_SUCCESS)
        ret = nn_rt_check_device(api, dstDeviceId);
    return ret == ACL_SUCCESS ? fill_atomic_caps(api, capabilities, operations, count, true) : ret;
}

/* ---- limits ------------------------------------------------------------------------------- */

static aclError check_limit(const char *api, aclrtDeviceLimit limit)
{
    if ((unsigned)limit > (unsigned)ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: limit %d must be an aclrtDeviceLimit in [0, 4].", api,
                           (int)limit);
    if (limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE || limit == ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE)
        return ACL_SUCCESS;
    /* CANN's runtime refuses the SIMT limits on devices without SIMT cores (api_impl.cc) */
    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: limit %d is a SIMT limit; libaclnn runs no SIMT "
                       "kernels.", api, (int)limit);
}

static uint32_t round_up(uint32_t value, uint32_t align)
{
    return (uint32_t)(((uint64_t)value + align - 1u) / align * align);
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value)
{
    static const char api[] = "aclrtDeviceSetLimit";
    if ((unsigned)limit <= (unsigned)ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE && value > UINT32_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value %zu must be in [0, UINT32_MAX].", api, value);
    aclError ret = check_limit(api, limit);
    if (ret != ACL_SUCCESS)
        return ret;
    const uint32_t v = (uint32_t)value;
    if (limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE) {
        if (v > STACK_SIZE_DEFAULT) /* CANN keeps the 32 KiB floor and ignores smaller values */
            atomic_store(&g_stack_size, round_up(v, STACK_SIZE_ALIGN));
        return ACL_SUCCESS;
    }
    if (v < PRINTF_FIFO_MIN || v > PRINTF_FIFO_MAX)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: value %u must be in [%u, %u] for the SIMD printf FIFO.",
                           api, v, PRINTF_FIFO_MIN, PRINTF_FIFO_MAX);
    atomic_store(&g_printf_fifo, round_up(v, PRINTF_FIFO_ALIGN));
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t *value)
{
    static const char api[] = "aclrtDeviceGetLimit";
    if (value == NULL)
        return null_param(api, "value");
    aclError ret = check_limit(api, limit);
    if (ret == ACL_SUCCESS)
        *value = limit == ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE ? atomic_load(&g_stack_size) : atomic_load(&g_printf_fifo);
    return ret;
}

/* ---- memory errors: a CPU device reports none --------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize,
                                                size_t *retSize)
{
    static const char api[] = "aclrtGetMemUceInfo";
    (void)arraySize; /* any size holds the none there are */
    if (memUceInfoArray == NULL)
        return null_param(api, "memUceInfoArray");
    if (retSize == NULL)
        return null_param(api, "retSize");
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret == ACL_SUCCESS)
        *retSize = 0;
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize)
{
    static const char api[] = "aclrtMemUceRepair";
    if (memUceInfoArray == NULL)
        return null_param(api, "memUceInfoArray");
    if (arraySize > UCE_REPAIR_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: arraySize %zu must be less than or equal to %u.", api,
                           arraySize, UCE_REPAIR_MAX);
    static const size_t zero[UCE_INFO_RESERVED_SIZE];
    for (size_t i = 0; i < arraySize; i++)
        if (memcmp(memUceInfoArray[i].reserved, zero, sizeof zero) != 0)
            return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: memUceInfoArray[%zu].reserved is a reserved "
                               "parameter and must be 0.", api, i);
    return nn_rt_check_device(api, deviceId); /* nothing is broken: nothing to repair */
}

ACL_FUNC_VISIBILITY aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)
{
    static const char api[] = "aclrtRepairError";
    if (errorInfo == NULL)
        return null_param(api, "errorInfo");
    return nn_rt_check_device(api, deviceId); /* aclrtGetErrorVerbose reports no error: nothing to repair */
}
