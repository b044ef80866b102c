/*
 * Faults inside queued work: a max-pool backward whose mask holds an index outside the input
 * plane fails inside its kernel, on the stream's worker. The failure must surface at the next
 * synchronize of that stream (with a message naming the operator), must not poison another
 * stream running at the same time, and the failing stream must work again afterwards. The
 * gradient must not have been written outside its own buffer.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

/* x [1,2,4,4], kernel 2, stride 2 -> out [1,2,2,2], mask [1,2,4,64]. */
static const int64_t X[4] = {1, 2, 4, 4}, POOLED[4] = {1, 2, 2, 2}, MASK[4] = {1, 2, 4, 64}, K[2] = {2, 2},
                     P[2] = {0, 0}, D[2] = {1, 1}, W[1] = {2};

static aclTensor *tensor(const int64_t *dims, uint64_t rank, aclDataType dtype, void **dev, const void *host)
{
    int64_t n = 1;
    for (uint64_t i = 0; i < rank; i++)
        n *= dims[i];
    size_t bytes = (size_t)n * aclDataTypeSize(dtype);
    aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (host != NULL)
        aclrtMemcpy(*dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    else
        aclrtMemset(*dev, bytes, 0, bytes);
    return aclCreateTensor(dims, rank, dtype, NULL, 0, ACL_FORMAT_ND, dims, rank, *dev);
}

/* A max-pool backward's operands and executor: phase 1 done, phase 2 not yet. */
typedef struct {
    void *x_dev, *g_dev, *mask_dev;
    aclTensor *x, *g, *mask, *grad_in;
    aclIntArray *k, *p, *d;
    uint64_t ws;
    aclOpExecutor *ex;
} backward_call;

/* Phase 1 of a max-pool backward whose first argmax is `first_index` (the others in range);
 * the gradient goes to *grad_in_dev, which the caller frees. */
static aclnnStatus backward_prepare(backward_call *call, int32_t first_index, void **grad_in_dev)
{
    float x_host[32], g_host[8];
    for (int i = 0; i < 32; i++)
        x_host[i] = (float)i;
    for (int i = 0; i < 8; i++)
        g_host[i] = 1.0f;
    int8_t mask_host[1 * 2 * 4 * 64];
    memset(mask_host, 0, sizeof mask_host);
    int32_t argmax[8] = {first_index, 7, 13, 15, 5, 7, 13, 15};
    memcpy(mask_host, argmax, sizeof argmax); /* little-endian int32 stream at byte 0 */
    call->x = tensor(X, 4, ACL_FLOAT, &call->x_dev, x_host);
    call->g = tensor(POOLED, 4, ACL_FLOAT, &call->g_dev, g_host);
    call->mask = tensor(MASK, 4, ACL_INT8, &call->mask_dev, mask_host);
    call->grad_in = tensor(X, 4, ACL_FLOAT, grad_in_dev, NULL);
    call->k = aclCreateIntArray(K, 2);
    call->p = aclCreateIntArray(P, 2);
    call->d = aclCreateIntArray(D, 2);
    call->ws = 0;
    call->ex = NULL;
    return aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(call->g, call->x, call->mask, call->k, call->k, call->p,
                                                          call->d, false, call->grad_in, &call->ws, &call->ex);
}

/* Descriptors may go right after phase 2; the device memory once the stream is done. */
static void backward_release(backward_call *call)
{
    aclDestroyTensor(call->x);
    aclDestroyTensor(call->g);
    aclDestroyTensor(call->mask);
    aclDestroyTensor(call->grad_in);
    aclDestroyIntArray(call->k);
    aclDestroyIntArray(call->p);
    aclDestroyIntArray(call->d);
    aclrtFree(call->x_dev);
    aclrtFree(call->g_dev);
    aclrtFree(call->mask_dev);
}

/* Runs a max-pool backward (to completion) whose first argmax is `first_index`. */
static int queue_backward(aclrtStream stream, int32_t first_index, void **grad_in_dev)
{
    backward_call call;
    int st = backward_prepare(&call, first_index, grad_in_dev);
    void *workspace = NULL;
    if (st == ACLNN_SUCCESS && call.ws > 0)
        st = aclrtMalloc(&workspace, call.ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (st == ACLNN_SUCCESS)
        st = aclnnMaxPool2dWithMaskBackward(workspace, call.ws, call.ex, stream);
    if (st == ACLNN_SUCCESS) /* device memory must stay until the stream is done */
        st = aclrtSynchronizeStream(stream);
    if (workspace != NULL)
        aclrtFree(workspace);
    backward_release(&call);
    return st;
}

/* Prelu on its own stream, queued and left running while the other stream fails. */
static aclnnStatus queue_prelu(aclrtStream stream, void **x_dev, void **w_dev, void **out_dev)
{
    static float x_host[2 * 64];
    float w_host[2] = {0.5f, -2.0f};
    for (int i = 0; i < 128; i++)
        x_host[i] = (float)(i - 64);
    const int64_t dims[3] = {1, 2, 64}; /* 2 channels */
    aclTensor *x = tensor(dims, 3, ACL_FLOAT, x_dev, x_host);
    aclTensor *w = tensor(W, 1, ACL_FLOAT, w_dev, w_host);
    aclTensor *out = tensor(dims, 3, ACL_FLOAT, out_dev, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluGetWorkspaceSize(x, w, out, &ws, &ex);
    CHECK(st != ACLNN_SUCCESS || ws == 0, "contiguous prelu asked for a workspace"); /* (then NULL is wrong) */
    if (st == ACLNN_SUCCESS)
        st = aclnnPrelu(NULL, 0, ex, stream);
    aclDestroyTensor(x);
    aclDestroyTensor(w);
    aclDestroyTensor(out);
    return st;
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        printf("runtime set-up failed\n");
        return 1;
    }
    aclrtStream failing = NULL, healthy = NULL;
    CHECK(aclrtCreateStream(&failing) == ACL_SUCCESS && aclrtCreateStream(&healthy) == ACL_SUCCESS, "streams");

    /* 1. the healthy stream gets work, the failing stream gets a bad mask */
    void *px = NULL, *pw = NULL, *pout = NULL;
    CHECK(queue_prelu(healthy, &px, &pw, &pout) == ACLNN_SUCCESS, "prelu queued");

    const int32_t bad_indices[3] = {16, -1, 0x7fffffff}; /* plane has 16 cells */
    for (int i = 0; i < 3; i++) {
        void *grad_dev = NULL;
        /* by hand (not queue_backward): the error must show at the first synchronize */
        backward_call call;
        aclnnStatus st = backward_prepare(&call, bad_indices[i], &grad_dev);
        CHECK(st == ACLNN_SUCCESS, "phase 1 cannot see the mask contents, yet returned %d", st);
        void *workspace = NULL;
        if (st == ACLNN_SUCCESS && call.ws > 0)
            CHECK(aclrtMalloc(&workspace, call.ws, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "workspace");
        if (st == ACLNN_SUCCESS) {
            st = aclnnMaxPool2dWithMaskBackward(workspace, call.ws, call.ex, failing);
            CHECK(st == ACLNN_SUCCESS || st == ACLNN_ERR_PARAM_INVALID,
                  "phase 2 (index %d) returned %d", bad_indices[i], st);
            aclError sync = aclrtSynchronizeStream(failing);
            if (st == ACLNN_SUCCESS) { /* asynchronous: the synchronize reports it */
                CHECK(sync == ACL_ERROR_RT_AICORE_EXCEPTION, "synchronize after a bad mask index %d returned %d, "
                      "expected 507015 (ACL_ERROR_RT_AICORE_EXCEPTION)", bad_indices[i], sync);
                const char *msg = aclGetRecentErrMsg();
                CHECK(msg != NULL && strstr(msg, "aclnnMaxPool2dWithMaskBackward") != NULL,
                      "the synchronize message does not name the operator: %s", msg ? msg : "(none)");
            } else {
                aclGetRecentErrMsg();
            }
            /* the error is reported once: the stream is usable again */
            CHECK(aclrtSynchronizeStream(failing) == ACL_SUCCESS, "the failing stream stays poisoned");
        }
        backward_release(&call);
        aclrtFree(grad_dev);
        if (workspace != NULL)
            aclrtFree(workspace);
    }

    /* 2. the healthy stream never saw the failure, and computed the right thing */
    CHECK(aclrtSynchronizeStream(healthy) == ACL_SUCCESS, "the healthy stream was poisoned: %s",
          aclGetRecentErrMsg());
    float out_host[128];
    aclrtMemcpy(out_host, sizeof out_host, pout, sizeof out_host, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 128; i++) {
        float x = (float)(i - 64), slope = i < 64 ? 0.5f : -2.0f;
        float want = x > 0 ? x : slope * x;
        CHECK(out_host[i] == want, "prelu[%d] = %g, want %g", i, out_host[i], want);
    }
    aclrtFree(px);
    aclrtFree(pw);
    aclrtFree(pout);

    /* 3. a good backward on the formerly failing stream works and is right */
    void *grad_dev = NULL;
    CHECK(queue_backward(failing, 5, &grad_dev) == 0, "valid backward failed: %s", aclGetRecentErrMsg());
    float grad[32];
    aclrtMemcpy(grad, sizeof grad, grad_dev, sizeof grad, ACL_MEMCPY_DEVICE_TO_HOST);
    /* plane 0: argmax 5, 7, 13, 15 each get 1; plane 1 likewise */
    for (int plane = 0; plane < 2; plane++)
        for (int cell = 0; cell < 16; cell++) {
            float want = (cell == 5 || cell == 7 || cell == 13 || cell == 15) ? 1.0f : 0.0f;
            CHECK(grad[plane * 16 + cell] == want, "grad[%d][%d] = %g, want %g", plane, cell,
                  grad[plane * 16 + cell], want);
        }
    aclrtFree(grad_dev);

    aclrtDestroyStream(failing);
    aclrtDestroyStream(healthy);
    aclrtResetDevice(0);
    aclFinalize();
    return tu_finish("test_limits_stream_faults");
}
