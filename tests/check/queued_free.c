/*
 * queued_free.c - memory freed while a queued task still uses it (tests/test_check_queued_free.py);
 * argv[1] names the case:
 *   free_host   aclrtFreeHost of a 64 MiB staging buffer right after queuing the copy out of it
 *               (behind a 256 MiB fill, so the copy has not run): the worker copied from unmapped
 *               memory and the process died with SIGSEGV; prints whether the device got the bytes
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

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"free_host", free_host}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
