/*
 * test_runtime_stream.c - streams (docs/runtime.md): tasks run in order on
 * the stream's worker; many async copies/fills then one synchronize give the same bytes as
 * doing them in order on the host; SynchronizeStreamWithTimeout expires with 507046; unknown
 * handles are rejected; destroy waits, destroy-force drops queued work; host functions run
 * on the worker and must not synchronize their own stream; launches whose worker wake-up was
 * deferred (stream.c) still finish for every kind of waiter, and a late synchronizer turns the
 * deferral off.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#include "test_util.h"

static void sleep_task(void *arg)
{
    tu_sleep_ms((int)(intptr_t)arg);
}

static void set_flag(void *arg)
{
    *(volatile int *)arg = 1;
}

/* A task that holds its stream until the test opens the gate (no timing assumptions). */
static atomic_int gate;

static void wait_for_gate(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate))
        tu_sleep_ms(1);
}

static void open_gate(void *arg)
{
    (void)arg;
    atomic_store(&gate, 1);
}

/* ---- many async operations on one stream, checked against the same steps on the host ---- */

#define BUF 4096

static uint32_t rng_state = 12345u;
static uint32_t next_random(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static void test_async_ordering(void)
{
    aclrtStream stream = NULL;
    unsigned char *dev = NULL;
    unsigned char *expected = malloc(BUF), *result = malloc(BUF);
    enum { NUM_SOURCES = 8 };
    unsigned char *sources[NUM_SOURCES];
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtMalloc((void **)&dev, BUF, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int s = 0; s < NUM_SOURCES; s++) {
        EXPECT_OK(aclrtMallocHost((void **)&sources[s], BUF));
        for (int i = 0; i < BUF; i++)
            sources[s][i] = (unsigned char)next_random();
    }
    memset(expected, 0, BUF);
    EXPECT_OK(aclrtMemset(dev, BUF, 0, BUF));

    /* A gated first task makes sure the rest really queue up behind it. */
    atomic_store(&gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    for (int op = 0; op < 600; op++) {
        size_t length = 1 + next_random() % 512;
        /* addresses 64-byte aligned and host sources pinned, as aclrtMemcpyAsync requires */
        size_t dst = next_random() % ((BUF - length) / 64 + 1) * 64;
        switch (next_random() % 3) {
        case 0: { /* fill */
            int value = (int)(next_random() & 0xFF);
            EXPECT_OK(aclrtMemsetAsync(dev + dst, BUF - dst, value, length, stream));
            memset(expected + dst, value, length);
            break;
        }
        case 1: { /* host -> device */
            const unsigned char *src = sources[next_random() % NUM_SOURCES];
            size_t from = next_random() % ((BUF - length) / 64 + 1) * 64;
            EXPECT_OK(aclrtMemcpyAsync(dev + dst, BUF - dst, src + from, length,
                                       ACL_MEMCPY_HOST_TO_DEVICE, stream));
            memcpy(expected + dst, src + from, length);
            break;
        }
        default: { /* device -> device inside the buffer (reads earlier results) */
            size_t from = next_random() % ((BUF - length) / 64 + 1) * 64;
            EXPECT_OK(aclrtMemcpyAsync(dev + dst, BUF - dst, dev + from, length,
                                       ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
            memmove(expected + dst, expected + from, length);
            break;
        }
        }
    }
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_NOT_READY, "stream busy behind the gated task");
    atomic_store(&gate, 1);
    EXPECT_OK(aclrtSynchronizeStream(stream));
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "stream idle after synchronize");
    EXPECT_OK(aclrtMemcpy(result, BUF, dev, BUF, ACL_MEMCPY_DEVICE_TO_HOST));
    size_t first_diff = BUF;
    for (size_t i = 0; i < BUF && first_diff == BUF; i++)
        if (result[i] != expected[i])
            first_diff = i;
    CHECK(first_diff == BUF, "async result differs from the in-order reference at byte %zu",
          first_diff);
    EXPECT(aclrtStreamQuery(stream, NULL), ACL_ERROR_INVALID_PARAM, "status");
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtDestroyStream(stream));
    for (int s = 0; s < NUM_SOURCES; s++)
        aclrtFreeHost(sources[s]);
    free(expected);
    free(result);
}

/* ---- timeouts ------------------------------------------------------------------------------ */

static void test_synchronize_timeout(void)
{
    aclrtStream stream = NULL;
    volatile int done = 0;
    EXPECT_OK(aclrtCreateStreamWithConfig(&stream, 0, ACL_STREAM_FAST_LAUNCH));
    atomic_store(&gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, (void *)&done));
    EXPECT(aclrtSynchronizeStreamWithTimeout(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
           "aclrtSynchronizeStreamWithTimeout");
    CHECK(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
          "timeout recorded as the last error");
    EXPECT(aclrtSynchronizeStreamWithTimeout(stream, 0), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
           "timed out");
    EXPECT(aclrtSynchronizeStreamWithTimeout(stream, -2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    CHECK(done == 0, "the second task waits for the first");
    atomic_store(&gate, 1);
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(stream, -1));
    CHECK(done == 1, "synchronize waited for both tasks");
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(stream, 1000));
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* ---- handles ------------------------------------------------------------------------------- */

static void test_bad_handles(void)
{
    int not_a_stream = 0;
    aclrtStream stream = NULL;
    EXPECT(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclrtSynchronizeStream((aclrtStream)&not_a_stream), ACL_ERROR_INVALID_PARAM,
           "not a live stream");
    EXPECT(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclrtDestroyStream((aclrtStream)&not_a_stream), ACL_ERROR_INVALID_PARAM,
           "aclrtDestroyStream");
    EXPECT(aclrtLaunchHostFunc((aclrtStream)&not_a_stream, set_flag, &not_a_stream),
           ACL_ERROR_INVALID_PARAM, "aclrtLaunchHostFunc");
    EXPECT(aclrtLaunchHostFunc(NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM, "fn");
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtDestroyStream(stream));
    EXPECT(aclrtDestroyStream(stream), ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream");
    EXPECT(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStream");
    EXPECT(aclrtStreamQuery(stream, &(aclrtStreamStatus){0}), ACL_ERROR_INVALID_PARAM,
           "aclrtStreamQuery");
}

/* ---- destroy ------------------------------------------------------------------------------- */

static void test_destroy(void)
{
    aclrtStream stream = NULL;
    volatile int finished = 0, dropped = 0;
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtLaunchHostFunc(stream, sleep_task, (void *)(intptr_t)50));
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, (void *)&finished));
    EXPECT_OK(aclrtDestroyStream(stream)); /* waits for pending work */
    CHECK(finished == 1, "aclrtDestroyStream waits for queued tasks");

    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtLaunchHostFunc(stream, sleep_task, (void *)(intptr_t)250));
    EXPECT_OK(aclrtLaunchHostFunc(stream, set_flag, (void *)&dropped));
    EXPECT_OK(aclrtDestroyStreamForce(stream));
    CHECK(dropped == 0, "aclrtDestroyStreamForce drops tasks that had not started");
    EXPECT(aclrtDestroyStreamForce(stream), ACL_ERROR_INVALID_PARAM, "aclrtDestroyStreamForce");
}

