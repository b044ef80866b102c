/*
 * rt_notify.c - notifies (aclrtCreateNotify, aclrtRecordNotify, aclrtWaitAndResetNotify, ...)
 * and count notifies (aclrtCntNotify*), within a process and between processes by key.
 *
 * A notify is a word: aclrtRecordNotify queues a task that sets it, aclrtWaitAndResetNotify a
 * task that blocks its stream until it is set and clears it (one record releases one wait; a
 * record with nobody waiting stays until a wait takes it).  A count notify is a 32-bit counter
 * that records change (set, add, or, and) and waits compare (less, equal, bigger, bigger or
 * equal, all bits of a mask) and may clear.  The word sits in a shared page (rt_shared_sync.c),
 * so that aclrtNotifyGetExportKey / aclrtNotifyImportByKey give another process the same word:
 * a record there ends a wait here.  The key dies with the notify (aclrtDestroyNotify in the
 * creating process); a process that imported keeps its mapping until it destroys its handle.
 * Export checks importers against the whitelist of aclrtNotifySetImportPid unless the flag
 * ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION is given.
 *
 * Timeouts: the wait's own (seconds, as CANN's runtime reads it: "NotifyWait ... timeout=%us";
 * 0 and UINT32_MAX mean none of its own), else aclrtSetOpWaitTimeout's; past it the stream
 * reports ACL_ERROR_RT_WAIT_TIMEOUT at its next synchronize.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define NOTIFY_KEY_PREFIX "nnnotify"

typedef struct nn_notify {
    nn_shared_page page;
    bool counting; /* aclrtCntNotifyCreate */
    int refs;      /* the user's handle + queued tasks */
} nn_notify;

static pthread_mutex_t g_notify_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_ptrset g_notifies; /* live handles, under g_notify_lock */
static _Atomic uint32_t g_next_id;

static const char *kind_name(bool counting)
{
    return counting ? "count notify" : "notify";
}

static void notify_unref(nn_notify *n)
{
    pthread_mutex_lock(&g_notify_lock);
    bool last = --n->refs == 0;
    pthread_mutex_unlock(&g_notify_lock);
    if (last) {
        nn_shared_page_release(&n->page);
        free(n);
    }
}

/* The live notify of `handle` with a reference for the caller, or NULL after an error naming
 * `param` (a plain notify given for a count one, or the reverse, is not live either). */
static nn_notify *notify_acquire(const char *api, const char *param, void *handle, bool counting, aclError *err)
{
    if (handle == NULL) {
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, param);
        return NULL;
    }
    pthread_mutex_lock(&g_notify_lock);
    nn_notify *n = nn_ptrset_has(&g_notifies, handle) ? handle : NULL;
    if (n != NULL && n->counting == counting)
        n->refs++;
    else
        n = NULL;
    pthread_mutex_unlock(&g_notify_lock);
    *err = n != NULL ? ACL_SUCCESS
                     : nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p is not a live %s (never created, "
                                   "already destroyed, or of the other kind).", api, param, handle,
                                   kind_name(counting));
    return n;
}

