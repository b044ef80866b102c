/*
 * test_runtime_queries.c - small runtime functions CANN's samples and clients call (issue 43,
 * items 6 and 7):
 *   - aclsysGetVersionStr / aclsysGetVersionNum / aclsysGetCANNVersion for the "runtime" package
 *     (0_runtime_compatibility sample): the number follows from the string by CANN's formula
 *     major * 10^7 + minor * 10^5 + patch * 10^3, computed here from the string;
 *   - aclrtEventGetTimestamp: the completion time in us, between the host's CLOCK_MONOTONIC
 *     before the record and after the synchronize, and consistent with aclrtEventElapsedTime;
 *   - aclrtMallocHost blocks start on a page, so aclrtHostRegisterV2 accepts them (the zero-copy
 *     sample);
 *   - aclrtGetResInCurrentThread, aclrtCheckArchCompatibility, aclrtGetErrorVerbose;
 *   - stream configurations: aclrtCreateStreamConfigHandle, aclrtSetStreamConfigOpt,
 *     aclrtCreateStreamV2, and a copy on the stream made from one.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "test_util.h"

/* aclsysGetCANNVersion is deprecated in CANN and still tested. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void versions(void)
{
    char runtime[] = "runtime", cann[] = "cann", driver[] = "driver";
    char text[ACL_PKG_VERSION_MAX_SIZE] = {0};
    int32_t number = 0;
    EXPECT_OK(aclsysGetVersionStr(runtime, text));
    EXPECT_OK(aclsysGetVersionNum(runtime, &number));
    int major = -1, minor = -1, patch = -1;
    CHECK(sscanf(text, "%d.%d.%d", &major, &minor, &patch) == 3, "version string %s", text);
    CHECK(number == major * 10000000 + minor * 100000 + patch * 1000, "version number %d for %s", number, text);
    char again[ACL_PKG_VERSION_MAX_SIZE] = {0};
    EXPECT_OK(aclsysGetVersionStr(cann, again));
    CHECK(strcmp(again, text) == 0, "\"cann\" is the runtime package: %s vs %s", again, text);
    EXPECT(aclsysGetVersionStr(driver, again), ACL_ERROR_INVALID_FILE, "driver");
    EXPECT(aclsysGetVersionNum(driver, &number), ACL_ERROR_INVALID_FILE, "driver");
    EXPECT(aclsysGetVersionStr(NULL, again), ACL_ERROR_INVALID_PARAM, "pkgName");

    aclCANNPackageVersion parts;
    EXPECT_OK(aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &parts));
    CHECK(strcmp(parts.version, text) == 0, "aclsysGetCANNVersion %s vs %s", parts.version, text);
    CHECK(atoi(parts.majorVersion) == major && atoi(parts.minorVersion) == minor &&
              atoi(parts.releaseVersion) == patch && strcmp(parts.patchVersion, "0") == 0,
          "parts %s.%s.%s.%s", parts.majorVersion, parts.minorVersion, parts.releaseVersion, parts.patchVersion);
    EXPECT(aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &parts), ACL_ERROR_INVALID_FILE, "aclsysGetCANNVersion");
}

static uint64_t monotonic_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static void event_timestamps(void)
{
    aclrtEvent first = NULL, second = NULL;
    EXPECT_OK(aclrtCreateEventWithFlag(&first, ACL_EVENT_TIME_LINE));
    EXPECT_OK(aclrtCreateEventWithFlag(&second, ACL_EVENT_TIME_LINE));
    uint64_t stamp = 0;
    EXPECT(aclrtEventGetTimestamp(first, &stamp), ACL_ERROR_RT_PARAM_INVALID, "never been recorded");
    EXPECT(aclrtEventGetTimestamp(first, NULL), ACL_ERROR_INVALID_PARAM, "timestamp");

    uint64_t before = monotonic_us();
    EXPECT_OK(aclrtRecordEvent(first, tu_stream));
    tu_sleep_ms(3);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtRecordEvent(second, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    uint64_t after = monotonic_us();
    uint64_t stamp1 = 0, stamp2 = 0;
    EXPECT_OK(aclrtEventGetTimestamp(first, &stamp1));
    EXPECT_OK(aclrtEventGetTimestamp(second, &stamp2));
    CHECK(before <= stamp1 && stamp1 <= stamp2 && stamp2 <= after, "stamps %llu %llu outside [%llu, %llu]",
          (unsigned long long)stamp1, (unsigned long long)stamp2, (unsigned long long)before,
          (unsigned long long)after);
    float elapsed_ms = 0.0f;
    EXPECT_OK(aclrtEventElapsedTime(&elapsed_ms, first, second));
    double from_stamps_ms = (double)(stamp2 - stamp1) / 1000.0;
    CHECK(elapsed_ms - from_stamps_ms < 0.002 && from_stamps_ms - elapsed_ms < 0.002,
          "elapsed %g ms, stamps say %g ms", (double)elapsed_ms, from_stamps_ms);
    EXPECT_OK(aclrtDestroyEvent(first));
    EXPECT_OK(aclrtDestroyEvent(second));
}

static void host_blocks_on_pages(void)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const size_t sizes[] = {1, 100, 5000, 1u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *block = NULL;
        EXPECT_OK(aclrtMallocHost(&block, sizes[i]));
        CHECK((uintptr_t)block % page == 0, "aclrtMallocHost(%zu) = %p is not page-aligned", sizes[i], block);
        memset(block, 0x5a, sizes[i]);
        EXPECT_OK(aclrtHostRegisterV2(block, sizes[i], ACL_HOST_REG_MAPPED));
        void *device = NULL;
        EXPECT_OK(aclrtHostGetDevicePointer(block, &device, 0));
        CHECK(device != NULL && tu_dev_byte(device, sizes[i] - 1) == 0x5a, "the registered block reads back");
        EXPECT_OK(aclrtHostUnregister(block));
        EXPECT_OK(aclrtFreeHost(block));
    }
}

/* Resource limits (rt_res_limit.c): a device's starts at its core count; a stream's wins for a
 * thread that uses the stream's resources; resets bring the defaults back. */
