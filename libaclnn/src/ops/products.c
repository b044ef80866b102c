/*
 * products.c - one table per operator: what each product (SoC) accepts and computes
 * differently (products.h; the evidence is in docs/compatibility.md, "Products").
 *
 * Rows are in nn_soc order: Ascend910, Ascend910B, Ascend910_93, Ascend950, Ascend310P.  CANN's
 * op_api never separates Ascend910_93 from Ascend910B, so those two rows are always equal.
 */
#include <pthread.h>
#include <stdio.h>

#include "check/nn_check.h"
#include "ops/products.h"
#include "runtime/nn_runtime.h"

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

/* ReplicationPad2dBackward: one dtype list; A2/A3 route fp32/fp16/bf16 to PadV3GradReplicate
 * (ops-math:conversion/pad_v3_grad/op_api/padv3grad.cpp, IsPadV3GradReplicateAicoreSupport), whose
 * arithmetic the kernels follow; 950's SIMT kernel is the row-major order, and 910/310P's TBE
 * kernel is not public (row-major kept). */
#define PAD_BW DTYPES(ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_COMPLEX64, ACL_COMPLEX128)
static const nn_product pad_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = PAD_BW},
    [NN_SOC_ASCEND910B] = {.dtypes = PAD_BW, .pad_grad_replicate = true},
    [NN_SOC_ASCEND910_93] = {.dtypes = PAD_BW, .pad_grad_replicate = true},
    [NN_SOC_ASCEND950] = {.dtypes = PAD_BW},
    [NN_SOC_ASCEND310P] = {.dtypes = PAD_BW},
};

/* UpsampleNearestExact1d: UINT8 is not in the Ascend950 list; 950 takes the scale's reciprocal in
 * float and handles only NCL/ND (an NLC self gets a NULL from l0: 561103).  (910 and 310P follow
 * op_api's list; their kernels are OPEN.) */
#define UP_A2 DTYPES(ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8)
/* The docs: Ascend910 is unsupported (aclnnUpsampleNearestExact1d.md:22-23), and on 310P so are
 * BF16 and UINT8 (:149-152; the 310P kernel config binds FP16/FP32 only). */
#define UP_DOC "docs/aclnnUpsampleNearestExact1d.md (ops-cv)"
static const nn_product upsample[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = UP_A2, .doc_unsupported_page = UP_DOC},
    [NN_SOC_ASCEND910B] = {.dtypes = UP_A2},
    [NN_SOC_ASCEND910_93] = {.dtypes = UP_A2},
    [NN_SOC_ASCEND950] = {.dtypes = FLOATS, .float_reciprocal = true, .nlc_inner_nullptr = true},
    [NN_SOC_ASCEND310P] = {.dtypes = UP_A2, .doc_unsupported_page = UP_DOC,
                           .doc_unsupported_dtypes = DTYPES(ACL_BF16, ACL_UINT8)},
};

/* The docs: unsupported on 910 and 310P (aclnnUpsampleNearestExact1dBackward.md:19-23).  The
 * kernels: A2/A3's Cube gather, Ascend950's SIMT gather (ops-cv:image/upsample_nearest_exact2d_grad). */
#define UP_BW_DOC "docs/aclnnUpsampleNearestExact1dBackward.md (ops-cv)"
static const nn_product upsample_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = FLOATS, .doc_unsupported_page = UP_BW_DOC},
    [NN_SOC_ASCEND910B] = {.dtypes = FLOATS, .upsample_bw_kernel = NN_UPSAMPLE_BW_CUBE},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS, .upsample_bw_kernel = NN_UPSAMPLE_BW_CUBE},
    [NN_SOC_ASCEND950] = {.dtypes = FLOATS, .upsample_bw_kernel = NN_UPSAMPLE_BW_SIMT},
    [NN_SOC_ASCEND310P] = {.dtypes = FLOATS, .doc_unsupported_page = UP_BW_DOC},
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
    [NN_SOC_ASCEND910B] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16), .nondeterministic_overlap = true},
    [NN_SOC_ASCEND910_93] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16), .nondeterministic_overlap = true},
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
     .kernel_index_dtypes = DTYPES(ACL_INT32), .nondeterministic_overlap = true}
