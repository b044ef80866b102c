/*
 * test_runtime_prof.c - profiling (acl_prof.h): the statuses of misused aclprof calls, then a
 * collection of operator launches, a copy, a memset and an event on two streams with msproftx
 * marks and ranges and a training step, written as trace.json and op_summary.csv.
 *
 *   test_runtime_prof            the statuses and a collection into a fresh /tmp directory,
 *                                whose files must exist and name the launched operators
 *   test_runtime_prof DIR        the same into DIR, which it leaves for tests/test_runtime_prof.py
 *                                to parse (the auto-initialized aclprofStart writes into DIR too)
 *   test_runtime_prof --plain    no aclprof call at all: the launches only (for ACLNN_PROFILE=DIR)
 *
 * Before the collection, a subscription (aclprofModelSubscribe): its statuses, then the records
 * of two launches read back from its pipe with the aclprofGetOp* getters.
 *
 * The launches (checked by the Python test against this list): stream A: Prelu [2,3,4] FLOAT
 * with weight [3]; stream B: Prelu [5,3] FLOAT16 with weight [1]; stream A again: Prelu [2,3,4].
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

/* profiling/aprof_pub.h's (CANN's pkg_inc, not a public acl header): ties a model id to a device. */
extern int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId);

#define SWITCHES (ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX)

/* One Prelu launch of self [shape] (dtype) with a weight of `channels` elements, not synchronized. */
static void launch_prelu(aclrtStream stream, const int64_t *shape, int nd, int64_t channels, aclDataType dtype)
{
    size_t elem = dtype == ACL_FLOAT ? 4 : 2, numel = (size_t)tu_numel(shape, nd);
    static unsigned char zeros[4096];
    tu_tensor self = tu_make_tensor(zeros, numel, elem, shape, nd, NULL, 0, dtype, ACL_FORMAT_ND);
    tu_tensor weight = tu_make_tensor(zeros, (size_t)channels, elem, &channels, 1, NULL, 0, dtype, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(NULL, numel, elem, shape, nd, NULL, 0, dtype, ACL_FORMAT_ND);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &ws, &ex) == ACLNN_SUCCESS, "prelu phase 1: %s",
          aclGetRecentErrMsg());
    void *workspace = NULL;
    if (ws > 0)
        aclrtMalloc(&workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK(aclnnPrelu(workspace, ws, ex, stream) == ACLNN_SUCCESS, "prelu phase 2: %s", aclGetRecentErrMsg());
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "synchronize");
    aclrtFree(workspace);
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&out);
}

/* The work profiled: three launches on two streams, a copy, a memset and an event. */
static void do_work(aclrtStream a, aclrtStream b)
{
    const int64_t shape_a[] = {2, 3, 4}, shape_b[] = {5, 3};
    launch_prelu(a, shape_a, 3, 3, ACL_FLOAT);
    launch_prelu(b, shape_b, 2, 1, ACL_FLOAT16);
    void *dev = NULL, *host = NULL;
    const size_t size = 256;
    aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMallocHost(&host, size); /* an async copy's host side must be pinned (CANN's page) */
    memset(host, 1, size);
    CHECK(aclrtMemcpyAsync(dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, b) == ACL_SUCCESS, "copy");
    CHECK(aclrtMemsetAsync(dev, size, 0, size, b) == ACL_SUCCESS, "memset");
    aclrtEvent event = NULL;
    aclrtCreateEvent(&event);
    CHECK(aclrtRecordEvent(event, b) == ACL_SUCCESS, "record");
    CHECK(aclrtSynchronizeStream(b) == ACL_SUCCESS, "synchronize b");
    aclrtDestroyEvent(event);
    aclrtFree(dev);
    aclrtFreeHost(host);
    launch_prelu(a, shape_a, 3, 3, ACL_FLOAT);
}

