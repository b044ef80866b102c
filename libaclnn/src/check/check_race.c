/*
 * check_race.c - racecheck (nn_check.h, docs/checking.md): accesses to device memory that the
 * program left unordered - a host-synchronous call (aclrtMemcpy, aclrtMemset, aclrtFree) on
 * bytes an unfinished task reads or writes, and two tasks on different streams, one writing
 * bytes the other touches, with no event between them (a workspace shared by two such launches
 * included).
 *
 * The verdict follows the order the program established, never the timing of this run, with
 * vector clocks as in PyTorch's CUDA stream sanitizer and FastTrack:
 *   - each stream has a slot (1, 2, ...; slot 0 is the host) and a clock: for every slot, the
 *     newest task of that slot known to be finished before the stream's next task starts;
 *   - queuing a task joins the host's clock into the stream's (the host's past comes first) and
 *     gives the task the next number of its slot (its epoch);
 *   - aclrtRecordEvent captures the stream's clock; aclrtStreamWaitEvent joins it into the
 *     waiting stream; synchronizing a stream or an event (or a query that finds it complete,
 *     or destroying a stream, which waits for its tasks) joins it into the host's clock.
 * A task touches an allocation's bytes through records (byte range, read or write, slot,
 * epoch, what and where).  An access by a clock C is ordered after record R when
 * C[R.slot] >= R.epoch; a conflict is an unordered pair with a write in it.  Host accesses are
 * checked but not recorded: every task queued later is ordered after them.  A record the host's
 * clock covers is ordered before everything to come and is dropped, and a task's record makes
 * older records of its stream over the same bytes redundant: that bounds the memory.
 *
 * Everything runs under the allocation registry's lock (a leaf: no runtime lock is taken
 * inside).  A destroyed stream's slot is reused by a later stream, whose epochs continue from
 * the old ones (the host has joined them all, so no clock is confused).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"

/* The allocation registry's per-tool slot for racecheck (its bit number). */
#define RACE_STATE 2
#define HOST_SLOT 0u

typedef struct vclock {
    uint64_t *t; /* t[slot]; slots past n are 0 */
    uint32_t n;
} vclock;

typedef struct race_stream {
    uintptr_t key; /* the runtime's stream */
    uint32_t slot;
    uint64_t number; /* "stream #n" in creation order */
    bool is_default;
    int32_t device;
    vclock vc;
} race_stream;

typedef struct race_event {
    uintptr_t key;
    vclock vc; /* the recording stream's clock at the newest aclrtRecordEvent */
} race_event;

typedef struct keyed {
    uintptr_t key; /* sort key */
    void *item;
} keyed;

/* One queued task's identity, shared by its records. */
typedef struct race_task {
    int refs;
    uint32_t slot;
    uint64_t epoch;
    char call[64];    /* "aclnnPrelu", "aclrtMemcpyAsync" */
    char stream[80];  /* "stream 0x... (#2)" */
    nn_check_trace where;
} race_task;

typedef struct race_record {
    uint64_t lo, hi; /* byte range within the allocation */
    bool write;
    const char *role;
    int index;
    race_task *task;
} race_record;

typedef struct race_state {
    race_record *records;
    size_t count, capacity;
} race_state;

/* All under nn_check_alloc_lock. */
static vclock g_host;
static keyed *g_streams, *g_events;
static size_t g_num_streams, g_cap_streams, g_num_events, g_cap_events;
static uint32_t *g_free_slots;
static size_t g_num_free, g_cap_free;
static uint32_t g_next_slot = 1;
static uint64_t g_next_stream_number = 1;

/* ---- clocks ---------------------------------------------------------------------------------- */

static uint64_t vc_get(const vclock *vc, uint32_t slot)
{
    return slot < vc->n ? vc->t[slot] : 0;
}

static bool vc_grow(vclock *vc, uint32_t n)
{
    if (n <= vc->n)
        return true;
    uint64_t *t = realloc(vc->t, n * sizeof *t);
    if (t == NULL)
        return false;
    memset(t + vc->n, 0, (n - vc->n) * sizeof *t);
    vc->t = t;
    vc->n = n;
    return true;
}

