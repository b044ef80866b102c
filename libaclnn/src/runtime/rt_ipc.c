/*
 * rt_ipc.c - device memory shared between processes by key (aclrtIpcMemGetExportKey,
 * aclrtIpcMemImportByKey, aclrtIpcMemClose).
 *
 * Linux shares memory between processes through a file, so the exported range must be backed
 * by one:
 *   - memory mapped by aclrtMapMem already is (a memfd, rt_vmm.c);
 *   - an aclrtMalloc range is private memory: on export its pages are copied into a new memfd
 *     that is then mapped over them in place (MAP_FIXED), so the addresses and contents stay and
 *     from then on the pages are shared.  This is done only when the pages covering the range
 *     lie inside the allocation (memory.c places allocations of 2 MiB and more on 2 MiB
 *     boundaries); a range whose first or last page holds other data of the process (a small
 *     allocation) is refused with ACL_ERROR_RT_FEATURE_NOT_SUPPORT, since remapping would share
 *     that data too.  Export after the tasks writing the range have finished (the copy is not
 *     atomic with respect to concurrent writes).
 * The key names the exporter's pid, the memfd's descriptor, the offset and the size; the
 * importer opens /proc/<pid>/fd/<n> (Linux allows it to a process of the same user) and maps
 * it.  A whitelist of importer pids (aclrtIpcMemSetImportPid) adds nothing to that check and is
 * accepted without effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define IPC_KEY_PREFIX "nnipc"
#define IPC_KEY_MAX 65 /* CANN's key length, with the terminator */

typedef struct ipc_entry {
    char key[IPC_KEY_MAX];
    bool imported;    /* else exported by this process */
    int fd;           /* exports: the memfd made here (-1 when it belongs to a VMM handle) */
    void *map;        /* imports: the mapping; exports made in place: the shared pages */
    size_t map_len;
    void *dev;        /* imports: what the caller got */
    size_t size;
} ipc_entry;

static pthread_mutex_t g_ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_entry *g_entries;
static size_t g_num_entries;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Under g_ipc_lock. */
static ipc_entry *find_entry_locked(const char *key, bool imported)
{
    for (size_t i = 0; i < g_num_entries; i++)
        if (g_entries[i].imported == imported && strcmp(g_entries[i].key, key) == 0)
            return &g_entries[i];
    return NULL;
}

static bool add_entry(const ipc_entry *entry)
{
    pthread_mutex_lock(&g_ipc_lock);
    ipc_entry *grown = realloc(g_entries, (g_num_entries + 1) * sizeof *g_entries);
    if (grown != NULL) {
        g_entries = grown;
        g_entries[g_num_entries++] = *entry;
    }
    pthread_mutex_unlock(&g_ipc_lock);
    return grown != NULL;
}

/* A new descriptor for pages [first, end) if an earlier export already shared them, else -1;
 * *offset_base gets the start of those shared pages. */
static int reuse_shared_pages(uintptr_t first, uintptr_t end, uintptr_t *offset_base)
{
    int fd = -1;
    pthread_mutex_lock(&g_ipc_lock);
    for (size_t i = 0; i < g_num_entries && fd < 0; i++) {
        const ipc_entry *e = &g_entries[i];
        uintptr_t lo = (uintptr_t)e->map;
        if (!e->imported && e->fd >= 0 && lo <= first && end <= lo + e->map_len) {
            fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
            *offset_base = lo;
        }
    }
    pthread_mutex_unlock(&g_ipc_lock);
    return fd;
}

/* Turns the pages covering [ptr, ptr+size) of an aclrtMalloc block into a shared memfd mapping
 * in place (or finds them shared by an earlier export).  Returns the memfd, the offset of ptr
 * in it, and the shared pages. */
