/*
 * check_program.h - the frame the tests/check programs share: argv[1] names a case, run with the
 * device open and one stream; an optional argv[2] is the case's argument.  The process's status is
 * the case's (2: no such case, or the runtime would not start).
 */
#ifndef TESTS_CHECK_PROGRAM_H
#define TESTS_CHECK_PROGRAM_H

#include <string.h>

#include "acl/acl.h"

typedef struct check_case {
    const char *name;
    int (*run)(aclrtStream stream, const char *arg); /* arg: argv[2], or NULL */
} check_case;

static int run_check_case(int argc, char **argv, const check_case *cases, size_t count)
{
    if (argc < 2 || aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    aclrtStream stream = NULL;
    aclrtCreateStream(&stream);
    int rc = 2;
    for (size_t i = 0; i < count; ++i)
        if (strcmp(argv[1], cases[i].name) == 0)
            rc = cases[i].run(stream, argc > 2 ? argv[2] : NULL);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}

#endif /* TESTS_CHECK_PROGRAM_H */
