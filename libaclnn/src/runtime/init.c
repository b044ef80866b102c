/*
 * init.c - aclInit/aclFinalize, versions, run mode, SoC name, the thread's last runtime error,
 * aclAppLog, process-scope system options, and the helpers the other runtime files share.
 *
 * aclInit is reference counted as in CANN: a second call while initialised only counts and
 * returns ACL_ERROR_REPEAT_INITIALIZE; a single aclFinalize releases everything.  Nothing else
 * in the runtime requires aclInit (devices, memory and streams work without it), which is
 * lenient but harmless: a program written for CANN calls it anyway.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"

#ifndef ACL_MAJOR_VERSION
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0
#endif


/* ------------------------------------------------------------------------------------------ */
/* Shared helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

static __thread int tl_last_error;

void nn_rt_set_last_error(int code)
{
    if (code != 0)
        tl_last_error = code;
}

int nn_rt_error(int code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    nn_verror(code, fmt, args);
    va_end(args);
    nn_rt_set_last_error(code);
    return code;
}

void nn_rt_deadline(struct timespec *deadline, int32_t timeout_ms)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += timeout_ms / 1000;
    deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec += 1;
        deadline->tv_nsec -= 1000000000L;
    }
}

void nn_rt_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

bool nn_rt_env_flag(const char *name)
{
    const char *value = getenv(name);
    if (value == NULL)
        return false;
    return strcmp(value, "1") == 0 || strcasecmp(value, "true") == 0 ||
           strcasecmp(value, "yes") == 0 || strcasecmp(value, "on") == 0;
}

/* ---- nn_ptrset: a sorted array of live handles --------------------------------------------- */

/* Index just past item's place: item is in the set when the record before it is item. */
static size_t ptrset_after(const nn_ptrset *set, const void *item)
{
    return nn_sorted_upper_bound(set->items, set->count, sizeof *set->items, (uintptr_t)item);
}

bool nn_ptrset_add(nn_ptrset *set, void *item)
{
    size_t pos = ptrset_after(set, item);
    if (pos > 0 && set->items[pos - 1] == item)
        return true;
    void **items = nn_sorted_insert(set->items, &set->count, &set->capacity, 16, sizeof *set->items, pos, &item);
    if (items == NULL)
        return false;
    set->items = items;
    return true;
}

bool nn_ptrset_remove(nn_ptrset *set, const void *item)
{
    size_t pos = ptrset_after(set, item);
    if (pos == 0 || set->items[pos - 1] != item)
        return false;
    nn_sorted_remove(set->items, &set->count, sizeof *set->items, pos - 1);
    return true;
}

bool nn_ptrset_has(const nn_ptrset *set, const void *item)
{
    if (item == NULL)
        return false;
    size_t pos = ptrset_after(set, item);
    return pos > 0 && set->items[pos - 1] == item;
}

