/*
 * test_meta_executor.c - the executor lifecycle, driven through a real operator (aclnnPrelu):
 *   - contiguous call: workspace 0, correct values
 *   - strided input and strided, padded output: workspace > 0 (staging), correct values, the
 *     output's padding untouched
 *   - phase 2 misuse: NULL executor, consumed executor, NULL workspace, too small workspace
 *   - repeatable executors: relaunch with rebound addresses while the previous launch is still
 *     queued, destroy while queued, use after destroy
 *   - executors follow their tensors (CANN's opbase): aclSet*TensorAddr sets the given tensor's
 *     address whatever the index; aclSetRawTensorAddr after phase 1 redirects the launch; a tensor
 *     destroyed before the launch -> 161002 with a message; one destroyed after it is fine
 *   - aclnnCpuLaunchAndSynchronize (libaclnn's phase 2 + wait in one call): the values are there
 *     when it returns, a failed phase 2's status passes through, NULL arguments are refused; a
 *     launch it makes on another stream than the one it waits for still runs unsynchronized
 *   - many live executors (the registry): 2000 repeatable ones, launched and destroyed in a
 *     scattered order; each destroyed one is reported, each live one still runs
 * The reference is a plain loop here: out = x > 0 ? x : weight[c] * x.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnn/opdev/op_errno.h"

#include "test_util.h"

#define N 2
#define C 3
#define W 4
#define NUMEL (N * C * W)

static aclrtStream stream;

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    CHECK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    return p;
}
static void upload(void *dev, const void *host, size_t bytes)
{
    CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS, "H2D");
}
static void download(void *host, const void *dev, size_t bytes)
{
    CHECK(aclrtMemcpy(host, bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS, "D2H");
}

static const float weight_values[C] = {0.25f, -0.5f, 2.0f};

/* x[n][c][w] (logical) */
static float input_value(int seed, int n, int c, int w) { return (float)((n * 7 + c * 3 + w + seed) % 9) - 4.0f; }

static float prelu_ref(float x, int c) { return x > 0 ? x : weight_values[c] * x; }

typedef struct {
    void *self_dev, *weight_dev, *out_dev;
    aclTensor *self, *weight, *out;
} prelu_args;

static void make_contiguous_args(prelu_args *a, int seed)
{
    float host[NUMEL];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int w = 0; w < W; w++)
                host[(n * C + c) * W + w] = input_value(seed, n, c, w);
    int64_t dims[3] = {N, C, W}, wdims[1] = {C};
    a->self_dev = dev_alloc(sizeof host);
    a->out_dev = dev_alloc(sizeof host);
    a->weight_dev = dev_alloc(sizeof weight_values);
    upload(a->self_dev, host, sizeof host);
    upload(a->weight_dev, weight_values, sizeof weight_values);
    a->self = aclCreateTensor(dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 3, a->self_dev);
    a->out = aclCreateTensor(dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 3, a->out_dev);
    a->weight = aclCreateTensor(wdims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wdims, 1, a->weight_dev);
}

static void free_args(prelu_args *a)
{
    aclDestroyTensor(a->self);
    aclDestroyTensor(a->weight);
    aclDestroyTensor(a->out);
    aclrtFree(a->self_dev);
    aclrtFree(a->weight_dev);
    aclrtFree(a->out_dev);
}

/* How many values of out differ from prelu(input(seed), weights). */
static int wrong_prelu_values(const void *out_dev, int seed, const float *weights)
{
    float host[NUMEL];
    download(host, out_dev, sizeof host);
    int bad = 0;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int w = 0; w < W; w++) {
                float x = input_value(seed, n, c, w);
                bad += host[(n * C + c) * W + w] != (x > 0 ? x : weights[c] * x);
            }
    return bad;
}

/* out == prelu(input(seed), weights) */
static void check_prelu_out(const void *out_dev, int seed, const float *weights, const char *context)
{
    const int bad = wrong_prelu_values(out_dev, seed, weights);
    CHECK(bad == 0, "%s: %d wrong values", context, bad);
}

