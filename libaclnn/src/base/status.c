/*
 * status.c - the per-thread "recent error" text behind aclGetRecentErrMsg.
 *
 * Every failed check calls nn_error(code, "aclnnXxx: <param> ..."), which prepends CANN's
 * prefix `[PID:n] YYYY-MM-DD-hh:mm:ss.mmm.uuu <Title>(<code>): ` and records the message as
 * this thread's newest one.  Messages are kept newest first, joined with '\n', in a bounded
 * buffer: when it is full the oldest messages are dropped, so a long-running program that
 * never reads its errors cannot grow memory.
 *
 * The buffers are thread-local arrays (no heap), so there is nothing to free at thread exit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "nn_base.h"

/* One message is cut at this length; the whole history at NN_ERR_CAPACITY. */
#define NN_ERR_MESSAGE_MAX 1024
#define NN_ERR_CAPACITY 8192

typedef struct {
    char pending[NN_ERR_CAPACITY]; /* newest first, '\n'-joined */
    size_t pending_len;
    char taken[NN_ERR_CAPACITY];   /* what the last take returned (valid until the next take) */
} nn_error_state;

static __thread nn_error_state tl_errors;

/* CANN's error title and code for a status, following opbase's mapping of aclnn statuses and
 * the runtime's EH/EE families for acl codes. */
static void error_title(int code, const char **title, const char **ez)
{
    if (code >= 160000 && code < 170000) {
        *title = "AclNN_Parameter_Error"; *ez = "EZ1001";
    } else if (code >= 360000 && code < 370000) {
        *title = "AclNN_Runtime_Error"; *ez = "EZ9903";
    } else if (code >= 560000 && code < 570000) {
        *title = "AclNN_Inner_Error"; *ez = "EZ9999";
    } else if (code >= 100000 && code < 200000) {
        *title = "Acl_Parameter_Error"; *ez = "EH0001";
    } else {
        *title = "Acl_Runtime_Error"; *ez = "EE9999";
    }
}

/* "2026-11-21-10:00:00.000.000" (local time, milli and micro seconds). */
static void format_timestamp(char *buf, size_t size)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    struct tm local;
    time_t seconds = now.tv_sec;
    localtime_r(&seconds, &local);
    snprintf(buf, size, "%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d", local.tm_year + 1900,
             local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
             (int)(now.tv_usec / 1000), (int)(now.tv_usec % 1000));
}

void nn_error_push_raw(const char *message)
{
    nn_error_state *st = &tl_errors;
    size_t len = strnlen(message, NN_ERR_CAPACITY - 1);
    if (len == 0)
        return;
    /* Keep as many of the older messages as fit after "message\n", cutting at a boundary. */
    size_t room = NN_ERR_CAPACITY - 1 - len;
    size_t keep = 0;
    if (st->pending_len > 0 && room > 1) {
        keep = st->pending_len;
        if (keep + 1 > room) {
            keep = room - 1;
            while (keep > 0 && st->pending[keep] != '\n')
                keep--; /* drop the oldest, partially fitting messages entirely */
        }
    }
    if (keep > 0) {
        memmove(st->pending + len + 1, st->pending, keep);
        st->pending[len] = '\n';
        memcpy(st->pending, message, len);
        st->pending_len = len + 1 + keep;
    } else {
        memcpy(st->pending, message, len);
        st->pending_len = len;
    }
    st->pending[st->pending_len] = '\0';
}

/* The checking mode's observer of failed calls (check.c), or NULL. */
static void (*_Atomic g_observer)(int code, const char *text);

void nn_error_set_observer(void (*observer)(int code, const char *text))
{
    g_observer = observer;
}

int nn_verror(int code, const char *fmt, va_list args)
{
    char text[NN_ERR_MESSAGE_MAX];
    vsnprintf(text, sizeof text, fmt, args);

    const char *title, *ez;
    error_title(code, &title, &ez);
    char stamp[96];
    format_timestamp(stamp, sizeof stamp);

    char message[NN_ERR_MESSAGE_MAX + 256];
    snprintf(message, sizeof message, "[PID:%d] %s %s(%s): %s", (int)getpid(), stamp, title, ez,
             text);
    nn_error_push_raw(message);
    nn_log(NN_LOG_ERROR, "%s", text);
    void (*observer)(int, const char *) = g_observer;
    if (observer != NULL)
        observer(code, text);
    return code;
}

int nn_error(int code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    nn_verror(code, fmt, args);
    va_end(args);
    return code;
}

const char *nn_error_take(void)
{
    nn_error_state *st = &tl_errors;
    if (st->pending_len == 0)
        return NULL;
    memcpy(st->taken, st->pending, st->pending_len + 1);
    st->pending_len = 0;
    st->pending[0] = '\0';
    return st->taken;
}

void nn_error_peek(char *buf, size_t buf_size)
{
    if (buf == NULL || buf_size == 0)
        return;
    nn_error_state *st = &tl_errors;
    size_t n = st->pending_len < buf_size - 1 ? st->pending_len : buf_size - 1;
    memcpy(buf, st->pending, n);
    buf[n] = '\0';
}

NN_EXPORT const char *aclGetRecentErrMsg(void)
{
    return nn_error_take();
}
