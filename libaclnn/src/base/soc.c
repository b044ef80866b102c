/*
 * soc.c - the emulated product (SoC): which family the operators follow and the name
 * aclrtGetSocName reports (docs/compatibility.md, "Products").
 *
 * The process starts with ACLNN_SOC_VERSION (default: an Atlas A2 card, reported as
 * "Ascend910B3"); aclnnCpuSetSocVersion switches it later.  A name is a family name
 * (Ascend310P, Ascend910, Ascend910B, Ascend910_93, Ascend950 and its alias Ascend910_95), one of
 * those with the "_CPU" suffix libaclnn once reported (still accepted), or a long name a real
 * card reports (Ascend910B2, Ascend310P3, Ascend910A, Ascend910_9391, any Ascend950...).
 *
 * aclrtGetSocName reports a real card's name, since programs compare it with the names CANN's
 * drivers report (torch_npu's SocVersion table, AscendC's build scripts, CANN's samples refuse
 * others): a card name selected is reported as is; a family name reports the family's card in
 * family_card.  That this is libaclnn and which family it follows, a program learns from the
 * aclnnCpu* exports (aclnnCpuGetSocFamily).  As in CANN's unit-test harness
 * the family name wins: "Ascend910B" is the A2 family, not the old training chip of that long
 * name (select that one with Ascend910 or Ascend910A).
 *
 * aclnnCpuSetThreadSocVersion selects a product for the calling thread only, over the process's
 * selection: two threads can then run phase 1 for two products at once (pyaclnn's
 * `with pyaclnn.soc(...)`).  Everything phase 1 learns from the product goes into the executor,
 * so phase 2 never asks again and may run anywhere.
 *
 * An unknown ACLNN_SOC_VERSION leaves the process without a SoC: aclrtGetSocName returns NULL,
 * aclInit and every operator's phase 1 fail with a message naming the variable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_base.h"

static const char *const family_names[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = "Ascend910",       [NN_SOC_ASCEND910B] = "Ascend910B",
    [NN_SOC_ASCEND910_93] = "Ascend910_93", [NN_SOC_ASCEND950] = "Ascend950",
    [NN_SOC_ASCEND310P] = "Ascend310P",
};

/* What a family name selects reports: one of the family's cards, a name torch_npu's SocVersion
 * table and CANN's samples accept. */
static const char *const family_card[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = "Ascend910A",          [NN_SOC_ASCEND910B] = "Ascend910B3",
    [NN_SOC_ASCEND910_93] = "Ascend910_9391",   [NN_SOC_ASCEND950] = "Ascend950PR_9599",
    [NN_SOC_ASCEND310P] = "Ascend310P3",
};

/* The names libaclnn reported before it reported cards: still accepted as input. */
static const char *const family_cpu_names[NN_SOC_COUNT] = {
    [NN_SOC_ASCEND910] = "Ascend910_CPU",       [NN_SOC_ASCEND910B] = "Ascend910B_CPU",
    [NN_SOC_ASCEND910_93] = "Ascend910_93_CPU", [NN_SOC_ASCEND950] = "Ascend950_CPU",
    [NN_SOC_ASCEND310P] = "Ascend310P_CPU",
};

typedef struct soc_name {
    const char *name;
    nn_soc soc;
} soc_name;

/* Long names real cards report (aclrtGetSocName), by family; Ascend950* is matched by prefix. */
static const soc_name long_names[] = {
    {"Ascend310P1", NN_SOC_ASCEND310P},      {"Ascend310P3", NN_SOC_ASCEND310P},
    {"Ascend310P5", NN_SOC_ASCEND310P},      {"Ascend310P7", NN_SOC_ASCEND310P},
    {"Ascend910A", NN_SOC_ASCEND910},        {"Ascend910ProA", NN_SOC_ASCEND910},
    {"Ascend910PremiumA", NN_SOC_ASCEND910}, {"Ascend910ProB", NN_SOC_ASCEND910},
    {"Ascend910B1", NN_SOC_ASCEND910B},      {"Ascend910B2", NN_SOC_ASCEND910B},
    {"Ascend910B3", NN_SOC_ASCEND910B},      {"Ascend910B4", NN_SOC_ASCEND910B},
    {"Ascend910B4-1", NN_SOC_ASCEND910B},    {"Ascend910B2C", NN_SOC_ASCEND910B},
    {"Ascend910_9391", NN_SOC_ASCEND910_93}, {"Ascend910_9381", NN_SOC_ASCEND910_93},
    {"Ascend910_9372", NN_SOC_ASCEND910_93}, {"Ascend910_9392", NN_SOC_ASCEND910_93},
    {"Ascend910_9382", NN_SOC_ASCEND910_93}, {"Ascend910_9362", NN_SOC_ASCEND910_93},
};

