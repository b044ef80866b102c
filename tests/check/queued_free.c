/*
 * queued_free.c - memory freed while a queued task still uses it (tests/test_check_queued_free.py);
 * argv[1] names the case:
 *   free_host   aclrtFreeHost of a 64 MiB staging buffer right after queuing the copy out of it
 *               (behind a 256 MiB fill, so the copy has not run): the worker copied from unmapped
 *               memory and the process died with SIGSEGV; prints whether the device got the bytes
 *   free_d32 / free_2d   aclrtFree of a 300 MiB block right after queuing an aclrtMemsetD32Async
 *               (or an aclrtMemcpy2dAsync) into it, behind a 256 MiB fill, then a new block of the
 *               same size written with 0x11: the block left the quarantine at once (it is over the
 *               quarantine's bound), the new one got its addresses and the queued task overwrote
 *               it; prints the task's status and the new block's first and middle bytes after the
 *               wait (the 2-D copy, whose source spans less than its destination, failed with
 *               107000 under memcheck: its source was checked over the destination's span)
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "check_program.h"

#define FILL_BYTES ((size_t)256 << 20)
#define STAGING_BYTES ((size_t)64 << 20)

static int free_host(aclrtStream stream, const char *unused)
{
    (void)unused;
    void *busy = NULL, *device = NULL, *staging = NULL;
    if (aclrtMalloc(&busy, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&device, STAGING_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMallocHost(&staging, STAGING_BYTES) != ACL_SUCCESS)
        return 3;
    memset(staging, 0x6b, STAGING_BYTES);
    aclrtMemsetAsync(busy, FILL_BYTES, 0, FILL_BYTES, stream); /* keeps the worker busy */
    aclrtMemcpyAsync(device, STAGING_BYTES, staging, STAGING_BYTES, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    aclError freed = aclrtFreeHost(staging); /* before the copy ran */
    aclError again = aclrtFreeHost(staging);
    aclrtSynchronizeStream(stream);
    unsigned char first = 0, last = 0;
    aclrtMemcpy(&first, 1, device, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(&last, 1, (char *)device + STAGING_BYTES - 1, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("free %d, second free %d, device bytes 0x%02x 0x%02x\n", (int)freed, (int)again, first, last);
    aclrtFree(busy);
    aclrtFree(device);
    return 0;
}

#define BIG_BYTES ((size_t)300 << 20)

/* A task of the runtime's own host functions (a 2-D copy or a 32-bit fill) queued into a block
 * that is freed before it runs. */
static int free_under_library_task(aclrtStream stream, int two_d)
{
    void *busy = NULL, *block = NULL, *source = NULL, *fresh = NULL;
    if (aclrtMalloc(&busy, FILL_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&block, BIG_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&source, 8192, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return 3;
    aclrtMemset(source, 8192, 0x5c, 8192);
    aclrtMemsetAsync(busy, FILL_BYTES, 0, FILL_BYTES, stream); /* keeps the worker busy */
    aclError queued = two_d /* two rows of 4 KiB, at the block's start and its middle */
                          ? aclrtMemcpy2dAsync(block, BIG_BYTES / 2, source, 4096, 4096, 2,
                                               ACL_MEMCPY_DEVICE_TO_DEVICE, stream)
                          : aclrtMemsetD32Async(block, BIG_BYTES, 0x5c5c5c5c, BIG_BYTES / 4, stream);
    aclrtFree(block); /* before the task ran */
    if (aclrtMalloc(&fresh, BIG_BYTES, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return 3;
    aclrtMemset(fresh, BIG_BYTES, 0x11, BIG_BYTES);
    aclrtSynchronizeStream(stream);
    unsigned char first = 0, middle = 0;
    aclrtMemcpy(&first, 1, fresh, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(&middle, 1, (char *)fresh + BIG_BYTES / 2, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("queued %d, new block bytes 0x%02x 0x%02x\n", (int)queued, first, middle);
    aclrtFree(busy);
    aclrtFree(source);
    aclrtFree(fresh);
    return 0;
}

static int free_d32(aclrtStream stream, const char *unused)
{
    (void)unused;
    return free_under_library_task(stream, 0);
}

static int free_2d(aclrtStream stream, const char *unused)
{
    (void)unused;
    return free_under_library_task(stream, 1);
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"free_host", free_host}, {"free_d32", free_d32}, {"free_2d", free_2d}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
