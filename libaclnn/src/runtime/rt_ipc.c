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
 *     atomic with respect to concurrent writes).  The pages stay shared (later keys of them
 *     reuse the memfd) until aclrtFree, which gives them private memory again before the
 *     allocator can hand them out (nn_ipc_block_freed).
 * The key names the exporter's pid, a descriptor of the memfd that belongs to the key alone,
 * the offset, the size and the memfd's nonce (rt_vmm.c: memfds are named "aclnn-<kind>-<nonce>").
 * The importer opens /proc/<pid>/fd/<n> (Linux allows it to a process of the same user) only
 * while that descriptor is still the memfd with the key's nonce, and maps it.  A key dies with
 * aclrtIpcMemClose and with its memory (aclrtFree, aclrtFreePhysical): its descriptor is closed,
 * and a number freed so is never taken by a later key of the same memory (retired_fd), so no
 * descriptor can make a dead key name memory again.  A whitelist of importer pids
 * (aclrtIpcMemSetImportPid) adds nothing to Linux's check and is accepted without effect.
 * Notifies and IPC events (rt_notify.c, event.c) share a page of state through the same keys
 * (nn_ipc_export_memfd, nn_ipc_open_key), with their own prefixes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
    bool imported;  /* else exported by this process */
    int fd;         /* exports: the descriptor the key names, the key's own (-1 for imports) */
    uint64_t nonce; /* exports: the nonce of the memfd the key names */
    void *map;      /* imports: the mapping, and what the caller got */
    size_t map_len;
    void *dev;
} ipc_entry;

/* aclrtMalloc pages moved into a shared memfd in place; shared until the block is freed. */
typedef struct shared_pages {
    uintptr_t first;
    size_t len;
    int fd; /* the memfd, owned here; keys hold their own descriptors of it */
    uint64_t nonce;
    bool two_views; /* ACLNN_CHECK's memcheck: the library's view of the bytes moved too */
} shared_pages;

/* The descriptor number of a closed key whose memory is still exported: later keys of that
 * memory never take the number, so the closed key cannot name the memory again. */
typedef struct retired_fd {
    int fd;
    uint64_t nonce;
} retired_fd;

static pthread_mutex_t g_ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_entry *g_entries;
static size_t g_num_entries, g_cap_entries;
static shared_pages *g_shared; /* oldest first */
static size_t g_num_shared, g_cap_shared;
static retired_fd *g_retired;
static size_t g_num_retired, g_cap_retired;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Appends *record to a list (the nn_sorted_* helpers at the end index); false when out of
 * memory.  Under g_ipc_lock. */
static bool append_locked(void *list_ptr, size_t *count, size_t *capacity, size_t size, const void *record)
{
    void **list = list_ptr;
    void *grown = nn_sorted_insert(*list, count, capacity, 8, size, *count, record);
    if (grown == NULL)
        return false;
    *list = grown;
    return true;
}

/* Under g_ipc_lock: a memory key (the keys of notifies and events, nn_ipc_export_memfd, end
 * with their objects, not with aclrtIpcMemClose). */
static ipc_entry *find_entry_locked(const char *key, bool imported)
{
    if (strncmp(key, IPC_KEY_PREFIX "-", strlen(IPC_KEY_PREFIX "-")) != 0)
        return NULL;
    for (size_t i = 0; i < g_num_entries; i++)
        if (g_entries[i].imported == imported && strcmp(g_entries[i].key, key) == 0)
            return &g_entries[i];
    return NULL;
}

static bool is_retired_locked(int fd, uint64_t nonce)
{
    for (size_t i = 0; i < g_num_retired; i++)
        if (g_retired[i].fd == fd && g_retired[i].nonce == nonce)
            return true;
    return false;
}

/* A new descriptor of memfd `fd` (nonce `nonce`) for one key: the lowest number free that no
 * closed key of the same memory had.  -1 with errno.  Under g_ipc_lock. */
static int key_descriptor_locked(int fd, uint64_t nonce)
{
    int key_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    while (key_fd >= 0 && is_retired_locked(key_fd, nonce)) {
        int next = fcntl(fd, F_DUPFD_CLOEXEC, key_fd + 1);
        close(key_fd);
        key_fd = next;
    }
    return key_fd;
}

/* Ends every export key of the memory with `nonce` and forgets its closed keys' numbers: the
 * memory is gone.  Under g_ipc_lock. */
