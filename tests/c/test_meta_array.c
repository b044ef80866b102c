/*
 * test_meta_array.c - arrays, scalars, lists, and the executor meta functions' argument checks
 * (NULL and unknown executors; the launch paths are in test_meta_executor.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"

#include "test_util.h"

static void test_arrays(void)
{
    int64_t ints[3] = {1, 2, 3};
    float floats[2] = {0.5f, 1.5f};
    bool bools[4] = {true, false, true, true};
    uint64_t size = 99;

    aclIntArray *ia = aclCreateIntArray(ints, 3);
    ints[0] = 100; /* the array holds a copy */
    CHECK(ia != NULL && aclGetIntArraySize(ia, &size) == ACLNN_SUCCESS && size == 3, "int array");
    aclFloatArray *fa = aclCreateFloatArray(floats, 2);
    CHECK(fa != NULL && aclGetFloatArraySize(fa, &size) == ACLNN_SUCCESS && size == 2, "float array");
    aclBoolArray *ba = aclCreateBoolArray(bools, 4);
    CHECK(ba != NULL && aclGetBoolArraySize(ba, &size) == ACLNN_SUCCESS && size == 4, "bool array");

    /* NULL value or size 0: a valid empty array */
    aclIntArray *empty = aclCreateIntArray(NULL, 5);
    CHECK(empty != NULL && aclGetIntArraySize(empty, &size) == ACLNN_SUCCESS && size == 0, "NULL values");
    aclFloatArray *empty_f = aclCreateFloatArray(floats, 0);
    CHECK(empty_f != NULL && aclGetFloatArraySize(empty_f, &size) == ACLNN_SUCCESS && size == 0, "size 0");

    CHECK(aclGetIntArraySize(NULL, &size) == ACLNN_ERR_PARAM_NULLPTR, "size of NULL");
    EXPECT_MSG_CLEARED("size of NULL", "aclGetIntArraySize", "array");
    CHECK(aclGetIntArraySize(ia, NULL) == ACLNN_ERR_PARAM_NULLPTR, "NULL size out");
    EXPECT_MSG_CLEARED("NULL size out", "aclGetIntArraySize", "size");
    CHECK(aclGetFloatArraySize(NULL, &size) == ACLNN_ERR_PARAM_NULLPTR, "float size of NULL");
    CHECK(aclGetBoolArraySize(ba, NULL) == ACLNN_ERR_PARAM_NULLPTR, "bool NULL size out");
    (void)aclGetRecentErrMsg();

    CHECK(aclDestroyIntArray(ia) == 0 && aclDestroyFloatArray(fa) == 0 && aclDestroyBoolArray(ba) == 0,
          "destroy arrays");
    CHECK(aclDestroyIntArray(empty) == 0 && aclDestroyFloatArray(empty_f) == 0, "destroy empty arrays");
    CHECK(aclDestroyIntArray(NULL) == 0 && aclDestroyFloatArray(NULL) == 0 && aclDestroyBoolArray(NULL) == 0,
          "destroy NULL arrays");
}

static void test_scalars(void)
{
    double d = 2.5;
    float f = 1.0f;
    int64_t i64 = -7;
    uint16_t half = 0x3c00;
    int8_t i8 = -1;
    double complex_value[2] = {1.0, 2.0};
    struct { aclDataType dtype; void *value; } ok[] = {
        {ACL_DOUBLE, &d}, {ACL_FLOAT, &f}, {ACL_INT64, &i64}, {ACL_FLOAT16, &half}, {ACL_BF16, &half},
        {ACL_INT8, &i8}, {ACL_BOOL, &i8}, {ACL_UINT64, &i64}, {ACL_COMPLEX128, complex_value},
        {ACL_COMPLEX64, &d}, {ACL_INT32, &f}, {ACL_UINT8, &i8}, {ACL_INT16, &half},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        aclScalar *s = aclCreateScalar(ok[k].value, ok[k].dtype);
        CHECK(s != NULL, "scalar dtype %d", (int)ok[k].dtype);
        CHECK(aclDestroyScalar(s) == 0, "destroy scalar");
    }
    CHECK(aclCreateScalar(NULL, ACL_FLOAT) == NULL, "NULL scalar value");
    EXPECT_MSG_CLEARED("NULL scalar value", "aclCreateScalar", "value");
    aclDataType bad[] = {ACL_STRING, ACL_DT_UNDEFINED, (aclDataType)29, (aclDataType)30, (aclDataType)33,
                         (aclDataType)5, (aclDataType)1000};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(aclCreateScalar(&d, bad[k]) == NULL, "scalar dtype %d rejected", (int)bad[k]);
        EXPECT_MSG_CLEARED("bad scalar dtype", "aclCreateScalar", "dataType");
    }
    CHECK(aclDestroyScalar(NULL) == 0, "destroy NULL scalar");
}

