/*
 * prof_trace.c - the profile recorder and its writers.
 *
 * While a session records, every task queued on a stream carries a record (stream.c's submit,
 * one relaxed load when nothing records): what the task is (the label the queuing call left on
 * its thread: an operator launch with its product and input shapes and dtypes, a copy, a memset,
 * an event, a callback, a host function, a mark), and, once it ran, when it began and ended
 * (CLOCK_MONOTONIC) and on which thread (the stream's worker, or a thread that synchronized the
 * stream and ran it inline).  The program's msproftx stamps (rt_prof.c) join the same list.
 *
 * At the session's end the list is written as a Chrome trace-event file (trace.json: one row per
 * stream, one per host thread that stamped) and an operator summary (op_summary.csv); docs/
 * runtime.md, "Profiling", gives the layout.  ACLNN_PROFILE=DIR records from the library's load to
 * the process's exit for a program that makes no aclprof call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

/* Chrome trace rows: host threads under one process row, each device's streams under another
 * (device_pid_base). */
#define HOST_PID 1

/* CANN's longest msproftx message is 127 characters; operator names are far shorter. */
#define NAME_MAX_LEN 128

typedef enum { REC_TASK, REC_HOST_MARK, REC_HOST_RANGE, REC_ASYNC_RANGE } record_type;

/* One entry of the timeline.  A queued task's record is allocated alone (nn_prof_task) and
 * copied into the session's list when the task has run. */
struct nn_prof_task {
    record_type type;
    nn_prof_kind kind;
    bool skipped;      /* the stream skipped the task (a force-destroy, ACL_STOP_ON_FAILURE) */
    uint32_t row;      /* the stream's row (tasks; the stream a host mark names, 0: none) */
    int32_t device;
    int32_t thread;    /* the thread that ran the task, or that stamped */
    uint32_t id;       /* async ranges */
    uint64_t begin_ns, end_ns;
    char name[NAME_MAX_LEN];
    char product[32];  /* operators: the SoC the launch ran for */
    char *shapes;      /* operators: "[2,3];[3]", the inputs' shapes (owned) */
    char *dtypes;      /* operators: "FLOAT;FLOAT" (owned) */
};

atomic_bool nn_prof_session_on; /* a session records or a subscription listens */
static atomic_bool g_session_running;
static atomic_int g_subscriptions; /* prof_subscribe.c's, which hear of every operator that ran */
static atomic_bool g_tasks_on; /* the session keeps the streams' tasks */
static atomic_bool g_tx_on;    /* ... and msproftx stamps (with aclprofMarkEx's marks on streams) */
static atomic_uint g_next_row;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf lock: the list below */
static nn_prof_task *g_records;
static size_t g_count, g_capacity;
static uint64_t g_session_start_ns;
static atomic_uint g_session_id; /* a label left by an earlier session is not taken by this one */
static unsigned g_sessions; /* sessions written by this process (names their directories) */

static char *g_env_dir; /* ACLNN_PROFILE */

/* The label the next task queued by this thread takes (in session `session` only). */
static _Thread_local struct {
    bool set;
    unsigned session;
    nn_prof_kind kind;
    char name[NAME_MAX_LEN];
    char *shapes, *dtypes;
} t_label;

int32_t nn_prof_thread_id(void)
{
    return (int32_t)syscall(SYS_gettid);
}

uint32_t nn_prof_new_row(void)
{
    return atomic_fetch_add(&g_next_row, 1) + 1;
}

bool nn_prof_tx_recording(void)
{
    return atomic_load_explicit(&g_tx_on, memory_order_relaxed);
}

static void copy_name(char *dst, const char *src)
{
    snprintf(dst, NAME_MAX_LEN, "%s", src != NULL ? src : "");
}

static void clear_label(void)
{
    free(t_label.shapes);
    free(t_label.dtypes);
    t_label.shapes = t_label.dtypes = NULL;
    t_label.set = false;
}

void nn_prof_label(nn_prof_kind kind, const char *name)
{
    if (!nn_prof_recording())
        return;
    clear_label();
    t_label.set = true;
    t_label.session = atomic_load_explicit(&g_session_id, memory_order_relaxed);
    t_label.kind = kind;
    copy_name(t_label.name, name);
}

