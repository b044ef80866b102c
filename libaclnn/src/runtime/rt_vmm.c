/*
 * rt_vmm.c - virtual memory management: reserved address ranges, physical memory handles and
 * the mappings between them (aclrtReserveMemAddress, aclrtMallocPhysical, aclrtMapMem, ...),
 * and the sharing of physical handles between processes (aclrtMemExportToShareableHandle).
 *
 * On the CPU each piece has a direct Linux counterpart, so the calls behave as on CANN:
 *   - a reservation is an mmap(PROT_NONE) range: addresses nobody else gets, no memory yet;
 *   - a physical handle is a memfd of the requested size: memory with no address;
 *   - aclrtMapMem maps (part of) the memfd over the reservation with MAP_FIXED | MAP_SHARED, and
 *     registers the range with the allocation registry (memory.c), so copies, operators and
 *     ACLNN_STRICT=1 accept it as device memory; aclrtUnmapMem puts PROT_NONE back.
 *   Two mappings of one handle see the same bytes, as on the device.
 * Every memfd shared with other processes is named "aclnn-<kind>-<nonce>", a random 64-bit nonce
 * in 16 hex digits, which /proc/<pid>/fd/<n> shows as "/memfd:aclnn-<kind>-<nonce> (deleted)".
 * A shareable handle is the exporter's pid (22 bits: Linux pids stay below 2^22) and the low
 * 42 bits of its memfd's nonce; the importer looks through /proc/<pid>/fd (allowed for a process
 * of the same user) for the physical memfd with that nonce, which needs no helper process and
 * no name in /dev/shm.  After aclrtFreePhysical no descriptor of the exporter has the nonce, so
 * the handle is refused, whatever file takes the freed descriptor number.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/nn_rt_internal.h"
#include "runtime/rt_ext.h"

/* Granularity of handles and mappings: 2 MiB, the huge page CANN maps device memory with
 * (ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM and _RECOMMENDED alike, as CANN reports for
 * huge-page memory); normal-page memory attributes get the 4 KiB page. */
#define VMM_HUGE_GRANULARITY ((size_t)2 << 20)

typedef struct vmm_handle {
    int fd;
    uint64_t nonce; /* in the memfd's name (aclnn-physical-<nonce>) */
    size_t size;
    int32_t device;
    size_t mappings; /* live aclrtMapMem of this handle */
} vmm_handle;

typedef struct vmm_range {
    uintptr_t base; /* first: sort key */
    size_t size;
    vmm_handle *handle; /* mappings only: the handle and the offset into it */
    size_t offset;
    aclrtMemAccessFlags access; /* mappings only (aclrtMemSetAccess) */
} vmm_range;

static pthread_mutex_t g_vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static vmm_range *g_reserved; /* sorted by base */
static size_t g_num_reserved, g_cap_reserved;
static vmm_range *g_mapped; /* sorted by base */
static size_t g_num_mapped, g_cap_mapped;
static nn_ptrset g_handles;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static bool is_normal_page_attr(aclrtMemAttr attr)
{
    return attr == ACL_DDR_MEM_NORMAL || attr == ACL_HBM_MEM_NORMAL || attr == ACL_DDR_MEM_P2P_NORMAL ||
           attr == ACL_HBM_MEM_P2P_NORMAL || attr == ACL_MEM_NORMAL || attr == ACL_MEM_P2P_NORMAL;
}

static size_t granularity_of(const aclrtPhysicalMemProp *prop)
{
    return prop != NULL && is_normal_page_attr(prop->memAttr) ? page_size() : VMM_HUGE_GRANULARITY;
}

/* The range of `ranges` that contains addr, or NULL (under g_vmm_lock). */
static vmm_range *range_containing(vmm_range *ranges, size_t count, uintptr_t addr, size_t *index)
{
    size_t pos = nn_sorted_upper_bound(ranges, count, sizeof *ranges, addr);
    if (pos == 0 || addr - ranges[pos - 1].base >= ranges[pos - 1].size)
        return NULL;
    if (index != NULL)
        *index = pos - 1;
    return &ranges[pos - 1];
}

