/*
 * tensor.c - aclTensor: creation with CANN's view semantics, re-initialisation, getters.
 *
 * A tensor is a view (shape, strides and offset in elements) into a storage buffer of
 * prod(storageDims) elements at tensorData.  Creation rejects (NULL + a recent-error message)
 * every view that could make a kernel read or write outside that storage, using opbase's rule:
 *     offset + sum(max(0, stride_i * (dim_i - 1))) + 1 <= prod(storageDims)
 *     offset + sum(min(0, stride_i * (dim_i - 1)))     >= 0
 * (not applied to an empty view, which touches nothing, nor to a view with a negative dim, which
 * CANN accepts too and every operator rejects).  Storage dims may be negative only when they
 * equal such a view's dims (how CANN's op_api test harness builds it: a tensor owning no data).
 *
 * The shape getters return arrays the caller frees with C++ `delete[]`, as CANN's docs show;
 * this C library therefore allocates them with the C++ runtime's operator new[] when the
 * process has it (weak reference), and offers aclnnCpuFreeArray for C and Python callers.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/nn_base.h"
#include "meta/nn_meta.h"

/* ---- validation ------------------------------------------------------------------------------ */

typedef struct {
    uint64_t ndim;
    int64_t dims[NN_MAX_DIMS];
    int64_t strides[NN_MAX_DIMS];
    int64_t offset;
    uint64_t storage_ndim;
    int64_t storage_dims[NN_MAX_DIMS];
    aclDataType dtype;
    aclFormat format;
} tensor_desc;

/* Row-major strides.  An overflowing shape gets garbage strides (no UB): validate_desc
 * rejects it on its element count before the strides are looked at. */
static void contiguous_strides(uint64_t ndim, const int64_t *dims, int64_t *strides)
{
    int64_t step = 1;
    for (uint64_t i = ndim; i-- > 0;) {
        strides[i] = step;
        (void)__builtin_mul_overflow(step, dims[i] > 1 ? dims[i] : 1, &step);
    }
}

/* Element count with overflow detection; false if a dim is negative (unless allow_negative:
 * then *numel is -1) or the product (or its byte size) overflows. */
static bool checked_numel(const char *fn, const char *what, uint64_t ndim, const int64_t *dims,
                          size_t elem_size, bool allow_negative, int64_t *numel)
{
    int64_t count = 1;
    for (uint64_t i = 0; i < ndim; i++) {
        if (dims[i] < 0 && allow_negative) {
            *numel = -1;
            return true;
        }
        if (dims[i] < 0) {
            nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s[%llu] must be non-negative, got %lld.", fn, what,
                     (unsigned long long)i, (long long)dims[i]);
            return false;
        }
        if (__builtin_mul_overflow(count, dims[i], &count)) {
            nn_error(ACLNN_ERR_PARAM_INVALID, "%s: the element count of %s overflows int64.", fn, what);
            return false;
        }
    }
    int64_t bytes;
    if (__builtin_mul_overflow(count, (int64_t)elem_size, &bytes)) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: the byte size of %s overflows int64.", fn, what);
        return false;
    }
    *numel = count;
    return true;
}

