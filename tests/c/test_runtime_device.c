/*
 * test_runtime_device.c - devices, contexts and device-wide queries (docs/runtime.md):
 * 107002 before any aclrtSetDevice, 107001 for ids outside [0, count), reference-counted
 * SetDevice/ResetDevice, a default context shared by threads, explicit contexts with their
 * own default stream, aclrtGetMemInfo and the saturation mode.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

static void test_no_device(void)
{
    int32_t device = 7;
    aclrtContext ctx = NULL;
    EXPECT(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice");
    EXPECT(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM, "deviceId");
    EXPECT(aclrtGetCurrentContext(&ctx), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext");
    EXPECT(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSynchronizeDevice");
    EXPECT(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSynchronizeStream");
    size_t free_bytes, total_bytes;
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes), ACL_ERROR_RT_CONTEXT_NULL,
           "aclrtGetMemInfo");
    aclrtStream stream;
    EXPECT(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "aclrtCreateStream");
}

static void test_device_ids(void)
{
    uint32_t count = 0;
    EXPECT_OK(aclrtGetDeviceCount(&count));
    CHECK(count == 1, "device count %u, expected 1 without ASCEND_RT_VISIBLE_DEVICES", count);
    EXPECT(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM, "count");
    EXPECT(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT(aclrtResetDevice(5), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    aclrtContext ctx;
    EXPECT(aclrtCreateContext(&ctx, 3), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
}

static void test_reference_count(void)
{
    int32_t device = -1;
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtGetDevice(&device));
    CHECK(device == 0, "device %d", device);
    EXPECT_OK(aclrtResetDevice(0)); /* count 2 -> 1: still set */
    EXPECT_OK(aclrtGetDevice(&device));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtResetDevice(0)); /* count 1 -> 0: default context gone */
    EXPECT(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice");

    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtResetDeviceForce(0)); /* one call releases all three */
    EXPECT(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice");
}

typedef struct thread_probe {
    aclError before;
    aclError set;
    aclrtContext ctx;
} thread_probe;

static void *other_thread(void *arg)
{
    thread_probe *probe = arg;
    int32_t device;
    probe->before = aclrtGetDevice(&device);
    (void)aclGetRecentErrMsg();
    probe->set = aclrtSetDevice(0);
    probe->ctx = NULL;
    (void)aclrtGetCurrentContext(&probe->ctx);
    (void)aclrtResetDevice(0);
    return NULL;
}

static void test_threads_share_default_context(void)
{
    aclrtContext main_ctx = NULL;
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtGetCurrentContext(&main_ctx));
    thread_probe probe = {0, 0, NULL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, &probe) == 0, "pthread_create");
    pthread_join(thread, NULL);
    CHECK(probe.before == ACL_ERROR_RT_CONTEXT_NULL, "a new thread has no device: got %d",
          probe.before);
    CHECK(probe.set == ACL_SUCCESS, "aclrtSetDevice in thread: %d", probe.set);
    CHECK(probe.ctx == main_ctx, "threads setting the same device share its default context");
    int32_t device = -1;
    EXPECT_OK(aclrtGetDevice(&device)); /* the thread's reset left our reference */
    EXPECT_OK(aclrtResetDevice(0));
}

