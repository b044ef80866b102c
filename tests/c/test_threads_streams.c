/*
 * Threads and streams: several host threads, each with its own two streams, run a chain of
 * different operators concurrently on shared input tensors (shared descriptors and device memory)
 * and their own outputs, with events ordering the work across the two streams, many times over.
 * Every result must equal, bit for bit, the result of the same chain run by one thread on one
 * stream first. Built with -fsanitize=thread by `make tsan`.
 *
 * The chain (A, B = the thread's streams):
 *   A: MaxPool2dWithMask(x) -> pooled, mask; record e1
 *   B: Prelu(x, w) -> activated; wait e1; MaxPool2dWithMaskBackward(g, x, mask) -> grad; record e2
 *   A: UpsampleNearestExact1d(seq) -> upsampled; wait e2; ReplicationPad2d(grad) -> padded;
 *      Im2col(padded) -> cols; Im2colBackward(cols) -> folded
 * So B's backward reads A's mask (e1), and A's pad reads B's gradient (e2).
 *
 * ACLNN_TEST_ITERS overrides the iteration count (default 40; `make tsan` uses more).
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"

#define THREADS 4
#define MAX_WORKSPACES 8

/* Shapes: x [2,3,12,10]; k 3, s 2, p 1 -> pooled [2,3,6,5], mask [2,3,9,32*(ceil(30/16)+1)=96].
 * pad grad [2,3,12,10] by [1,2,0,1] -> [2,3,13,13]; im2col k 2, d 1, p 0, s 1 -> [2,12,144];
 * seq [2,3,9] -> upsampled [2,3,20]. */
static const int64_t X_SHAPE[4] = {2, 3, 12, 10}, POOL_SHAPE[4] = {2, 3, 6, 5}, MASK_SHAPE[4] = {2, 3, 9, 96};
static const int64_t W_SHAPE[1] = {3}, PAD_SHAPE[4] = {2, 3, 13, 13}, COLS_SHAPE[3] = {2, 12, 144};
static const int64_t SEQ_SHAPE[3] = {2, 3, 9}, UP_SHAPE[3] = {2, 3, 20};
static const int64_t K3[2] = {3, 3}, S2[2] = {2, 2}, P1[2] = {1, 1}, D1[2] = {1, 1}, PADS[4] = {1, 2, 0, 1};
static const int64_t K2[2] = {2, 2}, S1[2] = {1, 1}, P0[2] = {0, 0}, HW[2] = {13, 13}, OUT_LEN[1] = {20};

typedef struct {
    void *dev;
    size_t bytes;
    aclTensor *t;
} buffer;

/* Inputs shared by every thread. */
static buffer g_x, g_w, g_g, g_seq;
static aclIntArray *g_k3, *g_s2, *g_p1, *g_d1, *g_pads, *g_k2, *g_s1, *g_p0, *g_hw, *g_out_len;

/* One chain's outputs. */
typedef struct {
    buffer pooled, mask, activated, grad, upsampled, padded, cols, folded;
} outputs;

static int64_t numel(const int64_t *shape, int rank)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

