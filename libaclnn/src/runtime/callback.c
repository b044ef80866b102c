/*
 * callback.c - host callbacks run by a user thread (aclrtSubscribeReport / aclrtLaunchCallback
 * / aclrtProcessReport).
 *
 * A user thread subscribes to a stream; aclrtLaunchCallback queues a task on the stream that,
 * when the stream reaches it, hands the callback to that thread's report queue.  The thread
 * runs it inside aclrtProcessReport.  With ACL_CALLBACK_BLOCK the stream waits until the
 * callback has run; with ACL_CALLBACK_NO_BLOCK it goes on at once.
 *
 * Nothing is lost on unsubscribe: callbacks still waiting in a report queue are run by
 * aclrtUnSubscribeReport (or stream destroy / aclFinalize) before it returns, and a callback
 * task that reaches its stream after the unsubscribe runs on the stream's worker.
 *
 * A thread inside aclrtProcessReport counts as a user of its report_thread record: aclFinalize
 * unlinks the record but leaves its freeing to the last user, and a wait that loses its last
 * subscription (unsubscribe, stream destroy, aclFinalize) returns 107012 at once.
 *
 * Host functions take the same path when their stream has a host-function thread
 * (aclrtSubscribeHostFunc): aclrtLaunchHostFunc's task hands the function to that thread, which
 * runs it inside aclrtProcessHostFunc, and the stream waits for it (a host function always
 * blocks its stream).  Without one it runs on the stream's worker.  A thread id may subscribe
 * for both kinds; each kind has its own record and queue.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

#define NN_MAX_REPORT_THREADS 1024

typedef struct report_item {
    aclrtCallback fn;
    void *user_data;
    bool block;   /* the stream task waits for `done` (the item lives on its stack) */
    bool done;
    nn_stream *stream;
    const void *race_mark; /* racecheck: the stream's order at the launch (race_mark_at) */
    struct report_item *next;
} report_item;

/* ---- racecheck: host code a stream runs is ordered as the stream orders it ---------------- */

/* A callback or host function runs on the host once the stream reached it: it comes after every
 * task queued on the stream before it.  The launch records the stream's clock under a mark of
 * its own (racecheck's events; an odd number, never an event's address), and the host takes it
 * when the code runs: a copy in a callback that reads the preceding launch's output is ordered,
 * as on the card.  (The host has one clock: from then on every host thread counts as ordered
 * after those tasks, which can hide a race, never invent one.) */
static const void *race_mark_at(nn_stream *stream)
{
    static atomic_uintptr_t next_mark = 1;
    const void *mark = (const void *)atomic_fetch_add(&next_mark, 2);
    nn_check_race_event_recorded(mark, stream);
    return mark;
}

static void race_enter(const void *mark)
{
    if (mark == NULL)
        return;
    nn_check_race_host_waited_event(mark);
    nn_check_race_event_destroyed(mark);
}

/* Runs host code a stream reached (ordered by race_enter), marked as such for memcheck's pinned
 * blocks: a copy queued after it on its stream still guards a block it touches. */
static void run_stream_code(const void *mark, void (*fn)(void *), void *arg)
{
    race_enter(mark);
    nn_check_stream_code(true);
    fn(arg);
    nn_check_stream_code(false);
}

/* What a subscription hands its thread (see the top of the file); SUB_ANY only in lookups. */
typedef enum sub_kind { SUB_REPORT, SUB_HOST_FUNC, SUB_ANY } sub_kind;

typedef struct report_thread {
    uint64_t thread_id;
    sub_kind kind;
    report_item *head;
    report_item *tail;
    size_t num_streams; /* subscriptions; 0 = not subscribed */
    const nn_stream *running; /* stream of the callback aclrtProcessReport is running now */
    int users;     /* threads inside aclrtProcessReport with this id */
    bool released; /* unlinked by aclFinalize: the last user frees it */
    struct report_thread *next;
} report_thread;

typedef struct subscription {
    nn_stream *stream;
    report_thread *thread;
} subscription;

static pthread_mutex_t g_cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cb_cond;
static pthread_once_t g_cb_once = PTHREAD_ONCE_INIT;
static report_thread *g_threads;
static subscription *g_subs;
static size_t g_num_subs;

/* The stream whose blocking callback this thread runs now (it waits for the callback). */
static __thread const nn_stream *tl_blocking_stream;

static void cb_init(void)
{
    nn_rt_cond_init_monotonic(&g_cb_cond);
}

static void cb_lock(void)
{
    pthread_once(&g_cb_once, cb_init);
    pthread_mutex_lock(&g_cb_lock);
}

