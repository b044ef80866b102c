/*
 * test_runtime_model_ri_label.c - labels and aclrtSwitchLabelByIndex in built models.
 *
 * A model built on one bound stream switches on a uint32 index in device memory to one of three
 * branches; each branch copies its own value into its own slot of a device array, then switches
 * (index 0 of a one-label list) to an end label, so exactly one slot changes per execution.  The
 * host expects the chosen slot: the index itself below maxValue, maxValue - 1 above it (CANN's
 * rule), and a task error for an index past the label list's end.  A second model loops: a host
 * function counts rounds and writes the next index into pinned memory that a copy moves to the
 * device, and the switch jumps back until the count reaches 3; a loop that never ends stops at
 * aclmdlRIAbort.  The refusals follow CANN's
 * runtime: a stream outside a model (107005), a label set twice or before it joined a list, or
 * put in two lists (507000), a capture (207000), NULL arguments (100000).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

enum { BRANCHES = 3, STRIDE = 16 }; /* slot b at element b * STRIDE: copies need 64-byte alignment */
static const size_t SLOTS_BYTES = BRANCHES * STRIDE * sizeof(int32_t);

typedef struct switch_model {
    aclmdlRI model;
    aclrtStream bound;
    aclrtLabel labels[BRANCHES], end;
    aclrtLabelList list, end_list;
    uint32_t *index_dev, *zero_dev; /* the switch index and the end switch's 0 */
    int32_t *values;                /* pinned: what branch b copies, at b * STRIDE */
    int32_t *slots_dev;             /* slot b at b * STRIDE */
} switch_model;

