/*
 * test_runtime_model_ri_active.c - stream activation and switching in built models
 * (aclrtActiveStream, aclrtSwitchStream).
 *
 * In the style of hicann/runtime's example/2_advanced_features/model_ri/2_model_switch, with
 * PReLU instead of aclnnAdd.  Five bound streams: s1 starts with the model (HEAD); s2, s3, s4
 * and `end` wait for an activation (ACL_MODEL_STREAM_FLAG_DEFAULT, 0x7FFFFFFF).
 *   s1:  x1 <- host; out1 = PReLU(x1, A); num <- target (a device copy);
 *        switch (num == 1) -> s3; switch (num == 2) -> s4; tail <- 99
 *   s2:  x2 <- host; out2 = PReLU(x2, B); activate end
 *   s3:  x3 <- host; out3 = PReLU(x3, A); activate end
 *   s4:  activate s2
 *   end: done <- 7
 * Each execution's expectation, written here from that list: target 1 runs s1 up to its first
 * switch, then s3 and end; target 2 runs s1 to its second switch, s4, s2 and end; target 3 runs
 * all of s1 (tail 99) and nothing else.  A second model switches on int64 values with
 * ACL_RT_GREATER.  Then CANN's refusals: NULL arguments and a falseStream (100000), a condition
 * or data type out of range (107000), streams outside the model (107005), a capture (207000),
 * and Atlas A3 (207000).
 */
#define _POSIX_C_SOURCE 200809L
#include "model_ri_prelu.h"

#include "aclnn/acl_meta.h"

#define LATE 0x7FFFFFFFu /* CANN's ACL_MODEL_STREAM_FLAG_DEFAULT */

static const size_t BYTES = NUMEL * sizeof(float);

typedef struct branch {
    tu_tensor x, out;
    float *host; /* pinned input */
} branch;

typedef struct switch_model {
    aclmdlRI model;
    aclrtStream s1, s2, s3, s4, end;
    branch b1, b2, b3;
    tu_tensor wa, wb;
    int32_t *num, *target, *one, *two; /* device int32 values */
    uint32_t *tail, *done, *tail_value, *done_value;
} switch_model;

static void *device_value(uint32_t value)
{
    void *dev = NULL;
    EXPECT_OK(aclrtMalloc(&dev, sizeof value, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dev, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE));
    return dev;
}

static uint32_t read_value(const void *dev)
{
    uint32_t value = 0;
    EXPECT_OK(aclrtMemcpy(&value, sizeof value, dev, sizeof value, ACL_MEMCPY_DEVICE_TO_HOST));
    return value;
}

static void make_branch(branch *b, int seed)
{
    const int64_t shape[3] = {1, C, L};
    EXPECT_OK(aclrtMallocHost((void **)&b->host, BYTES));
    prelu_fill_input(b->host, seed);
    b->x = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    b->out = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
}

static void free_branch(branch *b)
{
    tu_free_tensor(&b->x);
    tu_free_tensor(&b->out);
    EXPECT_OK(aclrtFreeHost(b->host));
}

