/*
 * test_runtime_model_ri_abort.c - aclmdlRIAbort.
 *
 * A built model (aclmdlRIBuildBegin .. aclmdlRIBuildEnd) of a slow host function and a copy of
 * pinned host data into device memory is queued twice and aborted at once: the copies never
 * happen (the destination keeps the sentinel written here), the host function ran at most once
 * (the one that may have started), and an execution queued after the abort runs in full.  A
 * captured model is refused (207000), as CANN documents aclmdlRIAbort for ACL Graph.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

enum { COUNT = 16 };
static const size_t BYTES = COUNT * sizeof(int32_t);
static int g_calls;

static void slow_call(void *user_data)
{
    (void)user_data;
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    g_calls++;
}

static void check_device(const void *dev, const int32_t *expected, const char *what)
{
    int32_t seen[COUNT];
    EXPECT_OK(aclrtMemcpy(seen, BYTES, dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < COUNT; i++)
        CHECK(seen[i] == expected[i], "%s element %d: %d, expected %d", what, i, seen[i], expected[i]);
}

static void abort_built_model(void)
{
    int32_t *source = NULL, sentinel[COUNT];
    EXPECT_OK(aclrtMallocHost((void **)&source, BYTES));
    for (int i = 0; i < COUNT; i++) {
        source[i] = 3 * i - 7;
        sentinel[i] = -1000 - i;
    }
    void *dst = NULL;
    EXPECT_OK(aclrtMalloc(&dst, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dst, BYTES, sentinel, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtStream bound = NULL;
    EXPECT_OK(aclrtCreateStream(&bound));
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, bound, 0));
    EXPECT_OK(aclrtLaunchHostFunc(bound, slow_call, NULL));
    EXPECT_OK(aclrtMemcpyAsync(dst, BYTES, source, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, bound));
    EXPECT_OK(aclmdlRIEndTask(model, bound));
    EXPECT_OK(aclmdlRIBuildEnd(model, NULL));
    EXPECT_OK(aclmdlRIUnbindStream(model, bound));

    g_calls = 0;
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclmdlRIAbort(model)); /* within the first host function's 100 ms at the latest */
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(g_calls <= 1, "after the abort the host function ran %d times (at most the running one)", g_calls);
    check_device(dst, sentinel, "aborted executions");

    int before = g_calls;
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(g_calls == before + 1, "the execution after the abort ran the host function %d times", g_calls - before);
    check_device(dst, source, "execution after the abort");

    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRIAbort(model), ACL_ERROR_INVALID_PARAM, "modelRI");
    EXPECT_OK(aclrtDestroyStream(bound));
    EXPECT_OK(aclrtFree(dst));
    EXPECT_OK(aclrtFreeHost(source));
}

static void captured_model_is_refused(void)
{
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, slow_call, NULL));
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    EXPECT(aclmdlRIAbort(model), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "captured");
    EXPECT(aclmdlRIAbort(NULL), ACL_ERROR_INVALID_PARAM, "modelRI");
    EXPECT_OK(aclmdlRIDestroy(model));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    abort_built_model();
    captured_model_is_refused();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_abort");
}