/* ---- host functions ------------------------------------------------------------------------ */

typedef struct self_sync {
    aclrtStream stream;
    aclError sync_result;
    int ran_on_worker;
    pthread_t caller;
} self_sync;

static void sync_own_stream(void *arg)
{
    self_sync *probe = arg;
    probe->ran_on_worker = !pthread_equal(pthread_self(), probe->caller);
    probe->sync_result = aclrtSynchronizeStream(probe->stream);
    (void)aclGetRecentErrMsg();
}

static void test_host_func(void)
{
    self_sync probe = {NULL, 0, 0, pthread_self()};
    EXPECT_OK(aclrtCreateStream(&probe.stream));
    EXPECT_OK(aclrtLaunchHostFunc(probe.stream, sync_own_stream, &probe));
    EXPECT_OK(aclrtSynchronizeStream(probe.stream));
    CHECK(probe.ran_on_worker, "a host function runs on the stream's worker thread");
    CHECK(probe.sync_result == ACL_ERROR_RT_PARAM_INVALID,
          "synchronizing its own stream from a host function is refused (got %d), not a "
          "deadlock", probe.sync_result);
    EXPECT_OK(aclrtDestroyStream(probe.stream));

    /* Default stream (NULL). */
    volatile int flag = 0;
    EXPECT_OK(aclrtLaunchHostFunc(NULL, set_flag, (void *)&flag));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    CHECK(flag == 1, "host function on the default stream");
}

