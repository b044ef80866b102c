/*
 * securectype.h - the types and limits of the bounds-checked C functions of securec.h.
 *
 * CANN ships Huawei's securec library (libc_sec.so) with its runtime; host programs and CANN's
 * samples call its functions.  libaclnn provides the commonly used ones (libc_sec.so is a
 * filter for libaclnn.so: docs/libraries.md).
 */
#ifndef SECURECTYPE_H_5BA0AB5C_8F8F_4C0E_B7D8_3BC4EF1C2C4C
#define SECURECTYPE_H_5BA0AB5C_8F8F_4C0E_B7D8_3BC4EF1C2C4C

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#ifndef SECUREC_API
#define SECUREC_API __attribute__((visibility("default")))
#endif

/* The error type of the securec functions: EOK or one of the codes below (errno values). */
#ifndef EOK
#define EOK 0
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef EOVERLAP
#define EOVERLAP 54
#endif

/* "_AND_RESET": the destination was reset (zeroed, or its first character set to '\0'). */
#ifndef EINVAL_AND_RESET
#define EINVAL_AND_RESET (22 | 128)
#endif
#ifndef ERANGE_AND_RESET
#define ERANGE_AND_RESET (34 | 128)
#endif
#ifndef EOVERLAP_AND_RESET
#define EOVERLAP_AND_RESET (54 | 128)
#endif

#if !defined(__STDC_LIB_EXT1__) && !defined(errno_t)
typedef int errno_t;
#endif

/* The largest destination a function accepts (bytes); larger sizes are taken for negative
 * numbers passed by mistake and rejected with ERANGE. */
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL

#endif /* SECURECTYPE_H_5BA0AB5C_8F8F_4C0E_B7D8_3BC4EF1C2C4C */
