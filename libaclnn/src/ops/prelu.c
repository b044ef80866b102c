/*
 * prelu.c - aclnnPrelu: out = self > 0 ? self : weight(c) * self.
 *
 * weight holds 1 value or one value per channel (channels = self.shape[1], 1 for a 0-D/1-D
 * self), whatever its own rank.  As in CANN, self and weight are promoted to a common dtype
 * (FP16 + BF16 -> FLOAT), the select is computed in that dtype and the result is cast to out's
 * dtype.  fp16/bf16 products are computed in fp32 and rounded once, which is exactly a native
 * half-precision multiply (the product of two 11-bit significands is exact in fp32).
 * Elementwise, so any split over threads gives the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_prelu.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "base/nn_simd.h"
#include "ops/im2col_prelu_common.h"
#include "ops/prelu_simd.h"

#define OP "aclnnPrelu"
#define PRELU_MAX_DIMS 8
#define PRELU_CHUNK 1024   /* fp32 staging row for the fp16/bf16 paths (stack) */

typedef struct prelu_plan {
    int64_t numel;
    int64_t channels;      /* weight values: 1 (single weight) or C */
    int64_t inner;         /* elements per channel run: prod(self.shape[2:]); numel if single */
    aclDataType self_dtype, weight_dtype, out_dtype, compute_dtype;
} prelu_plan;

typedef struct prelu_ctx {
    const prelu_plan *plan;
    const void *self;
    const float *weight;   /* channels values, fp32 (exact: promotion only widens) */
    void *out;
    bool simd;             /* fused AVX2 loops (self, compute and out dtypes all equal) */
    bool streaming;        /* non-temporal stores for a large output (fused loops only) */
    bool avx512;           /* fp16/bf16 fused loops in their AVX-512 form */
} prelu_ctx;

/* ---- fp32 inner loops ----------------------------------------------------------------------
 * The product is computed unconditionally and then selected: GCC does not speculate a
 * conditional floating-point multiply (-ftrapping-math), so `x > 0 ? x : w * x` would compile
 * to a branch per element; this form vectorises as multiply + compare + blend. */

NN_IP_HOT static void prelu_run_scalar_w(const float *restrict x, float *restrict y, float w,
                                         int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const float scaled = w * x[i];
        y[i] = x[i] > 0.0f ? x[i] : scaled;
    }
}

NN_IP_HOT static void prelu_run_vector_w(const float *restrict x, float *restrict y,
                                         const float *restrict w, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const float scaled = w[i] * x[i];
        y[i] = x[i] > 0.0f ? x[i] : scaled;
    }
}

/* Applies prelu to the fp32 values x[0..n) whose first element has flat index `first`. */
static void prelu_f32_span(const prelu_plan *p, const float *weight, int64_t first,
                           const float *x, float *y, int64_t n)
{
    int64_t done = 0;
    while (done < n) {
        const int64_t i = first + done;
        int64_t run;
        if (p->channels == 1) {
            run = n - done;
            prelu_run_scalar_w(x + done, y + done, weight[0], run);
        } else if (p->inner == 1) {
            /* channel-last layout ([N, C] or [N, C, 1, ...]): weight varies along the run */
            const int64_t c = i % p->channels;
            run = p->channels - c < n - done ? p->channels - c : n - done;
            prelu_run_vector_w(x + done, y + done, weight + c, run);
        } else {
            const int64_t c = (i / p->inner) % p->channels;
            const int64_t left = p->inner - i % p->inner;
            run = left < n - done ? left : n - done;
            prelu_run_scalar_w(x + done, y + done, weight[c], run);
        }
        done += run;
    }
}

#if NN_PRELU_SIMD
PS_DEFINE_FORWARD(f32, float)
PS_DEFINE_FORWARD(f16, uint16_t)
PS_DEFINE_FORWARD(bf16, uint16_t)

/* ---- AVX-512 loops for fp16/bf16 ----------------------------------------------------------
 * 16 lanes per step and masked tails; the arithmetic is the AVX2 loops' (fp32 product, ordered
 * `x > 0` select, one RNE rounding on the store), so the bytes are identical.  A 16-lane half
 * vector is 32 bytes: the AVX2 loops' 32-byte alignment head (ps_head) serves the streaming
 * stores here too. */
