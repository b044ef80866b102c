/*
 * test_runtime_visible_devices.c - ASCEND_RT_VISIBLE_DEVICES decides the device count (its
 * entries are re-indexed from 0, as CANN does); ids outside [0, count) get 107001.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

int main(void)
{
    /* Must be set before the first runtime call: the count is read once. */
    setenv("ASCEND_RT_VISIBLE_DEVICES", "4,5,7", 1);
    uint32_t count = 0;
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclrtGetDeviceCount(&count));
    CHECK(count == 3, "device count %u, expected 3", count);
    for (int32_t id = 0; id < 3; id++) {
        int32_t device = -1;
        EXPECT_OK(aclrtSetDevice(id));
        EXPECT_OK(aclrtGetDevice(&device));
        CHECK(device == id, "aclrtGetDevice = %d after aclrtSetDevice(%d)", device, id);
    }
    EXPECT(aclrtSetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
    EXPECT(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");

    /* Work on two devices stays apart: each has its own default stream. */
    unsigned char *a = NULL, *b = NULL;
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtMalloc((void **)&a, 16, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_OK(aclrtMemsetAsync(a, 16, 1, 16, NULL));
    EXPECT_OK(aclrtSetDevice(2));
    EXPECT_OK(aclrtMalloc((void **)&b, 16, ACL_MEM_MALLOC_NORMAL_ONLY));
    EXPECT_OK(aclrtMemsetAsync(b, 16, 2, 16, NULL));
    EXPECT_OK(aclrtSynchronizeDevice());
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtSynchronizeDevice());
    if (a && b)
        CHECK(tu_dev_byte(a, 15) == 1 && tu_dev_byte(b, 15) == 2, "memsets on two devices");
    EXPECT_OK(aclrtFree(a));
    EXPECT_OK(aclrtFree(b));
    for (int32_t id = 0; id < 3; id++)
        EXPECT_OK(aclrtResetDeviceForce(id));
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_visible_devices");
}
