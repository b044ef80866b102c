/*
 * stream_api.c - the stream functions that need no stream internals: create and synchronize
 * (stream.c keeps the queue, the worker, destroy and query).
 */
#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"

static aclError create_stream(const char *api, aclrtStream *stream, uint32_t flags)
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
    nn_check_object_created(s, "aclrtStream", api, true);
    *stream = s;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream)
{
    return create_stream("aclrtCreateStream", stream, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                                         uint32_t flag)
{
    /* priority is documented as reserved and flags only tune NPU scheduling: both accepted. */
    (void)priority;
    return create_stream("aclrtCreateStreamWithConfig", stream, flag);
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