static bool range_insert(vmm_range **ranges, size_t *count, size_t *cap, vmm_range range)
{
    size_t pos = nn_sorted_upper_bound(*ranges, *count, sizeof **ranges, range.base);
    vmm_range *grown = nn_sorted_insert(*ranges, count, cap, 16, sizeof **ranges, pos, &range);
    if (grown == NULL)
        return false;
    *ranges = grown;
    return true;
}

/* Under g_vmm_lock: re-registers the mapped parts of the reservation [lo, hi) with memory.c as
 * maximal contiguous runs, so that a tensor or copy spanning two adjacent mappings (of two
 * handles) is one device range, as the reservation is one address range on the device.
 * `gone` is a mapping base just removed (0: none).  False when out of memory. */
static bool register_runs_locked(uintptr_t lo, uintptr_t hi, uintptr_t gone)
{
    if (gone != 0)
        nn_mem_unregister_mapped((void *)gone);
    size_t first = nn_sorted_upper_bound(g_mapped, g_num_mapped, sizeof *g_mapped, lo - 1);
    size_t end = first;
    while (end < g_num_mapped && g_mapped[end].base < hi)
        nn_mem_unregister_mapped((void *)g_mapped[end++].base);
    bool ok = true;
    for (size_t i = first; i < end;) {
        uintptr_t start = g_mapped[i].base, stop = start + g_mapped[i].size;
        for (i++; i < end && g_mapped[i].base == stop; i++)
            stop += g_mapped[i].size;
        ok = nn_mem_register_mapped((void *)start, stop - start, "aclrtMapMem", "aclrtUnmapMem") && ok;
    }
    return ok;
}

ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t *granularity)
{
    const char *api = "aclrtMemGetAllocationGranularity";
    if (prop == NULL || granularity == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: prop and granularity must not be null.", api);
    if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: option must be ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM (0) "
                           "or _RECOMMENDED (1), got %d.", api, (int)option);
    *granularity = granularity_of(prop);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                                    void *expectPtr, uint64_t flags)
{
    const char *api = "aclrtReserveMemAddress";
    if (virPtr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: virPtr must not be null.", api);
    if (size == 0 || size % page_size() != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: size must be a positive multiple of the "
                           "granularity (aclrtMemGetAllocationGranularity), got %zu.", api, size);
    if (alignment != 0 && (alignment & (alignment - 1)) != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: alignment must be 0 or a power of two, got %zu.",
                           api, alignment);
    if (expectPtr != NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: expectPtr must be null (as on CANN).", api);
    /* Reservations start on the 2 MiB granularity at least, as device addresses do. */
    size_t align = alignment > VMM_HUGE_GRANULARITY ? alignment : VMM_HUGE_GRANULARITY;
    if (size > SIZE_MAX - align)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: size %zu too large.", api, size);
    void *raw = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot reserve %zu bytes of addresses: %s.",
                           api, size, strerror(errno));
    uintptr_t start = ((uintptr_t)raw + align - 1) / align * align;
    if (start > (uintptr_t)raw)
        munmap(raw, start - (uintptr_t)raw);
    size_t tail = (uintptr_t)raw + size + align - (start + size);
    if (tail > 0)
        munmap((void *)(start + size), tail);
    pthread_mutex_lock(&g_vmm_lock);
    bool ok = range_insert(&g_reserved, &g_num_reserved, &g_cap_reserved, (vmm_range){start, size, NULL, 0, ACL_RT_MEM_ACCESS_FLAGS_NONE});
    pthread_mutex_unlock(&g_vmm_lock);
    if (!ok) {
        munmap((void *)start, size);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    (void)flags; /* the page type: every page is the CPU's */
    *virPtr = (void *)start;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr)
{
    const char *api = "aclrtReleaseMemAddress";
    uintptr_t addr = (uintptr_t)virPtr;
    pthread_mutex_lock(&g_vmm_lock);
    size_t index;
    vmm_range *r = range_containing(g_reserved, g_num_reserved, addr, &index);
    if (r == NULL || r->base != addr) {
        pthread_mutex_unlock(&g_vmm_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not the start of a range reserved by "
                           "aclrtReserveMemAddress.", api, virPtr);
    }
    size_t size = r->size;
    size_t first = nn_sorted_upper_bound(g_mapped, g_num_mapped, sizeof *g_mapped, addr - 1);
    if (first < g_num_mapped && g_mapped[first].base < addr + size) {
        void *mapped = (void *)g_mapped[first].base;
        pthread_mutex_unlock(&g_vmm_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: the range at %p still has a mapping at %p; "
                           "call aclrtUnmapMem first.", api, virPtr, mapped);
    }
    nn_sorted_remove(g_reserved, &g_num_reserved, sizeof *g_reserved, index);
    pthread_mutex_unlock(&g_vmm_lock);
    munmap(virPtr, size);
    return ACL_SUCCESS;
}

static aclError new_handle(const char *api, int fd, uint64_t nonce, size_t size, int32_t device,
                           aclrtDrvMemHandle *out)
{
    vmm_handle *h = calloc(1, sizeof *h);
    if (h == NULL) {
        close(fd);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    h->fd = fd;
    h->nonce = nonce;
    h->size = size;
    h->device = device;
    pthread_mutex_lock(&g_vmm_lock);
    bool ok = nn_ptrset_add(&g_handles, h);
    pthread_mutex_unlock(&g_vmm_lock);
    if (!ok) {
        close(fd);
        free(h);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    }
    *out = h;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop, uint64_t flags)
{
    const char *api = "aclrtMallocPhysical";
    if (handle == NULL || prop == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle and prop must not be null.", api);
    if (flags != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: flags must be 0, got %llu.", api,
                           (unsigned long long)flags);
    if (prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: prop->location.type must be "
                           "ACL_MEM_LOCATION_TYPE_DEVICE (1), got %d.", api, (int)prop->location.type);
    if (prop->location.id >= nn_rt_device_count())
        return nn_rt_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: prop->location.id %u is not a device "
                           "(there are %u).", api, prop->location.id, nn_rt_device_count());
    size_t gran = granularity_of(prop);
    if (size == 0 || size % gran != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: size must be a positive multiple of the "
                           "granularity %zu, got %zu.", api, gran, size);
    uint64_t nonce = 0;
    int fd = nn_vmm_memfd_create("physical", size, &nonce);
    if (fd < 0)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot create a memfd of %zu bytes: %s.", api, size,
                           strerror(errno));
    return new_handle(api, fd, nonce, size, (int32_t)prop->location.id, handle);
}

/* Under g_vmm_lock: the handle if it is live, else NULL. */
static vmm_handle *handle_locked(aclrtDrvMemHandle handle)
{
    return handle != NULL && nn_ptrset_has(&g_handles, handle) ? handle : NULL;
}

ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
    pthread_mutex_lock(&g_vmm_lock);
    vmm_handle *h = handle_locked(handle);
    if (h == NULL || h->mappings > 0) {
        size_t mappings = h != NULL ? h->mappings : 0;
        pthread_mutex_unlock(&g_vmm_lock);
        if (h == NULL)
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtFreePhysical: %p is not a handle of "
                               "aclrtMallocPhysical, or was already freed.", handle);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtFreePhysical: handle %p is still mapped "
                           "(%zu mapping(s)); call aclrtUnmapMem first.", handle, mappings);
    }
    nn_ptrset_remove(&g_handles, h);
    bool last_of_memory = true; /* (a process may import its own shareable handle) */
    for (size_t i = 0; i < g_handles.count; i++)
        last_of_memory &= ((const vmm_handle *)g_handles.items[i])->nonce != h->nonce;
    pthread_mutex_unlock(&g_vmm_lock);
    if (last_of_memory)
        nn_ipc_memory_freed(h->nonce); /* IPC keys of its mappings die with it */
    close(h->fd);
    free(h);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                                         aclrtDrvMemHandle handle, uint64_t flags)
{
    const char *api = "aclrtMapMem";
    uintptr_t addr = (uintptr_t)virPtr;
    if (virPtr == NULL || size == 0 || flags != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: virPtr must not be null, size must be positive "
                           "and flags 0 (got %p, %zu, %llu).", api, virPtr, size, (unsigned long long)flags);
    if (addr % page_size() != 0 || size % page_size() != 0 || offset % page_size() != 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: virPtr, size and offset must be multiples of the "
                           "granularity.", api);
    pthread_mutex_lock(&g_vmm_lock);
    aclError ret = ACL_SUCCESS;
    vmm_handle *h = handle_locked(handle);
    vmm_range *r = range_containing(g_reserved, g_num_reserved, addr, NULL);
    size_t next = nn_sorted_upper_bound(g_mapped, g_num_mapped, sizeof *g_mapped, addr);
    bool overlaps = (next < g_num_mapped && g_mapped[next].base < addr + size) ||
                    range_containing(g_mapped, g_num_mapped, addr, NULL) != NULL;
    if (h == NULL)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a live aclrtMallocPhysical handle.", api,
                          handle);
    else if (offset > h->size || size > h->size - offset)
        ret = nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: offset %zu + size %zu runs past the handle's %zu "
                          "bytes.", api, offset, size, h->size);
    else if (r == NULL || size > r->size - (addr - r->base))
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: [%p, +%zu) is not inside one range reserved by "
                          "aclrtReserveMemAddress.", api, virPtr, size);
    else if (overlaps)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: [%p, +%zu) overlaps a mapping; call aclrtUnmapMem "
                          "first.", api, virPtr, size);
    else if (mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, h->fd, (off_t)offset) ==
             MAP_FAILED)
        ret = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: mmap: %s.", api, strerror(errno));
    else if (!range_insert(&g_mapped, &g_num_mapped, &g_cap_mapped, (vmm_range){addr, size, h, offset, ACL_RT_MEM_ACCESS_FLAGS_READWRITE}) ||
             !register_runs_locked(r->base, r->base + r->size, 0)) {
        ret = nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
        size_t index;
        if (range_containing(g_mapped, g_num_mapped, addr, &index) != NULL)
            nn_sorted_remove(g_mapped, &g_num_mapped, sizeof *g_mapped, index);
        register_runs_locked(r->base, r->base + r->size, addr);
        mmap(virPtr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    } else {
        h->mappings++;
    }
    pthread_mutex_unlock(&g_vmm_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr)
{
    uintptr_t addr = (uintptr_t)virPtr;
    pthread_mutex_lock(&g_vmm_lock);
    size_t index;
    vmm_range *m = range_containing(g_mapped, g_num_mapped, addr, &index);
    const size_t length = m != NULL && m->base == addr ? m->size : 0;
    pthread_mutex_unlock(&g_vmm_lock);
    /* checking: a launch still queued on the mapping is reported and waited for */
    nn_check_reach_released("aclrtUnmapMem", virPtr, length);
    pthread_mutex_lock(&g_vmm_lock);
    m = range_containing(g_mapped, g_num_mapped, addr, &index);
    if (m == NULL || m->base != addr) {
        pthread_mutex_unlock(&g_vmm_lock);
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtUnmapMem: %p is not the start of a mapping "
                           "made by aclrtMapMem.", virPtr);
    }
    size_t size = m->size;
    m->handle->mappings--;
    nn_sorted_remove(g_mapped, &g_num_mapped, sizeof *g_mapped, index);
    vmm_range *r = range_containing(g_reserved, g_num_reserved, addr, NULL);
    if (r != NULL) /* always: a mapping lies in a reservation */
        register_runs_locked(r->base, r->base + r->size, addr);
    else
        nn_mem_unregister_mapped(virPtr);
    /* back to reserved addresses without memory */
    mmap(virPtr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    pthread_mutex_unlock(&g_vmm_lock);
    return ACL_SUCCESS;
}

bool nn_vmm_handle_fd(aclrtDrvMemHandle handle, int *fd, size_t *size)
{
    pthread_mutex_lock(&g_vmm_lock);
    vmm_handle *h = handle_locked(handle);
    if (h != NULL) {
        *fd = h->fd;
        *size = h->size;
    }
    pthread_mutex_unlock(&g_vmm_lock);
    return h != NULL;
}

bool nn_vmm_mapping_of(const void *ptr, int *fd, size_t *offset_in_fd, size_t *room, uint64_t *nonce)
{
    uintptr_t addr = (uintptr_t)ptr;
    pthread_mutex_lock(&g_vmm_lock);
    vmm_range *m = range_containing(g_mapped, g_num_mapped, addr, NULL);
    if (m != NULL) {
        *fd = m->handle->fd;
        *nonce = m->handle->nonce;
        *offset_in_fd = m->offset + (addr - m->base);
        *room = m->size - (addr - m->base);
    }
    pthread_mutex_unlock(&g_vmm_lock);
    return m != NULL;
}

/* ---- memfds that name themselves ------------------------------------------------------------ */

#define MEMFD_LINK_PREFIX "/memfd:aclnn-"
#define MEMFD_LINK_SUFFIX " (deleted)"
#define NONCE_DIGITS 16

/* 64 random bits: getrandom, else /dev/urandom, else the clock and a counter (distinct within
 * the process, which is what a descriptor number needs). */
static uint64_t new_nonce(void)
{
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) == (ssize_t)sizeof nonce)
        return nonce;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    bool got = fd >= 0 && read(fd, &nonce, sizeof nonce) == (ssize_t)sizeof nonce;
    if (fd >= 0)
        close(fd);
    if (got)
        return nonce;
    static _Atomic uint64_t counter;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^ ((uint64_t)getpid() << 40) ^
           (++counter * 0x9E3779B97F4A7C15u);
}

