/*
 * test_runtime_model_ri_info.c - aclrtCacheLastTaskOpInfo / aclrtCacheLastTaskExtendInfo
 * (model_ri_info.c), after CANN's runtime (api_impl.cc, api_error.cc, capture_model.cc):
 *   - the acl layer's checks (operator info: infoPtr NULL or infoSize 0 -> 100000) and the
 *     runtime's (over 64 KiB of operator info, or extended info NULL / empty -> 107000);
 *   - the thread's last task must have gone to a live model: after a task queued for running,
 *     and after the model is destroyed, both answer 507000;
 *   - operator information needs the capture open with ACL_STREAM_ATTR_CACHE_OP_INFO on:
 *     507000 before the switch is set and after aclmdlRICaptureEnd; extended information goes
 *     with a captured task either way, and more than 4096 bytes is accepted (the first 4096 kept);
 *   - aclmdlRIDebugJsonPrint shows a task's extended information as its "ExtendInfo" (CANN's
 *     Stream::TraceEventToJson key), JSON-escaped;
 *   - the captured model still runs its task (a memset whose bytes are read back), and the
 *     attached copies are freed with the model (valgrind: no leak);
 *   - Ascend910 (no ACL graphs in CANN) -> 207000.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"

#include "test_util.h"

#define OP_INFO_MAX (64 * 1024)

static void set_cache_switch(aclrtStream stream, uint32_t on)
{
    aclrtStreamAttrValue value;
    memset(&value, 0, sizeof value);
    value.cacheOpInfoSwitch = on;
    EXPECT_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_CACHE_OP_INFO, &value));
}

/* The text of the model's JSON dump (malloc'd), or NULL. */
static char *json_of(aclmdlRI model)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_model_ri_info_%d.json", (int)getpid());
    EXPECT_OK(aclmdlRIDebugJsonPrint(model, path, 0));
    FILE *f = fopen(path, "rb");
    char *text = f != NULL ? calloc(1, 16384) : NULL;
    if (text != NULL)
        (void)fread(text, 1, 16383, f);
    if (f != NULL)
        fclose(f);
    remove(path);
    return text;
}

/* Whether the dump's only task has "ExtendInfo": "<want>". */
static int json_has_extend(aclmdlRI model, const char *want)
{
    char *text = json_of(model);
    const char *key = text != NULL ? strstr(text, "\"ExtendInfo\": \"") : NULL;
    int ok = key != NULL && strncmp(key + 15, want, strlen(want)) == 0 && key[15 + strlen(want)] == '"';
    free(text);
    return ok;
}

static void test_arguments(const unsigned char *info)
{
    EXPECT(aclrtCacheLastTaskOpInfo(NULL, 4), ACL_ERROR_INVALID_PARAM, "infoPtr");
    EXPECT(aclrtCacheLastTaskOpInfo(info, 0), ACL_ERROR_INVALID_PARAM, "infoSize");
    EXPECT(aclrtCacheLastTaskOpInfo(info, OP_INFO_MAX + 1), ACL_ERROR_RT_PARAM_INVALID, "infoSize");
    EXPECT(aclrtCacheLastTaskExtendInfo(NULL, 4), ACL_ERROR_RT_PARAM_INVALID, "extendInfoPtr");
    EXPECT(aclrtCacheLastTaskExtendInfo("x", 0), ACL_ERROR_RT_PARAM_INVALID, "infoSize");
}