#define NN_SOC_NAME_MAX 64

/* The current selection: family (or NN_SOC_INVALID) and reported name.  The name always points
 * at a string that lives until unload (a table entry or an interned copy), so a reader never
 * sees freed memory however the selection changes under it. */
static int g_soc = -2; /* -2: not read from the environment yet */
static const char *g_name;
static char g_bad_env[NN_SOC_NAME_MAX + 1];

/* The calling thread's own selection (aclnnCpuSetThreadSocVersion), or -1: the process's. */
static _Thread_local int t_soc = -1;
static _Thread_local const char *t_name;

/* Interned copies of long Ascend950* names (each distinct name once, kept until unload). */
typedef struct interned {
    struct interned *next;
    char name[];
} interned;
static interned *g_interned;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *intern(const char *name)
{
    for (interned *i = g_interned; i != NULL; i = i->next)
        if (strcmp(i->name, name) == 0) return i->name;
    size_t len = strlen(name);
    interned *i = malloc(sizeof *i + len + 1);
    if (i == NULL) return NULL;
    memcpy(i->name, name, len + 1);
    i->next = g_interned;
    g_interned = i;
    return i->name;
}

__attribute__((destructor)) static void soc_unload(void)
{
    while (g_interned != NULL) {
        interned *next = g_interned->next;
        free(g_interned);
        g_interned = next;
    }
}

/* Family of `name` and the name to report, or NN_SOC_INVALID. Called with g_lock held. */
static nn_soc parse(const char *name, const char **reported)
{
    if (strcmp(name, "Ascend910_95") == 0) name = "Ascend950";
    for (int f = 0; f < NN_SOC_COUNT; f++) {
        if (strcmp(name, family_names[f]) == 0 || strcmp(name, family_cpu_names[f]) == 0) {
            *reported = family_card[f];
            return (nn_soc)f;
        }
    }
    for (size_t i = 0; i < sizeof long_names / sizeof long_names[0]; i++) {
        if (strcmp(name, long_names[i].name) == 0) {
            *reported = long_names[i].name;
            return long_names[i].soc;
        }
    }
    if (strncmp(name, "Ascend950", 9) == 0 && strlen(name) <= NN_SOC_NAME_MAX) {
        *reported = intern(name);
        return *reported != NULL ? NN_SOC_ASCEND950 : NN_SOC_INVALID;
    }
    return NN_SOC_INVALID;
}

static void load_env_locked(void)
{
    if (__atomic_load_n(&g_soc, __ATOMIC_ACQUIRE) != -2) return;
    const char *env = getenv("ACLNN_SOC_VERSION");
    const char *reported = family_card[NN_SOC_ASCEND910B];
    nn_soc soc = NN_SOC_ASCEND910B;
    if (env != NULL && env[0] != '\0') {
        soc = parse(env, &reported);
        if (soc == NN_SOC_INVALID) {
            snprintf(g_bad_env, sizeof g_bad_env, "%s", env);
            reported = NULL;
            nn_log(NN_LOG_ERROR, "ACLNN_SOC_VERSION=\"%s\" is not a SoC libaclnn emulates (%s).", g_bad_env,
                   NN_SOC_KNOWN_NAMES);
        }
    }
    __atomic_store_n(&g_name, reported, __ATOMIC_RELEASE);
    __atomic_store_n(&g_soc, (int)soc, __ATOMIC_RELEASE);
}

nn_soc nn_soc_current(void)
{
    if (t_soc >= 0) return (nn_soc)t_soc;
    int soc = __atomic_load_n(&g_soc, __ATOMIC_ACQUIRE);
    if (soc == -2) {
        pthread_mutex_lock(&g_lock);
        load_env_locked();
        pthread_mutex_unlock(&g_lock);
        soc = __atomic_load_n(&g_soc, __ATOMIC_ACQUIRE);
    }
    return (nn_soc)soc;
}

const char *nn_soc_reported_name(void)
{
    if (t_soc >= 0) return t_name;
    (void)nn_soc_current();
    return __atomic_load_n(&g_name, __ATOMIC_ACQUIRE);
}

nn_soc nn_soc_family_of(const char *name)
{
    const char *reported;
    pthread_mutex_lock(&g_lock);
    nn_soc soc = parse(name, &reported);
    pthread_mutex_unlock(&g_lock);
    return soc;
}

const char *nn_soc_family_name(nn_soc soc)
{
    return soc >= 0 && soc < NN_SOC_COUNT ? family_names[soc] : "(unknown SoC)";
}