void nn_ptrset_clear(nn_ptrset *set)
{
    free(set->items);
    set->items = NULL;
    set->count = set->capacity = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* aclInit / aclFinalize                                                                       */
/* ------------------------------------------------------------------------------------------ */

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_init_count;
/* The first configuration ever used, without white space ("" for none or "{}"): CANN refuses
 * to re-initialise with a different one. */
static char *g_first_config;
static bool g_ever_initialized;

#define NN_CONFIG_MAX (16u << 20)

/* Reads the config file and squeezes out white space; "{}" counts as empty. */
static aclError read_config(const char *path, char **out)
{
    *out = NULL;
    if (path == NULL || path[0] == '\0') {
        *out = strdup("");
        return *out ? ACL_SUCCESS : nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclInit: out of memory.");
    }
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_FILE,
                           "aclInit: configPath \"%s\" cannot be opened (%s).", path,
                           strerror(errno));
    size_t capacity = 256, length = 0;
    char *text = malloc(capacity);
    int c;
    while (text != NULL && (c = fgetc(file)) != EOF) {
        if (isspace(c))
            continue;
        if (length + 1 >= capacity) {
            if (capacity >= NN_CONFIG_MAX) {
                free(text);
                fclose(file);
                return nn_rt_error(ACL_ERROR_INVALID_FILE_SIZE,
                                   "aclInit: configPath \"%s\" is larger than %u bytes.", path,
                                   NN_CONFIG_MAX);
            }
            char *bigger = realloc(text, capacity * 2);
            if (bigger == NULL) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            capacity *= 2;
        }
        text[length++] = (char)c;
    }
    bool read_error = ferror(file) != 0;
    fclose(file);
    if (text == NULL)
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclInit: out of memory reading \"%s\".", path);
    if (read_error) {
        free(text);
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "aclInit: configPath \"%s\" cannot be read.",
                           path);
    }
    text[length] = '\0';
    if (strcmp(text, "{}") == 0)
        text[0] = '\0';
    *out = text;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath)
{
    if (nn_soc_current() == NN_SOC_INVALID) {
        const char *env = getenv("ACLNN_SOC_VERSION");
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclInit: ACLNN_SOC_VERSION=\"%.64s\" is not a SoC libaclnn "
                           "emulates (%s).", env ? env : "", NN_SOC_KNOWN_NAMES);
    }
    char *config = NULL;
    aclError ret = read_config(configPath, &config);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_init_lock);
    if (g_init_count > 0) {
        g_init_count++;
        pthread_mutex_unlock(&g_init_lock);
        free(config);
        return nn_rt_error(ACL_ERROR_REPEAT_INITIALIZE,
                           "aclInit: already initialized (repeated aclInit is counted; one "
                           "aclFinalize releases everything).");
    }
    if (g_ever_initialized && strcmp(g_first_config, config) != 0) {
        pthread_mutex_unlock(&g_init_lock);
        free(config);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclInit: configPath content differs from the configuration of the "
                           "first aclInit of this process; re-initialization must use the same "
                           "configuration.");
    }
    /* CANN's aclInit reads the dump section of its configuration (runtime:src/acl/aclrt_impl/
     * acl.cpp, HandleDumpConfig); a bad one fails the initialization. */
    ret = nn_dump_configure_at_init(configPath);
    if (ret == ACL_SUCCESS && (ret = nn_init_callbacks_run(configPath)) != ACL_SUCCESS)
        nn_dump_finalize(); /* a failed init callback fails aclInit: undo the dump section */
    if (ret != ACL_SUCCESS) {
        pthread_mutex_unlock(&g_init_lock);
        free(config);
        return ret;
    }
    if (!g_ever_initialized) {
        g_first_config = config;
        config = NULL;
        g_ever_initialized = true;
    }
    g_init_count = 1;
    pthread_mutex_unlock(&g_init_lock);
    free(config);
    nn_log(NN_LOG_INFO, "aclInit: initialized (configPath=%s).",
           configPath && configPath[0] ? configPath : "none");
    return ACL_SUCCESS;
}

/* 0, or 107000 when the calling thread runs a task of a live stream (see nn_stream_runs_here):
 * releasing everything would free that stream under its own task. */
static aclError refuse_from_own_task(const char *api)
{
    pthread_mutex_lock(&nn_rt_lock);
    nn_stream *own = nn_stream_running_here_locked(NULL);
    pthread_mutex_unlock(&nn_rt_lock);
    if (own == NULL)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: called from a task (host function or blocking callback) of stream "
                       "%p: finalizing would release that stream while its task runs.", api,
                       (void *)own);
}

/* Releases every runtime resource: callbacks first (their pending work is run), then streams
 * and contexts (pending work finishes), model runtime instances, events, and memory the program
 * did not free. */
static void finalize_everything(void)
{
    nn_dump_finalize();
    nn_callback_finalize();
    nn_rt_devices_finalize();
    nn_model_finalize(); /* after the streams (they let go of the models), before the events */
    nn_event_finalize();
    nn_mem_pool_finalize(); /* before memory.c's registry goes */
    nn_mem_finalize();
    nn_managed_finalize(); /* the advice of managed memory left to aclFinalize */
    nn_mem_usage_finalize();
}

bool nn_rt_initialized(void)
{
    pthread_mutex_lock(&g_init_lock);
    bool initialized = g_init_count > 0;
    pthread_mutex_unlock(&g_init_lock);
    return initialized;
}

