/*
 * model_ri_prelu.h - the PReLU the model runtime instance tests capture and check: x of shape
 * [1, C, L] with per-channel weights (A or B), and its host reference.  The inputs are halves of
 * small integers and the weights powers of two (or -1), so every product is exact in fp32 and
 * outputs compare exactly.
 */
#ifndef TESTS_C_MODEL_RI_PRELU_H
#define TESTS_C_MODEL_RI_PRELU_H

#include "test_util.h"

#include "aclnnop/aclnn_prelu.h"

#define C 3
#define L 4
#define NUMEL (C * L)

static const float WEIGHTS_A[C] = {0.25f, 0.5f, 2.0f};
static const float WEIGHTS_B[C] = {-1.0f, 4.0f, 0.125f};

/* A PReLU input of its own for each seed, with negatives, zeros and positives. */
static inline void prelu_fill_input(float *x, int seed)
{
    for (int i = 0; i < NUMEL; i++)
        x[i] = 0.5f * (float)((i * 5 + seed * 3) % 13 - 6);
}

/* Checks out against PReLU(x, weights) computed here. */
static inline void prelu_check(const char *what, const float *out, const float *x, const float *weights)
{
    for (int i = 0; i < NUMEL; i++) {
        float expected = x[i] > 0.0f ? x[i] : weights[i / L] * x[i];
        CHECK(out[i] == expected, "%s element %d: %g, expected %g", what, i, (double)out[i], (double)expected);
    }
}

/* A PReLU of x with the weights w into out, planned now (contiguous fp32: no workspace). */
static inline aclOpExecutor *prelu_plan(const tu_tensor *x, const tu_tensor *w, const tu_tensor *out)
{
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(x->t, w->t, out->t, &workspace, &executor));
    CHECK(workspace == 0, "contiguous fp32 PReLU needs no workspace, got %llu", (unsigned long long)workspace);
    return executor;
}

#endif /* TESTS_C_MODEL_RI_PRELU_H */
