/*
 * check_pinned.c - memcheck's aclrtMallocHost memory (nn_check.h; docs/checking.md, "Pinned
 * host memory").
 *
 * The program may read and write its pinned buffers, except while an asynchronous copy uses
 * one: a host read of the destination of an aclrtMemcpyAsync(..., ACL_MEMCPY_DEVICE_TO_HOST)
 * before the program waited for it reads old or partial data on a card, and a host write into
 * the source of an aclrtMemcpyAsync(..., ACL_MEMCPY_HOST_TO_DEVICE) changes what the copy
 * carries.  So under memcheck each aclrtMallocHost block is a memfd mapped twice, read-write for
 * the program and for the library; queuing a copy into it makes the program's view PROT_NONE,
 * a copy from it PROT_READ, until the copy has run and the host has waited for a stream or an
 * event, while the stream's worker reaches the bytes through the library's view.  A host access
 * meanwhile faults; check_mem.c's handler asks nn_check_pinned_fault_locked, which reports it,
 * opens the block again and lets the access go on (a card would read the old bytes, or copy
 * the new ones: no reason to end the program).
 *
 * Blocks are kept sorted by address and found by bisection, under the allocation registry's
 * lock.  The blocks not fully open are also listed apart (g_guarded), so that a host wait - every
 * synchronize, and every callback or host function that starts - visits those only, and none
 * when none is.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check/check_internal.h"

typedef struct pinned_block {
    uintptr_t base;        /* the program's view (first: the sorted array's key) */
    size_t length;         /* whole pages */
    size_t size;           /* what aclrtMallocHost was asked for */
    char *lib;             /* the library's view */
    nn_check_trace where;  /* aclrtMallocHost's caller */
    nn_check_trace queued; /* the newest copy into it */
    nn_check_trace read;   /* the newest copy from it */
    unsigned writes;       /* queued copies into it that have not run */
    unsigned reads;        /* queued copies from it that have not run */
    int prot;              /* the program's view: PROT_NONE, PROT_READ or read-write */
} pinned_block;

#define PROT_OPEN (PROT_READ | PROT_WRITE)

static pinned_block *g_blocks;
static size_t g_count, g_capacity;
/* The bases of the blocks whose view is not PROT_OPEN; g_guarded_count mirrors g_num_guarded
 * for a look without the lock (a wait with nothing closed takes no lock). */
static uintptr_t *g_guarded;
static size_t g_num_guarded, g_cap_guarded;
static atomic_size_t g_guarded_count;

static size_t page_bytes(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static pinned_block *find_locked(const void *address)
{
    size_t at = nn_sorted_upper_bound(g_blocks, g_count, sizeof *g_blocks, (uintptr_t)address);
    if (at == 0 || (uintptr_t)address - g_blocks[at - 1].base >= g_blocks[at - 1].length)
        return NULL;
    return &g_blocks[at - 1];
}

/* Sets the program's view of `block` to `prot`, keeping g_guarded in step. */
static void protect_locked(pinned_block *block, int prot)
{
    if (block->prot == prot || mprotect((void *)block->base, block->length, prot) != 0)
        return;
    if (block->prot == PROT_OPEN) { /* now guarded: listed (when the list cannot grow, left open) */
        uintptr_t *grown = nn_sorted_insert(g_guarded, &g_num_guarded, &g_cap_guarded, 8, sizeof *g_guarded,
                                            g_num_guarded, &block->base);
        if (grown == NULL) {
            mprotect((void *)block->base, block->length, PROT_OPEN);
            return;
        }
        g_guarded = grown;
    } else if (prot == PROT_OPEN) {
        for (size_t i = 0; i < g_num_guarded; ++i)
            if (g_guarded[i] == block->base) {
                g_guarded[i] = g_guarded[--g_num_guarded];
                break;
            }
    }
    block->prot = prot;
    atomic_store_explicit(&g_guarded_count, g_num_guarded, memory_order_relaxed);
}

void *nn_check_pinned_alloc(size_t size)
{
    const size_t length = (size + page_bytes() - 1) / page_bytes() * page_bytes();
    int fd = memfd_create("aclnn-pinned-memory", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *lib = ftruncate(fd, (off_t)length) == 0
                    ? mmap(NULL, length, PROT_OPEN, MAP_SHARED, fd, 0) : MAP_FAILED;
    char *program = lib != MAP_FAILED ? mmap(NULL, length, PROT_OPEN, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    pinned_block block = {(uintptr_t)program, length, size, lib, {{0}, 0}, {{0}, 0}, {{0}, 0}, 0, 0, PROT_OPEN};
    nn_check_capture(&block.where);
    nn_check_alloc_lock();
    size_t at = nn_sorted_upper_bound(g_blocks, g_count, sizeof block, block.base);
    pinned_block *grown = program != MAP_FAILED
                              ? nn_sorted_insert(g_blocks, &g_count, &g_capacity, 8, sizeof block, at, &block)
                              : NULL;
    if (grown != NULL)
        g_blocks = grown;
    nn_check_alloc_unlock();
    if (grown != NULL)
        return program;
    if (program != MAP_FAILED)
        munmap(program, length);
    if (lib != MAP_FAILED)
        munmap(lib, length);
    return NULL;
}

bool nn_check_pinned_free(void *base)
{
    nn_check_alloc_lock();
    pinned_block *block = find_locked(base);
    pinned_block gone = block != NULL ? *block : (pinned_block){0};
    if (block != NULL) {
        protect_locked(block, PROT_OPEN); /* off the guarded list; unmapped below */
        nn_sorted_remove(g_blocks, &g_count, sizeof *block, (size_t)(block - g_blocks));
    }
    nn_check_alloc_unlock();
    if (block == NULL)
        return false;
    munmap((void *)gone.base, gone.length);
    munmap(gone.lib, gone.length);
    return true;
}

void *nn_check_pinned_lib_addr(const void *address)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK))
        return (void *)address;
    nn_check_alloc_lock();
    const pinned_block *block = find_locked(address);
    void *lib = block != NULL ? block->lib + ((uintptr_t)address - block->base) : (void *)address;
    nn_check_alloc_unlock();
    return lib;
}

