/*
 * rt_abort.c - dropping the queued work of a stream or of a device (aclrtStreamAbort,
 * aclrtStreamStop, aclrtDeviceTaskAbort).
 *
 * CANN documents aclrtStreamAbort as "abort unexecuted tasks and pause executing tasks on the
 * stream" and aclrtDeviceTaskAbort as stopping the tasks of a device, which is usable again
 * afterwards (runtime:src/runtime/core/src/context/context_manage.cc, DeviceTaskAbort: abort,
 * kill, clean).  On the CPU a stream's tasks that have not started are dropped (released, never
 * run: an event record among them settles as CANN's aborted tasks do), a task blocked on an event
 * or a notify gives up, and the task running finishes first (a CPU operator cannot be paused
 * midway); the stream's pending error is forgotten and it takes new work at once.  A
 * synchronize waiting on the stream returns when the dropped tasks are counted.
 * aclrtStreamStop (CANN: the "stop" step of a stream clear) does the same to one stream.
 * None may be called from a task of a stream it would wait for: 107000.
 */
#include <stdlib.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

/* CANN's limit on aclrtDeviceTaskAbort's timeout (runtime:src/runtime/api/impl/api_error.cc,
 * TASK_ABORT_TIMEOUT_MAX): 36 minutes, in ms. */
#define TASK_ABORT_TIMEOUT_MAX_MS (36u * 60u * 1000u)

static aclError refuse_own_stream(const char *api, const nn_stream *s)
{
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: called from a task of stream %p, which it would wait for "
                       "(a host function or blocking callback must not abort its own stream).", api, (void *)s);
}

static aclError abort_stream(const char *api, aclrtStream stream)
{
    nn_stream *s;
    aclError ret = nn_stream_acquire_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    if (nn_stream_runs_here(s))
        ret = refuse_own_stream(api, s);
    else
        (void)nn_stream_abort_queued(s);
    nn_stream_unref(s);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamAbort(aclrtStream stream)
{
    /* CANN's api_error.cc takes a null stream as the current context's default stream */
    return abort_stream("aclrtStreamAbort", stream);
}

ACL_FUNC_VISIBILITY aclError aclrtStreamStop(aclrtStream stream)
{
    if (stream == NULL) /* CANN's api_error.cc, StreamStop: no default stream here */
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtStreamStop: stream must not be null.");
    return abort_stream("aclrtStreamStop", stream);
}

/* The streams of `device`, each with a reference; refuses (107000) when this thread runs a task
 * of one of them. */
static aclError device_streams(const char *api, int32_t device, nn_stream ***streams, size_t *count)
{
    *streams = NULL;
    *count = 0;
    pthread_mutex_lock(&nn_rt_lock);
    bool ok = nn_stream_collect_device_locked(device, streams, count);
    pthread_mutex_unlock(&nn_rt_lock);
    aclError ret = ok ? ACL_SUCCESS : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    for (size_t i = 0; i < *count && ret == ACL_SUCCESS; i++)
        if (nn_stream_runs_here((*streams)[i]))
            ret = refuse_own_stream(api, (*streams)[i]);
    return ret;
}

/* What is left of `timeout` ms (0: no limit) after `start_ns`; false once it is used up. */
static bool time_left(uint32_t timeout, uint64_t start_ns, uint32_t *left)
{
    uint64_t spent_ms = (nn_rt_now_ns() - start_ns) / 1000000u;
    *left = timeout == 0 ? 0 : (spent_ms >= timeout ? 0 : timeout - (uint32_t)spent_ms);
    return timeout == 0 || spent_ms < timeout;
}

static aclError abort_timed_out(uint32_t timeout)
{
    return nn_rt_error(ACL_ERROR_RT_WAIT_TIMEOUT, "aclrtDeviceTaskAbort: the abort took longer than timeout %u ms.",
                       timeout);
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)
{
    static const char api[] = "aclrtDeviceTaskAbort";
    if (timeout > TASK_ABORT_TIMEOUT_MAX_MS)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: timeout %u ms must be in [0, %u] (0: no limit).", api,
                           timeout, TASK_ABORT_TIMEOUT_MAX_MS);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    const uint64_t start_ns = nn_rt_now_ns();
    nn_stream **streams;
    size_t count;
    uint32_t left = timeout;
    ret = device_streams(api, deviceId, &streams, &count);
    if (ret == ACL_SUCCESS)
        ret = nn_state_task_abort_notify(deviceId, ACL_RT_DEVICE_TASK_ABORT_PRE, left);
    for (size_t i = 0; i < count && ret == ACL_SUCCESS; i++)
        (void)nn_stream_abort_queued(streams[i]);
    if (ret == ACL_SUCCESS && !time_left(timeout, start_ns, &left))
        ret = abort_timed_out(timeout);
    if (ret == ACL_SUCCESS)
        ret = nn_state_task_abort_notify(deviceId, ACL_RT_DEVICE_TASK_ABORT_POST, left);
    if (ret == ACL_SUCCESS && !time_left(timeout, start_ns, &left))
        ret = abort_timed_out(timeout);
    for (size_t i = 0; i < count; i++)
        nn_stream_unref(streams[i]);
    free(streams);
    return ret;
}