static int make_buffer(buffer *b, const int64_t *shape, int rank, aclDataType dtype, size_t elem, const void *host)
{
    b->bytes = (size_t)numel(shape, rank) * elem;
    if (aclrtMalloc(&b->dev, b->bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return -1;
    if (host != NULL)
        aclrtMemcpy(b->dev, b->bytes, host, b->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    else
        aclrtMemset(b->dev, b->bytes, 0x7f, b->bytes); /* garbage that must be overwritten */
    b->t = aclCreateTensor(shape, (uint64_t)rank, dtype, NULL, 0, ACL_FORMAT_ND, shape, (uint64_t)rank, b->dev);
    return b->t == NULL ? -1 : 0;
}

static void free_buffer(buffer *b)
{
    aclDestroyTensor(b->t);
    aclrtFree(b->dev);
}

static int make_outputs(outputs *o)
{
    int bad = 0;
    bad |= make_buffer(&o->pooled, POOL_SHAPE, 4, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->mask, MASK_SHAPE, 4, ACL_INT8, 1, NULL);
    bad |= make_buffer(&o->activated, X_SHAPE, 4, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->grad, X_SHAPE, 4, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->upsampled, UP_SHAPE, 3, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->padded, PAD_SHAPE, 4, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->cols, COLS_SHAPE, 3, ACL_FLOAT, 4, NULL);
    bad |= make_buffer(&o->folded, PAD_SHAPE, 4, ACL_FLOAT, 4, NULL);
    return bad;
}

static void free_outputs(outputs *o)
{
    buffer *all[] = {&o->pooled, &o->mask, &o->activated, &o->grad, &o->upsampled, &o->padded, &o->cols, &o->folded};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_buffer(all[i]);
}

/* Workspaces of one chain, freed after it has been synchronized. */
typedef struct {
    void *ptr[MAX_WORKSPACES];
    int count;
} workspaces;

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* Phase 2 with a workspace of the size phase 1 asked for; reports failures with the message. */
static int launch(const char *name, aclnnStatus phase1, uint64_t size, aclOpExecutor *ex, phase2_fn run,
                  aclrtStream stream, workspaces *ws)
{
    if (phase1 != ACLNN_SUCCESS) {
        printf("%s phase 1 failed: %d %s\n", name, phase1, aclGetRecentErrMsg());
        return 1;
    }
    void *workspace = NULL;
    if (size > 0) {
        if (aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            return 1;
        ws->ptr[ws->count++] = workspace;
    }
    aclnnStatus st = run(workspace, size, ex, stream);
    if (st != ACLNN_SUCCESS) {
        printf("%s phase 2 failed: %d %s\n", name, st, aclGetRecentErrMsg());
        return 1;
    }
    return 0;
}

/* Phase 1 must run before its outputs (size, executor) are read: one statement each. */
#define RUN(name, phase1_call, phase2, stream)                             \
    do {                                                                   \
        aclnnStatus phase1_status = (phase1_call);                         \
        bad |= launch(name, phase1_status, size, ex, phase2, stream, ws); \
    } while (0)

/* Queues the whole chain on streams a and b (a == b for the single-stream reference run). */
static int queue_chain(outputs *o, aclrtStream a, aclrtStream b, aclrtEvent e1, aclrtEvent e2, workspaces *ws)
{
    uint64_t size = 0;
    aclOpExecutor *ex = NULL;
    int bad = 0;
    RUN("MaxPool2dWithMask",
        aclnnMaxPool2dWithMaskGetWorkspaceSize(g_x.t, g_k3, g_s2, g_p1, g_d1, false, o->pooled.t, o->mask.t, &size, &ex),
        aclnnMaxPool2dWithMask, a);
    bad |= aclrtRecordEvent(e1, a) != ACL_SUCCESS;
    RUN("Prelu", aclnnPreluGetWorkspaceSize(g_x.t, g_w.t, o->activated.t, &size, &ex), aclnnPrelu, b);
    bad |= aclrtStreamWaitEvent(b, e1) != ACL_SUCCESS;
    RUN("MaxPool2dWithMaskBackward",
        aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(g_g.t, g_x.t, o->mask.t, g_k3, g_s2, g_p1, g_d1, false,
                                                       o->grad.t, &size, &ex),
        aclnnMaxPool2dWithMaskBackward, b);
    bad |= aclrtRecordEvent(e2, b) != ACL_SUCCESS;
    RUN("UpsampleNearestExact1d",
        aclnnUpsampleNearestExact1dGetWorkspaceSize(g_seq.t, g_out_len, 0.0, o->upsampled.t, &size, &ex),
        aclnnUpsampleNearestExact1d, a);
    bad |= aclrtStreamWaitEvent(a, e2) != ACL_SUCCESS;
    RUN("ReplicationPad2d", aclnnReplicationPad2dGetWorkspaceSize(o->grad.t, g_pads, o->padded.t, &size, &ex),
        aclnnReplicationPad2d, a);
    RUN("Im2col", aclnnIm2colGetWorkspaceSize(o->padded.t, g_k2, g_s1 /* dilation 1 */, g_p0, g_s1, o->cols.t, &size, &ex),
        aclnnIm2col, a);
    RUN("Im2colBackward",
        aclnnIm2colBackwardGetWorkspaceSize(o->cols.t, g_hw, g_k2, g_s1, g_p0, g_s1, o->folded.t, &size, &ex),
        aclnnIm2colBackward, a);
    return bad;
}

static int finish_chain(aclrtStream a, aclrtStream b, workspaces *ws)
{
    int bad = 0;
    aclError st = aclrtSynchronizeStream(a);
    if (st != ACL_SUCCESS) {
        printf("synchronize A: %d %s\n", st, aclGetRecentErrMsg());
        bad = 1;
    }
    st = aclrtSynchronizeStream(b);
    if (st != ACL_SUCCESS) {
        printf("synchronize B: %d %s\n", st, aclGetRecentErrMsg());
        bad = 1;
    }
    for (int i = 0; i < ws->count; i++)
        aclrtFree(ws->ptr[i]);
    ws->count = 0;
    return bad;
}

static outputs g_golden;
static int g_iters = 40;

static int same_outputs(const outputs *got, int thread, int iter)
{
    const buffer *want[] = {&g_golden.pooled, &g_golden.mask, &g_golden.activated, &g_golden.grad,
                            &g_golden.upsampled, &g_golden.padded, &g_golden.cols, &g_golden.folded};
    const buffer *have[] = {&got->pooled, &got->mask, &got->activated, &got->grad,
                            &got->upsampled, &got->padded, &got->cols, &got->folded};
    static const char *names[] = {"pooled", "mask", "activated", "grad", "upsampled", "padded", "cols", "folded"};
    int bad = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        unsigned char *host = malloc(have[i]->bytes);
        aclrtMemcpy(host, have[i]->bytes, have[i]->dev, have[i]->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        unsigned char *ref = malloc(want[i]->bytes);
        aclrtMemcpy(ref, want[i]->bytes, want[i]->dev, want[i]->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        if (memcmp(host, ref, have[i]->bytes) != 0) {
            printf("thread %d iteration %d: %s differs from the single-threaded run\n", thread, iter, names[i]);
            bad = 1;
        }
        free(host);
        free(ref);
    }
    return bad;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    intptr_t bad = 0;
    if (aclrtSetDevice(0) != ACL_SUCCESS)
        return (void *)1;
    aclrtStream a = NULL, b = NULL;
    aclrtEvent e1 = NULL, e2 = NULL;
    outputs o;
    workspaces ws = {{0}, 0};
    bad |= aclrtCreateStream(&a) != ACL_SUCCESS || aclrtCreateStream(&b) != ACL_SUCCESS;
    bad |= aclrtCreateEvent(&e1) != ACL_SUCCESS || aclrtCreateEvent(&e2) != ACL_SUCCESS;
    bad |= make_outputs(&o);
    for (int iter = 0; iter < g_iters && !bad; iter++) {
        /* re-poison the outputs so every iteration must write them again */
        buffer *all[] = {&o.pooled, &o.mask, &o.activated, &o.grad, &o.upsampled, &o.padded, &o.cols, &o.folded};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            bad |= aclrtMemsetAsync(all[i]->dev, all[i]->bytes, 0x7f, all[i]->bytes, i % 2 ? a : b) != ACL_SUCCESS;
        bad |= aclrtSynchronizeStream(b) != ACL_SUCCESS; /* b's poisoning is done before a's chain starts */
        bad |= queue_chain(&o, a, b, e1, e2, &ws);
        bad |= finish_chain(a, b, &ws);
        if (!bad)
            bad |= same_outputs(&o, id, iter);
    }
    free_outputs(&o);
    aclrtDestroyEvent(e1);
    aclrtDestroyEvent(e2);
    aclrtDestroyStream(a);
    aclrtDestroyStream(b);
    aclrtResetDevice(0);
    return (void *)bad;
}

int main(void)
{
    const char *iters = getenv("ACLNN_TEST_ITERS");
    if (iters != NULL && atoi(iters) > 0)
        g_iters = atoi(iters);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        printf("runtime set-up failed\n");
        return 1;
    }
    /* Shared inputs: ties in x (values repeat) make the argmax rule matter. */
    float x[2 * 3 * 12 * 10], g[2 * 3 * 6 * 5], seq[2 * 3 * 9], w[3] = {0.25f, -1.5f, 2.0f};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = (float)((int)((i * 37u + 11u) % 23u) - 11) * 0.5f;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        g[i] = (float)((int)((i * 13u + 5u) % 17u) - 8) * 0.125f;
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        seq[i] = (float)i;
    int bad = 0;
    bad |= make_buffer(&g_x, X_SHAPE, 4, ACL_FLOAT, 4, x);
    bad |= make_buffer(&g_w, W_SHAPE, 1, ACL_FLOAT, 4, w);
    bad |= make_buffer(&g_g, POOL_SHAPE, 4, ACL_FLOAT, 4, g);
    bad |= make_buffer(&g_seq, SEQ_SHAPE, 3, ACL_FLOAT, 4, seq);
    g_k3 = aclCreateIntArray(K3, 2);
    g_s2 = aclCreateIntArray(S2, 2);
    g_p1 = aclCreateIntArray(P1, 2);
    g_d1 = aclCreateIntArray(D1, 2);
    g_pads = aclCreateIntArray(PADS, 4);
    g_k2 = aclCreateIntArray(K2, 2);
    g_s1 = aclCreateIntArray(S1, 2);
    g_p0 = aclCreateIntArray(P0, 2);
    g_hw = aclCreateIntArray(HW, 2);
    g_out_len = aclCreateIntArray(OUT_LEN, 1);
    if (bad) {
        printf("input set-up failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }

    /* The reference: the same chain, one thread, one stream. */
    aclrtStream only = NULL;
    aclrtEvent e1 = NULL, e2 = NULL;
    workspaces ws = {{0}, 0};
    bad |= aclrtCreateStream(&only) != ACL_SUCCESS;
    bad |= aclrtCreateEvent(&e1) != ACL_SUCCESS || aclrtCreateEvent(&e2) != ACL_SUCCESS;
    bad |= make_outputs(&g_golden);
    bad |= queue_chain(&g_golden, only, only, e1, e2, &ws);
    bad |= finish_chain(only, only, &ws);
    if (bad) {
        printf("single-threaded reference run failed\n");
        return 1;
    }
    /* Sanity: the reference is not garbage (pooled[0] is the max of the top-left 2x2 of x). */
    float pooled0 = 0;
    aclrtMemcpy(&pooled0, 4, g_golden.pooled.dev, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    float expect0 = x[0];
    const float window[4] = {x[0], x[1], x[10], x[11]};
    for (int i = 1; i < 4; i++)
        if (window[i] > expect0)
            expect0 = window[i];
    if (pooled0 != expect0) {
        printf("reference pooled[0] = %g, expected %g\n", pooled0, expect0);
        return 1;
    }

    pthread_t threads[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        bad |= result != NULL;
    }

    free_outputs(&g_golden);
    free_buffer(&g_x);
    free_buffer(&g_w);
    free_buffer(&g_g);
    free_buffer(&g_seq);
    aclIntArray *arrays[] = {g_k3, g_s2, g_p1, g_d1, g_pads, g_k2, g_s1, g_p0, g_hw, g_out_len};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        aclDestroyIntArray(arrays[i]);
    aclrtDestroyEvent(e1);
    aclrtDestroyEvent(e2);
    aclrtDestroyStream(only);
    aclrtResetDevice(0);
    aclFinalize();
    if (bad) {
        printf("FAILED\n");
        return 1;
    }
    printf("ok: %d threads x %d iterations match the single-threaded run bit for bit\n", THREADS, g_iters);
    return 0;
}