/* Registers a notify made around `page` and hands it out. */
static aclError notify_register(const char *api, nn_shared_page *page, bool counting, void **out)
{
    nn_notify *n = calloc(1, sizeof *n);
    bool added = false;
    if (n != NULL) {
        *n = (nn_notify){*page, counting, 1};
        pthread_mutex_lock(&g_notify_lock);
        added = nn_ptrset_add(&g_notifies, n);
        pthread_mutex_unlock(&g_notify_lock);
    }
    if (!added) {
        free(n);
        nn_shared_page_release(page);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *out = n;
    return ACL_SUCCESS;
}

static aclError create_notify(const char *api, void **out, bool counting)
{
    nn_shared_page page;
    aclError err = nn_shared_page_create(api, "notify", &page);
    if (err != ACL_SUCCESS)
        return err;
    atomic_store(&page.sync->id, atomic_fetch_add(&g_next_id, 1u));
    return notify_register(api, &page, counting, out);
}

static aclError destroy_notify(const char *api, void *handle, bool counting)
{
    aclError err;
    nn_notify *n = notify_acquire(api, counting ? "cntNotify" : "notify", handle, counting, &err);
    if (n == NULL)
        return err;
    pthread_mutex_lock(&g_notify_lock);
    bool mine = nn_ptrset_remove(&g_notifies, n); /* one of two racing destroys wins */
    if (mine)
        n->refs--; /* the handle's; ours still holds it */
    pthread_mutex_unlock(&g_notify_lock);
    notify_unref(n); /* queued tasks keep it until they have run */
    if (!mine)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %p was destroyed meanwhile.", api, handle);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)
{
    const char *api = "aclrtCreateNotify";
    if (notify == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: notify must not be null.", api);
    if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %#llx must be ACL_NOTIFY_DEFAULT (0) or "
                           "ACL_NOTIFY_DEVICE_USE_ONLY (1).", api, (unsigned long long)flag);
    return create_notify(api, notify, false);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyCreate(aclrtCntNotify *cntNotify, uint64_t flag)
{
    const char *api = "aclrtCntNotifyCreate";
    if (cntNotify == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: cntNotify must not be null.", api);
    if (flag != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %#llx is reserved and must be 0.", api,
                           (unsigned long long)flag);
    return create_notify(api, cntNotify, true);
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyNotify(aclrtNotify notify)
{
    return destroy_notify("aclrtDestroyNotify", notify, false);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify)
{
    return destroy_notify("aclrtCntNotifyDestroy", cntNotify, true);
}

static aclError get_id(const char *api, void *handle, bool counting, uint32_t *id)
{
    aclError err;
    if (id == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: notifyId must not be null.", api);
    nn_notify *n = notify_acquire(api, counting ? "cntNotify" : "notify", handle, counting, &err);
    if (n == NULL)
        return err;
    *id = atomic_load(&n->page.sync->id);
    notify_unref(n);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId)
{
    return get_id("aclrtGetNotifyId", notify, false, notifyId);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t *notifyId)
{
    return get_id("aclrtCntNotifyGetId", cntNotify, true, notifyId);
}

/* ---- queued tasks ------------------------------------------------------------------------ */

typedef enum { TASK_RECORD, TASK_WAIT_RESET, TASK_CNT_RECORD, TASK_CNT_WAIT, TASK_CNT_RESET } notify_task_kind;

typedef struct notify_task {
    const char *api;
    notify_task_kind kind;
    nn_notify *notify; /* holds a reference */
    nn_stream *stream;
    uint32_t mode, value, timeout_s;
    bool clear;
} notify_task;

static void release_task(void *ctx)
{
    notify_task *task = ctx;
    notify_unref(task->notify);
    free(task);
}

/* Whether count `count` satisfies a count wait. */
static bool cnt_wait_met(uint32_t mode, uint32_t count, uint32_t value)
{
    switch (mode) {
    case ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE:
        return count < value;
    case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE:
        return count == value;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE:
        return count > value;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE:
        return count >= value;
    default: /* ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE */
        return (count & value) == value;
    }
}

/* One look at the word for a waiting task: true when the wait is over (the notify taken, or the
 * count met and, if asked, cleared); *seen gets the value to sleep on otherwise. */
static bool try_take(const notify_task *task, _Atomic uint32_t *word, uint32_t *seen)
{
    if (task->kind == TASK_WAIT_RESET) {
        *seen = 0;
        return atomic_exchange(word, 0u) != 0;
    }
    uint32_t count = atomic_load(word);
    *seen = count;
    if (!cnt_wait_met(task->mode, count, task->value))
        return false;
    return !task->clear || atomic_compare_exchange_strong(word, &count, 0u);
}

static int run_wait(void *ctx)
{
    notify_task *task = ctx;
    _Atomic uint32_t *word = &task->notify->page.sync->value;
    const uint32_t limit_s = task->timeout_s != 0 ? task->timeout_s : nn_rt_op_wait_timeout_s();
    struct timespec deadline;
    if (limit_s != 0)
        nn_rt_deadline(&deadline, limit_s > INT32_MAX / 1000 ? INT32_MAX : (int32_t)(limit_s * 1000));
    uint32_t seen = 0;
    while (!try_take(task, word, &seen)) {
        if (nn_stream_aborting(task->stream))
            return 0;
        if (limit_s != 0 && nn_shared_deadline_passed(&deadline))
            return nn_rt_error(ACL_ERROR_RT_WAIT_TIMEOUT, "%s: the %s was not recorded within the wait timeout "
                               "(%u s).", task->api, kind_name(task->notify->counting), limit_s);
        nn_shared_wait_change(word, seen);
    }
    return 0;
}

static int run_record(void *ctx)
{
    notify_task *task = ctx;
    _Atomic uint32_t *word = &task->notify->page.sync->value;
    switch (task->kind) {
    case TASK_RECORD:
        atomic_store(word, 1u);
        break;
    case TASK_CNT_RESET:
        atomic_store(word, 0u);
        break;
    default: /* TASK_CNT_RECORD */
        if (task->mode == ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE)
            atomic_store(word, task->value);
        else if (task->mode == ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE)
            atomic_fetch_add(word, task->value);
        else if (task->mode == ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE)
            atomic_fetch_or(word, task->value);
        else
            atomic_fetch_and(word, task->value);
        break;
    }
    nn_shared_wake(word);
    return 0;
}

/* Queues `proto` (its notify and stream filled in here) on `stream`. */
static aclError queue_task(void *handle, aclrtStream stream, const notify_task *proto)
{
    const bool counting = proto->kind >= TASK_CNT_RECORD;
    aclError err;
    nn_notify *n = notify_acquire(proto->api, counting ? "cntNotify" : "notify", handle, counting, &err);
    if (n == NULL)
        return err;
    nn_stream *s = NULL;
    err = nn_stream_resolve_named(proto->api, stream, &s);
    notify_task *task = err == ACL_SUCCESS ? malloc(sizeof *task) : NULL;
    if (task == NULL) {
        notify_unref(n);
        return err != ACL_SUCCESS ? err : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", proto->api);
    }
    *task = *proto;
    task->notify = n;
    task->stream = s;
    const bool waits = proto->kind == TASK_WAIT_RESET || proto->kind == TASK_CNT_WAIT;
    return nn_stream_submit(s, waits ? run_wait : run_record, release_task, task);
}

ACL_FUNC_VISIBILITY aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)
{
    return queue_task(notify, stream, &(notify_task){.api = "aclrtRecordNotify", .kind = TASK_RECORD});
}

static uint32_t own_timeout_s(uint32_t timeout)
{
    return timeout == UINT32_MAX ? 0 : timeout;
}

ACL_FUNC_VISIBILITY aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout)
{
    const notify_task proto = {.api = "aclrtWaitAndResetNotify", .kind = TASK_WAIT_RESET,
                               .timeout_s = own_timeout_s(timeout)};
    return queue_task(notify, stream, &proto);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream,
                                                  aclrtCntNotifyRecordInfo *info)
{
    const char *api = "aclrtCntNotifyRecord";
    if (info == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: info must not be null.", api);
    const int mode = (int)info->mode;
    if (mode != ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE && mode != ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE &&
        mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE && mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: info->mode %d must be SET_VALUE (0), ADD (1), "
                           "BIT_OR (2) or BIT_AND (4).", api, mode);
    const notify_task proto = {.api = api, .kind = TASK_CNT_RECORD, .mode = (uint32_t)mode, .value = info->value};
    return queue_task(cntNotify, stream, &proto);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream,
                                                           aclrtCntNotifyWaitInfo *info)
{
    const char *api = "aclrtCntNotifyWaitWithTimeout";
    if (info == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: info must not be null.", api);
    if ((unsigned)info->mode > ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: info->mode %d must be in [0, 5).", api, (int)info->mode);
    const notify_task proto = {.api = api, .kind = TASK_CNT_WAIT, .mode = (uint32_t)info->mode,
                               .value = info->value, .timeout_s = own_timeout_s(info->timeout),
                               .clear = info->isClear != 0};
    return queue_task(cntNotify, stream, &proto);
}

ACL_FUNC_VISIBILITY aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream)
{
    return queue_task(cntNotify, stream, &(notify_task){.api = "aclrtCntNotifyReset", .kind = TASK_CNT_RESET});
}

/* Clears each notify now, from the host (CANN resets them one by one and stops at the first
 * failure). */
ACL_FUNC_VISIBILITY aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)
{
    const char *api = "aclrtNotifyBatchReset";
    if (notifies == NULL || num == 0 || num > UINT32_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: notifies must not be null and num in (0, %u], got "
                           "%zu.", api, UINT32_MAX, num);
    for (size_t i = 0; i < num; i++) {
        aclError err;
        nn_notify *n = notify_acquire(api, "notifies[i]", notifies[i], false, &err);
        if (n == NULL)
            return err;
        atomic_store(&n->page.sync->value, 0u);
        notify_unref(n);
    }
    return ACL_SUCCESS;
}

/* ---- between processes ------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags)
{
    const char *api = "aclrtNotifyGetExportKey";
    if (key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: key must not be null.", api);
    if ((flags & ~(uint64_t)ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION) != 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: flags %#llx: only "
                           "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION (2) may be set.", api,
                           (unsigned long long)flags);
    aclError err;
    nn_notify *n = notify_acquire(api, "notify", notify, false, &err);
    if (n == NULL)
        return err;
    const bool check_pid = (flags & ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION) == 0;
    err = nn_shared_page_export(api, NOTIFY_KEY_PREFIX, &n->page, check_pid, key, len);
    notify_unref(n);
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags)
{
    const char *api = "aclrtNotifyImportByKey";
    (void)flags; /* ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS: every emulated device reaches the page */
    if (notify == NULL || key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: notify and key must not be null.", api);
    nn_shared_page page;
    aclError err = nn_shared_page_import(api, "aclrtNotifyGetExportKey", NOTIFY_KEY_PREFIX, key, &page);
    return err != ACL_SUCCESS ? err : notify_register(api, &page, false, notify);
}

ACL_FUNC_VISIBILITY aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num)
{
    const char *api = "aclrtNotifySetImportPid";
    if (pid == NULL || num == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: pid must not be null and num positive.", api);
    aclError err;
    nn_notify *n = notify_acquire(api, "notify", notify, false, &err);
    if (n == NULL)
        return err;
    err = nn_shared_page_allow_pids(api, &n->page, pid, num);
    notify_unref(n);
    return err;
}
