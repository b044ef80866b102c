/*
 * test_runtime_notify.c - notifies and count notifies (rt_notify.c), in one process and between
 * processes by key:
 *   - a wait queued before its record blocks its stream until another stream records; the record
 *     is taken by the wait (a second wait times out with ACL_ERROR_RT_WAIT_TIMEOUT, whose message
 *     names the call); a record made before the wait is kept for it;
 *   - count notifies: add, or, and, set and reset change the counter as the modes say, and each
 *     wait mode ends exactly when its comparison holds (a wait that cannot end times out);
 *   - parameters are checked as CANN checks them (null handles, flags, modes, the other kind);
 *   - a forked process imports a key and its record ends the parent's wait; without the pid in the
 *     whitelist the import is refused unless the key was exported with pid validation disabled;
 *     a key dies with aclrtDestroyNotify.
 * Children are forked before aclInit (each opens its own device) and get keys through a pipe.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#include "test_util.h"

#define KEY_LEN 65

/* ---- children ---------------------------------------------------------------------------- */

typedef enum { CHILD_RECORD, CHILD_REFUSED, CHILD_DEAD_KEY } child_role;

typedef struct child {
    pid_t pid;
    int key_pipe; /* the parent writes one key here */
} child;

static int child_main(child_role role, int key_pipe)
{
    char key[KEY_LEN] = {0};
    if (read(key_pipe, key, sizeof key) <= 0)
        return 4;
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 5;
    aclrtStream stream = NULL;
    EXPECT_OK(aclrtCreateStream(&stream));
    aclrtNotify notify = NULL;
    if (role == CHILD_RECORD) {
        EXPECT_OK(aclrtNotifyImportByKey(&notify, key, 0));
        tu_sleep_ms(200); /* the parent's wait is queued and blocked by now */
        EXPECT_OK(aclrtRecordNotify(notify, stream));
        EXPECT_OK(aclrtSynchronizeStream(stream));
        EXPECT_OK(aclrtDestroyNotify(notify));
    } else if (role == CHILD_REFUSED) {
        EXPECT(aclrtNotifyImportByKey(&notify, key, 0), ACL_ERROR_RT_PARAM_INVALID, "whitelist");
    } else {
        EXPECT(aclrtNotifyImportByKey(&notify, key, 0), ACL_ERROR_RT_PARAM_INVALID, key);
    }
    EXPECT_OK(aclrtDestroyStream(stream));
    aclrtResetDevice(0);
    aclFinalize();
    return failures == 0 ? 0 : 3;
}

static child spawn(child_role role)
{
    int fds[2];
    child c = {-1, -1};
    if (pipe(fds) != 0)
        return c;
    fflush(NULL);
    c.pid = fork();
    if (c.pid == 0) {
        close(fds[1]);
        _exit(child_main(role, fds[0]));
    }
    close(fds[0]);
    c.key_pipe = fds[1];
    return c;
}

static void send_key(child *c, const char *key)
{
    /* the length once, before the write: with the write and two strlen calls in one expression,
     * GCC at -O1 with -fsanitize=undefined (make sanitize) warned of a null key (-Wnonnull, a
     * false positive), which -Werror made fatal */
    const size_t bytes = strlen(key) + 1;
    const ssize_t sent = write(c->key_pipe, key, bytes);
    CHECK(sent == (ssize_t)bytes, "cannot send the key");
    close(c->key_pipe);
}

static void expect_child_ok(const child *c, const char *what)
{
    int wstatus = 0;
    waitpid(c->pid, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "%s: the child failed (status %d)", what, wstatus);
}

/* ---- one process ------------------------------------------------------------------------- */

/* Whether `stream` finishes its queued work within `ms`. */
static int finishes_within(aclrtStream stream, int ms)
{
    return aclrtSynchronizeStreamWithTimeout(stream, ms) == ACL_SUCCESS;
}

