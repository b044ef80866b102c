/*
 * test_runtime_vmm.c - the virtual-memory pool pattern of llama.cpp's CANN backend
 * (ggml_cann_pool_vmm): reserve an address range, allocate physical handles of the recommended
 * granularity, map them one after another, run an operator (aclnnPrelu) on tensors that span
 * several handles, check the numbers against a plain C loop, then unmap, free and release.
 * ACLNN_STRICT=1 is on, so every tensor and copy must be found in the allocation registry.
 * Also: two mappings of one handle share their bytes, and the misuse errors name the call.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

#define CHANNELS 4
static const int64_t kShape[4] = {2, CHANNELS, 512, 256}; /* 1 Mi floats: 4 MiB, two 2 MiB handles */

static aclTensor *make_tensor(const int64_t *shape, int nd, void *data)
{
    int64_t strides[4];
    int64_t stride = 1;
    for (int i = nd - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= shape[i];
    }
    return aclCreateTensor(shape, nd, ACL_FLOAT, strides, 0, nd == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND, shape, nd,
                           data);
}

static void test_pool_runs_prelu(void)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    EXPECT_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &gran));
    CHECK(gran == ((size_t)2 << 20), "granularity %zu, expected 2 MiB for huge pages", gran);

    const size_t max_size = 64 * gran; /* llama.cpp reserves far more than it maps */
    void *base = NULL;
    EXPECT_OK(aclrtReserveMemAddress(&base, max_size, 0, NULL, 1));
    CHECK(base != NULL && (uintptr_t)base % gran == 0, "reservation %p not aligned to the granularity", base);

    /* grow the pool as llama.cpp does: one handle per step, mapped at the end of the last */
    enum { HANDLES = 5 };
    aclrtDrvMemHandle handles[HANDLES];
    size_t mapped = 0;
    for (int i = 0; i < HANDLES; i++) {
        EXPECT_OK(aclrtMallocPhysical(&handles[i], gran, &prop, 0));
        EXPECT_OK(aclrtMapMem((char *)base + mapped, gran, 0, handles[i], 0));
        mapped += gran;
    }

    const int64_t n = kShape[0] * kShape[1] * kShape[2] * kShape[3];
    const size_t bytes = (size_t)n * sizeof(float);
    float *self_dev = (float *)base;
    float *out_dev = (float *)((char *)base + bytes);
    float *weight_dev = (float *)((char *)base + 2 * bytes);
    float *host = malloc(bytes), *got = malloc(bytes);
    float weight[CHANNELS] = {0.25f, -0.5f, 2.0f, 0.0f};
    for (int64_t i = 0; i < n; i++)
        host[i] = (float)((i * 7919) % 2001 - 1000) / 100.0f;
    EXPECT_OK(aclrtMemcpy(self_dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(weight_dev, sizeof weight, weight, sizeof weight, ACL_MEMCPY_HOST_TO_DEVICE));

    const int64_t wshape[1] = {CHANNELS};
    aclTensor *self = make_tensor(kShape, 4, self_dev);
    aclTensor *w = make_tensor(wshape, 1, weight_dev);
    aclTensor *out = make_tensor(kShape, 4, out_dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(self, w, out, &ws, &ex));
    void *workspace = NULL;
    if (ws > 0) /* the workspace comes from the pool too, after the weight */
        workspace = (char *)base + 3 * bytes;
    EXPECT_OK(aclnnPrelu(workspace, ws, ex, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtMemcpy(got, bytes, out_dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    int64_t plane = kShape[2] * kShape[3], wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        float x = host[i], a = weight[(i / plane) % CHANNELS];
        float want = x > 0.0f ? x : a * x;
        if (got[i] != want && wrong++ < 5)
            CHECK(0, "out[%lld] = %g, expected %g", (long long)i, got[i], want);
    }
    CHECK(wrong == 0, "%lld of %lld values wrong", (long long)wrong, (long long)n);
    aclDestroyTensor(self);
    aclDestroyTensor(w);
    aclDestroyTensor(out);

    /* a copy that runs past the mapped part of the reservation is refused */
    EXPECT(aclrtMemcpy((char *)base + mapped - 16, 32, host, 32, ACL_MEMCPY_HOST_TO_DEVICE),
           ACL_ERROR_RT_PARAM_INVALID, "past the end");
    /* misuse, each with the call named */
    EXPECT(aclrtFree(base), ACL_ERROR_RT_PARAM_INVALID, "aclrtUnmapMem");
    EXPECT(aclrtFreePhysical(handles[0]), ACL_ERROR_RT_PARAM_INVALID, "still mapped");
    EXPECT(aclrtReleaseMemAddress(base), ACL_ERROR_RT_PARAM_INVALID, "aclrtUnmapMem");
    EXPECT(aclrtMapMem(base, gran, 0, handles[0], 0), ACL_ERROR_RT_PARAM_INVALID, "overlaps");
    EXPECT(aclrtUnmapMem((char *)base + 4096), ACL_ERROR_RT_PARAM_INVALID, "aclrtUnmapMem");

    for (int i = 0; i < HANDLES; i++) {
        EXPECT_OK(aclrtUnmapMem((char *)base + (size_t)i * gran));
        EXPECT_OK(aclrtFreePhysical(handles[i]));
    }
    /* unmapped addresses are no longer device memory */
    EXPECT(aclrtMemcpy(base, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "ACLNN_STRICT");
    EXPECT_OK(aclrtReleaseMemAddress(base));
    EXPECT(aclrtReleaseMemAddress(base), ACL_ERROR_RT_PARAM_INVALID, "aclrtReserveMemAddress");
    free(host);
    free(got);
}

/* Device memory on huge pages, and its minimum granularity. */
static size_t huge_device_prop(aclrtPhysicalMemProp *prop)
{
    memset(prop, 0, sizeof *prop);
    prop->memAttr = ACL_HBM_MEM_HUGE;
    prop->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    EXPECT_OK(aclrtMemGetAllocationGranularity(prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    return gran;
}

static void test_two_mappings_share_memory(void)
{
    aclrtPhysicalMemProp prop;
    const size_t gran = huge_device_prop(&prop);
    void *a = NULL, *b = NULL;
    aclrtDrvMemHandle h;
    EXPECT_OK(aclrtReserveMemAddress(&a, gran, 0, NULL, 0));
    EXPECT_OK(aclrtReserveMemAddress(&b, gran, 0, NULL, 0));
    EXPECT_OK(aclrtMallocPhysical(&h, gran, &prop, 0));
    EXPECT_OK(aclrtMapMem(a, gran, 0, h, 0));
    EXPECT_OK(aclrtMapMem(b, gran, 0, h, 0));
    EXPECT_OK(aclrtMemset(a, gran, 0x5A, gran));
    unsigned char probe[4] = {0};
    EXPECT_OK(aclrtMemcpy(probe, sizeof probe, (char *)b + gran - 4, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(probe[0] == 0x5A && probe[3] == 0x5A, "the second mapping does not see the first's bytes");
    aclrtDrvMemHandle back = NULL;
    EXPECT_OK(aclrtMemRetainAllocationHandle((char *)b + 100, &back));
    CHECK(back == h, "aclrtMemRetainAllocationHandle gave %p, expected %p", back, h);
    aclrtPhysicalMemProp got;
    EXPECT_OK(aclrtMemGetAllocationPropertiesFromHandle(h, &got));
    CHECK(got.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && got.location.id == 0, "properties");
    EXPECT(aclrtMallocPhysical(&h, gran + 1, &prop, 0), ACL_ERROR_INVALID_PARAM, "granularity");
    /* access: read-only, then read-write again */
    aclrtMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READ;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclrtMemLocation loc;
    uint64_t flag = 0;
    EXPECT_OK(aclrtMemGetAccess(a, &loc, &flag));
    CHECK(flag == ACL_RT_MEM_ACCESS_FLAGS_READWRITE && loc.type == ACL_MEM_LOCATION_TYPE_DEVICE, "initial access");
    EXPECT_OK(aclrtMemSetAccess(a, gran, &desc, 1));
    EXPECT_OK(aclrtMemGetAccess((char *)a + 8, &loc, &flag));
    CHECK(flag == ACL_RT_MEM_ACCESS_FLAGS_READ, "access after SetAccess(READ): %llu", (unsigned long long)flag);
    EXPECT_OK(aclrtMemcpy(probe, sizeof probe, a, 4, ACL_MEMCPY_DEVICE_TO_HOST)); /* reading still works */
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    EXPECT(aclrtMemSetAccess(a, gran / 2, &desc, 1), ACL_ERROR_RT_PARAM_INVALID, "whole");
    EXPECT_OK(aclrtMemSetAccess(a, gran, &desc, 1));
    EXPECT_OK(aclrtMemset(a, gran, 0, 1));
    EXPECT_OK(aclrtUnmapMem(a));
    EXPECT_OK(aclrtUnmapMem(b));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT(aclrtFreePhysical(h), ACL_ERROR_RT_PARAM_INVALID, "aclrtMallocPhysical");
    EXPECT_OK(aclrtReleaseMemAddress(a));
    EXPECT_OK(aclrtReleaseMemAddress(b));
}

/* aclrtMemMapNoAccess: mapped, but nothing reaches the range until aclrtMemSetAccess. */
static void test_map_no_access(void)
{
    aclrtPhysicalMemProp prop;
    const size_t gran = huge_device_prop(&prop);
    void *a = NULL;
    aclrtDrvMemHandle h;
    EXPECT_OK(aclrtReserveMemAddress(&a, 2 * gran, 0, NULL, 0));
    EXPECT_OK(aclrtMallocPhysical(&h, gran, &prop, 0));
    EXPECT(aclrtMemMapNoAccess(NULL, gran, 0, h, 0), ACL_ERROR_INVALID_PARAM, "virPtr");
    EXPECT(aclrtMemMapNoAccess(a, gran, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT(aclrtMemMapNoAccess(a, 0, 0, h, 0), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtMemMapNoAccess(a, gran, 0, h, 1), ACL_ERROR_INVALID_PARAM, "flags");
    EXPECT(aclrtMemMapNoAccess(a, 2 * gran, 0, h, 0), ACL_ERROR_INVALID_PARAM, "aclrtMemMapNoAccess");
    EXPECT_OK(aclrtMemMapNoAccess(a, gran, 0, h, 0));
    aclrtMemLocation loc;
    uint64_t flag = 99;
    EXPECT_OK(aclrtMemGetAccess(a, &loc, &flag));
    CHECK(flag == ACL_RT_MEM_ACCESS_FLAGS_NONE, "access after aclrtMemMapNoAccess: %llu", (unsigned long long)flag);
    EXPECT(aclrtMemset(a, gran, 0x11, 16), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemset");
    aclrtMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    EXPECT_OK(aclrtMemSetAccess(a, gran, &desc, 1));
    EXPECT_OK(aclrtMemset(a, gran, 0x11, 16));
    CHECK(tu_dev_byte(a, 15) == 0x11, "the range is not writable after aclrtMemSetAccess");
    EXPECT_OK(aclrtUnmapMem(a));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(a));
}

int main(void)
{
    setenv("ACLNN_STRICT", "1", 1);
    if (tu_open_device())
        return 1;
    test_pool_runs_prelu();
    test_two_mappings_share_memory();
    test_map_no_access();
    tu_close_device();
    return tu_finish("test_runtime_vmm");
}
