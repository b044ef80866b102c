/*
 * test_runtime_platform.c - aclplatformGetDeviceInfo (rt_platform.c): the emulated card's values
 * from CANN's platform configuration (runtime:src/platform/platform_config/cann/<SoC>.ini, read
 * by hand for the numbers below), for the default card (Ascend910B3) and after switching to
 * Ascend310P3, Ascend950PR_9599, another Ascend950 name and the Atlas training card; and the
 * checks of runtime:src/platform/acl_platform.cpp: infoType, value, maxLen, a key the card's ini
 * lacks or leaves empty (100000 each).
 * aclplatformGetInstructionInfo: the dtypes the family's ini lists for an instruction on the AI
 * Core or the vector core ([AICoreintrinsicDtypeMap], [VectorCoreintrinsicDtypeMap]), the checks
 * of acl_platform.cpp, and a 765-byte list that must fit whole.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_platform.h"

#include "test_util.h"

static void expect_info(const char *soc, aclplatformDevInfo type, const char *want)
{
    char value[64] = "unset";
    EXPECT_OK(aclplatformGetDeviceInfo(type, value, sizeof value));
    CHECK(strcmp(value, want) == 0, "%s: info %d is \"%s\", CANN's ini says \"%s\"", soc, (int)type, value, want);
}

static void select_soc(const char *soc)
{
    CHECK(aclnnCpuSetSocVersion(soc) == 0, "cannot select %s", soc);
}

static void test_default_card(void)
{
    const char *soc = "Ascend910B3";
    expect_info(soc, ACL_PLATFORM_AICORE_CNT, "20");
    expect_info(soc, ACL_PLATFORM_AICORE_UB_SIZE, "196608");
    expect_info(soc, ACL_PLATFORM_CUBE_CORE_CNT, "20");
    expect_info(soc, ACL_PLATFORM_VECTOR_CORE_CNT, "40");
    expect_info(soc, ACL_PLATFORM_L2_SIZE, "201326592");
    expect_info(soc, ACL_PLATFORM_MEMORY_SIZE, "68719476736");
    expect_info(soc, ACL_PLATFORM_CUBE_FREQ, "1800");
    expect_info(soc, ACL_PLATFORM_BT_SIZE, "1024");
    expect_info(soc, ACL_PLATFORM_L0_A_SIZE, "65536");
    expect_info(soc, ACL_PLATFORM_L0_B_SIZE, "65536");
    expect_info(soc, ACL_PLATFORM_L0_C_SIZE, "131072");
    expect_info(soc, ACL_PLATFORM_L1_SIZE, "524288");
    expect_info(soc, ACL_PLATFORM_SOC_VERSION, "Ascend910B3");
    expect_info(soc, ACL_PLATFORM_AIC_VERSION, "AIC-C-220");
    expect_info(soc, ACL_PLATFORM_NPU_ARCH, "2201");

    char value[64];
    /* the ini has no [VectorCoreSpec] vec_freq and an empty memory_type */
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_VEC_FREQ, value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "vec_freq");
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_MEMORY_TYPE, value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "memory_type");
    EXPECT(aclplatformGetDeviceInfo((aclplatformDevInfo)17, value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "infoType");
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_AICORE_CNT, NULL, 8), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_AICORE_CNT, value, 0), ACL_ERROR_INVALID_PARAM, "maxLen");
    /* "Ascend910B3" and its terminator take 12 bytes */
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_SOC_VERSION, value, 11), ACL_ERROR_INVALID_PARAM, "maxLen");
    EXPECT_OK(aclplatformGetDeviceInfo(ACL_PLATFORM_SOC_VERSION, value, 12));
    CHECK(strcmp(value, "Ascend910B3") == 0, "12 bytes hold the SoC name, got \"%s\"", value);
}

