/*
 * aclnnIm2col from a plain C11 program: proves the public headers serve C callers (CANN's own
 * aclnn headers are C++ only). Same flow as the official samples; prints every tensor as
 * "tensor <name> <d0,d1,...> : v v v ..." for tests/test_compat.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

static int64_t shape_size(const int64_t *shape, size_t rank)
{
    int64_t size = 1;
    for (size_t i = 0; i < rank; i++) {
        size *= shape[i];
    }
    return size;
}

static void print_tensor(const char *name, const int64_t *shape, size_t rank, const float *data)
{
    printf("tensor %s ", name);
    for (size_t i = 0; i < rank; i++) {
        printf(i == 0 ? "%ld" : ",%ld", (long)shape[i]);
    }
    printf(" :");
    for (int64_t i = 0; i < shape_size(shape, rank); i++) {
        printf(" %.9g", (double)data[i]);
    }
    printf("\n");
}

static void print_param(const char *name, const int64_t *values, size_t count)
{
    printf("tensor param %s %zu :", name, count);
    for (size_t i = 0; i < count; i++) {
        printf(" %ld", (long)values[i]);
    }
    printf("\n");
}

/* Contiguous ND tensor over fresh device memory holding `host`. */
static aclTensor *create_tensor(const float *host, const int64_t *shape, size_t rank, void **device_addr)
{
    int64_t strides[8];
    size_t bytes = (size_t)shape_size(shape, rank) * sizeof(float);
    if (aclrtMalloc(device_addr, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        return NULL;
    }
    if (aclrtMemcpy(*device_addr, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
        return NULL;
    }
    strides[rank - 1] = 1;
    for (size_t i = rank - 1; i > 0; i--) {
        strides[i - 1] = strides[i] * shape[i];
    }
    return aclCreateTensor(shape, rank, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, rank, *device_addr);
}

int main(void)
{
    /* self [3, 5, 6] (no batch), kernel [3, 2], dilation [1, 1], padding [1, 1], stride [1, 2]:
     * OH = (5 + 2 - 3) / 1 + 1 = 5, OW = (6 + 2 - 2) / 2 + 1 = 4 -> out [3 * 3 * 2, 20]. */
    const int64_t self_shape[3] = {3, 5, 6};
    const int64_t out_shape[2] = {18, 20};
    const int64_t kernel_data[2] = {3, 2}, dilation_data[2] = {1, 1};
    const int64_t padding_data[2] = {1, 1}, stride_data[2] = {1, 2};
    int32_t device_id = 0;
    aclrtStream stream = NULL;
    int ret = aclInit(NULL);
    CHECK_RET(ret == ACL_SUCCESS, printf("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(device_id);
    CHECK_RET(ret == ACL_SUCCESS, printf("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(&stream);
    CHECK_RET(ret == ACL_SUCCESS, printf("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);

    int64_t self_size = shape_size(self_shape, 3), out_size = shape_size(out_shape, 2);
    float *self_host = malloc((size_t)self_size * sizeof(float));
    float *out_host = calloc((size_t)out_size, sizeof(float));
    CHECK_RET(self_host && out_host, printf("out of host memory\n"); return 1);
    for (int64_t i = 0; i < self_size; i++) {
        self_host[i] = (float)((i * 7919 + 14 * 104729) % 200 - 100) / 16.0f;
    }
    void *self_addr = NULL, *out_addr = NULL;
    aclTensor *self = create_tensor(self_host, self_shape, 3, &self_addr);
    aclTensor *out = create_tensor(out_host, out_shape, 2, &out_addr);
    aclIntArray *kernel = aclCreateIntArray(kernel_data, 2);
    aclIntArray *dilation = aclCreateIntArray(dilation_data, 2);
    aclIntArray *padding = aclCreateIntArray(padding_data, 2);
    aclIntArray *stride = aclCreateIntArray(stride_data, 2);
    CHECK_RET(self && out && kernel && dilation && padding && stride, printf("create failed\n"); return 1);

    uint64_t workspace_size = 0;
    aclOpExecutor *executor = NULL;
    ret = aclnnIm2colGetWorkspaceSize(self, kernel, dilation, padding, stride, out, &workspace_size, &executor);
    CHECK_RET(ret == ACLNN_SUCCESS, printf("aclnnIm2colGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspace = NULL;
    if (workspace_size > 0) {
        ret = aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, printf("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnIm2col(workspace, workspace_size, executor, stream);
    CHECK_RET(ret == ACLNN_SUCCESS, printf("aclnnIm2col failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, printf("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(out_host, (size_t)out_size * sizeof(float), out_addr, (size_t)out_size * sizeof(float),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, printf("copy result failed. ERROR: %d\n", ret); return ret);

    print_param("kernelSize", kernel_data, 2);
    print_param("dilation", dilation_data, 2);
    print_param("padding", padding_data, 2);
    print_param("stride", stride_data, 2);
    print_tensor("self", self_shape, 3, self_host);
    print_tensor("out", out_shape, 2, out_host);

    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(kernel);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclrtFree(self_addr);
    aclrtFree(out_addr);
    if (workspace != NULL) {
        aclrtFree(workspace);
    }
    free(self_host);
    free(out_host);
    aclrtDestroyStream(stream);
    aclrtResetDevice(device_id);
    aclFinalize();
    return 0;
}
