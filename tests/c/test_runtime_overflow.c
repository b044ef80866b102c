/*
 * test_runtime_overflow.c - overflow detection (rt_overflow.c), as CANN's overflow_detection
 * sample drives it: the stream switch, the 64-byte status whose first word is the flag.
 *   - with the switch off (a new stream's default on Ascend910B) a Prelu whose result overflows
 *     fp32 (-3e38 * 10 = -Inf) leaves the status 0;
 *   - with the switch on, a finite Prelu leaves it 0, the overflowing one sets it to 1, the
 *     reset clears it; a copy of Inf (no arithmetic) does not set it;
 *   - Ascend910 (no stars: its tasks always report) gives switch 1 without a set;
 *   - checks: flag 2 and a 32-byte status (107000), null pointers (100000), host memory (107000);
 *   - stream attributes (rt_stream_attr.c): each reads back what was set (failure mode also when
 *     set by aclrtSetStreamFailureMode, the overflow check as the switch, priority clamped to
 *     [0, 7]); a new stream, even at a destroyed one's address, starts with zeros; bad types
 *     107000, a null value 100000.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

#define STATUS_BYTES 64

static void *status_dev;

static uint32_t read_status(void)
{
    uint8_t host[STATUS_BYTES];
    memset(host, 0xab, sizeof host);
    EXPECT_OK(aclrtGetOverflowStatus(status_dev, STATUS_BYTES, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclrtMemcpy(host, sizeof host, status_dev, STATUS_BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    uint32_t flag;
    memcpy(&flag, host, sizeof flag);
    for (int i = 4; i < STATUS_BYTES; i++)
        CHECK(host[i] == 0, "status byte %d is %#x", i, host[i]);
    return flag;
}

/* Prelu of {x, 1} with weight w on tu_stream. */
static void run_prelu(float x, float w)
{
    float xs[] = {x, 1.0f}, ws[] = {w};
    int64_t shape[] = {2}, w_shape[] = {1};
    tu_tensor self = tu_make_f32(xs, 2, shape, 1, NULL), weight = tu_make_f32(ws, 1, w_shape, 1, NULL);
    tu_tensor out = tu_make_f32(NULL, 2, shape, 1, NULL);
    uint64_t size = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &size, &ex) == ACLNN_SUCCESS, "prelu phase 1");
    CHECK(tu_run(aclnnPrelu, size, ex) == 0, "prelu phase 2");
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&out);
}

