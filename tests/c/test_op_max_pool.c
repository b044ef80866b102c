/*
 * test_op_max_pool.c - aclnnMaxPool2dWithMask and aclnnMaxPool2dWithMaskBackward in the style of
 * CANN's official samples, checked against plain loops written here.
 *
 * Covers: forward values and the int32 mask stream (+ zero tail) for 4-D and 3-D inputs,
 * overlapping windows with padding and ceilMode, the backward (gather of the mask; 2x2 stride-2
 * planes wide enough for the direct write), the 1x1 legacy pattern, N = 0, a mask index outside
 * the plane (reported at synchronize), and a few validation statuses.  Returns 0 when every check
 * passes.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"

#include "test_util.h"

typedef struct device_tensor {
    void *addr;
    aclTensor *tensor;
    size_t bytes;
} device_tensor;

static int64_t numel_of(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
}

/* aclrtMalloc + copy host data (or fill bytes with `fill` when host is NULL) + aclCreateTensor. */
static int make_tensor(const int64_t *shape, int ndim, aclDataType dtype, size_t elem, const void *host,
                       int fill, device_tensor *t)
{
    int64_t strides[8];
    int64_t n = numel_of(shape, ndim);
    t->bytes = (size_t)n * elem;
    size_t alloc = t->bytes ? t->bytes : 1;
    if (aclrtMalloc(&t->addr, alloc, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 1;
    void *staging = malloc(alloc);
    if (!staging) return 1;
    if (host)
        memcpy(staging, host, t->bytes);
    else
        memset(staging, fill, alloc);
    int rc = aclrtMemcpy(t->addr, alloc, staging, alloc, ACL_MEMCPY_HOST_TO_DEVICE);
    free(staging);
    if (rc != ACL_SUCCESS) return 1;
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; --i) {
        strides[i] = s;
        s *= shape[i];
    }
    t->tensor = aclCreateTensor(shape, (uint64_t)ndim, dtype, strides, 0, ACL_FORMAT_NCHW, shape, (uint64_t)ndim,
                                t->addr);
    return t->tensor ? 0 : 1;
}

static void free_tensor(device_tensor *t)
{
    if (t->tensor) aclDestroyTensor(t->tensor);
    if (t->addr) aclrtFree(t->addr);
    t->tensor = NULL;
    t->addr = NULL;
}

static int copy_back(const device_tensor *t, void *host)
{
    if (t->bytes == 0) return 0;
    return aclrtMemcpy(host, t->bytes, t->addr, t->bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS;
}

static int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int ceil_mode)
{
    int64_t num = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) --o;
    return o;
}

/* Reference forward for one plane: PyTorch's rule (first max, NaN wins, padding skipped). */
static void reference_pool(const float *in, int64_t H, int64_t W, int64_t k_h, int64_t k_w, int64_t s_h,
                           int64_t s_w, int64_t p_h, int64_t p_w, int64_t Ho, int64_t Wo, float *out, int32_t *arg)
{
    for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
            float best = -INFINITY;
            int64_t best_i = -1;
            for (int64_t a = 0; a < k_h; ++a)
                for (int64_t b = 0; b < k_w; ++b) {
                    int64_t ih = oh * s_h - p_h + a, iw = ow * s_w - p_w + b;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    float v = in[ih * W + iw];
                    if (best_i < 0) best_i = ih * W + iw; /* default: first cell inside the input */
                    if (v > best || isnan(v)) {
                        best = v;
                        best_i = ih * W + iw;
                    }
                }
            out[oh * Wo + ow] = best;
            arg[oh * Wo + ow] = (int32_t)best_i;
        }
}

typedef struct pool_case {
    int ndim;
    int64_t shape[4]; /* [N,]C,H,W */
    int64_t k[2], s[2], p[2];
    int ceil_mode;
} pool_case;

static aclIntArray *int_array2(const int64_t *v) { return aclCreateIntArray(v, 2); }

