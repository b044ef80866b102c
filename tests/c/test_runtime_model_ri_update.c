/*
 * test_runtime_model_ri_update.c - task groups of a captured model and their updates.
 *
 * In the style of hicann/runtime's example/2_advanced_features/model_ri/1_model_update: a
 * capture holds a copy and a PReLU launch outside any group, then a task group of a copy
 * (host -> x) and a PReLU launch with weights A.  After some executions an update on another
 * stream gives a copy from another host buffer and a PReLU launch with weights B; each output
 * is checked against a PReLU computed here from the host data and the weights that apply.
 *   - the update is applied in the update stream's order: an execution queued on the model's
 *     stream before the update stream reached the swap (it waits for an event recorded after
 *     it, while a host function holds the update stream) runs the new tasks;
 *   - CANN's statuses: a group outside a capture (107029), a group ended without a begin or
 *     begun twice (107033), an update of an unknown handle (100000), an update with too few
 *     tasks (507000, nothing changes), a task of another kind (507009); aclmdlRIUpdate with
 *     nothing to apply succeeds.
 * The PReLU and its host reference are model_ri_prelu.h's.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "model_ri_prelu.h"

typedef struct fixture {
    tu_tensor x, wa, wb, out;
    float *host_a, *host_b; /* pinned inputs of the group's copy: before and after the update */
} fixture;

static const size_t BYTES = NUMEL * sizeof(float);

static fixture make_fixture(void)
{
    const int64_t shape[3] = {1, C, L}, weight_shape[1] = {C};
    fixture f;
    f.x = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    f.wa = tu_make_f32(WEIGHTS_A, C, weight_shape, 1, NULL);
    f.wb = tu_make_f32(WEIGHTS_B, C, weight_shape, 1, NULL);
    f.out = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    EXPECT_OK(aclrtMallocHost((void **)&f.host_a, BYTES));
    EXPECT_OK(aclrtMallocHost((void **)&f.host_b, BYTES));
    prelu_fill_input(f.host_a, 1);
    prelu_fill_input(f.host_b, 2);
    return f;
}

static void free_fixture(fixture *f)
{
    tu_free_tensor(&f->x);
    tu_free_tensor(&f->wa);
    tu_free_tensor(&f->wb);
    tu_free_tensor(&f->out);
    EXPECT_OK(aclrtFreeHost(f->host_a));
    EXPECT_OK(aclrtFreeHost(f->host_b));
}

