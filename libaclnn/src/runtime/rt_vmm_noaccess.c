/*
 * rt_vmm_noaccess.c - aclrtMemMapNoAccess: aclrtMapMem whose range stays inaccessible until
 * aclrtMemSetAccess grants access.
 *
 * CANN maps the physical memory without building the device's page tables; aclrtMemSetAccess
 * builds them (runtime:docs/zh/api_ref/11-04_virtual_memory_management.md).  Here the mapping is
 * made by aclrtMapMem (rt_vmm.c) and then given ACL_RT_MEM_ACCESS_FLAGS_NONE, which rt_vmm.c
 * turns into PROT_NONE pages: copies, fills and operators refuse the range (memory.c's access
 * check) until aclrtMemSetAccess makes it readable or writable, and aclrtMemGetAccess reads 0.
 */
#include "runtime/nn_rt_internal.h"

/* A failure of the call aclrtMemMapNoAccess makes, with its own name on top. */
static aclError failed(aclError ret, const char *step)
{
    return nn_rt_error(ret, "aclrtMemMapNoAccess: %s failed (the message below says why).", step);
}

ACL_FUNC_VISIBILITY aclError aclrtMemMapNoAccess(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                                                 uint64_t flags)
{
    const char *api = "aclrtMemMapNoAccess";
    /* CANN's acl layer, before the driver sees the call */
    if (virPtr == NULL || handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api,
                           virPtr == NULL ? "virPtr" : "handle");
    if (size == 0 || flags != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, size == 0 ? "size must be positive, got 0"
                           : "flags is reserved and must be 0");
    aclError ret = aclrtMapMem(virPtr, size, offset, handle, 0);
    if (ret != ACL_SUCCESS)
        return failed(ret, "mapping the handle");
    aclrtMemAccessDesc none = {ACL_RT_MEM_ACCESS_FLAGS_NONE, {0, ACL_MEM_LOCATION_TYPE_DEVICE}, {0}};
    (void)aclrtGetDevice((int32_t *)&none.location.id);
    ret = aclrtMemSetAccess(virPtr, size, &none, 1);
    if (ret != ACL_SUCCESS) {
        (void)aclrtUnmapMem(virPtr);
        return failed(ret, "taking the mapping's access away");
    }
    return ACL_SUCCESS;
}