static void test_capture(const unsigned char *info, const char *extend, void *dev)
{
    /* the thread's last task runs on a stream: no model to keep anything */
    EXPECT_OK(aclrtMemsetAsync(dev, 64, 0, 64, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    EXPECT(aclrtCacheLastTaskOpInfo(info, 16), ACL_ERROR_RT_INTERNAL_ERROR, "last task");
    EXPECT(aclrtCacheLastTaskExtendInfo(extend, 16), ACL_ERROR_RT_INTERNAL_ERROR, "last task");

    aclrtStream recorder = NULL;
    aclmdlRI model = NULL;
    EXPECT_OK(aclrtCreateStream(&recorder));
    EXPECT_OK(aclmdlRICaptureBegin(recorder, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(aclrtMemsetAsync(dev, 64, 0x5a, 64, recorder));
    EXPECT(aclrtCacheLastTaskOpInfo(info, 16), ACL_ERROR_RT_INTERNAL_ERROR, "ACL_STREAM_ATTR_CACHE_OP_INFO");
    EXPECT_OK(aclrtCacheLastTaskExtendInfo(extend, 32));
    set_cache_switch(recorder, 1);
    EXPECT_OK(aclrtCacheLastTaskOpInfo(info, 16));
    EXPECT_OK(aclrtCacheLastTaskOpInfo(info, OP_INFO_MAX)); /* replaces the first */
    EXPECT_OK(aclrtCacheLastTaskExtendInfo(extend, 5000));  /* the first 4096 bytes kept */
    set_cache_switch(recorder, 0);
    EXPECT(aclrtCacheLastTaskOpInfo(info, 16), ACL_ERROR_RT_INTERNAL_ERROR, "ACL_STREAM_ATTR_CACHE_OP_INFO");
    set_cache_switch(recorder, 1);
    EXPECT_OK(aclmdlRICaptureEnd(recorder, &model));
    /* the capture is over (CANN clears the model's switch): operator info is refused, extended
     * info still goes with the task */
    EXPECT(aclrtCacheLastTaskOpInfo(info, 16), ACL_ERROR_RT_INTERNAL_ERROR, "ACL_STREAM_ATTR_CACHE_OP_INFO");
    char kept[4097];
    memset(kept, 'e', 4096);
    kept[4096] = '\0';
    CHECK(json_has_extend(model, kept), "the dump lacks the first 4096 bytes of the extended information");
    EXPECT_OK(aclrtCacheLastTaskExtendInfo("op \"x\"\n", 7));
    CHECK(json_has_extend(model, "op \\\"x\\\"\\u000a"), "the dump lacks the escaped extended information");

    EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    unsigned char back[64];
    EXPECT_OK(aclrtMemcpy(back, sizeof back, dev, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(back[0] == 0x5a && back[63] == 0x5a, "the captured memset wrote %#x..%#x", back[0], back[63]);

    EXPECT_OK(aclmdlRIDestroy(model));
    EXPECT(aclrtCacheLastTaskExtendInfo(extend, 8), ACL_ERROR_RT_INTERNAL_ERROR, "live");
    EXPECT(aclrtCacheLastTaskOpInfo(info, 8), ACL_ERROR_RT_INTERNAL_ERROR, "live");
    EXPECT_OK(aclrtDestroyStream(recorder));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 2;
    unsigned char *info = malloc(OP_INFO_MAX + 1);
    char *extend = malloc(5000);
    void *dev = NULL;
    CHECK(info != NULL && extend != NULL, "out of host memory");
    if (info == NULL || extend == NULL)
        return 1;
    for (size_t i = 0; i <= OP_INFO_MAX; i++)
        info[i] = (unsigned char)i;
    memset(extend, 'e', 5000);
    EXPECT_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));

    test_arguments(info);
    test_capture(info, extend, dev);
    CHECK(aclnnCpuSetSocVersion("Ascend910") == 0, "cannot select Ascend910");
    EXPECT(aclrtCacheLastTaskOpInfo(info, 8), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910");
    EXPECT(aclrtCacheLastTaskExtendInfo(extend, 8), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910");
    CHECK(aclnnCpuSetSocVersion(NULL) == 0, "cannot restore the default product");

    EXPECT_OK(aclrtFree(dev));
    free(info);
    free(extend);
    tu_close_device();
    return tu_finish("test_runtime_model_ri_info");
}
