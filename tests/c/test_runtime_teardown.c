/*
 * Releasing runtime objects while other threads wait on them, or from a task of their own:
 *  1. aclrtDestroyStreamForce (and aclrtDestroyContext) while another thread waits in
 *     aclrtSynchronizeStream: the waiter returns (107023 when its tasks were dropped), and
 *     nothing reads the freed stream (valgrind);
 *  2. a host function, or a blocking callback run by aclrtProcessReport, that would release its
 *     own stream (aclrtResetDevice, aclrtResetDeviceForce, aclFinalize, aclrtDestroyContext,
 *     aclrtDestroyStream) or synchronize it gets 107000 and the stream goes on;
 *  3. aclFinalize (or an unsubscribe) while a subscribed thread waits in aclrtProcessReport,
 *     or aclFinalize from a callback that aclrtProcessReport runs: the waiter returns 107012 at
 *     once; aclFinalize while a thread waits in aclrtSynchronizeEvent;
 *  4. aclrtStreamWaitEvent waits for the record current at the call, even when a later record
 *     of the event on another stream completes first.
 * Run under valgrind by tests/test_c_programs.py: a read of freed memory fails it.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

/* ---- a gate a host function blocks on until the test opens it ----------------------------- */

static atomic_int g_gate;

static void wait_for_gate(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_gate))
        tu_sleep_ms(1);
}

static void set_flag(void *arg)
{
    atomic_store((atomic_int *)arg, 1);
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000L + (now.tv_nsec - start->tv_nsec) / 1000000L;
}

/* ---- 1. a synchronizing thread while the stream is destroyed -------------------------------- */

typedef struct {
    aclrtStream stream;
    int ret;
} sync_job;

static void *synchronize_thread(void *arg)
{
    sync_job *job = arg;
    job->ret = aclrtSynchronizeStream(job->stream);
    return NULL;
}

static void *destroy_force_thread(void *arg)
{
    sync_job *job = arg;
    job->ret = aclrtDestroyStreamForce(job->stream);
    return NULL;
}

static void test_destroy_force_while_synchronizing(void)
{
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    atomic_store(&g_gate, 0);
    atomic_int ran = 0;
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, &ran)); /* dropped by the force-destroy */
    sync_job waiter = {stream, -1}, destroyer = {stream, -1};
    pthread_t w, d;
    pthread_create(&w, NULL, synchronize_thread, &waiter);
    tu_sleep_ms(50); /* the waiter is asleep in aclrtSynchronizeStream */
    pthread_create(&d, NULL, destroy_force_thread, &destroyer);
    tu_sleep_ms(50); /* the destroyer dropped the queued task and joins the worker */
    atomic_store(&g_gate, 1);
    pthread_join(d, NULL);
    pthread_join(w, NULL);
    CHECK(destroyer.ret == ACL_SUCCESS, "aclrtDestroyStreamForce returned %d", destroyer.ret);
    CHECK(waiter.ret == ACL_ERROR_RT_STREAM_ABORT,
          "a synchronize whose tasks were dropped should return 107023, got %d", waiter.ret);
    CHECK(atomic_load(&ran) == 0, "a task queued behind the running one ran after the force-destroy");
}

/* A stream of a context released by aclrtDestroyContext while another thread waits on it. */
static void test_destroy_context_while_synchronizing(void)
{
    aclrtContext previous, context;
    EXPECT_OK(aclrtGetCurrentContext(&previous));
    EXPECT_OK(aclrtCreateContext(&context, 0));
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    atomic_store(&g_gate, 0);
    atomic_int ran = 0;
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, &ran));
    sync_job waiter = {stream, -1};
    pthread_t w;
    pthread_create(&w, NULL, synchronize_thread, &waiter);
    tu_sleep_ms(50);
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtDestroyContext(context)); /* waits for the queued work, then frees the stream */
    pthread_join(w, NULL);
    CHECK(waiter.ret == ACL_SUCCESS, "the synchronize returned %d", waiter.ret);
    CHECK(atomic_load(&ran) == 1, "the destroy did not finish the queued work");
    EXPECT_OK(aclrtSetCurrentContext(previous));
}

/* ---- 2. a task that would release its own stream ------------------------------------------- */

typedef struct {
    aclrtContext context;
    aclrtStream stream;
    int reset, reset_force, finalize, destroy_context, destroy_stream, sync;
    char message[512];
} self_release_job;

