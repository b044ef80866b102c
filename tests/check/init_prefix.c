/*
 * init_prefix.c - initcheck's written bytes when writes start at an allocation's first byte
 * (kept as a length, check_init.c) and when they do not (kept as bits), and the two mixed
 * (tests/test_check_init_prefix.py); argv[1] names the case, each a Prelu over N floats of x:
 *   half       only x's first half copied in: reported, first unwritten byte N*2
 *   two        the first half, then the second: clean
 *   reversed   the second half, then the first: clean
 *   hole       all of x copied in, then 256 bytes at byte 4096 overwritten from a block nobody
 *              wrote (a device-to-device copy carries "unwritten"): reported at byte 4096
 *   output     out (never written) used as the input of a second Prelu: clean, the first
 *              launch wrote all of it
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "check_prelu.h"
#include "check_program.h"

#define N 4096
#define BYTES (N * sizeof(float))

static int run_case(aclrtStream stream, const char *name)
{
    static float host[N];
    float slope = 0.25f;
    for (int i = 0; i < N; i++)
        host[i] = (float)i - 2048.0f;
    void *x = NULL, *w = NULL, *out = NULL, *second = NULL, *blank = NULL;
    aclrtMalloc(&x, BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&out, BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&second, BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&blank, 256, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    const size_t half = BYTES / 2;
    if (strcmp(name, "reversed") == 0)
        aclrtMemcpy((char *)x + half, half, (char *)host + half, half, ACL_MEMCPY_HOST_TO_DEVICE);
    if (strcmp(name, "hole") == 0 || strcmp(name, "output") == 0)
        aclrtMemcpy(x, BYTES, host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE);
    else
        aclrtMemcpy(x, half, host, half, ACL_MEMCPY_HOST_TO_DEVICE);
    if (strcmp(name, "two") == 0)
        aclrtMemcpy((char *)x + half, half, (char *)host + half, half, ACL_MEMCPY_HOST_TO_DEVICE);
    if (strcmp(name, "hole") == 0)
        aclrtMemcpy((char *)x + 4096, 256, blank, 256, ACL_MEMCPY_DEVICE_TO_DEVICE);
    int status = check_prelu(x, w, out, N, stream);
    if (strcmp(name, "output") == 0 && status == 0)
        status = check_prelu(out, w, second, N, stream);
    printf("status %d\n", status);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(out);
    aclrtFree(second);
    aclrtFree(blank);
    return 0;
}

/* One function per case, as check_program.h names them. */
#define CASE(name)                                        \
    static int name(aclrtStream stream, const char *arg)  \
    {                                                     \
        (void)arg;                                        \
        return run_case(stream, #name);                   \
    }
CASE(half)
CASE(two)
CASE(reversed)
CASE(hole)
CASE(output)

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"half", half}, {"two", two}, {"reversed", reversed}, {"hole", hole},
                                       {"output", output}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
