/*
 * test_runtime_managed.c - managed (unified) memory (docs/runtime.md "Managed memory"): the host
 * and queued copies both reach it, aclrtFree releases it, advice and prefetch locations read back
 * per 2 MiB page with CANN's answers for mixed ranges (-2, ACL_MEM_LOCATIONTYPE_INVALID), and
 * every call's checks and statuses.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

#define MiB ((size_t)1 << 20)
#define PAGE (2 * MiB)

static const aclrtMemManagedLocation kDevice0 = {ACL_MEM_LOCATIONTYPE_DEVICE, 0};
static const aclrtMemManagedLocation kHost = {ACL_MEM_LOCATIONTYPE_HOST, 0};

static int32_t attr_int(aclrtMemManagedRangeAttribute attribute, const void *ptr, size_t size)
{
    int32_t value = 12345;
    EXPECT_OK(aclrtMemManagedGetAttr(attribute, ptr, size, &value, sizeof value));
    return value;
}

static void test_alloc_and_access(void)
{
    void *ptr = NULL;
    EXPECT(aclrtMemAllocManaged(NULL, 64, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM, "ptr");
    EXPECT(aclrtMemAllocManaged(&ptr, 64, 0), ACL_ERROR_INVALID_PARAM, "flag");
    EXPECT(aclrtMemAllocManaged(&ptr, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_PARAM_INVALID, "size");

    EXPECT_OK(aclrtMemAllocManaged(&ptr, 3 * MiB, ACL_RT_MEM_ATTACH_GLOBAL));
    CHECK(ptr != NULL && (uintptr_t)ptr % PAGE == 0, "managed memory %p not 2 MiB aligned", ptr);
    aclrtPtrAttributes attributes;
    EXPECT_OK(aclrtPointerGetAttributes((char *)ptr + 100, &attributes));
    CHECK(attributes.location.type == ACL_MEM_LOCATION_TYPE_MANAGED, "location type %d, expected MANAGED",
          (int)attributes.location.type);

    /* the host writes it directly, the device (a queued copy) reads it, and back */
    int32_t *values = ptr;
    enum { COUNT = 1000 };
    for (int i = 0; i < COUNT; i++)
        values[i] = 3 * i + 1;
    void *device = NULL;
    EXPECT_OK(aclrtMalloc(&device, COUNT * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpyAsync(device, COUNT * sizeof(int32_t), ptr, COUNT * sizeof(int32_t),
                               ACL_MEMCPY_DEVICE_TO_DEVICE, tu_stream));
    /* rounded up to 2 MiB: the last byte of the second page is the allocation's */
    EXPECT_OK(aclrtMemsetAsync((char *)ptr + 4 * MiB - 8, 8, 0x5a, 8, tu_stream));
    EXPECT_OK(aclrtMemcpyAsync((char *)ptr + 2 * MiB, COUNT * sizeof(int32_t), device, COUNT * sizeof(int32_t),
                               ACL_MEMCPY_DEVICE_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    const int32_t *copied = (const int32_t *)((char *)ptr + 2 * MiB);
    int mismatches = 0;
    for (int i = 0; i < COUNT; i++)
        mismatches += copied[i] != 3 * i + 1;
    CHECK(mismatches == 0, "%d values differ after the round trip through device memory", mismatches);
    CHECK(((unsigned char *)ptr)[4 * MiB - 1] == 0x5a, "the queued fill did not reach the host's view");
    EXPECT_OK(aclrtFree(device));
    EXPECT_OK(aclrtFree(ptr));
    int32_t value = 0;
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, 1, &value, 4), ACL_ERROR_RT_PARAM_INVALID,
           "aclrtMemAllocManaged");
}

