/*
 * prelu_mistakes.c - a CANN-style Prelu program that makes one mistake of memcheck's and
 * initcheck's table (docs/checking.md), for tests/test_check_mode.py to run under ACLNN_CHECK:
 *
 *   prelu_mistakes <mistake> [main|stream|thread]
 *
 * mistake: none, memcpy_in, memcpy_out, uninit_input, free_output, small_workspace,
 * unaligned_async, unpinned_async.  Layout: everything on the main thread and one stream
 * (main), the launch and copies on a second stream (stream), or the whole program on a second
 * thread (thread).  Allocations are made in a fixed order, so the reports' numbers are known:
 * #1 self, #2 weight, #3 out, #4 workspace, #5 the pinned host buffer is aclrtMallocHost's
 * (not counted: host memory).  self is a transposed (non-contiguous) view, so phase 1 asks for
 * a workspace.  Prints "out[0..3]" and exits 0 when every call succeeded.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

#define N 16
#define ELEMS (N * N)

static const char *g_mistake = "none";
static const char *g_layout = "main";

static int is(const char *name)
{
    return strcmp(g_mistake, name) == 0;
}

#define CALL(expr)                                                                                 \
    do {                                                                                           \
        int rc_ = (int)(expr);                                                                     \
        if (rc_ != 0) {                                                                            \
            printf("%s failed: %d (%s)\n", #expr, rc_, aclGetRecentErrMsg());                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int run(void); /* not static: -rdynamic exports it, so the reports name it */
int run(void)
{
    CALL(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CALL(aclrtCreateStream(&stream));
    aclrtStream other = NULL;
    if (strcmp(g_layout, "stream") == 0) {
        CALL(aclrtCreateStream(&other));
    }
    aclrtStream work = other != NULL ? other : stream;

    const size_t bytes = ELEMS * sizeof(float);
    void *self = NULL, *weight = NULL, *out = NULL;
    CALL(aclrtMalloc(&self, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(aclrtMalloc(&weight, sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST));

    float *host = NULL;
    CALL(aclrtMallocHost((void **)&host, bytes));
    for (int i = 0; i < ELEMS; i++)
        host[i] = (float)(i % 7) - 3.0f;
    float slope = 0.25f;

    if (is("memcpy_in")) {
        memcpy(self, host, bytes); /* the mistake: a host store to device memory */
    } else if (is("unaligned_async")) {
        CALL(aclrtMemcpyAsync(self, bytes, host, 16, ACL_MEMCPY_HOST_TO_DEVICE, work));
        CALL(aclrtMemcpyAsync((char *)self + 16, bytes - 16, host + 4, bytes - 16,
                              ACL_MEMCPY_HOST_TO_DEVICE, work)); /* dst 16 bytes in */
    } else if (is("unpinned_async")) {
        float *pageable = aligned_alloc(64, bytes); /* aligned: only the pinning is wrong */
        memcpy(pageable, host, bytes);
        CALL(aclrtMemcpyAsync(self, bytes, pageable, bytes, ACL_MEMCPY_HOST_TO_DEVICE, work));
        CALL(aclrtSynchronizeStream(work));
        free(pageable);
    } else {
        CALL(aclrtMemcpyAsync(self, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE, work));
    }
    if (!is("uninit_input")) {
        CALL(aclrtMemcpy(weight, sizeof(float), &slope, sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));
    }

    int64_t shape[2] = {N, N}, transposed[2] = {1, N}, contiguous[2] = {N, 1}, wshape[1] = {1};
    aclTensor *x = aclCreateTensor(shape, 2, ACL_FLOAT, transposed, 0, ACL_FORMAT_ND, shape, 2, self);
    aclTensor *w = aclCreateTensor(wshape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wshape, 1, weight);
    aclTensor *y = aclCreateTensor(shape, 2, ACL_FLOAT, contiguous, 0, ACL_FORMAT_ND, shape, 2, out);

    uint64_t workspace_size = 0;
    aclOpExecutor *executor = NULL;
    CALL(aclnnPreluGetWorkspaceSize(x, w, y, &workspace_size, &executor));
    if (workspace_size == 0) {
        printf("expected a workspace for the transposed input\n");
        return 1;
    }
    void *workspace = NULL;
    size_t allocated = is("small_workspace") ? (size_t)workspace_size / 4 : (size_t)workspace_size;
    CALL(aclrtMalloc(&workspace, allocated, ACL_MEM_MALLOC_HUGE_FIRST));
    if (is("free_output")) {
        CALL(aclrtFree(out)); /* the mistake: the output is freed between phase 1 and the launch */
    }
    int status = aclnnPrelu(workspace, workspace_size, executor, work);
    if (status != 0) {
        printf("aclnnPrelu: %d\n", status);
        return 2;
    }
    CALL(aclrtSynchronizeStream(work));

    float result[ELEMS];
    if (is("memcpy_out")) {
        memcpy(result, out, bytes); /* the mistake: a host load from device memory */
    } else {
        CALL(aclrtMemcpy(result, bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    }
    /* out[i][j] = prelu(self^T[i][j]) = prelu(host[j * N + i]) */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float v = host[j * N + i], want = v > 0 ? v : v * slope;
            if (!is("uninit_input") && result[i * N + j] != want) {
                printf("out[%d][%d] = %g, want %g\n", i, j, result[i * N + j], want);
                return 3;
            }
        }
    printf("out[0..3] %g %g %g %g\n", result[0], result[1], result[2], result[3]);

    aclDestroyTensor(x);
    aclDestroyTensor(w);
    aclDestroyTensor(y);
    CALL(aclrtFree(workspace));
    CALL(aclrtFree(self));
    CALL(aclrtFree(weight));
    CALL(aclrtFree(out));
    CALL(aclrtFreeHost(host));
    if (other != NULL) {
        CALL(aclrtDestroyStream(other));
    }
    CALL(aclrtDestroyStream(stream));
    CALL(aclrtResetDevice(0));
    return 0;
}

void *thread_main(void *result);
void *thread_main(void *result)
{
    *(int *)result = run();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_mistake = argv[1];
    if (argc > 2)
        g_layout = argv[2];
    if (aclInit(NULL) != 0)
        return 1;
    int rc;
    if (strcmp(g_layout, "thread") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, thread_main, &rc);
        pthread_join(thread, NULL);
    } else {
        rc = run();
    }
    aclFinalize();
    return rc;
}
