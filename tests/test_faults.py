"""Host allocation failures inside the library: a program that replaces malloc & co. makes the
n-th allocation fail, for n = 0, 1, 2, ... until a whole scenario (descriptors, phase 1,
workspace, phase 2 with non-contiguous inputs, synchronize) runs without reaching the fault.
Every call must return a status (no crash, no abort, no hang); a failed call must leave
ACL_ERROR_BAD_ALLOC / ACL_ERROR_RT_MEMORY_ALLOCATION / an aclnn status, and after the fault the
same scenario must succeed again and give the right numbers.

(The stream-fault and impossible-size cases are C programs in tests/c/test_limits_*.c.)
"""
import subprocess

import support

PROGRAM = r"""
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "aclnnop/aclnn_replication_pad2d.h"

/* ---- fault injection: the countdown-th allocation (from any thread) fails, once ---- */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static atomic_long countdown = -1;
static atomic_long fired = 0;
static int should_fail(void)
{
    if (atomic_load(&countdown) < 0) return 0;
    if (atomic_fetch_sub(&countdown, 1) == 0) { atomic_store(&fired, 1); return 1; }
    return 0;
}
void *malloc(size_t n) { if (should_fail()) { errno = ENOMEM; return NULL; } return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (should_fail()) { errno = ENOMEM; return NULL; } return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (should_fail()) { errno = ENOMEM; return NULL; } return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *aligned_alloc(size_t a, size_t n) { if (should_fail()) { errno = ENOMEM; return NULL; } return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { if (should_fail()) { errno = ENOMEM; return NULL; } return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n)
{
    if (should_fail()) return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

/* ---- the scenario ---- */
static aclrtStream stream;

/* Returns 0 on success, 1 on a clean failure (a status), and checks results on success. */
static int scenario(int check)
{
    int failed = 0;
    /* x [2,3,5,4] viewed transposed (non-contiguous: the workspace copy path) */
    const int64_t dims[4] = {2, 3, 5, 4}, strides[4] = {60, 20, 1, 5}, storage[1] = {120};
    const int64_t pdims[4] = {2, 3, 8, 7}, pads[4] = {1, 2, 3, 0};
    void *x_dev = NULL, *p_dev = NULL, *ws = NULL;
    aclTensor *x = NULL, *p = NULL;
    aclIntArray *padding = NULL;
    aclOpExecutor *ex = NULL;
    uint64_t ws_size = 0;
    if (aclrtMalloc(&x_dev, 480, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) { failed = 1; goto out; }
    if (aclrtMalloc(&p_dev, 2 * 3 * 8 * 7 * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) { failed = 1; goto out; }
    float x_host[120], o[2 * 3 * 8 * 7]; /* device memory is reached with aclrtMemcpy only */
    for (int i = 0; i < 120; i++) x_host[i] = (float)i;
    if (aclrtMemcpy(x_dev, 480, x_host, sizeof x_host, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) { failed = 1; goto out; }
    x = aclCreateTensor(dims, 4, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, x_dev);
    p = aclCreateTensor(pdims, 4, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, pdims, 4, p_dev);
    padding = aclCreateIntArray(pads, 4);
    if (!x || !p || !padding) { failed = 1; goto out; }
    aclnnStatus st = aclnnReplicationPad2dGetWorkspaceSize(x, padding, p, &ws_size, &ex);
    if (st != ACLNN_SUCCESS) { failed = 1; goto out; }
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(ex); failed = 1; goto out;
    }
    st = aclnnReplicationPad2d(ws, ws_size, ex, stream);
    if (st != ACLNN_SUCCESS) failed = 1;
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) failed = 1;
    if (!failed && check) {
        if (aclrtMemcpy(o, sizeof o, p_dev, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) { printf("copy back\n"); exit(3); }
        for (int n = 0; n < 2; n++) for (int c = 0; c < 3; c++) for (int i = 0; i < 8; i++) for (int j = 0; j < 7; j++) {
            int si = i - 3 < 0 ? 0 : (i - 3 > 4 ? 4 : i - 3), sj = j - 1 < 0 ? 0 : (j - 1 > 3 ? 3 : j - 1);
            float want = (float)(n * 60 + c * 20 + si * 1 + sj * 5);
            if (o[((n * 3 + c) * 8 + i) * 7 + j] != want) { printf("wrong result\n"); exit(3); }
        }
    }
out:
    if (failed) {
        const char *msg = aclGetRecentErrMsg(); /* may be NULL if the message itself could not be stored */
        (void)msg;
    }
    aclDestroyTensor(x);
    aclDestroyTensor(p);
    aclDestroyIntArray(padding);
    if (ws) aclrtFree(ws);
    if (x_dev) aclrtFree(x_dev);
    if (p_dev) aclrtFree(p_dev);
    return failed;
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS)
        return 2;
    if (scenario(1) != 0) { printf("warm-up failed: %s\n", aclGetRecentErrMsg()); return 2; }
    long n;
    for (n = 0; n < 100000; n++) {
        atomic_store(&fired, 0);
        atomic_store(&countdown, n);
        int failed = scenario(0);
        atomic_store(&countdown, -1);
        aclrtSynchronizeStream(stream);
        aclGetRecentErrMsg();
        if (!atomic_load(&fired)) {
            if (failed) { printf("scenario failed without a fault at n=%ld\n", n); return 1; }
            break; /* every allocation of the scenario has been failed once */
        }
        if (scenario(1) != 0) { printf("scenario does not recover after fault n=%ld: %s\n", n, aclGetRecentErrMsg()); return 1; }
    }
    printf("injected %ld allocation failures, every one handled\n", n);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_every_allocation_failure_is_a_status(tmp_path, monkeypatch):
    monkeypatch.delenv("ACLNN_TEST_SANITIZE", raising=False)  # a plain build: see the module docstring
    source = tmp_path / "alloc_faults.c"
    source.write_text(PROGRAM)
    exe = support.compile_program(source, out_dir=tmp_path)
    result = support.run_program(exe, timeout=300, env={"ACLNN_NUM_THREADS": "2"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "every one handled" in result.stdout