#define P512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,f16c,avx2")))

P512_TARGET static inline __attribute__((always_inline)) __m512 p512_load(const uint16_t *p,
                                                                          __mmask16 m, bool bf16)
{
    return nn512_load_f32(p, 0, m, bf16 ? ACL_BF16 : ACL_FLOAT16);
}

/* Same rounding as nn_half_f32_to_f16 / nn_half_f32_to_bf16 (RNE, NaN quieted). */
P512_TARGET static inline __attribute__((always_inline)) __m256i p512_narrow(__m512 v, bool bf16)
{
    return bf16 ? nn512_round_bf16(v) : nn512_round_f16(v);
}

/* y = x > 0 ? x : w * x over n halves; w is a vector (vw) or one broadcast value (w_vec NULL).
 * Generated for the fp16/bf16 integer rounding (p512_narrow) and for the AVX512-BF16 one
 * (pbf_narrow), which need different target attributes. */
#define DEFINE_P512_FWD(NAME, TARGET, NARROW)                                                         \
TARGET static inline __attribute__((always_inline)) void                                              \
NAME(const uint16_t *x, uint16_t *y, const float *w_vec, float w_one, int64_t n, bool nt,             \
         bool bf16)                                                                                   \
{                                                                                                     \
    int64_t head = ps_head(y, sizeof(uint16_t), n, nt);                                               \
    if (head >= 16) {   /* an odd address cannot be aligned (never for real tensors): no streaming */ \
        head = 0;                                                                                     \
        nt = false;                                                                                   \
    }                                                                                                 \
    const __m512 zero = _mm512_setzero_ps(), wv = _mm512_set1_ps(w_one);                              \
    int64_t i = 0;                                                                                    \
    if (head > 0) {   /* up to 15 elements to reach 32-byte alignment */                              \
        const __mmask16 m = (__mmask16)((1u << head) - 1u);                                           \
        const __m512 xv = p512_load(x, m, bf16);                                                      \
        const __m512 w = w_vec ? _mm512_maskz_loadu_ps(m, w_vec) : wv;                                \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        _mm256_mask_storeu_epi16(y, m, NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16));               \
        i = head;                                                                                     \
    }                                                                                                 \
    for (; i + 16 <= n; i += 16) {                                                                    \
        const __m512 xv = p512_load(x + i, 0xffff, bf16);                                             \
        const __m512 w = w_vec ? _mm512_loadu_ps(w_vec + i) : wv;                                     \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        const __m256i h = NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16);                             \
        if (nt) _mm256_stream_si256((__m256i *)(y + i), h);                                           \
        else _mm256_storeu_si256((__m256i *)(y + i), h);                                              \
    }                                                                                                 \
    if (i < n) {                                                                                      \
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                        \
        const __m512 xv = p512_load(x + i, m, bf16);                                                  \
        const __m512 w = w_vec ? _mm512_maskz_loadu_ps(m, w_vec + i) : wv;                            \
        const __m512 s = _mm512_mul_ps(w, xv);                                                        \
        const __mmask16 pos = _mm512_cmp_ps_mask(xv, zero, _CMP_GT_OQ);                               \
        _mm256_mask_storeu_epi16(y + i, m, NARROW(_mm512_mask_blend_ps(pos, s, xv), bf16));           \
    }                                                                                                 \
}

DEFINE_P512_FWD(p512_fwd, P512_TARGET, p512_narrow)

/* bf16 forward with AVX512-BF16: vcvtneps2bf16 rounds to nearest even and quiets NaNs exactly
 * like nn_half_f32_to_bf16, but reads subnormal inputs as zero; a vector holding a subnormal
 * result is rounded with the integer code instead (rare: only products below 2^-126). */
#define PBF_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,f16c,avx2")))

PBF_TARGET static inline __attribute__((always_inline)) __m256i pbf_narrow(__m512 v, bool bf16)
{
    (void)bf16; /* always bf16: the parameter gives p512_narrow's signature (DEFINE_P512_FWD) */
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 subnormal = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000)) &
                                _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x007fffff));
    if (subnormal) return p512_narrow(v, true);
    const __m256bh h = _mm512_cvtneps_pbh(v);
    __m256i r;
    memcpy(&r, &h, sizeof r);
    return r;
}