/* Checks a complete description; on failure records a message and returns false. */
static bool validate_desc(const char *fn, const tensor_desc *d)
{
    size_t elem_size = nn_dtype_size(d->dtype);
    if (!nn_dtype_is_known(d->dtype) || elem_size == 0) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: dataType %d (%s) is not a data type a tensor can hold.",
                 fn, (int)d->dtype, nn_dtype_name(d->dtype));
        return false;
    }
    if (!nn_format_is_known(d->format)) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: format %d is not a known aclFormat.", fn, (int)d->format);
        return false;
    }
    /* CANN's op_api test harness builds every tensor with storage dims = view dims, so a view
     * with a negative dim comes with the same negative storage dims: such a tensor owns no data,
     * and only that exact pairing is accepted (a negative storage dim under a real view would
     * describe a storage no size can be computed for). */
    bool storage_is_view = d->storage_ndim == d->ndim &&
                           (d->ndim == 0 || memcmp(d->storage_dims, d->dims, sizeof(int64_t) * d->ndim) == 0);
    int64_t view_numel, storage_numel;
    if (!checked_numel(fn, "viewDims", d->ndim, d->dims, elem_size, true, &view_numel) ||
        !checked_numel(fn, "storageDims", d->storage_ndim, d->storage_dims, elem_size,
                       view_numel < 0 && storage_is_view, &storage_numel))
        return false;
    /* An empty view touches no memory.  A negative view dim is accepted as CANN accepts it (the
     * tensor describes no memory either): every operator rejects it in its checks (ops/checks.c)
     * before any size arithmetic, and no range check is made here. */
    if (view_numel <= 0)
        return true;

    int64_t lo = d->offset, hi = d->offset;
    bool overflow = false;
    for (uint64_t i = 0; i < d->ndim; i++) {
        int64_t reach;
        overflow |= __builtin_mul_overflow(d->strides[i], d->dims[i] - 1, &reach);
        if (reach > 0)
            overflow |= __builtin_add_overflow(hi, reach, &hi);
        else
            overflow |= __builtin_add_overflow(lo, reach, &lo);
    }
    char view[300], strides[300], storage[300];
    if (overflow || lo < 0 || hi >= storage_numel) {
        nn_error(ACLNN_ERR_PARAM_INVALID,
                 "%s: the view (shape %s, strides %s, offset %lld) must lie inside the storage of "
                 "%lld elements (storageDims %s), but it reaches elements %s%lld..%lld.",
                 fn, nn_shape_str(view, sizeof view, d->ndim, d->dims),
                 nn_shape_str(strides, sizeof strides, d->ndim, d->strides), (long long)d->offset,
                 (long long)storage_numel, nn_shape_str(storage, sizeof storage, d->storage_ndim, d->storage_dims),
                 overflow ? "(overflow) " : "", (long long)lo, (long long)hi);
        return false;
    }
    return true;
}

/* Fills `d` from the creation arguments; view/storage arrays may be NULL only with count 0,
 * unless `keep` is given (aclInitTensor), whose fields then stay. */
static bool build_desc(const char *fn, tensor_desc *d, const aclTensor *keep, const int64_t *viewDims,
                       uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride, int64_t offset,
                       aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum)
{
    memset(d, 0, sizeof *d);
    if (viewDims == NULL && viewDimsNum > 0) {
        nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: viewDims is null but viewDimsNum is %llu.", fn,
                 (unsigned long long)viewDimsNum);
        return false;
    }
    if (storageDims == NULL && storageDimsNum > 0) {
        nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: storageDims is null but storageDimsNum is %llu.", fn,
                 (unsigned long long)storageDimsNum);
        return false;
    }
    if (viewDimsNum > NN_MAX_DIMS) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: viewDimsNum must be at most %d, got %llu.", fn,
                 NN_MAX_DIMS, (unsigned long long)viewDimsNum);
        return false;
    }
    if (storageDimsNum > NN_MAX_DIMS) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: storageDimsNum must be at most %d, got %llu.", fn,
                 NN_MAX_DIMS, (unsigned long long)storageDimsNum);
        return false;
    }
    d->dtype = dataType;
    d->format = format;
    d->offset = offset;
    if (keep != NULL && viewDims == NULL) {
        d->ndim = keep->ndim;
        memcpy(d->dims, keep->dims, sizeof d->dims);
    } else {
        d->ndim = viewDimsNum;
        if (viewDimsNum > 0)
            memcpy(d->dims, viewDims, sizeof(int64_t) * viewDimsNum);
    }
    if (keep != NULL && storageDims == NULL) {
        d->storage_ndim = keep->storage_ndim;
        memcpy(d->storage_dims, keep->storage_dims, sizeof d->storage_dims);
    } else {
        d->storage_ndim = storageDimsNum;
        if (storageDimsNum > 0)
            memcpy(d->storage_dims, storageDims, sizeof(int64_t) * storageDimsNum);
    }
    if (stride != NULL) {
        memcpy(d->strides, stride, sizeof(int64_t) * d->ndim);
    } else {
        contiguous_strides(d->ndim, d->dims, d->strides);
    }
    return validate_desc(fn, d);
}

