/*
 * test_runtime_event.c - events (docs/runtime.md): a record captures the work queued before
 * it; a stream that waits on an event does not run later tasks before that work is done (two
 * streams, a slow host function on the first); status queries (recorded status COMPLETE=1,
 * legacy status COMPLETE=0), synchronize with timeout (507047), elapsed time, reset, destroy
 * with pending work, unknown handles; aclrtStreamWaitEventWithTimeout (its own limit ends a wait
 * for a record that never comes with 507047 on A2, is ignored on Ascend910; a negative timeout
 * is 107000).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#include "test_util.h"

/* CANN marks some of the functions checked here deprecated (aclrtGetVersion, aclrtQueryEvent,
 * aclsysGetCANNVersion): they still exist and are still tested. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void sleep_task(void *arg)
{
    tu_sleep_ms((int)(intptr_t)arg);
}

/* Writes the value 42 into an int32 of pinned host memory once the test opens the gate, so the
 * event recorded after it (and after the copy of that int32 to the device) is pending for as
 * long as the test needs (no timing assumptions).  A host function runs on the host: it may not
 * touch device memory. */
static atomic_int gate;

static void gated_write_42(void *arg)
{
    while (!atomic_load(&gate))
        tu_sleep_ms(1);
    tu_sleep_ms(20); /* and a little later still: stream b must really wait */
    int32_t value = 42;
    memcpy(arg, &value, sizeof value);
}

static void wait_for_gate(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate))
        tu_sleep_ms(1);
}

