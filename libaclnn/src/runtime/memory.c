/*
 * memory.c - "device" memory: aligned host memory recorded in a registry.
 *
 * aclrtMalloc rounds like CANN on A2/A3 (size rounded up to 32, plus 32 bytes) and aligns the
 * start to 512 bytes, as CANN's runtime asks the driver to (MEM_SET_ALIGN_SIZE(9)).  Every allocation (device and aclrtMallocHost) is recorded in a sorted
 * array searched by binary search, so aclrtFree can reject pointers it never handed out and
 * copies/memsets can refuse to run past the end of an allocation - mistakes that would fault
 * or corrupt memory on a real NPU.  Memory still allocated at aclFinalize is released there
 * (CANN releases a process's device memory when the device is closed).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/nn_check.h"
#include "runtime/nn_rt_internal.h"
#include "runtime/prof_trace.h"

/* CANN's page promises 64, but its runtime asks the driver for 2^9-byte aligned device memory
 * in every rtMalloc path (runtime:src/runtime/driver/npu_driver_mem.cc), and programs count
 * on more than 64: ggml's CANN backend places tensors 128-aligned from a buffer's start and
 * sizes the buffer as if that start were aligned. */
#define NN_DEVICE_ALIGN 512

/* MEM_MAPPED: device memory this file did not allocate (aclrtMapMem, aclrtIpcMemImportByKey):
 * found like MEM_DEVICE, never freed here. */
typedef enum { MEM_DEVICE, MEM_HOST, MEM_MAPPED } mem_kind;

typedef struct mem_block {
    uintptr_t base;   /* first: the registry's sort key (nn_sorted_*) */
    size_t size;      /* usable bytes (rounded as CANN rounds) */
    size_t requested; /* what the caller asked for */
    mem_kind kind;
    const char *maker, *releaser; /* MEM_MAPPED: the call that made the mapping, the one that ends it */
} mem_block;

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_block *g_blocks; /* sorted by base */
static size_t g_num_blocks;
static size_t g_cap_blocks;

/* ------------------------------------------------------------------------------------------ */
/* Registry (under g_mem_lock)                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* Index of the first block whose base is > addr. */
static size_t upper_bound(uintptr_t addr)
{
    return nn_sorted_upper_bound(g_blocks, g_num_blocks, sizeof *g_blocks, addr);
}

/* The block containing addr (base <= addr < base + size), or NULL. */
static const mem_block *find_block(uintptr_t addr)
{
    size_t pos = upper_bound(addr);
    if (pos == 0)
        return NULL;
    const mem_block *b = &g_blocks[pos - 1];
    return addr - b->base < b->size ? b : NULL;
}

static bool insert_block(mem_block block)
{
    mem_block *blocks = nn_sorted_insert(g_blocks, &g_num_blocks, &g_cap_blocks, 64, sizeof *g_blocks,
                                         upper_bound(block.base), &block);
    if (blocks == NULL)
        return false;
    g_blocks = blocks;
    return true;
}

static void remove_block_at(size_t index)
{
    nn_sorted_remove(g_blocks, &g_num_blocks, sizeof *g_blocks, index);
}

bool nn_mem_find(const void *ptr, size_t len, void **alloc_base, size_t *alloc_size)
{
    if (ptr == NULL)
        return false;
    uintptr_t addr = (uintptr_t)ptr;
    bool found = false;
    pthread_mutex_lock(&g_mem_lock);
    /* The block with the greatest base <= addr; an empty range may sit at its very end. */
    size_t pos = upper_bound(addr);
    if (pos > 0) {
        const mem_block *b = &g_blocks[pos - 1];
        size_t offset = addr - b->base;
        if (b->kind != MEM_HOST && offset <= b->size && len <= b->size - offset &&
            (offset < b->size || len == 0)) {
            found = true;
            if (alloc_base != NULL)
                *alloc_base = (void *)b->base;
            if (alloc_size != NULL)
                *alloc_size = b->size;
        }
    }
    pthread_mutex_unlock(&g_mem_lock);
    if (!found && nn_host_mapped_contains(ptr, len)) {
        found = true; /* registered host memory: the device reaches it where it lies */
        if (alloc_base != NULL)
            *alloc_base = (void *)ptr;
        if (alloc_size != NULL)
            *alloc_size = len;
    }
    return found;
}

