/*
 * test_runtime_mem_pool.c - stream-ordered memory pools (acl/acl_rt_memory_soma.h, docs/runtime.md
 * "Stream-ordered memory pools"): CANN's checks and statuses for every call, 2 MiB blocks and
 * the four byte counters, data copied through pool memory in stream order, reuse on the stream
 * that freed a block, no reuse across streams unless allowed (and never while the free is still
 * queued), the release threshold applied at a synchronize, TrimTo, maxSize, and destroy rules.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

#define MiB ((uint64_t)1 << 20)

static aclrtMemPoolProps device_props(size_t max_size)
{
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = max_size;
    return props;
}

static uint64_t attr64(aclrtMemPool pool, aclrtMemPoolAttr attr)
{
    uint64_t value = 12345;
    EXPECT_OK(aclrtMemPoolGetAttr(pool, attr, &value));
    return value;
}

static void set64(aclrtMemPool pool, aclrtMemPoolAttr attr, uint64_t value)
{
    EXPECT_OK(aclrtMemPoolSetAttr(pool, attr, &value));
}

static void set32(aclrtMemPool pool, aclrtMemPoolAttr attr, uint32_t value)
{
    EXPECT_OK(aclrtMemPoolSetAttr(pool, attr, &value));
}

static void test_create_checks(void)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(8 * MiB);
    EXPECT(aclrtMemPoolCreate(NULL, &props), ACL_ERROR_INVALID_PARAM, "memPool");
    EXPECT(aclrtMemPoolCreate(&pool, NULL), ACL_ERROR_INVALID_PARAM, "poolProps");
    props.allocType = (aclrtMemAllocationType)1;
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM, "allocType");
    props = device_props(8 * MiB);
    props.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM, "location.type");
    props = device_props(8 * MiB);
    props.reserved[31] = 1;
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM, "reserved");
    props = device_props(8 * MiB);
    props.location.id = 999;
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_INVALID_DEVICEID, "location.id");
    props = device_props(8 * MiB);
    props.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "handleType");
    props = device_props(SIZE_MAX / 2);
    EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_PARAM_INVALID, "maxSize");
    CHECK(pool == NULL, "a refused create wrote the handle");

    /* CANN documents pools on Atlas A2 only */
    static const char *const without[] = {"Ascend910", "Ascend910_93", "Ascend950", "Ascend310P"};
    for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
        EXPECT_OK(aclnnCpuSetSocVersion(without[i]));
        props = device_props(8 * MiB);
        EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, without[i]);
        props.allocType = (aclrtMemAllocationType)1;
        EXPECT(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM, "allocType"); /* the acl layer first */
    }
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    CHECK(pool == NULL, "a refused create wrote the handle");

    /* maxSize is rounded up to 2 MiB: a threshold up to the rounded size is accepted */
    props = device_props(10 * MiB + 1);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    set64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 12 * MiB);
    uint64_t too_big = 12 * MiB + 1;
    EXPECT(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &too_big), ACL_ERROR_RT_INTERNAL_ERROR,
           "maxSize");
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_INTERNAL_ERROR, "already destroyed");
    EXPECT(aclrtMemPoolDestroy(NULL), ACL_ERROR_INVALID_PARAM, "memPool");

    /* maxSize 0: the device's memory */
    props = device_props(0);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    size_t free_bytes = 0, total = 0;
    EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total));
    uint64_t at_total = total / (2 * MiB) * (2 * MiB);
    EXPECT_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &at_total));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
}

