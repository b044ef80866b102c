/*
 * upsample_nearest_exact1d_backward.c - aclnnUpsampleNearestExact1dBackward: the gradient of
 * aclnnUpsampleNearestExact1d with respect to its input.
 *
 *   out[n, c, i] = sum of gradOutput[n, c, d] over the d that input i owns
 *
 * with the index map of the card's kernel on the selected product (ops/products.c, upsample_bw):
 *   A2/A3, Ascend950  CANN's gather form: i owns [first(i), first(i+1)) with
 *                     first(i) = min(ceil(fl(fl(i*s) - 0.5)), Lout), s = scales > 0 ?
 *                     fl32(scales) : fl32(Lout)/fl32(Lin) (outputs per input); gradients from
 *                     first(Lin) on are dropped (kernels/upsample/upsample.h)
 *   Ascend910/310P    (open: no kernel) the forward's map, PyTorch's scatter form (an Lout larger
 *                     than Lin*scales clamps the extra gradients into the last cell)
 * On A2/A3 the card sums with a matrix product per slide of gradInput cells, so an inf or NaN
 * gradient turns the slide's other cells into NaN: each row does the same once summed
 * (nn_upsample_bw_cube_row).  On Ascend950 Lin == Lout with a scale of 1 is a bit copy.
 *
 * Either map is monotone, so input i owns the contiguous outputs [lo(i), lo(i+1)).  The map is built once per launch and shared by all N*C rows; each row
 * is then computed with loops that suit the map: stretches of equal count k become
 * "gi[t] = go[k t] + ... + go[k t + k-1]" loops the compiler vectorises, irregular maps walk
 * lo(), and pure downsampling (every count <= 1) is a zero fill plus one pick per gradient.
 * Every gi element is 0 + its gradients in increasing d order: the same order as PyTorch, and
 * independent of the thread split.  fp16/bf16 accumulate in fp32 and round once.  The kernels
 * are in kernels/upsample/ (the path comes from the CPU table and is named in the launch
 * trace).  With AVX-512, fp32 runs of count 1-3 are summed 16 inputs per vector (lane permutations of the
 * gradients, the same adds in the same order), on up to 8 rows from separate stretches at once
 * (more memory streams in flight per core).  Threads claim shrinking chunks of rows from a
 * shared counter (a late pool worker still takes its share, and the threads finish close
 * together), and gradInput is streamed out when the whole launch's traffic passes base's
 * streaming threshold, as whole aligned lines even when rows are not multiples of 16 floats.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_upsample_nearest_exact1d_backward.h"
#include "exec/nn_exec.h"
#include "ops/products.h"
#include "ops/pad_upsample_common.h"

#define OP "aclnnUpsampleNearestExact1dBackward"


/* Smallest accepted Lin/Lout (or 1/scales): gradOutput may be at most 50x longer. */
#define MIN_SUPPORT_SCALE 0.02

#define PLAN_MAX_RUNS NN_UPSAMPLE_BW_PLAN_MAX_RUNS
typedef nn_upsample_bw_plan upsample_bwd_plan;
typedef nn_upsample_bw_ctx upsample_bwd_ctx;
#define MODE_RUNS NN_UPSAMPLE_BW_RUNS
#define MODE_PER_INPUT NN_UPSAMPLE_BW_PER_INPUT
#define MODE_PICK NN_UPSAMPLE_BW_PICK

/* The plan's index map (upsample.h); false when out of memory. */
static bool build_map(const upsample_bwd_plan *p, nn_ne_map *map)
{
    return p->gather ? nn_ne_map_build_gather(map, p->in_len, p->out_len, p->gather_scale)
                     : nn_ne_map_build(map, p->in_len, p->out_len, p->scales, false);
}