int nn_vmm_memfd_create(const char *kind, size_t size, uint64_t *nonce)
{
    char name[64];
    *nonce = new_nonce();
    snprintf(name, sizeof name, "aclnn-%s-%016" PRIx64, kind, *nonce);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The nonce of the libaclnn memfd that the /proc link `path` shows, of kind `kind` (NULL: any);
 * false with errno (ESTALE: the link shows another file). */
static bool memfd_nonce_at(const char *path, const char *kind, uint64_t *nonce)
{
    char link[128];
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0)
        return false;
    link[n] = '\0';
    const size_t prefix = strlen(MEMFD_LINK_PREFIX), suffix = strlen(MEMFD_LINK_SUFFIX);
    errno = ESTALE;
    if ((size_t)n < prefix + 2 + NONCE_DIGITS + suffix || strncmp(link, MEMFD_LINK_PREFIX, prefix) != 0 ||
        strcmp(link + n - suffix, MEMFD_LINK_SUFFIX) != 0)
        return false;
    const char *digits = link + n - suffix - NONCE_DIGITS;
    const size_t kind_len = (size_t)(digits - 1 - (link + prefix));
    if (digits[-1] != '-' || (kind != NULL && (kind_len != strlen(kind) || strncmp(link + prefix, kind, kind_len))))
        return false;
    uint64_t value = 0;
    for (int i = 0; i < NONCE_DIGITS; i++) {
        int digit = hex_digit(digits[i]);
        if (digit < 0)
            return false;
        value = value << 4 | (uint64_t)digit;
    }
    *nonce = value;
    return true;
}

