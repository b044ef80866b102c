/*
 * test_runtime_init.c - aclInit/aclFinalize codes, versions, run mode, SoC name, last error,
 * system options (process and context scope) and aclAppLog.  Expected values are CANN's
 * (docs/runtime.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"

#include "test_util.h"

/* CANN marks some of the functions checked here deprecated (aclrtGetVersion, aclrtQueryEvent,
 * aclsysGetCANNVersion): they still exist and are still tested. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot create %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_init_finalize(void)
{
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
    EXPECT(aclInit("/nonexistent/dir/acl.json"), ACL_ERROR_INVALID_FILE, "aclInit");
    EXPECT_OK(aclInit(NULL));
    EXPECT(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
    EXPECT(aclInit(""), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
    EXPECT_OK(aclFinalize()); /* one call finalizes whatever the count */
    EXPECT(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");

    /* Re-init with a config file equivalent to "no config" works; a different one does not. */
    char empty_path[] = "/tmp/test_runtime_init_empty_XXXXXX";
    char other_path[] = "/tmp/test_runtime_init_other_XXXXXX";
    int fd1 = mkstemp(empty_path), fd2 = mkstemp(other_path);
    CHECK(fd1 >= 0 && fd2 >= 0, "mkstemp failed");
    if (fd1 >= 0)
        close(fd1);
    if (fd2 >= 0)
        close(fd2);
    write_file(empty_path, "{ }\n");
    write_file(other_path, "{\"dump\": {\"dump_path\": \"/tmp\"}}\n");
    EXPECT_OK(aclInit(empty_path));
    EXPECT_OK(aclFinalize());
    EXPECT(aclInit(other_path), ACL_ERROR_INVALID_PARAM, "aclInit");
    unlink(empty_path);
    unlink(other_path);

    /* aclFinalizeReference counts down. */
    uint64_t count = 99;
    EXPECT_OK(aclInit(NULL));
    EXPECT(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
    EXPECT_OK(aclFinalizeReference(&count));
    CHECK(count == 1, "refCount after first aclFinalizeReference = %llu, expected 1",
          (unsigned long long)count);
    EXPECT_OK(aclFinalizeReference(&count));
    CHECK(count == 0, "refCount = %llu, expected 0", (unsigned long long)count);
    EXPECT(aclFinalizeReference(&count), ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference");
    EXPECT(aclFinalizeReference(NULL), ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference");
}

static void test_versions_and_modes(void)
{
    int32_t major = -1, minor = -1, patch = -1;
    EXPECT_OK(aclrtGetVersion(&major, &minor, &patch));
    CHECK(major == 1 && minor == 17 && patch == 0, "version %d.%d.%d, expected 1.17.0", major,
          minor, patch);
    EXPECT(aclrtGetVersion(NULL, &minor, &patch), ACL_ERROR_INVALID_PARAM, "majorVersion");
    EXPECT(aclrtGetVersion(&major, NULL, &patch), ACL_ERROR_INVALID_PARAM, "minorVersion");
    EXPECT(aclrtGetVersion(&major, &minor, NULL), ACL_ERROR_INVALID_PARAM, "patchVersion");

    aclrtRunMode mode = ACL_DEVICE;
    EXPECT_OK(aclrtGetRunMode(&mode));
    CHECK(mode == ACL_HOST, "run mode %d, expected ACL_HOST", (int)mode);
    EXPECT(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM, "runMode");

    const char *soc = aclrtGetSocName();
    CHECK(soc != NULL && strncmp(soc, "Ascend", 6) == 0, "SoC name \"%s\"", soc ? soc : "(null)");

    char version[128];
    int32_t number;
    EXPECT(aclsysGetVersionStr((char *)"runtime", NULL), ACL_ERROR_INVALID_PARAM, "versionStr");
    EXPECT(aclsysGetVersionNum(NULL, &number), ACL_ERROR_INVALID_PARAM, "pkgName");
    EXPECT(aclsysGetVersionStr((char *)"driver", version), ACL_ERROR_INVALID_FILE,
           "aclsysGetVersionStr");
}

static void test_last_error(void)
{
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    CHECK(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == 0, "last error should be clear");
    EXPECT(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM, "runMode");
    CHECK(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM, "peek");
    CHECK(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM, "peek keeps it");
    CHECK(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM, "get returns it");
    CHECK(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == 0, "get clears it");
    EXPECT(aclrtGetLastError((aclrtLastErrLevel)1), ACL_ERROR_INVALID_PARAM, "level");
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
}

static void test_sys_param_opt(void)
{
    int64_t value = -1;
    EXPECT(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
           "aclrtGetSysParamOpt");
    EXPECT_OK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
    EXPECT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    CHECK(value == 1, "deterministic = %lld", (long long)value);
    EXPECT_OK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 2)); /* last set wins */
    EXPECT_OK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
    CHECK(value == 2, "deterministic = %lld", (long long)value);
    EXPECT_OK(aclrtSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1)); /* 0..3 accepted */
    EXPECT(aclrtSetSysParamOpt((aclSysParamOpt)4, 1), ACL_ERROR_INVALID_PARAM, "opt");
    EXPECT(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL), ACL_ERROR_INVALID_PARAM, "value");

    /* Context scope: needs a context, accepts 0..2 only. */
    EXPECT(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), ACL_ERROR_RT_CONTEXT_NULL,
           "aclrtCtxSetSysParamOpt");
    EXPECT_OK(aclrtSetDevice(0));
    EXPECT(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value),
           ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, "aclrtCtxGetSysParamOpt");
    EXPECT_OK(aclrtCtxSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 1));
    EXPECT_OK(aclrtCtxGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, &value));
    CHECK(value == 1, "ctx option = %lld", (long long)value);
    EXPECT(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1), ACL_ERROR_INVALID_PARAM,
           "opt");
    EXPECT(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT_OK(aclrtResetDevice(0));
}

int main(void)
{
    test_init_finalize();
    test_versions_and_modes();
    test_last_error();
    test_sys_param_opt();
    ACL_APP_LOG(ACL_INFO, "test_runtime_init %s", "log line"); /* must not crash */
    EXPECT_OK(aclInit(NULL));
    EXPECT_OK(aclFinalize());
    return tu_finish("test_runtime_init");
}
