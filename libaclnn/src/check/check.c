/*
 * check.c - the checking mode's switch, report blocks, counts and exit summary (nn_check.h,
 * docs/checking.md).
 *
 * The configuration is read once, on first use.  When any tool is on, an atexit handler prints
 * the summary line ("========= ACLNN_CHECK SUMMARY: N errors, M warnings") and, when the program
 * had errors and ACLNN_CHECK_EXITCODE is set, ends the process with that status, as
 * compute-sanitizer's --error-exitcode does.  The tools that list objects at exit (leakcheck)
 * register a hook (nn_check_at_exit) that this handler runs first, so their reports count.
 */
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "acl/error_codes/rt_error_codes.h"
#include "check/check_internal.h"
#include "check/nn_check.h"

#define MARK "========="

static pthread_once_t g_config_once = PTHREAD_ONCE_INIT;
static unsigned g_tools;
static int g_exit_code;      /* 0: keep the program's own status */
static FILE *g_log;          /* NULL: stderr */
static pthread_mutex_t g_print_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_errors;    /* under g_print_lock */
static uint64_t g_warnings;

static const struct {
    const char *name;
    unsigned bit;
} tool_names[] = {
    {"memcheck", NN_CHECK_MEMCHECK},   {"initcheck", NN_CHECK_INITCHECK},
    {"racecheck", NN_CHECK_RACECHECK}, {"synccheck", NN_CHECK_RACECHECK},
    {"leakcheck", NN_CHECK_LEAKCHECK}, {"product", NN_CHECK_PRODUCT},
    {"api", NN_CHECK_API},
    {"all", NN_CHECK_ALL},
    {"1", NN_CHECK_ALL},               {"on", NN_CHECK_ALL},
    {"yes", NN_CHECK_ALL},             {"true", NN_CHECK_ALL},
};

const char *nn_check_tool_name(unsigned tool)
{
    for (size_t i = 0; i < sizeof tool_names / sizeof tool_names[0]; ++i)
        if (tool_names[i].bit == tool)
            return tool_names[i].name;
    return "check";
}

/* Parses "memcheck,racecheck" (commas or spaces); an unknown word is reported on stderr and
 * ignored rather than silently turning checking off. */
static unsigned parse_tools(const char *value)
{
    unsigned tools = 0;
    char word[32];
    const char *p = value;
    while (*p != '\0') {
        size_t len = strcspn(p, ", ");
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            unsigned bit = 0;
            for (size_t i = 0; i < sizeof tool_names / sizeof tool_names[0]; ++i)
                if (strcasecmp(word, tool_names[i].name) == 0)
                    bit = tool_names[i].bit;
            if (bit == 0 && strcmp(word, "0") != 0 && strcasecmp(word, "off") != 0)
                fprintf(stderr, MARK " ACLNN_CHECK: unknown tool '%s' ignored (memcheck, initcheck, "
                                "racecheck, leakcheck, product, api, all)\n", word);
            tools |= bit;
        } else if (len > 0) {
            fprintf(stderr, MARK " ACLNN_CHECK: unknown tool '%.*s' ignored\n", (int)len, p);
        }
        p += len;
        p += strspn(p, ", ");
    }
    return tools;
}

static void print_summary_at_exit(void);

/* Set by a check that reported why it refuses the call in progress on this thread. */
static _Thread_local bool t_refusal_reported;

void nn_check_note_refusal(void)
{
    t_refusal_reported = true;
}

/* A call failed (nn_error's observer): the program got the status; the report says which call,
 * why, and from where, so a status the program ignores does not go unsaid.  A refusal a check
 * already reported is not reported twice. */
/* Statuses that tell a state, not a mistake: a wait or poll that timed out, work not complete
 * yet, a report thread polling aclrtProcessReport before it is subscribed or after (CANN's
 * callback samples start the thread first and stop it by a flag). */
static bool state_status(int code)
{
    static const int states[] = {ACL_ERROR_RT_REPORT_TIMEOUT,      ACL_ERROR_RT_WAIT_TIMEOUT,
                                 ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                                 ACL_ERROR_RT_STREAM_NOT_COMPLETE, ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                                 ACL_ERROR_RT_THREAD_SUBSCRIBE};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; ++i)
        if (states[i] == code)
            return true;
    return false;
}