/* ---- deferred worker wake-ups ----------------------------------------------------------- */

enum { FILL_BYTES = 256 };

/* Puts the stream in deferred wake-up (stream.c): a fill synchronized right after its launch. */
static void defer_wakeups(aclrtStream stream, unsigned char *dev)
{
    for (int i = 0; i < 2; i++) {
        EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 0, FILL_BYTES, stream));
        EXPECT_OK(aclrtSynchronizeStream(stream));
    }
}

static void expect_filled(const unsigned char *dev, int value, const char *how)
{
    unsigned char host[FILL_BYTES];
    EXPECT_OK(aclrtMemcpy(host, sizeof host, dev, FILL_BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(host[0] == value && host[FILL_BYTES - 1] == value, "fill %d finished (%s)", value, how);
}

/* Every waiter that does not run the task itself must wake the worker it was not woken for. */
static void test_deferred_wakeups(void)
{
    aclrtStream stream = NULL;
    unsigned char *dev = NULL;
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtCreateEvent(&event));
    EXPECT_OK(aclrtMalloc((void **)&dev, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));

    /* polling aclrtStreamQuery */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 1, FILL_BYTES, stream));
    aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
    for (int waited = 0; waited < 10000 && status != ACL_STREAM_STATUS_COMPLETE; waited++) {
        EXPECT_OK(aclrtStreamQuery(stream, &status));
        if (status != ACL_STREAM_STATUS_COMPLETE)
            tu_sleep_ms(1);
    }
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "a polled stream completes");
    expect_filled(dev, 1, "aclrtStreamQuery");

    /* a timed synchronize (never runs a task itself) */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 2, FILL_BYTES, stream));
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(stream, 10000));
    expect_filled(dev, 2, "aclrtSynchronizeStreamWithTimeout");

    /* an event recorded after the launch */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 3, FILL_BYTES, stream));
    EXPECT_OK(aclrtRecordEvent(event, stream));
    EXPECT_OK(aclrtSynchronizeEventWithTimeout(event, 10000));
    expect_filled(dev, 3, "aclrtSynchronizeEvent");

    /* a host function queued after the launch, waited for without touching the stream */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 4, FILL_BYTES, stream));
    atomic_store(&gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(stream, open_gate, NULL));
    for (int waited = 0; waited < 10000 && !atomic_load(&gate); waited++)
        tu_sleep_ms(1);
    CHECK(atomic_load(&gate), "a host function after a deferred launch runs");
    /* The flag the host function set orders the fill before this read, but no runtime call
     * says so; the query that finds the stream complete does (ACLNN_CHECK=racecheck). */
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "the stream is idle after its host function");
    expect_filled(dev, 4, "host function");

    /* nobody waiting at all: one launch, then more than the deferral holds back */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 7, FILL_BYTES, stream));
    tu_sleep_ms(300); /* (aclrtStreamQuery wakes the worker itself, so only look afterwards) */
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "a deferred launch runs without a waiter");
    expect_filled(dev, 7, "no waiter");
    defer_wakeups(stream, dev);
    for (int value = 10; value < 30; value++)
        EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, value, FILL_BYTES, stream));
    tu_sleep_ms(300);
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "a long queue runs without a waiter");
    expect_filled(dev, 29, "a long queue");

    /* a synchronizer that comes late turns deferral off (the next launch wakes the worker; that
     * it then runs on its own is all a test can see, as a deferred one would too, a nap later) */
    defer_wakeups(stream, dev);
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 5, FILL_BYTES, stream));
    tu_sleep_ms(20);
    EXPECT_OK(aclrtSynchronizeStream(stream));
    EXPECT_OK(aclrtMemsetAsync(dev, FILL_BYTES, 6, FILL_BYTES, stream));
    tu_sleep_ms(200);
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_COMPLETE, "after a late synchronize, a launch runs on its own");
    expect_filled(dev, 6, "late synchronizer");

    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* Threads sharing one stream in a random mix of launches and every kind of wait, with pauses
 * on both sides of the deferral window: each call succeeds, nothing hangs, and every thread's
 * region ends with its last fill. */
