/*
 * copy.c - strided <-> contiguous copies (the "Contiguous" and "ViewCopy" steps of CANN).
 *
 * The view is first simplified: size-1 dimensions are dropped and neighbours that are laid out
 * back to back (stride[i] == stride[i+1] * dim[i+1]) are merged, so a contiguous or
 * row-sliced view becomes one or two dimensions.  The innermost dimension is then a "row":
 * copied with memcpy when its stride is 1, element by element otherwise.  Large copies split
 * their rows over the thread pool.  Strides may be zero (broadcast reads) or negative.
 *
 * Writing through a view whose elements overlap (a zero stride, or rows that interleave) keeps
 * the last write in row-major order: such copies run on one thread so the result is
 * reproducible.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_base.h"

/* Parallelise only copies of at least this many bytes, in pieces of at least this many. */
#define NN_COPY_PARALLEL_BYTES (1 << 20)
#define NN_COPY_GRAIN_BYTES (256 << 10)

typedef struct {
    int ndim;                   /* after simplification, >= 1 */
    int64_t dims[NN_MAX_DIMS];
    int64_t strides[NN_MAX_DIMS];
} view_shape;

/* Drops size-1 dims and merges back-to-back dims; returns false for an empty view. */
static bool simplify_view(uint64_t ndim, const int64_t *dims, const int64_t *strides, view_shape *out)
{
    int count = 0;
    for (uint64_t i = 0; i < ndim; i++) {
        if (dims[i] == 0)
            return false;
        if (dims[i] == 1)
            continue;
        if (count > 0 && out->strides[count - 1] == strides[i] * dims[i]) {
            out->dims[count - 1] *= dims[i];
            out->strides[count - 1] = strides[i];
            continue;
        }
        out->dims[count] = dims[i];
        out->strides[count] = strides[i];
        count++;
    }
    if (count == 0) { /* one element */
        out->dims[0] = 1;
        out->strides[0] = 1;
        count = 1;
    }
    out->ndim = count;
    return true;
}

typedef struct {
    char *contig;          /* the contiguous buffer */
    char *strided;         /* the strided view's first element */
    size_t elem_size;
    const view_shape *view;
    bool to_contiguous;    /* direction */
} copy_job;

/* Copies one row of `count` elements between contiguous `c` and strided `s` (stride in elements). */
static void copy_row(const copy_job *job, char *c, char *s, int64_t count, int64_t stride)
{
    size_t es = job->elem_size;
    if (stride == 1) {
        if (job->to_contiguous)
            memcpy(c, s, (size_t)count * es);
        else
            memcpy(s, c, (size_t)count * es);
        return;
    }
    int64_t step = stride * (int64_t)es;
#define NN_COPY_LOOP(T)                                                                   \
    do {                                                                                  \
        T *cp = (T *)(void *)c;                                                           \
        if (job->to_contiguous)                                                           \
            for (int64_t i = 0; i < count; i++)                                           \
                memcpy(&cp[i], s + i * step, sizeof(T));                                  \
        else                                                                              \
            for (int64_t i = 0; i < count; i++)                                           \
                memcpy(s + i * step, &cp[i], sizeof(T));                                  \
    } while (0)
    switch (es) {
    case 1: NN_COPY_LOOP(uint8_t); break;
    case 2: NN_COPY_LOOP(uint16_t); break;
    case 4: NN_COPY_LOOP(uint32_t); break;
    case 8: NN_COPY_LOOP(uint64_t); break;
    default: {
        typedef struct { unsigned char b[16]; } elem16;
        NN_COPY_LOOP(elem16);
        break;
    }
    }
#undef NN_COPY_LOOP
}

/* Copies rows [begin, end) (row = index over all dims but the last). */
static void copy_rows(void *ctx, int64_t begin, int64_t end)
{
    const copy_job *job = ctx;
    const view_shape *v = job->view;
    int last = v->ndim - 1;
    int64_t row_len = v->dims[last];
    int64_t row_stride = v->strides[last];
    size_t es = job->elem_size;

    /* Odometer over the outer dims, started at `begin`. */
    int64_t index[NN_MAX_DIMS];
    int64_t offset = 0;
    int64_t rest = begin;
    for (int d = last - 1; d >= 0; d--) {
        index[d] = rest % v->dims[d];
        rest /= v->dims[d];
        offset += index[d] * v->strides[d];
    }
    for (int64_t row = begin; row < end; row++) {
        copy_row(job, job->contig + (size_t)(row * row_len) * es, job->strided + offset * (int64_t)es,
                 row_len, row_stride);
        for (int d = last - 1; d >= 0; d--) {
            offset += v->strides[d];
            if (++index[d] < v->dims[d])
                break;
            offset -= index[d] * v->strides[d];
            index[d] = 0;
        }
    }
}

/* True when no two elements of the view share an address: sorted by |stride|, each stride
 * must step over everything the smaller dims span.  (A sufficient test; views it rejects are
 * merely copied on one thread.) */