static pthread_once_t g_strict_once = PTHREAD_ONCE_INIT;
static bool g_strict, g_strict_asked;

/* memcheck includes strict mode's checks (docs/checking.md). */
static void read_strict(void)
{
    g_strict_asked = nn_rt_env_flag("ACLNN_STRICT");
    g_strict = g_strict_asked || nn_check_on(NN_CHECK_MEMCHECK);
}

bool nn_strict_mode(void)
{
    pthread_once(&g_strict_once, read_strict);
    return g_strict;
}

/* Memory freed while a queued task may still use it (racecheck reported it), released at
 * aclFinalize, after the streams' work (under g_mem_lock). */
static void **g_kept;
static size_t g_num_kept, g_cap_kept;

static bool keep_until_finalize_locked(void *ptr)
{
    if (g_num_kept == g_cap_kept) {
        size_t capacity = g_cap_kept ? 2 * g_cap_kept : 8;
        void **grown = realloc(g_kept, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        g_kept = grown;
        g_cap_kept = capacity;
    }
    g_kept[g_num_kept++] = ptr;
    return true;
}

bool nn_strict_mode_asked(void)
{
    pthread_once(&g_strict_once, read_strict);
    return g_strict_asked;
}

/* Releases a block's memory: device memory comes from the checking mode when it is on
 * (nn_check_device_alloc), which keeps it while a queued task uses it; mapped memory is not
 * this file's. */
static void release_memory(const mem_block *block)
{
    if (block->kind == MEM_MAPPED)
        return;
    if (block->kind == MEM_DEVICE && nn_check_on(NN_CHECK_ALL))
        nn_check_device_free((void *)block->base);
    else if (block->kind == MEM_HOST)
        nn_mem_release_host((void *)block->base);
    else
        free((void *)block->base);
}

void nn_mem_release_host(void *base)
{
    if (!nn_check_pinned_free(base)) /* (memcheck's pinned blocks: check_pinned.c) */
        free(base);
}

void nn_mem_finalize(void)
{
    pthread_mutex_lock(&g_mem_lock);
    for (size_t i = 0; i < g_num_kept; i++)
        free(g_kept[i]);
    free(g_kept);
    g_kept = NULL;
    g_num_kept = g_cap_kept = 0;
    if (g_num_blocks > 0)
        nn_log(NN_LOG_WARNING, "aclFinalize: releasing %zu allocation(s) the program did not "
               "free.", g_num_blocks);
    for (size_t i = 0; i < g_num_blocks; i++) {
        if (g_blocks[i].kind == MEM_DEVICE)
            nn_ipc_block_freed((void *)g_blocks[i].base, g_blocks[i].size);
        release_memory(&g_blocks[i]);
    }
    free(g_blocks);
    g_blocks = NULL;
    g_num_blocks = g_cap_blocks = 0;
    pthread_mutex_unlock(&g_mem_lock);
}

/* ------------------------------------------------------------------------------------------ */
/* Allocation                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static bool have_device(void)
{
    pthread_mutex_lock(&nn_rt_lock);
    bool have = nn_rt_current_context_locked() != NULL;
    pthread_mutex_unlock(&nn_rt_lock);
    return have;
}

/* Large device allocations are placed on 2 MiB boundaries and advised for transparent huge
 * pages, as CANN maps device memory in huge pages under its default policy: a kernel streaming
 * through tens of megabytes then takes a TLB miss every 2 MiB instead of every 4 KiB, and the
 * hardware prefetchers, which stop at page boundaries, keep running (docs/runtime.md has the
 * measurements).  Best effort, like HUGE_FIRST: where the kernel gives no huge page, the
 * memory is ordinary pages. */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/* Whether aclrtMalloc's policy asks for huge pages: every page-type value but the two
 * NORMAL_ONLY ones (an unknown value counts as huge, as in CANN); the
 * ACL_MEM_TYPE_* bits above the low byte do not matter on the host. */
static bool policy_wants_huge_pages(aclrtMemMallocPolicy policy)
{
    const unsigned page_type = (unsigned)policy & 0xFFu;
    return page_type != ACL_MEM_MALLOC_NORMAL_ONLY && page_type != ACL_MEM_MALLOC_NORMAL_ONLY_P2P;
}

/* Allocates `usable` bytes NN_DEVICE_ALIGN aligned (2 MiB aligned and advised for huge pages when
 * `huge` and the block spans one; aclrtMallocHost blocks on whole pages, since programs pass
 * them to aclrtHostRegister, which takes pages) and registers them. */
static aclError allocate(const char *api, void **out, size_t requested, size_t usable,
                         mem_kind kind, bool huge)
{
    const long page = sysconf(_SC_PAGESIZE);
    const size_t align = kind == MEM_HOST && page > NN_DEVICE_ALIGN ? (size_t)page : NN_DEVICE_ALIGN;
    /* posix_memalign needs no multiple of the alignment, but round anyway so that the tail of
     * the last cache line is ours too (kernels may read whole vectors). */
    /* No object may exceed PTRDIFF_MAX bytes; asking the allocator for more is an error in
     * itself (valgrind flags it), so refuse it here as out of memory. */
    if (usable > (size_t)PTRDIFF_MAX - align)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "%s: cannot allocate %zu bytes (size too large).", api, requested);
    size_t padded = (usable + align - 1) / align * align;
    void *memory = NULL;
    const bool on_huge_pages = huge && padded >= HUGE_PAGE_BYTES;
    const bool checked = kind == MEM_DEVICE && nn_check_on(NN_CHECK_ALL);
    const bool pinned_checked = kind == MEM_HOST && nn_check_on(NN_CHECK_MEMCHECK);
    int rc = checked          ? ((memory = nn_check_device_alloc(api, usable)) == NULL ? ENOMEM : 0)
             : pinned_checked ? ((memory = nn_check_pinned_alloc(usable)) == NULL ? ENOMEM : 0)
                              : posix_memalign(&memory, on_huge_pages ? HUGE_PAGE_BYTES : align, padded);
    if (rc == 0 && memory != NULL && on_huge_pages && !checked)
        (void)madvise(memory, padded, MADV_HUGEPAGE); /* a refusal leaves ordinary pages */
    if (rc != 0 || memory == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "%s: out of memory allocating %zu bytes (asked for %zu).", api, padded,
                           requested);
    mem_block block = {(uintptr_t)memory, usable, requested, kind, NULL, NULL};
    pthread_mutex_lock(&g_mem_lock);
    bool ok = insert_block(block);
    pthread_mutex_unlock(&g_mem_lock);
    if (!ok) {
        release_memory(&block);
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "%s: out of memory recording the allocation.", api);
    }
    nn_mem_usage_add(NN_MEM_USE_MALLOC, kind == MEM_DEVICE ? usable : 0);
    *out = memory; /* (checked device memory was registered by nn_check_device_alloc) */
    return ACL_SUCCESS;
}

