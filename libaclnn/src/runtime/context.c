/*
 * context.c - contexts: a device plus a default stream.  aclrtSetDevice makes one default
 * context per device (shared by every thread that sets that device); aclrtCreateContext makes
 * explicit ones.  Each thread has a current context (thread-local), which decides the device
 * of the thread and the stream that `stream == NULL` means.
 *
 * The thread-local pointer is validated against the registry (and a unique id) on every use,
 * so a context destroyed by another thread is seen as "no context", never dereferenced.
 */
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"

pthread_mutex_t nn_rt_lock = PTHREAD_MUTEX_INITIALIZER;

static nn_ptrset g_contexts; /* under nn_rt_lock */
static uint64_t g_next_context_id;

static __thread nn_context *tl_context;
static __thread uint64_t tl_context_id;

nn_context *nn_rt_current_context_locked(void)
{
    if (tl_context != NULL && nn_ptrset_has(&g_contexts, tl_context) &&
        tl_context->id == tl_context_id)
        return tl_context;
    return NULL;
}

void nn_rt_set_current_context_locked(nn_context *ctx)
{
    tl_context = ctx;
    tl_context_id = ctx ? ctx->id : 0;
}

nn_context *nn_rt_context_new_locked(int32_t device, bool is_default, aclError *err)
{
    nn_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "context: out of memory.");
        return NULL;
    }
    ctx->id = ++g_next_context_id;
    ctx->device = device;
    ctx->is_default = is_default;
    if (!nn_ptrset_add(&g_contexts, ctx)) {
        free(ctx);
        *err = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "context: out of memory.");
        return NULL;
    }
    ctx->default_stream = nn_stream_new_locked(ctx, true, 0, err);
    if (ctx->default_stream == NULL) {
        nn_ptrset_remove(&g_contexts, ctx);
        free(ctx);
        return NULL;
    }
    *err = ACL_SUCCESS;
    return ctx;
}

bool nn_rt_context_detach_locked(nn_context *ctx, nn_teardown *out)
{
    nn_context **contexts = realloc(out->contexts, (out->num_contexts + 1) * sizeof *contexts);
    if (contexts == NULL)
        return false;
    out->contexts = contexts;
    size_t first = out->num_streams;
    if (!nn_stream_collect_locked(ctx, &out->streams, &out->num_streams))
        return false;
    for (size_t i = first; i < out->num_streams; i++)
        nn_stream_unregister_locked(out->streams[i]);
    nn_ptrset_remove(&g_contexts, ctx);
    out->contexts[out->num_contexts++] = ctx;
    if (tl_context == ctx)
        nn_rt_set_current_context_locked(NULL);
    return true;
}

bool nn_rt_context_detach_all_locked(nn_teardown *out)
{
    while (g_contexts.count > 0) {
        if (!nn_rt_context_detach_locked(g_contexts.items[g_contexts.count - 1], out))
            return false;
    }
    nn_ptrset_clear(&g_contexts);
    return true;
}

