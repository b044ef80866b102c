/*
 * aclnnop/aclnn_util.h - the export marker of operator functions.
 *
 * Introduction
 *   ACLNN_API marks every aclnn operator function as exported from the library.  Unlike
 *   ACL_FUNC_VISIBILITY it always expands to the visibility attribute, as in CANN.
 */
#ifndef OP_API_INC_ACLNN_UTIL_H_
#define OP_API_INC_ACLNN_UTIL_H_

#ifndef ACLNN_API
#if defined(_MSC_VER)
#define ACLNN_API
#else
#define ACLNN_API __attribute__((visibility("default")))
#endif
#endif

#endif /* OP_API_INC_ACLNN_UTIL_H_ */
