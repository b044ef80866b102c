/*
 * max_pool_common.h - what aclnnMaxPool2dWithMask and its backward share: attribute
 * normalisation, the pooled-size rule, the mask container size, the format/dtype tests and the
 * argument checks both ops run in the same order as CANN's op_api.
 *
 * The mask (docs/compatibility.md, MaxPool2dWithMask): an INT8 container
 * [N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)] whose first 4*N*C*Ho*Wo bytes are little-endian int32
 * argmax values ih*W+iw in N, C, Ho, Wo order; the rest is zero.  A 1x1 kernel uses the legacy
 * bit-mask pattern instead and the backward does not read it.  Ascend910/310P write the V1 bit
 * mask instead (kernels/max_pool/mask_v1.h), as the product's row says.
 */
#ifndef NN_MAX_POOL_COMMON_H
#define NN_MAX_POOL_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "exec/nn_exec.h"
#include "ops/checks.h"
#include "ops/products.h"
#include "kernels/max_pool/max_pool.h"
#include "kernels/max_pool/max_pool_bw.h"
#include "kernels/max_pool/max_pool_fw.h"

/* Status a bad mask index reports at synchronize: what an NPU raises for an out-of-bounds access
 * in an AI-core kernel. */
#ifndef ACL_ERROR_RT_AICORE_EXCEPTION
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#endif

/* Normalised attributes (as CANN's op_api normalises them). */
typedef struct mp_attrs {
    int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
} mp_attrs;


/* The dtype checks both ops run in CANN's order: self in the product's list (pr, ops/products.c;
 * an empty list gets CANN's message), each of `like_self` self's dtype, indices INT8 for the mask
 * or one of the product's index dtypes for the indices variant. */
static inline aclnnStatus mp_check_dtypes(const char *op, const nn_product *pr, const aclTensor *self,
                                          const nn_arg *like_self, size_t count, const aclTensor *indices,
                                          bool is_mask)
{
    static const aclDataType mask_dtype[1] = {ACL_INT8};
    aclnnStatus st = pr->dtypes.count == 0 ? nn_check_product_dtype(op, pr, "self", self)
                                           : nn_check_dtype_one_of(op, "self", self, pr->dtypes.list, pr->dtypes.count);
    for (size_t i = 0; st == ACLNN_SUCCESS && i < count; i++)
        st = nn_check_same_dtype(op, like_self[i].name, (const aclTensor *)like_self[i].handle, "self", self);
    if (st == ACLNN_SUCCESS)
        st = is_mask ? nn_check_dtype_one_of(op, "indices", indices, mask_dtype, 1)
                     : nn_check_dtype_one_of(op, "indices", indices, pr->index_dtypes.list, pr->index_dtypes.count);
    return st;
}

/* PyTorch's pooling_output_shape with symmetric padding and dilation d (effective kernel
 * d*(k-1)+1), including the ceil-mode rule "the last window must start inside the input or the
 * left padding".  Returns false when the arithmetic would overflow int64 (absurd attribute
 * values). */
static inline bool mp_pooled_size(int64_t in, int64_t k, int64_t d, int64_t pad, int64_t stride, bool ceil_mode,
                                  int64_t *out)
{
    int64_t both_pads, span, reach, num;
    if (__builtin_mul_overflow(pad, 2, &both_pads) || __builtin_add_overflow(in, both_pads, &span) ||
        __builtin_mul_overflow(d, k - 1, &reach) || __builtin_sub_overflow(span, reach, &num) ||
        __builtin_sub_overflow(num, 1, &num))
        return false;
    if (ceil_mode && __builtin_add_overflow(num, stride - 1, &num)) return false;
    int64_t o = nn_floor_div(num, stride) + 1;
    if (ceil_mode && o > 0) {
        int64_t start;
        if (!__builtin_mul_overflow(o - 1, stride, &start) && start >= in + pad) --o;
    }
    *out = o;
    return true;
}

/* Reads the normalised attributes (sizes already checked: kernel 1/2, stride 0/1/2, padding
 * 1/2, dilation 1/2). */
static inline mp_attrs mp_read_attrs(const aclIntArray *kernel, const aclIntArray *stride,
                                     const aclIntArray *padding, const aclIntArray *dilation)
{
    mp_attrs a;
    a.kernel_h = kernel->values[0];
    a.kernel_w = kernel->size == 1 ? a.kernel_h : kernel->values[1];
    a.stride_h = stride->size == 0 ? a.kernel_h : stride->values[0];
    a.stride_w = stride->size == 0 ? a.kernel_w : (stride->size == 1 ? a.stride_h : stride->values[1]);
    a.pad_h = padding->values[0];
    a.pad_w = padding->size == 1 ? a.pad_h : padding->values[1];
    a.dilation_h = dilation->values[0];
    a.dilation_w = dilation->size == 1 ? a.dilation_h : dilation->values[1];
    return a;
}

