/*
 * test_runtime_api_ext.c - the runtime calls beyond the operator samples' twenty (docs/runtime.md,
 * "Every function of the runtime headers"): device attributes and capabilities, peer access
 * between two emulated devices, 2-D copies, pointer attributes, frees that synchronize first,
 * 32-bit fills, data buffers, stream failure modes with exception callbacks, operator timeouts
 * (kept, and honoured by synchronize and by event waits),
 * the allocator descriptors, physical memory and IPC memory shared with a child process, and the
 * not-supported status with its message.  Expected values come from the machine (sysconf),
 * from plain C loops, or from the documented constants.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

#include "test_util.h"

/* aclrtMemcpyAsyncWithCondition is deprecated in CANN's header, and still tested here. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void test_device_info(void)
{
    int64_t v = -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    EXPECT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICPU_CORE_NUM, &v));
    CHECK(v == cpus, "AICPU cores %lld, machine has %ld", (long long)v, cpus);
    EXPECT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &v));
    CHECK(v == 3, "AI cores %lld, expected ACLNN_NUM_THREADS=3", (long long)v);
    int64_t cap = -1;
    EXPECT_OK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &cap));
    CHECK(cap == v, "aclGetDeviceCapability %lld vs aclrtGetDeviceInfo %lld", (long long)cap, (long long)v);
    EXPECT_OK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
    CHECK(v == (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE), "global memory %lld", (long long)v);
    EXPECT_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_NPU_ARCH, &v));
    CHECK(v == 2201, "NPU arch %lld, expected 2201 (DAV_2201) for the default Ascend910B", (long long)v);
    EXPECT(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &v), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtGetDeviceInfo");
    EXPECT(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_NPU_ARCH, &v), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    int32_t feature = -1;
    EXPECT_OK(aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &feature));
    CHECK(feature == ACL_DEV_FEATURE_NOT_SUPPORT, "feature %d", feature);
    int32_t bf16 = -1;
    EXPECT_OK(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &bf16));
    CHECK(bf16 == 1, "Ascend910B supports bf16, got %d", bf16);
    const aclCannAttr *list = NULL;
    size_t num = 0;
    EXPECT_OK(aclGetCannAttributeList(&list, &num));
    CHECK(num == 2 && list[0] == ACL_CANN_ATTR_INF_NAN && list[1] == ACL_CANN_ATTR_BF16, "attribute list");
    aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_ABNORMAL;
    EXPECT_OK(aclrtQueryDeviceStatus(1, &status));
    CHECK(status == ACL_RT_DEVICE_STATUS_NORMAL, "status %d", (int)status);
    int32_t least = -1, greatest = -1, id = -1;
    EXPECT_OK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 7 && greatest == 0, "priority range %d..%d", least, greatest);
    EXPECT_OK(aclrtGetPhyDevIdByLogicDevId(1, &id));
    CHECK(id == 1, "physical id %d", id);
    aclrtStream def = NULL;
    EXPECT_OK(aclrtCtxGetCurrentDefaultStream(&def));
    CHECK(def != NULL, "default stream");
    EXPECT_OK(aclrtSynchronizeStream(def));
}

static void test_peer_access(void)
{
    int32_t can = -1, st = -1;
    EXPECT_OK(aclrtDeviceCanAccessPeer(&can, 0, 1));
    CHECK(can == 1, "devices 0 and 1 share the host's memory, canAccessPeer %d", can);
    EXPECT(aclrtDeviceCanAccessPeer(&can, 0, 0), ACL_ERROR_INVALID_PARAM, "cannot be equal to peerDeviceId");
    EXPECT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
    CHECK(st == 0, "access enabled before aclrtDeviceEnablePeerAccess");
    EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0));
    EXPECT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
    CHECK(st == 1, "access not enabled");
    EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0)); /* a repeat succeeds, as programs for cards expect */
    EXPECT_OK(aclrtDevicePeerAccessStatus(0, 1, &st));
    CHECK(st == 1, "access not enabled after a repeated enable");
    EXPECT(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED, "flags");
    EXPECT(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM, "peerDeviceId");
    EXPECT_OK(aclrtDeviceDisablePeerAccess(1));
    EXPECT(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_RT_PARAM_INVALID, "not enabled");
}