/* Records on `stream`: x <- host, out = PReLU(x, w). */
static void record_prelu(const branch *b, const tu_tensor *w, aclrtStream stream)
{
    EXPECT_OK(aclrtMemcpyAsync(b->x.dev, BYTES, b->host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    EXPECT_OK(aclnnPrelu(NULL, 0, prelu_plan(&b->x, w, &b->out), stream));
}

static void build(switch_model *m)
{
    const int64_t weight_shape[1] = {C};
    m->wa = tu_make_f32(WEIGHTS_A, C, weight_shape, 1, NULL);
    m->wb = tu_make_f32(WEIGHTS_B, C, weight_shape, 1, NULL);
    make_branch(&m->b1, 1);
    make_branch(&m->b2, 2);
    make_branch(&m->b3, 3);
    m->num = device_value(0);
    m->target = device_value(1);
    m->one = device_value(1);
    m->two = device_value(2);
    m->tail = device_value(0);
    m->done = device_value(0);
    m->tail_value = device_value(99);
    m->done_value = device_value(7);
    aclrtStream *streams[5] = {&m->s1, &m->s2, &m->s3, &m->s4, &m->end};
    EXPECT_OK(aclmdlRIBuildBegin(&m->model, 0));
    for (int i = 0; i < 5; i++) {
        EXPECT_OK(aclrtCreateStreamWithConfig(streams[i], 0, ACL_STREAM_PERSISTENT));
        EXPECT_OK(aclmdlRIBindStream(m->model, *streams[i], i == 0 ? 0 : LATE));
    }
    record_prelu(&m->b1, &m->wa, m->s1);
    EXPECT_OK(aclrtMemcpyAsync(m->num, 4, m->target, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, m->s1));
    EXPECT_OK(aclrtSwitchStream(m->num, ACL_RT_EQUAL, m->one, ACL_RT_SWITCH_INT32, m->s3, NULL, m->s1));
    EXPECT_OK(aclrtSwitchStream(m->num, ACL_RT_EQUAL, m->two, ACL_RT_SWITCH_INT32, m->s4, NULL, m->s1));
    EXPECT_OK(aclrtMemcpyAsync(m->tail, 4, m->tail_value, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, m->s1));
    record_prelu(&m->b2, &m->wb, m->s2);
    EXPECT_OK(aclrtActiveStream(m->end, m->s2));
    record_prelu(&m->b3, &m->wa, m->s3);
    EXPECT_OK(aclrtActiveStream(m->end, m->s3));
    EXPECT_OK(aclrtActiveStream(m->s2, m->s4));
    EXPECT_OK(aclrtMemcpyAsync(m->done, 4, m->done_value, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, m->end));
    EXPECT_OK(aclmdlRIEndTask(m->model, m->end));
    EXPECT_OK(aclmdlRIBuildEnd(m->model, NULL));
}

static void clear_outputs(const switch_model *m)
{
    float zeros[NUMEL] = {0};
    const branch *branches[3] = {&m->b1, &m->b2, &m->b3};
    for (int i = 0; i < 3; i++)
        EXPECT_OK(aclrtMemcpy(branches[i]->out.dev, BYTES, zeros, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    uint32_t zero = 0;
    EXPECT_OK(aclrtMemcpy(m->tail, 4, &zero, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(m->done, 4, &zero, 4, ACL_MEMCPY_HOST_TO_DEVICE));
}

/* Checks a branch's output: the PReLU of its input with w, or untouched zeros (w NULL). */
static void check_branch(const branch *b, const float *w, const char *what)
{
    float out[NUMEL], zeros[NUMEL] = {0};
    EXPECT_OK(aclrtMemcpy(out, BYTES, b->out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    if (w != NULL)
        prelu_check(what, out, b->host, w);
    else
        prelu_check(what, out, zeros, WEIGHTS_A); /* PReLU of zeros: zeros */
}

static void execute_target(switch_model *m, uint32_t target, aclrtStream exec)
{
    EXPECT_OK(aclrtMemcpy(m->target, 4, &target, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    clear_outputs(m);
    EXPECT_OK(aclmdlRIExecuteAsync(m->model, exec));
    EXPECT_OK(aclrtSynchronizeStream(exec));
    char what[64];
    snprintf(what, sizeof what, "target %u: out1", target);
    check_branch(&m->b1, WEIGHTS_A, what);
    snprintf(what, sizeof what, "target %u: out2", target);
    check_branch(&m->b2, target == 2 ? WEIGHTS_B : NULL, what);
    snprintf(what, sizeof what, "target %u: out3", target);
    check_branch(&m->b3, target == 1 ? WEIGHTS_A : NULL, what);
    CHECK(read_value(m->tail) == (target > 2 ? 99u : 0u), "target %u: tail %u", target, read_value(m->tail));
    CHECK(read_value(m->done) == (target <= 2 ? 7u : 0u), "target %u: done %u", target, read_value(m->done));
}

static void release(switch_model *m)
{
    aclrtStream streams[5] = {m->s1, m->s2, m->s3, m->s4, m->end};
    for (int i = 0; i < 5; i++)
        EXPECT_OK(aclmdlRIUnbindStream(m->model, streams[i]));
    EXPECT_OK(aclmdlRIDestroy(m->model));
    for (int i = 0; i < 5; i++)
        EXPECT_OK(aclrtDestroyStream(streams[i]));
    void *values[8] = {m->num, m->target, m->one, m->two, m->tail, m->done, m->tail_value, m->done_value};
    for (int i = 0; i < 8; i++)
        EXPECT_OK(aclrtFree(values[i]));
    free_branch(&m->b1);
    free_branch(&m->b2);
    free_branch(&m->b3);
    tu_free_tensor(&m->wa);
    tu_free_tensor(&m->wb);
}

static void switch_sample(void)
{
    switch_model m;
    build(&m);
    aclrtStream exec = NULL;
    EXPECT_OK(aclrtCreateStream(&exec));
    execute_target(&m, 1, exec);
    execute_target(&m, 2, exec);
    execute_target(&m, 3, exec);
    execute_target(&m, 1, exec);
    EXPECT_OK(aclrtDestroyStream(exec));
    release(&m);
}

/* int64 values with ACL_RT_GREATER: the head stream switches away only when left > right. */
static void int64_switch(void)
{
    int64_t *left = NULL, *right = NULL;
    uint32_t *mark = NULL, *mark_value = device_value(5), *tail_value = device_value(9);
    EXPECT_OK(aclrtMalloc((void **)&left, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&right, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    mark = device_value(0);
    const int64_t r = INT64_C(1) << 40;
    EXPECT_OK(aclrtMemcpy(right, 8, &r, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    aclmdlRI model = NULL;
    aclrtStream head = NULL, taken = NULL;
    EXPECT_OK(aclrtCreateStream(&head));
    EXPECT_OK(aclrtCreateStream(&taken));
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, head, 0));
    EXPECT_OK(aclmdlRIBindStream(model, taken, LATE));
    EXPECT_OK(aclrtSwitchStream(left, ACL_RT_GREATER, right, ACL_RT_SWITCH_INT64, taken, NULL, head));
    EXPECT_OK(aclrtMemcpyAsync(mark, 4, tail_value, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, head));
    EXPECT_OK(aclrtMemcpyAsync(mark, 4, mark_value, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, taken));
    EXPECT_OK(aclmdlRIBuildEnd(model, NULL));
    const int64_t lefts[3] = {r + 1, r, (INT64_C(1) << 40) * 2};
    const uint32_t expected[3] = {5, 9, 5}; /* taken: 5; the head's tail: 9 */
    for (int i = 0; i < 3; i++) {
        EXPECT_OK(aclrtMemcpy(left, 8, &lefts[i], 8, ACL_MEMCPY_HOST_TO_DEVICE));
        EXPECT_OK(aclmdlRIExecute(model, -1));
        CHECK(read_value(mark) == expected[i], "int64 left %lld: mark %u, expected %u", (long long)lefts[i],
              read_value(mark), expected[i]);
    }
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclrtDestroyStream(head));
    EXPECT_OK(aclrtDestroyStream(taken));
    void *values[5] = {left, right, mark, mark_value, tail_value};
    for (int i = 0; i < 5; i++)
        EXPECT_OK(aclrtFree(values[i]));
}

static void refusals(void)
{
    int32_t *value = device_value(0);
    aclmdlRI model = NULL, other = NULL;
    aclrtStream bound = NULL, foreign = NULL;
    EXPECT_OK(aclrtCreateStream(&bound));
    EXPECT_OK(aclrtCreateStream(&foreign));
    EXPECT(aclrtActiveStream(NULL, bound), ACL_ERROR_INVALID_PARAM, "activeStream");
    EXPECT(aclrtActiveStream(bound, NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclrtActiveStream(foreign, bound), ACL_ERROR_RT_STREAM_MODEL, "not bound");
    EXPECT(aclrtSwitchStream(NULL, ACL_RT_EQUAL, value, ACL_RT_SWITCH_INT32, foreign, NULL, bound),
           ACL_ERROR_INVALID_PARAM, "leftValue");
    EXPECT(aclrtSwitchStream(value, ACL_RT_EQUAL, value, ACL_RT_SWITCH_INT32, foreign, foreign, bound),
           ACL_ERROR_INVALID_PARAM, "falseStream");
    EXPECT(aclrtSwitchStream(value, (aclrtCondition)6, value, ACL_RT_SWITCH_INT32, foreign, NULL, bound),
           ACL_ERROR_RT_PARAM_INVALID, "cond");
    EXPECT(aclrtSwitchStream(value, ACL_RT_EQUAL, value, (aclrtCompareDataType)2, foreign, NULL, bound),
           ACL_ERROR_RT_PARAM_INVALID, "dataType");
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, bound, 0));
    EXPECT(aclrtActiveStream(foreign, bound), ACL_ERROR_RT_STREAM_MODEL, "activeStream");
    EXPECT_OK(aclmdlRIBuildBegin(&other, 0));
    EXPECT_OK(aclmdlRIBindStream(other, foreign, 0));
    EXPECT(aclrtSwitchStream(value, ACL_RT_EQUAL, value, ACL_RT_SWITCH_INT32, foreign, NULL, bound),
           ACL_ERROR_RT_STREAM_MODEL, "trueStream");
    EXPECT_OK(aclmdlRIDestroy(other));
    EXPECT_OK(aclmdlRIDestroy(model));

    EXPECT_OK(aclmdlRICaptureBegin(bound, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT(aclrtActiveStream(bound, bound), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "capture");
    EXPECT_OK(aclmdlRICaptureEnd(bound, &model));
    EXPECT_OK(aclmdlRIDestroy(model));

    CHECK(aclnnCpuSetThreadSocVersion("Ascend910_93") == 0, "selecting Ascend910_93");
    EXPECT(aclrtActiveStream(bound, bound), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Atlas A3");
    CHECK(aclnnCpuSetThreadSocVersion(NULL) == 0, "back to the default product");
    EXPECT_OK(aclrtDestroyStream(bound));
    EXPECT_OK(aclrtDestroyStream(foreign));
    EXPECT_OK(aclrtFree(value));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    switch_sample();
    int64_switch();
    refusals();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_active");
}
