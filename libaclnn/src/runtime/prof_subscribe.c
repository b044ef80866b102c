/*
 * prof_subscribe.c - operator subscriptions (aclprofModelSubscribe and the aclprofGetOp* getters).
 *
 * A subscriber names a model and gives the write end of a pipe; while subscribed, every operator
 * launch that runs on the model's device is written to the pipe as one fixed-size record when it
 * has run, and aclprofModelUnSubscribe closes the pipe (the reader then sees end of file), as
 * CANN's page says.  libaclnn has no offline models: a model id exists once
 * MsprofSetDeviceIdByGeModelIdx (profiling/aprof_pub.h; what GE calls when it loads a model, and
 * what CANN's subscription sample calls itself) has tied it to a device, and its operators are
 * the aclnn launches on that device.
 *
 * The checks and statuses are CANN's (runtime:src/dfx/msprof/collector/dvvp/msprofiler/
 * prof_api_common.cpp, profimpl/adapter/src/msprofiler_acl_api.cpp, msprof/engine/src/
 * prof_acl_mgr.cpp, analyze/src/op_desc_parser.cpp): a null fd or a time switch other than 0/1
 * makes no config; an unknown model id is ACL_ERROR_INVALID_MODEL_ID; subscribing twice is
 * ACL_ERROR_PROF_REPEAT_SUBSCRIBE; subscribing while an aclprof collection runs is
 * ACL_ERROR_PROF_API_CONFLICT (ACL_ERROR_PROF_ALREADY_RUN under ACLNN_PROFILE); a buffer whose
 * length is not a whole number of records, or an index past them, is ACL_ERROR_INVALID_PARAM.
 * Unlike CANN, a record carries its operator's type and name itself (CANN keeps them in a table
 * that each getter empties), so a record can be read any number of times.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl_prof.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

#define RECORD_SIGNATURE 0x4E4E5052u /* "RPNN": a record written by this file */
#define MAX_MODELS 64
#define MAX_SUBSCRIPTIONS 64

/* One operator as the pipe carries it (aclprofGetOpDescSize bytes). */
typedef struct {
    uint32_t signature;
    uint32_t model_id;
    uint32_t flag;      /* aclprofSubscribeOpFlag */
    uint32_t thread_id; /* the thread that ran it */
    uint64_t op_index;  /* launches numbered from 1 in this process */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    int32_t device;
    char thread_text[12]; /* aclprofGetOpAttriValue(ACL_SUBSCRIBE_ATTRI_THREADID) */
    char op_type[64];
    char op_name[88];
} op_record;

struct aclprofSubscribeConfig {
    int8_t time_info;
    aclprofAicoreMetrics metrics;
    int fd;
};

typedef struct {
    uint32_t model_id;
    int32_t device;
} model_entry;

typedef struct {
    uint32_t model_id;
    int32_t device;
    int fd;
} subscription;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf lock: the tables below */
static model_entry g_models[MAX_MODELS];
static size_t g_model_count;
static subscription g_subs[MAX_SUBSCRIPTIONS];
static size_t g_sub_count;
static uint64_t g_next_op_index;

/* ---- models and configs ------------------------------------------------------------------- */

static model_entry *find_model_locked(uint32_t model_id)
{
    for (size_t i = 0; i < g_model_count; i++)
        if (g_models[i].model_id == model_id)
            return &g_models[i];
    return NULL;
}

MSVP_PROF_API int32_t MsprofSetDeviceIdByGeModelIdx(const uint32_t geModelIdx, const uint32_t deviceId)
{
    int32_t ret = 0;
    pthread_mutex_lock(&g_lock);
    model_entry *entry = find_model_locked(geModelIdx);
    if (entry == NULL && g_model_count < MAX_MODELS)
        entry = &g_models[g_model_count++];
    if (entry != NULL)
        *entry = (model_entry){geModelIdx, (int32_t)deviceId};
    else
        ret = -1; /* CANN's profapi answers its internal failure code */
    pthread_mutex_unlock(&g_lock);
    return ret;
}

MSVP_PROF_API aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
                                                                   aclprofAicoreMetrics aicoreMetrics, void *fd)
{
    const char *api = "aclprofCreateSubscribeConfig";
    if (fd == NULL) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: fd must not be null (the address of a pipe's write end).", api);
        return NULL;
    }
    if (timeInfoSwitch != 0 && timeInfoSwitch != 1) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: timeInfoSwitch must be 0 or 1, got %d.", api, (int)timeInfoSwitch);
        return NULL;
    }
    aclprofSubscribeConfig *config = calloc(1, sizeof *config);
    if (config == NULL) {
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
        return NULL;
    }
    config->time_info = timeInfoSwitch;
    config->metrics = aicoreMetrics;
    config->fd = *(const int *)fd;
    nn_check_object_created(config, "aclprofSubscribeConfig", api, false);
    return config;
}

MSVP_PROF_API aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig)
{
    if (profSubscribeConfig == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofDestroySubscribeConfig: profSubscribeConfig must "
                           "not be null.");
    nn_check_object_destroyed((void *)profSubscribeConfig);
    free((void *)profSubscribeConfig);
    return ACL_SUCCESS;
}