/* Opens the /proc descriptor link `path` if it shows a libaclnn memfd of `kind` whose nonce
 * matches `nonce` in the bits of `mask`, and checks the descriptor opened again, so a number
 * that changes file in between is refused too.  -1 with errno (ESTALE: another file). */
static int open_memfd_at(const char *path, const char *kind, uint64_t nonce, uint64_t mask, uint64_t *found)
{
    uint64_t named = 0, held = 0;
    if (!memfd_nonce_at(path, kind, &named))
        return -1;
    if (((named ^ nonce) & mask) != 0) {
        errno = ESTALE;
        return -1;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    char mine[40];
    snprintf(mine, sizeof mine, "/proc/self/fd/%d", fd);
    if (!memfd_nonce_at(mine, kind, &held) || held != named) {
        close(fd);
        errno = ESTALE;
        return -1;
    }
    if (found != NULL)
        *found = held;
    return fd;
}

/* errno for a descriptor of process pid that is not there: ESRCH when the process is gone. */
static int missing_descriptor_errno(uint32_t pid, int err)
{
    char dir[32];
    snprintf(dir, sizeof dir, "/proc/%u", pid);
    return err == ENOENT && access(dir, F_OK) != 0 ? ESRCH : err;
}

int nn_vmm_open_memfd(uint32_t pid, int fd, uint64_t nonce)
{
    char path[48];
    snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, fd);
    int mine = open_memfd_at(path, NULL, nonce, UINT64_MAX, NULL);
    if (mine < 0)
        errno = missing_descriptor_errno(pid, errno);
    return mine;
}