/* The attribute checks both ops run in the same order (CANN's CheckShape, first half):
 * array sizes, kernel > 0, stride > 0, 0 <= pad <= k/2, dilation == 1 (or, where the product
 * row says any_dilation, dilation > 0 with CANN's own message). */
static inline aclnnStatus mp_check_attrs(const char *op, const aclIntArray *kernel, const aclIntArray *stride,
                                         const aclIntArray *padding, const aclIntArray *dilation, bool any_dilation,
                                         mp_attrs *attrs)
{
    if (kernel->size != 1 && kernel->size != 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: kernelSize must have 1 or 2 elements, got %llu.", op,
                        (unsigned long long)kernel->size);
    if (stride->size > 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: stride must have 0, 1 or 2 elements, got %llu.", op,
                        (unsigned long long)stride->size);
    if (padding->size != 1 && padding->size != 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: padding must have 1 or 2 elements, got %llu.", op,
                        (unsigned long long)padding->size);
    if (dilation->size != 1 && dilation->size != 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: dilation must have 1 or 2 elements, got %llu.", op,
                        (unsigned long long)dilation->size);
    mp_attrs a = mp_read_attrs(kernel, stride, padding, dilation);
    if (a.kernel_h <= 0 || a.kernel_w <= 0)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: kernelSize values must be greater than 0, got kH=%lld, kW=%lld.",
                        op, (long long)a.kernel_h, (long long)a.kernel_w);
    if (a.stride_h <= 0 || a.stride_w <= 0)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: stride values must be greater than 0, got sH=%lld, sW=%lld.", op,
                        (long long)a.stride_h, (long long)a.stride_w);
    if (a.pad_h < 0 || a.pad_w < 0 || a.pad_h > a.kernel_h / 2 || a.pad_w > a.kernel_w / 2)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: padding must be >= 0 and <= half of kernelSize, got kH=%lld, kW=%lld, padH=%lld, padW=%lld.",
                        op, (long long)a.kernel_h, (long long)a.kernel_w, (long long)a.pad_h, (long long)a.pad_w);
    if (any_dilation && (a.dilation_h <= 0 || a.dilation_w <= 0))
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: dilation should be greater than 0, got dilationH=%lld, dilationW=%lld.", op,
                        (long long)a.dilation_h, (long long)a.dilation_w);
    if (!any_dilation && (a.dilation_h != 1 || a.dilation_w != 1))
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: dilation only supports 1, got dilationH=%lld, dilationW=%lld.",
                        op, (long long)a.dilation_h, (long long)a.dilation_w);
    *attrs = a;
    return ACLNN_SUCCESS;
}

/* Logical N, C, H, W of a 3-D [C, H, W] or 4-D [N, C, H, W] tensor (rank already checked); with
 * channels_last, of a 3-D [H, W, C] or 4-D [N, H, W, C] one (CANN's NHWC reading of the view). */
static inline void mp_logical_dims(const aclTensor *t, bool channels_last, int64_t *n, int64_t *c, int64_t *h,
                                   int64_t *w)
{
    bool is_3d = t->ndim == 3;
    int64_t first = is_3d ? 0 : 1; /* the first non-batch dimension */
    *n = is_3d ? 1 : t->dims[0];
    *c = t->dims[channels_last ? first + 2 : first];
    *h = t->dims[channels_last ? first : first + 1];
    *w = t->dims[channels_last ? first + 1 : first + 2];
}

/* C, H, W != 0, then the pooled sizes (> 0). Fills g from self (read as NHWC when
 * channels_last) and the attributes. */
static inline aclnnStatus mp_check_pooled_geometry(const char *op, const aclTensor *self, const mp_attrs *a,
                                                   bool ceil_mode, bool channels_last, mp_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->is_3d = self->ndim == 3;
    g->channels_last = channels_last;
    mp_logical_dims(self, channels_last, &g->batch, &g->channels, &g->height, &g->width);
    if (g->channels == 0 || g->height == 0 || g->width == 0)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: self must have non-zero C, H and W (only the batch dimension may be 0), got C=%lld, "
                        "H=%lld, W=%lld.",
                        op, (long long)g->channels, (long long)g->height, (long long)g->width);
    g->kernel_h = a->kernel_h; g->kernel_w = a->kernel_w;
    g->stride_h = a->stride_h; g->stride_w = a->stride_w;
    g->pad_h = a->pad_h; g->pad_w = a->pad_w;
    g->dilation_h = a->dilation_h; g->dilation_w = a->dilation_w;
    g->ceil_mode = ceil_mode;
    return ACLNN_SUCCESS;
}

