/*
 * test_core_copy.c - nn_parallel_for and the strided <-> contiguous copies.
 *
 * Compiles base/parallel.c, base/copy.c and base/cpu.c into this program (their nn_* symbols are
 * hidden in the shared object) and checks them against plain loops written here:
 *   - nn_parallel_for covers [0, n) exactly once with disjoint ranges of at least `grain`
 *     (except the last), for many n / grain pairs, also when two threads use the pool at once
 *     and when a range calls nn_parallel_for again (nested: runs inline)
 *   - nn_copy_to_contiguous / nn_copy_from_contiguous for element sizes 1, 2, 4, 8, 16 over
 *     random views (permuted, sliced, zero and negative strides, size-1 and size-0 dims) and a
 *     few views large enough to take the parallel path; the destination storage of a
 *     from_contiguous copy is pre-filled so that stray writes are caught.
 */
#include "../../libaclnn/src/base/parallel.c" /* first: it defines _GNU_SOURCE */
#include "../../libaclnn/src/base/copy.c"
#include "../../libaclnn/src/base/cpu.c" /* the CPU table copy.c chooses by */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rand_range(int64_t lo, int64_t hi) { return lo + (int64_t)(next_random() % (uint64_t)(hi - lo + 1)); }

/* ---- parallel_for ---------------------------------------------------------------------------- */

typedef struct {
    int64_t n, grain;
    _Atomic int *hits;
    _Atomic int64_t short_ranges;  /* ranges shorter than grain that do not end at n */
    _Atomic int64_t calls;
    bool nest;
} cover_ctx;

static void nested_range(void *ctx, int64_t begin, int64_t end);

static void cover_range(void *ctx, int64_t begin, int64_t end)
{
    cover_ctx *c = ctx;
    c->calls++;
    if (end - begin < c->grain && end != c->n)
        c->short_ranges++;
    for (int64_t i = begin; i < end; i++)
        c->hits[i]++;
    if (c->nest) {
        int inner[64] = {0};
        nn_parallel_for(64, 1, nested_range, inner);
        for (int i = 0; i < 64; i++)
            if (inner[i] != 1)
                c->short_ranges += 1000000; /* flagged below */
    }
}

static void nested_range(void *ctx, int64_t begin, int64_t end)
{
    int *inner = ctx;
    for (int64_t i = begin; i < end; i++)
        inner[i]++;
}

static void check_cover(int64_t n, int64_t grain, bool nest)
{
    cover_ctx c = {.n = n, .grain = grain, .nest = nest};
    c.hits = calloc((size_t)(n > 0 ? n : 1), sizeof *c.hits);
    nn_parallel_for(n, grain, cover_range, &c);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += c.hits[i] != 1;
    CHECK(bad == 0, "parallel_for n=%lld grain=%lld: %lld indices not hit exactly once", (long long)n,
          (long long)grain, (long long)bad);
    CHECK(c.short_ranges == 0, "parallel_for n=%lld grain=%lld: range shorter than grain (or nested failure)",
          (long long)n, (long long)grain);
    if (n <= grain || n <= 0)
        CHECK(c.calls == (n > 0), "parallel_for n=%lld grain=%lld: %lld calls, want inline",
              (long long)n, (long long)grain, (long long)c.calls);
    free(c.hits);
}

static void *concurrent_user(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++)
        check_cover(1000 + i, 7, false);
    return NULL;
}

static void test_parallel_for(void)
{
    CHECK(nn_num_threads() == 4, "ACLNN_NUM_THREADS=4 gives %d threads", nn_num_threads());
    int64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4097, 100003};
    int64_t grains[] = {0, 1, 2, 3, 16, 1000, 5000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof grains / sizeof grains[0]; j++)
            check_cover(sizes[i], grains[j], false);
    check_cover(1000, 10, true); /* nested calls run inline */
    for (int rep = 0; rep < 300; rep++)     /* many small jobs back to back: no lost wake-ups */
        check_cover(rand_range(2, 50), 1, false);
    pthread_t other;
    pthread_create(&other, NULL, concurrent_user, NULL);
    concurrent_user(NULL);
    pthread_join(other, NULL);
}

/* ---- copies ---------------------------------------------------------------------------------- */

typedef struct {
    uint64_t ndim;
    int64_t dims[6];
    int64_t strides[6];
    int64_t offset;   /* in elements, from the storage start */
    int64_t storage;  /* storage elements */
    int64_t numel;
} view;

