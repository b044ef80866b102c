/*
 * rt_init_callback.c - the callbacks a component registers to run at aclInit and aclFinalize
 * (aclInitCallbackRegister / UnRegister, aclFinalizeCallbackRegister / UnRegister).
 *
 * As CANN's runtime keeps them (runtime:src/acl/aclrt_impl/init_callback_manager.cpp, acl.cpp):
 * - a type other than ACL_REG_TYPE_OTHER holds at most one callback (a second: 500000); OTHER
 *   holds any number, called in registration order; a null callback is 100000, unregistering
 *   one that is not registered 500000;
 * - aclInit calls the init callbacks of ACL_REG_TYPE_ACL_MODEL, then ACL_REG_TYPE_ACL_OP_EXECUTOR
 *   (only when aclInit has a configPath), ACL_REG_TYPE_ACL_DVPP and ACL_REG_TYPE_OTHER, with the
 *   configuration file's text (empty without a file); the first failure fails aclInit with its
 *   status.  The other types are never called: CANN's aclInit calls them no more.
 * - an init callback registered while the runtime is initialized runs at once (its status is
 *   ignored, as CANN ignores it);
 * - the finalize that releases the runtime calls the finalize callbacks of
 *   ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_DVPP and
 *   ACL_REG_TYPE_OTHER; the first failure makes it return that status, initialized still.
 * Callbacks run without this file's lock held, on a snapshot of the list, so one may register
 * or unregister another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"

typedef struct init_entry {
    aclRegisterCallbackType type;
    void (*func)(void); /* aclInitCallbackFunc or aclFinalizeCallbackFunc */
    void *user_data;
} init_entry;

typedef struct init_list {
    init_entry *entries;
    size_t count;
} init_list;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf lock */
static init_list g_init_callbacks, g_finalize_callbacks;
static char *g_config_text; /* from aclInit to the finalize: the configuration aclInit read */
static size_t g_config_length;
/* aclInit's callbacks have all succeeded and no finalize has run since (kept here: aclInit runs
 * the callbacks under its own lock, which a callback registering another must not need). */
static bool g_initialized;

static const aclRegisterCallbackType INIT_ORDER[] = {ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_OP_EXECUTOR,
                                                     ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER};
static const aclRegisterCallbackType FINALIZE_ORDER[] = {ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_MODEL,
                                                         ACL_REG_TYPE_ACL_DVPP, ACL_REG_TYPE_OTHER};

static bool has_type_locked(const init_list *list, aclRegisterCallbackType type)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->entries[i].type == type)
            return true;
    return false;
}

