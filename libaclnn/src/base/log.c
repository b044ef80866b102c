/*
 * log.c - CANN-style logging.
 *
 * Environment (read once):
 *   ASCEND_GLOBAL_LOG_LEVEL      0 DEBUG, 1 INFO, 2 WARNING, 3 ERROR (default), 4 off
 *   ASCEND_MODULE_LOG_LEVEL      "NAME=level:NAME=level"; the entries OP / NNOP / OPS / ACLNN
 *                                override the global level for this library
 *   ASCEND_LOG_PRINT_TO_STDOUT   1 = print to stdout (wins over the deprecated name below)
 *   ASCEND_SLOG_PRINT_TO_STDOUT  1 = print to stdout
 *   ASCEND_PROCESS_LOG_PATH      log directory (else $ASCEND_WORK_PATH/log, else $HOME/ascend/log)
 *
 * A line reads like CANN's:
 *   [ERROR] NNOP(1234,prog):2026-11-21-10:00:00.000.000 [aclnnIm2col] kernelSize must ...
 * where the bracketed tag is the operator/function name that starts the message (CANN prints
 * file:line there).  Without stdout printing, lines are appended to
 *   <dir>/debug/plog/plog-pid_<pid>_<YYYYmmddHHMMSSmmm>.log
 * created on the first line; failures to create or write it are silently ignored (logging must
 * never make a call fail).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "nn_base.h"

extern char *program_invocation_short_name;

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_level = NN_LOG_ERROR;
static bool log_to_stdout = false;

static pthread_mutex_t log_file_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file = NULL;
static bool log_file_failed = false;

static const char *const level_names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};

/* Parses a level 0..4; returns -1 for anything else (CANN then keeps the default). */
static int parse_level(const char *text)
{
    if (text == NULL || text[0] < '0' || text[0] > '4' || text[1] != '\0')
        return -1;
    return text[0] - '0';
}

static bool env_is_one(const char *name, bool *is_set)
{
    const char *v = getenv(name);
    *is_set = v != NULL && v[0] != '\0';
    return *is_set && strcmp(v, "1") == 0;
}

/* ASCEND_MODULE_LOG_LEVEL="TBE=0:OP=1": the level for our module, or -1. */
static int module_level(void)
{
    const char *spec = getenv("ASCEND_MODULE_LOG_LEVEL");
    if (spec == NULL)
        return -1;
    static const char *const our_names[] = {"OP", "NNOP", "OPS", "ACLNN"};
    int found = -1;
    const char *entry = spec;
    while (*entry) {
        const char *end = strchr(entry, ':');
        size_t len = end ? (size_t)(end - entry) : strlen(entry);
        const char *eq = memchr(entry, '=', len);
        if (eq != NULL) {
            size_t name_len = (size_t)(eq - entry);
            char value[4] = {0};
            size_t value_len = len - name_len - 1;
            if (value_len < sizeof value)
                memcpy(value, eq + 1, value_len);
            for (size_t i = 0; i < sizeof our_names / sizeof our_names[0]; i++) {
                if (strlen(our_names[i]) == name_len && strncmp(entry, our_names[i], name_len) == 0) {
                    int level = parse_level(value);
                    if (level >= 0)
                        found = level;
                }
            }
        }
        if (end == NULL)
            break;
        entry = end + 1;
    }
    return found;
}

static void read_environment(void)
{
    int level = parse_level(getenv("ASCEND_GLOBAL_LOG_LEVEL"));
    if (level >= 0)
        log_level = level;
    int module = module_level();
    if (module >= 0)
        log_level = module;

    bool new_set, old_set;
    bool new_one = env_is_one("ASCEND_LOG_PRINT_TO_STDOUT", &new_set);
    bool old_one = env_is_one("ASCEND_SLOG_PRINT_TO_STDOUT", &old_set);
    log_to_stdout = new_set ? new_one : old_one;
}

bool nn_log_enabled(int level)
{
    pthread_once(&log_once, read_environment);
    return level >= NN_LOG_DEBUG && level <= NN_LOG_ERROR && level >= log_level;
}

/* Opens the plog file on first use (caller holds log_file_lock). */
static FILE *plog_file(void)
{
    if (log_file != NULL || log_file_failed)
        return log_file;
    log_file_failed = true; /* until proven otherwise: never retry on every line */

    char dir[4096];
    const char *process_path = getenv("ASCEND_PROCESS_LOG_PATH");
    const char *work_path = getenv("ASCEND_WORK_PATH");
    const char *home = getenv("HOME");
    if (process_path && process_path[0])
        snprintf(dir, sizeof dir, "%s/debug/plog", process_path);
    else if (work_path && work_path[0])
        snprintf(dir, sizeof dir, "%s/log/debug/plog", work_path);
    else if (home && home[0])
        snprintf(dir, sizeof dir, "%s/ascend/log/debug/plog", home);
    else
        return NULL;
    if (!nn_make_dirs(dir))
        return NULL;

    struct timeval now;
    gettimeofday(&now, NULL);
    struct tm local;
    time_t seconds = now.tv_sec;
    localtime_r(&seconds, &local);
    char path[4200];
    snprintf(path, sizeof path, "%s/plog-pid_%d_%04d%02d%02d%02d%02d%02d%03d.log", dir,
             (int)getpid(), local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour,
             local.tm_min, local.tm_sec, (int)(now.tv_usec / 1000));
    log_file = fopen(path, "a");
    if (log_file != NULL)
        log_file_failed = false;
    return log_file;
}

/* Splits "aclnnFoo: text" into the tag "aclnnFoo" and "text"; no tag when the message does
 * not start with an identifier and ": ". */
static void split_tag(const char *text, char *tag, size_t tag_size, const char **rest)
{
    size_t i = 0;
    while (text[i] && (text[i] == '_' || (text[i] >= 'a' && text[i] <= 'z') ||
                       (text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= '0' && text[i] <= '9')))
        i++;
    if (i > 0 && i < tag_size && text[i] == ':' && text[i + 1] == ' ') {
        memcpy(tag, text, i);
        tag[i] = '\0';
        *rest = text + i + 2;
    } else {
        snprintf(tag, tag_size, "aclnn");
        *rest = text;
    }
}

void nn_log(int level, const char *fmt, ...)
{
    if (!nn_log_enabled(level))
        return;
    char text[2048];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);

    struct timeval now;
    gettimeofday(&now, NULL);
    struct tm local;
    time_t seconds = now.tv_sec;
    localtime_r(&seconds, &local);

    char tag[64];
    const char *rest;
    split_tag(text, tag, sizeof tag, &rest);

    char line[2300];
    snprintf(line, sizeof line,
             "[%s] NNOP(%d,%s):%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d [%s] %s\n",
             level_names[level], (int)getpid(), program_invocation_short_name,
             local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min,
             local.tm_sec, (int)(now.tv_usec / 1000), (int)(now.tv_usec % 1000), tag, rest);

    pthread_mutex_lock(&log_file_lock);
    if (log_to_stdout) {
        fputs(line, stdout);
        fflush(stdout);
    } else {
        FILE *f = plog_file();
        if (f != NULL) {
            fputs(line, f);
            fflush(f);
        }
    }
    pthread_mutex_unlock(&log_file_lock);
}

/* Closes the plog file at exit so leak checkers see no open stream buffer. */
__attribute__((destructor)) static void close_log_file(void)
{
    pthread_mutex_lock(&log_file_lock);
    if (log_file != NULL) {
        fclose(log_file);
        log_file = NULL;
    }
    log_file_failed = true;
    pthread_mutex_unlock(&log_file_lock);
}
