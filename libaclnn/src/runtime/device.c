/*
 * device.c - devices: how many there are, which one a thread uses, and device-wide operations.
 *
 * The devices are the host CPU seen `count` times: count is the number of entries of
 * ASCEND_RT_VISIBLE_DEVICES (CANN re-indexes visible devices from 0), or 1 when it is unset
 * or empty.  aclrtSetDevice is reference counted per device; the device's default context
 * (with its default stream) lives while the count is above zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"

typedef struct nn_device {
    uint64_t refcount;
    nn_context *default_context;
} nn_device;

static nn_device g_devices[NN_RT_MAX_DEVICES]; /* under nn_rt_lock */

/* ------------------------------------------------------------------------------------------ */
/* Device count                                                                                */
/* ------------------------------------------------------------------------------------------ */

static pthread_once_t g_count_once = PTHREAD_ONCE_INIT;
static uint32_t g_device_count = 1;

static void read_visible_devices(void)
{
    const char *visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (visible == NULL)
        return;
    uint32_t entries = 0;
    bool in_entry = false;
    for (const char *p = visible; *p != '\0'; p++) {
        if (*p == ',') {
            in_entry = false;
        } else if (*p != ' ' && !in_entry) {
            in_entry = true;
            entries++;
        }
    }
    if (entries > NN_RT_MAX_DEVICES)
        entries = NN_RT_MAX_DEVICES;
    if (entries > 0)
        g_device_count = entries;
}

uint32_t nn_rt_device_count(void)
{
    pthread_once(&g_count_once, read_visible_devices);
    return g_device_count;
}

/* int64_t holds every caller's id type (int32_t and uint32_t) without wrapping. */
aclError nn_rt_check_device(const char *api, int64_t deviceId)
{
    uint32_t count = nn_rt_device_count();
    if (deviceId < 0 || deviceId >= (int64_t)count)
        return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID,
                           "%s: deviceId must be in [0, %u) (ASCEND_RT_VISIBLE_DEVICES sets the "
                           "count), got %lld.", api, count, (long long)deviceId);
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Set / reset                                                                                 */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId)
{
    aclError ret = nn_rt_check_device("aclrtSetDevice", deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&nn_rt_lock);
    const bool opening = g_devices[deviceId].default_context == NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    if (opening) /* the state callbacks run without the lock (they may call the runtime) */
        nn_state_device_notify(deviceId, ACL_RT_DEVICE_STATE_SET_PRE);
    pthread_mutex_lock(&nn_rt_lock);
    nn_device *dev = &g_devices[deviceId];
    nn_stream *new_default = NULL; /* referenced until its creation is told */
    if (dev->default_context == NULL) {
        dev->default_context = nn_rt_context_new_locked(deviceId, true, &ret);
        if (dev->default_context == NULL) {
            pthread_mutex_unlock(&nn_rt_lock);
            return ret;
        }
        new_default = dev->default_context->default_stream;
        nn_stream_ref_locked(new_default);
    }
    dev->refcount++;
    nn_rt_set_current_context_locked(dev->default_context);
    pthread_mutex_unlock(&nn_rt_lock);
    if (new_default != NULL) {
        nn_state_stream_notify(new_default, ACL_RT_STREAM_STATE_CREATE_POST);
        nn_stream_unref(new_default);
    }
    nn_state_device_notify(deviceId, ACL_RT_DEVICE_STATE_SET_POST);
    return ACL_SUCCESS;
}

static aclError reset_device(const char *api, int32_t deviceId, bool all_references)
{
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    nn_teardown td = {0};
    bool ok = true;
    pthread_mutex_lock(&nn_rt_lock);
    nn_device *dev = &g_devices[deviceId];
    if (dev->refcount == 0) {
        /* Nothing to release: CANN tolerates a reset of an unused device. */
        pthread_mutex_unlock(&nn_rt_lock);
        nn_log(NN_LOG_WARNING, "%s: device %d was not set; nothing to reset.", api, (int)deviceId);
        return ACL_SUCCESS;
    }
    nn_stream *own = NULL;
    if ((all_references || dev->refcount == 1) && dev->default_context != NULL)
        own = nn_stream_running_here_locked(dev->default_context);
    if (own != NULL) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: called from a task (host function or blocking callback) of stream "
                           "%p, which runs on device %d's default context: the reset would "
                           "release that stream while its task runs.", api, (void *)own,
                           (int)deviceId);
    }
    dev->refcount = all_references ? 0 : dev->refcount - 1;
    if (dev->refcount == 0 && dev->default_context != NULL) {
        ok = nn_rt_context_detach_locked(dev->default_context, &td);
        dev->default_context = NULL;
    }
    pthread_mutex_unlock(&nn_rt_lock);
    const bool released = td.num_contexts > 0;
    if (released)
        nn_state_device_notify(deviceId, ACL_RT_DEVICE_STATE_RESET_PRE);
    nn_rt_teardown(&td, false);
    if (released)
        nn_state_device_notify(deviceId, ACL_RT_DEVICE_STATE_RESET_POST);
    if (!ok)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId)
{
    return reset_device("aclrtResetDevice", deviceId, false);
}

ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset_device("aclrtResetDeviceForce", deviceId, true);
}

