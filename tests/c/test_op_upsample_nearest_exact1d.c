/*
 * test_op_upsample_nearest_exact1d.c - aclnnUpsampleNearestExact1d and its backward, driven as
 * in CANN's official samples and checked against loops written here (PyTorch's index formula:
 * src = min(floor(float((d + 0.5) * scale)), L - 1) with a float scale).  Covers upsampling at
 * an integer and a non-integer ratio, downsampling, a given `scales`, UINT8, NLC blocks of 2, 4
 * and 8 bytes, a non-contiguous gradOutput, and the main validation statuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"

#include "test_util.h"

/* The reference index formula, written independently of the library. */
static int64_t ref_src(int64_t d, int64_t in_len, int64_t out_len, double scales)
{
    const float scale = scales > 0 ? (float)(1.0 / scales) : (float)in_len / (float)out_len;
    const float position = (float)(((double)d + 0.5) * (double)scale); /* double product, as ATen */
    const int64_t s = (int64_t)floorf(position);
    return s < in_len - 1 ? s : in_len - 1;
}

static void test_forward(int64_t N, int64_t C, int64_t L, int64_t Lout, double scales)
{
    const int64_t in_shape[3] = {N, C, L}, out_shape[3] = {N, C, Lout};
    const int64_t n_in = N * C * L, n_out = N * C * Lout;
    float *x = malloc((size_t)n_in * sizeof(float));
    float *y = malloc((size_t)n_out * sizeof(float));
    for (int64_t i = 0; i < n_in; i++) {
        x[i] = (float)i * 0.5f - 3.0f;
    }
    for (int64_t i = 0; i < n_out; i++) {
        y[i] = NAN;
    }
    tu_tensor self = tu_make_tensor(x, (size_t)n_in, 4, in_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    tu_tensor out = tu_make_tensor(y, (size_t)n_out, 4, out_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    aclIntArray *size = aclCreateIntArray(&Lout, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size, scales, out.t, &ws, &ex);
    CHECK(st == 0, "forward phase 1 (%lld -> %lld) returned %d: %s", (long long)L, (long long)Lout, st,
          aclGetRecentErrMsg());
    if (st == 0) {
        CHECK(tu_run(aclnnUpsampleNearestExact1d, ws, ex) == 0, "forward phase 2 failed");
        aclrtMemcpy(y, out.bytes, out.dev, out.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        int bad = 0;
        for (int64_t r = 0; r < N * C; r++) {
            for (int64_t d = 0; d < Lout; d++) {
                bad += y[r * Lout + d] != x[r * L + ref_src(d, L, Lout, scales)];
            }
        }
        CHECK(bad == 0, "forward %lld -> %lld (scales %g): %d wrong", (long long)L, (long long)Lout, scales,
              bad);
    }
    aclDestroyIntArray(size);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
    free(x);
    free(y);
}

/* The official uint8 example: self [1,3,3] = 0..8, outputSize 5 -> [[0,0,1,2,2],[3,3,4,5,5],...]. */
static void test_forward_uint8(void)
{
    const int64_t in_shape[3] = {1, 3, 3}, out_shape[3] = {1, 3, 5}, Lout = 5;
    uint8_t x[9], y[15];
    const uint8_t want[15] = {0, 0, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8};
    for (int i = 0; i < 9; i++) {
        x[i] = (uint8_t)i;
    }
    memset(y, 0xff, sizeof y);
    tu_tensor self = tu_make_tensor(x, 9, 1, in_shape, 3, NULL, 0, ACL_UINT8, ACL_FORMAT_NCL);
    tu_tensor out = tu_make_tensor(y, 15, 1, out_shape, 3, NULL, 0, ACL_UINT8, ACL_FORMAT_NCL);
    aclIntArray *size = aclCreateIntArray(&Lout, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size, 0.0, out.t, &ws, &ex);
    CHECK(st == 0, "uint8 phase 1 returned %d", st);
    if (st == 0) {
        CHECK(tu_run(aclnnUpsampleNearestExact1d, ws, ex) == 0, "uint8 phase 2 failed");
        aclrtMemcpy(y, sizeof y, out.dev, sizeof y, ACL_MEMCPY_DEVICE_TO_HOST);
        CHECK(memcmp(y, want, sizeof y) == 0, "uint8 example result differs");
    }
    aclDestroyIntArray(size);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
}

/* Backward fp32 against a scatter loop (same order: bit-identical; at these sizes the card's
 * gather map, which the default product uses, owns each gradient as the scatter map does),
 * optionally reading a gradOutput stored with its last two dims transposed. */
static void test_backward(int64_t N, int64_t C, int64_t Lin, int64_t Lout, double scales, int strided)
{
    const int64_t go_shape[3] = {N, C, Lout}, gi_shape[3] = {N, C, Lin};
    const int64_t n_go = N * C * Lout, n_gi = N * C * Lin;
    float *go = malloc((size_t)n_go * sizeof(float));   /* logical values, contiguous */
    float *store = malloc((size_t)n_go * sizeof(float)); /* what goes to the device */
    float *gi = malloc((size_t)n_gi * sizeof(float));
    float *want = calloc((size_t)n_gi, sizeof(float));
    for (int64_t i = 0; i < n_go; i++) {
        go[i] = (float)((i * 13) % 29) * 0.37f - 4.0f;
    }
    /* storage layout [N, Lout, C] viewed as [N, C, Lout]: strides (C*Lout, 1, C) */
    const int64_t tstrides[3] = {C * Lout, 1, C};
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t d = 0; d < Lout; d++) {
                const int64_t logical = (n * C + c) * Lout + d;
                store[strided ? n * C * Lout + d * C + c : logical] = go[logical];
            }
        }
    }
    for (int64_t i = 0; i < n_gi; i++) {
        gi[i] = NAN;
    }
    for (int64_t r = 0; r < N * C; r++) {
        for (int64_t d = 0; d < Lout; d++) {
            want[r * Lin + ref_src(d, Lin, Lout, scales)] += go[r * Lout + d];
        }
    }
    tu_tensor grad_out = tu_make_tensor(store, (size_t)n_go, 4, go_shape, 3, strided ? tstrides : NULL, 0, ACL_FLOAT,
                                        ACL_FORMAT_NCL);
    tu_tensor grad_in = tu_make_tensor(gi, (size_t)n_gi, 4, gi_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    aclIntArray *out_size = aclCreateIntArray(&Lout, 1);
    aclIntArray *in_size = aclCreateIntArray(gi_shape, 3);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(grad_out.t, out_size, in_size, scales,
                                                                         grad_in.t, &ws, &ex);
    CHECK(st == 0, "backward phase 1 (%lld <- %lld) returned %d: %s", (long long)Lin, (long long)Lout, st,
          aclGetRecentErrMsg());
    if (strided) {
        CHECK(ws > 0, "a strided gradOutput needs workspace");
    }
    if (st == 0) {
        CHECK(tu_run(aclnnUpsampleNearestExact1dBackward, ws, ex) == 0, "backward phase 2 failed");
        aclrtMemcpy(gi, grad_in.bytes, grad_in.dev, grad_in.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        int bad = 0;
        for (int64_t i = 0; i < n_gi; i++) {
            bad += memcmp(&gi[i], &want[i], sizeof(float)) != 0;
        }
        CHECK(bad == 0, "backward %lld <- %lld (scales %g, strided %d): %d wrong", (long long)Lin,
              (long long)Lout, scales, strided, bad);
    }
    aclDestroyIntArray(out_size);
    aclDestroyIntArray(in_size);
    tu_free_tensor(&grad_out);
    tu_free_tensor(&grad_in);
    free(go);
    free(store);
    free(gi);
    free(want);
}

static void test_validation(void)
{
    const int64_t shape[3] = {1, 2, 3}, big[3] = {1, 2, 200}, in3[3] = {1, 2, 3};
    const int64_t zero = 0, six = 6, two[2] = {6, 8}, len200 = 200;
    tu_tensor self = tu_make_tensor(NULL, 6, 4, shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    tu_tensor out = tu_make_tensor(NULL, 12, 4, (const int64_t[3]){1, 2, 6}, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    tu_tensor go_big = tu_make_tensor(NULL, 400, 4, big, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NCL);
    aclIntArray *size0 = aclCreateIntArray(&zero, 1);
    aclIntArray *size6 = aclCreateIntArray(&six, 1);
    aclIntArray *size2 = aclCreateIntArray(two, 2);
    aclIntArray *size200 = aclCreateIntArray(&len200, 1);
    aclIntArray *insize = aclCreateIntArray(in3, 3);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size0, 0.0, out.t, &ws, &ex);
    CHECK(st == 161002, "outputSize [0]: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size2, 0.0, out.t, &ws, &ex);
    CHECK(st == 161002, "outputSize [6, 8]: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnUpsampleNearestExact1dGetWorkspaceSize(NULL, size6, 0.0, out.t, &ws, &ex);
    CHECK(st == 161001, "NULL self: got %d", st);
    aclGetRecentErrMsg();
    /* 200 <- 3 is more than 50x: "scales is too large" */
    st = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(go_big.t, size200, insize, 0.0, self.t, &ws, &ex);
    const char *msg = aclGetRecentErrMsg();
    CHECK(st == 161002, "ratio > 50: got %d", st);
    CHECK(msg != NULL && strstr(msg, "scales") != NULL, "ratio message: %s", msg ? msg : "(null)");
    st = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(out.t, size6, insize, -1.0, self.t, &ws, &ex);
    CHECK(st == 161002, "negative scales: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(out.t, NULL, insize, 0.0, self.t, &ws, &ex);
    CHECK(st == 161001, "NULL outputSize: got %d", st);
    aclGetRecentErrMsg();
    aclDestroyIntArray(size0);
    aclDestroyIntArray(size6);
    aclDestroyIntArray(size2);
    aclDestroyIntArray(size200);
    aclDestroyIntArray(insize);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
    tu_free_tensor(&go_big);
}

/* An NHWC self read as NLC [N, L, C]: each index moves a block of C elements, so uint8 C = 2,
 * 4, 8 and float C = 2 give the 2-, 4- and 8-byte lanes of the AVX-512 window permutations
 * (kernels/upsample/upsample_fwd_window_avx512.c); checked byte for byte against ref_src. */
static void test_forward_blocks(int64_t N, int64_t L, int64_t C, int64_t Lout, aclDataType dtype, size_t size)
{
    const int64_t in_shape[3] = {N, L, C}, out_shape[3] = {N, Lout, C};
    const size_t block = (size_t)C * size, n_in = (size_t)(N * L * C), n_out = (size_t)(N * Lout * C);
    unsigned char *x = malloc(n_in * size), *y = malloc(n_out * size);
    for (size_t b = 0; b < n_in * size; b++) {
        x[b] = (unsigned char)(b * 7 + b / 251);
    }
    tu_tensor self = tu_make_tensor(x, n_in, size, in_shape, 3, NULL, 0, dtype, ACL_FORMAT_NHWC);
    tu_tensor out = tu_make_tensor(NULL, n_out, size, out_shape, 3, NULL, 0, dtype, ACL_FORMAT_NHWC);
    aclIntArray *len = aclCreateIntArray(&Lout, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, len, 0.0, out.t, &ws, &ex));
    CHECK(tu_run(aclnnUpsampleNearestExact1d, ws, ex) == 0 && tu_copy_back(&out, y) == 0, "blocks phase 2");
    int bad = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t d = 0; d < Lout; d++) {
            const unsigned char *want = x + (size_t)(n * L + ref_src(d, L, Lout, 0.0)) * block;
            bad += memcmp(y + (size_t)(n * Lout + d) * block, want, block) != 0;
        }
    }
    CHECK(bad == 0, "NLC blocks of %zu bytes, %lld -> %lld: %d wrong", block, (long long)L, (long long)Lout, bad);
    aclDestroyIntArray(len);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
    free(x);
    free(y);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_forward(2, 3, 16, 32, 0.0);
    test_forward(1, 4, 100, 299, 0.0);
    test_forward(2, 2, 56, 7, 0.0);
    test_forward(1, 1, 5, 12, 2.5);
    test_forward(1, 1, 4, 6, 1.7);
    test_forward_uint8();
    for (int64_t Lout = 30; Lout <= 34; Lout += 2) {
        test_forward_blocks(3, 21, 2, Lout, ACL_UINT8, 1);  /* 2-byte lanes, 32 a vector */
        test_forward_blocks(3, 11, 4, Lout / 2, ACL_UINT8, 1); /* 4-byte lanes, 16 */
        test_forward_blocks(3, 5, 8, Lout / 4, ACL_UINT8, 1);  /* 8-byte lanes, 8 */
        test_forward_blocks(3, 5, 2, Lout / 4, ACL_FLOAT, 4);
    }
    test_forward_blocks(2, 40, 2, 32, ACL_UINT8, 1); /* a 40-input window: not a permutation */
    test_backward(2, 3, 16, 32, 0.0, 0);
    test_backward(1, 4, 100, 299, 0.0, 1);
    test_backward(2, 2, 56, 7, 0.0, 0);
    test_backward(1, 1, 5, 12, 2.5, 0);
    test_backward(2, 3, 10, 500, 0.0, 1);
    test_backward(1, 2, 7, 3, 0.0, 0);
    test_validation();
    tu_close_device();
    return tu_finish("test_op_upsample_nearest_exact1d");
}
