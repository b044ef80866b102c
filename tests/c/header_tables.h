/*
 * header_tables.h - the tables the header tests (test_headers_c.c, test_headers_tools.c) fill
 * with CANN's values and function addresses, and the loops that report their mismatches.
 */
#ifndef ACLNN_TESTS_HEADER_TABLES_H
#define ACLNN_TESTS_HEADER_TABLES_H

#include <stddef.h>
#include <stdio.h>

/* A constant as our headers define it (actual) and as CANN's do (expected). */
typedef struct {
    const char *name;
    long long actual;
    long long expected;
} value_row;

/* A function assigned to a pointer of CANN's prototype. */
typedef struct {
    const char *name;
    const void *address;
} symbol_row;

/* Prints each value that differs from CANN's; returns how many do. */
static inline int count_value_mismatches(const value_row *rows, size_t count)
{
    int failures = 0;
    for (size_t i = 0; i < count; ++i) {
        if (rows[i].actual != rows[i].expected) {
            printf("FAIL %s = %lld, expected %lld\n", rows[i].name, rows[i].actual, rows[i].expected);
            ++failures;
        }
    }
    return failures;
}

/* Prints each function without an address; returns how many there are. */
static inline int count_missing_symbols(const symbol_row *rows, size_t count)
{
    int failures = 0;
    for (size_t i = 0; i < count; ++i) {
        if (rows[i].address == NULL) {
            printf("FAIL %s has no address\n", rows[i].name);
            ++failures;
        }
    }
    return failures;
}

#endif /* ACLNN_TESTS_HEADER_TABLES_H */
