/*
 * test_op_im2col.c - aclnnIm2col and aclnnIm2colBackward driven the way CANN's official samples
 * do it (aclInit, device, stream, aclrtMalloc, aclCreateTensor, aclCreateIntArray, phase 1,
 * workspace, phase 2, synchronize, copy back, destroy, finalize), checked against plain loops
 * written here.  Also: a non-contiguous output (computed in the workspace), fp16 columns with an
 * fp32 out, an empty batch, and the main validation statuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_im2col_backward.h"

#include "test_util.h"

/* IEEE half -> float for checking fp16 results (normal numbers and zero only). */
static uint16_t to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0) return (uint16_t)sign;
    /* values used below are small integers: exact in half */
    return (uint16_t)(sign | ((exp - 127 + 15) << 10) | (man >> 13));
}

/* ---- reference loops ----------------------------------------------------------------------- */
static int64_t windows(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s)
{
    return (size + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

static void ref_im2col(const float *x, int64_t planes, int64_t H, int64_t W, const int64_t *k,
                       const int64_t *d, const int64_t *p, const int64_t *s, float *out)
{
    int64_t OH = windows(H, k[0], d[0], p[0], s[0]), OW = windows(W, k[1], d[1], p[1], s[1]);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t ki = 0; ki < k[0]; ki++)
            for (int64_t kj = 0; kj < k[1]; kj++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        int64_t ih = oh * s[0] - p[0] + ki * d[0], iw = ow * s[1] - p[1] + kj * d[1];
                        float v = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[(pl * H + ih) * W + iw] : 0.0f;
                        out[((pl * k[0] + ki) * k[1] + kj) * OH * OW + oh * OW + ow] = v;
                    }
}

static void ref_col2im(const float *cols, int64_t planes, int64_t H, int64_t W, const int64_t *k,
                       const int64_t *d, const int64_t *p, const int64_t *s, float *out)
{
    int64_t OH = windows(H, k[0], d[0], p[0], s[0]), OW = windows(W, k[1], d[1], p[1], s[1]);
    memset(out, 0, (size_t)(planes * H * W) * sizeof(float));
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t ki = 0; ki < k[0]; ki++)
            for (int64_t kj = 0; kj < k[1]; kj++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        int64_t ih = oh * s[0] - p[0] + ki * d[0], iw = ow * s[1] - p[1] + kj * d[1];
                        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                            out[(pl * H + ih) * W + iw] +=
                                cols[((pl * k[0] + ki) * k[1] + kj) * OH * OW + oh * OW + ow];
                    }
}

