/*
 * check_mem.c - memcheck's device memory (nn_check.h, docs/checking.md "memcheck").
 *
 * Under memcheck each device allocation is one memfd mapped twice: PROT_NONE at the address the
 * program holds, read-write at the record's lib_base, where the library's copies and kernels
 * reach the bytes (nn_check_lib_addr).  A host load or store through the program's address
 * faults; the SIGSEGV/SIGBUS handler installed here names the allocation and ends the process.
 * A fault anywhere else goes to the handler that was installed before ours.
 *
 * A freed allocation keeps both mappings for a while (up to QUARANTINE_BYTES and
 * QUARANTINE_COUNT, oldest unmapped first), as AddressSanitizer holds freed memory back: its
 * addresses are not handed out again at once, so a later use names the freed allocation, and
 * a task queued before the free still writes memory that exists.
 */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "check/check_internal.h"

#define QUARANTINE_BYTES ((size_t)256 << 20)
#define QUARANTINE_COUNT 4096
#define HUGE_BYTES ((size_t)2 << 20)

static size_t page_bytes(void)
{
    static size_t page;
    if (page == 0)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* The bytes both views of an allocation of `size` bytes span. */
static size_t mapped_length(size_t size)
{
    size_t page = page_bytes();
    return (size + page - 1) / page * page;
}

/* Maps `length` bytes of fd at an address aligned to `align` (a power of two >= the page):
 * reserve more, map over the aligned part, give back the rest. */
static void *map_aligned(int fd, size_t length, int prot, size_t align)
{
    if (align <= page_bytes())
        return mmap(NULL, length, prot, MAP_SHARED, fd, 0);
    char *reserved = mmap(NULL, length + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED)
        return MAP_FAILED;
    char *start = (char *)(((uintptr_t)reserved + align - 1) & ~(uintptr_t)(align - 1));
    void *mapped = mmap(start, length, prot, MAP_SHARED | MAP_FIXED, fd, 0);
    if (mapped == MAP_FAILED) {
        munmap(reserved, length + align);
        return MAP_FAILED;
    }
    if (start > reserved)
        munmap(reserved, (size_t)(start - reserved));
    munmap(start + length, (size_t)(reserved + align - start));
    return start;
}

/* One memfd, mapped twice; the descriptor is closed once both views exist.  Blocks of 2 MiB
 * and more start on 2 MiB boundaries in both views, as the runtime places them otherwise
 * (memory.c: huge pages). */
static bool map_twice(size_t length, void **program, void **library)
{
    int fd = memfd_create("aclnn-device-memory", MFD_CLOEXEC);
    if (fd < 0)
        return false;
    const size_t align = length >= HUGE_BYTES ? HUGE_BYTES : page_bytes();
    bool ok = ftruncate(fd, (off_t)length) == 0;
    void *lib = ok ? map_aligned(fd, length, PROT_READ | PROT_WRITE, align) : MAP_FAILED;
    void *prog = lib != MAP_FAILED ? map_aligned(fd, length, PROT_NONE, align) : MAP_FAILED;
    close(fd);
    if (prog == MAP_FAILED) {
        if (lib != MAP_FAILED)
            munmap(lib, length);
        return false;
    }
    if (align == HUGE_BYTES)
        (void)madvise(lib, length, MADV_HUGEPAGE); /* where shmem may use huge pages */
    *program = prog;
    *library = lib;
    return true;
}

/* ---- freed allocations held back (under the registry lock) ---------------------------------- */

typedef struct freed_slot {
    uintptr_t base; /* sort key */
    nn_check_alloc *alloc;
} freed_slot;

static freed_slot *g_freed;
static size_t g_freed_count, g_freed_capacity, g_freed_bytes;

nn_check_alloc *nn_check_freed_find_locked(const void *address)
{
    size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof *g_freed, (uintptr_t)address);
    if (at == 0)
        return NULL;
    nn_check_alloc *alloc = g_freed[at - 1].alloc;
    return (uintptr_t)address - alloc->base < mapped_length(alloc->size) ? alloc : NULL;
}

static void unmap(nn_check_alloc *alloc)
{
    size_t length = mapped_length(alloc->size);
    munmap((void *)alloc->base, length);
    munmap(alloc->lib_base, length);
    nn_check_alloc_release(alloc);
}

/* Unmaps the oldest freed allocations until the held-back memory is within bounds. */
static void trim_freed_locked(void)
{
    while (g_freed_count > 0 &&
           (g_freed_bytes > QUARANTINE_BYTES || g_freed_count > QUARANTINE_COUNT)) {
        size_t oldest = 0;
        for (size_t i = 1; i < g_freed_count; ++i)
            if (g_freed[i].alloc->id < g_freed[oldest].alloc->id)
                oldest = i;
        nn_check_alloc *alloc = g_freed[oldest].alloc;
        nn_sorted_remove(g_freed, &g_freed_count, sizeof *g_freed, oldest);
        g_freed_bytes -= mapped_length(alloc->size);
        unmap(alloc);
    }
}