/* ---- subscribe / unsubscribe -------------------------------------------------------------- */

static subscription *find_subscription_locked(uint32_t model_id)
{
    for (size_t i = 0; i < g_sub_count; i++)
        if (g_subs[i].model_id == model_id)
            return &g_subs[i];
    return NULL;
}

/* Why a subscription cannot start now because of the aclprof collection mode, or ACL_SUCCESS. */
static aclError collection_conflict(const char *api)
{
    if (nn_prof_env_dir() != NULL)
        return nn_rt_error(ACL_ERROR_PROF_ALREADY_RUN, "%s: ACLNN_PROFILE collects already (command-line "
                           "mode): subscriptions are off.", api);
    if (nn_prof_collection_running())
        return nn_rt_error(ACL_ERROR_PROF_API_CONFLICT, "%s: an aclprofStart collection runs; stop it first "
                           "(subscriptions and aclprofInit/Start/Stop do not mix).", api);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig)
{
    const char *api = "aclprofModelSubscribe";
    aclError ret = collection_conflict(api);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_lock);
    model_entry *model = find_model_locked(modelId);
    if (model == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_MODEL_ID, "%s: model id %u does not exist (no "
                          "MsprofSetDeviceIdByGeModelIdx named it).", api, modelId);
    else if (profSubscribeConfig == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: profSubscribeConfig must not be null.", api);
    else if (profSubscribeConfig->time_info == 0 && profSubscribeConfig->metrics == ACL_AICORE_NONE)
        ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the config collects nothing: set its timeInfoSwitch to 1 "
                          "to receive operator records.", api);
    else if (find_subscription_locked(modelId) != NULL)
        ret = nn_rt_error(ACL_ERROR_PROF_REPEAT_SUBSCRIBE, "%s: model %u is subscribed already.", api, modelId);
    else if (g_sub_count == MAX_SUBSCRIPTIONS)
        ret = nn_rt_error(ACL_ERROR_PROFILING_FAILURE, "%s: %d models are subscribed already.", api,
                          MAX_SUBSCRIPTIONS);
    else {
        g_subs[g_sub_count++] = (subscription){modelId, model->device, profSubscribeConfig->fd};
        nn_prof_subscriptions_changed((int)g_sub_count);
    }
    pthread_mutex_unlock(&g_lock);
    return ret;
}

MSVP_PROF_API aclError aclprofModelUnSubscribe(uint32_t modelId)
{
    const char *api = "aclprofModelUnSubscribe";
    aclError ret = ACL_SUCCESS;
    int fd = -1;
    pthread_mutex_lock(&g_lock);
    subscription *sub = find_subscription_locked(modelId);
    if (find_model_locked(modelId) == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_MODEL_ID, "%s: model id %u does not exist.", api, modelId);
    else if (sub == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_MODEL_ID, "%s: model %u is not subscribed (aclprofModelSubscribe "
                          "first).", api, modelId);
    else {
        fd = sub->fd;
        *sub = g_subs[--g_sub_count];
        nn_prof_subscriptions_changed((int)g_sub_count);
    }
    pthread_mutex_unlock(&g_lock);
    if (fd >= 0)
        close(fd); /* the records are written as each operator ends: nothing is left to flush */
    return ret;
}

/* ---- delivery (prof_trace.c, when an operator task has run) -------------------------------- */

static void fill_record(op_record *record, uint32_t model_id, const char *op_type, int32_t device,
                        uint64_t begin_ns, uint64_t end_ns, int32_t thread, uint64_t op_index)
{
    memset(record, 0, sizeof *record);
    record->signature = RECORD_SIGNATURE;
    record->model_id = model_id;
    record->flag = ACL_SUBSCRIBE_OP;
    record->thread_id = (uint32_t)thread;
    record->op_index = op_index;
    record->start_ns = begin_ns;
    record->end_ns = end_ns;
    record->device = device;
    snprintf(record->thread_text, sizeof record->thread_text, "%u", (unsigned)thread);
    snprintf(record->op_type, sizeof record->op_type, "%s", op_type);
    snprintf(record->op_name, sizeof record->op_name, "%s_%llu", op_type, (unsigned long long)op_index);
}

/* Writes all of a record; a pipe the reader closed loses it (the subscriber has gone). */
static void write_record(int fd, const op_record *record)
{
    (void)nn_write_all(fd, record, sizeof *record);
}

void nn_prof_subscription_deliver(const char *op_type, int32_t device, uint64_t begin_ns, uint64_t end_ns,
                                  int32_t thread)
{
    pthread_mutex_lock(&g_lock);
    uint64_t op_index = ++g_next_op_index;
    for (size_t i = 0; i < g_sub_count; i++) {
        if (g_subs[i].device != device)
            continue;
        op_record record;
        fill_record(&record, g_subs[i].model_id, op_type, device, begin_ns, end_ns, thread, op_index);
        write_record(g_subs[i].fd, &record);
    }
    pthread_mutex_unlock(&g_lock);
}

/* ---- the getters -------------------------------------------------------------------------- */

