/*
 * test_meta_tensor.c - aclCreateTensor / aclInitTensor / getters / raw addresses, and the
 * recent-error text (format, newest first, cleared on read, bounded, per thread).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"

#include "test_util.h"

static bool same_array(const int64_t *got, uint64_t got_n, const int64_t *want, uint64_t want_n)
{
    if (got_n != want_n || got == NULL)
        return false;
    for (uint64_t i = 0; i < want_n; i++)
        if (got[i] != want[i])
            return false;
    return true;
}

static void check_getters(const aclTensor *t, const int64_t *dims, uint64_t ndim, const int64_t *strides,
                          int64_t offset, aclDataType dtype, aclFormat format, const int64_t *storage,
                          uint64_t storage_ndim, void *data)
{
    int64_t *values = NULL;
    uint64_t n = 99;
    CHECK(aclGetViewShape(t, &values, &n) == ACLNN_SUCCESS && same_array(values, n, dims, ndim), "view shape");
    aclnnCpuFreeArray(values);
    values = NULL;
    CHECK(aclGetViewStrides(t, &values, &n) == ACLNN_SUCCESS && same_array(values, n, strides, ndim),
          "view strides");
    aclnnCpuFreeArray(values);
    values = NULL;
    CHECK(aclGetStorageShape(t, &values, &n) == ACLNN_SUCCESS && same_array(values, n, storage, storage_ndim),
          "storage shape");
    aclnnCpuFreeArray(values);
    int64_t got_offset = -1;
    CHECK(aclGetViewOffset(t, &got_offset) == ACLNN_SUCCESS && got_offset == offset, "offset %lld",
          (long long)got_offset);
    aclDataType got_dtype = ACL_DT_UNDEFINED;
    CHECK(aclGetDataType(t, &got_dtype) == ACLNN_SUCCESS && got_dtype == dtype, "dtype");
    aclFormat got_format = ACL_FORMAT_UNDEFINED;
    CHECK(aclGetFormat(t, &got_format) == ACLNN_SUCCESS && got_format == format, "format");
    void *got_data = (void *)1;
    CHECK(aclGetRawTensorAddr(t, &got_data) == ACLNN_SUCCESS && got_data == data, "raw address");
}

static void test_create_and_getters(void)
{
    float storage[64];
    int64_t dims[3] = {2, 3, 4};
    int64_t contiguous[3] = {12, 4, 1};
    aclTensor *t = aclCreateTensor(dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 3, storage);
    CHECK(t != NULL, "contiguous tensor with NULL stride");
    check_getters(t, dims, 3, contiguous, 0, ACL_FLOAT, ACL_FORMAT_ND, dims, 3, storage);
    CHECK(aclDestroyTensor(t) == ACLNN_SUCCESS, "destroy");

    /* the non-contiguous doc example: (6,5) view, strides (10,1), offset 22 of a 10x10 buffer */
    int64_t view[2] = {6, 5}, strides[2] = {10, 1}, store[2] = {10, 10};
    float big[100];
    t = aclCreateTensor(view, 2, ACL_FLOAT16, strides, 22, ACL_FORMAT_NCHW, store, 2, big);
    CHECK(t != NULL, "doc example view");
    check_getters(t, view, 2, strides, 22, ACL_FLOAT16, ACL_FORMAT_NCHW, store, 2, big);
    aclDestroyTensor(t);

    /* 0-d tensor: zero-length arrays are still returned */
    t = aclCreateTensor(NULL, 0, ACL_INT64, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK(t != NULL, "0-d tensor");
    int64_t *values = NULL;
    uint64_t n = 7;
    CHECK(aclGetViewShape(t, &values, &n) == ACLNN_SUCCESS && n == 0 && values != NULL, "0-d shape");
    aclnnCpuFreeArray(values);
    aclDestroyTensor(t);

    /* size-1 dims may have any stride; broadcast (0) strides; empty views skip the range check */
    int64_t bdims[3] = {4, 1, 5}, bstrides[3] = {0, 1000, 1}, bstore[1] = {5};
    t = aclCreateTensor(bdims, 3, ACL_INT8, bstrides, 0, ACL_FORMAT_ND, bstore, 1, storage);
    CHECK(t != NULL, "broadcast view");
    aclDestroyTensor(t);
    int64_t edims[2] = {0, 5}, estrides[2] = {5, 1}, estore[1] = {1};
    t = aclCreateTensor(edims, 2, ACL_FLOAT, estrides, 1000, ACL_FORMAT_ND, estore, 1, NULL);
    CHECK(t != NULL, "empty view with any offset");
    aclDestroyTensor(t);

    /* negative strides: accepted when the lowest element stays inside the storage */
    int64_t rdims[1] = {5}, rstrides[1] = {-1}, rstore[1] = {5};
    t = aclCreateTensor(rdims, 1, ACL_FLOAT, rstrides, 4, ACL_FORMAT_ND, rstore, 1, storage);
    CHECK(t != NULL, "reversed view");
    aclDestroyTensor(t);
    CHECK(aclGetRecentErrMsg() == NULL, "no message after successful calls");
}

