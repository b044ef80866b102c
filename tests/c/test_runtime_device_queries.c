/*
 * test_runtime_device_queries.c - the device, stream, event and task queries of docs/runtime.md
 * ("Device queries"): counts consistent with the streams and events that exist, event ids, the
 * thread's last task, the UUID and PCI bus id, the limits, the primary context state, the
 * topology, and the memory-error calls a healthy device answers with "none".  Statuses as CANN's
 * runtime sources have them (runtime:src/acl/aclrt_impl/device.cpp, event.cpp, context.cpp,
 * memory.cpp; src/runtime/api/impl/api_error.cc, api_impl.cc).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

#include "test_util.h"

static void test_counts_need_a_device(void)
{
    uint32_t count = 0;
    EXPECT(aclrtGetStreamAvailableNum(NULL), ACL_ERROR_INVALID_PARAM, "streamCount");
    EXPECT(aclrtGetEventAvailNum(NULL), ACL_ERROR_INVALID_PARAM, "eventCount");
    EXPECT(aclrtGetStreamAvailableNum(&count), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
    EXPECT(aclrtGetEventAvailNum(&count), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
}

static void test_stream_and_event_counts(void)
{
    uint32_t streams_before = 0, streams_after = 0, events_before = 0, events_after = 0;
    EXPECT_OK(aclrtGetStreamAvailableNum(&streams_before));
    /* 1984 streams at most (the A2/A3 hardware's count); device 0's default and tu_stream exist */
    CHECK(streams_before == 1984 - 2, "free streams %u with two alive", streams_before);
    aclrtStream extra[3];
    for (int i = 0; i < 3; i++)
        EXPECT_OK(aclrtCreateStream(&extra[i]));
    EXPECT_OK(aclrtGetStreamAvailableNum(&streams_after));
    CHECK(streams_after == streams_before - 3, "three more streams: %u -> %u", streams_before, streams_after);
    for (int i = 0; i < 3; i++)
        EXPECT_OK(aclrtDestroyStream(extra[i]));

    EXPECT_OK(aclrtGetEventAvailNum(&events_before));
    CHECK(events_before == 65536, "Ascend910B's 65536 events, none used: %u", events_before);
    aclrtEvent a = NULL, b = NULL;
    EXPECT_OK(aclrtCreateEvent(&a));
    EXPECT_OK(aclrtCreateEvent(&b));
    EXPECT_OK(aclrtGetEventAvailNum(&events_after));
    CHECK(events_after == events_before - 2, "two events: %u -> %u", events_before, events_after);

    uint32_t id_a = 99, id_b = 99;
    EXPECT_OK(aclrtGetEventId(a, &id_a));
    EXPECT_OK(aclrtGetEventId(b, &id_b));
    CHECK(id_b == id_a + 1, "events numbered in creation order: %u, %u", id_a, id_b);
    EXPECT(aclrtGetEventId(NULL, &id_a), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtGetEventId(a, NULL), ACL_ERROR_INVALID_PARAM, "eventId");
    EXPECT_OK(aclrtDestroyEvent(b));
    EXPECT(aclrtGetEventId(b, &id_b), ACL_ERROR_INVALID_PARAM, "not a live event");
    EXPECT_OK(aclrtDestroyEvent(a));
}

static void nothing(void *arg) { (void)arg; }

static void test_last_task_id(void)
{
    uint32_t id = 0, next = 0;
    EXPECT(aclrtGetThreadLastTaskId(NULL), ACL_ERROR_INVALID_PARAM, "taskId");
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, nothing, NULL));
    EXPECT_OK(aclrtGetThreadLastTaskId(&id));
    CHECK(id >= 1, "a task was queued: id %u", id);
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, nothing, NULL));
    EXPECT_OK(aclrtGetThreadLastTaskId(&next));
    CHECK(next == id + 1, "the next task on the same stream: %u after %u", next, id);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
}