static void report_failed_call(int code, const char *text)
{
    if (t_refusal_reported) {
        t_refusal_reported = false;
        return;
    }
    if (state_status(code))
        return;
    nn_check_trace where;
    nn_check_capture(&where);
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_API, "a call failed");
    nn_check_line(report, "message:", "%s", text);
    nn_check_line(report, "status:", "%d, returned to the program at:", code);
    nn_check_trace_lines(report, &where);
    nn_check_end(report);
}

/* Failed calls are reported when any tool is on, unless ACLNN_CHECK_API_ERRORS=0. */
static bool report_failed_calls(unsigned tools)
{
    const char *value = getenv("ACLNN_CHECK_API_ERRORS");
    bool asked_off = value != NULL && (strcmp(value, "0") == 0 || strcasecmp(value, "off") == 0 ||
                                       strcasecmp(value, "no") == 0);
    return tools != 0 && !asked_off;
}

static void read_config(void)
{
    const char *value = getenv("ACLNN_CHECK");
    g_tools = value != NULL ? parse_tools(value) : 0;
    if (report_failed_calls(g_tools))
        g_tools |= NN_CHECK_API;
    else
        g_tools &= ~(unsigned)NN_CHECK_API;
    if (g_tools == 0)
        return;
    if (g_tools & NN_CHECK_API)
        nn_error_set_observer(report_failed_call);
    const char *code = getenv("ACLNN_CHECK_EXITCODE");
    if (code != NULL)
        g_exit_code = atoi(code);
    const char *log_path = getenv("ACLNN_CHECK_LOG");
    if (log_path != NULL && log_path[0] != '\0') {
        g_log = fopen(log_path, "a");
        if (g_log == NULL)
            fprintf(stderr, MARK " ACLNN_CHECK_LOG: cannot open '%s'; reports go to stderr\n",
                    log_path);
    }
    atexit(print_summary_at_exit);
}

unsigned nn_check_tools(void)
{
    pthread_once(&g_config_once, read_config);
    return g_tools;
}

/* ---- Stack traces --------------------------------------------------------------------------- */

/* The address range of libaclnn.so's loaded segments, found once: a capture runs on every
 * checked launch and creation, and dladdr per frame cost ~10 us there (it searches the symbol
 * tables), a range test nothing. */
static pthread_once_t g_self_once = PTHREAD_ONCE_INIT;
static uintptr_t g_self_lo, g_self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t probe = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    if (probe < lo || probe >= hi)
        return 0;
    g_self_lo = lo;
    g_self_hi = hi;
    return 1;
}

static void find_self_once(void)
{
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&find_self);
}

/* Whether `address` lies in libaclnn.so itself (its frames are not the program's). */
static bool in_this_library(void *address)
{
    pthread_once(&g_self_once, find_self_once);
    return (uintptr_t)address >= g_self_lo && (uintptr_t)address < g_self_hi;
}

enum { WALK_DEPTH = NN_CHECK_TRACE_DEPTH + 16 }; /* the library's frames, then the program's */

#if defined(__x86_64__)
/*
 * Capturing a stack is a DWARF unwind (~1.5 us for a dozen frames): six of them made an
 * allocate/launch/free round under memcheck 4x the unchecked one.  A program allocates and
 * frees from a few places in a loop, so each thread keeps its last walks: a walk is taken again
 * when nn_check_capture's frame sits at the same stack address (the same depth) and every return
 * address the walk found is still in the stack slot it was read from (on x86-64 a frame's return
 * address is the word below its caller's CFA, which the first walk checks).  Same depth and the
 * same return addresses in the same places is the same chain of calls, but for frames whose size
 * changed in ways that cancel out (variable-length arrays); a miss unwinds again.
 */
#include <unwind.h>

typedef struct walk {
    uintptr_t anchor;          /* the address of nn_check_capture's local: its stack depth */
    int count;
    void *ips[WALK_DEPTH];     /* every frame's address, the library's first */
    uintptr_t slots[WALK_DEPTH]; /* where ips[i] lies on the stack (0: not found there) */
} walk;

