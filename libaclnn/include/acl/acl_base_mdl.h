/*
 * acl/acl_base_mdl.h - placeholder for base types of the model (offline .om) API.
 *
 * Introduction
 *   CANN's runtime package ships this file empty too (the real content comes from other CANN
 *   packages).  libaclnn runs aclnn operators only, so nothing is declared here; the file
 *   exists so that programs including it (directly or through acl/acl.h) compile unchanged.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_MDL_H_
#define INC_EXTERNAL_ACL_ACL_BASE_MDL_H_

#include "acl_base_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_MDL_H_ */