static void test_identity(void)
{
    aclrtUuid u1, u2;
    EXPECT(aclrtDeviceGetUuid(0, NULL), ACL_ERROR_INVALID_PARAM, "uuid");
    EXPECT(aclrtDeviceGetUuid(2, &u1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT(aclrtDeviceGetUuid(-1, &u1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT_OK(aclrtDeviceGetUuid(0, &u1));
    EXPECT_OK(aclrtDeviceGetUuid(0, &u2));
    CHECK(memcmp(u1.bytes, u2.bytes, 16) == 0, "the UUID is stable");
    EXPECT_OK(aclrtDeviceGetUuid(1, &u2));
    CHECK(memcmp(u1.bytes, u2.bytes, 16) != 0, "devices 0 and 1 have different UUIDs");
    CHECK(((unsigned char)u1.bytes[6] >> 4) == 8 && ((unsigned char)u1.bytes[8] >> 6) == 2,
          "an RFC 9562 version 8 UUID: %02x %02x", (unsigned char)u1.bytes[6], (unsigned char)u1.bytes[8]);

    char bus[16];
    EXPECT(aclrtDeviceGetPCIBusId(0, NULL, 16), ACL_ERROR_INVALID_PARAM, "pciBusId");
    EXPECT(aclrtDeviceGetPCIBusId(0, bus, 12), ACL_ERROR_RT_PARAM_INVALID, "len");
    EXPECT(aclrtDeviceGetPCIBusId(3, bus, 16), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT_OK(aclrtDeviceGetPCIBusId(1, bus, 16));
    CHECK(strcmp(bus, "0000:02:00.0") == 0, "device 1's bus id: %s", bus);
    EXPECT_OK(aclrtDeviceGetPCIBusId(0, bus, 13));
    CHECK(strcmp(bus, "0000:01:00.0") == 0, "device 0's bus id: %s", bus);
    int32_t device = -1;
    EXPECT_OK(aclrtDeviceGetByPCIBusId("0000:01:00.0", &device));
    CHECK(device == 0, "bus id back to device: %d", device);
    EXPECT_OK(aclrtDeviceGetByPCIBusId("0000:02:00.0", &device));
    CHECK(device == 1, "device 1 is on bus 02: %d", device);
    EXPECT(aclrtDeviceGetByPCIBusId("0000:03:00.0", &device), ACL_ERROR_RT_PARAM_INVALID, "pciBusId");
    EXPECT(aclrtDeviceGetByPCIBusId("0000:01:00.0 ", &device), ACL_ERROR_RT_PARAM_INVALID, "pciBusId");
    EXPECT(aclrtDeviceGetByPCIBusId(NULL, &device), ACL_ERROR_INVALID_PARAM, "pciBusId");
    EXPECT(aclrtDeviceGetByPCIBusId("0000:01:00.0", NULL), ACL_ERROR_INVALID_PARAM, "deviceId");

    uint64_t topo = 0;
    EXPECT_OK(aclrtGetDevicesTopo(0, 0, &topo));
    CHECK(topo == ACL_RT_DEVS_TOPOLOGY_HCCS, "topology of a device with itself: %llu", (unsigned long long)topo);
    EXPECT_OK(aclrtGetDevicesTopo(0, 1, &topo));
    CHECK(topo == ACL_RT_DEVS_TOPOLOGY_HCCS, "topology of devices 0 and 1: %llu", (unsigned long long)topo);
    EXPECT(aclrtGetDevicesTopo(0, 5, &topo), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT(aclrtGetDevicesTopo(0, 0, NULL), ACL_ERROR_INVALID_PARAM, "value");
}

static void test_primary_context(void)
{
    int32_t active = -1;
    uint32_t flags = 0;
    EXPECT(aclrtGetPrimaryCtxState(0, NULL, NULL), ACL_ERROR_INVALID_PARAM, "active");
    EXPECT(aclrtGetPrimaryCtxState(0, &flags, &active), ACL_ERROR_INVALID_PARAM, "flags");
    EXPECT_OK(aclrtGetPrimaryCtxState(0, NULL, &active));
    CHECK(active == 1, "device 0 is set: active %d", active);
    EXPECT_OK(aclrtGetPrimaryCtxState(1, NULL, &active));
    CHECK(active == 0, "device 1 is not set: active %d", active);
}

static void test_limits(void)
{
    size_t value = 0;
    EXPECT(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, NULL), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT(aclrtDeviceGetLimit((aclrtDeviceLimit)5, &value), ACL_ERROR_INVALID_PARAM, "limit");
    EXPECT(aclrtDeviceSetLimit((aclrtDeviceLimit)9, 1), ACL_ERROR_INVALID_PARAM, "limit");
    EXPECT(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, (size_t)UINT32_MAX + 1), ACL_ERROR_INVALID_PARAM,
           "value");
    EXPECT(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, &value), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "SIMT");

    EXPECT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &value));
    CHECK(value == 32768, "default stack 32 KiB: %zu", value);
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 1000)); /* below 32 KiB: ignored */
    EXPECT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &value));
    CHECK(value == 32768, "a smaller stack is ignored: %zu", value);
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 40000));
    EXPECT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &value));
    CHECK(value == 49152, "40000 rounded up to 16 KiB: %zu", value);

    EXPECT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &value));
    CHECK(value == 32768, "default printf FIFO 32 KiB: %zu", value);
    EXPECT(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1023), ACL_ERROR_RT_PARAM_INVALID,
           "printf");
    EXPECT_OK(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, 1025));
    EXPECT_OK(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE, &value));
    CHECK(value == 1032, "1025 rounded up to 8: %zu", value);
}