/* Forward + backward of one case on `stream`, compared with the loops above. */
static void run_case(const pool_case *pc, aclrtStream stream)
{
    const int is3d = pc->ndim == 3;
    const int64_t N = is3d ? 1 : pc->shape[0], C = pc->shape[is3d ? 0 : 1];
    const int64_t H = pc->shape[is3d ? 1 : 2], W = pc->shape[is3d ? 2 : 3];
    const int64_t Ho = pooled(H, pc->k[0], pc->s[0], pc->p[0], pc->ceil_mode);
    const int64_t Wo = pooled(W, pc->k[1], pc->s[1], pc->p[1], pc->ceil_mode);
    const int64_t planes = N * C, P = Ho * Wo;
    const int64_t mask_w = ((P + 15) / 16 + 1) * 32;

    int64_t out_shape[4], mask_shape[4];
    int r = 0;
    if (!is3d) { out_shape[r] = N; mask_shape[r] = N; ++r; }
    out_shape[r] = C; mask_shape[r] = C; ++r;
    out_shape[r] = Ho; mask_shape[r] = pc->k[0] * pc->k[1]; ++r;
    out_shape[r] = Wo; mask_shape[r] = mask_w; ++r;

    float *x = malloc(sizeof(float) * (size_t)(planes * H * W));
    float *ref_out = malloc(sizeof(float) * (size_t)(planes * P));
    int32_t *ref_arg = malloc(sizeof(int32_t) * (size_t)(planes * P));
    float *got_out = malloc(sizeof(float) * (size_t)(planes * P));
    float *grad = malloc(sizeof(float) * (size_t)(planes * P));
    float *ref_gi = calloc((size_t)(planes * H * W), sizeof(float));
    float *got_gi = malloc(sizeof(float) * (size_t)(planes * H * W));
    const int64_t mask_bytes = numel_of(mask_shape, r);
    unsigned char *got_mask = malloc((size_t)mask_bytes);
    if (!x || !ref_out || !ref_arg || !got_out || !grad || !ref_gi || !got_gi || !got_mask) {
        CHECK(0, "host allocation failed");
        goto done;
    }
    /* Small integers: plenty of ties inside windows; negative values so padding matters. */
    for (int64_t i = 0; i < planes * H * W; ++i) x[i] = (float)((i * 7919 + 13) % 11) - 8.0f;
    for (int64_t i = 0; i < planes * P; ++i) grad[i] = (float)((i * 31 + 7) % 17) * 0.25f - 2.0f;
    for (int64_t pl = 0; pl < planes; ++pl)
        reference_pool(x + pl * H * W, H, W, pc->k[0], pc->k[1], pc->s[0], pc->s[1], pc->p[0], pc->p[1], Ho, Wo,
                       ref_out + pl * P, ref_arg + pl * P);
    for (int64_t pl = 0; pl < planes; ++pl)
        for (int64_t o = 0; o < P; ++o) ref_gi[pl * H * W + ref_arg[pl * P + o]] += grad[pl * P + o];

    device_tensor self = {0}, out = {0}, mask = {0}, go = {0}, gi = {0};
    aclIntArray *kernel = int_array2(pc->k), *stride = int_array2(pc->s), *padding = int_array2(pc->p);
    int64_t one[2] = {1, 1};
    aclIntArray *dilation = int_array2(one);
    if (make_tensor(pc->shape, pc->ndim, ACL_FLOAT, 4, x, 0, &self) ||
        make_tensor(out_shape, r, ACL_FLOAT, 4, NULL, 0xFF, &out) ||
        make_tensor(mask_shape, r, ACL_INT8, 1, NULL, 0x5A, &mask) ||
        make_tensor(out_shape, r, ACL_FLOAT, 4, grad, 0, &go) ||
        make_tensor(pc->shape, pc->ndim, ACL_FLOAT, 4, NULL, 0xFF, &gi)) {
        CHECK(0, "device setup failed");
        goto release;
    }

    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    int rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation,
                                                    pc->ceil_mode != 0, out.tensor, mask.tensor, &ws_size, &ex);
    CHECK(rc == 0, "forward phase 1 returned %d", rc);
    if (rc != 0) goto release;
    void *ws = NULL;
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) goto release;
    rc = aclnnMaxPool2dWithMask(ws, ws_size, ex, stream);
    CHECK(rc == 0, "forward phase 2 returned %d", rc);
    rc = aclrtSynchronizeStream(stream);
    CHECK(rc == 0, "forward synchronize returned %d", rc);
    if (ws) aclrtFree(ws);
    copy_back(&out, got_out);
    copy_back(&mask, got_mask);

    for (int64_t i = 0; i < planes * P; ++i)
        CHECK(memcmp(&got_out[i], &ref_out[i], 4) == 0, "out[%lld] = %g, expected %g", (long long)i, got_out[i],
              ref_out[i]);
    if (pc->k[0] * pc->k[1] > 1) {
        for (int64_t i = 0; i < planes * P; ++i) {
            int32_t v;
            memcpy(&v, got_mask + 4 * i, 4);
            CHECK(v == ref_arg[i], "mask int32[%lld] = %d, expected %d", (long long)i, v, ref_arg[i]);
        }
        for (int64_t b = 4 * planes * P; b < mask_bytes; ++b)
            CHECK(got_mask[b] == 0, "mask tail byte %lld = %d, expected 0", (long long)b, got_mask[b]);
    }

    ws_size = 0;
    ex = NULL;
    rc = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(go.tensor, self.tensor, mask.tensor, kernel, stride, padding,
                                                        dilation, pc->ceil_mode != 0, gi.tensor, &ws_size, &ex);
    CHECK(rc == 0, "backward phase 1 returned %d", rc);
    if (rc != 0) goto release;
    ws = NULL;
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) goto release;
    rc = aclnnMaxPool2dWithMaskBackward(ws, ws_size, ex, stream);
    CHECK(rc == 0, "backward phase 2 returned %d", rc);
    rc = aclrtSynchronizeStream(stream);
    CHECK(rc == 0, "backward synchronize returned %d", rc);
    if (ws) aclrtFree(ws);
    copy_back(&gi, got_gi);
    for (int64_t i = 0; i < planes * H * W; ++i)
        CHECK(memcmp(&got_gi[i], &ref_gi[i], 4) == 0, "gradInput[%lld] = %g, expected %g", (long long)i, got_gi[i],
              ref_gi[i]);

