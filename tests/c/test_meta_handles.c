/* Misuse never crashes: every handle argument of every operator's phase 1, given a destroyed,
 * a foreign (never a handle) and a wrong-kind pointer in turn, gets ACLNN_ERR_PARAM_INVALID and
 * a message naming the operator and the argument; a destroyed executor at launch, double
 * destroys of every kind of handle, and a list holding a destroyed tensor are errors too.
 * Also run under valgrind (tests/test_c_programs.py), which must see no invalid read or free. */
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
#include "test_util.h"

#define MAX_ARGS 10

typedef enum { T, A } arg_kind; /* an aclTensor or an aclIntArray argument */

/* One way to build an argument: a tensor (shape, dtype) or an int array (values). */
typedef struct {
    const char *name;
    arg_kind kind;
    int ndim;
    int64_t dims[4];
    aclDataType dtype;
} arg_spec;

typedef aclnnStatus (*phase1_fn)(void *const *args, uint64_t *ws, aclOpExecutor **ex);

typedef struct {
    const char *op;
    phase1_fn call;
    int nargs;
    arg_spec args[MAX_ARGS];
} op_spec;

#define TEN(name, dtype, n, ...) {name, T, n, {__VA_ARGS__}, dtype}
#define ARR(name, n, ...) {name, A, n, {__VA_ARGS__}, ACL_INT64}

/* ---- the operators, called with a generic argument vector ---------------------------------- */
static aclnnStatus pad_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnReplicationPad2dGetWorkspaceSize(a[0], a[1], a[2], ws, ex);
}
static aclnnStatus pad_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnReplicationPad2dBackwardGetWorkspaceSize(a[0], a[1], a[2], a[3], ws, ex);
}
static aclnnStatus up_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnUpsampleNearestExact1dGetWorkspaceSize(a[0], a[1], 0.0, a[2], ws, ex);
}
static aclnnStatus up_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(a[0], a[1], a[2], 0.0, a[3], ws, ex);
}
static aclnnStatus mask_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnMaxPool2dWithMaskGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], false, a[5], a[6], ws,
                                                  ex);
}
static aclnnStatus mask_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                          false, a[7], ws, ex);
}
static aclnnStatus indices_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnMaxPool2dWithIndicesGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], false, a[5], a[6],
                                                     ws, ex);
}
static aclnnStatus indices_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                             false, a[7], ws, ex);
}
static aclnnStatus i2c_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnIm2colGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], ws, ex);
}
static aclnnStatus i2c_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnIm2colBackwardGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], a[6], ws, ex);
}
static aclnnStatus prelu_fw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnPreluGetWorkspaceSize(a[0], a[1], a[2], ws, ex);
}
static aclnnStatus prelu_bw(void *const *a, uint64_t *ws, aclOpExecutor **ex)
{
    return aclnnPreluBackwardGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], ws, ex);
}

#define IMG(name) TEN(name, ACL_FLOAT, 4, 1, 2, 4, 4)
#define POOLED(name) TEN(name, ACL_FLOAT, 4, 1, 2, 2, 2)
#define PAIR(name, v) ARR(name, 2, v, v)

