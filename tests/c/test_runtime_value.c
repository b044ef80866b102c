/*
 * test_runtime_value.c - aclrtValueWrite / aclrtValueWait (rt_value.c):
 *   - each wait condition (0 >=, 1 ==, 2 AND, 3 NOR, from CANN's stars_cond_isa_define.hpp)
 *     holds its stream while the word fails it and releases it once a value write on another
 *     stream makes it hold; the written 64-bit value is what a copy reads back;
 *   - a wait that never holds ends at aclrtSetOpWaitTimeout with ACL_ERROR_RT_WAIT_TIMEOUT;
 *   - checks as CANN's: null devAddr (100000), host memory or bad flags (107000), a product
 *     without the tasks (Ascend910: 207000).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

static aclrtStream writer;
static uint64_t *word;

static uint64_t read_word(void)
{
    uint64_t v = 0;
    EXPECT_OK(aclrtMemcpy(&v, sizeof v, word, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST));
    return v;
}

static void write_now(uint64_t v)
{
    EXPECT_OK(aclrtValueWrite(word, v, 0, writer));
    EXPECT_OK(aclrtSynchronizeStream(writer));
    CHECK(read_word() == v, "the word holds %#llx after writing %#llx", (unsigned long long)read_word(),
          (unsigned long long)v);
}

/* The word starts at `fails`; a wait for (condition, value) must hold its stream until the word
 * becomes `holds`. */
static void check_condition(uint32_t condition, uint64_t value, uint64_t fails, uint64_t holds)
{
    write_now(fails);
    EXPECT_OK(aclrtValueWait(word, value, condition, tu_stream));
    CHECK(aclrtSynchronizeStreamWithTimeout(tu_stream, 50) != ACL_SUCCESS,
          "condition %u against %#llx let the stream go on %#llx", condition, (unsigned long long)value,
          (unsigned long long)fails);
    write_now(holds);
    CHECK(aclrtSynchronizeStreamWithTimeout(tu_stream, 5000) == ACL_SUCCESS,
          "condition %u against %#llx held the stream on %#llx", condition, (unsigned long long)value,
          (unsigned long long)holds);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 2;
    EXPECT_OK(aclrtCreateStream(&writer));
    EXPECT_OK(aclrtMalloc((void **)&word, 64, ACL_MEM_MALLOC_HUGE_FIRST));

    check_condition(0, 10, 9, 10);
    check_condition(1, 3, 4, 3);
    check_condition(2, 0xf0, 0x0f, 0x10);
    check_condition(3, 0xffffffff00000000ull, 0x00000000ffffffffull, 0);
    write_now(0x0123456789abcdefull);

    EXPECT_OK(aclrtSetOpWaitTimeout(1));
    EXPECT_OK(aclrtValueWait(word, 1, 1, tu_stream));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_WAIT_TIMEOUT, "aclrtValueWait");
    EXPECT_OK(aclrtSetOpWaitTimeout(0));

    uint64_t host = 0;
    EXPECT(aclrtValueWrite(NULL, 1, 0, writer), ACL_ERROR_INVALID_PARAM, "devAddr");
    EXPECT(aclrtValueWait(&host, 1, 0, writer), ACL_ERROR_RT_PARAM_INVALID, "devAddr");
    EXPECT(aclrtValueWrite(word, 1, 1, writer), ACL_ERROR_RT_PARAM_INVALID, "flag");
    EXPECT(aclrtValueWait(word, 1, 4, writer), ACL_ERROR_RT_PARAM_INVALID, "flag");
    CHECK(aclnnCpuSetSocVersion("Ascend910") == 0, "cannot select Ascend910");
    EXPECT(aclrtValueWrite(word, 1, 0, writer), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910");
    EXPECT(aclrtValueWait(word, 1, 0, writer), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910");
    CHECK(aclnnCpuSetSocVersion(NULL) == 0, "cannot restore the default product");

    EXPECT_OK(aclrtFree(word));
    EXPECT_OK(aclrtDestroyStream(writer));
    tu_close_device();
    return tu_finish("test_runtime_value");
}
