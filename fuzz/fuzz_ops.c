/*
 * fuzz_ops.c - libFuzzer target for the ten aclnn operators (phase 1 and phase 2).
 *
 * The fuzz input is decoded into one random call: which operator, the tensors (rank, shape with
 * 0/1/huge/negative dims, dtype, format, strides that may be permuted, padded, negative, zero,
 * overlapping or out of storage, offset, storage shape, device allocation that may be short or
 * NULL), the int arrays (length and values), scalars, NULL or destroyed arguments, the executor mode
 * (normal, repeatable and run twice, consumed and reused, destroyed unused) and the workspace
 * passed to phase 2 (exact, larger, smaller, NULL), and the emulated product (mostly the default
 * Ascend910B; also Ascend910_93, Ascend950, Ascend910, Ascend310P - the last byte read).
 *
 * Properties checked (any violation aborts, which libFuzzer reports as a crash):
 *   - every call returns a status; a failing call leaves a message for aclGetRecentErrMsg;
 *   - a failing phase 1 does not write *executor; a succeeding one returns an executor;
 *   - inputs are never modified; output storage outside the output view is never modified;
 *   - ASan/UBSan find nothing (the library is built into this binary with both);
 *   - when phase 1 and phase 2 succeed, the forward operators' results equal the tiny
 *     references below (pad, upsample, im2col: byte-exact gathers for every dtype; prelu and
 *     max pool values + argmax mask: float32).  The references follow every per-product and
 *     per-format rule the library follows (docs/compatibility.md, "Products" and the operator
 *     sections): UpsampleNearestExact1d reads a self of any format but ND/NCL (and UNDEFINED)
 *     as NLC, [N, L, C] resized along L, and takes the scale's reciprocal in float on
 *     Ascend950; the max-pool argmax stream is the A2/A3 mask (Ascend310P writes the V1 bit
 *     mask: its values alone are compared; Ascend910 computes FLOAT as FLOAT16: not compared).
 * The library runs with ACLNN_STRICT=1, so a tensor whose view does not lie inside its
 * aclrtMalloc allocation must be rejected rather than read.
 *
 *   make fuzz FUZZ_SECONDS=300        (see docs/robustness.md)
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"

#define MAX_RANK 27              /* > NN_MAX_DIMS (25) on purpose */
#define MAX_ALLOC (1u << 20)     /* largest device buffer the fuzzer allocates */
#define MAX_TENSORS 5
#define MAX_ARRAYS 5
#define FILL_BYTE 0xA5

#define FAIL(...)                                                    \
    do {                                                             \
        fprintf(stderr, "fuzz_ops: property violated: " __VA_ARGS__); \
        fprintf(stderr, "\n");                                       \
        abort();                                                     \
    } while (0)

/* ---- input reader: returns zeros once the input is exhausted -------------------------------- */

typedef struct {
    const uint8_t *data;
    size_t size, pos;
} reader;

static uint8_t u8(reader *r) { return r->pos < r->size ? r->data[r->pos++] : 0; }
static uint16_t u16(reader *r) { return (uint16_t)(u8(r) | (u8(r) << 8)); }
static bool coin(reader *r, unsigned one_in) { return u8(r) % one_in == 0; }

/* A dimension-like value: mostly small, sometimes 0, negative or enormous. */
static int64_t special_value(reader *r)
{
    static const int64_t table[] = {0, 1, -1, 2, -2, 7, 64, 1 << 20, INT32_MAX, (int64_t)INT32_MAX + 1,
                                    (int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX, INT64_MIN, INT64_MAX / 2,
                                    -((int64_t)1 << 40)};
    return table[u8(r) % (sizeof table / sizeof table[0])];
}

static int64_t small(reader *r, int64_t lo, int64_t hi) { return lo + (int64_t)(u8(r) % (uint64_t)(hi - lo + 1)); }

/* ---- tensors --------------------------------------------------------------------------------- */

typedef struct {
    bool present;                 /* false: the argument is NULL */
    aclDataType dtype;
    aclFormat format;
    uint64_t ndim;
    int64_t dims[MAX_RANK];
    int64_t strides[MAX_RANK];
    bool null_strides;
    int64_t offset;
    uint64_t sdim;
    int64_t sdims[MAX_RANK];
    size_t elem;                  /* bytes per element used for the allocation */
    size_t bytes;                 /* allocation size (0: data pointer NULL) */
    void *dev;
    unsigned char *snapshot;      /* inputs: copy before the call; outputs: unused */
    aclTensor *t;
    bool is_output;
    bool stale;                   /* destroyed before the call: t is a dangling pointer */
} fz_tensor;

typedef struct {
    bool present;
    uint64_t size;
    int64_t values[8];
    aclIntArray *a;
    bool stale;                   /* destroyed before the call: a is a dangling pointer */
} fz_array;

static size_t elem_size(aclDataType dtype)
{
    size_t s = aclDataTypeSize(dtype);
    return s == 0 ? 1 : s;
}

static aclDataType pick_dtype(reader *r, const aclDataType *valid, size_t count, int chaos)
{
    if (chaos && coin(r, 8)) {
        static const int any[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 27, 29, 34, 35, 36, 40, 41, 999};
        return (aclDataType)any[u8(r) % (sizeof any / sizeof any[0])];
    }
    return valid[u8(r) % count];
}

static aclFormat pick_format(reader *r, aclFormat intended, int chaos)
{
    if (chaos && coin(r, 8)) {
        static const int any[] = {-1, 0, 1, 2, 3, 4, 29, 30, 35, 47, 50, 1000};
        return (aclFormat)any[u8(r) % (sizeof any / sizeof any[0])];
    }
    return intended;
}

static int64_t numel_sat(uint64_t ndim, const int64_t *dims)
{
    int64_t n = 1;
    for (uint64_t i = 0; i < ndim; i++) {
        if (dims[i] < 0)
            return -1;
        if (dims[i] != 0 && n > INT64_MAX / dims[i])
            return INT64_MAX;
        n *= dims[i];
    }
    return n;
}

/* Lays out a view: contiguous, permuted, padded, negative, zero (broadcast) or random strides;
 * the storage shape covers the view exactly, with room to spare, or (chaos) is too small. */
static void layout(reader *r, fz_tensor *ft, int chaos)
{
    uint64_t n = ft->ndim;
    uint8_t mode = chaos ? u8(r) % 8 : u8(r) % 5;
    int64_t reach_hi = 0, reach_lo = 0;
    bool sane = numel_sat(n, ft->dims) >= 0 && numel_sat(n, ft->dims) < ((int64_t)1 << 40);
    for (uint64_t i = 0; i < n; i++) /* (an empty view may still hold one enormous dim) */
        sane = sane && ft->dims[i] <= ((int64_t)1 << 20);
    ft->null_strides = false;
    ft->offset = 0;
    if (!sane)
        mode = 7; /* no meaningful layout: random strides */
    if (mode == 0 || mode == 4) { /* contiguous; mode 4 passes strides == NULL */
        int64_t step = 1;
        for (uint64_t i = n; i-- > 0;) {
            ft->strides[i] = step;
            step *= ft->dims[i] > 0 ? ft->dims[i] : 1;
        }
        ft->null_strides = mode == 4;
    } else if (mode <= 3 || mode == 5) { /* permuted (1), padded (2), negative on one dim (3), zero (5) */
        uint64_t rot = n ? u8(r) % n : 0;
        int64_t step = 1;
        for (uint64_t k = n; k-- > 0;) {
            uint64_t i = (k + (mode == 1 ? rot : 0)) % n;
            ft->strides[i] = step;
            int64_t d = ft->dims[i] > 0 ? ft->dims[i] : 1;
            step *= d + (mode == 2 ? small(r, 0, 2) : 0);
        }
        if (n && mode == 3)
            ft->strides[u8(r) % n] *= -1;
        if (n && mode == 5)
            ft->strides[u8(r) % n] = 0;
    } else { /* random, possibly overlapping or enormous */
        for (uint64_t i = 0; i < n; i++)
            ft->strides[i] = coin(r, 4) ? special_value(r) : small(r, -3, 6);
    }
    if (sane) {
        for (uint64_t i = 0; i < n; i++) {
            if (ft->dims[i] <= 0)
                continue;
            __int128 reach = (__int128)ft->strides[i] * (ft->dims[i] - 1);
            if (reach > ((__int128)1 << 50) || reach < -((__int128)1 << 50)) {
                reach_hi = (int64_t)1 << 50; /* enormous: storage will be too small */
                continue;
            }
            if (reach > 0)
                reach_hi += (int64_t)reach;
            else
                reach_lo += (int64_t)reach;
        }
    }
    ft->offset = -reach_lo + (coin(r, 3) ? small(r, 0, 3) : 0);
    if (chaos && coin(r, 10))
        ft->offset = special_value(r);
    __int128 want = (__int128)ft->offset + reach_hi + 1 + (coin(r, 4) ? small(r, 0, 4) : 0);
    if (chaos && coin(r, 8))
        want -= small(r, 1, 3); /* too small for the view */
    int64_t storage = want < 0 ? 0 : (want > INT64_MAX ? INT64_MAX : (int64_t)want);
    if (mode == 0 && ft->offset == 0 && storage == numel_sat(n, ft->dims) && n && coin(r, 2)) {
        ft->sdim = n; /* storage shape = view shape, as the official samples do */
        memcpy(ft->sdims, ft->dims, n * sizeof ft->dims[0]);
    } else {
        ft->sdim = 1;
        ft->sdims[0] = storage;
    }
    if (chaos && coin(r, 12)) { /* random storage shape */
        ft->sdim = u8(r) % 4;
        for (uint64_t i = 0; i < ft->sdim; i++)
            ft->sdims[i] = coin(r, 3) ? special_value(r) : small(r, 0, 8);
    }
}

/* Describes one tensor argument around an intended shape and dtype. */
static void gen_tensor(reader *r, fz_tensor *ft, const int64_t *dims, uint64_t ndim, aclDataType dtype,
                       aclFormat format, int chaos, bool is_output)
{
    memset(ft, 0, sizeof *ft);
    ft->is_output = is_output;
    ft->present = !(chaos && coin(r, 24));
    ft->dtype = chaos ? pick_dtype(r, &dtype, 1, chaos) : dtype;
    ft->format = pick_format(r, format, chaos);
    ft->ndim = ndim;
    memcpy(ft->dims, dims, ndim * sizeof dims[0]);
    if (chaos && coin(r, 6)) { /* change the rank */
        ft->ndim = u8(r) % (coin(r, 6) ? MAX_RANK + 1 : 6);
        for (uint64_t i = ndim; i < ft->ndim; i++)
            ft->dims[i] = small(r, 1, 3);
    }
    if (chaos && coin(r, 4) && ft->ndim) { /* change one dim */
        uint64_t i = u8(r) % ft->ndim;
        ft->dims[i] = coin(r, 2) ? special_value(r) : small(r, 0, 6);
    }
    layout(r, ft, chaos);
}

static void fill_random(unsigned char *p, size_t n, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        p[i] = (unsigned char)(*seed >> 24);
    }
}