/* ---- tests ------------------------------------------------------------------------------ */
static void test_im2col_sample(void)
{
    /* The official sample: self [2,2,3] = 0..11, k 2, d 1, p 1, s 2 -> out [8, 4]. */
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    int64_t x_shape[] = {2, 2, 3}, out_shape[] = {8, 4};
    int64_t kv[] = {2, 2}, dv[] = {1, 1}, pv[] = {1, 1}, sv[] = {2, 2};
    float want[32];
    ref_im2col(x, 2, 2, 3, kv, dv, pv, sv, want);
    float nan_fill[32];
    for (int i = 0; i < 32; i++) nan_fill[i] = NAN;
    tu_tensor self = tu_make_tensor(x, 12, 4, x_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(nan_fill, 32, 4, out_shape, 2, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    aclIntArray *k = aclCreateIntArray(kv, 2), *d = aclCreateIntArray(dv, 2);
    aclIntArray *p = aclCreateIntArray(pv, 2), *s = aclCreateIntArray(sv, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnIm2colGetWorkspaceSize(self.t, k, d, p, s, out.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "im2col phase 1 returned %d", (int)st);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnIm2col, ws, ex) == 0, "im2col phase 2 failed");
    float got[32];
    aclrtMemcpy(got, sizeof got, out.dev, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 32; i++) CHECK(got[i] == want[i], "im2col out[%d] = %g, want %g", i, got[i], want[i]);
    CHECK(want[3] == 4.0f && want[31] == 0.0f, "reference disagrees with the CANN sample");

    /* validation: 5-D self, wrong-length kernel, NULL stride, wrong out shape */
    int64_t bad_shape[] = {1, 1, 2, 2, 3};
    tu_tensor bad = tu_make_tensor(x, 12, 4, bad_shape, 5, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    CHECK(aclnnIm2colGetWorkspaceSize(bad.t, k, d, p, s, out.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "5-D self must be rejected");
    aclIntArray *k3 = aclCreateIntArray(kv, 1);
    CHECK(aclnnIm2colGetWorkspaceSize(self.t, k3, d, p, s, out.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "kernelSize of 1 element must be rejected");
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "kernelSize") != NULL, "message should name kernelSize: %s",
          msg ? msg : "(null)");
    CHECK(aclnnIm2colGetWorkspaceSize(self.t, k, d, p, NULL, out.t, &ws, &ex) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL stride must give 161001");
    CHECK(aclnnIm2colGetWorkspaceSize(self.t, k, d, p, s, self.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "wrong out shape must be rejected");
    (void)aclGetRecentErrMsg();
    aclDestroyIntArray(k3);
    tu_free_tensor(&bad);
    aclDestroyIntArray(k);
    aclDestroyIntArray(d);
    aclDestroyIntArray(p);
    aclDestroyIntArray(s);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
}

static void test_col2im_strided_out(void)
{
    /* gradOutput [2, 3*2*3, L] fp32 -> out [2, 3, 7, 6] written through a transposed view. */
    const int64_t N = 2, C = 3, H = 7, W = 6;
    int64_t kv[] = {2, 3}, dv[] = {2, 1}, pv[] = {1, 1}, sv[] = {2, 1};
    int64_t OH = windows(H, 2, 2, 1, 2), OW = windows(W, 3, 1, 1, 1), L = OH * OW;
    int64_t g_shape[] = {N, C * 6, L}, out_shape[] = {N, C, H, W};
    int64_t n_cols = N * C * 6 * L, n_out = N * C * H * W;
    float *cols = malloc((size_t)n_cols * sizeof(float));
    float *want = malloc((size_t)n_out * sizeof(float));
    float *storage = malloc((size_t)n_out * sizeof(float));
    for (int64_t i = 0; i < n_cols; i++) cols[i] = (float)((i * 37) % 23) - 11.0f;
    ref_col2im(cols, N * C, H, W, kv, dv, pv, sv, want);
    for (int64_t i = 0; i < n_out; i++) storage[i] = NAN;
    /* H and W swapped in memory */
    int64_t out_strides[] = {C * H * W, H * W, 1, H};
    tu_tensor g = tu_make_tensor(cols, (size_t)n_cols, 4, g_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(storage, (size_t)n_out, 4, out_shape, 4, out_strides, 0, ACL_FLOAT, ACL_FORMAT_ND);
    int64_t size_v[] = {H, W};
    aclIntArray *size = aclCreateIntArray(size_v, 2), *k = aclCreateIntArray(kv, 2);
    aclIntArray *d = aclCreateIntArray(dv, 2), *p = aclCreateIntArray(pv, 2), *s = aclCreateIntArray(sv, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnIm2colBackwardGetWorkspaceSize(g.t, size, k, d, p, s, out.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "col2im phase 1 returned %d", (int)st);
    CHECK(ws > 0, "a strided out needs workspace");
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnIm2colBackward, ws, ex) == 0, "col2im phase 2 failed");
    aclrtMemcpy(storage, (size_t)n_out * 4, out.dev, (size_t)n_out * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (int64_t n = 0; n < N * C; n++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
                float v = storage[n * H * W + w * H + h], r = want[(n * H + h) * W + w];
                if (v != r && bad++ < 5) CHECK(0, "col2im [%lld,%lld,%lld] = %g, want %g",
                                               (long long)n, (long long)h, (long long)w, v, r);
            }

    /* fp16 columns, fp32 out: integers stay exact */
    uint16_t *cols16 = malloc((size_t)n_cols * sizeof(uint16_t));
    for (int64_t i = 0; i < n_cols; i++) cols16[i] = to_half(cols[i]);
    tu_tensor g16 = tu_make_tensor(cols16, (size_t)n_cols, 2, g_shape, 3, NULL, 0, ACL_FLOAT16, ACL_FORMAT_ND);
    tu_tensor out32 = tu_make_tensor(NULL, (size_t)n_out, 4, out_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    st = aclnnIm2colBackwardGetWorkspaceSize(g16.t, size, k, d, p, s, out32.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "fp16 -> fp32 col2im phase 1 returned %d", (int)st);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnIm2colBackward, ws, ex) == 0, "fp16 col2im phase 2 failed");
    aclrtMemcpy(storage, (size_t)n_out * 4, out32.dev, (size_t)n_out * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int64_t i = 0; i < n_out; i++) {
        if (storage[i] != want[i]) {
            CHECK(0, "fp16 col2im [%lld] = %g, want %g", (long long)i, storage[i], want[i]);
            break;
        }
    }

    /* validation: L mismatch, and NULL workspaceSize */
    int64_t size_bad[] = {H + 1, W};
    aclIntArray *size2 = aclCreateIntArray(size_bad, 2);
    CHECK(aclnnIm2colBackwardGetWorkspaceSize(g.t, size2, k, d, p, s, out.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "a wrong inputSize must be rejected");
    CHECK(aclnnIm2colBackwardGetWorkspaceSize(g.t, size, k, d, p, s, out.t, NULL, &ex) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL workspaceSize must give 161001");
    (void)aclGetRecentErrMsg();

    aclDestroyIntArray(size2);
    tu_free_tensor(&g16);
    tu_free_tensor(&out32);
    free(cols16);
    aclDestroyIntArray(size);
    aclDestroyIntArray(k);
    aclDestroyIntArray(d);
    aclDestroyIntArray(p);
    aclDestroyIntArray(s);
    tu_free_tensor(&g);
    tu_free_tensor(&out);
    free(cols);
    free(want);
    free(storage);
}

static void test_col2im_empty_batch(void)
{
    int64_t g_shape[] = {0, 60, 56}, out_shape[] = {0, 3, 10, 12};
    tu_tensor g = tu_make_tensor(NULL, 0, 4, g_shape, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(NULL, 0, 4, out_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    int64_t size_v[] = {10, 12}, kv[] = {4, 5}, one[] = {1, 1}, zero[] = {0, 0};
    aclIntArray *size = aclCreateIntArray(size_v, 2), *k = aclCreateIntArray(kv, 2);
    aclIntArray *d = aclCreateIntArray(one, 2), *p = aclCreateIntArray(zero, 2), *s = aclCreateIntArray(one, 2);
    uint64_t ws = 123;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnIm2colBackwardGetWorkspaceSize(g.t, size, k, d, p, s, out.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS && ws == 0, "empty batch: status %d, workspace %llu", (int)st,
          (unsigned long long)ws);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnIm2colBackward, ws, ex) == 0, "empty phase 2 failed");
    aclDestroyIntArray(size);
    aclDestroyIntArray(k);
    aclDestroyIntArray(d);
    aclDestroyIntArray(p);
    aclDestroyIntArray(s);
    tu_free_tensor(&g);
    tu_free_tensor(&out);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_im2col_sample();
    test_col2im_strided_out();
    test_col2im_empty_batch();
    tu_close_device();
    return tu_finish("test_op_im2col");
}