static void test_advice(void)
{
    char *ptr = NULL;
    EXPECT_OK(aclrtMemAllocManaged((void **)&ptr, 2 * PAGE, ACL_RT_MEM_ATTACH_GLOBAL));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, 2 * PAGE) == 0, "read mostly by default");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, 2 * PAGE) == -2, "no preferred location");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, 1) == ACL_MEM_LOCATIONTYPE_INVALID,
          "no preferred location type");

    EXPECT_OK(aclrtMemManagedAdvise(ptr, PAGE, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, PAGE) == 1, "page 0 read mostly");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr + 100, 10) == 1, "a part of page 0");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, PAGE + 1) == 0, "pages 0-1 mixed: 0");

    EXPECT_OK(aclrtMemManagedAdvise(ptr, PAGE, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, kDevice0));
    EXPECT_OK(aclrtMemManagedAdvise(ptr + PAGE, PAGE, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, kHost));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, PAGE) == 0, "page 0 prefers device 0");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr + PAGE, PAGE) == -1, "page 1 prefers the host");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, 2 * PAGE) == -2, "mixed: -2");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, PAGE) == ACL_MEM_LOCATIONTYPE_DEVICE,
          "page 0 type");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr + PAGE, 1) == ACL_MEM_LOCATIONTYPE_HOST,
          "page 1 type");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, ptr, 2 * PAGE) == ACL_MEM_LOCATIONTYPE_INVALID,
          "mixed type");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, ptr, PAGE) == 0, "page 0 id");
    EXPECT_OK(aclrtMemManagedAdvise(ptr, PAGE, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, kDevice0));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, ptr, PAGE) == -2, "unset: -2");

    /* accessed by: the host (-1) and device 0 on both pages, then the host taken off page 1 */
    EXPECT_OK(aclrtMemManagedAdvise(ptr, 2 * PAGE, ACL_MEM_ADVISE_SET_ACCESSED_BY, kDevice0));
    EXPECT_OK(aclrtMemManagedAdvise(ptr, 2 * PAGE, ACL_MEM_ADVISE_SET_ACCESSED_BY, kHost));
    int32_t by[3] = {9, 9, 9};
    EXPECT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 2 * PAGE, by, sizeof by));
    CHECK(by[0] == -1 && by[1] == 0 && by[2] == -2, "accessed by {%d, %d, %d}, expected {-1, 0, -2}", by[0], by[1],
          by[2]);
    EXPECT_OK(aclrtMemManagedAdvise(ptr + PAGE, PAGE, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, kHost));
    EXPECT_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, 2 * PAGE, by, sizeof by));
    CHECK(by[0] == 0 && by[1] == -2 && by[2] == -2, "accessed by {%d, %d, %d}, expected {0, -2, -2}", by[0], by[1],
          by[2]);

    /* the checks */
    EXPECT(aclrtMemManagedAdvise(NULL, PAGE, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost), ACL_ERROR_INVALID_PARAM, "ptr");
    EXPECT(aclrtMemManagedAdvise(ptr, 0, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtMemManagedAdvise(ptr, MiB, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost), ACL_ERROR_RT_PARAM_INVALID,
           "2 MiB");
    EXPECT(aclrtMemManagedAdvise(ptr, PAGE, (aclrtMemManagedAdviseType)6, kHost), ACL_ERROR_RT_PARAM_INVALID,
           "advise");
    const aclrtMemManagedLocation device9 = {ACL_MEM_LOCATIONTYPE_DEVICE, 9};
    EXPECT(aclrtMemManagedAdvise(ptr, PAGE, ACL_MEM_ADVISE_SET_ACCESSED_BY, device9), ACL_ERROR_RT_PARAM_INVALID,
           "location.id");
    const aclrtMemManagedLocation invalid = {ACL_MEM_LOCATIONTYPE_INVALID, 0};
    EXPECT(aclrtMemManagedAdvise(ptr, PAGE, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, invalid),
           ACL_ERROR_RT_PARAM_INVALID, "location.type");
    EXPECT(aclrtMemManagedAdvise(ptr + PAGE, 2 * PAGE, ACL_MEM_ADVISE_SET_READ_MOSTLY, kHost),
           ACL_ERROR_RT_PARAM_INVALID, "aclrtMemAllocManaged");
    int32_t value = 0;
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, PAGE, &value, 8),
           ACL_ERROR_RT_PARAM_INVALID, "dataSize");
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, ptr, PAGE, &value, 6),
           ACL_ERROR_RT_PARAM_INVALID, "dataSize");
    EXPECT(aclrtMemManagedGetAttr((aclrtMemManagedRangeAttribute)0, ptr, PAGE, &value, 4),
           ACL_ERROR_RT_PARAM_INVALID, "attribute");
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, PAGE, NULL, 4), ACL_ERROR_INVALID_PARAM,
           "data");
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ptr, 0, &value, 4), ACL_ERROR_INVALID_PARAM,
           "size");
    void *plain = NULL;
    EXPECT_OK(aclrtMalloc(&plain, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, plain, 64, &value, 4),
           ACL_ERROR_RT_PARAM_INVALID, "aclrtMemAllocManaged");
    EXPECT_OK(aclrtFree(plain));
    EXPECT_OK(aclrtFree(ptr));
}

