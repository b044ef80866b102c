/*
 * test_runtime_model_ri_task.c - the per-task calls of model runtime instances.
 *
 * A capture on stream A: a copy host -> x, PReLU(x, A) -> out, a record of ev1; stream B joins
 * by waiting for ev1, writes 7 to a device word (aclrtValueWrite) and records ev2; A waits for
 * ev2 and resets ev1.  Then, each expectation written here from that list:
 *   - aclmdlRIGetStreams answers [A, B] (107039 with a short array); aclmdlRIGetTasksByStream
 *     answers A's five tasks and B's three, with the kinds each call records (a copy DEFAULT, a
 *     launch KERNEL, events, a value write) and their sequence ids (the capture order);
 *   - aclmdlRITaskGetParams: the events and flags, the value task's address and value, a launch's
 *     empty kernel part, 107000 for a copy; aclmdlRIKernelTaskGetAttribute;
 *   - aclmdlRITaskSetParams (a new value, and an event reset turned into a value wait) and
 *     aclmdlRITaskDisable (the PReLU, later turned into a value write) apply at aclmdlRIUpdate
 *     only: each execution's output is checked against the PReLU of model_ri_prelu.h and the word's expected value;
 *   - CANN's refusals: KERNEL params (207000, libaclnn has no AI Core kernels), event params and a
 *     DEFAULT task (107000), changes while executing (107040), a built model's sequence ids and
 *     changes (207000), stale and null handles (107000), a destroyed stream leaves the list;
 *   - a captured value wait replayed after its recording stream was destroyed ends when the
 *     stream running it is destroyed by force.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>

#include "model_ri_prelu.h"

static const size_t BYTES = NUMEL * sizeof(float);

typedef struct scene {
    tu_tensor x, w, out;
    float *host_x;        /* pinned: the captured copy's source */
    uint64_t *word;       /* device word the value tasks write and wait on */
    uint64_t *word2;      /* the one the PReLU task writes once it is turned into a value write */
    aclrtStream b;        /* the joined stream */
    aclrtEvent ev1, ev2;
    aclmdlRI model;
} scene;

static uint64_t read_word(const scene *s)
{
    uint64_t value = 0;
    EXPECT_OK(aclrtMemcpy(&value, sizeof value, s->word, sizeof value, ACL_MEMCPY_DEVICE_TO_HOST));
    return value;
}

