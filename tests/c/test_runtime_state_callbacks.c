/*
 * test_runtime_state_callbacks.c - the callbacks CANN calls at aclInit / aclFinalize
 * (aclInitCallbackRegister, aclFinalizeCallbackRegister), on stream and device life cycles
 * (aclrtRegStreamStateCallback, aclrtRegDeviceStateCallback) and around a device task abort
 * (aclrtSetDeviceTaskAbortCallback), and the aborts themselves (aclrtStreamAbort,
 * aclrtStreamStop, aclrtDeviceTaskAbort).  The expected orders and statuses are those of CANN's
 * runtime sources (runtime:src/acl/aclrt_impl/init_callback_manager.cpp, acl.cpp;
 * src/runtime/core/src/stream/stream_state_callback_manager.cc, runtime.cc).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

/* ---- a log of what the callbacks saw ------------------------------------------------------ */

static char seen[1024];

static void note(const char *what)
{
    strncat(seen, what, sizeof seen - strlen(seen) - 1);
    strncat(seen, " ", sizeof seen - strlen(seen) - 1);
}

static void forget(void) { seen[0] = '\0'; }

/* ---- init and finalize callbacks ---------------------------------------------------------- */

static size_t config_length_seen;
static char config_seen[64];

static aclError on_init_model(const char *configStr, size_t len, void *userData)
{
    config_length_seen = len;
    snprintf(config_seen, sizeof config_seen, "%.*s", (int)len, configStr);
    note((const char *)userData);
    return ACL_SUCCESS;
}

static aclError on_init_other(const char *configStr, size_t len, void *userData)
{
    (void)configStr, (void)len;
    note((const char *)userData);
    return ACL_SUCCESS;
}

static aclError on_init_fail(const char *configStr, size_t len, void *userData)
{
    (void)configStr, (void)len, (void)userData;
    note("init-fail");
    return ACL_ERROR_FAILURE;
}

static aclError on_finalize(void *userData)
{
    note((const char *)userData);
    return ACL_SUCCESS;
}

static aclError on_finalize_fail(void *userData)
{
    (void)userData;
    note("fin-fail");
    return ACL_ERROR_FAILURE;
}

static void test_registration_rules(void)
{
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, NULL, NULL), ACL_ERROR_INVALID_PARAM, "cbFunc");
    EXPECT(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, NULL, NULL), ACL_ERROR_INVALID_PARAM, "cbFunc");
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, NULL), ACL_ERROR_INVALID_PARAM, "cbFunc");
    EXPECT(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init_model), ACL_ERROR_INTERNAL_ERROR,
           "not registered");
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init_model, "model"));
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init_other, "x"), ACL_ERROR_INTERNAL_ERROR,
           "already has a callback");
    /* OTHER takes several, called in registration order; types aclInit never calls stay silent */
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_other, "other1"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_other, "other2"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_init_other, "dvpp"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, on_init_other, "executor"));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_TDT_QUEUE, on_init_other, "tdt"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_finalize, "fin-other"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize, "fin-model"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_OP_COMPILER, on_finalize, "fin-compiler"));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_RETR, on_finalize, "fin-retr"));
}

static void test_init_and_finalize_order(void)
{
    forget();
    EXPECT_OK(aclInit(NULL));
    /* no configPath: no OP_EXECUTOR call (CANN calls it only with a configuration file) */
    CHECK(strcmp(seen, "model dvpp other1 other2 ") == 0, "aclInit called: %s", seen);
    CHECK(config_length_seen == 0, "configuration length %zu without a file", config_length_seen);
    forget();
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_init_other, "late"));
    CHECK(strcmp(seen, "late ") == 0, "a callback registered after aclInit runs at once: %s", seen);
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init_other)); /* the first of them */
    forget();
    EXPECT_OK(aclFinalize());
    CHECK(strcmp(seen, "fin-compiler fin-model fin-other ") == 0, "aclFinalize called: %s", seen);
}

static void test_init_with_file(void)
{
    const char *path = "test_runtime_state_callbacks.json";
    const char text[] = "{ }\n"; /* empty as the first aclInit's (a re-init must not change it) */
    FILE *file = fopen(path, "w");
    CHECK(file != NULL, "cannot write %s", path);
    if (file == NULL)
        return;
    fputs(text, file);
    fclose(file);
    forget();
    EXPECT_OK(aclInit(path));
    CHECK(strstr(seen, "executor") != NULL, "OP_EXECUTOR not called with a configPath: %s", seen);
    CHECK(config_length_seen == strlen(text) && strcmp(config_seen, text) == 0,
          "the file's text as it is: %zu \"%s\"", config_length_seen, config_seen);
    EXPECT_OK(aclFinalize());
    remove(path);
}

