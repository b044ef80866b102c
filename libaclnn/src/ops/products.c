/*
 * products.c - one table per operator: what each product (SoC) accepts and computes
 * differently (products.h; the evidence is in docs/compatibility.md, "Products").
 *
 * Rows are in nn_soc order: Ascend910, Ascend910B, Ascend910_93, Ascend950, Ascend310P.  CANN's
 * op_api never separates Ascend910_93 from Ascend910B, so those two rows are always equal.
 */
#include "ops/products.h"

#define DTYPES(...) {(const aclDataType[]){__VA_ARGS__}, sizeof((aclDataType[]){__VA_ARGS__}) / sizeof(aclDataType)}
#define NO_DTYPES {NULL, 0}

#define F32_F16 DTYPES(ACL_FLOAT, ACL_FLOAT16)
#define FLOATS DTYPES(ACL_FLOAT, ACL_FLOAT16, ACL_BF16)

/* ReplicationPad2d: op_replication_pad.h's two lists. */
#define PAD_A2_DTYPES                                                                                  \
    ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_COMPLEX64, \
        ACL_COMPLEX128, ACL_BF16
#define PAD_A2 DTYPES(PAD_A2_DTYPES)
#define PAD_950                                                                                        \
    DTYPES(PAD_A2_DTYPES, ACL_UINT64, ACL_UINT32, ACL_UINT16, ACL_BOOL, (aclDataType)34 /* HIFLOAT8 */,   \
           (aclDataType)35 /* FLOAT8_E5M2 */, (aclDataType)36 /* FLOAT8_E4M3FN */,                        \
           (aclDataType)37 /* FLOAT8_E8M0 */)
static const nn_product pad[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = PAD_A2},   [NN_SOC_ASCEND910B] = {.dtypes = PAD_A2},
    [NN_SOC_ASCEND910_93] = {.dtypes = PAD_A2}, [NN_SOC_ASCEND950] = {.dtypes = PAD_950},
    [NN_SOC_ASCEND310P] = {.dtypes = PAD_A2},
};

/* ReplicationPad2dBackward: one list, no SoC branch. */
#define PAD_BW DTYPES(ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128)
static const nn_product pad_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = PAD_BW},   [NN_SOC_ASCEND910B] = {.dtypes = PAD_BW},
    [NN_SOC_ASCEND910_93] = {.dtypes = PAD_BW}, [NN_SOC_ASCEND950] = {.dtypes = PAD_BW},
    [NN_SOC_ASCEND310P] = {.dtypes = PAD_BW},
};

/* UpsampleNearestExact1d: UINT8 is not in the Ascend950 list; 950 takes the scale's reciprocal in
 * float and handles only NCL/ND (an NLC self gets a NULL from l0: 561103).  (910 and 310P follow
 * op_api's list; their kernels are OPEN.) */
#define UP_A2 DTYPES(ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8)
static const nn_product upsample[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = UP_A2},
    [NN_SOC_ASCEND910B] = {.dtypes = UP_A2},
    [NN_SOC_ASCEND910_93] = {.dtypes = UP_A2},
    [NN_SOC_ASCEND950] = {.dtypes = FLOATS, .float_reciprocal = true, .nlc_inner_nullptr = true},
    [NN_SOC_ASCEND310P] = {.dtypes = UP_A2},
};

static const nn_product upsample_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = FLOATS},   [NN_SOC_ASCEND910B] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS}, [NN_SOC_ASCEND950] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND310P] = {.dtypes = FLOATS},
};

/* MaxPool2dWithMask: FLOAT only on 310P, no BF16 on 910 (which computes FLOAT as FLOAT16);
 * Ascend950 rejects the API after the NULL and kernelSize-length checks.  910 and 310P run
 * MaxPoolWithArgmaxV1 for every kernel size, so their mask is the V1 bit mask. */
static const nn_product mp_mask[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT), .fp32_as_fp16 = true,
                          .mask_layout = NN_MASK_V1_BITS},
    [NN_SOC_ASCEND910B] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16)},
    [NN_SOC_ASCEND910_93] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16)},
    [NN_SOC_ASCEND950] = {.rejected = "On the 950 chip, aclnnMaxPool2dWithMask is deprecated, please use "
                                      "aclnnMaxPool2dWithIndices."},
    [NN_SOC_ASCEND310P] = {.dtypes = DTYPES(ACL_FLOAT), .mask_layout = NN_MASK_V1_BITS},
};

/* MaxPool2dWithMaskBackward: an empty list on 310P; Ascend950 rejects it first of all.  910
 * decodes the V1 bit mask (MaxPoolGradWithArgmaxV1). */
static const nn_product mp_mask_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT), .fp32_as_fp16 = true,
                          .mask_layout = NN_MASK_V1_BITS},
    [NN_SOC_ASCEND910B] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16)},
    [NN_SOC_ASCEND910_93] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16)},
    [NN_SOC_ASCEND950] = {.rejected = "Please use aclnnMaxPool2dWithIndicesBackward."},
    [NN_SOC_ASCEND310P] = {.dtypes = NO_DTYPES, .mask_layout = NN_MASK_V1_BITS},
};

