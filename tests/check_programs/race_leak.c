/*
 * race_leak.c - small CANN-style Prelu programs, one per mistake racecheck and leakcheck must
 * find and one per correct layout they must pass (tests/test_check_race_leak.py runs each
 * under ACLNN_CHECK and reads the reports).  `race_leak SCENARIO` runs one; it prints the
 * allocation numbers it made (for the test to match against the reports) and the results.
 *
 * Every program computes y = prelu(x, w) with x = [-2, -1, 0, 1, ...] and w = 0.25 and checks y
 * (when the mistake lets it read y at all); exit 0 unless a call failed or a number is wrong.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

#define ROWS 4
#define COLS 64
#define N (ROWS * COLS)

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed with %d: %s\n", __FILE__, __LINE__, #call, rc_,      \
                    aclGetRecentErrMsg());                                                         \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

static int g_next_alloc = 1; /* the checker numbers allocations 1, 2, ... in this order */

static void *dev_alloc(const char *name, size_t bytes)
{
    void *p = NULL;
    CHECK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    printf("alloc %s #%d\n", name, g_next_alloc++);
    return p;
}

/* One Prelu: its device buffers, descriptors and the executor of phase 1. */
typedef struct prelu {
    void *x, *w, *y, *ws;
    aclTensor *tx, *tw, *ty;
    uint64_t ws_size;
    aclOpExecutor *ex;
} prelu;

