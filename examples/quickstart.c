/*
 * quickstart.c - a plain C11 program driving one aclnn operator (Prelu) the way CANN's official
 * samples do: init -> device -> stream -> device memory -> tensors -> phase 1 -> workspace ->
 * phase 2 -> synchronize -> copy back -> clean up.
 *
 *   cc -std=c11 quickstart.c -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 \
 *      -lascendcl -lnnopbase -lopapi
 */
#include <stdio.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

#define CHECK(cond, what)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            const char *msg = aclGetRecentErrMsg();                            \
            printf("%s failed: %s\n", what, msg ? msg : "(no message)");       \
            return 1;                                                          \
        }                                                                      \
    } while (0)

int main(void)
{
    /* x: [N=1, C=2, 2, 2]; weight: one slope per channel. */
    const int64_t shape[4] = {1, 2, 2, 2};
    const int64_t weight_shape[1] = {2};
    float x_host[8] = {-4.0f, -1.0f, 0.0f, 2.0f, -3.0f, 5.0f, -0.5f, 1.0f};
    float weight_host[2] = {0.25f, 0.5f};
    float out_host[8] = {0};

    CHECK(aclInit(NULL) == ACL_SUCCESS, "aclInit");
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS, "aclrtSetDevice");
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");

    void *x_dev = NULL, *weight_dev = NULL, *out_dev = NULL;
    CHECK(aclrtMalloc(&x_dev, sizeof x_host, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    CHECK(aclrtMalloc(&weight_dev, sizeof weight_host, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    CHECK(aclrtMalloc(&out_dev, sizeof out_host, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    CHECK(aclrtMemcpy(x_dev, sizeof x_host, x_host, sizeof x_host, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS,
          "aclrtMemcpy");
    CHECK(aclrtMemcpy(weight_dev, sizeof weight_host, weight_host, sizeof weight_host,
                      ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS, "aclrtMemcpy");

    /* NULL strides = contiguous, as CANN allows. */
    aclTensor *x = aclCreateTensor(shape, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_NCHW, shape, 4, x_dev);
    aclTensor *weight = aclCreateTensor(weight_shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, weight_shape, 1,
                                        weight_dev);
    aclTensor *out = aclCreateTensor(shape, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_NCHW, shape, 4, out_dev);
    CHECK(x && weight && out, "aclCreateTensor");

    uint64_t workspace_size = 0;
    aclOpExecutor *executor = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(x, weight, out, &workspace_size, &executor) == ACLNN_SUCCESS,
          "aclnnPreluGetWorkspaceSize");
    void *workspace = NULL;
    if (workspace_size > 0) {
        CHECK(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    }
    CHECK(aclnnPrelu(workspace, workspace_size, executor, stream) == ACLNN_SUCCESS, "aclnnPrelu");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream");
    CHECK(aclrtMemcpy(out_host, sizeof out_host, out_dev, sizeof out_host, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS,
          "aclrtMemcpy");

    int wrong = 0;
    for (int i = 0; i < 8; ++i) {
        float slope = weight_host[i / 4];
        float expected = x_host[i] > 0.0f ? x_host[i] : slope * x_host[i];
        printf("prelu(%g) with weight %g = %g\n", x_host[i], slope, out_host[i]);
        wrong += out_host[i] != expected;
    }

    aclDestroyTensor(x);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    if (workspace) aclrtFree(workspace);
    aclrtFree(x_dev);
    aclrtFree(weight_dev);
    aclrtFree(out_dev);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    if (wrong) printf("quickstart: %d wrong values\n", wrong); else printf("quickstart: all values correct\n");
    return wrong ? 1 : 0;
}