static aclError share_in_place(const char *api, void *ptr, size_t size, int *fd_out, size_t *offset,
                               uintptr_t *pages, size_t *pages_len)
{
    void *base;
    size_t block;
    if (!nn_mem_find(ptr, size, &base, &block))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: [%p, +%zu) is not inside device memory of this "
                           "process.", api, ptr, size);
    const size_t page = page_size();
    uintptr_t first = (uintptr_t)ptr / page * page;
    uintptr_t end = ((uintptr_t)ptr + size + page - 1) / page * page;
    if (first < (uintptr_t)base || end > (uintptr_t)base + block)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the pages holding [%p, +%zu) also hold other "
                           "data of this process; libaclnn shares whole pages, so export a range whose pages "
                           "lie inside its allocation (an aclrtMalloc of 2 MiB or more) or memory mapped with "
                           "aclrtMapMem.", api, ptr, size);
    uintptr_t shared_base = 0;
    int fd = reuse_shared_pages(first, end, &shared_base);
    if (fd >= 0) {
        *fd_out = fd;
        *offset = (uintptr_t)ptr - shared_base;
        *pages = first;
        *pages_len = end - first;
        return ACL_SUCCESS;
    }
    fd = memfd_create("aclnn-ipc", MFD_CLOEXEC);
    if (fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: memfd_create: %s.", api, strerror(errno));
    size_t len = end - first;
    /* ACLNN_CHECK's memcheck maps device memory twice (the program's view PROT_NONE, the
     * library's read-write): the bytes are read through the library's view and both views move
     * to the new file. */
    void *lib = nn_check_lib_addr((void *)first);
    const bool two_views = lib != (void *)first;
    if (ftruncate(fd, (off_t)len) != 0 || pwrite(fd, lib, len, 0) != (ssize_t)len ||
        mmap((void *)first, len, two_views ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             0) == MAP_FAILED ||
        (two_views && mmap(lib, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)) {
        int err = errno;
        close(fd);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot back %zu bytes with a shared file: %s.", api,
                           len, strerror(err));
    }
    *fd_out = fd;
    *offset = (uintptr_t)ptr - first;
    *pages = first;
    *pages_len = len;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags)
{
    const char *api = "aclrtIpcMemGetExportKey";
    (void)flags; /* pid validation: see the top of the file */
    if (devPtr == NULL || key == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr and key must not be null and size positive.", api);
    int fd = -1, own_fd = -1;
    size_t offset = 0, room = 0, pages_len = 0;
    uintptr_t pages = 0;
    aclError ret = ACL_SUCCESS;
    if (!nn_vmm_mapping_of(devPtr, &fd, &offset, &room) || room < size) {
        ret = share_in_place(api, devPtr, size, &fd, &offset, &pages, &pages_len);
        own_fd = fd;
    }
    if (ret != ACL_SUCCESS)
        return ret;
    ipc_entry entry = {.imported = false, .fd = own_fd, .map = (void *)pages, .map_len = pages_len, .size = size};
    int n = snprintf(entry.key, sizeof entry.key, IPC_KEY_PREFIX "-%u-%d-%zx-%zx", (unsigned)getpid(), fd, offset,
                     size);
    if (n < 0 || (size_t)n >= len) {
        if (own_fd >= 0)
            close(own_fd); /* the pages stay shared; nothing refers to them by key */
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: len %zu is too small for the key (%d characters and "
                           "the terminator).", api, len, n);
    }
    if (!add_entry(&entry)) {
        if (own_fd >= 0)
            close(own_fd);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    memcpy(key, entry.key, (size_t)n + 1);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)
{
    const char *api = "aclrtIpcMemImportByKey";
    (void)flags; /* peer access: every emulated device reaches host memory */
    unsigned pid = 0;
    int fd = -1, used = 0;
    size_t offset = 0, size = 0;
    if (devPtr == NULL || key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr and key must not be null.", api);
    if (sscanf(key, IPC_KEY_PREFIX "-%u-%d-%zx-%zx%n", &pid, &fd, &offset, &size, &used) != 4 ||
        key[used] != '\0' || size == 0 || strlen(key) >= IPC_KEY_MAX)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a key of aclrtIpcMemGetExportKey.", api, key);
    int mine = nn_vmm_open_foreign_fd(pid, fd);
    if (mine < 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cannot open the memory of key \"%s\" (process %u): %s.",
                           api, key, pid, strerror(errno));
    const size_t page = page_size();
    size_t first = offset / page * page;
    size_t map_len = offset - first + size;
    void *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, mine, (off_t)first);
    int err = errno;
    close(mine); /* the mapping keeps the memory */
    if (map == MAP_FAILED)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: mmap: %s.", api, strerror(err));
    void *dev = (char *)map + (offset - first);
    ipc_entry entry = {.imported = true, .fd = -1, .map = map, .map_len = map_len, .dev = dev, .size = size};
    memcpy(entry.key, key, strlen(key) + 1);
    if (!nn_mem_register_mapped(dev, size) || !add_entry(&entry)) {
        nn_mem_unregister_mapped(dev);
        munmap(map, map_len);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *devPtr = dev;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key)
{
    if (key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: key must not be null.");
    pthread_mutex_lock(&g_ipc_lock);
    ipc_entry *e = find_entry_locked(key, true);
    if (e == NULL)
        e = find_entry_locked(key, false);
    ipc_entry gone = e != NULL ? *e : (ipc_entry){0};
    if (e != NULL)
        *e = g_entries[--g_num_entries];
    pthread_mutex_unlock(&g_ipc_lock);
    if (e == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: \"%s\" is not a key this process exported "
                           "or imported.", key);
    if (gone.imported) {
        nn_mem_unregister_mapped(gone.dev);
        munmap(gone.map, gone.map_len);
    } else if (gone.fd >= 0) {
        close(gone.fd); /* the exporter's pages stay mapped; no new importer can open them */
    }
    return ACL_SUCCESS;
}

static aclError check_exported(const char *api, const char *key)
{
    if (key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: key must not be null.", api);
    pthread_mutex_lock(&g_ipc_lock);
    bool known = find_entry_locked(key, false) != NULL;
    pthread_mutex_unlock(&g_ipc_lock);
    if (!known)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a key this process exported.", api, key);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)
{
    if (pid == NULL || num == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemSetImportPid: pid must not be null and num positive.");
    return check_exported("aclrtIpcMemSetImportPid", key);
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type, uint64_t attr)
{
    (void)attr; /* the link type (SIO, HCCS, UB): one host memory has none */
    if (type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemSetAttr: unknown type %d.", (int)type);
    return check_exported("aclrtIpcMemSetAttr", key);
}
