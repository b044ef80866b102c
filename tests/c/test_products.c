/*
 * test_products.c - the emulated product (SoC): aclnnCpuSetSocVersion and aclrtGetSocName, a
 * few per-product operator rules (docs/compatibility.md, "Products"), and negative view dims,
 * which aclCreateTensor accepts and every operator rejects with ACLNN_ERR_PARAM_INVALID, and the
 * V1 max-pool bit mask of Ascend910/310P (with Ascend910's FLOAT computed as FLOAT16).
 * Run without ACLNN_SOC_VERSION.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_replication_pad2d.h"
#include "aclnnop/aclnn_upsample_nearest_exact1d.h"

#include "test_util.h"

static int same(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void test_names(void)
{
    CHECK(same(aclrtGetSocName(), "Ascend910B3"), "default %s", aclrtGetSocName());
    const char *cases[][2] = {
        {"Ascend910B2", "Ascend910B2"},        {"Ascend310P3", "Ascend310P3"},
        {"Ascend910", "Ascend910A"},        {"Ascend910A", "Ascend910A"},
        {"Ascend910_95", "Ascend950PR_9599"},     {"Ascend950PR_9599", "Ascend950PR_9599"},
        {"Ascend910_9391", "Ascend910_9391"},  {"Ascend910B", "Ascend910B3"},
        {"Ascend310P", "Ascend310P3"},      {"Ascend910_93", "Ascend910_9391"},
        /* the "_CPU" names libaclnn reported before: still accepted */
        {"Ascend910B_CPU", "Ascend910B3"},  {"Ascend950_CPU", "Ascend950PR_9599"},
        {"Ascend910_93_CPU", "Ascend910_9391"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        EXPECT_OK(aclnnCpuSetSocVersion(cases[i][0]));
        CHECK(same(aclrtGetSocName(), cases[i][1]), "%s reports %s", cases[i][0], aclrtGetSocName());
    }
    CHECK(same(aclnnCpuGetSocFamily(), "Ascend910_93"), "the family: %s", aclnnCpuGetSocFamily());
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910B2"));
    CHECK(same(aclnnCpuGetSocFamily(), "Ascend910B"), "the family of a card: %s", aclnnCpuGetSocFamily());
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910_93"));
    EXPECT(aclnnCpuSetSocVersion("Ascend910X"), ACLNN_ERR_PARAM_INVALID, "Ascend910X");
    CHECK(same(aclrtGetSocName(), "Ascend910_9391"), "unchanged after an unknown name: %s", aclrtGetSocName());
    EXPECT(aclnnCpuSetSocVersion("ascend910b"), ACLNN_ERR_PARAM_INVALID, "ascend910b");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    CHECK(same(aclrtGetSocName(), "Ascend910B3"), "NULL restores the default: %s", aclrtGetSocName());
}