static void test_cross_stream_wait(void)
{
    aclrtStream a = NULL, b = NULL;
    aclrtEvent ready = NULL;
    int32_t *x = NULL, *y = NULL, *pinned = NULL, result = -1;
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 64));
    EXPECT_OK(aclrtCreateStream(&a));
    EXPECT_OK(aclrtCreateStream(&b));
    EXPECT_OK(aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC));
    EXPECT_OK(aclrtMalloc((void **)&x, sizeof *x, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&y, sizeof *y, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(x, sizeof *x, 0, sizeof *x));
    EXPECT_OK(aclrtMemset(y, sizeof *y, 0, sizeof *y));

    atomic_store(&gate, 0);
    EXPECT_OK(aclrtLaunchHostFunc(a, gated_write_42, pinned));
    EXPECT_OK(aclrtMemcpyAsync(x, sizeof *x, pinned, sizeof *x, ACL_MEMCPY_HOST_TO_DEVICE, a));
    EXPECT_OK(aclrtRecordEvent(ready, a));
    EXPECT_OK(aclrtStreamWaitEvent(b, ready));
    EXPECT_OK(aclrtMemcpyAsync(y, sizeof *y, x, sizeof *x, ACL_MEMCPY_DEVICE_TO_DEVICE, b));

    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    EXPECT_OK(aclrtQueryEventStatus(ready, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "event pending behind the slow task");
    aclrtEventWaitStatus wait_status = ACL_EVENT_WAIT_STATUS_COMPLETE;
    EXPECT_OK(aclrtQueryEventWaitStatus(ready, &wait_status));
    CHECK(wait_status == ACL_EVENT_WAIT_STATUS_NOT_READY, "wait status pending");
    atomic_store(&gate, 1);

    EXPECT_OK(aclrtSynchronizeStream(b)); /* only b: the wait must have held the copy back */
    EXPECT_OK(aclrtMemcpy(&result, sizeof result, y, sizeof *y, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(result == 42, "stream b copied %d: it ran before the event's work finished", result);

    EXPECT_OK(aclrtQueryEventStatus(ready, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "event complete");
    aclrtEventStatus legacy = ACL_EVENT_STATUS_NOT_READY;
    EXPECT_OK(aclrtQueryEvent(ready, &legacy));
    CHECK(legacy == ACL_EVENT_STATUS_COMPLETE && ACL_EVENT_STATUS_COMPLETE == 0,
          "legacy status COMPLETE (0)");
    EXPECT_OK(aclrtQueryEventWaitStatus(ready, &wait_status));
    CHECK(wait_status == ACL_EVENT_WAIT_STATUS_COMPLETE, "wait status complete");

    /* Reset: not complete until recorded again. */
    EXPECT_OK(aclrtResetEvent(ready, a));
    EXPECT_OK(aclrtSynchronizeStream(a));
    EXPECT_OK(aclrtQueryEventStatus(ready, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "reset event is not complete");
    EXPECT_OK(aclrtRecordEvent(ready, a));
    EXPECT_OK(aclrtSynchronizeEvent(ready));
    EXPECT_OK(aclrtQueryEventStatus(ready, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "re-recorded event is complete");

    EXPECT_OK(aclrtDestroyEvent(ready));
    EXPECT_OK(aclrtFree(x));
    EXPECT_OK(aclrtFreeHost(pinned));
    EXPECT_OK(aclrtFree(y));
    EXPECT_OK(aclrtDestroyStream(a));
    EXPECT_OK(aclrtDestroyStream(b));
}

static void test_unrecorded_events(void)
{
    aclrtEvent plain = NULL, reusable = NULL;
    aclrtEventRecordedStatus status;
    EXPECT_OK(aclrtCreateEvent(&plain));
    EXPECT_OK(aclrtCreateEventExWithFlag(&reusable, ACL_EVENT_SYNC));
    EXPECT_OK(aclrtQueryEventStatus(plain, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "never-recorded event: NOT_READY");
    EXPECT_OK(aclrtQueryEventStatus(reusable, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "never-recorded Ex event: COMPLETE");
    EXPECT_OK(aclrtSynchronizeEvent(plain)); /* nothing to wait for */
    EXPECT_OK(aclrtSynchronizeEventWithTimeout(plain, 0));
    aclrtStream stream = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtStreamWaitEvent(stream, plain)); /* waits for nothing */
    EXPECT_OK(aclrtSynchronizeStreamWithTimeout(stream, 2000));
    EXPECT_OK(aclrtDestroyStream(stream));
    EXPECT_OK(aclrtDestroyEvent(plain));
    EXPECT_OK(aclrtDestroyEvent(reusable));
}

static void test_timeout_and_timing(void)
{
    aclrtStream stream = NULL;
    aclrtEvent start = NULL, end = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtCreateEventWithFlag(&start, ACL_EVENT_TIME_LINE));
    EXPECT_OK(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE));
    float ms = -1.0f;
    EXPECT(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_PARAM_INVALID, "recorded");

    atomic_store(&gate, 0);
    EXPECT_OK(aclrtRecordEvent(start, stream));
    EXPECT_OK(aclrtLaunchHostFunc(stream, wait_for_gate, NULL));
    EXPECT_OK(aclrtLaunchHostFunc(stream, sleep_task, (void *)(intptr_t)200));
    EXPECT_OK(aclrtRecordEvent(end, stream));
    EXPECT(aclrtSynchronizeEventWithTimeout(end, 10), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
           "aclrtSynchronizeEventWithTimeout");
    EXPECT(aclrtSynchronizeEventWithTimeout(end, -2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    /* start's record runs before the gate; wait for it, or a loaded host may not have run it yet
     * and the call would name startEvent instead */
    EXPECT_OK(aclrtSynchronizeEvent(start));
    EXPECT(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_EVENT_NOT_COMPLETE, "endEvent");
    atomic_store(&gate, 1);
    EXPECT_OK(aclrtSynchronizeEventWithTimeout(end, -1));
    EXPECT_OK(aclrtEventElapsedTime(&ms, start, end));
    CHECK(ms >= 199.0f && ms < 60000.0f, "elapsed %.3f ms around a 200 ms task", ms);
    EXPECT(aclrtEventElapsedTime(NULL, start, end), ACL_ERROR_INVALID_PARAM, "ms");
    EXPECT(aclrtEventElapsedTime(&ms, NULL, end), ACL_ERROR_INVALID_PARAM, "startEvent");
    EXPECT(aclrtEventElapsedTime(&ms, start, NULL), ACL_ERROR_INVALID_PARAM, "endEvent");

    /* Destroying an event whose record is still queued is allowed and does not block. */
    aclrtEvent transient = NULL;
    EXPECT_OK(aclrtCreateEvent(&transient));
    EXPECT_OK(aclrtLaunchHostFunc(stream, sleep_task, (void *)(intptr_t)30));
    EXPECT_OK(aclrtRecordEvent(transient, stream));
    EXPECT_OK(aclrtStreamWaitEvent(stream, transient));
    EXPECT_OK(aclrtDestroyEvent(transient));
    EXPECT_OK(aclrtSynchronizeStream(stream));

    EXPECT_OK(aclrtDestroyEvent(start));
    EXPECT_OK(aclrtDestroyEvent(end));
    EXPECT_OK(aclrtDestroyStream(stream));
}

static void test_bad_event_handles(void)
{
    int not_an_event = 0;
    aclrtEvent event = NULL;
    aclrtEventRecordedStatus status;
    EXPECT(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtCreateEventWithFlag(NULL, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtRecordEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtRecordEvent((aclrtEvent)&not_an_event, NULL), ACL_ERROR_INVALID_PARAM,
           "not a live event");
    EXPECT(aclrtStreamWaitEvent(NULL, NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT(aclrtSynchronizeEvent((aclrtEvent)&not_an_event), ACL_ERROR_INVALID_PARAM,
           "aclrtSynchronizeEvent");
    EXPECT_OK(aclrtCreateEvent(&event));
    EXPECT(aclrtQueryEventStatus(event, NULL), ACL_ERROR_INVALID_PARAM, "status");
    EXPECT(aclrtRecordEvent(event, (aclrtStream)&not_an_event), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT(aclrtDestroyEvent(event), ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent");
    EXPECT(aclrtQueryEventStatus(event, &status), ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus");
}

/* A wait with its own 200 ms limit on an event recorded behind a 3 s sleep on another stream. */
static aclError wait_with_timeout_ends(aclrtStream waiter)
{
    aclrtStream busy = NULL;
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateStream(&busy));
    EXPECT_OK(aclrtCreateEvent(&event));
    EXPECT_OK(aclrtLaunchHostFunc(busy, sleep_task, (void *)(intptr_t)3000));
    EXPECT_OK(aclrtRecordEvent(event, busy));
    EXPECT_OK(aclrtStreamWaitEventWithTimeout(waiter, event, 200));
    aclError ret = aclrtSynchronizeStreamWithTimeout(waiter, 1500);
    EXPECT_OK(aclrtSynchronizeStream(busy));
    if (ret != ACL_SUCCESS) /* the ignored limit: the wait ends with the record */
        EXPECT_OK(aclrtSynchronizeStream(waiter));
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT_OK(aclrtDestroyStream(busy));
    return ret;
}

static void test_wait_with_timeout(void)
{
    aclrtStream waiter = NULL;
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateStream(&waiter));
    CHECK(wait_with_timeout_ends(waiter) == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
          "the wait's own 200 ms limit did not end it with 507047");
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    CHECK(wait_with_timeout_ends(waiter) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
          "Ascend910 honoured the wait's limit");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    EXPECT_OK(aclrtCreateEvent(&event));
    EXPECT(aclrtStreamWaitEventWithTimeout(waiter, event, -1), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT_OK(aclrtDestroyStream(waiter));
}

int main(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    test_cross_stream_wait();
    test_unrecorded_events();
    test_timeout_and_timing();
    test_bad_event_handles();
    test_wait_with_timeout();
    /* An event never destroyed is released by aclFinalize. */
    aclrtEvent leftover = NULL;
    EXPECT_OK(aclrtCreateEvent(&leftover));
    EXPECT_OK(aclrtRecordEvent(leftover, NULL));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_event");
}