static aclnnStatus upsample_bwd_kernel(const nn_launch *launch)
{
    const upsample_bwd_plan *p = (const upsample_bwd_plan *)launch->plan;
    if (p->copy) { /* Ascend950's DataCopy template (upsample_nearest_exact2d_grad_tiling_arch35.cpp) */
        nn_launch_set_path(launch, "upsample_bw_copy");
        memcpy(launch->operands[1].data, launch->operands[0].data,
               (size_t)(p->rows * p->in_len) * nn_dtype_size(p->dtype));
        return ACLNN_SUCCESS;
    }
    nn_ne_map map;
    const bool planned = p->num_runs > 0;
    if (planned) { /* a view of the plan's run list (MODE_RUNS only reads runs) */
        memset(&map, 0, sizeof map);
        map.in_len = p->in_len;
        map.out_len = p->out_len;
        map.max_count = p->max_count;
        map.num_runs = p->num_runs;
        map.runs = (nn_ne_run *)p->runs;
    } else if (!build_map(p, &map)) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the index map (L %lld -> %lld).",
                        (long long)p->in_len, (long long)p->out_len);
    }
    upsample_bwd_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.plan = p;
    ctx.map = &map;
    ctx.mode = planned || nn_ne_map_runs_are_long(&map)
                   ? MODE_RUNS
                   : (map.max_count <= 1 ? MODE_PICK : MODE_PER_INPUT);
    ctx.grad_out = launch->operands[0].data;
    ctx.grad_in = launch->operands[1].data;
    int64_t *empty_slides = NULL;
    if (p->cube_slide > 0 && (empty_slides = nn_upsample_bw_empty_slides(p, &ctx.cube_empty_count)) == NULL) {
        if (!planned) nn_ne_map_free(&map);
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the slide list (L %lld).", (long long)p->in_len);
    }
    ctx.cube_empty = empty_slides;
    /* Streamed when the whole launch (gradOutput read + gradInput written) passes base's
     * threshold, not only gradInput: a 3x upsampling's 16 MB gradInput sits just under it,
     * yet the 49 MB of gradOutput read after it evicts it from the caches anyway, so
     * ordinary stores would only add a read of every gradInput line (a fifth more traffic). */
    const uint64_t esz = nn_dtype_size(p->dtype);
    ctx.stream = nn_use_streaming_stores((uint64_t)(p->rows * (p->in_len + p->out_len)) * esz);
    /* The path (kernels/upsample/): the plain rows built for AVX2 when the CPU table has it,
     * fp32 long-run maps on AVX-512 where present. */
    const nn_cpu_features *cpu = nn_cpu_features_get();
    ctx.avx512 = ctx.mode == MODE_RUNS && p->dtype == ACL_FLOAT && cpu->avx512;
    /* fp32 maps of short runs kept in cache: the windows (up to 16 inputs a vector) */
    nn_upsample_bw_window window = {0, 0, NULL};
    if (ctx.mode != MODE_RUNS && p->dtype == ACL_FLOAT && cpu->avx512 && !ctx.stream &&
        nn_upsample_bw_window_build(&window, &map)) {
        ctx.window = &window;
    }
    const nn_range_fn rows_fn = cpu->avx2 ? nn_upsample_bw_rows_avx2 : nn_upsample_bw_rows_portable;
    static const char *const paths[3][2] = {[MODE_RUNS] = {"upsample_bw_runs_portable", "upsample_bw_runs_avx2"},
                                             [MODE_PER_INPUT] = {"upsample_bw_per_input_portable",
                                                                 "upsample_bw_per_input_avx2"},
                                             [MODE_PICK] = {"upsample_bw_pick_portable", "upsample_bw_pick_avx2"}};
    nn_launch_set_path(launch, ctx.window != NULL ? "upsample_bw_window_avx512"
                               : ctx.avx512        ? "upsample_bw_avx512_runs"
                                                   : paths[ctx.mode][cpu->avx2]);
    const double row_bytes = (double)(p->in_len + p->out_len) * (double)nn_dtype_size(p->dtype);
    const int64_t grain = nn_pu_grain(p->rows, row_bytes);
    /* chunks of whole 16-row units where the grain allows (each then starts on a 64-byte line
     * of an aligned gradInput) */
    nn_guided_claims_init(&ctx.claims, p->rows, grain < 16 ? grain : 16);
    nn_parallel_for(p->rows, grain, rows_fn, &ctx);
    if (__atomic_load_n(&ctx.claims.next, __ATOMIC_RELAXED) < p->rows) {
        /* the pool ran every part on its worker, which leaves the last unit to this thread */
        rows_fn(&ctx, 0, p->rows);
    }
    if (!planned) nn_ne_map_free(&map);
    nn_upsample_bw_window_free(&window);
    free(empty_slides);
    if (ctx.failed) {
        return nn_error(ACLNN_ERR_INNER_NULLPTR, OP ": out of memory for the fp32 row buffers.");
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Phase 1                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static aclnnStatus check_dtypes(const aclTensor *grad_out, const aclTensor *out)
{
    aclnnStatus st = nn_check_product_dtype(OP, nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D_BACKWARD), "gradOutput",
                                            grad_out);
    if (st == ACLNN_SUCCESS) st = nn_check_same_dtype(OP, "out", out, "gradOutput", grad_out);
    return st;
}