static void res_limits(uint32_t cores)
{
    uint32_t v = 0;
    EXPECT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
    CHECK(v == cores, "device 0's cube limit starts at %u, not %u", v, cores);
    if (cores < 2)
        return; /* the limits below need a smaller value to set */
    EXPECT_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, cores - 1));
    EXPECT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "device vector limit %u", v);
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "the thread follows the device's limit: %u", v);
    EXPECT(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, cores + 1), ACL_ERROR_RT_PARAM_INVALID, "value");
    EXPECT(aclrtSetDeviceResLimit(0, (aclrtDevResLimitType)2, 1), ACL_ERROR_RT_PARAM_INVALID, "type");
    EXPECT(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, NULL), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT(aclrtGetDeviceResLimit(99, ACL_RT_DEV_RES_CUBE_CORE, &v), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");

    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "a stream without a limit reports its device's: %u", v);
    EXPECT_OK(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, 1));
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "a stream's limit applies before the thread uses it: %u", v);
    EXPECT_OK(aclrtUseStreamResInCurrentThread(s));
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == 1, "the thread uses the stream's limit: %u", v);
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &v));
    CHECK(v == cores, "a type the stream does not limit follows the device: %u", v);
    EXPECT_OK(aclrtUnuseStreamResInCurrentThread(s));
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "unused: %u", v);
    EXPECT_OK(aclrtResetStreamResLimit(s));
    EXPECT_OK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores - 1, "after the stream's reset: %u", v);
    EXPECT_OK(aclrtDestroyStream(s));
    EXPECT_OK(aclrtResetDeviceResLimit(0));
    EXPECT_OK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v));
    CHECK(v == cores, "after the device's reset: %u", v);
}

