/*
 * random_written.c - the checking mode's view of aclrtRandomNumAsync
 * (tests/test_runtime_random.py): argv[1] names the case, each N uniform floats from a random
 * task into x, then a Prelu of x:
 *   filled    the task's result is what the Prelu reads: clean (initcheck counts the task's
 *             result as written)
 *   partial   the task fills only x's first half: reported (the second half nobody wrote)
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "check_prelu.h"
#include "check_program.h"

#define N 1024
#define BYTES (N * sizeof(float))

static void set_param(aclrtRandomParaInfo *para, const void *value, uint8_t size)
{
    memset(para, 0, sizeof *para);
    memcpy(para->valueOrAddr, value, size);
    para->size = size;
}

/* `count` uniform floats in [-1, 1) into x, waited for; returns the task's status. */
static int uniform(void *x, void *counter, uint64_t count, aclrtStream stream)
{
    const float lo = -1.0f, hi = 1.0f;
    const uint64_t seed = 3;
    aclrtRandomNumTaskInfo info;
    memset(&info, 0, sizeof info);
    info.dataType = ACL_FLOAT;
    info.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
    info.randomResultAddr = x;
    info.randomCounterAddr = counter;
    set_param(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, &lo, sizeof lo);
    set_param(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, &hi, sizeof hi);
    set_param(&info.randomSeed, &seed, sizeof seed);
    set_param(&info.randomNum, &count, sizeof count);
    int status = aclrtRandomNumAsync(&info, stream, NULL);
    return status != 0 ? status : aclrtSynchronizeStream(stream);
}

static int run_case(aclrtStream stream, uint64_t count)
{
    const float slope = 0.25f;
    void *x = NULL, *w = NULL, *out = NULL, *counter = NULL;
    aclrtMalloc(&x, BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&out, BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&counter, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(counter, 16, 0, 16);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    int status = uniform(x, counter, count, stream);
    if (status == 0)
        status = check_prelu(x, w, out, N, stream);
    printf("status %d\n", status);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(out);
    aclrtFree(counter);
    return 0;
}

static int filled(aclrtStream stream, const char *arg)
{
    (void)arg;
    return run_case(stream, N);
}

static int partial(aclrtStream stream, const char *arg)
{
    (void)arg;
    return run_case(stream, N / 2);
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"filled", filled}, {"partial", partial}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
