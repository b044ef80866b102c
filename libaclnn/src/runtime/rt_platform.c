/*
 * rt_platform.c - acl/acl_platform.h: what CANN's platform info says of the emulated card.
 *
 * CANN answers from the card's platform configuration, the ini file of the SoC the device reports
 * (runtime:src/platform/acl_platform.cpp reads section/key pairs of
 * runtime:src/platform/platform_config/cann/<SoC>.ini).  libaclnn's device is the CPU, but the
 * card it emulates is chosen (ACLNN_SOC_VERSION, aclnnCpuSetSocVersion; aclrtGetSocName reports
 * it), so aclplatformGetDeviceInfo answers with that card's values, copied from its ini file:
 * a program that sizes its work by the card's UB or L1 gets the numbers it would on the card.
 * What the CPU itself has (its cores, cache and RAM) is what aclrtGetDeviceInfo reports
 * (rt_device_info.c).  A selected Ascend950 name without a row here answers with
 * Ascend950PR_9599's values (the family's default card) and its own SoC name.
 *
 * aclplatformGetInstructionInfo answers with the dtypes the family's ini lists for an instruction
 * on the AI Core or the vector core (rt_platform_intrinsics.c), joined by commas as CANN joins them.
 *
 * Checks and statuses as acl_platform.cpp: an infoType outside the table, a NULL value or a
 * maxLen of 0 -> 100000; a key the card's ini lacks or leaves empty -> 100000; a value longer
 * than maxLen - 1 -> 100000; no platform info (ACLNN_SOC_VERSION names no known SoC) -> 500000.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl_platform.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define DEV_INFO_COUNT (ACL_PLATFORM_MEMORY_TYPE + 1)

/* The ini section/key each aclplatformDevInfo reads (acl_platform.cpp's table), for messages. */
static const char *const dev_info_keys[DEV_INFO_COUNT] = {
    "SoCInfo/ai_core_cnt",    "AICoreSpec/ub_size",   "SoCInfo/cube_core_cnt", "SoCInfo/vector_core_cnt",
    "SoCInfo/l2_size",        "SoCInfo/memory_size",  "AICoreSpec/cube_freq",  "VectorCoreSpec/vec_freq",
    "AICoreSpec/bt_size",     "AICoreSpec/l0_a_size", "AICoreSpec/l0_b_size",  "AICoreSpec/l0_c_size",
    "AICoreSpec/l1_size",     "version/SoC_version",  "version/AIC_version",   "version/NpuArch",
    "SoCInfo/memory_type",
};

typedef struct card_info {
    const char *soc;
    const char *values[DEV_INFO_COUNT]; /* by aclplatformDevInfo; NULL: the ini has no value */
} card_info;

/* The cards soc.c accepts by name, with runtime:src/platform/platform_config/cann/<soc>.ini's
 * values (cann-dev/ for Ascend950PR_9599). */