static void forget_memory_locked(uint64_t nonce)
{
    for (size_t i = g_num_entries; i-- > 0;)
        if (!g_entries[i].imported && g_entries[i].nonce == nonce) {
            close(g_entries[i].fd);
            nn_sorted_remove(g_entries, &g_num_entries, sizeof *g_entries, i);
        }
    for (size_t i = g_num_retired; i-- > 0;)
        if (g_retired[i].nonce == nonce)
            nn_sorted_remove(g_retired, &g_num_retired, sizeof *g_retired, i);
}

void nn_ipc_memory_freed(uint64_t nonce)
{
    pthread_mutex_lock(&g_ipc_lock);
    forget_memory_locked(nonce);
    pthread_mutex_unlock(&g_ipc_lock);
}

/* Gives shared pages private memory again with the same bytes, so that what the allocator
 * hands out next is no other process's (importers keep the memfd's pages as they were). */
static void unshare_pages(const shared_pages *shared)
{
    void *pages = (void *)shared->first;
    void *copy = mmap(NULL, shared->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy != MAP_FAILED) {
        memcpy(copy, pages, shared->len);
        if (mremap(copy, shared->len, shared->len, MREMAP_MAYMOVE | MREMAP_FIXED, pages) != MAP_FAILED)
            return;
        munmap(copy, shared->len);
    }
    /* no room for a copy: zero pages are private too, and the block is being freed */
    mmap(pages, shared->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

void nn_ipc_block_freed(const void *base, size_t size)
{
    const uintptr_t lo = (uintptr_t)base, hi = lo + size;
    pthread_mutex_lock(&g_ipc_lock);
    for (size_t i = g_num_shared; i-- > 0;) {
        const shared_pages shared = g_shared[i];
        if (shared.first < lo || shared.first + shared.len > hi)
            continue;
        /* memcheck holds freed addresses back, then maps its arena over them before reuse */
        if (!shared.two_views)
            unshare_pages(&shared);
        close(shared.fd);
        forget_memory_locked(shared.nonce);
        nn_sorted_remove(g_shared, &g_num_shared, sizeof *g_shared, i);
    }
    pthread_mutex_unlock(&g_ipc_lock);
}

/* A key's descriptor for pages [first, end) if an earlier export shared them, else -1;
 * *shared_base gets the start of those shared pages, *nonce their memfd's nonce.  The newest
 * shared pages overlapping the range decide: an older memfd may no longer back all of it. */
static int reuse_shared_pages(uintptr_t first, uintptr_t end, uintptr_t *shared_base, uint64_t *nonce)
{
    int fd = -1;
    pthread_mutex_lock(&g_ipc_lock);
    for (size_t i = g_num_shared; i-- > 0;) {
        const shared_pages *s = &g_shared[i];
        if (s->first >= end || first >= s->first + s->len)
            continue;
        if (s->first <= first && end <= s->first + s->len) {
            fd = key_descriptor_locked(s->fd, s->nonce);
            *shared_base = s->first;
            *nonce = s->nonce;
        }
        break;
    }
    pthread_mutex_unlock(&g_ipc_lock);
    return fd;
}

/* Copies pages [first, first+len) into a new memfd and maps it over them (both views under
 * memcheck); records the shared pages and returns a key's descriptor of them, or an error. */
static aclError share_new_pages(const char *api, uintptr_t first, size_t len, int *key_fd, uint64_t *nonce)
{
    int fd = nn_vmm_memfd_create("ipc", len, nonce);
    if (fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: memfd_create: %s.", api, strerror(errno));
    /* ACLNN_CHECK's memcheck maps device memory twice (the program's view PROT_NONE, the
     * library's read-write): the bytes are read through the library's view and both views move
     * to the new file. */
    void *lib = nn_check_lib_addr((void *)first);
    const bool two_views = lib != (void *)first;
    if (two_views) /* memcheck maps its arena over them again before the addresses are reused */
        nn_check_device_views_replaced((void *)first);
    if (pwrite(fd, lib, len, 0) != (ssize_t)len ||
        mmap((void *)first, len, two_views ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             0) == MAP_FAILED ||
        (two_views && mmap(lib, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)) {
        int err = errno;
        close(fd);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot back %zu bytes with a shared file: %s.", api,
                           len, strerror(err));
    }
    const shared_pages shared = {first, len, fd, *nonce, two_views};
    pthread_mutex_lock(&g_ipc_lock);
    /* (if the record cannot be kept, the pages stay on a memfd no key names and no other
     * process can open once its descriptor is closed) */
    bool recorded = append_locked(&g_shared, &g_num_shared, &g_cap_shared, sizeof shared, &shared);
    *key_fd = recorded ? key_descriptor_locked(fd, *nonce) : -1;
    pthread_mutex_unlock(&g_ipc_lock);
    if (!recorded)
        close(fd);
    if (*key_fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory or descriptors.", api);
    return ACL_SUCCESS;
}

/* Turns the pages covering [ptr, ptr+size) of an aclrtMalloc block into a shared memfd mapping
 * in place (or finds them shared by an earlier export).  Returns a key's descriptor of the
 * memfd, the offset of ptr in it and the memfd's nonce. */
static aclError share_in_place(const char *api, void *ptr, size_t size, int *key_fd, size_t *offset,
                               uint64_t *nonce)
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
    uintptr_t shared_base = first;
    *key_fd = reuse_shared_pages(first, end, &shared_base, nonce);
    aclError ret = *key_fd >= 0 ? ACL_SUCCESS : share_new_pages(api, first, end - first, key_fd, nonce);
    *offset = (uintptr_t)ptr - shared_base;
    return ret;
}

/* Whether [ptr, +size) lies in one aclrtMapMem mapping; if so, a key's descriptor of its
 * handle's memfd (or an error), the offset of ptr in it and the memfd's nonce. */
static bool in_vmm_mapping(const char *api, const void *ptr, size_t size, int *key_fd, size_t *offset,
                           uint64_t *nonce, aclError *ret)
{
    int fd = -1;
    size_t room = 0;
    if (!nn_vmm_mapping_of(ptr, &fd, offset, &room, nonce) || room < size)
        return false;
    pthread_mutex_lock(&g_ipc_lock);
    *key_fd = key_descriptor_locked(fd, *nonce);
    pthread_mutex_unlock(&g_ipc_lock);
    if (*key_fd < 0)
        *ret = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot open a descriptor for the key: %s.", api,
                           strerror(errno));
    return true;
}

/* Formats the key of `entry` (whose descriptor `entry->fd` it owns) with `prefix`, records it and
 * copies it to key[len]; on failure closes the descriptor. */
static aclError add_export_key(const char *api, const char *prefix, ipc_entry *entry, size_t offset, size_t size,
                               char *key, size_t len)
{
    int n = snprintf(entry->key, sizeof entry->key, "%s-%u-%d-%zx-%zx-%016" PRIx64, prefix, (unsigned)getpid(),
                     entry->fd, offset, size, entry->nonce);
    if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof entry->key) {
        close(entry->fd); /* what it shares stays shared; no key names it through this descriptor */
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: len %zu is too small for the key (%d characters and "
                           "the terminator; CANN's keys hold at most %d).", api, len, n, IPC_KEY_MAX - 1);
    }
    pthread_mutex_lock(&g_ipc_lock);
    bool added = append_locked(&g_entries, &g_num_entries, &g_cap_entries, sizeof *entry, entry);
    pthread_mutex_unlock(&g_ipc_lock);
    if (!added) {
        close(entry->fd);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    memcpy(key, entry->key, (size_t)n + 1);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags)
{
    const char *api = "aclrtIpcMemGetExportKey";
    (void)flags; /* pid validation: see the top of the file */
    if (devPtr == NULL || key == NULL || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr and key must not be null and size positive.", api);
    ipc_entry entry = {.imported = false};
    size_t offset = 0;
    aclError ret = ACL_SUCCESS;
    if (!in_vmm_mapping(api, devPtr, size, &entry.fd, &offset, &entry.nonce, &ret))
        ret = share_in_place(api, devPtr, size, &entry.fd, &offset, &entry.nonce);
    if (ret != ACL_SUCCESS)
        return ret;
    return add_export_key(api, IPC_KEY_PREFIX, &entry, offset, size, key, len);
}

aclError nn_ipc_export_memfd(const char *api, const char *prefix, int fd, uint64_t nonce, size_t size, char *key,
                             size_t len)
{
    ipc_entry entry = {.imported = false, .nonce = nonce};
    pthread_mutex_lock(&g_ipc_lock);
    entry.fd = key_descriptor_locked(fd, nonce);
    pthread_mutex_unlock(&g_ipc_lock);
    if (entry.fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot open a descriptor for the key: %s.", api,
                           strerror(errno));
    return add_export_key(api, prefix, &entry, 0, size, key, len);
}

/* Records why the memory of `key` (descriptor fd of process pid) could not be opened. */
static aclError import_error(const char *api, const char *key, unsigned pid, int fd, int err)
{
    if (err == ESRCH)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: key \"%s\" is dead: its exporter, process %u, has "
                           "exited.", api, key, pid);
    if (err == ENOENT || err == ESTALE)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: key \"%s\" was closed or its memory freed "
                           "(aclrtIpcMemClose, aclrtFree or aclrtFreePhysical in process %u): descriptor %d "
                           "is no longer the memory with the key's nonce.", api, key, pid, fd);
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cannot open the memory of key \"%s\" (process %u): %s.",
                       api, key, pid, strerror(err));
}