static void test_lists(void)
{
    float storage[8];
    int64_t dims[1] = {8};
    const aclTensor *tensors[3];
    for (int i = 0; i < 3; i++)
        tensors[i] = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, storage);
    aclTensorList *tl = aclCreateTensorList(tensors, 3);
    uint64_t size = 0;
    CHECK(tl != NULL && aclGetTensorListSize(tl, &size) == 0 && size == 3, "tensor list");
    CHECK(aclDestroyTensorList(tl) == 0, "destroying the list destroys its tensors (leak checkers)");

    double value = 1.0;
    const aclScalar *scalars[2] = {aclCreateScalar(&value, ACL_DOUBLE), aclCreateScalar(&value, ACL_DOUBLE)};
    aclScalarList *sl = aclCreateScalarList(scalars, 2);
    CHECK(sl != NULL && aclGetScalarListSize(sl, &size) == 0 && size == 2, "scalar list");
    CHECK(aclDestroyScalarList(sl) == 0, "destroy scalar list");

    aclTensorList *empty = aclCreateTensorList(NULL, 4);
    CHECK(empty != NULL && aclGetTensorListSize(empty, &size) == 0 && size == 0, "empty tensor list");
    aclDestroyTensorList(empty);
    aclScalarList *empty_s = aclCreateScalarList(scalars, 0);
    CHECK(empty_s != NULL && aclGetScalarListSize(empty_s, &size) == 0 && size == 0, "empty scalar list");
    aclDestroyScalarList(empty_s);

    CHECK(aclGetTensorListSize(NULL, &size) == ACLNN_ERR_PARAM_NULLPTR, "list size of NULL");
    EXPECT_MSG_CLEARED("list size of NULL", "aclGetTensorListSize", "tensorList");
    CHECK(aclGetScalarListSize(NULL, &size) == ACLNN_ERR_PARAM_NULLPTR, "scalar list size of NULL");
    EXPECT_MSG_CLEARED("scalar list size of NULL", "aclGetScalarListSize", "scalarList");
    CHECK(aclDestroyTensorList(NULL) == 0 && aclDestroyScalarList(NULL) == 0, "destroy NULL lists");
}

