/*
 * max_pool_determinism.c - phase 1 (twice, then one launch) of aclnnMaxPool2dWithMaskBackward or
 * aclnnMaxPool2dWithIndicesBackward on a [1, 1, 5, 5] FLOAT self; prints each status.  Used by
 * tests/test_check_product_warnings.py for the determinism warning.
 *
 *   max_pool_determinism mask|indices overlap|apart [det|ctxdet]
 *
 * overlap: 3x3 windows at stride 2 (neighbouring windows share a row and a column); apart: 2x2
 * windows at stride 2.  det: aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1) first, the process
 * option CANN's opbase reads; ctxdet: aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), the
 * context option it does not read.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

#define MASK_BYTES (9 * 64) /* [1, 1, kH*kW <= 9, 32 * (ceil(4 / 16) + 1)] */

static aclnnStatus phase1(bool mask, aclTensor *grad, aclTensor *self, aclTensor *indices, aclIntArray *kernel,
                          aclIntArray *stride, aclIntArray *padding, aclIntArray *dilation, aclTensor *grad_in,
                          uint64_t *ws, aclOpExecutor **ex)
{
    if (mask)
        return aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(grad, self, indices, kernel, stride, padding, dilation,
                                                              false, grad_in, ws, ex);
    return aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(grad, self, indices, kernel, stride, padding, dilation,
                                                             false, grad_in, ws, ex);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    const bool mask = strcmp(argv[1], "mask") == 0, overlap = strcmp(argv[2], "overlap") == 0;
    const char *mode = argc > 3 ? argv[3] : "";
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    if (strcmp(mode, "det") == 0 && aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1) != 0) return 2;
    if (strcmp(mode, "ctxdet") == 0 && aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1) != 0) return 2;
    void *x = NULL, *g = NULL, *m = NULL, *gi = NULL;
    if (aclrtMalloc(&x, 100, ACL_MEM_MALLOC_HUGE_FIRST) != 0 || aclrtMalloc(&g, 16, ACL_MEM_MALLOC_HUGE_FIRST) != 0 ||
        aclrtMalloc(&m, MASK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != 0 ||
        aclrtMalloc(&gi, 100, ACL_MEM_MALLOC_HUGE_FIRST) != 0)
        return 2;
    aclrtMemset(x, 100, 0, 100);
    aclrtMemset(g, 16, 0, 16);
    aclrtMemset(m, MASK_BYTES, 0, MASK_BYTES);
    int64_t xs[4] = {1, 1, 5, 5}, xst[4] = {25, 25, 5, 1}, gs[4] = {1, 1, 2, 2}, gst[4] = {4, 4, 2, 1};
    const int64_t k = overlap ? 3 : 2;
    int64_t ms[4] = {1, 1, k * k, 64}, mst[4] = {k * k * 64, k * k * 64, 64, 1};
    int64_t kv[2] = {k, k}, sv[2] = {2, 2}, pv[2] = {0, 0}, dv[2] = {1, 1};
    aclTensor *self = aclCreateTensor(xs, 4, ACL_FLOAT, xst, 0, ACL_FORMAT_NCHW, xs, 4, x);
    aclTensor *grad = aclCreateTensor(gs, 4, ACL_FLOAT, gst, 0, ACL_FORMAT_NCHW, gs, 4, g);
    aclTensor *indices = mask ? aclCreateTensor(ms, 4, ACL_INT8, mst, 0, ACL_FORMAT_NCHW, ms, 4, m)
                              : aclCreateTensor(gs, 4, ACL_INT32, gst, 0, ACL_FORMAT_NCHW, gs, 4, m);
    aclTensor *grad_in = aclCreateTensor(xs, 4, ACL_FLOAT, xst, 0, ACL_FORMAT_NCHW, xs, 4, gi);
    aclIntArray *kernel = aclCreateIntArray(kv, 2), *stride = aclCreateIntArray(sv, 2);
    aclIntArray *padding = aclCreateIntArray(pv, 2), *dilation = aclCreateIntArray(dv, 2);
    for (int call = 0; call < 2; ++call) {
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        aclnnStatus st = phase1(mask, grad, self, indices, kernel, stride, padding, dilation, grad_in, &ws, &ex);
        printf("status %d\n", (int)st);
        if (st != 0) continue;
        void *workspace = NULL;
        if (ws > 0 && aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return 2;
        st = mask ? aclnnMaxPool2dWithMaskBackward(workspace, ws, ex, NULL)
                  : aclnnMaxPool2dWithIndicesBackward(workspace, ws, ex, NULL);
        printf("launch %d sync %d\n", (int)st, (int)aclrtSynchronizeStream(NULL));
        if (workspace != NULL) aclrtFree(workspace);
    }
    aclDestroyIntArray(kernel);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclDestroyTensor(self);
    aclDestroyTensor(grad);
    aclDestroyTensor(indices);
    aclDestroyTensor(grad_in);
    aclrtFree(x);
    aclrtFree(g);
    aclrtFree(m);
    aclrtFree(gi);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