static void test_other_cards(void)
{
    select_soc("Ascend310P");
    expect_info("Ascend310P3", ACL_PLATFORM_SOC_VERSION, "Ascend310P3");
    expect_info("Ascend310P3", ACL_PLATFORM_AICORE_CNT, "8");
    expect_info("Ascend310P3", ACL_PLATFORM_VECTOR_CORE_CNT, "7");
    expect_info("Ascend310P3", ACL_PLATFORM_AICORE_UB_SIZE, "262144");
    expect_info("Ascend310P3", ACL_PLATFORM_VEC_FREQ, "1000");
    expect_info("Ascend310P3", ACL_PLATFORM_MEMORY_TYPE, "0");
    expect_info("Ascend310P3", ACL_PLATFORM_AIC_VERSION, "AIC-M-200");
    expect_info("Ascend310P3", ACL_PLATFORM_NPU_ARCH, "2002");

    select_soc("Ascend950");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_SOC_VERSION, "Ascend950PR_9599");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_AICORE_CNT, "36");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_VECTOR_CORE_CNT, "72");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_AICORE_UB_SIZE, "253952");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_BT_SIZE, "4096");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_AIC_VERSION, "AIC-C-310");
    expect_info("Ascend950PR_9599", ACL_PLATFORM_NPU_ARCH, "3510");

    select_soc("Ascend950DT_9571"); /* no row: the family's default card's values, its own name */
    expect_info("Ascend950DT_9571", ACL_PLATFORM_SOC_VERSION, "Ascend950DT_9571");
    expect_info("Ascend950DT_9571", ACL_PLATFORM_NPU_ARCH, "3510");

    select_soc("Ascend910ProB");
    expect_info("Ascend910ProB", ACL_PLATFORM_AICORE_CNT, "30");
    expect_info("Ascend910ProB", ACL_PLATFORM_CUBE_FREQ, "1150");
    expect_info("Ascend910ProB", ACL_PLATFORM_NPU_ARCH, "1001");
    char value[64];
    EXPECT(aclplatformGetDeviceInfo(ACL_PLATFORM_MEMORY_SIZE, value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "memory_size");
    select_soc(NULL);
    expect_info("Ascend910B3", ACL_PLATFORM_SOC_VERSION, "Ascend910B3");
}

static void expect_instruction(aclplatformCoreType type, const char *instruction, const char *want)
{
    char value[1024] = "unset";
    EXPECT_OK(aclplatformGetInstructionInfo(type, instruction, value, sizeof value));
    CHECK(strcmp(value, want) == 0, "%s on core type %d: \"%s\", CANN's ini says \"%s\"", instruction, (int)type,
          value, want);
}

static void test_instructions(void)
{
    const aclplatformCoreType aic = ACL_PLATFORM_CORE_TYPE_AI_CORE, aiv = ACL_PLATFORM_CORE_TYPE_VECTOR_CORE;
    expect_instruction(aic, "Intrinsic_vexp", "float16,float32");
    expect_instruction(aiv, "Intrinsic_vln", "float16,float32");
    expect_instruction(aic, "Intrinsic_mmad", "u32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,f16f16u2,u8,s8,f162f16,"
                                              "f162f32,f16u2,u8s8,h322f32,f32f32f32,f322f32");
    char value[1024];
    /* Intrinsic_vconv's list on A2 is 765 bytes, ending in bf162s32z (its text spans several lines
     * of the table) */
    EXPECT_OK(aclplatformGetInstructionInfo(aic, "Intrinsic_vconv", value, 766));
    CHECK(strlen(value) == 765 && strcmp(value + 756, "bf162s32z") == 0, "vconv: %zu bytes, \"%s\"", strlen(value),
          value);
    EXPECT(aclplatformGetInstructionInfo(aic, "Intrinsic_vconv", value, 765), ACL_ERROR_INVALID_PARAM, "maxLen");
    EXPECT(aclplatformGetInstructionInfo(aic, "Intrinsic_nothing", value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "Intrinsic_nothing");
    EXPECT(aclplatformGetInstructionInfo(aic, "Intrinsic_vex", value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "Intrinsic_vex");
    EXPECT(aclplatformGetInstructionInfo((aclplatformCoreType)2, "Intrinsic_vexp", value, sizeof value),
           ACL_ERROR_INVALID_PARAM, "type");
    EXPECT(aclplatformGetInstructionInfo(aic, NULL, value, sizeof value), ACL_ERROR_INVALID_PARAM, "instruction");
    EXPECT(aclplatformGetInstructionInfo(aic, "Intrinsic_vexp", NULL, 8), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT(aclplatformGetInstructionInfo(aic, "Intrinsic_vexp", value, 0), ACL_ERROR_INVALID_PARAM, "maxLen");

    select_soc("Ascend310P3");
    expect_instruction(aic, "Intrinsic_mmad", "s32u8u8,s32s8s8,s32u8s8,f16f16f16,f32f16f16,s32u8u2,f16f16u2,s32s4s4,"
                                              "u8,s8,f162f16,f162f32,f16u2,u8s8,b8u2,s4,u32u8u8");
    /* the Atlas inference vector core has no cube: its table lists no mmad */
    EXPECT(aclplatformGetInstructionInfo(aiv, "Intrinsic_mmad", value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "vector core");
    expect_instruction(aiv, "Intrinsic_vexp", "float16,float32");
    select_soc("Ascend910A"); /* no [VectorCoreintrinsicDtypeMap] at all */
    expect_instruction(aic, "Intrinsic_vexp", "float16,float32");
    EXPECT(aclplatformGetInstructionInfo(aiv, "Intrinsic_vexp", value, sizeof value), ACL_ERROR_INVALID_PARAM,
           "Ascend910A");
    select_soc(NULL);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 2;
    test_default_card();
    test_other_cards();
    test_instructions();
    tu_close_device();
    return tu_finish("test_runtime_platform");
}
