/*
 * fork_signal.c - legal programs the checking mode must leave as they are
 * (tests/test_check_fork_signal.py); argv[1] names the case:
 *   fork_write  a child writes to device memory it inherited; the parent's data must not change
 *   fork_exit   a child exits at once; nothing of its parent's is reported as its leak
 *   raise       SIGSEGV raised by the program itself ends the process as without checking
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#define SMALL 4096
#define LARGE (4u << 20)

static int child_status(pid_t child)
{
    int status = 0;
    if (waitpid(child, &status, 0) != child)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int fork_write(void *small, void *large)
{
    pid_t child = fork();
    if (child == 0) {
        aclrtMemset(small, SMALL, 0x22, SMALL);
        aclrtMemset(large, LARGE, 0x22, LARGE);
        _exit(0);
    }
    int status = child_status(child);
    static unsigned char host[LARGE];
    aclrtMemcpy(host, SMALL, small, SMALL, ACL_MEMCPY_DEVICE_TO_HOST);
    int changed = host[0] != 0x11 || host[SMALL - 1] != 0x11;
    aclrtMemcpy(host, LARGE, large, LARGE, ACL_MEMCPY_DEVICE_TO_HOST);
    changed += host[0] != 0x11 || host[LARGE - 1] != 0x11;
    printf("child exit %d, parent blocks changed: %d\n", status, changed);
    return status != 0 || changed != 0;
}

static int fork_exit(void)
{
    pid_t child = fork();
    if (child == 0)
        exit(0); /* atexit handlers run: the checking mode's among them */
    int status = child_status(child);
    printf("child exit %d\n", status);
    return status != 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    aclrtStream stream = NULL;
    aclrtCreateStream(&stream);
    void *small = NULL, *large = NULL;
    aclrtMalloc(&small, SMALL, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&large, LARGE, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(small, SMALL, 0x11, SMALL);
    aclrtMemset(large, LARGE, 0x11, LARGE);
    int rc = 0;
    if (strcmp(argv[1], "fork_write") == 0) {
        rc = fork_write(small, large);
    } else if (strcmp(argv[1], "fork_exit") == 0) {
        rc = fork_exit();
    } else if (strcmp(argv[1], "raise") == 0) {
        raise(SIGSEGV);
        printf("survived a raised SIGSEGV\n");
        rc = 3;
    }
    aclrtFree(small);
    aclrtFree(large);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}