static void check_contiguous_out(const void *out_dev, int seed, const char *context)
{
    check_prelu_out(out_dev, seed, weight_values, context);
}

static void test_contiguous(void)
{
    prelu_args a;
    make_contiguous_args(&a, 0);
    uint64_t ws = 123;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(ws == 0, "contiguous fp32 needs no workspace, got %llu", (unsigned long long)ws);
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "phase 2");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_contiguous_out(a.out_dev, 0, "contiguous");

    /* the executor was consumed: a second launch is reported, not a use-after-free */
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_ERR_PARAM_INVALID, "consumed executor");
    EXPECT_MSG("consumed executor", "aclnnPrelu", "not a live executor");
    CHECK(aclnnPrelu(NULL, 0, NULL, stream) == ACLNN_ERR_PARAM_NULLPTR, "NULL executor");
    EXPECT_MSG("NULL executor", "aclnnPrelu", "executor");
    CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_ERR_INNER, "repeatable after consumption");
    (void)aclGetRecentErrMsg();
    free_args(&a);
}

/* A consumed executor's pointer stays dead when the next phase 1 makes a new executor, though
 * malloc may place the new object where the consumed one was: the stale pointer is refused and
 * the new executor is still there to launch (it once ran the new executor, on its tensors). */
static void test_stale_pointer_after_reuse(void)
{
    prelu_args first, second;
    make_contiguous_args(&first, 1);
    make_contiguous_args(&second, 2);
    uint64_t ws = 0;
    aclOpExecutor *consumed = NULL, *fresh = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(first.self, first.weight, first.out, &ws, &consumed) == ACLNN_SUCCESS,
          "stale: phase 1");
    CHECK(aclnnPrelu(NULL, 0, consumed, stream) == ACLNN_SUCCESS, "stale: phase 2");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "stale: sync"); /* the task frees the object */
    for (int round = 0; round < 50; round++) {
        CHECK(aclnnPreluGetWorkspaceSize(second.self, second.weight, second.out, &ws, &fresh) == ACLNN_SUCCESS,
              "stale: next phase 1");
        CHECK(fresh != consumed, "stale: round %d handed out the consumed executor's pointer again", round);
        CHECK(aclnnPrelu(NULL, 0, consumed, stream) == ACLNN_ERR_PARAM_INVALID, "stale: relaunch refused");
        EXPECT_MSG("stale relaunch", "aclnnPrelu", "not a live executor");
        CHECK(aclrtMemset(second.out_dev, NUMEL * sizeof(float), 0, NUMEL * sizeof(float)) == ACL_SUCCESS,
              "stale: clear out");
        CHECK(aclnnPrelu(NULL, 0, fresh, stream) == ACLNN_SUCCESS, "stale: the new executor still launches");
        CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "stale: sync");
        check_contiguous_out(second.out_dev, 2, "stale: the new executor's result");
    }
    free_args(&first);
    free_args(&second);
}