static void check_subscription_records(const char *records, size_t len, uint32_t model)
{
    size_t desc_size = 0;
    EXPECT_OK(aclprofGetOpDescSize(&desc_size));
    uint32_t count = 0;
    EXPECT_OK(aclprofGetOpNum(records, len, &count));
    CHECK(count == 2 && len == 2 * desc_size, "%u records in %zu bytes (record size %zu), expected 2", count, len,
          desc_size);
    for (uint32_t i = 0; i < count && i < 2; i++) {
        size_t type_len = 0, name_len = 0;
        char type[64] = {0}, name[128] = {0};
        EXPECT_OK(aclprofGetOpTypeLen(records, len, i, &type_len));
        EXPECT_OK(aclprofGetOpType(records, len, i, type, sizeof type));
        EXPECT_OK(aclprofGetOpNameLen(records, len, i, &name_len));
        EXPECT_OK(aclprofGetOpName(records, len, i, name, sizeof name));
        CHECK(strstr(type, "Prelu") != NULL && type_len == strlen(type) + 1, "record %u: type '%s' (length %zu)", i,
              type, type_len);
        CHECK(strncmp(name, type, strlen(type)) == 0 && name_len == strlen(name) + 1, "record %u: name '%s'", i, name);
        uint64_t start = aclprofGetOpStart(records, len, i), end = aclprofGetOpEnd(records, len, i);
        CHECK(start > 0 && end >= start && aclprofGetOpDuration(records, len, i) == end - start,
              "record %u: start %llu end %llu", i, (unsigned long long)start, (unsigned long long)end);
        CHECK(aclprofGetModelId(records, len, i) == model, "record %u: model id", i);
        CHECK(aclprofGetOpFlag(records, len, i) == ACL_SUBSCRIBE_OP, "record %u: flag", i);
        const char *thread = aclprofGetOpAttriValue(records, len, i, ACL_SUBSCRIBE_ATTRI_THREADID);
        CHECK(thread != NULL && atoi(thread) > 0, "record %u: thread id", i);
    }
    EXPECT(aclprofGetOpNum(records, len - 1, &count), ACL_ERROR_INVALID_PARAM, "opInfoLen");
    EXPECT(aclprofGetOpTypeLen(records, len, 2, &desc_size), ACL_ERROR_INVALID_PARAM, "index");
    char garbage[1024] = {0};
    EXPECT(aclprofGetOpNum(garbage, desc_size, &count), ACL_ERROR_INVALID_PARAM, "subscription");
}

/* A subscription to model 7 on device 0 hears the operator launches that run while it lasts. */
static void test_subscription(aclrtStream a)
{
    const uint32_t model = 7;
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    CHECK(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, NULL) == NULL, "a config without fd");
    CHECK(aclprofCreateSubscribeConfig(2, ACL_AICORE_NONE, &fds[1]) == NULL, "timeInfoSwitch 2");
    aclprofSubscribeConfig *silent = aclprofCreateSubscribeConfig(0, ACL_AICORE_NONE, &fds[1]);
    aclprofSubscribeConfig *config = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fds[1]);
    CHECK(silent != NULL && config != NULL, "configs");
    EXPECT(aclprofModelSubscribe(model, config), ACL_ERROR_INVALID_MODEL_ID, "model id 7");
    CHECK(MsprofSetDeviceIdByGeModelIdx(model, 0) == 0, "MsprofSetDeviceIdByGeModelIdx");
    EXPECT(aclprofModelSubscribe(model, NULL), ACL_ERROR_INVALID_PARAM, "profSubscribeConfig");
    EXPECT(aclprofModelSubscribe(model, silent), ACL_ERROR_INVALID_PARAM, "timeInfoSwitch");
    EXPECT(aclprofModelUnSubscribe(model), ACL_ERROR_INVALID_MODEL_ID, "not subscribed");
    EXPECT_OK(aclprofModelSubscribe(model, config));
    EXPECT(aclprofModelSubscribe(model, config), ACL_ERROR_PROF_REPEAT_SUBSCRIBE, "already");
    const int64_t shape[] = {2, 3, 4};
    launch_prelu(a, shape, 3, 3, ACL_FLOAT);
    launch_prelu(a, shape, 3, 1, ACL_FLOAT);
    EXPECT_OK(aclprofModelUnSubscribe(model)); /* closes the write end: the read below ends */
    static char records[8192];
    size_t len = 0;
    ssize_t n;
    while ((n = read(fds[0], records + len, sizeof records - len)) > 0)
        len += (size_t)n;
    close(fds[0]);
    check_subscription_records(records, len, model);
    EXPECT_OK(aclprofDestroySubscribeConfig(config));
    EXPECT_OK(aclprofDestroySubscribeConfig(silent));
    EXPECT(aclprofDestroySubscribeConfig(NULL), ACL_ERROR_INVALID_PARAM, "profSubscribeConfig");
}

