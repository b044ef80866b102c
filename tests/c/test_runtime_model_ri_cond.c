/*
 * test_runtime_model_ri_cond.c - conditional tasks of captured models.
 *
 * In the style of hicann/runtime's example/2_advanced_features/model_ri/3_cond_model, with PReLU
 * and copies instead of aclnnAdd; every expectation is computed here on the host:
 *   - IF with two branches (PReLU with weights A, PReLU with weights B): the value written
 *     before each execution chooses the branch; with one branch, 0 runs nothing;
 *   - ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT: each execution sets the value to the default
 *     first, so the sample's "true" run takes the else-branch, as its expected output shows;
 *   - WHILE: the body copies the next element of a device sequence into the condition and
 *     shifts the sequence; a host function counts the rounds, which a host loop over the same
 *     sequence predicts;
 *   - SWITCH with three branches, each copying its own constants: values 0..2 pick them, a
 *     larger one runs nothing;
 *   - statuses: the default product (Ascend910B) refuses conditions (207000) as CANN does off
 *     Ascend 950; reserved flags, wrong sizes, a reused handle, capturing a model that is not a
 *     branch (100000); executing a branch directly (207000); an event inside a branch fails the
 *     execution (507000 at the synchronize).
 */
#define _POSIX_C_SOURCE 200809L
#include "model_ri_prelu.h"

#include "aclnn/acl_meta.h"

static const size_t BYTES = NUMEL * sizeof(float);

typedef struct prelu_setup {
    tu_tensor x, wa, wb, out;
    float host_x[NUMEL];
} prelu_setup;

static prelu_setup g;
static aclrtStream g_branch_stream;

static void setup(void)
{
    const int64_t shape[3] = {1, C, L}, weight_shape[1] = {C};
    prelu_fill_input(g.host_x, 1);
    g.x = tu_make_f32(g.host_x, NUMEL, shape, 3, NULL);
    g.wa = tu_make_f32(WEIGHTS_A, C, weight_shape, 1, NULL);
    g.wb = tu_make_f32(WEIGHTS_B, C, weight_shape, 1, NULL);
    g.out = tu_make_f32(NULL, NUMEL, shape, 3, NULL);
    EXPECT_OK(aclrtCreateStream(&g_branch_stream));
}

static void teardown(void)
{
    tu_free_tensor(&g.x);
    tu_free_tensor(&g.wa);
    tu_free_tensor(&g.wb);
    tu_free_tensor(&g.out);
    EXPECT_OK(aclrtDestroyStream(g_branch_stream));
}

