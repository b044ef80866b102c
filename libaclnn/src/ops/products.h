/*
 * products.h - what differs per product (SoC) for each operator, in one table per operator
 * (products.c, docs/compatibility.md "Products").  An operator asks for its row once per phase 1:
 *
 *     const nn_product *pr = nn_product_row(NN_PR_IM2COL);
 *     st = nn_check_product_dtype(OP, pr, "self", self);
 *
 * and freezes what the row says about the computation in its plan.
 */
#ifndef NN_OPS_PRODUCTS_H
#define NN_OPS_PRODUCTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ops/checks.h"

typedef enum nn_product_op {
    NN_PR_REPLICATION_PAD2D,
    NN_PR_REPLICATION_PAD2D_BACKWARD,
    NN_PR_UPSAMPLE_NEAREST_EXACT1D,
    NN_PR_UPSAMPLE_NEAREST_EXACT1D_BACKWARD,
    NN_PR_MAX_POOL2D_WITH_MASK,
    NN_PR_MAX_POOL2D_WITH_MASK_BACKWARD,
    NN_PR_MAX_POOL2D_WITH_INDICES,
    NN_PR_MAX_POOL2D_WITH_INDICES_BACKWARD,
    NN_PR_IM2COL,
    NN_PR_IM2COL_BACKWARD,
    NN_PR_PRELU,
    NN_PR_PRELU_BACKWARD,
    NN_PR_OP_COUNT
} nn_product_op;

/* How aclnnMaxPool2dWithMask lays out its mask (docs/compatibility.md, "MaxPool2dWithMask on
 * Ascend910 and Ascend310P").  A 1x1 kernel writes the 0xFFFF pattern under either layout. */
typedef enum nn_mask_layout {
    NN_MASK_INT32_STREAM = 0, /* A2/A3: int32 argmax stream at the head of the container */
    NN_MASK_V1_BITS,          /* Ascend910/310P: MaxPoolWithArgmaxV1's uint16 bit mask */
} nn_mask_layout;

/* The order in which aclnnIm2colBackward adds an image element's contributions on the card
 * (docs/precision.md, "Im2colBackward"). */
typedef enum nn_col2im_order {
    NN_COL2IM_KERNEL_ORDER = 0,      /* (ki, kj) ascending: the A2/A3 TBE Col2im's per-kernel-
                                      * position read-add-write; 910/310P (open: no kernel source) */
    NN_COL2IM_WINDOW_ORDER_UNPADDED, /* A2/A3: window order when padding is (0, 0) (the TBE
                                      * Col2im's atomic-add path), else kernel order */
    NN_COL2IM_WINDOW_ORDER,          /* Ascend950's SIMT Col2im: window order (oh, then ow,
                                      * ascending = (ki, kj) descending) for any padding */
} nn_col2im_order;

/* What aclnnUpsampleNearestExact1dBackward computes on the card (docs/precision.md,
 * "UpsampleNearestExact1dBackward"). */
typedef enum nn_upsample_bw_kernel {
    NN_UPSAMPLE_BW_SCATTER = 0, /* Ascend910/310P (open: no kernel binary): PyTorch's scatter form */
    NN_UPSAMPLE_BW_CUBE,        /* A2/A3: the gather map, summed by a matrix product on the Cube per
                                 * slide of gradInput cells (0 * inf spreads NaN over the slide) */
    NN_UPSAMPLE_BW_SIMT,        /* Ascend950: the gather map, summed per cell; a bit copy when
                                 * Lin == Lout and the scale is 1 */
} nn_upsample_bw_kernel;

typedef struct nn_dtype_list {
    const aclDataType *list;
    size_t count;
} nn_dtype_list;