/* into = max(into, from), element-wise. */
static void vc_join(vclock *into, const vclock *from)
{
    if (!vc_grow(into, from->n))
        return; /* out of memory: the clock stays behind (may report too much, never too little) */
    for (uint32_t i = 0; i < from->n; ++i)
        if (from->t[i] > into->t[i])
            into->t[i] = from->t[i];
}

static void vc_copy(vclock *into, const vclock *from)
{
    into->n = 0;
    if (vc_grow(into, from->n))
        memcpy(into->t, from->t, from->n * sizeof *from->t);
}

/* ---- tables ---------------------------------------------------------------------------------- */

static void *table_find(keyed *table, size_t count, const void *key)
{
    size_t at = nn_sorted_upper_bound(table, count, sizeof(keyed), (uintptr_t)key);
    return at > 0 && table[at - 1].key == (uintptr_t)key ? table[at - 1].item : NULL;
}

static bool table_add(keyed **table, size_t *count, size_t *capacity, const void *key, void *item)
{
    keyed entry = {(uintptr_t)key, item};
    size_t at = nn_sorted_upper_bound(*table, *count, sizeof entry, entry.key);
    keyed *grown = nn_sorted_insert(*table, count, capacity, 16, sizeof entry, at, &entry);
    if (grown == NULL)
        return false;
    *table = grown;
    return true;
}

static void *table_remove(keyed *table, size_t *count, const void *key)
{
    size_t at = nn_sorted_upper_bound(table, *count, sizeof(keyed), (uintptr_t)key);
    if (at == 0 || table[at - 1].key != (uintptr_t)key)
        return NULL;
    void *item = table[at - 1].item;
    nn_sorted_remove(table, count, sizeof(keyed), at - 1);
    return item;
}

static void stream_free(race_stream *s)
{
    if (s != NULL)
        free(s->vc.t);
    free(s);
}

static uint32_t take_slot(void)
{
    if (g_num_free > 0)
        return g_free_slots[--g_num_free];
    return g_next_slot++;
}

static void give_back_slot(uint32_t slot)
{
    if (g_num_free == g_cap_free) {
        size_t capacity = g_cap_free ? 2 * g_cap_free : 16;
        uint32_t *grown = realloc(g_free_slots, capacity * sizeof *grown);
        if (grown == NULL)
            return; /* the slot is lost: harmless */
        g_free_slots = grown;
        g_cap_free = capacity;
    }
    g_free_slots[g_num_free++] = slot;
}

/* A new stream's entry: its clock starts at the host's (its tasks come after the host's past). */
static race_stream *stream_new_locked(const void *key, bool is_default, int32_t device)
{
    race_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->key = (uintptr_t)key;
    s->slot = take_slot();
    s->number = g_next_stream_number++;
    s->is_default = is_default;
    s->device = device;
    vc_copy(&s->vc, &g_host);
    if (!vc_grow(&s->vc, s->slot + 1) || !table_add(&g_streams, &g_num_streams, &g_cap_streams, key, s)) {
        give_back_slot(s->slot);
        stream_free(s);
        return NULL;
    }
    return s;
}

/* The entry of a stream the runtime made before checking could see it: a plain stream. */
static race_stream *stream_of_locked(const void *key)
{
    race_stream *s = table_find(g_streams, g_num_streams, key);
    return s != NULL ? s : stream_new_locked(key, false, -1);
}

static void stream_label(const race_stream *s, char *out, size_t size)
{
    if (s->is_default)
        snprintf(out, size, "the default stream of device %d (stream #%llu)", (int)s->device,
                 (unsigned long long)s->number);
    else
        snprintf(out, size, "stream %p (stream #%llu)", (void *)s->key,
                 (unsigned long long)s->number);
}

/* ---- stream and event hooks ------------------------------------------------------------------- */

