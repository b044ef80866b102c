/*
 * event_query.c - the host-side calls that read an event: aclrtSynchronizeEvent[WithTimeout]
 * (sleep until the record current at the call has completed), the status queries
 * (aclrtQueryEvent, aclrtQueryEventStatus, aclrtQueryEventWaitStatus) and the timing calls
 * (aclrtEventGetTimestamp, aclrtEventElapsedTime).  None of them queues a task; the records
 * they read are made by event.c's stream tasks (event_impl.h holds what the files share).
 */
#include <errno.h>

#include "check/nn_check.h"
#include "runtime/event_impl.h"

static aclError synchronize_event(const char *api, aclrtEvent event, int32_t timeout)
{
    aclError err;
    struct timespec deadline;
    if (timeout >= 0)
        nn_rt_deadline(&deadline, timeout);
    nn_event_lock();
    nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    if (ev == NULL) {
        nn_event_unlock();
        return err;
    }
    uint64_t target = nn_event_newest_locked(ev);
    ev->refs++; /* survive a concurrent aclrtDestroyEvent while waiting */
    while (!nn_event_record_complete_locked(ev, target)) {
        if (nn_event_sleep_locked(ev, timeout < 0 ? NULL : &deadline) == ETIMEDOUT && !nn_event_record_complete_locked(ev, target)) {
            err = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
            break;
        }
    }
    nn_event_unref_locked(ev);
    nn_event_unlock();
    if (err != ACL_SUCCESS)
        return nn_rt_error(err, "%s: event %p did not complete within %d ms.", api, event,
                           (int)timeout);
    nn_check_race_host_waited_event(event);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    return synchronize_event("aclrtSynchronizeEvent", event, -1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    if (timeout < -1)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "aclrtSynchronizeEventWithTimeout: timeout must be -1 (forever) or "
                           ">= 0 ms, got %d.", (int)timeout);
    return synchronize_event("aclrtSynchronizeEventWithTimeout", event, timeout);
}

/* Whether the event counts as complete for a status query: its newest record has run.  A
 * never-recorded event is complete only when created by aclrtCreateEventExWithFlag (as CANN
 * documents); after aclrtResetEvent it is not complete until recorded again. */
static bool ev_status_complete_locked(const nn_event *ev)
{
    const uint64_t newest = nn_event_newest_locked(ev);
    if (newest == 0)
        return ev->reusable;
    /* (a reset is this process's: an IPC event's records of other processes count) */
    return nn_event_record_complete_locked(ev, newest) && (ev->recorded || ev->shared != NULL);
}

typedef enum { QUERY_RECORDED, QUERY_LEGACY, QUERY_WAIT } query_kind;

static aclError query_event(const char *api, aclrtEvent event, void *status, query_kind kind)
{
    aclError err;
    if (status == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: status must not be null.", api);
    nn_event_lock();
    nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    bool complete = false, wait_done = false;
    if (ev != NULL) {
        complete = ev_status_complete_locked(ev);
        wait_done = nn_event_record_complete_locked(ev, nn_event_newest_locked(ev));
    }
    nn_event_unlock();
    if (ev == NULL)
        return err;
    if (complete && kind != QUERY_WAIT) /* a program that polls until complete has waited */
        nn_check_race_host_waited_event(event);
    switch (kind) {
    case QUERY_RECORDED:
        *(aclrtEventRecordedStatus *)status = complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                                                       : ACL_EVENT_RECORDED_STATUS_NOT_READY;
        break;
    case QUERY_LEGACY:
        *(aclrtEventStatus *)status = complete ? ACL_EVENT_STATUS_COMPLETE
                                               : ACL_EVENT_STATUS_NOT_READY;
        break;
    case QUERY_WAIT:
        *(aclrtEventWaitStatus *)status = wait_done ? ACL_EVENT_WAIT_STATUS_COMPLETE
                                                    : ACL_EVENT_WAIT_STATUS_NOT_READY;
        break;
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    return query_event("aclrtQueryEventStatus", event, status, QUERY_RECORDED);
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    return query_event("aclrtQueryEvent", event, status, QUERY_LEGACY);
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)
{
    return query_event("aclrtQueryEventWaitStatus", event, status, QUERY_WAIT);
}

/* Under the event lock: 0 when the event has a completed record to time, else an error code. */
static aclError check_timed_locked(const char *api, const char *param, const nn_event *ev, aclrtEvent handle)
{
    if (ev->record_gen == 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p has never been recorded.", api, param,
                           handle);
    if (!nn_event_record_complete_locked(ev, ev->record_gen))
        return nn_rt_error(ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                           "%s: %s %p has not completed yet; synchronize it (or its stream) first.", api,
                           param, handle);
    if (!ev->recorded)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %s %p was reset after its last record.", api,
                           param, handle);
    return ACL_SUCCESS;
}

/* When the newest record completed, in microseconds of CLOCK_MONOTONIC (time since boot, as
 * the card counts from its own start). */
ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
    static const char api[] = "aclrtEventGetTimestamp";
    if (timestamp == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: timestamp must not be null.", api);
    aclError err;
    nn_event_lock();
    nn_event *ev = nn_event_find_locked(api, "event", event, &err);
    if (ev != NULL)
        err = check_timed_locked(api, "event", ev, event);
    if (ev != NULL && err == ACL_SUCCESS)
        *timestamp = (uint64_t)ev->stamp.tv_sec * 1000000u + (uint64_t)ev->stamp.tv_nsec / 1000u;
    nn_event_unlock();
    return err;
}

ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    if (ms == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: ms must not be null.");
    aclError err;
    nn_event_lock();
    nn_event *start = nn_event_find_locked("aclrtEventElapsedTime", "startEvent", startEvent, &err);
    nn_event *end = start ? nn_event_find_locked("aclrtEventElapsedTime", "endEvent", endEvent, &err)
                          : NULL;
    if (start != NULL && end != NULL) {
        err = check_timed_locked("aclrtEventElapsedTime", "startEvent", start, startEvent);
        if (err == ACL_SUCCESS)
            err = check_timed_locked("aclrtEventElapsedTime", "endEvent", end, endEvent);
        if (err == ACL_SUCCESS) {
            double elapsed = (double)(end->stamp.tv_sec - start->stamp.tv_sec) * 1e3 +
                             (double)(end->stamp.tv_nsec - start->stamp.tv_nsec) / 1e6;
            *ms = (float)elapsed;
        }
    }
    nn_event_unlock();
    return err;
}