void nn_rt_devices_finalize(void)
{
    nn_teardown td = {0};
    bool was_set[NN_RT_MAX_DEVICES];
    pthread_mutex_lock(&nn_rt_lock);
    for (int i = 0; i < NN_RT_MAX_DEVICES; i++) {
        was_set[i] = g_devices[i].default_context != NULL;
        g_devices[i].refcount = 0;
        g_devices[i].default_context = NULL;
    }
    bool ok = nn_rt_context_detach_all_locked(&td);
    pthread_mutex_unlock(&nn_rt_lock);
    for (int i = 0; i < NN_RT_MAX_DEVICES; i++) /* aclFinalize resets the devices still set */
        if (was_set[i])
            nn_state_device_notify(i, ACL_RT_DEVICE_STATE_RESET_PRE);
    nn_rt_teardown(&td, false);
    for (int i = 0; i < NN_RT_MAX_DEVICES; i++)
        if (was_set[i])
            nn_state_device_notify(i, ACL_RT_DEVICE_STATE_RESET_POST);
    if (!ok)
        nn_log(NN_LOG_ERROR, "aclFinalize: out of memory; some contexts were not released.");
}

void nn_rt_devices_release_at_exit(void)
{
    nn_teardown td = {0};
    pthread_mutex_lock(&nn_rt_lock);
    for (int i = 0; i < NN_RT_MAX_DEVICES; i++) {
        g_devices[i].refcount = 0;
        g_devices[i].default_context = NULL;
    }
    bool ok = nn_rt_context_detach_all_locked(&td);
    pthread_mutex_unlock(&nn_rt_lock);
    bool all_stopped = ok;
    for (size_t i = 0; i < td.num_streams; i++)
        all_stopped &= nn_stream_shutdown_at_exit(td.streams[i]);
    /* Contexts may only go when no worker that could still look at them is left running. */
    for (size_t i = 0; all_stopped && i < td.num_contexts; i++)
        free(td.contexts[i]);
    free(td.streams);
    free(td.contexts);
}

/* ------------------------------------------------------------------------------------------ */
/* Queries                                                                                     */
/* ------------------------------------------------------------------------------------------ */

bool nn_rt_device_is_set(int32_t device)
{
    pthread_mutex_lock(&nn_rt_lock);
    bool set = g_devices[device].default_context != NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    return set;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId)
{
    if (deviceId == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    int32_t device = ctx ? ctx->device : -1;
    pthread_mutex_unlock(&nn_rt_lock);
    if (ctx == NULL)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtGetDevice: no device is set on this thread; call "
                           "aclrtSetDevice first.");
    *deviceId = device;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (count == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count must not be null.");
    *count = nn_rt_device_count();
    return ACL_SUCCESS;
}

/* Total and available host memory in bytes. */
static void host_memory(size_t *free_bytes, size_t *total_bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    long avail_pages = sysconf(_SC_AVPHYS_PAGES);
    *total_bytes = (pages > 0 && page_size > 0) ? (size_t)pages * (size_t)page_size : 0;
    *free_bytes = (avail_pages > 0 && page_size > 0) ? (size_t)avail_pages * (size_t)page_size : 0;
    /* MemAvailable (free + reclaimable caches) is what an allocation can really get. */
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (meminfo == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, meminfo) != NULL) {
        unsigned long long kib;
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            *free_bytes = (size_t)kib * 1024u;
            break;
        }
    }
    fclose(meminfo);
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
    if (free == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: free must not be null.");
    if (total == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: total must not be null.");
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_MEM_P2P_HUGE1G)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtGetMemInfo: attr must be an aclrtMemAttr in [0, %d], got %d.",
                           (int)ACL_MEM_P2P_HUGE1G, (int)attr);
    pthread_mutex_lock(&nn_rt_lock);
    bool have_device = nn_rt_current_context_locked() != NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    if (!have_device)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtGetMemInfo: no device is set on this thread; call "
                           "aclrtSetDevice first.");
    switch (attr) {
    case ACL_DDR_MEM_P2P_HUGE:
    case ACL_DDR_MEM_P2P_NORMAL:
    case ACL_HBM_MEM_P2P_HUGE:
    case ACL_HBM_MEM_P2P_NORMAL:
    case ACL_HBM_MEM_HUGE1G:
    case ACL_HBM_MEM_P2P_HUGE1G:
    case ACL_MEM_HUGE1G:
    case ACL_MEM_P2P_NORMAL:
    case ACL_MEM_P2P_HUGE:
    case ACL_MEM_P2P_HUGE1G:
        /* No peer-to-peer or 1 GiB-page pools on the host: CANN reports 0/0 for kinds the
         * hardware lacks. */
        *free = 0;
        *total = 0;
        break;
    default:
        host_memory(free, total);
        break;
    }
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Device-wide synchronize                                                                     */
/* ------------------------------------------------------------------------------------------ */

