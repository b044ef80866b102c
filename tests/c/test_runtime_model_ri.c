/*
 * test_runtime_model_ri.c - model runtime instances: stream capture, building, replay.
 *
 * In the style of hicann/runtime's model_ri samples (example/2_advanced_features/model_ri):
 *   - 0_simple_model: a stream captured in GLOBAL mode records a host-to-device copy and two
 *     operator launches of normal (non-repeatable) executors; a synchronous copy is refused until
 *     the thread swaps to RELAXED with aclmdlRICaptureThreadExchangeMode; nothing runs at capture;
 *     each execution replays the copy (which reads the host buffer as it is then) and the
 *     launches, and the outputs match a reference computed here from the inputs of that round;
 *   - 4_model_sync_external: the three event scenarios (a model waits for a record outside it, a
 *     model's record is waited for outside, one model waits for another's record);
 *   - cross-stream capture: a stream joins by waiting for an event recorded in the capture and
 *     is joined back by a record the origin waits for (else aclmdlRICaptureEnd returns 107025);
 *   - a captured memset and host function replay at every execution, and a repeatable
 *     executor rebound after capture still writes where it wrote at capture;
 *   - build mode (aclmdlRIBuildBegin / BindStream / EndTask / BuildEnd / UnbindStream) with
 *     aclmdlRIExecute; names, ids, destroy callbacks, aclmdlRIDebugJsonPrint;
 *   - CANN's statuses for misuse (begin twice, end without begin, wrong mode, destroy or execute
 *     a model while it is captured).
 * PReLU's reference: out = x > 0 ? x : w[c] * x, with inputs whose products are exact in fp32.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "aclnnop/aclnn_prelu.h"

#define N 2
#define C 3
#define L 4
#define NUMEL (N * C * L)

static const float WEIGHTS[C] = {0.25f, 0.5f, 2.0f};

static void fill_input(float *x, int round)
{
    for (int i = 0; i < NUMEL; i++)
        x[i] = 0.5f * (float)((i * 7 + round * 5) % 17 - 8);
}

static float prelu_reference(float x, int index)
{
    return x > 0.0f ? x : WEIGHTS[(index / L) % C] * x;
}

static void check_prelu(const char *what, const float *out, const float *x, int round)
{
    for (int i = 0; i < NUMEL; i++)
        CHECK(out[i] == prelu_reference(x[i], i), "%s round %d element %d: %g, expected %g", what, round, i,
              (double)out[i], (double)prelu_reference(x[i], i));
}

typedef struct prelu_call {
    tu_tensor x, w, out;
    aclOpExecutor *executor;
    uint64_t workspace_size;
} prelu_call;

static prelu_call prelu_plan(void)
{
    const int64_t shape[3] = {N, C, L}, weight_shape[1] = {C};
    prelu_call call;
    call.x = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    call.w = tu_make_f32(WEIGHTS, C, weight_shape, 1, NULL);
    call.out = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    call.executor = NULL;
    call.workspace_size = 0;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(call.x.t, call.w.t, call.out.t, &call.workspace_size, &call.executor));
    CHECK(call.workspace_size == 0, "contiguous fp32 PReLU needs no workspace, got %llu",
          (unsigned long long)call.workspace_size);
    return call;
}

static void prelu_free(prelu_call *call)
{
    tu_free_tensor(&call->x);
    tu_free_tensor(&call->w);
    tu_free_tensor(&call->out);
}

/* 0_simple_model: capture a copy and a launch, replay with new host data each round. */
static void simple_model(void)
{
    prelu_call call = prelu_plan();
    const size_t bytes = NUMEL * sizeof(float);
    float *host_x = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&host_x, bytes));
    fill_input(host_x, 0);
    float zeros[NUMEL] = {0};
    EXPECT_OK(aclrtMemcpy(call.out.dev, bytes, zeros, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(call.x.dev, bytes, zeros, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    aclmdlRI seen = (aclmdlRI)&status;
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, &status, &seen));
    CHECK(status == ACL_MODEL_RI_CAPTURE_STATUS_NONE && seen == NULL, "status %d before capture", (int)status);

    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, &status, &seen));
    CHECK(status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && seen != NULL, "status %d during capture", (int)status);
    EXPECT_OK(aclrtMemcpyAsync(call.x.dev, bytes, host_x, bytes, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    /* A synchronous copy during a GLOBAL capture needs the thread in RELAXED mode. */
    EXPECT(aclrtMemcpy(call.out.dev, bytes, zeros, bytes, ACL_MEMCPY_HOST_TO_DEVICE),
           ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "aclrtMemcpy");
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    EXPECT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
    CHECK(mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, "a thread starts in GLOBAL mode, got %d", (int)mode);
    EXPECT_OK(aclrtMemcpy(call.out.dev, bytes, zeros, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
    CHECK(mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED, "the exchange returns the previous mode, got %d", (int)mode);
    EXPECT_OK(aclnnPrelu(NULL, call.workspace_size, call.executor, tu_stream));
    /* The model exists while it is captured, but can be neither destroyed nor run yet. */
    EXPECT(aclmdlRIDestroy(seen), ACL_ERROR_RT_MODEL_CAPTURED, "aclmdlRICaptureEnd");
    EXPECT(aclmdlRIExecuteAsync(seen, NULL), ACL_ERROR_RT_PARAM_INVALID, "being captured");
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    CHECK(model == seen, "aclmdlRICaptureEnd returns the model GetInfo showed");

    /* Recorded, not run. */
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    float out[NUMEL], x_device[NUMEL];
    EXPECT_OK(aclrtMemcpy(x_device, bytes, call.x.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_OK(aclrtMemcpy(out, bytes, call.out.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < NUMEL; i++)
        CHECK(x_device[i] == 0.0f && out[i] == 0.0f, "element %d changed at capture: x %g out %g", i,
              (double)x_device[i], (double)out[i]);
    /* The normal executor was consumed by the captured launch, as by any launch. */
    EXPECT(aclnnPrelu(NULL, 0, call.executor, tu_stream), ACLNN_ERR_PARAM_INVALID, "executor");

    for (int round = 1; round <= 4; round++) {
        fill_input(host_x, round);
        EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
        EXPECT_OK(aclrtSynchronizeStream(tu_stream));
        EXPECT_OK(aclrtMemcpy(out, bytes, call.out.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        check_prelu("simple model", out, host_x, round);
    }
    const char *json = "model_ri_test.json";
    EXPECT_OK(aclmdlRIDebugJsonPrint(model, json, 0));
    FILE *file = fopen(json, "r");
    char text[2048] = {0};
    size_t length = file != NULL ? fread(text, 1, sizeof text - 1, file) : 0;
    if (file != NULL)
        fclose(file);
    remove(json);
    CHECK(length > 0 && strstr(text, "\"seq\": 1") != NULL && strstr(text, "\"seq\": 2") == NULL,
          "the JSON lists the 2 recorded tasks: %s", text);
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRIDestroy(model), ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroy");
    EXPECT_OK(aclrtFreeHost(host_x));
    prelu_free(&call);
}

static int g_host_calls;

static void count_call(void *user_data)
{
    (*(int *)user_data)++;
}

static int g_destroyed;

static void on_destroy(void *user_data)
{
    g_destroyed += *(int *)user_data;
}

/* A memset, a host function and a repeatable executor rebound after capture. */
static void replayed_arguments(void)
{
    prelu_call call = prelu_plan();
    const size_t bytes = NUMEL * sizeof(float);
    EXPECT_OK(aclSetAclOpExecutorRepeatable(call.executor));
    float x[NUMEL], out[NUMEL], other_out[NUMEL];
    fill_input(x, 7);
    EXPECT_OK(aclrtMemcpy(call.x.dev, bytes, x, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    void *other = NULL;
    EXPECT_OK(aclrtMalloc(&other, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(other, bytes, 0, bytes));

    g_host_calls = 0;
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT_OK(aclrtMemsetAsync(call.out.dev, bytes, 0xff, bytes, tu_stream)); /* NaN pattern, overwritten */
    EXPECT_OK(aclnnPrelu(NULL, 0, call.executor, tu_stream));
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, count_call, &g_host_calls));
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    CHECK(g_host_calls == 0, "the host function ran at capture (%d)", g_host_calls);

    /* Rebinding the executor changes later launches, not the captured one. */
    EXPECT_OK(aclSetOutputTensorAddr(call.executor, 0, call.out.t, other));
    int rounds = 3;
    for (int round = 0; round < rounds; round++)
        EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(g_host_calls == rounds, "the host function ran %d times for %d executions", g_host_calls, rounds);
    EXPECT_OK(aclrtMemcpy(out, bytes, call.out.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_OK(aclrtMemcpy(other_out, bytes, other, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    check_prelu("rebound executor", out, x, 7);
    for (int i = 0; i < NUMEL; i++)
        CHECK(other_out[i] == 0.0f, "the rebound address was written at replay: element %d = %g", i,
              (double)other_out[i]);

    /* Another stream may not run the model while this one has it queued; afterwards it may. */
    aclrtStream second = NULL;
    EXPECT_OK(aclrtCreateStream(&second));
    EXPECT_OK(aclmdlRIExecuteAsync(model, second));
    EXPECT_OK(aclrtSynchronizeStream(second));
    CHECK(g_host_calls == rounds + 1, "after the execution on another stream: %d", g_host_calls);
    EXPECT_OK(aclrtDestroyStream(second));

    int weight = 5;
    g_destroyed = 0;
    EXPECT_OK(aclmdlRIDestroyRegisterCallback(model, on_destroy, &weight));
    EXPECT_OK(aclmdlRISetName(model, "prelu \"graph\""));
    char name[32];
    EXPECT_OK(aclmdlRIGetName(model, sizeof name, name));
    CHECK(strcmp(name, "prelu \"graph\"") == 0, "name %s", name);
    EXPECT(aclmdlRIGetName(model, 4, name), ACL_ERROR_INVALID_PARAM, "maxLen");
    uint32_t id = 0;
    EXPECT_OK(aclmdlRIGetId(model, &id));
    CHECK(id > 0, "model id %u", id);
    EXPECT_OK(aclmdlRIDestroy(model));
    CHECK(g_destroyed == weight, "destroy callback called %d times", g_destroyed / weight);
    EXPECT_OK(aclDestroyAclOpExecutor(call.executor));
    EXPECT_OK(aclrtFree(other));
    prelu_free(&call);
}

/* 4_model_sync_external's three scenarios, with int32 copies. */
static void copy_through_events(void)
{
    enum { COUNT = 8 };
    const size_t bytes = COUNT * sizeof(int32_t);
    int32_t source[COUNT] = {1, 2, 3, 4, 5, 6, 7, 8}, result[COUNT];
    aclrtStream graph = NULL, external = NULL;
    aclrtEvent event = NULL;
    void *src = NULL, *mid = NULL, *dst = NULL;
    EXPECT_OK(aclrtCreateStream(&graph));
    EXPECT_OK(aclrtCreateStream(&external));
    EXPECT_OK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC));
    EXPECT_OK(aclrtMalloc(&src, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&mid, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&dst, bytes, ACL_MEM_MALLOC_HUGE_FIRST));

    /* 1: the model waits for a record made outside it before its execution. */
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRICaptureBegin(graph, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtStreamWaitEventWithFlag(graph, event, 0, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_OK(aclrtMemcpyAsync(dst, bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph));
    EXPECT_OK(aclmdlRICaptureEnd(graph, &model));
    EXPECT_OK(aclrtMemcpy(src, bytes, source, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtRecordEvent(event, external));
    EXPECT_OK(aclmdlRIExecuteAsync(model, graph));
    EXPECT_OK(aclrtSynchronizeStream(graph));
    EXPECT_OK(aclrtMemcpy(result, bytes, dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(result, source, bytes) == 0, "scenario 1: the copy after the wait");
    EXPECT_OK(aclmdlRIDestroy(model));

    /* 2: a record inside the model is waited for outside it. */
    memset(result, 0, bytes);
    EXPECT_OK(aclrtMemset(dst, bytes, 0, bytes));
    EXPECT_OK(aclmdlRICaptureBegin(graph, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtMemcpyAsync(dst, bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph));
    EXPECT_OK(aclrtRecordEventWithFlag(event, graph, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_OK(aclmdlRICaptureEnd(graph, &model));
    EXPECT_OK(aclmdlRIExecuteAsync(model, graph));
    EXPECT_OK(aclrtStreamWaitEvent(external, event));
    int32_t *pinned = NULL; /* an asynchronous copy to the host needs aclrtMallocHost memory */
    EXPECT_OK(aclrtMallocHost((void **)&pinned, bytes));
    EXPECT_OK(aclrtMemcpyAsync(pinned, bytes, dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST, external));
    EXPECT_OK(aclrtSynchronizeStream(external));
    CHECK(memcmp(pinned, source, bytes) == 0, "scenario 2: the copy after the model's record");
    EXPECT_OK(aclrtFreeHost(pinned));
    EXPECT_OK(aclrtSynchronizeStream(graph));
    EXPECT_OK(aclmdlRIDestroy(model));

    /* 3: one model waits for the other's record. */
    aclrtStream graph2 = NULL;
    aclmdlRI model2 = NULL;
    EXPECT_OK(aclrtCreateStream(&graph2));
    EXPECT_OK(aclrtMemset(dst, bytes, 0, bytes));
    EXPECT_OK(aclmdlRICaptureBegin(graph, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtMemcpyAsync(mid, bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph));
    EXPECT_OK(aclrtRecordEventWithFlag(event, graph, ACL_EVENT_RECORD_EXTERNAL));
    EXPECT_OK(aclmdlRICaptureEnd(graph, &model));
    EXPECT_OK(aclmdlRICaptureBegin(graph2, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtStreamWaitEventWithFlag(graph2, event, 0, ACL_EVENT_WAIT_EXTERNAL));
    EXPECT_OK(aclrtMemcpyAsync(dst, bytes, mid, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, graph2));
    EXPECT_OK(aclmdlRICaptureEnd(graph2, &model2));
    EXPECT_OK(aclmdlRIExecuteAsync(model, graph));
    EXPECT_OK(aclmdlRIExecuteAsync(model2, graph2));
    EXPECT_OK(aclrtSynchronizeStream(graph2));
    EXPECT_OK(aclrtMemcpy(result, bytes, dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(result, source, bytes) == 0, "scenario 3: model 2 after model 1's record");
    EXPECT_OK(aclrtSynchronizeStream(graph));
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclmdlRIDestroy(model2));

    EXPECT_OK(aclrtDestroyEvent(event));
    EXPECT_OK(aclrtFree(src));
    EXPECT_OK(aclrtFree(mid));
    EXPECT_OK(aclrtFree(dst));
    EXPECT_OK(aclrtDestroyStream(graph));
    EXPECT_OK(aclrtDestroyStream(graph2));
    EXPECT_OK(aclrtDestroyStream(external));
}

/* aclmdlRIBuildBegin .. BuildEnd with a bound stream, run by aclmdlRIExecute. */
static void built_model(void)
{
    enum { COUNT = 16 };
    const size_t bytes = COUNT * sizeof(int32_t);
    int32_t source[COUNT], result[COUNT];
    for (int i = 0; i < COUNT; i++)
        source[i] = i * i - 3;
    void *src = NULL, *dst = NULL;
    EXPECT_OK(aclrtMalloc(&src, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc(&dst, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(dst, bytes, 0, bytes));
    aclrtStream bound = NULL;
    EXPECT_OK(aclrtCreateStream(&bound));

    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, bound, 0));
    EXPECT(aclmdlRICaptureBegin(bound, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED, "bound");
    EXPECT_OK(aclrtMemcpyAsync(dst, bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, bound));
    EXPECT_OK(aclmdlRIEndTask(model, bound));
    EXPECT(aclmdlRIEndTask(model, tu_stream), ACL_ERROR_RT_STREAM_MODEL, "not bound");
    EXPECT(aclmdlRIExecute(model, -1), ACL_ERROR_RT_PARAM_INVALID, "being built");
    EXPECT_OK(aclmdlRIBuildEnd(model, NULL));
    EXPECT_OK(aclmdlRIUnbindStream(model, bound));
    EXPECT(aclmdlRIUnbindStream(model, bound), ACL_ERROR_RT_STREAM_MODEL, "not bound");

    EXPECT_OK(aclrtMemcpy(src, bytes, source, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclmdlRIExecute(model, -1));
    EXPECT_OK(aclrtMemcpy(result, bytes, dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(result, source, bytes) == 0, "the built model's copy");
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclrtDestroyStream(bound));
    EXPECT_OK(aclrtFree(src));
    EXPECT_OK(aclrtFree(dst));
}

/* Cross-stream capture, as CANN's Context::CheckCaptureModelValidity wants it: a second stream
 * joins by waiting for an event recorded in the capture, and is joined back when its last task
 * is a record the origin waits for; one left unjoined makes aclmdlRICaptureEnd fail (107025). */
static void fork_join(void)
{
    prelu_call call = prelu_plan();
    const size_t bytes = NUMEL * sizeof(float);
    float *host_x = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&host_x, bytes));
    aclrtStream side = NULL;
    aclrtEvent fork = NULL, join = NULL;
    EXPECT_OK(aclrtCreateStream(&side));
    EXPECT_OK(aclrtCreateEvent(&fork));
    EXPECT_OK(aclrtCreateEvent(&join));

    aclmdlRI model = NULL, seen = NULL;
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_OK(aclrtMemcpyAsync(call.x.dev, bytes, host_x, bytes, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtRecordEvent(fork, tu_stream));
    EXPECT_OK(aclrtStreamWaitEvent(side, fork));
    EXPECT_OK(aclmdlRICaptureGetInfo(side, &status, &seen));
    CHECK(status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && seen != NULL, "the side stream joined: status %d",
          (int)status);
    EXPECT_OK(aclnnPrelu(NULL, 0, call.executor, side));
    EXPECT_OK(aclrtRecordEvent(join, side));
    EXPECT_OK(aclrtStreamWaitEvent(tu_stream, join));
    EXPECT(aclmdlRICaptureEnd(side, &model), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, "not begun");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    CHECK(model == seen, "one model for both streams");
    EXPECT_OK(aclmdlRICaptureGetInfo(side, &status, NULL));
    CHECK(status == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "the side stream left the capture: status %d", (int)status);

    float out[NUMEL];
    for (int round = 1; round <= 3; round++) {
        fill_input(host_x, 10 + round);
        EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
        EXPECT_OK(aclrtSynchronizeStream(tu_stream));
        EXPECT_OK(aclrtMemcpy(out, bytes, call.out.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        check_prelu("fork-join model", out, host_x, 10 + round);
    }
    EXPECT_OK(aclmdlRIDestroy(model));

    /* Left unjoined: no model, and both streams run their tasks again. */
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_OK(aclrtRecordEvent(fork, tu_stream));
    EXPECT_OK(aclrtStreamWaitEvent(side, fork));
    EXPECT_OK(aclrtMemsetAsync(call.out.dev, bytes, 0, bytes, side));
    model = (aclmdlRI)&status;
    EXPECT(aclmdlRICaptureEnd(tu_stream, &model), ACL_ERROR_RT_STREAM_UNJOINED, "joined back");
    CHECK(model == NULL, "no model for an unjoined capture");
    EXPECT_OK(aclrtMemsetAsync(call.out.dev, bytes, 0, bytes, side));
    EXPECT_OK(aclrtSynchronizeStream(side));
    EXPECT_OK(aclrtMemcpy(out, bytes, call.out.dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < NUMEL; i++)
        CHECK(out[i] == 0.0f, "the side stream runs its memset after the capture: element %d = %g", i,
              (double)out[i]);

    EXPECT_OK(aclrtDestroyEvent(fork));
    EXPECT_OK(aclrtDestroyEvent(join));
    EXPECT_OK(aclrtDestroyStream(side));
    EXPECT_OK(aclrtFreeHost(host_x));
    prelu_free(&call);
}

static void misuse(void)
{
    aclmdlRI model = NULL;
    EXPECT(aclmdlRICaptureEnd(tu_stream, &model), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "aclmdlRICaptureEnd");
    EXPECT(aclmdlRICaptureBegin(tu_stream, (aclmdlRICaptureMode)7), ACL_ERROR_INVALID_PARAM, "mode");
    /* As CANN's acl layer: the stream is required (the default stream is not captured), and
     * GetInfo needs at least one of its outputs. */
    EXPECT(aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclmdlRICaptureEnd(NULL, &model), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclmdlRICaptureGetInfo(tu_stream, NULL, NULL), ACL_ERROR_INVALID_PARAM, "both");
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, &status, NULL));
    CHECK(status == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "status %d without a capture", (int)status);
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED,
           "aclmdlRICaptureBegin");
    aclmdlRICaptureMode mode = (aclmdlRICaptureMode)9;
    EXPECT(aclmdlRICaptureThreadExchangeMode(&mode), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT(aclmdlRICaptureThreadExchangeMode(NULL), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model)); /* an empty model is a model */
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRIExecuteAsync(model, tu_stream), ACL_ERROR_INVALID_PARAM, "aclmdlRIExecuteAsync");
    EXPECT(aclmdlRIDestroy(NULL), ACL_ERROR_INVALID_PARAM, "modelRI");
    /* Once the capture is over, synchronous copies need no exchange. */
    int32_t value = 3, back = 0;
    void *device = NULL;
    EXPECT_OK(aclrtMalloc(&device, sizeof value, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(device, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(&back, sizeof back, device, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(back == value, "copy after capture: %d", back);
    EXPECT_OK(aclrtFree(device));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    simple_model();
    replayed_arguments();
    copy_through_events();
    fork_join();
    built_model();
    misuse();
    tu_close_device();
    return tu_finish("test_runtime_model_ri");
}