enum { WALK_CACHE = 32 };
static __thread walk tl_walks[WALK_CACHE];

/* One frame of the walk: the context's IP is the return address into the frame, read from the
 * word below the CFA of the frame it returns from (the context's CFA). */
static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *context, void *arg)
{
    walk *w = arg;
    if (w->count == WALK_DEPTH)
        return _URC_END_OF_STACK;
    void *ip = (void *)_Unwind_GetIP(context);
    if (ip == NULL)
        return _URC_END_OF_STACK;
    uintptr_t slot = _Unwind_GetCFA(context) - sizeof(void *);
    if (*(void **)slot != ip)
        slot = 0; /* not where this walk expects it: the walk is not kept */
    w->ips[w->count] = ip;
    w->slots[w->count++] = slot;
    return _URC_NO_REASON;
}

/* Whether the stack still holds walk `w`'s return addresses where it found them (frame 0 is
 * walk_stack's own, whose return address _Unwind_Backtrace's call left and the next call
 * overwrites). */
static bool walk_still_valid(const walk *w)
{
    for (int i = 1; i < w->count; ++i)
        if (w->slots[i] == 0 || *(void *const *)w->slots[i] != w->ips[i])
            return false;
    return w->count > 0;
}

/* The frames from walk_stack outwards, into `frames`; their count.  A program calls the library
 * from several places at one depth (three aclrtMalloc in a row): the walks of one thread are
 * searched whole, and a new one replaces the oldest. */
static int __attribute__((noinline)) walk_stack(uintptr_t anchor, void **frames)
{
    static __thread unsigned next_victim;
    walk *w = NULL;
    for (int i = 0; i < WALK_CACHE && w == NULL; ++i)
        if (tl_walks[i].anchor == anchor && walk_still_valid(&tl_walks[i]))
            w = &tl_walks[i];
    if (w == NULL) {
        w = &tl_walks[next_victim++ % WALK_CACHE];
        w->count = 0;
        _Unwind_Backtrace(walk_frame, w);
        w->anchor = anchor;
    }
    memcpy(frames, w->ips, (size_t)w->count * sizeof *frames);
    return w->count;
}
#endif

void nn_check_capture(nn_check_trace *trace)
{
    void *frames[WALK_DEPTH];
#if defined(__x86_64__)
    int count = walk_stack((uintptr_t)&frames, frames);
#else
    int count = backtrace(frames, WALK_DEPTH);
#endif
    int first = 0;
    while (first < count && in_this_library(frames[first]))
        ++first;
    trace->count = 0;
    for (int i = first; i < count && trace->count < NN_CHECK_TRACE_DEPTH; ++i)
        trace->frames[trace->count++] = frames[i];
}

/* ---- Reports -------------------------------------------------------------------------------- */

struct nn_check_report {
    nn_check_severity severity;
    size_t length;
    char text[8192];
};

static __thread nn_check_report tl_report; /* one report at a time per thread */

static void append(nn_check_report *report, const char *fmt, va_list args)
{
    size_t room = sizeof report->text - report->length;
    if (room <= 1)
        return;
    int n = vsnprintf(report->text + report->length, room, fmt, args);
    if (n > 0)
        report->length += (size_t)n < room ? (size_t)n : room - 1;
}

static void appendf(nn_check_report *report, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    append(report, fmt, args);
    va_end(args);
}

nn_check_report *nn_check_begin(nn_check_severity severity, unsigned tool, const char *what)
{
    nn_check_report *report = &tl_report;
    report->severity = severity;
    report->length = 0;
    appendf(report, MARK " ACLNN_CHECK %s (%s): %s\n",
            severity == NN_CHECK_ERROR ? "ERROR" : "WARNING", nn_check_tool_name(tool), what);
    return report;
}

void nn_check_line(nn_check_report *report, const char *label, const char *fmt, ...)
{
    if (label != NULL)
        appendf(report, MARK "   %-9s ", label);
    else
        appendf(report, MARK "             ");
    va_list args;
    va_start(args, fmt);
    append(report, fmt, args);
    va_end(args);
    appendf(report, "\n");
}

