/*
 * event_impl.h - an event's insides, shared by the two files that implement events: event.c
 * (life cycle, the record / reset / wait tasks queued on streams, IPC events) and event_query.c
 * (the host-side synchronize, status queries and timestamps).  Nothing else looks inside an event.
 *
 * All event state sits under one lock (nn_event_lock); the functions named *_locked are called
 * with it held.
 */
#ifndef NN_EVENT_IMPL_H
#define NN_EVENT_IMPL_H

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h" /* nn_shared_page */

typedef struct nn_event {
    uint32_t flags;
    bool reusable;          /* aclrtCreateEventExWithFlag */
    uint64_t record_gen;    /* records issued */
    uint64_t *pending;      /* records issued and not complete, ascending */
    size_t num_pending, cap_pending;
    uint64_t newest_done;   /* newest record that has completed */
    bool recorded;          /* a record completed since creation or the last reset */
    struct timespec stamp;  /* when the newest completed record completed */
    int refs;               /* user handle + queued tasks */
    uint32_t capture_model; /* the open capture its newest record went into (0: none; model_ri.c) */
    nn_shared_page *shared; /* IPC events: the record numbers, shared with other processes */
    uint32_t id;            /* aclrtGetEventId: events numbered from 0 in creation order */
} nn_event;

void nn_event_lock(void);
void nn_event_unlock(void);
/* Drops one reference (the user handle or a queued task's); the last one frees the event. */
void nn_event_unref_locked(nn_event *ev);
/* Looks up a user handle; NULL (after nn_rt_error, its status in *err) when unknown. */
nn_event *nn_event_find_locked(const char *api, const char *param, aclrtEvent event, aclError *err);
/* Whether record `gen` has completed; record 0 stands for "never recorded" and is complete. */
bool nn_event_record_complete_locked(const nn_event *ev, uint64_t gen);
/* The newest record issued (by any process, for an IPC event). */
uint64_t nn_event_newest_locked(const nn_event *ev);
/* Sleeps until the event may have changed, or `deadline` (NULL: none) passed: ETIMEDOUT then.
 * The caller holds a reference: an IPC event's waiter drops the lock while it sleeps. */
int nn_event_sleep_locked(nn_event *ev, const struct timespec *deadline);

#endif /* NN_EVENT_IMPL_H */
