/*
 * securec.c - the bounds-checked functions of securec.h (CANN's libc_sec.so), exported by
 * libaclnn.so and, under CANN's name, by the filter libc_sec.so.
 *
 * The checks follow the order Huawei's securec documents (see securec.h): the destination
 * size first, then NULL pointers, then whether the result fits, then overlap; on a failure
 * after the destination was found usable, the destination is reset so that no half-written
 * data is left behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "securec.h"

static int overlaps(const void *a, size_t a_len, const void *b, size_t b_len)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + b_len && y < x + a_len;
}

errno_t memset_s(void *dest, size_t destMax, int c, size_t count)
{
    if (destMax == 0 || destMax > SECUREC_MEM_MAX_LEN)
        return ERANGE;
    if (dest == NULL)
        return EINVAL;
    if (count > destMax) {
        memset(dest, c, destMax); /* fill what fits, as securec does */
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

static errno_t copy_mem(void *dest, size_t destMax, const void *src, size_t count, int allow_overlap)
{
    if (destMax == 0 || destMax > SECUREC_MEM_MAX_LEN)
        return ERANGE;
    if (dest == NULL)
        return EINVAL;
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    if (count == 0 || dest == src)
        return EOK;
    if (!allow_overlap && overlaps(dest, count, src, count)) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memmove(dest, src, count);
    return EOK;
}

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count)
{
    return copy_mem(dest, destMax, src, count, 0);
}

errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count)
{
    return copy_mem(dest, destMax, src, count, 1);
}

/* Copies src[0, len) plus a terminator to dest + offset, or resets dest.  dest has destMax
 * bytes, of which the first `offset` are already kept. */
static errno_t put_string(char *dest, size_t destMax, size_t offset, const char *src, size_t len)
{
    if (len >= destMax - offset) {
        dest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (overlaps(dest, offset + len + 1, src, len + 1)) {
        dest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest + offset, src, len);
    dest[offset + len] = '\0';
    return EOK;
}

/* The checks every string function starts with; EOK when dest and src are usable. */
static errno_t check_string_args(char *dest, size_t destMax, const char *src)
{
    if (destMax == 0 || destMax > SECUREC_STRING_MAX_LEN)
        return ERANGE;
    if (dest == NULL)
        return EINVAL;
    if (src == NULL) {
        dest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    return EOK;
}

errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc)
{
    errno_t ret = check_string_args(strDest, destMax, strSrc);
    if (ret != EOK)
        return ret;
    if (strDest == strSrc)
        return EOK;
    return put_string(strDest, destMax, 0, strSrc, strnlen(strSrc, destMax));
}

errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    errno_t ret = check_string_args(strDest, destMax, strSrc);
    if (ret != EOK)
        return ret;
    if (count > SECUREC_STRING_MAX_LEN) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    size_t len = strnlen(strSrc, count < destMax ? count : destMax);
    if (strDest == strSrc && len < destMax) {
        strDest[len] = '\0';
        return EOK;
    }
    return put_string(strDest, destMax, 0, strSrc, len);
}

static errno_t concat(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    errno_t ret = check_string_args(strDest, destMax, strSrc);
    if (ret != EOK)
        return ret;
    if (count > SECUREC_STRING_MAX_LEN) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    size_t have = strnlen(strDest, destMax);
    if (have == destMax) { /* the destination is not a string within destMax */
        strDest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    size_t room = destMax - have;
    size_t len = strnlen(strSrc, count < room ? count : room);
    return put_string(strDest, destMax, have, strSrc, len);
}

errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc)
{
    return concat(strDest, destMax, strSrc, SECUREC_STRING_MAX_LEN);
}

errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    return concat(strDest, destMax, strSrc, count);
}

char *strtok_s(char *strToken, const char *strDelimit, char **context)
{
    if (strDelimit == NULL || context == NULL || (strToken == NULL && *context == NULL))
        return NULL;
    return strtok_r(strToken, strDelimit, context);
}

/* ---- formatted output --------------------------------------------------------------------- */

/* Formats into strDest with at most `limit` characters.  truncate: keep the first `limit`
 * characters and return -1 (snprintf_s) or their count (the _truncated_ variants); otherwise
 * a result longer than `limit` empties strDest and returns -1. */
static int format_bounded(char *strDest, size_t destMax, size_t limit, int truncate_ok, int count_on_truncate,
                          const char *format, va_list args)
{
    if (destMax == 0 || destMax > SECUREC_STRING_MAX_LEN || strDest == NULL)
        return -1;
    if (format == NULL) {
        strDest[0] = '\0';
        return -1;
    }
    int n = vsnprintf(strDest, limit + 1, format, args);
    if (n < 0) {
        strDest[0] = '\0';
        return -1;
    }
    if ((size_t)n <= limit)
        return n;
    if (!truncate_ok) {
        strDest[0] = '\0';
        return -1;
    }
    return count_on_truncate ? (int)limit : -1; /* vsnprintf kept limit characters and the '\0' */
}

int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList)
{
    return format_bounded(strDest, destMax, destMax == 0 ? 0 : destMax - 1, 0, 0, format, argList);
}

int sprintf_s(char *strDest, size_t destMax, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsprintf_s(strDest, destMax, format, args);
    va_end(args);
    return n;
}

int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
{
    /* count below destMax limits the output and truncates; otherwise destMax - 1 is the limit
     * and too long a result is an error, as in sprintf_s */
    if (count < destMax)
        return format_bounded(strDest, destMax, count, 1, 0, format, argList);
    return format_bounded(strDest, destMax, destMax == 0 ? 0 : destMax - 1, 0, 0, format, argList);
}

int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf_s(strDest, destMax, count, format, args);
    va_end(args);
    return n;
}

int vsnprintf_truncated_s(char *strDest, size_t destMax, const char *format, va_list argList)
{
    return format_bounded(strDest, destMax, destMax == 0 ? 0 : destMax - 1, 1, 1, format, argList);
}

int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf_truncated_s(strDest, destMax, format, args);
    va_end(args);
    return n;
}
