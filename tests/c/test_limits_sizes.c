/*
 * Size limits: shapes whose element count or byte size overflows 64 bits are refused, with a
 * message, by aclCreateTensor (NULL) and by every operator's phase 1 (ACLNN_ERR_PARAM_INVALID)
 * when the overflow comes from an attribute (padding, kernel, output size...). A view that is
 * legal but enormous (zero strides) asks for a workspace no allocator can give: aclrtMalloc
 * refuses it with ACL_ERROR_RT_MEMORY_ALLOCATION and phase 2 refuses a smaller workspace.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"

#include "test_util.h"

/* Under AddressSanitizer (make sanitize) an impossible malloc must return NULL like libc's
 * instead of aborting the test: that is the path under test. Ignored without ASan. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static const int64_t BIG32 = (int64_t)1 << 32, BIG31 = (int64_t)1 << 31;

static void create_tensor_overflows(void)
{
    static char storage[64];
    /* element count 2^64 */
    const int64_t count_overflow[2] = {BIG32, BIG32};
    aclTensor *t = aclCreateTensor(count_overflow, 2, ACL_INT8, NULL, 0, ACL_FORMAT_ND, count_overflow, 2, storage);
    CHECK(t == NULL, "2^32 x 2^32 int8 tensor accepted");
    EXPECT_MSG("aclCreateTensor(2^64 elements)", "aclCreateTensor");
    /* 2^62 elements of 4 bytes = 2^64 bytes */
    const int64_t bytes_overflow[2] = {BIG31, BIG31};
    t = aclCreateTensor(bytes_overflow, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, bytes_overflow, 2, storage);
    CHECK(t == NULL, "2^31 x 2^31 float tensor accepted");
    EXPECT_MSG("aclCreateTensor(2^64 bytes)", "aclCreateTensor");
    /* 2^61 complex128 (16 bytes) in storage: 2^65 bytes */
    const int64_t c128[1] = {(int64_t)1 << 61};
    t = aclCreateTensor(c128, 1, ACL_COMPLEX128, NULL, 0, ACL_FORMAT_ND, c128, 1, storage);
    CHECK(t == NULL, "2^61 complex128 tensor accepted");
    EXPECT_MSG("aclCreateTensor(complex128 bytes)", "aclCreateTensor");
    /* the same overflow in the storage shape only */
    const int64_t small_view[1] = {4};
    t = aclCreateTensor(small_view, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, bytes_overflow, 2, storage);
    CHECK(t == NULL, "storage of 2^64 bytes accepted");
    EXPECT_MSG("aclCreateTensor(storage overflow)", "aclCreateTensor");
    /* strides whose reach overflows: stride 2^62 over 4 elements */
    const int64_t huge_stride[1] = {(int64_t)1 << 62};
    t = aclCreateTensor(small_view, 1, ACL_FLOAT, huge_stride, 0, ACL_FORMAT_ND, small_view, 1, storage);
    CHECK(t == NULL, "stride 2^62 x 3 accepted");
    EXPECT_MSG("aclCreateTensor(stride reach)", "aclCreateTensor");
    /* offset near INT64_MAX */
    t = aclCreateTensor(small_view, 1, ACL_FLOAT, NULL, INT64_MAX - 1, ACL_FORMAT_ND, small_view, 1, storage);
    CHECK(t == NULL, "offset INT64_MAX-1 accepted");
    EXPECT_MSG("aclCreateTensor(offset)", "aclCreateTensor");
}