release:
    free_tensor(&self); free_tensor(&out); free_tensor(&mask); free_tensor(&go); free_tensor(&gi);
    aclDestroyIntArray(kernel); aclDestroyIntArray(stride); aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
done:
    free(x); free(ref_out); free(ref_arg); free(got_out); free(grad); free(ref_gi); free(got_gi); free(got_mask);
}

/* An index outside the plane: phase 1 and 2 succeed, synchronize reports the kernel's error. */
static void bad_index_case(aclrtStream stream)
{
    int64_t shape[4] = {1, 1, 4, 4}, out_shape[4] = {1, 1, 2, 2}, mask_shape[4] = {1, 1, 4, 64};
    int64_t k[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    float zeros16[16] = {0}, grad[4] = {1, 2, 3, 4}, got[16];
    int8_t mask_host[256] = {0};
    int32_t idx[4] = {0, 2, 16, 10}; /* 16 = H*W: outside */
    memcpy(mask_host, idx, sizeof idx);
    device_tensor self = {0}, mask = {0}, go = {0}, gi = {0};
    aclIntArray *kernel = aclCreateIntArray(k, 2), *stride = aclCreateIntArray(k, 0);
    aclIntArray *padding = aclCreateIntArray(zero, 2), *dilation = aclCreateIntArray(one, 2);
    if (make_tensor(shape, 4, ACL_FLOAT, 4, zeros16, 0, &self) ||
        make_tensor(mask_shape, 4, ACL_INT8, 1, mask_host, 0, &mask) ||
        make_tensor(out_shape, 4, ACL_FLOAT, 4, grad, 0, &go) || make_tensor(shape, 4, ACL_FLOAT, 4, NULL, 0, &gi)) {
        CHECK(0, "device setup failed");
        goto release;
    }
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    int rc = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(go.tensor, self.tensor, mask.tensor, kernel, stride,
                                                            padding, dilation, false, gi.tensor, &ws_size, &ex);
    CHECK(rc == 0, "bad-index phase 1 returned %d", rc);
    if (rc != 0) goto release;
    void *ws = NULL;
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) goto release;
    rc = aclnnMaxPool2dWithMaskBackward(ws, ws_size, ex, stream);
    CHECK(rc == 0, "bad-index phase 2 returned %d", rc);
    rc = aclrtSynchronizeStream(stream);
    CHECK(rc != 0, "bad-index synchronize returned success");
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "indices") != NULL, "bad-index message: %s", msg ? msg : "(null)");
    if (ws) aclrtFree(ws);
    copy_back(&gi, got);
    /* The good contributions landed; the bad one was dropped. */
    CHECK(got[0] == 1 && got[2] == 2 && got[10] == 4 && got[1] == 0, "bad-index gradInput wrong");