/* extra: bytes CANN adds after rounding up to 32 (32 for aclrtMalloc, 0 for Align32). */
static aclError device_malloc(const char *api, void **devPtr, size_t size, size_t extra,
                              aclrtMemMallocPolicy policy)
{
    if (devPtr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr must not be null.", api);
    if (size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: size must be greater than 0, got 0.", api);
    if (!have_device())
        return nn_rt_error(ACL_ERROR_RT_CONTEXT_NULL,
                           "%s: no device is set on this thread; call aclrtSetDevice first.", api);
    if (size > SIZE_MAX - 32 - extra - NN_DEVICE_ALIGN)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                           "%s: cannot allocate %zu bytes (size too large).", api, size);
    size_t usable = (size + 31) / 32 * 32 + extra;
    return allocate(api, devPtr, size, usable, MEM_DEVICE, policy_wants_huge_pages(policy));
}

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    return device_malloc("aclrtMalloc", devPtr, size, 32, policy);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
                                                aclrtMemMallocPolicy policy)
{
    return device_malloc("aclrtMallocAlign32", devPtr, size, 0, policy);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size,
                                               aclrtMemMallocPolicy policy)
{
    return device_malloc("aclrtMallocCached", devPtr, size, 32, policy);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    if (hostPtr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr must not be null.");
    if (size == 0)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "aclrtMallocHost: size must be greater than 0, got 0.");
    return allocate("aclrtMallocHost", hostPtr, size, size, MEM_HOST, false);
}

