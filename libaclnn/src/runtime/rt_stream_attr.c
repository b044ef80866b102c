/*
 * rt_stream_attr.c - stream attributes (aclrtSetStreamAttribute / aclrtGetStreamAttribute) and
 * the per-stream values other runtime files keep (the overflow switch, rt_overflow.c; the
 * failure mode, rt_misc.c).
 *
 * stream.c holds a stream's queue and worker; what a program only sets and reads back lives
 * here, in a small table keyed by the stream, dropped when the stream goes (stream.c's
 * nn_allocator_forget_stream hook calls nn_stream_attr_forget), so a new stream at the same
 * address starts with zeros.  As CANN's rtsStreamSetAttribute / rtsStreamGetAttribute
 * (runtime:src/runtime/api/api_c_stream.cc) dispatch them:
 *   FAILURE_MODE          aclrtSetStreamFailureMode (0 continue, 1 stop; 100000 otherwise)
 *   FLOAT_OVERFLOW_CHECK  aclrtSetStreamOverflowSwitch / Get (rt_overflow.c)
 *   USER_CUSTOM_TAG       kept and read back
 *   CACHE_OP_INFO         kept and read back; aclrtCacheLastTaskOpInfo reads it (model_ri_info.c)
 *   PRIORITY              clamped to [0, 7] as CANN's SetStreamPriorityValue; it becomes the
 *                         stream's priority (aclrtStreamGetPriority reads it, as the creation
 *                         value); the worker threads have no priorities
 * Another attribute: 107000.
 */
#include <stdlib.h>

#include "runtime/nn_rt_internal.h"

typedef struct attr_record {
    const nn_stream *stream;
    uint64_t values[NN_STREAM_ATTR_COUNT];
} attr_record;

static pthread_mutex_t g_attr_lock = PTHREAD_MUTEX_INITIALIZER;
static attr_record *g_records;
static size_t g_num_records, g_cap_records;
static _Atomic size_t g_records_live; /* lets a launch skip the lock when nothing was ever set */

static attr_record *find_locked(const nn_stream *stream)
{
    for (size_t i = 0; i < g_num_records; i++)
        if (g_records[i].stream == stream)
            return &g_records[i];
    return NULL;
}

bool nn_stream_attr_set(const nn_stream *stream, nn_stream_attr id, uint64_t value)
{
    pthread_mutex_lock(&g_attr_lock);
    attr_record *r = find_locked(stream);
    if (r == NULL && value != 0) {
        void *grown = nn_sorted_insert(g_records, &g_num_records, &g_cap_records, 8, sizeof *g_records,
                                       g_num_records, &(attr_record){stream, {0}});
        if (grown != NULL) {
            g_records = grown;
            r = &g_records[g_num_records - 1];
        }
    }
    if (r != NULL)
        r->values[id] = value;
    atomic_store(&g_records_live, g_num_records);
    pthread_mutex_unlock(&g_attr_lock);
    return r != NULL || value == 0;
}

uint64_t nn_stream_attr_get(const nn_stream *stream, nn_stream_attr id)
{
    if (atomic_load(&g_records_live) == 0)
        return 0;
    pthread_mutex_lock(&g_attr_lock);
    const attr_record *r = find_locked(stream);
    const uint64_t value = r != NULL ? r->values[id] : 0;
    pthread_mutex_unlock(&g_attr_lock);
    return value;
}

void nn_stream_attr_forget(const nn_stream *stream)
{
    pthread_mutex_lock(&g_attr_lock);
    attr_record *r = find_locked(stream);
    if (r != NULL)
        nn_sorted_remove(g_records, &g_num_records, sizeof *g_records, (size_t)(r - g_records));
    if (g_num_records == 0) {
        free(g_records);
        g_records = NULL;
        g_cap_records = 0;
    }
    atomic_store(&g_records_live, g_num_records);
    pthread_mutex_unlock(&g_attr_lock);
}

#define PRIORITY_GREATEST 0 /* CANN's RT_STREAM_GREATEST_PRIORITY .. RT_STREAM_LEAST_PRIORITY */
#define PRIORITY_LEAST 7

static aclError set_kept(const char *api, aclrtStream stream, nn_stream_attr id, uint64_t value)
{
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err == ACL_SUCCESS && !nn_stream_attr_set(s, id, value))
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue *value)
{
    static const char api[] = "aclrtSetStreamAttribute";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FAILURE_MODE:
        return aclrtSetStreamFailureMode(stream, value->failureMode);
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        return aclrtSetStreamOverflowSwitch(stream, value->overflowSwitch);
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        return set_kept(api, stream, NN_STREAM_ATTR_TAG, value->userCustomTag);
    case ACL_STREAM_ATTR_CACHE_OP_INFO:
        return set_kept(api, stream, NN_STREAM_ATTR_CACHE_OP_INFO, value->cacheOpInfoSwitch);
    case ACL_STREAM_ATTR_PRIORITY: {
        const int32_t asked = (int32_t)value->streamPriority;
        const int32_t kept = asked < PRIORITY_GREATEST ? PRIORITY_GREATEST : asked > PRIORITY_LEAST ? PRIORITY_LEAST : asked;
        nn_stream *s;
        aclError err = nn_stream_resolve_named(api, stream, &s);
        if (err == ACL_SUCCESS)
            nn_stream_set_priority(s, (uint32_t)kept);
        return err;
    }
    default:
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: stmAttrType %d must be in [%d, %d].", api,
                           (int)stmAttrType, ACL_STREAM_ATTR_FAILURE_MODE, ACL_STREAM_ATTR_PRIORITY);
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue *value)
{
    static const char api[] = "aclrtGetStreamAttribute";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    if (stmAttrType == ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK)
        return aclrtGetStreamOverflowSwitch(stream, &value->overflowSwitch);
    if (stmAttrType == ACL_STREAM_ATTR_PRIORITY)
        return aclrtStreamGetPriority(stream, &value->streamPriority);
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FAILURE_MODE:
        value->failureMode = nn_stream_attr_get(s, NN_STREAM_ATTR_FAILURE_MODE);
        return ACL_SUCCESS;
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        value->userCustomTag = (uint32_t)nn_stream_attr_get(s, NN_STREAM_ATTR_TAG);
        return ACL_SUCCESS;
    case ACL_STREAM_ATTR_CACHE_OP_INFO:
        value->cacheOpInfoSwitch = (uint32_t)nn_stream_attr_get(s, NN_STREAM_ATTR_CACHE_OP_INFO);
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: stmAttrType %d must be in [%d, %d].", api,
                           (int)stmAttrType, ACL_STREAM_ATTR_FAILURE_MODE, ACL_STREAM_ATTR_PRIORITY);
    }
}
