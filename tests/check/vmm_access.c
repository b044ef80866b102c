/*
 * vmm_access.c - copies and fills into an aclrtMapMem mapping whose access forbids them
 * (tests/test_check_vmm_access.py): with ACL_RT_MEM_ACCESS_FLAGS_NONE the library's own copy
 * faulted on the PROT_NONE pages and ended the process; each call must fail with a status.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

static void *map_one(size_t *gran)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    void *base = NULL;
    aclrtDrvMemHandle handle;
    if (aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, gran) != ACL_SUCCESS ||
        aclrtReserveMemAddress(&base, *gran, 0, NULL, 0) != ACL_SUCCESS ||
        aclrtMallocPhysical(&handle, *gran, &prop, 0) != ACL_SUCCESS ||
        aclrtMapMem(base, *gran, 0, handle, 0) != ACL_SUCCESS)
        return NULL;
    return base;
}

static int set_access(void *base, size_t gran, aclrtMemAccessFlags flags)
{
    aclrtMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.flags = flags;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    return aclrtMemSetAccess(base, gran, &desc, 1);
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    size_t gran = 0;
    unsigned char *base = map_one(&gran);
    unsigned char host[64] = {1};
    if (base == NULL || aclrtMemset(base, gran, 0x33, gran) != ACL_SUCCESS ||
        set_access(base, gran, ACL_RT_MEM_ACCESS_FLAGS_NONE) != ACL_SUCCESS)
        return 3;
    printf("h2d into NONE: %d\n", (int)aclrtMemcpy(base, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    printf("d2h from NONE: %d\n", (int)aclrtMemcpy(host, 64, base, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    printf("fill NONE: %d\n", (int)aclrtMemset(base + 64, 64, 0, 64));
    if (set_access(base, gran, ACL_RT_MEM_ACCESS_FLAGS_READ) != ACL_SUCCESS)
        return 3;
    printf("h2d into READ: %d\n", (int)aclrtMemcpy(base, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    aclError read = aclrtMemcpy(host, 64, base, 64, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("d2h from READ: %d, byte 0x%02x\n", (int)read, host[0]);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
