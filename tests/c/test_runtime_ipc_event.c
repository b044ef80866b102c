/*
 * test_runtime_ipc_event.c - IPC events (aclrtIpcGetEventHandle / aclrtIpcOpenEventHandle):
 *   - as CANN's ipcevent sample: process A records and synchronizes an ACL_EVENT_IPC event and
 *     passes its handle; process B opens it, waits for it on a stream (done at once), records it
 *     after a delay, and A's aclrtSynchronizeEvent ends only when B's record has run;
 *   - in one process an opened handle is the same event: a record through one handle completes
 *     a synchronize through the other;
 *   - checks: a null handle (100000), an event without ACL_EVENT_IPC (107000, "ACL_EVENT_IPC"),
 *     a handle whose event was destroyed (107000), a product without IPC events (Ascend910:
 *     207000).
 * The child is forked before aclInit (it opens its own device) and talks through two pipes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#include "test_util.h"

#define RECORD_DELAY_MS 300

static void sleep_task(void *args)
{
    (void)args;
    tu_sleep_ms(RECORD_DELAY_MS);
}

/* Process B: opens the handle, waits for A's record, then records after RECORD_DELAY_MS and
 * tells A that the record is issued (not yet run). */
static int child_main(int from_parent, int to_parent)
{
    aclrtIpcEventHandle handle;
    if (read(from_parent, &handle, sizeof handle) != (ssize_t)sizeof handle)
        return 4;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 5;
    aclrtStream stream = NULL;
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    EXPECT_OK(aclrtIpcOpenEventHandle(handle, &event));
    EXPECT_OK(aclrtStreamWaitEvent(stream, event)); /* A recorded and synchronized already */
    CHECK(aclrtSynchronizeStreamWithTimeout(stream, 5000) == ACL_SUCCESS, "A's completed record blocked B's wait");
    EXPECT_OK(aclrtLaunchHostFunc(stream, sleep_task, NULL));
    EXPECT_OK(aclrtRecordEvent(event, stream));
    char issued = 1;
    CHECK(write(to_parent, &issued, 1) == 1, "cannot tell the parent");
    EXPECT_OK(aclrtSynchronizeEvent(event));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT_OK(aclrtQueryEventStatus(event, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "B's own record is not complete after its synchronize");
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT_OK(aclrtDestroyStream(stream));
    aclrtResetDevice(0);
    aclFinalize();
    return failures == 0 ? 0 : 3;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void test_two_processes(pid_t child, int to_child, int from_child)
{
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    EXPECT_OK(aclrtRecordEvent(event, tu_stream));
    EXPECT_OK(aclrtSynchronizeEvent(event));
    aclrtIpcEventHandle handle;
    EXPECT_OK(aclrtIpcGetEventHandle(event, &handle));
    CHECK(write(to_child, &handle, sizeof handle) == (ssize_t)sizeof handle, "cannot send the handle");
    char issued = 0;
    CHECK(read(from_child, &issued, 1) == 1, "the child did not record");
    const double start = now_ms();
    EXPECT_OK(aclrtSynchronizeEvent(event)); /* B's record, issued and still behind its sleep */
    const double waited = now_ms() - start;
    CHECK(waited > RECORD_DELAY_MS / 3, "A's synchronize returned after %.1f ms, before B's record ran", waited);
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    EXPECT_OK(aclrtQueryEventStatus(event, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "B's record did not complete A's event");
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "process B failed (status %d)", wstatus);
    EXPECT_OK(aclrtDestroyEvent(event));
}

static void test_one_process_and_checks(void)
{
    aclrtEvent event = NULL, opened = NULL, plain = NULL;
    aclrtIpcEventHandle handle;
    EXPECT_OK(aclrtCreateEventWithFlag(&event, ACL_EVENT_IPC));
    EXPECT_OK(aclrtIpcGetEventHandle(event, &handle));
    EXPECT_OK(aclrtIpcOpenEventHandle(handle, &opened));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, sleep_task, NULL));
    EXPECT_OK(aclrtRecordEvent(opened, tu_stream));
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    EXPECT_OK(aclrtQueryEventStatus(event, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "a record behind a sleep is complete already");
    EXPECT_OK(aclrtSynchronizeEvent(event));
    EXPECT_OK(aclrtQueryEventStatus(event, &status));
    CHECK(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "the record through the opened handle did not count");
    EXPECT_OK(aclrtDestroyEvent(opened));

    EXPECT(aclrtIpcGetEventHandle(event, NULL), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT(aclrtIpcOpenEventHandle(handle, NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT_OK(aclrtCreateEvent(&plain));
    EXPECT(aclrtIpcGetEventHandle(plain, &handle), ACL_ERROR_RT_PARAM_INVALID, "ACL_EVENT_IPC");
    EXPECT_OK(aclrtDestroyEvent(plain));
    EXPECT_OK(aclrtIpcGetEventHandle(event, &handle));
    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT(aclrtIpcOpenEventHandle(handle, &opened), ACL_ERROR_RT_PARAM_INVALID, "nnevent");

    CHECK(aclnnCpuSetSocVersion("Ascend910") == 0, "cannot select Ascend910");
    EXPECT_OK(aclrtCreateEventWithFlag(&event, ACL_EVENT_IPC));
    EXPECT(aclrtIpcGetEventHandle(event, &handle), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910");
    EXPECT_OK(aclrtDestroyEvent(event));
    CHECK(aclnnCpuSetSocVersion(NULL) == 0, "cannot restore the default product");
}

int main(void)
{
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0)
        return 2;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        _exit(child_main(down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    if (child < 0 || tu_open_device() != 0)
        return 2;
    test_two_processes(child, down[1], up[0]);
    test_one_process_and_checks();
    tu_close_device();
    return tu_finish("test_runtime_ipc_event");
}