static void test_strided(void)
{
    /* self: logical [N, C, W] stored as [N, W, C] (a transpose); out: rows padded to 5 */
    float self_host[NUMEL];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int w = 0; w < W; w++)
                self_host[(n * W + w) * C + c] = input_value(1, n, c, w);
    enum { OUT_ROW = 5, OUT_PLANE = C * OUT_ROW, OUT_STORAGE = N * OUT_PLANE + 2 };
    float out_host[OUT_STORAGE];
    for (int i = 0; i < OUT_STORAGE; i++)
        out_host[i] = 777.0f;

    void *self_dev = dev_alloc(sizeof self_host), *out_dev = dev_alloc(sizeof out_host);
    void *weight_dev = dev_alloc(sizeof weight_values);
    upload(self_dev, self_host, sizeof self_host);
    upload(out_dev, out_host, sizeof out_host);
    upload(weight_dev, weight_values, sizeof weight_values);

    int64_t dims[3] = {N, C, W}, wdims[1] = {C};
    int64_t self_strides[3] = {W * C, 1, C}, self_storage[3] = {N, W, C};
    int64_t out_strides[3] = {OUT_PLANE, OUT_ROW, 1}, out_storage[1] = {OUT_STORAGE};
    aclTensor *self = aclCreateTensor(dims, 3, ACL_FLOAT, self_strides, 0, ACL_FORMAT_ND, self_storage, 3, self_dev);
    aclTensor *out = aclCreateTensor(dims, 3, ACL_FLOAT, out_strides, 1, ACL_FORMAT_ND, out_storage, 1, out_dev);
    aclTensor *weight = aclCreateTensor(wdims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wdims, 1, weight_dev);
    CHECK(self && out && weight, "strided tensors");

    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex) == ACLNN_SUCCESS, "strided phase 1");
    CHECK(ws >= 2 * NUMEL * sizeof(float), "staging for input and output, got %llu", (unsigned long long)ws);

    /* too small a workspace: reported, and the normal executor is consumed as CANN does */
    void *workspace = dev_alloc(ws);
    CHECK(aclnnPrelu(workspace, ws - 1, ex, stream) == ACLNN_ERR_PARAM_INVALID, "small workspace");
    EXPECT_MSG("small workspace", "aclnnPrelu", "workspaceSize");
    CHECK(aclnnPrelu(workspace, ws, ex, stream) == ACLNN_ERR_PARAM_INVALID, "consumed by failed launch");
    (void)aclGetRecentErrMsg();

    /* NULL workspace with a size: 161001 and consumed */
    CHECK(aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex) == ACLNN_SUCCESS, "phase 1 again");
    CHECK(aclnnPrelu(NULL, ws, ex, stream) == ACLNN_ERR_PARAM_NULLPTR, "NULL workspace");
    EXPECT_MSG("NULL workspace", "aclnnPrelu", "workspace");
    CHECK(aclnnPrelu(workspace, ws, ex, stream) == ACLNN_ERR_PARAM_INVALID, "consumed by NULL workspace");
    (void)aclGetRecentErrMsg();

    CHECK(aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex) == ACLNN_SUCCESS, "phase 1 third");
    CHECK(aclnnPrelu(workspace, ws, ex, stream) == ACLNN_SUCCESS, "strided phase 2");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    download(out_host, out_dev, sizeof out_host);
    int bad = 0, touched = 0;
    for (int i = 0; i < OUT_STORAGE; i++) {
        int rel = i - 1, n = rel / OUT_PLANE, c = (rel % OUT_PLANE) / OUT_ROW, w = rel % OUT_ROW;
        bool in_view = rel >= 0 && n < N && w < W;
        if (in_view)
            bad += out_host[i] != prelu_ref(input_value(1, n, c, w), c);
        else
            touched += out_host[i] != 777.0f;
    }
    CHECK(bad == 0, "strided: %d wrong values", bad);
    CHECK(touched == 0, "strided: %d padding elements overwritten", touched);

    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyTensor(weight);
    aclrtFree(self_dev);
    aclrtFree(out_dev);
    aclrtFree(weight_dev);
    aclrtFree(workspace);
}