/* `transposed` makes x a column-major view, so that phase 1 asks for a workspace (staging). */
static void prelu_setup(prelu *p, const char *tag, bool transposed, void *shared_ws)
{
    float host[N];
    for (int i = 0; i < N; ++i)
        host[i] = (float)(i % 7) - 3.0f;
    float weight = 0.25f;
    char name[32];
    snprintf(name, sizeof name, "%s.x", tag);
    p->x = dev_alloc(name, sizeof host);
    snprintf(name, sizeof name, "%s.w", tag);
    p->w = dev_alloc(name, sizeof weight);
    snprintf(name, sizeof name, "%s.y", tag);
    p->y = dev_alloc(name, sizeof host);
    CHECK(aclrtMemcpy(p->x, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(p->w, sizeof weight, &weight, sizeof weight, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t shape[2] = {ROWS, COLS}, strides[2] = {COLS, 1};
    int64_t tshape[2] = {ROWS, COLS}, tstrides[2] = {1, ROWS}, storage[1] = {N};
    int64_t wshape[1] = {1}, wstrides[1] = {1};
    p->tx = transposed ? aclCreateTensor(tshape, 2, ACL_FLOAT, tstrides, 0, ACL_FORMAT_ND, storage, 1, p->x)
                       : aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, p->x);
    p->tw = aclCreateTensor(wshape, 1, ACL_FLOAT, wstrides, 0, ACL_FORMAT_ND, wshape, 1, p->w);
    p->ty = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, p->y);
    CHECK(aclnnPreluGetWorkspaceSize(p->tx, p->tw, p->ty, &p->ws_size, &p->ex));
    p->ws = NULL;
    if (p->ws_size > 0) {
        if (shared_ws != NULL) {
            p->ws = shared_ws;
        } else {
            snprintf(name, sizeof name, "%s.ws", tag);
            p->ws = dev_alloc(name, p->ws_size);
        }
    }
}

static void prelu_launch(prelu *p, aclrtStream stream)
{
    CHECK(aclnnPrelu(p->ws, p->ws_size, p->ex, stream));
}

/* Reads y back and checks it (the test's reference: x * (x < 0 ? 0.25 : 1)). */
static int prelu_result_ok(const prelu *p, bool transposed)
{
    float y[N];
    CHECK(aclrtMemcpy(y, sizeof y, p->y, sizeof y, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int r = 0; r < ROWS; ++r)
        for (int c = 0; c < COLS; ++c) {
            int storage = transposed ? c * ROWS + r : r * COLS + c;
            float x = (float)(storage % 7) - 3.0f;
            float want = x < 0 ? x * 0.25f : x;
            if (y[r * COLS + c] != want) {
                fprintf(stderr, "y[%d][%d] = %g, want %g\n", r, c, y[r * COLS + c], want);
                return 0;
            }
        }
    return 1;
}

static void prelu_teardown(prelu *p, void *shared_ws)
{
    aclDestroyTensor(p->tx);
    aclDestroyTensor(p->tw);
    aclDestroyTensor(p->ty);
    CHECK(aclrtFree(p->x));
    CHECK(aclrtFree(p->w));
    if (p->y != NULL)
        CHECK(aclrtFree(p->y));
    if (p->ws != NULL && p->ws != shared_ws)
        CHECK(aclrtFree(p->ws));
}

/* ---- the scenarios --------------------------------------------------------------------------- */

static aclrtStream g_stream;

typedef struct launch_args {
    prelu *p;
    aclrtStream stream;
} launch_args;

static void *launch_thread(void *arg)
{
    launch_args *a = arg;
    CHECK(aclrtSetDevice(0));
    prelu_launch(a->p, a->stream);
    return NULL;
}

static void launch_from_thread(prelu *p, aclrtStream stream)
{
    pthread_t thread;
    launch_args a = {p, stream};
    pthread_create(&thread, NULL, launch_thread, &a);
    pthread_join(thread, NULL);
}

/* aclrtMemcpy D2H of the result: before aclrtSynchronizeStream (mistake) or after a wait. */
static int d2h(const char *layout)
{
    prelu p;
    prelu_setup(&p, "p", false, NULL);
    aclrtEvent done = NULL;
    if (strcmp(layout, "thread") == 0 || strcmp(layout, "thread_event") == 0)
        launch_from_thread(&p, g_stream); /* joining the thread does not wait for the stream */
    else
        prelu_launch(&p, strcmp(layout, "default") == 0 ? NULL : g_stream);
    if (strcmp(layout, "sync") == 0)
        CHECK(aclrtSynchronizeStream(g_stream));
    if (strcmp(layout, "thread_event") == 0 || strcmp(layout, "event") == 0) {
        CHECK(aclrtCreateEvent(&done));
        CHECK(aclrtRecordEvent(done, g_stream));
        CHECK(aclrtSynchronizeEvent(done));
    }
    if (strcmp(layout, "query") == 0) {
        aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
        while (status != ACL_STREAM_STATUS_COMPLETE)
            CHECK(aclrtStreamQuery(g_stream, &status));
    }
    if (strcmp(layout, "device") == 0)
        CHECK(aclrtSynchronizeDevice());
    int ok = prelu_result_ok(&p, false);
    CHECK(aclrtSynchronizeDevice());
    if (done != NULL)
        CHECK(aclrtDestroyEvent(done));
    prelu_teardown(&p, NULL);
    return ok;
}

/* aclrtFree of the output: before the launch has run (mistake) or after the stream's work. */
static int free_output(const char *layout)
{
    prelu p;
    prelu_setup(&p, "p", false, NULL);
    aclrtStream other = NULL;
    CHECK(aclrtCreateStream(&other));
    prelu_launch(&p, g_stream);
    if (strcmp(layout, "sync") == 0)
        CHECK(aclrtSynchronizeStream(g_stream));
    if (strcmp(layout, "other_stream") == 0)
        CHECK(aclrtSynchronizeStream(other)); /* the wrong stream: nothing waits for g_stream */
    CHECK(aclrtFree(p.y));
    p.y = NULL;
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtDestroyStream(other));
    prelu_teardown(&p, NULL);
    return 1;
}

/* Stream A computes y; stream B uses y as its input: without an event (mistake) or with one. */
static int two_streams(const char *layout)
{
    prelu a, b;
    prelu_setup(&a, "a", false, NULL);
    prelu_setup(&b, "b", false, NULL);
    aclDestroyTensor(b.tx);
    int64_t shape[2] = {ROWS, COLS}, strides[2] = {COLS, 1};
    aclTensor *from_a = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, a.y);
    b.tx = from_a;
    CHECK(aclDestroyAclOpExecutor(b.ex));
    CHECK(aclnnPreluGetWorkspaceSize(b.tx, b.tw, b.ty, &b.ws_size, &b.ex));
    aclrtStream sb = NULL;
    CHECK(aclrtCreateStream(&sb));
    aclrtEvent ready = NULL;
    CHECK(aclrtCreateEvent(&ready));
    bool threads = strcmp(layout, "threads") == 0 || strcmp(layout, "threads_event") == 0;
    bool event = strcmp(layout, "event") == 0 || strcmp(layout, "threads_event") == 0;
    if (threads)
        launch_from_thread(&a, g_stream);
    else
        prelu_launch(&a, g_stream);
    if (event) {
        CHECK(aclrtRecordEvent(ready, g_stream));
        CHECK(aclrtStreamWaitEvent(sb, ready));
    }
    if (threads)
        launch_from_thread(&b, sb);
    else
        prelu_launch(&b, sb);
    CHECK(aclrtSynchronizeStream(sb));
    CHECK(aclrtSynchronizeStream(g_stream));
    int ok = prelu_result_ok(&a, false);
    CHECK(aclrtDestroyEvent(ready));
    CHECK(aclrtDestroyStream(sb));
    prelu_teardown(&a, NULL);
    prelu_teardown(&b, NULL);
    return ok;
}

