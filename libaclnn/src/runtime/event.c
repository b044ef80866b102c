/*
 * event.c - events: a marker queued on a stream.
 *
 * aclrtRecordEvent numbers the record (record_gen) and queues a task that marks that record
 * complete with a CLOCK_MONOTONIC timestamp when the stream reaches it; since a stream runs in
 * order, "complete" means every task queued before the record has finished.  The event is
 * complete when its newest record is.  aclrtStreamWaitEvent queues a task that blocks its
 * stream's worker until the record current at the time of the call is complete.
 *
 * Records of one event on different streams complete in any order, so each record is tracked:
 * `pending` lists the numbers of the records issued and not yet complete (ascending; as many as
 * records queued), and a record is complete when it is not in that list.  (Keeping only the
 * newest completed number let a wait for record 1 on a busy stream end when record 2 on an idle
 * stream completed.)
 *
 * All event state sits under one lock and one condition variable (events are few and their
 * transitions rare).  An event lives while the user's handle or any queued task refers to it,
 * so aclrtDestroyEvent never blocks and never frees memory a queued task still needs.
 *
 * An IPC event (ACL_EVENT_IPC) keeps its record numbers in a page other processes map
 * (rt_shared_sync.c): `issued` counts the records of every process, `value` is the newest
 * completed one, and a record is complete when `value` has reached it (32-bit numbers, compared
 * modulo 2^32).  aclrtIpcGetEventHandle puts a key to that page in the handle (made as the IPC
 * memory keys are, rt_ipc.c; it dies with the event) and aclrtIpcOpenEventHandle maps it, so a
 * record in one process ends waits in the other.  Its waiters sleep on the page's word, since a
 * record in another process does not signal this process's condition variable.
 *
 * The host-side calls that only read an event (synchronize, status queries, timestamps) are in
 * event_query.c; event_impl.h is what the two files share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check/nn_check.h"
#include "runtime/event_impl.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"
#include "runtime/rt_ext.h"

#define EVENT_KEY_PREFIX "nnevent"

static pthread_mutex_t g_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ev_cond;
static pthread_once_t g_ev_once = PTHREAD_ONCE_INIT;
static nn_ptrset g_events; /* under g_ev_lock */
static uint32_t g_next_event_id; /* under g_ev_lock */

static void ev_init(void)
{
    nn_rt_cond_init_monotonic(&g_ev_cond);
}

void nn_event_lock(void)
{
    pthread_once(&g_ev_once, ev_init);
    pthread_mutex_lock(&g_ev_lock);
}

void nn_event_unlock(void)
{
    pthread_mutex_unlock(&g_ev_lock);
}

/* Under g_ev_lock. */
void nn_event_unref_locked(nn_event *ev)
{
    if (--ev->refs == 0) {
        if (ev->shared != NULL)
            nn_shared_page_release(ev->shared);
        free(ev->shared);
        free(ev->pending);
        free(ev);
    }
}

/* Index of record `gen` in ev->pending, or num_pending when it is not pending. */
static size_t ev_pending_index_locked(const nn_event *ev, uint64_t gen)
{
    size_t lo = 0, hi = ev->num_pending;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev->pending[mid] < gen)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ev->num_pending && ev->pending[lo] == gen ? lo : ev->num_pending;
}

/* Record 0 stands for "never recorded" and is always complete. */
bool nn_event_record_complete_locked(const nn_event *ev, uint64_t gen)
{
    if (ev->shared != NULL)
        return (int32_t)(atomic_load(&ev->shared->sync->value) - (uint32_t)gen) >= 0;
    return ev_pending_index_locked(ev, gen) == ev->num_pending;
}

/* The newest record issued (by any process, for an IPC event). */
uint64_t nn_event_newest_locked(const nn_event *ev)
{
    return ev->shared != NULL ? atomic_load(&ev->shared->sync->issued) : ev->record_gen;
}

/* Sleeps until the event may have changed, or `deadline` (NULL: none) passed: ETIMEDOUT then.
 * An IPC event's waiter sleeps on its page's word (briefly, without the lock). */
int nn_event_sleep_locked(nn_event *ev, const struct timespec *deadline)
{
    if (ev->shared == NULL)
        return deadline == NULL ? pthread_cond_wait(&g_ev_cond, &g_ev_lock)
                                : pthread_cond_timedwait(&g_ev_cond, &g_ev_lock, deadline);
    _Atomic uint32_t *word = &ev->shared->sync->value;
    const uint32_t seen = atomic_load(word);
    nn_event_unlock(); /* the caller's reference keeps ev */
    nn_shared_wait_change(word, seen);
    nn_event_lock();
    return deadline != NULL && nn_shared_deadline_passed(deadline) ? ETIMEDOUT : 0;
}