static void keep_message(self_release_job *job)
{
    const char *msg = aclGetRecentErrMsg();
    snprintf(job->message, sizeof job->message, "%s", msg ? msg : "");
}

/* On a stream of device 0's default context (which holds the device's last reference). */
static void release_own_stream(void *arg)
{
    self_release_job *job = arg;
    job->reset = aclrtResetDevice(0);
    keep_message(job);
    job->reset_force = aclrtResetDeviceForce(0);
    job->finalize = aclFinalize();
    job->destroy_stream = aclrtDestroyStream(job->stream);
    job->sync = aclrtSynchronizeStream(job->stream);
}

/* On a stream of an explicit context. */
static void release_own_context(void *arg)
{
    self_release_job *job = arg;
    job->destroy_context = aclrtDestroyContext(job->context);
    keep_message(job);
    job->finalize = aclFinalize();
    job->destroy_stream = aclrtDestroyStream(job->stream);
    job->sync = aclrtSynchronizeStream(job->stream);
}

static void check_refused(const char *where, const self_release_job *job)
{
    const int refused = ACL_ERROR_RT_PARAM_INVALID;
    const char *api = job->context ? "aclrtDestroyContext" : "aclrtResetDevice";
    CHECK(strstr(job->message, api) && strstr(job->message, "runs on"), "%s: message \"%s\"", where,
          job->message);
    CHECK(job->context || job->reset == refused, "%s: aclrtResetDevice returned %d", where, job->reset);
    CHECK(job->context || job->reset_force == refused, "%s: aclrtResetDeviceForce returned %d", where,
          job->reset_force);
    CHECK(!job->context || job->destroy_context == refused, "%s: aclrtDestroyContext returned %d", where,
          job->destroy_context);
    CHECK(job->finalize == refused, "%s: aclFinalize returned %d", where, job->finalize);
    CHECK(job->destroy_stream == ACL_ERROR_RT_PARAM_INVALID, "%s: aclrtDestroyStream returned %d", where,
          job->destroy_stream);
    CHECK(job->sync == ACL_ERROR_RT_PARAM_INVALID, "%s: aclrtSynchronizeStream returned %d", where, job->sync);
}

/* The stream still works after the refused calls: a later task runs and a synchronize returns. */
static void check_stream_alive(const char *where, aclrtStream stream)
{
    atomic_int ran = 0;
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, &ran));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 1, "%s: the stream stopped running tasks", where);
}

static void test_host_func_releasing_own_stream(void)
{
    /* a created stream of device 0's default context (the last reference of the device) */
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    self_release_job job = {.stream = stream};
    EXPECT_OK(aclrtLaunchHostFunc(stream, release_own_stream, &job));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    check_refused("host function", &job);
    check_stream_alive("host function", stream);
    EXPECT_OK(aclrtDestroyStream(stream));

    /* a stream of an explicit context of device 0 */
    aclrtContext context;
    EXPECT_OK(aclrtCreateContext(&context, 0));
    EXPECT_OK(aclrtCreateStream(&stream));
    self_release_job in_context = {.context = context, .stream = stream};
    EXPECT_OK(aclrtLaunchHostFunc(stream, release_own_context, &in_context));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    check_refused("host function in a context", &in_context);
    check_stream_alive("host function in a context", stream);
    EXPECT_OK(aclrtDestroyStream(stream));
    EXPECT_OK(aclrtDestroyContext(context));
    EXPECT_OK(aclrtSetDevice(0)); /* current context again: device 0's default one */
    EXPECT_OK(aclrtResetDevice(0)); /* (one reference too many now: give it back) */
}

/* A reset that only drops one of several references releases nothing: allowed from a task. */
static void reset_one_reference(void *arg)
{
    *(int *)arg = aclrtResetDevice(0);
}

static void test_host_func_dropping_a_reference(void)
{
    EXPECT_OK(aclrtSetDevice(0)); /* two references */
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    int ret = -1;
    EXPECT_OK(aclrtLaunchHostFunc(stream, reset_one_reference, &ret));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(ret == ACL_SUCCESS, "dropping one of two references from a task returned %d", ret);
    check_stream_alive("after dropping a reference", stream);
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* A blocking callback holds its stream, so it may not release or synchronize it either. */
static atomic_int g_reporter_stop;

static void *report_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_reporter_stop))
        (void)aclrtProcessReport(20);
    return NULL;
}

