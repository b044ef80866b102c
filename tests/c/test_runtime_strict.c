/*
 * test_runtime_strict.c - ACLNN_STRICT=1 (docs/runtime.md): a copy whose kind says "device"
 * must really touch aclrtMalloc memory, since on an NPU a host pointer there would fault.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

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
    return tu_finish("test_runtime_strict");
}
