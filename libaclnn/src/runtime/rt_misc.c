/*
 * rt_misc.c - stream failure modes, exception callbacks, operator timeouts, the allocator
 * descriptors of acl_rt_allocator.h, and two context queries.
 *
 * Exception callbacks: when a task fails (an operator launch, a copy, ...), the thread that ran
 * it (the stream's worker, or a synchronizing thread that ran it itself) calls every registered
 * callback with an aclrtExceptionInfo before the error is kept for the next synchronize; on CANN
 * the runtime calls them from its own thread when the device reports the failure.  The task id
 * is 0 (tasks are not numbered), the stream id the stream's low 32 address bits, the thread id
 * the kernel thread id of the thread that ran the task.
 *
 * Timeouts: the wait timeout (aclrtSetOpWaitTimeout, seconds) bounds how long a task queued by
 * aclrtStreamWaitEvent waits for its record; it then fails with ACL_ERROR_RT_EVENT_SYNC_TIMEOUT.
 * The execute timeout (aclrtSetOpExecuteTimeOut*) bounds how long a synchronize waits for the
 * running task: when no task completes within it, aclrtSynchronizeStream/Device return
 * ACL_ERROR_RT_AICORE_TIMEOUT.  A CPU cannot stop an operator midway, so the task itself runs
 * on (stream.c, event.c; docs/runtime.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

/* ---- stream failure mode ------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)
{
    const char *api = "aclrtSetStreamFailureMode";
    if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: mode must be ACL_CONTINUE_ON_FAILURE (0) or "
                           "ACL_STOP_ON_FAILURE (1), got %llu.", api, (unsigned long long)mode);
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret == ACL_SUCCESS) {
        nn_stream_set_stop_on_failure(s, mode == ACL_STOP_ON_FAILURE);
        if (!nn_stream_attr_set(s, NN_STREAM_ATTR_FAILURE_MODE, mode)) /* aclrtGetStreamAttribute reads it */
            ret = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    return ret;
}

/* ---- exception callbacks ------------------------------------------------------------------ */

struct rtExceptionInfo {
    uint32_t taskid;
    uint32_t streamid;
    uint32_t tid;
    uint32_t deviceid;
    uint32_t retcode;
};

#define NN_MAX_EXCEPTION_CALLBACKS 16

static pthread_mutex_t g_exc_lock = PTHREAD_MUTEX_INITIALIZER;
static aclrtExceptionInfoCallback g_exc_callbacks[NN_MAX_EXCEPTION_CALLBACKS]; /* [0]: the deprecated one */
static size_t g_num_exc_callbacks = 1;

void nn_rt_report_exception(int32_t device, const nn_stream *stream, uint32_t error_code)
{
    aclrtExceptionInfoCallback callbacks[NN_MAX_EXCEPTION_CALLBACKS];
    pthread_mutex_lock(&g_exc_lock);
    size_t n = g_num_exc_callbacks;
    memcpy(callbacks, g_exc_callbacks, n * sizeof *callbacks);
    pthread_mutex_unlock(&g_exc_lock);
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any = any || callbacks[i] != NULL;
    if (!any)
        return;
    struct rtExceptionInfo info = {0, (uint32_t)(uintptr_t)stream, (uint32_t)syscall(SYS_gettid), (uint32_t)device,
                                   error_code};
    /* The failed task's message waits on this thread for the stream to keep it: a callback that
     * calls the runtime must neither take it nor leave its own in its place. */
    const char *pending = nn_error_take();
    char *saved = pending != NULL ? strdup(pending) : NULL;
    for (size_t i = 0; i < n; i++)
        if (callbacks[i] != NULL)
            callbacks[i](&info);
    (void)nn_error_take();
    if (saved != NULL) {
        nn_error_push_raw(saved);
        free(saved);
    }
}

ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)
{
    pthread_mutex_lock(&g_exc_lock);
    g_exc_callbacks[0] = callback; /* NULL removes it, as on CANN */
    pthread_mutex_unlock(&g_exc_lock);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback)
{
    const char *api = "aclrtExceptionInfoCallbackRegister";
    if (callback == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: callback must not be null.", api);
    aclError ret = ACL_SUCCESS;
    pthread_mutex_lock(&g_exc_lock);
    for (size_t i = 1; i < g_num_exc_callbacks; i++)
        if (g_exc_callbacks[i] == callback)
            ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: callback %p is already registered.", api,
                              (void *)(uintptr_t)callback);
    if (ret == ACL_SUCCESS && g_num_exc_callbacks == NN_MAX_EXCEPTION_CALLBACKS)
        ret = nn_rt_error(ACL_ERROR_RT_FAILURE, "%s: at most %d callbacks can be registered.", api,
                          NN_MAX_EXCEPTION_CALLBACKS - 1);
    if (ret == ACL_SUCCESS)
        g_exc_callbacks[g_num_exc_callbacks++] = callback;
    pthread_mutex_unlock(&g_exc_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback)
{
    pthread_mutex_lock(&g_exc_lock);
    for (size_t i = 1; i < g_num_exc_callbacks; i++) {
        if (g_exc_callbacks[i] == callback) {
            memmove(&g_exc_callbacks[i], &g_exc_callbacks[i + 1],
                    (g_num_exc_callbacks - i - 1) * sizeof *g_exc_callbacks);
            g_num_exc_callbacks--;
            pthread_mutex_unlock(&g_exc_lock);
            return ACL_SUCCESS;
        }
    }
    pthread_mutex_unlock(&g_exc_lock);
    return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtExceptionInfoCallbackUnregister: callback %p is not "
                       "registered.", (void *)(uintptr_t)callback);
}