MSVP_PROF_API aclError aclprofGetOpDescSize(size_t *opDescSize)
{
    if (opDescSize == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofGetOpDescSize: opDescSize must not be null.");
    *opDescSize = sizeof(op_record);
    return ACL_SUCCESS;
}

/* The record `index` of a buffer read from a subscription's pipe, or NULL after an error naming `api`. */
static const op_record *record_at(const char *api, const void *opInfo, size_t opInfoLen, uint32_t index)
{
    if (opInfo == NULL) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: opInfo must not be null.", api);
        return NULL;
    }
    if (opInfoLen == 0 || opInfoLen % sizeof(op_record) != 0) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: opInfoLen %zu is not a whole number of %zu-byte records.", api,
                    opInfoLen, sizeof(op_record));
        return NULL;
    }
    if ((uint64_t)index >= opInfoLen / sizeof(op_record)) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: index %u is past the %zu records.", api, index,
                    opInfoLen / sizeof(op_record));
        return NULL;
    }
    const op_record *record = (const op_record *)((const char *)opInfo + (size_t)index * sizeof(op_record));
    if (record->signature != RECORD_SIGNATURE) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: opInfo does not hold records read from a subscription's pipe.",
                    api);
        return NULL;
    }
    return record;
}

MSVP_PROF_API aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber)
{
    if (opNumber == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclprofGetOpNum: opNumber must not be null.");
    if (record_at("aclprofGetOpNum", opInfo, opInfoLen, 0) == NULL)
        return ACL_ERROR_INVALID_PARAM;
    *opNumber = (uint32_t)(opInfoLen / sizeof(op_record));
    return ACL_SUCCESS;
}

static aclError text_length(const char *api, const void *opInfo, size_t opInfoLen, uint32_t index, bool name,
                            size_t *length)
{
    if (length == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the length pointer must not be null.", api);
    const op_record *record = record_at(api, opInfo, opInfoLen, index);
    if (record == NULL)
        return ACL_ERROR_INVALID_PARAM;
    *length = strlen(name ? record->op_name : record->op_type) + 1; /* with the '\0', as CANN */
    return ACL_SUCCESS;
}

/* Copies a record's text into out[size]: cut to size - 1 characters and terminated, as CANN. */
static aclError copy_text(const char *api, const void *opInfo, size_t opInfoLen, uint32_t index, bool name,
                          char *out, size_t size)
{
    if (out == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the output buffer must not be null or empty.", api);
    const op_record *record = record_at(api, opInfo, opInfoLen, index);
    if (record == NULL)
        return ACL_ERROR_INVALID_PARAM;
    snprintf(out, size, "%s", name ? record->op_name : record->op_type);
    return ACL_SUCCESS;
}

MSVP_PROF_API aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opTypeLen)
{
    return text_length("aclprofGetOpTypeLen", opInfo, opInfoLen, index, false, opTypeLen);
}

MSVP_PROF_API aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
                                        size_t opTypeLen)
{
    return copy_text("aclprofGetOpType", opInfo, opInfoLen, index, false, opType, opTypeLen);
}

MSVP_PROF_API aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index, size_t *opNameLen)
{
    return text_length("aclprofGetOpNameLen", opInfo, opInfoLen, index, true, opNameLen);
}

MSVP_PROF_API aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
                                        size_t opNameLen)
{
    return copy_text("aclprofGetOpName", opInfo, opInfoLen, index, true, opName, opNameLen);
}

MSVP_PROF_API uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    const op_record *record = record_at("aclprofGetOpStart", opInfo, opInfoLen, index);
    return record != NULL ? record->start_ns : 0;
}

MSVP_PROF_API uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    const op_record *record = record_at("aclprofGetOpEnd", opInfo, opInfoLen, index);
    return record != NULL ? record->end_ns : 0;
}

MSVP_PROF_API uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    const op_record *record = record_at("aclprofGetOpDuration", opInfo, opInfoLen, index);
    return record != NULL ? record->end_ns - record->start_ns : 0;
}

MSVP_PROF_API size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    const op_record *record = record_at("aclprofGetModelId", opInfo, opInfoLen, index);
    return record != NULL ? record->model_id : 0;
}

MSVP_PROF_API aclprofSubscribeOpFlag aclprofGetOpFlag(const void *opInfo, size_t opInfoLen, uint32_t index)
{
    const op_record *record = record_at("aclprofGetOpFlag", opInfo, opInfoLen, index);
    return record != NULL ? (aclprofSubscribeOpFlag)record->flag : ACL_SUBSCRIBE_NONE;
}

MSVP_PROF_API const char *aclprofGetOpAttriValue(const void *opInfo, size_t opInfoLen, uint32_t index,
                                                 aclprofSubscribeOpAttri attri)
{
    const char *api = "aclprofGetOpAttriValue";
    if (attri != ACL_SUBSCRIBE_ATTRI_THREADID) {
        nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: attri must be ACL_SUBSCRIBE_ATTRI_THREADID (0), got %d.", api,
                    (int)attri);
        return NULL;
    }
    const op_record *record = record_at(api, opInfo, opInfoLen, index);
    return record != NULL ? record->thread_text : NULL;
}