/* Adds record `gen` (newer than every pending one) to ev->pending; false when out of memory. */
static bool ev_add_pending_locked(nn_event *ev, uint64_t gen)
{
    if (ev->num_pending == ev->cap_pending) {
        size_t capacity = ev->cap_pending ? 2 * ev->cap_pending : 4;
        uint64_t *grown = realloc(ev->pending, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        ev->pending = grown;
        ev->cap_pending = capacity;
    }
    ev->pending[ev->num_pending++] = gen;
    return true;
}

void nn_rt_wake_blocked_tasks(void)
{
    nn_event_lock();
    pthread_cond_broadcast(&g_ev_cond);
    nn_event_unlock();
    nn_callback_wake_all();
}

/* Looks up a user handle under g_ev_lock; NULL (after nn_rt_error) when unknown. */
nn_event *nn_event_find_locked(const char *api, const char *param, aclrtEvent event, aclError *err)
{
    if (event == NULL) {
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, param);
        return NULL;
    }
    if (!nn_ptrset_has(&g_events, event)) {
        *err = nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: %s %p is not a live event (never created or already "
                           "destroyed).", api, param, event);
        return NULL;
    }
    *err = ACL_SUCCESS;
    return event;
}

aclError nn_event_get_id(const char *api, aclrtEvent event, uint32_t *id)
{
    aclError err;
    nn_event_lock();
    const nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    if (ev != NULL)
        *id = ev->id;
    nn_event_unlock();
    return err;
}

size_t nn_event_live_count(void)
{
    nn_event_lock();
    size_t count = g_events.count;
    nn_event_unlock();
    return count;
}

/* ------------------------------------------------------------------------------------------ */
/* Create / destroy                                                                            */
/* ------------------------------------------------------------------------------------------ */

