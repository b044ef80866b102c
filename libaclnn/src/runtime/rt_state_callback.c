/*
 * rt_state_callback.c - callbacks told of stream and device life cycles and of a device task
 * abort (aclrtRegStreamStateCallback, aclrtRegDeviceStateCallback,
 * aclrtSetDeviceTaskAbortCallback).
 *
 * As CANN's runtime keeps them (runtime:src/runtime/core/src/stream/stream_state_callback_manager.cc,
 * device/device_state_callback_manager.cc, core/src/runtime.cc SetTaskAbortCallBack): each kind
 * is a set of callbacks named by regName; a null regName is 100000, a name already registered
 * 107000, a null callback unregisters the name (a name never registered is no error).  They run
 * in the order of their names, on a snapshot taken without the lock, so a callback may register
 * or unregister.  When they are called:
 * - a stream: ACL_RT_STREAM_STATE_CREATE_POST once it exists (aclrtCreateStream* and the default
 *   stream of a new device or context), ACL_RT_STREAM_STATE_DESTROY_PRE before it goes
 *   (aclrtDestroyStream*, and every stream of a context or device that is released, also at
 *   aclFinalize); a stream being released no longer takes work from the callback;
 * - a device: ACL_RT_DEVICE_STATE_SET_PRE before the first aclrtSetDevice opens it, SET_POST
 *   after every aclrtSetDevice, RESET_PRE before the reset that releases it (also at
 *   aclFinalize) and RESET_POST after;
 * - a task abort: ACL_RT_DEVICE_TASK_ABORT_PRE and _POST around aclrtDeviceTaskAbort's drop of
 *   the device's queued tasks, with the timeout left (ms, 0: none); a non-zero return fails the
 *   abort with that status.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

typedef struct named_callback {
    char *name;
    void (*func)(void); /* the kind's callback type */
    void *args;
} named_callback;

typedef struct callback_set {
    const char *what; /* for messages */
    named_callback *items; /* sorted by name */
    size_t count;
} callback_set;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf lock */
static callback_set g_stream_callbacks = {"stream state callback", NULL, 0};
static callback_set g_device_callbacks = {"device state callback", NULL, 0};
static callback_set g_abort_callbacks = {"device task abort callback", NULL, 0};

/* Where `name` is, or would go (sorted), in the set; *found says which. */
static size_t find_locked(const callback_set *set, const char *name, bool *found)
{
    size_t i = 0;
    while (i < set->count && strcmp(set->items[i].name, name) < 0)
        i++;
    *found = i < set->count && strcmp(set->items[i].name, name) == 0;
    return i;
}

static void remove_locked(callback_set *set, const char *name)
{
    bool found;
    size_t at = find_locked(set, name, &found);
    if (!found)
        return;
    free(set->items[at].name);
    memmove(&set->items[at], &set->items[at + 1], (set->count - at - 1) * sizeof *set->items);
    set->count--;
}

static aclError insert_locked(const char *api, callback_set *set, const char *name, void (*func)(void), void *args)
{
    bool found;
    size_t at = find_locked(set, name, &found);
    if (found)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: regName \"%s\" is already registered as a %s; "
                           "register a null callback under it first to replace it.", api, name, set->what);
    named_callback *grown = realloc(set->items, (set->count + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (grown != NULL)
        set->items = grown;
    if (grown == NULL || copy == NULL) {
        free(copy);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    memmove(&set->items[at + 1], &set->items[at], (set->count - at) * sizeof *set->items);
    set->items[at] = (named_callback){copy, func, args};
    set->count++;
    return ACL_SUCCESS;
}

static aclError register_named(const char *api, callback_set *set, const char *regName, void (*func)(void),
                               void *args)
{
    if (regName == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: regName must not be null.", api);
    pthread_mutex_lock(&g_lock);
    aclError ret = ACL_SUCCESS;
    if (func == NULL)
        remove_locked(set, regName); /* CANN: a null callback unregisters */
    else
        ret = insert_locked(api, set, regName, func, args);
    pthread_mutex_unlock(&g_lock);
    return ret;
}

/* The set's callbacks (names not copied: only func and args are read), to call without the lock. */
static named_callback *snapshot(const callback_set *set, size_t *count)
{
    pthread_mutex_lock(&g_lock);
    named_callback *copy = set->count ? malloc(set->count * sizeof *copy) : NULL;
    *count = copy ? set->count : 0;
    if (copy != NULL)
        memcpy(copy, set->items, set->count * sizeof *copy);
    pthread_mutex_unlock(&g_lock);
    return copy;
}

void nn_state_stream_notify(nn_stream *stream, aclrtStreamState state)
{
    size_t count;
    named_callback *calls = snapshot(&g_stream_callbacks, &count);
    for (size_t i = 0; i < count; i++)
        ((aclrtStreamStateCallback)calls[i].func)(stream, state, calls[i].args);
    free(calls);
}

void nn_state_device_notify(int32_t device, aclrtDeviceState state)
{
    size_t count;
    named_callback *calls = snapshot(&g_device_callbacks, &count);
    for (size_t i = 0; i < count; i++)
        ((aclrtDeviceStateCallback)calls[i].func)(device, state, calls[i].args);
    free(calls);
}

aclError nn_state_task_abort_notify(int32_t device, aclrtDeviceTaskAbortStage stage, uint32_t timeout)
{
    size_t count;
    named_callback *calls = snapshot(&g_abort_callbacks, &count);
    aclError ret = ACL_SUCCESS;
    for (size_t i = 0; i < count && ret == ACL_SUCCESS; i++) {
        ret = ((aclrtDeviceTaskAbortCallback)calls[i].func)(device, stage, timeout, calls[i].args);
        if (ret != ACL_SUCCESS)
            nn_rt_error(ret, "aclrtDeviceTaskAbort: the task abort callback %p (stage %d) failed with %d.",
                        (void *)calls[i].func, (int)stage, (int)ret);
    }
    free(calls);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback,
                                                         void *args)
{
    return register_named("aclrtRegStreamStateCallback", &g_stream_callbacks, regName, (void (*)(void))callback,
                          args);
}

ACL_FUNC_VISIBILITY aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback,
                                                         void *args)
{
    return register_named("aclrtRegDeviceStateCallback", &g_device_callbacks, regName, (void (*)(void))callback,
                          args);
}

ACL_FUNC_VISIBILITY aclError aclrtSetDeviceTaskAbortCallback(const char *regName,
                                                             aclrtDeviceTaskAbortCallback callback, void *args)
{
    return register_named("aclrtSetDeviceTaskAbortCallback", &g_abort_callbacks, regName,
                          (void (*)(void))callback, args);
}

static void clear_set(callback_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        free(set->items[i].name);
    free(set->items);
    set->items = NULL;
    set->count = 0;
}

/* Library unload: the registrations go. */
__attribute__((destructor)) static void state_callbacks_unload(void)
{
    clear_set(&g_stream_callbacks);
    clear_set(&g_device_callbacks);
    clear_set(&g_abort_callbacks);
}