/* A small device tensor of `dims`. */
static aclTensor *device_tensor(const int64_t *dims, uint64_t rank, aclDataType dtype, void **dev)
{
    int64_t n = 1;
    for (uint64_t i = 0; i < rank; i++)
        n *= dims[i];
    size_t bytes = (size_t)(n > 0 ? n : 1) * aclDataTypeSize(dtype);
    if (aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return NULL;
    aclrtMemset(*dev, bytes, 0, bytes);
    return aclCreateTensor(dims, rank, dtype, NULL, 0, ACL_FORMAT_ND, dims, rank, *dev);
}

static void expect_invalid(const char *what, aclnnStatus st, aclOpExecutor *ex, const char *word)
{
    CHECK(st == ACLNN_ERR_PARAM_INVALID, "%s: expected 161002, got %d", what, st);
    if (st == ACLNN_SUCCESS)
        aclDestroyAclOpExecutor(ex);
    EXPECT_MSG(what, word);
}

static void phase1_overflows(void)
{
    void *x_dev = NULL, *y_dev = NULL;
    const int64_t x_dims[4] = {1, 1, 4, 4}, y_dims[4] = {1, 1, 4, 4};
    aclTensor *x = device_tensor(x_dims, 4, ACL_FLOAT, &x_dev);
    aclTensor *y = device_tensor(y_dims, 4, ACL_FLOAT, &y_dev);
    CHECK(x && y, "set-up");
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;

    /* ReplicationPad2d: W + left + right overflows int64 */
    const int64_t pads[4] = {INT64_MAX - 2, INT64_MAX - 2, 0, 0};
    aclIntArray *padding = aclCreateIntArray(pads, 4);
    expect_invalid("ReplicationPad2d(padding near INT64_MAX)",
                   aclnnReplicationPad2dGetWorkspaceSize(x, padding, y, &ws, &ex), ex, "aclnnReplicationPad2d");
    aclDestroyIntArray(padding);

    /* Im2col: dilation * (kernel - 1) overflows */
    const int64_t k[2] = {(int64_t)1 << 62, 2}, d[2] = {8, 1}, p[2] = {0, 0}, s[2] = {1, 1};
    aclIntArray *ka = aclCreateIntArray(k, 2), *da = aclCreateIntArray(d, 2), *pa = aclCreateIntArray(p, 2),
                *sa = aclCreateIntArray(s, 2);
    const int64_t col_dims[3] = {1, 4, 4};
    void *col_dev = NULL;
    aclTensor *cols = device_tensor(col_dims, 3, ACL_FLOAT, &col_dev);
    expect_invalid("Im2col(kernel 2^62, dilation 8)",
                   aclnnIm2colGetWorkspaceSize(x, ka, da, pa, sa, cols, &ws, &ex), ex, "aclnnIm2col");
    /* Im2colBackward: inputSize + 2 * padding overflows */
    const int64_t hw[2] = {INT64_MAX, INT64_MAX}, big_pad[2] = {INT64_MAX / 2, 1};
    aclIntArray *hwa = aclCreateIntArray(hw, 2), *bpa = aclCreateIntArray(big_pad, 2);
    const int64_t k2[2] = {2, 2};
    aclIntArray *k2a = aclCreateIntArray(k2, 2);
    expect_invalid("Im2colBackward(inputSize INT64_MAX)",
                   aclnnIm2colBackwardGetWorkspaceSize(cols, hwa, k2a, sa, bpa, sa, x, &ws, &ex), ex,
                   "aclnnIm2colBackward");

    /* MaxPool2dWithMask: kernel INT64_MAX (padding 0) */
    const int64_t kmax[2] = {INT64_MAX, INT64_MAX}, one[2] = {1, 1};
    aclIntArray *kma = aclCreateIntArray(kmax, 2), *onea = aclCreateIntArray(one, 2);
    const int64_t mask_dims[4] = {1, 1, 4, 64};
    void *mask_dev = NULL;
    aclTensor *mask = device_tensor(mask_dims, 4, ACL_INT8, &mask_dev);
    expect_invalid("MaxPool2dWithMask(kernel INT64_MAX)",
                   aclnnMaxPool2dWithMaskGetWorkspaceSize(x, kma, onea, pa, onea, true, y, mask, &ws, &ex), ex,
                   "aclnnMaxPool2dWithMask");

    /* UpsampleNearestExact1d: outputSize INT64_MAX */
    const int64_t seq_dims[3] = {1, 2, 4}, lmax[1] = {INT64_MAX};
    void *seq_dev = NULL, *seq_out_dev = NULL;
    aclTensor *seq = device_tensor(seq_dims, 3, ACL_FLOAT, &seq_dev);
    aclTensor *seq_out = device_tensor(seq_dims, 3, ACL_FLOAT, &seq_out_dev);
    aclIntArray *la = aclCreateIntArray(lmax, 1);
    expect_invalid("UpsampleNearestExact1d(outputSize INT64_MAX)",
                   aclnnUpsampleNearestExact1dGetWorkspaceSize(seq, la, 0.0, seq_out, &ws, &ex), ex,
                   "aclnnUpsampleNearestExact1d");
    /* UpsampleNearestExact1dBackward: inputSize INT64_MAX */
    const int64_t in_size[3] = {1, 2, INT64_MAX}, lo[1] = {4};
    aclIntArray *isa = aclCreateIntArray(in_size, 3), *loa = aclCreateIntArray(lo, 1);
    expect_invalid("UpsampleNearestExact1dBackward(inputSize INT64_MAX)",
                   aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(seq, loa, isa, 0.0, seq_out, &ws, &ex), ex,
                   "aclnnUpsampleNearestExact1dBackward");

    aclDestroyIntArray(ka);
    aclDestroyIntArray(da);
    aclDestroyIntArray(pa);
    aclDestroyIntArray(sa);
    aclDestroyIntArray(hwa);
    aclDestroyIntArray(bpa);
    aclDestroyIntArray(k2a);
    aclDestroyIntArray(kma);
    aclDestroyIntArray(onea);
    aclDestroyIntArray(la);
    aclDestroyIntArray(isa);
    aclDestroyIntArray(loa);
    aclTensor *tensors[] = {x, y, cols, mask, seq, seq_out};
    void *devs[] = {x_dev, y_dev, col_dev, mask_dev, seq_dev, seq_out_dev};
    for (int i = 0; i < 6; i++) {
        aclDestroyTensor(tensors[i]);
        aclrtFree(devs[i]);
    }
}

/* A legal 2^60-element zero-stride view: phase 1 may plan a huge workspace, which no
 * allocation can satisfy; aclrtMalloc says so, and phase 2 refuses anything smaller. */
static void enormous_workspace(void)
{
    void *dev = NULL, *out_dev = NULL, *w_dev = NULL;
    aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&out_dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&w_dev, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(dev, 64, 0, 64);
    aclrtMemset(w_dev, 64, 0, 64);
    const int64_t dims[2] = {(int64_t)1 << 30, (int64_t)1 << 30}, zero[2] = {0, 0}, one[1] = {1};
    aclTensor *x = aclCreateTensor(dims, 2, ACL_FLOAT, zero, 0, ACL_FORMAT_ND, one, 1, dev);
    aclTensor *out = aclCreateTensor(dims, 2, ACL_FLOAT, zero, 0, ACL_FORMAT_ND, one, 1, out_dev);
    aclTensor *w = aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, one, 1, w_dev);
    CHECK(x && out && w, "zero-stride 2^60 views are legal: %s", aclGetRecentErrMsg());
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluGetWorkspaceSize(x, w, out, &ws, &ex);
    if (st == ACLNN_SUCCESS) {
        printf("phase 1 planned %llu workspace bytes\n", (unsigned long long)ws);
        if (ws > ((uint64_t)1 << 50)) {
            void *big = NULL;
            /* (sizes above PTRDIFF_MAX make valgrind flag the libc call itself as "fishy") */
            size_t ask = ws > (uint64_t)PTRDIFF_MAX ? (size_t)1 << 62 : (size_t)ws;
            aclError mst = aclrtMalloc(&big, ask, ACL_MEM_MALLOC_HUGE_FIRST);
            CHECK(mst == ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc(%llu) returned %d",
                  (unsigned long long)ws, mst);
            EXPECT_MSG("aclrtMalloc(huge workspace)", NULL);
            st = aclnnPrelu(NULL, 0, ex, NULL);
            CHECK(st != ACLNN_SUCCESS, "phase 2 ran without the %llu-byte workspace", (unsigned long long)ws);
            EXPECT_MSG("aclnnPrelu(workspace 0)", "aclnnPrelu");
        } else {
            /* A library that needs no workspace here would have to compute 2^60 elements; don't. */
            aclDestroyAclOpExecutor(ex);
        }
    } else {
        printf("phase 1 refused the enormous view: %d\n", st);
        EXPECT_MSG("aclnnPreluGetWorkspaceSize(enormous)", "aclnnPrelu");
    }
    aclDestroyTensor(x);
    aclDestroyTensor(out);
    aclDestroyTensor(w);
    aclrtFree(dev);
    aclrtFree(out_dev);
    aclrtFree(w_dev);
}

static void impossible_malloc(void)
{
    const size_t sizes[] = {(size_t)-1, (size_t)-64, (size_t)1 << 62, (size_t)1 << 48};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = (void *)0x1;
        aclError st = aclrtMalloc(&p, sizes[i], ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK(st == ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc(%zu) returned %d", sizes[i], st);
        EXPECT_MSG("aclrtMalloc(impossible)", NULL);
        if (st == ACL_SUCCESS)
            aclrtFree(p);
        st = aclrtMallocHost(&p, sizes[i]);
        CHECK(st == ACL_ERROR_RT_MEMORY_ALLOCATION || st == ACL_ERROR_BAD_ALLOC,
              "aclrtMallocHost(%zu) returned %d", sizes[i], st);
        EXPECT_MSG("aclrtMallocHost(impossible)", NULL);
        if (st == ACL_SUCCESS)
            aclrtFreeHost(p);
    }
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        printf("runtime set-up failed\n");
        return 1;
    }
    aclGetRecentErrMsg();
    create_tensor_overflows();
    phase1_overflows();
    enormous_workspace();
    impossible_malloc();
    aclrtResetDevice(0);
    aclFinalize();
    return tu_finish("test_limits_sizes");
}