#define NN_EXCEPTION_FIELD(name, field)                                                           \
    ACL_FUNC_VISIBILITY uint32_t name(const aclrtExceptionInfo *info)                             \
    {                                                                                             \
        if (info == NULL) {                                                                       \
            nn_rt_error(ACL_ERROR_INVALID_PARAM, #name ": info must not be null.");               \
            return 0xFFFFFFFFu;                                                                   \
        }                                                                                         \
        return info->field;                                                                       \
    }
NN_EXCEPTION_FIELD(aclrtGetTaskIdFromExceptionInfo, taskid)
NN_EXCEPTION_FIELD(aclrtGetStreamIdFromExceptionInfo, streamid)
NN_EXCEPTION_FIELD(aclrtGetThreadIdFromExceptionInfo, tid)
NN_EXCEPTION_FIELD(aclrtGetDeviceIdFromExceptionInfo, deviceid)
NN_EXCEPTION_FIELD(aclrtGetErrorCodeFromExceptionInfo, retcode)

/* ---- operator timeouts -------------------------------------------------------------------- */

static _Atomic uint32_t g_op_wait_timeout_s;
static _Atomic uint64_t g_op_execute_timeout_us;

uint64_t nn_rt_op_execute_timeout_ms(void)
{
    uint64_t us = atomic_load(&g_op_execute_timeout_us);
    return us == 0 ? 0 : (us + 999) / 1000;
}

aclError nn_rt_execute_timeout_error(const char *api)
{
    return nn_rt_error(ACL_ERROR_RT_AICORE_TIMEOUT, "%s: a task has run longer than the operator execute timeout "
                       "(%llu ms, aclrtSetOpExecuteTimeOut); it goes on running (a CPU operator cannot be "
                       "stopped midway).", api, (unsigned long long)nn_rt_op_execute_timeout_ms());
}

uint32_t nn_rt_op_wait_timeout_s(void)
{
    return atomic_load(&g_op_wait_timeout_s);
}

/* The execute timeout's unit on the device: a multiple of this many microseconds. */
#define NN_TIMEOUT_INTERVAL_US 1000u

ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout)
{
    atomic_store(&g_op_wait_timeout_s, timeout);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)
{
    atomic_store(&g_op_execute_timeout_us, (uint64_t)timeout * 1000000u);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout)
{
    atomic_store(&g_op_execute_timeout_us, (uint64_t)timeout * 1000u);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)
{
    if (actualTimeout == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtSetOpExecuteTimeOutV2: actualTimeout must not be null.");
    /* rounded up to the interval, as the device rounds to its tick */
    uint64_t actual = (timeout + NN_TIMEOUT_INTERVAL_US - 1) / NN_TIMEOUT_INTERVAL_US * NN_TIMEOUT_INTERVAL_US;
    atomic_store(&g_op_execute_timeout_us, actual);
    *actualTimeout = actual;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetOpTimeOutInterval(uint64_t *interval)
{
    if (interval == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetOpTimeOutInterval: interval must not be null.");
    *interval = NN_TIMEOUT_INTERVAL_US;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetOpExecuteTimeout(uint32_t *const timeoutMs)
{
    if (timeoutMs == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtGetOpExecuteTimeout: timeoutMs must not be null.");
    uint64_t ms = atomic_load(&g_op_execute_timeout_us) / 1000u;
    *timeoutMs = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    return ACL_SUCCESS;
}

/* ---- contexts ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)
{
    if (stream == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCtxGetCurrentDefaultStream: stream must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    nn_stream *s = ctx != NULL ? ctx->default_stream : NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    if (s == NULL)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL, "aclrtCtxGetCurrentDefaultStream: this thread has no "
                           "current context; call aclrtSetDevice first.");
    *stream = s;
    return ACL_SUCCESS;
}

/* ---- allocator descriptors ---------------------------------------------------------------- */

typedef struct nn_allocator_desc {
    aclrtAllocator obj;
    aclrtAllocatorAllocFunc alloc;
    aclrtAllocatorFreeFunc free;
    aclrtAllocatorAllocAdviseFunc advise;
    aclrtAllocatorGetAddrFromBlockFunc get_addr;
} nn_allocator_desc;

typedef struct nn_allocator_reg {
    const void *stream; /* the stream handle as given (NULL: default stream of the context) */
    nn_allocator_desc *desc;
    nn_allocator_desc copy;
} nn_allocator_reg;

static pthread_mutex_t g_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_descs;
static nn_allocator_reg *g_regs;
static size_t g_num_regs;

ACL_FUNC_VISIBILITY aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
    nn_allocator_desc *d = calloc(1, sizeof *d);
    pthread_mutex_lock(&g_alloc_lock);
    if (d != NULL && !nn_ptrset_add(&g_descs, d)) {
        free(d);
        d = NULL;
    }
    pthread_mutex_unlock(&g_alloc_lock);
    if (d == NULL)
        nn_rt_error(ACL_ERROR_BAD_ALLOC, "aclrtAllocatorCreateDesc: out of memory.");
    return d;
}

/* Runs `set` on the descriptor under the lock if it is live. */
static aclError with_desc(const char *api, aclrtAllocatorDesc desc, bool destroy, void (*set)(nn_allocator_desc *, void *),
                          void *value)
{
    pthread_mutex_lock(&g_alloc_lock);
    bool live = desc != NULL && nn_ptrset_has(&g_descs, desc);
    if (live && destroy) {
        nn_ptrset_remove(&g_descs, desc);
        for (size_t i = 0; i < g_num_regs; i++)
            if (g_regs[i].desc == desc)
                g_regs[i].desc = NULL; /* the registration keeps its copy */
        free(desc);
    } else if (live) {
        set(desc, value);
    }
    pthread_mutex_unlock(&g_alloc_lock);
    if (!live)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: allocatorDesc %p is not a live descriptor of "
                           "aclrtAllocatorCreateDesc.", api, desc);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
    return with_desc("aclrtAllocatorDestroyDesc", allocatorDesc, true, NULL, NULL);
}

static void set_obj(nn_allocator_desc *d, void *v) { d->obj = v; }
static void set_alloc(nn_allocator_desc *d, void *v) { d->alloc = *(aclrtAllocatorAllocFunc *)v; }
static void set_free(nn_allocator_desc *d, void *v) { d->free = *(aclrtAllocatorFreeFunc *)v; }
static void set_advise(nn_allocator_desc *d, void *v) { d->advise = *(aclrtAllocatorAllocAdviseFunc *)v; }
static void set_get_addr(nn_allocator_desc *d, void *v) { d->get_addr = *(aclrtAllocatorGetAddrFromBlockFunc *)v; }

ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator)
{
    return with_desc("aclrtAllocatorSetObjToDesc", allocatorDesc, false, set_obj, allocator);
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                              aclrtAllocatorAllocFunc func)
{
    return with_desc("aclrtAllocatorSetAllocFuncToDesc", allocatorDesc, false, set_alloc, &func);
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                             aclrtAllocatorFreeFunc func)
{
    return with_desc("aclrtAllocatorSetFreeFuncToDesc", allocatorDesc, false, set_free, &func);
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                                    aclrtAllocatorAllocAdviseFunc func)
{
    return with_desc("aclrtAllocatorSetAllocAdviseFuncToDesc", allocatorDesc, false, set_advise, &func);
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                                         aclrtAllocatorGetAddrFromBlockFunc func)
{
    return with_desc("aclrtAllocatorSetGetAddrFromBlockFuncToDesc", allocatorDesc, false, set_get_addr, &func);
}

static nn_allocator_reg *find_reg_locked(const void *stream)
{
    for (size_t i = 0; i < g_num_regs; i++)
        if (g_regs[i].stream == stream)
            return &g_regs[i];
    return NULL;
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
    const char *api = "aclrtAllocatorRegister";
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_alloc_lock);
    nn_allocator_desc *d = allocatorDesc != NULL && nn_ptrset_has(&g_descs, allocatorDesc) ? allocatorDesc : NULL;
    if (d == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: allocatorDesc %p is not a live descriptor.", api,
                          allocatorDesc);
    else if (d->alloc == NULL || d->free == NULL || d->get_addr == NULL)
        ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: the descriptor needs its alloc, free and "
                          "get-address-from-block functions set.", api);
    nn_allocator_reg *reg = ret == ACL_SUCCESS ? find_reg_locked(s) : NULL;
    if (ret == ACL_SUCCESS && reg == NULL) {
        nn_allocator_reg *grown = realloc(g_regs, (g_num_regs + 1) * sizeof *g_regs);
        if (grown == NULL) {
            ret = nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
        } else {
            g_regs = grown;
            reg = &g_regs[g_num_regs++];
        }
    }
    if (ret == ACL_SUCCESS)
        *reg = (nn_allocator_reg){s, d, *d};
    pthread_mutex_unlock(&g_alloc_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
                                                       aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
                                                       aclrtAllocatorFreeFunc *freeFunc,
                                                       aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
                                                       aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
    const char *api = "aclrtAllocatorGetByStream";
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_alloc_lock);
    nn_allocator_reg *reg = find_reg_locked(s);
    nn_allocator_reg found = reg != NULL ? *reg : (nn_allocator_reg){0};
    pthread_mutex_unlock(&g_alloc_lock);
    if (reg == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: no allocator is registered on stream %p.", api, stream);
    if (allocatorDesc != NULL)
        *allocatorDesc = found.desc;
    if (allocator != NULL)
        *allocator = found.copy.obj;
    if (allocFunc != NULL)
        *allocFunc = found.copy.alloc;
    if (freeFunc != NULL)
        *freeFunc = found.copy.free;
    if (allocAdviseFunc != NULL)
        *allocAdviseFunc = found.copy.advise;
    if (getAddrFromBlockFunc != NULL)
        *getAddrFromBlockFunc = found.copy.get_addr;
    return ACL_SUCCESS;
}

void nn_allocator_forget_stream(const nn_stream *stream)
{
    nn_stream_attr_forget(stream); /* the one hook stream.c calls for a stream that goes */
    pthread_mutex_lock(&g_alloc_lock);
    for (size_t i = g_num_regs; i-- > 0;)
        if (g_regs[i].stream == stream)
            g_regs[i] = g_regs[--g_num_regs];
    if (g_num_regs == 0) {
        free(g_regs);
        g_regs = NULL;
    }
    pthread_mutex_unlock(&g_alloc_lock);
}

ACL_FUNC_VISIBILITY aclError aclrtAllocatorUnregister(aclrtStream stream)
{
    const char *api = "aclrtAllocatorUnregister";
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_alloc_lock);
    nn_allocator_reg *reg = find_reg_locked(s);
    if (reg != NULL)
        *reg = g_regs[--g_num_regs];
    pthread_mutex_unlock(&g_alloc_lock);
    if (reg == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: no allocator is registered on stream %p.", api, stream);
    return ACL_SUCCESS;
}