static void test_failures(void)
{
    /* a failing init callback fails aclInit with its status; the runtime stays uninitialized */
    EXPECT(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_init_fail, NULL), ACL_ERROR_INTERNAL_ERROR,
           "already has a callback");
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_init_other));
    EXPECT_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_init_fail, NULL));
    EXPECT(aclInit(NULL), ACL_ERROR_FAILURE, "init callback");
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "not initialized");
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_init_fail));
    /* a failing finalize callback fails aclFinalize, which leaves the runtime initialized */
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize_fail, NULL));
    EXPECT(aclFinalize(), ACL_ERROR_FAILURE, "finalize callback");
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize_fail));
    EXPECT_OK(aclFinalize());
    EXPECT(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_finalize_fail), ACL_ERROR_INTERNAL_ERROR,
           "not registered");
}

static void remove_init_callbacks(void)
{
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init_model));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init_other));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, on_init_other));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_OP_EXECUTOR, on_init_other));
    EXPECT_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_TDT_QUEUE, on_init_other));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_finalize));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_finalize));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_OP_COMPILER, on_finalize));
    EXPECT_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_ACL_RETR, on_finalize));
}

/* ---- stream and device state callbacks ---------------------------------------------------- */

static aclrtStream watched;

static void on_stream(aclrtStream stm, aclrtStreamState state, void *args)
{
    char what[48];
    const char *name = state == ACL_RT_STREAM_STATE_CREATE_POST ? "create" : "destroy";
    snprintf(what, sizeof what, "%s:%s%s", (const char *)args, name, stm == watched ? "(w)" : "");
    note(what);
}

static void on_device(int32_t deviceId, aclrtDeviceState state, void *args)
{
    static const char *const names[] = {"set-pre", "set-post", "reset-pre", "reset-post"};
    char what[48];
    snprintf(what, sizeof what, "%s:%s%d", (const char *)args, names[state], (int)deviceId);
    note(what);
}

static void test_state_callbacks(void)
{
    EXPECT(aclrtRegStreamStateCallback(NULL, on_stream, NULL), ACL_ERROR_INVALID_PARAM, "regName");
    EXPECT(aclrtRegDeviceStateCallback(NULL, on_device, NULL), ACL_ERROR_INVALID_PARAM, "regName");
    EXPECT_OK(aclrtRegStreamStateCallback("b", on_stream, "b"));
    EXPECT_OK(aclrtRegStreamStateCallback("a", on_stream, "a"));
    EXPECT(aclrtRegStreamStateCallback("a", on_stream, "a"), ACL_ERROR_RT_PARAM_INVALID, "already registered");
    EXPECT_OK(aclrtRegDeviceStateCallback("dev", on_device, "d"));
    EXPECT_OK(aclrtRegStreamStateCallback("never", NULL, NULL)); /* unregistering a stranger: no error */

    EXPECT_OK(aclInit(NULL));
    forget();
    EXPECT_OK(aclrtSetDevice(0));
    CHECK(strcmp(seen, "d:set-pre0 a:create b:create d:set-post0 ") == 0, "first aclrtSetDevice: %s", seen);
    forget();
    EXPECT_OK(aclrtSetDevice(0)); /* already open: only SET_POST */
    CHECK(strcmp(seen, "d:set-post0 ") == 0, "second aclrtSetDevice: %s", seen);
    forget();
    EXPECT_OK(aclrtCreateStream(&watched));
    CHECK(strcmp(seen, "a:create(w) b:create(w) ") == 0, "aclrtCreateStream: %s", seen);
    forget();
    EXPECT_OK(aclrtDestroyStream(watched));
    CHECK(strcmp(seen, "a:destroy(w) b:destroy(w) ") == 0, "aclrtDestroyStream: %s", seen);
    EXPECT_OK(aclrtRegStreamStateCallback("b", NULL, NULL)); /* unregisters "b" */
    forget();
    EXPECT_OK(aclrtResetDevice(0)); /* one reference left: nothing released */
    CHECK(seen[0] == '\0', "a reset that releases nothing: %s", seen);
    EXPECT_OK(aclrtResetDevice(0));
    CHECK(strcmp(seen, "d:reset-pre0 a:destroy d:reset-post0 ") == 0, "releasing reset: %s", seen);
    EXPECT_OK(aclrtSetDevice(0));
    forget();
    EXPECT_OK(aclFinalize()); /* releases device 0 */
    CHECK(strcmp(seen, "d:reset-pre0 a:destroy d:reset-post0 ") == 0, "aclFinalize: %s", seen);
    EXPECT_OK(aclrtRegStreamStateCallback("a", NULL, NULL));
    EXPECT_OK(aclrtRegDeviceStateCallback("dev", NULL, NULL));
}

