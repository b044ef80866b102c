/*
 * test_meta_delete.cpp - the shape getters' arrays are released with delete[], as CANN's docs
 * do.  Under AddressSanitizer an array allocated with malloc and freed with delete[] is an
 * alloc-dealloc mismatch, so a clean ASan run proves the library used operator new[].
 */
#include <cstdint>
#include <cstdio>

#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"

int main()
{
    int failures = 0;
    float storage[24];
    int64_t dims[3] = {2, 3, 4};
    int64_t strides[3] = {1, 2, 6};
    aclTensor *t = aclCreateTensor(dims, 3, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 3, storage);
    if (t == nullptr) {
        std::printf("FAIL create\n");
        return 1;
    }
    int64_t *shape = nullptr, *store = nullptr, *view_strides = nullptr;
    uint64_t n_shape = 0, n_store = 0, n_strides = 0;
    failures += aclGetViewShape(t, &shape, &n_shape) != ACLNN_SUCCESS || n_shape != 3 || shape[2] != 4;
    failures += aclGetStorageShape(t, &store, &n_store) != ACLNN_SUCCESS || n_store != 3 || store[0] != 2;
    failures += aclGetViewStrides(t, &view_strides, &n_strides) != ACLNN_SUCCESS || n_strides != 3 ||
                view_strides[2] != 6;
    delete[] shape;
    delete[] store;
    delete[] view_strides;

    /* a 0-d tensor still returns a (zero-length) array to delete[] */
    aclTensor *scalar = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, storage);
    int64_t *none = nullptr;
    uint64_t n_none = 1;
    failures += aclGetViewShape(scalar, &none, &n_none) != ACLNN_SUCCESS || n_none != 0 || none == nullptr;
    delete[] none;

    aclDestroyTensor(scalar);
    aclDestroyTensor(t);
    std::printf("meta delete[]: %d failures\n", failures);
    return failures != 0;
}