void nn_rt_teardown(nn_teardown *td, bool force)
{
    for (size_t i = 0; i < td->num_streams; i++) {
        nn_state_stream_notify(td->streams[i], ACL_RT_STREAM_STATE_DESTROY_PRE);
        nn_callback_unsubscribe_stream(td->streams[i]);
        nn_stream_shutdown(td->streams[i], force);
    }
    for (size_t i = 0; i < td->num_contexts; i++) {
        nn_check_object_destroyed(td->contexts[i]);
        free(td->contexts[i]);
    }
    free(td->streams);
    free(td->contexts);
    memset(td, 0, sizeof *td);
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                  */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    if (context == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context must not be null.");
    aclError ret = nn_rt_check_device("aclrtCreateContext", deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&nn_rt_lock);
    aclError err;
    nn_context *ctx = nn_rt_context_new_locked(deviceId, false, &err);
    nn_stream *new_default = ctx != NULL ? ctx->default_stream : NULL; /* referenced until told */
    if (ctx != NULL) {
        nn_rt_set_current_context_locked(ctx);
        nn_stream_ref_locked(new_default);
    }
    pthread_mutex_unlock(&nn_rt_lock);
    if (ctx == NULL)
        return err;
    nn_check_object_created(ctx, "aclrtContext", "aclrtCreateContext", true);
    *context = ctx;
    nn_state_stream_notify(new_default, ACL_RT_STREAM_STATE_CREATE_POST);
    nn_stream_unref(new_default);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context)
{
    if (context == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: context must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = context;
    if (!nn_ptrset_has(&g_contexts, ctx)) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtDestroyContext: context %p is not a live context (never created "
                           "or already destroyed).", context);
    }
    if (ctx->is_default) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtDestroyContext: context %p is the default context of device %d "
                           "(released by aclrtResetDevice, not aclrtDestroyContext).", context,
                           (int)ctx->device);
    }
    nn_stream *own = nn_stream_running_here_locked(ctx);
    if (own != NULL) {
        pthread_mutex_unlock(&nn_rt_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtDestroyContext: called from a task (host function or blocking "
                           "callback) of stream %p, which runs on context %p: destroying the "
                           "context would release that stream while its task runs.", (void *)own,
                           context);
    }
    nn_teardown td = {0};
    bool ok = nn_rt_context_detach_locked(ctx, &td);
    pthread_mutex_unlock(&nn_rt_lock);
    nn_rt_teardown(&td, false);
    if (!ok)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtDestroyContext: out of memory.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context)
{
    if (context == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtSetCurrentContext: context must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    bool live = nn_ptrset_has(&g_contexts, context);
    if (live)
        nn_rt_set_current_context_locked(context);
    pthread_mutex_unlock(&nn_rt_lock);
    if (!live)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtSetCurrentContext: context %p is not a live context (never "
                           "created or already destroyed).", context);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context)
{
    if (context == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtGetCurrentContext: context must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    pthread_mutex_unlock(&nn_rt_lock);
    if (ctx == NULL)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtGetCurrentContext: this thread has no current context; call "
                           "aclrtSetDevice or aclrtCreateContext first.");
    *context = ctx;
    return ACL_SUCCESS;
}

/* ---- context-scope system options ---------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    if ((int)opt < 0 || (int)opt >= NN_CTX_OPTS)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtCtxSetSysParamOpt: opt must be in [0, %d], got %d.",
                           NN_CTX_OPTS - 1, (int)opt);
    if (opt == ACL_OPT_DETERMINISTIC && (value < 0 || value > 3))
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtCtxSetSysParamOpt: value of ACL_OPT_DETERMINISTIC must be in "
                           "[0, 3], got %lld.", (long long)value);
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    if (ctx != NULL) {
        ctx->opt_value[opt] = value;
        ctx->opt_set[opt] = true;
    }
    pthread_mutex_unlock(&nn_rt_lock);
    if (ctx == NULL)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtCtxSetSysParamOpt: this thread has no current context; call "
                           "aclrtSetDevice first.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    if ((int)opt < 0 || (int)opt >= NN_CTX_OPTS)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtCtxGetSysParamOpt: opt must be in [0, %d], got %d.",
                           NN_CTX_OPTS - 1, (int)opt);
    if (value == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtCtxGetSysParamOpt: value must not be null.");
    pthread_mutex_lock(&nn_rt_lock);
    nn_context *ctx = nn_rt_current_context_locked();
    bool have_ctx = ctx != NULL;
    bool set = have_ctx && ctx->opt_set[opt];
    int64_t current = set ? ctx->opt_value[opt] : 0;
    pthread_mutex_unlock(&nn_rt_lock);
    if (!have_ctx)
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "aclrtCtxGetSysParamOpt: this thread has no current context; call "
                           "aclrtSetDevice first.");
    if (!set)
        return nn_rt_error(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
                           "aclrtCtxGetSysParamOpt: option %d has not been set in the current "
                           "context.", (int)opt);
    *value = current;
    return ACL_SUCCESS;
}
