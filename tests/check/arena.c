/*
 * arena.c - memcheck's device memory at scale (tests/test_check_arena.py); argv[1] names the case:
 *   many N       N live 64-byte allocations, one in 64 written and read back by copies (a page
 *                each under memcheck: touching all would hold N pages); then a plain mmap works
 *   huge         aclrtMalloc of 16 TiB: prints the status and the message
 *   align        blocks of 2 MiB and more start on 2 MiB boundaries; no two blocks overlap
 *   past_end     a host read past the end of a 100-byte allocation (inside its last page)
 *   free_queued  aclrtFree of a 300 MiB block an asynchronous fill still writes, then new blocks
 *   loop N       N rounds of allocate, copy in, Prelu, synchronize, copy out, free; prints the
 *                median microseconds of a round
 *   sites        allocations from two call sites at one stack depth, alternately, the last of
 *                each left to leakcheck: each report must name its own site (stacks are reused
 *                from a per-thread cache when the same calls are made again)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "acl/acl.h"
#include "check_prelu.h"
#include "check_program.h"

static int many(aclrtStream stream, const char *count_text)
{
    (void)stream;
    if (count_text == NULL)
        return 2;
    const size_t count = (size_t)atoll(count_text);
    void **blocks = calloc(count, sizeof *blocks);
    size_t made = 0, wrong = 0;
    for (; made < count; ++made) {
        if (aclrtMalloc(&blocks[made], 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            printf("aclrtMalloc failed after %zu blocks: %s\n", made, aclGetRecentErrMsg());
            break;
        }
        if (made % 64 != 0)
            continue;
        uint64_t value = made, back = 0;
        aclrtMemcpy(blocks[made], 8, &value, 8, ACL_MEMCPY_HOST_TO_DEVICE);
        aclrtMemcpy(&back, 8, blocks[made], 8, ACL_MEMCPY_DEVICE_TO_HOST);
        wrong += back != value;
    }
    for (size_t i = 0; i < made; i += 64 * (made / 6400 + 1)) { /* the bytes survived the rest */
        uint64_t back = 0;
        aclrtMemcpy(&back, 8, blocks[i], 8, ACL_MEMCPY_DEVICE_TO_HOST);
        wrong += back != i;
    }
    void *plain = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("live blocks %zu, wrong %zu, mmap after: %s\n", made, wrong,
           plain != MAP_FAILED ? "ok" : "failed");
    while (made > 0)
        aclrtFree(blocks[--made]);
    free(blocks);
    return 0;
}

static int huge(aclrtStream stream, const char *unused)
{
    (void)stream;
    (void)unused;
    void *block = NULL;
    aclError status = aclrtMalloc(&block, (size_t)16 << 40, ACL_MEM_MALLOC_HUGE_FIRST);
    printf("status %d\nmessage %s\n", (int)status, status != ACL_SUCCESS ? aclGetRecentErrMsg() : "");
    if (status == ACL_SUCCESS)
        aclrtFree(block);
    return 0;
}