static void test_bad_calls(aclrtStream a, const char *dir)
{
    uint32_t dev0 = 0, far = 99;
    EXPECT(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM, "profilerResultPath");
    EXPECT(aclprofInit(dir, 0), ACL_ERROR_INVALID_PARAM, "length");
    EXPECT(aclprofInit(dir, strlen(dir) + 1), ACL_ERROR_INVALID_PARAM, "strlen");
    EXPECT(aclprofSetConfig(ACL_PROF_ARGS_MIN, "1", 1), ACL_ERROR_INVALID_PARAM, "configType");
    EXPECT(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, NULL, 1), ACL_ERROR_INVALID_PARAM, "config");
    EXPECT_OK(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5));
    CHECK(aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL, SWITCHES) == NULL, "NULL deviceIdList");
    EXPECT_MSG("aclprofCreateConfig(NULL list)", "deviceIdList");
    CHECK(aclprofCreateConfig(&far, 1, ACL_AICORE_NONE, NULL, SWITCHES) == NULL, "device 99");
    EXPECT_MSG("aclprofCreateConfig(device 99)", "deviceIdList[0]", "99");
    CHECK(aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, (const aclprofAicoreEvents *)&far, SWITCHES) == NULL,
          "aicoreEvents");
    EXPECT_MSG("aclprofCreateConfig(aicoreEvents)", "aicoreEvents");

    aclprofConfig *zero = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, 0);
    aclprofConfig *unknown = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, 1ull << 60);
    aclprofConfig *config = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, SWITCHES);
    aclprofConfig *other = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
    CHECK(zero && unknown && config && other, "configs: %s", aclGetRecentErrMsg());
    EXPECT_OK(aclprofInit(dir, strlen(dir)));
    EXPECT(aclprofInit(dir, strlen(dir)), ACL_ERROR_REPEAT_INITIALIZE, "already initialized");
    EXPECT(aclprofStart(zero), ACL_ERROR_INVALID_PARAM, "dataTypeConfig");
    EXPECT(aclprofStart(unknown), ACL_ERROR_PROF_MODULES_UNSUPPORTED, "dataTypeConfig");
    EXPECT(aclprofStop(config), ACL_ERROR_PROF_NOT_RUN, "was not started");
    EXPECT(aclprofMarkEx("m", 1, a), ACL_ERROR_PROF_NOT_RUN, "aclprofStart");
    CHECK(aclprofCreateStamp() == NULL, "a stamp before aclprofStart");
    EXPECT_OK(aclprofStart(config));
    EXPECT_OK(aclprofStart(config)); /* the same config joins the running collection */
    EXPECT(aclprofStart(other), ACL_ERROR_INVALID_PROFILING_CONFIG, "dataTypeConfig");
    EXPECT(aclprofStop(other), ACL_ERROR_INVALID_PROFILING_CONFIG, "dataTypeConfig");
    EXPECT(aclprofMarkEx("mark", 3, a), ACL_ERROR_INVALID_PARAM, "strlen");
    EXPECT(aclprofMarkEx(NULL, 3, a), ACL_ERROR_INVALID_PARAM, "msg");
    EXPECT(aclprofMarkEx("mark", 4, NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclprofPop(), ACL_ERROR_INVALID_PARAM, "no open range");
    EXPECT(aclprofRangeStop(12345), ACL_ERROR_INVALID_PARAM, "rangeId");
    EXPECT(aclprofPush(NULL), ACL_ERROR_INVALID_PARAM, "stamp");
    EXPECT(aclprofRangePushEx(NULL), ACL_ERROR_INVALID_PARAM, "attr");
    aclprofStepInfo *step = aclprofCreateStepInfo(); /* step 0 */
    EXPECT(aclprofGetStepTimestamp(NULL, ACL_STEP_START, a), ACL_ERROR_INVALID_PARAM, "stepInfo");
    EXPECT(aclprofGetStepTimestamp(step, (aclprofStepTag)7, a), ACL_ERROR_INVALID_PARAM, "tag");
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_START, a));
    EXPECT(aclprofGetStepTimestamp(step, ACL_STEP_START, a), ACL_ERROR_INVALID_PARAM, "already started");
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_END, a));
    EXPECT(aclprofGetStepTimestamp(step, ACL_STEP_END, a), ACL_ERROR_INVALID_PARAM, "already ended");
    aclprofDestroyStepInfo(step);
    aclprofDestroyStepInfo(step);
    EXPECT_MSG("aclprofDestroyStepInfo twice", "stepInfo");
    CHECK(aclrtSynchronizeStream(a) == ACL_SUCCESS, "the step marks run");
    EXPECT_OK(aclprofStop(config));
    EXPECT(aclprofStop(config), ACL_ERROR_PROF_NOT_RUN, "was not started"); /* stopped already */
    EXPECT_OK(aclprofStop(NULL)); /* NULL: whatever runs, here nothing */
    EXPECT_OK(aclprofFinalize());
    EXPECT_OK(aclprofFinalize()); /* not initialized: nothing to do, as in CANN */
    EXPECT_OK(aclprofDestroyConfig(zero));
    EXPECT(aclprofDestroyConfig(zero), ACL_ERROR_INVALID_PARAM, "not a live config");
    EXPECT(aclprofDestroyConfig(NULL), ACL_ERROR_INVALID_PARAM, "profilerConfig");
    aclprofDestroyConfig(unknown);
    aclprofDestroyConfig(config);
    aclprofDestroyConfig(other);
}

