/*
 * test_util.h - scaffolding shared by the standalone C test programs in tests/c (not a test
 * itself: tests/support.py builds every tests/c/test_*.c* with -I tests/c, so each program can
 * include this header and still compile as one file).
 *
 *   CHECK(cond, fmt, ...)        counts a failure and prints file:line, the condition and the
 *                                message (the first TU_MAX_REPORTED failures only)
 *   EXPECT(call, code, needle)   runs a runtime/meta call, checks its status; for a non-zero
 *   EXPECT_OK(call)              `code` the recent-error message must also mention `needle`
 *   EXPECT_MSG(ctx, words...)    the recent-error message exists and names every word
 *   EXPECT_MSG_CLEARED(...)      the same, and the message is gone after that read
 *   tu_open_device / tu_close_device / tu_finish   aclInit + device 0 + one stream (tu_stream),
 *                                the reverse, and the exit status with a one-line summary
 *   tu_tensor, tu_make_tensor, tu_copy_back, tu_free_tensor, tu_run   device tensors made from
 *                                host data, copied back, released; phase 2 + synchronize
 *   tu_sleep_ms, tu_now_ms       sleeping, and the monotonic clock in ms (POSIX builds)
 *   tu_dev_byte(ptr, i)          byte i of device memory, read with aclrtMemcpy (device memory is
 *                                not host memory: ACLNN_CHECK=memcheck stops a direct read)
 */
#ifndef ACLNN_TESTS_TEST_UTIL_H
#define ACLNN_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"

#ifndef TU_MAX_REPORTED
#define TU_MAX_REPORTED 50 /* a broken kernel fails thousands of checks; the first ones tell */
#endif

