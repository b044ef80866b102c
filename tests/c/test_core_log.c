/*
 * test_core_log.c - CANN-style logging: ASCEND_GLOBAL_LOG_LEVEL, ASCEND_LOG_PRINT_TO_STDOUT
 * (winning over ASCEND_SLOG_PRINT_TO_STDOUT), the plog file under ASCEND_PROCESS_LOG_PATH, the
 * line format, and the INFO trace line of a launch.
 *
 * The library reads the environment once per process, so every scenario runs in a forked
 * child that sets its environment first and sends stdout to a file the parent then reads.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnn/opdev/op_errno.h"

#include "test_util.h"

static char tmpdir[] = "/tmp/aclnn_log_test_XXXXXX";

/* One failing call: aclCreateTensor with an unknown dtype. */
static void make_error(void)
{
    int64_t dims[1] = {2};
    aclTensor *t = aclCreateTensor(dims, 1, (aclDataType)5, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL);
    if (t != NULL)
        aclDestroyTensor(t);
}

/* One successful Prelu launch (for the INFO trace). */
static void make_launch(void)
{
    aclInit(NULL);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    float x[6] = {-1, 2, -3, 4, -5, 6}, w[1] = {0.5f};
    void *xd, *wd, *od;
    aclrtMalloc(&xd, sizeof x, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&wd, sizeof w, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&od, sizeof x, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(xd, sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(wd, sizeof w, w, sizeof w, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t dims[2] = {2, 3}, wdims[1] = {1};
    aclTensor *self = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, xd);
    aclTensor *weight = aclCreateTensor(wdims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wdims, 1, wd);
    aclTensor *out = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, od);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    if (aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex) == ACLNN_SUCCESS)
        aclnnPrelu(NULL, 0, ex, stream);
    aclrtSynchronizeStream(stream);
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    aclrtFree(xd);
    aclrtFree(wd);
    aclrtFree(od);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
}

/* Runs `action` in a child with the given environment ("NAME=value" strings, NULL-terminated);
 * returns the child's stdout (malloc'd) and its pid. */
static char *run_child(const char *const *env, void (*action)(void), pid_t *child_pid)
{
    char path[256];
    snprintf(path, sizeof path, "%s/stdout_%d.txt", tmpdir, rand());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
        unsetenv("ASCEND_MODULE_LOG_LEVEL");
        unsetenv("ASCEND_LOG_PRINT_TO_STDOUT");
        unsetenv("ASCEND_SLOG_PRINT_TO_STDOUT");
        unsetenv("ASCEND_PROCESS_LOG_PATH");
        for (const char *const *e = env; *e; e++) {
            char name[128];
            const char *eq = strchr(*e, '=');
            snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
            setenv(name, eq + 1, 1);
        }
        if (freopen(path, "w", stdout) == NULL)
            _exit(3);
        action();
        const char *msg = aclGetRecentErrMsg(); /* the recent error works whatever the log level */
        fflush(stdout);
        _exit(action == make_error && msg == NULL ? 4 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status %d", status);
    *child_pid = pid;
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 65536);
    if (f) {
        size_t n = fread(text, 1, 65535, f);
        text[n] = '\0';
        fclose(f);
    }
    remove(path);
    return text;
}

/* "[ERROR] NNOP(<pid>,<name>):YYYY-MM-DD-hh:mm:ss.mmm.uuu [tag] " at the start of `line`. */
static bool line_has_cann_prefix(const char *line, const char *level, pid_t pid, const char *tag)
{
    char head[64];
    snprintf(head, sizeof head, "[%s] NNOP(%d,", level, (int)pid);
    if (strncmp(line, head, strlen(head)) != 0)
        return false;
    const char *stamp = strstr(line, "):");
    if (stamp == NULL)
        return false;
    stamp += 2;
    const char *pattern = "dddd-dd-dd-dd:dd:dd.ddd.ddd [";
    for (size_t i = 0; pattern[i]; i++)
        if (pattern[i] == 'd' ? !(stamp[i] >= '0' && stamp[i] <= '9') : stamp[i] != pattern[i])
            return false;
    return strncmp(stamp + strlen(pattern), tag, strlen(tag)) == 0;
}