/* Ascend910B (the default product): CANN's A2/A3 table has peer DMA atomics (signed, 8/16/32
 * bit) and no host atomics. */
static void test_atomic_capabilities(void)
{
    const aclrtAtomicOperation ops[3] = {ACL_RT_ATOMIC_OPERATION_INTEGER_ADD, ACL_RT_ATOMIC_OPERATION_DMA_ADD,
                                         ACL_RT_ATOMIC_OPERATION_DMA_MAX};
    const uint32_t dma = ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR8 |
                         ACL_RT_ATOMIC_CAPABILITY_SCALAR16 | ACL_RT_ATOMIC_CAPABILITY_SCALAR32;
    uint32_t caps[3] = {7, 7, 7};
    EXPECT_OK(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 3, 0));
    CHECK(caps[0] == 0 && caps[1] == 0 && caps[2] == 0, "no host atomics on A2: %u %u %u", caps[0], caps[1],
          caps[2]);
    EXPECT_OK(aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 1));
    CHECK(caps[0] == 0 && caps[1] == dma && caps[2] == dma, "A2 peer DMA atomics: %u %u %u", caps[0], caps[1],
          caps[2]);
    EXPECT(aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 3, 1, 1), ACL_ERROR_RT_INVALID_DEVICEID, "different");
    EXPECT(aclrtDeviceGetHostAtomicCapabilities(NULL, ops, 3, 0), ACL_ERROR_RT_PARAM_INVALID, "capabilities");
    EXPECT(aclrtDeviceGetHostAtomicCapabilities(caps, NULL, 3, 0), ACL_ERROR_RT_PARAM_INVALID, "operations");
    EXPECT(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 0, 0), ACL_ERROR_RT_PARAM_INVALID, "count");
    EXPECT(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 3, 4), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    const aclrtAtomicOperation bad[1] = {(aclrtAtomicOperation)45};
    EXPECT(aclrtDeviceGetHostAtomicCapabilities(caps, bad, 1, 0), ACL_ERROR_RT_PARAM_INVALID, "operations[0]");
}

/* The other products' tables and event counts (CANN's runtime configuration: 950 has the full
 * atomic set for host and peers and 131072 events; 310P and 910 no atomics, 310P 1024 events). */
