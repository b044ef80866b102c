/*
 * pinned_write.c - host accesses to an aclrtMallocHost buffer an asynchronous host-to-device
 * copy reads, and the cost of host waits with many pinned blocks (tests/test_check_pinned.py);
 * argv[1] names the case:
 *   write   the buffer is written right after the copy from it is queued (behind a 256 MiB
 *           fill), before any wait: on a card the copy may carry either bytes; memcheck reports it
 *   read    the buffer is read instead (legal: both sides read)
 *   synced  written after aclrtSynchronizeStream (legal)
 *   hostfunc  written by a host function the stream runs before the copy (legal: the stream
 *           orders it; it was reported once copies from pinned memory were guarded)
 *   waits N N pinned blocks alive; 20000 rounds of a copy into one of them and a stream wait;
 *           prints the microseconds per round
 * The first three print the byte the device received.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define FILL_BYTES ((size_t)256 << 20)
#define BYTES ((size_t)1 << 20)
#define ROUNDS 20000

static void write_33(void *host)
{
    ((unsigned char *)host)[BYTES / 2] = 0x33;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Rounds of a small device-to-host copy into one of `count` pinned blocks, each followed by a
 * wait for the stream. */
static int time_waits(aclrtStream stream, int count)
{
    void **blocks = calloc((size_t)count, sizeof *blocks), *device = NULL;
    if (blocks == NULL || aclrtMalloc(&device, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return 3;
    aclrtMemset(device, 64, 1, 64);
    for (int i = 0; i < count; i++) {
        if (aclrtMallocHost(&blocks[i], 64) != ACL_SUCCESS)
            return 3;
        memset(blocks[i], 0, 64); /* its page is there before the clock starts */
    }
    double start = now_us();
    for (int r = 0; r < ROUNDS; r++) {
        aclrtMemcpyAsync(blocks[r % count], 64, device, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream);
        aclrtSynchronizeStream(stream);
    }
    printf("%.2f us per round with %d pinned blocks\n", (now_us() - start) / ROUNDS, count);
    for (int i = 0; i < count; i++)
        aclrtFreeHost(blocks[i]);
    aclrtFree(device);
    free(blocks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    aclrtStream stream = NULL;
    aclrtCreateStream(&stream);
    if (strcmp(argv[1], "waits") == 0) {
        int rc = time_waits(stream, argc > 2 ? atoi(argv[2]) : 1);
        aclrtDestroyStream(stream);
        aclrtResetDevice(0);
        aclFinalize();
        return rc;
    }
    void *busy = NULL, *device = NULL;
    unsigned char *host = NULL, got = 0;
    if (aclrtMalloc(&busy, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&device, BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMallocHost((void **)&host, BYTES) != ACL_SUCCESS)
        return 3;
    memset(host, 0x11, BYTES);
    aclrtMemsetAsync(busy, FILL_BYTES, 0, FILL_BYTES, stream); /* keeps the worker busy */
    if (strcmp(argv[1], "hostfunc") == 0)
        aclrtLaunchHostFunc(stream, write_33, host);
    aclrtMemcpyAsync(device, BYTES, host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    if (strcmp(argv[1], "write") == 0) {
        ((volatile unsigned char *)host)[BYTES / 2] = 0x33;
        aclrtSynchronizeStream(stream);
    } else if (strcmp(argv[1], "read") == 0) {
        printf("read 0x%02x\n", ((volatile unsigned char *)host)[BYTES / 2]);
        aclrtSynchronizeStream(stream);
    } else {
        aclrtSynchronizeStream(stream);
        host[BYTES / 2] = 0x33;
    }
    aclrtMemcpy(&got, 1, (unsigned char *)device + BYTES / 2, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("device received 0x%02x\n", got);
    aclrtFreeHost(host);
    aclrtFree(busy);
    aclrtFree(device);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