/* The pooled sizes (with g's dilation) and the size limits.  allow_large_planes (the product
 * row's large_planes): no INT_MAX check on the plane; g->large_planes then says whether the plane
 * needs 64-bit index arithmetic. */
static inline aclnnStatus mp_check_out_size(const char *op, mp_geometry *g, bool allow_large_planes)
{
    bool ok = mp_pooled_size(g->height, g->kernel_h, g->dilation_h, g->pad_h, g->stride_h, g->ceil_mode,
                             &g->out_height) &&
              mp_pooled_size(g->width, g->kernel_w, g->dilation_w, g->pad_w, g->stride_w, g->ceil_mode,
                             &g->out_width);
    if (!ok)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: kernelSize/stride/padding values are too large to compute the "
                        "output size for input %lldx%lldx%lld.", op,
                        (long long)g->channels, (long long)g->height, (long long)g->width);
    if (g->out_height <= 0 || g->out_width <= 0)
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "%s: output size must be positive: given input size %lldx%lldx%lld, calculated output size "
                        "%lldx%lldx%lld.",
                        op, (long long)g->channels, (long long)g->height, (long long)g->width, (long long)g->channels,
                        (long long)g->out_height, (long long)g->out_width);
    /* The mask and the A2/A3 kernels store int32 argmax values, so a plane must have fewer than
     * 2^31 cells (CANN: "product of depth, height and width can't be greater than INT_MAX"). */
    int64_t plane, out_plane;
    bool planes_overflow = __builtin_mul_overflow(g->height, g->width, &plane) ||
                           __builtin_mul_overflow(g->out_height, g->out_width, &out_plane);
    g->large_planes = !planes_overflow && (plane > INT32_MAX || out_plane > INT32_MAX);
    if (planes_overflow || (g->large_planes && !allow_large_planes))
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: self plane H*W = %lldx%lld is too large: the mask holds int32 "
                        "indices, so H*W must be below 2^31.", op, (long long)g->height, (long long)g->width);
    /* Keep every later product (mask bytes, plane sizes) far from int64 overflow. */
    int64_t window, mask, total;
    if (__builtin_mul_overflow(g->kernel_h, g->kernel_w, &window) ||
        __builtin_mul_overflow(g->out_height, g->out_width, &mask) || mask > ((int64_t)1 << 40) ||
        __builtin_mul_overflow(window, mp_mask_row_bytes(g), &mask) ||
        __builtin_mul_overflow(mask, g->channels, &total) ||
        __builtin_mul_overflow(total, g->batch > 0 ? g->batch : 1, &total))
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: kernelSize %lldx%lld is too large: the mask size overflows.", op,
                        (long long)g->kernel_h, (long long)g->kernel_w);
    return ACLNN_SUCCESS;
}

/* Fills dims with the pooled shape in self's rank (and layout). Returns the rank. */
static inline uint64_t mp_pooled_shape(const mp_geometry *g, int64_t *dims)
{
    uint64_t r = 0;
    if (!g->is_3d) dims[r++] = g->batch;
    if (!g->channels_last) dims[r++] = g->channels;
    dims[r++] = g->out_height;
    dims[r++] = g->out_width;
    if (g->channels_last) dims[r++] = g->channels;
    return r;
}

static inline uint64_t mp_mask_shape(const mp_geometry *g, int64_t *dims)
{
    uint64_t r = 0;
    if (!g->is_3d) dims[r++] = g->batch;
    dims[r++] = g->channels;
    dims[r++] = g->kernel_h * g->kernel_w;
    dims[r++] = mp_mask_row_bytes(g);
    return r;
}

static inline bool mp_shape_equals(const aclTensor *t, uint64_t ndim, const int64_t *dims)
{
    if (t->ndim != ndim) return false;
    for (uint64_t i = 0; i < ndim; ++i)
        if (t->dims[i] != dims[i]) return false;
    return true;
}

/* "Expected tensor for <name> to have same size as [..], but got [..]" in our words. */
static inline aclnnStatus mp_shape_error(const char *op, const char *name, const aclTensor *t, uint64_t ndim,
                                         const int64_t *dims)
{
    char want[160], got[160];
    nn_shape_str(want, sizeof want, ndim, dims);
    nn_shape_str(got, sizeof got, t->ndim, t->dims);
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must have shape %s, got %s.", op, name, want, got);
}

#endif /* NN_MAX_POOL_COMMON_H */