static void cb_unlock(void)
{
    pthread_mutex_unlock(&g_cb_lock);
}

bool nn_callback_blocks_here(const nn_stream *stream)
{
    return tl_blocking_stream != NULL && tl_blocking_stream == stream;
}

void nn_callback_wake_all(void)
{
    cb_lock();
    pthread_cond_broadcast(&g_cb_cond);
    cb_unlock();
}

/* ---- lookups (under g_cb_lock) ------------------------------------------------------------- */

static bool kind_matches(sub_kind kind, sub_kind wanted)
{
    return wanted == SUB_ANY || kind == wanted;
}

static subscription *find_subscription(const nn_stream *stream, sub_kind kind)
{
    for (size_t i = 0; i < g_num_subs; i++)
        if (g_subs[i].stream == stream && kind_matches(g_subs[i].thread->kind, kind))
            return &g_subs[i];
    return NULL;
}

static report_thread *find_thread(uint64_t thread_id, sub_kind kind)
{
    for (report_thread *t = g_threads; t != NULL; t = t->next)
        if (t->thread_id == thread_id && t->kind == kind)
            return t;
    return NULL;
}

static size_t subscribed_threads(void)
{
    size_t count = 0;
    for (report_thread *t = g_threads; t != NULL; t = t->next)
        count += t->num_streams > 0;
    return count;
}

/* Unlinks item from t's queue; false when it is not there (already taken to run). */
static bool remove_item(report_thread *t, report_item *item)
{
    report_item **link = &t->head;
    report_item *prev = NULL;
    while (*link != NULL && *link != item) {
        prev = *link;
        link = &(*link)->next;
    }
    if (*link == NULL)
        return false;
    *link = item->next;
    if (t->tail == item)
        t->tail = prev;
    item->next = NULL;
    return true;
}

static void append_item(report_thread *t, report_item *item)
{
    item->next = NULL;
    if (t->tail != NULL)
        t->tail->next = item;
    else
        t->head = item;
    t->tail = item;
}

/* Runs a callback taken off a queue and settles it: a blocking one is marked done (its owner
 * frees it), a non-blocking one is freed here.  Called without g_cb_lock. */
static void run_item(report_item *item)
{
    const nn_stream *outer = tl_blocking_stream;
    if (item->block)
        tl_blocking_stream = item->stream;
    run_stream_code(item->race_mark, item->fn, item->user_data);
    tl_blocking_stream = outer;
    cb_lock();
    if (item->block) {
        item->done = true;
        pthread_cond_broadcast(&g_cb_cond);
        cb_unlock();
    } else {
        cb_unlock();
        free(item);
    }
}

/* ---- unsubscribe ---------------------------------------------------------------------------- */

/* Under g_cb_lock: removes the subscriptions of `stream` (NULL: all) of `kind` and moves their
 * pending callbacks into the list *pending (in queue order). */
static void detach_locked(nn_stream *stream, sub_kind kind, report_item **pending)
{
    report_item **pending_tail = pending;
    while (*pending_tail != NULL)
        pending_tail = &(*pending_tail)->next;
    size_t i = 0;
    while (i < g_num_subs) {
        subscription *sub = &g_subs[i];
        if ((stream != NULL && sub->stream != stream) || !kind_matches(sub->thread->kind, kind)) {
            i++;
            continue;
        }
        report_thread *t = sub->thread;
        report_item *item = t->head;
        while (item != NULL) {
            report_item *next = item->next;
            if (item->stream == sub->stream) {
                remove_item(t, item);
                *pending_tail = item;
                pending_tail = &item->next;
            }
            item = next;
        }
        t->num_streams--;
        g_subs[i] = g_subs[--g_num_subs];
    }
    pthread_cond_broadcast(&g_cb_cond); /* a wait in aclrtProcessReport re-checks its subscriptions */
}

/* Under g_cb_lock: forgets every report thread; one still inside aclrtProcessReport is freed
 * by its last user there. */
static void release_threads_locked(void)
{
    while (g_threads != NULL) {
        report_thread *next = g_threads->next;
        if (g_threads->users > 0)
            g_threads->released = true;
        else
            free(g_threads);
        g_threads = next;
    }
}

static void run_pending(report_item *pending)
{
    while (pending != NULL) {
        report_item *next = pending->next;
        run_item(pending);
        pending = next;
    }
}

/* Under g_cb_lock: waits until no other thread is running a callback of `stream` (NULL: any),
 * so that callbacks still pending run after it, in order. */