static const char *block_maker(const mem_block *b)
{
    return b->kind == MEM_DEVICE ? "aclrtMalloc" : b->kind == MEM_HOST ? "aclrtMallocHost" : b->maker;
}

static const char *block_releaser(const mem_block *b)
{
    return b->kind == MEM_DEVICE ? "aclrtFree" : b->kind == MEM_HOST ? "aclrtFreeHost" : b->releaser;
}

static bool register_block(mem_block block)
{
    pthread_mutex_lock(&g_mem_lock);
    bool ok = insert_block(block);
    pthread_mutex_unlock(&g_mem_lock);
    return ok;
}

bool nn_mem_register_mapped(void *base, size_t size, const char *maker, const char *releaser)
{
    return register_block((mem_block){(uintptr_t)base, size, size, MEM_MAPPED, maker, releaser});
}

/* Managed memory is plain heap memory even under ACLNN_CHECK (the host touches it), which
 * aclrtFree's release_memory gives back: nn_check_device_free frees what it did not make. */
bool nn_mem_register_managed(void *base, size_t size)
{
    return register_block((mem_block){(uintptr_t)base, size, size, MEM_DEVICE, NULL, NULL});
}

void nn_mem_unregister_mapped(void *base)
{
    pthread_mutex_lock(&g_mem_lock);
    size_t pos = upper_bound((uintptr_t)base);
    if (pos > 0 && g_blocks[pos - 1].base == (uintptr_t)base && g_blocks[pos - 1].kind == MEM_MAPPED)
        remove_block_at(pos - 1);
    pthread_mutex_unlock(&g_mem_lock);
}

bool nn_mem_is_host_alloc(const void *ptr)
{
    pthread_mutex_lock(&g_mem_lock);
    const mem_block *b = find_block((uintptr_t)ptr);
    bool host = b != NULL && b->kind == MEM_HOST;
    pthread_mutex_unlock(&g_mem_lock);
    return host;
}

static aclError release(const char *api, const char *param, void *ptr, mem_kind kind)
{
    if (ptr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: %s must not be null.", api, param);
    uintptr_t addr = (uintptr_t)ptr;
    pthread_mutex_lock(&g_mem_lock);
    size_t pos = upper_bound(addr);
    mem_block block = {0};
    bool inside = false;
    if (pos > 0) {
        block = g_blocks[pos - 1];
        inside = addr - block.base < block.size;
    }
    nn_check_trace queued;
    if (inside && block.base == addr && block.kind == MEM_HOST && kind == MEM_HOST &&
        nn_pinned_owe_free(block.base, &queued)) { /* its last queued copy releases it */
        remove_block_at(pos - 1);
        pthread_mutex_unlock(&g_mem_lock);
        nn_pinned_report_free(api, (void *)block.base, block.size, &queued);
        return ACL_SUCCESS;
    }
    if (inside && block.base == addr && block.kind == kind) {
        /* racecheck: a queued task may still use the bytes (aclrtFree is not queued); once that
         * is reported the bytes are kept until aclFinalize, so the task still finds them. */
        bool in_use = kind == MEM_DEVICE && nn_check_race_free(ptr, api);
        remove_block_at(pos - 1);
        /* (memcheck holds freed memory back itself: check_mem.c) */
        bool kept = in_use && !nn_check_on(NN_CHECK_MEMCHECK) && keep_until_finalize_locked(ptr);
        pthread_mutex_unlock(&g_mem_lock);
        if (kind == MEM_DEVICE) { /* before the allocator may hand the pages out */
            nn_ipc_block_freed(ptr, block.size);
            nn_mem_device_block_freed(ptr, block.size);
        }
        if (kept)
            (void)nn_check_alloc_remove(ptr); /* the checking records go, the bytes stay */
        else
            release_memory(&block);
        return ACL_SUCCESS;
    }
    pthread_mutex_unlock(&g_mem_lock);
    if (!inside)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: %s %p was not allocated by %s, or was already freed.", api, param,
                           ptr, block_maker(&(mem_block){.kind = kind}));
    if (block.kind != kind)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: %s %p was allocated by %s; release it with %s.", api, param, ptr,
                           block_maker(&block), block_releaser(&block));
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: %s %p points %zu bytes into the %zu-byte allocation at %p, not at "
                       "its start.", api, param, ptr, (size_t)(addr - block.base), block.size,
                       (void *)block.base);
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr)
{
    return release("aclrtFree", "devPtr", devPtr, MEM_DEVICE);
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr)
{
    return release("aclrtFreeHost", "hostPtr", hostPtr, MEM_HOST);
}