/* Parses a key `exporter` made with `prefix` and opens its memfd: a descriptor of this process
 * (*mine), the offset and size the key names. */
static aclError open_key(const char *api, const char *exporter, const char *prefix, const char *key, int *mine,
                         size_t *offset, size_t *size)
{
    unsigned pid = 0;
    int fd = -1, used = 0;
    uint64_t nonce = 0;
    const size_t prefix_len = strlen(prefix);
    if (strnlen(key, IPC_KEY_MAX) >= IPC_KEY_MAX || strncmp(key, prefix, prefix_len) != 0 ||
        sscanf(key + prefix_len, "-%u-%d-%zx-%zx-%" SCNx64 "%n", &pid, &fd, offset, size, &nonce, &used) != 5 ||
        key[prefix_len + (size_t)used] != '\0' || *size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a key of %s.", api, key, exporter);
    *mine = nn_vmm_open_memfd(pid, fd, nonce);
    return *mine < 0 ? import_error(api, key, pid, fd, errno) : ACL_SUCCESS;
}

aclError nn_ipc_open_key(const char *api, const char *exporter, const char *prefix, const char *key, int *fd,
                         size_t *size)
{
    size_t offset = 0;
    aclError ret = open_key(api, exporter, prefix, key, fd, &offset, size);
    if (ret == ACL_SUCCESS && offset != 0) {
        close(*fd);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a key of %s.", api, key, exporter);
    }
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags)
{
    const char *api = "aclrtIpcMemImportByKey";
    (void)flags; /* peer access: every emulated device reaches host memory */
    int mine = -1;
    size_t offset = 0, size = 0;
    if (devPtr == NULL || key == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr and key must not be null.", api);
    aclError ret = open_key(api, "aclrtIpcMemGetExportKey", IPC_KEY_PREFIX, key, &mine, &offset, &size);
    if (ret != ACL_SUCCESS)
        return ret;
    const size_t page = page_size();
    size_t first = offset / page * page;
    size_t map_len = offset - first + size;
    void *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, mine, (off_t)first);
    int err = errno;
    close(mine); /* the mapping keeps the memory */
    if (map == MAP_FAILED)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: mmap: %s.", api, strerror(err));
    void *dev = (char *)map + (offset - first);
    ipc_entry entry = {.imported = true, .fd = -1, .map = map, .map_len = map_len, .dev = dev};
    memcpy(entry.key, key, strlen(key) + 1);
    bool added = false;
    if (nn_mem_register_mapped(dev, size, "aclrtIpcMemImportByKey", "aclrtIpcMemClose")) {
        pthread_mutex_lock(&g_ipc_lock);
        added = append_locked(&g_entries, &g_num_entries, &g_cap_entries, sizeof entry, &entry);
        pthread_mutex_unlock(&g_ipc_lock);
    }
    if (!added) {
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
    if (e != NULL) {
        nn_sorted_remove(g_entries, &g_num_entries, sizeof *g_entries, (size_t)(e - g_entries));
        const retired_fd retired = {gone.fd, gone.nonce};
        /* out of memory: the number may serve a later key; the nonce still refuses other files */
        if (!gone.imported)
            (void)append_locked(&g_retired, &g_num_retired, &g_cap_retired, sizeof retired, &retired);
    }
    pthread_mutex_unlock(&g_ipc_lock);
    if (e == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: \"%s\" is not a key this process exported "
                           "or imported, or it was closed already or died with its memory.", key);
    if (gone.imported) {
        nn_mem_unregister_mapped(gone.dev);
        munmap(gone.map, gone.map_len);
    } else {
        /* closed after the number is retired, under no lock: a key made meanwhile cannot take it */
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
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a live key this process exported (never "
                           "exported, closed, or died with its memory).", api, key);
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