static void test_blocking_callback_releasing_own_stream(void)
{
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    atomic_store(&g_reporter_stop, 0);
    pthread_t reporter;
    pthread_create(&reporter, NULL, report_loop, NULL);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter, stream));
    self_release_job job = {.stream = stream};
    EXPECT_OK(aclrtLaunchCallback(release_own_stream, &job, ACL_CALLBACK_BLOCK, stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    check_refused("blocking callback", &job);
    check_stream_alive("blocking callback", stream);
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)reporter, stream));
    atomic_store(&g_reporter_stop, 1);
    pthread_join(reporter, NULL);
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* ---- 3. aclFinalize while a thread waits in aclrtProcessReport ----------------------------- */

typedef struct {
    int ret;
    long waited_ms;
} report_job;

static atomic_int g_subscribed;

static void wait_until_subscribed(void)
{
    while (!atomic_load(&g_subscribed))
        tu_sleep_ms(1);
}

static void *report_once(void *arg)
{
    report_job *job = arg;
    wait_until_subscribed();
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    job->ret = aclrtProcessReport(3000);
    job->waited_ms = elapsed_ms(&start);
    return NULL;
}

static void test_finalize_while_processing_reports(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    report_job job = {-1, 0};
    pthread_t reporter;
    atomic_store(&g_subscribed, 0);
    pthread_create(&reporter, NULL, report_once, &job);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter, stream));
    atomic_store(&g_subscribed, 1);
    tu_sleep_ms(50); /* the reporter waits for a callback */
    EXPECT_OK(aclFinalize());
    pthread_join(reporter, NULL);
    CHECK(job.ret == ACL_ERROR_RT_THREAD_SUBSCRIBE,
          "aclrtProcessReport across aclFinalize returned %d, expected 107012", job.ret);
    CHECK(job.waited_ms < 2000, "aclrtProcessReport waited %ld ms after aclFinalize", job.waited_ms);
}

/* An unsubscribe ends a wait without a timeout too (it would wait forever). */
static void *report_forever(void *arg)
{
    report_job *job = arg;
    wait_until_subscribed();
    job->ret = aclrtProcessReport(-1);
    return NULL;
}

static void test_unsubscribe_while_processing_reports(void)
{
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    report_job job = {-1, 0};
    pthread_t reporter;
    atomic_store(&g_subscribed, 0);
    pthread_create(&reporter, NULL, report_forever, &job);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter, stream));
    atomic_store(&g_subscribed, 1);
    tu_sleep_ms(50);
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)reporter, stream));
    pthread_join(reporter, NULL);
    CHECK(job.ret == ACL_ERROR_RT_THREAD_SUBSCRIBE, "aclrtProcessReport(-1) across an unsubscribe returned %d",
          job.ret);
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* aclrtSynchronizeEvent across aclFinalize: the waiter's reference keeps the event, and the
 * finalize finishes the record it waits for. */
typedef struct {
    aclrtEvent event;
    int ret;
} event_job;

static void *synchronize_event_thread(void *arg)
{
    event_job *job = arg;
    job->ret = aclrtSynchronizeEvent(job->event);
    return NULL;
}

static void test_finalize_while_synchronizing_an_event(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    event_job job = {NULL, -1};
    EXPECT_OK(aclrtCreateEvent(&job.event));
    atomic_store(&g_gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtRecordEvent(job.event, stream));
    pthread_t waiter;
    pthread_create(&waiter, NULL, synchronize_event_thread, &job);
    tu_sleep_ms(50);
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclFinalize()); /* drains the stream (the record completes), frees the event */
    pthread_join(waiter, NULL);
    CHECK(job.ret == ACL_SUCCESS, "aclrtSynchronizeEvent across aclFinalize returned %d", job.ret);
}

static void finalize_from_callback(void *arg)
{
    *(int *)arg = aclFinalize();
}

static void *report_one_callback(void *arg)
{
    wait_until_subscribed();
    *(int *)arg = aclrtProcessReport(3000);
    return NULL;
}

