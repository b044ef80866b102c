/*
 * upsample_dtype.c - phase 1 of aclnnUpsampleNearestExact1d on a [1, 2, 4] self of the dtype
 * named by argv[1] (FLOAT, FLOAT16, BF16, UINT8), resized to 8; prints the status.  Used by
 * tests/test_check_product_warnings.py for the product warning that depends on the dtype
 * (BF16/UINT8 on Ascend310P).
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        aclDataType dtype;
    } dtypes[] = {{"FLOAT", ACL_FLOAT}, {"FLOAT16", ACL_FLOAT16}, {"BF16", ACL_BF16}, {"UINT8", ACL_UINT8}};
    aclDataType dtype = ACL_DT_UNDEFINED;
    for (size_t i = 0; argc > 1 && i < sizeof dtypes / sizeof dtypes[0]; ++i)
        if (strcmp(argv[1], dtypes[i].name) == 0)
            dtype = dtypes[i].dtype;
    if (dtype == ACL_DT_UNDEFINED || aclInit(NULL) != 0 || aclrtSetDevice(0) != 0)
        return 2;
    void *x = NULL, *y = NULL;
    if (aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST) != 0 || aclrtMalloc(&y, 128, ACL_MEM_MALLOC_HUGE_FIRST) != 0)
        return 2;
    int64_t xs[3] = {1, 2, 4}, xst[3] = {8, 4, 1}, ys[3] = {1, 2, 8}, yst[3] = {16, 8, 1}, size[1] = {8};
    aclTensor *self = aclCreateTensor(xs, 3, dtype, xst, 0, ACL_FORMAT_NCL, xs, 3, x);
    aclTensor *out = aclCreateTensor(ys, 3, dtype, yst, 0, ACL_FORMAT_NCL, ys, 3, y);
    aclIntArray *output_size = aclCreateIntArray(size, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dGetWorkspaceSize(self, output_size, 0.0, out, &ws, &ex);
    printf("status %d\n", (int)st);
    if (st == 0)
        aclDestroyAclOpExecutor(ex);
    aclDestroyIntArray(output_size);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclrtFree(x);
    aclrtFree(y);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
