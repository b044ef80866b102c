/*
 * array.c - aclIntArray / aclFloatArray / aclBoolArray, aclScalar, aclTensorList, aclScalarList.
 *
 * Arrays and scalars copy the caller's host values at creation (the caller may reuse its buffer
 * at once).  A NULL value or size 0 gives a valid empty array, as in CANN.  Lists copy the
 * pointer array and take ownership of the elements: destroying the list destroys them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/nn_base.h"
#include "meta/nn_meta.h"

/* ---- arrays ---------------------------------------------------------------------------------- */

/* Copies `size` elements into *copy (left NULL for an empty array); false on failure. */
static bool copy_values(const char *fn, const void *values, uint64_t size, size_t elem_size,
                         void **copy)
{
    *copy = NULL;
    if (values == NULL || size == 0)
        return true; /* empty array, nothing to copy */
    if (size > SIZE_MAX / elem_size) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: size %llu is too large.", fn, (unsigned long long)size);
        return false;
    }
    *copy = malloc((size_t)size * elem_size);
    if (*copy == NULL) {
        nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of memory for %llu elements.", fn,
                 (unsigned long long)size);
        return false;
    }
    memcpy(*copy, values, (size_t)size * elem_size);
    return true;
}

#define NN_DEFINE_ARRAY(Type, Elem, Kind, CreateFn, DestroyFn, SizeFn)                              \
    NN_EXPORT Type *CreateFn(const Elem *value, uint64_t size)                                      \
    {                                                                                              \
        void *values;                                                                              \
        if (!copy_values(#CreateFn, value, size, sizeof(Elem), &values))                           \
            return NULL;                                                                           \
        Type *array = nn_handle_alloc(sizeof *array);                                              \
        if (array == NULL) {                                                                       \
            free(values);                                                                          \
            nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of memory.", #CreateFn);                    \
            return NULL;                                                                           \
        }                                                                                          \
        array->size = values ? size : 0;                                                           \
        array->values = values;                                                                    \
        if (nn_handle_register(array, Kind, #CreateFn) == NULL) {                                  \
            free(values); /* the registry freed the array itself */                                \
            return NULL;                                                                           \
        }                                                                                          \
        return array;                                                                              \
    }                                                                                              \
    NN_EXPORT aclnnStatus DestroyFn(const Type *array)                                             \
    {                                                                                              \
        if (array == NULL)                                                                         \
            return ACLNN_SUCCESS;                                                                  \
        aclnnStatus st = nn_handle_release(#DestroyFn, "array", array, Kind);                      \
        if (st != ACLNN_SUCCESS)                                                                   \
            return st;                                                                             \
        Type *owned = (Type *)(uintptr_t)array;                                                    \
        free(owned->values);                                                                       \
        nn_handle_free(owned);                                                                     \
        return ACLNN_SUCCESS;                                                                      \
    }                                                                                              \
    NN_EXPORT aclnnStatus SizeFn(const Type *array, uint64_t *size)                                \
    {                                                                                              \
        if (array == NULL || size == NULL)                                                         \
            return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s must not be null.", #SizeFn,          \
                            array == NULL ? "array" : "size");                                     \
        aclnnStatus st = nn_handle_check(#SizeFn, "array", array, Kind);                             \
        if (st == ACLNN_SUCCESS)                                                                   \
            *size = array->size;                                                                   \
        return st;                                                                                 \
    }

NN_DEFINE_ARRAY(aclIntArray, int64_t, NN_HANDLE_INT_ARRAY, aclCreateIntArray, aclDestroyIntArray,
                aclGetIntArraySize)
NN_DEFINE_ARRAY(aclFloatArray, float, NN_HANDLE_FLOAT_ARRAY, aclCreateFloatArray, aclDestroyFloatArray,
                aclGetFloatArraySize)
NN_DEFINE_ARRAY(aclBoolArray, bool, NN_HANDLE_BOOL_ARRAY, aclCreateBoolArray, aclDestroyBoolArray,
                aclGetBoolArraySize)

/* ---- scalars --------------------------------------------------------------------------------- */

/* Bytes aclCreateScalar reads for a dtype; 0 = a scalar of it is not supported. */
static size_t scalar_size(aclDataType dtype)
{
    switch ((int)dtype) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32:
        return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16:
        return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL:
    case 34: case 35: case 36: case 37: /* HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0 */
        return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64:
        return 8;
    case ACL_COMPLEX128:
        return 16;
    default:
        return 0;
    }
}

NN_EXPORT aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    if (value == NULL) {
        nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclCreateScalar: value must not be null.");
        return NULL;
    }
    size_t size = scalar_size(dataType);
    if (size == 0) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar: dataType %d (%s) is not supported for a scalar.",
                 (int)dataType, nn_dtype_name(dataType));
        return NULL;
    }
    aclScalar *scalar = nn_handle_alloc(sizeof *scalar);
    if (scalar == NULL) {
        nn_error(ACLNN_ERR_INNER_NULLPTR, "aclCreateScalar: out of memory.");
        return NULL;
    }
    scalar->dtype = dataType;
    memcpy(scalar->bytes, value, size);
    return nn_handle_register(scalar, NN_HANDLE_SCALAR, "aclCreateScalar");
}