static void wait_running_locked(const nn_stream *stream)
{
    uint64_t self = (uint64_t)pthread_self();
    for (;;) {
        bool busy = false;
        for (report_thread *t = g_threads; t != NULL && !busy; t = t->next)
            busy = t->running != NULL && t->thread_id != self &&
                   (stream == NULL || t->running == stream);
        if (!busy)
            return;
        pthread_cond_wait(&g_cb_cond, &g_cb_lock);
    }
}

void nn_callback_unsubscribe_stream(nn_stream *stream)
{
    report_item *pending = NULL;
    cb_lock();
    detach_locked(stream, SUB_ANY, &pending);
    wait_running_locked(stream);
    cb_unlock();
    run_pending(pending);
}

void nn_callback_finalize(void)
{
    report_item *pending = NULL;
    cb_lock();
    detach_locked(NULL, SUB_ANY, &pending);
    wait_running_locked(NULL);
    cb_unlock();
    run_pending(pending);
    cb_lock();
    release_threads_locked(); /* queues are empty: every item belonged to a subscription */
    free(g_subs);
    g_subs = NULL;
    g_num_subs = 0;
    cb_unlock();
}

void nn_callback_finalize_at_exit(void)
{
    report_item *pending = NULL;
    cb_lock();
    detach_locked(NULL, SUB_ANY, &pending);
    /* At exit user callbacks are not run any more: settle them without calling them. */
    while (pending != NULL) {
        report_item *next = pending->next;
        if (pending->block)
            pending->done = true;
        else
            free(pending);
        pending = next;
    }
    pthread_cond_broadcast(&g_cb_cond);
    release_threads_locked();
    free(g_subs);
    g_subs = NULL;
    g_num_subs = 0;
    cb_unlock();
}

/* ------------------------------------------------------------------------------------------ */
/* Public API                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* How the two kinds differ at the API: their calls' names and the statuses CANN gives. */
typedef struct kind_api {
    const char *subscribe, *unsubscribe, *process;
    int repeat_code;         /* the stream already has a thread of this kind */
    int not_subscribed_code; /* unsubscribing a thread that is not the stream's */
} kind_api;

static const kind_api KIND_API[2] = {
    [SUB_REPORT] = {"aclrtSubscribeReport", "aclrtUnSubscribeReport", "aclrtProcessReport",
                    ACL_ERROR_REPEAT_SUBSCRIBE, ACL_ERROR_RT_STREAM_NO_CB_REG},
    /* runtime:src/runtime_compact/feature/src/subscribe_manager_linux.c, SubscribeReport */
    [SUB_HOST_FUNC] = {"aclrtSubscribeHostFunc", "aclrtUnSubscribeHostFunc", "aclrtProcessHostFunc",
                       ACL_ERROR_RT_STREAM_SUBSCRIBE, ACL_ERROR_RT_STREAM_SUBSCRIBE},
};

static aclError subscribe(uint64_t threadId, aclrtStream stream, sub_kind kind)
{
    const char *api = KIND_API[kind].subscribe;
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    cb_lock();
    subscription *existing = find_subscription(s, kind);
    if (existing != NULL) {
        uint64_t owner = existing->thread->thread_id;
        cb_unlock();
        return nn_rt_error(KIND_API[kind].repeat_code, "%s: stream %p is already subscribed by thread %llu (one "
                           "thread per stream).", api, stream, (unsigned long long)owner);
    }
    report_thread *t = find_thread(threadId, kind);
    if ((t == NULL || t->num_streams == 0) && subscribed_threads() >= NN_MAX_REPORT_THREADS) {
        cb_unlock();
        return nn_rt_error(ACL_ERROR_RT_OVER_LIMIT, "%s: at most %d threads may be subscribed.", api,
                           NN_MAX_REPORT_THREADS);
    }
    subscription *subs = realloc(g_subs, (g_num_subs + 1) * sizeof *subs);
    if (subs != NULL)
        g_subs = subs;
    if (t == NULL && subs != NULL) {
        t = calloc(1, sizeof *t);
        if (t != NULL) {
            t->thread_id = threadId;
            t->kind = kind;
            t->next = g_threads;
            g_threads = t;
        }
    }
    if (subs == NULL || t == NULL) {
        cb_unlock();
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    g_subs[g_num_subs].stream = s;
    g_subs[g_num_subs].thread = t;
    g_num_subs++;
    t->num_streams++;
    cb_unlock();
    return ACL_SUCCESS;
}

static aclError unsubscribe(uint64_t threadId, aclrtStream stream, sub_kind kind)
{
    const char *api = KIND_API[kind].unsubscribe;
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    report_item *pending = NULL;
    cb_lock();
    subscription *sub = find_subscription(s, kind);
    if (sub == NULL || sub->thread->thread_id != threadId) {
        cb_unlock();
        return nn_rt_error(KIND_API[kind].not_subscribed_code, "%s: thread %llu is not subscribed to stream %p.",
                           api, (unsigned long long)threadId, stream);
    }
    detach_locked(s, kind, &pending);
    wait_running_locked(s);
    cb_unlock();
    run_pending(pending);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return subscribe(threadId, stream, SUB_REPORT);
}

ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return unsubscribe(threadId, stream, SUB_REPORT);
}