static void test_create_errors(void)
{
    float storage[16];
    int64_t dims[2] = {2, 3};
    CHECK(aclCreateTensor(NULL, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, storage) == NULL, "NULL viewDims");
    EXPECT_MSG_CLEARED("NULL viewDims", "aclCreateTensor", "viewDims", "EZ1001");
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 2, storage) == NULL, "NULL storageDims");
    EXPECT_MSG_CLEARED("NULL storageDims", "aclCreateTensor", "storageDims");

    int64_t many[26];
    for (int i = 0; i < 26; i++)
        many[i] = 1;
    CHECK(aclCreateTensor(many, 26, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, many, 1, storage) == NULL, "26 dims");
    EXPECT_MSG_CLEARED("26 dims", "aclCreateTensor", "viewDimsNum", "25", "26");
    aclTensor *t25 = aclCreateTensor(many, 25, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, many, 25, storage);
    CHECK(t25 != NULL, "25 dims accepted");
    aclDestroyTensor(t25);

    int64_t negative[2] = {2, -3};
    /* A negative view dim is accepted, as CANN accepts it; the operators reject it
     * (tests/c/test_products.c). */
    aclTensor *neg = aclCreateTensor(negative, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, storage);
    CHECK(neg != NULL, "negative view dim accepted");
    aclDestroyTensor(neg);
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, negative, 2, storage) == NULL,
          "negative storage dim");
    EXPECT_MSG_CLEARED("negative storage dim", "storageDims[1]");
    /* Storage dims equal to a view with a negative dim: how CANN's op_api test harness builds
     * every tensor (storage = view), a tensor that owns no data; accepted, and its getters give
     * back what was passed.  Any other negative storage dim stays refused. */
    neg = aclCreateTensor(negative, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, negative, 2, NULL);
    CHECK(neg != NULL, "negative storage dims equal to the view accepted");
    int64_t *got = NULL;
    uint64_t got_num = 0;
    CHECK(aclGetStorageShape(neg, &got, &got_num) == ACLNN_SUCCESS && got_num == 2 && got[0] == 2 &&
          got[1] == -3, "storage shape of a tensor that owns no data");
    aclnnCpuFreeArray(got);
    aclDestroyTensor(neg);
    int64_t other_negative[2] = {2, -4};
    CHECK(aclCreateTensor(negative, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, other_negative, 2, NULL) == NULL,
          "negative storage dims other than the view");
    EXPECT_MSG_CLEARED("negative storage dims other than the view", "storageDims[1]");
    CHECK(aclCreateTensor(negative, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, negative + 1, 1, NULL) == NULL,
          "negative storage dims of another rank");
    EXPECT_MSG_CLEARED("negative storage dims of another rank", "storageDims[0]");

    aclDataType bad_types[] = {ACL_STRING, ACL_DT_UNDEFINED, (aclDataType)5, (aclDataType)1000};
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        CHECK(aclCreateTensor(dims, 2, bad_types[i], NULL, 0, ACL_FORMAT_ND, dims, 2, storage) == NULL,
              "dtype %d", (int)bad_types[i]);
        EXPECT_MSG_CLEARED("bad dtype", "aclCreateTensor", "dataType");
    }
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, (aclFormat)7, dims, 2, storage) == NULL, "format 7");
    EXPECT_MSG_CLEARED("bad format", "aclCreateTensor", "format", "7");

    int64_t huge[3] = {INT64_MAX / 2, 4, 1};
    CHECK(aclCreateTensor(huge, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, huge, 3, NULL) == NULL, "overflow");
    EXPECT_MSG_CLEARED("overflow", "aclCreateTensor", "overflow");
    int64_t bytes_overflow[1] = {INT64_MAX / 2};
    CHECK(aclCreateTensor(bytes_overflow, 1, ACL_DOUBLE, NULL, 0, ACL_FORMAT_ND, bytes_overflow, 1, NULL) == NULL,
          "byte size overflow");
    EXPECT_MSG_CLEARED("byte overflow", "aclCreateTensor", "overflow");

    /* views outside their storage */
    int64_t store[1] = {6};
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 1, ACL_FORMAT_ND, store, 1, storage) == NULL, "offset past end");
    EXPECT_MSG_CLEARED("offset past end", "aclCreateTensor", "storage");
    int64_t wide[2] = {4, 1}; /* reaches element 4 + 2 = 6 of 6 */
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, wide, 0, ACL_FORMAT_ND, store, 1, storage) == NULL, "stride past end");
    EXPECT_MSG_CLEARED("stride past end", "storage");
    int64_t reversed[2] = {3, -1};
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, reversed, 0, ACL_FORMAT_ND, store, 1, storage) == NULL,
          "negative stride below start");
    EXPECT_MSG_CLEARED("negative stride", "storage");
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, NULL, -1, ACL_FORMAT_ND, store, 1, storage) == NULL, "negative offset");
    EXPECT_MSG_CLEARED("negative offset", "storage");
    int64_t giant_stride[2] = {INT64_MAX / 2, 1};
    CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, giant_stride, 0, ACL_FORMAT_ND, store, 1, storage) == NULL,
          "stride overflow");
    EXPECT_MSG_CLEARED("stride overflow", "storage");
}