static bool racing(void)
{
    return nn_check_on(NN_CHECK_RACECHECK);
}

void nn_check_stream_created(const void *stream, bool is_default, int32_t device)
{
    if (!racing())
        return;
    nn_check_alloc_lock();
    stream_free(table_remove(g_streams, &g_num_streams, stream)); /* a reused address */
    (void)stream_new_locked(stream, is_default, device);
    nn_check_alloc_unlock();
}

void nn_check_stream_finished(const void *stream)
{
    nn_check_pinned_host_waited(); /* memcheck: copies into pinned blocks that ran are seen */
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_stream *s = table_remove(g_streams, &g_num_streams, stream);
    if (s != NULL) {
        vc_join(&g_host, &s->vc); /* its tasks have all run (or were dropped) */
        give_back_slot(s->slot);
        stream_free(s);
    }
    nn_check_alloc_unlock();
}

void nn_check_race_host_waited_stream(const void *stream)
{
    nn_check_pinned_host_waited(); /* memcheck: copies into pinned blocks that ran are seen */
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_stream *s = table_find(g_streams, g_num_streams, stream);
    if (s != NULL)
        vc_join(&g_host, &s->vc);
    nn_check_alloc_unlock();
}

static race_event *event_of_locked(const void *event)
{
    race_event *e = table_find(g_events, g_num_events, event);
    if (e != NULL)
        return e;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->key = (uintptr_t)event;
    if (!table_add(&g_events, &g_num_events, &g_cap_events, event, e)) {
        free(e);
        return NULL;
    }
    return e;
}

void nn_check_race_event_recorded(const void *event, const void *stream)
{
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_stream *s = stream_of_locked(stream);
    race_event *e = event_of_locked(event);
    if (s != NULL && e != NULL) {
        vc_join(&s->vc, &g_host); /* queued now: after the host's past */
        vc_copy(&e->vc, &s->vc);
    }
    nn_check_alloc_unlock();
}

void nn_check_race_event_waited(const void *stream, const void *event)
{
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_stream *s = stream_of_locked(stream);
    race_event *e = table_find(g_events, g_num_events, event);
    if (s != NULL) {
        vc_join(&s->vc, &g_host);
        if (e != NULL) /* never recorded: the wait orders nothing */
            vc_join(&s->vc, &e->vc);
    }
    nn_check_alloc_unlock();
}

void nn_check_race_host_waited_event(const void *event)
{
    nn_check_pinned_host_waited(); /* memcheck: copies into pinned blocks that ran are seen */
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_event *e = table_find(g_events, g_num_events, event);
    if (e != NULL)
        vc_join(&g_host, &e->vc);
    nn_check_alloc_unlock();
}

void nn_check_race_event_destroyed(const void *event)
{
    if (!racing())
        return;
    nn_check_alloc_lock();
    race_event *e = table_remove(g_events, &g_num_events, event);
    if (e != NULL)
        free(e->vc.t);
    free(e);
    nn_check_alloc_unlock();
}

/* ---- records ---------------------------------------------------------------------------------- */

static void task_unref(race_task *task)
{
    if (task != NULL && --task->refs == 0)
        free(task);
}

static void state_free(race_state *state)
{
    if (state == NULL)
        return;
    for (size_t i = 0; i < state->count; ++i)
        task_unref(state->records[i].task);
    free(state->records);
    free(state);
}

void nn_check_race_forget_locked(nn_check_alloc *alloc)
{
    state_free(alloc->tool_state[RACE_STATE]);
    alloc->tool_state[RACE_STATE] = NULL;
}

/* Drops the records the host's clock covers (finished before anything still to come). */
static void prune(race_state *state)
{
    size_t kept = 0;
    for (size_t i = 0; i < state->count; ++i) {
        race_record *r = &state->records[i];
        if (vc_get(&g_host, r->task->slot) >= r->task->epoch)
            task_unref(r->task);
        else
            state->records[kept++] = *r;
    }
    state->count = kept;
}

