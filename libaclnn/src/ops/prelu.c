/*
 * prelu.c - aclnnPrelu: out = self > 0 ? self : weight(c) * self (Ascend910: the card's
 * max(self, 0) + min(self, 0) * weight(c), which differs in signed zeros and 0 * inf).
 *
 * weight holds 1 value or one value per channel (channels = self.shape[1], 1 for a 0-D/1-D
 * self), whatever its own rank.  As in CANN, self and weight are promoted to a common dtype
 * (FP16 + BF16 -> FLOAT), the select is computed in that dtype and the result is cast to out's
 * dtype.  fp16/bf16 products are computed in fp32 and rounded once, which is exactly a native
 * half-precision multiply (the product of two 11-bit significands is exact in fp32).
 * Elementwise, so any split over threads gives the same bytes.  The kernels are in
 * kernels/prelu/; phase 2 picks one from the CPU table and names it in the launch trace.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_prelu.h"
#include "exec/nn_exec.h"
#include "kernels/prelu/prelu.h"
#include "ops/products.h"
#include "ops/im2col_prelu_common.h"

#define OP "aclnnPrelu"
#define PRELU_MAX_DIMS 8
typedef nn_prelu_plan prelu_plan;

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
    /* The path (kernels/prelu/): the fused loops need one dtype throughout (a cast to another
     * out dtype is staged through fp32) and the select formula; AVX-512 takes the fused
     * fp16/bf16 ones.  Ascend910's max/min formula runs the staged loops. */
    const nn_cpu_features *cpu = nn_cpu_features_get();
    const bool fused = cpu->avx2 && !p->max_min && p->self_dtype == p->out_dtype &&
                       p->compute_dtype == p->self_dtype;
    const bool avx512 = fused && cpu->avx512 && p->self_dtype != ACL_FLOAT;
    const bool streaming = fused && nn_use_streaming_stores((uint64_t)p->numel * nn_dtype_size(p->out_dtype));
    nn_prelu_ctx ctx = {p, l->operands[0].data, weight, l->operands[2].data, streaming, cpu->avx512bf16};
    nn_range_fn range = avx512 ? nn_prelu_fwd_fused_avx512
                        : fused ? nn_prelu_fwd_fused_avx2
                        : cpu->avx2 ? nn_prelu_fwd_staged_avx2 : nn_prelu_fwd_portable;
    nn_launch_set_path(l, avx512 ? "prelu_avx512" : fused ? "prelu_avx2"
                          : cpu->avx2 ? "prelu_staged_avx2" : "prelu_portable");
    nn_parallel_for(p->numel, 32768, range, &ctx);
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
    /* The TBE PRelu selects x > 0 ? x : x*w when `after_v200()` (tik.vcopy: 310P's v200 and
     * A2/A3's v220 cores), as the 950's AscendC kernel does; the Ascend910's v100 core takes its
     * max(x, 0) + min(x, 0) * w (docs/precision.md, "Prelu"). */
    plan.max_min = nn_soc_current() == NN_SOC_ASCEND910;

    const bool empty = nn_tensor_is_empty(self) || nn_tensor_is_empty(weight);
    if (empty) {
        return nn_finish_phase1(OP, &(nn_phase1_end){.plan = &plan, .plan_size = sizeof plan}, workspaceSize,
                                executor);
    }
    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = prelu_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {self, weight}, .outputs = {out},
                                             .input_names = {"self", "weight"}, .output_names = {"out"},
                                             .computed_outputs = true},
                            workspaceSize, executor);
}

aclnnStatus aclnnPrelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