static aclnnStatus check_shapes(const aclTensor *grad_out, const aclIntArray *outputSize,
                                const aclIntArray *inputSize, const aclTensor *out)
{
    char a[128];
    if (grad_out->format != out->format) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Format of input and output should be equal, gradOutput [%s], out [%s].",
                        nn_format_name(grad_out->format), nn_format_name(out->format));
    }
    if (grad_out->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": gradOutput must be 3-D, got %llu-D %s.",
                        (unsigned long long)grad_out->ndim,
                        nn_shape_str(a, sizeof a, grad_out->ndim, grad_out->dims));
    }
    if (out->ndim != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": out must be 3-D, got %llu-D %s.",
                        (unsigned long long)out->ndim, nn_shape_str(a, sizeof a, out->ndim, out->dims));
    }
    if (inputSize->size != 3) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected inputSize equals to 3, but got size %llu.",
                        (unsigned long long)inputSize->size);
    }
    if (outputSize->size != 1) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": It is expected outputSize equals to 1, but got size %llu.",
                        (unsigned long long)outputSize->size);
    }
    if (grad_out->dims[0] != out->dims[0] || grad_out->dims[1] != out->dims[1]) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": N and C of out must equal those of gradOutput: gradOutput (N: %lld, "
                        "C: %lld), out (N: %lld, C: %lld).", (long long)grad_out->dims[0],
                        (long long)grad_out->dims[1], (long long)out->dims[0], (long long)out->dims[1]);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_sizes(const aclTensor *grad_out, const aclIntArray *outputSize,
                               const aclIntArray *inputSize, double scales, const aclTensor *out)
{
    if (scales < 0) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": scales cannot be negative, got %g.", scales);
    }
    const int64_t N = grad_out->dims[0], C = grad_out->dims[1], Lout = grad_out->dims[2];
    const int64_t Lin = inputSize->values[2];
    const double ratio = scales > 0 ? 1.0 / scales : (Lout != 0 ? (double)Lin / (double)Lout : 0.0);
    if (!(ratio >= MIN_SUPPORT_SCALE)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": scales is too large: input/output ratio %g (inputSize L %lld, gradOutput "
                        "L %lld, scales %g) must be >= 0.02, i.e. at most 50x upsampling.", ratio,
                        (long long)Lin, (long long)Lout, scales);
    }
    if (!(N > 0 && C > 0 && Lin > 0 && Lout > 0)) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": Input and output sizes should greater than 0, but got gradOutput (N: "
                        "%lld, C: %lld, L: %lld), inputSize L %lld.", (long long)N, (long long)C,
                        (long long)Lout, (long long)Lin);
    }
    /* Stricter than CANN (docs/compatibility.md): everything the kernel relies on must agree. */
    if (grad_out->format != ACL_FORMAT_ND && grad_out->format != ACL_FORMAT_NCL) {
        return nn_error(ACLNN_ERR_PARAM_INVALID, OP ": gradOutput format must be ND or NCL, got %s.",
                        nn_format_name(grad_out->format));
    }
    if (outputSize->values[0] != Lout) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": outputSize [%lld] must equal the length of gradOutput (%lld).",
                        (long long)outputSize->values[0], (long long)Lout);
    }
    if (inputSize->values[0] != N || inputSize->values[1] != C) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": inputSize [%lld, %lld, %lld] must have the N and C of gradOutput "
                        "(%lld, %lld).", (long long)inputSize->values[0],
                        (long long)inputSize->values[1], (long long)Lin, (long long)N, (long long)C);
    }
    if (out->dims[2] != Lin) {
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        OP ": out length %lld must equal inputSize[2] (%lld).",
                        (long long)out->dims[2], (long long)Lin);
    }
    return ACLNN_SUCCESS;
}

/* The card's scale (outputs per input) as its op_api and tilings derive it: fl32(scales), or
 * fl32(Lout) / fl32(Lin) when that is not positive (aclnn_upsample_nearest_exact1d_backward.cpp,
 * compute_scale_value in upsample_nearest_exact2d_grad_tiling.h, ComputeScales in
 * upsample_nearest_exact2d_grad_tiling_arch35.cpp). */