static void read_out(const fixture *f, float *out)
{
    EXPECT_OK(aclrtMemcpy(out, BYTES, f->out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
}

/* Captures: a group of [copy host_a -> x, PReLU(x, A) -> out]. */
static aclmdlRI capture_group(fixture *f, aclrtTaskGrp *group)
{
    aclmdlRI model = NULL;
    EXPECT(aclmdlRICaptureTaskGrpBegin(tu_stream), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not capturing");
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT(aclmdlRICaptureTaskGrpEnd(tu_stream, group), ACL_ERROR_STREAM_TASK_GROUP_STATUS, "no task group");
    EXPECT_OK(aclmdlRICaptureTaskGrpBegin(tu_stream));
    EXPECT(aclmdlRICaptureTaskGrpBegin(tu_stream), ACL_ERROR_STREAM_TASK_GROUP_STATUS, "already open");
    EXPECT_OK(aclrtMemcpyAsync(f->x.dev, BYTES, f->host_a, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    EXPECT_OK(aclnnPrelu(NULL, 0, prelu_plan(&f->x, &f->wa, &f->out), tu_stream));
    EXPECT_OK(aclmdlRICaptureTaskGrpEnd(tu_stream, group));
    CHECK(*group != NULL, "aclmdlRICaptureTaskGrpEnd gave no handle");
    EXPECT(aclmdlRICaptureTaskUpdateBegin(tu_stream, *group), ACL_ERROR_STREAM_TASK_GROUP_STATUS, "captured");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    return model;
}

static void execute_and_check(aclmdlRI model, const fixture *f, const float *x, const float *weights,
                              const char *what)
{
    float out[NUMEL];
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    read_out(f, out);
    prelu_check(what, out, x, weights);
}

static void slow_host_func(void *user_data)
{
    (void)user_data;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

/* 1_model_update: the group's tasks are replaced, in the update stream's order. */
static void update_group(void)
{
    fixture f = make_fixture();
    aclrtTaskGrp group = NULL;
    aclmdlRI model = capture_group(&f, &group);
    for (int round = 0; round < 2; round++)
        execute_and_check(model, &f, f.host_a, WEIGHTS_A, "before the update");

    aclrtStream update_stream = NULL;
    aclrtEvent updated = NULL;
    EXPECT_OK(aclrtCreateStream(&update_stream));
    EXPECT_OK(aclrtCreateEvent(&updated));
    /* The update stream is held up, so the execution below is queued before the swap runs. */
    EXPECT_OK(aclrtLaunchHostFunc(update_stream, slow_host_func, NULL));
    EXPECT_OK(aclmdlRICaptureTaskUpdateBegin(update_stream, group));
    EXPECT(aclmdlRICaptureTaskUpdateBegin(update_stream, group), ACL_ERROR_STREAM_TASK_GROUP_STATUS,
           "being updated");
    EXPECT_OK(aclrtMemcpyAsync(f.x.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, update_stream));
    EXPECT_OK(aclnnPrelu(NULL, 0, prelu_plan(&f.x, &f.wb, &f.out), update_stream));
    EXPECT_OK(aclmdlRICaptureTaskUpdateEnd(update_stream));
    EXPECT_OK(aclrtRecordEvent(updated, update_stream));
    EXPECT_OK(aclrtStreamWaitEvent(tu_stream, updated));
    execute_and_check(model, &f, f.host_b, WEIGHTS_B, "queued before the swap ran");
    execute_and_check(model, &f, f.host_b, WEIGHTS_B, "after the update");

    /* The host buffer is read at each execution, as at capture. */
    prelu_fill_input(f.host_b, 3);
    execute_and_check(model, &f, f.host_b, WEIGHTS_B, "new host data");
    EXPECT_OK(aclmdlRIUpdate(model));
    EXPECT(aclmdlRIUpdate(NULL), ACL_ERROR_INVALID_PARAM, "modelRI");

    EXPECT_OK(aclrtSynchronizeStream(update_stream));
    EXPECT_OK(aclrtDestroyEvent(updated));
    EXPECT_OK(aclrtDestroyStream(update_stream));
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRICaptureTaskUpdateBegin(tu_stream, group), ACL_ERROR_INVALID_PARAM, "handle");
    free_fixture(&f);
}

/* Updates that do not match the group change nothing. */
static void mismatched_updates(void)
{
    fixture f = make_fixture();
    aclrtTaskGrp group = NULL;
    aclmdlRI model = capture_group(&f, &group);
    int bogus = 0;
    EXPECT(aclmdlRICaptureTaskUpdateBegin(tu_stream, &bogus), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT(aclmdlRICaptureTaskUpdateEnd(tu_stream), ACL_ERROR_STREAM_TASK_GROUP_STATUS, "updates no task group");

    /* Too few tasks. */
    aclrtStream update_stream = NULL;
    EXPECT_OK(aclrtCreateStream(&update_stream));
    EXPECT_OK(aclmdlRICaptureTaskUpdateBegin(update_stream, group));
    EXPECT_OK(aclrtMemcpyAsync(f.x.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, update_stream));
    EXPECT(aclmdlRICaptureTaskUpdateEnd(update_stream), ACL_ERROR_RT_INTERNAL_ERROR, "holds 2");
    EXPECT_OK(aclrtSynchronizeStream(update_stream));
    execute_and_check(model, &f, f.host_a, WEIGHTS_A, "after an update with too few tasks");

    /* A launch where the group has a copy is refused; the update then lacks a task. */
    aclOpExecutor *executor = prelu_plan(&f.x, &f.wb, &f.out);
    EXPECT_OK(aclmdlRICaptureTaskUpdateBegin(update_stream, group));
    CHECK(aclnnPrelu(NULL, 0, executor, update_stream) != 0, "a launch replaced the group's copy");
    EXPECT_OK(aclrtMemcpyAsync(f.x.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, update_stream));
    EXPECT(aclrtMemcpyAsync(f.x.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, update_stream),
           ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, "own kind");
    EXPECT(aclmdlRICaptureTaskUpdateEnd(update_stream), ACL_ERROR_RT_INTERNAL_ERROR, "gave 1");
    execute_and_check(model, &f, f.host_a, WEIGHTS_A, "after an update of the wrong kind");

    /* The stream is an ordinary stream again: its tasks run. */
    float out[NUMEL];
    EXPECT_OK(aclrtMemcpyAsync(f.out.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, update_stream));
    EXPECT_OK(aclrtSynchronizeStream(update_stream));
    read_out(&f, out);
    for (int i = 0; i < NUMEL; i++)
        CHECK(out[i] == f.host_b[i], "copy after the update: element %d = %g", i, (double)out[i]);

    /* A stream destroyed during an update drops it. */
    aclrtStream doomed = NULL;
    EXPECT_OK(aclrtCreateStream(&doomed));
    EXPECT_OK(aclmdlRICaptureTaskUpdateBegin(doomed, group));
    EXPECT_OK(aclrtMemcpyAsync(f.x.dev, BYTES, f.host_b, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, doomed));
    EXPECT_OK(aclrtDestroyStream(doomed));
    execute_and_check(model, &f, f.host_a, WEIGHTS_A, "after a dropped update");
    EXPECT_OK(aclmdlRICaptureTaskUpdateBegin(update_stream, group));
    EXPECT(aclmdlRICaptureTaskUpdateEnd(update_stream), ACL_ERROR_RT_INTERNAL_ERROR, "gave 0");

    EXPECT_OK(aclrtDestroyStream(update_stream));
    EXPECT_OK(aclmdlRIDestroy(model));
    free_fixture(&f);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    update_group();
    mismatched_updates();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_update");
}