DEFINE_P512_FWD(pbf_fwd, PBF_TARGET, pbf_narrow)

PBF_TARGET static void pbf_fwd_vw_bf16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    pbf_fwd(x, y, w, 0.0f, n, nt, true);
}
PBF_TARGET static void pbf_fwd_sw_bf16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    pbf_fwd(x, y, NULL, w, n, nt, true);
}

P512_TARGET static void p512_fwd_vw_f16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    p512_fwd(x, y, w, 0.0f, n, nt, false);
}
P512_TARGET static void p512_fwd_sw_f16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    p512_fwd(x, y, NULL, w, n, nt, false);
}
P512_TARGET static void p512_fwd_vw_bf16(const uint16_t *x, uint16_t *y, const float *w, int64_t n, bool nt)
{
    p512_fwd(x, y, w, 0.0f, n, nt, true);
}
P512_TARGET static void p512_fwd_sw_bf16(const uint16_t *x, uint16_t *y, float w, int64_t n, bool nt)
{
    p512_fwd(x, y, NULL, w, n, nt, true);
}

/* The same run structure as prelu_f32_span, on the fused loops of prelu_simd.h: self and out
 * have the same dtype, read and written in place (no staging). */
#define PRELU_SIMD_SPAN(KIND, T)                                                                  \
static void prelu_simd_span_##KIND(const prelu_plan *p, const float *weight, int64_t first,       \
                                   const T *x, T *y, int64_t n, bool nt)                          \
{                                                                                                 \
    int64_t done = 0;                                                                             \
    while (done < n) {                                                                            \
        const int64_t i = first + done;                                                           \
        int64_t run;                                                                              \
        if (p->channels == 1) {                                                                   \
            run = n - done;                                                                       \
            ps_fwd_sw_##KIND(x + done, y + done, weight[0], run, nt);                             \
        } else if (p->inner == 1) {                                                               \
            const int64_t c = i % p->channels;                                                    \
            run = p->channels - c < n - done ? p->channels - c : n - done;                        \
            ps_fwd_vw_##KIND(x + done, y + done, weight + c, run, nt);                            \
        } else {                                                                                  \
            const int64_t c = (i / p->inner) % p->channels;                                       \
            const int64_t left = p->inner - i % p->inner;                                         \
            run = left < n - done ? left : n - done;                                              \
            ps_fwd_sw_##KIND(x + done, y + done, weight[c], run, nt);                             \
        }                                                                                         \
        done += run;                                                                              \
    }                                                                                             \
}
PRELU_SIMD_SPAN(f32, float)
PRELU_SIMD_SPAN(f16, uint16_t)
PRELU_SIMD_SPAN(bf16, uint16_t)
#define ps_fwd_vw_p512f16 p512_fwd_vw_f16
#define ps_fwd_sw_p512f16 p512_fwd_sw_f16
#define ps_fwd_vw_p512bf16 p512_fwd_vw_bf16
#define ps_fwd_sw_p512bf16 p512_fwd_sw_bf16
PRELU_SIMD_SPAN(p512f16, uint16_t)
PRELU_SIMD_SPAN(p512bf16, uint16_t)
#define ps_fwd_vw_pbf16 pbf_fwd_vw_bf16
#define ps_fwd_sw_pbf16 pbf_fwd_sw_bf16
PRELU_SIMD_SPAN(pbf16, uint16_t)