static void test_finalize_from_reported_callback(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    aclrtStream stream;
    EXPECT_OK(aclrtCreateStream(&stream));
    int report_ret = -1, finalize_ret = -1;
    pthread_t reporter;
    atomic_store(&g_subscribed, 0);
    pthread_create(&reporter, NULL, report_one_callback, &report_ret);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter, stream));
    atomic_store(&g_subscribed, 1);
    EXPECT_OK(aclrtLaunchCallback(finalize_from_callback, &finalize_ret, ACL_CALLBACK_NO_BLOCK, stream));
    pthread_join(reporter, NULL);
    CHECK(finalize_ret == ACL_SUCCESS, "aclFinalize from a non-blocking callback returned %d", finalize_ret);
    CHECK(report_ret == ACL_SUCCESS, "the aclrtProcessReport that ran it returned %d", report_ret);
}

/* ---- a registration keyed by a stream goes with the stream -------------------------------- */

static void *alloc_cb(aclrtAllocator a, size_t n) { (void)a; (void)n; return NULL; }
static void free_cb(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a; (void)b; }
static void *addr_cb(aclrtAllocatorBlock b) { return b; }

/* A stream created at the address of a destroyed one (malloc hands the block back) must not
 * inherit the destroyed stream's aclrtAllocatorRegister registration. */
static void test_allocator_registration_goes_with_its_stream(void)
{
    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    EXPECT_OK(aclrtAllocatorSetAllocFuncToDesc(desc, alloc_cb));
    EXPECT_OK(aclrtAllocatorSetFreeFuncToDesc(desc, free_cb));
    EXPECT_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, addr_cb));
    aclrtStream old_stream, streams[4];
    EXPECT_OK(aclrtCreateStream(&old_stream));
    EXPECT_OK(aclrtAllocatorRegister(old_stream, desc));
    EXPECT_OK(aclrtDestroyStream(old_stream));
    int reused = -1;
    for (int i = 0; i < 4; i++) {
        EXPECT_OK(aclrtCreateStream(&streams[i]));
        if (streams[i] == old_stream && reused < 0)
            reused = i;
    }
    if (reused >= 0) /* (not under valgrind, which does not reuse blocks soon) */
        EXPECT(aclrtAllocatorGetByStream(streams[reused], NULL, NULL, NULL, NULL, NULL, NULL),
               ACL_ERROR_INVALID_PARAM, "no allocator");
    for (int i = 0; i < 4; i++)
        EXPECT_OK(aclrtDestroyStream(streams[i]));
    EXPECT_OK(aclrtAllocatorDestroyDesc(desc));
}

/* ---- 4. a wait is for the record current at the call --------------------------------------- */

static void test_wait_for_the_record_of_the_call(void)
{
    aclrtStream a, b, c;
    aclrtEvent ev;
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    EXPECT_OK(aclrtCreateStream(&c));
    EXPECT_OK(aclrtCreateEvent(&ev));
    atomic_store(&g_gate, 0);
    atomic_int passed = 0;
    EXPECT_OK(aclrtLaunchHostFunc(a, wait_for_gate, NULL));
    EXPECT_OK(aclrtRecordEvent(ev, a)); /* record 1: behind the closed gate */
    EXPECT_OK(aclrtStreamWaitEvent(b, ev)); /* waits for record 1 */
    EXPECT_OK(aclrtLaunchHostFunc(b, set_flag, &passed));
    EXPECT_OK(aclrtRecordEvent(ev, c)); /* record 2, on an idle stream: completes at once */
    EXPECT_OK(aclrtSynchronizeStream(c));
    tu_sleep_ms(50);
    CHECK(atomic_load(&passed) == 0, "stream B passed its wait before the record it waits for ran");
    aclrtEventRecordedStatus status;
    EXPECT_OK(aclrtQueryEventStatus(ev, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "the newest record (2) is complete: status %d",
          (int)status);
    atomic_store(&g_gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(b));
    CHECK(atomic_load(&passed) == 1, "stream B did not go on after record 1 completed");
    EXPECT_OK(aclrtSynchronizeEvent(ev));
    EXPECT_OK(aclrtDestroyEvent(ev));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
    EXPECT_OK(aclrtDestroyStream(c));
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        fprintf(stderr, "runtime setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    test_wait_for_the_record_of_the_call();
    test_destroy_force_while_synchronizing();
    test_destroy_context_while_synchronizing();
    test_host_func_releasing_own_stream();
    test_host_func_dropping_a_reference();
    test_blocking_callback_releasing_own_stream();
    test_unsubscribe_while_processing_reports();
    test_allocator_registration_goes_with_its_stream();
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    test_finalize_while_processing_reports();
    test_finalize_from_reported_callback();
    test_finalize_while_synchronizing_an_event();
    return tu_finish("test_runtime_teardown");
}
