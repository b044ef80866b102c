/*
 * check_prelu.h - the launch the tests/check programs use to make an operator read device
 * memory: a Prelu over n floats of x into out, its one slope in w; and the 1-D float tensor
 * they build their operands from.  Both are static inline: a program that uses one of them
 * must still compile under -Wall -Werror.
 */
#ifndef TESTS_CHECK_PRELU_H
#define TESTS_CHECK_PRELU_H

#include "acl/acl.h"
#include "aclnnop/aclnn_prelu.h"

static inline aclTensor *check_vector(void *data, int64_t n)
{
    int64_t shape[1] = {n};
    return aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, data);
}

/* The Prelu, waited for; returns the launch's status. */
static inline int check_prelu(void *x, void *w, void *out, int64_t n, aclrtStream stream)
{
    aclTensor *tx = check_vector(x, n), *tw = check_vector(w, 1), *ty = check_vector(out, n);
    uint64_t size = 0;
    aclOpExecutor *ex = NULL;
    int status = aclnnPreluGetWorkspaceSize(tx, tw, ty, &size, &ex);
    if (status == 0)
        status = aclnnPrelu(NULL, 0, ex, stream);
    aclrtSynchronizeStream(stream);
    aclDestroyTensor(tx);
    aclDestroyTensor(tw);
    aclDestroyTensor(ty);
    return status;
}

#endif /* TESTS_CHECK_PRELU_H */
