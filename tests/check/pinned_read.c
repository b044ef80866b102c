/*
 * pinned_read.c - host reads of an aclrtMallocHost buffer an asynchronous device-to-host copy
 * writes (tests/test_check_pinned.py); argv[1] names the case:
 *   early   the buffer is read right after the copy is queued (behind a 256 MiB fill), before
 *           any wait: a card gives old or partial data; memcheck must report the read
 *   synced  read after aclrtSynchronizeStream (legal)
 *   event   read after aclrtSynchronizeEvent on an event recorded after the copy (legal)
 *   fork    after the wait, a forked child writes the buffer: the parent's bytes must not change
 *           (without checking fork copies private pages; memcheck's buffer is a shared file)
 * Each prints the byte it read after the wait.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#define FILL_BYTES ((size_t)256 << 20)
#define BYTES ((size_t)1 << 20)

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    aclrtStream stream = NULL;
    aclrtEvent done = NULL;
    aclrtCreateStream(&stream);
    aclrtCreateEvent(&done);
    void *busy = NULL, *device = NULL;
    unsigned char *host = NULL;
    if (aclrtMalloc(&busy, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&device, BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMallocHost((void **)&host, BYTES) != ACL_SUCCESS)
        return 3;
    memset(host, 0x11, BYTES);
    aclrtMemset(device, BYTES, 0x7c, BYTES);
    aclrtMemsetAsync(busy, FILL_BYTES, 0, FILL_BYTES, stream); /* keeps the worker busy */
    aclrtMemcpyAsync(host, BYTES, device, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, stream);
    aclrtRecordEvent(done, stream);
    if (strcmp(argv[1], "early") == 0) {
        printf("early read 0x%02x\n", ((volatile unsigned char *)host)[BYTES / 2]);
        aclrtSynchronizeStream(stream);
    } else if (strcmp(argv[1], "synced") == 0) {
        aclrtSynchronizeStream(stream);
    } else if (strcmp(argv[1], "event") == 0) {
        aclrtSynchronizeEvent(done);
    } else if (strcmp(argv[1], "fork") == 0) {
        aclrtSynchronizeStream(stream);
        pid_t child = fork();
        if (child == 0) {
            memset(host, 0x22, BYTES);
            _exit(0);
        }
        int status = -1;
        waitpid(child, &status, 0);
        printf("child status %d\n", status);
    }
    printf("after the wait 0x%02x 0x%02x\n", host[0], host[BYTES - 1]);
    aclrtFreeHost(host);
    aclrtFree(busy);
    aclrtFree(device);
    aclrtDestroyEvent(done);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