/* A random view: contiguous strides of a padded shape, then permuted / negated / zeroed. */
static void random_view(view *v, int64_t max_numel)
{
    v->ndim = (uint64_t)rand_range(0, 5);
    v->numel = 1;
    for (uint64_t d = 0; d < v->ndim; d++) {
        int64_t limit = v->numel > 0 ? max_numel / v->numel : 9;
        v->dims[d] = rand_range(0, 6) == 0 ? 1 : rand_range(1, limit < 9 ? (limit > 1 ? limit : 1) : 9);
        if (rand_range(0, 40) == 0)
            v->dims[d] = 0;
        v->numel *= v->dims[d];
    }
    /* padded row-major strides */
    int64_t step = 1;
    for (uint64_t d = v->ndim; d-- > 0;) {
        v->strides[d] = step;
        step *= v->dims[d] + rand_range(0, 2);
    }
    /* shuffle strides between dims (transposes) */
    for (uint64_t d = v->ndim; d > 1; d--) {
        uint64_t k = (uint64_t)rand_range(0, (int64_t)d - 1);
        int64_t t = v->strides[d - 1];
        v->strides[d - 1] = v->strides[k];
        v->strides[k] = t;
    }
    for (uint64_t d = 0; d < v->ndim; d++) {
        int r = (int)rand_range(0, 9);
        if (r == 0)
            v->strides[d] = 0;       /* broadcast */
        else if (r == 1)
            v->strides[d] = -v->strides[d]; /* reversed */
    }
    int64_t lo = 0, hi = 0;
    for (uint64_t d = 0; d < v->ndim; d++) {
        int64_t reach = v->dims[d] > 0 ? v->strides[d] * (v->dims[d] - 1) : 0;
        if (reach > 0) hi += reach; else lo += reach;
    }
    v->offset = -lo + rand_range(0, 3);
    v->storage = v->offset + hi + 1 + rand_range(0, 3);
}

/* Element i (row-major over the view) -> storage index. */
static int64_t storage_index(const view *v, int64_t i)
{
    int64_t index = v->offset;
    for (uint64_t d = v->ndim; d-- > 0;) {
        index += (i % v->dims[d]) * v->strides[d];
        i /= v->dims[d];
    }
    return index;
}

static void fill_random(unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)next_random();
}

static void check_copy(const view *v, size_t es)
{
    size_t storage_bytes = (size_t)v->storage * es;
    size_t numel = (size_t)v->numel;
    unsigned char *storage = malloc(storage_bytes + 1);
    unsigned char *expect_storage = malloc(storage_bytes + 1);
    unsigned char *contig = malloc(numel * es + 1);
    unsigned char *expect = malloc(numel * es + 1);
    fill_random(storage, storage_bytes);

    /* to_contiguous */
    for (size_t i = 0; i < numel; i++)
        memcpy(expect + i * es, storage + storage_index(v, (int64_t)i) * (int64_t)es, es);
    memset(contig, 0, numel * es);
    nn_copy_to_contiguous(contig, storage + v->offset * (int64_t)es, es, v->ndim, v->dims, v->strides);
    CHECK(memcmp(contig, expect, numel * es) == 0, "to_contiguous ndim=%llu es=%zu numel=%zu",
          (unsigned long long)v->ndim, es, numel);

    /* from_contiguous: last write in row-major order wins where elements alias */
    fill_random(contig, numel * es);
    memcpy(expect_storage, storage, storage_bytes);
    for (size_t i = 0; i < numel; i++)
        memcpy(expect_storage + storage_index(v, (int64_t)i) * (int64_t)es, contig + i * es, es);
    nn_copy_from_contiguous(storage + v->offset * (int64_t)es, contig, es, v->ndim, v->dims, v->strides);
    CHECK(memcmp(storage, expect_storage, storage_bytes) == 0,
          "from_contiguous ndim=%llu es=%zu numel=%zu dims=[%lld,%lld,%lld,%lld,%lld] strides=[%lld,%lld,%lld,%lld,%lld]",
          (unsigned long long)v->ndim, es, numel, (long long)v->dims[0], (long long)v->dims[1],
          (long long)v->dims[2], (long long)v->dims[3], (long long)v->dims[4], (long long)v->strides[0],
          (long long)v->strides[1], (long long)v->strides[2], (long long)v->strides[3], (long long)v->strides[4]);
    free(storage);
    free(expect_storage);
    free(contig);
    free(expect);
}

static void test_copies(void)
{
    size_t sizes[] = {1, 2, 4, 8, 16};
    for (int rep = 0; rep < 3000; rep++) {
        view v;
        random_view(&v, 2000);
        check_copy(&v, sizes[rep % 5]);
    }
    /* large views: the parallel path (>= 1 MiB) */
    for (int rep = 0; rep < 10; rep++) {
        view v = {.ndim = 3, .dims = {64, 96, 50}};
        if (rep % 2 == 0) { /* transposed: inner stride != 1 */
            v.strides[0] = 96 * 50; v.strides[1] = 1; v.strides[2] = 96;
        } else {            /* padded rows: memcpy rows */
            v.strides[0] = 100 * 52; v.strides[1] = 52; v.strides[2] = 1;
        }
        if (rep >= 6) /* aliasing writes: rows overlap, must stay serial */
            v.strides[0] = 3;
        int64_t hi = 0;
        for (int d = 0; d < 3; d++)
            hi += v.strides[d] * (v.dims[d] - 1);
        v.numel = 64 * 96 * 50;
        v.offset = rep;
        v.storage = v.offset + hi + 1;
        check_copy(&v, sizes[rep % 5]);
    }
}

int main(void)
{
    setenv("ACLNN_NUM_THREADS", "4", 1);
    test_parallel_for();
    test_copies();
    printf("copy/parallel: %d failures\n", failures);
    return failures != 0;
}