/* ---- sharing handles between processes ---------------------------------------------------- */

#define HANDLE_PID_BITS 22 /* PID_MAX_LIMIT: Linux pids stay below 2^22 */
#define HANDLE_TAG_BITS (64 - HANDLE_PID_BITS)
#define HANDLE_TAG_MASK (((uint64_t)1 << HANDLE_TAG_BITS) - 1)

static aclError export_handle(const char *api, aclrtDrvMemHandle handle, uint64_t *shareableHandle)
{
    if (shareableHandle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: shareableHandle must not be null.", api);
    const uint64_t pid = (uint64_t)getpid();
    if (pid >> HANDLE_PID_BITS != 0)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: pid %" PRIu64 " does not fit the %d bits a "
                           "shareable handle gives it.", api, pid, HANDLE_PID_BITS);
    pthread_mutex_lock(&g_vmm_lock);
    vmm_handle *h = handle_locked(handle);
    if (h != NULL)
        *shareableHandle = pid << HANDLE_TAG_BITS | (h->nonce & HANDLE_TAG_MASK);
    pthread_mutex_unlock(&g_vmm_lock);
    if (h == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a live aclrtMallocPhysical handle.", api,
                           handle);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                                             aclrtMemHandleType handleType,
                                                             uint64_t flags, uint64_t *shareableHandle)
{
    (void)handleType;
    (void)flags; /* pid validation: see aclrtMemSetPidToShareableHandle */
    return export_handle("aclrtMemExportToShareableHandle", handle, shareableHandle);
}

ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                                               aclrtMemSharedHandleType shareType,
                                                               void *shareableHandle)
{
    const char *api = "aclrtMemExportToShareableHandleV2";
    (void)flags;
    if (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: only ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT is "
                           "supported by libaclnn (fabric handles cross servers).", api);
    return export_handle(api, handle, shareableHandle);
}