/* The protection a block needs while copies use it: none while one writes it (or wrote it and
 * the host has not waited), read-only while one reads it. */
static int needed_prot(const pinned_block *block, bool writes_seen)
{
    return block->writes > 0 || writes_seen ? PROT_NONE : block->reads > 0 ? PROT_READ : PROT_OPEN;
}

bool nn_check_pinned_copy_queued(const void *ptr, bool writes)
{
    if (ptr == NULL || !nn_check_on(NN_CHECK_MEMCHECK))
        return false;
    nn_check_alloc_lock();
    pinned_block *block = find_locked(ptr);
    if (block != NULL) {
        ++*(writes ? &block->writes : &block->reads);
        nn_check_capture(writes ? &block->queued : &block->read);
        /* a copy that ran keeps the block guarded until a wait: never loosen here */
        int prot = needed_prot(block, block->prot == PROT_NONE);
        if (prot != PROT_OPEN && (block->prot == PROT_OPEN || prot == PROT_NONE))
            protect_locked(block, prot);
    }
    nn_check_alloc_unlock();
    return block != NULL;
}

void nn_check_pinned_copy_done(const void *ptr, bool writes)
{
    nn_check_alloc_lock();
    pinned_block *block = find_locked(ptr);
    unsigned *count = block == NULL ? NULL : writes ? &block->writes : &block->reads;
    if (count != NULL && *count > 0)
        --*count;
    nn_check_alloc_unlock();
}

void nn_check_pinned_host_waited(void)
{
    if (!nn_check_on(NN_CHECK_MEMCHECK) || atomic_load_explicit(&g_guarded_count, memory_order_relaxed) == 0)
        return;
    nn_check_alloc_lock();
    for (size_t i = g_num_guarded; i-- > 0;) { /* protect_locked may move the last entry to i */
        pinned_block *block = find_locked((const void *)g_guarded[i]);
        if (block != NULL)
            protect_locked(block, needed_prot(block, false));
    }
    nn_check_alloc_unlock();
}

/* Host code a stream runs (a callback, a host function) on this thread: its accesses to a guarded
 * block may be ordered before the copy that guards it (a host function that fills a staging
 * buffer, then the copy from it, on one stream); checking keeps no order between the two, so
 * they are let through without a report, and the block is opened (a miss, never a false report). */
static _Thread_local bool t_stream_code;

void nn_check_stream_code(bool running)
{
    t_stream_code = running;
}

bool nn_check_pinned_fault_locked(const void *address, const char *kind, const nn_check_trace *at)
{
    pinned_block *block = find_locked(address);
    if (block == NULL || block->prot == PROT_OPEN)
        return false;
    if (t_stream_code) {
        protect_locked(block, PROT_OPEN);
        return true;
    }
    const bool written = block->prot == PROT_NONE; /* else read-only: a copy reads it, the host wrote */
    nn_check_report *report = nn_check_begin(NN_CHECK_ERROR, NN_CHECK_MEMCHECK,
                                             written ? "host access to pinned memory an asynchronous copy writes"
                                                     : "host write to pinned memory an asynchronous copy reads");
    nn_check_line(report, "access:", "host %s at %p, %zu bytes into the %zu-byte aclrtMallocHost block at %p",
                  kind, address, (size_t)((uintptr_t)address - block->base), block->size, (void *)block->base);
    nn_check_line(report, "at:", "the program's code:");
    nn_check_trace_lines(report, at);
    nn_check_line(report, "object:", "the block, from aclrtMallocHost at:");
    nn_check_trace_lines(report, &block->where);
    unsigned pending = written ? block->writes : block->reads;
    nn_check_line(report, "other:", "aclrtMemcpyAsync %s it (%s), queued at:", written ? "into" : "from",
                  pending > 0 ? "not run yet" : "run, but the host has not waited for it");
    nn_check_trace_lines(report, written ? &block->queued : &block->read);
    nn_check_line(report, "advice:", written
                  ? "wait for the copy (aclrtSynchronizeStream on its stream, or aclrtSynchronizeEvent on an "
                    "event recorded after it) before reading the buffer: on a card it holds old or partial "
                    "data until then"
                  : "wait for the copy (aclrtSynchronizeStream on its stream, or aclrtSynchronizeEvent on an "
                    "event recorded after it) before writing the buffer again: on a card the copy may carry "
                    "the new bytes, the old ones or a mix");
    nn_check_end(report);
    /* open it again so that the access goes on, as it would on a card */
    protect_locked(block, PROT_OPEN);
    return true;
}

/* A forked child's pinned memory is its own copy, as without checking: each block moves to a
 * memfd of its own holding the same bytes, mapped over both views in place. */
size_t nn_check_pinned_fork_child_locked(void)
{
    size_t failures = 0;
    for (size_t i = 0; i < g_count; ++i) {
        pinned_block *block = &g_blocks[i];
        int fd = memfd_create("aclnn-pinned-memory", MFD_CLOEXEC);
        bool ok = fd >= 0 && ftruncate(fd, (off_t)block->length) == 0 &&
                  nn_check_write_file(fd, (const unsigned char *)block->lib, block->length, 0) &&
                  mmap(block->lib, block->length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
                  mmap((void *)block->base, block->length, block->prot,
                       MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
        if (fd >= 0)
            close(fd);
        failures += !ok;
    }
    return failures;
}