static void test_message_format(void)
{
    int64_t dims[1] = {-1}, view[1] = {1}; /* a negative storage dim under a real view */
    CHECK(aclCreateTensor(view, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL) == NULL, "first error");
    CHECK(aclCreateTensor(dims, 1, (aclDataType)5, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL) == NULL, "second error");
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL, "two messages");
    if (msg == NULL)
        return;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "[PID:%d] ", (int)getpid());
    CHECK(strncmp(msg, prefix, strlen(prefix)) == 0, "prefix %s: %s", prefix, msg);
    /* "YYYY-MM-DD-hh:mm:ss.mmm.uuu " */
    const char *stamp = msg + strlen(prefix);
    const char *pattern = "dddd-dd-dd-dd:dd:dd.ddd.ddd ";
    bool stamp_ok = strlen(stamp) > strlen(pattern);
    for (size_t i = 0; stamp_ok && pattern[i]; i++)
        stamp_ok = pattern[i] == 'd' ? (stamp[i] >= '0' && stamp[i] <= '9') : stamp[i] == pattern[i];
    CHECK(stamp_ok, "timestamp: %s", msg);
    CHECK(strncmp(stamp + strlen(pattern), "AclNN_Parameter_Error(EZ1001): aclCreateTensor: ", 48) == 0,
          "title: %s", msg);
    const char *newline = strchr(msg, '\n');
    CHECK(newline != NULL, "two messages joined with newline: %s", msg);
    if (newline) {
        const char *dtype_at = strstr(msg, "dataType"), *dims_at = strstr(msg, "storageDims[0]");
        CHECK(dtype_at && dims_at && dtype_at < newline && dims_at > newline, "newest first: %s", msg);
        CHECK(strchr(newline + 1, '\n') == NULL, "exactly two messages");
    }
    CHECK(aclGetRecentErrMsg() == NULL, "cleared on read");

    /* bounded: a thousand unread errors keep the newest ones only */
    for (int i = 0; i < 1000; i++) {
        int64_t view[1] = {1}, bad[1] = {-1000 - i};
        aclCreateTensor(view, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, bad, 1, NULL);
    }
    msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strlen(msg) < 16384, "bounded history");
    CHECK(msg != NULL && strstr(msg, "-1999") != NULL && strstr(msg, "got -1000.") == NULL,
          "newest kept, oldest dropped");
    if (msg) {
        const char *last = strrchr(msg, '\n');
        CHECK(last != NULL && strncmp(last + 1, "[PID:", 5) == 0, "history cut at a message boundary");
    }
}

static void *error_in_thread(void *arg)
{
    int64_t view[1] = {1}, dims[1] = {-1};
    aclCreateTensor(view, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL);
    *(const char **)arg = aclGetRecentErrMsg() ? "seen" : NULL;
    return NULL;
}

static void test_thread_scope(void)
{
    const char *seen = NULL;
    pthread_t th;
    pthread_create(&th, NULL, error_in_thread, &seen);
    pthread_join(th, NULL);
    CHECK(seen != NULL, "thread sees its own error");
    CHECK(aclGetRecentErrMsg() == NULL, "another thread's error is not visible here");
}