NN_EXPORT aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    if (scalar == NULL)
        return ACLNN_SUCCESS;
    aclnnStatus st = nn_handle_release("aclDestroyScalar", "scalar", scalar, NN_HANDLE_SCALAR);
    if (st == ACLNN_SUCCESS)
        nn_handle_free((aclScalar *)(uintptr_t)scalar);
    return st;
}

/* ---- lists ----------------------------------------------------------------------------------- */

/* Copies a pointer array (NULL or size 0 -> empty); NULL on allocation failure. */
static void **copy_pointers(const char *fn, const void *const *value, uint64_t size, uint64_t *count)
{
    *count = 0;
    if (value == NULL || size == 0)
        return calloc(1, sizeof(void *));
    if (size > SIZE_MAX / sizeof(void *)) {
        nn_error(ACLNN_ERR_PARAM_INVALID, "%s: size %llu is too large.", fn, (unsigned long long)size);
        return NULL;
    }
    void **items = malloc((size_t)size * sizeof(void *));
    if (items == NULL)
        return NULL;
    memcpy(items, value, (size_t)size * sizeof(void *));
    *count = size;
    return items;
}

NN_EXPORT aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    aclTensorList *list = nn_handle_alloc(sizeof *list);
    uint64_t count;
    void **items = list ? copy_pointers("aclCreateTensorList", (const void *const *)value, size, &count)
                        : NULL;
    if (items == NULL) {
        nn_handle_free(list);
        nn_error(ACLNN_ERR_INNER_NULLPTR, "aclCreateTensorList: out of memory.");
        return NULL;
    }
    list->size = count;
    list->items = (aclTensor **)items;
    if (nn_handle_register(list, NN_HANDLE_TENSOR_LIST, "aclCreateTensorList") == NULL) {
        free(items);
        return NULL;
    }
    return list;
}

NN_EXPORT aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    if (array == NULL)
        return ACLNN_SUCCESS;
    aclnnStatus st = nn_handle_release("aclDestroyTensorList", "list", array, NN_HANDLE_TENSOR_LIST);
    if (st != ACLNN_SUCCESS)
        return st;
    aclTensorList *owned = (aclTensorList *)(uintptr_t)array;
    /* The list owns its tensors; one the caller destroyed already is reported, not freed again. */
    for (uint64_t i = 0; i < owned->size; i++)
        if (aclDestroyTensor(owned->items[i]) != ACLNN_SUCCESS)
            st = ACLNN_ERR_PARAM_INVALID;
    free(owned->items);
    nn_handle_free(owned);
    return st;
}

NN_EXPORT aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    if (tensorList == NULL || size == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclGetTensorListSize: %s must not be null.",
                        tensorList == NULL ? "tensorList" : "size");
    aclnnStatus st = nn_handle_check("aclGetTensorListSize", "tensorList", tensorList,
                                   NN_HANDLE_TENSOR_LIST);
    if (st == ACLNN_SUCCESS)
        *size = tensorList->size;
    return st;
}

NN_EXPORT aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    aclScalarList *list = nn_handle_alloc(sizeof *list);
    uint64_t count;
    void **items = list ? copy_pointers("aclCreateScalarList", (const void *const *)value, size, &count)
                        : NULL;
    if (items == NULL) {
        nn_handle_free(list);
        nn_error(ACLNN_ERR_INNER_NULLPTR, "aclCreateScalarList: out of memory.");
        return NULL;
    }
    list->size = count;
    list->items = (aclScalar **)items;
    if (nn_handle_register(list, NN_HANDLE_SCALAR_LIST, "aclCreateScalarList") == NULL) {
        free(items);
        return NULL;
    }
    return list;
}

NN_EXPORT aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    if (array == NULL)
        return ACLNN_SUCCESS;
    aclnnStatus st = nn_handle_release("aclDestroyScalarList", "list", array, NN_HANDLE_SCALAR_LIST);
    if (st != ACLNN_SUCCESS)
        return st;
    aclScalarList *owned = (aclScalarList *)(uintptr_t)array;
    /* The list owns its scalars; one the caller destroyed already is reported, not freed again. */
    for (uint64_t i = 0; i < owned->size; i++)
        if (aclDestroyScalar(owned->items[i]) != ACLNN_SUCCESS)
            st = ACLNN_ERR_PARAM_INVALID;
    free(owned->items);
    nn_handle_free(owned);
    return st;
}

NN_EXPORT aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size)
{
    if (scalarList == NULL || size == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "aclGetScalarListSize: %s must not be null.",
                        scalarList == NULL ? "scalarList" : "size");
    aclnnStatus st = nn_handle_check("aclGetScalarListSize", "scalarList", scalarList,
                                   NN_HANDLE_SCALAR_LIST);
    if (st == ACLNN_SUCCESS)
        *size = scalarList->size;
    return st;
}
