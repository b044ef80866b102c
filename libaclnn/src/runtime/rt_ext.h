/*
 * rt_ext.h - what the runtime's extension files (rt_*.c: device information, virtual memory,
 * IPC, the not-supported functions, ...) share with each other.  Used only inside src/runtime.
 */
#ifndef NN_RT_EXT_H
#define NN_RT_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records ACL_ERROR_RT_FEATURE_NOT_SUPPORT with a message naming `api` and saying why
 * (`reason`, e.g. "libaclnn runs no device kernels"); returns the code. */
aclError nn_rt_not_supported(const char *api, const char *reason);

/* rt_vmm.c: the memfd and size of a live aclrtMallocPhysical / imported handle. */
bool nn_vmm_handle_fd(aclrtDrvMemHandle handle, int *fd, size_t *size);
/* rt_vmm.c: whether ptr lies in an aclrtMapMem mapping; its memfd, the memfd's nonce, the
 * offset of ptr in it and the bytes from ptr to the mapping's end. */
bool nn_vmm_mapping_of(const void *ptr, int *fd, size_t *offset_in_fd, size_t *room, uint64_t *nonce);
/* rt_vmm.c: a new memfd of `size` bytes that other processes may open, named
 * "aclnn-<kind>-<nonce>" after a random 64-bit nonce (*nonce); -1 with errno. */
int nn_vmm_memfd_create(const char *kind, size_t size, uint64_t *nonce);
/* rt_vmm.c: a descriptor of this process for descriptor `fd` of process `pid` while that is
 * still a memfd of nn_vmm_memfd_create with `nonce`; -1 with errno otherwise (ESTALE or ENOENT:
 * closed, or now another file; ESRCH: the process is gone). */
int nn_vmm_open_memfd(uint32_t pid, int fd, uint64_t nonce);
/* rt_ipc.c: ends the export keys of the memfd with `nonce`, whose memory was freed
 * (aclrtFreePhysical). */
void nn_ipc_memory_freed(uint64_t nonce);

#ifdef __cplusplus
}
#endif

#endif /* NN_RT_EXT_H */