static const card_info cards[] = {
    {"Ascend910A", {"32", "262144", NULL, "0", "33554432", NULL, "1000", NULL, NULL,
              "65536", "65536", "262144", "1048576", "Ascend910A", "AIC-C-100", "1001", NULL}},
    {"Ascend910ProA", {"32", "262144", NULL, "0", "33554432", NULL, "1100", NULL, NULL,
              "65536", "65536", "262144", "1048576", "Ascend910ProA", "AIC-C-100", "1001", NULL}},
    {"Ascend910PremiumA", {"32", "262144", NULL, "0", "33554432", NULL, "1220", NULL, NULL,
              "65536", "65536", "262144", "1048576", "Ascend910PremiumA", "AIC-C-100", "1001", NULL}},
    {"Ascend910ProB", {"30", "262144", NULL, "0", "33554432", NULL, "1150", NULL, NULL,
              "65536", "65536", "262144", "1048576", "Ascend910ProB", "AIC-C-100", "1001", NULL}},
    {"Ascend910B1", {"24", "196608", "24", "48", "201326592", "68719476736", "1850", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B1", "AIC-C-220", "2201", NULL}},
    {"Ascend910B2", {"24", "196608", "24", "48", "201326592", "68719476736", "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B2", "AIC-C-220", "2201", NULL}},
    {"Ascend910B3", {"20", "196608", "20", "40", "201326592", "68719476736", "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B3", "AIC-C-220", "2201", NULL}},
    {"Ascend910B4", {"20", "196608", "20", "40", "100663296", "34359738368", "1500", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B4", "AIC-C-220", "2201", NULL}},
    {"Ascend910B4-1", {"20", "196608", "20", "40", "176160768", "34359738368", "1500", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B4-1", "AIC-C-220", "2201", NULL}},
    {"Ascend910B2C", {"24", "196608", "24", "48", "201326592", NULL, "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910B2C", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9391", {"24", "196608", "24", "48", "201326592", "68719476736", "1850", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9391", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9381", {"24", "196608", "24", "48", "201326592", "68719476736", "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9381", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9372", {"20", "196608", "20", "40", "201326592", "68719476736", "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9372", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9392", {"24", "196608", "24", "48", "201326592", "68719476736", "1850", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9392", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9382", {"24", "196608", "24", "48", "201326592", "68719476736", "1800", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9382", "AIC-C-220", "2201", NULL}},
    {"Ascend910_9362", {"20", "196608", "20", "40", "176160768", "68719476736", "1500", NULL, "1024",
              "65536", "65536", "131072", "524288", "Ascend910_9362", "AIC-C-220", "2201", NULL}},
    {"Ascend310P1", {"10", "262144", NULL, "8", "16777216", "24000000000", "1060", "1000", NULL,
              "65536", "65536", "262144", "1048576", "Ascend310P1", "AIC-M-200", "2002", "0"}},
    {"Ascend310P3", {"8", "262144", NULL, "7", "16777216", "24000000000", "1060", "1000", NULL,
              "65536", "65536", "262144", "1048576", "Ascend310P3", "AIC-M-200", "2002", "0"}},
    {"Ascend310P5", {"8", "262144", NULL, "7", "16777216", "24000000000", "800", "1000", NULL,
              "65536", "65536", "262144", "1048576", "Ascend310P5", "AIC-M-200", "2002", "0"}},
    {"Ascend310P7", {"8", "262144", NULL, "7", "16777216", "24000000000", "550", "1000", NULL,
              "65536", "65536", "262144", "1048576", "Ascend310P7", "AIC-M-200", "2002", "0"}},
    {"Ascend950PR_9599", {"36", "253952", "36", "72", "134217728", "137438953472", "1800", "1800", "4096",
              "65536", "65536", "262144", "524288", "Ascend950PR_9599", "AIC-C-310", "3510", "0"}},
};

#define CARD_COUNT (sizeof cards / sizeof cards[0])

/* The row of the reported SoC, else its family's default card's; NULL for none. */
static const card_info *current_card(const char *soc)
{
    for (size_t i = 0; i < CARD_COUNT; i++)
        if (strcmp(cards[i].soc, soc) == 0)
            return &cards[i];
    if (nn_soc_family_of(soc) != NN_SOC_ASCEND950)
        return NULL;
    for (size_t i = 0; i < CARD_COUNT; i++)
        if (nn_soc_family_of(cards[i].soc) == NN_SOC_ASCEND950)
            return &cards[i];
    return NULL;
}

/* Copies `answer` into value[maxLen] as acl_platform.cpp's CopyToBuffer: it must fit whole. */
static aclError copy_answer(const char *api, const char *what, const char *answer, char *value, uint32_t maxLen)
{
    size_t need = strlen(answer) + 1;
    if (need > maxLen)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: maxLen %u is too small for %s: need %zu bytes.", api,
                           maxLen, what, need);
    memcpy(value, answer, need);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclplatformGetDeviceInfo(aclplatformDevInfo infoType, char *value, uint32_t maxLen)
{
    const char *api = "aclplatformGetDeviceInfo";
    if ((uint32_t)infoType >= DEV_INFO_COUNT)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: infoType %u is not an aclplatformDevInfo (0..%d).", api,
                           (uint32_t)infoType, DEV_INFO_COUNT - 1);
    if (value == NULL || maxLen == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           value == NULL ? "value is NULL" : "maxLen is 0");
    const char *soc = nn_soc_reported_name();
    const card_info *card = soc != NULL ? current_card(soc) : NULL;
    if (card == NULL)
        return nn_rt_error(ACL_ERROR_INTERNAL_ERROR, "%s: no platform info for the selected SoC (%s).", api,
                           soc != NULL ? soc : "ACLNN_SOC_VERSION names no known SoC");
    const char *answer = infoType == ACL_PLATFORM_SOC_VERSION ? soc : card->values[infoType];
    if (answer == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: infoType %u: key [%s] is not in the platform info of %s.",
                           api, (uint32_t)infoType, dev_info_keys[infoType], soc);
    char what[96];
    snprintf(what, sizeof what, "[%s] of %s", dev_info_keys[infoType], soc);
    return copy_answer(api, what, answer, value, maxLen);
}

ACL_FUNC_VISIBILITY aclError aclplatformGetInstructionInfo(aclplatformCoreType type, const char *instruction,
                                                           char *value, uint32_t maxLen)
{
    const char *api = "aclplatformGetInstructionInfo";
    if (type != ACL_PLATFORM_CORE_TYPE_AI_CORE && type != ACL_PLATFORM_CORE_TYPE_VECTOR_CORE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: type %d is not an aclplatformCoreType (0 AI Core, 1 vector "
                           "core).", api, (int)type);
    if (instruction == NULL || value == NULL || maxLen == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                           instruction == NULL ? "instruction is NULL"
                           : value == NULL     ? "value is NULL"
                                               : "maxLen is 0");
    const char *soc = nn_soc_reported_name();
    if (soc == NULL)
        return nn_rt_error(ACL_ERROR_INTERNAL_ERROR, "%s: no platform info: ACLNN_SOC_VERSION names no known SoC.",
                           api);
    bool vector_core = type == ACL_PLATFORM_CORE_TYPE_VECTOR_CORE;
    const char *dtypes = nn_platform_intrinsic_dtypes(nn_soc_family_of(soc), vector_core, instruction);
    if (dtypes == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: instruction [%s] is not in the %s instruction table of %s.",
                           api, instruction, vector_core ? "vector core" : "AI Core", soc);
    char what[96];
    snprintf(what, sizeof what, "[%s] of %s", instruction, soc);
    return copy_answer(api, what, dtypes, value, maxLen);
}