static void test_attributes(void)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(16 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    static const aclrtMemPoolAttr flags[] = {ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                                             ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
                                             ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES};
    for (int i = 0; i < 3; i++) {
        uint32_t value = 7;
        EXPECT_OK(aclrtMemPoolGetAttr(pool, flags[i], &value));
        CHECK(value == 0, "reuse flag %d defaults to %u, CANN's default is 0", (int)flags[i], value);
        set32(pool, flags[i], 5); /* any non-zero value turns it on, stored as 1 */
        EXPECT_OK(aclrtMemPoolGetAttr(pool, flags[i], &value));
        CHECK(value == 1, "reuse flag %d reads %u after setting 5", (int)flags[i], value);
    }
    for (aclrtMemPoolAttr a = ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD; a <= ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH; a++)
        CHECK(attr64(pool, a) == 0, "attr %d of a new pool is not 0", (int)a);

    uint64_t value = 0;
    EXPECT(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &value), ACL_ERROR_RT_PARAM_INVALID,
           "read-only");
    EXPECT(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value), ACL_ERROR_RT_PARAM_INVALID,
           "read-only");
    value = 1;
    EXPECT(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value), ACL_ERROR_RT_INTERNAL_ERROR, "0");
    EXPECT(aclrtMemPoolSetAttr(pool, (aclrtMemPoolAttr)9, &value), ACL_ERROR_RT_INTERNAL_ERROR, "attr");
    EXPECT(aclrtMemPoolGetAttr(pool, (aclrtMemPoolAttr)0, &value), ACL_ERROR_RT_INTERNAL_ERROR, "attr");
    EXPECT(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, NULL), ACL_ERROR_RT_PARAM_INVALID, "value");
    EXPECT(aclrtMemPoolSetAttr(NULL, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value), ACL_ERROR_INVALID_PARAM,
           "memPool");
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT(aclrtMemPoolGetAttr(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value), ACL_ERROR_RT_PARAM_INVALID,
           "not a pool");
}

/* Data written into pool memory by queued copies comes back; the counters follow CANN's. */
static void test_malloc_copy_free(void)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(8 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    void *ptr = (void *)0x1;
    EXPECT(aclrtMemPoolMallocAsync(NULL, 64, pool, tu_stream), ACL_ERROR_INVALID_PARAM, "ptr");
    EXPECT(aclrtMemPoolMallocAsync(&ptr, 64, NULL, tu_stream), ACL_ERROR_INVALID_PARAM, "memPool");
    EXPECT(aclrtMemPoolMallocAsync(&ptr, 64, pool, NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT_OK(aclrtMemPoolMallocAsync(&ptr, 0, pool, tu_stream)); /* CANN: nothing happens */
    CHECK(ptr == (void *)0x1, "a 0-byte allocation wrote *ptr");
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0, "0 bytes reserved memory");

    /* asynchronous copies take pinned host memory (CANN's aclrtMemcpyAsync page) */
    enum { COUNT = 3000 };
    const size_t bytes = COUNT * sizeof(int32_t);
    int32_t *host_in = NULL, *host_out = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&host_in, bytes));
    EXPECT_OK(aclrtMallocHost((void **)&host_out, bytes));
    for (int i = 0; i < COUNT; i++)
        host_in[i] = i * 7 - 1000;
    EXPECT_OK(aclrtMemPoolMallocAsync(&ptr, bytes, pool, tu_stream));
    CHECK(ptr != NULL && ptr != (void *)0x1 && (uintptr_t)ptr % 512 == 0, "pool block %p", ptr);
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 2 * MiB, "one 2 MiB block reserved");
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 2 * MiB, "one 2 MiB block used");

    aclrtPtrAttributes attributes;
    EXPECT_OK(aclrtPointerGetAttributes(ptr, &attributes));
    CHECK(attributes.location.type == ACL_MEM_LOCATION_TYPE_DEVICE, "pool memory is device memory");
    EXPECT(aclrtFree(ptr), ACL_ERROR_RT_PARAM_INVALID, "release it with aclrtMemPoolFreeAsync");

    /* the whole 2 MiB block is the allocation's: a copy at its far end is in bounds */
    EXPECT_OK(aclrtMemcpyAsync(ptr, 2 * MiB, host_in, bytes, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtMemsetAsync((char *)ptr + 2 * MiB - 16, 16, 0xab, 16, tu_stream));
    EXPECT_OK(aclrtMemcpyAsync(host_out, bytes, ptr, bytes, ACL_MEMCPY_DEVICE_TO_HOST, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(ptr, tu_stream));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0, "freed memory counts unused at once");
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(memcmp(host_in, host_out, bytes) == 0, "the bytes copied through pool memory differ");
    EXPECT_OK(aclrtFreeHost(host_in));
    EXPECT_OK(aclrtFreeHost(host_out));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) == 2 * MiB, "used high-water mark");
    /* threshold 0: the synchronize gave the idle block back */
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0, "idle memory kept past a synchronize");
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == 2 * MiB, "reserved high-water mark");
    set64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, 0);
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) == 0, "reserved high-water mark reset");
    EXPECT_OK(aclrtMemPoolDestroy(pool));
}