static void add_record(race_state *state, const race_record *record)
{
    /* Older records of the same stream inside this range are redundant: whatever is ordered
     * after this task is ordered after them, and a write conflicts with all a read does. */
    size_t kept = 0;
    for (size_t i = 0; i < state->count; ++i) {
        race_record *r = &state->records[i];
        if (r->task->slot == record->task->slot && r->lo >= record->lo && r->hi <= record->hi &&
            (record->write || !r->write))
            task_unref(r->task);
        else
            state->records[kept++] = *r;
    }
    state->count = kept;
    if (state->count == state->capacity) {
        size_t capacity = state->capacity ? 2 * state->capacity : 4;
        race_record *grown = realloc(state->records, capacity * sizeof *grown);
        if (grown == NULL)
            return;
        state->records = grown;
        state->capacity = capacity;
    }
    state->records[state->count++] = *record;
    record->task->refs++;
}

/* "input 0", "workspace", "dst". */
static void role_text(const char *role, int index, char *out, size_t size)
{
    if (index >= 0)
        snprintf(out, size, "%s %d", role, index);
    else
        snprintf(out, size, "%s", role);
}

/* Who makes the access being checked. */
typedef struct accessor {
    const vclock *vc;
    race_task *task;  /* NULL: the host */
    const char *call; /* the host's call */
} accessor;

static bool g_reported_conflict; /* by the current check_access (under the lock) */

static void report_conflict(const accessor *who, const nn_check_alloc *alloc,
                            const nn_check_access *access, uint64_t lo, uint64_t hi,
                            const race_record *other)
{
    char title[256], mine[32], theirs[32];
    role_text(access->role, access->index, mine, sizeof mine);
    role_text(other->role, other->index, theirs, sizeof theirs);
    const char *verb = access->write ? "writes" : "reads";
    const char *other_verb = other->write ? "writes" : "reads";
    bool freeing = strcmp(access->role, "freed memory") == 0;
    if (who->task == NULL && freeing)
        snprintf(title, sizeof title, "%s frees memory an unfinished task %s", who->call, other_verb);
    else if (who->task == NULL)
        snprintf(title, sizeof title, "%s %s bytes an unfinished task %s", who->call, verb,
                 other_verb);
    else
        snprintf(title, sizeof title, "%s and %s on different streams touch the same bytes "
                 "with no event ordering them", who->task->call, other->task->call);
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_RACECHECK, title);
    if (who->task == NULL && freeing) {
        nn_check_line(report, "call:", "%s frees allocation #%llu (bytes [%llu, %llu)), on the "
                      "host, at:", who->call, (unsigned long long)alloc->id,
                      (unsigned long long)lo, (unsigned long long)hi);
    } else if (who->task == NULL) {
        nn_check_line(report, "call:", "%s %s bytes [%llu, %llu) of allocation #%llu (%s), on "
                      "the host, at:", who->call, verb, (unsigned long long)lo,
                      (unsigned long long)hi, (unsigned long long)alloc->id, mine);
    }
    if (who->task == NULL) {
        nn_check_trace here;
        nn_check_capture(&here);
        nn_check_trace_lines(report, &here);
    } else {
        nn_check_line(report, "call:", "%s %s %s bytes [%llu, %llu) of allocation #%llu, on %s, "
                      "queued at:", who->task->call, mine, verb, (unsigned long long)lo,
                      (unsigned long long)hi, (unsigned long long)alloc->id, who->task->stream);
        nn_check_trace_lines(report, &who->task->where);
    }
    nn_check_line(report, "other:", "%s %s %s bytes [%llu, %llu) of allocation #%llu, on %s, "
                  "queued at:", other->task->call, theirs, other_verb, (unsigned long long)other->lo,
                  (unsigned long long)other->hi, (unsigned long long)alloc->id, other->task->stream);
    nn_check_trace_lines(report, &other->task->where);
    nn_check_alloc_lines(report, "object:", alloc);
    if (who->task == NULL)
        nn_check_line(report, "advice:", "wait for the task first (aclrtSynchronizeStream on its "
                      "stream, or aclrtSynchronizeEvent on an event recorded after it): %s does "
                      "not wait for queued tasks, so on a card it %s",
                      who->call, freeing ? "frees memory the task may still use"
                      : "races with the task (old, partial or overwritten data)");
    else if (strcmp(access->role, "workspace") == 0 && strcmp(other->role, "workspace") == 0)
        nn_check_line(report, "advice:", "give each launch that may run at the same time its own "
                      "workspace, or order the launches with an event (aclrtRecordEvent after "
                      "the first, aclrtStreamWaitEvent before the second)");
    else
        nn_check_line(report, "advice:", "order the two tasks: aclrtRecordEvent on the first "
                      "one's stream after it and aclrtStreamWaitEvent on the other stream before "
                      "the second (or synchronize the first stream before queuing the second)");
    nn_check_end(report);
}

