/*
 * rt_prof.c - acl_prof.h's collection calls (aclprofInit/Start/Stop/Finalize and their configs)
 * and the msproftx stamps (marks, push/pop and start/stop ranges, aclprofMarkEx, RangePushEx).
 *
 * The order and the statuses are those of CANN's profiler (runtime:src/dfx/msprof/collector/dvvp/
 * profimpl/adapter/src/msprofiler_acl_api.cpp, msprof/engine/src/prof_acl_mgr.cpp): aclprofInit
 * once (ACL_ERROR_REPEAT_INITIALIZE after that); aclprofStart without aclprofInit initializes with
 * the current directory, as CANN's does; a second aclprofStart with the same dataTypeConfig joins
 * the running collection, a different one is ACL_ERROR_INVALID_PROFILING_CONFIG; aclprofStop and
 * aclprofFinalize before aclprofInit succeed doing nothing; with ACLNN_PROFILE set (CANN's
 * command-line mode) the calls answer ACL_ERROR_PROF_ALREADY_RUN.  aclprofStop writes the
 * session (prof_trace.c) under the aclprofInit path.
 *
 * aclprofGetStepTimestamp marks a training step's start or end where the stream reaches it (a
 * "step" instant on the stream's row) while tasks are recorded, and checks its step info as CANN's
 * runtime:src/dfx/msprof/collector/dvvp/msprofiler/prof_acl_core.cpp does.
 *
 * The msproftx calls need a collection whose dataTypeConfig holds ACL_PROF_MSPROFTX running
 * (ACL_ERROR_PROF_NOT_RUN otherwise; CANN returns its internal -1 there).  Every handle
 * (configs, stamps) is looked up, never trusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_prof.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

/* CANN's limits: the result path (aclprofInit), a config value (aclprofSetConfig), a message. */
#define RESULT_PATH_MAX 4096
#define CONFIG_VALUE_MAX 256
#define MESSAGE_MAX 128

/* Every dataTypeConfig switch acl_prof.h defines: others are ACL_ERROR_PROF_MODULES_UNSUPPORTED. */
#define KNOWN_SWITCHES                                                                                  \
    (ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU | ACL_PROF_L2CACHE | \
     ACL_PROF_HCCL_TRACE | ACL_PROF_TRAINING_TRACE | ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API |           \
     ACL_PROF_GE_API_L0 | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_MEMORY | ACL_PROF_GE_API_L1 |             \
     ACL_PROF_TASK_TIME_L2 | ACL_PROF_OP_ATTR | ACL_PROF_TASK_TIME_L3 | ACL_PROF_API_STATS |             \
     ACL_PROF_AICORE_SHAPE)

/* What aclprofStart(NULL) collects (CANN: the platform's default, on every active device). */
#define DEFAULT_SWITCHES (ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)

struct aclprofConfig {
    uint64_t devices; /* one bit per device id */
    uint64_t switches; /* dataTypeConfig */
    aclprofAicoreMetrics metrics;
};

typedef struct {
    char message[MESSAGE_MAX];
} prof_stamp;

/* A range opened on this thread (aclprofPush, aclprofRangePushEx), closed by the next pop. */
typedef struct open_range {
    char message[MESSAGE_MAX];
    uint64_t begin_ns;
    struct open_range *outer;
} open_range;

/* An aclprofRangeStart range: any thread may stop it. */
typedef struct started_range {
    uint32_t id;
    int32_t thread;
    uint64_t begin_ns;
    char message[MESSAGE_MAX];
    struct started_range *next;
} started_range;

/* aclprofStr2Id's strings, so a RangePushEx's opNameId names its range. */
typedef struct named_id {
    uint64_t id;
    char text[MESSAGE_MAX];
    struct named_id *next;
} named_id;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* everything below */
static bool g_inited;
static char g_result_dir[RESULT_PATH_MAX];
static bool g_started;
static uint64_t g_started_devices, g_started_switches;
static nn_ptrset g_configs, g_stamps;
static started_range *g_ranges;
static uint32_t g_next_range_id;
static named_id *g_names;

static _Thread_local open_range *t_open_ranges;

/* ---- collection -------------------------------------------------------------------------- */