/* A collection of do_work with every kind of msproftx stamp, written under `dir`. */
static void profile_work(aclrtStream a, aclrtStream b, const char *dir)
{
    uint32_t dev0 = 0;
    EXPECT_OK(aclprofInit(dir, strlen(dir)));
    aclprofConfig *config = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, SWITCHES);
    EXPECT_OK(aclprofStart(config));
    int fds[2] = {-1, -1};
    CHECK(pipe(fds) == 0, "pipe");
    aclprofSubscribeConfig *subscribe = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fds[1]);
    EXPECT(aclprofModelSubscribe(7, subscribe), ACL_ERROR_PROF_API_CONFLICT, "aclprofStart");
    aclprofDestroySubscribeConfig(subscribe);
    close(fds[0]);
    close(fds[1]);
    void *stamp = aclprofCreateStamp();
    CHECK(stamp != NULL, "aclprofCreateStamp: %s", aclGetRecentErrMsg());
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "outer", 5));
    EXPECT_OK(aclprofPush(stamp));
    EXPECT_OK(aclprofMarkEx("before launches", 15, a));
    uint32_t range = 0;
    EXPECT_OK(aclprofRangeStart(stamp, &range));
    aclprofTensorInfo info = {.opNameId = aclprofStr2Id("inner")};
    aclprofEventAttributes attr = {ACL_PROF_EVENT_ATTR_VERSION, sizeof attr, ACL_PROF_MESSAGE_TYPE_TENSOR_INFO,
                                   {&info}};
    EXPECT_OK(aclprofRangePushEx(&attr));
    aclprofStepInfo *step = aclprofCreateStepInfo(); /* step 1 */
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_START, a));
    do_work(a, b);
    EXPECT_OK(aclprofGetStepTimestamp(step, ACL_STEP_END, a));
    CHECK(aclrtSynchronizeStream(a) == ACL_SUCCESS, "the step's end runs");
    aclprofDestroyStepInfo(step);
    EXPECT_OK(aclprofRangePop());
    EXPECT_OK(aclprofRangeStop(range));
    EXPECT_OK(aclprofSetStampTraceMessage(stamp, "after", 5));
    EXPECT_OK(aclprofMark(stamp));
    EXPECT_OK(aclprofPop());
    aclprofDestroyStamp(stamp);
    EXPECT_OK(aclprofStop(config));
    EXPECT_OK(aclprofDestroyConfig(config));
    EXPECT_OK(aclprofFinalize());
}