static aclError synchronize_device(const char *api, int32_t timeout)
{
    nn_stream **streams = NULL;
    size_t count = 0;
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    bool ok = ctx != NULL && nn_stream_collect_device_locked(ctx->device, &streams, &count);
    pthread_mutex_unlock(&nn_rt_lock);
    if (ctx == NULL)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "%s: no device is set on this thread; call aclrtSetDevice first.", api);

    struct timespec deadline;
    if (timeout >= 0)
        nn_rt_deadline(&deadline, timeout);
    aclError first = ok ? ACL_SUCCESS
                        : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    for (size_t i = 0; i < count; i++) {
        aclError ret = ACL_SUCCESS;
        if (first != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
            ret = nn_stream_wait(streams[i], timeout >= 0 ? &deadline : NULL,
                                 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, api, timeout);
        if (first == ACL_SUCCESS)
            first = ret;
        nn_stream_unref(streams[i]);
    }
    free(streams);
    return first;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void)
{
    return synchronize_device("aclrtSynchronizeDevice", -1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    if (timeout < -1)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtSynchronizeDeviceWithTimeout: timeout must be -1 (forever) or "
                           ">= 0 ms, got %d.", (int)timeout);
    return synchronize_device("aclrtSynchronizeDeviceWithTimeout", timeout);
}

/* ------------------------------------------------------------------------------------------ */
/* Overflow (saturation) mode: base keeps it (nn_overflow_saturates), operators read it at      */
/* phase 1 (docs/precision.md, "Overflow mode")                                               */
/* ------------------------------------------------------------------------------------------ */

/* As CANN's rtSetDeviceSatMode: a mode the product does not have is refused with
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (Ascend950 has only INF/NaN, Ascend910/310P only saturation);
 * asking a saturation-only product for saturation succeeds and records nothing (the runtime
 * returns before it sets the mode), so a later switch to an A2 product starts in INF/NaN mode. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)
{
    if (mode != ACL_RT_OVERFLOW_MODE_SATURATION && mode != ACL_RT_OVERFLOW_MODE_INFNAN)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtSetDeviceSatMode: mode must be ACL_RT_OVERFLOW_MODE_SATURATION "
                           "(0) or ACL_RT_OVERFLOW_MODE_INFNAN (1), got %d.", (int)mode);
    const bool saturation = mode == ACL_RT_OVERFLOW_MODE_SATURATION;
    if (!nn_overflow_mode_supported(saturation))
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                           "aclrtSetDeviceSatMode: %s supports only the %s mode; the %s mode cannot be set.",
                           nn_soc_family_name(nn_soc_current()), saturation ? "INF/NaN" : "saturation",
                           saturation ? "saturation" : "INF/NaN");
    if (!nn_overflow_saturation_only()) nn_overflow_set_device_saturation(saturation);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode)
{
    if (mode == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceSatMode: mode must not be null.");
    *mode = nn_overflow_saturates() ? ACL_RT_OVERFLOW_MODE_SATURATION : ACL_RT_OVERFLOW_MODE_INFNAN;
    return ACL_SUCCESS;
}