bool nn_prof_active(void)
{
    return nn_prof_recording();
}

void nn_prof_label_launch(const char *op_name, char *shapes, char *dtypes)
{
    nn_prof_label(NN_PROF_OPERATOR, op_name);
    if (!t_label.set) { /* recording stopped meanwhile */
        free(shapes);
        free(dtypes);
        return;
    }
    t_label.shapes = shapes;
    t_label.dtypes = dtypes;
}

nn_prof_task *nn_prof_task_queued(uint32_t row, int32_t device)
{
    nn_prof_task *task = calloc(1, sizeof *task);
    if (task == NULL) {
        clear_label();
        return NULL;
    }
    if (t_label.set && t_label.session != atomic_load_explicit(&g_session_id, memory_order_relaxed))
        clear_label(); /* set before this session began, for a task that was never queued */
    task->type = REC_TASK;
    task->row = row;
    task->device = device;
    task->kind = t_label.set ? t_label.kind : NN_PROF_TASK;
    copy_name(task->name, t_label.set ? t_label.name : "task");
    if (task->kind == NN_PROF_OPERATOR) {
        const char *soc = nn_soc_reported_name();
        snprintf(task->product, sizeof task->product, "%s", soc != NULL ? soc : "");
        task->shapes = t_label.shapes;
        task->dtypes = t_label.dtypes;
        t_label.shapes = t_label.dtypes = NULL; /* the record owns them now */
    }
    clear_label();
    return task;
}

void nn_prof_task_discard(nn_prof_task *task)
{
    if (task == NULL)
        return;
    free(task->shapes);
    free(task->dtypes);
    free(task);
}

/* Appends a copy of *record (which hands over its strings) to the session (g_lock held);
 * false when the list cannot grow. */
static bool append_locked(const nn_prof_task *record)
{
    if (g_count == g_capacity) {
        size_t grown = g_capacity ? g_capacity * 2 : 256;
        nn_prof_task *more = realloc(g_records, grown * sizeof *more);
        if (more == NULL)
            return false;
        g_records = more;
        g_capacity = grown;
    }
    g_records[g_count++] = *record;
    return true;
}

/* Adds a record to the session if `on` still holds; frees its strings otherwise. */
static void keep_record(nn_prof_task *record, const atomic_bool *on)
{
    bool kept = false;
    pthread_mutex_lock(&g_lock);
    if (atomic_load_explicit(on, memory_order_relaxed))
        kept = append_locked(record);
    pthread_mutex_unlock(&g_lock);
    if (!kept) {
        free(record->shapes);
        free(record->dtypes);
    }
}

void nn_prof_task_ran(nn_prof_task *task, uint64_t begin_ns, uint64_t end_ns, bool skipped)
{
    task->begin_ns = begin_ns;
    task->end_ns = end_ns;
    task->skipped = skipped;
    task->thread = nn_prof_thread_id();
    if (task->kind == NN_PROF_OPERATOR && !skipped && atomic_load(&g_subscriptions) > 0)
        nn_prof_subscription_deliver(task->name, task->device, begin_ns, end_ns, task->thread);
    keep_record(task, task->kind == NN_PROF_MARK ? &g_tx_on : &g_tasks_on);
    free(task);
}

static void keep_host_record(record_type type, const char *message, uint32_t row_or_id, int32_t thread,
                             uint64_t begin_ns, uint64_t end_ns)
{
    nn_prof_task record = {.type = type, .thread = thread, .begin_ns = begin_ns, .end_ns = end_ns};
    if (type == REC_ASYNC_RANGE)
        record.id = row_or_id;
    else
        record.row = row_or_id;
    copy_name(record.name, message);
    keep_record(&record, &g_tx_on);
}

void nn_prof_host_mark(const char *message, uint32_t stream_row)
{
    uint64_t now = nn_rt_now_ns();
    keep_host_record(REC_HOST_MARK, message, stream_row, nn_prof_thread_id(), now, now);
}

void nn_prof_host_range(const char *message, uint64_t begin_ns, uint64_t end_ns)
{
    keep_host_record(REC_HOST_RANGE, message, 0, nn_prof_thread_id(), begin_ns, end_ns);
}