/* One operator on one product. */
typedef struct nn_product {
    /* Not NULL: the product rejects the API with ACLNN_ERR_PARAM_INVALID and this text (after
     * the checks CANN runs before, which the operator keeps). */
    const char *rejected;
    /* The main tensors' dtypes (self, out, gradOutput...).  An empty list rejects every dtype:
     * with "support for <SoC> is not implemented" when empty_not_implemented, else with the
     * dtype-list message and an empty list, as CANN does. */
    nn_dtype_list dtypes;
    bool empty_not_implemented;
    /* The indices' dtypes (the max-pool WithIndices pair), in CANN's order. */
    nn_dtype_list index_dtypes;
    /* The computation (frozen in the plan at phase 1): */
    bool fp32_as_fp16;       /* max-pool mask path: FLOAT is computed as FLOAT16 (Ascend910) */
    bool float_reciprocal;   /* upsample: the scale's reciprocal in float (Ascend950) */
    nn_mask_layout mask_layout; /* max-pool mask pair: the mask's layout */
    nn_col2im_order col2im_order; /* im2col backward: the card's order of additions */
    nn_upsample_bw_kernel upsample_bw_kernel; /* upsample backward: the card's kernel */
    /* upsample: an NLC self fails with ACLNN_ERR_INNER_NULLPTR (Ascend950's l0 builds nothing
     * for it); elsewhere NLC runs as [N, L, C]. */
    bool nlc_inner_nullptr;
    /* max-pool WithIndices[Backward] (Ascend950's MaxPoolWithArgmaxV3 / its grad): */
    bool any_dilation;       /* dilation may be any value > 0, else it must be 1 */
    bool nhwc;               /* the V3 kernels' formats: an NHWC self is pooled as [N,] H, W, C; the
                              * backward's private-format message says "ND, NCHW or NHWC"; the
                              * forward's shape inference fails (561103) for a 4-D self in another
                              * public format */
    bool large_planes;       /* no INT_MAX check on H*W */
    /* pad backward: fp32/fp16/bf16 with AI-Core pads run Atlas A2/A3's PadV3GradReplicate
     * kernels' orders and roundings (docs/precision.md), else the row-major order */
    bool pad_grad_replicate;
    /* The indices dtypes the device kernel has binaries for (empty: every accepted one).  An
     * accepted dtype outside it passes phase 1 and fails at launch (ACLNN_ERR_INNER). */
    nn_dtype_list kernel_index_dtypes;
    /* CANN's documentation of the operator (this page of its repository) calls the product
     * unsupported - for these dtypes, or entirely when the list is empty - while op_api accepts
     * it and no kernel for it is in CANN's repositories: it computes here as on Ascend910B, and
     * checking mode (ACLNN_CHECK) warns at phase 1 that the card will likely refuse it. */
    const char *doc_unsupported_page;
    nn_dtype_list doc_unsupported_dtypes;
    /* CANN's operator list calls the backward nondeterministic by default on this product, with
     * a deterministic mode to switch on (ops-nn:docs/zh/op_api_list.md): where pooling windows
     * overlap, its kernel adds gradients across cores with atomics unless the program set
     * ACL_OPT_DETERMINISTIC.  Checking mode warns at phase 1 (nn_check_product_determinism). */
    bool nondeterministic_overlap;
} nn_product;

/* The row of `op` for the current product (the SoC is valid: nn_check_args ran). */
const nn_product *nn_product_row(nn_product_op op);

/* CANN's dtype check of `t` against the row's main list: ACLNN_ERR_PARAM_INVALID with
 * "Tensor <name> not implemented for <DTYPE>, should be in dtype support list [..]." or, for an
 * empty list marked so, "support for <SoC> is not implemented".  An accepted dtype the row's
 * documentation calls unsupported gets checking mode's product warning (once per row and
 * dtype in a process). */
aclnnStatus nn_check_product_dtype(const char *op, const nn_product *pr, const char *name, const aclTensor *t);
/* The row's "rejected" text as an error, or ACLNN_SUCCESS. */
aclnnStatus nn_check_product_api(const char *op, const nn_product *pr);
/* Checking mode's warning, once per operator in a process, for a phase 1 whose result the card
 * would not reproduce: the row is nondeterministic_overlap, the windows overlap and the process
 * has not set ACL_OPT_DETERMINISTIC (libaclnn's own result is deterministic either way). */
void nn_check_product_determinism(const char *op, const nn_product *pr, bool windows_overlap);

#endif /* NN_OPS_PRODUCTS_H */