static const op_spec OPS[] = {
    {"aclnnReplicationPad2d", pad_fw, 3,
     {IMG("self"), ARR("padding", 4, 1, 1, 1, 1), TEN("out", ACL_FLOAT, 4, 1, 2, 6, 6)}},
    {"aclnnReplicationPad2dBackward", pad_bw, 4,
     {TEN("gradOutput", ACL_FLOAT, 4, 1, 2, 6, 6), IMG("self"), ARR("padding", 4, 1, 1, 1, 1),
      IMG("gradInput")}},
    {"aclnnUpsampleNearestExact1d", up_fw, 3,
     {TEN("self", ACL_FLOAT, 3, 1, 2, 4), ARR("outputSize", 1, 8), TEN("out", ACL_FLOAT, 3, 1, 2, 8)}},
    {"aclnnUpsampleNearestExact1dBackward", up_bw, 4,
     {TEN("gradOutput", ACL_FLOAT, 3, 1, 2, 8), ARR("outputSize", 1, 8), ARR("inputSize", 3, 1, 2, 4),
      TEN("out", ACL_FLOAT, 3, 1, 2, 4)}},
    {"aclnnMaxPool2dWithMask", mask_fw, 7,
     {IMG("self"), PAIR("kernelSize", 2), PAIR("stride", 2), PAIR("padding", 0), PAIR("dilation", 1),
      POOLED("out"), TEN("indices", ACL_INT8, 4, 1, 2, 4, 64)}},
    {"aclnnMaxPool2dWithMaskBackward", mask_bw, 8,
     {POOLED("gradOutput"), IMG("self"), TEN("indices", ACL_INT8, 4, 1, 2, 4, 64), PAIR("kernelSize", 2),
      PAIR("stride", 2), PAIR("padding", 0), PAIR("dilation", 1), IMG("gradInput")}},
    {"aclnnMaxPool2dWithIndices", indices_fw, 7,
     {IMG("self"), PAIR("kernelSize", 2), PAIR("stride", 2), PAIR("padding", 0), PAIR("dilation", 1),
      POOLED("out"), TEN("indices", ACL_INT64, 4, 1, 2, 2, 2)}},
    {"aclnnMaxPool2dWithIndicesBackward", indices_bw, 8,
     {POOLED("gradOutput"), IMG("self"), TEN("indices", ACL_INT32, 4, 1, 2, 2, 2), PAIR("kernelSize", 2),
      PAIR("stride", 2), PAIR("padding", 0), PAIR("dilation", 1), IMG("gradInput")}},
    {"aclnnIm2col", i2c_fw, 6,
     {IMG("self"), PAIR("kernelSize", 2), PAIR("dilation", 1), PAIR("padding", 0), PAIR("stride", 1),
      TEN("out", ACL_FLOAT, 3, 1, 8, 9)}},
    {"aclnnIm2colBackward", i2c_bw, 7,
     {TEN("gradOutput", ACL_FLOAT, 3, 1, 8, 9), PAIR("inputSize", 4), PAIR("kernelSize", 2),
      PAIR("dilation", 1), PAIR("padding", 0), PAIR("stride", 1), IMG("out")}},
    {"aclnnPrelu", prelu_fw, 3, {IMG("self"), TEN("weight", ACL_FLOAT, 1, 2), IMG("out")}},
    {"aclnnPreluBackward", prelu_bw, 5,
     {IMG("gradOutput"), IMG("self"), TEN("weight", ACL_FLOAT, 1, 2), IMG("gradInput"),
      TEN("gradWeight", ACL_FLOAT, 1, 2)}},
};

/* Phase 1 never reads tensor data: one zeroed block serves every tensor. */
static void *g_data;

static void *make_arg(const arg_spec *spec)
{
    if (spec->kind == A)
        return aclCreateIntArray(spec->dims, (uint64_t)spec->ndim);
    int64_t strides[4], step = 1, numel = 1;
    for (int i = spec->ndim - 1; i >= 0; i--) {
        strides[i] = step;
        step *= spec->dims[i];
    }
    numel = step;
    return aclCreateTensor(spec->dims, (uint64_t)spec->ndim, spec->dtype, strides, 0, ACL_FORMAT_ND,
                           &numel, 1, g_data);
}

static void destroy_arg(const arg_spec *spec, void *handle)
{
    if (spec->kind == A)
        aclDestroyIntArray(handle);
    else
        aclDestroyTensor(handle);
}

/* A pointer of the same kind that was a handle and is no more. */
static void *destroyed_arg(const arg_spec *spec)
{
    void *handle = make_arg(spec);
    destroy_arg(spec, handle);
    return handle;
}

/* Every argument of `op` replaced in turn by a bad pointer of each sort. */
static void check_op(const op_spec *op, aclTensor *other_tensor, aclIntArray *other_array)
{
    void *args[MAX_ARGS];
    for (int i = 0; i < op->nargs; i++)
        args[i] = make_arg(&op->args[i]);

    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT(op->call(args, &ws, &ex), 0, "");
    if (ex != NULL)
        aclDestroyAclOpExecutor(ex);

    unsigned char foreign[512];
    memset(foreign, 0x5A, sizeof foreign);
    for (int i = 0; i < op->nargs; i++) {
        const arg_spec *spec = &op->args[i];
        void *bad[3] = {destroyed_arg(spec), foreign,
                        spec->kind == T ? (void *)other_array : (void *)other_tensor};
        const char *sort[3] = {"destroyed", "foreign", "wrong-kind"};
        for (int b = 0; b < 3; b++) {
            void *saved = args[i];
            args[i] = bad[b];
            (void)aclGetRecentErrMsg();
            ex = NULL;
            aclnnStatus st = op->call(args, &ws, &ex);
            CHECK(st == ACLNN_ERR_PARAM_INVALID, "%s with a %s %s: status %d", op->op, sort[b],
                  spec->name, (int)st);
            const char *msg = aclGetRecentErrMsg();
            CHECK(msg != NULL && strstr(msg, op->op) != NULL && strstr(msg, spec->name) != NULL,
                  "%s with a %s %s: message %s", op->op, sort[b], spec->name, msg ? msg : "(null)");
            if (ex != NULL)
                aclDestroyAclOpExecutor(ex);
            args[i] = saved;
        }
    }
    for (int i = 0; i < op->nargs; i++)
        destroy_arg(&op->args[i], args[i]);
}