static void test_prefetch(void)
{
    char *ptr = NULL;
    EXPECT_OK(aclrtMemAllocManaged((void **)&ptr, 2 * PAGE, ACL_RT_MEM_ATTACH_GLOBAL));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, PAGE) == -2, "never prefetched: -2");
    EXPECT_OK(aclrtMemManagedPrefetchAsync(ptr, 2 * PAGE, kDevice0, 0, tu_stream));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 2 * PAGE) == 0, "prefetched to device 0");
    EXPECT_OK(aclrtMemManagedPrefetchAsync(ptr + PAGE, PAGE, kHost, 0, NULL));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr + PAGE, 1) == -1, "page 1 to the host");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 2 * PAGE) == -2, "mixed: -2");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, ptr, 1) == ACL_MEM_LOCATIONTYPE_DEVICE,
          "page 0 type");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, ptr, 1) == 0, "page 0 id");

    /* several attributes in one call */
    aclrtMemManagedRangeAttribute which[2] = {ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                              ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
    int32_t type = 7, mostly = 7;
    void *data[2] = {&type, &mostly};
    size_t sizes[2] = {4, 4};
    EXPECT_OK(aclrtMemManagedGetAttrs(which, 2, ptr + PAGE, PAGE, data, sizes));
    CHECK(type == ACL_MEM_LOCATIONTYPE_HOST && mostly == 0, "GetAttrs: type %d, read mostly %d", type, mostly);
    EXPECT(aclrtMemManagedGetAttrs(which, 2, ptr, PAGE, NULL, sizes), ACL_ERROR_INVALID_PARAM, "data");

    /* a batch: ptrs[0] to the host, ptrs[1] to device 0 */
    const void *ptrs[2] = {ptr, ptr + PAGE};
    size_t lengths[2] = {PAGE, PAGE};
    aclrtMemManagedLocation locations[2] = {kHost, kDevice0};
    size_t firsts[2] = {0, 1};
    EXPECT_OK(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 2, locations, firsts, 2, 0, tu_stream));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, PAGE) == -1, "batch: page 0 to the host");
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr + PAGE, PAGE) == 0, "batch: page 1");
    size_t one_first[1] = {0};
    EXPECT_OK(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 2, locations + 1, one_first, 1, 0, tu_stream));
    CHECK(attr_int(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, ptr, 2 * PAGE) == 0, "batch: one location");

    EXPECT(aclrtMemManagedPrefetchAsync(ptr, PAGE, kDevice0, 1, tu_stream), ACL_ERROR_INVALID_PARAM, "flags");
    EXPECT(aclrtMemManagedPrefetchAsync(ptr, MiB, kDevice0, 0, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "size");
    const aclrtMemManagedLocation invalid = {ACL_MEM_LOCATIONTYPE_INVALID, 0};
    EXPECT(aclrtMemManagedPrefetchAsync(ptr, PAGE, invalid, 0, tu_stream), ACL_ERROR_RT_PARAM_INVALID,
           "location.type");
    size_t bad_firsts[2] = {1, 1};
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 2, locations, bad_firsts, 2, 0, tu_stream),
           ACL_ERROR_RT_PARAM_INVALID, "prefetchLocIdxs");
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, lengths, 1, locations, firsts, 2, 0, tu_stream),
           ACL_ERROR_INVALID_PARAM, "count");
    EXPECT(aclrtMemManagedPrefetchBatchAsync(ptrs, NULL, 2, locations, firsts, 2, 0, tu_stream),
           ACL_ERROR_INVALID_PARAM, "sizes");
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtFree(ptr));
}

