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
#include <stdlib.h>
#include <string.h>

#include "nn_core.h"

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
