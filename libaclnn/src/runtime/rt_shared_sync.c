/*
 * rt_shared_sync.c - a page of synchronization state that other processes may map: what a
 * notify (rt_notify.c) and an IPC event (event.c) hold, so that a record in one process ends a
 * wait in another.
 *
 * The page lives in a memfd of its own (rt_vmm.c's nn_vmm_memfd_create, so its keys carry the
 * memfd's nonce and die with it, rt_ipc.c).  Waiters sleep on the page's 32-bit words with
 * Linux futexes, which work across processes on shared mappings; a waiter wakes at least every
 * NN_SHARED_SLICE_MS to see whether its stream is being aborted.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

#define SHARED_PAGE_BYTES 4096

_Static_assert(sizeof(nn_shared_sync) <= SHARED_PAGE_BYTES, "the shared state must fit its page");

static aclError map_page(const char *api, int fd, nn_shared_page *page)
{
    void *map = mmap(NULL, SHARED_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: mmap: %s.", api, strerror(errno));
    page->sync = map;
    return ACL_SUCCESS;
}

aclError nn_shared_page_create(const char *api, const char *kind, nn_shared_page *page)
{
    page->fd = nn_vmm_memfd_create(kind, SHARED_PAGE_BYTES, &page->nonce);
    if (page->fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: memfd_create: %s.", api, strerror(errno));
    aclError ret = map_page(api, page->fd, page); /* a new memfd reads as zeros: the initial state */
    if (ret != ACL_SUCCESS)
        close(page->fd);
    return ret;
}

aclError nn_shared_page_export(const char *api, const char *prefix, nn_shared_page *page, bool check_pid,
                               char *key, size_t len)
{
    if (page->fd < 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the object was imported from another process; "
                           "only the process that created it can export it.", api);
    atomic_store(&page->sync->pid_check, check_pid ? 1u : 0u);
    return nn_ipc_export_memfd(api, prefix, page->fd, page->nonce, SHARED_PAGE_BYTES, key, len);
}

static bool pid_allowed(const nn_shared_sync *sync, int32_t pid)
{
    if (atomic_load(&sync->pid_check) == 0)
        return true;
    const uint32_t count = atomic_load(&sync->num_pids);
    for (uint32_t i = 0; i < count && i < NN_SHARED_MAX_PIDS; i++)
        if (atomic_load(&sync->pids[i]) == pid)
            return true;
    return false;
}

aclError nn_shared_page_import(const char *api, const char *exporter, const char *prefix, const char *key,
                               nn_shared_page *page)
{
    int fd = -1;
    size_t size = 0;
    aclError ret = nn_ipc_open_key(api, exporter, prefix, key, &fd, &size);
    if (ret != ACL_SUCCESS)
        return ret;
    if (size != SHARED_PAGE_BYTES) {
        close(fd);
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: \"%s\" is not a key of %s.", api, key, exporter);
    }
    ret = map_page(api, fd, page);
    close(fd); /* the mapping keeps the page */
    if (ret != ACL_SUCCESS)
        return ret;
    if (!pid_allowed(page->sync, (int32_t)getpid())) {
        munmap(page->sync, SHARED_PAGE_BYTES);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: process %d is not in the whitelist of key \"%s\": "
                           "its exporter must name it with the SetImportPid call first, or export with "
                           "the flag that disables pid validation.", api, (int)getpid(), key);
    }
    page->fd = -1;
    page->nonce = 0;
    return ACL_SUCCESS;
}

aclError nn_shared_page_allow_pids(const char *api, nn_shared_page *page, const int32_t *pids, size_t num)
{
    if (page->fd < 0)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the object was imported from another process; "
                           "only the process that created it names its importers.", api);
    nn_shared_sync *sync = page->sync;
    uint32_t count = atomic_load(&sync->num_pids);
    if (num > NN_SHARED_MAX_PIDS - count)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: num %zu would make the whitelist longer than libaclnn's "
                           "%d entries (%u already).", api, num, NN_SHARED_MAX_PIDS, count);
    for (size_t i = 0; i < num; i++)
        atomic_store(&sync->pids[count + i], pids[i]);
    atomic_store(&sync->num_pids, count + (uint32_t)num); /* published after the entries */
    return ACL_SUCCESS;
}

void nn_shared_page_release(nn_shared_page *page)
{
    if (page->fd >= 0) {
        nn_ipc_memory_freed(page->nonce); /* its keys die with it */
        close(page->fd);
    }
    munmap(page->sync, SHARED_PAGE_BYTES);
}

void nn_shared_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void nn_shared_wait_change(_Atomic uint32_t *word, uint32_t seen)
{
    const struct timespec slice = {0, NN_SHARED_SLICE_MS * 1000000L};
    /* EAGAIN: it changed already; ETIMEDOUT or EINTR: the caller looks again */
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, &slice, NULL, 0);
}

bool nn_shared_deadline_passed(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}