/* An operator reads and writes managed memory that the host fills and reads directly. */
static void test_operator_on_managed_memory(void)
{
    enum { N = 2, C = 3, HW = 50 };
    const int64_t shape[3] = {N, C, HW};
    const int64_t strides[3] = {C * HW, HW, 1};
    const int64_t weight_shape[1] = {C};
    float *x = NULL, *weight = NULL, *out = NULL;
    EXPECT_OK(aclrtMemAllocManaged((void **)&x, N * C * HW * sizeof(float), ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_OK(aclrtMemAllocManaged((void **)&weight, C * sizeof(float), ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_OK(aclrtMemAllocManaged((void **)&out, N * C * HW * sizeof(float), ACL_RT_MEM_ATTACH_GLOBAL));
    for (int i = 0; i < N * C * HW; i++)
        x[i] = (float)(i % 17) - 8.0f;
    for (int c = 0; c < C; c++)
        weight[c] = 0.25f * (float)(c + 1);
    aclTensor *tx = aclCreateTensor(shape, 3, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 3, x);
    aclTensor *tw = aclCreateTensor(weight_shape, 1, ACL_FLOAT, strides + 2, 0, ACL_FORMAT_ND, weight_shape, 1, weight);
    aclTensor *ty = aclCreateTensor(shape, 3, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 3, out);
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(tx, tw, ty, &ws_size, &ex));
    CHECK(tu_run(aclnnPrelu, ws_size, ex) == 0, "aclnnPrelu on managed memory failed: %s", aclGetRecentErrMsg());
    int wrong = 0;
    for (int i = 0; i < N * C * HW; i++) {
        const float want = x[i] > 0.0f ? x[i] : weight[(i / HW) % C] * x[i]; /* PReLU, as the host computes it */
        wrong += out[i] != want;
    }
    CHECK(wrong == 0, "%d of %d outputs differ from the host's PReLU", wrong, N * C * HW);
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    EXPECT_OK(aclrtFree(x));
    EXPECT_OK(aclrtFree(weight));
    EXPECT_OK(aclrtFree(out));
}

/* A thread with no device set has no context to allocate in. */
static void *alloc_without_device(void *result)
{
    void *ptr = NULL;
    *(aclError *)result = aclrtMemAllocManaged(&ptr, PAGE, ACL_RT_MEM_ATTACH_GLOBAL);
    return NULL;
}

static void test_no_device(void)
{
    aclError result = ACL_SUCCESS;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, alloc_without_device, &result) == 0, "pthread_create");
    pthread_join(thread, NULL);
    CHECK(result == ACL_ERROR_RT_CONTEXT_NULL, "aclrtMemAllocManaged without a device returned %d", (int)result);
}

/* CANN documents managed memory on Atlas A2 and A3 only: the other products answer 207000. */
static void test_products(void)
{
    static const char *const without[] = {"Ascend910", "Ascend310P", "Ascend950"};
    for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
        void *ptr = NULL;
        EXPECT_OK(aclnnCpuSetSocVersion(without[i]));
        EXPECT(aclrtMemAllocManaged(&ptr, PAGE, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
               without[i]);
        EXPECT(aclrtMemAllocManaged(&ptr, PAGE, 0), ACL_ERROR_INVALID_PARAM, "flag"); /* the acl layer first */
    }
    void *ptr = NULL;
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910_93"));
    EXPECT_OK(aclrtMemAllocManaged(&ptr, PAGE, ACL_RT_MEM_ATTACH_GLOBAL));
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT(aclrtMemManagedPrefetchAsync(ptr, PAGE, kDevice0, 0, tu_stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "Ascend950");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    EXPECT_OK(aclrtFree(ptr));
}

int main(void)
{
    if (tu_open_device())
        return 1;
    test_alloc_and_access();
    test_advice();
    test_prefetch();
    test_operator_on_managed_memory();
    test_products();
    test_no_device();
    tu_close_device();
    return tu_finish("test_runtime_managed");
}
