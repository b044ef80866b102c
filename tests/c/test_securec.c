/*
 * test_securec.c - the bounds-checked functions of securec.h (CANN's libc_sec.so): results that
 * fit are the plain C results; sizes of 0 or above the limit give ERANGE with nothing written;
 * NULL, too-long and overlapping arguments reset the destination and say so in the code.
 */
#include <stdio.h>
#include <string.h>

#include "securec.h"

#include "test_util.h"

static void test_memory(void)
{
    unsigned char dst[8], src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    memset(dst, 0xFF, sizeof dst);
    CHECK(memcpy_s(dst, sizeof dst, src, 5) == EOK && memcmp(dst, src, 5) == 0 && dst[5] == 0xFF, "memcpy_s");
    CHECK(memcpy_s(dst, 0, src, 1) == ERANGE && dst[0] == 1, "destMax 0 leaves dst");
    CHECK(memcpy_s(dst, (size_t)SECUREC_MEM_MAX_LEN + 1, src, 1) == ERANGE, "destMax above the limit");
    CHECK(memcpy_s(NULL, 8, src, 1) == EINVAL, "NULL dest");
    CHECK(memcpy_s(dst, sizeof dst, NULL, 1) == EINVAL_AND_RESET && dst[0] == 0 && dst[7] == 0, "NULL src resets");
    memset(dst, 0xFF, sizeof dst);
    CHECK(memcpy_s(dst, 4, src, 5) == ERANGE_AND_RESET && dst[0] == 0 && dst[3] == 0 && dst[4] == 0xFF,
          "count > destMax zeroes destMax bytes only");
    memcpy(dst, src, 8);
    CHECK(memcpy_s(dst + 1, 7, dst, 4) == EOVERLAP_AND_RESET && dst[1] == 0, "overlap");
    memcpy(dst, src, 8);
    CHECK(memmove_s(dst + 1, 7, dst, 4) == EOK && dst[1] == 1 && dst[4] == 4 && dst[5] == 6, "memmove_s overlap");
    CHECK(memset_s(dst, sizeof dst, 7, 3) == EOK && dst[0] == 7 && dst[2] == 7 && dst[3] == 3, "memset_s");
    CHECK(memset_s(dst, 2, 9, 3) == ERANGE_AND_RESET && dst[0] == 9 && dst[1] == 9 && dst[2] == 7,
          "memset_s fills destMax bytes when count is too big");
}

static void test_strings(void)
{
    char buf[8];
    CHECK(strcpy_s(buf, sizeof buf, "abc") == EOK && strcmp(buf, "abc") == 0, "strcpy_s");
    CHECK(strcpy_s(buf, sizeof buf, "12345678") == ERANGE_AND_RESET && buf[0] == '\0', "strcpy_s too long");
    CHECK(strcpy_s(buf, sizeof buf, "1234567") == EOK && strcmp(buf, "1234567") == 0, "strcpy_s exact fit");
    CHECK(strcpy_s(buf, sizeof buf, NULL) == EINVAL_AND_RESET && buf[0] == '\0', "strcpy_s NULL src");
    CHECK(strncpy_s(buf, sizeof buf, "abcdef", 3) == EOK && strcmp(buf, "abc") == 0, "strncpy_s");
    CHECK(strncpy_s(buf, sizeof buf, "abcdefghij", 8) == ERANGE_AND_RESET && buf[0] == '\0', "strncpy_s too long");
    CHECK(strcpy_s(buf, sizeof buf, "ab") == EOK && strcat_s(buf, sizeof buf, "cd") == EOK && strcmp(buf, "abcd") == 0,
          "strcat_s");
    CHECK(strcat_s(buf, sizeof buf, "efgh") == ERANGE_AND_RESET && buf[0] == '\0', "strcat_s overflow");
    CHECK(strcpy_s(buf, sizeof buf, "ab") == EOK && strncat_s(buf, sizeof buf, "cdefgh", 2) == EOK &&
              strcmp(buf, "abcd") == 0,
          "strncat_s");
    char text[] = "a,b;;c", *ctx = NULL;
    char *t1 = strtok_s(text, ",;", &ctx), *t2 = strtok_s(NULL, ",;", &ctx), *t3 = strtok_s(NULL, ",;", &ctx);
    CHECK(t1 && t2 && t3 && strcmp(t1, "a") == 0 && strcmp(t2, "b") == 0 && strcmp(t3, "c") == 0, "strtok_s");
    CHECK(strtok_s(NULL, ",", NULL) == NULL, "strtok_s NULL context");
}

static void test_formatted(void)
{
    char buf[8], want[32];
    CHECK(sprintf_s(buf, sizeof buf, "%d-%s", 42, "x") == 4 && strcmp(buf, "42-x") == 0, "sprintf_s");
    CHECK(sprintf_s(buf, sizeof buf, "%s", "12345678") == -1 && buf[0] == '\0', "sprintf_s too long");
    snprintf(want, sizeof want, "%05.1f", 3.14159);
    CHECK(snprintf_s(buf, sizeof buf, sizeof buf - 1, "%05.1f", 3.14159) == (int)strlen(want) && strcmp(buf, want) == 0,
          "snprintf_s");
    CHECK(snprintf_s(buf, sizeof buf, 3, "%s", "abcdef") == -1 && strcmp(buf, "abc") == 0,
          "snprintf_s truncates at count");
    CHECK(snprintf_s(buf, sizeof buf, 20, "%s", "abcdefghij") == -1 && buf[0] == '\0',
          "snprintf_s beyond destMax fails");
    CHECK(snprintf_truncated_s(buf, sizeof buf, "%s", "abcdefghij") == 7 && strcmp(buf, "abcdefg") == 0,
          "snprintf_truncated_s");
    CHECK(sprintf_s(buf, 0, "x") == -1, "destMax 0");
}

int main(void)
{
    test_memory();
    test_strings();
    test_formatted();
    return tu_finish("test_securec");
}
