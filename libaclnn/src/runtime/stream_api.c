/*
 * stream_api.c - the stream functions that need no stream internals: create and synchronize
 * (stream.c keeps the queue, the worker, destroy and query), and stream configurations.
 */
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"

static aclError create_stream(const char *api, aclrtStream *stream, uint32_t flags, uint32_t priority)
{
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: stream must not be null.", api);
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    if (ctx == NULL) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "%s: this thread has no current context; call aclrtSetDevice or "
                           "aclrtSetCurrentContext first.", api);
    }
    aclError err;
    nn_stream *s = nn_stream_new_locked(ctx, false, flags, &err);
    pthread_mutex_unlock(&nn_rt_lock);
    if (s == NULL)
        return err;
    nn_stream_set_priority(s, priority);
    nn_check_object_created(s, "aclrtStream", api, true);
    *stream = s;
    nn_state_stream_notify(s, ACL_RT_STREAM_STATE_CREATE_POST);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream)
{
    return create_stream("aclrtCreateStream", stream, 0, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                                         uint32_t flag)
{
    /* priority is documented as reserved and flags only tune NPU scheduling: both accepted, and
     * read back by aclrtStreamGetPriority / aclrtStreamGetFlags. */
    return create_stream("aclrtCreateStreamWithConfig", stream, flag, priority);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream)
{
    nn_stream *s;
    aclError ret = nn_stream_acquire_named("aclrtSynchronizeStream", stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    ret = nn_stream_wait(s, NULL, 0, "aclrtSynchronizeStream", -1);
    nn_stream_unref(s);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    if (timeout < -1)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtSynchronizeStreamWithTimeout: timeout must be -1 (forever) or "
                           ">= 0 ms, got %d.", (int)timeout);
    nn_stream *s;
    aclError ret = nn_stream_acquire_named("aclrtSynchronizeStreamWithTimeout", stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    struct timespec deadline;
    if (timeout >= 0)
        nn_rt_deadline(&deadline, timeout);
    ret = nn_stream_wait(s, timeout >= 0 ? &deadline : NULL, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                         "aclrtSynchronizeStreamWithTimeout", timeout);
    nn_stream_unref(s);
    return ret;
}

/* ------------------------------------------------------------------------------------------ */
/* Stream configurations (aclrtCreateStreamV2)                                                 */
/* ------------------------------------------------------------------------------------------ */

/* A configuration is CANN's public struct (work memory, flag, priority), owned by the caller
 * until aclrtDestroyStreamConfigHandle.  Work memory is accepted and unused: a stream here needs
 * no device memory of its own. */
ACL_FUNC_VISIBILITY aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)
{
    aclrtStreamConfigHandle *handle = calloc(1, sizeof *handle);
    if (handle == NULL)
        nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateStreamConfigHandle: out of memory.");
    return handle;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)
{
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStreamConfigHandle: handle must not be null.");
    free(handle);
    return ACL_SUCCESS;
}

/* Reads an unsigned value of 4 or 8 bytes (flags and priorities come as uint32_t or size_t). */
static bool read_unsigned(const void *value, size_t size, uint64_t *out)
{
    if (size == sizeof(uint32_t)) {
        uint32_t narrow;
        memcpy(&narrow, value, sizeof narrow);
        *out = narrow;
        return true;
    }
    if (size == sizeof(uint64_t)) {
        memcpy(out, value, sizeof *out);
        return true;
    }
    return false;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr,
                                                     const void *attrValue, size_t valueSize)
{
    static const char api[] = "aclrtSetStreamConfigOpt";
    if (handle == NULL || attrValue == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           handle == NULL ? "handle" : "attrValue");
    uint64_t number = 0;
    switch (attr) {
    case ACL_RT_STREAM_WORK_ADDR_PTR: /* the address of the pointer, as CANN documents */
        if (valueSize != sizeof handle->workptr)
            break;
        memcpy(&handle->workptr, attrValue, sizeof handle->workptr);
        return ACL_SUCCESS;
    case ACL_RT_STREAM_WORK_SIZE:
    case ACL_RT_STREAM_FLAG:
    case ACL_RT_STREAM_PRIORITY:
        if (!read_unsigned(attrValue, valueSize, &number))
            break;
        if (attr == ACL_RT_STREAM_WORK_SIZE)
            handle->workSize = (size_t)number;
        else if (attr == ACL_RT_STREAM_FLAG)
            handle->flag = (size_t)number;
        else
            handle->priority = (uint32_t)number;
        return ACL_SUCCESS;
    default:
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: attr must be an aclrtStreamConfigAttr (0-3), got %d.",
                           api, (int)attr);
    }
    return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: valueSize %zu does not fit attribute %d (a pointer, or a "
                       "4- or 8-byte number).", api, valueSize, (int)attr);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle)
{
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamV2: handle must not be null.");
    /* as aclrtCreateStreamWithConfig: the priority is reserved, the flags only tune NPU scheduling */
    return create_stream("aclrtCreateStreamV2", stream, (uint32_t)handle->flag, handle->priority);
}