static void check_double_destroys(void)
{
    const int64_t dims[1] = {2};
    const float values[2] = {1, 2};
    const bool flags[2] = {true, false};
    float one = 1;
    aclTensor *t = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data);
    EXPECT_OK(aclDestroyTensor(t));
    EXPECT(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor");
    aclIntArray *ia = aclCreateIntArray(dims, 1);
    EXPECT_OK(aclDestroyIntArray(ia));
    EXPECT(aclDestroyIntArray(ia), ACLNN_ERR_PARAM_INVALID, "aclDestroyIntArray");
    aclFloatArray *fa = aclCreateFloatArray(values, 2);
    EXPECT_OK(aclDestroyFloatArray(fa));
    EXPECT(aclDestroyFloatArray(fa), ACLNN_ERR_PARAM_INVALID, "aclDestroyFloatArray");
    aclBoolArray *ba = aclCreateBoolArray(flags, 2);
    EXPECT_OK(aclDestroyBoolArray(ba));
    EXPECT(aclDestroyBoolArray(ba), ACLNN_ERR_PARAM_INVALID, "aclDestroyBoolArray");
    aclScalar *s = aclCreateScalar(&one, ACL_FLOAT);
    EXPECT_OK(aclDestroyScalar(s));
    EXPECT(aclDestroyScalar(s), ACLNN_ERR_PARAM_INVALID, "aclDestroyScalar");

    /* wrong kind: an int array handed to the tensor destroy is refused, and still usable */
    ia = aclCreateIntArray(dims, 1);
    EXPECT(aclDestroyTensor((aclTensor *)(void *)ia), ACLNN_ERR_PARAM_INVALID, "aclIntArray");
    uint64_t size = 0;
    EXPECT_OK(aclGetIntArraySize(ia, &size));
    CHECK(size == 1, "int array size %llu after a refused destroy", (unsigned long long)size);
    EXPECT_OK(aclDestroyIntArray(ia));
    EXPECT(aclGetIntArraySize(ia, &size), ACLNN_ERR_PARAM_INVALID, "aclGetIntArraySize");

    /* a list whose tensor the caller destroyed: reported, the rest freed once */
    aclTensor *items[2] = {aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data),
                           aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data)};
    aclTensorList *list = aclCreateTensorList((const aclTensor *const *)items, 2);
    EXPECT_OK(aclDestroyTensor(items[0]));
    EXPECT(aclDestroyTensorList(list), ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor");
    EXPECT(aclDestroyTensorList(list), ACLNN_ERR_PARAM_INVALID, "aclDestroyTensorList");
    aclScalar *scalars[1] = {aclCreateScalar(&one, ACL_FLOAT)};
    aclScalarList *slist = aclCreateScalarList((const aclScalar *const *)scalars, 1);
    EXPECT_OK(aclDestroyScalarList(slist));
    EXPECT(aclDestroyScalarList(slist), ACLNN_ERR_PARAM_INVALID, "aclDestroyScalarList");

    /* getters and setters on a destroyed tensor */
    t = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data);
    EXPECT_OK(aclDestroyTensor(t));
    int64_t *shape = NULL;
    uint64_t ndim = 0;
    aclDataType dtype;
    void *addr = NULL;
    EXPECT(aclGetViewShape(t, &shape, &ndim), ACLNN_ERR_PARAM_INVALID, "aclGetViewShape");
    EXPECT(aclGetViewStrides(t, &shape, &ndim), ACLNN_ERR_PARAM_INVALID, "aclGetViewStrides");
    EXPECT(aclGetStorageShape(t, &shape, &ndim), ACLNN_ERR_PARAM_INVALID, "aclGetStorageShape");
    EXPECT(aclGetDataType(t, &dtype), ACLNN_ERR_PARAM_INVALID, "aclGetDataType");
    EXPECT(aclGetRawTensorAddr(t, &addr), ACLNN_ERR_PARAM_INVALID, "aclGetRawTensorAddr");
    EXPECT(aclSetRawTensorAddr(t, g_data), ACLNN_ERR_PARAM_INVALID, "aclSetRawTensorAddr");
    EXPECT(aclInitTensor(t, dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data),
           ACLNN_ERR_PARAM_INVALID, "aclInitTensor");
}