/* ------------------------------------------------------------------------------------------ */
/* Copies and fills                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* An aclrtMapMem mapping whose access (aclrtMemSetAccess) forbids what a copy or fill does to
 * it: the library's own memcpy would fault on its PROT_NONE (or read-only) pages and end the
 * process, so the call fails instead (ACL_ERROR_RT_PARAM_INVALID, as for other unusable device
 * addresses; which status a card gives is not established). */
static aclError check_mapping_access(const char *api, const char *param, const void *ptr)
{
    const bool writes = strcmp(param, "src") != 0; /* "dst", "devPtr": written */
    const aclrtMemAccessFlags access = nn_vmm_access_at(ptr);
    if (access == ACL_RT_MEM_ACCESS_FLAGS_NONE || (writes && access == ACL_RT_MEM_ACCESS_FLAGS_READ))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: %s %p is in an aclrtMapMem mapping set to %s by aclrtMemSetAccess; "
                           "the call would %s it.", api, param, ptr,
                           access == ACL_RT_MEM_ACCESS_FLAGS_NONE ? "ACL_RT_MEM_ACCESS_FLAGS_NONE"
                                                                  : "ACL_RT_MEM_ACCESS_FLAGS_READ",
                           writes ? "write" : "read");
    return ACL_SUCCESS;
}

/* If [ptr, ptr+count) starts inside a registered allocation, it must end inside it too (and a
 * mapping's access must allow the call). */
static aclError check_range(const char *api, const char *param, const void *ptr, size_t count)
{
    uintptr_t addr = (uintptr_t)ptr;
    pthread_mutex_lock(&g_mem_lock);
    const mem_block *found = find_block(addr);
    mem_block block = found ? *found : (mem_block){0};
    pthread_mutex_unlock(&g_mem_lock);
    if (found == NULL)
        return ACL_SUCCESS;
    size_t room = block.size - (size_t)(addr - block.base);
    if (count <= room)
        return block.kind == MEM_MAPPED ? check_mapping_access(api, param, ptr) : ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: %s %p + %zu bytes runs %zu bytes past the end of its %zu-byte %s "
                       "allocation at %p.", api, param, ptr, count, count - room, block.size,
                       block_maker(&block), (void *)block.base);
}

/* Whether [ptr, ptr+count) is aclrtMallocHost or aclrtHostRegister memory. */
static bool is_pinned_host(const void *ptr, size_t count)
{
    pthread_mutex_lock(&g_mem_lock);
    const mem_block *found = find_block((uintptr_t)ptr);
    bool pinned = found != NULL && found->kind == MEM_HOST &&
                  count <= found->size - ((uintptr_t)ptr - found->base);
    pthread_mutex_unlock(&g_mem_lock);
    return pinned || nn_host_mapped_contains(ptr, count);
}

/* Whether [ptr, ptr+count) lies in device memory (for ACLNN_STRICT direction checks). */
static bool is_device_range(const void *ptr, size_t count)
{
    return nn_mem_find(ptr, count, NULL, NULL);
}

static aclError check_strict_direction(const char *api, void *dst, const void *src, size_t count,
                                       aclrtMemcpyKind kind)
{
    if (!nn_strict_mode())
        return ACL_SUCCESS;
    bool dst_device = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    bool src_device = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (dst_device && !is_device_range(dst, count))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: dst %p is not aclrtMalloc memory, but kind %d copies to the "
                           "device (ACLNN_STRICT=1).", api, dst, (int)kind);
    if (src_device && !is_device_range(src, count))
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: src %p is not aclrtMalloc memory, but kind %d copies from the "
                           "device (ACLNN_STRICT=1).", api, src, (int)kind);
    return ACL_SUCCESS;
}