/* CANN's compact runtime refuses a null stream here (subscribe_manager_linux.c): no default. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    if (exeStream == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtSubscribeHostFunc: exeStream must not be null.");
    return subscribe(hostFuncThreadId, exeStream, SUB_HOST_FUNC);
}

ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    if (exeStream == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtUnSubscribeHostFunc: exeStream must not be null.");
    return unsubscribe(hostFuncThreadId, exeStream, SUB_HOST_FUNC);
}

/* ---- the stream task of aclrtLaunchCallback ----------------------------------------------- */

typedef struct callback_task {
    aclrtCallback fn;
    void *user_data;
    bool block;
    nn_stream *stream;
    const void *race_mark;
} callback_task;

/* A stream task hands `fn` to the thread subscribed to its stream for `kind` and, if `block`,
 * waits until that thread has run it.  Returns false (nothing done) when the stream has no such
 * thread; an allocation failure is *err. */
static bool hand_to_thread(sub_kind kind, aclrtCallback fn, void *arg, bool block, nn_stream *stream,
                           const void *race_mark, int *err)
{
    report_item local = {fn, arg, true, false, stream, race_mark, NULL};
    report_item *item = &local;
    *err = 0;
    if (!block) {
        item = malloc(sizeof *item);
        if (item == NULL) {
            *err = nn_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchCallback: out of memory.");
            return true;
        }
        *item = local;
        item->block = false;
    }
    cb_lock();
    subscription *sub = find_subscription(stream, kind);
    if (sub == NULL) {
        cb_unlock();
        if (item != &local)
            free(item);
        return false;
    }
    report_thread *t = sub->thread;
    append_item(t, item);
    pthread_cond_broadcast(&g_cb_cond);
    if (block) {
        /* A force-destroy or an abort gives up on the function while it is still queued; one
         * the thread has started is waited for (`local` lives on this stack). */
        while (!local.done && !(nn_stream_aborting(stream) && remove_item(t, &local)))
            pthread_cond_wait(&g_cb_cond, &g_cb_lock);
    }
    cb_unlock();
    return true;
}