static void hold_freed(nn_check_alloc *alloc)
{
    nn_check_capture(&alloc->freed);
    nn_check_init_forget(alloc); /* nothing reads a freed allocation's bytes legitimately */
    freed_slot slot = {alloc->base, alloc};
    nn_check_alloc_lock();
    size_t at = nn_sorted_upper_bound(g_freed, g_freed_count, sizeof slot, slot.base);
    freed_slot *grown = nn_sorted_insert(g_freed, &g_freed_count, &g_freed_capacity, 64,
                                         sizeof slot, at, &slot);
    if (grown != NULL) {
        g_freed = grown;
        g_freed_bytes += mapped_length(alloc->size);
        trim_freed_locked();
    }
    nn_check_alloc_unlock();
    if (grown == NULL)
        unmap(alloc);
}

void nn_check_freed_lines(nn_check_report *report, const nn_check_alloc *alloc)
{
    nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "freed:", "allocation #%llu was freed at:", (unsigned long long)alloc->id);
    nn_check_trace_lines(report, &alloc->freed);
}

/* ---- the fault handler ---------------------------------------------------------------------- */

static struct sigaction g_previous_segv, g_previous_bus;
static pthread_once_t g_handler_once = PTHREAD_ONCE_INIT;

/* A signal another process or the program itself sent (si_code SI_USER, SI_QUEUE, SI_TKILL...,
 * all <= 0), not a fault of an instruction: its si_addr means nothing. */
static bool sent_signal(const siginfo_t *info)
{
    return info->si_code <= 0;
}

/* Hands a fault that is not ours to the handler installed before ours. */
static void chain(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *previous = sig == SIGSEGV ? &g_previous_segv : &g_previous_bus;
    if ((previous->sa_flags & SA_SIGINFO) != 0 && previous->sa_sigaction != NULL) {
        previous->sa_sigaction(sig, info, context);
        return;
    }
    if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(sig);
        return;
    }
    /* The default action: restore it and return, so the faulting instruction faults again.  A
     * signal that was sent (kill, raise, sigqueue) has no instruction to repeat: raise it again,
     * to be delivered with the default action once this handler returns. */
    signal(sig, SIG_DFL);
    if (sent_signal(info))
        raise(sig);
}

/* The program counter of the faulting instruction. */
static void *fault_pc(void *context)
{
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)uc->uc_mcontext.pc;
#else
    (void)uc;
    return NULL;
#endif
}

/* "write", "read", or "access" where the CPU does not say. */
static const char *fault_kind(void *context)
{
#if defined(__x86_64__)
    const ucontext_t *uc = context;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? "write" : "read";
#else
    (void)context;
    return "access";
#endif
}

/* The stack from the faulting instruction outwards (the handler's own frames dropped). */
static void fault_trace(nn_check_trace *trace, void *pc)
{
    void *frames[NN_CHECK_TRACE_DEPTH + 16];
    int count = backtrace(frames, (int)(sizeof frames / sizeof frames[0]));
    int first = -1;
    for (int i = 0; i < count && first < 0; ++i)
        if (frames[i] == pc)
            first = i;
    if (first < 0) { /* the unwinder did not cross the signal frame: the pc alone */
        trace->frames[0] = pc;
        trace->count = pc != NULL ? 1 : 0;
        return;
    }
    trace->count = 0;
    for (int i = first; i < count && trace->count < NN_CHECK_TRACE_DEPTH; ++i)
        trace->frames[trace->count++] = frames[i];
}

/* Takes the registry lock from a signal handler: the faulting code is the program's and holds
 * no lock of ours, but another thread may, briefly. */
static bool lock_for_handler(void)
{
    for (int i = 0; i < 1000; ++i) {
        if (nn_check_alloc_trylock())
            return true;
        usleep(1000);
    }
    return false;
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    const void *address = info->si_addr;
    if (sent_signal(info) || !lock_for_handler()) {
        chain(sig, info, context);
        return;
    }
    bool freed = false;
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    if (alloc == NULL) {
        /* inside the mapping but past the usable size: still this allocation */
        alloc = nn_check_freed_find_locked(address);
        freed = alloc != NULL;
    }
    if (alloc == NULL)
        alloc = nn_check_alloc_find_mapped_locked(address, mapped_length);
    if (alloc == NULL) {
        nn_check_alloc_unlock();
        chain(sig, info, context);
        return;
    }
    void *pc = fault_pc(context);
    nn_check_trace at;
    fault_trace(&at, pc);
    size_t offset = (uintptr_t)address - alloc->base;
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             freed ? "host access to freed device memory"
                                                   : "host access to device memory");
    nn_check_line(report, "access:", "host %s at %p, %zu bytes into allocation #%llu%s",
                  fault_kind(context), address, offset, (unsigned long long)alloc->id,
                  offset >= alloc->size ? " (past its end)" : "");
    nn_check_line(report, "at:", "the program's code:");
    nn_check_trace_lines(report, &at);
    if (freed)
        nn_check_freed_lines(report, alloc);
    else
        nn_check_alloc_lines(report, "object:", alloc);
    nn_check_line(report, "advice:", "device memory is not in the host's address space on an "
                  "NPU (this access crashes there); copy with aclrtMemcpy(..., "
                  "ACL_MEMCPY_HOST_TO_DEVICE) before the operator and aclrtMemcpy(..., "
                  "ACL_MEMCPY_DEVICE_TO_HOST) after aclrtSynchronizeStream");
    nn_check_alloc_unlock();
    nn_check_end(report);
    nn_check_fatal_exit();
}

