/*
 * Kernel driver for MaxPool2dWithMaskBackward's 3x3 stride-2 path (nn_mp_bw_slots_3x3s2_plane,
 * kernels/max_pool/max_pool_bw_avx512.c): one geometry, a few planes kept in cache, the plane
 * function called over and over with no executor, thread pool or call overhead around it.  What
 * it is for: measuring the kernel's compute alone (docs/kernels_max_pool.md), and timing
 * variants of it - edit the kernel's source, `make bench-driver`, compare.
 *
 * It calls the kernel through its header (kernels/max_pool/max_pool_bw.h) and links with the
 * library's objects.  Before timing, it checks its planes against a plain scatter in
 * fp32 rounded once (what the operator promises), so a variant that gives wrong numbers says so.
 *
 *   build/bench/max_pool_bw_slots [planes [bf16|f32|f16 [reps]]]     (ACLNN_DRIVER_STREAM=1:
 *   streaming stores, as for outputs of 16 MiB and more)
 */
#include "kernels/max_pool/max_pool_bw.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { H = 112, W = 112, HO = 56, WO = 56 };

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void store_value(unsigned char *base, int64_t at, float v, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) ((float *)base)[at] = v;
    else if (dtype == ACL_BF16) ((uint16_t *)base)[at] = nn_f32_to_bf16(v);
    else ((uint16_t *)base)[at] = nn_f32_to_f16(v);
}

static float load_value(const unsigned char *base, int64_t at, aclDataType dtype)
{
    if (dtype == ACL_FLOAT) return ((const float *)base)[at];
    if (dtype == ACL_BF16) return nn_bf16_to_f32(((const uint16_t *)base)[at]);
    return nn_f16_to_f32(((const uint16_t *)base)[at]);
}

/* Random gradients and, for each output, a random cell of its window inside the plane. */
static void fill_inputs(unsigned char *grad, int32_t *index, int64_t planes, aclDataType dtype)
{
    srand(1);
    for (int64_t o = 0; o < planes * HO * WO; ++o) {
        const int64_t oh = o / WO % HO, ow = o % WO;
        store_value(grad, o, (float)(rand() % 2001 - 1000) / 64.0f, dtype);
        int64_t ih, iw;
        do {
            ih = 2 * oh - 1 + rand() % 3, iw = 2 * ow - 1 + rand() % 3;
        } while (ih < 0 || iw < 0 || ih >= H || iw >= W);
        index[o] = (int32_t)(ih * W + iw);
    }
}

/* Every cell of gradInput against the scatter: sums in fp32 in output order, rounded once. */
static bool matches_scatter(const unsigned char *gi, const unsigned char *grad, const int32_t *index,
                            int64_t planes, aclDataType dtype, size_t elem)
{
    float *sum = calloc((size_t)(H * W), sizeof(float));
    unsigned char *want = malloc((size_t)(H * W) * elem);
    bool same = sum && want;
    for (int64_t p = 0; same && p < planes; ++p) {
        memset(sum, 0, (size_t)(H * W) * sizeof(float));
        for (int64_t o = 0; o < HO * WO; ++o) sum[index[p * HO * WO + o]] += load_value(grad, p * HO * WO + o, dtype);
        for (int64_t c = 0; c < H * W; ++c) store_value(want, c, sum[c], dtype);
        same = memcmp(want, gi + p * H * W * elem, (size_t)(H * W) * elem) == 0;
    }
    free(sum);
    free(want);
    return same;
}

int main(int argc, char **argv)
{
    const int64_t planes = argc > 1 ? atoi(argv[1]) : 4;
    const char *name = argc > 2 ? argv[2] : "bf16";
    const int reps = argc > 3 ? atoi(argv[3]) : 15;
    const aclDataType dtype = strcmp(name, "f32") == 0 ? ACL_FLOAT : strcmp(name, "f16") == 0 ? ACL_FLOAT16 : ACL_BF16;
    if (planes < 1 || reps < 1) return 2;
    bw_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.g = (mp_geometry){1, planes, H, W, HO, WO, 3, 3, 2, 2, 1, 1, false, false};
    plan.dtype = dtype;
    const char *stream = getenv("ACLNN_DRIVER_STREAM");
    plan.stream_stores = stream && stream[0] == '1';
    plan.slots_3x3s2 = nn_mp_bw_slots_3x3s2_fits(&plan) && nn_cpu_avx512();
    nn_mp_bw_layout_scratch(&plan);
    if (!plan.slots_3x3s2) {
        printf("max_pool_bw_slots: no AVX-512 here, the slots path is not used\n");
        return 0;
    }
    const size_t elem = nn_dtype_size(dtype);
    float *scratch = aligned_alloc(4096, ((size_t)plan.scratch_floats * sizeof(float) + 4095) / 4096 * 4096);
    unsigned char *grad = aligned_alloc(64, ((size_t)(planes * HO * WO) * elem + 63) / 64 * 64);
    unsigned char *gi = aligned_alloc(64, ((size_t)(planes * H * W) * elem + 63) / 64 * 64);
    int32_t *index = aligned_alloc(64, ((size_t)(planes * HO * WO) * 4 + 63) / 64 * 64);
    if (!scratch || !grad || !gi || !index) return 2;
    fill_inputs(grad, index, planes, dtype);

    double best = 1e30;
    const int64_t calls = 2000 / planes + 1;
    for (int rep = 0; rep < reps; ++rep) {
        const double start = seconds();
        for (int64_t call = 0; call < calls; ++call)
            for (int64_t p = 0; p < planes; ++p)
                if (!nn_mp_bw_slots_3x3s2_plane(&plan, gi + p * H * W * elem, grad + p * HO * WO * elem,
                                       (const unsigned char *)(index + p * HO * WO), scratch + plan.band_offset)) {
                    printf("max_pool_bw_slots: the plane reported an index outside its window\n");
                    return 1;
                }
        const double per_output = (seconds() - start) / (double)(calls * planes * HO * WO);
        if (per_output < best) best = per_output;
    }
    nn_streaming_fence();
    if (!matches_scatter(gi, grad, index, planes, dtype, elem)) {
        printf("max_pool_bw_slots: gradInput differs from the scatter\n");
        return 1;
    }
    printf("max_pool_bw_slots %s, %lld planes %dx%d k3s2p1%s: %.3f ns per output (best of %d)\n", name,
           (long long)planes, H, W, plan.stream_stores ? ", streaming stores" : "", best * 1e9, reps);
    free(scratch), free(grad), free(gi), free(index);
    return 0;
}