static void test_repeatable(void)
{
    prelu_args a, b;
    make_contiguous_args(&a, 2);
    make_contiguous_args(&b, 5);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "repeatable");

    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "run 1");
    /* rebind while run 1 may still be queued: input 0 and output 0 to b's buffers */
    CHECK(aclSetInputTensorAddr(ex, 0, a.self, b.self_dev) == ACLNN_SUCCESS, "rebind input");
    CHECK(aclSetOutputTensorAddr(ex, 0, a.out, b.out_dev) == ACLNN_SUCCESS, "rebind output");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "run 2");

    /* back to a's buffers (overall index 2 = the output, 0 = self) */
    CHECK(aclSetTensorAddr(ex, 2, a.out, a.out_dev) == ACLNN_SUCCESS, "overall index 2 = output");
    CHECK(aclSetTensorAddr(ex, 0, a.self, a.self_dev) == ACLNN_SUCCESS, "overall index 0 = input");

    /* a repeatable executor survives a failed launch */
    CHECK(aclnnPrelu(NULL, 8, ex, stream) == ACLNN_ERR_PARAM_NULLPTR, "NULL workspace, repeatable");
    (void)aclGetRecentErrMsg();
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "run 3 (back on a's buffers)");

    /* destroy while launches may still be queued: they keep it alive until they have run */
    CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "destroy repeatable");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_contiguous_out(a.out_dev, 2, "run 1 / run 3");
    check_contiguous_out(b.out_dev, 5, "run 2 (rebound)");

    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_ERR_PARAM_INVALID, "launch after destroy");
    EXPECT_MSG("after destroy", "aclnnPrelu", "not a live executor");
    CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_ERR_INNER, "double destroy");
    (void)aclGetRecentErrMsg();
    free_args(&a);
    free_args(&b);
}

/* The index is ignored: the call sets the tensor's address, and the launch uses it. */
static void test_rebind_by_tensor(void)
{
    static const float other_weights[C] = {1.5f, -2.0f, 0.125f};
    prelu_args a, b;
    make_contiguous_args(&a, 3);
    make_contiguous_args(&b, 6);
    void *w2 = dev_alloc(sizeof other_weights);
    upload(w2, other_weights, sizeof other_weights);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "repeatable");
    /* index 0 is self's slot, the tensor is the weight: the weight is rebound */
    CHECK(aclSetInputTensorAddr(ex, 0, a.weight, w2) == ACLNN_SUCCESS, "wrong index, right tensor");
    /* an index past the outputs: still the output tensor's address */
    CHECK(aclSetOutputTensorAddr(ex, 5, a.out, b.out_dev) == ACLNN_SUCCESS, "index past the outputs");
    CHECK(aclSetTensorAddr(ex, 7, a.self, b.self_dev) == ACLNN_SUCCESS, "index past every tensor");
    /* a tensor the executor was not planned with: its address is set, the executor unchanged */
    CHECK(aclSetInputTensorAddr(ex, 1, b.weight, w2) == ACLNN_SUCCESS, "foreign tensor");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "launch");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_prelu_out(b.out_dev, 6, other_weights, "rebound by tensor");
    CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "destroy");
    CHECK(aclSetRawTensorAddr(b.weight, b.weight_dev) == ACLNN_SUCCESS, "restore b");
    aclrtFree(w2);
    free_args(&a);
    free_args(&b);
}

/* aclSetRawTensorAddr between phase 1 and phase 2 redirects a normal executor's launch. */
static void test_rebind_by_raw_address(void)
{
    prelu_args a, b;
    make_contiguous_args(&a, 4);
    make_contiguous_args(&b, 7);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(aclSetRawTensorAddr(a.self, b.self_dev) == ACLNN_SUCCESS, "raw self");
    CHECK(aclSetRawTensorAddr(a.out, b.out_dev) == ACLNN_SUCCESS, "raw out");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "launch");
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_prelu_out(b.out_dev, 7, weight_values, "raw address after phase 1");
    CHECK(aclSetRawTensorAddr(a.self, a.self_dev) == ACLNN_SUCCESS, "restore self");
    CHECK(aclSetRawTensorAddr(a.out, a.out_dev) == ACLNN_SUCCESS, "restore out");
    free_args(&a);
    free_args(&b);
}

/* A tensor destroyed between phase 1 and the launch: an error, not a read of freed memory (the
 * address may even hold a new tensor by then); one destroyed after the launch call is fine (the
 * launch took its address, as CANN's kernel launch does). */