/* The input copied in with aclrtMemcpyAsync on one stream, the operator on another: without an
 * event (mistake) or with one. */
static int async_copy(const char *layout)
{
    prelu p;
    prelu_setup(&p, "p", false, NULL);
    float host[N];
    for (int i = 0; i < N; ++i)
        host[i] = (float)(i % 7) - 3.0f;
    aclrtStream copier = NULL;
    CHECK(aclrtCreateStream(&copier));
    aclrtEvent copied = NULL;
    CHECK(aclrtCreateEvent(&copied));
    void *pinned = NULL;
    CHECK(aclrtMallocHost(&pinned, sizeof host));
    memcpy(pinned, host, sizeof host);
    CHECK(aclrtMemcpyAsync(p.x, sizeof host, pinned, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE, copier));
    if (strcmp(layout, "event") == 0) {
        CHECK(aclrtRecordEvent(copied, copier));
        CHECK(aclrtStreamWaitEvent(g_stream, copied));
    }
    prelu_launch(&p, g_stream);
    CHECK(aclrtSynchronizeDevice());
    int ok = prelu_result_ok(&p, false);
    CHECK(aclrtFreeHost(pinned));
    CHECK(aclrtDestroyEvent(copied));
    CHECK(aclrtDestroyStream(copier));
    prelu_teardown(&p, NULL);
    return ok;
}

/* The other host-synchronous and queued accesses: aclrtMemcpy2d of the result before the
 * stream's work ("copy2d"; "copy2d_sync" waits first), and aclrtMemsetD32Async of the input on
 * another stream ("fill32"; "fill32_event" orders it with an event). */
static int other_calls(const char *what, const char *layout)
{
    prelu p;
    prelu_setup(&p, "p", false, NULL);
    aclrtStream filler = NULL;
    CHECK(aclrtCreateStream(&filler));
    aclrtEvent filled = NULL;
    CHECK(aclrtCreateEvent(&filled));
    bool ordered = strcmp(layout, "ordered") == 0;
    float rows[ROWS][COLS];
    if (strcmp(what, "fill32") == 0) {
        CHECK(aclrtMemsetD32Async(p.x, N * sizeof(float), 0x40000000u /* 2.0f */, N, filler));
        if (ordered) {
            CHECK(aclrtRecordEvent(filled, filler));
            CHECK(aclrtStreamWaitEvent(g_stream, filled));
        }
    }
    prelu_launch(&p, g_stream);
    if (strcmp(what, "copy2d") == 0) {
        if (ordered)
            CHECK(aclrtSynchronizeStream(g_stream));
        CHECK(aclrtMemcpy2d(rows, sizeof rows[0], p.y, COLS * sizeof(float), COLS * sizeof(float), ROWS,
                            ACL_MEMCPY_DEVICE_TO_HOST));
    }
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtDestroyEvent(filled));
    CHECK(aclrtDestroyStream(filler));
    prelu_teardown(&p, NULL);
    return 1;
}

/* One workspace for two launches on two streams: unordered (mistake), ordered by an event, or
 * each launch with its own workspace. */
static int shared_workspace(const char *layout)
{
    prelu a, b;
    prelu_setup(&a, "a", true, NULL);
    bool own = strcmp(layout, "own") == 0;
    prelu_setup(&b, "b", true, own ? NULL : a.ws);
    if (a.ws_size == 0) {
        fprintf(stderr, "a strided Prelu input asked for no workspace\n");
        return 0;
    }
    aclrtStream sb = NULL;
    CHECK(aclrtCreateStream(&sb));
    aclrtEvent done = NULL;
    CHECK(aclrtCreateEvent(&done));
    bool threads = strcmp(layout, "threads") == 0;
    if (threads)
        launch_from_thread(&a, g_stream);
    else
        prelu_launch(&a, g_stream);
    if (strcmp(layout, "event") == 0) {
        CHECK(aclrtRecordEvent(done, g_stream));
        CHECK(aclrtStreamWaitEvent(sb, done));
    }
    if (threads)
        launch_from_thread(&b, sb);
    else
        prelu_launch(&b, sb);
    CHECK(aclrtSynchronizeDevice());
    int ok = prelu_result_ok(&a, true) && prelu_result_ok(&b, true);
    CHECK(aclrtDestroyEvent(done));
    CHECK(aclrtDestroyStream(sb));
    prelu_teardown(&a, NULL);
    prelu_teardown(&b, a.ws);
    return ok;
}