static int failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (failures++ < TU_MAX_REPORTED) {                                                    \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Runs `call`, expects status `code`; for a failure also expects a recent-error message that
 * names `needle` (the function or parameter). The error slot is emptied first. */
#define EXPECT(call, code, needle)                                                                 \
    do {                                                                                           \
        (void)aclGetRecentErrMsg();                                                                \
        int expect_ret_ = (int)(call);                                                             \
        CHECK(expect_ret_ == (int)(code), "%s returned %d, expected %d", #call, expect_ret_,       \
              (int)(code));                                                                        \
        if ((int)(code) != 0) {                                                                    \
            const char *expect_msg_ = aclGetRecentErrMsg();                                        \
            CHECK(expect_msg_ != NULL && strstr(expect_msg_, (needle)) != NULL,                    \
                  "%s: message should mention \"%s\", got \"%s\"", #call, (needle),                \
                  expect_msg_ ? expect_msg_ : "(null)");                                           \
        }                                                                                          \
    } while (0)

#define EXPECT_OK(call) EXPECT(call, 0, "")

/* Takes the recent error and checks it names every word of the NULL-terminated `words`; with
 * `want_cleared`, also that reading it emptied the slot. */
static inline void tu_expect_message(const char *context, int want_cleared, const char *const *words)
{
    const char *msg = aclGetRecentErrMsg();
    CHECK(msg != NULL, "%s: no recent error message", context);
    if (msg == NULL)
        return;
    for (const char *const *w = words; *w; w++)
        CHECK(strstr(msg, *w) != NULL, "%s: message lacks '%s': %s", context, *w, msg);
    if (want_cleared)
        CHECK(aclGetRecentErrMsg() == NULL, "%s: message not cleared on read", context);
}

#define EXPECT_MSG(context, ...)                                                                   \
    do {                                                                                           \
        const char *const words_[] = {__VA_ARGS__, NULL};                                          \
        tu_expect_message(context, 0, words_);                                                     \
    } while (0)

#define EXPECT_MSG_CLEARED(context, ...)                                                           \
    do {                                                                                           \
        const char *const words_[] = {__VA_ARGS__, NULL};                                          \
        tu_expect_message(context, 1, words_);                                                     \
    } while (0)

#if defined(_POSIX_C_SOURCE) || defined(_GNU_SOURCE) /* nanosleep is POSIX, not C11 */
static inline void tu_sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

static inline void tu_sleep_ms(int ms)
{
    tu_sleep_us((long)ms * 1000L);
}

/* Milliseconds on the monotonic clock (for measuring how long a call waited). */
static inline double tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
#endif

/* ---- runtime set-up as in CANN's samples: aclInit, device 0, one stream ------------------- */
static aclrtStream tu_stream;

static inline unsigned tu_dev_byte(const void *device, size_t index)
{
    unsigned char byte = 0;
    if (aclrtMemcpy(&byte, 1, (const unsigned char *)device + index, 1, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
        fprintf(stderr, "tu_dev_byte: %s\n", aclGetRecentErrMsg());
    return byte;
}

static inline int tu_open_device(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
        aclrtCreateStream(&tu_stream) != ACL_SUCCESS) {
        fprintf(stderr, "runtime setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    return 0;
}

static inline void tu_close_device(void)
{
    aclrtDestroyStream(tu_stream);
    aclrtResetDevice(0);
    aclFinalize();
}

/* The program's exit status: 0 when every CHECK passed. */
static inline int tu_finish(const char *program)
{
    if (failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", program, failures);
        return 1;
    }
    printf("%s: all checks passed\n", program);
    return 0;
}

/* ---- device tensors ----------------------------------------------------------------------- */
static inline int64_t tu_numel(const int64_t *shape, int nd)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= shape[i];
    return n;
}

typedef struct {
    void *dev;
    aclTensor *t;
    size_t bytes;
} tu_tensor;

/* `storage` elements of `elem` bytes on the device (copied from `host` unless NULL), viewed
 * through shape/strides/offset (strides NULL = contiguous) with a 1-D storage shape. */
static inline tu_tensor tu_make_tensor(const void *host, size_t storage, size_t elem, const int64_t *shape,
                                       int nd, const int64_t *strides, int64_t offset, aclDataType dtype,
                                       aclFormat format)
{
    tu_tensor d = {NULL, NULL, storage * elem};
    int64_t contiguous[32] = {1};
    int64_t step = 1;
    for (int i = nd - 1; i >= 0; i--) {
        contiguous[i] = step;
        step *= shape[i];
    }
    if (aclrtMalloc(&d.dev, d.bytes ? d.bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        fprintf(stderr, "aclrtMalloc of %zu bytes failed\n", d.bytes);
        exit(1);
    }
    if (host != NULL && d.bytes > 0)
        aclrtMemcpy(d.dev, d.bytes, host, d.bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t storage_shape = (int64_t)storage;
    d.t = aclCreateTensor(shape, (uint64_t)nd, dtype, strides ? strides : contiguous, offset, format,
                          &storage_shape, 1, d.dev);
    return d;
}

/* A contiguous fp32 ND tensor (the common case). */
static inline tu_tensor tu_make_f32(const float *host, size_t storage, const int64_t *shape, int nd,
                                    const int64_t *strides)
{
    return tu_make_tensor(host, storage, sizeof(float), shape, nd, strides, 0, ACL_FLOAT, ACL_FORMAT_ND);
}

/* Copies the whole storage back to `host`; returns 0 on success. */
static inline int tu_copy_back(const tu_tensor *d, void *host)
{
    if (d->bytes == 0)
        return 0;
    return aclrtMemcpy(host, d->bytes, d->dev, d->bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS;
}

static inline void tu_free_tensor(tu_tensor *d)
{
    aclDestroyTensor(d->t);
    aclrtFree(d->dev);
    d->t = NULL;
    d->dev = NULL;
}

typedef aclnnStatus (*tu_phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* Phase 2 on tu_stream with a workspace of the planned size, then synchronize. */
static inline int tu_run(tu_phase2_fn phase2, uint64_t ws_size, aclOpExecutor *ex)
{
    void *ws = NULL;
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return -1;
    int ret = phase2(ws, ws_size, ex, tu_stream);
    if (ret == 0)
        ret = aclrtSynchronizeStream(tu_stream);
    if (ws != NULL)
        aclrtFree(ws);
    return ret;
}

#endif /* ACLNN_TESTS_TEST_UTIL_H */