static void test_error_to_stdout(void)
{
    const char *env[] = {"ASCEND_LOG_PRINT_TO_STDOUT=1", "ASCEND_SLOG_PRINT_TO_STDOUT=0", NULL};
    pid_t pid;
    char *out = run_child(env, make_error, &pid);
    CHECK(line_has_cann_prefix(out, "ERROR", pid, "aclCreateTensor] dataType"), "error line: %s", out);
    free(out);
}

static void test_error_to_plog(void)
{
    char dir_env[300];
    snprintf(dir_env, sizeof dir_env, "ASCEND_PROCESS_LOG_PATH=%s", tmpdir);
    /* the new variable (0) wins over the deprecated one (1): logs go to the file */
    const char *env[] = {"ASCEND_LOG_PRINT_TO_STDOUT=0", "ASCEND_SLOG_PRINT_TO_STDOUT=1", dir_env, NULL};
    pid_t pid;
    char *out = run_child(env, make_error, &pid);
    CHECK(out[0] == '\0', "nothing on stdout: %s", out);
    free(out);

    char plog_dir[300], prefix[64];
    snprintf(plog_dir, sizeof plog_dir, "%s/debug/plog", tmpdir);
    snprintf(prefix, sizeof prefix, "plog-pid_%d_", (int)pid);
    DIR *dir = opendir(plog_dir);
    CHECK(dir != NULL, "plog directory %s created", plog_dir);
    bool found = false;
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        size_t len = strlen(e->d_name);
        CHECK(len > 4 && strcmp(e->d_name + len - 4, ".log") == 0, "plog name %s", e->d_name);
        char path[700], line[2048] = "";
        snprintf(path, sizeof path, "%s/%s", plog_dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(line, sizeof line, f) == NULL)
                line[0] = '\0';
            fclose(f);
        }
        CHECK(line_has_cann_prefix(line, "ERROR", pid, "aclCreateTensor] dataType"), "plog line: %s", line);
        remove(path);
        found = true;
    }
    if (dir)
        closedir(dir);
    CHECK(found, "a plog-pid_%d_*.log file", (int)pid);
    rmdir(plog_dir);
    snprintf(plog_dir, sizeof plog_dir, "%s/debug", tmpdir);
    rmdir(plog_dir);
}

static void test_levels(void)
{
    const char *off[] = {"ASCEND_SLOG_PRINT_TO_STDOUT=1", "ASCEND_GLOBAL_LOG_LEVEL=4", NULL};
    pid_t pid;
    char *out = run_child(off, make_error, &pid);
    CHECK(out[0] == '\0', "level 4 prints nothing: %s", out);
    free(out);

    const char *error_only[] = {"ASCEND_SLOG_PRINT_TO_STDOUT=1", NULL};
    out = run_child(error_only, make_launch, &pid);
    CHECK(strstr(out, "[INFO]") == NULL, "default level 3 prints no INFO: %s", out);
    free(out);

    const char *info[] = {"ASCEND_SLOG_PRINT_TO_STDOUT=1", "ASCEND_GLOBAL_LOG_LEVEL=1", NULL};
    out = run_child(info, make_launch, &pid);
    const char *line = strstr(out, "[aclnnPrelu] exec");
    while (line && line > out && line[-1] != '\n')
        line--; /* back to the start of that line */
    CHECK(line != NULL, "an INFO trace line for the launch: %s", out);
    if (line) {
        CHECK(line_has_cann_prefix(line, "INFO", pid, "aclnnPrelu] exec"), "trace prefix: %s", line);
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char copy[2048];
        snprintf(copy, sizeof copy, "%.*s", (int)(len < 2000 ? len : 2000), line);
        const char *words[] = {"in0=FLOAT[2, 3]", "in1=FLOAT[1]", "out0=FLOAT[2, 3]", "ws=0", "threads=", "time="};
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            CHECK(strstr(copy, words[i]) != NULL, "trace lacks '%s': %s", words[i], copy);
    }
    free(out);
}

int main(void)
{
    if (mkdtemp(tmpdir) == NULL) {
        printf("FAIL mkdtemp\n");
        return 1;
    }
    test_error_to_stdout();
    test_error_to_plog();
    test_levels();
    rmdir(tmpdir);
    printf("log: %d failures\n", failures);
    return failures != 0;
}
