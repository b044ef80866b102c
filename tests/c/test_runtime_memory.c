/*
 * test_runtime_memory.c - the device-memory registry (docs/runtime.md):
 * CANN's rounding (round up to 32, +32 for aclrtMalloc), 512-byte alignment of device memory, size 0 / NULL ->
 * 100000, out of memory -> 207001, aclrtFree of NULL / unknown / interior / already freed
 * pointers, host vs device mix-ups, aclrtMemcpy / aclrtMemset argument checks and bounds.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#include "test_util.h"

static void test_malloc_rules(void)
{
    void *p = NULL;
    EXPECT(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL,
           "aclrtMalloc");
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT(aclrtMalloc(NULL, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "devPtr");
    EXPECT(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT(aclrtMallocCached(NULL, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
           "devPtr");
    EXPECT(aclrtMalloc(&p, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION,
           "aclrtMalloc");
    EXPECT(aclrtMalloc(&p, SIZE_MAX - 40, ACL_MEM_MALLOC_HUGE_FIRST),
           ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc");

    /* Sizes: aclrtMalloc usable bytes = round_up(size, 32) + 32; Align32 = round_up(size, 32).
     * The end of the allocation is probed with aclrtMemset, which refuses to run past it. */
    static const struct { size_t size, malloc_usable, align32_usable; } sizes[] = {
        {1, 64, 32}, {31, 64, 32}, {32, 64, 32}, {33, 96, 64}, {100, 160, 128}, {4096, 4128, 4096},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *m = NULL, *a = NULL;
        EXPECT_OK(aclrtMalloc(&m, sizes[i].size, (aclrtMemMallocPolicy)12345)); /* any policy */
        EXPECT_OK(aclrtMallocAlign32(&a, sizes[i].size, ACL_MEM_MALLOC_NORMAL_ONLY));
        /* 512 as CANN's runtime asks its driver for; ggml's CANN backend needs at least 128 */
        CHECK(((uintptr_t)m % 512) == 0 && ((uintptr_t)a % 512) == 0, "512-byte alignment");
        size_t mu = sizes[i].malloc_usable, au = sizes[i].align32_usable;
        EXPECT_OK(aclrtMemset(m, mu, 0x33, mu));
        EXPECT(aclrtMemset(m, mu + 1, 0x33, mu + 1), ACL_ERROR_RT_PARAM_INVALID, "past the end");
        EXPECT_OK(aclrtMemset(a, au, 0x44, au));
        EXPECT(aclrtMemset(a, au + 1, 0x44, au + 1), ACL_ERROR_RT_PARAM_INVALID, "past the end");
        EXPECT_OK(aclrtFree(m));
        EXPECT_OK(aclrtFree(a));
    }
    void *cached = NULL;
    EXPECT_OK(aclrtMallocCached(&cached, 10, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtFree(cached));
}