static void test_destroyed_tensor(void)
{
    prelu_args a;
    make_contiguous_args(&a, 8);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    aclDestroyTensor(a.weight);
    int64_t wdims[1] = {C};
    a.weight = aclCreateTensor(wdims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wdims, 1, a.weight_dev);
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_ERR_PARAM_INVALID, "destroyed weight");
    EXPECT_MSG("destroyed weight", "aclnnPrelu", "input tensor 1", "destroyed");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_ERR_PARAM_INVALID, "consumed by the failure");
    (void)aclGetRecentErrMsg();

    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1 again");
    CHECK(aclnnPrelu(NULL, 0, ex, stream) == ACLNN_SUCCESS, "launch");
    aclTensor *self = a.self, *out = a.out;
    aclDestroyTensor(self); /* the launch may still be queued: it holds the addresses */
    aclDestroyTensor(out);
    a.self = a.out = NULL;
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_contiguous_out(a.out_dev, 8, "tensors destroyed after the launch");
    free_args(&a);
}

static void test_launch_and_synchronize(void)
{
    prelu_args a;
    make_contiguous_args(&a, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclError waited = -1;
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS, "repeatable");
    CHECK(aclnnCpuLaunchAndSynchronize(aclnnPrelu, NULL, 0, ex, stream, &waited) == ACLNN_SUCCESS &&
              waited == ACL_SUCCESS, "launch and wait");
    check_contiguous_out(a.out_dev, 4, "launch and wait"); /* no aclrtSynchronizeStream of its own */

    CHECK(aclnnCpuLaunchAndSynchronize(NULL, NULL, 0, ex, stream, &waited) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL launch");
    EXPECT_MSG("NULL launch", "aclnnCpuLaunchAndSynchronize", "launch");
    CHECK(aclnnCpuLaunchAndSynchronize(aclnnPrelu, NULL, 0, ex, stream, NULL) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL waited");
    EXPECT_MSG("NULL waited", "aclnnCpuLaunchAndSynchronize", "waited");
    waited = -1;
    CHECK(aclnnCpuLaunchAndSynchronize(aclnnPrelu, NULL, 8, ex, stream, &waited) == ACLNN_ERR_PARAM_NULLPTR &&
              waited == ACL_SUCCESS, "phase 2's status passes through, no wait");
    EXPECT_MSG("NULL workspace", "aclnnPrelu", "workspace");
    CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS, "destroy");
    CHECK(aclnnCpuLaunchAndSynchronize(aclnnPrelu, NULL, 0, ex, stream, &waited) == ACLNN_ERR_PARAM_INVALID,
          "destroyed executor");
    EXPECT_MSG("destroyed executor", "aclnnPrelu", "not a live executor");
    free_args(&a);
}

/* A launch function that queues on another stream than the one aclnnCpuLaunchAndSynchronize
 * synchronizes: that launch is not the one waited for, so its stream must wake its (sleeping)
 * worker as for any launch; the task runs without anyone synchronizing that stream. */
static aclrtStream other_stream;
static aclnnStatus prelu_on_other_stream(void *workspace, uint64_t size, aclOpExecutor *ex, aclrtStream s)
{
    (void)s;
    return aclnnPrelu(workspace, size, ex, other_stream);
}

static void test_launch_on_another_stream(void)
{
    CHECK(aclrtCreateStream(&other_stream) == ACL_SUCCESS, "second stream");
    tu_sleep_us(50000); /* its worker, started, now sleeps until a launch wakes it */
    prelu_args a;
    make_contiguous_args(&a, 5);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclError waited = -1;
    /* NaN bits: no wrong value is read as a right one (nor left uninitialised for valgrind) */
    CHECK(aclrtMemset(a.out_dev, NUMEL * sizeof(float), 0xff, NUMEL * sizeof(float)) == ACL_SUCCESS, "fill");
    CHECK(aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &ex) == ACLNN_SUCCESS, "phase 1");
    CHECK(aclnnCpuLaunchAndSynchronize(prelu_on_other_stream, NULL, 0, ex, stream, &waited) == ACLNN_SUCCESS &&
              waited == ACL_SUCCESS, "launch on another stream");
    /* No synchronize of other_stream: its worker runs the task (2 s: far past any nap).  Under
     * racecheck this poll is the very race it reports (reading what a queued task writes), so
     * there the stream is synchronized first and only the values are checked. */
    if ((aclnnCpuCheckTools() & 4u) != 0)
        CHECK(aclrtSynchronizeStream(other_stream) == ACL_SUCCESS, "sync other (racecheck)");
    int bad = NUMEL;
    for (int tries = 0; tries < 200 && bad != 0; tries++) {
        bad = wrong_prelu_values(a.out_dev, 5, weight_values);
        if (bad != 0)
            tu_sleep_us(10000);
    }
    CHECK(bad == 0, "the other stream's launch ran unsynchronized: %d wrong values", bad);
    CHECK(aclrtSynchronizeStream(other_stream) == ACL_SUCCESS, "sync other");
    CHECK(aclrtDestroyStream(other_stream) == ACL_SUCCESS, "destroy other");
    free_args(&a);
}

