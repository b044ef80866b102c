/*
 * Regression (fuzz finding, fuzz/corpus/regress-empty-null-mask-1x1-backward): an empty tensor
 * may have a NULL data address. MaxPool2dWithMaskBackward with a 1x1 kernel does not read its
 * mask, so an empty mask with NULL data is accepted; phase 2 must then run without touching it.
 * The executor used to compute `NULL + offset` for that operand (undefined behaviour, reported
 * by clang's UBSan as "applying zero offset to null pointer"). The result must still be right:
 * with kernel 1 and stride 3 on a 4x4 plane, output (oh, ow) takes input (3*oh, 3*ow).
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

int main(void)
{
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return 1;
    const int64_t self_dims[3] = {1, 4, 4}, grad_dims[3] = {1, 2, 2}, mask_dims[3] = {0, 1, 64};
    const int64_t k[1] = {1}, s[2] = {3, 3}, p[2] = {0, 0}, d[1] = {1};
    float grad_host[4] = {1.0f, 2.0f, 3.0f, 4.0f}, self_host[16] = {0};
    void *self_dev = NULL, *grad_dev = NULL, *gi_dev = NULL;
    aclrtMalloc(&self_dev, sizeof self_host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&grad_dev, sizeof grad_host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&gi_dev, sizeof self_host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(self_dev, sizeof self_host, self_host, sizeof self_host, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(grad_dev, sizeof grad_host, grad_host, sizeof grad_host, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemset(gi_dev, sizeof self_host, 0x7f, sizeof self_host);
    aclTensor *self = aclCreateTensor(self_dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, self_dims, 3, self_dev);
    aclTensor *grad = aclCreateTensor(grad_dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, grad_dims, 3, grad_dev);
    aclTensor *mask = aclCreateTensor(mask_dims, 3, ACL_INT8, NULL, 0, ACL_FORMAT_ND, mask_dims, 3, NULL);
    aclTensor *gi = aclCreateTensor(self_dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, self_dims, 3, gi_dev);
    aclIntArray *ka = aclCreateIntArray(k, 1), *sa = aclCreateIntArray(s, 2), *pa = aclCreateIntArray(p, 2),
                *da = aclCreateIntArray(d, 1);
    if (!self || !grad || !mask || !gi || !ka || !sa || !pa || !da) {
        printf("set-up failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    int failures = 0;
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(grad, self, mask, ka, sa, pa, da, false, gi,
                                                                     &ws_size, &ex);
    if (st != ACLNN_SUCCESS) {
        /* refusing an empty mask would also be acceptable (stricter); it must say why */
        const char *msg = aclGetRecentErrMsg();
        printf("phase 1 refused: %d %s\n", st, msg ? msg : "(no message)");
        failures += msg == NULL;
    } else {
        void *ws = NULL;
        if (ws_size > 0)
            aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST);
        st = aclnnMaxPool2dWithMaskBackward(ws, ws_size, ex, NULL);
        aclError sync = aclrtSynchronizeStream(NULL);
        if (st != ACLNN_SUCCESS || sync != ACL_SUCCESS) {
            printf("FAIL: phase 2 %d, synchronize %d: %s\n", st, sync, aclGetRecentErrMsg());
            failures++;
        } else {
            float gi_host[16];
            aclrtMemcpy(gi_host, sizeof gi_host, gi_dev, sizeof gi_host, ACL_MEMCPY_DEVICE_TO_HOST);
            for (int i = 0; i < 16; i++) {
                int h = i / 4, w = i % 4;
                float want = (h % 3 == 0 && w % 3 == 0) ? grad_host[(h / 3) * 2 + w / 3] : 0.0f;
                if (gi_host[i] != want) {
                    printf("FAIL: gradInput[%d] = %g, want %g\n", i, gi_host[i], want);
                    failures++;
                }
            }
        }
        if (ws)
            aclrtFree(ws);
    }
    aclDestroyTensor(self);
    aclDestroyTensor(grad);
    aclDestroyTensor(mask);
    aclDestroyTensor(gi);
    aclDestroyIntArray(ka);
    aclDestroyIntArray(sa);
    aclDestroyIntArray(pa);
    aclDestroyIntArray(da);
    aclrtFree(self_dev);
    aclrtFree(grad_dev);
    aclrtFree(gi_dev);
    aclrtResetDevice(0);
    if (failures == 0)
        printf("ok\n");
    return failures != 0;
}
