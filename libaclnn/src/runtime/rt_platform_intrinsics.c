/*
 * rt_platform_intrinsics.c - the instruction tables aclplatformGetInstructionInfo answers from
 * (rt_platform.c): for each product family, the [AICoreintrinsicDtypeMap] and
 * [VectorCoreintrinsicDtypeMap] sections of CANN's platform configuration
 * (runtime:src/platform/platform_config/cann/<SoC>.ini; cann-dev/ for Ascend950PR_9599), one
 * "<instruction>|<dtypes>" text per instruction, sorted by name.  The cards of a family carry the
 * same sections, so one card's stand for the family.  A name the ini repeats keeps the entry with
 * the first index in string order, the one CANN's parser keeps (runtime:src/platform/
 * platform_info.cpp, ParseAICoreintrinsicDtypeMap: a std::map walk that emplaces).
 */
#include <string.h>

#include "runtime/rt_ext.h"

/* [AICoreintrinsicDtypeMap] of Ascend910A (the Atlas training cards share it). */
static const char *const ascend910_ai_core[] = {
    "Intrinsic_abs|int64", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64",
    "Intrinsic_broadcast_ub_to_cc|float16,float32,int32", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_l0c2ub|f16,u16,s16,f32,s32,u32", "Intrinsic_data_move_l12l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2l1|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2out|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2ub|u8,s8,f16,u16,s16,f32,s32,u32", "Intrinsic_max|int64", "Intrinsic_min|int64",
    "Intrinsic_mmad|u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8",
    "Intrinsic_rpn_cor_diag|""", "Intrinsic_rpn_cor|""", "Intrinsic_scatter_vabs|float16,float32",
    "Intrinsic_scatter_vadds|float16,float32", "Intrinsic_scatter_vadd|float16,float32,int32",
    "Intrinsic_scatter_vaxpy|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vcmp|float16,float32",
    "Intrinsic_scatter_vconv|f322f16,f162f32,f322f16o,f162s8,f162s8a,f162s8f,f162s8c,f162s8z,f162u8,f162u8a,f162u8f,"
    "f162u8c,f162u8z,deq,s322f32,f162s32r,f162s32a,f162s32f,f162s32c,f162s32z,f322s32r,f322s32a,f322s32f,f322s32c,"
    "f322s32z,u82f16,s82f16,s322f16",
    "Intrinsic_scatter_vdiv|float16,float32", "Intrinsic_scatter_vector_mov|int16,uint16,float16",
    "Intrinsic_scatter_vexp|float16,float32", "Intrinsic_scatter_vln|float16,float32",
    "Intrinsic_scatter_vmaddrelu|float16,float32", "Intrinsic_scatter_vmadd|float16,float32",
    "Intrinsic_scatter_vmax|float16,float32,int32", "Intrinsic_scatter_vmin|float16,float32,int32",
    "Intrinsic_scatter_vmla|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_scatter_vmuls|float16,float32", "Intrinsic_scatter_vmul|float16,float32,int32",
    "Intrinsic_scatter_vnchwconv|int16,uint16,int8,uint8,float16", "Intrinsic_scatter_vrec|float16,float32",
    "Intrinsic_scatter_vrelu|float16", "Intrinsic_scatter_vrsqrt|float16,float32",
    "Intrinsic_scatter_vsel|float16,float32", "Intrinsic_scatter_vsqrt|float16,float32",
    "Intrinsic_scatter_vsub|float16,float32,int32", "Intrinsic_sqrt|int64,float32", "Intrinsic_vaadd|float16",
    "Intrinsic_vabs|float16,float32", "Intrinsic_vadddeqrelu|f16s32s32", "Intrinsic_vadds|float16,float32",
    "Intrinsic_vadd|float16,float32,int32", "Intrinsic_vand|int16,uint16",
    "Intrinsic_vaxpy|f16f16f16,f32f32f32,f32f16f16,float16,float32", "Intrinsic_vbitsort|float16",
    "Intrinsic_vcadd|float16,float32", "Intrinsic_vcgadd|float16", "Intrinsic_vcgmax|float16",
    "Intrinsic_vcgmin|float16", "Intrinsic_vcmax|float16", "Intrinsic_vcmin|float16",
    "Intrinsic_vcmpv_eq|float16,float32", "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32",
    "Intrinsic_vcmpv_le|float16,float32", "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmp|float16,float32", "Intrinsic_vconcat|float16",
    "Intrinsic_vconv|f322f16,f162f32,f322f16o,f162s8,f162s8a,f162s8f,f162s8c,f162s8z,f162u8,f162u8a,f162u8f,f162u8c,"
    "f162u8z,deq,s322f32,f162s32r,f162s32a,f162s32f,f162s32c,f162s32z,f322s32r,f322s32a,f322s32f,f322s32c,f322s32z,"
    "u82f16,s82f16,s322f16",
    "Intrinsic_vcpadd|float16", "Intrinsic_vdiv|float16,float32", "Intrinsic_vexp|float16,float32",
    "Intrinsic_vextract|float16", "Intrinsic_viou|float16", "Intrinsic_vln|float16,float32",
    "Intrinsic_vmaddrelu|float16,float32", "Intrinsic_vmadd|float16,float32", "Intrinsic_vmax|float16,float32,int32",
    "Intrinsic_vmergech|int8,uint8,int16,uint16,float16", "Intrinsic_vmin|float16,float32,int32",
    "Intrinsic_vmla|f16f16f16,f32f32f32,f32f16f16,float16,float32", "Intrinsic_vmrgsort4|float16",
    "Intrinsic_vmulconv|u8f16f16,s8f16f16", "Intrinsic_vmuls|float16,float32",
    "Intrinsic_vmul|float16,float32,int32", "Intrinsic_vnchwconv|int16,uint16,int8,uint8,float16",
    "Intrinsic_vnot|int16,uint16", "Intrinsic_vor|int16,uint16", "Intrinsic_vrec|float16,float32",
    "Intrinsic_vrelu|float16", "Intrinsic_vrpac|float16", "Intrinsic_vrsqrt|float16,float32",
    "Intrinsic_vsel|float16,float32", "Intrinsic_vsqrt|float16,float32", "Intrinsic_vsub|float16,float32,int32",
    "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [AICoreintrinsicDtypeMap] of Ascend910B3 (every A2 and A3 card shares it). */
static const char *const ascend910b_ai_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_l12bt|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12out|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1_nd2nz|u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_pad|uint8,int8,uint16,int16,float16,int32,float32,uint32,bfloat16",
    "Intrinsic_data_move_transpose_l12l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_transpose_l12l0b|u8,s8,f16,u16,s16,f32,s32,u32", "Intrinsic_fix_pipe_l0c2l1|f32,s32,f16",
    "Intrinsic_fix_pipe_l0c2out|f32,s32,f16", "Intrinsic_fix_pipe_l12fb|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_fix_pipe_post_transform_func_list|nz2nd",
    "Intrinsic_fix_pipe_post_transform_nz2nd|f32,f16,bf16,s8,u8,s4,s32",
    "Intrinsic_fix_pipe_pre_act_func_list|normal_relu,scalar_relu,vector_relu",
    "Intrinsic_fix_pipe_pre_act_normal_relu|f32,f16,bf16,s8,u8,s4,s32",
    "Intrinsic_fix_pipe_pre_act_scalar_relu|f16,s8,u8,s4", "Intrinsic_fix_pipe_pre_act_vector_relu|f16,s8,u8,s4",
    "Intrinsic_fix_pipe_pre_conv_cast|f322f16,f322bf16", "Intrinsic_fix_pipe_pre_conv_dequant|s322f16",
    "Intrinsic_fix_pipe_pre_conv_func_list|requant,dequant,quant,cast",
    "Intrinsic_fix_pipe_pre_conv_quant|f322s8,f322u8,f322s4",
    "Intrinsic_fix_pipe_pre_conv_requant|s322s8,s322u8,s322s4", "Intrinsic_fix_pipe_support_multiple_output|true",
    "Intrinsic_fix_pipe_unit_list|pre_conv,pre_act,post_transform", "Intrinsic_max|int64,float32",
    "Intrinsic_min|int64,float32",
    "Intrinsic_mmad|u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8,h322f32,"
    "f32f32f32,f322f32",
    "Intrinsic_set_l0a|f16,u16,s16,f32,s32,u32", "Intrinsic_set_l0b|f16,u16,s16,f32,s32,u32",
    "Intrinsic_set_l1|f16,u16,s16,f32,s32,u32", "Intrinsic_sqrt|int64,float32", "Intrinsic_vabs|float16,float32",
    "Intrinsic_vaddrelu|int16,float16,float32", "Intrinsic_vadds|float16,float32,int32,int16",
    "Intrinsic_vadd|float16,float32,int32,int16", "Intrinsic_vand|int16,uint16",
    "Intrinsic_vaxpy|f16f16f16,f32f32f32,f32f16f16,float16,float32", "Intrinsic_vbitsort32|float16,float32",
    "Intrinsic_vbitsort|float16", "Intrinsic_vbi|float16,float32",
    "Intrinsic_vbrcb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32", "Intrinsic_vcgmin|float16,float32",
    "Intrinsic_vcmax|float16,float32", "Intrinsic_vcmin|float16,float32", "Intrinsic_vcmpv_eq|float16,float32,int32",
    "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32", "Intrinsic_vcmpv_le|float16,float32",
    "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|float16,float32,int32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32",
    "Intrinsic_vcmp|float16,float32,int16",
    "Intrinsic_vconv|f322f32r,f322f32f,f322f32c,deq,f322f32a,f322f32z,f322f16,f322f16r,f322f16f,f322f16c,f322f16a,"
    "f322f16z,f322f16o,f322s64r,f322s64f,f322s64c,f322s64a,f322s64z,f322s32r,f322s32f,f322s32c,f322s32a,f322s32z,"
    "f322s16r,f322s16f,f322s16c,f322s16a,f322s16z,f162f32,f162s32r,f162s32f,f162s32c,f162s32a,f162s32z,f162s16r,"
    "f162s16f,f162s16c,f162s16a,f162s16z,f162s8,f162s8r,f162s8f,f162s8c,f162s8a,f162s8z,f162u8,f162u8r,f162u8f,"
    "f162u8c,f162u8a,f162u8z,u82f16,s82f16,s162f16,s162f16r,s162f16f,s162f16c,s162f16a,s162f16z,s162f32,s162s8,"
    "s162u8,s322f32,s322f32r,s322f32f,s322f32c,s322f32a,s322f32z,s322f16,s322s64,s322s16,s642s32,s642f32r,s642f32f,"
    "s642f32c,s642f32a,s642f32z,f322bf16r,f322bf16f,f322bf16c,f322bf16a,f322bf16z,bf162f32,bf162s32r,bf162s32f,"
    "bf162s32c,bf162s32a,bf162s32z",
    "Intrinsic_vcopy|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vcpadd|float16,float32",
    "Intrinsic_vdiv|float16,float32", "Intrinsic_vexp|float16,float32",
    "Intrinsic_vgatherb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32",
    "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vln|float16,float32",
    "Intrinsic_vlrelu|float16,float32", "Intrinsic_vmaddrelu|float16,float32", "Intrinsic_vmadd|float16,float32",
    "Intrinsic_vmaxs|float16,float32,int32,int16", "Intrinsic_vmax|float16,float32,int32,int16",
    "Intrinsic_vmins|float16,float32,int32,int16", "Intrinsic_vmin|float16,float32,int32,int16",
    "Intrinsic_vmla|f16f16f16,f32f32f32,f32f16f16,float16,float32", "Intrinsic_vmrgsort4v2|float16,float32",
    "Intrinsic_vmrgsort4|float16", "Intrinsic_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_vmuls|float16,float32,int32,int16", "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|int16,uint16,int8,uint8,float16,int32,uint32,float32", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vrec|float16,float32",
    "Intrinsic_vreducev2|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vrelu|float16,float32,int32",
    "Intrinsic_vrsqrt|float16,float32", "Intrinsic_vsel|float16,float32", "Intrinsic_vshl|int16,uint16,int32,uint32",
    "Intrinsic_vshr|uint16,int16,uint32,int32", "Intrinsic_vsqrt|float16,float32",
    "Intrinsic_vsub|float16,float32,int32,int16", "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [VectorCoreintrinsicDtypeMap] of Ascend910B3 (every A2 and A3 card shares it). */
static const char *const ascend910b_vector_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_pad|uint8,int8,uint16,int16,float16,int32,float32,uint32,bfloat16",
    "Intrinsic_fix_pipe_l0c2out|f32,s32,f16", "Intrinsic_max|int64,float32", "Intrinsic_min|int64,float32",
    "Intrinsic_mmad|u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,f162f32,f16u2,u8s8",
    "Intrinsic_sqrt|int64,float32", "Intrinsic_vabs|float16,float32", "Intrinsic_vaddrelu|int16,float16,float32",
    "Intrinsic_vadds|float16,float32,int32,int16", "Intrinsic_vadd|float16,float32,int32,int16",
    "Intrinsic_vand|int16,uint16", "Intrinsic_vaxpy|f16f16f16,f32f32f32,f32f16f16,float16,float32",
    "Intrinsic_vbitsort32|float16,float32", "Intrinsic_vbitsort|float16", "Intrinsic_vbi|float16,float32",
    "Intrinsic_vbrcb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32", "Intrinsic_vcgmin|float16,float32",
    "Intrinsic_vcmax|float16,float32", "Intrinsic_vcmin|float16,float32", "Intrinsic_vcmpv_eq|float16,float32,int32",
    "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32", "Intrinsic_vcmpv_le|float16,float32",
    "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|float16,float32,int32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32", "Intrinsic_vcmp|float16,float32",
    "Intrinsic_vconv|f322f32r,f322f32f,f322f32c,deq,f322f32a,f322f32z,f322f16,f322f16r,f322f16f,f322f16c,f322f16a,"
    "f322f16z,f322f16o,f322s64r,f322s64f,f322s64c,f322s64a,f322s64z,f322s32r,f322s32f,f322s32c,f322s32a,f322s32z,"
    "f322s16r,f322s16f,f322s16c,f322s16a,f322s16z,f162f32,f162s32r,f162s32f,f162s32c,f162s32a,f162s32z,f162s16r,"
    "f162s16f,f162s16c,f162s16a,f162s16z,f162s8,f162s8r,f162s8f,f162s8c,f162s8a,f162s8z,f162u8,f162u8r,f162u8f,"
    "f162u8c,f162u8a,f162u8z,u82f16,s82f16,s162f16,s162f16r,s162f16f,s162f16c,s162f16a,s162f16z,s162f32,s162s8,"
    "s162u8,s322f32,s322f32r,s322f32f,s322f32c,s322f32a,s322f32z,s322f16,s322s64,s322s16,s642s32,s642f32r,s642f32f,"
    "s642f32c,s642f32a,s642f32z,f322bf16r,f322bf16f,f322bf16c,f322bf16a,f322bf16z,bf162f32,bf162s32r,bf162s32f,"
    "bf162s32c,bf162s32a,bf162s32z",
    "Intrinsic_vcopy|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vcpadd|float16,float32",
    "Intrinsic_vdiv|float16,float32", "Intrinsic_vexp|float16,float32",
    "Intrinsic_vgatherb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32",
    "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vln|float16,float32",
    "Intrinsic_vlrelu|float16,float32", "Intrinsic_vmaddrelu|float16,float32", "Intrinsic_vmadd|float16,float32",
    "Intrinsic_vmaxs|float16,float32,int32,int16", "Intrinsic_vmax|float16,float32,int32,int16",
    "Intrinsic_vmins|float16,float32,int32,int16", "Intrinsic_vmin|float16,float32,int32,int16",
    "Intrinsic_vmla|f16f16f16,f32f32f32,f32f16f16,float16,float32", "Intrinsic_vmrgsort4v2|float16,float32",
    "Intrinsic_vmrgsort4|float16", "Intrinsic_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_vmuls|float16,float32,int32,int16", "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|int16,uint16,int8,uint8,float16,int32,uint32,float32", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vrec|float16,float32",
    "Intrinsic_vreducev2|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vrelu|float16,float32,int32",
    "Intrinsic_vrsqrt|float16,float32", "Intrinsic_vsel|float16,float32", "Intrinsic_vshl|int16,uint16,int32,uint32",
    "Intrinsic_vshr|uint16,int16,uint32,int32", "Intrinsic_vsqrt|float16,float32",
    "Intrinsic_vsub|float16,float32,int32,int16", "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [AICoreintrinsicDtypeMap] of Ascend310P3 (every Atlas inference card shares it). */
static const char *const ascend310p_ai_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64",
    "Intrinsic_broadcast_ub_to_cc|float16,float32,int32", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_l0c2ub|f16,u16,s16,f32,s32,u32", "Intrinsic_data_move_l12l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2l1|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2out|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_depthwise_conv|f16f16f16,f32f16f16,s32u8s8,s32s8s8,s32u8u8", "Intrinsic_max|int64,float32",
    "Intrinsic_min|int64,float32",
    "Intrinsic_mmad|s32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,s32s4s4,u8,s8,f162f16,f162f32,"
    "f16u2,u8s8,b8u2,s4,u32u8u8",
    "Intrinsic_rpn_cor_diag|""", "Intrinsic_rpn_cor|""", "Intrinsic_scatter_vabs|float16,float32",
    "Intrinsic_scatter_vadds|float16,int32,int16,float32", "Intrinsic_scatter_vadd|float16,int32,int16,float32",
    "Intrinsic_scatter_vaxpy|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vcmp|float16,float32",
    "Intrinsic_scatter_vconv|f322f16,f162f32,f162s8,f162u8,s322f16,s322f32,u82f16,s82f16,f162s32r,f162s8f,f162u8f,"
    "f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,"
    "f322s32z,f322f16o",
    "Intrinsic_scatter_vdiv|float16,float32", "Intrinsic_scatter_vector_mov|int16,uint16,float16",
    "Intrinsic_scatter_vexp|float16,float32", "Intrinsic_scatter_vln|float16,float32",
    "Intrinsic_scatter_vmaddrelu|float16,float32", "Intrinsic_scatter_vmadd|float16,float32",
    "Intrinsic_scatter_vmaxs|float16,int32,int16,float32", "Intrinsic_scatter_vmax|float16,int32,int16,float32",
    "Intrinsic_scatter_vmins|float16,int32,int16,float32", "Intrinsic_scatter_vmin|float16,int32,int16,float32",
    "Intrinsic_scatter_vmla|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_scatter_vmuls|float16,int32,int16,float32", "Intrinsic_scatter_vmul|float16,int32,int16,float32",
    "Intrinsic_scatter_vnchwconv|int16,uint16,int8,uint8,float16,uint32,int32,float32",
    "Intrinsic_scatter_vrec|float16,float32", "Intrinsic_scatter_vrelu|float16,int32,,float32",
    "Intrinsic_scatter_vrsqrt|float16,float32", "Intrinsic_scatter_vsel|float16,float32",
    "Intrinsic_scatter_vsqrt|float16,float32", "Intrinsic_scatter_vsub|float16,int32,int16,float32",
    "Intrinsic_sqrt|int64,float32", "Intrinsic_v4dtrans|int8,uint8,int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vaadd|float16,float32", "Intrinsic_vabs|float16,float32", "Intrinsic_vadddeqrelu|f16s32s32",
    "Intrinsic_vaddreluconv|s162s8,f162s8,f322f16", "Intrinsic_vaddrelu|int16,float16,float32",
    "Intrinsic_vadds|float16,float32,int32,int16", "Intrinsic_vadd|float16,float32,int32,int16",
    "Intrinsic_vand|int16,uint16", "Intrinsic_vaxpy|f16f16f16,f32f32f32,f32f16f16,float16,float32",
    "Intrinsic_vbitsort|float16,float32", "Intrinsic_vbi|float16", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcbd|s322s16", "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32",
    "Intrinsic_vcgmin|float16,float32", "Intrinsic_vcmax|float16,float32", "Intrinsic_vcmin|float16,float32",
    "Intrinsic_vcmpv_eq|float16,float32", "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32",
    "Intrinsic_vcmpv_le|float16,float32", "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|float16,float32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32", "Intrinsic_vcmp|float16,float32",
    "Intrinsic_vconcat|float16,float32",
    "Intrinsic_vconv|f322f16,f162f32,f322f16o,f162s8,f162s8a,f162s8f,f162s8c,f162s8z,f162u8,f162u8a,f162u8f,f162u8c,"
    "f162u8z,deq,s322f32,f162s32r,f162s32a,f162s32f,f162s32c,f162s32z,f322s32r,f322s32a,f322s32f,f322s32c,f322s32z,"
    "u82f16,s82f16,s322f16,s162u8,s162s8,f162s4,s162f16,f162s16r",
    "Intrinsic_vcpadd|float16,float32", "Intrinsic_vdiv|float16,float32", "Intrinsic_vexp|float16,float32",
    "Intrinsic_vextract|float16,float32", "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_viou|float16,float32", "Intrinsic_vln|float16,float32", "Intrinsic_vlrelu|float16,float32",
    "Intrinsic_vmaddrelu|float16,float32", "Intrinsic_vmadd|float16,float32",
    "Intrinsic_vmaxs|float16,float32,int32,int16", "Intrinsic_vmax|float16,float32,int32,int16",
    "Intrinsic_vmergech|int8,uint8,float16", "Intrinsic_vmins|float16,float32,int32,int16",
    "Intrinsic_vmin|float16,float32,int32,int16", "Intrinsic_vmla|f16f16f16,f32f32f32,f32f16f16,float16,float32",
    "Intrinsic_vmrgsort4|float16,float32", "Intrinsic_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_vmuls|float16,float32,int32,int16", "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|int16,uint16,int8,uint8,int32,uint32,float16,float32", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vpadding|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vrec|float16,float32", "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vrelu|float16,float32,int32", "Intrinsic_vrpac|float16,float32", "Intrinsic_vrsqrt|float16,float32",
    "Intrinsic_vscatter|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vsel|float16,float32",
    "Intrinsic_vsqrt|float16,float32", "Intrinsic_vsubreluconv|s162s8,f162s8,f322f16",
    "Intrinsic_vsubrelu|int16,float16,float32", "Intrinsic_vsub|float16,float32,int32,int16",
    "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [VectorCoreintrinsicDtypeMap] of Ascend310P3 (every Atlas inference card shares it). */
static const char *const ascend310p_vector_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64", "Intrinsic_clz|uint64",
    "Intrinsic_max|int64,float32", "Intrinsic_min|int64,float32", "Intrinsic_rpn_cor_diag|""",
    "Intrinsic_rpn_cor|""", "Intrinsic_scatter_vabs|float16,float32,int16",
    "Intrinsic_scatter_vadds|float16,int32,int16,float32", "Intrinsic_scatter_vadd|float16,int32,int16,float32",
    "Intrinsic_scatter_vaxpy|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vcmp|float16,float32,int16",
    "Intrinsic_scatter_vconv|f322f16,f162f32,f162s8,f162u8,s322f16,s322f32,u82f16,s82f16,f162s32r,f162s8f,f162u8f,"
    "f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,"
    "f322s32z,f322f16o",
    "Intrinsic_scatter_vdiv|float16,float32", "Intrinsic_scatter_vector_mov|int16,uint16,float16",
    "Intrinsic_scatter_vexp|float16,float32", "Intrinsic_scatter_vln|float16,float32",
    "Intrinsic_scatter_vmaddrelu|float16,float32", "Intrinsic_scatter_vmadd|float16,float32",
    "Intrinsic_scatter_vmaxs|float16,int32,int16,float32", "Intrinsic_scatter_vmax|float16,int32,int16,float32",
    "Intrinsic_scatter_vmins|float16,int32,int16,float32", "Intrinsic_scatter_vmin|float16,int32,int16,float32",
    "Intrinsic_scatter_vmla|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_scatter_vmulconv|u8f16f16,s8f16f16",
    "Intrinsic_scatter_vmuls|float16,int32,int16,float32", "Intrinsic_scatter_vmul|float16,int32,int16,float32",
    "Intrinsic_scatter_vnchwconv|int16,uint16,int8,uint8,float16,uint32,int32,float32",
    "Intrinsic_scatter_vrec|float16,float32", "Intrinsic_scatter_vrelu|float16,int32,float32",
    "Intrinsic_scatter_vrsqrt|float16,float32", "Intrinsic_scatter_vsel|float16,float32",
    "Intrinsic_scatter_vsqrt|float16,float32", "Intrinsic_scatter_vsub|float16,int32,int16,float32",
    "Intrinsic_sqrt|int64,float32", "Intrinsic_v4dtrans|int8,uint8,int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vaadd|float16,float32", "Intrinsic_vabs|float16,float32,int16", "Intrinsic_vadddeqrelu|f16s32s32",
    "Intrinsic_vaddreluconv|s162s8,f162s8,f322f16", "Intrinsic_vaddrelu|int16,float16,float32",
    "Intrinsic_vadds|float16,float32,int32,int16", "Intrinsic_vadd|float16,float32,int32,int16",
    "Intrinsic_vand|int16,uint16", "Intrinsic_vaxpy|f16f16f16,f32f32f32,f32f16f16",
    "Intrinsic_vbitsort|float16,float32", "Intrinsic_vbi|float16", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcbd|u82u16,u82s16,u82u32,u82s32,u162u8,u162u32,u162s32,s162u8,s162u32,s162s32,u322u8,u322u16,"
    "u322s16,s322u8,s322u16,s322s16",
    "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32", "Intrinsic_vcgmin|float16,float32",
    "Intrinsic_vci|float16,float32,int16,int32", "Intrinsic_vcmax|float16,float32,int16",
    "Intrinsic_vcmin|float16,float32,int16", "Intrinsic_vcmpv_eq|float16,float32",
    "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32", "Intrinsic_vcmpv_le|float16,float32",
    "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|float16,float32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32",
    "Intrinsic_vcmp|float16,float32,int16", "Intrinsic_vconcat|float16,float32",
    "Intrinsic_vconv|f322f16,f162f32,f162s8,f162u8,f162s4,s322f16,s162u8,s162s8,s322f32,u82f16,s82f16,s162f16,"
    "s162f32,f162s32r,f322s32r,f162s16r,f322s16r,f162s8f,f162u8f,f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,"
    "f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,f322s32z,f322s16z,f322f16o",
    "Intrinsic_vcpadd|float16,float32", "Intrinsic_vdiv|float16,float32", "Intrinsic_vdp|int16",
    "Intrinsic_vexp|float16,float32", "Intrinsic_vextract|float16,float32",
    "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32", "Intrinsic_viou|float16,float32",
    "Intrinsic_vln|float16,float32", "Intrinsic_vlrelu|float16,float32", "Intrinsic_vmaddrelu|float16,float32",
    "Intrinsic_vmadd|float16,float32", "Intrinsic_vmaxs|float16,float32,int32,int16",
    "Intrinsic_vmax|float16,float32,int32,int16", "Intrinsic_vmergech|int8,uint8,float16",
    "Intrinsic_vmins|float16,float32,int32,int16", "Intrinsic_vmin|float16,float32,int32,int16",
    "Intrinsic_vmla|f16f16f16,f32f32f32,f32f16f16", "Intrinsic_vmrgsort4|float16,float32",
    "Intrinsic_vmulconv|u8f16f16,s8f16f16", "Intrinsic_vmuls|float16,float32,int32,int16",
    "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|int16,uint16,int8,uint8,int32,uint32,float16,float32", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vpadding|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vrec|float16,float32", "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vrelu|float16,float32,int32", "Intrinsic_vrpac|float16,float32", "Intrinsic_vrsqrt|float16,float32",
    "Intrinsic_vscatter|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vsel|float16,float32",
    "Intrinsic_vshl|uint16,int16,float16,uint32,int32,float32", "Intrinsic_vshr|uint16,int16,uint32,int32",
    "Intrinsic_vsqrt|float16,float32", "Intrinsic_vsubreluconv|s162s8,f162s8,f322f16",
    "Intrinsic_vsubrelu|int16,float16,float32", "Intrinsic_vsub|float16,float32,int32,int16",
    "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [AICoreintrinsicDtypeMap] of Ascend950PR_9599. */
static const char *const ascend950_ai_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_l12bt|u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0a|hif8,f8,u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12l0b|hif8,f8,u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12out|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_l12ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1_dn2nz|hif8,f8,u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1_nd2nz|hif8,f8,u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2l1|hif8,f8,u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_out2ub|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_pad|uint8,int8,uint16,int16,float16,int32,float32,uint32,bfloat16",
    "Intrinsic_data_move_transpose_l12l0a|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_transpose_l12l0b|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2l1|u8,s8,f16,bf16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2out|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_data_move_ub2ub|u8,s8,f16,u16,s16,f32,s32,u32", "Intrinsic_fix_pipe_l0c2l1|f32,s32,f16",
    "Intrinsic_fix_pipe_l0c2out|f32,s32,f16", "Intrinsic_fix_pipe_l0c2ub|f32,s32,f16",
    "Intrinsic_fix_pipe_l12fb|u8,s8,f16,u16,s16,f32,s32,u32",
    "Intrinsic_fix_pipe_post_transform_nz2nd|f32,f16,bf16,s8,u8,s4,s32",
    "Intrinsic_fix_pipe_pre_act_clip_relu|f16,s8,u8,s4",
    "Intrinsic_fix_pipe_pre_act_func_list|normal_relu,scalar_relu,vector_relu,clip_relu",
    "Intrinsic_fix_pipe_pre_act_normal_relu|f32,f16,bf16,s8,u8,s4,s32",
    "Intrinsic_fix_pipe_pre_act_scalar_relu|f16,s8,u8,s4", "Intrinsic_fix_pipe_pre_act_vector_relu|f16,s8,u8,s4",
    "Intrinsic_fix_pipe_pre_conv_cast|f322f16,f322bf16", "Intrinsic_fix_pipe_pre_conv_dequant|s322f16",
    "Intrinsic_fix_pipe_pre_conv_func_list|requant,dequant,quant,cast",
    "Intrinsic_fix_pipe_pre_conv_quant|f322s8,f322u8,f322s4",
    "Intrinsic_fix_pipe_pre_conv_requant|s322s8,s322u8,s322s4", "Intrinsic_fix_pipe_support_multiple_output|true",
    "Intrinsic_fix_pipe_unit_list|pre_conv,pre_act,post_eltwise,post_act,post_quant,post_transform",
    "Intrinsic_max|int64,float32", "Intrinsic_min|int64,float32", "Intrinsic_mmad_sp|s8",
    "Intrinsic_mmad|s8,f162f32,s4,bf162f32,f322f32,h322f32,s32s8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,s32s4s4,"
    "e4m3e4m3,e4m3e5m2,e5m2e4m3,e5m2e5m2",
    "Intrinsic_scatter_vconv|f322f16,f162f32,f162s8,f162u8,s322f16,s322f32,u82f16,s82f16,f162s32r,f162s8f,f162u8f,"
    "f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,"
    "f322s32z,f322f16o",
    "Intrinsic_set_l0a|f16,u16,s16,f32,s32,u32", "Intrinsic_set_l0b|f16,u16,s16,f32,s32,u32",
    "Intrinsic_set_l1|f16,u16,s16,f32,s32,u32", "Intrinsic_sqrt|int64,float32", "Intrinsic_vabs|float16,float32",
    "Intrinsic_vadds|float16,float32,int32,int16", "Intrinsic_vadd|float16,float32,int32,int16",
    "Intrinsic_vand|int16,uint16", "Intrinsic_vaxpy|f16f16f16,f32f32f32,float16,float32",
    "Intrinsic_vbitsort32|float16,float32", "Intrinsic_vbi|float16,float32",
    "Intrinsic_vbrcb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcbd|u82u16,u82u32,s82s16,s82s32,u162u8,u162u32,s162u8,s162u32,s162s32,u322u8,u322u16,u322s16,s322u8,"
    "s322u16,s322s16",
    "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32", "Intrinsic_vcgmin|float16,float32",
    "Intrinsic_vcmax|float16,float32", "Intrinsic_vcmin|float16,float32", "Intrinsic_vcmpv_eq|float16,float32,int32",
    "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32", "Intrinsic_vcmpv_le|float16,float32",
    "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|int32,float16,float32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32", "Intrinsic_vcmp|float16,float32",
    "Intrinsic_vconcat|float16,float32",
    "Intrinsic_vconv|f322f32r,f322f32f,f322f32c,deq,f322f32a,f322f32z,f322f16,f322f16r,f322f16f,f322f16c,f322f16a,"
    "f322f16z,f322f16o,f322s64r,f322s64f,f322s64c,f322s64a,f322s64z,f322s32r,f322s32f,f322s32c,f322s32a,f322s32z,"
    "f322s16r,f322s16f,f322s16c,f322s16a,f322s16z,f162f32,f162s32r,f162s32f,f162s32c,f162s32a,f162s32z,f162s16r,"
    "f162s16f,f162s16c,f162s16a,f162s16z,f162s8,f162s8r,f162s8f,f162s8c,f162s8a,f162s8z,f162u8,f162u8r,f162u8f,"
    "f162u8c,f162u8a,f162u8z,u82f16,s82f16,s162f16,s162f16r,s162f16f,s162f16c,s162f16a,s162f16z,s162f32,s162s8,"
    "s162u8,s322f32,s322f32r,s322f32f,s322f32c,s322f32a,s322f32z,s322f16,s322s64,s322s16,s642s32,s642f32r,s642f32f,"
    "s642f32c,s642f32a,s642f32z,f322bf16r,f322bf16f,f322bf16c,f322bf16a,f322bf16z,bf162f32,bf162s32r,bf162s32f,"
    "bf162s32c,bf162s32a,bf162s32z",
    "Intrinsic_vcopy|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vcpadd|float16,float32",
    "Intrinsic_vdiv|float16,float32", "Intrinsic_vexp|float16,float32",
    "Intrinsic_vgatherb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32",
    "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vln|float16,float32",
    "Intrinsic_vlrelu|float16,float32", "Intrinsic_vmadd|float16,float32",
    "Intrinsic_vmaxs|float16,float32,int32,int16", "Intrinsic_vmax|float16,float32,int32,int16",
    "Intrinsic_vmins|float16,float32,int32,int16", "Intrinsic_vmin|float16,float32,int32,int16",
    "Intrinsic_vmla|f16f16f16,f32f32f32,float16,float32", "Intrinsic_vmrgsort4v2|float16,float32",
    "Intrinsic_vmuls|float16,float32,int32,int16", "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|float16,float32,int32,int16,uint32,uint16,int8,uint8", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vrec|float16,float32",
    "Intrinsic_vreducev2|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vrelu|float16,float32,int32",
    "Intrinsic_vrsqrt|float16,float32", "Intrinsic_vscatter|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vsel|float16,float32", "Intrinsic_vshl|int16,uint16,int32,uint32",
    "Intrinsic_vshr|int16,uint16,int32,uint32", "Intrinsic_vsqrt|float16,float32",
    "Intrinsic_vsub|float16,float32,int32,int16", "Intrinsic_vtranspose|uint16,int16,float16",
};