static bool view_is_non_overlapping(const view_shape *v)
{
    int order[NN_MAX_DIMS];
    for (int i = 0; i < v->ndim; i++)
        order[i] = i;
    for (int i = 1; i < v->ndim; i++) { /* insertion sort by |stride| */
        int key = order[i], j = i - 1;
        while (j >= 0 && llabs(v->strides[order[j]]) > llabs(v->strides[key])) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = key;
    }
    int64_t span = 0; /* elements reachable by the smaller dims, minus one */
    for (int i = 0; i < v->ndim; i++) {
        int64_t stride = llabs(v->strides[order[i]]);
        if (stride <= span)
            return false;
        span += stride * (v->dims[order[i]] - 1);
    }
    return true;
}

static void strided_copy(char *contig, char *strided, size_t elem_size, uint64_t ndim,
                         const int64_t *dims, const int64_t *strides, bool to_contiguous)
{
    view_shape view;
    if (!simplify_view(ndim, dims, strides, &view))
        return;
    copy_job job = {contig, strided, elem_size, &view, to_contiguous};
    int last = view.ndim - 1;
    int64_t rows = 1;
    for (int d = 0; d < last; d++)
        rows *= view.dims[d];
    int64_t row_bytes = view.dims[last] * (int64_t)elem_size;
    int64_t total_bytes = rows * row_bytes;

    bool overlapping_writes = !to_contiguous && !view_is_non_overlapping(&view);

    if (rows > 1 && total_bytes >= NN_COPY_PARALLEL_BYTES && !overlapping_writes) {
        int64_t grain = NN_COPY_GRAIN_BYTES / (row_bytes > 0 ? row_bytes : 1);
        nn_parallel_for(rows, grain > 0 ? grain : 1, copy_rows, &job);
    } else {
        copy_rows(&job, 0, rows);
    }
}

void nn_copy_to_contiguous(void *dst, const void *src, size_t elem_size, uint64_t ndim,
                           const int64_t *dims, const int64_t *strides)
{
    strided_copy(dst, (char *)(uintptr_t)src, elem_size, ndim, dims, strides, true);
}

void nn_copy_from_contiguous(void *dst, const void *src, size_t elem_size, uint64_t ndim,
                             const int64_t *dims, const int64_t *strides)
{
    strided_copy((char *)(uintptr_t)src, dst, elem_size, ndim, dims, strides, false);
}

/* ------------------------------------------------------------------------------------------ */
/* Streaming (non-temporal) stores for large outputs                                           */
/* ------------------------------------------------------------------------------------------ */
/*
 * Why: an ordinary store to a line that is not in cache first reads the line from memory
 * ("read for ownership"), then writes it back when evicted, so a kernel that writes a big
 * output once moves its bytes over the bus twice.  A non-temporal store goes to a write-
 * combining buffer and writes whole lines straight to memory: no read, and the output does not
 * evict the kernel's inputs from the caches.  For a memory-bound kernel that writes as many
 * bytes as it reads (a pad, a backward gather) that is up to 1/3 less traffic.  It is a loss
 * for small outputs that the caller will read back from cache, hence the size threshold.
 *
 * The copies below are bit copies, so results are identical with and without streaming.
 * Non-temporal stores are weakly ordered: a kernel range that used them must end with
 * nn_streaming_fence() before it reports completion (the thread pool's hand-off then publishes
 * the data as usual).
 */
#if defined(__x86_64__) /* SSE2 is part of the x86-64 baseline */
#include <immintrin.h>
#define NN_HAVE_X86_STREAM 1
#else
#define NN_HAVE_X86_STREAM 0
#endif

/* Outputs of at least this many bytes are streamed: well beyond what a core's L2 and its share
 * of the L3 can hold, so the caller could not have read them back from cache anyway. */
#define NN_STREAMING_THRESHOLD_BYTES ((uint64_t)16 << 20)

/* -1: decide by size; 0: never stream; 1: always stream (ACLNN_STREAMING_STORES, read once). */
static int streaming_override(void)
{
    static _Atomic int cached = -2;
    int value = atomic_load_explicit(&cached, memory_order_relaxed);
    if (value != -2)
        return value;
    const char *env = getenv("ACLNN_STREAMING_STORES");
    value = -1;
    if (env && env[0] == '0' && env[1] == '\0')
        value = 0;
    else if (env && env[0] == '1' && env[1] == '\0')
        value = 1;
    atomic_store_explicit(&cached, value, memory_order_relaxed);
    return value;
}

bool nn_use_streaming_stores(uint64_t output_bytes)
{
    const int forced = streaming_override();
    if (forced >= 0)
        return forced == 1 && NN_HAVE_X86_STREAM;
    return NN_HAVE_X86_STREAM && output_bytes >= NN_STREAMING_THRESHOLD_BYTES;
}