static float card_scale(int64_t Lin, int64_t Lout, double scales)
{
    const float given = scales > 0 ? (float)scales : 0.0f;
    return given > 0 ? given : (float)Lout / (float)Lin;
}

/* The A2/A3 tiling's slide of gradInput cells per matrix product, from the larger of the two
 * scales (H's is 1): getSlideSize in upsample_nearest_exact2d_grad_tiling.cpp. */
static int64_t cube_slide(float scale_w)
{
    const float most = scale_w > 1.0f ? scale_w : 1.0f;
    return most <= 5.0f ? 64 : most <= 8.0f ? 48 : most <= 20.0f ? 32 : 16;
}

/* What the product's kernel computes (ops/products.h), frozen in the plan. */
static void plan_card(upsample_bwd_plan *plan, nn_upsample_bw_kernel kernel)
{
    plan->gather = kernel != NN_UPSAMPLE_BW_SCATTER;
    plan->gather_scale = card_scale(plan->in_len, plan->out_len, plan->scales);
    const float off_one = fabsf(plan->gather_scale - 1.0f);
    /* Ascend950 copies when the lengths and scales match (EPSILON 1e-8, in its tiling) */
    plan->copy = kernel == NN_UPSAMPLE_BW_SIMT && plan->in_len == plan->out_len && off_one <= 1e-8f;
    /* A2/A3 skip the W product when the scale is within 1e-6 of 1 (FloatEqual): gradInput is
     * then gradOutput times 1, which spreads nothing */
    plan->cube_slide = kernel == NN_UPSAMPLE_BW_CUBE && !(off_one < 1e-6f) ? cube_slide(plan->gather_scale) : 0;
}

/* Keeps a short run list in the plan (see upsample_bwd_plan); if the map cannot be built here
 * (out of memory) the launches build it and report that themselves. */
static void plan_runs(upsample_bwd_plan *plan)
{
    nn_ne_map map;
    plan->num_runs = 0;
    if (!build_map(plan, &map)) {
        return;
    }
    if (nn_ne_map_runs_are_long(&map) && map.num_runs <= PLAN_MAX_RUNS) {
        plan->num_runs = map.num_runs;
        plan->max_count = map.max_count;
        memcpy(plan->runs, map.runs, (size_t)map.num_runs * sizeof map.runs[0]);
    }
    nn_ne_map_free(&map);
}

aclnnStatus aclnnUpsampleNearestExact1dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                const aclIntArray *outputSize,
                                                                const aclIntArray *inputSize,
                                                                double scales, aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor)
{
    /* CANN does not check outputSize for NULL (its device code would crash); we do, last. */
    const nn_arg args[] = {NN_TENSOR_ARG("gradOutput", gradOutput), NN_ARRAY_ARG("inputSize", inputSize),
                           NN_TENSOR_ARG("out", out), NN_ARRAY_ARG("outputSize", outputSize)};
    aclnnStatus status = nn_check_handles(OP, workspaceSize, executor, args, NN_ARG_COUNT(args));
    if (status == ACLNN_SUCCESS) status = check_dtypes(gradOutput, out);
    if (status == ACLNN_SUCCESS) status = check_shapes(gradOutput, outputSize, inputSize, out);
    if (status == ACLNN_SUCCESS) status = check_sizes(gradOutput, outputSize, inputSize, scales, out);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    /* All sizes are > 0 and out is [N, C, Lin] here: CANN's "empty -> success" branch cannot be
     * reached. */
    upsample_bwd_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.rows = gradOutput->dims[0] * gradOutput->dims[1];
    plan.in_len = inputSize->values[2];
    plan.out_len = gradOutput->dims[2];
    plan.scales = scales;
    plan.dtype = gradOutput->dtype;
    plan_card(&plan, nn_product_row(NN_PR_UPSAMPLE_NEAREST_EXACT1D_BACKWARD)->upsample_bw_kernel);
    plan_runs(&plan);

    return nn_finish_phase1(OP,
                            &(nn_phase1_end){.kernel = upsample_bwd_kernel, .plan = &plan, .plan_size = sizeof plan,
                                             .inputs = {gradOutput}, .outputs = {out},
                                             .input_names = {"gradOutput"}, .output_names = {"out"}, .computed_outputs = true},
                            workspaceSize, executor);
}

aclnnStatus aclnnUpsampleNearestExact1dBackward(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream)
{
    return nn_launch_executor(OP, workspace, workspaceSize, executor, stream);
}