/* [VectorCoreintrinsicDtypeMap] of Ascend950PR_9599. */
static const char *const ascend950_vector_core[] = {
    "Intrinsic_abs|int64,float32", "Intrinsic_bcnt0|uint64", "Intrinsic_bcnt1|uint64", "Intrinsic_clz|uint64",
    "Intrinsic_data_move_gather|uint8,int8,uint16,int16,float16,int32,float32,uint32,uint64,int64",
    "Intrinsic_data_move_pad|uint8,int8,uint16,int16,float16,int32,float32,uint32,bfloat16",
    "Intrinsic_fix_pipe_l0c2out|f32,s32,f16", "Intrinsic_max|int64,float32", "Intrinsic_min|int64,float32",
    "Intrinsic_scatter_vconv|f322f16,f162f32,f162s8,f162u8,s322f16,s322f32,u82f16,s82f16,f162s32r,f162s8f,f162u8f,"
    "f162s32f,f322s32f,f162s8c,f162u8c,f162s32c,f322s32c,f162s8a,f162u8a,f162s32a,f322s32a,f162s8z,f162u8z,f162s32z,"
    "f322s32z,f322f16o",
    "Intrinsic_sqrt|int64,float32", "Intrinsic_vabs|float16,float32", "Intrinsic_vadds|float16,float32,int32,int16",
    "Intrinsic_vadd|float16,float32,int32,int16", "Intrinsic_vand|int16,uint16",
    "Intrinsic_vaxpy|f16f16f16,f32f32f32,float16,float32", "Intrinsic_vbitsort32|float16,float32",
    "Intrinsic_vbitsort|float16", "Intrinsic_vbi|float16,float32",
    "Intrinsic_vbrcb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32", "Intrinsic_vcadd|float16,float32",
    "Intrinsic_vcbd|u82u16,u82u32,s82s16,s82s32,u162u8,u162u32,s162u8,s162u32,s162s32,u322u8,u322u16,u322s16,s322u8,"
    "s322u16,s322s16",
    "Intrinsic_vcgadd|float16,float32", "Intrinsic_vcgmax|float16,float32", "Intrinsic_vcgmin|float16,float32",
    "Intrinsic_vci|float16,float32,int16,int32", "Intrinsic_vcmax|float16,float32",
    "Intrinsic_vcmin|float16,float32", "Intrinsic_vcmpv_eq|float16,float32,int32",
    "Intrinsic_vcmpv_ge|float16,float32", "Intrinsic_vcmpv_gt|float16,float32", "Intrinsic_vcmpv_le|float16,float32",
    "Intrinsic_vcmpv_lt|float16,float32", "Intrinsic_vcmpv_ne|float16,float32",
    "Intrinsic_vcmpvs_eq|int32,float16,float32", "Intrinsic_vcmpvs_ge|float16,float32",
    "Intrinsic_vcmpvs_gt|float16,float32", "Intrinsic_vcmpvs_le|float16,float32",
    "Intrinsic_vcmpvs_lt|float16,float32", "Intrinsic_vcmpvs_ne|float16,float32", "Intrinsic_vcmp|float16,float32",
    "Intrinsic_vconv|f322f32r,f322f32f,f322f32c,deq,f322f32a,f322f32z,f322f16,f322f16r,f322f16f,f322f16c,f322f16a,"
    "f322f16z,f322f16o,f322s64r,f322s64f,f322s64c,f322s64a,f322s64z,f322s32r,f322s32f,f322s32c,f322s32a,f322s32z,"
    "f322s16r,f322s16f,f322s16c,f322s16a,f322s16z,f162f32,f162s32r,f162s32f,f162s32c,f162s32a,f162s32z,f162s16r,"
    "f162s16f,f162s16c,f162s16a,f162s16z,f162s8,f162s8r,f162s8f,f162s8c,f162s8a,f162s8z,f162u8,f162u8r,f162u8f,"
    "f162u8c,f162u8a,f162u8z,u82f16,s82f16,s162f16,s162f16r,s162f16f,s162f16c,s162f16a,s162f16z,s162f32,s162s8,"
    "s162u8,s322f32,s322f32r,s322f32f,s322f32c,s322f32a,s322f32z,s322f16,s322s64,s322s16,s642s32,s642f32r,s642f32f,"
    "s642f32c,s642f32a,s642f32z,f322bf16r,f322bf16f,f322bf16c,f322bf16a,f322bf16z,bf162f32,bf162s32r,bf162s32f,"
    "bf162s32c,bf162s32a,bf162s32z",
    "Intrinsic_vcopy|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vcpadd|float16,float32",
    "Intrinsic_vdiv|float16,float32", "Intrinsic_vector_filter1d|u8s16,s8s16,u16s16,s16s16",
    "Intrinsic_vectorized_cast|f16f32,f32f16,u8f16,s8f16,f16u8,f16s8,f16s16,f16s32,s16f16,s16f32,f32s16,f32s32,"
    "s32f32,u8u16,u8u32,s8s16,s8s32,u16u8,u16u32,s16u8,s16u32,s16s32,u32u8,u32u16,u32s16,s32u8,s32u16,s32s16",
    "Intrinsic_vectorized_chistv2|u8u16", "Intrinsic_vectorized_chist|u8u32", "Intrinsic_vectorized_dhistv2|u8u16",
    "Intrinsic_vectorized_dhist|u8u32", "Intrinsic_vectorized_fmax|u8u8", "Intrinsic_vectorized_fmin|u8u8",
    "Intrinsic_vectorized_pge|uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "Intrinsic_vectorized_plds|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_pld|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_plt|uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "Intrinsic_vectorized_pset|uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "Intrinsic_vectorized_pslide|uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "Intrinsic_vectorized_psts|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_pst|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_sub|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32,s8s24,u8s24,s16s48,u16s48",
    "Intrinsic_vectorized_vabsdif|u8u8,s8s8,u16u16,s16s16,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vabs|s8s8,s16s16,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vadd3|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vadds|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vadd|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32,s8s24,u8s24,s16s48,u16s48",
    "Intrinsic_vectorized_vadif|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vand|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vavg|u8u8,s8s8,u16u16,s16s16", "Intrinsic_vectorized_vaxpy|f16f16,f32f32",
    "Intrinsic_vectorized_vbcnt|u8s8,s8s8,u16s16,s16s16,u32s32,s32s32",
    "Intrinsic_vectorized_vbr|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcadd|s8s16,s16s32,s32s32,u8u16,u16u32,u32u32,f16f16,f32f32",
    "Intrinsic_vectorized_vcbmax|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcbmin|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vci|int8,int16,int32,float16,float32",
    "Intrinsic_vectorized_vcls|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vcmax|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vcmin|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vcmp_eq|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmp_ge|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmp_gt|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmp_le|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmp_lt|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmp_ne|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_eq|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_ge|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_gt|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_le|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_lt|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vcmps_ne|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vdintlv|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vdiv|u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vdupi|uint8,int8,uint16,int16,float16",
    "Intrinsic_vectorized_vdupm|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vdups|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vdup|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vexp|f16f16,f32f32", "Intrinsic_vectorized_vfilter|s8s48,u8s48,s16s48,u16s48",
    "Intrinsic_vectorized_vgather2|s16u16s8,u16u16u8,s16u16s16,u16u16u16,s32u32s32,u32u32u32,f16u16f16,f32u32f32",
    "Intrinsic_vectorized_vgatherb|int8,uint8,int16,uint16,int32,uint32,float16,float32",
    "Intrinsic_vectorized_vintlv|uint8,int8,uint16,int16,uint32,int32,float16,float32",
    "Intrinsic_vectorized_vln|f16f16,f32f32", "Intrinsic_vectorized_vlog|float16,float32",
    "Intrinsic_vectorized_vlrelu|f16f16,f32f32", "Intrinsic_vectorized_vmadd|f16f16,f32f32",
    "Intrinsic_vectorized_vmaxs|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmax|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmins|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmin|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmov|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmula|u8u8,s8s8,u16u16,s16s16,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vmuls|u8u8,s8s8,u16u16,s16s16,s32s32,f16f16,f32f32,u8s24,s8s24,u16s48,s16s48,u16s64,s16s64",
    "Intrinsic_vectorized_vmul|u8u8,s8s8,u16u16,s16s16,s32s32,f16f16,f32f32,u8s24,s8s24,u16s48,s16s48,u16s64,s16s64",
    "Intrinsic_vectorized_vneg|s8s8,s16s16,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vnot|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vor|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vpack|bb,u16u8,s16u8,u32u16,s32u16", "Intrinsic_vectorized_vrec|f16f16,f32f32",
    "Intrinsic_vectorized_vrelu|s32s32,f16f16,f32f32", "Intrinsic_vectorized_vrnds|s16s16,s32s32",
    "Intrinsic_vectorized_vrnd|s16s16,s32s32", "Intrinsic_vectorized_vrsqrt|f16f16,f32f32",
    "Intrinsic_vectorized_vsadds|s16s16", "Intrinsic_vectorized_vsadd|s16s16",
    "Intrinsic_vectorized_vsad|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vscatter|s8u16,u8u16,s16u16,u16u16,s32u32,u32u32,f16u16,f32u32",
    "Intrinsic_vectorized_vselr|u8u8u8,s8s8u8,u16u16u16,s16s16u16,f16f16u16",
    "Intrinsic_vectorized_vsel|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vshls|u8u8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vshl|u8u8,u16u16,s16s16,u32u32,s32s32",
    "Intrinsic_vectorized_vshrs|u8u8,u16u16,s16s16,u32u32,s32s32,s24s8,s24u8,s48s16,s48u16,s64s32,s24s16,s24u16,"
    "s48s32",
    "Intrinsic_vectorized_vshr|u8u8,u16u16,s16s16,u32u32,s32s32,s24s8,s24u8,s48s16,s48u16,s64s32,s24s16,s24u16,"
    "s48s32",
    "Intrinsic_vectorized_vsld|uint8,int8,uint16,int16,float16,int32,float32,uint32",
    "Intrinsic_vectorized_vslide|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vsqrt|f16f16,f32f32",
    "Intrinsic_vectorized_vsqz|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vectorized_vssub|s16s16",
    "Intrinsic_vectorized_vsub|u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32,s8s24,u8s24,s16s48,u16s48",
    "Intrinsic_vectorized_vtrc|f16f16,f32f32", "Intrinsic_vectorized_vunpack|bb,u8u16,s8s16,u16u32,s16s32",
    "Intrinsic_vectorized_vusqz|bs8,bs16,bs32,bu8,bu16,bu32",
    "Intrinsic_vectorized_vxor|bb,u8u8,s8s8,u16u16,s16s16,u32u32,s32s32,f16f16,f32f32",
    "Intrinsic_vexp|float16,float32", "Intrinsic_vgatherb|u16u16,s16s16,f16f16,u32u32,s32s32,f32f32",
    "Intrinsic_vgather|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vln|float16,float32",
    "Intrinsic_vlrelu|float16,float32", "Intrinsic_vmadd|float16,float32",
    "Intrinsic_vmaxs|float16,float32,int32,int16", "Intrinsic_vmax|float16,float32,int32,int16",
    "Intrinsic_vmins|float16,float32,int32,int16", "Intrinsic_vmin|float16,float32,int32,int16",
    "Intrinsic_vmla|f16f16f16,f32f32f32,float16,float32", "Intrinsic_vmrgsort4v2|float16,float32",
    "Intrinsic_vmuls|float16,float32,int32,int16", "Intrinsic_vmul|float16,float32,int32,int16",
    "Intrinsic_vnchwconv|float16,float32,int32,int16,uint32,uint16,int8,uint8", "Intrinsic_vnot|int16,uint16",
    "Intrinsic_vor|int16,uint16", "Intrinsic_vrec|float16,float32",
    "Intrinsic_vreducev2|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vreduce|int16,uint16,float16,float32,int32,uint32", "Intrinsic_vrelu|float16,float32,int32",
    "Intrinsic_vrsqrt|float16,float32", "Intrinsic_vscatter|int16,uint16,float16,float32,int32,uint32",
    "Intrinsic_vsel|float16,float32", "Intrinsic_vshl|int16,uint16,int32,uint32",
    "Intrinsic_vshr|int16,uint16,int32,uint32", "Intrinsic_vsqrt|float16,float32",
    "Intrinsic_vsub|float16,float32,int32,int16", "Intrinsic_vtranspose|uint16,int16,float16",
};