static int align(aclrtStream stream, const char *unused)
{
    (void)stream;
    (void)unused;
    static const size_t sizes[] = {100, 4096, 5000, (size_t)2 << 20, (3u << 20) + 7, 4096 * 9,
                                   (size_t)64 << 20, 1, (size_t)2 << 20};
    enum { COUNT = sizeof sizes / sizeof sizes[0] };
    void *blocks[COUNT];
    size_t misplaced = 0, overlaps = 0;
    for (size_t i = 0; i < COUNT; ++i) {
        if (aclrtMalloc(&blocks[i], sizes[i], ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            return 1;
        misplaced += sizes[i] >= ((size_t)2 << 20) && (uintptr_t)blocks[i] % ((size_t)2 << 20) != 0;
        aclrtMemset(blocks[i], sizes[i], (int)i + 1, sizes[i]);
    }
    for (size_t i = 0; i < COUNT; ++i) {
        unsigned char first = 0, last = 0;
        aclrtMemcpy(&first, 1, blocks[i], 1, ACL_MEMCPY_DEVICE_TO_HOST);
        aclrtMemcpy(&last, 1, (char *)blocks[i] + sizes[i] - 1, 1, ACL_MEMCPY_DEVICE_TO_HOST);
        overlaps += first != i + 1 || last != i + 1;
    }
    printf("misplaced %zu, overlaps %zu\n", misplaced, overlaps);
    for (size_t i = 0; i < COUNT; ++i)
        aclrtFree(blocks[i]);
    return 0;
}

static int past_end(aclrtStream stream, const char *unused)
{
    (void)stream;
    (void)unused;
    void *block = NULL;
    aclrtMalloc(&block, 100, ACL_MEM_MALLOC_HUGE_FIRST);
    volatile unsigned char *bytes = block;
    printf("read %d\n", bytes[200]); /* past the 128 usable bytes, inside the page */
    return 0;
}

static int free_queued(aclrtStream stream, const char *unused)
{
    (void)unused;
    const size_t size = (size_t)300 << 20;
    void *block = NULL, *next = NULL;
    aclrtMalloc(&block, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemsetAsync(block, size, 0x5a, size, stream);
    aclrtFree(block); /* the fill is still queued or running */
    aclrtMalloc(&next, size, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(next, size, 0x11, size);
    aclrtSynchronizeStream(stream);
    unsigned char back = 0;
    aclrtMemcpy(&back, 1, (char *)next + size - 1, 1, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("survived, next block's last byte 0x%02x\n", back);
    aclrtFree(next);
    return 0;
}

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

/* One round as ported programs make it: fresh device blocks for every call. */
static int prelu_round(aclrtStream stream, const float *in, float *out, int64_t n)
{
    const size_t bytes = (size_t)n * sizeof(float);
    const float slope = 0.25f;
    void *x = NULL, *w = NULL, *y = NULL;
    aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w, sizeof slope, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, bytes, in, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w, sizeof slope, &slope, sizeof slope, ACL_MEMCPY_HOST_TO_DEVICE);
    int rc = check_prelu(x, w, y, n, stream) != ACL_SUCCESS;
    aclrtMemcpy(out, bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtFree(x);
    aclrtFree(w);
    aclrtFree(y);
    return rc;
}

static int loop(aclrtStream stream, const char *rounds_text)
{
    if (rounds_text == NULL)
        return 2;
    const int rounds = atoi(rounds_text);
    enum { N = 256 };
    float in[N], out[N];
    for (int i = 0; i < N; ++i)
        in[i] = (float)(i % 13) - 6.0f;
    double *times = malloc(sizeof(double) * (size_t)rounds);
    for (int r = -1; r < rounds; ++r) { /* round -1 warms up */
        double start = now_us();
        if (prelu_round(stream, in, out, N) != 0) {
            printf("prelu failed: %s\n", aclGetRecentErrMsg());
            return 1;
        }
        if (r >= 0)
            times[r] = now_us() - start;
        for (int i = 0; i < N; ++i)
            if (out[i] != (in[i] > 0 ? in[i] : in[i] * 0.25f)) {
                printf("out[%d] = %g\n", i, out[i]);
                return 1;
            }
    }
    qsort(times, (size_t)rounds, sizeof *times, compare);
    printf("median_us %.3f\n", times[rounds / 2]);
    free(times);
    return 0;
}

/* Not static: a program linked with -rdynamic shows their names in reports. */
void *allocate_at_site_a(void);
void *allocate_at_site_b(void);

void *__attribute__((noinline)) allocate_at_site_a(void)
{
    void *block = NULL;
    aclrtMalloc(&block, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    return block;
}

void *__attribute__((noinline)) allocate_at_site_b(void)
{
    void *block = NULL;
    aclrtMalloc(&block, 96, ACL_MEM_MALLOC_HUGE_FIRST);
    return block;
}

static int sites(aclrtStream stream, const char *unused)
{
    (void)stream;
    (void)unused;
    for (int round = 0; round < 20; ++round) {
        void *a = allocate_at_site_a(), *b = allocate_at_site_b();
        if (round == 19)
            break; /* the last two are leaked on purpose */
        aclrtFree(a);
        aclrtFree(b);
    }
    printf("allocated\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"many", many},       {"huge", huge},   {"align", align},
                                       {"past_end", past_end}, {"free_queued", free_queued},
                                       {"sites", sites},     {"loop", loop}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
