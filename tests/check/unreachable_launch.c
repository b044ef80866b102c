/*
 * unreachable_launch.c - a launch whose input the device can no longer reach
 * (tests/test_check_unreachable.py); argv[1] names the case:
 *   unregister  x in aclrtHostRegister'd host memory at phase 1, aclrtHostUnregister before the
 *               launch (the launch read the unregistered pointer unreported)
 *   unmap       x in an aclrtMapMem mapping at phase 1, aclrtUnmapMem + aclrtFreePhysical before
 *               the launch (the kernel faulted on the bare reservation: SIGSEGV)
 * Each prints the launch's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"
#include "check_program.h"

#define N 1024

/* Prelu of x (at `x`, N floats) into device memory; returns the launch's status (or -1). */
static int prelu_after(void *x, void (*between)(void *), void *arg, aclrtStream stream)
{
    float slope = 0.25f;
    void *w = NULL, *y = NULL;
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t shape[1] = {N}, wshape[1] = {1};
    aclTensor *tx = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *tw = aclCreateTensor(wshape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wshape, 1, w);
    aclTensor *ty = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, y);
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    int status = -1;
    if (aclnnPreluGetWorkspaceSize(tx, tw, ty, &workspace, &executor) == ACL_SUCCESS) {
        between(arg);
        status = aclnnPrelu(NULL, 0, executor, stream);
        aclrtSynchronizeStream(stream);
    }
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    aclrtFree(w);
    aclrtFree(y);
    return status;
}

static void unregister_host(void *host)
{
    aclrtHostUnregister(host);
}

static int unregister(aclrtStream stream, const char *unused)
{
    (void)unused;
    float *host = aligned_alloc(4096, N * sizeof(float));
    for (int i = 0; i < N; ++i)
        host[i] = (float)i - 512.0f;
    void *mapped = NULL;
    if (aclrtHostRegister(host, N * sizeof(float), ACL_HOST_REGISTER_MAPPED, &mapped) != ACL_SUCCESS)
        return 3;
    printf("launch status %d\n", prelu_after(mapped, unregister_host, host, stream));
    free(host);
    return 0;
}

typedef struct mapping {
    void *base;
    aclrtDrvMemHandle handle;
} mapping;

static void unmap_and_free(void *arg)
{
    mapping *m = arg;
    aclrtUnmapMem(m->base);
    aclrtFreePhysical(m->handle);
}

static int unmap(aclrtStream stream, const char *unused)
{
    (void)unused;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    mapping m = {NULL, NULL};
    if (aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran) != ACL_SUCCESS ||
        aclrtReserveMemAddress(&m.base, gran, 0, NULL, 0) != ACL_SUCCESS ||
        aclrtMallocPhysical(&m.handle, gran, &prop, 0) != ACL_SUCCESS ||
        aclrtMapMem(m.base, gran, 0, m.handle, 0) != ACL_SUCCESS ||
        aclrtMemset(m.base, gran, 0, gran) != ACL_SUCCESS)
        return 3;
    printf("launch status %d\n", prelu_after(m.base, unmap_and_free, &m, stream));
    aclrtReleaseMemAddress(m.base);
    return 0;
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"unregister", unregister}, {"unmap", unmap}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