static aclError create_event(const char *api, aclrtEvent *event, uint32_t flags, bool reusable)
{
    if (event == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: event must not be null.", api);
    nn_event *ev = calloc(1, sizeof *ev);
    if (ev == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    ev->flags = flags;
    ev->reusable = reusable;
    ev->refs = 1;
    if ((flags & ACL_EVENT_IPC) != 0) {
        ev->shared = malloc(sizeof *ev->shared);
        aclError err = ev->shared == NULL ? nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api)
                                          : nn_shared_page_create(api, "event", ev->shared);
        if (err != ACL_SUCCESS) {
            free(ev->shared);
            free(ev);
            return err;
        }
    }
    nn_event_lock();
    ev->id = g_next_event_id++;
    bool added = nn_ptrset_add(&g_events, ev);
    nn_event_unlock();
    if (!added) {
        nn_event_lock();
        nn_event_unref_locked(ev);
        nn_event_unlock();
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    nn_check_object_created(ev, "aclrtEvent", api, true);
    nn_check_race_event_destroyed(ev); /* an address used before starts unrecorded */
    *event = ev;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event)
{
    return create_event("aclrtCreateEvent", event, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, false);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    return create_event("aclrtCreateEventWithFlag", event, flag, false);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    return create_event("aclrtCreateEventExWithFlag", event, flag, true);
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event)
{
    aclError err;
    nn_event_lock();
    nn_event *ev = nn_event_find_locked("aclrtDestroyEvent", "event", event, &err);
    if (ev != NULL) {
        nn_ptrset_remove(&g_events, ev);
        nn_check_object_destroyed(ev);
        nn_check_race_event_destroyed(ev);
        nn_event_unref_locked(ev); /* queued records/waits keep it alive until they have run */
    }
    nn_event_unlock();
    return err;
}

void nn_event_finalize(void)
{
    nn_event_lock();
    for (size_t i = 0; i < g_events.count; i++)
        nn_event_unref_locked(g_events.items[i]);
    nn_ptrset_clear(&g_events);
    nn_event_unlock();
}

/* ------------------------------------------------------------------------------------------ */
/* Record / reset / wait (queued tasks)                                                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct event_task {
    nn_event *ev;
    uint64_t gen;
    nn_stream *stream;
    bool ran;
    int32_t timeout_ms; /* a wait's own limit (aclrtStreamWaitEventWithTimeout), 0: none */
} event_task;

static event_task *event_task_new(nn_event *ev, uint64_t gen, nn_stream *stream)
{
    event_task *task = malloc(sizeof *task);
    if (task != NULL) {
        task->ev = ev;
        task->gen = gen;
        task->stream = stream;
        task->ran = false;
        task->timeout_ms = 0;
    }
    return task;
}

/* Marks record `gen` complete (the newest completed one gives the status and time) and wakes
 * waiters.  Under g_ev_lock. */
static void complete_record_locked(nn_event *ev, uint64_t gen)
{
    if (ev->shared != NULL) { /* raises the newest completed number, modulo 2^32 */
        _Atomic uint32_t *word = &ev->shared->sync->value;
        uint32_t done = atomic_load(word);
        while ((int32_t)((uint32_t)gen - done) > 0 && !atomic_compare_exchange_weak(word, &done, (uint32_t)gen))
            ;
        nn_shared_wake(word);
    }
    size_t i = ev_pending_index_locked(ev, gen);
    if (i < ev->num_pending) {
        ev->num_pending--;
        for (; i < ev->num_pending; i++)
            ev->pending[i] = ev->pending[i + 1];
    }
    if (gen > ev->newest_done) {
        ev->newest_done = gen;
        ev->recorded = true;
        clock_gettime(CLOCK_MONOTONIC, &ev->stamp);
    }
    pthread_cond_broadcast(&g_ev_cond);
}

static int run_record(void *ctx)
{
    event_task *task = ctx;
    nn_event_lock();
    complete_record_locked(task->ev, task->gen);
    task->ran = true;
    nn_event_unlock();
    return 0;
}

/* Also reached for a record dropped by aclrtDestroyStreamForce: it completes anyway, so that
 * nobody waits forever for a record that will never run. */
static void release_record(void *ctx)
{
    event_task *task = ctx;
    nn_event_lock();
    if (!task->ran)
        complete_record_locked(task->ev, task->gen);
    nn_event_unref_locked(task->ev);
    nn_event_unlock();
    free(task);
}

static int run_reset(void *ctx)
{
    event_task *task = ctx;
    nn_event_lock();
    /* Only undo the records this reset follows; a record issued after it stays. */
    if (task->ev->newest_done <= task->gen)
        task->ev->recorded = false;
    nn_event_unlock();
    return 0;
}

static int run_wait(void *ctx)
{
    event_task *task = ctx;
    struct timespec deadline;
    const uint32_t limit_s = nn_rt_op_wait_timeout_s(); /* aclrtSetOpWaitTimeout; 0: none */
    const int32_t limit_ms = task->timeout_ms > 0 ? task->timeout_ms
                             : limit_s > INT32_MAX / 1000 ? INT32_MAX : (int32_t)(limit_s * 1000);
    if (limit_ms > 0)
        nn_rt_deadline(&deadline, limit_ms);
    int code = 0;
    nn_event_lock();
    while (!nn_event_record_complete_locked(task->ev, task->gen) && !nn_stream_aborting(task->stream)) {
        if (nn_event_sleep_locked(task->ev, limit_ms == 0 ? NULL : &deadline) == ETIMEDOUT &&
            !nn_event_record_complete_locked(task->ev, task->gen)) {
            code = nn_rt_error(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "%s: the event was not recorded within the "
                               "wait timeout (%d ms, %s).", task->timeout_ms > 0 ? "aclrtStreamWaitEventWithTimeout"
                               : "aclrtStreamWaitEvent", (int)limit_ms, task->timeout_ms > 0 ? "the call's"
                               : "aclrtSetOpWaitTimeout");
            break;
        }
    }
    nn_event_unlock();
    return code;
}

static void release_ref(void *ctx)
{
    event_task *task = ctx;
    nn_event_lock();
    nn_event_unref_locked(task->ev);
    nn_event_unlock();
    free(task);
}

typedef enum { EV_RECORD, EV_RESET, EV_WAIT } event_task_kind;

/* Queues the record, reset or wait of `ev` on `s`, taking the record number now. */
static aclError issue_event_task(const char *api, nn_event *ev, nn_stream *s, event_task_kind kind,
                                 int32_t timeout_ms)
{
    nn_event_lock();
    if (!nn_ptrset_has(&g_events, ev)) { /* destroyed meanwhile by another thread */
        nn_event_unlock();
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: event %p was destroyed.", api, (void *)ev);
    }
    uint64_t gen = kind == EV_RECORD ? ev->record_gen + 1 : ev->record_gen;
    if (ev->shared != NULL) /* numbered among the records of every process */
        gen = kind == EV_RECORD ? atomic_fetch_add(&ev->shared->sync->issued, 1u) + 1u : nn_event_newest_locked(ev);
    event_task *task = event_task_new(ev, gen, s);
    if (task == NULL || (kind == EV_RECORD && ev->shared == NULL && !ev_add_pending_locked(ev, gen))) {
        nn_event_unlock();
        free(task);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    task->timeout_ms = timeout_ms;
    if (kind == EV_RECORD) {
        ev->record_gen = gen;
        nn_check_race_event_recorded(ev, s);
    } else if (kind == EV_WAIT) {
        nn_check_race_event_waited(s, ev);
    }
    ev->refs++;
    nn_event_unlock();

    nn_prof_label(NN_PROF_EVENT, api);
    switch (kind) {
    case EV_RECORD:
        return nn_stream_submit(s, run_record, release_record, task);
    case EV_RESET:
        return nn_stream_submit(s, run_reset, release_ref, task);
    default:
        return nn_stream_submit(s, run_wait, release_ref, task);
    }
}

/* The call as the program made it: issued at once, or, on a stream capturing into a model,
 * at each execution of the model (the record number of that execution). */
typedef struct event_call {
    const char *api;
    nn_event *ev; /* holds a reference */
    event_task_kind kind;
    int32_t timeout_ms; /* a wait's own limit, 0: none */
} event_call;

static aclError replay_event_call(void *ctx, nn_stream *s)
{
    event_call *call = ctx;
    return issue_event_task(call->api, call->ev, s, call->kind, call->timeout_ms);
}

static void release_event_call(void *ctx)
{
    event_call *call = ctx;
    nn_event_lock();
    nn_event_unref_locked(call->ev);
    nn_event_unlock();
    free(call);
}

static aclmdlRITaskType call_task_type(event_task_kind kind)
{
    return kind == EV_RECORD ? ACL_MODEL_RI_TASK_EVENT_RECORD
                             : kind == EV_RESET ? ACL_MODEL_RI_TASK_EVENT_RESET : ACL_MODEL_RI_TASK_EVENT_WAIT;
}

bool nn_event_task_params(const nn_captured_task *task, aclmdlRITaskParams *params)
{
    if (task->replay != replay_event_call)
        return false;
    const event_call *call = task->ctx; /* record, wait and reset params share one layout */
    params->eventRecordTaskParams = (aclmdlRIEventRecordTaskParams){call->ev, call->ev->flags, 0};
    return true;
}

/* Submits the call; on a stream of an open capture also keeps the capture's books: a wait for a
 * record made in a capture joins the waiting stream to it (CANN's cross-stream capture), and a
 * record remembers the capture it went into. */
static aclError submit_event_call(const char *api, nn_stream *s, event_call *call)
{
    nn_event *ev = call->ev;
    const event_task_kind kind = call->kind; /* the call is freed once it has run here */
    nn_event_lock();
    uint32_t recorded_in = ev->capture_model;
    ev->refs++; /* ours, until the books are kept */
    nn_event_unlock();
    aclError err = ACL_SUCCESS;
    if (kind == EV_WAIT && recorded_in != 0 && !nn_stream_records(s))
        err = nn_model_join_capture(api, s, recorded_in);
    bool captured = err == ACL_SUCCESS && nn_stream_records(s);
    if (err == ACL_SUCCESS)
        err = nn_stream_submit_replayed(s, replay_event_call, release_event_call, call, call_task_type(kind));
    else
        release_event_call(call);
    uint32_t model = 0;
    if (err == ACL_SUCCESS && captured)
        model = nn_model_note_event_call(s, ev, kind == EV_RECORD, kind == EV_WAIT);
    nn_event_lock();
    if (err == ACL_SUCCESS && kind == EV_RECORD)
        ev->capture_model = model;
    nn_event_unref_locked(ev);
    nn_event_unlock();
    return err;
}

static aclError queue_event_task(const char *api, aclrtEvent event, aclrtStream stream,
                                 event_task_kind kind, int32_t timeout_ms)
{
    aclError err;
    nn_event_lock();
    nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    if (ev != NULL)
        ev->refs++; /* the call's */
    nn_event_unlock();
    if (ev == NULL)
        return err;
    nn_stream *s;
    err = nn_stream_resolve_named(api, stream, &s);
    event_call *call = err == ACL_SUCCESS ? malloc(sizeof *call) : NULL;
    if (call == NULL) {
        nn_event_lock();
        nn_event_unref_locked(ev);
        nn_event_unlock();
        return err != ACL_SUCCESS ? err : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *call = (event_call){api, ev, kind, timeout_ms};
    return submit_event_call(api, s, call);
}

ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return queue_event_task("aclrtRecordEvent", event, stream, EV_RECORD, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
    return queue_event_task("aclrtResetEvent", event, stream, EV_RESET, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return queue_event_task("aclrtStreamWaitEvent", event, stream, EV_WAIT, 0);
}

/* The timeout is the wait's own limit in ms (CANN: [0, INT_MAX], 107000 below) on the chips
 * whose runtime honours it (streamWaitEventTimeout CUSTOM: 910_B_93, 950); Ascend910 and
 * Ascend310P ignore it (NOT_SUPPORT, ZERO in runtime:src/runtime/config/<chip>/dev_info_reg.cc).
 * 0 means none of its own; either way aclrtSetOpWaitTimeout still applies.  Past it the wait
 * fails and the stream reports 507047 at its next synchronize. */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout)
{
    static const char api[] = "aclrtStreamWaitEventWithTimeout";
    if (timeout < 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: timeout %d must be in [0, INT_MAX] ms.", api,
                           (int)timeout);
    const nn_soc soc = nn_soc_current();
    const bool honoured = soc != NN_SOC_ASCEND910 && soc != NN_SOC_ASCEND310P;
    return queue_event_task(api, event, stream, EV_WAIT, honoured ? timeout : 0);
}

/* ------------------------------------------------------------------------------------------ */
/* IPC events                                                                                  */
/* ------------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)
{
    static const char api[] = "aclrtIpcGetEventHandle";
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle must not be null.", api);
    aclError err = nn_rt_require_stars(api, "IPC events");
    if (err != ACL_SUCCESS)
        return err;
    nn_event_lock();
    nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    if (ev != NULL && ev->shared == NULL)
        err = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: event %p has flags %#x; only IPC events (created with "
                          "ACL_EVENT_IPC) are supported.", api, event, (unsigned)ev->flags);
    if (ev != NULL && err == ACL_SUCCESS)
        ev->refs++;
    nn_event_unlock();
    if (ev == NULL || err != ACL_SUCCESS)
        return err;
    char key[ACL_IPC_EVENT_HANDLE_SIZE];
    err = nn_shared_page_export(api, EVENT_KEY_PREFIX, ev->shared, false, key, sizeof key);
    if (err == ACL_SUCCESS) {
        memset(handle->reserved, 0, sizeof handle->reserved);
        memcpy(handle->reserved, key, strlen(key) + 1);
    }
    nn_event_lock();
    nn_event_unref_locked(ev);
    nn_event_unlock();
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event)
{
    static const char api[] = "aclrtIpcOpenEventHandle";
    if (event == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: event must not be null.", api);
    aclError err = nn_rt_require_stars(api, "IPC events");
    nn_stream *current = NULL; /* CANN opens the event in the current context */
    if (err == ACL_SUCCESS)
        err = nn_stream_resolve_named(api, NULL, &current);
    if (err != ACL_SUCCESS)
        return err;
    char key[ACL_IPC_EVENT_HANDLE_SIZE + 1] = {0};
    memcpy(key, handle.reserved, sizeof handle.reserved);
    nn_shared_page *page = malloc(sizeof *page);
    err = page == NULL ? nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api)
                       : nn_shared_page_import(api, "aclrtIpcGetEventHandle", EVENT_KEY_PREFIX, key, page);
    nn_event *ev = err == ACL_SUCCESS ? calloc(1, sizeof *ev) : NULL;
    if (ev == NULL) {
        if (err == ACL_SUCCESS)
            nn_shared_page_release(page);
        free(page);
        return err != ACL_SUCCESS ? err : nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *ev = (nn_event){.flags = ACL_EVENT_IPC, .reusable = true, .refs = 1, .shared = page};
    nn_event_lock();
    bool added = nn_ptrset_add(&g_events, ev);
    if (!added)
        nn_event_unref_locked(ev);
    nn_event_unlock();
    if (!added)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    nn_check_object_created(ev, "aclrtEvent", api, true);
    *event = ev;
    return ACL_SUCCESS;
}
