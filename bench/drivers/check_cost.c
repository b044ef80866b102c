/*
 * check_cost.c - what the checking mode (ACLNN_CHECK, docs/checking.md) costs a CANN program:
 * a large Prelu (the whole CANN sequence per call: phase 1, launch, synchronize) and a small
 * one, each timed as the median of many calls.  bench/check_cost.py runs it once normally and
 * once under ACLNN_CHECK=memcheck,initcheck (the variable is read once per process) and writes
 * the ratio into docs/performance.md.
 *
 *   check_cost <elements> <calls>    prints "median_us <value>"
 *
 * The result is checked against a loop (prelu(x) = x > 0 ? x : 0.25 x) before timing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const int64_t n = atoll(argv[1]);
    const int calls = atoi(argv[2]);
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0)
        return 1;
    aclrtStream stream;
    aclrtCreateStream(&stream);
    const size_t bytes = (size_t)n * sizeof(float);
    float *host = malloc(bytes), *back = malloc(bytes), slope = 0.25f;
    for (int64_t i = 0; i < n; i++)
        host[i] = (float)(i % 13) - 6.0f;
    void *x, *w, *y;
    aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t shape[1] = {n}, wshape[1] = {1};
    aclTensor *tx = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *tw = aclCreateTensor(wshape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, wshape, 1, w);
    aclTensor *ty = aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, y);

    double *times = malloc(sizeof(double) * (size_t)(calls + 1));
    for (int c = -1; c < calls; c++) { /* call -1 warms up (first touch of the pages) */
        double start = now_us();
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        if (aclnnPreluGetWorkspaceSize(tx, tw, ty, &ws, &ex) != 0 ||
            aclnnPrelu(NULL, 0, ex, stream) != 0 || aclrtSynchronizeStream(stream) != 0) {
            fprintf(stderr, "prelu failed: %s\n", aclGetRecentErrMsg());
            return 1;
        }
        if (c >= 0)
            times[c] = now_us() - start;
    }
    aclrtMemcpy(back, bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int64_t i = 0; i < n; i++) {
        float want = host[i] > 0 ? host[i] : host[i] * slope;
        if (back[i] != want) {
            fprintf(stderr, "y[%lld] = %g, want %g\n", (long long)i, back[i], want);
            return 1;
        }
    }
    qsort(times, (size_t)calls, sizeof *times, compare);
    printf("median_us %.3f\n", times[calls / 2]);
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(y);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    free(host);
    free(back);
    free(times);
    return 0;
}
