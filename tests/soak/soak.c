/*
 * soak.c - the checking mode's soak (docs/checking.md, "The soak"): `soak SECONDS [THREADS
 * [STREAMS]]`, run under ACLNN_CHECK=1 by `make soak` (10 minutes) and by tests/test_soak.py (a
 * short run in `make test`).
 *
 * THREADS host threads (default 4), each with STREAMS streams (default 3), loop until the time is
 * up.  Each round draws an operator (the ten and MaxPool2dWithIndices with its backward), a
 * product for the thread (aclnnCpuSetThreadSocVersion), a dtype, shapes, attributes and strided
 * layouts (tests/soak/soak_ops.h), then:
 *   stream A: aclrtMemcpyAsync of every tensor's pinned staging into its device storage; event 1
 *   stream B: waits for event 1; the operator (max-pool: the forward; event 2; stream C waits
 *             for it and runs the backward); event 3
 *   stream D: waits for event 3; aclrtMemcpyAsync of every output back into its staging
 * (A..D drawn from the thread's streams, so some coincide), and the results are checked against
 * the host reference by one of: a callback on D (aclrtLaunchCallback, run by the report thread
 * in aclrtProcessReport), a host function on D (aclrtLaunchHostFunc), or the thread itself after
 * aclrtSynchronizeStream(D), aclrtSynchronizeEvent or polling aclrtQueryEventStatus.  Then the
 * round's workspaces and tensors are freed.
 *
 * The main thread samples the resident set every 100 ms.  At the end it prints launches, wrong
 * results, failed calls, the checking mode's error count and the resident set after the warm-up
 * (a quarter of the run, at least 5 s) and at the end; the exit status is 1 when any of the
 * three counts is not 0 or the resident set grew by more than SOAK_RSS_SLACK_MB (default 8).
 * SOAK_BIG_EVERY=N makes one Prelu round in N use blocks of 2 MiB and more (off by default: the
 * quarantine then holds up to 256 MiB of them, and the resident set swings with its turnover).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "soak_ops.h"

#define MAX_STREAMS 8
#define EVENTS 4

static const char *const PRODUCTS[] = {"Ascend910B", "Ascend910_93", "Ascend950"};
static const aclDataType DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

static atomic_long g_launches, g_rounds, g_wrong, g_failed;
static atomic_long g_by_op[OP_COUNT];
static atomic_int g_stop, g_report_stop;
static int g_streams = 3;
static int g_big_every; /* SOAK_BIG_EVERY */
static pthread_t g_reporter;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double rss_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0.0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static void failed(const soak_job *job, const char *what, int status)
{
    if (atomic_fetch_add(&g_failed, 1) < 10)
        fprintf(stderr, "soak: %s %s on %s failed: %d %s\n", OP_NAMES[job->op], what, job->product, status,
                aclGetRecentErrMsg());
}

