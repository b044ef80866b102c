/*
 * Regression (fuzz finding, fuzz/fuzz_ops.c): with ACLNN_STRICT=1, a non-empty tensor whose data
 * address is NULL must be refused by phase 1 with a status and a message. The strict check
 * computed `data + offset * elem` before testing data for NULL (undefined behaviour that
 * UBSan reports as "applying non-zero offset to null pointer"); this program runs under UBSan in
 * `make sanitize`.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* setenv */
#endif
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

int main(void)
{
    setenv("ACLNN_STRICT", "1", 1); /* read once, at the first runtime call */
    if (aclrtSetDevice(0) != ACL_SUCCESS) {
        printf("aclrtSetDevice failed\n");
        return 1;
    }
    int failures = 0;
    const int64_t view[1] = {4}, storage[1] = {8}, one[1] = {1}, strides[1] = {1};
    void *weight_dev = NULL, *out_dev = NULL;
    aclrtMalloc(&weight_dev, 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&out_dev, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    /* self: 4 floats at offset 4 of a NULL storage */
    aclTensor *self = aclCreateTensor(view, 1, ACL_FLOAT, strides, 4, ACL_FORMAT_ND, storage, 1, NULL);
    aclTensor *weight = aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, one, 1, weight_dev);
    aclTensor *out = aclCreateTensor(view, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, view, 1, out_dev);
    if (self == NULL || weight == NULL || out == NULL) {
        printf("aclCreateTensor failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    uint64_t workspace_size = 0;
    aclOpExecutor *executor = NULL;
    aclnnStatus st = aclnnPreluGetWorkspaceSize(self, weight, out, &workspace_size, &executor);
    const char *msg = aclGetRecentErrMsg();
    if (st == ACLNN_SUCCESS) {
        printf("FAIL: phase 1 accepted a non-empty tensor with NULL data under ACLNN_STRICT=1\n");
        failures++;
        aclnnPrelu(NULL, workspace_size, executor, NULL); /* consume it (it will fail) */
        aclrtSynchronizeStream(NULL);
        aclGetRecentErrMsg();
    } else if (msg == NULL) {
        printf("FAIL: status %d without a message\n", st);
        failures++;
    } else {
        printf("ok: %d %s\n", st, msg);
    }
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    aclrtFree(weight_dev);
    aclrtFree(out_dev);
    aclrtResetDevice(0);
    return failures != 0;
}
