/*
 * test_runtime_host_func_thread.c - host functions run by a subscribed thread
 * (aclrtSubscribeHostFunc / aclrtProcessHostFunc / aclrtUnSubscribeHostFunc, docs/runtime.md
 * "Callbacks"): aclrtLaunchHostFunc's function runs on the thread that processes the stream's
 * host functions, in stream order, the stream waiting for it; without a subscription it runs on
 * the stream's worker.  Statuses as CANN's compact runtime has them
 * (runtime:src/runtime_compact/feature/src/host_func.c, subscribe_manager_linux.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

static atomic_int stop_processing;
static pthread_t processor;

static void *process_host_funcs(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_processing)) {
        aclError ret = aclrtProcessHostFunc(20); /* a timeout just loops */
        (void)aclGetRecentErrMsg();
        if (ret == ACL_ERROR_RT_THREAD_SUBSCRIBE)
            tu_sleep_ms(5); /* not subscribed right now: don't spin */
    }
    return NULL;
}

/* What the host functions saw: the order they ran in and the thread. */
static int order[8];
static atomic_int ran;
static pthread_t ran_on[8];

static void record(void *arg)
{
    int at = atomic_fetch_add(&ran, 1);
    if (at < 8) {
        order[at] = (int)(intptr_t)arg;
        ran_on[at] = pthread_self();
    }
    tu_sleep_ms(2); /* the stream waits: a later function cannot overtake */
}

static void forget_runs(void)
{
    atomic_store(&ran, 0);
    memset(order, 0, sizeof order);
}

static void test_rules(aclrtStream stream)
{
    EXPECT(aclrtSubscribeHostFunc((uint64_t)processor, NULL), ACL_ERROR_RT_PARAM_INVALID, "exeStream");
    EXPECT(aclrtUnSubscribeHostFunc((uint64_t)processor, NULL), ACL_ERROR_RT_PARAM_INVALID, "exeStream");
    EXPECT(aclrtProcessHostFunc(0), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT(aclrtProcessHostFunc(-2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT(aclrtProcessHostFunc(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "aclrtSubscribeHostFunc");
    EXPECT(aclrtUnSubscribeHostFunc((uint64_t)processor, stream), ACL_ERROR_RT_STREAM_SUBSCRIBE, "not subscribed");
    EXPECT_OK(aclrtSubscribeHostFunc((uint64_t)processor, stream));
    EXPECT(aclrtSubscribeHostFunc((uint64_t)pthread_self(), stream), ACL_ERROR_RT_STREAM_SUBSCRIBE,
           "already subscribed");
    EXPECT(aclrtUnSubscribeHostFunc((uint64_t)pthread_self(), stream), ACL_ERROR_RT_STREAM_SUBSCRIBE,
           "not subscribed");
    /* a report subscription is another kind: the same stream may have one besides */
    EXPECT_OK(aclrtSubscribeReport((uint64_t)pthread_self(), stream));
    EXPECT_OK(aclrtUnSubscribeReport((uint64_t)pthread_self(), stream));
}

static void test_runs_on_the_thread(aclrtStream stream)
{
    forget_runs();
    for (int i = 1; i <= 4; i++)
        EXPECT_OK(aclrtLaunchHostFunc(stream, record, (void *)(intptr_t)i));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 4, "four host functions ran: %d", atomic_load(&ran));
    for (int i = 0; i < 4; i++) {
        CHECK(order[i] == i + 1, "stream order: position %d ran %d", i, order[i]);
        CHECK(pthread_equal(ran_on[i], processor), "function %d ran on the subscribed thread", i + 1);
    }
}

static void test_unsubscribed_runs_on_the_worker(aclrtStream stream)
{
    EXPECT_OK(aclrtUnSubscribeHostFunc((uint64_t)processor, stream));
    forget_runs();
    EXPECT_OK(aclrtLaunchHostFunc(stream, record, (void *)(intptr_t)7));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 1 && order[0] == 7, "the function ran: %d", atomic_load(&ran));
    CHECK(!pthread_equal(ran_on[0], processor) && !pthread_equal(ran_on[0], pthread_self()),
          "without a subscription the stream's worker runs it");
}

/* A thread that never processes: the stream waits for it until an abort gives the function up. */
static void test_abort_gives_up_a_waiting_function(aclrtStream stream)
{
    EXPECT_OK(aclrtSubscribeHostFunc((uint64_t)pthread_self(), stream));
    forget_runs();
    EXPECT_OK(aclrtLaunchHostFunc(stream, record, (void *)(intptr_t)9));
    tu_sleep_ms(30);
    aclrtStreamStatus status = ACL_STREAM_STATUS_COMPLETE;
    EXPECT_OK(aclrtStreamQuery(stream, &status));
    CHECK(status == ACL_STREAM_STATUS_NOT_READY, "the stream waits for the thread: status %d", (int)status);
    EXPECT_OK(aclrtStreamAbort(stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 0, "the aborted function never ran: %d", atomic_load(&ran));
    EXPECT_OK(aclrtUnSubscribeHostFunc((uint64_t)pthread_self(), stream));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    CHECK(pthread_create(&processor, NULL, process_host_funcs, NULL) == 0, "pthread_create");
    test_rules(tu_stream);
    test_runs_on_the_thread(tu_stream);
    test_unsubscribed_runs_on_the_worker(tu_stream);
    test_abort_gives_up_a_waiting_function(tu_stream);

    /* a subscription left in place is undone by aclrtDestroyStream */
    aclrtStream other;
    EXPECT_OK(aclrtCreateStream(&other));
    EXPECT_OK(aclrtSubscribeHostFunc((uint64_t)processor, other));
    EXPECT_OK(aclrtLaunchHostFunc(other, record, (void *)(intptr_t)5));
    EXPECT_OK(aclrtSynchronizeStream(other));
    EXPECT_OK(aclrtDestroyStream(other));

    atomic_store(&stop_processing, 1);
    pthread_join(processor, NULL);
    tu_close_device();
    return tu_finish("test_runtime_host_func_thread");
}