/* The registry keeps many live executors apart: destroyed ones are refused, the others run. */
#define MANY_EXECUTORS 2000
static void test_many_executors(void)
{
    static aclOpExecutor *many[MANY_EXECUTORS];
    prelu_args a;
    make_contiguous_args(&a, 6);
    uint64_t ws = 0;
    int created = 0;
    for (int i = 0; i < MANY_EXECUTORS; i++) {
        many[i] = NULL;
        created += aclnnPreluGetWorkspaceSize(a.self, a.weight, a.out, &ws, &many[i]) == ACLNN_SUCCESS &&
                   aclSetAclOpExecutorRepeatable(many[i]) == ACLNN_SUCCESS;
    }
    CHECK(created == MANY_EXECUTORS, "%d of %d repeatable executors created", created, MANY_EXECUTORS);
    /* 7 is prime to 2000: i -> 7i mod 2000 visits every executor once, out of creation order */
    int destroyed = 0, launched = 0, refused = 0;
    for (int i = 0; i < MANY_EXECUTORS; i++) {
        int k = (int)((7L * i) % MANY_EXECUTORS);
        if (k % 3 == 0)
            destroyed += aclDestroyAclOpExecutor(many[k]) == ACLNN_SUCCESS;
    }
    for (int i = 0; i < MANY_EXECUTORS; i++) {
        int k = (int)((11L * i) % MANY_EXECUTORS);
        aclnnStatus st = aclnnPrelu(NULL, 0, many[k], stream);
        if (k % 3 == 0)
            refused += st == ACLNN_ERR_PARAM_INVALID;
        else
            launched += st == ACLNN_SUCCESS;
    }
    (void)aclGetRecentErrMsg();
    const int expect_destroyed = (MANY_EXECUTORS + 2) / 3;
    CHECK(destroyed == expect_destroyed && refused == expect_destroyed, "destroyed %d, refused %d of %d", destroyed,
          refused, expect_destroyed);
    CHECK(launched == MANY_EXECUTORS - expect_destroyed, "launched %d", launched);
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync");
    check_contiguous_out(a.out_dev, 6, "many executors");
    int left = 0;
    for (int k = 0; k < MANY_EXECUTORS; k++)
        if (k % 3 != 0)
            left += aclDestroyAclOpExecutor(many[k]) == ACLNN_SUCCESS;
    CHECK(left == MANY_EXECUTORS - expect_destroyed, "destroyed the other %d", left);
    free_args(&a);
}

int main(void)
{
    CHECK(aclInit(NULL) == ACL_SUCCESS, "aclInit");
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS, "aclrtSetDevice");
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");
    test_contiguous();
    test_stale_pointer_after_reuse();
    test_strided();
    test_repeatable();
    test_rebind_by_tensor();
    test_rebind_by_raw_address();
    test_destroyed_tensor();
    test_launch_and_synchronize();
    test_launch_on_another_stream();
    test_many_executors();
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("meta executor: %d failures\n", failures);
    return failures != 0;
}