static void test_free_checks(void)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(4 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    void *a = NULL, *b = NULL, *c = NULL, *plain = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&a, 1, pool, tu_stream));
    EXPECT_OK(aclrtMemPoolMallocAsync(&b, 2 * MiB, pool, tu_stream));
    CHECK(a != b, "two live allocations share %p", a);
    EXPECT(aclrtMemPoolMallocAsync(&c, 1, pool, tu_stream), ACL_ERROR_RT_INTERNAL_ERROR, "maxSize");
    EXPECT(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_INTERNAL_ERROR, "in use");

    EXPECT(aclrtMemPoolFreeAsync(NULL, tu_stream), ACL_ERROR_INVALID_PARAM, "ptr");
    EXPECT(aclrtMemPoolFreeAsync((char *)a + 64, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "inside");
    /* aclrtMalloc memory is freed when the stream reaches the call, as CANN does */
    EXPECT_OK(aclrtMalloc(&plain, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemsetAsync(plain, 64, 0x33, 64, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(plain, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT(aclrtFree(plain), ACL_ERROR_RT_PARAM_INVALID, "already freed");
    EXPECT_OK(aclrtMallocHost(&plain, 64));
    EXPECT(aclrtMemPoolFreeAsync(plain, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "aclrtMalloc");
    EXPECT_OK(aclrtFreeHost(plain));
    EXPECT_OK(aclrtMemPoolFreeAsync(a, tu_stream));
    EXPECT(aclrtMemPoolFreeAsync(a, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "already freed");

    /* TrimTo: not below what is in use, not above maxSize */
    EXPECT(aclrtMemPoolTrimTo(NULL, 0), ACL_ERROR_INVALID_PARAM, "memPool");
    EXPECT(aclrtMemPoolTrimTo(pool, 0), ACL_ERROR_RT_INTERNAL_ERROR, "in use");
    EXPECT(aclrtMemPoolTrimTo(pool, 4 * MiB + 1), ACL_ERROR_RT_INTERNAL_ERROR, "maxSize");
    EXPECT_OK(aclrtMemPoolFreeAsync(b, tu_stream));
    set64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 4 * MiB);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 4 * MiB, "the threshold keeps idle memory");
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 2 * MiB));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 2 * MiB, "TrimTo(2 MiB)");
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0, "TrimTo(0)");
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT(aclrtMemPoolMallocAsync(&c, 1, pool, tu_stream), ACL_ERROR_RT_INTERNAL_ERROR, "not a pool");
    EXPECT(aclrtMemPoolTrimTo(pool, 0), ACL_ERROR_RT_INTERNAL_ERROR, "not a pool");
}

static atomic_int g_gate;

static void wait_for_gate(void *args)
{
    (void)args;
    while (!atomic_load(&g_gate))
        tu_sleep_ms(1);
}

/* Reuse: on the freeing stream at once (stream order); on another stream only after the free
 * ran and only with opportunistic reuse on; never while the free is still queued. */
