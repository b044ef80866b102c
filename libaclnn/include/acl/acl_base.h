/*
 * acl/acl_base.h - the base ACL definitions, gathered in one include.
 *
 * Introduction
 *   As in CANN's newest layout this header only includes its parts:
 *     acl/acl_base_rt.h               handles, aclError, ACL_* codes, aclDataType, aclFormat, ...
 *     acl/acl_base_mdl.h              model-API base types (empty in libaclnn)
 *     error_codes/rt_error_codes.h    ACL_ERROR_RT_* macros
 *     error_codes/ge_error_codes.h    ACL_ERROR_GE_* constants
 *   The aclnn meta API (aclnn/acl_meta.h) includes this header, so every operator header
 *   brings these definitions along.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

#include "acl_base_rt.h"
#include "acl_base_mdl.h"
#include "error_codes/rt_error_codes.h"
#include "error_codes/ge_error_codes.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