/* aclnnCpuSetThreadSocVersion: the thread's own product over the process's, not seen by others. */
static void *thread_product(void *arg)
{
    (void)arg;
    CHECK(same(aclrtGetSocName(), "Ascend310P3"), "a new thread follows the process: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetThreadSocVersion("Ascend910"));
    CHECK(same(aclrtGetSocName(), "Ascend910A"), "the thread's own: %s", aclrtGetSocName());
    EXPECT(aclnnCpuSetThreadSocVersion("Ascend911"), ACLNN_ERR_PARAM_INVALID, "Ascend911");
    CHECK(same(aclrtGetSocName(), "Ascend910A"), "unchanged after an unknown name: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetThreadSocVersion(""));
    CHECK(same(aclrtGetSocName(), "Ascend310P3"), "back to the process's: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetThreadSocVersion("Ascend950PR_9599"));
    CHECK(same(aclrtGetSocName(), "Ascend950PR_9599"), "a long name: %s", aclrtGetSocName());
    return NULL;
}

static void test_thread_names(void)
{
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend310P"));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, thread_product, NULL) == 0, "pthread_create");
    pthread_join(thread, NULL);
    CHECK(same(aclrtGetSocName(), "Ascend310P3"), "the other thread's choice is not ours: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetThreadSocVersion("Ascend910_93"));
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    CHECK(same(aclrtGetSocName(), "Ascend910_9391"), "the thread's wins over the process's: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetThreadSocVersion(NULL));
    CHECK(same(aclrtGetSocName(), "Ascend910A"), "NULL follows the process again: %s", aclrtGetSocName());
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
}

/* Phase 1 never reads tensor data: one device block serves every tensor of the phase-1 tests. */
static void *g_data;

static aclTensor *tensor(const int64_t *dims, uint64_t n, aclDataType dt)
{
    int64_t storage = 64;
    return aclCreateTensor(dims, n, dt, NULL, 0, ACL_FORMAT_ND, &storage, 1, g_data);
}

/* Im2col with self [0,-2,2,3]: created, then rejected with 161002 (CANN: 161002 from the
 * operator's "GetDim(i) <= 0" check). */
static void test_negative_dims(void)
{
    const int64_t neg[4] = {0, -2, 2, 3}, out_dims[3] = {0, 8, 4};
    aclTensor *self = tensor(neg, 4, ACL_FLOAT), *out = tensor(out_dims, 3, ACL_FLOAT);
    CHECK(self != NULL, "aclCreateTensor accepts a negative view dim");
    int64_t two[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    aclIntArray *k = aclCreateIntArray(two, 2), *d = aclCreateIntArray(one, 2), *p = aclCreateIntArray(zero, 2),
                *s = aclCreateIntArray(one, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT(aclnnIm2colGetWorkspaceSize(self, k, d, p, s, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "self");
    /* Prelu: self and weight negative */
    const int64_t w1[1] = {1}, neg2[2] = {3, -1};
    aclTensor *w = tensor(w1, 1, ACL_FLOAT), *x = tensor(neg2, 2, ACL_FLOAT), *y = tensor(neg2, 2, ACL_FLOAT);
    EXPECT(aclnnPreluGetWorkspaceSize(x, w, y, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "negative");
    const int64_t pads[4] = {1, 1, 1, 1};
    aclIntArray *pad = aclCreateIntArray(pads, 4);
    const int64_t huge[4] = {-1, (int64_t)1 << 40, (int64_t)1 << 40, 3};
    aclTensor *big = tensor(huge, 4, ACL_FLOAT);
    CHECK(big != NULL, "a negative dim with huge others is accepted too");
    EXPECT(aclnnReplicationPad2dGetWorkspaceSize(big, pad, big, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "negative");
    aclDestroyTensor(self); aclDestroyTensor(out); aclDestroyTensor(w); aclDestroyTensor(x);
    aclDestroyTensor(y); aclDestroyTensor(big);
    aclDestroyIntArray(k); aclDestroyIntArray(d); aclDestroyIntArray(p); aclDestroyIntArray(s);
    aclDestroyIntArray(pad);
}

/* MaxPool2dWithIndicesBackward takes FLOAT only on A2/A3, FLOAT16 too on Ascend950. */
static void test_max_pool_indices_backward_dtypes(void)
{
    const int64_t in[4] = {1, 1, 4, 4}, o[4] = {1, 1, 2, 2};
    aclTensor *grad = tensor(o, 4, ACL_FLOAT16), *self = tensor(in, 4, ACL_FLOAT16), *gi = tensor(in, 4, ACL_FLOAT16);
    aclTensor *idx = tensor(o, 4, ACL_INT32);
    int64_t two[2] = {2, 2}, zero[2] = {0, 0}, one[2] = {1, 1};
    aclIntArray *k = aclCreateIntArray(two, 2), *s = aclCreateIntArray(two, 2), *p = aclCreateIntArray(zero, 2),
                *d = aclCreateIntArray(one, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(grad, self, idx, k, s, p, d, false, gi, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "FLOAT16");
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT_OK(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(grad, self, idx, k, s, p, d, false, gi, &ws, &ex));
    aclDestroyAclOpExecutor(ex);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    EXPECT(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(grad, self, idx, k, s, p, d, false, gi, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "support list []");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    aclDestroyTensor(grad); aclDestroyTensor(self); aclDestroyTensor(gi); aclDestroyTensor(idx);
    aclDestroyIntArray(k); aclDestroyIntArray(s); aclDestroyIntArray(p); aclDestroyIntArray(d);
}

/* The V1 mask of a 2x2 stride-1 pool over [1, 2, 3, 3]: Ho = Wo = 2 (P = 4), one 16-channel
 * group, rows of (ceil(4/16) + 1) * 16 = 32 uint16 words.  Channel 0 grows to the bottom right
 * (every window's maximum at cell k = 3), channel 1 to the top left (k = 0, with a tie in the
 * first window: the first cell wins).  2049 is not an fp16 value: Ascend910 pools 2048. */
enum { V1_ROW_WORDS = 32, V1_MASK_BYTES = 2 * 4 * 64 };

static void expect_v1_mask(const uint16_t *words, const char *soc)
{
    for (int r = 0; r < V1_MASK_BYTES / 2; r++) {
        const int k = r / V1_ROW_WORDS, p = r % V1_ROW_WORDS;
        const uint16_t want = p < 4 && k == 0 ? 0x0002 : p < 4 && k == 3 ? 0x0001 : 0;
        CHECK(words[r] == want, "%s: mask row %d word %d = 0x%04x, want 0x%04x", soc, k, p, words[r], want);
    }
}

static void run_v1_forward(const char *soc, float want_last)
{
    const float x[18] = {1, 2, 3, 4, 5, 6, 7, 8, 2049, 9, 9, 7, 6, 5, 4, 3, 2, 1};
    const int64_t in[4] = {1, 2, 3, 3}, o[4] = {1, 2, 2, 2}, m[4] = {1, 2, 4, 64};
    const float want[8] = {5, 6, 8, want_last, 9, 9, 6, 5};
    tu_tensor self = tu_make_f32(x, 18, in, 4, NULL), out = tu_make_f32(NULL, 8, o, 4, NULL);
    tu_tensor mask = tu_make_tensor(NULL, V1_MASK_BYTES, 1, m, 4, NULL, 0, ACL_INT8, ACL_FORMAT_ND);
    int64_t two[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    aclIntArray *k = aclCreateIntArray(two, 2), *s = aclCreateIntArray(one, 2), *p = aclCreateIntArray(zero, 2),
                *d = aclCreateIntArray(one, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnMaxPool2dWithMaskGetWorkspaceSize(self.t, k, s, p, d, false, out.t, mask.t, &ws, &ex));
    CHECK(tu_run(aclnnMaxPool2dWithMask, ws, ex) == 0, "%s: forward launch", soc);
    float got[8];
    uint16_t words[V1_MASK_BYTES / 2];
    CHECK(tu_copy_back(&out, got) == 0 && tu_copy_back(&mask, words) == 0, "%s: copy back", soc);
    for (int i = 0; i < 8; i++) CHECK(got[i] == want[i], "%s: out[%d] = %g, want %g", soc, i, got[i], want[i]);
    expect_v1_mask(words, soc);

    /* Ascend910's backward decodes the mask; FLOAT runs as FLOAT16, so 0.1 arrives as the fp16
     * value 0.0999755859375 at every winner cell. */
    if (strcmp(soc, "Ascend910") == 0) {
        const float g[8] = {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f};
        const int winners[8] = {4, 5, 7, 8, 9 + 0, 9 + 1, 9 + 3, 9 + 4};
        tu_tensor grad = tu_make_f32(g, 8, o, 4, NULL), gi = tu_make_f32(NULL, 18, in, 4, NULL);
        EXPECT_OK(aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(grad.t, self.t, mask.t, k, s, p, d, false, gi.t,
                                                                 &ws, &ex));
        CHECK(tu_run(aclnnMaxPool2dWithMaskBackward, ws, ex) == 0, "backward launch");
        float back[18];
        CHECK(tu_copy_back(&gi, back) == 0, "backward copy back");
        for (int i = 0; i < 18; i++) {
            int winner = 0;
            for (int w = 0; w < 8; w++) winner |= winners[w] == i;
            const float expect = winner ? 0.0999755859375f : 0.0f;
            CHECK(back[i] == expect, "gradInput[%d] = %.10g, want %.10g", i, back[i], expect);
        }
        tu_free_tensor(&grad);
        tu_free_tensor(&gi);
    }
    tu_free_tensor(&self); tu_free_tensor(&out); tu_free_tensor(&mask);
    aclDestroyIntArray(k); aclDestroyIntArray(s); aclDestroyIntArray(p); aclDestroyIntArray(d);
}

static void test_max_pool_v1_mask(void)
{
    if (tu_open_device() != 0) {
        CHECK(0, "runtime setup");
        return;
    }
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend910"));
    run_v1_forward("Ascend910", 2048.0f);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend310P"));
    run_v1_forward("Ascend310P", 2049.0f);
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    tu_close_device();
}

/* UpsampleNearestExact1d reads a self of any format but ND/NCL as NLC [N, L, C]: it runs on A2
 * (dim 1 resized, C-element blocks moved) and fails with 561103 on Ascend950, whose l0 has no
 * NLC path. */
static void test_upsample_nlc(void)
{
    float in[2 * 3 * 2], out[2 * 5 * 2];
    for (int i = 0; i < 12; i++) in[i] = (float)i;
    const int64_t in_dims[3] = {2, 3, 2}, out_dims[3] = {2, 5, 2};
    tu_tensor self = tu_make_tensor(in, 12, sizeof(float), in_dims, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    tu_tensor y = tu_make_tensor(NULL, 20, sizeof(float), out_dims, 3, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    int64_t five = 5;
    aclIntArray *size = aclCreateIntArray(&five, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size, 0.0, y.t, &ws, &ex));
    CHECK(tu_run(aclnnUpsampleNearestExact1d, ws, ex) == 0 && tu_copy_back(&y, out) == 0, "NLC phase 2");
    /* nearest-exact 3 -> 5: sources 0, 0, 1, 2, 2 (floor((d + 0.5) * 0.6)) */
    const int src[5] = {0, 0, 1, 2, 2};
    for (int n = 0; n < 2; n++)
        for (int d = 0; d < 5; d++)
            for (int c = 0; c < 2; c++)
                CHECK(out[(n * 5 + d) * 2 + c] == in[(n * 3 + src[d]) * 2 + c], "NLC out[%d, %d, %d]", n, d, c);
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT(aclnnUpsampleNearestExact1dGetWorkspaceSize(self.t, size, 0.0, y.t, &ws, &ex), ACLNN_ERR_INNER_NULLPTR,
           "NLC");
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    tu_free_tensor(&self);
    tu_free_tensor(&y);
    aclDestroyIntArray(size);
}

/* Ascend950 through the C API: a 2x2 window with dilation 2 over an NHWC [1, 5, 5, 2] input whose
 * value grows with h, w (and c), so every window's maximum is its bottom-right cell
 * (oh+2, ow+2); the backward of ones puts a 1 on each of those nine cells.  A2 rejects the
 * dilation. */
static void test_max_pool_indices_950_dilation_nhwc(void)
{
    enum { H = 5, W = 5, C = 2, HO = 3, WO = 3 };
    float x[H * W * C], ones[HO * WO * C], out[HO * WO * C], gi[H * W * C];
    int64_t idx[HO * WO * C];
    for (int h = 0; h < H; h++)
        for (int w = 0; w < W; w++)
            for (int c = 0; c < C; c++) x[(h * W + w) * C + c] = (float)(c * 100 + h * W + w);
    for (int i = 0; i < HO * WO * C; i++) ones[i] = 1.0f;
    const int64_t in_shape[4] = {1, H, W, C}, out_shape[4] = {1, HO, WO, C};
    tu_tensor tx = tu_make_tensor(x, H * W * C, 4, in_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    tu_tensor tout = tu_make_tensor(NULL, HO * WO * C, 4, out_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    tu_tensor tidx = tu_make_tensor(NULL, HO * WO * C, 8, out_shape, 4, NULL, 0, ACL_INT64, ACL_FORMAT_NHWC);
    tu_tensor tg = tu_make_tensor(ones, HO * WO * C, 4, out_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    tu_tensor tgi = tu_make_tensor(NULL, H * W * C, 4, in_shape, 4, NULL, 0, ACL_FLOAT, ACL_FORMAT_NHWC);
    int64_t two[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
    aclIntArray *k = aclCreateIntArray(two, 2), *s = aclCreateIntArray(one, 2), *p = aclCreateIntArray(zero, 2),
                *d = aclCreateIntArray(two, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT(aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx.t, k, s, p, d, false, tout.t, tidx.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "dilation");
    EXPECT_OK(aclnnCpuSetSocVersion("Ascend950"));
    EXPECT_OK(aclnnMaxPool2dWithIndicesGetWorkspaceSize(tx.t, k, s, p, d, false, tout.t, tidx.t, &ws, &ex));
    EXPECT_OK(tu_run(aclnnMaxPool2dWithIndices, ws, ex));
    EXPECT_OK(aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(tg.t, tx.t, tidx.t, k, s, p, d, false, tgi.t, &ws,
                                                                 &ex));
    EXPECT_OK(tu_run(aclnnMaxPool2dWithIndicesBackward, ws, ex));
    CHECK(tu_copy_back(&tout, out) == 0 && tu_copy_back(&tidx, idx) == 0 && tu_copy_back(&tgi, gi) == 0,
          "copy back");
    for (int oh = 0; oh < HO; oh++)
        for (int ow = 0; ow < WO; ow++)
            for (int c = 0; c < C; c++) {
                const int at = (oh * WO + ow) * C + c, cell = (oh + 2) * W + ow + 2;
                CHECK(out[at] == (float)(c * 100 + cell) && idx[at] == cell, "out[%d,%d,%d] = %g, index %lld", oh,
                      ow, c, out[at], (long long)idx[at]);
            }
    for (int h = 0; h < H; h++)
        for (int w = 0; w < W; w++)
            for (int c = 0; c < C; c++) {
                const float want = h >= 2 && w >= 2 ? 1.0f : 0.0f;
                CHECK(gi[(h * W + w) * C + c] == want, "gradInput[%d,%d,%d] = %g", h, w, c, gi[(h * W + w) * C + c]);
            }
    EXPECT_OK(aclnnCpuSetSocVersion(NULL));
    tu_free_tensor(&tx); tu_free_tensor(&tout); tu_free_tensor(&tidx); tu_free_tensor(&tg); tu_free_tensor(&tgi);
    aclDestroyIntArray(k); aclDestroyIntArray(s); aclDestroyIntArray(p); aclDestroyIntArray(d);
}

int main(void)
{
    if (tu_open_device() != 0 || aclrtMalloc(&g_data, 4096 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST) != 0)
        return 1;
    test_names();
    test_thread_names();
    test_negative_dims();
    test_max_pool_indices_backward_dtypes();
    aclrtFree(g_data);
    tu_close_device();
    test_max_pool_v1_mask();
    if (tu_open_device() != 0) return 1;
    test_upsample_nlc();
    test_max_pool_indices_950_dilation_nhwc();
    tu_close_device();
    return tu_finish("test_products");
}