static void set_index(uint32_t *dev, uint32_t index)
{
    EXPECT_OK(aclrtMemcpy(dev, sizeof index, &index, sizeof index, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void make_labels(switch_model *m)
{
    for (int b = 0; b < BRANCHES; b++)
        EXPECT_OK(aclrtCreateLabel(&m->labels[b]));
    EXPECT_OK(aclrtCreateLabel(&m->end));
    EXPECT_OK(aclrtCreateLabelList(m->labels, BRANCHES, &m->list));
    EXPECT_OK(aclrtCreateLabelList(&m->end, 1, &m->end_list));
}

/* switch(index, max_value) ; label b: copy values[b] to slot b ; switch to end ... ; label end */
static void build_switch_model(switch_model *m, uint32_t max_value)
{
    EXPECT_OK(aclrtMalloc((void **)&m->index_dev, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&m->zero_dev, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&m->slots_dev, SLOTS_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost((void **)&m->values, SLOTS_BYTES));
    for (int b = 0; b < BRANCHES; b++)
        m->values[b * STRIDE] = 100 * (b + 1) + 7;
    set_index(m->zero_dev, 0);
    make_labels(m);
    EXPECT_OK(aclrtCreateStream(&m->bound));
    EXPECT_OK(aclmdlRIBuildBegin(&m->model, 0));
    EXPECT_OK(aclmdlRIBindStream(m->model, m->bound, 0));
    EXPECT_OK(aclrtSwitchLabelByIndex(m->index_dev, max_value, m->list, m->bound));
    for (int b = 0; b < BRANCHES; b++) {
        EXPECT_OK(aclrtSetLabel(m->labels[b], m->bound));
        EXPECT_OK(aclrtMemcpyAsync(m->slots_dev + b * STRIDE, sizeof(int32_t), m->values + b * STRIDE, sizeof(int32_t),
                                   ACL_MEMCPY_HOST_TO_DEVICE, m->bound));
        EXPECT_OK(aclrtSwitchLabelByIndex(m->zero_dev, 1, m->end_list, m->bound));
    }
    EXPECT_OK(aclrtSetLabel(m->end, m->bound));
    EXPECT_OK(aclmdlRIEndTask(m->model, m->bound));
    EXPECT_OK(aclmdlRIBuildEnd(m->model, NULL));
    EXPECT_OK(aclmdlRIUnbindStream(m->model, m->bound));
}

static void free_switch_model(switch_model *m)
{
    EXPECT_OK(aclmdlRIDestroy(m->model));
    EXPECT_OK(aclrtDestroyLabelList(m->list));
    EXPECT_OK(aclrtDestroyLabelList(m->end_list));
    for (int b = 0; b < BRANCHES; b++)
        EXPECT_OK(aclrtDestroyLabel(m->labels[b]));
    EXPECT_OK(aclrtDestroyLabel(m->end));
    EXPECT_OK(aclrtDestroyStream(m->bound));
    EXPECT_OK(aclrtFree(m->index_dev));
    EXPECT_OK(aclrtFree(m->zero_dev));
    EXPECT_OK(aclrtFree(m->slots_dev));
    EXPECT_OK(aclrtFreeHost(m->values));
}

/* Runs the model with `index` on fresh slots (slot b holds -(b + 1)); the slots it leaves in
 * `seen`; its status. */
static aclError run_with_index(const switch_model *m, uint32_t index, int32_t seen[BRANCHES])
{
    int32_t slots[BRANCHES * STRIDE] = {0};
    for (int b = 0; b < BRANCHES; b++)
        slots[b * STRIDE] = -(b + 1);
    EXPECT_OK(aclrtMemcpy(m->slots_dev, SLOTS_BYTES, slots, SLOTS_BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    set_index(m->index_dev, index);
    EXPECT_OK(aclmdlRIExecuteAsync(m->model, tu_stream));
    aclError status = aclrtSynchronizeStream(tu_stream);
    EXPECT_OK(aclrtMemcpy(slots, SLOTS_BYTES, m->slots_dev, SLOTS_BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int b = 0; b < BRANCHES; b++)
        seen[b] = slots[b * STRIDE];
    return status;
}

/* The slots after branch `chosen` ran alone: its value there, the fresh values elsewhere. */
static void expect_branch(const switch_model *m, uint32_t index, int chosen, const int32_t seen[BRANCHES])
{
    for (int b = 0; b < BRANCHES; b++) {
        int32_t expected = b == chosen ? m->values[b * STRIDE] : -(b + 1);
        CHECK(seen[b] == expected, "index %u: slot %d is %d, expected %d", index, b, seen[b], expected);
    }
}

static void switch_picks_one_branch(void)
{
    switch_model m = {0};
    build_switch_model(&m, BRANCHES);
    int32_t seen[BRANCHES];
    for (uint32_t index = 0; index < BRANCHES; index++) {
        EXPECT_OK(run_with_index(&m, index, seen));
        expect_branch(&m, index, (int)index, seen);
    }
    const uint32_t beyond[] = {BRANCHES, 7, UINT32_MAX}; /* >= maxValue: the last entry */
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; i++) {
        EXPECT_OK(run_with_index(&m, beyond[i], seen));
        expect_branch(&m, beyond[i], BRANCHES - 1, seen);
    }
    free_switch_model(&m);
}

static void index_past_the_list_fails(void)
{
    switch_model m = {0};
    build_switch_model(&m, BRANCHES + 2); /* maxValue larger than the list */
    int32_t seen[BRANCHES];
    EXPECT_OK(run_with_index(&m, 1, seen));
    expect_branch(&m, 1, 1, seen);
    CHECK(run_with_index(&m, BRANCHES, seen) == ACL_ERROR_RT_INTERNAL_ERROR, "index %u past a list of %d",
          BRANCHES, BRANCHES);
    expect_branch(&m, BRANCHES, -1, seen); /* nothing ran after the failed switch */
    (void)aclGetRecentErrMsg();
    EXPECT_OK(run_with_index(&m, 0, seen)); /* the next execution runs again */
    expect_branch(&m, 0, 0, seen);
    free_switch_model(&m);
}

/* ---- a loop: a backward jump ------------------------------------------------------------ */

typedef struct loop_state {
    int rounds;
    uint32_t *next_index; /* pinned: 0 (jump back to the top) until the third round, then 1 */
} loop_state;

static void count_round(void *user_data)
{
    loop_state *state = user_data;
    state->rounds++;
    *state->next_index = state->rounds < 3 ? 0 : 1;
}

/* aclmdlRIDebugJsonPrint names the loop model's label and switch tasks. */
static void expect_json_kinds(aclmdlRI model)
{
    const char *json = "model_ri_label_test.json";
    EXPECT_OK(aclmdlRIDebugJsonPrint(model, json, 0));
    FILE *file = fopen(json, "r");
    char text[2048] = {0};
    size_t length = file != NULL ? fread(text, 1, sizeof text - 1, file) : 0;
    if (file != NULL)
        fclose(file);
    remove(json);
    CHECK(length > 0 && strstr(text, "\"label\"") != NULL && strstr(text, "\"label switch\"") != NULL,
          "the JSON names the label and switch tasks: %s", text);
}

/* A built loop: label 0 (top), a host function, [a copy of the pinned next index to the
 * device], a switch by that index (0: back to the top, 1: on), label 1 (out). */
typedef struct {
    aclrtLabel labels[2];
    aclrtLabelList list;
    aclrtStream bound;
    aclmdlRI model;
} loop_model;

static void loop_build(loop_model *m, aclrtHostFunc round, void *arg, uint32_t *index_dev,
                       const uint32_t *next_index)
{
    EXPECT_OK(aclrtCreateLabel(&m->labels[0]));
    EXPECT_OK(aclrtCreateLabel(&m->labels[1]));
    EXPECT_OK(aclrtCreateLabelList(m->labels, 2, &m->list));
    m->bound = NULL;
    EXPECT_OK(aclrtCreateStream(&m->bound));
    m->model = NULL;
    EXPECT_OK(aclmdlRIBuildBegin(&m->model, 0));
    EXPECT_OK(aclmdlRIBindStream(m->model, m->bound, 0));
    EXPECT_OK(aclrtSetLabel(m->labels[0], m->bound)); /* top */
    EXPECT_OK(aclrtLaunchHostFunc(m->bound, round, arg));
    if (next_index != NULL)
        EXPECT_OK(aclrtMemcpyAsync(index_dev, sizeof(uint32_t), next_index, sizeof(uint32_t),
                                   ACL_MEMCPY_HOST_TO_DEVICE, m->bound));
    EXPECT_OK(aclrtSwitchLabelByIndex(index_dev, 2, m->list, m->bound));
    EXPECT_OK(aclrtSetLabel(m->labels[1], m->bound)); /* out */
    EXPECT_OK(aclmdlRIEndTask(m->model, m->bound));
    EXPECT_OK(aclmdlRIBuildEnd(m->model, NULL));
    EXPECT_OK(aclmdlRIUnbindStream(m->model, m->bound));
}

static void loop_destroy(loop_model *m)
{
    EXPECT_OK(aclmdlRIDestroy(m->model));
    EXPECT_OK(aclrtDestroyLabelList(m->list));
    EXPECT_OK(aclrtDestroyLabel(m->labels[0]));
    EXPECT_OK(aclrtDestroyLabel(m->labels[1]));
    EXPECT_OK(aclrtDestroyStream(m->bound));
}

static void switch_loops_back(void)
{
    loop_state state = {0, NULL};
    EXPECT_OK(aclrtMallocHost((void **)&state.next_index, sizeof(uint32_t)));
    uint32_t *index_dev = NULL;
    EXPECT_OK(aclrtMalloc((void **)&index_dev, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    loop_model loop;
    loop_build(&loop, count_round, &state, index_dev, state.next_index);

    for (int run = 0; run < 2; run++) {
        state.rounds = 0;
        EXPECT_OK(aclmdlRIExecuteAsync(loop.model, tu_stream));
        EXPECT_OK(aclrtSynchronizeStream(tu_stream));
        CHECK(state.rounds == 3, "execution %d: the loop ran %d rounds, expected 3", run, state.rounds);
    }
    expect_json_kinds(loop.model);
    loop_destroy(&loop);
    EXPECT_OK(aclrtFree(index_dev));
    EXPECT_OK(aclrtFreeHost(state.next_index));
}

/* ---- aclmdlRIAbort stops a loop that never ends ----------------------------------------- */

static void spin_round(void *user_data)
{
    tu_sleep_ms(10);
    (*(int *)user_data)++;
}

static void abort_stops_endless_loop(void)
{
    uint32_t *index_dev = NULL; /* stays 0: jump back to the top for ever */
    EXPECT_OK(aclrtMalloc((void **)&index_dev, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    set_index(index_dev, 0);
    int rounds = 0;
    loop_model loop;
    loop_build(&loop, spin_round, &rounds, index_dev, NULL);

    EXPECT_OK(aclmdlRIExecuteAsync(loop.model, tu_stream));
    tu_sleep_ms(60);
    EXPECT_OK(aclmdlRIAbort(loop.model));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    int after_abort = rounds;
    CHECK(after_abort >= 1, "the loop ran %d rounds before the abort", after_abort);
    tu_sleep_ms(30);
    CHECK(rounds == after_abort, "the loop went on after the abort: %d rounds, then %d", after_abort, rounds);

    loop_destroy(&loop);
    EXPECT_OK(aclrtFree(index_dev));
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void refusals(void)
{
    uint32_t *index_dev = NULL;
    EXPECT_OK(aclrtMalloc((void **)&index_dev, sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtLabel labels[2], lone = NULL;
    aclrtLabelList list = NULL, other = NULL;
    EXPECT_OK(aclrtCreateLabel(&labels[0]));
    EXPECT_OK(aclrtCreateLabel(&labels[1]));
    EXPECT_OK(aclrtCreateLabel(&lone));
    EXPECT(aclrtCreateLabel(NULL), ACL_ERROR_INVALID_PARAM, "label");
    EXPECT(aclrtCreateLabelList(labels, 0, &list), ACL_ERROR_RT_PARAM_INVALID, "num");
    EXPECT_OK(aclrtCreateLabelList(labels, 2, &list));
    EXPECT(aclrtCreateLabelList(&labels[1], 1, &other), ACL_ERROR_RT_INTERNAL_ERROR, "one list");

    /* outside a model */
    EXPECT(aclrtSetLabel(labels[0], tu_stream), ACL_ERROR_RT_STREAM_MODEL, "not bound");
    EXPECT(aclrtSwitchLabelByIndex(index_dev, 2, list, tu_stream), ACL_ERROR_RT_STREAM_MODEL, "not bound");
    EXPECT(aclrtSwitchLabelByIndex(NULL, 2, list, tu_stream), ACL_ERROR_INVALID_PARAM, "ptr");
    EXPECT(aclrtSwitchLabelByIndex(index_dev, 2, NULL, tu_stream), ACL_ERROR_INVALID_PARAM, "labelList");

    /* in a model being built */
    aclrtStream bound = NULL;
    EXPECT_OK(aclrtCreateStream(&bound));
    aclmdlRI model = NULL;
    EXPECT_OK(aclmdlRIBuildBegin(&model, 0));
    EXPECT_OK(aclmdlRIBindStream(model, bound, 0));
    EXPECT(aclrtSetLabel(lone, bound), ACL_ERROR_RT_INTERNAL_ERROR, "label list");
    EXPECT_OK(aclrtSetLabel(labels[0], bound));
    EXPECT(aclrtSetLabel(labels[0], bound), ACL_ERROR_RT_INTERNAL_ERROR, "set once");
    EXPECT_OK(aclmdlRIEndTask(model, bound));
    EXPECT_OK(aclmdlRIBuildEnd(model, NULL));
    EXPECT_OK(aclmdlRIUnbindStream(model, bound));
    EXPECT_OK(aclmdlRIDestroy(model));

    /* in a capture */
    EXPECT_OK(aclmdlRICaptureBegin(bound, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT(aclrtSetLabel(labels[1], bound), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "capture");
    EXPECT(aclrtSwitchLabelByIndex(index_dev, 2, list, bound), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "capture");
    EXPECT_OK(aclmdlRICaptureEnd(bound, &model));
    EXPECT_OK(aclmdlRIDestroy(model));

    EXPECT_OK(aclrtDestroyLabelList(list));
    EXPECT(aclrtDestroyLabelList(list), ACL_ERROR_INVALID_PARAM, "label list");
    EXPECT_OK(aclrtDestroyLabel(labels[0]));
    EXPECT_OK(aclrtDestroyLabel(labels[1]));
    EXPECT_OK(aclrtDestroyLabel(lone));
    EXPECT(aclrtDestroyLabel(lone), ACL_ERROR_INVALID_PARAM, "label");
    EXPECT_OK(aclrtDestroyStream(bound));
    EXPECT_OK(aclrtFree(index_dev));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    switch_picks_one_branch();
    index_past_the_list_fails();
    switch_loops_back();
    abort_stops_endless_loop();
    refusals();
    tu_close_device();
    return tu_finish("test_runtime_model_ri_label");
}