static void test_free_rules(void)
{
    char on_stack[64];
    unsigned char *p = NULL;
    void *host = NULL;
    EXPECT(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM, "devPtr");
    EXPECT(aclrtFree(on_stack), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree");
    EXPECT_OK(aclrtMalloc((void **)&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(aclrtFree(p + 8), ACL_ERROR_RT_PARAM_INVALID, "not at its start");
    EXPECT_OK(aclrtFree(p));
    EXPECT(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID, "already freed"); /* double free */

    EXPECT(aclrtMallocHost(NULL, 8), ACL_ERROR_INVALID_PARAM, "hostPtr");
    EXPECT(aclrtMallocHost(&host, 0), ACL_ERROR_INVALID_PARAM, "size");
    EXPECT_OK(aclrtMallocHost(&host, 1000));
    CHECK(((uintptr_t)host % 64) == 0, "aclrtMallocHost is 64-byte aligned");
    EXPECT_OK(aclrtMalloc((void **)&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(aclrtFree(host), ACL_ERROR_RT_PARAM_INVALID, "aclrtFreeHost");
    EXPECT(aclrtFreeHost(p), ACL_ERROR_RT_PARAM_INVALID, "aclrtFree");
    EXPECT(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM, "hostPtr");
    EXPECT_OK(aclrtFreeHost(host));
    EXPECT(aclrtFreeHost(host), ACL_ERROR_RT_PARAM_INVALID, "aclrtFreeHost");
    EXPECT_OK(aclrtFree(p));
}

static void test_copy_rules(void)
{
    unsigned char host_in[300], host_out[300];
    unsigned char *dev = NULL, *dev2 = NULL;
    for (int i = 0; i < 300; i++)
        host_in[i] = (unsigned char)(i * 7 + 3);
    EXPECT_OK(aclrtMalloc((void **)&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST)); /* 288 usable */
    EXPECT_OK(aclrtMalloc((void **)&dev2, 256, ACL_MEM_MALLOC_HUGE_FIRST));

    EXPECT_OK(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE)); /* count 0: no checks */
    EXPECT(aclrtMemcpy(NULL, 10, host_in, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
           "dst");
    EXPECT(aclrtMemcpy(dev, 10, NULL, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
           "src");
    EXPECT(aclrtMemcpy(dev, 16, host_in, 17, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID,
           "destMax");
    EXPECT(aclrtMemcpy(dev, 16, host_in, 16, (aclrtMemcpyKind)6), ACL_ERROR_INVALID_PARAM, "kind");
    EXPECT(aclrtMemcpy(dev, 16, host_in, 16, (aclrtMemcpyKind)-1), ACL_ERROR_INVALID_PARAM, "kind");
    /* Past the end of a device allocation, as destination and as source. */
    EXPECT(aclrtMemcpy(dev + 200, 100, host_in, 100, ACL_MEMCPY_HOST_TO_DEVICE),
           ACL_ERROR_RT_PARAM_INVALID, "past the end");
    EXPECT(aclrtMemcpy(host_out, 300, dev, 289, ACL_MEMCPY_DEVICE_TO_HOST),
           ACL_ERROR_RT_PARAM_INVALID, "past the end");

    /* A round trip through two device buffers, every legal kind. */
    EXPECT_OK(aclrtMemcpy(dev, 256, host_in, 256, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(dev2, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
    memset(host_out, 0, sizeof host_out);
    EXPECT_OK(aclrtMemcpy(host_out, sizeof host_out, dev2, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(host_out, host_in, 256) == 0, "round trip data");
    EXPECT_OK(aclrtMemcpy(host_out, sizeof host_out, host_in, 300, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT_OK(aclrtMemcpy(dev, 288, dev2, 100, ACL_MEMCPY_DEFAULT));
    EXPECT_OK(aclrtMemcpy(dev, 288, host_in, 100, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));
    /* Overlapping copies behave like memmove. */
    EXPECT_OK(aclrtMemcpy(dev + 1, 287, dev, 100, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK(tu_dev_byte(dev, 1) == host_in[0] && tu_dev_byte(dev, 100) == host_in[99], "overlapping copy");

    EXPECT_OK(aclrtMemset(NULL, 0, 0, 0));
    EXPECT(aclrtMemset(NULL, 8, 0, 8), ACL_ERROR_INVALID_PARAM, "devPtr");
    EXPECT(aclrtMemset(dev, 8, 0, 9), ACL_ERROR_RT_PARAM_INVALID, "maxCount");
    EXPECT_OK(aclrtMemset(dev, 288, 0x1FF, 288)); /* the low byte of value fills */
    CHECK(tu_dev_byte(dev, 0) == 0xFF && tu_dev_byte(dev, 287) == 0xFF, "memset value");

    /* Async variants check the same things when called. */
    EXPECT(aclrtMemcpyAsync(dev, 16, host_in, 17, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
           ACL_ERROR_RT_PARAM_INVALID, "destMax");
    EXPECT(aclrtMemcpyAsync(dev + 280, 16, host_in, 16, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
           ACL_ERROR_RT_PARAM_INVALID, "past the end");
    EXPECT(aclrtMemcpyAsync(host_out, 16, host_in, 16, ACL_MEMCPY_HOST_TO_HOST, NULL),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "HOST_TO_HOST");
    EXPECT(aclrtMemsetAsync(dev, 8, 0, 9, NULL), ACL_ERROR_RT_PARAM_INVALID, "maxCount");
    EXPECT(aclrtMemsetAsync(dev, 16, 0, 16, (aclrtStream)host_out), ACL_ERROR_INVALID_PARAM,
           "stream");
    unsigned char *pinned = NULL; /* aclrtMemcpyAsync's host side: aclrtMallocHost memory */
    EXPECT_OK(aclrtMallocHost((void **)&pinned, 256));
    memcpy(pinned, host_in, 256);
    EXPECT_OK(aclrtMemcpyAsync(dev, 288, pinned, 256, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(host_out, sizeof host_out, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(host_out, host_in, 256) == 0, "async copy on the default stream");
    EXPECT_OK(aclrtFreeHost(pinned));

    EXPECT_OK(aclrtFree(dev));
    EXPECT_OK(aclrtFree(dev2));
}

/* Whether the n bytes at p all equal value. */
static bool all_bytes_are(const unsigned char *p, size_t n, unsigned char value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            return false;
    return true;
}

/* Large copies go over the thread pool in chunks (streamed from 16 MiB on); overlapping ones
 * stay one memmove.  Odd sizes and offsets so that chunk ends and the tail fall mid-line. */
static void test_large_copies(void)
{
    /* The device buffers are read and written with aclrtMemcpy/aclrtMemset only (device memory
     * is not host memory); host_src and seen are the host's copies. */
    const size_t size = ((size_t)20 << 20) + 13;
    unsigned char *src = NULL, *dst = NULL;
    unsigned char *host_src = malloc(size), *seen = malloc(size);
    EXPECT_OK(aclrtMalloc((void **)&src, size, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMalloc((void **)&dst, size, ACL_MEM_MALLOC_HUGE_FIRST));
    for (size_t i = 0; i < size; i++)
        host_src[i] = (unsigned char)(i * 131 + (i >> 20));
    EXPECT_OK(aclrtMemcpy(src, size, host_src, size, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemset(dst, size, 0, size));
    EXPECT_OK(aclrtMemcpy(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(seen, host_src, size) == 0, "20 MiB + 13 copy");

    const size_t mid = ((size_t)5 << 20) + 7;
    EXPECT_OK(aclrtMemset(dst, size, 0xAB, size));
    EXPECT_OK(aclrtMemcpy(dst + 3, size - 3, src + 5, mid, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(seen + 3, host_src + 5, mid) == 0, "5 MiB copy at odd offsets");
    CHECK(seen[2] == 0xAB && seen[3 + mid] == 0xAB, "bytes around a large copy untouched");

    /* overlapping, forwards by one byte: memmove semantics */
    EXPECT_OK(aclrtMemcpy(dst, size, host_src, size, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(dst + 1, size - 1, dst, mid, ACL_MEMCPY_DEVICE_TO_DEVICE));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(seen + 1, host_src, mid) == 0 && seen[0] == host_src[0], "large overlapping copy");

    EXPECT_OK(aclrtMemset(dst, size, 0, size));
    EXPECT_OK(aclrtMemcpyAsync(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_DEVICE, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(memcmp(seen, host_src, size) == 0, "large async copy");

    /* large fills (split over the pool like copies), at an odd offset, sync and async */
    EXPECT_OK(aclrtMemset(dst, size, 0xAB, size));
    EXPECT_OK(aclrtMemset(dst + 3, size - 3, 0x5C, mid));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(all_bytes_are(seen + 3, mid, 0x5C), "5 MiB fill at an odd offset");
    CHECK(seen[2] == 0xAB && seen[3 + mid] == 0xAB, "bytes around a large fill untouched");
    EXPECT_OK(aclrtMemsetAsync(dst, size, 0x11, size, NULL));
    EXPECT_OK(aclrtSynchronizeStream(NULL));
    EXPECT_OK(aclrtMemcpy(seen, size, dst, size, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(all_bytes_are(seen, size, 0x11), "large async fill");
    EXPECT_OK(aclrtFree(src));
    EXPECT_OK(aclrtFree(dst));
    free(host_src);
    free(seen);
}

/* Blocks of 2 MiB and more under a huge-page policy start on a 2 MiB boundary (they are advised
 * for transparent huge pages); the usable size rule and the registry do not change. */
static void test_page_policies(void)
{
    const size_t size = ((size_t)3 << 20) + 5, usable = (size + 31) / 32 * 32 + 32;
    static const unsigned huge_policies[] = {
        ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_HUGE_FIRST_P2P,
        ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_HUGE1G_ONLY, 12345,
        ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_LOW_BAND_WIDTH};
    for (size_t i = 0; i < sizeof huge_policies / sizeof huge_policies[0]; i++) {
        unsigned char *p = NULL;
        EXPECT_OK(aclrtMalloc((void **)&p, size, (aclrtMemMallocPolicy)huge_policies[i]));
        CHECK(((uintptr_t)p % ((uintptr_t)2 << 20)) == 0, "huge-page policy: 2 MiB aligned");
        EXPECT_OK(aclrtMemset(p, usable, 0x5A, usable));
        CHECK(tu_dev_byte(p, 0) == 0x5A && tu_dev_byte(p, usable - 1) == 0x5A,
              "huge-page block written end to end");
        EXPECT(aclrtMemset(p, usable + 1, 0x5A, usable + 1), ACL_ERROR_RT_PARAM_INVALID,
               "past the end");
        EXPECT_OK(aclrtFree(p));
    }
    static const unsigned normal_policies[] = {ACL_MEM_MALLOC_NORMAL_ONLY,
                                               ACL_MEM_MALLOC_NORMAL_ONLY_P2P};
    for (size_t i = 0; i < sizeof normal_policies / sizeof normal_policies[0]; i++) {
        unsigned char *p = NULL;
        EXPECT_OK(aclrtMalloc((void **)&p, size, (aclrtMemMallocPolicy)normal_policies[i]));
        CHECK(((uintptr_t)p % 64) == 0, "normal pages: 64-byte aligned");
        EXPECT_OK(aclrtMemset(p, usable, 0x5A, usable));
        EXPECT_OK(aclrtFree(p));
    }
}

static void test_huge_allocation(void)
{
    /* 1 PiB: more than any machine has; must fail cleanly with 207001. */
    void *p = NULL;
    EXPECT(aclrtMalloc(&p, (size_t)1 << 50, ACL_MEM_MALLOC_HUGE_FIRST),
           ACL_ERROR_RT_MEMORY_ALLOCATION, "out of memory");
}

int main(void)
{
    EXPECT_OK(aclInit(NULL));
    test_malloc_rules();
    test_free_rules();
    test_copy_rules();
    test_large_copies();
    test_page_policies();
    if (getenv("ACLNN_TEST_SANITIZE") == NULL) /* ASan's allocator aborts instead of failing */
        test_huge_allocation();
    EXPECT_OK(aclrtResetDevice(0));
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_memory");
}
