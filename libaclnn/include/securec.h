/*
 * securec.h - bounds-checked memory and string functions (Huawei securec, as CANN ships it in
 * libc_sec.so), in the spirit of C11 Annex K.
 *
 * Every function takes the destination's size (destMax) and checks it before writing:
 *   - destMax of 0 or above SECUREC_MEM_MAX_LEN / SECUREC_STRING_MAX_LEN: ERANGE, nothing
 *     written;
 *   - a NULL destination: EINVAL; a NULL source with a valid destination: the destination is
 *     reset (memory zeroed, string emptied) and EINVAL_AND_RESET returned;
 *   - a result that does not fit: the destination is reset and ERANGE_AND_RESET returned;
 *   - overlapping source and destination (where the function forbids it): reset and
 *     EOVERLAP_AND_RESET.
 * The formatted-output functions return the number of characters written, or -1 with the
 * destination emptied (snprintf_s: truncated and terminated when count is the limit).
 */
#ifndef SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27
#define SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27

#include "securectype.h"

#ifdef __cplusplus
extern "C" {
#endif

SECUREC_API errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
SECUREC_API errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count);
SECUREC_API errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);

SECUREC_API errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
SECUREC_API errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
SECUREC_API errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc);
SECUREC_API errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
/* strtok_r with checks: NULL when strDelimit or context is NULL. */
SECUREC_API char *strtok_s(char *strToken, const char *strDelimit, char **context);

SECUREC_API int sprintf_s(char *strDest, size_t destMax, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
SECUREC_API int vsprintf_s(char *strDest, size_t destMax, const char *format, va_list argList)
    __attribute__((format(printf, 3, 0)));
SECUREC_API int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
SECUREC_API int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
    __attribute__((format(printf, 4, 0)));
/* Truncate to destMax - 1 characters instead of failing; return the length written. */
SECUREC_API int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
SECUREC_API int vsnprintf_truncated_s(char *strDest, size_t destMax, const char *format, va_list argList)
    __attribute__((format(printf, 3, 0)));

#ifdef __cplusplus
}
#endif

#endif /* SECUREC_H_5D13A042_DC3F_4ED9_A8D1_882811274C27 */