release:
    free_tensor(&self); free_tensor(&mask); free_tensor(&go); free_tensor(&gi);
    aclDestroyIntArray(kernel); aclDestroyIntArray(stride); aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
}

/* Statuses of a few invalid calls (full tables live in the Python tests). */
static void validation_cases(void)
{
    int64_t shape[4] = {1, 1, 4, 4}, out_shape[4] = {1, 1, 2, 2}, mask_shape[4] = {1, 1, 4, 64};
    int64_t k2[2] = {2, 2}, k3[3] = {2, 2, 2}, one[2] = {1, 1}, zero[2] = {0, 0}, two[2] = {2, 2};
    device_tensor self = {0}, out = {0}, mask = {0}, out16 = {0};
    aclIntArray *kernel = aclCreateIntArray(k2, 2), *kernel3 = aclCreateIntArray(k3, 3);
    aclIntArray *stride = aclCreateIntArray(k2, 2), *padding = aclCreateIntArray(zero, 2);
    aclIntArray *dilation = aclCreateIntArray(one, 2), *dilation2 = aclCreateIntArray(two, 2);
    if (make_tensor(shape, 4, ACL_FLOAT, 4, NULL, 0, &self) || make_tensor(out_shape, 4, ACL_FLOAT, 4, NULL, 0, &out) ||
        make_tensor(mask_shape, 4, ACL_INT8, 1, NULL, 0, &mask) ||
        make_tensor(out_shape, 4, ACL_FLOAT16, 2, NULL, 0, &out16)) {
        CHECK(0, "device setup failed");
        goto release;
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    int rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(NULL, kernel, stride, padding, dilation, false, out.tensor,
                                                    mask.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_NULLPTR, "NULL self -> %d", rc);
    rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel3, stride, padding, dilation, false, out.tensor,
                                                mask.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_INVALID, "forward kernelSize of 3 -> %d", rc);
    rc = aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(out.tensor, self.tensor, mask.tensor, kernel3, stride, padding,
                                                        dilation, false, self.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_NULLPTR, "backward kernelSize of 3 -> %d (CANN returns NULLPTR)", rc);
    rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation2, false, out.tensor,
                                                mask.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_INVALID, "dilation 2 -> %d", rc);
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "dilation") != NULL, "dilation message: %s", msg ? msg : "(null)");
    rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation, false, out16.tensor,
                                                mask.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_INVALID, "out FLOAT16 with self FLOAT -> %d", rc);
    rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation, false, out.tensor,
                                                out.tensor, &ws, &ex);
    CHECK(rc == ACLNN_ERR_PARAM_INVALID, "indices FLOAT -> %d", rc);