static void write_word(const scene *s, uint64_t value)
{
    EXPECT_OK(aclrtMemcpy(s->word, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void clear_out(const scene *s)
{
    float zeros[NUMEL] = {0};
    EXPECT_OK(aclrtMemcpy(s->out.dev, BYTES, zeros, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void capture(scene *s)
{
    const int64_t shape[3] = {1, C, L}, weight_shape[1] = {C};
    EXPECT_OK(aclrtMallocHost((void **)&s->host_x, BYTES));
    prelu_fill_input(s->host_x, 3);
    s->x = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    s->w = tu_make_f32(WEIGHTS_A, C, weight_shape, 1, NULL);
    s->out = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    EXPECT_OK(aclrtMalloc((void **)&s->word, sizeof *s->word, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&s->word2, sizeof *s->word2, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtCreateStream(&s->b));
    EXPECT_OK(aclrtCreateEvent(&s->ev1));
    EXPECT_OK(aclrtCreateEvent(&s->ev2));

    aclrtStream a = tu_stream;
    EXPECT_OK(aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtMemcpyAsync(s->x.dev, BYTES, s->host_x, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, a)); /* 0 */
    EXPECT_OK(aclnnPrelu(NULL, 0, prelu_plan(&s->x, &s->w, &s->out), a));                     /* 1 */
    EXPECT_OK(aclrtRecordEvent(s->ev1, a));                                                   /* 2 */
    EXPECT_OK(aclrtStreamWaitEvent(s->b, s->ev1));                                            /* 3, B */
    EXPECT_OK(aclrtValueWrite(s->word, 7, 0, s->b));                                          /* 4, B */
    EXPECT_OK(aclrtRecordEvent(s->ev2, s->b));                                                /* 5, B */
    EXPECT_OK(aclrtStreamWaitEvent(a, s->ev2));                                               /* 6 */
    EXPECT_OK(aclrtResetEvent(s->ev1, a));                                                    /* 7 */
    EXPECT_OK(aclmdlRICaptureEnd(a, &s->model));
}

/* The tasks `stream` recorded, through the two calls (count, then fill); *count of them. */
static void get_tasks(aclrtStream stream, aclmdlRITask *tasks, uint32_t capacity, uint32_t *count)
{
    EXPECT_OK(aclmdlRIGetTasksByStream(stream, NULL, count));
    CHECK(*count <= capacity, "%u tasks, room for %u", *count, capacity);
    uint32_t filled = capacity;
    EXPECT_OK(aclmdlRIGetTasksByStream(stream, tasks, &filled));
    CHECK(filled == *count, "filled %u of %u tasks", filled, *count);
    for (uint32_t i = *count; i < capacity; i++)
        CHECK(tasks[i] == NULL, "task slot %u past the end is %p", i, tasks[i]);
}

static void check_kinds(aclrtStream stream, const char *name, const aclmdlRITaskType *types, const uint32_t *seqs,
                        uint32_t expected, aclmdlRITask *tasks)
{
    uint32_t count = 0;
    get_tasks(stream, tasks, 8, &count);
    CHECK(count == expected, "stream %s: %u tasks, expected %u", name, count, expected);
    for (uint32_t i = 0; i < count && i < expected; i++) {
        aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
        uint32_t seq = 99;
        EXPECT_OK(aclmdlRITaskGetType(tasks[i], &type));
        EXPECT_OK(aclmdlRITaskGetSeqId(tasks[i], &seq));
        CHECK(type == types[i], "stream %s task %u: type %d, expected %d", name, i, (int)type, (int)types[i]);
        CHECK(seq == seqs[i], "stream %s task %u: seq %u, expected %u", name, i, seq, seqs[i]);
    }
}

static void queries(scene *s, aclmdlRITask *a_tasks, aclmdlRITask *b_tasks)
{
    uint32_t num = 0;
    aclrtStream streams[3] = {NULL, NULL, NULL};
    EXPECT_OK(aclmdlRIGetStreams(s->model, NULL, &num));
    CHECK(num == 2, "%u streams, expected 2", num);
    num = 3;
    EXPECT_OK(aclmdlRIGetStreams(s->model, streams, &num));
    CHECK(num == 2 && streams[0] == tu_stream && streams[1] == s->b && streams[2] == NULL,
          "streams %u: %p %p %p", num, streams[0], streams[1], streams[2]);
    num = 1;
    EXPECT(aclmdlRIGetStreams(s->model, streams, &num), ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, "numStreams");
    CHECK(num == 1 && streams[0] == tu_stream, "short array: %u, %p", num, streams[0]);
    EXPECT(aclmdlRIGetStreams(s->model, streams, NULL), ACL_ERROR_RT_PARAM_INVALID, "numStreams");
    EXPECT(aclmdlRIGetStreams(NULL, streams, &num), ACL_ERROR_INVALID_PARAM, "modelRI");

    const aclmdlRITaskType a_types[5] = {ACL_MODEL_RI_TASK_DEFAULT, ACL_MODEL_RI_TASK_KERNEL,
                                         ACL_MODEL_RI_TASK_EVENT_RECORD, ACL_MODEL_RI_TASK_EVENT_WAIT,
                                         ACL_MODEL_RI_TASK_EVENT_RESET};
    const aclmdlRITaskType b_types[3] = {ACL_MODEL_RI_TASK_EVENT_WAIT, ACL_MODEL_RI_TASK_VALUE_WRITE,
                                         ACL_MODEL_RI_TASK_EVENT_RECORD};
    const uint32_t a_seqs[5] = {0, 1, 2, 6, 7}, b_seqs[3] = {3, 4, 5};
    check_kinds(tu_stream, "A", a_types, a_seqs, 5, a_tasks);
    check_kinds(s->b, "B", b_types, b_seqs, 3, b_tasks);
    aclmdlRITask one = NULL;
    num = 1;
    EXPECT(aclmdlRIGetTasksByStream(tu_stream, &one, &num), ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, "numTasks");
    CHECK(num == 1 && one == a_tasks[0], "short task array: %u, %p", num, one);
    EXPECT(aclmdlRIGetTasksByStream(tu_stream, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID, "numTasks");
    EXPECT(aclmdlRITaskGetType(NULL, NULL), ACL_ERROR_RT_PARAM_INVALID, "type");
    aclmdlRITaskType type;
    EXPECT(aclmdlRITaskGetType((aclmdlRITask)(uintptr_t)0x1234, &type), ACL_ERROR_RT_PARAM_INVALID, "task");
    aclrtStream idle = NULL;
    EXPECT_OK(aclrtCreateStream(&idle));
    EXPECT(aclmdlRIGetTasksByStream(idle, NULL, &num), ACL_ERROR_RT_PARAM_INVALID, "recorded no task");
    EXPECT_OK(aclrtDestroyStream(idle));
}

static void params(scene *s, aclmdlRITask *a_tasks, aclmdlRITask *b_tasks)
{
    aclmdlRITaskParams p;
    EXPECT(aclmdlRITaskGetParams(a_tasks[0], &p), ACL_ERROR_RT_PARAM_INVALID, "ACL_MODEL_RI_TASK_DEFAULT");
    EXPECT_OK(aclmdlRITaskGetParams(a_tasks[1], &p));
    CHECK(p.type == ACL_MODEL_RI_TASK_KERNEL && p.kernelTaskParams.funcHandle == NULL &&
          p.kernelTaskParams.args == NULL && p.kernelTaskParams.argsSize == 0, "launch params");
    EXPECT_OK(aclmdlRITaskGetParams(a_tasks[2], &p));
    CHECK(p.type == ACL_MODEL_RI_TASK_EVENT_RECORD && p.eventRecordTaskParams.event == s->ev1,
          "record params: type %d event %p", (int)p.type, p.eventRecordTaskParams.event);
    EXPECT_OK(aclmdlRITaskGetParams(a_tasks[3], &p));
    CHECK(p.type == ACL_MODEL_RI_TASK_EVENT_WAIT && p.eventWaitTaskParams.event == s->ev2, "wait params");
    EXPECT_OK(aclmdlRITaskGetParams(b_tasks[1], &p));
    CHECK(p.type == ACL_MODEL_RI_TASK_VALUE_WRITE && p.valueWriteTaskParams.devAddr == s->word &&
          p.valueWriteTaskParams.value == 7, "value write params: %p %llu", p.valueWriteTaskParams.devAddr,
          (unsigned long long)p.valueWriteTaskParams.value);
    EXPECT(aclmdlRITaskGetParams(a_tasks[1], NULL), ACL_ERROR_RT_PARAM_INVALID, "params");

    aclrtLaunchKernelAttrValue value;
    memset(&value, 0xff, sizeof value);
    EXPECT_OK(aclmdlRIKernelTaskGetAttribute(a_tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, &value));
    CHECK(value.schemMode == 0, "schemMode %u", value.schemMode);
    EXPECT_OK(aclmdlRIKernelTaskGetAttribute(a_tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, &value));
    CHECK(value.isDataDump == 0, "isDataDump %u", value.isDataDump);
    EXPECT(aclmdlRIKernelTaskGetAttribute(a_tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE, &value),
           ACL_ERROR_RT_PARAM_INVALID, "attrId 3");
    EXPECT(aclmdlRIKernelTaskGetAttribute(a_tasks[2], ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, &value),
           ACL_ERROR_RT_PARAM_INVALID, "not an operator launch");
    EXPECT(aclmdlRIKernelTaskGetAttribute(a_tasks[1], ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, NULL),
           ACL_ERROR_INVALID_PARAM, "attrValue");
}

static void execute(const scene *s, uint64_t word_before)
{
    write_word(s, word_before);
    clear_out(s);
    EXPECT_OK(aclmdlRIExecuteAsync(s->model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
}

static void check_out(const scene *s, bool prelu_ran, const char *what)
{
    float out[NUMEL], zeros[NUMEL] = {0};
    EXPECT_OK(aclrtMemcpy(out, BYTES, s->out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    if (prelu_ran)
        prelu_check(what, out, s->host_x, WEIGHTS_A);
    else
        prelu_check(what, out, zeros, WEIGHTS_A); /* PReLU of zeros: untouched zeros */
}

static atomic_int g_release;

static void hold_stream(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_release))
        tu_sleep_us(100);
}

static void changes(scene *s, aclmdlRITask *a_tasks, aclmdlRITask *b_tasks)
{
    execute(s, 0);
    check_out(s, true, "first execution");
    CHECK(read_word(s) == 7, "word %llu after the first execution", (unsigned long long)read_word(s));

    aclmdlRITaskParams p;
    memset(&p, 0, sizeof p);
    p.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    p.valueWriteTaskParams = (aclmdlRIValueWriteTaskParams){s->word, 9};
    EXPECT_OK(aclmdlRITaskSetParams(b_tasks[1], &p));
    EXPECT_OK(aclmdlRITaskDisable(a_tasks[1]));
    aclmdlRITaskParams got;
    EXPECT_OK(aclmdlRITaskGetParams(b_tasks[1], &got));
    CHECK(got.valueWriteTaskParams.value == 9, "pending value %llu", (unsigned long long)got.valueWriteTaskParams.value);
    execute(s, 0);
    check_out(s, true, "before aclmdlRIUpdate");
    CHECK(read_word(s) == 7, "word %llu before aclmdlRIUpdate", (unsigned long long)read_word(s));
    EXPECT_OK(aclmdlRIUpdate(s->model));
    execute(s, 0);
    check_out(s, false, "PReLU disabled");
    CHECK(read_word(s) == 9, "word %llu after aclmdlRIUpdate", (unsigned long long)read_word(s));

    /* The reset of ev1 becomes a wait for word == 9, which the write before it satisfies. */
    p.type = ACL_MODEL_RI_TASK_VALUE_WAIT;
    p.valueWaitTaskParams = (aclmdlRIValueWaitTaskParams){s->word, 9, ACL_STREAM_WAIT_VALUE_EQ};
    EXPECT_OK(aclmdlRITaskSetParams(a_tasks[4], &p));
    EXPECT_OK(aclmdlRIUpdate(s->model));
    aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
    EXPECT_OK(aclmdlRITaskGetType(a_tasks[4], &type));
    CHECK(type == ACL_MODEL_RI_TASK_VALUE_WAIT, "converted task type %d", (int)type);
    EXPECT_OK(aclmdlRITaskGetParams(a_tasks[4], &got));
    CHECK(got.valueWaitTaskParams.flag == ACL_STREAM_WAIT_VALUE_EQ && got.valueWaitTaskParams.value == 9,
          "value wait params");
    execute(s, 0);
    CHECK(read_word(s) == 9, "word %llu with the value wait", (unsigned long long)read_word(s));

    /* Refusals. */
    EXPECT(aclmdlRITaskSetParams(a_tasks[0], &p), ACL_ERROR_RT_PARAM_INVALID, "ACL_MODEL_RI_TASK_DEFAULT");
    EXPECT(aclmdlRITaskDisable(a_tasks[0]), ACL_ERROR_RT_PARAM_INVALID, "ACL_MODEL_RI_TASK_DEFAULT");
    p.taskGrp = (aclrtTaskGrp)&p;
    EXPECT(aclmdlRITaskSetParams(b_tasks[1], &p), ACL_ERROR_RT_PARAM_INVALID, "taskGrp");
    memset(&p, 0, sizeof p);
    p.type = ACL_MODEL_RI_TASK_KERNEL;
    EXPECT(aclmdlRITaskSetParams(a_tasks[1], &p), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "funcHandle");
    EXPECT(aclmdlRITaskSetParams(a_tasks[2], &p), ACL_ERROR_RT_PARAM_INVALID, "operator launch");
    p.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    EXPECT(aclmdlRITaskSetParams(a_tasks[2], &p), ACL_ERROR_RT_PARAM_INVALID, "params->type");
    p.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    p.valueWriteTaskParams.devAddr = NULL;
    EXPECT(aclmdlRITaskSetParams(a_tasks[2], &p), ACL_ERROR_INVALID_PARAM, "devAddr");
    EXPECT(aclmdlRITaskSetParams(a_tasks[2], NULL), ACL_ERROR_RT_PARAM_INVALID, "params");

    /* No change while an execution is queued. */
    atomic_store(&g_release, 0);
    EXPECT_OK(aclrtLaunchHostFunc(tu_stream, hold_stream, NULL));
    EXPECT_OK(aclmdlRIExecuteAsync(s->model, tu_stream));
    EXPECT(aclmdlRITaskDisable(b_tasks[0]), ACL_ERROR_RT_MODEL_UPDATE_FAILED, "executing");
    atomic_store(&g_release, 1);
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));

    /* New parameters make the disabled PReLU run again, as a value write to word2. */
    memset(&p, 0, sizeof p);
    p.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    p.valueWriteTaskParams = (aclmdlRIValueWriteTaskParams){s->word2, 11};
    EXPECT_OK(aclmdlRITaskSetParams(a_tasks[1], &p));
    EXPECT_OK(aclmdlRIUpdate(s->model));
    EXPECT_OK(aclrtMemset(s->word2, sizeof *s->word2, 0, sizeof *s->word2));
    execute(s, 0);
    uint64_t second = 0;
    EXPECT_OK(aclrtMemcpy(&second, sizeof second, s->word2, sizeof second, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(second == 11, "the re-enabled task wrote %llu", (unsigned long long)second);
    check_out(s, false, "the PReLU turned into a value write");
}

static void built_model(void)
{
    aclmdlRI model = NULL;
    aclrtStream bound = NULL;
    uint64_t *word = NULL;
    EXPECT_OK(aclrtMalloc((void **)&word, sizeof *word, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtCreateStream(&bound));
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, bound, 0));
    uint32_t num = 9;
    EXPECT_OK(aclmdlRIGetTasksByStream(bound, NULL, &num)); /* bound, nothing recorded yet */
    CHECK(num == 0, "a freshly bound stream has %u tasks", num);
    EXPECT_OK(aclrtValueWrite(word, 5, 0, bound));
    EXPECT_OK(aclmdlRIEndTask(model, bound));
    EXPECT_OK(aclmdlRIBuildEnd(model, NULL));
    aclrtStream streams[1] = {NULL};
    num = 1;
    EXPECT_OK(aclmdlRIGetStreams(model, streams, &num));
    CHECK(num == 1 && streams[0] == bound, "built model streams: %u %p", num, streams[0]);
    aclmdlRITask tasks[2];
    get_tasks(bound, tasks, 2, &num);
    CHECK(num == 1, "built model: %u tasks", num);
    aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
    EXPECT_OK(aclmdlRITaskGetType(tasks[0], &type));
    CHECK(type == ACL_MODEL_RI_TASK_VALUE_WRITE, "built model task type %d", (int)type);
    uint32_t seq;
    EXPECT(aclmdlRITaskGetSeqId(tasks[0], &seq), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "captured models only");
    EXPECT(aclmdlRITaskDisable(tasks[0]), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "was built");
    EXPECT_OK(aclmdlRIUnbindStream(model, bound));
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRITaskGetType(tasks[0], &type), ACL_ERROR_RT_PARAM_INVALID, "live model");
    EXPECT_OK(aclrtDestroyStream(bound));
    EXPECT_OK(aclrtFree(word));
}

/* A captured value wait outlives the stream that recorded it: replayed on another stream, it
 * ends when a forced destroy aborts that stream (the wait watches the stream that runs it). */
static void wait_outlives_recorder(void)
{
    uint64_t *word = NULL;
    EXPECT_OK(aclrtMalloc((void **)&word, sizeof *word, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(word, sizeof *word, 0, sizeof *word));
    aclrtStream recorder = NULL, exec = NULL;
    aclmdlRI model = NULL;
    EXPECT_OK(aclrtCreateStream(&recorder));
    EXPECT_OK(aclrtCreateStream(&exec));
    EXPECT_OK(aclmdlRICaptureBegin(recorder, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, recorder));
    EXPECT_OK(aclmdlRICaptureEnd(recorder, &model));
    EXPECT_OK(aclrtDestroyStream(recorder));
    EXPECT_OK(aclrtSetOpWaitTimeout(20)); /* a safety net: the abort ends it long before */
    EXPECT_OK(aclmdlRIExecuteAsync(model, exec));
    tu_sleep_ms(20);
    double start = tu_now_ms();
    EXPECT_OK(aclrtDestroyStreamForce(exec));
    double took = tu_now_ms() - start;
    CHECK(took < 10000.0, "the forced destroy took %.0f ms: the replayed wait did not see the abort", took);
    EXPECT_OK(aclrtSetOpWaitTimeout(0));
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclrtFree(word));
}

static void release_scene(scene *s)
{
    EXPECT_OK(aclrtDestroyStream(s->b)); /* the model no longer lists it */
    uint32_t num = 0;
    EXPECT_OK(aclmdlRIGetStreams(s->model, NULL, &num));
    CHECK(num == 1, "%u streams after B was destroyed", num);
    EXPECT_OK(aclmdlRIDestroy(s->model));
    EXPECT_OK(aclrtDestroyEvent(s->ev1));
    EXPECT_OK(aclrtDestroyEvent(s->ev2));
    EXPECT_OK(aclrtFree(s->word));
    EXPECT_OK(aclrtFree(s->word2));
    EXPECT_OK(aclrtFreeHost(s->host_x));
    tu_free_tensor(&s->x);
    tu_free_tensor(&s->w);
    tu_free_tensor(&s->out);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    scene s;
    aclmdlRITask a_tasks[8], b_tasks[8];
    capture(&s);
    queries(&s, a_tasks, b_tasks);
    params(&s, a_tasks, b_tasks);
    changes(&s, a_tasks, b_tasks);
    release_scene(&s);
    built_model();
    wait_outlives_recorder();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_task");
}