static aclError check_copy(const char *api, void *dst, size_t destMax, const void *src,
                           size_t count, aclrtMemcpyKind kind)
{
    if (dst == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: dst must not be null.", api);
    if (src == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: src must not be null.", api);
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM,
                           "%s: kind must be an aclrtMemcpyKind in [0, 5], got %d.", api,
                           (int)kind);
    if (count > destMax)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: count (%zu) must not exceed destMax (%zu).", api, count, destMax);
    aclError ret = check_range(api, "dst", dst, count);
    if (ret == ACL_SUCCESS)
        ret = check_range(api, "src", src, count);
    return ret;
}

/* The checking mode's look at a copy or fill (nn_check_copy: freed memory, initcheck's written
 * bytes), ACLNN_STRICT's direction check (a status, no report), then CANN's aclrtMemcpyAsync
 * rules (reports); *dst and *src become the addresses the library uses for the bytes. */
static aclError check_mode_copy(const char *api, void **dst, const void **src, size_t count,
                                aclrtMemcpyKind kind, bool async)
{
    void *const program_dst = *dst;
    const void *const program_src = *src;
    if (nn_check_on(NN_CHECK_MEMCHECK | NN_CHECK_INITCHECK)) {
        static const char *const kind_names[] = {
            "ACL_MEMCPY_HOST_TO_HOST",     "ACL_MEMCPY_HOST_TO_DEVICE",
            "ACL_MEMCPY_DEVICE_TO_HOST",   "ACL_MEMCPY_DEVICE_TO_DEVICE",
            "ACL_MEMCPY_DEFAULT",          "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE"};
        nn_check_copy_args args = {api, *dst, *src, count, async, NULL, NULL};
        if (*src != NULL) {
            args.kind_name = kind_names[kind];
            const void *host = kind == ACL_MEMCPY_HOST_TO_DEVICE   ? *src
                               : kind == ACL_MEMCPY_DEVICE_TO_HOST ? *dst : NULL;
            if (async && host != NULL && !is_pinned_host(host, count))
                args.unpinned_side = host == *src ? "src" : "dst";
        }
        const nn_check_copy_args as_given = args;
        if (!nn_check_copy(&args))
            return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                               "%s: the %s touches freed device memory (see the ACLNN_CHECK "
                               "report).", api, *src != NULL ? "copy" : "fill");
        if (program_src != NULL) {
            aclError ret = check_strict_direction(api, program_dst, program_src, count, kind);
            if (ret != ACL_SUCCESS)
                return ret; /* the status tells the program: no report */
        }
        nn_check_copy_rules(&as_given);
        *dst = nn_check_pinned_lib_addr(args.dst); /* memcheck closes pinned blocks to the host */
        *src = args.src != NULL ? nn_check_pinned_lib_addr(args.src) : NULL;
        return ACL_SUCCESS;
    }
    if (program_src == NULL)
        return ACL_SUCCESS;
    return check_strict_direction(api, program_dst, program_src, count, kind);
}

/* Copies and fills of at least this many bytes are split over the thread pool in chunks of
 * COPY_CHUNK_BYTES: one core copies at well under the machine's bandwidth (a 64 MiB memmove on
 * an AMD EPYC VM: 25 GB/s on one thread, 36 GB/s STREAM on two). */
#define PARALLEL_COPY_BYTES ((size_t)4 << 20)
#define COPY_CHUNK_BYTES ((size_t)1 << 20)

typedef struct bulk_copy {
    unsigned char *dst;
    const unsigned char *src; /* NULL: a fill with `value` */
    size_t count;
    unsigned char value;
    bool stream; /* non-temporal stores (nn_use_streaming_stores; copies only) */
} bulk_copy;

static void bulk_chunks(void *vctx, int64_t begin, int64_t end)
{
    const bulk_copy *c = vctx;
    const size_t first = (size_t)begin * COPY_CHUNK_BYTES;
    const size_t last = (size_t)end * COPY_CHUNK_BYTES < c->count ? (size_t)end * COPY_CHUNK_BYTES : c->count;
    if (c->src == NULL) {
        memset(c->dst + first, c->value, last - first);
    } else if (c->stream) {
        nn_copy_row_nt(c->dst + first, c->src + first, last - first);
        nn_streaming_fence();
    } else {
        memcpy(c->dst + first, c->src + first, last - first);
    }
}