static void test_wait_then_record(void)
{
    aclrtStream other = NULL;
    aclrtNotify notify = NULL;
    EXPECT_OK(aclrtCreateStream(&other));
    EXPECT_OK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    EXPECT_OK(aclrtWaitAndResetNotify(notify, tu_stream, 0));
    CHECK(!finishes_within(tu_stream, 100), "a wait with no record let its stream finish");
    EXPECT_OK(aclrtRecordNotify(notify, other));
    CHECK(finishes_within(tu_stream, 5000), "the record did not end the wait");
    EXPECT_OK(aclrtSynchronizeStream(other));

    /* the wait took the record: a second wait with a 1 s timeout of its own fails */
    EXPECT_OK(aclrtWaitAndResetNotify(notify, tu_stream, 1));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_WAIT_TIMEOUT, "aclrtWaitAndResetNotify");

    /* a record made first stays until a wait takes it */
    EXPECT_OK(aclrtRecordNotify(notify, other));
    EXPECT_OK(aclrtSynchronizeStream(other));
    EXPECT_OK(aclrtWaitAndResetNotify(notify, tu_stream, 1));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));

    /* aclrtNotifyBatchReset clears a pending record */
    EXPECT_OK(aclrtRecordNotify(notify, other));
    EXPECT_OK(aclrtSynchronizeStream(other));
    EXPECT_OK(aclrtNotifyBatchReset(&notify, 1));
    EXPECT_OK(aclrtWaitAndResetNotify(notify, tu_stream, 1));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_WAIT_TIMEOUT, "aclrtWaitAndResetNotify");

    EXPECT_OK(aclrtDestroyNotify(notify));
    EXPECT_OK(aclrtDestroyStream(other));
}

static void test_ids_and_checks(void)
{
    aclrtNotify a = NULL, b = NULL;
    aclrtCntNotify counter = NULL;
    uint32_t id_a = 0, id_b = 0;
    EXPECT_OK(aclrtCreateNotify(&a, ACL_NOTIFY_DEFAULT));
    EXPECT_OK(aclrtCreateNotify(&b, ACL_NOTIFY_DEVICE_USE_ONLY));
    EXPECT_OK(aclrtGetNotifyId(a, &id_a));
    EXPECT_OK(aclrtGetNotifyId(b, &id_b));
    CHECK(id_a != id_b, "two notifies share id %u", id_a);
    EXPECT_OK(aclrtCntNotifyCreate(&counter, 0));

    EXPECT(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM, "notify");
    aclrtNotify unused = NULL;
    EXPECT(aclrtCreateNotify(&unused, 7), ACL_ERROR_RT_PARAM_INVALID, "flag");
    EXPECT(aclrtCntNotifyCreate(&unused, 1), ACL_ERROR_RT_PARAM_INVALID, "flag");
    EXPECT(aclrtGetNotifyId(a, NULL), ACL_ERROR_INVALID_PARAM, "notifyId");
    EXPECT(aclrtRecordNotify(NULL, tu_stream), ACL_ERROR_INVALID_PARAM, "notify");
    EXPECT(aclrtRecordNotify(counter, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "notify");
    EXPECT(aclrtCntNotifyRecord(a, tu_stream, &(aclrtCntNotifyRecordInfo){ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1}),
           ACL_ERROR_RT_PARAM_INVALID, "cntNotify");
    EXPECT(aclrtCntNotifyRecord(counter, tu_stream, NULL), ACL_ERROR_INVALID_PARAM, "info");
    EXPECT(aclrtCntNotifyRecord(counter, tu_stream, &(aclrtCntNotifyRecordInfo){(aclrtCntNotifyRecordMode)3, 1}),
           ACL_ERROR_RT_PARAM_INVALID, "info->mode");
    aclrtCntNotifyWaitInfo bad_wait = {(aclrtCntNotifyWaitMode)5, 0, 0, 0, {0}};
    EXPECT(aclrtCntNotifyWaitWithTimeout(counter, tu_stream, &bad_wait), ACL_ERROR_RT_PARAM_INVALID, "info->mode");
    EXPECT(aclrtNotifyBatchReset(NULL, 1), ACL_ERROR_INVALID_PARAM, "notifies");
    EXPECT(aclrtNotifyGetExportKey(a, (char[KEY_LEN]){0}, KEY_LEN, 1), ACL_ERROR_RT_PARAM_INVALID, "flags");
    EXPECT(aclrtNotifyImportByKey(&unused, "nnipc-1-2-0-1000-0000000000000000", 0), ACL_ERROR_INVALID_PARAM,
           "not a key");

    EXPECT_OK(aclrtDestroyNotify(a));
    EXPECT(aclrtDestroyNotify(a), ACL_ERROR_RT_PARAM_INVALID, "notify");
    EXPECT(aclrtGetNotifyId(a, &id_a), ACL_ERROR_RT_PARAM_INVALID, "notify");
    EXPECT_OK(aclrtDestroyNotify(b));
    EXPECT_OK(aclrtCntNotifyDestroy(counter));
}

static void cnt_record(aclrtCntNotify counter, aclrtCntNotifyRecordMode mode, uint32_t value)
{
    aclrtCntNotifyRecordInfo info = {mode, value};
    EXPECT_OK(aclrtCntNotifyRecord(counter, tu_stream, &info));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
}

/* Whether a count wait (1 s timeout of its own) ends on the current counter. */
static int cnt_wait_ends(aclrtCntNotify counter, aclrtCntNotifyWaitMode mode, uint32_t value, int clear)
{
    aclrtCntNotifyWaitInfo info = {mode, value, 1, (uint8_t)clear, {0}};
    EXPECT_OK(aclrtCntNotifyWaitWithTimeout(counter, tu_stream, &info));
    aclError ret = aclrtSynchronizeStream(tu_stream);
    CHECK(ret == ACL_SUCCESS || ret == ACL_ERROR_RT_WAIT_TIMEOUT, "a count wait failed with %d", (int)ret);
    return ret == ACL_SUCCESS;
}

static void test_count_notify(void)
{
    aclrtCntNotify counter = NULL;
    EXPECT_OK(aclrtCntNotifyCreate(&counter, 0));
    cnt_record(counter, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 3);
    cnt_record(counter, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 3); /* 6 */
    CHECK(!cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 5, 0), "6 == 5");
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 6, 0), "6 != 6");
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 5, 0), "6 <= 5");
    CHECK(!cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 6, 0), "6 > 6");
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 6, 0), "6 < 6");
    CHECK(!cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 6, 0), "6 < 6");
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 7, 0), "6 >= 7");
    cnt_record(counter, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x30); /* 0x36 */
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0x32, 0), "0x36 lacks 0x32");
    CHECK(!cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0x09, 0), "0x36 has 0x09");
    cnt_record(counter, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0x0f); /* 0x06 */
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0x06, 1), "0x36 & 0x0f != 6");
    /* the wait above cleared the counter */
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, 0), "isClear left the counter");
    cnt_record(counter, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 41);
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 41, 0), "set 41");
    EXPECT_OK(aclrtCntNotifyReset(counter, tu_stream));
    CHECK(cnt_wait_ends(counter, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0, 0), "reset left the counter");
    uint32_t id = 0;
    EXPECT_OK(aclrtCntNotifyGetId(counter, &id));
    EXPECT_OK(aclrtCntNotifyDestroy(counter));
}

