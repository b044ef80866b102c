/*
 * nn_meta.h - the layout of the aclnn meta objects (aclTensor, aclIntArray, ...).
 *
 * The public headers only declare these types as opaque; the definitions live here so that the
 * executor and the operators can read them directly.  Every object starts with a magic word that is
 * set while the object is alive and cleared on destroy, so a stale or foreign pointer is caught
 * by the checks instead of being trusted.
 */
#ifndef NN_META_H
#define NN_META_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/acl_meta.h"
#include "base/nn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NN_MAGIC_TENSOR       0x54534e52u /* "TSNR" */
#define NN_MAGIC_INT_ARRAY    0x49415252u
#define NN_MAGIC_FLOAT_ARRAY  0x46415252u
#define NN_MAGIC_BOOL_ARRAY   0x42415252u
#define NN_MAGIC_SCALAR       0x5343414cu
#define NN_MAGIC_TENSOR_LIST  0x544c5354u
#define NN_MAGIC_SCALAR_LIST  0x534c5354u
#define NN_MAGIC_EXECUTOR     0x45584543u

struct aclTensor {
    uint32_t magic;
    aclDataType dtype;
    aclFormat format;
    uint64_t ndim;                        /* view rank; 0 = scalar tensor */
    int64_t dims[NN_MAX_DIMS];            /* view shape */
    int64_t strides[NN_MAX_DIMS];         /* view strides, in elements */
    int64_t offset;                       /* view offset, in elements */
    uint64_t storage_ndim;
    int64_t storage_dims[NN_MAX_DIMS];
    void *data;                           /* tensorData: the storage base address */
};

struct aclIntArray   { uint32_t magic; uint64_t size; int64_t *values; };
struct aclFloatArray { uint32_t magic; uint64_t size; float *values; };
struct aclBoolArray  { uint32_t magic; uint64_t size; bool *values; };

struct aclScalar {
    uint32_t magic;
    aclDataType dtype;
    unsigned char bytes[16];              /* the value, as copied at creation */
};

struct aclTensorList { uint32_t magic; uint64_t size; aclTensor **items; };
struct aclScalarList { uint32_t magic; uint64_t size; aclScalar **items; };

/* Liveness checks (NULL-safe: NULL is not alive). */
static inline bool nn_tensor_alive(const aclTensor *t) { return t && t->magic == NN_MAGIC_TENSOR; }
static inline bool nn_int_array_alive(const aclIntArray *a) { return a && a->magic == NN_MAGIC_INT_ARRAY; }

/* Element count of a tensor's view (1 for a 0-d tensor). */
int64_t nn_tensor_numel(const aclTensor *t);
/* True when any view dimension is 0. */
bool nn_tensor_is_empty(const aclTensor *t);
/* Row-major contiguity test as opbase does it (size-1 dims skipped; 0/1 elements contiguous). */
bool nn_tensor_is_contiguous(const aclTensor *t);

#ifdef __cplusplus
}
#endif

#endif /* NN_META_H */