static const nn_product mp_indices_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = NO_DTYPES},
    [NN_SOC_ASCEND910B] = MP_BW_A2,
    [NN_SOC_ASCEND910_93] = MP_BW_A2,
    [NN_SOC_ASCEND950] = {.dtypes = DTYPES(ACL_FLOAT16, ACL_FLOAT, ACL_BF16),
                          .index_dtypes = DTYPES(ACL_INT32, ACL_INT64), .any_dilation = true, .nhwc = true,
                          .large_planes = true, .nondeterministic_overlap = true},
    [NN_SOC_ASCEND310P] = {.dtypes = NO_DTYPES},
};

/* Im2col: Ascend950 gathers any of its fifteen dtypes. */
#define I2C_950                                                                                         \
    DTYPES(ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_BF16, \
           ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_BOOL, (aclDataType)33 /* COMPLEX32 */, ACL_COMPLEX64)
/* The docs: Im2col is unsupported on 910 and 310P (aclnnIm2col.md:19-23). */
#define I2C_DOC "docs/aclnnIm2col.md (ops-math)"
static const nn_product im2col[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = FLOATS, .doc_unsupported_page = I2C_DOC},
    [NN_SOC_ASCEND910B] = {.dtypes = FLOATS},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS}, [NN_SOC_ASCEND950] = {.dtypes = I2C_950},
    [NN_SOC_ASCEND310P] = {.dtypes = FLOATS, .doc_unsupported_page = I2C_DOC},
};

/* Im2colBackward, Prelu, PreluBackward: no BF16 on 910/310P; the docs call Im2colBackward
 * unsupported on both (aclnnIm2colBackward.md) and PreluBackward on 310P (aclnnPreluBackward.md:19-20). */
#define NO_BF16_ON_OLD(doc_910, doc_310p)                                                                 \
    {                                                                                                  \
        [NN_SOC_ASCEND910] = {.dtypes = F32_F16, .doc_unsupported_page = doc_910},                       \
        [NN_SOC_ASCEND910B] = {.dtypes = FLOATS}, [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS},            \
        [NN_SOC_ASCEND950] = {.dtypes = FLOATS},                                                       \
        [NN_SOC_ASCEND310P] = {.dtypes = F32_F16, .doc_unsupported_page = doc_310p},                     \
    }
#define I2C_BW_DOC "docs/aclnnIm2colBackward.md (ops-cv)"
/* Im2colBackward adds in the card's order: A2/A3 run the TBE Col2im, whose padding-free path
 * atomic-adds window after window and whose padded path adds kernel position after kernel
 * position; Ascend950's SIMT kernel loops over the windows (docs/precision.md). */
static const nn_product im2col_bw[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = {.dtypes = F32_F16, .doc_unsupported_page = I2C_BW_DOC},
    [NN_SOC_ASCEND910B] = {.dtypes = FLOATS, .col2im_order = NN_COL2IM_WINDOW_ORDER_UNPADDED},
    [NN_SOC_ASCEND910_93] = {.dtypes = FLOATS, .col2im_order = NN_COL2IM_WINDOW_ORDER_UNPADDED},
    [NN_SOC_ASCEND950] = {.dtypes = FLOATS, .col2im_order = NN_COL2IM_WINDOW_ORDER},
    [NN_SOC_ASCEND310P] = {.dtypes = F32_F16, .doc_unsupported_page = I2C_BW_DOC},
};
static const nn_product prelu[NN_SOC_COUNT] = NO_BF16_ON_OLD(NULL, NULL);
static const nn_product prelu_bw[NN_SOC_COUNT] = NO_BF16_ON_OLD(NULL, "docs/aclnnPreluBackward.md (ops-nn)");

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
    [NN_PR_IM2COL_BACKWARD] = im2col_bw,
    [NN_PR_PRELU] = prelu,
    /* PreluBackward: CANN tests SocVersion in [ASCEND910B, ASCEND910E] for BF16. */
    [NN_PR_PRELU_BACKWARD] = prelu_bw,
};

const nn_product *nn_product_row(nn_product_op op)
{
    nn_soc soc = nn_soc_current();
    if (soc < 0 || soc >= NN_SOC_COUNT) soc = NN_SOC_ASCEND910B; /* never: nn_check_args rejects it */
    return &tables[op][soc];
}

static bool in_list(nn_dtype_list list, aclDataType dtype)
{
    for (size_t i = 0; i < list.count; i++)
        if (list.list[i] == dtype) return true;
    return false;
}

/* Whether (row, dtype) was warned about already: the first time only (a loop of launches would
 * otherwise repeat it for every call). */