/* Float values a test can reason about: small multiples of 1/2, signed zeros, rarely inf/NaN. */
static float nice_float(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    uint32_t v = *seed >> 16;
    if (v % 97 == 0)
        return (v / 97) % 3 == 0 ? NAN : ((v / 97) % 3 == 1 ? INFINITY : -INFINITY);
    if (v % 31 == 0)
        return -0.0f;
    return (float)((int)(v % 17) - 8) * 0.5f;
}

/* Allocates (maybe short, maybe not at all) device memory and creates the aclTensor. */
static void realize(reader *r, fz_tensor *ft, int chaos, uint32_t *seed)
{
    ft->t = NULL;
    ft->dev = NULL;
    if (!ft->present)
        return;
    ft->elem = elem_size(ft->dtype);
    int64_t storage_elems = numel_sat(ft->sdim, ft->sdims);
    bool want_data = storage_elems > 0 && storage_elems < (int64_t)(MAX_ALLOC / ft->elem);
    size_t bytes = want_data ? (size_t)storage_elems * ft->elem : 64;
    if (chaos && coin(r, 16) && bytes > 1)
        bytes /= 2 + u8(r) % 8; /* short allocation: strict mode must catch what does not fit */
    if (!(chaos && coin(r, 32)) && bytes > 0) {
        if (aclrtMalloc(&ft->dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            FAIL("aclrtMalloc(%zu) failed: %s", bytes, aclGetRecentErrMsg());
        ft->bytes = bytes;
        if (ft->is_output) {
            memset(ft->dev, FILL_BYTE, bytes);
        } else if (ft->dtype == ACL_FLOAT) {
            float *f = ft->dev;
            for (size_t i = 0; i < bytes / 4; i++)
                f[i] = nice_float(seed);
        } else {
            fill_random(ft->dev, bytes, seed);
        }
        if (!ft->is_output) {
            ft->snapshot = malloc(bytes);
            memcpy(ft->snapshot, ft->dev, bytes);
        }
    }
    ft->t = aclCreateTensor(ft->dims, ft->ndim, ft->dtype, ft->null_strides ? NULL : ft->strides, ft->offset,
                            ft->format, ft->sdims, ft->sdim, ft->dev);
    if (ft->t == NULL) {
        const char *msg = aclGetRecentErrMsg();
        if (msg == NULL)
            FAIL("aclCreateTensor returned NULL without a message");
    }
}

static void release_tensor(fz_tensor *ft)
{
    if (ft->t != NULL && !ft->stale && aclDestroyTensor(ft->t) != ACL_SUCCESS)
        FAIL("aclDestroyTensor failed");
    if (ft->dev != NULL && aclrtFree(ft->dev) != ACL_SUCCESS)
        FAIL("aclrtFree failed");
    free(ft->snapshot);
    ft->t = NULL;
    ft->dev = NULL;
    ft->snapshot = NULL;
    ft->stale = false;
}

static void gen_array(reader *r, fz_array *fa, const int64_t *values, uint64_t size, int chaos)
{
    memset(fa, 0, sizeof *fa);
    fa->present = !(chaos && coin(r, 24));
    fa->size = size;
    memcpy(fa->values, values, size * sizeof values[0]);
    if (chaos && coin(r, 6))
        fa->size = u8(r) % 5;
    for (uint64_t i = size; i < fa->size; i++)
        fa->values[i] = small(r, 0, 3);
    if (chaos && coin(r, 5) && fa->size)
        fa->values[u8(r) % fa->size] = coin(r, 2) ? special_value(r) : small(r, -2, 4);
    if (fa->present) {
        fa->a = aclCreateIntArray(fa->values, fa->size);
        if (fa->a == NULL)
            FAIL("aclCreateIntArray(size %lu) returned NULL", (unsigned long)fa->size);
    }
}

/* ---- view walking (for the references and the storage checks) ------------------------------- */

/* Calls fn(view_index, storage_element) for every element of the view, in row-major order. */
typedef void (*visit_fn)(void *ctx, int64_t linear, int64_t element);

static void visit_view(const fz_tensor *ft, visit_fn fn, void *ctx)
{
    int64_t n = numel_sat(ft->ndim, ft->dims);
    int64_t idx[MAX_RANK] = {0};
    for (int64_t linear = 0; linear < n; linear++) {
        int64_t element = ft->offset;
        for (uint64_t d = 0; d < ft->ndim; d++)
            element += idx[d] * ft->strides[d];
        fn(ctx, linear, element);
        for (uint64_t d = ft->ndim; d-- > 0;) {
            if (++idx[d] < ft->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

typedef struct {
    unsigned char *mark;
    bool overlap;
} mark_ctx;

static void mark_element(void *ctx, int64_t linear, int64_t element)
{
    (void)linear;
    mark_ctx *m = ctx;
    if (m->mark[element])
        m->overlap = true;
    m->mark[element] = 1;
}

/* Byte-exact view <-> contiguous copies. */
typedef struct {
    const fz_tensor *ft;
    unsigned char *flat;
    bool to_flat;
} copy_ctx;

static void copy_element(void *ctx, int64_t linear, int64_t element)
{
    copy_ctx *c = ctx;
    unsigned char *storage = (unsigned char *)c->ft->dev + element * (int64_t)c->ft->elem;
    unsigned char *flat = c->flat + linear * (int64_t)c->ft->elem;
    if (c->to_flat)
        memcpy(flat, storage, c->ft->elem);
    else
        memcpy(storage, flat, c->ft->elem);
}

/* The view's elements as a contiguous host array (caller frees). */
static unsigned char *read_view(const fz_tensor *ft)
{
    int64_t n = numel_sat(ft->ndim, ft->dims);
    unsigned char *flat = malloc((size_t)(n > 0 ? n : 1) * ft->elem);
    copy_ctx c = {ft, flat, true};
    visit_view(ft, copy_element, &c);
    return flat;
}

/* aclrtMalloc rounds a size up to a multiple of 32 and adds 32 bytes (docs/runtime.md, memory); the library
 * counts that padding as part of the allocation, so a view may legally reach into it. */
static size_t usable_bytes(const fz_tensor *ft) { return (ft->bytes + 31) / 32 * 32 + 32; }

/* A tensor that phase 1 accepted lies inside its allocation (strict mode); view_fits says so. */
static bool view_fits(const fz_tensor *ft)
{
    if (ft->t == NULL || ft->dev == NULL)
        return false;
    int64_t n = numel_sat(ft->ndim, ft->dims);
    if (n <= 0 || n > (int64_t)MAX_ALLOC)
        return false;
    __int128 lo = ft->offset, hi = ft->offset;
    for (uint64_t d = 0; d < ft->ndim; d++) {
        __int128 reach = (__int128)ft->strides[d] * (ft->dims[d] - 1);
        if (reach > 0)
            hi += reach;
        else
            lo += reach;
    }
    return lo >= 0 && (hi + 1) * (__int128)ft->elem <= (__int128)usable_bytes(ft);
}

/* Inputs are never modified; outputs change only inside their view. */
static void check_storage(const fz_tensor *ft, const char *when)
{
    if (ft->dev == NULL)
        return;
    if (!ft->is_output) {
        if (memcmp(ft->dev, ft->snapshot, ft->bytes) != 0)
            FAIL("an input tensor was modified (%s)", when);
        return;
    }
    unsigned char *inside = calloc(ft->bytes, 1);
    if (ft->t != NULL && view_fits(ft)) {
        unsigned char *mark = calloc(usable_bytes(ft) / ft->elem + 1, 1);
        mark_ctx m = {mark, false};
        visit_view(ft, mark_element, &m);
        for (size_t e = 0; e < ft->bytes / ft->elem + 1; e++)
            if (mark[e])
                memset(inside + e * ft->elem, 1, (e + 1) * ft->elem <= ft->bytes ? ft->elem : ft->bytes - e * ft->elem);
        free(mark);
    }
    for (size_t b = 0; b < ft->bytes; b++)
        if (!inside[b] && ((unsigned char *)ft->dev)[b] != FILL_BYTE)
            FAIL("output storage byte %zu outside the view was written (%s)", b, when);
    free(inside);
}

static bool view_overlaps(const fz_tensor *ft)
{
    unsigned char *mark = calloc(usable_bytes(ft) / ft->elem + 1, 1);
    mark_ctx m = {mark, false};
    visit_view(ft, mark_element, &m);
    free(mark);
    return m.overlap;
}

/* ---- the references (tiny, obvious loops) --------------------------------------------------- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

static bool same_float(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static void expect_bytes(const char *op, const unsigned char *got, const unsigned char *want, int64_t n, size_t elem)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(got + i * (int64_t)elem, want + i * (int64_t)elem, elem) != 0)
            FAIL("%s: element %ld differs from the reference", op, (long)i);
}

static void expect_floats(const char *op, const float *got, const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!same_float(got[i], want[i]))
            FAIL("%s: element %ld is %.9g, the reference says %.9g", op, (long)i, got[i], want[i]);
}

/* out[..., i, j] = self[..., clamp(i - top), clamp(j - left)] */
static void ref_pad(const fz_tensor *self, const fz_tensor *out, const int64_t *pad)
{
    size_t e = self->elem;
    int64_t H = self->dims[self->ndim - 2], W = self->dims[self->ndim - 1];
    int64_t Ho = out->dims[out->ndim - 2], Wo = out->dims[out->ndim - 1];
    int64_t planes = numel_sat(self->ndim - 2, self->dims);
    unsigned char *in = read_view(self), *got = read_view(out);
    unsigned char *want = malloc((size_t)(planes * Ho * Wo) * e);
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < Ho; i++)
            for (int64_t j = 0; j < Wo; j++)
                memcpy(want + ((p * Ho + i) * Wo + j) * (int64_t)e,
                       in + ((p * H + clamp64(i - pad[2], 0, H - 1)) * W + clamp64(j - pad[0], 0, W - 1)) * (int64_t)e, e);
    expect_bytes("aclnnReplicationPad2d", got, want, planes * Ho * Wo, e);
    free(in);
    free(got);
    free(want);
}

/* NCL (self ND, NCL or UNDEFINED): out[n, c, d] = self[n, c, src(d)];
 * NLC (any other format):            out[n, d, c] = self[n, src(d), c];
 * src(d) = min(floor(fl32((d + 0.5) * scale)), L - 1),
 * scale = scales > 0 ? fl32(1 / scales) (Ascend950: 1.0f / fl32(scales)) : fl32(L) / fl32(Lo). */
static void ref_upsample(const fz_tensor *self, const fz_tensor *out, double scales, bool float_reciprocal)
{
    size_t e = self->elem;
    bool nlc = self->format != ACL_FORMAT_ND && self->format != ACL_FORMAT_NCL && self->format != ACL_FORMAT_UNDEFINED;
    int64_t rows = nlc ? self->dims[0] : self->dims[0] * self->dims[1];
    int64_t L = nlc ? self->dims[1] : self->dims[2], Lo = nlc ? out->dims[1] : out->dims[2];
    int64_t block = nlc ? self->dims[2] : 1; /* elements moved per source index */
    float scale = scales > 0 ? (float_reciprocal ? 1.0f / (float)scales : (float)(1.0 / scales)) : (float)L / (float)Lo;
    unsigned char *in = read_view(self), *got = read_view(out);
    size_t bytes = (size_t)(rows * Lo * block) * e;
    unsigned char *want = malloc(bytes ? bytes : 1);
    for (int64_t d = 0; d < Lo; d++) {
        float pos = floorf((float)(((double)d + 0.5) * (double)scale));
        int64_t src = pos >= (float)(L - 1) ? L - 1 : (int64_t)pos;
        for (int64_t p = 0; p < rows; p++)
            memcpy(want + (p * Lo + d) * block * (int64_t)e, in + (p * L + src) * block * (int64_t)e,
                   (size_t)block * e);
    }
    expect_bytes("aclnnUpsampleNearestExact1d", got, want, rows * Lo * block, e);
    free(in);
    free(got);
    free(want);
}

/* out[n, (c*kH + ki)*kW + kj, oh*OW + ow] = self[n, c, oh*sH - pH + ki*dH, ow*sW - pW + kj*dW] or 0 */
static void ref_im2col(const fz_tensor *self, const fz_tensor *out, const int64_t *k, const int64_t *dil,
                       const int64_t *pad, const int64_t *st)
{
    size_t e = self->elem;
    bool batched = self->ndim == 4;
    int64_t N = batched ? self->dims[0] : 1, C = self->dims[self->ndim - 3];
    int64_t H = self->dims[self->ndim - 2], W = self->dims[self->ndim - 1];
    int64_t OH = (H + 2 * pad[0] - (dil[0] * (k[0] - 1) + 1)) / st[0] + 1;
    int64_t OW = (W + 2 * pad[1] - (dil[1] * (k[1] - 1) + 1)) / st[1] + 1;
    int64_t rows = C * k[0] * k[1], L = OH * OW;
    unsigned char *in = read_view(self), *got = read_view(out);
    unsigned char *want = calloc((size_t)(N * rows * L), e);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < k[0]; ki++)
                for (int64_t kj = 0; kj < k[1]; kj++)
                    for (int64_t oh = 0; oh < OH; oh++)
                        for (int64_t ow = 0; ow < OW; ow++) {
                            int64_t ih = oh * st[0] - pad[0] + ki * dil[0], iw = ow * st[1] - pad[1] + kj * dil[1];
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            int64_t row = (c * k[0] + ki) * k[1] + kj;
                            memcpy(want + ((n * rows + row) * L + oh * OW + ow) * (int64_t)e,
                                   in + (((n * C + c) * H + ih) * W + iw) * (int64_t)e, e);
                        }
    expect_bytes("aclnnIm2col", got, want, N * rows * L, e);
    free(in);
    free(got);
    free(want);
}

/* The vector max(x, 0) and min(x, 0) as docs/precision.md chooses them where the sources leave it
 * open: max(-0, 0) = +0, min(-0, 0) = -0, a NaN passes through. */
static float vector_max0(float x) { return x != x || x > 0 ? x : 0.0f; }
static float vector_min0(float x) { return x != x || x < 0 || x == 0 ? x : 0.0f; }

/* out = x > 0 ? x : w[channel] * x (float32), the select every product but Ascend910 runs;
 * Ascend910's TBE PRelu: max(x, 0) + min(x, 0) * w. */
static void ref_prelu(const fz_tensor *self, const fz_tensor *weight, const fz_tensor *out, bool max_min)
{
    int64_t n = numel_sat(self->ndim, self->dims);
    int64_t channels = self->ndim <= 1 ? 1 : self->dims[1];
    int64_t inner = self->ndim <= 2 ? 1 : numel_sat(self->ndim - 2, self->dims + 2);
    int64_t wn = numel_sat(weight->ndim, weight->dims);
    float *x = (float *)read_view(self), *w = (float *)read_view(weight), *got = (float *)read_view(out);
    float *want = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        float slope = wn == 1 ? w[0] : w[(i / inner) % channels];
        want[i] = max_min ? vector_max0(x[i]) + vector_min0(x[i]) * slope : x[i] > 0 ? x[i] : slope * x[i];
    }
    expect_floats("aclnnPrelu", got, want, n);
    free(x);
    free(w);
    free(got);
    free(want);
}

/* PyTorch's rule: start at the first in-range cell with -inf, take a value if it is greater or NaN. */
static void ref_max_pool(const fz_tensor *self, const fz_tensor *out, const fz_tensor *indices, const int64_t *k,
                         const int64_t *s, const int64_t *p, bool a2_mask)
{
    int64_t planes = numel_sat(self->ndim - 2, self->dims);
    int64_t H = self->dims[self->ndim - 2], W = self->dims[self->ndim - 1];
    int64_t Ho = out->dims[out->ndim - 2], Wo = out->dims[out->ndim - 1];
    float *x = (float *)read_view(self), *got = (float *)read_view(out);
    float *want = malloc((size_t)(planes * Ho * Wo) * sizeof(float));
    int32_t *argmax = malloc((size_t)(planes * Ho * Wo) * sizeof(int32_t));
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oh = 0; oh < Ho; oh++)
            for (int64_t ow = 0; ow < Wo; ow++) {
                int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
                int64_t h1 = h0 + k[0] < H ? h0 + k[0] : H, w1 = w0 + k[1] < W ? w0 + k[1] : W;
                if (h0 < 0)
                    h0 = 0;
                if (w0 < 0)
                    w0 = 0;
                float best = -INFINITY;
                int64_t where = h0 * W + w0;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        float v = x[(pl * H + ih) * W + iw];
                        if (v > best || isnan(v)) {
                            best = v;
                            where = ih * W + iw;
                        }
                    }
                want[(pl * Ho + oh) * Wo + ow] = best;
                argmax[(pl * Ho + oh) * Wo + ow] = (int32_t)where;
            }
    expect_floats("aclnnMaxPool2dWithMask", got, want, planes * Ho * Wo);
    /* The A2 mask: little-endian int32 argmax stream at byte 0 of a contiguous indices buffer,
     * the rest zero (1x1 kernels use the legacy bit pattern instead: not compared). */
    bool contiguous_mask = indices->offset == 0;
    int64_t step = 1;
    for (uint64_t d = indices->ndim; d-- > 0 && !indices->null_strides;) {
        if (indices->dims[d] != 1 && indices->strides[d] != step)
            contiguous_mask = false;
        step *= indices->dims[d];
    }
    if (a2_mask && contiguous_mask && indices->offset == 0 && (k[0] != 1 || k[1] != 1)) {
        const unsigned char *mask = indices->dev;
        int64_t total = numel_sat(indices->ndim, indices->dims);
        for (int64_t i = 0; i < planes * Ho * Wo; i++) {
            const unsigned char *b = mask + 4 * i;
            int32_t v = (int32_t)((uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24));
            if (v != argmax[i])
                FAIL("aclnnMaxPool2dWithMask: argmax %ld is %d, the reference says %d", (long)i, v, argmax[i]);
        }
        for (int64_t i = 4 * planes * Ho * Wo; i < total; i++)
            if (mask[i] != 0)
                FAIL("aclnnMaxPool2dWithMask: mask byte %ld after the argmax stream is %d, not 0", (long)i, mask[i]);
    }
    free(x);
    free(got);
    free(want);
    free(argmax);
}

/* ---- one call --------------------------------------------------------------------------------- */

typedef struct {
    int op;
    int chaos;
    fz_tensor t[MAX_TENSORS];
    int nt;
    fz_array a[MAX_ARRAYS];
    int na;
    double scales;
    bool ceil_mode;
    bool null_ws_ptr, null_exec_ptr;
    uint8_t exec_mode, ws_mode;
    aclrtStream stream;
    int product;                  /* index into PRODUCTS */
} call;

/* The emulated products, the default first (an input that runs out of bytes stays on it). */
enum { P_910B, P_910_93, P_950, P_910, P_310P };
static const char *const PRODUCTS[] = {"Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"};

static aclrtStream g_stream;
static bool g_verbose;

/* FUZZ_STATS=1: per operator, how many calls passed phase 1, phase 2 and a reference check. */
static const char *const OP_NAMES[10];
static unsigned long g_calls[10], g_phase1_ok[10], g_phase2_ok[10], g_checked[10];

static void print_stats(void)
{
    for (int op = 0; op < 10; op++)
        fprintf(stderr, "%-36s calls %8lu phase1 ok %8lu phase2 ok %8lu reference-checked %8lu\n", OP_NAMES[op], g_calls[op],
                g_phase1_ok[op], g_phase2_ok[op], g_checked[op]);
}

static const aclTensor *T(call *c, int i) { return c->t[i].t; }
static aclTensor *TO(call *c, int i) { return c->t[i].t; }
static const aclIntArray *A(call *c, int i) { return c->a[i].a; }

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static const char *const OP_NAMES[10] = {
    "aclnnReplicationPad2d",       "aclnnReplicationPad2dBackward", "aclnnUpsampleNearestExact1d",
    "aclnnUpsampleNearestExact1dBackward", "aclnnMaxPool2dWithMask", "aclnnMaxPool2dWithMaskBackward",
    "aclnnIm2col",                 "aclnnIm2colBackward",           "aclnnPrelu",
    "aclnnPreluBackward"};
static const phase2_fn PHASE2[10] = {aclnnReplicationPad2d, aclnnReplicationPad2dBackward,
                                     aclnnUpsampleNearestExact1d, aclnnUpsampleNearestExact1dBackward,
                                     aclnnMaxPool2dWithMask, aclnnMaxPool2dWithMaskBackward,
                                     aclnnIm2col, aclnnIm2colBackward,
                                     aclnnPrelu, aclnnPreluBackward};

static aclnnStatus phase1(call *c, uint64_t *ws, aclOpExecutor **ex)
{
    switch (c->op) {
    case 0: return aclnnReplicationPad2dGetWorkspaceSize(T(c, 0), A(c, 0), TO(c, 1), ws, ex);
    case 1: return aclnnReplicationPad2dBackwardGetWorkspaceSize(T(c, 0), T(c, 1), A(c, 0), TO(c, 2), ws, ex);
    case 2: return aclnnUpsampleNearestExact1dGetWorkspaceSize(T(c, 0), A(c, 0), c->scales, TO(c, 1), ws, ex);
    case 3:
        return aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(T(c, 0), A(c, 0), A(c, 1), c->scales, TO(c, 1), ws,
                                                                   ex);
    case 4:
        return aclnnMaxPool2dWithMaskGetWorkspaceSize(T(c, 0), A(c, 0), A(c, 1), A(c, 2), A(c, 3), c->ceil_mode,
                                                      TO(c, 1), TO(c, 2), ws, ex);
    case 5:
        return aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(T(c, 0), T(c, 1), T(c, 2), A(c, 0), A(c, 1), A(c, 2),
                                                              A(c, 3), c->ceil_mode, TO(c, 3), ws, ex);
    case 6: return aclnnIm2colGetWorkspaceSize(T(c, 0), A(c, 0), A(c, 1), A(c, 2), A(c, 3), T(c, 1), ws, ex);
    case 7:
        return aclnnIm2colBackwardGetWorkspaceSize(T(c, 0), A(c, 0), A(c, 1), A(c, 2), A(c, 3), A(c, 4), TO(c, 1), ws,
                                                   ex);
    case 8: return aclnnPreluGetWorkspaceSize(T(c, 0), T(c, 1), TO(c, 2), ws, ex);
    default: return aclnnPreluBackwardGetWorkspaceSize(T(c, 0), T(c, 1), T(c, 2), TO(c, 3), TO(c, 4), ws, ex);
    }
}

static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode)
{
    if (s <= 0)
        return 0;
    int64_t num = in + 2 * p - (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        o--;
    return o;
}

static const aclDataType FLOATS3[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

/* Decodes the operator's arguments: intended shapes first, then the chaos perturbations. */
static void decode(reader *r, call *c)
{
    int ch = c->chaos;
    int64_t d[MAX_RANK], e[MAX_RANK];
    switch (c->op) {
    case 0:
    case 1: { /* replication pad forward/backward */
        static const aclDataType fwd[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_DOUBLE,
                                          ACL_INT8, ACL_UINT8, ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16};
        static const aclDataType bwd[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128};
        uint64_t rank = coin(r, 2) ? 4 : 3;
        for (uint64_t i = 0; i < rank; i++)
            d[i] = small(r, 1, 5);
        int64_t pad[4];
        for (int i = 0; i < 4; i++)
            pad[i] = coin(r, 8) ? small(r, -2, 9) : small(r, 0, 3);
        memcpy(e, d, sizeof d);
        e[rank - 1] += pad[0] + pad[1];
        e[rank - 2] += pad[2] + pad[3];
        aclDataType dt = c->op == 0 ? fwd[u8(r) % 11] : bwd[u8(r) % 6];
        if (c->op == 0) {
            gen_tensor(r, &c->t[0], d, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], e, rank, dt, ACL_FORMAT_ND, ch, true);
            c->nt = 2;
        } else {
            gen_tensor(r, &c->t[0], e, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], d, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[2], d, rank, dt, ACL_FORMAT_ND, ch, true);
            c->nt = 3;
        }
        gen_array(r, &c->a[0], pad, 4, ch);
        c->na = 1;
        break;
    }
    case 2:
    case 3: { /* upsample nearest-exact 1d forward/backward */
        static const aclDataType fwd[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8};
        static const double scales[] = {0.0, 0.0, 0.0, 1.7, 2.5, 0.5, 0.4, -1.0, 1e-300, 1e300, 60.0, 0.01};
        int64_t N = small(r, 1, 3), C = small(r, 1, 3), L = small(r, 1, 8), Lo = small(r, 1, 16);
        c->scales = scales[u8(r) % 12];
        if (ch && coin(r, 10))
            c->scales = coin(r, 2) ? NAN : INFINITY;
        aclDataType dt = c->op == 2 ? fwd[u8(r) % 4] : FLOATS3[u8(r) % 3];
        int64_t in[3] = {N, C, L}, out[3] = {N, C, Lo}, lo[1] = {Lo};
        if (c->op == 2) {
            gen_tensor(r, &c->t[0], in, 3, dt, ACL_FORMAT_NCL, ch, false);
            gen_tensor(r, &c->t[1], out, 3, dt, ACL_FORMAT_NCL, ch, true);
            gen_array(r, &c->a[0], lo, 1, ch);
            c->nt = 2;
            c->na = 1;
        } else {
            gen_tensor(r, &c->t[0], out, 3, dt, ACL_FORMAT_NCL, ch, false);
            gen_tensor(r, &c->t[1], in, 3, dt, ACL_FORMAT_NCL, ch, true);
            gen_array(r, &c->a[0], lo, 1, ch);
            gen_array(r, &c->a[1], in, 3, ch);
            c->nt = 2;
            c->na = 2;
        }
        break;
    }
    case 4:
    case 5: { /* max pool with mask forward/backward */
        uint64_t rank = coin(r, 3) ? 3 : 4;
        for (uint64_t i = 0; i < rank; i++)
            d[i] = small(r, 1, i + 2 < rank ? 3 : 9);
        int64_t k[2] = {small(r, 1, 4), small(r, 1, 4)}, s[2] = {small(r, 1, 3), small(r, 1, 3)};
        int64_t p[2] = {small(r, 0, k[0] / 2), small(r, 0, k[1] / 2)}, dil[2] = {1, 1};
        c->ceil_mode = coin(r, 2);
        bool square = coin(r, 3);
        if (square) {
            k[1] = k[0];
            s[1] = s[0];
            p[1] = p[0] < k[1] / 2 ? p[0] : k[1] / 2;
        }
        int64_t Ho = pool_out(d[rank - 2], k[0], s[0], p[0], c->ceil_mode);
        int64_t Wo = pool_out(d[rank - 1], k[1], s[1], p[1], c->ceil_mode);
        memcpy(e, d, sizeof d);
        e[rank - 2] = Ho;
        e[rank - 1] = Wo;
        int64_t m[4];
        uint64_t lead = rank - 2;
        memcpy(m, d, lead * sizeof d[0]);
        m[lead] = k[0] * k[1];
        m[lead + 1] = 32 * ((Ho * Wo + 15) / 16 + 1);
        aclDataType dt = FLOATS3[u8(r) % 3];
        if (c->op == 4) {
            gen_tensor(r, &c->t[0], d, rank, dt, ACL_FORMAT_NCHW, ch, false);
            gen_tensor(r, &c->t[1], e, rank, dt, ACL_FORMAT_NCHW, ch, true);
            gen_tensor(r, &c->t[2], m, rank, ACL_INT8, ACL_FORMAT_NCHW, ch, true);
            c->nt = 3;
        } else {
            gen_tensor(r, &c->t[0], e, rank, dt, ACL_FORMAT_NCHW, ch, false);
            gen_tensor(r, &c->t[1], d, rank, dt, ACL_FORMAT_NCHW, ch, false);
            gen_tensor(r, &c->t[2], m, rank, ACL_INT8, ACL_FORMAT_NCHW, ch, false);
            gen_tensor(r, &c->t[3], d, rank, dt, ACL_FORMAT_NCHW, ch, true);
            c->nt = 4;
        }
        uint64_t ks = square && coin(r, 2) ? 1 : 2, ss = coin(r, 6) ? 0 : (square && coin(r, 2) ? 1 : 2);
        if (ss == 0) {
            s[0] = k[0];
            s[1] = k[1];
        }
        gen_array(r, &c->a[0], k, ks, ch);
        gen_array(r, &c->a[1], s, ss, ch);
        gen_array(r, &c->a[2], p, square && coin(r, 2) ? 1 : 2, ch);
        gen_array(r, &c->a[3], dil, coin(r, 2) ? 1 : 2, ch);
        c->na = 4;
        break;
    }
    case 6:
    case 7: { /* im2col forward/backward */
        bool batched = coin(r, 2);
        int64_t N = small(r, 1, 2), C = small(r, 1, 3), H = small(r, 1, 8), W = small(r, 1, 8);
        int64_t k[2] = {small(r, 1, 3), small(r, 1, 3)}, dil[2] = {small(r, 1, 2), small(r, 1, 2)};
        int64_t p[2] = {small(r, 0, 2), small(r, 0, 2)}, s[2] = {small(r, 1, 3), small(r, 1, 3)};
        int64_t OH = (H + 2 * p[0] - (dil[0] * (k[0] - 1) + 1)) / s[0] + 1;
        int64_t OW = (W + 2 * p[1] - (dil[1] * (k[1] - 1) + 1)) / s[1] + 1;
        int64_t img[4] = {N, C, H, W}, col[3] = {N, C * k[0] * k[1], OH * OW}, hw[2] = {H, W};
        uint64_t irank = batched ? 4 : 3, crank = batched ? 3 : 2;
        aclDataType dt = FLOATS3[u8(r) % 3];
        if (c->op == 6) {
            gen_tensor(r, &c->t[0], img + !batched, irank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], col + !batched, crank, dt, ACL_FORMAT_ND, ch, true);
            gen_array(r, &c->a[0], k, 2, ch);
            gen_array(r, &c->a[1], dil, 2, ch);
            gen_array(r, &c->a[2], p, 2, ch);
            gen_array(r, &c->a[3], s, 2, ch);
            c->na = 4;
        } else {
            gen_tensor(r, &c->t[0], col + !batched, crank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], img + !batched, irank, dt, ACL_FORMAT_ND, ch, true);
            gen_array(r, &c->a[0], hw, 2, ch);
            gen_array(r, &c->a[1], k, 2, ch);
            gen_array(r, &c->a[2], dil, 2, ch);
            gen_array(r, &c->a[3], p, 2, ch);
            gen_array(r, &c->a[4], s, 2, ch);
            c->na = 5;
        }
        c->nt = 2;
        break;
    }
    default: { /* prelu forward/backward */
        uint64_t rank = u8(r) % 6;
        for (uint64_t i = 0; i < rank; i++)
            d[i] = small(r, 1, 4);
        int64_t channels = rank <= 1 ? 1 : d[1];
        int64_t w[1] = {coin(r, 3) ? 1 : channels};
        aclDataType dt = FLOATS3[u8(r) % 3];
        if (c->op == 8) {
            gen_tensor(r, &c->t[0], d, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], w, 1, coin(r, 6) ? FLOATS3[u8(r) % 3] : dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[2], d, rank, coin(r, 6) ? FLOATS3[u8(r) % 3] : dt, ACL_FORMAT_ND, ch, true);
            c->nt = 3;
        } else {
            memcpy(e, d, sizeof d);
            if (coin(r, 3)) /* a gradOutput that broadcasts to self */
                for (uint64_t i = 0; i < rank; i++)
                    if (i != 1)
                        e[i] = 1;
            gen_tensor(r, &c->t[0], e, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[1], d, rank, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[2], w, 1, dt, ACL_FORMAT_ND, ch, false);
            gen_tensor(r, &c->t[3], d, rank, dt, ACL_FORMAT_ND, ch, true);
            gen_tensor(r, &c->t[4], w, 1, dt, ACL_FORMAT_ND, ch, true);
            c->nt = 5;
        }
        c->na = 0;
        break;
    }
    }
}