/* ---- launching ----------------------------------------------------------------------------- */

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* Phase 2 with a workspace of the size phase 1 planned (freed after the round's wait). */
static int run_phase2(soak_job *job, aclnnStatus phase1, uint64_t size, aclOpExecutor *ex, phase2_fn run,
                      aclrtStream stream)
{
    if (phase1 != ACLNN_SUCCESS) {
        failed(job, "phase 1", phase1);
        return -1;
    }
    void *workspace = NULL;
    if (size > 0) {
        if (aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            return -1;
        job->ws[job->nws++] = workspace;
    }
    aclnnStatus st = run(workspace, size, ex, stream);
    if (st != ACLNN_SUCCESS) {
        failed(job, "launch", st);
        return -1;
    }
    job->launches++;
    return 0;
}

/* Phase 1 runs before its outputs (size, executor) are read: the comma is a sequence point. */
#define RUN(phase1_call, phase2, stream) \
    (phase1 = (phase1_call), run_phase2(job, phase1, size, ex, phase2, stream))

/* The max-pool pair: the forward on b, the backward on c behind event `between`. */
static int launch_max_pool(soak_job *job, aclrtStream b, aclrtStream c, aclrtEvent between)
{
    uint64_t size = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus phase1;
    aclTensor **t = (aclTensor *[]){job->t[0].t, job->t[1].t, job->t[2].t, job->t[3].t, job->t[4].t};
    aclIntArray **a = job->arr;
    int mask = job->op == OP_MP_MASK;
    if ((mask ? RUN(aclnnMaxPool2dWithMaskGetWorkspaceSize(t[0], a[0], a[1], a[2], a[3], job->ceil_mode, t[1], t[2],
                                                            &size, &ex),
                    aclnnMaxPool2dWithMask, b)
              : RUN(aclnnMaxPool2dWithIndicesGetWorkspaceSize(t[0], a[0], a[1], a[2], a[3], job->ceil_mode, t[1], t[2],
                                                               &size, &ex),
                    aclnnMaxPool2dWithIndices, b)) != 0)
        return -1;
    if (aclrtRecordEvent(between, b) != ACL_SUCCESS || aclrtStreamWaitEvent(c, between) != ACL_SUCCESS)
        return -1;
    return mask ? RUN(aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(t[3], t[0], t[2], a[0], a[1], a[2], a[3],
                                                                      job->ceil_mode, t[4], &size, &ex),
                      aclnnMaxPool2dWithMaskBackward, c)
                : RUN(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(t[3], t[0], t[2], a[0], a[1], a[2], a[3],
                                                                         job->ceil_mode, t[4], &size, &ex),
                      aclnnMaxPool2dWithIndicesBackward, c);
}

/* Queues the job's operator(s); returns 0 and the stream the last one ran on in *last. */
static int launch_job(soak_job *job, aclrtStream b, aclrtStream c, aclrtEvent between, aclrtStream *last)
{
    uint64_t size = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus phase1;
    aclTensor **t = (aclTensor *[]){job->t[0].t, job->t[1].t, job->t[2].t, job->t[3].t, job->t[4].t};
    aclIntArray **a = job->arr;
    *last = b;
    switch (job->op) {
    case OP_PRELU: return RUN(aclnnPreluGetWorkspaceSize(t[0], t[1], t[2], &size, &ex), aclnnPrelu, b);
    case OP_PRELU_BW:
        return RUN(aclnnPreluBackwardGetWorkspaceSize(t[2], t[0], t[1], t[3], t[4], &size, &ex), aclnnPreluBackward, b);
    case OP_PAD: return RUN(aclnnReplicationPad2dGetWorkspaceSize(t[0], a[0], t[1], &size, &ex), aclnnReplicationPad2d, b);
    case OP_PAD_BW:
        return RUN(aclnnReplicationPad2dBackwardGetWorkspaceSize(t[0], t[1], a[0], t[2], &size, &ex),
                   aclnnReplicationPad2dBackward, b);
    case OP_UP:
        return RUN(aclnnUpsampleNearestExact1dGetWorkspaceSize(t[0], a[0], 0.0, t[1], &size, &ex),
                   aclnnUpsampleNearestExact1d, b);
    case OP_UP_BW:
        return RUN(aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(t[0], a[0], a[1], 0.0, t[1], &size, &ex),
                   aclnnUpsampleNearestExact1dBackward, b);
    case OP_MP_MASK: case OP_MP_INDICES: *last = c; return launch_max_pool(job, b, c, between);
    case OP_IM2COL: return RUN(aclnnIm2colGetWorkspaceSize(t[0], a[0], a[1], a[2], a[3], t[1], &size, &ex), aclnnIm2col, b);
    default:
        return RUN(aclnnIm2colBackwardGetWorkspaceSize(t[0], a[0], a[1], a[2], a[3], a[4], t[1], &size, &ex),
                   aclnnIm2colBackward, b);
    }
}

/* ---- checking the results ------------------------------------------------------------------ */

static void verify_job(void *arg)
{
    soak_job *job = arg;
    job->wrong = verify_job_values(job);
    job->verified = 1;
}

static void *report_loop(void *unused)
{
    (void)unused;
    while (!atomic_load(&g_report_stop))
        aclrtProcessReport(10);
    return NULL;
}

enum { WAIT_SYNC, WAIT_CALLBACK, WAIT_HOSTFUNC, WAIT_EVENT, WAIT_QUERY, WAIT_KINDS };

/* Waits for stream d, after which the outputs' staging holds the results, checking them on the
 * way as `how` says. */
static int wait_and_verify(soak_job *job, aclrtStream d, aclrtEvent done, int how)
{
    aclError st = ACL_SUCCESS;
    if (how == WAIT_CALLBACK)
        st = aclrtLaunchCallback(verify_job, job, ACL_CALLBACK_BLOCK, d);
    else if (how == WAIT_HOSTFUNC)
        st = aclrtLaunchHostFunc(d, verify_job, job);
    if (st == ACL_SUCCESS && (how == WAIT_EVENT || how == WAIT_QUERY))
        st = aclrtRecordEvent(done, d);
    if (st == ACL_SUCCESS && how == WAIT_EVENT)
        st = aclrtSynchronizeEvent(done);
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    while (st == ACL_SUCCESS && how == WAIT_QUERY && status != ACL_EVENT_RECORDED_STATUS_COMPLETE)
        st = aclrtQueryEventStatus(done, &status);
    if (st == ACL_SUCCESS && how != WAIT_EVENT && how != WAIT_QUERY)
        st = aclrtSynchronizeStream(d);
    if (st != ACL_SUCCESS) {
        failed(job, "wait", st);
        return -1;
    }
    if (how == WAIT_CALLBACK || how == WAIT_HOSTFUNC) {
        if (!job->verified) /* the wait returned before the stream ran its host code */
            job->wrong++;
    } else {
        verify_job(job);
    }
    return 0;
}

/* ---- one thread ---------------------------------------------------------------------------- */

typedef struct {
    int id;
    aclrtStream streams[MAX_STREAMS];
    aclrtEvent events[EVENTS];
    soak_rng rng;
} worker;

static void release_job(soak_job *job)
{
    for (int i = 0; i < job->nws; i++)
        aclrtFree(job->ws[i]);
    for (int i = 0; i < job->narr; i++)
        aclDestroyIntArray(job->arr[i]);
    for (int i = 0; i < job->nt; i++)
        free_tensor(&job->t[i]);
}

/* Copies every tensor in on a, the operator on b (and c), the outputs back on d. */
static int queue_round(soak_job *job, worker *w, aclrtStream a, aclrtStream b, aclrtStream c, aclrtStream d)
{
    for (int i = 0; i < job->nt; i++) {
        size_t bytes = (size_t)job->t[i].storage * job->t[i].elem;
        if (aclrtMemcpyAsync(job->t[i].dev, bytes, job->t[i].host, bytes, ACL_MEMCPY_HOST_TO_DEVICE, a) != ACL_SUCCESS)
            return -1;
    }
    aclrtStream last = b;
    if (aclrtRecordEvent(w->events[0], a) != ACL_SUCCESS || aclrtStreamWaitEvent(b, w->events[0]) != ACL_SUCCESS ||
        launch_job(job, b, c, w->events[1], &last) != 0 || aclrtRecordEvent(w->events[2], last) != ACL_SUCCESS ||
        aclrtStreamWaitEvent(d, w->events[2]) != ACL_SUCCESS)
        return -1;
    for (int i = 0; i < job->nt; i++) {
        size_t bytes = (size_t)job->t[i].storage * job->t[i].elem;
        if (job->t[i].is_output &&
            aclrtMemcpyAsync(job->t[i].host, bytes, job->t[i].dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST, d) != ACL_SUCCESS)
            return -1;
    }
    return 0;
}

static void run_round(worker *w)
{
    soak_job job;
    memset(&job, 0, sizeof job);
    soak_rng *r = &w->rng;
    job.big_every = g_big_every;
    job.product = PRODUCTS[rng_range(r, 0, 2)];
    job.op = (int)rng_range(r, 0, OP_COUNT - 1);
    if (job.op == OP_MP_MASK && strcmp(job.product, "Ascend950") == 0)
        job.op = OP_MP_INDICES; /* the mask variant is retired there */
    job.dtype = DTYPES[rng_range(r, 0, 2)];
    if (job.op == OP_MP_INDICES && strcmp(job.product, "Ascend950") != 0)
        job.dtype = ACL_FLOAT; /* A2/A3's WithIndices backward kernel takes float only */
    aclnnCpuSetThreadSocVersion(job.product);
    aclrtStream *s = w->streams;
    aclrtStream a = s[rng_range(r, 0, g_streams - 1)], b = s[rng_range(r, 0, g_streams - 1)];
    aclrtStream c = s[rng_range(r, 0, g_streams - 1)], d = s[rng_range(r, 0, g_streams - 1)];
    if (setup_job(&job, r) != 0 || queue_round(&job, w, a, b, c, d) != 0) {
        failed(&job, "setup or queue", 0);
        aclrtSynchronizeDevice(); /* nothing queued may outlive the tensors */
    } else if (wait_and_verify(&job, d, w->events[3], (int)rng_range(r, 0, WAIT_KINDS - 1)) == 0) {
        atomic_fetch_add(&g_launches, job.launches);
        atomic_fetch_add(&g_by_op[job.op], 1);
        if (job.wrong)
            atomic_fetch_add(&g_wrong, 1);
    }
    atomic_fetch_add(&g_rounds, 1);
    release_job(&job);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    aclrtSetDevice(0);
    for (int i = 0; i < g_streams; i++) {
        aclrtCreateStream(&w->streams[i]);
        aclrtSubscribeReport((uint64_t)g_reporter, w->streams[i]);
    }
    for (int i = 0; i < EVENTS; i++)
        aclrtCreateEvent(&w->events[i]);
    while (!atomic_load(&g_stop))
        run_round(w);
    for (int i = 0; i < EVENTS; i++)
        aclrtDestroyEvent(w->events[i]);
    for (int i = 0; i < g_streams; i++) {
        aclrtUnSubscribeReport((uint64_t)g_reporter, w->streams[i]);
        aclrtDestroyStream(w->streams[i]);
    }
    return NULL;
}

/* ---- main: threads, the clock, the resident set -------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: soak SECONDS [THREADS [STREAMS]]\n");
        return 2;
    }
    double seconds = atof(argv[1]), warmup = seconds / 4 > 5 ? seconds / 4 : 5;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    g_big_every = getenv("SOAK_BIG_EVERY") != NULL ? atoi(getenv("SOAK_BIG_EVERY")) : 0;
    g_streams = argc > 3 ? atoi(argv[3]) : 3;
    if (threads < 1 || threads > 64 || g_streams < 1 || g_streams > MAX_STREAMS || aclInit(NULL) != ACL_SUCCESS ||
        aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    /* Deterministic max-pool gradients on A2/A3, so that phase 1 has no warning to give. */
    aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1);
    pthread_create(&g_reporter, NULL, report_loop, NULL);
    worker *workers = calloc((size_t)threads, sizeof *workers);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL);
    for (int i = 0; i < threads; i++) {
        workers[i].id = i;
        workers[i].rng.state = seed * 2654435761u + (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
        pthread_create(&tids[i], NULL, worker_main, &workers[i]);
    }
    double start = now_s(), rss_warm = 0.0, rss_max = 0.0, rss_end = 0.0;
    while (now_s() - start < seconds) {
        usleep(100000);
        double rss = rss_mib();
        rss_max = rss > rss_max ? rss : rss_max;
        if (rss_warm == 0.0 && now_s() - start >= warmup)
            rss_warm = rss;
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    rss_end = rss_mib();
    atomic_store(&g_report_stop, 1);
    pthread_join(g_reporter, NULL);
    printf("soak: %.0f s, %d threads x %d streams, seed %llu: %ld rounds, %ld launches, %ld wrong results, "
           "%ld failed calls, %llu checking errors; RSS %.1f MiB after warm-up, %.1f MiB at the end (max %.1f)\n",
           now_s() - start, threads, g_streams, (unsigned long long)seed, atomic_load(&g_rounds),
           atomic_load(&g_launches), atomic_load(&g_wrong), atomic_load(&g_failed),
           (unsigned long long)aclnnCpuCheckErrorCount(), rss_warm, rss_end, rss_max);
    for (int op = 0; op < OP_COUNT; op++)
        printf("soak:   %-32s %ld rounds\n", OP_NAMES[op], atomic_load(&g_by_op[op]));
    const char *slack_env = getenv("SOAK_RSS_SLACK_MB");
    double slack = slack_env ? atof(slack_env) : 8.0;
    int bad = atomic_load(&g_wrong) || atomic_load(&g_failed) || aclnnCpuCheckErrorCount() ||
              (rss_warm > 0.0 && rss_end - rss_warm > slack);
    free(workers);
    free(tids);
    aclrtResetDevice(0);
    aclFinalize();
    return bad ? 1 : 0;
}