static bool first_warning(const nn_product *pr, aclDataType dtype)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct { const nn_product *row; aclDataType dtype; } seen[64];
    static size_t count;
    pthread_mutex_lock(&lock);
    bool first = true;
    for (size_t i = 0; i < count && first; i++)
        first = !(seen[i].row == pr && seen[i].dtype == dtype);
    if (first && count < sizeof seen / sizeof seen[0]) {
        seen[count].row = pr;
        seen[count].dtype = dtype;
        count++;
    }
    pthread_mutex_unlock(&lock);
    return first;
}

/* Checking mode's warning for a product the operator's documentation calls unsupported. */
static void warn_doc_unsupported(const char *op, const nn_product *pr, const char *name, const aclTensor *t)
{
    if (pr->doc_unsupported_page == NULL || !nn_check_on(NN_CHECK_ALL | NN_CHECK_PRODUCT)) return;
    bool by_dtype = pr->doc_unsupported_dtypes.count > 0;
    if (by_dtype && !in_list(pr->doc_unsupported_dtypes, t->dtype)) return;
    if (!first_warning(pr, by_dtype ? t->dtype : ACL_DT_UNDEFINED)) return;
    const char *soc = nn_soc_family_name(nn_soc_current());
    char title[160];
    if (by_dtype)
        snprintf(title, sizeof title, "%s with %s %s: CANN's documentation says %s does not support it", op,
                 name, nn_dtype_name(t->dtype), soc);
    else
        snprintf(title, sizeof title, "%s: CANN's documentation says %s does not support it", op, soc);
    nn_check_report *report = nn_check_begin(NN_CHECK_WARNING, NN_CHECK_PRODUCT, title);
    nn_check_line(report, "call:", "%sGetWorkspaceSize (%s %s) on %s, at:", op, name, nn_dtype_name(t->dtype), soc);
    nn_check_trace where;
    nn_check_capture(&where);
    nn_check_trace_lines(report, &where);
    nn_check_line(report, "doc:", "%s", pr->doc_unsupported_page);
    nn_check_line(report, "advice:", "op_api accepts it and libaclnn computes it as on Ascend910B, but no kernel "
                  "for it is in CANN's repositories: on that card expect a failure at kernel selection or launch "
                  "(docs/compatibility.md)");
    nn_check_end(report);
}

aclnnStatus nn_check_product_dtype(const char *op, const nn_product *pr, const char *name, const aclTensor *t)
{
    if (pr->dtypes.count == 0 && pr->empty_not_implemented)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: support for %s is not implemented", op,
                        nn_soc_family_name(nn_soc_current()));
    aclnnStatus st = nn_check_dtype_supported(op, name, t, pr->dtypes.list, pr->dtypes.count);
    if (st == ACLNN_SUCCESS && t != NULL) warn_doc_unsupported(op, pr, name, t);
    return st;
}

aclnnStatus nn_check_product_api(const char *op, const nn_product *pr)
{
    if (pr->rejected == NULL) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s", op, pr->rejected);
}

/* first_warning's key for the determinism warning of a row (no dtype has this value). */
#define DETERMINISM_WARNING ((aclDataType)-100)

void nn_check_product_determinism(const char *op, const nn_product *pr, bool windows_overlap)
{
    if (!pr->nondeterministic_overlap || !windows_overlap || !nn_check_on(NN_CHECK_ALL | NN_CHECK_PRODUCT)) return;
    if (nn_rt_deterministic_level() >= 1 || !first_warning(pr, DETERMINISM_WARNING)) return;
    const char *soc = nn_soc_family_name(nn_soc_current());
    char title[160];
    snprintf(title, sizeof title, "%s: nondeterministic on %s unless deterministic mode is on", op, soc);
    nn_check_report *report = nn_check_begin(NN_CHECK_WARNING, NN_CHECK_PRODUCT, title);
    nn_check_line(report, "call:", "%sGetWorkspaceSize with overlapping windows (kernel > stride) on %s, "
                  "ACL_OPT_DETERMINISTIC not set, at:", op, soc);
    nn_check_trace where;
    nn_check_capture(&where);
    nn_check_trace_lines(report, &where);
    nn_check_line(report, "doc:", "docs/zh/op_api_list.md (ops-nn): nondeterministic by default, deterministic "
                  "mode can be switched on");
    nn_check_line(report, "advice:", "on the card gradInput elements fed by several windows are summed with "
                  "atomics across cores and may differ from run to run in the last bits; call "
                  "aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1) before phase 1 for reproducible results "
                  "(libaclnn's result is deterministic either way)");
    nn_check_end(report);
}
