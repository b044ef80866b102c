/*
 * test_runtime_strict.c - ACLNN_STRICT=1 (design decision 2): a copy whose kind says "device"
 * must really touch aclrtMalloc memory, since on an NPU a host pointer there would fault.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

/* ---- tiny check helpers (each test file is standalone) ---------------------------------- */
static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* Runs `call`, expects status `code`; for a failure also expects a recent-error message that
 * names `needle` (the function or parameter). */
#define EXPECT(call, code, needle)                                                         \
    do {                                                                                   \
        (void)aclGetRecentErrMsg();                                                        \
        int expect_ret_ = (int)(call);                                                     \
        CHECK(expect_ret_ == (int)(code), "%s returned %d, expected %d", #call,            \
              expect_ret_, (int)(code));                                                   \
        if ((int)(code) != 0) {                                                            \
            const char *expect_msg_ = aclGetRecentErrMsg();                                \
            CHECK(expect_msg_ != NULL && strstr(expect_msg_, (needle)) != NULL,            \
                  "%s: message should mention \"%s\", got \"%s\"", #call, (needle),        \
                  expect_msg_ ? expect_msg_ : "(null)");                                   \
        }                                                                                  \
    } while (0)

#define EXPECT_OK(call) EXPECT(call, 0, "")

int main(void)
{
    setenv("ACLNN_STRICT", "1", 1); /* read once, at first use */
    unsigned char host_a[64], host_b[64], *dev = NULL;
    memset(host_a, 7, sizeof host_a);
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT_OK(aclrtMalloc((void **)&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(aclrtMemcpy(host_b, 64, host_a, 64, ACL_MEMCPY_HOST_TO_DEVICE),
           ACL_ERROR_RT_PARAM_INVALID, "ACLNN_STRICT");
    EXPECT(aclrtMemcpy(host_b, 64, host_a, 64, ACL_MEMCPY_DEVICE_TO_HOST),
           ACL_ERROR_RT_PARAM_INVALID, "src");
    EXPECT(aclrtMemcpy(dev, 64, host_a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE),
           ACL_ERROR_RT_PARAM_INVALID, "src");
    EXPECT(aclrtMemcpyAsync(host_b, 64, host_a, 64, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
           ACL_ERROR_RT_PARAM_INVALID, "dst");
    EXPECT_OK(aclrtMemcpy(dev, 64, host_a, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(host_b, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(host_a, host_b, 64) == 0, "strict mode still copies correctly");
    EXPECT_OK(aclrtMemcpy(host_b, 64, host_a, 64, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_OK(aclrtMemcpy(host_b, 64, host_a, 64, ACL_MEMCPY_DEFAULT)); /* direction unknown */
    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    if (failures) {
        fprintf(stderr, "test_runtime_strict: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_runtime_strict: ok\n");
    return 0;
}
