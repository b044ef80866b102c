/*
 * rt_res_limit.c - resource limits: how many cube / vector cores a device, a stream or the
 * calling thread may use (aclrt{Get,Set,Reset}DeviceResLimit, aclrt{Get,Set,Reset}StreamResLimit,
 * aclrtUseStreamResInCurrentThread / aclrtUnuseStreamResInCurrentThread,
 * aclrtGetResInCurrentThread).
 *
 * As CANN's runtime has them (runtime:src/runtime/api/impl/api_impl.cc, SetDeviceResLimit,
 * GetResInCurrentThread): a device's limit starts at its core count and may be set to at most
 * that (107000 above it); a stream's limit, once set, wins for a thread that uses the stream's
 * resources; otherwise a thread gets its current device's limit.  The type is
 * ACL_RT_DEV_RES_CUBE_CORE or ACL_RT_DEV_RES_VECTOR_CORE (107000 otherwise); a null value 100000.
 * libaclnn's core count is its operator thread count (nn_rt_operator_cores), cube and vector
 * alike.  The limits are kept and reported; the kernels still use every operator thread.
 */
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define RES_TYPES 2

static _Atomic uint32_t g_device_limit[NN_RT_MAX_DEVICES][RES_TYPES]; /* 0: the core count */
static _Thread_local const nn_stream *t_res_stream; /* aclrtUseStreamResInCurrentThread */

static aclError check_type(const char *api, aclrtDevResLimitType type)
{
    if ((unsigned)type >= RES_TYPES)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: type %d must be ACL_RT_DEV_RES_CUBE_CORE (0) or "
                           "ACL_RT_DEV_RES_VECTOR_CORE (1).", api, (int)type);
    return ACL_SUCCESS;
}

static aclError check_value(const char *api, uint32_t value)
{
    const int64_t cores = nn_rt_operator_cores();
    if ((int64_t)value > cores)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: value %u must be less than or equal to %lld, the "
                           "total number of cores.", api, value, (long long)cores);
    return ACL_SUCCESS;
}

static uint32_t device_limit(int32_t device, aclrtDevResLimitType type)
{
    const uint32_t set = atomic_load(&g_device_limit[device][type]);
    return set != 0 ? set : (uint32_t)nn_rt_operator_cores();
}

static nn_stream_attr stream_attr(aclrtDevResLimitType type)
{
    return type == ACL_RT_DEV_RES_CUBE_CORE ? NN_STREAM_ATTR_CUBE_LIMIT : NN_STREAM_ATTR_VECTOR_LIMIT;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetDeviceResLimit";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    aclError err = check_type(api, type);
    if (err == ACL_SUCCESS)
        err = nn_rt_check_device(api, deviceId);
    if (err == ACL_SUCCESS)
        *value = device_limit(deviceId, type);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)
{
    static const char api[] = "aclrtSetDeviceResLimit";
    aclError err = check_type(api, type);
    if (err == ACL_SUCCESS)
        err = nn_rt_check_device(api, deviceId);
    if (err == ACL_SUCCESS)
        err = check_value(api, value);
    if (err == ACL_SUCCESS)
        atomic_store(&g_device_limit[deviceId][type], value == 0 ? 0 : value); /* 0 cores: as none set */
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId)
{
    aclError err = nn_rt_check_device("aclrtResetDeviceResLimit", deviceId);
    for (int type = 0; err == ACL_SUCCESS && type < RES_TYPES; type++)
        atomic_store(&g_device_limit[deviceId][type], 0u);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetStreamResLimit";
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    nn_stream *s;
    aclError err = check_type(api, type);
    if (err == ACL_SUCCESS)
        err = nn_stream_resolve_named(api, stream, &s);
    if (err != ACL_SUCCESS)
        return err;
    const uint64_t set = nn_stream_attr_get(s, stream_attr(type));
    *value = set != 0 ? (uint32_t)set : device_limit(nn_stream_context(s)->device, type);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)
{
    static const char api[] = "aclrtSetStreamResLimit";
    nn_stream *s;
    aclError err = check_type(api, type);
    if (err == ACL_SUCCESS)
        err = check_value(api, value);
    if (err == ACL_SUCCESS)
        err = nn_stream_resolve_named(api, stream, &s);
    if (err == ACL_SUCCESS && !nn_stream_attr_set(s, stream_attr(type), value))
        err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream)
{
    static const char api[] = "aclrtResetStreamResLimit";
    nn_stream *s;
    aclError err = nn_stream_resolve_named(api, stream, &s);
    if (err == ACL_SUCCESS) {
        nn_stream_attr_set(s, NN_STREAM_ATTR_CUBE_LIMIT, 0); /* setting 0 never allocates */
        nn_stream_attr_set(s, NN_STREAM_ATTR_VECTOR_LIMIT, 0);
    }
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)
{
    nn_stream *s;
    aclError err = nn_stream_resolve_named("aclrtUseStreamResInCurrentThread", stream, &s);
    if (err == ACL_SUCCESS)
        t_res_stream = s;
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)
{
    nn_stream *s;
    aclError err = nn_stream_resolve_named("aclrtUnuseStreamResInCurrentThread", stream, &s);
    if (err == ACL_SUCCESS && t_res_stream == s)
        t_res_stream = NULL;
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)
{
    static const char api[] = "aclrtGetResInCurrentThread";
    if (value == NULL) /* CANN's acl layer checks this before the runtime checks the type */
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: value must not be null.", api);
    aclError err = check_type(api, type);
    if (err != ACL_SUCCESS)
        return err;
    nn_stream *current = NULL;
    /* the stream this thread uses, if it is still alive and has a limit of that type */
    if (t_res_stream != NULL && nn_stream_resolve_named(api, (aclrtStream)t_res_stream, &current) == ACL_SUCCESS) {
        const uint64_t set = nn_stream_attr_get(current, stream_attr(type));
        if (set != 0) {
            *value = (uint32_t)set;
            return ACL_SUCCESS;
        }
    }
    err = nn_stream_resolve_named(api, NULL, &current); /* the current context's device */
    if (err == ACL_SUCCESS)
        *value = device_limit(nn_stream_context(current)->device, type);
    return err;
}
