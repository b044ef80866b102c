/*
 * aliasing_outputs.c - PreluBackward's two outputs placed in one allocation
 * (tests/test_check_aliasing.py); argv[1]:
 *   alias        gradWeight is gradInput's first element: the outputs share bytes
 *   interleaved  gradInput is every other float, gradWeight one of the floats between: legal
 *   separate     each output in its own allocation: legal
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "check_prelu.h"

#define N 8

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    const float host[N] = {1, -2, 3, -4, 5, -6, 7, -8}, weight = 0.5f;
    void *g = NULL, *x = NULL, *w = NULL, *outs = NULL, *other = NULL;
    aclrtMalloc(&g, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&x, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof weight, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&outs, 2 * sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&other, sizeof weight, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(g, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(x, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w, sizeof weight, &weight, sizeof weight, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t dims[1] = {N}, strided[1] = {2};
    const int interleaved = strcmp(argv[1], "interleaved") == 0;
    void *gw_data = strcmp(argv[1], "alias") == 0 ? outs : interleaved ? (float *)outs + 1 : other;
    aclTensor *grad = check_vector(g, N), *self = check_vector(x, N), *wt = check_vector(w, 1);
    int64_t storage[1] = {2 * N};
    aclTensor *gi = aclCreateTensor(dims, 1, ACL_FLOAT, interleaved ? strided : NULL, 0, ACL_FORMAT_ND,
                                    interleaved ? storage : dims, 1, outs);
    aclTensor *gw = check_vector(gw_data, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    void *workspace = NULL;
    int rc = aclnnPreluBackwardGetWorkspaceSize(grad, self, wt, gi, gw, &ws, &ex) != ACLNN_SUCCESS;
    if (ws > 0)
        aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    rc |= aclnnPreluBackward(workspace, ws, ex, NULL) != ACLNN_SUCCESS;
    rc |= aclrtSynchronizeStream(NULL) != ACL_SUCCESS;
    aclDestroyTensor(grad);
    aclDestroyTensor(self);
    aclDestroyTensor(wt);
    aclDestroyTensor(gi);
    aclDestroyTensor(gw);
    void *blocks[] = {g, x, w, outs, other, workspace};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i)
        if (blocks[i] != NULL)
            aclrtFree(blocks[i]);
    aclrtResetDevice(0);
    aclFinalize();
    printf("launch %s\n", rc ? "failed" : "ran");
    return rc;
}