static void apply_desc(aclTensor *t, const tensor_desc *d)
{
    t->dtype = d->dtype;
    t->format = d->format;
    t->ndim = d->ndim;
    memcpy(t->dims, d->dims, sizeof t->dims);
    memcpy(t->strides, d->strides, sizeof t->strides);
    t->offset = d->offset;
    t->storage_ndim = d->storage_ndim;
    memcpy(t->storage_dims, d->storage_dims, sizeof t->storage_dims);
}

/* ---- creation ---------------------------------------------------------------------------------- */

NN_EXPORT aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                     const int64_t *stride, int64_t offset, aclFormat format,
                                     const int64_t *storageDims, uint64_t storageDimsNum,
                                     void *tensorData)
{
    tensor_desc d;
    if (!build_desc("aclCreateTensor", &d, NULL, viewDims, viewDimsNum, dataType, stride, offset,
                    format, storageDims, storageDimsNum))
        return NULL;
    aclTensor *t = nn_handle_alloc(sizeof *t);
    if (t == NULL) {
        nn_error(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensor: out of memory.");
        return NULL;
    }
    static atomic_uint_fast64_t next_serial = 1;
    apply_desc(t, &d);
    t->data = tensorData;
    t->serial = atomic_fetch_add(&next_serial, 1);
    return nn_handle_register(t, NN_HANDLE_TENSOR, "aclCreateTensor");
}

NN_EXPORT aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum,
                                    aclDataType dataType, const int64_t *stride, int64_t offset,
                                    aclFormat format, const int64_t *storageDims,
                                    uint64_t storageDimsNum, void *tensorDataAddr)
{
    if (tensor == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclInitTensor: tensor must not be null.");
    aclnnStatus st = nn_handle_check("aclInitTensor", "tensor", tensor, NN_HANDLE_TENSOR);
    if (st != ACLNN_SUCCESS)
        return st;
    tensor_desc d;
    if (!build_desc("aclInitTensor", &d, tensor, viewDims, viewDimsNum, dataType, stride, offset, format,
                    storageDims, storageDimsNum))
        return ACLNN_ERR_PARAM_INVALID;
    apply_desc(tensor, &d);
    if (tensorDataAddr != NULL)
        tensor->data = tensorDataAddr;
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    if (tensor == NULL)
        return ACLNN_SUCCESS;
    aclnnStatus st = nn_handle_release("aclDestroyTensor", "tensor", tensor, NN_HANDLE_TENSOR);
    if (st == ACLNN_SUCCESS)
        nn_handle_free((aclTensor *)(uintptr_t)tensor);
    return st;
}

/* ---- getters ----------------------------------------------------------------------------------- */

/* The C++ runtime's nothrow operator new[] / operator delete[], if the process has them. */
extern void *_ZnamRKSt9nothrow_t(size_t size, const void *tag) __attribute__((weak));
extern void _ZdaPv(void *p) __attribute__((weak));
extern const char _ZSt7nothrow __attribute__((weak));

static bool use_cxx_allocator(void)
{
    return _ZnamRKSt9nothrow_t != NULL && _ZdaPv != NULL && &_ZSt7nothrow != NULL;
}

static int64_t *alloc_array(uint64_t count)
{
    size_t bytes = (size_t)count * sizeof(int64_t);
    if (use_cxx_allocator())
        return _ZnamRKSt9nothrow_t(bytes, &_ZSt7nothrow);
    return malloc(bytes ? bytes : 1);
}

NN_EXPORT void aclnnCpuFreeArray(int64_t *array)
{
    if (array == NULL)
        return;
    if (use_cxx_allocator())
        _ZdaPv(array);
    else
        free(array);
}

typedef enum { VIEW_SHAPE, STORAGE_SHAPE, VIEW_STRIDES } shape_field;

/* The getters of shape arrays: the tensor is looked up before any field is read. */
static aclnnStatus copy_out_array(const char *fn, const aclTensor *tensor, int64_t **values,
                                  uint64_t *count, shape_field field)
{
    if (tensor == NULL || values == NULL || count == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s must not be null.", fn,
                        tensor == NULL ? "tensor" : values == NULL ? "the array out-pointer"
                                                                   : "the count out-pointer");
    aclnnStatus st = nn_handle_check(fn, "tensor", tensor, NN_HANDLE_TENSOR);
    if (st != ACLNN_SUCCESS)
        return st;
    const int64_t *source = field == VIEW_SHAPE ? tensor->dims
                            : field == STORAGE_SHAPE ? tensor->storage_dims : tensor->strides;
    const uint64_t n = field == STORAGE_SHAPE ? tensor->storage_ndim : tensor->ndim;
    int64_t *array = alloc_array(n);
    if (array == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of memory.", fn);
    if (n > 0)
        memcpy(array, source, sizeof(int64_t) * n);
    *values = array;
    *count = n;
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    return copy_out_array("aclGetViewShape", tensor, viewDims, viewDimsNum, VIEW_SHAPE);
}

NN_EXPORT aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                         uint64_t *storageDimsNum)
{
    return copy_out_array("aclGetStorageShape", tensor, storageDims, storageDimsNum, STORAGE_SHAPE);
}

NN_EXPORT aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                        uint64_t *stridesNum)
{
    return copy_out_array("aclGetViewStrides", tensor, stridesValue, stridesNum, VIEW_STRIDES);
}