static aclError add_callback(const char *api, init_list *list, aclRegisterCallbackType type, void (*func)(void),
                             void *user_data)
{
    if (func == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: cbFunc must not be null.", api);
    pthread_mutex_lock(&g_lock);
    if (type != ACL_REG_TYPE_OTHER && has_type_locked(list, type)) {
        pthread_mutex_unlock(&g_lock);
        return nn_rt_error(ACL_ERROR_INTERNAL_ERROR, "%s: type %d already has a callback (only "
                           "ACL_REG_TYPE_OTHER takes several).", api, (int)type);
    }
    init_entry *grown = realloc(list->entries, (list->count + 1) * sizeof *grown);
    if (grown == NULL) {
        pthread_mutex_unlock(&g_lock);
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    }
    list->entries = grown;
    list->entries[list->count++] = (init_entry){type, func, user_data};
    pthread_mutex_unlock(&g_lock);
    return ACL_SUCCESS;
}

static aclError remove_callback(const char *api, init_list *list, aclRegisterCallbackType type, void (*func)(void))
{
    if (func == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: cbFunc must not be null.", api);
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < list->count; i++) {
        if (list->entries[i].type == type && list->entries[i].func == func) {
            memmove(&list->entries[i], &list->entries[i + 1], (list->count - i - 1) * sizeof *list->entries);
            list->count--;
            pthread_mutex_unlock(&g_lock);
            return ACL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return nn_rt_error(ACL_ERROR_INTERNAL_ERROR, "%s: cbFunc is not registered for type %d.", api, (int)type);
}

/* The callbacks of `type`, copied so that they run without the lock. */
static init_entry *snapshot_of_type(const init_list *list, aclRegisterCallbackType type, size_t *count)
{
    *count = 0;
    pthread_mutex_lock(&g_lock);
    init_entry *copy = list->count ? malloc(list->count * sizeof *copy) : NULL;
    for (size_t i = 0; copy != NULL && i < list->count; i++)
        if (list->entries[i].type == type)
            copy[(*count)++] = list->entries[i];
    pthread_mutex_unlock(&g_lock);
    return copy;
}

/* The whole file as aclInit's callbacks receive it; "" without a path. */
static aclError read_config_text(const char *configPath, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    FILE *file = (configPath != NULL && configPath[0] != '\0') ? fopen(configPath, "rb") : NULL;
    if (file == NULL) {
        *text = strdup(""); /* no file (aclInit has already refused one it cannot open) */
        return *text ? ACL_SUCCESS : nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclInit: out of memory.");
    }
    size_t capacity = 4096;
    char *buffer = malloc(capacity + 1);
    size_t got;
    while (buffer != NULL && (got = fread(buffer + *length, 1, capacity - *length, file)) > 0) {
        *length += got;
        if (*length == capacity) {
            char *bigger = realloc(buffer, capacity * 2 + 1);
            if (bigger == NULL)
                free(buffer);
            buffer = bigger;
            capacity *= 2;
        }
    }
    fclose(file);
    if (buffer == NULL)
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclInit: out of memory reading \"%s\".", configPath);
    buffer[*length] = '\0';
    *text = buffer;
    return ACL_SUCCESS;
}

static aclError run_init_type(aclRegisterCallbackType type)
{
    size_t count;
    init_entry *entries = snapshot_of_type(&g_init_callbacks, type, &count);
    aclError ret = ACL_SUCCESS;
    for (size_t i = 0; i < count && ret == ACL_SUCCESS; i++) {
        ret = ((aclInitCallbackFunc)entries[i].func)(g_config_text, g_config_length, entries[i].user_data);
        if (ret != ACL_SUCCESS)
            nn_rt_error(ret, "aclInit: the init callback %p of type %d failed with %d.", (void *)entries[i].func,
                        (int)type, (int)ret);
    }
    free(entries);
    return ret;
}

static void forget_config(void)
{
    pthread_mutex_lock(&g_lock);
    free(g_config_text);
    g_config_text = NULL;
    g_config_length = 0;
    g_initialized = false;
    pthread_mutex_unlock(&g_lock);
}

aclError nn_init_callbacks_run(const char *configPath)
{
    char *text;
    size_t length;
    aclError ret = read_config_text(configPath, &text, &length);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_lock);
    free(g_config_text);
    g_config_text = text;
    g_config_length = length;
    pthread_mutex_unlock(&g_lock);
    const bool have_path = configPath != NULL && configPath[0] != '\0';
    for (size_t i = 0; i < sizeof INIT_ORDER / sizeof INIT_ORDER[0] && ret == ACL_SUCCESS; i++)
        if (INIT_ORDER[i] != ACL_REG_TYPE_ACL_OP_EXECUTOR || have_path)
            ret = run_init_type(INIT_ORDER[i]);
    if (ret != ACL_SUCCESS)
        forget_config();
    pthread_mutex_lock(&g_lock);
    g_initialized = ret == ACL_SUCCESS;
    pthread_mutex_unlock(&g_lock);
    return ret;
}

aclError nn_finalize_callbacks_run(const char *api)
{
    aclError ret = ACL_SUCCESS;
    for (size_t t = 0; t < sizeof FINALIZE_ORDER / sizeof FINALIZE_ORDER[0] && ret == ACL_SUCCESS; t++) {
        size_t count;
        init_entry *entries = snapshot_of_type(&g_finalize_callbacks, FINALIZE_ORDER[t], &count);
        for (size_t i = 0; i < count && ret == ACL_SUCCESS; i++) {
            ret = ((aclFinalizeCallbackFunc)entries[i].func)(entries[i].user_data);
            if (ret != ACL_SUCCESS)
                nn_rt_error(ret, "%s: the finalize callback %p of type %d failed with %d.", api,
                            (void *)entries[i].func, (int)FINALIZE_ORDER[t], (int)ret);
        }
        free(entries);
    }
    if (ret == ACL_SUCCESS)
        forget_config();
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc,
                                                     void *userData)
{
    aclError ret = add_callback("aclInitCallbackRegister", &g_init_callbacks, type, (void (*)(void))cbFunc, userData);
    if (ret != ACL_SUCCESS)
        return ret;
    /* Registered after aclInit: CANN runs it at once with the configuration aclInit read. */
    pthread_mutex_lock(&g_lock);
    const bool run_now = g_initialized;
    char *text = run_now && g_config_text ? strdup(g_config_text) : NULL;
    size_t length = g_config_length;
    pthread_mutex_unlock(&g_lock);
    if (run_now)
        (void)cbFunc(text ? text : "", text ? length : 0, userData);
    free(text);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc)
{
    return remove_callback("aclInitCallbackUnRegister", &g_init_callbacks, type, (void (*)(void))cbFunc);
}

ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type,
                                                         aclFinalizeCallbackFunc cbFunc, void *userData)
{
    return add_callback("aclFinalizeCallbackRegister", &g_finalize_callbacks, type, (void (*)(void))cbFunc,
                        userData);
}

ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type,
                                                           aclFinalizeCallbackFunc cbFunc)
{
    return remove_callback("aclFinalizeCallbackUnRegister", &g_finalize_callbacks, type, (void (*)(void))cbFunc);
}

/* Library unload: the lists and the kept configuration go. */
__attribute__((destructor)) static void init_callbacks_unload(void)
{
    free(g_init_callbacks.entries);
    free(g_finalize_callbacks.entries);
    free(g_config_text);
    g_init_callbacks = (init_list){0};
    g_finalize_callbacks = (init_list){0};
    g_config_text = NULL;
}