static void prelu_simd_range(const prelu_ctx *ctx, int64_t begin, int64_t end)
{
    const prelu_plan *p = ctx->plan;
    const int64_t n = end - begin;
    if (p->self_dtype == ACL_FLOAT) {
        prelu_simd_span_f32(p, ctx->weight, begin, (const float *)ctx->self + begin,
                            (float *)ctx->out + begin, n, ctx->streaming);
    } else if (ctx->avx512) {
        if (p->self_dtype == ACL_FLOAT16) {
            prelu_simd_span_p512f16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                                    (uint16_t *)ctx->out + begin, n, ctx->streaming);
        } else if (nn_cpu_avx512bf16()) {
            prelu_simd_span_pbf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                                  (uint16_t *)ctx->out + begin, n, ctx->streaming);
        } else {
            prelu_simd_span_p512bf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                                     (uint16_t *)ctx->out + begin, n, ctx->streaming);
        }
    } else if (p->self_dtype == ACL_FLOAT16) {
        prelu_simd_span_f16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                            (uint16_t *)ctx->out + begin, n, ctx->streaming);
    } else {
        prelu_simd_span_bf16(p, ctx->weight, begin, (const uint16_t *)ctx->self + begin,
                             (uint16_t *)ctx->out + begin, n, ctx->streaming);
    }
    if (ctx->streaming) nn_streaming_fence();
}
#endif

static void prelu_range(void *vctx, int64_t begin, int64_t end)
{
    const prelu_ctx *ctx = (const prelu_ctx *)vctx;
    const prelu_plan *p = ctx->plan;
#if NN_PRELU_SIMD
    if (ctx->simd) {
        prelu_simd_range(ctx, begin, end);
        return;
    }
#endif
    const bool all_f32 = p->self_dtype == ACL_FLOAT && p->out_dtype == ACL_FLOAT &&
                         p->compute_dtype == ACL_FLOAT;
    if (all_f32) {
        prelu_f32_span(p, ctx->weight, begin, (const float *)ctx->self + begin,
                       (float *)ctx->out + begin, end - begin);
        return;
    }
    const size_t in_esz = nn_dtype_size(p->self_dtype), out_esz = nn_dtype_size(p->out_dtype);
    /* Rounding to the compute dtype matters only when it is narrower than fp32 and out differs. */
    const bool round_to_compute = p->compute_dtype != ACL_FLOAT && p->compute_dtype != p->out_dtype;
    float xs[PRELU_CHUNK], ys[PRELU_CHUNK];
    uint16_t narrow[PRELU_CHUNK];
    for (int64_t i = begin; i < end; i += PRELU_CHUNK) {
        const int64_t n = end - i < PRELU_CHUNK ? end - i : PRELU_CHUNK;
        nn_to_f32_n(p->self_dtype, (const unsigned char *)ctx->self + (size_t)i * in_esz, xs,
                     (size_t)n);
        prelu_f32_span(p, ctx->weight, i, xs, ys, n);
        if (round_to_compute) {
            nn_from_f32_n(p->compute_dtype, ys, narrow, (size_t)n);
            nn_to_f32_n(p->compute_dtype, narrow, ys, (size_t)n);
        }
        nn_from_f32_n(p->out_dtype, ys, (unsigned char *)ctx->out + (size_t)i * out_esz, (size_t)n);
    }
}

static aclnnStatus prelu_kernel(const nn_launch *l)
{
    const prelu_plan *p = (const prelu_plan *)l->plan;
    float single;
    float *weight = p->channels == 1 ? &single : malloc((size_t)p->channels * sizeof(float));
    if (weight == NULL) {
        return nn_error(ACLNN_ERR_INNER, OP ": could not allocate %lld fp32 weight values.",
                        (long long)p->channels);
    }
    nn_to_f32_n(p->weight_dtype, l->operands[1].data, weight, (size_t)p->channels);
    /* The fused loops need one dtype throughout (a cast to another out dtype keeps staging). */
    const bool simd = nn_prelu_simd_ok() && p->self_dtype == p->out_dtype &&
                      p->compute_dtype == p->self_dtype;
    const bool streaming = simd && nn_use_streaming_stores((uint64_t)p->numel *
                                                           nn_dtype_size(p->out_dtype));
    prelu_ctx ctx = {p, l->operands[0].data, weight, l->operands[2].data, simd, streaming, false};
#if NN_PRELU_SIMD
    ctx.avx512 = simd && p->self_dtype != ACL_FLOAT && nn_cpu_avx512();
#endif
    nn_launch_set_path(l, ctx.avx512 ? "prelu_avx512" : simd ? "prelu_avx2" : "prelu_portable");
    nn_parallel_for(p->numel, 32768, prelu_range, &ctx);
    if (weight != &single) free(weight);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* PyTorch-style promotion inside {FLOAT, FLOAT16, BFLOAT16}: FP16 + BF16 -> FLOAT. */
static aclDataType promote(aclDataType a, aclDataType b)
{
    if (a == b) return a;
    return ACL_FLOAT;
}

static aclnnStatus check_max_dim(const char *name, const aclTensor *t)
{
    if (t->ndim > PRELU_MAX_DIMS) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected %s to have at most %d dimensions, "
                        "but got %llu.", name, PRELU_MAX_DIMS, (unsigned long long)t->ndim);
    }
    return ACLNN_SUCCESS;
}