ACL_FUNC_VISIBILITY aclError aclFinalize(void)
{
    aclError refused = refuse_from_own_task("aclFinalize");
    if (refused != ACL_SUCCESS)
        return refused;
    pthread_mutex_lock(&g_init_lock);
    if (g_init_count == 0) {
        pthread_mutex_unlock(&g_init_lock);
        return nn_rt_error(ACL_ERROR_REPEAT_FINALIZE,
                           "aclFinalize: not initialized (aclFinalize was already called or "
                           "aclInit never succeeded).");
    }
    aclError failed = nn_finalize_callbacks_run("aclFinalize"); /* a failure leaves it initialized */
    if (failed != ACL_SUCCESS) {
        pthread_mutex_unlock(&g_init_lock);
        return failed;
    }
    g_init_count = 0;
    nn_check_leaks_at_finalize(); /* before the runtime releases what the program left */
    finalize_everything();
    pthread_mutex_unlock(&g_init_lock);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount)
{
    pthread_mutex_lock(&g_init_lock);
    if (g_init_count == 1) {
        aclError refused = refuse_from_own_task("aclFinalizeReference");
        if (refused != ACL_SUCCESS) {
            pthread_mutex_unlock(&g_init_lock);
            return refused;
        }
    }
    if (g_init_count == 0) {
        pthread_mutex_unlock(&g_init_lock);
        if (refCount != NULL)
            *refCount = 0;
        return nn_rt_error(ACL_ERROR_REPEAT_FINALIZE,
                           "aclFinalizeReference: not initialized (reference count is 0).");
    }
    if (g_init_count == 1) {
        aclError failed = nn_finalize_callbacks_run("aclFinalizeReference");
        if (failed != ACL_SUCCESS) {
            pthread_mutex_unlock(&g_init_lock);
            return failed;
        }
    }
    g_init_count--;
    if (g_init_count == 0)
        finalize_everything();
    if (refCount != NULL)
        *refCount = g_init_count;
    pthread_mutex_unlock(&g_init_lock);
    return ACL_SUCCESS;
}

/* Library unload (process exit) without aclFinalize / aclrtResetDevice: stop the stream workers
 * (dropping work nobody synchronized) and free what the runtime holds, so that a program that
 * skips the clean-up still exits promptly and leak-free.  Memory the program allocated stays
 * (the program may still be using it from its own destructors). */
__attribute__((destructor)) static void init_unload(void)
{
    nn_callback_finalize_at_exit();
    nn_rt_devices_release_at_exit();
    free(g_first_config);
    g_first_config = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Versions, run mode, SoC                                                                     */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion)
{
    if (majorVersion == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: majorVersion must not be null.");
    if (minorVersion == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: minorVersion must not be null.");
    if (patchVersion == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: patchVersion must not be null.");
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    if (runMode == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode must not be null.");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void)
{
    /* The emulated product (base/soc.c): a card's name, "Ascend910B3" by default, the card
     * chosen with ACLNN_SOC_VERSION / aclnnCpuSetSocVersion or its family's card; NULL when the
     * variable names no SoC we know. */
    return nn_soc_reported_name();
}

/* ------------------------------------------------------------------------------------------ */
/* Last error                                                                                  */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    if (level != ACL_RT_THREAD_LEVEL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtPeekAtLastError: level must be ACL_RT_THREAD_LEVEL (0), got %d.",
                           (int)level);
    return tl_last_error;
}

ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    if (level != ACL_RT_THREAD_LEVEL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtGetLastError: level must be ACL_RT_THREAD_LEVEL (0), got %d.",
                           (int)level);
    int code = tl_last_error;
    tl_last_error = 0;
    return code;
}

/* ------------------------------------------------------------------------------------------ */
/* aclAppLog                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define NN_APP_LOG_MAX 1024

ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file,
                                   uint32_t line, const char *fmt, ...)
{
    int level = (int)logLevel;
    if (level < NN_LOG_DEBUG || level > NN_LOG_ERROR || fmt == NULL || !nn_log_enabled(level))
        return;
    char text[NN_APP_LOG_MAX];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : (file ? file : "?");
    nn_log(level, "[%s:%u] %s: %s", base, (unsigned)line, func ? func : "?", text);
}

/* ------------------------------------------------------------------------------------------ */
/* Process-scope system options                                                                */
/* ------------------------------------------------------------------------------------------ */

#define NN_PROCESS_OPTS 4 /* ACL_OPT_DETERMINISTIC .. ACL_OPT_ENABLE_KERNEL_EARLY_START */

static pthread_mutex_t g_opt_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_opt_value[NN_PROCESS_OPTS];
static bool g_opt_set[NN_PROCESS_OPTS];

ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    if ((int)opt < 0 || (int)opt >= NN_PROCESS_OPTS)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtSetSysParamOpt: opt must be in [0, %d], got %d.",
                           NN_PROCESS_OPTS - 1, (int)opt);
    if (opt == ACL_OPT_DETERMINISTIC && (value < 0 || value > 3))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtSetSysParamOpt: value of ACL_OPT_DETERMINISTIC must be in "
                           "[0, 3], got %lld.", (long long)value);
    pthread_mutex_lock(&g_opt_lock);
    g_opt_value[opt] = value;
    g_opt_set[opt] = true;
    pthread_mutex_unlock(&g_opt_lock);
    return ACL_SUCCESS;
}