void nn_check_trace_lines(nn_check_report *report, const nn_check_trace *trace)
{
    if (trace->count == 0) {
        appendf(report, MARK "             (no stack captured)\n");
        return;
    }
    for (int i = 0; i < trace->count; ++i) {
        Dl_info info;
        void *address = trace->frames[i];
        if (dladdr(address, &info) != 0 && info.dli_fname != NULL) {
            const char *module = info.dli_fname;
            if (info.dli_sname != NULL)
                appendf(report, MARK "             #%d %s+0x%zx (%s)\n", i, info.dli_sname,
                        (size_t)((char *)address - (char *)info.dli_saddr), module);
            else /* no dynamic symbol (an executable built without -rdynamic): addr2line -e */
                appendf(report, MARK "             #%d %s+0x%zx\n", i, module,
                        (size_t)((char *)address - (char *)info.dli_fbase));
        } else {
            appendf(report, MARK "             #%d %p\n", i, address);
        }
    }
}

static FILE *report_stream(void)
{
    return g_log != NULL ? g_log : stderr;
}

void nn_check_end(nn_check_report *report)
{
    pthread_mutex_lock(&g_print_lock);
    if (report->severity == NN_CHECK_ERROR)
        ++g_errors;
    else
        ++g_warnings;
    FILE *out = report_stream();
    fwrite(report->text, 1, report->length, out);
    fflush(out);
    pthread_mutex_unlock(&g_print_lock);
}

uint64_t nn_check_error_count(void)
{
    pthread_mutex_lock(&g_print_lock);
    uint64_t n = g_errors;
    pthread_mutex_unlock(&g_print_lock);
    return n;
}

uint64_t nn_check_warning_count(void)
{
    pthread_mutex_lock(&g_print_lock);
    uint64_t n = g_warnings;
    pthread_mutex_unlock(&g_print_lock);
    return n;
}

NN_EXPORT uint64_t aclnnCpuCheckErrorCount(void)
{
    return nn_check_error_count();
}

enum { MAX_EXIT_HOOKS = 4 };
static void (*g_exit_hooks[MAX_EXIT_HOOKS])(void); /* under g_print_lock */
static int g_num_exit_hooks;

void nn_check_at_exit(void (*fn)(void))
{
    pthread_mutex_lock(&g_print_lock);
    if (g_num_exit_hooks < MAX_EXIT_HOOKS)
        g_exit_hooks[g_num_exit_hooks++] = fn;
    pthread_mutex_unlock(&g_print_lock);
}

NN_EXPORT uint32_t aclnnCpuCheckTools(void)
{
    return nn_check_tools();
}

/* The summary line; exits with ACLNN_CHECK_EXITCODE when the program had errors. */
static void print_summary(void)
{
    uint64_t errors = nn_check_error_count();
    uint64_t warnings = nn_check_warning_count();
    FILE *out = report_stream();
    fprintf(out, MARK " ACLNN_CHECK SUMMARY: %llu error%s, %llu warning%s\n",
            (unsigned long long)errors, errors == 1 ? "" : "s", (unsigned long long)warnings,
            warnings == 1 ? "" : "s");
    fflush(out);
    if (errors > 0 && g_exit_code != 0) {
        fflush(NULL);
        _exit(g_exit_code);
    }
}

static void print_summary_at_exit(void)
{
    pthread_mutex_lock(&g_print_lock);
    int hooks = g_num_exit_hooks;
    pthread_mutex_unlock(&g_print_lock);
    for (int i = 0; i < hooks; ++i)
        g_exit_hooks[i]();
    print_summary();
}

/* No exit hooks here: after a fatal report every live object would be listed as a leak. */
void nn_check_fatal_exit(void)
{
    print_summary(); /* exits with ACLNN_CHECK_EXITCODE when the program had errors */
    fflush(NULL);
    signal(SIGABRT, SIG_DFL);
    abort();
}

/* Read at load, so the summary and the exit status are there even for a program whose calls
 * never reach a check. */
__attribute__((constructor)) static void read_config_at_load(void)
{
    (void)nn_check_tools();
}