void nn_prof_async_range(const char *message, uint32_t id, int32_t begin_thread, uint64_t begin_ns,
                         uint64_t end_ns)
{
    keep_host_record(REC_ASYNC_RANGE, message, id, begin_thread, begin_ns, end_ns);
}

bool nn_prof_collection_running(void)
{
    return atomic_load(&g_session_running);
}

void nn_prof_subscriptions_changed(int count)
{
    pthread_mutex_lock(&g_lock);
    atomic_store(&g_subscriptions, count);
    atomic_store(&nn_prof_session_on, count > 0 || atomic_load(&g_session_running));
    pthread_mutex_unlock(&g_lock);
}

/* Frees the session's records (g_lock held). */
static void drop_records_locked(void)
{
    for (size_t i = 0; i < g_count; i++) {
        free(g_records[i].shapes);
        free(g_records[i].dtypes);
    }
    free(g_records);
    g_records = NULL;
    g_count = g_capacity = 0;
}

void nn_prof_session_begin(nn_prof_scope scope)
{
    pthread_mutex_lock(&g_lock);
    drop_records_locked();
    g_session_start_ns = nn_rt_now_ns();
    atomic_fetch_add(&g_session_id, 1);
    atomic_store(&g_tasks_on, scope.tasks);
    atomic_store(&g_tx_on, scope.tx);
    atomic_store(&g_session_running, true);
    atomic_store(&nn_prof_session_on, true);
    pthread_mutex_unlock(&g_lock);
}

/* ---- writers ------------------------------------------------------------------------------ */

/* `text` as the inside of a JSON string. */
static void put_json_text(FILE *f, const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
}

/* `text` as one CSV field: quoted, its quotes doubled (shapes hold commas). */
static void put_csv_text(FILE *f, const char *text)
{
    fputc('"', f);
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static double session_us(uint64_t ns)
{
    return ns >= g_session_start_ns ? (double)(ns - g_session_start_ns) / 1000.0
                                    : -(double)(g_session_start_ns - ns) / 1000.0;
}

static const char *kind_category(nn_prof_kind kind)
{
    static const char *const names[] = {"task", "operator", "copy", "memset", "event", "callback",
                                        "host_function", "mark", "step"};
    return names[kind];
}

/* An "M" event naming a process (tid < 0) or a thread row.  A process also gets its pid as its
 * sort index, so viewers that read it put the host (the calls) above the devices (what the calls
 * queued); without it each viewer picks its own order (Perfetto 52, which ignores it, drew device 0
 * above the host). */
static void put_name(FILE *f, bool *first, int pid, int tid, const char *name)
{
    fprintf(f, "%s\n{\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
            *first ? "" : ",", tid < 0 ? "process" : "thread", pid, tid < 0 ? 0 : tid, name);
    if (tid < 0)
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}}", pid, pid);
    *first = false;
}

/* Device d's process is device_pid_base() + d: one past the highest stream row the records use, as
 * a stream's row is its tid and a viewer takes the thread whose tid equals its pid for the process's
 * main thread (Perfetto labelled stream 2 of process 2 "main thread"). */
static int device_pid_base(void)
{
    uint32_t highest = 0;
    for (size_t i = 0; i < g_count; i++)
        if (g_records[i].type == REC_TASK && g_records[i].row > highest)
            highest = g_records[i].row;
    return (int)highest + 1;
}

/* The row (pid, tid) a record's events go to. */
static void record_row(const nn_prof_task *r, int device_base, int *pid, int *tid)
{
    *pid = r->type == REC_TASK ? device_base + r->device : HOST_PID;
    *tid = r->type == REC_TASK ? (int)r->row : (int)r->thread;
}

/* The rows named so far (few: one per stream and stamping thread), so each is named once. */
typedef struct {
    int (*rows)[2];
    size_t count;
} named_rows;