/* Objects left alive: all of them, at aclFinalize ("finalize", or "thread": made by another
 * thread) or at exit without it ("exit"); only the host-side handles ("host"); none ("none"). */
static int leaks(const char *layout)
{
    bool leak_device = strcmp(layout, "finalize") == 0 || strcmp(layout, "exit") == 0 ||
                       strcmp(layout, "thread") == 0;
    bool leak_host = strcmp(layout, "none") != 0;
    prelu p;
    prelu_setup(&p, "p", false, NULL);
    aclrtStream s = NULL;
    aclrtEvent e = NULL;
    aclrtContext ctx = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&e));
    CHECK(aclrtCreateContext(&ctx, 0));
    CHECK(aclrtSetDevice(0)); /* back to the default context */
    int64_t dims[2] = {2, 3};
    aclIntArray *array = aclCreateIntArray(dims, 2);
    float one = 1.0f;
    aclScalar *scalar = aclCreateScalar(&one, ACL_FLOAT);
    prelu_launch(&p, s);
    CHECK(aclrtSynchronizeStream(s));
    int ok = prelu_result_ok(&p, false);
    uint64_t ws = 0;
    aclOpExecutor *unused = NULL; /* phase 1 without phase 2 */
    CHECK(aclnnPreluGetWorkspaceSize(p.tx, p.tw, p.ty, &ws, &unused));
    if (!leak_host) {
        CHECK(aclDestroyAclOpExecutor(unused));
        CHECK(aclDestroyIntArray(array));
        CHECK(aclDestroyScalar(scalar));
        aclDestroyTensor(p.tx);
        aclDestroyTensor(p.tw);
        aclDestroyTensor(p.ty);
    }
    if (!leak_device) {
        CHECK(aclrtDestroyContext(ctx));
        CHECK(aclrtDestroyEvent(e));
        CHECK(aclrtDestroyStream(s));
        CHECK(aclrtFree(p.x));
        CHECK(aclrtFree(p.w));
        CHECK(aclrtFree(p.y));
    } else {
        printf("leaked stream %p event %p context %p\n", s, e, ctx);
    }
    return ok;
}

static void *leak_thread(void *result)
{
    CHECK(aclrtSetDevice(0));
    *(int *)result = leaks("thread");
    return NULL;
}

static int leaks_from_thread(void)
{
    pthread_t thread;
    int ok = 0;
    pthread_create(&thread, NULL, leak_thread, &ok);
    pthread_join(thread, NULL);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s d2h|free|two_streams|workspace|leak LAYOUT\n", argv[0]);
        return 2;
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&g_stream));
    const char *what = argv[1], *layout = argv[2];
    int ok;
    if (strcmp(what, "d2h") == 0)
        ok = d2h(layout);
    else if (strcmp(what, "free") == 0)
        ok = free_output(layout);
    else if (strcmp(what, "two_streams") == 0)
        ok = two_streams(layout);
    else if (strcmp(what, "copy2d") == 0 || strcmp(what, "fill32") == 0)
        ok = other_calls(what, layout);
    else if (strcmp(what, "async_copy") == 0)
        ok = async_copy(layout);
    else if (strcmp(what, "workspace") == 0)
        ok = shared_workspace(layout);
    else if (strcmp(what, "leak") == 0 && strcmp(layout, "thread") == 0)
        ok = leaks_from_thread();
    else if (strcmp(what, "leak") == 0)
        ok = leaks(layout);
    else
        return 2;
    bool leak = strcmp(what, "leak") == 0;
    bool finalize = !(leak && strcmp(layout, "exit") == 0);
    if (!(leak && (strcmp(layout, "finalize") == 0 || strcmp(layout, "exit") == 0 ||
                   strcmp(layout, "thread") == 0))) {
        CHECK(aclrtDestroyStream(g_stream));
        CHECK(aclrtResetDevice(0));
    }
    if (finalize)
        CHECK(aclFinalize());
    printf("%s\n", ok ? "results ok" : "results WRONG");
    return ok ? 0 : 1;
}
