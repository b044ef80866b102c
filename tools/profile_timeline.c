/*
 * profile_timeline.c - the program tools/trace_screenshot.py profiles for docs/runtime.md's
 * timeline picture: the five forward operators on two streams, with queued copies, an event
 * between the streams and msproftx stamps, three iterations.  It makes no collection call: run it
 * under ACLNN_PROFILE=DIR, which records from the library's load and writes at exit.
 *
 *   stream "images" (a): copy x in -> ReplicationPad2d -> MaxPool2dWithMask -> record event
 *   stream "signals" (b): copy s in -> UpsampleNearestExact1d -> Prelu -> wait for the event
 *                         -> Im2col of the padded image -> copy the columns out
 *   host: a start/stop range per iteration, a push/pop range around the launches, a mark on
 *         stream a (aclprofMarkEx) once its input is queued, and a host mark after synchronizing.
 *
 *   cc -std=c11 tools/profile_timeline.c -Ilibaclnn/include -Ilibaclnn/include/aclnnop \
 *      -Lbuild/lib64 -laclnn -o profile_timeline && ACLNN_PROFILE=/tmp/prof ./profile_timeline
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"

#define ITERATIONS 3
#define WORKSPACE_BYTES (4u << 20) /* one per stream: launches on a stream run in order */

#define CHECK(cond, what)                                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            const char *msg = aclGetRecentErrMsg();                                              \
            fprintf(stderr, "profile_timeline: %s failed: %s\n", what, msg ? msg : "(no message)"); \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

/* A device buffer and the contiguous FLOAT (or INT8) tensor that views it. */
typedef struct {
    void *dev;
    size_t bytes;
    aclTensor *t;
} buffer;