typedef struct intrinsic_table {
    const char *const *entries;
    size_t count;
} intrinsic_table;

#define TABLE(entries) {entries, sizeof entries / sizeof entries[0]}
#define NO_TABLE {NULL, 0}

/* By family, then by core type (AI Core, vector core); Ascend910 has no vector core section. */
static const intrinsic_table tables[NN_SOC_COUNT][2] = {
    [NN_SOC_ASCEND910] = {TABLE(ascend910_ai_core), NO_TABLE},
    [NN_SOC_ASCEND910B] = {TABLE(ascend910b_ai_core), TABLE(ascend910b_vector_core)},
    [NN_SOC_ASCEND910_93] = {TABLE(ascend910b_ai_core), TABLE(ascend910b_vector_core)},
    [NN_SOC_ASCEND950] = {TABLE(ascend950_ai_core), TABLE(ascend950_vector_core)},
    [NN_SOC_ASCEND310P] = {TABLE(ascend310p_ai_core), TABLE(ascend310p_vector_core)},
};

const char *nn_platform_intrinsic_dtypes(nn_soc family, bool vector_core, const char *instruction)
{
    if (family < 0 || family >= NN_SOC_COUNT)
        return NULL;
    const intrinsic_table *table = &tables[family][vector_core ? 1 : 0];
    size_t len = strlen(instruction);
    for (size_t i = 0; i < table->count; i++) {
        const char *entry = table->entries[i];
        if (strncmp(entry, instruction, len) == 0 && entry[len] == '|')
            return entry + len + 1;
    }
    return NULL;
}