enum { STRESS_THREADS = 3, STRESS_STEPS = 400 };

typedef struct stress_thread {
    aclrtContext context; /* the test's, made current on the thread */
    aclrtStream stream;
    unsigned char *region;
    unsigned seed;
    int last_fill;
    int failures;
} stress_thread;

static void no_op(void *arg)
{
    (void)arg;
}

static void *stress_thread_main(void *arg)
{
    stress_thread *t = arg;
    aclrtEvent event = NULL;
    aclrtStreamStatus status;
    t->failures += aclrtSetCurrentContext(t->context) != ACL_SUCCESS;
    t->failures += aclrtCreateEvent(&event) != ACL_SUCCESS;
    for (int step = 0; step < STRESS_STEPS; step++) {
        t->seed = t->seed * 1664525u + 1013904223u;
        aclError ret = ACL_SUCCESS;
        switch ((t->seed >> 16) % 8) {
        case 0:
        case 1:
            t->last_fill = (t->last_fill + 1) & 0xFF;
            ret = aclrtMemsetAsync(t->region, FILL_BYTES, t->last_fill, FILL_BYTES, t->stream);
            break;
        case 2: ret = aclrtSynchronizeStream(t->stream); break;
        case 3: ret = aclrtSynchronizeStreamWithTimeout(t->stream, 30000); break;
        case 4: ret = aclrtStreamQuery(t->stream, &status); break;
        case 5:
            ret = aclrtRecordEvent(event, t->stream);
            if (ret == ACL_SUCCESS)
                ret = aclrtSynchronizeEventWithTimeout(event, 30000);
            break;
        case 6: ret = aclrtLaunchHostFunc(t->stream, no_op, NULL); break;
        default: tu_sleep_us((t->seed >> 8) % 2 ? 20 : 300); break; /* inside / past the window */
        }
        t->failures += ret != ACL_SUCCESS;
    }
    t->failures += aclrtSynchronizeStream(t->stream) != ACL_SUCCESS;
    t->failures += aclrtDestroyEvent(event) != ACL_SUCCESS;
    return NULL;
}

static void test_deferral_stress(void)
{
    aclrtStream stream = NULL;
    unsigned char *dev = NULL;
    aclrtContext context = NULL;
    stress_thread threads[STRESS_THREADS];
    pthread_t ids[STRESS_THREADS];
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtGetCurrentContext(&context));
    EXPECT_OK(aclrtMalloc((void **)&dev, STRESS_THREADS * FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < STRESS_THREADS; i++) {
        threads[i] = (stress_thread){context, stream, dev + i * FILL_BYTES, 7u + 31u * (unsigned)i, 0, 0};
        EXPECT_OK(aclrtMemset(threads[i].region, FILL_BYTES, 0, FILL_BYTES));
    }
    for (int i = 0; i < STRESS_THREADS; i++)
        CHECK(pthread_create(&ids[i], NULL, stress_thread_main, &threads[i]) == 0, "thread %d", i);
    for (int i = 0; i < STRESS_THREADS; i++) {
        pthread_join(ids[i], NULL);
        CHECK(threads[i].failures == 0, "stress thread %d: %d calls failed", i, threads[i].failures);
        expect_filled(threads[i].region, threads[i].last_fill, "stress");
    }
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtDestroyStream(stream));
}

/* ---- several streams at once, and device-wide synchronize -------------------------------- */