/* Checks one access against the allocation's records and, for a task, records it. */
static void check_access(const accessor *who, const nn_check_access *access)
{
    if (access->bytes == 0 || access->address == NULL)
        return;
    nn_check_alloc *alloc = nn_check_alloc_find_locked(access->address);
    if (alloc == NULL)
        return; /* not device memory this checker knows (host memory, a foreign pointer) */
    uint64_t lo = (uintptr_t)access->address - alloc->base;
    uint64_t hi = access->bytes > alloc->size - lo ? alloc->size : lo + access->bytes;
    race_state *state = alloc->tool_state[RACE_STATE];
    if (state == NULL) {
        if (who->task == NULL)
            return; /* nothing queued touches it */
        state = calloc(1, sizeof *state);
        if (state == NULL)
            return;
        alloc->tool_state[RACE_STATE] = state;
    }
    prune(state);
    for (size_t i = 0; i < state->count; ++i) {
        const race_record *r = &state->records[i];
        if (r->lo >= hi || lo >= r->hi || !(access->write || r->write))
            continue;
        if (vc_get(who->vc, r->task->slot) >= r->task->epoch)
            continue; /* ordered */
        report_conflict(who, alloc, access, lo, hi, r);
        g_reported_conflict = true;
        break; /* one report per access: the oldest unordered one */
    }
    if (who->task != NULL) {
        race_record record = {lo, hi, access->write, access->role, access->index, who->task};
        add_record(state, &record);
    }
}

void nn_check_race_task(const void *stream, const char *call, const nn_check_access *accesses,
                        int count)
{
    if (!racing())
        return;
    race_task *task = calloc(1, sizeof *task);
    if (task == NULL)
        return;
    task->refs = 1; /* this call's */
    snprintf(task->call, sizeof task->call, "%s", call);
    nn_check_capture(&task->where);
    nn_check_alloc_lock();
    race_stream *s = stream_of_locked(stream);
    if (s != NULL) {
        vc_join(&s->vc, &g_host); /* queued now: after everything the host has seen finish */
        task->slot = s->slot;
        task->epoch = ++s->vc.t[s->slot];
        stream_label(s, task->stream, sizeof task->stream);
        accessor who = {&s->vc, task, NULL};
        for (int i = 0; i < count; ++i)
            check_access(&who, &accesses[i]);
    }
    task_unref(task);
    nn_check_alloc_unlock();
}

bool nn_check_race_host(const char *call, const nn_check_access *accesses, int count)
{
    if (!racing())
        return false;
    nn_check_alloc_lock();
    g_reported_conflict = false;
    accessor who = {&g_host, NULL, call};
    for (int i = 0; i < count; ++i)
        check_access(&who, &accesses[i]);
    bool reported = g_reported_conflict;
    nn_check_alloc_unlock();
    return reported;
}

bool nn_check_race_free(const void *base, const char *call)
{
    if (!racing())
        return false;
    nn_check_access access = {base, UINT64_MAX, true, "freed memory", -1};
    return nn_check_race_host(call, &access, 1);
}
