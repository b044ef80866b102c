/*
 * failed_calls.c - calls that fail because of the program's mistake, their statuses ignored as
 * ported code often does: under ACLNN_CHECK each is reported as a failed call
 * (tests/test_check_failed_calls.py).  argv[1] names the mistake.
 */
#include <stdio.h>
#include <string.h>

#include "check_prelu.h"

static int double_free(void)
{
    void *p = NULL;
    aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtFree(p);
    aclrtFree(p); /* ignored: 107000 */
    return 0;
}

static int copy_past_end(void)
{
    void *p = NULL;
    char host[8192] = {0};
    aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(p, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE); /* ignored */
    aclrtFree(p);
    return 0;
}

static int consumed_executor(void)
{
    void *x = NULL, *w = NULL, *y = NULL;
    aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(x, 64, 0, 64);
    aclrtMemset(w, 64, 0, 64);
    aclTensor *self = check_vector(x, 4), *weight = check_vector(w, 1), *out = check_vector(y, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnPreluGetWorkspaceSize(self, weight, out, &ws, &ex);
    aclnnPrelu(NULL, 0, ex, NULL);
    aclnnPrelu(NULL, 0, ex, NULL); /* ignored: consumed */
    aclrtSynchronizeStream(NULL);
    aclDestroyTensor(self);
    aclDestroyTensor(weight);
    aclDestroyTensor(out);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(y);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    int rc = strcmp(argv[1], "double_free") == 0         ? double_free()
             : strcmp(argv[1], "copy_past_end") == 0     ? copy_past_end()
             : strcmp(argv[1], "consumed_executor") == 0 ? consumed_executor()
                                                         : 0; /* "none": a clean program */
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}