/* The last-level cache of CPU 0 in bytes, as Linux's sysfs reports it (the cache one core
 * shares, e.g. one CCD's L3 on an AMD EPYC, where cpuid-based counts can report the socket's
 * total); 0 when unknown.  Read once. */
uint64_t nn_last_level_cache_bytes(void)
{
    static _Atomic int64_t cached = -1;
    int64_t bytes = atomic_load_explicit(&cached, memory_order_relaxed);
    if (bytes >= 0)
        return (uint64_t)bytes;
    bytes = 0;
    for (int index = 3; index >= 2 && bytes == 0; --index) {
        char path[64], text[32] = {0};
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        FILE *file = fopen(path, "r");
        if (file == NULL)
            continue;
        if (fgets(text, sizeof text, file) != NULL) {
            char *unit = NULL;
            const long long value = strtoll(text, &unit, 10);
            const int64_t scale = unit && *unit == 'K' ? 1024 : unit && *unit == 'M' ? 1024 * 1024 : 1;
            if (value > 0 && value < ((int64_t)1 << 40) / scale)
                bytes = (int64_t)value * scale;
        }
        fclose(file);
    }
    atomic_store_explicit(&cached, bytes, memory_order_relaxed);
    return (uint64_t)bytes;
}

bool nn_use_streaming_stores_past_cache(uint64_t output_bytes)
{
    /* ACLNN_STREAMING_STORES still decides alone when set */
    return nn_use_streaming_stores(output_bytes) &&
           (streaming_override() >= 0 || output_bytes >= 2 * nn_last_level_cache_bytes());
}

#if NN_HAVE_X86_STREAM
/* Each variant: ordinary stores up to the first `align`-byte boundary of dst (non-temporal
 * stores need aligned addresses), non-temporal stores for the aligned middle, memcpy for the
 * tail.  Loads are unaligned, so src may have any alignment. */
__attribute__((target("avx512f"))) static void copy_row_nt_avx512(unsigned char *d, const unsigned char *s,
                                                                  size_t n)
{
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    head = head > n ? n : head;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 256; n -= 256, d += 256, s += 256) {
        __m512i a = _mm512_loadu_si512((const void *)s);
        __m512i b = _mm512_loadu_si512((const void *)(s + 64));
        __m512i c = _mm512_loadu_si512((const void *)(s + 128));
        __m512i e = _mm512_loadu_si512((const void *)(s + 192));
        _mm512_stream_si512((void *)d, a);
        _mm512_stream_si512((void *)(d + 64), b);
        _mm512_stream_si512((void *)(d + 128), c);
        _mm512_stream_si512((void *)(d + 192), e);
    }
    for (; n >= 64; n -= 64, d += 64, s += 64)
        _mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
    memcpy(d, s, n);
}

__attribute__((target("avx"))) static void copy_row_nt_avx(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t head = (32 - ((uintptr_t)d & 31)) & 31;
    head = head > n ? n : head;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 128; n -= 128, d += 128, s += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_stream_si256((__m256i *)d, a);
        _mm256_stream_si256((__m256i *)(d + 32), b);
        _mm256_stream_si256((__m256i *)(d + 64), c);
        _mm256_stream_si256((__m256i *)(d + 96), e);
    }
    for (; n >= 32; n -= 32, d += 32, s += 32)
        _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
    memcpy(d, s, n);
}

static void copy_row_nt_sse2(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    head = head > n ? n : head;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    for (; n >= 16; n -= 16, d += 16, s += 16)
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    memcpy(d, s, n);
}

typedef void (*copy_row_nt_fn)(unsigned char *d, const unsigned char *s, size_t n);

/* Picked once from the CPU table (cpu.c): the widest stores the CPU has and the environment
 * allows (SSE2, x86-64's baseline, under ACLNN_NO_SIMD=1). */
static copy_row_nt_fn pick_copy_row_nt(void)
{
    static _Atomic(copy_row_nt_fn) chosen; /* starts NULL (static); clang 14 rejects "= NULL" here */
    copy_row_nt_fn fn = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (fn)
        return fn;
    const nn_cpu_features *cpu = nn_cpu_features_get();
    fn = cpu->avx512 ? copy_row_nt_avx512 : cpu->avx ? copy_row_nt_avx : copy_row_nt_sse2;
    atomic_store_explicit(&chosen, fn, memory_order_relaxed);
    return fn;
}
#endif

void nn_copy_row_nt(void *dst, const void *src, size_t bytes)
{
#if NN_HAVE_X86_STREAM
    /* Below a few lines the alignment head/tail dominate: ordinary stores. */
    if (bytes < 256) {
        memcpy(dst, src, bytes);
        return;
    }
    pick_copy_row_nt()((unsigned char *)dst, (const unsigned char *)src, bytes);
#else
    memcpy(dst, src, bytes);
#endif
}

void nn_streaming_fence(void)
{
#if NN_HAVE_X86_STREAM
    _mm_sfence();
#endif
}
