/*
 * unreachable_launch.c - a launch whose input the device can no longer reach
 * (tests/test_check_unreachable.py); argv[1] names the case:
 *   unregister  x in aclrtHostRegister'd host memory at phase 1, aclrtHostUnregister before the
 *               launch (the launch read the unregistered pointer unreported)
 *   unmap       x in an aclrtMapMem mapping at phase 1, aclrtUnmapMem + aclrtFreePhysical before
 *               the launch (the kernel faulted on the bare reservation: SIGSEGV)
 *   unregister queued, unmap queued   (argv[2] "queued") the same calls after the launch was
 *               queued (behind a 256 MiB fill) and before it ran: memcheck reports the call and makes it wait for
 *               the launch (before: unreported, and the unmapped case died with SIGSEGV)
 * Each prints the launch's status and how many of its results are wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "check_prelu.h"
#include "check_program.h"

#define N 1024

#define FILL_BYTES ((size_t)256 << 20)

/* Prelu of x (at `x`, N floats: i - 512) into device memory, with `between` called after phase 1
 * and before the launch, or (`queued`) after the launch was queued behind a fill and before the
 * wait; returns the launch's status (or -1) and counts wrong results in *wrong. */
static int prelu_around(void *x, void (*between)(void *), void *arg, aclrtStream stream, int queued, int *wrong)
{
    float slope = 0.25f;
    static float y_host[N];
    void *w = NULL, *y = NULL, *busy = NULL;
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&busy, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    aclTensor *tx = check_vector(x, N), *tw = check_vector(w, 1), *ty = check_vector(y, N);
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    int status = -1;
    *wrong = 0;
    if (aclnnPreluGetWorkspaceSize(tx, tw, ty, &workspace, &executor) == ACL_SUCCESS) {
        if (queued)
            aclrtMemsetAsync(busy, FILL_BYTES, 0, FILL_BYTES, stream); /* the launch waits behind it */
        else
            between(arg);
        status = aclnnPrelu(NULL, 0, executor, stream);
        if (queued)
            between(arg);
        aclrtSynchronizeStream(stream);
        aclrtMemcpy(y_host, sizeof y_host, y, sizeof y_host, ACL_MEMCPY_DEVICE_TO_HOST);
        for (int i = 0; status == 0 && i < N; ++i)
            *wrong += y_host[i] != ((float)i - 512.0f > 0 ? (float)i - 512.0f : 0.25f * ((float)i - 512.0f));
    }
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    aclrtFree(w);
    aclrtFree(y);
    aclrtFree(busy);
    return status;
}

static int prelu_after(void *x, void (*between)(void *), void *arg, aclrtStream stream, const char *when)
{
    int wrong = 0, status = prelu_around(x, between, arg, stream, when != NULL, &wrong);
    printf("launch status %d, %d wrong\n", status, wrong);
    return status;
}

static void unregister_host(void *host)
{
    aclrtHostUnregister(host);
}

static int unregister(aclrtStream stream, const char *when)
{
    float *host = aligned_alloc(4096, N * sizeof(float));
    for (int i = 0; i < N; ++i)
        host[i] = (float)i - 512.0f;
    void *mapped = NULL;
    if (aclrtHostRegister(host, N * sizeof(float), ACL_HOST_REGISTER_MAPPED, &mapped) != ACL_SUCCESS)
        return 3;
    prelu_after(mapped, unregister_host, host, stream, when);
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

static int unmap(aclrtStream stream, const char *when)
{
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
    float x[N];
    for (int i = 0; i < N; ++i)
        x[i] = (float)i - 512.0f;
    aclrtMemcpy(m.base, sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE);
    prelu_after(m.base, unmap_and_free, &m, stream, when);
    aclrtReleaseMemAddress(m.base);
    return 0;
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"unregister", unregister}, {"unmap", unmap}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