static void test_switch_and_status(void)
{
    uint32_t flag = 7;
    EXPECT_OK(aclrtGetStreamOverflowSwitch(tu_stream, &flag));
    CHECK(flag == 0, "a new stream's switch is %u", flag);
    run_prelu(-3e38f, 10.0f);
    CHECK(read_status() == 0, "an overflow with the switch off set the status");

    EXPECT_OK(aclrtSetStreamOverflowSwitch(tu_stream, 1));
    EXPECT_OK(aclrtGetStreamOverflowSwitch(tu_stream, &flag));
    CHECK(flag == 1, "the switch reads %u after turning it on", flag);
    run_prelu(-3.0f, 10.0f);
    CHECK(read_status() == 0, "a finite Prelu set the status");
    float inf = 1e38f * 10.0f;
    void *dev = NULL;
    EXPECT_OK(aclrtMalloc(&dev, 128, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpy(dev, sizeof inf, &inf, sizeof inf, ACL_MEMCPY_HOST_TO_DEVICE));
    /* 64 bytes on: an async copy's addresses must be 64-byte aligned (CANN's page) */
    EXPECT_OK(aclrtMemcpyAsync((char *)dev + 64, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, tu_stream));
    CHECK(read_status() == 0, "a copy of Inf set the status");
    EXPECT_OK(aclrtFree(dev));
    run_prelu(-3e38f, 10.0f);
    CHECK(read_status() == 1, "an overflowing Prelu did not set the status");
    EXPECT_OK(aclrtResetOverflowStatus(tu_stream));
    CHECK(read_status() == 0, "the reset left the status set");
    run_prelu(-3e38f, 10.0f);
    EXPECT_OK(aclrtResetFloatOverflowStatus(tu_stream));
    EXPECT_OK(aclrtGetFloatOverflowStatus(status_dev, STATUS_BYTES, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    CHECK(tu_dev_byte(status_dev, 0) == 0, "aclrtResetFloatOverflowStatus left the status set");
    EXPECT_OK(aclrtSetStreamOverflowSwitch(tu_stream, 0));
    EXPECT_OK(aclrtGetStreamOverflowSwitch(tu_stream, &flag));
    CHECK(flag == 0, "the switch reads %u after turning it off", flag);
}

static void test_checks(void)
{
    uint8_t host[STATUS_BYTES];
    EXPECT(aclrtSetStreamOverflowSwitch(tu_stream, 2), ACL_ERROR_RT_PARAM_INVALID, "flag");
    EXPECT(aclrtGetStreamOverflowSwitch(tu_stream, NULL), ACL_ERROR_INVALID_PARAM, "flag");
    EXPECT(aclrtGetOverflowStatus(NULL, STATUS_BYTES, tu_stream), ACL_ERROR_INVALID_PARAM, "outputAddr");
    EXPECT(aclrtGetOverflowStatus(status_dev, 32, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "outputSize");
    EXPECT(aclrtGetOverflowStatus(host, STATUS_BYTES, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "outputAddr");

    CHECK(aclnnCpuSetSocVersion("Ascend910") == 0, "cannot select Ascend910");
    uint32_t flag = 0;
    EXPECT_OK(aclrtGetStreamOverflowSwitch(tu_stream, &flag));
    CHECK(flag == 1, "Ascend910's tasks always report, the switch reads %u", flag);
    CHECK(aclnnCpuSetSocVersion(NULL) == 0, "cannot restore the default product");
}

static uint64_t attr(aclrtStream stream, aclrtStreamAttr type)
{
    aclrtStreamAttrValue value;
    memset(&value, 0xff, sizeof value);
    EXPECT_OK(aclrtGetStreamAttribute(stream, type, &value));
    return type == ACL_STREAM_ATTR_FAILURE_MODE ? value.failureMode : value.reserve[0];
}

static void set_attr(aclrtStream stream, aclrtStreamAttr type, uint64_t v)
{
    aclrtStreamAttrValue value;
    memset(&value, 0, sizeof value);
    if (type == ACL_STREAM_ATTR_FAILURE_MODE)
        value.failureMode = v;
    else
        value.reserve[0] = (uint32_t)v;
    EXPECT_OK(aclrtSetStreamAttribute(stream, type, &value));
}

static void test_stream_attributes(void)
{
    for (int round = 0; round < 2; round++) {
        aclrtStream s = NULL;
        EXPECT_OK(aclrtCreateStream(&s));
        for (int type = ACL_STREAM_ATTR_FAILURE_MODE; type <= ACL_STREAM_ATTR_PRIORITY; type++)
            CHECK(attr(s, (aclrtStreamAttr)type) == 0, "round %d: a new stream's attribute %d is %llu", round,
                  type, (unsigned long long)attr(s, (aclrtStreamAttr)type));
        set_attr(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, 1234);
        set_attr(s, ACL_STREAM_ATTR_CACHE_OP_INFO, 1);
        set_attr(s, ACL_STREAM_ATTR_PRIORITY, 3);
        set_attr(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, 1);
        set_attr(s, ACL_STREAM_ATTR_FAILURE_MODE, ACL_STOP_ON_FAILURE);
        CHECK(attr(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG) == 1234, "tag");
        CHECK(attr(s, ACL_STREAM_ATTR_CACHE_OP_INFO) == 1, "cache op info");
        CHECK(attr(s, ACL_STREAM_ATTR_PRIORITY) == 3, "priority");
        CHECK(attr(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK) == 1, "overflow check");
        uint32_t sw = 0;
        EXPECT_OK(aclrtGetStreamOverflowSwitch(s, &sw));
        CHECK(sw == 1, "the attribute did not turn the overflow switch on");
        CHECK(attr(s, ACL_STREAM_ATTR_FAILURE_MODE) == ACL_STOP_ON_FAILURE, "failure mode");
        EXPECT_OK(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE));
        CHECK(attr(s, ACL_STREAM_ATTR_FAILURE_MODE) == ACL_CONTINUE_ON_FAILURE, "failure mode set directly");
        set_attr(s, ACL_STREAM_ATTR_PRIORITY, 100);
        CHECK(attr(s, ACL_STREAM_ATTR_PRIORITY) == 7, "priority 100 is kept as %llu",
              (unsigned long long)attr(s, ACL_STREAM_ATTR_PRIORITY));
        aclrtStreamAttrValue value = {0};
        EXPECT(aclrtSetStreamAttribute(s, (aclrtStreamAttr)6, &value), ACL_ERROR_RT_PARAM_INVALID, "stmAttrType");
        EXPECT(aclrtGetStreamAttribute(s, (aclrtStreamAttr)0, &value), ACL_ERROR_RT_PARAM_INVALID, "stmAttrType");
        EXPECT(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_PRIORITY, NULL), ACL_ERROR_INVALID_PARAM, "value");
        value.failureMode = 5;
        EXPECT(aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &value), ACL_ERROR_INVALID_PARAM, "mode");
        EXPECT_OK(aclrtDestroyStream(s)); /* the next round's stream often takes its address */
    }
}

int main(void)
{
    if (tu_open_device() != 0)
        return 2;
    EXPECT_OK(aclrtMalloc(&status_dev, STATUS_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    test_switch_and_status();
    test_checks();
    test_stream_attributes();
    EXPECT_OK(aclrtFree(status_dev));
    tu_close_device();
    return tu_finish("test_runtime_overflow");
}