static void test_copies(void)
{
    enum { W = 5, H = 7, SP = 9, DP = 12 };
    unsigned char src[SP * H], want[DP * H];
    for (int i = 0; i < SP * H; i++)
        src[i] = (unsigned char)(i * 13 + 1);
    void *dev = NULL;
    EXPECT_OK(aclrtMalloc(&dev, DP * H, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, DP * H, 0xEE, DP * H));
    EXPECT_OK(aclrtMemcpy2d(dev, DP, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(want, 0xEE, sizeof want);
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++)
            want[r * DP + c] = src[r * SP + c];
    unsigned char got[DP * H];
    EXPECT_OK(aclrtMemcpy(got, sizeof got, dev, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(got, want, sizeof got) == 0, "aclrtMemcpy2d rows differ from the loop");
    unsigned char back[SP * H];
    memset(back, 0, sizeof back);
    EXPECT_OK(aclrtMemcpy2dAsync(back, SP, dev, DP, W, H, ACL_MEMCPY_DEVICE_TO_HOST, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    for (int r = 0; r < H; r++)
        CHECK(memcmp(back + r * SP, src + r * SP, W) == 0, "aclrtMemcpy2dAsync row %d", r);
    EXPECT(aclrtMemcpy2d(dev, DP, src, SP, W, 3 * H, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "dst");
    EXPECT(aclrtMemcpy2d(dev, 4, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dpitch");

    uint32_t words[6];
    EXPECT_OK(aclrtMemsetD32(dev, DP * H, 0xA1B2C3D4u, 6));
    EXPECT_OK(aclrtMemcpy(words, sizeof words, dev, sizeof words, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 6; i++)
        CHECK(words[i] == 0xA1B2C3D4u, "aclrtMemsetD32 word %d = %#x", i, words[i]);

    aclrtPtrAttributes attr;
    EXPECT_OK(aclrtPointerGetAttributes((char *)dev + 3, &attr));
    CHECK(attr.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && attr.location.id == 0, "device pointer");
    void *host = NULL;
    EXPECT_OK(aclrtMallocHost(&host, 64));
    EXPECT_OK(aclrtPointerGetAttributes(host, &attr));
    CHECK(attr.location.type == ACL_MEM_LOCATION_TYPE_HOST, "aclrtMallocHost pointer type %d", (int)attr.location.type);
    EXPECT_OK(aclrtPointerGetAttributes(src, &attr));
    CHECK(attr.location.type == ACL_MEM_LOCATION_TYPE_UNREGISTERED, "stack pointer type %d", (int)attr.location.type);
    void *base = NULL;
    size_t size = 0;
    EXPECT_OK(aclrtMemGetAddressRange((char *)dev + 10, &base, &size));
    CHECK(base == dev && size >= DP * H, "address range %p + %zu", base, size);
    EXPECT_OK(aclrtFreeHostWithDevSync(host));
    EXPECT_OK(aclrtFreeWithDevSync(dev));
    EXPECT(aclrtFreeWithDevSync(dev), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree");

    int payload = 5;
    aclDataBuffer *buffer = aclCreateDataBuffer(&payload, sizeof payload);
    CHECK(aclGetDataBufferAddr(buffer) == &payload && aclGetDataBufferSizeV2(buffer) == sizeof payload, "buffer");
    EXPECT_OK(aclUpdateDataBuffer(buffer, NULL, 0));
    CHECK(aclGetDataBufferAddr(buffer) == NULL && aclGetDataBufferSizeV2(buffer) == 0, "updated buffer");
    EXPECT_OK(aclDestroyDataBuffer(buffer));
}

/* ---- failure modes and exception callbacks ------------------------------------------------- */

static atomic_int g_host_runs, g_exceptions;
static atomic_uint g_exception_code, g_exception_device;

static void count_run(void *arg)
{
    (void)arg;
    atomic_fetch_add(&g_host_runs, 1);
}

static void on_exception(aclrtExceptionInfo *info)
{
    int64_t unused;
    /* a callback that calls the runtime, even failing, must not replace the task's message */
    (void)aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &unused);
    atomic_fetch_add(&g_exceptions, 1);
    atomic_store(&g_exception_code, aclrtGetErrorCodeFromExceptionInfo(info));
    atomic_store(&g_exception_device, aclrtGetDeviceIdFromExceptionInfo(info));
}

/* Queues a max-pool backward whose first mask index lies outside the input plane: it fails in
 * its kernel, on the worker.  Buffers are freed after the caller synchronizes. */
static void *g_bufs[5];
static void queue_failing_task(aclrtStream stream)
{
    static const int64_t X[4] = {1, 1, 4, 4}, Y[4] = {1, 1, 2, 2}, M[4] = {1, 1, 4, 64}, K[2] = {2, 2}, P[2] = {0, 0},
                         D[2] = {1, 1};
    const int64_t *dims[4] = {Y, X, M, X};
    aclDataType types[4] = {ACL_FLOAT, ACL_FLOAT, ACL_INT8, ACL_FLOAT};
    aclTensor *t[4];
    for (int i = 0; i < 4; i++) {
        size_t bytes = (size_t)(dims[i][2] * dims[i][3]) * aclDataTypeSize(types[i]);
        aclrtMalloc(&g_bufs[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemset(g_bufs[i], bytes, 0, bytes);
        t[i] = aclCreateTensor(dims[i], 4, types[i], NULL, 0, ACL_FORMAT_NCHW, dims[i], 4, g_bufs[i]);
    }
    int32_t bad = 99;
    aclrtMemcpy(g_bufs[2], 4, &bad, 4, ACL_MEMCPY_HOST_TO_DEVICE);
    aclIntArray *k = aclCreateIntArray(K, 2), *p = aclCreateIntArray(P, 2), *d = aclCreateIntArray(D, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(t[0], t[1], t[2], k, k, p, d, false, t[3], &ws, &ex));
    g_bufs[4] = NULL;
    if (ws > 0)
        aclrtMalloc(&g_bufs[4], ws, ACL_MEM_MALLOC_HUGE_FIRST);
    EXPECT_OK(aclnnMaxPool2dWithMaskBackward(g_bufs[4], ws, ex, stream));
    for (int i = 0; i < 4; i++)
        aclDestroyTensor(t[i]);
    aclDestroyIntArray(k);
    aclDestroyIntArray(p);
    aclDestroyIntArray(d);
}

static void free_failing_task_buffers(void)
{
    for (int i = 0; i < 5; i++)
        if (g_bufs[i] != NULL)
            aclrtFree(g_bufs[i]);
}

static void test_failure_modes(void)
{
    EXPECT_OK(aclrtExceptionInfoCallbackRegister(on_exception));
    EXPECT(aclrtExceptionInfoCallbackRegister(on_exception), ACL_ERROR_INVALID_PARAM, "already registered");
    aclrtStream s = NULL;
    EXPECT_OK(aclrtCreateStream(&s));
    for (int stop = 0; stop <= 1; stop++) {
        EXPECT_OK(aclrtSetStreamFailureMode(s, stop ? ACL_STOP_ON_FAILURE : ACL_CONTINUE_ON_FAILURE));
        atomic_store(&g_host_runs, 0);
        atomic_store(&g_exceptions, 0);
        queue_failing_task(s);
        EXPECT_OK(aclrtLaunchHostFunc(s, count_run, NULL));
        CHECK(aclrtSynchronizeStream(s) != ACL_SUCCESS, "the failing task's error must reach the synchronize");
        const char *msg = aclGetRecentErrMsg();
        CHECK(msg != NULL && strstr(msg, "aclrtGetDeviceInfo") == NULL && strstr(msg, "MaxPool") != NULL,
              "the synchronize reports the task's message, got \"%s\"", msg != NULL ? msg : "(null)");
        free_failing_task_buffers();
        CHECK(atomic_load(&g_host_runs) == (stop ? 0 : 1), "mode %d: the task after the failure ran %d times",
              stop, atomic_load(&g_host_runs));
        CHECK(atomic_load(&g_exceptions) == 1 && atomic_load(&g_exception_code) != 0 &&
                  atomic_load(&g_exception_device) == 0,
              "exception callback: %d calls, code %u", atomic_load(&g_exceptions), atomic_load(&g_exception_code));
        /* after the error was reported, the stream runs tasks again */
        EXPECT_OK(aclrtLaunchHostFunc(s, count_run, NULL));
        EXPECT_OK(aclrtSynchronizeStream(s));
        CHECK(atomic_load(&g_host_runs) == (stop ? 1 : 2), "mode %d: stream did not recover", stop);
    }
    EXPECT(aclrtSetStreamFailureMode(s, 2), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT_OK(aclrtExceptionInfoCallbackUnregister(on_exception));
    EXPECT(aclrtExceptionInfoCallbackUnregister(on_exception), ACL_ERROR_INVALID_PARAM, "not registered");
    EXPECT_OK(aclrtDestroyStream(s));
}

static void test_timeouts(void)
{
    uint32_t ms = 1;
    uint64_t actual = 0, interval = 0;
    EXPECT_OK(aclrtSetOpWaitTimeout(30));
    EXPECT_OK(aclrtSetOpExecuteTimeOut(2));
    EXPECT_OK(aclrtGetOpExecuteTimeout(&ms));
    CHECK(ms == 2000, "execute timeout %u ms after 2 s", ms);
    EXPECT_OK(aclrtSetOpExecuteTimeOutWithMs(250));
    EXPECT_OK(aclrtGetOpExecuteTimeout(&ms));
    CHECK(ms == 250, "execute timeout %u ms", ms);
    EXPECT_OK(aclrtGetOpTimeOutInterval(&interval));
    EXPECT_OK(aclrtSetOpExecuteTimeOutV2(1500, &actual));
    CHECK(interval > 0 && actual % interval == 0 && actual >= 1500 && actual < 1500 + interval,
          "V2: %llu us with interval %llu", (unsigned long long)actual, (unsigned long long)interval);
    EXPECT_OK(aclrtSetOpExecuteTimeOut(0));
}

static void sleep_600ms(void *arg)
{
    (void)arg;
    tu_sleep_ms(600);
}

/* The timeouts are honoured: a synchronize gives up on a task that overruns the execute timeout
 * (the task itself finishes later), and an event wait gives up after the wait timeout. */
static void test_timeouts_honoured(void)
{
    aclrtStream a = NULL, b = NULL;
    aclrtEvent ev = NULL;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    EXPECT_OK(aclrtCreateEvent(&ev));

    EXPECT_OK(aclrtSetOpExecuteTimeOutWithMs(150));
    EXPECT_OK(aclrtLaunchHostFunc(a, sleep_600ms, NULL));
    EXPECT(aclrtSynchronizeStream(a), ACL_ERROR_RT_AICORE_TIMEOUT, "aclrtSetOpExecuteTimeOut");
    EXPECT_OK(aclrtSetOpExecuteTimeOut(0));
    EXPECT_OK(aclrtSynchronizeStream(a)); /* the task ran to its end */

    EXPECT_OK(aclrtSetOpWaitTimeout(1));
    atomic_store(&g_host_runs, 0);
    EXPECT_OK(aclrtLaunchHostFunc(a, sleep_600ms, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(a, sleep_600ms, NULL));
    EXPECT_OK(aclrtRecordEvent(ev, a)); /* recorded after 1.2 s */
    EXPECT_OK(aclrtStreamWaitEvent(b, ev));
    EXPECT_OK(aclrtLaunchHostFunc(b, count_run, NULL));
    EXPECT(aclrtSynchronizeStream(b), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "aclrtSetOpWaitTimeout");
    CHECK(atomic_load(&g_host_runs) == 1, "the task after the failed wait ran %d times", atomic_load(&g_host_runs));
    EXPECT_OK(aclrtSetOpWaitTimeout(0));
    EXPECT_OK(aclrtSynchronizeStream(a));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
}

/* ---- allocator descriptors ------------------------------------------------------------------ */

static void *alloc_cb(aclrtAllocator a, size_t n) { (void)a; (void)n; return NULL; }
static void free_cb(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a; (void)b; }
static void *addr_cb(aclrtAllocatorBlock b) { return b; }

static void test_allocator(void)
{
    int obj = 0;
    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    CHECK(desc != NULL, "descriptor");
    EXPECT_OK(aclrtAllocatorSetObjToDesc(desc, &obj));
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(desc, alloc_cb));
    EXPECT(aclrtAllocatorRegister(tu_stream, desc), ACL_ERROR_INVALID_PARAM, "free");
    EXPECT_OK(aclrtAllocatorSetFreeFuncToDesc(desc, free_cb));
    EXPECT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, addr_cb));
    EXPECT_OK(aclrtAllocatorRegister(tu_stream, desc));
    aclrtAllocatorDesc got_desc = NULL;
    aclrtAllocator got_obj = NULL;
    aclrtAllocatorAllocFunc got_alloc = NULL;
    aclrtAllocatorFreeFunc got_free = NULL;
    aclrtAllocatorGetAddrFromBlockFunc got_addr = NULL;
    EXPECT_OK(aclrtAllocatorGetByStream(tu_stream, &got_desc, &got_obj, &got_alloc, &got_free, NULL, &got_addr));
    CHECK(got_desc == desc && got_obj == &obj && got_alloc == alloc_cb && got_free == free_cb && got_addr == addr_cb,
          "registered allocator");
    EXPECT(aclrtAllocatorGetByStream(NULL, &got_desc, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM,
           "no allocator");
    EXPECT_OK(aclrtAllocatorUnregister(tu_stream));
    EXPECT(aclrtAllocatorUnregister(tu_stream), ACL_ERROR_INVALID_PARAM, "no allocator");
    EXPECT_OK(aclrtAllocatorDestroyDesc(desc));
    EXPECT(aclrtAllocatorDestroyDesc(desc), ACL_ERROR_INVALID_PARAM, "aclrtAllocatorDestroyDesc");
}

/* ---- physical memory shared with another process ------------------------------------------- */

static void test_shareable_handle(void)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    EXPECT_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    aclrtDrvMemHandle h = NULL;
    void *va = NULL;
    EXPECT_OK(aclrtMallocPhysical(&h, gran, &prop, 0));
    EXPECT_OK(aclrtReserveMemAddress(&va, gran, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(va, gran, 0, h, 0));
    EXPECT_OK(aclrtMemset(va, gran, 0x11, gran));
    uint64_t shareable = 0;
    EXPECT_OK(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &shareable));
    int32_t pid[1];
    pid_t child = fork();
    if (child == 0) {
        /* the importer: another process (a forked copy of this one, its runtime already set up),
         * the exporter's memory */
        int bad = 0;
        aclrtDrvMemHandle mine = NULL;
        void *mva = NULL;
        bad |= aclrtMemImportFromShareableHandle(shareable, 0, &mine) != 0;
        if (bad)
            fprintf(stderr, "child: %s\n", aclGetRecentErrMsg());
        bad |= aclrtReserveMemAddress(&mva, gran, 0, NULL, 0) != 0;
        bad |= aclrtMapMem(mva, gran, 0, mine, 0) != 0;
        unsigned char seen = 0;
        bad |= aclrtMemcpy(&seen, 1, (char *)mva + gran - 1, 1, ACL_MEMCPY_DEVICE_TO_HOST) != 0;
        bad |= seen != 0x11;
        bad |= aclrtMemset(mva, gran, 0x22, 1) != 0; /* the parent sees this write */
        bad |= aclrtUnmapMem(mva) != 0 || aclrtFreePhysical(mine) != 0 || aclrtReleaseMemAddress(mva) != 0;
        _exit(bad ? 3 : 0);
    }
    pid[0] = (int32_t)child;
    EXPECT_OK(aclrtMemSetPidToShareableHandle(shareable, pid, 1));
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the importing process failed (status %d)", wstatus);
    unsigned char first = 0;
    EXPECT_OK(aclrtMemcpy(&first, 1, va, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(first == 0x22, "the child's write is not visible: %#x", first);
    EXPECT_OK(aclrtUnmapMem(va));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(va));
    aclrtDrvMemHandle none = NULL;
    EXPECT(aclrtMemImportFromShareableHandle(shareable, 0, &none), ACL_ERROR_RT_PARAM_INVALID,
           "aclrtMemImportFromShareableHandle");
}

/* aclrtIpcMem*: a 4 MiB aclrtMalloc block is exported by key; another process imports it,
 * reads what this one wrote and writes back; a block of 1 KiB shares its pages with other data
 * and is refused. */
static void test_ipc_memory(void)
{
    const size_t size = (size_t)4 << 20;
    unsigned char *dev = NULL;
    EXPECT_OK(aclrtMalloc((void **)&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dev, size, 0x33, size));
    char key[65], again[65];
    EXPECT(aclrtIpcMemGetExportKey(dev, size, key, 8, 0), ACL_ERROR_INVALID_PARAM, "len");
    EXPECT_OK(aclrtIpcMemGetExportKey(dev, size, key, sizeof key, 0));
    EXPECT_OK(aclrtIpcMemGetExportKey(dev + 4096, 4096, again, sizeof again, 0)); /* same pages, second key */
    int32_t pid[1] = {0};
    pid_t child = fork();
    if (child == 0) {
        void *mine = NULL, *part = NULL;
        unsigned char seen[2] = {0, 0};
        int bad = aclrtIpcMemImportByKey(&mine, key, 0) != 0;
        bad |= aclrtIpcMemImportByKey(&part, again, 0) != 0;
        bad |= aclrtMemcpy(&seen[0], 1, (char *)mine + size - 1, 1, ACL_MEMCPY_DEVICE_TO_HOST) != 0;
        bad |= aclrtMemset(mine, size, 0x44, 16) != 0; /* seen by the exporter and by the second key */
        bad |= aclrtMemcpy(&seen[1], 1, part, 1, ACL_MEMCPY_DEVICE_TO_HOST) != 0;
        bad |= seen[0] != 0x33 || seen[1] != 0x33;
        bad |= aclrtMemset(part, 4096, 0x55, 1) != 0;
        bad |= aclrtIpcMemClose(key) != 0 || aclrtIpcMemClose(again) != 0;
        _exit(bad ? 3 : 0);
    }
    pid[0] = (int32_t)child;
    EXPECT_OK(aclrtIpcMemSetImportPid(key, pid, 1));
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the importing process failed (status %d)", wstatus);
    /* read with aclrtMemcpy (tu_dev_byte): device memory is not host memory */
    const unsigned b0 = tu_dev_byte(dev, 0), b15 = tu_dev_byte(dev, 15), b16 = tu_dev_byte(dev, 16),
                   b4096 = tu_dev_byte(dev, 4096), last = tu_dev_byte(dev, size - 1);
    CHECK(b0 == 0x44 && b15 == 0x44 && b16 == 0x33 && b4096 == 0x55 && last == 0x33,
          "the exporter sees %#x %#x %#x %#x", b0, b16, b4096, last);
    EXPECT_OK(aclrtIpcMemClose(key));
    EXPECT_OK(aclrtIpcMemClose(again));
    EXPECT(aclrtIpcMemClose(key), ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose");
    EXPECT_OK(aclrtMemset(dev, size, 0, size)); /* still ordinary device memory */
    EXPECT_OK(aclrtFree(dev));
    void *small = NULL, *imported = NULL;
    EXPECT_OK(aclrtMalloc(&small, 1024, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(aclrtIpcMemGetExportKey(small, 1024, key, sizeof key, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMapMem");
    EXPECT_OK(aclrtFree(small));
    EXPECT(aclrtIpcMemImportByKey(&imported, "name", 0), ACL_ERROR_INVALID_PARAM, "aclrtIpcMemGetExportKey");
}

/* The variants that forward to an implemented call with their default argument. */
static void test_variants(void)
{
    aclrtEvent ev = NULL;
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT_OK(aclrtCreateEvent(&ev));
    EXPECT_OK(aclrtRecordEventWithFlag(ev, tu_stream, ACL_EVENT_RECORD_DEFAULT));
    EXPECT_OK(aclrtStreamWaitEventWithFlag(tu_stream, ev, 0, ACL_EVENT_WAIT_DEFAULT));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtQueryEventStatus(ev, &st));
    CHECK(st == ACL_EVENT_RECORDED_STATUS_COMPLETE, "record with the default flag did not complete");
    /* EXTERNAL (a captured model's record seen outside it) is a plain record here */
    EXPECT_OK(aclrtRecordEventWithFlag(ev, tu_stream, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_OK(aclrtStreamWaitEventWithFlag(tu_stream, ev, 0, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT(aclrtRecordEventWithFlag(ev, tu_stream, 7), ACL_ERROR_INVALID_PARAM, "flag");
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR));
    EXPECT(aclrtSetTsDevice(ACL_TS_ID_RESERVED), ACL_ERROR_INVALID_PARAM, "tsId");

    static _Alignas(4096) unsigned char page[4096];
    void *dev_view = NULL, *reg = NULL;
    EXPECT(aclrtHostGetDevicePointer(page, &dev_view, 0), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "aclrtHostRegister");
    EXPECT_OK(aclrtHostRegister(page, sizeof page, ACL_HOST_REGISTER_MAPPED, &reg));
    EXPECT_OK(aclrtHostGetDevicePointer(page + 100, &dev_view, 0));
    CHECK(dev_view == page + 100, "device view of registered memory %p", dev_view);
    EXPECT_OK(aclrtHostUnregister(page));

    void *a = NULL, *b = NULL;
    EXPECT_OK(aclrtMalloc(&a, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&b, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    void *list[2] = {a, (char *)b + 8};
    uint32_t result = 7;
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    CHECK(result == 1, "two device addresses: result %u", result);
    list[1] = page;
    EXPECT_OK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
    CHECK(result == 0, "a host address counted as device memory");

    /* pinned and 64-byte aligned host buffers, as aclrtMemcpyAsync's page requires */
    unsigned char *pinned = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 256));
    unsigned char *in1 = pinned, *in2 = pinned + 64, *out1 = pinned + 128, *out2 = pinned + 192;
    memset(pinned, 0, 256);
    for (int i = 0; i < 16; i++) {
        in1[i] = (unsigned char)i;
        in2[i] = (unsigned char)(100 + i);
    }
    void *dsts[4] = {a, b, out1, out2}, *srcs[4] = {in1, in2, a, b};
    size_t maxes[4] = {256, 256, 16, 16}, sizes[4] = {16, 16, 16, 16}, fail = 0;
    EXPECT_OK(aclrtMemcpyBatch(dsts, maxes, srcs, sizes, 4, NULL, NULL, 0, &fail));
    CHECK(fail == SIZE_MAX && memcmp(out1, in1, 16) == 0 && memcmp(out2, in2, 16) == 0, "batched copies");
    sizes[1] = 512;
    EXPECT(aclrtMemcpyBatch(dsts, maxes, srcs, sizes, 4, NULL, NULL, 0, &fail), ACL_ERROR_RT_PARAM_INVALID, "destMax");
    CHECK(fail == 1, "failIndex %zu, expected 1", fail);
    void *back[2] = {out1, out2}, *devs[2] = {a, b};
    size_t bmax[2] = {16, 16}, bsizes[2] = {16, 16};
    memset(out1, 0, 16);
    memset(out2, 0, 16);
    EXPECT_OK(aclrtMemset(a, 256, 0x61, 16));
    EXPECT_OK(aclrtMemcpyAsyncWithCondition(b, 256, in2, 16, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtMemcpyBatchAsync(back, bmax, devs, bsizes, 2, NULL, NULL, 0, &fail, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(out1[0] == 0x61 && out1[15] == 0x61 && memcmp(out2, in2, 16) == 0, "batched asynchronous copies");
    EXPECT_OK(aclrtFree(a));
    EXPECT_OK(aclrtFree(b));
    EXPECT_OK(aclrtFreeHost(pinned));

    EXPECT_OK(aclrtHostRegisterV2(page, sizeof page, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    EXPECT_OK(aclrtHostGetDevicePointer(page, &dev_view, 0));
    CHECK(dev_view == page, "aclrtHostRegisterV2 device view %p", dev_view);
    EXPECT_OK(aclrtHostUnregister(page));
    EXPECT(aclrtHostRegisterV2(page, sizeof page, ACL_HOST_REG_IOMEMORY), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "flag");
    aclrtHostMemMapCapability capability = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    EXPECT_OK(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_SDMA, &capability));
    CHECK(capability == ACL_RT_HOST_MEM_MAP_SUPPORTED, "host memory mapping capability %d", (int)capability);
    int32_t tgid = 0;
    EXPECT_OK(aclrtDeviceGetBareTgid(&tgid));
    CHECK(tgid == (int32_t)getpid(), "tgid %d, pid %d", tgid, (int)getpid());
}

static void test_not_supported(void)
{
    aclrtBinHandle bin = NULL;
    EXPECT(aclrtBinaryLoadFromFile("k.o", NULL, &bin), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "device kernels");
    (void)aclGetRecentErrMsg();
    CHECK(aclrtCreateGroupInfo() == NULL, "a not-supported handle constructor returns NULL");
    EXPECT_MSG_CLEARED("aclrtCreateGroupInfo", "aclrtCreateGroupInfo", "not supported");
}

int main(void)
{
    setenv("ASCEND_RT_VISIBLE_DEVICES", "0,1", 1);
    setenv("ACLNN_NUM_THREADS", "3", 1);
    if (tu_open_device())
        return 1;
    test_device_info();
    test_peer_access();
    test_copies();
    test_failure_modes();
    test_timeouts();
    test_timeouts_honoured();
    test_allocator();
    test_shareable_handle();
    test_ipc_memory();
    test_variants();
    test_not_supported();
    tu_close_device();
    return tu_finish("test_runtime_api_ext");
}