static void clear_out(float sentinel)
{
    float fill[NUMEL];
    for (int i = 0; i < NUMEL; i++)
        fill[i] = sentinel;
    EXPECT_OK(aclrtMemcpy(g.out.dev, BYTES, fill, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void check_out_prelu(const char *what, const float *weights)
{
    float out[NUMEL];
    EXPECT_OK(aclrtMemcpy(out, BYTES, g.out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    prelu_check(what, out, g.host_x, weights);
}

static void check_out_all(const char *what, float expected)
{
    float out[NUMEL];
    EXPECT_OK(aclrtMemcpy(out, BYTES, g.out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < NUMEL; i++)
        CHECK(out[i] == expected, "%s element %d: %g, expected %g", what, i, (double)out[i], (double)expected);
}

static void launch_prelu(const tu_tensor *w, aclrtStream stream)
{
    EXPECT_OK(aclnnPrelu(NULL, 0, prelu_plan(&g.x, w, &g.out), stream));
}

typedef void (*branch_fill)(uint32_t branch, aclrtStream stream, void *arg);

/* Captures on tu_stream a model of one conditional task; fill() records each branch's tasks. */
static aclmdlRI capture_cond(aclmdlRICondTaskType type, uint32_t size, aclmdlRICondHandleFlag flag,
                             uint32_t default_value, uint64_t **cond, branch_fill fill, void *arg)
{
    aclmdlRI model = NULL, branches[4] = {NULL};
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, NULL, &model));
    aclmdlRICondHandle handle = NULL;
    EXPECT_OK(aclmdlRICondHandleCreate(model, default_value, flag, &handle));
    EXPECT_OK(aclmdlRICondHandleGetCondPtr(handle, cond));
    aclmdlRICondTaskParams params = {handle, type, size, branches};
    EXPECT_OK(aclmdlRIAddCondTask(params, tu_stream, 0));
    EXPECT(aclmdlRIAddCondTask(params, tu_stream, 0), ACL_ERROR_INVALID_PARAM, "already has");
    for (uint32_t b = 0; b < size; b++) {
        CHECK(branches[b] != NULL, "branch %u was not made", b);
        EXPECT_OK(aclmdlRICaptureToModelRIBegin(g_branch_stream, branches[b], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
        fill(b, g_branch_stream, arg);
        aclmdlRI ended = NULL;
        EXPECT_OK(aclmdlRICaptureEnd(g_branch_stream, &ended));
        CHECK(ended == branches[b], "aclmdlRICaptureEnd returns the branch model");
    }
    EXPECT(aclmdlRICaptureToModelRIBegin(g_branch_stream, branches[0], ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
           ACL_ERROR_INVALID_PARAM, "captured once");
    EXPECT(aclmdlRIExecuteAsync(branches[0], g_branch_stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "branch");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    return model;
}

static void run_with_value(aclmdlRI model, uint64_t *cond, uint64_t value)
{
    EXPECT_OK(aclrtMemcpy(cond, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
}

static void prelu_branches(uint32_t branch, aclrtStream stream, void *arg)
{
    (void)arg;
    launch_prelu(branch == 0 ? &g.wa : &g.wb, stream);
}

static void cond_if(void)
{
    uint64_t *cond = NULL;
    aclmdlRI model = capture_cond(ACL_MODEL_RI_COND_TYPE_IF, 2, 0, 0, &cond, prelu_branches, NULL);
    uint64_t initial = 7;
    EXPECT_OK(aclrtMemcpy(&initial, sizeof initial, cond, sizeof initial, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(initial == 0, "a new condition holds 0, got %llu", (unsigned long long)initial);
    for (int round = 0; round < 2; round++) {
        clear_out(-99.0f);
        run_with_value(model, cond, 1);
        check_out_prelu("IF true", WEIGHTS_A);
        clear_out(-99.0f);
        run_with_value(model, cond, 0);
        check_out_prelu("IF false", WEIGHTS_B);
        clear_out(-99.0f);
        run_with_value(model, cond, 0x100000000ull); /* any bit set is true */
        check_out_prelu("IF true (high bits)", WEIGHTS_A);
    }
    EXPECT_OK(aclmdlRIDestroy(model));

    /* One branch: a false condition runs nothing. */
    model = capture_cond(ACL_MODEL_RI_COND_TYPE_IF, 1, 0, 0, &cond, prelu_branches, NULL);
    clear_out(-99.0f);
    run_with_value(model, cond, 0);
    check_out_all("IF without else", -99.0f);
    run_with_value(model, cond, 3);
    check_out_prelu("IF with one branch", WEIGHTS_A);
    EXPECT_OK(aclmdlRIDestroy(model));

    /* 3_cond_model: ASSIGN_DEFAULT with default 0 overrides the value written before executing. */
    model = capture_cond(ACL_MODEL_RI_COND_TYPE_IF, 2, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, 0, &cond,
                         prelu_branches, NULL);
    clear_out(-99.0f);
    run_with_value(model, cond, 1);
    check_out_prelu("ASSIGN_DEFAULT 0, value 1 written", WEIGHTS_B);
    EXPECT_OK(aclmdlRIDestroy(model));
    model = capture_cond(ACL_MODEL_RI_COND_TYPE_IF, 2, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, 5, &cond,
                         prelu_branches, NULL);
    run_with_value(model, cond, 0);
    check_out_prelu("ASSIGN_DEFAULT 5, value 0 written", WEIGHTS_A);
    EXPECT_OK(aclmdlRIDestroy(model));
}

/* WHILE: the body moves the sequence's first element into the condition and shifts the
 * sequence left (through tmp).  Elements sit 64 bytes apart: asynchronous copies need 64-byte
 * aligned addresses. */
#define SEQ 5
#define STRIDE 8 /* uint64 per element slot */
typedef struct while_body {
    uint64_t *cond, *seq, *tmp;
    int rounds;
} while_body;

static void count_round(void *user_data)
{
    ((while_body *)user_data)->rounds++;
}

static void while_fill(uint32_t branch, aclrtStream stream, void *arg)
{
    (void)branch;
    while_body *body = arg;
    const size_t word = sizeof(uint64_t), rest = (SEQ - 1) * STRIDE * sizeof(uint64_t);
    EXPECT_OK(aclrtLaunchHostFunc(stream, count_round, body));
    EXPECT_OK(aclrtMemcpyAsync(body->cond, word, body->seq, word, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    EXPECT_OK(aclrtMemcpyAsync(body->tmp, rest, body->seq + STRIDE, rest, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
    EXPECT_OK(aclrtMemcpyAsync(body->seq, rest, body->tmp, rest, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
}

/* How many rounds the loop makes, simulated on the host. */
static int expected_rounds(uint64_t start, const uint64_t *initial_seq)
{
    uint64_t cond = start, seq[SEQ];
    memcpy(seq, initial_seq, sizeof seq);
    int rounds = 0;
    while (cond != 0) {
        rounds++;
        cond = seq[0];
        memmove(seq, seq + 1, (SEQ - 1) * sizeof(uint64_t));
    }
    return rounds;
}

static void cond_while(void)
{
    while_body body = {NULL, NULL, NULL, 0};
    const size_t slots = SEQ * STRIDE * sizeof(uint64_t);
    EXPECT_OK(aclrtMalloc((void **)&body.seq, slots, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&body.tmp, slots, ACL_MEM_MALLOC_HUGE_FIRST));
    aclmdlRI model = capture_cond(ACL_MODEL_RI_COND_TYPE_WHILE, 1, 0, 0, &body.cond, while_fill, &body);
    static const uint64_t sequences[3][SEQ] = {{1, 1, 0, 0, 0}, {9, 8, 7, 6, 0}, {0, 4, 4, 4, 4}};
    static const uint64_t starts[3] = {1, 2, 0};
    for (int t = 0; t < 3; t++) {
        uint64_t spread[SEQ * STRIDE] = {0};
        for (int k = 0; k < SEQ; k++)
            spread[k * STRIDE] = sequences[t][k];
        EXPECT_OK(aclrtMemcpy(body.seq, slots, spread, slots, ACL_MEMCPY_HOST_TO_DEVICE));
        body.rounds = 0;
        run_with_value(model, body.cond, starts[t]);
        int expected = expected_rounds(starts[t], sequences[t]);
        CHECK(body.rounds == expected, "WHILE case %d: %d rounds, expected %d", t, body.rounds, expected);
    }
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclrtFree(body.seq));
    EXPECT_OK(aclrtFree(body.tmp));
}

static float *g_case_values[3]; /* pinned: asynchronous copies read them */

static void switch_fill(uint32_t branch, aclrtStream stream, void *arg)
{
    (void)arg;
    EXPECT_OK(aclrtMemcpyAsync(g.out.dev, BYTES, g_case_values[branch], BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream));
}

static void cond_switch(void)
{
    for (int b = 0; b < 3; b++) {
        EXPECT_OK(aclrtMallocHost((void **)&g_case_values[b], BYTES));
        for (int i = 0; i < NUMEL; i++)
            g_case_values[b][i] = (float)(b * 100 + i);
    }
    uint64_t *cond = NULL;
    aclmdlRI model = capture_cond(ACL_MODEL_RI_COND_TYPE_SWITCH, 3, 0, 0, &cond, switch_fill, NULL);
    static const uint64_t values[5] = {2, 0, 1, 3, 0xffffffffffffffffull};
    for (int t = 0; t < 5; t++) {
        clear_out(-7.0f);
        run_with_value(model, cond, values[t]);
        float out[NUMEL];
        EXPECT_OK(aclrtMemcpy(out, BYTES, g.out.dev, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < NUMEL; i++) {
            float expected = values[t] < 3 ? g_case_values[values[t]][i] : -7.0f;
            CHECK(out[i] == expected, "SWITCH value %llu element %d: %g, expected %g",
                  (unsigned long long)values[t], i, (double)out[i], (double)expected);
        }
    }
    EXPECT_OK(aclmdlRIDestroy(model));
    for (int b = 0; b < 3; b++)
        EXPECT_OK(aclrtFreeHost(g_case_values[b]));
}

static void event_fill(uint32_t branch, aclrtStream stream, void *arg)
{
    (void)branch;
    EXPECT_OK(aclrtRecordEvent((aclrtEvent)arg, stream));
}

static void misuse(void)
{
    aclmdlRI model = NULL, branches[3] = {NULL};
    aclmdlRICondHandle handle = NULL;
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, NULL, &model));
    EXPECT(aclmdlRICondHandleCreate(model, 0, (aclmdlRICondHandleFlag)2, &handle), ACL_ERROR_INVALID_PARAM, "flag");
    EXPECT_OK(aclmdlRICondHandleCreate(model, 0, 0, &handle));
    aclmdlRICondTaskParams params = {handle, ACL_MODEL_RI_COND_TYPE_IF, 3, branches};
    EXPECT(aclmdlRIAddCondTask(params, tu_stream, 0), ACL_ERROR_INVALID_PARAM, "size");
    params.type = ACL_MODEL_RI_COND_TYPE_WHILE;
    params.size = 2;
    EXPECT(aclmdlRIAddCondTask(params, tu_stream, 0), ACL_ERROR_INVALID_PARAM, "size");
    params.size = 1;
    EXPECT(aclmdlRIAddCondTask(params, tu_stream, 1), ACL_ERROR_INVALID_PARAM, "flags");
    EXPECT(aclmdlRIAddCondTask(params, g_branch_stream, 0), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not capturing");
    EXPECT(aclmdlRICaptureToModelRIBegin(g_branch_stream, model, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
           ACL_ERROR_INVALID_PARAM, "branch model");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    EXPECT(aclmdlRICondHandleCreate(model, 0, 0, &handle), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not being captured");
    EXPECT_OK(aclmdlRIDestroy(model));
    uint64_t *stale = NULL;
    EXPECT(aclmdlRICondHandleGetCondPtr(handle, &stale), ACL_ERROR_INVALID_PARAM, "handle");

    /* An event inside a branch cannot run inside the conditional task. */
    aclrtEvent event = NULL;
    EXPECT_OK(aclrtCreateEvent(&event));
    uint64_t *cond = NULL;
    model = capture_cond(ACL_MODEL_RI_COND_TYPE_IF, 1, 0, 0, &cond, event_fill, event);
    uint64_t one = 1;
    EXPECT_OK(aclrtMemcpy(cond, sizeof one, &one, sizeof one, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_INTERNAL_ERROR, "event record");
    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT_OK(aclrtDestroyEvent(event));
}

/* Off Ascend 950 CANN answers "feature not supported" once the parameters pass. */
static void other_products(void)
{
    aclmdlRI model = NULL;
    aclmdlRICondHandle handle = NULL;
    EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT_OK(aclmdlRICaptureGetInfo(tu_stream, NULL, &model));
    EXPECT(aclmdlRICondHandleCreate(model, 0, 0, &handle), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend 950");
    EXPECT(aclmdlRICondHandleCreate(model, 0, 0, NULL), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
    EXPECT_OK(aclmdlRIDestroy(model));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    other_products();
    CHECK(aclnnCpuSetThreadSocVersion("Ascend950") == 0, "selecting Ascend950");
    setup();
    cond_if();
    cond_while();
    cond_switch();
    misuse();
    teardown();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_cond");
}