/* ---- between processes ------------------------------------------------------------------- */

static void test_between_processes(child *recorder, child *refused, child *dead_key)
{
    aclrtNotify notify = NULL, open_notify = NULL;
    char key[KEY_LEN] = {0}, open_key[KEY_LEN] = {0};
    EXPECT_OK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    EXPECT_OK(aclrtNotifyGetExportKey(notify, key, sizeof key, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
    int32_t pid = recorder->pid;
    EXPECT_OK(aclrtNotifySetImportPid(notify, &pid, 1));
    EXPECT_OK(aclrtWaitAndResetNotify(notify, tu_stream, 0));
    send_key(recorder, key);
    send_key(refused, key); /* not whitelisted */
    CHECK(finishes_within(tu_stream, 10000), "the other process's record did not end the wait");
    expect_child_ok(recorder, "record through an imported key");
    expect_child_ok(refused, "import by a process not in the whitelist");

    /* without pid validation anyone may import; the key dies with the notify */
    EXPECT_OK(aclrtCreateNotify(&open_notify, ACL_NOTIFY_DEFAULT));
    EXPECT_OK(aclrtNotifyGetExportKey(open_notify, open_key, sizeof open_key,
                                      ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    aclrtNotify same = NULL;
    EXPECT_OK(aclrtNotifyImportByKey(&same, open_key, 0));
    uint32_t id = 0, same_id = 1;
    EXPECT_OK(aclrtGetNotifyId(open_notify, &id));
    EXPECT_OK(aclrtGetNotifyId(same, &same_id));
    CHECK(id == same_id, "an imported notify reports id %u, its original %u", same_id, id);
    EXPECT_OK(aclrtDestroyNotify(same));
    EXPECT_OK(aclrtDestroyNotify(open_notify));
    send_key(dead_key, open_key);
    expect_child_ok(dead_key, "import of a destroyed notify's key");
    EXPECT_OK(aclrtDestroyNotify(notify));
}

int main(void)
{
    child recorder = spawn(CHILD_RECORD), refused = spawn(CHILD_REFUSED), dead_key = spawn(CHILD_DEAD_KEY);
    if (recorder.pid < 0 || refused.pid < 0 || dead_key.pid < 0 || tu_open_device() != 0)
        return 2;
    test_wait_then_record();
    test_ids_and_checks();
    test_count_notify();
    test_between_processes(&recorder, &refused, &dead_key);
    tu_close_device();
    return tu_finish("test_runtime_notify");
}