static void test_other_products(void)
{
    const aclrtAtomicOperation ops[4] = {ACL_RT_ATOMIC_OPERATION_INTEGER_ADD,
                                         ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT,
                                         ACL_RT_ATOMIC_OPERATION_FLOAT_ADD, ACL_RT_ATOMIC_OPERATION_DMA_MIN};
    const uint32_t want950[4] = {
        ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR32 |
            ACL_RT_ATOMIC_CAPABILITY_SCALAR64,
        ACL_RT_ATOMIC_CAPABILITY_UNSIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR32 | ACL_RT_ATOMIC_CAPABILITY_SCALAR64,
        ACL_RT_ATOMIC_CAPABILITY_SCALAR16 | ACL_RT_ATOMIC_CAPABILITY_SCALAR32,
        ACL_RT_ATOMIC_CAPABILITY_SIGNED | ACL_RT_ATOMIC_CAPABILITY_SCALAR8 | ACL_RT_ATOMIC_CAPABILITY_SCALAR16 |
            ACL_RT_ATOMIC_CAPABILITY_SCALAR32};
    uint32_t host[4], peer[4], events = 0;
    CHECK(aclnnCpuSetThreadSocVersion("Ascend950") == 0, "select Ascend950");
    EXPECT_OK(aclrtDeviceGetHostAtomicCapabilities(host, ops, 4, 0));
    EXPECT_OK(aclrtDeviceGetP2PAtomicCapabilities(peer, ops, 4, 1, 0));
    for (int i = 0; i < 4; i++)
        CHECK(host[i] == want950[i] && peer[i] == want950[i], "950 op %d: host %u peer %u, want %u", (int)ops[i],
              host[i], peer[i], want950[i]);
    EXPECT_OK(aclrtGetEventAvailNum(&events));
    CHECK(events == 131072, "Ascend950's events: %u", events);
    CHECK(aclnnCpuSetThreadSocVersion("Ascend310P") == 0, "select Ascend310P");
    EXPECT_OK(aclrtDeviceGetP2PAtomicCapabilities(peer, ops, 4, 0, 1));
    CHECK(peer[0] == 0 && peer[1] == 0 && peer[2] == 0 && peer[3] == 0, "no atomics on 310P");
    EXPECT_OK(aclrtGetEventAvailNum(&events));
    CHECK(events == 1024, "Ascend310P's events: %u", events);
    CHECK(aclnnCpuSetThreadSocVersion(NULL) == 0, "back to the process's product");
}

static void test_memory_errors(void)
{
    aclrtMemUceInfo infos[2];
    memset(infos, 0, sizeof infos);
    size_t got = 99;
    EXPECT(aclrtGetMemUceInfo(0, NULL, 2, &got), ACL_ERROR_INVALID_PARAM, "memUceInfoArray");
    EXPECT(aclrtGetMemUceInfo(0, infos, 2, NULL), ACL_ERROR_INVALID_PARAM, "retSize");
    EXPECT_OK(aclrtGetMemUceInfo(0, infos, 2, &got));
    CHECK(got == 0, "a CPU reports no memory errors: %zu", got);
    EXPECT(aclrtMemUceRepair(0, infos, 129), ACL_ERROR_INVALID_PARAM, "arraySize");
    infos[1].reserved[0] = 1;
    EXPECT(aclrtMemUceRepair(0, infos, 2), ACL_ERROR_INVALID_PARAM, "reserved");
    EXPECT_OK(aclrtMemUceRepair(0, infos, 1));
    aclrtErrorInfo error;
    EXPECT_OK(aclrtGetErrorVerbose(0, &error));
    EXPECT_OK(aclrtRepairError(0, &error));
    EXPECT(aclrtRepairError(0, NULL), ACL_ERROR_INVALID_PARAM, "errorInfo");
}

int main(void)
{
    setenv("ASCEND_RT_VISIBLE_DEVICES", "0,1", 1); /* two devices: peer queries, a second bus id */
    EXPECT_OK(aclInit(NULL));
    test_counts_need_a_device();
    EXPECT_OK(aclFinalize());
    if (tu_open_device() != 0)
        return 1;
    test_stream_and_event_counts();
    test_last_task_id();
    test_identity();
    test_primary_context();
    test_limits();
    test_atomic_capabilities();
    test_other_products();
    test_memory_errors();
    tu_close_device();

    int32_t active = -1;
    EXPECT_OK(aclrtGetPrimaryCtxState(0, NULL, &active));
    CHECK(active == 0, "after the reset device 0 is not set: active %d", active);
    return tu_finish("test_runtime_device_queries");
}