static int make_buffer(buffer *b, const int64_t *shape, int nd, aclDataType dtype)
{
    size_t elem = dtype == ACL_INT8 ? 1 : 4, count = 1;
    int64_t strides[8];
    for (int i = nd - 1; i >= 0; i--) {
        strides[i] = (int64_t)count;
        count *= (size_t)shape[i];
    }
    b->bytes = count * elem;
    CHECK(aclrtMalloc(&b->dev, b->bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    b->t = aclCreateTensor(shape, (uint64_t)nd, dtype, strides, 0, ACL_FORMAT_ND, shape, (uint64_t)nd, b->dev);
    CHECK(b->t != NULL, "aclCreateTensor");
    return 0;
}

static void free_buffer(buffer *b)
{
    aclDestroyTensor(b->t);
    aclrtFree(b->dev);
}

/* Phase 2 of an operator whose phase 1 (already called: its outputs are ws and ex) answered
 * `status`, on `stream` with the stream's workspace. */
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static int launch(const char *op, aclnnStatus status, uint64_t ws, aclOpExecutor *ex, phase2_fn run,
                  void *workspace, aclrtStream stream)
{
    CHECK(status == ACLNN_SUCCESS && ws <= WORKSPACE_BYTES, op);
    CHECK(run(workspace, ws, ex, stream) == ACLNN_SUCCESS, op);
    return 0;
}

typedef struct {
    buffer x, padded, pooled, mask;  /* stream a: [1,4,64,64] -> [1,4,66,66] -> [1,4,33,33] + mask */
    buffer s, wide, act, weight, cols; /* stream b: [2,8,256] -> [2,8,1024] -> Prelu; Im2col [1,36,4096] */
    float *x_host, *s_host, *cols_host;
    void *ws_a, *ws_b;
    /* the operators' attributes: padding 1 on each side, kernels 2x2 and 3x3, (0, 0), (1, 1), and
     * the upsampled length */
    aclIntArray *pad1, *k2, *k3, *zeros, *ones, *length;
} timeline_data;

static int make_data(timeline_data *d)
{
    const int64_t x[] = {1, 4, 64, 64}, padded[] = {1, 4, 66, 66}, pooled[] = {1, 4, 33, 33};
    /* INT8 [N, C, kH*kW, 32 * (ceil(Ho*Wo / 16) + 1)] (docs/kernels_max_pool.md) */
    const int64_t mask[] = {1, 4, 4, 32 * ((33 * 33 + 15) / 16 + 1)};
    const int64_t s[] = {2, 8, 256}, wide[] = {2, 8, 1024}, weight[] = {8}, cols[] = {1, 36, 64 * 64};
    if (make_buffer(&d->x, x, 4, ACL_FLOAT) || make_buffer(&d->padded, padded, 4, ACL_FLOAT) ||
        make_buffer(&d->pooled, pooled, 4, ACL_FLOAT) || make_buffer(&d->mask, mask, 4, ACL_INT8) ||
        make_buffer(&d->s, s, 3, ACL_FLOAT) || make_buffer(&d->wide, wide, 3, ACL_FLOAT) ||
        make_buffer(&d->act, wide, 3, ACL_FLOAT) || make_buffer(&d->weight, weight, 1, ACL_FLOAT) ||
        make_buffer(&d->cols, cols, 3, ACL_FLOAT))
        return 1;
    /* an async copy's host side is pinned memory (aclrtMallocHost), as CANN asks */
    CHECK(aclrtMallocHost((void **)&d->x_host, d->x.bytes) == ACL_SUCCESS, "aclrtMallocHost");
    CHECK(aclrtMallocHost((void **)&d->s_host, d->s.bytes) == ACL_SUCCESS, "aclrtMallocHost");
    CHECK(aclrtMallocHost((void **)&d->cols_host, d->cols.bytes) == ACL_SUCCESS, "aclrtMallocHost");
    for (size_t i = 0; i < d->x.bytes / 4; i++)
        d->x_host[i] = (float)(i % 97) - 48.0f;
    for (size_t i = 0; i < d->s.bytes / 4; i++)
        d->s_host[i] = (float)(i % 31) - 15.0f;
    const float slopes[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
    CHECK(aclrtMemcpy(d->weight.dev, d->weight.bytes, slopes, sizeof slopes, ACL_MEMCPY_HOST_TO_DEVICE) ==
              ACL_SUCCESS, "aclrtMemcpy");
    CHECK(aclrtMalloc(&d->ws_a, WORKSPACE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    CHECK(aclrtMalloc(&d->ws_b, WORKSPACE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "aclrtMalloc");
    const int64_t pad[] = {1, 1, 1, 1}, two[] = {2, 2}, three[] = {3, 3}, zero[] = {0, 0}, one[] = {1, 1};
    const int64_t length[] = {1024};
    d->pad1 = aclCreateIntArray(pad, 4);
    d->k2 = aclCreateIntArray(two, 2);
    d->k3 = aclCreateIntArray(three, 2);
    d->zeros = aclCreateIntArray(zero, 2);
    d->ones = aclCreateIntArray(one, 2);
    d->length = aclCreateIntArray(length, 1);
    return 0;
}

static void free_data(timeline_data *d)
{
    buffer *all[] = {&d->x, &d->padded, &d->pooled, &d->mask, &d->s, &d->wide, &d->act, &d->weight, &d->cols};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_buffer(all[i]);
    aclrtFreeHost(d->x_host);
    aclrtFreeHost(d->s_host);
    aclrtFreeHost(d->cols_host);
    aclrtFree(d->ws_a);
    aclrtFree(d->ws_b);
    aclIntArray *arrays[] = {d->pad1, d->k2, d->k3, d->zeros, d->ones, d->length};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        aclDestroyIntArray(arrays[i]);
}

/* Stream a: the image in, padded by one pixel, pooled 2x2; then the event stream b waits for. */
static int queue_images(timeline_data *d, aclrtStream a, aclrtEvent padded_ready)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclrtMemcpyAsync(d->x.dev, d->x.bytes, d->x_host, d->x.bytes, ACL_MEMCPY_HOST_TO_DEVICE, a) ==
              ACL_SUCCESS, "aclrtMemcpyAsync");
    const char mark[] = "image queued";
    CHECK(aclprofMarkEx(mark, strlen(mark), a) == ACL_SUCCESS, "aclprofMarkEx (run under ACLNN_PROFILE=DIR)");
    aclnnStatus status = aclnnReplicationPad2dGetWorkspaceSize(d->x.t, d->pad1, d->padded.t, &ws, &ex);
    int failed = launch("ReplicationPad2d", status, ws, ex, aclnnReplicationPad2d, d->ws_a, a);
    CHECK(failed == 0 && aclrtRecordEvent(padded_ready, a) == ACL_SUCCESS, "aclrtRecordEvent");
    /* kernel 2x2, stride 2, padding 0, dilation 1 */
    status = aclnnMaxPool2dWithMaskGetWorkspaceSize(d->padded.t, d->k2, d->k2, d->zeros, d->ones, false, d->pooled.t,
                                                    d->mask.t, &ws, &ex);
    return launch("MaxPool2dWithMask", status, ws, ex, aclnnMaxPool2dWithMask, d->ws_a, a);
}

/* Stream b: the signal in, upsampled 4x and activated; then, once stream a has padded the image,
 * the image's 3x3 columns, copied out. */
static int queue_signals(timeline_data *d, aclrtStream b, aclrtEvent padded_ready)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclrtMemcpyAsync(d->s.dev, d->s.bytes, d->s_host, d->s.bytes, ACL_MEMCPY_HOST_TO_DEVICE, b) ==
              ACL_SUCCESS, "aclrtMemcpyAsync");
    aclnnStatus status = aclnnUpsampleNearestExact1dGetWorkspaceSize(d->s.t, d->length, 0.0, d->wide.t, &ws, &ex);
    int failed = launch("UpsampleNearestExact1d", status, ws, ex, aclnnUpsampleNearestExact1d, d->ws_b, b);
    status = aclnnPreluGetWorkspaceSize(d->wide.t, d->weight.t, d->act.t, &ws, &ex);
    failed = failed || launch("Prelu", status, ws, ex, aclnnPrelu, d->ws_b, b);
    CHECK(failed == 0 && aclrtStreamWaitEvent(b, padded_ready) == ACL_SUCCESS, "aclrtStreamWaitEvent");
    /* kernel 3x3, dilation 1, padding 0, stride 1 */
    status = aclnnIm2colGetWorkspaceSize(d->padded.t, d->k3, d->ones, d->zeros, d->ones, d->cols.t, &ws, &ex);
    failed = launch("Im2col", status, ws, ex, aclnnIm2col, d->ws_b, b);
    CHECK(failed == 0 && aclrtMemcpyAsync(d->cols_host, d->cols.bytes, d->cols.dev, d->cols.bytes,
                                          ACL_MEMCPY_DEVICE_TO_HOST, b) == ACL_SUCCESS, "aclrtMemcpyAsync");
    return 0;
}

/* One iteration: a start/stop range around it, a push/pop range around the queuing. */
static int iterate(timeline_data *d, aclrtStream a, aclrtStream b, aclrtEvent padded_ready, int n)
{
    char text[32];
    void *stamp = aclprofCreateStamp();
    CHECK(stamp != NULL, "aclprofCreateStamp (run under ACLNN_PROFILE=DIR)");
    uint32_t range = 0;
    snprintf(text, sizeof text, "iteration %d", n);
    CHECK(aclprofSetStampTraceMessage(stamp, text, (uint32_t)strlen(text)) == ACL_SUCCESS &&
              aclprofRangeStart(stamp, &range) == ACL_SUCCESS, "aclprofRangeStart");
    CHECK(aclprofSetStampTraceMessage(stamp, "queue", 5) == ACL_SUCCESS && aclprofPush(stamp) == ACL_SUCCESS,
          "aclprofPush");
    if (queue_images(d, a, padded_ready) || queue_signals(d, b, padded_ready))
        return 1;
    CHECK(aclprofPop() == ACL_SUCCESS, "aclprofPop");
    CHECK(aclrtSynchronizeStream(a) == ACL_SUCCESS && aclrtSynchronizeStream(b) == ACL_SUCCESS,
          "aclrtSynchronizeStream");
    CHECK(aclprofSetStampTraceMessage(stamp, "synchronized", 12) == ACL_SUCCESS && aclprofMark(stamp) == ACL_SUCCESS,
          "aclprofMark");
    CHECK(aclprofRangeStop(range) == ACL_SUCCESS, "aclprofRangeStop");
    aclprofDestroyStamp(stamp);
    return 0;
}

int main(void)
{
    CHECK(aclInit(NULL) == ACL_SUCCESS, "aclInit");
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS, "aclrtSetDevice");
    aclrtStream a = NULL, b = NULL;
    CHECK(aclrtCreateStream(&a) == ACL_SUCCESS && aclrtCreateStream(&b) == ACL_SUCCESS, "aclrtCreateStream");
    aclrtEvent padded_ready = NULL;
    CHECK(aclrtCreateEvent(&padded_ready) == ACL_SUCCESS, "aclrtCreateEvent");
    timeline_data d;
    memset(&d, 0, sizeof d);
    int failed = make_data(&d);
    for (int n = 0; n < ITERATIONS && !failed; n++)
        failed = iterate(&d, a, b, padded_ready, n);
    if (!failed)
        printf("profile_timeline: %d iterations on two streams; cols[0..2] = %g %g %g\n", ITERATIONS,
               d.cols_host[0], d.cols_host[1], d.cols_host[2]);
    free_data(&d);
    aclrtDestroyEvent(padded_ready);
    aclrtDestroyStream(a);
    aclrtDestroyStream(b);
    aclrtResetDevice(0);
    aclFinalize();
    return failed;
}
