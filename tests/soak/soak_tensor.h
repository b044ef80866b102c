/*
 * soak_tensor.h - the soak's tensors (tests/soak/soak.c): a view (shape, strides, offset, in
 * elements) over a storage that lives twice, on the device (aclrtMalloc) and in a pinned staging
 * buffer (aclrtMallocHost) that the asynchronous copies move in and out.  Layouts are drawn at
 * random: contiguous, dimensions stored in another order, gaps between rows and planes, an
 * offset into the storage.  Storage bytes outside an output's view hold SENTINEL, which the
 * check after the run expects to find unchanged (an operator writes its view and nothing else).
 */
#ifndef TESTS_SOAK_TENSOR_H
#define TESTS_SOAK_TENSOR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "base/nn_half_impl.h"

#define SOAK_MAX_RANK 4
#define SENTINEL 0x5a

typedef struct {
    uint64_t state;
} soak_rng;

static inline uint64_t rng_next(soak_rng *r)
{
    r->state ^= r->state << 13; /* xorshift64 */
    r->state ^= r->state >> 7;
    r->state ^= r->state << 17;
    return r->state;
}

/* A whole number in [lo, hi]. */
static inline int64_t rng_range(soak_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

typedef struct {
    aclDataType dtype;
    int rank;
    int64_t shape[SOAK_MAX_RANK];
    int64_t strides[SOAK_MAX_RANK];
    int64_t offset;
    int64_t storage; /* elements */
    size_t elem;     /* bytes per element */
    int is_output;
    void *dev;
    void *host;
    aclTensor *t;
} soak_tensor;

static inline size_t dtype_size(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT: case ACL_INT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: return 2;
    case ACL_INT64: return 8;
    default: return 1;
    }
}

static inline int64_t tensor_numel(const soak_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

/* The storage element of the view's flat (row-major) index. */
static inline int64_t storage_pos(const soak_tensor *t, int64_t flat)
{
    int64_t pos = t->offset;
    for (int i = t->rank - 1; i >= 0; i--) {
        pos += (flat % t->shape[i]) * t->strides[i];
        flat /= t->shape[i];
    }
    return pos;
}

static inline double load_elem(const soak_tensor *t, int64_t pos)
{
    const unsigned char *p = (const unsigned char *)t->host + (size_t)pos * t->elem;
    uint16_t h;
    switch (t->dtype) {
    case ACL_FLOAT: { float f; memcpy(&f, p, 4); return f; }
    case ACL_FLOAT16: memcpy(&h, p, 2); return nn_half_f16_to_f32(h);
    case ACL_BF16: memcpy(&h, p, 2); return nn_half_bf16_to_f32(h);
    case ACL_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ACL_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return (int8_t)*p;
    }
}

/* The value as the tensor's dtype holds it (round to nearest even, as the kernels cast). */
static inline double round_to(aclDataType dtype, double v)
{
    if (dtype == ACL_FLOAT16)
        return nn_half_f16_to_f32(nn_half_f32_to_f16((float)v));
    if (dtype == ACL_BF16)
        return nn_half_bf16_to_f32(nn_half_f32_to_bf16((float)v));
    return (float)v;
}

static inline void store_elem(soak_tensor *t, int64_t pos, double v)
{
    unsigned char *p = (unsigned char *)t->host + (size_t)pos * t->elem;
    uint16_t h;
    float f = (float)v;
    switch (t->dtype) {
    case ACL_FLOAT: memcpy(p, &f, 4); break;
    case ACL_FLOAT16: h = nn_half_f32_to_f16(f); memcpy(p, &h, 2); break;
    case ACL_BF16: h = nn_half_f32_to_bf16(f); memcpy(p, &h, 2); break;
    default: break; /* index tensors are written by operators only */
    }
}

/* Strides for the shape: dimensions stored in a random order, each with a random gap after it
 * (or none, `dense`), and a random offset. */
static inline void draw_layout(soak_tensor *t, soak_rng *r, int dense)
{
    int order[SOAK_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
        order[i] = i;
    if (!dense && rng_range(r, 0, 2) == 0)
        for (int i = t->rank - 1; i > 0; i--) {
            int j = (int)rng_range(r, 0, i), tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
    int64_t stride = dense ? 1 : rng_range(r, 1, 2);
    for (int k = t->rank - 1; k >= 0; k--) {
        int dim = order[k];
        t->strides[dim] = stride;
        stride *= t->shape[dim] + (dense ? 0 : rng_range(r, 0, 1));
    }
    t->offset = dense ? 0 : rng_range(r, 0, 3);
    int64_t last = t->offset;
    for (int i = 0; i < t->rank; i++)
        last += (t->shape[i] - 1) * t->strides[i];
    t->storage = last + 1;
}

/* Makes the device storage, its pinned staging (SENTINEL bytes) and the aclTensor. */
static inline int make_tensor(soak_tensor *t, aclDataType dtype, int rank, const int64_t *shape, soak_rng *r,
                              int dense, int is_output)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->elem = dtype_size(dtype);
    t->is_output = is_output;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)rank);
    draw_layout(t, r, dense);
    size_t bytes = (size_t)t->storage * t->elem;
    if (aclrtMalloc(&t->dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMallocHost(&t->host, bytes) != ACL_SUCCESS)
        return -1;
    memset(t->host, SENTINEL, bytes);
    int64_t storage_dims[1] = {t->storage};
    t->t = aclCreateTensor(t->shape, (uint64_t)rank, dtype, t->strides, t->offset, ACL_FORMAT_ND, storage_dims, 1,
                           t->dev);
    return t->t == NULL ? -1 : 0;
}

static inline void free_tensor(soak_tensor *t)
{
    if (t->t != NULL)
        aclDestroyTensor(t->t);
    if (t->dev != NULL)
        aclrtFree(t->dev);
    if (t->host != NULL)
        aclrtFreeHost(t->host);
    memset(t, 0, sizeof *t);
}

/* Small multiples of 1/8 (exact in every float dtype and in short sums), never 0. */
static inline void fill_random(soak_tensor *t, soak_rng *r)
{
    for (int64_t i = 0, n = tensor_numel(t); i < n; i++) {
        int64_t v = rng_range(r, -64, 63);
        store_elem(t, storage_pos(t, i), (double)(v >= 0 ? v + 1 : v) / 8.0);
    }
}

#endif /* TESTS_SOAK_TENSOR_H */