/* Whether (pid, tid) was named before; remembers it now.  tid < 0: the process itself. */
static bool named_before(named_rows *named, int pid, int tid)
{
    for (size_t k = 0; k < named->count; k++)
        if (named->rows[k][0] == pid && named->rows[k][1] == tid)
            return true;
    int (*grown)[2] = realloc(named->rows, (named->count + 1) * sizeof *grown);
    if (grown == NULL)
        return false; /* (named twice, harmlessly, rather than not at all) */
    named->rows = grown;
    named->rows[named->count][0] = pid;
    named->rows[named->count][1] = tid;
    named->count++;
    return false;
}

/* Names every process and row the records use, each once. */
static void put_all_row_names(FILE *f, bool *first, int device_base)
{
    named_rows named = {NULL, 0};
    for (size_t i = 0; i < g_count; i++) {
        const nn_prof_task *r = &g_records[i];
        int pid, tid;
        record_row(r, device_base, &pid, &tid);
        char name[48];
        if (!named_before(&named, pid, -1)) {
            snprintf(name, sizeof name, r->type == REC_TASK ? "device %d" : "host", (int)r->device);
            put_name(f, first, pid, -1, name);
        }
        if (!named_before(&named, pid, tid)) {
            snprintf(name, sizeof name, r->type == REC_TASK ? "stream %d" : "host thread %d", tid);
            put_name(f, first, pid, tid, name);
        }
    }
    free(named.rows);
}

static void put_task_event(FILE *f, const nn_prof_task *r, int device_base)
{
    bool instant = r->kind == NN_PROF_MARK || r->kind == NN_PROF_STEP;
    fprintf(f, ",\n{\"ph\":\"%s\",\"name\":\"", instant ? "i" : "X");
    put_json_text(f, r->name);
    fprintf(f, "\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f", kind_category(r->kind),
            device_base + r->device, (unsigned)r->row, session_us(r->begin_ns));
    if (instant)
        fprintf(f, ",\"s\":\"t\"");
    else
        fprintf(f, ",\"dur\":%.3f", (double)(r->end_ns - r->begin_ns) / 1000.0);
    fprintf(f, ",\"args\":{\"thread\":%d,\"stream\":%u", (int)r->thread, (unsigned)r->row);
    if (r->skipped)
        fprintf(f, ",\"skipped\":true");
    if (r->kind == NN_PROF_OPERATOR)
        fprintf(f, ",\"product\":\"%s\",\"input_shapes\":\"%s\",\"input_dtypes\":\"%s\"", r->product,
                r->shapes ? r->shapes : "", r->dtypes ? r->dtypes : "");
    fprintf(f, "}}");
}

static void put_host_event(FILE *f, const nn_prof_task *r)
{
    static const char *const phases[][2] = {[REC_HOST_MARK] = {"i", NULL},
                                            [REC_HOST_RANGE] = {"B", "E"},
                                            [REC_ASYNC_RANGE] = {"b", "e"}};
    for (int end = 0; end < 2 && phases[r->type][end] != NULL; end++) {
        fprintf(f, ",\n{\"ph\":\"%s\",\"name\":\"", phases[r->type][end]);
        put_json_text(f, r->name);
        fprintf(f, "\",\"cat\":\"msproftx\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f", HOST_PID, (int)r->thread,
                session_us(end ? r->end_ns : r->begin_ns));
        if (r->type == REC_HOST_MARK)
            fprintf(f, ",\"s\":\"t\"");
        if (r->type == REC_HOST_MARK && r->row != 0) /* aclprofMarkEx's: the stream it marked */
            fprintf(f, ",\"args\":{\"stream\":%u}", (unsigned)r->row);
        /* id2.local: the range belongs to this process (its host row); a plain "id" is global,
         * and Perfetto drew such ranges on a "Global Legacy Events" row outside every process. */
        if (r->type == REC_ASYNC_RANGE)
            fprintf(f, ",\"id2\":{\"local\":%u}", (unsigned)r->id);
        fprintf(f, "}");
    }
}

/* The records come sorted by begin time; a range's "E" follows its "B" at once (the trace-event
 * format does not ask events to be in time order: viewers sort them). */
