/*
 * test_runtime_memcpy_desc.c - copies whose addresses the device reads when they run
 * (aclrtMemcpyAsyncWithOffset, copy descriptors) and cache maintenance tasks (aclrtCmoAsync, CMO
 * descriptors): docs/runtime.md "Copies through addresses in device memory" and "Cache
 * maintenance".  The addresses are written by a queued copy just before the task that reads them,
 * the bytes that arrive are compared with what was written, and every call's checks, product
 * gates (Ascend310P, Ascend910) and statuses are exercised.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

#include "test_util.h"

enum { BYTES = 4096 };

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + 3);
}

/* Device buffers: `from` holds the pattern, `to` zeros, `cells` two 8-byte address cells. */
typedef struct buffers {
    unsigned char *from, *to;
    uint64_t *cells;
    unsigned char *host; /* pinned */
} buffers;

static buffers make_buffers(void)
{
    buffers b = {0};
    EXPECT_OK(aclrtMalloc((void **)&b.from, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&b.to, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&b.cells, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost((void **)&b.host, BYTES));
    for (size_t i = 0; i < BYTES; i++)
        b.host[i] = pattern(i);
    EXPECT_OK(aclrtMemcpy(b.from, BYTES, b.host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemset(b.to, BYTES, 0, BYTES));
    EXPECT_OK(aclrtMemset(b.cells, 64, 0, 64));
    return b;
}

static void free_buffers(buffers *b)
{
    EXPECT_OK(aclrtFree(b->from));
    EXPECT_OK(aclrtFree(b->to));
    EXPECT_OK(aclrtFree(b->cells));
    EXPECT_OK(aclrtFreeHost(b->host));
}

/* Bytes [0, BYTES) of `to`, read back: `count` bytes at `at` must be the pattern from `from_at`,
 * the rest 0. */
static void expect_copied(const buffers *b, size_t at, size_t from_at, size_t count, const char *what)
{
    EXPECT_OK(aclrtMemcpy(b->host, BYTES, b->to, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    int wrong = 0;
    for (size_t i = 0; i < BYTES; i++) {
        const unsigned char want = i >= at && i < at + count ? pattern(from_at + i - at) : 0;
        wrong += b->host[i] != want;
    }
    CHECK(wrong == 0, "%s: %d bytes differ", what, wrong);
}

static void test_with_offset(void)
{
    buffers b = make_buffers();
    /* the cells are written by a queued copy: the copy must read them when it runs */
    uint64_t *addresses = NULL;
    EXPECT_OK(aclrtMallocHost((void **)&addresses, 64));
    addresses[0] = (uintptr_t)b.to;
    addresses[1] = (uintptr_t)b.from;
    EXPECT_OK(aclrtMemcpyAsync(b.cells, 64, addresses, 16, ACL_MEMCPY_HOST_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 1000, 64, (const void **)&b.cells[1], 1000, 128,
                                         ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    expect_copied(&b, 64, 128, 1000, "aclrtMemcpyAsyncWithOffset");

    EXPECT_OK(aclrtMemcpyAsyncWithOffset(NULL, 0, 0, NULL, 0, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, tu_stream));
    EXPECT(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 64, 0, (const void **)&b.cells[1], 64, 0,
                                      ACL_MEMCPY_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "kind");
    EXPECT(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 32, 0, (const void **)&b.cells[1], 64, 0,
                                      ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_PARAM_INVALID,
           "destMax");
    EXPECT(aclrtMemcpyAsyncWithOffset(NULL, 64, 0, (const void **)&b.cells[1], 64, 0,
                                      ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_PARAM_INVALID, "dst");
    void *host_cell = addresses;
    EXPECT(aclrtMemcpyAsyncWithOffset((void **)host_cell, 64, 0, (const void **)&b.cells[1], 64, 0,
                                      ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_PARAM_INVALID,
           "device memory");

    /* an offset that leaves the allocation fails the task, reported by the synchronize */
    EXPECT_OK(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 64, BYTES, (const void **)&b.cells[1], 64, 0,
                                         ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_PARAM_INVALID, "not inside device memory");

    EXPECT_OK(aclnnCpuSetSocVersion("Ascend310P"));
    EXPECT(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 64, 0, (const void **)&b.cells[1], 64, 0,
                                      ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "Ascend310P");
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    EXPECT_OK(aclrtMemcpyAsyncWithOffset((void **)&b.cells[0], 64, 0, (const void **)&b.cells[1], 64, 0,
                                         ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    EXPECT_OK(aclrtFreeHost(addresses));
    free_buffers(&b);
}

static void test_descriptors(void)
{
    buffers b = make_buffers();
    size_t size = 0;
    EXPECT_OK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &size));
    CHECK(size == 32, "descriptor size %zu on Ascend910B, CANN's is 32", size);
    EXPECT(aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "kind");
    EXPECT(aclrtGetMemcpyDescSize((aclrtMemcpyKind)8, &size), ACL_ERROR_INVALID_PARAM, "kind");
    EXPECT(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "descSize");
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT_OK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &size));
    CHECK(size == 64, "descriptor size %zu on Ascend950, CANN's is 64", size);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    EXPECT(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "Ascend910");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));

    void *desc = NULL;
    EXPECT_OK(aclrtMalloc(&desc, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b.from + 10, b.to + 20, 500, NULL));
    EXPECT_OK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    expect_copied(&b, 20, 10, 500, "aclrtMemcpyAsyncWithDesc");

    EXPECT(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b.from, b.to, 0, NULL), ACL_ERROR_INVALID_PARAM,
           "count");
    EXPECT(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b.from, b.to, 8, desc), ACL_ERROR_INVALID_PARAM,
           "config");
    EXPECT(aclrtSetMemcpyDesc((char *)desc + 32, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b.from, b.to, 8, NULL),
           ACL_ERROR_RT_PARAM_INVALID, "64-byte");
    EXPECT(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b.host, b.to, 8, NULL),
           ACL_ERROR_RT_PARAM_INVALID, "device memory");
    EXPECT(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_HOST_TO_DEVICE, b.from, b.to, 8, NULL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "kind");
    EXPECT(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "stream");
    EXPECT(aclrtMemcpyAsyncWithDesc(b.host, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, tu_stream), ACL_ERROR_RT_PARAM_INVALID,
           "device memory");
    EXPECT_OK(aclrtFree(desc));
    free_buffers(&b);
}

static void test_cmo(void)
{
    buffers b = make_buffers();
    for (int type = ACL_RT_CMO_TYPE_PREFETCH; type <= ACL_RT_CMO_TYPE_FLUSH; type++)
        EXPECT_OK(aclrtCmoAsync(b.from, BYTES, (aclrtCmoType)type, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    expect_copied(&b, 0, 0, 0, "a CMO changes no byte"); /* `to` is still zeros */
    EXPECT_OK(aclrtMemcpy(b.host, BYTES, b.from, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    int wrong = 0;
    for (size_t i = 0; i < BYTES; i++)
        wrong += b.host[i] != pattern(i);
    CHECK(wrong == 0, "an invalidate or flush changed %d bytes", wrong);

    EXPECT(aclrtCmoAsync(NULL, 8, ACL_RT_CMO_TYPE_PREFETCH, tu_stream), ACL_ERROR_INVALID_PARAM, "src");
    EXPECT(aclrtCmoAsync(b.from, 0, ACL_RT_CMO_TYPE_PREFETCH, tu_stream), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtCmoAsync(b.from, 8, (aclrtCmoType)4, tu_stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cmoType");
    EXPECT(aclrtCmoAsync(b.from, BYTES + 64, ACL_RT_CMO_TYPE_PREFETCH, tu_stream), ACL_ERROR_RT_PARAM_INVALID,
           "device memory");

    size_t size = 0;
    EXPECT_OK(aclrtCmoGetDescSize(&size));
    CHECK(size == 32, "CMO descriptor size %zu, CANN's rtCmoAddrInfo is 32", size);
    EXPECT(aclrtCmoGetDescSize(NULL), ACL_ERROR_RT_PARAM_INVALID, "size");
    void *desc = NULL;
    EXPECT_OK(aclrtMalloc(&desc, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtCmoSetDesc(desc, b.from, BYTES));
    EXPECT_OK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_WRITEBACK, tu_stream, NULL));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_WRITEBACK, tu_stream, desc), ACL_ERROR_RT_PARAM_INVALID,
           "reserve");
    EXPECT(aclrtCmoAsyncWithDesc(desc, (aclrtCmoType)7, tu_stream, NULL), ACL_ERROR_RT_PARAM_INVALID, "cmoType");
    EXPECT(aclrtCmoSetDesc(desc, b.from, 0), ACL_ERROR_RT_PARAM_INVALID, "size");
    /* a descriptor naming a range past its allocation fails the task when it runs */
    EXPECT_OK(aclrtCmoSetDesc(desc, b.from, BYTES + 64));
    EXPECT_OK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_INVALID, tu_stream, NULL));
    EXPECT(aclrtSynchronizeStream(tu_stream), ACL_ERROR_RT_PARAM_INVALID, "device memory");

    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT_OK(aclrtCmoGetDescSize(&size));
    CHECK(size == 64, "CMO descriptor size %zu on Ascend950, CANN's is 64", size);
    EXPECT_OK(aclrtCmoSetDesc(desc, b.to, 128));
    EXPECT_OK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_FLUSH, tu_stream, NULL));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend310P"));
    EXPECT(aclrtCmoAsync(b.from, 8, ACL_RT_CMO_TYPE_PREFETCH, tu_stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "Ascend310P");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    EXPECT_OK(aclrtFree(desc));
    free_buffers(&b);
}

int main(void)
{
    if (tu_open_device())
        return 1;
    test_with_offset();
    test_descriptors();
    test_cmo();
    tu_close_device();
    return tu_finish("test_runtime_memcpy_desc");
}