int nn_soc_check(const char *fn)
{
    if (nn_soc_current() != NN_SOC_INVALID) return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: ACLNN_SOC_VERSION=\"%s\" is not a SoC libaclnn emulates (%s).", fn,
                    g_bad_env, NN_SOC_KNOWN_NAMES);
}

/* ---- overflow mode ---------------------------------------------------------------------------- */

/* The device's mode as aclrtSetDeviceSatMode left it (false: INF/NaN, the A2/A3 default).  One
 * flag for the process: CANN's runtime keeps the mode per process too (Runtime::SetSatMode). */
static bool g_device_saturation;

bool nn_overflow_saturation_only(void)
{
    const nn_soc soc = nn_soc_current();
    return soc == NN_SOC_ASCEND910 || soc == NN_SOC_ASCEND310P;
}

/* CANN runtime's supportOverflowMode per chip (runtime:src/runtime/config/<chip>/dev_info_reg.cc):
 * cloud (Ascend910) and dc (Ascend310P) saturation only, 910_B_93 both, 950 INF/NaN only. */
bool nn_overflow_mode_supported(bool saturation)
{
    if (nn_overflow_saturation_only()) return saturation;
    return saturation ? nn_soc_current() != NN_SOC_ASCEND950 : true;
}

void nn_overflow_set_device_saturation(bool saturation)
{
    __atomic_store_n(&g_device_saturation, saturation, __ATOMIC_RELEASE);
}

bool nn_overflow_device_saturation(void) { return __atomic_load_n(&g_device_saturation, __ATOMIC_ACQUIRE); }

/* A device left in saturation on A2 keeps INF/NaN results once aclnnCpuSetSocVersion moves to
 * Ascend950, which has no saturation mode. */
bool nn_overflow_saturates(void)
{
    return nn_overflow_saturation_only() || (nn_overflow_device_saturation() && nn_overflow_mode_supported(true));
}

NN_EXPORT aclnnStatus aclnnCpuSetSocVersion(const char *socName)
{
    pthread_mutex_lock(&g_lock);
    load_env_locked();
    const char *reported = family_card[NN_SOC_ASCEND910B];
    nn_soc soc = NN_SOC_ASCEND910B;
    if (socName == NULL || socName[0] == '\0') {
        /* back to the process default */
        __atomic_store_n(&g_soc, -2, __ATOMIC_RELEASE);
        load_env_locked();
        soc = (nn_soc)__atomic_load_n(&g_soc, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&g_lock);
        return soc == NN_SOC_INVALID ? (aclnnStatus)nn_soc_check("aclnnCpuSetSocVersion") : ACLNN_SUCCESS;
    }
    soc = parse(socName, &reported);
    if (soc != NN_SOC_INVALID) {
        __atomic_store_n(&g_name, reported, __ATOMIC_RELEASE);
        __atomic_store_n(&g_soc, (int)soc, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
    if (soc == NN_SOC_INVALID) {
        char shown[NN_SOC_NAME_MAX + 1];
        snprintf(shown, sizeof shown, "%s", socName);
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "aclnnCpuSetSocVersion: \"%s\" is not a SoC libaclnn emulates (%s); the SoC is unchanged.",
                        shown, NN_SOC_KNOWN_NAMES);
    }
    nn_log(NN_LOG_INFO, "aclnnCpuSetSocVersion: now emulating %s (family %s).", reported, family_names[soc]);
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclnnCpuSetThreadSocVersion(const char *socName)
{
    if (socName == NULL || socName[0] == '\0') {
        t_soc = -1; /* follow the process's selection again */
        t_name = NULL;
        return ACLNN_SUCCESS;
    }
    const char *reported = NULL;
    pthread_mutex_lock(&g_lock); /* parse may intern a name */
    const nn_soc soc = parse(socName, &reported);
    pthread_mutex_unlock(&g_lock);
    if (soc == NN_SOC_INVALID) {
        char shown[NN_SOC_NAME_MAX + 1];
        snprintf(shown, sizeof shown, "%s", socName);
        return nn_error(ACLNN_ERR_PARAM_INVALID,
                        "aclnnCpuSetThreadSocVersion: \"%s\" is not a SoC libaclnn emulates (%s); the thread's SoC is "
                        "unchanged.",
                        shown, NN_SOC_KNOWN_NAMES);
    }
    t_soc = (int)soc;
    t_name = reported;
    return ACLNN_SUCCESS;
}

NN_EXPORT const char *aclnnCpuGetSocFamily(void)
{
    const nn_soc soc = nn_soc_current();
    return soc == NN_SOC_INVALID ? NULL : family_names[soc];
}