static void test_explicit_context(void)
{
    aclrtContext default_ctx = NULL, ctx = NULL, current = NULL;
    EXPECT(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM, "context");
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtGetCurrentContext(&default_ctx));
    EXPECT_OK(aclrtCreateContext(&ctx, 0));
    CHECK(ctx != NULL && ctx != default_ctx, "a new context");
    EXPECT_OK(aclrtGetCurrentContext(&current));
    CHECK(current == ctx, "aclrtCreateContext makes the context current");

    /* The explicit context has its own default stream and streams. */
    aclrtStream stream = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    unsigned char *buffer = NULL;
    EXPECT_OK(aclrtMalloc((void **)&buffer, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemsetAsync(buffer, 64, 0x5A, 64, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL)); /* the two streams are not ordered otherwise */
    EXPECT_OK(aclrtMemsetAsync(buffer + 32, 32, 0x11, 32, stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    unsigned char seen[64] = {0};
    EXPECT_OK(aclrtMemcpy(seen, sizeof seen, buffer, sizeof seen, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(seen[0] == 0x5A && seen[63] == 0x11, "memsets on the context's streams ran");

    EXPECT(aclrtDestroyContext(default_ctx), ACL_ERROR_INVALID_PARAM, "default context");
    EXPECT(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM, "context");
    EXPECT(aclrtSetCurrentContext((aclrtContext)&current), ACL_ERROR_INVALID_PARAM,
           "aclrtSetCurrentContext");
    EXPECT_OK(aclrtSetCurrentContext(default_ctx));
    EXPECT_OK(aclrtGetCurrentContext(&current));
    CHECK(current == default_ctx, "last aclrtSetCurrentContext wins");

    /* Destroying the context destroys its streams (after their work). */
    EXPECT_OK(aclrtDestroyContext(ctx));
    EXPECT(aclrtDestroyContext(ctx), ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext");
    EXPECT(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM, "context");
    EXPECT(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclrtSetCurrentContext(ctx), ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext");
    EXPECT_OK(aclrtFree(buffer));

    /* A thread whose current context was destroyed has none. */
    EXPECT_OK(aclrtCreateContext(&ctx, 0));
    EXPECT_OK(aclrtDestroyContext(ctx));
    EXPECT(aclrtGetCurrentContext(&current), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext");
    EXPECT_OK(aclrtSetCurrentContext(default_ctx));
    EXPECT_OK(aclrtResetDevice(0));
}

static void test_device_queries(void)
{
    EXPECT_OK(aclrtSetDevice(0));
    size_t free_bytes = 0, total_bytes = 0;
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes));
    CHECK(total_bytes > ((size_t)64 << 20) && free_bytes > 0 && free_bytes <= total_bytes,
          "HBM free %zu total %zu", free_bytes, total_bytes);
    EXPECT_OK(aclrtGetMemInfo(ACL_DDR_MEM, &free_bytes, &total_bytes));
    CHECK(total_bytes > 0, "DDR total %zu", total_bytes);
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM_P2P_NORMAL, &free_bytes, &total_bytes));
    CHECK(free_bytes == 0 && total_bytes == 0, "P2P memory is reported as 0/0");
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total_bytes), ACL_ERROR_INVALID_PARAM, "free");
    EXPECT(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, NULL), ACL_ERROR_INVALID_PARAM, "total");
    EXPECT(aclrtGetMemInfo((aclrtMemAttr)99, &free_bytes, &total_bytes), ACL_ERROR_INVALID_PARAM,
           "attr");

    aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
    EXPECT_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    EXPECT_OK(aclrtGetDeviceSatMode(&mode));
    CHECK(mode == ACL_RT_OVERFLOW_MODE_SATURATION, "sat mode %d", (int)mode);
    EXPECT_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
    EXPECT_OK(aclrtGetDeviceSatMode(&mode));
    CHECK(mode == ACL_RT_OVERFLOW_MODE_INFNAN, "sat mode %d", (int)mode);
    EXPECT(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT(aclrtGetDeviceSatMode(NULL), ACL_ERROR_INVALID_PARAM, "mode");

    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSynchronizeDeviceWithTimeout(-1));
    EXPECT_OK(aclrtSynchronizeDeviceWithTimeout(100));
    EXPECT(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclrtResetDevice(0)); /* resetting an unused device is tolerated */
}

int main(void)
{
    unsetenv("ASCEND_RT_VISIBLE_DEVICES"); /* read at first use */
    test_no_device();
    test_device_ids();
    EXPECT_OK(aclInit(NULL));
    test_reference_count();
    test_threads_share_default_context();
    test_explicit_context();
    test_device_queries();
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_device");
}