static void test_getter_nulls(void)
{
    float storage[4];
    int64_t dims[1] = {4};
    aclTensor *t = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, storage);
    int64_t *values;
    uint64_t n;
    int64_t offset;
    aclFormat format;
    aclDataType dtype;
    void *addr;
    CHECK(aclGetViewShape(NULL, &values, &n) == ACLNN_ERR_PARAM_NULLPTR, "shape NULL tensor");
    EXPECT_MSG_CLEARED("shape NULL tensor", "aclGetViewShape", "tensor");
    CHECK(aclGetViewShape(t, NULL, &n) == ACLNN_ERR_PARAM_NULLPTR, "shape NULL out");
    CHECK(aclGetViewShape(t, &values, NULL) == ACLNN_ERR_PARAM_NULLPTR, "shape NULL count");
    CHECK(aclGetStorageShape(NULL, &values, &n) == ACLNN_ERR_PARAM_NULLPTR, "storage NULL");
    CHECK(aclGetViewStrides(t, NULL, &n) == ACLNN_ERR_PARAM_NULLPTR, "strides NULL");
    CHECK(aclGetViewOffset(NULL, &offset) == ACLNN_ERR_PARAM_NULLPTR, "offset NULL tensor");
    CHECK(aclGetViewOffset(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "offset NULL out");
    CHECK(aclGetFormat(NULL, &format) == ACLNN_ERR_PARAM_NULLPTR, "format NULL");
    CHECK(aclGetFormat(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "format NULL out");
    CHECK(aclGetDataType(NULL, &dtype) == ACLNN_ERR_PARAM_NULLPTR, "dtype NULL");
    CHECK(aclGetDataType(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "dtype NULL out");
    CHECK(aclGetRawTensorAddr(NULL, &addr) == ACLNN_ERR_PARAM_NULLPTR, "raw get NULL");
    CHECK(aclGetRawTensorAddr(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "raw get NULL out");
    CHECK(aclSetRawTensorAddr(NULL, storage) == ACLNN_ERR_PARAM_NULLPTR, "raw set NULL");
    EXPECT_MSG_CLEARED("raw set NULL", "aclSetRawTensorAddr", "tensor");
    CHECK(aclSetRawTensorAddr(t, storage + 1) == ACLNN_SUCCESS && aclGetRawTensorAddr(t, &addr) == ACLNN_SUCCESS &&
              addr == storage + 1, "raw set/get");
    CHECK(aclDestroyTensor(NULL) == ACLNN_SUCCESS, "destroy NULL");
    aclDestroyTensor(t);
    (void)aclGetRecentErrMsg();
}

static void test_init_tensor(void)
{
    float storage[64], other[64];
    int64_t dims[2] = {4, 4};
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, storage);
    int64_t new_dims[3] = {2, 2, 3}, new_strides[3] = {1, 2, 4}, new_store[1] = {12};
    CHECK(aclInitTensor(NULL, new_dims, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, new_store, 1, other) ==
              ACLNN_ERR_PARAM_NULLPTR, "init NULL");
    EXPECT_MSG_CLEARED("init NULL", "aclInitTensor", "tensor");
    CHECK(aclInitTensor(t, new_dims, 3, ACL_FLOAT16, new_strides, 0, ACL_FORMAT_NCL, new_store, 1, other) ==
              ACLNN_SUCCESS, "init");
    check_getters(t, new_dims, 3, new_strides, 0, ACL_FLOAT16, ACL_FORMAT_NCL, new_store, 1, other);
    /* NULL address keeps the old one; NULL stride means contiguous */
    int64_t contiguous[3] = {6, 3, 1};
    CHECK(aclInitTensor(t, new_dims, 3, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, new_store, 1, NULL) == ACLNN_SUCCESS,
          "init keeps address");
    check_getters(t, new_dims, 3, contiguous, 0, ACL_FLOAT16, ACL_FORMAT_ND, new_store, 1, other);
    /* an invalid re-init fails and leaves the tensor unchanged */
    CHECK(aclInitTensor(t, new_dims, 3, ACL_FLOAT16, NULL, 5, ACL_FORMAT_ND, new_store, 1, storage) ==
              ACLNN_ERR_PARAM_INVALID, "init outside storage");
    EXPECT_MSG_CLEARED("init outside storage", "aclInitTensor", "storage");
    check_getters(t, new_dims, 3, contiguous, 0, ACL_FLOAT16, ACL_FORMAT_ND, new_store, 1, other);
    aclDestroyTensor(t);
}

int main(void)
{
    test_create_and_getters();
    test_create_errors();
    test_message_format();
    test_thread_scope();
    test_getter_nulls();
    test_init_tensor();
    printf("meta tensor: %d failures\n", failures);
    return failures != 0;
}
