/*
 * nn_meta.h - the layout of the aclnn meta objects (aclTensor, aclIntArray, ...).
 *
 * The public headers only declare these types as opaque; the definitions live here so that the
 * executor and the operators can read them directly.  Every object is recorded in the registry
 * of live handles (handles.c) from its creation to its destruction, and every entry point looks
 * a handle up there before reading a field, so a stale, foreign or wrong-kind pointer is a
 * status and a message instead of a crash.
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

struct aclTensor {
    aclDataType dtype;
    aclFormat format;
    uint64_t ndim;                        /* view rank; 0 = scalar tensor */
    int64_t dims[NN_MAX_DIMS];            /* view shape */
    int64_t strides[NN_MAX_DIMS];         /* view strides, in elements */
    int64_t offset;                       /* view offset, in elements */
    uint64_t storage_ndim;
    int64_t storage_dims[NN_MAX_DIMS];
    void *data;                           /* tensorData: the storage base address */
    uint64_t serial;                      /* unique per aclCreateTensor: tells a reused address */
};

struct aclIntArray   { uint64_t size; int64_t *values; };
struct aclFloatArray { uint64_t size; float *values; };
struct aclBoolArray  { uint64_t size; bool *values; };

struct aclScalar {
    aclDataType dtype;
    unsigned char bytes[16];              /* the value, as copied at creation */
};

struct aclTensorList { uint64_t size; aclTensor **items; };
struct aclScalarList { uint64_t size; aclScalar **items; };

/* ---- the registry of live handles (handles.c) ------------------------------------------------
 * Every meta object is added when it is created and removed when it is destroyed; entry points
 * look a handle up here before reading any of its fields. */
typedef enum nn_handle_kind {
    NN_HANDLE_NONE = 0, /* not a live handle */
    NN_HANDLE_TENSOR,
    NN_HANDLE_INT_ARRAY,
    NN_HANDLE_FLOAT_ARRAY,
    NN_HANDLE_BOOL_ARRAY,
    NN_HANDLE_SCALAR,
    NN_HANDLE_TENSOR_LIST,
    NN_HANDLE_SCALAR_LIST,
} nn_handle_kind;

/* Memory for a meta object (at most 4 KiB, zeroed) at an address never handed out before or
 * again, and its release (handle_space.c): a stale pointer can never name a later object.
 * NULL when out of memory. */
void *nn_handle_alloc(size_t size);
void nn_handle_free(void *object);

/* Records a new handle; false (out of memory) leaves it unrecorded. */
bool nn_handle_add(const void *handle, nn_handle_kind kind);
/* Forgets `handle` if it is live with `kind`; returns the kind it had (NN_HANDLE_NONE when it
 * was not live): only a result equal to `kind` means the caller may free it. */
nn_handle_kind nn_handle_remove(const void *handle, nn_handle_kind kind);
/* The kind of a live handle, NN_HANDLE_NONE for NULL, destroyed or foreign pointers. */
nn_handle_kind nn_handle_kind_of(const void *handle);
/* "aclTensor", ... for messages. */
const char *nn_handle_kind_name(nn_handle_kind kind);
/* NULL when `handle` is a live handle of `expected` kind; otherwise what it is, for a message:
 * "a destroyed or foreign handle", "an aclIntArray", ... */
const char *nn_handle_problem(const void *handle, nn_handle_kind expected);
/* ACLNN_SUCCESS when `handle` is live with `kind`; else ACLNN_ERR_PARAM_INVALID and the message
 * "<fn>: <name> must be a live <kind>, got <what it is> (<ptr>)."  NULL is the caller's case. */
aclnnStatus nn_handle_check(const char *fn, const char *name, const void *handle,
                          nn_handle_kind kind);
/* Records a freshly created object and returns it; on failure frees it, reports "<fn>: out of
 * memory." and returns NULL.  NULL in, NULL out. */
void *nn_handle_register(void *object, nn_handle_kind kind, const char *fn);
/* For a destroy: forgets a live handle of `kind` (the caller then frees it) or reports
 * "<fn>: <name> <ptr> is not a live <kind> (it is ...)." with ACLNN_ERR_PARAM_INVALID. */
aclnnStatus nn_handle_release(const char *fn, const char *name, const void *handle,
                              nn_handle_kind kind);

/* The storage address of each tensor tensors[i] that is still the one created with serials[i]
 * (aclSetRawTensorAddr / aclSet*TensorAddr may have changed it since), read under the registry
 * lock so that a concurrent aclDestroyTensor cannot free it meanwhile.  NULL entries are
 * skipped.  Returns the index of the first tensor destroyed since (its address may hold another
 * tensor by now), or `count` when all are alive. */
size_t nn_tensors_current_data(const aclTensor *const *tensors, const uint64_t *serials, size_t count,
                               void **data);

/* Liveness checks (NULL is not alive). */
static inline bool nn_tensor_alive(const aclTensor *t) { return nn_handle_kind_of(t) == NN_HANDLE_TENSOR; }
static inline bool nn_int_array_alive(const aclIntArray *a)
{
    return nn_handle_kind_of(a) == NN_HANDLE_INT_ARRAY;
}

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
