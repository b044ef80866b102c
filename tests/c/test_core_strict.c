/*
 * test_core_strict.c - ACLNN_STRICT=1: tensors whose data is not inside an aclrtMalloc
 * allocation are rejected at phase 1 (and, for a repeatable executor rebound to such memory,
 * at phase 2) with ACLNN_ERR_PARAM_INVALID and a message, instead of running on host memory.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnn/opdev/op_errno.h"

#include "test_util.h"

int main(void)
{
    setenv("ACLNN_STRICT", "1", 1); /* read once, on first use */
    aclInit(NULL);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);

    float host_x[6] = {-1, 2, -3, 4, -5, 6}, host_w[1] = {0.5f}, host_out[6];
    void *xd, *wd, *od;
    aclrtMalloc(&xd, sizeof host_x, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&wd, sizeof host_w, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&od, sizeof host_x, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(xd, sizeof host_x, host_x, sizeof host_x, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(wd, sizeof host_w, host_w, sizeof host_w, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t dims[2] = {2, 3}, wdims[1] = {1};
    aclTensor *weight = aclCreateTensor(wdims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wdims, 1, wd);
    aclTensor *out = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, od);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;

    /* host memory as tensor data */
    aclTensor *host_self = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, host_x);
    CHECK(aclnnPreluGetWorkspaceSize(host_self, weight, out, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "host memory rejected");
    EXPECT_MSG("host memory", "aclnnPrelu", "aclrtMalloc");

    /* a view that runs past the end of its allocation (6 floats asked, 24 viewed; aclrtMalloc
     * pads small allocations, as CANN does, so the view must go well past the request) */
    int64_t big[2] = {8, 3};
    aclTensor *big_self = aclCreateTensor(big, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, big, 2, xd);
    aclTensor *big_out = aclCreateTensor(big, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, big, 2, od);
    CHECK(aclnnPreluGetWorkspaceSize(big_self, weight, big_out, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "view past the allocation rejected");
    EXPECT_MSG("past the end", "aclnnPrelu", "aclrtMalloc");

    /* device memory is fine; a repeatable executor rebound to host memory fails at phase 2 */
    aclTensor *self = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, xd);
    CHECK(aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex) == ACLNN_SUCCESS, "device memory accepted");
    CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "repeatable");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "launch");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    aclrtMemcpy(host_out, sizeof host_out, od, sizeof host_out, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 6; i++)
        CHECK(host_out[i] == (host_x[i] > 0 ? host_x[i] : 0.5f * host_x[i]), "value %d", i);
    CHECK(aclSetInputTensorAddr(ex, 0, self, host_x) == ACLNN_SUCCESS, "rebind to host memory");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_ERR_PARAM_INVALID, "rebound host memory rejected");
    EXPECT_MSG("rebound", "aclnnPrelu", "aclrtMalloc");
    CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "destroy");

    aclDestroyTensor(host_self);
    aclDestroyTensor(big_self);
    aclDestroyTensor(big_out);
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    aclrtFree(xd);
    aclrtFree(wd);
    aclrtFree(od);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("strict: %d failures\n", failures);
    return failures != 0;
}