/* aclprofStart before aclprofInit initializes with the current directory (as CANN's does). */
static void profile_without_init(aclrtStream a, const char *dir)
{
    char here[4096];
    CHECK(getcwd(here, sizeof here) != NULL && chdir(dir) == 0, "chdir %s", dir);
    uint32_t dev0 = 0;
    aclprofConfig *config = aclprofCreateConfig(&dev0, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
    EXPECT_OK(aclprofStart(config));
    const int64_t shape[] = {4};
    launch_prelu(a, shape, 1, 1, ACL_FLOAT);
    EXPECT_OK(aclprofStop(config));
    EXPECT_OK(aclprofFinalize());
    aclprofDestroyConfig(config);
    CHECK(chdir(here) == 0, "chdir back");
}

/* The written session directories under `dir`: each must hold both files; the two that launched
 * operators (not test_bad_calls' empty one) must name Prelu.  Removes them when `clean`. */
static void check_written(const char *dir, bool clean)
{
    DIR *listing = opendir(dir);
    CHECK(listing != NULL, "opendir %s", dir);
    int sessions = 0, with_prelu = 0;
    for (struct dirent *e; listing != NULL && (e = readdir(listing)) != NULL;) {
        if (strncmp(e->d_name, "aclnn_prof_", 11) != 0)
            continue;
        sessions++;
        char trace[8192], summary[8192], text[1 << 16] = {0};
        snprintf(trace, sizeof trace, "%s/%s/trace.json", dir, e->d_name);
        snprintf(summary, sizeof summary, "%s/%s/op_summary.csv", dir, e->d_name);
        FILE *f = fopen(trace, "r");
        CHECK(f != NULL, "%s missing", trace);
        if (f != NULL) {
            CHECK(fread(text, 1, sizeof text - 1, f) > 0, "%s empty", trace);
            fclose(f);
        }
        with_prelu += strstr(text, "\"aclnnPrelu\"") != NULL;
        CHECK(access(summary, R_OK) == 0, "%s missing", summary);
        if (clean) {
            unlink(trace);
            unlink(summary);
            snprintf(trace, sizeof trace, "%s/%s", dir, e->d_name);
            rmdir(trace);
        }
    }
    if (listing != NULL)
        closedir(listing);
    CHECK(sessions == 3 && with_prelu == 2, "%d session directories under %s (%d with aclnnPrelu), want 3 (2)",
          sessions, dir, with_prelu);
    if (clean)
        rmdir(dir);
}

int main(int argc, char **argv)
{
    if (tu_open_device())
        return 1;
    aclrtStream b = NULL;
    CHECK(aclrtCreateStream(&b) == ACL_SUCCESS, "second stream");
    if (argc > 1 && strcmp(argv[1], "--plain") == 0) {
        do_work(tu_stream, b);
    } else {
        char made[] = "/tmp/aclnn_prof_test_XXXXXX";
        const char *dir = argc > 1 ? argv[1] : mkdtemp(made);
        CHECK(dir != NULL, "mkdtemp");
        mkdir(dir, 0755);
        test_subscription(tu_stream);
        test_bad_calls(tu_stream, dir);
        profile_without_init(tu_stream, dir);
        profile_work(tu_stream, b, dir);
        check_written(dir, argc == 1);
    }
    aclrtDestroyStream(b);
    tu_close_device();
    return tu_finish("test_runtime_prof");
}