/* Whether `count` bytes are worth splitting over the thread pool. */
static bool worth_splitting(size_t count)
{
    return count >= PARALLEL_COPY_BYTES && nn_num_threads() >= 2;
}

/* Runs a copy or fill over the thread pool, COPY_CHUNK_BYTES per range. */
static void run_in_chunks(bulk_copy *c)
{
    nn_parallel_for((int64_t)((c->count + COPY_CHUNK_BYTES - 1) / COPY_CHUNK_BYTES), 1, bulk_chunks, c);
}

/* memmove(dst, src, count), over several threads when the copy is large and the two ranges do
 * not overlap (overlapping ranges keep memmove's single pass). */
static void copy_bytes(void *dst, const void *src, size_t count)
{
    const uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    const bool overlap = d < s + count && s < d + count;
    if (overlap || !worth_splitting(count)) {
        memmove(dst, src, count);
        return;
    }
    bulk_copy c = {dst, src, count, 0, nn_use_streaming_stores(count)};
    run_in_chunks(&c);
}

/* memset(dst, value, count), over several threads when the fill is large. */
static void fill_bytes(void *dst, unsigned char value, size_t count)
{
    if (!worth_splitting(count)) {
        memset(dst, value, count);
        return;
    }
    bulk_copy c = {dst, NULL, count, value, false};
    run_in_chunks(&c);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind)
{
    if (count == 0)
        return ACL_SUCCESS; /* CANN: nothing to copy, nothing checked */
    /* racecheck sees the program's addresses, the copy the library's (check_mode_copy) */
    const nn_check_access accesses[2] = {{dst, count, true, "dst", -1}, {src, count, false, "src", -1}};
    aclError ret = nn_model_check_sync_call("aclrtMemcpy");
    if (ret == ACL_SUCCESS)
        ret = check_copy("aclrtMemcpy", dst, destMax, src, count, kind);
    if (ret == ACL_SUCCESS)
        ret = check_mode_copy("aclrtMemcpy", &dst, &src, count, kind, false);
    if (ret != ACL_SUCCESS)
        return ret;
    nn_check_race_host("aclrtMemcpy", accesses, 2);
    copy_bytes(dst, src, count);
    return ACL_SUCCESS;
}

static aclError check_fill(const char *api, void *devPtr, size_t maxCount, size_t count)
{
    if (devPtr == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr must not be null.", api);
    if (count > maxCount)
        return nn_rt_error(ACL_ERROR_RT_PARAM_INVALID,
                           "%s: count (%zu) must not exceed maxCount (%zu).", api, count,
                           maxCount);
    return check_range(api, "devPtr", devPtr, count);
}

ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    if (count == 0)
        return ACL_SUCCESS;
    const nn_check_access access = {devPtr, count, true, "devPtr", -1};
    aclError ret = nn_model_check_sync_call("aclrtMemset");
    if (ret == ACL_SUCCESS)
        ret = check_fill("aclrtMemset", devPtr, maxCount, count);
    const void *none = NULL;
    if (ret == ACL_SUCCESS)
        ret = check_mode_copy("aclrtMemset", &devPtr, &none, count, 0, false);
    if (ret != ACL_SUCCESS)
        return ret;
    nn_check_race_host("aclrtMemset", &access, 1);
    fill_bytes(devPtr, (unsigned char)value, count);
    return ACL_SUCCESS;
}

/* ---- asynchronous variants: checked now, executed in order on the stream ----------------- */

typedef struct copy_task {
    void *dst;
    const void *src; /* NULL for a fill */
    size_t count;
    unsigned char value;
    uintptr_t pinned[2]; /* the aclrtMallocHost blocks of dst and src (0: none; rt_pinned.c) */
    void *held;          /* memcheck: the device allocations it uses (nn_check_task_hold) */
    const void *closes;  /* memcheck: the pinned block it writes, closed to the host meanwhile */
    const void *guards;  /* memcheck: the pinned block it reads, read-only to the host meanwhile */
} copy_task;