/* ---- fork ------------------------------------------------------------------------------------ */

/* Without checking, a forked child's device memory is a copy of its parent's (private pages,
 * copied on write).  Under memcheck both views of an allocation map one memfd, which the child
 * shares: its writes would change its parent's data.  So the child moves each live allocation
 * to a memfd of its own holding the same bytes, mapped over both views in place. */
static bool write_all(int fd, const unsigned char *bytes, size_t length)
{
    for (size_t done = 0; done < length;) {
        ssize_t n = pwrite(fd, bytes + done, length - done, (off_t)done);
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

static void copy_for_child(nn_check_alloc *alloc, void *failures)
{
    if (alloc->lib_base == (void *)alloc->base)
        return; /* heap memory: already the child's own */
    const size_t length = mapped_length(alloc->size);
    int fd = memfd_create("aclnn-device-memory", MFD_CLOEXEC);
    bool ok = fd >= 0 && ftruncate(fd, (off_t)length) == 0 && write_all(fd, alloc->lib_base, length) &&
              mmap(alloc->lib_base, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
              mmap((void *)alloc->base, length, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
    if (fd >= 0)
        close(fd);
    *(size_t *)failures += !ok;
}

static void fork_prepare(void) { nn_check_alloc_lock(); }
static void fork_parent(void) { nn_check_alloc_unlock(); }

static void fork_child(void)
{
    size_t failures = 0;
    nn_check_alloc_each_locked(copy_for_child, &failures);
    nn_check_alloc_unlock();
    if (failures > 0)
        fprintf(stderr, "========= ACLNN_CHECK: fork: %zu device allocation(s) could not be copied for the "
                        "child; it shares them with its parent\n", failures);
}

static void install_handler(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    /* backtrace() loads its unwinder on first use: do it now, not inside the handler */
    void *frames[2];
    (void)backtrace(frames, 2);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_previous_segv);
    sigaction(SIGBUS, &action, &g_previous_bus);
}

/* ---- allocation and translation ------------------------------------------------------------- */

void *nn_check_device_alloc(const char *api, size_t size)
{
    void *program = NULL, *library = NULL;
    if (nn_check_on(NN_CHECK_MEMCHECK)) {
        pthread_once(&g_handler_once, install_handler);
        if (!map_twice(mapped_length(size), &program, &library))
            return NULL;
    } else { /* placed as the runtime places device memory (memory.c: huge pages) */
        size_t padded = (size + 63) / 64 * 64;
        if (posix_memalign(&program, padded >= HUGE_BYTES ? HUGE_BYTES : 64, padded) != 0)
            return NULL;
        if (padded >= HUGE_BYTES)
            (void)madvise(program, padded, MADV_HUGEPAGE);
        library = program;
    }
    if (nn_check_alloc_add(program, size, api, library) == NULL) {
        if (library != program) {
            munmap(program, mapped_length(size));
            munmap(library, mapped_length(size));
        } else {
            free(program);
        }
        return NULL;
    }
    return program;
}

void nn_check_device_free(void *base)
{
    nn_check_alloc *alloc = nn_check_alloc_detach(base);
    if (alloc == NULL) { /* not ours (made before checking was read): the heap's */
        free(base);
        return;
    }
    if (alloc->lib_base == (void *)alloc->base) {
        free(base);
        nn_check_alloc_release(alloc);
        return;
    }
    hold_freed(alloc);
}

void *nn_check_lib_addr(const void *address)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return (void *)address;
    nn_check_alloc_lock();
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    void *lib = alloc != NULL ? nn_check_lib_of(alloc, address) : (void *)address;
    nn_check_alloc_unlock();
    return lib;
}

uint64_t nn_check_alloc_id_at(const void *address)
{
    nn_check_alloc_lock();
    nn_check_alloc *alloc = nn_check_alloc_find_locked(address);
    uint64_t id = alloc != NULL ? alloc->id : 0;
    nn_check_alloc_unlock();
    return id;
}