static void test_executor_arguments(void)
{
    float storage[4];
    int64_t dims[1] = {4};
    aclTensor *t = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, storage);
    /* an address that was never an executor: looked up, never dereferenced */
    uint64_t not_an_executor[64] = {0};
    aclOpExecutor *fake = (aclOpExecutor *)(void *)not_an_executor;

    CHECK(aclSetAclOpExecutorRepeatable(NULL) == ACLNN_ERR_INNER_NULLPTR, "repeatable NULL");
    EXPECT_MSG_CLEARED("repeatable NULL", "aclSetAclOpExecutorRepeatable", "executor");
    CHECK(aclSetAclOpExecutorRepeatable(fake) == ACLNN_ERR_INNER, "repeatable unknown");
    EXPECT_MSG_CLEARED("repeatable unknown", "aclSetAclOpExecutorRepeatable", "not a live executor");
    CHECK(aclDestroyAclOpExecutor(NULL) == ACLNN_ERR_INNER_NULLPTR, "destroy NULL executor");
    EXPECT_MSG_CLEARED("destroy NULL", "aclDestroyAclOpExecutor", "executor");
    CHECK(aclDestroyAclOpExecutor(fake) != ACLNN_SUCCESS, "destroy unknown executor");
    EXPECT_MSG_CLEARED("destroy unknown", "aclDestroyAclOpExecutor", "not a live executor");

    /* CANN stores the address into the tensor before checking the executor */
    void *addr = NULL;
    CHECK(aclSetInputTensorAddr(NULL, 0, t, storage + 2) == ACLNN_ERR_INNER_NULLPTR, "set input NULL executor");
    EXPECT_MSG_CLEARED("set input NULL", "aclSetInputTensorAddr", "executor");
    CHECK(aclGetRawTensorAddr(t, &addr) == 0 && addr == (void *)(storage + 2), "address stored first");
    CHECK(aclSetOutputTensorAddr(fake, 0, NULL, storage) == ACLNN_ERR_INNER_NULLPTR, "set output NULL tensor");
    EXPECT_MSG_CLEARED("set output NULL tensor", "aclSetOutputTensorAddr", "tensor");
    CHECK(aclSetTensorAddr(fake, 0, t, storage) == ACLNN_ERR_INNER, "set on unknown executor");
    EXPECT_MSG_CLEARED("set unknown", "aclSetTensorAddr", "not a live executor");
    CHECK(AclSetInputTensorAddr(NULL, 0, t, storage) == ACLNN_ERR_INNER_NULLPTR, "capital-A input");
    CHECK(AclSetOutputTensorAddr(NULL, 0, t, storage) == ACLNN_ERR_INNER_NULLPTR, "capital-A output");
    CHECK(AclSetTensorAddr(NULL, 0, t, storage) == ACLNN_ERR_INNER_NULLPTR, "capital-A any");
    EXPECT_MSG_CLEARED("capital A", "AclSetTensorAddr", "executor");

    aclTensorList *list = aclCreateTensorList(NULL, 0);
    CHECK(aclSetDynamicInputTensorAddr(NULL, 0, 0, list, storage) == ACLNN_ERR_INNER_NULLPTR, "dynamic NULL exec");
    EXPECT_MSG_CLEARED("dynamic NULL exec", "aclSetDynamicInputTensorAddr", "executor");
    CHECK(aclSetDynamicOutputTensorAddr(fake, 0, 0, NULL, storage) == ACLNN_ERR_INNER_NULLPTR, "dynamic NULL list");
    EXPECT_MSG_CLEARED("dynamic NULL list", "aclSetDynamicOutputTensorAddr", "tensors");
    CHECK(aclSetDynamicTensorAddr(NULL, 0, 0, list, storage) == ACLNN_ERR_INNER_NULLPTR, "dynamic any NULL");
    CHECK(AclSetDynamicInputTensorAddr(NULL, 0, 0, list, storage) == ACLNN_ERR_INNER_NULLPTR, "A dynamic in");
    CHECK(AclSetDynamicOutputTensorAddr(NULL, 0, 0, list, storage) == ACLNN_ERR_INNER_NULLPTR, "A dynamic out");
    CHECK(AclSetDynamicTensorAddr(NULL, 0, 0, list, storage) == ACLNN_ERR_INNER_NULLPTR, "A dynamic any");
    (void)aclGetRecentErrMsg();
    aclDestroyTensorList(list);

    aclTensor *dump[1] = {t};
    CHECK(aclDumpOpTensors(NULL, "op", dump, 1, 0, NULL) == ACLNN_ERR_PARAM_NULLPTR, "dump NULL type");
    EXPECT_MSG_CLEARED("dump NULL", "aclDumpOpTensors", "opType");
    CHECK(aclDumpOpTensors("Prelu", NULL, dump, 1, 0, NULL) == ACLNN_ERR_PARAM_NULLPTR, "dump NULL name");
    CHECK(aclDumpOpTensors("Prelu", "op", NULL, 1, 0, NULL) == ACLNN_ERR_PARAM_NULLPTR, "dump NULL tensors");
    (void)aclGetRecentErrMsg();
    CHECK(aclDumpOpTensors("Prelu", "prelu_1", dump, 1, 0, NULL) == ACLNN_SUCCESS, "dump is a no-op");

    CHECK(aclnnInit(NULL) == ACLNN_SUCCESS && aclnnFinalize() == ACLNN_SUCCESS, "aclnnInit/Finalize");
    aclDestroyTensor(t);
}

int main(void)
{
    test_arrays();
    test_scalars();
    test_lists();
    test_executor_arguments();
    printf("meta array: %d failures\n", failures);
    return failures != 0;
}