static bool same_shape(const aclTensor *a, const aclTensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (uint64_t i = 0; i < a->ndim; i++) {
        if (a->dims[i] != b->dims[i]) return false;
    }
    return true;
}

static aclnnStatus check_shapes(const aclTensor *self, const aclTensor *weight, const aclTensor *out)
{
    aclnnStatus st;
    if ((st = check_max_dim("self", self)) != ACLNN_SUCCESS) return st;
    if ((st = check_max_dim("weight", weight)) != ACLNN_SUCCESS) return st;
    if ((st = check_max_dim("out", out)) != ACLNN_SUCCESS) return st;
    if (!same_shape(self, out)) {
        char a[256], b[256];
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": Expected tensor for out to have same size as "
                        "tensor for self, but %s does not equal %s.",
                        nn_shape_str(a, sizeof a, out->ndim, out->dims),
                        nn_shape_str(b, sizeof b, self->ndim, self->dims));
    }
    const int64_t channels = self->ndim <= 1 ? 1 : self->dims[1];
    const int64_t weight_numel = nn_tensor_numel(weight);
    if (weight_numel != channels && weight_numel != 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": expected weight tensor size equal input "
                        "channels, but found %lld does not equal %lld.", (long long)weight_numel,
                        (long long)channels);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnPreluGetWorkspaceSize(const aclTensor *self, const aclTensor *weight, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const nn_arg args[] = {NN_TENSOR_ARG("self", self), NN_TENSOR_ARG("weight", weight), NN_TENSOR_ARG("out", out)};
    aclnnStatus st = workspaceSize == NULL ? nn_null_out_param(OP, "workspaceSize") : ACLNN_SUCCESS;
    if (st == ACLNN_SUCCESS) st = nn_check_args(OP, args, NN_ARG_COUNT(args));
    const nn_product *pr = st == ACLNN_SUCCESS ? nn_product_row(NN_PR_PRELU) : NULL;
    for (size_t i = 0; st == ACLNN_SUCCESS && i < NN_ARG_COUNT(args); i++)
        st = nn_check_product_dtype(OP, pr, args[i].name, (const aclTensor *)args[i].handle);
    /* Promotion within the three float dtypes is always defined and castable to any of them,
     * so CANN's two promotion checks cannot fail here. */
    if (st == ACLNN_SUCCESS) st = check_shapes(self, weight, out);
    /* CANN never checks executor and would crash writing it (docs/compatibility.md). */
    if (st == ACLNN_SUCCESS && executor == NULL) st = nn_null_out_param(OP, "executor");
    if (st != ACLNN_SUCCESS) return st;

    prelu_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.numel = nn_tensor_numel(self);
    plan.channels = nn_tensor_numel(weight) == 1 ? 1 : self->dims[1];
    plan.inner = plan.numel;
    if (plan.channels != 1) {
        plan.inner = 1;
        for (uint64_t i = 2; i < self->ndim; i++) plan.inner *= self->dims[i];
    }
    plan.self_dtype = self->dtype;
    plan.weight_dtype = weight->dtype;
    plan.out_dtype = out->dtype;
    plan.compute_dtype = promote(self->dtype, weight->dtype);

    const bool empty = nn_tensor_is_empty(self) || nn_tensor_is_empty(weight);
    if (empty) {
        return nn_finish_phase1(OP, &(nn_phase1_end){.plan = &plan, .plan_size = sizeof plan}, workspaceSize,
                                executor);
    }
    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = prelu_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {self, weight}, .outputs = {out}},
                            workspaceSize, executor);
}

aclnnStatus aclnnPrelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