static void test_many_streams(void)
{
    enum { STREAMS = 6, BYTES = 1 << 16 };
    aclrtStream streams[STREAMS];
    unsigned char *buffers[STREAMS];
    for (int s = 0; s < STREAMS; s++) {
        EXPECT_OK(aclrtCreateStream(&streams[s]));
        EXPECT_OK(aclrtMalloc((void **)&buffers[s], BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_OK(aclrtLaunchHostFunc(streams[s], sleep_task, (void *)(intptr_t)20));
        for (int k = 0; k < 16; k++)
            EXPECT_OK(aclrtMemsetAsync(buffers[s], BYTES, s * 16 + k, BYTES, streams[s]));
    }
    EXPECT_OK(aclrtSynchronizeDevice());
    for (int s = 0; s < STREAMS; s++) {
        CHECK(tu_dev_byte(buffers[s], 0) == (unsigned)(s * 16 + 15) &&
                  tu_dev_byte(buffers[s], BYTES - 1) == (unsigned)(s * 16 + 15),
              "stream %d final fill", s);
        EXPECT_OK(aclrtFree(buffers[s]));
        EXPECT_OK(aclrtDestroyStream(streams[s]));
    }
}

/* aclrtStreamGetId / GetPriority / GetFlags read back what the stream was made with. */
static void test_creation_values(void)
{
    aclrtStream a = NULL, b = NULL;
    EXPECT_OK(aclrtCreateStreamWithConfig(&a, 3, ACL_STREAM_FAST_LAUNCH));
    EXPECT_OK(aclrtCreateStream(&b));
    int32_t id_a = -1, id_b = -1, id_default = -1;
    uint32_t priority = 99, flags = 99;
    EXPECT_OK(aclrtStreamGetId(a, &id_a));
    EXPECT_OK(aclrtStreamGetId(b, &id_b));
    EXPECT_OK(aclrtStreamGetId(NULL, &id_default)); /* the default stream */
    CHECK(id_a >= 0 && id_b >= 0 && id_default >= 0 && id_a != id_b && id_a != id_default,
          "stream ids %d %d %d", id_a, id_b, id_default);
    EXPECT_OK(aclrtStreamGetPriority(a, &priority));
    EXPECT_OK(aclrtStreamGetFlags(a, &flags));
    CHECK(priority == 3 && flags == ACL_STREAM_FAST_LAUNCH, "priority %u flags %u", priority, flags);
    EXPECT_OK(aclrtStreamGetPriority(b, &priority));
    EXPECT_OK(aclrtStreamGetFlags(b, &flags));
    CHECK(priority == 0 && flags == 0, "a plain stream: priority %u flags %u", priority, flags);
    EXPECT(aclrtStreamGetId(a, NULL), ACL_ERROR_INVALID_PARAM, "streamId");
    EXPECT(aclrtStreamGetPriority(a, NULL), ACL_ERROR_INVALID_PARAM, "priority");
    EXPECT(aclrtStreamGetFlags(a, NULL), ACL_ERROR_INVALID_PARAM, "flags");
    EXPECT_OK(aclrtDestroyStream(b));
    EXPECT(aclrtStreamGetId(b, &id_b), ACL_ERROR_INVALID_PARAM, "aclrtStreamGetId");
    EXPECT_OK(aclrtDestroyStream(a));
}

int main(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    test_async_ordering();
    test_synchronize_timeout();
    test_bad_handles();
    test_destroy();
    test_host_func();
    test_many_streams();
    test_deferred_wakeups();
    test_deferral_stress();
    test_creation_values();
    /* A stream left alive is released by aclrtResetDevice after its work. */
    aclrtStream leftover = NULL;
    volatile int ran = 0;
    EXPECT_OK(aclrtCreateStream(&leftover));
    EXPECT_OK(aclrtLaunchHostFunc(leftover, sleep_task, (void *)(intptr_t)20));
    EXPECT_OK(aclrtLaunchHostFunc(leftover, set_flag, (void *)&ran));
    EXPECT_OK(aclrtResetDevice(0));
    CHECK(ran == 1, "aclrtResetDevice finished the leftover stream's work");
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_stream");
}