/* A destroyed executor at launch and at every executor call; a destroyed tensor at rebinding. */
static void check_executors(void)
{
    const op_spec *prelu = &OPS[10];
    void *args[3];
    for (int i = 0; i < 3; i++)
        args[i] = make_arg(&prelu->args[i]);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(prelu->call(args, &ws, &ex));
    EXPECT_OK(aclSetAclOpExecutorRepeatable(ex));
    aclTensor *gone = destroyed_arg(&prelu->args[0]);
    EXPECT(aclSetInputTensorAddr(ex, 0, gone, g_data), ACLNN_ERR_PARAM_INVALID, "tensor");
    EXPECT(aclSetInputTensorAddr(ex, 0, (aclTensor *)(void *)g_data, g_data), ACLNN_ERR_PARAM_INVALID,
           "tensor");
    EXPECT_OK(aclDestroyAclOpExecutor(ex));
    EXPECT(aclnnPrelu(NULL, ws, ex, tu_stream), ACLNN_ERR_PARAM_INVALID, "not a live executor");
    EXPECT(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER, "not a live executor");
    EXPECT(aclSetInputTensorAddr(ex, 0, args[0], g_data), ACLNN_ERR_INNER, "not a live executor");
    for (int i = 0; i < 3; i++)
        destroy_arg(&prelu->args[i], args[i]);
}

/* A destroyed handle stays dead when new objects are made after it, though malloc would place
 * them at its address: a second destroy is refused and the new object lives on (it once
 * destroyed the new object). */
static void check_stale_pointers_after_reuse(void)
{
    const int64_t dims[2] = {2, 3};
    for (int round = 0; round < 100; round++) {
        aclTensor *gone = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, g_data);
        aclIntArray *gone_array = aclCreateIntArray(dims, 2);
        EXPECT_OK(aclDestroyTensor(gone));
        EXPECT_OK(aclDestroyIntArray(gone_array));
        aclTensor *fresh = aclCreateTensor(dims, 2, ACL_FLOAT16, NULL, 0, ACL_FORMAT_ND, dims, 2, g_data);
        aclIntArray *fresh_array = aclCreateIntArray(dims, 1);
        CHECK(fresh != gone && (void *)fresh_array != (void *)gone_array,
              "round %d: a destroyed handle's address was handed out again", round);
        EXPECT(aclDestroyTensor(gone), ACLNN_ERR_PARAM_INVALID, "not a live aclTensor");
        EXPECT(aclDestroyIntArray(gone_array), ACLNN_ERR_PARAM_INVALID, "not a live aclIntArray");
        int64_t *shape = NULL;
        uint64_t n = 0;
        EXPECT_OK(aclGetViewShape(fresh, &shape, &n));
        CHECK(n == 2 && shape != NULL && shape[1] == 3, "round %d: the new tensor's shape", round);
        aclnnCpuFreeArray(shape);
        uint64_t size = 0;
        EXPECT_OK(aclGetIntArraySize(fresh_array, &size));
        CHECK(size == 1, "round %d: the new array's size %llu", round, (unsigned long long)size);
        EXPECT_OK(aclDestroyTensor(fresh));
        EXPECT_OK(aclDestroyIntArray(fresh_array));
    }
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    /* device memory, as a CANN program gives its tensors (the checking mode refuses host memory) */
    if (aclrtMalloc(&g_data, 4096, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS || aclrtMemset(g_data, 4096, 0, 4096) != ACL_SUCCESS)
        return 1;
    const int64_t dims[1] = {2};
    aclTensor *other_tensor = aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, g_data);
    aclIntArray *other_array = aclCreateIntArray(dims, 1);
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        check_op(&OPS[i], other_tensor, other_array);
    check_double_destroys();
    check_stale_pointers_after_reuse();
    check_executors();
    aclDestroyTensor(other_tensor);
    aclDestroyIntArray(other_array);
    aclrtFree(g_data);
    tu_close_device();
    return tu_finish("test_meta_handles");
}