static int run_callback_task(void *ctx)
{
    callback_task *task = ctx;
    int err;
    if (hand_to_thread(SUB_REPORT, task->fn, task->user_data, task->block, task->stream, task->race_mark, &err))
        return err;
    /* Unsubscribed after the launch: run it here rather than lose it. */
    nn_log(NN_LOG_WARNING, "aclrtLaunchCallback: stream %p is no longer subscribed; the "
           "callback runs on the stream's worker.", (void *)task->stream);
    run_stream_code(task->race_mark, task->fn, task->user_data);
    return 0;
}

ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream)
{
    if (fn == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtLaunchCallback: fn must not be null.");
    if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtLaunchCallback: blockType must be ACL_CALLBACK_NO_BLOCK (0) or "
                           "ACL_CALLBACK_BLOCK (1), got %d.", (int)blockType);
    nn_stream *s;
    aclError ret = nn_stream_resolve_named("aclrtLaunchCallback", stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    cb_lock();
    bool subscribed = find_subscription(s, SUB_REPORT) != NULL;
    cb_unlock();
    if (!subscribed)
        return nn_rt_error(ACL_ERROR_RT_STREAM_NO_CB_REG,
                           "aclrtLaunchCallback: no thread is subscribed to stream %p; call "
                           "aclrtSubscribeReport first.", stream);
    callback_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchCallback: out of memory.");
    task->fn = fn;
    task->user_data = userData;
    task->block = blockType == ACL_CALLBACK_BLOCK;
    task->stream = s;
    task->race_mark = race_mark_at(s);
    nn_prof_label(NN_PROF_CALLBACK, "aclrtLaunchCallback");
    return nn_stream_submit(s, run_callback_task, free, task);
}

/* aclrtProcessReport / aclrtProcessHostFunc once the timeout is checked (ms, -1: forever). */
static aclError process(int32_t timeout, sub_kind kind)
{
    const char *api = KIND_API[kind].process;
    uint64_t self = (uint64_t)pthread_self();
    struct timespec deadline;
    if (timeout >= 0)
        nn_rt_deadline(&deadline, timeout);
    cb_lock();
    report_thread *t = find_thread(self, kind);
    if (t == NULL || t->num_streams == 0) {
        cb_unlock();
        return nn_rt_error(ACL_ERROR_RT_THREAD_SUBSCRIBE, "%s: the calling thread (%llu) is not subscribed to any "
                           "stream; call %s with its id first.", api, (unsigned long long)self,
                           KIND_API[kind].subscribe);
    }
    t->users++; /* keeps t alive across an aclFinalize (release_threads_locked) */
    aclError ret = ACL_SUCCESS;
    while (t->head == NULL && ret == ACL_SUCCESS) {
        if (t->num_streams == 0)
            ret = nn_rt_error(ACL_ERROR_RT_THREAD_SUBSCRIBE, "%s: the calling thread (%llu) was unsubscribed "
                              "(%s, stream destroy or aclFinalize) while it waited.", api,
                              (unsigned long long)self, KIND_API[kind].unsubscribe);
        else if (timeout < 0)
            pthread_cond_wait(&g_cb_cond, &g_cb_lock);
        else if (pthread_cond_timedwait(&g_cb_cond, &g_cb_lock, &deadline) == ETIMEDOUT &&
                 t->head == NULL)
            ret = nn_rt_error(ACL_ERROR_RT_REPORT_TIMEOUT, "%s: nothing arrived within %d ms.", api,
                              (int)timeout);
    }
    while (t->head != NULL) {
        report_item *item = t->head;
        remove_item(t, item);
        t->running = item->stream;
        cb_unlock();
        run_item(item);
        cb_lock();
        t->running = NULL;
        pthread_cond_broadcast(&g_cb_cond); /* an unsubscribe may wait for this one */
    }
    bool last = --t->users == 0 && t->released;
    cb_unlock();
    if (last)
        free(t);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout)
{
    if (timeout < -1)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtProcessReport: timeout must be -1 (forever) or >= 0 ms, got %d.",
                           (int)timeout);
    return process(timeout, SUB_REPORT);
}

/* CANN's compact runtime (runtime:src/runtime_compact/feature/src/host_func.c): -1 or > 0 ms. */
ACL_FUNC_VISIBILITY aclError aclrtProcessHostFunc(int32_t timeout)
{
    if (timeout < -1 || timeout == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtProcessHostFunc: timeout must be -1 (forever) or > 0 ms, got %d.", (int)timeout);
    return process(timeout, SUB_HOST_FUNC);
}

/* ---- aclrtLaunchHostFunc: a host function, run on the stream's own worker ----------------- */

typedef struct host_func_task {
    aclrtHostFunc fn;
    void *args;
    const void *race_mark;
    nn_stream *stream; /* the program's functions only: the stream its host-function thread serves */
} host_func_task;

static int run_host_func(void *ctx)
{
    host_func_task *task = ctx;
    int err;
    if (task->stream != NULL &&
        hand_to_thread(SUB_HOST_FUNC, task->fn, task->args, true, task->stream, task->race_mark, &err))
        return err;
    run_stream_code(task->race_mark, task->fn, task->args);
    return 0;
}

/* `program_code`: a function of the program's, ordered for racecheck as its stream orders it
 * (race_mark_at); the library's own stream work (2-D copies, 32-bit fills) is checked as the
 * device task it stands for instead, and must not teach the host any order. */
static aclError launch_host_func(const char *api, aclrtStream stream, aclrtHostFunc fn, void *args,
                                 bool program_code)
{
    if (fn == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: fn must not be null.", api);
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    host_func_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    task->fn = fn;
    task->args = args;
    task->race_mark = program_code ? race_mark_at(s) : NULL;
    task->stream = program_code ? s : NULL;
    nn_prof_label(NN_PROF_HOST_FUNC, api);
    return nn_stream_submit(s, run_host_func, free, task);
}

ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    return launch_host_func("aclrtLaunchHostFunc", stream, fn, args, true);
}

aclError nn_stream_launch_library_task(const char *api, aclrtStream stream, aclrtHostFunc fn, void *args)
{
    return launch_host_func(api, stream, fn, args, false);
}