/* Max-pool backward: give the mask in-range argmax values most of the time (else random bytes). */
static void plant_mask(reader *r, call *c, uint32_t *seed)
{
    fz_tensor *mask = &c->t[2], *self = &c->t[1];
    if (c->op != 5 || mask->dev == NULL || self->ndim < 2 || coin(r, 4))
        return;
    int64_t h = self->dims[self->ndim - 2], w = self->dims[self->ndim - 1];
    if (h <= 0 || w <= 0 || h > INT32_MAX / w)
        return;
    int64_t hw = h * w;
    int32_t *words = mask->dev;
    for (size_t i = 0; i < mask->bytes / 4; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        words[i] = (int32_t)((*seed >> 8) % (uint32_t)hw);
    }
    memcpy(mask->snapshot, mask->dev, mask->bytes);
}

static void expect_message(const char *what, int status)
{
    const char *msg = aclGetRecentErrMsg();
    if (status != 0 && msg == NULL)
        FAIL("%s returned %d without a message for aclGetRecentErrMsg", what, status);
}

static bool all_fit(call *c)
{
    for (int i = 0; i < c->nt; i++)
        if (!view_fits(&c->t[i]))
            return false;
    return true;
}

static void check_result(call *c)
{
    if (!all_fit(c))
        return;
    for (int i = 0; i < c->nt; i++)
        if (c->t[i].is_output && view_overlaps(&c->t[i]))
            return; /* an overlapping output has no single right answer */
    switch (c->op) {
    case 0:
        if (c->t[0].dtype == c->t[1].dtype)
            ref_pad(&c->t[0], &c->t[1], c->a[0].values), g_checked[0]++;
        break;
    case 2:
        ref_upsample(&c->t[0], &c->t[1], c->scales, c->product == P_950), g_checked[2]++;
        break;
    case 4:
        if (c->t[0].dtype == ACL_FLOAT && c->product != P_910) {
            int64_t k[2], s[2], p[2];
            k[0] = c->a[0].values[0];
            k[1] = c->a[0].values[c->a[0].size - 1];
            s[0] = c->a[1].size ? c->a[1].values[0] : k[0];
            s[1] = c->a[1].size ? c->a[1].values[c->a[1].size - 1] : k[1];
            p[0] = c->a[2].values[0];
            p[1] = c->a[2].values[c->a[2].size - 1];
            ref_max_pool(&c->t[0], &c->t[1], &c->t[2], k, s, p, c->product != P_310P), g_checked[4]++;
        }
        break;
    case 6:
        if (c->t[0].dtype == c->t[1].dtype)
            ref_im2col(&c->t[0], &c->t[1], c->a[0].values, c->a[1].values, c->a[2].values, c->a[3].values),
                g_checked[6]++;
        break;
    case 8:
        if (c->t[0].dtype == ACL_FLOAT && c->t[1].dtype == ACL_FLOAT && c->t[2].dtype == ACL_FLOAT)
            ref_prelu(&c->t[0], &c->t[1], &c->t[2], c->product == P_910), g_checked[8]++;
        break;
    default:
        break;
    }
}