int64_t nn_rt_deterministic_level(void)
{
    pthread_mutex_lock(&g_opt_lock);
    const int64_t level = g_opt_set[ACL_OPT_DETERMINISTIC] ? g_opt_value[ACL_OPT_DETERMINISTIC] : 0;
    pthread_mutex_unlock(&g_opt_lock);
    return level;
}

ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    if ((int)opt < 0 || (int)opt >= NN_PROCESS_OPTS)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtGetSysParamOpt: opt must be in [0, %d], got %d.",
                           NN_PROCESS_OPTS - 1, (int)opt);
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt: value must not be null.");
    pthread_mutex_lock(&g_opt_lock);
    bool set = g_opt_set[opt];
    int64_t current = g_opt_value[opt];
    pthread_mutex_unlock(&g_opt_lock);
    if (!set)
        return nn_rt_error(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
                           "aclrtGetSysParamOpt: option %d has not been set.", (int)opt);
    *value = current;
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* CANN package versions                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* libaclnn stands in for CANN's runtime package ("runtime"; "cann" names the same package, as in
 * CANN's kMapToPkgName), whose headers it reproduces: those of CANN 9.2.0 (the API version macros
 * are 1.17.0).  Other packages (driver, firmware, compiler, ...) are not installed. */
#define NN_RUNTIME_PACKAGE_VERSION "9.2.0"
/* CANN's number for it: major * 10^7 + minor * 10^5 + patch * 10^3
 * (runtime:src/acl/aclrt_impl/acl.cpp, ParseBaseVersion). */
#define NN_RUNTIME_PACKAGE_NUMBER (9 * 10000000 + 2 * 100000 + 0 * 1000)

/* Whether pkgName is a package libaclnn stands in for; CANN also tries '-' and '_' swapped. */
static bool is_our_package(const char *pkgName)
{
    return strcmp(pkgName, "runtime") == 0 || strcmp(pkgName, "cann") == 0;
}

static aclError package_not_installed(const char *api, const char *pkgName)
{
    return nn_rt_error(ACL_ERROR_INVALID_FILE, "%s: CANN package \"%s\" is not installed (libaclnn stands in "
                       "for the \"runtime\" package only).", api, pkgName);
}

ACL_FUNC_VISIBILITY aclError aclsysGetCANNVersion(aclCANNPackageName name,
                                                  aclCANNPackageVersion *version)
{
    if (version == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclsysGetCANNVersion: version must not be null.");
    if (name != ACL_PKG_NAME_CANN && name != ACL_PKG_NAME_RUNTIME)
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "aclsysGetCANNVersion: CANN package %d is not installed "
                           "(libaclnn stands in for ACL_PKG_NAME_CANN / ACL_PKG_NAME_RUNTIME only).", (int)name);
    memset(version, 0, sizeof *version);
    /* CANN splits "major.minor.release[.patch]" and pads the missing parts with "0". */
    strcpy(version->version, NN_RUNTIME_PACKAGE_VERSION);
    strcpy(version->majorVersion, "9");
    strcpy(version->minorVersion, "2");
    strcpy(version->releaseVersion, "0");
    strcpy(version->patchVersion, "0");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    if (versionStr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: versionStr must not be null.");
    if (pkgName == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: pkgName must not be null.");
    if (!is_our_package(pkgName))
        return package_not_installed("aclsysGetVersionStr", pkgName);
    strcpy(versionStr, NN_RUNTIME_PACKAGE_VERSION); /* the caller's buffer is ACL_PKG_VERSION_MAX_SIZE */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    if (versionNum == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum: versionNum must not be null.");
    if (pkgName == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionNum: pkgName must not be null.");
    if (!is_our_package(pkgName))
        return package_not_installed("aclsysGetVersionNum", pkgName);
    *versionNum = NN_RUNTIME_PACKAGE_NUMBER;
    return ACL_SUCCESS;
}
