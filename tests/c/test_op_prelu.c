/*
 * test_op_prelu.c - aclnnPrelu and aclnnPreluBackward driven the way CANN's official samples do
 * it, checked against plain loops written here: the official sample values, a per-channel NCHW
 * case with a strided (transposed) self, gradOutput broadcast from [1, C, 1, 1], empty inputs
 * (gradWeight zeroed) and the main validation statuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_prelu_backward.h"

#include "test_util.h"

static void test_prelu_sample(void)
{
    float x[] = {-2, 1, 2, -3, -4.7f, 5.3f, -6.9f, 7}, w[] = {3}, got[8];
    int64_t shape[] = {2, 4}, w_shape[] = {1};
    tu_tensor self = tu_make_f32(x, 8, shape, 2, NULL), weight = tu_make_f32(w, 1, w_shape, 1, NULL);
    tu_tensor out = tu_make_f32(NULL, 8, shape, 2, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "prelu phase 1 returned %d", (int)st);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnPrelu, ws, ex) == 0, "prelu phase 2 failed");
    aclrtMemcpy(got, sizeof got, out.dev, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 8; i++) {
        float want = x[i] > 0 ? x[i] : w[0] * x[i];
        CHECK(got[i] == want, "prelu out[%d] = %.9g, want %.9g", i, got[i], want);
    }
    /* An unread message of this thread survives a launch + synchronize, also when the
     * synchronize runs the kernel on this thread itself (stream.c). */
    CHECK(aclnnPreluGetWorkspaceSize(self.t, NULL, out.t, &ws, &ex) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL weight must give 161001");
    st = aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &ws, &ex);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnPrelu, ws, ex) == 0, "prelu phase 2 failed");
    const char *kept = aclGetRecentErrMsg();
    CHECK(kept != NULL && strstr(kept, "weight") != NULL, "the earlier message is kept: %s",
          kept ? kept : "(null)");
    /* weight with 2 elements for 4 channels, and a 9-D self, are rejected */
    float w2[] = {1, 2};
    int64_t w2_shape[] = {2}, shape9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 4};
    tu_tensor weight2 = tu_make_f32(w2, 2, w2_shape, 1, NULL), self9 = tu_make_f32(x, 8, shape9, 9, NULL);
    CHECK(aclnnPreluGetWorkspaceSize(self.t, weight2.t, out.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID,
          "2 weights for 4 channels must be rejected");
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL && strstr(msg, "weight") != NULL, "message should name weight: %s", msg ? msg : "(null)");
    st = aclnnPreluGetWorkspaceSize(self9.t, weight.t, out.t, &ws, &ex);
    CHECK(self9.t != NULL && st == ACLNN_ERR_PARAM_INVALID, "9-D self must be rejected, got %d (%s)",
          (int)st, self9.t ? "tensor" : "no tensor");
    CHECK(aclnnPreluGetWorkspaceSize(self.t, NULL, out.t, &ws, &ex) == ACLNN_ERR_PARAM_NULLPTR,
          "NULL weight must give 161001");
    (void)aclGetRecentErrMsg();
    tu_free_tensor(&weight2);
    tu_free_tensor(&self9);
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&out);
}