static void release_copy(void *ctx)
{
    copy_task *task = ctx;
    nn_pinned_copy_end(task->pinned[0]);
    nn_pinned_copy_end(task->pinned[1]);
    nn_check_task_release(task->held);
    if (task->closes != NULL)
        nn_check_pinned_copy_done(task->closes, true);
    if (task->guards != NULL)
        nn_check_pinned_copy_done(task->guards, false);
    free(task);
}

/* The base of the aclrtMallocHost block containing `ptr` once a queued copy's use of it is
 * counted (rt_pinned.c); 0 when `ptr` is in none (or the use cannot be counted). */
static uintptr_t pinned_copy_begin_locked(const void *ptr)
{
    const mem_block *block = ptr != NULL ? find_block((uintptr_t)ptr) : NULL;
    if (block == NULL || block->kind != MEM_HOST)
        return 0;
    return nn_pinned_copy_begin(block->base) ? block->base : 0;
}

static int run_copy(void *ctx)
{
    copy_task *task = ctx;
    if (task->src != NULL)
        copy_bytes(task->dst, task->src, task->count);
    else
        fill_bytes(task->dst, task->value, task->count);
    return 0;
}

/* dst/src: the library's addresses for the bytes; program_dst/program_src: the program's
 * (what racecheck knows the allocations by). */
static aclError queue_copy(const char *api, aclrtStream stream, void *dst, const void *src,
                           size_t count, unsigned char value, const void *program_dst,
                           const void *program_src)
{
    nn_stream *s;
    aclError ret = nn_stream_resolve_named(api, stream, &s);
    if (ret != ACL_SUCCESS)
        return ret;
    copy_task *task = malloc(sizeof *task);
    if (task == NULL)
        return nn_rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of memory.", api);
    task->dst = dst;
    task->src = src;
    task->count = count;
    task->value = value;
    pthread_mutex_lock(&g_mem_lock);
    task->pinned[0] = pinned_copy_begin_locked(program_dst);
    task->pinned[1] = pinned_copy_begin_locked(program_src);
    pthread_mutex_unlock(&g_mem_lock);
    const void *const touched[2] = {program_dst, program_src};
    task->held = nn_check_task_hold(touched, 2);
    /* (a copy a model captures runs at each execution: no single window to guard) */
    const bool runs_once = !nn_stream_records(s);
    task->closes = runs_once && src != NULL && nn_check_pinned_copy_queued(program_dst, true) ? program_dst : NULL;
    task->guards = runs_once && nn_check_pinned_copy_queued(program_src, false) ? program_src : NULL;
    const nn_check_access accesses[2] = {
        {program_dst, count, true, src != NULL ? "dst" : "devPtr", -1},
        {program_src, count, false, "src", -1}};
    if (!nn_stream_records(s))
        nn_check_race_task(s, api, accesses, src != NULL ? 2 : 1);
    nn_prof_label(src != NULL ? NN_PROF_COPY : NN_PROF_MEMSET, api);
    return nn_stream_submit_inline_ok(s, run_copy, release_copy, task);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsync";
    if (count == 0)
        return ACL_SUCCESS;
    aclError ret = check_copy(api, dst, destMax, src, count, kind);
    if (ret != ACL_SUCCESS)
        return ret;
    if (kind == ACL_MEMCPY_HOST_TO_HOST)
        return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                           "%s: kind ACL_MEMCPY_HOST_TO_HOST is not supported asynchronously "
                           "(as on CANN with a PCIe device); use aclrtMemcpy.", api);
    void *const program_dst = dst;
    const void *const program_src = src;
    ret = check_mode_copy(api, &dst, &src, count, kind, true);
    if (ret != ACL_SUCCESS)
        return ret;
    return queue_copy(api, stream, dst, src, count, 0, program_dst, program_src);
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream)
{
    const char *api = "aclrtMemsetAsync";
    if (count == 0)
        return ACL_SUCCESS;
    void *const program_ptr = devPtr;
    aclError ret = check_fill(api, devPtr, maxCount, count);
    const void *none = NULL;
    if (ret == ACL_SUCCESS)
        ret = check_mode_copy(api, &devPtr, &none, count, 0, true);
    if (ret != ACL_SUCCESS)
        return ret;
    return queue_copy(api, stream, devPtr, NULL, count, (unsigned char)value, program_ptr, NULL);
}