static void test_reuse(void)
{
    aclrtStream other = NULL;
    EXPECT_OK(aclrtCreateStream(&other));
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(64 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    set64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 64 * MiB); /* keep idle blocks */

    /* the free waits behind a host function: only tu_stream may take the block meanwhile */
    atomic_store(&g_gate, 0);
    void *first = NULL, *again = NULL, *elsewhere = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&first, 3 * MiB, pool, tu_stream));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtMemPoolFreeAsync(first, tu_stream));
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 1);
    EXPECT_OK(aclrtMemPoolMallocAsync(&elsewhere, 1 * MiB, pool, other));
    CHECK(elsewhere != first, "another stream got a block whose free is still queued");
    EXPECT_OK(aclrtMemPoolMallocAsync(&again, 4 * MiB, pool, tu_stream)); /* best fit: the 4 MiB block */
    CHECK(again == first, "the freeing stream did not reuse its block (%p, %p)", again, first);
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtMemPoolFreeAsync(again, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(elsewhere, other));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(other));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 6 * MiB, "two blocks (4 + 2 MiB) kept");

    /* the frees ran, made with opportunistic reuse on: another stream takes the block (it waits
     * for the event recorded after the free, which also shows racecheck the order) */
    void *taken = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&taken, 3 * MiB, pool, other));
    CHECK(taken == first, "opportunistic reuse: got %p, the 4 MiB block is %p", taken, first);
    EXPECT_OK(aclrtMemPoolFreeAsync(taken, other));
    EXPECT_OK(aclrtSynchronizeStream(other));
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 0);
    EXPECT_OK(aclrtMemPoolMallocAsync(&taken, 3 * MiB, pool, tu_stream));
    CHECK(taken != first, "tu_stream took the block other freed with cross-stream reuse off");
    EXPECT_OK(aclrtMemPoolFreeAsync(taken, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0, "nothing in use");

    /* a free made with cross-stream reuse off has no event: opportunistic reuse still takes its
     * block once the free ran, but not under racecheck, which could not see the order */
    const char *check = getenv("ACLNN_CHECK");
    const int racecheck = check != NULL && (strcmp(check, "1") == 0 || strstr(check, "race") != NULL ||
                                            strstr(check, "all") != NULL);
    void *late = NULL, *late_taken = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&late, 7 * MiB, pool, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(late, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 1);
    EXPECT_OK(aclrtMemPoolMallocAsync(&late_taken, 7 * MiB, pool, other));
    CHECK((late_taken == late) == !racecheck, "reuse without an event: got %p, the 8 MiB block is %p", late_taken,
          late);
    EXPECT_OK(aclrtMemPoolFreeAsync(late_taken, other));
    EXPECT_OK(aclrtSynchronizeStream(other));
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC, 0);

    /* internal dependencies: another stream takes a block whose free is still queued, and waits
     * for that free before its own tasks run */
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 1);
    atomic_store(&g_gate, 0);
    void *held = NULL, *waiting = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&held, 15 * MiB, pool, tu_stream));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtMemPoolFreeAsync(held, tu_stream));
    EXPECT_OK(aclrtMemPoolMallocAsync(&waiting, 15 * MiB, pool, other));
    CHECK(waiting == held, "internal dependencies: got %p, the queued free's block is %p", waiting, held);
    EXPECT_OK(aclrtMemsetAsync(waiting, 16, 0x42, 16, other));
    tu_sleep_ms(20);
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    EXPECT_OK(aclrtStreamQuery(other, &status));
    CHECK(status != ACL_STREAM_STATUS_COMPLETE, "the stream that took the block did not wait for its free");
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(other));
    CHECK(tu_dev_byte(waiting, 15) == 0x42, "the fill after the wait did not land");
    EXPECT_OK(aclrtMemPoolFreeAsync(waiting, other));
    EXPECT_OK(aclrtSynchronizeStream(other));
    set32(pool, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 0);

    /* a destroy with frees still queued: they finish, then the blocks go */
    atomic_store(&g_gate, 0);
    EXPECT_OK(aclrtMemPoolMallocAsync(&taken, 1, pool, tu_stream));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtMemPoolFreeAsync(taken, tu_stream));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtDestroyStream(other));
}