static void test_prelu_backward_channels(void)
{
    /* self [2, 3, 4, 5] read through a view with H and W swapped in memory; gradOutput [1,3,1,1]. */
    enum { N = 2, C = 3, H = 4, W = 5, NUM = N * C * H * W };
    float self_storage[NUM], self_logical[NUM], g[C], w[C] = {0.25f, -0.5f, 2.0f};
    for (int i = 0; i < NUM; i++) self_logical[i] = (float)((i * 7) % 11) - 5.0f;
    for (int n = 0; n < N * C; n++)
        for (int h = 0; h < H; h++)
            for (int x = 0; x < W; x++) self_storage[n * H * W + x * H + h] = self_logical[(n * H + h) * W + x];
    for (int c = 0; c < C; c++) g[c] = 1.5f + (float)c;
    int64_t shape[] = {N, C, H, W}, strides[] = {C * H * W, H * W, 1, H};
    int64_t g_shape[] = {1, C, 1, 1}, w_shape[] = {C};
    tu_tensor grad = tu_make_f32(g, C, g_shape, 4, NULL);
    tu_tensor self = tu_make_f32(self_storage, NUM, shape, 4, strides);
    tu_tensor weight = tu_make_f32(w, C, w_shape, 1, NULL);
    tu_tensor grad_in = tu_make_f32(NULL, NUM, shape, 4, NULL);
    tu_tensor grad_w = tu_make_f32(NULL, C, w_shape, 1, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluBackwardGetWorkspaceSize(grad.t, self.t, weight.t, grad_in.t, grad_w.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "prelu backward phase 1 returned %d", (int)st);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnPreluBackward, ws, ex) == 0, "prelu backward phase 2 failed");
    float gi[NUM], gw[C], want_gw[C] = {0, 0, 0};
    aclrtMemcpy(gi, sizeof gi, grad_in.dev, sizeof gi, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(gw, sizeof gw, grad_w.dev, sizeof gw, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < NUM; i++) {
        int c = (i / (H * W)) % C;
        float x = self_logical[i];
        float want = x > 0 ? g[c] : w[c] * g[c];
        CHECK(gi[i] == want, "gradInput[%d] = %g, want %g", i, gi[i], want);
        if (!(x > 0)) want_gw[c] += x * g[c];   /* small integers times halves: exact */
    }
    for (int c = 0; c < C; c++) CHECK(gw[c] == want_gw[c], "gradWeight[%d] = %g, want %g", c, gw[c], want_gw[c]);

    /* validation: gradWeight of the wrong shape, mismatched gradOutput */
    int64_t bad_shape[] = {1, C};
    tu_tensor bad_gw = tu_make_f32(NULL, C, bad_shape, 2, NULL);
    CHECK(aclnnPreluBackwardGetWorkspaceSize(grad.t, self.t, weight.t, grad_in.t, bad_gw.t, &ws, &ex) ==
               ACLNN_ERR_PARAM_INVALID, "gradWeight [1, C] must be rejected");
    CHECK(aclnnPreluBackwardGetWorkspaceSize(weight.t, self.t, weight.t, grad_in.t, grad_w.t, &ws, &ex) ==
               ACLNN_ERR_PARAM_INVALID, "gradOutput [C] does not broadcast to [N,C,H,W]");
    CHECK(aclnnPreluBackwardGetWorkspaceSize(grad.t, self.t, weight.t, NULL, grad_w.t, &ws, &ex) ==
               ACLNN_ERR_PARAM_NULLPTR, "NULL gradInput must give 161001");
    (void)aclGetRecentErrMsg();
    tu_free_tensor(&bad_gw);
    tu_free_tensor(&grad);
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&grad_in);
    tu_free_tensor(&grad_w);
}

static void test_prelu_backward_empty(void)
{
    /* self [0, 2, 3, 2] with gradOutput [1, 2, 3, 2]: nothing to compute, gradWeight zeroed. */
    int64_t shape[] = {0, 2, 3, 2}, g_shape[] = {1, 2, 3, 2}, w_shape[] = {2};
    float ones[12], w[2] = {0.5f, 0.5f}, gw[2] = {NAN, NAN};
    for (int i = 0; i < 12; i++) ones[i] = 1.0f;
    tu_tensor grad = tu_make_f32(ones, 12, g_shape, 4, NULL);
    tu_tensor self = tu_make_f32(NULL, 0, shape, 4, NULL);
    tu_tensor weight = tu_make_f32(w, 2, w_shape, 1, NULL);
    tu_tensor grad_in = tu_make_f32(NULL, 0, shape, 4, NULL);
    tu_tensor grad_w = tu_make_f32(gw, 2, w_shape, 1, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnPreluBackwardGetWorkspaceSize(grad.t, self.t, weight.t, grad_in.t, grad_w.t, &ws, &ex);
    CHECK(st == ACLNN_SUCCESS, "empty prelu backward phase 1 returned %d", (int)st);
    if (st == ACLNN_SUCCESS) CHECK(tu_run(aclnnPreluBackward, ws, ex) == 0, "empty phase 2 failed");
    aclrtMemcpy(gw, sizeof gw, grad_w.dev, sizeof gw, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK(gw[0] == 0.0f && gw[1] == 0.0f, "gradWeight = [%g, %g], want zeros", gw[0], gw[1]);
    tu_free_tensor(&grad);
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&grad_in);
    tu_free_tensor(&grad_w);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_prelu_sample();
    test_prelu_backward_channels();
    test_prelu_backward_empty();
    tu_close_device();
    return tu_finish("test_op_prelu");
}