static bool write_trace(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    /* no "displayTimeUnit": "ms" is catapult's default, and Perfetto ignores the key and says so */
    fprintf(f, "{\"traceEvents\":[");
    bool first = true;
    int device_base = device_pid_base();
    put_all_row_names(f, &first, device_base);
    if (first) /* no record: an empty timeline still names the host */
        put_name(f, &first, HOST_PID, -1, "host");
    for (size_t i = 0; i < g_count; i++) {
        if (g_records[i].type == REC_TASK)
            put_task_event(f, &g_records[i], device_base);
        else
            put_host_event(f, &g_records[i]);
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0;
}

static bool write_op_summary(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    fprintf(f, "operator,product,input_shapes,input_dtypes,start_us,duration_us,stream,thread\n");
    for (size_t i = 0; i < g_count; i++) {
        const nn_prof_task *r = &g_records[i];
        if (r->type != REC_TASK || r->kind != NN_PROF_OPERATOR)
            continue;
        fprintf(f, "%s,%s,", r->name, r->product);
        put_csv_text(f, r->shapes ? r->shapes : "");
        fputc(',', f);
        put_csv_text(f, r->dtypes ? r->dtypes : "");
        fprintf(f, ",%.3f,%.3f,%u,%d\n", session_us(r->begin_ns), (double)(r->end_ns - r->begin_ns) / 1000.0,
                (unsigned)r->row, (int)r->thread);
    }
    return fclose(f) == 0;
}

/* mkdir -p: every missing directory of `path`. */
static bool make_directories(const char *path)
{
    char *copy = strdup(path);
    if (copy == NULL)
        return false;
    bool ok = true;
    for (char *slash = copy + 1; ok; slash++) {
        bool last = *slash == '\0';
        if (*slash != '/' && !last)
            continue;
        *slash = '\0';
        ok = mkdir(copy, 0755) == 0 || errno == EEXIST;
        if (last)
            break;
        *slash = '/';
    }
    free(copy);
    return ok;
}

/* Sorts records by begin time, so that every row's events come out in time order. */
static int by_begin(const void *a, const void *b)
{
    const nn_prof_task *x = a, *y = b;
    return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

aclError nn_prof_session_end(const char *api, const char *dir)
{
    pthread_mutex_lock(&g_lock);
    atomic_store(&g_session_running, false);
    atomic_store(&nn_prof_session_on, atomic_load(&g_subscriptions) > 0);
    atomic_store(&g_tasks_on, false);
    atomic_store(&g_tx_on, false);
    qsort(g_records, g_count, sizeof *g_records, by_begin);
    char session[4096], trace[4200], summary[4200];
    snprintf(session, sizeof session, "%s/aclnn_prof_%d_%u", dir, (int)getpid(), ++g_sessions);
    snprintf(trace, sizeof trace, "%s/trace.json", session);
    snprintf(summary, sizeof summary, "%s/op_summary.csv", session);
    bool ok = make_directories(session) && write_trace(trace) && write_op_summary(summary);
    int saved = errno;
    drop_records_locked();
    pthread_mutex_unlock(&g_lock);
    if (!ok)
        return nn_rt_error(ACL_ERROR_PROFILING_FAILURE, "%s: cannot write the profile under %s (%s).", api,
                           session, strerror(saved));
    nn_log(NN_LOG_INFO, "%s: profile written to %s.", api, session);
    return ACL_SUCCESS;
}

/* ---- ACLNN_PROFILE=DIR ---------------------------------------------------------------------- */

const char *nn_prof_env_dir(void)
{
    return g_env_dir;
}

static void write_env_profile_at_exit(void)
{
    if (nn_prof_session_end("ACLNN_PROFILE", g_env_dir) != ACL_SUCCESS)
        fprintf(stderr, "libaclnn: %s\n", aclGetRecentErrMsg());
}

/* Runs before main (and so before the runtime's own exit hooks are registered, which therefore
 * run first: the streams have drained when the profile is written). */
__attribute__((constructor)) static void start_env_profile_at_load(void)
{
    const char *dir = getenv("ACLNN_PROFILE");
    if (dir == NULL || dir[0] == '\0')
        return;
    g_env_dir = strdup(dir);
    if (g_env_dir == NULL)
        return;
    nn_prof_session_begin((nn_prof_scope){true, true});
    atexit(write_env_profile_at_exit);
}