/* A free that aclrtDestroyStreamForce drops (with the tasks before it) leaves its block idle. */
static void test_dropped_free(void)
{
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(8 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    set64(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, 8 * MiB);
    aclrtStream doomed = NULL;
    aclrtEvent later = NULL;
    EXPECT_OK(aclrtCreateStream(&doomed));
    EXPECT_OK(aclrtCreateEvent(&later));
    atomic_store(&g_gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtRecordEvent(later, tu_stream)); /* completes only when the gate opens */
    void *block = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&block, 1, pool, doomed));
    EXPECT_OK(aclrtStreamWaitEvent(doomed, later));
    EXPECT_OK(aclrtMemPoolFreeAsync(block, doomed));
    EXPECT_OK(aclrtDestroyStreamForce(doomed)); /* wakes the wait, drops it and the free */
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT) == 0, "the dropped free's block counts as used");
    EXPECT_OK(aclrtMemPoolTrimTo(pool, 0)); /* only idle blocks go */
    CHECK(attr64(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT) == 0, "the dropped free left its block busy");
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtDestroyEvent(later));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
}

/* An operator in stream order between the allocations and the frees, on pool memory only. */
static void test_operator_on_pool_memory(void)
{
    enum { N = 2, C = 3, HW = 40, COUNT = N * C * HW };
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props = device_props(16 * MiB);
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    float *host = NULL;
    /* three 64-byte aligned parts, as CANN's aclrtMemcpyAsync page asks */
    EXPECT_OK(aclrtMallocHost((void **)&host, (2 * COUNT + 16) * sizeof(float)));
    float *host_x = host, *host_w = host + COUNT, *host_out = host + COUNT + 16;
    for (int i = 0; i < COUNT; i++)
        host_x[i] = (float)(i % 13) - 6.0f;
    for (int c = 0; c < C; c++)
        host_w[c] = -0.5f * (float)(c + 1);
    void *x = NULL, *w = NULL, *out = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&x, COUNT * sizeof(float), pool, tu_stream));
    EXPECT_OK(aclrtMemPoolMallocAsync(&w, C * sizeof(float), pool, tu_stream));
    EXPECT_OK(aclrtMemPoolMallocAsync(&out, COUNT * sizeof(float), pool, tu_stream));
    EXPECT_OK(aclrtMemcpyAsync(x, COUNT * sizeof(float), host_x, COUNT * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE,
                               tu_stream));
    EXPECT_OK(aclrtMemcpyAsync(w, C * sizeof(float), host_w, C * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    const int64_t shape[3] = {N, C, HW}, strides[3] = {C * HW, HW, 1}, weight_shape[1] = {C};
    aclTensor *tx = aclCreateTensor(shape, 3, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 3, x);
    aclTensor *tw = aclCreateTensor(weight_shape, 1, ACL_FLOAT, strides + 2, 0, ACL_FORMAT_ND, weight_shape, 1, w);
    aclTensor *ty = aclCreateTensor(shape, 3, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 3, out);
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(tx, tw, ty, &ws_size, &ex));
    CHECK(ws_size == 0, "a contiguous fp32 PReLU asked for %llu workspace bytes", (unsigned long long)ws_size);
    EXPECT_OK(aclnnPrelu(NULL, 0, ex, tu_stream));
    EXPECT_OK(aclrtMemcpyAsync(host_out, COUNT * sizeof(float), out, COUNT * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST,
                               tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(x, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(w, tu_stream));
    EXPECT_OK(aclrtMemPoolFreeAsync(out, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    int wrong = 0;
    for (int i = 0; i < COUNT; i++) {
        const float want = host_x[i] > 0.0f ? host_x[i] : host_w[(i / HW) % C] * host_x[i];
        wrong += host_out[i] != want;
    }
    CHECK(wrong == 0, "%d of %d outputs differ from the host's PReLU", wrong, COUNT);
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    EXPECT_OK(aclrtFreeHost(host));
    EXPECT_OK(aclrtMemPoolDestroy(pool));
}

int main(void)
{
    if (tu_open_device())
        return 1;
    test_create_checks();
    test_attributes();
    test_malloc_copy_free();
    test_operator_on_pool_memory();
    test_free_checks();
    test_reuse();
    test_dropped_free();
    tu_close_device();
    return tu_finish("test_runtime_mem_pool");
}