/* A descriptor of the physical memfd of process pid whose nonce ends in `tag`, found among its
 * descriptors; -1 with errno (ENOENT: none has it, ESRCH: the process is gone). */
static int open_physical_by_tag(uint32_t pid, uint64_t tag, uint64_t *nonce)
{
    char dir[32];
    snprintf(dir, sizeof dir, "/proc/%u/fd", pid);
    DIR *fds = opendir(dir);
    if (fds == NULL) {
        errno = missing_descriptor_errno(pid, errno);
        return -1;
    }
    int fd = -1;
    for (const struct dirent *entry; fd < 0 && (entry = readdir(fds)) != NULL;) {
        char path[64];
        if (entry->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, entry->d_name) < (int)sizeof path)
            fd = open_memfd_at(path, "physical", tag, HANDLE_TAG_MASK, nonce);
    }
    closedir(fds);
    if (fd < 0)
        errno = ENOENT;
    return fd;
}

static aclError import_handle(const char *api, uint64_t shareableHandle, int32_t deviceId,
                              aclrtDrvMemHandle *handle)
{
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: handle must not be null.", api);
    aclError ret = nn_rt_check_device(api, deviceId);
    if (ret != ACL_SUCCESS)
        return ret;
    const uint32_t pid = (uint32_t)(shareableHandle >> HANDLE_TAG_BITS);
    const unsigned long long shown = (unsigned long long)shareableHandle;
    uint64_t nonce = 0;
    int fd = open_physical_by_tag(pid, shareableHandle & HANDLE_TAG_MASK, &nonce);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0)
        return new_handle(api, fd, nonce, (size_t)st.st_size, deviceId, handle);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (err == ESRCH)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: shareable handle %#llx is dead: its exporter, process "
                           "%u, has exited.", api, shown, pid);
    if (err == ENOENT)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: shareable handle %#llx names no live memory of "
                           "process %u: the exporter freed it (aclrtFreePhysical), or it is not a handle of "
                           "aclrtMemExportToShareableHandle.", api, shown, pid);
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: cannot open shareable handle %#llx (process %u): %s.", api,
                       shown, pid, strerror(err));
}

ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                                               aclrtDrvMemHandle *handle)
{
    return import_handle("aclrtMemImportFromShareableHandle", shareableHandle, deviceId, handle);
}

ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
                                                                 aclrtMemSharedHandleType shareType,
                                                                 uint64_t flags, aclrtDrvMemHandle *handle)
{
    const char *api = "aclrtMemImportFromShareableHandleV2";
    (void)flags;
    if (shareableHandle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: shareableHandle must not be null.", api);
    if (shareType != ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: only ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT is "
                           "supported by libaclnn.", api);
    int32_t device = 0;
    (void)aclrtGetDevice(&device);
    return import_handle(api, *(const uint64_t *)shareableHandle, device, handle);
}

/* Linux checks access itself (same user, /proc/<pid>/fd): a whitelist adds nothing, so these
 * accept the pids and record nothing. */
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid,
                                                             size_t pidNum)
{
    (void)shareableHandle;
    if (pid == NULL || pidNum == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemSetPidToShareableHandle: pid must not be null "
                           "and pidNum positive.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
                                                               aclrtMemSharedHandleType shareType,
                                                               int32_t *pid, size_t pidNum)
{
    (void)shareType;
    if (shareableHandle == NULL || pid == NULL || pidNum == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemSetPidToShareableHandleV2: shareableHandle and "
                           "pid must not be null and pidNum positive.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle *handle)
{
    if (handle == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemRetainAllocationHandle: handle must not be null.");
    pthread_mutex_lock(&g_vmm_lock);
    vmm_range *m = range_containing(g_mapped, g_num_mapped, (uintptr_t)virPtr, NULL);
    if (m != NULL)
        *handle = m->handle;
    pthread_mutex_unlock(&g_vmm_lock);
    if (m == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemRetainAllocationHandle: %p is not in a mapping "
                           "made by aclrtMapMem.", virPtr);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
                                                                       aclrtPhysicalMemProp *prop)
{
    if (prop == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtMemGetAllocationPropertiesFromHandle: prop must not be null.");
    pthread_mutex_lock(&g_vmm_lock);
    vmm_handle *h = handle_locked(handle);
    if (h != NULL) {
        memset(prop, 0, sizeof *prop);
        prop->handleType = ACL_MEM_HANDLE_TYPE_NONE;
        prop->allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
        prop->memAttr = ACL_HBM_MEM_HUGE;
        prop->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        prop->location.id = (uint32_t)h->device;
    }
    pthread_mutex_unlock(&g_vmm_lock);
    if (h == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAllocationPropertiesFromHandle: %p is not a "
                           "live aclrtMallocPhysical handle.", handle);
    return ACL_SUCCESS;
}

/* ---- access ------------------------------------------------------------------------------- */

/* The protection of whole mappings: [virPtr, +size) must be made of complete mappings. */
ACL_FUNC_VISIBILITY aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count)
{
    const char *api = "aclrtMemSetAccess";
    if (virPtr == NULL || desc == NULL || count == 0 || size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: virPtr and desc must not be null, size and count "
                           "positive.", api);
    aclrtMemAccessFlags flags = desc[count - 1].flags; /* one memory: the last description wins */
    int prot = flags == ACL_RT_MEM_ACCESS_FLAGS_READWRITE ? PROT_READ | PROT_WRITE
               : flags == ACL_RT_MEM_ACCESS_FLAGS_READ    ? PROT_READ
               : flags == ACL_RT_MEM_ACCESS_FLAGS_NONE    ? PROT_NONE
                                                          : -1;
    if (prot == -1)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: unknown access flags %d.", api, (int)flags);
    uintptr_t addr = (uintptr_t)virPtr, end = addr + size;
    aclError ret = ACL_SUCCESS;
    pthread_mutex_lock(&g_vmm_lock);
    size_t index = 0;
    vmm_range *m = range_containing(g_mapped, g_num_mapped, addr, &index);
    uintptr_t at = addr;
    for (size_t i = index; m != NULL && m->base == addr && i < g_num_mapped && at < end; i++) {
        if (g_mapped[i].base != at)
            break;
        at += g_mapped[i].size;
    }
    if (m == NULL || m->base != addr || at != end)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: [%p, +%zu) is not a run of whole aclrtMapMem "
                          "mappings.", api, virPtr, size);
    else if (mprotect(virPtr, size, prot) != 0)
        ret = nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "%s: mprotect: %s.", api, strerror(errno));
    for (size_t i = index; ret == ACL_SUCCESS && i < g_num_mapped && g_mapped[i].base < end; i++)
        g_mapped[i].access = flags;
    pthread_mutex_unlock(&g_vmm_lock);
    return ret;
}

aclrtMemAccessFlags nn_vmm_access_at(const void *ptr)
{
    pthread_mutex_lock(&g_vmm_lock);
    const vmm_range *m = range_containing(g_mapped, g_num_mapped, (uintptr_t)ptr, NULL);
    aclrtMemAccessFlags access = m != NULL ? m->access : ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    pthread_mutex_unlock(&g_vmm_lock);
    return access;
}

ACL_FUNC_VISIBILITY aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)
{
    if (location == NULL || flag == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAccess: location and flag must not be null.");
    pthread_mutex_lock(&g_vmm_lock);
    vmm_range *m = range_containing(g_mapped, g_num_mapped, (uintptr_t)virPtr, NULL);
    if (m != NULL) {
        location->type = ACL_MEM_LOCATION_TYPE_DEVICE;
        location->id = (uint32_t)m->handle->device;
        *flag = (uint64_t)m->access;
    }
    pthread_mutex_unlock(&g_vmm_lock);
    if (m == NULL)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemGetAccess: %p is not in a mapping made by "
                           "aclrtMapMem.", virPtr);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment,
                                                              void *expectPtr, uint64_t flags)
{
    /* no uncorrectable-error memory to avoid on the host */
    return aclrtReserveMemAddress(virPtr, size, alignment, expectPtr, flags);
}
