/*
 * callback_reads.c - host code that the stream orders after a launch reads the launch's output
 * (tests/test_check_callbacks.py); argv[1]:
 *   callback   aclrtLaunchCallback (blocking) run by a subscribed thread in aclrtProcessReport
 *   hostfunc   aclrtLaunchHostFunc, run by the stream itself
 *   racy       the same copy made by the main thread with no synchronization: a real race
 * Each copies the output of an aclnnPrelu launched before it with aclrtMemcpy and checks it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check_prelu.h"

#define N 1024

static void *g_out;
static int g_wrong = -1;
static volatile int g_stop;

static void read_output(void *unused)
{
    (void)unused;
    static float host[N];
    aclrtMemcpy(host, sizeof host, g_out, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    int wrong = 0;
    for (int i = 0; i < N; ++i)
        wrong += host[i] != (i % 2 ? -0.5f * (float)i : (float)i);
    g_wrong = wrong;
}

static void *report_loop(void *unused)
{
    (void)unused;
    while (!g_stop)
        aclrtProcessReport(10);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    aclrtStream stream = NULL;
    aclrtCreateStream(&stream);
    float host[N], weight = 0.5f;
    for (int i = 0; i < N; ++i)
        host[i] = i % 2 ? -(float)i : (float)i;
    void *x = NULL, *w = NULL;
    aclrtMalloc(&x, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof weight, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&g_out, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w, sizeof weight, &weight, sizeof weight, ACL_MEMCPY_HOST_TO_DEVICE);
    aclTensor *self = check_vector(x, N), *wt = check_vector(w, 1), *out = check_vector(g_out, N);
    pthread_t reporter;
    const int callback = strcmp(argv[1], "callback") == 0;
    if (callback) {
        pthread_create(&reporter, NULL, report_loop, NULL);
        aclrtSubscribeReport((uint64_t)reporter, stream);
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnPreluGetWorkspaceSize(self, wt, out, &ws, &ex);
    aclnnPrelu(NULL, 0, ex, stream);
    if (callback)
        aclrtLaunchCallback(read_output, NULL, ACL_CALLBACK_BLOCK, stream);
    else if (strcmp(argv[1], "hostfunc") == 0)
        aclrtLaunchHostFunc(stream, read_output, NULL);
    else
        read_output(NULL); /* racy: nothing orders it after the launch */
    aclrtSynchronizeStream(stream);
    if (callback) {
        aclrtUnSubscribeReport((uint64_t)reporter, stream);
        g_stop = 1;
        pthread_join(reporter, NULL);
    }
    printf("wrong values: %d\n", g_wrong);
    aclDestroyTensor(self);
    aclDestroyTensor(wt);
    aclDestroyTensor(out);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(g_out);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