/* Shared NULL / liveness check of the scalar getters. */
static aclnnStatus check_getter(const char *fn, const aclTensor *tensor, const void *out)
{
    if (tensor == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: tensor must not be null.", fn);
    if (out == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: the out-pointer must not be null.", fn);
    return nn_handle_check(fn, "tensor", tensor, NN_HANDLE_TENSOR);
}

NN_EXPORT aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    aclnnStatus st = check_getter("aclGetViewOffset", tensor, offset);
    if (st == ACLNN_SUCCESS)
        *offset = tensor->offset;
    return st;
}

NN_EXPORT aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    aclnnStatus st = check_getter("aclGetFormat", tensor, format);
    if (st == ACLNN_SUCCESS)
        *format = tensor->format;
    return st;
}

NN_EXPORT aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    aclnnStatus st = check_getter("aclGetDataType", tensor, dataType);
    if (st == ACLNN_SUCCESS)
        *dataType = tensor->dtype;
    return st;
}

NN_EXPORT aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    if (tensor == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclSetRawTensorAddr: tensor must not be null.");
    aclnnStatus st = nn_handle_check("aclSetRawTensorAddr", "tensor", tensor, NN_HANDLE_TENSOR);
    if (st == ACLNN_SUCCESS)
        tensor->data = addr;
    return st;
}

NN_EXPORT aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    aclnnStatus st = check_getter("aclGetRawTensorAddr", tensor, addr);
    if (st == ACLNN_SUCCESS)
        *addr = tensor->data;
    return st;
}

/* ---- internal helpers ------------------------------------------------------------------------ */

int64_t nn_tensor_numel(const aclTensor *t)
{
    return nn_numel(t->ndim, t->dims);
}

bool nn_tensor_is_empty(const aclTensor *t)
{
    for (uint64_t i = 0; i < t->ndim; i++)
        if (t->dims[i] == 0)
            return true;
    return false;
}

bool nn_tensor_is_contiguous(const aclTensor *t)
{
    return nn_view_is_contiguous(t->ndim, t->dims, t->strides);
}
