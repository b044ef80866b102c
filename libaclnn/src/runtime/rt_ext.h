/*
 * rt_ext.h - what the runtime's extension files (rt_*.c: device information, virtual memory,
 * IPC, the not-supported functions, ...) share with each other.  Used only inside src/runtime.
 */
#ifndef NN_RT_EXT_H
#define NN_RT_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "acl/acl.h"
#include "base/nn_base.h"

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
/* rt_ipc.c: a key "<prefix>-..." naming the whole memfd `fd` (`size` bytes, `nonce`) for another
 * process, copied to key[len]; it lives until nn_ipc_memory_freed(nonce). */
aclError nn_ipc_export_memfd(const char *api, const char *prefix, int fd, uint64_t nonce, size_t size, char *key,
                             size_t len);
/* rt_ipc.c: opens the memfd of a key of nn_ipc_export_memfd with `prefix`: a descriptor of this
 * process and the size; an error naming `api` (and `exporter`, the call that makes such keys)
 * when the key is malformed or dead. */
aclError nn_ipc_open_key(const char *api, const char *exporter, const char *prefix, const char *key, int *fd,
                         size_t *size);

/* rt_device_info.c: the device's AI core count as libaclnn reports it (its operator threads). */
int64_t nn_rt_operator_cores(void);

/* rt_managed.c: ACL_ERROR_RT_CONTEXT_NULL naming `api` unless this thread has a current context
 * (aclrtMemAllocManaged, aclrtMemPoolCreate). */
aclError nn_rt_require_device(const char *api);

/* rt_value.c: 207000 naming `api` and `what` unless the selected product's runtime has the
 * stars tasks (910_B_93 and 950 chips: IPC events, value write/wait); Ascend910 and Ascend310P
 * have none. */
aclError nn_rt_require_stars(const char *api, const char *what);

/* ---- state shared between processes (rt_shared_sync.c): notifies and IPC events ---------- */

#define NN_SHARED_MAX_PIDS 64  /* importers a whitelist names */
#define NN_SHARED_SLICE_MS 100 /* a waiter looks at its stream's abort at least this often */

/* One page, zeros when created.  What `value` and `issued` mean is the owner's (rt_notify.c,
 * event.c); the whitelist is set by the exporter and checked by importers. */
typedef struct nn_shared_sync {
    _Atomic uint32_t value;
    _Atomic uint32_t issued;
    _Atomic uint32_t id; /* the notify id both processes report */
    _Atomic uint32_t pid_check;
    _Atomic uint32_t num_pids;
    _Atomic int32_t pids[NN_SHARED_MAX_PIDS];
} nn_shared_sync;

/* The page of one object of this process: its memfd (-1 when imported) and the memfd's nonce. */
typedef struct nn_shared_page {
    nn_shared_sync *sync;
    int fd;
    uint64_t nonce;
} nn_shared_page;

aclError nn_shared_page_create(const char *api, const char *kind, nn_shared_page *page);
/* A key "<prefix>-..." for another process; check_pid: importers must be whitelisted. */
aclError nn_shared_page_export(const char *api, const char *prefix, nn_shared_page *page, bool check_pid,
                               char *key, size_t len);
/* Maps the page of a key of nn_shared_page_export (if this process may import it). */
aclError nn_shared_page_import(const char *api, const char *exporter, const char *prefix, const char *key,
                               nn_shared_page *page);
aclError nn_shared_page_allow_pids(const char *api, nn_shared_page *page, const int32_t *pids, size_t num);
/* Unmaps the page; the creator's keys die (importers keep their mappings). */
void nn_shared_page_release(nn_shared_page *page);
/* Wakes every thread of any process waiting on `word`. */
void nn_shared_wake(_Atomic uint32_t *word);
/* Sleeps while *word == seen, for at most NN_SHARED_SLICE_MS (the caller looks again). */
void nn_shared_wait_change(_Atomic uint32_t *word, uint32_t seen);
bool nn_shared_deadline_passed(const struct timespec *deadline);

/* The dtypes ("float16,float32") CANN's platform configuration lists for `instruction` on the
 * AI Core or the vector core of `family`'s cards, or NULL (rt_platform_intrinsics.c). */
const char *nn_platform_intrinsic_dtypes(nn_soc family, bool vector_core, const char *instruction);

#ifdef __cplusplus
}
#endif

#endif /* NN_RT_EXT_H */