release:
    free_tensor(&self); free_tensor(&out); free_tensor(&mask); free_tensor(&out16);
    aclDestroyIntArray(kernel); aclDestroyIntArray(kernel3); aclDestroyIntArray(stride);
    aclDestroyIntArray(padding); aclDestroyIntArray(dilation); aclDestroyIntArray(dilation2);
}

/* N = 0: success, nothing written. */
static void empty_batch_case(aclrtStream stream)
{
    int64_t shape[4] = {0, 2, 5, 5}, out_shape[4] = {0, 2, 2, 2}, mask_shape[4] = {0, 2, 4, 64};
    int64_t k[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    device_tensor self = {0}, out = {0}, mask = {0};
    aclIntArray *kernel = aclCreateIntArray(k, 2), *stride = aclCreateIntArray(k, 2);
    aclIntArray *padding = aclCreateIntArray(zero, 2), *dilation = aclCreateIntArray(one, 2);
    if (make_tensor(shape, 4, ACL_FLOAT, 4, NULL, 0, &self) || make_tensor(out_shape, 4, ACL_FLOAT, 4, NULL, 0, &out) ||
        make_tensor(mask_shape, 4, ACL_INT8, 1, NULL, 0, &mask)) {
        CHECK(0, "device setup failed");
        goto release;
    }
    uint64_t ws = 7;
    aclOpExecutor *ex = NULL;
    int rc = aclnnMaxPool2dWithMaskGetWorkspaceSize(self.tensor, kernel, stride, padding, dilation, false, out.tensor,
                                                    mask.tensor, &ws, &ex);
    CHECK(rc == 0 && ws == 0, "N=0 forward phase 1 -> %d, workspace %llu", rc, (unsigned long long)ws);
    if (rc == 0) {
        rc = aclnnMaxPool2dWithMask(NULL, 0, ex, stream);
        CHECK(rc == 0, "N=0 forward phase 2 -> %d", rc);
        CHECK(aclrtSynchronizeStream(stream) == 0, "N=0 synchronize failed");
    }
release:
    free_tensor(&self); free_tensor(&out); free_tensor(&mask);
    aclDestroyIntArray(kernel); aclDestroyIntArray(stride); aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    aclrtStream stream = tu_stream;
    static const pool_case cases[] = {
        {4, {1, 1, 4, 3}, {2, 2}, {2, 2}, {0, 0}, 0},
        {4, {2, 3, 7, 9}, {3, 3}, {2, 2}, {1, 1}, 0},
        {4, {2, 3, 7, 9}, {3, 3}, {2, 2}, {1, 1}, 1},
        {4, {1, 2, 8, 10}, {2, 3}, {1, 2}, {1, 1}, 1},
        {3, {3, 9, 10}, {3, 2}, {2, 1}, {1, 0}, 1},
        {4, {1, 2, 13, 11}, {7, 7}, {3, 3}, {3, 3}, 1},
        {4, {2, 2, 6, 5}, {1, 1}, {2, 2}, {0, 0}, 1},
        {4, {1, 4, 30, 30}, {3, 3}, {1, 1}, {1, 1}, 0},
        /* 2x2 stride 2 on planes 8 and more wide: the direct write (plain C without AVX2:
         * aarch64), with odd H and W, floor and ceil */
        {4, {2, 3, 9, 17}, {2, 2}, {2, 2}, {0, 0}, 1},
        {4, {2, 3, 9, 17}, {2, 2}, {2, 2}, {0, 0}, 0},
        {3, {2, 12, 40}, {2, 2}, {2, 2}, {0, 0}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run_case(&cases[i], stream);
    bad_index_case(stream);
    validation_cases();
    empty_batch_case(stream);

    tu_close_device();
    return tu_finish("test_op_max_pool");
}