static void device_queries(void)
{
    int64_t cores = 0;
    EXPECT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &cores));
    uint32_t cube = 0, vector = 0;
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &cube));
    EXPECT_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &vector));
    CHECK(cube > 0 && cube == (uint32_t)cores && vector == cube, "cube %u vector %u, device cores %lld", cube,
          vector, (long long)cores);
    EXPECT(aclrtGetResInCurrentThread((aclrtDevResLimitType)5, &cube), ACL_ERROR_RT_PARAM_INVALID, "type");

    res_limits((uint32_t)cores);

    int32_t compatible = -1;
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910B"));
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend910B2", &compatible));
    CHECK(compatible == 1, "Ascend910B2 on Ascend910B: %d", compatible);
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend910B", &compatible));
    CHECK(compatible == 1, "Ascend910B on Ascend910B: %d", compatible);
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend310P3", &compatible));
    CHECK(compatible == 0, "Ascend310P3 on Ascend910B: %d", compatible);
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend910_9391", &compatible));
    CHECK(compatible == 0, "Ascend910_9391 on Ascend910B: %d", compatible);
    EXPECT_OK(aclrtCheckArchCompatibility("not a soc", &compatible));
    CHECK(compatible == 0, "an unknown name: %d", compatible);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend310P"));
    EXPECT_OK(aclrtCheckArchCompatibility("Ascend310P3", &compatible));
    CHECK(compatible == 1, "Ascend310P3 on Ascend310P: %d", compatible);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910B"));
    EXPECT(aclrtCheckArchCompatibility(NULL, &compatible), ACL_ERROR_INVALID_PARAM, "socVersion");

    aclrtErrorInfo info;
    memset(&info, 0xab, sizeof info);
    EXPECT_OK(aclrtGetErrorVerbose(0, &info));
    CHECK(info.errorType == ACL_RT_NO_ERROR && info.tryRepair == 0 && info.hasDetail == 0,
          "error type %d, tryRepair %d, hasDetail %d", (int)info.errorType, info.tryRepair, info.hasDetail);
    EXPECT(aclrtGetErrorVerbose(99, &info), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
}

static void stream_configurations(void)
{
    aclrtStreamConfigHandle *config = aclrtCreateStreamConfigHandle();
    CHECK(config != NULL, "aclrtCreateStreamConfigHandle");
    if (config == NULL)
        return;
    uint32_t flag = ACL_STREAM_FAST_LAUNCH, priority = 3;
    size_t work_size = 0;
    void *work = NULL;
    EXPECT_OK(aclrtSetStreamConfigOpt(config, ACL_RT_STREAM_FLAG, &flag, sizeof flag));
    EXPECT_OK(aclrtSetStreamConfigOpt(config, ACL_RT_STREAM_PRIORITY, &priority, sizeof priority));
    EXPECT_OK(aclrtSetStreamConfigOpt(config, ACL_RT_STREAM_WORK_SIZE, &work_size, sizeof work_size));
    EXPECT_OK(aclrtSetStreamConfigOpt(config, ACL_RT_STREAM_WORK_ADDR_PTR, &work, sizeof work));
    CHECK(config->flag == ACL_STREAM_FAST_LAUNCH && config->priority == 3, "flag %zu priority %u", config->flag,
          config->priority);
    EXPECT(aclrtSetStreamConfigOpt(config, ACL_RT_STREAM_FLAG, &flag, 2), ACL_ERROR_INVALID_PARAM, "valueSize");
    EXPECT(aclrtSetStreamConfigOpt(config, (aclrtStreamConfigAttr)9, &flag, sizeof flag), ACL_ERROR_INVALID_PARAM,
           "attr");

    aclrtStream stream = NULL;
    EXPECT_OK(aclrtCreateStreamV2(&stream, config));
    int32_t values[64], back[64];
    for (int i = 0; i < 64; i++)
        values[i] = 3 * i - 17;
    void *device = NULL;
    EXPECT_OK(aclrtMalloc(&device, sizeof values, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(device, sizeof values, values, sizeof values, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemsetAsync(device, sizeof values, 0, sizeof values / 2, stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    EXPECT_OK(aclrtMemcpy(back, sizeof back, device, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++)
        CHECK(back[i] == (i < 32 ? 0 : values[i]), "element %d: %d", i, back[i]);
    EXPECT_OK(aclrtFree(device));
    EXPECT_OK(aclrtDestroyStream(stream));
    EXPECT(aclrtCreateStreamV2(&stream, NULL), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT_OK(aclrtDestroyStreamConfigHandle(config));
    EXPECT(aclrtDestroyStreamConfigHandle(NULL), ACL_ERROR_INVALID_PARAM, "handle");
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    versions();
    event_timestamps();
    host_blocks_on_pages();
    device_queries();
    stream_configurations();
    tu_close_device();
    return tu_finish("test_runtime_queries");
}
