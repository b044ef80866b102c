/*
 * test_op_replication_pad2d.c - aclnnReplicationPad2d and aclnnReplicationPad2dBackward driven
 * the way CANN's official samples do it (aclInit, device, stream, aclrtMalloc, aclCreateTensor,
 * phase 1, workspace, phase 2, synchronize, copy back, destroy, finalize), checked against
 * plain loops written here.  Also covers a non-contiguous output (through the workspace), a
 * 3-D double case, complex128 and the main validation statuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclnnop/aclnn_replication_pad2d.h"

#include "test_util.h"

static aclnnStatus pad_bwd_phase2(void *ws, uint64_t size, aclOpExecutor *ex, aclrtStream s)
{
    return aclnnReplicationPad2dBackward(ws, size, ex, s);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Forward fp32 [N,C,H,W] with padding, contiguous or into a transposed (non-contiguous) out. */
static void test_forward_f32(int transposed_out)
{
    const int64_t N = 2, C = 3, H = 5, W = 4;
    const int64_t pad[4] = {1, 2, 3, 1}; /* left, right, top, bottom */
    const int64_t Ho = H + pad[2] + pad[3], Wo = W + pad[0] + pad[1];
    const int64_t in_shape[4] = {N, C, H, W}, out_shape[4] = {N, C, Ho, Wo};
    const int64_t n_in = tu_numel(in_shape, 4), n_out = tu_numel(out_shape, 4);
    float *x = malloc((size_t)n_in * sizeof(float));
    float *y = malloc((size_t)n_out * sizeof(float));
    for (int64_t i = 0; i < n_in; i++) {
        x[i] = (float)(i * 7 % 23) - 11.5f;
    }
    for (int64_t i = 0; i < n_out; i++) {
        y[i] = NAN;
    }
    /* out viewed with its last two dims transposed in storage: strides (C*Ho*Wo, Ho*Wo, 1, Ho) */
    const int64_t tstrides[4] = {C * Ho * Wo, Ho * Wo, 1, Ho};
    tu_tensor self = tu_make_tensor(x, (size_t)n_in, 4, in_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(y, (size_t)n_out, 4, out_shape, 4, transposed_out ? tstrides : NULL, 0, ACL_FLOAT,
                                   ACL_FORMAT_ND);
    aclIntArray *padding = aclCreateIntArray(pad, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnReplicationPad2dGetWorkspaceSize(self.t, padding, out.t, &ws, &ex);
    CHECK(st == 0, "forward phase 1 returned %d: %s", st, aclGetRecentErrMsg());
    if (transposed_out) {
        CHECK(ws > 0, "a non-contiguous out needs workspace, got %llu", (unsigned long long)ws);
    }
    if (st == 0) {
        st = tu_run(aclnnReplicationPad2d, ws, ex);
        CHECK(st == 0, "forward phase 2 returned %d", st);
        aclrtMemcpy(y, out.bytes, out.dev, out.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        int bad = 0;
        for (int64_t p = 0; p < N * C; p++) {
            for (int64_t i = 0; i < Ho; i++) {
                for (int64_t j = 0; j < Wo; j++) {
                    const float want = x[p * H * W + clamp64(i - pad[2], 0, H - 1) * W +
                                         clamp64(j - pad[0], 0, W - 1)];
                    const int64_t at = transposed_out ? p * Ho * Wo + j * Ho + i : (p * Ho + i) * Wo + j;
                    bad += memcmp(&y[at], &want, sizeof want) != 0;
                }
            }
        }
        CHECK(bad == 0, "forward fp32 (transposed out %d): %d wrong elements", transposed_out, bad);
    }
    aclDestroyIntArray(padding);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
    free(x);
    free(y);
}

/* Forward complex128 3-D (16-byte elements). */
static void test_forward_c128(void)
{
    const int64_t C = 2, H = 3, W = 2, pad[4] = {1, 0, 2, 2};
    const int64_t Ho = H + 4, Wo = W + 1;
    const int64_t in_shape[3] = {C, H, W}, out_shape[3] = {C, Ho, Wo};
    double x[2 * 2 * 3 * 2], y[2 * 2 * 7 * 3];
    for (int i = 0; i < 24; i++) {
        x[i] = i + 0.25 * i * i;
    }
    for (int i = 0; i < 84; i++) {
        y[i] = NAN;
    }
    tu_tensor self = tu_make_tensor(x, 12, 16, in_shape, 3, NULL, 0, ACL_COMPLEX128, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(y, 42, 16, out_shape, 3, NULL, 0, ACL_COMPLEX128, ACL_FORMAT_ND);
    aclIntArray *padding = aclCreateIntArray(pad, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnReplicationPad2dGetWorkspaceSize(self.t, padding, out.t, &ws, &ex);
    CHECK(st == 0, "complex128 phase 1 returned %d", st);
    if (st == 0) {
        CHECK(tu_run(aclnnReplicationPad2d, ws, ex) == 0, "complex128 phase 2 failed");
        aclrtMemcpy(y, out.bytes, out.dev, out.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        int bad = 0;
        for (int64_t c = 0; c < C; c++) {
            for (int64_t i = 0; i < Ho; i++) {
                for (int64_t j = 0; j < Wo; j++) {
                    const int64_t src = (c * H + clamp64(i - 2, 0, H - 1)) * W + clamp64(j - 1, 0, W - 1);
                    const int64_t dst = (c * Ho + i) * Wo + j;
                    bad += y[2 * dst] != x[2 * src] || y[2 * dst + 1] != x[2 * src + 1];
                }
            }
        }
        CHECK(bad == 0, "forward complex128: %d wrong elements", bad);
    }
    aclDestroyIntArray(padding);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
}

/* Atlas A2's order when both H and W are padded (or neither): PadV3GradReplicate's edge-first
 * loops (ops-math:conversion/pad_v3_grad_replicate/op_kernel/pad_v3_grad_replicate_h_w_mini.h):
 * each gradOutput column summed over the rows of a gradInput row (the replicated row, then the
 * top pad rows from row 0, then the bottom pad rows from the last), then those sums likewise
 * across the columns. */
static void edge_first_f32(const float *go, int64_t planes, int64_t H, int64_t W, const int64_t pad[4],
                           float *want)
{
    const int64_t left = pad[0], right = pad[1], top = pad[2], bottom = pad[3];
    const int64_t Ho = H + top + bottom, Wo = W + left + right;
    float *row = malloc((size_t)Wo * sizeof(float));
    for (int64_t p = 0; p < planes; p++) {
        const float *g = go + p * Ho * Wo;
        for (int64_t h = 0; h < H; h++) {
            for (int64_t j = 0; j < Wo; j++) {
                float acc = g[(h + top) * Wo + j];
                for (int64_t i = 0; h == 0 && i < top; i++) {
                    acc = g[i * Wo + j] + acc;
                }
                for (int64_t i = 0; h == H - 1 && i < bottom; i++) {
                    acc = g[(Ho - 1 - i) * Wo + j] + acc;
                }
                row[j] = acc;
            }
            for (int64_t w = 0; w < W; w++) {
                float acc = row[w + left];
                for (int64_t j = 0; w == 0 && j < left; j++) {
                    acc = row[j] + acc;
                }
                for (int64_t j = 0; w == W - 1 && j < right; j++) {
                    acc = row[Wo - 1 - j] + acc;
                }
                want[(p * H + h) * W + w] = acc;
            }
        }
    }
    free(row);
}

/* Backward: the official example (ones [1,1,4,4], pad 1 -> 4 everywhere) and bigger fp32 cases,
 * bit for bit: on Ascend950 against a scatter loop in its (row, column) order from +0, on the
 * default Atlas A2 against edge_first_f32 (every case here pads both H and W, or neither). */
static void test_backward_f32(int64_t N, int64_t C, int64_t H, int64_t W, const int64_t pad[4],
                              int ones, const char *product)
{
    const int64_t Ho = H + pad[2] + pad[3], Wo = W + pad[0] + pad[1];
    const int64_t in_shape[4] = {N, C, H, W}, go_shape[4] = {N, C, Ho, Wo};
    const int64_t n_in = tu_numel(in_shape, 4), n_go = tu_numel(go_shape, 4);
    float *go = malloc((size_t)n_go * sizeof(float));
    float *gi = malloc((size_t)n_in * sizeof(float));
    float *want = calloc((size_t)n_in, sizeof(float));
    for (int64_t i = 0; i < n_go; i++) {
        go[i] = ones ? 1.0f : (float)((i * 37) % 101) / 7.0f - 5.0f;
    }
    for (int64_t i = 0; i < n_in; i++) {
        gi[i] = NAN;
    }
    const int row_major = strcmp(product, "Ascend950") == 0;
    for (int64_t p = 0; row_major && p < N * C; p++) {
        for (int64_t i = 0; i < Ho; i++) {
            for (int64_t j = 0; j < Wo; j++) {
                want[p * H * W + clamp64(i - pad[2], 0, H - 1) * W + clamp64(j - pad[0], 0, W - 1)] +=
                    go[(p * Ho + i) * Wo + j];
            }
        }
    }
    if (!row_major) {
        edge_first_f32(go, N * C, H, W, pad, want);
    }
    CHECK(aclnnCpuSetSocVersion(product) == 0, "aclnnCpuSetSocVersion(%s)", product);
    tu_tensor grad_out = tu_make_tensor(go, (size_t)n_go, 4, go_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor self = tu_make_tensor(NULL, (size_t)n_in, 4, in_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor grad_in = tu_make_tensor(gi, (size_t)n_in, 4, in_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    aclIntArray *padding = aclCreateIntArray(pad, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st =
        aclnnReplicationPad2dBackwardGetWorkspaceSize(grad_out.t, self.t, padding, grad_in.t, &ws, &ex);
    CHECK(st == 0, "backward phase 1 returned %d: %s", st, aclGetRecentErrMsg());
    if (st == 0) {
        CHECK(tu_run(pad_bwd_phase2, ws, ex) == 0, "backward phase 2 failed");
        aclrtMemcpy(gi, grad_in.bytes, grad_in.dev, grad_in.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        int bad = 0;
        for (int64_t i = 0; i < n_in; i++) {
            bad += memcmp(&gi[i], &want[i], sizeof(float)) != 0;
        }
        CHECK(bad == 0, "backward fp32 %s [%lld,%lld,%lld,%lld]: %d wrong elements (first %g vs %g)",
              product, (long long)N, (long long)C, (long long)H, (long long)W, bad, gi[0], want[0]);
    }
    aclnnCpuSetSocVersion(NULL);
    aclDestroyIntArray(padding);
    tu_free_tensor(&grad_out);
    tu_free_tensor(&self);
    tu_free_tensor(&grad_in);
    free(go);
    free(gi);
    free(want);
}

/* 3-D double: self [1,3,3], padding [2,1,1,2], gradOutput [1,6,6] = 1..36, against a scatter
 * loop.  (The spec's PyTorch example self [1,2,3] with bottom = 2 pads by >= H, which we
 * reject: checked to return 161002.) */
static void test_backward_f64_3d(void)
{
    const int64_t in_shape[3] = {1, 3, 3}, go_shape[3] = {1, 6, 6}, pad[4] = {2, 1, 1, 2};
    double go[36], gi[9], want[9] = {0};
    for (int i = 0; i < 36; i++) {
        go[i] = i + 1;
    }
    for (int i = 0; i < 9; i++) {
        gi[i] = NAN;
    }
    for (int64_t i = 0; i < 6; i++) {
        for (int64_t j = 0; j < 6; j++) {
            want[clamp64(i - 1, 0, 2) * 3 + clamp64(j - 2, 0, 2)] += go[i * 6 + j];
        }
    }
    tu_tensor grad_out = tu_make_tensor(go, 36, 8, go_shape, 3, NULL, 0, ACL_DOUBLE, ACL_FORMAT_ND);
    tu_tensor self = tu_make_tensor(NULL, 9, 8, in_shape, 3, NULL, 0, ACL_DOUBLE, ACL_FORMAT_ND);
    tu_tensor grad_in = tu_make_tensor(gi, 9, 8, in_shape, 3, NULL, 0, ACL_DOUBLE, ACL_FORMAT_ND);
    aclIntArray *padding = aclCreateIntArray(pad, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st =
        aclnnReplicationPad2dBackwardGetWorkspaceSize(grad_out.t, self.t, padding, grad_in.t, &ws, &ex);
    CHECK(st == 0, "3-D double phase 1 returned %d", st);
    if (st == 0) {
        CHECK(tu_run(pad_bwd_phase2, ws, ex) == 0, "3-D double phase 2 failed");
        aclrtMemcpy(gi, sizeof gi, grad_in.dev, sizeof gi, ACL_MEMCPY_DEVICE_TO_HOST);
        for (int i = 0; i < 9; i++) {
            CHECK(gi[i] == want[i], "3-D double gradInput[%d] = %g, want %g", i, gi[i], want[i]);
        }
    }
    /* pad >= dim (bottom 2 on H 2) is rejected */
    const int64_t small_shape[3] = {1, 2, 3}, small_go[3] = {1, 5, 6};
    tu_tensor go2 = tu_make_tensor(go, 30, 8, small_go, 3, NULL, 0, ACL_DOUBLE, ACL_FORMAT_ND);
    tu_tensor self2 = tu_make_tensor(NULL, 6, 8, small_shape, 3, NULL, 0, ACL_DOUBLE, ACL_FORMAT_ND);
    st = aclnnReplicationPad2dBackwardGetWorkspaceSize(go2.t, self2.t, padding, self2.t, &ws, &ex);
    const char *msg = aclGetRecentErrMsg();
    CHECK(st == 161002, "pad >= H: got %d", st);
    CHECK(msg != NULL && strstr(msg, "padding") != NULL, "pad >= H message: %s", msg ? msg : "(null)");
    tu_free_tensor(&go2);
    tu_free_tensor(&self2);
    aclDestroyIntArray(padding);
    tu_free_tensor(&grad_out);
    tu_free_tensor(&self);
    tu_free_tensor(&grad_in);
}

/* A few statuses: padding of length 3, mismatched dtypes, NULL padding, 2-D self. */
static void test_validation(void)
{
    const int64_t shape4[4] = {1, 1, 2, 2}, shape4o[4] = {1, 1, 4, 4}, shape2[2] = {2, 2};
    const int64_t pad3[3] = {1, 1, 1}, pad4[4] = {1, 1, 1, 1};
    tu_tensor self = tu_make_tensor(NULL, 4, 4, shape4, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out = tu_make_tensor(NULL, 16, 4, shape4o, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    tu_tensor out16 = tu_make_tensor(NULL, 16, 2, shape4o, 4, NULL, 0, ACL_FLOAT16, ACL_FORMAT_ND);
    tu_tensor self2d = tu_make_tensor(NULL, 4, 4, shape2, 2, NULL, 0, ACL_FLOAT, ACL_FORMAT_ND);
    aclIntArray *p3 = aclCreateIntArray(pad3, 3);
    aclIntArray *p4 = aclCreateIntArray(pad4, 4);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnReplicationPad2dGetWorkspaceSize(self.t, p3, out.t, &ws, &ex);
    const char *msg = aclGetRecentErrMsg();
    CHECK(st == 161002, "padding of length 3: got %d", st);
    CHECK(msg != NULL && strstr(msg, "padding") != NULL, "message should name padding: %s",
          msg ? msg : "(null)");
    st = aclnnReplicationPad2dGetWorkspaceSize(self.t, p4, out16.t, &ws, &ex);
    CHECK(st == 161002, "fp32 self with fp16 out: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnReplicationPad2dGetWorkspaceSize(self.t, NULL, out.t, &ws, &ex);
    CHECK(st == 161001, "NULL padding: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnReplicationPad2dGetWorkspaceSize(self2d.t, p4, out.t, &ws, &ex);
    CHECK(st == 161002, "2-D self: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnReplicationPad2dBackwardGetWorkspaceSize(out.t, self.t, p3, self.t, &ws, &ex);
    CHECK(st == 161002, "backward padding of length 3: got %d", st);
    aclGetRecentErrMsg();
    st = aclnnReplicationPad2dBackwardGetWorkspaceSize(out.t, self.t, p4, NULL, &ws, &ex);
    CHECK(st == 161001, "backward NULL gradInput: got %d", st);
    aclGetRecentErrMsg();
    aclDestroyIntArray(p3);
    aclDestroyIntArray(p4);
    tu_free_tensor(&self);
    tu_free_tensor(&out);
    tu_free_tensor(&out16);
    tu_free_tensor(&self2d);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_forward_f32(0);
    test_forward_f32(1);
    test_forward_c128();
    const int64_t pad1[4] = {1, 1, 1, 1}, pad_mixed[4] = {3, 1, 0, 2}, pad0[4] = {0, 0, 0, 0};
    for (int k = 0; k < 2; k++) {
        const char *product = k == 0 ? "Ascend910B" : "Ascend950";
        test_backward_f32(1, 1, 2, 2, pad1, 1, product);
        test_backward_f32(2, 3, 7, 9, pad_mixed, 0, product);
        test_backward_f32(1, 2, 1, 1, pad0, 0, product);
        test_backward_f32(3, 2, 33, 40, (const int64_t[4]){5, 7, 2, 6}, 0, product);
    }
    test_backward_f64_3d();
    test_validation();
    tu_close_device();
    return tu_finish("test_op_replication_pad2d");
}
