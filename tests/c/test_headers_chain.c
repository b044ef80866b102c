/*
 * test_headers_chain.c - the include chain CANN programs rely on.
 *
 * A CANN sample includes only an operator header (plus acl/acl.h for the runtime) and still
 * calls aclCreateTensor, compares with ACL_SUCCESS and uses ACLNN_* codes: those arrive through
 * aclnnop/aclnn_<op>.h -> aclnn/aclnn_base.h -> aclnn/acl_meta.h -> acl/acl_base.h.  This file
 * includes nothing else, so it fails to compile if the chain is broken.
 */
#include "aclnnop/aclnn_prelu.h"

#include <stdint.h>
#include <stdio.h>

int main(void)
{
    /* Meta API, runtime base types and both families of codes, all from the op header. */
    aclTensor *(*create)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t,
                         aclFormat, const int64_t *, uint64_t, void *) = aclCreateTensor;
    aclnnStatus (*destroy)(const aclTensor *) = aclDestroyTensor;
    size_t (*dtype_size)(aclDataType) = aclDataTypeSize;
    aclrtStream stream = NULL;
    aclnnStatus ret = ACLNN_SUCCESS;
    int failures = 0;

    if (create == NULL || destroy == NULL || dtype_size == NULL || stream != NULL) {
        printf("FAIL meta API not reachable from aclnnop/aclnn_prelu.h\n");
        ++failures;
    }
    if (!(ret == ACL_SUCCESS) || ACL_ERROR_RT_CONTEXT_NULL != 107002 ||
        ACLNN_ERR_PARAM_INVALID != 161002 || ACL_FORMAT_NCHW != 0) {
        printf("FAIL codes not reachable from aclnnop/aclnn_prelu.h\n");
        ++failures;
    }
    if (failures == 0) {
        printf("test_headers_chain: OK\n");
    }
    return failures == 0 ? 0 : 1;
}