static aclError env_mode_error(const char *api)
{
    return nn_rt_error(ACL_ERROR_PROF_ALREADY_RUN,
                       "%s: profiling already runs from the environment (ACLNN_PROFILE=%s); the aclprof "
                       "collection calls are refused meanwhile, as CANN refuses them under msprof.",
                       api, nn_prof_env_dir());
}

static int device_count(void)
{
    uint32_t count = 0;
    return aclrtGetDeviceCount(&count) == ACL_SUCCESS ? (int)count : 0;
}

/* The device set of a config, checked as CANN's aclprofCreateConfig checks it; false after
 * nn_rt_error. */
static bool device_set(const uint32_t *ids, uint32_t num, uint64_t *devices)
{
    const char *api = "aclprofCreateConfig";
    int count = device_count();
    *devices = 0;
    if (num != 0 && ids == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList is null but deviceNums is %u.", api, num), false;
    if (num > (uint32_t)count)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceNums is %u; the device number should be in "
                           "range [1, %d].", api, num, count), false;
    for (uint32_t i = 0; i < num; i++) {
        if (ids[i] >= (uint32_t)count || ids[i] >= 64)
            return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList[%u] is %u; the device id should be "
                               "in range [0, %d).", api, i, ids[i], count), false;
        if (*devices & (1ull << ids[i]))
            return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList names device %u twice.", api,
                               ids[i]), false;
        *devices |= 1ull << ids[i];
    }
    return true;
}

MSVP_PROF_API aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                 aclprofAicoreMetrics aicoreMetrics,
                                                 const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig)
{
    if (aicoreEvents != NULL) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofCreateConfig: aicoreEvents must be NULL.");
        return NULL;
    }
    if ((aicoreMetrics > ACL_AICORE_MEMORY_ACCESS && aicoreMetrics != ACL_AICORE_NONE) || (int)aicoreMetrics < 0) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofCreateConfig: aicoreMetrics %d is not an aclprofAicoreMetrics.",
                    (int)aicoreMetrics);
        return NULL;
    }
    uint64_t devices;
    if (!device_set(deviceIdList, deviceNums, &devices))
        return NULL;
    aclprofConfig *config = malloc(sizeof *config);
    if (config == NULL) {
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclprofCreateConfig: out of memory.");
        return NULL;
    }
    *config = (aclprofConfig){devices, dataTypeConfig, aicoreMetrics};
    pthread_mutex_lock(&g_lock);
    bool added = nn_ptrset_add(&g_configs, config);
    pthread_mutex_unlock(&g_lock);
    if (!added) {
        free(config);
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclprofCreateConfig: out of memory.");
        return NULL;
    }
    return config;
}

MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)
{
    if (profilerConfig == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig: profilerConfig must not be null.");
    pthread_mutex_lock(&g_lock);
    bool removed = nn_ptrset_remove(&g_configs, profilerConfig);
    pthread_mutex_unlock(&g_lock);
    if (!removed)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig: profilerConfig %p is not a live config "
                           "(never made by aclprofCreateConfig, or already destroyed).", (const void *)profilerConfig);
    free((aclprofConfig *)profilerConfig);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofInit(const char *profilerResultPath, size_t length)
{
    const char *api = "aclprofInit";
    if (nn_prof_env_dir() != NULL)
        return env_mode_error(api);
    if (profilerResultPath == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: profilerResultPath must not be null.", api);
    if (length == 0 || length >= RESULT_PATH_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: length is %zu; the length of profilerResultPath should "
                           "be in [1, %d).", api, length, RESULT_PATH_MAX);
    if (strnlen(profilerResultPath, RESULT_PATH_MAX) != length)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: length %zu does not equal strlen(profilerResultPath) "
                           "(%zu).", api, length, strnlen(profilerResultPath, RESULT_PATH_MAX));
    pthread_mutex_lock(&g_lock);
    bool again = g_inited;
    if (!again) {
        memcpy(g_result_dir, profilerResultPath, length + 1);
        g_inited = true;
    }
    pthread_mutex_unlock(&g_lock);
    if (again)
        return nn_rt_error(ACL_ERROR_REPEAT_INITIALIZE, "%s: profiling is already initialized (call "
                           "aclprofFinalize first).", api);
    return ACL_SUCCESS;
}

/* The config a Start or Stop uses, checked as CANN's preCheckProfConfig checks it (g_lock held). */
static aclError check_config_locked(const char *api, const aclprofConfig *config)
{
    if (!nn_ptrset_has(&g_configs, config))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: profilerConfig %p is not a live config (never made by "
                           "aclprofCreateConfig, or already destroyed).", api, (const void *)config);
    if (config->switches == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the config's dataTypeConfig can not be zero.", api);
    if ((config->switches & ~(uint64_t)KNOWN_SWITCHES) != 0)
        return nn_rt_error(ACL_ERROR_PROF_MODULES_UNSUPPORTED, "%s: dataTypeConfig 0x%llx is not supported, "
                           "supported switch is: 0x%llx.", api, (unsigned long long)config->switches,
                           (unsigned long long)KNOWN_SWITCHES);
    return ACL_SUCCESS;
}

/* Starts (or joins) the collection (g_lock held). */
static aclError start_locked(const char *api, uint64_t devices, uint64_t switches)
{
    if (g_started && switches != g_started_switches)
        return nn_rt_error(ACL_ERROR_INVALID_PROFILING_CONFIG, "%s: dataTypeConfig 0x%llx differs from the running "
                           "collection's 0x%llx.", api, (unsigned long long)switches,
                           (unsigned long long)g_started_switches);
    if (!g_inited) { /* CANN's aclprofStart initializes itself when aclprofInit was not called */
        strcpy(g_result_dir, ".");
        g_inited = true;
    }
    if (!g_started) {
        uint64_t tasks = switches & ~(uint64_t)ACL_PROF_MSPROFTX;
        nn_prof_session_begin((nn_prof_scope){tasks != 0, (switches & ACL_PROF_MSPROFTX) != 0});
        g_started = true;
        g_started_switches = switches;
    }
    g_started_devices |= devices;
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofStart(const aclprofConfig *profilerConfig)
{
    const char *api = "aclprofStart";
    if (nn_prof_env_dir() != NULL)
        return env_mode_error(api);
    pthread_mutex_lock(&g_lock);
    aclError err = profilerConfig != NULL ? check_config_locked(api, profilerConfig) : ACL_SUCCESS;
    if (err == ACL_SUCCESS && profilerConfig != NULL)
        err = start_locked(api, profilerConfig->devices, profilerConfig->switches);
    else if (err == ACL_SUCCESS)
        err = start_locked(api, 0, g_started ? g_started_switches : DEFAULT_SWITCHES);
    pthread_mutex_unlock(&g_lock);
    return err;
}

/* Ends the collection and writes it (g_lock held). */
static aclError stop_locked(const char *api)
{
    g_started = false;
    g_started_devices = g_started_switches = 0;
    return nn_prof_session_end(api, g_result_dir);
}

/* Why `config` cannot stop the running collection (ACL_SUCCESS: it can; g_lock held). */
static aclError check_stop_locked(const char *api, const aclprofConfig *config)
{
    aclError err = check_config_locked(api, config);
    if (err != ACL_SUCCESS)
        return err;
    if (!g_started)
        return nn_rt_error(ACL_ERROR_PROF_NOT_RUN, "%s: profilerConfig was not started (no aclprofStart is "
                           "running).", api);
    uint64_t missing = config->devices & ~g_started_devices;
    if (missing != 0)
        return nn_rt_error(ACL_ERROR_PROF_NOT_RUN, "%s: profilerConfig names device %d, on which no aclprofStart "
                           "is running.", api, __builtin_ctzll(missing));
    if (config->switches != g_started_switches)
        return nn_rt_error(ACL_ERROR_INVALID_PROFILING_CONFIG, "%s: the config's dataTypeConfig 0x%llx differs "
                           "from aclprofStart's 0x%llx.", api, (unsigned long long)config->switches,
                           (unsigned long long)g_started_switches);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofStop(const aclprofConfig *profilerConfig)
{
    const char *api = "aclprofStop";
    if (nn_prof_env_dir() != NULL)
        return env_mode_error(api);
    pthread_mutex_lock(&g_lock);
    aclError err = ACL_SUCCESS;
    if (g_inited && profilerConfig != NULL) /* (before aclprofInit: nothing to do, as in CANN) */
        err = check_stop_locked(api, profilerConfig);
    if (g_inited && err == ACL_SUCCESS && g_started)
        err = stop_locked(api);
    pthread_mutex_unlock(&g_lock);
    return err;
}

MSVP_PROF_API aclError aclprofFinalize(void)
{
    if (nn_prof_env_dir() != NULL)
        return env_mode_error("aclprofFinalize");
    pthread_mutex_lock(&g_lock);
    aclError err = g_started ? stop_locked("aclprofFinalize") : ACL_SUCCESS;
    g_inited = false;
    pthread_mutex_unlock(&g_lock);
    return err;
}

MSVP_PROF_API aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength)
{
    const char *api = "aclprofSetConfig";
    if (configType <= ACL_PROF_ARGS_MIN || configType >= ACL_PROF_ARGS_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: configType %d is not an aclprofConfigType.", api,
                           (int)configType);
    if (config == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: config must not be null.", api);
    if (configLength > CONFIG_VALUE_MAX || strnlen(config, CONFIG_VALUE_MAX + 1) != configLength)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: configLength %zu must equal strlen(config), at most %d.",
                           api, configLength, CONFIG_VALUE_MAX);
    /* The settings tune the NPU's samplers (frequencies, storage, hardware metrics): a CPU
     * profile has none to tune, so a valid setting is accepted and changes nothing. */
    return ACL_SUCCESS;
}

/* ---- msproftx ------------------------------------------------------------------------------ */

static aclError tx_not_running(const char *api)
{
    return nn_rt_error(ACL_ERROR_PROF_NOT_RUN, "%s: no profiling collection with ACL_PROF_MSPROFTX in its "
                       "dataTypeConfig is running (call it between aclprofStart and aclprofStop).", api);
}

/* The live stamp `stamp` names, or NULL after nn_rt_error. */
static prof_stamp *find_stamp(const char *api, void *stamp)
{
    if (stamp == NULL) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stamp must not be null.", api);
        return NULL;
    }
    pthread_mutex_lock(&g_lock);
    bool live = nn_ptrset_has(&g_stamps, stamp);
    pthread_mutex_unlock(&g_lock);
    if (!live)
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stamp %p is not a live stamp (never made by aclprofCreateStamp, "
                    "or already destroyed).", api, stamp);
    return live ? stamp : NULL;
}

MSVP_PROF_API void *aclprofCreateStamp(void)
{
    if (!nn_prof_tx_recording()) {
        tx_not_running("aclprofCreateStamp");
        return NULL;
    }
    prof_stamp *stamp = calloc(1, sizeof *stamp);
    pthread_mutex_lock(&g_lock);
    bool added = stamp != NULL && nn_ptrset_add(&g_stamps, stamp);
    pthread_mutex_unlock(&g_lock);
    if (!added) {
        free(stamp);
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclprofCreateStamp: out of memory.");
        return NULL;
    }
    return stamp;
}

MSVP_PROF_API void aclprofDestroyStamp(void *stamp)
{
    if (find_stamp("aclprofDestroyStamp", stamp) == NULL)
        return;
    pthread_mutex_lock(&g_lock);
    bool removed = nn_ptrset_remove(&g_stamps, stamp);
    pthread_mutex_unlock(&g_lock);
    if (removed)
        free(stamp);
}

/* A message of `length` bytes, checked as CANN checks it (1..127 when `at_least_one`). */
static aclError check_message(const char *api, const char *msg, size_t length, bool at_least_one)
{
    if (msg == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: msg must not be null.", api);
    if (length >= MESSAGE_MAX || (at_least_one && length < 1))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: msgLen is %zu; it should be in [%d, %d].", api, length,
                           at_least_one ? 1 : 0, MESSAGE_MAX - 1);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLen)
{
    const char *api = "aclprofSetStampTraceMessage";
    prof_stamp *found = find_stamp(api, stamp);
    if (found == NULL)
        return ACL_ERROR_INVALID_PARAM;
    aclError err = check_message(api, msg, msgLen, false);
    if (err != ACL_SUCCESS)
        return err;
    memcpy(found->message, msg, msgLen);
    found->message[msgLen] = '\0';
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofMark(void *stamp)
{
    if (!nn_prof_tx_recording())
        return tx_not_running("aclprofMark");
    prof_stamp *found = find_stamp("aclprofMark", stamp);
    if (found == NULL)
        return ACL_ERROR_INVALID_PARAM;
    nn_prof_host_mark(found->message, 0);
    return ACL_SUCCESS;
}

/* The stream-side half of a mark (aclprofMarkEx, aclprofGetStepTimestamp): the task does nothing;
 * its record, taken where the stream reaches it, is the mark. */
static int reach_mark(void *ctx)
{
    (void)ctx;
    return 0;
}

MSVP_PROF_API aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)
{
    const char *api = "aclprofMarkEx";
    if (!nn_prof_tx_recording())
        return tx_not_running(api);
    aclError err = check_message(api, msg, msgLen, true);
    if (err != ACL_SUCCESS)
        return err;
    if (strnlen(msg, MESSAGE_MAX) != msgLen)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: msgLen %zu does not equal strlen(msg).", api, msgLen);
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stream must not be null.", api);
    nn_stream *s;
    err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    nn_prof_host_mark(msg, nn_stream_prof_row(s));
    nn_prof_label(NN_PROF_MARK, msg);
    return nn_stream_submit(s, reach_mark, NULL, NULL);
}

static aclError push_range(const char *api, const char *message)
{
    open_range *range = malloc(sizeof *range);
    if (range == NULL)
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    snprintf(range->message, sizeof range->message, "%s", message);
    range->begin_ns = nn_rt_now_ns();
    range->outer = t_open_ranges;
    t_open_ranges = range;
    return ACL_SUCCESS;
}

static aclError pop_range(const char *api)
{
    open_range *range = t_open_ranges;
    if (range == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: this thread has no open range (no aclprofPush or "
                           "aclprofRangePushEx before it).", api);
    t_open_ranges = range->outer;
    nn_prof_host_range(range->message, range->begin_ns, nn_rt_now_ns());
    free(range);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofPush(void *stamp)
{
    if (!nn_prof_tx_recording())
        return tx_not_running("aclprofPush");
    prof_stamp *found = find_stamp("aclprofPush", stamp);
    return found != NULL ? push_range("aclprofPush", found->message) : ACL_ERROR_INVALID_PARAM;
}

MSVP_PROF_API aclError aclprofPop(void)
{
    return pop_range("aclprofPop");
}

MSVP_PROF_API aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)
{
    const char *api = "aclprofRangeStart";
    if (!nn_prof_tx_recording())
        return tx_not_running(api);
    prof_stamp *found = find_stamp(api, stamp);
    if (found == NULL)
        return ACL_ERROR_INVALID_PARAM;
    if (rangeId == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: rangeId must not be null.", api);
    started_range *range = malloc(sizeof *range);
    if (range == NULL)
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    memcpy(range->message, found->message, sizeof range->message);
    range->thread = nn_prof_thread_id();
    range->begin_ns = nn_rt_now_ns();
    pthread_mutex_lock(&g_lock);
    range->id = ++g_next_range_id;
    range->next = g_ranges;
    g_ranges = range;
    pthread_mutex_unlock(&g_lock);
    *rangeId = range->id;
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofRangeStop(uint32_t rangeId)
{
    uint64_t end_ns = nn_rt_now_ns();
    pthread_mutex_lock(&g_lock);
    started_range **link = &g_ranges;
    while (*link != NULL && (*link)->id != rangeId)
        link = &(*link)->next;
    started_range *range = *link;
    if (range != NULL)
        *link = range->next;
    pthread_mutex_unlock(&g_lock);
    if (range == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofRangeStop: rangeId %u is not a started range (never "
                           "returned by aclprofRangeStart, or already stopped).", rangeId);
    nn_prof_async_range(range->message, range->id, range->thread, range->begin_ns, end_ns);
    free(range);
    return ACL_SUCCESS;
}

/* FNV-1a: CANN's hash differs, but an id only has to name its string within the process. */
static uint64_t hash_text(const char *text)
{
    uint64_t hash = 1469598103934665603ull;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        hash = (hash ^ *c) * 1099511628211ull;
    return hash;
}

MSVP_PROF_API uint64_t aclprofStr2Id(const char *message)
{
    if (message == NULL) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofStr2Id: message must not be null.");
        return 0;
    }
    uint64_t id = hash_text(message);
    pthread_mutex_lock(&g_lock);
    named_id *known = g_names;
    while (known != NULL && known->id != id)
        known = known->next;
    named_id *added = known == NULL ? malloc(sizeof *added) : NULL;
    if (added != NULL) {
        *added = (named_id){.id = id, .next = g_names};
        snprintf(added->text, sizeof added->text, "%s", message);
        g_names = added;
    }
    pthread_mutex_unlock(&g_lock);
    return id;
}

/* The string aclprofStr2Id turned into `id`, copied to `out` ("" if none did). */
static void text_of_id(uint64_t id, char *out, size_t size)
{
    pthread_mutex_lock(&g_lock);
    const named_id *known = g_names;
    while (known != NULL && known->id != id)
        known = known->next;
    snprintf(out, size, "%s", known != NULL ? known->text : "");
    pthread_mutex_unlock(&g_lock);
}

MSVP_PROF_API aclError aclprofRangePushEx(aclprofEventAttributes *attr)
{
    const char *api = "aclprofRangePushEx";
    if (!nn_prof_tx_recording())
        return tx_not_running(api);
    if (attr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: attr must not be null.", api);
    if (attr->messageType != ACL_PROF_MESSAGE_TYPE_TENSOR_INFO || attr->message.tensorInfo == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: attr must carry a tensor info (messageType "
                           "ACL_PROF_MESSAGE_TYPE_TENSOR_INFO, message.tensorInfo not null).", api);
    char name[MESSAGE_MAX];
    text_of_id(attr->message.tensorInfo->opNameId, name, sizeof name);
    if (name[0] == '\0')
        text_of_id(attr->message.tensorInfo->opTypeId, name, sizeof name);
    return push_range(api, name[0] != '\0' ? name : "range");
}

MSVP_PROF_API aclError aclprofRangePop(void)
{
    return pop_range("aclprofRangePop");
}

/* ---- training steps ------------------------------------------------------------------------ */

struct aclprofStepInfo {
    uint64_t index; /* the process's steps in creation order, from 0 */
    bool started, ended;
};

static nn_ptrset g_steps;
static uint64_t g_next_step;

MSVP_PROF_API aclprofStepInfo *aclprofCreateStepInfo(void)
{
    aclprofStepInfo *step = calloc(1, sizeof *step);
    pthread_mutex_lock(&g_lock);
    bool added = step != NULL && nn_ptrset_add(&g_steps, step);
    if (added)
        step->index = g_next_step++;
    pthread_mutex_unlock(&g_lock);
    if (!added) {
        free(step);
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclprofCreateStepInfo: out of memory.");
        return NULL;
    }
    return step;
}

MSVP_PROF_API void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo)
{
    pthread_mutex_lock(&g_lock);
    bool removed = stepinfo != NULL && nn_ptrset_remove(&g_steps, stepinfo);
    pthread_mutex_unlock(&g_lock);
    if (removed)
        free(stepinfo);
    else
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofDestroyStepInfo: stepInfo %p is not a live step info (null, "
                    "never made by aclprofCreateStepInfo, or already destroyed).", (void *)stepinfo);
}

/* Marks the step's `tag` once (g_lock held); false after nn_rt_error. */
static bool mark_step_locked(const char *api, aclprofStepInfo *step, aclprofStepTag tag)
{
    if (!nn_ptrset_has(&g_steps, step))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stepInfo %p is not a live step info (null, never made by "
                           "aclprofCreateStepInfo, or already destroyed).", api, (void *)step), false;
    if (tag != ACL_STEP_START && tag != ACL_STEP_END)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: tag %d is not ACL_STEP_START or ACL_STEP_END.", api,
                           (int)tag), false;
    bool *done = tag == ACL_STEP_START ? &step->started : &step->ended;
    if (*done)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: this stepInfo already %s.", api,
                           tag == ACL_STEP_START ? "started" : "ended"), false;
    *done = true;
    return true;
}

MSVP_PROF_API aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag, aclrtStream stream)
{
    const char *api = "aclprofGetStepTimestamp";
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    pthread_mutex_lock(&g_lock);
    bool marked = mark_step_locked(api, stepInfo, tag);
    uint64_t index = marked ? stepInfo->index : 0;
    pthread_mutex_unlock(&g_lock);
    if (!marked)
        return ACL_ERROR_INVALID_PARAM;
    if (!nn_prof_recording())
        return ACL_SUCCESS;
    char name[MESSAGE_MAX];
    snprintf(name, sizeof name, "step %llu %s", (unsigned long long)index, tag == ACL_STEP_START ? "start" : "end");
    nn_prof_label(NN_PROF_STEP, name);
    return nn_stream_submit(s, reach_mark, NULL, NULL);
}