/* Phase 2 (+ synchronize) with the decoded workspace choice; returns the combined status. */
static int run_phase2(call *c, aclOpExecutor *ex, uint64_t ws_size, void **ws_buf)
{
    uint64_t pass = ws_size;
    void *ws = NULL;
    switch (c->ws_mode % 8) {
    case 1: pass = ws_size + 64; break;                          /* larger than asked */
    case 2: pass = ws_size ? ws_size - 1 : 0; break;             /* smaller: must fail */
    case 3: pass = ws_size ? ws_size : 128; break;               /* NULL with a size: must fail */
    default: break;
    }
    if (pass > 0 && c->ws_mode % 8 != 3) {
        if (*ws_buf == NULL && aclrtMalloc(ws_buf, pass, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
            FAIL("aclrtMalloc(workspace %lu) failed", (unsigned long)pass);
        ws = *ws_buf;
    }
    int status = PHASE2[c->op](ws, pass, ex, c->stream);
    expect_message(OP_NAMES[c->op], status);
    if (status == 0 && pass < ws_size)
        FAIL("%s accepted a workspace of %lu bytes, phase 1 asked for %lu", OP_NAMES[c->op], (unsigned long)pass,
             (unsigned long)ws_size);
    if (status == 0 && ws == NULL && pass > 0)
        FAIL("%s accepted a NULL workspace of %lu bytes", OP_NAMES[c->op], (unsigned long)pass);
    int sync = aclrtSynchronizeStream(c->stream);
    if (g_verbose)
        fprintf(stderr, "  phase 2 (workspace %lu) -> %d, synchronize -> %d\n", (unsigned long)pass, status, sync);
    expect_message("aclrtSynchronizeStream", sync);
    return status != 0 ? status : sync;
}

/* Legitimate but heavy work: a zero-stride tensor can describe billions of elements over a few
 * bytes of storage, and phase 2 then really walks (or copies to its workspace) all of them -
 * over a minute under the sanitizers.  Such executors are destroyed unrun, like exec_mode 4:
 * phase 1 has checked them already, and a bounded run is what finds memory errors. */
#define MAX_RUN_ELEMS ((int64_t)1 << 25)
#define MAX_RUN_WORKSPACE ((uint64_t)1 << 26)

static bool too_heavy_to_run(const call *c, uint64_t ws_size)
{
    if (ws_size > MAX_RUN_WORKSPACE)
        return true;
    int64_t total = 0;
    for (int i = 0; i < c->nt; i++) {
        const int64_t n = numel_sat(c->t[i].ndim, c->t[i].dims);
        if (n > MAX_RUN_ELEMS - total)
            return true;
        total += n < 0 ? 0 : n;
    }
    return false;
}

/* FUZZ_VERBOSE=1: describe the decoded call on stderr (to turn a crash into a regression test). */

static void dump_call(const call *c)
{
    if (!g_verbose)
        return;
    fprintf(stderr, "op %s product %s chaos %d exec_mode %d ws_mode %d scales %g ceil %d stream %s\n",
            OP_NAMES[c->op], PRODUCTS[c->product], c->chaos, c->exec_mode, c->ws_mode % 8, c->scales, c->ceil_mode,
            c->stream ? "own" : "NULL");
    for (int i = 0; i < c->nt; i++) {
        const fz_tensor *ft = &c->t[i];
        fprintf(stderr, "  tensor %d %s%s dtype %d format %d dims [", i, ft->is_output ? "out" : "in",
                ft->present ? "" : " NULL", ft->dtype, ft->format);
        for (uint64_t d = 0; d < ft->ndim; d++)
            fprintf(stderr, d ? ",%ld" : "%ld", (long)ft->dims[d]);
        fprintf(stderr, "] strides %s[", ft->null_strides ? "NULL " : "");
        for (uint64_t d = 0; d < ft->ndim; d++)
            fprintf(stderr, d ? ",%ld" : "%ld", (long)ft->strides[d]);
        fprintf(stderr, "] offset %ld storage [", (long)ft->offset);
        for (uint64_t d = 0; d < ft->sdim; d++)
            fprintf(stderr, d ? ",%ld" : "%ld", (long)ft->sdims[d]);
        fprintf(stderr, "] bytes %zu created %d\n", ft->bytes, ft->t != NULL);
    }
    for (int i = 0; i < c->na; i++) {
        fprintf(stderr, "  array %d%s [", i, c->a[i].present ? "" : " NULL");
        for (uint64_t k = 0; k < c->a[i].size; k++)
            fprintf(stderr, k ? ",%ld" : "%ld", (long)c->a[i].values[k]);
        fprintf(stderr, "]\n");
    }
}

/* Destroys one present tensor or array argument before the call, leaving its dangling pointer in
 * place: phase 1 must refuse it without reading it (ASan would see the read).  False when the
 * call has no such argument. */
static bool destroy_one_argument(reader *r, call *c)
{
    int pick = u8(r) % (c->nt + c->na);
    for (int tries = 0; tries < c->nt + c->na; tries++, pick = (pick + 1) % (c->nt + c->na)) {
        if (pick < c->nt && c->t[pick].t != NULL) {
            aclDestroyTensor(c->t[pick].t);
            c->t[pick].stale = true;
            return true;
        }
        if (pick >= c->nt && c->a[pick - c->nt].a != NULL) {
            aclDestroyIntArray(c->a[pick - c->nt].a);
            c->a[pick - c->nt].stale = true;
            return true;
        }
    }
    return false;
}

static void run_call(reader *r, call *c, uint32_t seed)
{
    decode(r, c);
    for (int i = 0; i < c->nt; i++)
        realize(r, &c->t[i], c->chaos, &seed);
    plant_mask(r, c, &seed);
    const bool stale = c->chaos && coin(r, 24) && destroy_one_argument(r, c);
    c->null_ws_ptr = c->chaos && coin(r, 32);
    c->null_exec_ptr = c->chaos && coin(r, 32);
    c->exec_mode = u8(r) % 6;
    c->ws_mode = c->chaos ? u8(r) : 0;
    c->stream = coin(r, 4) ? NULL : g_stream;
    /* Read last, so that the corpus written before products were fuzzed decodes as before. */
    const uint8_t product = u8(r);
    c->product = product < 160 ? P_910B : 1 + product % 4;
    if (aclnnCpuSetSocVersion(PRODUCTS[c->product]) != ACLNN_SUCCESS)
        FAIL("aclnnCpuSetSocVersion(%s) failed: %s", PRODUCTS[c->product], aclGetRecentErrMsg());
    dump_call(c);

    uint64_t ws_size = 0xdeadbeef;
    aclOpExecutor *const sentinel = (aclOpExecutor *)(uintptr_t)0x5a5a5a50;
    aclOpExecutor *ex = sentinel;
    int status = phase1(c, c->null_ws_ptr ? NULL : &ws_size, c->null_exec_ptr ? NULL : &ex);
    if (g_verbose)
        fprintf(stderr, "  phase 1 -> %d, workspace %lu\n", status, (unsigned long)ws_size);
    expect_message(OP_NAMES[c->op], status);
    g_calls[c->op]++;
    g_phase1_ok[c->op] += status == 0;
    if (stale && status != ACLNN_ERR_PARAM_INVALID && status != ACLNN_ERR_PARAM_NULLPTR)
        FAIL("%sGetWorkspaceSize returned %d for a destroyed argument", OP_NAMES[c->op], status);
    if (status != 0) {
        if (ex != sentinel)
            FAIL("%sGetWorkspaceSize failed (%d) but wrote *executor", OP_NAMES[c->op], status);
    } else if (c->null_ws_ptr || c->null_exec_ptr) {
        FAIL("%sGetWorkspaceSize succeeded with a NULL workspaceSize/executor pointer", OP_NAMES[c->op]);
    } else if (ex == NULL || ex == sentinel) {
        FAIL("%sGetWorkspaceSize succeeded without an executor", OP_NAMES[c->op]);
    }
    for (int i = 0; i < c->nt; i++) /* phase 1 never touches data */
        check_storage(&c->t[i], "phase 1");
    /* Arrays may be destroyed right after phase 1 (the executor holds copies). */
    for (int i = 0; i < c->na; i++) {
        if (!c->a[i].stale)
            aclDestroyIntArray(c->a[i].a);
        c->a[i].a = NULL;
        c->a[i].stale = false;
    }
    void *ws_buf = NULL;
    if (status == 0) {
        if (c->exec_mode != 5 && too_heavy_to_run(c, ws_size))
            c->exec_mode = 4;
        if (c->exec_mode == 1 && aclSetAclOpExecutorRepeatable(ex) != 0)
            FAIL("aclSetAclOpExecutorRepeatable failed: %s", aclGetRecentErrMsg());
        if (c->exec_mode == 4) { /* never run: destroy it */
            int st = aclDestroyAclOpExecutor(ex);
            expect_message("aclDestroyAclOpExecutor", st);
        } else if (c->exec_mode == 5) { /* phase 2 with a NULL executor */
            int st = PHASE2[c->op](NULL, 0, NULL, c->stream);
            if (st == 0)
                FAIL("%s accepted a NULL executor", OP_NAMES[c->op]);
            expect_message(OP_NAMES[c->op], st);
            aclDestroyAclOpExecutor(ex);
            aclGetRecentErrMsg();
        } else {
            int st = run_phase2(c, ex, ws_size, &ws_buf);
            bool ok = st == 0;
            g_phase2_ok[c->op] += ok;
            for (int i = 0; i < c->nt; i++)
                check_storage(&c->t[i], "phase 2");
            if (ok)
                check_result(c);
            if (c->exec_mode == 1) { /* repeatable: run again, same result */
                c->ws_mode = 0;
                st = run_phase2(c, ex, ws_size, &ws_buf);
                if (ok && st != 0)
                    FAIL("%s: a repeatable executor failed on its second run (%d)", OP_NAMES[c->op], st);
                if (st == 0)
                    check_result(c);
                if (aclDestroyAclOpExecutor(ex) != 0)
                    FAIL("aclDestroyAclOpExecutor of a repeatable executor failed");
            } else if (c->exec_mode == 2) { /* a consumed executor must be refused */
                st = PHASE2[c->op](ws_buf, ws_size, ex, c->stream);
                if (st == 0)
                    FAIL("%s accepted a consumed executor", OP_NAMES[c->op]);
                expect_message(OP_NAMES[c->op], st);
            }
        }
    }
    aclGetRecentErrMsg();
    if (ws_buf != NULL)
        aclrtFree(ws_buf);
    for (int i = 0; i < c->nt; i++)
        release_tensor(&c->t[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (getenv("FUZZ_STATS") != NULL)
        atexit(print_stats);
    setenv("ACLNN_STRICT", "1", 1);
    setenv("ACLNN_NUM_THREADS", "1", 0);
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 0); /* quiet: errors are checked, not printed */
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&g_stream) != ACL_SUCCESS) {
        fprintf(stderr, "fuzz_ops: runtime set-up failed: %s\n", aclGetRecentErrMsg());
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    call c;
    memset(&c, 0, sizeof c);
    c.op = u8(&r) % 10;
    c.chaos = u8(&r) % 4 == 0 ? 0 : 1;
    uint32_t seed = u16(&r);
    run_call(&r, &c, seed);
    return 0;
}