/* MaxPool2dWithIndices: not on 910/310P ("support for <SoC> is not implemented").  Ascend950
 * runs MaxPoolWithArgmaxV3: any dilation > 0, NHWC, INT64 written natively, no INT_MAX check. */
#define MP_IDX DTYPES(ACL_INT64, ACL_INT32)
#define MP_A2 {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16), .index_dtypes = MP_IDX}
static const nn_product mp_indices[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = NO_DTYPES, .empty_not_implemented = true},
    [NN_SOC_ASCEND910B] = MP_A2,
    [NN_SOC_ASCEND910_93] = MP_A2,
    [NN_SOC_ASCEND950] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16), .index_dtypes = MP_IDX,
                          .any_dilation = true, .nhwc = true, .large_planes = true},
    [NN_SOC_ASCEND310P] = {.dtypes = NO_DTYPES, .empty_not_implemented = true},
};

/* MaxPool2dWithIndicesBackward: FLOAT only on the A2/A3 non-mask path, whose op_api list is
 * INT32/INT8 while MaxPool3DGradWithArgmax has int32 binaries only; empty on 910/310P; Ascend950
 * (MaxPoolGradWithArgmaxV3) takes the three float types, INT32/INT64, any dilation and NHWC. */
#define MP_BW_A2                                                                                        \
    {.dtypes = DTYPES(ACL_FLOAT), .index_dtypes = DTYPES(ACL_INT32, ACL_INT8),                          \
     .kernel_index_dtypes = DTYPES(ACL_INT32)}
static const nn_product mp_indices_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = NO_DTYPES},
    [NN_SOC_ASCEND910B] = MP_BW_A2,
    [NN_SOC_ASCEND910_93] = MP_BW_A2,
    [NN_SOC_ASCEND950] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16),
                          .index_dtypes = DTYPES(ACL_INT32, ACL_INT64), .any_dilation = true, .nhwc = true,
                          .large_planes = true},
    [NN_SOC_ASCEND310P] = {.dtypes = NO_DTYPES},
};

/* Im2col: Ascend950 gathers any of its fifteen dtypes. */
#define I2C_950                                                                                         \
    DTYPES(ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_BF16, \
           ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_BOOL, (aclDataType)33 /* COMPLEX32 */, ACL_COMPLEX64)
static const nn_product im2col[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = FLOATS},   [NN_SOC_ASCEND910B] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS}, [NN_SOC_ASCEND950] = {.dtypes = I2C_950},
    [NN_SOC_ASCEND310P] = {.dtypes = FLOATS},
};

/* Im2colBackward, Prelu: no BF16 on 910/310P. */
static const nn_product no_bf16_on_old[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = F32_F16},  [NN_SOC_ASCEND910B] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS}, [NN_SOC_ASCEND950] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND310P] = {.dtypes = F32_F16},
};

static const nn_product *const tables[NN_PR_OP_COUNT] = {
    [NN_PR_REPLICATION_PAD2D] = pad,
    [NN_PR_REPLICATION_PAD2D_BACKWARD] = pad_bw,
    [NN_PR_UPSAMPLE_NEAREST_EXACT1D] = upsample,
    [NN_PR_UPSAMPLE_NEAREST_EXACT1D_BACKWARD] = upsample_bw,
    [NN_PR_MAX_POOL2D_WITH_MASK] = mp_mask,
    [NN_PR_MAX_POOL2D_WITH_MASK_BACKWARD] = mp_mask_bw,
    [NN_PR_MAX_POOL2D_WITH_INDICES] = mp_indices,
    [NN_PR_MAX_POOL2D_WITH_INDICES_BACKWARD] = mp_indices_bw,
    [NN_PR_IM2COL] = im2col,
    [NN_PR_IM2COL_BACKWARD] = no_bf16_on_old,
    [NN_PR_PRELU] = no_bf16_on_old,
    /* PreluBackward: CANN tests SocVersion in [ASCEND910B, ASCEND910E] for BF16. */
    [NN_PR_PRELU_BACKWARD] = no_bf16_on_old,
};

const nn_product *nn_product_row(nn_product_op op)
{
    nn_soc soc = nn_soc_current();
    if (soc < 0 || soc >= NN_SOC_COUNT) soc = NN_SOC_ASCEND910B; /* never: nn_check_args rejects it */
    return &tables[op][soc];
}

aclnnStatus nn_check_product_dtype(const char *op, const nn_product *pr, const char *name, const aclTensor *t)
{
    if (pr->dtypes.count == 0 && pr->empty_not_implemented)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: support for %s is not implemented", op,
                        nn_soc_family_name(nn_soc_current()));
    return nn_check_dtype_supported(op, name, t, pr->dtypes.list, pr->dtypes.count);
}

aclnnStatus nn_check_product_api(const char *op, const nn_product *pr)
{
    if (pr->rejected == NULL) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s", op, pr->rejected);
}