/* ---- aborts ------------------------------------------------------------------------------- */

static atomic_int ran;

static void slow_task(void *arg)
{
    (void)arg;
    tu_sleep_ms(100);
    atomic_fetch_add(&ran, 100);
}

static void count_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

/* Queues one slow task and `n` counting ones behind it. */
static void queue_work(aclrtStream stream, int n)
{
    EXPECT_OK(aclrtLaunchHostFunc(stream, slow_task, NULL));
    for (int i = 0; i < n; i++)
        EXPECT_OK(aclrtLaunchHostFunc(stream, count_task, NULL));
}

static int32_t abort_calls[4];
static uint32_t abort_timeouts[2];

static int32_t on_abort(int32_t deviceId, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void *args)
{
    abort_calls[stage]++;
    abort_calls[2 + stage] = deviceId;
    abort_timeouts[stage] = timeout;
    return args != NULL ? *(const int32_t *)args : 0;
}

static void test_stream_abort(aclrtStream stream)
{
    atomic_store(&ran, 0);
    queue_work(stream, 5);
    tu_sleep_ms(20); /* the slow task has started */
    EXPECT_OK(aclrtStreamAbort(stream));
    CHECK(atomic_load(&ran) == 100, "the running task finishes, the 5 queued are dropped: %d", atomic_load(&ran));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    EXPECT_OK(aclrtLaunchHostFunc(stream, count_task, NULL)); /* usable again */
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 101, "work after the abort runs: %d", atomic_load(&ran));

    atomic_store(&ran, 0);
    queue_work(stream, 3);
    EXPECT_OK(aclrtStreamStop(stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) <= 100, "aclrtStreamStop dropped the queued tasks: %d", atomic_load(&ran));
    EXPECT(aclrtStreamStop(NULL), ACL_ERROR_RT_PARAM_INVALID, "stream");
    EXPECT(aclrtStreamAbort((aclrtStream)&ran), ACL_ERROR_INVALID_PARAM, "not a live stream");
    EXPECT_OK(aclrtStreamAbort(NULL)); /* the default stream, as CANN's runtime takes null */
}

static void test_device_abort(aclrtStream stream)
{
    static const int32_t refuse = ACL_ERROR_RT_PARAM_INVALID;
    EXPECT(aclrtSetDeviceTaskAbortCallback(NULL, on_abort, NULL), ACL_ERROR_INVALID_PARAM, "regName");
    EXPECT_OK(aclrtSetDeviceTaskAbortCallback("abort", on_abort, NULL));
    EXPECT(aclrtSetDeviceTaskAbortCallback("abort", on_abort, NULL), ACL_ERROR_RT_PARAM_INVALID, "already");
    EXPECT(aclrtDeviceTaskAbort(0, 36u * 60u * 1000u + 1u), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT(aclrtDeviceTaskAbort(7, 0), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");

    atomic_store(&ran, 0);
    queue_work(stream, 4);
    tu_sleep_ms(20);
    EXPECT_OK(aclrtDeviceTaskAbort(0, 10000));
    CHECK(atomic_load(&ran) == 100, "device abort: the queued tasks are dropped: %d", atomic_load(&ran));
    CHECK(abort_calls[0] == 1 && abort_calls[1] == 1 && abort_calls[2] == 0 && abort_calls[3] == 0,
          "PRE and POST once each for device 0: %d %d", abort_calls[0], abort_calls[1]);
    CHECK(abort_timeouts[0] > 0 && abort_timeouts[0] <= 10000 && abort_timeouts[1] <= abort_timeouts[0],
          "the time left is passed on: %u then %u", abort_timeouts[0], abort_timeouts[1]);
    EXPECT_OK(aclrtLaunchHostFunc(stream, count_task, NULL));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    CHECK(atomic_load(&ran) == 101, "the device takes work again: %d", atomic_load(&ran));

    /* a callback's failure fails the abort with its status */
    EXPECT_OK(aclrtSetDeviceTaskAbortCallback("abort", NULL, NULL));
    EXPECT_OK(aclrtSetDeviceTaskAbortCallback("abort", on_abort, (void *)&refuse));
    EXPECT(aclrtDeviceTaskAbort(0, 0), ACL_ERROR_RT_PARAM_INVALID, "task abort callback");
    EXPECT_OK(aclrtSetDeviceTaskAbortCallback("abort", NULL, NULL));
}

int main(void)
{
    test_registration_rules();
    test_init_and_finalize_order();
    test_init_with_file();
    test_failures();
    remove_init_callbacks();
    test_state_callbacks();

    if (tu_open_device() != 0)
        return 1;
    test_stream_abort(tu_stream);
    test_device_abort(tu_stream);
    tu_close_device();
    return tu_finish("test_runtime_state_callbacks");
}
