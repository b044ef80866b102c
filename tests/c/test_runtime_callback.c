/*
 * test_runtime_callback.c - host callbacks (docs/runtime.md): aclrtLaunchCallback needs a
 * subscribed thread (107015 otherwise); the subscribed thread runs callbacks in
 * aclrtProcessReport; ACL_CALLBACK_BLOCK holds later stream work until the callback ran;
 * unsubscribing runs what is still pending; ProcessReport of an unsubscribed thread -> 107012,
 * a timeout -> 507012; a second subscription of a stream -> 100033.
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

static atomic_int stop_reporter;
static pthread_t reporter_thread;

static void *reporter(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_reporter)) {
        aclError ret = aclrtProcessReport(20); /* a timeout just loops */
        (void)aclGetRecentErrMsg();
        if (ret == ACL_ERROR_RT_THREAD_SUBSCRIBE) { /* not subscribed right now: don't spin */
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

typedef struct log_entry {
    int order[64];
    atomic_int count;
    pthread_t runner[64];
} log_entry;

static log_entry callback_log;

static void note(int tag)
{
    int slot = atomic_fetch_add(&callback_log.count, 1);
    if (slot < 64) {
        callback_log.order[slot] = tag;
        callback_log.runner[slot] = pthread_self();
    }
}

static void callback_fn(void *arg)
{
    struct timespec ts = {0, 20 * 1000000L}; /* slow, so a non-blocking stream would run ahead */
    nanosleep(&ts, NULL);
    note((int)(intptr_t)arg);
}

static void host_fn(void *arg)
{
    note((int)(intptr_t)arg);
}

static void test_subscription_rules(aclrtStream stream)
{
    EXPECT(aclrtLaunchCallback(callback_fn, NULL, ACL_CALLBACK_BLOCK, stream),
           ACL_ERROR_RT_STREAM_NO_CB_REG, "aclrtSubscribeReport");
    EXPECT(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "aclrtProcessReport");
    EXPECT(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM, "timeout");
    EXPECT(aclrtUnSubscribeReport((uint64_t)pthread_self(), stream), ACL_ERROR_RT_STREAM_NO_CB_REG,
           "aclrtUnSubscribeReport");

    /* The main thread subscribes itself to see the timeout code, then leaves. */
    EXPECT_OK(aclrtSubscribeReport((uint64_t)pthread_self(), stream));
    EXPECT(aclrtSubscribeReport((uint64_t)pthread_self(), stream), ACL_ERROR_REPEAT_SUBSCRIBE,
           "aclrtSubscribeReport");
    EXPECT(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT, "aclrtProcessReport");
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)pthread_self(), stream));

    EXPECT(aclrtLaunchCallback(NULL, NULL, ACL_CALLBACK_BLOCK, stream), ACL_ERROR_INVALID_PARAM,
           "fn");
}

static void test_block_ordering(aclrtStream stream)
{
    atomic_store(&callback_log.count, 0);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter_thread, stream));
    EXPECT(aclrtLaunchCallback(callback_fn, NULL, (aclrtCallbackBlockType)5, stream),
           ACL_ERROR_INVALID_PARAM, "blockType");
    for (int i = 0; i < 4; i++) {
        EXPECT_OK(aclrtLaunchCallback(callback_fn, (void *)(intptr_t)(2 * i), ACL_CALLBACK_BLOCK,
                                      stream));
        EXPECT_OK(aclrtLaunchHostFunc(stream, host_fn, (void *)(intptr_t)(2 * i + 1)));
    }
    EXPECT_OK(aclrtSynchronizeStream(stream));
    int count = atomic_load(&callback_log.count);
    CHECK(count == 8, "%d entries, expected 8", count);
    for (int i = 0; i < count && i < 8; i++) {
        CHECK(callback_log.order[i] == i, "entry %d is %d: blocking callbacks keep stream order",
              i, callback_log.order[i]);
        if (i % 2 == 0)
            CHECK(pthread_equal(callback_log.runner[i], reporter_thread),
                  "callback %d ran on the subscribed thread", i);
    }
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)reporter_thread, stream));
}

static void test_no_block_then_unsubscribe(aclrtStream stream)
{
    atomic_store(&callback_log.count, 0);
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter_thread, stream));
    for (int i = 0; i < 5; i++)
        EXPECT_OK(aclrtLaunchCallback(callback_fn, (void *)(intptr_t)i, ACL_CALLBACK_NO_BLOCK,
                                      stream));
    EXPECT_OK(aclrtSynchronizeStream(stream)); /* does not wait for non-blocking callbacks */
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)reporter_thread, stream)); /* runs the rest */
    int count = atomic_load(&callback_log.count);
    CHECK(count == 5, "%d non-blocking callbacks ran by unsubscribe, expected 5", count);
    for (int i = 0; i < count && i < 5; i++)
        CHECK(callback_log.order[i] == i, "non-blocking callbacks keep their order");
}

int main(void)
{
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    CHECK(pthread_create(&reporter_thread, NULL, reporter, NULL) == 0, "pthread_create");

    test_subscription_rules(stream);
    test_block_ordering(stream);
    test_no_block_then_unsubscribe(stream);

    /* A subscription left in place is undone by aclrtDestroyStream. */
    EXPECT_OK(aclrtSubscribeReport((uint64_t)reporter_thread, stream));
    EXPECT_OK(aclrtLaunchCallback(callback_fn, (void *)(intptr_t)9, ACL_CALLBACK_BLOCK, stream));
    EXPECT_OK(aclrtDestroyStream(stream));

    atomic_store(&stop_reporter, 1);
    pthread_join(reporter_thread, NULL);
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_callback");
}
