/*
 * test_runtime_mem_usage.c - aclrtGetMemUsageInfo (docs/runtime.md "Memory usage"): the bytes
 * aclrtMalloc, the memory pools and managed memory hold now and at most, in CANN's order (the
 * largest now first), counted as each allocator rounds; inputNum caps the answer; the checks.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"

#include "test_util.h"

#define MiB ((uint64_t)1 << 20)

typedef struct usage {
    uint64_t current, peak;
    int found;
} usage;

/* The row named `name` of a full query (found 0 when it is not listed). */
static usage row(const char *name)
{
    aclrtMemUsageInfo info[8];
    size_t count = 0;
    usage u = {0, 0, 0};
    EXPECT_OK(aclrtGetMemUsageInfo(0, info, 8, &count));
    for (size_t i = 0; i < count; i++) {
        CHECK(i == 0 || info[i - 1].curMemSize >= info[i].curMemSize, "row %zu is larger now than row %zu", i,
              i - 1);
        if (strcmp(info[i].name, name) == 0)
            u = (usage){info[i].curMemSize, info[i].memPeakSize, 1};
    }
    return u;
}

int main(void)
{
    if (tu_open_device())
        return 1;
    aclrtMemUsageInfo info[4];
    size_t count = 99;
    EXPECT(aclrtGetMemUsageInfo(0, NULL, 4, &count), ACL_ERROR_INVALID_PARAM, "memUsageInfo");
    EXPECT(aclrtGetMemUsageInfo(0, info, 4, NULL), ACL_ERROR_INVALID_PARAM, "outputNum");
    EXPECT(aclrtGetMemUsageInfo(0, info, 0, &count), ACL_ERROR_RT_PARAM_INVALID, "inputNum");
    CHECK(count == 0, "a refused query left outputNum %zu", count);
    EXPECT(aclrtGetMemUsageInfo(64, info, 4, &count), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");

    /* aclrtMalloc: round_up(size, 32) + 32 usable bytes each */
    const usage before = row("aclrtMalloc");
    void *a = NULL, *b = NULL;
    EXPECT_OK(aclrtMalloc(&a, 1000, ACL_MEM_MALLOC_HUGE_FIRST)); /* 1024 + 32 */
    EXPECT_OK(aclrtMalloc(&b, 3 * MiB, ACL_MEM_MALLOC_HUGE_FIRST));
    usage now = row("aclrtMalloc");
    CHECK(now.found && now.current == before.current + 1056 + 3 * MiB + 32, "aclrtMalloc holds %llu, expected %llu",
          (unsigned long long)now.current, (unsigned long long)(before.current + 1056 + 3 * MiB + 32));
    EXPECT_OK(aclrtFree(b));
    usage after = row("aclrtMalloc");
    CHECK(after.current == before.current + 1056, "after a free: %llu", (unsigned long long)after.current);
    CHECK(after.peak >= now.current, "the peak %llu forgot %llu", (unsigned long long)after.peak,
          (unsigned long long)now.current);

    /* a pool's blocks (2 MiB each) and managed memory (2 MiB granules) */
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 16 * MiB;
    EXPECT_OK(aclrtMemPoolCreate(&pool, &props));
    void *p = NULL, *m = NULL;
    EXPECT_OK(aclrtMemPoolMallocAsync(&p, 5 * MiB, pool, tu_stream));
    EXPECT_OK(aclrtMemAllocManaged(&m, 1, ACL_RT_MEM_ATTACH_GLOBAL));
    usage pooled = row("aclrtMemPool"), managed = row("aclrtMemAllocManaged");
    CHECK(pooled.found && pooled.current == 6 * MiB && pooled.peak == 6 * MiB, "pool: %llu now, %llu at most",
          (unsigned long long)pooled.current, (unsigned long long)pooled.peak);
    CHECK(managed.found && managed.current == 2 * MiB, "managed: %llu", (unsigned long long)managed.current);
    CHECK(row("aclrtMalloc").current == after.current, "pool or managed memory counted as aclrtMalloc's");

    /* inputNum caps the answer; the first row is the largest now (the pool's 6 MiB) */
    EXPECT_OK(aclrtGetMemUsageInfo(0, info, 1, &count));
    CHECK(count == 1 && strcmp(info[0].name, "aclrtMemPool") == 0, "first of 1: %zu rows, '%s'", count, info[0].name);

    EXPECT_OK(aclrtMemPoolFreeAsync(p, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream)); /* threshold 0: the idle block goes */
    EXPECT_OK(aclrtFree(m));
    pooled = row("aclrtMemPool");
    managed = row("aclrtMemAllocManaged");
    CHECK(pooled.current == 0 && pooled.peak == 6 * MiB, "pool after its free: %llu now, %llu at most",
          (unsigned long long)pooled.current, (unsigned long long)pooled.peak);
    CHECK(managed.current == 0 && managed.peak == 2 * MiB, "managed after aclrtFree: %llu now, %llu at most",
          (unsigned long long)managed.current, (unsigned long long)managed.peak);
    CHECK(row("aclrtMalloc").current == after.current, "freeing managed memory changed aclrtMalloc's count");
    EXPECT_OK(aclrtMemPoolDestroy(pool));
    EXPECT_OK(aclrtFree(a));
    tu_close_device();
    return tu_finish("test_runtime_mem_usage");
}
